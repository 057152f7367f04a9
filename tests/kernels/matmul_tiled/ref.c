/* C = A * B for row-major A[M][K], B[K][N]; accumulate in double. */
void matmul_tiled_ref(const float* A, const float* B, float* C, int M, int N, int K)
{
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double acc = 0.0;
            for (int k = 0; k < K; ++k)
                acc += (double)A[i * K + k] * (double)B[k * N + j];
            C[i * N + j] = (float)acc;
        }
}
