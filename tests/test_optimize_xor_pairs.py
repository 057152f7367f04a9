"""tools/optimize/xor_pairs.py: a butterfly step (`p = t ^ j; if (p > t) ...`, j proven a power
of two) runs over the pairs' lower threads only, run by run, its partner's subscript affine and
vectorized. Kernels stay correct with 1 and 2 threads, blocks that end inside a run among them;
partners from a j not proven a power of two, or regions with more than the guarded step, are
refused. Real g++, real sandbox; no timing (speed: scripts/bench_speed.py --corpus --names
bitonic_sort_shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context
from tools.optimize.passes.xor_pairs import xor_pairs
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [2468, 2469]
MARK = "the lower thread of each pair"


def test_bitonic_sort_runs_the_lower_threads_vectorized_and_correct(box, vectorized_lines):
    task = load_task(CORPUS / "bitonic_sort_shared" / "task.json")
    variant = xor_pairs(Context(task), lower_task(task))
    assert variant is not None and variant.count(MARK) == 1
    assert "const unsigned int ixj = t + j;" in variant and "b = s[(std::size_t)t + j];" in variant
    assert "s[(std::size_t)t + j] = cudaopt_take ? a : b;" in variant  # the guarded swap as selects
    lines, _ = vectorized_lines(variant)
    numbered = list(enumerate(variant.split("\n"), 1))
    runs = [i for i, line in numbered if "tx = (unsigned int)cudaopt_run" in line]
    groups = [i for i, line in numbered if "cudaopt_g = 0;" in line]
    assert len(runs) == 1 and len(groups) == 4  # j >= 16; j = 8, 4, 2, 1
    for head in runs + groups:  # g++ names a line of the loop's body
        assert any(head <= line <= head + 8 for line in lines), (head, sorted(lines))
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def _butterflies(name: str, steps: str, step: str) -> str:
    """A kernel over a block's values in shared memory (SIZE of them, zeros past the block), one
    butterfly `step` per trip of `steps`, each between barriers."""
    return f"""
#define SIZE 128

__global__ void {name}(float* data) {{
    __shared__ float s[SIZE];
    unsigned int t = threadIdx.x;
    s[t] = data[blockIdx.x * blockDim.x + t];
    if (t + blockDim.x < SIZE)
        s[t + blockDim.x] = 0.0f;
    __syncthreads();
    {steps} {{
        unsigned int p = t ^ h;
        if (p > t) {{
{step}
        }}
        __syncthreads();
    }}
    data[blockIdx.x * blockDim.x + t] = s[t];
}}
"""


WALSH = _butterflies("walsh", "for (unsigned int h = SIZE / 2; h > 0; h /= 2)", """\
            float a = s[t], b = s[p];
            s[t] = a + b;
            s[p] = a - b;""")


def _walsh_task(kernel_task, source, block):
    buffers = [{"name": "data", "dtype": "float32", "shape": [3 * block], "role": "inout"}]
    return kernel_task(source, "walsh", buffers, [], [3], [block])


@pytest.mark.parametrize("block", [128, 80])  # 80: the block ends inside the runs of h = 32 and 16
def test_walsh_butterflies_stay_correct(kernel_task, box, block):
    task = _walsh_task(kernel_task, WALSH, block)
    variant = xor_pairs(Context(task), lower_task(task))
    assert variant is not None and MARK in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("change", [
    ("h = SIZE / 2; h > 0; h /= 2", "h = 48; h > 0; h /= 2"),  # 48 is no power of two: 48 ^ t > t is no run
    ("h = SIZE / 2; h > 0; h /= 2", "h = SIZE / 2; h > 0; h -= 8"),  # steps that leave the powers of two
    ("if (p > t) {", "if (p >= t) {"),  # the thread itself (h = 0) would count
    ("        unsigned int p = t ^ h;\n", "        unsigned int p = t ^ h;\n        s[t] *= 1.0f;\n"),  # more than the step
    ("            s[p] = a - b;\n", "            s[p] = a - b;\n            h = 1;\n"),  # the step changes h
])
def test_partners_not_proven_pairs_are_refused(kernel_task, change):
    old, new = change
    assert old in WALSH
    task = _walsh_task(kernel_task, WALSH.replace(old, new), 128)
    assert xor_pairs(Context(task), lower_task(task)) is None


SWAPS = _butterflies("swaps", "for (unsigned int h = 1; h < SIZE; h <<= 1)", """\
            float a = s[t], b = s[p];
            if (a < b) {
                s[t] = b;
                s[p] = a;
            }""")


def _swaps_task(kernel_task, source, block):
    buffers = [{"name": "data", "dtype": "float32", "shape": [3 * block], "role": "inout"}]
    return kernel_task(source, "swaps", buffers, [], [3], [block])


@pytest.mark.parametrize("block", [128, 80])
def test_guarded_swaps_become_selects_and_stay_correct(kernel_task, box, block):
    task = _swaps_task(kernel_task, SWAPS, block)
    variant = xor_pairs(Context(task), lower_task(task))
    assert variant is not None and "s[t] = cudaopt_take ? b : a;" in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("change", [
    ("float a = s[t], b = s[p];", "float a = s[t], b = 0.0f;\n            if (t > 2) b = s[p];"),  # read only sometimes
    ("float a = s[t], b = s[p];", "float a = s[t], b = s[p];\n            s[t] += 1.0f;"),  # stored since the read
    ("float a = s[t], b = s[p];", "float a = s[t], b = s[p];\n            a += 1.0f;"),  # the local changed
    ("s[p] = a;", "s[p] = a * 2.0f;"),  # a value that is not a name
])
def test_swaps_not_proven_to_write_back_what_they_read_stay_guarded(kernel_task, change):
    old, new = change
    assert old in SWAPS
    task = _swaps_task(kernel_task, SWAPS.replace(old, new), 128)
    variant = xor_pairs(Context(task), lower_task(task))
    assert variant is not None and "cudaopt_take" not in variant
