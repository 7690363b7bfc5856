/* ssdlite_check: runs an ONNX model whose outputs may have run-time lengths and writes each
   output's valid entries (raw f32 or i64, row-major) to PREFIX<i>.bin, printing one line per
   output (name, dtype, length axis, length, capacity). tests/ssdlite_check.py drives it.

       build/ssdlite_check MODEL.onnx THREADS INPUT.raw PREFIX

   INPUT.raw: graph input 0 as raw f32 (its whole shape). Exit status 2 when loading, planning or
   running fails (the message on stderr). */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t count(const luthier_tensor_info *ti) {
    size_t n = 1;
    int k;
    for (k = 0; k < ti->rank; k++) n *= (size_t)ti->shape[k];
    return n;
}

/* Output i's valid entries (rows of the length axis past the count left out) to PREFIX<i>.bin. */
static int dump(const luthier_plan *p, const luthier_tensor_info *ti, int i, const char *buf, const char *prefix) {
    const size_t es = ti->dtype == LUTHIER_DTYPE_I64 ? 8 : 4;
    size_t outer = 1, inner = es, cap = 1, keep, r;
    int axis, k;
    int64_t len;
    char fn[512];
    FILE *f;
    luthier_plan_output_length(p, i, &axis, &len);
    if (axis < 0) axis = 0, len = ti->shape[0];
    for (k = 0; k < axis; k++) outer *= (size_t)ti->shape[k];
    for (k = axis + 1; k < ti->rank; k++) inner *= (size_t)ti->shape[k];
    cap = (size_t)ti->shape[axis], keep = (size_t)len;
    printf("output %d %s %s axis %d length %lld capacity %zu\n", i, ti->name, ti->dtype == LUTHIER_DTYPE_I64 ? "i64" : "f32", axis,
           (long long)len, cap);
    snprintf(fn, sizeof fn, "%s%d.bin", prefix, i);
    if (!(f = fopen(fn, "wb"))) return 0;
    for (r = 0; r < outer; r++) fwrite(buf + r * cap * inner, 1, keep * inner, f);
    fclose(f);
    return 1;
}

int main(int argc, char **argv) {
    static char err[1 << 16];
    luthier_graph *g = NULL;
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_plan *p = NULL;
    luthier_tensor_info ti;
    void **outs = NULL, *in = NULL;
    const void *ins[1];
    struct timespec t0, t1;
    int i, rc = 2, no;
    FILE *f;
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL.onnx THREADS INPUT.raw PREFIX\n", argv[0]);
        return 2;
    }
    memset(&cd, 0, sizeof cd);
    cd.num_threads = atoi(argv[2]);
    if (luthier_onnx_load(argv[1], NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "error: %s\n", err);
        return 2;
    }
    no = luthier_graph_num_outputs(g);
    outs = (void **)calloc((size_t)(no > 0 ? no : 1), sizeof *outs);
    if (!outs || luthier_graph_num_inputs(g) != 1 || luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK ||
        luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "error: plan: %s\n", ctx ? luthier_context_error(ctx) : "context, inputs or outputs");
        goto done;
    }
    luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, 0), &ti);
    if (!(in = malloc(count(&ti) * 4)) || !(f = fopen(argv[3], "rb"))) goto done;
    if (fread(in, 4, count(&ti), f) != count(&ti)) {
        fclose(f);
        fprintf(stderr, "error: %s is shorter than input '%s'\n", argv[3], ti.name);
        goto done;
    }
    fclose(f);
    for (i = 0; i < no; i++) {
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        if (!(outs[i] = malloc(count(&ti) * 8))) goto done;
    }
    ins[0] = in;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (luthier_plan_run(ctx, p, ins, outs) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "error: run: %s\n", luthier_context_error(ctx));
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("run_ms %.1f\n", (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6);
    for (i = 0, rc = 0; i < no && !rc; i++) {
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        if (!dump(p, &ti, i, (const char *)outs[i], argv[4])) rc = 2;
    }
done:
    for (i = 0; outs && i < no; i++) free(outs[i]);
    free(outs);
    free(in);
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    luthier_graph_destroy(g);
    return rc;
}
