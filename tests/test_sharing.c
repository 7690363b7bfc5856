/* What may be shared between threads and contexts (THREADING in luthier.h), each "may" run
   concurrently so that `make tsan` checks it: contexts side by side, one packed B, one conv
   layer, one graph planned twice at once, and one plan run from two contexts (a second
   concurrent run is refused with INCOMPATIBLE, never a wrong result). */
#ifndef LUTHIER_NO_THREADS
#include <pthread.h>

#define SHARE_M 37
#define SHARE_N 29
#define SHARE_K 53

typedef struct share_job {
    const luthier_packed_b *pb;
    const luthier_conv2d_layer *cv;
    const luthier_graph *g;
    const luthier_calibration *cal;
    luthier_plan *plan;
    const float *a, *want;
    size_t n_out;
    int iters, ok_runs, refused, bad;
    luthier_status status;
} share_job;

static luthier_context *share_ctx(void) {
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 2;
    luthier_context_create(&cd, &ctx);
    return ctx;
}

static void *share_gemm_thread(void *arg) {
    share_job *j = (share_job *)arg;
    luthier_context *ctx = share_ctx();
    luthier_sgemm_desc d;
    float c[SHARE_M * SHARE_N];
    int it;
    size_t e;
    memset(&d, 0, sizeof d);
    d.m = SHARE_M; d.n = SHARE_N; d.k = SHARE_K;
    for (it = 0; ctx && it < j->iters; it++) {
        if (luthier_sgemm_packed(ctx, &d, j->a, j->pb, c) != LUTHIER_STATUS_OK) { j->bad++; continue; }
        for (e = 0; e < (size_t)(SHARE_M * SHARE_N); e++) j->bad += c[e] != j->want[e];
    }
    if (!ctx) j->bad++;
    luthier_context_destroy(ctx);
    return NULL;
}

static void *share_conv_thread(void *arg) {
    share_job *j = (share_job *)arg;
    luthier_context *ctx = share_ctx();
    float *out = (float *)malloc(j->n_out * sizeof(float));
    int it;
    for (it = 0; ctx && out && it < j->iters; it++) {
        if (luthier_conv2d_run(ctx, j->cv, j->a, out) != LUTHIER_STATUS_OK) { j->bad++; continue; }
        j->bad += memcmp(out, j->want, j->n_out * sizeof(float)) != 0;
    }
    if (!ctx || !out) j->bad++;
    free(out);
    luthier_context_destroy(ctx);
    return NULL;
}

static void *share_plan_create_thread(void *arg) {
    share_job *j = (share_job *)arg;
    luthier_context *ctx = share_ctx();
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.int8 = j->cal;
    j->status = ctx ? luthier_plan_create(ctx, j->g, &pd, &p) : LUTHIER_STATUS_OUT_OF_MEMORY;
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    return NULL;
}

static void *share_plan_run_thread(void *arg) {
    share_job *j = (share_job *)arg;
    luthier_context *ctx = share_ctx();
    float *out = (float *)malloc(j->n_out * sizeof(float));
    int it;
    for (it = 0; ctx && out && it < j->iters; it++) {
        const void *ins[1];
        void *outs[1];
        luthier_status s;
        ins[0] = j->a;
        outs[0] = out;
        s = luthier_plan_run(ctx, j->plan, ins, outs);
        if (s == LUTHIER_STATUS_INCOMPATIBLE && strstr(luthier_context_error(ctx), "already running")) {
            j->refused++;
        } else if (s != LUTHIER_STATUS_OK) {
            j->bad++;
        } else {
            j->ok_runs++;
            j->bad += memcmp(out, j->want, j->n_out * sizeof(float)) != 0;
        }
    }
    if (!ctx || !out) j->bad++;
    free(out);
    luthier_context_destroy(ctx);
    return NULL;
}

static void share_run2(void *(*fn)(void *), share_job *j) {
    pthread_t t[2];
    share_job jj[2];
    int i;
    for (i = 0; i < 2; i++) {
        jj[i] = *j;
        pthread_create(&t[i], NULL, fn, &jj[i]);
    }
    for (i = 0; i < 2; i++) pthread_join(t[i], NULL);
    j->bad = jj[0].bad + jj[1].bad;
    j->ok_runs = jj[0].ok_runs + jj[1].ok_runs;
    j->refused = jj[0].refused + jj[1].refused;
    j->status = jj[0].status != LUTHIER_STATUS_OK ? jj[0].status : jj[1].status;
}

static void test_sharing_packed_b(void) {
    luthier_context *ctx = share_ctx();
    luthier_sgemm_desc d;
    float *a = (float *)malloc(sizeof(float) * SHARE_M * SHARE_K), *b = (float *)malloc(sizeof(float) * SHARE_K * SHARE_N);
    float *want = (float *)malloc(sizeof(float) * SHARE_M * SHARE_N);
    luthier_packed_b *pb = NULL;
    share_job j;
    memset(&d, 0, sizeof d);
    memset(&j, 0, sizeof j);
    d.m = SHARE_M; d.n = SHARE_N; d.k = SHARE_K;
    test_fill(a, SHARE_M * SHARE_K);
    test_fill(b, SHARE_K * SHARE_N);
    CHECK(ctx && luthier_sgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_OK && luthier_sgemm_packed(ctx, &d, a, pb, want) == LUTHIER_STATUS_OK,
          "setup");
    if (pb) {
        j.pb = pb; j.a = a; j.want = want; j.iters = T.quick ? 20 : 100;
        share_run2(share_gemm_thread, &j);
        CHECK(j.bad == 0, "%d wrong results from two contexts sharing a packed B", j.bad);
    }
    luthier_packed_b_destroy(pb);
    luthier_context_destroy(ctx);
    free(a); free(b); free(want);
}

/* A 3x3 conv in NHWC, created once, run by two contexts at once. */
static void test_sharing_conv_layer(void) {
    luthier_context *ctx = share_ctx();
    luthier_conv2d_desc d;
    luthier_conv2d_layer *cv = NULL;
    float *x, *w, *want;
    size_t nx, nw, ny;
    share_job j;
    memset(&d, 0, sizeof d);
    memset(&j, 0, sizeof j);
    d.batch = 1; d.in_channels = 6; d.in_h = 9; d.in_w = 11; d.out_channels = 10; d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    d.layout = LUTHIER_LAYOUT_NHWC;
    nx = 6 * 9 * 11; nw = 10 * 6 * 9; ny = 10 * 9 * 11;
    x = (float *)malloc(nx * sizeof(float)); w = (float *)malloc(nw * sizeof(float)); want = (float *)malloc(ny * sizeof(float));
    test_fill(x, nx);
    test_fill(w, nw);
    CHECK(ctx && luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK && luthier_conv2d_run(ctx, cv, x, want) == LUTHIER_STATUS_OK,
          "setup");
    if (cv) {
        j.cv = cv; j.a = x; j.want = want; j.n_out = ny; j.iters = T.quick ? 20 : 100;
        share_run2(share_conv_thread, &j);
        CHECK(j.bad == 0, "%d wrong results from two contexts sharing a conv layer", j.bad);
    }
    luthier_conv2d_destroy(cv);
    luthier_context_destroy(ctx);
    free(x); free(w); free(want);
}

/* A small graph (conv, relu, global pool) planned by two threads at once, then one plan run by
   two contexts at once: every run either gives the right bits or is refused. */
static void test_sharing_graph_and_plan(void) {
    luthier_context *ctx = share_ctx();
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc nd;
    int64_t xs[4] = {1, 4, 12, 12}, ws[4] = {8, 4, 3, 3};
    float w[8 * 4 * 9], *x = (float *)malloc(sizeof(float) * 4 * 12 * 12), want[8];
    int xt = 0, wt = 0, in[2], y = -1, z = -1, k;
    share_job j;
    memset(&j, 0, sizeof j);
    test_fill(w, 8 * 4 * 9);
    test_fill(x, 4 * 12 * 12);
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &xt);
    luthier_graph_constant(g, "w", 4, ws, w, 1, &wt);
    memset(&nd, 0, sizeof nd);
    nd.op = LUTHIER_OP_CONV2D; in[0] = xt; in[1] = wt; nd.inputs = in; nd.num_inputs = 2;
    nd.pads[0] = nd.pads[1] = nd.pads[2] = nd.pads[3] = 1; nd.activation = LUTHIER_ACTIVATION_RELU;
    CHECK(luthier_graph_add_node(g, &nd, &y) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    memset(&nd, 0, sizeof nd);
    nd.op = LUTHIER_OP_GLOBAL_AVGPOOL; in[0] = y; nd.inputs = in; nd.num_inputs = 1;
    CHECK(luthier_graph_add_node(g, &nd, &z) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    luthier_graph_output(g, z);
    j.g = g;
    share_run2(share_plan_create_thread, &j);
    CHECK(j.status == LUTHIER_STATUS_OK, "two plans of one graph at once: %s", luthier_status_string(j.status));
    {   /* and two int8 plans of one calibration at once */
        luthier_calibration *cal = NULL;
        luthier_calib_desc cdesc;
        const void *sample[1];
        const void *const *samples[1];
        sample[0] = x;
        samples[0] = sample;
        memset(&cdesc, 0, sizeof cdesc);
        cdesc.num_samples = 1;
        cdesc.samples = samples;
        CHECK(ctx && luthier_calibrate(ctx, g, &cdesc, &cal) == LUTHIER_STATUS_OK, "calibrate: %s", luthier_context_error(ctx));
        j.cal = cal;
        if (cal) share_run2(share_plan_create_thread, &j);
        CHECK(j.status == LUTHIER_STATUS_OK, "two int8 plans of one calibration at once: %s", luthier_status_string(j.status));
        j.cal = NULL;
        luthier_calibration_destroy(cal);
    }
    CHECK(ctx && luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK, "plan");
    if (p) {
        const void *ins[1];
        void *outs[1];
        ins[0] = x;
        outs[0] = want;
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        j.plan = p; j.a = x; j.want = want; j.n_out = 8; j.iters = T.quick ? 50 : 300;
        for (k = 0; k < 3 && !j.bad; k++) share_run2(share_plan_run_thread, &j);
        CHECK(j.bad == 0, "%d wrong results or unexpected failures", j.bad);
        CHECK(j.ok_runs > 0, "no run went through (%d refused)", j.refused);
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    free(x);
}

/* luthier_last_error: every module's failure lands in it (the same text as the module's own
   channel), and it belongs to the calling thread: another thread's failures do not change it. */
static void *share_fail_thread(void *arg) {
    int k;
    luthier_graph *g = NULL;
    (void)arg;
    for (k = 0; k < 200; k++) {
        luthier_topology t;
        (void)luthier_topology_parse("big:7-4", &t, NULL, 0);
        if (luthier_graph_create(&g) == LUTHIER_STATUS_OK) {
            (void)luthier_graph_output(g, 12345);
            luthier_graph_destroy(g);
            g = NULL;
        }
    }
    return strstr(luthier_last_error(), "tensor") ? arg : NULL;
}

static void test_last_error(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_graph *g = NULL;
    luthier_topology topo;
    char err[512], first[2048];
    pthread_t th;
    void *ret = NULL;
    memset(&cd, 0, sizeof cd);
    cd.kernel = "no_such_kernel";
    CHECK(luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK && strstr(luthier_last_error(), "no_such_kernel"),
          "context: '%s'", luthier_last_error());
    CHECK(luthier_topology_parse("big:7-4", &topo, err, sizeof err) != LUTHIER_STATUS_OK &&
              strcmp(err, luthier_last_error()) == 0 && strstr(err, "reversed"), "topology: '%s' / '%s'", err, luthier_last_error());
    CHECK(luthier_graph_create(&g) == LUTHIER_STATUS_OK, "graph");
    CHECK(luthier_graph_output(g, 77) != LUTHIER_STATUS_OK && strcmp(luthier_graph_error(g), luthier_last_error()) == 0,
          "graph: '%s' / '%s'", luthier_graph_error(g), luthier_last_error());
    luthier_graph_destroy(g);
    g = NULL;
    CHECK(luthier_onnx_load_memory("garbage", 7, NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK &&
              strcmp(err, luthier_last_error()) == 0, "onnx: '%s' / '%s'", err, luthier_last_error());
    CHECK(luthier_zoo_build("no_such_net", NULL, &g, err, sizeof err) != LUTHIER_STATUS_OK &&
              strcmp(err, luthier_last_error()) == 0 && strstr(err, "no_such_net"), "zoo: '%s' / '%s'", err, luthier_last_error());
    cd.kernel = NULL;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    {
        luthier_sgemm_desc d;
        memset(&d, 0, sizeof d);
        d.m = -1;
        CHECK(luthier_sgemm(ctx, &d, NULL, NULL, NULL) != LUTHIER_STATUS_OK && strcmp(luthier_context_error(ctx), luthier_last_error()) == 0,
              "gemm: '%s' / '%s'", luthier_context_error(ctx), luthier_last_error());
    }
    memcpy(first, luthier_last_error(), strlen(luthier_last_error()) + 1);
    CHECK(pthread_create(&th, NULL, share_fail_thread, &cd) == 0, "thread");
    pthread_join(th, &ret);
    CHECK(ret == (void *)&cd, "the thread saw its own last message");
    CHECK(strcmp(first, luthier_last_error()) == 0, "another thread's failures changed this thread's message: '%s'",
          luthier_last_error());
    luthier_context_destroy(ctx);
}

static void run_sharing_tests(void) {
    RUN(test_last_error);
    RUN(test_sharing_packed_b);
    RUN(test_sharing_conv_layer);
    RUN(test_sharing_graph_and_plan);
}
#else
static void run_sharing_tests(void) {}
#endif
