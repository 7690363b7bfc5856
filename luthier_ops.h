/* luthier_ops.h - operator kernels of the execution engine: everything that is not convolution
   or GEMM (pooling, element-wise, normalization, softmax, attention, data movement).
   Part of luthier (MIT license, see luthier.h). Include luthier.h, never this file on its own:
   luthier.h pulls it into the implementation.

   CONTRACT (for the engine in luthier_graph.h)
   - Every function works on dense row-major fp32 buffers (>>ops-u8: uint8 quantized
     activations) described by the arguments; the engine has validated every shape and size
     before it calls (no argument checking needed here beyond what protects memory). Sizes
     are size_t element counts.
   - "NHWC" functions take the physical layout [n][h][w][c].
   - Each function spreads its work over the context's threads with luthier__parallel (RATIO
     schedule with cfg->ratios when given, else the default) and returns its status
     (LUTHIER_STATUS_OK, or the failure that luthier__parallel reported). Results never depend
     on the number of threads or the split (bit-identical).
   - No allocation: scratch space, when needed, comes from the caller (documented per function).
   - x == y (in place) is allowed where marked "in place ok".

   TABLE OF CONTENTS: >>ops-common >>ops-simd >>ops-math >>ops-unary >>ops-binary >>ops-pool
   >>ops-norm >>ops-softmax >>ops-move >>ops-attention >>ops-col2im >>ops-rnn >>ops-u8

   HOW IT IS VECTORIZED
   - One source for every ISA: the kernels are written on LUTHIER__VF, a GCC/Clang vector of
     the ISA's native width, and compiled in passes (this file includes itself with
     LUTHIER__OPS_PASS = 1, 2, 3): baseline 16 bytes (SSE2 / NEON), AVX2 32 bytes and AVX-512
     64 bytes under target attributes; LUTHIER__OP_PICK chooses by ctx->cpu_features. Native
     widths matter: GCC scalarizes comparisons of wider-than-native vectors, and GCC -O2 does
     not auto-vectorize loops with selects or unknown trip counts on SSE2/NEON. Without
     GCC/Clang (or with -DLUTHIER__OPS_SCALAR, for the tests) LUTHIER__VF is a plain float.
     Vectors never cross a non-inlined call (no -Wpsabi): helpers are macros or always-inline
     functions taking pointers.
   - exp / log / erf / tanh are branch-free polynomials (Cephes-style range reduction); exp is
     accurate to ~2 ulp over the whole float range (subnormal results included).
   - Split independence: units are fixed blocks (rows, or row chunks that are multiples of 64
     elements), tails go through the same vector code (padded copies), and every reduction
     (softmax, layer norm, pooling) runs inside one unit in a fixed order. So an element's
     value depends only on its position, never on the partition or the thread count.
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_ops.h is part of luthier: include luthier.h instead"
#endif

#if defined(LUTHIER__OPS_PASS) /* ---- one kernel pass ---- */

/* >>ops-simd: LUTHIER__VF (LUTHIER__VW lanes of the pass, or 1 float) and its macros. Comparisons
   give a LUTHIER__VI mask (-1/0 per lane; 1/0 for the scalar fallback): only use it through
   LUTHIER__VSEL, |, & and LUTHIER__VMASK1. */
/* Multiply-adds contract to FMA where the ISA has one, whatever the language mode: GCC turns
   contraction off under ISO -std modes (clang contracts within an expression by default).
   Measured on AVX-512: exp 1.2x, GELU 1.4x faster. The results stay identical across work
   splits (every element runs the same code). */
#if defined(__GNUC__) && !defined(__clang__)
#define LUTHIER__OPS_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define LUTHIER__OPS_CONTRACT
#endif
#if LUTHIER__OPS_PASS == 1
#define LUTHIER__VSFX _base
#define LUTHIER__KT LUTHIER__OPS_CONTRACT
#if (defined(__GNUC__) || defined(__clang__)) && !defined(LUTHIER__OPS_SCALAR) /* (tests: 1 lane) */
#define LUTHIER__VBYTES 16 /* SSE2 / NEON */
#endif
#elif LUTHIER__OPS_PASS == 2
#define LUTHIER__VSFX _avx2
#define LUTHIER__KT LUTHIER__TARGET_AVX2 LUTHIER__OPS_CONTRACT
#define LUTHIER__VBYTES 32
#else
#define LUTHIER__VSFX _avx512
#define LUTHIER__KT LUTHIER__TARGET_AVX512 LUTHIER__OPS_CONTRACT
#define LUTHIER__VBYTES 64
#endif
#define LUTHIER__VF LUTHIER__VN(luthier__vf)
#define LUTHIER__VI LUTHIER__VN(luthier__vi)
#define LUTHIER__VD LUTHIER__VN(luthier__vd)
#define LUTHIER__VACC LUTHIER__VN(luthier__op_acc)
#ifdef LUTHIER__VBYTES
#define LUTHIER__VW (LUTHIER__VBYTES / 4)
typedef float LUTHIER__VF __attribute__((vector_size(LUTHIER__VBYTES)));
typedef int32_t LUTHIER__VI __attribute__((vector_size(LUTHIER__VBYTES)));
typedef double LUTHIER__VD __attribute__((vector_size(2 * LUTHIER__VBYTES))); /* the lanes in double */
#define LUTHIER__VTOD(v) __builtin_convertvector((v), LUTHIER__VD) /* VF -> VD (an int vector: through
   LUTHIER__VITOF first; GCC 12 at -O0 fails on a 16-lane int to double conversion) */
#define LUTHIER__VTOF(d) __builtin_convertvector((d), LUTHIER__VF)
#define LUTHIER__VTOI(v) __builtin_convertvector((v), LUTHIER__VI) /* truncates; |v| < 2^31 */
#define LUTHIER__VITOF(i) __builtin_convertvector((i), LUTHIER__VF)
#define LUTHIER__VBITS(v) ((LUTHIER__VI)(v))
#define LUTHIER__VFLOAT(i) ((LUTHIER__VF)(i))
#define LUTHIER__VSEL(m, a, b) LUTHIER__VFLOAT(((m) & LUTHIER__VBITS(a)) | (~(m) & LUTHIER__VBITS(b)))
#define LUTHIER__VLOAD(v, p) memcpy(&(v), (p), sizeof(LUTHIER__VF))
#define LUTHIER__VSTORE(p, v) memcpy((p), &(v), sizeof(LUTHIER__VF))
/* (-0 + s is s for every s; +0 + -0 would be +0: a splat of -0 then divides to the wrong inf) */
#define LUTHIER__VSPLAT(v, s)                                                                    \
    do {                                                                                         \
        memset(&(v), 0, sizeof(v));                                                              \
        (v) = -(v) + (s);                                                                        \
    } while (0)
#define LUTHIER__VLANE(v, l) ((v)[l])
#else
#define LUTHIER__VW 1
typedef float LUTHIER__VF;
typedef int32_t LUTHIER__VI;
typedef double LUTHIER__VD;
#define LUTHIER__VTOD(v) ((double)(v))
#define LUTHIER__VTOF(d) ((float)(d))
#define LUTHIER__VTOI(v) ((int32_t)(v))
#define LUTHIER__VITOF(i) ((float)(i))
#define LUTHIER__VBITS(v) luthier__op_f2i(v)
#define LUTHIER__VFLOAT(i) luthier__op_i2f(i)
#define LUTHIER__VSEL(m, a, b) ((m) ? (a) : (b))
#define LUTHIER__VLOAD(v, p) ((v) = *(p))
#define LUTHIER__VSTORE(p, v) (*(p) = (v))
#define LUTHIER__VSPLAT(v, s) ((v) = (s))
#define LUTHIER__VLANE(v, l) ((void)(l), (v))
#endif
#if LUTHIER__OPS_PASS == 1
enum { luthier__op_base_vw = LUTHIER__VW }; /* lanes of the baseline pass */
#endif
#define LUTHIER__OP_RANGE(name)                                                                  \
    LUTHIER__KT LUTHIER_PRIVATE void LUTHIER__VN(name##_range)(void *arg, size_t b, size_t e, int t, int cl) { \
        (void)cl;                                                                                \
        LUTHIER__VN(name##_impl)(arg, b, e, t);                                                  \
    }
/* 1 per true lane (for integer arithmetic with masks) */
#define LUTHIER__VMASK1(m) ((m) & 1)
/* partial vectors: n < VW lanes, the others `fill` */
#define LUTHIER__VLOADN(v, p, n, fill)                                                           \
    do {                                                                                         \
        float luthier__buf_[LUTHIER__VW];                                                        \
        size_t luthier__l_;                                                                      \
        for (luthier__l_ = 0; luthier__l_ < LUTHIER__VW; luthier__l_++)                          \
            luthier__buf_[luthier__l_] = luthier__l_ < (size_t)(n) ? (p)[luthier__l_] : (fill);  \
        LUTHIER__VLOAD(v, luthier__buf_);                                                        \
    } while (0)
#define LUTHIER__VSTOREN(p, v, n)                                                                \
    do {                                                                                         \
        float luthier__buf_[LUTHIER__VW];                                                        \
        LUTHIER__VSTORE(luthier__buf_, v);                                                       \
        memcpy((p), luthier__buf_, (size_t)(n) * sizeof(float));                                 \
    } while (0)
/* n <= VW lanes at p: the whole vector when n == VW, else a partial one (the other lanes `fill`) */
#define LUTHIER__VLOADP(v, p, n, fill)                                                           \
    do {                                                                                         \
        if ((size_t)(n) == (size_t)LUTHIER__VW) LUTHIER__VLOAD(v, p);                            \
        else LUTHIER__VLOADN(v, p, n, fill);                                                     \
    } while (0)
#define LUTHIER__VSTOREP(p, v, n)                                                                \
    do {                                                                                         \
        if ((size_t)(n) == (size_t)LUTHIER__VW) LUTHIER__VSTORE(p, v);                           \
        else LUTHIER__VSTOREN(p, v, n);                                                          \
    } while (0)
/* Streaming (non-temporal) stores, for outputs past the last-level cache (luthier__op_stream):
   the line is written without being read first, so an element costs 2 memory transfers instead
   of 3. p aligned to the vector. x86 only (elsewhere a plain store); LUTHIER__VFENCE orders
   them before the pass returns. Arm cores need no hint: on a run of stores filling whole cache
   lines they stop allocating on write by themselves (Cortex-A53/A35/A55 read-allocate mode,
   A72/A76/Neoverse N1 write-streaming mode), which is how these passes write. */
#if LUTHIER__SIMD_X86 && defined(LUTHIER__VBYTES) && LUTHIER__VBYTES == 64
#define LUTHIER__VSTREAM(p, v) _mm512_stream_ps((p), (__m512)(v))
#elif LUTHIER__SIMD_X86 && defined(LUTHIER__VBYTES) && LUTHIER__VBYTES == 32
#define LUTHIER__VSTREAM(p, v) _mm256_stream_ps((p), (__m256)(v))
#elif LUTHIER__SIMD_X86 && defined(LUTHIER__VBYTES) && LUTHIER__VBYTES == 16
#define LUTHIER__VSTREAM(p, v) _mm_stream_ps((p), (__m128)(v))
#endif
#ifdef LUTHIER__VSTREAM
#define LUTHIER__VFENCE() _mm_sfence()
#define LUTHIER__VSTORE_NT(p, v, nt)                                                             \
    do {                                                                                         \
        if (nt) LUTHIER__VSTREAM(p, v);                                                          \
        else LUTHIER__VSTORE(p, v);                                                              \
    } while (0)
#else
#define LUTHIER__VFENCE() ((void)0)
#define LUTHIER__VSTORE_NT(p, v, nt) ((void)(nt), LUTHIER__VSTORE(p, v))
#endif

/* Fixed-order sums of float lanes: lanes accumulate in float for up to 16 steps, then move
   into per-lane doubles (the error of a float sum stays at ~16 ulp of the terms). */
typedef struct {
    double lane[LUTHIER__VW];
    int pending;
} LUTHIER__VACC;

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_acc_init)(LUTHIER__VACC *a, LUTHIER__VF *v) {
    int l;
    for (l = 0; l < LUTHIER__VW; l++) a->lane[l] = 0.0;
    a->pending = 0;
    LUTHIER__VSPLAT(*v, 0.0f);
}
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_acc_flush)(LUTHIER__VACC *a, LUTHIER__VF *v) {
    float buf[LUTHIER__VW];
    int l;
    LUTHIER__VSTORE(buf, *v);
    for (l = 0; l < LUTHIER__VW; l++) a->lane[l] += (double)buf[l];
    a->pending = 0;
    LUTHIER__VSPLAT(*v, 0.0f);
}
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_acc_add)(LUTHIER__VACC *a, LUTHIER__VF *v, const LUTHIER__VF *x) {
    *v = *v + *x;
    if (++a->pending == 16) LUTHIER__VN(luthier__op_acc_flush)(a, v);
}
LUTHIER__KT LUTHIER__INLINE double LUTHIER__VN(luthier__op_acc_total)(LUTHIER__VACC *a, LUTHIER__VF *v) {
    double s = 0.0;
    int l;
    LUTHIER__VN(luthier__op_acc_flush)(a, v);
    for (l = 0; l < LUTHIER__VW; l++) s += a->lane[l];
    return s;
}

/* >>ops-math: in place on *io, all lanes. */

/* exp: x = n ln2 + r, |r| <= ln2/2, Cephes degree-7 polynomial, 2^n applied as two factors so
   that results from 2^-150 to FLT_MAX are right (subnormals included). NaN propagates,
   x > ln(FLT_MAX) gives inf, x < -104 gives 0. */
/* sqrt in the vector unit at the pass's width (correctly rounded, as sqrtf; a negative input
   gives NaN). libm's sqrtf under errno semantics is a call for every negative input. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_sqrt)(LUTHIER__VF *v) {
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    __m512 c;
    memcpy(&c, v, 64);
    c = _mm512_sqrt_ps(c);
    memcpy(v, &c, 64);
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 32
    __m256 c;
    memcpy(&c, v, 32);
    c = _mm256_sqrt_ps(c);
    memcpy(v, &c, 32);
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86
    __m128 c;
    memcpy(&c, v, 16);
    c = _mm_sqrt_ps(c);
    memcpy(v, &c, 16);
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_NEON
    float32x4_t c;
    memcpy(&c, v, 16);
    c = vsqrtq_f32(c);
    memcpy(v, &c, 16);
#else
    float buf[LUTHIER__VW];
    int l;
    LUTHIER__VSTORE(buf, *v);
    for (l = 0; l < LUTHIER__VW; l++) buf[l] = sqrtf(buf[l]);
    LUTHIER__VLOAD(*v, buf);
#endif
}

/* whether any lane of the mask is set (a mask test where the ISA has one: the per-vector branches
   of pow, erf and gelu take it for every vector) */
LUTHIER__KT LUTHIER__INLINE int LUTHIER__VN(luthier__v_any)(const LUTHIER__VI *m) {
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    return _mm512_test_epi32_mask((__m512i)*m, (__m512i)*m) != 0;
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 32
    return _mm256_movemask_ps((__m256)*m) != 0;
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86
    return _mm_movemask_ps((__m128)*m) != 0;
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_NEON
    return vmaxvq_u32((uint32x4_t)*m) != 0;
#else
    int32_t w[LUTHIER__VW];
    int l, any = 0;
    memcpy(w, m, sizeof w);
    for (l = 0; l < LUTHIER__VW; l++) any |= w[l] != 0;
    return any;
#endif
}

/* The reduction and polynomial of every exp below: x = n ln2 + r, n = round(x / ln2) (t = x / ln2
   + 1.5 * 2^23 keeps n in its low mantissa bits: n = bits(t) - 0x4B400000), |r| <= ln2/2 with ln2
   in two parts, plus lo (a correction of x, or NULL); gives t and e^r - 1 = r + r^2 P(r), P
   Cephes' degree 5. The callers add 1 (or not) and apply 2^n. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_exp_red)(const LUTHIER__VF *xp, const LUTHIER__VF *lop, LUTHIER__VF *tp,
                                                                 LUTHIER__VF *em1) {
    const LUTHIER__VF x = *xp, t = x * 1.44269504088896341f + 12582912.0f, n = t - 12582912.0f;
    LUTHIER__VF r = x - n * 0.693359375f, p;
    r = r + n * 2.12194440e-4f;
    if (lop) r = r + *lop;
    p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
         1.6666665459e-1f) * r + 5.0000001201e-1f;
    *tp = t;
    *em1 = p * (r * r) + r;
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_exp)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF hi, lo, inf, zero, xc, t, p;
    LUTHIER__VI ni, n1, n2;
    LUTHIER__VSPLAT(hi, 88.72283f);
    LUTHIER__VSPLAT(lo, -104.0f);
    LUTHIER__VSPLAT(inf, INFINITY);
    LUTHIER__VSPLAT(zero, 0.0f);
    xc = LUTHIER__VSEL(x > hi, hi, x);
    xc = LUTHIER__VSEL(xc > lo, xc, lo); /* NaN -> lo: the integer part stays in range */
    LUTHIER__VN(luthier__v_exp_red)(&xc, NULL, &t, &p);
    p = p + 1.0f;
    ni = LUTHIER__VBITS(t) - 0x4B400000; /* n in [-150, 128] */
    n1 = ((ni + 256) >> 1) - 128;
    n2 = ni - n1;
    p = p * LUTHIER__VFLOAT((n1 + 127) << 23);
    p = p * LUTHIER__VFLOAT((n2 + 127) << 23);
    p = LUTHIER__VSEL(x > hi, inf, p);
    p = LUTHIER__VSEL(x < lo, zero, p);
    *io = LUTHIER__VSEL(x != x, x, p);
}

/* exp(x + lo) for x in [-87, 88] (the caller's guarantee: no clamps; NaN gives NaN, other x
   outside give garbage, never undefined behaviour): v_exp's reduction and polynomial with one 2^n
   factor and no special values. lo is a small correction (|lo| < 2^-10, or 0) that joins the
   reduced argument: exp(h + l) for an exact split h + l of x keeps the relative accuracy that a
   rounded x would lose (2^-24 |x| of it); NULL for none. Results from ~1e-38 (n = -126) up, v_exp's 2 ulp. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_exp_core)(const LUTHIER__VF *xp, const LUTHIER__VF *lop, LUTHIER__VF *out) {
    LUTHIER__VF t, p;
    LUTHIER__VN(luthier__v_exp_red)(xp, lop, &t, &p); /* n in [-126, 127] */
    p = p + 1.0f;
    *out = p * LUTHIER__VFLOAT(((LUTHIER__VBITS(t) + (127 - 0x4B400000)) & 0xff) << 23);
}

/* exp(x) for x <= 0 (v_exp without its overflow side: subnormal results right, x < -104 gives
   0); NaN gives 0, so callers propagate it themselves. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_exp_neg)(LUTHIER__VF *io) {
    LUTHIER__VF x = *io, lo, t, p;
    LUTHIER__VI ni, n1;
    LUTHIER__VSPLAT(lo, -104.0f);
    x = LUTHIER__VSEL(x > lo, x, lo); /* NaN -> lo: 2^-150 rounds to 0 */
    LUTHIER__VN(luthier__v_exp_red)(&x, NULL, &t, &p);
    p = p + 1.0f;
    ni = LUTHIER__VBITS(t) - 0x4B400000; /* n in [-150, 0]: 2^n as two normal factors */
    n1 = ((ni + 256) >> 1) - 128;
    p = p * LUTHIER__VFLOAT((n1 + 127) << 23);
    *io = p * LUTHIER__VFLOAT((ni - n1 + 127) << 23);
}

/* natural log for x > 0 (Cephes logf); 0 -> -inf, < 0 or NaN -> NaN, inf -> inf. Subnormal
   inputs are not handled (callers pass values >= bias). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_log)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF m, z, y, ef, ninf, nan, inf;
    LUTHIER__VI bits = LUTHIER__VBITS(x), e, small;
    LUTHIER__VSPLAT(ninf, -INFINITY);
    LUTHIER__VSPLAT(nan, NAN);
    LUTHIER__VSPLAT(inf, INFINITY);
    e = ((bits >> 23) & 0xff) - 126;
    m = LUTHIER__VFLOAT((bits & 0x007fffff) | 0x3f000000); /* [0.5, 1) (x > 0) */
    small = m < 0.707106781186547524f;
    e = e - LUTHIER__VMASK1(small);
    m = LUTHIER__VSEL(small, m + m - 1.0f, m - 1.0f);
    ef = LUTHIER__VFLOAT(e + 0x4B400000) - 12582912.0f;
    z = m * m;
    y = ((((((((7.0376836292e-2f * m - 1.1514610310e-1f) * m + 1.1676998740e-1f) * m - 1.2420140846e-1f) * m +
              1.4249322787e-1f) * m - 1.6668057665e-1f) * m + 2.0000714765e-1f) * m - 2.4999993993e-1f) * m +
         3.3333331174e-1f) * m * z;
    y = y + ef * -2.12194440e-4f;
    y = y - 0.5f * z;
    y = m + y;
    y = y + ef * 0.693359375f;
    y = LUTHIER__VSEL(x == 0.0f, ninf, y);
    y = LUTHIER__VSEL((x < 0.0f) | (x != x), nan, y);
    *io = LUTHIER__VSEL(x == inf, inf, y);
}

/* expm1 = exp(x) - 1 without the cancellation near 0: x = n ln2 + r as in v_exp, e^r - 1 =
   r + r^2 p(r) (exp's polynomial without its 1), then 2^n (e^r - 1) + (2^n - 1) in one multiply-add
   (at half scale, doubled after: 2^128 is no float): the exact e^r - 1 where n = 0 (|x| < ln2/2),
   and no cancellation elsewhere (2^n - 1 is exact for n <= 24, and the terms share a sign or
   |result| >= 0.29). Within 2 ulp. x < -20 gives -1 (-inf included), x > 88.72 +inf; NaN
   propagates (the clamps keep it; the 2^n bits are masked to stay defined). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_expm1)(LUTHIER__VF *io) {
    LUTHIER__VF x = *io, hi, lo, t, p, s;
    LUTHIER__VSPLAT(hi, 88.8f);
    LUTHIER__VSPLAT(lo, -20.0f);
    x = LUTHIER__VSEL(x < lo, lo, x);
    x = LUTHIER__VSEL(x > hi, hi, x);
    LUTHIER__VN(luthier__v_exp_red)(&x, NULL, &t, &p); /* n in [-29, 128] */
    s = LUTHIER__VFLOAT(((LUTHIER__VBITS(t) + (126 - 0x4B400000)) & 0xff) << 23); /* 2^(n-1) */
    *io = (s * p + (s - 0.5f)) * 2.0f;
}

/* tanh(x) = sign(x) t / (t + 2), t = expm1(2 |x|): relative accuracy at every |x| (expm1 has no
   cancellation near 0), one exp and one division, no branch. |x| is clamped to 9.1, where
   t / (t + 2) rounds to 1 (the clamp keeps NaN). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_tanh)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF z = LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff), hi;
    LUTHIER__VSPLAT(hi, 9.1f);
    z = LUTHIER__VSEL(z > hi, hi, z);
    z = z + z;
    LUTHIER__VN(luthier__v_expm1)(&z);
    z = z / (z + 2.0f);
    *io = LUTHIER__VFLOAT(LUTHIER__VBITS(z) | (LUTHIER__VBITS(x) & ~0x7fffffff));
}

/* erf(z) for |z| <= 1: z P(z^2), P of degree 5 fitted over [0, 1] (weighted least squares,
   relative error 4.0e-8 before rounding: the float rounding of 2/sqrt(pi) is 5.4e-8 itself). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_erf_small)(const LUTHIER__VF *zp, LUTHIER__VF *out) {
    const LUTHIER__VF z = *zp, s = z * z;
    *out = z * (((((-0.000563141715f * s + 0.00491755037f) * s - 0.0267113112f) * s + 0.112801798f) * s - 0.37612325f) * s +
                1.12837911f);
}
/* erfc(min(z, 9.3)) for z >= 0: exp(-z^2) P(t), t = 1 / (1 + 0.4 z), P the degree-8 fit
   (Lawson's weighted least squares: minimax relative error) of erfcx(z) = exp(z^2) erfc(z) over
   [0, 9.3] in t, relative error 9.3e-8 before rounding. z^2 = h + l exactly (z's top 12 bits
   squared, and the rest): the exponential's reduction takes l. Past 9.3 (erfc < 2e-39) the value
   at 9.3; NaN gives NaN. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_erfc_large)(const LUTHIER__VF *zp, LUTHIER__VF *out) {
    LUTHIER__VF z = *zp, zh, h, l, t, p, hi;
    LUTHIER__VSPLAT(hi, 9.3f);
    z = LUTHIER__VSEL(z > hi, hi, z);
    t = 1.0f / (1.0f + 0.4f * z);
    p = (((((((0.07297620524713738f * t - 0.3918386543996724f) * t + 0.6878294764163576f) * t - 0.39026849908271016f) * t +
            0.43033585481246334f) * t + 0.12516000043630685f) * t + 0.24181682461542037f) * t + 0.22390557841538206f) * t +
        8.312042408984479e-05f;
    zh = LUTHIER__VFLOAT(LUTHIER__VBITS(z) & ~0xfff);
    h = -(zh * zh);
    l = (zh - z) * (z + zh); /* -(z^2 - zh^2) */
    LUTHIER__VN(luthier__v_exp_core)(&h, &l, &t);
    *out = t * p;
}

/* erf: the odd polynomial alone where every lane has |x| < 1 (no exp, no division), else
   1 - erfc(|x|) past 1, with the sign of x. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_erf)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    const LUTHIER__VF z = LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff);
    const LUTHIER__VI big = (z < 1.0f) == 0; /* NaN included */
    LUTHIER__VF sm, lg, r;
    LUTHIER__VN(luthier__v_erf_small)(&x, &sm);
    if (!LUTHIER__VN(luthier__v_any)(&big)) {
        *io = sm;
        return;
    }
    LUTHIER__VN(luthier__v_erfc_large)(&z, &lg);
    r = LUTHIER__VFLOAT(LUTHIER__VBITS(1.0f - lg) | (LUTHIER__VBITS(x) & ~0x7fffffff));
    *io = LUTHIER__VSEL(big, r, sm);
}

/* gelu(x) = 0.5 x (1 + erf(x/sqrt2)) = x (1 - c/2) (x >= 0) or x c/2 (x < 0), c = erfc(z),
   z = |x|/sqrt2: erfc keeps the relative accuracy for negative x (no 1 + erf cancellation), and
   its relative error bound holds for every z >= 0, so one formula serves all x. x < -13.15 (z past
   erfc's 9.3, gelu > -2e-38) gives 0 (-inf included); +inf gives +inf. Where every lane has
   |x| < sqrt2 (per lane in mixed vectors), gelu = x/2 + x^2 Q(x^2) with Q(u) = P(u/2) / (2 sqrt2), P v_erf_small's: no exp,
   no division; 1 + erf(z) >= 1 - erf(1) = 0.157 there, so the cancellation for x < 0 costs at
   most a factor 5.4 of erf's error. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_gelu_erf)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io, u = x * x;
    const LUTHIER__VF z = LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff) * 0.70710678118654752f;
    const LUTHIER__VI big = (u < 2.0f) == 0; /* NaN included */
    const LUTHIER__VF sm = u * (((((-6.221896e-06f * u + 0.000108663538f) * u - 0.00118048431f) * u + 0.00997036509f) * u -
                                 0.0664898306f) * u + 0.398942262f) + 0.5f * x;
    LUTHIER__VF c, lim, zero;
    if (!LUTHIER__VN(luthier__v_any)(&big)) {
        *io = sm;
        return;
    }
    LUTHIER__VN(luthier__v_erfc_large)(&z, &c);
    LUTHIER__VSPLAT(lim, -13.15f);
    LUTHIER__VSPLAT(zero, 0.0f);
    c = 0.5f * c;
    c = x * LUTHIER__VSEL(x < zero, c, 1.0f - c);
    c = LUTHIER__VSEL(x < lim, zero, c);
    *io = LUTHIER__VSEL(big, c, sm); /* per lane: a lane's result never depends on its neighbours */
}

/* gelu with the tanh approximation: 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_gelu_tanh)(LUTHIER__VF *io) {
    LUTHIER__VF x = *io, e, lo;
    LUTHIER__VSPLAT(lo, -30.0f); /* below: the result underflows to -0 (and -inf / inf is NaN) */
    x = LUTHIER__VSEL(x < lo, lo, x);
    e = (x + 0.044715f * x * x * x) * -1.5957691216057308f; /* -2 sqrt(2/pi) */
    LUTHIER__VN(luthier__v_exp)(&e);
    *io = x / (1.0f + e);
}

/* sigmoid = 1 / (1 + e), e = exp(-x) from v_exp_core on -x clamped to [-87, 88.8] (no specials:
   one 2^n factor): for -x past 88.38, n = 128 makes the factor inf and the result 0 (x below
   -88.38 would give a subnormal); NaN propagates through the clamps. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_sigmoid)(LUTHIER__VF *io) {
    LUTHIER__VF e = -*io, lo, hi;
    LUTHIER__VSPLAT(lo, -87.0f);
    LUTHIER__VSPLAT(hi, 88.8f);
    e = LUTHIER__VSEL(e < lo, lo, e);
    e = LUTHIER__VSEL(e > hi, hi, e);
    LUTHIER__VN(luthier__v_exp_core)(&e, NULL, &e);
    *io = 1.0f / (1.0f + e);
}

#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
/* softplus(x) - max(x, 0) = log1p(exp(-a)), a = |x| < 16, on AVX-512: a polynomial of degree 6
   in s = a - k - 1/2 per interval [k, k + 1), its 7 coefficients picked from 16-entry tables by a
   permute (k = trunc(a)): no exp and no log1p. Coefficients [j][k] of s^j, fitted for relative
   error (Lawson, 2.6e-8 before rounding; 1.62e-7 measured over every float in (-16, 16)). */
static const float luthier__softplus_tab[7][16] = {
    {4.740769863e-01f, 2.014132738e-01f, 7.888973504e-02f, 2.975041792e-02f, 1.104774512e-02f, 4.078443162e-03f, 1.502310159e-03f, 5.529315094e-04f,
     2.034476784e-04f, 7.484902744e-05f, 2.753607077e-05f, 1.013004203e-05f, 3.726646355e-06f, 1.370958216e-06f, 5.043475539e-07f, 1.855391218e-07f},
    {-3.775407970e-01f, -1.824255288e-01f, -7.585815340e-02f, -2.931222692e-02f, -1.098694373e-02f, -4.070138559e-03f, -1.501182676e-03f, -5.527788308e-04f,
     -2.034270437e-04f, -7.484624803e-05f, -2.753569970e-05f, -1.012999383e-05f, -3.726640443e-06f, -1.370957648e-06f, -5.043475539e-07f, -1.855391645e-07f},
    {1.175015569e-01f, 7.457327098e-02f, 3.505191579e-02f, 1.422651578e-02f, 5.433110986e-03f, 2.026783535e-03f, 7.494633901e-04f, 2.762361546e-04f,
     1.016926544e-04f, 3.742026092e-05f, 1.376744694e-05f, 5.064936886e-06f, 1.863310104e-06f, 6.854767207e-07f, 2.521732085e-07f, 9.276940460e-08f},
    {-9.588837624e-03f, -1.578826457e-02f, -9.912196547e-03f, -4.464285448e-03f, -1.771200565e-03f, -6.700638332e-04f, -2.490571351e-04f, -9.197145118e-05f,
     -3.388170080e-05f, -1.247078853e-05f, -4.588614502e-06f, -1.688174279e-06f, -6.210605079e-07f, -2.284775462e-07f, -8.405248053e-08f, -3.092122114e-08f},
    {-4.011393525e-03f, 6.524294731e-04f, 1.691830577e-03f, 9.831417119e-04f, 4.232833162e-04f, 1.648138859e-04f, 6.190314889e-05f, 2.294703881e-05f,
     8.465414794e-06f, 3.117460892e-06f, 1.147284252e-06f, 4.221211043e-07f, 1.552976414e-07f, 5.713188500e-08f, 2.101779195e-08f, 7.732033680e-09f},
    {8.403834072e-04f, 6.226843107e-04f, -7.138693763e-05f, -1.460141648e-04f, -7.736276893e-05f, -3.213698074e-05f, -1.234622960e-05f, -4.614144927e-06f,
     -1.707290835e-06f, -6.294125683e-07f, -2.317288335e-07f, -8.527275952e-08f, -3.137341054e-08f, -1.154208107e-08f, -4.246155427e-09f, -1.562081464e-09f},
    {1.769611263e-04f, -1.614382491e-04f, -4.922814333e-05f, 9.367765415e-06f, 1.025741676e-05f, 4.909895324e-06f, 1.972153768e-06f, 7.485990068e-07f,
     2.785502602e-07f, 1.029016516e-07f, 3.791350522e-08f, 1.395546612e-08f, 5.134993764e-09f, 1.889202794e-09f, 6.950183762e-10f, 2.556856116e-10f},
};

/* softplus from the tables for every lane of an AVX-512 vector into *out; returns the mask of the
   lanes where it holds (|x| < 16; the others, NaN included, are garbage). */
LUTHIER__KT LUTHIER__INLINE unsigned LUTHIER__VN(luthier__v_softplus_near)(const LUTHIER__VF *xp, LUTHIER__VF *out) {
    __m512 x, a, s, p;
    __m512i k;
    memcpy(&x, xp, 64);
    a = _mm512_abs_ps(x);
    k = _mm512_cvttps_epi32(a); /* the permutes read its low 4 bits */
    s = _mm512_sub_ps(_mm512_sub_ps(a, _mm512_cvtepi32_ps(k)), _mm512_set1_ps(0.5f));
#define LUTHIER__SP_C(j) _mm512_permutexvar_ps(k, _mm512_loadu_ps(luthier__softplus_tab[j]))
    p = LUTHIER__SP_C(6); /* Horner, written out (a loop over j stays a loop at -O2) */
    p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(5)), p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(4));
    p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(3)), p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(2));
    p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(1)), p = _mm512_fmadd_ps(p, s, LUTHIER__SP_C(0));
#undef LUTHIER__SP_C
    p = _mm512_add_ps(_mm512_max_ps(x, _mm512_setzero_ps()), p);
    memcpy(out, &p, 64);
    return (unsigned)_mm512_cmp_ps_mask(a, _mm512_set1_ps(16.0f), _CMP_LT_OQ);
}
#endif

/* softplus = log(1 + exp(x)) = max(x, 0) + log1p(u), u = exp(-|x|) in [0, 1] (never overflows),
   log1p(u) = u + u^2 Q(u) without a log or a division: Q of degree 8 fitted over [0, 1] (Lawson,
   relative error 5.6e-8 on Q: < 1 ulp of log1p). Far left the result is u itself (exp's
   relative accuracy, subnormals included: v_exp_neg where a lane of the vector is past -87 or
   NaN, else v_exp_core, which needs no clamp and one 2^n factor). NaN propagates through the max.
   On AVX-512 the lanes with |x| < 16 take v_softplus_near instead (tables, no exp; the rest only
   where a vector has a lane past 16). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_softplus)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF u = -LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff), q, zero;
    const LUTHIER__VI far = (u >= -87.0f) == 0; /* NaN included */
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    LUTHIER__VF t;
    const unsigned held = LUTHIER__VN(luthier__v_softplus_near)(io, &t);
    if (held == 0xFFFFu) {
        *io = t;
        return;
    }
#endif
    LUTHIER__VSPLAT(zero, 0.0f);
    if (LUTHIER__VN(luthier__v_any)(&far)) LUTHIER__VN(luthier__v_exp_neg)(&u);
    else LUTHIER__VN(luthier__v_exp_core)(&u, NULL, &u); /* (the same bits: one 2^n factor, n >= -126) */
    q = (((((((-0.004519014220512836f * u + 0.025438242540025798f) * u - 0.0671115008894593f) * u + 0.11592361541206143f) * u -
            0.15862203626885055f) * u + 0.1985793865561212f) * u - 0.24987022414327456f) * u + 0.3333286662097444f) * u -
        0.499999971886383f;
    *io = LUTHIER__VSEL(x < zero, zero, x) + ((u * u) * q + u);
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    *io = (LUTHIER__VF)_mm512_mask_blend_ps((__mmask16)held, (__m512)*io, (__m512)t); /* per lane: the tables where they hold */
#endif
}

/* mish = x tanh(softplus(x)) = x n / (n + 2), n = e (e + 2), e = exp(x): tanh(log(1 + e)) is
   ((1 + e)^2 - 1) / ((1 + e)^2 + 1). Above 20 the ratio is 1 in float (the clamp keeps e^2 finite).
   exp is v_exp_core (no special values) unless a lane of the vector is below -87 or NaN. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_mish)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF e, n, hi;
    LUTHIER__VI far;
    LUTHIER__VSPLAT(hi, 20.0f);
    e = LUTHIER__VSEL(x > hi, hi, x);
    far = (e >= -87.0f) == 0; /* NaN included */
    if (LUTHIER__VN(luthier__v_any)(&far)) LUTHIER__VN(luthier__v_exp)(&e);
    else LUTHIER__VN(luthier__v_exp_core)(&e, NULL, &e); /* (the same bits: one 2^n factor, n >= -126) */
    n = e * (e + 2.0f);
    *io = x * (n / (n + 2.0f));
}

#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
/* pow on AVX-512 from 32-entry tables (bench/pow_tables.py writes them and checks their
   conditions): x = 2^e m, m in [1, 2) (getexp / getmant: subnormals too). log2 x: the top 5 bits
   of m pick c near 1/m (1 in the lowest bucket, so x near 1 keeps its relative precision; 1/2 in
   the highest; J/64 or J/128 between), so r = m c - 1 is exact in float (|r| <= 2^-5);
   log2 x = e - log2 c + log2(1 + r), -log2 c as a part on a 2^-15 grid (e plus it exact) and a
   float rest; log2(1 + r) = r / ln2 + r^2 Q(r), Q of degree 3 fitted over the range of r
   (2^-31.5 relative), r / ln2 as an exact product and its residual: h + l. 2^t, t = y (h + l) as
   th + tl (th's residual exact): 2^floor(k/32) 2^((k mod 32)/32) 2^f with k the nearest integer
   to 32 (th + tl), f = th - k/32 + tl (|f| <= 1/64 and a little), 2^(j/32) as a float and its
   rest, 2^f - 1 = f P(f) of degree 3 (2^-32.3), the power of two by scalef. Rows: c, -log2 c
   (grid part), -log2 c (rest), 2^(j/32), its rest, the largest |t| the lanes of the bucket hold
   for (8 in the lowest: there |r| reaches 2^-5 while the log is small, 2^-29 relative). */
static const float luthier__pow_tab[6][32] = {
    {1.0f, 0.953125f, 0.921875f, 0.90625f, 0.875f, 0.8515625f, 0.828125f, 0.8125f,
     0.7890625f, 0.7734375f, 0.75f, 0.734375f, 0.71875f, 0.703125f, 0.6875f, 0.671875f,
     0.65625f, 0.6484375f, 0.6328125f, 0.625f, 0.609375f, 0.6015625f, 0.5859375f, 0.578125f,
     0.5625f, 0.5546875f, 0.546875f, 0.5390625f, 0.53125f, 0.5234375f, 0.515625f, 0.5f},
    {0.0f, 0.0692749023f, 0.117370605f, 0.142028809f, 0.192657471f, 0.231811523f, 0.272094727f, 0.299560547f,
     0.341796875f, 0.370635986f, 0.415039062f, 0.445404053f, 0.47644043f, 0.508148193f, 0.540557861f, 0.573730469f,
     0.607696533f, 0.624969482f, 0.66015625f, 0.678070068f, 0.714599609f, 0.733215332f, 0.771179199f, 0.790557861f,
     0.830078125f, 0.850250244f, 0.870727539f, 0.891479492f, 0.912536621f, 0.933898926f, 0.955596924f, 1.0f},
    {0.0f, -1.22399069e-05f, -1.36548306e-05f, -9.8037217e-06f, -1.23927612e-05f, 4.15178556e-06f, -1.51811255e-05f, -2.65016098e-07f,
     -8.35775154e-06f, 7.39359211e-06f, -1.56322119e-06f, 7.09558799e-06f, -2.38574444e-06f, -1.28968907e-06f, 1.05200343e-05f, 4.77654794e-06f,
     -1.39559816e-05f, -8.9137684e-06f, -6.25288476e-06f, 1.83675331e-06f, -1.82823726e-06f, -1.8727261e-06f, 2.11028532e-06f, -1.12269572e-05f,
     -3.12644238e-06f, 2.63635479e-06f, -1.05560075e-05f, -3.94896551e-06f, 5.37655922e-07f, 1.18837606e-05f, 8.95681387e-06f, 0.0f},
    {1.0f, 1.0218972f, 1.04427373f, 1.06714046f, 1.09050775f, 1.1143868f, 1.13878858f, 1.1637249f,
     1.18920708f, 1.21524739f, 1.24185777f, 1.26905096f, 1.29683959f, 1.32523668f, 1.35425556f, 1.38390994f,
     1.41421354f, 1.44518077f, 1.47682619f, 1.50916445f, 1.54221082f, 1.5759809f, 1.61049032f, 1.64575553f,
     1.68179286f, 1.71861935f, 1.75625217f, 1.79470909f, 1.8340081f, 1.87416768f, 1.91520655f, 1.95714414f},
    {0.0f, -4.81155986e-08f, 4.83347016e-08f, -5.93375198e-08f, -1.30775399e-08f, -5.43554002e-08f, 5.38622231e-08f, -4.05144149e-08f,
     3.79763527e-08f, -3.26739489e-08f, 4.4968381e-08f, 1.41933332e-09f, -4.01899953e-08f, -3.49637332e-08f, -1.01233493e-08f, -5.87557736e-08f,
     2.4203235e-08f, 3.32419994e-08f, -4.50089885e-08f, -2.49593732e-08f, 8.07090483e-09f, -5.66102543e-08f, 9.83621717e-09f, -5.12497209e-08f,
     -2.47553267e-08f, -4.8496176e-08f, -9.23577037e-09f, -1.14150449e-08f, -1.1239278e-08f, -4.66300563e-08f, 9.84532811e-09f, -1.70218044e-08f},
    {8.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f,
     16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f,
     16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f,
     16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f, 16.0f},
};
/* entry idx (its low 5 bits) of a 32-float table row, per lane */
#define LUTHIER__TAB32(row, idx) _mm512_permutex2var_ps(_mm512_loadu_ps(row), idx, _mm512_loadu_ps((row) + 16))

/* natural log on AVX-512 from a 32-entry table (bench/log_tables.py writes it and checks its
   conditions): x = 2^e m, m in [1, 2) (getexp / getmant: subnormals too); the top 5 bits of m
   pick c near 1/m (pow's buckets: 1 in the lowest, 1/2 in the highest), so r = m c - 1 is exact
   (r in [-0.0206, 2^-5]); ln x = A + r + (r^2 Q(r) + B), A = e ln2hi + hi (exact: both on a 2^-16
   grid), B = e ln2lo + lo (ln2 and -ln c as hi + lo), Q of degree 3 (2^-30.8 relative). A + r as
   a fast two-sum (A is 0 or at least |r|), so x near 1 keeps its relative precision: there A and
   B are 0 (c = 1, e = 0; or c = 1/2, e = -1 and the table's last hi + lo is ln2hi + ln2lo).
   Rows: -ln c on the grid, its float rest (c: luthier__pow_tab's first row). */
static const float luthier__log_tab[2][32] = {
    {0.0f, 0.0480041504f, 0.0813446045f, 0.0984344482f, 0.133529663f, 0.160675049f, 0.188598633f, 0.207641602f,
     0.236907959f, 0.256912231f, 0.287689209f, 0.308731079f, 0.330245972f, 0.352218628f, 0.374694824f, 0.397689819f,
     0.421218872f, 0.433197021f, 0.457580566f, 0.470001221f, 0.495315552f, 0.508224487f, 0.534545898f, 0.547958374f,
     0.575363159f, 0.589355469f, 0.603530884f, 0.617919922f, 0.632522583f, 0.647338867f, 0.662368774f, 0.693145752f},
    {0.0f, 5.06879587e-06f, 1.03496177e-06f, 5.62457126e-06f, 1.72953855e-06f, 7.33286242e-06f, -7.46300475e-06f, -2.23678421e-06f,
     1.78809398e-06f, -1.81766029e-06f, -7.13653253e-06f, 4.40254826e-06f, -4.28480917e-06f, 1.96565975e-06f, -1.3747773e-06f, -6.8516697e-06f,
     -5.40699421e-06f, -7.3653614e-06f, 5.42840951e-07f, 2.40854251e-06f, 5.88547209e-06f, 3.54761255e-07f, -3.74805427e-06f, 6.79669211e-06f,
     9.85723887e-07f, -5.08187168e-06f, 4.13808129e-06f, 3.83744737e-06f, -2.42643026e-08f, -1.22265885e-06f, 6.74747935e-06f, 1.42860677e-06f},
};

/* ln x of every lane: 0 -> -inf, < 0 (-inf included) and NaN -> NaN, +inf -> +inf (fixupimm by
   x's class; the computed lane is kept for positive finite x and 1) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_log_tab)(LUTHIER__VF *io) {
    __m512 x, m, e, r, q, a, b, s, t;
    __m512i i;
    memcpy(&x, io, 64);
    m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    e = _mm512_getexp_ps(x);
    i = _mm512_srli_epi32(_mm512_castps_si512(m), 18); /* the permutes read its low 5 bits */
    r = _mm512_fmsub_ps(m, LUTHIER__TAB32(luthier__pow_tab[0], i), _mm512_set1_ps(1.0f)); /* exact */
    a = _mm512_fmadd_ps(e, _mm512_set1_ps(0.693145752f), LUTHIER__TAB32(luthier__log_tab[0], i)); /* exact */
    b = _mm512_fmadd_ps(e, _mm512_set1_ps(1.42860677e-06f), LUTHIER__TAB32(luthier__log_tab[1], i));
    q = _mm512_fmadd_ps(_mm512_set1_ps(0.196282506f), r, _mm512_set1_ps(-0.250097245f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.333334744f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(-0.5f));
    q = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, b);
    s = _mm512_add_ps(a, r);
    t = _mm512_add_ps(_mm512_sub_ps(a, s), r); /* a + r - s, exact */
    s = _mm512_add_ps(s, _mm512_add_ps(t, q));
    /* the class of x picks a 4-bit response: QNaN, SNaN -> QNaN(x); 0 -> -inf; 1 -> +0; -inf,
       negative -> NaN; +inf -> +inf; positive -> the computed lane */
    s = _mm512_fixupimm_ps(s, x, _mm512_set1_epi32(0x03538422), 0);
    memcpy(io, &s, 64);
}
#endif

/* log of any float: v_log_tab on AVX-512; elsewhere subnormals are scaled by 2^23 first (v_log
   reads the exponent field), then 23 ln2 comes off. 0 -> -inf, < 0 or NaN -> NaN, inf -> inf. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_log_any)(LUTHIER__VF *io) {
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    LUTHIER__VN(luthier__v_log_tab)(io);
#else
    const LUTHIER__VF x = *io;
    const LUTHIER__VI sub = (x > 0.0f) & (x < 1.17549435e-38f);
    LUTHIER__VF y = LUTHIER__VSEL(sub, x * 8388608.0f, x), zero;
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VN(luthier__v_log)(&y);
    *io = y - LUTHIER__VSEL(sub, zero + 15.9423851528787421f, zero);
#endif
}

/* round half to even (nearbyintf in the default rounding mode), floor (mode -1) or ceil
   (mode 1), exact: below 2^23, (|x| + 2^23) - 2^23 rounds |x| to an integer; then one step
   down (floor) or up (ceil) where that went the wrong way. The sign is x's (-0.3 -> -0, ceil
   -0.5 -> -0, as libm); |x| >= 2^23, infinities and NaN are already integers (or NaN). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_round)(LUTHIER__VF *io, int mode) {
    const LUTHIER__VF x = *io;
    const LUTHIER__VF z = LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff);
    LUTHIER__VF r = (z + 8388608.0f) - 8388608.0f, one, zero;
    LUTHIER__VSPLAT(one, 1.0f);
    LUTHIER__VSPLAT(zero, 0.0f);
    r = LUTHIER__VFLOAT(LUTHIER__VBITS(r) | (LUTHIER__VBITS(x) & ~0x7fffffff));
    if (mode < 0) r = r - LUTHIER__VSEL(r > x, one, zero);
    if (mode > 0) r = r + LUTHIER__VSEL(r < x, one, zero);
    r = LUTHIER__VFLOAT((LUTHIER__VBITS(r) & 0x7fffffff) | (LUTHIER__VBITS(x) & ~0x7fffffff));
    *io = LUTHIER__VSEL(z < 8388608.0f, r, x);
}

/* silu = x sigmoid(x), sigmoid from e = exp(-|x|) (never overflows): 1 / (1 + e) for x >= 0,
   e / (1 + e) below, so x sigmoid(x) keeps its relative accuracy far left (down to the
   subnormals) and is x far right; -inf gives -inf * 0 = NaN (the formula, as PyTorch). exp is
   v_exp_core (no special values) unless a lane of the vector is past 87 or NaN. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_silu)(LUTHIER__VF *io) {
    const LUTHIER__VF x = *io;
    LUTHIER__VF e = -LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff), one;
    const LUTHIER__VI far = (e >= -87.0f) == 0; /* NaN included */
    LUTHIER__VSPLAT(one, 1.0f);
    if (LUTHIER__VN(luthier__v_any)(&far)) LUTHIER__VN(luthier__v_exp)(&e);
    else LUTHIER__VN(luthier__v_exp_core)(&e, NULL, &e); /* (the same bits: one 2^n factor, n >= -126) */
    *io = x * (LUTHIER__VSEL(x < 0.0f, e, one) / (1.0f + e));
}

/* pow's sign and NaN for a negative x (C99, as powf), on res computed from |x|: the sign of an
   odd integer y, NaN for a finite non-integer y. |y| >= 2^24 (and +-inf) is an even integer:
   yc = 0 stands for it; below, y is an integer when its truncation is y itself, odd when that
   integer is. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_pow_sign)(const LUTHIER__VF *xp, const LUTHIER__VF *yp, LUTHIER__VF *res) {
    const LUTHIER__VF x = *xp, y = *yp, ay = LUTHIER__VFLOAT(LUTHIER__VBITS(y) & 0x7fffffff);
    LUTHIER__VF yc, zero, nan, r = *res;
    LUTHIER__VI yi, isint, odd;
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VSPLAT(nan, NAN);
    yc = LUTHIER__VSEL(ay < 16777216.0f, y, zero);
    yi = LUTHIER__VTOI(yc);
    isint = LUTHIER__VITOF(yi) == yc;
    odd = isint & ((yi & 1) == 1);
    r = LUTHIER__VSEL(odd & (LUTHIER__VBITS(x) < 0), -r, r);
    *res = LUTHIER__VSEL((x < 0.0f) & (x != -INFINITY) & (isint == 0) & (y == y), nan, r);
}

/* pow(x, y) as powf, in double (LUTHIER__VD, twice the lanes' bytes), every x and y: log|x| = e ln2
   + 2 atanh(s), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)) from the float's bits
   (subnormals scaled by 2^23 first), the series to s^13; t = y log|x|; exp(t) = 2^n exp(r), n the
   float rounding of t / ln2 (the clamp of v_exp), r = t - n ln2 in double, Taylor to r^8, rounded
   to float once, then 2^n applied as two factors (subnormal results right). Within 1 ulp of
   powf for normal results. The special values follow C99 (as powf): y = 0 or x = 1 give 1 (NaN
   included), |x| = 1 with y = +-inf gives 1, x = +-0 or +-inf give 0 or inf by the sign of y, a
   negative x as v_pow_sign, NaN propagates otherwise. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_pow_wide)(const LUTHIER__VF *xp, const LUTHIER__VF *yp, LUTHIER__VF *out) {
    const LUTHIER__VF x = *xp, y = *yp;
    const LUTHIER__VF ax = LUTHIER__VFLOAT(LUTHIER__VBITS(x) & 0x7fffffff), ay = LUTHIER__VFLOAT(LUTHIER__VBITS(y) & 0x7fffffff);
    const LUTHIER__VI sub = ax < 1.17549435e-38f;
    LUTHIER__VF m = LUTHIER__VSEL(sub, ax * 8388608.0f, ax), tf, tc, tn, res, zero, one, inf, nan, hi, lo;
    LUTHIER__VI bits = LUTHIER__VBITS(m), e, big, ni, n1, n2;
    LUTHIER__VD s, z, l, t, r, p;
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VSPLAT(one, 1.0f);
    LUTHIER__VSPLAT(inf, INFINITY);
    LUTHIER__VSPLAT(nan, NAN);
    LUTHIER__VSPLAT(hi, 89.0f);
    LUTHIER__VSPLAT(lo, -104.0f);
    e = ((bits >> 23) & 0xff) - 127 - 23 * LUTHIER__VMASK1(sub);
    m = LUTHIER__VFLOAT((bits & 0x007fffff) | 0x3f800000); /* [1, 2) */
    big = m > 1.41421356f;
    m = LUTHIER__VSEL(big, m * 0.5f, m);
    e = e + LUTHIER__VMASK1(big);
    s = LUTHIER__VTOD(m);
    s = (s - 1.0) / (s + 1.0);
    z = s * s;
    l = ((((((z * 0.07692307692307693 + 0.09090909090909091) * z + 0.1111111111111111) * z + 0.14285714285714285) * z +
           0.2) * z + 0.3333333333333333) * z + 1.0) * (s + s);
    t = LUTHIER__VTOD(LUTHIER__VITOF(e)) * 0.6931471805599453 + l; /* (|e| < 2^24: exact) */
    t = t * LUTHIER__VTOD(y);
    tf = LUTHIER__VTOF(t);
    tc = LUTHIER__VSEL(tf > hi, hi, tf);
    tc = LUTHIER__VSEL(tc > lo, tc, lo); /* NaN -> lo */
    tn = tc * 1.44269504088896341f + 12582912.0f; /* 1.5 * 2^23: round to nearest integer */
    r = t - LUTHIER__VTOD(tn - 12582912.0f) * 0.6931471805599453;
    p = ((((((((r * 2.48015873015873e-05 + 1.984126984126984e-04) * r + 1.388888888888889e-03) * r + 8.333333333333333e-03) * r +
             4.1666666666666664e-02) * r + 0.16666666666666666) * r + 0.5) * r + 1.0) * r + 1.0);
    ni = LUTHIER__VBITS(tn) - 0x4B400000; /* n in [-150, 128] */
    n1 = ((ni + 256) >> 1) - 128;
    n2 = ni - n1;
    res = LUTHIER__VTOF(p) * LUTHIER__VFLOAT((n1 + 127) << 23);
    res = res * LUTHIER__VFLOAT((n2 + 127) << 23);
    res = LUTHIER__VSEL(tf > hi, inf, res);
    res = LUTHIER__VSEL(tf < lo, zero, res);
    res = LUTHIER__VSEL(ax == 0.0f, LUTHIER__VSEL(y > 0.0f, zero, inf), res);
    res = LUTHIER__VSEL(ax == inf, LUTHIER__VSEL(y > 0.0f, inf, zero), res);
    res = LUTHIER__VSEL((tf != tf) | (x != x), nan, res);
    LUTHIER__VN(luthier__v_pow_sign)(&x, &y, &res);
    *out = LUTHIER__VSEL((y == 0.0f) | (x == 1.0f) | ((ax == 1.0f) & (ay == inf)), one, res);
}

#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
/* pow(x, y) for every lane of an AVX-512 vector into *out; returns the mask of the lanes where
   it holds: x finite and not zero, |t| = |y log2|x|| below its bucket's bound (16, or 8). There
   the log's float rounding (up to 2^-29 relative) costs 0.2 ulp at most: within 0.7 ulp of the
   exact value measured. The other lanes (y = +-inf and NaN among them) are garbage. A negative x
   gives NaN for a y that is not an integer, the sign of x for an odd one. */
LUTHIER__KT LUTHIER__INLINE unsigned LUTHIER__VN(luthier__v_pow_near)(const LUTHIER__VF *xp, const LUTHIER__VF *yp, LUTHIER__VF *out) {
    const __m512 l1h = _mm512_set1_ps(1.44269502f);
    __m512 x, y, m, r, ph, pl, q, a, h, l, th, tl, n, f, lim;
    __m512i i;
    __mmask16 neg;
    memcpy(&x, xp, 64);
    memcpy(&y, yp, 64);
    m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    i = _mm512_srli_epi32(_mm512_castps_si512(m), 18); /* the permutes read its low 5 bits */
    r = _mm512_fmsub_ps(m, LUTHIER__TAB32(luthier__pow_tab[0], i), _mm512_set1_ps(1.0f));
    lim = LUTHIER__TAB32(luthier__pow_tab[5], i);
    ph = _mm512_mul_ps(r, l1h);
    q = _mm512_fmadd_ps(_mm512_set1_ps(0.283175826f), r, _mm512_set1_ps(-0.360814095f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.480900407f)), q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(-0.721347511f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.92596303e-08f)); /* r Q(r) + (1/ln2 - l1h) */
    pl = _mm512_fmadd_ps(q, r, _mm512_fmsub_ps(r, l1h, ph));   /* + the product's residual */
    a = _mm512_add_ps(_mm512_getexp_ps(x), LUTHIER__TAB32(luthier__pow_tab[1], i)); /* exact; 0 or |a| > 2^-5 > |ph|: a fast two-sum */
    h = _mm512_add_ps(a, ph); /* (getexp: -inf for 0, inf or NaN for inf or NaN: th not finite) */
    l = _mm512_add_ps(_mm512_sub_ps(ph, _mm512_sub_ps(h, a)), _mm512_add_ps(pl, LUTHIER__TAB32(luthier__pow_tab[2], i))); /* |l| < 2^-6 |h|: */
    th = _mm512_mul_ps(y, h);
    tl = _mm512_fmadd_ps(y, l, _mm512_fmsub_ps(y, h, th));
    n = _mm512_roundscale_ps(_mm512_add_ps(th, tl), (5 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); /* k / 32 from both */
    f = _mm512_add_ps(_mm512_sub_ps(th, n), tl); /* (th - n exact) */
    i = _mm512_castps_si512(_mm512_add_ps(n, _mm512_set1_ps(393216.0f))); /* 1.5 * 2^18: k in the low bits */
    q = _mm512_fmadd_ps(_mm512_set1_ps(0.055504445f), f, _mm512_set1_ps(0.240228325f));
    q = _mm512_mul_ps(_mm512_fmadd_ps(q, f, _mm512_set1_ps(0.693147182f)), f);
    a = LUTHIER__TAB32(luthier__pow_tab[3], i);
    a = _mm512_scalef_ps(_mm512_add_ps(a, _mm512_fmadd_ps(a, q, LUTHIER__TAB32(luthier__pow_tab[4], i))), n); /* 2^floor(k / 32) */
#undef LUTHIER__TAB32
    /* a negative x: the sign of x where y is odd (y's low bit moved to the sign: |y| >= 2^31
       truncates to INT_MIN, even, as every float past 2^24), NaN where y is not an integer */
    a = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(a), _mm512_slli_epi32(_mm512_cvttps_epi32(y), 31),
                                                      _mm512_castps_si512(x), 0x78)); /* a ^ (odd & x) */
    neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    neg = _mm512_mask_cmp_ps_mask(neg, _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), y, _CMP_NEQ_UQ);
    a = _mm512_mask_mov_ps(a, neg, _mm512_set1_ps(NAN));
    memcpy(out, &a, 64);
    return (unsigned)_mm512_cmp_ps_mask(_mm512_abs_ps(th), lim, _CMP_LT_OQ);
}
#endif

/* fused multiply-add a b + c per lane (one rounding) where the pass's ISA has one: AVX2 and
   AVX-512 passes, NEON. Elsewhere (the SSE2 and scalar builds) LUTHIER__VFMA stays undefined and
   pow and mod keep the double path. */
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
#define LUTHIER__VFMA(a, b, c) ((LUTHIER__VF)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 32
#define LUTHIER__VFMA(a, b, c) ((LUTHIER__VF)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#elif defined(LUTHIER__VBYTES) && LUTHIER__SIMD_NEON
#define LUTHIER__VFMA(a, b, c) ((LUTHIER__VF)vfmaq_f32((float32x4_t)(c), (float32x4_t)(a), (float32x4_t)(b)))
#endif

#ifdef LUTHIER__VFMA
/* log2|x| = H + L (hi + lo, |L| <= 2^-24 |H| roughly) for a normal finite x, in float: x = 2^e m,
   m in [sqrt(1/2), sqrt(2)), then m = c q with c one of 2^-1/4, 1, 2^1/4 (as floats: their log2
   is a quarter plus a constant lo), |log2 q| <= 1/4; ln q = 2 atanh(s), s = (m - c) / (m + c):
   m - c is exact, m + c a two-sum, s = sh + sl from one division and its exact residual (fma);
   2 atanh(s) = 2s + s^3 P(s^2), P the series to s^8 (|s| <= 0.087: truncation 2^-38), rounded
   in float: a 2^-31.5 relative error of log2|x| at worst. 2 sh / ln2 as an exact product (fma),
   the rest added in the lo part; e + log2 c + hi as a two-sum (|e + log2 c| >= |hi| or 0). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_log2_hl)(const LUTHIER__VF *axp, LUTHIER__VF *hp, LUTHIER__VF *lp) {
    const LUTHIER__VI bits = LUTHIER__VBITS(*axp);
    LUTHIER__VF m = LUTHIER__VFLOAT((bits & 0x007fffff) | 0x3f800000), one, c, a, cl, num, den, dl, rcp, sh, sl, z, u, lh, ll, h;
    LUTHIER__VI e = ((bits >> 23) & 0xff) - 127, big, cdn, cup;
    LUTHIER__VSPLAT(one, 1.0f);
    big = m > 1.41421356f;
    m = LUTHIER__VSEL(big, m * 0.5f, m);
    e = e + LUTHIER__VMASK1(big);
    cdn = m < 0.917004049f; /* 2^-1/8 */
    cup = m > 1.09050775f;  /* 2^1/8 */
    c = LUTHIER__VSEL(cdn, one * 0.840896428f, LUTHIER__VSEL(cup, one * 1.18920708f, one));
    a = LUTHIER__VITOF(e) + LUTHIER__VSEL(cdn, one * -0.25f, LUTHIER__VSEL(cup, one * 0.25f, one * 0.0f)); /* exact */
    cl = LUTHIER__VSEL(cdn, one * 2.12359019e-8f, LUTHIER__VSEL(cup, one * -4.60712836e-8f, one * 0.0f));
    num = m - c;
    den = m + c;
    dl = m - (den - c); /* exact: c's exponent >= m's */
    rcp = 1.0f / den;
    sh = num * rcp;
    sl = LUTHIER__VFMA(-sh, den, num);
    sl = LUTHIER__VFMA(-sh, dl, sl) * rcp;
    z = sh * sh;
    z = (((0.222222222f * z + 0.285714286f) * z + 0.4f) * z + 0.666666667f) * (z * sh) + (sl + sl);
    u = sh + sh;
    lh = u * 1.44269502f;
    ll = LUTHIER__VFMA(u, one * 1.44269502f, -lh) + (u * 1.92596299e-8f + z * 1.44269502f);
    h = a + lh;
    *hp = h;
    *lp = (lh - (h - a)) + (ll + cl);
}

/* pow(x, y) for lanes with a normal finite x and |y log2|x|| < 32, in float: t = y (H + L) as
   th + tl (th = y H, tl its exact residual plus y L), 2^t = 2^n 2^r, n = round(th), r = (th - n)
   + tl, 2^r = 1 + r Q(r) (Q of degree 6 fitted over |r| <= 0.502, relative error 2.6e-9);
   ok flags the lanes it holds for (others: garbage). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_pow_f32)(const LUTHIER__VF *xp, const LUTHIER__VF *yp, LUTHIER__VF *out,
                                                                 LUTHIER__VI *ok) {
    const LUTHIER__VF y = *yp, ax = LUTHIER__VFLOAT(LUTHIER__VBITS(*xp) & 0x7fffffff);
    LUTHIER__VF h, l, th, tl, tn, r, p, zero;
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VN(luthier__v_log2_hl)(&ax, &h, &l);
    th = y * h;
    tl = LUTHIER__VFMA(y, h, -th) + y * l;
    *ok = (ax >= 1.17549435e-38f) & (ax < INFINITY) & (th < 32.0f) & (th > -32.0f);
    th = LUTHIER__VSEL(*ok, th, zero); /* the other lanes' n stays in range (defined integer arithmetic) */
    tn = th + 12582912.0f; /* 1.5 * 2^23: round to nearest integer */
    r = (th - (tn - 12582912.0f)) + tl;
    p = (((1.51651411e-05f * r + 1.54674271e-4f) * r + 1.33340887e-3f) * r + 9.61803645e-3f) * r + 5.55041023e-2f;
    p = LUTHIER__VFMA(p, r, zero + 0.240226507f); /* the last steps fused whatever the compiler contracts */
    p = LUTHIER__VFMA(p, r, zero + 0.693147182f);
    p = LUTHIER__VFMA(p, r, zero + 1.0f);
    *out = p * LUTHIER__VFLOAT(((LUTHIER__VBITS(tn) - 0x4B400000 + 127) & 0xff) << 23);
}
#endif

/* pow(x, y) as powf: the float path for the lanes it holds (where the ISA has an fma), the
   double path for the others (computed only when the vector has some): which path a lane takes
   depends on its own x and y alone, so results do not change with the work split. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_pow)(const LUTHIER__VF *xp, const LUTHIER__VF *yp, LUTHIER__VF *out) {
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    LUTHIER__VF r, w;
    const unsigned held = LUTHIER__VN(luthier__v_pow_near)(xp, yp, &r);
    if (held == 0xFFFFu) {
        *out = r;
        return;
    }
    LUTHIER__VN(luthier__v_pow_wide)(xp, yp, &w);
    *out = (LUTHIER__VF)_mm512_mask_blend_ps((__mmask16)held, (__m512)w, (__m512)r); /* per lane */
#elif defined(LUTHIER__VFMA)
    LUTHIER__VI ok, bad;
    LUTHIER__VF r, w;
    LUTHIER__VN(luthier__v_pow_f32)(xp, yp, &r, &ok);
    LUTHIER__VN(luthier__v_pow_sign)(xp, yp, &r);
    bad = ~ok;
    if (!LUTHIER__VN(luthier__v_any)(&bad)) {
        *out = r;
        return;
    }
    LUTHIER__VN(luthier__v_pow_wide)(xp, yp, &w);
    *out = LUTHIER__VSEL(ok, r, w); /* per lane: a lane's result never depends on its neighbours */
#else
    LUTHIER__VN(luthier__v_pow_wide)(xp, yp, out);
#endif
}
/* x^n for an integer 2 <= |n| <= 16, as powf within 1 ulp, in double: binary powering (every
   product exact or rounded at 2^-53), 1 / x^|n| for a negative n, then one rounding to float
   (overflow, underflow, subnormals, zeros' signs, infinities and NaN come out as powf's: double's
   range holds every float to the 16th and every result that is not 0 or inf in float). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_powi)(const LUTHIER__VF *xp, int n, LUTHIER__VF *out) {
    const LUTHIER__VD b = LUTHIER__VTOD(*xp);
    const unsigned k = (unsigned)(n < 0 ? -n : n);
    LUTHIER__VD p = b;
    int bit = 4;
    while (bit > 0 && !((k >> bit) & 1u)) bit--;
    for (bit--; bit >= 0; bit--) { /* left to right over k's bits below its top one */
        p = p * p;
        if ((k >> bit) & 1u) p = p * b;
    }
    if (n < 0) p = 1.0 / p;
    *out = LUTHIER__VTOF(p);
}

/* fmodf per lane, exact, in double (the passes without an fma, and the lanes the float path
   below does not hold): |a| - q |b| with q the nearest integer to |a| / |b| (exact while q < 2^29:
   products of 24-bit q and b), one |b| added back when it went below 0, then the sign of a.
   Lanes with |a| >= 2^28 |b| take fmodf itself. b = 0, a = +-inf or NaN give NaN; b = +-inf
   gives a. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_fmod_wide)(const LUTHIER__VF *ap, const LUTHIER__VF *bp, LUTHIER__VF *out) {
    const LUTHIER__VF a = *ap, b = *bp;
    const LUTHIER__VF aa = LUTHIER__VFLOAT(LUTHIER__VBITS(a) & 0x7fffffff), ab = LUTHIER__VFLOAT(LUTHIER__VBITS(b) & 0x7fffffff);
    const LUTHIER__VI slow = (aa >= ab * 268435456.0f) & (aa < INFINITY) & (ab > 0.0f);
    LUTHIER__VD ad = LUTHIER__VTOD(aa), bd = LUTHIER__VTOD(ab), q;
    LUTHIER__VF r, nan;
    LUTHIER__VSPLAT(nan, NAN);
    q = ad / bd;
    q = (q + 6755399441055744.0) - 6755399441055744.0; /* 1.5 * 2^52: round to nearest integer */
    r = LUTHIER__VTOF(ad - q * bd);
    r = LUTHIER__VSEL(r < 0.0f, r + ab, r);
    r = LUTHIER__VFLOAT((LUTHIER__VBITS(r) & 0x7fffffff) | (LUTHIER__VBITS(a) & ~0x7fffffff));
    r = LUTHIER__VSEL((ab == INFINITY) & (aa < INFINITY), a, r);
    r = LUTHIER__VSEL((ab == 0.0f) | (aa == INFINITY) | (a != a) | (b != b), nan, r);
    if (LUTHIER__VN(luthier__v_any)(&slow)) {
        float ra[LUTHIER__VW], rb[LUTHIER__VW], rr[LUTHIER__VW];
        int32_t sl[LUTHIER__VW];
        int l;
        LUTHIER__VSTORE(ra, a);
        LUTHIER__VSTORE(rb, b);
        LUTHIER__VSTORE(rr, r);
        memcpy(sl, &slow, sizeof sl);
        for (l = 0; l < LUTHIER__VW; l++)
            if (sl[l]) rr[l] = fmodf(ra[l], rb[l]);
        LUTHIER__VLOAD(r, rr);
    }
    *out = r;
}

#ifdef LUTHIER__VFMA
/* fmodf per lane in float, exact for the lanes it holds: *wide flags the others, |a| >= 2^22 |b|
   (b = 0 and a = +-inf among them). Held: finite a, b with |a| < 2^22 |b|, b = +-inf, NaN.
   q = the nearest integer (ties to even) to fl(t), t = |a| / |b| < 2^22 (the division's relative
   error is 2^-24 at most, or 2^-150 in absolute terms below the normals): |fl(t) - t| < 1/4, so
   |q - t| < 3/4 and q is floor(t) or ceil(t) (not always t's nearest integer). Then
   r = |a| - q |b| with |r| < |b|, computed by ONE fma, is exact because it is representable: with
   u(x) the quantum of a float (2^(e - 23) for x in [2^e, 2^(e+1)), and 2^-149 below the normals),
   |a| and |b| are multiples of min(u(|a|), u(|b|)), so r is one. If |a| >= |b|, that is u(|b|), and
   |r| < |b| < 2^24 u(|b|): r is an integer of 24 bits times u(|b|) >= 2^-149, a float (subnormal
   or not). If |a| < |b|, q is 0 (r = |a|) or 1: q = 1 needs fl(t) > 1/2 (1/2 rounds to 0, even),
   so t > 1/2 (rounding is monotone and 1/2 a float), and |b| / 2 < |a| < |b| makes |a| - |b|
   exact (Sterbenz). An exact multiple gives +0 (x - x is +0 when rounding to nearest). r < 0
   means q = floor(t) + 1: r + |b| = |a| - floor(t) |b| is fmod's value, a float, so that add is
   exact too. Then a's sign (r >= +0 here: -0 for a negative a). b = +-inf: q = 0 and r = |a| (the
   fma would give 0 inf); NaN in a or b goes through every step. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_fmod_near)(const LUTHIER__VF *ap, const LUTHIER__VF *bp, LUTHIER__VF *out, LUTHIER__VI *wide) {
    const LUTHIER__VF a = *ap;
    const LUTHIER__VF aa = LUTHIER__VFLOAT(LUTHIER__VBITS(a) & 0x7fffffff), ab = LUTHIER__VFLOAT(LUTHIER__VBITS(*bp) & 0x7fffffff);
    LUTHIER__VF q = aa / ab, r;
    q = (q + 8388608.0f) - 8388608.0f; /* 2^23: the nearest integer, ties to even (q < 2^22 here) */
    r = LUTHIER__VSEL(q == 0.0f, aa, LUTHIER__VFMA(-q, ab, aa));
    r = LUTHIER__VSEL(r < 0.0f, r + ab, r);
    *out = LUTHIER__VFLOAT(LUTHIER__VBITS(r) | (LUTHIER__VBITS(a) & ~0x7fffffff));
    *wide = aa >= ab * 4194304.0f; /* ab 2^22 is exact, or inf (then t < 2^22 for any finite a) */
}
#endif

/* Mod per lane, exact: fmodf (the sign of a), or floored (Python %): b added when the signs of
   fmodf's result and b differ (as luthier__op_fmod). The float path where the pass has an fma,
   the double path for the vectors with a lane it does not hold (|a| >= 2^22 |b|, b = 0,
   a = +-inf: rare), and everywhere else. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_mod)(const LUTHIER__VF *ap, const LUTHIER__VF *bp, int floored, LUTHIER__VF *out) {
    LUTHIER__VF r;
#ifdef LUTHIER__VFMA
    LUTHIER__VI wide;
    LUTHIER__VN(luthier__v_fmod_near)(ap, bp, &r, &wide);
    if (LUTHIER__VN(luthier__v_any)(&wide)) {
        LUTHIER__VF w;
        LUTHIER__VN(luthier__v_fmod_wide)(ap, bp, &w);
        r = LUTHIER__VSEL(wide, w, r); /* per lane: a lane's bits never depend on its neighbours */
    }
#else
    LUTHIER__VN(luthier__v_fmod_wide)(ap, bp, &r);
#endif
    if (floored) r = LUTHIER__VSEL((r != 0.0f) & ((r < 0.0f) ^ (*bp < 0.0f)), r + *bp, r);
    *out = r;
}
#undef LUTHIER__VFMA

/* clamp keeping NaN (like torch.clamp) */
#define LUTHIER__VCLAMP(v, lov, hiv)                                                             \
    do {                                                                                         \
        (v) = LUTHIER__VSEL((v) < (lov), (lov), (v));                                            \
        (v) = LUTHIER__VSEL((v) > (hiv), (hiv), (v));                                            \
    } while (0)

/* one vector of the op, in place */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_unary_vec)(luthier__unary kind, float a, float b, LUTHIER__VF *v) {
    LUTHIER__VF c0, c1, t;
    switch (kind) {
    case LUTHIER__UNARY_RELU:
        LUTHIER__VSPLAT(c0, 0.0f);
        *v = LUTHIER__VSEL(*v < c0, c0, *v);
        break;
    case LUTHIER__UNARY_CLIP:
        LUTHIER__VSPLAT(c0, a);
        LUTHIER__VSPLAT(c1, b);
        LUTHIER__VCLAMP(*v, c0, c1);
        break;
    case LUTHIER__UNARY_GELU_ERF: LUTHIER__VN(luthier__v_gelu_erf)(v); break;
    case LUTHIER__UNARY_GELU_TANH: LUTHIER__VN(luthier__v_gelu_tanh)(v); break;
    case LUTHIER__UNARY_SIGMOID: LUTHIER__VN(luthier__v_sigmoid)(v); break;
    case LUTHIER__UNARY_TANH: LUTHIER__VN(luthier__v_tanh)(v); break;
    case LUTHIER__UNARY_EXP: LUTHIER__VN(luthier__v_exp)(v); break;
    case LUTHIER__UNARY_ERF: LUTHIER__VN(luthier__v_erf)(v); break;
    case LUTHIER__UNARY_SQRT: LUTHIER__VN(luthier__v_sqrt)(v); break;
    case LUTHIER__UNARY_NEG: *v = -*v; break;
    case LUTHIER__UNARY_ABS: *v = LUTHIER__VFLOAT(LUTHIER__VBITS(*v) & 0x7fffffff); break;
    case LUTHIER__UNARY_RECIPROCAL: *v = 1.0f / *v; break;
    case LUTHIER__UNARY_AFFINE: *v = *v * a + b; break;
    case LUTHIER__UNARY_LEAKY_RELU:
        LUTHIER__VSPLAT(c0, 0.0f);
        *v = LUTHIER__VSEL(*v < c0, *v * a, *v);
        break;
    case LUTHIER__UNARY_ELU:
        c1 = *v;
        LUTHIER__VN(luthier__v_expm1)(&c1);
        LUTHIER__VSPLAT(c0, 0.0f);
        *v = LUTHIER__VSEL(*v > c0, *v * b, c1 * (a * b));
        break;
    case LUTHIER__UNARY_CELU:
        c1 = *v / a;
        LUTHIER__VN(luthier__v_expm1)(&c1);
        LUTHIER__VSPLAT(c0, 0.0f);
        *v = LUTHIER__VSEL(*v > c0, *v, c1 * a);
        break;
    case LUTHIER__UNARY_HARD_SIGMOID:
        *v = *v * a + b;
        LUTHIER__VSPLAT(c0, 0.0f);
        LUTHIER__VSPLAT(c1, 1.0f);
        LUTHIER__VCLAMP(*v, c0, c1);
        break;
    case LUTHIER__UNARY_HARD_SWISH:
        t = *v + 3.0f; /* (x + 3) / 6 as PyTorch: exact near -3, where x / 6 + 1/2 cancels */
        LUTHIER__VSPLAT(c0, 0.0f);
        LUTHIER__VSPLAT(c1, 6.0f);
        LUTHIER__VCLAMP(t, c0, c1);
        *v = *v * (t * (1.0f / 6.0f));
        break;
    case LUTHIER__UNARY_SOFTPLUS: LUTHIER__VN(luthier__v_softplus)(v); break;
    case LUTHIER__UNARY_SOFTSIGN: *v = *v / (1.0f + LUTHIER__VFLOAT(LUTHIER__VBITS(*v) & 0x7fffffff)); break;
    case LUTHIER__UNARY_MISH: LUTHIER__VN(luthier__v_mish)(v); break;
    case LUTHIER__UNARY_THRESHOLDED_RELU:
        LUTHIER__VSPLAT(c0, 0.0f);
        LUTHIER__VSPLAT(c1, a);
        *v = LUTHIER__VSEL(*v <= c1, c0, *v);
        break;
    case LUTHIER__UNARY_LOG: LUTHIER__VN(luthier__v_log_any)(v); break;
    case LUTHIER__UNARY_FLOOR: LUTHIER__VN(luthier__v_round)(v, -1); break;
    case LUTHIER__UNARY_CEIL: LUTHIER__VN(luthier__v_round)(v, 1); break;
    case LUTHIER__UNARY_ROUND: LUTHIER__VN(luthier__v_round)(v, 0); break;
    case LUTHIER__UNARY_SILU: LUTHIER__VN(luthier__v_silu)(v); break;
    case LUTHIER__UNARY_NOT:
        LUTHIER__VSPLAT(c0, 0.0f);
        LUTHIER__VSPLAT(c1, 1.0f);
        *v = LUTHIER__VSEL(*v == c0, c1, c0);
        break;
    default: break;
    }
}

/* The kind is a compile-time constant in each case of the switches below, so the inner loop is
   one straight-line vector body per kind. LD / ST move a whole vector at x + i / y + i, LDN /
   STN the partial one at the end (n elements): fp32 (LUTHIER__OP_UNARY_*) or fp16 (VLOADH ...). */
#define LUTHIER__OP_UNARY_LOOP(K, LD, ST, LDN, STN)                                              \
    for (i = from; i + LUTHIER__VW <= to; i += LUTHIER__VW) {                                    \
        LD(v, x + i);                                                                            \
        LUTHIER__VN(luthier__op_unary_vec)(K, a, b, &v);                                         \
        ST(y + i, v);                                                                            \
    }                                                                                            \
    if (i < to) {                                                                                \
        LDN(v, x + i, to - i);                                                                   \
        LUTHIER__VN(luthier__op_unary_vec)(K, a, b, &v);                                         \
        STN(y + i, v, to - i);                                                                   \
    }                                                                                            \
    break;
#define LUTHIER__OP_UNARY_ST(p, v) LUTHIER__VSTORE_NT(p, v, nt)
#define LUTHIER__OP_UNARY_LDN(v, p, n) LUTHIER__VLOADN(v, p, n, 1.0f)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_unary_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_unary_job *j = (const luthier__op_unary_job *)arg;
    const float *x = j->x;
    float *y = j->y;
    const float a = j->a, b = j->b;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    const int nt = j->stream && ((uintptr_t)(y + from) & (sizeof(LUTHIER__VF) - 1)) == 0;
    size_t i;
    LUTHIER__VF v;
    (void)thread;
    switch (j->kind) {
#define LUTHIER__X(k)                                                                            \
    case LUTHIER__UNARY_##k:                                                                     \
        LUTHIER__OP_UNARY_LOOP(LUTHIER__UNARY_##k, LUTHIER__VLOAD, LUTHIER__OP_UNARY_ST, LUTHIER__OP_UNARY_LDN, LUTHIER__VSTOREN)
    LUTHIER__UNARY_KINDS(LUTHIER__X)
#undef LUTHIER__X
    default: break;
    }
    if (nt) LUTHIER__VFENCE();
}
LUTHIER__OP_RANGE(luthier__op_unary)

/* One run of len elements: a and b step by ia/ib (0 or 1); EXPR sets r. */
#define LUTHIER__OP_BIN_LOOP(EXPR)                                                               \
    for (i = 0; i + LUTHIER__VW <= len; i += LUTHIER__VW) {                                      \
        if (ia) LUTHIER__VLOAD(va, a + i);                                                       \
        if (ib) LUTHIER__VLOAD(vb, b + i);                                                       \
        EXPR;                                                                                    \
        if (j->clamp) LUTHIER__VCLAMP(r, lov, hiv);                                              \
        LUTHIER__VSTORE_NT(y + i, r, nt);                                                        \
    }                                                                                            \
    if (i < len) {                                                                               \
        if (ia) LUTHIER__VLOADN(va, a + i, len - i, 1.0f);                                       \
        if (ib) LUTHIER__VLOADN(vb, b + i, len - i, 1.0f);                                       \
        EXPR;                                                                                    \
        if (j->clamp) LUTHIER__VCLAMP(r, lov, hiv);                                              \
        LUTHIER__VSTOREN(y + i, r, len - i);                                                     \
    }                                                                                            \
    break;

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_binary_run)(const luthier__op_binary_job *j, const float *a, int ia,
                                            const float *b, int ib, float *y, size_t len) {
    const int nt = j->stream && ((uintptr_t)y & (sizeof(LUTHIER__VF) - 1)) == 0;
    LUTHIER__VF va, vb, r, lov, hiv, one, zero;
    size_t i;
    LUTHIER__VSPLAT(va, a[0]);
    LUTHIER__VSPLAT(vb, b[0]);
    LUTHIER__VSPLAT(one, 1.0f);
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VSPLAT(lov, j->lo);
    LUTHIER__VSPLAT(hiv, j->hi);
    if (j->kind == LUTHIER__BINARY_POW && !ib && j->pow_special) { /* one exponent for every element */
        switch (j->pow_special) {
        case 1: LUTHIER__OP_BIN_LOOP(r = va * va)
        case 2: LUTHIER__OP_BIN_LOOP(r = va * va * va)
        case 3: /* sqrt, with powf's +0 for -0 and +inf for -inf */
            LUTHIER__OP_BIN_LOOP((r = va, LUTHIER__VN(luthier__v_sqrt)(&r), r = LUTHIER__VSEL(va == -INFINITY, -va, r + 0.0f)))
        case 4: LUTHIER__OP_BIN_LOOP(r = va)
        case 6: LUTHIER__OP_BIN_LOOP(LUTHIER__VN(luthier__v_powi)(&va, (int)j->pow_exp, &r))
        default: LUTHIER__OP_BIN_LOOP(r = 1.0f / va)
        }
        return;
    }
#if defined(LUTHIER__VBYTES) && LUTHIER__SIMD_X86 && LUTHIER__VBYTES == 64
    if (j->kind == LUTHIER__BINARY_POW && ia && ib && !j->clamp) { /* two vectors a step (7 % faster in cache) */
        LUTHIER__VF va1, vb1, r1;
        for (i = 0; i + 2 * LUTHIER__VW <= len; i += 2 * LUTHIER__VW) {
            unsigned h0, h1;
            LUTHIER__VLOAD(va, a + i);
            LUTHIER__VLOAD(vb, b + i);
            LUTHIER__VLOAD(va1, a + i + LUTHIER__VW);
            LUTHIER__VLOAD(vb1, b + i + LUTHIER__VW);
            h0 = LUTHIER__VN(luthier__v_pow_near)(&va, &vb, &r);
            h1 = LUTHIER__VN(luthier__v_pow_near)(&va1, &vb1, &r1);
            if ((h0 & h1) != 0xFFFFu) {
                LUTHIER__VN(luthier__v_pow)(&va, &vb, &r);
                LUTHIER__VN(luthier__v_pow)(&va1, &vb1, &r1);
            }
            LUTHIER__VSTORE_NT(y + i, r, nt);
            LUTHIER__VSTORE_NT(y + i + LUTHIER__VW, r1, nt);
        }
        a += i, b += i, y += i, len -= i;
    }
#endif
    switch (j->kind) {
#define LUTHIER__X(name, stmt) case LUTHIER__BINARY_##name: LUTHIER__OP_BIN_LOOP(stmt)
    LUTHIER__BINARY_LIST(LUTHIER__X)
#undef LUTHIER__X
    default: break;
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_binary_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_binary_job *j = (const luthier__op_binary_job *)arg;
    const int m = j->m, ia = j->sa[m - 1] != 0, ib = j->sb[m - 1] != 0;
    const size_t len = j->part.len;
    size_t u;
    (void)thread;
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            size_t oa, ob;
            luthier__op_binary_row(j, row, &oa, &ob);
            if (j->ai)
                luthier__op_binary_i64_run(j, j->ai + oa + (ia ? from : 0), ia, j->bi + ob + (ib ? from : 0), ib,
                                           row * len + from, to - from);
            else
                LUTHIER__VN(luthier__op_binary_run)(j, j->a + oa + (ia ? from : 0), ia, j->b + ob + (ib ? from : 0), ib,
                                                    j->y + row * len + from, to - from);
        }
    }
    if (j->stream) LUTHIER__VFENCE();
}
LUTHIER__OP_RANGE(luthier__op_binary)

/* >>ops-f16-elt (the passes): LUTHIER__VLOADH / LUTHIER__VSTOREH widen LUTHIER__VW halves at p into
   a vector and narrow one back, in registers where the ISA converts (see the section's head). */
#if LUTHIER__SIMD_NEON && defined(LUTHIER__VBYTES)
#define LUTHIER__VLOADH(v, p)                                                                    \
    do {                                                                                         \
        const float32x4_t luthier__w_ = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));         \
        memcpy(&(v), &luthier__w_, sizeof(v));                                                   \
    } while (0)
#define LUTHIER__VSTOREH(p, v)                                                                   \
    do {                                                                                         \
        float32x4_t luthier__w_;                                                                 \
        memcpy(&luthier__w_, &(v), sizeof(v));                                                   \
        vst1_u16((p), vreinterpret_u16_f16(vcvt_f16_f32(luthier__w_)));                          \
    } while (0)
#elif LUTHIER__SIMD_X86 && defined(LUTHIER__VBYTES) && LUTHIER__VBYTES == 64
#define LUTHIER__VLOADH(v, p) ((v) = (LUTHIER__VF)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p))))
#define LUTHIER__VSTOREH(p, v)                                                                   \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtps_ph((__m512)(v), _MM_FROUND_TO_NEAREST_INT))
#elif LUTHIER__SIMD_X86 && defined(LUTHIER__VBYTES) && LUTHIER__VBYTES == 32
#define LUTHIER__VLOADH(v, p) ((v) = (LUTHIER__VF)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#define LUTHIER__VSTOREH(p, v)                                                                   \
    _mm_storeu_si128((__m128i *)(void *)(p), _mm256_cvtps_ph((__m256)(v), _MM_FROUND_TO_NEAREST_INT))
#else /* lane by lane (SSE2, one lane) */
#define LUTHIER__VLOADH(v, p)                                                                    \
    do {                                                                                         \
        float luthier__b_[LUTHIER__VW];                                                          \
        int luthier__l_;                                                                         \
        for (luthier__l_ = 0; luthier__l_ < LUTHIER__VW; luthier__l_++)                          \
            luthier__b_[luthier__l_] = luthier__f16_to_f32((p)[luthier__l_]);                    \
        LUTHIER__VLOAD(v, luthier__b_);                                                          \
    } while (0)
#define LUTHIER__VSTOREH(p, v)                                                                   \
    do {                                                                                         \
        float luthier__b_[LUTHIER__VW];                                                          \
        int luthier__l_;                                                                         \
        LUTHIER__VSTORE(luthier__b_, v);                                                         \
        for (luthier__l_ = 0; luthier__l_ < LUTHIER__VW; luthier__l_++)                          \
            (p)[luthier__l_] = luthier__f32_to_f16(luthier__b_[luthier__l_]);                    \
    } while (0)
#endif
/* partial vectors: n < VW halves, the other lanes 1.0 */
#define LUTHIER__VLOADHN(v, p, n)                                                                \
    do {                                                                                         \
        uint16_t luthier__h_[LUTHIER__VW];                                                       \
        size_t luthier__k_;                                                                      \
        for (luthier__k_ = 0; luthier__k_ < LUTHIER__VW; luthier__k_++)                          \
            luthier__h_[luthier__k_] = luthier__k_ < (size_t)(n) ? (p)[luthier__k_] : 0x3c00;    \
        LUTHIER__VLOADH(v, luthier__h_);                                                         \
    } while (0)
#define LUTHIER__VSTOREHN(p, v, n)                                                               \
    do {                                                                                         \
        uint16_t luthier__h_[LUTHIER__VW];                                                       \
        LUTHIER__VSTOREH(luthier__h_, v);                                                        \
        memcpy((p), luthier__h_, (size_t)(n) * sizeof(uint16_t));                                \
    } while (0)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_unary_h16_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_unary_h16_job *j = (const luthier__op_unary_h16_job *)arg;
    const uint16_t *x = j->x;
    uint16_t *y = j->y;
    const float a = j->a, b = j->b;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    size_t i;
    LUTHIER__VF v;
    (void)thread;
    switch (j->kind) {
#define LUTHIER__X(k)                                                                            \
    case LUTHIER__UNARY_##k:                                                                     \
        LUTHIER__OP_UNARY_LOOP(LUTHIER__UNARY_##k, LUTHIER__VLOADH, LUTHIER__VSTOREH, LUTHIER__VLOADHN, LUTHIER__VSTOREHN)
    LUTHIER__UNARY_KINDS(LUTHIER__X)
#undef LUTHIER__X
    default: break;
    }
}
LUTHIER__OP_RANGE(luthier__op_unary_h16)

/* one vector of operand p (fp16 where h) at element i; n < VW: a partial one */
#define LUTHIER__OP_BIN_H16_LD(v, p, h, i, n)                                                    \
    do {                                                                                         \
        if ((h) && (n) < LUTHIER__VW) LUTHIER__VLOADHN(v, (const uint16_t *)(p) + (i), n);       \
        else if (h) LUTHIER__VLOADH(v, (const uint16_t *)(p) + (i));                             \
        else LUTHIER__VLOADP(v, (const float *)(p) + (i), n, 1.0f);                              \
    } while (0)
#define LUTHIER__OP_BIN_H16_LOOP(EXPR)                                                           \
    for (i = 0; i < len; i += LUTHIER__VW) {                                                     \
        const size_t n = luthier__min_sz(LUTHIER__VW, len - i);                                  \
        if (ia) LUTHIER__OP_BIN_H16_LD(va, a, ha, i, n);                                         \
        if (ib) LUTHIER__OP_BIN_H16_LD(vb, b, hb, i, n);                                         \
        EXPR;                                                                                    \
        if (j->clamp) LUTHIER__VCLAMP(r, lov, hiv);                                              \
        if (n < LUTHIER__VW) LUTHIER__VSTOREHN(y + i, r, n);                                     \
        else LUTHIER__VSTOREH(y + i, r);                                                         \
    }                                                                                            \
    break;

/* One run of len elements of luthier__op_binary_h16: a and b (fp16 where ha / hb) step by ia /
   ib (0 or 1). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_binary_h16_run)(const luthier__op_binary_job *j, const void *a, int ha,
                                                                     int ia, const void *b, int hb, int ib, uint16_t *y,
                                                                     size_t len) {
    LUTHIER__VF va, vb, r, lov, hiv, one, zero;
    size_t i;
    LUTHIER__VSPLAT(va, ha ? luthier__f16_to_f32(*(const uint16_t *)a) : *(const float *)a);
    LUTHIER__VSPLAT(vb, hb ? luthier__f16_to_f32(*(const uint16_t *)b) : *(const float *)b);
    LUTHIER__VSPLAT(one, 1.0f);
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VSPLAT(lov, j->lo);
    LUTHIER__VSPLAT(hiv, j->hi);
    switch (j->kind) {
#define LUTHIER__X(name, stmt) case LUTHIER__BINARY_##name: LUTHIER__OP_BIN_H16_LOOP(stmt)
    LUTHIER__BINARY_LIST(LUTHIER__X)
#undef LUTHIER__X
    default: break;
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_binary_h16_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_binary_h16_job *h = (const luthier__op_binary_h16_job *)arg;
    const luthier__op_binary_job *j = &h->j;
    const int m = j->m, ia = j->sa[m - 1] != 0, ib = j->sb[m - 1] != 0;
    const size_t len = j->part.len, ea = h->ha ? 2 : 4, eb = h->hb ? 2 : 4; /* element bytes */
    size_t u;
    (void)thread;
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            size_t oa, ob;
            const char *pa, *pb;
            luthier__op_binary_row(j, row, &oa, &ob);
            pa = (const char *)h->a + (oa + (ia ? from : 0)) * ea;
            pb = (const char *)h->b + (ob + (ib ? from : 0)) * eb;
            if (h->native)
                h->native(j, (const uint16_t *)(const void *)pa, ia, (const uint16_t *)(const void *)pb, ib,
                          h->y + row * len + from, to - from);
            else
                LUTHIER__VN(luthier__op_binary_h16_run)(j, pa, h->ha, ia, pb, h->hb, ib, h->y + row * len + from, to - from);
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_binary_h16)

/* One output pixel, channels [0, cn) of window q (fp32). avg divides by div the sum; over
   more than LUTHIER__OP_POOL_ROW_SUMS taps the sum of the row sums (over a whole image, as global
   average pooling, one running sum would round h w times in sequence, the row sums about h + w
   times; small windows keep one running sum, which costs no extra additions). */
#ifndef LUTHIER__OP_POOL_ROW_SUMS
#define LUTHIER__OP_POOL_ROW_SUMS 64
#endif
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_pool_pixel)(const luthier__op_win *q, size_t cn, int is_max, float div,
                                                                     float *out) {
    const float *x_img = (const float *)q->img;
    const size_t w = q->w, c = q->c, y0 = q->y0, ny = q->ny, dy = q->dy, x0 = q->x0, nx = q->nx, dx = q->dx;
    const int rows = !is_max && nx * ny > LUTHIER__OP_POOL_ROW_SUMS;
    size_t cc = 0, i, k;
    LUTHIER__VF init, zero;
    LUTHIER__VSPLAT(init, is_max ? -INFINITY : 0.0f);
    LUTHIER__VSPLAT(zero, 0.0f);
    for (; cc + 4 * LUTHIER__VW <= cn; cc += 4 * LUTHIER__VW) {
        LUTHIER__VF s0 = init, s1 = init, s2 = init, s3 = init, v0, v1, v2, v3;
        for (i = 0; i < ny; i++) {
            LUTHIER__VF r0 = rows ? zero : s0, r1 = rows ? zero : s1, r2 = rows ? zero : s2, r3 = rows ? zero : s3;
            for (k = 0; k < nx; k++) {
                const float *p = x_img + ((y0 + i * dy) * w + x0 + k * dx) * c + cc;
                LUTHIER__VLOAD(v0, p);
                LUTHIER__VLOAD(v1, p + LUTHIER__VW);
                LUTHIER__VLOAD(v2, p + 2 * LUTHIER__VW);
                LUTHIER__VLOAD(v3, p + 3 * LUTHIER__VW);
                if (is_max) {
                    r0 = LUTHIER__VSEL((v0 > r0) | (v0 != v0), v0, r0);
                    r1 = LUTHIER__VSEL((v1 > r1) | (v1 != v1), v1, r1);
                    r2 = LUTHIER__VSEL((v2 > r2) | (v2 != v2), v2, r2);
                    r3 = LUTHIER__VSEL((v3 > r3) | (v3 != v3), v3, r3);
                } else {
                    r0 = r0 + v0;
                    r1 = r1 + v1;
                    r2 = r2 + v2;
                    r3 = r3 + v3;
                }
            }
            if (rows) {
                s0 = s0 + r0, s1 = s1 + r1, s2 = s2 + r2, s3 = s3 + r3;
            } else {
                s0 = r0, s1 = r1, s2 = r2, s3 = r3;
            }
        }
        if (!is_max) {
            s0 = s0 / div;
            s1 = s1 / div;
            s2 = s2 / div;
            s3 = s3 / div;
        }
        LUTHIER__VSTORE(out + cc, s0);
        LUTHIER__VSTORE(out + cc + LUTHIER__VW, s1);
        LUTHIER__VSTORE(out + cc + 2 * LUTHIER__VW, s2);
        LUTHIER__VSTORE(out + cc + 3 * LUTHIER__VW, s3);
    }
    for (; cc < cn; cc += LUTHIER__VW) {
        const size_t nl = luthier__min_sz(LUTHIER__VW, cn - cc);
        LUTHIER__VF s0 = init, v0;
        for (i = 0; i < ny; i++) {
            LUTHIER__VF r0 = rows ? zero : s0;
            for (k = 0; k < nx; k++) {
                const float *p = x_img + ((y0 + i * dy) * w + x0 + k * dx) * c + cc;
                LUTHIER__VLOADP(v0, p, nl, 0.0f);
                if (is_max) r0 = LUTHIER__VSEL((v0 > r0) | (v0 != v0), v0, r0);
                else r0 = r0 + v0;
            }
            s0 = rows ? s0 + r0 : r0;
        }
        if (!is_max) s0 = s0 / div;
        LUTHIER__VSTOREP(out + cc, s0, nl);
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_pool_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_pool_job *j = (const luthier__op_pool_job *)arg;
    const size_t rows = j->n * j->oh;
    size_t row, r_end = luthier__min_sz(rows, ue * j->rpu), ox;
    (void)thread;
    for (row = ub * j->rpu; row < r_end; row++) {
        luthier__op_win q;
        size_t npy;
        luthier__op_pool_rows(j, row, sizeof(float), &q, &npy);
        for (ox = 0; ox < j->ow; ox++) {
            float *out = (float *)j->y + (row * j->ow + ox) * j->c;
            luthier__op_pool_cols(j, ox, npy, &q);
            if (q.ny * q.nx == 0) { /* no tap inside the input (the caller's shapes exclude it) */
                size_t cc;
                for (cc = 0; cc < j->c; cc++) out[cc] = j->is_max ? -INFINITY : 0.0f;
                continue;
            }
            LUTHIER__VN(luthier__op_pool_pixel)(&q, j->c, j->is_max, (float)q.cnt, out);
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_pool)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_apool_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_apool_job *j = (const luthier__op_apool_job *)arg;
    size_t it, it_end = luthier__min_sz(j->items, ue * j->ipu);
    (void)thread;
    for (it = ub * j->ipu; it < it_end; it++) {
        luthier__op_win q;
        size_t cn;
        const size_t o = luthier__op_apool_win(j, it, sizeof(float), &q, &cn);
        LUTHIER__VN(luthier__op_pool_pixel)(&q, cn, 0, (float)q.cnt, (float *)j->y + o);
    }
}
LUTHIER__OP_RANGE(luthier__op_apool)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_affine_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_affine_job *j = (const luthier__op_affine_job *)arg;
    const size_t len = j->part.len;
    LUTHIER__VF lov, hiv, v, s, t;
    size_t u;
    (void)thread;
    LUTHIER__VSPLAT(lov, j->lo);
    LUTHIER__VSPLAT(hiv, j->hi);
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row, i;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            const float *xr = j->x + row * len;
            float *yr = j->y + row * len;
            if (j->inner == 1) { /* row = one pixel's channels: vector scale/shift */
                for (i = from; i < to; i += LUTHIER__VW) {
                    const size_t nl = luthier__min_sz(LUTHIER__VW, to - i);
                    LUTHIER__VLOADP(v, xr + i, nl, 0.0f);
                    if (j->scale) LUTHIER__VLOADP(s, j->scale + i, nl, 1.0f); else LUTHIER__VSPLAT(s, 1.0f);
                    if (j->shift) LUTHIER__VLOADP(t, j->shift + i, nl, 0.0f); else LUTHIER__VSPLAT(t, 0.0f);
                    v = v * s + t;
                    if (j->clamp) LUTHIER__VCLAMP(v, lov, hiv);
                    LUTHIER__VSTOREP(yr + i, v, nl);
                }
            } else { /* row = one channel's plane: scalar scale/shift */
                const size_t ch = row % j->c;
                LUTHIER__VSPLAT(s, j->scale ? j->scale[ch] : 1.0f);
                LUTHIER__VSPLAT(t, j->shift ? j->shift[ch] : 0.0f);
                for (i = from; i + LUTHIER__VW <= to; i += LUTHIER__VW) {
                    LUTHIER__VLOAD(v, xr + i);
                    v = v * s + t;
                    if (j->clamp) LUTHIER__VCLAMP(v, lov, hiv);
                    LUTHIER__VSTORE(yr + i, v);
                }
                if (i < to) {
                    LUTHIER__VLOADN(v, xr + i, to - i, 0.0f);
                    v = v * s + t;
                    if (j->clamp) LUTHIER__VCLAMP(v, lov, hiv);
                    LUTHIER__VSTOREN(yr + i, v, to - i);
                }
            }
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_affine)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_ln_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_ln_job *j = (const luthier__op_ln_job *)arg;
    const size_t n = j->cols, r_end = luthier__min_sz(j->rows, ue * j->rpu);
    size_t row, i;
    (void)thread;
    for (row = ub * j->rpu; row < r_end; row++) {
        const float *x = j->x + row * n;
        float *y = j->y + row * n;
        LUTHIER__VACC a1, a2;
        LUTHIER__VF v1, v2, v, d, m0v, cv, rv, g, b;
        double s1, s2, mean_c, var;
        float m0;
        /* pass 1: a shift m0 (close to the mean; only needs to be near it) */
        LUTHIER__VN(luthier__op_acc_init)(&a1, &v1);
        for (i = 0; i < n; i += LUTHIER__VW) {
            LUTHIER__VLOADP(v, x + i, luthier__min_sz(LUTHIER__VW, n - i), 0.0f);
            LUTHIER__VN(luthier__op_acc_add)(&a1, &v1, &v);
        }
        m0 = (float)(LUTHIER__VN(luthier__op_acc_total)(&a1, &v1) / (double)n);
        /* pass 2: sums of d = x - m0 and d^2 (shifted data: no cancellation when |mean| >> std) */
        LUTHIER__VSPLAT(m0v, m0);
        LUTHIER__VN(luthier__op_acc_init)(&a1, &v1);
        LUTHIER__VN(luthier__op_acc_init)(&a2, &v2);
        for (i = 0; i < n; i += LUTHIER__VW) {
            LUTHIER__VLOADP(v, x + i, luthier__min_sz(LUTHIER__VW, n - i), m0);
            d = v - m0v;
            LUTHIER__VN(luthier__op_acc_add)(&a1, &v1, &d);
            d = d * d;
            LUTHIER__VN(luthier__op_acc_add)(&a2, &v2, &d);
        }
        s1 = LUTHIER__VN(luthier__op_acc_total)(&a1, &v1);
        s2 = LUTHIER__VN(luthier__op_acc_total)(&a2, &v2);
        mean_c = s1 / (double)n;
        var = s2 / (double)n - mean_c * mean_c;
        if (!(var > 0.0)) var = var == var ? 0.0 : var;
        LUTHIER__VSPLAT(cv, (float)mean_c);
        LUTHIER__VSPLAT(rv, (float)(1.0 / sqrt(var + (double)j->eps)));
        /* pass 3: y = ((x - m0) - c) * rstd * gamma + beta */
        for (i = 0; i < n; i += LUTHIER__VW) {
            const size_t nl = luthier__min_sz(LUTHIER__VW, n - i);
            LUTHIER__VLOADP(v, x + i, nl, 0.0f);
            if (j->gamma) LUTHIER__VLOADP(g, j->gamma + i, nl, 1.0f); else LUTHIER__VSPLAT(g, 1.0f);
            if (j->beta) LUTHIER__VLOADP(b, j->beta + i, nl, 0.0f); else LUTHIER__VSPLAT(b, 0.0f);
            v = ((v - m0v) - cv) * rv * g + b;
            LUTHIER__VSTOREP(y + i, v, nl);
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_ln)

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_lrn_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_lrn_job *j = (const luthier__op_lrn_job *)arg;
    const size_t c = j->c, p_end = luthier__min_sz(j->pixels, ue * j->ppu);
    size_t p, ch, t;
    LUTHIER__VF kv, bv, v, s, q;
    (void)thread;
    LUTHIER__VSPLAT(kv, j->k);
    LUTHIER__VSPLAT(bv, j->bias);
    for (p = ub * j->ppu; p < p_end; p++) {
        const float *x = j->x + p * c;
        float *y = j->y + p * c;
        for (ch = 0; ch < c; ch += LUTHIER__VW) {
            const size_t nl = luthier__min_sz(LUTHIER__VW, c - ch);
            float sum[LUTHIER__VW];
            size_t l;
            if (nl == LUTHIER__VW && ch >= j->lo && ch + LUTHIER__VW + j->hi <= c) { /* interior */
                LUTHIER__VSPLAT(s, 0.0f);
                for (t = 0; t <= j->lo + j->hi; t++) {
                    LUTHIER__VLOAD(q, x + ch - j->lo + t);
                    s = s + q * q;
                }
            } else { /* edges: the window clipped to [0, c), same order of terms */
                for (l = 0; l < LUTHIER__VW; l++) {
                    float acc = 0.0f;
                    if (l < nl) {
                        for (t = 0; t <= j->lo + j->hi; t++) {
                            const ptrdiff_t cc = (ptrdiff_t)(ch + l + t) - (ptrdiff_t)j->lo;
                            if (cc >= 0 && cc < (ptrdiff_t)c) acc = acc + x[cc] * x[cc];
                            else acc = acc + 0.0f;
                        }
                    }
                    sum[l] = acc;
                }
                LUTHIER__VLOAD(s, sum);
            }
            s = bv + kv * s; /* base >= bias */
            LUTHIER__VN(luthier__v_log)(&s);
            s = s * -j->beta;
            LUTHIER__VN(luthier__v_exp)(&s); /* base^-beta */
            LUTHIER__VLOADP(v, x + ch, nl, 0.0f);
            v = v * s;
            LUTHIER__VSTOREP(y + ch, v, nl);
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_lrn)

/* Softmax of one contiguous row of n: y = exp(x - max) (unnormalized), returns the sum. */
LUTHIER__KT LUTHIER__INLINE double LUTHIER__VN(luthier__op_softmax_row_exp)(const float *x, float *y, size_t n, float *max_out) {
    LUTHIER__VF m, v, s;
    LUTHIER__VACC acc;
    float mx, buf[LUTHIER__VW];
    size_t i;
    int l;
    LUTHIER__VSPLAT(m, -INFINITY);
    for (i = 0; i + LUTHIER__VW <= n; i += LUTHIER__VW) {
        LUTHIER__VLOAD(v, x + i);
        m = LUTHIER__VSEL(v > m, v, m);
    }
    if (i < n) {
        LUTHIER__VLOADN(v, x + i, n - i, -INFINITY);
        m = LUTHIER__VSEL(v > m, v, m);
    }
    LUTHIER__VSTORE(buf, m);
    mx = buf[0];
    for (l = 1; l < LUTHIER__VW; l++) mx = buf[l] > mx ? buf[l] : mx;
    *max_out = mx;
    LUTHIER__VN(luthier__op_acc_init)(&acc, &s);
    for (i = 0; i < n; i += LUTHIER__VW) {
        const size_t nl = luthier__min_sz(LUTHIER__VW, n - i);
        LUTHIER__VLOADP(v, x + i, nl, -INFINITY);
        v = v - mx;
        LUTHIER__VN(luthier__v_exp)(&v);
        if (y) LUTHIER__VSTOREP(y + i, v, nl);
        LUTHIER__VN(luthier__op_acc_add)(&acc, &s, &v);
    }
    return LUTHIER__VN(luthier__op_acc_total)(&acc, &s);
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_softmax_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_softmax_job *j = (const luthier__op_softmax_job *)arg;
    const size_t len = j->len, inner = j->inner, it_end = luthier__min_sz(j->items, ue * j->ipu);
    size_t it, i, r;
    LUTHIER__VF v;
    (void)thread;
    for (it = ub * j->ipu; it < it_end; it++) {
        if (inner == 1) { /* one contiguous row */
            const float *x = j->x + it * len;
            float *y = j->y + it * len;
            float mx;
            const double sum = LUTHIER__VN(luthier__op_softmax_row_exp)(x, j->log ? NULL : y, len, &mx);
            LUTHIER__VF f;
            if (j->log) {
                const float lse = (float)log(sum);
                for (i = 0; i < len; i += LUTHIER__VW) {
                    const size_t nl = luthier__min_sz(LUTHIER__VW, len - i);
                    LUTHIER__VLOADP(v, x + i, nl, 0.0f);
                    v = (v - mx) - lse;
                    LUTHIER__VSTOREP(y + i, v, nl);
                }
            } else {
                LUTHIER__VSPLAT(f, (float)(1.0 / sum));
                for (i = 0; i + LUTHIER__VW <= len; i += LUTHIER__VW) {
                    LUTHIER__VLOAD(v, y + i);
                    v = v * f;
                    LUTHIER__VSTORE(y + i, v);
                }
                for (; i < len; i++) y[i] = y[i] * LUTHIER__VLANE(f, 0);
            }
        } else { /* columns of [len][inner]: vectors run along inner */
            const size_t o = it / j->chunks, c0 = it % j->chunks * LUTHIER__OP_SOFTMAX_CB;
            const size_t c_end = luthier__min_sz(inner, c0 + LUTHIER__OP_SOFTMAX_CB);
            size_t cc;
            for (cc = c0; cc < c_end; cc += LUTHIER__VW) {
                const size_t nl = luthier__min_sz(LUTHIER__VW, c_end - cc);
                const float *x = j->x + o * len * inner + cc;
                float *y = j->y + o * len * inner + cc;
                LUTHIER__VF m, s;
                LUTHIER__VACC acc;
                float tot[LUTHIER__VW];
                int l;
                LUTHIER__VSPLAT(m, -INFINITY);
                for (r = 0; r < len; r++) {
                    LUTHIER__VLOADP(v, x + r * inner, nl, 0.0f);
                    m = LUTHIER__VSEL(v > m, v, m);
                }
                LUTHIER__VN(luthier__op_acc_init)(&acc, &s);
                for (r = 0; r < len; r++) {
                    LUTHIER__VLOADP(v, x + r * inner, nl, 0.0f);
                    v = v - m;
                    if (j->log) {
                        LUTHIER__VF e = v;
                        LUTHIER__VN(luthier__v_exp)(&e);
                        LUTHIER__VN(luthier__op_acc_add)(&acc, &s, &e);
                    } else {
                        LUTHIER__VN(luthier__v_exp)(&v);
                        LUTHIER__VSTOREP(y + r * inner, v, nl);
                        LUTHIER__VN(luthier__op_acc_add)(&acc, &s, &v);
                    }
                }
                LUTHIER__VN(luthier__op_acc_flush)(&acc, &s);
                for (l = 0; l < LUTHIER__VW; l++)
                    tot[l] = j->log ? (float)log(acc.lane[l]) : (float)(1.0 / acc.lane[l]);
                LUTHIER__VLOAD(s, tot);
                if (j->log) {
                    for (r = 0; r < len; r++) {
                        LUTHIER__VLOADP(v, x + r * inner, nl, 0.0f);
                        v = (v - m) - s;
                        LUTHIER__VSTOREP(y + r * inner, v, nl);
                    }
                } else {
                    for (r = 0; r < len; r++) {
                        LUTHIER__VLOADP(v, y + r * inner, nl, 0.0f);
                        v = v * s;
                        LUTHIER__VSTOREP(y + r * inner, v, nl);
                    }
                }
            }
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_softmax)

/* y_row = (sum_j p(j) v[j]) * inv, p(j) = P[j * pst] (pst = 16 rows path, 1 dot path) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_att_pv)(const float *P, size_t pst, const float *v, size_t nk, size_t dv, float inv,
                                        float *y) {
    size_t c = 0, jj;
    for (; c + 4 * LUTHIER__VW <= dv; c += 4 * LUTHIER__VW) {
        LUTHIER__VF a0, a1, a2, a3, w0, w1, w2, w3;
        LUTHIER__VSPLAT(a0, 0.0f);
        a1 = a2 = a3 = a0;
        for (jj = 0; jj < nk; jj++) {
            const float p = P[jj * pst];
            const float *vr = v + jj * dv + c;
            LUTHIER__VLOAD(w0, vr);
            LUTHIER__VLOAD(w1, vr + LUTHIER__VW);
            LUTHIER__VLOAD(w2, vr + 2 * LUTHIER__VW);
            LUTHIER__VLOAD(w3, vr + 3 * LUTHIER__VW);
            a0 = a0 + w0 * p;
            a1 = a1 + w1 * p;
            a2 = a2 + w2 * p;
            a3 = a3 + w3 * p;
        }
        a0 = a0 * inv;
        a1 = a1 * inv;
        a2 = a2 * inv;
        a3 = a3 * inv;
        LUTHIER__VSTORE(y + c, a0);
        LUTHIER__VSTORE(y + c + LUTHIER__VW, a1);
        LUTHIER__VSTORE(y + c + 2 * LUTHIER__VW, a2);
        LUTHIER__VSTORE(y + c + 3 * LUTHIER__VW, a3);
    }
    for (; c < dv; c += LUTHIER__VW) {
        const size_t nl = luthier__min_sz(LUTHIER__VW, dv - c);
        LUTHIER__VF a0, w0;
        LUTHIER__VSPLAT(a0, 0.0f);
        for (jj = 0; jj < nk; jj++) {
            LUTHIER__VLOADP(w0, v + jj * dv + c, nl, 0.0f);
            a0 = a0 + w0 * P[jj * pst];
        }
        a0 = a0 * inv;
        LUTHIER__VSTOREP(y + c, a0, nl);
    }
}

/* dot product in a fixed order: lanes along d, then the lanes in order, then the tail */
LUTHIER__KT LUTHIER__INLINE float LUTHIER__VN(luthier__op_att_dot)(const float *a, const float *b, size_t d) {
    LUTHIER__VF s, va, vb;
    float buf[LUTHIER__VW], r = 0.0f;
    size_t t;
    int l;
    LUTHIER__VSPLAT(s, 0.0f);
    for (t = 0; t + LUTHIER__VW <= d; t += LUTHIER__VW) {
        LUTHIER__VLOAD(va, a + t);
        LUTHIER__VLOAD(vb, b + t);
        s = s + va * vb;
    }
    LUTHIER__VSTORE(buf, s);
    for (l = 0; l < LUTHIER__VW; l++) r += buf[l];
    for (; t < d; t++) r += a[t] * b[t];
    return r;
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_att_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_att_job *j = (const luthier__op_att_job *)arg;
    const size_t d = j->d, dv = j->dv, skv = j->skv, sq = j->sq;
    float *P = j->scratch + (size_t)thread * j->stride;
    size_t u;
    for (u = ub; u < ue; u++) {
        if (j->rows_path) {
            const size_t b = u / j->blocks, i0 = u % j->blocks * LUTHIER__VW;
            const size_t rows = luthier__min_sz(LUTHIER__VW, sq - i0);
            const float *q = j->q + (b * sq + i0) * d, *k = j->k + b * skv * d, *v = j->v + b * skv * dv;
            float qT[LUTHIER__OP_ATT_DMAX * LUTHIER__VW], inv[LUTHIER__VW];
            size_t nk[LUTHIER__VW], kmax = 0, r, t, jj;
            LUTHIER__VF m, s, e, a0, a1, a2, a3, qv;
            LUTHIER__VACC acc;
            for (r = 0; r < LUTHIER__VW; r++) {
                nk[r] = luthier__op_att_nk(j, i0 + (r < rows ? r : rows - 1));
                kmax = nk[r] > kmax ? nk[r] : kmax;
                for (t = 0; t < d; t++) qT[t * LUTHIER__VW + r] = r < rows ? q[r * d + t] : 0.0f;
            }
            for (jj = 0; jj + 4 <= kmax; jj += 4) { /* scores, 4 keys at a time */
                const float *k0 = k + jj * d;
                LUTHIER__VSPLAT(a0, 0.0f);
                a1 = a2 = a3 = a0;
                for (t = 0; t < d; t++) {
                    LUTHIER__VLOAD(qv, qT + t * LUTHIER__VW);
                    a0 = a0 + qv * k0[t];
                    a1 = a1 + qv * k0[d + t];
                    a2 = a2 + qv * k0[2 * d + t];
                    a3 = a3 + qv * k0[3 * d + t];
                }
                a0 = a0 * j->scale;
                a1 = a1 * j->scale;
                a2 = a2 * j->scale;
                a3 = a3 * j->scale;
                LUTHIER__VSTORE(P + jj * LUTHIER__VW, a0);
                LUTHIER__VSTORE(P + (jj + 1) * LUTHIER__VW, a1);
                LUTHIER__VSTORE(P + (jj + 2) * LUTHIER__VW, a2);
                LUTHIER__VSTORE(P + (jj + 3) * LUTHIER__VW, a3);
            }
            for (; jj < kmax; jj++) {
                const float *k0 = k + jj * d;
                LUTHIER__VSPLAT(a0, 0.0f);
                for (t = 0; t < d; t++) {
                    LUTHIER__VLOAD(qv, qT + t * LUTHIER__VW);
                    a0 = a0 + qv * k0[t];
                }
                a0 = a0 * j->scale;
                LUTHIER__VSTORE(P + jj * LUTHIER__VW, a0);
            }
            for (r = 0; r < LUTHIER__VW; r++) /* causal mask */
                for (jj = nk[r]; jj < kmax; jj++) P[jj * LUTHIER__VW + r] = -INFINITY;
            LUTHIER__VSPLAT(m, -INFINITY);
            for (jj = 0; jj < kmax; jj++) {
                LUTHIER__VLOAD(e, P + jj * LUTHIER__VW);
                m = LUTHIER__VSEL(e > m, e, m);
            }
            LUTHIER__VN(luthier__op_acc_init)(&acc, &s);
            for (jj = 0; jj < kmax; jj++) {
                LUTHIER__VLOAD(e, P + jj * LUTHIER__VW);
                e = e - m;
                LUTHIER__VN(luthier__v_exp)(&e);
                LUTHIER__VSTORE(P + jj * LUTHIER__VW, e);
                LUTHIER__VN(luthier__op_acc_add)(&acc, &s, &e);
            }
            LUTHIER__VN(luthier__op_acc_flush)(&acc, &s);
            for (r = 0; r < rows; r++) {
                inv[r] = (float)(1.0 / acc.lane[r]);
                if (!nk[r]) {
                    memset(j->y + (b * sq + i0 + r) * dv, 0, dv * sizeof(float));
                    continue;
                }
                LUTHIER__VN(luthier__op_att_pv)(P + r, LUTHIER__VW, v, nk[r], dv, inv[r], j->y + (b * sq + i0 + r) * dv);
            }
        } else {
            const size_t r_end = luthier__min_sz(j->bh * sq, (u + 1) * j->rpu);
            size_t row;
            for (row = u * j->rpu; row < r_end; row++) {
                const size_t b = row / sq, i = row % sq, n = luthier__op_att_nk(j, i);
                const float *q = j->q + row * d, *k = j->k + b * skv * d, *v = j->v + b * skv * dv;
                float mx;
                double sum;
                size_t jj;
                if (!n) {
                    memset(j->y + row * dv, 0, dv * sizeof(float));
                    continue;
                }
                for (jj = 0; jj < n; jj++) P[jj] = LUTHIER__VN(luthier__op_att_dot)(q, k + jj * d, d) * j->scale;
                sum = LUTHIER__VN(luthier__op_softmax_row_exp)(P, P, n, &mx);
                LUTHIER__VN(luthier__op_att_pv)(P, 1, v, n, dv, (float)(1.0 / sum), j->y + row * dv);
            }
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_att)


/* >>ops-resize (see luthier__op_rs_plan) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rs_copy)(float *y, const float *x, size_t n) {
    size_t c = 0;
    for (; c + LUTHIER__VW <= n; c += LUTHIER__VW) {
        LUTHIER__VF v;
        LUTHIER__VLOAD(v, x + c);
        LUTHIER__VSTORE(y + c, v);
    }
    for (; c < n; c++) y[c] = x[c];
}

/* One output row of nearest: copies of input pixels (inner floats each). */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rs_nearest_row)(const luthier__op_rs_plan *rp, const float *xr,
                                                                      float *yr, size_t inner) {
    size_t ox, r;
    if (rp->rep && inner == 1) {
        const size_t k = rp->rep;
        if (k == 2)
            for (ox = 0; ox < rp->w; ox++) yr[2 * ox] = yr[2 * ox + 1] = xr[ox];
        else
            for (ox = 0; ox < rp->w; ox++)
                for (r = 0; r < k; r++) yr[ox * k + r] = xr[ox];
    } else if (rp->rep) {
        for (ox = 0; ox < rp->w; ox++)
            for (r = 0; r < rp->rep; r++) LUTHIER__VN(luthier__op_rs_copy)(yr + (ox * rp->rep + r) * inner, xr + ox * inner, inner);
    } else if (inner == 1) {
        for (ox = 0; ox < rp->ow; ox++) yr[ox] = xr[rp->widx[ox]];
    } else {
        for (ox = 0; ox < rp->ow; ox++) LUTHIER__VN(luthier__op_rs_copy)(yr + ox * inner, xr + rp->widx[ox] * inner, inner);
    }
}

/* One output row of linear / cubic: sum over the taps of wh * ww * x, vectors along inner. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rs_interp_row)(const luthier__op_rs_plan *rp, const float *xi,
                                                                     size_t oy, float *yr, size_t inner) {
    const int T = rp->taps;
    const size_t *hi = rp->hidx + oy * (size_t)T, *const widx = rp->widx, ow = rp->ow, w = rp->w;
    const float *hw = rp->hwt + oy * (size_t)T, *const wwt = rp->wwt;
    size_t ox, c;
    int ty, tx;
    if (inner == 1) { /* NCHW: the taps' input rows, one output at a time */
        const float *rows[4];
        float hv[4];
        for (ty = 0; ty < T; ty++) rows[ty] = xi + hi[ty] * w, hv[ty] = hw[ty];
        if (T == 4) /* cubic: a sum per row, in a tree (a chain of 16 multiply-adds was latency bound) */
            for (ox = 0; ox < ow; ox++) {
                const size_t *wi = widx + ox * 4;
                const float *ww = wwt + ox * 4;
                float s[4];
                for (ty = 0; ty < 4; ty++)
                    s[ty] = (rows[ty][wi[0]] * ww[0] + rows[ty][wi[1]] * ww[1]) + (rows[ty][wi[2]] * ww[2] + rows[ty][wi[3]] * ww[3]);
                yr[ox] = (s[0] * hv[0] + s[1] * hv[1]) + (s[2] * hv[2] + s[3] * hv[3]);
            }
        for (ox = 0; ox < ow && T != 4; ox++) {
            const size_t *wi = widx + ox * (size_t)T;
            const float *ww = wwt + ox * (size_t)T;
            float acc = 0.0f;
            for (ty = 0; ty < T; ty++)
                for (tx = 0; tx < T; tx++) acc = acc + rows[ty][wi[tx]] * (hv[ty] * ww[tx]);
            yr[ox] = acc;
        }
        return;
    }
    for (ox = 0; ox < rp->ow; ox++) {
        const size_t *wi = rp->widx + ox * (size_t)T;
        const float *ww = rp->wwt + ox * (size_t)T;
        float *out = yr + ox * inner;
        for (c = 0; c + LUTHIER__VW <= inner; c += LUTHIER__VW) {
            LUTHIER__VF acc, v;
            LUTHIER__VSPLAT(acc, 0.0f);
            for (ty = 0; ty < T; ty++)
                for (tx = 0; tx < T; tx++) {
                    const float wgt = hw[ty] * ww[tx];
                    LUTHIER__VLOAD(v, xi + (hi[ty] * rp->w + wi[tx]) * inner + c);
                    acc = acc + v * wgt;
                }
            LUTHIER__VSTORE(out + c, acc);
        }
        for (; c < inner; c++) {
            float acc = 0.0f;
            for (ty = 0; ty < T; ty++)
                for (tx = 0; tx < T; tx++) acc = acc + xi[(hi[ty] * rp->w + wi[tx]) * inner + c] * (hw[ty] * ww[tx]);
            out[c] = acc;
        }
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rs_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_rs_job *j = (const luthier__op_rs_job *)arg;
    const luthier__op_rs_plan *rp = j->rp;
    const size_t rows = j->outer * rp->oh, rlen = rp->ow * j->inner, r0 = ub * j->rpu;
    size_t row, r_end = luthier__min_sz(rows, ue * j->rpu);
    (void)thread;
    for (row = r0; row < r_end; row++) {
        const size_t o = row / rp->oh, oy = row % rp->oh;
        const float *xi = j->x + o * rp->h * rp->w * j->inner;
        float *yr = j->y + row * rlen;
        if (rp->taps > 1) {
            LUTHIER__VN(luthier__op_rs_interp_row)(rp, xi, oy, yr, j->inner);
        } else if (oy > 0 && row > r0 && rp->hidx[oy] == rp->hidx[oy - 1]) { /* the row above, same source */
            memcpy(yr, yr - rlen, rlen * sizeof(float));
        } else {
            LUTHIER__VN(luthier__op_rs_nearest_row)(rp, xi + rp->hidx[oy] * rp->w * j->inner, yr, j->inner);
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_rs)

/* ---- where (>>ops-where) ---- */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_where_run)(const float *c, int ic, const float *x, int ix,
                                                                      const float *y, int iy, float *o, size_t len) {
    LUTHIER__VF vc, vx, vy, r, zero;
    size_t i;
    LUTHIER__VSPLAT(zero, 0.0f);
    LUTHIER__VSPLAT(vc, c[0]);
    LUTHIER__VSPLAT(vx, x[0]);
    LUTHIER__VSPLAT(vy, y[0]);
    for (i = 0; i + LUTHIER__VW <= len; i += LUTHIER__VW) {
        if (ic) LUTHIER__VLOAD(vc, c + i);
        if (ix) LUTHIER__VLOAD(vx, x + i);
        if (iy) LUTHIER__VLOAD(vy, y + i);
        r = LUTHIER__VSEL(vc != zero, vx, vy);
        LUTHIER__VSTORE(o + i, r);
    }
    if (i < len) {
        if (ic) LUTHIER__VLOADN(vc, c + i, len - i, 0.0f);
        if (ix) LUTHIER__VLOADN(vx, x + i, len - i, 0.0f);
        if (iy) LUTHIER__VLOADN(vy, y + i, len - i, 0.0f);
        r = LUTHIER__VSEL(vc != zero, vx, vy);
        LUTHIER__VSTOREN(o + i, r, len - i);
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_where_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_where_job *j = (const luthier__op_where_job *)arg;
    const int m = j->m, ic = j->sc[m - 1] != 0, ix = j->sx[m - 1] != 0, iy = j->sy[m - 1] != 0;
    const size_t len = j->part.len, *const st[3] = {j->sc, j->sx, j->sy};
    size_t u, i;
    (void)thread;
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            size_t off[3]; /* the row's offsets in c, x and y */
            luthier__op_unravel(row, m - 1, j->dim, -1, 3, st, off);
            off[0] += ic ? from : 0, off[1] += ix ? from : 0, off[2] += iy ? from : 0;
            if (j->xi) { /* i64: plain C */
                int64_t *o = j->oi + row * len + from;
                for (i = 0; i < to - from; i++)
                    o[i] = j->c[off[0] + (ic ? i : 0)] != 0.0f ? j->xi[off[1] + (ix ? i : 0)] : j->yi[off[2] + (iy ? i : 0)];
            } else {
                LUTHIER__VN(luthier__op_where_run)(j->c + off[0], ic, j->x + off[1], ix, j->y + off[2], iy,
                                                   j->o + row * len + from, to - from);
            }
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_where)

/* ---- cast (>>ops-cast) ---- */
#ifdef LUTHIER__VBYTES
#define LUTHIER__ISEL(m, a, b) (((m) & (a)) | (~(m) & (b)))
#else
#define LUTHIER__ISEL(m, a, b) ((m) ? (a) : (b))
#endif
/* f32 rounded to the nearest f16 value (ties to even), in place: 13 mantissa bits rounded off
   for normal halves, multiples of 2^-24 below 2^-14 (|x| + 0.5 - 0.5 rounds there), +-inf from
   65520 up, inf and NaN kept. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_f16)(LUTHIER__VF *v) {
    const LUTHIER__VI bits = LUTHIER__VBITS(*v), a = bits & 0x7fffffff, sg = bits & ~0x7fffffff;
    LUTHIER__VI nr = (a + (0xfff + ((a >> 13) & 1))) & ~0x1fff, sb, r;
    LUTHIER__VF t = LUTHIER__VFLOAT(a);
    t = t + 0.5f;
    t = t - 0.5f;
    sb = LUTHIER__VBITS(t);
    r = LUTHIER__ISEL(a < 0x38800000, sb, nr);
    r = LUTHIER__ISEL(a >= 0x477ff000, r - r + 0x7f800000, r);
    r = LUTHIER__ISEL(a >= 0x7f800000, a, r);
    *v = LUTHIER__VFLOAT(r | sg);
}
#undef LUTHIER__ISEL

/* f32 -> f32, bool (0/1) or f16-rounded: vector code over [from, to) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_cast_f32)(luthier__cast to, const float *x, float *y, size_t from,
                                                                     size_t to_) {
    LUTHIER__VF v, one, zero;
    size_t i;
    LUTHIER__VSPLAT(one, 1.0f);
    LUTHIER__VSPLAT(zero, 0.0f);
    for (i = from; i < to_; i += LUTHIER__VW) {
        const size_t n = to_ - i < (size_t)LUTHIER__VW ? to_ - i : (size_t)LUTHIER__VW;
        LUTHIER__VLOADP(v, x + i, n, 0.0f);
        if (to == LUTHIER__CAST_BOOL) v = LUTHIER__VSEL(v != zero, one, zero);
        else if (to == LUTHIER__CAST_F16) LUTHIER__VN(luthier__v_f16)(&v);
        LUTHIER__VSTOREP(y + i, v, n);
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_cast_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_cast_job *j = (const luthier__op_cast_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    float *yf = (float *)j->y;
    int64_t *yi = (int64_t *)j->y;
    size_t i;
    (void)thread;
    if (j->src == 0 && (j->to == LUTHIER__CAST_F32 || j->to == LUTHIER__CAST_BOOL || j->to == LUTHIER__CAST_F16)) {
        LUTHIER__VN(luthier__op_cast_f32)(j->to, (const float *)j->x, yf, from, to);
        return;
    }
    for (i = from; i < to; i++) { /* the integer forms: plain C */
        if (j->src == 0) {
            const float f = ((const float *)j->x)[i];
            yi[i] = luthier__op_f2i_sat(f, j->to == LUTHIER__CAST_I32 ? (int64_t)INT32_MIN : INT64_MIN);
        } else {
            const int64_t v = j->src == 1 ? ((const int64_t *)j->x)[i]
                            : j->src == 2 ? (int64_t)((const int32_t *)j->x)[i]
                                          : (int64_t)(((const uint8_t *)j->x)[i] != 0);
            switch (j->to) {
            case LUTHIER__CAST_I64: yi[i] = v; break;
            case LUTHIER__CAST_I32: yi[i] = luthier__op_wrap32(v); break;
            case LUTHIER__CAST_BOOL: yf[i] = v != 0 ? 1.0f : 0.0f; break;
            default: yf[i] = (float)v; break; /* F32, F16 (rounded below) */
            }
        }
    }
    if (j->src != 0 && j->to == LUTHIER__CAST_F16) LUTHIER__VN(luthier__op_cast_f32)(LUTHIER__CAST_F16, yf, yf, from, to);
}
LUTHIER__OP_RANGE(luthier__op_cast)

/* >>ops-col2im: output rows (b, oy) as units; every output element sums its taps in (ky, kx)
   order, whatever the split. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_col2im_add)(float *y, const float *s, size_t n) {
    LUTHIER__VF a, b;
    size_t i;
    for (i = 0; i + LUTHIER__VW <= n; i += LUTHIER__VW) {
        LUTHIER__VLOAD(a, y + i);
        LUTHIER__VLOAD(b, s + i);
        a = a + b;
        LUTHIER__VSTORE(y + i, a);
    }
    for (; i < n; i++) y[i] += s[i];
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_col2im_fma)(float *y, const float *x, const float *w, size_t n) {
    LUTHIER__VF a, b, c;
    size_t i;
    for (i = 0; i + LUTHIER__VW <= n; i += LUTHIER__VW) {
        LUTHIER__VLOAD(a, y + i);
        LUTHIER__VLOAD(b, x + i);
        LUTHIER__VLOAD(c, w + i);
        a = a + b * c;
        LUTHIER__VSTORE(y + i, a);
    }
    for (; i < n; i++) y[i] += x[i] * w[i];
}

/* The taps of output pixel (b, oy, ox) whose input row lies in the chunk, added to y. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_col2im_pixel)(const luthier__op_col2im_job *j, size_t b, size_t oy,
                                                                     size_t ox, float *y) {
    const size_t taps = j->kh * j->kw, px = j->groups * taps * j->cg; /* floats per input pixel */
    size_t ky, kx, g;
    for (ky = 0; ky < j->kh; ky++) {
        const ptrdiff_t ty = (ptrdiff_t)oy + j->pt - (ptrdiff_t)(ky * j->dh);
        size_t row;
        if (ty < 0 || ty % (ptrdiff_t)j->sh) continue;
        row = b * j->h + (size_t)ty / j->sh;
        if ((size_t)ty / j->sh >= j->h || row < j->r0 || row >= j->r1) continue;
        for (kx = 0; kx < j->kw; kx++) {
            const ptrdiff_t tx = (ptrdiff_t)ox + j->pl - (ptrdiff_t)(kx * j->dw);
            const float *src;
            if (tx < 0 || tx % (ptrdiff_t)j->sw || (size_t)tx / j->sw >= j->w) continue;
            if (j->x) {
                LUTHIER__VN(luthier__op_col2im_fma)(y, j->x + (row * j->w + (size_t)tx / j->sw) * j->c,
                                                    j->wt + (ky * j->kw + kx) * j->c, j->c);
                continue;
            }
            src = j->cols + ((row - j->r0) * j->w + (size_t)tx / j->sw) * px + (ky * j->kw + kx) * j->cg;
            for (g = 0; g < j->groups; g++) LUTHIER__VN(luthier__op_col2im_add)(y + g * j->cg, src + g * taps * j->cg, j->cg);
        }
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_col2im_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_col2im_job *j = (const luthier__op_col2im_job *)arg;
    const size_t u_end = luthier__min_sz(j->n * j->oh, ue * j->rpu);
    LUTHIER__VF lov, hiv, v;
    size_t u, ox, i;
    (void)thread;
    LUTHIER__VSPLAT(lov, j->lo);
    LUTHIER__VSPLAT(hiv, j->hi);
    for (u = ub * j->rpu; u < u_end; u++) {
        /* the input rows [lo, hi) that may reach output row oy: the first chunk holding one
           starts the row at the bias, the one holding the last clamps it; a row no input row
           reaches is the bias (clamped), written with the first chunk */
        const size_t b = u / j->oh, oy = u % j->oh;
        const ptrdiff_t t0 = (ptrdiff_t)oy + j->pt - (ptrdiff_t)((j->kh - 1) * j->dh);
        const size_t lo = t0 <= 0 ? 0 : ((size_t)t0 + j->sh - 1) / j->sh;
        const size_t hi = luthier__min_sz(j->h, (oy + (size_t)j->pt) / j->sh + 1);
        const int empty = lo >= hi;
        int init, fin;
        if (empty ? !j->first : (b * j->h + hi <= j->r0 || b * j->h + lo >= j->r1)) continue;
        init = empty || b * j->h + lo >= j->r0;
        fin = j->clamp && (empty || b * j->h + hi <= j->r1);
        for (ox = 0; ox < j->ow; ox++) {
            float *y = j->y + (u * j->ow + ox) * j->c;
            if (init) {
                if (j->bias) memcpy(y, j->bias, sizeof(float) * j->c);
                else memset(y, 0, sizeof(float) * j->c);
            }
            if (!empty) LUTHIER__VN(luthier__op_col2im_pixel)(j, b, oy, ox, y);
            if (!fin) continue;
            for (i = 0; i + LUTHIER__VW <= j->c; i += LUTHIER__VW) {
                LUTHIER__VLOAD(v, y + i);
                LUTHIER__VCLAMP(v, lov, hiv);
                LUTHIER__VSTORE(y + i, v);
            }
            for (; i < j->c; i++) y[i] = y[i] < j->lo ? j->lo : y[i] > j->hi ? j->hi : y[i];
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_col2im)


/* >>ops-rnn: one time step's gate math of a recurrent layer (see luthier__op_rnn_job); n lanes
   of the row from i (n < LUTHIER__VW only at the row's end). */

/* clip (when the layer has it), then sigmoid (sig) or tanh */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__v_rnn_act)(const luthier__op_rnn_job *j, LUTHIER__VF *v, int sig) {
    if (j->has_clip) {
        LUTHIER__VF lo, hi;
        LUTHIER__VSPLAT(lo, -j->clip);
        LUTHIER__VSPLAT(hi, j->clip);
        LUTHIER__VCLAMP(*v, lo, hi);
    }
    if (sig) LUTHIER__VN(luthier__v_sigmoid)(v);
    else LUTHIER__VN(luthier__v_tanh)(v);
}

/* LSTM: i, o, f, c = g's four blocks; C = f C + i tanh(c); h = o tanh(C) (peepholes P i, o, f) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rnn_lstm_row)(const luthier__op_rnn_job *j, size_t b) {
    const size_t H = j->hidden;
    const float *g = j->g + b * j->gs;
    float *h = j->h + b * H, *c = j->c + b * H, *y = j->y + b * j->ys;
    LUTHIER__VF gi, go, gf, gc, cp, pv, one;
    size_t i, n;
    LUTHIER__VSPLAT(one, 1.0f);
    for (i = 0; i < H; i += n) {
        n = H - i < (size_t)LUTHIER__VW ? H - i : (size_t)LUTHIER__VW;
        LUTHIER__VLOADP(gi, g + i, n, 0.0f);
        LUTHIER__VLOADP(go, g + H + i, n, 0.0f);
        LUTHIER__VLOADP(gf, g + 2 * H + i, n, 0.0f);
        LUTHIER__VLOADP(gc, g + 3 * H + i, n, 0.0f);
        LUTHIER__VLOADP(cp, c + i, n, 0.0f);
        if (j->p) {
            LUTHIER__VLOADP(pv, j->p + i, n, 0.0f);
            gi = gi + pv * cp;
            LUTHIER__VLOADP(pv, j->p + 2 * H + i, n, 0.0f);
            gf = gf + pv * cp;
        }
        LUTHIER__VN(luthier__v_rnn_act)(j, &gi, 1);
        if (j->input_forget) gf = one - gi;
        else LUTHIER__VN(luthier__v_rnn_act)(j, &gf, 1);
        LUTHIER__VN(luthier__v_rnn_act)(j, &gc, 0);
        cp = gf * cp + gi * gc;
        if (j->p) {
            LUTHIER__VLOADP(pv, j->p + H + i, n, 0.0f);
            go = go + pv * cp;
        }
        LUTHIER__VN(luthier__v_rnn_act)(j, &go, 1);
        LUTHIER__VSTOREP(c + i, cp, n);
        LUTHIER__VN(luthier__v_tanh)(&cp);
        cp = go * cp;
        LUTHIER__VSTOREP(h + i, cp, n);
        LUTHIER__VSTOREP(y + i, cp, n);
    }
}

/* GRU, z and r complete in g (linear_before_reset 0): z activated in place, rh = r h */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rnn_gru_zr_row)(const luthier__op_rnn_job *j, size_t b) {
    const size_t H = j->hidden;
    float *g = j->g + b * j->gs, *h = j->h + b * H, *rh = j->rh + b * H;
    LUTHIER__VF z, r, hp;
    size_t i, n;
    for (i = 0; i < H; i += n) {
        n = H - i < (size_t)LUTHIER__VW ? H - i : (size_t)LUTHIER__VW;
        LUTHIER__VLOADP(z, g + i, n, 0.0f);
        LUTHIER__VLOADP(r, g + H + i, n, 0.0f);
        LUTHIER__VLOADP(hp, h + i, n, 0.0f);
        LUTHIER__VN(luthier__v_rnn_act)(j, &z, 1);
        LUTHIER__VN(luthier__v_rnn_act)(j, &r, 1);
        LUTHIER__VSTOREP(g + i, z, n);
        r = r * hp;
        LUTHIER__VSTOREP(rh + i, r, n);
    }
}

/* GRU: the new state from z (activated) and the candidate's pre-activation hc:
   h = (1 - z) tanh(hc) + z h. lbr: hc = g_h + r (t_h + Rb_h), z and r from g + t. */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rnn_gru_h_row)(const luthier__op_rnn_job *j, size_t b, int lbr) {
    const size_t H = j->hidden;
    const float *g = j->g + b * j->gs, *t = lbr ? j->t + b * j->ts : NULL;
    float *h = j->h + b * H, *y = j->y + b * j->ys;
    LUTHIER__VF z, r, hc, hp, tv, rb, one;
    size_t i, n;
    LUTHIER__VSPLAT(one, 1.0f);
    for (i = 0; i < H; i += n) {
        n = H - i < (size_t)LUTHIER__VW ? H - i : (size_t)LUTHIER__VW;
        LUTHIER__VLOADP(z, g + i, n, 0.0f);
        LUTHIER__VLOADP(hc, g + 2 * H + i, n, 0.0f);
        LUTHIER__VLOADP(hp, h + i, n, 0.0f);
        if (lbr) {
            LUTHIER__VLOADP(tv, t + i, n, 0.0f);
            z = z + tv;
            LUTHIER__VN(luthier__v_rnn_act)(j, &z, 1);
            LUTHIER__VLOADP(r, g + H + i, n, 0.0f);
            LUTHIER__VLOADP(tv, t + H + i, n, 0.0f);
            r = r + tv;
            LUTHIER__VN(luthier__v_rnn_act)(j, &r, 1);
            LUTHIER__VLOADP(tv, t + 2 * H + i, n, 0.0f);
            LUTHIER__VLOADP(rb, j->rbh + i, n, 0.0f);
            hc = hc + r * (tv + rb);
        }
        LUTHIER__VN(luthier__v_rnn_act)(j, &hc, 0);
        hp = (one - z) * hc + z * hp;
        LUTHIER__VSTOREP(h + i, hp, n);
        LUTHIER__VSTOREP(y + i, hp, n);
    }
}

/* RNN: h = tanh(g) */
LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rnn_plain_row)(const luthier__op_rnn_job *j, size_t b) {
    const size_t H = j->hidden;
    const float *g = j->g + b * j->gs;
    float *h = j->h + b * H, *y = j->y + b * j->ys;
    LUTHIER__VF v;
    size_t i, n;
    for (i = 0; i < H; i += n) {
        n = H - i < (size_t)LUTHIER__VW ? H - i : (size_t)LUTHIER__VW;
        LUTHIER__VLOADP(v, g + i, n, 0.0f);
        LUTHIER__VN(luthier__v_rnn_act)(j, &v, 0);
        LUTHIER__VSTOREP(h + i, v, n);
        LUTHIER__VSTOREP(y + i, v, n);
    }
}

LUTHIER__KT LUTHIER__INLINE void LUTHIER__VN(luthier__op_rnn_impl)(void *arg, size_t ub, size_t ue, int thread) {
    const luthier__op_rnn_job *j = (const luthier__op_rnn_job *)arg;
    size_t b;
    (void)thread;
    for (b = ub; b < ue; b++) {
        switch (j->kind) {
        case LUTHIER__RNN_CELL_LSTM: LUTHIER__VN(luthier__op_rnn_lstm_row)(j, b); break;
        case LUTHIER__RNN_CELL_GRU_ZR: LUTHIER__VN(luthier__op_rnn_gru_zr_row)(j, b); break;
        case LUTHIER__RNN_CELL_GRU_H: LUTHIER__VN(luthier__op_rnn_gru_h_row)(j, b, 0); break;
        case LUTHIER__RNN_CELL_GRU_LBR: LUTHIER__VN(luthier__op_rnn_gru_h_row)(j, b, 1); break;
        default: LUTHIER__VN(luthier__op_rnn_plain_row)(j, b); break;
        }
    }
}
LUTHIER__OP_RANGE(luthier__op_rnn)


/* end of the pass */
#undef LUTHIER__VSFX
#undef LUTHIER__KT
#undef LUTHIER__VBYTES
#undef LUTHIER__VF
#undef LUTHIER__VI
#undef LUTHIER__VD
#undef LUTHIER__VTOD
#undef LUTHIER__VTOF
#undef LUTHIER__VTOI
#undef LUTHIER__VITOF
#undef LUTHIER__VACC
#undef LUTHIER__VW
#undef LUTHIER__VBITS
#undef LUTHIER__VFLOAT
#undef LUTHIER__VSEL
#undef LUTHIER__VLOAD
#undef LUTHIER__VSTORE
#undef LUTHIER__VSPLAT
#undef LUTHIER__VLANE
#undef LUTHIER__VMASK1
#undef LUTHIER__VLOADN
#undef LUTHIER__VSTOREN
#undef LUTHIER__VLOADP
#undef LUTHIER__VSTOREP
#undef LUTHIER__VSTREAM
#undef LUTHIER__VFENCE
#undef LUTHIER__VSTORE_NT
#undef LUTHIER__VCLAMP
#undef LUTHIER__OP_UNARY_LOOP
#undef LUTHIER__OP_BIN_LOOP
#undef LUTHIER__VLOADH
#undef LUTHIER__VSTOREH
#undef LUTHIER__VLOADHN
#undef LUTHIER__VSTOREHN
#undef LUTHIER__OP_UNARY_ST
#undef LUTHIER__OP_UNARY_LDN
#undef LUTHIER__OP_BIN_H16_LD
#undef LUTHIER__OP_BIN_H16_LOOP
#undef LUTHIER__OP_RANGE

#elif defined(LUTHIER_IMPLEMENTATION) && !defined(LUTHIER__OPS_IMPL_DONE)
#define LUTHIER__OPS_IMPL_DONE

#ifdef __cplusplus
extern "C" {
#endif

/* >>ops-common: how a step is split over the clusters (the workload knob of non-conv ops). */
typedef struct luthier__op_cfg {
    luthier_schedule schedule;
    const float *ratios; /* NULL = default weights */
    int num_ratios;
} luthier__op_cfg;

/* Elements of streaming work per parallel unit: small tensors run as one unit (no wake-up of
   the workers), large ones in chunks of 64 KiB. */
#define LUTHIER__OP_GRAIN ((size_t)16384)

/* Runs fn over [0, units) with cfg's schedule/ratios. One unit runs in the caller (ratios are
   still validated so that a bad cfg fails the same way whatever the size). */
LUTHIER_PRIVATE luthier_status luthier__op_run(luthier_context *ctx, const luthier__op_cfg *cfg,
                                               size_t units, luthier_range_fn fn, void *arg) {
    const luthier_schedule sched = cfg ? cfg->schedule : LUTHIER_SCHEDULE_RATIO;
    const float *ratios = cfg ? cfg->ratios : NULL;
    const int nr = cfg ? cfg->num_ratios : 0;
    if (units <= 1 || ctx->pool->num_threads <= 1) {
        double w[LUTHIER_MAX_CLUSTERS];
        luthier_status s;
        if ((unsigned)sched >= (unsigned)LUTHIER_SCHEDULE_COUNT)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unknown schedule %d", (int)sched);
        if ((s = luthier__weights(ctx, ratios, nr, w)) != LUTHIER_STATUS_OK) return s;
        if (units) fn(arg, 0, units, 0, 0);
        return LUTHIER_STATUS_OK;
    }
    return luthier__parallel(ctx, units, sched, ratios, nr, 0, fn, arg);
}

/* Work of `rows` rows of `len` elements in units: several whole rows per unit (rpu) when rows
   are short, else one chunk of `chunk` elements (a multiple of 64) of one row per unit. */
typedef struct luthier__op_part {
    size_t rows, len, rpu, cpr, chunk;
} luthier__op_part;

LUTHIER_PRIVATE size_t luthier__op_part_init(luthier__op_part *p, size_t rows, size_t len, size_t grain) {
    p->rows = rows;
    p->len = len;
    if (len <= grain) {
        p->rpu = luthier__max_sz(1, grain / luthier__max_sz(1, len));
        p->cpr = 1;
        p->chunk = len;
        return luthier__div_up(rows, p->rpu);
    }
    p->rpu = 0;
    p->chunk = luthier__max_sz(64, grain / 64 * 64);
    p->cpr = luthier__div_up(len, p->chunk);
    return rows * p->cpr;
}

/* Unit u: rows [*r0, *r1), elements [*from, *to) of each. */
LUTHIER__INLINE void luthier__op_part_unit(const luthier__op_part *p, size_t u, size_t *r0, size_t *r1,
                                           size_t *from, size_t *to) {
    if (p->rpu) {
        *r0 = u * p->rpu;
        *r1 = luthier__min_sz(p->rows, *r0 + p->rpu);
        *from = 0;
        *to = p->len;
    } else {
        const size_t c = u % p->cpr;
        *r0 = u / p->cpr;
        *r1 = *r0 + 1;
        *from = c * p->chunk;
        *to = luthier__min_sz(p->len, *from + p->chunk);
    }
}

/* The offsets off[o] of index `row` over dims dim[0 .. m) (mixed radix, the last fastest) in
   nops operands of strides st[o]; dim `skip` is left out (-1: none). */
LUTHIER__INLINE void luthier__op_unravel(size_t row, int m, const size_t *dim, int skip, int nops, const size_t *const *st,
                                         size_t *off) {
    int d, o;
    for (o = 0; o < nops; o++) off[o] = 0;
    for (d = m - 1; d >= 0; d--) {
        size_t id;
        if (d == skip) continue;
        id = row % dim[d];
        row /= dim[d];
        for (o = 0; o < nops; o++) off[o] += id * st[o][d];
    }
}

/* Kernel passes: the vector kernels below ">>ops-simd" are compiled once per ISA by including
   this file again with LUTHIER__OPS_PASS = 1 (baseline), 2 (AVX2), 3 (AVX-512); every name
   of a pass gets the pass's suffix through LUTHIER__VN. */
#define LUTHIER__VN(name) LUTHIER__VN2_(name, LUTHIER__VSFX)
#define LUTHIER__VN2_(name, sfx) LUTHIER__VN3_(name, sfx)
#define LUTHIER__VN3_(name, sfx) name##sfx
#if LUTHIER__SIMD_X86
#define LUTHIER__OP_PICK_FOR(features, name)                                                     \
    (((features) & LUTHIER_CPU_AVX512F)    ? name##_avx512                                       \
     : ((features) & LUTHIER_CPU_AVX2_FMA) ? name##_avx2                                         \
                                           : name##_base)
#else
#define LUTHIER__OP_PICK_FOR(features, name) ((void)(features), name##_base)
#endif
#define LUTHIER__OP_PICK(ctx, name) LUTHIER__OP_PICK_FOR((ctx)->cpu_features, name)
LUTHIER__INLINE int32_t luthier__op_f2i(float f) { int32_t i; memcpy(&i, &f, sizeof i); return i; }
LUTHIER__INLINE float luthier__op_i2f(int32_t i) { float f; memcpy(&f, &i, sizeof f); return f; }

/* >>ops-unary ================================================================================ */

typedef enum luthier__unary {
    LUTHIER__UNARY_RELU,
    LUTHIER__UNARY_CLIP, /* min(max(x, a), b) */
    LUTHIER__UNARY_GELU_ERF, /* 0.5 x (1 + erf(x / sqrt2)), PyTorch default */
    LUTHIER__UNARY_GELU_TANH,
    LUTHIER__UNARY_SIGMOID,
    LUTHIER__UNARY_TANH,
    LUTHIER__UNARY_EXP,
    LUTHIER__UNARY_ERF,
    LUTHIER__UNARY_SQRT,
    LUTHIER__UNARY_NEG,
    LUTHIER__UNARY_ABS,
    LUTHIER__UNARY_RECIPROCAL,
    LUTHIER__UNARY_AFFINE, /* x * a + b */
    LUTHIER__UNARY_LEAKY_RELU, /* x < 0 ? a x : x */
    LUTHIER__UNARY_ELU, /* x > 0 ? b x : a b (exp(x) - 1): elu (b = 1), selu (a = alpha, b = gamma) */
    LUTHIER__UNARY_CELU, /* x > 0 ? x : a (exp(x / a) - 1) */
    LUTHIER__UNARY_HARD_SIGMOID, /* clamp(a x + b, 0, 1) */
    LUTHIER__UNARY_HARD_SWISH, /* x clamp(x + 3, 0, 6) / 6 */
    LUTHIER__UNARY_SOFTPLUS, /* log(1 + exp(x)) */
    LUTHIER__UNARY_SOFTSIGN, /* x / (1 + |x|) */
    LUTHIER__UNARY_MISH, /* x tanh(softplus(x)) */
    LUTHIER__UNARY_THRESHOLDED_RELU, /* x > a ? x : 0 (NaN stays NaN) */
    LUTHIER__UNARY_LOG, /* natural log, subnormals included */
    LUTHIER__UNARY_FLOOR, /* floorf, exact */
    LUTHIER__UNARY_CEIL, /* ceilf, exact */
    LUTHIER__UNARY_ROUND, /* nearbyintf: half to even, exact */
    LUTHIER__UNARY_SILU, /* x sigmoid(x) */
    LUTHIER__UNARY_NOT, /* x == 0 ? 1 : 0 (booleans are 0/1 floats; NaN is true) */
    LUTHIER__UNARY_COUNT
} luthier__unary;

/* every kind, for the switches that run one straight-line loop per kind (a constant in each
   case) */
#define LUTHIER__UNARY_KINDS(X) X(RELU) X(CLIP) X(GELU_ERF) X(GELU_TANH) X(SIGMOID) X(TANH)     \
    X(EXP) X(ERF) X(SQRT) X(NEG) X(ABS) X(RECIPROCAL) X(AFFINE) X(LEAKY_RELU) X(ELU) X(CELU)    \
    X(HARD_SIGMOID) X(HARD_SWISH) X(SOFTPLUS) X(SOFTSIGN) X(MISH) X(THRESHOLDED_RELU) X(LOG)    \
    X(FLOOR) X(CEIL) X(ROUND) X(SILU) X(NOT)

typedef struct luthier__op_unary_job {
    luthier__unary kind;
    float a, b;
    const float *x;
    float *y;
    size_t n;
    int stream; /* streaming stores (luthier__op_stream) */
} luthier__op_unary_job;

/* >>ops-binary =============================================================================== */

/* The f32 binary kinds, one row each: X(NAME, the kernel's statement: r from the vectors va and
   vb; one and zero are splats). Comparisons and logic give 0/1 floats (booleans; any nonzero
   operand is true, NaN too); a comparison with NaN is false; EQUAL .. MOD in the order of
   LUTHIER_OP_EQUAL .. LUTHIER_OP_MOD. POW is powf within 1 ulp (special values as powf; one
   exponent for every element takes luthier__op_binary_job.pow_special first); MOD is floored
   (Python: the sign of b), FMOD C fmod (the sign of a), both exact (fmodf); b = 0 gives NaN
   (i64: 0). */
#define LUTHIER__BINARY_LIST(X)                                                                  \
    X(ADD, r = va + vb)                                                                          \
    X(SUB, r = va - vb)                                                                          \
    X(MUL, r = va * vb)                                                                          \
    X(DIV, r = va / vb)                                                                          \
    X(POW, LUTHIER__VN(luthier__v_pow)(&va, &vb, &r))                                            \
    X(MAX, r = LUTHIER__VSEL((va > vb) | (va != va), va, vb))                                    \
    X(MIN, r = LUTHIER__VSEL((va < vb) | (va != va), va, vb))                                    \
    X(PRELU, r = LUTHIER__VSEL(va < 0.0f, va * vb, va)) /* a < 0 ? a b : a (b: the slope) */     \
    X(EQUAL, r = LUTHIER__VSEL(va == vb, one, zero))                                             \
    X(GREATER, r = LUTHIER__VSEL(va > vb, one, zero))                                            \
    X(LESS, r = LUTHIER__VSEL(va < vb, one, zero))                                               \
    X(GREATER_EQUAL, r = LUTHIER__VSEL(va >= vb, one, zero))                                     \
    X(LESS_EQUAL, r = LUTHIER__VSEL(va <= vb, one, zero))                                        \
    X(AND, r = LUTHIER__VSEL((va != zero) & (vb != zero), one, zero))                            \
    X(OR, r = LUTHIER__VSEL((va != zero) | (vb != zero), one, zero))                             \
    X(XOR, r = LUTHIER__VSEL((va != zero) ^ (vb != zero), one, zero))                            \
    X(MOD, LUTHIER__VN(luthier__v_mod)(&va, &vb, 1, &r))                                         \
    X(FMOD, LUTHIER__VN(luthier__v_mod)(&va, &vb, 0, &r))

typedef enum luthier__binary {
#define LUTHIER__X(name, stmt) LUTHIER__BINARY_##name,
    LUTHIER__BINARY_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER__BINARY_COUNT
} luthier__binary;

#define LUTHIER__OP_MAX_RANK 6

typedef struct luthier__op_binary_job {
    luthier__binary kind;
    const float *a, *b;
    float *y;
    const int64_t *ai, *bi; /* i64 operands (a, b NULL): comparisons give floats in y, MOD / FMOD i64 in yi */
    int64_t *yi;
    int m;                                    /* collapsed rank (>= 1) */
    size_t dim[LUTHIER__OP_MAX_RANK];         /* collapsed y dims, outer..inner */
    size_t sa[LUTHIER__OP_MAX_RANK], sb[LUTHIER__OP_MAX_RANK]; /* element strides (0 = broadcast) */
    int clamp;
    float lo, hi;
    int stream;    /* streaming stores (luthier__op_stream) */
    float pow_exp; /* scalar exponent of POW when b is a scalar */
    int pow_special; /* 0 generic, 1: x*x, 2: x*x*x, 3: sqrt (+0 for -0, +inf for -inf), 4: x, 5: 1/x,
                        6: another integer in [-16, 16] but 0 (luthier__v_powi) */
    luthier__op_part part;
} luthier__op_binary_job;

/* ONNX Mod on floats: fmodf (C fmod, the sign of a), or floored (Python %, the sign of b:
   fmodf's result plus b when their signs differ). b = 0 and a = +-inf give NaN; floored with
   b = +-inf and a of the other sign gives b (as Python's math). */
LUTHIER__INLINE float luthier__op_fmod(float a, float b, int floored) {
    float r = fmodf(a, b);
    if (floored && r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
    return r;
}

/* Integer Mod without undefined behaviour: b = 0 gives 0, INT64_MIN % -1 gives 0. */
LUTHIER__INLINE int64_t luthier__op_imod(int64_t a, int64_t b, int floored) {
    int64_t r;
    if (b == 0 || b == -1) return 0;
    r = a % b;
    if (floored && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* One run of the i64 form of luthier__op_binary (plain C: the shape path's integers are few):
   len elements at output offset yo, a and b stepping by ia / ib (0 or 1). */
#define LUTHIER__OP_I64_LOOP(EXPR)                                                               \
    for (i = 0; i < len; i++) {                                                                  \
        const int64_t u = a[ia ? i : 0], v = b[ib ? i : 0];                                      \
        EXPR;                                                                                    \
    }                                                                                            \
    break;
LUTHIER__INLINE void luthier__op_binary_i64_run(const luthier__op_binary_job *j, const int64_t *a, int ia, const int64_t *b,
                                            int ib, size_t yo, size_t len) {
    float *y = j->y ? j->y + yo : NULL;
    int64_t *yi = j->yi ? j->yi + yo : NULL;
    size_t i;
    switch (j->kind) {
    case LUTHIER__BINARY_EQUAL: LUTHIER__OP_I64_LOOP(y[i] = u == v ? 1.0f : 0.0f)
    case LUTHIER__BINARY_GREATER: LUTHIER__OP_I64_LOOP(y[i] = u > v ? 1.0f : 0.0f)
    case LUTHIER__BINARY_LESS: LUTHIER__OP_I64_LOOP(y[i] = u < v ? 1.0f : 0.0f)
    case LUTHIER__BINARY_GREATER_EQUAL: LUTHIER__OP_I64_LOOP(y[i] = u >= v ? 1.0f : 0.0f)
    case LUTHIER__BINARY_LESS_EQUAL: LUTHIER__OP_I64_LOOP(y[i] = u <= v ? 1.0f : 0.0f)
    case LUTHIER__BINARY_MOD: LUTHIER__OP_I64_LOOP(yi[i] = luthier__op_imod(u, v, 1))
    case LUTHIER__BINARY_FMOD: LUTHIER__OP_I64_LOOP(yi[i] = luthier__op_imod(u, v, 0))
    default: break;
    }
}
#undef LUTHIER__OP_I64_LOOP

/* The offsets in a and b of row `row` of the output (its index over the collapsed dims but the
   last, mixed radix). */
LUTHIER__INLINE void luthier__op_binary_row(const luthier__op_binary_job *j, size_t row, size_t *oa, size_t *ob) {
    size_t rest = row;
    int d;
    *oa = *ob = 0;
    for (d = j->m - 2; d >= 0; d--) {
        const size_t id = rest % j->dim[d];
        rest /= j->dim[d];
        *oa += id * j->sa[d];
        *ob += id * j->sb[d];
    }
}

/* >>ops-f16-elt: the unary and binary operators on fp16 activations (fp16 in, fp16 out; a
   binary operand may be fp32: a constant, an fp32 activation), the element-wise steps of
   fp16-activation plans (luthier__run_unary, luthier__run_binary). The passes' form runs the
   fp32 code one vector at a time on halves widened in registers (NEON FCVTL, F16C / AVX-512
   vcvtph2ps; lane by lane in plain C where neither exists) and narrows each result vector
   (FCVTN, vcvtps2ph: round to nearest even), so an element gets the fp32 pass's value rounded
   once to fp16 and no fp32 copy of the tensor exists. With Armv8.2 FP16 arithmetic (HWCAP
   ASIMDHP) the kinds whose fp16 arithmetic is exact or correctly rounded run in fp16 lanes
   (luthier__op_h16_native: ReLU, clip; add, sub, mul, max, min of two fp16 operands, with the
   fused clamp): 8 elements per instruction, the result the exact one rounded once (the fp32
   pass rounds an add twice, to fp32 then to fp16). Units as the fp32 operators'. */
typedef void (*luthier__op_bin_h16_fn)(const luthier__op_binary_job *j, const uint16_t *a, int ia, const uint16_t *b, int ib,
                                      uint16_t *y, size_t len);
typedef struct luthier__op_unary_h16_job {
    luthier__unary kind;
    float a, b;
    const uint16_t *x;
    uint16_t *y;
    size_t n;
} luthier__op_unary_h16_job;

typedef struct luthier__op_binary_h16_job {
    luthier__op_binary_job j; /* the kind, broadcast, clamp and split (j.a, j.b, j.y unused) */
    const void *a, *b;        /* fp16 where ha / hb, else fp32 */
    int ha, hb;
    uint16_t *y;
    luthier__op_bin_h16_fn native; /* fp16 lanes (both operands fp16), or NULL */
} luthier__op_binary_h16_job;

/* >>ops-where: out = cond != 0 ? x : y with three-way numpy broadcasting; x and y f32 (vector
   code) or i64 (plain C). Strides in elements, 0 where broadcast. */
typedef struct luthier__op_where_job {
    const float *c;
    const float *x, *y; /* f32 */
    float *o;
    const int64_t *xi, *yi; /* i64 (x, y NULL) */
    int64_t *oi;
    int m;
    size_t dim[LUTHIER__OP_MAX_RANK], sc[LUTHIER__OP_MAX_RANK], sx[LUTHIER__OP_MAX_RANK], sy[LUTHIER__OP_MAX_RANK];
    luthier__op_part part;
} luthier__op_where_job;

/* >>ops-cast: element types converted (luthier_graph.h, CAST). Sources: f32, i64, i32, bool
   (one byte, nonzero true). Targets: */
typedef enum luthier__cast {
    LUTHIER__CAST_F32,  /* f32 */
    LUTHIER__CAST_I64,  /* i64: floats truncate toward zero, NaN 0, saturating at the i64 range */
    LUTHIER__CAST_BOOL, /* f32 0/1: x != 0 (NaN is true) */
    LUTHIER__CAST_F16,  /* f32 rounded to the nearest half (ties to even; overflow +-inf, NaN kept) */
    LUTHIER__CAST_I32,  /* i64 in the int32 range: floats truncate (NaN 0) and saturate, integers wrap modulo 2^32 */
    LUTHIER__CAST_COUNT
} luthier__cast;

typedef struct luthier__op_cast_job {
    int src; /* 0 f32, 1 i64, 2 i32, 3 bool */
    luthier__cast to;
    const void *x;
    void *y; /* float * or int64_t * by `to` */
    size_t n;
} luthier__op_cast_job;

/* float -> integer of the range [lo, -lo - 1] (lo = INT64_MIN or INT32_MIN): truncation toward
   zero, NaN 0, saturated outside (no undefined conversion). */
LUTHIER__INLINE int64_t luthier__op_f2i_sat(float f, int64_t lo) {
    if (f != f) return 0;
    if ((double)f >= -(double)lo) return -(lo + 1);
    if ((double)f <= (double)lo) return lo;
    return (int64_t)f;
}

/* int64 -> int32 modulo 2^32 (two's complement), without an implementation-defined conversion. */
LUTHIER__INLINE int64_t luthier__op_wrap32(int64_t v) {
    const uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu);
    return u >= 0x80000000u ? (int64_t)u - (int64_t)4294967296 : (int64_t)u;
}

/* >>ops-pool ================================================================================= */

/* A 2-D pool on NHWC: fp32, uint8 or fp16 (x, y of that type) */
typedef struct luthier__op_pool_job {
    const void *x;
    void *y;
    size_t n, h, w, c, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
    int is_max, include_pad;
    uint8_t zero; /* uint8: the real value 0 */
    size_t rpu;   /* output rows per unit */
} luthier__op_pool_job;

/* Fills j with the arguments of the pool entry points (strides and dilations of 0 read as 1;
   is_max, include_pad and zero 0) and returns its units of rpu output rows: 0 when the output
   is empty. */
LUTHIER_PRIVATE size_t luthier__op_pool_set(luthier__op_pool_job *j, const void *x, size_t n, size_t h, size_t w,
                                            size_t c, size_t kh, size_t kw, size_t sh, size_t sw, size_t dh,
                                            size_t dw, size_t pt, size_t pl, size_t pb, size_t pr, void *y,
                                            size_t oh, size_t ow) {
    memset(j, 0, sizeof *j);
    j->x = x;
    j->y = y;
    j->n = n;
    j->h = h;
    j->w = w;
    j->c = c;
    j->kh = kh;
    j->kw = kw;
    j->sh = sh ? sh : 1;
    j->sw = sw ? sw : 1;
    j->dh = dh ? dh : 1;
    j->dw = dw ? dw : 1;
    j->pt = pt;
    j->pl = pl;
    j->pb = pb;
    j->pr = pr;
    j->oh = oh;
    j->ow = ow;
    j->rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, ow * c * kh * kw));
    return !n || !oh || !ow || !c ? 0 : luthier__div_up(n * oh, j->rpu);
}

/* Taps of one axis: first tap index *i0 and count *cnt inside [0, size); *padded = taps inside
   [-pad_lo, size + pad_hi). */
LUTHIER__INLINE void luthier__op_pool_axis(size_t o, size_t stride, size_t pad_lo, size_t pad_hi, size_t dil,
                                           size_t k, size_t size, size_t *i0, size_t *cnt, size_t *padded) {
    const ptrdiff_t start = (ptrdiff_t)(o * stride) - (ptrdiff_t)pad_lo;
    size_t i, first = k, n = 0, np = 0;
    for (i = 0; i < k; i++) {
        const ptrdiff_t p = start + (ptrdiff_t)(i * dil);
        if (p >= -(ptrdiff_t)pad_lo && p < (ptrdiff_t)(size + pad_hi)) np++;
        if (p >= 0 && p < (ptrdiff_t)size) {
            if (first == k) first = i;
            n++;
        }
    }
    *i0 = first == k ? 0 : first;
    *cnt = n;
    *padded = np;
}

/* adaptive average pooling: units are (output pixel, channel chunk) items */
#define LUTHIER__OP_APOOL_CB ((size_t)256)
typedef struct luthier__op_apool_job {
    const void *x; /* fp32 or uint8 */
    void *y;
    size_t n, h, w, c, oh, ow, chunks, ipu, items;
} luthier__op_apool_job;

/* Fills j and returns its units of ipu items (0 when the output or the input is empty). */
LUTHIER_PRIVATE size_t luthier__op_apool_set(luthier__op_apool_job *j, const void *x, size_t n, size_t h, size_t w,
                                             size_t c, void *y, size_t oh, size_t ow) {
    size_t bin;
    j->x = x;
    j->y = y;
    j->n = n;
    j->h = h;
    j->w = w;
    j->c = c;
    j->oh = oh;
    j->ow = ow;
    j->chunks = luthier__div_up(c, LUTHIER__OP_APOOL_CB);
    j->items = n * oh * ow * j->chunks;
    j->ipu = 1;
    if (!j->items || !h || !w) return 0;
    bin = luthier__div_up(h, oh) * luthier__div_up(w, ow) + 1; /* largest bin (+1: ceil) */
    j->ipu = luthier__max_sz(1, LUTHIER__OP_GRAIN / (bin * luthier__min_sz(c, LUTHIER__OP_APOOL_CB)));
    return luthier__div_up(j->items, j->ipu);
}

/* One pool window (every pool: fp32, uint8, fp16): taps at rows y0 + i*dy (i < ny), columns
   x0 + k*dx (k < nx) of the image at img (all inside), c channels a pixel; a mean divides by cnt
   its sum started at pad (uint8: the padded taps times the zero point). */
typedef struct luthier__op_win {
    const void *img; /* image base (+ the first channel) */
    size_t w, c, y0, ny, dy, x0, nx, dx;
    uint64_t pad, cnt;
} luthier__op_win;

/* Output row `row` (b * oh + oy) of pool j: the window's rows into q (img: image b, elements of
   esz bytes); *npy: its rows inside the padded input. */
LUTHIER__INLINE void luthier__op_pool_rows(const luthier__op_pool_job *j, size_t row, size_t esz, luthier__op_win *q,
                                           size_t *npy) {
    const size_t oy = row % j->oh;
    size_t iy0;
    luthier__op_pool_axis(oy, j->sh, j->pt, j->pb, j->dh, j->kh, j->h, &iy0, &q->ny, npy);
    q->img = (const char *)j->x + row / j->oh * j->h * j->w * j->c * esz;
    q->w = j->w;
    q->c = j->c;
    q->y0 = oy * j->sh + iy0 * j->dh - j->pt;
    q->dy = j->dh;
}

/* Output column ox of that row: the window's columns into q, its divisor cnt (include_pad: the
   taps inside the padded input, of npy rows) and pad. */
LUTHIER__INLINE void luthier__op_pool_cols(const luthier__op_pool_job *j, size_t ox, size_t npy, luthier__op_win *q) {
    size_t ix0, npx;
    luthier__op_pool_axis(ox, j->sw, j->pl, j->pr, j->dw, j->kw, j->w, &ix0, &q->nx, &npx);
    q->x0 = ox * j->sw + ix0 * j->dw - j->pl;
    q->dx = j->dw;
    q->cnt = j->include_pad ? npy * npx : q->ny * q->nx;
    q->pad = (q->cnt - q->ny * q->nx) * j->zero; /* (0 unless include_pad) */
}

/* Item `it` of adaptive pool j (bin i spans [floor(i*H/OH), ceil((i+1)*H/OH))): its window over
   channels [c0, c0 + *cn) into q (img from channel c0, elements of esz bytes); returns the
   output's element offset pix * c + c0. */
LUTHIER__INLINE size_t luthier__op_apool_win(const luthier__op_apool_job *j, size_t it, size_t esz, luthier__op_win *q,
                                             size_t *cn) {
    const size_t pix = it / j->chunks, c0 = it % j->chunks * LUTHIER__OP_APOOL_CB;
    const size_t b = pix / (j->oh * j->ow), oy = pix / j->ow % j->oh, ox = pix % j->ow;
    q->img = (const char *)j->x + (b * j->h * j->w * j->c + c0) * esz;
    q->w = j->w;
    q->c = j->c;
    q->y0 = oy * j->h / j->oh;
    q->ny = ((oy + 1) * j->h + j->oh - 1) / j->oh - q->y0;
    q->dy = 1;
    q->x0 = ox * j->w / j->ow;
    q->nx = ((ox + 1) * j->w + j->ow - 1) / j->ow - q->x0;
    q->dx = 1;
    q->pad = 0;
    q->cnt = q->ny * q->nx;
    *cn = luthier__min_sz(LUTHIER__OP_APOOL_CB, j->c - c0);
    return pix * j->c + c0;
}

/* >>ops-norm ================================================================================= */

typedef struct luthier__op_affine_job {
    const float *x;
    float *y;
    const float *scale, *shift;
    size_t c, inner;
    int clamp;
    float lo, hi;
    luthier__op_part part;
} luthier__op_affine_job;

typedef struct luthier__op_ln_job {
    const float *x;
    float *y;
    const float *gamma, *beta;
    size_t rows, cols, rpu;
    float eps;
} luthier__op_ln_job;

typedef struct luthier__op_lrn_job {
    const float *x;
    float *y;
    size_t pixels, c, lo, hi, ppu; /* window [ch - lo, ch + hi] */
    float k, bias, beta;
} luthier__op_lrn_job;

/* >>ops-softmax ============================================================================== */

typedef struct luthier__op_softmax_job {
    const float *x;
    float *y;
    size_t outer, len, inner, ipu, items, chunks;
    int log;
} luthier__op_softmax_job;

#define LUTHIER__OP_SOFTMAX_CB ((size_t)256) /* columns per item when inner > 1 */

/* >>ops-attention ============================================================================

   Two paths, chosen by the shapes only (never by the split):
   - rows path (sq >= 8, d <= 256, GCC/Clang): a block of 16 query rows is transposed on the
     stack (qT[d][16]); scores S^T[key][16 rows] = sum_t k[key][t] * qT[t] use one vector per
     4 keys; the softmax runs across keys with the 16 rows in the lanes; P V broadcasts each
     probability against 4 vectors of v's row. Scratch: 16 x skv per thread.
   - dot path (decode, sq < 8): per query row, vector dot products along d, a contiguous
     softmax over the keys, P V as above. Scratch: skv per thread. */
#define LUTHIER__OP_ATT_ROWS_MIN 8
#define LUTHIER__OP_ATT_DMAX 256
#define LUTHIER__OP_ATT_MAXW 16 /* most lanes of any pass */

LUTHIER__UNUSED LUTHIER_PRIVATE size_t luthier__op_attention_scratch_floats(int threads, size_t sq, size_t skv) {
    const size_t per = sq >= LUTHIER__OP_ATT_ROWS_MIN ? (size_t)LUTHIER__OP_ATT_MAXW * skv : skv;
    return (size_t)(threads > 0 ? threads : 1) * per;
}

typedef struct luthier__op_att_job {
    const float *q, *k, *v;
    float *y, *scratch;
    size_t bh, sq, skv, d, dv, stride, blocks, rpu;
    float scale;
    int causal, rows_path;
} luthier__op_att_job;

/* keys query i may see */
LUTHIER__INLINE size_t luthier__op_att_nk(const luthier__op_att_job *j, size_t i) {
    ptrdiff_t n;
    if (!j->causal) return j->skv;
    n = (ptrdiff_t)i + (ptrdiff_t)j->skv - (ptrdiff_t)j->sq + 1;
    return n <= 0 ? 0 : (size_t)n < j->skv ? (size_t)n : j->skv;
}

/* >>ops-resize: interpolation over two axes of [outer][h][w][inner] (NCHW: outer = N*C, inner = 1;
   NHWC: outer = N, inner = C). Output index o of an axis reads `taps` input indices idx[o * taps
   + t] with weights wt[o * taps + t], made once at plan time (luthier__op_resize_axis). */
typedef struct luthier__op_rs_plan {
    size_t h, w, oh, ow;
    int taps;            /* per axis: 1 nearest, 2 linear, 4 cubic */
    size_t rep;          /* nearest: output column ox reads ox / rep (an integer upsampling); 0: no */
    size_t *hidx, *widx; /* [oh * taps], [ow * taps] */
    float *hwt, *wwt;
} luthier__op_rs_plan;

typedef struct luthier__op_rs_job {
    const luthier__op_rs_plan *rp;
    const float *x;
    float *y;
    size_t outer, inner, rpu; /* rpu: output rows per unit */
} luthier__op_rs_job;

/* >>ops-pad: rows of the output (every axis but the last) map to input rows or to the value. */
typedef struct luthier__op_pad_job {
    const float *x;
    float *y;
    int rank, mode;
    float value;
    size_t in[LUTHIER__OP_MAX_RANK], out[LUTHIER__OP_MAX_RANK];
    ptrdiff_t begin[LUTHIER__OP_MAX_RANK];
    size_t rows, rpu;
} luthier__op_pad_job;

/* >>ops-col2im: the scatter half of a transposed convolution on NHWC (GEMM + col2im), written
   as a gather: output pixel (b, oy, ox) adds column (ky, kx) of input pixel (b, iy, ix) where
   oy = iy * sh - pt + ky * dh and ox = ix * sw - pl + kx * dw. */
typedef struct luthier__op_col2im_job {
    const float *cols; /* input rows [r0, r1) (row = b * h + iy): [row][w][groups][kh][kw][cg] */
    const float *x;    /* or, depthwise (groups = c, cg = 1): the input [n][h][w][c] and ... */
    const float *wt;   /* ... the weights [kh][kw][c], each tap's product made here */
    const float *bias; /* NULL or c values */
    float *y;          /* [n][oh][ow][c], c = groups * cg */
    size_t n, h, w, c, groups, cg, kh, kw, sh, sw, dh, dw, oh, ow;
    ptrdiff_t pt, pl;
    size_t r0, r1;
    int first;         /* the first chunk (it also writes the rows no input row reaches) */
    int clamp;
    float lo, hi;
    size_t rpu;        /* output rows per unit (set by luthier__op_col2im_nhwc) */
} luthier__op_col2im_job;

/* >>ops-rnn: one time step of a recurrent layer after its GEMMs, one unit per batch row b.
   g's rows hold the gates' pre-activations (x W^T + biases, plus h R^T accumulated by the
   GEMMs); h (and c) the states, updated in place; y the output rows. */
typedef enum luthier__rnn_cell {
    LUTHIER__RNN_CELL_LSTM,    /* g: i, o, f, c (p: peepholes i, o, f or NULL; input_forget) */
    LUTHIER__RNN_CELL_GRU_ZR,  /* g: z, r complete: z = sigmoid(z) in place, rh = sigmoid(r) h */
    LUTHIER__RNN_CELL_GRU_H,   /* g: z (activated), h complete: h = (1 - z) tanh(g_h) + z h */
    LUTHIER__RNN_CELL_GRU_LBR, /* linear_before_reset: g: z, r, h without h R^T, which is in t */
    LUTHIER__RNN_CELL_RNN      /* h = tanh(g) */
} luthier__rnn_cell;

typedef struct luthier__op_rnn_job {
    int kind, has_clip, input_forget; /* kind: luthier__rnn_cell */
    float clip;                       /* has_clip: pre-activations clamped to [-clip, clip] */
    size_t hidden;
    float *g;                         /* row b at g + b gs */
    size_t gs;
    const float *t;                   /* GRU_LBR: h R^T, row b at t + b ts */
    size_t ts;
    const float *rbh, *p;             /* GRU_LBR: Rb_h; LSTM: peepholes (3 hidden) or NULL */
    float *h, *c, *rh;                /* rows of hidden: states (c: LSTM); GRU_ZR: r h */
    float *y;                         /* row b at y + b ys */
    size_t ys;
} luthier__op_rnn_job;

#define LUTHIER__OPS_PASS 1
#include "luthier_ops.h"
#undef LUTHIER__OPS_PASS
#if LUTHIER__SIMD_X86
#define LUTHIER__OPS_PASS 2
#include "luthier_ops.h"
#undef LUTHIER__OPS_PASS
#define LUTHIER__OPS_PASS 3
#include "luthier_ops.h"
#undef LUTHIER__OPS_PASS
#endif

/* The ISA of the pass LUTHIER__OP_PICK runs for these CPU features (every operator with a
   vector path; the pass runs its tails through the same vector code). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__op_isa(unsigned features) {
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX512F) return LUTHIER__ISA_AVX512;
    if (features & LUTHIER_CPU_AVX2_FMA) return LUTHIER__ISA_AVX2;
#endif
    (void)features;
    return luthier__op_base_vw > 1 ? LUTHIER__ISA_PORTABLE : LUTHIER__ISA_SCALAR;
}

/* luthier__op_transpose: blocks in registers (luthier__transpose_tile; runs that stay
   contiguous are memcpy'd either way). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__op_transpose_isa(unsigned features) {
    return luthier__transpose_isa(features);
}

/* lanes of the pass LUTHIER__OP_PICK runs */
LUTHIER__INLINE size_t luthier__op_vw(const luthier_context *ctx) {
    const luthier__isa pass = luthier__op_isa(ctx->cpu_features);
    return pass == LUTHIER__ISA_AVX512 ? 16 : pass == LUTHIER__ISA_AVX2 ? 8 : (size_t)luthier__op_base_vw;
}

/* One chunk of a transposed convolution's col2im (see luthier__op_col2im_job): output rows of
   the whole batch are the units, so no two threads write one element; a row is touched only by
   the chunks holding input rows that reach it (chunks run in order, rows begin at the bias in the
   first of them and are clamped in the last). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_col2im_nhwc(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                      luthier__op_col2im_job *j) {
    const size_t rows = j->n * j->oh;
    j->rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, j->ow * j->c));
    return luthier__op_run(ctx, cfg, luthier__div_up(rows, j->rpu), LUTHIER__OP_PICK(ctx, luthier__op_col2im_range), j);
}

/* Whether a pass writes its n floats of output y with streaming stores: when they exceed the
   last-level cache (they would leave it anyway, after a read of every line for ownership) and
   the pass does not read y itself (in place: its lines are in the cache already). */
LUTHIER_PRIVATE int luthier__op_stream(const luthier_context *ctx, const float *y, size_t n, const float *in0,
                                       const float *in1) {
    const size_t llc = ctx->caches.l3 ? ctx->caches.l3 : ctx->caches.l2;
    return llc && n > llc / sizeof(float) && y != in0 && y != in1;
}

/* y = kind(x) element-wise; in place ok. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_unary(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                 luthier__unary kind, float a, float b,
                                                                 const float *x, float *y, size_t n) {
    luthier__op_unary_job j;
    if ((unsigned)kind >= (unsigned)LUTHIER__UNARY_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unary: unknown kind %d", (int)kind);
    j.kind = kind;
    j.a = a;
    j.b = b;
    j.x = x;
    j.y = y;
    j.n = n;
    j.stream = luthier__op_stream(ctx, y, n, x, NULL);
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), LUTHIER__OP_PICK(ctx, luthier__op_unary_range), &j);
}

/* >>ops-act: the fused activations that are not clamps (see luthier__act_post). */

/* The unary operator (and its a, b) of activation act with parameters p0, p1 (a desc's
   clamp_min and clamp_max); LUTHIER__UNARY_COUNT for NONE and the clamps. */
LUTHIER_PRIVATE luthier__unary luthier__act_unary(luthier_activation act, float p0, float p1, float *a, float *b) {
    *a = p0;
    *b = p1;
    switch (act) {
#define LUTHIER__X(k) case LUTHIER_ACTIVATION_##k: return LUTHIER__UNARY_##k; /* the kernel of the same name */
    LUTHIER__X(HARD_SWISH) LUTHIER__X(HARD_SIGMOID) LUTHIER__X(SILU) LUTHIER__X(LEAKY_RELU) LUTHIER__X(GELU_TANH) LUTHIER__X(ELU)
    LUTHIER__X(MISH)
#undef LUTHIER__X
    case LUTHIER_ACTIVATION_GELU: return LUTHIER__UNARY_GELU_ERF;
    default: return LUTHIER__UNARY_COUNT;
    }
}

/* Whether act runs after the store (luthier__act_post) rather than as the kernels' clamp. */
LUTHIER_PRIVATE int luthier__act_is_post(luthier_activation act) {
    float a, b;
    return luthier__act_unary(act, 0.0f, 0.0f, &a, &b) != LUTHIER__UNARY_COUNT;
}

/* The activation whose unary operator is u (LUTHIER_ACTIVATION_NONE: none is). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_activation luthier__act_of_unary(luthier__unary u) {
    int k;
    float a, b;
    for (k = 0; k < (int)LUTHIER_ACTIVATION_COUNT; k++)
        if (luthier__act_unary((luthier_activation)k, 0.0f, 0.0f, &a, &b) == u) return (luthier_activation)k;
    return LUTHIER_ACTIVATION_NONE;
}

LUTHIER_PRIVATE void luthier__act_post_init(unsigned features, luthier_activation act, float p0, float p1,
                                            luthier__act_post *p) {
    const luthier__unary u = luthier__act_unary(act, p0, p1, &p->a, &p->b);
    p->kind = (int)u;
    p->fn = u == LUTHIER__UNARY_COUNT ? NULL : LUTHIER__OP_PICK_FOR(features, luthier__op_unary_range);
}

/* p on rows x cols floats, row r at c + r * ld (one span when the rows are contiguous). */
LUTHIER_PRIVATE void luthier__act_rect(const luthier__act_post *p, float *c, size_t ld, size_t rows, size_t cols) {
    luthier__op_unary_job j;
    size_t r;
    if (!p->fn || !rows || !cols) return;
    if (ld == cols) cols *= rows, rows = 1;
    j.kind = (luthier__unary)p->kind;
    j.a = p->a;
    j.b = p->b;
    j.n = cols;
    j.stream = 0;
    for (r = 0; r < rows; r++) {
        j.x = j.y = c + r * ld;
        p->fn(&j, 0, luthier__div_up(cols, LUTHIER__OP_GRAIN), 0, 0);
    }
}

/* Rows [*from, to) of c (row r at c + r * ld, cols floats) through p once they hold
   LUTHIER__ACT_BATCH floats (16 KB: still in L1), or whatever is left with force; *from moves
   to `to`. A narrow layer's tile row alone is too little work for a pass (a 16-channel layer's
   6 rows: 96 floats). */
LUTHIER_PRIVATE void luthier__act_rows(const luthier__act_post *p, float *c, size_t ld, size_t cols, size_t *from,
                                       size_t to, int force) {
    if (!p->fn || (!force && (to - *from) * cols < LUTHIER__ACT_BATCH)) return;
    luthier__act_rect(p, c + *from * ld, ld, to - *from, cols);
    *from = to;
}

/* One time step's gate math over batch rows (see luthier__op_rnn_job); small steps run on the
   calling thread (a split would cost more than the work). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_rnn_cell(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                   const luthier__op_rnn_job *j, size_t batch) {
    if (batch * j->hidden < 8192) {
        LUTHIER__OP_PICK(ctx, luthier__op_rnn_range)((void *)j, 0, batch, 0, 0);
        return LUTHIER_STATUS_OK;
    }
    return luthier__op_run(ctx, cfg, batch, LUTHIER__OP_PICK(ctx, luthier__op_rnn_range), (void *)j);
}

/* numpy broadcasting of nops <= 3 operands (shapes[o], padded to rank) to yshape: dim[0..*m) the
   output's dims with the 1s dropped and the dims merged where every operand's strides chain ([1]
   for one element), st[o] operand o's element strides over them (0 where broadcast), *rows the
   product of all dims but the last; *m = 0 when the output is empty. Returns the innermost dim
   that does not broadcast, or -1. */
LUTHIER_PRIVATE int luthier__op_bcast(int rank, const int64_t *yshape, int nops, const int64_t *const *shapes, size_t *dim,
                                      size_t *const *st, int *m, size_t *rows) {
    size_t s[3][LUTHIER__OP_MAX_RANK], cnt[3] = {1, 1, 1}, total = 1;
    int d, o, chain;
    *m = 0;
    *rows = 1;
    for (d = rank - 1; d >= 0; d--) { /* contiguous strides, 0 where broadcast */
        for (o = 0; o < nops; o++) {
            if (shapes[o][d] != yshape[d] && shapes[o][d] != 1) return d;
            s[o][d] = shapes[o][d] == 1 ? 0 : cnt[o];
            cnt[o] *= (size_t)shapes[o][d];
        }
        total *= (size_t)yshape[d];
    }
    if (total == 0) return -1;
    for (d = 0; d < rank; d++) { /* drop 1s, merge dims whose strides chain for every operand */
        const size_t n = (size_t)yshape[d];
        if (n == 1) continue;
        for (o = 0, chain = *m > 0; chain && o < nops; o++) chain = st[o][*m - 1] == s[o][d] * n;
        if (chain) dim[*m - 1] *= n;
        else dim[(*m)++] = n;
        for (o = 0; o < nops; o++) st[o][*m - 1] = s[o][d];
    }
    if (*m == 0) {
        dim[0] = 1;
        for (o = 0; o < nops; o++) st[o][0] = 0;
        *m = 1;
    }
    for (d = 0; d + 1 < *m; d++) *rows *= dim[d];
    return -1;
}

/* The broadcast of luthier__op_binary and luthier__op_binary_i64 into j (zeroed here) and the
   work split; *units = 0 when the output is empty. */
LUTHIER_PRIVATE luthier_status luthier__op_binary_shape(luthier_context *ctx, luthier__binary kind, const int64_t *ashape,
                                                        const int64_t *bshape, const int64_t *yshape, int rank,
                                                        luthier__op_binary_job *j, size_t *units) {
    const int64_t *shapes[2];
    size_t *st[2], rows;
    int d;
    memset(j, 0, sizeof *j);
    *units = 0;
    if (rank < 1 || rank > LUTHIER__OP_MAX_RANK)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "binary: rank %d (1..%d)", rank, LUTHIER__OP_MAX_RANK);
    if ((unsigned)kind >= (unsigned)LUTHIER__BINARY_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "binary: unknown kind %d", (int)kind);
    shapes[0] = ashape, shapes[1] = bshape, st[0] = j->sa, st[1] = j->sb;
    if ((d = luthier__op_bcast(rank, yshape, 2, shapes, j->dim, st, &j->m, &rows)) >= 0)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "binary: dim %d: %lld and %lld do not broadcast to %lld",
                             d, (long long)ashape[d], (long long)bshape[d], (long long)yshape[d]);
    j->kind = kind;
    if (j->m) *units = luthier__op_part_init(&j->part, rows, j->dim[j->m - 1], LUTHIER__OP_GRAIN);
    return LUTHIER_STATUS_OK;
}

/* numpy broadcasting on shapes padded to the same rank (1..6), then the fused activation.
   y may alias a (or b) when that operand's shape equals yshape. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_binary(
    luthier_context *ctx, const luthier__op_cfg *cfg, luthier__binary kind, const float *a, const int64_t *ashape,
    const float *b, const int64_t *bshape, float *y, const int64_t *yshape, int rank, luthier_activation act,
    float cmin, float cmax) {
    luthier__op_binary_job j;
    size_t units;
    int d;
    luthier_status s = luthier__op_binary_shape(ctx, kind, ashape, bshape, yshape, rank, &j, &units);
    if (s != LUTHIER_STATUS_OK) return s;
    if (units == 0) return luthier__op_run(ctx, cfg, 0, luthier__op_binary_range_base, &j);
    j.a = a;
    j.b = b;
    j.y = y;
    j.stream = luthier__op_stream(ctx, y, j.part.rows * j.part.len, a, b);
    j.clamp = luthier__activation_bounds(act, cmin, cmax, &j.lo, &j.hi);
    if (kind == LUTHIER__BINARY_POW) { /* one exponent for every element: fast exponents */
        int all0 = 1;
        for (d = 0; d < j.m; d++) all0 &= j.sb[d] == 0;
        if (all0) {
            const float e = b[0];
            j.pow_exp = e;
            j.pow_special = e == 2.0f ? 1 : e == 3.0f ? 2 : e == 0.5f ? 3 : e == 1.0f ? 4 : e == -1.0f ? 5 : 0;
            if (!j.pow_special && e >= -16.0f && e <= 16.0f && e != 0.0f && e == (float)(int)e) j.pow_special = 6;
        }
    }
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_binary_range), &j);
}

/* The comparisons (f32 0/1 out, in y) and MOD / FMOD (i64 out, in yi) on i64 operands, numpy
   broadcasting as luthier__op_binary; plain C (scalar). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_binary_i64(
    luthier_context *ctx, const luthier__op_cfg *cfg, luthier__binary kind, const int64_t *a, const int64_t *ashape,
    const int64_t *b, const int64_t *bshape, float *y, int64_t *yi, const int64_t *yshape, int rank) {
    luthier__op_binary_job j;
    size_t units;
    luthier_status s = luthier__op_binary_shape(ctx, kind, ashape, bshape, yshape, rank, &j, &units);
    if (s != LUTHIER_STATUS_OK) return s;
    if (kind < LUTHIER__BINARY_EQUAL || kind == LUTHIER__BINARY_AND || kind == LUTHIER__BINARY_OR ||
        kind == LUTHIER__BINARY_XOR || (kind >= LUTHIER__BINARY_MOD ? !yi : !y))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "binary: kind %d has no i64 form", (int)kind);
    j.ai = a;
    j.bi = b;
    j.y = y;
    j.yi = yi;
    return luthier__op_run(ctx, cfg, units, luthier__op_binary_range_base, &j);
}

/* out = cond != 0 ? x : y (ONNX Where), numpy broadcasting of the three shapes padded to rank
   (1..6) into oshape. x, y, out are f32 (xi, yi, oi NULL; vector code) or i64 (x, y, out NULL;
   plain C). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_where(
    luthier_context *ctx, const luthier__op_cfg *cfg, const float *c, const int64_t *cshape, const float *x,
    const int64_t *xi, const int64_t *xshape, const float *y, const int64_t *yi, const int64_t *yshape, float *o,
    int64_t *oi, const int64_t *oshape, int rank) {
    luthier__op_where_job j;
    const int64_t *shapes[3];
    size_t *st[3], rows;
    int d;
    if (rank < 1 || rank > LUTHIER__OP_MAX_RANK)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "where: rank %d (1..%d)", rank, LUTHIER__OP_MAX_RANK);
    memset(&j, 0, sizeof j);
    shapes[0] = cshape, shapes[1] = xshape, shapes[2] = yshape, st[0] = j.sc, st[1] = j.sx, st[2] = j.sy;
    if ((d = luthier__op_bcast(rank, oshape, 3, shapes, j.dim, st, &j.m, &rows)) >= 0)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "where: dim %d does not broadcast to %lld", d,
                             (long long)oshape[d]);
    if (!j.m) return luthier__op_run(ctx, cfg, 0, luthier__op_where_range_base, &j);
    j.c = c, j.x = x, j.y = y, j.o = o, j.xi = xi, j.yi = yi, j.oi = oi;
    return luthier__op_run(ctx, cfg, luthier__op_part_init(&j.part, rows, j.dim[j.m - 1], LUTHIER__OP_GRAIN),
                           xi ? luthier__op_where_range_base : LUTHIER__OP_PICK(ctx, luthier__op_where_range), &j);
}

/* n elements of x (src: 0 f32, 1 i64, 2 i32, 3 bool bytes) converted to `to` in y (f32, or i64
   for I64 / I32); in place ok where the element sizes match. f32 -> f32 / bool / f16 run
   vector code, the integer forms plain C. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_cast(luthier_context *ctx, const luthier__op_cfg *cfg, int src,
                                                                luthier__cast to, const void *x, void *y, size_t n) {
    luthier__op_cast_job j;
    const int vec = src == 0 && (to == LUTHIER__CAST_F32 || to == LUTHIER__CAST_BOOL || to == LUTHIER__CAST_F16);
    if (src < 0 || src > 3 || (unsigned)to >= (unsigned)LUTHIER__CAST_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "cast: source %d or target %d unknown", src, (int)to);
    j.src = src;
    j.to = to;
    j.x = x;
    j.y = y;
    j.n = n;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN),
                           vec ? LUTHIER__OP_PICK(ctx, luthier__op_cast_range) : luthier__op_cast_range_base, &j);
}

/* 2-D max / average pooling on NHWC (see the function list in the header comment). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_pool2d_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, int is_max, const float *x, size_t n, size_t h, size_t w,
    size_t c, size_t kh, size_t kw, size_t sh, size_t sw, size_t dh, size_t dw, size_t pad_top, size_t pad_left,
    size_t pad_bottom, size_t pad_right, int count_include_pad, float *y, size_t out_h, size_t out_w) {
    luthier__op_pool_job j;
    const size_t units = luthier__op_pool_set(&j, x, n, h, w, c, kh, kw, sh, sw, dh, dw, pad_top, pad_left, pad_bottom,
                                              pad_right, y, out_h, out_w);
    j.is_max = is_max != 0;
    j.include_pad = count_include_pad != 0;
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_pool_range), &j);
}

/* PyTorch adaptive average pooling on NHWC: bin i spans [floor(i*H/OH), ceil((i+1)*H/OH)). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_adaptive_avgpool_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, const float *x, size_t n, size_t h, size_t w, size_t c,
    float *y, size_t out_h, size_t out_w) {
    luthier__op_apool_job j;
    const size_t units = luthier__op_apool_set(&j, x, n, h, w, c, y, out_h, out_w);
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_apool_range), &j);
}

/* y[o][ch][i] = act(x[o][ch][i] * scale[ch] + shift[ch]); scale/shift may be NULL; in place ok. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_channel_affine(
    luthier_context *ctx, const luthier__op_cfg *cfg, const float *x, float *y, size_t outer, size_t c,
    size_t inner, const float *scale, const float *shift, luthier_activation act, float cmin, float cmax) {
    luthier__op_affine_job j;
    size_t units;
    j.x = x;
    j.y = y;
    j.scale = scale;
    j.shift = shift;
    j.c = c;
    j.inner = inner;
    j.clamp = luthier__activation_bounds(act, cmin, cmax, &j.lo, &j.hi);
    if (inner == 1) units = luthier__op_part_init(&j.part, outer, c, LUTHIER__OP_GRAIN);
    else units = luthier__op_part_init(&j.part, outer * c, inner, LUTHIER__OP_GRAIN);
    if (!outer || !c || !inner) units = 0;
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_affine_range), &j);
}

/* Layer norm over the last dim (biased variance); gamma/beta may be NULL; in place ok. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_layernorm(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                     const float *x, float *y, size_t rows,
                                                                     size_t cols, const float *gamma,
                                                                     const float *beta, float eps) {
    luthier__op_ln_job j;
    j.x = x;
    j.y = y;
    j.gamma = gamma;
    j.beta = beta;
    j.rows = rows;
    j.cols = cols;
    j.eps = eps;
    j.rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, cols * 3));
    return luthier__op_run(ctx, cfg, cols ? luthier__div_up(rows, j.rpu) : 0, LUTHIER__OP_PICK(ctx, luthier__op_ln_range), &j);
}

/* LRN across channels on NHWC: y = x / (bias + alpha/size * sum x^2 over the window)^beta,
   window [ch - floor((size-1)/2), ch + ceil((size-1)/2)] clipped. Not in place. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_lrn_nhwc(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                    const float *x, float *y, size_t pixels,
                                                                    size_t c, size_t size, float alpha, float beta,
                                                                    float bias) {
    luthier__op_lrn_job j;
    if (!size) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "lrn: size is 0");
    if (beta == 0) { /* base^0 = 1 for every base (the kernel's exp(-beta log base) is NaN at 0) */
        if (x != y) memmove(y, x, pixels * c * sizeof(float)); /* the plan checked the size */
        return LUTHIER_STATUS_OK;
    }
    j.x = x;
    j.y = y;
    j.pixels = pixels;
    j.c = c;
    j.lo = (size - 1) / 2;
    j.hi = size - 1 - j.lo;
    j.k = alpha / (float)size;
    j.bias = bias;
    j.beta = beta;
    j.ppu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, c * (size + 8)));
    return luthier__op_run(ctx, cfg, c ? luthier__div_up(pixels, j.ppu) : 0, LUTHIER__OP_PICK(ctx, luthier__op_lrn_range), &j);
}

/* Softmax (log_softmax when log != 0) over the middle axis of [outer][len][inner],
   max-subtracted; in place ok. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_softmax(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                   const float *x, float *y, size_t outer,
                                                                   size_t len, size_t inner, int log) {
    luthier__op_softmax_job j;
    size_t work;
    j.x = x;
    j.y = y;
    j.outer = outer;
    j.len = len;
    j.inner = inner;
    j.log = log != 0;
    if (!outer || !len || !inner) return luthier__op_run(ctx, cfg, 0, luthier__op_softmax_range_base, &j);
    if (inner == 1) {
        j.chunks = 1;
        j.items = outer;
        work = len * 3;
    } else {
        j.chunks = luthier__div_up(inner, LUTHIER__OP_SOFTMAX_CB);
        j.items = outer * j.chunks;
        work = len * luthier__min_sz(inner, LUTHIER__OP_SOFTMAX_CB) * 3;
    }
    j.ipu = luthier__max_sz(1, LUTHIER__OP_GRAIN / work);
    return luthier__op_run(ctx, cfg, luthier__div_up(j.items, j.ipu), LUTHIER__OP_PICK(ctx, luthier__op_softmax_range), &j);
}

/* >>ops-move ================================================================================= */

#define LUTHIER__OP_TILE 32

typedef struct luthier__op_transpose_job {
    const float *x;
    float *y;
    int r;                                  /* reduced rank */
    size_t odim[LUTHIER__OP_MAX_RANK];      /* y's dims */
    size_t xstr[LUTHIER__OP_MAX_RANK];      /* x stride of y's dim i */
    size_t ystr[LUTHIER__OP_MAX_RANK];      /* y stride of y's dim i */
    int p;                                  /* y position of x's innermost dim (-1: memcpy runs) */
    size_t strips, outer;                   /* tiled: units = outer * strips */
    luthier__op_part part;                  /* runs */
    unsigned features;                      /* the context's (luthier__transpose_tile) */
} luthier__op_transpose_job;

LUTHIER_PRIVATE void luthier__op_transpose_runs(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_transpose_job *j = (const luthier__op_transpose_job *)arg;
    const size_t *const st[1] = {j->xstr};
    size_t u;
    (void)thread;
    (void)cl;
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            size_t xo;
            luthier__op_unravel(row, j->r - 1, j->odim, -1, 1, st, &xo);
            memcpy(j->y + row * j->part.len + from, j->x + xo + from, (to - from) * sizeof(float));
        }
    }
}

LUTHIER_PRIVATE void luthier__op_transpose_tiles(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_transpose_job *j = (const luthier__op_transpose_job *)arg;
    const int r = j->r, p = j->p;
    const size_t A = j->odim[p], B = j->odim[r - 1], xsb = j->xstr[r - 1], ysa = j->ystr[p];
    const size_t *const st[2] = {j->xstr, j->ystr};
    size_t u;
    (void)thread;
    (void)cl;
    for (u = ub; u < ue; u++) {
        const size_t strip = u % j->strips, a0 = strip * LUTHIER__OP_TILE;
        const size_t a1 = luthier__min_sz(A, a0 + LUTHIER__OP_TILE);
        size_t o[2], b0; /* offsets in x and y of the other dims, in y order */
        luthier__op_unravel(u / j->strips, r - 1, j->odim, p, 2, st, o);
        for (b0 = 0; b0 < B; b0 += LUTHIER__OP_TILE) {
            const size_t b1 = luthier__min_sz(B, b0 + LUTHIER__OP_TILE);
            luthier__transpose_tile(j->x + o[0] + a0 + b0 * xsb, xsb, j->y + o[1] + a0 * ysa + b0, ysa, b1 - b0, a1 - a0, j->features);
        }
    }
}

/* y = x permuted (y's dim i is x's dim perm[i]); shape is x's; rank 1..6. Not in place. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_transpose(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                     const float *x, float *y, int rank,
                                                                     const int64_t *shape, const int *perm) {
    luthier__op_transpose_job j;
    size_t xs[LUTHIER__OP_MAX_RANK], st = 1, total = 1;
    size_t ndim[LUTHIER__OP_MAX_RANK], nxs[LUTHIER__OP_MAX_RANK];
    int seen = 0, d, r = 0, xin = -1;
    if (rank < 1 || rank > LUTHIER__OP_MAX_RANK)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "transpose: rank %d (1..%d)", rank, LUTHIER__OP_MAX_RANK);
    for (d = 0; d < rank; d++) {
        if (perm[d] < 0 || perm[d] >= rank || (seen >> perm[d] & 1))
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "transpose: perm is not a permutation of 0..%d", rank - 1);
        seen |= 1 << perm[d];
    }
    for (d = rank - 1; d >= 0; d--) {
        xs[d] = st;
        st *= (size_t)shape[d];
    }
    total = st;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.y = y;
    j.features = ctx->cpu_features;
    if (!total) return luthier__op_run(ctx, cfg, 0, luthier__op_transpose_runs, &j);
    /* y order, size-1 dims dropped, dims that stay adjacent in x merged */
    for (d = 0; d < rank; d++) {
        const size_t n = (size_t)shape[perm[d]], s = xs[perm[d]];
        if (n == 1) continue;
        if (r > 0 && nxs[r - 1] == s * n) {
            ndim[r - 1] *= n;
            nxs[r - 1] = s;
        } else {
            ndim[r] = n;
            nxs[r] = s;
            r++;
        }
    }
    if (r == 0) {
        ndim[0] = 1;
        nxs[0] = 1;
        r = 1;
    }
    j.r = r;
    st = 1;
    for (d = r - 1; d >= 0; d--) {
        j.odim[d] = ndim[d];
        j.xstr[d] = nxs[d];
        j.ystr[d] = st;
        st *= ndim[d];
        if (nxs[d] == 1) xin = d;
    }
    if (xin == r - 1 || xin < 0) { /* innermost run contiguous in both: memcpy runs */
        size_t rows = total / j.odim[r - 1];
        j.p = -1;
        return luthier__op_run(ctx, cfg, luthier__op_part_init(&j.part, rows, j.odim[r - 1], LUTHIER__OP_GRAIN),
                               luthier__op_transpose_runs, &j);
    }
    j.p = xin;
    j.strips = luthier__div_up(j.odim[xin], LUTHIER__OP_TILE);
    j.outer = total / (j.odim[xin] * j.odim[r - 1]);
    return luthier__op_run(ctx, cfg, j.outer * j.strips, luthier__op_transpose_tiles, &j);
}

typedef struct luthier__op_cat_job {
    const float *const *xs; /* concat: sources; split: NULL */
    float *const *ys;       /* split: destinations; concat: NULL */
    const float *x;         /* split source */
    float *y;               /* concat destination */
    const size_t *lens;
    int count;
    size_t outer, inner, per_o, opu, cpo; /* opu: whole outer rows per unit (0: chunks) */
} luthier__op_cat_job;

/* copies piece k of outer row o, elements [from, to) of the piece */
LUTHIER__INLINE void luthier__op_cat_piece(const luthier__op_cat_job *j, size_t o, int k, size_t off, size_t from,
                                           size_t to) {
    const size_t pk = j->lens[k] * j->inner;
    if (to <= from) return;
    if (j->xs) memcpy(j->y + o * j->per_o + off + from, j->xs[k] + o * pk + from, (to - from) * sizeof(float));
    else memcpy(j->ys[k] + o * pk + from, j->x + o * j->per_o + off + from, (to - from) * sizeof(float));
}

LUTHIER_PRIVATE void luthier__op_cat_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_cat_job *j = (const luthier__op_cat_job *)arg;
    size_t u;
    (void)thread;
    (void)cl;
    for (u = ub; u < ue; u++) {
        if (j->opu) {
            size_t o, o_end = luthier__min_sz(j->outer, (u + 1) * j->opu);
            for (o = u * j->opu; o < o_end; o++) {
                size_t off = 0;
                int k;
                for (k = 0; k < j->count; k++) {
                    luthier__op_cat_piece(j, o, k, off, 0, j->lens[k] * j->inner);
                    off += j->lens[k] * j->inner;
                }
            }
        } else { /* chunk c of row o: pieces are cut in chunks of GRAIN, numbered in order */
            const size_t o = u / j->cpo;
            size_t c = u % j->cpo, off = 0;
            int k;
            for (k = 0; k < j->count; k++) {
                const size_t pk = j->lens[k] * j->inner, nc = luthier__div_up(pk, LUTHIER__OP_GRAIN);
                if (c < nc) {
                    luthier__op_cat_piece(j, o, k, off, c * LUTHIER__OP_GRAIN,
                                          luthier__min_sz(pk, (c + 1) * LUTHIER__OP_GRAIN));
                    break;
                }
                c -= nc;
                off += pk;
            }
        }
    }
}

/* Concat (xs into y) or split (x into ys), the other pair NULL. */
LUTHIER_PRIVATE luthier_status luthier__op_cat_run(luthier_context *ctx, const luthier__op_cfg *cfg, const float *const *xs,
                                                   float *y, const float *x, float *const *ys, const size_t *lens, int count,
                                                   size_t outer, size_t inner) {
    luthier__op_cat_job j;
    size_t units;
    int k;
    memset(&j, 0, sizeof j);
    j.xs = xs, j.y = y, j.x = x, j.ys = ys, j.lens = lens, j.count = count, j.outer = outer, j.inner = inner;
    for (k = 0; k < count; k++) {
        j.per_o += lens[k] * inner;
        j.cpo += luthier__div_up(lens[k] * inner, LUTHIER__OP_GRAIN);
    }
    if (!j.per_o || !outer) return luthier__op_run(ctx, cfg, 0, luthier__op_cat_range, &j);
    if (j.per_o <= LUTHIER__OP_GRAIN) {
        j.opu = luthier__max_sz(1, LUTHIER__OP_GRAIN / j.per_o);
        units = luthier__div_up(outer, j.opu);
    } else {
        units = outer * j.cpo; /* (opu 0: chunks) */
    }
    return luthier__op_run(ctx, cfg, units, luthier__op_cat_range, &j);
}

/* y[o][concat of lens][inner] from xs[k][o][lens[k]][inner]. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_concat(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                  const float *const *xs, const size_t *lens,
                                                                  int count, size_t outer, size_t inner, float *y) {
    return luthier__op_cat_run(ctx, cfg, xs, y, NULL, NULL, lens, count, outer, inner);
}

/* x[o][sum lens][inner] -> ys[k][o][lens[k]][inner]. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_split(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                 const float *x, size_t outer, size_t inner,
                                                                 int count, const size_t *lens, float *const *ys) {
    return luthier__op_cat_run(ctx, cfg, NULL, NULL, x, ys, lens, count, outer, inner);
}

/* Checks n indices, index e against lens[e % m]; 0 when all are in range. */
LUTHIER_PRIVATE luthier_status luthier__op_check_indices(luthier_context *ctx, const char *what, const int64_t *idx, size_t n,
                                                         size_t m, const int64_t *lens) {
    size_t e;
    for (e = 0; e < n; e++) {
        const int64_t v = idx[e], len = lens[e % m];
        if (v < -len || v >= len)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%s: index %lld at position %zu is out of range [-%lld, %lld)",
                                 what, (long long)v, e, (long long)len, (long long)len);
    }
    return LUTHIER_STATUS_OK;
}

typedef struct luthier__op_gather_job {
    const float *data;
    const int64_t *idx;
    float *y;
    size_t axis_len, inner, num, rows;
    luthier__op_part part;
} luthier__op_gather_job;

LUTHIER_PRIVATE void luthier__op_gather_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_gather_job *j = (const luthier__op_gather_job *)arg;
    size_t u;
    (void)thread;
    (void)cl;
    for (u = ub; u < ue; u++) {
        size_t r0, r1, from, to, row;
        luthier__op_part_unit(&j->part, u, &r0, &r1, &from, &to);
        for (row = r0; row < r1; row++) {
            const size_t o = row / j->num, q = row % j->num;
            const int64_t v = j->idx[q];
            const size_t src = (size_t)(v < 0 ? v + (int64_t)j->axis_len : v);
            memcpy(j->y + row * j->inner + from, j->data + (o * j->axis_len + src) * j->inner + from,
                   (to - from) * sizeof(float));
        }
    }
}

/* y[o][j][inner] = data[o][idx[j]][inner]; negative indices count from the end. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_gather(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                  const float *data, size_t outer, size_t axis_len,
                                                                  size_t inner, const int64_t *indices,
                                                                  size_t num_indices, float *y) {
    luthier__op_gather_job j;
    const int64_t len = (int64_t)axis_len;
    size_t units;
    luthier_status s = luthier__op_check_indices(ctx, "gather", indices, num_indices, 1, &len);
    if (s != LUTHIER_STATUS_OK) return s;
    j.data = data;
    j.idx = indices;
    j.y = y;
    j.axis_len = axis_len;
    j.inner = inner;
    j.num = num_indices;
    j.rows = outer * num_indices;
    units = inner ? luthier__op_part_init(&j.part, j.rows, inner, LUTHIER__OP_GRAIN) : 0;
    return luthier__op_run(ctx, cfg, units, luthier__op_gather_range, &j);
}

/* >>ops-index: GatherElements, GatherND, ScatterND, ScatterElements (ONNX semantics) over f32 data
   and i64 indices, in logical (row-major) order. Every index is checked against its axis before
   anything is written: negative indices count from the end once (-len..-1), anything else outside
   [-len, len) fails the step with INVALID_ARGUMENT naming the index and its position. The gathers
   run in parallel over output rows; the scatters copy data and then apply the updates in index
   order on one thread (duplicate indices with a reduction combine in that order; with no
   reduction the last one wins). */
enum { LUTHIER__SCAT_NONE, LUTHIER__SCAT_ADD, LUTHIER__SCAT_MUL, LUTHIER__SCAT_MAX, LUTHIER__SCAT_MIN, LUTHIER__SCAT_COUNT };

LUTHIER_PRIVATE size_t luthier__prod(const int64_t *s, int from, int to) {
    size_t n = 1;
    int k;
    for (k = from; k < to; k++) n *= (size_t)s[k];
    return n;
}

/* The row-major strides of shape (rank r) into st. */
LUTHIER_PRIVATE void luthier__op_strides(int r, const int64_t *shape, size_t *st) {
    size_t s = 1;
    int k;
    for (k = r - 1; k >= 0; k--) st[k] = s, s *= (size_t)shape[k];
}

/* y = reduction(y, u) (LUTHIER__SCAT_*); max and min propagate NaN (numpy.maximum/minimum). */
LUTHIER_PRIVATE float luthier__op_scatter_one(int red, float y, float u) {
    switch (red) {
    case LUTHIER__SCAT_ADD: return y + u;
    case LUTHIER__SCAT_MUL: return y * u;
    case LUTHIER__SCAT_MAX: return y != y || u != u ? y + u : u > y ? u : y;
    case LUTHIER__SCAT_MIN: return y != y || u != u ? y + u : u < y ? u : y;
    default: return u;
    }
}

/* Element-wise index geometry shared by GatherElements and ScatterElements: the indices' shape
   is; data's strides ds, the axis and its length. */
typedef struct luthier__op_elems {
    const float *data;
    const int64_t *idx;
    float *y;
    int rank, axis;
    int64_t is[LUTHIER_MAX_RANK];
    size_t ds[LUTHIER_MAX_RANK];
    int64_t axis_len;
    size_t last, rows, rpu;
} luthier__op_elems;

/* Offset in data of the element of indices row `row`, column j, index value v (wrapped). */
LUTHIER_PRIVATE size_t luthier__op_elems_base(const luthier__op_elems *j, size_t row) {
    size_t base = 0, rem = row;
    int k;
    for (k = j->rank - 2; k >= 0; k--) {
        const size_t c = rem % (size_t)j->is[k];
        rem /= (size_t)j->is[k];
        if (k != j->axis) base += c * j->ds[k];
    }
    return base;
}

LUTHIER_PRIVATE void luthier__op_gather_elements_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_elems *j = (const luthier__op_elems *)arg;
    const int on_last = j->axis == j->rank - 1;
    size_t row, c;
    (void)thread;
    (void)cl;
    for (row = ub * j->rpu; row < ue * j->rpu && row < j->rows; row++) {
        const size_t base = luthier__op_elems_base(j, row);
        const int64_t *ip = j->idx + row * j->last;
        float *yp = j->y + row * j->last;
        for (c = 0; c < j->last; c++) {
            const size_t v = (size_t)(ip[c] < 0 ? ip[c] + j->axis_len : ip[c]);
            yp[c] = j->data[base + (on_last ? v : c * j->ds[j->rank - 1] + v * j->ds[j->axis])];
        }
    }
}

/* Fills j for data of shape ds_shape and indices of shape is (both rank r, checked by the graph). */
LUTHIER_PRIVATE void luthier__op_elems_init(luthier__op_elems *j, const float *data, const int64_t *idx, float *y, int r,
                                            const int64_t *data_shape, const int64_t *is, int axis) {
    int k;
    j->data = data, j->idx = idx, j->y = y, j->rank = r, j->axis = axis;
    luthier__op_strides(r, data_shape, j->ds);
    for (k = 0; k < r; k++) j->is[k] = is[k];
    j->axis_len = data_shape[axis];
    j->last = (size_t)is[r - 1];
    j->rows = luthier__prod(is, 0, r - 1);
    j->rpu = j->last >= LUTHIER__OP_GRAIN ? 1 : LUTHIER__OP_GRAIN / j->last;
}

/* y (indices' shape) = data[..., idx[...], ...] along axis. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_gather_elements(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                           const float *data, const int64_t *data_shape, int r,
                                                                           const int64_t *idx, const int64_t *is, int axis, float *y) {
    luthier__op_elems j;
    luthier_status s;
    luthier__op_elems_init(&j, data, idx, y, r, data_shape, is, axis);
    if ((s = luthier__op_check_indices(ctx, "gather_elements", idx, j.rows * j.last, 1, &j.axis_len)) != LUTHIER_STATUS_OK) return s;
    return luthier__op_run(ctx, cfg, luthier__div_up(j.rows, j.rpu), luthier__op_gather_elements_range, &j);
}

/* y = data, then y[..., idx[...], ...] = reduction(y[...], upd[...]) along axis (upd: indices' shape). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_scatter_elements(luthier_context *ctx, const float *data,
                                                                            const int64_t *data_shape, int r, const int64_t *idx,
                                                                            const int64_t *is, const float *upd, int axis, int red,
                                                                            float *y) {
    luthier__op_elems j;
    luthier_status s;
    size_t row, c;
    luthier__op_elems_init(&j, data, idx, y, r, data_shape, is, axis);
    if ((s = luthier__op_check_indices(ctx, "scatter_elements", idx, j.rows * j.last, 1, &j.axis_len)) != LUTHIER_STATUS_OK) return s;
    if (y != data) memcpy(y, data, luthier__prod(data_shape, 0, r) * sizeof(float));
    for (row = 0; row < j.rows; row++) {
        const size_t base = luthier__op_elems_base(&j, row);
        for (c = 0; c < j.last; c++) {
            const int64_t iv = idx[row * j.last + c];
            const size_t v = (size_t)(iv < 0 ? iv + j.axis_len : iv);
            float *t = y + base + (axis == r - 1 ? v : c * j.ds[r - 1] + v * j.ds[axis]);
            *t = luthier__op_scatter_one(red, *t, upd[row * j.last + c]);
        }
    }
    return LUTHIER_STATUS_OK;
}

/* GatherND / ScatterND geometry: `slices` index tuples of m entries; tuple s addresses a slice of
   `len` elements inside batch s / per_batch of data (batch stride bstride), entry k scaled by st[k]. */
typedef struct luthier__op_nd {
    const float *data;
    const int64_t *idx;
    float *y;
    size_t m, len, slices, per_batch, bstride, spu;
    size_t st[LUTHIER_MAX_RANK];
    int64_t lens[LUTHIER_MAX_RANK];
} luthier__op_nd;

LUTHIER_PRIVATE size_t luthier__op_nd_offset(const luthier__op_nd *j, size_t s) {
    const int64_t *t = j->idx + s * j->m;
    size_t off = s / j->per_batch * j->bstride, k;
    for (k = 0; k < j->m; k++) off += (size_t)(t[k] < 0 ? t[k] + j->lens[k] : t[k]) * j->st[k];
    return off;
}

/* data of rank r (shape dsh), indices of rank q (shape ish), batch_dims b (checked by the graph). */
LUTHIER_PRIVATE void luthier__op_nd_init(luthier__op_nd *j, const float *data, const int64_t *idx, float *y, int r,
                                         const int64_t *dsh, int q, const int64_t *ish, int b) {
    size_t st[LUTHIER_MAX_RANK], k;
    j->data = data, j->idx = idx, j->y = y;
    j->m = (size_t)ish[q - 1];
    luthier__op_strides(r, dsh, st);
    for (k = 0; k < j->m; k++) j->st[k] = st[b + (int)k], j->lens[k] = dsh[b + (int)k];
    j->len = luthier__prod(dsh, b + (int)j->m, r);
    j->slices = luthier__prod(ish, 0, q - 1);
    j->per_batch = luthier__prod(ish, b, q - 1);
    j->bstride = luthier__prod(dsh, b, r);
    j->spu = j->len >= LUTHIER__OP_GRAIN ? 1 : LUTHIER__OP_GRAIN / j->len;
}

LUTHIER_PRIVATE void luthier__op_gather_nd_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_nd *j = (const luthier__op_nd *)arg;
    size_t s;
    (void)thread;
    (void)cl;
    for (s = ub * j->spu; s < ue * j->spu && s < j->slices; s++)
        memcpy(j->y + s * j->len, j->data + luthier__op_nd_offset(j, s), j->len * sizeof(float));
}

LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_gather_nd(luthier_context *ctx, const luthier__op_cfg *cfg, const float *data,
                                                                     int r, const int64_t *dsh, const int64_t *idx, int q,
                                                                     const int64_t *ish, int b, float *y) {
    luthier__op_nd j;
    luthier_status s;
    luthier__op_nd_init(&j, data, idx, y, r, dsh, q, ish, b);
    if ((s = luthier__op_check_indices(ctx, "gather_nd", idx, j.slices * j.m, j.m, j.lens)) != LUTHIER_STATUS_OK) return s;
    return luthier__op_run(ctx, cfg, luthier__div_up(j.slices, j.spu), luthier__op_gather_nd_range, &j);
}

LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_scatter_nd(luthier_context *ctx, const float *data, int r,
                                                                      const int64_t *dsh, const int64_t *idx, int q,
                                                                      const int64_t *ish, const float *upd, int red, float *y) {
    luthier__op_nd j;
    luthier_status s;
    size_t sl, e;
    luthier__op_nd_init(&j, data, idx, y, r, dsh, q, ish, 0);
    if ((s = luthier__op_check_indices(ctx, "scatter_nd", idx, j.slices * j.m, j.m, j.lens)) != LUTHIER_STATUS_OK) return s;
    if (y != data) memcpy(y, data, j.bstride * sizeof(float));
    for (sl = 0; sl < j.slices; sl++) {
        float *t = y + luthier__op_nd_offset(&j, sl);
        const float *u = upd + sl * j.len;
        for (e = 0; e < j.len; e++) t[e] = luthier__op_scatter_one(red, t[e], u[e]);
    }
    return LUTHIER_STATUS_OK;
}

/* >>ops-reduce: reductions over any set of axes (ONNX Reduce*). The shape is first folded into
   runs of adjacent axes that are all reduced or all kept; each output element then walks its
   reduced elements with an odometer over the reduced runs. Sums accumulate in double. */
enum {
    LUTHIER__RED_MAX, LUTHIER__RED_MIN, LUTHIER__RED_SUM, LUTHIER__RED_MEAN, LUTHIER__RED_PROD, LUTHIER__RED_L1,
    LUTHIER__RED_L2, LUTHIER__RED_LOG_SUM, LUTHIER__RED_LOG_SUM_EXP, LUTHIER__RED_SUM_SQUARE, LUTHIER__RED_COUNT
};

typedef struct luthier__op_reduce_job {
    const float *x;
    float *y;
    int kind;
    int nkeep, nred;                    /* runs */
    size_t keep_len[LUTHIER_MAX_RANK], keep_stride[LUTHIER_MAX_RANK];
    size_t red_len[LUTHIER_MAX_RANK], red_stride[LUTHIER_MAX_RANK];
    size_t count;                       /* reduced elements per output */
    size_t per_unit, outputs;
} luthier__op_reduce_job;

/* One output: the kind's value over the reduced elements from x + base. */
LUTHIER_PRIVATE float luthier__op_reduce_one(const luthier__op_reduce_job *j, const float *x) {
    size_t idx[LUTHIER_MAX_RANK] = {0}, off = 0, e;
    double acc = j->kind == LUTHIER__RED_PROD ? 1.0 : 0.0, m = -INFINITY;
    float best = x[0];
    int pass, k;
    for (pass = j->kind == LUTHIER__RED_LOG_SUM_EXP ? 0 : 1; pass < 2; pass++) {
        memset(idx, 0, sizeof idx);
        off = 0;
        for (e = 0; e < j->count; e++) {
            const float v = x[off];
            if (pass == 0) m = v > m || v != v ? v : m;
            else switch (j->kind) {
            case LUTHIER__RED_MAX: best = v > best || v != v ? v : best; break;
            case LUTHIER__RED_MIN: best = v < best || v != v ? v : best; break;
            case LUTHIER__RED_PROD: acc *= v; break;
            case LUTHIER__RED_L1: acc += fabs((double)v); break;
            case LUTHIER__RED_L2: case LUTHIER__RED_SUM_SQUARE: acc += (double)v * v; break;
            case LUTHIER__RED_LOG_SUM_EXP: acc += exp((double)v - m); break;
            default: acc += v; break;
            }
            if (best != best) return best; /* NaN propagates (as PyTorch's amax/amin) */
            for (k = j->nred - 1; k >= 0; k--) { /* odometer over the reduced runs */
                off += j->red_stride[k];
                if (++idx[k] < j->red_len[k]) break;
                off -= j->red_stride[k] * j->red_len[k];
                idx[k] = 0;
            }
        }
        if (pass == 0 && !(m - m == 0)) return (float)m; /* +-inf or NaN: the max is the result */
    }
    switch (j->kind) {
    case LUTHIER__RED_MAX: case LUTHIER__RED_MIN: return best;
    case LUTHIER__RED_MEAN: return (float)(acc / (double)j->count);
    case LUTHIER__RED_L2: return (float)sqrt(acc);
    case LUTHIER__RED_LOG_SUM: return (float)log(acc);
    case LUTHIER__RED_LOG_SUM_EXP: return (float)(m + log(acc));
    default: return (float)acc;
    }
}

LUTHIER_PRIVATE void luthier__op_reduce_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_reduce_job *j = (const luthier__op_reduce_job *)arg;
    const size_t o_end = luthier__min_sz(j->outputs, ue * j->per_unit);
    size_t o;
    (void)thread;
    (void)cl;
    for (o = ub * j->per_unit; o < o_end; o++) {
        size_t rem = o, base = 0;
        int k;
        for (k = j->nkeep - 1; k >= 0; k--) {
            base += rem % j->keep_len[k] * j->keep_stride[k];
            rem /= j->keep_len[k];
        }
        j->y[o] = luthier__op_reduce_one(j, j->x + base);
    }
}

/* The reduction of nothing (a reduced axis of run-time length 0), as ONNX's Reduce* define it
   for an empty set: max -inf, min +inf, sum, L1, L2, sum of squares 0, prod 1, log-sum and
   log-sum-exp -inf (log 0), mean NaN (0 / 0). */
LUTHIER_PRIVATE luthier_status luthier__op_reduce_empty(float *y, size_t outputs, int kind) {
    float v = 0.0f;
    size_t o;
    if (kind == LUTHIER__RED_MAX || kind == LUTHIER__RED_LOG_SUM || kind == LUTHIER__RED_LOG_SUM_EXP) v = -INFINITY;
    else if (kind == LUTHIER__RED_MIN) v = INFINITY;
    else if (kind == LUTHIER__RED_PROD) v = 1.0f;
    else if (kind == LUTHIER__RED_MEAN) v = NAN;
    for (o = 0; o < outputs; o++) y[o] = v;
    return LUTHIER_STATUS_OK;
}

/* y = kind-reduction of x [shape, rank] over the axes with red[axis] != 0; y holds the kept
   axes in order (keepdims only changes the shape, not the data). An extent 0 (a run-time
   length) along a reduced axis gives luthier__op_reduce_empty's values. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_reduce(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                  const float *x, float *y, int rank,
                                                                  const int64_t *shape, const int *red, int kind) {
    luthier__op_reduce_job j;
    size_t stride = 1;
    int k, last = -1;
    if ((unsigned)kind >= (unsigned)LUTHIER__RED_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "reduce: unknown kind %d", kind);
    memset(&j, 0, sizeof j);
    j.x = x, j.y = y, j.kind = kind, j.count = j.outputs = 1;
    for (k = rank - 1; k >= 0; k--) { /* runs, innermost first, then reversed below */
        const size_t len = (size_t)shape[k];
        const int r = red[k] != 0;
        if (len == 1) continue;
        if (r == last) { /* same kind as the run being built: merge */
            if (r) j.red_len[j.nred - 1] *= len;
            else j.keep_len[j.nkeep - 1] *= len;
        } else if (r) {
            j.red_len[j.nred] = len, j.red_stride[j.nred++] = stride;
        } else {
            j.keep_len[j.nkeep] = len, j.keep_stride[j.nkeep++] = stride;
        }
        last = r;
        stride *= len;
        if (r) j.count *= len;
        else j.outputs *= len;
    }
    for (k = 0; k < j.nred / 2; k++) { /* outermost first */
        size_t t = j.red_len[k]; j.red_len[k] = j.red_len[j.nred - 1 - k]; j.red_len[j.nred - 1 - k] = t;
        t = j.red_stride[k]; j.red_stride[k] = j.red_stride[j.nred - 1 - k]; j.red_stride[j.nred - 1 - k] = t;
    }
    for (k = 0; k < j.nkeep / 2; k++) {
        size_t t = j.keep_len[k]; j.keep_len[k] = j.keep_len[j.nkeep - 1 - k]; j.keep_len[j.nkeep - 1 - k] = t;
        t = j.keep_stride[k]; j.keep_stride[k] = j.keep_stride[j.nkeep - 1 - k]; j.keep_stride[j.nkeep - 1 - k] = t;
    }
    if (j.count == 0) return luthier__op_reduce_empty(y, j.outputs, kind);
    j.per_unit = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, j.count));
    return luthier__op_run(ctx, cfg, luthier__div_up(j.outputs, j.per_unit), luthier__op_reduce_range, &j);
}

/* >>ops-index: ARGMAX/ARGMIN, TOPK, CUMSUM (rows of `len` elements along one axis, stride
   `inner`, outer * inner rows) and TRILU. Plain C: these are control-bound, not streaming. */
typedef struct luthier__op_rows_job {
    const float *x;
    float *y;       /* TOPK values, CUMSUM and TRILU output */
    int64_t *yi;    /* ARGMAX/ARGMIN and TOPK indices */
    size_t outer, len, inner, k, per_unit;
    int flag_a, flag_b; /* argext: is_min, last; topk: largest; cumsum: exclusive, reverse */
    int64_t diag;       /* TRILU: k */
    size_t rows, cols;  /* TRILU: the last two axes */
    unsigned features;  /* CUMSUM: the ISA of its rows (ctx->cpu_features) */
    int stream;         /* CUMSUM: streaming stores (luthier__op_stream) */
} luthier__op_rows_job;

/* Rows [ub, ue) units of per_unit rows: fn(job, base of x, row's output position). */
#define LUTHIER__OP_ROWS_LOOP(j, ub, ue, body)                                                           \
    do {                                                                                                 \
        const size_t r_end_ = luthier__min_sz((j)->outer * (j)->inner, (ue) * (j)->per_unit);           \
        size_t r_;                                                                                       \
        for (r_ = (ub) * (j)->per_unit; r_ < r_end_; r_++) {                                             \
            const size_t o_ = r_ / (j)->inner, i_ = r_ % (j)->inner;                                     \
            body(j, o_ * (j)->len * (j)->inner + i_, o_, i_);                                            \
        }                                                                                                \
    } while (0)

/* The position of the row's maximum (minimum with is_min): the first one, the last one with
   last; a NaN wins over every number (the first NaN, or the last with last), as numpy and
   PyTorch. */
LUTHIER_PRIVATE int64_t luthier__op_argext_row(const float *x, size_t len, size_t stride, int is_min, int last) {
    float best = x[0];
    size_t b = 0, j;
    int nan = best != best;
    for (j = 1; j < len; j++) {
        const float v = x[j * stride];
        if (nan) {
            if (last && v != v) b = j;
        } else if (v != v) {
            nan = 1, b = j;
        } else if (is_min ? (v < best || (last && v == best)) : (v > best || (last && v == best))) {
            best = v, b = j;
        }
    }
    return (int64_t)b;
}

#define LUTHIER__OP_ARGEXT_BODY(j, base, o, i) \
    (j)->yi[(o) * (j)->inner + (i)] = luthier__op_argext_row((j)->x + (base), (j)->len, (j)->inner, (j)->flag_a, (j)->flag_b)

LUTHIER_PRIVATE void luthier__op_argext_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_rows_job *j = (const luthier__op_rows_job *)arg;
    (void)thread, (void)cl;
    LUTHIER__OP_ROWS_LOOP(j, ub, ue, LUTHIER__OP_ARGEXT_BODY);
}

LUTHIER_PRIVATE size_t luthier__op_rows_per_unit(size_t len) {
    return luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, len));
}

/* yi[outer][inner] = the arg max (arg min) of x[outer][len][inner] along len. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_argext(luthier_context *ctx, const luthier__op_cfg *cfg, const float *x,
                                                                  int64_t *yi, size_t outer, size_t len, size_t inner, int is_min,
                                                                  int last) {
    luthier__op_rows_job j;
    memset(&j, 0, sizeof j);
    j.x = x, j.yi = yi, j.outer = outer, j.len = len, j.inner = inner, j.flag_a = is_min, j.flag_b = last;
    j.per_unit = luthier__op_rows_per_unit(len);
    return luthier__op_run(ctx, cfg, luthier__div_up(outer * inner, j.per_unit), luthier__op_argext_range, &j);
}

/* TOPK's order as one integer, smaller first: the value's bits mapped to an unsigned order (-0
   as +0, every NaN above +inf: numpy's sort order, torch.topk), flipped for largest, then the
   index, so equal values go by the lower index. A total order: ties are stable and the result
   does not depend on the split. Rows are at most 2^32 long (the infer hook checks). */
LUTHIER_PRIVATE uint64_t luthier__op_topk_key(float v, size_t j, int largest) {
    uint32_t u;
    if (v == 0) v = 0.0f;
    memcpy(&u, &v, 4);
    u = v != v ? 0xFFFFFFFFu : (u & 0x80000000u) ? ~u : u | 0x80000000u;
    if (largest) u = ~u;
    return (uint64_t)u << 32 | (uint64_t)j;
}

/* The heap of a TOPK row lives in its index output (keys at stride s, a max-heap: the root is
   the worst kept element). */
LUTHIER_PRIVATE void luthier__op_topk_sift(uint64_t *h, size_t s, size_t at, size_t n) {
    const uint64_t key = h[at * s];
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= n) break;
        if (c + 1 < n && h[(c + 1) * s] > h[c * s]) c++;
        if (h[c * s] <= key) break;
        h[at * s] = h[c * s];
        at = c;
    }
    h[at * s] = key;
}

/* One row: the k first elements of x (stride s) in the order, best first, values and indices
   at stride s. O(len log k): a heap of k, then a heap sort of the k. */
LUTHIER_PRIVATE void luthier__op_topk_row(const float *x, size_t len, size_t s, size_t k, int largest, float *v, int64_t *ix) {
    uint64_t *h = (uint64_t *)(void *)ix;
    size_t j, m;
    for (j = 0; j < len; j++) {
        const uint64_t key = luthier__op_topk_key(x[j * s], j, largest);
        if (j < k) { /* grow: sift it up */
            size_t at = j;
            while (at > 0 && h[(at - 1) / 2 * s] < key) {
                h[at * s] = h[(at - 1) / 2 * s];
                at = (at - 1) / 2;
            }
            h[at * s] = key;
        } else if (key < h[0]) {
            h[0] = key;
            luthier__op_topk_sift(h, s, 0, k);
        }
    }
    for (m = k; m > 1; m--) { /* heap sort: the worst to the end */
        const uint64_t t = h[0];
        h[0] = h[(m - 1) * s];
        h[(m - 1) * s] = t;
        luthier__op_topk_sift(h, s, 0, m - 1);
    }
    for (m = 0; m < k; m++) { /* keys to indices; the values as they are (-0, NaN payloads) */
        const size_t at = (size_t)(h[m * s] & 0xFFFFFFFFu);
        ix[m * s] = (int64_t)at;
        v[m * s] = x[at * s];
    }
}

#define LUTHIER__OP_TOPK_BODY(j, base, o, i)                                                                   \
    luthier__op_topk_row((j)->x + (base), (j)->len, (j)->inner, (j)->k, (j)->flag_a,                          \
                         (j)->y + (o) * (j)->k * (j)->inner + (i), (j)->yi + (o) * (j)->k * (j)->inner + (i))

LUTHIER_PRIVATE void luthier__op_topk_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_rows_job *j = (const luthier__op_rows_job *)arg;
    (void)thread, (void)cl;
    LUTHIER__OP_ROWS_LOOP(j, ub, ue, LUTHIER__OP_TOPK_BODY);
}

/* v, ix [outer][k][inner] = the k first elements of x [outer][len][inner] along len (1 <= k <= len). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_topk(luthier_context *ctx, const luthier__op_cfg *cfg, const float *x,
                                                                float *v, int64_t *ix, size_t outer, size_t len, size_t inner,
                                                                size_t k, int largest) {
    luthier__op_rows_job j;
    if (k < 1 || k > len) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "topk: k %zu is not in [1, %zu]", k, len);
    memset(&j, 0, sizeof j);
    j.x = x, j.y = v, j.yi = ix, j.outer = outer, j.len = len, j.inner = inner, j.k = k, j.flag_a = largest;
    j.per_unit = luthier__op_rows_per_unit(len);
    return luthier__op_run(ctx, cfg, luthier__div_up(outer * inner, j.per_unit), luthier__op_topk_range, &j);
}

/* CUMSUM, accumulated in double: y_j = sum of x_i for i <= j (i < j when exclusive; i >= j,
   i > j when reverse). In place is fine (each x is read before its y is written). */

/* Eight elements of a contiguous cumsum row in registers, in double: the row's vectors of 2 doubles
   take their in-vector prefix sums (shift and add), then the sums of the vectors before them in
   the block, then the carry c (the total so far, in every lane), which moves on by the block's
   own total (one add on the carried chain per 8 elements). Exclusive sums are the inclusive ones
   one lane later (c first). reverse: the block is x[0], x[-1], .., x[-7] (and so is y's). */
#if LUTHIER__SIMD_X86
#define LUTHIER__CS_D __m128d
#define LUTHIER__CS_LO(v) _mm_cvtps_pd(v)                     /* floats 0, 1 */
#define LUTHIER__CS_HI(v) _mm_cvtps_pd(_mm_movehl_ps((v), (v))) /* floats 2, 3 */
#define LUTHIER__CS_SHL(a) _mm_unpacklo_pd(_mm_setzero_pd(), (a)) /* (0, a0) */
#define LUTHIER__CS_DUP1(a) _mm_unpackhi_pd((a), (a))           /* (a1, a1) */
#define LUTHIER__CS_EXT(a, b) _mm_shuffle_pd((a), (b), 1)       /* (a1, b0) */
#define LUTHIER__CS_ADD(a, b) _mm_add_pd((a), (b))
#define LUTHIER__CS_PACK(a, b) _mm_movelh_ps(_mm_cvtpd_ps(a), _mm_cvtpd_ps(b))
#define LUTHIER__CS_F __m128
#define LUTHIER__CS_SPLAT(v) _mm_set1_pd(v)
#define LUTHIER__CS_GET(c) _mm_cvtsd_f64(c)
#define LUTHIER__CS_LOAD(p, rev) ((rev) ? _mm_shuffle_ps(_mm_loadu_ps((p) - 3), _mm_loadu_ps((p) - 3), 0x1B) : _mm_loadu_ps(p))
#define LUTHIER__CS_STORE(p, v, rev) ((rev) ? _mm_storeu_ps((p) - 3, _mm_shuffle_ps((v), (v), 0x1B)) : _mm_storeu_ps((p), (v)))
#elif LUTHIER__SIMD_NEON
#define LUTHIER__CS_D float64x2_t
#define LUTHIER__CS_LO(v) vcvt_f64_f32(vget_low_f32(v))
#define LUTHIER__CS_HI(v) vcvt_high_f64_f32(v)
#define LUTHIER__CS_SHL(a) vzip1q_f64(vdupq_n_f64(0.0), (a))
#define LUTHIER__CS_DUP1(a) vdupq_laneq_f64((a), 1)
#define LUTHIER__CS_EXT(a, b) vextq_f64((a), (b), 1)
#define LUTHIER__CS_ADD(a, b) vaddq_f64((a), (b))
#define LUTHIER__CS_PACK(a, b) vcombine_f32(vcvt_f32_f64(a), vcvt_f32_f64(b))
#define LUTHIER__CS_F float32x4_t
#define LUTHIER__CS_SPLAT(v) vdupq_n_f64(v)
#define LUTHIER__CS_GET(c) vgetq_lane_f64((c), 0)
#define LUTHIER__CS_REV(v) vextq_f32(vrev64q_f32(v), vrev64q_f32(v), 2)
#define LUTHIER__CS_LOAD(p, rev) ((rev) ? LUTHIER__CS_REV(vld1q_f32((p) - 3)) : vld1q_f32(p))
#define LUTHIER__CS_STORE(p, v, rev) ((rev) ? vst1q_f32((p) - 3, LUTHIER__CS_REV(v)) : vst1q_f32((p), (v)))
#endif
#ifdef LUTHIER__CS_D
LUTHIER__INLINE void luthier__op_cumsum8(const float *x, float *y, int exclusive, int reverse, LUTHIER__CS_D *c) {
    const ptrdiff_t d4 = reverse ? -4 : 4;
    const LUTHIER__CS_F u = LUTHIER__CS_LOAD(x, reverse), w = LUTHIER__CS_LOAD(x + d4, reverse);
    LUTHIER__CS_D a = LUTHIER__CS_LO(u), b = LUTHIER__CS_HI(u), e = LUTHIER__CS_LO(w), f = LUTHIER__CS_HI(w), t;
    a = LUTHIER__CS_ADD(a, LUTHIER__CS_SHL(a)); /* (x0, x0 + x1) */
    b = LUTHIER__CS_ADD(b, LUTHIER__CS_SHL(b));
    e = LUTHIER__CS_ADD(e, LUTHIER__CS_SHL(e));
    f = LUTHIER__CS_ADD(f, LUTHIER__CS_SHL(f));
    b = LUTHIER__CS_ADD(b, LUTHIER__CS_DUP1(a)); /* sums of x0..x3 */
    f = LUTHIER__CS_ADD(f, LUTHIER__CS_DUP1(e));
    t = LUTHIER__CS_DUP1(b);
    e = LUTHIER__CS_ADD(e, t); /* sums of x0..x7 */
    f = LUTHIER__CS_ADD(f, t);
    t = *c;
    *c = LUTHIER__CS_ADD(t, LUTHIER__CS_DUP1(f));
    a = LUTHIER__CS_ADD(a, t), b = LUTHIER__CS_ADD(b, t), e = LUTHIER__CS_ADD(e, t), f = LUTHIER__CS_ADD(f, t);
    if (exclusive) {
        f = LUTHIER__CS_EXT(e, f), e = LUTHIER__CS_EXT(b, e), b = LUTHIER__CS_EXT(a, b);
        a = LUTHIER__CS_EXT(LUTHIER__CS_DUP1(t), a);
    }
    LUTHIER__CS_STORE(y, LUTHIER__CS_PACK(a, b), reverse);
    LUTHIER__CS_STORE(y + d4, LUTHIER__CS_PACK(e, f), reverse);
}
#endif

#if LUTHIER__SIMD_X86
/* The same block of 8 on AVX2 as two vectors of 4 doubles (loads and stores of 4 floats): each
   vector's in-vector prefix sums in 2 shift-and-add steps (lanes move up by 1, then 2, zeros
   coming in), the second adds the first's last lane, both add the running total c (every lane),
   and c moves on by the block's total (the second vector's last lane before c, broadcast): one add
   per block on the carried chain. nt: streaming stores (y's 4-float runs aligned to them). */
#define LUTHIER__CS_UP1(q) _mm256_blend_pd(_mm256_permute4x64_pd((q), 0x90), _mm256_setzero_pd(), 1) /* (0, q0, q1, q2) */
#define LUTHIER__CS_PUT(p, v, rev, nt)                                                           \
    do {                                                                                         \
        if (nt) _mm_stream_ps((rev) ? (p) - 3 : (p), (rev) ? _mm_shuffle_ps((v), (v), 0x1B) : (v)); \
        else LUTHIER__CS_STORE(p, v, rev);                                                       \
    } while (0)
LUTHIER__TARGET_AVX2 LUTHIER__INLINE void luthier__op_cumsum8_avx2(const float *x, float *y, int exclusive, int reverse, int nt,
                                                                 __m256d *c) {
    const ptrdiff_t d4 = reverse ? -4 : 4;
    const __m256d t = *c;
    __m256d a = _mm256_cvtps_pd(LUTHIER__CS_LOAD(x, reverse)), b = _mm256_cvtps_pd(LUTHIER__CS_LOAD(x + d4, reverse)), s;
    a = _mm256_add_pd(a, LUTHIER__CS_UP1(a)), b = _mm256_add_pd(b, LUTHIER__CS_UP1(b));
    a = _mm256_add_pd(a, _mm256_permute2f128_pd(a, a, 0x08)); /* + (0, 0, a0, a1) */
    b = _mm256_add_pd(b, _mm256_permute2f128_pd(b, b, 0x08));
    b = _mm256_add_pd(b, _mm256_permute4x64_pd(a, 0xFF));
    s = _mm256_permute4x64_pd(b, 0xFF); /* the block's total */
    a = _mm256_add_pd(a, t), b = _mm256_add_pd(b, t);
    if (exclusive) {
        b = _mm256_blend_pd(_mm256_permute4x64_pd(b, 0x90), _mm256_permute4x64_pd(a, 0xFF), 1); /* (a3, b0, b1, b2) */
        a = _mm256_blend_pd(_mm256_permute4x64_pd(a, 0x90), t, 1);                             /* (c, a0, a1, a2) */
    }
    *c = _mm256_add_pd(t, s);
    LUTHIER__CS_PUT(y, _mm256_cvtpd_ps(a), reverse, nt);
    LUTHIER__CS_PUT(y + d4, _mm256_cvtpd_ps(b), reverse, nt);
}

/* The whole blocks of 8 of a row on AVX2 (two per step: the second's scan overlaps the first's).
   x, y: the row's first element (its last when reverse). Returns the elements done, the total so
   far in *acc. (On AVX-512 too: two vectors of 8 doubles per 16 floats measured 1.3x slower on
   the scan's lane-crossing shuffles, see bench/RESULTS.md.) */
LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE size_t luthier__op_cumsum_avx2(const float *x, float *y, size_t len, int exclusive, int reverse,
                                                                  int nt, double *acc) {
    const ptrdiff_t d = reverse ? -1 : 1;
    __m256d c = _mm256_set1_pd(*acc);
    size_t t;
    nt = nt && ((uintptr_t)(reverse ? y - 3 : y) & 15) == 0;
#define LUTHIER__CS_RUN(ex, rev) /* (the flags constant in each loop) */                              \
    for (t = 0; t + 16 <= len; t += 16) {                                                                 \
        luthier__op_cumsum8_avx2(x + (ptrdiff_t)t * d, y + (ptrdiff_t)t * d, ex, rev, nt, &c);            \
        luthier__op_cumsum8_avx2(x + (ptrdiff_t)(t + 8) * d, y + (ptrdiff_t)(t + 8) * d, ex, rev, nt, &c); \
    }
    if (reverse) {
        if (exclusive) LUTHIER__CS_RUN(1, 1) else LUTHIER__CS_RUN(0, 1)
    } else {
        if (exclusive) LUTHIER__CS_RUN(1, 0) else LUTHIER__CS_RUN(0, 0)
    }
#undef LUTHIER__CS_RUN
    if (t + 8 <= len) luthier__op_cumsum8_avx2(x + (ptrdiff_t)t * d, y + (ptrdiff_t)t * d, exclusive, reverse, nt, &c), t += 8;
    if (nt) _mm_sfence();
    *acc = _mm_cvtsd_f64(_mm256_castpd256_pd128(c));
    return t;
}
#undef LUTHIER__CS_UP1
#undef LUTHIER__CS_PUT
#endif

/* One contiguous row (inner 1) in blocks of 8 (luthier__op_cumsum_avx2 where features have AVX2,
   else luthier__op_cumsum8 where there are vectors of 2 doubles): the block's own prefix sums
   first (a short chain that does not wait for the running total, so blocks overlap), then the
   total added to each and advanced once per block: the total's dependency chain is one addition
   per 8 elements. nt: streaming stores (luthier__op_stream) on AVX2. */
LUTHIER_PRIVATE void luthier__op_cumsum_row(const float *x, float *y, size_t len, int exclusive, int reverse, unsigned features,
                                            int nt) {
    const ptrdiff_t d = reverse ? -1 : 1;
    const float *xp = reverse ? x + len - 1 : x;
    float *yp = reverse ? y + len - 1 : y;
    double acc = 0;
    size_t t = 0;
    if (!len) return;
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX2_FMA) t = luthier__op_cumsum_avx2(xp, yp, len, exclusive, reverse, nt, &acc);
#endif
    (void)features, (void)nt;
#ifdef LUTHIER__CS_D
    {
        LUTHIER__CS_D c = LUTHIER__CS_SPLAT(acc);
        for (; t + 8 <= len; t += 8) luthier__op_cumsum8(xp + (ptrdiff_t)t * d, yp + (ptrdiff_t)t * d, exclusive, reverse, &c);
        acc = LUTHIER__CS_GET(c);
    }
#endif
    for (; t + 8 <= len; t += 8) { /* without 2-double vectors */
        const float *xb = xp + (ptrdiff_t)t * d;
        float *yb = yp + (ptrdiff_t)t * d;
        const double s0 = xb[0], s1 = s0 + xb[d], s2 = s1 + xb[2 * d], s3 = s2 + xb[3 * d];
        const double s4 = s3 + xb[4 * d], s5 = s4 + xb[5 * d], s6 = s5 + xb[6 * d], s7 = s6 + xb[7 * d];
        if (exclusive) {
            yb[0] = (float)acc, yb[d] = (float)(acc + s0), yb[2 * d] = (float)(acc + s1), yb[3 * d] = (float)(acc + s2);
            yb[4 * d] = (float)(acc + s3), yb[5 * d] = (float)(acc + s4), yb[6 * d] = (float)(acc + s5), yb[7 * d] = (float)(acc + s6);
        } else {
            yb[0] = (float)(acc + s0), yb[d] = (float)(acc + s1), yb[2 * d] = (float)(acc + s2), yb[3 * d] = (float)(acc + s3);
            yb[4 * d] = (float)(acc + s4), yb[5 * d] = (float)(acc + s5), yb[6 * d] = (float)(acc + s6), yb[7 * d] = (float)(acc + s7);
        }
        acc += s7;
    }
    for (; t < len; t++) { /* the last len % 8 in sequence */
        const double v = xp[(ptrdiff_t)t * d];
        if (exclusive) yp[(ptrdiff_t)t * d] = (float)acc, acc += v;
        else acc += v, yp[(ptrdiff_t)t * d] = (float)acc;
    }
}

/* The ISA of a contiguous cumsum row, as luthier__op_cumsum_row picks it (rows along an inner
   axis, inner > 1, are plain C). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__op_cumsum_isa(unsigned features) {
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX2_FMA) return LUTHIER__ISA_AVX2;
#endif
    (void)features;
#ifdef LUTHIER__CS_D
    return LUTHIER__ISA_PORTABLE;
#else
    return LUTHIER__ISA_SCALAR;
#endif
}

#undef LUTHIER__CS_D
#undef LUTHIER__CS_LO
#undef LUTHIER__CS_HI
#undef LUTHIER__CS_SHL
#undef LUTHIER__CS_DUP1
#undef LUTHIER__CS_EXT
#undef LUTHIER__CS_ADD
#undef LUTHIER__CS_PACK
#undef LUTHIER__CS_F
#undef LUTHIER__CS_SPLAT
#undef LUTHIER__CS_GET
#undef LUTHIER__CS_REV
#undef LUTHIER__CS_LOAD
#undef LUTHIER__CS_STORE

/* nc <= 16 adjacent columns (row stride s): one running total per column, the columns of a row
   side by side (independent chains), each column summed in its own order as a single row would. */
LUTHIER_PRIVATE void luthier__op_cumsum_cols(const float *x, float *y, size_t len, size_t s, size_t nc, int exclusive, int reverse) {
    double acc[16];
    size_t t, c;
    for (c = 0; c < nc; c++) acc[c] = 0;
    for (t = 0; t < len; t++) {
        const size_t off = (reverse ? len - 1 - t : t) * s;
        if (exclusive)
            for (c = 0; c < nc; c++) {
                const double v = x[off + c];
                y[off + c] = (float)acc[c];
                acc[c] += v;
            }
        else
            for (c = 0; c < nc; c++) y[off + c] = (float)(acc[c] += x[off + c]);
    }
}

/* Units of per_unit (outer, inner) columns; adjacent columns of one outer index go together. */
LUTHIER_PRIVATE void luthier__op_cumsum_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_rows_job *j = (const luthier__op_rows_job *)arg;
    const size_t end = luthier__min_sz(j->outer * j->inner, ue * j->per_unit);
    size_t r = ub * j->per_unit;
    (void)thread, (void)cl;
    while (r < end) {
        const size_t o = r / j->inner, i = r % j->inner, base = o * j->len * j->inner + i;
        const size_t nc = luthier__min_sz(luthier__min_sz(16, j->inner - i), end - r);
        if (j->inner == 1) luthier__op_cumsum_row(j->x + base, j->y + base, j->len, j->flag_a, j->flag_b, j->features, j->stream);
        else luthier__op_cumsum_cols(j->x + base, j->y + base, j->len, j->inner, nc, j->flag_a, j->flag_b);
        r += nc;
    }
}

LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_cumsum(luthier_context *ctx, const luthier__op_cfg *cfg, const float *x,
                                                                  float *y, size_t outer, size_t len, size_t inner, int exclusive,
                                                                  int reverse) {
    luthier__op_rows_job j;
    memset(&j, 0, sizeof j);
    j.x = x, j.y = y, j.outer = outer, j.len = len, j.inner = inner, j.flag_a = exclusive, j.flag_b = reverse;
    j.per_unit = luthier__op_rows_per_unit(len);
    j.features = ctx->cpu_features, j.stream = luthier__op_stream(ctx, y, outer * len * inner, x, NULL);
    return luthier__op_run(ctx, cfg, luthier__div_up(outer * inner, j.per_unit), luthier__op_cumsum_range, &j);
}

LUTHIER_PRIVATE void luthier__op_trilu_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_rows_job *j = (const luthier__op_rows_job *)arg;
    const size_t end = luthier__min_sz(j->outer * j->rows * j->cols, ue * LUTHIER__OP_GRAIN);
    size_t e;
    (void)thread, (void)cl;
    for (e = ub * LUTHIER__OP_GRAIN; e < end; e++) {
        const int64_t c = (int64_t)(e % j->cols), r = (int64_t)(e / j->cols % j->rows);
        const int keep = j->flag_a ? c - r >= j->diag : c - r <= j->diag;
        j->y[e] = keep ? j->x[e] : 0.0f;
    }
}

/* y = the upper (upper != 0: column - row >= k) or lower (column - row <= k) triangle of each
   [rows, cols] matrix of x [batch][rows][cols], zeros elsewhere. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_trilu(luthier_context *ctx, const luthier__op_cfg *cfg, const float *x,
                                                                 float *y, size_t batch, size_t rows, size_t cols, int upper,
                                                                 int64_t k) {
    luthier__op_rows_job j;
    memset(&j, 0, sizeof j);
    j.x = x, j.y = y, j.outer = batch, j.rows = rows, j.cols = cols, j.flag_a = upper, j.diag = k;
    return luthier__op_run(ctx, cfg, luthier__div_up(batch * rows * cols, LUTHIER__OP_GRAIN), luthier__op_trilu_range, &j);
}

/* >>ops-resize: the taps of one axis (see luthier__op_rs_plan): mode 0 nearest, 1 linear,
   2 cubic; coord and nearest as luthier_resize_coord / luthier_resize_nearest; s: the axis's
   scale (given, or out / in), len: the resized length in * s (out when sizes are given), which
   align_corners, pytorch_half_pixel and half_pixel_symmetric read (as ONNX does). Coordinates
   in double. */
LUTHIER_PRIVATE double luthier__op_resize_coord(int coord, size_t o, size_t in, size_t out, double len, double s) {
    const double x = (double)o;
    switch (coord) {
    case 1: return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;                              /* pytorch_half_pixel */
    case 2: return len > 1 ? x * (double)(in - 1) / (len - 1) : 0.0;                 /* align_corners */
    case 3: return x / s;                                                             /* asymmetric */
    case 4: return (double)in / 2 * (1 - (double)out / len) + (x + 0.5) / s - 0.5;   /* half_pixel_symmetric */
    case 5: return (x + 0.5) / s;                                                     /* tf_half_pixel_for_nn */
    default: return (x + 0.5) / s - 0.5;                                              /* half_pixel */
    }
}

LUTHIER_PRIVATE double luthier__op_cubic_w(double d, double a) {
    d = fabs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

LUTHIER__UNUSED LUTHIER_PRIVATE void luthier__op_resize_axis(int mode, int coord, int nearest, double cubic_a, int exclude,
                                                             size_t in, size_t out, double len, double scale, size_t *idx,
                                                             float *wt) {
    const int taps = mode == 0 ? 1 : mode == 1 ? 2 : 4;
    size_t o;
    for (o = 0; o < out; o++) {
        const double x = luthier__op_resize_coord(coord, o, in, out, len, scale), fl = floor(x), t = x - fl;
        double w[4], sum = 0;
        ptrdiff_t base, i;
        int k;
        if (mode == 0) {
            double r = nearest == 3 ? ceil(x) : nearest == 2 ? fl : (t < 0.5 || (t == 0.5 && nearest == 0)) ? fl : fl + 1;
            r = r < 0 ? 0 : r > (double)(in - 1) ? (double)(in - 1) : r;
            idx[o] = (size_t)r;
            wt[o] = 1.0f;
            continue;
        }
        if (mode == 1) {
            w[0] = 1 - t, w[1] = t, base = (ptrdiff_t)fl;
        } else {
            w[0] = luthier__op_cubic_w(t + 1, cubic_a), w[1] = luthier__op_cubic_w(t, cubic_a);
            w[2] = luthier__op_cubic_w(1 - t, cubic_a), w[3] = luthier__op_cubic_w(2 - t, cubic_a);
            base = (ptrdiff_t)fl - 1;
        }
        for (k = 0; k < taps; k++) {
            i = base + k;
            if (exclude && (i < 0 || i >= (ptrdiff_t)in)) w[k] = 0;
            sum += w[k];
            idx[o * (size_t)taps + (size_t)k] = i < 0 ? 0 : i >= (ptrdiff_t)in ? in - 1 : (size_t)i;
        }
        for (k = 0; k < taps; k++) wt[o * (size_t)taps + (size_t)k] = (float)(exclude && sum != 0 ? w[k] / sum : w[k]);
    }
}

/* y[outer][oh][ow][inner] = x[outer][h][w][inner] resized by rp. Not in place. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_resize(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                  const luthier__op_rs_plan *rp, const float *x, float *y,
                                                                  size_t outer, size_t inner) {
    luthier__op_rs_job j;
    const size_t work = luthier__max_sz(1, rp->ow * inner * (size_t)(rp->taps * rp->taps));
    j.rp = rp;
    j.x = x;
    j.y = y;
    j.outer = outer;
    j.inner = inner;
    j.rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / work);
    if (!outer || !inner || !rp->oh || !rp->ow) return luthier__op_run(ctx, cfg, 0, luthier__op_rs_range_base, &j);
    return luthier__op_run(ctx, cfg, luthier__div_up(outer * rp->oh, j.rpu), LUTHIER__OP_PICK(ctx, luthier__op_rs_range), &j);
}

/* >>ops-pad: input index of output index o on an axis (-1: the constant value). */
LUTHIER__INLINE ptrdiff_t luthier__op_pad_src(ptrdiff_t i, size_t len, int mode) {
    const ptrdiff_t n = (ptrdiff_t)len;
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case 1: {                                      /* reflect, repeatedly (numpy.pad) */
        const ptrdiff_t p = 2 * (n - 1), m = p ? (i % p + p) % p : 0;
        return m < n ? m : p - m;
    }
    case 2: return i < 0 ? 0 : n - 1;              /* edge */
    case 3: return (i % n + n) % n;                /* wrap */
    default: return -1;                            /* constant */
    }
}

LUTHIER_PRIVATE void luthier__op_pad_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_pad_job *j = (const luthier__op_pad_job *)arg;
    const int r = j->rank;
    const size_t ow = j->out[r - 1], iw = j->in[r - 1];
    const ptrdiff_t b = j->begin[r - 1];
    const ptrdiff_t h_ = (ptrdiff_t)iw + b < (ptrdiff_t)ow ? (ptrdiff_t)iw + b : (ptrdiff_t)ow;
    const size_t lo = (size_t)(b > 0 ? b : 0), hi = h_ > (ptrdiff_t)lo ? (size_t)h_ : lo; /* [lo, hi): inside */
    size_t row, row_end = luthier__min_sz(j->rows, ue * j->rpu), o;
    (void)thread;
    (void)cl;
    for (row = ub * j->rpu; row < row_end; row++) {
        float *yr = j->y + row * ow;
        const float *xr;
        size_t rest = row, src = 0, stride = iw;
        int d, outside = 0;
        for (d = r - 2; d >= 0; d--) {
            const ptrdiff_t i = luthier__op_pad_src((ptrdiff_t)(rest % j->out[d]) - j->begin[d], j->in[d], j->mode);
            rest /= j->out[d];
            if (i < 0) outside = 1;
            else src += (size_t)i * stride;
            stride *= j->in[d];
        }
        if (outside) {
            for (o = 0; o < ow; o++) yr[o] = j->value;
            continue;
        }
        xr = j->x + src;
        for (o = 0; o < lo && o < ow; o++) {
            const ptrdiff_t i = luthier__op_pad_src((ptrdiff_t)o - b, iw, j->mode);
            yr[o] = i < 0 ? j->value : xr[i];
        }
        if (hi > lo) memcpy(yr + lo, xr + (ptrdiff_t)lo - b, (hi - lo) * sizeof(float));
        for (o = hi; o < ow; o++) {
            const ptrdiff_t i = luthier__op_pad_src((ptrdiff_t)o - b, iw, j->mode);
            yr[o] = i < 0 ? j->value : xr[i];
        }
    }
}

/* y = x padded: axis d of in[d] elements becomes out[d] = in[d] + begin[d] + end[d] (pads may
   be negative); mode 0 constant (value), 1 reflect, 2 edge, 3 wrap (luthier_pad_mode). Rank 1..6,
   shapes checked by the plan. Not in place. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_pad(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                               const float *x, float *y, int rank, const int64_t *in,
                                                               const int64_t *out, const int64_t *begin, int mode,
                                                               float value) {
    luthier__op_pad_job j;
    int d;
    if (rank < 1 || rank > LUTHIER__OP_MAX_RANK)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "pad: rank %d (1..%d)", rank, LUTHIER__OP_MAX_RANK);
    j.x = x;
    j.y = y;
    j.rank = rank;
    j.mode = mode;
    j.value = value;
    j.rows = 1;
    for (d = 0; d < rank; d++) {
        j.in[d] = (size_t)in[d];
        j.out[d] = (size_t)out[d];
        j.begin[d] = (ptrdiff_t)begin[d];
        if (d < rank - 1) j.rows *= j.out[d];
    }
    j.rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, j.out[rank - 1]));
    return luthier__op_run(ctx, cfg, j.out[rank - 1] ? luthier__div_up(j.rows, j.rpu) : 0, luthier__op_pad_range, &j);
}

/* y = softmax(q k^T * scale [causal]) v; q [bh][sq][d], k [bh][skv][d], v [bh][skv][dv],
   y [bh][sq][dv]; causal: query i sees keys j <= i + (skv - sq); a query that sees no key
   gives 0. scratch: luthier__op_attention_scratch_floats(threads, sq, skv) floats. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_attention(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                     const float *q, const float *k, const float *v,
                                                                     float *y, size_t bh, size_t sq, size_t skv,
                                                                     size_t d, size_t dv, float scale, int causal,
                                                                     float *scratch) {
    luthier__op_att_job j;
    size_t units;
    j.q = q;
    j.k = k;
    j.v = v;
    j.y = y;
    j.scratch = scratch;
    j.bh = bh;
    j.sq = sq;
    j.skv = skv;
    j.d = d;
    j.dv = dv;
    j.scale = scale;
    j.causal = causal != 0;
    j.rows_path = luthier__op_vw(ctx) > 1 && sq >= LUTHIER__OP_ATT_ROWS_MIN && d <= LUTHIER__OP_ATT_DMAX;
    j.stride = luthier__op_attention_scratch_floats(1, sq, skv);
    j.blocks = luthier__div_up(sq, luthier__op_vw(ctx)); /* blocks of the lanes of the pass that runs */
    j.rpu = luthier__max_sz(1, LUTHIER__OP_GRAIN / luthier__max_sz(1, skv * (d + dv)));
    if (!bh || !sq || !dv) return luthier__op_run(ctx, cfg, 0, luthier__op_att_range_base, &j);
    if (!skv) { /* nothing to attend to */
        memset(y, 0, bh * sq * dv * sizeof(float));
        return luthier__op_run(ctx, cfg, 0, luthier__op_att_range_base, &j);
    }
    units = j.rows_path ? bh * j.blocks : luthier__div_up(bh * sq, j.rpu);
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_att_range), &j);
}

/* >>ops-u8 ===================================================================================

   uint8 quantized activations for the int8 engine: per tensor asymmetric, real = scale *
   (q - zero), zero in 0..255. Buffers are dense uint8 (NHWC for the pools). Units: 16384
   elements (element-wise), output rows (pools), (pixel, 256 channels) items (adaptive).
   - Plain C, no vector types: the kernels run on blocks of LUTHIER__U8_BLK elements (channels
     for the pools) through always-inline helpers called with a constant count, because GCC -O2
     (very-cheap cost model) only vectorizes loops whose trip count is known and that need no
     scalar epilogue or alias check; the remainder runs at a variable count (scalar code, same
     arithmetic). The bodies are inlined into one range function per ISA (_base / _avx2 /
     _avx512, picked by LUTHIER__OP_PICK) so that the AVX targets vectorize them wider.
   - qadd and the means of windows up to 256 taps read 4 bytes as one uint32 word (SWAR) and
     work on 32-bit lanes ((w >> 8s) & 255, or pairs of 16-bit sums): GCC widens bytes to int32
     with 2-3 shuffles per vector, which made those loops 2-3x slower.
   - Float results are one fixed sequence of IEEE operations per element with contraction off
     (no FMA), and pool means are exact integer arithmetic: results are identical for every
     ISA, vector width, split and thread count.
   - Rounding to nearest even goes through 1.5 * 2^23 (v + 1.5 * 2^23 is an integer, for |v| <=
     2^22) after a clamp to the integer bounds (clamp-then-round equals round-then-clamp when
     the bounds are integers): current rounding mode nearest assumed, no -ffast-math.
   - Pool means: q = (sum + cnt/2) / cnt computed as a float estimate corrected by one
     integer step each way (exact while sum + cnt/2 < 2^24, i.e. cnt <= 65536), windows of
     more than 65536 taps use uint64 sums and integer division. */

#define LUTHIER__U8_BLK ((size_t)64)
#define LUTHIER__U8_FAST_CNT ((uint32_t)65536) /* windows up to this many taps: uint32 + float path */
#define LUTHIER__U8_RNDC 12582912.0f           /* 1.5 * 2^23 */

/* GCC: no multiply-add contraction whatever -std / -ffp-contract say (the AVX passes have FMA):
   qadd's fa * da + fb * db must round both products. Clang contracts only within an expression
   by default; the products are separate statements and the qadd helper turns it off too. */
#if defined(__GNUC__) && !defined(__clang__)
#define LUTHIER__U8_KT __attribute__((optimize("fp-contract=off")))
#else
#define LUTHIER__U8_KT
#endif
/* GCC -O3 unrolls short constant loops completely before it vectorizes, and then vectorizes
   the straight-line SWAR sums badly (3x slower than -O2): keep that loop a loop */
#if defined(__GNUC__) && !defined(__clang__)
#define LUTHIER__U8_NOUNROLL _Pragma("GCC unroll 1")
#else
#define LUTHIER__U8_NOUNROLL
#endif
/* name##_range_{base,avx2,avx512}: the body name##_body inlined per ISA */
#define LUTHIER__U8_RANGE1(name, sfx, attr)                                                      \
    attr LUTHIER__U8_KT LUTHIER_PRIVATE void name##_range##sfx(void *arg, size_t b, size_t e, int t, int cl) { \
        (void)t;                                                                                 \
        (void)cl;                                                                                \
        name##_body(arg, b, e);                                                                  \
    }
#if LUTHIER__SIMD_X86
#define LUTHIER__U8_RANGE(name)                                                                  \
    LUTHIER__U8_RANGE1(name, _base, )                                                            \
    LUTHIER__U8_RANGE1(name, _avx2, LUTHIER__TARGET_AVX2)                                        \
    LUTHIER__U8_RANGE1(name, _avx512, LUTHIER__TARGET_AVX512)
#else
#define LUTHIER__U8_RANGE(name) LUTHIER__U8_RANGE1(name, _base, )
#endif

/* The ISA of the uint8 operators' range functions for these CPU features: the pass LUTHIER__OP_PICK
   runs. AArch64 with the NEON kernels: the hand-written NEON of >>ops-u8-neon (every operator
   but means of more than 65536 taps, whatever the compiler). Elsewhere they are plain C blocks
   that the compiler vectorizes for the pass's target: Clang and GCC >= 12 do at -O2; an older
   GCC vectorizes nothing at -O2, so it is reported scalar. */
#if LUTHIER__SIMD_NEON
#define LUTHIER__ISA_U8_BASE LUTHIER__ISA_NEON
#elif defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define LUTHIER__ISA_U8_BASE LUTHIER__ISA_PORTABLE
#else
#define LUTHIER__ISA_U8_BASE LUTHIER__ISA_SCALAR
#endif
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__op_u8_isa(unsigned features) {
    const luthier__isa pass = luthier__op_isa(features);
    return pass == LUTHIER__ISA_AVX512 || pass == LUTHIER__ISA_AVX2 ? pass : LUTHIER__ISA_U8_BASE;
}

/* element-wise jobs (quantize, dequantize, qadd): units of LUTHIER__OP_GRAIN elements */
typedef struct luthier__op_qelt_job {
    const float *xf;
    const uint8_t *xa, *xb;
    float *yf;
    uint8_t *yq;
    size_t n;
    float fa, fb, lo, hi; /* quantize: fa = 1 / scale; dequantize: fa = scale; qadd: fa, fb */
    int32_t za, zb, zy;
} luthier__op_qelt_job;

/* int32 lanes to uint8 (values already in 0..255; a separate loop: GCC does not vectorize the
   float -> int32 -> uint8 chain of the callers in one loop) */
LUTHIER__INLINE void luthier__op_u8_narrow(const int32_t *LUTHIER__RESTRICT r, uint8_t *LUTHIER__RESTRICT y, size_t cnt) {
    size_t i;
    for (i = 0; i < cnt; i++) y[i] = (uint8_t)r[i];
}

/* >>ops-u8-neon: hand-written NEON of the uint8 operators (AArch64). 16 elements (channels) per
   step with the C blocks' arithmetic lane for lane, so the results are bit-identical: the same
   float products and sums (separate FMUL / FADD, no FMLA), NaN -> +0 then the clamp to the
   integer bounds, then FCVTNS (round to nearest even, what the 1.5 * 2^23 addition does for
   |v| <= 2^22); pool sums in 16-bit lanes (windows up to 256 taps) or 32-bit lanes (up to
   65536), means by the same float estimate and integer corrections as luthier__op_qdiv1. Each
   helper does the multiples of 16 and returns how many; the C blocks run the rest. */
#if LUTHIER__SIMD_NEON
/* 16 bytes minus z as four int32x4 */
LUTHIER__INLINE void luthier__u8n_widen(uint8x16_t v, int32x4_t z, int32x4_t o[4]) {
    const int16x8_t lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(v)));
    const int16x8_t hi = vreinterpretq_s16_u16(vmovl_high_u8(v));
    o[0] = vsubq_s32(vmovl_s16(vget_low_s16(lo)), z);
    o[1] = vsubq_s32(vmovl_high_s16(lo), z);
    o[2] = vsubq_s32(vmovl_s16(vget_low_s16(hi)), z);
    o[3] = vsubq_s32(vmovl_high_s16(hi), z);
}
/* four int32x4 (values in 0..255) as 16 bytes */
LUTHIER__INLINE uint8x16_t luthier__u8n_narrow(const int32x4_t r[4]) {
    const uint16x8_t lo = vcombine_u16(vqmovun_s32(r[0]), vqmovun_s32(r[1]));
    const uint16x8_t hi = vcombine_u16(vqmovun_s32(r[2]), vqmovun_s32(r[3]));
    return vcombine_u8(vqmovn_u16(lo), vqmovn_u16(hi));
}
/* NaN -> +0, clamp to [lo, hi] (integers), round half to even */
LUTHIER__INLINE int32x4_t luthier__u8n_round(float32x4_t t, float32x4_t lo, float32x4_t hi) {
    t = vreinterpretq_f32_u32(vandq_u32(vceqq_f32(t, t), vreinterpretq_u32_f32(t)));
    return vcvtnq_s32_f32(vminq_f32(vmaxq_f32(t, lo), hi));
}

LUTHIER__INLINE size_t luthier__op_quantize_neon(const luthier__op_qelt_job *j, const float *x, uint8_t *y, size_t n) {
    const float32x4_t inv = vdupq_n_f32(j->fa), lo = vdupq_n_f32(j->lo), hi = vdupq_n_f32(j->hi);
    const int32x4_t z = vdupq_n_s32(j->zy);
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        int32x4_t r[4]; /* written out: GCC -O2 keeps a 4-trip loop over r[] on the stack */
        r[0] = vaddq_s32(luthier__u8n_round(vmulq_f32(vld1q_f32(x + i), inv), lo, hi), z);
        r[1] = vaddq_s32(luthier__u8n_round(vmulq_f32(vld1q_f32(x + i + 4), inv), lo, hi), z);
        r[2] = vaddq_s32(luthier__u8n_round(vmulq_f32(vld1q_f32(x + i + 8), inv), lo, hi), z);
        r[3] = vaddq_s32(luthier__u8n_round(vmulq_f32(vld1q_f32(x + i + 12), inv), lo, hi), z);
        vst1q_u8(y + i, luthier__u8n_narrow(r));
    }
    return i;
}

LUTHIER__INLINE size_t luthier__op_dequantize_neon(const luthier__op_qelt_job *j, const uint8_t *x, float *y, size_t n) {
    const float32x4_t s = vdupq_n_f32(j->fa);
    const int32x4_t z = vdupq_n_s32(j->za);
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        int32x4_t d[4];
        luthier__u8n_widen(vld1q_u8(x + i), z, d);
        vst1q_f32(y + i, vmulq_f32(s, vcvtq_f32_s32(d[0])));
        vst1q_f32(y + i + 4, vmulq_f32(s, vcvtq_f32_s32(d[1])));
        vst1q_f32(y + i + 8, vmulq_f32(s, vcvtq_f32_s32(d[2])));
        vst1q_f32(y + i + 12, vmulq_f32(s, vcvtq_f32_s32(d[3])));
    }
    return i;
}

/* fa * a + fb * b: both products rounded, then the sum (FMUL, FMUL, FADD: the range functions
   are built with fp-contract off, LUTHIER__U8_KT, so no FMLA) */
LUTHIER__INLINE float32x4_t luthier__u8n_qadd4(float32x4_t fa, int32x4_t a, float32x4_t fb, int32x4_t b) {
    const float32x4_t pa = vmulq_f32(fa, vcvtq_f32_s32(a)), pb = vmulq_f32(fb, vcvtq_f32_s32(b));
    return vaddq_f32(pa, pb);
}

/* y may be a or b (both are loaded before the store) */
LUTHIER__INLINE size_t luthier__op_qadd_neon(const luthier__op_qelt_job *j, const uint8_t *a, const uint8_t *b, uint8_t *y,
                                             size_t n) {
    const float32x4_t fa = vdupq_n_f32(j->fa), fb = vdupq_n_f32(j->fb), lo = vdupq_n_f32(j->lo), hi = vdupq_n_f32(j->hi);
    const int32x4_t za = vdupq_n_s32(j->za), zb = vdupq_n_s32(j->zb), zy = vdupq_n_s32(j->zy);
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        int32x4_t da[4], db[4], r[4];
        luthier__u8n_widen(vld1q_u8(a + i), za, da);
        luthier__u8n_widen(vld1q_u8(b + i), zb, db);
        r[0] = vaddq_s32(luthier__u8n_round(luthier__u8n_qadd4(fa, da[0], fb, db[0]), lo, hi), zy);
        r[1] = vaddq_s32(luthier__u8n_round(luthier__u8n_qadd4(fa, da[1], fb, db[1]), lo, hi), zy);
        r[2] = vaddq_s32(luthier__u8n_round(luthier__u8n_qadd4(fa, da[2], fb, db[2]), lo, hi), zy);
        r[3] = vaddq_s32(luthier__u8n_round(luthier__u8n_qadd4(fa, da[3], fb, db[3]), lo, hi), zy);
        vst1q_u8(y + i, luthier__u8n_narrow(r));
    }
    return i;
}
#endif /* LUTHIER__SIMD_NEON */

LUTHIER__INLINE void luthier__op_quantize_blk(const luthier__op_qelt_job *j, const float *LUTHIER__RESTRICT x,
                                              uint8_t *LUTHIER__RESTRICT y, size_t cnt) {
    const float inv = j->fa, lo = j->lo, hi = j->hi;
    const int32_t zero = j->zy;
    int32_t r[LUTHIER__U8_BLK];
    size_t i;
    for (i = 0; i < cnt; i++) {
        float t = x[i] * inv;
        t = t == t ? t : 0.0f; /* NaN -> zero (this order of the selects vectorizes everywhere) */
        t = t < lo ? lo : t;
        t = t > hi ? hi : t;
        t = (t + LUTHIER__U8_RNDC) - LUTHIER__U8_RNDC;
        r[i] = (int32_t)t + zero;
    }
    luthier__op_u8_narrow(r, y, cnt);
}

LUTHIER__INLINE void luthier__op_quantize_body(void *arg, size_t ub, size_t ue) {
    const luthier__op_qelt_job *j = (const luthier__op_qelt_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    size_t i = from;
#if LUTHIER__SIMD_NEON
    i += luthier__op_quantize_neon(j, j->xf + from, j->yq + from, to - from);
#endif
    for (; i + LUTHIER__U8_BLK <= to; i += LUTHIER__U8_BLK)
        luthier__op_quantize_blk(j, j->xf + i, j->yq + i, LUTHIER__U8_BLK);
    if (i < to) luthier__op_quantize_blk(j, j->xf + i, j->yq + i, to - i);
}
LUTHIER__U8_RANGE(luthier__op_quantize)

LUTHIER__INLINE void luthier__op_dequantize_blk(const luthier__op_qelt_job *j, const uint8_t *LUTHIER__RESTRICT x,
                                                float *LUTHIER__RESTRICT y, size_t cnt) {
    const float scale = j->fa;
    const int32_t zero = j->za;
    size_t i;
    for (i = 0; i < cnt; i++) y[i] = scale * (float)((int32_t)x[i] - zero);
}

LUTHIER__INLINE void luthier__op_dequantize_body(void *arg, size_t ub, size_t ue) {
    const luthier__op_qelt_job *j = (const luthier__op_qelt_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    size_t i = from;
#if LUTHIER__SIMD_NEON
    i += luthier__op_dequantize_neon(j, j->xa + from, j->yf + from, to - from);
#endif
    for (; i + LUTHIER__U8_BLK <= to; i += LUTHIER__U8_BLK)
        luthier__op_dequantize_blk(j, j->xa + i, j->yf + i, LUTHIER__U8_BLK);
    if (i < to) luthier__op_dequantize_blk(j, j->xa + i, j->yf + i, to - i);
}
LUTHIER__U8_RANGE(luthier__op_dequantize)

/* qadd of one element: a - za and b - zb as exact floats, both products rounded, their sum,
   the clamp to [qmin - zy, qmax - zy] (NaN, only from non-finite scales, -> 0), then round half
   to even through 1.5 * 2^23: the float's bits are 0x4B400000 + round(v), so r = bits - (0x4B400000
   - zy) is the output in qmin..qmax. */
#define LUTHIER__OP_QADD_ELEM(ia, ib, r)                                                         \
    do {                                                                                         \
        const float pa_ = fa * (float)((int32_t)(ia) - za);                                      \
        const float pb_ = fb * (float)((int32_t)(ib) - zb);                                      \
        float v_ = pa_ + pb_;                                                                    \
        int32_t bits_;                                                                           \
        v_ = v_ == v_ ? v_ : 0.0f;                                                               \
        v_ = v_ < lo ? lo : v_;                                                                  \
        v_ = v_ > hi ? hi : v_;                                                                  \
        v_ = v_ + LUTHIER__U8_RNDC;                                                              \
        memcpy(&bits_, &v_, sizeof bits_);                                                       \
        (r) = bits_ - zoff;                                                                      \
    } while (0)

/* 64 elements as 16 words of 4 bytes (SWAR): byte s of every word is one vector of 32-bit lanes
   ((w >> 8s) & 255), so the whole block runs on 32-bit lanes without byte shuffles (GCC's
   byte -> int32 widening takes 2-3 shuffles per vector: 2.5x slower). The results go back
   with the same shifts, so the byte order of the words does not matter. y may be a or b. */
LUTHIER__INLINE void luthier__op_qadd_swar(const luthier__op_qelt_job *j, const uint8_t *a, const uint8_t *b, uint8_t *y) {
#ifdef __clang__
#pragma clang fp contract(off)
#endif
    const float fa = j->fa, fb = j->fb, lo = j->lo, hi = j->hi;
    const int32_t za = j->za, zb = j->zb, zoff = 0x4B400000 - j->zy;
    uint32_t wa[16], wb[16], wy[16];
    unsigned sh;
    size_t k;
    memcpy(wa, a, sizeof wa);
    memcpy(wb, b, sizeof wb);
    for (k = 0; k < 16; k++) wy[k] = 0;
    for (sh = 0; sh < 32; sh += 8)
        for (k = 0; k < 16; k++) {
            int32_t r;
            LUTHIER__OP_QADD_ELEM((wa[k] >> sh) & 255u, (wb[k] >> sh) & 255u, r);
            wy[k] |= (uint32_t)r << sh;
        }
    memcpy(y, wy, sizeof wy);
}

/* the last cnt < 64 elements, one by one (same arithmetic) */
LUTHIER__INLINE void luthier__op_qadd_tail(const luthier__op_qelt_job *j, const uint8_t *a, const uint8_t *b, uint8_t *y,
                                           size_t cnt) {
#ifdef __clang__
#pragma clang fp contract(off)
#endif
    const float fa = j->fa, fb = j->fb, lo = j->lo, hi = j->hi;
    const int32_t za = j->za, zb = j->zb, zoff = 0x4B400000 - j->zy;
    size_t i;
    for (i = 0; i < cnt; i++) {
        int32_t r;
        LUTHIER__OP_QADD_ELEM(a[i], b[i], r);
        y[i] = (uint8_t)r;
    }
}

LUTHIER__INLINE void luthier__op_qadd_body(void *arg, size_t ub, size_t ue) {
    const luthier__op_qelt_job *j = (const luthier__op_qelt_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    size_t i = from;
#if LUTHIER__SIMD_NEON
    i += luthier__op_qadd_neon(j, j->xa + from, j->xb + from, j->yq + from, to - from);
#endif
    for (; i + LUTHIER__U8_BLK <= to; i += LUTHIER__U8_BLK)
        luthier__op_qadd_swar(j, j->xa + i, j->xb + i, j->yq + i);
    if (i < to) luthier__op_qadd_tail(j, j->xa + i, j->xb + i, j->yq + i, to - i);
}
LUTHIER__U8_RANGE(luthier__op_qadd)

/* tap (i, k) of uint8 window q (luthier__op_win), from channel c0 */
LUTHIER__INLINE const uint8_t *luthier__op_qtap(const luthier__op_win *q, size_t c0, size_t i, size_t k) {
    return (const uint8_t *)q->img + ((q->y0 + i * q->dy) * q->w + q->x0 + k * q->dx) * q->c + c0;
}

/* one tap into the accumulators (restrict: no alias check, which GCC -O2 would refuse) */
LUTHIER__INLINE void luthier__op_qmax_tap(uint8_t *LUTHIER__RESTRICT acc, const uint8_t *LUTHIER__RESTRICT p, size_t cn) {
    size_t l;
    for (l = 0; l < cn; l++) acc[l] = p[l] > acc[l] ? p[l] : acc[l];
}
LUTHIER__INLINE void luthier__op_qsum_tap(uint32_t *LUTHIER__RESTRICT acc, const uint8_t *LUTHIER__RESTRICT p, size_t cn) {
    size_t l;
    for (l = 0; l < cn; l++) acc[l] += p[l];
}

/* out[l] = max over the taps (at least one) */
LUTHIER__INLINE void luthier__op_qmax_blk(const luthier__op_win *q, size_t c0, size_t cn, uint8_t *out) {
    uint8_t acc[LUTHIER__U8_BLK];
    size_t i, k;
    memcpy(acc, luthier__op_qtap(q, c0, 0, 0), cn);
    for (i = 0; i < q->ny; i++)
        for (k = 0; k < q->nx; k++)
            luthier__op_qmax_tap(acc, luthier__op_qtap(q, c0, i, k), cn);
    memcpy(out, acc, cn);
}

/* v / d for 0 <= v < 2^24, 1 <= d <= 65536 (v includes the d/2 of the rounding): a float
   estimate, within one of the quotient, corrected by one integer step each way */
LUTHIER__INLINE int32_t luthier__op_qdiv1(int32_t v, int32_t d, float inv) {
    int32_t q = (int32_t)((float)v * inv);
    q += (q + 1) * d <= v;
    q -= q * d > v;
    return q;
}

/* out[l] = s[l] / cnt (the caller's sums include cnt/2) */
LUTHIER__INLINE void luthier__op_qdiv_blk(const uint32_t *s, size_t cn, uint32_t cnt, uint8_t *out) {
    const int32_t d = (int32_t)cnt;
    const float inv = 1.0f / (float)cnt;
    int32_t r[LUTHIER__U8_BLK];
    size_t l;
    for (l = 0; l < cn; l++) r[l] = luthier__op_qdiv1((int32_t)s[l], d, inv);
    luthier__op_u8_narrow(r, out, cn);
}

/* Windows of at most 256 taps: 4 * nw channels (nw = 16 or 4 words of 4 bytes, SWAR) summed in
   the 16-bit halves of 32-bit lanes: bytes 0 and 2 of each word in lo, 1 and 3 in hi (255 * 256
   + 128 < 2^16). No byte shuffles: 5 vector ops per tap and 64 channels on AVX-512. */
LUTHIER__INLINE void luthier__op_qsum16_tap(uint32_t *LUTHIER__RESTRICT lo, uint32_t *LUTHIER__RESTRICT hi,
                                            const uint8_t *p, size_t nw) {
    uint32_t w[16];
    size_t k;
    memcpy(w, p, nw * sizeof(uint32_t));
    LUTHIER__U8_NOUNROLL
    for (k = 0; k < nw; k++) {
        lo[k] += w[k] & 0x00FF00FFu;
        hi[k] += (w[k] >> 8) & 0x00FF00FFu;
    }
}

LUTHIER__INLINE void luthier__op_qavg_swar(const luthier__op_win *q, size_t c0, size_t nw, uint8_t *out) {
    const uint32_t init = (uint32_t)(q->pad + q->cnt / 2) * 0x00010001u;
    const int32_t d = (int32_t)q->cnt;
    const float inv = 1.0f / (float)q->cnt;
    uint32_t lo[16], hi[16], wy[16];
    int32_t sum[64], r[64]; /* byte b of word k at [b * nw + k] */
    size_t i, k;
    for (k = 0; k < nw; k++) {
        lo[k] = init;
        hi[k] = init;
    }
    for (i = 0; i < q->ny; i++)
        for (k = 0; k < q->nx; k++)
            luthier__op_qsum16_tap(lo, hi, luthier__op_qtap(q, c0, i, k), nw);
    /* flat single loops (no nests: GCC -O3 interchanges / unrolls nests into scalar code) */
    for (k = 0; k < nw; k++) {
        sum[k] = (int32_t)(lo[k] & 0xFFFFu);
        sum[nw + k] = (int32_t)(hi[k] & 0xFFFFu);
        sum[2 * nw + k] = (int32_t)(lo[k] >> 16);
        sum[3 * nw + k] = (int32_t)(hi[k] >> 16);
    }
    for (k = 0; k < 4 * nw; k++) r[k] = luthier__op_qdiv1(sum[k], d, inv);
    for (k = 0; k < nw; k++)
        wy[k] = (uint32_t)r[k] | (uint32_t)r[nw + k] << 8 | (uint32_t)r[2 * nw + k] << 16 | (uint32_t)r[3 * nw + k] << 24;
    memcpy(out, wy, nw * sizeof(uint32_t));
}

/* mean over the window, cnt <= LUTHIER__U8_FAST_CNT (uint32 sums) */
LUTHIER__INLINE void luthier__op_qavg_blk(const luthier__op_win *q, size_t c0, size_t cn, uint8_t *out) {
    uint32_t acc[LUTHIER__U8_BLK];
    const uint32_t init = (uint32_t)(q->pad + q->cnt / 2);
    size_t i, k, l;
    for (l = 0; l < cn; l++) acc[l] = init;
    for (i = 0; i < q->ny; i++)
        for (k = 0; k < q->nx; k++)
            luthier__op_qsum_tap(acc, luthier__op_qtap(q, c0, i, k), cn);
    luthier__op_qdiv_blk(acc, cn, (uint32_t)q->cnt, out);
}

/* mean over a window of more than LUTHIER__U8_FAST_CNT taps: uint64 sums, integer division */
LUTHIER__INLINE void luthier__op_qavg_wide(const luthier__op_win *q, size_t cn, uint8_t *out) {
    uint64_t acc[LUTHIER__U8_BLK];
    size_t c0, i, k, l;
    for (c0 = 0; c0 < cn; c0 += LUTHIER__U8_BLK) {
        const size_t m = luthier__min_sz(LUTHIER__U8_BLK, cn - c0);
        for (l = 0; l < m; l++) acc[l] = q->pad + q->cnt / 2;
        for (i = 0; i < q->ny; i++)
            for (k = 0; k < q->nx; k++) {
                const uint8_t *p = luthier__op_qtap(q, c0, i, k);
                for (l = 0; l < m; l++) acc[l] += p[l];
            }
        for (l = 0; l < m; l++) out[c0 + l] = (uint8_t)(acc[l] / q->cnt);
    }
}

/* >>ops-u8-neon (pools): one window over 16 channels from c0 */
#if LUTHIER__SIMD_NEON
/* not inlined (also below): llvm-mca reads each tap loop as a function (bench/mca_neon.sh); a call
   per 16 channels of a window */
LUTHIER__NOINLINE LUTHIER_PRIVATE uint8x16_t luthier__op_qmax_neon(const luthier__op_win *q, size_t c0) {
    const size_t step = q->dx * q->c;
    uint8x16_t acc = vdupq_n_u8(0);
    size_t i, k;
    for (i = 0; i < q->ny; i++) {
        const uint8_t *p = luthier__op_qtap(q, c0, i, 0); /* (tap k at + k * step) */
        for (k = 0; k < q->nx; k++, p += step) acc = vmaxq_u8(acc, vld1q_u8(p));
    }
    return acc;
}

/* s / cnt per lane (s includes cnt/2; s < 2^24): luthier__op_qdiv1 on four lanes */
LUTHIER__INLINE int32x4_t luthier__u8n_div(uint32x4_t s, int32x4_t d, float32x4_t inv) {
    const int32x4_t v = vreinterpretq_s32_u32(s);
    int32x4_t q = vcvtq_s32_f32(vmulq_f32(vcvtq_f32_u32(s), inv));
    q = vsubq_s32(q, vreinterpretq_s32_u32(vcleq_s32(vmulq_s32(vaddq_s32(q, vdupq_n_s32(1)), d), v))); /* +1 */
    return vaddq_s32(q, vreinterpretq_s32_u32(vcgtq_s32(vmulq_s32(q, d), v)));                        /* -1 */
}

/* sums of at most 256 taps (255 * 256 + 128 < 2^16): 16-bit lanes, widened once */
LUTHIER__NOINLINE LUTHIER_PRIVATE void luthier__u8n_sum16(const luthier__op_win *q, size_t c0, uint32_t init, uint32x4_t s[4]) {
    const size_t step = q->dx * q->c;
    uint16x8_t lo = vdupq_n_u16((uint16_t)init), hi = lo;
    size_t i, k;
    for (i = 0; i < q->ny; i++) {
        const uint8_t *p = luthier__op_qtap(q, c0, i, 0); /* (tap k at + k * step) */
        for (k = 0; k < q->nx; k++, p += step) {
            const uint8x16_t v = vld1q_u8(p);
            lo = vaddw_u8(lo, vget_low_u8(v));
            hi = vaddw_high_u8(hi, v);
        }
    }
    s[0] = vmovl_u16(vget_low_u16(lo));
    s[1] = vmovl_high_u16(lo);
    s[2] = vmovl_u16(vget_low_u16(hi));
    s[3] = vmovl_high_u16(hi);
}

/* sums of more taps: 32-bit lanes */
LUTHIER__NOINLINE LUTHIER_PRIVATE void luthier__u8n_sum32(const luthier__op_win *q, size_t c0, uint32_t init, uint32x4_t s[4]) {
    const size_t step = q->dx * q->c;
    size_t i, k;
    s[0] = s[1] = s[2] = s[3] = vdupq_n_u32(init);
    for (i = 0; i < q->ny; i++) {
        const uint8_t *p = luthier__op_qtap(q, c0, i, 0); /* (tap k at + k * step) */
        for (k = 0; k < q->nx; k++, p += step) {
            const uint8x16_t v = vld1q_u8(p);
            const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
            s[0] = vaddw_u16(s[0], vget_low_u16(lo));
            s[1] = vaddw_high_u16(s[1], lo);
            s[2] = vaddw_u16(s[2], vget_low_u16(hi));
            s[3] = vaddw_high_u16(s[3], hi);
        }
    }
}

/* mean of a window of at most 65536 taps */
LUTHIER__INLINE uint8x16_t luthier__op_qavg_neon(const luthier__op_win *q, size_t c0) {
    const uint32_t init = (uint32_t)(q->pad + q->cnt / 2);
    const int32x4_t d = vdupq_n_s32((int32_t)q->cnt);
    const float32x4_t inv = vdupq_n_f32(1.0f / (float)q->cnt);
    uint32x4_t s[4];
    int32x4_t r[4];
    if (q->cnt <= 256) luthier__u8n_sum16(q, c0, init, s);
    else luthier__u8n_sum32(q, c0, init, s);
    r[0] = luthier__u8n_div(s[0], d, inv);
    r[1] = luthier__u8n_div(s[1], d, inv);
    r[2] = luthier__u8n_div(s[2], d, inv);
    r[3] = luthier__u8n_div(s[3], d, inv);
    return luthier__u8n_narrow(r);
}

/* channels [0, 16 * (cn / 16)) of one window (max, or a mean of at most 65536 taps) */
LUTHIER__INLINE size_t luthier__op_qwin_neon(const luthier__op_win *q, size_t cn, int is_max, uint8_t *out) {
    size_t c0;
    for (c0 = 0; c0 + 16 <= cn; c0 += 16) vst1q_u8(out + c0, is_max ? luthier__op_qmax_neon(q, c0) : luthier__op_qavg_neon(q, c0));
    return c0;
}
#endif /* LUTHIER__SIMD_NEON */

/* channels [0, cn) of one window: blocks of 64 and 16 with constant counts, then the rest;
   means: SWAR up to 256 taps, else uint32 sums up to 65536 taps, else uint64 */
LUTHIER__INLINE void luthier__op_qwin_run(const luthier__op_win *q, size_t cn, int is_max, uint8_t *out) {
    size_t c0 = 0;
#if LUTHIER__SIMD_NEON
    if (is_max || q->cnt <= LUTHIER__U8_FAST_CNT) c0 = luthier__op_qwin_neon(q, cn, is_max, out);
#endif
    if (is_max) {
        for (; c0 + LUTHIER__U8_BLK <= cn; c0 += LUTHIER__U8_BLK) luthier__op_qmax_blk(q, c0, LUTHIER__U8_BLK, out + c0);
        for (; c0 + 16 <= cn; c0 += 16) luthier__op_qmax_blk(q, c0, 16, out + c0);
        if (c0 < cn) luthier__op_qmax_blk(q, c0, cn - c0, out + c0);
    } else if (q->cnt <= 256) {
        for (; c0 + LUTHIER__U8_BLK <= cn; c0 += LUTHIER__U8_BLK) luthier__op_qavg_swar(q, c0, 16, out + c0);
        for (; c0 + 16 <= cn; c0 += 16) luthier__op_qavg_swar(q, c0, 4, out + c0);
        if (c0 < cn) luthier__op_qavg_blk(q, c0, cn - c0, out + c0);
    } else if (q->cnt > LUTHIER__U8_FAST_CNT) {
        luthier__op_qavg_wide(q, cn, out);
    } else {
        for (; c0 + LUTHIER__U8_BLK <= cn; c0 += LUTHIER__U8_BLK) luthier__op_qavg_blk(q, c0, LUTHIER__U8_BLK, out + c0);
        for (; c0 + 16 <= cn; c0 += 16) luthier__op_qavg_blk(q, c0, 16, out + c0);
        if (c0 < cn) luthier__op_qavg_blk(q, c0, cn - c0, out + c0);
    }
}

LUTHIER__INLINE void luthier__op_qpool_body(void *arg, size_t ub, size_t ue) {
    const luthier__op_pool_job *j = (const luthier__op_pool_job *)arg;
    const size_t r_end = luthier__min_sz(j->n * j->oh, ue * j->rpu);
    size_t row, ox;
    for (row = ub * j->rpu; row < r_end; row++) {
        luthier__op_win q;
        size_t npy;
        luthier__op_pool_rows(j, row, 1, &q, &npy);
        for (ox = 0; ox < j->ow; ox++) {
            uint8_t *out = (uint8_t *)j->y + (row * j->ow + ox) * j->c;
            luthier__op_pool_cols(j, ox, npy, &q);
            if (q.ny * q.nx == 0 || q.cnt == 0) { /* no tap inside the input: the real value 0 */
                memset(out, j->zero, j->c);
                continue;
            }
            luthier__op_qwin_run(&q, j->c, j->is_max, out);
        }
    }
}
LUTHIER__U8_RANGE(luthier__op_qpool)

/* adaptive average pooling: units are (output pixel, channel chunk) items like the fp32 op */
LUTHIER__INLINE void luthier__op_qapool_body(void *arg, size_t ub, size_t ue) {
    const luthier__op_apool_job *j = (const luthier__op_apool_job *)arg;
    const size_t it_end = luthier__min_sz(j->items, ue * j->ipu);
    size_t it;
    for (it = ub * j->ipu; it < it_end; it++) {
        luthier__op_win q;
        size_t cn;
        const size_t o = luthier__op_apool_win(j, it, 1, &q, &cn);
        luthier__op_qwin_run(&q, cn, 0, (uint8_t *)j->y + o);
    }
}
LUTHIER__U8_RANGE(luthier__op_qapool)

/* y = clamp(nearbyint(x * (1 / scale)) + zero, 0, 255); NaN -> zero. x != y. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_quantize(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                    const float *x, uint8_t *y, size_t n, float scale,
                                                                    int32_t zero) {
    luthier__op_qelt_job j;
    memset(&j, 0, sizeof j);
    j.xf = x;
    j.yq = y;
    j.n = n;
    j.fa = 1.0f / scale;
    j.lo = (float)-zero;
    j.hi = (float)(255 - zero);
    j.zy = zero;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), LUTHIER__OP_PICK(ctx, luthier__op_quantize_range), &j);
}

/* y = scale * (float)((int32_t)x - zero) */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_dequantize(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                      const uint8_t *x, float *y, size_t n,
                                                                      float scale, int32_t zero) {
    luthier__op_qelt_job j;
    memset(&j, 0, sizeof j);
    j.xa = x;
    j.yf = y;
    j.n = n;
    j.fa = scale;
    j.za = zero;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), LUTHIER__OP_PICK(ctx, luthier__op_dequantize_range), &j);
}

/* y = clamp(zy + nearbyint(fa * (a - za) + fb * (b - zb)), qmin, qmax), fa = sa / sy and
   fb = sb / sy in float, both products rounded (no FMA), then their sum; same shapes; in place
   ok (y == a or y == b); 0 <= qmin <= qmax <= 255. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_qadd(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                const uint8_t *a, float sa, int32_t za,
                                                                const uint8_t *b, float sb, int32_t zb, uint8_t *y,
                                                                float sy, int32_t zy, int32_t qmin, int32_t qmax,
                                                                size_t n) {
    luthier__op_qelt_job j;
    memset(&j, 0, sizeof j);
    j.xa = a;
    j.xb = b;
    j.yq = y;
    j.n = n;
    j.fa = sa / sy;
    j.fb = sb / sy;
    j.za = za;
    j.zb = zb;
    j.zy = zy;
    j.lo = (float)(qmin - zy);
    j.hi = (float)(qmax - zy);
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), LUTHIER__OP_PICK(ctx, luthier__op_qadd_range), &j);
}

/* Max pooling on NHWC uint8, arguments as luthier__op_pool2d_nhwc's: the max over the taps
   inside the input (same quantization in and out); a window without one gives `zero`. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_qmaxpool_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, const uint8_t *x, size_t n, size_t h, size_t w, size_t c,
    size_t kh, size_t kw, size_t sh, size_t sw, size_t dh, size_t dw, size_t pt, size_t pl, size_t pb, size_t pr,
    uint8_t *y, size_t oh, size_t ow, int32_t zero) {
    luthier__op_pool_job j;
    const size_t units = luthier__op_pool_set(&j, x, n, h, w, c, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, y, oh, ow);
    j.is_max = 1;
    j.zero = (uint8_t)zero;
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_qpool_range), &j);
}

/* Average pooling on NHWC uint8 (same quantization in and out): q = (sum + cnt/2) / cnt over
   the taps, exact. count_include_pad: padded taps add `zero` and cnt counts the window's taps
   inside the padded input (as luthier__op_pool2d_nhwc, ceil-mode windows included); else cnt
   = taps inside the input. A window without a tap (cnt = 0) gives `zero`. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_qavgpool_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, const uint8_t *x, size_t n, size_t h, size_t w, size_t c,
    size_t kh, size_t kw, size_t sh, size_t sw, size_t pt, size_t pl, size_t pb, size_t pr, int count_include_pad,
    uint8_t *y, size_t oh, size_t ow, int32_t zero) {
    luthier__op_pool_job j;
    const size_t units = luthier__op_pool_set(&j, x, n, h, w, c, kh, kw, sh, sw, 1, 1, pt, pl, pb, pr, y, oh, ow);
    j.include_pad = count_include_pad != 0;
    j.zero = (uint8_t)zero;
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_qpool_range), &j);
}

/* Adaptive average pooling on NHWC uint8 (global when oh = ow = 1), bins as
   luthier__op_adaptive_avgpool_nhwc's, means rounded as luthier__op_qavgpool_nhwc's. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_qadaptive_avgpool_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, const uint8_t *x, size_t n, size_t h, size_t w, size_t c,
    uint8_t *y, size_t oh, size_t ow) {
    luthier__op_apool_job j;
    const size_t units = luthier__op_apool_set(&j, x, n, h, w, c, y, oh, ow);
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_qapool_range), &j);
}

/* >>ops-f16: fp32 <-> fp16 activations (the values of fp16-activation plans), bit for bit
   luthier__f32_to_f16 / luthier__f16_to_f32: FCVTN / FCVTL on AArch64 (Armv8.0; round to nearest
   even under the default FPCR), F16C's vcvtps2ph / vcvtph2ps on x86 with AVX2, else plain C.
   Units of LUTHIER__OP_GRAIN elements; every element is converted alone, so any split gives the
   same bits. */
typedef struct luthier__op_h16_job {
    const float *xf;
    const uint16_t *xh;
    uint16_t *yh;
    float *yf;
    size_t n;
    unsigned features;
} luthier__op_h16_job;

#if LUTHIER__SIMD_NEON
LUTHIER_PRIVATE size_t luthier__op_narrow_h16_simd(unsigned features, const float *x, uint16_t *y, size_t n) {
    size_t i;
    (void)features;
    for (i = 0; i + 8 <= n; i += 8)
        vst1q_u16(y + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4))));
    return i;
}
LUTHIER_PRIVATE size_t luthier__op_widen_h16_simd(unsigned features, const uint16_t *x, float *y, size_t n) {
    size_t i;
    (void)features;
    for (i = 0; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(x + i));
        vst1q_f32(y + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(y + i + 4, vcvt_high_f32_f16(h));
    }
    return i;
}
#elif LUTHIER__SIMD_X86
LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE size_t luthier__op_narrow_h16_f16c(const float *x, uint16_t *y, size_t n) {
    size_t i;
    for (i = 0; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}
LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE size_t luthier__op_widen_h16_f16c(const uint16_t *x, float *y, size_t n) {
    size_t i;
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(x + i))));
    return i;
}
LUTHIER_PRIVATE size_t luthier__op_narrow_h16_simd(unsigned features, const float *x, uint16_t *y, size_t n) {
    return features & LUTHIER_CPU_AVX2_FMA ? luthier__op_narrow_h16_f16c(x, y, n) : 0;
}
LUTHIER_PRIVATE size_t luthier__op_widen_h16_simd(unsigned features, const uint16_t *x, float *y, size_t n) {
    return features & LUTHIER_CPU_AVX2_FMA ? luthier__op_widen_h16_f16c(x, y, n) : 0;
}
#else
LUTHIER_PRIVATE size_t luthier__op_narrow_h16_simd(unsigned features, const float *x, uint16_t *y, size_t n) {
    return (void)features, (void)x, (void)y, (void)n, 0;
}
LUTHIER_PRIVATE size_t luthier__op_widen_h16_simd(unsigned features, const uint16_t *x, float *y, size_t n) {
    return (void)features, (void)x, (void)y, (void)n, 0;
}
#endif

/* n fp32 values to fp16 (y[i] = luthier__f32_to_f16(x[i])), and back; on the calling thread. */
LUTHIER_PRIVATE void luthier__op_narrow_h16_run(unsigned features, const float *x, uint16_t *y, size_t n) {
    size_t i = luthier__op_narrow_h16_simd(features, x, y, n);
    for (; i < n; i++) y[i] = luthier__f32_to_f16(x[i]);
}
LUTHIER_PRIVATE void luthier__op_widen_h16_run(unsigned features, const uint16_t *x, float *y, size_t n) {
    size_t i = luthier__op_widen_h16_simd(features, x, y, n);
    for (; i < n; i++) y[i] = luthier__f16_to_f32(x[i]);
}

LUTHIER_PRIVATE void luthier__op_h16_range(void *arg, size_t ub, size_t ue, int t, int cl) {
    const luthier__op_h16_job *j = (const luthier__op_h16_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    (void)t, (void)cl;
    if (from >= to) return;
    if (j->yh) luthier__op_narrow_h16_run(j->features, j->xf + from, j->yh + from, to - from);
    else luthier__op_widen_h16_run(j->features, j->xh + from, j->yf + from, to - from);
}

/* The ISA of the conversions on a CPU with these features. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__op_h16_isa(unsigned features) {
#if LUTHIER__SIMD_NEON
    return (void)features, LUTHIER__ISA_NEON;
#elif LUTHIER__SIMD_X86
    return features & LUTHIER_CPU_AVX2_FMA ? LUTHIER__ISA_AVX2 : LUTHIER__ISA_SCALAR;
#else
    return (void)features, LUTHIER__ISA_SCALAR;
#endif
}

/* y = x in fp16 (round to nearest even), n elements; x in fp32. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_narrow_h16(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                     const float *x, uint16_t *y, size_t n) {
    luthier__op_h16_job j;
    memset(&j, 0, sizeof j);
    j.xf = x, j.yh = y, j.n = n, j.features = ctx->cpu_features;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), luthier__op_h16_range, &j);
}

/* y = x in fp32 (exact), n elements; x in fp16. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_widen_h16(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                    const uint16_t *x, float *y, size_t n) {
    luthier__op_h16_job j;
    memset(&j, 0, sizeof j);
    j.xh = x, j.yf = y, j.n = n, j.features = ctx->cpu_features;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN), luthier__op_h16_range, &j);
}

/* Max pooling of fp16 NHWC activations (luthier__op_pool2d_nhwc's max, the same taps and NaN
   rule: a NaN tap makes the output NaN): each tap widened, the max narrowed back, so the output
   is exactly one of the inputs (or -inf for a window without taps). Units of rpu output rows,
   64 channels at a time. */
#define LUTHIER__OP_H16_POOL_CB ((size_t)64)
LUTHIER_PRIVATE void luthier__op_maxpool_h16_range(void *arg, size_t ub, size_t ue, int thread, int cl) {
    const luthier__op_pool_job *j = (const luthier__op_pool_job *)arg;
    uint16_t *y = (uint16_t *)(void *)j->y;
    const size_t r_end = luthier__min_sz(j->n * j->oh, ue * j->rpu);
    size_t row, ox, c0, ty, tx, cc;
    (void)thread, (void)cl;
    for (row = ub * j->rpu; row < r_end; row++) {
        luthier__op_win q;
        size_t npy;
        luthier__op_pool_rows(j, row, sizeof(uint16_t), &q, &npy);
        for (ox = 0; ox < j->ow; ox++) {
            uint16_t *out = y + (row * j->ow + ox) * j->c;
            luthier__op_pool_cols(j, ox, npy, &q);
            for (c0 = 0; c0 < j->c; c0 += LUTHIER__OP_H16_POOL_CB) {
                const size_t cn = luthier__min_sz(LUTHIER__OP_H16_POOL_CB, j->c - c0);
                float m[LUTHIER__OP_H16_POOL_CB];
                for (cc = 0; cc < cn; cc++) m[cc] = -INFINITY;
                for (ty = 0; ty < q.ny; ty++)
                    for (tx = 0; tx < q.nx; tx++) {
                        const uint16_t *px =
                            (const uint16_t *)q.img + ((q.y0 + ty * q.dy) * q.w + q.x0 + tx * q.dx) * q.c + c0;
                        for (cc = 0; cc < cn; cc++) {
                            const float v = luthier__f16_to_f32(px[cc]);
                            m[cc] = v > m[cc] || v != v ? v : m[cc];
                        }
                    }
                for (cc = 0; cc < cn; cc++) out[c0 + cc] = luthier__f32_to_f16(m[cc]);
            }
        }
    }
}

/* luthier__op_pool2d_nhwc's max pooling on fp16 activations (x, y: fp16). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_maxpool_h16_nhwc(
    luthier_context *ctx, const luthier__op_cfg *cfg, const uint16_t *x, size_t n, size_t h, size_t w, size_t c, size_t kh,
    size_t kw, size_t sh, size_t sw, size_t dh, size_t dw, size_t pad_top, size_t pad_left, size_t pad_bottom,
    size_t pad_right, uint16_t *y, size_t out_h, size_t out_w) {
    luthier__op_pool_job j;
    const size_t units = luthier__op_pool_set(&j, x, n, h, w, c, kh, kw, sh, sw, dh, dw, pad_top, pad_left, pad_bottom,
                                              pad_right, y, out_h, out_w);
    j.is_max = 1;
    if (!units) return LUTHIER_STATUS_OK;
    return luthier__op_run(ctx, cfg, units, luthier__op_maxpool_h16_range, &j);
}

/* >>ops-f16-elt: the fp16 lanes (Armv8.2 FP16; see the section's head at luthier__op_unary_h16_job).
   Comparisons as the fp32 pass's: ReLU keeps -0 and NaN, the clamp keeps NaN, max / min prefer
   a NaN of either operand and give b on ties (+0 vs -0). Bounds are rounded to fp16 (rounding is
   monotonic, so clamping the rounded value to rounded bounds gives the rounded clamp). */
#if LUTHIER__SIMD_NEON
#define LUTHIER__H16_SPLAT(f) vreinterpretq_f16_u16(vdupq_n_u16(luthier__f32_to_f16(f)))
LUTHIER__TARGET_FP16 LUTHIER__INLINE float16x8_t luthier__op_h16_clamp(float16x8_t v, float16x8_t lo, float16x8_t hi) {
    v = vbslq_f16(vcltq_f16(v, lo), lo, v);
    return vbslq_f16(vcgtq_f16(v, hi), hi, v);
}

/* kinds RELU and CLIP (a, b: its bounds) of n halves */
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__op_unary_h16_fp16(const luthier__op_unary_h16_job *j, size_t from, size_t to) {
    const float16x8_t lo = LUTHIER__H16_SPLAT(j->kind == LUTHIER__UNARY_RELU ? 0.0f : j->a);
    const float16x8_t hi = LUTHIER__H16_SPLAT(j->kind == LUTHIER__UNARY_RELU ? INFINITY : j->b);
    size_t i;
    for (i = from; i + 8 <= to; i += 8)
        vst1q_u16(j->y + i, vreinterpretq_u16_f16(luthier__op_h16_clamp(vreinterpretq_f16_u16(vld1q_u16(j->x + i)), lo, hi)));
    if (i < to) {
        uint16_t t[8] = {0};
        memcpy(t, j->x + i, (to - i) * sizeof(uint16_t));
        vst1q_u16(t, vreinterpretq_u16_f16(luthier__op_h16_clamp(vreinterpretq_f16_u16(vld1q_u16(t)), lo, hi)));
        memcpy(j->y + i, t, (to - i) * sizeof(uint16_t));
    }
}

LUTHIER__TARGET_FP16 LUTHIER__INLINE float16x8_t luthier__op_h16_bin(luthier__binary kind, float16x8_t a, float16x8_t b) {
    switch (kind) {
    case LUTHIER__BINARY_ADD: return vaddq_f16(a, b);
    case LUTHIER__BINARY_SUB: return vsubq_f16(a, b);
    case LUTHIER__BINARY_MUL: return vmulq_f16(a, b);
    case LUTHIER__BINARY_MAX: return vbslq_f16(vorrq_u16(vcgtq_f16(a, b), vmvnq_u16(vceqq_f16(a, a))), a, b);
    default: return vbslq_f16(vorrq_u16(vcltq_f16(a, b), vmvnq_u16(vceqq_f16(a, a))), a, b); /* MIN */
    }
}

/* luthier__op_bin_h16_fn of ADD, SUB, MUL, MAX, MIN on two fp16 operands */
#define LUTHIER__OP_H16_BIN_LOOP(K)                                                              \
    for (i = 0; i + 8 <= len; i += 8) {                                                          \
        if (ia) va = vreinterpretq_f16_u16(vld1q_u16(a + i));                                    \
        if (ib) vb = vreinterpretq_f16_u16(vld1q_u16(b + i));                                    \
        r = luthier__op_h16_bin(K, va, vb);                                                      \
        vst1q_u16(y + i, vreinterpretq_u16_f16(j->clamp ? luthier__op_h16_clamp(r, lo, hi) : r)); \
    }                                                                                            \
    break;
LUTHIER__TARGET_FP16 LUTHIER_PRIVATE void luthier__op_binary_h16_fp16(const luthier__op_binary_job *j, const uint16_t *a, int ia,
                                                                   const uint16_t *b, int ib, uint16_t *y, size_t len) {
    const float16x8_t lo = LUTHIER__H16_SPLAT(j->lo), hi = LUTHIER__H16_SPLAT(j->hi);
    float16x8_t va = vreinterpretq_f16_u16(vdupq_n_u16(a[0])), vb = vreinterpretq_f16_u16(vdupq_n_u16(b[0])), r;
    size_t i;
    switch (j->kind) {
    case LUTHIER__BINARY_ADD: LUTHIER__OP_H16_BIN_LOOP(LUTHIER__BINARY_ADD)
    case LUTHIER__BINARY_SUB: LUTHIER__OP_H16_BIN_LOOP(LUTHIER__BINARY_SUB)
    case LUTHIER__BINARY_MUL: LUTHIER__OP_H16_BIN_LOOP(LUTHIER__BINARY_MUL)
    case LUTHIER__BINARY_MAX: LUTHIER__OP_H16_BIN_LOOP(LUTHIER__BINARY_MAX)
    default: LUTHIER__OP_H16_BIN_LOOP(LUTHIER__BINARY_MIN)
    }
    if (i < len) { /* the tail: 8-lane copies */
        uint16_t ta[8] = {0}, tb[8] = {0}, ty[8];
        memcpy(ta, a + (ia ? i : 0), (ia ? len - i : 1) * sizeof(uint16_t));
        memcpy(tb, b + (ib ? i : 0), (ib ? len - i : 1) * sizeof(uint16_t));
        luthier__op_binary_h16_fp16(j, ta, ia, tb, ib, ty, 8);
        memcpy(y + i, ty, (len - i) * sizeof(uint16_t));
    }
}
#undef LUTHIER__OP_H16_BIN_LOOP
#undef LUTHIER__H16_SPLAT
#endif /* LUTHIER__SIMD_NEON */

/* Whether the fp16 lanes run unary kind u / binary kind k (both operands fp16) on this CPU. */
LUTHIER_PRIVATE int luthier__op_h16_native_unary(unsigned features, luthier__unary u) {
    return LUTHIER__SIMD_NEON && (features & LUTHIER_CPU_FP16) && (u == LUTHIER__UNARY_RELU || u == LUTHIER__UNARY_CLIP);
}
LUTHIER_PRIVATE luthier__op_bin_h16_fn luthier__op_h16_native_binary(unsigned features, luthier__binary k) {
#if LUTHIER__SIMD_NEON
    if ((features & LUTHIER_CPU_FP16) && (k == LUTHIER__BINARY_ADD || k == LUTHIER__BINARY_SUB || k == LUTHIER__BINARY_MUL ||
                                          k == LUTHIER__BINARY_MAX || k == LUTHIER__BINARY_MIN))
        return luthier__op_binary_h16_fp16;
#endif
    return (void)features, (void)k, (luthier__op_bin_h16_fn)NULL;
}

LUTHIER_PRIVATE void luthier__op_unary_h16_native_range(void *arg, size_t ub, size_t ue, int t, int cl) {
    const luthier__op_unary_h16_job *j = (const luthier__op_unary_h16_job *)arg;
    const size_t from = ub * LUTHIER__OP_GRAIN, to = luthier__min_sz(j->n, ue * LUTHIER__OP_GRAIN);
    (void)t, (void)cl;
#if LUTHIER__SIMD_NEON
    if (from < to) luthier__op_unary_h16_fp16(j, from, to);
#else
    (void)j, (void)from, (void)to;
#endif
}

/* y = kind(x) element-wise on fp16 x and y (n halves; in place ok): luthier__op_unary's kinds. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_unary_h16(luthier_context *ctx, const luthier__op_cfg *cfg,
                                                                     luthier__unary kind, float a, float b, const uint16_t *x,
                                                                     uint16_t *y, size_t n) {
    luthier__op_unary_h16_job j;
    if ((unsigned)kind >= (unsigned)LUTHIER__UNARY_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unary_h16: unknown kind %d", (int)kind);
    j.kind = kind, j.a = a, j.b = b, j.x = x, j.y = y, j.n = n;
    return luthier__op_run(ctx, cfg, luthier__div_up(n, LUTHIER__OP_GRAIN),
                           luthier__op_h16_native_unary(ctx->cpu_features, kind) ? luthier__op_unary_h16_native_range
                                                                                 : LUTHIER__OP_PICK(ctx, luthier__op_unary_h16_range),
                           &j);
}

/* luthier__op_binary on fp16 activations: a, b fp16 where ha / hb, else fp32; y fp16 (it may
   alias an fp16 operand of yshape). Every kind of luthier__op_binary but POW (its exponent forms
   are luthier__op_binary's) and the comparisons. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__op_binary_h16(
    luthier_context *ctx, const luthier__op_cfg *cfg, luthier__binary kind, const void *a, int ha, const int64_t *ashape,
    const void *b, int hb, const int64_t *bshape, uint16_t *y, const int64_t *yshape, int rank, luthier_activation act,
    float cmin, float cmax) {
    luthier__op_binary_h16_job h;
    size_t units;
    luthier_status s;
    if (kind == LUTHIER__BINARY_POW || kind >= LUTHIER__BINARY_EQUAL)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "binary_h16: kind %d has no fp16 form", (int)kind);
    if ((s = luthier__op_binary_shape(ctx, kind, ashape, bshape, yshape, rank, &h.j, &units)) != LUTHIER_STATUS_OK) return s;
    h.j.clamp = luthier__activation_bounds(act, cmin, cmax, &h.j.lo, &h.j.hi);
    h.a = a, h.b = b, h.ha = ha != 0, h.hb = hb != 0, h.y = y;
    h.native = h.ha && h.hb ? luthier__op_h16_native_binary(ctx->cpu_features, kind) : NULL;
    return luthier__op_run(ctx, cfg, units, LUTHIER__OP_PICK(ctx, luthier__op_binary_h16_range), &h);
}

#undef LUTHIER__OP_QADD_ELEM
#undef LUTHIER__U8_RANGE
#undef LUTHIER__U8_RANGE1
#undef LUTHIER__U8_KT
#undef LUTHIER__U8_NOUNROLL

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER__OPS_PASS / LUTHIER_IMPLEMENTATION */
