/* Times luthier's layout transposes (luthier__op_transpose: NCHW -> NHWC and back, what plans
   run at their edges) on a few activation shapes, 1 thread, least of 40 runs. Build it against
   any version's headers to compare two versions in turn:
       cc -O2 -std=c99 -I. bench/transpose_time.c -o build/transpose_time -lpthread -lm
       taskset -c 0 build/transpose_time LABEL */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include <time.h>

static double transpose_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    static const int64_t shapes[5][4] = {{1, 64, 112, 112}, {1, 256, 56, 56}, {1, 3, 224, 224}, {1, 5, 224, 224}, {1, 12, 112, 112}};
    static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    luthier_context *ctx;
    luthier_context_desc cd;
    int s, r;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    for (s = 0; s < 5; s++) {
        const int64_t *sh = shapes[s], back[4] = {sh[0], sh[2], sh[3], sh[1]};
        const size_t n = (size_t)(sh[0] * sh[1] * sh[2] * sh[3]);
        float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
        double b1 = 1e9, b2 = 1e9, t;
        size_t i;
        if (!x || !y) return 1;
        for (i = 0; i < n; i++) x[i] = (float)i;
        for (r = 0; r < 40; r++) {
            t = transpose_now();
            luthier__op_transpose(ctx, NULL, x, y, 4, sh, to_nhwc);
            if ((t = transpose_now() - t) < b1) b1 = t;
            t = transpose_now();
            luthier__op_transpose(ctx, NULL, y, x, 4, back, to_nchw);
            if ((t = transpose_now() - t) < b2) b2 = t;
        }
        printf("%s [%lld,%lld,%lld,%lld] to NHWC %.3f ms, back %.3f ms\n", argc > 1 ? argv[1] : "", (long long)sh[0],
               (long long)sh[1], (long long)sh[2], (long long)sh[3], b1 * 1e3, b2 * 1e3);
        free(x);
        free(y);
    }
    luthier_context_destroy(ctx);
    return 0;
}
