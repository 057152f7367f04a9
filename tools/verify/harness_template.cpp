// Verification and timing harness, generated per task by tools/verify/harness.py.
// It loads a shared library (candidate, C reference or baseline; several, to time them against
// each other) with dlopen, reads the inputs from raw binary files, poisons outputs before every
// call, calls the entry, owns the timer, checks that inputs and guard zones are unchanged and
// writes the outputs back.
// Protocol on stdout (one record per line): INPUT_MODIFIED, OUT_OF_BOUNDS, RUN_DIFFERS, TIMES, DONE
// (with several libraries, RUN_DIFFERS and TIMES name the library's index).
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

enum Role { IN = 0, OUT = 1, INOUT = 2, SCRATCH = 3 };
enum Kind { F32 = 0, F64 = 1, F16 = 2, BF16 = 3, INT = 4, BOOL = 5 };
static const size_t GUARD = 64;
static const unsigned char GUARD_BYTE = 0xCD;

struct Buf {
  const char* name;
  size_t elems;
  size_t pad_elems;  // past its shape, where the original stores or the reference reads: allocated, never compared
  size_t elem_size;
  int role;
  int kind;
  int init_zero;
  unsigned char* base;  // guard | data | guard
  unsigned char* p;
  unsigned char *orig, *snap;  // initial values (inputs), the latest call's outputs
  size_t bytes() const { return elems * elem_size; }
  size_t allocated() const { return (elems + pad_elems) * elem_size; }
};

/*@BUFFERS@*/

static double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  float mag = exp ? ldexpf((float)(mant | 0x400), (int)exp - 25) : ldexpf((float)mant, -24);
  return sign ? -mag : mag;
}

static double value_at(const Buf& b, const unsigned char* data, size_t i) {
  switch (b.kind) {
    case F32: { float v; memcpy(&v, data + 4 * i, 4); return v; }
    case F64: { double v; memcpy(&v, data + 8 * i, 8); return v; }
    case F16: { uint16_t v; memcpy(&v, data + 2 * i, 2); return half_to_float(v); }
    case BF16: { uint16_t v; memcpy(&v, data + 2 * i, 2); uint32_t w = (uint32_t)v << 16; float f; memcpy(&f, &w, 4); return f; }
  }
  return 0;
}

// Elements of `got` that differ from `want`: floats within a loose tolerance (the candidate's
// own earlier run is the expectation: reordered reductions may move the last bits), NaN and
// Inf positions exact; integers and bools exact.
static size_t count_diff(const Buf& b, const unsigned char* want, const unsigned char* got, size_t* first) {
  if (memcmp(want, got, b.bytes()) == 0) return 0;
  size_t count = 0;
  for (size_t i = 0; i < b.elems; i++) {
    bool differ;
    if (b.kind == INT || b.kind == BOOL) {
      differ = memcmp(want + i * b.elem_size, got + i * b.elem_size, b.elem_size) != 0;
    } else {
      double w = value_at(b, want, i), g = value_at(b, got, i);
      if (isnan(w) || isnan(g)) differ = isnan(w) != isnan(g);
      else if (isinf(w) || isinf(g)) differ = w != g;
      else differ = fabs(g - w) > 2 * (ATOL + RTOL * fabs(w));
    }
    if (differ && count++ == 0) *first = i;
  }
  return count;
}

static unsigned char* alloc_copy(size_t bytes) { return (unsigned char*)malloc(bytes ? bytes : 1); }

static bool read_file(const char* path, unsigned char* out, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) return false;
  size_t got = bytes ? fread(out, 1, bytes, f) : 0;
  bool extra = fgetc(f) != EOF;
  fclose(f);
  return got == bytes && !extra;
}

static bool write_file(const char* path, const unsigned char* data, size_t bytes) {
  FILE* f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, bytes, f) == bytes;
  return fclose(f) == 0 && ok;
}

static void poison(Buf& b) {
  if (b.init_zero) { memset(b.p, 0, b.bytes()); return; }
  if (b.kind == INT || b.kind == BOOL) { memset(b.p, 0xA5, b.bytes()); return; }
  if (!b.elems) return;
  if (b.kind == F32) { uint32_t v = 0x7FC5A5A5u; memcpy(b.p, &v, 4); }
  else if (b.kind == F64) { uint64_t v = 0x7FF8A5A5A5A5A5A5ull; memcpy(b.p, &v, 8); }
  else if (b.kind == F16) { uint16_t v = 0x7E5A; memcpy(b.p, &v, 2); }
  else { uint16_t v = 0x7FC5; memcpy(b.p, &v, 2); }
  // replicate the first element by doubling copies
  for (size_t done = b.elem_size; done < b.bytes(); done *= 2)
    memcpy(b.p + done, b.p, done * 2 <= b.bytes() ? done : b.bytes() - done);
}

// An input's padding (elements its reference reads past its end) repeats its first elements, the
// same before every call, so that the reference and the candidate read the same values there.
static void fill_padding(Buf& b) {
  for (size_t done = b.bytes(); b.elems && done < b.allocated();) {
    size_t n = b.allocated() - done < b.bytes() ? b.allocated() - done : b.bytes();
    memcpy(b.p + done, b.p, n);
    done += n;
  }
}

static void prepare() {
  for (Buf& b : B) {
    if (b.role == IN || b.role == INOUT) { memcpy(b.p, b.orig, b.bytes()); fill_padding(b); }
    else poison(b);
  }
}

static void snapshot() {
  for (Buf& b : B)
    if (b.role == OUT || b.role == INOUT) memcpy(b.snap, b.p, b.bytes());
}

// After each call: inputs unchanged, guard zones intact. Returns false when something was reported.
static bool check_call(int run) {
  bool ok = true;
  for (Buf& b : B) {
    if (b.role == IN && memcmp(b.p, b.orig, b.bytes()) != 0) {
      size_t first = 0, count = 0;
      for (size_t i = 0; i < b.elems; i++)
        if (memcmp(b.p + i * b.elem_size, b.orig + i * b.elem_size, b.elem_size) != 0 && count++ == 0) first = i;
      printf("INPUT_MODIFIED %s %zu %zu %d\n", b.name, first, count, run);
      ok = false;
    }
    for (size_t i = 0; i < GUARD; i++) {
      bool before = b.base[i] != GUARD_BYTE, after = b.p[b.allocated() + i] != GUARD_BYTE;
      if (before || after) {
        printf("OUT_OF_BOUNDS %s %s %d\n", b.name, before ? "before" : "after", run);
        memset(b.base, GUARD_BYTE, GUARD);
        memset(b.p + b.allocated(), GUARD_BYTE, GUARD);
        ok = false;
        break;
      }
    }
  }
  return ok;
}

static int fail(int code, const char* what, const char* detail) {
  fprintf(stderr, "harness: %s%s\n", what, detail);
  return code;
}

// `time` mode with several libraries (LIB and OUTDIR are comma-separated lists): the calls
// alternate between them, in an order that rotates every round, so that a machine whose speed
// drifts (other tenants, frequency) slows them all alike; each library's times, first outputs and
// run-to-run differences are its own.
static const int MAX_LIBS = 8;

static int split_list(char* list, char** out) {
  int n = 0;
  for (char* item = strtok(list, ","); item && n < MAX_LIBS; item = strtok(nullptr, ",")) out[n++] = item;
  return n;
}

int main(int argc, char** argv) {
  if (argc < 6) return fail(2, "usage: harness check|time LIB[,LIB...] SYMBOL INDIR OUTDIR[,OUTDIR...] [BUDGET_S MAX_RUNS WARMUPS MIN_TIMES]", "");
  now_s();  // bind the clock before any candidate code is loaded
  const bool timing = strcmp(argv[1], "time") == 0;
  const char *symbol = argv[3], *indir = argv[4];
  char *libs[MAX_LIBS], *outdirs[MAX_LIBS];
  const int nlibs = split_list(argv[2], libs);
  if (nlibs < 1 || split_list(argv[5], outdirs) != nlibs) return fail(2, "one output directory per library", "");
  if (nlibs > 1 && !timing) return fail(2, "several libraries are only timed, not checked", "");
  char path[4096];
  double budget = argc > 6 ? atof(argv[6]) : 0.1;
  long max_runs = argc > 7 ? atol(argv[7]) : 20000;
  int warmups = argc > 8 ? atoi(argv[8]) : 2;
  long min_times = argc > 9 ? atol(argv[9]) : 3;  // timed calls per library, at least
  // Per library: its first call's and (several libraries) its latest call's outputs.
  unsigned char* first[MAX_LIBS][sizeof B / sizeof B[0]] = {};
  unsigned char* last[MAX_LIBS][sizeof B / sizeof B[0]] = {};
  for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) {
    Buf& b = B[i];
    size_t padded = (b.allocated() + 63) / 64 * 64;
    b.base = (unsigned char*)aligned_alloc(64, GUARD + padded + GUARD);
    if (!b.base) return fail(6, "out of memory for ", b.name);
    memset(b.base, GUARD_BYTE, GUARD + padded + GUARD);
    b.p = b.base + GUARD;
    if (b.role == IN || b.role == INOUT) {
      b.orig = alloc_copy(b.bytes());
      snprintf(path, sizeof path, "%s/%s.bin", indir, b.name);
      if (!b.orig || !read_file(path, b.orig, b.bytes())) return fail(5, "cannot read an input of the expected size: ", path);
    }
    if (b.role == OUT || b.role == INOUT) {
      b.snap = alloc_copy(b.bytes());
      for (int k = 0; k < nlibs; k++) {
        first[k][i] = alloc_copy(b.bytes());
        last[k][i] = nlibs > 1 ? alloc_copy(b.bytes()) : b.snap;
        if (!first[k][i] || !last[k][i]) return fail(6, "out of memory for ", b.name);
      }
      if (!b.snap) return fail(6, "out of memory for ", b.name);
    }
  }
  void* fns[MAX_LIBS];
  for (int k = 0; k < nlibs; k++) {
    void* handle = dlopen(libs[k], RTLD_NOW | RTLD_LOCAL);
    if (!handle) return fail(3, "dlopen: ", dlerror());
    fns[k] = dlsym(handle, symbol);
    if (!fns[k]) return fail(4, "entry not found (is it declared extern \"C\"?): ", symbol);
  }
  fflush(stdout);

  const long max_times = max_runs > 0 ? max_runs : 1;
  double* times[MAX_LIBS];
  long ntimes[MAX_LIBS] = {}, runs[MAX_LIBS] = {}, differing_runs[MAX_LIBS] = {};
  for (int k = 0; k < nlibs; k++) times[k] = (double*)malloc(sizeof(double) * max_times);
  double spent = 0, started = now_s();
  long calls = 0;
  for (long round = 0;; round++) {
    for (int j = 0; j < nlibs; j++) {
      const int k = (int)((round + j) % nlibs);
      prepare();
      double t0 = now_s();
      call(fns[k]);
      double t1 = now_s();
      snapshot();  // taken the moment the entry returns: work left running after it does not count
      check_call((int)calls++);
      for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) {
        Buf& b = B[i];
        if (b.role != OUT && b.role != INOUT) continue;
        if (nlibs > 1) memcpy(last[k][i], b.snap, b.bytes());
        if (runs[k] == 0) { memcpy(first[k][i], b.snap, b.bytes()); continue; }
        size_t at = 0, count = count_diff(b, first[k][i], b.snap, &at);
        if (count && differing_runs[k]++ < 3) {
          if (nlibs > 1) printf("RUN_DIFFERS %s %ld %zu %zu %d\n", b.name, runs[k], at, count, k);
          else printf("RUN_DIFFERS %s %ld %zu %zu\n", b.name, runs[k], at, count);
        }
      }
      runs[k]++;
      if (runs[k] > warmups && ntimes[k] < max_times) { times[k][ntimes[k]++] = t1 - t0; spent += t1 - t0; }
    }
    if (!timing && runs[0] == 2) break;  // a second call catches results cached across calls
    // The timed calls must add up to the budget; the wall clock (poisoning, checks between calls)
    // is capped too, so that very short calls do not spin here for long.
    long fewest = ntimes[0];
    for (int k = 1; k < nlibs; k++) fewest = ntimes[k] < fewest ? ntimes[k] : fewest;
    bool enough = fewest >= min_times && (spent >= budget || now_s() - started >= 4 * budget + 0.2);
    if (enough || runs[0] >= max_runs) break;
  }
  for (int k = 0; k < nlibs; k++) {
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) {
      Buf& b = B[i];
      if (b.role != OUT && b.role != INOUT) continue;
      snprintf(path, sizeof path, "%s/%s.bin", outdirs[k], b.name);
      if (!write_file(path, first[k][i], b.bytes())) return fail(5, "cannot write output ", path);
      snprintf(path, sizeof path, "%s/%s.last.bin", outdirs[k], b.name);
      if (timing && !write_file(path, last[k][i], b.bytes())) return fail(5, "cannot write output ", path);
    }
    if (ntimes[k]) {
      if (nlibs > 1) printf("TIMES %d", k);
      else printf("TIMES");
      for (long i = 0; i < ntimes[k]; i++) printf(" %.9g", times[k][i]);
      printf("\n");
    }
  }
  printf("DONE %ld\n", runs[0]);
  return 0;
}
