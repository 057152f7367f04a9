#include <math.h>

/* Direct O(n^2) sum in double; pos holds x, y, z, mass per body. */
void nbody_ref(const float* pos, float* acc, int n)
{
    for (int i = 0; i < n; ++i) {
        double a[3] = {0.0, 0.0, 0.0};
        for (int j = 0; j < n; ++j) {
            double r[3];
            for (int d = 0; d < 3; ++d)
                r[d] = (double)pos[4 * j + d] - (double)pos[4 * i + d];
            double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + 0.01;
            double s = pos[4 * j + 3] / (d2 * sqrt(d2));
            for (int d = 0; d < 3; ++d)
                a[d] += r[d] * s;
        }
        for (int d = 0; d < 3; ++d)
            acc[3 * i + d] = (float)a[d];
    }
}
