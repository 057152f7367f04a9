#include <stdint.h>

/* Written with explicit C semantics: division truncates toward zero, >> of a negative int is arithmetic
   (gcc), conversions to char types keep the low 8 bits. */
void intdiv_ref(const int32_t* a, const int32_t* b, const float* f, int32_t* q, int32_t* r, int32_t* sh,
                int32_t* trunc_f, int32_t* narrow, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        int32_t bv = (i & 1) ? -b[i] : b[i];
        q[i] = a[i] / bv;
        r[i] = a[i] % bv;
        sh[i] = a[i] >> 3;
        trunc_f[i] = (int32_t)(f[i] * 10.0f);
        narrow[i] = (int32_t)(uint8_t)(a[i] & 0x3ff) + (int32_t)(int8_t)(a[i] & 0xff);
    }
}
