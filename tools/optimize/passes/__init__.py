"""The optimizer's passes, one module per pass or family of passes. A pass imports base and analysis only;
a composite pass (specialize, sync_transforms, ...) imports its members. tools/optimize/pipeline.py orders them."""
