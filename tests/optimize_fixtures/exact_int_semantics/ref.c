#include <stdint.h>

/* The kernel's integer semantics written without undefined behaviour: 32-bit products and sums
   wrap (computed in uint32_t and converted back), division truncates toward zero. */
static int32_t wrap_mul(int32_t x, int32_t y) { return (int32_t)((uint32_t)x * (uint32_t)y); }
static int32_t wrap_add(int32_t x, int32_t y) { return (int32_t)((uint32_t)x + (uint32_t)y); }

void int_ref(const uint32_t* u, const int32_t* a, const int32_t* b, uint32_t* hash, int32_t* prod, int64_t* widened,
             int32_t* dot, int32_t* q, int32_t* r, int32_t* q8, int32_t* r8, uint32_t* uq, uint32_t* mixed,
             int32_t* hist, int32_t n, int32_t k)
{
    for (int32_t bin = 0; bin < 16; ++bin)
        hist[bin] = 0;
    for (int32_t i = 0; i < n; ++i) {
        hist[u[i] % 16u] += 1;
        uint32_t h = 2166136261u;
        for (int32_t j = 0; j < k; ++j) {
            h = (h ^ u[(i + j) % n]) * 16777619u;
            h ^= h >> 13;
        }
        hash[i] = h;
        int32_t p = wrap_mul(a[i], b[i]);
        prod[i] = p;
        widened[i] = (int64_t)p - (int64_t)a[i] * (int64_t)b[i];
        int32_t acc = 0;
        for (int32_t j = 0; j < k; ++j)
            acc = wrap_add(acc, wrap_mul(a[(i + j) % n], b[(i + 2 * j) % n]));
        dot[i] = acc / 16;
        int32_t d = (b[i] % 97) - 48;
        d = (d == 0 || d == -1) ? -7 : d;  /* INT_MIN / -1 would trap */
        q[i] = a[i] / d;
        r[i] = a[i] % d;
        q8[i] = a[i] / 8;
        r8[i] = a[i] % 8;
        uq[i] = (uint32_t)a[i] / 8u + u[i] % 10u;
        /* CUDA's max(int, unsigned) compares and returns unsigned */
        mixed[i] = (uint32_t)a[i] > 7u ? (uint32_t)a[i] : 7u;
    }
}
