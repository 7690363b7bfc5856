/* luthier_gemm.h - the GEMM engine of luthier: microkernel contract, registry, packing,
   cache blocking and the driver. Part of luthier (MIT license, see luthier.h).
   Include luthier.h, never this file on its own.

   TABLE OF CONTENTS: >>contract >>registry >>pack >>dtype >>blocking >>driver >>driver-indirect
   >>ukernel-scalar >>select
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_gemm.h is part of luthier: include luthier.h instead"
#endif

#ifndef LUTHIER_GEMM_H_INCLUDED
#define LUTHIER_GEMM_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* >>contract ===================================================================================

   A microkernel computes one MR x NR tile of  C = A * B  (+ epilogue), fp32, row-major C.

   Packed B (every kernel), one panel per NR columns, k-major, zero-padded past n:

       panel p:  b[kk*NR + j] = B[kk][p*NR + j]      kk = 0..K-1, j = 0..NR-1
                 +---------------------------+
            kk=0 | b00 b01 ... b0,NR-1       |   NR floats per step of k, contiguous
            kk=1 | b10 b11 ...               |   panel p+1 starts right after kk = K-1
             ... |                           |
                 +---------------------------+
       The kernel receives the panel's start (plus k0*NR for the k-block that begins at k0).

   A, interleaved kernels: a packed panel of MR rows, k-major:
       a[kk*MR + i] = A[i][kk]   i = 0..MR-1 (rows >= m are zero: the packer pads them)

   A, hybrid kernels: read in place through row pointers, segment-major:
       a_rows[s*MR + i] points to the k floats of row i in segment s (s = 0..ks-1).
       GEMM uses ks = 1 and a_rows[i] = A + (row0+i)*lda + k0. Implicit-GEMM convolution uses
       ks = kh*kw segments of k = Cin channels each; packed B then holds ks*k steps.
       The slots of rows i >= m are not read at all (the driver leaves them unset); a kernel
       that computes a full MR-row tile reuses row m-1 for them and does not store the result.

   F16W kernels (luthier_kernel_family): the same layouts and rules, but packed B holds IEEE
   binary16 values (b points to them, typed const float * only to share the contract's struct);
   the kernel widens each to fp32 exactly and computes in fp32.
   F16 kernels (fp16 arithmetic): A (the packed panel, or a hybrid kernel's rows through a_rows)
   and packed B hold binary16; the sums start at zero in fp16 and the epilogue (C under LOAD_C,
   bias, clamp) is fp32. The driver gives a hybrid one fp16 rows in place, or fp32 rows rounded
   into a copy, at most LUTHIER__F16_MAX_KC steps per call (luthier__h16_hybrid_call).

   Rules:
   - 1 <= m <= MR, 1 <= n <= NR, k >= 1 (ks >= 1): any edge is handled inside the kernel.
     ldc >= n (rows of C do not overlap). Interleaved kernels ignore ks (the driver passes 1).
   - Without LUTHIER_UKERNEL_LOAD_C, C is written and never read (it may hold NaN); the
     accumulators start at bias[j] (bias != NULL) or 0. With LOAD_C they start at C, plus
     bias[j] when bias != NULL (a fused residual add: C holds the residual). The drivers pass
     bias only on the first k-block.
   - With LUTHIER_UKERNEL_CLAMP the result is min(max(x, min), max) before the store.
   - Only C[0..m-1][0..n-1] is written. Reads stay inside A's rows [0,k), the packed panel
     (ks*k*NR floats, padding included) and bias[0..n-1]: no other over-read.
   - No alignment is required of any pointer or of ldc.
   - prefetch (hybrid kernels; a hint that kernels may ignore): NULL, or the start of memory the
     kernel pulls toward L2 as it runs, one 64-byte line every 2 steps of k from prefetch on
     (ks*k/2 lines at most); with LUTHIER_UKERNEL_PREFETCH_DENSE one line every step (ks*k/2*2
     lines at most). The driver points it at the B block it will use next, so that block does
     not arrive from DRAM while few tiles are left to hide it (docs/DESIGN.md, "Next-block
     prefetch"). Prefetches never fault; the range is the driver's choice.
   - Kernels that serve different clusters of one layer share MR/NR and therefore one packed B.
*/

enum {
    LUTHIER_UKERNEL_LOAD_C = 1u << 0,          /* accumulate onto the existing C tile */
    LUTHIER_UKERNEL_CLAMP = 1u << 1,           /* clamp the result to [min, max] */
    LUTHIER_UKERNEL_PREFETCH_DENSE = 1u << 2   /* prefetch one line per step of k, not per 2 */
};

typedef struct luthier_sgemm_ukernel_args {
    size_t m, n;                 /* rows/columns of C to produce: 1..MR, 1..NR */
    size_t k;                    /* steps of k per A segment (>= 1) */
    size_t ks;                   /* hybrid: A segments (1 for GEMM); interleaved: must be 1 */
    const float *a;              /* interleaved: packed A panel (k * MR floats) */
    const float *const *a_rows;  /* hybrid: ks * MR row pointers */
    const float *b;              /* packed B panel position (ks * k * NR floats; F16W: halves) */
    float *c;                    /* C tile: row i at c + i*ldc */
    size_t ldc;                  /* in elements */
    const float *bias;           /* NULL or n floats (with LOAD_C too: a fused residual add) */
    float min, max;              /* read only with CLAMP */
    unsigned flags;              /* LUTHIER_UKERNEL_* */
    const void *prefetch;        /* hybrid: NULL or memory to pull toward L2 (see above) */
} luthier_sgemm_ukernel_args;

typedef void (*luthier_sgemm_ukernel_fn)(const luthier_sgemm_ukernel_args *args);

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_GEMM_H_INCLUDED */

#if defined(LUTHIER_GEMM_IMPLEMENTATION) && !defined(LUTHIER__GEMM_IMPL_DONE)
#define LUTHIER__GEMM_IMPL_DONE

#ifndef LUTHIER__IMPL_DONE
#error "define LUTHIER_IMPLEMENTATION before including luthier.h; it compiles luthier_gemm.h"
#endif

#define LUTHIER__MAX_MR 16

/* Depthwise row kernels (K x K, K <= LUTHIER__DW_ROWS_K, dilation 1) take runs of output
   pixels, each on one output row: rows[kh] (kh < K) is the input row of tap row kh (NULL in the
   padding), pixel p's tap column kw reads input column ix0 + p * stride + kw (skipped outside
   the row). */
#define LUTHIER__DW_ROWS_K 5
typedef struct luthier__dw_run {
    float *o;
    const float *rows[LUTHIER__DW_ROWS_K];
    int64_t ix0;
    size_t npix;
} luthier__dw_run;
typedef struct luthier__dw_run_h16 { /* the same on fp16 activations (luthier__dw_h16_rows_neon) */
    uint16_t *o;
    const uint16_t *rows[LUTHIER__DW_ROWS_K];
    int64_t ix0;
    size_t npix;
} luthier__dw_run_h16;
#define LUTHIER__DW_RUNS 16 /* runs per call: the weights of a channel chunk are loaded once */

/* The ISA files add their kernels and their LUTHIER__UKERNELS_<ISA>(X) lists. */
#if LUTHIER__SIMD_X86
#include "luthier_kernels_x86.h"
#endif
#if LUTHIER__SIMD_NEON
#include "luthier_kernels_neon.h"
#endif
#ifndef LUTHIER__UKERNELS_X86
#define LUTHIER__UKERNELS_X86(X)
#endif
#ifndef LUTHIER__UKERNELS_NEON
#define LUTHIER__UKERNELS_NEON(X)
#endif
#ifndef LUTHIER__UKERNELS_F16W_X86
#define LUTHIER__UKERNELS_F16W_X86(X)
#endif
#ifndef LUTHIER__UKERNELS_F16W_NEON
#define LUTHIER__UKERNELS_F16W_NEON(X)
#endif
#ifndef LUTHIER__UKERNELS_F16_NEON
#define LUTHIER__UKERNELS_F16_NEON(X)
#endif
#ifndef LUTHIER__UKERNELS_F16_X86
#define LUTHIER__UKERNELS_F16_X86(X)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>ukernel-scalar: plain C, always compiled: the fallback on any CPU and the oracle the
   SIMD kernels are tested against. Same contract, both kinds. */

/* >>fp16: IEEE binary16 <-> fp32 in plain C, bit for bit what F16C's vcvtps2ph (round to
   nearest even) and vcvtph2ps compute: fp32 -> fp16 rounds to nearest even, overflows to
   infinity, keeps subnormals, quiets NaNs (keeping the payload's top bits); fp16 -> fp32 is
   exact. */
LUTHIER__INLINE uint16_t luthier__f32_to_f16(float f) {
    uint32_t x, ax, sign, m, q, rem, half;
    int shift;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  /* past 65520: infinity */
    if (ax >= 0x38800000u) { /* normal: rebias the exponent, round 23 mantissa bits to 10 */
        q = ax - 0x38000000u;
        return (uint16_t)(sign | ((q + 0xfffu + ((q >> 13) & 1u)) >> 13));
    }
    if (ax <= 0x33000000u) return (uint16_t)sign; /* at most 2^-25: rounds to zero */
    m = (ax & 0x7fffffu) | 0x800000u;             /* subnormal result: units of 2^-24 */
    shift = 126 - (int)(ax >> 23);
    q = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
    q += rem > half || (rem == half && (q & 1u));
    return (uint16_t)(sign | q);
}

LUTHIER__INLINE float luthier__f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t x;
    float f;
    if (e == 0x1fu) x = sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u); /* inf, quiet NaN */
    else if (e) x = sign | ((e + 112u) << 23) | (m << 13);
    else {
        f = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        memcpy(&x, &f, sizeof x);
        x |= sign;
    }
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Element kk*NR + j of a packed B panel holding fp32 (h = 0) or fp16 (h = 1). */
LUTHIER__INLINE float luthier__packed_elem(const float *b, size_t i, int h) {
    return h ? luthier__f16_to_f32(((const uint16_t *)(const void *)b)[i]) : b[i];
}

LUTHIER__INLINE void luthier__ukernel_scalar(const luthier_sgemm_ukernel_args *p, int mr, int nr,
                                             int hybrid, int h) {
    float acc[LUTHIER__MAX_MR][16];
    const float *b = p->b;
    size_t bi = 0;
    size_t i, j, s, kk;
    const size_t m = p->m, n = p->n;
    for (i = 0; i < (size_t)mr; i++)
        for (j = 0; j < (size_t)nr; j++)
            acc[i][j] = ((p->flags & LUTHIER_UKERNEL_LOAD_C) && i < m && j < n ? p->c[i * p->ldc + j] : 0.0f) +
                        (p->bias && j < n ? p->bias[j] : 0.0f);
    if (hybrid) {
        for (s = 0; s < p->ks; s++) {
            const float *const *rows = p->a_rows + s * (size_t)mr;
            for (kk = 0; kk < p->k; kk++, bi += nr)
                for (i = 0; i < m; i++) {
                    const float av = rows[i][kk];
                    for (j = 0; j < (size_t)nr; j++) acc[i][j] += av * luthier__packed_elem(b, bi + j, h);
                }
        }
    } else {
        const float *a = p->a;
        for (kk = 0; kk < p->k; kk++, a += mr, bi += nr)
            for (i = 0; i < (size_t)mr; i++)
                for (j = 0; j < (size_t)nr; j++) acc[i][j] += a[i] * luthier__packed_elem(b, bi + j, h);
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            float v = acc[i][j];
            if (p->flags & LUTHIER_UKERNEL_CLAMP) {
                v = v < p->min ? p->min : v;
                v = v > p->max ? p->max : v;
            }
            p->c[i * p->ldc + j] = v;
        }
}

LUTHIER_PRIVATE void luthier_sgemm_ukernel_4x4__scalar(const luthier_sgemm_ukernel_args *p) {
    luthier__ukernel_scalar(p, 4, 4, 0, 0);
}
LUTHIER_PRIVATE void luthier_sgemm_ukernel_4x4__scalar_hybrid(const luthier_sgemm_ukernel_args *p) {
    luthier__ukernel_scalar(p, 4, 4, 1, 0);
}
LUTHIER_PRIVATE void luthier_sgemm_ukernel_4x4__scalar_hybrid_f16w(const luthier_sgemm_ukernel_args *p) {
    luthier__ukernel_scalar(p, 4, 4, 1, 1);
}

#define LUTHIER__UKERNELS_SCALAR(X)                                                   \
    X(4x4__scalar, "scalar", 4, 4, 1, LUTHIER_KERNEL_INTERLEAVED, 0)                  \
    X(4x4__scalar_hybrid, "scalar", 4, 4, 1, LUTHIER_KERNEL_HYBRID, 0)
#define LUTHIER__UKERNELS_F16W_SCALAR(X) X(4x4__scalar_hybrid_f16w, "scalar", 4, 4, 1, LUTHIER_KERNEL_HYBRID, 0)

/* The F16 contract in plain C: A is the packed panel in fp16 (a[kk*MR + i]), B fp16; each step
   rounds the tile's sums to fp16 as an fp16 FMA does (computed in double, then rounded: up to
   one ulp of double rounding away from the hardware's single rounding); the epilogue widens
   them and adds C (LOAD_C), bias and the clamp in fp32. */
LUTHIER_PRIVATE void luthier_sgemm_ukernel_4x4__scalar_f16(const luthier_sgemm_ukernel_args *p) {
    const uint16_t *a = (const uint16_t *)(const void *)p->a, *b = (const uint16_t *)(const void *)p->b;
    float acc[4][4];
    size_t i, j, kk;
    memset(acc, 0, sizeof acc);
    for (kk = 0; kk < p->k; kk++, a += 4, b += 4)
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++)
                acc[i][j] = luthier__f16_to_f32(luthier__f32_to_f16(
                    (float)((double)luthier__f16_to_f32(a[i]) * luthier__f16_to_f32(b[j]) + acc[i][j])));
    for (i = 0; i < p->m; i++)
        for (j = 0; j < p->n; j++) {
            float v = acc[i][j] + ((p->flags & LUTHIER_UKERNEL_LOAD_C) ? p->c[i * p->ldc + j] : 0.0f) +
                      (p->bias ? p->bias[j] : 0.0f);
            if (p->flags & LUTHIER_UKERNEL_CLAMP) v = v < p->min ? p->min : v > p->max ? p->max : v;
            p->c[i * p->ldc + j] = v;
        }
}
#define LUTHIER__UKERNELS_F16_SCALAR(X) X(4x4__scalar_f16, "scalar", 4, 4, 1, LUTHIER_KERNEL_INTERLEAVED, 0)

/* >>registry ===================================================================================
   One X-macro row per kernel: X(short name, isa, MR, NR, K unroll, kind, required features).
   The function is luthier_sgemm_ukernel_<short name>. Order = preference: within what the CPU
   can run, the first row is the default kernel. Dispatch, the tuner's kernel knob, the tests
   and the benchmarks all iterate over this one table. */
#define LUTHIER__UKERNELS(X) LUTHIER__UKERNELS_X86(X) LUTHIER__UKERNELS_NEON(X) LUTHIER__UKERNELS_SCALAR(X)

/* The entry type of every kernel table (one per luthier_kernel_family; the int8 table is in
   luthier_int8.h): a row of one X-macro list each. fn for the fp32-activation families (F32,
   F16W), qfn for INT8; a_s8 is int8's A encoding (1 = A ^ 0x80). */
typedef struct luthier__kernel_entry {
    const char *name;
    const char *isa;
    int mr, nr, k_unroll; /* int8: k_unroll = the K group */
    luthier_kernel_kind kind;
    luthier_kernel_family family;
    int a_bytes; /* bytes per element of A as the kernel reads it: 4, 2 (F16: packed to fp16), 1 */
    int b_bytes; /* bytes per element of packed B: 4 (F32), 2 (F16W, F16), 1 (INT8) */
    int a_s8;
    unsigned required_cpu_features;
    luthier_sgemm_ukernel_fn fn;
    luthier_qgemm_ukernel_fn qfn;
} luthier__kernel_entry;

#define LUTHIER__SROW(sname, isa, mr, nr, ku, kind, feat)                                                      \
    {"luthier_sgemm_ukernel_" #sname, isa, mr, nr, ku, kind, LUTHIER_KERNELS_F32, 4, 4, 0, feat, luthier_sgemm_ukernel_##sname, \
     NULL},
#define LUTHIER__HROW(sname, isa, mr, nr, ku, kind, feat)                                                      \
    {"luthier_sgemm_ukernel_" #sname, isa, mr, nr, ku, kind, LUTHIER_KERNELS_F16W, 4, 2, 0, feat,                  \
     luthier_sgemm_ukernel_##sname, NULL},
#define LUTHIER__FROW(sname, isa, mr, nr, ku, kind, feat)                                                      \
    {"luthier_sgemm_ukernel_" #sname, isa, mr, nr, ku, kind, LUTHIER_KERNELS_F16, 2, 2, 0, feat,                   \
     luthier_sgemm_ukernel_##sname, NULL},
static const luthier__kernel_entry luthier__ukernels[] = {LUTHIER__UKERNELS(LUTHIER__SROW)};
#define LUTHIER__NUM_UKERNELS ((int)(sizeof luthier__ukernels / sizeof luthier__ukernels[0]))

/* The F16W family: hybrid kernels only (what dense layers run); the scalar row runs anywhere. */
#define LUTHIER__UKERNELS_F16W(X) LUTHIER__UKERNELS_F16W_X86(X) LUTHIER__UKERNELS_F16W_NEON(X) LUTHIER__UKERNELS_F16W_SCALAR(X)
static const luthier__kernel_entry luthier__hkernels[] = {LUTHIER__UKERNELS_F16W(LUTHIER__HROW)};
#define LUTHIER__NUM_HKERNELS ((int)(sizeof luthier__hkernels / sizeof luthier__hkernels[0]))

/* The F16 family: interleaved tiles in fp16 arithmetic (AVX-512 FP16, Armv8.2 FP16); the
   scalar row emulates it anywhere. */
#define LUTHIER__UKERNELS_F16(X) LUTHIER__UKERNELS_F16_X86(X) LUTHIER__UKERNELS_F16_NEON(X) LUTHIER__UKERNELS_F16_SCALAR(X)
static const luthier__kernel_entry luthier__fkernels[] = {LUTHIER__UKERNELS_F16(LUTHIER__FROW)};
#define LUTHIER__NUM_FKERNELS ((int)(sizeof luthier__fkernels / sizeof luthier__fkernels[0]))

/* The row of any family with this full name (or short name: the first family's that has it),
   NULL if none (>>impl-kernel-families). */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__kernel_named(const char *name);
/* Row index of family f (index valid: luthier_kernels_find gave it). */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__kernel_in(luthier_kernel_family f, int index);

LUTHIER__INLINE int luthier__kernel_runs(const luthier__kernel_entry *e, unsigned features) {
    return (e->required_cpu_features & features) == e->required_cpu_features;
}

/* >>select: the default kernel is the first row of the table this CPU can run. */
LUTHIER_PRIVATE int luthier__select_default_kernel(unsigned features) {
    int i;
    for (i = 0; i < LUTHIER__NUM_UKERNELS; i++)
        if (luthier__kernel_runs(&luthier__ukernels[i], features)) return i;
    return LUTHIER__NUM_UKERNELS - 1; /* scalar: needs nothing */
}

LUTHIER__INLINE size_t luthier__div_up(size_t a, size_t b) { return (a + b - 1) / b; }
LUTHIER__INLINE size_t luthier__min_sz(size_t a, size_t b) { return a < b ? a : b; }
LUTHIER__INLINE size_t luthier__max_sz(size_t a, size_t b) { return a > b ? a : b; }
LUTHIER__INLINE int64_t luthier__min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
LUTHIER__INLINE int64_t luthier__max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

/* >>pack ======================================================================================= */

/* Packed B of every kernel family: panels of NR columns; within a panel, groups of kg steps of
   k (int8's K group; 1 for fp32 and fp16), each group NR x kg elements with the kg steps of a
   column adjacent:  element (step kk = g*kg + t, column p*NR + j) at panel p, index
   (g*NR + j)*kg + t. With kg = 1 that is the contract's k-major panel. k is padded with zeros
   to groups*kg, n to panels*NR. */
typedef struct luthier__packed_b_layout {
    size_t nr, k, n;
    size_t kg;           /* steps of k per group */
    size_t groups;       /* ceil(k / kg) */
    size_t panels;       /* ceil(n / nr) */
    size_t panel_stride; /* elements per panel: groups * kg * nr */
    size_t elem;         /* bytes per element: 4 (fp32), 2 (fp16: F16W), 1 (int8) */
    size_t bytes;        /* panels * panel_stride * elem */
} luthier__packed_b_layout;

/* Returns 0 when the packed size overflows size_t. */
LUTHIER_PRIVATE int luthier__pack_layout_init(luthier__packed_b_layout *l, size_t nr, size_t kg, size_t k, size_t n,
                                              size_t elem) {
    l->nr = nr;
    l->k = k;
    l->n = n;
    l->kg = kg;
    l->elem = elem;
    l->groups = luthier__div_up(k, kg);
    l->panels = luthier__div_up(n, nr);
    if (l->groups && nr * kg > SIZE_MAX / l->groups) return 0;
    l->panel_stride = l->groups * kg * nr;
    if (l->panels && l->panel_stride > SIZE_MAX / elem / l->panels) return 0;
    l->bytes = l->panels * l->panel_stride * elem;
    return 1;
}

LUTHIER_PRIVATE int luthier__packed_b_layout_init(luthier__packed_b_layout *l, size_t nr, size_t k, size_t n) {
    return luthier__pack_layout_init(l, nr, 1, k, n, sizeof(float));
}

/* Packed B (layout l with kg = 1, base b) at panel `panel`, step kk of that panel. */
LUTHIER__INLINE const float *luthier__packed_at(const void *b, const luthier__packed_b_layout *l, size_t panel,
                                                size_t kk) {
    return (const float *)(const void *)((const char *)b + (panel * l->panel_stride + kk * l->nr) * l->elem);
}

/* Element (kk, j) of B (k x n row-major with stride ldb, or n x k when trans), stored at index i
   of dst in the layout's type: fp32 copied, fp16 rounded to nearest even (both from fp32 B),
   int8 copied (from int8 B). */
LUTHIER__INLINE void luthier__pack_elem(const luthier__packed_b_layout *l, const void *b, size_t ldb, int trans,
                                        size_t kk, size_t j, void *dst, size_t i) {
    const size_t at = trans ? j * ldb + kk : kk * ldb + j;
    if (l->elem == 1) ((int8_t *)dst)[i] = ((const int8_t *)b)[at];
    else if (l->elem == 2) ((uint16_t *)dst)[i] = luthier__f32_to_f16(((const float *)b)[at]);
    else ((float *)dst)[i] = ((const float *)b)[at];
}

/* Packs panels [p0, p1) of B in l's layout and type (see luthier__pack_elem). */
LUTHIER_PRIVATE void luthier__pack_b(const luthier__packed_b_layout *l, const void *bv, size_t ldb,
                                     int trans, void *dstv, size_t p0, size_t p1) {
    size_t p, g, j, t;
    const size_t nr = l->nr, kg = l->kg;
    if (l->elem != sizeof(float) || kg != 1) { /* fp16, int8: element by element */
        for (p = p0; p < p1; p++) {
            char *d = (char *)dstv + p * l->panel_stride * l->elem;
            const size_t j0 = p * nr, nv = luthier__min_sz(nr, l->n - j0);
            for (g = 0; g < l->groups; g++)
                for (j = 0; j < nr; j++)
                    for (t = 0; t < kg; t++) {
                        const size_t kk = g * kg + t, i = (g * nr + j) * kg + t;
                        if (j < nv && kk < l->k) luthier__pack_elem(l, bv, ldb, trans, kk, j0 + j, d, i);
                        else memset(d + i * l->elem, 0, l->elem);
                    }
        }
        return;
    }
    {
        const float *b = (const float *)bv;
        for (p = p0; p < p1; p++) {
            float *d = (float *)dstv + p * l->panel_stride;
            const size_t j0 = p * nr, nv = luthier__min_sz(nr, l->n - j0);
            if (!trans) {
                for (g = 0; g < l->k; g++, d += nr) {
                    const float *src = b + g * ldb + j0;
                    for (j = 0; j < nv; j++) d[j] = src[j];
                    for (; j < nr; j++) d[j] = 0.0f;
                }
            } else {
                for (j = 0; j < nv; j++) {
                    const float *src = b + (j0 + j) * ldb;
                    for (g = 0; g < l->k; g++) d[g * nr + j] = src[g];
                }
                for (; j < nr; j++)
                    for (g = 0; g < l->k; g++) d[g * nr + j] = 0.0f;
            }
        }
    }
}

/* Packs rows [0, mb) x cols [0, kb) of A (stride lda) into MR-row panels, k-major, rows past
   mb zero. Panel q occupies kb*MR floats. */
LUTHIER_PRIVATE void luthier__pack_a(const float *a, size_t lda, size_t mb, size_t kb, size_t mr,
                                     float *dst) {
    size_t i0, i, kk;
#if LUTHIER__SIMD_X86
    if (luthier_cpu_features() & LUTHIER_CPU_AVX512F) {
        luthier__pack_a_avx512(a, lda, mb, kb, mr, dst);
        return;
    }
#endif
#if LUTHIER__SIMD_NEON
    if (luthier__pack_a_neon(a, lda, mb, kb, mr, dst)) return;
#endif
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = luthier__min_sz(mr, mb - i0);
        for (i = 0; i < mv; i++) {
            const float *src = a + (i0 + i) * lda;
            for (kk = 0; kk < kb; kk++) dst[kk * mr + i] = src[kk];
        }
        for (; i < mr; i++)
            for (kk = 0; kk < kb; kk++) dst[kk * mr + i] = 0.0f;
    }
}

/* >>dtype =====================================================================================
   The datatypes of the driver, one per luthier_kernel_family: what differs between fp32 and
   int8 GEMMs is how A sits in memory and is packed, how a kernel is called (its argument
   struct and epilogue: fp32 bias / LOAD_C / clamp, int8 offsets and the output stage) and what
   k == 0 computes. Blocking, the loops, the split over threads and the workspace are shared. */
typedef struct luthier__gemm_args luthier__gemm_args;

/* One kernel call as the driver places it. */
typedef struct luthier__tile {
    size_t i, j;          /* row and column of C at the tile's corner */
    size_t m, n;          /* 1..MR rows, 1..NR columns */
    size_t k0, kb;        /* the k block: steps [k0, k0 + kb) */
    const void *a;        /* interleaved kernels: the packed A panel */
    const void *b;        /* packed B: the tile's panel at step k0 */
    int first;            /* k0 == 0 (fp32: the bias seeds the sums) */
    unsigned flags;       /* fp32: LUTHIER_UKERNEL_* of the call */
    const void *prefetch; /* fp32 hybrid: NULL or the piece of the next B block to pull */
} luthier__tile;

/* The table of a family (luthier__kernel_tables, >>impl-kernel-families in luthier.h): its
   kernels, and the datatype the driver serves them with. */
typedef struct luthier__kernel_table {
    const luthier__kernel_entry *rows;
    int count;
    const char *prefix; /* of every name: find also takes the rest (the short name) */
    const char *a_type, *b_type, *c_type;
    size_t a_elem; /* bytes per element of A in memory (the kernel may read another: a_bytes) */
    int full_k;    /* one call covers all of k: the sums never leave the kernel (int8's output
                      stage needs the whole sum), so the blocking takes kc = k */
    /* rows [0, mb) x steps [0, kb) of A (row stride lda elements) into uk's packed A panels */
    void (*pack_a)(const luthier__kernel_entry *uk, const void *a, size_t lda, size_t mb, size_t kb, void *dst);
    /* one kernel call; t->kb == 0 (k == 0: one empty block) gives the epilogue of a zero sum */
    void (*call)(const luthier__kernel_entry *uk, const luthier__gemm_args *g, const luthier__tile *t);
} luthier__kernel_table;

/* uk's family table. */
LUTHIER_PRIVATE const luthier__kernel_table *luthier__dtype(const luthier__kernel_entry *uk);

/* >>blocking =================================================================================== */

/* The most steps of k an F16 kernel's fp16 sums cover (one call; the K blocks add up in the
   fp32 C): the rounding error of a sum grows with its steps (fc 1 x 4096 x 4096 in one block:
   2.2 % of max |C|; in blocks of 256: under 0.6 %). */
#define LUTHIER__F16_MAX_KC 256

typedef struct luthier__gemm_blocking {
    size_t kc, mc, nc; /* elements; mc a multiple of MR, nc of NR */
    int prefetch;      /* hybrid: each tile row after a range's first pulls the next B block */
    int rows_outer;    /* loop order in an MC block: tile rows outer, each A tile in L1 across
                          the NR panels (the hybrid model); else panels outer, each B
                          micro-panel across the MR tiles */
} luthier__gemm_blocking;

/* Kernels that honour luthier_sgemm_ukernel_args.prefetch: the x86 hybrid ones (the NEON and
   scalar kernels ignore it, and their drivers keep the larger B blocks). */
LUTHIER_PRIVATE int luthier__ukernel_prefetches(const luthier__kernel_entry *uk) {
    return uk->kind == LUTHIER_KERNEL_HYBRID && (!strcmp(uk->isa, "avx512") || !strcmp(uk->isa, "avx2"));
}

/* Hybrid GEMMs with at most this many MR-row tiles prefetch the next B block (and take B blocks
   of L2/8 so that two fit beside A and C): the first tile row of a block streams it from DRAM
   at a third of the kernel's speed, which few tiles cannot amortise. */
#define LUTHIER__PREFETCH_MAX_TILES 64

/* Splits total into ceil(total/cap) near-equal blocks, rounded up to a multiple of unit. */
LUTHIER_PRIVATE size_t luthier__balanced_block(size_t total, size_t cap, size_t unit) {
    size_t nb, blk;
    if (cap < unit) cap = unit;
    if (total <= cap) return luthier__div_up(total ? total : 1, unit) * unit;
    nb = luthier__div_up(total, cap);
    blk = luthier__div_up(total, nb);
    return luthier__div_up(blk, unit) * unit;
}

/* Two blocking models, one per kernel kind (measured on AVX-512, see docs/DESIGN.md), and
   the full-k datatypes' (int8: one K block):
   - interleaved (BLIS): the packed-B micro-panel (KC x NR) and the packed A micro-panel fill L1
     while the MR-row tiles of an MC x KC block of A (in L2) stream past; B's KC x NC block
     lives in the last-level cache;
   - hybrid (ACL): the MR x KC tile of A, read in place, stays in L1 while the B micro-panels of
     a KC x NC block (in L2) stream past it; there is no A block (nothing is packed). */
LUTHIER_PRIVATE luthier__gemm_blocking luthier__gemm_blocking_for(const luthier__kernel_entry *uk,
                                                                  const luthier_cache_info *ci,
                                                                  const luthier__gemm_blocking *ov,
                                                                  size_t m, size_t n, size_t k) {
    luthier__gemm_blocking b;
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, f = sizeof(float);
    const size_t llc = ci->l3 ? ci->l3 : ci->l2;
    const int hybrid = uk->kind == LUTHIER_KERNEL_HYBRID;
    size_t kc, mc, nc;
    if (luthier__dtype(uk)->full_k) {
        /* all of k per call, rounded up to the K group; A's MC x k block (bytes) in half of L2,
           B's k x NC block in half of the last level, for either kind, panels outer (the B
           micro-panel, k x NR bytes, stays in L1 / L2 across the tiles) */
        b.kc = luthier__div_up(k ? k : 1, (size_t)uk->k_unroll) * (size_t)uk->k_unroll;
        mc = ov->mc ? ov->mc : (ci->l2 / 2) / b.kc;
        nc = ov->nc ? ov->nc : (llc / 2) / b.kc;
        b.mc = luthier__balanced_block(m, luthier__max_sz(mc, mr), mr);
        b.nc = luthier__balanced_block(n, luthier__max_sz(nc, nr), nr);
        b.prefetch = b.rows_outer = 0;
        return b;
    }
    kc = ov->kc ? ov->kc : hybrid ? (ci->l1d / 4) / (mr * f) : ci->l1d / ((mr + nr) * f);
    kc = luthier__min_sz(luthier__max_sz(kc, 16), 2048);
    /* A single row of tiles (fully connected at batch 1): B is streamed once and never reused,
       so walk each packed panel end to end: one long sequential stream per panel. */
    if (!ov->kc && m <= mr) kc = k;
    /* A hybrid kernel on a single NR panel reuses nothing across panels: no reason to split k
       (each split only reloads C). */
    if (!ov->kc && hybrid && n <= nr) kc = k;
    /* F16 kernels keep the sums in fp16 for one call: bound the steps they cover */
    if (uk->family == LUTHIER_KERNELS_F16) kc = luthier__min_sz(kc, LUTHIER__F16_MAX_KC);
    b.kc = luthier__balanced_block(k, kc, ov->kc ? 1 : 4);
    mc = ov->mc ? ov->mc : hybrid ? m : (ci->l2 / 2) / (b.kc * f);
    b.mc = luthier__balanced_block(m, luthier__max_sz(mc, mr), mr);
    b.prefetch = luthier__ukernel_prefetches(uk) && m > mr && luthier__div_up(m, mr) <= LUTHIER__PREFETCH_MAX_TILES;
    b.rows_outer = hybrid;
    nc = ov->nc ? ov->nc : ((hybrid ? ci->l2 : llc) / (b.prefetch ? 8 : 2)) / (b.kc * f);
    b.nc = luthier__balanced_block(n, luthier__max_sz(nc, nr), nr);
    return b;
}

/* >>driver ===================================================================================== */

/* The first B block another GEMM will use (the next layer's): panels of chunk floats, each
   panel_stride floats after the previous one. */
typedef struct luthier__prefetch_region {
    const float *b; /* NULL: none */
    size_t panel_stride, chunk, panels;
} luthier__prefetch_region;

/* A fused activation that is not a clamp (luthier_activation), applied by the thread that
   computed the values, on each block of C right after its last K step (while it is in cache):
   luthier__act_post_init fills it for a CPU, luthier__act_rect runs it (>>ops-act in
   luthier_ops.h: the element-wise operator's code). fn NULL: none. */
typedef struct luthier__act_post {
    void (*fn)(void *, size_t, size_t, int, int); /* the unary operator's range function */
    int kind;                                     /* its luthier__unary kind */
    float a, b;                                   /* and parameters */
} luthier__act_post;

LUTHIER_PRIVATE void luthier__act_post_init(unsigned features, luthier_activation act, float p0, float p1,
                                            luthier__act_post *p);
LUTHIER_PRIVATE void luthier__act_rect(const luthier__act_post *p, float *c, size_t ld, size_t rows, size_t cols);
LUTHIER_PRIVATE void luthier__act_rows(const luthier__act_post *p, float *c, size_t ld, size_t cols, size_t *from,
                                       size_t to, int force);
#define LUTHIER__ACT_BATCH 4096 /* floats per pass of luthier__act_rows */

struct luthier__gemm_args {
    size_t m, n, k;
    const void *a;  /* the datatype's A (fp32; int8: uint8), row i at a + i * lda elements */
    size_t lda;
    int a_h16;      /* A holds fp16 instead (F16 kernels: packed by copying, luthier__pack_a_h16) */
    const void *b;  /* packed */
    const luthier__packed_b_layout *b_layout;
    void *c;        /* row i at c + i * ldc elements of C's type */
    size_t ldc;
    const float *bias; /* the fp32 epilogue: bias, LOAD_C, clamp, post */
    int accumulate, clamp;
    float min, max;
    luthier__act_post post; /* applied after the last K step's stores */
    const struct luthier__qepilogue *q; /* int8: the output stage (luthier_int8.h) */
    size_t q_col;   /* int8: the column of q's per-column parameters at column 0 of C (a
                       convolution group's first output channel) */
    char *a_packed;       /* NULL, or all of A packed once for interleaved kernels (by
                             luthier__prepack_a, before the GEMM): K block k0's panel of MR-row
                             tile t at a_packed + (k0 * m_pad + t * kp * MR) * a_bytes, kp = the
                             block's steps rounded up to the K group */
    size_t m_pad;         /* rows of a_packed: tiles * MR */
    const void *next_b;  /* NULL, or the packed B (same layout) of the GEMM that follows: its
                            first block is prefetched during this one's last (Winograd) */
    const luthier__prefetch_region *next_layer; /* without next_b: NULL, or the block that the
                            next layer starts with, prefetched during this one's last block */
};

/* Next-block prefetch (docs/DESIGN.md): the B block a GEMM range will use next (columns from
   n0, k steps [k_off, k_off + steps) of each panel) is handed out in pieces, one per kernel
   call of the tile rows after the range's first, in panel order. Past the range's last block
   (n0 >= nhi) that is the first block of g->next_b, from the range's first column nlo, else
   g->next_layer's block.
   `calls` kernel calls will take a piece, each prefetching `lines` lines at the kernels' base
   rate (a line per 2 steps of k); when they cannot cover the block at that rate (few tile rows
   per thread: Winograd's 14x14 layers give each of 2 threads 4-5 rows of 6 tiles, half the 8
   a 6x64 kernel needs) the plan asks for the dense rate (a line per step). Only then: dense
   everywhere made the GEMMs that are covered anyway 3-10 % slower (ResNet-101's 7x7 layers). */
typedef struct luthier__prefetch_plan {
    const char *b;       /* the next block's first panel (NULL: nothing to prefetch) */
    size_t panel_stride; /* bytes between panels */
    size_t chunk;        /* bytes of the block in each panel */
    size_t size, pos;    /* chunk * panels, bytes handed out */
    size_t piece;        /* bytes per kernel call */
    unsigned flags;      /* 0 or LUTHIER_UKERNEL_PREFETCH_DENSE, for the calls' flags */
} luthier__prefetch_plan;

LUTHIER_PRIVATE void luthier__prefetch_plan_init(luthier__prefetch_plan *p, const luthier__gemm_blocking *blk,
                                                 const luthier__gemm_args *g, size_t n0, size_t nhi,
                                                 size_t nlo, size_t k_off, size_t steps, size_t calls,
                                                 size_t lines) {
    const size_t nr = g->b_layout->nr;
    const void *b = g->b;
    const luthier__prefetch_region *r = g->next_layer;
    int on;
    if (n0 >= nhi && g->next_b) b = g->next_b, n0 = nlo;
    if (n0 >= nhi && !g->next_b && r && r->b) {
        on = blk->prefetch;
        p->b = on ? (const char *)r->b : NULL;
        p->panel_stride = r->panel_stride * sizeof(float);
        p->chunk = r->chunk * sizeof(float);
        p->size = on ? p->chunk * r->panels : 0;
    } else {
        on = blk->prefetch && n0 < nhi;
        p->b = on ? (const char *)luthier__packed_at(b, g->b_layout, n0 / nr, k_off) : NULL;
        p->panel_stride = g->b_layout->panel_stride * g->b_layout->elem;
        p->chunk = steps * nr * g->b_layout->elem;
        p->size = on ? p->chunk * luthier__div_up(luthier__min_sz(blk->nc, nhi - n0), nr) : 0;
    }
    p->pos = 0;
    p->piece = lines * 64;
    p->flags = 0;
    if (p->size > calls * p->piece) {
        p->piece *= 2;
        p->flags = LUTHIER_UKERNEL_PREFETCH_DENSE;
    }
}

/* The next piece for a kernel call (NULL when the block is out). */
LUTHIER_PRIVATE const void *luthier__prefetch_next(luthier__prefetch_plan *p) {
    size_t pan, off;
    if (!p->b || p->pos >= p->size || !p->piece) return NULL;
    pan = p->pos / p->chunk;
    off = p->pos % p->chunk;
    p->pos += luthier__min_sz(p->piece, p->chunk - off);
    return p->b + pan * p->panel_stride + off;
}

/* A kernel call's prefetch (a piece, none for the range's first tile row); sets its rate flag. */
LUTHIER_PRIVATE const void *luthier__prefetch_give(luthier__prefetch_plan *p, unsigned *flags, int first_row) {
    const void *pf = first_row ? NULL : luthier__prefetch_next(p);
    *flags = (*flags & ~(unsigned)LUTHIER_UKERNEL_PREFETCH_DENSE) | (pf ? p->flags : 0u);
    return pf;
}

/* Bytes of packed A a thread needs (interleaved kernels: an MC x KC block); SIZE_MAX when
   that overflows. */
LUTHIER_PRIVATE size_t luthier__gemm_workspace_bytes(const luthier__kernel_entry *uk,
                                                     const luthier__gemm_blocking *blk) {
    if (uk->kind != LUTHIER_KERNEL_INTERLEAVED) return 0;
    if (blk->mc > SIZE_MAX / blk->kc / (size_t)uk->a_bytes) return SIZE_MAX;
    return blk->mc * blk->kc * (size_t)uk->a_bytes;
}

/* luthier__pack_a into fp16 (the F16 kernels' A): the same panels, each value rounded. */
LUTHIER_PRIVATE void luthier__pack_a_f16(const float *a, size_t lda, size_t mb, size_t kb, size_t mr, uint16_t *dst) {
    size_t i0, i, kk;
#if LUTHIER__SIMD_NEON
    luthier__pack_a_f16_neon(a, lda, mb, kb, mr, dst);
    return;
#endif
#if LUTHIER__SIMD_X86
    if (luthier_cpu_features() & LUTHIER_CPU_AVX512F) {
        luthier__pack_a_f16_avx512(a, lda, mb, kb, mr, dst);
        return;
    }
#endif
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = luthier__min_sz(mr, mb - i0);
        for (i = 0; i < mr; i++) {
            const float *src = a + (i0 + i) * lda;
            for (kk = 0; kk < kb; kk++) dst[kk * mr + i] = i < mv ? luthier__f32_to_f16(src[kk]) : 0;
        }
    }
}

/* Rows [0, mb) x k steps [0, kb) of A into uk's packed A panels (fp32, or fp16 for F16). */
LUTHIER_PRIVATE void luthier__pack_a_block(const luthier__kernel_entry *uk, const void *a, size_t lda, size_t mb,
                                           size_t kb, void *dst) {
    if (uk->a_bytes == 2) luthier__pack_a_f16((const float *)a, lda, mb, kb, (size_t)uk->mr, (uint16_t *)dst);
    else luthier__pack_a((const float *)a, lda, mb, kb, (size_t)uk->mr, (float *)dst);
}

/* luthier__pack_a from fp16 rows (fp16 activations, for the F16 kernels): the same panels, each
   value copied. */
LUTHIER_PRIVATE void luthier__pack_a_h16(const uint16_t *a, size_t lda, size_t mb, size_t kb, size_t mr, uint16_t *dst) {
    size_t i0, i, kk;
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = luthier__min_sz(mr, mb - i0);
        for (i = 0; i < mr; i++) {
            const uint16_t *src = a + (i0 + i) * lda;
            if (i >= mv) {
                for (kk = 0; kk < kb; kk++) dst[kk * mr + i] = 0;
                continue;
            }
            for (kk = 0; kk < kb; kk++) dst[kk * mr + i] = src[kk];
        }
    }
}

/* Rows [0, mb) x k steps [0, kb) of g's A at a into uk's packed A panels: the datatype's packer,
   or the copy of fp16 rows. */
LUTHIER_PRIVATE void luthier__pack_a_of(const luthier__kernel_table *dt, const luthier__kernel_entry *uk,
                                        const luthier__gemm_args *g, const void *a, size_t mb, size_t kb, void *dst) {
    if (g->a_h16) luthier__pack_a_h16((const uint16_t *)a, g->lda, mb, kb, (size_t)uk->mr, (uint16_t *)dst);
    else dt->pack_a(uk, a, g->lda, mb, kb, dst);
}

/* Steps of a k block as packed (A panels, B groups): kb rounded up to the K group. */
LUTHIER__INLINE size_t luthier__kpad(const luthier__gemm_args *g, size_t kb) {
    return luthier__div_up(kb, g->b_layout->kg) * g->b_layout->kg;
}

/* Row i, step k0 of A. */
LUTHIER__INLINE const void *luthier__a_at(const luthier__kernel_table *dt, const luthier__gemm_args *g, size_t i, size_t k0) {
    return (const char *)g->a + (i * g->lda + k0) * (g->a_h16 ? sizeof(uint16_t) : dt->a_elem);
}

/* Packs MR-row tiles [t0, t1) of A for every K block of blk into g->a_packed. */
LUTHIER_PRIVATE void luthier__prepack_a(const luthier__kernel_entry *uk, const luthier__gemm_blocking *blk,
                                        const luthier__gemm_args *g, size_t t0, size_t t1) {
    const luthier__kernel_table *dt = luthier__dtype(uk);
    const size_t mr = (size_t)uk->mr, i0 = t0 * mr, i1 = luthier__min_sz(t1 * mr, g->m);
    size_t k0;
    if (i0 >= i1) return;
    for (k0 = 0; k0 < g->k; k0 += blk->kc) {
        const size_t kp = luthier__kpad(g, luthier__min_sz(blk->kc, g->k - k0));
        luthier__pack_a_of(dt, uk, g, luthier__a_at(dt, g, i0, k0), i1 - i0, luthier__min_sz(blk->kc, g->k - k0),
                           g->a_packed + (k0 * g->m_pad + i0 * kp) * (size_t)uk->a_bytes);
    }
}

/* fp32 k == 0 on a tile (the kernels need k >= 1): C = (C) + bias, clamped. */
LUTHIER_PRIVATE void luthier__gemm_k0(const luthier__gemm_args *g, const luthier__tile *t) {
    size_t i, j;
    for (i = 0; i < t->m; i++) {
        float *c = (float *)g->c + (t->i + i) * g->ldc + t->j;
        for (j = 0; j < t->n; j++) {
            float v = (g->accumulate ? c[j] : 0.0f) + (g->bias ? g->bias[t->j + j] : 0.0f);
            if (g->clamp) v = v < g->min ? g->min : v > g->max ? g->max : v;
            c[j] = v;
        }
    }
}

/* A call of an F16 hybrid kernel (fp16 arithmetic, A rows read in place) on p's rows: fp16
   (a_h16), or fp32 rows (an fp32 GEMM or convolution computed in fp16), each call's steps
   rounded into a stack copy. The kernel sums in fp16 from zero, so the steps are cut into calls
   of at most LUTHIER__F16_MAX_KC (whole segments, else pieces of one), the later ones adding
   onto C (bias on the first, clamp on the last): the error bound of the blocked GEMM. */
LUTHIER_PRIVATE void luthier__h16_hybrid_call(const luthier__kernel_entry *uk, const luthier_sgemm_ukernel_args *p, int a_h16) {
    enum { cap = LUTHIER__F16_MAX_KC };
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, k = p->k, total = p->ks * k;
    const size_t sg = k <= cap ? cap / (k ? k : 1) : 1;                          /* whole segments per call */
    const size_t kc = k <= cap ? k : luthier__div_up(k, luthier__div_up(k, cap)); /* else steps per call */
    uint16_t buf[LUTHIER__MAX_MR * cap];
    const float *rows[LUTHIER__MAX_MR];
    luthier_sgemm_ukernel_args u = *p;
    size_t s0, k0, i, s, kk, done = 0;
    if (a_h16 && total <= cap) {
        uk->fn(p);
        return;
    }
    u.prefetch = NULL;
    for (s0 = 0; s0 < p->ks; s0 += sg)
        for (k0 = 0; k0 < k; k0 += kc) {
            const size_t ns = luthier__min_sz(sg, p->ks - s0), kb = luthier__min_sz(kc, k - k0), steps = ns * kb;
            const unsigned keep = p->flags & ~(unsigned)(LUTHIER_UKERNEL_LOAD_C | LUTHIER_UKERNEL_CLAMP);
            u.flags = keep | (done || (p->flags & LUTHIER_UKERNEL_LOAD_C) ? (unsigned)LUTHIER_UKERNEL_LOAD_C : 0u) |
                      (done + steps == total ? p->flags & (unsigned)LUTHIER_UKERNEL_CLAMP : 0u);
            u.bias = done ? NULL : p->bias;
            u.b = (const float *)(const void *)((const uint16_t *)(const void *)p->b + (s0 * k + k0) * nr);
            u.ks = 1;
            u.k = steps;
            u.a_rows = rows;
            if (a_h16 && kb == k) { /* whole segments in place */
                u.ks = ns;
                u.k = k;
                u.a_rows = p->a_rows + s0 * mr;
            } else if (a_h16) { /* a piece of one segment in place */
                for (i = 0; i < p->m; i++)
                    rows[i] = (const float *)(const void *)((const uint16_t *)(const void *)p->a_rows[s0 * mr + i] + k0);
            } else { /* fp32 rows: the call's steps rounded, its segments end to end */
                for (i = 0; i < p->m; i++) {
                    for (s = 0; s < ns; s++)
                        for (kk = 0; kk < kb; kk++)
                            buf[i * cap + s * kb + kk] = luthier__f32_to_f16(p->a_rows[(s0 + s) * mr + i][k0 + kk]);
                    rows[i] = (const float *)(const void *)(buf + i * cap);
                }
            }
            uk->fn(&u);
            done += steps;
        }
}

/* The fp32-activation families' kernel call (luthier_sgemm_ukernel_args). Hybrid kernels read g's
   rows of A in place: fp32, or fp16 (g->a_h16, F16 kernels); an F16 hybrid kernel is called
   through luthier__h16_hybrid_call. */
LUTHIER_PRIVATE void luthier__scall(const luthier__kernel_entry *uk, const luthier__gemm_args *g, const luthier__tile *t) {
    const float *rows[LUTHIER__MAX_MR];
    const size_t e = g->a_h16 ? sizeof(uint16_t) : sizeof(float);
    luthier_sgemm_ukernel_args u;
    size_t r;
    if (!t->kb) {
        luthier__gemm_k0(g, t);
        return;
    }
    for (r = 0; uk->kind == LUTHIER_KERNEL_HYBRID && r < t->m; r++)
        rows[r] = (const float *)(const void *)((const char *)g->a + ((t->i + r) * g->lda + t->k0) * e);
    u.m = t->m; u.n = t->n; u.k = t->kb; u.ks = 1;
    u.a = (const float *)t->a; u.a_rows = rows; u.b = (const float *)t->b;
    u.c = (float *)g->c + t->i * g->ldc + t->j; u.ldc = g->ldc;
    u.bias = t->first && g->bias ? g->bias + t->j : NULL;
    u.min = g->min; u.max = g->max; u.flags = t->flags; u.prefetch = t->prefetch;
    if (uk->family == LUTHIER_KERNELS_F16 && uk->kind == LUTHIER_KERNEL_HYBRID) luthier__h16_hybrid_call(uk, &u, g->a_h16);
    else uk->fn(&u);
}

/* The rows-outer order on the MC block of rows [i0, i0 + mb) x columns [n0, n0 + nb), k block
   t->k0: the A tile in L1 across the NR panels, B micro-panels from L2, the next block (the
   next k-block, else the next n-block) prefetched meanwhile. */
LUTHIER_PRIVATE void luthier__gemm_rows_outer(const luthier__kernel_entry *uk, const luthier__gemm_blocking *blk,
                                              const luthier__gemm_args *g, luthier__tile *t, size_t m0, size_t m1,
                                              size_t i0, size_t mb, size_t n0, size_t nb, size_t nlo, size_t nhi) {
    const luthier__kernel_table *dt = luthier__dtype(uk);
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, kb = t->kb;
    const int last = t->k0 + kb == g->k;
    const size_t pk0 = last ? 0 : t->k0 + kb, pn0 = last ? n0 + nb : n0;
    const size_t calls = (luthier__div_up(mb, mr) - (i0 == m0)) * luthier__div_up(nb, nr);
    luthier__prefetch_plan pf;
    size_t post_from = i0; /* rows not yet through g->post */
    luthier__prefetch_plan_init(&pf, blk, g, pn0, nhi, nlo, pk0, luthier__min_sz(blk->kc, g->k - pk0), calls, kb / 2);
    for (t->i = i0; t->i < i0 + mb; t->i += mr) {
        t->m = luthier__min_sz(mr, m1 - t->i);
        for (t->j = n0; t->j < n0 + nb; t->j += nr) {
            t->n = luthier__min_sz(nr, g->n - t->j);
            t->b = luthier__packed_at(g->b, g->b_layout, t->j / nr, t->k0);
            t->prefetch = luthier__prefetch_give(&pf, &t->flags, t->i == m0);
            dt->call(uk, g, t);
        }
        if (last && g->post.fn)
            luthier__act_rows(&g->post, (float *)g->c + n0, g->ldc, nb, &post_from, t->i + t->m, t->i + mr >= i0 + mb);
    }
}

/* The panels-outer order on the MC block (as above): A packed (interleaved kernels; unless
   g->a_packed holds it), each B micro-panel in L1 across the block's MR tiles. ws: the
   thread's packed A block. */
LUTHIER_PRIVATE void luthier__gemm_panels_outer(const luthier__kernel_entry *uk, const luthier__gemm_args *g,
                                                luthier__tile *t, size_t m1, size_t i0, size_t mb, size_t n0,
                                                size_t nb, char *ws) {
    const luthier__kernel_table *dt = luthier__dtype(uk);
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, kp = luthier__kpad(g, t->kb) * (size_t)uk->a_bytes;
    const char *pa = NULL; /* the packed A block */
    if (uk->kind == LUTHIER_KERNEL_INTERLEAVED && g->a_packed) {
        pa = g->a_packed + t->k0 * g->m_pad * (size_t)uk->a_bytes + i0 * kp;
    } else if (uk->kind == LUTHIER_KERNEL_INTERLEAVED && t->kb) {
        luthier__pack_a_of(dt, uk, g, luthier__a_at(dt, g, i0, t->k0), mb, t->kb, ws);
        pa = ws;
    }
    for (t->j = n0; t->j < n0 + nb; t->j += nr) {
        t->n = luthier__min_sz(nr, g->n - t->j);
        t->b = luthier__packed_at(g->b, g->b_layout, t->j / nr, t->k0);
        for (t->i = i0; t->i < i0 + mb; t->i += mr) {
            t->m = luthier__min_sz(mr, m1 - t->i);
            t->a = pa ? pa + (t->i - i0) * kp : NULL;
            dt->call(uk, g, t);
        }
    }
    if (t->k0 + t->kb == g->k && g->post.fn)
        luthier__act_rect(&g->post, (float *)g->c + i0 * g->ldc + n0, g->ldc, mb, nb);
}

/* Computes the block of C made of MR-row tiles [tile_begin, tile_end) and NR-column panels
   [panel_begin, panel_end): the units the thread pool hands to clusters (tiles; panels when M
   fits one tile row). Loops: NC-column blocks (B's block in the last-level cache or L2), KC
   steps, MC-row blocks, then the blocking's order within a block. workspace:
   luthier__gemm_workspace_bytes() bytes, 64-byte aligned, one per thread. */
LUTHIER_PRIVATE void luthier__gemm_compute(const luthier__kernel_entry *uk,
                                           const luthier__gemm_blocking *blk,
                                           const luthier__gemm_args *g, size_t tile_begin,
                                           size_t tile_end, size_t panel_begin, size_t panel_end,
                                           void *workspace) {
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr;
    const size_t m0 = tile_begin * mr, m1 = luthier__min_sz(tile_end * mr, g->m);
    const size_t nlo = panel_begin * nr, nhi = luthier__min_sz(panel_end * nr, g->n);
    luthier__tile t;
    size_t n0, i0;
    if (m0 >= m1 || nlo >= nhi) return;
    memset(&t, 0, sizeof t);
    for (n0 = nlo; n0 < nhi; n0 += blk->nc) {
        const size_t nb = luthier__min_sz(blk->nc, nhi - n0);
        for (t.k0 = 0; t.k0 == 0 || t.k0 < g->k; t.k0 += blk->kc) { /* k == 0: one empty block */
            t.kb = luthier__min_sz(blk->kc, g->k - t.k0);
            t.first = t.k0 == 0;
            t.flags = (t.first && !g->accumulate ? 0u : (unsigned)LUTHIER_UKERNEL_LOAD_C) |
                      (t.k0 + t.kb == g->k && g->clamp ? (unsigned)LUTHIER_UKERNEL_CLAMP : 0u);
            for (i0 = m0; i0 < m1; i0 += blk->mc) {
                const size_t mb = luthier__min_sz(blk->mc, m1 - i0);
                if (blk->rows_outer) luthier__gemm_rows_outer(uk, blk, g, &t, m0, m1, i0, mb, n0, nb, nlo, nhi);
                else luthier__gemm_panels_outer(uk, g, &t, m1, i0, mb, n0, nb, (char *)workspace);
            }
        }
    }
}

/* >>driver-indirect =============================================================================
   Implicit-GEMM convolution: rows of A are not a + row*lda but come from an indirection buffer,
   one pointer per output pixel and kernel position, laid out per MR-row tile exactly as the
   hybrid contract wants them:
       ind[t*ks*MR + s*MR + i] -> the k (= Cin/groups) floats of row t*MR+i in segment s
   (s = kh*KW + kw; taps in the padding point to a buffer of zeros). Hybrid kernels only.
   K is blocked by whole segments (about blk->kc steps per block, at least one segment), with
   the hybrid loop order: per block of segments, each tile's rows stay in L1 across the NR
   panels of an NC block while B's block of segments stays in L2. Without it, a 7x7x512 layer
   (ResNet-18 layer4: ks*k = 4608) re-read every 1.2 MB B panel from L3 for each tile.
   Tiles [tile_begin, tile_end) of g->m rows; ind covers those tiles from tile 0. */
LUTHIER_PRIVATE void luthier__gemm_compute_indirect(const luthier__kernel_entry *uk,
                                                    const luthier__gemm_blocking *blk,
                                                    const luthier__gemm_args *g, size_t ks,
                                                    const float *const *ind, size_t tile_begin,
                                                    size_t tile_end, size_t panel_begin,
                                                    size_t panel_end) {
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr;
    const size_t m0 = tile_begin * mr, m1 = luthier__min_sz(tile_end * mr, g->m);
    const size_t nlo = panel_begin * nr, nhi = luthier__min_sz(panel_end * nr, g->n);
    /* k is blocked by whole segments: about blk->kc steps (at least one segment) per block */
    const size_t sb = luthier__max_sz(1, blk->kc / (g->k ? g->k : 1));
    luthier_sgemm_ukernel_args u;
    size_t n0, s0, i, j, post_from;
    if (uk->kind != LUTHIER_KERNEL_HYBRID || m0 >= m1 || nlo >= nhi || g->k == 0 || ks == 0) return;
    memset(&u, 0, sizeof u);
    u.k = g->k;
    u.ldc = g->ldc;
    u.min = g->min;
    u.max = g->max;
    for (n0 = nlo; n0 < nhi; n0 += blk->nc) {
        const size_t nb = luthier__min_sz(blk->nc, nhi - n0);
        for (s0 = 0; s0 < ks; s0 += sb) {
            const size_t s1 = luthier__min_sz(ks, s0 + sb);
            const int first = s0 == 0, last = s1 == ks;
            u.ks = s1 - s0;
            u.flags = (first && !g->accumulate ? 0u : (unsigned)LUTHIER_UKERNEL_LOAD_C) |
                      (last && g->clamp ? (unsigned)LUTHIER_UKERNEL_CLAMP : 0u);
            /* the A tile's segments stay in L1 across the panels; B's block of segments in L2,
               and the next block (segments, else columns) on its way meanwhile */
            const size_t ps0 = last ? 0 : s1, pn0 = last ? n0 + nb : n0;
            luthier__prefetch_plan pf;
            luthier__prefetch_plan_init(&pf, blk, g, pn0, nhi, nlo, ps0 * g->k, (luthier__min_sz(ks, ps0 + sb) - ps0) * g->k,
                                        (luthier__div_up(m1 - m0, mr) - 1) * luthier__div_up(nb, nr), u.ks * (g->k / 2));
            for (i = post_from = m0; i < m1; i += mr) {
                u.m = luthier__min_sz(mr, m1 - i);
                u.a_rows = ind + (i / mr) * ks * mr + s0 * mr;
                for (j = n0; j < n0 + nb; j += nr) {
                    u.n = luthier__min_sz(nr, g->n - j);
                    u.b = luthier__packed_at(g->b, g->b_layout, j / nr, s0 * g->k);
                    u.bias = first && g->bias ? g->bias + j : NULL;
                    u.c = (float *)g->c + i * g->ldc + j;
                    u.prefetch = luthier__prefetch_give(&pf, &u.flags, i == m0);
                    if (uk->family == LUTHIER_KERNELS_F16) luthier__h16_hybrid_call(uk, &u, g->a_h16);
                    else uk->fn(&u);
                }
                if (last) luthier__act_rows(&g->post, (float *)g->c + n0, g->ldc, nb, &post_from, i + u.m, i + mr >= m1);
            }
        }
    }
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_GEMM_IMPLEMENTATION */
