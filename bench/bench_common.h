/* bench_common.h - helpers shared by the luthier-bench subcommands: monotonic clock, 64-byte
   aligned buffers, deterministic data, sample statistics and command-line parsing.

   Part of the single translation unit bench/luthier_bench.c: included after luthier.h (which
   defines _GNU_SOURCE under LUTHIER_IMPLEMENTATION, so clock_gettime and posix_memalign are
   visible under -std=c99). Everything here is static; no other file includes it.
*/
#ifndef LUTHIER_BENCH_COMMON_H
#define LUTHIER_BENCH_COMMON_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_UNUSED __attribute__((unused))
#define BENCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BENCH_UNUSED
#define BENCH_PRINTF(f, a)
#endif

/* Exit codes of the tool. */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAIL = 1, BENCH_EXIT_USAGE = 2 };

/* ---- clock ----------------------------------------------------------------------------------- */

static double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- buffers --------------------------------------------------------------------------------- */

/* 64-byte aligned array of count floats (count 0 allocates one); NULL on overflow or OOM. */
static float *bench_alloc_floats(size_t count) {
    void *p = NULL;
    if (count == 0) count = 1;
    if (count > SIZE_MAX / sizeof(float)) return NULL;
    if (posix_memalign(&p, 64, count * sizeof(float)) != 0) return NULL;
    return (float *)p;
}

/* ---- deterministic data ---------------------------------------------------------------------- */

/* splitmix64: a tiny generator with good statistics; same seed, same data on every machine. */
static uint64_t bench_rand_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform values in [-1, 1), multiples of 2^-23 (exact in fp32). */
static void bench_fill_uniform(float *x, size_t n, uint64_t seed) {
    uint64_t s = seed;
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)((int64_t)(bench_rand_u64(&s) >> 40) - (1ll << 23)) * 0x1p-23f;
}

static void bench_fill_value(float *x, size_t n, float v) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = v;
}

/* ---- statistics ------------------------------------------------------------------------------ */

static int bench_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bench_stats {
    double min, median; /* seconds */
    long reps;          /* timed repetitions (after the warm-up) */
} bench_stats;

/* Sorts t[0..n) in place and returns min and median. */
static bench_stats bench_summarize(double *t, long n) {
    bench_stats s;
    memset(&s, 0, sizeof s);
    if (!t || n <= 0) return s;
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    s.min = t[0];
    s.median = (n % 2) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.reps = n;
    return s;
}

/* ---- timing: repetitions in interleaved rounds -------------------------------------------------

   Several contestants (luthier kernels, reference libraries) are timed on the same case. On a
   noisy machine (a busy sibling hyperthread, a shared host) the speed drifts over seconds, so
   instead of timing A fully and then B, the repetitions of each contestant are split into
   `rounds` rounds run in turn (A B C, C B A, A B C, ...): a slow period then hits all of them
   alike and their ratio stays put. Each contestant keeps its own samples. */

typedef int (*bench_fn)(void *arg); /* one call of the timed operation; nonzero = failed */

typedef struct bench_policy {
    long reps;       /* > 0: exactly this many timed repetitions in total */
    double min_time; /* else: repeat until this many seconds in total */
    int rounds;      /* repetitions are split into this many rounds (>= 1) */
} bench_policy;

typedef struct bench_sampler {
    double *t;    /* seconds per repetition */
    long n, cap;
    double total; /* seconds timed so far */
    double last;  /* duration of the latest call (the untimed checking call counts) */
} bench_sampler;

#define BENCH_MAX_REPS 1000000L
#define BENCH_SHORT_CALL 0.005 /* s: calls shorter than this get a warm-up call per round */

static void bench_sampler_free(bench_sampler *s) {
    free(s->t);
    memset(s, 0, sizeof *s);
}

/* Whether the contestant is done after `round` (0-based) of pol->rounds. In auto mode the last
   round also requires 3 repetitions, unless they would take more than a second in total. */
static int bench_round_done(const bench_policy *pol, int round, const bench_sampler *s) {
    const int rounds = pol->rounds > 0 ? pol->rounds : 1;
    if (s->n >= BENCH_MAX_REPS) return 1;
    if (pol->reps > 0) return s->n >= (long)((long long)pol->reps * (round + 1) / rounds);
    if (s->total < pol->min_time * (round + 1) / rounds) return 0;
    return round < rounds - 1 || s->n >= 3 || s->total >= 1.0;
}

/* Appends one sample; 0, or -1 when out of memory. */
static int bench_sampler_push(bench_sampler *s, double dt) {
    if (s->n == s->cap) {
        const long cap = s->cap ? 2 * s->cap : 64;
        double *nt = (double *)realloc(s->t, (size_t)cap * sizeof *nt);
        if (!nt) return -1;
        s->t = nt;
        s->cap = cap;
    }
    s->t[s->n++] = dt;
    s->total += dt;
    s->last = dt;
    return 0;
}

/* Runs the contestant's share of round `round`. A short call gets one untimed call first: the
   other contestants of the round have just evicted its data from the caches.
   Returns 0, fn's nonzero result, or -100 when out of memory. */
static int bench_run_round(bench_fn fn, void *arg, const bench_policy *pol, int round,
                           bench_sampler *s) {
    int rc;
    if (bench_round_done(pol, round, s)) return 0;
    if (s->last < BENCH_SHORT_CALL && (rc = fn(arg)) != 0) return rc;
    while (!bench_round_done(pol, round, s)) {
        double t0, dt;
        t0 = bench_now();
        rc = fn(arg);
        dt = bench_now() - t0;
        if (rc != 0) return rc;
        if (bench_sampler_push(s, dt)) return -100;
    }
    return 0;
}

/* Geometric mean accumulator (ignores non-positive values). */
typedef struct bench_geomean {
    double log_sum;
    int count;
} bench_geomean;

static void bench_geomean_add(bench_geomean *g, double v) {
    if (v > 0.0 && v == v) {
        g->log_sum += log(v);
        g->count++;
    }
}

static double bench_geomean_get(const bench_geomean *g) {
    return g->count ? exp(g->log_sum / g->count) : 0.0;
}

/* ---- command line ---------------------------------------------------------------------------- */

static const char *bench_prog = "luthier-bench";

BENCH_PRINTF(2, 3) static void bench_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s%s%s: error: ", bench_prog, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", bench_prog, cmd ? " " : "", cmd ? cmd : "");
}

static int bench_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* Matches option `name` at argv[*i] as "--name VALUE" or "--name=VALUE".
   Returns 0: not this option; 1: matched, *value set (and *i advanced past a separate value);
   -1: matched but the value is missing (the error is printed). */
static int bench_opt_value(int argc, char **argv, int *i, const char *cmd, const char *name,
                           const char **value) {
    const char *arg = argv[*i];
    const size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0') return 0;
    if (*i + 1 >= argc) {
        bench_usage_error(cmd, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* Matches a flag (no value). "--flag=..." is an error (returns -1). */
static int bench_opt_flag(const char *arg, const char *cmd, const char *name) {
    const size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '\0') return 1;
    if (arg[len] == '=') {
        bench_usage_error(cmd, "option %s takes no value", name);
        return -1;
    }
    return 0;
}

/* Parses a whole decimal integer in [lo, hi]. Returns 0 on success. */
static int bench_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    long long v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) return -1;
    *out = (int64_t)v;
    return 0;
}

/* Parses a whole finite number in [lo, hi]. Returns 0 on success. */
static int bench_parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    double v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

#endif /* LUTHIER_BENCH_COMMON_H */
