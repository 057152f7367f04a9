__global__ void atomic_ops_kernel(const int* v, const unsigned int* u, int* iadd, int* isub, int* imax, int* imin,
                                  unsigned int* umax, unsigned int* uand, unsigned int* uor, unsigned int* uxor,
                                  unsigned int* usub, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int slot = i % 16;
    atomicAdd(&iadd[slot], v[i]);
    atomicSub(&isub[slot], v[i]);
    atomicMax(&imax[slot], v[i]);
    atomicMin(&imin[slot], v[i]);
    atomicMax(&umax[slot], u[i]);
    atomicAnd(&uand[slot], u[i] | 0x0F0F0F0Fu);
    atomicOr(&uor[slot], u[i] & 0x00FF00FFu);
    atomicXor(&uxor[slot], u[i]);
    atomicSub(&usub[slot], u[i]);
}
