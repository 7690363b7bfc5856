/* Tensors with a run-time length (RUN-TIME LENGTHS in luthier_graph.h): NONZERO, and a detection
   post-processing chain through every operator that takes such inputs, against naive references
   at 1 and 2 threads; the lengths the plan reports; refusals when nodes are added. */

/* The graph input x of shape s (f32, or i64 when xi) -> NONZERO -> output; coordinates and the
   length against a row-major scan. */
static void ln_nonzero_case(int threads, int rank, const int64_t *s, const float *x, const int64_t *xi, const char *what) {
    luthier_context *ctx;
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc d;
    luthier_tensor_info ti;
    int xt, o, axis = -2, k;
    int64_t numel = 1, e, n = 0, len = -2, *got, *want;
    long bad = 0;
    for (k = 0; k < rank; k++) numel *= s[k];
    if (rank < 1 || rank > 4 || numel < 1 || numel > 4096) return;
    ctx = ctx_threads(threads);
    got = (int64_t *)malloc(sizeof(int64_t) * (size_t)rank * (size_t)numel);
    want = (int64_t *)calloc((size_t)rank * (size_t)numel, sizeof(int64_t));
    for (e = 0; e < numel; e++) {
        int64_t rest = e;
        if (xi ? xi[e] == 0 : x[e] == 0.0f) continue;
        for (k = rank - 1; k >= 0; k--) want[k * numel + n] = rest % s[k], rest /= s[k];
        n++;
    }
    for (e = 0; e < rank * numel; e++) got[e] = 77;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_NONZERO, d.inputs = &xt, d.num_inputs = 1;
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", xi ? LUTHIER_DTYPE_I64 : LUTHIER_DTYPE_F32, rank, s, &xt);
    CHECK(luthier_graph_add_node(g, &d, &o) == LUTHIER_STATUS_OK, "%s: add: %s", what, luthier_graph_error(g));
    luthier_graph_tensor_info(g, o, &ti);
    CHECK(ti.dtype == LUTHIER_DTYPE_I64 && ti.rank == 2 && ti.shape[0] == rank && ti.shape[1] == numel && ti.length_axis == 1,
          "%s: output info", what);
    luthier_graph_output(g, o);
    if (ctx && luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK) {
        const void *ins[1];
        void *outs[1];
        ins[0] = xi ? (const void *)xi : (const void *)x, outs[0] = got;
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s: run: %s", what, luthier_context_error(ctx));
        CHECK(luthier_plan_output_length(p, 0, &axis, &len) == LUTHIER_STATUS_OK && axis == 1 && len == n,
              "%s (threads %d): length %lld along %d, want %lld", what, threads, (long long)len, axis, (long long)n);
        for (e = 0; e < rank * numel; e++) bad += got[e] != want[e]; /* past the count: zeros */
        CHECK(bad == 0, "%s (threads %d): %ld wrong coordinates", what, threads, bad);
    } else {
        CHECK(0, "%s: plan: %s", what, ctx ? luthier_context_error(ctx) : "no context");
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    free(got);
    free(want);
}

/* Counts 0, 1, the capacity and in between; NaN counts as nonzero; i64 inputs. */
static void test_lengths_nonzero(void) {
    static const int ranks[4] = {1, 2, 3, 4};
    static const int64_t shapes[4][4] = {{7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}};
    int th, si, fill;
    for (th = 1; th <= 2; th++)
        for (si = 0; si < 4; si++)
            for (fill = 0; fill < 5; fill++) {
                float x[64];
                int64_t xi[64], numel = 1, e;
                char what[96];
                int k;
                for (k = 0; k < ranks[si]; k++) numel *= shapes[si][k];
                for (e = 0; e < numel; e++) {
                    const int on = fill == 2 || (fill == 1 && e == numel / 2) || (fill >= 3 && test_rand_u64() % 5 < 2);
                    x[e] = on ? (fill == 4 && e % 3 == 0 ? NAN : (float)(e + 1) * 0.25f) : (e % 2 ? -0.0f : 0.0f);
                    xi[e] = on ? -(e + 1) : 0;
                }
                snprintf(what, sizeof what, "nonzero rank %d fill %d", ranks[si], fill);
                ln_nonzero_case(th, ranks[si], shapes[si], x, NULL, what);
                snprintf(what, sizeof what, "nonzero i64 rank %d fill %d", ranks[si], fill);
                ln_nonzero_case(th, ranks[si], shapes[si], NULL, xi, what);
            }
}

/* The chain: boxes [N,4], scores [N] -> keep scores > thr (NONZERO, TRANSPOSE, GATHER_ND) ->
   TOPK k of them -> their boxes (GATHER) -> scores * 2 -> CONCAT two static extra boxes and
   scores -> NON_MAX_SUPPRESSION -> the box column (GATHER axis 1, RESHAPE) -> a prefix of m
   (GATHER of 0..m-1) -> the kept scores (GATHER by run-time indices). */
typedef struct ln_chain {
    int64_t n, k, m;
    float thr, iou;
    int outs[6];
} ln_chain;

static int ln_node(luthier_graph *g, luthier_op op, int a, int b, luthier_node_desc *d, int *o) {
    int in[2];
    in[0] = a, in[1] = b;
    d->op = op, d->inputs = in, d->num_inputs = b >= 0 ? 2 : 1;
    if (luthier_graph_add_node(g, d, o) != LUTHIER_STATUS_OK) {
        CHECK(0, "chain: %s: %s", luthier_op_name(op), luthier_graph_error(g));
        return -1;
    }
    return o[0];
}

static luthier_graph *ln_chain_graph(ln_chain *c) {
    static const float extra_boxes[8] = {0.0f, 0.0f, 0.5f, 0.5f, 0.45f, 0.45f, 1.0f, 1.0f}, extra_scores[2] = {0.55f, 0.05f};
    const int64_t bs[2] = {c->n, 4}, ss[1] = {c->n}, one[1] = {1}, es[2] = {2, 4}, es1[1] = {2}, col[1] = {1};
    const int64_t r3b[3] = {1, c->k + 2, 4}, r3s[3] = {1, 1, c->k + 2};
    static const int64_t two[1] = {2};
    int64_t *pre = (int64_t *)malloc(sizeof(int64_t) * (size_t)c->m), e, flat[1];
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int boxes, scores, thr, eb, es_, c2, pr, t, o[2], nz, sel, v, vi, bb, sc, bc, keep, prefix, two_c;
    float twof = 2.0f;
    for (e = 0; e < c->m; e++) pre[e] = e;
    luthier_graph_create(&g);
    luthier_graph_input(g, "boxes", LUTHIER_DTYPE_F32, 2, bs, &boxes);
    luthier_graph_input(g, "scores", LUTHIER_DTYPE_F32, 1, ss, &scores);
    luthier_graph_constant(g, "thr", 1, one, &c->thr, 1, &thr);
    luthier_graph_constant(g, "two", 1, one, &twof, 1, &two_c);
    luthier_graph_constant(g, "extra_boxes", 2, es, extra_boxes, 0, &eb);
    luthier_graph_constant(g, "extra_scores", 1, es1, extra_scores, 0, &es_);
    luthier_graph_constant_i64(g, "col", 1, col, two, &c2);
    luthier_graph_constant_i64(g, "prefix", 1, &c->m, pre, &pr);
    memset(&d, 0, sizeof d);
    t = ln_node(g, LUTHIER_OP_GREATER, scores, thr, &d, o);
    nz = ln_node(g, LUTHIER_OP_NONZERO, t, -1, &d, o);
    t = ln_node(g, LUTHIER_OP_TRANSPOSE, nz, -1, &d, o);
    sel = t;
    t = ln_node(g, LUTHIER_OP_GATHER_ND, scores, sel, &d, o);
    d.typed = 1, luthier_node_attrs_default(LUTHIER_OP_TOPK, &d.attr), d.attr.topk.k = c->k;
    if (ln_node(g, LUTHIER_OP_TOPK, t, -1, &d, o) < 0) return g;
    v = o[0], vi = o[1], c->outs[0] = v;
    memset(&d, 0, sizeof d);
    t = ln_node(g, LUTHIER_OP_GATHER_ND, boxes, sel, &d, o);
    bb = ln_node(g, LUTHIER_OP_GATHER, t, vi, &d, o);
    c->outs[1] = bb;
    { /* the boxes' coordinates apart (SPLIT beside the run-time axis), scaled, back together */
        int parts[4], k;
        d.op = LUTHIER_OP_SPLIT, d.inputs = &bb, d.num_inputs = 1, d.num_outputs = 4, d.axis = 1;
        CHECK(luthier_graph_add_node(g, &d, parts) == LUTHIER_STATUS_OK, "split: %s", luthier_graph_error(g));
        memset(&d, 0, sizeof d);
        for (k = 0; k < 4; k++) parts[k] = ln_node(g, LUTHIER_OP_MUL, parts[k], two_c, &d, o);
        d.op = LUTHIER_OP_CONCAT, d.inputs = parts, d.num_inputs = 4, d.axis = 1;
        CHECK(luthier_graph_add_node(g, &d, &c->outs[5]) == LUTHIER_STATUS_OK, "concat of the coordinates: %s", luthier_graph_error(g));
        memset(&d, 0, sizeof d);
    }
    t = ln_node(g, LUTHIER_OP_MUL, v, two_c, &d, o);
    { int in3[2]; in3[0] = t, in3[1] = es_; d.op = LUTHIER_OP_CONCAT, d.inputs = in3, d.num_inputs = 2;
      CHECK(luthier_graph_add_node(g, &d, &sc) == LUTHIER_STATUS_OK, "concat scores: %s", luthier_graph_error(g));
      in3[0] = bb, in3[1] = eb;
      CHECK(luthier_graph_add_node(g, &d, &bc) == LUTHIER_STATUS_OK, "concat boxes: %s", luthier_graph_error(g)); }
    c->outs[2] = sc;
    d.num_inputs = 1, d.sizes = r3b, d.num_sizes = 3;
    t = ln_node(g, LUTHIER_OP_RESHAPE, bc, -1, &d, o);
    d.sizes = r3s;
    bb = ln_node(g, LUTHIER_OP_RESHAPE, sc, -1, &d, o);
    d.sizes = NULL, d.num_sizes = 0;
    d.typed = 1, luthier_node_attrs_default(LUTHIER_OP_NON_MAX_SUPPRESSION, &d.attr);
    d.attr.nms.max_output_boxes_per_class = 1000, d.attr.nms.iou_threshold = c->iou;
    if (ln_node(g, LUTHIER_OP_NON_MAX_SUPPRESSION, t, bb, &d, o) < 0) return g;
    c->outs[3] = o[0];
    memset(&d, 0, sizeof d);
    d.axis = 1;
    keep = ln_node(g, LUTHIER_OP_GATHER, o[0], c2, &d, o);
    flat[0] = -1, d.axis = 0, d.sizes = flat, d.num_sizes = 1;
    keep = ln_node(g, LUTHIER_OP_RESHAPE, keep, -1, &d, o);
    d.sizes = NULL, d.num_sizes = 0;
    prefix = ln_node(g, LUTHIER_OP_GATHER, keep, pr, &d, o);
    c->outs[4] = ln_node(g, LUTHIER_OP_GATHER, sc, prefix, &d, o);
    for (e = 0; e < 6; e++) luthier_graph_output(g, c->outs[e]);
    free(pre);
    return g;
}

/* The chain by hand, from the ONNX definitions. Returns the NMS count; writes the lengths. */
static int64_t ln_chain_ref(const ln_chain *c, const float *boxes, const float *scores, float *v, float *bb, float *sc,
                            int64_t *sel, float *fin, int64_t *lens) {
    static const float extra_boxes[8] = {0.0f, 0.0f, 0.5f, 0.5f, 0.45f, 0.45f, 1.0f, 1.0f}, extra_scores[2] = {0.55f, 0.05f};
    int64_t *pick = (int64_t *)malloc(sizeof(int64_t) * (size_t)c->n), *used = (int64_t *)calloc((size_t)c->n, sizeof(int64_t));
    int64_t n = 0, kk, j, i, cnt, m;
    luthier_nms_attrs a;
    float *bc = (float *)malloc(sizeof(float) * (size_t)(c->k + 2) * 4);
    for (i = 0; i < c->n; i++)
        if (scores[i] > c->thr) pick[n++] = i;
    kk = n < c->k ? n : c->k;
    for (j = 0; j < kk; j++) { /* the best remaining, the lower position on ties */
        int64_t best = -1;
        for (i = 0; i < n; i++)
            if (!used[i] && (best < 0 || scores[pick[i]] > scores[pick[best]])) best = i;
        used[best] = 1;
        v[j] = scores[pick[best]];
        memcpy(bb + j * 4, boxes + pick[best] * 4, 4 * sizeof(float));
        sc[j] = v[j] * 2.0f;
    }
    memcpy(sc + kk, extra_scores, sizeof extra_scores);
    memcpy(bc, bb, sizeof(float) * (size_t)kk * 4);
    memcpy(bc + kk * 4, extra_boxes, sizeof extra_boxes);
    memset(&a, 0, sizeof a);
    a.max_output_boxes_per_class = 1000, a.iou_threshold = c->iou;
    cnt = ix_ref_nms(bc, sc, 1, 1, kk + 2, &a, sel);
    m = cnt < c->m ? cnt : c->m;
    for (j = 0; j < m; j++) fin[j] = sc[sel[j * 3 + 2]];
    lens[0] = kk, lens[1] = kk, lens[2] = kk + 2, lens[3] = cnt, lens[4] = m, lens[5] = kk;
    free(pick);
    free(used);
    free(bc);
    return cnt;
}

static void ln_chain_case(int threads, ln_chain *c, const char *what) {
    luthier_context *ctx = ctx_threads(threads);
    luthier_graph *g = ln_chain_graph(c);
    luthier_plan *p = NULL;
    const size_t kb = (size_t)c->k + 2;
    float *boxes = (float *)malloc(sizeof(float) * (size_t)c->n * 4), *scores = (float *)malloc(sizeof(float) * (size_t)c->n);
    float *v = (float *)malloc(sizeof(float) * kb), *bb = (float *)malloc(sizeof(float) * kb * 4), *sc = (float *)malloc(sizeof(float) * kb);
    float *fin = (float *)malloc(sizeof(float) * kb), *gv = (float *)malloc(sizeof(float) * kb), *gbb = (float *)malloc(sizeof(float) * kb * 4);
    float *gsc = (float *)malloc(sizeof(float) * kb), *gfin = (float *)malloc(sizeof(float) * kb);
    int64_t *sel = (int64_t *)malloc(sizeof(int64_t) * kb * 3), *gsel = (int64_t *)malloc(sizeof(int64_t) * kb * 3), lens[6], e;
    float *gscaled = (float *)malloc(sizeof(float) * kb * 4);
    int i;
    for (e = 0; e < c->n; e++) {
        scores[e] = (float)(test_rand_u64() % 16) / 16.0f;
        boxes[e * 4] = (float)(test_rand_u64() % 9) / 10.0f, boxes[e * 4 + 1] = (float)(test_rand_u64() % 9) / 10.0f;
        boxes[e * 4 + 2] = boxes[e * 4] + 0.1f + (float)(test_rand_u64() % 4) / 10.0f;
        boxes[e * 4 + 3] = boxes[e * 4 + 1] + 0.1f + (float)(test_rand_u64() % 4) / 10.0f;
    }
    ln_chain_ref(c, boxes, scores, v, bb, sc, sel, fin, lens);
    if (!ctx || luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) {
        CHECK(0, "%s: plan: %s / %s", what, luthier_graph_error(g), ctx ? luthier_context_error(ctx) : "");
    } else {
        const void *ins[2];
        void *outs[6];
        ins[0] = boxes, ins[1] = scores;
        outs[0] = gv, outs[1] = gbb, outs[2] = gsc, outs[3] = gsel, outs[4] = gfin, outs[5] = gscaled;
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s: run: %s", what, luthier_context_error(ctx));
        for (i = 0; i < 6; i++) {
            int axis = -2;
            int64_t len = -2;
            CHECK(luthier_plan_output_length(p, i, &axis, &len) == LUTHIER_STATUS_OK && axis == 0 && len == lens[i],
                  "%s (threads %d): output %d length %lld along %d, want %lld", what, threads, i, (long long)len, axis,
                  (long long)lens[i]);
        }
        CHECK(memcmp(gv, v, sizeof(float) * (size_t)lens[0]) == 0, "%s: topk values", what);
        CHECK(memcmp(gbb, bb, sizeof(float) * (size_t)lens[1] * 4) == 0, "%s: gathered boxes", what);
        CHECK(memcmp(gsc, sc, sizeof(float) * (size_t)lens[2]) == 0, "%s: concatenated scores", what);
        CHECK(memcmp(gsel, sel, sizeof(int64_t) * (size_t)lens[3] * 3) == 0, "%s: selected rows", what);
        CHECK(memcmp(gfin, fin, sizeof(float) * (size_t)lens[4]) == 0, "%s: kept scores", what);
        for (e = lens[0]; e < c->k; e++) CHECK(gv[e] == 0.0f, "%s: topk value %lld past the length", what, (long long)e);
        for (e = 0; e < lens[5] * 4; e++) CHECK(gscaled[e] == bb[e] * 2.0f, "%s: scaled coordinate %lld", what, (long long)e);
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    free(boxes), free(scores), free(v), free(bb), free(sc), free(fin), free(gv), free(gbb), free(gsc), free(gfin), free(sel), free(gsel), free(gscaled);
}

/* Counts from 0 to all the boxes, k below and above the count, prefixes shorter and longer. */
static void test_lengths_chain(void) {
    static const int64_t ns[4] = {1, 5, 12, 40};
    static const float thrs[3] = {2.0f, 0.5f, -1.0f};
    int th, ni, ti, ki, mi;
    for (th = 1; th <= 2; th++)
        for (ni = 0; ni < 4; ni++)
            for (ti = 0; ti < 3; ti++)
                for (ki = 0; ki < 3; ki++)
                    for (mi = 0; mi < 2; mi++) {
                        ln_chain c;
                        char what[128];
                        memset(&c, 0, sizeof c);
                        c.n = ns[ni], c.thr = thrs[ti], c.iou = 0.4f;
                        c.k = ki == 0 ? 1 : ki == 1 ? (c.n + 1) / 2 : c.n;
                        c.m = mi == 0 ? 1 : c.k + 2;
                        snprintf(what, sizeof what, "chain n %lld thr %g k %lld m %lld", (long long)c.n, (double)c.thr, (long long)c.k,
                                 (long long)c.m);
                        ln_chain_case(th, &c, what);
                    }
}

/* Nodes that cannot honour a run-time length are refused when added, naming what. */
static void ln_refuse(luthier_graph *g, luthier_node_desc *d, int a, int b, const char *want, const char *what) {
    int in[2], o[2];
    in[0] = a, in[1] = b;
    d->inputs = in, d->num_inputs = b >= 0 ? 2 : 1;
    CHECK(luthier_graph_add_node(g, d, o) != LUTHIER_STATUS_OK && strstr(luthier_graph_error(g), want) != NULL,
          "%s: accepted, or the message '%s' lacks '%s'", what, luthier_graph_error(g), want);
    memset(d, 0, sizeof *d);
}

static void test_lengths_refusals(void) {
    static const int64_t ss[1] = {12}, bs[2] = {12, 4}, r34[2] = {3, 4};
    static const int64_t idx2[2] = {1, 0};
    static const float ones[48] = {0};
    const int64_t two[1] = {2};
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int scores, boxes, cs, cb, ci, t, o[2], s, b, nz;
    luthier_graph_create(&g);
    luthier_graph_input(g, "scores", LUTHIER_DTYPE_F32, 1, ss, &scores);
    luthier_graph_input(g, "boxes", LUTHIER_DTYPE_F32, 2, bs, &boxes);
    luthier_graph_constant(g, "cs", 1, ss, ones, 1, &cs);
    luthier_graph_constant(g, "cb", 2, bs, ones, 1, &cb);
    luthier_graph_constant_i64(g, "ci", 1, two, idx2, &ci);
    memset(&d, 0, sizeof d);
    nz = ln_node(g, LUTHIER_OP_NONZERO, scores, -1, &d, o);
    t = ln_node(g, LUTHIER_OP_TRANSPOSE, nz, -1, &d, o);
    s = ln_node(g, LUTHIER_OP_GATHER_ND, scores, t, &d, o);
    b = ln_node(g, LUTHIER_OP_GATHER_ND, boxes, t, &d, o);
    d.op = LUTHIER_OP_SOFTMAX;
    ln_refuse(g, &d, s, -1, "softmax does not take tensors with a run-time length", "softmax");
    d.op = LUTHIER_OP_CUMSUM;
    ln_refuse(g, &d, s, -1, "cumsum does not take tensors with a run-time length", "cumsum");
    { /* REDUCE reads a prefix: the run-time axis after a dimension other than 1 is refused */
        int bt;
        bt = ln_node(g, LUTHIER_OP_TRANSPOSE, b, -1, &d, o); /* perm NULL: reversed */
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_REDUCE;
        ln_refuse(g, &d, bt, -1, "after dimensions other than 1", "reduce of [4, n]");
    }
    d.op = LUTHIER_OP_ADD;
    ln_refuse(g, &d, s, cs, "known only at run time", "add of a static [12]");
    { /* a capacity of 1 broadcast against 12 */
        static const int64_t s1[1] = {1};
        int one_in, nz1, t1, s_1;
        luthier_graph_input(g, "one", LUTHIER_DTYPE_F32, 1, s1, &one_in);
        nz1 = ln_node(g, LUTHIER_OP_NONZERO, one_in, -1, &d, o);
        t1 = ln_node(g, LUTHIER_OP_TRANSPOSE, nz1, -1, &d, o);
        s_1 = ln_node(g, LUTHIER_OP_GATHER_ND, one_in, t1, &d, o);
        d.op = LUTHIER_OP_MUL;
        ln_refuse(g, &d, s_1, cs, "would broadcast along its run-time-length axis", "mul broadcasting a length of capacity 1");
    }
    d.op = LUTHIER_OP_RESHAPE, d.sizes = r34, d.num_sizes = 2;
    ln_refuse(g, &d, s, -1, "does not keep that axis whole", "reshape splitting the axis");
    d.op = LUTHIER_OP_GATHER;
    ln_refuse(g, &d, s, ci, "constant prefix", "gather of [1, 0] along the run-time axis");
    d.op = LUTHIER_OP_GATHER_ND;
    ln_refuse(g, &d, s, t, "has a run-time length (along axis 0)", "gather_nd from data with a run-time length");
    d.op = LUTHIER_OP_CONCAT, d.axis = 1;
    ln_refuse(g, &d, b, cb, "do not share one run-time length", "concat beside the run-time axis with a static input");
    d.op = LUTHIER_OP_NONZERO;
    ln_refuse(g, &d, s, -1, "nonzero does not take", "nonzero of a tensor with a run-time length");
    d.op = LUTHIER_OP_SPLIT, d.num_outputs = 2;
    ln_refuse(g, &d, b, -1, "along the split axis 0", "split along the run-time axis");
    luthier_graph_destroy(g);
}

/* tests/data/onnx/lengths.onnx (tests/onnx_lengths.py): each data set's outputs, with their
   lengths, against the numpy reference, at 1 and 2 threads. */
static void test_lengths_onnx(void) {
    char err[512], dir[512], msg[512];
    luthier_graph *g = NULL;
    int th, set;
    CHECK(luthier_onnx_load(ONNX_MODELS_DIR "/lengths.onnx", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "load: %s", err);
    for (th = 1; th <= 2 && g; th++)
        for (set = 0; set < 4; set++) {
            luthier_onnx_tensor ins[4], outs[4];
            luthier_context *ctx = ctx_threads(th);
            int nin, nout, j;
            double max_err = 0;
            snprintf(dir, sizeof dir, "%s/lengths/test_data_set_%d", ONNX_MODELS_DIR, set);
            nin = onnx_read_set(dir, "input", ins, 4);
            nout = onnx_read_set(dir, "output", outs, 4);
            CHECK(nin == 2 && nout == 3, "%s: data", dir);
            if (ctx && nin == 2 && nout == 3)
                CHECK(onnx_run_compare(ctx, g, NULL, ins, nin, outs, nout, 0, 0, &max_err, msg, sizeof msg) == 0,
                      "set %d (threads %d): %s", set, th, msg);
            for (j = 0; j < nin; j++) luthier_onnx_tensor_free(&ins[j]);
            for (j = 0; j < nout; j++) luthier_onnx_tensor_free(&outs[j]);
            luthier_context_destroy(ctx);
        }
    luthier_graph_destroy(g);
}

/* tests/data/onnx/lengths/refuse_*.onnx: a run-time length read where the loader cannot follow
   it is refused, naming the node and why; nothing leaks. */
static void test_lengths_onnx_refusals(void) {
    static const char *const cases[4][3] = {
        {"refuse_cast", "node 'y' (Cast)", "cannot follow it"},
        {"refuse_size", "node 'y' (Size)", "its size is not a constant"},
        {"refuse_slice", "node 'y' (Slice)", "slices only with start >= 0"},
        {"refuse_topk", "node 'y' (TopK)", "which is not x's"}};
    int k;
    for (k = 0; k < 4; k++) {
        char path[512], err[1024];
        luthier_graph *g = NULL;
        luthier_status s;
        snprintf(path, sizeof path, "%s/lengths/%s.onnx", ONNX_MODELS_DIR, cases[k][0]);
        s = luthier_onnx_load(path, NULL, &g, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_UNSUPPORTED && g == NULL && strstr(err, cases[k][1]) && strstr(err, cases[k][2]),
              "%s: status %d, message '%s'", cases[k][0], (int)s, err);
        luthier_graph_destroy(g);
    }
}


/* ---- REDUCE over a run-time length; ONNX If (tests/onnx_lengths.py, if_main) ------------------ */

/* The kind's reduction of v[0..n) by the ONNX definitions, in double: over nothing, max -inf, min
   +inf, sums 0, prod 1, mean 0/0, the logs log 0. */
static float ln_reduce_ref(int kind, const double *v, int64_t n) {
    double acc = kind == LUTHIER_REDUCE_MAX ? -INFINITY : kind == LUTHIER_REDUCE_MIN ? INFINITY : kind == LUTHIER_REDUCE_PROD ? 1 : 0;
    int64_t e;
    for (e = 0; e < n; e++) switch (kind) {
        case LUTHIER_REDUCE_MAX: acc = v[e] > acc ? v[e] : acc; break;
        case LUTHIER_REDUCE_MIN: acc = v[e] < acc ? v[e] : acc; break;
        case LUTHIER_REDUCE_PROD: acc *= v[e]; break;
        case LUTHIER_REDUCE_L1: acc += fabs(v[e]); break;
        case LUTHIER_REDUCE_L2: case LUTHIER_REDUCE_SUM_SQUARE: acc += v[e] * v[e]; break;
        case LUTHIER_REDUCE_LOG_SUM_EXP: acc += exp(v[e]); break;
        default: acc += v[e]; break;
        }
    switch (kind) {
    case LUTHIER_REDUCE_MEAN: return (float)(acc / (double)n);
    case LUTHIER_REDUCE_L2: return (float)sqrt(acc);
    case LUTHIER_REDUCE_LOG_SUM: case LUTHIER_REDUCE_LOG_SUM_EXP: return (float)log(acc);
    default: return (float)acc;
    }
}

static int ln_close(float got, float want) {
    if (want != want) return got != got;
    if (isinf(want)) return got == want;
    return fabsf(got - want) <= 1e-5f * (1.0f + fabsf(want));
}

/* Variant v of the reduction of b [n (run-time count), 4]: axes all / {0} / {1} / {-1}, keepdims
   v & 1. The expected output (want) with its length (-1: static). */
static void ln_reduce_want(int kind, int v, const float *b, int64_t cnt, int64_t cap, float *want, int64_t *len) {
    double vals[256];
    int64_t r, c, m = 0;
    const int ax = v >> 1;
    *len = -1;
    if (ax == 0) { /* every axis */
        for (r = 0; r < cnt; r++)
            for (c = 0; c < 4; c++) vals[m++] = b[r * 4 + c];
        want[0] = ln_reduce_ref(kind, vals, m);
    } else if (ax == 1) { /* the run-time axis: one value per column */
        for (c = 0; c < 4; c++) {
            for (r = 0; r < cnt; r++) vals[r] = b[r * 4 + c];
            want[c] = ln_reduce_ref(kind, vals, cnt);
        }
    } else { /* the columns: one value per valid row, zeros after them */
        for (r = 0; r < cap; r++) {
            for (c = 0; c < 4; c++) vals[c] = b[r * 4 + c];
            want[r] = r < cnt ? ln_reduce_ref(kind, vals, 4) : 0.0f;
        }
        *len = cnt;
    }
}

/* boxes [cap, 4] and scores [cap] -> the boxes of the scores above thr (NONZERO, TRANSPOSE,
   GATHER_ND) -> REDUCE of kind in the 8 variants of ln_reduce_want, each a graph output. */
static void ln_reduce_case(int threads, int kind, int64_t cap, float thr, const char *what) {
    const int64_t bs[2] = {cap, 4}, ss[1] = {cap}, one[1] = {1};
    luthier_context *ctx = ctx_threads(threads);
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc d;
    float boxes[256], scores[64], kept[256], outs[8][64], want[64];
    void *optr[8];
    const void *ins[2];
    int xb, xs, tc, t, o[2], v, ok = 1;
    int64_t cnt = 0, e, len, glen;
    for (e = 0; e < cap; e++) {
        int c;
        scores[e] = (float)(test_rand_u64() % 100) / 100.0f;
        for (c = 0; c < 4; c++) boxes[e * 4 + c] = 0.1f + (float)(test_rand_u64() % 190) / 100.0f;
        if (scores[e] > thr) memcpy(kept + cnt++ * 4, boxes + e * 4, 4 * sizeof(float));
    }
    luthier_graph_create(&g);
    luthier_graph_input(g, "boxes", LUTHIER_DTYPE_F32, 2, bs, &xb);
    luthier_graph_input(g, "scores", LUTHIER_DTYPE_F32, 1, ss, &xs);
    luthier_graph_constant(g, "thr", 1, one, &thr, 1, &tc);
    memset(&d, 0, sizeof d);
    t = ln_node(g, LUTHIER_OP_GREATER, xs, tc, &d, o);
    t = ln_node(g, LUTHIER_OP_NONZERO, t, -1, &d, o);
    t = ln_node(g, LUTHIER_OP_TRANSPOSE, t, -1, &d, o);
    t = ln_node(g, LUTHIER_OP_GATHER_ND, xb, t, &d, o);
    for (v = 0; v < 8 && t >= 0; v++) {
        memset(&d, 0, sizeof d);
        d.typed = 1, luthier_node_attrs_default(LUTHIER_OP_REDUCE, &d.attr);
        d.attr.reduce.kind = (luthier_reduce_kind)kind, d.attr.reduce.keepdims = v & 1;
        d.attr.reduce.num_axes = v >> 1 ? 1 : 0, d.attr.reduce.axes[0] = v >> 1 == 3 ? -1 : (v >> 1) - 1;
        ok &= ln_node(g, LUTHIER_OP_REDUCE, t, -1, &d, o) >= 0 && luthier_graph_output(g, o[0]) == LUTHIER_STATUS_OK;
        optr[v] = outs[v];
    }
    ins[0] = boxes, ins[1] = scores;
    if (!ok || t < 0 || !ctx || luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) {
        CHECK(0, "%s: graph or plan: %s", what, ctx ? luthier_context_error(ctx) : "no context");
    } else if (luthier_plan_run(ctx, p, ins, optr) != LUTHIER_STATUS_OK) {
        CHECK(0, "%s: run: %s", what, luthier_context_error(ctx));
    } else {
        for (v = 0; v < 8; v++) {
            luthier_tensor_info ti;
            int axis = -2, bad = 0;
            int64_t n = 1;
            ln_reduce_want(kind, v, kept, cnt, cap, want, &len);
            luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, v), &ti);
            for (e = 0; e < ti.rank; e++) n *= ti.shape[e];
            luthier_plan_output_length(p, v, &axis, &glen);
            CHECK(glen == len && axis == (len < 0 ? -1 : 0), "%s (threads %d) variant %d: length %lld along %d, want %lld", what,
                  threads, v, (long long)glen, axis, (long long)len);
            for (e = 0; e < n; e++) bad += !ln_close(outs[v][e], want[e]);
            CHECK(bad == 0, "%s (threads %d) variant %d (count %lld): %d wrong, first %g want %g", what, threads, v, (long long)cnt,
                  bad, (double)outs[v][0], (double)want[0]);
        }
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
}

/* Every kind; counts 0, 1, some and all of 1, 7 and 40 rows. */
static void test_lengths_reduce(void) {
    static const int64_t caps[3] = {1, 7, 40};
    static const float thrs[3] = {2.0f, 0.5f, -1.0f};
    int th, kind, ci, ti;
    for (th = 1; th <= 2; th++)
        for (kind = 0; kind < LUTHIER_REDUCE_KIND_COUNT; kind++)
            for (ci = 0; ci < 3; ci++)
                for (ti = 0; ti < 3; ti++) {
                    char what[96];
                    snprintf(what, sizeof what, "reduce kind %d cap %lld thr %g", kind, (long long)caps[ci], (double)thrs[ti]);
                    ln_reduce_case(th, kind, caps[ci], thrs[ti], what);
                }
}

/* Model path under tests/data/onnx/lengths, its data sets dir/<set>_<k>: each against its
   reference outputs (with their lengths) at 1 and 2 threads. */
static void ln_onnx_sets(const char *model, const char *set, int nsets, int nin, int nout) {
    char err[1024], dir[512], msg[512], path[512];
    luthier_graph *g = NULL;
    int th, k;
    snprintf(path, sizeof path, "%s/lengths/%s", ONNX_MODELS_DIR, model);
    CHECK(luthier_onnx_load(path, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: load: %s", model, err);
    for (th = 1; th <= 2 && g; th++)
        for (k = 0; k < nsets; k++) {
            luthier_onnx_tensor ins[4], outs[4];
            luthier_context *ctx = ctx_threads(th);
            int gi, go, j;
            double max_err = 0;
            if (nsets > 1) snprintf(dir, sizeof dir, "%s/lengths/%s_%d", ONNX_MODELS_DIR, set, k);
            else snprintf(dir, sizeof dir, "%s/lengths/%s", ONNX_MODELS_DIR, set);
            gi = onnx_read_set(dir, "input", ins, 4);
            go = onnx_read_set(dir, "output", outs, 4);
            CHECK(gi == nin && go == nout, "%s: data", dir);
            if (ctx && gi == nin && go == nout)
                CHECK(onnx_run_compare(ctx, g, NULL, ins, gi, outs, go, 0, 0, &max_err, msg, sizeof msg) == 0, "%s on %s (threads %d): %s",
                      model, dir, th, msg);
            for (j = 0; j < gi; j++) luthier_onnx_tensor_free(&ins[j]);
            for (j = 0; j < go; j++) luthier_onnx_tensor_free(&outs[j]);
            luthier_context_destroy(ctx);
        }
    luthier_graph_destroy(g);
}

/* batched NMS under `if boxes.numel() == 0` in both of torch's spellings (0, 1, 12 and 16 boxes
   kept); Ifs whose conditions fold, nested, reading outer values and a branch initializer. */
static void test_lengths_if(void) {
    ln_onnx_sets("if_nms.onnx", "if_set", 4, 3, 4);
    ln_onnx_sets("if_nms_size.onnx", "if_set", 4, 3, 4);
    ln_onnx_sets("if_const.onnx", "if_const_set", 1, 1, 3);
}

/* lengths/if_*.onnx that the loader refuses: the status and a message naming the problem. */
static void test_lengths_if_refusals(void) {
    static const struct {
        const char *model;
        luthier_status st;
        const char *want[2];
    } cases[7] = {
        {"if_runtime", LUTHIER_STATUS_UNSUPPORTED, {"node 'the_if' (If)", "the condition 'pos' is known only at run time"}},
        {"if_no_else", LUTHIER_STATUS_INVALID_ARGUMENT, {"node 'the_if' (If)", "If has no else_branch"}},
        {"if_outputs", LUTHIER_STATUS_INVALID_ARGUMENT, {"node 'the_if' (If)", "then_branch gives 2 outputs, the node has 1"}},
        {"if_deep", LUTHIER_STATUS_UNSUPPORTED, {"subgraphs nest deeper than 16 levels", ""}},
        {"if_numel_then", LUTHIER_STATUS_UNSUPPORTED, {"numel('s') == 0 is known only at run time", "is not an empty constant"}},
        {"if_shadow", LUTHIER_STATUS_INVALID_ARGUMENT, {"node 'the_if' (If)", "defines 'taken', which is already a value"}},
        {"if_dangling", LUTHIER_STATUS_INVALID_ARGUMENT, {"node 'the_if' (If)", "input 'nowhere' is dangling"}}};
    int k;
    for (k = 0; k < 7; k++) {
        char path[512], err[1024];
        luthier_graph *g = NULL;
        luthier_status s;
        snprintf(path, sizeof path, "%s/lengths/%s.onnx", ONNX_MODELS_DIR, cases[k].model);
        s = luthier_onnx_load(path, NULL, &g, err, sizeof err);
        CHECK(s == cases[k].st && g == NULL && strstr(err, cases[k].want[0]) && strstr(err, cases[k].want[1]),
              "%s: status %d, message '%s'", cases[k].model, (int)s, err);
        luthier_graph_destroy(g);
    }
}

/* The random stream is put back afterwards: the suites that follow draw the data they drew
   before these tests existed. */
static void run_lengths_tests(void) {
    const uint64_t stream = test_rng_state;
    RUN(test_lengths_nonzero);
    RUN(test_lengths_chain);
    RUN(test_lengths_refusals);
    RUN(test_lengths_onnx);
    RUN(test_lengths_onnx_refusals);
    RUN(test_lengths_reduce);
    RUN(test_lengths_if);
    RUN(test_lengths_if_refusals);
    test_rng_state = stream;
}
