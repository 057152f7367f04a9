#include <stdint.h>

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void wrap_ref(const uint32_t* in, uint32_t* hashed, uint32_t* shifted, int32_t* cmp, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        uint32_t tid = (uint32_t)(i % 128);
        hashed[i] = hash32(in[i] + (uint32_t)i * 2654435761u);
        shifted[i] = (uint32_t)(tid - 5u) / 8u + in[i] * 3u;
        cmp[i] = 2; /* -1 converted to unsigned is never below a thread index */
    }
}
