/* Whole networks against PyTorch: every network of luthier_zoo.h is built, planned with the
   default configurations, run on its generated input and compared with the fixture
   tests/data/models/<name>.ref that tests/torch_ref.py wrote (PyTorch 1.13, fp32, same weights
   and inputs): max |out - ref| <= 1e-4 * max |ref| over the stored slices. --quick (qemu,
   sanitizers) runs only the reduced "_small" variants. Also: graph structure against the
   PyTorch models (node and parameter counts, input/output shapes), bad names, and ResNet-18
   (small) with every 3x3 convolution forced to Winograd F(4x4, 3x3) (tolerance 1e-3).
   Included by test_main.c (run from the repository root); call run_model_tests(). */
#include "luthier_zoo.h"

#define MODELS_FIXTURE_DIR "tests/data/models/"

/* Graph structure: nodes as luthier_zoo.h builds them; parameters = the PyTorch model's floating
   state_dict elements (tests/torch_ref.py prints them as "weights"). */
static const struct {
    const char *name;
    int nodes;
    int64_t params;
} models_expect[] = {
    {"resnet18", 69, 11699112},          {"resnet50", 175, 25610152},
    {"resnet101", 345, 44654504},        {"alexnet", 20, 61100840},
    {"vgg16", 38, 138357544},            {"googlenet", 196, 6639464},
    {"mobilenet_v2", 152, 3538984},      {"bert", 246, 108891648},
    {"gpt2", 247, 124439808},            {"gpt2_decode", 270, 124439808},
    {"resnet18_small", 69, 717396},      {"resnet50_small", 175, 1545556},
    {"resnet101_small", 345, 2755412},   {"alexnet_small", 20, 840500},
    {"vgg16_small", 38, 1125132},        {"googlenet_small", 196, 383828},
    {"mobilenet_v2_small", 152, 198220}, {"bert_small", 46, 168320},
    {"gpt2_small", 47, 168192},          {"gpt2_decode_small", 50, 168192},
};

/* ---- fixtures ---- */

typedef struct models_slice {
    uint32_t output;
    uint64_t offset, count;
    float *values;
} models_slice;

typedef struct models_ref {
    int num_slices;
    models_slice *slices;
    unsigned char *blob; /* the file; slices' values are copied out */
} models_ref;

static uint64_t models_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void models_ref_free(models_ref *r) {
    int i;
    for (i = 0; i < r->num_slices; i++) free(r->slices[i].values);
    free(r->slices);
    free(r->blob);
    memset(r, 0, sizeof *r);
}

/* Reads tests/data/models/<name>.ref; 0 with a CHECK failure when missing or malformed. */
static int models_ref_read(const char *name, models_ref *r) {
    char path[256];
    FILE *f;
    long size;
    size_t pos = 16, k;
    int i;
    memset(r, 0, sizeof *r);
    snprintf(path, sizeof path, MODELS_FIXTURE_DIR "%s.ref", name);
    f = fopen(path, "rb");
    CHECK(f != NULL, "missing fixture %s (run the tests from the repository root; the fixtures "
                     "are committed, regenerate with /usr/bin/python3 tests/torch_ref.py)", path);
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    r->blob = (unsigned char *)test_alloc(size > 0 ? (size_t)size : 1);
    if (size < 16 || fread(r->blob, 1, (size_t)size, f) != (size_t)size) size = -1;
    fclose(f);
    CHECK(size >= 16 && memcmp(r->blob, "LUTHREF1", 8) == 0 && models_le(r->blob + 8, 4) == 1,
          "%s: not a LUTHREF1 version 1 fixture", path);
    if (size < 16 || memcmp(r->blob, "LUTHREF1", 8) != 0 || models_le(r->blob + 8, 4) != 1) {
        models_ref_free(r);
        return 0;
    }
    r->num_slices = (int)models_le(r->blob + 12, 4);
    r->slices = (models_slice *)test_alloc(sizeof(models_slice) * (size_t)(r->num_slices + 1));
    memset(r->slices, 0, sizeof(models_slice) * (size_t)(r->num_slices + 1));
    for (i = 0; i < r->num_slices; i++) {
        models_slice *s = &r->slices[i];
        if (pos + 20 > (size_t)size) break;
        s->output = (uint32_t)models_le(r->blob + pos, 4);
        s->offset = models_le(r->blob + pos + 4, 8);
        s->count = models_le(r->blob + pos + 12, 8);
        pos += 20;
        if (s->count > ((size_t)size - pos) / 4) break;
        s->values = (float *)test_alloc((size_t)s->count * sizeof(float));
        for (k = 0; k < s->count; k++, pos += 4) {
            uint32_t bits = (uint32_t)models_le(r->blob + pos, 4);
            memcpy(&s->values[k], &bits, sizeof bits);
        }
    }
    CHECK(i == r->num_slices && pos == (size_t)size, "%s: truncated or oversized fixture", path);
    if (i != r->num_slices || pos != (size_t)size) {
        r->num_slices = i;
        models_ref_free(r);
        return 0;
    }
    return 1;
}

/* ---- graph structure ---- */

static void models_check_graph(const char *name, const luthier_graph *g) {
    luthier_zoo_info info;
    double flops = 0;
    int64_t params = 0;
    int i, j, e = -1;
    for (i = 0; i < (int)(sizeof models_expect / sizeof models_expect[0]); i++)
        if (strcmp(models_expect[i].name, name) == 0) e = i;
    CHECK(e >= 0, "%s: no expectations", name);
    CHECK(luthier_zoo_get_info(name, NULL, &info) == LUTHIER_STATUS_OK, "%s: info", name);
    CHECK(luthier_zoo_stats(g, &flops, &params) == LUTHIER_STATUS_OK, "%s: stats", name);
    if (e >= 0) {
        CHECK(luthier_graph_num_nodes(g) == models_expect[e].nodes, "%s: %d nodes, expected %d", name,
              luthier_graph_num_nodes(g), models_expect[e].nodes);
        CHECK(params == models_expect[e].params, "%s: %lld parameters, PyTorch has %lld", name,
              (long long)params, (long long)models_expect[e].params);
    }
    CHECK(flops > 0, "%s: no FLOPs", name);
    for (i = 0; i < info.num_inputs + info.num_outputs; i++) {
        int out = i >= info.num_inputs, q = out ? i - info.num_inputs : i, t = -1, ok, rank;
        const char *tn = out ? info.output_name[q] : info.input_name[q];
        const int64_t *shape = out ? info.output_shape[q] : info.input_shape[q];
        luthier_tensor_info ti;
        rank = out ? info.output_rank[q] : info.input_rank[q];
        ok = luthier_graph_find_tensor(g, tn, &t) == LUTHIER_STATUS_OK &&
             luthier_graph_tensor_info(g, t, &ti) == LUTHIER_STATUS_OK;
        CHECK(ok, "%s: no tensor '%s'", name, tn);
        if (!ok) continue;
        CHECK(out ? ti.is_output : ti.is_input, "%s: '%s' is not a graph %s", name, tn, out ? "output" : "input");
        ok = ti.rank == rank;
        for (j = 0; ok && j < rank; j++) ok = ti.shape[j] == shape[j];
        CHECK(ok, "%s: '%s' has rank %d [%lld, %lld, %lld, %lld], PyTorch's is rank %d [%lld, %lld, %lld, %lld]",
              name, tn, ti.rank, (long long)ti.shape[0], (long long)ti.shape[1], (long long)ti.shape[2],
              (long long)ti.shape[3], rank, (long long)shape[0], (long long)shape[1], (long long)shape[2],
              (long long)shape[3]);
    }
}

static void test_models_build(void) {
    const char *const *names = luthier_zoo_names();
    int i;
    for (i = 0; names[i]; i++) {
        luthier_graph *g = NULL;
        char err[512];
        luthier_status s;
        if ((T.quick || T.small_models) && !strstr(names[i], "_small")) continue;
        s = luthier_zoo_build(names[i], NULL, &g, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK && g, "%s: %s: %s", names[i], luthier_status_string(s), err);
        if (g) models_check_graph(names[i], g);
        luthier_graph_destroy(g);
    }
}

static void test_models_bad_names(void) {
    luthier_graph *g = (luthier_graph *)&g;
    luthier_zoo_options o;
    luthier_zoo_info info;
    char err[256], tiny[8];
    float x[4];
    memset(&o, 0, sizeof o);
    CHECK(luthier_zoo_build("resnet19", &o, &g, err, sizeof err) == LUTHIER_STATUS_NOT_FOUND && !g &&
          strstr(err, "resnet19"), "unknown name: %s", err);
    CHECK(luthier_zoo_build(NULL, NULL, &g, err, sizeof err) == LUTHIER_STATUS_NOT_FOUND, "NULL name");
    CHECK(luthier_zoo_build("", NULL, &g, tiny, sizeof tiny) == LUTHIER_STATUS_NOT_FOUND &&
          strlen(tiny) < sizeof tiny, "short error buffer");
    CHECK(luthier_zoo_build("_small", NULL, &g, NULL, 0) == LUTHIER_STATUS_NOT_FOUND, "no err buffer");
    CHECK(luthier_zoo_build("resnet18", NULL, NULL, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "NULL out");
    CHECK(luthier_zoo_input("nope", NULL, 0, x, sizeof x) == LUTHIER_STATUS_NOT_FOUND, "input: bad name");
    CHECK(luthier_zoo_input("resnet18_small", NULL, 0, x, sizeof x) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "input: buffer too small");
    CHECK(luthier_zoo_input("resnet18_small", NULL, 1, x, sizeof x) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "input: bad index");
    CHECK(luthier_zoo_get_info("gpt3", NULL, &info) == LUTHIER_STATUS_NOT_FOUND, "info: bad name");
    o.small = 1;
    CHECK(luthier_zoo_get_info("bert", &o, &info) == LUTHIER_STATUS_OK && info.input_shape[0][1] == 16,
          "options.small picks the reduced variant");
}

/* ---- runs ---- */

/* Builds, plans (configs: optional per-node configurations), runs and compares with the fixture. */
/* AUTO's policy of the contexts models_check_run creates (LUTHIER_AUTO_DEFAULT: the context's default). */
static luthier_auto_policy models_policy;

static void models_check_run(const char *name, int force_winograd, double tol) {
    luthier_context *ctx = NULL;
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_node_config *cfg = NULL;
    luthier_zoo_info info;
    models_ref ref;
    void *ins[LUTHIER_ZOO_MAX_IO], *outs[LUTHIER_ZOO_MAX_IO];
    char err[512];
    luthier_status s;
    double max_err = 0, max_ref = 0;
    uint64_t compared = 0;
    int i, have_ref;
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    have_ref = models_ref_read(name, &ref);
    s = luthier_zoo_build(name, NULL, &g, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "%s: build: %s", name, err);
    CHECK(luthier_zoo_get_info(name, NULL, &info) == LUTHIER_STATUS_OK, "%s: info", name);
    {
        luthier_context_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.auto_policy = models_policy;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    }
    if (s || !ctx) goto done;
    for (i = 0; i < info.num_inputs; i++) ins[i] = test_alloc(info.input_bytes[i]);
    for (i = 0; i < info.num_outputs; i++) {
        size_t k;
        outs[i] = test_alloc(info.output_bytes[i]);
        for (k = 0; k < info.output_bytes[i] / sizeof(float); k++) ((float *)outs[i])[k] = test_sentinel();
    }
    memset(&pd, 0, sizeof pd);
    if (force_winograd) {
        int n = luthier_graph_num_nodes(g);
        cfg = (luthier_node_config *)test_alloc(sizeof(luthier_node_config) * (size_t)n);
        memset(cfg, 0, sizeof(luthier_node_config) * (size_t)n);
        for (i = 0; i < n; i++) cfg[i].algorithm = LUTHIER_CONV_WINOGRAD_4X3;
        pd.configs = cfg;
        pd.num_configs = n;
        pd.fallback_invalid = 1;
    }
    s = luthier_plan_create(ctx, g, &pd, &p);
    CHECK(s == LUTHIER_STATUS_OK, "%s: luthier_plan_create: %s: %s", name, luthier_status_string(s),
          luthier_context_error(ctx));
    if (s) goto done;
    if (force_winograd) { /* the 3x3 stride-1 convolutions run Winograd, the others fell back */
        luthier_plan_info pi;
        luthier_step_info si;
        int wino = 0, convs = 0;
        memset(&pi, 0, sizeof pi);
        CHECK(luthier_plan_get_info(p, &pi) == LUTHIER_STATUS_OK, "%s: plan info", name);
        for (i = 0; i < pi.num_steps; i++)
            if (luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK && si.op == LUTHIER_OP_CONV2D) {
                convs++;
                wino += si.algorithm == LUTHIER_CONV_WINOGRAD_4X3;
            }
        CHECK(wino > 0 && wino < convs, "%s: %d of %d convolution steps run Winograd F(4,3)", name, wino, convs);
    }
    { /* every conv step prefetches the first block of the next conv step, the last none */
        int last = -1, links = 0, bad = 0;
        for (i = 0; i < p->num_steps; i++) {
            const luthier__pstep *st = &p->steps[i];
            luthier__prefetch_region want;
            if (st->kind != LUTHIER__STEP_NODE || st->q || st->d.op != LUTHIER_OP_CONV2D || !st->conv) {
                bad += st->next.b != NULL;
                continue;
            }
            if (last >= 0) {
                luthier__conv2d_first_block(st->conv, &want);
                bad += memcmp(&want, &p->steps[last].next, sizeof want) != 0;
                links += want.b != NULL;
            }
            last = i;
        }
        if (last >= 0) bad += p->steps[last].next.b != NULL;
        CHECK(bad == 0 && (last < 0 || links > 0),
              "%s: %d steps do not prefetch the next conv step's first block (%d links)", name, bad, links);
    }
    luthier_graph_destroy(g); /* the plan must not need it */
    g = NULL;
    /* gpt2_decode's past tensors come from running gpt2 on ctx */
    s = luthier_zoo_inputs(ctx, name, NULL, ins, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_OK, "%s: inputs: %s", name, err);
    if (s) goto done;
    s = luthier_plan_run(ctx, p, (const void *const *)ins, outs);
    CHECK(s == LUTHIER_STATUS_OK, "%s: luthier_plan_run: %s: %s", name, luthier_status_string(s),
          luthier_context_error(ctx));
    if (s || !have_ref) goto done;
    for (i = 0; i < ref.num_slices; i++) {
        const models_slice *sl = &ref.slices[i];
        uint64_t k, n;
        int bad = sl->output >= (uint32_t)info.num_outputs;
        n = bad ? 0 : info.output_bytes[sl->output] / sizeof(float);
        bad = bad || sl->offset > n || sl->count > n - sl->offset;
        CHECK(!bad, "%s: fixture slice %d (output %u, %llu + %llu) outside the outputs", name, i,
              (unsigned)sl->output, (unsigned long long)sl->offset, (unsigned long long)sl->count);
        if (bad) continue;
        for (k = 0; k < sl->count; k++) {
            double r = sl->values[k], o = ((const float *)outs[sl->output])[sl->offset + k];
            double e = fabs(o - r);
            if (fabs(r) > max_ref) max_ref = fabs(r);
            if (!(e <= max_err)) max_err = e != e ? HUGE_VAL : e; /* NaN and sentinels count */
        }
        compared += sl->count;
    }
    printf("    %-20s %s%llu values: max|err| %.3g = %.3g x max|ref| %.4g\n", name,
           force_winograd ? "winograd F(4,3), " : "", (unsigned long long)compared, max_err,
           max_ref > 0 ? max_err / max_ref : 0.0, max_ref);
    CHECK(compared > 0 && max_err <= tol * max_ref, "%s: max|err| %.4g > %g x max|ref| %.4g", name,
          max_err, tol, max_ref);
done:
    for (i = 0; i < LUTHIER_ZOO_MAX_IO; i++) {
        free(ins[i]);
        free(outs[i]);
    }
    free(cfg);
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    if (have_ref) models_ref_free(&ref);
}

#define MODELS_CASE(n)                                                                    \
    static void test_model_##n(void) { models_check_run(#n, 0, 1e-4); }                   \
    static void test_model_##n##_small(void) { models_check_run(#n "_small", 0, 1e-4); }
MODELS_CASE(resnet18)
MODELS_CASE(resnet50)
MODELS_CASE(resnet101)
MODELS_CASE(alexnet)
MODELS_CASE(vgg16)
MODELS_CASE(googlenet)
MODELS_CASE(mobilenet_v2)
MODELS_CASE(bert)
MODELS_CASE(gpt2)
MODELS_CASE(gpt2_decode)
#undef MODELS_CASE

static void test_model_resnet18_small_winograd(void) { models_check_run("resnet18_small", 1, 1e-3); }

/* AUTO from the cost model (no records): valid plans whose outputs match PyTorch; Winograd
   F(2x2)/F(4x4) may run, hence the Winograd test's tolerance. */
static void models_check_model_policy(const char *name) {
    models_policy = LUTHIER_AUTO_MODEL;
    models_check_run(name, 0, 1e-3);
    models_policy = LUTHIER_AUTO_DEFAULT;
}
static void test_model_auto_model_small(void) {
    models_check_model_policy("resnet18_small");
    models_check_model_policy("mobilenet_v2_small");
    models_check_model_policy("googlenet_small");
    models_check_model_policy("vgg16_small");
}

static void run_model_tests(void) {
    RUN(test_models_build);
    RUN(test_models_bad_names);
    RUN(test_model_resnet18_small);
    RUN(test_model_resnet50_small);
    RUN(test_model_resnet101_small);
    RUN(test_model_alexnet_small);
    RUN(test_model_vgg16_small);
    RUN(test_model_googlenet_small);
    RUN(test_model_mobilenet_v2_small);
    RUN(test_model_bert_small);
    RUN(test_model_gpt2_small);
    RUN(test_model_gpt2_decode_small);
    RUN(test_model_resnet18_small_winograd);
    RUN(test_model_auto_model_small);
    if ((T.quick || T.small_models)) {
        printf("skip full-size networks (--quick)\n");
        return;
    }
    RUN(test_model_resnet18);
    RUN(test_model_resnet50);
    RUN(test_model_resnet101);
    RUN(test_model_alexnet);
    RUN(test_model_vgg16);
    RUN(test_model_googlenet);
    RUN(test_model_mobilenet_v2);
    RUN(test_model_bert);
    RUN(test_model_gpt2);
    RUN(test_model_gpt2_decode);
}
