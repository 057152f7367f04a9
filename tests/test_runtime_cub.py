"""CUB's device-wide algorithms on the CPU: the two-phase temp-storage protocol, reductions,
scans, radix sort order (floats, signed keys, bit ranges, stability), select, histogram."""

from __future__ import annotations

import numpy as np
import pytest

from test_runtime_support import build, parse_lines, run

CUB_PROGRAM = r"""
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>

template <class T>
static std::vector<T> load(const char* path, size_t n) {
    std::vector<T> data(n);
    FILE* file = std::fopen(path, "rb");
    if (std::fread(data.data(), sizeof(T), n, file) != n) std::abort();
    std::fclose(file);
    return data;
}

template <class T>
static void save(const char* path, const std::vector<T>& data) {
    FILE* file = std::fopen(path, "wb");
    std::fwrite(data.data(), sizeof(T), data.size(), file);
    std::fclose(file);
}

int main() {
    const int n = 50000;
    std::vector<int> ints = load<int>("ints.bin", n);
    std::vector<float> floats = load<float>("floats.bin", n);

    // The size query writes temp_storage_bytes and touches nothing else.
    size_t bytes = 0;
    int sum = -1;
    cub::DeviceReduce::Sum(nullptr, bytes, ints.data(), &sum, n);
    printf("query %d %d\n", int(bytes > 0), sum);
    void* temp = nullptr;
    cudaMalloc(&temp, bytes);

    cub::DeviceReduce::Sum(temp, bytes, ints.data(), &sum, n);
    int smallest = 0, largest = 0;
    cub::DeviceReduce::Min(temp, bytes, ints.data(), &smallest, n);
    cub::DeviceReduce::Max(temp, bytes, ints.data(), &largest, n);
    cub::KeyValuePair<int, float> arg_max{}, arg_min{};
    cub::DeviceReduce::ArgMax(temp, bytes, floats.data(), &arg_max, n);
    cub::DeviceReduce::ArgMin(temp, bytes, floats.data(), &arg_min, n);
    printf("reduce %d %d %d %d %d\n", sum, smallest, largest, arg_max.key, arg_min.key);

    std::vector<int> inclusive(n), exclusive(n);
    cub::DeviceScan::InclusiveSum(temp, bytes, ints.data(), inclusive.data(), n);
    cub::DeviceScan::ExclusiveScan(temp, bytes, ints.data(), exclusive.data(), cub::Max(), -1000000, n);
    save("inclusive.bin", inclusive);
    save("exclusive_max.bin", exclusive);

    std::vector<float> sorted_floats(n);
    std::vector<int> positions(n), sorted_positions(n);
    for (int i = 0; i < n; ++i) positions[i] = i;
    cub::DeviceRadixSort::SortPairs(temp, bytes, floats.data(), sorted_floats.data(), positions.data(), sorted_positions.data(), n);
    save("sorted_floats.bin", sorted_floats);
    save("sorted_float_positions.bin", sorted_positions);
    std::vector<int> sorted_ints(n);
    cub::DeviceRadixSort::SortPairsDescending(temp, bytes, ints.data(), sorted_ints.data(), positions.data(), sorted_positions.data(), n);
    save("sorted_ints_desc.bin", sorted_ints);
    save("sorted_int_positions_desc.bin", sorted_positions);
    std::vector<unsigned int> low_bits(n), sorted_low_bits(n);
    for (int i = 0; i < n; ++i) low_bits[i] = static_cast<unsigned int>(ints[i]);
    cub::DeviceRadixSort::SortKeys(temp, bytes, low_bits.data(), sorted_low_bits.data(), n, 4, 12);
    save("sorted_bits_4_12.bin", sorted_low_bits);

    std::vector<int> selected(n);
    int count = 0;
    cub::DeviceSelect::If(temp, bytes, ints.data(), selected.data(), &count, n, [](int v) { return v % 3 == 0; });
    selected.resize(count);
    save("selected.bin", selected);
    std::vector<int> histogram(10);
    cub::DeviceHistogram::HistogramEven(temp, bytes, floats.data(), histogram.data(), 11, -2.0f, 2.0f, n);
    save("histogram.bin", histogram);
    cudaFree(temp);
    return 0;
}
"""

N = 50_000


@pytest.fixture(scope="module")
def cub_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("cub")
    rng = np.random.default_rng(5)
    ints = rng.integers(-1000, 1000, N).astype(np.int32)
    floats = rng.normal(0, 1.5, N).astype(np.float32)
    floats[:4] = [0.0, -0.0, -0.0, 0.0]  # CUB's order puts -0 before +0
    ints.tofile(workdir / "ints.bin")
    floats.tofile(workdir / "floats.bin")
    output = run(build({"cub.cpp": CUB_PROGRAM}, workdir), threads=2)
    return workdir, ints, floats, parse_lines(output)


def load(workdir, name, dtype):
    return np.fromfile(workdir / name, dtype=dtype)


def test_size_query_then_reductions(cub_run):
    _, ints, floats, out = cub_run
    assert out["query"] == ["1", "-1"]
    expected = [ints.sum(), ints.min(), ints.max(), np.argmax(floats), np.argmin(floats)]
    assert [int(v) for v in out["reduce"]] == [int(v) for v in expected]


def test_scans(cub_run):
    workdir, ints, *_ = cub_run
    assert np.array_equal(load(workdir, "inclusive.bin", np.int32), np.cumsum(ints))
    running_max = np.maximum.accumulate(np.concatenate([[-1000000], ints[:-1]]))
    assert np.array_equal(load(workdir, "exclusive_max.bin", np.int32), running_max)


def test_radix_sort_order_and_stability(cub_run):
    workdir, ints, floats, _ = cub_run
    # CUB orders float keys by their bit patterns made monotonic: -0.0 sorts before +0.0.
    bits = floats.view(np.uint32).astype(np.int64)
    twiddled = np.where(bits & 0x80000000, ~bits & 0xFFFFFFFF, bits | 0x80000000)
    order = np.argsort(twiddled, kind="stable")
    assert np.array_equal(load(workdir, "sorted_floats.bin", np.float32).view(np.uint32), floats[order].view(np.uint32))
    assert np.array_equal(load(workdir, "sorted_float_positions.bin", np.int32), order)
    descending = np.argsort(-ints.astype(np.int64), kind="stable")  # stable among equal keys
    assert np.array_equal(load(workdir, "sorted_ints_desc.bin", np.int32), ints[descending])
    assert np.array_equal(load(workdir, "sorted_int_positions_desc.bin", np.int32), descending)
    unsigned = ints.view(np.uint32)
    by_bits = unsigned[np.argsort((unsigned >> 4) & 0xFF, kind="stable")]
    assert np.array_equal(load(workdir, "sorted_bits_4_12.bin", np.uint32), by_bits)


def test_select_and_histogram(cub_run):
    workdir, ints, floats, _ = cub_run
    assert np.array_equal(load(workdir, "selected.bin", np.int32), ints[ints % 3 == 0])
    expected, _ = np.histogram(floats[(floats >= -2) & (floats < 2)], bins=10, range=(-2.0, 2.0))
    assert np.array_equal(load(workdir, "histogram.bin", np.int32), expected)


ITERATOR_PROGRAM = r"""
#include <cub/cub.cuh>
#include <cstdint>
#include <cstdio>

struct IsNonZero {
    __host__ __device__ bool operator()(const float& v) const { return v != 0.0f; }
};

int main() {
    const int n = 1000;
    float values[n];
    for (int i = 0; i < n; ++i) values[i] = (i % 7 == 0 || i % 11 == 0) ? 0.0f : float(i % 5) - 2.0f;
    int expected = 0;
    for (int i = 0; i < n; ++i) expected += values[i] != 0.0f;

    void* temp = nullptr;
    size_t bytes = 0;
    // A count of true flags: CUB sums bools into the output's type, not into a bool.
    cub::TransformInputIterator<bool, IsNonZero, float*> flags(values, IsNonZero());
    int64_t count = -1;
    cub::DeviceReduce::Sum(nullptr, bytes, flags, &count, n);
    cudaMalloc(&temp, bytes);
    cub::DeviceReduce::Sum(temp, bytes, flags, &count, n);
    printf("count %lld %d\n", (long long)count, expected);

    // The positions of the flagged elements, read through a counting iterator.
    cub::CountingInputIterator<int64_t> positions(0);
    int64_t selected[n];
    int64_t num_selected = -1;
    cub::DeviceSelect::Flagged(temp, bytes, positions, flags, selected, &num_selected, n);
    bool in_order = num_selected == expected;
    for (int64_t i = 0; in_order && i < num_selected; ++i)
        in_order = values[selected[i]] != 0.0f && (i == 0 || selected[i] > selected[i - 1]);
    printf("flagged %d %lld\n", int(in_order), (long long)num_selected);

    cub::ConstantInputIterator<int> threes(3);
    int sum_of_threes = 0;
    cub::DeviceReduce::Sum(temp, bytes, threes, &sum_of_threes, 10);
    cub::CountingInputIterator<int> from_five(5);
    printf("fancy %d %d %d %d\n", sum_of_threes, from_five[4], *(from_five + 2), int((from_five + 7) - from_five));

    cub::ArgIndexInputIterator<float*> indexed(values);
    cub::KeyValuePair<std::ptrdiff_t, float> pair = indexed[13];
    cub::CacheModifiedInputIterator<cub::LOAD_LDG, float> cached(values);
    printf("indexed %d %g %g\n", int(pair.key), pair.value, cached[13]);
    cudaFree(temp);
    return 0;
}
"""


def test_input_iterators_feed_the_device_algorithms(tmp_path):
    """CUB's fancy input iterators (as code counting nonzeros with a TransformInputIterator of bool
    flags and selecting their positions through a CountingInputIterator uses them): a sum of bool flags
    accumulates in the output's type, as CUB."""
    out = parse_lines(run(build({"iterators.cpp": ITERATOR_PROGRAM}, tmp_path), threads=2))
    assert out["count"][0] == out["count"][1] and int(out["count"][0]) > 1
    assert out["flagged"] == ["1", out["count"][1]]
    assert out["fancy"] == ["30", "9", "7", "7"]
    assert out["indexed"] == ["13", "1", "1"]
