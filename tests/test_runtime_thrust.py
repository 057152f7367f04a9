"""The CPU Thrust subset against numpy/itertools: vectors, transform, reduce, sort and
sort_by_key, fill, copy, sequence, scans, count, transform_reduce, reduce_by_key, fancy
iterators, device_ptr and the execution policies."""

from __future__ import annotations

import itertools
import os
import subprocess

import numpy as np
import pytest

from test_runtime_support import build, parse_lines, run

THRUST_PROGRAM = r"""
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/fill.h>
#include <thrust/copy.h>
#include <thrust/sequence.h>
#include <thrust/scan.h>
#include <thrust/count.h>
#include <thrust/transform_reduce.h>
#include <thrust/extrema.h>
#include <thrust/functional.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/for_each.h>
#include <cstdio>
#include <vector>

struct saxpy {
    float a;
    __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};
struct is_odd {
    __host__ __device__ bool operator()(int x) const { return x % 2 != 0; }
};
struct weighted_sum {
    template <class Tuple>
    __host__ __device__ void operator()(Tuple t) const { thrust::get<2>(t) = thrust::get<0>(t) + 10 * thrust::get<1>(t); }
};
struct square {
    __host__ __device__ long long operator()(int x) const { return static_cast<long long>(x) * x; }
};

template <class Vector>
static void show(const char* name, const Vector& v) {
    printf("%s", name);
    for (size_t i = 0; i < v.size(); ++i) printf(" %.9g", static_cast<double>(v[i]));
    printf("\n");
}

int main() {
    std::vector<int> input;
    int value;
    while (std::scanf("%d", &value) == 1) input.push_back(value);
    const int n = static_cast<int>(input.size());

    thrust::host_vector<int> host(input.begin(), input.end());
    thrust::device_vector<int> d = host;  // host -> device
    thrust::device_vector<float> x(n), y(n), z(n);
    thrust::sequence(x.begin(), x.end(), 0.5f, 0.25f);
    thrust::fill(thrust::device, y.begin(), y.end(), 2.0f);
    thrust::transform(x.begin(), x.end(), y.begin(), z.begin(), saxpy{3.0f});
    show("saxpy", z);
    thrust::device_vector<int> negated(n);
    thrust::transform(thrust::device, d.begin(), d.end(), negated.begin(), thrust::negate<int>());
    show("negate", negated);

    printf("sum %d\n", thrust::reduce(d.begin(), d.end()));
    printf("product_mod %d\n", thrust::reduce(thrust::host, d.begin(), d.begin() + 5, 1, thrust::multiplies<int>()));
    printf("max %d\n", thrust::reduce(d.begin(), d.end(), -1000000, thrust::maximum<int>()));
    printf("min %d\n", thrust::reduce(thrust::cuda::par.on(0), d.begin(), d.end(), 1000000, thrust::minimum<int>()));
    printf("count %ld\n", static_cast<long>(thrust::count(d.begin(), d.end(), input[0])));
    printf("count_if %ld\n", static_cast<long>(thrust::count_if(d.begin(), d.end(), is_odd())));
    printf("sum_squares %lld\n", thrust::transform_reduce(d.begin(), d.end(), square(), 0LL, thrust::plus<long long>()));
    printf("max_element %d\n", *thrust::max_element(d.begin(), d.end()));

    thrust::device_vector<int> inclusive(n), exclusive(n);
    thrust::inclusive_scan(d.begin(), d.end(), inclusive.begin());
    thrust::exclusive_scan(d.begin(), d.end(), exclusive.begin());
    show("inclusive", inclusive);
    show("exclusive", exclusive);
    thrust::device_vector<int> running_max(d);
    thrust::inclusive_scan(running_max.begin(), running_max.end(), running_max.begin(), thrust::maximum<int>());  // in place
    show("running_max", running_max);
    thrust::exclusive_scan(thrust::device, d.begin(), d.end(), exclusive.begin(), 10, thrust::plus<int>());
    show("exclusive10", exclusive);

    // Keys: the values mod 7; values: their positions.  sort_by_key keeps equal keys in order.
    thrust::device_vector<int> keys(n), positions(n);
    thrust::transform(d.begin(), d.end(), keys.begin(), [](int v) { return ((v % 7) + 7) % 7; });
    thrust::sequence(positions.begin(), positions.end());
    thrust::sort_by_key(keys.begin(), keys.end(), positions.begin());
    show("sorted_keys", keys);
    show("sorted_positions", positions);
    thrust::device_vector<int> unique_keys(n), key_counts(n);
    auto ends = thrust::reduce_by_key(keys.begin(), keys.end(), thrust::make_constant_iterator(1), unique_keys.begin(), key_counts.begin());
    unique_keys.resize(ends.first - unique_keys.begin());
    key_counts.resize(ends.second - key_counts.begin());
    show("unique_keys", unique_keys);
    show("key_counts", key_counts);

    thrust::device_vector<int> sorted = d;
    thrust::sort(sorted.begin(), sorted.end());
    show("sorted", sorted);
    thrust::sort(thrust::device, sorted.begin(), sorted.end(), thrust::greater<int>());
    show("sorted_desc", sorted);

    // Copies through raw pointers, device_ptr and back to the host.
    int* raw = thrust::raw_pointer_cast(d.data());
    thrust::device_ptr<int> begin = thrust::device_pointer_cast(raw);
    thrust::host_vector<int> back(n);
    thrust::copy(begin, begin + n, back.begin());
    printf("copy_back %d\n", int(back == host));
    thrust::device_vector<int> odds(n);
    auto odd_end = thrust::copy_if(d.begin(), d.end(), odds.begin(), is_odd());
    odds.resize(odd_end - odds.begin());
    show("odds", odds);
    thrust::device_vector<long long> squares(5);
    thrust::transform(thrust::make_counting_iterator(0), thrust::make_counting_iterator(5), squares.begin(), square());
    show("squares", squares);
    printf("transform_iterator_sum %lld\n",
           thrust::reduce(thrust::make_transform_iterator(thrust::make_counting_iterator(1), square()),
                          thrust::make_transform_iterator(thrust::make_counting_iterator(11), square()), 0LL));
    // Placeholder expressions and zip iterators.
    using namespace thrust::placeholders;
    thrust::device_vector<int> linear(n);
    thrust::transform(d.begin(), d.end(), d.begin(), linear.begin(), 3 * _1 - _2 / 2);
    show("linear", linear);
    printf("count_placeholder %ld\n", static_cast<long>(thrust::count_if(d.begin(), d.end(), _1 > 10)));
    thrust::device_vector<int> zipped(n);
    thrust::for_each(thrust::make_zip_iterator(thrust::make_tuple(d.begin(), negated.begin(), zipped.begin())),
                     thrust::make_zip_iterator(thrust::make_tuple(d.end(), negated.end(), zipped.end())), weighted_sum());
    show("zipped", zipped);
    // Large ranges take the parallel chunked paths.
    const int big_n = 100003;
    thrust::device_vector<long long> big(big_n), big_inclusive(big_n), big_exclusive(big_n);
    thrust::tabulate(big.begin(), big.end(), [](long long i) { return i % 1000 - 500; });
    thrust::inclusive_scan(big.begin(), big.end(), big_inclusive.begin());
    thrust::exclusive_scan(thrust::device, big.begin(), big.end(), big_exclusive.begin(), 7LL, thrust::plus<long long>());
    thrust::device_vector<long long> big_max(big);
    thrust::inclusive_scan(big_max.begin(), big_max.end(), big_max.begin(), thrust::maximum<long long>());  // in place
    printf("big_reduce %lld %lld\n", thrust::reduce(big.begin(), big.end()),
           thrust::transform_reduce(big.begin(), big.end(), [](long long v) { return v * v; }, 3LL, thrust::plus<long long>()));
    printf("big_scans %lld %lld %lld %lld %lld %lld\n", big_inclusive[0], big_inclusive[8192], big_inclusive[big_n - 1],
           big_exclusive[0], big_exclusive[50000], big_max[big_n - 1]);
    thrust::device_vector<float> noisy(big_n);
    thrust::tabulate(noisy.begin(), noisy.end(), [](int i) { return 1.0f / float(i + 1); });
    printf("float_sum %a\n", static_cast<double>(thrust::reduce(noisy.begin(), noisy.end(), 0.0f)));
    thrust::fill_n(d.begin(), 3, 7);
    printf("fill_n %d %d %d %d\n", int(d[0]), int(d[1]), int(d[2]), int(d[3] == input[3]));
    return 0;
}
"""


def run_with_input(exe, values, threads: int) -> dict[str, list[str]]:
    result = subprocess.run([str(exe)], input=" ".join(map(str, values)), capture_output=True, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    assert result.returncode == 0, result.stderr
    return parse_lines(result.stdout)


@pytest.fixture(scope="module")
def thrust_exe(tmp_path_factory):
    return build({"thrust.cpp": THRUST_PROGRAM}, tmp_path_factory.mktemp("thrust"))


@pytest.fixture(scope="module")
def thrust_run(thrust_exe):
    values = np.random.default_rng(11).integers(-50, 50, size=300)
    return values, run_with_input(thrust_exe, values, threads=2)


def ints(table, key) -> list[int]:
    return [int(v) for v in table[key]]


def test_transform_fill_sequence(thrust_run):
    values, out = thrust_run
    x = 0.5 + 0.25 * np.arange(values.size, dtype=np.float32)
    assert np.allclose([float(v) for v in out["saxpy"]], 3 * x + 2, rtol=1e-6)
    assert ints(out, "negate") == list(-values)


def test_reductions(thrust_run):
    values, out = thrust_run
    assert ints(out, "sum") == [values.sum()]
    assert ints(out, "product_mod") == [int(np.prod(values[:5]))]
    assert ints(out, "max") == [values.max()] and ints(out, "min") == [values.min()]
    assert ints(out, "count") == [int((values == values[0]).sum())]
    assert ints(out, "count_if") == [int((values % 2 != 0).sum())]
    assert ints(out, "sum_squares") == [int((values.astype(np.int64) ** 2).sum())]
    assert ints(out, "max_element") == [values.max()]


def test_scans(thrust_run):
    values, out = thrust_run
    assert ints(out, "inclusive") == list(itertools.accumulate(values))
    assert ints(out, "exclusive") == list(itertools.accumulate(values[:-1], initial=0))
    assert ints(out, "running_max") == list(itertools.accumulate(values, max))
    assert ints(out, "exclusive10") == list(itertools.accumulate(values[:-1], initial=10))


def test_sorts_are_correct_and_sort_by_key_is_stable(thrust_run):
    values, out = thrust_run
    keys = values % 7
    order = np.argsort(keys, kind="stable")
    assert ints(out, "sorted_keys") == list(keys[order])
    assert ints(out, "sorted_positions") == list(order)
    unique, counts = np.unique(keys, return_counts=True)
    assert ints(out, "unique_keys") == list(unique) and ints(out, "key_counts") == list(counts)
    assert ints(out, "sorted") == sorted(values)
    assert ints(out, "sorted_desc") == sorted(values, reverse=True)


def test_placeholders_and_zip_iterators(thrust_run):
    values, out = thrust_run
    assert ints(out, "linear") == [3 * v - int(v / 2) for v in values]  # C++ division truncates
    assert ints(out, "count_placeholder") == [int((values > 10).sum())]
    assert ints(out, "zipped") == list(values - 10 * values)


def test_large_ranges_reduce_and_scan_in_parallel(thrust_run):
    _, out = thrust_run
    big = np.arange(100003, dtype=np.int64) % 1000 - 500
    inclusive = np.cumsum(big)
    exclusive = 7 + np.concatenate([[0], inclusive[:-1]])
    assert ints(out, "big_reduce") == [big.sum(), 3 + (big * big).sum()]
    assert ints(out, "big_scans") == [inclusive[0], inclusive[8192], inclusive[-1], exclusive[0], exclusive[50000], big.max()]


def test_float_reduction_does_not_depend_on_thread_count(thrust_exe, thrust_run):
    values, two_threads = thrust_run
    one_thread = run_with_input(thrust_exe, values, threads=1)
    assert one_thread["float_sum"] == two_threads["float_sum"]
    harmonic = float.fromhex(one_thread["float_sum"][0])
    assert harmonic == pytest.approx(sum(1.0 / (i + 1) for i in range(100003)), rel=1e-5)


def test_copies_pointers_and_iterators(thrust_run):
    values, out = thrust_run
    assert out["copy_back"] == ["1"]
    assert ints(out, "odds") == [v for v in values if v % 2 != 0]
    assert ints(out, "squares") == [0, 1, 4, 9, 16]
    assert ints(out, "transform_iterator_sum") == [sum(i * i for i in range(1, 11))]
    assert out["fill_n"] == ["7", "7", "7", "1"]


MORE_ALGORITHMS_PROGRAM = r"""
#include <thrust/device_vector.h>
#include <thrust/scan.h>
#include <thrust/unique.h>
#include <thrust/partition.h>
#include <thrust/merge.h>
#include <thrust/transform.h>
#include <thrust/replace.h>
#include <thrust/functional.h>
#include <cstdio>
template <class V> void show(const char* n, const V& v) { printf("%s", n); for (auto x : v) printf(" %d", int(x)); printf("\n"); }
int main() {
  thrust::device_vector<int> k{1,1,2,2,2,3,1}, v{1,2,3,4,5,6,7}, o(7);
  thrust::inclusive_scan_by_key(k.begin(), k.end(), v.begin(), o.begin()); show("isbk", o);
  thrust::exclusive_scan_by_key(k.begin(), k.end(), v.begin(), o.begin(), 10); show("esbk", o);
  thrust::transform_inclusive_scan(v.begin(), v.end(), o.begin(), thrust::negate<int>(), thrust::plus<int>()); show("tis", o);
  thrust::transform_exclusive_scan(v.begin(), v.end(), o.begin(), thrust::negate<int>(), 0, thrust::plus<int>()); show("tes", o);
  auto kk = k; auto vv = v; auto e = thrust::unique_by_key(kk.begin(), kk.end(), vv.begin());
  kk.resize(e.first - kk.begin()); vv.resize(e.second - vv.begin()); show("ubk_k", kk); show("ubk_v", vv);
  auto p = v; thrust::partition(p.begin(), p.end(), [](int x) { return x % 2 == 0; }); show("part", p);
  thrust::device_vector<int> a{1,4,9}, b{2,3,10}, m(6); thrust::merge(a.begin(), a.end(), b.begin(), b.end(), m.begin()); show("merge", m);
  auto t = v; thrust::transform_if(v.begin(), v.end(), t.begin(), thrust::negate<int>(), [](int x) { return x > 4; }); show("tif", t);
  thrust::replace_if(t.begin(), t.end(), [](int x) { return x < 0; }, 0); show("rif", t);
}
"""


def test_segmented_scans_unique_partition_merge_transform_if(tmp_path):
    exe = build({"more.cpp": MORE_ALGORITHMS_PROGRAM}, tmp_path)
    out = parse_lines(run(exe))
    # keys 1 1 | 2 2 2 | 3 | 1 segment the values 1..7
    assert ints(out, "isbk") == [1, 3, 3, 7, 12, 6, 7]
    assert ints(out, "esbk") == [10, 11, 10, 13, 17, 10, 10]
    assert ints(out, "tis") == [-1, -3, -6, -10, -15, -21, -28]
    assert ints(out, "tes") == [0, -1, -3, -6, -10, -15, -21]
    assert ints(out, "ubk_k") == [1, 2, 3, 1] and ints(out, "ubk_v") == [1, 3, 6, 7]
    assert ints(out, "part") == [2, 4, 6, 1, 3, 5, 7]
    assert ints(out, "merge") == [1, 2, 3, 4, 9, 10]
    assert ints(out, "tif") == [1, 2, 3, 4, -5, -6, -7]
    assert ints(out, "rif") == [1, 2, 3, 4, 0, 0, 0]


PERMUTATION_PROGRAM = r"""
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/copy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <cstdio>
#include <type_traits>

// Thrust's strided_range example: every stride-th element, through traits and a permutation_iterator.
template <class Iterator>
struct strided_range {
  typedef typename thrust::iterator_difference<Iterator>::type difference_type;
  struct stride_functor {
    difference_type stride;
    __host__ __device__ difference_type operator()(const difference_type& i) const { return stride * i; }
  };
  typedef thrust::transform_iterator<stride_functor, thrust::counting_iterator<difference_type>> TransformIterator;
  typedef thrust::permutation_iterator<Iterator, TransformIterator> iterator;
  Iterator first, last;
  difference_type stride;
  iterator begin() const { return iterator(first, TransformIterator(thrust::counting_iterator<difference_type>(0), stride_functor{stride})); }
  iterator end() const { return begin() + ((last - first) + (stride - 1)) / stride; }
};

int main() {
  thrust::device_vector<float> m(16, 1.0f);
  for (int i = 0; i < 4; i++) m[i * 5] = float(i + 2);
  float* raw = thrust::raw_pointer_cast(m.data());
  thrust::device_ptr<float> p = thrust::device_pointer_cast(raw);
  typedef thrust::device_vector<float>::iterator Iterator;  // built from device_ptrs, as Thrust allows
  strided_range<Iterator> diagonal{p, p + 16, 5};
  printf("diagonal_product %g\n", thrust::reduce(diagonal.begin(), diagonal.end(), 1.0f, thrust::multiplies<float>()));
  printf("diagonal_count %d\n", int(diagonal.end() - diagonal.begin()));
  static_assert(std::is_same<thrust::iterator_value<Iterator>::type, float>::value, "iterator_value");

  thrust::device_vector<int> values{10, 20, 30, 40, 50}, map{4, 0, 2}, gathered(3);
  thrust::copy(thrust::make_permutation_iterator(values.begin(), map.begin()),
               thrust::make_permutation_iterator(values.begin(), map.end()), gathered.begin());
  printf("gathered %d %d %d\n", int(gathered[0]), int(gathered[1]), int(gathered[2]));
  *thrust::make_permutation_iterator(values.begin(), map.begin() + 1) = -1;  // writes through to values[0]
  printf("written %d\n", int(values[0]));
  return 0;
}
"""


def test_permutation_iterator_traits_and_iterators_from_device_ptr(tmp_path):
    out = parse_lines(run(build({"permutation.cpp": PERMUTATION_PROGRAM}, tmp_path)))
    assert out["diagonal_product"] == ["120"] and out["diagonal_count"] == ["4"]
    assert ints(out, "gathered") == [50, 10, 30]
    assert ints(out, "written") == [-1]


def test_the_vector_header_alone_brings_the_algorithms(tmp_path):
    # As CUDA's Thrust does through its backend: nvcc compiles this with only <thrust/device_vector.h>.
    program = r"""
#include <thrust/device_vector.h>
#include <cstdio>
int main() {
  thrust::device_vector<int> v{3, 1, 2};
  thrust::sort(v.begin(), v.end());
  printf("sorted %d %d %d sum %d\n", int(v[0]), int(v[1]), int(v[2]), thrust::reduce(v.begin(), v.end()));
}
"""
    assert parse_lines(run(build({"alone.cpp": program}, tmp_path)))["sorted"] == ["1", "2", "3", "sum", "6"]


def test_every_thrust_and_cub_header_says_its_version(tmp_path):
    # Code picks an API by the library's version, as the CUDA toolkit's headers let it:
    # `par_nosync` exists from Thrust 1.16 on.  Each header alone must define the macros.
    program = r"""
#include <thrust/sequence.h>
#include <thrust/reduce.h>
#include <thrust/device_vector.h>
#include <cub/warp/warp_reduce.cuh>
#include <cstdio>
int main() {
  cudaStream_t s;
  cudaStreamCreate(&s);
  thrust::device_vector<int> v(5);
#if THRUST_VERSION < 101700
  auto policy = thrust::cuda::par.on(s);
#else
  auto policy = thrust::cuda::par_nosync.on(s);
#endif
  thrust::sequence(policy, v.begin(), v.end());
  printf("sum %d\n", thrust::reduce(v.begin(), v.end()));
  printf("thrust %d %d %d\n", THRUST_MAJOR_VERSION, THRUST_MINOR_VERSION, THRUST_VERSION >= 101700);
  printf("cub %d %d\n", CUB_MAJOR_VERSION, CUB_VERSION == THRUST_VERSION);
  cudaStreamDestroy(s);
}
"""
    out = parse_lines(run(build({"version.cpp": program}, tmp_path)))
    assert out["sum"] == ["10"]
    assert out["thrust"] == ["2", "0", "1"]
    assert out["cub"] == ["2", "1"]


def test_shuffle_and_shuffle_copy_permute_with_the_given_engine(tmp_path):
    program = r"""
#include <thrust/host_vector.h>
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/shuffle.h>
#include <thrust/sort.h>
#include <thrust/random.h>
#include <thrust/execution_policy.h>
#include <cstdio>
int main() {
  const int n = 1000;
  thrust::host_vector<int> a(n), b(n);
  thrust::sequence(a.begin(), a.end());
  thrust::sequence(b.begin(), b.end());
  thrust::shuffle(a.begin(), a.end(), thrust::default_random_engine(123));
  thrust::shuffle(thrust::host, b.begin(), b.end(), thrust::default_random_engine(123));
  int moved = 0, same = 0;
  for (int i = 0; i < n; i++) { moved += a[i] != i; same += a[i] == b[i]; }
  thrust::device_vector<int> d(n);
  thrust::shuffle_copy(thrust::device, a.begin(), a.end(), d.begin(), thrust::default_random_engine(7));
  thrust::sort(d.begin(), d.end());
  int sorted_back = 0;
  for (int i = 0; i < n; i++) sorted_back += d[i] == i;
  printf("moved %d same %d sorted_back %d\n", moved > n / 2, same, sorted_back);
}
"""
    out = parse_lines(run(build({"shuffle.cpp": program}, tmp_path)))
    assert out["moved"] == ["1", "same", "1000", "sorted_back", "1000"]


def test_sort_by_key_of_integer_keys_matches_a_stable_sort(tmp_path):
    # Integer keys take a radix sort; it must order as a stable comparison sort does, for signed and
    # unsigned keys of every width, ascending and descending, with many equal keys.
    program = r"""
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <thrust/functional.h>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>
template <class K, class Comp>
int mismatches(int n, Comp comp, long lo, long hi) {
  std::mt19937 g(n);
  std::uniform_int_distribution<long> dist(lo, hi);
  std::vector<std::pair<K, int>> ref(n);
  thrust::host_vector<K> keys(n);
  thrust::host_vector<int> vals(n);
  for (int i = 0; i < n; i++) { keys[i] = (K)dist(g); vals[i] = i; ref[i] = {keys[i], i}; }
  std::stable_sort(ref.begin(), ref.end(), [&](const std::pair<K, int>& a, const std::pair<K, int>& b) { return comp(a.first, b.first); });
  thrust::device_vector<K> dk = keys;
  thrust::device_vector<int> dv = vals;
  thrust::sort_by_key(dk.begin(), dk.end(), dv.begin(), comp);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += dk[i] != ref[i].first || dv[i] != ref[i].second;
  return bad;
}
int main() {
  printf("int_less %d\n", mismatches<int>(100000, thrust::less<int>(), -1000000, 1000000));
  printf("int_greater %d\n", mismatches<int>(100000, thrust::greater<int>(), -50, 50));
  printf("char_less %d\n", mismatches<signed char>(5000, std::less<signed char>(), -128, 127));
  printf("u8_greater %d\n", mismatches<unsigned char>(5000, thrust::greater<>(), 0, 255));
  printf("i64_less %d\n", mismatches<long long>(50000, thrust::less<>(), -(1L << 40), 1L << 40));
  printf("u32_less %d\n", mismatches<unsigned>(50000, std::less<>(), 0, 4000000000L));
  printf("short_same %d\n", mismatches<short>(3000, thrust::less<short>(), 7, 7));
  thrust::device_vector<int> k{3, -1, 3, 0}, v{0, 1, 2, 3};
  thrust::sort_by_key(k.begin(), k.end(), v.begin());
  printf("default %d %d %d %d\n", (int)v[0], (int)v[1], (int)v[2], (int)v[3]);
}
"""
    out = parse_lines(run(build({"radix.cpp": program}, tmp_path)))
    for key in ("int_less", "int_greater", "char_less", "u8_greater", "i64_less", "u32_less", "short_same"):
        assert out[key] == ["0"], key
    assert out["default"] == ["1", "3", "0", "2"]
