/* int8 plans (luthier_plan_desc.int8) and calibration (luthier_calibrate, luthier_calibration_*):
   - one convolution / dense layer per graph, bit-exact against a reference written here from the
     documented scheme (quantize the input, weights per output channel max|w|/127, int32 bias,
     integer accumulation, luthier_requantize, dequantize), over random shapes, groups,
     depthwise, strides, padding, fused and separate ReLU / ReLU6, uint8 and fp32 outputs;
   - a ResNet-style graph: which steps run int8, cosine similarity with the fp32 plan, identical
     bits for 1 and 2 threads and a ratio split, no allocation while running;
   - zoo networks calibrated on generated inputs: int8 vs fp32 output cosine >= 0.99;
   - the calibration API: bad arguments, min/max vs percentile ranges, save / load.
   Included by test_main.c after test_graph.c (gb_* builders, rand_buf, ctx_threads) and
   test_models.c (luthier_zoo.h). */

static double qp_cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

/* The plan's input quantization (luthier__op_quantize's definition). */
static int32_t qp_quantize(float x, float scale, int32_t zero) {
    float v = nearbyintf(x * (1.0f / scale)) + (float)zero;
    return v != v ? zero : v < 0.0f ? 0 : v > 255.0f ? 255 : (int32_t)v;
}

/* The int8 steps of op in p (nodes only, not conversions). */
static int qp_count_int8(const luthier_plan *p, luthier_op op) {
    luthier_plan_info pi;
    luthier_step_info si;
    int i, n = 0;
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    for (i = 0; i < pi.num_steps; i++)
        if (luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK && si.int8 && si.op == op && si.node >= 0) {
            n++; /* a dense step reports no convolution algorithm, whatever its layer runs */
            CHECK(op != LUTHIER_OP_DENSE || si.algorithm == LUTHIER_CONV_AUTO, "int8 dense '%s': algorithm %s", si.name,
                  luthier_conv_algorithm_name(si.algorithm));
        }
    return n;
}

/* Runs an fp32 plan of g on in; *out gets a malloc'ed copy of output 0 (n floats). */
/* n (<= 4) random inputs of `size` floats in [-1, 1], the calibration samples of a graph with
   one input; cd is set to them. */
typedef struct qp_samples {
    float *imgs[4];
    const void *in[4][1];
    const void *const *list[4];
    int n;
} qp_samples;

static void qp_samples_init(qp_samples *s, int n, size_t size, luthier_calib_desc *cd) {
    int i;
    for (i = 0; i < n; i++) {
        s->imgs[i] = rand_buf(size, -1, 1);
        s->in[i][0] = s->imgs[i];
        s->list[i] = s->in[i];
    }
    s->n = n;
    memset(cd, 0, sizeof *cd);
    cd->num_samples = n;
    cd->samples = s->list;
}

static void qp_samples_free(qp_samples *s) {
    int i;
    for (i = 0; i < s->n; i++) free(s->imgs[i]);
    s->n = 0;
}

static int qp_run(luthier_context *ctx, const luthier_graph *g, const luthier_calibration *cal, const void *const *ins,
                  float **out, size_t *n, luthier_plan **keep) {
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_tensor_info ti;
    void *outs[1];
    size_t k;
    int i;
    memset(&pd, 0, sizeof pd);
    pd.int8 = cal;
    luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, 0), &ti);
    for (k = 1, i = 0; i < ti.rank; i++) k *= (size_t)ti.shape[i];
    *n = k;
    *out = (float *)test_alloc(k * sizeof(float));
    outs[0] = *out;
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        printf("    plan_create: %s\n", luthier_context_error(ctx));
        return 0;
    }
    if (luthier_plan_run(ctx, p, ins, outs) != LUTHIER_STATUS_OK) {
        printf("    plan_run: %s\n", luthier_context_error(ctx));
        luthier_plan_destroy(p);
        return 0;
    }
    if (keep) *keep = p;
    else luthier_plan_destroy(p);
    return 1;
}

/* min / max of n floats */
static void qp_range(const float *x, size_t n, float *lo, float *hi) {
    size_t i;
    *lo = *hi = x[0];
    for (i = 1; i < n; i++) {
        if (x[i] < *lo) *lo = x[i];
        if (x[i] > *hi) *hi = x[i];
    }
}

/* One conv2d (or dense) layer, int8 plan vs the reference of the scheme, bit for bit. */
static void qp_layer_case(luthier_context *ctx, int dense, int iter) {
    gb b;
    int64_t xs[4], n = test_rand_int(1, 2), cin, cout, k, stride = 1, pad = 0, groups = 1, hw, m = 0;
    int x, y, w_t, b_t, out_q = test_rand_int(0, 3) != 0, fused = test_rand_int(0, 1), trans_b = test_rand_int(0, 1);
    luthier_activation act = (luthier_activation)test_rand_int(0, 2);
    luthier_calibration *cal = NULL;
    luthier_tensor_info wi, oi;
    float *in, *ref_out = NULL, *q_out = NULL, sa, so = 1.0f, lo, hi;
    int32_t za, zo = 0;
    size_t nin, nout, i, per, c;
    const float *wd, *bd;
    const void *ins[1];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    if (dense) {
        m = test_rand_int(1, 9);
        cin = test_rand_int(1, 70);
        cout = test_rand_int(1, 40);
        xs[0] = m; xs[1] = cin;
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
        {
            int64_t ws[2], bs[1];
            luthier_node_desc d;
            ws[0] = trans_b ? cin : cout; ws[1] = trans_b ? cout : cin;
            bs[0] = cout;
            w_t = gb_const(&b, "fc.weight", 2, ws, -0.5f, 0.5f);
            b_t = gb_const(&b, "fc.bias", 1, bs, -0.3f, 0.3f);
            memset(&d, 0, sizeof d);
            d.op = LUTHIER_OP_DENSE;
            d.name = "fc";
            d.trans_b = trans_b;
            d.activation = fused ? act : LUTHIER_ACTIVATION_NONE;
            y = gb_node(&b, &d, x, w_t, b_t);
        }
        nin = (size_t)(m * cin);
    } else {
        hw = test_rand_int(1, 13);
        k = test_rand_int(0, 2) ? 3 : test_rand_int(1, 2) * 2 - 1;
        stride = test_rand_int(1, 2);
        pad = test_rand_int(0, (int)(k / 2));
        if (hw + 2 * pad < k) hw = k;
        switch (test_rand_int(0, 3)) {
        case 0: /* depthwise */
            cin = cout = groups = test_rand_int(1, 40);
            break;
        case 1: /* grouped */
            groups = test_rand_int(2, 3);
            cin = groups * test_rand_int(1, 5);
            cout = groups * test_rand_int(1, 6);
            break;
        default:
            groups = 1;
            cin = test_rand_int(1, 24);
            cout = test_rand_int(1, 40);
            break;
        }
        xs[0] = n; xs[1] = cin; xs[2] = hw; xs[3] = hw + test_rand_int(0, 3);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        y = gb_conv(&b, "conv", x, cout, k, stride, pad, groups, 1, fused ? act : LUTHIER_ACTIVATION_NONE);
        w_t = y >= 0 ? luthier_graph_num_tensors(b.g) - 3 : -1; /* weight, bias, output */
        b_t = w_t + 1;
        nin = (size_t)(xs[0] * xs[1] * xs[2] * xs[3]);
    }
    if (!fused && act != LUTHIER_ACTIVATION_NONE) {
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = act == LUTHIER_ACTIVATION_RELU ? LUTHIER_OP_RELU : LUTHIER_OP_CLIP;
        d.name = "act";
        d.clamp_min = 0.0f;
        d.clamp_max = 6.0f;
        y = gb_node(&b, &d, y, -1, -1);
    }
    if (out_q) {
        /* a graph output is produced in fp32 directly: an identity (a view) after the layer
           keeps its output uint8, dequantized at the end */
        int o = gb_op(&b, LUTHIER_OP_IDENTITY, "view", y, -1);
        luthier_graph_output(b.g, o);
    } else {
        luthier_graph_output(b.g, y);
    }
    CHECK(!b.fail, "graph");
    if (b.fail) goto done;
    in = rand_buf(nin, -2.0f, 3.0f);
    ins[0] = in;
    /* calibration: the input's true range; the output's from an fp32 run (or none: fp32 out) */
    luthier_calibration_create(&cal);
    qp_range(in, nin, &lo, &hi);
    CHECK(luthier_calibration_set_range(cal, x, lo, hi) == LUTHIER_STATUS_OK, "set_range");
    if (!qp_run(ctx, b.g, NULL, ins, &ref_out, &nout, NULL)) goto done_in;
    if (out_q) {
        qp_range(ref_out, nout, &lo, &hi);
        luthier_calibration_set_range(cal, y, lo, hi);
        luthier_calibration_get(cal, y, &so, &zo);
    }
    luthier_calibration_get(cal, x, &sa, &za);
    {
        luthier_plan *p = NULL;
        int convs;
        if (!qp_run(ctx, b.g, cal, ins, &q_out, &nout, &p)) {
            CHECK(0, "int8 plan failed");
            goto done_in;
        }
        convs = qp_count_int8(p, dense ? LUTHIER_OP_DENSE : LUTHIER_OP_CONV2D);
        CHECK(convs == 1, "%s: %d int8 steps", dense ? "dense" : "conv", convs);
        luthier_plan_destroy(p);
    }
    /* the reference */
    luthier_graph_tensor_info(b.g, w_t, &wi);
    luthier_graph_tensor_info(b.g, y, &oi);
    {
        /* weights / bias data: the graph borrowed them from gb blobs, in creation order */
        int64_t oh = dense ? 1 : oi.shape[2], ow = dense ? 1 : oi.shape[3], kh = dense ? 1 : wi.shape[2],
                kw = dense ? 1 : wi.shape[3], ih = dense ? 1 : xs[2], iw = dense ? 1 : xs[3];
        int64_t batch = dense ? m : n, cpg = dense ? cin : wi.shape[1], opg = cout / (dense ? 1 : groups);
        int32_t qmin, qmax;
        size_t bad = 0, first = 0;
        int8_t *wq;
        float *sw;
        int64_t bi, oc, oy, ox;
        wd = b.blobs[0];
        bd = b.blobs[1];
        per = (size_t)(cpg * kh * kw);
        wq = (int8_t *)test_alloc((size_t)cout * per);
        sw = (float *)test_alloc(sizeof(float) * (size_t)cout);
        for (c = 0; c < (size_t)cout; c++) {
            float mx = 0.0f;
            for (i = 0; i < per; i++) {
                float v = fabsf(dense && trans_b ? wd[i * (size_t)cout + c] : wd[c * per + i]);
                if (v > mx) mx = v;
            }
            sw[c] = mx > 0.0f ? mx / 127.0f : 1.0f;
            for (i = 0; i < per; i++) {
                double q = floor((double)(dense && trans_b ? wd[i * (size_t)cout + c] : wd[c * per + i]) / (double)sw[c] + 0.5);
                wq[c * per + i] = (int8_t)(q < -127 ? -127 : q > 127 ? 127 : q);
            }
        }
        luthier_quantize_activation(act, 0.0f, 6.0f, so, zo, &qmin, &qmax);
        for (bi = 0; bi < batch; bi++)
            for (oy = 0; oy < oh; oy++)
                for (ox = 0; ox < ow; ox++)
                    for (oc = 0; oc < cout; oc++) {
                        int64_t g0 = oc / opg, acc = 0, ci, ky, kx;
                        float want, got;
                        size_t oidx;
                        for (ci = 0; ci < cpg; ci++)
                            for (ky = 0; ky < kh; ky++)
                                for (kx = 0; kx < kw; kx++) {
                                    int64_t yy = dense ? 0 : oy * stride - pad + ky, xx = dense ? 0 : ox * stride - pad + kx;
                                    int32_t qa = za;
                                    if (yy >= 0 && yy < ih && xx >= 0 && xx < iw)
                                        qa = qp_quantize(in[dense ? (size_t)(bi * cin + ci)
                                                                  : (size_t)(((bi * cin + g0 * cpg + ci) * ih + yy) * iw + xx)],
                                                         sa, za);
                                    acc += (int64_t)(qa - za) * wq[(size_t)oc * per + (size_t)((ci * kh + ky) * kw + kx)];
                                }
                        if (out_q) {
                            int32_t mult, shift, q;
                            double bq = floor((double)bd[oc] / ((double)sa * (double)sw[oc]) + 0.5);
                            luthier_quantize_multiplier((double)sa * (double)sw[oc] / (double)so, &mult, &shift);
                            q = luthier_requantize((int32_t)(acc + (int64_t)bq), mult, shift, zo, qmin, qmax);
                            want = so * (float)(q - zo);
                        } else {
                            want = fmaf((float)acc, sa * sw[oc], bd[oc]);
                            if (act != LUTHIER_ACTIVATION_NONE && want < 0.0f) want = 0.0f;
                            if (act == LUTHIER_ACTIVATION_RELU6 && want > 6.0f) want = 6.0f;
                        }
                        oidx = dense ? (size_t)(bi * cout + oc) : (size_t)(((bi * cout + oc) * oh + oy) * ow + ox);
                        got = q_out[oidx];
                        if (memcmp(&want, &got, sizeof want) != 0 && !bad++) first = oidx;
                    }
        CHECK(bad == 0, "%s case %d (%s, cin %lld cout %lld, %s out, act %d %s): %zu of %zu differ, first at %zu", dense ? "dense" : "conv",
              iter, dense ? (trans_b ? "trans_b" : "") : "", (long long)cin, (long long)cout, out_q ? "uint8" : "fp32",
              (int)act, fused ? "fused" : "separate", bad, nout, first);
        free(wq);
        free(sw);
    }
done_in:
    free(in);
done:
    free(ref_out);
    free(q_out);
    luthier_calibration_destroy(cal);
    gb_free(&b);
}

static void test_qplan_layers_exact(void) {
    luthier_context *ctx = ctx_threads(2);
    int i, n = T.quick ? 12 : 40;
    CHECK(ctx != NULL, "context");
    if (!ctx) return;
    for (i = 0; i < n; i++) qp_layer_case(ctx, 0, i);
    for (i = 0; i < n / 2; i++) qp_layer_case(ctx, 1, i);
    luthier_context_destroy(ctx);
}

/* The mini ResNet of test_graph.c, calibrated on random images. */
static void test_qplan_mini_resnet(void) {
    gb b;
    luthier_context *ctx1 = ctx_threads(1), *ctx2 = ctx_threads(2);
    luthier_calibration *cal = NULL;
    luthier_calib_desc cd;
    qp_samples sm;
    float *test_img, *f32 = NULL, *q1 = NULL, *q2 = NULL, *q3 = NULL;
    const void *ins[1];
    size_t n, allocs;
    luthier_plan *p = NULL;
    int x, i;
    CHECK(ctx1 && ctx2, "contexts");
    if (!ctx1 || !ctx2) goto out;
    build_mini_resnet(&b, 1, 29, &x);
    qp_samples_init(&sm, 4, 3 * 29 * 29, &cd);
    test_img = rand_buf(3 * 29 * 29, -1, 1);
    ins[0] = test_img;
    CHECK(luthier_calibrate(ctx1, b.g, &cd, &cal) == LUTHIER_STATUS_OK, "calibrate: %s", luthier_context_error(ctx1));
    if (!cal) goto done;
    {
        float s;
        int32_t z;
        CHECK(luthier_calibration_get(cal, x, &s, &z) == LUTHIER_STATUS_OK && s > 0 && s < 1.0f / 127 * 1.01f && z > 100 && z < 155,
              "input params %g %d", (double)s, (int)z);
    }
    CHECK(qp_run(ctx1, b.g, NULL, ins, &f32, &n, NULL), "fp32 run");
    CHECK(qp_run(ctx1, b.g, cal, ins, &q1, &n, &p), "int8 run");
    if (!p) goto done;
    CHECK(qp_count_int8(p, LUTHIER_OP_CONV2D) == 6 && qp_count_int8(p, LUTHIER_OP_ADD) == 2 &&
              qp_count_int8(p, LUTHIER_OP_MAXPOOL) == 1 && qp_count_int8(p, LUTHIER_OP_GLOBAL_AVGPOOL) == 1 &&
              qp_count_int8(p, LUTHIER_OP_DENSE) == 1,
          "int8 steps: conv %d add %d maxpool %d avgpool %d dense %d", qp_count_int8(p, LUTHIER_OP_CONV2D),
          qp_count_int8(p, LUTHIER_OP_ADD), qp_count_int8(p, LUTHIER_OP_MAXPOOL), qp_count_int8(p, LUTHIER_OP_GLOBAL_AVGPOOL),
          qp_count_int8(p, LUTHIER_OP_DENSE));
    {
        double cs = qp_cosine(f32, q1, n);
        printf("    mini resnet: int8 vs fp32 cosine %.5f\n", cs);
        CHECK(cs >= 0.99, "cosine %.4f < 0.99", cs);
    }
    /* no allocation while running */
    {
        void *outs[1];
        q3 = (float *)test_alloc(n * sizeof(float));
        outs[0] = q3;
        allocs = test_luthier_allocs;
        CHECK(luthier_plan_run(ctx1, p, ins, outs) == LUTHIER_STATUS_OK, "rerun");
        CHECK(test_luthier_allocs == allocs, "%zu allocations in an int8 run", test_luthier_allocs - allocs);
        CHECK(memcmp(q1, q3, n * sizeof(float)) == 0, "rerun differs");
    }
    /* 2 threads with a ratio split: the same bits */
    {
        luthier_plan_desc pd;
        luthier_node_config *cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
        luthier_plan *p2 = NULL;
        void *outs[1];
        q2 = (float *)test_alloc(n * sizeof(float));
        outs[0] = q2;
        for (i = 0; i < b.g->num_nodes; i++) {
            int c;
            cfg[i].num_ratios = ctx2->pool->num_clusters;
            for (c = 0; c < cfg[i].num_ratios; c++) cfg[i].ratios[c] = (float)(1 + (i + c) % 3);
        }
        memset(&pd, 0, sizeof pd);
        pd.int8 = cal;
        pd.configs = cfg;
        pd.num_configs = b.g->num_nodes;
        CHECK(luthier_plan_create(ctx2, b.g, &pd, &p2) == LUTHIER_STATUS_OK, "2-thread plan: %s", luthier_context_error(ctx2));
        if (p2) {
            CHECK(luthier_plan_run(ctx2, p2, ins, outs) == LUTHIER_STATUS_OK, "2-thread run");
            CHECK(memcmp(q1, q2, n * sizeof(float)) == 0, "1 and 2 threads differ");
        }
        luthier_plan_destroy(p2);
        free(cfg);
    }
done:
    luthier_plan_destroy(p);
    luthier_calibration_destroy(cal);
    qp_samples_free(&sm);
    free(test_img);
    free(f32);
    free(q1);
    free(q2);
    free(q3);
    gb_free(&b);
out:
    luthier_context_destroy(ctx1);
    luthier_context_destroy(ctx2);
}

/* A zoo network calibrated on 4 generated inputs, checked on the zoo's own input. */
static void qp_zoo_case(const char *name, luthier_calib_method method) {
    luthier_context *ctx = ctx_threads(2);
    luthier_graph *g = NULL;
    luthier_zoo_info info;
    luthier_calibration *cal = NULL;
    luthier_calib_desc cd;
    float *imgs[4] = {0}, *in = NULL, *f32 = NULL, *q8 = NULL;
    const void *samples_in[4][1];
    const void *const *samples[4];
    const void *ins[1];
    char err[256];
    size_t n, i;
    luthier_plan *p = NULL;
    int k;
    CHECK(ctx && luthier_zoo_build(name, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK &&
              luthier_zoo_get_info(name, NULL, &info) == LUTHIER_STATUS_OK,
          "%s: build", name);
    if (!ctx || !g) goto done;
    n = info.input_bytes[0] / sizeof(float);
    for (k = 0; k < 4; k++) {
        /* inputs of the kind the zoo feeds (uniform in [-1, 1) per element), from streams of
           their own: the same samples whatever ran before */
        uint64_t st = 0x9E3779B97F4A7C15ull * (uint64_t)(k + 11);
        imgs[k] = (float *)test_alloc(n * sizeof(float));
        for (i = 0; i < n; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            imgs[k][i] = (float)((double)(st >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
        }
        samples_in[k][0] = imgs[k];
        samples[k] = samples_in[k];
    }
    in = (float *)test_alloc(n * sizeof(float));
    CHECK(luthier_zoo_input(name, NULL, 0, in, info.input_bytes[0]) == LUTHIER_STATUS_OK, "%s: input", name);
    ins[0] = in;
    memset(&cd, 0, sizeof cd);
    cd.method = method;
    cd.num_samples = 4;
    cd.samples = samples;
    CHECK(luthier_calibrate(ctx, g, &cd, &cal) == LUTHIER_STATUS_OK, "%s: calibrate: %s", name, luthier_context_error(ctx));
    if (!cal) goto done;
    CHECK(qp_run(ctx, g, NULL, ins, &f32, &n, NULL), "%s: fp32 run", name);
    CHECK(qp_run(ctx, g, cal, ins, &q8, &n, &p), "%s: int8 run", name);
    if (p) {
        double cs = qp_cosine(f32, q8, n);
        int convs = qp_count_int8(p, LUTHIER_OP_CONV2D), total = 0;
        for (k = 0; k < luthier_graph_num_nodes(g); k++) {
            luthier_op op;
            luthier_graph_node(g, k, &op, NULL, NULL, NULL, NULL, NULL, NULL);
            total += op == LUTHIER_OP_CONV2D;
        }
        printf("    %-20s %s: int8 vs fp32 cosine %.5f, %d of %d convolutions int8\n", name,
               method == LUTHIER_CALIB_MINMAX ? "min/max" : "percentile", cs, convs, total);
        CHECK(cs >= 0.99, "%s: cosine %.4f < 0.99", name, cs);
        CHECK(convs == total, "%s: %d of %d convolutions int8", name, convs, total);
    }
done:
    luthier_plan_destroy(p);
    luthier_calibration_destroy(cal);
    for (k = 0; k < 4; k++) free(imgs[k]);
    free(in);
    free(f32);
    free(q8);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
}

static void test_qplan_zoo_small(void) {
    qp_zoo_case("resnet18_small", LUTHIER_CALIB_MINMAX);
    qp_zoo_case("mobilenet_v2_small", LUTHIER_CALIB_PERCENTILE);
    if (!T.quick) qp_zoo_case("resnet50_small", LUTHIER_CALIB_PERCENTILE);
}

static void test_qplan_zoo_full(void) {
    if (T.quick || T.small_models) return;
    qp_zoo_case("resnet50", LUTHIER_CALIB_MINMAX);
    qp_zoo_case("mobilenet_v2", LUTHIER_CALIB_PERCENTILE);
}

/* The calibration API: arguments, percentile vs min/max, save / load. */
static void test_qplan_calibration_api(void) {
    luthier_context *ctx = ctx_threads(1);
    luthier_calibration *c = NULL, *c2 = NULL;
    luthier_calib_desc cd;
    gb b;
    int x, y;
    int64_t xs[2] = {1, 1000};
    float *in, s, s2;
    int32_t z, z2;
    const void *samp_in[1];
    const void *const *samples[1];
    const char *path = "build/test_qplan.cal";
    FILE *fh;
    size_t i;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
    y = gb_op(&b, LUTHIER_OP_RELU, "r", x, -1);
    luthier_graph_output(b.g, y);
    /* container */
    CHECK(luthier_calibration_create(NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "create NULL");
    CHECK(luthier_calibration_create(&c) == LUTHIER_STATUS_OK && c, "create");
    CHECK(luthier_calibration_get(c, 0, &s, &z) == LUTHIER_STATUS_NOT_FOUND, "empty get");
    CHECK(luthier_calibration_set_params(c, 5, 0.0f, 0) == LUTHIER_STATUS_INVALID_ARGUMENT, "scale 0");
    CHECK(luthier_calibration_set_params(c, 5, 0.1f, 256) == LUTHIER_STATUS_INVALID_ARGUMENT, "zero 256");
    CHECK(luthier_calibration_set_params(c, -1, 0.1f, 3) == LUTHIER_STATUS_INVALID_ARGUMENT, "tensor -1");
    CHECK(luthier_calibration_set_range(c, 0, 2.0f, 1.0f) == LUTHIER_STATUS_INVALID_ARGUMENT, "min > max");
    CHECK(luthier_calibration_set_range(c, 0, -1.0f, NAN) == LUTHIER_STATUS_INVALID_ARGUMENT, "NaN");
    CHECK(luthier_calibration_set_params(c, 1000, 0.25f, 7) == LUTHIER_STATUS_OK &&
              luthier_calibration_get(c, 1000, &s, &z) == LUTHIER_STATUS_OK && s == 0.25f && z == 7,
          "set/get far id");
    CHECK(luthier_calibration_remove(c, 1000) == LUTHIER_STATUS_OK && luthier_calibration_get(c, 1000, &s, &z) == LUTHIER_STATUS_NOT_FOUND &&
              luthier_calibration_remove(c, 1000) == LUTHIER_STATUS_NOT_FOUND,
          "remove");
    CHECK(luthier_calibration_set_range(c, 0, 1.0f, 3.0f) == LUTHIER_STATUS_OK && luthier_calibration_get(c, 0, &s, &z) == 0 &&
              z == 0 && fabsf(s - 3.0f / 255) < 1e-7f,
          "range widened to 0: %g %d", (double)s, (int)z);
    luthier_calibration_destroy(c);
    c = NULL;
    luthier_calibration_destroy(NULL);
    /* calibrate: arguments */
    in = (float *)test_alloc(1000 * sizeof(float));
    for (i = 0; i < 1000; i++) in[i] = (float)i / 999.0f * 2.0f - 1.0f; /* [-1, 1] */
    in[500] = 50.0f;                                                   /* one outlier */
    samp_in[0] = in;
    samples[0] = samp_in;
    memset(&cd, 0, sizeof cd);
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT && !c &&
              strstr(luthier_context_error(ctx), "samples"),
          "no samples: %s", luthier_context_error(ctx));
    cd.num_samples = 1;
    cd.samples = samples;
    cd.method = (luthier_calib_method)7;
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT && !c, "bad method");
    cd.method = LUTHIER_CALIB_PERCENTILE;
    cd.percentile = 20.0f;
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT && !c &&
              strstr(luthier_context_error(ctx), "percentile"),
          "bad percentile: %s", luthier_context_error(ctx));
    samp_in[0] = NULL;
    cd.percentile = 0.0f;
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT && !c, "NULL input");
    samp_in[0] = in;
    CHECK(luthier_calibrate(NULL, b.g, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL ctx");
    CHECK(luthier_calibrate(ctx, NULL, &cd, &c) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL graph");
    /* min/max keeps the outlier, the percentile (99.8: 1 of 1000 values per side) drops it */
    cd.method = LUTHIER_CALIB_MINMAX;
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c) == LUTHIER_STATUS_OK, "minmax: %s", luthier_context_error(ctx));
    cd.method = LUTHIER_CALIB_PERCENTILE;
    cd.percentile = 99.8f;
    CHECK(luthier_calibrate(ctx, b.g, &cd, &c2) == LUTHIER_STATUS_OK, "percentile: %s", luthier_context_error(ctx));
    if (c && c2) {
        CHECK(luthier_calibration_get(c, x, &s, &z) == LUTHIER_STATUS_OK && fabsf(s - 51.0f / 255) < 1e-5f, "minmax scale %g", (double)s);
        CHECK(luthier_calibration_get(c2, x, &s2, &z2) == LUTHIER_STATUS_OK && s2 < 2.1f / 255 && s2 > 1.9f / 255,
              "percentile scale %g (range about [-1, 1])", (double)s2);
        CHECK(luthier_calibration_get(c, y, &s, &z) == LUTHIER_STATUS_OK && z == 0, "relu output: zero point 0 (%d)", (int)z);
        /* save / load */
        CHECK(luthier_calibration_save(ctx, c2, b.g, path) == LUTHIER_STATUS_OK, "save: %s", luthier_context_error(ctx));
        luthier_calibration_destroy(c);
        luthier_calibration_create(&c);
        CHECK(luthier_calibration_load(ctx, c, b.g, path) == LUTHIER_STATUS_OK, "load: %s", luthier_context_error(ctx));
        CHECK(luthier_calibration_get(c, x, &s, &z) == LUTHIER_STATUS_OK && s == s2 && z == z2, "round trip %g %d vs %g %d",
              (double)s, (int)z, (double)s2, (int)z2);
        CHECK(luthier_calibration_load(ctx, c, b.g, "build/no/such/file") == LUTHIER_STATUS_NOT_FOUND &&
                  strstr(luthier_context_error(ctx), "cannot open"),
              "missing file");
        if ((fh = fopen(path, "w"))) {
            fprintf(fh, "# comment\nx 0.5 3\nnope 0.5 3\n");
            fclose(fh);
        }
        CHECK(luthier_calibration_load(ctx, c, b.g, path) == LUTHIER_STATUS_NOT_FOUND && strstr(luthier_context_error(ctx), ":3:") &&
                  strstr(luthier_context_error(ctx), "nope"),
              "unknown name: %s", luthier_context_error(ctx));
        if ((fh = fopen(path, "w"))) {
            fprintf(fh, "x 0.5 300\n");
            fclose(fh);
        }
        CHECK(luthier_calibration_load(ctx, c, b.g, path) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_context_error(ctx), ":1:"),
              "bad zero point: %s", luthier_context_error(ctx));
        if ((fh = fopen(path, "w"))) {
            fprintf(fh, "x 0.5 3 extra\n");
            fclose(fh);
        }
        CHECK(luthier_calibration_load(ctx, c, b.g, path) == LUTHIER_STATUS_INVALID_ARGUMENT, "trailing token");
        CHECK(luthier_calibration_load(ctx, c, NULL, path) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL graph");
        remove(path);
    }
    luthier_calibration_destroy(c);
    luthier_calibration_destroy(c2);
    free(in);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* The tuner keeps the default where nothing beat it, and under emulation (qemu) or on a loaded
   machine that can be every task: then no record names a kernel and "the plan applies the
   records' kernels" could not be checked. Records whose kernel is the default ('-') are given an
   available int8 kernel by name (every int8 kernel is exact, so the outputs must still agree). */
static void qp_records_name_kernel(const char *path) {
    char *text = (char *)calloc(1, 1 << 16), *out = (char *)calloc(1, 1 << 17), *line, *next;
    const char *name = NULL;
    size_t used = 0, len;
    FILE *fh;
    int idx;
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++)
        if (q8_kernel_available(&luthier__qkernels[idx])) name = luthier__qkernels[idx].name; /* the last one available */
    if (!text || !out || !name || !(fh = fopen(path, "rb"))) {
        free(text);
        free(out);
        return;
    }
    len = fread(text, 1, (1 << 16) - 1, fh);
    fclose(fh);
    text[len] = 0;
    for (line = text; line && *line; line = next) {
        char *f[8], *q = line;
        int k = 0;
        if ((next = strchr(line, '\n'))) *next++ = 0;
        while (k < 8 && q) {
            f[k++] = q;
            if ((q = strchr(q, '\t'))) *q++ = 0;
        }
        if (k == 8 && strncmp(f[1], "int8 ", 5) == 0 && strcmp(f[3], "-") == 0) f[3] = (char *)name;
        if (k == 8)
            used += (size_t)snprintf(out + used, (1 << 17) - used, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f[0], f[1], f[2], f[3], f[4], f[5],
                                     f[6], f[7]);
        else
            used += (size_t)snprintf(out + used, (1 << 17) - used, "%s\n", line);
    }
    if ((fh = fopen(path, "wb"))) {
        fwrite(out, 1, used, fh);
        fclose(fh);
    }
    free(text);
    free(out);
}


/* Tuning the int8 plan: int8 tasks in the records, applied by int8 plans (not by fp32 ones),
   and the tuned plan gives the same bits (every int8 kernel and algorithm is exact). */
static void test_qplan_tune(void) {
    gb b;
    luthier_context *ctx = ctx_threads(2);
    luthier_calibration *cal = NULL;
    luthier_calib_desc cd;
    luthier_tune_desc td;
    luthier_tune_result res;
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    qp_samples sm;
    float *a = NULL, *c = NULL;
    const void *ins[1];
    void *outs[1];
    const char *path = "build/test_qplan.records";
    char *text = NULL;
    size_t n = 10, len = 0;
    int x, i, int8_lines = 0, applied = 0;
    FILE *fh;
    CHECK(ctx != NULL, "context");
    if (!ctx) return;
    build_mini_resnet(&b, 1, 29, &x);
    qp_samples_init(&sm, 2, 3 * 29 * 29, &cd);
    ins[0] = sm.imgs[0];
    CHECK(luthier_calibrate(ctx, b.g, &cd, &cal) == LUTHIER_STATUS_OK, "calibrate");
    memset(&td, 0, sizeof td);
    td.budget_seconds = 3;
    td.max_fraction = 0.2;
    td.progress = -1;
    td.int8 = cal;
    CHECK(luthier_tune(ctx, b.g, &td, path, &res) == LUTHIER_STATUS_OK, "tune: %s", luthier_context_error(ctx));
    CHECK(res.tasks >= 5 && res.measurements > res.tasks, "%d tasks, %d measurements", res.tasks, res.measurements);
    if ((fh = fopen(path, "rb"))) {
        char line[1024];
        while (fgets(line, sizeof line, fh)) int8_lines += strstr(line, "\tint8 conv2d ") != NULL || strstr(line, "\tint8 dense ") != NULL;
        fclose(fh);
    }
    CHECK(int8_lines == res.tasks, "%d int8 record lines for %d tasks", int8_lines, res.tasks);
    qp_records_name_kernel(path);
    /* the int8 plan applies them; the output is the untuned int8 plan's, bit for bit */
    CHECK(qp_run(ctx, b.g, cal, ins, &a, &n, NULL), "untuned int8 run");
    memset(&pd, 0, sizeof pd);
    pd.int8 = cal;
    pd.records = path;
    c = (float *)test_alloc(n * sizeof(float));
    outs[0] = c;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "tuned int8 plan: %s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_info pi;
        luthier_step_info st;
        memset(&pi, 0, sizeof pi);
        luthier_plan_get_info(p, &pi);
        if ((fh = fopen(path, "rb"))) {
            text = (char *)test_alloc(1 << 16);
            len = fread(text, 1, (1 << 16) - 1, fh);
            text[len] = 0;
            fclose(fh);
        }
        for (i = 0; i < pi.num_steps; i++)
            if (luthier_plan_step_info(p, i, &st) == LUTHIER_STATUS_OK && st.int8 && st.node >= 0 && st.kernel[0] && text &&
                strstr(text, st.kernel))
                applied++;
        CHECK(applied > 0, "no int8 step runs a recorded kernel");
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "tuned run");
        CHECK(a && memcmp(a, c, n * sizeof(float)) == 0, "tuned int8 plan differs from the untuned one");
    }
    luthier_plan_destroy(p);
    p = NULL;
    /* an fp32 plan finds no task of its own in int8 records */
    {
        luthier_node_config *cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes + 1, sizeof *cfg);
        int matched = -1;
        CHECK(cfg && luthier_records_apply(ctx, b.g, path, cfg, &matched) == LUTHIER_STATUS_OK && matched == 0,
              "fp32 matched %d int8 records", matched);
        free(cfg);
    }
    remove(path);
    free(text);
    free(a);
    free(c);
    qp_samples_free(&sm);
    luthier_calibration_destroy(cal);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* An int8 add whose operand is a plain-layout [N, C, 1, 1] fp32 value (its memory order is
   NHWC's too): it must still be quantized before the add reads it as uint8. */
static void test_qplan_add_plain_operand(void) {
    gb b;
    luthier_context *ctx = ctx_threads(1);
    luthier_calibration *cal = NULL;
    int64_t xs[4] = {1, 8, 1, 1};
    int x, y, z;
    float in[8], *f32 = NULL, *q8 = NULL, lo, hi, s, worst = 0;
    const void *ins[1];
    size_t n = 0, i;
    luthier_plan *p = NULL;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    y = gb_conv(&b, "conv", x, 8, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE);
    z = gb_op(&b, LUTHIER_OP_ADD, "add", y, x);
    luthier_graph_output(b.g, gb_op(&b, LUTHIER_OP_IDENTITY, "view", z, -1));
    for (i = 0; i < 8; i++) in[i] = (float)i * 0.25f - 1.0f;
    ins[0] = in;
    CHECK(ctx && !b.fail && qp_run(ctx, b.g, NULL, ins, &f32, &n, NULL), "fp32 run");
    luthier_calibration_create(&cal);
    luthier_calibration_set_range(cal, x, -1.0f, 1.0f);
    qp_range(f32, n, &lo, &hi);
    luthier_calibration_set_range(cal, z, lo, hi);
    luthier_calibration_set_range(cal, y, lo - 1.0f, hi + 1.0f); /* covers conv = sum - x */
    CHECK(qp_run(ctx, b.g, cal, ins, &q8, &n, &p), "int8 run");
    if (p) {
        CHECK(qp_count_int8(p, LUTHIER_OP_ADD) == 1 && qp_count_int8(p, LUTHIER_OP_CONV2D) == 1, "int8 add %d, conv %d",
              qp_count_int8(p, LUTHIER_OP_ADD), qp_count_int8(p, LUTHIER_OP_CONV2D));
        luthier_calibration_get(cal, z, &s, NULL);
        for (i = 0; i < n; i++)
            if (fabsf(q8[i] - f32[i]) > worst) worst = fabsf(q8[i] - f32[i]);
        CHECK(worst <= 4.0f * s, "int8 add with a plain operand: max error %g > 4 steps (%g)", (double)worst, (double)(4 * s));
    }
    luthier_plan_destroy(p);
    luthier_calibration_destroy(cal);
    free(f32);
    free(q8);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

static void run_qplan_tests(void) {
    RUN(test_qplan_calibration_api);
    RUN(test_qplan_layers_exact);
    RUN(test_qplan_mini_resnet);
    RUN(test_qplan_tune);
    RUN(test_qplan_add_plain_operand);
    RUN(test_qplan_zoo_small);
    RUN(test_qplan_zoo_full);
}
