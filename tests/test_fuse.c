/* Activations that run after the store (luthier_activation's HARD_SWISH, HARD_SIGMOID, SILU,
   LEAKY_RELU, GELU, GELU_TANH, ELU and MISH), fused into GEMM and convolution. A fused layer runs the element-wise operator's
   code on the values the layer without activation stores, so fused and unfused (the layer with
   NONE, then luthier__op_unary) must agree bit for bit, for every algorithm, kernel split and
   thread count (NaN and infinities included); the fused results must also match the naive
   references of test_conv.c and test_gemm.c within their tolerance times a bound on the
   activation's slope (test_act_slope). The graph folds hard_swish, hard_sigmoid, leaky_relu,
   silu, gelu, elu / selu, mish and sigmoid -> mul into the producing conv / dense step; int8 plans leave them apart. */

#define FZ_NKINDS 8
static const luthier_activation fz_kinds[FZ_NKINDS] = {
    LUTHIER_ACTIVATION_HARD_SWISH, LUTHIER_ACTIVATION_HARD_SIGMOID, LUTHIER_ACTIVATION_SILU, LUTHIER_ACTIVATION_LEAKY_RELU,
    LUTHIER_ACTIVATION_GELU,       LUTHIER_ACTIVATION_GELU_TANH,    LUTHIER_ACTIVATION_ELU,  LUTHIER_ACTIVATION_MISH};

/* The separate operator of each kind, written out here (not the library's table). */
static luthier__unary fz_unary(luthier_activation act) {
    switch (act) {
    case LUTHIER_ACTIVATION_HARD_SWISH: return LUTHIER__UNARY_HARD_SWISH;
    case LUTHIER_ACTIVATION_HARD_SIGMOID: return LUTHIER__UNARY_HARD_SIGMOID;
    case LUTHIER_ACTIVATION_SILU: return LUTHIER__UNARY_SILU;
    case LUTHIER_ACTIVATION_GELU: return LUTHIER__UNARY_GELU_ERF;
    case LUTHIER_ACTIVATION_GELU_TANH: return LUTHIER__UNARY_GELU_TANH;
    case LUTHIER_ACTIVATION_ELU: return LUTHIER__UNARY_ELU;
    case LUTHIER_ACTIVATION_MISH: return LUTHIER__UNARY_MISH;
    default: return LUTHIER__UNARY_LEAKY_RELU;
    }
}

/* Parameters: the ONNX defaults of hard_sigmoid (0.2, 0.5), SELU's (1.67326, 1.0507) for elu
   and a leaky slope of 0.1, or (odd trials) off them. */
static void fz_params(luthier_activation act, int trial, float *p0, float *p1) {
    *p0 = act == LUTHIER_ACTIVATION_HARD_SIGMOID ? 0.2f : act == LUTHIER_ACTIVATION_ELU ? 1.67326f : 0.1f;
    *p1 = act == LUTHIER_ACTIVATION_HARD_SIGMOID ? 0.5f : act == LUTHIER_ACTIVATION_ELU ? 1.0507f : 0.0f;
    if (trial % 2) *p0 = -0.7f, *p1 = 0.3f;
}

static int fz_same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

/* Counts the elements where fused and unfused differ (reports the first). */
static int fz_compare(const float *fused, const float *plain, size_t n, const char *what) {
    size_t e;
    int bad = 0;
    for (e = 0; e < n; e++)
        if (!fz_same(fused[e], plain[e])) {
            if (!bad) CHECK(0, "%s: element %zu fused %.9g, unfused %.9g", what, e, (double)fused[e], (double)plain[e]);
            bad++;
        }
    return bad;
}

/* Layer d (a fused activation) and the same layer with NONE followed by the operator, on ctx;
   out_in: the output's prior contents (accumulate). Returns the number of differences. */
static int fz_conv_pair(luthier_context *ctx, const luthier_conv2d_desc *d, const float *in, const float *w,
                        const float *bias, const float *out_in, size_t out_n, const char *what) {
    luthier_conv2d_desc dn = *d;
    luthier_conv2d_layer *cf = NULL, *cp = NULL;
    luthier_conv2d_info info;
    float *fused = (float *)test_alloc(out_n * sizeof(float)), *plain = (float *)test_alloc(out_n * sizeof(float));
    int bad = 0;
    size_t e;
    dn.activation = LUTHIER_ACTIVATION_NONE;
    for (e = 0; e < out_n; e++) fused[e] = plain[e] = d->accumulate ? out_in[e] : test_sentinel();
    if (luthier_conv2d_create(ctx, d, w, bias, &cf) != LUTHIER_STATUS_OK ||
        luthier_conv2d_create(ctx, &dn, w, bias, &cp) != LUTHIER_STATUS_OK ||
        luthier_conv2d_run(ctx, cf, in, fused) != LUTHIER_STATUS_OK || luthier_conv2d_run(ctx, cp, in, plain) != LUTHIER_STATUS_OK ||
        luthier__op_unary(ctx, NULL, fz_unary(d->activation), d->clamp_min, d->clamp_max, plain, plain, out_n) !=
            LUTHIER_STATUS_OK) {
        CHECK(0, "%s: %s", what, luthier_context_error(ctx));
        bad = 1;
    } else {
        luthier_conv2d_get_info(cf, &info);
        CHECK(d->algorithm == LUTHIER_CONV_AUTO || info.algorithm == d->algorithm, "%s: ran %s", what,
              luthier_conv_algorithm_name(info.algorithm));
        bad = fz_compare(fused, plain, out_n, what);
    }
    luthier_conv2d_destroy(cf);
    luthier_conv2d_destroy(cp);
    free(fused);
    free(plain);
    return bad;
}

/* A layer for algo: test_conv.c's random shapes (Winograd: 3x3, stride 1), or with big a layer of
   many tiles, blocks and depthwise chunks (19 x 23 x 40 outputs). */
static void fz_desc(luthier_conv2d_desc *d, luthier_conv_algorithm algo, int big) {
    const int wino = conv_is_winograd(algo);
    if (!wino && !big) {
        conv_random_desc(d, algo);
        return;
    }
    memset(d, 0, sizeof *d);
    d->algorithm = algo;
    d->batch = big ? 1 : test_rand_int(1, 2);
    d->groups = big ? 1 : test_rand_int(1, 2);
    d->in_channels = d->groups * (big ? 24 : test_rand_int(1, 9));
    d->out_channels = d->groups * (big ? 40 : test_rand_int(1, 12));
    d->in_h = big ? 19 : test_rand_int(3, 14);
    d->in_w = big ? 23 : test_rand_int(3, 14);
    d->kernel_h = d->kernel_w = algo == LUTHIER_CONV_1X1 ? 1 : 3;
    if (d->kernel_h == 3) d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = big ? 1 : test_rand_int(0, 1);
    if (algo == LUTHIER_CONV_DEPTHWISE) d->groups = d->in_channels = d->out_channels = 40;
    /* Winograd does not run depthwise layers (groups == both channel counts) */
    if (wino && d->groups > 1 && d->in_channels == d->groups && d->out_channels == d->groups) d->out_channels *= 2;
    d->layout = (luthier_layout)test_rand_int(0, 1);
    d->accumulate = test_rand_int(0, 2) == 0;
}

/* in, w, bias, out_in of layer d (NULL bias without with_bias); returns the output's size. */
static size_t fz_conv_buffers(const luthier_conv2d_desc *d, int with_bias, float **in, float **w, float **bias,
                              float **out_in) {
    int64_t oh = 0, ow = 0;
    const int64_t g = d->groups ? d->groups : 1;
    const size_t in_n = (size_t)(d->batch * d->in_channels * d->in_h * d->in_w);
    const size_t w_n = (size_t)(d->out_channels * (d->in_channels / g) * d->kernel_h * d->kernel_w);
    size_t out_n;
    luthier_conv2d_output_size(d, &oh, &ow);
    out_n = (size_t)(d->batch * d->out_channels * oh * ow);
    *in = (float *)test_alloc(in_n * sizeof(float));
    *w = (float *)test_alloc(w_n * sizeof(float));
    *out_in = (float *)test_alloc(out_n * sizeof(float));
    *bias = with_bias ? (float *)test_alloc((size_t)d->out_channels * sizeof(float)) : NULL;
    test_fill(*in, in_n);
    test_fill(*w, w_n);
    test_fill(*out_in, out_n);
    if (*bias) test_fill(*bias, (size_t)d->out_channels);
    return out_n;
}

/* Fused vs unfused on every context of ctxs, then (conv_check) against the naive reference. */
static int fz_conv_case(luthier_context *const *ctxs, int nctx, const luthier_conv2d_desc *d, int with_bias,
                        const char *what) {
    float *in, *w, *bias, *out_in;
    const size_t out_n = fz_conv_buffers(d, with_bias, &in, &w, &bias, &out_in);
    int c, bad = 0;
    for (c = 0; c < nctx && !bad; c++) bad += fz_conv_pair(ctxs[c], d, in, w, bias, out_in, out_n, what);
    free(in); free(w); free(bias); free(out_in);
    return bad + conv_check(ctxs, nctx, d, with_bias, NULL, what);
}

/* Every algorithm a layer admits (im2col, 1x1, implicit GEMM, depthwise, the Winograds) on 1
   thread, all threads and two fake clusters, every new kind, random and big layers. */
static void test_fuse_act_conv(void) {
    static const luthier_conv_algorithm algos[] = {LUTHIER_CONV_IM2COL,       LUTHIER_CONV_1X1,
                                                   LUTHIER_CONV_IMPLICIT_GEMM, LUTHIER_CONV_DEPTHWISE,
                                                   LUTHIER_CONV_WINOGRAD_2X3, LUTHIER_CONV_WINOGRAD_4X3,
                                                   LUTHIER_CONV_WINOGRAD_6X3};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs), trials = T.quick ? 8 : 24;
    size_t a;
    int trial, c;
    CHECK(nctx == 3, "3 contexts");
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++)
        for (trial = 0; trial < trials; trial++) {
            luthier_conv2d_desc d;
            char what[200];
            fz_desc(&d, algos[a], trial >= trials - 2);
            d.activation = fz_kinds[trial % FZ_NKINDS];
            fz_params(d.activation, trial / FZ_NKINDS, &d.clamp_min, &d.clamp_max);
            snprintf(what, sizeof what, "%s %s(%g, %g): n%lld %lldx%lldx%lld -> %lld k%lldx%lld s%lld g%lld acc%d %s",
                     luthier_conv_algorithm_name(algos[a]), luthier__act_name(d.activation), (double)d.clamp_min,
                     (double)d.clamp_max, (long long)d.batch, (long long)d.in_h, (long long)d.in_w,
                     (long long)d.in_channels, (long long)d.out_channels, (long long)d.kernel_h, (long long)d.kernel_w,
                     (long long)d.stride_h, (long long)d.groups, d.accumulate, d.layout ? "nchw" : "nhwc");
            if (fz_conv_case(ctxs, nctx, &d, trial % 3 != 0, what)) break;
        }
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* C (m x n, row stride ldc) of luthier_sgemm with act, and with NONE then the operator on each
   row; A, B (trans_b), bias and C's prior contents from the harness's generator. */
static int fz_gemm_pair(luthier_context *ctx, luthier_activation act, int trial, int64_t m, int64_t n, int64_t k,
                        const char *what) {
    const int64_t ldc = n + trial % 3;
    const size_t cn = (size_t)(m * ldc);
    float *a = (float *)test_alloc((size_t)(m * k) * sizeof(float)), *b = (float *)test_alloc((size_t)(n * k) * sizeof(float));
    float *bias = (float *)test_alloc((size_t)n * sizeof(float)), *c0 = (float *)test_alloc(cn * sizeof(float));
    float *cf = (float *)test_alloc(cn * sizeof(float)), *cp = (float *)test_alloc(cn * sizeof(float));
    luthier_sgemm_desc d;
    int64_t i;
    int bad = 0;
    test_fill(a, (size_t)(m * k));
    test_fill(b, (size_t)(n * k));
    test_fill(bias, (size_t)n);
    test_fill(c0, cn);
    memcpy(cf, c0, cn * sizeof(float));
    memcpy(cp, c0, cn * sizeof(float));
    memset(&d, 0, sizeof d);
    d.m = m, d.n = n, d.k = k, d.ldc = ldc, d.trans_b = 1;
    d.bias = trial % 2 ? bias : NULL;
    d.accumulate = trial % 3 == 0;
    d.activation = act;
    fz_params(act, trial / FZ_NKINDS, &d.clamp_min, &d.clamp_max);
    CHECK(luthier_sgemm(ctx, &d, a, b, cf) == LUTHIER_STATUS_OK, "%s: %s", what, luthier_context_error(ctx));
    d.activation = LUTHIER_ACTIVATION_NONE;
    CHECK(luthier_sgemm(ctx, &d, a, b, cp) == LUTHIER_STATUS_OK, "%s: %s", what, luthier_context_error(ctx));
    for (i = 0; i < m; i++)
        luthier__op_unary(ctx, NULL, fz_unary(act), d.clamp_min, d.clamp_max, cp + i * ldc, cp + i * ldc, (size_t)n);
    bad = fz_compare(cf, cp, cn, what); /* (the columns past n stay as they were in both) */
    free(a); free(b); free(bias); free(c0); free(cf); free(cp);
    return bad;
}

/* Dense layers: fused vs unfused on 1 thread, all threads and small blocks (many MC / NC / KC
   blocks per thread, k == 0 included); then test_gemm.c's reference on random cases of every
   new kind. */
static void test_fuse_act_dense(void) {
    luthier_context *ctxs[3];
    const int trials = T.quick ? 12 : 40;
    int c, trial;
    ctxs[0] = ctx_threads(1);
    ctxs[1] = test_context(0, 0, 0);
    ctxs[2] = test_context(24, 12, 64);
    for (c = 0; c < 3; c++)
        for (trial = 0; trial < trials; trial++) {
            const int64_t m = test_rand_int(1, 70), n = test_rand_int(1, 150), k = trial == 0 ? 0 : test_rand_int(1, 90);
            char what[128];
            snprintf(what, sizeof what, "dense ctx %d %s m%lld n%lld k%lld", c, luthier__act_name(fz_kinds[trial % FZ_NKINDS]),
                     (long long)m, (long long)n, (long long)k);
            if (fz_gemm_pair(ctxs[c], fz_kinds[trial % FZ_NKINDS], trial, m, n, k, what)) break;
        }
    for (trial = 0; trial < trials; trial++) {
        gemm_case g = gemm_random_case(100);
        g.act = fz_kinds[trial % FZ_NKINDS];
        CHECK(gemm_check(ctxs[trial % 3], &g, NULL, trial % 2) == 0, "dense reference, trial %d", trial);
    }
    for (c = 0; c < 3; c++) luthier_context_destroy(ctxs[c]);
}

/* NaN, infinities and values whose exp overflows, in the input of a layer of each algorithm
   family (and the weights): fused and unfused agree element by element (NaN where the
   operator gives NaN: -inf through silu and hard_swish, inf * 0, ...). */
static void test_fuse_act_nan_inf(void) {
    static const luthier_conv_algorithm algos[] = {LUTHIER_CONV_IM2COL, LUTHIER_CONV_1X1, LUTHIER_CONV_IMPLICIT_GEMM,
                                                   LUTHIER_CONV_DEPTHWISE, LUTHIER_CONV_WINOGRAD_2X3};
    static const float special[6] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, -90.0f};
    luthier_context *ctxs[2];
    size_t a;
    int c, kind;
    ctxs[0] = ctx_threads(1);
    ctxs[1] = test_context(0, 0, 0);
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++)
        for (kind = 0; kind < FZ_NKINDS; kind++) {
            luthier_conv2d_desc d;
            float *in, *w, *bias, *out_in;
            size_t out_n, i, in_n;
            char what[96];
            fz_desc(&d, algos[a], 0);
            d.activation = fz_kinds[kind];
            fz_params(d.activation, kind, &d.clamp_min, &d.clamp_max);
            out_n = fz_conv_buffers(&d, 1, &in, &w, &bias, &out_in);
            in_n = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
            for (i = 0; i < in_n; i += 3) in[i] = special[(i / 3) % 6];
            w[0] = kind == 1 ? INFINITY : w[0];
            snprintf(what, sizeof what, "%s %s with NaN / inf", luthier_conv_algorithm_name(algos[a]),
                     luthier__act_name(d.activation));
            for (c = 0; c < 2; c++) fz_conv_pair(ctxs[c], &d, in, w, bias, out_in, out_n, what);
            free(in); free(w); free(bias); free(out_in);
        }
    for (c = 0; c < 2; c++) luthier_context_destroy(ctxs[c]);
}

/* ---- graphs ---------------------------------------------------------------------------------- */

/* Steps of g's plan on ctx that run a node (layout conversions aside); *fused: the fused list of
   the step of op `op` (the last one). -1 when it does not plan. */
static int fz_plan_steps(luthier_context *ctx, const luthier_graph *g, luthier_op op, char *fused, size_t fused_size) {
    luthier_plan *p = NULL;
    luthier_plan_info pi;
    luthier_step_info si;
    int k, n = 0;
    fused[0] = 0;
    memset(&pi, 0, sizeof pi);
    if (luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) return -1;
    luthier_plan_get_info(p, &pi);
    for (k = 0; k < pi.num_steps; k++) {
        if (luthier_plan_step_info(p, k, &si) != LUTHIER_STATUS_OK || si.node < 0) continue;
        n++;
        if (si.op == op) snprintf(fused, fused_size, "%s", si.fused);
    }
    luthier_plan_destroy(p);
    return n;
}

/* The element-wise part of a graph case: what follows the producer y (input x). */
enum { FZ_HARD_SWISH, FZ_LEAKY, FZ_HARD_SIGMOID, FZ_SILU, FZ_GELU, FZ_SELU, FZ_MISH, FZ_SIG_MUL, FZ_MUL_SIG, FZ_ADD_THEN_ACT, FZ_ACT_THEN_ADD,
       FZ_SHARED, FZ_CASES };

static const char *const fz_case_fused[FZ_CASES] = {
    "hard_swish", "leaky_relu", "hard_sigmoid", "silu", "gelu", "selu", "mish", "sigmoid+mul", "sigmoid+mul", "add+hard_swish", "hard_swish", ""};

static int fz_tail(gb *b, int kase, int x, int y) {
    int s;
    switch (kase) {
    case FZ_HARD_SWISH: return gb_op(b, LUTHIER_OP_HARD_SWISH, "act", y, -1);
    case FZ_LEAKY: return gb_act(b, LUTHIER_OP_LEAKY_RELU, "act", y, 0.07f, NAN);
    case FZ_HARD_SIGMOID: return gb_act(b, LUTHIER_OP_HARD_SIGMOID, "act", y, 0.25f, 0.4f);
    case FZ_SILU: return gb_op(b, LUTHIER_OP_SILU, "act", y, -1);
    case FZ_GELU: return gb_op(b, LUTHIER_OP_GELU, "act", y, -1);
    case FZ_SELU: return gb_act(b, LUTHIER_OP_SELU, "act", y, 1.5f, 1.1f);
    case FZ_MISH: return gb_op(b, LUTHIER_OP_MISH, "act", y, -1);
    case FZ_SIG_MUL: s = gb_op(b, LUTHIER_OP_SIGMOID, "sig", y, -1); return gb_op(b, LUTHIER_OP_MUL, "mul", y, s);
    case FZ_MUL_SIG: s = gb_op(b, LUTHIER_OP_SIGMOID, "sig", y, -1); return gb_op(b, LUTHIER_OP_MUL, "mul", s, y);
    case FZ_ADD_THEN_ACT: return gb_op(b, LUTHIER_OP_HARD_SWISH, "act", gb_op(b, LUTHIER_OP_ADD, "add", y, x), -1);
    case FZ_ACT_THEN_ADD: return gb_op(b, LUTHIER_OP_ADD, "add", gb_op(b, LUTHIER_OP_HARD_SWISH, "act", y, -1), x);
    default: /* the conv's output is also a graph output: nothing fuses */
        luthier_graph_output(b->g, y);
        return gb_op(b, LUTHIER_OP_HARD_SWISH, "act", y, -1);
    }
}

/* Steps the plan of case kase should have: one, plus the add that follows the activation, plus
   the activation that cannot fuse. */
static int fz_case_steps(int kase) { return kase == FZ_ACT_THEN_ADD || kase == FZ_SHARED ? 2 : 1; }

/* conv (dense: dense) -> the case's tail, planned on 1 and 2 threads: the expected steps and
   fused list, and the plan (fused and unfused) against the interpreter. */
static void fz_graph_case(int kase, int dense) {
    gb b;
    int64_t xs4[4] = {1, 8, 11, 13}, xs2[2] = {5, 24}, ws[2] = {24, 24}, bs[1] = {24};
    int x, y, threads, fusion;
    float *img = rand_buf(8 * 11 * 13, -4, 4);
    const void *ins[1];
    char what[96], fused[64];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, dense ? 2 : 4, dense ? xs2 : xs4, &x);
    if (dense) {
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_DENSE;
        d.name = "fc";
        y = gb_node(&b, &d, x, gb_const(&b, "fc.weight", 2, ws, -0.6f, 0.6f), gb_const(&b, "fc.bias", 1, bs, -1, 1));
    } else {
        y = gb_bn(&b, "bn", gb_conv(&b, "conv", x, 8, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE));
    }
    luthier_graph_output(b.g, fz_tail(&b, kase, x, y));
    ins[0] = img;
    for (threads = 1; threads <= 2 && !b.fail; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        const int steps = fz_plan_steps(ctx, b.g, dense ? LUTHIER_OP_DENSE : LUTHIER_OP_CONV2D, fused, sizeof fused);
        snprintf(what, sizeof what, "%s -> case %d, %d threads", dense ? "dense" : "conv", kase, threads);
        CHECK(steps == fz_case_steps(kase), "%s: %d steps", what, steps);
        CHECK(strstr(fused, fz_case_fused[kase]) != NULL && (kase != FZ_SHARED || !strstr(fused, "swish")),
              "%s: fused '%s'", what, fused);
        for (fusion = 0; fusion < 2; fusion++) {
            luthier_plan_desc pd;
            memset(&pd, 0, sizeof pd);
            pd.no_fusion = !fusion;
            /* 1e-4: the conv's sums (72 products, inputs up to 4) reach about 10 before
               activations that map into [0, 1] (hard_sigmoid), and the plan folds batch norm
               into the weights where the interpreter applies it after: their fp32 roundings
               differ by up to ~2.5e-5 of an output of scale 1. A wrong activation parameter
               is off by 1e-2 or more. */
            plan_vs_ref(ctx, b.g, &pd, ins, 1e-4, what);
        }
        luthier_context_destroy(ctx);
    }
    CHECK(!b.fail, "build case %d", kase);
    free(img);
    gb_free(&b);
}

/* Each case after a conv (batch norm folded), the activations after a dense layer. */
static void test_fuse_act_graph(void) {
    int kase;
    for (kase = 0; kase < FZ_CASES; kase++) fz_graph_case(kase, 0);
    for (kase = FZ_HARD_SWISH; kase <= FZ_MUL_SIG; kase++) fz_graph_case(kase, 1);
}

/* int8 plans: conv -> hard_swish -> conv -> leaky_relu -> conv with hard_swish set on the node
   itself. The activations stay apart from (or keep in fp32) the int8 layers, and the plan stays
   close to the fp32 one. */
static void test_fuse_act_int8(void) {
    gb b;
    luthier_context *ctx = ctx_threads(2);
    luthier_calibration *cal = NULL;
    luthier_calib_desc cd;
    luthier_plan *p = NULL;
    int64_t xs[4] = {1, 6, 12, 12};
    qp_samples sm;
    float *f32 = NULL, *q = NULL;
    const void *ins[1];
    size_t n = 0;
    int x, y;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    y = gb_op(&b, LUTHIER_OP_HARD_SWISH, "a1", gb_conv(&b, "c1", x, 16, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE), -1);
    y = gb_act(&b, LUTHIER_OP_LEAKY_RELU, "a2", gb_conv(&b, "c2", y, 16, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE), 0.1f, NAN);
    y = gb_conv(&b, "c3", y, 8, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_HARD_SWISH);
    luthier_graph_output(b.g, y);
    qp_samples_init(&sm, 4, 6 * 12 * 12, &cd);
    ins[0] = sm.imgs[0];
    CHECK(!b.fail && luthier_calibrate(ctx, b.g, &cd, &cal) == LUTHIER_STATUS_OK, "calibrate: %s", luthier_context_error(ctx));
    if (cal && qp_run(ctx, b.g, NULL, ins, &f32, &n, NULL) && qp_run(ctx, b.g, cal, ins, &q, &n, &p)) {
        const double cs = qp_cosine(f32, q, n);
        CHECK(cs >= 0.99, "int8 vs fp32 cosine %.4f", cs);
        CHECK(qp_count_int8(p, LUTHIER_OP_CONV2D) == 2, "%d int8 convolutions (c1, c2; c3 has hard_swish)",
              qp_count_int8(p, LUTHIER_OP_CONV2D));
    }
    CHECK(p != NULL, "int8 plan");
    {
        int32_t lo, hi;
        CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_HARD_SWISH, 0, 0, 0.1f, 128, &lo, &hi) ==
                  LUTHIER_STATUS_INVALID_ARGUMENT, "quantize_activation takes the clamps only");
    }
    luthier_plan_destroy(p);
    luthier_calibration_destroy(cal);
    qp_samples_free(&sm);
    free(f32);
    free(q);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

static void run_fuse_tests(void) {
    RUN(test_fuse_act_conv);
    RUN(test_fuse_act_dense);
    RUN(test_fuse_act_nan_inf);
    RUN(test_fuse_act_graph);
    RUN(test_fuse_act_int8);
}
