/* h16_steps - a zoo network's fp16 plan against its fp32 plan, one line each: the conversion steps
   ("to_f16" / "to_f32"), the steps on fp16 values, the arenas and workspaces, and the output's
   cosine after one run of each on the zoo's input.

     h16_steps NAME...     (built for AArch64 and run under qemu, QEMU_CPU=neoverse-n1: the plan
                            a CPU with fp16 arithmetic makes)
     h16_steps --plan NAME...  the plans only (sizes and steps; no run, no cosine)
     NAME may be an ONNX file (FILE.onnx): its f32 inputs are sin(i) / 2.

   Build: aarch64-linux-gnu-gcc -std=c99 -O2 -I. bench/h16_steps.c -o build/arm64/h16_steps -static
   -lpthread -lm (make build/arm64/h16_steps). */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_zoo.h"
#include "luthier_onnx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int plan_only; /* --plan */

/* the fp16 plan's steps on whole-tensor fp32 copies (luthier__run_h16_wide): how many, the
   largest copies; the element-wise ones among them */
static int wide_n, wide_elt_n;
static size_t wide_max, wide_elt_max;

static void wide_steps(const luthier_plan *p) {
    int k;
    wide_n = wide_elt_n = 0, wide_max = wide_elt_max = 0;
    for (k = 0; k < p->num_steps; k++) {
        const luthier__pstep *st = &p->steps[k];
        const size_t b = st->h16_wide ? st->h16_wide - st->h16_wide_off : 0;
        if (!st->h16_wide) continue;
        wide_n++, wide_max = b > wide_max ? b : wide_max;
        if (luthier__ops[st->d.op].run == luthier__run_unary || luthier__ops[st->d.op].run == luthier__run_binary)
            wide_elt_n++, wide_elt_max = b > wide_elt_max ? b : wide_elt_max;
    }
}

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
    if (luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK &&
        (plan_only || luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK)) {
        memset(pi, 0, sizeof *pi);
        luthier_plan_get_info(p, pi);
        if (prec == LUTHIER_PRECISION_FP16) wide_steps(p);
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

/* g and info from ONNX file path: f32 inputs and outputs, inputs filled with sin(i) / 2 */
static int load_onnx(const char *path, luthier_graph **g, luthier_zoo_info *info, void **bufs, char *err, size_t errn) {
    int k, i;
    memset(info, 0, sizeof *info);
    if (luthier_onnx_load(path, NULL, g, err, errn) != LUTHIER_STATUS_OK) return 1;
    info->num_inputs = luthier_graph_num_inputs(*g), info->num_outputs = luthier_graph_num_outputs(*g);
    if (info->num_inputs > LUTHIER_ZOO_MAX_IO || info->num_outputs > LUTHIER_ZOO_MAX_IO || info->num_outputs < 1) {
        snprintf(err, errn, "%d inputs, %d outputs", info->num_inputs, info->num_outputs);
        return 1;
    }
    for (k = 0; k < info->num_inputs + info->num_outputs; k++) {
        luthier_tensor_info ti;
        size_t n = 1;
        luthier_graph_tensor_info(*g, k < info->num_inputs ? luthier_graph_input_tensor(*g, k)
                                                          : luthier_graph_output_tensor(*g, k - info->num_inputs), &ti);
        for (i = 0; i < ti.rank; i++) n *= (size_t)ti.shape[i];
        if (k >= info->num_inputs) {
            info->output_bytes[k - info->num_inputs] = n * sizeof(float);
            continue;
        }
        info->input_bytes[k] = n * sizeof(float);
        bufs[k] = malloc(n * sizeof(float) + 4);
        for (i = 0; i < (int)n; i++) ((float *)bufs[k])[i] = 0.5f * (float)sin((double)i);
    }
    return 0;
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
    if (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".onnx")) {
        if (load_onnx(name, &g, &info, bufs, err, sizeof err)) {
            fprintf(stderr, "h16_steps: %s: %s\n", name, err);
            goto done;
        }
    } else if (luthier_zoo_build(name, NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK ||
               luthier_zoo_get_info(name, NULL, &info) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "h16_steps: %s: %s\n", name, err);
        goto done;
    }
    for (k = 0; k < info.num_inputs && !bufs[k]; k++) {
        bufs[k] = malloc(info.input_bytes[k]);
        luthier_zoo_input(name, NULL, k, bufs[k], info.input_bytes[k]);
    }
    n = info.output_bytes[0] / sizeof(float);
    y32 = (float *)malloc(info.output_bytes[0] + 4), y16 = (float *)malloc(info.output_bytes[0] + 4);
    if (run_once(ctx, g, LUTHIER_PRECISION_FP32, (const void *const *)bufs, y32, info.output_bytes[0], &c32, &h32, &i32) ||
        run_once(ctx, g, LUTHIER_PRECISION_FP16, (const void *const *)bufs, y16, info.output_bytes[0], &c16, &h16, &i16))
        goto done;
    for (i = 0; i < n && !plan_only; i++) dot += (double)y16[i] * y32[i], a2 += (double)y16[i] * y16[i], b2 += (double)y32[i] * y32[i];
    printf("%s: fp16 plan %d steps, %d on fp16 values, %d conversions; arena %zu bytes, workspace %zu (fp32 plan %zu, %zu, "
           "%d steps); wide steps %d (largest fp32 copies %zu bytes), element-wise %d (%zu); output cosine %.7f\n",
           name, i16.num_steps, h16, c16, i16.arena_bytes, i16.workspace_bytes, i32.arena_bytes, i32.workspace_bytes,
           i32.num_steps, wide_n, wide_max, wide_elt_n, wide_elt_max, plan_only ? 0.0 : dot / sqrt(a2 * b2 + 1e-300));
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
        fprintf(stderr, "usage: h16_steps [--plan] NAME...\n");
        return 2;
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plan")) plan_only = 1;
        else rc |= one(argv[i]);
    }
    return rc;
}
