"""tools/optimize/index_runs.py: subscripts as sums of floors of the flat index (exact rules,
refusals), and a TVM-style kernel rewritten into runs that stays correct (checked with real g++)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.optimize.analysis import code as C
from tools.optimize.analysis.guards import parse
from tools.optimize.base import Context, NotApplicable
from tools.optimize.passes.index_runs import INDEX_RUNS, THREAD_LOOP, Form, Refused, Scope, index_runs, normalise_text, rewrite_loop
from tools.optimize.passes.specialize import specialize
from tools.spec import load_task
from tools.verify import check

ROOT = Path(__file__).resolve().parent
FIXTURE = ROOT / "optimize_fixtures" / "runs_transpose" / "task.json"
BX, TX = "((int)blockIdx.x)", "((int)threadIdx.x)"


def scope(block: int = 1024, grid: int = 170, **locals_) -> Scope:
    launch = {f"{n}.{d}": 1 for n in ("gridDim", "blockDim") for d in "xyz"}
    launch.update({"gridDim.x": grid, "blockDim.x": block})
    return Scope(block, launch, {name: parse(init) for name, init in locals_.items()}, written={"acc"},
                 integral={"n", "ty", "acc"})  # as if `int n` were a parameter, `acc` written in the loop


def c_value(text: str, x: int, block: int, **values: int) -> int:
    """The subscript as C computes it for thread x % block of block x // block (operands >= 0)."""
    env = {"blockIdx.x": x // block, "threadIdx.x": x % block, "bx": x // block, "tx": x % block, "blockDim.x": block,
           **values}

    def ev(node) -> int:
        if node.kind == "num":
            return node.value
        if node.kind == "id":
            return env[node.op]
        if node.kind == "cast":
            return ev(node.args[0])
        if node.kind == "neg":
            return -ev(node.args[0])
        a, b = (ev(n) for n in node.args)
        assert node.op not in ("/", "%", ">>") or a >= 0  # C's quotient is the floor only then
        return {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0, "%": a % b if b else 0,
                ">>": a >> b, "<<": a << b, "&": a & b}[node.op]

    return ev(parse(text))


def form_value(form: Form, x: int, **values: int) -> int:
    total = form.const + sum(c * ((x + o) // d) for (d, o), c in form.terms)
    return total + sum(c * values[text] for text, c in form.symbols)


TRANSPOSE = (f"((((({BX} * 512) + ({TX} >> 1)) % 6195) / 59) * 1652) + (((({BX} * 512) + ({TX} >> 1)) / 6195) * 118)"
             f" + ((({BX} * 1024) + {TX}) % 118)")
SPLIT = f"(((({BX} * 512) + ({TX} >> 1)) / 5) * 30) + ((({BX} * 1024) + {TX}) % 10) + 20"
NCHW = f"((((({BX} * 16) + ({TX} >> 6)) / 91) * 5824) + (((({BX} * 1024) + {TX}) % 13) * 448)) + (((({BX} * 1024) + {TX}) % 5824) / 13)"
BIAS = f"(((({BX} * 128) + ({TX} >> 3)) % 1885) / 65)"


@pytest.mark.parametrize("text, floors, slope", [
    (f"({BX} * 512) + ({TX} >> 1)", [(2, 0)], 0),  # TVM's shifted flat index is floor(X / 2)
    (f"({BX} * 1024) + {TX}", [], 1),
    ("blockIdx.x * blockDim.x + threadIdx.x", [], 1),
    (TRANSPOSE, [(118, 0), (12390, 0)], 1),
    (SPLIT, [(10, 0)], 1),
    (NCHW, [(13, 0), (5824, 0)], 448),
    (BIAS, [(520, 0), (15080, 0)], 0),
    (f"((({BX} * 1024) + {TX}) / 36) * 36 + 35 - ((({BX} * 1024) + {TX}) % 36)", [(36, 0)], -1),  # flip
    (f"((({BX} * 1024) + {TX}) + 3) / 4", [(4, 3)], 0),  # an offset
    (f"(((({BX} * 1024) + {TX}) >> 1) + 1) / 3", [(6, 2)], 0),  # floor((floor(X/2) + 1) / 3) = floor((X + 2) / 6)
    (f"((({BX} * 1024) + {TX}) & 7) << 2", [(8, 0)], 4),
    ("cse_v1 % 7", [(7, 0)], 1),  # a local's initialiser is read
])
def test_subscripts_normalise_exactly(text, floors, slope):
    sc = scope(cse_v1=f"({BX} * 1024) + {TX}")
    form = normalise_text(text, sc)
    assert form.floors == floors and form.slope == slope
    local = {"cse_v1": None}
    for x in list(range(0, 3000, 7)) + list(range(12380, 12400)) + [170 * 1024 - 1]:
        local["cse_v1"] = x
        assert form_value(form, x) == c_value(text, x, 1024, **local), (text, x)


def test_one_block_launches_use_the_thread_index_as_x():
    form = normalise_text(f"(({TX} / 20) * 20) + ({TX} % 20)", scope(grid=1))
    assert form.terms == (((1, 0), 1),) and form.const == 0
    assert normalise_text(f"{TX} % 28", scope(grid=1)).floors == [(28, 0)]


def test_loop_invariant_names_are_added_once_per_run():
    form = normalise_text(f"n * 4 + ({BX} * 1024 + {TX}) % 9 + ty", scope())
    assert dict(form.symbols) == {"n": 4, "ty": 1} and form.floors == [(9, 0)]
    for x in range(0, 200, 3):
        assert form_value(form, x, n=5, ty=2) == c_value(f"n * 4 + ({BX} * 1024 + {TX}) % 9 + ty", x, 1024, n=5, ty=2)


@pytest.mark.parametrize("text", [
    f"(({BX} * 1024 + {TX}) % 3) / 2",  # 2 does not divide 3: not one floor of X
    f"{TX} / 3",  # 3 does not divide the block: floor((X - 1024*floor(X/1024)) / 3) is two floors
    f"({TX} - 5) / 2",  # a dividend that may be negative: C's quotient is not the floor
    f"{TX} * {TX}",
    f"{TX} / n",  # a divisor not known at compile time
    f"({TX} + n) % 4",  # a remainder of a value not known at compile time
    f"idx[{TX}]",  # a memory read
    f"f({TX})",
    f"(short){TX}",
    f"{TX} & 6",  # not a mask of low bits
    f"{TX} % 0",
    f"{TX} < 3 ? 1 : 2",
    f"alpha + {TX}",  # not known to be an integer: (int)(alpha + tx) is not alpha + tx
    f"acc + {TX}",  # written in the loop: not one value per run
])
def test_subscripts_outside_the_rules_are_refused(text):
    with pytest.raises(Refused):
        normalise_text(text, scope())


X = f"(({BX} * 1024) + {TX})"


def rewrite(body: str) -> str | None:
    """The loop rewritten, or None where it is left alone (with a reason)."""
    text = f"#pragma omp simd\nfor (unsigned int tx = tx_lo; tx < tx_hi; ++tx) {{\n{body}\n}}"
    loop = THREAD_LOOP.search(text)
    try:
        return rewrite_loop(loop, text[loop.end():C.matching_brace(text, loop.end() - 1)], scope().launch, {"n", "acc"})
    except NotApplicable as why:
        assert str(why)
        return None


def test_conditions_on_floors_are_rewritten_with_their_type():
    new = rewrite(f"if ((39 <= ({X} % 377)) && (n < 3)) y[{X}] = x[(({X} / 377) * 161) + ({X} % 377) - 39];")
    assert new is not None and f"39 <= ((decltype({X} % 377))(idxrun_v" in new
    assert "idxrun_n == 377" in new and "(n < 3)" in new
    kept = rewrite(f"if (((threadIdx.x - 1u) % 8) < 4) y[{X}] = x[{X} % 118];")  # may wrap around: not rewritten
    assert kept is not None and "((threadIdx.x - 1u) % 8) < 4" in kept


def test_other_thread_coordinates_are_read_from_the_enclosing_loops():
    new = rewrite(f"const uint3 threadIdx = make_uint3(tx, ty_2, tz);\ny[{X}] = x[threadIdx.y * 7 + {X} % 118];")
    assert new is not None and "7 * (long long)ty_2" in new
    assert rewrite(f"y[{X}] = x[threadIdx.y * 7 + {X} % 118];") is None  # no name for threadIdx.y outside the loop


def test_an_inner_loops_counter_is_added_where_the_subscript_is_used():
    new = rewrite(f"y[{X}] = 0; for (int k = 0; k < 4; ++k) {{ y[{X}] += x[(({X} % 64) * 4) + k * 256]; }}")
    assert new is not None
    assert re.search(r"x\[idxrun_v\d \+ 4 \* idxrun_i \+ 256LL \* \(long long\)k\]", new)  # k is not in a run's value
    assert not re.search(r"long long idxrun_v\d = [^;]*\bk\b", new)
    # a counter the body also assigns, or bounds that are not literals: not the same for every thread
    assert rewrite(f"for (int k = 0; k < 4; ++k) {{ y[{X}] = x[{X} % 64 + k]; k += 1; }}") is None
    assert rewrite(f"for (int k = 0; k < n; ++k) {{ y[{X}] = x[{X} % 64 + k]; }}") is None
    # a product with the counter cannot be a run's value: refused
    assert rewrite(f"for (int k = 0; k < 4; ++k) {{ y[{X}] = x[({X} % 64) * k]; }}") is None


@pytest.mark.parametrize("body", [
    f"y[{X}] = x[idx[{X}] % 118];",  # a subscript reading memory
    f"y[{X}] = x[acc + {X} % 118]; acc += 1;",  # a name written in the loop
    f"if (n > 3) break; y[{X}] = x[{X} % 118];",  # the thread loop's iteration does not end the run
    f"again: y[{X}] = x[{X} % 118];",
    f"y[{X}] = x[{X} + 1];",  # nothing divides
    f"y[{X}] = cudacpu::shfl_down<float>(warp, 1, tx, 1, 32) + x[{X} % 118];",  # a warp exchange dominates
])
def test_loops_outside_the_rules_are_left_alone(body):
    assert rewrite(body) is None


def test_a_loop_with_a_data_dependent_subscript_is_left_alone():
    task = load_task(FIXTURE)
    code = specialize(Context(task), lower_task(task))
    gathered = code.replace("b_ptr[(((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 12)]",
                            "b_ptr[((int)x_ptr[((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 12])]")
    assert gathered != code
    new = index_runs(Context(task), gathered)
    assert new is not None
    kernels = {k.name: k.text(new) for k in C.kernels(new)}
    assert "index runs" not in kernels["add_broadcast_kernel"]  # the gather's loops are as they were
    assert "index runs" in kernels["transpose_kernel"] and "index runs" in kernels["upsample_kernel"]


def test_tvm_style_kernels_run_as_runs_and_stay_correct():
    task = load_task(FIXTURE)
    faithful = lower_task(task)
    ctx = Context(task)
    specialised = specialize(ctx, faithful)
    new = INDEX_RUNS.apply(ctx, specialised)
    assert new is not None and new.count("tools.optimize: index runs") == 6  # 3 kernels, serial and parallel twins
    assert index_runs(ctx, faithful) is not None  # an unspecialised input is specialised first
    assert re.search(r"T_transpose_ptr\[idxrun_v\d \+ idxrun_i\] = x_ptr\[idxrun_v\d \+ idxrun_i\];", new)  # no division
    assert "idxrun_n == 12" in new  # full chunks of 12 get a constant trip count
    assert "(unsigned int)idxrun_i) / 2u)" in new  # the floor by 2 is computed inside the chunks of 24
    sandbox = LocalSandbox()
    try:
        assert check(task, faithful, sandbox, seeds=[3], threads=[1]).correct  # the fixture itself is right
        report = check(task, new, sandbox, seeds=[1, 2], threads=[1, 2])
    finally:
        sandbox.close()
    assert report.correct, report.summary()


def test_loops_without_divisions_are_not_rewritten_and_the_pass_says_why():
    task = load_task(ROOT / "optimize_fixtures" / "tvm_guarded" / "task.json")
    with pytest.raises(NotApplicable, match="no subscript divides or wraps the thread index"):
        index_runs(Context(task), lower_task(task))
