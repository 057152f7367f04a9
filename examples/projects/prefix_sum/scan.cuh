#pragma once
constexpr int SCAN_BLOCK = 512;
// Inclusive prefix sum of n ints on device memory (in -> out).
void inclusive_scan(const int* d_in, int* d_out, int n);
