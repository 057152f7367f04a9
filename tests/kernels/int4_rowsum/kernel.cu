__global__ void int4_kernel(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int4 v = reinterpret_cast<const int4*>(x)[i];
        int4 w = make_int4(v.x + v.y, v.y - v.z, v.z * 2, v.w);
        out[i] = w.x + w.y + w.z + w.w;
    }
}
