/* onnx_run - load an ONNX model with luthier_onnx.h, plan it, run it once, print the top 5.

   Build (from the repository root):
       cc -std=c99 -O2 -I. examples/onnx_run.c -o build/onnx_run -lpthread -lm
   Usage:
       build/onnx_run MODEL.onnx [INPUT.raw|INPUT.pb|-] [RECORDS]
         INPUT.raw  raw little-endian float32 values for the first graph input (its full size)
         INPUT.pb   a serialized TensorProto (as in ONNX test data / tests/data/onnx/NAME/input_0.pb)
         -          or absent: a generated input (uniform [-1, 1); token ids 0..99 for int64 inputs)
         RECORDS    a luthier_tune records file (luthier_plan_desc.records)
   Other inputs (rare) are generated. Symbolic dimensions are 1. Example:
       build/onnx_run tests/data/onnx/resnet18_small.onnx tests/data/onnx/resnet18_small/input_0.pb */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t numel(const luthier_tensor_info *t) {
    size_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++) n *= (size_t)t->shape[i];
    return n;
}

int main(int argc, char **argv) {
    luthier_graph *g = NULL;
    luthier_context *ctx = NULL;
    luthier_plan *p = NULL;
    luthier_context_desc cd;
    luthier_plan_desc pd;
    luthier_plan_info info;
    char err[512];
    void *ins[64];
    void *outs[64];
    const void *cins[64];
    int i, nin, nout, rc = 1;
    uint64_t seed = 7;
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.onnx [INPUT.raw|INPUT.pb|-] [RECORDS]\n", argv[0]);
        return 2;
    }
    if (luthier_onnx_load(argv[1], NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    nin = luthier_graph_num_inputs(g);
    nout = luthier_graph_num_outputs(g);
    if (nin > 64 || nout > 64) {
        fprintf(stderr, "too many inputs or outputs\n");
        luthier_graph_destroy(g);
        return 1;
    }
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    for (i = 0; i < nin; i++) {
        luthier_tensor_info ti;
        size_t n, e, esz;
        luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
        n = numel(&ti);
        esz = ti.dtype == LUTHIER_DTYPE_F32 ? sizeof(float) : sizeof(int64_t);
        if (!(ins[i] = malloc(n * esz))) goto done;
        printf("input %d '%s' %s [", i, ti.name, ti.dtype == LUTHIER_DTYPE_F32 ? "f32" : "i64");
        for (e = 0; e < (size_t)ti.rank; e++) printf("%s%lld", e ? "," : "", (long long)ti.shape[e]);
        printf("]\n");
        if (i == 0 && argc > 2 && strcmp(argv[2], "-") != 0) {
            size_t len = strlen(argv[2]);
            if (len > 3 && strcmp(argv[2] + len - 3, ".pb") == 0) {
                luthier_onnx_tensor t;
                if (luthier_onnx_tensor_load(argv[2], &t, err, sizeof err) != LUTHIER_STATUS_OK) {
                    fprintf(stderr, "%s\n", err);
                    goto done;
                }
                if (t.numel != n || t.dtype != ti.dtype) {
                    fprintf(stderr, "%s: %zu values of another type or count, the input takes %zu\n", argv[2], t.numel, n);
                    luthier_onnx_tensor_free(&t);
                    goto done;
                }
                memcpy(ins[i], t.data, n * esz);
                luthier_onnx_tensor_free(&t);
            } else {
                FILE *f = fopen(argv[2], "rb");
                if (!f || fread(ins[i], esz, n, f) != n) {
                    fprintf(stderr, "%s: cannot read %zu values\n", argv[2], n);
                    if (f) fclose(f);
                    goto done;
                }
                fclose(f);
            }
            continue;
        }
        for (e = 0; e < n; e++) { /* splitmix64 */
            uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            if (ti.dtype == LUTHIER_DTYPE_F32) ((float *)ins[i])[e] = (float)((double)(z >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
            else ((int64_t *)ins[i])[e] = (int64_t)(z % 100);
        }
    }
    memset(&cd, 0, sizeof cd);
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "cannot create a context\n");
        goto done;
    }
    memset(&pd, 0, sizeof pd);
    if (argc > 3) pd.records = argv[3];
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "plan: %s\n", luthier_context_error(ctx));
        goto done;
    }
    luthier_plan_get_info(p, &info);
    printf("%d nodes, %d steps, %.1f MFLOP, weights %.1f KiB, arena %.1f KiB\n", luthier_graph_num_nodes(g), info.num_steps,
           info.flops / 1e6, (double)info.weights_bytes / 1024, (double)info.arena_bytes / 1024);
    for (i = 0; i < nout; i++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        if (!(outs[i] = malloc(numel(&ti) * sizeof(float)))) goto done;
    }
    for (i = 0; i < nin; i++) cins[i] = ins[i];
    if (luthier_plan_run(ctx, p, cins, outs) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "run: %s\n", luthier_context_error(ctx));
        goto done;
    }
    for (i = 0; i < nout; i++) {
        luthier_tensor_info ti;
        const float *y = (const float *)outs[i];
        size_t n, e;
        int top[5], k, j, ntop;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        n = numel(&ti);
        ntop = n < 5 ? (int)n : 5;
        for (k = 0; k < ntop; k++) { /* selection of the k-th largest */
            int best = -1;
            for (e = 0; e < n; e++) {
                int used = 0;
                for (j = 0; j < k; j++) used |= top[j] == (int)e;
                if (!used && (best < 0 || y[e] > y[best])) best = (int)e;
            }
            top[k] = best;
        }
        printf("output %d '%s' (%zu values), top %d:\n", i, ti.name, n, ntop);
        for (k = 0; k < ntop; k++) printf("  #%d  index %d  %.6g\n", k + 1, top[k], (double)y[top[k]]);
    }
    rc = 0;
done:
    for (i = 0; i < 64; i++) {
        free(ins[i]);
        free(outs[i]);
    }
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    luthier_graph_destroy(g);
    return rc;
}
