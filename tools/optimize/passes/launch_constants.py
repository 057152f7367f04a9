"""launch_constants: the task's launch extents as compile-time constants."""

from __future__ import annotations

from ..analysis import code as C
from ..base import Context, Transform


def launch_constants(ctx: Context, code: str) -> str | None:
    """Where the task launches a kernel with one grid and block shape, those extents become
    `constexpr` in the kernel: thread loops get known trip counts (unrolled, vectorized, removed
    when 1), index arithmetic divides by constants. Another shape at run time stops with a message."""
    changed = False
    for k in reversed(C.kernels(code)):
        shapes = {launch.dims() for launch in ctx.launches_of(k.name)}
        if len(shapes) != 1:
            continue
        (grid, block), = shapes
        head = code[k.start:k.body_open]
        if "dim3 gridDim, dim3 blockDim," not in head:
            continue
        head = head.replace("dim3 gridDim, dim3 blockDim,", "dim3 gridDim_arg, dim3 blockDim_arg,", 1)
        dims = ", ".join(str(v) for v in grid), ", ".join(str(v) for v in block)
        guard = " || ".join(f"{n}_arg.{d} != {n}.{d}" for n in ("gridDim", "blockDim") for d in C.DIMS)
        prologue = (f"\n    constexpr cudaopt::Extent<{dims[0]}> gridDim{{}}; constexpr cudaopt::Extent<{dims[1]}> blockDim{{}};"
                    f"  // tools.optimize: the task's only launch shape\n"
                    f"    if ({guard})\n"
                    f"        cudacpu::unsupported(\"{k.name}: optimized for the task's launch shape only\");")
        code = code[:k.start] + head + "{" + prologue + code[k.body_open + 1:]
        changed = True
    if changed and "struct Extent {" not in code:
        code = C.with_support(code, EXTENT)
    return code if changed else None


EXTENT = """// ---- tools.optimize: launch extents as compile-time constants -----------------------------------
// Static members are constants in every scope. A `constexpr dim3` local is an object, which an
// OpenMP region shares by reference: there its members are loads, the thread loops' trip counts
// unknown and `blockIdx.x * blockDim.x + threadIdx.x` a gather (stencil_1d_shared 4x slower).
namespace cudaopt {
template <unsigned int X, unsigned int Y, unsigned int Z>
struct Extent {
  static constexpr unsigned int x = X, y = Y, z = Z;
  operator dim3() const { return dim3(X, Y, Z); }
};
}  // namespace cudaopt
"""


LAUNCH_CONSTANTS = Transform("launch_constants", "the task's launch extents as compile-time constants", launch_constants)
