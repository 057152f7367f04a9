__global__ void vote_kernel(const int* x, unsigned int* ballots, int* anys, int* alls, unsigned int* active, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int w = blockIdx.x * ((blockDim.x + 31) / 32) + threadIdx.x / 32;
    unsigned int mask = __activemask();
    bool positive = (i < n) && (x[i] > 0);
    bool big = (i < n) ? (x[i] > -90) : true;
    unsigned int b = __ballot_sync(mask, positive);
    int any = __any_sync(mask, positive);
    int all = __all_sync(mask, big);
    if (lane == 0) {
        ballots[w] = b;
        anys[w] = any != 0;
        alls[w] = all != 0;
        active[w] = mask;
    }
}
