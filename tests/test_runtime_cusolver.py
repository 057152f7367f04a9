"""The CPU dense cuSOLVER subset against numpy, column-major like cuSOLVER: Cholesky (potrf/potrs,
either triangle) and LU with partial pivoting (getrf/getrs, either transpose), float and double."""

from __future__ import annotations

import numpy as np

from test_runtime_support import build, parse_lines, run

CUSOLVER_PROGRAM = r"""
#include <cusolverDn.h>
#include <cstdio>
#include <vector>

template <class T> static void show(const char* name, const T* v, int n) {
  printf("%s", name);
  for (int i = 0; i < n; i++) printf(" %.17g", double(v[i]));
  printf("\n");
}

int main() {
  const int n = 4;
  // column-major, symmetric positive definite
  double spd[n * n] = {4, 2, 0, 2,  2, 5, 1, 0,  0, 1, 6, 2,  2, 0, 2, 7};
  double general[n * n] = {0, 2, 1, 3,  1, 1, 4, 0,  2, 5, 1, 1,  3, 0, 2, 2};
  double rhs[n] = {1, 2, 3, 4};
  cusolverDnHandle_t h;
  cusolverDnCreate(&h);
  int lwork = 0, *info, *ipiv;
  cudaMalloc(&info, sizeof(int));
  cudaMalloc(&ipiv, n * sizeof(int));
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    std::vector<double> a(spd, spd + n * n), b(rhs, rhs + n);
    cusolverDnDpotrf_bufferSize(h, uplo, n, a.data(), n, &lwork);
    std::vector<double> work(lwork);
    cusolverDnDpotrf(h, uplo, n, a.data(), n, work.data(), lwork, info);
    cusolverDnDpotrs(h, uplo, n, 1, a.data(), n, b.data(), n, info);
    show(uplo == CUBLAS_FILL_MODE_LOWER ? "potrf_lower" : "potrf_upper", a.data(), n * n);
    show(uplo == CUBLAS_FILL_MODE_LOWER ? "potrs_lower" : "potrs_upper", b.data(), n);
  }
  float single[n * n];
  for (int i = 0; i < n * n; i++) single[i] = float(spd[i]);
  cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, single, n, nullptr, 0, info);
  show("spotrf", single, n * n);
  double not_spd[4] = {1, 2, 2, 1};
  cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, 2, not_spd, 2, nullptr, 0, info);
  printf("not_spd_info %d\n", *info);
  for (cublasOperation_t trans : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    std::vector<double> a(general, general + n * n), b(rhs, rhs + n);
    cusolverDnDgetrf_bufferSize(h, n, n, a.data(), n, &lwork);
    cusolverDnDgetrf(h, n, n, a.data(), n, nullptr, ipiv, info);
    cusolverDnDgetrs(h, trans, n, 1, a.data(), n, ipiv, b.data(), n, info);
    show(trans == CUBLAS_OP_N ? "getrs_n" : "getrs_t", b.data(), n);
  }
  cusolverDnDestroy(h);
  return 0;
}
"""


def floats(out, key):
    return np.array([float(v) for v in out[key]])


def test_cholesky_and_lu_solve_as_lapack_does(tmp_path):
    out = parse_lines(run(build({"solver.cpp": CUSOLVER_PROGRAM}, tmp_path)))
    spd = np.array([4, 2, 0, 2, 2, 5, 1, 0, 0, 1, 6, 2, 2, 0, 2, 7], float).reshape(4, 4, order="F")
    general = np.array([0, 2, 1, 3, 1, 1, 4, 0, 2, 5, 1, 1, 3, 0, 2, 2], float).reshape(4, 4, order="F")
    rhs = np.array([1, 2, 3, 4], float)
    lower = np.linalg.cholesky(spd)
    factored = floats(out, "potrf_lower").reshape(4, 4, order="F")
    assert np.allclose(np.tril(factored), lower) and np.array_equal(np.triu(factored, 1), np.triu(spd, 1))
    factored = floats(out, "potrf_upper").reshape(4, 4, order="F")
    assert np.allclose(np.triu(factored), lower.T) and np.array_equal(np.tril(factored, -1), np.tril(spd, -1))
    assert np.allclose(np.tril(floats(out, "spotrf").reshape(4, 4, order="F")), lower, rtol=1e-6)
    assert np.allclose(floats(out, "potrs_lower"), np.linalg.solve(spd, rhs))
    assert np.allclose(floats(out, "potrs_upper"), np.linalg.solve(spd, rhs))
    assert out["not_spd_info"] == ["2"]
    assert np.allclose(floats(out, "getrs_n"), np.linalg.solve(general, rhs))
    assert np.allclose(floats(out, "getrs_t"), np.linalg.solve(general.T, rhs))
