"""The CPU runtime's headers in a sandbox: copied, and the main one precompiled for g++, once per
machine and set of flags.

Parsing `cuda_runtime.h` and what it includes is most of a lowered kernel's compile (about 1.0 s
of 1.26 s for a small kernel at -O3; 0.46 s with the header precompiled), and every candidate,
baseline and search variant is compiled. g++ reads `DIR/cuda_runtime.h.gch/*` in place of
`DIR/cuda_runtime.h` where a file there was built with compatible flags and by the same
compiler (it checks both, and reads the header itself otherwise), and only where that header
is the source's first include, as in every lowering's output.

The precompiled header is built by the sandbox's own compiler from a fresh copy of the package's
headers (no candidate code runs between the copy and the build), fetched, and cached in the
user's cache directory under a key of the compiler (the host's binary for a local sandbox, the
image for a Docker one), the flags and the headers' bytes; every later sandbox gets a copy
(never a link: code running in the sandbox may write its working directory).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from pathlib import Path
from typing import Sequence

from sandboxes import Sandbox, SandboxError
from tools.user_cache import cache_dir, keep_newest

HEADER = "cuda_runtime.h"
_KEEP = 6  # compilers and flag sets kept (about 70 MB each, most of it the C++ standard headers); the oldest go first
_failed: set[str] = set()  # keys whose build failed in this process: not tried again


def runtime_include_dir() -> Path | None:
    """The CPU CUDA-runtime headers candidates include (tools/cuda/runtime/include)."""
    try:
        from tools.cuda import runtime_include_dir as find

        return Path(find())
    except (ImportError, AttributeError):
        path = Path(__file__).resolve().parents[1] / "cuda" / "runtime" / "include"
        return path if path.is_dir() else None


def put_runtime_headers(sandbox: Sandbox, dest: str) -> list[str]:
    """Copy the runtime headers into the sandbox (a Docker sandbox cannot see host paths)."""
    inc = runtime_include_dir()
    if inc is None:
        return []
    sandbox.put_path(inc, dest)
    return [dest]


@functools.cache
def _headers_digest(include: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(include.rglob("*")):
        if path.is_file() and not path.name.endswith(".gch"):
            digest.update(str(path.relative_to(include)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _compiler_identity(sandbox: Sandbox, cxx: str) -> str | None:
    """What says which compiler binary a sandbox's `cxx` is: for a local one the host's file, for
    a Docker one its image (None where unknown: nothing is cached)."""
    if sandbox.kind != "local":
        image = getattr(sandbox, "image_id", None)
        return f"{sandbox.kind}:{image}:{cxx}" if image else None
    path = shutil.which(cxx)
    if path is None:
        return None
    stat = os.stat(path)
    return f"{os.path.realpath(path)}:{stat.st_size}:{stat.st_mtime_ns}"


def precompiled_runtime(sandbox: Sandbox, cxx: str, args: Sequence[str]) -> Path | None:
    """The cached precompiled header for this sandbox's compiler and these compile flags, built
    where missing; None where it cannot be built (the compile then reads the header as before)."""
    include, compiler = runtime_include_dir(), _compiler_identity(sandbox, cxx)
    if include is None or compiler is None:
        return None
    setting = hashlib.sha256("\0".join([compiler, *args]).encode()).hexdigest()[:12]
    key = f"{setting}-{_headers_digest(include)[:12]}"
    cached = cache_dir() / f"runtime-{key}.gch"
    if cached.is_file():
        return cached
    if key in _failed:
        return None
    data = _build_in(sandbox, include, cxx, args)
    if data is None:
        _failed.add(key)
        return None
    partial = cached.with_name(f"{cached.name}.{os.getpid()}")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, cached)  # whole or absent for a compile running beside this one
    except OSError:
        partial.unlink(missing_ok=True)
        return None
    keep_newest(f"runtime-{setting}-*.gch", 1)  # the same compiler and flags with older headers
    keep_newest("runtime-*.gch", _KEEP)
    return cached


def _build_in(sandbox: Sandbox, include: Path, cxx: str, args: Sequence[str]) -> bytes | None:
    """The header precompiled by the sandbox's own compiler, from a fresh copy of the package's
    headers in a directory emptied first: nothing a candidate left in the sandbox is read."""
    src = ".runtime-pch"
    try:
        sandbox.run(["rm", "-rf", src], timeout_s=60)
        sandbox.put_path(include, src)
        built = sandbox.run([cxx, *args, f"-I{src}", "-x", "c++-header", f"{src}/{HEADER}", "-o", f"{src}/{HEADER}.gch"],
                            timeout_s=300)
        return sandbox.get(f"{src}/{HEADER}.gch") if built.ok else None
    except (OSError, SandboxError):
        return None
    finally:
        sandbox.run(["rm", "-rf", src], timeout_s=60)


def install_precompiled_runtime(sandbox: Sandbox, include_dir: str, *, cxx: str, args: Sequence[str]) -> None:
    """Put the precompiled runtime header for these flags beside the sandbox's copy of the headers
    (`include_dir`) where it is not there yet."""
    pch = precompiled_runtime(sandbox, cxx, args)
    if pch is None:
        return
    target = f"{include_dir}/{HEADER}.gch/{pch.stem}"
    if not sandbox.exists(target):
        sandbox.put_path(pch, target)
