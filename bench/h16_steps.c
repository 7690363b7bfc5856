/* h16_steps - a zoo network's fp16 plan against its fp32 plan, one line each: the conversion steps
   ("to_f16" / "to_f32"), the steps on fp16 values, the arenas, and the output's cosine after one
   run of each on the zoo's input.

     h16_steps NAME...     (built for AArch64 and run under qemu, QEMU_CPU=neoverse-n1: the plan
                            a CPU with fp16 arithmetic makes)

   Build: aarch64-linux-gnu-gcc -std=c99 -O2 -I. bench/h16_steps.c -o build/arm64/h16_steps -static
   -lpthread -lm (make build/arm64/h16_steps). */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_zoo.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plans g (precision prec), runs it once on ins into out0 (output 0, the others scratch); 0 on
   success, with the conversions, fp16 steps and the info. */
static int run_once(luthier_context *ctx, const luthier_graph *g, luthier_precision prec, const void *const *ins, float *out0,
                    size_t out_bytes, int *cvt, int *h16, luthier_plan_info *pi) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    void *outs[LUTHIER_ZOO_MAX_IO] = {NULL};
    int k, rc = 1;
    memset(&pd, 0, sizeof pd);
    pd.precision = prec;
    outs[0] = out0;
    for (k = 1; k < luthier_graph_num_outputs(g) && k < LUTHIER_ZOO_MAX_IO; k++) outs[k] = malloc(out_bytes * 64 + (1 << 20));
    *cvt = *h16 = 0;
    if (luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK && luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK) {
        memset(pi, 0, sizeof *pi);
        luthier_plan_get_info(p, pi);
        for (k = 0; k < pi->num_steps; k++) {
            luthier_step_info si;
            luthier_plan_step_info(p, k, &si);
            *cvt += si.node < 0 && si.fp16;
            *h16 += si.fp16;
        }
        rc = 0;
    } else {
        fprintf(stderr, "h16_steps: %s\n", luthier_context_error(ctx));
    }
    for (k = 1; k < LUTHIER_ZOO_MAX_IO; k++) free(outs[k]);
    luthier_plan_destroy(p);
    return rc;
}

static int one(const char *name) {
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    luthier_graph *g = NULL;
    luthier_zoo_info info;
    luthier_plan_info i32, i16;
    void *bufs[LUTHIER_ZOO_MAX_IO] = {NULL};
    float *y32 = NULL, *y16 = NULL;
    char err[256];
    int k, rc = 1, c32, h32, c16, h16;
    size_t n, i;
    double dot = 0, a2 = 0, b2 = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    if (luthier_zoo_build(name, NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK ||
        luthier_zoo_get_info(name, NULL, &info) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "h16_steps: %s: %s\n", name, err);
        goto done;
    }
    for (k = 0; k < info.num_inputs; k++) {
        bufs[k] = malloc(info.input_bytes[k]);
        luthier_zoo_input(name, NULL, k, bufs[k], info.input_bytes[k]);
    }
    n = info.output_bytes[0] / sizeof(float);
    y32 = (float *)malloc(info.output_bytes[0] + 4), y16 = (float *)malloc(info.output_bytes[0] + 4);
    if (run_once(ctx, g, LUTHIER_PRECISION_FP32, (const void *const *)bufs, y32, info.output_bytes[0], &c32, &h32, &i32) ||
        run_once(ctx, g, LUTHIER_PRECISION_FP16, (const void *const *)bufs, y16, info.output_bytes[0], &c16, &h16, &i16))
        goto done;
    for (i = 0; i < n; i++) dot += (double)y16[i] * y32[i], a2 += (double)y16[i] * y16[i], b2 += (double)y32[i] * y32[i];
    printf("%s: fp16 plan %d steps, %d on fp16 values, %d conversions; arena %zu bytes (fp32 plan %zu, %d steps); "
           "output cosine %.7f\n",
           name, i16.num_steps, h16, c16, i16.arena_bytes, i32.arena_bytes, i32.num_steps, dot / sqrt(a2 * b2 + 1e-300));
    rc = 0;
done:
    for (k = 0; k < LUTHIER_ZOO_MAX_IO; k++) free(bufs[k]);
    free(y32), free(y16);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    return rc;
}

int main(int argc, char **argv) {
    int i, rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: h16_steps NAME...\n");
        return 2;
    }
    for (i = 1; i < argc; i++) rc |= one(argv[i]);
    return rc;
}
