/* luthier_kernels_x86.h - AVX2/FMA and AVX-512 GEMM microkernels of luthier (fp32, and fp32 over
   fp16 weights).
   Part of luthier (MIT license, see luthier.h). Compiled by luthier.h on x86-64 with GCC or
   Clang; each kernel carries its own target attribute, so the file builds without -mavx2 and
   the library picks the kernels at run time (cpuid).

   TABLE OF CONTENTS: >>list >>avx512 >>avx512-pack >>avx512fp16 >>depthwise >>avx2 >>transpose

   Every kernel is the broadcast form: a row of A is broadcast and multiplied with NR/W vectors
   of a packed B row (W = 16 lanes for AVX-512, 8 for AVX2), accumulating MR x NR/W registers.
   A kernel is one template specialised for every row count 1..MR (a switch on m), so edge tiles
   run straight-line code; edge columns use masked loads and stores (AVX-512 k-masks, AVX2
   vmaskmov). Interleaved kernels broadcast from the packed A panel (one pointer, embedded
   broadcasts); hybrid kernels broadcast from up to MR row pointers (what implicit-GEMM
   convolution feeds them). Given a prefetch range (luthier_sgemm_ukernel_args.prefetch: the
   driver's next B block), a hybrid kernel runs k in pairs with one prefetcht1 per pair (two
   with LUTHIER_UKERNEL_PREFETCH_DENSE).
*/
#ifndef LUTHIER__GEMM_IMPL_DONE
#error "luthier_kernels_x86.h is part of luthier: include luthier.h instead"
#endif
#if LUTHIER__SIMD_X86 && !defined(LUTHIER__KERNELS_X86_DONE) /* a no-op elsewhere (see LUTHIER__SIMD_X86) */
#define LUTHIER__KERNELS_X86_DONE /* include guard only: code tests LUTHIER__SIMD_X86 */

/* >>list: X(short name, isa, MR, NR, K unroll, kind, required features), best first. */
#define LUTHIER__UKERNELS_X86(X)                                                             \
    X(6x64__avx512f_hybrid, "avx512", 6, 64, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F)  \
    X(8x32__avx512f_hybrid, "avx512", 8, 32, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F)  \
    X(12x32__avx512f_hybrid, "avx512", 12, 32, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F)\
    X(16x16__avx512f_hybrid, "avx512", 16, 16, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F)\
    X(12x32__avx512f, "avx512", 12, 32, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX512F)  \
    X(14x32__avx512f, "avx512", 14, 32, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX512F)  \
    X(6x64__avx512f, "avx512", 6, 64, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX512F)    \
    X(6x16__avx2_fma_hybrid, "avx2", 6, 16, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX2_FMA)  \
    X(4x24__avx2_fma_hybrid, "avx2", 4, 24, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX2_FMA)  \
    X(6x16__avx2_fma, "avx2", 6, 16, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX2_FMA)    \
    X(4x24__avx2_fma, "avx2", 4, 24, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX2_FMA)

/* The F16W family (fp16 B widened on load, fp32 arithmetic): the hybrid tiles of the list above. */
#define LUTHIER__UKERNELS_F16W_X86(X)                                                                  \
    X(6x64__avx512f_hybrid_f16w, "avx512", 6, 64, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F)   \
    X(12x32__avx512f_hybrid_f16w, "avx512", 12, 32, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F) \
    X(16x16__avx512f_hybrid_f16w, "avx512", 16, 16, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX512F) \
    X(6x16__avx2_fma_hybrid_f16w, "avx2", 6, 16, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX2_FMA)   \
    X(4x24__avx2_fma_hybrid_f16w, "avx2", 4, 24, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_AVX2_FMA)

/* k steps ahead at which the few-row (memory-bound) kernels prefetch packed B */
#define LUTHIER__B_PREFETCH 24

/* LUTHIER__TARGET_AVX512 / LUTHIER__TARGET_AVX2: luthier.h (>>impl-config) */

#if defined(__clang__)
#define LUTHIER__UNROLL_K _Pragma("unroll 4")
#define LUTHIER__UNROLL _Pragma("unroll")
#else
#define LUTHIER__UNROLL_K _Pragma("GCC unroll 4")
#define LUTHIER__UNROLL _Pragma("GCC unroll 16")
#endif

/* switch (m) { case 1: F(p, 1, A...) ... case MR: F(p, MR, A...) }: F a tile function, A its
   parameters after the row count, in parentheses */
#define LUTHIER__UNPAREN(...) __VA_ARGS__
#define LUTHIER__CASE(F, r, A) case r: F(p, r, LUTHIER__UNPAREN A); break;
#define LUTHIER__CASES_4(F, A) LUTHIER__CASE(F, 1, A) LUTHIER__CASE(F, 2, A) LUTHIER__CASE(F, 3, A) LUTHIER__CASE(F, 4, A)
#define LUTHIER__CASES_6(F, A) LUTHIER__CASES_4(F, A) LUTHIER__CASE(F, 5, A) LUTHIER__CASE(F, 6, A)
#define LUTHIER__CASES_8(F, A) LUTHIER__CASES_6(F, A) LUTHIER__CASE(F, 7, A) LUTHIER__CASE(F, 8, A)
#define LUTHIER__CASES_12(F, A) \
    LUTHIER__CASES_8(F, A) LUTHIER__CASE(F, 9, A) LUTHIER__CASE(F, 10, A) LUTHIER__CASE(F, 11, A) LUTHIER__CASE(F, 12, A)
#define LUTHIER__CASES_14(F, A) LUTHIER__CASES_12(F, A) LUTHIER__CASE(F, 13, A) LUTHIER__CASE(F, 14, A)
#define LUTHIER__CASES_16(F, A) LUTHIER__CASES_14(F, A) LUTHIER__CASE(F, 15, A) LUTHIER__CASE(F, 16, A)

/* A kernel of straight-line row tiles: fn runs TILE(p, p->m, A...) for p->m in 1..MR (CASES:
   LUTHIER__CASES_<MR>); TARGET: its target attribute, ARGS: its argument struct. */
#define LUTHIER__DEFINE_TILES(TARGET, fn, ARGS, CASES, TILE, A)                                  \
    TARGET LUTHIER_PRIVATE void fn(const ARGS *p) {                                              \
        switch (p->m) {                                                                          \
            CASES(TILE, A)                                                                       \
        default: break;                                                                          \
        }                                                                                        \
    }

#ifdef __cplusplus
extern "C" {
#endif

/* Masks for AVX2 edge columns: 8 - rem leading -1s from (table + 8 - rem). */
static const int32_t luthier__avx2_mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                     0,  0,  0,  0,  0,  0,  0,  0};

/* The k loop of the fp32 tiles (luthier__avx512_tile, luthier__avx2_tile; kstep: the ISA's
   luthier__*_kstep): hybrid, per segment of MR row pointers, k in pairs behind one or two
   prefetches of the next B block when the driver gives one; interleaved, the packed A panel.
   Reads p, b, bstep, acc, r, R, NV, MR, H and hybrid of the tile; advances b. */
#define LUTHIER__X86_TILE_K(kstep)                                                                 \
    do {                                                                                           \
        if (hybrid) {                                                                              \
            const char *pf = (const char *)p->prefetch;                                            \
            size_t s, kk;                                                                          \
            for (s = 0; s < p->ks; s++) {                                                          \
                const float *ar[LUTHIER__MAX_MR];                                                  \
                LUTHIER__UNROLL for (r = 0; r < R; r++) ar[r] = p->a_rows[s * (size_t)MR + (size_t)r]; \
                kk = 0;                                                                            \
                if (pf && (p->flags & LUTHIER_UKERNEL_PREFETCH_DENSE)) /* one line per step */     \
                    for (; kk + 2 <= p->k; kk += 2, b += 2 * bstep, pf += 128) {                   \
                        _mm_prefetch(pf, _MM_HINT_T1);                                             \
                        _mm_prefetch(pf + 64, _MM_HINT_T1);                                        \
                        kstep(acc, b, ar, kk, R, NV, H);                                           \
                        kstep(acc, b + bstep, ar, kk + 1, R, NV, H);                               \
                    }                                                                              \
                else if (pf) /* the next B block toward L2: one line per 2 steps */                \
                    for (; kk + 2 <= p->k; kk += 2, b += 2 * bstep, pf += 64) {                    \
                        _mm_prefetch(pf, _MM_HINT_T1);                                             \
                        kstep(acc, b, ar, kk, R, NV, H);                                           \
                        kstep(acc, b + bstep, ar, kk + 1, R, NV, H);                               \
                    }                                                                              \
                LUTHIER__UNROLL_K for (; kk < p->k; kk++, b += bstep) kstep(acc, b, ar, kk, R, NV, H); \
            }                                                                                      \
        } else {                                                                                   \
            const float *a = p->a;                                                                 \
            size_t kk;                                                                             \
            LUTHIER__UNROLL_K for (kk = 0; kk < p->k; kk++, b += bstep, a += MR) {                 \
                const float *ar[LUTHIER__MAX_MR];                                                  \
                LUTHIER__UNROLL for (r = 0; r < R; r++) ar[r] = a + r;                             \
                kstep(acc, b, ar, 0, R, NV, H);                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The fp32 tile of an ISA: luthier__<isa>_tile(p, R, NV, MR, hybrid, H), R rows of NV vectors
   (NVMAX at most): bias (or zeros), the k loop on luthier__<isa>_kstep, + C under LOAD_C
   (fetched into L1 during the k loop), the clamp, masked stores. The vector ops, prefix O: O_T
   the vector of O_W floats, O_M a column mask, O_COLMASK(m, n, lo) the mask of the columns
   [lo, lo + O_W) below n, O_LDM(ptr, m) / O_STM(ptr, m, v) masked load (zeros) and store,
   O_ZERO, O_ADD, O_MIN, O_MAX, O_SET1. */
#define LUTHIER__X86_TILE_DEFINE(isa, O, NVMAX, TARGET)                                            \
    TARGET static inline __attribute__((always_inline)) void                                       \
    luthier__##isa##_tile(const luthier_sgemm_ukernel_args *p, const int R, const int NV, const int MR, \
                          const int hybrid, const int H) {                                         \
        O##_T acc[LUTHIER__MAX_MR][NVMAX];                                                         \
        O##_M mask[NVMAX];                                                                         \
        const char *b = (const char *)(const void *)p->b;                                          \
        const size_t bstep = O##_W * (size_t)NV * LUTHIER__BSZ(H); /* bytes of B per step of k */  \
        float *c = p->c;                                                                           \
        const size_t ldc = p->ldc;                                                                 \
        int r, v;                                                                                  \
        LUTHIER__UNROLL for (v = 0; v < NV; v++) O##_COLMASK(mask[v], p->n, (size_t)v * O##_W);    \
        if (p->flags & LUTHIER_UKERNEL_LOAD_C)                                                     \
            LUTHIER__UNROLL for (r = 0; r < R; r++)                                                \
                LUTHIER__UNROLL for (v = 0; v < NV; v++)                                           \
                    _mm_prefetch((const char *)(c + (size_t)r * ldc + O##_W * v), _MM_HINT_T0);    \
        if (p->bias) { /* (under LOAD_C too: a fused residual add) */                              \
            LUTHIER__UNROLL for (v = 0; v < NV; v++) {                                             \
                const O##_T bv = O##_LDM(p->bias + O##_W * v, mask[v]);                            \
                LUTHIER__UNROLL for (r = 0; r < R; r++) acc[r][v] = bv;                            \
            }                                                                                      \
        } else {                                                                                   \
            LUTHIER__UNROLL for (r = 0; r < R; r++)                                                \
                LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = O##_ZERO();                   \
        }                                                                                          \
        LUTHIER__X86_TILE_K(luthier__##isa##_kstep);                                               \
        if (p->flags & LUTHIER_UKERNEL_LOAD_C) {                                                   \
            LUTHIER__UNROLL for (r = 0; r < R; r++)                                                \
                LUTHIER__UNROLL for (v = 0; v < NV; v++)                                           \
                    acc[r][v] = O##_ADD(acc[r][v], O##_LDM(c + (size_t)r * ldc + O##_W * v, mask[v])); \
        }                                                                                          \
        if (p->flags & LUTHIER_UKERNEL_CLAMP) {                                                    \
            const O##_T lo = O##_SET1(p->min), hi = O##_SET1(p->max);                              \
            LUTHIER__UNROLL for (r = 0; r < R; r++)                                                \
                LUTHIER__UNROLL for (v = 0; v < NV; v++)                                           \
                    acc[r][v] = O##_MIN(hi, O##_MAX(lo, acc[r][v]));                               \
        }                                                                                          \
        LUTHIER__UNROLL for (r = 0; r < R; r++)                                                    \
            LUTHIER__UNROLL for (v = 0; v < NV; v++)                                               \
                O##_STM(c + (size_t)r * ldc + O##_W * v, mask[v], acc[r][v]);                      \
    }

/* >>avx512 ===================================================================================== */

/* B (packed, 16 * NV elements per step) holds fp32, or fp16 when H (the F16W kernels: widened
   by vcvtph2ps on load; the same code otherwise). */
#define LUTHIER__BSZ(H) ((H) ? 2 : 4)

/* One step of k: NV vectors of the packed B row times R broadcast values of A (a[r][kk]). */
LUTHIER__TARGET_AVX512 static inline __attribute__((always_inline)) void
luthier__avx512_kstep(__m512 acc[][4], const char *b, const float *const *a, size_t kk, const int R,
                      const int NV, const int H) {
    __m512 bv[4];
    int r, v;
    LUTHIER__UNROLL for (v = 0; v < NV; v++) {
        const char *bp = b + 16 * v * LUTHIER__BSZ(H);
        if (R <= 2) /* memory-bound (GEMV-like): run ahead of the B stream */
            _mm_prefetch(bp + 16 * NV * LUTHIER__BSZ(H) * LUTHIER__B_PREFETCH, _MM_HINT_T0);
        bv[v] = H ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)bp))
                  : _mm512_loadu_ps((const float *)(const void *)bp);
    }
    LUTHIER__UNROLL for (r = 0; r < R; r++) {
        const __m512 av = _mm512_set1_ps(a[r][kk]);
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
}

#define LUTHIER__V16_T __m512
#define LUTHIER__V16_M __mmask16
#define LUTHIER__V16_W 16
#define LUTHIER__V16_COLMASK(m, n, lo)                                                             \
    do {                                                                                           \
        const size_t rem = (n) > (lo) ? (n) - (lo) : 0;                                            \
        m = (__mmask16)(rem >= 16 ? 0xffffu : (1u << rem) - 1u);                                   \
    } while (0)
#define LUTHIER__V16_LDM(ptr, m) _mm512_maskz_loadu_ps((m), (ptr))
#define LUTHIER__V16_STM(ptr, m, v) _mm512_mask_storeu_ps((ptr), (m), (v))
#define LUTHIER__V16_ZERO _mm512_setzero_ps
#define LUTHIER__V16_ADD _mm512_add_ps
#define LUTHIER__V16_MIN _mm512_min_ps
#define LUTHIER__V16_MAX _mm512_max_ps
#define LUTHIER__V16_SET1 _mm512_set1_ps
LUTHIER__X86_TILE_DEFINE(avx512, LUTHIER__V16, 4, LUTHIER__TARGET_AVX512)

/* A kernel, its tile's parameters A = (NV, MR, hybrid, H) */
#define LUTHIER__DEFINE_AVX512(sname, CASES, A)                                                \
    LUTHIER__DEFINE_TILES(LUTHIER__TARGET_AVX512, luthier_sgemm_ukernel_##sname, luthier_sgemm_ukernel_args, CASES, \
                          luthier__avx512_tile, A)
LUTHIER__DEFINE_AVX512(12x32__avx512f, LUTHIER__CASES_12, (2, 12, 0, 0))
LUTHIER__DEFINE_AVX512(12x32__avx512f_hybrid, LUTHIER__CASES_12, (2, 12, 1, 0))
LUTHIER__DEFINE_AVX512(14x32__avx512f, LUTHIER__CASES_14, (2, 14, 0, 0))
LUTHIER__DEFINE_AVX512(6x64__avx512f, LUTHIER__CASES_6, (4, 6, 0, 0))
LUTHIER__DEFINE_AVX512(8x32__avx512f_hybrid, LUTHIER__CASES_8, (2, 8, 1, 0))
LUTHIER__DEFINE_AVX512(6x64__avx512f_hybrid, LUTHIER__CASES_6, (4, 6, 1, 0))
LUTHIER__DEFINE_AVX512(16x16__avx512f_hybrid, LUTHIER__CASES_16, (1, 16, 1, 0))
/* F16W: the same hybrid tiles over fp16 B */
LUTHIER__DEFINE_AVX512(6x64__avx512f_hybrid_f16w, LUTHIER__CASES_6, (4, 6, 1, 1))
LUTHIER__DEFINE_AVX512(12x32__avx512f_hybrid_f16w, LUTHIER__CASES_12, (2, 12, 1, 1))
LUTHIER__DEFINE_AVX512(16x16__avx512f_hybrid_f16w, LUTHIER__CASES_16, (1, 16, 1, 1))

/* >>avx512-pack: A packing for the interleaved kernels (any MR <= 16). 16 k-steps of up to 16
   rows are loaded as row vectors and transposed in registers (unpack 32-bit, unpack 64-bit,
   then a 4x4 transpose of 128-bit lanes); each k-step's MR floats are then stored
   contiguously. The scalar loop costs as much as the compute itself when N is small. */
LUTHIER__TARGET_AVX512 LUTHIER_PRIVATE void luthier__pack_a_avx512(const float *a, size_t lda,
                                                                  size_t mb, size_t kb, size_t mr,
                                                                  float *dst) {
    const __mmask16 store_mask = (__mmask16)((1u << mr) - 1u);
    size_t i0, kk;
    int r, c, l;
    for (i0 = 0; i0 < mb; i0 += mr) {
        const int mv = (int)(mb - i0 < mr ? mb - i0 : mr);
        for (kk = 0; kk < kb; kk += 16) {
            const int kv = (int)(kb - kk < 16 ? kb - kk : 16);
            const __mmask16 load_mask = (__mmask16)(kv >= 16 ? 0xffffu : (1u << kv) - 1u);
            __m512 v[16], x[16];
            for (r = 0; r < 16; r++)
                v[r] = r < mv ? _mm512_maskz_loadu_ps(load_mask, a + (i0 + (size_t)r) * lda + kk)
                              : _mm512_setzero_ps();
            for (r = 0; r < 16; r += 2) {
                x[r] = _mm512_unpacklo_ps(v[r], v[r + 1]);
                x[r + 1] = _mm512_unpackhi_ps(v[r], v[r + 1]);
            }
            /* v[4j + c], lane L: rows 4j..4j+3 of column 4L + c */
            for (r = 0; r < 16; r += 4) {
                const __m512d x0 = _mm512_castps_pd(x[r]), x1 = _mm512_castps_pd(x[r + 1]);
                const __m512d x2 = _mm512_castps_pd(x[r + 2]), x3 = _mm512_castps_pd(x[r + 3]);
                v[r + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(x0, x2));
                v[r + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x0, x2));
                v[r + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(x1, x3));
                v[r + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(x1, x3));
            }
            /* 4x4 transpose of 128-bit lanes: x[4L + c] = column 4L + c of all 16 rows */
            for (c = 0; c < 4; c++) {
                const __m512 u0 = _mm512_shuffle_f32x4(v[c], v[4 + c], 0x44);
                const __m512 u1 = _mm512_shuffle_f32x4(v[c], v[4 + c], 0xEE);
                const __m512 u2 = _mm512_shuffle_f32x4(v[8 + c], v[12 + c], 0x44);
                const __m512 u3 = _mm512_shuffle_f32x4(v[8 + c], v[12 + c], 0xEE);
                x[0 + c] = _mm512_shuffle_f32x4(u0, u2, 0x88);
                x[4 + c] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
                x[8 + c] = _mm512_shuffle_f32x4(u1, u3, 0x88);
                x[12 + c] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
            }
            for (l = 0; l < kv; l++) _mm512_mask_storeu_ps(dst + (kk + (size_t)l) * mr, store_mask, x[l]);
        }
        dst += kb * mr;
    }
}

/* luthier__pack_a into fp16 (the F16 kernels' A): each MR-row panel packed in chunks of 64
   k-steps as fp32 by the transposing packer, then rounded to fp16 in order (vcvtps2ph, round to
   nearest even: the bits of luthier__f32_to_f16). */
LUTHIER__TARGET_AVX512 LUTHIER_PRIVATE void luthier__pack_a_f16_avx512(const float *a, size_t lda, size_t mb,
                                                                      size_t kb, size_t mr, uint16_t *dst) {
    float tmp[64 * LUTHIER__MAX_MR];
    size_t i0, kk, e, n;
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = mb - i0 < mr ? mb - i0 : mr;
        for (kk = 0; kk < kb; kk += 64) {
            const size_t kv = kb - kk < 64 ? kb - kk : 64;
            luthier__pack_a_avx512(a + i0 * lda + kk, lda, mv, kv, mr, tmp);
            for (e = 0, n = kv * mr; e < n; e += 16) {
                const __mmask16 mk = (__mmask16)(n - e >= 16 ? 0xffffu : (1u << (n - e)) - 1u);
                const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(mk, tmp + e), _MM_FROUND_TO_NEAREST_INT);
                if (n - e >= 16) _mm256_storeu_si256((__m256i *)(void *)(dst + kk * mr + e), h);
                else {
                    uint16_t t[16];
                    _mm256_storeu_si256((__m256i *)(void *)t, h);
                    memcpy(dst + kk * mr + e, t, (n - e) * sizeof(uint16_t));
                }
            }
        }
    }
}

/* >>avx512fp16: the F16 family on AVX-512 FP16 (Sapphire Rapids and later): interleaved tiles
   of MR rows x 32 * NV columns in fp16 arithmetic (vfmadd231ph, 32 lanes: twice the fp32 rate).
   A is the packed fp16 panel (a[kk * MR + i], broadcast), B the packed fp16 panel. The sums stay
   in fp16 for the k steps of one call (the driver's K block; LOAD_C adds them to the fp32 C);
   the epilogue widens them (vcvtph2psx) and adds C, the bias and the clamp in fp32, as the
   NEON 8x24 kernel does. */
#if LUTHIER__HAVE_AVX512FP16
#define LUTHIER__UKERNELS_F16_X86(X)                                                                  \
    X(12x64__avx512fp16, "avx512fp16", 12, 64, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX512FP16) \
    X(12x32__avx512fp16, "avx512fp16", 12, 32, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_AVX512FP16)

/* acc += broadcast(the fp16 at mem) * b, the broadcast embedded in the FMA's memory operand
   ({1to32}: a load, no shuffle). Compilers emit vpbroadcastw for _mm512_set1_ph, a shuffle-port
   uop per row that held the tile at half its FMA rate (llvm-mca sapphirerapids: 23 cycles per
   step of 12x64 against 13.4 with the embedded broadcast, 12 ideal). AT&T syntax. */
#define LUTHIER__FMA_PH_BCST(acc, b, mem) __asm__("vfmadd231ph %1%{1to32%}, %2, %0" : "+v"(acc) : "m"(mem), "v"(b))

/* 32 sums of row r from column c0: widened in two halves of 16, + C + bias, clamped, stored. */
LUTHIER__TARGET_AVX512FP16 static inline __attribute__((always_inline)) void
luthier__avx512fp16_store(const luthier_sgemm_ukernel_args *p, __m512h acc, size_t r, size_t c0) {
    int h;
    LUTHIER__UNROLL for (h = 0; h < 2; h++) {
        const size_t lo = c0 + 16 * (size_t)h, rem = p->n > lo ? p->n - lo : 0;
        const __mmask16 mk = (__mmask16)(rem >= 16 ? 0xffffu : (1u << rem) - 1u);
        const __m256h half = h ? _mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(acc), 1))
                               : _mm512_castph512_ph256(acc);
        float *c = p->c + r * p->ldc + lo;
        __m512 v = _mm512_cvtxph_ps(half);
        if (!mk) return;
        if (p->flags & LUTHIER_UKERNEL_LOAD_C) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, c));
        if (p->bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, p->bias + lo));
        if (p->flags & LUTHIER_UKERNEL_CLAMP)
            v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(p->min)), _mm512_set1_ps(p->max));
        _mm512_mask_storeu_ps(c, mk, v);
    }
}

LUTHIER__TARGET_AVX512FP16 static inline __attribute__((always_inline)) void
luthier__avx512fp16_tile(const luthier_sgemm_ukernel_args *p, const int R, const int NV, const int MR) {
    __m512h acc[12][2];
    const uint16_t *a = (const uint16_t *)(const void *)p->a, *b = (const uint16_t *)(const void *)p->b;
    size_t kk;
    int r, v;
    LUTHIER__UNROLL for (r = 0; r < R; r++)
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ph();
    LUTHIER__UNROLL_K for (kk = 0; kk < p->k; kk++, a += MR, b += 32 * NV) {
        __m512h bv[2];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) bv[v] = _mm512_loadu_ph(b + 32 * v);
        LUTHIER__UNROLL for (r = 0; r < R; r++)
            LUTHIER__UNROLL for (v = 0; v < NV; v++) LUTHIER__FMA_PH_BCST(acc[r][v], bv[v], a[r]);
    }
    LUTHIER__UNROLL for (r = 0; r < R; r++)
        LUTHIER__UNROLL for (v = 0; v < NV; v++) luthier__avx512fp16_store(p, acc[r][v], (size_t)r, 32 * (size_t)v);
}

#define LUTHIER__DEFINE_AVX512FP16(sname, NV, CASES)                                           \
    LUTHIER__DEFINE_TILES(LUTHIER__TARGET_AVX512FP16, luthier_sgemm_ukernel_##sname, luthier_sgemm_ukernel_args, CASES, \
                          luthier__avx512fp16_tile, (NV, 12))
LUTHIER__DEFINE_AVX512FP16(12x64__avx512fp16, 2, LUTHIER__CASES_12)
LUTHIER__DEFINE_AVX512FP16(12x32__avx512fp16, 1, LUTHIER__CASES_12)
#endif /* LUTHIER__HAVE_AVX512FP16 */

/* >>depthwise: one output pixel of a depthwise convolution over all C channels: the channel
   vector is accumulated in registers across every valid tap (x[t], w[t]: the tap's input pixel
   and its weights, C floats each), then bias/residual and the clamp, one store. */
#define LUTHIER__DW_ARGS                                                                        \
    float *o, const float *const *x, const float *const *w, int taps, const float *bias,      \
        int accumulate, int clamp, float lo, float hi, size_t C

/* Two channel vectors at a time and even/odd taps in separate accumulators: four independent
   FMA chains, so a 3x3 filter is not bound by the FMA latency (one chain of 9 dependent FMAs
   per vector ran at a quarter of the throughput). */
LUTHIER__TARGET_AVX512 LUTHIER_PRIVATE void luthier__dw_pixel_avx512(LUTHIER__DW_ARGS) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    size_t c;
    int t;
    for (c = 0; c < C; c += 32) {
        const size_t r0 = C - c, r1 = r0 > 16 ? r0 - 16 : 0;
        const __mmask16 m0 = (__mmask16)(r0 >= 16 ? 0xffffu : (1u << r0) - 1u);
        const __mmask16 m1 = (__mmask16)(r1 >= 16 ? 0xffffu : (1u << r1) - 1u);
        __m512 a0 = accumulate ? _mm512_maskz_loadu_ps(m0, o + c) : _mm512_setzero_ps();
        __m512 a1 = accumulate ? _mm512_maskz_loadu_ps(m1, o + c + 16) : _mm512_setzero_ps();
        __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
        if (bias) {
            a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(m0, bias + c));
            a1 = _mm512_add_ps(a1, _mm512_maskz_loadu_ps(m1, bias + c + 16));
        }
        for (t = 0; t + 1 < taps; t += 2) {
            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, x[t] + c), _mm512_maskz_loadu_ps(m0, w[t] + c), a0);
            a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, x[t] + c + 16), _mm512_maskz_loadu_ps(m1, w[t] + c + 16), a1);
            b0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, x[t + 1] + c), _mm512_maskz_loadu_ps(m0, w[t + 1] + c), b0);
            b1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, x[t + 1] + c + 16), _mm512_maskz_loadu_ps(m1, w[t + 1] + c + 16), b1);
        }
        if (t < taps) {
            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, x[t] + c), _mm512_maskz_loadu_ps(m0, w[t] + c), a0);
            a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, x[t] + c + 16), _mm512_maskz_loadu_ps(m1, w[t] + c + 16), a1);
        }
        a0 = _mm512_add_ps(a0, b0);
        a1 = _mm512_add_ps(a1, b1);
        if (clamp) {
            a0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, a0));
            a1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, a1));
        }
        _mm512_mask_storeu_ps(o + c, m0, a0);
        if (m1) _mm512_mask_storeu_ps(o + c + 16, m1, a1);
    }
}

/* Runs of output pixels of a 3x3 depthwise layer with dilation 1 (luthier__dw_run): per
   32-channel chunk the 9 x 2 weight vectors stay in registers while the pixels of every run
   stream past (on a small image the chunk's input rows then stay in L1 from one output row to
   the next); successive pixels are independent FMA chains. Taps outside the row or in a NULL
   row are left out (the padding's zeros), so border pixels take the same path. */
LUTHIER__TARGET_AVX512 LUTHIER_PRIVATE void luthier__dw_rows3x3_avx512(
    const luthier__dw_run *runs, size_t nruns, int64_t stride, int64_t in_w, const float *w,
    const float *bias, int accumulate, int clamp, float lo, float hi, size_t C) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    size_t c, p, q;
    int t;
    for (c = 0; c < C; c += 32) {
        const size_t r0 = C - c, r1 = r0 > 16 ? r0 - 16 : 0;
        const __mmask16 m0 = (__mmask16)(r0 >= 16 ? 0xffffu : (1u << r0) - 1u);
        const __mmask16 m1 = (__mmask16)(r1 >= 16 ? 0xffffu : (1u << r1) - 1u);
        __m512 w0[9], w1[9];
        const __m512 b0 = bias ? _mm512_maskz_loadu_ps(m0, bias + c) : _mm512_setzero_ps();
        const __m512 b1 = bias ? _mm512_maskz_loadu_ps(m1, bias + c + 16) : _mm512_setzero_ps();
        LUTHIER__UNROLL for (t = 0; t < 9; t++) {
            w0[t] = _mm512_maskz_loadu_ps(m0, w + (size_t)t * C + c);
            w1[t] = _mm512_maskz_loadu_ps(m1, w + (size_t)t * C + c + 16);
        }
        for (q = 0; q < nruns; q++) {
            const float *const *rows = runs[q].rows;
            unsigned rmask = 0;
            for (t = 0; t < 3; t++)
                if (rows[t]) rmask |= 7u << (3 * t);
            for (p = 0; p < runs[q].npix; p++) {
                const int64_t ix = runs[q].ix0 + (int64_t)p * stride;
                float *op = runs[q].o + p * C + c;
                __m512 a0 = accumulate ? _mm512_add_ps(b0, _mm512_maskz_loadu_ps(m0, op)) : b0;
                __m512 a1 = accumulate ? _mm512_add_ps(b1, _mm512_maskz_loadu_ps(m1, op + 16)) : b1;
                unsigned m = rmask;
                if (ix < 0 || ix + 2 >= in_w) { /* a border column: drop the taps outside the row */
                    LUTHIER__UNROLL for (t = 0; t < 3; t++)
                        if (ix + t < 0 || ix + t >= in_w) m &= ~(0x49u << t);
                }
                if (m == 0x1ffu) {
                    LUTHIER__UNROLL for (t = 0; t < 9; t++) {
                        const float *x = rows[t / 3] + (size_t)(ix + t % 3) * C + c;
                        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, x), w0[t], a0);
                        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, x + 16), w1[t], a1);
                    }
                } else {
                    LUTHIER__UNROLL for (t = 0; t < 9; t++) {
                        if (m >> t & 1u) {
                            const float *x = rows[t / 3] + (size_t)(ix + t % 3) * C + c;
                            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, x), w0[t], a0);
                            a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, x + 16), w1[t], a1);
                        }
                    }
                }
                if (clamp) {
                    a0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, a0));
                    a1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, a1));
                }
                _mm512_mask_storeu_ps(op, m0, a0);
                if (m1) _mm512_mask_storeu_ps(op + 16, m1, a1);
            }
        }
    }
}

LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE void luthier__dw_pixel_avx2(LUTHIER__DW_ARGS) {
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    size_t c;
    int t;
    for (c = 0; c < C; c += 8) {
        const size_t rem = C - c < 8 ? C - c : 8;
        const __m256i m = _mm256_loadu_si256((const __m256i *)(luthier__avx2_mask_table + 8 - rem));
        __m256 acc = accumulate ? _mm256_maskload_ps(o + c, m) : _mm256_setzero_ps();
        __m256 odd = _mm256_setzero_ps();
        if (bias) acc = _mm256_add_ps(acc, _mm256_maskload_ps(bias + c, m));
        for (t = 0; t + 1 < taps; t += 2) {
            acc = _mm256_fmadd_ps(_mm256_maskload_ps(x[t] + c, m), _mm256_maskload_ps(w[t] + c, m), acc);
            odd = _mm256_fmadd_ps(_mm256_maskload_ps(x[t + 1] + c, m), _mm256_maskload_ps(w[t + 1] + c, m), odd);
        }
        if (t < taps) acc = _mm256_fmadd_ps(_mm256_maskload_ps(x[t] + c, m), _mm256_maskload_ps(w[t] + c, m), acc);
        acc = _mm256_add_ps(acc, odd);
        if (clamp) acc = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));
        _mm256_maskstore_ps(o + c, m, acc);
    }
}

/* >>avx2 ======================================================================================= */


/* One step of k: NV vectors of the packed B row times R broadcast values of A (a[r] + kk). */
LUTHIER__TARGET_AVX2 static inline __attribute__((always_inline)) void
luthier__avx2_kstep(__m256 acc[][3], const char *b, const float *const *a, size_t kk, const int R,
                    const int NV, const int H) {
    __m256 bv[3];
    int r, v;
    LUTHIER__UNROLL for (v = 0; v < NV; v++) {
        const char *bp = b + 8 * v * LUTHIER__BSZ(H);
        bv[v] = H ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)bp))
                  : _mm256_loadu_ps((const float *)(const void *)bp);
    }
    LUTHIER__UNROLL for (r = 0; r < R; r++) {
        const __m256 av = _mm256_broadcast_ss(a[r] + kk);
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
}

#define LUTHIER__V8_T __m256
#define LUTHIER__V8_M __m256i
#define LUTHIER__V8_W 8
#define LUTHIER__V8_COLMASK(m, n, lo)                                                              \
    do {                                                                                           \
        const size_t rem = (n) > (lo) ? ((n) - (lo) < 8 ? (n) - (lo) : 8) : 0;                     \
        m = _mm256_loadu_si256((const __m256i *)(luthier__avx2_mask_table + 8 - rem));             \
    } while (0)
#define LUTHIER__V8_LDM(ptr, m) _mm256_maskload_ps((ptr), (m))
#define LUTHIER__V8_STM(ptr, m, v) _mm256_maskstore_ps((ptr), (m), (v))
#define LUTHIER__V8_ZERO _mm256_setzero_ps
#define LUTHIER__V8_ADD _mm256_add_ps
#define LUTHIER__V8_MIN _mm256_min_ps
#define LUTHIER__V8_MAX _mm256_max_ps
#define LUTHIER__V8_SET1 _mm256_set1_ps
LUTHIER__X86_TILE_DEFINE(avx2, LUTHIER__V8, 3, LUTHIER__TARGET_AVX2)

/* A kernel, its tile's parameters A = (NV, MR, hybrid, H) */
#define LUTHIER__DEFINE_AVX2(sname, CASES, A)                                                  \
    LUTHIER__DEFINE_TILES(LUTHIER__TARGET_AVX2, luthier_sgemm_ukernel_##sname, luthier_sgemm_ukernel_args, CASES, \
                          luthier__avx2_tile, A)
LUTHIER__DEFINE_AVX2(6x16__avx2_fma, LUTHIER__CASES_6, (2, 6, 0, 0))
LUTHIER__DEFINE_AVX2(6x16__avx2_fma_hybrid, LUTHIER__CASES_6, (2, 6, 1, 0))
LUTHIER__DEFINE_AVX2(4x24__avx2_fma, LUTHIER__CASES_4, (3, 4, 0, 0))
LUTHIER__DEFINE_AVX2(4x24__avx2_fma_hybrid, LUTHIER__CASES_4, (3, 4, 1, 0))
LUTHIER__DEFINE_AVX2(6x16__avx2_fma_hybrid_f16w, LUTHIER__CASES_6, (2, 6, 1, 1))
LUTHIER__DEFINE_AVX2(4x24__avx2_fma_hybrid_f16w, LUTHIER__CASES_4, (3, 4, 1, 1))

/* >>transpose: y[a * ys + b] = x[b * xs + a] for a < na, b < nb (luthier__transpose_neon's
   contract): the layout edges (NCHW <-> NHWC) and the tiles of luthier__op_transpose. 8 x 8
   blocks in AVX registers (unpack, shuffle, 128-bit lane permutes) or 4 x 4 in SSE ones, the
   edges one float at a time; a in blocks of 64, so that the rows of y being written stay in
   L1 while b runs. */
#define LUTHIER__TRANSPOSE_X86_BLOCK 64

/* the edges of a block that the vectors left: a in [a_from, a1) for b in [b0, b1), and every
   a for b in [b1, nb). Not inlined: under the AVX2 target the compiler would turn the strided
   reads into gathers, which run slower than these scalar loads (3-channel images: 1.7x). */
LUTHIER__NOINLINE LUTHIER_PRIVATE void luthier__transpose_x86_edges(const float *x, size_t xs, float *y, size_t ys, size_t b1, size_t nb,
                                                  size_t a0, size_t a_from, size_t a1) {
    size_t a, b;
    for (a = a_from; a < a1; a++) /* (rows of y in turn: short runs of b are contiguous there) */
        for (b = 0; b < b1; b++) y[a * ys + b] = x[b * xs + a];
    for (a = a0; a < a1; a++)
        for (b = b1; b < nb; b++) y[a * ys + b] = x[b * xs + a];
}

LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE void luthier__transpose_avx2(const float *x, size_t xs, float *y, size_t ys, size_t nb,
                                                                 size_t na) {
    size_t a0, a = 0, b = 0;
    for (a0 = 0; a0 < na; a0 += LUTHIER__TRANSPOSE_X86_BLOCK) {
        const size_t a1 = na - a0 < LUTHIER__TRANSPOSE_X86_BLOCK ? na : a0 + LUTHIER__TRANSPOSE_X86_BLOCK;
        for (b = 0; b + 8 <= nb; b += 8) {
            const float *xb = x + b * xs;
            for (a = a0; a + 8 <= a1; a += 8) {
                __m256 r0 = _mm256_loadu_ps(xb + a), r1 = _mm256_loadu_ps(xb + xs + a);
                __m256 r2 = _mm256_loadu_ps(xb + 2 * xs + a), r3 = _mm256_loadu_ps(xb + 3 * xs + a);
                __m256 r4 = _mm256_loadu_ps(xb + 4 * xs + a), r5 = _mm256_loadu_ps(xb + 5 * xs + a);
                __m256 r6 = _mm256_loadu_ps(xb + 6 * xs + a), r7 = _mm256_loadu_ps(xb + 7 * xs + a);
                const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
                const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
                const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
                const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
                float *d = y + a * ys + b;
                r0 = _mm256_shuffle_ps(t0, t2, 0x44), r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
                r2 = _mm256_shuffle_ps(t1, t3, 0x44), r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
                r4 = _mm256_shuffle_ps(t4, t6, 0x44), r5 = _mm256_shuffle_ps(t4, t6, 0xEE);
                r6 = _mm256_shuffle_ps(t5, t7, 0x44), r7 = _mm256_shuffle_ps(t5, t7, 0xEE);
                _mm256_storeu_ps(d, _mm256_permute2f128_ps(r0, r4, 0x20));
                _mm256_storeu_ps(d + ys, _mm256_permute2f128_ps(r1, r5, 0x20));
                _mm256_storeu_ps(d + 2 * ys, _mm256_permute2f128_ps(r2, r6, 0x20));
                _mm256_storeu_ps(d + 3 * ys, _mm256_permute2f128_ps(r3, r7, 0x20));
                _mm256_storeu_ps(d + 4 * ys, _mm256_permute2f128_ps(r0, r4, 0x31));
                _mm256_storeu_ps(d + 5 * ys, _mm256_permute2f128_ps(r1, r5, 0x31));
                _mm256_storeu_ps(d + 6 * ys, _mm256_permute2f128_ps(r2, r6, 0x31));
                _mm256_storeu_ps(d + 7 * ys, _mm256_permute2f128_ps(r3, r7, 0x31));
            }
        }
        luthier__transpose_x86_edges(x, xs, y, ys, b, nb, a0, nb >= 8 ? a : a0, a1);
    }
}

LUTHIER_PRIVATE void luthier__transpose_sse2(const float *x, size_t xs, float *y, size_t ys, size_t nb, size_t na) {
    size_t a0, a = 0, b = 0;
    for (a0 = 0; a0 < na; a0 += LUTHIER__TRANSPOSE_X86_BLOCK) {
        const size_t a1 = na - a0 < LUTHIER__TRANSPOSE_X86_BLOCK ? na : a0 + LUTHIER__TRANSPOSE_X86_BLOCK;
        for (b = 0; b + 4 <= nb; b += 4) {
            const float *xb = x + b * xs;
            for (a = a0; a + 4 <= a1; a += 4) {
                __m128 r0 = _mm_loadu_ps(xb + a), r1 = _mm_loadu_ps(xb + xs + a);
                __m128 r2 = _mm_loadu_ps(xb + 2 * xs + a), r3 = _mm_loadu_ps(xb + 3 * xs + a);
                float *d = y + a * ys + b;
                _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                _mm_storeu_ps(d, r0);
                _mm_storeu_ps(d + ys, r1);
                _mm_storeu_ps(d + 2 * ys, r2);
                _mm_storeu_ps(d + 3 * ys, r3);
            }
        }
        luthier__transpose_x86_edges(x, xs, y, ys, b, nb, a0, nb >= 4 ? a : a0, a1);
    }
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER__KERNELS_X86_DONE */
