/* onnx_run - load an ONNX model, tune it for this machine, save the records, run it.

   Build (from the repository root):
       make examples        (or: cc -std=c99 -O2 -I. examples/onnx_run.c -o onnx_run -lpthread -lm)
   Usage:
       build/example_onnx_run MODEL.onnx [options]
         --input FILE     the first graph input: raw little-endian float32 values (its full size)
                          or a serialized TensorProto (.pb, as in ONNX test data); default: a
                          generated input (uniform [-1, 1); token ids 0..99 for int64 inputs)
         --tune SECONDS   tune the convolution / dense layers for this machine within SECONDS
                          and write the records (see --records) before planning
         --records FILE   where --tune writes the records (default: MODEL.onnx.records); without
                          --tune, records to read (written earlier on this machine)
         --expect FILE    the expected first output (.pb or raw float32): report the error and
                          exit 1 if it exceeds 1e-4 of max |expected|
   Other inputs (rare) are generated. Symbolic dimensions are 1. Example:
       build/example_onnx_run tests/data/onnx/resnet18_small.onnx --tune 10 \
           --input tests/data/onnx/resnet18_small/input_0.pb --expect tests/data/onnx/resnet18_small/output_0.pb
   Prints the graph's inputs, the plan (steps, FLOPs, memory), the latency and the top 5 of
   every output. */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t numel(const luthier_tensor_info *t) {
    size_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++) n *= (size_t)t->shape[i];
    return n;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads n values of esz bytes from a .pb TensorProto or a raw file into dst; 0 on success. */
static int read_values(const char *path, void *dst, size_t n, size_t esz, luthier_dtype dtype) {
    size_t len = strlen(path);
    char err[512];
    if (len > 3 && strcmp(path + len - 3, ".pb") == 0) {
        luthier_onnx_tensor t;
        if (luthier_onnx_tensor_load(path, &t, err, sizeof err) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (t.numel != n || t.dtype != dtype) {
            fprintf(stderr, "%s: %zu values of another type or count, expected %zu\n", path, t.numel, n);
            luthier_onnx_tensor_free(&t);
            return 1;
        }
        memcpy(dst, t.data, n * esz);
        luthier_onnx_tensor_free(&t);
    } else {
        FILE *f = fopen(path, "rb");
        if (!f || fread(dst, esz, n, f) != n) {
            fprintf(stderr, "%s: cannot read %zu values\n", path, n);
            if (f) fclose(f);
            return 1;
        }
        fclose(f);
    }
    return 0;
}

/* The command line. */
typedef struct options {
    const char *model, *input, *records, *expect;
    double tune_seconds;
    char records_buf[1024]; /* MODEL.onnx.records, the default of --records with --tune */
} options;

/* Parses the command line into o. Returns 0, or 2 after printing the usage. */
static int parse_args(int argc, char **argv, options *o) {
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--input") == 0 && i + 1 < argc) o->input = argv[++i];
        else if (strcmp(a, "--records") == 0 && i + 1 < argc) o->records = argv[++i];
        else if (strcmp(a, "--expect") == 0 && i + 1 < argc) o->expect = argv[++i];
        else if (strcmp(a, "--tune") == 0 && i + 1 < argc && (o->tune_seconds = atof(argv[++i])) > 0) continue;
        else if (a[0] != '-' && !o->model) o->model = a;
        else {
            o->model = NULL;
            break;
        }
    }
    if (!o->model) {
        fprintf(stderr, "usage: %s MODEL.onnx [--input FILE] [--tune SECONDS] [--records FILE] [--expect FILE]\n",
                argv[0]);
        return 2;
    }
    if (o->tune_seconds > 0 && !o->records) {
        snprintf(o->records_buf, sizeof o->records_buf, "%s.records", o->model);
        o->records = o->records_buf;
    }
    return 0;
}

/* n generated values: uniform [-1, 1) for float32, token ids 0..99 for int64 and int32, all
   true for bool (an attention mask that masks nothing) (splitmix64). */
static void generate(void *dst, size_t n, luthier_dtype dtype, uint64_t *seed) {
    size_t e;
    for (e = 0; e < n; e++) {
        uint64_t z = (*seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        if (dtype == LUTHIER_DTYPE_F32)
            ((float *)dst)[e] = (float)((double)(z >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
        else if (dtype == LUTHIER_DTYPE_I32) ((int32_t *)dst)[e] = (int32_t)(z % 100);
        else if (dtype == LUTHIER_DTYPE_BOOL) ((uint8_t *)dst)[e] = 1;
        else ((int64_t *)dst)[e] = (int64_t)(z % 100);
    }
}

/* The graph's inputs into ins[] (allocated): the first from the file `input` when given, the
   others generated. Prints one line per input. Returns 0, or 1 on a failure. */
static int make_inputs(const luthier_graph *g, int nin, const char *input, void **ins) {
    uint64_t seed = 7;
    int i;
    for (i = 0; i < nin; i++) {
        luthier_tensor_info ti;
        size_t n, e, esz;
        luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
        n = numel(&ti);
        esz = ti.dtype == LUTHIER_DTYPE_I64 ? 8 : ti.dtype == LUTHIER_DTYPE_BOOL ? 1 : 4;
        if (!(ins[i] = malloc(n * esz))) return 1;
        printf("input %d '%s' %s [", i, ti.name, ti.dtype == LUTHIER_DTYPE_F32 ? "f32" : ti.dtype == LUTHIER_DTYPE_I64 ? "i64"
                                                 : ti.dtype == LUTHIER_DTYPE_I32 ? "i32" : "bool");
        for (e = 0; e < (size_t)ti.rank; e++) printf("%s%lld", e ? "," : "", (long long)ti.shape[e]);
        printf("]%s\n", i == 0 && input ? " from the input file" : " generated");
        if (i == 0 && input) {
            if (read_values(input, ins[i], n, esz, ti.dtype)) return 1;
            continue;
        }
        generate(ins[i], n, ti.dtype, &seed);
    }
    return 0;
}

/* Tunes the convolution / dense layers of g for this machine within `seconds` (one line per
   task on stderr while it runs) and writes the records. Returns 0, or 1 on a failure. */
static int tune(luthier_context *ctx, const luthier_graph *g, double seconds, const char *records) {
    luthier_tune_desc td;
    luthier_tune_result tr;
    memset(&td, 0, sizeof td);
    td.budget_seconds = seconds;
    td.progress = 1;
    if (luthier_tune(ctx, g, &td, records, &tr) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "tune: %s\n", luthier_context_error(ctx));
        return 1;
    }
    printf("tuned %d conv/dense layers (%d tasks): %d measurements of %d candidates in %.1f s; "
           "sum of layer times %.2f ms -> %.2f ms; records written to %s\n",
           tr.ops, tr.tasks, tr.measurements, tr.candidates, tr.seconds, tr.default_ms, tr.tuned_ms, records);
    return 0;
}

/* A buffer for each of the graph's outputs (float32, or int64 for integer results). Returns 0,
   or 1 when out of memory. */
static int alloc_outputs(const luthier_graph *g, int nout, void **outs) {
    int i;
    for (i = 0; i < nout; i++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        if (!(outs[i] = malloc(numel(&ti) * (ti.dtype == LUTHIER_DTYPE_I64 ? 8 : 4)))) return 1;
    }
    return 0;
}

/* Runs the plan a few times (at least 3; more, up to 1000, within 0.5 s). *best = the fastest
   run in seconds. Returns the number of runs, or -1 when a run failed. */
static int time_runs(luthier_context *ctx, luthier_plan *p, const void *const *ins, void *const *outs,
                     double *best) {
    double t0;
    int runs;
    *best = 1e30;
    for (runs = 0, t0 = now_s(); runs < 3 || (runs < 1000 && now_s() - t0 < 0.5); runs++) {
        double t = now_s();
        if (luthier_plan_run(ctx, p, ins, outs) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "run: %s\n", luthier_context_error(ctx));
            return -1;
        }
        if ((t = now_s() - t) < *best) *best = t;
    }
    return runs;
}

/* The 5 largest values of every output, with their indices. */
static void print_top5(const luthier_graph *g, int nout, void *const *outs) {
    int i;
    for (i = 0; i < nout; i++) {
        luthier_tensor_info ti;
        const float *y = (const float *)outs[i];
        size_t n, e;
        int top[5], k, j, ntop;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        n = numel(&ti);
        if (ti.dtype != LUTHIER_DTYPE_F32) { /* integer results: the first values */
            printf("output %d '%s' (%zu int64 values):", i, ti.name, n);
            for (e = 0; e < n && e < 8; e++) printf(" %lld", (long long)((const int64_t *)outs[i])[e]);
            printf("%s\n", n > 8 ? " ..." : "");
            continue;
        }
        ntop = n < 5 ? (int)n : 5;
        for (k = 0; k < ntop; k++) { /* selection of the k-th largest */
            int pick = -1;
            for (e = 0; e < n; e++) {
                int used = 0;
                for (j = 0; j < k; j++) used |= top[j] == (int)e;
                if (!used && (pick < 0 || y[e] > y[pick])) pick = (int)e;
            }
            top[k] = pick;
        }
        printf("output %d '%s' (%zu values), top %d:\n", i, ti.name, n, ntop);
        for (k = 0; k < ntop; k++) printf("  #%d  index %d  %.6g\n", k + 1, top[k], (double)y[top[k]]);
    }
}

/* Compares the first output y with the file `expect` and prints the error. Returns 0 when it
   is within 1e-4 of max |expected|, 1 otherwise (or when the file cannot be read). */
static int check_expected(const luthier_graph *g, const float *y, const char *expect) {
    luthier_tensor_info ti;
    float *ref;
    size_t n, e;
    double maxd = 0, maxr = 0;
    luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, 0), &ti);
    n = numel(&ti);
    if (!(ref = (float *)malloc(n * sizeof(float))) || read_values(expect, ref, n, sizeof(float), LUTHIER_DTYPE_F32)) {
        free(ref);
        return 1;
    }
    for (e = 0; e < n; e++) {
        const double d = fabs((double)y[e] - ref[e]);
        if (!(d <= maxd)) maxd = d; /* NaN counts as a mismatch */
        if (fabs((double)ref[e]) > maxr) maxr = fabs((double)ref[e]);
    }
    free(ref);
    printf("vs %s: max error %.3g = %.3g of max |expected| (%s)\n", expect, maxd, maxd / (maxr > 0 ? maxr : 1),
           maxd <= 1e-4 * (maxr > 0 ? maxr : 1) ? "ok" : "MISMATCH");
    return maxd <= 1e-4 * (maxr > 0 ? maxr : 1) ? 0 : 1;
}

int main(int argc, char **argv) {
    options o;
    luthier_graph *g = NULL;
    luthier_context *ctx = NULL;
    luthier_plan *p = NULL;
    luthier_context_desc cd;
    luthier_plan_desc pd;
    luthier_plan_info info;
    char err[512];
    double best, t0;
    void *ins[64];
    void *outs[64];
    const void *cins[64];
    int i, nin, nout, runs, rc = 1;

    if (parse_args(argc, argv, &o) != 0) return 2;

    /* Load the model into a graph, and make its inputs. */
    t0 = now_s();
    if (luthier_onnx_load(o.model, NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("loaded %s: %d nodes in %.1f ms\n", o.model, luthier_graph_num_nodes(g), (now_s() - t0) * 1e3);
    nin = luthier_graph_num_inputs(g);
    nout = luthier_graph_num_outputs(g);
    if (nin > 64 || nout > 64) {
        fprintf(stderr, "too many inputs or outputs\n");
        luthier_graph_destroy(g);
        return 1;
    }
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    if (make_inputs(g, nin, o.input, ins) != 0) goto done;

    /* A context on this machine's CPU clusters; with --tune, tune the layers for it. */
    memset(&cd, 0, sizeof cd);
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "cannot create a context (check $LUTHIER_CLUSTERS)\n");
        goto done;
    }
    if (o.tune_seconds > 0 && tune(ctx, g, o.tune_seconds, o.records) != 0) goto done;

    /* The plan: every layer configured from the records, or by default without them. */
    memset(&pd, 0, sizeof pd);
    pd.records = o.records; /* NULL: default configuration of every layer */
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "plan: %s\n", luthier_context_error(ctx));
        goto done;
    }
    if (o.records && luthier_context_error(ctx)[0]) printf("note: %s\n", luthier_context_error(ctx));
    luthier_plan_get_info(p, &info);
    printf("plan: %d steps, %.1f MFLOP, weights %.1f KiB, arena %.1f KiB%s\n", info.num_steps, info.flops / 1e6,
           (double)info.weights_bytes / 1024, (double)info.arena_bytes / 1024,
           o.records ? " (configured from records)" : "");

    /* Run it: the fastest of a few runs, the top 5 of every output, the check against --expect. */
    if (alloc_outputs(g, nout, outs) != 0) goto done;
    for (i = 0; i < nin; i++) cins[i] = ins[i];
    if ((runs = time_runs(ctx, p, cins, outs, &best)) < 0) goto done;
    printf("latency: %.3f ms (best of %d runs)\n", best * 1e3, runs);
    print_top5(g, nout, outs);
    if (o.expect && check_expected(g, (const float *)outs[0], o.expect) != 0) goto done;
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
