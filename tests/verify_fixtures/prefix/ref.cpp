// C++ reference for prefix: extern "C", parameters in the candidate's order.
#include <cstdint>
extern "C" void prefix_ref(const int32_t* x, int32_t* y, int64_t* total, int32_t n) {
  int32_t s = 0;
  for (int32_t i = 0; i < n; i++) { s += x[i]; y[i] = s; }
  total[0] += s;
}
