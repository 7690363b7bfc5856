/* Includes luthier.h without LUTHIER_IMPLEMENTATION: the code comes from luthier::impl. */
#include "luthier.h"
#include <stdio.h>

int main(void) {
    const float a[2 * 3] = {1, 2, 3, 4, 5, 6}, b[3 * 2] = {1, 0, 0, 1, 1, 1};
    float c[2 * 2];
    luthier_context *ctx;
    luthier_context_desc cd = {0};
    luthier_sgemm_desc g = {0};
    int ok;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    g.m = 2, g.n = 2, g.k = 3;
    ok = luthier_sgemm(ctx, &g, a, b, c) == LUTHIER_STATUS_OK && c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11;
    printf("uses_impl: %s (%d kernels)\n", ok ? "ok" : "WRONG", luthier_kernel_count());
    luthier_context_destroy(ctx);
    return !ok;
}
