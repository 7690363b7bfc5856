/* onnx_check: loads an ONNX model with luthier_onnx.h, plans it, runs it on reference inputs and
   compares with reference outputs (serialized TensorProtos, e.g. written by
   tests/onnx_torchvision.py from PyTorch). Run on demand: `make onnx-torchvision`.

       build/onnx_check MODEL.onnx [--loads N] [--tol T] input_0.pb ... -- output_0.pb ...
       build/onnx_check MODEL.onnx --load-only [--loads N]

   Inputs and outputs are matched to the graph's by name (by position when no name matches).
   The model is loaded N times (default 3; the median load time is reported), then planned
   with default settings and run once. One line is printed:

       load_ms=<median> load_min_ms=<min> plan_ms=<t> run_ms=<t> max_abs=<e> max_ref=<m> rel=<e/m> nodes=<n>

   --load-only: only the loads (load_ms=... load_min_ms=...), e.g. to read the peak memory of a
   load with /usr/bin/time.

   Exit status: 0 when rel <= T (default 1e-4), 1 on a mismatch, 2 when loading, planning or
   running failed (the message is printed on stderr, prefixed "error:"). */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_MAX_IO 16

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int fail(const char *what, const char *msg) {
    fprintf(stderr, "error: %s: %s\n", what, msg);
    return 2;
}

/* the reference tensor for graph tensor ti: by name, else the k-th one */
static const luthier_onnx_tensor *match(const luthier_onnx_tensor *arr, int n, const luthier_tensor_info *ti, int k) {
    int i;
    for (i = 0; i < n; i++)
        if (arr[i].name && strcmp(arr[i].name, ti->name) == 0) return &arr[i];
    return k < n ? &arr[k] : NULL;
}

static size_t numel(const luthier_tensor_info *ti) {
    size_t n = 1;
    int d;
    for (d = 0; d < ti->rank; d++) n *= (size_t)ti->shape[d];
    return n;
}

int main(int argc, char **argv) {
    const char *model = NULL;
    luthier_onnx_tensor ins[CHECK_MAX_IO], outs[CHECK_MAX_IO];
    int nin = 0, nout = 0, loads = 3, after_sep = 0, load_only = 0, i, rc = 0;
    double tol = 1e-4, load_ms[64], t0, plan_ms = 0, run_ms = 0, max_abs = 0, max_ref = 0, rel;
    char err[1024];
    luthier_graph *g = NULL;
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    const void *in_ptrs[CHECK_MAX_IO];
    void *out_ptrs[CHECK_MAX_IO];

    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--loads") && i + 1 < argc) {
            loads = atoi(argv[++i]);
            if (loads < 1) loads = 1;
            if (loads > 64) loads = 64;
        } else if (!strcmp(argv[i], "--tol") && i + 1 < argc) {
            tol = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--load-only")) {
            load_only = 1;
        } else if (!strcmp(argv[i], "--")) {
            after_sep = 1;
        } else if (!model) {
            model = argv[i];
        } else {
            luthier_onnx_tensor *t = after_sep ? &outs[nout] : &ins[nin];
            if ((after_sep ? nout : nin) >= CHECK_MAX_IO) return fail(argv[i], "too many tensors");
            if (luthier_onnx_tensor_load(argv[i], t, err, sizeof err) != LUTHIER_STATUS_OK) return fail(argv[i], err);
            if (after_sep) nout++;
            else nin++;
        }
    }
    if (!model || (!nout && !load_only)) {
        fprintf(stderr, "usage: %s MODEL.onnx [--loads N] [--tol T] input.pb ... -- output.pb ...\n", argv[0]);
        return 2;
    }

    for (i = 0; i < loads; i++) {
        t0 = now_ms();
        if (luthier_onnx_load(model, NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK) return fail("load", err);
        load_ms[i] = now_ms() - t0;
        if (i + 1 < loads) luthier_graph_destroy(g);
    }
    qsort(load_ms, (size_t)loads, sizeof load_ms[0], cmp_double);
    if (load_only) {
        printf("load_ms=%.1f load_min_ms=%.1f nodes=%d\n", load_ms[(loads - 1) / 2], load_ms[0], luthier_graph_num_nodes(g));
        luthier_graph_destroy(g);
        for (i = 0; i < nin; i++) luthier_onnx_tensor_free(&ins[i]);
        return 0;
    }

    memset(&cd, 0, sizeof cd);
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return fail("context", "cannot create");
    memset(&pd, 0, sizeof pd);
    t0 = now_ms();
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        rc = fail("plan", luthier_context_error(ctx));
        goto done;
    }
    plan_ms = now_ms() - t0;

    if (luthier_graph_num_inputs(g) > CHECK_MAX_IO || luthier_graph_num_outputs(g) > CHECK_MAX_IO) {
        rc = fail("graph", "too many inputs/outputs");
        goto done;
    }
    for (i = 0; i < luthier_graph_num_inputs(g); i++) {
        luthier_tensor_info ti;
        const luthier_onnx_tensor *t;
        luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
        t = match(ins, nin, &ti, i);
        if (!t || (t->numel ? t->numel : 1) != numel(&ti) || t->dtype != ti.dtype) {
            snprintf(err, sizeof err, "no reference input of the right size and type for graph input '%s'", ti.name);
            rc = fail("inputs", err);
            goto done;
        }
        in_ptrs[i] = t->data;
    }
    for (i = 0; i < luthier_graph_num_outputs(g); i++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        out_ptrs[i] = calloc(numel(&ti) ? numel(&ti) : 1, 8);
    }
    t0 = now_ms();
    if (luthier_plan_run(ctx, p, in_ptrs, out_ptrs) != LUTHIER_STATUS_OK) {
        rc = fail("run", luthier_context_error(ctx));
    } else {
        run_ms = now_ms() - t0;
        for (i = 0; i < luthier_graph_num_outputs(g) && !rc; i++) {
            luthier_tensor_info ti;
            const luthier_onnx_tensor *t;
            size_t e, n;
            luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
            t = match(outs, nout, &ti, i);
            n = numel(&ti);
            if (!t) continue; /* no reference for this output */
            if ((t->numel ? t->numel : 1) != n || t->dtype != LUTHIER_DTYPE_F32 || ti.dtype != LUTHIER_DTYPE_F32) {
                snprintf(err, sizeof err, "output '%s': %zu elements, the reference has %zu (or not f32)", ti.name, n, t->numel);
                rc = fail("outputs", err);
                break;
            }
            for (e = 0; e < n; e++) {
                double want = ((const float *)t->data)[e], got = ((const float *)out_ptrs[i])[e];
                double d = fabs(got - want);
                if (!(d <= max_abs)) max_abs = d; /* NaN propagates */
                if (fabs(want) > max_ref) max_ref = fabs(want);
            }
        }
    }
    for (i = 0; i < luthier_graph_num_outputs(g); i++) free(out_ptrs[i]);
    if (!rc) {
        rel = max_abs / (max_ref > 0 ? max_ref : 1);
        printf("load_ms=%.1f load_min_ms=%.1f plan_ms=%.1f run_ms=%.1f max_abs=%.3g max_ref=%.3g rel=%.3g nodes=%d\n",
               load_ms[(loads - 1) / 2], load_ms[0], plan_ms, run_ms, max_abs, max_ref, rel, luthier_graph_num_nodes(g));
        if (!(rel <= tol)) rc = 1;
    }
done:
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    luthier_graph_destroy(g);
    for (i = 0; i < nin; i++) luthier_onnx_tensor_free(&ins[i]);
    for (i = 0; i < nout; i++) luthier_onnx_tensor_free(&outs[i]);
    return rc;
}
