/* 3x3 cross-correlation with zero padding, accumulated in double. */
void conv2d_ref(const float* img, const float* filt, float* out, int H, int W)
{
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            double acc = 0.0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                        acc += (double)img[yy * W + xx] * (double)filt[(dy + 1) * 3 + (dx + 1)];
                }
            out[y * W + x] = (float)acc;
        }
}
