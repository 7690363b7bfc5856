/* gemm_basic.c - luthier as a kernel library: one fully connected layer, y = relu(x W + b).
   Build: cc -std=c99 -O2 -I. examples/gemm_basic.c -o gemm_basic -lpthread -lm */
#define LUTHIER_IMPLEMENTATION /* in exactly one .c file of your program */
#include "luthier.h"
#include <math.h>
#include <stdio.h>

enum { M = 4, K = 3, N = 2 }; /* 4 inputs of 3 features -> 2 outputs each */

int main(void) {
    const float x[M * K] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; /* row-major M x K */
    const float w[K * N] = {0.5f, -1, 0.25f, 0, -0.5f, 1};          /* row-major K x N */
    const float b[N] = {0.1f, -0.2f};
    float y[M * N];
    luthier_context *ctx;
    luthier_context_desc cd = {0}; /* all zero = defaults: every CPU, the best kernel */
    luthier_sgemm_desc g = {0};    /* lda/ldb/ldc 0 = tightly packed rows */
    luthier_status s;
    int i, j, k, wrong = 0;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    g.m = M, g.n = N, g.k = K, g.bias = b, g.activation = LUTHIER_ACTIVATION_RELU;
    s = luthier_sgemm(ctx, &g, x, w, y);
    if (s != LUTHIER_STATUS_OK) printf("%s: %s\n", luthier_status_string(s), luthier_context_error(ctx));
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) { /* print y and check it against the textbook loop */
            float r = b[j];
            for (k = 0; k < K; k++) r += x[i * K + k] * w[k * N + j];
            r = r > 0 ? r : 0;
            wrong += fabsf(y[i * N + j] - r) > 1e-5f;
            printf("%7.3f%s", (double)y[i * N + j], j == N - 1 ? "\n" : " ");
        }
    luthier_context_destroy(ctx);
    return s != LUTHIER_STATUS_OK || wrong;
}
