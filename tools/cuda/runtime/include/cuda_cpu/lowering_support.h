// ---- support code of the lowered kernels (emitted once per file by tools/cuda) ----------
// A lowered kernel runs its blocks in parallel (OpenMP) and the threads of a block as loops
// split at every barrier.  What must outlive such a split lives here: per-thread copies of
// variables (PerThread) and the lanes' values at a warp intrinsic (WarpExchange).
#ifndef CUDACPU_LOWERING_SUPPORT
#define CUDACPU_LOWERING_SUPPORT
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <omp.h>
#include <type_traits>

namespace cudacpu {

// One value per thread of a block (T may be an array type). A type with no default constructor
// (a struct with only `Acc(float, int)`) starts as zeroed bytes: the lowered code assigns each
// thread's value where the thread declares it, as device code's types are plain data.
template <class T>
class PerThread {
  static constexpr bool kConstructed = std::is_default_constructible<T>::value;
  static_assert(kConstructed || std::is_trivially_copyable<T>::value,
                "a per-thread variable's type needs a default constructor or must be plain data");

 public:
  explicit PerThread(std::size_t n) : data_(allocate(n ? n : 1)), size_(n) {}
  ~PerThread() {
    if constexpr (kConstructed) delete[] data_;
    else ::operator delete[](static_cast<void*>(data_), std::align_val_t(alignof(T)));
  }
  PerThread(const PerThread&) = delete;
  PerThread& operator=(const PerThread&) = delete;
  T& operator[](std::size_t i) { return data_[i]; }
  void fill(const T& v) {
    for (std::size_t i = 0; i < size_; ++i) data_[i] = v;
  }

 private:
  static T* allocate(std::size_t n) {
    if constexpr (kConstructed) {
      return new T[n]();
    } else {
      void* bytes = ::operator new[](n * sizeof(T), std::align_val_t(alignof(T)));
      std::memset(bytes, 0, n * sizeof(T));
      return static_cast<T*>(bytes);
    }
  }

  T* data_;
  std::size_t size_;
};

// The dynamic shared memory of a block (`extern __shared__`), suitably aligned.
class SharedBuffer {
 public:
  explicit SharedBuffer(std::size_t bytes) : data_(new Slot[bytes / sizeof(Slot) + 1]()) {}
  ~SharedBuffer() { delete[] data_; }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  template <class T>
  T* as() { return reinterpret_cast<T*>(data_); }

 private:
  struct alignas(16) Slot { unsigned char bytes[16]; };
  Slot* data_;
};

// The warp exchange's per-lane steps are always inlined into the thread loops (a call per lane
// costs more than the step); the general rules that valid shuffles never reach stay out of line.
#if defined(__GNUC__)
#define CUDACPU_WARP_INLINE inline __attribute__((always_inline))
#define CUDACPU_WARP_COLD __attribute__((noinline, cold))
#else
#define CUDACPU_WARP_INLINE inline
#define CUDACPU_WARP_COLD
#endif

// Values that the lanes hand to a warp intrinsic: each call site has one slot per thread,
// stamped with the round in which it was written, so that lanes that did not take part
// (inactive, masked out, beyond the block: undefined in CUDA) are recognised and read as zero.
class WarpExchange {
 public:
  WarpExchange(int sites, std::size_t nthreads)
      : sites_(sites), n_(nthreads), slots_(new Slot[sites * nthreads + 1]()),
        stamps_(new unsigned[sites * nthreads + 1]()), round_(new unsigned[sites + 1]()) {}
  ~WarpExchange() { delete[] slots_; delete[] stamps_; delete[] round_; }
  WarpExchange(const WarpExchange&) = delete;
  WarpExchange& operator=(const WarpExchange&) = delete;

  void begin(int site) { ++round_[site]; }
  template <class T>
  CUDACPU_WARP_INLINE void put(int site, unsigned tid, const T& value) {
    static_assert(sizeof(T) <= sizeof(Slot), "warp intrinsic on a value larger than 16 bytes");
    std::memcpy(&slots_[site * n_ + tid], &value, sizeof(T));
    stamps_[site * n_ + tid] = round_[site];
  }
  CUDACPU_WARP_INLINE bool written(int site, unsigned tid) const { return tid < n_ && stamps_[site * n_ + tid] == round_[site]; }
  template <class T>
  CUDACPU_WARP_INLINE T get(int site, unsigned tid) const {
    T value;
    std::memcpy(&value, &slots_[site * n_ + tid], sizeof(T));
    return value;
  }
  std::size_t threads() const { return n_; }

 private:
  struct alignas(16) Slot { unsigned char bytes[16]; };
  int sites_;
  std::size_t n_;
  Slot* slots_;
  unsigned* stamps_;
  unsigned* round_;
};

// Thread id of the source lane of a shuffle inside the caller's segment of `width` lanes.
inline unsigned shfl_source(unsigned tid, int src_lane_in_segment, int width) {
  unsigned lane = tid % 32u;
  unsigned w = static_cast<unsigned>(width);
  unsigned segment = (w & (w - 1)) == 0 ? lane & ~(w - 1) : lane - lane % w;
  return tid - lane + segment + static_cast<unsigned>(src_lane_in_segment);
}

template <class T>
CUDACPU_WARP_INLINE T read_lane(const WarpExchange& x, int site, unsigned src) {
  return x.written(site, src) ? x.get<T>(site, src) : T{};
}

// A width CUDA allows (a power of two up to 32): lanes and segments are then bit masks, and a
// source inside the segment is the caller's thread id moved by the shuffle's offset. The
// shuffles are inlined into the thread loops, whose own code g++ stops inlining in a kernel
// with many of them (a call per lane). Any other width, and an offset past the warp, take the
// general rules (clamped to 32, lanes by remainder), out of line.
inline bool shfl_width_ok(int width) { return width > 0 && width <= 32 && (width & (width - 1)) == 0; }

template <class T>
CUDACPU_WARP_COLD T shfl_general(const WarpExchange& x, int site, unsigned tid, int src_lane, int width) {
  int w = width > 0 && width <= 32 ? width : 32;
  int in_segment = ((src_lane % w) + w) % w;
  return read_lane<T>(x, site, shfl_source(tid, in_segment, w));
}

template <class T>
CUDACPU_WARP_INLINE T shfl(const WarpExchange& x, int site, unsigned tid, int src_lane, int width = 32) {
  if (!shfl_width_ok(width)) return shfl_general<T>(x, site, tid, src_lane, width);
  unsigned m = static_cast<unsigned>(width) - 1;
  return read_lane<T>(x, site, (tid & ~m) | (static_cast<unsigned>(src_lane) & m));
}

template <class T>
CUDACPU_WARP_COLD T shfl_up_general(const WarpExchange& x, int site, unsigned tid, unsigned delta, int width) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane - static_cast<int>(delta) < 0) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, lane - static_cast<int>(delta), w));
}

template <class T>
CUDACPU_WARP_INLINE T shfl_up(const WarpExchange& x, int site, unsigned tid, unsigned delta, int width = 32) {
  if (!shfl_width_ok(width) || delta > 32u) return shfl_up_general<T>(x, site, tid, delta, width);
  if ((tid & static_cast<unsigned>(width - 1)) < delta) return x.get<T>(site, tid);
  return read_lane<T>(x, site, tid - delta);
}

template <class T>
CUDACPU_WARP_COLD T shfl_down_general(const WarpExchange& x, int site, unsigned tid, unsigned delta, int width) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane + static_cast<int>(delta) >= w) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, lane + static_cast<int>(delta), w));
}

template <class T>
CUDACPU_WARP_INLINE T shfl_down(const WarpExchange& x, int site, unsigned tid, unsigned delta, int width = 32) {
  if (!shfl_width_ok(width) || delta > 32u) return shfl_down_general<T>(x, site, tid, delta, width);
  if ((tid & static_cast<unsigned>(width - 1)) + delta >= static_cast<unsigned>(width)) return x.get<T>(site, tid);
  return read_lane<T>(x, site, tid + delta);
}

template <class T>
CUDACPU_WARP_COLD T shfl_xor_general(const WarpExchange& x, int site, unsigned tid, int lane_mask, int width) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  int src = lane ^ lane_mask;
  if (src < 0 || src >= w) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, src, w));
}

template <class T>
CUDACPU_WARP_INLINE T shfl_xor(const WarpExchange& x, int site, unsigned tid, int lane_mask, int width = 32) {
  if (!shfl_width_ok(width)) return shfl_xor_general<T>(x, site, tid, lane_mask, width);
  // A mask below the width flips lanes inside the segment; one with any other bit (or a
  // negative one) leaves it, and the caller keeps its value.
  if (static_cast<unsigned>(lane_mask) >= static_cast<unsigned>(width)) return x.get<T>(site, tid);
  return read_lane<T>(x, site, tid ^ static_cast<unsigned>(lane_mask));
}

// Lanes of the caller's warp that took part, restricted to `mask`, as a bit set.
inline unsigned ballot(const WarpExchange& x, int site, unsigned tid, unsigned mask) {
  unsigned base = tid - tid % 32u, bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if (x.written(site, base + lane) && x.get<int>(site, base + lane)) bits |= 1u << lane;
  return bits & mask;
}

inline unsigned participants(const WarpExchange& x, int site, unsigned tid, unsigned mask) {
  unsigned base = tid - tid % 32u, bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if (x.written(site, base + lane)) bits |= 1u << lane;
  return bits & mask;
}

inline int any(const WarpExchange& x, int site, unsigned tid, unsigned mask) { return ballot(x, site, tid, mask) != 0; }

inline int all(const WarpExchange& x, int site, unsigned tid, unsigned mask) {
  return ballot(x, site, tid, mask) == participants(x, site, tid, mask);
}

template <class T, class Op>
T warp_reduce(const WarpExchange& x, int site, unsigned tid, unsigned mask, Op op) {
  unsigned base = tid - tid % 32u;
  T acc = x.get<T>(site, tid);
  bool first = true;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!((mask >> lane) & 1u) || !x.written(site, base + lane)) continue;
    T v = x.get<T>(site, base + lane);
    acc = first ? v : op(acc, v);
    first = false;
  }
  return acc;
}

// __match_any_sync: the lanes of `mask` that took part and hold the caller's value (bit for bit).
template <class T>
unsigned match_any(const WarpExchange& x, int site, unsigned tid, unsigned mask) {
  unsigned base = tid - tid % 32u, bits = 0;
  T mine = x.get<T>(site, tid);
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!((mask >> lane) & 1u) || !x.written(site, base + lane)) continue;
    T other = x.get<T>(site, base + lane);
    if (std::memcmp(&other, &mine, sizeof(T)) == 0) bits |= 1u << lane;
  }
  return bits;
}

// __match_all_sync: `mask` where every lane of it holds the caller's value, else 0; *pred says which.
template <class T>
unsigned match_all(const WarpExchange& x, int site, unsigned tid, unsigned mask, int* pred) {
  bool same = match_any<T>(x, site, tid, mask) == participants(x, site, tid, mask);
  *pred = same;
  return same ? mask : 0u;
}

// The OpenMP threads for a grid whose blocks may wait for one another: one per block where the
// grid is as small as codes that rely on co-resident blocks make it (sized by the SM count:
// up to 64 blocks), so that each block progresses while another spins. A larger grid (a
// decoupled look-back over every tile) keeps the usual team, whose blocks, handed out one at a
// time in order, only ever wait for blocks already running.
inline int coresident_threads(dim3 grid) {
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  const int usual = omp_get_max_threads();
  return blocks <= static_cast<unsigned long long>(usual) || blocks > 64 ? usual : static_cast<int>(blocks);
}

// Their blocks per thread: one where each has its own thread, else contiguous runs as usual
// (a thread's next block then rarely waits for the other threads).
inline int coresident_chunk(dim3 grid) {
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  const unsigned long long threads = static_cast<unsigned long long>(coresident_threads(grid));
  return static_cast<int>((blocks + threads - 1) / threads);
}

// Lanes of the caller's warp that exist in the block.
inline unsigned active_mask(unsigned tid, std::size_t nthreads) {
  unsigned base = tid - tid % 32u, bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if (base + lane < nthreads) bits |= 1u << lane;
  return bits;
}

// __syncthreads_count/_and/_or: a barrier that also combines one predicate per thread.
inline int block_count(const WarpExchange& x, int site) {
  int count = 0;
  for (unsigned t = 0; t < x.threads(); ++t)
    if (x.written(site, t) && x.get<int>(site, t)) ++count;
  return count;
}

inline int block_participants(const WarpExchange& x, int site) {
  int count = 0;
  for (unsigned t = 0; t < x.threads(); ++t) count += x.written(site, t);
  return count;
}

// Is some thread (not exited) still inside a loop whose trip count differs between threads?
inline bool any_thread(PerThread<bool>& in_loop, std::size_t nthreads, PerThread<bool>* exited = nullptr) {
  for (std::size_t t = 0; t < nthreads; ++t)
    if (in_loop[t] && !(exited && (*exited)[t])) return true;
  return false;
}

// A __syncthreads() that some but not all threads of a block reached (its condition differed
// between them): CUDA leaves this undefined; the lowering synchronized the threads that reached
// it. Said on stderr, for the first few such barriers of a run.
inline void divergent_barrier(const char* where, unsigned int reached, unsigned int alive) {
  static int said = 0;
  int count;
#pragma omp atomic capture
  count = ++said;
  if (count <= 5)
    std::fprintf(stderr, "%s: __syncthreads() reached by %u of the %u threads of a block under a condition that "
                 "differs between them (undefined in CUDA)\n", where, reached, alive);
}

[[noreturn]] inline void unsupported(const char* what) {
  std::fprintf(stderr, "cudacpu: %s\n", what);
  std::abort();
}

}  // namespace cudacpu
#endif  // CUDACPU_LOWERING_SUPPORT
