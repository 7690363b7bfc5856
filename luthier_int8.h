/* luthier_int8.h - int8 GEMM and convolution of luthier: quantization scheme, API, microkernel
   contract and registry, packing, driver, the int8 kernels (scalar, AVX-512 VNNI, AVX-VNNI,
   AVX2, NEON I8MM, NEON SDOT, NEON) and quantized convolution. Part of luthier (MIT license, see
   luthier.h). Include luthier.h, never this file on its own.

   TABLE OF CONTENTS: >>scheme >>api-qgemm >>qcontract >>impl-requant >>qukernel-scalar
   >>qukernel-avx512vnni >>qukernel-avx256 >>qukernel-neondot >>qukernel-neoni8mm >>qukernel-neon
   >>qregistry >>qpack >>qdriver >>impl-qgemm-api >>api-qconv >>impl-qconv-create >>impl-qconv-dw
   >>impl-qconv-run

   >>scheme =====================================================================================

   C (m x n) = A (m x k, uint8) * B (k x n, int8), accumulated in int32:

       acc[i][j] = sum_kk (A[i][kk] - za) * B[kk][j]  +  bias[j]

   - A (activations): uint8, per-tensor asymmetric: real = sa * (q - za), za in 0..255.
   - B (weights): int8, per-output-channel symmetric: real = sw[j] * q, zero point 0. Symmetric
     quantizers produce -127..127 (luthier_quantize_range(..., symmetric = 1)). -128 is accepted
     and computed exactly by every kernel here (none uses the 16-bit saturating vpmaddubsw);
     it only breaks the symmetry of the range, so prefer -127..127 for portability to other
     engines.
   - bias: NULL or n int32 in the accumulator's scale sa * sw[j] (as ONNX/TFLite store it).
   - The zero-point term is folded at pack time: sum_kk (A - za) * B = sum_kk A*B - za * S[j],
     S[j] = sum_kk B[kk][j] (the column sums). luthier_qgemm_pack_b stores the per-column
     compensation -za' * S[j] next to the packed B (za' = za, or za - 128 for kernels that feed
     A to a signed dot product as A ^ 0x80 = A - 128, see >>qcontract); the driver adds bias[j].
     A packed B therefore serves calls with the a_zero_point it was packed with.
   - int32 arithmetic is two's complement, modulo 2^32, in every kernel: all kernels give the
     same bits, and acc equals the exact sum whenever that fits in int32 (always when
     k <= 65793 = floor((2^31 - 1) / (255 * 128)) and the bias is small).

   Outputs (luthier_qgemm_desc.output):
   (a) LUTHIER_QOUTPUT_UINT8, requantized (gemmlowp / TFLite fixed point), per column j:
           x   = SRDHM(acc, M[j])           saturating rounding doubling high multiply:
                                            (acc * M + 2^30) >> 31 in 64 bits, i.e. rounded
                                            half up; SRDHM(INT32_MIN, INT32_MIN) = INT32_MAX
           y   = RDBPOT(x, s[j])            rounding divide by 2^s, ties away from zero
           out = clamp(zo + y, qmin, qmax)  without overflow (saturating), as uint8
       M[j] in [0, 2^31 - 1] and s[j] in 0..31 (right shifts only: the real multiplier
       sa * sw[j] / so must be < 1). luthier_quantize_multiplier(real, &M, &s) gives
       real ~= M * 2^(-31 - s). [qmin, qmax] (output_min/max, 0 and 0 = [0, 255]) is where a
       fused ReLU, ReLU6 or clamp goes: luthier_quantize_activation converts one.
   (b) LUTHIER_QOUTPUT_FLOAT, dequantized: out = fmaf((float)acc, sa * sw[j], fbias[j]) (one
       rounding; fbias 0 when NULL), then the activation's clamp. For a network's last layer.
   (c) LUTHIER_QOUTPUT_INT32: acc itself.
   luthier_requantize() is the scalar definition of (a), bit for bit.
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_int8.h is part of luthier: include luthier.h instead"
#endif

#ifndef LUTHIER_INT8_H_INCLUDED
#define LUTHIER_INT8_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* >>api-qgemm ================================================================================ */

typedef enum luthier_qoutput {
    LUTHIER_QOUTPUT_UINT8 = 0, /* requantized uint8 (zero point output_zero_point) */
    LUTHIER_QOUTPUT_FLOAT,     /* dequantized fp32 */
    LUTHIER_QOUTPUT_INT32,     /* raw int32 accumulators (zero point compensated, + bias) */
    LUTHIER_QOUTPUT_COUNT
} luthier_qoutput;

typedef struct luthier_qgemm_desc {
    int64_t m, n, k;        /* C is m x n, A is m x k, B is k x n (or n x k if trans_b) */
    int64_t lda, ldb, ldc;  /* row strides in elements (of C's type for ldc); 0 = tight */
    int trans_b;            /* nonzero: B is stored n x k (row j = the k weights of output j) */
    int32_t a_zero_point;   /* za, 0..255; also read by luthier_qgemm_pack_b (folded into B) */
    const int32_t *bias;    /* NULL or n int32 (scale sa * sw[j]) added to every row */
    luthier_qoutput output;
    /* UINT8 output. Requantization: shared (multiplier, shift), or per column when
       multipliers and shifts (n entries each) are set: both or neither. */
    int32_t output_zero_point;        /* zo, 0..255 */
    int32_t multiplier, shift;        /* M in [0, 2^31 - 1], s in 0..31 */
    const int32_t *multipliers, *shifts;
    int32_t output_min, output_max;   /* quantized clamp 0 <= min <= max <= 255; both 0 = none */
    /* FLOAT output: out = (float)acc * (a_scale * b_scale[j]) + float_bias[j], then clamp. */
    float a_scale;                    /* sa > 0 */
    float b_scale;                    /* sw shared by all columns, unless b_scales is set */
    const float *b_scales;            /* NULL or n per-column sw[j] > 0 */
    const float *float_bias;          /* NULL or n floats */
    luthier_activation activation;    /* FLOAT only, a clamp (UINT8: output_min/max; INT32: none) */
    float clamp_min, clamp_max;       /* for LUTHIER_ACTIVATION_CLAMP */
    /* Configuration, as in luthier_sgemm_desc: int8 kernel (luthier_qkernel_find names; NULL =
       the best this context runs), split of the MR-row tiles (NR panels when m fits one tile
       row) over the clusters, per-cluster kernels (same MR, NR, K group and A encoding). */
    const char *kernel;
    luthier_schedule schedule;
    const float *ratios;
    int num_ratios;
    const char *const *cluster_kernels;
} luthier_qgemm_desc;

/* B packed for one int8 kernel family (NR, K group, A encoding) and one a_zero_point. */
typedef struct luthier_qpacked_b luthier_qpacked_b;

/* One-shot: packs B into a temporary buffer, then runs. m == 0 or n == 0 is a no-op; k == 0
   gives the output of acc = bias. c is uint8_t, float or int32_t per desc->output. */
LUTHIER_API luthier_status luthier_qgemm(luthier_context *ctx, const luthier_qgemm_desc *desc,
                                         const uint8_t *a, const int8_t *b, void *c);
/* Packs B (desc->k, n, ldb, trans_b, kernel, a_zero_point) once for repeated use. */
LUTHIER_API luthier_status luthier_qgemm_pack_b(luthier_context *ctx,
                                                const luthier_qgemm_desc *desc, const int8_t *b,
                                                luthier_qpacked_b **out);
/* Like luthier_qgemm with B pre-packed: desc->k, n and a_zero_point must match the packed B;
   desc->kernel (NULL = the one B was packed for) must share its NR, K group and A encoding.
   Allocates nothing, except that the context's workspace grows on the first call that needs
   more of it, as luthier_sgemm_packed's does: kernels reading a packed A panel (NEON 8x12),
   and a bias (its sum with the packed compensation, 4 bytes per column). */
LUTHIER_API luthier_status luthier_qgemm_packed(luthier_context *ctx,
                                                const luthier_qgemm_desc *desc, const uint8_t *a,
                                                const luthier_qpacked_b *b, void *c);
LUTHIER_API void luthier_qpacked_b_destroy(luthier_qpacked_b *b); /* NULL is a no-op */
LUTHIER_API size_t luthier_qpacked_b_bytes(const luthier_qpacked_b *b);

/* The int8 kernel registry: luthier_kernels_* for LUTHIER_KERNELS_INT8 (k_unroll = the K group,
   kind = how A is read). */
LUTHIER_API int luthier_qkernel_count(void);
LUTHIER_API luthier_status luthier_qkernel_get(int index, luthier_kernel_info *out);
/* Full name ("luthier_qgemm_ukernel_6x64__avx512vnni") or short ("6x64__avx512vnni"). */
LUTHIER_API luthier_status luthier_qkernel_find(const char *name, int *index);

/* Quantization helpers. */
/* real in [0, 1) -> M in [2^30, 2^31 - 1] (or smaller when real < 2^-32) and s in 0..31 with
   real ~= M * 2^(-31 - s); real == 0 gives (0, 0). INVALID_ARGUMENT for real >= 1, < 0, NaN. */
LUTHIER_API luthier_status luthier_quantize_multiplier(double real, int32_t *multiplier,
                                                       int32_t *shift);
/* Parameters for values in [min, max] (widened to include 0). symmetric = 0: uint8 asymmetric,
   scale = (max - min) / 255, zero point round(-min / scale) in 0..255. symmetric != 0: int8
   symmetric, scale = max(|min|, |max|) / 127, zero point 0. An all-zero range gives scale 1. */
LUTHIER_API luthier_status luthier_quantize_range(float min, float max, int symmetric,
                                                  float *scale, int32_t *zero_point);
/* The quantized bounds [*qmin, *qmax] (for output_min/max) of an activation on a uint8 output
   of (scale, zero_point): NONE [0, 255], RELU [zo, 255], RELU6 [zo, zo + round(6 / scale)],
   CLAMP [zo + round(clamp_min / scale), zo + round(clamp_max / scale)], clipped to 0..255;
   INVALID_ARGUMENT for the activations that are not clamps. */
LUTHIER_API luthier_status luthier_quantize_activation(luthier_activation act, float clamp_min,
                                                       float clamp_max, float scale,
                                                       int32_t zero_point, int32_t *qmin,
                                                       int32_t *qmax);
/* Output (a) of >>scheme for one accumulator: the bit-exact scalar definition. */
LUTHIER_API uint8_t luthier_requantize(int32_t acc, int32_t multiplier, int32_t shift,
                                       int32_t zero_point, int32_t qmin, int32_t qmax);

/* >>api-qconv ==================================================================================
   Quantized 2-D convolution on the int8 GEMM, with the quantization of >>scheme: uint8 input
   (per tensor, zero point input_zero_point), int8 OIHW weights (symmetric, per output channel),
   int32 bias, output (a), (b) or (c) per output channel. The shape fields, layout (NHWC or NCHW
   for input and output), schedule and ratios mean what they mean in luthier_conv2d_desc.
   Padding taps read input_zero_point (the real value 0), so the folded zero-point compensation
   -za * sum(w) stays exact at the borders.

   Algorithms (luthier_conv_algorithm):
     IM2COL     any shape and groups: per block of output pixels, the uint8 im2col rows
                (kh, kw, ci) of each group go to a per-thread buffer (padding = zero point),
                then the GEMM driver on them.
     1X1        kernel 1x1, no padding (any stride, dilation ignored): stride 1 runs the GEMM
                on the NHWC input in place, stride > 1 gathers the strided pixels per block.
     DEPTHWISE  groups == in_channels == out_channels: direct per-channel uint8 x int8 -> int32
                over the taps (AVX-512 VNNI, AVX2, NEON, scalar), then the output stage.
   IMPLICIT_GEMM and the Winograd algorithms are refused (UNSUPPORTED): the int8 kernels read
   each row as one contiguous segment of k bytes. AUTO picks DEPTHWISE, then 1X1, then IM2COL. */

typedef struct luthier_qconv2d_desc {
    int64_t batch, in_channels, in_h, in_w, out_channels, kernel_h, kernel_w; /* all >= 1 */
    int64_t stride_h, stride_w, dilation_h, dilation_w;   /* 0 = 1 */
    int64_t pad_top, pad_left, pad_bottom, pad_right;     /* >= 0 */
    int64_t groups;                                       /* 0 = 1 */
    luthier_layout layout;
    int32_t input_zero_point;         /* za, 0..255 (folded into the packed weights) */
    luthier_qoutput output;
    /* UINT8 output: as luthier_qgemm_desc, per output channel when multipliers and shifts
       (out_channels entries each) are set. */
    int32_t output_zero_point;
    int32_t multiplier, shift;
    const int32_t *multipliers, *shifts;
    int32_t output_min, output_max;   /* quantized clamp (a fused ReLU/ReLU6); both 0 = none */
    /* FLOAT output: (float)acc * (input_scale * weight_scale[c]) + float_bias[c], then clamp. */
    float input_scale;
    float weight_scale;               /* shared, unless weight_scales (out_channels) is set */
    const float *weight_scales;
    const float *float_bias;          /* NULL or out_channels */
    luthier_activation activation;    /* FLOAT only, a clamp */
    float clamp_min, clamp_max;
    /* Configuration; zero = defaults. Per-channel arrays and ratios are copied at create. */
    luthier_conv_algorithm algorithm;
    const char *kernel;               /* int8 kernel (luthier_qkernel_find names); NULL = best */
    luthier_schedule schedule;        /* output pixels split as in luthier_conv2d_desc */
    const float *ratios;
    int num_ratios;
    const char *const *cluster_kernels; /* per cluster, as in luthier_conv2d_desc */
} luthier_qconv2d_desc;

typedef struct luthier_qconv2d_layer luthier_qconv2d_layer;

/* Validates desc, resolves AUTO and the kernel, packs the weights (OIHW int8) and folds the
   zero point; bias: NULL or out_channels int32 (scale input_scale * weight_scale[c]). All
   arrays are copied. */
LUTHIER_API luthier_status luthier_qconv2d_create(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                                  const int8_t *weights_oihw, const int32_t *bias,
                                                  luthier_qconv2d_layer **out);
/* input uint8, output uint8_t / float / int32_t per desc.output, both in desc.layout; they must
   not overlap. The layer is read-only during a run (several contexts may share it). */
LUTHIER_API luthier_status luthier_qconv2d_run(luthier_context *ctx, const luthier_qconv2d_layer *layer,
                                               const uint8_t *input, void *output);
/* algorithm (never AUTO), kernel ("" for DEPTHWISE), output size, bytes held, workspace bytes. */
LUTHIER_API luthier_status luthier_qconv2d_get_info(const luthier_qconv2d_layer *layer,
                                                    luthier_conv2d_info *out);
LUTHIER_API void luthier_qconv2d_destroy(luthier_qconv2d_layer *layer); /* NULL is a no-op */
/* One-shot: create, run, destroy. */
LUTHIER_API luthier_status luthier_qconv2d(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                           const uint8_t *input, const int8_t *weights_oihw,
                                           const int32_t *bias, void *output);

/* >>qcontract ==================================================================================

   An int8 microkernel computes one MR x NR tile of C from A (uint8) and packed B (int8), all
   of k in one call (the int32 accumulators never leave the kernel), then the output stage.

   Packed B, one panel per NR columns, in groups of KG (the kernel's K group: 4 for dot-product
   kernels, 2 for AVX2, 1 for widening kernels) steps of k:

       panel p, group g:  b[(g*NR + j)*KG + t] = B[g*KG + t][p*NR + j]     (0 past k or n)
                          +-------------------------------------------+
                     g=0  | j=0: t=0..KG-1 | j=1: t=0..KG-1 | ... NR  |   NR*KG bytes
                     g=1  | ...                                        |
                          +-------------------------------------------+
       groups = ceil(k / KG); a panel is groups*NR*KG bytes; panels follow each other.
       With KG = 4 one 16-lane vpdpbusd (or a 4-lane SDOT) consumes 16 (4) columns x 4 steps.

   A, hybrid kernels (kind LUTHIER_KERNEL_HYBRID): read in place through row pointers:
       a_rows[i] points to the k bytes of row i (i < m); slots i >= m are not read (a kernel
       computing a full MR-row tile reuses row m-1). Rows are read exactly in [0, k): the k % KG
       tail goes through a zero-padded copy, so no byte past a row's end is touched.
   A, interleaved kernels: a packed panel, groups of KG steps of MR rows:
       a[(g*MR + i)*KG + t] = enc(A[i][g*KG + t])   (0 for rows >= m and steps >= k)
   A encoding (column "a_s8" of the registry): 0 = uint8 as is (x86 vpdpbusd, widening kernels);
   1 = A ^ 0x80, i.e. A - 128 as int8 (NEON SDOT is int8 x int8). Hybrid kernels apply it when
   they load A; the packed B's compensation carries the matching -za' * S[j].

   Rules: 1 <= m <= MR, 1 <= n <= NR, k >= 1; only C[0..m-1][0..n-1] is written (C never
   read); offset[0..NR-1] is added to every row (padding entries are read); the per-column
   output parameters (multiplier, shift, b_scale, bias) are read in [0, n) only; no alignment
   is required of any pointer or of ldc (in elements of C's type).
*/

typedef struct luthier_qgemm_ukernel_args {
    size_t m, n, k;                /* 1..MR rows, 1..NR columns, k >= 1 */
    const uint8_t *const *a_rows;  /* hybrid: MR row pointers */
    const uint8_t *a;              /* interleaved: packed A panel */
    const int8_t *b;               /* packed B panel */
    const int32_t *offset;         /* NR int32: -za' * S[j] + bias[j] (0 past n) */
    void *c;                       /* row i at (char *)c + i * ldc * element size */
    size_t ldc;
    luthier_qoutput output;
    const int32_t *multiplier, *shift; /* UINT8: n entries */
    int32_t zero_point, qmin, qmax;    /* UINT8 */
    float a_scale;                     /* FLOAT */
    const float *b_scale, *bias;       /* FLOAT: n entries; bias may be NULL */
    float min, max;                    /* FLOAT: applied when clamp is nonzero */
    int clamp;
} luthier_qgemm_ukernel_args;

typedef void (*luthier_qgemm_ukernel_fn)(const luthier_qgemm_ukernel_args *args);

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_INT8_H_INCLUDED */

#if defined(LUTHIER_INT8_IMPLEMENTATION) && !defined(LUTHIER__INT8_IMPL_DONE)
#define LUTHIER__INT8_IMPL_DONE

#ifndef LUTHIER__GEMM_IMPL_DONE
#error "define LUTHIER_IMPLEMENTATION before including luthier.h; it compiles luthier_int8.h"
#endif

#define LUTHIER__QMAX_MR 16
#define LUTHIER__QMAX_NR 64

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-requant =============================================================================== */

/* gemmlowp's SaturatingRoundingDoublingHighMul, written as gemmlowp defines it (the SIMD
   kernels use the equivalent (a*b + 2^30) >> 31, or SQRDMULH on NEON). */
LUTHIER__INLINE int32_t luthier__srdhm(int32_t a, int32_t b) {
    const int64_t ab = (int64_t)a * (int64_t)b;
    const int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp's RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero (e 0..31). */
LUTHIER__INLINE int32_t luthier__rdbpot(int32_t x, int e) {
    const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

LUTHIER_API uint8_t luthier_requantize(int32_t acc, int32_t multiplier, int32_t shift,
                                       int32_t zero_point, int32_t qmin, int32_t qmax) {
    int64_t y = luthier__rdbpot(luthier__srdhm(acc, multiplier), (int)(shift & 31));
    /* clamp before adding the zero point (in 64 bits: bounds and zero point outside 0..255
       must not overflow), then to the uint8 range */
    if (y < (int64_t)qmin - zero_point) y = (int64_t)qmin - zero_point;
    if (y > (int64_t)qmax - zero_point) y = (int64_t)qmax - zero_point;
    y += zero_point;
    return (uint8_t)(y < 0 ? 0 : y > 255 ? 255 : y);
}

LUTHIER_API luthier_status luthier_quantize_multiplier(double real, int32_t *multiplier,
                                                       int32_t *shift) {
    int e = 0;
    int64_t q;
    if (!multiplier || !shift || !(real >= 0.0 && real < 1.0)) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *multiplier = 0;
    *shift = 0;
    if (real == 0.0) return LUTHIER_STATUS_OK;
    q = (int64_t)floor(ldexp(frexp(real, &e), 31) + 0.5); /* real = f * 2^e, f in [0.5, 1) */
    if (q == ((int64_t)1 << 31)) { /* f rounded up to 1 */
        q >>= 1;
        e++;
    }
    if (e > 0) { /* real rounded up to 1.0: the largest representable value below it */
        q = INT32_MAX;
        e = 0;
    }
    if (-e > 31) { /* tiny: drop precision rather than the value (rounded; 0 below 2^-63) */
        const int drop = -e - 31;
        q = drop >= 32 ? 0 : (q + ((int64_t)1 << (drop - 1))) >> drop;
        e = -31;
    }
    if (!q) return LUTHIER_STATUS_OK;
    *multiplier = (int32_t)q;
    *shift = (int32_t)-e;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_quantize_range(float min, float max, int symmetric,
                                                  float *scale, int32_t *zero_point) {
    if (!scale || !zero_point || !(min <= max) || !(min >= -FLT_MAX) || !(max <= FLT_MAX))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (min > 0.0f) min = 0.0f;
    if (max < 0.0f) max = 0.0f;
    *zero_point = 0;
    if (symmetric) {
        const float m = -min > max ? -min : max;
        *scale = m > 0.0f ? m / 127.0f : 1.0f;
    } else {
        double zp;
        *scale = max > min ? (float)(((double)max - (double)min) / 255.0) : 1.0f;
        if (!(*scale > 0.0f)) *scale = FLT_MIN; /* a denormal range: before the division below */
        zp = floor(-(double)min / (double)*scale + 0.5);
        *zero_point = (int32_t)(zp < 0.0 ? 0.0 : zp > 255.0 ? 255.0 : zp);
    }
    if (!(*scale > 0.0f)) *scale = FLT_MIN; /* a denormal range */
    return LUTHIER_STATUS_OK;
}

/* zo + round(v / scale), clipped to 0..255 */
LUTHIER_PRIVATE int32_t luthier__quantize_value(float v, float scale, int32_t zero_point) {
    const double q = floor((double)v / (double)scale + 0.5) + zero_point;
    return (int32_t)(q < 0.0 ? 0.0 : q > 255.0 ? 255.0 : q);
}

LUTHIER_API luthier_status luthier_quantize_activation(luthier_activation act, float clamp_min,
                                                       float clamp_max, float scale,
                                                       int32_t zero_point, int32_t *qmin,
                                                       int32_t *qmax) {
    float lo, hi;
    if (!qmin || !qmax || !(scale > 0.0f && scale <= FLT_MAX) || zero_point < 0 || zero_point > 255 ||
        (unsigned)act >= (unsigned)LUTHIER_ACTIVATION_COUNT ||
        (act == LUTHIER_ACTIVATION_CLAMP && !(clamp_min <= clamp_max)) || luthier__act_is_post(act))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    *qmin = 0;
    *qmax = 255;
    if (luthier__activation_bounds(act, clamp_min, clamp_max, &lo, &hi)) {
        if (lo > -INFINITY) *qmin = luthier__quantize_value(lo, scale, zero_point);
        if (hi < INFINITY) *qmax = luthier__quantize_value(hi, scale, zero_point);
    }
    return LUTHIER_STATUS_OK;
}

/* >>qukernel-scalar: plain C, always compiled: the fallback and the oracle. Any MR, NR, K group,
   kind and A encoding (the tests run it with every SIMD kernel's parameters). */

/* Output stage of one element (the definitions of >>scheme). */
LUTHIER__INLINE void luthier__qstore_scalar(const luthier_qgemm_ukernel_args *p, size_t i, size_t j,
                                            int32_t acc) {
    if (p->output == LUTHIER_QOUTPUT_UINT8) {
        ((uint8_t *)p->c)[i * p->ldc + j] = luthier_requantize(acc, p->multiplier[j], p->shift[j],
                                                               p->zero_point, p->qmin, p->qmax);
    } else if (p->output == LUTHIER_QOUTPUT_FLOAT) {
        float v = fmaf((float)acc, p->a_scale * p->b_scale[j], p->bias ? p->bias[j] : 0.0f);
        if (p->clamp) {
            v = v < p->min ? p->min : v;
            v = v > p->max ? p->max : v;
        }
        ((float *)p->c)[i * p->ldc + j] = v;
    } else {
        ((int32_t *)p->c)[i * p->ldc + j] = acc;
    }
}

LUTHIER_PRIVATE void luthier__qukernel_ref(const luthier_qgemm_ukernel_args *p, size_t mr, size_t nr,
                                           size_t kg, int interleaved, int a_s8) {
    size_t i, j, kk;
    for (i = 0; i < p->m; i++)
        for (j = 0; j < p->n; j++) {
            uint32_t acc = (uint32_t)p->offset[j];
            for (kk = 0; kk < p->k; kk++) {
                const size_t g = kk / kg, t = kk % kg;
                const int32_t bv = p->b[(g * nr + j) * kg + t];
                int32_t av;
                if (interleaved) /* packed bytes are already encoded */
                    av = a_s8 ? (int32_t)(p->a[(g * mr + i) * kg + t] ^ 0x80) - 128
                              : (int32_t)p->a[(g * mr + i) * kg + t];
                else
                    av = (int32_t)p->a_rows[i][kk] - (a_s8 ? 128 : 0);
                acc += (uint32_t)(av * bv);
            }
            luthier__qstore_scalar(p, i, j, (int32_t)acc);
        }
}

LUTHIER_PRIVATE void luthier_qgemm_ukernel_4x4__scalar(const luthier_qgemm_ukernel_args *p) {
    luthier__qukernel_ref(p, 4, 4, 1, 0, 0);
}

#define LUTHIER__QUKERNELS_SCALAR(X) X(4x4__scalar, "scalar", 4, 4, 1, LUTHIER_KERNEL_HYBRID, 0, 0u)

LUTHIER__INLINE uint32_t luthier__load_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The k % 4 tail of an A row: rem (1..3) bytes, zero-padded. */
LUTHIER__INLINE uint32_t luthier__load_tail_u32(const uint8_t *p, size_t rem) {
    uint8_t t[4] = {0, 0, 0, 0};
    memcpy(t, p, rem);
    return luthier__load_u32(t);
}

/* >>qukernel-avx512vnni ==========================================================================
   The broadcast form of the fp32 kernels with vpdpbusd: per group of 4 steps of k, NV = NR/16
   vectors of packed B (16 columns x 4 steps each) are loaded, and for every row the 4 bytes of A
   are broadcast to all 16 lanes (vpbroadcastd from memory) and multiplied-accumulated
   (u8 x s8 -> int32, four products per lane, no saturation). MR x NV accumulators stay in
   registers for all of k. One template, specialised for every row count (switch on m); edge
   columns use k-masks in the output stage. */
#if LUTHIER__SIMD_X86

#define LUTHIER__QUKERNELS_X86(X)                                                                  \
    X(6x64__avx512vnni, "avx512vnni", 6, 64, 4, LUTHIER_KERNEL_HYBRID, 0,                          \
      LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX512VNNI)                                                \
    X(12x32__avx512vnni, "avx512vnni", 12, 32, 4, LUTHIER_KERNEL_HYBRID, 0,                        \
      LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX512VNNI)                                                \
    X(14x32__avx512vnni, "avx512vnni", 14, 32, 4, LUTHIER_KERNEL_HYBRID, 0,                        \
      LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX512VNNI)                                                \
    X(6x16__avxvnni, "avxvnni", 6, 16, 4, LUTHIER_KERNEL_HYBRID, 0,                                \
      LUTHIER_CPU_AVX2_FMA | LUTHIER_CPU_AVXVNNI)                                                  \
    X(4x16__avx2, "avx2", 4, 16, 2, LUTHIER_KERNEL_HYBRID, 0, LUTHIER_CPU_AVX2_FMA)

#define LUTHIER__TARGET_Q512 __attribute__((target("avx512f,avx512bw,avx512vnni,avx2,fma,f16c")))
#define LUTHIER__TARGET_QVNNI256 __attribute__((target("avxvnni,avx2,fma,f16c")))
#define LUTHIER__QINLINE static inline __attribute__((always_inline))
/* groups of 4 k steps ahead at which the few-row (memory-bound) tiles prefetch packed B */
#define LUTHIER__QB_PREFETCH 16

/* Output stage (a) on 16 lanes: x + offset already in x. SRDHM as (x*M + 2^30) >> 31 on the
   even and odd lanes' 64-bit products; RDBPOT with the remainder test; clamp around zo. */
LUTHIER__TARGET_Q512 LUTHIER__QINLINE __m512i luthier__q512_requant(__m512i x, __m512i mul,
                                                                   __m512i mul_odd, __m512i sh,
                                                                   __m512i smask, __m512i shalf,
                                                                   __m512i lo, __m512i hi,
                                                                   __m512i zo) {
    const __m512i r = _mm512_set1_epi64((long long)1 << 30);
    const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, mul), r);
    const __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), mul_odd), r);
    const __m512i t = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 31),
                                              _mm512_slli_epi64(po, 1));
    const __m512i rem = _mm512_and_si512(t, smask);
    const __m512i thr = _mm512_sub_epi32(shalf, _mm512_srai_epi32(t, 31));
    __m512i q = _mm512_srav_epi32(t, sh);
    q = _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, _mm512_set1_epi32(1));
    return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, lo), hi), zo);
}

LUTHIER__TARGET_Q512 LUTHIER__QINLINE void luthier__q512_tile(const luthier_qgemm_ukernel_args *p,
                                                             const int R, const int NV) {
    __m512i acc[LUTHIER__QMAX_MR][4];
    const uint8_t *ar[LUTHIER__QMAX_MR];
    const int8_t *b = p->b;
    const size_t k = p->k, k4 = k & ~(size_t)3, ldc = p->ldc;
    size_t kk;
    int r, v;
    LUTHIER__UNROLL for (r = 0; r < R; r++) {
        ar[r] = p->a_rows[r];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_si512();
    }
    LUTHIER__UNROLL_K for (kk = 0; kk < k4; kk += 4) {
        __m512i bv[4];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) {
            if (R <= 2) /* memory-bound (GEMV-like): run ahead of the B stream */
                _mm_prefetch((const char *)(b + 64 * v + 64 * NV * LUTHIER__QB_PREFETCH), _MM_HINT_T0);
            bv[v] = _mm512_loadu_si512((const void *)(b + 64 * v));
        }
        b += 64 * NV;
        LUTHIER__UNROLL for (r = 0; r < R; r++) {
            const __m512i av = _mm512_set1_epi32((int)luthier__load_u32(ar[r] + kk));
            LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
        }
    }
    if (kk < k) {
        __m512i bv[4];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) bv[v] = _mm512_loadu_si512((const void *)(b + 64 * v));
        LUTHIER__UNROLL for (r = 0; r < R; r++) {
            const __m512i av = _mm512_set1_epi32((int)luthier__load_tail_u32(ar[r] + kk, k - kk));
            LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
        }
    }
    /* output stage, one 16-column vector at a time (its parameters loaded once) */
    LUTHIER__UNROLL for (v = 0; v < NV; v++) {
        const size_t lo = (size_t)v * 16, rem = p->n > lo ? p->n - lo : 0;
        const __mmask16 mask = (__mmask16)(rem >= 16 ? 0xffffu : (1u << rem) - 1u);
        const __m512i off = _mm512_loadu_si512((const void *)(p->offset + lo));
        if (!rem) break;
        LUTHIER__UNROLL for (r = 0; r < R; r++) acc[r][v] = _mm512_add_epi32(acc[r][v], off);
        if (p->output == LUTHIER_QOUTPUT_UINT8) {
            const __m512i one = _mm512_set1_epi32(1), zo = _mm512_set1_epi32(p->zero_point);
            const __m512i mul = _mm512_maskz_loadu_epi32(mask, p->multiplier + lo);
            const __m512i sh = _mm512_maskz_loadu_epi32(mask, p->shift + lo);
            const __m512i smask = _mm512_sub_epi32(_mm512_sllv_epi32(one, sh), one);
            const __m512i shalf = _mm512_srli_epi32(smask, 1), mul_odd = _mm512_srli_epi64(mul, 32);
            const __m512i qlo = _mm512_set1_epi32(p->qmin - p->zero_point);
            const __m512i qhi = _mm512_set1_epi32(p->qmax - p->zero_point);
            LUTHIER__UNROLL for (r = 0; r < R; r++)
                _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)p->c + (size_t)r * ldc + lo, mask,
                                                 luthier__q512_requant(acc[r][v], mul, mul_odd, sh, smask,
                                                                       shalf, qlo, qhi, zo));
        } else if (p->output == LUTHIER_QOUTPUT_FLOAT) {
            const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(p->a_scale), _mm512_maskz_loadu_ps(mask, p->b_scale + lo));
            const __m512 fb = p->bias ? _mm512_maskz_loadu_ps(mask, p->bias + lo) : _mm512_setzero_ps();
            const __m512 flo = _mm512_set1_ps(p->min), fhi = _mm512_set1_ps(p->max);
            LUTHIER__UNROLL for (r = 0; r < R; r++) {
                __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][v]), scale, fb);
                if (p->clamp) y = _mm512_min_ps(_mm512_max_ps(y, flo), fhi);
                _mm512_mask_storeu_ps((float *)p->c + (size_t)r * ldc + lo, mask, y);
            }
        } else {
            LUTHIER__UNROLL for (r = 0; r < R; r++)
                _mm512_mask_storeu_epi32((int32_t *)p->c + (size_t)r * ldc + lo, mask, acc[r][v]);
        }
    }
}

#define LUTHIER__DEFINE_Q512(sname, NV, CASES)                                                     \
    LUTHIER__DEFINE_TILES(LUTHIER__TARGET_Q512, luthier_qgemm_ukernel_##sname, luthier_qgemm_ukernel_args, CASES, \
                          luthier__q512_tile, (NV))
LUTHIER__DEFINE_Q512(6x64__avx512vnni, 4, LUTHIER__CASES_6)
LUTHIER__DEFINE_Q512(12x32__avx512vnni, 2, LUTHIER__CASES_12)
LUTHIER__DEFINE_Q512(14x32__avx512vnni, 2, LUTHIER__CASES_14)

/* >>qukernel-avx256: AVX-VNNI (VEX vpdpbusd on ymm, K group 4: 8 columns x 4 steps per
   vector) and AVX2 without VNNI (K group 2: per vector 8 columns x 2 steps are sign-extended to
   int16 and vpmaddwd'ed with the step pair of A zero-extended to int16: exact, where the
   u8 x s8 vpmaddubsw would saturate at 16 bits). One output stage for both. */

LUTHIER__TARGET_AVX2 LUTHIER__QINLINE __m256i luthier__q256_requant(__m256i x, __m256i mul, __m256i sh,
                                                                   __m256i lo, __m256i hi, __m256i zo) {
    const __m256i r = _mm256_set1_epi64x((long long)1 << 30), one = _mm256_set1_epi32(1);
    const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, mul), r);
    const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(mul, 32)), r);
    const __m256i t = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
    const __m256i smask = _mm256_sub_epi32(_mm256_sllv_epi32(one, sh), one);
    const __m256i thr = _mm256_sub_epi32(_mm256_srli_epi32(smask, 1), _mm256_srai_epi32(t, 31));
    __m256i q = _mm256_srav_epi32(t, sh);
    q = _mm256_sub_epi32(q, _mm256_cmpgt_epi32(_mm256_and_si256(t, smask), thr));
    return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(q, lo), hi), zo);
}

LUTHIER__TARGET_AVX2 LUTHIER__QINLINE void luthier__q256_output(const luthier_qgemm_ukernel_args *p,
                                                               __m256i (*acc)[3], const int R, const int NV) {
    const size_t ldc = p->ldc;
    int r, v;
    LUTHIER__UNROLL for (v = 0; v < NV; v++) {
        const size_t lo = (size_t)v * 8, rem = p->n > lo ? (p->n - lo < 8 ? p->n - lo : 8) : 0;
        const __m256i mask = _mm256_loadu_si256((const __m256i *)(luthier__avx2_mask_table + 8 - rem));
        const __m256i off = _mm256_loadu_si256((const __m256i *)(p->offset + lo));
        if (!rem) break;
        LUTHIER__UNROLL for (r = 0; r < R; r++) acc[r][v] = _mm256_add_epi32(acc[r][v], off);
        if (p->output == LUTHIER_QOUTPUT_UINT8) {
            const __m256i mul = _mm256_maskload_epi32(p->multiplier + lo, mask);
            const __m256i sh = _mm256_maskload_epi32(p->shift + lo, mask);
            const __m256i zo = _mm256_set1_epi32(p->zero_point);
            const __m256i qlo = _mm256_set1_epi32(p->qmin - p->zero_point);
            const __m256i qhi = _mm256_set1_epi32(p->qmax - p->zero_point);
            LUTHIER__UNROLL for (r = 0; r < R; r++) {
                const __m256i q = luthier__q256_requant(acc[r][v], mul, sh, qlo, qhi, zo);
                const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
                uint8_t *dst = (uint8_t *)p->c + (size_t)r * ldc + lo;
                if (rem == 8) {
                    _mm_storel_epi64((__m128i *)dst, _mm_packus_epi16(w, w));
                } else {
                    uint8_t tmp[16];
                    _mm_storeu_si128((__m128i *)tmp, _mm_packus_epi16(w, w));
                    memcpy(dst, tmp, rem);
                }
            }
        } else if (p->output == LUTHIER_QOUTPUT_FLOAT) {
            const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(p->a_scale), _mm256_maskload_ps(p->b_scale + lo, mask));
            const __m256 fb = p->bias ? _mm256_maskload_ps(p->bias + lo, mask) : _mm256_setzero_ps();
            const __m256 flo = _mm256_set1_ps(p->min), fhi = _mm256_set1_ps(p->max);
            LUTHIER__UNROLL for (r = 0; r < R; r++) {
                __m256 y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][v]), scale, fb);
                if (p->clamp) y = _mm256_min_ps(_mm256_max_ps(y, flo), fhi);
                _mm256_maskstore_ps((float *)p->c + (size_t)r * ldc + lo, mask, y);
            }
        } else {
            LUTHIER__UNROLL for (r = 0; r < R; r++)
                _mm256_maskstore_epi32((int *)((int32_t *)p->c + (size_t)r * ldc + lo), mask, acc[r][v]);
        }
    }
}

LUTHIER__TARGET_QVNNI256 LUTHIER__QINLINE void luthier__qvnni256_tile(const luthier_qgemm_ukernel_args *p,
                                                                     const int R, const int NV) {
    __m256i acc[LUTHIER__QMAX_MR][3];
    const uint8_t *ar[LUTHIER__QMAX_MR];
    const int8_t *b = p->b;
    const size_t k = p->k, k4 = k & ~(size_t)3;
    size_t kk;
    int r, v;
    LUTHIER__UNROLL for (r = 0; r < R; r++) {
        ar[r] = p->a_rows[r];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_si256();
    }
    LUTHIER__UNROLL_K for (kk = 0; kk < k4; kk += 4) {
        __m256i bv[3];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) bv[v] = _mm256_loadu_si256((const __m256i *)(b + 32 * v));
        b += 32 * NV;
        LUTHIER__UNROLL for (r = 0; r < R; r++) {
            const __m256i av = _mm256_set1_epi32((int)luthier__load_u32(ar[r] + kk));
            LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], av, bv[v]);
        }
    }
    if (kk < k) {
        __m256i bv[3];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) bv[v] = _mm256_loadu_si256((const __m256i *)(b + 32 * v));
        LUTHIER__UNROLL for (r = 0; r < R; r++) {
            const __m256i av = _mm256_set1_epi32((int)luthier__load_tail_u32(ar[r] + kk, k - kk));
            LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], av, bv[v]);
        }
    }
    luthier__q256_output(p, acc, R, NV);
}

/* One step pair of the AVX2 kernel: B (8 columns x 2 steps per vector, int16) x the pair. */
#define LUTHIER__QAVX2_PAIR(bp, pair_of_row)                                                        \
    do {                                                                                           \
        __m256i bw[3];                                                                             \
        LUTHIER__UNROLL for (v = 0; v < NV; v++)                                                   \
            bw[v] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)((bp) + 16 * v)));       \
        LUTHIER__UNROLL for (r = 0; r < R; r++) {                                                  \
            const __m256i av = pair_of_row;                                                        \
            LUTHIER__UNROLL for (v = 0; v < NV; v++)                                               \
                acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(av, bw[v]));             \
        }                                                                                          \
    } while (0)

LUTHIER__TARGET_AVX2 LUTHIER__QINLINE void luthier__qavx2_tile(const luthier_qgemm_ukernel_args *p,
                                                              const int R, const int NV) {
    __m256i acc[LUTHIER__QMAX_MR][3];
    __m128i aw[LUTHIER__QMAX_MR]; /* 4 steps of each row as int16 */
    const uint8_t *ar[LUTHIER__QMAX_MR];
    const int8_t *b = p->b;
    const size_t k = p->k, k4 = k & ~(size_t)3;
    size_t kk;
    int r, v;
    LUTHIER__UNROLL for (r = 0; r < R; r++) {
        ar[r] = p->a_rows[r];
        LUTHIER__UNROLL for (v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_si256();
    }
    for (kk = 0; kk <= k; kk += 4) {
        const size_t rem = kk < k4 ? 4 : k - kk;
        if (!rem) break;
        LUTHIER__UNROLL for (r = 0; r < R; r++)
            aw[r] = _mm_cvtepu8_epi16(_mm_cvtsi32_si128(
                (int)(rem == 4 ? luthier__load_u32(ar[r] + kk) : luthier__load_tail_u32(ar[r] + kk, rem))));
        LUTHIER__QAVX2_PAIR(b, _mm256_broadcastd_epi32(aw[r]));
        b += 16 * NV;
        if (rem > 2) {
            LUTHIER__QAVX2_PAIR(b, _mm256_broadcastd_epi32(_mm_srli_epi64(aw[r], 32)));
            b += 16 * NV;
        }
    }
    luthier__q256_output(p, acc, R, NV);
}

#define LUTHIER__DEFINE_Q256(sname, TILE, TARGET, NV, CASES)                                       \
    LUTHIER__DEFINE_TILES(TARGET, luthier_qgemm_ukernel_##sname, luthier_qgemm_ukernel_args, CASES, TILE, (NV))
LUTHIER__DEFINE_Q256(6x16__avxvnni, luthier__qvnni256_tile, LUTHIER__TARGET_QVNNI256, 2, LUTHIER__CASES_6)
LUTHIER__DEFINE_Q256(4x16__avx2, luthier__qavx2_tile, LUTHIER__TARGET_AVX2, 2, LUTHIER__CASES_4)

#endif /* LUTHIER__SIMD_X86 */
#ifndef LUTHIER__QUKERNELS_X86
#define LUTHIER__QUKERNELS_X86(X)
#endif

/* >>qukernel-neondot =============================================================================
   SDOT kernels (Armv8.2 dotprod), built with a per-function target attribute so the AArch64
   baseline build still runs on Cortex-A53/A72: they are only called when the CPU reports
   LUTHIER_CPU_DOTPROD (HWCAP_ASIMDDP). GCC accepts the attribute with the intrinsics; Clang
   (14) does not, so with Clang they are compiled only when the whole build targets dotprod
   (-march=armv8.2-a+dotprod defines __ARM_FEATURE_DOTPROD).
   SDOT multiplies int8 x int8: A enters as A ^ 0x80 = A - 128 (encoding 1) and the packed B's
   compensation is -(za - 128) * S[j].
   8x12 (interleaved): per group of 4 steps, two q registers of packed A (8 rows x 4 steps) and
   three of B (12 columns x 4 steps); 24 accumulators; sdot acc.4s, b.16b, a.4b[row % 4].
   4x16 (hybrid): A read in place, 16 steps (4 groups) of a row per q register (one eor per
   row and 16 steps), four B registers per group; 16 accumulators; sdot acc, b, a.4b[group]. */
#if LUTHIER__SIMD_NEON

#if defined(__ARM_FEATURE_DOTPROD)
#define LUTHIER__TARGET_QDOT
#define LUTHIER__HAVE_QNEON_DOT 1
#elif defined(__GNUC__) && !defined(__clang__)
#define LUTHIER__TARGET_QDOT __attribute__((target("arch=armv8.2-a+dotprod")))
#define LUTHIER__HAVE_QNEON_DOT 1
#endif

/* Per-column output parameters of a tile, zero-padded to NR (<= 16) so whole vectors load. */
typedef struct luthier__qneon_cols {
    int32_t mul[16], sh[16];
    float scale[16], bias[16];
} luthier__qneon_cols;

LUTHIER__INLINE void luthier__qneon_cols_init(const luthier_qgemm_ukernel_args *p,
                                              luthier__qneon_cols *cols) {
    size_t j;
    memset(cols, 0, sizeof *cols);
    for (j = 0; j < p->n; j++) {
        if (p->output == LUTHIER_QOUTPUT_UINT8) {
            cols->mul[j] = p->multiplier[j];
            cols->sh[j] = p->shift[j];
        } else if (p->output == LUTHIER_QOUTPUT_FLOAT) {
            cols->scale[j] = p->a_scale * p->b_scale[j];
            cols->bias[j] = p->bias ? p->bias[j] : 0.0f;
        }
    }
}

/* Output stage (a) on 4 lanes: SQRDMULH is SRDHM exactly; RDBPOT with the remainder test. */
LUTHIER__INLINE int32x4_t luthier__qneon_requant(int32x4_t x, int32x4_t mul, int32x4_t sh,
                                                 int32x4_t lo, int32x4_t hi, int32x4_t zo) {
    const int32x4_t one = vdupq_n_s32(1);
    const int32x4_t t = vqrdmulhq_s32(x, mul);
    const int32x4_t smask = vsubq_s32(vshlq_s32(one, sh), one);
    const int32x4_t thr = vsubq_s32(vshrq_n_s32(smask, 1), vshrq_n_s32(t, 31));
    int32x4_t q = vshlq_s32(t, vnegq_s32(sh)); /* arithmetic shift right by sh */
    q = vsubq_s32(q, vreinterpretq_s32_u32(vcgtq_s32(vandq_s32(t, smask), thr)));
    return vaddq_s32(vminq_s32(vmaxq_s32(q, lo), hi), zo);
}

/* Adds the offsets to one row of NV vectors (4 columns each) and stores its n columns. */
LUTHIER__INLINE void luthier__qneon_store_row(const luthier_qgemm_ukernel_args *p,
                                              const luthier__qneon_cols *cols, size_t row,
                                              const int32x4_t *acc, int NV) {
    union { uint32_t w[16]; int32_t i[16]; float f[16]; uint8_t b[64]; } tmp;
    const size_t nr = (size_t)NV * 4, n = p->n;
    int v;
    if (p->output == LUTHIER_QOUTPUT_UINT8) {
        const int32x4_t zo = vdupq_n_s32(p->zero_point);
        const int32x4_t lo = vdupq_n_s32(p->qmin - p->zero_point), hi = vdupq_n_s32(p->qmax - p->zero_point);
        uint8_t *dst = (uint8_t *)p->c + row * p->ldc;
        for (v = 0; v < NV; v++) {
            const int32x4_t x = vaddq_s32(acc[v], vld1q_s32(p->offset + 4 * v));
            const int32x4_t q = luthier__qneon_requant(x, vld1q_s32(cols->mul + 4 * v), vld1q_s32(cols->sh + 4 * v), lo, hi, zo);
            const uint16x4_t h = vqmovun_s32(q);
            vst1_lane_u32(&tmp.w[v], vreinterpret_u32_u8(vqmovn_u16(vcombine_u16(h, h))), 0);
        }
        if (n == nr) memcpy(dst, tmp.b, nr);
        else memcpy(dst, tmp.b, n);
    } else if (p->output == LUTHIER_QOUTPUT_FLOAT) {
        const float32x4_t flo = vdupq_n_f32(p->min), fhi = vdupq_n_f32(p->max);
        for (v = 0; v < NV; v++) {
            const int32x4_t x = vaddq_s32(acc[v], vld1q_s32(p->offset + 4 * v));
            float32x4_t y = vfmaq_f32(vld1q_f32(cols->bias + 4 * v), vcvtq_f32_s32(x), vld1q_f32(cols->scale + 4 * v));
            if (p->clamp) y = vminq_f32(vmaxq_f32(y, flo), fhi);
            vst1q_f32(tmp.f + 4 * v, y);
        }
        memcpy((float *)p->c + row * p->ldc, tmp.f, n * sizeof(float));
    } else {
        for (v = 0; v < NV; v++) vst1q_s32(tmp.i + 4 * v, vaddq_s32(acc[v], vld1q_s32(p->offset + 4 * v)));
        memcpy((int32_t *)p->c + row * p->ldc, tmp.i, n * sizeof(int32_t));
    }
}

#define LUTHIER__QROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
/* An empty asm with a memory clobber: keeps GCC from hoisting the next step's B loads above
   this step's multiply-accumulates (hoisting all of an unrolled iteration's B registers spilled
   accumulators to the stack). */
#define LUTHIER__QBARRIER() __asm__ __volatile__("" ::: "memory")
/* Main-loop markers for bench/mca_neon.sh (mca_kernel.py analyses the region between them). */
#define LUTHIER__QMCA_BEGIN() __asm__ __volatile__("// LLVM-MCA-BEGIN" ::: "memory")
#define LUTHIER__QMCA_END() __asm__ __volatile__("// LLVM-MCA-END" ::: "memory")

#ifdef LUTHIER__HAVE_QNEON_DOT
#define LUTHIER__QDOT3(r, av, l)                                                                   \
    c##r##0 = vdotq_laneq_s32(c##r##0, b0, av, l);                                                 \
    c##r##1 = vdotq_laneq_s32(c##r##1, b1, av, l);                                                 \
    c##r##2 = vdotq_laneq_s32(c##r##2, b2, av, l);
#define LUTHIER__QZERO3(r) int32x4_t c##r##0 = vdupq_n_s32(0), c##r##1 = c##r##0, c##r##2 = c##r##0;

LUTHIER__TARGET_QDOT LUTHIER_PRIVATE void luthier_qgemm_ukernel_8x12__neondot(const luthier_qgemm_ukernel_args *p) {
    const int8_t *a = (const int8_t *)p->a, *b = p->b;
    size_t g, r;
    luthier__qneon_cols cols;
    LUTHIER__QROWS8(LUTHIER__QZERO3)
    for (g = (p->k + 3) / 4; g; g--) {
        const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
        const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32);
        a += 32;
        b += 48;
        LUTHIER__QDOT3(0, a0, 0) LUTHIER__QDOT3(1, a0, 1) LUTHIER__QDOT3(2, a0, 2) LUTHIER__QDOT3(3, a0, 3)
        LUTHIER__QDOT3(4, a1, 0) LUTHIER__QDOT3(5, a1, 1) LUTHIER__QDOT3(6, a1, 2) LUTHIER__QDOT3(7, a1, 3)
    }
    luthier__qneon_cols_init(p, &cols);
    {
        const int32x4_t acc[8][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32},
                                     {c40, c41, c42}, {c50, c51, c52}, {c60, c61, c62}, {c70, c71, c72}};
        for (r = 0; r < p->m; r++) luthier__qneon_store_row(p, &cols, r, acc[r], 3);
    }
}

#define LUTHIER__QDOT4(r, av, l)                                                                   \
    c##r##0 = vdotq_laneq_s32(c##r##0, b0, av, l);                                                 \
    c##r##1 = vdotq_laneq_s32(c##r##1, b1, av, l);                                                 \
    c##r##2 = vdotq_laneq_s32(c##r##2, b2, av, l);                                                 \
    c##r##3 = vdotq_laneq_s32(c##r##3, b3, av, l);
#define LUTHIER__QGROUP4x16(bp, l, A0, A1, A2, A3)                                                 \
    {                                                                                              \
        const int8x16_t b0 = vld1q_s8(bp), b1 = vld1q_s8((bp) + 16);                               \
        const int8x16_t b2 = vld1q_s8((bp) + 32), b3 = vld1q_s8((bp) + 48);                        \
        LUTHIER__QDOT4(0, A0, l) LUTHIER__QDOT4(1, A1, l) LUTHIER__QDOT4(2, A2, l) LUTHIER__QDOT4(3, A3, l) \
        LUTHIER__QBARRIER();                                                                       \
    }

LUTHIER__TARGET_QDOT LUTHIER_PRIVATE void luthier_qgemm_ukernel_4x16__neondot_hybrid(const luthier_qgemm_ukernel_args *p) {
    const size_t m = p->m, k = p->k;
    const uint8_t *a0r = p->a_rows[0], *a1r = p->a_rows[m > 1 ? 1 : m - 1];
    const uint8_t *a2r = p->a_rows[m > 2 ? 2 : m - 1], *a3r = p->a_rows[m > 3 ? 3 : m - 1];
    const int8_t *b = p->b;
    const uint8x16_t x80 = vdupq_n_u8(0x80);
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    int32x4_t c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    luthier__qneon_cols cols;
    size_t kk, r;
    for (kk = 0; kk + 16 <= k; kk += 16) {
        LUTHIER__QMCA_BEGIN();
        {
        const int8x16_t A0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a0r + kk), x80));
        const int8x16_t A1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a1r + kk), x80));
        const int8x16_t A2 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a2r + kk), x80));
        const int8x16_t A3 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a3r + kk), x80));
        LUTHIER__QGROUP4x16(b, 0, A0, A1, A2, A3)
        LUTHIER__QGROUP4x16(b + 64, 1, A0, A1, A2, A3)
        LUTHIER__QGROUP4x16(b + 128, 2, A0, A1, A2, A3)
        LUTHIER__QGROUP4x16(b + 192, 3, A0, A1, A2, A3)
        }
        b += 256;
        LUTHIER__QMCA_END();
    }
    for (; kk < k; kk += 4, b += 64) { /* remaining groups, the last one zero-padded */
        const size_t rem = k - kk < 4 ? k - kk : 4;
#define LUTHIER__QROWGROUP(ptr) \
    vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vdupq_n_u32(luthier__load_tail_u32((ptr) + kk, rem))), x80))
        const int8x16_t A0 = LUTHIER__QROWGROUP(a0r), A1 = LUTHIER__QROWGROUP(a1r);
        const int8x16_t A2 = LUTHIER__QROWGROUP(a2r), A3 = LUTHIER__QROWGROUP(a3r);
#undef LUTHIER__QROWGROUP
        LUTHIER__QGROUP4x16(b, 0, A0, A1, A2, A3)
    }
    luthier__qneon_cols_init(p, &cols);
    {
        const int32x4_t acc[4][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}};
        for (r = 0; r < m; r++) luthier__qneon_store_row(p, &cols, r, acc[r], 4);
    }
}

/* 8x12 SDOT for in-order cores (Cortex-A55, the little core that has dotprod): the packed A
   and B of 8x12__neondot (a group of 4 k steps: 32 bytes of A, 48 of B, the byte layout of one
   step of the fp32 8x12 kernels), so it serves a little cluster over the same packed weights,
   and the int32 tile goes through the same output stage. The A55 issues at most two
   instructions a cycle, in order, and a 128-bit load does not pair with a Q-form SDOT, so the
   main loop (4 groups, 96 SDOTs per iteration) loads 64-bit halves in the slots after SDOTs.
   Not as >>8x12-a53 does (ldr d, ldr x, ins): each q register of A or B arrives as
   "ldr d, [p, x]" (x = 8, register offset: the low half, zeroing the top) and, 4 or more
   SDOTs later, "ld1 {v.d}[1], [p]" (the high half), both in the load pipe. llvm-mca's
   cortex-a55 model puts ins on the SDOT's pipe and holds any instruction that would write
   back before an older SDOT (immediate-offset loads, add: 3 cycles against 4): 59 % of one
   SDOT a cycle for the ins route there, 97 % for this loop (bench/RESULTS.md). Neither is
   measured on the core.
     C[r][4v..4v+3] = v(8 + 3r + v)      A of group s: v0/v1 (even s), v2/v3 (odd s)
     B vector i (i = 3s + column vector) in v(4 + i % 4)
   %[b] points at the high half of a B vector: the SDOTs of B vector i load the high half of
   vector i + 2 (slot 0), the low half of vector i + 3 (slot 1, into the register vector
   i - 1 has freed) and step by 16 (slot 4); %[a] likewise walks A, whose two vectors of
   group s + 1 load during group s. Pointer steps and the loop count are madd/msub by a
   register holding 1 (the integer multiply pipe, beside the SDOT; 4 cycles in the model, as
   the SDOT): every result is read 4 or more SDOTs later and no two of them are in adjacent
   slots, so neither a 4-cycle latency nor a 64-bit multiply holding its pipe for 2 cycles
   stalls the loop. The loop reads up to one group ahead, so the last block of k
   (k % 4 == 0 groups) runs a copy of the body without those loads, and a remainder of 1-3
   groups starts over with 128-bit loads at its own group: nothing is read past the packed
   panels (test_int8_ukernels_panel_ends). */
#define LUTHIER__SDOTN(acc, vb, va, lane) "sdot " #acc ".4s, v" #vb ".16b, v" #va ".4b[" #lane "]\n\t"
/* The halves of a q register through pointer operand p (at its high half), and the step. */
#define LUTHIER__QDLO(n, p) "ldr d" #n ", [%[" #p "], %[o8]]\n\t"
#define LUTHIER__QDHI(n, p) "ld1 {v" #n ".d}[1], [%[" #p "]]\n\t"
#define LUTHIER__QDSTEP(p) "madd %[" #p "], %[s16], %[one], %[" #p "]\n\t"
/* One group (A in vA0/vA1, B in vB0-vB2) that loads ahead: B high halves into h0-h2 and low
   halves into l0-l2, A of the next group into na0/na1; t0/t1 are the loop-control slots. */
#define LUTHIER__QD_GROUP(A0, A1, B0, B1, B2, h0, l0, h1, l1, h2, l2, na0, na1, t0, t1)           \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, B0, A0, A1, LUTHIER__8x12L_C0, LUTHIER__QDHI(h0, b),         \
                      LUTHIER__QDLO(l0, b), LUTHIER__QDLO(na0, a), "", LUTHIER__QDSTEP(b), "", "", \
                      LUTHIER__QDSTEP(a))                                                          \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, B1, A0, A1, LUTHIER__8x12L_C1, LUTHIER__QDHI(h1, b),         \
                      LUTHIER__QDLO(l1, b), "", LUTHIER__QDHI(na0, a), LUTHIER__QDSTEP(b), "",     \
                      LUTHIER__QDLO(na1, a), LUTHIER__QDSTEP(a))                                   \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, B2, A0, A1, LUTHIER__8x12L_C2, LUTHIER__QDHI(h2, b),         \
                      LUTHIER__QDLO(l2, b), t0, LUTHIER__QDHI(na1, a), LUTHIER__QDSTEP(b), "", "", t1)
/* Groups 0-2 of a block of 4 (the B rotation: group s uses B vectors 3s..3s+2). */
#define LUTHIER__QD_GROUPS012                                                                      \
    LUTHIER__QD_GROUP(0, 1, 4, 5, 6, 6, 7, 7, 4, 4, 5, 2, 3, "", "")                               \
    LUTHIER__QD_GROUP(2, 3, 7, 4, 5, 5, 6, 6, 7, 7, 4, 0, 1, "", "")                               \
    LUTHIER__QD_GROUP(0, 1, 6, 7, 4, 4, 5, 5, 6, 6, 7, 2, 3, "", "")
/* The last group of k: only the high half of its last B vector is left to load. */
#define LUTHIER__QD_LAST3                                                                          \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, 5, 2, 3, LUTHIER__8x12L_C0, LUTHIER__QDHI(7, b), "", "", "", \
                      "", "", "", "")                                                              \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, 6, 2, 3, LUTHIER__8x12L_C1, "", "", "", "", "", "", "", "")  \
    LUTHIER__8x12L_GX(LUTHIER__SDOTN, 7, 2, 3, LUTHIER__8x12L_C2, "", "", "", "", "", "", "", "")

/* The k loops over %[k] groups of %[a] (32 bytes per group) and %[b] (48 bytes), into the
   accumulators v8-v31 (set up before); x10 counts blocks of 4 groups, x11 the remainder. */
#define LUTHIER__QD_KLOOP(name)                                                                    \
    "lsr x10, %[k], #2\n\t"                                                                        \
    "and x11, %[k], #3\n\t"                                                                        \
    "cbz x10, .Lluthier_" #name "_rem0_%=\n\t"                                                     \
    "ldp q0, q1, [%[a]]\n\t"                             /* group 0, and the low half of */        \
    "ldp q4, q5, [%[b]]\n\t"                             /* its third B vector */                  \
    "ldr d6, [%[b], #32]\n\t"                                                                      \
    "add %[a], %[a], #24\n\t"                            /* the high half of A vector 1 */         \
    "add %[b], %[b], #40\n\t"                            /* the high half of B vector 2 */         \
    "cbnz x11, .Lluthier_" #name "_k4_%=\n\t"            /* a remainder follows: every block */    \
    "subs x10, x10, #1\n\t"                              /* loads ahead */                         \
    "b.eq .Lluthier_" #name "_last_%=\n\t"                                                         \
    ".Lluthier_" #name "_k4_%=:\n\t"                                                               \
    "// LLVM-MCA-BEGIN\n\t"                                                                        \
    LUTHIER__QD_GROUPS012                                                                          \
    LUTHIER__QD_GROUP(2, 3, 5, 6, 7, 7, 4, 4, 5, 5, 6, 0, 1, "msub x10, %[one], %[one], x10\n\t",  \
                      "cbnz x10, .Lluthier_" #name "_k4_%=\n\t")                                   \
    "// LLVM-MCA-END\n\t"                                                                          \
    "cbz x11, .Lluthier_" #name "_last_%=\n\t"                                                     \
    "sub %[a], %[a], #24\n\t"                            /* back to the group the */               \
    "sub %[b], %[b], #40\n\t"                            /* remainder starts at */                 \
    "b .Lluthier_" #name "_rem_%=\n\t"                                                             \
    ".Lluthier_" #name "_last_%=:\n\t"                   /* k % 4 == 0: the last block */          \
    LUTHIER__QD_GROUPS012                                                                          \
    LUTHIER__QD_LAST3                                                                              \
    "b .Lluthier_" #name "_end_%=\n\t"                                                             \
    ".Lluthier_" #name "_rem0_%=:\n\t"                   /* fewer than 4 groups */                 \
    "cbz x11, .Lluthier_" #name "_end_%=\n\t"                                                      \
    ".Lluthier_" #name "_rem_%=:\n\t"                    /* one group at a, b */                   \
    "ldp q0, q1, [%[a]]\n\t"                                                                       \
    "ldp q4, q5, [%[b]]\n\t"                                                                       \
    "ldr q6, [%[b], #32]\n\t"                                                                      \
    LUTHIER__8x12L_LAST(LUTHIER__SDOTN, 0, 1, 4, 5, 6)                                             \
    "add %[a], %[a], #32\n\t"                                                                      \
    "add %[b], %[b], #48\n\t"                                                                      \
    "subs x11, x11, #1\n\t"                                                                        \
    "b.ne .Lluthier_" #name "_rem_%=\n\t"                                                          \
    ".Lluthier_" #name "_end_%=:\n\t"

LUTHIER__TARGET_QDOT LUTHIER_PRIVATE void luthier_qgemm_ukernel_8x12__neondot_a55(const luthier_qgemm_ukernel_args *p) {
    int32_t acc[8 * 12];
    const uint8_t *a = p->a;
    const int8_t *b = p->b;
    luthier__qneon_cols cols;
    size_t r;
    __asm__ __volatile__(
        LUTHIER__V8_31(LUTHIER__ZEROQ)
        LUTHIER__QD_KLOOP(q8x12a55)
        "mov x9, %[cp]\n\t"
        LUTHIER__8x12_ROWS(LUTHIER__8x12_STC)
        : [a] "+r"(a), [b] "+r"(b)
        : [cp] "r"(acc), [ld] "r"((size_t)(12 * sizeof(int32_t))), [k] "r"((p->k + 3) / 4),
          [o8] "r"((size_t)8), [s16] "r"((size_t)16), [one] "r"((size_t)1)
        : "x9", "x10", "x11", LUTHIER__CLOB_V0_7, LUTHIER__CLOB_V8_31, "cc", "memory");
    luthier__qneon_cols_init(p, &cols);
    for (r = 0; r < p->m; r++) {
        const int32x4_t row[3] = {vld1q_s32(acc + 12 * r), vld1q_s32(acc + 12 * r + 4), vld1q_s32(acc + 12 * r + 8)};
        luthier__qneon_store_row(p, &cols, r, row, 3);
    }
}

#define LUTHIER__QUKERNELS_NEONDOT(X)                                                              \
    X(8x12__neondot, "neon_dot", 8, 12, 4, LUTHIER_KERNEL_INTERLEAVED, 1,                          \
      LUTHIER_CPU_NEON | LUTHIER_CPU_DOTPROD)                                                      \
    X(4x16__neondot_hybrid, "neon_dot", 4, 16, 4, LUTHIER_KERNEL_HYBRID, 1,                        \
      LUTHIER_CPU_NEON | LUTHIER_CPU_DOTPROD)                                                      \
    X(8x12__neondot_a55, "neon_dot", 8, 12, 4, LUTHIER_KERNEL_INTERLEAVED, 1,                      \
      LUTHIER_CPU_NEON | LUTHIER_CPU_DOTPROD)
#else
#define LUTHIER__QUKERNELS_NEONDOT(X)
#endif /* LUTHIER__HAVE_QNEON_DOT */

/* >>qukernel-neoni8mm ============================================================================
   USMMLA kernel (Armv8.6 int8 matrix multiply, optional from Armv8.2: Neoverse N2/V1/V2,
   Cortex-A510/A710/X2 and later), built with a per-function target attribute as the SDOT
   kernels are, and called only when the CPU reports LUTHIER_CPU_I8MM (HWCAP2_I8MM).
   usmmla acc.4s, a.16b, b.16b multiplies a 2 x 8 uint8 block of A (two rows, 8 steps of k) by
   an 8 x 2 int8 block of B (two columns) into the 2 x 2 int32 block acc = {r0c0, r0c1, r1c0,
   r1c1}: 32 multiply-adds per instruction, twice SDOT's. A is unsigned, so it enters as it is
   (A encoding 0, no ^ 0x80) and the packed B's compensation is -za * S[j].
   The K group of 8 is all the packing needs: with KG = 8 the packed B panel holds, per group,
   each column's 8 steps contiguous, so the 16 bytes of columns 2q, 2q + 1 are one B operand,
   and the packed A panel holds each row's 8 steps contiguous, so rows 2p, 2p + 1 are one A
   operand (>>qcontract layouts, the generic packers).
   8x12 (interleaved): per group, 4 A registers (row pairs) and 6 B registers (column pairs);
   24 accumulators c<p><q> (2 x 2 blocks); the stores turn each row pair's blocks back into rows
   (zip of the 64-bit halves). */
#if defined(__ARM_FEATURE_MATMUL_INT8)
#define LUTHIER__TARGET_QI8MM
#define LUTHIER__HAVE_QNEON_I8MM 1
#elif defined(__GNUC__) && !defined(__clang__)
#define LUTHIER__TARGET_QI8MM __attribute__((target("arch=armv8.2-a+i8mm")))
#define LUTHIER__HAVE_QNEON_I8MM 1
#endif

#ifdef LUTHIER__HAVE_QNEON_I8MM
/* Column pair q of one group: one B register against the 4 row pairs. */
#define LUTHIER__QMM4(q)                                                                           \
    {                                                                                              \
        const int8x16_t bq = vld1q_s8(b + 16 * (q));                                               \
        c0##q = vusmmlaq_s32(c0##q, a0, bq);                                                       \
        c1##q = vusmmlaq_s32(c1##q, a1, bq);                                                       \
        c2##q = vusmmlaq_s32(c2##q, a2, bq);                                                       \
        c3##q = vusmmlaq_s32(c3##q, a3, bq);                                                       \
    }
#define LUTHIER__QMMZERO(p) int32x4_t c##p##0 = vdupq_n_s32(0), c##p##1 = c##p##0, c##p##2 = c##p##0, \
                            c##p##3 = c##p##0, c##p##4 = c##p##0, c##p##5 = c##p##0;
/* Rows 2p (zip1) and 2p + 1 (zip2) of row pair p: 12 columns in 3 vectors each. */
#define LUTHIER__QMMZIP(z, x, y) vreinterpretq_s32_s64(z(vreinterpretq_s64_s32(x), vreinterpretq_s64_s32(y)))
#define LUTHIER__QMMROWS(p)                                                                        \
    {LUTHIER__QMMZIP(vzip1q_s64, c##p##0, c##p##1), LUTHIER__QMMZIP(vzip1q_s64, c##p##2, c##p##3),  \
     LUTHIER__QMMZIP(vzip1q_s64, c##p##4, c##p##5)},                                               \
    {LUTHIER__QMMZIP(vzip2q_s64, c##p##0, c##p##1), LUTHIER__QMMZIP(vzip2q_s64, c##p##2, c##p##3),  \
     LUTHIER__QMMZIP(vzip2q_s64, c##p##4, c##p##5)},

LUTHIER__TARGET_QI8MM LUTHIER_PRIVATE void luthier_qgemm_ukernel_8x12__neoni8mm(const luthier_qgemm_ukernel_args *p) {
    const uint8_t *a = p->a;
    const int8_t *b = p->b;
    luthier__qneon_cols cols;
    size_t g, r;
    LUTHIER__QMMZERO(0) LUTHIER__QMMZERO(1) LUTHIER__QMMZERO(2) LUTHIER__QMMZERO(3)
    for (g = (p->k + 7) / 8; g; g--) {
        LUTHIER__QMCA_BEGIN();
        {
            const uint8x16_t a0 = vld1q_u8(a), a1 = vld1q_u8(a + 16), a2 = vld1q_u8(a + 32), a3 = vld1q_u8(a + 48);
            LUTHIER__QMM4(0) LUTHIER__QMM4(1) LUTHIER__QBARRIER();
            LUTHIER__QMM4(2) LUTHIER__QMM4(3) LUTHIER__QBARRIER();
            LUTHIER__QMM4(4) LUTHIER__QMM4(5)
        }
        a += 64;
        b += 96;
        LUTHIER__QMCA_END();
    }
    luthier__qneon_cols_init(p, &cols);
    {
        const int32x4_t acc[8][3] = {LUTHIER__QMMROWS(0) LUTHIER__QMMROWS(1) LUTHIER__QMMROWS(2) LUTHIER__QMMROWS(3)};
        for (r = 0; r < p->m; r++) luthier__qneon_store_row(p, &cols, r, acc[r], 3);
    }
}

#define LUTHIER__QUKERNELS_NEONI8MM(X)                                                             \
    X(8x12__neoni8mm, "neon_i8mm", 8, 12, 8, LUTHIER_KERNEL_INTERLEAVED, 0,                        \
      LUTHIER_CPU_NEON | LUTHIER_CPU_I8MM)
#else
#define LUTHIER__QUKERNELS_NEONI8MM(X)
#endif /* LUTHIER__HAVE_QNEON_I8MM */

/* >>qukernel-neon: Armv8.0 fallback (Cortex-A53/A72): K group 1, A read in place as uint8 and
   widened to int16 (exact: 0..255 x -128..127), B widened to int16, smlal/smlal2 by lane:
   8 rows x 8 columns in 16 accumulators, 8 steps of k per iteration. */
#define LUTHIER__QMLAL(r, l)                                                                       \
    c##r##0 = vmlal_laneq_s16(c##r##0, vget_low_s16(bw), A##r, l);                                 \
    c##r##1 = vmlal_high_laneq_s16(c##r##1, bw, A##r, l);
#define LUTHIER__QSTEP8(l)                                                                         \
    {                                                                                              \
        const int16x8_t bw = vmovl_s8(vld1_s8(b));                                                 \
        b += 8;                                                                                    \
        LUTHIER__QMLAL(0, l) LUTHIER__QMLAL(1, l) LUTHIER__QMLAL(2, l) LUTHIER__QMLAL(3, l)        \
        LUTHIER__QMLAL(4, l) LUTHIER__QMLAL(5, l) LUTHIER__QMLAL(6, l) LUTHIER__QMLAL(7, l)        \
        LUTHIER__QBARRIER();                                                                       \
    }
#define LUTHIER__QZERO2(r) int32x4_t c##r##0 = vdupq_n_s32(0), c##r##1 = c##r##0;
#define LUTHIER__QROWPTR(r) const uint8_t *a##r##r = p->a_rows[m > r ? r : m - 1];
#define LUTHIER__QLOADROW(r) const int16x8_t A##r = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(a##r##r + kk)));
#define LUTHIER__QTAIL(r)                                                                          \
    c##r##0 = vmlal_n_s16(c##r##0, vget_low_s16(bw), (int16_t)a##r##r[kk]);                        \
    c##r##1 = vmlal_high_n_s16(c##r##1, bw, (int16_t)a##r##r[kk]);

LUTHIER_PRIVATE void luthier_qgemm_ukernel_8x8__neon_hybrid(const luthier_qgemm_ukernel_args *p) {
    const size_t m = p->m, k = p->k;
    const int8_t *b = p->b;
    luthier__qneon_cols cols;
    size_t kk, r;
    LUTHIER__QROWS8(LUTHIER__QROWPTR)
    LUTHIER__QROWS8(LUTHIER__QZERO2)
    for (kk = 0; kk + 8 <= k; kk += 8) {
        LUTHIER__QMCA_BEGIN();
        {
        LUTHIER__QROWS8(LUTHIER__QLOADROW)
        LUTHIER__QSTEP8(0) LUTHIER__QSTEP8(1) LUTHIER__QSTEP8(2) LUTHIER__QSTEP8(3)
        LUTHIER__QSTEP8(4) LUTHIER__QSTEP8(5) LUTHIER__QSTEP8(6) LUTHIER__QSTEP8(7)
        }
        LUTHIER__QMCA_END();
    }
    for (; kk < k; kk++) {
        const int16x8_t bw = vmovl_s8(vld1_s8(b));
        b += 8;
        LUTHIER__QROWS8(LUTHIER__QTAIL)
    }
    luthier__qneon_cols_init(p, &cols);
    {
        const int32x4_t acc[8][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                                     {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
        for (r = 0; r < m; r++) luthier__qneon_store_row(p, &cols, r, acc[r], 2);
    }
}

#define LUTHIER__QUKERNELS_NEON(X)                                                                 \
    LUTHIER__QUKERNELS_NEONI8MM(X)                                                                 \
    LUTHIER__QUKERNELS_NEONDOT(X)                                                                  \
    X(8x8__neon_hybrid, "neon", 8, 8, 1, LUTHIER_KERNEL_HYBRID, 0, LUTHIER_CPU_NEON)

#endif /* LUTHIER__SIMD_NEON */
#ifndef LUTHIER__QUKERNELS_NEON
#define LUTHIER__QUKERNELS_NEON(X)
#endif

/* >>qregistry ====================================================================================
   One X-macro row per kernel: X(short name, isa, MR, NR, K group, kind, A encoding, required
   features); the function is luthier_qgemm_ukernel_<short name>. Order = preference: the first
   row this CPU (context) runs is the default. AVX-512 VNNI tiles by measurement (docs/DESIGN.md,
   int8 GEMM): 6x64, 12x32 and 14x32 are within noise of each other on the DNN shapes with
   M > 1; 6x64 leads on K = 147 and M = 1 and is the default, 12x32 serves N <= 48 (less
   padding); 8x48 was 10 % slower and is not built. */
#define LUTHIER__QUKERNELS(X) LUTHIER__QUKERNELS_X86(X) LUTHIER__QUKERNELS_NEON(X) LUTHIER__QUKERNELS_SCALAR(X)

#define LUTHIER__QROW(sname, isa, mr, nr, kg, kind, as8, feat) \
    {"luthier_qgemm_ukernel_" #sname, isa, mr, nr, kg, kind, LUTHIER_KERNELS_INT8, 1, 1, as8, feat, NULL, luthier_qgemm_ukernel_##sname},
static const luthier__kernel_entry luthier__qkernels[] = {LUTHIER__QUKERNELS(LUTHIER__QROW)};
#define LUTHIER__NUM_QKERNELS ((int)(sizeof luthier__qkernels / sizeof luthier__qkernels[0]))

LUTHIER_PRIVATE luthier_status luthier__qresolve(luthier_context *ctx, const char *name, int *index) {
    const luthier__kernel_entry *e;
    luthier_status s = luthier__resolve(ctx, 1u << LUTHIER_KERNELS_INT8, name, &e);
    if (s == LUTHIER_STATUS_OK) *index = (int)(e - luthier__qkernels);
    return s;
}

/* The kernel of a call that names none: the first row the context runs, unless more than a
   quarter of its NR lanes would be padding for n columns; then the kernel of the same ISA that
   wastes the least (as luthier__kernel_for_n does for fp32). */
LUTHIER_PRIVATE int luthier__qkernel_default(const luthier_context *ctx, size_t n) {
    int i, best = -1;
    for (i = 0; i < LUTHIER__NUM_QKERNELS && best < 0; i++)
        if (luthier__kernel_runs(&luthier__qkernels[i], ctx->cpu_features)) best = i;
    if (best < 0) return LUTHIER__NUM_QKERNELS - 1;
    return (int)(luthier__least_padding(luthier__qkernels, LUTHIER__NUM_QKERNELS, &luthier__qkernels[best], ctx->cpu_features, n,
                                        LUTHIER__SAME_ISA) - luthier__qkernels);
}

/* >>qpack ======================================================================================== */

struct luthier_qpacked_b {
    luthier__packed_b_layout layout; /* elem 1, kg = the kernel's K group */
    int kernel;           /* registry index packed for */
    int32_t a_zero_point; /* folded into comp */
    int8_t *data;         /* luthier__qdata_bytes of panels, then comp */
    int32_t *comp;        /* panels * nr: -za' * S[j], 0 past n */
};

/* The panels' bytes rounded up to 64: where the compensation after them starts. */
LUTHIER__INLINE size_t luthier__qdata_bytes(const luthier__packed_b_layout *l) { return luthier__div_up(l->bytes, 64) * 64; }

/* The int8 layout (>>pack in luthier_gemm.h, one byte per element) with room for the
   compensation; 0 when the sizes overflow size_t. */
LUTHIER_PRIVATE int luthier__qpack_layout_init(luthier__packed_b_layout *l, size_t nr, size_t kg, size_t k, size_t n) {
    if (!luthier__pack_layout_init(l, nr, kg, k, n, 1) || l->bytes > SIZE_MAX - 64) return 0;
    return l->panels <= (SIZE_MAX - luthier__qdata_bytes(l) - 64) / (nr * sizeof(int32_t));
}

/* The compensation -za' * S[j] (mod 2^32) of packed B dst, panels * nr values (0 past n). */
LUTHIER_PRIVATE void luthier__qpack_comp(const luthier__packed_b_layout *l, const int8_t *dst, int32_t za_eff, int32_t *comp) {
    const size_t nr = l->nr, kg = l->kg;
    size_t p, j, i;
    for (p = 0; p < l->panels; p++) {
        const int8_t *d = dst + p * l->panel_stride;
        for (j = 0; j < nr; j++) {
            uint32_t sum = 0;
            for (i = 0; i < l->groups * kg; i++) sum += (uint32_t)(int32_t)d[(i / kg * nr + j) * kg + i % kg];
            comp[p * nr + j] = (int32_t)(0u - (uint32_t)za_eff * sum);
        }
    }
}

/* Packs B (k x n, stride ldb; n x k when trans) and its compensation (luthier__qpack_comp). */
LUTHIER_PRIVATE void luthier__qpack_b(const luthier__packed_b_layout *l, const int8_t *b, size_t ldb,
                                      int trans, int32_t za_eff, int8_t *dst, int32_t *comp) {
    luthier__pack_b(l, b, ldb, trans, dst, 0, l->panels);
    luthier__qpack_comp(l, dst, za_eff, comp);
}

/* Packs rows [0, mb) of A (all k steps) for an interleaved kernel: MR-row panels of groups of
   kg steps, encoded, zero-padded; panel q at dst + q * MR * groups * kg. */
LUTHIER_PRIVATE void luthier__qpack_a(const uint8_t *a, size_t lda, size_t mb, size_t k, size_t mr,
                                      size_t kg, int a_s8, uint8_t *dst) {
    const size_t groups = luthier__div_up(k, kg);
    const uint8_t x = a_s8 ? 0x80 : 0;
    size_t i0, i, g, t;
    for (i0 = 0; i0 < mb; i0 += mr, dst += mr * groups * kg) {
        const size_t mv = luthier__min_sz(mr, mb - i0);
        for (i = 0; i < mr; i++) {
            const uint8_t *src = a + (i0 + (i < mv ? i : 0)) * lda; /* rows >= mv: zeros */
            uint8_t *d = dst + i * kg;
            for (g = 0; g < groups; g++, d += mr * kg, src += kg)
                for (t = 0; t < kg; t++) d[t] = i < mv && g * kg + t < k ? (uint8_t)(src[t] ^ x) : 0;
        }
    }
}

/* >>qdriver ======================================================================================
   The int8 datatype of the GEMM driver (>>dtype in luthier_gemm.h): one call covers all of k
   (the int32 sums never leave the kernel: the output stage needs the whole sum), so the
   blocking takes one K block, in the panels-outer order. Here are its A packer, its kernel call
   with the output stage's arguments, and the runs of luthier_qgemm. */

/* The output stage of an int8 GEMM (luthier__gemm_args.q). */
typedef struct luthier__qepilogue {
    luthier_qgemm_ukernel_args base;  /* the output kind and the parameters shared by every tile */
    size_t elem;                      /* bytes per element of C */
    const int32_t *offset;            /* panels * NR: -za' * S[j] + bias[j], 0 past n */
    const int32_t *mults, *shifts;    /* per column, or NULL: the shared mult, shift */
    const float *bscales, *fbias;     /* per column, or NULL: the shared bscale; no float bias */
    int32_t mult[LUTHIER__QMAX_NR], shift[LUTHIER__QMAX_NR]; /* shared values, per lane */
    float bscale[LUTHIER__QMAX_NR];
} luthier__qepilogue;

/* The output stage of d (validated); offset is the caller's. */
LUTHIER_PRIVATE void luthier__qepilogue_init(luthier__qepilogue *e, const luthier_qgemm_desc *d) {
    size_t t;
    memset(e, 0, sizeof *e);
    e->elem = d->output == LUTHIER_QOUTPUT_UINT8 ? 1 : 4;
    e->base.output = d->output;
    e->base.zero_point = d->output_zero_point;
    e->base.qmin = d->output_min || d->output_max ? d->output_min : 0;
    e->base.qmax = d->output_min || d->output_max ? d->output_max : 255;
    e->base.a_scale = d->a_scale;
    e->base.clamp = d->output == LUTHIER_QOUTPUT_FLOAT &&
                    luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &e->base.min, &e->base.max);
    e->mults = d->multipliers, e->shifts = d->shifts, e->bscales = d->b_scales, e->fbias = d->float_bias;
    for (t = 0; t < LUTHIER__QMAX_NR; t++) e->mult[t] = d->multiplier, e->shift[t] = d->shift, e->bscale[t] = d->b_scale;
}

LUTHIER_PRIVATE void luthier__qpack_a_block(const luthier__kernel_entry *uk, const void *a, size_t lda, size_t mb,
                                            size_t kb, void *dst) {
    luthier__qpack_a((const uint8_t *)a, lda, mb, kb, (size_t)uk->mr, (size_t)uk->k_unroll, uk->a_s8, (uint8_t *)dst);
}

/* One int8 kernel call; with k == 0 the reference kernel gives the output of acc = offset. */
LUTHIER_PRIVATE void luthier__qcall(const luthier__kernel_entry *uk, const luthier__gemm_args *g, const luthier__tile *t) {
    const luthier__qepilogue *e = g->q;
    const uint8_t *rows[LUTHIER__QMAX_MR];
    luthier_qgemm_ukernel_args u = e->base;
    size_t r;
    for (r = 0; t->kb && uk->kind == LUTHIER_KERNEL_HYBRID && r < t->m; r++)
        rows[r] = (const uint8_t *)g->a + (t->i + r) * g->lda;
    u.m = t->m; u.n = t->n; u.k = t->kb;
    u.a_rows = rows; u.a = (const uint8_t *)t->a; u.b = (const int8_t *)t->b;
    u.offset = e->offset + g->q_col + t->j;
    u.c = (unsigned char *)g->c + (t->i * g->ldc + t->j) * e->elem; u.ldc = g->ldc;
    u.multiplier = e->mults ? e->mults + g->q_col + t->j : e->mult;
    u.shift = e->shifts ? e->shifts + g->q_col + t->j : e->shift;
    u.b_scale = e->bscales ? e->bscales + g->q_col + t->j : e->bscale;
    u.bias = e->fbias ? e->fbias + g->q_col + t->j : NULL;
    if (t->kb) uk->qfn(&u);
    else luthier__qukernel_ref(&u, (size_t)uk->mr, (size_t)uk->nr, (size_t)uk->k_unroll,
                               uk->kind == LUTHIER_KERNEL_INTERLEAVED, uk->a_s8);
}

/* d is validated and normalized (leading dimensions filled in). With a bias, the offsets
   comp + bias are formed once, in front of the job's workspace. */
LUTHIER_PRIVATE luthier_status luthier__qrun(luthier_context *ctx, const luthier_qgemm_desc *d, int kernel,
                                             const uint8_t *a, const luthier__packed_b_layout *bl,
                                             const int8_t *bdata, const int32_t *comp, void *c) {
    const size_t pn = bl->panels * bl->nr;
    luthier__qepilogue e;
    luthier__gemm_args g;
    luthier__gemm_job job;
    luthier_status s;
    void *front;
    size_t j;
    luthier__qepilogue_init(&e, d);
    e.offset = comp;
    memset(&g, 0, sizeof g);
    g.m = (size_t)d->m; g.n = (size_t)d->n; g.k = (size_t)d->k;
    g.a = a; g.lda = (size_t)d->lda;
    g.b = bdata; g.b_layout = bl;
    g.c = c; g.ldc = (size_t)d->ldc; g.q = &e;
    if ((s = luthier__gemm_setup(ctx, &job, &g, 1u << LUTHIER_KERNELS_INT8, &luthier__qkernels[kernel], d->cluster_kernels,
                                 0, d->bias ? pn * sizeof(int32_t) : 0, &front)) != LUTHIER_STATUS_OK)
        return s;
    if (d->bias) {
        int32_t *off = (int32_t *)front;
        for (j = 0; j < pn; j++) off[j] = j < g.n ? (int32_t)((uint32_t)comp[j] + (uint32_t)d->bias[j]) : 0;
        e.offset = off;
    }
    return luthier__gemm_go(ctx, &job, 0, d->schedule, d->ratios, d->num_ratios);
}

/* >>impl-qgemm-api =============================================================================== */

LUTHIER_PRIVATE int luthier__qscale_ok(float s) { return s > 0.0f && s <= FLT_MAX; }

/* The output parameters of a run. */
LUTHIER_PRIVATE luthier_status luthier__qcheck_output(luthier_context *ctx, const luthier_qgemm_desc *d) {
    int64_t j;
    if ((unsigned)d->output >= (unsigned)LUTHIER_QOUTPUT_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unknown output kind %d", (int)d->output);
    if (d->output != LUTHIER_QOUTPUT_FLOAT && d->activation != LUTHIER_ACTIVATION_NONE)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "activation %d needs the FLOAT output; a UINT8 output clamps with output_min/"
                             "output_max (luthier_quantize_activation computes them)", (int)d->activation);
    if (d->output == LUTHIER_QOUTPUT_FLOAT) {
        if (!luthier__qscale_ok(d->a_scale))
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "a_scale is %g: it must be finite and > 0",
                                 (double)d->a_scale);
        if (!d->b_scales && !luthier__qscale_ok(d->b_scale))
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "b_scale is %g: it must be finite and > 0 (or set b_scales)", (double)d->b_scale);
        for (j = 0; d->b_scales && j < d->n; j++)
            if (!luthier__qscale_ok(d->b_scales[j]))
                return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                     "b_scales[%lld] is %g: scales must be finite and > 0", (long long)j,
                                     (double)d->b_scales[j]);
        if (luthier__act_is_post(d->activation))
            return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "activation %d: int8 layers fuse the clamps only",
                                 (int)d->activation);
        return luthier__check_activation(ctx, "", d->activation, d->clamp_min, d->clamp_max);
    }
    if (d->output != LUTHIER_QOUTPUT_UINT8) return LUTHIER_STATUS_OK;
    if (d->output_zero_point < 0 || d->output_zero_point > 255)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "output_zero_point %d is outside 0..255",
                             (int)d->output_zero_point);
    if ((d->output_min || d->output_max) &&
        !(d->output_min >= 0 && d->output_min <= d->output_max && d->output_max <= 255))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "output_min %d and output_max %d: want 0 <= min <= max <= 255 (both 0 = no clamp)",
                             (int)d->output_min, (int)d->output_max);
    if (!d->multipliers != !d->shifts)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "multipliers and shifts go together: set both (per column) or neither (shared)");
    if (!d->multipliers) {
        if (d->multiplier < 0 || d->shift < 0 || d->shift > 31)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "multiplier %d / shift %d: want multiplier >= 0 and shift in 0..31 "
                                 "(luthier_quantize_multiplier computes them)", (int)d->multiplier, (int)d->shift);
        return LUTHIER_STATUS_OK;
    }
    for (j = 0; j < d->n; j++)
        if (d->multipliers[j] < 0 || d->shifts[j] < 0 || d->shifts[j] > 31)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "column %lld: multiplier %d / shift %d: want multiplier >= 0 and shift in 0..31",
                                 (long long)j, (int)d->multipliers[j], (int)d->shifts[j]);
    return LUTHIER_STATUS_OK;
}

/* Validates desc; fills the defaulted leading dimensions and the kernel index. need_m: a run
   (A, C and the output); need_b: B is given unpacked. */
LUTHIER_PRIVATE luthier_status luthier__qprepare(luthier_context *ctx, const luthier_qgemm_desc *in,
                                                 luthier_qgemm_desc *d, int *kernel, int need_m, int need_b) {
    luthier_status s;
    *d = *in;
    if ((s = luthier__check_dims(ctx, d->m, d->n, d->k, need_m)) != LUTHIER_STATUS_OK) return s;
    if (d->a_zero_point < 0 || d->a_zero_point > 255)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "a_zero_point %d is outside 0..255",
                             (int)d->a_zero_point);
    if ((s = luthier__check_operands(ctx, d->m, d->n, d->k, d->trans_b, &d->lda, &d->ldb, &d->ldc, need_m, need_b)) !=
            LUTHIER_STATUS_OK ||
        (need_m && (s = luthier__qcheck_output(ctx, d)) != LUTHIER_STATUS_OK))
        return s;
    if (d->kernel && *d->kernel) return luthier__qresolve(ctx, d->kernel, kernel);
    *kernel = luthier__qkernel_default(ctx, (size_t)d->n);
    return LUTHIER_STATUS_OK;
}

/* Lays out, allocates (one block: panels, then the compensation) and packs B for kernel. */
LUTHIER_PRIVATE luthier_status luthier__qpack_new(luthier_context *ctx, const luthier_qgemm_desc *d, int kernel,
                                                  const int8_t *b, luthier_qpacked_b *pb) {
    const luthier__kernel_entry *uk = &luthier__qkernels[kernel];
    size_t bytes;
    memset(pb, 0, sizeof *pb);
    pb->kernel = kernel;
    pb->a_zero_point = d->a_zero_point;
    if (!luthier__qpack_layout_init(&pb->layout, (size_t)uk->nr, (size_t)uk->k_unroll, (size_t)d->k, (size_t)d->n))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "packed B of %lld x %lld overflows", (long long)d->k,
                             (long long)d->n);
    bytes = luthier__qdata_bytes(&pb->layout) + pb->layout.panels * pb->layout.nr * sizeof(int32_t);
    if (!(pb->data = (int8_t *)luthier__alloc(bytes ? bytes : 1)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes for packed B", bytes);
    pb->comp = (int32_t *)(void *)(pb->data + luthier__qdata_bytes(&pb->layout));
    luthier__qpack_b(&pb->layout, b, (size_t)d->ldb, d->trans_b != 0,
                     d->a_zero_point - (uk->a_s8 ? 128 : 0), pb->data, pb->comp);
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_qgemm_pack_b(luthier_context *ctx, const luthier_qgemm_desc *desc,
                                                const int8_t *b, luthier_qpacked_b **out) {
    luthier_qgemm_desc d;
    luthier_qpacked_b *pb;
    luthier_status s;
    int kernel;
    if (out) *out = NULL;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and out must not be NULL");
    if ((s = luthier__qprepare(ctx, desc, &d, &kernel, 0, 1)) != LUTHIER_STATUS_OK) return s;
    if (!b && d.k > 0 && d.n > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    if (!(pb = (luthier_qpacked_b *)luthier__alloc(sizeof *pb)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate a packed B");
    if ((s = luthier__qpack_new(ctx, &d, kernel, b, pb)) != LUTHIER_STATUS_OK) {
        luthier__free(pb);
        return s;
    }
    *out = pb;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_qpacked_b_destroy(luthier_qpacked_b *b) {
    if (!b) return;
    luthier__free(b->data);
    luthier__free(b);
}

LUTHIER_API size_t luthier_qpacked_b_bytes(const luthier_qpacked_b *b) {
    return b ? sizeof *b + luthier__qdata_bytes(&b->layout) + b->layout.panels * b->layout.nr * sizeof(int32_t) : 0;
}

LUTHIER_API luthier_status luthier_qgemm_packed(luthier_context *ctx, const luthier_qgemm_desc *desc,
                                                const uint8_t *a, const luthier_qpacked_b *b, void *c) {
    const luthier__kernel_entry *pk, *uk;
    luthier_qgemm_desc d;
    luthier_status s;
    int kernel;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !b) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and packed B must not be NULL");
    if ((s = luthier__qprepare(ctx, desc, &d, &kernel, 1, 0)) != LUTHIER_STATUS_OK) return s;
    if ((size_t)d.n != b->layout.n || (size_t)d.k != b->layout.k)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE, "desc is k=%lld n=%lld but B was packed as k=%zu n=%zu",
                             (long long)d.k, (long long)d.n, b->layout.k, b->layout.n);
    if (d.a_zero_point != b->a_zero_point)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "desc has a_zero_point %d but B was packed for %d (its compensation is folded "
                             "in): pack again", (int)d.a_zero_point, (int)b->a_zero_point);
    pk = &luthier__qkernels[b->kernel];
    if (!(desc->kernel && *desc->kernel)) kernel = b->kernel;
    uk = &luthier__qkernels[kernel];
    if ((size_t)uk->nr != b->layout.nr || (size_t)uk->k_unroll != b->layout.kg || uk->a_s8 != pk->a_s8)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "kernel %s has NR=%d, K group %d, A encoding %d but B was packed for %s (NR=%d, "
                             "K group %d, A encoding %d)", uk->name, uk->nr, uk->k_unroll, uk->a_s8, pk->name, pk->nr,
                             pk->k_unroll, pk->a_s8);
    if (!luthier__kernel_runs(uk, ctx->cpu_features))
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "B was packed for %s, which this context cannot run",
                             uk->name);
    if ((s = luthier__check_run(ctx, d.m, d.n, d.k, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    return luthier__qrun(ctx, &d, kernel, a, &b->layout, b->data, b->comp, c);
}

LUTHIER_API luthier_status luthier_qgemm(luthier_context *ctx, const luthier_qgemm_desc *desc,
                                         const uint8_t *a, const int8_t *b, void *c) {
    luthier_qgemm_desc d;
    luthier_qpacked_b pb;
    luthier_status s;
    int kernel;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc is NULL");
    if ((s = luthier__qprepare(ctx, desc, &d, &kernel, 1, 1)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__check_run(ctx, d.m, d.n, d.k, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    if (!b && d.k > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    /* One-shot: pack the whole B into a temporary buffer, then run the pre-packed path. */
    if ((s = luthier__qpack_new(ctx, &d, kernel, b, &pb)) != LUTHIER_STATUS_OK) return s;
    s = luthier__qrun(ctx, &d, kernel, a, &pb.layout, pb.data, pb.comp, c);
    luthier__free(pb.data);
    return s;
}

/* >>impl-qconv-create ============================================================================ */

#define LUTHIER__QDW_CHUNK 8 /* depthwise: output pixels per call of the pixel routine */

struct luthier_qconv2d_layer {
    luthier_conv2d_layer cv;      /* first: the front end's layer (geometry, algorithm, kernels,
                                     packed weights, blocking, workspace; >>impl-conv-create) */
    luthier_qgemm_desc qd;        /* output parameters, per channel (the arrays below), n = Cout */
    int32_t *offset;              /* GEMM: Cout + NR: -za' * S[c] + bias[c] (mod 2^32), the kernels'
                                     offsets (the GEMM's q_col selects a group's) */
    int32_t *mult, *shift;        /* Cout (shared ones expanded) */
    float *wscale, *fbias;        /* Cout; fbias may be NULL */
    /* DEPTHWISE: taps in pairs (tap 2p, 2p + 1) of int16 per channel, as vpmaddwd / vld2 read
       them: w[(p * cp + c) * 2 + h]; 0 for the missing last tap of an odd count and past C. */
    size_t dw_cp, dw_pairs;       /* channels rounded up to 16; ceil(taps / 2) */
    int16_t *dw_w;
    int32_t *dw_off;              /* cp: bias[c] - za * sum_t w[t][c] (mod 2^32), 0 past C */
    uint8_t *zrow;                /* in_channels bytes of za: the padding pixel */
    /* DEPTHWISE with SDOT (>>impl-qconv-dw; dw_dot NULL: the creating context had no dotprod):
       per 16-channel block b, dw_dbytes = 64 (1 + dw_quads) bytes at dw_dot + b * dw_dbytes:
       int32 start[16] = 128 * sum_t w[t][c] (mod 2^32), then per quad q of taps (4q..4q + 3)
       int8 w[16][4]: byte 4i + j = w[4q + j][16b + i] (0 past the taps or C). */
    unsigned char *dw_dot;
    size_t dw_quads, dw_dbytes;   /* ceil(taps / 4); bytes per block */
    /* DEPTHWISE with AVX-512 VNNI (>>impl-qconv-dw, the row kernel; dw_tab NULL: not packed,
       kernel_h > 64). Channels in 16-channel lanes (q16 = ceil(C / 16)); a block of 4 lanes =
       64 outputs starts at a lane that is a multiple of eg (gcd(q16, 4) for flat rows, else 4),
       so there are ne = ceil(q16 / eg) distinct blocks of channels, each with its entry of
       dw_ebytes in dw_tab: the weights, the accumulator start and the output parameters of its
       64 channels, in the order the kernel reads them (see luthier__qconv_pack_dw512). */
    size_t dw_q16, dw_g, dw_eg, dw_ne, dw_ebytes; /* ..., ceil(kernel_h / 4) kernel-row groups */
    size_t dw_pk;                 /* bytes of output parameters per k in an entry */
    size_t dw_wsz;                /* bytes of weights per entry: one set, or two with row pairs */
    int dw_pair;                  /* stride_h 1, dilation_h 1, kernel_h <= 3: two output rows per unit */
    uint8_t *dw_zrow;             /* in_w * C + 64 bytes of za: the rows in the padding */
    int dw_fast;                  /* UINT8 with the 32-bit output stage (see the kernel) */
    int dw_nc;                    /* fast, qmin >= zo: no tie correction for negative acc */
    int dw_cn;                    /* UINT8: some shift is 0: the entries hold Z32 (fast) or C (not) */
    int dw_zf;                    /* UINT8: zo is folded into R */
    size_t dw_seg, dw_slice;      /* an output row in dw_seg pixel segments x dw_slice channel slices */
    int dw_flat;                  /* one slice and C % 16 == 0: a segment's outputs are one flat run */
    size_t dw_wl, dw_as;          /* interleaved rows: lanes per pixel, lanes per [g][phase][k] array */
    size_t dw_ibytes;             /* the per-thread interleaved input rows (bytes) */
    unsigned char *dw_tab;
    size_t *dw_tap;               /* per tap (g, kw): byte offset into the interleaved rows */
};

/* The int8 layer of a front-end layer (its first member). */
LUTHIER__INLINE const luthier_qconv2d_layer *luthier__qconv_of(const luthier_conv2d_layer *cv) {
    return (const luthier_qconv2d_layer *)(const void *)cv;
}

LUTHIER_API void luthier_qconv2d_destroy(luthier_qconv2d_layer *L) {
    if (!L) return;
    luthier__conv_free(&L->cv);
    luthier__free(L->offset);
    luthier__free(L->mult);
    luthier__free(L->shift);
    luthier__free(L->wscale);
    luthier__free(L->fbias);
    luthier__free(L->dw_w);
    luthier__free(L->dw_off);
    luthier__free(L->zrow);
    luthier__free(L->dw_dot);
    luthier__free(L->dw_tab);
    luthier__free(L->dw_zrow);
    luthier__free(L->dw_tap);
    luthier__free(L);
}

/* luthier_qconv2d_destroy of the int8 layer of front-end layer cv (its first member). */
LUTHIER_PRIVATE void luthier__qconv_destroy_cv(luthier_conv2d_layer *cv) {
    luthier_qconv2d_destroy((luthier_qconv2d_layer *)(void *)cv);
}

LUTHIER_PRIVATE size_t luthier__qconv_elem(luthier_qoutput o) { return o == LUTHIER_QOUTPUT_UINT8 ? 1 : 4; }

/* The shape of desc as an fp32 conv desc (for luthier__conv_normalize). */
LUTHIER_PRIVATE void luthier__qconv_shape(const luthier_qconv2d_desc *q, luthier_conv2d_desc *d) {
    memset(d, 0, sizeof *d);
    d->batch = q->batch; d->in_channels = q->in_channels; d->in_h = q->in_h; d->in_w = q->in_w;
    d->out_channels = q->out_channels; d->kernel_h = q->kernel_h; d->kernel_w = q->kernel_w;
    d->stride_h = q->stride_h; d->stride_w = q->stride_w;
    d->dilation_h = q->dilation_h; d->dilation_w = q->dilation_w;
    d->pad_top = q->pad_top; d->pad_left = q->pad_left; d->pad_bottom = q->pad_bottom; d->pad_right = q->pad_right;
    d->groups = q->groups;
    d->layout = q->layout;
    d->algorithm = q->algorithm;
    d->schedule = q->schedule;
    d->ratios = q->ratios;
    d->num_ratios = q->num_ratios;
}

/* The output parameters of desc as a qgemm desc of out_channels columns. */
LUTHIER_PRIVATE void luthier__qconv_output(const luthier_qconv2d_desc *q, luthier_qgemm_desc *g) {
    memset(g, 0, sizeof *g);
    g->n = q->out_channels;
    g->a_zero_point = q->input_zero_point;
    g->output = q->output;
    g->output_zero_point = q->output_zero_point;
    g->multiplier = q->multiplier;
    g->shift = q->shift;
    g->multipliers = q->multipliers;
    g->shifts = q->shifts;
    g->output_min = q->output_min;
    g->output_max = q->output_max;
    g->a_scale = q->input_scale;
    g->b_scale = q->weight_scale;
    g->b_scales = q->weight_scales;
    g->float_bias = q->float_bias;
    g->activation = q->activation;
    g->clamp_min = q->clamp_min;
    g->clamp_max = q->clamp_max;
}

/* Per-channel output parameters (shared values expanded). */
LUTHIER_PRIVATE int luthier__qconv_copy_params(luthier_qconv2d_layer *L, const luthier_qconv2d_desc *desc) {
    const size_t C = (size_t)L->cv.d.out_channels;
    size_t c;
    if (!(L->mult = (int32_t *)luthier__alloc(C * sizeof(int32_t))) ||
        !(L->shift = (int32_t *)luthier__alloc(C * sizeof(int32_t))) ||
        !(L->wscale = (float *)luthier__alloc(C * sizeof(float))))
        return 0;
    for (c = 0; c < C; c++) {
        L->mult[c] = desc->multipliers ? desc->multipliers[c] : desc->multiplier;
        L->shift[c] = desc->shifts ? desc->shifts[c] : desc->shift;
        L->wscale[c] = desc->weight_scales ? desc->weight_scales[c] : desc->weight_scale;
    }
    if (desc->float_bias) {
        if (!(L->fbias = (float *)luthier__alloc(C * sizeof(float)))) return 0;
        memcpy(L->fbias, desc->float_bias, C * sizeof(float));
    }
    L->qd.multipliers = L->mult;
    L->qd.shifts = L->shift;
    L->qd.b_scales = L->wscale;
    L->qd.float_bias = L->fbias;
    L->cv.weight_bytes += C * (3 + (desc->float_bias != NULL)) * 4;
    return 1;
}

#if LUTHIER__SIMD_X86
/* Lanes per array of interleaved rows ([g][phase][k]) for units of npx output pixels and wc
   channels: j = npx + (kernel_w - 1) * dilation_w / stride_w pixels of each column phase, wl
   lanes each, 4 lanes of slack (a last partial block reads them). */
LUTHIER_PRIVATE size_t luthier__qdw512_as(const luthier_qconv2d_layer *L, size_t npx, size_t wc) {
    const luthier_conv2d_desc *d = &L->cv.d;
    const size_t j = npx + (size_t)((d->kernel_w - 1) * d->dilation_w) / (size_t)d->stride_w;
    return luthier__div_up(j * luthier__div_up(wc, 16) + 4, 4) * 4;
}
#define LUTHIER__QDW512_IBYTES(L, as) ((L)->dw_g * (size_t)(L)->cv.d.stride_w * 4 * (as) * 16)
#define LUTHIER__QDW512_MAXG 16 /* kernel_h <= 64 */

/* The row kernel's table and the split of an output row into units: channel slices (whole
   64-channel chunks; not when C % 16 == 0 < C % 64, whose rows run flat) and pixel segments,
   until a unit's interleaved rows fit a quarter of L1 (measured: a half was slower, the
   input rows and the entries need the rest) and there are at least 8 units per thread.
   Entry e (lanes q = e * eg + l, l < 4, channel c = 16 (q % q16) + 4k + j, none past C when
   the rows are not flat):
     weights   [tap][k] 64 bytes: byte 16l + 4j + r = w[c][4g + r][kw] (0 past the kernel or C)
     start     [k] 64 bytes: int32 lane 4l + j = a = bias[c] - za * sum(w[c]), + 2^31 (fast)
     UINT8     [k] pk bytes, 64 per vector (int64 ones per 64-bit half, E: lanes 4l + 0, 2,
               O: lanes 4l + 1, 3, in the order vpmul(u)dq reads them). The fast output stage,
               when every channel's y = (2 acc M + R2) >> (32 + s) keeps its high half in int32
               (acc_u = acc + 2^31 >= 0, so acc_u * 2M < 2^64 is vpmuludq's):
                 M2V = 2M, M2O = the odd lanes' 2M in the even slots, R2E, R2O =
                 R2 = 2^31 + 2^(31+s) [s > 0] - 2^32 M [acc_u] + zo 2^(32+s) [zo folded]
                 - 2^32 [tie correction], S32 = s, Z32 = 2^31 [s == 0] (only with some s == 0)
               otherwise MV = M, MO, RE, RO = 2^30 + 2^(30+s) [s > 0] + zo 2^(31+s) [folded],
                 SE, SO = 31 + s, CE, CO = -2^31 [s > 0] (only with some s == 0)
     FLOAT     [k] 128 bytes: FS = input_scale * weight_scale[c] (the product the scalar path
               rounds), FB = float_bias[c] or 0. */
LUTHIER_PRIVATE int luthier__qconv_pack_dw512(const luthier_context *ctx, luthier_qconv2d_layer *L, const int8_t *w) {
    const luthier_conv2d_desc *d = &L->cv.d;
    const size_t C = (size_t)d->in_channels, KH = (size_t)d->kernel_h, KW = (size_t)d->kernel_w;
    const size_t q16 = luthier__div_up(C, 16), G = luthier__div_up(KH, 4), nch = luthier__div_up(C, 64);
    const size_t ow = (size_t)L->cv.ow, taps = G * KW;
    const size_t l1 = ctx->caches.l1d ? ctx->caches.l1d : (size_t)32 << 10;
    const size_t budget = luthier__min_sz(luthier__max_sz(l1 / 4, (size_t)8 << 10), (size_t)24 << 10);
    const size_t want = 8 * (size_t)luthier__max_sz(1, (size_t)ctx->pool->num_threads);
    const int slices_ok = C % 64 == 0 || C % 16 != 0, u8 = L->qd.output == LUTHIER_QOUTPUT_UINT8;
    const int pair = d->stride_h == 1 && d->dilation_h == 1 && KH <= 3;
    const size_t rows = (size_t)d->batch * (pair ? luthier__div_up((size_t)L->cv.oh, 2) : (size_t)L->cv.oh);
    /* flat rows (C % 16 == 0) start blocks at every multiple of gcd(q16, 4) lanes; slices at 64 channels */
    const size_t eg = C % 16 || q16 % 4 == 0 ? 4 : q16 % 2 == 0 ? 2 : 1, ne = luthier__div_up(q16, eg);
    const size_t wsz = taps * 256 * (pair ? 2 : 1);
    const int32_t zo = L->qd.output_zero_point;
    const int nc = u8 && L->qd.output_min >= zo && (L->qd.output_min || L->qd.output_max);
    size_t e, l, k, j, g, kw, r, wc, c, eb, pk, seg = 1, slice = 1;
    int cn = 0, zf = u8, fast = u8, sh;
    for (c = 0; c < C; c++) cn |= u8 && (L->shift[c] & 31) == 0;
    for (; fast; zf = 0) { /* the fast stage with zo folded, without, or not at all */
        for (c = 0; c < C && fast; c++) { /* |2 acc M + R2| < 2^62: the high half and +1 fit int32 */
            double lo = (double)L->dw_off[c], hi = lo, n;
            for (g = 0; g < KH * KW; g++) {
                const double t = 255.0 * (double)w[c * KH * KW + g];
                if (t < 0) lo += t; else hi += t;
            }
            if (lo < -2147483648.0 || hi > 2147483647.0) lo = -2147483648.0, hi = 2147483648.0; /* wraps */
            sh = (int)(L->shift[c] & 31);
            n = 2.0 * (-lo > hi ? -lo : hi) * (double)L->mult[c] + ldexp(1.0, 31) + ldexp(1.0, 31 + sh) +
                ldexp(1.0, 32) + (zf ? (double)zo * ldexp(1.0, 32 + sh) : 0.0);
            fast = n < ldexp(1.0, 62);
        }
        if (fast || !zf) break;
        fast = 1;
    }
    if (!fast) { /* the 64-bit stage: |y| <= 2^30 + 1 and zo 2^(31+s) < 2^62 with s in 1..23 */
        zf = u8;
        for (c = 0; c < C; c++) zf &= (L->shift[c] & 31) != 0 && (L->shift[c] & 31) <= 23;
    }
    if (fast && nc) cn = 0;
    pk = !u8 ? (L->qd.output == LUTHIER_QOUTPUT_FLOAT ? 128 : 0) : fast ? (cn ? 384 : 320) : (cn ? 512 : 384);
    eb = wsz + 256 + 4 * pk;
    if (G > LUTHIER__QDW512_MAXG) return 1; /* the pixel routines run it */
    L->dw_q16 = q16;
    L->dw_g = G;
    L->dw_eg = eg;
    L->dw_ne = ne;
    L->dw_ebytes = eb;
    L->dw_pk = pk;
    L->dw_wsz = wsz;
    L->dw_pair = pair;
    L->dw_fast = fast;
    L->dw_nc = fast && nc;
    L->dw_cn = cn;
    L->dw_zf = zf;
    if (eb > SIZE_MAX / ne || !(L->dw_tab = (unsigned char *)luthier__alloc(ne * eb))) return 0;
    memset(L->dw_tab, 0, ne * eb);
    for (e = 0; e < ne; e++)
        for (l = 0; l < 4; l++)
            for (k = 0; k < 4; k++)
                for (j = 0; j < 4; j++) {
                    const size_t h = 8 * (j >> 1) + 16 * l, o4 = 16 * l + 4 * j;
                    unsigned char *u = L->dw_tab + e * eb, *pu = u + wsz + 256 + k * pk;
                    uint32_t a0;
                    c = C % 16 ? 16 * (e * eg + l) + 4 * k + j : 16 * ((e * eg + l) % q16) + 4 * k + j;
                    if (c >= C) {
                        const int64_t s64 = 31;
                        if (u8 && !fast) memcpy(pu + (j & 1 ? 320 : 256) + h, &s64, 8);
                        continue;
                    }
                    for (g = 0; g < G; g++)
                        for (kw = 0; kw < KW; kw++)
                            for (r = 0; r < 4 && 4 * g + r < KH; r++) {
                                u[((g * KW + kw) * 4 + k) * 64 + o4 + r] = (unsigned char)w[(c * KH + 4 * g + r) * KW + kw];
                                if (pair) /* the second row of a pair: the kernel one input row down */
                                    u[taps * 256 + (kw * 4 + k) * 64 + o4 + r + 1] = (unsigned char)w[(c * KH + r) * KW + kw];
                            }
                    a0 = (uint32_t)L->dw_off[c] + (fast ? 0x80000000u : 0u);
                    memcpy(u + wsz + 64 * k + o4, &a0, 4);
                    sh = (int)(L->shift[c] & 31);
                    if (u8 && fast) {
                        const uint32_t m2 = 2u * (uint32_t)L->mult[c], s32 = (uint32_t)sh, z32 = sh ? 0u : 0x80000000u;
                        const int64_t r2 = ((int64_t)1 << 31) + (sh ? (int64_t)1 << (31 + sh) : 0) -
                                           (int64_t)L->mult[c] * ((int64_t)1 << 32) +
                                           (zf ? (int64_t)zo * ((int64_t)1 << (32 + sh)) : 0) - (nc ? 0 : (int64_t)1 << 32);
                        memcpy(pu + o4, &m2, 4);
                        if (j & 1) memcpy(pu + 64 + h, &m2, 4);
                        memcpy(pu + (j & 1 ? 192 : 128) + h, &r2, 8);
                        memcpy(pu + 256 + o4, &s32, 4);
                        if (cn) memcpy(pu + 320 + o4, &z32, 4);
                    } else if (u8) {
                        const int64_t rr = ((int64_t)1 << 30) + (sh ? (int64_t)1 << (30 + sh) : 0) +
                                           (zf ? (int64_t)zo << (31 + sh) : 0);
                        const int64_t cc = sh ? -((int64_t)1 << 31) : 0, s64 = 31 + sh;
                        memcpy(pu + o4, &L->mult[c], 4);
                        if (j & 1) memcpy(pu + 64 + h, &L->mult[c], 4);
                        memcpy(pu + (j & 1 ? 192 : 128) + h, &rr, 8);
                        memcpy(pu + (j & 1 ? 320 : 256) + h, &s64, 8);
                        if (cn) memcpy(pu + (j & 1 ? 448 : 384) + h, &cc, 8);
                    } else if (L->qd.output == LUTHIER_QOUTPUT_FLOAT) {
                        const float fs = L->qd.a_scale * L->wscale[c], fb = L->fbias ? L->fbias[c] : 0.0f;
                        memcpy(pu + o4, &fs, 4);
                        memcpy(pu + 64 + o4, &fb, 4);
                    }
                }
    /* the split: slices first (no overlap), then segments (each rebuilds kernel_w - 1 columns) */
    while (LUTHIER__QDW512_IBYTES(L, luthier__qdw512_as(L, luthier__div_up(ow, seg),
                                                          luthier__min_sz(C, 64 * luthier__div_up(nch, slice)))) > budget) {
        if (slices_ok && slice < nch) slice++;
        else if (seg < ow) seg++;
        else break;
    }
    while (rows * seg * slice < want) {
        if (slices_ok && slice < nch) slice++;
        else if (luthier__div_up(ow, seg + 1) >= 8) seg++;
        else break;
    }
    L->dw_seg = seg;
    L->dw_slice = slice;
    L->dw_flat = slice == 1 && C % 16 == 0;
    wc = luthier__min_sz(C, 64 * luthier__div_up(nch, slice));
    L->dw_wl = luthier__div_up(wc, 16);
    L->dw_as = luthier__qdw512_as(L, luthier__div_up(ow, seg), wc);
    L->dw_ibytes = luthier__align_up(LUTHIER__QDW512_IBYTES(L, L->dw_as));
    L->cv.thread_ws = luthier__max_sz(L->cv.thread_ws, L->dw_ibytes);
    if (!(L->dw_tap = (size_t *)luthier__alloc(taps * sizeof(size_t))) ||
        !(L->dw_zrow = (uint8_t *)luthier__alloc((size_t)d->in_w * C + 64)))
        return 0;
    memset(L->dw_zrow, L->qd.a_zero_point, (size_t)d->in_w * C + 64);
    for (g = 0; g < G; g++)
        for (kw = 0; kw < KW; kw++) { /* column ix' = s * ox + kw * dw: phase ix' % s, pixel ox + kw * dw / s */
            const size_t kd = kw * (size_t)d->dilation_w, st = (size_t)d->stride_w;
            L->dw_tap[g * KW + kw] = ((g * st + kd % st) * 4 * L->dw_as + kd / st * L->dw_wl) * 16;
        }
    L->cv.weight_bytes += ne * eb + taps * sizeof(size_t) + (size_t)d->in_w * C + 64;
    return 1;
}
#endif

#if LUTHIER__SIMD_NEON && defined(LUTHIER__HAVE_QNEON_DOT)
/* The SDOT blocks (see dw_dot): w (OIHW, C x taps) as int8 quads of taps, and the start
   128 * sum(w) that undoes x ^ 0x80 = x - 128 on the input. */
LUTHIER_PRIVATE int luthier__qconv_pack_dwdot(luthier_qconv2d_layer *L, const int8_t *w) {
    const size_t C = (size_t)L->cv.d.in_channels, taps = (size_t)(L->cv.d.kernel_h * L->cv.d.kernel_w);
    const size_t quads = luthier__div_up(taps, 4), db = 64 * (1 + quads), blocks = L->dw_cp / 16;
    size_t c, t;
    L->dw_quads = quads;
    L->dw_dbytes = db;
    if (!(L->dw_dot = (unsigned char *)luthier__alloc(blocks * db))) return 0;
    memset(L->dw_dot, 0, blocks * db);
    for (c = 0; c < C; c++) {
        unsigned char *blk = L->dw_dot + c / 16 * db;
        uint32_t sum = 0;
        for (t = 0; t < taps; t++) {
            blk[64 * (1 + t / 4) + 4 * (c % 16) + t % 4] = (unsigned char)w[c * taps + t];
            sum += (uint32_t)(int32_t)w[c * taps + t];
        }
        sum *= 128u;
        memcpy(blk + 4 * (c % 16), &sum, 4);
    }
    L->cv.weight_bytes += blocks * db;
    return 1;
}
#endif

/* DEPTHWISE weights: int16 tap pairs per channel and the offsets bias - za * sum(w). */
LUTHIER_PRIVATE int luthier__qconv_pack_dw(const luthier_context *ctx, luthier_qconv2d_layer *L, const int8_t *w,
                                           const int32_t *bias, int32_t za) {
    const size_t C = (size_t)L->cv.d.in_channels, taps = (size_t)(L->cv.d.kernel_h * L->cv.d.kernel_w);
    const size_t cp = luthier__div_up(C, 16) * 16, pairs = luthier__div_up(taps, 2);
    size_t c, t;
    L->dw_cp = cp;
    L->dw_pairs = pairs;
    if (!(L->dw_w = (int16_t *)luthier__alloc(pairs * cp * 2 * sizeof(int16_t))) ||
        !(L->dw_off = (int32_t *)luthier__alloc(cp * sizeof(int32_t))) || !(L->zrow = (uint8_t *)luthier__alloc(C)))
        return 0;
    memset(L->dw_w, 0, pairs * cp * 2 * sizeof(int16_t));
    memset(L->dw_off, 0, cp * sizeof(int32_t));
    memset(L->zrow, za, C);
    for (c = 0; c < C; c++) {
        uint32_t sum = 0;
        for (t = 0; t < taps; t++) {
            L->dw_w[((t / 2) * cp + c) * 2 + t % 2] = w[c * taps + t];
            sum += (uint32_t)(int32_t)w[c * taps + t];
        }
        L->dw_off[c] = (int32_t)((bias ? (uint32_t)bias[c] : 0u) - (uint32_t)za * sum);
    }
    L->cv.weight_bytes += pairs * cp * 2 * sizeof(int16_t) + cp * sizeof(int32_t) + C;
    L->cv.thread_ws = luthier__align_up(LUTHIER__QDW_CHUNK * pairs * 2 * sizeof(const uint8_t *) + taps * sizeof(ptrdiff_t));
#if LUTHIER__SIMD_X86
    if (!luthier__qconv_pack_dw512(ctx, L, w)) return 0;
#elif LUTHIER__SIMD_NEON && defined(LUTHIER__HAVE_QNEON_DOT)
    if ((ctx->cpu_features & LUTHIER_CPU_DOTPROD) && !luthier__qconv_pack_dwdot(L, w)) return 0;
#else
    (void)ctx;
#endif
    return 1;
}

/* GEMM algorithms, after the front end packed the weights: the kernels' offsets, per output
   channel the compensation of group g's packed B for za' (luthier__qpack_comp writes a whole
   last panel, whose spare columns the next group overwrites) plus the bias. */
LUTHIER_PRIVATE int luthier__qconv_offsets(luthier_qconv2d_layer *L, const int32_t *bias) {
    const luthier_conv2d_layer *cv = &L->cv;
    const size_t C = (size_t)cv->d.out_channels, n = C + cv->bl.nr;
    const int32_t za = L->qd.a_zero_point - (cv->uk->a_s8 ? 128 : 0);
    size_t g, c;
    if (!(L->offset = (int32_t *)luthier__alloc(n * sizeof(int32_t)))) return 0;
    for (g = 0; g < (size_t)cv->d.groups; g++)
        luthier__qpack_comp(&cv->bl, (const int8_t *)(const void *)(cv->packed + g * cv->group_floats), za,
                            L->offset + g * cv->cout_g);
    for (c = 0; bias && c < C; c++) L->offset[c] = (int32_t)((uint32_t)L->offset[c] + (uint32_t)bias[c]);
    L->cv.weight_bytes += n * sizeof(int32_t);
    return 1;
}

LUTHIER_PRIVATE luthier_status luthier__qconv_dw_run(luthier_context *ctx, luthier__conv_job *job);

/* The kernel and each cluster's for a GEMM algorithm: desc's named kernel, else the default
   for cout_g columns. */
LUTHIER_PRIVATE luthier_status luthier__qconv_kernels(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                                      luthier_conv2d_desc *d, const luthier__kernel_entry **uk,
                                                      const luthier__kernel_entry **cuk) {
    int kernel;
    luthier_status s;
    if (desc->kernel && *desc->kernel) {
        if ((s = luthier__qresolve(ctx, desc->kernel, &kernel)) != LUTHIER_STATUS_OK) return s;
    } else {
        kernel = luthier__qkernel_default(ctx, (size_t)(d->out_channels / d->groups));
    }
    *uk = &luthier__qkernels[kernel];
    d->cluster_kernels = desc->cluster_kernels;
    return luthier__conv_cluster_kernels(ctx, d, *uk, cuk);
}

/* The desc's checks and choices before anything is allocated: shape, zero point, output
   parameters, algorithm (the front end's table), kernels, ratios. */
LUTHIER_PRIVATE luthier_status luthier__qconv_check(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                                    luthier_conv2d_desc *d, int64_t *oh, int64_t *ow,
                                                    luthier_conv_algorithm *algo, const luthier__kernel_entry **uk,
                                                    const luthier__kernel_entry **cuk) {
    luthier_conv2d_desc in;
    luthier_qgemm_desc q;
    luthier_status s;
    luthier__qconv_shape(desc, &in);
    if ((s = luthier__conv_normalize(ctx, &in, d, oh, ow)) != LUTHIER_STATUS_OK) return s;
    if (desc->input_zero_point < 0 || desc->input_zero_point > 255)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "qconv2d: input_zero_point %d is outside 0..255",
                             (int)desc->input_zero_point);
    luthier__qconv_output(desc, &q);
    if ((s = luthier__qcheck_output(ctx, &q)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__conv_choose_in(ctx, "qconv2d", d, LUTHIER_KERNELS_INT8, algo)) != LUTHIER_STATUS_OK) return s;
    if (*algo != LUTHIER_CONV_DEPTHWISE && (s = luthier__qconv_kernels(ctx, desc, d, uk, cuk)) != LUTHIER_STATUS_OK)
        return s;
    return luthier__conv_check_ratios(ctx, "qconv2d", d);
}

LUTHIER_API luthier_status luthier_qconv2d_create(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                                  const int8_t *weights_oihw, const int32_t *bias,
                                                  luthier_qconv2d_layer **out) {
    luthier_conv2d_desc d;
    luthier_qconv2d_layer *L;
    luthier_conv_algorithm algo = LUTHIER_CONV_AUTO;
    const luthier__kernel_entry *uk = NULL, *cuk[LUTHIER_MAX_CLUSTERS] = {NULL};
    int64_t oh = 0, ow = 0;
    luthier_status s;
    if (out) *out = NULL;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !out || !weights_oihw)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "qconv2d: desc, weights and out must not be NULL");
    if ((s = luthier__qconv_check(ctx, desc, &d, &oh, &ow, &algo, &uk, cuk)) != LUTHIER_STATUS_OK) return s;
    if (!(L = (luthier_qconv2d_layer *)luthier__alloc(sizeof *L)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "qconv2d: cannot allocate the layer");
    memset(L, 0, sizeof *L);
    luthier__conv_init(ctx, &L->cv, &d, algo, uk, cuk, oh, ow);
    L->cv.in_elem = 1;
    L->cv.out_elem = luthier__qconv_elem(desc->output);
    L->cv.pad_value = (int)desc->input_zero_point;
    L->cv.depthwise = luthier__qconv_dw_run;
    luthier__qconv_output(desc, &L->qd);
    if (!luthier__qconv_copy_params(L, desc)) s = LUTHIER_STATUS_OUT_OF_MEMORY;
    else if (algo == LUTHIER_CONV_DEPTHWISE)
        s = luthier__qconv_pack_dw(ctx, L, weights_oihw, bias, desc->input_zero_point) ? LUTHIER_STATUS_OK
                                                                                       : LUTHIER_STATUS_OUT_OF_MEMORY;
    else if ((s = luthier__conv_prepare_gemm(ctx, &L->cv, weights_oihw)) == LUTHIER_STATUS_OK && !luthier__qconv_offsets(L, bias))
        s = LUTHIER_STATUS_OUT_OF_MEMORY;
    if ((s = luthier__conv_created(ctx, "qconv2d", &L->cv, s, luthier__qconv_destroy_cv)) == LUTHIER_STATUS_OK) *out = L;
    return s;
}

LUTHIER_PRIVATE luthier__isa luthier__qconv_isa(const luthier_qconv2d_layer *L, unsigned features);

LUTHIER_API luthier_status luthier_qconv2d_get_info(const luthier_qconv2d_layer *L, luthier_conv2d_info *out) {
    if (!L || !out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    luthier__conv_info(&L->cv, sizeof *L, luthier__qconv_isa(L, L->cv.features), out);
    return LUTHIER_STATUS_OK;
}

/* >>impl-qconv-dw ================================================================================
   Two designs. AVX-512 VNNI contexts run the row kernel (luthier__qdw512_*, after the scalar
   routine): output rows from input rows interleaved four at a time, vpdpbusd over a kernel
   column per instruction, a 32-bit output stage. The other contexts run the pixel routines:
   a chunk of npix output pixels of a depthwise layer. Pixel px has the tap pointers
   x[px * 2 * pairs + t] (tap pairs (2p, 2p + 1); padding taps point at the zero-point row, a
   missing last tap at any row: its weight is 0); for channels [0, p->n):
       acc[c] = offset[c] + sum_t x[t][c] * w[t][c]   (int32, modulo 2^32 as in the GEMM kernels)
   then the output stage of p into row px of p->c (stride p->ldc = channels). The products of
   uint8 and int8 fit int16 exactly, so the tap pairs go through int16 multiply-add (vpdpwssd,
   vpmaddwd, smlal). The SIMD routines loop over 16-channel blocks outside and pixels inside,
   so a block's output parameters are loaded once per chunk.
   SDOT (AArch64 with dotprod, luthier__qdw_neondot; the weights in dw_dot, packed at create
   when the context has dotprod): quads of taps instead of pairs. Per pixel and block, the 16
   bytes of each of 4 taps (as x ^ 0x80: SDOT is int8 x int8) go through 8 zips into 4 vectors
   of dwords [t0 t1 t2 t3] of 4 channels each, and 4 SDOTs with the quad's weights (the same
   order) add 64 products; the block's start 128 * sum(w) restores acc exactly. Per quad: 4
   loads, 4 eor, 8 zips, 4 SDOTs for 64 multiply-adds, where smlal takes 8 for 32. */
typedef void (*luthier__qdw_fn)(const luthier_qconv2d_layer *L, const luthier_qgemm_ukernel_args *p,
                                const uint8_t *const *x, size_t npix);

LUTHIER_PRIVATE void luthier__qdw_scalar(const luthier_qconv2d_layer *L, const luthier_qgemm_ukernel_args *p,
                                         const uint8_t *const *x, size_t npix) {
    const int16_t *w = L->dw_w;
    const size_t pairs = L->dw_pairs, cp = L->dw_cp;
    size_t px, c, t;
    for (px = 0; px < npix; px++, x += 2 * pairs)
        for (c = 0; c < p->n; c++) {
            uint32_t acc = (uint32_t)p->offset[c];
            for (t = 0; t < pairs; t++) {
                const int16_t *wt = w + (t * cp + c) * 2;
                acc += (uint32_t)((int32_t)x[2 * t][c] * wt[0]) + (uint32_t)((int32_t)x[2 * t + 1][c] * wt[1]);
            }
            luthier__qstore_scalar(p, px, c, (int32_t)acc);
        }
}

/* The arguments of the output stage for channels [c, c + n). */
LUTHIER__INLINE void luthier__qdw_cols(const luthier_qgemm_ukernel_args *p, luthier_qgemm_ukernel_args *q,
                                       size_t c, size_t n) {
    *q = *p;
    q->n = n;
    q->offset = p->offset + c;
    q->multiplier = p->multiplier + c;
    q->shift = p->shift + c;
    q->b_scale = p->b_scale + c;
    q->bias = p->bias ? p->bias + c : NULL;
    q->c = (unsigned char *)p->c + c * luthier__qconv_elem(p->output);
}

/* 8 bytes of a tap row from channel c, zero past n channels (no read past the row). */
LUTHIER__INLINE void luthier__qdw_load8(uint8_t *dst, const uint8_t *row, size_t c, size_t n) {
    memset(dst, 0, 8);
    if (c < n) memcpy(dst, row + c, luthier__min_sz(8, n - c));
}

#if LUTHIER__SIMD_X86
#define LUTHIER__TARGET_QDW512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

/* AVX-512 VNNI: the row kernel. A unit is one output row (image n, row oy; two rows oy, oy + 1
   when stride_h == dilation_h == 1 and kernel_h <= 3: "pairs") x one pixel segment
   [ox_a, ox_a + npx) x one channel slice [ca, cb) (the split is made at create).
   1. Interleave: for kernel-row group g (rows 4g..4g+3 of the kernel; a row in the padding
      reads the za row, one past a kernel of 3 rows the za vector) and each input column the
      unit reads, the four rows' bytes of a channel become one dword [x0, x1, x2, x3]: 64 bytes
      of each row -> vpunpck{l,h}bw, vpunpck{l,h}wd -> four vectors, vector k holding in its
      128-bit lane l the dwords of channels 16l + 4k + j (j = 0..3), stored as lane l of the
      array [g][phase][k] (phase = column % stride_w, pixel column / stride_w: every tap then
      reads its array at unit stride). A pair interleaves input rows oy - pad_top + 0..3 once
      for both output rows: the first uses bytes 0..2, the second bytes 1..3 (its weights are
      shifted by a byte), so stride-1 layers interleave each input byte once per output row
      instead of twice.
   2. Blocks of 4 lanes (64 outputs): acc_k = the start (bias - za sum(w)), then per tap (g, kw)
      one vpdpbusd per k with the tap's lane block (the 3 or 4 rows of a kernel column at once: a
      3x3 layer is 3 vpdpbusd per 16 outputs) and the entry's weights in the same lanes. Up to 4
      blocks that share an entry go together (the entry loaded once, four independent chains).
      Partial blocks compute lanes that are not stored; nothing needs a mask but the store.
   3. Output stage on the permuted lanes, then vpackssdw / vpackuswb put the bytes back in
      channel order (the packs undo the unpacks' permutation); float / int32 outputs go through
      a 4 x 4 transpose of 128-bit lanes. Requantization, exactly luthier_requantize: with
      P = acc * M, R = 2^30 + 2^(30+s) [s > 0] and C = -2^31 [s > 0],
          SRDHM then RDBPOT = (P + R + C [P < 0]) >> (31 + s)
      (SRDHM rounds half up, (P + 2^30) >> 31; RDBPOT's ties away from zero are
      (x + 2^(s-1) - [x < 0]) >> s; the two floors merge, and [P < 0], [acc < 0] may stand for
      [x < 0]: they differ only when x = 0, where all give 0). The fast stage (when the bounds
      of acc allow it, see the table) doubles it: (2P + 2R - 2^32 [acc < 0]) >> (32 + s), so
      the correction is -1 on the high half alone, and the high halves of the even and odd
      lanes' products (vpmuludq of acc + 2^31 by 2M) meet in one vector: 9 operations per 16
      outputs, 7 when qmin >= zo (a negative acc then clamps to qmin whatever its rounding);
      the 64-bit stage takes 12. zo goes into R when it fits. The clamp around zo is exact
      through the saturating packs: sat16(y) +sat zo, then sat8u, then [qmin, qmax].
   Flat runs: with one slice and C % 16 == 0 a segment's outputs are contiguous (NHWC) and so
   are its lanes (pixel j at lanes j * C / 16): the blocks run straight across pixels, the
   entries cycling through every block start (a multiple of gcd(C / 16, 4) lanes), so C = 32 or
   144 uses every lane of every vector; stride 1 then interleaves whole row spans at once too.
   A unit interleaves in strips just ahead of the blocks that read them, so the out-of-order
   core overlaps the shuffle-bound interleave with the multiply-bound output stage. */
typedef struct luthier__qdw512_out {
    __m512i zo16, lo8, hi8;  /* UINT8: zo as int16, qmin, qmax as bytes */
    __m512 flo, fhi;          /* FLOAT clamp */
    int clamp8, fclamp, zf; /* zf: y already holds + zo */
    luthier_qoutput output;
    size_t elem;
} luthier__qdw512_out;

LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_interleave(__m512i r0, __m512i r1, __m512i r2, __m512i r3,
                                                                       __m512i v[4]) {
    const __m512i a = _mm512_unpacklo_epi8(r0, r1), b = _mm512_unpackhi_epi8(r0, r1);
    const __m512i c = _mm512_unpacklo_epi8(r2, r3), e = _mm512_unpackhi_epi8(r2, r3);
    v[0] = _mm512_unpacklo_epi16(a, c);
    v[1] = _mm512_unpackhi_epi16(a, c);
    v[2] = _mm512_unpacklo_epi16(b, e);
    v[3] = _mm512_unpackhi_epi16(b, e);
}

/* The four interleaved vectors of group rows rp[0..3] at byte offset o (row 3 only if r3, else
   the zero point: past a kernel of 3 rows); bytes outside m read as the zero point (and are
   never touched). */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_load4(const uint8_t *const *rp, ptrdiff_t o, __mmask64 m,
                                                                  __m512i zv, int r3, __m512i v[4]) {
    __m512i r[4];
    int i;
    if (m == ~(__mmask64)0) {
        LUTHIER__UNROLL for (i = 0; i < 3; i++) r[i] = _mm512_loadu_si512((const void *)(rp[i] + o));
        r[3] = r3 ? _mm512_loadu_si512((const void *)(rp[3] + o)) : zv;
    } else {
        LUTHIER__UNROLL for (i = 0; i < 3; i++)
            r[i] = _mm512_mask_loadu_epi8(zv, m, (const void *)((uintptr_t)rp[i] + (uintptr_t)o));
        r[3] = r3 ? _mm512_mask_loadu_epi8(zv, m, (const void *)((uintptr_t)rp[3] + (uintptr_t)o)) : zv;
    }
    luthier__qdw512_interleave(r[0], r[1], r[2], r[3], v);
}

LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_put(uint8_t *dst, size_t as, size_t nl, const __m512i v[4]) {
    int k;
    if (nl >= 4) {
        LUTHIER__UNROLL for (k = 0; k < 4; k++) _mm512_storeu_si512((void *)(dst + (size_t)k * as * 16), v[k]);
    } else {
        const __mmask16 m = (__mmask16)((1u << (4 * nl)) - 1u);
        LUTHIER__UNROLL for (k = 0; k < 4; k++) _mm512_mask_storeu_epi32((void *)(dst + (size_t)k * as * 16), m, v[k]);
    }
}

/* Output stage (a) of 16 permuted lanes: y as int32 (see above); p: MV, MO, RE, RO, SE, SO, CE,
   CO of the lanes. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE __m512i luthier__qdw512_requant(__m512i a, const __m512i p[8]) {
    const __m512i zero = _mm512_setzero_si512();
    const __m512i pe0 = _mm512_mul_epi32(a, p[0]), po0 = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), p[1]);
    __m512i pe = _mm512_add_epi64(pe0, p[2]), po = _mm512_add_epi64(po0, p[3]);
    pe = _mm512_mask_add_epi64(pe, _mm512_cmplt_epi64_mask(pe0, zero), pe, p[6]);
    po = _mm512_mask_add_epi64(po, _mm512_cmplt_epi64_mask(a, zero), po, p[7]); /* the sign of lanes 1, 3 */
    pe = _mm512_srav_epi64(pe, p[4]);
    po = _mm512_srav_epi64(po, p[5]);
    return _mm512_mask_shuffle_epi32(pe, (__mmask16)0xAAAA, po, (_MM_PERM_ENUM)0xA0);
}

/* The fast output stage of 16 permuted lanes (see the table): a = acc + 2^31; p: M2V, M2O, R2E,
   R2O, S32, Z32. The high halves of N = a * 2M + R2 (= 2 acc M + 2R + ...) are gathered into
   their lanes by one vpshufd; the tie correction of a negative acc (-2^32 in R2, +1 back when
   acc >= 0, i.e. bit 31 of a, or always when s == 0) is one add on the high half; then >> s. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE __m512i luthier__qdw512_requant32(__m512i a, const __m512i p[6], int corr,
                                                                        int zor) {
    const __m512i pe = _mm512_add_epi64(_mm512_mul_epu32(a, p[0]), p[2]);
    const __m512i po = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32), p[1]), p[3]);
    __m512i h = _mm512_mask_shuffle_epi32(po, (__mmask16)0x5555, pe, (_MM_PERM_ENUM)0xF5);
    if (corr) h = _mm512_add_epi32(h, _mm512_srli_epi32(zor ? _mm512_or_si512(a, p[5]) : a, 31));
    return _mm512_srav_epi32(h, p[4]);
}

/* y (int32, permuted lanes, + zo when folded) of 64 outputs -> n (1..64) uint8 at dst. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_pack(const luthier__qdw512_out *o, const __m512i y[4],
                                                                 unsigned char *dst, size_t n, int zf) {
    __m512i b;
    if (zf) {
        b = _mm512_packus_epi16(_mm512_packs_epi32(y[0], y[1]), _mm512_packs_epi32(y[2], y[3]));
    } else {
        b = _mm512_packus_epi16(_mm512_adds_epi16(_mm512_packs_epi32(y[0], y[1]), o->zo16),
                                _mm512_adds_epi16(_mm512_packs_epi32(y[2], y[3]), o->zo16));
    }
    if (o->clamp8) b = _mm512_min_epu8(_mm512_max_epu8(b, o->lo8), o->hi8);
    if (n >= 64) _mm512_storeu_si512((void *)dst, b);
    else _mm512_mask_storeu_epi8((void *)dst, ((__mmask64)1 << n) - 1, b);
}

/* Stores 64 permuted int32 / float outputs (n of them, 1..64) in channel order: a 4 x 4
   transpose of 128-bit lanes. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_store32(const __m512i acc[4], unsigned char *dst, size_t n) {
    const __m512i t0 = _mm512_shuffle_i32x4(acc[0], acc[1], 0x44), t1 = _mm512_shuffle_i32x4(acc[2], acc[3], 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(acc[0], acc[1], 0xEE), t3 = _mm512_shuffle_i32x4(acc[2], acc[3], 0xEE);
    __m512i v[4];
    int k;
    v[0] = _mm512_shuffle_i32x4(t0, t1, 0x88);
    v[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD);
    v[2] = _mm512_shuffle_i32x4(t2, t3, 0x88);
    v[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD);
    LUTHIER__UNROLL for (k = 0; k < 4; k++) {
        const size_t r = n > 16 * (size_t)k ? n - 16 * (size_t)k : 0;
        if (!r) break;
        if (r >= 16) _mm512_storeu_si512((void *)(dst + 64 * (size_t)k), v[k]);
        else _mm512_mask_storeu_epi32((void *)(dst + 64 * (size_t)k), (__mmask16)((1u << r) - 1u), v[k]);
    }
}

/* Keeps v in a register: the compiler would fold its load into every use. */
#define LUTHIER__QDW512_REG(v) __asm__("" : "+v"(v))

/* One tap of NB blocks: acc[m][k] += the interleaved rows at it + m * idelta + k * as16 times
   the weights at wt + 64k. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_tap(__m512i acc[4][4], const uint8_t *it, size_t idelta,
                                                                size_t as16, const unsigned char *wt, const int NB) {
    int k, m;
    LUTHIER__UNROLL for (k = 0; k < 4; k++) {
        const __m512i wv = _mm512_loadu_si512((const void *)(wt + 64 * (size_t)k));
        LUTHIER__UNROLL for (m = 0; m < NB; m++)
            acc[m][k] = _mm512_dpbusd_epi32(
                acc[m][k], _mm512_loadu_si512((const void *)(it + (size_t)m * idelta + (size_t)k * as16)), wv);
    }
}

/* NB (1..4) blocks of 64 outputs that share an entry ent: block m reads the interleaved rows
   at ip + m * idelta and stores n[m] outputs at dst + m * ddelta; the weights are the entry's
   at wofs (the second set of a pair's second row). NT: the taps when known at compile time (0:
   L's); MODE: see luthier__qdw512_group. The entry's weights and parameters are loaded once
   for the NB blocks. */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_group_t(const luthier_qconv2d_layer *L,
                                                                    const luthier__qdw512_out *o, const uint8_t *ip,
                                                                    size_t idelta, const unsigned char *ent,
                                                                    size_t wofs, unsigned char *dst, size_t ddelta,
                                                                    const size_t *n, const int NB, const int NT,
                                                                    const int MODE) {
    const size_t nt = NT ? (size_t)NT : L->dw_g * (size_t)L->cv.d.kernel_w, as16 = L->dw_as * 16;
    const size_t *tap = L->dw_tap;
    const unsigned char *par = ent + L->dw_wsz + 256;
    __m512i acc[4][4];
    size_t t;
    int k, m;
    size_t z = 0;
    __asm__("" : "+r"(z)); /* an opaque 0: one load per accumulator rather than a load and copies */
    LUTHIER__UNROLL for (k = 0; k < 4; k++)
        LUTHIER__UNROLL for (m = 0; m < NB; m++)
            acc[m][k] = _mm512_loadu_si512((const void *)(ent + L->dw_wsz + 64 * (size_t)k + z * (size_t)m));
    if (NT == 3) { /* unrolled by hand: a loop keeps the accumulators moving between registers */
        const size_t t0 = tap[0], t1 = tap[1], t2 = tap[2];
        luthier__qdw512_tap(acc, ip + t0, idelta, as16, ent + wofs, NB);
        luthier__qdw512_tap(acc, ip + t1, idelta, as16, ent + wofs + 256, NB);
        luthier__qdw512_tap(acc, ip + t2, idelta, as16, ent + wofs + 512, NB);
    } else {
        for (t = 0; t < nt; t++) luthier__qdw512_tap(acc, ip + tap[t], idelta, as16, ent + wofs + 256 * t, NB);
    }
    if (MODE || (o->output == LUTHIER_QOUTPUT_UINT8 && L->dw_fast)) {
        const int corr = MODE ? MODE == 1 : !L->dw_nc, zor = MODE ? 0 : L->dw_cn;
        LUTHIER__UNROLL for (k = 0; k < 4; k++) {
            __m512i p[6];
            int i;
            LUTHIER__UNROLL for (i = 0; i < 6; i++) {
                if (i == 5 && !zor) {
                    p[i] = _mm512_setzero_si512();
                    continue;
                }
                p[i] = _mm512_loadu_si512((const void *)(par + L->dw_pk * (size_t)k + 64 * (size_t)i));
                if (NB > 1) LUTHIER__QDW512_REG(p[i]);
            }
            LUTHIER__UNROLL for (m = 0; m < NB; m++) acc[m][k] = luthier__qdw512_requant32(acc[m][k], p, corr, zor);
        }
        LUTHIER__UNROLL for (m = 0; m < NB; m++)
            luthier__qdw512_pack(o, acc[m], dst + (size_t)m * ddelta, n[m], MODE ? 1 : o->zf);
    } else if (o->output == LUTHIER_QOUTPUT_UINT8) {
        LUTHIER__UNROLL for (k = 0; k < 4; k++) {
            __m512i p[8];
            int i;
            LUTHIER__UNROLL for (i = 0; i < 8; i++) {
                if (i >= 6 && !L->dw_cn) {
                    p[i] = _mm512_set1_epi64(-((long long)1 << 31)); /* every s > 0 */
                    continue;
                }
                p[i] = _mm512_loadu_si512((const void *)(par + L->dw_pk * (size_t)k + 64 * (size_t)i));
                if (NB > 1) LUTHIER__QDW512_REG(p[i]); /* one load for the NB blocks */
            }
            LUTHIER__UNROLL for (m = 0; m < NB; m++) acc[m][k] = luthier__qdw512_requant(acc[m][k], p);
        }
        LUTHIER__UNROLL for (m = 0; m < NB; m++)
            luthier__qdw512_pack(o, acc[m], dst + (size_t)m * ddelta, n[m], o->zf);
    } else {
        if (o->output == LUTHIER_QOUTPUT_FLOAT) {
            LUTHIER__UNROLL for (k = 0; k < 4; k++) {
                const __m512 fs = _mm512_loadu_ps((const void *)(par + L->dw_pk * (size_t)k));
                const __m512 fb = _mm512_loadu_ps((const void *)(par + L->dw_pk * (size_t)k + 64));
                LUTHIER__UNROLL for (m = 0; m < NB; m++) {
                    __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[m][k]), fs, fb);
                    if (o->fclamp) f = _mm512_min_ps(o->fhi, _mm512_max_ps(o->flo, f)); /* as the scalar ?: */
                    acc[m][k] = _mm512_castps_si512(f);
                }
            }
        }
        LUTHIER__UNROLL for (m = 0; m < NB; m++) luthier__qdw512_store32(acc[m], dst + (size_t)m * ddelta, n[m]);
    }
}

/* luthier__qdw512_group_t for nb (1..4) blocks: specialised for 3 taps and the fast uint8 output
   stage with zo folded (MODE 1: with the tie correction, 2: without). Four blocks give the
   out-of-order core enough independent chains (two run a third slower, one half as fast). */
#define LUTHIER__QDW512_GROUP(NT, MODE)                                                               \
    do {                                                                                           \
        if (nb == 4) luthier__qdw512_group_t(L, o, ip, idelta, ent, wofs, dst, ddelta, n, 4, NT, MODE); \
        else if (nb == 3) luthier__qdw512_group_t(L, o, ip, idelta, ent, wofs, dst, ddelta, n, 3, NT, MODE); \
        else if (nb == 2) luthier__qdw512_group_t(L, o, ip, idelta, ent, wofs, dst, ddelta, n, 2, NT, MODE); \
        else luthier__qdw512_group_t(L, o, ip, idelta, ent, wofs, dst, ddelta, n, 1, NT, MODE);         \
    } while (0)
LUTHIER__TARGET_QDW512 LUTHIER_PRIVATE void luthier__qdw512_group(const luthier_qconv2d_layer *L,
                                                                 const luthier__qdw512_out *o, const uint8_t *ip,
                                                                 size_t idelta, const unsigned char *ent, size_t wofs,
                                                                 unsigned char *dst, size_t ddelta, const size_t *n,
                                                                 int nb) {
    const int mode = o->output == LUTHIER_QOUTPUT_UINT8 && L->dw_fast && L->dw_zf && !L->dw_cn ? (L->dw_nc ? 2 : 1) : 0;
    if (L->dw_g * (size_t)L->cv.d.kernel_w == 3) {
        if (mode == 1) LUTHIER__QDW512_GROUP(3, 1);
        else if (mode == 2) LUTHIER__QDW512_GROUP(3, 2);
        else LUTHIER__QDW512_GROUP(3, 0);
    } else {
        LUTHIER__QDW512_GROUP(0, 0);
    }
}
#undef LUTHIER__QDW512_GROUP

/* Units of a run: images x output rows (pairs of rows) x segments x slices. */
LUTHIER_PRIVATE size_t luthier__qdw512_units(const luthier_qconv2d_layer *L) {
    const size_t rows = L->dw_pair ? luthier__div_up((size_t)L->cv.oh, 2) : (size_t)L->cv.oh;
    return (size_t)L->cv.d.batch * rows * L->dw_seg * L->dw_slice;
}

/* A unit in progress: its rows, ranges and how far its interleaved rows are built. */
typedef struct luthier__qdw512_unit_ctx {
    const uint8_t *rp[4 * LUTHIER__QDW512_MAXG]; /* input rows (the za row in the padding) */
    size_t C, G, s, as, wl, ox_a, ca, cb, J, built; /* built: pixels (of each phase) done */
    ptrdiff_t pl, in_w;
    int r3, flat_build;
    __m512i zv;
} luthier__qdw512_unit_ctx;

/* Interleaves pixels [u->built, j_end) of each phase (whole row spans with stride 1 and all
   channels: 64-byte chunks across pixels; else column by column, 64-channel chunks). */
LUTHIER__TARGET_QDW512 LUTHIER__QINLINE void luthier__qdw512_build(luthier__qdw512_unit_ctx *u, uint8_t *ib, size_t j_end) {
    const size_t C = u->C, G = u->G, s = u->s, as = u->as, wl = u->wl;
    size_t g;
    j_end = luthier__min_sz(j_end, u->J);
    if (j_end <= u->built) return;
    if (u->flat_build) { /* positions [built C, j_end C): lane pos / 16 */
        const size_t total = j_end * C;
        const ptrdiff_t o0 = ((ptrdiff_t)u->ox_a - u->pl) * (ptrdiff_t)C, rowb = u->in_w * (ptrdiff_t)C;
        size_t pos;
        for (pos = u->built * C; pos < total; pos += 64) {
            const ptrdiff_t ob = o0 + (ptrdiff_t)pos;
            const size_t nl = luthier__min_sz(4, (total - pos) / 16);
            __mmask64 m = ~(__mmask64)0;
            if (ob < 0 || ob + 64 > rowb) {
                const ptrdiff_t lo = ob < 0 ? -ob : 0, hi = rowb - ob < 64 ? rowb - ob : 64;
                m = hi <= lo ? 0 : (hi - lo == 64 ? ~(__mmask64)0 : (((__mmask64)1 << (hi - lo)) - 1) << lo);
            }
            for (g = 0; g < G; g++) {
                __m512i v[4];
                luthier__qdw512_load4(u->rp + 4 * g, ob, m, u->zv, u->r3 || g + 1 < G, v);
                luthier__qdw512_put(ib + (g * 4 * as) * 16 + pos, as, nl, v);
            }
        }
    } else {
        const size_t wl16 = luthier__div_up(u->cb - u->ca, 16);
        size_t jj, ph, c;
        for (jj = u->built; jj < j_end; jj++)
            for (ph = 0; ph < s; ph++) {
                const ptrdiff_t ix = (ptrdiff_t)(s * (u->ox_a + jj) + ph) - u->pl;
                uint8_t *dst = ib + (ph * 4 * as + jj * wl) * 16;
                if (ix < 0 || ix >= u->in_w) {
                    __m512i v[4];
                    v[0] = v[1] = v[2] = v[3] = u->zv;
                    for (g = 0; g < G; g++)
                        for (c = 0; c < wl16; c += 4) luthier__qdw512_put(dst + (g * s * 4 * as + c) * 16, as, wl16 - c, v);
                    continue;
                }
                for (c = u->ca; c < u->cb; c += 64) {
                    const size_t nb = luthier__min_sz(64, u->cb - c);
                    const __mmask64 m = nb == 64 ? ~(__mmask64)0 : ((__mmask64)1 << nb) - 1;
                    for (g = 0; g < G; g++) {
                        __m512i v[4];
                        luthier__qdw512_load4(u->rp + 4 * g, (ptrdiff_t)((size_t)ix * C + c), m, u->zv, u->r3 || g + 1 < G, v);
                        luthier__qdw512_put(dst + (g * s * 4 * as + (c - u->ca) / 16) * 16, as, luthier__div_up(nb, 16), v);
                    }
                }
            }
    }
    u->built = j_end;
}

/* One unit (see above), in strips: the interleaved pixels the next few blocks read, then those
   blocks (of both rows of a pair: the second one with the entries' second weights, which read
   the interleaved rows one input row down), so that the out-of-order core overlaps the
   shuffle-bound interleave with the output stage. in, out: NHWC; ib: the thread's buffer. */
LUTHIER__TARGET_QDW512 LUTHIER_PRIVATE void luthier__qdw512_unit(const luthier_qconv2d_layer *L,
                                                                const luthier__qdw512_out *o, const uint8_t *in,
                                                                unsigned char *out, uint8_t *ib, size_t unit) {
    const luthier_conv2d_desc *d = &L->cv.d;
    const size_t C = (size_t)d->in_channels, KH = (size_t)d->kernel_h, G = L->dw_g, s = (size_t)d->stride_w;
    const size_t ow = (size_t)L->cv.ow, oh = (size_t)L->cv.oh, in_h = (size_t)d->in_h;
    const size_t parts = L->dw_seg * L->dw_slice, nch = luthier__div_up(C, 64), wl = L->dw_wl;
    const size_t rpi = L->dw_pair ? luthier__div_up(oh, 2) : oh, elem = o->elem;
    const size_t row = unit / parts, sg = unit % parts / L->dw_slice, sl = unit % parts % L->dw_slice;
    const size_t n = row / rpi, oy = row % rpi * (L->dw_pair ? 2 : 1), nrows = L->dw_pair && oy + 1 < oh ? 2 : 1;
    const size_t ox_a = sg * ow / L->dw_seg, npx = (sg + 1) * ow / L->dw_seg - ox_a;
    const size_t ca = 64 * (sl * nch / L->dw_slice), cb = luthier__min_sz(C, 64 * ((sl + 1) * nch / L->dw_slice));
    const size_t wc = cb - ca, jo = (size_t)((d->kernel_w - 1) * d->dilation_w) / s, wt = G * (size_t)d->kernel_w * 256;
    unsigned char *orow = out + ((n * oh + oy) * ow) * C * elem;
    luthier__qdw512_unit_ctx u;
    size_t g, r, q;
    u.C = C;
    u.G = G;
    u.s = s;
    u.as = L->dw_as;
    u.wl = wl;
    u.ox_a = ox_a;
    u.ca = ca;
    u.cb = cb;
    u.J = npx + jo;
    u.built = 0;
    u.pl = (ptrdiff_t)d->pad_left;
    u.in_w = (ptrdiff_t)d->in_w;
    u.r3 = L->dw_pair || KH % 4 == 0; /* the last group's row 3 is read */
    u.flat_build = s == 1 && wc == C && C % 16 == 0;
    u.zv = _mm512_set1_epi8((char)L->qd.a_zero_point);
    for (g = 0; g < G; g++)
        for (r = 0; r < 4; r++) {
            const size_t kh = 4 * g + r;
            const int64_t iy = (int64_t)oy * d->stride_h - d->pad_top + (int64_t)kh * d->dilation_h;
            u.rp[4 * g + r] = (L->dw_pair ? kh <= KH : kh < KH) && iy >= 0 && iy < d->in_h
                                  ? in + (n * in_h + (size_t)iy) * (size_t)d->in_w * C
                                  : L->dw_zrow;
        }
    if (L->dw_flat) { /* blocks b + i + m ne (m < 4) share an entry: windows of 4 ne blocks */
        const size_t N = npx * C, nb = luthier__div_up(N, 64), ne = L->dw_ne, q16 = L->dw_q16, step = 4 % q16;
        size_t b, i, m;
        for (b = 0; b < nb; b += 4 * ne) {
            const size_t last = luthier__min_sz(b + 4 * ne, nb) - 1;
            luthier__qdw512_build(&u, ib, (64 * last + 63) / C + jo + 1);
            for (q = 0; q < nrows; q++) {
                unsigned char *d0 = orow + (q * ow + ox_a) * C * elem;
                size_t c16 = 0;
                for (i = 0; i < ne && b + i < nb; i++) {
                    const size_t b0 = b + i;
                    size_t cnt[4], k = 0;
                    for (m = 0; m < 4 && b0 + m * ne < nb; m++) cnt[k++] = luthier__min_sz(64, N - 64 * (b0 + m * ne));
                    luthier__qdw512_group(L, o, ib + b0 * 64, ne * 64, L->dw_tab + c16 / L->dw_eg * L->dw_ebytes, q * wt,
                                          d0 + b0 * 64 * elem, ne * 64 * elem, cnt, (int)k);
                    c16 += step;
                    if (c16 >= q16) c16 -= q16;
                }
            }
        }
    } else { /* pixels px..px + 3 share the entries */
        const size_t nck = luthier__div_up(wc, 64);
        size_t px, i;
        for (px = 0; px < npx; px += 4) {
            const int k = (int)luthier__min_sz(4, npx - px);
            luthier__qdw512_build(&u, ib, px + 4 + jo);
            for (q = 0; q < nrows; q++)
                for (i = 0; i < nck; i++) {
                    const size_t c = luthier__min_sz(64, wc - 64 * i), cnt[4] = {c, c, c, c};
                    luthier__qdw512_group(L, o, ib + (px * wl + 4 * i) * 16, wl * 16,
                                          L->dw_tab + (ca / 16 + 4 * i) / L->dw_eg * L->dw_ebytes, q * wt,
                                          orow + ((q * ow + ox_a + px) * C + ca + 64 * i) * elem, C * elem, cnt, k);
                }
        }
    }
}

/* AVX2: 8 channels per vector, vpmaddwd then add; the AVX2 GEMM output stage. */
LUTHIER__TARGET_AVX2 LUTHIER_PRIVATE void luthier__qdw_avx2(const luthier_qconv2d_layer *L,
                                                           const luthier_qgemm_ukernel_args *p,
                                                           const uint8_t *const *x, size_t npix) {
    const int16_t *w = L->dw_w;
    const size_t pairs = L->dw_pairs, cp = L->dw_cp;
    const size_t elem = luthier__qconv_elem(p->output);
    luthier_qgemm_ukernel_args q;
    size_t c, px, t;
    int h;
    for (c = 0; c < p->n; c += 16) {
        const size_t rem = luthier__min_sz(16, p->n - c);
        luthier__qdw_cols(p, &q, c, rem);
        for (px = 0; px < npix; px++) {
            const uint8_t *const *xp = x + px * 2 * pairs;
            __m256i acc[1][3];
            acc[0][0] = acc[0][1] = acc[0][2] = _mm256_setzero_si256();
            for (t = 0; t < pairs; t++)
                for (h = 0; h < 2; h++) {
                    const size_t ch = c + 8 * (size_t)h;
                    __m256i x0, x1;
                    if (rem == 16) {
                        x0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(xp[2 * t] + ch)));
                        x1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(xp[2 * t + 1] + ch)));
                    } else {
                        uint8_t b0[8], b1[8];
                        luthier__qdw_load8(b0, xp[2 * t], ch, p->n);
                        luthier__qdw_load8(b1, xp[2 * t + 1], ch, p->n);
                        x0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)b0));
                        x1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)b1));
                    }
                    acc[0][h] = _mm256_add_epi32(
                        acc[0][h], _mm256_madd_epi16(_mm256_or_si256(x0, _mm256_slli_epi32(x1, 16)),
                                                     _mm256_loadu_si256((const __m256i *)(const void *)(w + (t * cp + ch) * 2))));
                }
            q.c = (unsigned char *)p->c + (px * p->ldc + c) * elem;
            luthier__q256_output(&q, acc, 1, 2);
        }
    }
}
#endif /* LUTHIER__SIMD_X86 */

#if LUTHIER__SIMD_NEON
/* NEON: 8 channels per step, the weight pairs deinterleaved by vld2q, smlal / smlal2; the NEON
   GEMM output stage (its per-column parameters set up once per block). */
LUTHIER_PRIVATE void luthier__qdw_neon(const luthier_qconv2d_layer *L, const luthier_qgemm_ukernel_args *p,
                                       const uint8_t *const *x, size_t npix) {
    const int16_t *w = L->dw_w;
    const size_t pairs = L->dw_pairs, cp = L->dw_cp;
    luthier_qgemm_ukernel_args q;
    luthier__qneon_cols cols;
    size_t c, px, t;
    int h;
    for (c = 0; c < p->n; c += 16) {
        const size_t rem = luthier__min_sz(16, p->n - c);
        luthier__qdw_cols(p, &q, c, rem);
        luthier__qneon_cols_init(&q, &cols);
        for (px = 0; px < npix; px++) {
            const uint8_t *const *xp = x + px * 2 * pairs;
            int32x4_t acc[4];
            for (h = 0; h < 4; h++) acc[h] = vdupq_n_s32(0);
            for (t = 0; t < pairs; t++)
                for (h = 0; h < 2; h++) {
                    const size_t ch = c + 8 * (size_t)h;
                    const int16x8x2_t wv = vld2q_s16(w + (t * cp + ch) * 2);
                    uint8x8_t b0, b1;
                    int16x8_t x0, x1;
                    if (rem == 16) {
                        b0 = vld1_u8(xp[2 * t] + ch);
                        b1 = vld1_u8(xp[2 * t + 1] + ch);
                    } else {
                        uint8_t t0[8], t1[8];
                        luthier__qdw_load8(t0, xp[2 * t], ch, p->n);
                        luthier__qdw_load8(t1, xp[2 * t + 1], ch, p->n);
                        b0 = vld1_u8(t0);
                        b1 = vld1_u8(t1);
                    }
                    x0 = vreinterpretq_s16_u16(vmovl_u8(b0));
                    x1 = vreinterpretq_s16_u16(vmovl_u8(b1));
                    acc[2 * h] = vmlal_s16(acc[2 * h], vget_low_s16(x0), vget_low_s16(wv.val[0]));
                    acc[2 * h] = vmlal_s16(acc[2 * h], vget_low_s16(x1), vget_low_s16(wv.val[1]));
                    acc[2 * h + 1] = vmlal_high_s16(acc[2 * h + 1], x0, wv.val[0]);
                    acc[2 * h + 1] = vmlal_high_s16(acc[2 * h + 1], x1, wv.val[1]);
                }
            luthier__qneon_store_row(&q, &cols, px, acc, 4);
        }
    }
}

#ifdef LUTHIER__HAVE_QNEON_DOT
/* One quad of taps of 16 channels: rows r0..r3 (x ^ 0x80, in channel order) become dwords of
   4 taps (zip1 / zip2 of bytes, then of halfwords: vector k holds channels 4k..4k + 3), one
   SDOT per 4 channels with the quad's weights w (64 bytes, the same order). */
LUTHIER__TARGET_QDOT LUTHIER__INLINE void luthier__qdw_dot_quad(int32x4_t acc[4], int8x16_t r0, int8x16_t r1,
                                                               int8x16_t r2, int8x16_t r3, const int8_t *w) {
    const int16x8_t a = vreinterpretq_s16_s8(vzip1q_s8(r0, r1)), b = vreinterpretq_s16_s8(vzip2q_s8(r0, r1));
    const int16x8_t c = vreinterpretq_s16_s8(vzip1q_s8(r2, r3)), d = vreinterpretq_s16_s8(vzip2q_s8(r2, r3));
    acc[0] = vdotq_s32(acc[0], vreinterpretq_s8_s16(vzip1q_s16(a, c)), vld1q_s8(w));
    acc[1] = vdotq_s32(acc[1], vreinterpretq_s8_s16(vzip2q_s16(a, c)), vld1q_s8(w + 16));
    acc[2] = vdotq_s32(acc[2], vreinterpretq_s8_s16(vzip1q_s16(b, d)), vld1q_s8(w + 32));
    acc[3] = vdotq_s32(acc[3], vreinterpretq_s8_s16(vzip2q_s16(b, d)), vld1q_s8(w + 48));
}

/* 16 bytes of a tap row from channel c, as x ^ 0x80. FULL: all in the row; else the last
   block (n - c < 16 channels): the 16 bytes ending at channel n moved down by tbl idx (n >= 16),
   or a copy (n < 16), so nothing past the row is read (the lanes past n hold weights 0). */
LUTHIER__TARGET_QDOT LUTHIER__INLINE int8x16_t luthier__qdw_dot_row(const uint8_t *row, size_t c, size_t n,
                                                                   uint8x16_t idx, const int FULL) {
    uint8x16_t v;
    if (FULL) {
        v = vld1q_u8(row + c);
    } else if (n >= 16) {
        v = vqtbl1q_u8(vld1q_u8(row + n - 16), idx);
    } else {
        uint8_t t[16];
        luthier__qdw_load8(t, row, c, n);
        luthier__qdw_load8(t + 8, row, c + 8, n);
        v = vld1q_u8(t);
    }
    return vreinterpretq_s8_u8(veorq_u8(v, vdupq_n_u8(0x80)));
}

/* Pixels [0, npix) of the 16 channels at c (q, cols: their output stage; blk: their SDOT
   block). The taps past the last one (a quad's tail) are zero rows. */
LUTHIER__TARGET_QDOT LUTHIER__INLINE void luthier__qdw_dot_block(const luthier_qconv2d_layer *L,
                                                                const luthier_qgemm_ukernel_args *q,
                                                                const luthier__qneon_cols *cols,
                                                                const uint8_t *const *x, size_t npix, size_t c,
                                                                size_t n, const unsigned char *blk, uint8x16_t idx,
                                                                const int FULL) {
    const size_t taps = (size_t)(L->cv.d.kernel_h * L->cv.d.kernel_w), quads = taps / 4, step = 2 * L->dw_pairs;
    const int32_t *start = (const int32_t *)(const void *)blk;
    const int8_t *w = (const int8_t *)(const void *)(blk + 64);
    const int32x4_t s0 = vld1q_s32(start), s1 = vld1q_s32(start + 4), s2 = vld1q_s32(start + 8), s3 = vld1q_s32(start + 12);
    const int8x16_t z = vdupq_n_s8(0);
    size_t px, g;
#define LUTHIER__QDW_ROW(t) luthier__qdw_dot_row(xp[t], c, n, idx, FULL)
    for (px = 0; px < npix; px++) {
        const uint8_t *const *xp = x + px * step;
        int32x4_t acc[4], out[4]; /* acc in registers (constant indices), out in memory for the store */
        acc[0] = s0;
        acc[1] = s1;
        acc[2] = s2;
        acc[3] = s3;
        for (g = 0; g < quads; g++) {
            if (FULL) LUTHIER__QMCA_BEGIN();
            luthier__qdw_dot_quad(acc, LUTHIER__QDW_ROW(4 * g), LUTHIER__QDW_ROW(4 * g + 1), LUTHIER__QDW_ROW(4 * g + 2),
                                  LUTHIER__QDW_ROW(4 * g + 3), w + 64 * g);
            if (FULL) LUTHIER__QMCA_END();
        }
        if (taps % 4 == 1)
            luthier__qdw_dot_quad(acc, LUTHIER__QDW_ROW(4 * g), z, z, z, w + 64 * g);
        else if (taps % 4 == 2)
            luthier__qdw_dot_quad(acc, LUTHIER__QDW_ROW(4 * g), LUTHIER__QDW_ROW(4 * g + 1), z, z, w + 64 * g);
        else if (taps % 4 == 3)
            luthier__qdw_dot_quad(acc, LUTHIER__QDW_ROW(4 * g), LUTHIER__QDW_ROW(4 * g + 1), LUTHIER__QDW_ROW(4 * g + 2), z,
                                  w + 64 * g);
        memcpy(out, acc, sizeof out);
        luthier__qneon_store_row(q, cols, px, out, 4);
    }
#undef LUTHIER__QDW_ROW
}

/* SDOT (Armv8.2 dotprod): 16 channels per block, 4 taps per SDOT lane (see dw_dot); the input
   enters as x ^ 0x80 = x - 128 (SDOT multiplies int8 by int8) and the block's start,
   128 * sum(w), puts back what that takes off, so acc is the scalar routine's exactly; then
   the NEON GEMM output stage, as luthier__qdw_neon. */
LUTHIER__TARGET_QDOT LUTHIER_PRIVATE void luthier__qdw_neondot(const luthier_qconv2d_layer *L,
                                                              const luthier_qgemm_ukernel_args *p,
                                                              const uint8_t *const *x, size_t npix) {
    static const uint8_t iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    luthier_qgemm_ukernel_args q;
    luthier__qneon_cols cols;
    size_t c;
    for (c = 0; c < p->n; c += 16) {
        const size_t rem = luthier__min_sz(16, p->n - c);
        const unsigned char *blk = L->dw_dot + c / 16 * L->dw_dbytes;
        luthier__qdw_cols(p, &q, c, rem);
        luthier__qneon_cols_init(&q, &cols);
        if (rem == 16) {
            luthier__qdw_dot_block(L, &q, &cols, x, npix, c, p->n, blk, vdupq_n_u8(0), 1);
        } else { /* lane i < rem reads byte 16 - rem + i of the last 16; the others 0 */
            const uint8x16_t io = vld1q_u8(iota), r = vdupq_n_u8((uint8_t)rem);
            const uint8x16_t idx = vorrq_u8(vaddq_u8(io, vdupq_n_u8((uint8_t)(16 - rem))), vcgeq_u8(io, r));
            luthier__qdw_dot_block(L, &q, &cols, x, npix, c, p->n, blk, idx, 0);
        }
    }
}
#endif /* LUTHIER__HAVE_QNEON_DOT */
#endif /* LUTHIER__SIMD_NEON */

/* The depthwise pixel routine of layer L for a context's CPU features, and its ISA (SDOT
   when L has its blocks: packed by a context with dotprod). */
LUTHIER_PRIVATE luthier__qdw_fn luthier__qdw_select(const luthier_qconv2d_layer *L, unsigned features,
                                                   luthier__isa *isa) {
    (void)L;
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX2_FMA) { /* AVX-512 VNNI: the row kernel (luthier__qdw_rows) */
        *isa = LUTHIER__ISA_AVX2;
        return luthier__qdw_avx2;
    }
#endif
#ifdef LUTHIER__HAVE_QNEON_DOT
    if (L->dw_dot && (features & (LUTHIER_CPU_NEON | LUTHIER_CPU_DOTPROD)) == (LUTHIER_CPU_NEON | LUTHIER_CPU_DOTPROD)) {
        *isa = LUTHIER__ISA_NEON_DOT;
        return luthier__qdw_neondot;
    }
#endif
#if LUTHIER__SIMD_NEON
    if (features & LUTHIER_CPU_NEON) {
        *isa = LUTHIER__ISA_NEON;
        return luthier__qdw_neon;
    }
#endif
    (void)features;
    *isa = LUTHIER__ISA_SCALAR;
    return luthier__qdw_scalar;
}

/* Whether depthwise layer L runs the AVX-512 VNNI row kernel with these features. */
LUTHIER_PRIVATE int luthier__qdw_rows(const luthier_qconv2d_layer *L, unsigned features) {
    const unsigned f512 = LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX512VNNI;
    return LUTHIER__SIMD_X86 && L->dw_tab && (features & f512) == f512;
}

/* The ISA layer L runs on with these features: the int8 kernel's, or the depthwise routine's. */
LUTHIER_PRIVATE luthier__isa luthier__qconv_isa(const luthier_qconv2d_layer *L, unsigned features) {
    luthier__isa isa;
    if (L->cv.algo != LUTHIER_CONV_DEPTHWISE) return luthier__isa_of(L->cv.uk->isa);
    if (luthier__qdw_rows(L, features)) return LUTHIER__ISA_AVX512VNNI;
    (void)luthier__qdw_select(L, features, &isa);
    return isa;
}

/* >>impl-qconv-run =============================================================================== */

/* Units = output pixels, in chunks of LUTHIER__QDW_CHUNK: the tap pointers of each pixel
   (interior pixels: fixed offsets from the first tap; border pixels: the zero-point row for
   padding taps), then the pixel routine over all channels. */
LUTHIER_PRIVATE void luthier__qconv_dw_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_qconv2d_layer *L = luthier__qconv_of(j->cv);
    const luthier_conv2d_desc *d = &L->cv.d;
    const size_t C = (size_t)d->in_channels, ohw = (size_t)(L->cv.oh * L->cv.ow), taps2 = 2 * L->dw_pairs;
    const size_t taps = (size_t)(d->kernel_h * d->kernel_w), elem = luthier__qconv_elem(L->qd.output);
    const int64_t span_h = (d->kernel_h - 1) * d->dilation_h, span_w = (d->kernel_w - 1) * d->dilation_w;
    unsigned char *w = j->ws + (size_t)thread * j->ws_stride;
    const uint8_t **x = (const uint8_t **)(void *)w;
    ptrdiff_t *off = (ptrdiff_t *)(void *)(w + LUTHIER__QDW_CHUNK * taps2 * sizeof(const uint8_t *));
    luthier_qgemm_ukernel_args p = j->q->base;
    size_t r, t, n;
    int64_t oy, ox;
    (void)cluster;
    p.n = C;
    p.ldc = C;
    p.offset = L->dw_off;
    p.multiplier = L->mult;
    p.shift = L->shift;
    p.b_scale = L->wscale;
    p.bias = L->fbias;
    for (t = 0; t < taps; t++)
        off[t] = (ptrdiff_t)(((int64_t)t / d->kernel_w * d->dilation_h * d->in_w + (int64_t)t % d->kernel_w * d->dilation_w) *
                             (int64_t)C);
    n = begin / ohw;
    oy = (int64_t)(begin % ohw / (size_t)L->cv.ow);
    ox = (int64_t)(begin % ohw % (size_t)L->cv.ow);
    for (r = begin; r < end; r += LUTHIER__QDW_CHUNK) {
        const size_t npix = luthier__min_sz(LUTHIER__QDW_CHUNK, end - r);
        size_t px;
        for (px = 0; px < npix; px++) {
            const int64_t iy0 = oy * d->stride_h - d->pad_top, ix0 = ox * d->stride_w - d->pad_left;
            const uint8_t *img = (const uint8_t *)j->in + n * (size_t)d->in_h * (size_t)d->in_w * C;
            const uint8_t **xp = x + px * taps2;
            if (iy0 >= 0 && iy0 + span_h < d->in_h && ix0 >= 0 && ix0 + span_w < d->in_w) {
                const uint8_t *x0 = img + ((size_t)iy0 * (size_t)d->in_w + (size_t)ix0) * C;
                for (t = 0; t < taps; t++) xp[t] = x0 + off[t];
            } else {
                int64_t kh, kw;
                for (t = 0, kh = 0; kh < d->kernel_h; kh++) {
                    const int64_t iy = iy0 + kh * d->dilation_h;
                    for (kw = 0; kw < d->kernel_w; kw++, t++) {
                        const int64_t ix = ix0 + kw * d->dilation_w;
                        xp[t] = iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w
                                    ? L->zrow
                                    : img + ((size_t)iy * (size_t)d->in_w + (size_t)ix) * C;
                    }
                }
            }
            if (taps & 1) xp[taps] = xp[0]; /* its weight is 0 */
            if (++ox == L->cv.ow) { /* the next pixel, without divisions */
                ox = 0;
                if (++oy == L->cv.oh) {
                    oy = 0;
                    n++;
                }
            }
        }
        p.c = (unsigned char *)j->out + r * C * elem;
        j->qdw(L, &p, x, npix);
    }
}

#if LUTHIER__SIMD_X86
/* Units = output rows x segments x slices (luthier__qdw512_unit). */
LUTHIER__TARGET_QDW512 LUTHIER_PRIVATE void luthier__qconv_dw512_range(void *arg, size_t begin, size_t end, int thread,
                                                                      int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_qconv2d_layer *L = luthier__qconv_of(j->cv);
    const luthier__qepilogue *e = j->q;
    uint8_t *ib = j->ws + (size_t)thread * j->ws_stride;
    luthier__qdw512_out o;
    size_t u;
    (void)cluster;
    memset(&o, 0, sizeof o);
    o.output = L->qd.output;
    o.elem = luthier__qconv_elem(L->qd.output);
    o.zo16 = _mm512_set1_epi16((short)e->base.zero_point);
    o.zf = L->dw_zf;
    o.lo8 = _mm512_set1_epi8((char)e->base.qmin);
    o.hi8 = _mm512_set1_epi8((char)e->base.qmax);
    o.clamp8 = e->base.qmin > 0 || e->base.qmax < 255;
    o.flo = _mm512_set1_ps(e->base.min);
    o.fhi = _mm512_set1_ps(e->base.max);
    o.fclamp = e->base.clamp;
    for (u = begin; u < end; u++) luthier__qdw512_unit(L, &o, (const uint8_t *)j->in, (unsigned char *)j->out, ib, u);
}
#endif

/* The depthwise run of the int8 datatype: the row kernel's units (AVX-512 VNNI), or output
   pixels for the pixel routines. */
LUTHIER_PRIVATE luthier_status luthier__qconv_dw_run(luthier_context *ctx, luthier__conv_job *job) {
    const luthier_qconv2d_layer *L = luthier__qconv_of(job->cv);
    const luthier_conv2d_desc *d = &L->cv.d;
    luthier__isa isa;
#if LUTHIER__SIMD_X86
    if (luthier__qdw_rows(L, ctx->cpu_features))
        return luthier__parallel(ctx, luthier__qdw512_units(L), d->schedule, d->ratios, d->num_ratios, 0,
                                 luthier__qconv_dw512_range, job);
#endif
    job->qdw = luthier__qdw_select(L, ctx->cpu_features, &isa);
    return luthier__parallel(ctx, L->cv.m, d->schedule, d->ratios, d->num_ratios, 0, luthier__qconv_dw_range, job);
}

LUTHIER_API luthier_status luthier_qconv2d_run(luthier_context *ctx, const luthier_qconv2d_layer *L,
                                               const uint8_t *input, void *output) {
    luthier__qepilogue e;
    if (L) {
        luthier__qepilogue_init(&e, &L->qd);
        e.offset = L->offset;
    }
    return luthier__conv_run(ctx, L ? &L->cv : NULL, input, output, NULL, &e);
}

LUTHIER_API luthier_status luthier_qconv2d(luthier_context *ctx, const luthier_qconv2d_desc *desc,
                                           const uint8_t *input, const int8_t *weights_oihw,
                                           const int32_t *bias, void *output) {
    luthier_qconv2d_layer *L = NULL;
    luthier_status s;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((s = luthier_qconv2d_create(ctx, desc, weights_oihw, bias, &L)) != LUTHIER_STATUS_OK) return s;
    s = luthier_qconv2d_run(ctx, L, input, output);
    luthier_qconv2d_destroy(L);
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_INT8_IMPLEMENTATION */
