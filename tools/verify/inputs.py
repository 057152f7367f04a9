"""Seeded input generation, sized from the task spec.

Every input and inout buffer gets its own generator seeded from (seed, crc32(buffer name)), so a
buffer's values do not change when another buffer is added, and golden files recorded on one
machine stay valid on another. Settings on a buffer (`inputs`) override the task's.

Distributions (floats; integers in brackets):
  uniform  values in [low, high)            [integers in [low, high]]
  normal   mean (low+high)/2, std (high-low)/4   [rounded, clipped to [low, high]]
  randint  integers in [low, high] (stored in the buffer's type)
  ones, zeros, arange (0, 1, 2, ... wrapped into the type's range)
  special  uniform with one element in eight replaced by a special value: 0, -0, +-1, +-Inf,
           NaN, the largest and the smallest normal number   [0, -1, 1, the type's min and max]
`denormals: true` additionally puts subnormal numbers into one float element in sixteen.
float16 values are numpy float16; bfloat16 values are stored as their uint16 bit patterns.
"""

from __future__ import annotations

import zlib

import numpy as np

from tools.spec import Buffer, Task, TaskError, is_float, numpy_dtype

INPUT_ROLES = ("input", "inout")


def float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (nearest even) and return the uint16 bit patterns."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(values)
    rounded[nan] = 0x7FC0
    return rounded.astype(np.uint16)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def as_float_array(buffer_dtype: str, data: np.ndarray) -> np.ndarray:
    """The values of a stored buffer as float64 (bfloat16 bits decoded)."""
    if buffer_dtype == "bfloat16":
        return bfloat16_bits_to_float32(data).astype(np.float64)
    return np.asarray(data, dtype=np.float64)


def _settings(task: Task, buf: Buffer) -> tuple[str, float, float, bool]:
    over = buf.inputs
    dist = (over.distribution if over and over.distribution else None) or task.inputs.distribution
    low = over.low if over and over.low is not None else task.inputs.low
    high = over.high if over and over.high is not None else task.inputs.high
    denormals = over.denormals if over and over.denormals is not None else task.inputs.denormals
    return dist, low, high, denormals


def _float_values(rng: np.random.Generator, dist: str, n: int, low: float, high: float) -> np.ndarray:
    if dist in ("uniform", "special"):
        return rng.uniform(low, high, n)
    if dist == "normal":
        return rng.normal((low + high) / 2, max(high - low, 0.0) / 4, n)
    if dist == "randint":
        return rng.integers(int(np.ceil(low)), int(np.floor(high)) + 1, n).astype(np.float64)
    if dist == "ones":
        return np.ones(n)
    if dist == "zeros":
        return np.zeros(n)
    return np.arange(n, dtype=np.float64)  # arange


def _float_buffer(rng: np.random.Generator, buf: Buffer, dist: str, low: float, high: float, denormals: bool) -> np.ndarray:
    n = buf.size
    store = np.float32 if buf.dtype == "bfloat16" else numpy_dtype(buf.dtype).type
    finfo = np.finfo(store)
    values = _float_values(rng, dist, n, low, high)
    if dist == "special" and n:
        specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(finfo.max), float(finfo.tiny)])
        where = rng.random(n) < 1 / 8
        values[where] = rng.choice(specials, int(where.sum()))
    if denormals and n:
        where = rng.random(n) < 1 / 16
        tiny = float(finfo.smallest_subnormal) * rng.integers(1, 64, int(where.sum()))
        values[where] = tiny * rng.choice([-1.0, 1.0], int(where.sum()))
    with np.errstate(over="ignore", invalid="ignore"):
        stored = values.astype(store)
    if buf.dtype == "bfloat16":
        return float32_to_bfloat16_bits(stored)
    return stored


def _int_buffer(rng: np.random.Generator, buf: Buffer, dist: str, low: float, high: float) -> np.ndarray:
    n = buf.size
    dtype = numpy_dtype(buf.dtype)
    if buf.dtype == "bool":
        lo, hi = 0, 1
    else:
        info = np.iinfo(dtype)
        lo, hi = max(int(np.ceil(low)), info.min), min(int(np.floor(high)), info.max)
        if lo > hi:  # e.g. the default [-1, 1] on an unsigned type
            lo, hi = max(0, info.min), max(hi, 1)
    if dist in ("uniform", "randint", "special"):
        values = rng.integers(lo, hi + 1, n, dtype=np.int64)
        if dist == "special" and n and buf.dtype != "bool":
            info = np.iinfo(dtype)
            specials = np.array([v for v in (0, -1, 1, info.min, info.max) if info.min <= v <= info.max], dtype=np.int64)
            where = rng.random(n) < 1 / 8
            values[where] = rng.choice(specials, int(where.sum()))
    elif dist == "normal":
        values = np.clip(np.rint(rng.normal((lo + hi) / 2, max(hi - lo, 0) / 4, n)), lo, hi).astype(np.int64)
    elif dist == "ones":
        values = np.ones(n, dtype=np.int64)
    elif dist == "zeros":
        values = np.zeros(n, dtype=np.int64)
    else:  # arange, wrapped into the type's range
        values = np.arange(n, dtype=np.int64)
        if buf.dtype == "bool":
            values = values % 2
    return values.astype(dtype)


def distinct_values(task: Task, buf: Buffer) -> float:
    """About how many different values a generated element of `buf` takes at random: infinity
    for floats drawn from a continuous distribution, 1 for fills that do not depend on the seed
    (what a proof by random testing cannot rely on)."""
    dist, low, high, _ = _settings(task, buf)
    if dist in ("ones", "zeros", "arange"):
        return 1.0
    if buf.dtype == "bool":
        return 2.0
    if is_float(buf.dtype) and dist != "randint":
        return float("inf") if high > low else 1.0
    return float(max(int(np.floor(high)) - int(np.ceil(low)) + 1, 1))


def buffer_seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed & 0xFFFFFFFF, zlib.crc32(name.encode())])


def generate_buffer(task: Task, buf: Buffer, seed: int) -> np.ndarray:
    """The seeded initial values of one buffer, shaped as the spec says (or its data file's)."""
    if buf.data:
        return load_buffer_data(task, buf)
    rng = np.random.default_rng(buffer_seed(seed, buf.name))
    dist, low, high, denormals = _settings(task, buf)
    if is_float(buf.dtype):
        flat = _float_buffer(rng, buf, dist, low, high, denormals)
    else:
        flat = _int_buffer(rng, buf, dist, low, high)
    return flat.reshape(buf.shape)


def load_buffer_data(task: Task, buf: Buffer) -> np.ndarray:
    """A buffer's initial values from its .npy data file, checked against the spec's size."""
    path = task.path_of(buf.data)
    try:
        values = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: buffer '{buf.name}': cannot load its data ({exc})") from None
    if values.size != buf.size:
        raise TaskError(f"{path}: buffer '{buf.name}': {values.size} values, the shape {buf.shape} needs {buf.size}")
    return values.astype(numpy_dtype(buf.dtype), copy=False).reshape(buf.shape)


def inputs_from_files(task: Task) -> bool:
    """Every initial value comes from a data file (a captured launch): the seed changes nothing."""
    return all(b.data for b in task.buffers if b.role in INPUT_ROLES)


def generate_inputs(task: Task, seed: int) -> dict[str, np.ndarray]:
    """Initial values of every input and inout buffer for one seed, by buffer name."""
    return {b.name: generate_buffer(task, b, seed) for b in task.buffers if b.role in INPUT_ROLES}


def scalar_values(task: Task) -> dict[str, int | float | bool]:
    """The task's scalars as Python numbers of the right kind."""
    out: dict[str, int | float | bool] = {}
    for s in task.scalars:
        if s.dtype == "bool":
            out[s.name] = bool(s.value)
        elif is_float(s.dtype):
            out[s.name] = float(s.value)
        else:
            out[s.name] = int(s.value)
    return out
