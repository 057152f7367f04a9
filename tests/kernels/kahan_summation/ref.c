/* The same compensated summation, in float and in the same order (compile without -ffast-math). */
void kahan_ref(const float* x, float* out, int rows, int cols)
{
    for (int r = 0; r < rows; ++r) {
        volatile float sum = 0.0f, c = 0.0f;
        for (int j = 0; j < cols; ++j) {
            float v = x[r * cols + j];
            v = (j % 3 == 0) ? v * 65536.0f : v;
            volatile float y = v - c;
            volatile float t = sum + y;
            c = (t - sum) - y;
            sum = t;
        }
        out[r] = sum;
    }
}
