/* luthier_kernels_neon.h - AArch64 NEON (Armv8.0-A baseline) fp32 GEMM microkernels of luthier,
   and its NEON fp32 depthwise convolution and transposes (>>depthwise, >>transpose).
   Part of luthier (MIT license, see luthier.h). Compiled by luthier.h on AArch64 with GCC or
   Clang unless LUTHIER_NO_NEON_KERNELS is defined. Every instruction is Armv8.0-A Advanced SIMD
   (no dotprod, no fp16), so the kernels run on Cortex-A53/A55/A57/A72/A73/A76 and Neoverse.

   TABLE OF CONTENTS: >>list >>common >>8x12 >>8x12-a53 >>8x6 >>6x16 >>6x16-a53 >>4x24 >>8x4 >>pack >>depthwise >>transpose
   (then the Armv8.2 FP16 kernels, run only where the CPU has FP16: >>f16 >>f16-a55 >>f16-hybrid
   >>f16-hybrid-a55)

   kernel                 kind         MR x NR  k unroll  accumulators  inner product
   8x12__neonfma          interleaved   8 x 12     4      v8-v31  (24)  fmla C.4s, B.4s, A.s[row]
   8x6__neonfma           interleaved   8 x 6      4      v20-v31 (12)  fmla C'.4s, A.4s, B.s[col]
   6x16__neonfma_hybrid   hybrid        6 x 16     4      v8-v31  (24)  fmla C.4s, B.4s, A_row.s[k]
   4x24__neonfma_hybrid   hybrid        4 x 24     4      v8-v31  (24)  fmla C.4s, B.4s, A_row.s[k]
   8x4__neonfma_hybrid    hybrid        8 x 4      4      v24-v31  (8)  fmla C.4s, B.4s, A_row.s[k]
   8x12__neonfma_a53      interleaved   8 x 12     4      v8-v31  (24)  as 8x12, for in-order cores
   6x16__neonfma_hybrid_a53  hybrid     6 x 16     4      v8-v31  (24)  as 6x16, for in-order cores

   How the kernels are built (layouts in the style of Arm Compute Library's kernel family):
   - Each kernel is one GCC extended-asm statement (GCC and Clang) that owns its registers from
     start to end: accumulator set-up (C under LOAD_C, where the C code has added the bias if
     any; else bias broadcast down the rows; else 0), the k loops, the clamp and the store.
     A/B staging registers and accumulators are fixed (the register map is in each section).
     24 accumulators cannot be asm operands (GCC allows 30 operands and counts "+w" twice),
     so they never leave the asm statement.
   - k loops: 4 steps of k per main-loop iteration, then a 1-step remainder loop (k % 4).
   - Interleaved kernels read the packed A panel (MR floats per k step, rows >= m are zero), so
     they always compute the whole MR x NR tile.
   - Hybrid kernels read A in place, segment by segment (ks segments of k steps; packed B runs on
     across segments). Per 4 k steps each row gives one q register (4 k steps of that row), used
     lane by lane while B streams through 2-4 registers. Row pointers of rows i >= m are never
     read: row i uses slot a_rows[s*MR + min(i, m-1)] (a csel on the slot address, XNNPACK's
     clamp), so those rows recompute row m-1 and are not stored. A rows are read exactly in
     [0, k): 16-byte loads while 4 steps remain, 4-byte loads in the remainder.
   - Edges: a full tile (m == MR and n == NR) is loaded/stored in place. A partial tile runs
     the same code on an MR x NR stack tile (under LOAD_C: C's m x n corner, zeros elsewhere)
     and C code copies the m x n result out; bias is widened through a zero-padded copy. So C
     is read only with LOAD_C, only the m x n tile is written, bias is read in [0, n).
   - Min/max are read only with CLAMP; clamp = fmin(fmax(x, min), max) (NaN stays NaN).
   - No alignment is assumed of any pointer (AArch64 ldr/ldp/str q are unaligned-safe).
   - Throughput: bench/mca_neon.sh rates every kernel with llvm-mca (mca_kernel.py); all main
     loops issue one FMLA per cycle on llvm-mca's cortex-a57 model and two on llvm-mca-19's
     neoverse-n1 model (99.7-99.9% of peak; bench/RESULTS.md). Each main loop is marked with
     LLVM-MCA-BEGIN/END asm comments: the tool would otherwise pick the largest backward-branch
     region holding FMLAs, which is the hybrid segment loop or, for the interleaved kernels, a
     compiler jump around the whole asm statement.
*/
#ifndef LUTHIER__GEMM_IMPL_DONE
#error "luthier_kernels_neon.h is part of luthier: include luthier.h instead"
#endif
#if LUTHIER__SIMD_NEON && !defined(LUTHIER__KERNELS_NEON_DONE) /* a no-op elsewhere (see LUTHIER__SIMD_NEON) */
#define LUTHIER__KERNELS_NEON_DONE /* include guard only: code tests LUTHIER__SIMD_NEON */

/* >>list: X(short name, isa, MR, NR, K unroll, kind, required features), best first. */
#define LUTHIER__UKERNELS_NEON(X)                                                                  \
    X(8x12__neonfma, "neon", 8, 12, 4, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_NEON)               \
    X(6x16__neonfma_hybrid, "neon", 6, 16, 4, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_NEON)             \
    X(4x24__neonfma_hybrid, "neon", 4, 24, 4, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_NEON)             \
    X(8x6__neonfma, "neon", 8, 6, 4, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_NEON)                 \
    X(8x4__neonfma_hybrid, "neon", 8, 4, 4, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_NEON)              \
    X(8x12__neonfma_a53, "neon", 8, 12, 4, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_NEON)           \
    X(6x16__neonfma_hybrid_a53, "neon", 6, 16, 4, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_NEON)

/* The asm templates exceed the 4095-character string literal C99 requires compilers to accept
   (clang -Wpedantic warns); GCC and Clang take any length. */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>common =====================================================================================

   asm operands shared by all kernels (the C wrapper computes them):
     %[cp]   the tile: C (full tile) or the stack tile;  %[ld] its row stride in bytes
     %[bp]   NR bias floats (zero-padded copy for partial n) or NULL
     %[mode] bit 0: start from C (LOAD_C); bit 1: clamp (CLAMP)
     %[mm]   {min, max} (read only when bit 1 is set)
     %[k]    k steps (per segment);  interleaved: %[a], %[b];  hybrid: %[ar], %[b], %[ks], %[m]
   Scratch: x9 walks the C rows, x10 counts 4-step iterations, x11 remainder steps; hybrid
   kernels keep row pointers in x0..x(MR-1) and use x12/x13 to pick the row slots. */

/* One asm line: acc += v * e[lane] (v a vector of 4 floats, e a scalar in lane `lane`). */
#define LUTHIER__FMLA(acc, v, e, lane) "fmla " #acc ".4s, " #v ".4s, " #e ".s[" #lane "]\n\t"
#define LUTHIER__MOVQ(d, s) "mov " #d ".16b, " #s ".16b\n\t"
#define LUTHIER__ZEROQ(r) "movi " #r ".16b, #0\n\t"
#define LUTHIER__CLAMPQ(r) "fmax " #r ".4s, " #r ".4s, v0.4s\n\t" "fmin " #r ".4s, " #r ".4s, v1.4s\n\t"

/* Accumulator register lists. */
#define LUTHIER__V24_31(X) X(v24) X(v25) X(v26) X(v27) X(v28) X(v29) X(v30) X(v31)
#define LUTHIER__V20_31(X) X(v20) X(v21) X(v22) X(v23) LUTHIER__V24_31(X)
#define LUTHIER__V16_31(X) X(v16) X(v17) X(v18) X(v19) LUTHIER__V20_31(X)
#define LUTHIER__V8_31(X) X(v8) X(v9) X(v10) X(v11) X(v12) X(v13) X(v14) X(v15) LUTHIER__V16_31(X)
/* The same registers (and v0-v7) as asm clobbers. */
#define LUTHIER__CLOB_V0_7 "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"
#define LUTHIER__CLOB_V16_31                                                                       \
    "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"
#define LUTHIER__CLOB_V8_31 "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", LUTHIER__CLOB_V16_31

/* Accumulator set-up: LOADC (x9 = %[cp] walks the rows), BIAS or ZERO, chosen by %[mode]/%[bp]. */
#define LUTHIER__NEON_PROLOGUE(name, LOADC, BIAS, ZERO)                                            \
    "tbnz %[mode], #0, .Lluthier_" #name "_ldc_%=\n\t"                                             \
    "cbnz %[bp], .Lluthier_" #name "_bias_%=\n\t"                                                  \
    ZERO                                                                                           \
    "b .Lluthier_" #name "_init_%=\n\t"                                                            \
    ".Lluthier_" #name "_bias_%=:\n\t"                                                             \
    BIAS                                                                                           \
    "b .Lluthier_" #name "_init_%=\n\t"                                                            \
    ".Lluthier_" #name "_ldc_%=:\n\t"                                                              \
    "mov x9, %[cp]\n\t"                                                                            \
    LOADC                                                                                          \
    ".Lluthier_" #name "_init_%=:\n\t"

/* Clamp (bit 1 of %[mode]; v0 = min, v1 = max) then STORE (x9 = %[cp] walks the rows). */
#define LUTHIER__NEON_EPILOGUE(name, ACCS, STORE)                                                  \
    "tbz %[mode], #1, .Lluthier_" #name "_st_%=\n\t"                                               \
    "ldp s0, s1, [%[mm]]\n\t"                                                                      \
    "dup v0.4s, v0.s[0]\n\t"                                                                       \
    "dup v1.4s, v1.s[0]\n\t"                                                                       \
    ACCS(LUTHIER__CLAMPQ)                                                                          \
    ".Lluthier_" #name "_st_%=:\n\t"                                                               \
    "mov x9, %[cp]\n\t"                                                                            \
    STORE

/* Hybrid row pointer xr = *slot(i), slot(i) = &ar[i] if i < m else slot(i-1); x13 holds the
   previous slot. Row 0 is "mov x13, %[ar]" + "ldr x0, [x13]". */
#define LUTHIER__ROWPTR(xr, i, off)                                                                \
    "add x12, %[ar], #" #off "\n\t"                                                                \
    "cmp %[m], #" #i "\n\t"                                                                        \
    "csel x13, x12, x13, hi\n\t"                                                                   \
    "ldr " #xr ", [x13]\n\t"

/* The C side of a kernel's frame: the tile cp (row stride ld), its bias bp and %[mode], %[mm]. */
#define LUTHIER__NEON_TILE_SETUP(MR, NR)                                                           \
    float tmp[MR * NR], bb[NR], mm[2];                                                             \
    size_t ld;                                                                                     \
    float *const cp = luthier__neon_tile_begin(p, tmp, MR, NR, &ld);                               \
    const float *const bp = luthier__neon_bias(p, bb, NR);                                         \
    const size_t mode = luthier__neon_mode(p, mm);

/* The frame of the interleaved kernels (packed A and B panels), MR x NR: the C wrapper and the
   asm around KLOOP (all the k steps): the accumulators' set-up (LOADC, BIAS, ACCS as
   LUTHIER__NEON_PROLOGUE's) and store (STORE), the operands; tag: the labels' prefix; the
   arguments after KLOOP: the clobbers. */
#define LUTHIER__NEON_INTERLEAVED(fn, tag, MR, NR, LOADC, BIAS, ACCS, STORE, KLOOP, ...)             \
    LUTHIER_PRIVATE void fn(const luthier_sgemm_ukernel_args *p) {                                  \
        LUTHIER__NEON_TILE_SETUP(MR, NR)                                                           \
        const float *a = p->a, *b = p->b;                                                          \
        __asm__ __volatile__(                                                                      \
            LUTHIER__NEON_PROLOGUE(tag, LOADC, BIAS, ACCS(LUTHIER__ZEROQ))                         \
            KLOOP                                                                                  \
            LUTHIER__NEON_EPILOGUE(tag, ACCS, STORE)                                               \
            : [a] "+r"(a), [b] "+r"(b)                                                             \
            : [cp] "r"(cp), [ld] "r"(ld * sizeof(float)), [bp] "r"(bp), [mode] "r"(mode),          \
              [mm] "r"(mm), [k] "r"(p->k)                                                          \
            : __VA_ARGS__);                                                                        \
        luthier__neon_tile_end(p, cp, NR);                                                         \
    }

/* The k loop of a kernel (of an interleaved one, or of a hybrid one's segment): k / 4 blocks
   (K4: from its label k4 back to it, then on to k1), then k % 4 single steps (REM), to label
   `out` (end, or next: the hybrid kernels' next segment). */
#define LUTHIER__NEON_K4_REM(tag, K4, REM, out)                                                    \
    "lsr x10, %[k], #2\n\t"                                                                         \
    "and x11, %[k], #3\n\t"                                                                         \
    "cbz x10, .Lluthier_" #tag "_k1_%=\n\t"                                                         \
    K4                                                                                             \
    ".Lluthier_" #tag "_k1_%=:\n\t"                                                                 \
    "cbz x11, .Lluthier_" #tag "_" #out "_%=\n\t"                                                   \
    ".Lluthier_" #tag "_rem_%=:\n\t"                                                                \
    REM                                                                                            \
    "subs x11, x11, #1\n\t"                                                                         \
    "b.ne .Lluthier_" #tag "_rem_%=\n\t"                                                            \
    ".Lluthier_" #tag "_" #out "_%=:\n\t"

/* The frame of the hybrid kernels, MR x NR, whose tile S (6x16, 4x24, 8x4) names its pieces
   LUTHIER__<S>_ROWS / _LDC / _STC / _BIAS / _ACCS (the accumulators, C's rows, their loads,
   stores and bias set-up), _ROWPTRS (row pointers 1..MR-1 and %[ar] past the segment's MR
   slots), _REM (one k step) and _CLOBBERS; tag: the labels' prefix. Per segment, the MR row
   pointers of A and the k / 4 blocks (K4: a schedule's 4-step loop, which ends at label k1),
   then the k % 4 remainder, the next segment, the store. The arguments after K4: clobbers
   beyond the frame's (a schedule's own registers, "cc", "memory"). */
#define LUTHIER__NEON_HYBRID(fn, S, tag, MR, NR, K4, ...)                                           \
    LUTHIER_PRIVATE void fn(const luthier_sgemm_ukernel_args *p) {                                  \
        LUTHIER__NEON_TILE_SETUP(MR, NR)                                                           \
        const float *const *ar = p->a_rows;                                                        \
        const float *b = p->b;                                                                     \
        size_t ks = p->ks;                                                                         \
        __asm__ __volatile__(                                                                      \
            LUTHIER__NEON_PROLOGUE(tag, LUTHIER__##S##_ROWS(LUTHIER__##S##_LDC), LUTHIER__##S##_BIAS, \
                                   LUTHIER__##S##_ACCS(LUTHIER__ZEROQ))                            \
            "cbz %[ks], .Lluthier_" #tag "_end_%=\n\t"                                              \
            ".Lluthier_" #tag "_seg_%=:\n\t"                                                        \
            "mov x13, %[ar]\n\t"                                                                    \
            "ldr x0, [x13]\n\t"                                                                     \
            LUTHIER__##S##_ROWPTRS                                                                 \
            LUTHIER__NEON_K4_REM(tag, K4, LUTHIER__##S##_REM, next)                                \
            "subs %[ks], %[ks], #1\n\t"                                                             \
            "b.ne .Lluthier_" #tag "_seg_%=\n\t"                                                    \
            ".Lluthier_" #tag "_end_%=:\n\t"                                                        \
            LUTHIER__NEON_EPILOGUE(tag, LUTHIER__##S##_ACCS, LUTHIER__##S##_ROWS(LUTHIER__##S##_STC)) \
            : [ar] "+r"(ar), [b] "+r"(b), [ks] "+r"(ks)                                            \
            : [cp] "r"(cp), [ld] "r"(ld * sizeof(float)), [bp] "r"(bp), [mode] "r"(mode),          \
              [mm] "r"(mm), [k] "r"(p->k), [m] "r"(p->m)                                           \
            : LUTHIER__##S##_CLOBBERS, __VA_ARGS__);                                               \
        luthier__neon_tile_end(p, cp, NR);                                                         \
    }

/* The tile the kernel loads (LOAD_C) and stores: C itself for a full tile (ld = ldc), else
   tmp, an MR x NR tile (ld = NR); under LOAD_C it holds C's m x n corner, zero elsewhere (the
   kernel reads tmp only under LOAD_C). Under LOAD_C with bias, the bias is added to that tile
   here (in C's own full tile, which the kernel then loads from L1): the asm starts from C or
   from bias, not from both. */
LUTHIER__INLINE float *luthier__neon_tile_begin(const luthier_sgemm_ukernel_args *p, float *tmp,
                                                size_t mr, size_t nr, size_t *ld) {
    const int load = (p->flags & LUTHIER_UKERNEL_LOAD_C) != 0;
    size_t i, j;
    if (p->m == mr && p->n == nr) {
        if (load && p->bias)
            for (i = 0; i < mr; i++)
                for (j = 0; j < nr; j++) p->c[i * p->ldc + j] += p->bias[j];
        *ld = p->ldc;
        return p->c;
    }
    *ld = nr;
    if (load) {
        memset(tmp, 0, mr * nr * sizeof(float));
        for (i = 0; i < p->m; i++)
            for (j = 0; j < p->n; j++) tmp[i * nr + j] = p->c[i * p->ldc + j] + (p->bias ? p->bias[j] : 0.0f);
    }
    return tmp;
}

/* Copies the m x n corner of a partial tile (cp != C) to C. */
LUTHIER__INLINE void luthier__neon_tile_end(const luthier_sgemm_ukernel_args *p, const float *cp,
                                            size_t nr) {
    size_t i, j;
    if (cp == p->c) return;
    for (i = 0; i < p->m; i++)
        for (j = 0; j < p->n; j++) p->c[i * p->ldc + j] = cp[i * nr + j];
}

/* NR bias floats (bias[0..n-1] then zeros), or NULL when the tile starts from C (which then
   holds the bias: luthier__neon_tile_begin) or from 0. */
LUTHIER__INLINE const float *luthier__neon_bias(const luthier_sgemm_ukernel_args *p, float *tmp,
                                                size_t nr) {
    if (!p->bias || (p->flags & LUTHIER_UKERNEL_LOAD_C)) return NULL;
    if (p->n == nr) return p->bias;
    memset(tmp, 0, nr * sizeof(float));
    memcpy(tmp, p->bias, p->n * sizeof(float));
    return tmp;
}

/* %[mode] and %[mm]. */
LUTHIER__INLINE size_t luthier__neon_mode(const luthier_sgemm_ukernel_args *p, float *mm) {
    mm[0] = mm[1] = 0.0f;
    if (p->flags & LUTHIER_UKERNEL_CLAMP) {
        mm[0] = p->min;
        mm[1] = p->max;
    }
    return ((p->flags & LUTHIER_UKERNEL_LOAD_C) ? 1u : 0u) |
           ((p->flags & LUTHIER_UKERNEL_CLAMP) ? 2u : 0u);
}

/* >>8x12 =======================================================================================
   Interleaved 8x12 (the a64_sgemm_8x12 layout). Registers:
     C[r][4v..4v+3] = v(8 + 3r + v)     A step: v0/v1 (even steps), v2/v3 (odd steps), rows 0-3/4-7
     B step: v4, v5, v6 (columns 0-3, 4-7, 8-11)
   Per k step: 24 x  fmla C[r][v], B[v], A.s[r]. The FMLAs go B vector by B vector, so B[v] of
   the next step is loaded as soon as the 8 FMLAs of this step are done with it, and A is
   double-buffered: loads run well ahead of their use (in-order cores stall less). Per 4-step
   iteration: 96 FMLA, 4 ldp A, 1 ldp + 10 ldr B. */

/* The 8 FMLAs of B register B with rows 0-3 (A0 lanes) and 4-7 (A1 lanes). */
#define LUTHIER__8x12_G(B, A0, A1, c0, c1, c2, c3, c4, c5, c6, c7)                                 \
    LUTHIER__FMLA(c0, B, A0, 0) LUTHIER__FMLA(c1, B, A0, 1)                                        \
    LUTHIER__FMLA(c2, B, A0, 2) LUTHIER__FMLA(c3, B, A0, 3)                                        \
    LUTHIER__FMLA(c4, B, A1, 0) LUTHIER__FMLA(c5, B, A1, 1)                                        \
    LUTHIER__FMLA(c6, B, A1, 2) LUTHIER__FMLA(c7, B, A1, 3)
#define LUTHIER__8x12_G0(A0, A1) LUTHIER__8x12_G(v4, A0, A1, v8, v11, v14, v17, v20, v23, v26, v29)
#define LUTHIER__8x12_G1(A0, A1) LUTHIER__8x12_G(v5, A0, A1, v9, v12, v15, v18, v21, v24, v27, v30)
#define LUTHIER__8x12_G2(A0, A1) LUTHIER__8x12_G(v6, A0, A1, v10, v13, v16, v19, v22, v25, v28, v31)

#define LUTHIER__8x12_LDC(a, b, c)                                                                 \
    "ldp " #a ", " #b ", [x9]\n\t" "ldr " #c ", [x9, #32]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__8x12_STC(a, b, c)                                                                 \
    "stp " #a ", " #b ", [x9]\n\t" "str " #c ", [x9, #32]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__8x12_ROWS(F)                                                                      \
    F(q8, q9, q10) F(q11, q12, q13) F(q14, q15, q16) F(q17, q18, q19)                              \
    F(q20, q21, q22) F(q23, q24, q25) F(q26, q27, q28) F(q29, q30, q31)
#define LUTHIER__8x12_BIASROW(a, b, c) LUTHIER__MOVQ(a, v8) LUTHIER__MOVQ(b, v9) LUTHIER__MOVQ(c, v10)
#define LUTHIER__8x12_BIAS                                                                         \
    "ldp q8, q9, [%[bp]]\n\t"                                                                      \
    "ldr q10, [%[bp], #32]\n\t"                                                                    \
    LUTHIER__8x12_BIASROW(v11, v12, v13) LUTHIER__8x12_BIASROW(v14, v15, v16)                      \
    LUTHIER__8x12_BIASROW(v17, v18, v19) LUTHIER__8x12_BIASROW(v20, v21, v22)                      \
    LUTHIER__8x12_BIASROW(v23, v24, v25) LUTHIER__8x12_BIASROW(v26, v27, v28)                      \
    LUTHIER__8x12_BIASROW(v29, v30, v31)

#define LUTHIER__8x12_K4 /* 4 steps per iteration */                                               \
        ".Lluthier_8x12_k4_%=:\n\t"                                                                \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldp q0, q1, [%[a]]\n\t"                                                                   \
        "ldp q4, q5, [%[b]]\n\t"                                                                   \
        "ldr q6, [%[b], #32]\n\t"                                                                  \
        "ldp q2, q3, [%[a], #32]\n\t"                                                              \
        LUTHIER__8x12_G0(v0, v1) "ldr q4, [%[b], #48]\n\t"     /* step 0, B of step 1 */           \
        LUTHIER__8x12_G1(v0, v1) "ldr q5, [%[b], #64]\n\t"                                         \
        LUTHIER__8x12_G2(v0, v1) "ldr q6, [%[b], #80]\n\t"                                         \
        "ldp q0, q1, [%[a], #64]\n\t"                                                              \
        LUTHIER__8x12_G0(v2, v3) "ldr q4, [%[b], #96]\n\t"     /* step 1, B of step 2 */           \
        LUTHIER__8x12_G1(v2, v3) "ldr q5, [%[b], #112]\n\t"                                        \
        LUTHIER__8x12_G2(v2, v3) "ldr q6, [%[b], #128]\n\t"                                        \
        "ldp q2, q3, [%[a], #96]\n\t"                                                              \
        LUTHIER__8x12_G0(v0, v1) "ldr q4, [%[b], #144]\n\t"    /* step 2, B of step 3 */           \
        LUTHIER__8x12_G1(v0, v1) "ldr q5, [%[b], #160]\n\t"                                        \
        LUTHIER__8x12_G2(v0, v1) "ldr q6, [%[b], #176]\n\t"                                        \
        "add %[a], %[a], #128\n\t"                                                                 \
        LUTHIER__8x12_G0(v2, v3)                               /* step 3 */                        \
        LUTHIER__8x12_G1(v2, v3)                                                                   \
        "add %[b], %[b], #192\n\t"                                                                 \
        LUTHIER__8x12_G2(v2, v3)                                                                   \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_8x12_k4_%=\n\t"                                                            \
        "// LLVM-MCA-END\n\t"
#define LUTHIER__8x12_REM                                                                          \
    "ldp q0, q1, [%[a]], #32\n\t"                                                                  \
    "ldp q4, q5, [%[b]], #32\n\t"                                                                  \
    "ldr q6, [%[b]], #16\n\t"                                                                      \
    LUTHIER__8x12_G0(v0, v1) LUTHIER__8x12_G1(v0, v1) LUTHIER__8x12_G2(v0, v1)
#define LUTHIER__8x12_CLOBBERS "x9", "x10", "x11", "v0", "v1", "v2", "v3", "v4", "v5", "v6", LUTHIER__CLOB_V8_31

LUTHIER__NEON_INTERLEAVED(luthier_sgemm_ukernel_8x12__neonfma, 8x12, 8, 12, LUTHIER__8x12_ROWS(LUTHIER__8x12_LDC),
                          LUTHIER__8x12_BIAS, LUTHIER__V8_31, LUTHIER__8x12_ROWS(LUTHIER__8x12_STC),
                          LUTHIER__NEON_K4_REM(8x12, LUTHIER__8x12_K4, LUTHIER__8x12_REM, end), LUTHIER__8x12_CLOBBERS, "cc",
                          "memory")

/* >>8x12-a53 ===================================================================================
   Interleaved 8x12 for in-order dual-issue cores (Cortex-A53/A55): the packed A and B and the
   accumulators of >>8x12 (so it serves a little cluster over the big cluster's packed weights,
   cluster_kernels), a different instruction stream. An in-order core issues at most two
   instructions per cycle, in program order, and (A53) a 128-bit load does not issue beside a
   Q-form FMLA. So the main loop has no 128-bit load: each q register of A or B arrives as
   two 64-bit halves, "ldr d" (low half, zeroes the top) then "ldr x" into x12/x13 and
   "ins v.d[1], x" (high half), and every such instruction (and the loop control) sits between
   two FMLAs, the slot the core can pair with the FMLA. Loads run ahead:
     C[r][4v..4v+3] = v(8 + 3r + v)      A step: v0/v1 (even steps), v2/v3 (odd steps)
     B step: three of v4-v7, in rotation: B vector i (i = 3 * step + column vector) lives in
     v(4 + i % 4), so the vector of group g is loaded during group g - 3 (the register freed
     by group g - 4), 16 FMLAs before its first use; A of step t + 1 is loaded during step t.
   Step t is software-pipelined: its A and B are in registers when it begins (loaded by step
   t - 1, or before the loop), so the last 4-step block of k (when k % 4 == 0) runs a copy of
   the body without the next step's loads: nothing is read past the packed panels. The k % 4
   remainder loop (not the hot loop) uses 128-bit loads. bench/inorder_check.py checks the
   main loop against these rules. Per 4-step iteration: 96 FMLA, 20 ldr d, 20 ldr x, 20 ins. */

/* The 64-bit halves of a q register at ptr + off: low half (ldr d), high half through GP
   register x (ldr x, then ins). */
#define LUTHIER__LDD(n, ptr, off) "ldr d" #n ", [%[" #ptr "], #" #off "]\n\t"
#define LUTHIER__LDX(x, ptr, off) "ldr " #x ", [%[" #ptr "], #" #off "+8]\n\t"
#define LUTHIER__INSD(n, x) "ins v" #n ".d[1], " #x "\n\t"
#define LUTHIER__FMLAN(acc, vb, va, lane) "fmla " #acc ".4s, v" #vb ".4s, v" #va ".s[" #lane "]\n\t"

/* The 8 multiply-accumulates MAC(acc, B, A, lane) of B register vB with rows 0-3 (vA0 lanes)
   and 4-7 (vA1 lanes); slot s_i follows the i-th (an asm string or ""). MAC is LUTHIER__FMLAN
   here; the int8 SDOT kernel for in-order cores (luthier_int8.h) builds its own loop of them
   with LUTHIER__SDOTN: its packed A and B groups have the byte layout of these fp32 steps. */
#define LUTHIER__8x12L_G(MAC, B, A0, A1, c0, c1, c2, c3, c4, c5, c6, c7, s0, s1, s2, s3, s4, s5, s6, s7) \
    MAC(c0, B, A0, 0) s0 MAC(c1, B, A0, 1) s1 MAC(c2, B, A0, 2) s2 MAC(c3, B, A0, 3) s3             \
    MAC(c4, B, A1, 0) s4 MAC(c5, B, A1, 1) s5 MAC(c6, B, A1, 2) s6 MAC(c7, B, A1, 3) s7
#define LUTHIER__8x12L_C0 v8, v11, v14, v17, v20, v23, v26, v29
#define LUTHIER__8x12L_C1 v9, v12, v15, v18, v21, v24, v27, v30
#define LUTHIER__8x12L_C2 v10, v13, v16, v19, v22, v25, v28, v31
/* Argument lists go through one more expansion so that the accumulator lists split. */
#define LUTHIER__8x12L_GX(...) LUTHIER__8x12L_G(__VA_ARGS__)

/* One k step (A in vA0/vA1, B in vB0-vB2) that loads the next ones: group g loads B register
   nbg from b + obg, groups 0 and 1 load A registers na0/na1 from a + oa0/oa1; t0..t4 are the
   loop-control slots of group 2. */
#define LUTHIER__8x12L_STEP(MAC, A0, A1, B0, B1, B2, nb0, ob0, nb1, ob1, nb2, ob2, na0, oa0, na1,   \
                            oa1, t0, t1, t2, t3, t4)                                                 \
    LUTHIER__8x12L_GX(MAC, B0, A0, A1, LUTHIER__8x12L_C0, LUTHIER__LDD(nb0, b, ob0),                \
                      LUTHIER__LDX(x12, b, ob0), LUTHIER__LDD(na0, a, oa0),                         \
                      LUTHIER__LDX(x13, a, oa0), "", LUTHIER__INSD(nb0, x12), "",                   \
                      LUTHIER__INSD(na0, x13))                                                      \
    LUTHIER__8x12L_GX(MAC, B1, A0, A1, LUTHIER__8x12L_C1, LUTHIER__LDD(nb1, b, ob1),                \
                      LUTHIER__LDX(x12, b, ob1), LUTHIER__LDD(na1, a, oa1),                         \
                      LUTHIER__LDX(x13, a, oa1), "", LUTHIER__INSD(nb1, x12), "",                   \
                      LUTHIER__INSD(na1, x13))                                                      \
    LUTHIER__8x12L_GX(MAC, B2, A0, A1, LUTHIER__8x12L_C2, LUTHIER__LDD(nb2, b, ob2),                \
                      LUTHIER__LDX(x12, b, ob2), t0, t1, t2, t3, LUTHIER__INSD(nb2, x12), t4)
/* The last step of k: nothing left to load. */
#define LUTHIER__8x12L_LAST(MAC, A0, A1, B0, B1, B2)                                                \
    LUTHIER__8x12L_GX(MAC, B0, A0, A1, LUTHIER__8x12L_C0, "", "", "", "", "", "", "", "")           \
    LUTHIER__8x12L_GX(MAC, B1, A0, A1, LUTHIER__8x12L_C1, "", "", "", "", "", "", "", "")           \
    LUTHIER__8x12L_GX(MAC, B2, A0, A1, LUTHIER__8x12L_C2, "", "", "", "", "", "", "", "")
/* Steps 0-2 of a 4-step block (the B rotation: step s uses B vectors 3s..3s+2). */
#define LUTHIER__8x12L_STEPS012(MAC)                                                                \
    LUTHIER__8x12L_STEP(MAC, 0, 1, 4, 5, 6, 7, 48, 4, 64, 5, 80, 2, 32, 3, 48, "", "", "", "", "") \
    LUTHIER__8x12L_STEP(MAC, 2, 3, 7, 4, 5, 6, 96, 7, 112, 4, 128, 0, 64, 1, 80, "", "", "", "", "") \
    LUTHIER__8x12L_STEP(MAC, 0, 1, 6, 7, 4, 5, 144, 6, 160, 7, 176, 2, 96, 3, 112, "", "", "", "", "")

/* The k loop of an in-order kernel over %[k] steps, into the accumulators v8-v31 (set up
   before), up to the label .Lluthier_<name>_end_%=: blocks of 4 steps, software-pipelined (each
   step loads the next one's operands), then k % 4 single steps. STEPS012: steps 0-2 of a block;
   STEP3(label): step 3, which loads the next block's step 0, steps the pointers and branches
   back to label while x10 counts; LAST3: step 3 without loads (the last block when k % 4 == 0:
   nothing is read past the packed panels); LD0: 128-bit loads of the step at %[a], %[b] into
   step 0's registers; LAST0: step 0 without loads; ADV: %[a], %[b] on by one step. */
#define LUTHIER__INORDER_KLOOP(name, STEPS012, STEP3, LAST3, LD0, LAST0, ADV)                       \
    "lsr x10, %[k], #2\n\t"                                                                         \
    "and x11, %[k], #3\n\t"                                                                         \
    "cbz x10, .Lluthier_" #name "_remld_%=\n\t"                                                     \
    LD0                                                  /* step 0 of the first block */            \
    "cbnz x11, .Lluthier_" #name "_k4_%=\n\t"            /* a remainder follows: every block */     \
    "subs x10, x10, #1\n\t"                              /* loads the next step */                  \
    "b.eq .Lluthier_" #name "_last_%=\n\t"                                                          \
    ".Lluthier_" #name "_k4_%=:\n\t"                                                                \
    "// LLVM-MCA-BEGIN\n\t"                                                                         \
    STEPS012                                                                                        \
    STEP3(".Lluthier_" #name "_k4_%=")                                                              \
    "// LLVM-MCA-END\n\t"                                                                           \
    "cbnz x11, .Lluthier_" #name "_rem_%=\n\t"                                                      \
    ".Lluthier_" #name "_last_%=:\n\t"                   /* k % 4 == 0: the last block */           \
    STEPS012                                                                                        \
    LAST3                                                                                           \
    "b .Lluthier_" #name "_end_%=\n\t"                                                              \
    ".Lluthier_" #name "_remld_%=:\n\t"                  /* k < 4 */                                \
    LD0                                                                                             \
    ".Lluthier_" #name "_rem_%=:\n\t"                    /* the step at a, b is loaded */           \
    LAST0                                                                                           \
    "subs x11, x11, #1\n\t"                                                                         \
    "b.eq .Lluthier_" #name "_end_%=\n\t"                                                           \
    ADV                                                                                             \
    LD0                                                                                             \
    "b .Lluthier_" #name "_rem_%=\n\t"                                                              \
    ".Lluthier_" #name "_end_%=:\n\t"
/* >>8x12-a53's: 32 bytes of A and 48 of B a step. */
#define LUTHIER__8x12L_STEP3(label)                                                                 \
    LUTHIER__8x12L_STEP(LUTHIER__FMLAN, 2, 3, 5, 6, 7, 4, 192, 5, 208, 6, 224, 0, 128, 1, 144,      \
                        "add %[a], %[a], #128\n\t", "add %[b], %[b], #192\n\t",                     \
                        "subs x10, x10, #1\n\t", "", "b.ne " label "\n\t")
#define LUTHIER__8x12L_LD0 "ldp q0, q1, [%[a]]\n\t" "ldp q4, q5, [%[b]]\n\t" "ldr q6, [%[b], #32]\n\t"
#define LUTHIER__8x12L_KLOOP(name)                                                                  \
    LUTHIER__INORDER_KLOOP(name, LUTHIER__8x12L_STEPS012(LUTHIER__FMLAN), LUTHIER__8x12L_STEP3,      \
                           LUTHIER__8x12L_LAST(LUTHIER__FMLAN, 2, 3, 5, 6, 7), LUTHIER__8x12L_LD0,   \
                           LUTHIER__8x12L_LAST(LUTHIER__FMLAN, 0, 1, 4, 5, 6),                       \
                           "add %[a], %[a], #32\n\t" "add %[b], %[b], #48\n\t")
/* Registers the loop uses besides v8-v31 and its operands. */
#define LUTHIER__8x12L_CLOBBERS "x10", "x11", "x12", "x13", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"

LUTHIER__NEON_INTERLEAVED(luthier_sgemm_ukernel_8x12__neonfma_a53, 8x12a53, 8, 12, LUTHIER__8x12_ROWS(LUTHIER__8x12_LDC),
                          LUTHIER__8x12_BIAS, LUTHIER__V8_31, LUTHIER__8x12_ROWS(LUTHIER__8x12_STC),
                          LUTHIER__8x12L_KLOOP(8x12a53), "x9", LUTHIER__8x12L_CLOBBERS,
                          LUTHIER__CLOB_V8_31, "cc", "memory")

/* >>8x6 ========================================================================================
   Interleaved 8x6, computed transposed so that every lane is useful (NR = 6 is not a multiple
   of 4): the 8 rows of a packed A step are 2 whole vectors and B is read by lane.
     C[4h..4h+3][j] = v(20 + 2j + h)    (column j of rows 0-3 for h = 0, rows 4-7 for h = 1)
     A step: v16/v17 (even steps), v18/v19 (odd steps)      B: v0-v5, the 24 floats of 4 steps
   Per k step t: 12 x  fmla C'[j][h], A[h], B.s[...], column j of step t in register
   (6t + j) / 4, lane (6t + j) % 4. Per 4-step iteration: 48 FMLA, 4 ldp A, 3 ldp B.
   Set-up and store transpose 4x4 blocks (trn1/trn2 .4s then .2d) and gather/scatter
   columns 4-5 (ins + uzp1/uzp2, zip1/zip2 + ext). */

#define LUTHIER__8x6_C(c0, c1, A0, A1, B, lane) LUTHIER__FMLA(c0, A0, B, lane) LUTHIER__FMLA(c1, A1, B, lane)
#define LUTHIER__8x6_STEP(A0, A1, B0, l0, B1, l1, B2, l2, B3, l3, B4, l4, B5, l5)                 \
    LUTHIER__8x6_C(v20, v21, A0, A1, B0, l0) LUTHIER__8x6_C(v22, v23, A0, A1, B1, l1)              \
    LUTHIER__8x6_C(v24, v25, A0, A1, B2, l2) LUTHIER__8x6_C(v26, v27, A0, A1, B3, l3)              \
    LUTHIER__8x6_C(v28, v29, A0, A1, B4, l4) LUTHIER__8x6_C(v30, v31, A0, A1, B5, l5)
#define LUTHIER__8x6_STEP0(A0, A1) LUTHIER__8x6_STEP(A0, A1, v0, 0, v0, 1, v0, 2, v0, 3, v1, 0, v1, 1)
#define LUTHIER__8x6_STEP1(A0, A1) LUTHIER__8x6_STEP(A0, A1, v1, 2, v1, 3, v2, 0, v2, 1, v2, 2, v2, 3)
#define LUTHIER__8x6_STEP2(A0, A1) LUTHIER__8x6_STEP(A0, A1, v3, 0, v3, 1, v3, 2, v3, 3, v4, 0, v4, 1)
#define LUTHIER__8x6_STEP3(A0, A1) LUTHIER__8x6_STEP(A0, A1, v4, 2, v4, 3, v5, 0, v5, 1, v5, 2, v5, 3)

/* Rows x9.. (4 of them, x9 advances) -> columns c0..c5 of one half. */
#define LUTHIER__8x6_LDC4(c0, c1, c2, c3, c4, c5)                                                  \
    "ldr q2, [x9]\n\t" "ldr d6, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                             \
    "ldr q3, [x9]\n\t" "ldr d7, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                             \
    "ldr q4, [x9]\n\t" "ldr d16, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                            \
    "ldr q5, [x9]\n\t" "ldr d17, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                            \
    "trn1 v0.4s, v2.4s, v3.4s\n\t"                                                                 \
    "trn2 v1.4s, v2.4s, v3.4s\n\t"                                                                 \
    "trn1 v18.4s, v4.4s, v5.4s\n\t"                                                                \
    "trn2 v19.4s, v4.4s, v5.4s\n\t"                                                                \
    "trn1 " #c0 ".2d, v0.2d, v18.2d\n\t"                                                           \
    "trn1 " #c1 ".2d, v1.2d, v19.2d\n\t"                                                           \
    "trn2 " #c2 ".2d, v0.2d, v18.2d\n\t"                                                           \
    "trn2 " #c3 ".2d, v1.2d, v19.2d\n\t"                                                           \
    "ins v6.d[1], v7.d[0]\n\t"                                                                     \
    "ins v16.d[1], v17.d[0]\n\t"                                                                   \
    "uzp1 " #c4 ".4s, v6.4s, v16.4s\n\t"                                                           \
    "uzp2 " #c5 ".4s, v6.4s, v16.4s\n\t"
/* Columns c0..c5 of one half -> 4 rows at x9.. (x9 advances). */
#define LUTHIER__8x6_STC4(c0, c1, c2, c3, c4, c5)                                                  \
    "trn1 v0.4s, " #c0 ".4s, " #c1 ".4s\n\t"                                                       \
    "trn2 v1.4s, " #c0 ".4s, " #c1 ".4s\n\t"                                                       \
    "trn1 v2.4s, " #c2 ".4s, " #c3 ".4s\n\t"                                                       \
    "trn2 v3.4s, " #c2 ".4s, " #c3 ".4s\n\t"                                                       \
    "trn1 v4.2d, v0.2d, v2.2d\n\t"                                                                 \
    "trn1 v5.2d, v1.2d, v3.2d\n\t"                                                                 \
    "trn2 v6.2d, v0.2d, v2.2d\n\t"                                                                 \
    "trn2 v7.2d, v1.2d, v3.2d\n\t"                                                                 \
    "zip1 v16.4s, " #c4 ".4s, " #c5 ".4s\n\t"                                                      \
    "zip2 v17.4s, " #c4 ".4s, " #c5 ".4s\n\t"                                                      \
    "ext v18.16b, v16.16b, v16.16b, #8\n\t"                                                        \
    "ext v19.16b, v17.16b, v17.16b, #8\n\t"                                                        \
    "str q4, [x9]\n\t" "str d16, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                            \
    "str q5, [x9]\n\t" "str d18, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                            \
    "str q6, [x9]\n\t" "str d17, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"                            \
    "str q7, [x9]\n\t" "str d19, [x9, #16]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__8x6_LDC                                                                           \
    LUTHIER__8x6_LDC4(v20, v22, v24, v26, v28, v30) LUTHIER__8x6_LDC4(v21, v23, v25, v27, v29, v31)
#define LUTHIER__8x6_STC                                                                           \
    LUTHIER__8x6_STC4(v20, v22, v24, v26, v28, v30) LUTHIER__8x6_STC4(v21, v23, v25, v27, v29, v31)
#define LUTHIER__8x6_BIAS                                                                          \
    "ldr q0, [%[bp]]\n\t"                                                                          \
    "ldr d1, [%[bp], #16]\n\t"                                                                     \
    "dup v20.4s, v0.s[0]\n\t" "dup v21.4s, v0.s[0]\n\t"                                            \
    "dup v22.4s, v0.s[1]\n\t" "dup v23.4s, v0.s[1]\n\t"                                            \
    "dup v24.4s, v0.s[2]\n\t" "dup v25.4s, v0.s[2]\n\t"                                            \
    "dup v26.4s, v0.s[3]\n\t" "dup v27.4s, v0.s[3]\n\t"                                            \
    "dup v28.4s, v1.s[0]\n\t" "dup v29.4s, v1.s[0]\n\t"                                            \
    "dup v30.4s, v1.s[1]\n\t" "dup v31.4s, v1.s[1]\n\t"

#define LUTHIER__8x6_K4 /* 4 steps per iteration */                                                \
        ".Lluthier_8x6_k4_%=:\n\t"                                                                 \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldp q16, q17, [%[a]]\n\t"                                                                 \
        "ldp q0, q1, [%[b]]\n\t"                                                                   \
        "ldp q18, q19, [%[a], #32]\n\t"                                                            \
        "ldp q2, q3, [%[b], #32]\n\t"                                                              \
        LUTHIER__8x6_STEP0(v16, v17)                                                               \
        "ldp q16, q17, [%[a], #64]\n\t"                                                            \
        "ldp q4, q5, [%[b], #64]\n\t"                                                              \
        LUTHIER__8x6_STEP1(v18, v19)                                                               \
        "ldp q18, q19, [%[a], #96]\n\t"                                                            \
        LUTHIER__8x6_STEP2(v16, v17)                                                               \
        "add %[a], %[a], #128\n\t"                                                                 \
        "add %[b], %[b], #96\n\t"                                                                  \
        LUTHIER__8x6_STEP3(v18, v19)                                                               \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_8x6_k4_%=\n\t"                                                             \
        "// LLVM-MCA-END\n\t"
#define LUTHIER__8x6_REM                                                                           \
    "ldp q16, q17, [%[a]], #32\n\t"                                                                \
    "ldr q0, [%[b]]\n\t"                                                                           \
    "ldr d1, [%[b], #16]\n\t"                                                                      \
    "add %[b], %[b], #24\n\t"                                                                      \
    LUTHIER__8x6_STEP0(v16, v17)
#define LUTHIER__8x6_CLOBBERS "x9", "x10", "x11", LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V16_31

LUTHIER__NEON_INTERLEAVED(luthier_sgemm_ukernel_8x6__neonfma, 8x6, 8, 6, LUTHIER__8x6_LDC, LUTHIER__8x6_BIAS,
                          LUTHIER__V20_31, LUTHIER__8x6_STC, LUTHIER__NEON_K4_REM(8x6, LUTHIER__8x6_K4, LUTHIER__8x6_REM, end),
                          LUTHIER__8x6_CLOBBERS, "cc", "memory")

/* >>6x16 =======================================================================================
   Hybrid 6x16 (the a64_hybrid_fp32_mla_6x16 layout). Registers:
     C[r][4v..4v+3] = v(8 + 4r + v)     A: v0-v5 = 4 k steps of rows 0-5 (x0-x5 row pointers)
     B: v6/v7, each loaded two FMLA groups ahead of its use (all 32 vector registers busy)
   Per k step t: 24 x  fmla C[r][v], B[v], A_r.s[t]. Per 4-step iteration: 96 FMLA, 6 A loads
   (ldr q, post-increment), 1 ldp + 14 ldr B. */

#define LUTHIER__6x16_G(B, lane, c0, c1, c2, c3, c4, c5)                                           \
    LUTHIER__FMLA(c0, B, v0, lane) LUTHIER__FMLA(c1, B, v1, lane)                                  \
    LUTHIER__FMLA(c2, B, v2, lane) LUTHIER__FMLA(c3, B, v3, lane)                                  \
    LUTHIER__FMLA(c4, B, v4, lane) LUTHIER__FMLA(c5, B, v5, lane)
#define LUTHIER__6x16_G0(B, lane) LUTHIER__6x16_G(B, lane, v8, v12, v16, v20, v24, v28)
#define LUTHIER__6x16_G1(B, lane) LUTHIER__6x16_G(B, lane, v9, v13, v17, v21, v25, v29)
#define LUTHIER__6x16_G2(B, lane) LUTHIER__6x16_G(B, lane, v10, v14, v18, v22, v26, v30)
#define LUTHIER__6x16_G3(B, lane) LUTHIER__6x16_G(B, lane, v11, v15, v19, v23, v27, v31)

#define LUTHIER__6x16_LDC(a, b, c, d)                                                              \
    "ldp " #a ", " #b ", [x9]\n\t" "ldp " #c ", " #d ", [x9, #32]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__6x16_STC(a, b, c, d)                                                              \
    "stp " #a ", " #b ", [x9]\n\t" "stp " #c ", " #d ", [x9, #32]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__6x16_ROWS(F)                                                                      \
    F(q8, q9, q10, q11) F(q12, q13, q14, q15) F(q16, q17, q18, q19)                                \
    F(q20, q21, q22, q23) F(q24, q25, q26, q27) F(q28, q29, q30, q31)
#define LUTHIER__6x16_BIASROW(a, b, c, d)                                                          \
    LUTHIER__MOVQ(a, v8) LUTHIER__MOVQ(b, v9) LUTHIER__MOVQ(c, v10) LUTHIER__MOVQ(d, v11)
#define LUTHIER__6x16_BIAS                                                                         \
    "ldp q8, q9, [%[bp]]\n\t"                                                                      \
    "ldp q10, q11, [%[bp], #32]\n\t"                                                               \
    LUTHIER__6x16_BIASROW(v12, v13, v14, v15) LUTHIER__6x16_BIASROW(v16, v17, v18, v19)            \
    LUTHIER__6x16_BIASROW(v20, v21, v22, v23) LUTHIER__6x16_BIASROW(v24, v25, v26, v27)            \
    LUTHIER__6x16_BIASROW(v28, v29, v30, v31)

#define LUTHIER__6x16_ACCS LUTHIER__V8_31
#define LUTHIER__6x16_ROWPTRS                                                                      \
    LUTHIER__ROWPTR(x1, 1, 8) LUTHIER__ROWPTR(x2, 2, 16) LUTHIER__ROWPTR(x3, 3, 24)                \
    LUTHIER__ROWPTR(x4, 4, 32) LUTHIER__ROWPTR(x5, 5, 40)                                          \
    "add %[ar], %[ar], #48\n\t"
/* One k step of a 6-row hybrid tile (k % 4 or k % 8 remainder): element r of rows x0-x5 (r: s for
   fp32, h for fp16; eb bytes), B as four vectors through v6/v7, FMLA groups P##_G0-3 (lane 0). */
#define LUTHIER__HYB6_REM(P, r, eb)                                                                \
    "ldr " #r "0, [x0], #" #eb "\n\t"                                                              \
    "ldr " #r "1, [x1], #" #eb "\n\t"                                                              \
    "ldr " #r "2, [x2], #" #eb "\n\t"                                                              \
    "ldr " #r "3, [x3], #" #eb "\n\t"                                                              \
    "ldr " #r "4, [x4], #" #eb "\n\t"                                                              \
    "ldr " #r "5, [x5], #" #eb "\n\t"                                                              \
    "ldp q6, q7, [%[b]]\n\t"                                                                       \
    P##_G0(v6, 0) "ldr q6, [%[b], #32]\n\t"                                                        \
    P##_G1(v7, 0) "ldr q7, [%[b], #48]\n\t"                                                        \
    P##_G2(v6, 0)                                                                                  \
    "add %[b], %[b], #64\n\t"                                                                      \
    P##_G3(v7, 0)
#define LUTHIER__6x16_REM LUTHIER__HYB6_REM(LUTHIER__6x16, s, 4)
#define LUTHIER__6x16_CLOBBERS                                                                     \
    "x0", "x1", "x2", "x3", "x4", "x5", "x9", "x10", "x11", "x12", "x13", LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V8_31

#define LUTHIER__6x16_K4 /* the big-core 4-step loop: 128-bit loads of A rows and B */             \
        ".Lluthier_6x16_k4_%=:\n\t"                                                                \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldr q0, [x0], #16\n\t"                                                                    \
        "ldr q1, [x1], #16\n\t"                                                                    \
        "ldr q2, [x2], #16\n\t"                                                                    \
        "ldr q3, [x3], #16\n\t"                                                                    \
        "ldr q4, [x4], #16\n\t"                                                                    \
        "ldr q5, [x5], #16\n\t"                                                                    \
        "ldp q6, q7, [%[b]]\n\t"                                                                   \
        LUTHIER__6x16_G0(v6, 0) "ldr q6, [%[b], #32]\n\t"                                          \
        LUTHIER__6x16_G1(v7, 0) "ldr q7, [%[b], #48]\n\t"                                          \
        LUTHIER__6x16_G2(v6, 0) "ldr q6, [%[b], #64]\n\t"                                          \
        LUTHIER__6x16_G3(v7, 0) "ldr q7, [%[b], #80]\n\t"                                          \
        LUTHIER__6x16_G0(v6, 1) "ldr q6, [%[b], #96]\n\t"                                          \
        LUTHIER__6x16_G1(v7, 1) "ldr q7, [%[b], #112]\n\t"                                         \
        LUTHIER__6x16_G2(v6, 1) "ldr q6, [%[b], #128]\n\t"                                         \
        LUTHIER__6x16_G3(v7, 1) "ldr q7, [%[b], #144]\n\t"                                         \
        LUTHIER__6x16_G0(v6, 2) "ldr q6, [%[b], #160]\n\t"                                         \
        LUTHIER__6x16_G1(v7, 2) "ldr q7, [%[b], #176]\n\t"                                         \
        LUTHIER__6x16_G2(v6, 2) "ldr q6, [%[b], #192]\n\t"                                         \
        LUTHIER__6x16_G3(v7, 2) "ldr q7, [%[b], #208]\n\t"                                         \
        LUTHIER__6x16_G0(v6, 3) "ldr q6, [%[b], #224]\n\t"                                         \
        LUTHIER__6x16_G1(v7, 3) "ldr q7, [%[b], #240]\n\t"                                         \
        LUTHIER__6x16_G2(v6, 3)                                                                    \
        "add %[b], %[b], #256\n\t"                                                                 \
        LUTHIER__6x16_G3(v7, 3)                                                                    \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_6x16_k4_%=\n\t"                                                            \
        "// LLVM-MCA-END\n\t"

LUTHIER__NEON_HYBRID(luthier_sgemm_ukernel_6x16__neonfma_hybrid, 6x16, 6x16, 6, 16, LUTHIER__6x16_K4, "cc", "memory")

/* >>6x16-a53 ==================================================================================
   Hybrid 6x16 for in-order dual-issue cores (Cortex-A53/A55): the A rows, packed B, accumulators,
   edges and epilogue of >>6x16 (a drop-in twin that a little cluster runs, cluster_kernels), the
   instruction stream of >>8x12-a53 (no 128-bit load in the main loop; every load, ins and
   loop-control instruction right after an FMLA; every load and ins at least 6 instructions
   before the first instruction that reads what it wrote: bench/inorder_check.py). With 24
   accumulators, 8 registers remain for A and B, and B needs three (a B register is read by the
   6 FMLAs of its group and reloaded in two halves: two groups, not one, are needed to hide
   that), so A gets 5 and holds the rows in pairs:
     C[r][4v..4v+3] = v(8 + 4r + v)     (as >>6x16)
     A, steps 0-1: v0 = rows 0,1 (lanes: row 0 k0 k1, row 1 k0 k1), v1 = rows 2,3, v2 = rows 4,5
     A, steps 2-3: v3 = rows 0,1 (k2 k3), v4 = rows 2,3, v0 = rows 4,5
     B: v5-v7; group g (step g / 4, columns 4(g % 4)..+3) reads v5 v6 v7 v5 v6 v7 v5 v6 v7 v5
        v6 v7 v6 v5 v6 v7: a register is reloaded across the two groups between its reads, v6
        twice across one (groups 11 and 13, all of whose slots after an FMLA are filled)
   Each A pair arrives as "ldr d" (8 bytes of the first row) + "ldr x" (the second row) +
   "ins v.d[1]": the steps 2-3 pairs during steps 0-1, the steps 0-1 pairs of the next block
   during steps 2-3 (v0 turns over twice a block: group 7 reads rows 0,1 first and group 8
   reads rows 4,5 last; group 15 reads rows 4,5 first and group 0 reads rows 0,1 last).
   Each B vector arrives as ldr d + ldr x + ins, through x6, x7, x12, x13. The loads use
   immediate offsets, and one "add" a block moves each row pointer (x0-x5) and b: a load
   with writeback is two micro-ops on the A55 and does not pair with an FMLA. The order of the
   FMLAs within a step differs from >>6x16, never the order of the k steps into one accumulator:
   the results are bit-identical to 6x16__neonfma_hybrid.
   The block below was scheduled by search against the three rules. The loads marked NX read
   the next 4-step block (its A pairs for steps 0-1, during steps 2-3 of this one, and its
   first B vectors, in the last groups); the k loop runs the block with them k / 4 - 1 times, and then once without
   them (the last block: nothing is read past the A rows' [0, k) nor past the packed B of the
   segment); the prologue makes those loads for the first block. The k % 4 remainder is the
   one of >>6x16. Per 4-step block: 96 FMLA, 16 + 6 ldr d, 16 + 6 ldr x, 22 ins, 7 add. */

/* A pair loads: ldr d of the first row, ldr x of the second (row pointer xr + off bytes). */
#define LUTHIER__6x16L_LDDA(n, xr, off) "ldr d" #n ", [" #xr ", #" #off "]\n\t"
#define LUTHIER__6x16L_LDXA(x, xr, off) "ldr " #x ", [" #xr ", #" #off "]\n\t"
#define LUTHIER__6x16L_KEEP(s) s
#define LUTHIER__6x16L_DROP(s)
/* One 4-step block (groups 0-15, six FMLAs each); NX wraps the loads for the next block, LC the
   loop control (subs x10 and the branch back). */
#define LUTHIER__6x16L_BLOCK(NX, LC) \
    /* 0  */ LUTHIER__FMLAN(v16, 5, 1, 0) LUTHIER__INSD(6, x6) LUTHIER__FMLAN(v20, 5, 1, 2)                 \
             LUTHIER__FMLAN(v24, 5, 2, 0) LUTHIER__6x16L_LDDA(4, x2, 8) LUTHIER__FMLAN(v28, 5, 2, 2)        \
             LUTHIER__LDD(7, b, 32) LUTHIER__FMLAN(v8, 5, 0, 0) LUTHIER__LDX(x6, b, 32)                     \
             LUTHIER__FMLAN(v12, 5, 0, 2) LUTHIER__LDD(5, b, 48)                                            \
    /* 1  */ LUTHIER__FMLAN(v9, 6, 0, 0) LUTHIER__LDX(x7, b, 48) LUTHIER__FMLAN(v13, 6, 0, 2)               \
             LUTHIER__INSD(7, x6) LUTHIER__FMLAN(v17, 6, 1, 0) LUTHIER__FMLAN(v21, 6, 1, 2)                 \
             LUTHIER__LDX(x6, b, 64) LUTHIER__FMLAN(v25, 6, 2, 0) LUTHIER__6x16L_LDDA(3, x0, 8)             \
             LUTHIER__FMLAN(v29, 6, 2, 2)                                                                   \
    /* 2  */ LUTHIER__FMLAN(v10, 7, 0, 0) LUTHIER__INSD(5, x7) LUTHIER__FMLAN(v14, 7, 0, 2)                 \
             LUTHIER__LDD(6, b, 64) LUTHIER__FMLAN(v18, 7, 1, 0) LUTHIER__FMLAN(v22, 7, 1, 2)               \
             LUTHIER__FMLAN(v26, 7, 2, 0) LUTHIER__LDX(x7, b, 80) LUTHIER__FMLAN(v30, 7, 2, 2)              \
             LUTHIER__LDX(x12, b, 96)                                                                       \
    /* 3  */ LUTHIER__FMLAN(v11, 5, 0, 0) LUTHIER__FMLAN(v15, 5, 0, 2) LUTHIER__INSD(6, x6)                 \
             LUTHIER__FMLAN(v19, 5, 1, 0) LUTHIER__LDD(7, b, 80) LUTHIER__FMLAN(v23, 5, 1, 2)               \
             LUTHIER__FMLAN(v27, 5, 2, 0) LUTHIER__FMLAN(v31, 5, 2, 2) LUTHIER__LDD(5, b, 96)               \
    /* 4  */ LUTHIER__FMLAN(v8, 6, 0, 1) LUTHIER__LDX(x6, b, 112) LUTHIER__FMLAN(v12, 6, 0, 3)              \
             LUTHIER__INSD(7, x7) LUTHIER__FMLAN(v16, 6, 1, 1) LUTHIER__INSD(5, x12)                        \
             LUTHIER__FMLAN(v20, 6, 1, 3) LUTHIER__6x16L_LDXA(x7, x3, 8) LUTHIER__FMLAN(v24, 6, 2, 1)       \
             LUTHIER__FMLAN(v28, 6, 2, 3) LUTHIER__LDD(6, b, 112)                                           \
    /* 5  */ LUTHIER__FMLAN(v9, 7, 0, 1) LUTHIER__FMLAN(v13, 7, 0, 3) LUTHIER__FMLAN(v17, 7, 1, 1)          \
             LUTHIER__LDX(x12, b, 128) LUTHIER__FMLAN(v21, 7, 1, 3) LUTHIER__6x16L_LDXA(x13, x1, 8)         \
             LUTHIER__FMLAN(v25, 7, 2, 1) LUTHIER__INSD(6, x6) LUTHIER__FMLAN(v29, 7, 2, 3)                 \
             LUTHIER__LDX(x6, b, 144)                                                                       \
    /* 6  */ LUTHIER__FMLAN(v10, 5, 0, 1) LUTHIER__FMLAN(v14, 5, 0, 3) LUTHIER__LDD(7, b, 128)              \
             LUTHIER__FMLAN(v18, 5, 1, 1) LUTHIER__INSD(4, x7) LUTHIER__FMLAN(v22, 5, 1, 3)                 \
             LUTHIER__6x16L_LDXA(x7, x5, 8) LUTHIER__FMLAN(v26, 5, 2, 1) LUTHIER__FMLAN(v30, 5, 2, 3)       \
             LUTHIER__INSD(7, x12)                                                                          \
    /* 7  */ LUTHIER__FMLAN(v11, 6, 0, 1) LUTHIER__FMLAN(v15, 6, 0, 3) LUTHIER__6x16L_LDDA(0, x4, 8)        \
             LUTHIER__FMLAN(v19, 6, 1, 1) LUTHIER__INSD(3, x13) LUTHIER__FMLAN(v23, 6, 1, 3)                \
             LUTHIER__LDD(5, b, 144) LUTHIER__FMLAN(v27, 6, 2, 1) LUTHIER__LDX(x12, b, 160)                 \
             LUTHIER__FMLAN(v31, 6, 2, 3) LUTHIER__INSD(0, x7)                                              \
    /* 8  */ LUTHIER__FMLAN(v8, 7, 3, 0) LUTHIER__LDX(x7, b, 176) LUTHIER__FMLAN(v12, 7, 3, 2)              \
             LUTHIER__INSD(5, x6) LUTHIER__FMLAN(v16, 7, 4, 0) "add x0, x0, #16\n\t"                        \
             LUTHIER__FMLAN(v20, 7, 4, 2) LUTHIER__LDD(6, b, 160) LUTHIER__FMLAN(v24, 7, 0, 0)              \
             "add x1, x1, #16\n\t" LUTHIER__FMLAN(v28, 7, 0, 2) LUTHIER__LDD(7, b, 176)                     \
    /* 9  */ LUTHIER__FMLAN(v9, 5, 3, 0) "add x2, x2, #16\n\t" LUTHIER__FMLAN(v13, 5, 3, 2)                 \
             NX(LUTHIER__6x16L_LDDA(1, x2, 0)) LUTHIER__FMLAN(v17, 5, 4, 0) LUTHIER__INSD(6, x12)           \
             LUTHIER__FMLAN(v21, 5, 4, 2) LUTHIER__INSD(7, x7) LUTHIER__FMLAN(v25, 5, 0, 0)                 \
             NX(LUTHIER__6x16L_LDDA(2, x4, 16)) LUTHIER__FMLAN(v29, 5, 0, 2) "add x3, x3, #16\n\t"          \
    /* 10 */ LUTHIER__FMLAN(v10, 6, 3, 0) LUTHIER__FMLAN(v14, 6, 3, 2) "add x4, x4, #16\n\t"                \
             LUTHIER__FMLAN(v18, 6, 4, 0) LUTHIER__FMLAN(v22, 6, 4, 2) LUTHIER__LDX(x7, b, 208)             \
             LUTHIER__FMLAN(v26, 6, 0, 0) LUTHIER__LDX(x6, b, 192) LUTHIER__FMLAN(v30, 6, 0, 2)             \
             LUTHIER__LDD(6, b, 192)                                                                        \
    /* 11 */ LUTHIER__FMLAN(v11, 7, 3, 0) LUTHIER__LDD(5, b, 208) LUTHIER__FMLAN(v15, 7, 3, 2)              \
             LUTHIER__LDX(x12, b, 224) LUTHIER__FMLAN(v19, 7, 4, 0) LUTHIER__INSD(6, x6)                    \
             LUTHIER__FMLAN(v23, 7, 4, 2) NX(LUTHIER__LDX(x6, b, 256)) LUTHIER__FMLAN(v27, 7, 0, 0)         \
             LUTHIER__INSD(5, x7) LUTHIER__FMLAN(v31, 7, 0, 2) LUTHIER__LDX(x13, b, 240)                    \
    /* 12 */ LUTHIER__FMLAN(v8, 6, 3, 1) "add x5, x5, #16\n\t" LUTHIER__FMLAN(v12, 6, 3, 3)                 \
             LUTHIER__FMLAN(v16, 6, 4, 1) LUTHIER__LDD(7, b, 240) LUTHIER__FMLAN(v20, 6, 4, 3)              \
             LUTHIER__FMLAN(v24, 6, 0, 1) LUTHIER__FMLAN(v28, 6, 0, 3) LUTHIER__LDD(6, b, 224)              \
    /* 13 */ LUTHIER__FMLAN(v9, 5, 3, 1) NX(LUTHIER__6x16L_LDXA(x7, x5, 0)) LUTHIER__FMLAN(v13, 5, 3, 3)    \
             LUTHIER__INSD(7, x13) LUTHIER__FMLAN(v17, 5, 4, 1) LUTHIER__INSD(6, x12)                       \
             LUTHIER__FMLAN(v21, 5, 4, 3) NX(LUTHIER__INSD(2, x7)) LUTHIER__FMLAN(v25, 5, 0, 1)             \
             "add %[b], %[b], #256\n\t" LUTHIER__FMLAN(v29, 5, 0, 3) LC("subs x10, x10, #1\n\t")            \
    /* 14 */ LUTHIER__FMLAN(v10, 6, 3, 1) NX(LUTHIER__LDD(5, b, 0)) LUTHIER__FMLAN(v14, 6, 3, 3)            \
             LUTHIER__FMLAN(v18, 6, 4, 1) NX(LUTHIER__6x16L_LDXA(x7, x3, 0)) LUTHIER__FMLAN(v22, 6, 4, 3)   \
             LUTHIER__FMLAN(v26, 6, 0, 1) NX(LUTHIER__6x16L_LDXA(x12, x1, 0))                               \
             LUTHIER__FMLAN(v30, 6, 0, 3) NX(LUTHIER__INSD(5, x6))                                          \
    /* 15 */ LUTHIER__FMLAN(v27, 7, 0, 1) NX(LUTHIER__INSD(1, x7)) LUTHIER__FMLAN(v31, 7, 0, 3) NX(LUTHIER__6x16L_LDDA(0, x0, 0)) LUTHIER__FMLAN(v11, 7, 3, 1) NX(LUTHIER__LDD(6, b, 16)) LUTHIER__FMLAN(v15, 7, 3, 3) NX(LUTHIER__LDX(x6, b, 16)) LUTHIER__FMLAN(v19, 7, 4, 1) NX(LUTHIER__INSD(0, x12)) LUTHIER__FMLAN(v23, 7, 4, 3) LC("b.ne .Lluthier_6x16a53_k4_%=\n\t")
/* The loads NX makes for the first block, in the same order (B from b, A pairs from x0-x5). */
#define LUTHIER__6x16L_FIRST \
    LUTHIER__6x16L_LDDA(1, x2, 0) LUTHIER__6x16L_LDDA(2, x4, 0) LUTHIER__LDX(x6, b, 0) \
    LUTHIER__6x16L_LDXA(x7, x5, 0) LUTHIER__INSD(2, x7) LUTHIER__LDD(5, b, 0) \
    LUTHIER__6x16L_LDXA(x7, x3, 0) LUTHIER__6x16L_LDXA(x12, x1, 0) LUTHIER__INSD(5, x6) \
    LUTHIER__INSD(1, x7) LUTHIER__6x16L_LDDA(0, x0, 0) LUTHIER__LDD(6, b, 16) \
    LUTHIER__LDX(x6, b, 16) LUTHIER__INSD(0, x12)

#define LUTHIER__6x16L_K4 /* the in-order 4-step loop (see above) */                               \
        LUTHIER__6x16L_FIRST                                                                       \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.eq .Lluthier_6x16a53_last_%=\n\t"                                                       \
        ".Lluthier_6x16a53_k4_%=:\n\t"                                                             \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        LUTHIER__6x16L_BLOCK(LUTHIER__6x16L_KEEP, LUTHIER__6x16L_KEEP)                             \
        "// LLVM-MCA-END\n\t"                                                                      \
        ".Lluthier_6x16a53_last_%=:\n\t"                                                           \
        LUTHIER__6x16L_BLOCK(LUTHIER__6x16L_DROP, LUTHIER__6x16L_DROP)

LUTHIER__NEON_HYBRID(luthier_sgemm_ukernel_6x16__neonfma_hybrid_a53, 6x16, 6x16a53, 6, 16, LUTHIER__6x16L_K4, "x6", "x7", "cc",
                     "memory")

/* >>4x24 =======================================================================================
   Hybrid 4x24, the wide tile. Registers:
     C[r][4v..4v+3] = v(8 + 6r + v)     A: v0-v3 = 4 k steps of rows 0-3 (x0-x3 row pointers)
     B: v4-v7 in rotation, each loaded four FMLA groups ahead of its use
   Per k step t: 24 x  fmla C[r][v], B[v], A_r.s[t]. Per 4-step iteration: 96 FMLA, 4 A loads,
   2 ldp + 20 ldr B. */

#define LUTHIER__4x24_G(B, lane, c0, c1, c2, c3)                                                   \
    LUTHIER__FMLA(c0, B, v0, lane) LUTHIER__FMLA(c1, B, v1, lane)                                  \
    LUTHIER__FMLA(c2, B, v2, lane) LUTHIER__FMLA(c3, B, v3, lane)
#define LUTHIER__4x24_G0(B, lane) LUTHIER__4x24_G(B, lane, v8, v14, v20, v26)
#define LUTHIER__4x24_G1(B, lane) LUTHIER__4x24_G(B, lane, v9, v15, v21, v27)
#define LUTHIER__4x24_G2(B, lane) LUTHIER__4x24_G(B, lane, v10, v16, v22, v28)
#define LUTHIER__4x24_G3(B, lane) LUTHIER__4x24_G(B, lane, v11, v17, v23, v29)
#define LUTHIER__4x24_G4(B, lane) LUTHIER__4x24_G(B, lane, v12, v18, v24, v30)
#define LUTHIER__4x24_G5(B, lane) LUTHIER__4x24_G(B, lane, v13, v19, v25, v31)

#define LUTHIER__4x24_LDC(a, b, c, d, e, f)                                                        \
    "ldp " #a ", " #b ", [x9]\n\t" "ldp " #c ", " #d ", [x9, #32]\n\t"                             \
    "ldp " #e ", " #f ", [x9, #64]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__4x24_STC(a, b, c, d, e, f)                                                        \
    "stp " #a ", " #b ", [x9]\n\t" "stp " #c ", " #d ", [x9, #32]\n\t"                             \
    "stp " #e ", " #f ", [x9, #64]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__4x24_ROWS(F)                                                                      \
    F(q8, q9, q10, q11, q12, q13) F(q14, q15, q16, q17, q18, q19)                                  \
    F(q20, q21, q22, q23, q24, q25) F(q26, q27, q28, q29, q30, q31)
#define LUTHIER__4x24_BIASROW(a, b, c, d, e, f)                                                    \
    LUTHIER__MOVQ(a, v8) LUTHIER__MOVQ(b, v9) LUTHIER__MOVQ(c, v10)                                \
    LUTHIER__MOVQ(d, v11) LUTHIER__MOVQ(e, v12) LUTHIER__MOVQ(f, v13)
#define LUTHIER__4x24_BIAS                                                                         \
    "ldp q8, q9, [%[bp]]\n\t"                                                                      \
    "ldp q10, q11, [%[bp], #32]\n\t"                                                               \
    "ldp q12, q13, [%[bp], #64]\n\t"                                                               \
    LUTHIER__4x24_BIASROW(v14, v15, v16, v17, v18, v19)                                            \
    LUTHIER__4x24_BIASROW(v20, v21, v22, v23, v24, v25)                                            \
    LUTHIER__4x24_BIASROW(v26, v27, v28, v29, v30, v31)

#define LUTHIER__4x24_K4 /* 4 steps per iteration */                                               \
        ".Lluthier_4x24_k4_%=:\n\t"                                                                \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldr q0, [x0], #16\n\t"                                                                    \
        "ldr q1, [x1], #16\n\t"                                                                    \
        "ldr q2, [x2], #16\n\t"                                                                    \
        "ldr q3, [x3], #16\n\t"                                                                    \
        "ldp q4, q5, [%[b]]\n\t"                                                                   \
        "ldp q6, q7, [%[b], #32]\n\t"                                                              \
        LUTHIER__4x24_G0(v4, 0) "ldr q4, [%[b], #64]\n\t"                                          \
        LUTHIER__4x24_G1(v5, 0) "ldr q5, [%[b], #80]\n\t"                                          \
        LUTHIER__4x24_G2(v6, 0) "ldr q6, [%[b], #96]\n\t"                                          \
        LUTHIER__4x24_G3(v7, 0) "ldr q7, [%[b], #112]\n\t"                                         \
        LUTHIER__4x24_G4(v4, 0) "ldr q4, [%[b], #128]\n\t"                                         \
        LUTHIER__4x24_G5(v5, 0) "ldr q5, [%[b], #144]\n\t"                                         \
        LUTHIER__4x24_G0(v6, 1) "ldr q6, [%[b], #160]\n\t"                                         \
        LUTHIER__4x24_G1(v7, 1) "ldr q7, [%[b], #176]\n\t"                                         \
        LUTHIER__4x24_G2(v4, 1) "ldr q4, [%[b], #192]\n\t"                                         \
        LUTHIER__4x24_G3(v5, 1) "ldr q5, [%[b], #208]\n\t"                                         \
        LUTHIER__4x24_G4(v6, 1) "ldr q6, [%[b], #224]\n\t"                                         \
        LUTHIER__4x24_G5(v7, 1) "ldr q7, [%[b], #240]\n\t"                                         \
        LUTHIER__4x24_G0(v4, 2) "ldr q4, [%[b], #256]\n\t"                                         \
        LUTHIER__4x24_G1(v5, 2) "ldr q5, [%[b], #272]\n\t"                                         \
        LUTHIER__4x24_G2(v6, 2) "ldr q6, [%[b], #288]\n\t"                                         \
        LUTHIER__4x24_G3(v7, 2) "ldr q7, [%[b], #304]\n\t"                                         \
        LUTHIER__4x24_G4(v4, 2) "ldr q4, [%[b], #320]\n\t"                                         \
        LUTHIER__4x24_G5(v5, 2) "ldr q5, [%[b], #336]\n\t"                                         \
        LUTHIER__4x24_G0(v6, 3) "ldr q6, [%[b], #352]\n\t"                                         \
        LUTHIER__4x24_G1(v7, 3) "ldr q7, [%[b], #368]\n\t"                                         \
        LUTHIER__4x24_G2(v4, 3)                                                                    \
        LUTHIER__4x24_G3(v5, 3)                                                                    \
        "add %[b], %[b], #384\n\t"                                                                 \
        LUTHIER__4x24_G4(v6, 3)                                                                    \
        LUTHIER__4x24_G5(v7, 3)                                                                    \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_4x24_k4_%=\n\t"                                                            \
        "// LLVM-MCA-END\n\t"
#define LUTHIER__4x24_ACCS LUTHIER__V8_31
#define LUTHIER__4x24_ROWPTRS                                                                      \
    LUTHIER__ROWPTR(x1, 1, 8) LUTHIER__ROWPTR(x2, 2, 16) LUTHIER__ROWPTR(x3, 3, 24)                \
    "add %[ar], %[ar], #32\n\t"
#define LUTHIER__4x24_REM                                                                          \
    "ldr s0, [x0], #4\n\t"                                                                         \
    "ldr s1, [x1], #4\n\t"                                                                         \
    "ldr s2, [x2], #4\n\t"                                                                         \
    "ldr s3, [x3], #4\n\t"                                                                         \
    "ldp q4, q5, [%[b]]\n\t"                                                                       \
    "ldp q6, q7, [%[b], #32]\n\t"                                                                  \
    LUTHIER__4x24_G0(v4, 0) "ldr q4, [%[b], #64]\n\t"                                              \
    LUTHIER__4x24_G1(v5, 0) "ldr q5, [%[b], #80]\n\t"                                              \
    LUTHIER__4x24_G2(v6, 0)                                                                        \
    LUTHIER__4x24_G3(v7, 0)                                                                        \
    "add %[b], %[b], #96\n\t"                                                                      \
    LUTHIER__4x24_G4(v4, 0)                                                                        \
    LUTHIER__4x24_G5(v5, 0)
#define LUTHIER__4x24_CLOBBERS                                                                     \
    "x0", "x1", "x2", "x3", "x9", "x10", "x11", "x12", "x13", LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V8_31

LUTHIER__NEON_HYBRID(luthier_sgemm_ukernel_4x24__neonfma_hybrid, 4x24, 4x24, 4, 24, LUTHIER__4x24_K4, "cc", "memory")

/* >>8x4 ========================================================================================
   Hybrid 8x4, the narrow tile (few output channels, tall C). Registers:
     C[r][0..3] = v(24 + r)     A: v16-v23 = 4 k steps of rows 0-7 (x0-x7 row pointers)
     B: v0-v3, one per k step
   Per k step t: 8 x  fmla C[r], B_t, A_r.s[t]. Per 4-step iteration: 32 FMLA, 8 A loads, 2 ldp
   B. Each accumulator takes 4 dependent FMLAs per iteration; 8 independent chains cover the
   FMLA latency at 2 per cycle (N1) and 1 per cycle (A57). No callee-saved register is used. */

#define LUTHIER__8x4_STEP(B, lane)                                                                 \
    LUTHIER__FMLA(v24, B, v16, lane) LUTHIER__FMLA(v25, B, v17, lane)                              \
    LUTHIER__FMLA(v26, B, v18, lane) LUTHIER__FMLA(v27, B, v19, lane)                              \
    LUTHIER__FMLA(v28, B, v20, lane) LUTHIER__FMLA(v29, B, v21, lane)                              \
    LUTHIER__FMLA(v30, B, v22, lane) LUTHIER__FMLA(v31, B, v23, lane)
#define LUTHIER__8x4_LDC(a) "ldr " #a ", [x9]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__8x4_STC(a) "str " #a ", [x9]\n\t" "add x9, x9, %[ld]\n\t"
#define LUTHIER__8x4_ROWS(F) F(q24) F(q25) F(q26) F(q27) F(q28) F(q29) F(q30) F(q31)
#define LUTHIER__8x4_BIASROW(a) LUTHIER__MOVQ(a, v24)
#define LUTHIER__8x4_BIAS                                                                          \
    "ldr q24, [%[bp]]\n\t"                                                                         \
    LUTHIER__8x4_BIASROW(v25) LUTHIER__8x4_BIASROW(v26) LUTHIER__8x4_BIASROW(v27)                  \
    LUTHIER__8x4_BIASROW(v28) LUTHIER__8x4_BIASROW(v29) LUTHIER__8x4_BIASROW(v30)                  \
    LUTHIER__8x4_BIASROW(v31)

#define LUTHIER__8x4_K4 /* 4 steps per iteration */                                                \
        ".Lluthier_8x4_k4_%=:\n\t"                                                                 \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldr q16, [x0], #16\n\t"                                                                   \
        "ldr q17, [x1], #16\n\t"                                                                   \
        "ldr q18, [x2], #16\n\t"                                                                   \
        "ldr q19, [x3], #16\n\t"                                                                   \
        "ldp q0, q1, [%[b]]\n\t"                                                                   \
        "ldr q20, [x4], #16\n\t"                                                                   \
        "ldr q21, [x5], #16\n\t"                                                                   \
        "ldr q22, [x6], #16\n\t"                                                                   \
        "ldr q23, [x7], #16\n\t"                                                                   \
        "ldp q2, q3, [%[b], #32]\n\t"                                                              \
        LUTHIER__8x4_STEP(v0, 0)                                                                   \
        LUTHIER__8x4_STEP(v1, 1)                                                                   \
        "add %[b], %[b], #64\n\t"                                                                  \
        LUTHIER__8x4_STEP(v2, 2)                                                                   \
        LUTHIER__8x4_STEP(v3, 3)                                                                   \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_8x4_k4_%=\n\t"                                                             \
        "// LLVM-MCA-END\n\t"
#define LUTHIER__8x4_ACCS LUTHIER__V24_31
#define LUTHIER__8x4_ROWPTRS                                                                       \
    LUTHIER__ROWPTR(x1, 1, 8) LUTHIER__ROWPTR(x2, 2, 16) LUTHIER__ROWPTR(x3, 3, 24)                \
    LUTHIER__ROWPTR(x4, 4, 32) LUTHIER__ROWPTR(x5, 5, 40) LUTHIER__ROWPTR(x6, 6, 48)               \
    LUTHIER__ROWPTR(x7, 7, 56)                                                                     \
    "add %[ar], %[ar], #64\n\t"
#define LUTHIER__8x4_REM                                                                           \
    "ldr s16, [x0], #4\n\t"                                                                        \
    "ldr s17, [x1], #4\n\t"                                                                        \
    "ldr s18, [x2], #4\n\t"                                                                        \
    "ldr s19, [x3], #4\n\t"                                                                        \
    "ldr s20, [x4], #4\n\t"                                                                        \
    "ldr s21, [x5], #4\n\t"                                                                        \
    "ldr s22, [x6], #4\n\t"                                                                        \
    "ldr s23, [x7], #4\n\t"                                                                        \
    "ldr q0, [%[b]], #16\n\t"                                                                      \
    LUTHIER__8x4_STEP(v0, 0)
#define LUTHIER__8x4_CLOBBERS                                                                      \
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x9", "x10", "x11", "x12", "x13", "v0",        \
    "v1", "v2", "v3", LUTHIER__CLOB_V16_31

LUTHIER__NEON_HYBRID(luthier_sgemm_ukernel_8x4__neonfma_hybrid, 8x4, 8x4, 8, 4, LUTHIER__8x4_K4, "cc", "memory")

/* >>pack: A packing for the interleaved kernels when MR is a multiple of 4 (8x12, 8x6): 4 rows
   x 4 k-steps are loaded as 4 q registers and transposed in registers (trn1/trn2 + 64-bit
   combines), so every store writes 4 consecutive floats of one k-step. Edge panels (fewer than
   MR rows) and the k remainder go through the scalar loop. Returns 0 when it packed nothing
   (the caller then packs with the portable loop). */
LUTHIER_PRIVATE int luthier__pack_a_neon(const float *a, size_t lda, size_t mb, size_t kb,
                                         size_t mr, float *dst) {
    size_t i0, g, kk, i;
    if (mr % 4 != 0) return 0;
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = mb - i0 < mr ? mb - i0 : mr;
        size_t kdone = 0;
        if (mv == mr) {
            for (g = 0; g < mr; g += 4) {
                const float *r0 = a + (i0 + g) * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;
                for (kk = 0; kk + 4 <= kb; kk += 4) {
                    const float32x4x2_t t01 = vtrnq_f32(vld1q_f32(r0 + kk), vld1q_f32(r1 + kk));
                    const float32x4x2_t t23 = vtrnq_f32(vld1q_f32(r2 + kk), vld1q_f32(r3 + kk));
                    float *d = dst + kk * mr + g;
                    vst1q_f32(d, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
                    vst1q_f32(d + mr, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
                    vst1q_f32(d + 2 * mr, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
                    vst1q_f32(d + 3 * mr, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
                }
            }
            kdone = kb - kb % 4;
        }
        for (kk = kdone; kk < kb; kk++)
            for (i = 0; i < mr; i++) dst[kk * mr + i] = i < mv ? a[(i0 + i) * lda + kk] : 0.0f;
    }
    return 1;
}

/* >>depthwise ==================================================================================

   fp32 depthwise convolution, NHWC (luthier.h >>impl-conv-run gathers the taps and the runs).
   - luthier__dw_pixel_neon: one output pixel over all C channels, the taps gathered by the
     caller (x[t], w[t]); 8 channels per step with even and odd taps in separate accumulators
     (four FMLA chains), the last C % 8 channels through lane loads and stores (nothing is read
     or written past C).
   - luthier__dw_rows3x3_neon, luthier__dw_rows5x5_neon: runs of output pixels of a K x K
     layer with dilation 1 and stride 1 or 2 (luthier__dw_run). Pixels with a tap in the
     padding, and the channels past the last whole chunk of the others, go to the pixel
     routine; the rest go, per channel chunk (3x3: 4 channels, 5x5: 8), to a segment kernel
     that computes a group of pixels at a time (3x3: 8, 5x5: 4; 8 accumulators either way; the
     last pixels of a segment in groups of 4, 2 and 1): each input column of a tap row is
     loaded once and used by every pixel it is a tap of (3x3 stride 1: 10 column loads for 24
     taps). A chunk's weights, bias and clamp bounds are first packed into one small block
     (luthier__dw_neon_pack), so that every load of them is base + constant. 3x3 keeps its 9
     weight vectors in registers for the whole segment; 5x5 loads one tap row (5 x 2 vectors,
     from L1) per group, as its 50 vectors and 8 accumulators cannot all be in registers. The
     loads are volatile asm placed in the source's order (the compiler's own schedule spilled
     or copied registers; see luthier__neon_ldq), input columns in small batches
     (LUTHIER__DW_NB). Segment kernels are specialized by K, stride, accumulate and clamp
     (luthier__dw_seg<K>_s<stride>_a<acc>_c<clamp>).
   - Every pixel's taps are summed in one fixed order whatever the run or the thread split
     (the segment kernel: tap 0 first, from bias + residual; its groups of every size give the
     same bits), so results do not depend on the split.
   - The contract of the x86 routines: with no accumulate the output is never read; bias and
     the residual (accumulate) start the sum; taps in the padding are left out (not multiplied
     by zero: an Inf weight there gives no NaN); the clamp is fmin(fmax(v, lo), hi), which keeps
     NaN as PyTorch and the other paths do (test_conv_depthwise_nan). */

/* Complete unrolling of the fixed-count loops below (K, stride and pixel counts are constants
   of each specialization), so that their vectors stay in registers. */
#if defined(__clang__)
#define LUTHIER__DW_UNROLL _Pragma("unroll")
#else
#define LUTHIER__DW_UNROLL _Pragma("GCC unroll 32")
#endif

/* n floats (0..4) of p in the low lanes, zeros above; reads p[0, n) only. */
LUTHIER__INLINE float32x4_t luthier__neon_ld_part(const float *p, size_t n) {
    float32x4_t v = vdupq_n_f32(0.0f);
    if (n > 0) v = vld1q_lane_f32(p, v, 0);
    if (n > 1) v = vld1q_lane_f32(p + 1, v, 1);
    if (n > 2) v = vld1q_lane_f32(p + 2, v, 2);
    if (n > 3) v = vld1q_lane_f32(p + 3, v, 3);
    return v;
}
/* The low n lanes (0..4) of v to p[0, n). */
LUTHIER__INLINE void luthier__neon_st_part(float *p, float32x4_t v, size_t n) {
    if (n > 0) vst1q_lane_f32(p, v, 0);
    if (n > 1) vst1q_lane_f32(p + 1, v, 1);
    if (n > 2) vst1q_lane_f32(p + 2, v, 2);
    if (n > 3) vst1q_lane_f32(p + 3, v, 3);
}
/* Vector loads and store for the depthwise segment kernels. The loads are volatile asm (GCC's
   schedulers move nothing across one), so they stay where the source puts them: GCC 12's first
   scheduling pass would otherwise hoist the input loads far ahead of their FMLAs and the
   register allocator pay for it with vector-pipe movs (7 per group on 3x3 stride 1, 33 on 5x5).
   ldq: one vector, any address mode ([x, #imm], [x, x]); ldq2: two adjacent vectors (LDP). An
   accumulator's start is loaded from the bias in place (the compiler would load the bias once
   and copy it into each accumulator with a vector-pipe mov). ST1 takes one vector-pipe slot
   where STR Q takes two on Neoverse-N1 (llvm-mca's model). */
typedef float luthier__neon_f4 __attribute__((vector_size(16), aligned(4), may_alias)); /* 4 floats anywhere */
LUTHIER__INLINE float32x4_t luthier__neon_ldq(const float *p) {
    float32x4_t v;
    __asm__ volatile("ldr %q0, %1" : "=w"(v) : "m"(*(const luthier__neon_f4 *)p));
    return v;
}
LUTHIER__INLINE void luthier__neon_ldq2(const float *p, float32x4_t *a, float32x4_t *b) {
    __asm__ volatile("ldp %q0, %q1, %2" : "=w"(*a), "=w"(*b) : "Q"(*(const float(*)[8])p));
}
LUTHIER__INLINE void luthier__neon_st1(float *p, float32x4_t v) {
    __asm__("st1 {%1.4s}, %0" : "=Q"(*(float(*)[4])p) : "w"(v));
}

/* The activation clamp: fmax/fmin return NaN when either operand is NaN, so NaN stays NaN. */
LUTHIER__INLINE float32x4_t luthier__neon_clamp(float32x4_t v, float32x4_t lo, float32x4_t hi) {
    return vminq_f32(vmaxq_f32(v, lo), hi);
}

/* Channels [c, c + n0 + n1) of one pixel (n0 + n1 == 8 when full; else n0 <= 4, n1 <= 4). */
LUTHIER__INLINE void luthier__dw_pixel_neon_step(float *o, const float *const *x, const float *const *w, int taps,
                                                 const float *bias, int accumulate, int clamp, float32x4_t vlo,
                                                 float32x4_t vhi, size_t c, size_t n0, size_t n1, const int full) {
#define LUTHIER__DW_LD(p, n) (full ? vld1q_f32(p) : luthier__neon_ld_part((p), (n)))
    float32x4_t a0 = bias ? LUTHIER__DW_LD(bias + c, n0) : vdupq_n_f32(0.0f);
    float32x4_t a1 = bias ? LUTHIER__DW_LD(bias + c + 4, n1) : vdupq_n_f32(0.0f);
    float32x4_t b0 = vdupq_n_f32(0.0f), b1 = vdupq_n_f32(0.0f);
    int t;
    if (accumulate) {
        a0 = vaddq_f32(a0, LUTHIER__DW_LD(o + c, n0));
        a1 = vaddq_f32(a1, LUTHIER__DW_LD(o + c + 4, n1));
    }
    for (t = 0; t + 1 < taps; t += 2) {
        a0 = vfmaq_f32(a0, LUTHIER__DW_LD(x[t] + c, n0), LUTHIER__DW_LD(w[t] + c, n0));
        a1 = vfmaq_f32(a1, LUTHIER__DW_LD(x[t] + c + 4, n1), LUTHIER__DW_LD(w[t] + c + 4, n1));
        b0 = vfmaq_f32(b0, LUTHIER__DW_LD(x[t + 1] + c, n0), LUTHIER__DW_LD(w[t + 1] + c, n0));
        b1 = vfmaq_f32(b1, LUTHIER__DW_LD(x[t + 1] + c + 4, n1), LUTHIER__DW_LD(w[t + 1] + c + 4, n1));
    }
    if (t < taps) {
        a0 = vfmaq_f32(a0, LUTHIER__DW_LD(x[t] + c, n0), LUTHIER__DW_LD(w[t] + c, n0));
        a1 = vfmaq_f32(a1, LUTHIER__DW_LD(x[t] + c + 4, n1), LUTHIER__DW_LD(w[t] + c + 4, n1));
    }
#undef LUTHIER__DW_LD
    a0 = vaddq_f32(a0, b0);
    a1 = vaddq_f32(a1, b1);
    if (clamp) {
        a0 = luthier__neon_clamp(a0, vlo, vhi);
        a1 = luthier__neon_clamp(a1, vlo, vhi);
    }
    if (full) {
        vst1q_f32(o + c, a0);
        vst1q_f32(o + c + 4, a1);
    } else {
        luthier__neon_st_part(o + c, a0, n0);
        luthier__neon_st_part(o + c + 4, a1, n1);
    }
}

/* One depthwise output pixel (the interface of luthier__dw_pixel_c). */
LUTHIER_PRIVATE void luthier__dw_pixel_neon(float *o, const float *const *x, const float *const *w, int taps,
                                            const float *bias, int accumulate, int clamp, float lo, float hi,
                                            size_t C) {
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    size_t c;
    for (c = 0; c + 8 <= C; c += 8)
        luthier__dw_pixel_neon_step(o, x, w, taps, bias, accumulate, clamp, vlo, vhi, c, 4, 4, 1);
    if (c < C) {
        const size_t r = C - c;
        luthier__dw_pixel_neon_step(o, x, w, taps, bias, accumulate, clamp, vlo, vhi, c, r < 4 ? r : 4,
                                    r > 4 ? r - 4 : 0, 0);
    }
}

/* Segment kernels: NV vectors of 4 channels x P pixels per group, 8 accumulators (independent
   FMLA chains: 2 pipes x 4 cycles of latency on Neoverse-N1). 3x3: 1 x 8, its 9 weight vectors
   in registers for the whole segment. 5x5: 2 x 4, one tap row of weights (10 vectors) loaded
   per group (1 x 8 takes twice the passes over the input rows). */
#define LUTHIER__DW_NV(K) ((K) == 3 ? 1 : 2)
#define LUTHIER__DW_P(K) (8 / LUTHIER__DW_NV(K))

/* A channel chunk's parameters, packed once per chunk so that every load of them is base +
   constant: tap t's NV vectors at 4 * NV * t, the bias (NV vectors, zeros without one), then lo
   and hi (a vector each). */
#define LUTHIER__DW_PACK_FLOATS (8 * LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K + 8 + 8)
LUTHIER__INLINE void luthier__dw_neon_pack(float *pk, const float *w, const float *bias, float lo, float hi,
                                           size_t C, int K) {
    const int cw = 4 * LUTHIER__DW_NV(K);
    int t, i;
    for (t = 0; t < K * K; t++)
        for (i = 0; i < cw; i++) pk[t * cw + i] = w[(size_t)t * C + (size_t)i];
    for (i = 0; i < cw; i++) pk[K * K * cw + i] = bias ? bias[i] : 0.0f;
    for (i = 0; i < 4; i++) {
        pk[K * K * cw + cw + i] = lo;
        pk[K * K * cw + cw + 4 + i] = hi;
    }
}

/* The input columns of a tap row are loaded in batches of LUTHIER__DW_NB columns, a batch one
   column before the FMLAs of its first column (the first batch at column 0). Long batches suit
   in-order cores (llvm-mca's Cortex-A53 model holds a load until the older FMLAs are done),
   short ones the Cortex-A57 model (one load pipe): 3x3 stride 2 in batches of 9 rates 25 % on
   the A53 model and 86 % on the A57, in batches of 3 16 % and 92 %. 3x3 stride 1: 9 (of 10
   columns: all 3 rates improve), stride 2: 3 (of 17); 5x5 (2 vectors a column, by LDP): 1. */
#define LUTHIER__DW_NB(K, S) ((K) == 5 ? 1 : (S) == 1 ? 9 : 3)
#define LUTHIER__DW_COLS 17 /* columns of a tap row, at most: (P - 1) * S + K */

/* acc[p] += the taps of one tap row (wr: K x NV vectors) for P pixels at stride S: input column
   j (x + j * C) is tap k = j - p * S of pixel p, so pixel p sees k = 0..K-1 in turn; each column
   is loaded once. */
LUTHIER__INLINE void luthier__dw_neon_taprow(float32x4_t acc[8][2], const float *x, size_t C, const float32x4_t *wr,
                                             const int K, const int S, const int P, const int NV) {
    const int ncol = (P - 1) * S + K, NB = LUTHIER__DW_NB(K, S);
    float32x4_t xc[LUTHIER__DW_COLS][2];
    int i, j, p, v;
    LUTHIER__DW_UNROLL for (j = 0; j < ncol; j++) {
        LUTHIER__DW_UNROLL for (i = 0; i < ncol; i++) {
            const int first = i - i % NB; /* of column i's batch */
            if ((first > 0 ? first - 1 : 0) != j) continue;
            if (NV == 2)
                luthier__neon_ldq2(x + (size_t)i * C, &xc[i][0], &xc[i][1]);
            else
                xc[i][0] = luthier__neon_ldq(x + (size_t)i * C);
        }
        LUTHIER__DW_UNROLL for (p = 0; p < P; p++) {
            const int k = j - p * S;
            if (k >= 0 && k < K)
                LUTHIER__DW_UNROLL for (v = 0; v < NV; v++) acc[p][v] = vfmaq_f32(acc[p][v], xc[j][v], wr[NV * k + v]);
        }
    }
}

/* P pixels x NV vectors: x[r] is the first input column of tap row r, pk the packed chunk, wv
   its weight vectors or NULL (then loaded per tap row). */
LUTHIER__INLINE void luthier__dw_neon_group(const float *const *x, float *o, size_t C, const float32x4_t *wv,
                                            const float *pk, const int K, const int S, const int P, const int NV,
                                            const int ACC, const int CLAMP) {
    float32x4_t acc[8][2], wr[2 * LUTHIER__DW_ROWS_K], lo, hi;
    const float *b;
    int p, r, k, v;
    /* pk and o opaque here: pk + constant is then formed in each load's address and o + p * C
       in each store's, not hoisted out of the pixel loop as pointers that spill (5x5: 50) */
    __asm__("" : "+r"(pk), "+r"(o));
    b = pk + 4 * NV * K * K;
    LUTHIER__DW_UNROLL for (p = 0; p < P; p++)
        LUTHIER__DW_UNROLL for (v = 0; v < NV; v++) {
            acc[p][v] = luthier__neon_ldq(b + 4 * v);
            if (ACC) acc[p][v] = vaddq_f32(acc[p][v], vld1q_f32(o + (size_t)p * C + 4 * (size_t)v));
        }
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) {
        if (!wv)
            LUTHIER__DW_UNROLL for (k = 0; k < NV * K; k++) wr[k] = luthier__neon_ldq(pk + 4 * (NV * K * r + k));
        luthier__dw_neon_taprow(acc, x[r], C, wv ? wv + NV * K * r : wr, K, S, P, NV);
    }
    if (CLAMP) {
        lo = luthier__neon_ldq(b + 4 * NV);
        hi = luthier__neon_ldq(b + 4 * NV + 4);
    }
    LUTHIER__DW_UNROLL for (p = 0; p < P; p++)
        LUTHIER__DW_UNROLL for (v = 0; v < NV; v++) {
            if (CLAMP) acc[p][v] = luthier__neon_clamp(acc[p][v], lo, hi);
            luthier__neon_st1(o + (size_t)p * C + 4 * (size_t)v, acc[p][v]);
        }
}

/* One group of P pixels at o, then x moves P pixels on. */
LUTHIER__INLINE void luthier__dw_neon_next(const float **x, float *o, size_t C, const float32x4_t *wv, const float *pk,
                                           const int K, const int S, const int P, const int ACC, const int CLAMP) {
    int r;
    luthier__dw_neon_group(x, o, C, wv, pk, K, S, P, LUTHIER__DW_NV(K), ACC, CLAMP);
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) x[r] += (size_t)(P * S) * C;
}

/* n interior pixels of one run, one chunk of 4 * NV channels: xr[r] = input column of pixel
   0's tap (r, 0), o = pixel 0's output, pk the chunk packed by luthier__dw_neon_pack. The last
   n % P pixels go in groups of 4, 2 and 1 (a pixel alone is one FMLA chain per vector). */
typedef void (*luthier__dw_seg_fn)(const float *const *xr, float *o, size_t n, size_t C, const float *pk);

LUTHIER__INLINE void luthier__dw_neon_seg(const float *const *xr, float *o, size_t n, size_t C, const float *pk,
                                          const int K, const int S, const int ACC, const int CLAMP) {
    const int P = LUTHIER__DW_P(K), hoist = K == 3;
    const float32x4_t *w = NULL;
    float32x4_t wv[9];
    const float *x[LUTHIER__DW_ROWS_K];
    size_t p;
    int r, t;
    if (hoist) {
        LUTHIER__DW_UNROLL for (t = 0; t < 9; t++) wv[t] = vld1q_f32(pk + 4 * t);
        w = wv;
    }
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) x[r] = xr[r];
    for (p = 0; p + (size_t)P <= n; p += (size_t)P) luthier__dw_neon_next(x, o + p * C, C, w, pk, K, S, P, ACC, CLAMP);
    if (P > 4 && n - p >= 4) {
        luthier__dw_neon_next(x, o + p * C, C, w, pk, K, S, 4, ACC, CLAMP);
        p += 4;
    }
    if (n - p >= 2) {
        luthier__dw_neon_next(x, o + p * C, C, w, pk, K, S, 2, ACC, CLAMP);
        p += 2;
    }
    if (p < n) luthier__dw_neon_next(x, o + p * C, C, w, pk, K, S, 1, ACC, CLAMP);
}

/* The segment kernels of a datatype (fp32 here, fp16: >>dw-h16-rows), one per K (3, 5), stride
   (1, 2), accumulate and clamp: prefix<K>_s<stride>_a<accumulate>_c<clamp>, which runs seg(xr, o,
   n, C, pk, K, S, A, CL) with those constants (TARGET: their target attribute, T the element, PK
   the packed weights); LUTHIER__DW_SEG_TABLE(prefix): their table, [K == 5][stride == 2]
   [accumulate * 2 + clamp]. */
#define LUTHIER__DW_SEG(TARGET, prefix, seg, T, PK, K, S, A, CL)                                      \
    TARGET LUTHIER_PRIVATE void prefix##K##_s##S##_a##A##_c##CL(const T *const *xr, T *o, size_t n, size_t C, PK pk) { \
        seg(xr, o, n, C, pk, K, S, A, CL);                                                            \
    }
#define LUTHIER__DW_SEGS_KS(TARGET, prefix, seg, T, PK, K, S)                                         \
    LUTHIER__DW_SEG(TARGET, prefix, seg, T, PK, K, S, 0, 0) LUTHIER__DW_SEG(TARGET, prefix, seg, T, PK, K, S, 0, 1) \
    LUTHIER__DW_SEG(TARGET, prefix, seg, T, PK, K, S, 1, 0) LUTHIER__DW_SEG(TARGET, prefix, seg, T, PK, K, S, 1, 1)
#define LUTHIER__DW_SEGS(TARGET, prefix, seg, T, PK)                                                  \
    LUTHIER__DW_SEGS_KS(TARGET, prefix, seg, T, PK, 3, 1) LUTHIER__DW_SEGS_KS(TARGET, prefix, seg, T, PK, 3, 2) \
    LUTHIER__DW_SEGS_KS(TARGET, prefix, seg, T, PK, 5, 1) LUTHIER__DW_SEGS_KS(TARGET, prefix, seg, T, PK, 5, 2)
#define LUTHIER__DW_SEG_ROW(p, K, S) {p##K##_s##S##_a0_c0, p##K##_s##S##_a0_c1, p##K##_s##S##_a1_c0, p##K##_s##S##_a1_c1}
#define LUTHIER__DW_SEG_TABLE(p)                                                                      \
    {{LUTHIER__DW_SEG_ROW(p, 3, 1), LUTHIER__DW_SEG_ROW(p, 3, 2)}, {LUTHIER__DW_SEG_ROW(p, 5, 1), LUTHIER__DW_SEG_ROW(p, 5, 2)}}
LUTHIER__DW_SEGS(, luthier__dw_seg, luthier__dw_neon_seg, float, const float *)
static const luthier__dw_seg_fn luthier__dw_segs[2][2][4] = LUTHIER__DW_SEG_TABLE(luthier__dw_seg);

/* Interior pixels [*pl, *pr) of a run of npix pixels from input column ix0 (any datatype): every
   row present (all_rows) and columns ix .. ix + K - 1 inside. */
LUTHIER__INLINE void luthier__dw_interior(int64_t ix0, size_t npix, int all_rows, int64_t stride, int64_t in_w, int K,
                                          size_t *pl, size_t *pr) {
    const int64_t last = in_w - K - ix0; /* interior while p * stride <= last */
    *pl = *pr = 0;
    if (!all_rows || last < 0) return;
    *pr = (size_t)(last / stride + 1) < npix ? (size_t)(last / stride + 1) : npix;
    *pl = ix0 >= 0 ? 0 : (size_t)((-ix0 + stride - 1) / stride);
    if (*pl > *pr) *pl = *pr;
}
LUTHIER__INLINE void luthier__dw_neon_interior(const luthier__dw_run *u, int64_t stride, int64_t in_w, int K,
                                               size_t *pl, size_t *pr) {
    int r, all = 1;
    for (r = 0; r < K; r++) all = all && u->rows[r];
    luthier__dw_interior(u->ix0, u->npix, all, stride, in_w, K, pl, pr);
}

/* The pixels of run u outside [pl, pr) on every channel, those inside on channels [cf, C). */
LUTHIER__INLINE void luthier__dw_neon_edges(const luthier__dw_run *u, size_t pl, size_t pr, size_t cf,
                                            int64_t stride, int64_t in_w, const float *w, const float *bias,
                                            int accumulate, int clamp, float lo, float hi, size_t C, int K) {
    const float *xs[LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K], *ws[LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K];
    size_t p;
    int r, k, taps;
    for (p = 0; p < u->npix; p++) {
        const int64_t ix = u->ix0 + (int64_t)p * stride;
        const int inside = p >= pl && p < pr;
        const size_t c0 = inside ? cf : 0;
        if (c0 == C) continue;
        for (r = 0, taps = 0; r < K; r++) {
            if (!u->rows[r]) continue;
            for (k = 0; k < K; k++) {
                if (ix + k < 0 || ix + k >= in_w) continue;
                xs[taps] = u->rows[r] + (size_t)(ix + k) * C + c0;
                ws[taps++] = w + (size_t)(r * K + k) * C + c0;
            }
        }
        luthier__dw_pixel_neon(u->o + p * C + c0, xs, ws, taps, bias ? bias + c0 : NULL, accumulate, clamp, lo, hi,
                               C - c0);
    }
}

/* Runs of a K x K depthwise layer, dilation 1, stride 1 or 2 (the dw_rows interface). */
LUTHIER__INLINE void luthier__dw_rows_neon(const luthier__dw_run *runs, size_t nruns, int64_t stride, int64_t in_w,
                                           const float *w, const float *bias, int accumulate, int clamp, float lo,
                                           float hi, size_t C, const int K) {
    const luthier__dw_seg_fn seg = luthier__dw_segs[K == 5][stride == 2][(accumulate != 0) * 2 + (clamp != 0)];
    const size_t cw = 4 * (size_t)LUTHIER__DW_NV(K), cf = C - C % cw; /* channels of whole chunks */
    size_t lim[LUTHIER__DW_RUNS][2], q, c;
    float pk[LUTHIER__DW_PACK_FLOATS] __attribute__((aligned(16)));
    int r;
    for (q = 0; q < nruns; q++) {
        luthier__dw_neon_interior(&runs[q], stride, in_w, K, &lim[q][0], &lim[q][1]);
        luthier__dw_neon_edges(&runs[q], lim[q][0], lim[q][1], cf, stride, in_w, w, bias, accumulate, clamp, lo, hi,
                               C, K);
    }
    for (c = 0; c < cf; c += cw) {
        luthier__dw_neon_pack(pk, w + c, bias ? bias + c : NULL, lo, hi, C, K);
        for (q = 0; q < nruns; q++) {
            const luthier__dw_run *u = &runs[q];
            const float *xr[LUTHIER__DW_ROWS_K];
            if (lim[q][1] == lim[q][0]) continue;
            for (r = 0; r < K; r++) xr[r] = u->rows[r] + (size_t)(u->ix0 + (int64_t)lim[q][0] * stride) * C + c;
            seg(xr, u->o + lim[q][0] * C + c, lim[q][1] - lim[q][0], C, pk);
        }
    }
}

LUTHIER_PRIVATE void luthier__dw_rows3x3_neon(const luthier__dw_run *runs, size_t nruns, int64_t stride,
                                              int64_t in_w, const float *w, const float *bias, int accumulate,
                                              int clamp, float lo, float hi, size_t C) {
    luthier__dw_rows_neon(runs, nruns, stride, in_w, w, bias, accumulate, clamp, lo, hi, C, 3);
}
LUTHIER_PRIVATE void luthier__dw_rows5x5_neon(const luthier__dw_run *runs, size_t nruns, int64_t stride,
                                              int64_t in_w, const float *w, const float *bias, int accumulate,
                                              int clamp, float lo, float hi, size_t C) {
    luthier__dw_rows_neon(runs, nruns, stride, in_w, w, bias, accumulate, clamp, lo, hi, C, 5);
}

/* >>transpose: y[a * ys + b] = x[b * xs + a] for a < na, b < nb: the layout edges (NCHW <->
   NHWC, luthier.h) and the tiles of luthier__op_transpose. 4 x 4 blocks in registers (trn1/trn2
   of .4s, then the 64-bit halves combined), the edges one float at a time; a in blocks of 64,
   so that the 64 rows of y being written stay in L1 while b runs. */
#define LUTHIER__TRANSPOSE_BLOCK 64
LUTHIER_PRIVATE void luthier__transpose_neon(const float *x, size_t xs, float *y, size_t ys, size_t nb, size_t na) {
    size_t a0, a, b;
    for (a0 = 0; a0 < na; a0 += LUTHIER__TRANSPOSE_BLOCK) {
        const size_t a1 = na - a0 < LUTHIER__TRANSPOSE_BLOCK ? na : a0 + LUTHIER__TRANSPOSE_BLOCK;
        for (b = 0; b + 4 <= nb; b += 4) {
            const float *x0 = x + b * xs, *x1 = x0 + xs, *x2 = x1 + xs, *x3 = x2 + xs;
            for (a = a0; a + 4 <= a1; a += 4) {
                const float32x4x2_t t01 = vtrnq_f32(vld1q_f32(x0 + a), vld1q_f32(x1 + a));
                const float32x4x2_t t23 = vtrnq_f32(vld1q_f32(x2 + a), vld1q_f32(x3 + a));
                float *d = y + a * ys + b;
                vst1q_f32(d, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
                vst1q_f32(d + ys, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
                vst1q_f32(d + 2 * ys, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
                vst1q_f32(d + 3 * ys, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
            }
            for (; a < a1; a++) {
                float *d = y + a * ys + b;
                d[0] = x0[a];
                d[1] = x1[a];
                d[2] = x2[a];
                d[3] = x3[a];
            }
        }
        for (; b < nb; b++)
            for (a = a0; a < a1; a++) y[a * ys + b] = x[b * xs + a];
    }
}

/* >>f16w =======================================================================================
   Hybrid 6x16 over fp16 B (the F16W family): per step of k, 16 halves (32 bytes, half the B
   traffic of 6x16__neonfma_hybrid) widened by FCVTL/FCVTL2 (Armv8.0: every A53/A72 has them),
   then the fp32 tile's 24 FMLAs by the rows' broadcast A values. Intrinsics: the kernel serves
   memory-bound dense layers (batch 1: B streams from DRAM once), where the schedule matters
   less than the bytes; the tile edges go through the stack tile of the asm kernels. */
LUTHIER__INLINE void luthier__neon_f16w_tile(const luthier_sgemm_ukernel_args *p, float *cp, size_t ld,
                                             const float *bp, const int R) {
    const uint16_t *b = (const uint16_t *)(const void *)p->b;
    const int load = (p->flags & LUTHIER_UKERNEL_LOAD_C) != 0;
    float32x4_t acc[6][4];
    size_t s, kk;
    int r, v;
    for (r = 0; r < R; r++)
        for (v = 0; v < 4; v++)
            acc[r][v] = load ? vld1q_f32(cp + (size_t)r * ld + 4 * v) : bp ? vld1q_f32(bp + 4 * v) : vdupq_n_f32(0.0f);
    for (s = 0; s < p->ks; s++) {
        const float *const *ar = p->a_rows + s * 6;
        for (kk = 0; kk < p->k; kk++, b += 16) {
            const float16x8_t h0 = vreinterpretq_f16_u16(vld1q_u16(b)), h1 = vreinterpretq_f16_u16(vld1q_u16(b + 8));
            float32x4_t bv[4];
            bv[0] = vcvt_f32_f16(vget_low_f16(h0));
            bv[1] = vcvt_high_f32_f16(h0);
            bv[2] = vcvt_f32_f16(vget_low_f16(h1));
            bv[3] = vcvt_high_f32_f16(h1);
            for (r = 0; r < R; r++) {
                const float32x4_t av = vdupq_n_f32(ar[r][kk]);
                for (v = 0; v < 4; v++) acc[r][v] = vfmaq_f32(acc[r][v], bv[v], av);
            }
        }
    }
    if (p->flags & LUTHIER_UKERNEL_CLAMP) {
        const float32x4_t lo = vdupq_n_f32(p->min), hi = vdupq_n_f32(p->max);
        for (r = 0; r < R; r++)
            for (v = 0; v < 4; v++) acc[r][v] = vminq_f32(hi, vmaxq_f32(lo, acc[r][v]));
    }
    for (r = 0; r < R; r++)
        for (v = 0; v < 4; v++) vst1q_f32(cp + (size_t)r * ld + 4 * v, acc[r][v]);
}

LUTHIER_PRIVATE void luthier_sgemm_ukernel_6x16__neonfma_hybrid_f16w(const luthier_sgemm_ukernel_args *p) {
    float tmp[6 * 16], bb[16], mm[2];
    size_t ld;
    float *const cp = luthier__neon_tile_begin(p, tmp, 6, 16, &ld);
    const float *const bp = luthier__neon_bias(p, bb, 16);
    (void)luthier__neon_mode(p, mm);
    switch (p->m) { /* straight-line code per row count */
    case 1: luthier__neon_f16w_tile(p, cp, ld, bp, 1); break;
    case 2: luthier__neon_f16w_tile(p, cp, ld, bp, 2); break;
    case 3: luthier__neon_f16w_tile(p, cp, ld, bp, 3); break;
    case 4: luthier__neon_f16w_tile(p, cp, ld, bp, 4); break;
    case 5: luthier__neon_f16w_tile(p, cp, ld, bp, 5); break;
    default: luthier__neon_f16w_tile(p, cp, ld, bp, 6); break;
    }
    luthier__neon_tile_end(p, cp, 16);
}

#define LUTHIER__UKERNELS_F16W_NEON(X) X(6x16__neonfma_hybrid_f16w, "neon", 6, 16, 1, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_NEON)

/* >>f16 ========================================================================================
   Interleaved 8x24 in fp16 arithmetic (the tile of the Arm Compute Library's a64_hgemm_8x24),
   Armv8.2 FP16 only (HWCAP_ASIMDHP: A55, A75, A76, A78, N1, ...; the same binary keeps it off
   A53/A72). Registers: C[r][v] = 8 halves of row r, columns 8v..8v+7 (24 accumulators); per
   step of k one q of A (the 8 rows' halves, packed by the driver) and three of B, then 24
   `fmla v.8h, B.8h, A.h[r]`. The epilogue widens each row (fcvtl/fcvtl2) and adds C, bias and
   the clamp in fp32. */
#define LUTHIER__TARGET_FP16 __attribute__((target("arch=armv8.2-a+fp16")))

/* The F16 kernels' A panels (luthier__pack_a_f16): 4 steps of a row converted at once by FCVTN
   (Armv8.0; round to nearest even under the default FPCR, as luthier__f32_to_f16), then placed
   in their panel slots. Rows past mb are zeros. */
LUTHIER_PRIVATE void luthier__pack_a_f16_neon(const float *a, size_t lda, size_t mb, size_t kb, size_t mr, uint16_t *dst) {
    size_t i0, i, kk;
    for (i0 = 0; i0 < mb; i0 += mr, dst += kb * mr) {
        const size_t mv = mb - i0 < mr ? mb - i0 : mr;
        for (i = 0; i < mr; i++) {
            const float *src = a + (i0 + i) * lda;
            uint16_t *d = dst + i;
            if (i >= mv) {
                for (kk = 0; kk < kb; kk++) d[kk * mr] = 0;
                continue;
            }
            for (kk = 0; kk < kb; kk += 4) {
                float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                uint16_t h[4];
                size_t l;
                if (kb - kk < 4) memcpy(t, src + kk, (kb - kk) * sizeof(float)); /* the tail */
                vst1_u16(h, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(kb - kk < 4 ? t : src + kk))));
                for (l = 0; l < 4 && kk + l < kb; l++) d[(kk + l) * mr] = h[l];
            }
        }
    }
}

/* >>dw-h16: one output pixel of a depthwise convolution on fp16 activations and weights
   (luthier__conv_use_h16): per channel, the taps x[t] * w[t] (inside the image, in the
   caller's order) summed in fp16 from zero by FMLA v.8h (one rounding per tap), then in fp32
   ((the output's value when accumulating) + bias) + the sum, clamped to [lo, hi], rounded to
   fp16 (FCVTN, round to nearest even). 32 channels per step (four independent FMLA chains: the
   latency of one would bound the loop), then 8, the last C % 8 through zero-padded copies. */

/* 8 halves to p by ST1 (one vector-pipe slot; STR Q takes two on Neoverse-N1, luthier__neon_st1). */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__neon_st1h(uint16_t *p, float16x8_t v) {
    __asm__("st1 {%1.8h}, %0" : "=Q"(*(uint16_t(*)[8])p) : "w"(v));
}

/* The epilogue of 8 channels at o (every fp16 depthwise path): s0, s1 = their bias (zeros without
   one), acc their fp16 sums. */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_out_v(uint16_t *o, float16x8_t acc, float32x4_t s0, float32x4_t s1,
                                                             int accumulate, int clamp, float32x4_t lo, float32x4_t hi) {
    if (accumulate) {
        const float16x8_t ov = vreinterpretq_f16_u16(vld1q_u16(o));
        s0 = vaddq_f32(vcvt_f32_f16(vget_low_f16(ov)), s0);
        s1 = vaddq_f32(vcvt_high_f32_f16(ov), s1);
    }
    s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(acc)));
    s1 = vaddq_f32(s1, vcvt_high_f32_f16(acc));
    if (clamp) {
        s0 = vminq_f32(vmaxq_f32(s0, lo), hi);
        s1 = vminq_f32(vmaxq_f32(s1, lo), hi);
    }
    luthier__neon_st1h(o, vcvt_high_f16_f32(vcvt_f16_f32(s0), s1));
}

/* the epilogue of 8 channels at c: acc's sums */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_out(uint16_t *o, float16x8_t acc, const float *bias, int accumulate,
                                                           int clamp, float lo, float hi, size_t c) {
    const float32x4_t s0 = bias ? vld1q_f32(bias + c) : vdupq_n_f32(0.0f), s1 = bias ? vld1q_f32(bias + c + 4) : vdupq_n_f32(0.0f);
    luthier__dw_h16_out_v(o + c, acc, s0, s1, accumulate, clamp, vdupq_n_f32(lo), vdupq_n_f32(hi));
}

#define LUTHIER__H16_LD(p) vreinterpretq_f16_u16(vld1q_u16(p))

/* channels [c, c + 32) */
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__dw_h16_block32(uint16_t *o, const uint16_t *const *x, const uint16_t *const *w,
                                                               int taps, const float *bias, int accumulate, int clamp,
                                                               float lo, float hi, size_t c) {
    float16x8_t a0 = vdupq_n_f16((float16_t)0.0f), a1 = a0, a2 = a0, a3 = a0;
    int t;
    for (t = 0; t < taps; t++) {
        const uint16_t *xt = x[t] + c, *wt = w[t] + c;
        a0 = vfmaq_f16(a0, LUTHIER__H16_LD(xt), LUTHIER__H16_LD(wt));
        a1 = vfmaq_f16(a1, LUTHIER__H16_LD(xt + 8), LUTHIER__H16_LD(wt + 8));
        a2 = vfmaq_f16(a2, LUTHIER__H16_LD(xt + 16), LUTHIER__H16_LD(wt + 16));
        a3 = vfmaq_f16(a3, LUTHIER__H16_LD(xt + 24), LUTHIER__H16_LD(wt + 24));
    }
    luthier__dw_h16_out(o, a0, bias, accumulate, clamp, lo, hi, c);
    luthier__dw_h16_out(o, a1, bias, accumulate, clamp, lo, hi, c + 8);
    luthier__dw_h16_out(o, a2, bias, accumulate, clamp, lo, hi, c + 16);
    luthier__dw_h16_out(o, a3, bias, accumulate, clamp, lo, hi, c + 24);
}

/* channels [c, c + 8) */
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__dw_h16_block8(uint16_t *o, const uint16_t *const *x, const uint16_t *const *w,
                                                              int taps, const float *bias, int accumulate, int clamp,
                                                              float lo, float hi, size_t c) {
    float16x8_t acc = vdupq_n_f16((float16_t)0.0f);
    int t;
    for (t = 0; t < taps; t++) acc = vfmaq_f16(acc, LUTHIER__H16_LD(x[t] + c), LUTHIER__H16_LD(w[t] + c));
    luthier__dw_h16_out(o, acc, bias, accumulate, clamp, lo, hi, c);
}
#undef LUTHIER__H16_LD

LUTHIER_PRIVATE void luthier__dw_h16_pixel_neon(uint16_t *o, const uint16_t *const *x, const uint16_t *const *w, int taps,
                                               const float *bias, int accumulate, int clamp, float lo, float hi, size_t C) {
    size_t c = 0;
    int t;
    for (; c + 32 <= C; c += 32) luthier__dw_h16_block32(o, x, w, taps, bias, accumulate, clamp, lo, hi, c);
    for (; c + 8 <= C; c += 8) luthier__dw_h16_block8(o, x, w, taps, bias, accumulate, clamp, lo, hi, c);
    if (c < C) { /* the tail: 8-channel copies */
        uint16_t xt[LUTHIER__DW_H16_TAPS][8], wt[LUTHIER__DW_H16_TAPS][8], ot[8] = {0};
        const uint16_t *xp[LUTHIER__DW_H16_TAPS], *wp[LUTHIER__DW_H16_TAPS];
        float bt[8] = {0};
        const size_t n = C - c;
        for (t = 0; t < taps; t++) {
            memset(xt[t], 0, sizeof xt[t]);
            memset(wt[t], 0, sizeof wt[t]);
            memcpy(xt[t], x[t] + c, n * sizeof(uint16_t));
            memcpy(wt[t], w[t] + c, n * sizeof(uint16_t));
            xp[t] = xt[t];
            wp[t] = wt[t];
        }
        if (bias) memcpy(bt, bias + c, n * sizeof(float));
        memcpy(ot, o + c, n * sizeof(uint16_t));
        luthier__dw_h16_block8(ot, xp, wp, taps, bt, accumulate, clamp, lo, hi, 0);
        memcpy(o + c, ot, n * sizeof(uint16_t));
    }
}

/* >>dw-h16-rows: runs of output pixels of a 3x3 or 5x5 depthwise layer on fp16 activations,
   dilation 1, stride 1 or 2 (luthier__dw_run_h16, built as the fp32 runs by luthier__dw_run_span):
   the segment form of >>depthwise on vectors of 8 halves. Pixels with a tap in the padding, and
   the channels past the last whole vector, go to luthier__dw_h16_pixel_neon; the interior
   pixels (luthier__dw_interior), per 8-channel chunk, to a segment kernel: 8 pixels a group (8
   accumulators; the last pixels in groups of 4, 2 and 1), each input column of a tap row loaded
   once and used by every pixel it is a tap of, a tap row's K weight vectors loaded per group
   (3x3's 9 kept in registers for the segment spilled: 101 cycles a group on llvm-mca's N1 model
   against 92). Each pixel sees its taps in (kh, kw) order, summed in fp16 from zero (the zero
   loaded, as the fp32 kernels load their bias: no vector-pipe MOVI), then
   luthier__dw_h16_out_v: the pixel routine's arithmetic, so the same bits. That epilogue bounds
   the rate: its FCVTL, FCVTL2, FCVTN, FCVTN2 take 8 cycles of one vector pipe per pixel on the
   N1 model (64 of a group's 92 on V0), about half the .8h FMLA peak for 3x3.
   Its own copy of the group and tap-row loops rather than a datatype-generic >>depthwise: C has
   no templates (a macro-made kernel would be unreadable and would put the fp32 kernels'
   register allocation, tuned through their volatile loads, at risk), and the fp16 sum starts
   from zero, not from the bias, and ends in a widening epilogue; the interior split
   (luthier__dw_interior), the column batches (LUTHIER__DW_NB) and the run builder are shared. */
#define LUTHIER__DW_H16_P 8     /* pixels per group */
#define LUTHIER__DW_H16_COLS 19 /* columns of a tap row, at most: (P - 1) * S + K */

/* A chunk's parameters (luthier__dw_h16_pack), each load of them base + constant. */
typedef struct luthier__dw_h16_pk {
    uint16_t w[LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K][8]; /* tap t's 8 halves */
    uint16_t zero[8];
    float b[8], lohi[8]; /* the bias (zeros without one); the clamp bounds lo x 4, hi x 4 */
} luthier__dw_h16_pk;

LUTHIER_PRIVATE void luthier__dw_h16_pack(luthier__dw_h16_pk *pk, const uint16_t *w, const float *bias, float lo, float hi,
                                          size_t C, int K) {
    int t, i;
    for (t = 0; t < K * K; t++) memcpy(pk->w[t], w + (size_t)t * C, sizeof pk->w[t]);
    memset(pk->zero, 0, sizeof pk->zero);
    for (i = 0; i < 8; i++) pk->b[i] = bias ? bias[i] : 0.0f;
    for (i = 0; i < 4; i++) pk->lohi[i] = lo, pk->lohi[4 + i] = hi;
}

/* One vector of 8 halves, a volatile load as luthier__neon_ldq (kept where the source puts it). */
typedef uint16_t luthier__neon_h8 __attribute__((vector_size(16), aligned(2), may_alias));
LUTHIER__TARGET_FP16 LUTHIER__INLINE float16x8_t luthier__neon_ldh(const uint16_t *p) {
    float16x8_t v;
    __asm__ volatile("ldr %q0, %1" : "=w"(v) : "m"(*(const luthier__neon_h8 *)p));
    return v;
}

/* acc[p] += the taps of one tap row (wr: K vectors) for P pixels at stride S: input column j
   (x + j * C) is tap k = j - p * S of pixel p; columns loaded in batches of LUTHIER__DW_NB. */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_taprow(float16x8_t acc[LUTHIER__DW_H16_P], const uint16_t *x, size_t C,
                                                              const float16x8_t *wr, const int K, const int S, const int P) {
    const int ncol = (P - 1) * S + K, NB = LUTHIER__DW_NB(3, S);
    float16x8_t xc[LUTHIER__DW_H16_COLS];
    int i, j, p;
    LUTHIER__DW_UNROLL for (j = 0; j < ncol; j++) {
        LUTHIER__DW_UNROLL for (i = 0; i < ncol; i++) {
            const int first = i - i % NB; /* of column i's batch */
            if ((first > 0 ? first - 1 : 0) == j) xc[i] = luthier__neon_ldh(x + (size_t)i * C);
        }
        LUTHIER__DW_UNROLL for (p = 0; p < P; p++) {
            const int k = j - p * S;
            if (k >= 0 && k < K) acc[p] = vfmaq_f16(acc[p], xc[j], wr[k]);
        }
    }
}

/* P pixels: x[r] the first input column of tap row r; a tap row's weights loaded before its
   FMLAs. */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_group(const uint16_t *const *x, uint16_t *o, size_t C,
                                                             const luthier__dw_h16_pk *pk, const int K, const int S, const int P,
                                                             const int ACC, const int CLAMP) {
    float16x8_t acc[LUTHIER__DW_H16_P], wr[LUTHIER__DW_ROWS_K];
    float32x4_t b0, b1, lo = vdupq_n_f32(0.0f), hi = lo;
    int p, r, k;
    __asm__("" : "+r"(pk), "+r"(o)); /* (as luthier__dw_neon_group: addresses formed in each load and store) */
    LUTHIER__DW_UNROLL for (p = 0; p < P; p++) acc[p] = luthier__neon_ldh(pk->zero);
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) {
        LUTHIER__DW_UNROLL for (k = 0; k < K; k++) wr[k] = luthier__neon_ldh(pk->w[K * r + k]);
        luthier__dw_h16_taprow(acc, x[r], C, wr, K, S, P);
    }
    luthier__neon_ldq2(pk->b, &b0, &b1);
    if (CLAMP) luthier__neon_ldq2(pk->lohi, &lo, &hi);
    LUTHIER__DW_UNROLL for (p = 0; p < P; p++)
        luthier__dw_h16_out_v(o + (size_t)p * C, acc[p], b0, b1, ACC, CLAMP, lo, hi);
}

/* One group of P pixels at o, then x moves P pixels on. */
LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_next(const uint16_t **x, uint16_t *o, size_t C, const luthier__dw_h16_pk *pk,
                                                            const int K, const int S, const int P, const int ACC, const int CLAMP) {
    int r;
    luthier__dw_h16_group(x, o, C, pk, K, S, P, ACC, CLAMP);
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) x[r] += (size_t)(P * S) * C;
}

/* n interior pixels of one run, one 8-channel chunk (the luthier__dw_seg_fn interface on halves):
   groups of 8, the last n % 8 pixels in groups of 4, 2 and 1. */
typedef void (*luthier__dw_h16_seg_fn)(const uint16_t *const *xr, uint16_t *o, size_t n, size_t C, const luthier__dw_h16_pk *pk);

LUTHIER__TARGET_FP16 LUTHIER__INLINE void luthier__dw_h16_seg(const uint16_t *const *xr, uint16_t *o, size_t n, size_t C,
                                                           const luthier__dw_h16_pk *pk, const int K, const int S, const int ACC,
                                                           const int CLAMP) {
    const uint16_t *x[LUTHIER__DW_ROWS_K];
    size_t p;
    int r;
    LUTHIER__DW_UNROLL for (r = 0; r < K; r++) x[r] = xr[r];
    for (p = 0; p + LUTHIER__DW_H16_P <= n; p += LUTHIER__DW_H16_P)
        luthier__dw_h16_next(x, o + p * C, C, pk, K, S, LUTHIER__DW_H16_P, ACC, CLAMP);
    if (n - p >= 4) {
        luthier__dw_h16_next(x, o + p * C, C, pk, K, S, 4, ACC, CLAMP);
        p += 4;
    }
    if (n - p >= 2) {
        luthier__dw_h16_next(x, o + p * C, C, pk, K, S, 2, ACC, CLAMP);
        p += 2;
    }
    if (p < n) luthier__dw_h16_next(x, o + p * C, C, pk, K, S, 1, ACC, CLAMP);
}

/* luthier__dw_h16_seg<K>_s<stride>_a<accumulate>_c<clamp> and their table (LUTHIER__DW_SEGS) */
LUTHIER__DW_SEGS(LUTHIER__TARGET_FP16, luthier__dw_h16_seg, luthier__dw_h16_seg, uint16_t, const luthier__dw_h16_pk *)
static const luthier__dw_h16_seg_fn luthier__dw_h16_segs[2][2][4] = LUTHIER__DW_SEG_TABLE(luthier__dw_h16_seg);
#undef LUTHIER__DW_SEG_TABLE
#undef LUTHIER__DW_SEG_ROW
#undef LUTHIER__DW_SEGS_KS
#undef LUTHIER__DW_SEGS
#undef LUTHIER__DW_SEG

/* The pixels of run u outside [pl, pr) on every channel, those inside on channels [cf, C): the
   pixel routine, its taps inside the image in (kh, kw) order. */
LUTHIER_PRIVATE void luthier__dw_h16_edges(const luthier__dw_run_h16 *u, size_t pl, size_t pr, size_t cf, int64_t stride,
                                           int64_t in_w, const uint16_t *w, const float *bias, int accumulate, int clamp,
                                           float lo, float hi, size_t C, int K) {
    const uint16_t *xs[LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K], *ws[LUTHIER__DW_ROWS_K * LUTHIER__DW_ROWS_K];
    size_t p;
    int r, k, taps;
    for (p = 0; p < u->npix; p++) {
        const int64_t ix = u->ix0 + (int64_t)p * stride;
        const size_t c0 = p >= pl && p < pr ? cf : 0;
        if (c0 == C) continue;
        for (r = 0, taps = 0; r < K; r++)
            for (k = 0; u->rows[r] && k < K; k++) {
                if (ix + k < 0 || ix + k >= in_w) continue;
                xs[taps] = u->rows[r] + (size_t)(ix + k) * C + c0;
                ws[taps++] = w + (size_t)(r * K + k) * C + c0;
            }
        luthier__dw_h16_pixel_neon(u->o + p * C + c0, xs, ws, taps, bias ? bias + c0 : NULL, accumulate, clamp, lo, hi, C - c0);
    }
}

/* Runs of a K x K layer (K = 3 or 5), dilation 1, stride 1 or 2, on fp16 activations: the
   luthier__dw_rows_fn interface on halves, K given. */
LUTHIER_PRIVATE void luthier__dw_h16_rows_neon(const luthier__dw_run_h16 *runs, size_t nruns, int64_t stride, int64_t in_w,
                                               const uint16_t *w, const float *bias, int accumulate, int clamp, float lo,
                                               float hi, size_t C, int K) {
    const luthier__dw_h16_seg_fn seg = luthier__dw_h16_segs[K == 5][stride == 2][(accumulate != 0) * 2 + (clamp != 0)];
    const size_t cf = C - C % 8; /* channels of whole vectors */
    size_t lim[LUTHIER__DW_RUNS][2], q, c;
    luthier__dw_h16_pk pk __attribute__((aligned(16)));
    int r;
    for (q = 0; q < nruns; q++) {
        const luthier__dw_run_h16 *u = &runs[q];
        int all = 1;
        for (r = 0; r < K; r++) all = all && u->rows[r];
        luthier__dw_interior(u->ix0, u->npix, all, stride, in_w, K, &lim[q][0], &lim[q][1]);
        luthier__dw_h16_edges(u, lim[q][0], lim[q][1], cf, stride, in_w, w, bias, accumulate, clamp, lo, hi, C, K);
    }
    for (c = 0; c < cf; c += 8) {
        luthier__dw_h16_pack(&pk, w + c, bias ? bias + c : NULL, lo, hi, C, K);
        for (q = 0; q < nruns; q++) {
            const luthier__dw_run_h16 *u = &runs[q];
            const uint16_t *xr[LUTHIER__DW_ROWS_K];
            if (lim[q][1] == lim[q][0]) continue;
            for (r = 0; r < K; r++) xr[r] = u->rows[r] + (size_t)(u->ix0 + (int64_t)lim[q][0] * stride) * C + c;
            seg(xr, u->o + lim[q][0] * C + c, lim[q][1] - lim[q][0], C, &pk);
        }
    }
}

/* Row r of a tile of 8 * vecs columns (vecs <= 4): the fp16 sums widened, + C (LOAD_C) + bias,
   clamped, stored (n columns). */
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__neon_h_row(const luthier_sgemm_ukernel_args *p, size_t r,
                                                          const float16_t *x, int vecs) {
    float row[32];
    float *c = p->c + r * p->ldc;
    size_t j;
    int v;
    for (v = 0; v < vecs; v++) {
        const float16x8_t h = vld1q_f16(x + 8 * v);
        vst1q_f32(row + 8 * v, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(row + 8 * v + 4, vcvt_high_f32_f16(h));
    }
    for (j = 0; j < p->n; j++) {
        float f = row[j] + ((p->flags & LUTHIER_UKERNEL_LOAD_C) ? c[j] : 0.0f) + (p->bias ? p->bias[j] : 0.0f);
        if (p->flags & LUTHIER_UKERNEL_CLAMP) f = f < p->min ? p->min : f > p->max ? p->max : f;
        c[j] = f;
    }
}

/* The fp16 sums v8-v31 stored to the stack tile at %[t] (row-major, 8 halves per register). */
#define LUTHIER__H_STORE_V8_31                                                                     \
    "st1 {v8.8h, v9.8h, v10.8h, v11.8h}, [%[t]], #64\n\t"                                          \
    "st1 {v12.8h, v13.8h, v14.8h, v15.8h}, [%[t]], #64\n\t"                                        \
    "st1 {v16.8h, v17.8h, v18.8h, v19.8h}, [%[t]], #64\n\t"                                        \
    "st1 {v20.8h, v21.8h, v22.8h, v23.8h}, [%[t]], #64\n\t"                                        \
    "st1 {v24.8h, v25.8h, v26.8h, v27.8h}, [%[t]], #64\n\t"                                        \
    "st1 {v28.8h, v29.8h, v30.8h, v31.8h}, [%[t]], #64\n\t"
/* Row r (lane r of A in v0) of the 8x24 tile: c0-c2 += B (v1-v3) * A[r]. */
#define LUTHIER__H8x24_ROW(c0, c1, c2, r)                                                          \
    "fmla " #c0 ".8h, v1.8h, v0.h[" #r "]\n\t" "fmla " #c1 ".8h, v2.8h, v0.h[" #r "]\n\t"             \
    "fmla " #c2 ".8h, v3.8h, v0.h[" #r "]\n\t"

/* The k loop in asm: the by-element FMLA on halves takes its A register from v0-v15, which
   compilers do not see (GCC's intrinsics version duplicated every lane into its own register and
   spilled accumulators: 65 % of the N1 peak on llvm-mca). Loads first, then the 24 FMLAs: on
   out-of-order cores the loads of a step overlap the FMLAs of the previous one. */
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier_sgemm_ukernel_8x24__neonfp16(const luthier_sgemm_ukernel_args *p) {
    float16_t t[8 * 24];
    float16_t *tp = t;
    const float16_t *a = (const float16_t *)(const void *)p->a, *b = (const float16_t *)(const void *)p->b;
    size_t k = p->k, r;
    __asm__ __volatile__(
        LUTHIER__V8_31(LUTHIER__ZEROQ)
        ".Lluthier_h8x24_%=:\n\t"
        "// LLVM-MCA-BEGIN\n\t"
        "ldr q0, [%[a]], #16\n\t"
        "ldp q1, q2, [%[b]], #32\n\t"
        "ldr q3, [%[b]], #16\n\t"
        LUTHIER__H8x24_ROW(v8, v9, v10, 0)
        LUTHIER__H8x24_ROW(v11, v12, v13, 1)
        LUTHIER__H8x24_ROW(v14, v15, v16, 2)
        LUTHIER__H8x24_ROW(v17, v18, v19, 3)
        LUTHIER__H8x24_ROW(v20, v21, v22, 4)
        LUTHIER__H8x24_ROW(v23, v24, v25, 5)
        LUTHIER__H8x24_ROW(v26, v27, v28, 6)
        LUTHIER__H8x24_ROW(v29, v30, v31, 7)
        "subs %[k], %[k], #1\n\t"
        "b.ne .Lluthier_h8x24_%=\n\t"
        "// LLVM-MCA-END\n\t"
        LUTHIER__H_STORE_V8_31
        : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), [t] "+r"(tp)
        :
        : "v0", "v1", "v2", "v3", LUTHIER__CLOB_V8_31, "cc", "memory");
    for (r = 0; r < p->m; r++) luthier__neon_h_row(p, r, t + 24 * r, 3);
}

/* >>f16-a55 ====================================================================================
   Interleaved 8x24 in fp16 for in-order cores (Cortex-A55: the little cores with FP16, beside
   A76/A78 on RK3588 and the Snapdragon 8xx): the packed A and B, the accumulators and the
   epilogue of >>f16 (a twin a little cluster runs over the big cluster's packed weights,
   cluster_kernels), the instruction stream of >>8x12-a53, as the Arm Compute Library's
   a64_hgemm_8x24 has an A55 variant: no 128-bit load in the main loop, each q register arriving
   as "ldr d" plus "ldr x" and "ins v.d[1], x", every such instruction in the slot after an FMLA.
   A step has the B bytes of an fp32 8x12 step (48) and half its A (16), so B rotates through
   v4-v7 exactly as in >>8x12-a53 (B vector i = 3 * step + column vector in v(4 + i % 4), loaded
   16 FMLAs before its first use) and A of step t + 1 (v0 for even steps, v1 for odd) loads
   during step t. Each accumulator takes its k steps in the order of >>f16, so the two kernels'
   results are the same bits. Per 4-step iteration: 96 FMLA, 16 ldr d, 16 ldr x, 16 ins. */
#define LUTHIER__FMLAH(acc, vb, va, lane) "fmla " #acc ".8h, v" #vb ".8h, v" #va ".h[" #lane "]\n\t"
/* B register vB times rows 0-7 (the lanes of vA) into c0..c7; slot s_i follows the i-th FMLA */
#define LUTHIER__H8L_G(B, A, c0, c1, c2, c3, c4, c5, c6, c7, s0, s1, s2, s3, s4, s5, s6, s7)         \
    LUTHIER__FMLAH(c0, B, A, 0) s0 LUTHIER__FMLAH(c1, B, A, 1) s1 LUTHIER__FMLAH(c2, B, A, 2) s2    \
    LUTHIER__FMLAH(c3, B, A, 3) s3 LUTHIER__FMLAH(c4, B, A, 4) s4 LUTHIER__FMLAH(c5, B, A, 5) s5    \
    LUTHIER__FMLAH(c6, B, A, 6) s6 LUTHIER__FMLAH(c7, B, A, 7) s7
#define LUTHIER__H8L_GX(...) LUTHIER__H8L_G(__VA_ARGS__)
/* One k step (A in vA, B in vB0-vB2) that loads the next: group g loads B register nbg from
   b + obg, group 0 the next A register na from a + oa; t0..t4 are the loop-control slots. */
#define LUTHIER__H8L_STEP(A, B0, B1, B2, nb0, ob0, nb1, ob1, nb2, ob2, na, oa, t0, t1, t2, t3, t4)    \
    LUTHIER__H8L_GX(B0, A, LUTHIER__8x12L_C0, LUTHIER__LDD(nb0, b, ob0), LUTHIER__LDX(x12, b, ob0),   \
                    LUTHIER__LDD(na, a, oa), LUTHIER__LDX(x13, a, oa), "", LUTHIER__INSD(nb0, x12), "", \
                    LUTHIER__INSD(na, x13))                                                         \
    LUTHIER__H8L_GX(B1, A, LUTHIER__8x12L_C1, LUTHIER__LDD(nb1, b, ob1), LUTHIER__LDX(x12, b, ob1),   \
                    "", "", "", "", LUTHIER__INSD(nb1, x12), "")                                      \
    LUTHIER__H8L_GX(B2, A, LUTHIER__8x12L_C2, LUTHIER__LDD(nb2, b, ob2), LUTHIER__LDX(x12, b, ob2),   \
                    t0, t1, t2, t3, LUTHIER__INSD(nb2, x12), t4)
#define LUTHIER__H8L_LAST(A, B0, B1, B2)                                                            \
    LUTHIER__H8L_GX(B0, A, LUTHIER__8x12L_C0, "", "", "", "", "", "", "", "")                       \
    LUTHIER__H8L_GX(B1, A, LUTHIER__8x12L_C1, "", "", "", "", "", "", "", "")                       \
    LUTHIER__H8L_GX(B2, A, LUTHIER__8x12L_C2, "", "", "", "", "", "", "", "")
#define LUTHIER__H8L_STEPS012                                                                       \
    LUTHIER__H8L_STEP(0, 4, 5, 6, 7, 48, 4, 64, 5, 80, 1, 16, "", "", "", "", "")                    \
    LUTHIER__H8L_STEP(1, 7, 4, 5, 6, 96, 7, 112, 4, 128, 0, 32, "", "", "", "", "")                  \
    LUTHIER__H8L_STEP(0, 6, 7, 4, 5, 144, 6, 160, 7, 176, 1, 48, "", "", "", "", "")
#define LUTHIER__H8L_STEP3(label)                                                                   \
    LUTHIER__H8L_STEP(1, 5, 6, 7, 4, 192, 5, 208, 6, 224, 0, 64, "add %[a], %[a], #64\n\t",          \
                      "add %[b], %[b], #192\n\t", "subs x10, x10, #1\n\t", "", "b.ne " label "\n\t")

LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier_sgemm_ukernel_8x24__neonfp16_a55(const luthier_sgemm_ukernel_args *p) {
    float16_t t[8 * 24];
    float16_t *tp = t;
    const float16_t *a = (const float16_t *)(const void *)p->a, *b = (const float16_t *)(const void *)p->b;
    size_t r;
    __asm__ __volatile__(
        LUTHIER__V8_31(LUTHIER__ZEROQ)
        LUTHIER__INORDER_KLOOP(h8x24a55, LUTHIER__H8L_STEPS012, LUTHIER__H8L_STEP3, LUTHIER__H8L_LAST(1, 5, 6, 7),
                               "ldr q0, [%[a]]\n\t" "ldp q4, q5, [%[b]]\n\t" "ldr q6, [%[b], #32]\n\t",
                               LUTHIER__H8L_LAST(0, 4, 5, 6), "add %[a], %[a], #16\n\t" "add %[b], %[b], #48\n\t")
        LUTHIER__H_STORE_V8_31
        : [a] "+r"(a), [b] "+r"(b), [t] "+r"(tp)
        : [k] "r"(p->k)
        : "x10", "x11", "x12", "x13", LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V8_31, "cc", "memory");
    for (r = 0; r < p->m; r++) luthier__neon_h_row(p, r, t + 24 * r, 3);
}

/* >>f16-hybrid ================================================================================
   Hybrid 6x32 in fp16 arithmetic (the layout of the Arm Compute Library's
   a64_hybrid_fp16_mla_6x32): A read in place, fp16 rows through row pointers (segment-major,
   the hybrid contract of luthier_gemm.h with halves for floats), B packed in fp16 panels of 32.
   Registers: C[r][8v..8v+7] = v(8 + 4r + v) (24 accumulators of 8 halves); A: v0-v5 = 8 k
   steps of rows 0-5 (x0-x5 row pointers; rows >= m reuse row m-1's slot, LUTHIER__ROWPTR);
   B: v6/v7, each loaded two FMLA groups ahead of its use. Per k step t: 24 x
   `fmla C[r][v].8h, B[v].8h, A_r.h[t]`; per 8-step iteration 192 FMLA, 6 A loads, 1 ldp + 30
   ldr of B. Then k % 8 single steps (ldr h: A rows are read exactly in [0, k)). The sums start
   at zero in fp16; the C code widens them and adds C (LOAD_C), bias and the clamp in fp32, as
   8x24__neonfp16 does. */
#define LUTHIER__H6x32_FMLA(acc, v, e, lane) "fmla " #acc ".8h, " #v ".8h, " #e ".h[" #lane "]\n\t"
#define LUTHIER__H6x32_G(B, lane, c0, c1, c2, c3, c4, c5)                                          \
    LUTHIER__H6x32_FMLA(c0, B, v0, lane) LUTHIER__H6x32_FMLA(c1, B, v1, lane)                      \
    LUTHIER__H6x32_FMLA(c2, B, v2, lane) LUTHIER__H6x32_FMLA(c3, B, v3, lane)                      \
    LUTHIER__H6x32_FMLA(c4, B, v4, lane) LUTHIER__H6x32_FMLA(c5, B, v5, lane)
#define LUTHIER__H6x32_G0(B, lane) LUTHIER__H6x32_G(B, lane, v8, v12, v16, v20, v24, v28)
#define LUTHIER__H6x32_G1(B, lane) LUTHIER__H6x32_G(B, lane, v9, v13, v17, v21, v25, v29)
#define LUTHIER__H6x32_G2(B, lane) LUTHIER__H6x32_G(B, lane, v10, v14, v18, v22, v26, v30)
#define LUTHIER__H6x32_G3(B, lane) LUTHIER__H6x32_G(B, lane, v11, v15, v19, v23, v27, v31)
/* step `lane` of an 8-step iteration (B of this step at byte 64*lane; loads the next step's
   first two vectors) */
#define LUTHIER__H6x32_STEP(lane)                                                                  \
    LUTHIER__H6x32_G0(v6, lane) "ldr q6, [%[b], #64*" #lane "+32]\n\t"                             \
    LUTHIER__H6x32_G1(v7, lane) "ldr q7, [%[b], #64*" #lane "+48]\n\t"                             \
    LUTHIER__H6x32_G2(v6, lane) "ldr q6, [%[b], #64*" #lane "+64]\n\t"                             \
    LUTHIER__H6x32_G3(v7, lane) "ldr q7, [%[b], #64*" #lane "+80]\n\t"

/* The frame of the fp16 hybrid 6x32 kernels (this one and >>f16-hybrid-a55): per segment the six
   row pointers and x10 = k / 8, x11 = k % 8; K8 (when x10 > 0: all the 8-step blocks, from its
   label k8 on to the label k1), the k % 8 single steps, the next segment, the store; tag: the
   labels' prefix; the arguments after K8: clobbers beyond the frame's. */
#define LUTHIER__H6x32_KERNEL(fn, tag, K8, ...)                                                    \
    LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void fn(const luthier_sgemm_ukernel_args *p) {            \
        float16_t t[6 * 32];                                                                       \
        float16_t *tp = t;                                                                         \
        const float *const *ar = p->a_rows;                                                        \
        const float *b = p->b;                                                                     \
        size_t ks = p->ks, r;                                                                      \
        __asm__ __volatile__(                                                                      \
            LUTHIER__V8_31(LUTHIER__ZEROQ)                                                         \
            "cbz %[ks], .Lluthier_" #tag "_end_%=\n\t"                                              \
            ".Lluthier_" #tag "_seg_%=:\n\t"                                                        \
            "mov x13, %[ar]\n\t"                                                                   \
            "ldr x0, [x13]\n\t"                                                                    \
            LUTHIER__6x16_ROWPTRS                                                                  \
            "lsr x10, %[k], #3\n\t"                                                                \
            "and x11, %[k], #7\n\t"                                                                \
            "cbz x10, .Lluthier_" #tag "_k1_%=\n\t"                                                 \
            K8                                                                                     \
            ".Lluthier_" #tag "_k1_%=:\n\t"                                                         \
            "cbz x11, .Lluthier_" #tag "_next_%=\n\t"                                               \
            ".Lluthier_" #tag "_rem_%=:\n\t"                                                        \
            LUTHIER__HYB6_REM(LUTHIER__H6x32, h, 2)                                                \
            "subs x11, x11, #1\n\t"                                                                \
            "b.ne .Lluthier_" #tag "_rem_%=\n\t"                                                    \
            ".Lluthier_" #tag "_next_%=:\n\t"                                                       \
            "subs %[ks], %[ks], #1\n\t"                                                            \
            "b.ne .Lluthier_" #tag "_seg_%=\n\t"                                                    \
            ".Lluthier_" #tag "_end_%=:\n\t"                                                        \
            LUTHIER__H_STORE_V8_31                                                                 \
            : [ar] "+r"(ar), [b] "+r"(b), [ks] "+r"(ks), [t] "+r"(tp)                              \
            : [k] "r"(p->k), [m] "r"(p->m)                                                         \
            : "x0", "x1", "x2", "x3", "x4", "x5", "x10", "x11", "x12", "x13", LUTHIER__CLOB_V0_7,   \
              LUTHIER__CLOB_V8_31, __VA_ARGS__);                                                   \
        for (r = 0; r < p->m; r++) luthier__neon_h_row(p, r, t + 32 * r, 4);                       \
    }

/* the big-core main loop: 8 steps an iteration, A rows in v0-v5, B through v6/v7 */
#define LUTHIER__H6x32_K8                                                                          \
        ".Lluthier_h6x32_k8_%=:\n\t"                                                               \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        "ldr q0, [x0], #16\n\t"                                                                    \
        "ldr q1, [x1], #16\n\t"                                                                    \
        "ldr q2, [x2], #16\n\t"                                                                    \
        "ldr q3, [x3], #16\n\t"                                                                    \
        "ldr q4, [x4], #16\n\t"                                                                    \
        "ldr q5, [x5], #16\n\t"                                                                    \
        "ldp q6, q7, [%[b]]\n\t"                                                                   \
        LUTHIER__H6x32_STEP(0) LUTHIER__H6x32_STEP(1) LUTHIER__H6x32_STEP(2) LUTHIER__H6x32_STEP(3) \
        LUTHIER__H6x32_STEP(4) LUTHIER__H6x32_STEP(5) LUTHIER__H6x32_STEP(6)                       \
        LUTHIER__H6x32_G0(v6, 7) "ldr q6, [%[b], #480]\n\t"                                        \
        LUTHIER__H6x32_G1(v7, 7) "ldr q7, [%[b], #496]\n\t"                                        \
        LUTHIER__H6x32_G2(v6, 7)                                                                   \
        "add %[b], %[b], #512\n\t"                                                                 \
        LUTHIER__H6x32_G3(v7, 7)                                                                   \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.ne .Lluthier_h6x32_k8_%=\n\t"                                                           \
        "// LLVM-MCA-END\n\t"

LUTHIER__H6x32_KERNEL(luthier_sgemm_ukernel_6x32__neonfp16_hybrid, h6x32, LUTHIER__H6x32_K8, "cc", "memory")

/* >>f16-hybrid-a55 ============================================================================
   Hybrid 6x32 in fp16 for in-order cores (Cortex-A55: the little cores with FP16): the A rows,
   packed B, segments, accumulators and epilogue of >>f16-hybrid (a twin a little cluster runs
   over the big cluster's packed weights, cluster_kernels), the instruction stream of >>6x16-a53:
   no 128-bit load in the main loop (a q register arrives as "ldr d" + "ldr x" + "ins v.d[1]"),
   every load, ins and loop-control instruction right after an FMLA, each load and ins at least 6
   instructions before the first instruction that reads what it wrote (bench/inorder_check.py).
   24 accumulators leave v0-v7; A holds the rows in pairs, 4 k steps of two rows a register:
     C[r][8v..8v+7] = v(8 + 4r + v)     (as >>f16-hybrid)
     A, steps 0-3: v0 = rows 0,1 (lanes 0-3: row 0, k0..k3; lanes 4-7: row 1), v1 = rows 2,3,
        v2 = rows 4,5;  steps 4-7: v3 = rows 0,1, v4 = rows 2,3, v0 = rows 4,5
     B: group g (step g / 4, columns 8(g % 4)..+7) reads v5 v6 v7 v5 v3 v6 v7 v5 v6 v7 v5 v6 v7
        v5 v6 v7 v5 v6 v7 v5 v1 v6 v7 v5 v6 v7 v5 v6 v7 v5 v6 v7: v3 before it takes the rows of
        steps 4-7, v1 after its rows of steps 0-3; every register reloaded across two groups
   v0 turns over twice: group 15 reads rows 0,1 first and group 16 rows 4,5 last, group 31 reads
   rows 4,5 first and group 0 rows 0,1 last. A pair arrives as "ldr d" (8 bytes of the first
   row) + "ldr x" (the second) + "ins"; the loads use immediate offsets and one "add" a block
   moves each row pointer and b (a load with writeback does not pair with an FMLA on the A55).
   The order of the FMLAs within a step differs from >>f16-hybrid, never the order of the k
   steps into one accumulator: the results are bit-identical to 6x32__neonfp16_hybrid.
   The block below is generated by bench/h6x32_a55_sched.py --write (it places the loads in the
   slots after the FMLAs against the three rules; --check: the block is its output). The loads marked NX read the next 8-step block (its
   steps 0-3 pairs and first B vectors); the k loop runs the block with them k / 8 - 1 times,
   then once without them (the last block: nothing is read past the A rows' [0, k) nor past
   the packed B of the segment); the prologue (_FIRST) makes those loads for the first block.
   The k % 8 remainder is the one of >>f16-hybrid. Per 8-step block: 192 FMLA, 32 + 6 ldr d,
   32 + 6 ldr x, 38 ins, 7 add. */
#define LUTHIER__H6x32L_BLOCK(NX, LC)                                                                        \
    /* 0  */ LUTHIER__FMLAH(v16, 5, 1, 0) LUTHIER__INSD(6, x13) LUTHIER__FMLAH(v20, 5, 1, 4)                 \
             LUTHIER__LDD(7, b, 32) LUTHIER__FMLAH(v24, 5, 2, 0) LUTHIER__LDD(3, b, 64)                      \
             LUTHIER__FMLAH(v28, 5, 2, 4) LUTHIER__LDX(x6, b, 64) LUTHIER__FMLAH(v8, 5, 0, 0)                \
             LUTHIER__LDX(x7, b, 48) LUTHIER__FMLAH(v12, 5, 0, 4) LUTHIER__INSD(7, x12)                      \
    /* 1  */ LUTHIER__FMLAH(v9, 6, 0, 0) LUTHIER__LDD(5, b, 48) LUTHIER__FMLAH(v13, 6, 0, 4)                 \
             LUTHIER__INSD(3, x6) LUTHIER__FMLAH(v17, 6, 1, 0) LUTHIER__FMLAH(v21, 6, 1, 4)                  \
             LUTHIER__FMLAH(v25, 6, 2, 0) LUTHIER__LDX(x6, b, 80) LUTHIER__FMLAH(v29, 6, 2, 4)               \
             LUTHIER__LDD(6, b, 80)                                                                          \
    /* 2  */ LUTHIER__FMLAH(v10, 7, 0, 0) LUTHIER__INSD(5, x7) LUTHIER__FMLAH(v14, 7, 0, 4)                  \
             LUTHIER__FMLAH(v18, 7, 1, 0) LUTHIER__FMLAH(v22, 7, 1, 4) LUTHIER__LDX(x7, b, 96)               \
             LUTHIER__FMLAH(v26, 7, 2, 0) LUTHIER__INSD(6, x6) LUTHIER__FMLAH(v30, 7, 2, 4)                  \
             LUTHIER__LDD(7, b, 96)                                                                          \
    /* 3  */ LUTHIER__FMLAH(v11, 5, 0, 0) LUTHIER__FMLAH(v15, 5, 0, 4) LUTHIER__FMLAH(v19, 5, 1, 0)          \
             LUTHIER__FMLAH(v23, 5, 1, 4) LUTHIER__FMLAH(v27, 5, 2, 0) LUTHIER__LDX(x6, b, 112)              \
             LUTHIER__FMLAH(v31, 5, 2, 4) LUTHIER__INSD(7, x7)                                               \
    /* 4  */ LUTHIER__FMLAH(v8, 3, 0, 1) LUTHIER__LDD(5, b, 112) LUTHIER__FMLAH(v12, 3, 0, 5)                \
             LUTHIER__FMLAH(v16, 3, 1, 1) LUTHIER__FMLAH(v20, 3, 1, 5) LUTHIER__FMLAH(v24, 3, 2, 1)          \
             LUTHIER__FMLAH(v28, 3, 2, 5)                                                                    \
    /* 5  */ LUTHIER__FMLAH(v9, 6, 0, 1) LUTHIER__INSD(5, x6) LUTHIER__FMLAH(v13, 6, 0, 5)                   \
             LUTHIER__FMLAH(v17, 6, 1, 1) LUTHIER__FMLAH(v21, 6, 1, 5) LUTHIER__FMLAH(v25, 6, 2, 1)          \
             LUTHIER__LDX(x6, b, 128) LUTHIER__FMLAH(v29, 6, 2, 5) LUTHIER__LDD(6, b, 128)                   \
    /* 6  */ LUTHIER__FMLAH(v10, 7, 0, 1) LUTHIER__FMLAH(v14, 7, 0, 5) LUTHIER__FMLAH(v18, 7, 1, 1)          \
             LUTHIER__FMLAH(v22, 7, 1, 5) LUTHIER__FMLAH(v26, 7, 2, 1) LUTHIER__LDX(x7, b, 144)              \
             LUTHIER__FMLAH(v30, 7, 2, 5) LUTHIER__INSD(6, x6)                                               \
    /* 7  */ LUTHIER__FMLAH(v11, 5, 0, 1) LUTHIER__LDD(7, b, 144) LUTHIER__FMLAH(v15, 5, 0, 5)               \
             LUTHIER__6x16L_LDDA(4, x2, 8) LUTHIER__FMLAH(v19, 5, 1, 1) LUTHIER__FMLAH(v23, 5, 1, 5)         \
             LUTHIER__6x16L_LDXA(x6, x3, 8) LUTHIER__FMLAH(v27, 5, 2, 1) LUTHIER__LDX(x12, b, 160)           \
             LUTHIER__FMLAH(v31, 5, 2, 5) LUTHIER__LDD(5, b, 160)                                            \
    /* 8  */ LUTHIER__FMLAH(v8, 6, 0, 2) LUTHIER__INSD(7, x7) LUTHIER__FMLAH(v12, 6, 0, 6)                   \
             LUTHIER__INSD(4, x6) LUTHIER__FMLAH(v16, 6, 1, 2) "add x2, x2, #16\n\t"                         \
             LUTHIER__FMLAH(v20, 6, 1, 6) LUTHIER__LDX(x6, b, 176) LUTHIER__FMLAH(v24, 6, 2, 2)              \
             LUTHIER__INSD(5, x12) LUTHIER__FMLAH(v28, 6, 2, 6) LUTHIER__LDD(6, b, 176)                      \
    /* 9  */ LUTHIER__FMLAH(v9, 7, 0, 2) "add x3, x3, #16\n\t" LUTHIER__FMLAH(v13, 7, 0, 6)                  \
             LUTHIER__FMLAH(v17, 7, 1, 2) LUTHIER__6x16L_LDDA(3, x0, 8) LUTHIER__FMLAH(v21, 7, 1, 6)         \
             LUTHIER__6x16L_LDXA(x7, x1, 8) LUTHIER__FMLAH(v25, 7, 2, 2) LUTHIER__LDX(x12, b, 192)           \
             LUTHIER__FMLAH(v29, 7, 2, 6) LUTHIER__INSD(6, x6)                                               \
    /* 10 */ LUTHIER__FMLAH(v10, 5, 0, 2) LUTHIER__LDD(7, b, 192) LUTHIER__FMLAH(v14, 5, 0, 6)               \
             LUTHIER__INSD(3, x7) LUTHIER__FMLAH(v18, 5, 1, 2) "add x0, x0, #16\n\t"                         \
             LUTHIER__FMLAH(v22, 5, 1, 6) "add x1, x1, #16\n\t" LUTHIER__FMLAH(v26, 5, 2, 2)                 \
             LUTHIER__LDX(x6, b, 208) LUTHIER__FMLAH(v30, 5, 2, 6) LUTHIER__LDD(5, b, 208)                   \
    /* 11 */ LUTHIER__FMLAH(v11, 6, 0, 2) LUTHIER__INSD(7, x12) LUTHIER__FMLAH(v15, 6, 0, 6)                 \
             LUTHIER__FMLAH(v19, 6, 1, 2) LUTHIER__FMLAH(v23, 6, 1, 6) LUTHIER__LDX(x7, b, 224)              \
             LUTHIER__FMLAH(v27, 6, 2, 2) LUTHIER__INSD(5, x6) LUTHIER__FMLAH(v31, 6, 2, 6)                  \
             LUTHIER__LDD(6, b, 224)                                                                         \
    /* 12 */ LUTHIER__FMLAH(v8, 7, 0, 3) LUTHIER__FMLAH(v12, 7, 0, 7) LUTHIER__FMLAH(v16, 7, 1, 3)           \
             LUTHIER__FMLAH(v20, 7, 1, 7) LUTHIER__FMLAH(v24, 7, 2, 3) LUTHIER__LDX(x6, b, 240)              \
             LUTHIER__FMLAH(v28, 7, 2, 7) LUTHIER__INSD(6, x7)                                               \
    /* 13 */ LUTHIER__FMLAH(v9, 5, 0, 3) LUTHIER__LDD(7, b, 240) LUTHIER__FMLAH(v13, 5, 0, 7)                \
             LUTHIER__FMLAH(v17, 5, 1, 3) LUTHIER__FMLAH(v21, 5, 1, 7) LUTHIER__FMLAH(v25, 5, 2, 3)          \
             LUTHIER__LDX(x7, b, 256) LUTHIER__FMLAH(v29, 5, 2, 7) LUTHIER__LDD(5, b, 256)                   \
    /* 14 */ LUTHIER__FMLAH(v10, 6, 0, 3) LUTHIER__INSD(7, x6) LUTHIER__FMLAH(v14, 6, 0, 7)                  \
             LUTHIER__FMLAH(v18, 6, 1, 3) LUTHIER__6x16L_LDXA(x6, x5, 8) LUTHIER__FMLAH(v22, 6, 1, 7)        \
             LUTHIER__LDX(x12, b, 288) LUTHIER__FMLAH(v26, 6, 2, 3) LUTHIER__INSD(5, x7)                     \
             LUTHIER__FMLAH(v30, 6, 2, 7) LUTHIER__LDD(6, b, 272)                                            \
    /* 15 */ LUTHIER__FMLAH(v11, 7, 0, 3) LUTHIER__LDX(x7, b, 272) LUTHIER__FMLAH(v15, 7, 0, 7)              \
             LUTHIER__6x16L_LDDA(0, x4, 8) LUTHIER__FMLAH(v19, 7, 1, 3) "add x4, x4, #16\n\t"                \
             LUTHIER__FMLAH(v23, 7, 1, 7) "add x5, x5, #16\n\t" LUTHIER__FMLAH(v27, 7, 2, 3)                 \
             LUTHIER__INSD(0, x6) LUTHIER__FMLAH(v31, 7, 2, 7) LUTHIER__INSD(6, x7)                          \
    /* 16 */ LUTHIER__FMLAH(v8, 5, 3, 0) LUTHIER__LDD(7, b, 288) LUTHIER__FMLAH(v12, 5, 3, 4)                \
             LUTHIER__LDD(1, b, 320) LUTHIER__FMLAH(v16, 5, 4, 0) LUTHIER__FMLAH(v20, 5, 4, 4)               \
             LUTHIER__LDX(x6, b, 320) LUTHIER__FMLAH(v24, 5, 0, 0) LUTHIER__LDX(x7, b, 304)                  \
             LUTHIER__FMLAH(v28, 5, 0, 4) LUTHIER__LDD(5, b, 304)                                            \
    /* 17 */ LUTHIER__FMLAH(v9, 6, 3, 0) LUTHIER__INSD(7, x12) LUTHIER__FMLAH(v13, 6, 3, 4)                  \
             LUTHIER__INSD(1, x6) LUTHIER__FMLAH(v17, 6, 4, 0) LUTHIER__FMLAH(v21, 6, 4, 4)                  \
             LUTHIER__LDX(x6, b, 336) LUTHIER__FMLAH(v25, 6, 0, 0) LUTHIER__INSD(5, x7)                      \
             LUTHIER__FMLAH(v29, 6, 0, 4) LUTHIER__LDD(6, b, 336)                                            \
    /* 18 */ LUTHIER__FMLAH(v10, 7, 3, 0) LUTHIER__FMLAH(v14, 7, 3, 4) LUTHIER__FMLAH(v18, 7, 4, 0)          \
             LUTHIER__FMLAH(v22, 7, 4, 4) LUTHIER__FMLAH(v26, 7, 0, 0) LUTHIER__LDX(x7, b, 352)              \
             LUTHIER__FMLAH(v30, 7, 0, 4) LUTHIER__INSD(6, x6)                                               \
    /* 19 */ LUTHIER__FMLAH(v11, 5, 3, 0) LUTHIER__LDD(7, b, 352) LUTHIER__FMLAH(v15, 5, 3, 4)               \
             LUTHIER__FMLAH(v19, 5, 4, 0) LUTHIER__FMLAH(v23, 5, 4, 4) LUTHIER__FMLAH(v27, 5, 0, 0)          \
             LUTHIER__LDX(x6, b, 368) LUTHIER__FMLAH(v31, 5, 0, 4) LUTHIER__LDD(5, b, 368)                   \
    /* 20 */ LUTHIER__FMLAH(v8, 1, 3, 1) LUTHIER__INSD(7, x7) LUTHIER__FMLAH(v12, 1, 3, 5)                   \
             LUTHIER__FMLAH(v16, 1, 4, 1) LUTHIER__FMLAH(v20, 1, 4, 5) LUTHIER__FMLAH(v24, 1, 0, 1)          \
             LUTHIER__INSD(5, x6) LUTHIER__FMLAH(v28, 1, 0, 5)                                               \
    /* 21 */ LUTHIER__FMLAH(v9, 6, 3, 1) LUTHIER__FMLAH(v13, 6, 3, 5) LUTHIER__FMLAH(v17, 6, 4, 1)           \
             LUTHIER__FMLAH(v21, 6, 4, 5) LUTHIER__FMLAH(v25, 6, 0, 1) LUTHIER__LDX(x6, b, 384)              \
             LUTHIER__FMLAH(v29, 6, 0, 5) LUTHIER__LDD(6, b, 384)                                            \
    /* 22 */ LUTHIER__FMLAH(v10, 7, 3, 1) LUTHIER__FMLAH(v14, 7, 3, 5) LUTHIER__FMLAH(v18, 7, 4, 1)          \
             LUTHIER__FMLAH(v22, 7, 4, 5) LUTHIER__FMLAH(v26, 7, 0, 1) LUTHIER__LDX(x7, b, 400)              \
             LUTHIER__FMLAH(v30, 7, 0, 5) LUTHIER__INSD(6, x6)                                               \
    /* 23 */ LUTHIER__FMLAH(v11, 5, 3, 1) LUTHIER__LDD(7, b, 400) LUTHIER__FMLAH(v15, 5, 3, 5)               \
             NX(LUTHIER__6x16L_LDDA(2, x4, 0)) LUTHIER__FMLAH(v19, 5, 4, 1) LUTHIER__FMLAH(v23, 5, 4, 5)     \
             NX(LUTHIER__6x16L_LDXA(x6, x5, 0)) LUTHIER__FMLAH(v27, 5, 0, 1) LUTHIER__LDX(x12, b, 416)       \
             LUTHIER__FMLAH(v31, 5, 0, 5) LUTHIER__LDD(5, b, 416)                                            \
    /* 24 */ LUTHIER__FMLAH(v8, 6, 3, 2) LUTHIER__INSD(7, x7) LUTHIER__FMLAH(v12, 6, 3, 6)                   \
             NX(LUTHIER__INSD(2, x6)) LUTHIER__FMLAH(v16, 6, 4, 2) LUTHIER__FMLAH(v20, 6, 4, 6)              \
             LUTHIER__LDX(x6, b, 432) LUTHIER__FMLAH(v24, 6, 0, 2) LUTHIER__INSD(5, x12)                     \
             LUTHIER__FMLAH(v28, 6, 0, 6) LUTHIER__LDD(6, b, 432)                                            \
    /* 25 */ LUTHIER__FMLAH(v9, 7, 3, 2) LUTHIER__FMLAH(v13, 7, 3, 6) LUTHIER__FMLAH(v17, 7, 4, 2)           \
             NX(LUTHIER__6x16L_LDDA(1, x2, 0)) LUTHIER__FMLAH(v21, 7, 4, 6)                                  \
             NX(LUTHIER__6x16L_LDXA(x7, x3, 0)) LUTHIER__FMLAH(v25, 7, 0, 2) LUTHIER__LDX(x12, b, 448)       \
             LUTHIER__FMLAH(v29, 7, 0, 6) LUTHIER__INSD(6, x6)                                               \
    /* 26 */ LUTHIER__FMLAH(v10, 5, 3, 2) LUTHIER__LDD(7, b, 448) LUTHIER__FMLAH(v14, 5, 3, 6)               \
             NX(LUTHIER__INSD(1, x7)) LUTHIER__FMLAH(v18, 5, 4, 2) LUTHIER__FMLAH(v22, 5, 4, 6)              \
             LUTHIER__FMLAH(v26, 5, 0, 2) LUTHIER__LDX(x6, b, 464) LUTHIER__FMLAH(v30, 5, 0, 6)              \
             LUTHIER__LDD(5, b, 464)                                                                         \
    /* 27 */ LUTHIER__FMLAH(v11, 6, 3, 2) LUTHIER__INSD(7, x12) LUTHIER__FMLAH(v15, 6, 3, 6)                 \
             LUTHIER__FMLAH(v19, 6, 4, 2) LUTHIER__FMLAH(v23, 6, 4, 6) LUTHIER__LDX(x7, b, 480)              \
             LUTHIER__FMLAH(v27, 6, 0, 2) LUTHIER__INSD(5, x6) LUTHIER__FMLAH(v31, 6, 0, 6)                  \
             LUTHIER__LDD(6, b, 480)                                                                         \
    /* 28 */ LUTHIER__FMLAH(v8, 7, 3, 3) LUTHIER__FMLAH(v12, 7, 3, 7) LUTHIER__FMLAH(v16, 7, 4, 3)           \
             LUTHIER__FMLAH(v20, 7, 4, 7) LUTHIER__FMLAH(v24, 7, 0, 3) LUTHIER__FMLAH(v28, 7, 0, 7)          \
             LUTHIER__INSD(6, x7)                                                                            \
    /* 29 */ LUTHIER__FMLAH(v9, 5, 3, 3) LUTHIER__LDD(7, b, 496) LUTHIER__FMLAH(v13, 5, 3, 7)                \
             LUTHIER__FMLAH(v17, 5, 4, 3) LUTHIER__LDX(x6, b, 496) LUTHIER__FMLAH(v21, 5, 4, 7)              \
             LUTHIER__FMLAH(v25, 5, 0, 3) NX(LUTHIER__LDX(x7, b, 512)) LUTHIER__FMLAH(v29, 5, 0, 7)          \
             NX(LUTHIER__LDD(5, b, 512))                                                                     \
    /* 30 */ LUTHIER__FMLAH(v10, 6, 3, 3) LUTHIER__INSD(7, x6) LUTHIER__FMLAH(v14, 6, 3, 7)                  \
             LUTHIER__FMLAH(v18, 6, 4, 3) NX(LUTHIER__6x16L_LDXA(x6, x1, 0)) LUTHIER__FMLAH(v22, 6, 4, 7)    \
             NX(LUTHIER__LDX(x12, b, 544)) LUTHIER__FMLAH(v26, 6, 0, 3) NX(LUTHIER__LDX(x13, b, 528))        \
             LUTHIER__FMLAH(v30, 6, 0, 7) NX(LUTHIER__INSD(5, x7))                                           \
    /* 31 */ LUTHIER__FMLAH(v27, 7, 0, 3) NX(LUTHIER__LDD(6, b, 528)) LUTHIER__FMLAH(v31, 7, 0, 7)           \
             NX(LUTHIER__6x16L_LDDA(0, x0, 0)) LUTHIER__FMLAH(v11, 7, 3, 3) "add %[b], %[b], #512\n\t"       \
             LUTHIER__FMLAH(v15, 7, 3, 7) LC("subs x10, x10, #1\n\t") LUTHIER__FMLAH(v19, 7, 4, 3)           \
             NX(LUTHIER__INSD(0, x6)) LUTHIER__FMLAH(v23, 7, 4, 7) LC("b.ne .Lluthier_h6x32a55_k8_%=\n\t")
/* The loads NX makes for the first block, in the same order (B from b, A pairs from x0-x5). */
#define LUTHIER__H6x32L_FIRST                                                                                \
    LUTHIER__6x16L_LDDA(2, x4, 0) LUTHIER__6x16L_LDXA(x6, x5, 0) LUTHIER__INSD(2, x6)                        \
    LUTHIER__6x16L_LDDA(1, x2, 0) LUTHIER__6x16L_LDXA(x7, x3, 0) LUTHIER__INSD(1, x7) LUTHIER__LDX(x7, b, 0) \
    LUTHIER__LDD(5, b, 0) LUTHIER__6x16L_LDXA(x6, x1, 0) LUTHIER__LDX(x12, b, 32) LUTHIER__LDX(x13, b, 16)   \
    LUTHIER__INSD(5, x7) LUTHIER__LDD(6, b, 16) LUTHIER__6x16L_LDDA(0, x0, 0) LUTHIER__INSD(0, x6)

#define LUTHIER__H6x32L_K8 /* the in-order 8-step loop (see above) */                              \
        LUTHIER__H6x32L_FIRST                                                                      \
        "subs x10, x10, #1\n\t"                                                                    \
        "b.eq .Lluthier_h6x32a55_last_%=\n\t"                                                      \
        ".Lluthier_h6x32a55_k8_%=:\n\t"                                                            \
        "// LLVM-MCA-BEGIN\n\t"                                                                    \
        LUTHIER__H6x32L_BLOCK(LUTHIER__6x16L_KEEP, LUTHIER__6x16L_KEEP)                            \
        "// LLVM-MCA-END\n\t"                                                                      \
        ".Lluthier_h6x32a55_last_%=:\n\t"                                                          \
        LUTHIER__H6x32L_BLOCK(LUTHIER__6x16L_DROP, LUTHIER__6x16L_DROP)

LUTHIER__H6x32_KERNEL(luthier_sgemm_ukernel_6x32__neonfp16_hybrid_a55, h6x32a55, LUTHIER__H6x32L_K8, "x6", "x7", "x14",
                      "x15", "cc", "memory")

/* >>wino16: the 36 products of the fp16 Winograd F(4x4, 3x3) (luthier__conv_winograd16_range):
   C (4 x 16, fp32) = A (4 rows of fp16, nb blocks of 8 channels) * B (nb * 8 x 16 halves, one
   panel of a position's transformed weights), as two halves of 8 columns
   (luthier__wino16_4x8_neon: B read 16 bytes of each 32-byte row), each summed at three levels:
   - block: the products of 8 channels in fp16 registers (the first step FMUL, the next 7
     `fmla v.8h, B.8h, A_r.h[t]`); a 4 x 8 set is 4 registers, row r in the set's register r;
   - group: 4 blocks added in fp16 (FADD .8h) pairwise, (b0 + b1) + (b2 + b3): b0 and b2 are
     summed straight into the group sets G (v12-v15) and T (v16-v19), b1 and b3 into K (v8-v11);
     a last, partial group of 1-3 blocks is ((b0 + b1) + b2), all in G;
   - fp32: each group sum widened (FCVTL/FCVTL2 into v28-v31) and added into the fp32
     accumulators v20-v27 (row r, columns 4q..4q+3 in v(20 + 2r + q)), stored at the end.
   fp16 rounding over at most 32 channels, fp32 across groups (bench/winograd_fp16_error.py,
   "G=4 pairwise": relative RMS error 6.5e-3 to 6.8e-3 with fp16 transforms against 5.9e-3 to
   6.2e-3 for blocks of 8 added in fp32). The widening is what costs: FCVTL .4s is 2 uops on
   one vector pipe of an N1, so per group 128 FMLA/FMUL + 12 FADD .8h + 16 FCVTL uops + 8 FADD
   .4s = 164 vector uops, 78 % of the FMLA peak at best (blocks of 8 widened each: 57 %). The
   fp32 sums stay in registers, which a 4 x 16 tile's 16 could not besides three fp16 sets:
   kept in memory instead, their STP's data uops on the vector pipes leave 74 %.
   The blocks of a full group run two at a time, step by step (8 FMLA chains in flight, not 4):
   A in v0-v3 and v4-v7 (one q per row and block; the by-element FMLA takes its A register from
   v0-v15), B in v28-v31 (one q per step and block; free again for the widening). Rows are read
   through a0..a3, C written through c0..c3. */
#define LUTHIER__W16K_STEP(op, bq, t, a0, a1, a2, a3, r0, r1, r2, r3)                              \
    op " " r0 ".8h, " bq ".8h, " a0 ".h[" #t "]\n\t" op " " r1 ".8h, " bq ".8h, " a1 ".h[" #t "]\n\t" \
    op " " r2 ".8h, " bq ".8h, " a2 ".h[" #t "]\n\t" op " " r3 ".8h, " bq ".8h, " a3 ".h[" #t "]\n\t"
#define LUTHIER__W16K_STEP_(args) LUTHIER__W16K_STEP args /* (args expanded first: lists of registers) */
#define LUTHIER__W16K_AX "v0", "v1", "v2", "v3"
#define LUTHIER__W16K_AY "v4", "v5", "v6", "v7"
/* step t of two blocks at once: block x (A in v0-v3, B row t in qx) into set s, block y (A in
   v4-v7, B 256 bytes on, in qy) into set r */
#define LUTHIER__W16K_STEP2(op, t, qx, vx, qy, vy, s0, s1, s2, s3, r0, r1, r2, r3)               \
    "ldr " qx ", [%[b], #" #t " * 32]\n\t" "ldr " qy ", [%[b], #256 + " #t " * 32]\n\t"            \
    LUTHIER__W16K_STEP_((op, vx, t, LUTHIER__W16K_AX, s0, s1, s2, s3))                              \
    LUTHIER__W16K_STEP_((op, vy, t, LUTHIER__W16K_AY, r0, r1, r2, r3))
#define LUTHIER__W16K_STEP2_(args) LUTHIER__W16K_STEP2 args
/* two blocks of 8 channels (16 channels: 2 q of each A row, 16 rows of B) into sets s and r */
#define LUTHIER__W16K_BLOCK2(s0, s1, s2, s3, r0, r1, r2, r3)                                       \
    "ldp q0, q4, [%[a0]], #32\n\t" "ldp q1, q5, [%[a1]], #32\n\t"                                  \
    "ldp q2, q6, [%[a2]], #32\n\t" "ldp q3, q7, [%[a3]], #32\n\t"                                  \
    LUTHIER__W16K_STEP2_(("fmul", 0, "q28", "v28", "q29", "v29", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 1, "q30", "v30", "q31", "v31", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 2, "q28", "v28", "q29", "v29", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 3, "q30", "v30", "q31", "v31", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 4, "q28", "v28", "q29", "v29", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 5, "q30", "v30", "q31", "v31", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 6, "q28", "v28", "q29", "v29", s0, s1, s2, s3, r0, r1, r2, r3)) \
    LUTHIER__W16K_STEP2_(("fmla", 7, "q30", "v30", "q31", "v31", s0, s1, s2, s3, r0, r1, r2, r3)) \
    "add %[b], %[b], #512\n\t"
#define LUTHIER__W16K_LDB(q) "ldr " q ", [%[b]], #32\n\t"
#define LUTHIER__W16K_BLOCK2_(args) LUTHIER__W16K_BLOCK2 args
/* one block of 8 channels into set S */
#define LUTHIER__W16K_BLOCK(S)                                                                     \
    "ldr q0, [%[a0]], #16\n\t" "ldr q1, [%[a1]], #16\n\t" "ldr q2, [%[a2]], #16\n\t"              \
    "ldr q3, [%[a3]], #16\n\t" LUTHIER__W16K_LDB("q28") LUTHIER__W16K_LDB("q29")                  \
    LUTHIER__W16K_STEP_(("fmul", "v28", 0, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q30")             \
    LUTHIER__W16K_STEP_(("fmla", "v29", 1, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q31")             \
    LUTHIER__W16K_STEP_(("fmla", "v30", 2, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q28")             \
    LUTHIER__W16K_STEP_(("fmla", "v31", 3, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q29")             \
    LUTHIER__W16K_STEP_(("fmla", "v28", 4, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q30")             \
    LUTHIER__W16K_STEP_(("fmla", "v29", 5, LUTHIER__W16K_AX, S)) LUTHIER__W16K_LDB("q31")             \
    LUTHIER__W16K_STEP_(("fmla", "v30", 6, LUTHIER__W16K_AX, S))                                      \
    LUTHIER__W16K_STEP_(("fmla", "v31", 7, LUTHIER__W16K_AX, S))
#define LUTHIER__W16K_K "v8", "v9", "v10", "v11"
#define LUTHIER__W16K_G "v12", "v13", "v14", "v15"
#define LUTHIER__W16K_T "v16", "v17", "v18", "v19"
/* set d += set s (FADD .8h) */
#define LUTHIER__W16K_ADD(d0, d1, d2, d3, s0, s1, s2, s3)                                          \
    "fadd " d0 ".8h, " d0 ".8h, " s0 ".8h\n\t" "fadd " d1 ".8h, " d1 ".8h, " s1 ".8h\n\t"         \
    "fadd " d2 ".8h, " d2 ".8h, " s2 ".8h\n\t" "fadd " d3 ".8h, " d3 ".8h, " s3 ".8h\n\t"
#define LUTHIER__W16K_ADD_(args) LUTHIER__W16K_ADD args
/* fp32 row (lo, hi) += the widened group sum h (temporaries t0, t1) */
#define LUTHIER__W16K_WIDEN(h, lo, hi, t0, t1)                                                     \
    "fcvtl " t0 ".4s, " h ".4h\n\t" "fcvtl2 " t1 ".4s, " h ".8h\n\t"                               \
    "fadd " lo ".4s, " lo ".4s, " t0 ".4s\n\t" "fadd " hi ".4s, " hi ".4s, " t1 ".4s\n\t"
#define LUTHIER__W16K_FLUSH                                                                        \
    LUTHIER__W16K_WIDEN("v12", "v20", "v21", "v28", "v29") LUTHIER__W16K_WIDEN("v13", "v22", "v23", "v30", "v31") \
    LUTHIER__W16K_WIDEN("v14", "v24", "v25", "v28", "v29") LUTHIER__W16K_WIDEN("v15", "v26", "v27", "v30", "v31")

/* 4 x 8 columns of C (fp32, rows ldc apart) = A * B (rows of B 16 halves apart). */
LUTHIER__TARGET_FP16 __attribute__((noinline)) LUTHIER_PRIVATE void
luthier__wino16_4x8_neon(const uint16_t *a, size_t lda, const uint16_t *b, size_t nb, float *c, size_t ldc) {
    const uint16_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    float *c0 = c, *c1 = c + ldc, *c2 = c + 2 * ldc, *c3 = c + 3 * ldc;
    size_t ng = nb / 4, nr = nb % 4; /* full groups of 4 blocks, blocks of the partial group */
    __asm__ __volatile__(
        LUTHIER__V20_31(LUTHIER__ZEROQ) /* the fp32 sums (and v28-v31: one list) */
        "cbz %[ng], .Lluthier_w16_tail_%=\n\t"
        ".Lluthier_w16_%=:\n\t"
        "// LLVM-MCA-BEGIN\n\t"
        LUTHIER__W16K_BLOCK2_((LUTHIER__W16K_G, LUTHIER__W16K_K))
        LUTHIER__W16K_ADD_((LUTHIER__W16K_G, LUTHIER__W16K_K))
        LUTHIER__W16K_BLOCK2_((LUTHIER__W16K_T, LUTHIER__W16K_K))
        LUTHIER__W16K_ADD_((LUTHIER__W16K_T, LUTHIER__W16K_K))
        LUTHIER__W16K_ADD_((LUTHIER__W16K_G, LUTHIER__W16K_T))
        LUTHIER__W16K_FLUSH
        "subs %[ng], %[ng], #1\n\t"
        "b.ne .Lluthier_w16_%=\n\t"
        "// LLVM-MCA-END\n\t"
        ".Lluthier_w16_tail_%=:\n\t"
        "cbz %[nr], .Lluthier_w16_end_%=\n\t"
        LUTHIER__W16K_BLOCK(LUTHIER__W16K_G)
        "subs %[nr], %[nr], #1\n\t"
        "b.eq .Lluthier_w16_flush_%=\n\t"
        ".Lluthier_w16_rest_%=:\n\t"
        LUTHIER__W16K_BLOCK(LUTHIER__W16K_K)
        LUTHIER__W16K_ADD_((LUTHIER__W16K_G, LUTHIER__W16K_K))
        "subs %[nr], %[nr], #1\n\t"
        "b.ne .Lluthier_w16_rest_%=\n\t"
        ".Lluthier_w16_flush_%=:\n\t"
        LUTHIER__W16K_FLUSH
        ".Lluthier_w16_end_%=:\n\t"
        "stp q20, q21, [%[c0]]\n\t" "stp q22, q23, [%[c1]]\n\t" "stp q24, q25, [%[c2]]\n\t" "stp q26, q27, [%[c3]]\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b] "+r"(b), [ng] "+r"(ng), [nr] "+r"(nr)
        : [c0] "r"(c0), [c1] "r"(c1), [c2] "r"(c2), [c3] "r"(c3)
        : LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V8_31, "cc", "memory");
}

LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__wino16_4x16_neon(const uint16_t *a, size_t lda, const uint16_t *b,
                                                                  size_t nb, float *c, size_t ldc) {
    luthier__wino16_4x8_neon(a, lda, b, nb, c, ldc);
    luthier__wino16_4x8_neon(a, lda, b + 8, nb, c + 8, ldc);
}

#define LUTHIER__UKERNELS_F16_NEON(X)                                                              \
    X(8x24__neonfp16, "neonfp16", 8, 24, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_FP16)          \
    X(6x32__neonfp16_hybrid, "neonfp16", 6, 32, 8, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_FP16)        \
    X(8x24__neonfp16_a55, "neonfp16", 8, 24, 1, LUTHIER_KERNEL_INTERLEAVED, LUTHIER_CPU_FP16)          \
    X(6x32__neonfp16_hybrid_a55, "neonfp16", 6, 32, 8, LUTHIER_KERNEL_HYBRID, LUTHIER_CPU_FP16)

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif

#endif /* LUTHIER__KERNELS_NEON_DONE */
