#define BLOCK 128
#define EPS2 0.01f

__device__ float3 interact(float4 bi, float4 bj, float3 ai)
{
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float d2 = r.x * r.x + r.y * r.y + r.z * r.z + EPS2;
    float inv = rsqrtf(d2);
    float s = bj.w * inv * inv * inv;
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;
    return ai;
}

__global__ void nbody_kernel(const float* pos_raw, float* acc, int n)
{
    __shared__ float4 sh[BLOCK];
    const float4* pos = reinterpret_cast<const float4*>(pos_raw);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = (i < n) ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int tile = 0; tile < (n + BLOCK - 1) / BLOCK; ++tile) {
        int j = tile * BLOCK + threadIdx.x;
        sh[threadIdx.x] = (j < n) ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < BLOCK; ++k)
            a = interact(me, sh[k], a);
        __syncthreads();
    }
    if (i < n) {
        acc[3 * i + 0] = a.x;
        acc[3 * i + 1] = a.y;
        acc[3 * i + 2] = a.z;
    }
}
