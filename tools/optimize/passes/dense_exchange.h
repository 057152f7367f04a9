// ---- tools.optimize: dense warp exchange ---------------------------------------------------
// For exchange sites where every thread of the block writes in every round (no masked, exited
// or skipped lane), "was lane t written this round" is simply t < nthreads: no round stamps to
// write or compare. Reads follow the shuffle rules of cudacpu's WarpExchange.
#ifndef CUDAOPT_DENSE_EXCHANGE
#define CUDAOPT_DENSE_EXCHANGE
namespace cudaopt {
class DenseExchange {
 public:
  DenseExchange(int sites, std::size_t nthreads) : n_(nthreads), slots_(new Slot[sites * nthreads + 1]()) {}
  ~DenseExchange() { delete[] slots_; }
  DenseExchange(const DenseExchange&) = delete;
  DenseExchange& operator=(const DenseExchange&) = delete;
  void begin(int) {}
  template <class T>
  void put(int site, unsigned tid, const T& value) {
    static_assert(sizeof(T) <= sizeof(Slot), "warp intrinsic on a value larger than 16 bytes");
    std::memcpy(&slots_[site * n_ + tid], &value, sizeof(T));
  }
  bool written(int, unsigned tid) const { return tid < n_; }
  template <class T>
  T get(int site, unsigned tid) const {
    T value;
    std::memcpy(&value, &slots_[site * n_ + tid], sizeof(T));
    return value;
  }

 private:
  struct alignas(16) Slot { unsigned char bytes[16]; };
  std::size_t n_;
  Slot* slots_;
};
}  // namespace cudaopt

namespace cudacpu {
template <class T>
T read_lane(const cudaopt::DenseExchange& x, int site, unsigned src) {
  return x.written(site, src) ? x.get<T>(site, src) : T{};
}

template <class T>
T shfl(const cudaopt::DenseExchange& x, int site, unsigned tid, int src_lane, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int in_segment = ((src_lane % w) + w) % w;
  return read_lane<T>(x, site, shfl_source(tid, in_segment, w));
}

template <class T>
T shfl_up(const cudaopt::DenseExchange& x, int site, unsigned tid, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane - static_cast<int>(delta) < 0) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, lane - static_cast<int>(delta), w));
}

template <class T>
T shfl_down(const cudaopt::DenseExchange& x, int site, unsigned tid, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane + static_cast<int>(delta) >= w) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, lane + static_cast<int>(delta), w));
}

template <class T>
T shfl_xor(const cudaopt::DenseExchange& x, int site, unsigned tid, int lane_mask, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  int src = lane ^ lane_mask;
  if (src < 0 || src >= w) return x.get<T>(site, tid);
  return read_lane<T>(x, site, shfl_source(tid, src, w));
}
}  // namespace cudacpu
#endif  // CUDAOPT_DENSE_EXCHANGE
// ---- end of tools.optimize: dense warp exchange ---------------------------------------------
