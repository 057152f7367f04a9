/* Collatz step counts; rounds[b] is the largest count in block b of 128. */
void collatz_ref(const int* x, int* steps, int* rounds, int n)
{
    for (int b = 0; b < 8; ++b)
        rounds[b] = 0;
    for (int i = 0; i < n; ++i) {
        unsigned int v = (unsigned int)x[i];
        int s = 0;
        while (v != 1u) {
            v = (v & 1u) ? 3u * v + 1u : v / 2u;
            s++;
        }
        steps[i] = s;
        if (s > rounds[i / 128])
            rounds[i / 128] = s;
    }
}
