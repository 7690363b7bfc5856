/* Minimal test harness: every TEST is one case; a case fails if any CHECK in it fails.
   The last line of a run reads "N passed, N failed". */
#ifndef LUTHIER_TEST_HARNESS_H
#define LUTHIER_TEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_state {
    int cases_passed, cases_failed;
    int case_failures;   /* failed checks in the current case */
    int quick;           /* smaller sweeps (qemu, sanitizers) */
    int small_models;    /* only the reduced networks (qemu); implied by quick */
    uint64_t seed;
    const char *filter;  /* run only cases whose name contains this */
} test_state;

static test_state T;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            if (T.case_failures < 10) {                                                   \
                printf("    FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                \
                printf(__VA_ARGS__);                                                      \
                printf("\n");                                                             \
            }                                                                             \
            T.case_failures++;                                                            \
        }                                                                                 \
    } while (0)

typedef void (*test_fn)(void);

static void test_run(const char *name, test_fn fn) {
    if (T.filter && !strstr(name, T.filter)) return;
    T.case_failures = 0;
    fn();
    if (T.case_failures) {
        T.cases_failed++;
        printf("FAIL %s (%d failed checks)\n", name, T.case_failures);
    } else {
        T.cases_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}
#define RUN(fn) test_run(#fn, fn)

/* splitmix64: deterministic, seedable */
static uint64_t test_rng_state;
static uint64_t test_rand_u64(void) {
    uint64_t z = (test_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform integer in [lo, hi] */
static int test_rand_int(int lo, int hi) {
    return lo + (int)(test_rand_u64() % (uint64_t)(hi - lo + 1));
}
/* uniform float in [-1, 1) */
static float test_rand_float(void) {
    return (float)((double)(test_rand_u64() >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}
static void test_fill(float *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = test_rand_float();
}

/* A quiet NaN with a recognizable payload: what C holds where nothing may be written. */
static float test_sentinel(void) {
    uint32_t bits = 0x7fc0beefu;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static int test_is_sentinel(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits == 0x7fc0beefu;
}

/* A fused activation (luthier_activation, parameters p0 = clamp_min, p1 = clamp_max) from its
   definition, in double: the references' own code, not the library's. */
static double test_act(luthier_activation act, float p0, float p1, double x) {
    double v;
    switch (act) {
    case LUTHIER_ACTIVATION_RELU: return x < 0 ? 0 : x;
    case LUTHIER_ACTIVATION_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case LUTHIER_ACTIVATION_CLAMP: return x < p0 ? p0 : (x > p1 ? p1 : x);
    case LUTHIER_ACTIVATION_HARD_SWISH:
        v = x + 3.0;
        return x * (v != v ? v : v < 0 ? 0 : v > 6 ? 6 : v) / 6.0;
    case LUTHIER_ACTIVATION_HARD_SIGMOID:
        v = (double)p0 * x + (double)p1;
        return v != v ? v : v < 0 ? 0 : v > 1 ? 1 : v;
    case LUTHIER_ACTIVATION_SILU: return x / (1.0 + exp(-x));
    case LUTHIER_ACTIVATION_LEAKY_RELU: return x < 0 ? (double)p0 * x : x;
    case LUTHIER_ACTIVATION_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case LUTHIER_ACTIVATION_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case LUTHIER_ACTIVATION_ELU: return (double)p1 * (x > 0 ? x : (double)p0 * expm1(x));
    case LUTHIER_ACTIVATION_MISH: return x * tanh(x > 20 ? x : log1p(exp(x)));
    default: return x;
    }
}

/* A bound on test_act's slope: an error e before the activation is at most this times e after. */
static double test_act_slope(luthier_activation act, float p0, float p1) {
    const double a = fabs((double)p0), s = fabs((double)p1);
    switch (act) {
    case LUTHIER_ACTIVATION_HARD_SWISH: return 1.5;
    case LUTHIER_ACTIVATION_SILU: return 1.1;
    case LUTHIER_ACTIVATION_HARD_SIGMOID: return a;
    case LUTHIER_ACTIVATION_LEAKY_RELU: return a > 1 ? a : 1;
    case LUTHIER_ACTIVATION_GELU: case LUTHIER_ACTIVATION_GELU_TANH: return 1.2;
    case LUTHIER_ACTIVATION_MISH: return 1.2;
    case LUTHIER_ACTIVATION_ELU: return s * (a > 1 ? a : 1);
    default: return 1;
    }
}

static void *test_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* A copy of bytes (> 0) bytes that ends where an inaccessible page begins, so that a kernel
   reading past the end of the copy faults: ASan does not see reads into the padding malloc
   rounds a block up to, nor code that runs under qemu without it. Linux only (mmap). */
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#define TEST_HAVE_GUARDED 1
typedef struct test_guarded {
    unsigned char *map;
    size_t len;
} test_guarded;

static void *test_guarded_copy(test_guarded *g, const void *src, size_t bytes) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), data = (bytes + page - 1) / page * page;
    void *m = mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect((unsigned char *)m + data, page, PROT_NONE) != 0) {
        printf("cannot map a guarded buffer of %zu bytes\n", bytes);
        exit(2);
    }
    g->map = (unsigned char *)m;
    g->len = data + page;
    memcpy(g->map + data - bytes, src, bytes);
    return g->map + data - bytes;
}

static void test_guarded_free(test_guarded *g) {
    if (g->map) munmap(g->map, g->len);
    g->map = NULL;
}
#endif

/* A context of threads threads (0: all) on topology topo (NULL: detected) under policy. */
static luthier_context *ctx_make(int threads, const luthier_topology *topo, luthier_auto_policy policy) {
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = threads;
    cd.topology = topo;
    cd.auto_policy = policy;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return NULL;
    return ctx;
}

static luthier_context *ctx_threads(int threads) { return ctx_make(threads, NULL, LUTHIER_AUTO_DEFAULT); }

#endif
