/* luthier.h - v0.1.0 - fast deep-learning inference on (asymmetric) multicore CPUs.
   MIT license: see the end of this file and LICENSE.

   DO THIS in exactly one C or C++ file:

       #define LUTHIER_IMPLEMENTATION
       #include "luthier.h"

   Every other file includes "luthier.h" without the define. The companion headers
   (luthier_gemm.h, luthier_kernels_x86.h, luthier_kernels_neon.h) must sit next to it; they are
   pulled in by luthier.h and must not be included on their own. Link with -lpthread -lm.

   QUICK START (C = A*B + bias, ReLU; A is M x K, B is K x N, all row-major)

       luthier_context *ctx;
       luthier_context_desc cd = {0};                 // all-zero = defaults
       if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
       luthier_sgemm_desc g = {0};
       g.m = M; g.n = N; g.k = K;                      // lda/ldb/ldc 0 = tightly packed
       g.bias = bias; g.activation = LUTHIER_ACTIVATION_RELU;
       luthier_status s = luthier_sgemm(ctx, &g, A, B, C);
       if (s) printf("%s: %s\n", luthier_status_string(s), luthier_context_error(ctx));
       // constant weights: pack B once, run many times
       luthier_packed_b *pb;
       luthier_sgemm_pack_b(ctx, &g, B, &pb);
       luthier_sgemm_packed(ctx, &g, A, pb, C);
       luthier_packed_b_destroy(pb);
       luthier_context_destroy(ctx);

   TABLE OF CONTENTS (grep for the tags)
       >>version >>linkage >>types >>api-context >>api-kernels >>api-gemm
       IMPLEMENTATION: >>impl-config >>impl-platform >>impl-context >>impl-gemm-api
       luthier_gemm.h:         >>contract >>registry >>pack >>driver >>ukernel-scalar >>select
       luthier_kernels_x86.h:  >>list, one section per kernel family
       luthier_kernels_neon.h: >>list, one section per kernel

   CONFIGURATION (macros; "everywhere" = define identically in every file that includes luthier.h)
       LUTHIER_IMPLEMENTATION  impl file only  compile the implementation here
       LUTHIER_STATIC          everywhere      make every public function static
       LUTHIER_NO_X86_KERNELS  impl file only  leave the AVX2/AVX-512 kernels out (scalar only)
       LUTHIER_NO_NEON_KERNELS impl file only  leave the NEON kernels out (scalar only)
       LUTHIER_MALLOC, LUTHIER_FREE   impl file only, both or none:
                               void *LUTHIER_MALLOC(size_t bytes) / void LUTHIER_FREE(void *p);
                               luthier aligns its own buffers on top of them
       Run-time settings live in luthier_context_desc (all-zero = defaults).
       Environment: LUTHIER_KERNEL=name picks the default microkernel of new contexts.

   ERRORS
       Every fallible call returns luthier_status (0 = LUTHIER_STATUS_OK).
       luthier_status_string(s) names the code; luthier_context_error(ctx) says what exactly was
       wrong in the last failed call on that context. Bad input never aborts and never crashes.

   THREADING
       A context may be used by one thread at a time. Different contexts are independent.
       Packed weights (luthier_packed_b) are read-only after packing and may be shared by
       contexts used from different threads. (Multi-threaded execution: next version.)

   NUMERICS
       fp32 throughout; results differ from a naive triple loop only by summation order
       (each output is a sum of K products accumulated in blocks of the kernel's K order).

   WHAT IT DOES NOT DO (yet)
       No double precision, no complex, no transposed A, no GPU. Threads, convolution,
       graphs, tuning: following versions.

   DESIGN NOTES
       docs/DESIGN.md holds the architecture and the decisions with their measurements.
*/
#if defined(LUTHIER_IMPLEMENTATION) && !defined(_GNU_SOURCE) && defined(__linux__)
/* The implementation uses POSIX and Linux calls (sysconf, getauxval, later sched_setaffinity):
   make them visible even under -std=c99. Include luthier.h first in the implementation file. */
#define _GNU_SOURCE 1
#endif
#ifndef LUTHIER_H_INCLUDED
#define LUTHIER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/* >>version */
#define LUTHIER_VERSION_MAJOR 0
#define LUTHIER_VERSION_MINOR 1
#define LUTHIER_VERSION_PATCH 0

/* >>linkage */
#ifdef LUTHIER_STATIC
#define LUTHIER_API static
#else
#define LUTHIER_API extern
#endif
#define LUTHIER_PRIVATE static

#ifdef __cplusplus
extern "C" {
#endif

/* >>types */

/* One list makes the enum and luthier_status_string(). */
#define LUTHIER_STATUS_LIST(X)                                                         \
    X(OK, "ok")                                                                        \
    X(INVALID_ARGUMENT, "invalid argument")                                            \
    X(OUT_OF_MEMORY, "out of memory")                                                  \
    X(OVERFLOW, "size overflow")                                                       \
    X(UNSUPPORTED, "not supported by this CPU or build")                               \
    X(NOT_FOUND, "not found")                                                          \
    X(INCOMPATIBLE, "incompatible arguments")

typedef enum luthier_status {
#define LUTHIER__X(name, text) LUTHIER_STATUS_##name,
    LUTHIER_STATUS_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER_STATUS_COUNT
} luthier_status;

/* Fused output operation applied after bias. */
typedef enum luthier_activation {
    LUTHIER_ACTIVATION_NONE = 0,
    LUTHIER_ACTIVATION_RELU,  /* max(x, 0) */
    LUTHIER_ACTIVATION_RELU6, /* min(max(x, 0), 6) */
    LUTHIER_ACTIVATION_CLAMP, /* min(max(x, clamp_min), clamp_max) */
    LUTHIER_ACTIVATION_COUNT
} luthier_activation;

/* CPU features, as returned by luthier_cpu_features() and required by kernels. */
enum {
    LUTHIER_CPU_AVX2_FMA = 1u << 0, /* x86: AVX2 + FMA3 (and OS support for YMM state) */
    LUTHIER_CPU_AVX512F = 1u << 1,  /* x86: AVX-512F (and OS support for ZMM state) */
    LUTHIER_CPU_NEON = 1u << 8,     /* AArch64: Advanced SIMD (always present) */
    LUTHIER_CPU_DOTPROD = 1u << 9,  /* AArch64: Armv8.2 SDOT/UDOT */
    LUTHIER_CPU_FP16 = 1u << 10     /* AArch64: Armv8.2 half-precision arithmetic */
};

typedef struct luthier_context luthier_context;
typedef struct luthier_packed_b luthier_packed_b;

/* >>api-context */

typedef struct luthier_context_desc {
    /* Default microkernel for this context: a full registry name
       ("luthier_sgemm_ukernel_6x16__neonfma_hybrid") or its short form ("6x16__neonfma_hybrid").
       NULL or "" = the best kernel for this CPU (or $LUTHIER_KERNEL when set). */
    const char *kernel;
    /* CPU features to ignore (LUTHIER_CPU_* bits): forces the dispatch down to a lower ISA,
       e.g. LUTHIER_CPU_AVX512F to run the AVX2 kernels on an AVX-512 machine. 0 = none. */
    unsigned disabled_cpu_features;
    /* Cache blocking (elements). 0 = derived from the machine's cache sizes. */
    size_t kc, mc, nc;
} luthier_context_desc;

LUTHIER_API const char *luthier_status_string(luthier_status status);
LUTHIER_API luthier_status luthier_context_create(const luthier_context_desc *desc,
                                                  luthier_context **out);
LUTHIER_API void luthier_context_destroy(luthier_context *ctx); /* NULL is a no-op */
/* What was wrong in the last failed call on ctx ("" when none). Valid until the next call. */
LUTHIER_API const char *luthier_context_error(const luthier_context *ctx);
/* LUTHIER_CPU_* bits detected on this CPU (not masked by any context). */
LUTHIER_API unsigned luthier_cpu_features(void);

/* Cache sizes in bytes as detected (sysfs, then sysconf, then conservative defaults). */
typedef struct luthier_cache_info {
    size_t l1d, l2, l3;
} luthier_cache_info;
LUTHIER_API luthier_cache_info luthier_cache_sizes(void);

/* >>api-kernels: the microkernel registry, i.e. the values of the tuner's "kernel" knob. */

typedef enum luthier_kernel_kind {
    LUTHIER_KERNEL_INTERLEAVED = 0, /* reads a packed A panel (MR rows interleaved per k) */
    LUTHIER_KERNEL_HYBRID           /* reads A rows in place through row pointers */
} luthier_kernel_kind;

typedef struct luthier_kernel_info {
    const char *name;   /* luthier_sgemm_ukernel_<MR>x<NR>__<isa>[_<variant>] */
    const char *isa;    /* "scalar", "avx2", "avx512", "neon" */
    int mr, nr;         /* tile of C computed per call */
    int k_unroll;       /* steps of k per main-loop iteration */
    luthier_kernel_kind kind;
    unsigned required_cpu_features; /* LUTHIER_CPU_* bits */
    int available;      /* nonzero if this CPU can run it */
} luthier_kernel_info;

LUTHIER_API int luthier_kernel_count(void);
LUTHIER_API luthier_status luthier_kernel_get(int index, luthier_kernel_info *out);
/* Index of a kernel by full or short name; LUTHIER_STATUS_NOT_FOUND if there is none. */
LUTHIER_API luthier_status luthier_kernel_find(const char *name, int *index);
/* The kernel ctx uses when a call names none. */
LUTHIER_API const char *luthier_context_kernel(const luthier_context *ctx);

/* >>api-gemm: C = A*B (+C) (+bias) then activation. Row-major with leading dimensions. */

typedef struct luthier_sgemm_desc {
    int64_t m, n, k;        /* C is m x n, A is m x k, B is k x n (or n x k if trans_b) */
    int64_t lda, ldb, ldc;  /* row strides in elements; 0 = tight (k, n or k, n) */
    int trans_b;            /* nonzero: B is stored n x k (row j = the k weights of output j) */
    const float *bias;      /* NULL or n values added to every row of C */
    luthier_activation activation;
    float clamp_min, clamp_max; /* for LUTHIER_ACTIVATION_CLAMP */
    int accumulate;         /* nonzero: C = C + A*B (+bias), e.g. a fused residual add */
    const char *kernel;     /* NULL = the context's kernel */
} luthier_sgemm_desc;

/* C = act(A*B (+C) + bias). m == 0 or n == 0 is a no-op; k == 0 gives C = act((C) + bias). */
LUTHIER_API luthier_status luthier_sgemm(luthier_context *ctx, const luthier_sgemm_desc *desc,
                                         const float *a, const float *b, float *c);

/* Pack B (desc->k, desc->n, desc->ldb, desc->trans_b, desc->kernel) once for repeated use.
   The packed layout depends on the kernel's NR: any kernel with the same NR can consume it. */
LUTHIER_API luthier_status luthier_sgemm_pack_b(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *b,
                                                luthier_packed_b **out);
/* Like luthier_sgemm with B pre-packed. desc->n and desc->k must match the packed B;
   desc->kernel, when set, must have the packed NR (NULL = the kernel B was packed for). */
LUTHIER_API luthier_status luthier_sgemm_packed(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *a,
                                                const luthier_packed_b *b, float *c);
LUTHIER_API void luthier_packed_b_destroy(luthier_packed_b *b); /* NULL is a no-op */
/* Bytes held by a packed B (for memory reports). */
LUTHIER_API size_t luthier_packed_b_bytes(const luthier_packed_b *b);

#ifdef __cplusplus
}
#endif

#include "luthier_gemm.h" /* the microkernel contract (declarations) */

#endif /* LUTHIER_H_INCLUDED */

/* ============================================================================================
   IMPLEMENTATION
   ============================================================================================ */
#if (defined(LUTHIER_IMPLEMENTATION) || defined(__INTELLISENSE__)) && !defined(LUTHIER__IMPL_DONE)
#define LUTHIER__IMPL_DONE

/* >>impl-config */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(LUTHIER_MALLOC) != defined(LUTHIER_FREE)
#error "define both LUTHIER_MALLOC and LUTHIER_FREE, or neither"
#endif
#ifndef LUTHIER_MALLOC
#define LUTHIER_MALLOC(sz) malloc(sz)
#define LUTHIER_FREE(p) free(p)
#endif

#if defined(__x86_64__) || defined(_M_X64)
#define LUTHIER__X86 1
#else
#define LUTHIER__X86 0
#endif
#if defined(__aarch64__)
#define LUTHIER__ARM64 1
#else
#define LUTHIER__ARM64 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LUTHIER__INLINE static inline __attribute__((always_inline))
#define LUTHIER__NOINLINE __attribute__((noinline))
#define LUTHIER__RESTRICT __restrict__
#define LUTHIER__UNUSED __attribute__((unused))
#else
#define LUTHIER__INLINE static inline
#define LUTHIER__NOINLINE
#define LUTHIER__RESTRICT
#define LUTHIER__UNUSED
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-platform */

#define LUTHIER__ALIGN 64

/* Aligned allocation on top of LUTHIER_MALLOC: the byte before the block records the offset. */
LUTHIER_PRIVATE void *luthier__alloc(size_t bytes) {
    unsigned char *raw, *p;
    if (bytes > SIZE_MAX - LUTHIER__ALIGN) return NULL;
    raw = (unsigned char *)LUTHIER_MALLOC(bytes + LUTHIER__ALIGN);
    if (!raw) return NULL;
    p = raw + (LUTHIER__ALIGN - ((uintptr_t)raw % LUTHIER__ALIGN));
    p[-1] = (unsigned char)(p - raw);
    return p;
}
LUTHIER_PRIVATE void luthier__free(void *ptr) {
    unsigned char *p = (unsigned char *)ptr;
    if (p) {
        const size_t offset = p[-1];
        LUTHIER_FREE(p - offset);
    }
}

#if LUTHIER__X86
#if defined(__GNUC__) || defined(__clang__)
#include <cpuid.h>
#endif
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) {
    unsigned a, b, c, d, f = 0;
    unsigned long long xcr0;
    unsigned xlo, xhi;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 12))) return 0; /* osxsave avx fma */
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    xcr0 = ((unsigned long long)xhi << 32) | xlo;
    if ((xcr0 & 6) != 6) return 0; /* XMM + YMM state */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & (1u << 5)) f |= LUTHIER_CPU_AVX2_FMA;
    if ((b & (1u << 16)) && (xcr0 & 0xe6) == 0xe6) f |= LUTHIER_CPU_AVX512F; /* opmask+ZMM */
    return f;
}
#elif LUTHIER__ARM64 && defined(__linux__)
#include <sys/auxv.h>
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) {
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned f = LUTHIER_CPU_NEON;
    if (hw & (1ul << 20)) f |= LUTHIER_CPU_DOTPROD; /* HWCAP_ASIMDDP */
    if (hw & (1ul << 10)) f |= LUTHIER_CPU_FP16;    /* HWCAP_ASIMDHP */
    return f;
}
#elif LUTHIER__ARM64
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) { return LUTHIER_CPU_NEON; }
#else
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) { return 0; }
#endif

LUTHIER_API unsigned luthier_cpu_features(void) {
    static volatile int done;
    static volatile unsigned cached;
    if (!done) { /* racing threads compute the same value: benign */
        cached = luthier__detect_cpu_features();
        done = 1;
    }
    return cached;
}

/* Reads a small text file into buf; returns the length or -1. */
LUTHIER_PRIVATE long luthier__read_small_file(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return (long)n;
}

/* "48K", "2048K", "1M", "32768" -> bytes; 0 if unparsable. */
LUTHIER_PRIVATE size_t luthier__parse_size(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return (size_t)v;
}

LUTHIER_API luthier_cache_info luthier_cache_sizes(void) {
    luthier_cache_info ci;
    int i;
    memset(&ci, 0, sizeof ci);
    for (i = 0; i < 8; i++) {
        char path[128], level[16], type[32], size[32];
        size_t bytes;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (luthier__read_small_file(path, level, sizeof level) <= 0) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (luthier__read_small_file(path, type, sizeof type) <= 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (luthier__read_small_file(path, size, sizeof size) <= 0) continue;
        if (strncmp(type, "Instruction", 11) == 0) continue;
        bytes = luthier__parse_size(size);
        if (level[0] == '1') ci.l1d = bytes;
        else if (level[0] == '2') ci.l2 = bytes;
        else if (level[0] == '3') ci.l3 = bytes;
    }
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    if (!ci.l1d) { long v = sysconf(_SC_LEVEL1_DCACHE_SIZE); if (v > 0) ci.l1d = (size_t)v; }
    if (!ci.l2) { long v = sysconf(_SC_LEVEL2_CACHE_SIZE); if (v > 0) ci.l2 = (size_t)v; }
    if (!ci.l3) { long v = sysconf(_SC_LEVEL3_CACHE_SIZE); if (v > 0) ci.l3 = (size_t)v; }
#endif
    /* Conservative defaults: Cortex-A53/A72 class. Absurd values are clamped. */
    if (ci.l1d < (8u << 10) || ci.l1d > (4u << 20)) ci.l1d = 32u << 10;
    if (ci.l2 < (64u << 10) || ci.l2 > (256u << 20)) ci.l2 = 512u << 10;
    return ci;
}

#ifdef __cplusplus
}
#endif

/* The GEMM engine and its kernels. */
#ifndef LUTHIER_GEMM_IMPLEMENTATION
#define LUTHIER_GEMM_IMPLEMENTATION
#endif
#include "luthier_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-context */

struct luthier_context {
    unsigned cpu_features;      /* detected & ~disabled */
    int kernel;                 /* registry index of the default kernel */
    luthier__gemm_blocking blocking_override; /* 0 fields = from cache sizes */
    luthier_cache_info caches;
    void *workspace;            /* grows on demand; reused across calls */
    size_t workspace_bytes;
    char error[256];
};

LUTHIER_API const char *luthier_status_string(luthier_status status) {
    static const char *const names[] = {
#define LUTHIER__X(name, text) text,
        LUTHIER_STATUS_LIST(LUTHIER__X)
#undef LUTHIER__X
    };
    if ((int)status < 0 || (int)status >= (int)LUTHIER_STATUS_COUNT) return "unknown status";
    return names[status];
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
LUTHIER_PRIVATE luthier_status luthier__fail(luthier_context *ctx, luthier_status s,
                                             const char *fmt, ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
    }
    return s;
}

LUTHIER_API const char *luthier_context_error(const luthier_context *ctx) {
    return ctx ? ctx->error : "no context";
}

LUTHIER_PRIVATE luthier_status luthier__resolve_kernel(luthier_context *ctx, const char *name,
                                                       int *index) {
    int i;
    if (luthier_kernel_find(name, &i) != LUTHIER_STATUS_OK)
        return luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND,
                             "no microkernel named '%s' (luthier-bench kernels lists them)", name);
    if ((luthier__ukernels[i].required_cpu_features & ctx->cpu_features) !=
        luthier__ukernels[i].required_cpu_features)
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                             "microkernel '%s' needs CPU features this CPU (or context) lacks",
                             luthier__ukernels[i].name);
    *index = i;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_context_create(const luthier_context_desc *desc,
                                                  luthier_context **out) {
    luthier_context *ctx;
    luthier_context_desc d;
    const char *kname;
    luthier_status s;
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    ctx = (luthier_context *)luthier__alloc(sizeof *ctx);
    if (!ctx) return LUTHIER_STATUS_OUT_OF_MEMORY;
    memset(ctx, 0, sizeof *ctx);
    ctx->cpu_features = luthier_cpu_features() & ~d.disabled_cpu_features;
    ctx->caches = luthier_cache_sizes();
    ctx->blocking_override.kc = d.kc;
    ctx->blocking_override.mc = d.mc;
    ctx->blocking_override.nc = d.nc;
    kname = d.kernel;
    if (!kname || !*kname) kname = getenv("LUTHIER_KERNEL");
    if (kname && *kname) {
        s = luthier__resolve_kernel(ctx, kname, &ctx->kernel);
        if (s != LUTHIER_STATUS_OK) {
            luthier__free(ctx);
            return s;
        }
    } else {
        ctx->kernel = luthier__select_default_kernel(ctx->cpu_features);
    }
    *out = ctx;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_context_destroy(luthier_context *ctx) {
    if (!ctx) return;
    luthier__free(ctx->workspace);
    luthier__free(ctx);
}

LUTHIER_API const char *luthier_context_kernel(const luthier_context *ctx) {
    return ctx ? luthier__ukernels[ctx->kernel].name : "";
}

LUTHIER_PRIVATE void *luthier__context_workspace(luthier_context *ctx, size_t bytes) {
    if (bytes > ctx->workspace_bytes) {
        void *p = luthier__alloc(bytes);
        if (!p) return NULL;
        luthier__free(ctx->workspace);
        ctx->workspace = p;
        ctx->workspace_bytes = bytes;
    }
    return ctx->workspace;
}

/* >>impl-gemm-api */

struct luthier_packed_b {
    luthier__packed_b_layout layout;
    int kernel;  /* registry index it was packed for */
    float *data; /* layout.bytes */
};

LUTHIER_PRIVATE luthier_status luthier__check_dims(luthier_context *ctx,
                                                   const luthier_sgemm_desc *d, int need_m) {
    if (d->k < 0 || d->n < 0 || (need_m && d->m < 0))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "negative size: m=%lld n=%lld k=%lld", (long long)d->m,
                             (long long)d->n, (long long)d->k);
    if (d->k > INT32_MAX || d->n > INT32_MAX || (need_m && d->m > INT32_MAX))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                             "size above 2^31-1: m=%lld n=%lld k=%lld", (long long)d->m,
                             (long long)d->n, (long long)d->k);
    if ((unsigned)d->activation >= (unsigned)LUTHIER_ACTIVATION_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unknown activation %d",
                             (int)d->activation);
    if (d->activation == LUTHIER_ACTIVATION_CLAMP && !(d->clamp_min <= d->clamp_max))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "clamp_min (%g) must be <= clamp_max (%g) and neither NaN",
                             (double)d->clamp_min, (double)d->clamp_max);
    return LUTHIER_STATUS_OK;
}

/* Checks that a rows x cols matrix with row stride ld is addressable: ld >= cols and the last
   element's offset (rows-1)*ld + cols fits in size_t bytes. */
LUTHIER_PRIVATE luthier_status luthier__check_matrix(luthier_context *ctx, const char *what,
                                                     int64_t rows, int64_t cols, int64_t ld) {
    uint64_t last;
    if (ld < cols || ld < 1)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "leading dimension of %s is %lld, must be >= %lld", what,
                             (long long)ld, (long long)(cols > 1 ? cols : 1));
    if (rows == 0 || cols == 0) return LUTHIER_STATUS_OK;
    if ((uint64_t)(rows - 1) > (UINT64_MAX / 4 - (uint64_t)cols) / (uint64_t)ld)
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                             "%s (%lld x %lld, ld %lld) overflows the address space", what,
                             (long long)rows, (long long)cols, (long long)ld);
    last = (uint64_t)(rows - 1) * (uint64_t)ld + (uint64_t)cols;
    if (last > (uint64_t)(SIZE_MAX / sizeof(float)) || last > (uint64_t)PTRDIFF_MAX / 4)
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                             "%s (%lld x %lld, ld %lld) overflows the address space", what,
                             (long long)rows, (long long)cols, (long long)ld);
    return LUTHIER_STATUS_OK;
}

/* Validates desc for a run; fills the defaulted leading dimensions and the kernel index. */
LUTHIER_PRIVATE luthier_status luthier__prepare(luthier_context *ctx, const luthier_sgemm_desc *in,
                                                luthier_sgemm_desc *d, int *kernel, int need_m,
                                                int need_b) {
    luthier_status s;
    *d = *in;
    if ((s = luthier__check_dims(ctx, d, need_m)) != LUTHIER_STATUS_OK) return s;
    if (need_m) {
        if (!d->lda) d->lda = d->k > 0 ? d->k : 1;
        if (!d->ldc) d->ldc = d->n > 0 ? d->n : 1;
        if ((s = luthier__check_matrix(ctx, "A", d->m, d->k, d->lda)) != LUTHIER_STATUS_OK) return s;
        if ((s = luthier__check_matrix(ctx, "C", d->m, d->n, d->ldc)) != LUTHIER_STATUS_OK) return s;
    }
    if (need_b) {
        int64_t rows = d->trans_b ? d->n : d->k, cols = d->trans_b ? d->k : d->n;
        if (!d->ldb) d->ldb = cols > 0 ? cols : 1;
        if ((s = luthier__check_matrix(ctx, "B", rows, cols, d->ldb)) != LUTHIER_STATUS_OK) return s;
    }
    if (d->kernel && *d->kernel) return luthier__resolve_kernel(ctx, d->kernel, kernel);
    *kernel = ctx->kernel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE void luthier__fill_epilogue(const luthier_sgemm_desc *d, luthier__gemm_args *g) {
    g->bias = d->bias;
    g->accumulate = d->accumulate != 0;
    g->clamp = 1;
    switch (d->activation) {
    case LUTHIER_ACTIVATION_RELU: g->min = 0.0f; g->max = INFINITY; break;
    case LUTHIER_ACTIVATION_RELU6: g->min = 0.0f; g->max = 6.0f; break;
    case LUTHIER_ACTIVATION_CLAMP: g->min = d->clamp_min; g->max = d->clamp_max; break;
    default: g->clamp = 0; g->min = -INFINITY; g->max = INFINITY; break;
    }
}

LUTHIER_PRIVATE luthier_status luthier__run(luthier_context *ctx, const luthier_sgemm_desc *d,
                                            int kernel, const float *a,
                                            const luthier__packed_b_layout *bl, const float *pb,
                                            float *c) {
    luthier__gemm_args g;
    luthier__gemm_blocking blk;
    const luthier__ukernel_entry *uk = &luthier__ukernels[kernel];
    size_t ws;
    void *w;
    memset(&g, 0, sizeof g);
    g.m = (size_t)d->m; g.n = (size_t)d->n; g.k = (size_t)d->k;
    g.a = a; g.lda = (size_t)d->lda;
    g.b = pb; g.b_layout = bl;
    g.c = c; g.ldc = (size_t)d->ldc;
    luthier__fill_epilogue(d, &g);
    blk = luthier__gemm_blocking_for(uk, &ctx->caches, &ctx->blocking_override, g.m, g.n, g.k);
    ws = luthier__gemm_workspace_bytes(uk, &blk);
    w = ws ? luthier__context_workspace(ctx, ws) : NULL;
    if (ws && !w)
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes of workspace", ws);
    luthier__gemm_compute(uk, &blk, &g, 0, luthier__div_up(g.m, (size_t)uk->mr), w);
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_sgemm_pack_b(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *b,
                                                luthier_packed_b **out) {
    luthier_sgemm_desc d;
    luthier_packed_b *pb;
    luthier_status s;
    int kernel;
    if (out) *out = NULL;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and out must not be NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &kernel, 0, 1)) != LUTHIER_STATUS_OK) return s;
    if (!b && d.k > 0 && d.n > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    pb = (luthier_packed_b *)luthier__alloc(sizeof *pb);
    if (!pb) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate a packed B");
    memset(pb, 0, sizeof *pb);
    pb->kernel = kernel;
    if (!luthier__packed_b_layout_init(&pb->layout, (size_t)luthier__ukernels[kernel].nr,
                                       (size_t)d.k, (size_t)d.n)) {
        luthier__free(pb);
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "packed B of %lld x %lld overflows",
                             (long long)d.k, (long long)d.n);
    }
    pb->data = (float *)luthier__alloc(pb->layout.bytes ? pb->layout.bytes : 1);
    if (!pb->data) {
        const size_t bytes = pb->layout.bytes;
        luthier__free(pb);
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes for packed B", bytes);
    }
    luthier__pack_b(&pb->layout, b, (size_t)d.ldb, d.trans_b != 0, pb->data, 0, pb->layout.panels);
    *out = pb;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_packed_b_destroy(luthier_packed_b *b) {
    if (!b) return;
    luthier__free(b->data);
    luthier__free(b);
}

LUTHIER_API size_t luthier_packed_b_bytes(const luthier_packed_b *b) {
    return b ? b->layout.bytes + sizeof *b : 0;
}

/* Shared argument checks of the two run entry points. */
LUTHIER_PRIVATE luthier_status luthier__check_run(luthier_context *ctx, const luthier_sgemm_desc *d,
                                                  const float *a, const float *c) {
    if (d->m == 0 || d->n == 0) return LUTHIER_STATUS_OK;
    if (!c) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "C is NULL");
    if (!a && d->k > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "A is NULL");
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_sgemm_packed(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *a,
                                                const luthier_packed_b *b, float *c) {
    luthier_sgemm_desc d;
    luthier_status s;
    int kernel;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !b) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and packed B must not be NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &kernel, 1, 0)) != LUTHIER_STATUS_OK) return s;
    if ((size_t)d.n != b->layout.n || (size_t)d.k != b->layout.k)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "desc is k=%lld n=%lld but B was packed as k=%zu n=%zu",
                             (long long)d.k, (long long)d.n, b->layout.k, b->layout.n);
    if (!(desc->kernel && *desc->kernel)) kernel = b->kernel;
    else if ((size_t)luthier__ukernels[kernel].nr != b->layout.nr)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "kernel %s has NR=%d but B was packed with NR=%zu",
                             luthier__ukernels[kernel].name, luthier__ukernels[kernel].nr, b->layout.nr);
    if ((luthier__ukernels[kernel].required_cpu_features & ctx->cpu_features) !=
        luthier__ukernels[kernel].required_cpu_features)
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                             "B was packed for %s, which this context cannot run",
                             luthier__ukernels[kernel].name);
    if ((s = luthier__check_run(ctx, &d, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    return luthier__run(ctx, &d, kernel, a, &b->layout, b->data, c);
}

LUTHIER_API luthier_status luthier_sgemm(luthier_context *ctx, const luthier_sgemm_desc *desc,
                                         const float *a, const float *b, float *c) {
    luthier_sgemm_desc d;
    luthier__packed_b_layout bl;
    luthier_status s;
    size_t ws;
    float *pb;
    int kernel;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc is NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &kernel, 1, 1)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__check_run(ctx, &d, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    if (!b && d.k > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    /* One-shot GEMM: pack the whole B into a temporary buffer, then run the pre-packed path. */
    if (!luthier__packed_b_layout_init(&bl, (size_t)luthier__ukernels[kernel].nr, (size_t)d.k, (size_t)d.n))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "packed B overflows");
    ws = bl.bytes ? bl.bytes : 1;
    pb = (float *)luthier__alloc(ws);
    if (!pb) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes to pack B", ws);
    luthier__pack_b(&bl, b, (size_t)d.ldb, d.trans_b != 0, pb, 0, bl.panels);
    s = luthier__run(ctx, &d, kernel, a, &bl, pb, c);
    luthier__free(pb);
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 The luthier authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT
OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
