"""HPCTransEval on TVM: generate, load, convert, check and score CUDA-to-CPU benchmark tasks (see README.md)."""
