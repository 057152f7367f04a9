static const int WEIGHTS[4] = {3, -1, 4, 1};

/* Interpret each row of (op, value) pairs: 7 skips, 9 stops, others update the accumulator. */
void switch_ref(const int* ops, const int* vals, int* out, int n, int len)
{
    for (int i = 0; i < n; ++i) {
        int acc = 0;
        for (int j = 0; j < len; ++j) {
            int op = ops[i * len + j], v = vals[i * len + j];
            if (op == 7)
                continue;
            if (op == 9)
                break;
            if (op == 0)
                acc += v;
            else if (op == 1)
                acc -= v;
            else if (op == 2 || op == 3)
                acc = acc * 2 + WEIGHTS[op];
            else if (op == 4)
                acc ^= v;
            else
                acc += WEIGHTS[op & 3] * v;
        }
        out[i] = acc;
    }
}
