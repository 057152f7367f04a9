/* C reference for offset: b = a + k (grid-stride loop in the CUDA) */
void offset_ref(const int* a, int* b, int k, int n) {
  for (int i = 0; i < n; i++) b[i] = a[i] + k;
}
