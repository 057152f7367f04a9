"""The lowering's loop over a launch's blocks and the state a block keeps beside its threads: the
nest `for bz, by, bx` under its OpenMP pragma, per-thread copies and `__shared__` arrays."""

import re

BLOCK_NEST = re.compile(r"for \(unsigned int (?P<bz>\w+) = 0; (?P=bz) < gridDim\.z; \+\+(?P=bz)\)\s*"
                        r"for \(unsigned int (?P<by>\w+) = 0; (?P=by) < gridDim\.y; \+\+(?P=by)\)\s*"
                        r"for \(unsigned int (?P<bx>\w+) = 0; (?P=bx) < gridDim\.x; \+\+(?P=bx)\) \{")
# the block nest's pragma: inside a parallel region (per-thread state declared before it), or alone
REGION_FOR = "#pragma omp for collapse(3) schedule(static)"
PARALLEL_FOR = "#pragma omp parallel for collapse(3) schedule(static)"
PERTHREAD_DECL = re.compile(r"cudacpu::PerThread<(?P<ptype>[^;]*)> (?P<pname>\w+)\(nthreads\);|"
                            r"(?P<stack>cudaopt::(?:Id<[^;]*>|Flag)) (?P<sname>\w+)\[(?P<n>\d+)\] = \{\};")
SHARED_ARRAY_DECL = re.compile(r"^[ \t]*(?P<decl>[^;\n]*?\b(?P<name>\w+)(?:\[\d+\])+);  // __shared__: one per block", re.M)
