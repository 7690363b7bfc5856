/* gemm_demo.c - a first tour of luthier: one GEMM from a real network, every kernel.

   A 3x3 convolution is a matrix product once the input is unrolled ("im2col"): for the second
   stage of ResNet-18 (56x56 pixels, 64 -> 64 channels) it is C = A * B with
     A: M x K = 3136 pixels x (64 channels * 3 * 3)   the unrolled input
     B: K x N = 576 x 64                              the weights (constant: pack them once)
     C: M x N = 3136 x 64                             the output
   luthier computes C in small tiles with a "microkernel"; several exist (different ISAs and tile
   shapes). This program runs each kernel the CPU supports, checks its result against a plain
   triple loop, and times it.

   Build and run: make examples && build/example_gemm_demo
                  (or: cc -std=c99 -O2 -I. examples/gemm_demo.c -lpthread -lm)
   Exit status: 0 if every kernel computed the right result, 1 otherwise.
*/
#define LUTHIER_IMPLEMENTATION /* exactly one file of a program compiles the library */
#include "luthier.h"           /* include it first: it sets up the POSIX declarations */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { M = 3136, N = 64, K = 576 };

static double now_seconds(void) { /* a clock that never jumps: right for timing */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fill(float *x, size_t n, unsigned seed) { /* same "random" data on every run */
    size_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;           /* a classic linear congruential step */
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f; /* in [-0.5, 0.5) */
    }
}

int main(void) {
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c = malloc(sizeof(float) * M * N), *ref = malloc(sizeof(float) * M * N);
    const unsigned f = luthier_cpu_features();
    const luthier_cache_info caches = luthier_cache_sizes();
    const double flops = 2.0 * M * N * K; /* one multiply and one add per (i, j, k) */
    luthier_context *ctx;
    luthier_context_desc cd = {0}; /* all zero = defaults */
    double best_gflops = 0.0;
    const char *best_name = "none";
    int i, j, k, failures = 0;

    if (!a || !b || !c || !ref) return 1;
    printf("CPU features:%s%s%s%s\n", f & LUTHIER_CPU_AVX2_FMA ? " AVX2+FMA" : "",
           f & LUTHIER_CPU_AVX512F ? " AVX-512F" : "", f & LUTHIER_CPU_NEON ? " NEON" : "",
           f ? "" : " none beyond the baseline");
    printf("caches: L1d %zu KiB, L2 %zu KiB, L3 %zu KiB\n", caches.l1d >> 10, caches.l2 >> 10,
           caches.l3 >> 10);
    printf("GEMM: ResNet-18 conv2 as im2col, M=%d N=%d K=%d, B pre-packed\n\n", M, N, K);

    fill(a, (size_t)M * K, 1);
    fill(b, (size_t)K * N, 2);
    /* The reference: the textbook loop, summed in double so it is the most accurate of all. */
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0.0;
            for (k = 0; k < K; k++) s += (double)a[i * K + k] * b[k * N + j];
            ref[i * N + j] = (float)s;
        }

    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    {
        /* The CPU clusters the context found, and its threads (one per CPU). */
        luthier_topology topo;
        char text[1024];
        luthier_context_topology(ctx, &topo);
        luthier_topology_format(&topo, text, sizeof text);
        printf("clusters (%s), %d threads:\n%s\n", topo.source, luthier_context_num_threads(ctx), text);
    }
    printf("%-44s %-11s %-9s %9s %8s\n", "kernel", "kind", "MR x NR", "ms", "GF/s");
    for (i = 0; i < luthier_kernel_count(); i++) {
        luthier_kernel_info ki;
        luthier_sgemm_desc g = {0}; /* lda/ldb/ldc 0 = rows packed tightly */
        luthier_packed_b *pb = NULL;
        double err = 0.0, cmax = 0.0, best = 1e30, spent = 0.0;
        int reps = 0;
        size_t e;

        luthier_kernel_get(i, &ki);
        if (!ki.available) continue; /* e.g. an AVX-512 kernel on an AVX2-only CPU */
        g.m = M;
        g.n = N;
        g.k = K;
        g.kernel = ki.name; /* ask for this kernel instead of the context's default */
        /* Weights are constant in inference: rearrange B once into the kernel's layout. */
        if (luthier_sgemm_pack_b(ctx, &g, b, &pb) != LUTHIER_STATUS_OK ||
            luthier_sgemm_packed(ctx, &g, a, pb, c) != LUTHIER_STATUS_OK) {
            printf("%-44s error: %s\n", ki.name, luthier_context_error(ctx));
            luthier_packed_b_destroy(pb);
            failures++;
            continue;
        }
        /* Check: the largest difference, relative to the largest value of C. Only the order of
           the additions differs from the reference, so it must be tiny (~1e-6). */
        for (e = 0; e < (size_t)M * N; e++) {
            const double d = fabs((double)c[e] - ref[e]);
            if (!(d <= err)) err = d; /* also catches NaN */
            if (fabs((double)ref[e]) > cmax) cmax = fabs((double)ref[e]);
        }
        err /= cmax;
        /* Time it: repeat for ~0.2 s (at least 3 runs) and keep the fastest run. */
        while (spent < 0.2 || reps < 3) {
            const double t0 = now_seconds();
            double t;
            luthier_sgemm_packed(ctx, &g, a, pb, c);
            t = now_seconds() - t0;
            if (t < best) best = t;
            spent += t;
            reps++;
        }
        luthier_packed_b_destroy(pb);
        if (!(err <= 1e-4)) {
            printf("%-44s WRONG RESULT: relative error %.2g\n", ki.name, err);
            failures++;
            continue;
        }
        printf("%-44s %-11s %2d x %-4d %9.3f %8.1f\n", ki.name,
               ki.kind == LUTHIER_KERNEL_HYBRID ? "hybrid" : "interleaved", ki.mr, ki.nr,
               best * 1e3, flops / best * 1e-9);
        if (flops / best * 1e-9 > best_gflops) {
            best_gflops = flops / best * 1e-9;
            best_name = ki.name;
        }
    }
    printf("\nfastest: %s (%.1f GF/s); the default for this CPU is %s\n", best_name, best_gflops,
           luthier_context_kernel(ctx));
    if (failures) printf("%d kernel(s) FAILED\n", failures);

    luthier_context_destroy(ctx);
    free(a);
    free(b);
    free(c);
    free(ref);
    return failures ? 1 : 0;
}
