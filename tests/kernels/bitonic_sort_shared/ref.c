#include <stdlib.h>

static int cmp_float(const void* a, const void* b)
{
    float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

/* Sort each 512-element row ascending. */
void bitonic_ref(float* data)
{
    for (int r = 0; r < 12; ++r)
        qsort(data + r * 512, 512, sizeof(float), cmp_float);
}
