/* h16_elt_time - an element-wise step of an fp16-activation plan, two ways, alternating in the
   same run: "wide" as luthier__run_h16_wide runs it (the fp16 operands widened into fp32 copies,
   the fp32 operator, the output narrowed: 2 + 4 + 4 + 4 + 2 bytes per element and operand) and
   "elt" as the element-wise steps run now (luthier__op_unary_h16 / luthier__op_binary_h16: fp16
   in, fp16 out, conversions in registers). Minimum of ROUNDS rounds of REPS runs each; one line
   per operator and size: wide ms, elt ms, wide / elt.

     h16_elt_time [THREADS]      (default 1)

   Build: cc -std=c99 -O2 -I. bench/h16_elt_time.c -o build/h16_elt_time -lpthread -lm
   (aarch64-linux-gnu-gcc ... -static for qemu). */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 7

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct elt_case {
    const char *name;
    int binary;
    luthier__unary u;
    float a, b;
    luthier__binary k;
    int bcast; /* binary: b is one row of the last dim (an fp32 constant) */
} elt_case;

/* one run of case c on n elements ([n / 256, 256]) either way */
static void run_one(luthier_context *ctx, const elt_case *c, int wide, size_t n, const uint16_t *x, const uint16_t *y16,
                    const float *row, uint16_t *out, float *w0, float *w1) {
    int64_t s[2], bs[2];
    s[0] = (int64_t)(n / 256), s[1] = 256;
    bs[0] = c->bcast ? 1 : s[0], bs[1] = 256;
    if (!wide) {
        if (c->binary)
            luthier__op_binary_h16(ctx, NULL, c->k, x, 1, s, c->bcast ? (const void *)row : (const void *)y16, !c->bcast, bs,
                                   out, s, 2, LUTHIER_ACTIVATION_NONE, 0, 0);
        else
            luthier__op_unary_h16(ctx, NULL, c->u, c->a, c->b, x, out, n);
        return;
    }
    luthier__op_widen_h16(ctx, NULL, x, w0, n);
    if (c->binary) {
        if (!c->bcast) luthier__op_widen_h16(ctx, NULL, y16, w1, n);
        luthier__op_binary(ctx, NULL, c->k, w0, s, c->bcast ? row : w1, bs, w1, s, 2, LUTHIER_ACTIVATION_NONE,
                           0, 0);
        luthier__op_narrow_h16(ctx, NULL, w1, out, n);
    } else {
        luthier__op_unary(ctx, NULL, c->u, c->a, c->b, w0, w1, n);
        luthier__op_narrow_h16(ctx, NULL, w1, out, n);
    }
}

int main(int argc, char **argv) {
    static const elt_case cases[] = {
        {"relu", 0, LUTHIER__UNARY_RELU, 0, 0, LUTHIER__BINARY_ADD, 0},
        {"clip(0,6)", 0, LUTHIER__UNARY_CLIP, 0, 6, LUTHIER__BINARY_ADD, 0},
        {"hardswish", 0, LUTHIER__UNARY_HARD_SWISH, 0, 0, LUTHIER__BINARY_ADD, 0},
        {"sigmoid", 0, LUTHIER__UNARY_SIGMOID, 0, 0, LUTHIER__BINARY_ADD, 0},
        {"gelu", 0, LUTHIER__UNARY_GELU_ERF, 0, 0, LUTHIER__BINARY_ADD, 0},
        {"add", 1, LUTHIER__UNARY_RELU, 0, 0, LUTHIER__BINARY_ADD, 0},
        {"mul", 1, LUTHIER__UNARY_RELU, 0, 0, LUTHIER__BINARY_MUL, 0},
        {"add fp32 row", 1, LUTHIER__UNARY_RELU, 0, 0, LUTHIER__BINARY_ADD, 1}};
    static const size_t sizes[] = {(size_t)1 << 16, (size_t)1 << 21};
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    int ci, si, r, w;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = argc > 1 ? atoi(argv[1]) : 1;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    printf("threads %d, features 0x%x\n", cd.num_threads, ctx->cpu_features);
    for (si = 0; si < 2; si++) {
        const size_t n = sizes[si], reps = ((size_t)1 << 24) / n;
        uint16_t *x = (uint16_t *)malloc(n * 2), *y = (uint16_t *)malloc(n * 2), *out = (uint16_t *)malloc(n * 2);
        float *w0 = (float *)malloc(n * 4), *w1 = (float *)malloc(n * 4), row[256];
        size_t i;
        for (i = 0; i < n; i++) x[i] = luthier__f32_to_f16((float)((int)(i * 7919 % 2001) - 1000) / 250.0f);
        for (i = 0; i < n; i++) y[i] = luthier__f32_to_f16((float)((int)(i * 104729 % 2001) - 1000) / 500.0f);
        for (i = 0; i < 256; i++) row[i] = (float)i / 256.0f;
        for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) {
            double best[2] = {1e30, 1e30};
            for (r = 0; r < ROUNDS; r++)
                for (w = 0; w < 2; w++) {
                    const double t0 = now_ms();
                    size_t k;
                    double ms;
                    for (k = 0; k < reps; k++) run_one(ctx, &cases[ci], w, n, x, y, row, out, w0, w1);
                    ms = (now_ms() - t0) / (double)reps;
                    if (ms < best[w]) best[w] = ms;
                }
            printf("%-13s %8zu elements: wide %.4f ms, elt %.4f ms, wide / elt %.2f\n", cases[ci].name, n, best[1], best[0],
                   best[1] / best[0]);
        }
        free(x), free(y), free(out), free(w0), free(w1);
    }
    luthier_context_destroy(ctx);
    return 0;
}
