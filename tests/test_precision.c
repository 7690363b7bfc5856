/* Precision per node (luthier_node_config.precision, luthier_precision's table): a node lowered
   to fp16 or int8 inside an fp32 plan, and a node kept in fp32 inside an fp16 or int8 plan, gives
   bit for bit the output the plan of its own precision gives for it, while every other node gives
   its plan's; the names, the refusals, the records' precision field, and the tuner's AUTO
   precision with its accuracy guard. Included by test_main.c after test_fp16.c and test_tune.c
   (their graph builders, tune_tmp). */

/* Parallel branches, each a graph output: x [n, 8, 6, 6] -> conv 3x3 (16), conv 1x1 (24);
   v [n, 300] -> dense 130, 257, 33. prec_nodes gets the five nodes' indices. */
#define PREC_BRANCHES 5
static const char *const prec_names[PREC_BRANCHES] = {"c3", "c1", "fa", "fb", "fc"};

static void prec_build(gb *b, int64_t n, int *nodes) {
    int64_t xs[4] = {n, 8, 6, 6}, vs[2] = {n, 300};
    int x, v, k;
    memset(b, 0, sizeof *b);
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    luthier_graph_input(b->g, "v", LUTHIER_DTYPE_F32, 2, vs, &v);
    luthier_graph_output(b->g, gb_conv(b, "c3", x, 16, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE));
    luthier_graph_output(b->g, gb_conv(b, "c1", x, 24, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE));
    luthier_graph_output(b->g, gb_lin(b, "fa", v, 130, 300));
    luthier_graph_output(b->g, gb_lin(b, "fb", v, 257, 300));
    luthier_graph_output(b->g, gb_lin(b, "fc", v, 33, 300));
    for (k = 0; k < PREC_BRANCHES; k++) luthier_graph_find_node(b->g, prec_names[k], &nodes[k]);
}

typedef struct prec_io {
    float *x, *v;
    const void *ins[2];
    size_t numel[PREC_BRANCHES];
} prec_io;

static void prec_io_make(prec_io *io, const gb *b, int64_t n) {
    int k;
    io->x = (float *)test_alloc((size_t)n * 288 * sizeof(float));
    io->v = (float *)test_alloc((size_t)n * 300 * sizeof(float));
    test_fill(io->x, (size_t)n * 288);
    test_fill(io->v, (size_t)n * 300);
    io->ins[0] = io->x;
    io->ins[1] = io->v;
    for (k = 0; k < PREC_BRANCHES; k++) io->numel[k] = ref_numel(&b->g->tensors[b->g->outputs[k]]);
}

/* Runs the plan of (precision, cal, configs) into outs[k] (malloc'ed); 0 when it fails. */
static int prec_run(luthier_context *ctx, const gb *b, const prec_io *io, luthier_precision prec, const luthier_calibration *cal,
                    const luthier_node_config *cfg, float **outs) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    int k, ok;
    memset(&pd, 0, sizeof pd);
    pd.precision = prec;
    pd.int8 = cal;
    pd.configs = cfg;
    pd.num_configs = cfg ? luthier_graph_num_nodes(b->g) : 0;
    for (k = 0; k < PREC_BRANCHES; k++) outs[k] = (float *)malloc(io->numel[k] * sizeof(float) + 4);
    ok = luthier_plan_create(ctx, b->g, &pd, &p) == LUTHIER_STATUS_OK &&
         luthier_plan_run(ctx, p, io->ins, (void *const *)outs) == LUTHIER_STATUS_OK;
    CHECK(ok, "plan of precision %s: %s", luthier_precision_name(prec), luthier_context_error(ctx));
    luthier_plan_destroy(p);
    return ok;
}

static void prec_free(float **outs) {
    int k;
    for (k = 0; k < PREC_BRANCHES; k++) free(outs[k]);
}

/* Plans of precision base with node `node` at `lowered`: branch `node` equals the plan of
   `lowered`'s (bit for bit), the others the plan of base's. */
static void prec_check_mix(luthier_context *ctx, const gb *b, const prec_io *io, const int *nodes, const luthier_calibration *cal,
                           luthier_precision base, float **obase, luthier_precision lowered, float **olow, const char *what) {
    luthier_node_config cfg[16];
    int k, j;
    for (k = 0; k < PREC_BRANCHES; k++) {
        float *got[PREC_BRANCHES];
        memset(cfg, 0, sizeof cfg);
        cfg[nodes[k]].precision = lowered;
        if (!prec_run(ctx, b, io, base, cal, cfg, got)) {
            prec_free(got);
            continue;
        }
        for (j = 0; j < PREC_BRANCHES; j++) {
            const float *want = j == k ? olow[j] : obase[j];
            CHECK(!memcmp(got[j], want, io->numel[j] * sizeof(float)), "%s: %s plan with %s at %s: branch %s differs from the %s plan's",
                  what, luthier_precision_name(base), luthier_precision_name(lowered), prec_names[k], prec_names[j],
                  luthier_precision_name(j == k ? lowered : base));
        }
        prec_free(got);
    }
}

/* The branches of plans p and q differ somewhere (else the mix checks prove nothing). */
static int prec_differ(const prec_io *io, float **p, float **q, int first, int last) {
    int k, d = 0;
    for (k = first; k <= last; k++) d += memcmp(p[k], q[k], io->numel[k] * sizeof(float)) != 0;
    return d;
}

static luthier_calibration *prec_calibrate(luthier_context *ctx, const gb *b, const prec_io *io) {
    const void *const *samples[1];
    luthier_calib_desc cd;
    luthier_calibration *cal = NULL;
    samples[0] = io->ins;
    memset(&cd, 0, sizeof cd);
    cd.num_samples = 1;
    cd.samples = samples;
    CHECK(luthier_calibrate(ctx, b->g, &cd, &cal) == LUTHIER_STATUS_OK, "calibrate: %s", luthier_context_error(ctx));
    return cal;
}

static void test_precision_node_mix(void) {
    static const int64_t batches[2] = {1, 9};
    int bi, t;
    for (bi = 0; bi < 2; bi++)
        for (t = 1; t <= 2; t++) {
            luthier_context *ctx = ctx_threads(t);
            luthier_calibration *cal;
            float *o32[PREC_BRANCHES], *o16[PREC_BRANCHES], *o8[PREC_BRANCHES];
            luthier_plan_desc pd;
            prec_io io;
            gb b;
            int nodes[PREC_BRANCHES];
            char what[64];
            snprintf(what, sizeof what, "batch %lld, %d threads", (long long)batches[bi], t);
            prec_build(&b, batches[bi], nodes);
            prec_io_make(&io, &b, batches[bi]);
            cal = prec_calibrate(ctx, &b, &io);
            /* the plans of one precision against the interpreter */
            memset(&pd, 0, sizeof pd);
            pd.precision = LUTHIER_PRECISION_FP32;
            plan_vs_ref(ctx, b.g, &pd, io.ins, 1e-5, what);
            pd.precision = LUTHIER_PRECISION_FP16;
            plan_vs_ref(ctx, b.g, &pd, io.ins, 5e-2, what);
            if (prec_run(ctx, &b, &io, LUTHIER_PRECISION_FP32, NULL, NULL, o32) &&
                prec_run(ctx, &b, &io, LUTHIER_PRECISION_FP16, NULL, NULL, o16) &&
                prec_run(ctx, &b, &io, LUTHIER_PRECISION_INT8, cal, NULL, o8)) {
                /* fp16 weights change every dense branch; int8 every branch */
                CHECK(prec_differ(&io, o32, o16, 2, 4) == 3 && prec_differ(&io, o32, o8, 0, 4) == 5, "%s: the plans agree", what);
                prec_check_mix(ctx, &b, &io, nodes, NULL, LUTHIER_PRECISION_FP32, o32, LUTHIER_PRECISION_FP16, o16, what);
                prec_check_mix(ctx, &b, &io, nodes, NULL, LUTHIER_PRECISION_FP16, o16, LUTHIER_PRECISION_FP32, o32, what);
                prec_check_mix(ctx, &b, &io, nodes, cal, LUTHIER_PRECISION_FP32, o32, LUTHIER_PRECISION_INT8, o8, what);
                prec_check_mix(ctx, &b, &io, nodes, cal, LUTHIER_PRECISION_INT8, o8, LUTHIER_PRECISION_FP32, o32, what);
                prec_check_mix(ctx, &b, &io, nodes, cal, LUTHIER_PRECISION_INT8, o8, LUTHIER_PRECISION_FP16, o16, what);
            }
            prec_free(o32), prec_free(o16), prec_free(o8);
            luthier_calibration_destroy(cal);
            luthier_context_destroy(ctx);
            free(io.x), free(io.v);
            gb_free(&b);
        }
}

/* Names both ways; bad names, node precisions that are no node's, int8 without parameters, a
   kernel of another precision's family, and a precision an operator has no form of are refused
   with a message naming the node. */
static void test_precision_refusals(void) {
    static const char *const bad[] = {"", "FP16", "fp64", "int4", "fp16 ", "autox"};
    luthier_context *ctx = ctx_threads(1);
    luthier_node_config cfg[16];
    luthier_calibration *cal = NULL;
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier_precision q;
    gb b;
    int nodes[PREC_BRANCHES], k, relu;
    for (k = 0; k < (int)LUTHIER_PRECISION_COUNT; k++)
        CHECK(luthier_precision_parse(luthier_precision_name((luthier_precision)k), &q) == LUTHIER_STATUS_OK && (int)q == k,
              "precision %d: '%s'", k, luthier_precision_name((luthier_precision)k));
    CHECK(luthier_precision_name(LUTHIER_PRECISION_COUNT) == NULL, "a name past the table");
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        q = LUTHIER_PRECISION_FP16;
        CHECK(luthier_precision_parse(bad[k], &q) == LUTHIER_STATUS_INVALID_ARGUMENT && q == LUTHIER_PRECISION_FP16, "'%s' parsed",
              bad[k]);
    }
    CHECK(luthier_precision_parse(NULL, &q) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL parsed");
    prec_build(&b, 1, nodes);
    relu = -1;
    {
        int t = gb_act(&b, LUTHIER_OP_RELU, "r", b.g->outputs[0], 0, 0);
        luthier_graph_output(b.g, t);
        luthier_graph_find_node(b.g, "r", &relu);
    }
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = luthier_graph_num_nodes(b.g);
#define PREC_REFUSED(node, prec, want)                                                                                      \
    do {                                                                                                                    \
        memset(cfg, 0, sizeof cfg);                                                                                         \
        cfg[node].precision = (prec);                                                                                       \
        p = (luthier_plan *)&pd;                                                                                            \
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && p == NULL &&                     \
                  strstr(luthier_context_error(ctx), b.g->nodes[node].name) && strstr(luthier_context_error(ctx), want),  \
              "%d at %s: %s", (int)(prec), b.g->nodes[node].name, luthier_context_error(ctx));                              \
    } while (0)
    PREC_REFUSED(nodes[2], LUTHIER_PRECISION_INT8, "no calibration");
    PREC_REFUSED(nodes[0], LUTHIER_PRECISION_AUTO, "not a node's precision");
    PREC_REFUSED(nodes[0], (luthier_precision)77, "not a node's precision");
    PREC_REFUSED(relu, LUTHIER_PRECISION_FP16, "no fp16 form");
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK, "calibration");
    pd.int8 = cal; /* empty: no tensor has parameters */
    PREC_REFUSED(nodes[0], LUTHIER_PRECISION_INT8, "has no quantization parameters");
    pd.int8 = NULL;
    /* an F16W kernel on a node configured fp32: refused, or the default with fallback_invalid */
    memset(cfg, 0, sizeof cfg);
    cfg[nodes[3]].precision = LUTHIER_PRECISION_FP32;
    snprintf(cfg[nodes[3]].kernel, sizeof cfg[nodes[3]].kernel, "%s", "4x4__scalar_hybrid_f16w");
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && p == NULL &&
              strstr(luthier_context_error(ctx), "'fb'") && strstr(luthier_context_error(ctx), "precision fp32"),
          "an F16W kernel at fp32: %s", luthier_context_error(ctx));
    pd.fallback_invalid = 1;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "fallback: %s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_info info;
        luthier_plan_get_info(p, &info);
        CHECK(info.num_fallbacks == 1, "%d fallbacks", info.num_fallbacks);
        for (k = 0; k < info.num_steps; k++) {
            luthier_step_info si;
            luthier_plan_step_info(p, k, &si);
            if (si.node >= 0 && si.op == LUTHIER_OP_DENSE)
                CHECK(luthier__kernel_named(si.kernel) && luthier__kernel_named(si.kernel)->family == LUTHIER_KERNELS_F32, "%s: %s",
                      si.name, si.kernel);
        }
    }
    luthier_plan_destroy(p);
    /* the plan's precision: int8 needs a calibration */
    memset(&pd, 0, sizeof pd);
    pd.precision = LUTHIER_PRECISION_INT8;
    p = (luthier_plan *)&pd;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && p == NULL &&
              strstr(luthier_context_error(ctx), "without a calibration"),
          "an int8 plan without a calibration: %s", luthier_context_error(ctx));
#undef PREC_REFUSED
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

/* The records' ninth field: an AUTO plan takes each layer's precision from its record (an
   fp16 record lowers its node, a line without the field means fp32); an unknown name makes the
   line malformed (skipped with a note); plans of one precision ignore the field. */
static void test_precision_records(void) {
    luthier_context *ctx = ctx_threads(2);
    float *o32[PREC_BRANCHES], *o16[PREC_BRANCHES], *got[PREC_BRANCHES];
    luthier_node_config cfg[16];
    char fpr[640], sig[PREC_BRANCHES][320], text[8192];
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    prec_io io;
    gb b;
    int nodes[PREC_BRANCHES], k, matched = -1;
    size_t n = 0;
    prec_build(&b, 1, nodes);
    prec_io_make(&io, &b, 1);
    luthier_tune_fingerprint(ctx, fpr, sizeof fpr);
    for (k = 0; k < PREC_BRANCHES; k++) luthier_tune_signature(b.g, nodes[k], sig[k], sizeof sig[k]);
    n += (size_t)snprintf(text + n, sizeof text - n, "luthier-records 1\n");
    /* fa fp16 (F16W), fb fp32 with the field, fc fp16 under a name that does not exist, c1 an
       old line without the field */
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\tfp16 %s\t-\t-\tratio\tdefault\t1\t1\tfp16\n", fpr, sig[2]);
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\t%s\t-\t-\tratio\tdefault\t1\t1\tfp32\n", fpr, sig[3]);
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\tfp16 %s\t-\t-\tratio\tdefault\t1\t1\tfp17\n", fpr, sig[4]);
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\t%s\t-\t-\tratio\tdefault\t1\t1\n", fpr, sig[1]);
    (void)n;
    memset(&pd, 0, sizeof pd);
    pd.precision = LUTHIER_PRECISION_AUTO;
    pd.records_text = text;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK && strstr(luthier_context_error(ctx), "3 nodes configured") &&
              strstr(luthier_context_error(ctx), "1 malformed"),
          "auto plan from records: %s", luthier_context_error(ctx));
    if (p && prec_run(ctx, &b, &io, LUTHIER_PRECISION_FP32, NULL, NULL, o32) &&
        prec_run(ctx, &b, &io, LUTHIER_PRECISION_FP16, NULL, NULL, o16)) {
        for (k = 0; k < PREC_BRANCHES; k++) got[k] = (float *)malloc(io.numel[k] * sizeof(float) + 4);
        CHECK(luthier_plan_run(ctx, p, io.ins, (void *const *)got) == LUTHIER_STATUS_OK, "run: %s", luthier_context_error(ctx));
        for (k = 0; k < PREC_BRANCHES; k++)
            CHECK(!memcmp(got[k], k == 2 ? o16[k] : o32[k], io.numel[k] * sizeof(float)), "auto plan: branch %s is not the %s plan's",
                  prec_names[k], k == 2 ? "fp16" : "fp32");
        CHECK(prec_differ(&io, o32, o16, 2, 2) == 1, "fa: fp16 and fp32 agree");
        prec_free(got);
    }
    prec_free(o32), prec_free(o16);
    luthier_plan_destroy(p);
    /* the same text for plain apply (an fp32 plan): the fp16 record does not match, the others
       come with the plan's precision */
    memset(cfg, 0, sizeof cfg);
    CHECK(luthier_records_apply_text(ctx, b.g, text, cfg, &matched) == LUTHIER_STATUS_OK && matched == 2 &&
              cfg[nodes[3]].precision == LUTHIER_PRECISION_DEFAULT && cfg[nodes[2]].precision == LUTHIER_PRECISION_DEFAULT,
          "apply: %d matched: %s", matched, luthier_context_error(ctx));
    luthier_context_destroy(ctx);
    free(io.x), free(io.v);
    gb_free(&b);
}

/* AUTO's conversions: in the plan of c3 lowered to int8 (the others fp32) each conversion step
   (its time set to 1 ms, every other step's to 0) costs c3's unit, which reads what it
   quantizes; c3 goes back to fp32 when its gain is below that cost and stays when above. */
static void test_precision_auto_conversions(void) {
    luthier_context *ctx = ctx_threads(1);
    luthier_calibration *cal;
    luthier_tune_desc td;
    luthier_tune_result r;
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier__auto A;
    prec_io io;
    gb b;
    double cost[64], total = 0, gain;
    int nodes[PREC_BRANCHES], k, u, conversions = 0, lowered;
    prec_build(&b, 1, nodes);
    prec_io_make(&io, &b, 1);
    cal = prec_calibrate(ctx, &b, &io);
    memset(&td, 0, sizeof td);
    td.budget_seconds = 1.0;
    td.progress = -1;
    td.int8 = cal;
    memset(&A, 0, sizeof A);
    CHECK(luthier__auto_passes(&A, ctx, b.g, &td) == LUTHIER_STATUS_OK && A.npass == 3 && A.T[0].ntasks <= 64, "passes: %s",
          luthier_context_error(ctx));
    A.choice = (int *)calloc((size_t)A.T[0].ntasks + 1, sizeof(int));
    A.configs = (luthier_node_config *)calloc((size_t)b.g->num_nodes + 1, sizeof *A.configs);
    u = A.T[0].node_task[nodes[0]];
    lowered = A.T[2].node_task[nodes[0]];
    CHECK(u >= 0 && lowered >= 0, "c3 has an fp32 and an int8 task");
    if (u >= 0 && lowered >= 0) {
        A.choice[u] = 2;
        luthier__auto_configs(&A, b.g, -1);
        memset(&pd, 0, sizeof pd);
        pd.configs = A.configs;
        pd.num_configs = b.g->num_nodes;
        pd.int8 = cal;
        pd.precision = LUTHIER_PRECISION_FP32;
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "plan: %s", luthier_context_error(ctx));
        for (k = 0; p && k < p->num_steps; k++) {
            const int conv = p->steps[k].kind != LUTHIER__STEP_NODE && p->steps[k].kind != LUTHIER__STEP_CONVERT;
            p->steps[k].seconds = conv ? 1e-3 : 0.0;
            conversions += conv;
        }
        if (p) luthier__auto_conversion_costs(&A, p, cost);
        for (k = 0; k < A.T[0].ntasks; k++) total += cost[k];
        CHECK(conversions >= 1 && cost[u] == (double)conversions && total == cost[u], "%d conversions, c3 costs %g ms of %g",
              conversions, cost[u], total);
        luthier_plan_destroy(p);
        for (k = 0; k < 2; k++) { /* gain: half the cost, then twice it */
            memset(&r, 0, sizeof r);
            A.choice[u] = 2;
            A.T[0].tasks[u].best_ms = 10.0;
            gain = k ? 2.0 * cost[u] : 0.5 * cost[u];
            A.T[2].tasks[lowered].best_ms = 10.0 - gain;
            CHECK(luthier__auto_drop_costly(&A, b.g, cost, &r) == !k && A.choice[u] == (k ? 2 : 0) &&
                      r.conversions_dropped == (k ? 0 : A.T[0].tasks[u].ops),
                  "gain %g ms for conversions of %g ms: c3 %s", gain, cost[u], A.choice[u] ? "kept int8" : "back to fp32");
        }
    }
    for (k = 0; k < A.npass; k++) luthier__tuner_free(&A.T[k]);
    free(A.choice), free(A.configs);
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
    free(io.x), free(io.v);
    gb_free(&b);
}

/* fa's weight 0 out of fp16's range (inf in fp16): lowering fa breaks any bound. */
static void prec_poison(gb *b) {
    int k;
    for (k = 0; k < b->g->num_tensors; k++)
        if (!strcmp(b->g->tensors[k].name, "fa.w")) ((float *)(uintptr_t)b->g->tensors[k].data)[0] = 7e4f;
}

/* AUTO's guard on its own (every unit that has an fp16 task chosen fp16): with the default
   bounds only the poisoned layer goes back to fp32; with a tiny guard every one does. Then a
   whole run: its records make an AUTO plan within the guard, with no node in fp16 for a tiny
   guard. */
static void test_precision_auto_guard(void) {
    int t;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        luthier_tune_desc td;
        luthier_tune_result r;
        luthier__auto A;
        luthier__guard G;
        gb b;
        int nodes[PREC_BRANCHES], u, k, lowered = 0, pass;
        char rec[512];
        prec_build(&b, 1, nodes);
        prec_poison(&b);
        memset(&td, 0, sizeof td);
        td.budget_seconds = T.quick ? 1.0 : 2.0;
        td.progress = -1;
        for (pass = 0; pass < 2; pass++) {
            memset(&A, 0, sizeof A);
            memset(&G, 0, sizeof G);
            memset(&r, 0, sizeof r);
            G.ctx = ctx, G.g = b.g;
            td.min_cosine = pass ? 1.0 : 0;
            td.max_abs_error = pass ? 1e-30 : 0;
            CHECK(luthier__auto_passes(&A, ctx, b.g, &td) == LUTHIER_STATUS_OK && A.npass == 2, "passes: %s", luthier_context_error(ctx));
            A.choice = (int *)calloc((size_t)A.T[0].ntasks + 1, sizeof(int));
            A.harm = (double *)calloc((size_t)A.T[0].ntasks + 1, sizeof(double));
            A.configs = (luthier_node_config *)calloc((size_t)b.g->num_nodes + 1, sizeof *A.configs);
            luthier__auto_configs(&A, b.g, -1);
            CHECK(luthier__guard_open(&G, &td, A.configs) == LUTHIER_STATUS_OK, "guard: %s", luthier_context_error(ctx));
            lowered = 0;
            for (k = 0; k < PREC_BRANCHES; k++) {
                u = A.T[0].node_task[nodes[k]];
                if (A.T[1].node_task[nodes[k]] >= 0) A.choice[u] = 1, lowered++;
            }
            /* the dense layers, and the convolutions where the CPU has fp16 arithmetic */
            CHECK(lowered == (luthier__f16_kernel(ctx, 16) ? 5 : 3), "%d layers with an fp16 task", lowered);
            CHECK(luthier__auto_guard(&A, &G, &r) == LUTHIER_STATUS_OK, "guard: %s", luthier_context_error(ctx));
            for (k = 0; k < PREC_BRANCHES; k++) {
                const int want = pass || k == 2 || A.T[1].node_task[nodes[k]] < 0 ? 0 : 1;
                CHECK(A.choice[A.T[0].node_task[nodes[k]]] == want, "%s guard: %s %s", pass ? "tiny" : "default", prec_names[k],
                      A.choice[A.T[0].node_task[nodes[k]]] ? "kept fp16" : "back to fp32");
            }
            CHECK(r.guard_dropped == (pass ? lowered : 1) && r.guard_cosine >= (pass ? 1.0 : 0.9999), "%d dropped, cosine %.9f",
                  r.guard_dropped, r.guard_cosine);
            for (k = 0; k < A.npass; k++) luthier__tuner_free(&A.T[k]);
            free(A.choice), free(A.harm), free(A.configs);
            luthier__guard_free(&G);
        }
        /* the whole run: records with a precision field that an AUTO plan takes */
        tune_tmp("auto.records", rec, sizeof rec);
        td.precision = LUTHIER_PRECISION_AUTO;
        for (pass = 0; pass < 2; pass++) {
            luthier_plan_desc pd;
            luthier_plan_info info;
            luthier_plan *p = NULL;
            int f16 = 0;
            td.min_cosine = pass ? 1.0 : 0;
            td.max_abs_error = pass ? 1e-30 : 0;
            CHECK(luthier_tune(ctx, b.g, &td, rec, &r) == LUTHIER_STATUS_OK, "auto tune: %s", luthier_context_error(ctx));
            CHECK(r.nodes_fp16 < lowered && (!pass || r.nodes_fp16 == 0) && r.guard_cosine >= (pass ? 1.0 : 0.9999),
                  "auto tune (%s guard): %d fp16, %d dropped, cosine %.9f", pass ? "tiny" : "default", r.nodes_fp16, r.guard_dropped,
                  r.guard_cosine);
            memset(&pd, 0, sizeof pd);
            pd.precision = LUTHIER_PRECISION_AUTO;
            pd.records = rec;
            CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "auto plan: %s", luthier_context_error(ctx));
            info.num_steps = 0;
            if (p) luthier_plan_get_info(p, &info);
            for (k = 0; k < info.num_steps; k++) {
                luthier_step_info si;
                const luthier__kernel_entry *e;
                luthier_plan_step_info(p, k, &si);
                e = luthier__kernel_named(si.kernel);
                if (si.node >= 0 && (si.op == LUTHIER_OP_DENSE || si.op == LUTHIER_OP_CONV2D) && e && e->family != LUTHIER_KERNELS_F32) {
                    f16++;
                    CHECK(strcmp(si.name, "fa"), "the poisoned layer runs fp16");
                }
            }
            CHECK(f16 == r.nodes_fp16, "%d dense steps off fp32, the tuner chose %d", f16, r.nodes_fp16);
            luthier_plan_destroy(p);
        }
        remove(rec);
        luthier_context_destroy(ctx);
        gb_free(&b);
    }
}

static void run_precision_tests(void) {
    RUN(test_precision_refusals);
    RUN(test_precision_node_mix);
    RUN(test_precision_records);
    RUN(test_precision_auto_guard);
    RUN(test_precision_auto_conversions);
}
