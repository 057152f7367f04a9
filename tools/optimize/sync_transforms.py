"""Transformations for kernels with barriers and warp intrinsics (see tools/optimize/__init__.py)."""

from __future__ import annotations

from .transforms import Transform

SYNC_TRANSFORMS: list[Transform] = []
