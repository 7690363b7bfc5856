/* ONNX import (luthier_onnx.h): ONNX's own backend node tests (Debian's libonnx-testdata), models
   exported from PyTorch by tests/onnx_export.py (tests/data/onnx), and malformed files.
   Include after luthier.h and harness.h (it includes luthier_onnx.h); run_onnx_tests() runs the cases. Paths
   are relative to the repository root, where the test binary runs. */
#include <dirent.h>
#include <sys/stat.h>

#include "luthier_onnx.h"

#define ONNX_BACKEND_DIR "/usr/share/libonnx-testdata/data/node"
#define ONNX_MODELS_DIR "tests/data/onnx"

static luthier_context *onnx_ctx(void) {
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1; /* tiny graphs: no worker threads */
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return NULL;
    return ctx;
}

/* ---- running a loaded graph against reference tensors ---------------------------------------- */

/* Plans g (an int8 plan with calibration int8, else fp32), feeds ins (matched by name to the
   plan's inputs), compares every reference output (matched by name) with |got - want| <= atol +
   rtol * |want|. Returns the number of mismatching elements (or -1 with msg set when something
   other than numbers went wrong); *max_err receives the largest absolute error. */
static long onnx_run_compare(luthier_context *ctx, luthier_graph *g, const luthier_calibration *int8, const luthier_onnx_tensor *ins, int nin,
                             const luthier_onnx_tensor *outs, int nout, double rtol, double atol, double *max_err,
                             char *msg, size_t msg_size) {
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    const void *in_ptrs[64];
    void *out_ptrs[64], *conv[64];
    float *out_bufs[64];
    long bad = 0;
    int i, k;
    *max_err = 0;
    msg[0] = 0;
    memset(&pd, 0, sizeof pd);
    pd.int8 = int8;
    if (luthier_graph_num_inputs(g) > 64 || luthier_graph_num_outputs(g) > 64) {
        snprintf(msg, msg_size, "too many inputs/outputs");
        return -1;
    }
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        snprintf(msg, msg_size, "plan_create: %s", luthier_context_error(ctx));
        return -1;
    }
    for (i = 0; i < luthier_graph_num_inputs(g); i++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
        in_ptrs[i] = NULL;
        conv[i] = NULL;
        for (k = 0; k < nin; k++)
            if (strcmp(ins[k].name, ti.name) == 0) {
                int ok = 1;
                size_t n = 1, e;
                int d;
                for (d = 0; d < ti.rank; d++) n *= (size_t)ti.shape[d];
                ok = n == (ins[k].numel ? ins[k].numel : 1) &&
                     (ins[k].dtype == ti.dtype ||
                      (ins[k].dtype == LUTHIER_DTYPE_I64 && (ti.dtype == LUTHIER_DTYPE_I32 || ti.dtype == LUTHIER_DTYPE_BOOL)));
                if (ok && ins[k].dtype != ti.dtype) { /* int32 and bool inputs are fed as the model declares them */
                    const int64_t *v = (const int64_t *)ins[k].data;
                    conv[i] = test_alloc(n * 4 + 4);
                    for (e = 0; e < n; e++) {
                        if (ti.dtype == LUTHIER_DTYPE_I32) ((int32_t *)conv[i])[e] = (int32_t)v[e];
                        else ((uint8_t *)conv[i])[e] = (uint8_t)(v[e] != 0);
                    }
                    in_ptrs[i] = conv[i];
                } else if (ok) {
                    in_ptrs[i] = ins[k].data;
                }
            }
        if (!in_ptrs[i]) {
            snprintf(msg, msg_size, "no matching test input for graph input '%s'", ti.name);
            for (k = 0; k < i; k++) free(conv[k]);
            luthier_plan_destroy(p);
            return -1;
        }
    }
    for (i = 0; i < luthier_graph_num_outputs(g); i++) {
        luthier_tensor_info ti;
        size_t n = 1;
        int d;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti);
        for (d = 0; d < ti.rank; d++) n *= (size_t)ti.shape[d];
        out_bufs[i] = (float *)test_alloc(n * 8); /* i64 outputs: 8 bytes each */
        out_ptrs[i] = out_bufs[i];
    }
    if (luthier_plan_run(ctx, p, in_ptrs, out_ptrs) != LUTHIER_STATUS_OK) {
        snprintf(msg, msg_size, "plan_run: %s", luthier_context_error(ctx));
        bad = -1;
    }
    for (k = 0; k < nout && bad >= 0; k++) {
        int oi = luthier_onnx_output_index(g, outs[k].name);
        luthier_tensor_info ti;
        size_t n = 1, e;
        int d, axis;
        if (oi < 0) {
            snprintf(msg, msg_size, "reference output '%s' is not a graph output", outs[k].name);
            bad = -1;
            break;
        }
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, oi), &ti);
        for (d = 0; d < ti.rank; d++) n *= (size_t)ti.shape[d];
        axis = -1;
        { /* an output with a run-time length (NonZero, NonMaxSuppression): its valid entries */
            int64_t len;
            luthier_plan_output_length(p, oi, &axis, &len);
            if (axis >= 0) {
                const size_t es = ti.dtype == LUTHIER_DTYPE_I64 ? 8 : 4, cap = (size_t)ti.shape[axis];
                size_t outer = 1, inner = es, r;
                for (d = 0; d < axis; d++) outer *= (size_t)ti.shape[d];
                for (d = axis + 1; d < ti.rank; d++) inner *= (size_t)ti.shape[d];
                for (r = 0; r < outer; r++)
                    memmove((char *)out_bufs[oi] + r * (size_t)len * inner, (char *)out_bufs[oi] + r * cap * inner, (size_t)len * inner);
                n = outer * (size_t)len * (inner / es);
            }
        }
        if (n != (outs[k].numel || axis >= 0 ? outs[k].numel : 1)) { /* a static empty output is held as 1 element */
            snprintf(msg, msg_size, "output '%s' has %zu elements, the reference %zu", outs[k].name, n, outs[k].numel);
            bad = -1;
            break;
        }
        for (e = 0; e < n; e++) {
            double want = outs[k].dtype == LUTHIER_DTYPE_F32 ? (double)((const float *)outs[k].data)[e]
                                                             : (double)((const int64_t *)outs[k].data)[e];
            double got = ti.dtype == LUTHIER_DTYPE_I64 ? (double)((const int64_t *)(void *)out_bufs[oi])[e] : (double)out_bufs[oi][e];
            double err = fabs(got - want);
            if (want != want && got != got) continue;
            if (want == got) continue; /* infinities */
            if (!(err <= atol + rtol * fabs(want))) {
                if (!bad) snprintf(msg, msg_size, "output '%s'[%zu] = %.9g, want %.9g", outs[k].name, e, got, want);
                bad++;
            }
            if (err > *max_err || err != err) *max_err = err;
        }
    }
    for (i = 0; i < luthier_graph_num_outputs(g); i++) free(out_bufs[i]);
    for (i = 0; i < luthier_graph_num_inputs(g); i++) free(conv[i]);
    luthier_plan_destroy(p);
    return bad;
}

/* Reads <dir>/<prefix>_<k>.pb for k = 0.. into arr (at most max); returns the count or -1. */
static int onnx_read_set(const char *dir, const char *prefix, luthier_onnx_tensor *arr, int max) {
    int k;
    for (k = 0; k < max; k++) {
        char path[1024], err[256];
        FILE *f;
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, k);
        if (!(f = fopen(path, "rb"))) break;
        fclose(f);
        if (luthier_onnx_tensor_load(path, &arr[k], err, sizeof err) != LUTHIER_STATUS_OK) {
            int j;
            for (j = 0; j < k; j++) luthier_onnx_tensor_free(&arr[j]);
            return -1;
        }
    }
    return k;
}

/* ---- ONNX backend node tests ------------------------------------------------------------------- */

static int onnx_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_onnx_backend_nodes(void) {
    DIR *dir = opendir(ONNX_BACKEND_DIR);
    struct dirent *de;
    char **names = NULL;
    int num = 0, cap = 0, i, line = 0, passed = 0, failed = 0, skipped_op = 0, skipped_cfg = 0, skipped_q = 0, bad_data = 0;
    luthier_context *ctx;
    if (!dir) {
        printf("    skipped: apt-get install libonnx-testdata (no %s)\n", ONNX_BACKEND_DIR);
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        if (strncmp(de->d_name, "test_", 5)) continue;
        if (num == cap) {
            char **nn = (char **)test_alloc(sizeof(char *) * (size_t)(cap = cap ? cap * 2 : 256));
            if (names) memcpy(nn, names, sizeof(char *) * (size_t)num);
            free(names);
            names = nn;
        }
        names[num] = (char *)test_alloc(strlen(de->d_name) + 1);
        strcpy(names[num++], de->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)num, sizeof(char *), onnx_cmp_str);
    ctx = onnx_ctx();
    CHECK(ctx != NULL, "context");
    for (i = 0; i < num && ctx; i++) {
        char model[1024], set[1024], err[512], msg[512];
        luthier_onnx_tensor ins[16], outs[16];
        luthier_onnx_options o;
        luthier_graph *g = NULL;
        luthier_status s = LUTHIER_STATUS_OK, best = LUTHIER_STATUS_OK;
        char best_err[512];
        int nin, nout, attempt, setno, case_failed = 0, ran = 0;
        snprintf(model, sizeof model, "%s/%s/model.onnx", ONNX_BACKEND_DIR, names[i]);
        snprintf(set, sizeof set, "%s/%s/test_data_set_0", ONNX_BACKEND_DIR, names[i]);
        nin = onnx_read_set(set, "input", ins, 16);
        nout = onnx_read_set(set, "output", outs, 16);
        if (nin < 0 || nout < 1) {
            /* test data of a type the reader does not take (strings, sequences, optionals) */
            if (nin > 0) { int j; for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]); }
            if (nout > 0) { int j; for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]); }
            bad_data++;
            continue;
        }
        /* attempt 0: as is; 1: non-f32 inputs bound as constants; 2: every input but the first bound
           (ONNX's node tests feed weights, shapes and axes as inputs; the engine wants constants) */
        for (attempt = 0; attempt < 3; attempt++) {
            memset(&o, 0, sizeof o);
            if (attempt == 1) {
                luthier_onnx_tensor bound[16];
                int nb = 0, j;
                for (j = 0; j < nin; j++)
                    if (ins[j].dtype != LUTHIER_DTYPE_F32 || ins[j].onnx_type != 1) bound[nb++] = ins[j];
                if (!nb) continue;
                o.constants = bound;
                o.num_constants = nb;
                s = luthier_onnx_load(model, &o, &g, err, sizeof err);
            } else if (attempt == 2) {
                if (nin < 2) continue;
                o.constants = ins + 1;
                o.num_constants = nin - 1;
                s = luthier_onnx_load(model, &o, &g, err, sizeof err);
            } else {
                s = luthier_onnx_load(model, &o, &g, err, sizeof err);
            }
            if (s == LUTHIER_STATUS_OK) break;
            /* keep the most telling failure: an unsupported feature over a binding mismatch */
            if (s == LUTHIER_STATUS_UNSUPPORTED || attempt == 0) {
                best = s;
                memcpy(best_err, err, sizeof err);
            }
        }
        if (s != LUTHIER_STATUS_OK && best != LUTHIER_STATUS_OK) {
            s = best;
            memcpy(err, best_err, sizeof err);
        }
        if (s != LUTHIER_STATUS_OK) {
            if (s == LUTHIER_STATUS_UNSUPPORTED && (strstr(err, "quantized graph inputs") || strstr(err, "quantized graph outputs"))) {
                /* node tests that feed or check uint8/int8 tensors: a graph is fp32 at its edges */
                skipped_q++;
                if (line) printf("\n"), line = 0;
                if (!T.quick) printf("    skip %s: %s\n", names[i] + 5, err);
            } else if (s == LUTHIER_STATUS_UNSUPPORTED) {
                if (strstr(err, "operator not supported") || strstr(err, "domain") || strstr(err, "opset") ||
                    strstr(err, "inputs are supported") || strstr(err, "supported only on constants")) {
                    skipped_op++;
                } else {
                    skipped_cfg++;
                    if (line) printf("\n"), line = 0;
                    if (!T.quick) printf("    skip %s: %s\n", names[i] + 5, err);
                }
            } else {
                failed++;
                if (line) printf("\n"), line = 0;
                printf("    FAILED %s: load: %s (%s)\n", names[i] + 5, err, luthier_status_string(s));
                CHECK(0, "%s: load: %s", names[i], err);
            }
        } else {
            /* every test data set of the case */
            for (setno = 0; setno < 8 && !case_failed; setno++) {
                luthier_onnx_tensor si[16], so[16];
                int sn, sm, j;
                double max_err;
                long bad;
                if (setno) {
                    snprintf(set, sizeof set, "%s/%s/test_data_set_%d", ONNX_BACKEND_DIR, names[i], setno);
                    sn = onnx_read_set(set, "input", si, 16);
                    sm = onnx_read_set(set, "output", so, 16);
                    if (sn < 0 || sm < 1) {
                        for (j = 0; j < sn; j++) luthier_onnx_tensor_free(&si[j]);
                        for (j = 0; j < sm; j++) luthier_onnx_tensor_free(&so[j]);
                        break;
                    }
                } else {
                    sn = nin;
                    sm = nout;
                    memcpy(si, ins, sizeof(luthier_onnx_tensor) * (size_t)nin);
                    memcpy(so, outs, sizeof(luthier_onnx_tensor) * (size_t)nout);
                }
                bad = onnx_run_compare(ctx, g, NULL, si, sn, so, sm, 1e-3, 1e-5, &max_err, msg, sizeof msg);
                ran++;
                if (bad) {
                    case_failed = 1;
                    if (line) printf("\n"), line = 0;
                    printf("    FAILED %s (set %d): %s%s\n", names[i] + 5, setno, msg, bad > 0 ? " (numbers differ)" : "");
                    CHECK(0, "%s: %s", names[i], msg);
                }
                if (setno) {
                    for (j = 0; j < sn; j++) luthier_onnx_tensor_free(&si[j]);
                    for (j = 0; j < sm; j++) luthier_onnx_tensor_free(&so[j]);
                }
            }
            if (case_failed) failed++;
            else if (ran) {
                passed++;
                if (!T.quick) {
                    size_t l = strlen(names[i] + 5);
                    if (line + l + 1 > 100) printf("\n"), line = 0;
                    printf("%s%s", line ? " " : "    passed: ", names[i] + 5);
                    line += l + (line ? 1 : 12);
                }
            }
            luthier_graph_destroy(g);
        }
        {
            int j;
            for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]);
            for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]);
        }
    }
    if (line) printf("\n");
    printf("    ONNX backend node tests: %d passed, %d skipped (unsupported operator or type), %d skipped (supported "
           "operator, unsupported attribute/configuration), %d skipped (quantized graph inputs/outputs: graphs are fp32 at "
           "their edges), %d skipped (test data not tensors), %d failed, of %d\n",
           passed, skipped_op, skipped_cfg, skipped_q, bad_data, failed, num);
    CHECK(passed > 100, "only %d backend cases passed", passed);
    for (i = 0; i < num; i++) free(names[i]);
    free(names);
    luthier_context_destroy(ctx);
}

/* ---- models exported from PyTorch (tests/onnx_export.py) --------------------------------------- */

/* Loads tests/data/onnx/NAME.onnx and runs it on NAME/input_K.pb (matched by name: several inputs,
   int64 ones fed as the model declares them) at 1 and 2 threads; every output NAME/output_K.pb
   (PyTorch's) must match within tol of the largest |output| (tol absolute below 1). */
static void onnx_check_model(const char *name, double tol) {
    char path[512], dir[512], err[512], msg[512];
    luthier_onnx_tensor ins[8], outs[8];
    luthier_graph *g = NULL;
    int nin, nout, j, threads;
    double max_err = 0;
    long bad;
    snprintf(path, sizeof path, "%s/%s.onnx", ONNX_MODELS_DIR, name);
    snprintf(dir, sizeof dir, "%s/%s", ONNX_MODELS_DIR, name);
    nin = onnx_read_set(dir, "input", ins, 8);
    nout = onnx_read_set(dir, "output", outs, 8);
    CHECK(nin >= 1 && nout >= 1, "%s: reference data missing in %s", name, dir);
    CHECK(luthier_onnx_load(path, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", name, err);
    CHECK(!g || luthier_graph_num_inputs(g) == nin, "%s: %d graph inputs, %d test inputs", name, g ? luthier_graph_num_inputs(g) : 0, nin);
    for (threads = 1; threads <= 2 && g && nin >= 1 && nout >= 1; threads++) {
        luthier_context_desc cd;
        luthier_context *ctx = NULL;
        double scale = 0;
        size_t e;
        memset(&cd, 0, sizeof cd);
        cd.num_threads = threads;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "%s: context with %d threads", name, threads);
        if (!ctx) break;
        for (j = 0; j < nout; j++)
            for (e = 0; e < outs[j].numel && outs[j].dtype == LUTHIER_DTYPE_F32; e++)
                if (fabs((double)((float *)outs[j].data)[e]) > scale) scale = fabs((double)((float *)outs[j].data)[e]);
        bad = onnx_run_compare(ctx, g, NULL, ins, nin, outs, nout, 0, tol * (scale > 1 ? scale : 1), &max_err, msg, sizeof msg);
        CHECK(bad == 0, "%s (%d threads): %s", name, threads, msg);
        if (threads == 1)
            printf("    %-28s %3d nodes, max |error| vs PyTorch %.3g (outputs up to %.3g)\n", name, luthier_graph_num_nodes(g),
                   max_err, scale);
        luthier_context_destroy(ctx);
    }
    for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]);
    for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]);
    luthier_graph_destroy(g);
}

/* counts nodes of an engine op in g */
static int onnx_count_op(const luthier_graph *g, luthier_op want) {
    int i, n = 0;
    luthier_op op;
    for (i = 0; i < luthier_graph_num_nodes(g); i++)
        if (luthier_graph_node(g, i, &op, NULL, NULL, NULL, NULL, NULL, NULL) == LUTHIER_STATUS_OK && op == want) n++;
    return n;
}

/* the number of graph tensors with parameters in cal (g NULL: tensors 0..upto-1) */
static int onnx_cal_count(const luthier_calibration *cal, const luthier_graph *g, int upto) {
    int t, n = 0;
    if (g) upto = luthier_graph_num_tensors(g);
    for (t = 0; t < upto; t++) n += luthier_calibration_get(cal, t, NULL, NULL) == LUTHIER_STATUS_OK;
    return n;
}

static void test_onnx_torch_cnn(void) { onnx_check_model("cnn", 1e-4); }
static void test_onnx_torch_resnet(void) { onnx_check_model("resnet18_small", 1e-4); }

static void test_onnx_torch_bert(void) {
    char err[512];
    luthier_graph *g = NULL;
    luthier_onnx_options o;
    onnx_check_model("bert_block", 1e-4);
    onnx_check_model("bert_block_opset17", 1e-4);
    /* opset 13 export: LayerNorm and GELU are decomposed; the loader must fuse them back */
    CHECK(luthier_onnx_load(ONNX_MODELS_DIR "/bert_block.onnx", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (g) {
        CHECK(onnx_count_op(g, LUTHIER_OP_LAYER_NORM) == 3, "%d layer norms recognized", onnx_count_op(g, LUTHIER_OP_LAYER_NORM));
        CHECK(onnx_count_op(g, LUTHIER_OP_GELU) == 1, "%d GELUs recognized", onnx_count_op(g, LUTHIER_OP_GELU));
        CHECK(onnx_count_op(g, LUTHIER_OP_ERF) == 0, "erf left over");
        CHECK(luthier_onnx_input_index(g, "input_ids") == 0, "input by ONNX name");
        CHECK(luthier_onnx_output_index(g, "hidden") == 0, "output by ONNX name");
        luthier_graph_destroy(g);
    }
    /* no_patterns keeps the decomposed form: must give the same numbers */
    memset(&o, 0, sizeof o);
    o.no_patterns = 1;
    g = NULL;
    CHECK(luthier_onnx_load(ONNX_MODELS_DIR "/bert_block.onnx", &o, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (g) {
        CHECK(onnx_count_op(g, LUTHIER_OP_LAYER_NORM) == 0 && onnx_count_op(g, LUTHIER_OP_ERF) == 1, "patterns kept");
        luthier_graph_destroy(g);
    }
}

/* ---- malformed and hostile files ---------------------------------------------------------------- */

typedef struct pbw {
    uint8_t *p;
    size_t n, cap;
} pbw;

static void pbw_raw(pbw *w, const void *d, size_t n) {
    if (w->n + n > w->cap) {
        size_t cap = (w->n + n) * 2 + 64;
        uint8_t *q = (uint8_t *)test_alloc(cap);
        if (w->n) memcpy(q, w->p, w->n);
        free(w->p);
        w->p = q;
        w->cap = cap;
    }
    if (n) memcpy(w->p + w->n, d, n);
    w->n += n;
}
static void pbw_varint(pbw *w, uint64_t v) {
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    pbw_raw(w, b, n);
}
static void pbw_key(pbw *w, int field, int wire) { pbw_varint(w, (uint64_t)field << 3 | (uint64_t)wire); }
static void pbw_int(pbw *w, int field, int64_t v) { pbw_key(w, field, 0); pbw_varint(w, (uint64_t)v); }
static void pbw_bytes(pbw *w, int field, const void *d, size_t n) { pbw_key(w, field, 2); pbw_varint(w, n); pbw_raw(w, d, n); }
static void pbw_str(pbw *w, int field, const char *s) { pbw_bytes(w, field, s, strlen(s)); }
static void pbw_msg(pbw *w, int field, pbw *m) { pbw_bytes(w, field, m->p, m->n); free(m->p); memset(m, 0, sizeof *m); }

/* ValueInfoProto: tensor name [dims] of element type elem */
static void pbw_vi_t(pbw *w, int field, const char *name, int elem, int rank, const int64_t *dims) {
    pbw vi = {0, 0, 0}, ty = {0, 0, 0}, tt = {0, 0, 0}, sh = {0, 0, 0};
    int i;
    for (i = 0; i < rank; i++) {
        pbw dim = {0, 0, 0};
        pbw_int(&dim, 1, dims[i]);
        pbw_msg(&sh, 1, &dim);
    }
    pbw_int(&tt, 1, elem);
    pbw_msg(&tt, 2, &sh);
    pbw_msg(&ty, 1, &tt);
    pbw_str(&vi, 1, name);
    pbw_msg(&vi, 2, &ty);
    pbw_msg(w, field, &vi);
}
/* ValueInfoProto: float tensor name [dims] */
static void pbw_vi(pbw *w, int field, const char *name, int rank, const int64_t *dims) { pbw_vi_t(w, field, name, 1, rank, dims); }
static void pbw_node(pbw *w, const char *op, const char *in0, const char *in1, const char *out, const char *name) {
    pbw n = {0, 0, 0};
    if (in0) pbw_str(&n, 1, in0);
    if (in1) pbw_str(&n, 1, in1);
    pbw_str(&n, 2, out);
    pbw_str(&n, 3, name);
    pbw_str(&n, 4, op);
    pbw_msg(w, 1, &n);
}
/* Attributes on NodeProto n: string, integer, float, float list, integer list. */
static void pbw_attr_s(pbw *n, const char *name, const char *v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_str(&a, 4, v);
    pbw_int(&a, 20, 3); /* STRING */
    pbw_msg(n, 5, &a);
}
static void pbw_attr_i(pbw *n, const char *name, int64_t v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 3, v);
    pbw_int(&a, 20, 2); /* INT */
    pbw_msg(n, 5, &a);
}
static void pbw_attr_fs(pbw *n, const char *name, const float *v, int count) {
    pbw a = {0, 0, 0};
    int i;
    pbw_str(&a, 1, name);
    for (i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        pbw_key(&a, 7, 5);
        pbw_raw(&a, &bits, 4);
    }
    pbw_int(&a, 20, 6); /* FLOATS */
    pbw_msg(n, 5, &a);
}
static void pbw_attr_is(pbw *n, const char *name, const int64_t *v, int count) {
    pbw a = {0, 0, 0};
    int i;
    pbw_str(&a, 1, name);
    for (i = 0; i < count; i++) pbw_int(&a, 8, v[i]);
    pbw_int(&a, 20, 7); /* INTS */
    pbw_msg(n, 5, &a);
}
static void pbw_attr_f(pbw *n, const char *name, float v) {
    pbw a = {0, 0, 0};
    uint32_t bits;
    memcpy(&bits, &v, 4);
    pbw_str(&a, 1, name);
    pbw_key(&a, 2, 5);
    pbw_raw(&a, &bits, 4); /* little-endian hosts */
    pbw_int(&a, 20, 1);    /* FLOAT */
    pbw_msg(n, 5, &a);
}

/* ModelProto around graph g (consumed) */
static void pbw_model(pbw *m, pbw *g, int opset) {
    pbw op = {0, 0, 0};
    pbw_int(m, 1, 8);
    pbw_msg(m, 7, g);
    pbw_int(&op, 2, opset);
    pbw_msg(m, 8, &op);
}

/* x [1,4] -> Relu -> r -> Add(r, bias initializer) -> y, nodes written in reverse order */
static void onnx_tiny_model(pbw *m) {
    pbw g = {0, 0, 0}, t = {0, 0, 0};
    int64_t dims[2] = {1, 4};
    float bias[4] = {1, 2, 3, 4};
    pbw_node(&g, "Add", "r", "bias", "y", "add");
    pbw_node(&g, "Relu", "x", NULL, "r", "relu");
    pbw_int(&t, 1, 4);
    pbw_int(&t, 2, 1);
    pbw_str(&t, 8, "bias");
    pbw_bytes(&t, 9, bias, sizeof bias);
    pbw_msg(&g, 5, &t);
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(m, &g, 13);
}

static luthier_status onnx_load_bytes(const pbw *m, char *err, size_t n) {
    luthier_graph *g = NULL;
    luthier_status s = luthier_onnx_load_memory(m->p, m->n, NULL, &g, err, n);
    if (s == LUTHIER_STATUS_OK) CHECK(g != NULL, "graph");
    else CHECK(g == NULL && err[0], "failure without message");
    luthier_graph_destroy(g);
    return s;
}

static void test_onnx_tiny_unsorted(void) {
    pbw m = {0, 0, 0};
    luthier_graph *g = NULL;
    luthier_context *ctx = onnx_ctx();
    char err[512];
    onnx_tiny_model(&m);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (g && ctx) {
        luthier_plan *p = NULL;
        luthier_plan_desc pd;
        float x[4] = {-1, 0.5f, -3, 2}, y[4];
        const void *ins[1];
        void *outs[1];
        ins[0] = x;
        outs[0] = y;
        memset(&pd, 0, sizeof pd);
        CHECK(luthier_onnx_input_index(g, "x") == 0 && luthier_onnx_output_index(g, "y") == 0, "names");
        CHECK(luthier_onnx_input_index(g, "bias") == -1, "initializers are not inputs");
        CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        CHECK(p && luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "run");
        CHECK(y[0] == 1 && y[1] == 2.5f && y[2] == 3 && y[3] == 6, "%g %g %g %g", (double)y[0], (double)y[1], (double)y[2], (double)y[3]);
        luthier_plan_destroy(p);
    }
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    free(m.p);
}

/* y = x + w with w a float32 raw_data initializer of n values, its bytes starting pad bytes
   later than with no padding (an unknown TensorProto field, doc_string, in front); *raw_at:
   offset of the raw bytes in the model */
static void onnx_raw_model(pbw *m, int n, int pad, const float *w, size_t *raw_at) {
    pbw g = {0, 0, 0}, t = {0, 0, 0};
    int64_t dims[2] = {1, 0};
    size_t k;
    dims[1] = n;
    pbw_node(&g, "Add", "x", "w", "y", "add");
    pbw_int(&t, 1, 1);
    pbw_int(&t, 1, n);
    pbw_int(&t, 2, 1);
    pbw_str(&t, 8, "w");
    if (pad) pbw_bytes(&t, 12, "pad", (size_t)(pad == 1 ? 3 : pad == 3)); /* 2 + 3, 2 + 0, 2 + 1 bytes */
    pbw_bytes(&t, 9, w, (size_t)n * sizeof(float));
    pbw_msg(&g, 5, &t);
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(m, &g, 13);
    *raw_at = 0;
    for (k = 0; k + (size_t)n * sizeof(float) <= m->n; k++)
        if (!memcmp(m->p + k, w, (size_t)n * sizeof(float))) { *raw_at = k; break; }
}

/* plans and runs y = x + w; 1 when y is right */
static int onnx_raw_run(luthier_context *ctx, luthier_graph *g, int n, const float *w) {
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    float x[64], y[64];
    const void *ins[1];
    void *outs[1];
    int i, ok;
    for (i = 0; i < n; i++) x[i] = (float)i;
    ins[0] = x;
    outs[0] = y;
    memset(&pd, 0, sizeof pd);
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) return 0;
    ok = luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK;
    for (i = 0; ok && i < n; i++) ok = y[i] == (float)i + w[i];
    luthier_plan_destroy(p);
    return ok;
}

/* Float raw_data at every alignment: used where it lies when aligned; in the loader's own
   buffer (luthier_onnx_load) moved into alignment in place, so that the graph's copy of the
   weights is the only one; the caller's bytes (luthier_onnx_load_memory) are never written. */
static void test_onnx_raw_alignment(void) {
    luthier_context *ctx = onnx_ctx();
    float w[64];
    int sizes[2] = {40, 8}; /* 160 bytes: room to move by up to 3; 32 bytes: 2 (copied instead) */
    int si, pad, i, moved = 0;
    char err[512];
    for (i = 0; i < 64; i++) w[i] = 0.25f * (float)i - 3.0f;
    for (si = 0; si < 2 && ctx; si++)
        for (pad = 0; pad < 4; pad++) {
            pbw m = {0, 0, 0};
            int n = sizes[si];
            size_t raw_at, mis;
            uint8_t *buf, *keep;
            luthier_graph *g = NULL;
            FILE *f;
            onnx_raw_model(&m, n, pad, w, &raw_at);
            CHECK(raw_at > 0, "raw bytes found");
            buf = (uint8_t *)test_alloc(m.n);
            keep = (uint8_t *)test_alloc(m.n);
            memcpy(buf, m.p, m.n);
            memcpy(keep, m.p, m.n);
            mis = ((uintptr_t)buf + raw_at) % sizeof(float);
            /* the caller's bytes: read only */
            CHECK(luthier_onnx_load_memory(buf, m.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
            CHECK(!memcmp(buf, keep, m.n), "load_memory wrote to the caller's bytes (n %d, pad %d)", n, pad);
            CHECK(g && onnx_raw_run(ctx, g, n, w), "load_memory: wrong result (n %d, pad %d)", n, pad);
            luthier_graph_destroy(g);
            g = NULL;
            /* the loader's own buffer: aligned in place when there is room */
            CHECK(luthier_onnx__load_bytes(buf, buf, m.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
            if (mis && (n == 40 || mis < 3)) {
                CHECK(!memcmp(buf + raw_at - mis, w, (size_t)n * sizeof(float)), "raw_data not moved into alignment (n %d, pad %d)", n, pad);
                moved++;
            } else {
                CHECK(!memcmp(buf, keep, m.n), "buffer changed with nothing to align (n %d, pad %d)", n, pad);
            }
            memset(buf, 0xff, m.n); /* the graph holds its own copy */
            CHECK(g && onnx_raw_run(ctx, g, n, w), "in place: wrong result (n %d, pad %d)", n, pad);
            luthier_graph_destroy(g);
            g = NULL;
            /* and from a file */
            f = fopen("build/onnx_raw_align.onnx", "wb");
            CHECK(f != NULL, "cannot write build/onnx_raw_align.onnx");
            if (f) {
                fwrite(m.p, 1, m.n, f);
                fclose(f);
                CHECK(luthier_onnx_load("build/onnx_raw_align.onnx", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
                CHECK(g && onnx_raw_run(ctx, g, n, w), "file: wrong result (n %d, pad %d)", n, pad);
                luthier_graph_destroy(g);
                remove("build/onnx_raw_align.onnx");
            }
            free(m.p);
            free(buf);
            free(keep);
        }
    CHECK(moved >= 4, "only %d cases moved raw_data into alignment", moved);
    luthier_context_destroy(ctx);
}

static void test_onnx_malformed(void) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    char err[512];
    size_t cut;
    int64_t dims[2] = {1, 4}, neg[2] = {1, -3};
    luthier_status s;
    luthier_graph *gr = NULL;
    FILE *f;
    /* empty input */
    CHECK(luthier_onnx_load_memory("", 0, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "empty"), "%s", err);
    f = fopen("build/onnx_empty.onnx", "wb");
    if (f) {
        fclose(f);
        CHECK(luthier_onnx_load("build/onnx_empty.onnx", NULL, &gr, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT &&
              strstr(err, "empty"), "%s", err);
        remove("build/onnx_empty.onnx");
    }
    CHECK(luthier_onnx_load("no/such/file.onnx", NULL, &gr, err, sizeof err) == LUTHIER_STATUS_NOT_FOUND, "%s", err);
    /* every truncation of a valid model: an error with a message or (at a field boundary) a model */
    onnx_tiny_model(&m);
    for (cut = 0; cut < m.n; cut++) {
        pbw t = {0, 0, 0};
        pbw_raw(&t, m.p, cut);
        if (!cut) continue;
        s = onnx_load_bytes(&t, err, sizeof err);
        if (cut > 4 && cut < m.n - 6) CHECK(s != LUTHIER_STATUS_OK, "truncated to %zu bytes loaded", cut);
        free(t.p);
    }
    /* a cut inside the graph names the problem */
    {
        pbw t = {0, 0, 0};
        pbw_raw(&t, m.p, m.n / 2);
        CHECK(onnx_load_bytes(&t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "malformed"), "%s", err);
        free(t.p);
    }
    free(m.p);
    memset(&m, 0, sizeof m);
    /* wrong wire type: graph as a varint */
    pbw_int(&m, 1, 8);
    pbw_int(&m, 7, 5);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "wire type"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* group wire type 3 */
    pbw_key(&m, 7, 3);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "wire type"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* huge declared length */
    pbw_key(&m, 7, 2);
    pbw_varint(&m, (uint64_t)1 << 40);
    pbw_raw(&m, "abc", 3);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "declares"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* overlong varint */
    {
        static const uint8_t bad[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
        pbw_raw(&m, bad, sizeof bad);
        CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "%s", err);
        free(m.p);
        memset(&m, 0, sizeof m);
    }
    /* not a model at all */
    pbw_raw(&m, "hello world, not protobuf", 25);
    CHECK(onnx_load_bytes(&m, err, sizeof err) != LUTHIER_STATUS_OK, "text loaded");
    free(m.p);
    memset(&m, 0, sizeof m);
    /* negative dimension of an input */
    pbw_node(&g, "Relu", "x", NULL, "y", "relu");
    pbw_vi(&g, 11, "x", 2, neg);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "negative"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* negative dimension of an initializer */
    {
        pbw t = {0, 0, 0};
        float v = 1;
        pbw_node(&g, "Add", "x", "w", "y", "add");
        pbw_int(&t, 1, -1);
        pbw_int(&t, 2, 1);
        pbw_str(&t, 8, "w");
        pbw_bytes(&t, 9, &v, sizeof v);
        pbw_msg(&g, 5, &t);
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        pbw_model(&m, &g, 13);
        CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "negative"), "%s", err);
        free(m.p);
        memset(&m, 0, sizeof m);
    }
    /* raw_data shorter than the dims say */
    {
        pbw t = {0, 0, 0};
        float v[2] = {1, 2};
        pbw_node(&g, "Add", "x", "w", "y", "add");
        pbw_int(&t, 1, 4);
        pbw_int(&t, 2, 1);
        pbw_str(&t, 8, "w");
        pbw_bytes(&t, 9, v, sizeof v);
        pbw_msg(&g, 5, &t);
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        pbw_model(&m, &g, 13);
        CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "raw_data"), "%s", err);
        free(m.p);
        memset(&m, 0, sizeof m);
    }
    /* external data */
    {
        pbw t = {0, 0, 0};
        pbw_node(&g, "Add", "x", "w", "y", "add");
        pbw_int(&t, 1, 4);
        pbw_int(&t, 2, 1);
        pbw_str(&t, 8, "w");
        pbw_int(&t, 14, 1);
        pbw_msg(&g, 5, &t);
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        pbw_model(&m, &g, 13);
        CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "external"), "%s", err);
        free(m.p);
        memset(&m, 0, sizeof m);
    }
    /* cycle */
    pbw_node(&g, "Relu", "b", NULL, "a", "first");
    pbw_node(&g, "Add", "x", "a", "b", "second");
    pbw_node(&g, "Relu", "b", NULL, "y", "third");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "cycle") &&
          (strstr(err, "'first'") || strstr(err, "'second'")), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* dangling input */
    pbw_node(&g, "Add", "x", "nowhere", "y", "adder");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "adder") &&
          strstr(err, "(Add)") && strstr(err, "'nowhere'") && strstr(err, "dangling"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* value produced twice */
    pbw_node(&g, "Relu", "x", NULL, "y", "one");
    pbw_node(&g, "Relu", "x", NULL, "y", "two");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "already"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* unsupported operator: names node and op type */
    pbw_node(&g, "Frobnicate", "x", NULL, "y", "weird");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "'weird'") && strstr(err, "Frobnicate"),
          "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    /* unsupported attribute */
    {
        pbw n = {0, 0, 0}, a = {0, 0, 0};
        pbw_str(&n, 1, "x");
        pbw_str(&n, 2, "y");
        pbw_str(&n, 3, "soft");
        pbw_str(&n, 4, "Softmax");
        pbw_str(&a, 1, "temperature");
        pbw_int(&a, 3, 2);
        pbw_msg(&n, 5, &a);
        pbw_msg(&g, 1, &n);
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        pbw_model(&m, &g, 13);
        CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "temperature") && strstr(err, "'soft'"),
              "%s", err);
        free(m.p);
        memset(&m, 0, sizeof m);
    }
    /* opset out of range */
    pbw_node(&g, "Relu", "x", NULL, "y", "relu");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 99);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "opset"), "%s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
}

/* Random corruption of the committed models and of a tiny one: no crash, no leak (ASan). The
   quantized models are loaded with a calibration too: filled on success, untouched on failure. */
/* Plans g and, when its arena and weights stay under 64 MiB, runs it once on zeros (zero is a
   valid index for i64 inputs). Whatever a hostile or corrupted model that loaded does, it must
   end in a status with a message, never a crash. Returns 1 when it ran. */
static int onnx_plan_run_any(luthier_context *ctx, const luthier_graph *g) {
    luthier_plan *p = NULL;
    luthier_plan_info pi;
    luthier_plan_desc pd;
    void *ins[16], *outs[16], *arena = NULL;
    int i, ni = luthier_graph_num_inputs(g), no = luthier_graph_num_outputs(g), ran = 0, ok = 1;
    luthier_status s;
    memset(&pd, 0, sizeof pd);
    pd.external_arena = 1; /* a mutant may describe a network of 100+ GB: size it before allocating */
    s = luthier_plan_create(ctx, g, &pd, &p);
    if (s != LUTHIER_STATUS_OK) {
        CHECK(p == NULL && luthier_context_error(ctx)[0], "plan_create: %s without a message", luthier_status_string(s));
        return 0;
    }
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    if (ni <= 16 && no <= 16 && pi.arena_bytes + pi.weights_bytes < ((size_t)64 << 20) &&
        (!pi.arena_bytes || (arena = luthier__alloc(pi.arena_bytes)) != NULL) &&
        luthier_plan_bind_arena(p, arena, pi.arena_bytes) == LUTHIER_STATUS_OK) {
        memset(ins, 0, sizeof ins);
        memset(outs, 0, sizeof outs);
        for (i = 0; i < ni + no; i++) {
            luthier_tensor_info ti;
            size_t bytes = 8;
            int k;
            luthier_graph_tensor_info(g, i < ni ? luthier_graph_input_tensor(g, i) : luthier_graph_output_tensor(g, i - ni), &ti);
            for (k = 0; k < ti.rank; k++) bytes *= (size_t)ti.shape[k];
            if (bytes > ((size_t)64 << 20)) ok = 0;
            else if (i < ni) ok = ok && (ins[i] = calloc(1, bytes)) != NULL;
            else ok = ok && (outs[i - ni] = calloc(1, bytes)) != NULL;
        }
        if (ok) {
            s = luthier_plan_run(ctx, p, (const void *const *)ins, outs);
            CHECK(s == LUTHIER_STATUS_OK || luthier_context_error(ctx)[0], "plan_run: %s without a message", luthier_status_string(s));
            ran = s == LUTHIER_STATUS_OK;
        }
        for (i = 0; i < 16; i++) free(ins[i]), free(outs[i]);
    }
    luthier_plan_destroy(p);
    luthier__free(arena);
    return ran;
}

static void test_onnx_corrupted(void) {
    static const char *files[] = {ONNX_MODELS_DIR "/cnn.onnx", ONNX_MODELS_DIR "/bert_block.onnx", ONNX_MODELS_DIR "/qdq_cnn.onnx",
                                  ONNX_MODELS_DIR "/qlinear.onnx", ONNX_MODELS_DIR "/bert_block_opset17.onnx",
                                  ONNX_MODELS_DIR "/resnet18_small.onnx", ONNX_MODELS_DIR "/kws_lstm.onnx",
                                  ONNX_MODELS_DIR "/hf_gpt2_small.onnx", ONNX_MODELS_DIR "/yolo_small.onnx"};
    enum { NFILES = sizeof files / sizeof files[0] };
    const char *env = getenv("LUTHIER_TEST_MUTATIONS"); /* e.g. 10000 for a long run */
    int iters = env ? atoi(env) : T.quick ? 200 : 1000, f, i, loaded = 0, ran = 0;
    char err[512];
    uint64_t saved = test_rng_state;
    luthier_context *ctx = onnx_ctx();
    test_rng_state = 0x0a0a;
    for (f = 0; f <= NFILES; f++) {
        pbw m = {0, 0, 0};
        if (f < NFILES) {
            FILE *fp = fopen(files[f], "rb");
            uint8_t buf[4096];
            size_t got;
            if (!fp) continue;
            while ((got = fread(buf, 1, sizeof buf, fp)) > 0) pbw_raw(&m, buf, got);
            fclose(fp);
        } else {
            onnx_tiny_model(&m);
        }
        for (i = 0; i < iters && m.n; i++) {
            pbw t = {0, 0, 0};
            int flips = test_rand_int(1, 4), k;
            pbw_raw(&t, m.p, m.n);
            /* flip bytes in the first 2 KB mostly (structure), anywhere sometimes */
            for (k = 0; k < flips; k++) {
                size_t at = (size_t)(test_rand_u64() % (test_rand_int(0, 3) ? (t.n < 2048 ? t.n : 2048) : t.n));
                t.p[at] = (uint8_t)test_rand_u64();
            }
            if (test_rand_int(0, 7) == 0) t.n = (size_t)(test_rand_u64() % t.n);
            (void)onnx_load_bytes(&t, err, sizeof err);
            {   /* what loads is planned and run */
                luthier_graph *g = NULL;
                if (ctx && luthier_onnx_load_memory(t.p, t.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK) {
                    loaded++;
                    ran += onnx_plan_run_any(ctx, g);
                }
                luthier_graph_destroy(g);
            }
            if (f == 2 || f == 3) {
                luthier_calibration *cal = NULL;
                luthier_onnx_options o;
                luthier_graph *g = NULL;
                luthier_status st;
                memset(&o, 0, sizeof o);
                if (luthier_calibration_create(&cal) == LUTHIER_STATUS_OK) {
                    o.calibration = cal;
                    st = luthier_onnx_load_memory(t.p, t.n, &o, &g, err, sizeof err);
                    CHECK(st == LUTHIER_STATUS_OK ? g != NULL : g == NULL && err[0] && onnx_cal_count(cal, NULL, 256) == 0,
                          "status %d: graph or calibration inconsistent", (int)st);
                    luthier_graph_destroy(g);
                    luthier_calibration_destroy(cal);
                }
            }
            free(t.p);
        }
        free(m.p);
    }
    if (env) printf("    %d mutations of each of %d models: %d loaded, %d planned and ran\n", iters, NFILES + 1, loaded, ran);
    CHECK(ran > 0, "no mutated model ran (%d loaded)", loaded);
    luthier_context_destroy(ctx);
    test_rng_state = saved;
}

static void test_onnx_tensor_files(void) {
    pbw t = {0, 0, 0};
    luthier_onnx_tensor out;
    char err[256];
    int64_t vals[3] = {5, -2, 7};
    /* int64_data, not packed */
    pbw_int(&t, 1, 3);
    pbw_int(&t, 2, 7);
    pbw_int(&t, 7, vals[0]);
    pbw_int(&t, 7, vals[1]);
    pbw_int(&t, 7, vals[2]);
    pbw_str(&t, 8, "ids");
    CHECK(luthier_onnx_tensor_load_memory(t.p, t.n, &out, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    CHECK(out.dtype == LUTHIER_DTYPE_I64 && out.numel == 3 && ((int64_t *)out.data)[1] == -2 && !strcmp(out.name, "ids"), "int64_data");
    luthier_onnx_tensor_free(&out);
    free(t.p);
    memset(&t, 0, sizeof t);
    /* double_data packed -> f32 */
    {
        double d[2] = {1.5, -0.25};
        pbw_int(&t, 1, 2);
        pbw_int(&t, 2, 11);
        pbw_bytes(&t, 10, d, sizeof d);
        CHECK(luthier_onnx_tensor_load_memory(t.p, t.n, &out, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
        CHECK(out.dtype == LUTHIER_DTYPE_F32 && ((float *)out.data)[1] == -0.25f, "double_data");
        luthier_onnx_tensor_free(&out);
        free(t.p);
        memset(&t, 0, sizeof t);
    }
    /* float_data with a count that disagrees with dims */
    {
        float fv = 1;
        pbw_int(&t, 1, 2);
        pbw_int(&t, 2, 1);
        pbw_bytes(&t, 4, &fv, sizeof fv);
        CHECK(luthier_onnx_tensor_load_memory(t.p, t.n, &out, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "%s", err);
        free(t.p);
        memset(&t, 0, sizeof t);
    }
}

/* ---- quantized models (QDQ, QLinearConv / QLinearMatMul; luthier_onnx_options.calibration) ----- */

/* Initializer name [dims] of TensorProto type `type` from raw little-endian bytes. */
static void pbw_init(pbw *g, const char *name, int type, int rank, const int64_t *dims, const void *raw, size_t bytes) {
    pbw t = {0, 0, 0};
    int i;
    for (i = 0; i < rank; i++) pbw_int(&t, 1, dims[i]);
    pbw_int(&t, 2, type);
    pbw_str(&t, 8, name);
    pbw_bytes(&t, 9, raw, bytes);
    pbw_msg(g, 5, &t);
}
static void pbw_init_f32(pbw *g, const char *name, int rank, const int64_t *dims, const float *v, size_t n) {
    pbw_init(g, name, 1, rank, dims, v, n * sizeof(float));
}
/* Node named after its output, any inputs ("" = absent), an optional integer attribute. */
static void pbw_node_k(pbw *w, const char *op, const char *const *ins, int nin, const char *out, const char *attr, int64_t value) {
    pbw n = {0, 0, 0}, a = {0, 0, 0};
    int i;
    for (i = 0; i < nin; i++) pbw_str(&n, 1, ins[i]);
    pbw_str(&n, 2, out);
    pbw_str(&n, 3, out);
    pbw_str(&n, 4, op);
    if (attr) {
        pbw_str(&a, 1, attr);
        pbw_int(&a, 3, value);
        pbw_int(&a, 20, 2); /* INT */
        pbw_msg(&n, 5, &a);
    }
    pbw_msg(w, 1, &n);
}

/* runs an fp32 plan of g on one input x, outputs into outs[i] (at most 8) */
static int onnx_run_simple(luthier_context *ctx, const luthier_graph *g, const float *x, float *const *outs) {
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    const void *ins[1];
    void *o[8];
    int ok, i;
    ins[0] = x;
    for (i = 0; i < 8 && i < luthier_graph_num_outputs(g); i++) o[i] = outs[i];
    memset(&pd, 0, sizeof pd);
    if (luthier_graph_num_outputs(g) > 8 || luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) return 0;
    ok = luthier_plan_run(ctx, p, ins, o) == LUTHIER_STATUS_OK;
    luthier_plan_destroy(p);
    return ok;
}

/* LRN with alpha, beta or bias 0 (valid ONNX; the loader used to refuse them) against the
   formula y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta. */
static void test_onnx_lrn_zero_attrs(void) {
    static const float at[3][3] = {{0, 0.75f, 1}, {2e-2f, 0, 0.5f}, {0.3f, 0.5f, 0}};
    static const char *const names[3] = {"alpha", "beta", "bias"};
    int64_t dims[4] = {1, 6, 3, 2};
    float x[36], y[36];
    int k, j, e;
    luthier_context *ctx = onnx_ctx();
    for (e = 0; e < 36; e++) x[e] = (float)((e * 37) % 23) / 7.0f - 1.5f;
    for (k = 0; k < 3; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, n = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        float *outs[1];
        double worst = 0;
        pbw_str(&n, 1, "x");
        pbw_str(&n, 2, "y");
        pbw_str(&n, 3, "lrn");
        pbw_str(&n, 4, "LRN");
        for (j = 0; j < 3; j++) pbw_attr_f(&n, names[j], at[k][j]);
        pbw_attr_i(&n, "size", 3);
        pbw_msg(&g, 1, &n);
        pbw_vi(&g, 11, "x", 4, dims);
        pbw_vi(&g, 12, "y", 4, dims);
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "LRN %d: %s", k, err);
        outs[0] = y;
        if (gr && ctx) {
            CHECK(onnx_run_simple(ctx, gr, x, outs), "LRN %d runs: %s", k, luthier_context_error(ctx));
            for (e = 0; e < 36; e++) {
                int c = e / 6 % 6, q;
                double sum = 0, want;
                for (q = c - 1; q <= c + 1; q++)
                    if (q >= 0 && q < 6) sum += (double)x[e + (q - c) * 6] * x[e + (q - c) * 6];
                want = x[e] / pow(at[k][2] + at[k][0] / 3.0 * sum, at[k][1]);
                if (fabs(y[e] - want) > worst || y[e] != y[e]) worst = y[e] != y[e] ? 1e30 : fabs(y[e] - want);
            }
            CHECK(worst < 1e-5 * 8, "LRN %d (alpha %g beta %g bias %g): max |diff| %g", k, (double)at[k][0],
                  (double)at[k][1], (double)at[k][2], worst);
        }
        luthier_graph_destroy(gr);
        free(m.p);
    }
    luthier_context_destroy(ctx);
}

/* ONNX's node tests of the activations whose models declare opsets 1 and 6 (the loader reads 7..17):
   these operators have not changed since, so each model is loaded with its default-domain opset
   raised to 13 (the OperatorSetIdProto {domain "", version v} rewritten in the bytes) and checked
   against the test data, like test_onnx_backend_nodes does. */
static void test_onnx_backend_activations(void) {
    static const char *const cases[] = {"elu", "elu_default", "elu_example", "selu", "selu_default", "selu_example",
                                        "hardsigmoid", "hardsigmoid_default", "hardsigmoid_example", "softplus",
                                        "softplus_example", "softsign", "softsign_example"};
    static const uint8_t pat[5] = {0x42, 0x04, 0x0a, 0x00, 0x10}; /* field 8, 4 bytes: domain "", version */
    luthier_context *ctx = onnx_ctx();
    unsigned k;
    int ran = 0;
    for (k = 0; k < sizeof cases / sizeof cases[0] && ctx; k++) {
        char path[1024], err[512], msg[512];
        luthier_onnx_tensor ins[4], outs[4];
        luthier_graph *g = NULL;
        uint8_t *bytes;
        long len, bad;
        size_t i, hits = 0;
        int nin, nout, j;
        double max_err;
        FILE *f;
        snprintf(path, sizeof path, "%s/test_%s/model.onnx", ONNX_BACKEND_DIR, cases[k]);
        if (!(f = fopen(path, "rb"))) continue;
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        bytes = (uint8_t *)test_alloc((size_t)len + 1);
        CHECK(fread(bytes, 1, (size_t)len, f) == (size_t)len, "%s: read", cases[k]);
        fclose(f);
        for (i = 0; i + 6 <= (size_t)len; i++)
            if (memcmp(bytes + i, pat, 5) == 0 && bytes[i + 5] < 7) bytes[i + 5] = 13, hits++;
        CHECK(hits == 1, "%s: %zu opset fields below 7", cases[k], hits);
        CHECK(luthier_onnx_load_memory(bytes, (size_t)len, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", cases[k], err);
        snprintf(path, sizeof path, "%s/test_%s/test_data_set_0", ONNX_BACKEND_DIR, cases[k]);
        nin = onnx_read_set(path, "input", ins, 4);
        nout = onnx_read_set(path, "output", outs, 4);
        if (g && nin > 0 && nout > 0) {
            bad = onnx_run_compare(ctx, g, NULL, ins, nin, outs, nout, 1e-5, 1e-6, &max_err, msg, sizeof msg);
            CHECK(bad == 0, "%s: %s", cases[k], msg);
            ran++;
        }
        for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]);
        for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]);
        luthier_graph_destroy(g);
        free(bytes);
    }
    printf("    %d of %d node tests ran\n", ran, (int)(sizeof cases / sizeof cases[0]));
    luthier_context_destroy(ctx);
}


/* Each activation in a model of its own, attributes off their defaults (or left out), against
   its ONNX formula; attributes it does not have and non-finite values are refused. */
static void test_onnx_activations(void) {
    static const struct { const char *op; const char *a1; float v1; const char *a2; float v2; } cases[] = {
        {"LeakyRelu", "alpha", 1.7f, NULL, 0}, {"LeakyRelu", NULL, 0, NULL, 0}, {"Elu", "alpha", 0.3f, NULL, 0},
        {"Elu", NULL, 0, NULL, 0}, {"Selu", "alpha", 2.0f, "gamma", 0.5f}, {"Selu", NULL, 0, NULL, 0},
        {"Celu", "alpha", -0.8f, NULL, 0}, {"Celu", NULL, 0, NULL, 0}, {"HardSigmoid", "alpha", -0.4f, "beta", 0.3f},
        {"HardSigmoid", NULL, 0, NULL, 0}, {"HardSwish", NULL, 0, NULL, 0}, {"Softplus", NULL, 0, NULL, 0},
        {"Softsign", NULL, 0, NULL, 0}, {"Mish", NULL, 0, NULL, 0}, {"ThresholdedRelu", "alpha", -0.25f, NULL, 0},
        {"ThresholdedRelu", NULL, 0, NULL, 0},
    };
    int64_t dims[3] = {2, 3, 7};
    float x[42], y[42];
    int k, e;
    luthier_context *ctx = onnx_ctx();
    for (e = 0; e < 42; e++) x[e] = (float)((e * 37) % 41) / 5.0f - 4.0f;
    x[5] = 1.0f; /* thresholded relu's default threshold itself */
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]) + 3; k++) {
        const int refuse = k >= (int)(sizeof cases / sizeof cases[0]);
        const char *op = refuse ? (k % 2 ? "Selu" : "Softplus") : cases[k].op;
        pbw m = {0, 0, 0}, g = {0, 0, 0}, n = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        float *outs[1];
        double worst = 0, a1 = 0, a2 = 0;
        luthier_status s;
        pbw_str(&n, 1, "x");
        pbw_str(&n, 2, "y");
        pbw_str(&n, 3, "act");
        pbw_str(&n, 4, op);
        if (!refuse && cases[k].a1) pbw_attr_f(&n, cases[k].a1, cases[k].v1);
        if (!refuse && cases[k].a2) pbw_attr_f(&n, cases[k].a2, cases[k].v2);
        if (refuse) pbw_attr_f(&n, k % 2 ? "gamma" : "alpha", k % 2 ? INFINITY : 1.0f); /* Softplus has no alpha */
        pbw_msg(&g, 1, &n);
        pbw_vi(&g, 11, "x", 3, dims);
        pbw_vi(&g, 12, "y", 3, dims);
        pbw_model(&m, &g, 14); /* HardSwish is defined from opset 14 */
        s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
        free(m.p);
        if (refuse) {
            /* an attribute the operator lacks, or a value the engine refuses: both UNSUPPORTED */
            CHECK(s == LUTHIER_STATUS_UNSUPPORTED && gr == NULL && strstr(err, "'act'") && strstr(err, k % 2 ? "gamma" : "alpha"),
                  "%s refused: %s (%s)", op, err, luthier_status_string(s));
            luthier_graph_destroy(gr);
            continue;
        }
        CHECK(s == LUTHIER_STATUS_OK, "%s: %s", op, err);
        if (!gr || !ctx) continue;
        a1 = cases[k].a1 ? cases[k].v1 : !strcmp(op, "LeakyRelu") ? 0.01 : !strcmp(op, "Selu") ? 1.67326319217681884765625
           : !strcmp(op, "HardSigmoid") ? 0.2 : 1.0;
        a2 = cases[k].a2 ? cases[k].v2 : !strcmp(op, "Selu") ? 1.05070102214813232421875 : 0.5;
        outs[0] = y;
        CHECK(onnx_run_simple(ctx, gr, x, outs), "%s runs: %s", op, luthier_context_error(ctx));
        for (e = 0; e < 42; e++) {
            const double t = x[e];
            double want, h;
            if (!strcmp(op, "LeakyRelu")) want = t < 0 ? a1 * t : t;
            else if (!strcmp(op, "Elu")) want = t < 0 ? a1 * (exp(t) - 1) : t;
            else if (!strcmp(op, "Selu")) want = t <= 0 ? a2 * (a1 * exp(t) - a1) : a2 * t;
            else if (!strcmp(op, "Celu")) h = a1 * (exp(t / a1) - 1), want = (t > 0 ? t : 0) + (h < 0 ? h : 0);
            else if (!strcmp(op, "HardSigmoid")) h = a1 * t + a2, want = h < 0 ? 0 : h > 1 ? 1 : h;
            else if (!strcmp(op, "HardSwish")) h = t / 6 + 0.5, want = t * (h < 0 ? 0 : h > 1 ? 1 : h);
            else if (!strcmp(op, "Softplus")) want = log(exp(t) + 1);
            else if (!strcmp(op, "Softsign")) want = t / (1 + fabs(t));
            else if (!strcmp(op, "Mish")) want = t * tanh(log(exp(t) + 1));
            else want = t > a1 ? t : 0;
            h = fabs(y[e] - want) / (fabs(want) > 1 ? fabs(want) : 1);
            if (!(h <= worst)) worst = h;
        }
        CHECK(worst <= 1e-6, "%s (%g, %g): max |diff| / max(1, |want|) %g", op, a1, a2, worst);
        luthier_graph_destroy(gr);
    }
    luthier_context_destroy(ctx);
}

/* want within 1e-6 of max(1, |want|); NaN where want is NaN, the same infinity where it is one */
static int onnx_close(double got, double want) {
    if (want != want) return got != got;
    if (isinf(want)) return got == want;
    return fabs(got - want) <= 1e-6 * (fabs(want) > 1 ? fabs(want) : 1);
}

/* Abs, Log (of the Abs), Floor, Ceil, Round, Reciprocal and PRelu (slope [3,1] per channel and
   [5] along the last axis) in one opset-13 model, each one engine step of its own operator,
   against the ONNX formulas on halves (round to even), +-0, infinities and NaN; a PRelu slope
   computed at run time is refused with the node's name. */
static void test_onnx_unary2(void) {
    static const char *const ops[6] = {"Abs", "Log", "Floor", "Ceil", "Round", "Reciprocal"};
    static const luthier_op eng[8] = {LUTHIER_OP_ABS, LUTHIER_OP_LOG, LUTHIER_OP_FLOOR, LUTHIER_OP_CEIL,
                                      LUTHIER_OP_ROUND, LUTHIER_OP_RECIPROCAL, LUTHIER_OP_PRELU, LUTHIER_OP_PRELU};
    static const float sc[3] = {0.25f, -2.0f, 0.0f}, sw[5] = {0.1f, 0.2f, 0.3f, 0.4f, 3.0f};
    int64_t dims[3] = {2, 3, 5}, dc[2] = {3, 1}, dw = 5;
    float x[30], y[8][30], *outs[8];
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_context *ctx = onnx_ctx();
    char err[512], name[16];
    int k, e, bad = 0;
    for (e = 0; e < 30; e++) x[e] = (float)(e - 15) * 0.5f + (e % 4 == 1 ? 0.125f : 0.0f); /* halves, odd and even */
    x[3] = NAN; x[15] = -0.0f; x[22] = INFINITY; x[27] = -INFINITY; x[28] = 1e-40f;
    pbw_init_f32(&g, "sc", 2, dc, sc, 3);
    pbw_init_f32(&g, "sw", 1, &dw, sw, 5);
    for (k = 0; k < 6; k++) {
        snprintf(name, sizeof name, "y%d", k);
        pbw_node(&g, ops[k], k == 1 ? "y0" : "x", NULL, name, ops[k]);
    }
    pbw_node(&g, "PRelu", "x", "sc", "y6", "prelu_c");
    pbw_node(&g, "PRelu", "x", "sw", "y7", "prelu_w");
    pbw_vi(&g, 11, "x", 3, dims);
    for (k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "y%d", k);
        pbw_vi(&g, 12, name, 3, dims);
    }
    pbw_model(&m, &g, 13); /* Round is defined from opset 11 */
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "load: %s", err);
    free(m.p);
    CHECK(gr && luthier_graph_num_nodes(gr) == 8, "one step each (%d)", gr ? luthier_graph_num_nodes(gr) : -1);
    for (k = 0; gr && k < 8; k++) { /* the steps, in whatever order the loader sorted them */
        int i, have = 0, want = 0;
        for (i = 0; i < 8; i++) {
            luthier_node_desc d;
            memset(&d, 0, sizeof d);
            if (i < luthier_graph_num_nodes(gr) && luthier_graph_node_desc(gr, i, &d) == LUTHIER_STATUS_OK && d.op == eng[k]) have++;
            want += eng[i] == eng[k];
        }
        CHECK(have == want, "%d %s steps, want %d", have, luthier_op_name(eng[k]), want);
    }
    for (k = 0; k < 8; k++) outs[k] = y[k];
    CHECK(gr && ctx && onnx_run_simple(ctx, gr, x, outs), "runs: %s", ctx ? luthier_context_error(ctx) : "");
    for (k = 0; gr && ctx && k < 8; k++)
        for (e = 0; e < 30; e++) {
            const double t = x[e], f = floor(t), sl = k == 6 ? sc[(e / 5) % 3] : sw[e % 5];
            double want;
            switch (k) {
            case 0: want = fabs(t); break;
            case 1: want = log(fabs(t)); break;
            case 2: want = f; break;
            case 3: want = -floor(-t); break;
            case 4: want = t - f > 0.5 || (t - f == 0.5 && fmod(f, 2) != 0) ? f + 1 : f; break;
            case 5: want = (float)(1 / t); break; /* 1 / 1e-40 overflows float */
            default: want = t < 0 ? sl * t : t; break;
            }
            if (!onnx_close(y[k][e], want) && bad++ < 4)
                CHECK(0, "%s x = %g: %.9g, want %.9g", k < 6 ? ops[k] : "PRelu", t, (double)y[k][e], want);
        }
    luthier_graph_destroy(gr);
    gr = NULL;
    /* a slope computed at run time */
    memset(&g, 0, sizeof g);
    memset(&m, 0, sizeof m);
    pbw_node(&g, "Abs", "s_in", NULL, "s", "abs");
    pbw_node(&g, "PRelu", "x", "s", "y", "pr");
    pbw_vi(&g, 11, "x", 3, dims);
    pbw_vi(&g, 11, "s_in", 1, &dw);
    pbw_vi(&g, 12, "y", 3, dims);
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && !gr &&
          strstr(err, "'pr'") && strstr(err, "constant"), "run-time slope refused: %s", err);
    free(m.p);
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
}

/* Cast(in, to) -> out */
static void pbw_cast(pbw *w, const char *in, const char *out, int64_t to) {
    const char *ins[1];
    ins[0] = in;
    pbw_node_k(w, "Cast", ins, 1, out, "to", to);
}

/* pbw_node with a third input */
static void pbw_node3(pbw *w, const char *op, const char *a, const char *b, const char *c, const char *out) {
    const char *ins[3];
    ins[0] = a, ins[1] = b, ins[2] = c;
    pbw_node_k(w, op, ins, 3, out, NULL, 0);
}

/* Comparisons, logic, Where, Mod and run-time Cast loaded from ONNX with int64, int32 and bool
   graph inputs fed at run time (the user's buffers as the model declares them), an attention
   mask Cast(mask, float) -> Sub(1, .) -> Mul(-10000) -> Add(scores), against the ONNX formulas. */
static void test_onnx_logic(void) {
    static const char *const outs_[19] = {"eq", "gt", "lt", "ge", "le", "and_", "or_", "xor_", "not_", "wh", "md", "mdf",
                                          "att", "t32f", "t32i", "bw", "h16", "x32f", "eqi"};
    int64_t dx[3] = {2, 3, 4}, d4 = 4, d24[2] = {2, 4}, d1 = 1;
    float x[24], z[4] = {0.0f, 0.5f, NAN, -1.0f}, zc[4] = {1.0f, -1.0f, 0.0f, 0.5f}, one = 1.0f, neg = -10000.0f, sc[8];
    int64_t ids[8] = {0, 1, 2, 3, -4, -5, 7, 10}, mask[8] = {1, 1, 1, 0, 1, 1, 0, 0}, three = 3;
    int32_t t32[8] = {INT32_MIN, -1, 0, 5, 7, INT32_MAX, 3, -3};
    uint8_t bm[8] = {1, 0, 2, 0, 0, 1, 1, 0};
    double got[19][24];
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_plan *p = NULL;
    luthier_context *ctx = onnx_ctx();
    const void *ins[8];
    void *ob[19];
    char err[512];
    int k, e, bad = 0;
    for (e = 0; e < 24; e++) x[e] = (float)((e * 7) % 9 - 4) * 0.5f;
    x[5] = NAN, x[6] = 1e-8f, x[7] = 0.1f, x[11] = 2.75f, x[12] = -2.75f;
    for (e = 0; e < 8; e++) sc[e] = (float)e * 0.25f - 1.0f;
    pbw_init_f32(&g, "one", 0, NULL, &one, 1);
    pbw_init_f32(&g, "neg", 0, NULL, &neg, 1);
    pbw_init_f32(&g, "zc", 1, &d4, zc, 4);
    pbw_init(&g, "three", 7, 1, &d1, &three, 8);
    pbw_node(&g, "Equal", "x", "z", "eq", "eq");
    pbw_node(&g, "Greater", "x", "z", "gt", "gt");
    pbw_node(&g, "Less", "x", "zc", "lt", "lt");
    pbw_node(&g, "GreaterOrEqual", "x", "z", "ge", "ge");
    pbw_node(&g, "LessOrEqual", "x", "z", "le", "le");
    pbw_node(&g, "And", "gt", "le", "and_", "and_");
    pbw_node(&g, "Or", "eq", "lt", "or_", "or_");
    pbw_node(&g, "Xor", "ge", "le", "xor_", "xor_");
    pbw_node(&g, "Not", "gt", NULL, "not_", "not_");
    pbw_node3(&g, "Where", "gt", "x", "z", "wh");
    pbw_node(&g, "Mod", "ids", "three", "md", "md");
    {
        const char *mi[2] = {"ids", "three"};
        pbw_node_k(&g, "Mod", mi, 2, "mdf", "fmod", 1);
    }
    pbw_cast(&g, "mask", "maskf", 1);
    pbw_node(&g, "Sub", "one", "maskf", "inv", "inv");
    pbw_node(&g, "Mul", "inv", "neg", "bias", "bias");
    pbw_node(&g, "Add", "s", "bias", "att", "att");
    pbw_cast(&g, "t32", "t32f", 1);
    pbw_cast(&g, "t32", "t32i", 7);
    pbw_node3(&g, "Where", "bm", "s", "z", "bw");
    pbw_cast(&g, "x", "h16", 10);
    pbw_cast(&g, "x", "x32", 6);
    pbw_cast(&g, "x32", "x32f", 1);
    pbw_node(&g, "Equal", "ids", "mask", "eqi", "eqi");
    pbw_vi(&g, 11, "x", 3, dx);
    pbw_vi(&g, 11, "z", 1, &d4);
    pbw_vi_t(&g, 11, "ids", 7, 2, d24);
    pbw_vi_t(&g, 11, "mask", 7, 2, d24);
    pbw_vi(&g, 11, "s", 2, d24);
    pbw_vi_t(&g, 11, "t32", 6, 2, d24);
    pbw_vi_t(&g, 11, "bm", 9, 2, d24);
    for (k = 0; k < 19; k++) pbw_vi(&g, 12, outs_[k], 1, &d1); /* (types and shapes as the engine infers them) */
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "load: %s", err);
    free(m.p);
    if (!gr || !ctx) {
        luthier_graph_destroy(gr);
        luthier_context_destroy(ctx);
        return;
    }
    CHECK(luthier_graph_num_inputs(gr) == 7, "7 inputs (%d)", luthier_graph_num_inputs(gr));
    ins[0] = x, ins[1] = z, ins[2] = ids, ins[3] = mask, ins[4] = sc, ins[5] = t32, ins[6] = bm;
    for (k = 0; k < 7; k++) { /* declared in this order, with the model's element types */
        static const luthier_dtype want[7] = {LUTHIER_DTYPE_F32, LUTHIER_DTYPE_F32, LUTHIER_DTYPE_I64, LUTHIER_DTYPE_I64,
                                              LUTHIER_DTYPE_F32, LUTHIER_DTYPE_I32, LUTHIER_DTYPE_BOOL};
        luthier_tensor_info ti;
        luthier_graph_tensor_info(gr, luthier_graph_input_tensor(gr, k), &ti);
        CHECK(ti.dtype == want[k], "input %d (%s) is %d, want %d", k, ti.name, (int)ti.dtype, (int)want[k]);
    }
    for (k = 0; k < 19; k++) ob[k] = test_alloc(24 * 8);
    {
        void *po[19];
        for (k = 0; k < 19; k++) {
            int oi = luthier_onnx_output_index(gr, outs_[k]);
            CHECK(oi >= 0 && oi < 19, "output %s at %d", outs_[k], oi);
            po[oi >= 0 && oi < 19 ? oi : k] = ob[k];
        }
        CHECK(luthier_plan_create(ctx, gr, NULL, &p) == LUTHIER_STATUS_OK && luthier_plan_run(ctx, p, ins, po) == LUTHIER_STATUS_OK,
              "runs: %s", luthier_context_error(ctx));
    }
    for (k = 0; k < 19; k++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(gr, luthier_graph_output_tensor(gr, luthier_onnx_output_index(gr, outs_[k])), &ti);
        for (e = 0; e < (k >= 10 && k != 16 && k != 17 ? 8 : 24); e++)
            got[k][e] = ti.dtype == LUTHIER_DTYPE_I64 ? (double)((int64_t *)ob[k])[e] : (double)((float *)ob[k])[e];
    }
    for (e = 0; e < 24; e++) { /* x [2,3,4] against z [4] */
        const double a = x[e], b = z[e % 4], bc = zc[e % 4];
        const int gt = a > b, le = a <= b, eq = a == b, lt = a < bc, ge = a >= b;
        double want[10];
        want[0] = eq, want[1] = gt, want[2] = lt, want[3] = ge, want[4] = le, want[5] = gt && le, want[6] = eq || lt;
        want[7] = ge != le, want[8] = !gt, want[9] = gt ? a : b;
        for (k = 0; k < 10; k++)
            if (!onnx_close(got[k][e], want[k]) && bad++ < 6) CHECK(0, "%s[%d] = %g, want %g", outs_[k], e, got[k][e], want[k]);
        {
            const double h = e == 7 ? 0.0999755859375 : e == 6 ? 0.0 : a; /* halves: exact in f16 */
            const double t = a != a ? 0 : a < 0 ? ceil(a) : floor(a);
            if (!onnx_close(got[16][e], h) && bad++ < 6) CHECK(0, "h16[%d] = %.9g, want %.9g", e, got[16][e], h);
            if (!onnx_close(got[17][e], t) && bad++ < 6) CHECK(0, "x32f[%d] = %g, want %g", e, got[17][e], t);
        }
    }
    for (e = 0; e < 8; e++) {
        const int64_t a = ids[e];
        double want[9];
        want[0] = (double)(((a % 3) + 3) % 3);                          /* md: floored, divisor 3 > 0 */
        want[1] = (double)(a % 3);                                      /* mdf: C */
        want[2] = (double)(sc[e] + (1.0f - (float)mask[e]) * -10000.0f); /* att */
        want[3] = (double)(float)t32[e], want[4] = (double)t32[e];
        want[5] = bm[e] ? sc[e] : z[e % 4];
        want[6] = ids[e] == mask[e];
        for (k = 0; k < 7; k++) {
            const int o = k < 6 ? 10 + k : 18;
            if (!onnx_close(got[o][e], want[k]) && bad++ < 6) CHECK(0, "%s[%d] = %.9g, want %.9g", outs_[o], e, got[o][e], want[k]);
        }
    }
    for (k = 0; k < 19; k++) free(ob[k]);
    luthier_plan_destroy(p);
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
}

/* Run-time casts to string or double, Mod with fmod 2 and an int16 graph input: refused with
   the node's (or input's) name. */
static void test_onnx_logic_refusals(void) {
    static const int64_t to[3] = {8, 11, 0};
    int64_t d4 = 4;
    int k;
    for (k = 0; k < 4; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        luthier_status s;
        if (k < 2) {
            pbw_cast(&g, "x", "y", to[k]);
        } else if (k == 2) {
            const char *mi[2] = {"x", "x"};
            pbw_node_k(&g, "Mod", mi, 2, "y", "fmod", 2);
        } else {
            pbw_node(&g, "Relu", "x", NULL, "y", "y");
        }
        pbw_vi_t(&g, 11, "x", k == 3 ? 5 : 1, 1, &d4);
        pbw_vi(&g, 12, "y", 1, &d4);
        pbw_model(&m, &g, 13);
        s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
        CHECK(s != LUTHIER_STATUS_OK && !gr && strstr(err, k == 3 ? "'x'" : "'y'") &&
                  strstr(err, k == 0 ? "string" : k == 1 ? "double" : k == 2 ? "fmod" : "int16"),
              "case %d refused: %s", k, err);
        free(m.p);
        luthier_graph_destroy(gr);
    }
}

/* MatMul then Add of a constant bias: with B a constant [5,7] and the bias [7] (either order)
   one dense node with the bias; a bias [1], a B computed at run time (x x^T) or a product that is
   also a graph output keep the add. Every case against the naive product. */
static void test_onnx_matmul_bias(void) {
    const int64_t dx[2] = {3, 5}, db[2] = {5, 7}, d7 = 7, d1 = 1, d3 = 3, dy[2] = {3, 7}, dyt[2] = {3, 3};
    float x[15], w[35], bias[7], y[2][21], *outs[2];
    luthier_context *ctx = onnx_ctx();
    int k, e, i;
    for (e = 0; e < 15; e++) x[e] = (float)(e % 6) * 0.5f - 1.2f;
    for (e = 0; e < 35; e++) w[e] = (float)((e * 5) % 9) * 0.25f - 1.0f;
    for (e = 0; e < 7; e++) bias[e] = (float)e - 3.5f;
    for (k = 0; k < 5; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        const int runtime_b = k == 3, n = runtime_b ? 3 : 7;
        pbw_init_f32(&g, "W", 2, db, w, 35);
        pbw_init_f32(&g, "bias", 1, k == 2 ? &d1 : runtime_b ? &d3 : &d7, bias, k == 2 ? 1 : (size_t)n);
        if (runtime_b) pbw_node(&g, "Transpose", "x", NULL, "xt", "xt");
        pbw_node(&g, "MatMul", "x", runtime_b ? "xt" : "W", "p", "mm");
        pbw_node(&g, "Add", k == 1 ? "bias" : "p", k == 1 ? "p" : "bias", "y", "add");
        pbw_vi(&g, 11, "x", 2, dx);
        pbw_vi(&g, 12, "y", 2, runtime_b ? dyt : dy);
        if (k == 4) pbw_vi(&g, 12, "p", 2, dy);
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", k, err);
        free(m.p);
        if (!gr || !ctx) {
            luthier_graph_destroy(gr);
            continue;
        }
        CHECK(onnx_count_op(gr, LUTHIER_OP_ADD) == (k >= 2) && onnx_count_op(gr, runtime_b ? LUTHIER_OP_MATMUL : LUTHIER_OP_DENSE) == 1,
              "case %d: %d adds", k, onnx_count_op(gr, LUTHIER_OP_ADD));
        outs[0] = y[0];
        outs[1] = y[1];
        CHECK(onnx_run_simple(ctx, gr, x, outs), "case %d runs", k);
        for (e = 0; e < 3 * n; e++) {
            double prod = 0;
            const int r = e / n, col = e % n;
            for (i = 0; i < 5; i++) prod += (double)x[r * 5 + i] * (runtime_b ? (double)x[col * 5 + i] : (double)w[i * 7 + col]);
            CHECK(fabs(y[0][e] - (prod + bias[k == 2 ? 0 : col])) <= 1e-5, "case %d [%d]: %g, want %g", k, e, (double)y[0][e],
                  prod + bias[k == 2 ? 0 : col]);
            if (k == 4) CHECK(fabs(y[1][e] - prod) <= 1e-5, "case %d product [%d]: %g, want %g", k, e, (double)y[1][e], prod);
        }
        luthier_graph_destroy(gr);
    }
    luthier_context_destroy(ctx);
}

/* Constants the loader scales or broadcasts into new ones: Gemm's alpha * B and beta * C with C
   one value (rank 0 and [1]), per column ([N], [1,N]) or full ([M,N]); LayerNormalization's scale
   and bias as one value each or per element; against the formulas of the ONNX spec in double. */
static void onnx_gemm_case(luthier_context *ctx, int crank, const int64_t *cdims, size_t cn) {
    enum { M = 3, K = 5, N = 4 };
    const int64_t dx[2] = {M, K}, db[2] = {K, N}, dy[2] = {M, N};
    const float alpha = 0.5f, beta = -2.0f;
    float x[M * K], w[K * N], cv[M * N], y[M * N], *outs[1];
    pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
    luthier_graph *gr = NULL;
    char err[512];
    int e, i, ok;
    for (e = 0; e < M * K; e++) x[e] = (float)(e % 7) * 0.25f - 0.8f;
    for (e = 0; e < K * N; e++) w[e] = (float)((e * 3) % 11) * 0.125f - 0.6f;
    for (e = 0; e < M * N; e++) cv[e] = (float)e * 0.375f - 1.1f;
    pbw_init_f32(&g, "B", 2, db, w, K * N);
    pbw_init_f32(&g, "C", crank, cdims, cv, cn);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "B"), pbw_str(&nd, 1, "C"), pbw_str(&nd, 2, "y"), pbw_str(&nd, 3, "gemm");
    pbw_str(&nd, 4, "Gemm");
    pbw_attr_f(&nd, "alpha", alpha), pbw_attr_f(&nd, "beta", beta);
    pbw_msg(&g, 1, &nd);
    pbw_vi(&g, 11, "x", 2, dx);
    pbw_vi(&g, 12, "y", 2, dy);
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "gemm C of %zu: %s", cn, err);
    free(m.p);
    outs[0] = y;
    ok = gr && ctx && onnx_run_simple(ctx, gr, x, outs);
    CHECK(ok, "gemm C of %zu runs", cn);
    for (e = 0; ok && e < M * N; e++) {
            const int r = e / N, col = e % N;
        double want = 0;
        for (i = 0; i < K; i++) want += (double)x[r * K + i] * w[i * N + col];
        want = alpha * want + beta * (double)cv[cn == 1 ? 0 : cn == N ? (size_t)col : (size_t)e];
        CHECK(fabs(y[e] - want) <= 1e-5, "gemm C of %zu [%d]: %g, want %g", cn, e, (double)y[e], want);
    }
    luthier_graph_destroy(gr);
}

static void onnx_layernorm_case(luthier_context *ctx, size_t ns, size_t nb) {
    enum { R = 6, D = 5 };
    const int64_t dx[2] = {R, D}, ds = (int64_t)ns, dbb = (int64_t)nb;
    float x[R * D], sc[D], bi[D], y[R * D], *outs[1];
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_graph *gr = NULL;
    const char *ins[3] = {"x", "scale", "bias"};
    char err[512];
    int e, r, ok;
    for (e = 0; e < R * D; e++) x[e] = (float)((e * 7) % 13) * 0.3f - 1.7f;
    for (e = 0; e < D; e++) sc[e] = 1.5f - 0.25f * (float)e, bi[e] = 0.2f * (float)e - 0.35f;
    pbw_init_f32(&g, "scale", 1, &ds, sc, ns);
    pbw_init_f32(&g, "bias", 1, &dbb, bi, nb);
    pbw_node_k(&g, "LayerNormalization", ins, 3, "y", "axis", -1);
    pbw_vi(&g, 11, "x", 2, dx);
    pbw_vi(&g, 12, "y", 2, dx);
    pbw_model(&m, &g, 17);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "layer_norm %zu/%zu: %s", ns, nb, err);
    free(m.p);
    outs[0] = y;
    ok = gr && ctx && onnx_run_simple(ctx, gr, x, outs);
    CHECK(ok, "layer_norm %zu/%zu runs", ns, nb);
    for (r = 0; ok && r < R; r++) {
        double mean = 0, var = 0;
        for (e = 0; e < D; e++) mean += x[r * D + e] / (double)D;
        for (e = 0; e < D; e++) var += (x[r * D + e] - mean) * (x[r * D + e] - mean) / (double)D;
        for (e = 0; e < D; e++) {
            const double want = (x[r * D + e] - mean) / sqrt(var + 1e-5) * sc[ns == 1 ? 0 : e] + bi[nb == 1 ? 0 : e];
            CHECK(fabs(y[r * D + e] - want) <= 1e-5, "layer_norm %zu/%zu [%d,%d]: %g, want %g", ns, nb, r, e,
                  (double)y[r * D + e], want);
        }
    }
    luthier_graph_destroy(gr);
}

static void test_onnx_const_broadcasts(void) {
    const int64_t one = 1, n4 = 4, row[2] = {1, 4}, full[2] = {3, 4};
    luthier_context *ctx = onnx_ctx();
    onnx_gemm_case(ctx, 0, &one, 1);
    onnx_gemm_case(ctx, 1, &one, 1);
    onnx_gemm_case(ctx, 1, &n4, 4);
    onnx_gemm_case(ctx, 2, row, 4);
    onnx_gemm_case(ctx, 2, full, 12);
    onnx_layernorm_case(ctx, 1, 1);
    onnx_layernorm_case(ctx, 5, 1);
    onnx_layernorm_case(ctx, 1, 5);
    onnx_layernorm_case(ctx, 5, 5);
    luthier_context_destroy(ctx);
}

/* A Conv or QLinearConv whose kernel_shape is not its weights' spatial shape is refused, naming
   kernel_shape; the same node with the right kernel_shape loads. */
static void test_onnx_conv_kernel_shape(void) {
    const int64_t dx[4] = {1, 2, 6, 6}, dy[4] = {1, 3, 4, 4}, dw[4] = {3, 2, 3, 3}, ks[3][2] = {{3, 3}, {5, 5}, {3, 1}};
    float w[3 * 2 * 9];
    uint8_t wq[3 * 2 * 9];
    int k, q;
    for (k = 0; k < 54; k++) w[k] = (float)(k % 5) * 0.1f, wq[k] = (uint8_t)(k * 7);
    for (q = 0; q < 2; q++)
        for (k = 0; k < 3; k++) {
            pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
            luthier_graph *gr = NULL;
            char err[512];
            luthier_status s;
            const float sc = 0.05f;
            const uint8_t zp = 128;
            const int64_t none = 0;
            if (q) {
                pbw_init(&g, "w", 2, 4, dw, wq, sizeof wq);
                pbw_init_f32(&g, "s", 0, &none, &sc, 1);
                pbw_init(&g, "z", 2, 0, &none, &zp, 1);
                pbw_node3(&g, "QuantizeLinear", "x", "s", "z", "xq");
                pbw_node3(&g, "DequantizeLinear", "yq", "s", "z", "y");
                pbw_str(&nd, 1, "xq"), pbw_str(&nd, 1, "s"), pbw_str(&nd, 1, "z"), pbw_str(&nd, 1, "w");
                pbw_str(&nd, 1, "s"), pbw_str(&nd, 1, "z"), pbw_str(&nd, 1, "s"), pbw_str(&nd, 1, "z");
            } else {
                pbw_init_f32(&g, "w", 4, dw, w, 54);
                pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "w");
            }
            pbw_str(&nd, 2, q ? "yq" : "y"), pbw_str(&nd, 3, "conv"), pbw_str(&nd, 4, q ? "QLinearConv" : "Conv");
            pbw_attr_is(&nd, "kernel_shape", ks[k], 2);
            pbw_msg(&g, 1, &nd);
            pbw_vi(&g, 11, "x", 4, dx);
            pbw_vi(&g, 12, "y", 4, dy);
            pbw_model(&m, &g, 13);
            s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
            free(m.p);
            if (k == 0) CHECK(s == LUTHIER_STATUS_OK, "%s with the weights' kernel_shape: %s", q ? "QLinearConv" : "Conv", err);
            else
                CHECK(s != LUTHIER_STATUS_OK && strstr(err, "kernel_shape"), "%s kernel_shape %lldx%lld on 3x3 weights: %d %s",
                      q ? "QLinearConv" : "Conv", (long long)ks[k][0], (long long)ks[k][1], (int)s, s ? err : "loaded");
            luthier_graph_destroy(gr);
        }
}

/* GPT-2-like block exported by PyTorch at opset 13 (tests/onnx_export.py): its tanh GELU, written
   out in elementary operators, loads as one GELU (approximate) that the plan fuses into the
   c_fc dense before it; no_patterns keeps the operators, and both match PyTorch. */
static void test_onnx_torch_gpt2(void) {
    char err[512];
    luthier_graph *g = NULL;
    luthier_onnx_options o;
    luthier_context *ctx = onnx_ctx();
    luthier_plan *p = NULL;
    int i, fused = 0;
    onnx_check_model("gpt2_block", 1e-4);
    CHECK(luthier_onnx_load(ONNX_MODELS_DIR "/gpt2_block.onnx", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (g) {
        luthier_plan_info pi;
        CHECK(onnx_count_op(g, LUTHIER_OP_GELU) == 1 && onnx_count_op(g, LUTHIER_OP_TANH) == 0 && onnx_count_op(g, LUTHIER_OP_POW) == 0,
              "%d GELUs, %d tanh, %d pow", onnx_count_op(g, LUTHIER_OP_GELU), onnx_count_op(g, LUTHIER_OP_TANH), onnx_count_op(g, LUTHIER_OP_POW));
        CHECK(onnx_count_op(g, LUTHIER_OP_LAYER_NORM) == 3, "%d layer norms", onnx_count_op(g, LUTHIER_OP_LAYER_NORM));
        CHECK(ctx && luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK && luthier_plan_get_info(p, &pi) == LUTHIER_STATUS_OK,
              "plan: %s", ctx ? luthier_context_error(ctx) : "no context");
        for (i = 0; p && i < pi.num_steps; i++) {
            luthier_step_info si;
            if (luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK && si.op == LUTHIER_OP_DENSE && strstr(si.fused, "gelu")) fused++;
            CHECK(si.op != LUTHIER_OP_GELU, "step %d is a GELU of its own", i);
        }
        CHECK(fused == 1, "%d dense steps with the GELU fused", fused);
        luthier_plan_destroy(p);
        luthier_graph_destroy(g);
    }
    memset(&o, 0, sizeof o);
    o.no_patterns = 1;
    g = NULL;
    CHECK(luthier_onnx_load(ONNX_MODELS_DIR "/gpt2_block.onnx", &o, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (g) {
        CHECK(onnx_count_op(g, LUTHIER_OP_GELU) == 0 && onnx_count_op(g, LUTHIER_OP_TANH) == 1, "patterns kept");
        luthier_graph_destroy(g);
    }
    luthier_context_destroy(ctx);
}

/* Mul(t, Sigmoid(t)) in either order becomes one silu step; a Sigmoid output that has a second
   consumer, or is a graph output, keeps the two steps. Every variant against x sigmoid(x). */
static void test_onnx_silu_pattern(void) {
    int64_t dims[2] = {3, 7};
    float x[21], y[2][21], *outs[2];
    int k, e;
    luthier_context *ctx = onnx_ctx();
    for (e = 0; e < 21; e++) x[e] = (float)(e - 10) * 1.7f;
    x[0] = -100.0f; x[1] = NAN; x[2] = INFINITY; x[3] = -INFINITY; x[20] = 90.0f;
    for (k = 0; k < 4; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0};
        luthier_graph *gr = NULL;
        luthier_node_desc d;
        char err[512];
        const int fused = k < 2, nout = k >= 2 ? 2 : 1;
        pbw_node(&g, "Sigmoid", "x", NULL, "s", "sig");
        pbw_node(&g, "Mul", k == 1 ? "s" : "x", k == 1 ? "x" : "s", "y", "mul");
        if (k == 2) pbw_node(&g, "Add", "s", "x", "z", "add"); /* a second consumer */
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        if (k >= 2) pbw_vi(&g, 12, k == 2 ? "z" : "s", 2, dims); /* k 3: the sigmoid is an output */
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", k, err);
        free(m.p);
        if (!gr) continue;
        memset(&d, 0, sizeof d);
        CHECK(luthier_graph_num_nodes(gr) == (fused ? 1 : k == 2 ? 3 : 2), "case %d: %d nodes", k, luthier_graph_num_nodes(gr));
        CHECK(luthier_graph_node_desc(gr, 0, &d) == LUTHIER_STATUS_OK && (d.op == LUTHIER_OP_SILU) == fused, "case %d: node 0 is %s",
              k, luthier_op_name(d.op));
        outs[0] = y[0];
        outs[1] = y[1];
        CHECK(ctx && onnx_run_simple(ctx, gr, x, outs), "case %d runs", k);
        for (e = 0; ctx && e < 21; e++) {
            const double t = x[e], sg = 1 / (1 + exp(-t));
            const double want[2] = {t * sg, k == 2 ? sg + t : sg};
            int o;
            for (o = 0; o < nout; o++)
                CHECK(onnx_close(y[o][e], want[o]), "case %d output %d x = %g: %.9g, want %.9g", k, o, t, (double)y[o][e], want[o]);
        }
        luthier_graph_destroy(gr);
    }
    luthier_context_destroy(ctx);
}

/* Mul(t, HardSigmoid(t, alpha 1/6, beta 0.5)) in either order (PyTorch's hardswish below opset 14)
   becomes one hard_swish step; other alpha or beta, a HardSigmoid output with a second consumer or
   that is a graph output, or a Mul by another tensor keep the steps. Every variant against
   x clamp(alpha x + beta, 0, 1) in doubles. */
static void test_onnx_hardswish_pattern(void) {
    int64_t dims[2] = {3, 7};
    float x[21], y[2][21], *outs[2];
    int k, e;
    luthier_context *ctx = onnx_ctx();
    for (e = 0; e < 21; e++) x[e] = (float)(e - 10) * 0.61f;
    x[0] = -100.0f; x[1] = NAN; x[2] = 3.0f; x[3] = -3.0f; x[4] = INFINITY; x[20] = 90.0f;
    for (k = 0; k < 7; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, n = {0, 0, 0};
        luthier_graph *gr = NULL;
        luthier_node_desc d;
        char err[512];
        const int fused = k < 2, nout = k == 3 || k == 5 ? 2 : 1;
        const double alpha = k == 2 ? 0.2 : 1.0 / 6, beta = k == 4 ? 0.4 : 0.5;
        pbw_str(&n, 1, "x");
        pbw_str(&n, 2, "h");
        pbw_str(&n, 3, "hsig");
        pbw_str(&n, 4, "HardSigmoid");
        if (k != 2) pbw_attr_f(&n, "alpha", 1.0f / 6); /* k 2: ONNX's default alpha 0.2 */
        if (k == 4) pbw_attr_f(&n, "beta", 0.4f);
        pbw_msg(&g, 1, &n);
        pbw_node(&g, "Mul", k == 1 ? "h" : k == 6 ? "z" : "x", k == 1 ? "x" : "h", "y", "mul");
        if (k == 3) pbw_node(&g, "Add", "h", "x", "z", "add"); /* a second consumer */
        if (k == 6) pbw_vi(&g, 11, "z", 2, dims);              /* h times another tensor */
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        if (nout == 2) pbw_vi(&g, 12, k == 3 ? "z" : "h", 2, dims); /* k 5: the HardSigmoid is an output too */
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", k, err);
        free(m.p);
        if (!gr) continue;
        memset(&d, 0, sizeof d);
        CHECK(luthier_graph_num_nodes(gr) == (fused ? 1 : k == 3 ? 3 : 2), "case %d: %d nodes", k, luthier_graph_num_nodes(gr));
        CHECK(luthier_graph_node_desc(gr, 0, &d) == LUTHIER_STATUS_OK && (d.op == LUTHIER_OP_HARD_SWISH) == fused, "case %d: node 0 is %s",
              k, luthier_op_name(d.op));
        if (k == 6) { /* two inputs: checked by the node count alone */
            luthier_graph_destroy(gr);
            continue;
        }
        outs[0] = y[0];
        outs[1] = y[1];
        CHECK(ctx && onnx_run_simple(ctx, gr, x, outs), "case %d runs", k);
        for (e = 0; ctx && e < 21; e++) {
            const double t = x[e], a = alpha * t + beta, hs = a < 0 ? 0 : a > 1 ? 1 : a;
            const double want[2] = {t * hs, k == 3 ? hs + t : hs};
            int o;
            if (t != t) continue; /* NaN: the clamp's comparisons decide, differently per form */
            for (o = 0; o < nout; o++)
                CHECK(onnx_close(y[o][e], want[o]), "case %d output %d x = %g: %.9g, want %.9g", k, o, t, (double)y[o][e], want[o]);
        }
        luthier_graph_destroy(gr);
    }
    luthier_context_destroy(ctx);
}

/* Tile of x [2,3] by rep: x a constant (f32, or i64 read through a Cast; + a [1] input z, so
   that the plan has an input) or the graph input at run time. */
static const float tile_cf[6] = {1.5f, -2, 3.25f, 4, -5.5f, 6};
static const int64_t tile_ci[6] = {7, -8, 9, 10, -11, 12};
static luthier_status tile_load(const int64_t *rep, int runtime, int isint, luthier_graph **g, char *err, size_t esz) {
    const int64_t dx[2] = {2, 3}, two = 2, one = 1;
    int64_t dy[2];
    pbw m = {0, 0, 0}, gr = {0, 0, 0};
    luthier_status s;
    dy[0] = rep[0] > 0 && rep[0] < 100000 ? 2 * rep[0] : 1;
    dy[1] = rep[1] > 0 && rep[1] < 100000 ? 3 * rep[1] : 1;
    pbw_init(&gr, "r", 7, 1, &two, rep, 2 * sizeof(int64_t));
    if (runtime) {
        pbw_node(&gr, "Tile", "x", "r", "y", "tile");
        pbw_vi(&gr, 11, "x", 2, dx);
    } else {
        if (isint) pbw_init(&gr, "c", 7, 2, dx, tile_ci, sizeof tile_ci);
        else pbw_init_f32(&gr, "c", 2, dx, tile_cf, 6);
        pbw_node(&gr, "Tile", "c", "r", "t", "tile");
        if (isint) pbw_cast(&gr, "t", "tf", 1);
        pbw_node(&gr, "Add", isint ? "tf" : "t", "z", "y", "add");
        pbw_vi(&gr, 11, "z", 1, &one);
    }
    pbw_vi(&gr, 12, "y", 2, dy);
    pbw_model(&m, &gr, 13);
    s = luthier_onnx_load_memory(m.p, m.n, NULL, g, err, esz);
    free(m.p);
    return s;
}

/* Tile of a constant folds at load time whatever its repeats (400 and 100 as in ssdlite's anchor
   generator; i64 too); at run time, repeats above 64 (concats of concats). Both against the
   naive y[i][j] = x[i % 2][j % 3]. Repeats with an output above the limits (2^26 elements
   folded, 2^40 at run time, or int64 overflow: UNSUPPORTED), negative or of the wrong count
   (INVALID_ARGUMENT) are refused with a message. */
static void test_onnx_tile(void) {
    static const int64_t ok[][2] = {{3, 400}, {100, 1}, {2, 70}, {1, 200}, {1, 128}, {65, 3}, {1, 1}};
    static const int64_t bad[][2] = {{(int64_t)1 << 62, (int64_t)1 << 62}, {1 << 14, 1 << 14}, {-1, 2}, {(int64_t)1 << 40, 3}};
    luthier_context *ctx = onnx_ctx();
    float z = 0.25f, xr[6] = {0.5f, 1, -1.5f, 2, 2.5f, -3};
    int k, mode;
    for (mode = 0; mode < 3; mode++) /* folded f32, folded i64, run time */
        for (k = 0; k < (int)(sizeof ok / sizeof ok[0]); k++) {
            luthier_graph *g = NULL;
            char err[512];
            const size_t rows = 2 * (size_t)ok[k][0], cols = 3 * (size_t)ok[k][1];
            float *y = (float *)test_alloc(rows * cols * sizeof(float)), *outs[1];
            size_t i, j;
            CHECK(tile_load(ok[k], mode == 2, mode == 1, &g, err, sizeof err) == LUTHIER_STATUS_OK, "mode %d case %d: %s", mode, k, err);
            if (g && mode < 2) CHECK(onnx_count_op(g, LUTHIER_OP_CONCAT) == 0 && luthier_graph_num_nodes(g) == 1, "mode %d case %d: not folded", mode, k);
            outs[0] = y;
            if (g && ctx) CHECK(onnx_run_simple(ctx, g, mode == 2 ? xr : &z, outs), "mode %d case %d runs", mode, k);
            for (i = 0; g && ctx && i < rows; i++)
                for (j = 0; j < cols; j++) {
                    const int64_t ii = (int64_t)(i % 2 * 3 + j % 3);
                    const float want = mode == 2 ? xr[ii] : mode == 1 ? (float)tile_ci[ii] + z : tile_cf[ii] + z;
                    if (y[i * cols + j] != want) {
                        CHECK(0, "mode %d case %d y[%zu][%zu] = %g, want %g", mode, k, i, j, (double)y[i * cols + j], (double)want);
                        i = rows;
                        break;
                    }
                }
            free(y);
            luthier_graph_destroy(g);
        }
    for (mode = 0; mode < 2; mode++)
        for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
            luthier_graph *g = NULL;
            char err[512];
            const luthier_status s = tile_load(bad[k], mode, 0, &g, err, sizeof err);
            if (mode == 1 && k == 1) { /* 6 x 2^28 elements: within the run-time limit */
                luthier_graph_destroy(g);
                continue;
            }
            CHECK(s == (k == 2 ? LUTHIER_STATUS_INVALID_ARGUMENT : LUTHIER_STATUS_UNSUPPORTED) && !g && strstr(err, "'tile'") && strstr(err, k == 2 ? "negative" : "more than"),
                  "mode %d case %d: status %d: %s", mode, k, (int)s, err);
            luthier_graph_destroy(g);
        }
    { /* repeats of the wrong count */
        const int64_t rep[2] = {2, 2};
        luthier_graph *g = NULL;
        char err[512];
        pbw m = {0, 0, 0}, gr = {0, 0, 0};
        const int64_t dx[2] = {2, 3}, one = 1;
        pbw_init(&gr, "r", 7, 1, &one, rep, sizeof(int64_t));
        pbw_node(&gr, "Tile", "x", "r", "y", "tile");
        pbw_vi(&gr, 11, "x", 2, dx);
        pbw_vi(&gr, 12, "y", 2, dx);
        pbw_model(&m, &gr, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && !g &&
                  strstr(err, "repeats must be"), "wrong count: %s", err);
        free(m.p);
    }
    luthier_context_destroy(ctx);
}

/* The tanh GELU written out in elementary operators, as exporters write it (GPT-2's gelu_new:
   Pow or Mul for the cube, constants on either side, the half first, last, on (1 + tanh), or
   as / 2), loads as one GELU (approximate) and near misses (another constant or exponent, a
   rank-1 constant, an intermediate with another consumer) load as written; every case against
   the same model loaded with no_patterns and against the formula of what it writes. The last
   case feeds it from a Gemm: one plan step (the dense with its activation). */
typedef struct gelu_form {
    const char *n[10][4]; /* op, input 0, input 1 (NULL: none), output */
    int fused;
    double half, k1, k2, e; /* half x (1 + tanh(k1 (x + k2 x^e))) */
    const char *out2;     /* a second graph output, or NULL */
} gelu_form;

static const gelu_form gelu_forms[] = {
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05", "h"}, {"Mul", "h", "a", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Mul", "x", "x", "s"}, {"Mul", "x", "s", "p"}, {"Mul", "c044", "p", "w"}, {"Add", "w", "x", "v"},
      {"Mul", "csq", "v", "u"}, {"Tanh", "u", NULL, "t"}, {"Add", "c1", "t", "a"}, {"Mul", "x", "a", "m"},
      {"Mul", "m", "c05", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Mul", "x", "x", "s"}, {"Mul", "s", "x", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"},
      {"Mul", "v", "csq", "u"}, {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "a", "x", "m"},
      {"Div", "m", "c2", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "a", "c05", "m"}, {"Mul", "x", "m", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "c044", "p", "w"}, {"Add", "w", "x", "v"}, {"Mul", "csq", "v", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "c1", "t", "a"}, {"Div", "a", "c2", "m"}, {"Mul", "m", "x", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Div", "x", "c2", "h"}, {"Mul", "a", "h", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3i", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csqf", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "c05", "x", "h"}, {"Mul", "h", "a", "y"}},
     1, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    /* near misses */
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c04", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05", "h"}, {"Mul", "h", "a", "y"}},
     0, 0.5, 0.7978845608028654, 0.04, 3, NULL},
    {{{"Pow", "x", "c2", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05", "h"}, {"Mul", "h", "a", "y"}},
     0, 0.5, 0.7978845608028654, 0.044715, 2, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "c08", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05", "h"}, {"Mul", "h", "a", "y"}},
     0, 0.5, 0.8, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05v", "h"}, {"Mul", "h", "a", "y"}},
     0, 0.5, 0.7978845608028654, 0.044715, 3, NULL},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "c05", "h"}, {"Mul", "h", "a", "y"}},
     0, 0.5, 0.7978845608028654, 0.044715, 3, "t"},
    {{{"Mul", "x", "x", "s"}, {"Mul", "x", "s", "p"}, {"Mul", "c044", "p", "w"}, {"Add", "w", "x", "v"},
      {"Mul", "csq", "v", "u"}, {"Tanh", "u", NULL, "t"}, {"Add", "c1", "t", "a"}, {"Mul", "x", "a", "m"},
      {"Mul", "m", "c05", "y"}},
     0, 0.5, 0.7978845608028654, 0.044715, 3, "s"},
    {{{"Pow", "x", "c3", "p"}, {"Mul", "p", "c044", "w"}, {"Add", "x", "w", "v"}, {"Mul", "v", "csq", "u"},
      {"Tanh", "u", NULL, "t"}, {"Add", "t", "c1", "a"}, {"Mul", "x", "a", "m"}, {"Mul", "m", "c04", "y"}},
     0, 0.04, 0.7978845608028654, 0.044715, 3, NULL},
};

static float gelu_w(int k) { return (float)(k * 7 % 11 - 5) * 0.3f; }

/* x [3,7] (or, with gemm, in [3,5] through Gemm to x) -> the form; constants as initializers */
static void gelu_form_model(pbw *m, const gelu_form *f, int gemm) {
    static const struct { const char *name; float v; } scal[] = {{"c3", 3}, {"c044", 0.044715f}, {"csq", 0.7978845608f},
        {"csqf", 0.79788456f}, {"c1", 1}, {"c05", 0.5f}, {"c2", 2}, {"c04", 0.04f}, {"c08", 0.8f}};
    const int64_t dims[2] = {3, 7}, dx[2] = {3, 5}, one = 1, three = 3;
    pbw g = {0, 0, 0};
    float wt[35], bias[7];
    unsigned k;
    for (k = 0; k < 10 && f->n[k][0]; k++) pbw_node(&g, f->n[k][0], f->n[k][1], f->n[k][2], f->n[k][3], f->n[k][3]);
    for (k = 0; k < sizeof scal / sizeof scal[0]; k++) pbw_init_f32(&g, scal[k].name, 0, NULL, &scal[k].v, 1);
    pbw_init_f32(&g, "c05v", 1, &one, &scal[5].v, 1);
    pbw_init(&g, "c3i", 7, 0, NULL, &three, sizeof three);
    if (gemm) {
        const char *gi[3] = {"in", "W", "B"};
        for (k = 0; k < 35; k++) wt[k] = gelu_w((int)k);
        for (k = 0; k < 7; k++) bias[k] = (float)k * 0.25f - 1.0f;
        pbw_init_f32(&g, "W", 2, (const int64_t[2]){5, 7}, wt, 35);
        pbw_init_f32(&g, "B", 1, &dims[1], bias, 7);
        pbw_node_k(&g, "Gemm", gi, 3, "x", NULL, 0);
    }
    pbw_vi(&g, 11, gemm ? "in" : "x", 2, gemm ? dx : dims);
    pbw_vi(&g, 12, "y", 2, dims);
    if (f->out2) pbw_vi(&g, 12, f->out2, 2, dims);
    pbw_model(m, &g, 13);
}

/* what form f computes from x (double) */
static double gelu_form_ref(const gelu_form *f, double x) {
    const double inner = f->k1 * (x + f->k2 * (f->e == 3 ? x * x * x : x * x));
    return f->half * x * (1 + tanh(inner));
}

static void test_onnx_gelu_tanh_pattern(void) {
    const int nf = (int)(sizeof gelu_forms / sizeof gelu_forms[0]);
    float x[21], xin[15], y[2][21], yu[2][21], *outs[2], *uouts[2];
    luthier_context *ctx = onnx_ctx();
    luthier_onnx_options nop;
    int k, e;
    memset(&nop, 0, sizeof nop);
    nop.no_patterns = 1;
    for (e = 0; e < 21; e++) x[e] = (float)(e - 12) * 0.61f;
    for (e = 0; e < 15; e++) xin[e] = (float)((e * 5) % 15 - 7) * 0.17f;
    x[0] = NAN; x[1] = INFINITY; x[2] = 1e20f; x[3] = -1e-3f; x[20] = 9.5f;
    for (k = 0; k <= nf; k++) { /* k == nf: form 0 behind a Gemm */
        const gelu_form *f = &gelu_forms[k < nf ? k : 0];
        const int gemm = k == nf, two = f->out2 != NULL;
        pbw m = {0, 0, 0};
        luthier_graph *gr = NULL, *gu = NULL;
        luthier_node_desc d;
        char err[512];
        gelu_form_model(&m, f, gemm);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", k, err);
        CHECK(luthier_onnx_load_memory(m.p, m.n, &nop, &gu, err, sizeof err) == LUTHIER_STATUS_OK, "case %d unfused: %s", k, err);
        free(m.p);
        if (!gr || !gu || !ctx) {
            luthier_graph_destroy(gr);
            luthier_graph_destroy(gu);
            continue;
        }
        CHECK(onnx_count_op(gr, LUTHIER_OP_GELU) == f->fused && onnx_count_op(gu, LUTHIER_OP_GELU) == 0, "case %d: %d GELUs",
              k, onnx_count_op(gr, LUTHIER_OP_GELU));
        if (f->fused) {
            memset(&d, 0, sizeof d);
            CHECK(luthier_graph_num_nodes(gr) == 1 + gemm, "case %d: %d nodes", k, luthier_graph_num_nodes(gr));
            CHECK(luthier_graph_node_desc(gr, gemm, &d) == LUTHIER_STATUS_OK && d.op == LUTHIER_OP_GELU && d.approximate == 1,
                  "case %d: node %d is %s approximate %d", k, gemm, luthier_op_name(d.op), d.approximate);
        }
        if (gemm) {
            luthier_plan *p = NULL;
            luthier_plan_info pi;
            CHECK(luthier_plan_create(ctx, gr, NULL, &p) == LUTHIER_STATUS_OK && luthier_plan_get_info(p, &pi) == LUTHIER_STATUS_OK &&
                      pi.num_steps == 1, "gemm + gelu: %d steps", p ? pi.num_steps : -1);
            luthier_plan_destroy(p);
        }
        outs[0] = y[0], outs[1] = y[1], uouts[0] = yu[0], uouts[1] = yu[1];
        CHECK(onnx_run_simple(ctx, gr, gemm ? xin : x, outs) && onnx_run_simple(ctx, gu, gemm ? xin : x, uouts), "case %d runs", k);
        for (e = 0; e < 21; e++) {
            double xv = x[e], want, tol;
            int o, i;
            if (gemm) /* x [3,7] = in [3,5] W [5,7] + B */
                for (xv = (double)(e % 7) * 0.25 - 1.0, i = 0; i < 5; i++) xv += (double)xin[e / 7 * 5 + i] * (double)gelu_w(i * 7 + e % 7);
            want = gelu_form_ref(f, xv);
            tol = (gemm ? 1e-5 : 1e-6) * (fabs(want) > 1 ? fabs(want) : 1);
            CHECK(onnx_close(y[0][e], want) || fabs(y[0][e] - want) <= tol, "case %d x = %g: %.9g, want %.9g", k, xv, (double)y[0][e], want);
            CHECK(onnx_close(y[0][e], yu[0][e]) || fabs(y[0][e] - yu[0][e]) <= tol, "case %d x = %g: %.9g, unfused %.9g", k, xv,
                  (double)y[0][e], (double)yu[0][e]);
            for (o = 1; o < 1 + two; o++) CHECK(y[o][e] == yu[o][e] || (y[o][e] != y[o][e] && yu[o][e] != yu[o][e]), "case %d output %d x = %g", k, o, xv);
        }
        luthier_graph_destroy(gr);
        luthier_graph_destroy(gu);
    }
    luthier_context_destroy(ctx);
}

/* The tanh GELU chain with a node of the wrong arity (Tanh of two inputs, Mul or Pow of one):
   refused as INVALID_ARGUMENT naming the node, before the matcher reads it. */
static void test_onnx_gelu_tanh_arity(void) {
    static const char *const bad[3][4] = {{"Tanh", "u", "u", "t"}, {"Mul", "h", NULL, "y"}, {"Pow", "x", NULL, "p"}};
    int k, i;
    for (k = 0; k < 3; k++) {
        gelu_form f = gelu_forms[0];
        pbw m = {0, 0, 0};
        luthier_graph *g = NULL;
        char err[512], want[64];
        luthier_status s;
        for (i = 0; i < 10 && f.n[i][0]; i++)
            if (!strcmp(f.n[i][3], bad[k][3])) memcpy(f.n[i], bad[k], sizeof bad[k]);
        gelu_form_model(&m, &f, 0);
        s = luthier_onnx_load_memory(m.p, m.n, NULL, &g, err, sizeof err);
        snprintf(want, sizeof want, "'%s' (%s)", bad[k][3], bad[k][0]);
        CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT && !g && strstr(err, want), "case %d: status %d: %s", k, (int)s, err);
        free(m.p);
        luthier_graph_destroy(g);
    }
}

/* DequantizeLinear of int8 (per axis), uint8 (int32_data, per tensor) and int32 (bias-like, per
   axis) constants, and QuantizeLinear of a float constant (half to even, saturation), folded at
   load time: exactly scale * (q - zero) in float32. */
static void test_onnx_quant_constants(void) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    int64_t d23[2] = {2, 3}, d2 = 2, d3 = 3, d0 = 0;
    static const int8_t wq[6] = {-128, -1, 0, 1, 50, 127}, wz[2] = {-1, 3}, zero8 = 0;
    static const int32_t uq[6] = {0, 7, 128, 200, 255, 1}, bq[3] = {-100000, 0, 123456789}, bz[3] = {0, 0, 0};
    static const uint8_t uz = 128;
    static const float ws[2] = {0.5f, 0.25f}, us = 0.1f, bs[3] = {1e-3f, 2e-3f, 3e-4f}, one = 1.0f;
    static const float fq[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f}, fq_want[6] = {0, 2, 2, 0, -2, 127};
    const char *dq1[3] = {"wq", "ws", "wz"}, *dq2[3] = {"uq", "us", "uz"}, *dq3[3] = {"bq", "bs", "bz"};
    const char *q4[3] = {"fq", "one", "zero8"}, *dq4[3] = {"fq_q", "one", "zero8"};
    float x[6] = {0, 0, 0, 0, 0, 0}, y[4][6];
    float *outs[4];
    luthier_graph *gr = NULL;
    luthier_calibration *cal = NULL;
    luthier_onnx_options o;
    luthier_context *ctx = onnx_ctx();
    char err[512];
    int i, k;
    pbw t = {0, 0, 0};
    pbw_init(&g, "wq", 3, 2, d23, wq, sizeof wq);
    pbw_init_f32(&g, "ws", 1, &d2, ws, 2);
    pbw_init(&g, "wz", 3, 1, &d2, wz, sizeof wz);
    /* uint8 in int32_data (field 5), not raw */
    pbw_int(&t, 1, 2);
    pbw_int(&t, 1, 3);
    pbw_int(&t, 2, 2);
    for (i = 0; i < 6; i++) pbw_int(&t, 5, uq[i]);
    pbw_str(&t, 8, "uq");
    pbw_msg(&g, 5, &t);
    pbw_init_f32(&g, "us", 0, &d0, &us, 1);
    pbw_init(&g, "uz", 2, 0, &d0, &uz, 1);
    pbw_init(&g, "bq", 6, 1, &d3, bq, sizeof bq);
    pbw_init_f32(&g, "bs", 1, &d3, bs, 3);
    pbw_init(&g, "bz", 6, 1, &d3, bz, sizeof bz);
    pbw_init_f32(&g, "fq", 2, d23, fq, 6);
    pbw_init_f32(&g, "one", 0, &d0, &one, 1);
    pbw_init(&g, "zero8", 3, 0, &d0, &zero8, 1);
    pbw_node_k(&g, "DequantizeLinear", dq1, 3, "w1", "axis", 0);
    pbw_node_k(&g, "DequantizeLinear", dq2, 3, "w2", NULL, 0);
    pbw_node_k(&g, "DequantizeLinear", dq3, 3, "w3", "axis", 0);
    pbw_node_k(&g, "QuantizeLinear", q4, 3, "fq_q", NULL, 0);
    pbw_node_k(&g, "DequantizeLinear", dq4, 3, "w4", NULL, 0);
    pbw_node(&g, "Add", "x", "w1", "y1", "add1");
    pbw_node(&g, "Add", "x", "w2", "y2", "add2");
    pbw_node(&g, "Add", "x", "w3", "y3", "add3");
    pbw_node(&g, "Add", "x", "w4", "y4", "add4");
    pbw_vi(&g, 11, "x", 2, d23);
    pbw_vi(&g, 12, "y1", 2, d23);
    pbw_vi(&g, 12, "y2", 2, d23);
    pbw_vi(&g, 12, "y3", 2, d23);
    pbw_vi(&g, 12, "y4", 2, d23);
    pbw_model(&m, &g, 13);
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK, "calibration");
    memset(&o, 0, sizeof o);
    o.calibration = cal;
    CHECK(luthier_onnx_load_memory(m.p, m.n, &o, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    for (k = 0; k < 4; k++) outs[k] = y[k];
    if (gr && ctx) {
        CHECK(onnx_cal_count(cal, gr, 0) == 0, "constants got quantization parameters");
        CHECK(onnx_run_simple(ctx, gr, x, outs), "run: %s", luthier_context_error(ctx));
        for (i = 0; i < 6; i++) {
            float w1 = ws[i / 3] * (float)(wq[i] - wz[i / 3]), w2 = us * (float)(uq[i] - uz), w3 = bs[i % 3] * (float)(bq[i % 3] - bz[i % 3]);
            CHECK(y[0][i] == w1, "int8 per axis [%d]: %.9g, want %.9g", i, (double)y[0][i], (double)w1);
            CHECK(y[1][i] == w2, "uint8 per tensor [%d]: %.9g, want %.9g", i, (double)y[1][i], (double)w2);
            CHECK(y[2][i] == w3, "int32 per axis [%d]: %.9g, want %.9g", i, (double)y[2][i], (double)w3);
            CHECK(y[3][i] == fq_want[i], "QuantizeLinear of a constant [%d]: %.9g, want %.9g", i, (double)y[3][i], (double)fq_want[i]);
        }
    }
    luthier_graph_destroy(gr);
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
    free(m.p);
}

/* Q/DQ of activations: the parameters land in the calibration (int8 zero point + 128), the graph
   runs unquantized; a range that starts at 0 keeps ONNX's saturation as a clip. */
static void test_onnx_quant_activations(void) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    int64_t d4[2] = {1, 4}, d0 = 0;
    static const float su = 0.1f, s8 = 0.05f;
    static const uint8_t zu = 0;
    static const int8_t z8 = -10;
    const char *q1[3] = {"x", "su", "zu"}, *dq1[3] = {"xu", "su", "zu"}, *q2[3] = {"x", "s8", "z8"}, *dq2[3] = {"xs", "s8", "z8"};
    float x[4] = {-1.0f, 0.05f, 0.3f, 100.0f}, y[2][4], s = 0;
    float *outs[2];
    int32_t z = -1;
    int tx = -1, tu = -1, ts = -1, i;
    luthier_graph *gr = NULL;
    luthier_calibration *cal = NULL;
    luthier_onnx_options o;
    luthier_context *ctx = onnx_ctx();
    char err[512];
    pbw_init_f32(&g, "su", 0, &d0, &su, 1);
    pbw_init(&g, "zu", 2, 0, &d0, &zu, 1);
    pbw_init_f32(&g, "s8", 0, &d0, &s8, 1);
    pbw_init(&g, "z8", 3, 0, &d0, &z8, 1);
    pbw_node_k(&g, "QuantizeLinear", q1, 3, "xu", NULL, 0);
    pbw_node_k(&g, "DequantizeLinear", dq1, 3, "yu", NULL, 0);
    pbw_node_k(&g, "QuantizeLinear", q2, 3, "xs", NULL, 0);
    pbw_node_k(&g, "DequantizeLinear", dq2, 3, "ys", NULL, 0);
    pbw_vi(&g, 11, "x", 2, d4);
    pbw_vi(&g, 12, "yu", 2, d4);
    pbw_vi(&g, 12, "ys", 2, d4);
    pbw_model(&m, &g, 13);
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK, "calibration");
    memset(&o, 0, sizeof o);
    o.calibration = cal;
    CHECK(luthier_onnx_load_memory(m.p, m.n, &o, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    outs[0] = y[0];
    outs[1] = y[1];
    if (gr && ctx) {
        CHECK(luthier_graph_find_tensor(gr, "x", &tx) == LUTHIER_STATUS_OK && luthier_graph_find_tensor(gr, "xu", &tu) == LUTHIER_STATUS_OK &&
              luthier_graph_find_tensor(gr, "xs", &ts) != LUTHIER_STATUS_OK, "tensors: x, the clip xu; xs is x itself");
        CHECK(luthier_calibration_get(cal, tx, &s, &z) == LUTHIER_STATUS_OK && s == s8 && z == -10 + 128, "x: %g %d", (double)s, (int)z);
        CHECK(luthier_calibration_get(cal, tu, &s, &z) == LUTHIER_STATUS_OK && s == su && z == 0, "xu: %g %d", (double)s, (int)z);
        CHECK(onnx_cal_count(cal, gr, 0) == 2, "%d tensors with parameters", onnx_cal_count(cal, gr, 0));
        CHECK(onnx_run_simple(ctx, gr, x, outs), "run: %s", luthier_context_error(ctx));
        for (i = 0; i < 4; i++) {
            float want = x[i] < 0 ? 0.0f : x[i] > su * 255.0f ? su * 255.0f : x[i];
            CHECK(y[0][i] == want, "zero point 0: y[%d] = %.9g, want %.9g (clamped like the uint8 range)", i, (double)y[0][i], (double)want);
            CHECK(y[1][i] == x[i], "int8: y[%d] = %.9g, want x %.9g (unquantized)", i, (double)y[1][i], (double)x[i]);
        }
    }
    luthier_graph_destroy(gr);
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
    free(m.p);
}

/* QuantizeLinear with zero point 0 after an activation: no clip where the activation gives no
   negative values (softplus, hard sigmoid, thresholded relu with alpha >= 0), a clip otherwise. */
static void test_onnx_quant_after_activations(void) {
    static const struct { const char *op; float alpha; int clips; } cases[] = {
        {"Softplus", NAN, 0}, {"HardSigmoid", NAN, 0}, {"ThresholdedRelu", 0.0f, 0}, {"ThresholdedRelu", -0.5f, 1},
        {"Elu", NAN, 1}, {"HardSwish", NAN, 1},
    };
    int64_t d4[2] = {1, 4}, d0 = 0;
    static const float su = 0.1f;
    static const uint8_t zu = 0;
    const char *q1[3] = {"a", "su", "zu"}, *dq1[3] = {"au", "su", "zu"};
    unsigned k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, n = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        pbw_init_f32(&g, "su", 0, &d0, &su, 1);
        pbw_init(&g, "zu", 2, 0, &d0, &zu, 1);
        pbw_str(&n, 1, "x");
        pbw_str(&n, 2, "a");
        pbw_str(&n, 3, "a");
        pbw_str(&n, 4, cases[k].op);
        if (cases[k].alpha == cases[k].alpha) pbw_attr_f(&n, "alpha", cases[k].alpha);
        pbw_msg(&g, 1, &n);
        pbw_node_k(&g, "QuantizeLinear", q1, 3, "au", NULL, 0);
        pbw_node_k(&g, "DequantizeLinear", dq1, 3, "y", NULL, 0);
        pbw_vi(&g, 11, "x", 2, d4);
        pbw_vi(&g, 12, "y", 2, d4);
        pbw_model(&m, &g, 14); /* HardSwish is defined from opset 14 */
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", cases[k].op, err);
        if (gr)
            CHECK(onnx_count_op(gr, LUTHIER_OP_CLIP) == cases[k].clips, "%s (alpha %g): %d clips, want %d", cases[k].op,
                  (double)cases[k].alpha, onnx_count_op(gr, LUTHIER_OP_CLIP), cases[k].clips);
        luthier_graph_destroy(gr);
        free(m.p);
    }
}

/* Quantized models the loader refuses: status, a message, no graph, the calibration unchanged. */
static void test_onnx_quant_errors(void) {
    static const struct {
        const char *what, *want;
        luthier_status st;
    } cases[] = {
        {"per-axis QuantizeLinear of an activation", "per-axis", LUTHIER_STATUS_UNSUPPORTED},
        {"uint8 graph input", "quantized graph inputs", LUTHIER_STATUS_UNSUPPORTED},
        {"missing scale", "missing", LUTHIER_STATUS_INVALID_ARGUMENT},
        {"scale computed at run time", "must be a constant", LUTHIER_STATUS_UNSUPPORTED},
        {"uint8 graph output", "quantized graph outputs", LUTHIER_STATUS_UNSUPPORTED},
        {"DequantizeLinear with other parameters", "must be the same", LUTHIER_STATUS_UNSUPPORTED},
        {"quantized integers into Add", "holds quantized", LUTHIER_STATUS_UNSUPPORTED},
        {"activation scale 0", "positive", LUTHIER_STATUS_INVALID_ARGUMENT},
        {"negative scale", "not negative", LUTHIER_STATUS_INVALID_ARGUMENT},
        {"QLinearConv with run-time weights", "constant 4-D integer", LUTHIER_STATUS_UNSUPPORTED},
    };
    int64_t d13[2] = {1, 3}, d3 = 3, d0 = 0, d1111[4] = {1, 1, 1, 1}, d1311[4] = {1, 3, 1, 1};
    static const float s3[3] = {0.1f, 0.2f, 0.3f}, s = 0.1f, s2 = 0.2f, szero = 0.0f, sneg = -1.0f;
    static const uint8_t z3[3] = {1, 2, 3}, z = 5;
    luthier_calibration *cal = NULL;
    char err[512];
    int k;
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK && cal, "calibration");
    if (!cal) return;
    CHECK(luthier_calibration_set_params(cal, 0, 0.5f, 3) == LUTHIER_STATUS_OK, "set");
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0};
        luthier_graph *gr = NULL;
        luthier_onnx_options o;
        luthier_status st;
        float cs = 0;
        int32_t cz = 0;
        const char *q[3] = {"x", "s", "z"}, *dq[3] = {"xq", "s", "z"};
        pbw_init_f32(&g, "s", 0, &d0, k == 7 ? &szero : k == 8 ? &sneg : &s, 1);
        pbw_init(&g, "z", 2, 0, &d0, &z, 1);
        switch (k) {
        case 0:
            pbw_init_f32(&g, "s3", 1, &d3, s3, 3);
            pbw_init(&g, "z3", 2, 1, &d3, z3, 3);
            q[1] = dq[1] = "s3";
            q[2] = dq[2] = "z3";
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", "axis", 1);
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", "axis", 1);
            break;
        case 1:
            dq[0] = "x";
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", NULL, 0);
            break;
        case 2:
            pbw_node_k(&g, "QuantizeLinear", q, 1, "xq", NULL, 0);
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", NULL, 0);
            break;
        case 3:
            q[1] = "rs";
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", NULL, 0);
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", NULL, 0);
            break;
        case 4:
            pbw_node_k(&g, "QuantizeLinear", q, 3, "y", NULL, 0);
            break;
        case 5:
            pbw_init_f32(&g, "s2", 0, &d0, &s2, 1);
            dq[1] = "s2";
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", NULL, 0);
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", NULL, 0);
            break;
        case 6:
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", NULL, 0);
            pbw_node(&g, "Add", "xq", "x", "y", "y");
            break;
        case 7: case 8:
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", NULL, 0);
            pbw_node_k(&g, "DequantizeLinear", dq, 3, "y", NULL, 0);
            break;
        default: {
            const char *qc[8] = {"xq", "s", "z", "w", "s", "z", "s", "z"}, *dy[3] = {"yq", "s", "z"};
            pbw_node_k(&g, "QuantizeLinear", q, 3, "xq", NULL, 0);
            pbw_node_k(&g, "QLinearConv", qc, 8, "yq", NULL, 0);
            pbw_node_k(&g, "DequantizeLinear", dy, 3, "y", NULL, 0);
            pbw_vi(&g, 11, "x", 4, d1311);
            pbw_vi(&g, 11, "w", 4, d1311);
            pbw_vi(&g, 12, "y", 4, d1111);
            break;
        }
        }
        if (k < 9) {
            pbw_vi_t(&g, 11, "x", k == 1 ? 2 : 1, 2, d13);
            if (k == 3) pbw_vi(&g, 11, "rs", 0, &d0);
            pbw_vi(&g, 12, "y", 2, d13);
        }
        pbw_model(&m, &g, 13);
        memset(&o, 0, sizeof o);
        o.calibration = cal;
        err[0] = 0;
        st = luthier_onnx_load_memory(m.p, m.n, &o, &gr, err, sizeof err);
        CHECK(st == cases[k].st && gr == NULL && strstr(err, cases[k].want), "%s: %s (%s)", cases[k].what, err, luthier_status_string(st));
        CHECK(onnx_cal_count(cal, NULL, 64) == 1 && luthier_calibration_get(cal, 0, &cs, &cz) == LUTHIER_STATUS_OK && cs == 0.5f && cz == 3,
              "%s: the calibration changed", cases[k].what);
        if (k == 1 || k == 4 || !T.quick) printf("    %-42s -> %s\n", cases[k].what, err);
        luthier_graph_destroy(gr);
        free(m.p);
    }
    luthier_calibration_destroy(cal);
}

typedef struct onnx_qparam {
    char name[128];
    double scale;
    int zero;
} onnx_qparam;

/* "<tensor> <scale> <zero point>" lines ('#' comments): the count, or -1 */
static int onnx_read_params(const char *path, onnx_qparam *p, int max) {
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
        if (n == max || sscanf(line, "%127s %lf %d", p[n].name, &p[n].scale, &p[n].zero) != 3) {
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    return n;
}

/* A quantized model of tests/onnx_qdq.py loaded with a calibration: exactly the model's
   parameters on the expected tensors (params.txt); every output (outputs[k], whose quantization
   step is the scale of tensor step_of[k]) against the reference of the quantized model:
   - an fp32 plan (the model unquantized: no rounding at the quantization points) within 3
     steps (the generator measures 1.09, 0.72, 1.23);
   - an int8 plan (the model's scales and zero points) within 2 steps. Where the model's
     integers are reproduced (int8 weights symmetric per channel, max |q| = 127) only
     requantization ties differ; qlinear's QLinearMatMul has uint8 per-tensor weights that the
     plan re-quantizes per column: 1.0 step (the generator's emulation says the same). qdq_cnn
     gives 2.00: the plan's global average pool keeps its input's parameters (those of 'm') and
     rounds the pooled values to that step, 4x the model's own step of the pooled tensor (a
     double rounding the model does not have; rounding only once there gives 0 steps);
   want_q8: the convolution and dense steps the int8 plan must run on uint8. */
static void onnx_check_quantized(const char *name, int nq, const char *const *outputs, const char *const *step_of, int want_q8) {
    char path[1024], dir[512], err[512], msg[512];
    luthier_onnx_tensor ins[4], outs[4];
    onnx_qparam want[64];
    luthier_onnx_options o;
    luthier_calibration *cal = NULL;
    luthier_graph *g = NULL;
    luthier_context *ctx = onnx_ctx();
    int nin, nout, nw, j, k, t;
    snprintf(dir, sizeof dir, "%s/%s", ONNX_MODELS_DIR, name);
    nin = onnx_read_set(dir, "input", ins, 4);
    nout = onnx_read_set(dir, "output", outs, 4);
    snprintf(path, sizeof path, "%s/params.txt", dir);
    nw = onnx_read_params(path, want, 64);
    CHECK(nin == 1 && nout == nq && nw > 0, "%s: reference data missing or malformed in %s (run /usr/bin/python3 tests/onnx_qdq.py)", name, dir);
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK, "calibration");
    memset(&o, 0, sizeof o);
    o.calibration = cal;
    snprintf(path, sizeof path, "%s/%s.onnx", ONNX_MODELS_DIR, name);
    CHECK(luthier_onnx_load(path, &o, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", name, err);
    if (g && ctx && cal && nin == 1 && nout == nq && nw > 0) {
        luthier_plan *p = NULL;
        luthier_plan_desc pd;
        for (j = 0; j < nw; j++) {
            float s = 0;
            int32_t z = -1;
            if (luthier_graph_find_tensor(g, want[j].name, &t) != LUTHIER_STATUS_OK) {
                CHECK(0, "%s: the graph has no tensor '%s'", name, want[j].name);
                continue;
            }
            CHECK(luthier_calibration_get(cal, t, &s, &z) == LUTHIER_STATUS_OK && s == (float)want[j].scale && z == want[j].zero,
                  "%s: tensor '%s' has scale %.9g zero point %d, want %.9g %d", name, want[j].name, (double)s, (int)z, want[j].scale,
                  want[j].zero);
        }
        CHECK(onnx_cal_count(cal, g, 0) == nw, "%s: %d tensors have parameters, want %d", name, onnx_cal_count(cal, g, 0), nw);
        for (k = 0; k < nq; k++) {
            double step = 0, e32 = -1, e8 = -1;
            long bad;
            int oi = -1;
            for (j = 0; j < nout; j++)
                if (!strcmp(outs[j].name, outputs[k])) oi = j;
            for (j = 0; j < nw; j++)
                if (!strcmp(want[j].name, step_of[k])) step = (float)want[j].scale;
            CHECK(oi >= 0 && step > 0, "%s: output '%s' or the parameters of '%s' missing", name, outputs[k], step_of[k]);
            if (oi < 0 || !(step > 0)) continue;
            bad = onnx_run_compare(ctx, g, NULL, ins, nin, &outs[oi], 1, 0, 3 * step, &e32, msg, sizeof msg);
            CHECK(bad == 0, "%s: fp32 plan: %s (max error %.2f steps)", name, msg, e32 / step);
            bad = onnx_run_compare(ctx, g, cal, ins, nin, &outs[oi], 1, 0, 2 * step * (1 + 1e-5), &e8, msg, sizeof msg);
            CHECK(bad == 0, "%s: int8 plan: %s (max error %.2f steps)", name, msg, e8 / step);
            printf("    %-8s %-7s max |error| vs the quantized model: fp32 plan %.2f steps, int8 plan %.2f steps (step %.4g)\n", name,
                   outputs[k], e32 / step, e8 / step, step);
        }
        /* the int8 plan does run the convolutions and dense layers on uint8 */
        memset(&pd, 0, sizeof pd);
        pd.int8 = cal;
        CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "%s: int8 plan: %s", name, luthier_context_error(ctx));
        if (p) {
            luthier_plan_info pi;
            luthier_step_info si;
            int q8 = 0, n8 = 0;
            luthier_plan_get_info(p, &pi);
            for (j = 0; j < pi.num_steps; j++)
                if (luthier_plan_step_info(p, j, &si) == LUTHIER_STATUS_OK && si.int8) {
                    n8++;
                    q8 += si.node >= 0 && (si.op == LUTHIER_OP_CONV2D || si.op == LUTHIER_OP_DENSE);
                }
            CHECK(q8 == want_q8, "%s: %d convolution/dense steps run int8, want %d", name, q8, want_q8);
            printf("    %-8s int8 plan: %d of %d steps on uint8 activations, %d convolution/dense\n", name, n8, pi.num_steps, q8);
            luthier_plan_destroy(p);
        }
    }
    for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]);
    for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]);
    luthier_graph_destroy(g);
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
}

static void test_onnx_qdq_cnn(void) {
    static const char *const outputs[1] = {"y"}, *const step_of[1] = {"lf"};
    onnx_check_quantized("qdq_cnn", 1, outputs, step_of, 4);
}

static void test_onnx_qlinear(void) {
    static const char *const outputs[2] = {"feat", "logits"}, *const step_of[2] = {"h2", "yq"};
    onnx_check_quantized("qlinear", 2, outputs, step_of, 3);
}

/* The hostile models of tests/data/onnx/hostile (tests/onnx_hostile.py writes them and their
   MANIFEST): each load fails with the listed status and a message holding the listed words;
   none crashes, overflows or leaks (this runs under ASan/UBSan in `make sanitize`). */
static luthier_status onnx_status_named(const char *name) {
#define X(e, text) if (strcmp(name, #e) == 0) return LUTHIER_STATUS_##e;
    LUTHIER_STATUS_LIST(X)
#undef X
    return (luthier_status)-1;
}

static void test_onnx_hostile(void) {
    FILE *mf = fopen("tests/data/onnx/hostile/MANIFEST", "r");
    char line[512], file[128], status[64], path[256], err[512];
    int n = 0;
    CHECK(mf != NULL, "tests/data/onnx/hostile/MANIFEST is missing");
    if (!mf) return;
    while (fgets(line, sizeof line, mf)) {
        luthier_graph *gr = (luthier_graph *)1;
        luthier_status s, want;
        int used = 0;
        const char *words;
        if (line[0] == '#' || sscanf(line, "%127s %63s %n", file, status, &used) != 2) continue;
        words = line + used;
        line[strcspn(line, "\n")] = 0;
        want = onnx_status_named(status);
        snprintf(path, sizeof path, "tests/data/onnx/hostile/%s", file);
        s = luthier_onnx_load(path, NULL, &gr, err, sizeof err);
        CHECK(s == want && gr == NULL && strstr(err, words), "%s: status %s, want %s with '%s': %s", file,
              luthier_status_string(s), status, words, err);
        if (s == LUTHIER_STATUS_OK) luthier_graph_destroy(gr);
        n++;
    }
    fclose(mf);
    CHECK(n >= 14, "only %d hostile models listed", n);
}

/* Paths that are not regular files are refused at once: a directory (its size reads as
   LONG_MAX) and a FIFO (whose open blocks until a writer comes, forever). */
static void test_onnx_not_regular_files(void) {
    char err[512];
    luthier_graph *gr = NULL;
    luthier_onnx_tensor t;
    luthier_context *ctx = onnx_ctx();
    luthier_calibration *cal = NULL;
    const char *fifo = "build/test_fifo.onnx";
    CHECK(luthier_onnx_load("tests", NULL, &gr, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && !gr &&
          strstr(err, "not a regular file"), "%s", err);
    CHECK(luthier_onnx_tensor_load("tests", &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "%s", err);
#if defined(__unix__)
    remove(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        CHECK(luthier_onnx_load(fifo, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && !gr &&
              strstr(err, "not a regular file"), "%s", err);
        if (ctx && luthier_calibration_create(&cal) == LUTHIER_STATUS_OK) {
            luthier_graph *g1 = NULL;
            int x;
            int64_t shape[1] = {4};
            luthier_graph_create(&g1);
            luthier_graph_input(g1, "x", LUTHIER_DTYPE_F32, 1, shape, &x);
            CHECK(luthier_calibration_load(ctx, cal, g1, fifo) == LUTHIER_STATUS_INVALID_ARGUMENT &&
                  strstr(luthier_context_error(ctx), "not a regular file"), "%s", luthier_context_error(ctx));
            CHECK(luthier_calibration_load(ctx, cal, g1, "tests") == LUTHIER_STATUS_INVALID_ARGUMENT, "%s",
                  luthier_context_error(ctx));
            luthier_graph_destroy(g1);
            luthier_calibration_destroy(cal);
        }
        remove(fifo);
    }
#else
    (void)fifo;
    (void)cal;
#endif
    luthier_context_destroy(ctx);
}


/* 1-D Conv (padding, stride, dilation, bias), MaxPool, AveragePool and GlobalAveragePool over
   [N,C,L], against loops written from the ONNX definitions. */
static void test_onnx_conv1d_pool1d(void) {
    enum { N = 2, C = 3, L = 13, O = 4, K = 3 };
    static const int64_t pads[2] = {1, 2}, st[1] = {2}, dil[1] = {2}, pk[1] = {3}, ps[1] = {2}, pp[2] = {1, 1}, ak[1] = {2};
    const int64_t dx[3] = {N, C, L}, dw[3] = {O, C, K}, db[1] = {O};
    const int lc = (L + 3 - 2 * (K - 1) - 1) / 2 + 1, lm = (L + 2 - 3) / 2 + 1, la = L - 1;
    float x[N * C * L], w[O * C * K], b[O], y1[N * O * 8], y2[N * C * 8], y3[N * C * 12], y4[N * C];
    float *outs[4];
    pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_context *ctx = onnx_ctx();
    char err[512];
    double worst = 0;
    int i, e, n, o, c, t, k;
    outs[0] = y1, outs[1] = y2, outs[2] = y3, outs[3] = y4;
    for (i = 0; i < N * C * L; i++) x[i] = (float)((i * 29) % 17) / 8.0f - 1.0f;
    for (i = 0; i < O * C * K; i++) w[i] = (float)((i * 11) % 7) / 5.0f - 0.6f;
    for (i = 0; i < O; i++) b[i] = 0.1f * (float)i - 0.2f;
    pbw_init_f32(&g, "w", 3, dw, w, O * C * K);
    pbw_init_f32(&g, "b", 1, db, b, O);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "w"), pbw_str(&nd, 1, "b"), pbw_str(&nd, 2, "y1"), pbw_str(&nd, 3, "conv1d");
    pbw_str(&nd, 4, "Conv");
    pbw_attr_is(&nd, "pads", pads, 2), pbw_attr_is(&nd, "strides", st, 1), pbw_attr_is(&nd, "dilations", dil, 1);
    pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 2, "y2"), pbw_str(&nd, 3, "maxpool1d"), pbw_str(&nd, 4, "MaxPool");
    pbw_attr_is(&nd, "kernel_shape", pk, 1), pbw_attr_is(&nd, "strides", ps, 1), pbw_attr_is(&nd, "pads", pp, 2);
    pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 2, "y3"), pbw_str(&nd, 3, "avgpool1d"), pbw_str(&nd, 4, "AveragePool");
    pbw_attr_is(&nd, "kernel_shape", ak, 1);
    pbw_msg(&g, 1, &nd);
    pbw_node(&g, "GlobalAveragePool", "x", NULL, "y4", "gap1d");
    pbw_vi(&g, 11, "x", 3, dx);
    {
        const int64_t d1[3] = {N, O, lc}, d2[3] = {N, C, lm}, d3[3] = {N, C, la}, d4[3] = {N, C, 1};
        pbw_vi(&g, 12, "y1", 3, d1), pbw_vi(&g, 12, "y2", 3, d2), pbw_vi(&g, 12, "y3", 3, d3), pbw_vi(&g, 12, "y4", 3, d4);
    }
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (gr && ctx) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(gr, luthier_graph_output_tensor(gr, 0), &ti);
        CHECK(ti.rank == 3 && ti.shape[1] == O && ti.shape[2] == lc, "conv1d output [%lld,%lld,%lld]", (long long)ti.shape[0],
              (long long)ti.shape[1], (long long)ti.shape[2]);
        CHECK(onnx_run_simple(ctx, gr, x, outs), "run: %s", luthier_context_error(ctx));
        for (n = 0; n < N; n++) {
            for (o = 0; o < O; o++)
                for (t = 0; t < lc; t++) {
                    double acc = b[o];
                    for (c = 0; c < C; c++)
                        for (k = 0; k < K; k++) {
                            int p = t * 2 + k * 2 - 1;
                            if (p >= 0 && p < L) acc += (double)x[(n * C + c) * L + p] * w[(o * C + c) * K + k];
                        }
                    if (fabs(acc - y1[(n * O + o) * lc + t]) > worst) worst = fabs(acc - y1[(n * O + o) * lc + t]);
                }
            for (c = 0; c < C; c++) {
                double sum = 0;
                for (t = 0; t < lm; t++) {
                    double mx = -INFINITY;
                    for (k = 0; k < 3; k++) {
                        int p = t * 2 + k - 1;
                        if (p >= 0 && p < L && x[(n * C + c) * L + p] > mx) mx = x[(n * C + c) * L + p];
                    }
                    if (fabs(mx - y2[(n * C + c) * lm + t]) > worst) worst = fabs(mx - y2[(n * C + c) * lm + t]);
                }
                for (t = 0; t < la; t++) {
                    double a = 0.5 * ((double)x[(n * C + c) * L + t] + x[(n * C + c) * L + t + 1]);
                    if (fabs(a - y3[(n * C + c) * la + t]) > worst) worst = fabs(a - y3[(n * C + c) * la + t]);
                }
                for (e = 0; e < L; e++) sum += x[(n * C + c) * L + e];
                if (fabs(sum / L - y4[n * C + c]) > worst) worst = fabs(sum / L - y4[n * C + c]);
            }
        }
        CHECK(worst < 1e-5, "max |diff| %g", worst);
    }
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
    free(m.p);
}

/* ConvTranspose, 2-D and 1-D: strides, pads, dilations, output_padding, group, bias,
   output_shape (past the full output: a negative end pad) and auto_pad SAME_UPPER / SAME_LOWER,
   against the scatter of the ONNX definition with the leading pads and output size the ONNX
   formulas give (worked out by hand per case); a 3-D one is refused with a clear message. */
typedef struct onnx_ct_case {
    int rank;                       /* 3 (1-D) or 4 */
    int64_t x[4], w[4];
    int64_t group, strides[2], pads[4], dil[2], outpad[2], outshape[2];
    const char *auto_pad;           /* NULL: not set */
    int bias;
    int64_t out[2], begin[2];       /* expected output size and leading pads (H, W; 1-D: W) */
} onnx_ct_case;

static void onnx_ct_model(pbw *m, const onnx_ct_case *t, const float *w, const float *b) {
    pbw g = {0, 0, 0}, nd = {0, 0, 0};
    const int sp = t->rank - 2;
    int64_t dy[4], db[1];
    int k;
    db[0] = t->w[1] * t->group;
    pbw_init_f32(&g, "w", t->rank, t->w, w, (size_t)(t->w[0] * t->w[1] * t->w[2] * (t->rank == 4 ? t->w[3] : 1)));
    if (t->bias) pbw_init_f32(&g, "b", 1, db, b, (size_t)db[0]);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "w");
    if (t->bias) pbw_str(&nd, 1, "b");
    pbw_str(&nd, 2, "y"), pbw_str(&nd, 3, "up"), pbw_str(&nd, 4, "ConvTranspose");
    if (t->group != 1) pbw_attr_i(&nd, "group", t->group);
    if (t->strides[0]) pbw_attr_is(&nd, "strides", t->strides, sp);
    if (t->dil[0]) pbw_attr_is(&nd, "dilations", t->dil, sp);
    if (t->outpad[0] || t->outpad[sp - 1]) pbw_attr_is(&nd, "output_padding", t->outpad, sp);
    if (t->outshape[0]) pbw_attr_is(&nd, "output_shape", t->outshape, sp);
    if (t->auto_pad) pbw_attr_s(&nd, "auto_pad", t->auto_pad);
    if (t->pads[0] || t->pads[1] || t->pads[2] || t->pads[3]) pbw_attr_is(&nd, "pads", t->pads, 2 * sp);
    pbw_attr_is(&nd, "kernel_shape", t->w + 2, sp);
    pbw_msg(&g, 1, &nd);
    pbw_vi(&g, 11, "x", t->rank, t->x);
    dy[0] = t->x[0], dy[1] = db[0];
    for (k = 0; k < sp; k++) dy[2 + k] = t->out[2 - sp + k];
    pbw_vi(&g, 12, "y", t->rank, dy);
    pbw_model(m, &g, 13);
}

static void test_onnx_conv_transpose(void) {
    static const onnx_ct_case cases[] = {
        /* 2-D, group 2, asymmetric pads, dilation, output_padding: H 4*2-3+2+1+1 = 9, W 5*2-1+4+1+1 = 15 */
        {4, {2, 4, 5, 6}, {4, 3, 3, 3}, 2, {2, 2}, {1, 0, 2, 1}, {1, 2}, {1, 1}, {0, 0}, NULL, 1, {9, 15}, {1, 0}},
        /* output_shape past the full output (the ONNX node test): total -1 -> pads 0 / -1 */
        {4, {1, 2, 3, 3}, {2, 2, 3, 3}, 1, {3, 2}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {10, 8}, NULL, 1, {10, 8}, {0, 0}},
        /* output_shape inside: H total 2*4+3-7 = 4 -> 2/2, W total 2*4+3-9 = 2 -> 1/1 */
        {4, {1, 3, 5, 5}, {3, 2, 3, 3}, 1, {2, 2}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {7, 9}, NULL, 0, {7, 9}, {2, 1}},
        /* SAME_UPPER / SAME_LOWER: out = in * stride, total 1: the extra pad at the end / the front */
        {4, {1, 2, 4, 5}, {2, 3, 3, 3}, 1, {2, 2}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {0, 0}, "SAME_UPPER", 1, {8, 10}, {0, 0}},
        {4, {1, 2, 4, 5}, {2, 3, 3, 3}, 1, {2, 2}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {0, 0}, "SAME_LOWER", 1, {8, 10}, {1, 1}},
        /* depthwise-transposed: group = Cin, VALID */
        {4, {1, 3, 4, 4}, {3, 1, 4, 4}, 3, {2, 2}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {0, 0}, "VALID", 1, {10, 10}, {0, 0}},
        /* 1-D: L 6*2 - 3 + 3 + 1 + 1 = 14 */
        {3, {2, 3, 7, 0}, {3, 2, 4, 0}, 1, {2, 0}, {1, 2, 0, 0}, {0, 0}, {1, 0}, {0, 0}, NULL, 1, {1, 14}, {0, 1}},
        /* 1-D with output_shape and SAME_LOWER: total 2*6+3-12 = 3 -> 2 in front */
        {3, {1, 2, 7, 0}, {2, 4, 3, 0}, 2, {2, 0}, {0, 0, 0, 0}, {0, 0}, {0, 0}, {12, 0}, "SAME_LOWER", 0, {1, 12}, {0, 2}},
    };
    luthier_context *ctx = onnx_ctx();
    int ci;
    for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) {
        onnx_ct_case t = cases[ci];
        pbw m = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        float *x, *w, *b, *y, *outs[1];
        int64_t N, C, H, W, CG, KH, KW, G, O, OH, OW, sh, sw, dh, dw, n, c, iy, ix, co, ky, kx;
        size_t ny, e;
        double *ref, worst = 0;
        if (t.rank == 3) { /* as [N,C,1,L] for the loops */
            t.x[3] = t.x[2], t.x[2] = 1, t.w[3] = t.w[2], t.w[2] = 1;
        }
        N = t.x[0], C = t.x[1], H = t.x[2], W = t.x[3], CG = t.w[1], KH = t.w[2], KW = t.w[3], G = t.group, O = CG * G;
        OH = t.out[0], OW = t.out[1];
        sh = t.rank == 4 && t.strides[0] ? t.strides[0] : 1, sw = t.strides[t.rank == 4] ? t.strides[t.rank == 4] : 1;
        if (t.rank == 3) sw = t.strides[0] ? t.strides[0] : 1;
        dh = t.rank == 4 && t.dil[0] ? t.dil[0] : 1, dw = t.rank == 4 ? (t.dil[1] ? t.dil[1] : 1) : (t.dil[0] ? t.dil[0] : 1);
        x = rand_buf((size_t)(N * C * H * W), -1, 1);
        w = rand_buf((size_t)(C * CG * KH * KW), -1, 1);
        b = rand_buf((size_t)O, -1, 1);
        ny = (size_t)(N * O * OH * OW);
        y = (float *)test_alloc(ny * sizeof(float));
        ref = (double *)test_alloc(ny * sizeof(double));
        onnx_ct_model(&m, &cases[ci], w, b);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", ci, err);
        for (e = 0; e < ny; e++) ref[e] = t.bias ? b[(e / (size_t)(OH * OW)) % (size_t)O] : 0.0;
        for (n = 0; n < N; n++)
            for (c = 0; c < C; c++)
                for (iy = 0; iy < H; iy++)
                    for (ix = 0; ix < W; ix++)
                        for (co = 0; co < CG; co++)
                            for (ky = 0; ky < KH; ky++)
                                for (kx = 0; kx < KW; kx++) {
                                    const int64_t oy = iy * sh - t.begin[0] + ky * dh, ox = ix * sw - t.begin[1] + kx * dw;
                                    if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                                    ref[((n * O + c / (C / G) * CG + co) * OH + oy) * OW + ox] +=
                                        (double)x[((n * C + c) * H + iy) * W + ix] * w[((c * CG + co) * KH + ky) * KW + kx];
                                }
        if (gr && ctx) {
            luthier_tensor_info ti;
            luthier_graph_tensor_info(gr, luthier_graph_output_tensor(gr, 0), &ti);
            CHECK(ti.rank == t.rank && ti.shape[1] == O && ti.shape[ti.rank - 1] == OW && (t.rank == 3 || ti.shape[2] == OH),
                  "case %d: output shape", ci);
            outs[0] = y;
            CHECK(onnx_run_simple(ctx, gr, x, outs), "case %d: run: %s", ci, luthier_context_error(ctx));
            for (e = 0; e < ny; e++)
                if (!(fabs(ref[e] - y[e]) <= worst)) worst = fabs(ref[e] - y[e]);
            CHECK(worst < 1e-5, "case %d: max |diff| %g", ci, worst);
        }
        luthier_graph_destroy(gr);
        free(m.p), free(x), free(w), free(b), free(y), free(ref);
    }
    { /* 3-D: refused, saying what is supported */
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        const int64_t dx[5] = {1, 1, 2, 2, 2}, dw[5] = {1, 1, 2, 2, 2}, dy[5] = {1, 1, 3, 3, 3};
        float w[8] = {0};
        luthier_graph *gr = NULL;
        char err[512];
        pbw_init_f32(&g, "w", 5, dw, w, 8);
        pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "w"), pbw_str(&nd, 2, "y"), pbw_str(&nd, 3, "up3d"), pbw_str(&nd, 4, "ConvTranspose");
        pbw_msg(&g, 1, &nd);
        pbw_vi(&g, 11, "x", 5, dx);
        pbw_vi(&g, 12, "y", 5, dy);
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "up3d") &&
                  strstr(err, "not 3-D"), "3-D refused: %s", err);
        luthier_graph_destroy(gr);
        free(m.p);
    }
    luthier_context_destroy(ctx);
}

/* Dropout(ratio 0, training_mode true) is the identity (Swin exports it); a real ratio with
   training_mode is refused by name. */
static void test_onnx_dropout_training_ratio0(void) {
    int k;
    for (k = 0; k < 2; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        const int64_t dx[2] = {2, 3};
        const float ratio = k ? 0.25f : 0.0f, x[6] = {1, -2, 3, -4, 5, 6};
        const uint8_t on = 1;
        float y[6];
        float *outs[1];
        luthier_graph *gr = NULL;
        luthier_context *ctx = onnx_ctx();
        char err[512];
        pbw_init(&g, "ratio", 1, 0, NULL, &ratio, sizeof ratio);
        pbw_init(&g, "training", 9, 0, NULL, &on, 1);
        pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "ratio"), pbw_str(&nd, 1, "training"), pbw_str(&nd, 2, "y");
        pbw_str(&nd, 3, "drop"), pbw_str(&nd, 4, "Dropout");
        pbw_msg(&g, 1, &nd);
        pbw_vi(&g, 11, "x", 2, dx);
        pbw_vi(&g, 12, "y", 2, dx);
        pbw_model(&m, &g, 13);
        if (k == 0) {
            CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
            outs[0] = y;
            CHECK(gr && ctx && onnx_run_simple(ctx, gr, x, outs) && memcmp(x, y, sizeof x) == 0, "identity");
        } else {
            CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED &&
                      strstr(err, "drop") && strstr(err, "ratio 0.25"), "ratio 0.25: %s", err);
        }
        luthier_graph_destroy(gr);
        luthier_context_destroy(ctx);
        free(m.p);
    }
}

/* Loads model m (freed here), runs it on x and compares its n outputs with want exactly (case k
   names the failure). */
static void onnx_exact_case(pbw *m, const float *x, const float *want, size_t n, int k) {
    luthier_graph *gr = NULL;
    luthier_context *ctx = onnx_ctx();
    float y[64], *outs[1];
    char err[512];
    size_t e;
    int bad = 0;
    CHECK(luthier_onnx_load_memory(m->p, m->n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "case %d: %s", k, err);
    outs[0] = y;
    if (n <= 64 && gr && ctx && onnx_run_simple(ctx, gr, x, outs))
        for (e = 0; e < n; e++) bad += y[e] != want[e];
    else
        bad = -1;
    CHECK(bad == 0, "case %d: %d wrong sums", k, bad);
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
    free(m->p);
}

/* Expand of a constant folded at load time, where the shape adds dimensions in front ([3,1] to
   [2,1,6], [4] to [5,4]: swin_t's window masks), then added to the graph input: the sums against
   the broadcast written out here. */
static void test_onnx_expand_folded(void) {
    static const struct { int rc, rs; int64_t cd[2], sh[3], yd[3]; } cases[2] = {
        {2, 3, {3, 1}, {2, 1, 6}, {2, 3, 6}}, {1, 2, {4, 0}, {5, 4, 0}, {5, 4, 0}}};
    int k;
    for (k = 0; k < 2; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0};
        const int ry = cases[k].rs;
        const size_t nc = (size_t)(cases[k].cd[0] * (cases[k].rc > 1 ? cases[k].cd[1] : 1));
        size_t ny = 1, e;
        float c[4], x[36], want[36];
        int d;
        for (d = 0; d < ry; d++) ny *= (size_t)cases[k].yd[d];
        for (e = 0; e < nc; e++) c[e] = (float)(e + 1) * 10.0f;
        for (e = 0; e < ny; e++) x[e] = (float)e;
        pbw_init_f32(&g, "c", cases[k].rc, cases[k].cd, c, nc);
        pbw_init(&g, "shape", 7, 1, (const int64_t[]){ry}, cases[k].sh, sizeof(int64_t) * (size_t)ry);
        pbw_node(&g, "Expand", "c", "shape", "e", "expand");
        pbw_node(&g, "Add", "x", "e", "y", "add");
        pbw_vi(&g, 11, "x", ry, cases[k].yd);
        pbw_vi(&g, 12, "y", ry, cases[k].yd);
        pbw_model(&m, &g, 13);
        for (e = 0; e < ny; e++) want[e] = x[e] + c[k == 0 ? (e / 6) % 3 : e % 4]; /* [3,1] -> [2,3,6]; [4] -> [5,4] */
        onnx_exact_case(&m, x, want, ny, k);
    }
}

/* Reductions of constants folded at load time (shape arithmetic: a detector's image transform):
   ReduceMax over axis 1 kept, ReduceMean over axis 0 dropped (f32), ReduceProd of an int64
   constant over all axes, then Cast to float where needed and added to the graph input; the
   sums against the reductions written out here. The models have no other path: an unfolded
   int64 reduction is refused. */
static void test_onnx_reduce_folded(void) {
    static const float cf[6] = {1, 5, 3, 4, -2, 6};
    static const int64_t ci[4] = {1, 2, -3, 4}, d23[2] = {2, 3}, d22[2] = {2, 2}, d1[1] = {1}, d3[1] = {3};
    int k;
    for (k = 0; k < 3; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        const int64_t ax1 = 1, ax0 = 0;
        float x[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, want[6];
        const int nx = k == 0 ? 6 : k == 1 ? 3 : 1;
        int e;
        if (k < 2) pbw_init_f32(&g, "c", 2, d23, cf, 6);
        else pbw_init(&g, "c", 7, 2, d22, ci, sizeof ci);
        pbw_str(&nd, 1, "c"), pbw_str(&nd, 2, k == 2 ? "ri" : "r"), pbw_str(&nd, 3, "reduce");
        pbw_str(&nd, 4, k == 0 ? "ReduceMax" : k == 1 ? "ReduceMean" : "ReduceProd");
        if (k == 0) pbw_attr_is(&nd, "axes", &ax1, 1);
        if (k == 1) pbw_attr_is(&nd, "axes", &ax0, 1), pbw_attr_i(&nd, "keepdims", 0);
        if (k == 2) pbw_attr_i(&nd, "keepdims", 0);
        pbw_msg(&g, 1, &nd);
        if (k == 2) {
            pbw cn = {0, 0, 0};
            pbw_str(&cn, 1, "ri"), pbw_str(&cn, 2, "r"), pbw_str(&cn, 3, "cast"), pbw_str(&cn, 4, "Cast");
            pbw_attr_i(&cn, "to", 1);
            pbw_msg(&g, 1, &cn);
        }
        pbw_node(&g, "Add", "x", "r", "y", "add");
        pbw_vi(&g, 11, "x", k == 0 ? 2 : 1, k == 0 ? d23 : k == 1 ? d3 : d1);
        pbw_vi(&g, 12, "y", k == 0 ? 2 : 1, k == 0 ? d23 : k == 1 ? d3 : d1);
        pbw_model(&m, &g, 13);
        for (e = 0; e < nx; e++)
            want[e] = x[e] + (k == 0 ? (e < 3 ? 5.0f : 6.0f) : k == 1 ? (cf[e] + cf[e + 3]) / 2 : -24.0f);
        onnx_exact_case(&m, x, want, (size_t)nx, k);
    }
}

/* NodeProto's string fields land where they belong: a Relu in the default domain ("" or
   "ai.onnx") loads; in another domain it is refused with a message naming that domain and the
   node (its name, op_type and domain are read by one routine). */
static void test_onnx_node_domain(void) {
    static const char *const domains[3] = {"", "ai.onnx", "com.example"};
    const int64_t dims[2] = {2, 3};
    int k;
    for (k = 0; k < 3; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        luthier_status s;
        pbw_str(&nd, 1, "x"), pbw_str(&nd, 2, "y"), pbw_str(&nd, 3, "relu0"), pbw_str(&nd, 4, "Relu");
        pbw_str(&nd, 7, domains[k]);
        pbw_msg(&g, 1, &nd);
        pbw_vi(&g, 11, "x", 2, dims);
        pbw_vi(&g, 12, "y", 2, dims);
        pbw_model(&m, &g, 13);
        s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
        if (k < 2) {
            CHECK(s == LUTHIER_STATUS_OK, "domain '%s': %s", domains[k], err);
        } else {
            CHECK(s == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "com.example") && strstr(err, "relu0") && strstr(err, "Relu"),
                  "domain '%s': status %d, %s", domains[k], (int)s, err);
        }
        luthier_graph_destroy(gr);
        free(m.p);
    }
}

/* InstanceNormalization over [N,C,H,W] and [N,C,L] against the ONNX formula
   y = scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], statistics per (n, c). */
static void test_onnx_instance_norm(void) {
    int rk;
    for (rk = 3; rk <= 4; rk++) {
        enum { N = 2, C = 3, S = 20 };
        const int64_t d4[4] = {N, C, 4, 5}, d3[3] = {N, C, S}, dc[1] = {C};
        float x[N * C * S], y[N * C * S], sc[C] = {0.5f, -1.25f, 2.0f}, bi[C] = {0.1f, 0.0f, -3.0f};
        float *outs[1];
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        luthier_graph *gr = NULL;
        luthier_context *ctx = onnx_ctx();
        char err[512];
        const float eps = 1e-3f;
        double worst = 0;
        int i, nc;
        for (i = 0; i < N * C * S; i++) x[i] = (float)((i * 37) % 19) / 6.0f - 1.0f + (float)(i / S);
        pbw_init_f32(&g, "scale", 1, dc, sc, C);
        pbw_init_f32(&g, "bias", 1, dc, bi, C);
        pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "scale"), pbw_str(&nd, 1, "bias"), pbw_str(&nd, 2, "y");
        pbw_str(&nd, 3, "inorm"), pbw_str(&nd, 4, "InstanceNormalization");
        pbw_attr_f(&nd, "epsilon", eps);
        pbw_msg(&g, 1, &nd);
        pbw_vi(&g, 11, "x", rk, rk == 4 ? d4 : d3);
        pbw_vi(&g, 12, "y", rk, rk == 4 ? d4 : d3);
        pbw_model(&m, &g, 13);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "rank %d: %s", rk, err);
        outs[0] = y;
        if (gr && ctx && onnx_run_simple(ctx, gr, x, outs)) {
            for (nc = 0; nc < N * C; nc++) {
                double mean = 0, var = 0;
                for (i = 0; i < S; i++) mean += x[nc * S + i];
                mean /= S;
                for (i = 0; i < S; i++) var += (x[nc * S + i] - mean) * (x[nc * S + i] - mean);
                var /= S;
                for (i = 0; i < S; i++) {
                    double want = sc[nc % C] * (x[nc * S + i] - mean) / sqrt(var + eps) + bi[nc % C];
                    if (fabs(want - y[nc * S + i]) > worst) worst = fabs(want - y[nc * S + i]);
                }
            }
            CHECK(worst < 2e-5, "rank %d: max |diff| %g", rk, worst);
        } else {
            CHECK(0, "rank %d: run: %s", rk, ctx ? luthier_context_error(ctx) : "no context");
        }
        luthier_graph_destroy(gr);
        luthier_context_destroy(ctx);
        free(m.p);
    }
}

/* GroupNorm as PyTorch exports it before opset 18: Reshape [N,G,-1] -> InstanceNormalization
   (scale 1, bias 0) -> Reshape back -> Mul gamma -> Add beta, against the GroupNorm formula. */
static void test_onnx_group_norm_exported(void) {
    enum { N = 2, C = 6, G = 3, H = 3, W = 4 };
    const int64_t dx[4] = {N, C, H, W}, dg[1] = {G}, dc[3] = {C, 1, 1}, d2[1] = {3}, d4[1] = {4};
    const int64_t s3[3] = {N, G, -1}, s4[4] = {N, C, H, W};
    float x[N * C * H * W], y[N * C * H * W], ones[G] = {1, 1, 1}, zeros[G] = {0, 0, 0};
    float gamma[C] = {1.5f, -0.5f, 2.0f, 0.25f, 1.0f, -1.0f}, beta[C] = {0.0f, 0.5f, -1.0f, 2.0f, 0.1f, 0.0f};
    float *outs[1];
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_context *ctx = onnx_ctx();
    char err[512];
    double worst = 0;
    int i, n, gi;
    for (i = 0; i < N * C * H * W; i++) x[i] = (float)((i * 13) % 29) / 9.0f - 1.5f;
    pbw_init(&g, "s3", 7, 1, d2, s3, sizeof s3);
    pbw_init(&g, "s4", 7, 1, d4, s4, sizeof s4);
    pbw_init_f32(&g, "ones", 1, dg, ones, G);
    pbw_init_f32(&g, "zeros", 1, dg, zeros, G);
    pbw_init_f32(&g, "gamma", 3, dc, gamma, C);
    pbw_init_f32(&g, "beta", 3, dc, beta, C);
    pbw_node(&g, "Reshape", "x", "s3", "r3", "r3");
    {
        static const char *const ins[3] = {"r3", "ones", "zeros"};
        pbw_node_k(&g, "InstanceNormalization", ins, 3, "in", NULL, 0);
    }
    pbw_node(&g, "Reshape", "in", "s4", "r4", "r4");
    pbw_node(&g, "Mul", "r4", "gamma", "mg", "mg");
    pbw_node(&g, "Add", "mg", "beta", "y", "y");
    pbw_vi(&g, 11, "x", 4, dx);
    pbw_vi(&g, 12, "y", 4, dx);
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    outs[0] = y;
    if (gr && ctx && onnx_run_simple(ctx, gr, x, outs)) {
        const int per = C / G * H * W;
        for (n = 0; n < N; n++)
            for (gi = 0; gi < G; gi++) {
                const float *xg = x + (n * G + gi) * per;
                double mean = 0, var = 0;
                for (i = 0; i < per; i++) mean += xg[i];
                mean /= per;
                for (i = 0; i < per; i++) var += (xg[i] - mean) * (xg[i] - mean);
                var /= per;
                for (i = 0; i < per; i++) {
                    const int ch = gi * (C / G) + i / (H * W);
                    double want = (xg[i] - mean) / sqrt(var + 1e-5) * gamma[ch] + beta[ch];
                    double got = y[(n * G + gi) * per + i];
                    if (fabs(want - got) > worst) worst = fabs(want - got);
                }
            }
        CHECK(worst < 2e-5, "max |diff| %g", worst);
    } else {
        CHECK(0, "load or run: %s", ctx ? luthier_context_error(ctx) : "no context");
    }
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
    free(m.p);
}

/* A node whose operator the model's opset does not define is refused with the range. */
static void test_onnx_op_opset_range(void) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    int64_t dims[2] = {1, 4};
    char err[512];
    pbw_node(&g, "Erf", "x", NULL, "y", "erf"); /* Erf is defined from opset 9 */
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 8);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "opsets 9 to") &&
              strstr(err, "opset 8"), "Erf at opset 8: %s", err);
    free(m.p);
    memset(&m, 0, sizeof m);
    pbw_node(&g, "Erf", "x", NULL, "y", "erf");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 9);
    CHECK(onnx_load_bytes(&m, err, sizeof err) == LUTHIER_STATUS_OK, "Erf at opset 9: %s", err);
    free(m.p);
}

/* The loader's operator table: each ONNX op type once, sane counts, and every row that names an
   engine-level op type converts (a tiny model of it is not refused as "not supported"). */
static void test_onnx_op_table(void) {
    static const luthier_onnx__opinfo rows[] = {
#define LUTHIER_ONNX__X(op, lo, hi, olo, ohi, fam, eop, fold, since, until) \
    {op, lo, hi, olo, ohi, luthier_onnx__cv_##fam, LUTHIER_OP_##eop, luthier_onnx__fold_##fold, since, until},
        LUTHIER_ONNX__OPS(LUTHIER_ONNX__X)
#undef LUTHIER_ONNX__X
    };
    const int n = (int)(sizeof rows / sizeof rows[0]);
    int i, j;
    for (i = 0; i < n; i++) {
        luthier_onnx__node nd;
        memset(&nd, 0, sizeof nd);
        nd.op = rows[i].op;
        nd.domain = "";
        CHECK(rows[i].min_in >= 0 && rows[i].min_in <= rows[i].max_in && rows[i].min_out >= 1 && rows[i].min_out <= rows[i].max_out,
              "%s: counts %d..%d, %d..%d", rows[i].op, rows[i].min_in, rows[i].max_in, rows[i].min_out, rows[i].max_out);
        CHECK(rows[i].convert && rows[i].fold && rows[i].since >= 1 && rows[i].since <= LUTHIER_ONNX__OPSET_MAX &&
                  (rows[i].until == 0 || (rows[i].until >= rows[i].since && rows[i].until >= LUTHIER_ONNX__OPSET_MIN)),
              "%s: hooks or opsets %d..%d", rows[i].op, rows[i].since, rows[i].until);
        for (j = 0; j < i; j++) CHECK(strcmp(rows[i].op, rows[j].op) != 0, "%s listed twice", rows[i].op);
        CHECK(luthier_onnx__opinfo_of(&nd) != NULL && strcmp(luthier_onnx__opinfo_of(&nd)->op, rows[i].op) == 0, "%s not found", rows[i].op);
        nd.domain = "ai.onnx";
        CHECK(luthier_onnx__opinfo_of(&nd) != NULL, "%s in domain ai.onnx", rows[i].op);
        nd.domain = "com.example";
        CHECK(luthier_onnx__opinfo_of(&nd) == NULL, "%s in a foreign domain", rows[i].op);
    }
}

/* Every refused node is named in one message (op type, node, why), the nodes that only read a
   refused node's output are not (their failure would repeat it), and a malformed model still
   stops at its first problem. */
static void test_onnx_all_refusals(void) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    int64_t dims[2] = {1, 4};
    char err[1024];
    luthier_graph *gr = (luthier_graph *)1;
    luthier_status s;
    pbw_node(&g, "Sin", "x", NULL, "h", "hs");
    pbw_node(&g, "Relu", "h", NULL, "r", "after_hs");
    pbw_node(&g, "Cos", "x", NULL, "q", "mish");
    pbw_node(&g, "Sigmoid", "x", NULL, "sg", "fine");
    pbw_node(&g, "Add", "r", "q", "a1", "join");
    pbw_node(&g, "Add", "a1", "sg", "y", "out");
    pbw_vi(&g, 11, "x", 2, dims);
    pbw_vi(&g, 12, "y", 2, dims);
    pbw_model(&m, &g, 13);
    s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_UNSUPPORTED && gr == NULL, "status %s", luthier_status_string(s));
    CHECK(strstr(err, "2 nodes are not supported") && strstr(err, "'hs' (Sin)") && strstr(err, "'mish' (Cos)"), "%s", err);
    CHECK(!strstr(err, "after_hs") && !strstr(err, "join") && !strstr(err, "'fine'"), "dependents named: %s", err);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, NULL, 0) == LUTHIER_STATUS_UNSUPPORTED && gr == NULL, "no message buffer");
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, 40) == LUTHIER_STATUS_UNSUPPORTED && strlen(err) == 39, "short buffer");
    free(m.p);
}

/* ---- Resize, Upsample, DepthToSpace, SpaceToDepth, Pad ----------------------------------------- */

/* One data-movement node: x [xdims] -> op -> y, inputs ins[] ("" absent; "scales" / "sizes" /
   "pads" / "value" name initializers made from fs / is), attributes written by the caller into
   *node (consumed). */
typedef struct dm_model {
    const char *op;
    int opset, rank;
    int64_t xdims[4];
    const char *ins[4];
    int nin;
    const float *fs;  /* "scales" or "value" */
    int nfs;
    const int64_t *is; /* "sizes" or "pads" */
    int nis;
} dm_model;

static void dm_build(pbw *m, const dm_model *dm, pbw *node) {
    pbw g = {0, 0, 0};
    int i;
    int64_t one;
    pbw_str(node, 1, "x");
    for (i = 0; i < dm->nin; i++) pbw_str(node, 1, dm->ins[i]);
    pbw_str(node, 2, "y");
    pbw_str(node, 3, "y");
    pbw_str(node, 4, dm->op);
    pbw_msg(&g, 1, node);
    for (i = 0; i < dm->nin; i++) {
        if (!strcmp(dm->ins[i], "scales") || !strcmp(dm->ins[i], "value")) {
            one = dm->nfs;
            pbw_init_f32(&g, dm->ins[i], strcmp(dm->ins[i], "value") ? 1 : 0, &one, dm->fs, (size_t)dm->nfs);
        } else if (!strcmp(dm->ins[i], "sizes") || !strcmp(dm->ins[i], "pads")) {
            one = dm->nis;
            pbw_init(&g, dm->ins[i], 7, 1, &one, dm->is, sizeof(int64_t) * (size_t)dm->nis);
        }
    }
    pbw_vi(&g, 11, "x", dm->rank, dm->xdims);
    {
        pbw vi = {0, 0, 0}; /* the output, its shape left to the loader */
        pbw_str(&vi, 1, "y");
        pbw_msg(&g, 12, &vi);
    }
    pbw_model(m, &g, dm->opset);
}

/* Loads; on success checks the graph's one engine node is `want` and its plan against the
   reference interpreter at 1 and 2 threads. Returns the status (err: the message). */
static luthier_status dm_load_check(const dm_model *dm, pbw *node, luthier_op want, char *err, size_t errn) {
    pbw m = {0, 0, 0};
    luthier_graph *g = NULL;
    luthier_status s;
    int threads, k;
    dm_build(&m, dm, node);
    s = luthier_onnx_load_memory(m.p, m.n, NULL, &g, err, errn);
    free(m.p);
    if (s != LUTHIER_STATUS_OK) return s;
    CHECK(onnx_count_op(g, want) == 1 && luthier_graph_num_nodes(g) == 1, "%s: want one %s node, have %d nodes", dm->op,
          luthier_op_name(want), luthier_graph_num_nodes(g));
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        size_t n = 1;
        float *img;
        const void *ins[1];
        for (k = 0; k < dm->rank; k++) n *= (size_t)dm->xdims[k];
        img = rand_buf(n, -2, 2);
        ins[0] = img;
        plan_vs_ref(ctx, g, NULL, ins, 2e-5, dm->op);
        free(img);
        luthier_context_destroy(ctx);
    }
    luthier_graph_destroy(g);
    return s;
}

static void test_onnx_resize(void) {
    static const float sc[4] = {1, 1, 1.5f, 0.75f}, up2[4] = {1, 1, 2, 2}, up7[4] = {1, 1, 2, 3};
    static const int64_t sizes[4] = {2, 3, 4, 11}, sizes2[2] = {9, 2}, axes[2] = {3, -2};
    dm_model dm;
    pbw n = {0, 0, 0};
    char err[512];
    luthier_status s;
    memset(&dm, 0, sizeof dm);
    dm.op = "Resize", dm.opset = 13, dm.rank = 4;
    dm.xdims[0] = 2, dm.xdims[1] = 3, dm.xdims[2] = 5, dm.xdims[3] = 6;
    dm.ins[0] = "", dm.ins[1] = "scales", dm.nin = 2, dm.fs = sc, dm.nfs = 4;
    pbw_attr_s(&n, "mode", "linear");
    pbw_attr_s(&n, "coordinate_transformation_mode", "align_corners");
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Resize linear scales: %s", err);
    pbw_attr_s(&n, "mode", "cubic");
    pbw_attr_f(&n, "cubic_coeff_a", -0.5f);
    pbw_attr_i(&n, "exclude_outside", 1);
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Resize cubic scales: %s", err);
    dm.ins[2] = "sizes", dm.ins[1] = "", dm.nin = 3, dm.is = sizes, dm.nis = 4;
    pbw_attr_s(&n, "nearest_mode", "ceil");
    pbw_attr_s(&n, "coordinate_transformation_mode", "pytorch_half_pixel");
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Resize nearest sizes: %s", err);
    dm.is = sizes2, dm.nis = 2, dm.opset = 18; /* opset 18's axes: sizes of W then H */
    pbw_attr_is(&n, "axes", axes, 2);
    pbw_attr_s(&n, "mode", "linear");
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Resize with axes: %s", err);
    /* Upsample 9 (scales input) and 7 (attribute): asymmetric coordinates */
    memset(&dm.ins, 0, sizeof dm.ins);
    dm.op = "Upsample", dm.opset = 9, dm.ins[0] = "scales", dm.nin = 1, dm.fs = up2, dm.nfs = 4;
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Upsample 9 nearest: %s", err);
    pbw_attr_s(&n, "mode", "linear");
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Upsample 9 linear: %s", err);
    dm.op = "Resize", dm.opset = 10; /* Resize 10 is Upsample 9 */
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Resize 10: %s", err);
    dm.op = "Upsample", dm.opset = 7, dm.nin = 0;
    pbw_attr_fs(&n, "scales", up7, 4);
    s = dm_load_check(&dm, &n, LUTHIER_OP_RESIZE, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Upsample 7: %s", err);
    {
        /* the ONNX example through the loader: 2x2 -> 4x4 linear, half_pixel */
        static const float x[4] = {1, 2, 3, 4}, want[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
        pbw m = {0, 0, 0};
        luthier_graph *g = NULL;
        luthier_context *ctx = onnx_ctx();
        float y[16], *outs[1];
        int e;
        memset(&dm, 0, sizeof dm);
        dm.op = "Resize", dm.opset = 11, dm.rank = 4, dm.xdims[0] = dm.xdims[1] = 1, dm.xdims[2] = dm.xdims[3] = 2;
        dm.ins[0] = "", dm.ins[1] = "scales", dm.nin = 2, dm.fs = up2, dm.nfs = 4;
        pbw_attr_s(&n, "mode", "linear");
        dm_build(&m, &dm, &n);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "example: %s", err);
        outs[0] = y;
        if (g && ctx) {
            CHECK(onnx_run_simple(ctx, g, x, outs), "example runs");
            for (e = 0; e < 16; e++) CHECK(fabs(y[e] - want[e]) < 1e-6, "example [%d] = %g, want %g", e, (double)y[e], (double)want[e]);
        }
        luthier_graph_destroy(g);
        luthier_context_destroy(ctx);
        free(m.p);
    }
}

/* Refusals: valid but unsupported (UNSUPPORTED, named) and invalid (INVALID_ARGUMENT) Resize,
   Upsample, DepthToSpace, SpaceToDepth and Pad nodes. */
static void test_onnx_dm_refusals(void) {
    static const float nan4[4] = {1, 1, NAN, 2}, zero4[4] = {1, 1, 0, 2}, ok4[4] = {1, 1, 2, 2}, half4[4] = {1, 1, 0.5f, 2},
                       three[3] = {1, 2, 2}, chan[4] = {1, 2, 2, 2};
    static const int64_t sizes[4] = {1, 2, 8, 8}, neg[4] = {1, 2, -8, 8}, pads_bad[3] = {0, 1, 0}, pads8[8] = {0, 0, 0, 1, 0, 0, 0, 1};
    static const struct {
        const char *op, *attr, *val, *in1, *in2;
        const float *fs;
        const int64_t *is;
        int opset;
        luthier_status want;
        const char *msg;
    } cases[] = {
        {"Resize", NULL, NULL, "scales", NULL, nan4, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "scales must be positive"},
        {"Resize", NULL, NULL, "scales", NULL, zero4, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "scales must be positive"},
        {"Resize", NULL, NULL, "scales", NULL, three, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "3 scales for 4 axes"},
        {"Resize", NULL, NULL, "scales", "sizes", ok4, sizes, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "both given"},
        {"Resize", NULL, NULL, "", "sizes", NULL, neg, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "sizes must be in"},
        {"Resize", NULL, NULL, "", NULL, NULL, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "neither scales nor sizes"},
        {"Resize", "coordinate_transformation_mode", "tf_crop_and_resize", "scales", NULL, ok4, NULL, 13, LUTHIER_STATUS_UNSUPPORTED, "tf_crop_and_resize is not supported"},
        {"Resize", "keep_aspect_ratio_policy", "not_larger", "", "sizes", NULL, sizes, 18, LUTHIER_STATUS_UNSUPPORTED, "only stretch"},
        {"Resize", "keep_aspect_ratio_policy", "stretch", "", "sizes", NULL, sizes, 17, LUTHIER_STATUS_UNSUPPORTED, "'keep_aspect_ratio_policy' is not supported"},
        {"Resize", "mode", "bicubic", "scales", NULL, ok4, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "not nearest, linear or cubic"},
        {"Resize", "nearest_mode", "sideways", "scales", NULL, ok4, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "unknown nearest_mode"},
        {"Resize", "antialias", "1", "scales", NULL, ok4, NULL, 18, LUTHIER_STATUS_UNSUPPORTED, "antialias is not supported"},
        {"Resize", NULL, NULL, "scales", NULL, chan, NULL, 13, LUTHIER_STATUS_UNSUPPORTED, "only the last two axes"},
        {"Resize", NULL, NULL, "scales", NULL, half4, NULL, 10, LUTHIER_STATUS_UNSUPPORTED, "both above and below 1"},
        {"Upsample", NULL, NULL, "scales", NULL, half4, NULL, 9, LUTHIER_STATUS_INVALID_ARGUMENT, "Upsample scales must be >= 1"},
        {"Upsample", NULL, NULL, NULL, NULL, NULL, NULL, 7, LUTHIER_STATUS_INVALID_ARGUMENT, "scales attribute is missing"},
        {"DepthToSpace", NULL, NULL, NULL, NULL, NULL, NULL, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "blocksize attribute is missing"},
        {"DepthToSpace", "blocksize", "0", NULL, NULL, NULL, NULL, 13, LUTHIER_STATUS_UNSUPPORTED, "blocksize 0"},
        {"DepthToSpace", "blocksize", "3", NULL, NULL, NULL, NULL, 13, LUTHIER_STATUS_UNSUPPORTED, "do not divide"},
        {"SpaceToDepth", "blocksize", "3", NULL, NULL, NULL, NULL, 13, LUTHIER_STATUS_UNSUPPORTED, "must divide"},
        {"Pad", "mode", "mirror", "pads", NULL, NULL, pads8, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "not constant, reflect, edge or wrap"},
        {"Pad", NULL, NULL, "pads", NULL, NULL, pads_bad, 13, LUTHIER_STATUS_INVALID_ARGUMENT, "3 pads for 4 axes"},
    };
    int k;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        dm_model dm;
        pbw n = {0, 0, 0};
        char err[512];
        luthier_status s;
        memset(&dm, 0, sizeof dm);
        err[0] = 0;
        dm.op = cases[k].op, dm.opset = cases[k].opset, dm.rank = 4;
        dm.xdims[0] = 1, dm.xdims[1] = 2, dm.xdims[2] = 4, dm.xdims[3] = 4;
        if (!strcmp(dm.op, "Resize") && dm.opset >= 11) dm.ins[dm.nin++] = ""; /* roi */
        if (cases[k].in1) dm.ins[dm.nin++] = cases[k].in1;
        if (cases[k].in2) dm.ins[dm.nin++] = cases[k].in2;
        dm.fs = cases[k].fs, dm.nfs = cases[k].fs == three ? 3 : 4;
        dm.is = cases[k].is, dm.nis = cases[k].is == pads_bad ? 3 : cases[k].is == pads8 ? 8 : 4;
        if (cases[k].attr && (cases[k].val[0] >= '0' && cases[k].val[0] <= '9')) pbw_attr_i(&n, cases[k].attr, atoi(cases[k].val));
        else if (cases[k].attr) pbw_attr_s(&n, cases[k].attr, cases[k].val);
        if (!strcmp(dm.op, "DepthToSpace") && !cases[k].attr) dm.xdims[1] = 2;
        s = dm_load_check(&dm, &n, LUTHIER_OP_COUNT, err, sizeof err);
        CHECK(s == cases[k].want && strstr(err, cases[k].msg) && strstr(err, "'y'"), "case %d (%s %s): %s, '%s' (want %s, '%s')", k,
              cases[k].op, cases[k].attr ? cases[k].attr : "", luthier_status_string(s), err, luthier_status_string(cases[k].want),
              cases[k].msg);
    }
}

/* DepthToSpace (DCR, CRD), SpaceToDepth and Pad (constant, reflect, edge; opset 10 attributes,
   opset 13 inputs, negative pads). */
static void test_onnx_depth_space_pad(void) {
    static const int64_t pads_a[8] = {0, 1, 2, -1, 0, 0, 3, 2}, pads_b[6] = {1, 0, 2, 2, 1, -1};
    static const float value = -3.5f;
    static const char *const modes[3] = {"constant", "reflect", "edge"};
    dm_model dm;
    pbw n = {0, 0, 0};
    char err[512];
    luthier_status s;
    int k;
    memset(&dm, 0, sizeof dm);
    dm.op = "DepthToSpace", dm.opset = 13, dm.rank = 4;
    dm.xdims[0] = 2, dm.xdims[1] = 12, dm.xdims[2] = 3, dm.xdims[3] = 5;
    for (k = 0; k < 3; k++) {
        pbw_attr_i(&n, "blocksize", 2);
        if (k < 2) pbw_attr_s(&n, "mode", k ? "CRD" : "DCR");
        s = dm_load_check(&dm, &n, LUTHIER_OP_DEPTH_TO_SPACE, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK, "DepthToSpace %d: %s", k, err);
    }
    dm.op = "SpaceToDepth", dm.xdims[2] = 6, dm.xdims[3] = 4;
    pbw_attr_i(&n, "blocksize", 2);
    s = dm_load_check(&dm, &n, LUTHIER_OP_SPACE_TO_DEPTH, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "SpaceToDepth: %s", err);
    dm.op = "Pad", dm.xdims[1] = 3;
    for (k = 0; k < 3; k++) {
        dm.opset = 13, dm.nin = 2, dm.ins[0] = "pads", dm.ins[1] = "value", dm.is = pads_a, dm.nis = 8, dm.fs = &value, dm.nfs = 1;
        pbw_attr_s(&n, "mode", modes[k]);
        s = dm_load_check(&dm, &n, LUTHIER_OP_PAD, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK, "Pad %s (opset 13): %s", modes[k], err);
        dm.opset = 10, dm.nin = 0;
        pbw_attr_s(&n, "mode", modes[k]);
        pbw_attr_is(&n, "pads", pads_a, 8);
        pbw_attr_f(&n, "value", 2.5f);
        s = dm_load_check(&dm, &n, LUTHIER_OP_PAD, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK, "Pad %s (opset 10, attributes): %s", modes[k], err);
    }
    dm.rank = 3, dm.opset = 13, dm.nin = 1, dm.ins[0] = "pads", dm.is = pads_b, dm.nis = 6;
    pbw_attr_s(&n, "mode", "reflect");
    s = dm_load_check(&dm, &n, LUTHIER_OP_PAD, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "Pad reflect rank 3: %s", err);
}

/* ---- recurrent layers: LSTM, GRU, RNN ------------------------------------------------------------ */

typedef struct onnx_rnn {
    const char *op;        /* "LSTM", "GRU", "RNN" */
    luthier_op eop;
    const char *direction; /* NULL: the attribute is absent (forward) */
    int layout, opset, has_b, has_h0, has_c0, has_p, has_lens, lbr, input_forget, named_y, acts, hidden_attr;
    float clip;            /* 0: absent */
    int64_t seq, batch, input, hidden;
    const char *bad_act;   /* an activation list entry that the loader refuses */
    int w_input;           /* W as a graph input (refused) */
    int short_len;         /* a sequence_lens entry of 0 (refused) */
    int ragged;            /* sequence_lens entries 1..seq, varied */
} onnx_rnn;

/* STRINGS attribute */
static void pbw_attr_ss(pbw *n, const char *name, const char *const *v, int count) {
    pbw a = {0, 0, 0};
    int i;
    pbw_str(&a, 1, name);
    for (i = 0; i < count; i++) pbw_str(&a, 9, v[i]);
    pbw_int(&a, 20, 8); /* STRINGS */
    pbw_msg(n, 5, &a);
}

typedef struct onnx_rnn_data {
    float *x, *w, *r, *b, *p, *h0, *c0;
    int64_t xd[3], wd[3], rd[3], bd[2], pd[2], hd[3];
    int64_t D, G;
} onnx_rnn_data;

static void onnx_rnn_data_make(const onnx_rnn *o, onnx_rnn_data *dt) {
    const int64_t H = o->hidden;
    dt->D = o->direction && !strcmp(o->direction, "bidirectional") ? 2 : 1;
    dt->G = o->eop == LUTHIER_OP_LSTM ? 4 : o->eop == LUTHIER_OP_GRU ? 3 : 1;
    dt->xd[0] = o->layout ? o->batch : o->seq, dt->xd[1] = o->layout ? o->seq : o->batch, dt->xd[2] = o->input;
    dt->wd[0] = dt->rd[0] = dt->bd[0] = dt->pd[0] = dt->D;
    dt->wd[1] = dt->rd[1] = dt->G * H, dt->wd[2] = o->input, dt->rd[2] = H, dt->bd[1] = 2 * dt->G * H, dt->pd[1] = 3 * H;
    dt->hd[0] = o->layout ? o->batch : dt->D, dt->hd[1] = o->layout ? dt->D : o->batch, dt->hd[2] = H;
    dt->x = rand_buf((size_t)(o->seq * o->batch * o->input), -1.5f, 1.5f);
    dt->w = rand_buf((size_t)(dt->D * dt->G * H * o->input), -0.6f, 0.6f);
    dt->r = rand_buf((size_t)(dt->D * dt->G * H * H), -0.6f, 0.6f);
    dt->b = rand_buf((size_t)(dt->D * 2 * dt->G * H), -0.5f, 0.5f);
    dt->p = rand_buf((size_t)(dt->D * 3 * H), -0.5f, 0.5f);
    dt->h0 = rand_buf((size_t)(dt->D * o->batch * H), -1.0f, 1.0f);
    dt->c0 = rand_buf((size_t)(dt->D * o->batch * H), -1.0f, 1.0f);
}

static void onnx_rnn_data_free(onnx_rnn_data *dt) {
    free(dt->x), free(dt->w), free(dt->r), free(dt->b), free(dt->p), free(dt->h0), free(dt->c0);
}

/* The model: x -> one recurrent node named "rnn_node"; Y, Y_h (, Y_c) graph outputs. */
static void onnx_rnn_model(pbw *m, const onnx_rnn *o, const onnx_rnn_data *dt) {
    pbw g = {0, 0, 0}, nd = {0, 0, 0};
    const char *ins[8] = {"x", "W", "R", "", "", "", "", ""};
    const char *outs[3] = {"Y", "Y_h", "Y_c"};
    const int nout = o->eop == LUTHIER_OP_LSTM ? 3 : 2;
    int32_t lens[16];
    int64_t ld[1], yd[4];
    int nin = 3, k;
    ld[0] = o->batch;
    for (k = 0; k < o->batch && k < 16; k++)
        lens[k] = o->short_len && k == 0 ? 0 : o->ragged ? (int32_t)(1 + (k * 3 + 1) % o->seq) : (int32_t)o->seq;
    if (o->w_input) pbw_vi(&g, 11, "W", 3, dt->wd);
    else pbw_init_f32(&g, "W", 3, dt->wd, dt->w, (size_t)(dt->wd[0] * dt->wd[1] * dt->wd[2]));
    pbw_init_f32(&g, "R", 3, dt->rd, dt->r, (size_t)(dt->rd[0] * dt->rd[1] * dt->rd[2]));
    if (o->has_b) pbw_init_f32(&g, "B", 2, dt->bd, dt->b, (size_t)(dt->bd[0] * dt->bd[1])), ins[3] = "B", nin = 4;
    if (o->has_lens) pbw_init(&g, "lens", 6, 1, ld, lens, sizeof(int32_t) * (size_t)o->batch), ins[4] = "lens", nin = 5;
    if (o->has_h0) pbw_init_f32(&g, "h0", 3, dt->hd, dt->h0, (size_t)(dt->hd[0] * dt->hd[1] * dt->hd[2])), ins[5] = "h0", nin = 6;
    if (o->has_c0) pbw_init_f32(&g, "c0", 3, dt->hd, dt->c0, (size_t)(dt->hd[0] * dt->hd[1] * dt->hd[2])), ins[6] = "c0", nin = 7;
    if (o->has_p) pbw_init_f32(&g, "P", 2, dt->pd, dt->p, (size_t)(dt->pd[0] * dt->pd[1])), ins[7] = "P", nin = 8;
    for (k = 0; k < nin; k++) pbw_str(&nd, 1, ins[k]);
    for (k = 0; k < nout; k++) pbw_str(&nd, 2, k == 0 && !o->named_y ? "" : outs[k]);
    pbw_str(&nd, 3, "rnn_node");
    pbw_str(&nd, 4, o->op);
    if (o->hidden_attr) pbw_attr_i(&nd, "hidden_size", o->hidden);
    if (o->direction) pbw_attr_s(&nd, "direction", o->direction);
    if (o->layout) pbw_attr_i(&nd, "layout", o->layout);
    if (o->clip > 0) pbw_attr_f(&nd, "clip", o->clip);
    if (o->lbr) pbw_attr_i(&nd, "linear_before_reset", 1);
    if (o->input_forget) pbw_attr_i(&nd, "input_forget", 1);
    if (o->acts || o->bad_act) {
        static const char *const defs[3][3] = {{"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh", ""}, {"Tanh", "", ""}};
        const int row = o->eop == LUTHIER_OP_LSTM ? 0 : o->eop == LUTHIER_OP_GRU ? 1 : 2, per = 3 - row;
        const char *list[6];
        for (k = 0; k < per * (int)dt->D; k++) list[k] = k == 0 && o->bad_act ? o->bad_act : defs[row][k % per];
        pbw_attr_ss(&nd, "activations", list, per * (int)dt->D);
    }
    pbw_msg(&g, 1, &nd);
    pbw_vi(&g, 11, "x", 3, dt->xd);
    yd[0] = o->layout ? o->batch : o->seq, yd[1] = o->layout ? o->seq : dt->D, yd[2] = o->layout ? dt->D : o->batch, yd[3] = o->hidden;
    if (o->named_y) pbw_vi(&g, 12, "Y", 4, yd);
    pbw_vi(&g, 12, "Y_h", 3, dt->hd);
    if (nout > 2) pbw_vi(&g, 12, "Y_c", 3, dt->hd);
    pbw_model(m, &g, o->opset);
}

/* Loads the model of o and compares its outputs with the equations (ref_rnn_raw); returns the
   load status (err holds the message). */
static luthier_status onnx_rnn_check(const onnx_rnn *o, char *err, size_t errn) {
    onnx_rnn_data dt;
    pbw m = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_context *ctx = onnx_ctx();
    luthier_status s;
    luthier_rnn_attrs a;
    ref_rnn_t rm;
    float *ref[3], *got[3];
    int64_t lens64[16];
    size_t ny, nh;
    int k, o0;
    onnx_rnn_data_make(o, &dt);
    onnx_rnn_model(&m, o, &dt);
    s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, errn);
    ny = (size_t)(o->seq * o->batch * dt.D * o->hidden), nh = (size_t)(o->batch * dt.D * o->hidden);
    if (s == LUTHIER_STATUS_OK && ctx) {
        memset(&a, 0, sizeof a);
        a.hidden_size = o->hidden, a.layout = o->layout, a.linear_before_reset = o->lbr, a.input_forget = o->input_forget;
        a.direction = !o->direction ? 0 : !strcmp(o->direction, "reverse") ? 1 : !strcmp(o->direction, "bidirectional") ? 2 : 0;
        a.has_clip = o->clip > 0, a.clip = o->clip;
        rm.a = &a, rm.ns = o->seq, rm.nb = o->batch, rm.ni = o->input, rm.nh = o->hidden, rm.nd = dt.D, rm.ng = dt.G;
        rm.x = dt.x, rm.w = dt.w, rm.r = dt.r, rm.bias = o->has_b ? dt.b : NULL, rm.p = o->has_p ? dt.p : NULL;
        for (k = 0; k < o->batch && k < 16; k++) lens64[k] = o->ragged ? 1 + (k * 3 + 1) % o->seq : o->seq;
        rm.lens = o->has_lens ? lens64 : NULL;
        for (k = 0; k < 3; k++) ref[k] = (float *)malloc(sizeof(float) * (k ? nh : ny)), got[k] = (float *)malloc(sizeof(float) * (k ? nh : ny));
        ref_rnn_raw(&rm, o->eop, o->has_h0 ? dt.h0 : NULL, o->has_c0 ? dt.c0 : NULL, ref[0], ref[1], o->eop == LUTHIER_OP_LSTM ? ref[2] : NULL);
        o0 = o->named_y ? 0 : 1;
        CHECK(onnx_run_simple(ctx, gr, dt.x, got + o0), "%s: run: %s", o->op, luthier_context_error(ctx));
        for (k = o0; k < (o->eop == LUTHIER_OP_LSTM ? 3 : 2); k++) {
            size_t e, n = k ? nh : ny;
            double worst = 0;
            for (e = 0; e < n; e++) worst = fabs((double)got[k][e] - ref[k][e]) > worst ? fabs((double)got[k][e] - ref[k][e]) : worst;
            CHECK(worst <= 2e-5, "%s %s layout %d opset %d: output %d max |diff| %g", o->op, o->direction ? o->direction : "-", o->layout,
                  o->opset, k, worst);
        }
        for (k = 0; k < 3; k++) free(ref[k]), free(got[k]);
    }
    luthier_graph_destroy(gr);
    luthier_context_destroy(ctx);
    onnx_rnn_data_free(&dt);
    free(m.p);
    return s;
}

/* ---- Einsum, indexing and the opset-18 forms --------------------------------------------------- */

/* Plans g and runs it on ins (in the graph's input order), outputs into outs. */
static int onnx_run_ins(luthier_context *ctx, const luthier_graph *g, const void *const *ins, float *const *outs) {
    luthier_plan *p = NULL;
    void *o[8];
    int ok, i;
    for (i = 0; i < 8 && i < luthier_graph_num_outputs(g); i++) o[i] = outs[i];
    if (luthier_graph_num_outputs(g) > 8 || luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) return 0;
    ok = luthier_plan_run(ctx, p, ins, o) == LUTHIER_STATUS_OK;
    luthier_plan_destroy(p);
    return ok;
}

/* Naive einsum over explicit single-letter labels (ref: "ab,bc->ac", every label's size in sz). */
static void einsum_naive(const char *ref, const float *a, const float *b, float *y, const int64_t *sz) {
    char ta[8] = {0}, tb[8] = {0}, to[8] = {0}, labels[16] = {0};
    const char *arrow = strstr(ref, "->"), *comma = strchr(ref, ',');
    int nl = 0, k, pos[16];
    size_t total = 1, e, ny = 1;
    memcpy(ta, ref, (size_t)((comma ? comma : arrow) - ref));
    if (comma) memcpy(tb, comma + 1, (size_t)(arrow - comma - 1));
    strcpy(to, arrow + 2);
    for (k = 0; ref[k]; k++)
        if (ref[k] >= 'a' && ref[k] <= 'z' && !strchr(labels, ref[k])) labels[nl++] = ref[k];
    for (k = 0; k < nl; k++) total *= (size_t)sz[labels[k] - 'a'];
    for (k = 0; to[k]; k++) ny *= (size_t)sz[to[k] - 'a'];
    for (e = 0; e < ny; e++) y[e] = 0;
    for (e = 0; e < total; e++) {
        size_t rem = e, ia = 0, ib = 0, io = 0;
        double v;
        for (k = nl - 1; k >= 0; k--) pos[k] = (int)(rem % (size_t)sz[labels[k] - 'a']), rem /= (size_t)sz[labels[k] - 'a'];
#define EIN_OFF(t, acc) for (k = 0; t[k]; k++) acc = acc * (size_t)sz[t[k] - 'a'] + (size_t)pos[strchr(labels, t[k]) - labels]
        EIN_OFF(ta, ia);
        EIN_OFF(tb, ib);
        EIN_OFF(to, io);
#undef EIN_OFF
        v = a[ia] * (tb[0] ? (double)b[ib] : 1.0);
        y[io] += (float)v;
    }
}

static void test_onnx_einsum(void) {
    static const struct { const char *eq, *ref; int ra, rb; int64_t as[4], bs[4]; int const_b; } cases[] = {
        {"bij,bjk->bik", "bij,bjk->bik", 3, 3, {2, 3, 4}, {2, 4, 5}, 0},
        {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", 4, 4, {1, 2, 3, 4}, {1, 2, 5, 4}, 0},
        {"bhqk,bhkd->bhqd", "bhqk,bhkd->bhqd", 4, 4, {2, 2, 3, 5}, {2, 2, 5, 4}, 0},
        {"ij->ji", "ij->ji", 2, 0, {3, 4}, {0}, 0},
        {"bid,jd->bij", "bid,jd->bij", 3, 2, {2, 3, 4}, {5, 4}, 0},
        {"bid,jd->bij", "bid,jd->bij", 3, 2, {2, 3, 4}, {5, 4}, 1},
        {"...ij,...jk->...ik", "xij,xjk->xik", 3, 3, {2, 3, 4}, {2, 4, 5}, 0},
        {"... d, ... d -> ...", "xyd,xyd->xy", 3, 3, {2, 3, 4}, {2, 3, 4}, 0},
        {"ij,jk", "ij,jk->ik", 2, 2, {3, 4}, {4, 5}, 0},
        {"ij,jk->i", "ij,jk->i", 2, 2, {3, 4}, {4, 5}, 0},
        {"ij->", "ij->", 2, 0, {3, 4}, {0}, 0},
        {"bij->bj", "bij->bj", 3, 0, {2, 3, 4}, {0}, 0},
        {"i,j->ij", "i,j->ij", 1, 1, {3}, {4}, 0},
        {"ij,ij->i", "ij,ij->i", 2, 2, {3, 4}, {3, 4}, 0},
        {"abc,cd->dba", "abc,cd->dba", 3, 2, {2, 3, 4}, {4, 5}, 0},
        {"Ab,bA->", "ab,ba->", 2, 2, {3, 4}, {4, 3}, 0},
    };
    luthier_context *ctx = onnx_ctx();
    int k, e, ran = 0;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]) && ctx; k++) {
        pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
        luthier_graph *gr = NULL;
        char err[512];
        int64_t sz[26] = {0};
        float a[256], b[256], want[256], got[256], *outs[1];
        const void *ins[2];
        size_t na = 1, nb = 1, ny;
        double worst = 0;
        const char *p, *q;
        for (e = 0; e < cases[k].ra; e++) na *= (size_t)cases[k].as[e];
        for (e = 0; e < cases[k].rb; e++) nb *= (size_t)cases[k].bs[e];
        CHECK(na <= 256 && nb <= 256, "'%s': operands of %zu and %zu values (the test holds 256)", cases[k].eq, na, nb);
        for (e = 0; e < 256; e++) a[e] = (float)((e * 7 + k) % 13) / 6.0f - 1.0f, b[e] = (float)((e * 5 + 3 * k) % 11) / 5.0f - 1.0f;
        /* label sizes from the reference equation's terms */
        for (p = cases[k].ref, e = 0; *p != ',' && *p != '-'; p++) sz[*p - 'a'] = cases[k].as[e++];
        if (*p == ',')
            for (q = p + 1, e = 0; *q != '-'; q++) sz[*q - 'a'] = cases[k].bs[e++];
        einsum_naive(cases[k].ref, a, b, want, sz);
        pbw_str(&nd, 1, "a");
        if (cases[k].rb) pbw_str(&nd, 1, "b");
        pbw_str(&nd, 2, "y");
        pbw_str(&nd, 3, "einsum");
        pbw_str(&nd, 4, "Einsum");
        pbw_attr_s(&nd, "equation", cases[k].eq);
        pbw_msg(&g, 1, &nd);
        pbw_vi(&g, 11, "a", cases[k].ra, cases[k].as);
        if (cases[k].rb && cases[k].const_b) pbw_init_f32(&g, "b", cases[k].rb, cases[k].bs, b, nb);
        else if (cases[k].rb) pbw_vi(&g, 11, "b", cases[k].rb, cases[k].bs);
        {
            pbw vi = {0, 0, 0};
            pbw_str(&vi, 1, "y");
            pbw_msg(&g, 12, &vi);
        }
        pbw_model(&m, &g, 12);
        CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_OK, "'%s': %s", cases[k].eq, err);
        free(m.p);
        if (!gr) continue;
        ny = 1;
        {
            luthier_tensor_info ti;
            luthier_graph_tensor_info(gr, luthier_graph_output_tensor(gr, 0), &ti);
            for (e = 0; e < ti.rank; e++) ny *= (size_t)ti.shape[e];
        }
        ins[0] = a, ins[1] = b;
        outs[0] = got;
        CHECK(ny <= 256 && na <= 256 && nb <= 256, "'%s': %zu outputs", cases[k].eq, ny);
        if (ny > 256 || na > 256 || nb > 256) {
            luthier_graph_destroy(gr);
            continue;
        }
        CHECK(onnx_run_ins(ctx, gr, ins, outs), "'%s': run: %s", cases[k].eq, luthier_context_error(ctx));
        for (e = 0; e < (int)ny; e++)
            if (fabs(got[e] - want[e]) > worst) worst = fabs(got[e] - want[e]);
        CHECK(worst < 1e-5 && ny > 0, "'%s': max |diff| %g over %zu values", cases[k].eq, worst, ny);
        if (worst < 1e-5) ran++;
        luthier_graph_destroy(gr);
    }
    printf("    %d of %d equations match the naive einsum\n", ran, (int)(sizeof cases / sizeof cases[0]));
    luthier_context_destroy(ctx);
}

/* One Einsum node over inputs of the given shapes: the loader's status, err its message. */
static luthier_status einsum_load(const char *eq, int nin, int ra, const int64_t *as, int rb, const int64_t *bs, char *err, size_t errn) {
    pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0}, vi = {0, 0, 0};
    luthier_graph *gr = NULL;
    luthier_status s;
    int k;
    for (k = 0; k < nin; k++) pbw_str(&nd, 1, k == 0 ? "a" : "b");
    pbw_str(&nd, 2, "y");
    pbw_str(&nd, 3, "einsum");
    pbw_str(&nd, 4, "Einsum");
    if (eq) pbw_attr_s(&nd, "equation", eq);
    pbw_msg(&g, 1, &nd);
    pbw_vi(&g, 11, "a", ra, as);
    if (nin > 1) pbw_vi(&g, 11, "b", rb, bs);
    pbw_str(&vi, 1, "y");
    pbw_msg(&g, 12, &vi);
    pbw_model(&m, &g, 12);
    s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, errn);
    luthier_graph_destroy(gr);
    free(m.p);
    return s;
}

/* LSTM, GRU and RNN models written here: every direction, layout 0 and 1 (opset 14), opset 7,
   B, sequence_lens, initial states, peepholes, clip, linear_before_reset, input_forget, the
   default activations spelled out, hidden_size taken from R when absent, Y unnamed. */
static void test_onnx_rnn(void) {
    static const char *const ops[3] = {"LSTM", "GRU", "RNN"};
    static const luthier_op eops[3] = {LUTHIER_OP_LSTM, LUTHIER_OP_GRU, LUTHIER_OP_RNN};
    static const char *const dirs[4] = {NULL, "forward", "reverse", "bidirectional"};
    int o, d, c = 0;
    for (o = 0; o < 3; o++)
        for (d = 0; d < 4; d++, c++) {
            onnx_rnn r;
            char err[512];
            luthier_status s;
            memset(&r, 0, sizeof r);
            r.op = ops[o], r.eop = eops[o], r.direction = dirs[d];
            r.opset = c % 3 == 0 ? 7 : c % 3 == 1 ? 13 : 14;
            r.layout = r.opset == 14 && (c & 1);
            r.seq = c % 2 ? 5 : 1, r.batch = c % 4 < 2 ? 3 : 1, r.input = 6, r.hidden = c % 2 ? 7 : 16;
            r.has_b = c % 4 != 3, r.has_lens = c % 3 == 1 || c % 4 == 1, r.ragged = c % 4 == 1, r.has_h0 = c % 2 == 0, r.has_c0 = r.eop == LUTHIER_OP_LSTM && c % 4 == 0;
            r.has_p = r.eop == LUTHIER_OP_LSTM && d >= 2, r.lbr = r.eop == LUTHIER_OP_GRU && (d & 1);
            r.input_forget = r.eop == LUTHIER_OP_LSTM && d == 1, r.clip = d == 2 ? 0.8f : 0.0f;
            r.named_y = d != 1, r.acts = d == 3, r.hidden_attr = d != 2;
            s = onnx_rnn_check(&r, err, sizeof err);
            CHECK(s == LUTHIER_STATUS_OK, "%s %s: %s", r.op, r.direction ? r.direction : "-", err);
        }
}

/* Refusals name the node: other activations, W computed at run time, a short sequence, layout
   before opset 14, an unknown direction, hidden_size that does not match W. */
static void test_onnx_rnn_refusals(void) {
    int k;
    for (k = 0; k < 6; k++) {
        onnx_rnn r;
        char err[512];
        luthier_status s;
        static const char *const want[6] = {"Relu", "constant", "sequence_lens", "layout", "sideways", "W"};
        memset(&r, 0, sizeof r);
        r.op = "GRU", r.eop = LUTHIER_OP_GRU, r.opset = 14, r.seq = 3, r.batch = 2, r.input = 4, r.hidden = 5, r.named_y = 1;
        r.hidden_attr = 1, r.has_b = 1;
        if (k == 0) r.bad_act = "Relu";
        if (k == 1) r.w_input = 1;
        if (k == 2) r.has_lens = 1, r.short_len = 1;
        if (k == 3) r.opset = 13, r.layout = 1;
        if (k == 4) r.direction = "sideways";
        s = onnx_rnn_check(&r, err, sizeof err);
        if (k == 5) { /* W for hidden 5, the attribute says 6 */
            pbw m = {0, 0, 0};
            onnx_rnn_data dt;
            luthier_graph *gr = NULL;
            onnx_rnn_data_make(&r, &dt);
            r.hidden = 6;
            onnx_rnn_model(&m, &r, &dt);
            s = luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err);
            luthier_graph_destroy(gr);
            onnx_rnn_data_free(&dt);
            free(m.p);
        }
        CHECK(s != LUTHIER_STATUS_OK && strstr(err, "rnn_node") && strstr(err, want[k]), "case %d: %s: %s", k,
              luthier_status_string(s), err);
    }
}

/* A keyword spotter: x [1,4,20] -> Conv1d (6 filters of 3, pads 1) -> Transpose [20,1,6] -> GRU
   (hidden 8, Y unnamed) -> Y_h [1,1,8] -> Reshape [1,8] -> Gemm (5 classes) against naive loops. */
static void test_onnx_kws_gru(void) {
    enum { C = 4, L = 20, O = 6, K = 3, H = 8, NC = 5 };
    static const int64_t pads[2] = {1, 1}, perm[3] = {2, 0, 1};
    const int64_t dx[3] = {1, C, L}, dw[3] = {O, C, K}, db[1] = {O}, dgw[3] = {1, 3 * H, O}, dgr[3] = {1, 3 * H, H};
    const int64_t dgb[2] = {1, 6 * H}, dsh[1] = {2}, dfw[2] = {NC, H}, dfb[1] = {NC}, dy[2] = {1, NC};
    const int64_t shape[2] = {1, H};
    float *x = rand_buf(C * L, -1, 1), *w = rand_buf(O * C * K, -0.5f, 0.5f), *b = rand_buf(O, -0.2f, 0.2f);
    float *gw = rand_buf(3 * H * O, -0.5f, 0.5f), *gr = rand_buf(3 * H * H, -0.5f, 0.5f), *gb = rand_buf(6 * H, -0.3f, 0.3f);
    float *fw = rand_buf(NC * H, -0.5f, 0.5f), *fb = rand_buf(NC, -0.1f, 0.1f), seqx[L * O], y[NC], yh[H], yseq[L * H];
    float *outs[1];
    pbw m = {0, 0, 0}, g = {0, 0, 0}, nd = {0, 0, 0};
    luthier_graph *gra = NULL;
    luthier_context *ctx = onnx_ctx();
    luthier_rnn_attrs a;
    ref_rnn_t rm;
    char err[512];
    double worst = 0;
    int o, t, c, k;
    pbw_init_f32(&g, "cw", 3, dw, w, O * C * K);
    pbw_init_f32(&g, "cb", 1, db, b, O);
    pbw_init_f32(&g, "gw", 3, dgw, gw, 3 * H * O);
    pbw_init_f32(&g, "gr", 3, dgr, gr, 3 * H * H);
    pbw_init_f32(&g, "gb", 2, dgb, gb, 6 * H);
    pbw_init(&g, "shape", 7, 1, dsh, shape, sizeof shape);
    pbw_init_f32(&g, "fw", 2, dfw, fw, NC * H);
    pbw_init_f32(&g, "fb", 1, dfb, fb, NC);
    pbw_str(&nd, 1, "x"), pbw_str(&nd, 1, "cw"), pbw_str(&nd, 1, "cb"), pbw_str(&nd, 2, "conv"), pbw_str(&nd, 3, "conv1d");
    pbw_str(&nd, 4, "Conv"), pbw_attr_is(&nd, "pads", pads, 2), pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "conv"), pbw_str(&nd, 2, "seq"), pbw_str(&nd, 3, "to_seq"), pbw_str(&nd, 4, "Transpose");
    pbw_attr_is(&nd, "perm", perm, 3), pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "seq"), pbw_str(&nd, 1, "gw"), pbw_str(&nd, 1, "gr"), pbw_str(&nd, 1, "gb"), pbw_str(&nd, 2, "");
    pbw_str(&nd, 2, "h"), pbw_str(&nd, 3, "gru"), pbw_str(&nd, 4, "GRU"), pbw_attr_i(&nd, "hidden_size", H);
    pbw_attr_i(&nd, "linear_before_reset", 1), pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "h"), pbw_str(&nd, 1, "shape"), pbw_str(&nd, 2, "flat"), pbw_str(&nd, 3, "flat"), pbw_str(&nd, 4, "Reshape");
    pbw_msg(&g, 1, &nd);
    pbw_str(&nd, 1, "flat"), pbw_str(&nd, 1, "fw"), pbw_str(&nd, 1, "fb"), pbw_str(&nd, 2, "y"), pbw_str(&nd, 3, "fc");
    pbw_str(&nd, 4, "Gemm"), pbw_attr_i(&nd, "transB", 1), pbw_msg(&g, 1, &nd);
    pbw_vi(&g, 11, "x", 3, dx);
    pbw_vi(&g, 12, "y", 2, dy);
    pbw_model(&m, &g, 13);
    CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gra, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    for (t = 0; t < L; t++) /* the convolution, as [seq, batch 1, O] */
        for (o = 0; o < O; o++) {
            double acc = b[o];
            for (c = 0; c < C; c++)
                for (k = 0; k < K; k++)
                    if (t + k - 1 >= 0 && t + k - 1 < L) acc += (double)x[c * L + t + k - 1] * w[(o * C + c) * K + k];
            seqx[t * O + o] = (float)acc;
        }
    memset(&a, 0, sizeof a);
    a.hidden_size = H, a.linear_before_reset = 1;
    rm.a = &a, rm.ns = L, rm.nb = 1, rm.ni = O, rm.nh = H, rm.nd = 1, rm.ng = 3, rm.x = seqx, rm.w = gw, rm.r = gr, rm.bias = gb, rm.p = NULL;
    rm.lens = NULL;
    ref_rnn_raw(&rm, LUTHIER_OP_GRU, NULL, NULL, yseq, yh, NULL);
    outs[0] = y;
    if (gra && ctx) {
        CHECK(onnx_count_op(gra, LUTHIER_OP_GRU) == 1, "one gru node");
        CHECK(onnx_run_simple(ctx, gra, x, outs), "run: %s", luthier_context_error(ctx));
        for (o = 0; o < NC; o++) {
            double acc = fb[o];
            for (k = 0; k < H; k++) acc += (double)yh[k] * fw[o * H + k];
            worst = fabs(acc - y[o]) > worst ? fabs(acc - y[o]) : worst;
        }
        CHECK(worst < 1e-5, "max |diff| %g", worst);
    }
    luthier_graph_destroy(gra);
    luthier_context_destroy(ctx);
    free(m.p), free(x), free(w), free(b), free(gw), free(gr), free(gb), free(fw), free(fb);
}

/* Refused equations: the message names the equation (or says what is wrong with its bytes). */
static void test_onnx_einsum_refusals(void) {
    static const struct { const char *eq; int nin; luthier_status want; const char *says; } cases[] = {
        {"ii->i", 1, LUTHIER_STATUS_UNSUPPORTED, "diagonal"},
        {"ij,jk,kl->il", 3, LUTHIER_STATUS_UNSUPPORTED, "operands"},
        {"ij,jk->ik", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "sizes 4 and 3"},
        {"ij-jk", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "expected"},
        {"ij,jk-ik", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "'-' without '>'"},
        {"i$,jk->ik", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "expected"},
        {"i.j,jk->ik", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "'...'"},
        {"......,jk->", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "'...'"},
        {"ij,jk->q", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "no operand"},
        {"ij,jk->ii", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "repeated"},
        {"ijk,jk->i", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "labels for an operand of rank"},
        {"ij,jk->ik!", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "unexpected"},
        {"ij", 2, LUTHIER_STATUS_INVALID_ARGUMENT, "expected"},
        {NULL, 2, LUTHIER_STATUS_INVALID_ARGUMENT, "missing"},
    };
    const int64_t as[2] = {3, 4}, bs[2] = {4, 3}, sq[2] = {3, 3};
    char err[512], longeq[400];
    int k;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        luthier_status s = einsum_load(cases[k].eq, cases[k].nin, 2, k == 0 ? sq : as, 2, k == 2 ? as : bs, err, sizeof err);
        CHECK(s == cases[k].want && strstr(err, cases[k].says) && (!cases[k].eq || strstr(err, cases[k].eq)),
              "'%s': %s: %s", cases[k].eq ? cases[k].eq : "(none)", luthier_status_string(s), err);
    }
    memset(longeq, 'a', sizeof longeq - 1);
    longeq[sizeof longeq - 1] = 0;
    CHECK(einsum_load(longeq, 1, 2, as, 0, NULL, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "longer than"), "long: %s", err);
    CHECK(einsum_load("ij\x01->ji", 1, 2, as, 0, NULL, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "printable"), "byte: %s", err);
    CHECK(einsum_load("abcdefg->a", 1, 2, as, 0, NULL, err, sizeof err) != LUTHIER_STATUS_OK, "7 labels: %s", err);
}

/* A model of one node (attributes written by the caller into *nd, consumed) over x and named
   initializers, at opset `opset`: status and message. */
typedef struct o18_init { const char *name; int type, rank; int64_t dims[2]; const void *data; size_t bytes; } o18_init;
static luthier_status o18_load(pbw *nd, int opset, int rx, const int64_t *xs, const o18_init *inits, int ninit, int nout,
                               luthier_graph **out, char *err, size_t errn) {
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_status s;
    int k;
    pbw_msg(&g, 1, nd);
    for (k = 0; k < ninit; k++) pbw_init(&g, inits[k].name, inits[k].type, inits[k].rank, inits[k].dims, inits[k].data, inits[k].bytes);
    pbw_vi(&g, 11, "x", rx, xs);
    for (k = 0; k < nout; k++) {
        pbw vi = {0, 0, 0};
        char nm[16];
        snprintf(nm, sizeof nm, "y%d", k);
        pbw_str(&vi, 1, nm);
        pbw_msg(&g, 12, &vi);
    }
    pbw_model(&m, &g, opset);
    *out = NULL;
    s = luthier_onnx_load_memory(m.p, m.n, NULL, out, err, errn);
    free(m.p);
    return s;
}

/* A node of op over inputs ins ("" absent) to outputs y0..y(nout-1). */
static void o18_node(pbw *nd, const char *op, const char *const *ins, int nin, int nout) {
    int k;
    memset(nd, 0, sizeof *nd);
    for (k = 0; k < nin; k++) pbw_str(nd, 1, ins[k]);
    for (k = 0; k < nout; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "y%d", k);
        pbw_str(nd, 2, nm);
    }
    pbw_str(nd, 3, op);
    pbw_str(nd, 4, op);
}

/* The opset-18 forms: Split's num_outputs (uneven parts), Reduce* axes as an input,
   GroupNormalization (per-group scale and bias), ScatterND / ScatterElements max and min, and
   each refused below opset 18 (and opset 19 refused as a whole). */
static void test_onnx_opset18(void) {
    static const char *const xin[1] = {"x"}, *const xax[2] = {"x", "axes"}, *const gn[3] = {"x", "scale", "bias"};
    static const char *const sc[3] = {"x", "idx", "upd"};
    const int64_t xs[2] = {2, 7}, x4[4] = {2, 6, 2, 3};
    const int64_t axes[1] = {-1}, idx[6] = {1, -1, 1, 6, 0, -7};
    const float scale[3] = {1.5f, -0.5f, 2.0f}, bias[3] = {0.25f, 1.0f, -1.0f}, upd[6] = {5, -9, 7, 0.5f, 2, -3};
    luthier_context *ctx = onnx_ctx();
    luthier_graph *gr = NULL;
    char err[512];
    float x[72], y[3][72], *outs[3];
    const void *ins[1];
    pbw nd;
    int k, j, c;
    for (k = 0; k < 72; k++) x[k] = (float)((k * 11) % 17) / 4.0f - 2.0f;
    ins[0] = x;
    for (k = 0; k < 3; k++) outs[k] = y[k];
    /* Split into 3 of 7: 3, 3, 1 */
    for (k = 17; k <= 19; k++) {
        luthier_status s;
        o18_node(&nd, "Split", xin, 1, 3);
        pbw_attr_i(&nd, "axis", 1);
        pbw_attr_i(&nd, "num_outputs", 3);
        s = o18_load(&nd, k, 2, xs, NULL, 0, 3, &gr, err, sizeof err);
        if (k == 17) CHECK(s == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "num_outputs"), "Split num_outputs at 17: %s", err);
        if (k == 19) CHECK(s != LUTHIER_STATUS_OK && strstr(err, "opset"), "opset 19: %s", err);
        if (k != 18) continue;
        CHECK(s == LUTHIER_STATUS_OK, "Split num_outputs: %s", err);
        if (gr && ctx && onnx_run_ins(ctx, gr, ins, outs)) {
            for (j = 0; j < 2; j++)
                for (c = 0; c < 7; c++) {
                    const int part = c / 3, at = c % 3, w = part < 2 ? 3 : 1;
                    CHECK(y[part][j * w + at] == x[j * 7 + c], "split part %d [%d,%d]", part, j, at);
                }
        } else {
            CHECK(0, "Split run");
        }
        luthier_graph_destroy(gr);
    }
    /* ReduceMax with axes as an input (18), the attribute refused there */
    for (k = 0; k < 2; k++) {
        o18_init in = {"axes", 7, 1, {1, 0}, axes, sizeof axes};
        luthier_status s;
        o18_node(&nd, "ReduceMax", k ? xin : xax, k ? 1 : 2, 1);
        pbw_attr_i(&nd, "keepdims", 0);
        if (k) pbw_attr_is(&nd, "axes", axes, 1);
        s = o18_load(&nd, 18, 2, xs, &in, 1, 1, &gr, err, sizeof err);
        if (k) {
            CHECK(s == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "'axes'"), "ReduceMax axes attribute at 18: %s", err);
        } else {
            CHECK(s == LUTHIER_STATUS_OK, "ReduceMax 18: %s", err);
            CHECK(gr && ctx && onnx_run_ins(ctx, gr, ins, outs), "run: %s", ctx ? luthier_context_error(ctx) : "no context");
            if (gr && ctx && onnx_run_ins(ctx, gr, ins, outs)) {
                for (j = 0; j < 2; j++) {
                    float mx = x[j * 7];
                    for (c = 1; c < 7; c++) mx = x[j * 7 + c] > mx ? x[j * 7 + c] : mx;
                    CHECK(y[0][j] == mx, "ReduceMax row %d: %g, want %g", j, y[0][j], mx);
                }
            }
        }
        luthier_graph_destroy(gr);
    }
    /* GroupNormalization: 3 groups of 2 channels */
    for (k = 17; k <= 18; k++) {
        const o18_init in[2] = {{"scale", 1, 1, {3, 0}, scale, sizeof scale}, {"bias", 1, 1, {3, 0}, bias, sizeof bias}};
        luthier_status s;
        o18_node(&nd, "GroupNormalization", gn, 3, 1);
        pbw_attr_i(&nd, "num_groups", 3);
        pbw_attr_f(&nd, "epsilon", 1e-3f);
        s = o18_load(&nd, k, 4, x4, in, 2, 1, &gr, err, sizeof err);
        if (k == 17) {
            CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "opsets 18"), "GroupNormalization at 17: %s", err);
        } else {
            CHECK(s == LUTHIER_STATUS_OK, "GroupNormalization: %s", err);
            CHECK(gr && ctx && onnx_run_ins(ctx, gr, ins, outs), "run: %s", ctx ? luthier_context_error(ctx) : "no context");
            if (gr && ctx && onnx_run_ins(ctx, gr, ins, outs)) {
                double worst = 0;
                for (j = 0; j < 6; j++) { /* (n, group): 12 values each */
                    const float *xg = x + j * 12;
                    double mean = 0, var = 0;
                    for (c = 0; c < 12; c++) mean += xg[c] / 12.0;
                    for (c = 0; c < 12; c++) var += (xg[c] - mean) * (xg[c] - mean) / 12.0;
                    for (c = 0; c < 12; c++) {
                        double want = (xg[c] - mean) / sqrt(var + 1e-3) * scale[j % 3] + bias[j % 3];
                        if (fabs(want - y[0][j * 12 + c]) > worst) worst = fabs(want - y[0][j * 12 + c]);
                    }
                }
                CHECK(worst < 2e-5, "GroupNormalization max |diff| %g", worst);
            }
        }
        luthier_graph_destroy(gr);
    }
    /* Pad's axes input and Resize's opset-18 attributes, refused at 17 */
    for (k = 17; k <= 18; k++) {
        static const char *const pin[4] = {"x", "pads", "", "axes"}, *const rin[4] = {"x", "", "", "sizes"};
        const int64_t pads[2] = {1, 2}, sizes[1] = {5};
        const o18_init pi[2] = {{"pads", 7, 1, {2, 0}, pads, sizeof pads}, {"axes", 7, 1, {1, 0}, axes, sizeof axes}};
        const o18_init ri[1] = {{"sizes", 7, 1, {1, 0}, sizes, sizeof sizes}};
        luthier_status s;
        o18_node(&nd, "Pad", pin, 4, 1);
        s = o18_load(&nd, k, 2, xs, pi, 2, 1, &gr, err, sizeof err);
        CHECK(k == 18 ? s == LUTHIER_STATUS_OK : s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "opset 18"), "Pad axes at %d: %s", k, err);
        if (gr) {
            luthier_tensor_info ti;
            luthier_graph_tensor_info(gr, luthier_graph_output_tensor(gr, 0), &ti);
            CHECK(ti.rank == 2 && ti.shape[0] == 2 && ti.shape[1] == 10, "Pad axes -1 by 1, 2: [%lld, %lld]", (long long)ti.shape[0], (long long)ti.shape[1]);
        }
        luthier_graph_destroy(gr);
        o18_node(&nd, "Resize", rin, 4, 1);
        pbw_attr_is(&nd, "axes", axes, 1);
        pbw_attr_s(&nd, "keep_aspect_ratio_policy", "stretch");
        s = o18_load(&nd, k, 2, xs, ri, 1, 1, &gr, err, sizeof err);
        CHECK(k == 18 ? s == LUTHIER_STATUS_OK : s == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "'axes'"), "Resize axes at %d: %s", k, err);
        luthier_graph_destroy(gr);
    }
    /* ScatterND max and ScatterElements min (18), refused at 17 */
    for (k = 0; k < 4; k++) {
        const int64_t is[2] = {3, 1}, us[2] = {3, 7}, es[2] = {2, 3};
        const int elems = k >= 2, opset = k % 2 ? 17 : 18;
        const o18_init in[2] = {{"idx", 7, 2, {elems ? 2 : 3, elems ? 3 : 1}, idx, elems ? sizeof idx : 3 * sizeof(int64_t)},
                                {"upd", 1, 2, {elems ? 2 : 3, elems ? 3 : 7}, upd, elems ? sizeof upd : 0}};
        float big[21];
        o18_init in2[2];
        luthier_status s;
        (void)is, (void)us, (void)es;
        for (j = 0; j < 21; j++) big[j] = (float)((j * 5) % 9) - 4.0f;
        in2[0] = in[0], in2[1] = in[1];
        if (!elems) in2[1].data = big, in2[1].bytes = sizeof big;
        o18_node(&nd, elems ? "ScatterElements" : "ScatterND", sc, 3, 1);
        pbw_attr_s(&nd, "reduction", elems ? "min" : "max");
        if (elems) pbw_attr_i(&nd, "axis", 1);
        s = o18_load(&nd, opset, 2, xs, in2, 2, 1, &gr, err, sizeof err);
        if (opset == 17) {
            CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "opset 18"), "%s reduction at 17: %s", elems ? "ScatterElements" : "ScatterND", err);
        } else {
            CHECK(s == LUTHIER_STATUS_OK, "scatter 18: %s", err);
            CHECK(gr && ctx && onnx_run_ins(ctx, gr, ins, outs), "run: %s", ctx ? luthier_context_error(ctx) : "no context");
            if (gr && ctx && onnx_run_ins(ctx, gr, ins, outs)) {
                float want[14];
                memcpy(want, x, sizeof want);
                for (j = 0; j < 3; j++)
                    for (c = 0; c < (elems ? 1 : 7); c++) {
                        if (elems) { /* row j / 3 .. indices [2,3] over x [2,7] along 1 */
                            (void)0;
                        } else {
                            const int r = (int)(idx[j] < 0 ? idx[j] + 2 : idx[j]);
                            want[r * 7 + c] = big[j * 7 + c] > want[r * 7 + c] ? big[j * 7 + c] : want[r * 7 + c];
                        }
                    }
                if (elems)
                    for (j = 0; j < 6; j++) {
                        const int r = j / 3, col = (int)(idx[j] < 0 ? idx[j] + 7 : idx[j]);
                        want[r * 7 + col] = upd[j] < want[r * 7 + col] ? upd[j] : want[r * 7 + col];
                    }
                for (j = 0; j < 14; j++) CHECK(y[0][j] == want[j], "%s [%d]: %g, want %g", elems ? "ScatterElements" : "ScatterND", j, y[0][j], want[j]);
            }
        }
        luthier_graph_destroy(gr);
    }
    luthier_context_destroy(ctx);
}

/* ---- the deployed-model families (tests/onnx_export.py), at opsets 13 and 17 --------------------- */

/* Loads tests/data/onnx/NAME.onnx and checks the engine operators the loader made of it: spec is
   "op=count ..." with the engine's operator names (luthier_op_name). */
static void onnx_check_ops(const char *name, const char *spec) {
    char path[512], err[512], op[32];
    luthier_graph *g = NULL;
    int want, used;
    snprintf(path, sizeof path, "%s/%s.onnx", ONNX_MODELS_DIR, name);
    CHECK(luthier_onnx_load(path, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", name, err);
    while (g && sscanf(spec, " %31[a-z0-9_]=%d%n", op, &want, &used) == 2) {
        int k = 0;
        while (k < LUTHIER_OP_COUNT && strcmp(luthier_op_name((luthier_op)k), op)) k++;
        CHECK(k < LUTHIER_OP_COUNT, "%s: no engine operator '%s'", name, op);
        if (k < LUTHIER_OP_COUNT)
            CHECK(onnx_count_op(g, (luthier_op)k) == want, "%s: %d %s nodes, want %d", name, onnx_count_op(g, (luthier_op)k), op, want);
        spec += used;
    }
    luthier_graph_destroy(g);
}

/* NAME at opset 13 and NAME_opset17 against PyTorch within 1e-4 of the largest |output|, with
   the operators spec13 and spec17 (onnx_check_ops) */
static void onnx_check_family(const char *name, const char *spec13, const char *spec17) {
    char n17[128];
    snprintf(n17, sizeof n17, "%s_opset17", name);
    onnx_check_model(name, 1e-4);
    onnx_check_model(n17, 1e-4);
    onnx_check_ops(name, spec13);
    onnx_check_ops(n17, spec17);
}

/* MobileNetV3-like: hardswish (opset 13: x * HardSigmoid(x), one hard_swish again; 17: HardSwish), squeeze-excitation
   with hardsigmoid, depthwise convs, inverted residuals, hardswish + dropout classifier */
static void test_onnx_family_mbv3(void) {
    onnx_check_family("mbv3_small", "conv2d=22 global_avgpool=4 dense=2 hard_sigmoid=3 hard_swish=7",
                      "conv2d=22 global_avgpool=4 dense=2 hard_sigmoid=3 hard_swish=7");
}

/* YOLOv5-like: conv+BN+SiLU (Sigmoid*Mul, one silu each), CSP split/concat, nearest 2x upsample,
   Detect head (sigmoid, slices, reshapes, permutes, grid and anchor arithmetic) */
static void test_onnx_family_yolo(void) {
    const char *ops = "conv2d=18 silu=16 sigmoid=2 resize=1 transpose=2 pow=2";
    onnx_check_family("yolo_small", ops, ops);
}

/* U-Net: GroupNorm (InstanceNormalization over [N, G, rest] -> layer norm), maxpool, bilinear
   upsampling with align_corners False and True, skip concats */
static void test_onnx_family_unet(void) {
    const char *ops = "conv2d=11 layer_norm=10 maxpool=2 resize=2 concat=2";
    onnx_check_family("unet_small", ops, ops);
}

/* ESPCN-like super-resolution (PixelShuffle -> DepthToSpace) + ConvTranspose2d path; style
   transfer (reflection padding, InstanceNorm, residual block, ConvTranspose2d) */
static void test_onnx_family_superres_style(void) {
    const char *sr = "conv2d=3 depth_to_space=1 conv_transpose=1", *st = "conv2d=5 pad=5 layer_norm=5 conv_transpose=1";
    onnx_check_family("superres_small", sr, sr);
    onnx_check_family("style_small", st, st);
}

/* keyword spotting over [1, 40, 49] MFCCs: Conv1d + BatchNorm1d + ReLU | PReLU, then a GRU, or a
   2-layer bidirectional LSTM, then a Linear on the last step */
static void test_onnx_family_kws(void) {
    onnx_check_family("kws_gru", "conv2d=1 gru=1 dense=1", "conv2d=1 gru=1 dense=1");
    onnx_check_family("kws_lstm", "conv2d=1 prelu=1 lstm=2 dense=1", "conv2d=1 prelu=1 lstm=2 dense=1");
}

/* Hugging Face BERT and GPT-2 layouts with two int64 inputs (input_ids, attention_mask; the
   fixtures' masks have padding zeros): the extended mask (1 - mask) * finfo.min added to the
   scores, GPT-2's causal bool tril buffer through Where, gelu_new; BERT has two outputs */
static void test_onnx_family_hf(void) {
    static const char *names[2] = {"hf_bert_small", "hf_gpt2_small"};
    int k;
    onnx_check_family("hf_bert_small", "gelu=2 layer_norm=5 softmax=2 erf=0", "gelu=2 layer_norm=5 softmax=2 erf=0");
    onnx_check_family("hf_gpt2_small", "gelu=2 layer_norm=5 where=2 tanh=0", "gelu=2 layer_norm=5 where=2 tanh=0");
    for (k = 0; k < 2; k++) {
        char path[512], err[512];
        luthier_onnx_tensor mask;
        luthier_graph *g = NULL;
        size_t e, zeros = 0;
        memset(&mask, 0, sizeof mask);
        snprintf(path, sizeof path, "%s/%s/input_1.pb", ONNX_MODELS_DIR, names[k]);
        CHECK(luthier_onnx_tensor_load(path, &mask, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", path, err);
        for (e = 0; e < mask.numel && mask.dtype == LUTHIER_DTYPE_I64; e++) zeros += ((const int64_t *)mask.data)[e] == 0;
        CHECK(mask.name && !strcmp(mask.name, "attention_mask") && zeros > 0 && zeros < mask.numel, "%s: a mask with %zu padding zeros", names[k], zeros);
        luthier_onnx_tensor_free(&mask);
        snprintf(path, sizeof path, "%s/%s.onnx", ONNX_MODELS_DIR, names[k]);
        CHECK(luthier_onnx_load(path, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
        CHECK(g && luthier_onnx_input_index(g, "input_ids") == 0 && luthier_onnx_input_index(g, "attention_mask") == 1,
              "%s: inputs by ONNX name", names[k]);
        luthier_graph_destroy(g);
    }
}

/* DeepLab-like: dilated backbone, ASPP (1x1, dilated 3x3 branches, image pooling + bilinear
   upsample back), bilinear resize of the logits to the input size */
static void test_onnx_family_deeplab(void) {
    const char *ops = "conv2d=10 global_avgpool=1 resize=2 concat=1";
    onnx_check_family("deeplab_small", ops, ops);
}

static void run_onnx_tests(void) {
    RUN(test_onnx_rnn);
    RUN(test_onnx_rnn_refusals);
    RUN(test_onnx_expand_folded);
    RUN(test_onnx_reduce_folded);
    RUN(test_onnx_kws_gru);
    RUN(test_onnx_einsum);
    RUN(test_onnx_einsum_refusals);
    RUN(test_onnx_opset18);
    RUN(test_onnx_resize);
    RUN(test_onnx_dm_refusals);
    RUN(test_onnx_depth_space_pad);
    RUN(test_onnx_all_refusals);
    RUN(test_onnx_op_table);
    RUN(test_onnx_hostile);
    RUN(test_onnx_not_regular_files);
    RUN(test_onnx_tensor_files);
    RUN(test_onnx_tiny_unsorted);
    RUN(test_onnx_raw_alignment);
    RUN(test_onnx_malformed);
    RUN(test_onnx_corrupted);
    RUN(test_onnx_torch_cnn);
    RUN(test_onnx_torch_resnet);
    RUN(test_onnx_torch_bert);
    RUN(test_onnx_torch_gpt2);
    RUN(test_onnx_family_mbv3);
    RUN(test_onnx_family_yolo);
    RUN(test_onnx_family_unet);
    RUN(test_onnx_family_superres_style);
    RUN(test_onnx_family_kws);
    RUN(test_onnx_family_hf);
    RUN(test_onnx_family_deeplab);
    RUN(test_onnx_matmul_bias);
    RUN(test_onnx_const_broadcasts);
    RUN(test_onnx_conv_kernel_shape);
    RUN(test_onnx_tile);
    RUN(test_onnx_quant_constants);
    RUN(test_onnx_lrn_zero_attrs);
    RUN(test_onnx_op_opset_range);
    RUN(test_onnx_conv1d_pool1d);
    RUN(test_onnx_conv_transpose);
    RUN(test_onnx_node_domain);
    RUN(test_onnx_instance_norm);
    RUN(test_onnx_group_norm_exported);
    RUN(test_onnx_dropout_training_ratio0);
    RUN(test_onnx_activations);
    RUN(test_onnx_unary2);
    RUN(test_onnx_logic);
    RUN(test_onnx_logic_refusals);
    RUN(test_onnx_silu_pattern);
    RUN(test_onnx_hardswish_pattern);
    RUN(test_onnx_gelu_tanh_pattern);
    RUN(test_onnx_gelu_tanh_arity);
    RUN(test_onnx_backend_activations);
    RUN(test_onnx_quant_after_activations);
    RUN(test_onnx_quant_activations);
    RUN(test_onnx_quant_errors);
    RUN(test_onnx_qdq_cnn);
    RUN(test_onnx_qlinear);
    RUN(test_onnx_backend_nodes);
}
