__global__ void intdiv_kernel(const int* a, const int* b, const float* f, int* q, int* r, int* sh, int* trunc_f,
                              int* narrow, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int av = a[i];
    int bv = (i & 1) ? -b[i] : b[i];
    q[i] = av / bv;
    r[i] = av % bv;
    sh[i] = av >> 3;
    trunc_f[i] = (int)(f[i] * 10.0f);
    narrow[i] = (int)(unsigned char)(av & 0x3ff) + (int)(signed char)(av & 0xff);
}
