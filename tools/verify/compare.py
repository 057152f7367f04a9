"""Element-by-element comparison of a candidate's output with the reference's.

Floats: |got - expected| <= atol + rtol * |expected|; NaN and Inf positions (and Inf signs) must
match. Integers and bools: exact. Every element is compared, never a sample.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from tools.spec import Buffer, Tolerance, is_float, numpy_dtype

from .harness import POISON_BITS, POISON_BYTE
from .inputs import as_float_array

EXCERPT_RADIUS = 2


class Mismatch(BaseModel):
    """One output buffer that differs from the reference in one run."""

    buffer: str
    seed: int
    threads: int
    first_index: tuple[int, ...]
    count: int
    total: int
    max_abs_err: float
    max_rel_err: float
    excerpt: str
    unwritten: int = 0  # elements still holding the poison value
    run: str = "check"  # which call: "check", "first timed call", "last timed call"
    hint: str = ""  # a recognizable pattern in the differences (e.g. shifted by one element)

    def describe(self, tol: Tolerance | None = None) -> str:
        where = f"seed {self.seed}, {self.threads} thread{'s' if self.threads != 1 else ''}"
        if self.run != "check":
            where += f", {self.run}"
        tol_text = f" (rtol={tol.rtol:g}, atol={tol.atol:g})" if tol else ""
        text = (
            f"output '{self.buffer}' ({where}): {self.count} of {self.total} elements differ{tol_text}; "
            f"first at {list(self.first_index)}"
        )
        if self.unwritten:
            text += f"; {self.unwritten} element{'s' if self.unwritten != 1 else ''} never written (still the poison value)"
        if np.isfinite(self.max_abs_err):
            text += f"; max abs err {self.max_abs_err:.3g}, max rel err {self.max_rel_err:.3g}"
        if self.hint:
            text += f"; {self.hint}"
        return text + "\n" + self.excerpt


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.7g}"
    return str(value)


def _excerpt(shape: tuple[int, ...], expected: np.ndarray, got: np.ndarray, bad: np.ndarray, first: int) -> str:
    lo, hi = max(0, first - EXCERPT_RADIUS), min(expected.size, first + EXCERPT_RADIUS + 1)
    lines = ["  index        expected        got"]
    for i in range(lo, hi):
        idx = list(np.unravel_index(i, shape)) if shape else [i]
        mark = "  <- differs" if bad[i] else ""
        lines.append(f"  {str([int(v) for v in idx]):<12} {_fmt(expected[i]):<15} {_fmt(got[i])}{mark}")
    return "\n".join(lines)


def _shift_hint(expected: np.ndarray, got: np.ndarray, bad: np.ndarray) -> str:
    """'shifted by +1' when most wrong elements hold their neighbour's expected value."""
    if bad.sum() < 4:
        return ""
    idx = np.flatnonzero(bad)
    for shift in (1, -1):
        src = idx - shift
        ok = (src >= 0) & (src < expected.size)
        if ok.sum() < 0.9 * idx.size:
            continue
        with np.errstate(invalid="ignore"):
            same = np.isclose(got[idx[ok]], expected[src[ok]], rtol=1e-5, atol=1e-7, equal_nan=True)
        if same.mean() > 0.9:
            return (f"the values look shifted by {shift:+d} element (got[i] == expected[i{-shift:+d}]): "
                    "an off-by-one index")
    return ""


def _poisoned(buf: Buffer, got_raw: np.ndarray) -> np.ndarray:
    if buf.init == "zeros":
        return np.zeros(got_raw.size, dtype=bool)
    raw = np.ascontiguousarray(got_raw).reshape(-1)
    if is_float(buf.dtype):
        width = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16, "bfloat16": np.uint16}[buf.dtype]
        return raw.view(width) == POISON_BITS[buf.dtype]
    as_bytes = raw.view(np.uint8).reshape(raw.size, -1)
    return np.all(as_bytes == POISON_BYTE, axis=1)


def error_stats(buf: Buffer, expected: np.ndarray, got: np.ndarray) -> tuple[float, float]:
    """Max absolute and relative error over elements finite in both (0 for integer buffers that match)."""
    e = as_float_array(buf.dtype, expected).reshape(-1) if is_float(buf.dtype) else expected.reshape(-1).astype(np.float64)
    g = as_float_array(buf.dtype, got).reshape(-1) if is_float(buf.dtype) else got.reshape(-1).astype(np.float64)
    both = np.isfinite(e) & np.isfinite(g)
    if not both.any():
        return 0.0, 0.0
    diff = np.abs(g[both] - e[both])
    mag = np.abs(e[both])
    rel = np.divide(diff, mag, out=np.zeros_like(diff), where=mag > 0)
    return float(diff.max()), float(rel.max())


def compare_buffer(
    buf: Buffer, expected: np.ndarray, got: np.ndarray, tol: Tolerance, *, seed: int, threads: int, run: str = "check"
) -> Mismatch | None:
    """None when `got` matches `expected`; else the mismatch, described precisely."""
    dtype = numpy_dtype(buf.dtype)
    expected = np.asarray(expected).astype(dtype, copy=False).reshape(-1)
    got = np.asarray(got).astype(dtype, copy=False).reshape(-1)
    if expected.size != got.size:
        raise ValueError(f"buffer {buf.name}: expected {expected.size} elements from the reference, got {got.size}")
    if is_float(buf.dtype):
        e, g = as_float_array(buf.dtype, expected), as_float_array(buf.dtype, got)
        nan_e, nan_g = np.isnan(e), np.isnan(g)
        inf_any = np.isinf(e) | np.isinf(g)
        finite = ~(nan_e | nan_g | inf_any)
        with np.errstate(invalid="ignore", over="ignore"):
            beyond = np.abs(g - e) > tol.atol + tol.rtol * np.abs(e)
        bad = (nan_e != nan_g) | (inf_any & ~(nan_e | nan_g) & (e != g)) | (finite & beyond)
        shown_e, shown_g = e, g
    else:
        as_int = np.uint8 if buf.dtype == "bool" else dtype  # a poisoned bool byte is neither 0 nor 1
        shown_e, shown_g = expected.view(as_int), got.view(as_int)
        bad = shown_e != shown_g
    count = int(bad.sum())
    if not count:
        return None
    first = int(np.argmax(bad))
    max_abs, max_rel = error_stats(buf, expected, got)
    if is_float(buf.dtype) and (bad & ~finite).any():
        max_abs = max_rel = float("inf")  # a NaN/Inf where a number belongs is unbounded error
    return Mismatch(
        buffer=buf.name,
        seed=seed,
        threads=threads,
        first_index=tuple(int(v) for v in np.unravel_index(first, buf.shape)),
        count=count,
        total=int(bad.size),
        max_abs_err=max_abs,
        max_rel_err=max_rel,
        excerpt=_excerpt(tuple(buf.shape), shown_e, shown_g, bad, first),
        unwritten=int((_poisoned(buf, got) & bad).sum()),
        run=run,
        hint=_shift_hint(np.asarray(shown_e, dtype=np.float64), np.asarray(shown_g, dtype=np.float64), bad),
    )
