struct AddOp {
    __device__ static double apply(double a, double b) { return a + b; }
};

struct MaxOp {
    __device__ static double apply(double a, double b) { return a > b ? a : b; }
};

template <typename T, int UNROLL>
__global__ void axpy_unrolled(const T* x, T* y, T a, int n)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
        int i = base + k;
        if (i < n)
            y[i] = a * x[i] + (T)k;
    }
}

template <typename Op>
__global__ void combine(const double* a, double* acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] = Op::apply(acc[i], a[i]);
}
