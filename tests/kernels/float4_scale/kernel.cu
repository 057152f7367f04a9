__global__ void float4_kernel(const float* x, float* y, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4*>(x)[i];
        float4 r = make_float4(v.x * s + v.w, v.y * s - v.z, v.z * s, v.w * s + 1.0f);
        reinterpret_cast<float4*>(y)[i] = r;
    }
}
