/* Index operators (ARGMAX, ARGMIN, TOPK, CUMSUM, TRILU, NON_MAX_SUPPRESSION) and luthier_nms:
   every plan against a naive reference written from the ONNX specification, at 1 and 2
   threads; ONNX loader mappings; refusals. */

static float ix_val(int ties, int nans) {
    if (nans && test_rand_u64() % 9 == 0) return NAN;
    if (ties) { /* 0 comes as -0 or +0, which are equal */
        const float v = (float)(test_rand_u64() % 4);
        return v == 0 && test_rand_u64() % 2 ? -0.0f : v;
    }
    return (float)(test_rand_u64() % 20001) / 1000.0f - 10.0f;
}

/* outer, len, inner of shape around axis */
static void ix_split(int rank, const int64_t *s, int axis, size_t *outer, size_t *len, size_t *inner) {
    int k;
    *outer = *inner = 1;
    for (k = 0; k < axis; k++) *outer *= (size_t)s[k];
    for (k = axis + 1; k < rank; k++) *inner *= (size_t)s[k];
    *len = (size_t)s[axis];
}

/* One node on graph input x [rank, s]; its outputs (nout) become graph outputs; runs on ctx
   twice (no allocation in the runs) into outs. Returns 0 when something is refused. */
static int ix_run(luthier_context *ctx, luthier_node_desc *d, int rank, const int64_t *s, const float *x, int nout,
                  void *const *outs, const char *what) {
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    int xt, o[4], k, ok = 0;
    const void *ins[1];
    ins[0] = x;
    luthier_graph_create(&g);
    if (luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, rank, s, &xt) == LUTHIER_STATUS_OK) {
        d->inputs = &xt;
        d->num_inputs = 1;
        if (luthier_graph_add_node(g, d, o) != LUTHIER_STATUS_OK) {
            CHECK(0, "%s: add_node: %s", what, luthier_graph_error(g));
        } else {
            for (k = 0; k < nout; k++) luthier_graph_output(g, o[k]);
            if (luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) {
                CHECK(0, "%s: plan: %s", what, luthier_context_error(ctx));
            } else {
                size_t before;
                ok = luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK;
                before = test_luthier_allocs;
                ok = ok && luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK;
                CHECK(test_luthier_allocs == before, "%s: plan_run allocated", what);
                CHECK(ok, "%s: run: %s", what, luthier_context_error(ctx));
            }
        }
    }
    d->inputs = NULL;
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    return ok;
}

static const int ix_ranks[6] = {1, 2, 3, 4, 5, 6};
static const int64_t ix_shapes[6][6] = {{7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 5}, {1, 2, 3, 1, 2}, {2, 1, 2, 1, 3, 2}};

/* ArgMax/ArgMin from the spec: a NaN is the extreme (numpy, torch); else the extreme value;
   then its first (last with select_last_index) position. */
static int64_t ix_ref_arg(const float *x, size_t len, size_t st, int is_min, int last) {
    size_t j;
    int64_t pos = -1;
    double m = is_min ? INFINITY : -INFINITY;
    int nan = 0;
    for (j = 0; j < len; j++) nan |= x[j * st] != x[j * st];
    for (j = 0; j < len && !nan; j++) m = is_min ? (x[j * st] < m ? x[j * st] : m) : (x[j * st] > m ? x[j * st] : m);
    for (j = 0; j < len; j++) {
        const int hit = nan ? x[j * st] != x[j * st] : x[j * st] == m;
        if (hit && (pos < 0 || last)) pos = (int64_t)j;
    }
    return pos;
}

static void test_index_argmax(void) {
    int th, si, ax, op, kd, last, data;
    for (th = 1; th <= 2; th++) {
        luthier_context *ctx = ctx_threads(th);
        for (si = 0; si < 6 && ctx; si++) {
            const int rank = ix_ranks[si];
            const int64_t *s = ix_shapes[si];
            size_t n = 1, e, outer, len, inner, o, i;
            float *x;
            int64_t *y;
            for (e = 0; e < (size_t)rank; e++) n *= (size_t)s[e];
            x = (float *)malloc(n * 4);
            y = (int64_t *)malloc(n * 8 + 8);
            for (ax = -rank; ax < rank; ax++)
                for (data = 0; data < 3; data++) {
                    for (e = 0; e < n; e++) x[e] = ix_val(data > 0, data == 2);
                    ix_split(rank, s, ax < 0 ? ax + rank : ax, &outer, &len, &inner);
                    for (op = 0; op < 2; op++)
                        for (kd = 0; kd < 2; kd++)
                            for (last = 0; last < 2; last++) {
                                luthier_node_desc d;
                                void *outs[1];
                                char what[192];
                                luthier_argmax_attrs *a;
                                long bad = 0;
                                memset(&d, 0, sizeof d);
                                d.op = op ? LUTHIER_OP_ARGMIN : LUTHIER_OP_ARGMAX;
                                d.typed = 1;
                                luthier_node_attrs_default(d.op, &d.attr);
                                a = op ? &d.attr.argmin : &d.attr.argmax;
                                a->axis = ax, a->keepdims = kd, a->select_last_index = last;
                                snprintf(what, sizeof what, "%s rank %d axis %d data %d keepdims %d last %d threads %d",
                                         op ? "argmin" : "argmax", rank, ax, data, kd, last, th);
                                outs[0] = y;
                                if (!ix_run(ctx, &d, rank, s, x, 1, outs, what)) continue;
                                for (o = 0; o < outer; o++)
                                    for (i = 0; i < inner; i++)
                                        bad += y[o * inner + i] != ix_ref_arg(x + o * len * inner + i, len, inner, op, last);
                                CHECK(bad == 0, "%s: %ld wrong positions", what, bad);
                            }
                }
            free(x);
            free(y);
        }
        luthier_context_destroy(ctx);
    }
}

/* TopK from the spec: k times, the best element not yet taken (larger, or smaller, first; NaN
   above every number; equal values: the lower index, as the scan keeps the first). */
static int ix_ref_better(float a, float b, int largest) {
    const int an = a != a, bn = b != b;
    if (an != bn) return largest ? an : bn;
    if (an) return 0;
    return largest ? a > b : a < b;
}

static void ix_ref_topk(const float *x, size_t len, size_t st, size_t k, int largest, float *v, int64_t *ix, size_t ost,
                        char *taken) {
    size_t t, j;
    memset(taken, 0, len);
    for (t = 0; t < k; t++) {
        size_t best = len;
        for (j = 0; j < len; j++)
            if (!taken[j] && (best == len || ix_ref_better(x[j * st], x[best * st], largest))) best = j;
        taken[best] = 1;
        v[t * ost] = x[best * st];
        ix[t * ost] = (int64_t)best;
    }
}

/* x [rank, s] along axis: k values, both orders, checked against ix_ref_topk */
static void ix_topk_case(luthier_context *ctx, int rank, const int64_t *s, int ax, int64_t k, int largest, const float *x,
                         const char *tag) {
    size_t outer, len, inner, o, i, n = 1, e;
    float *v, *rv;
    int64_t *ix, *ri, os[LUTHIER_MAX_RANK];
    char *taken, what[256];
    void *outs[2];
    luthier_node_desc d;
    long bad = 0;
    int q;
    ix_split(rank, s, ax < 0 ? ax + rank : ax, &outer, &len, &inner);
    for (q = 0; q < rank; q++) os[q] = s[q];
    os[ax < 0 ? ax + rank : ax] = k;
    for (q = 0; q < rank; q++) n *= (size_t)os[q];
    v = (float *)malloc(n * 4), rv = (float *)malloc(n * 4);
    ix = (int64_t *)malloc(n * 8), ri = (int64_t *)malloc(n * 8);
    taken = (char *)malloc(len);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_TOPK;
    d.typed = 1;
    luthier_node_attrs_default(d.op, &d.attr);
    d.attr.topk.k = k, d.attr.topk.axis = ax, d.attr.topk.largest = largest;
    snprintf(what, sizeof what, "topk %s rank %d axis %d k %lld largest %d", tag, rank, ax, (long long)k, largest);
    outs[0] = v, outs[1] = ix;
    if (ix_run(ctx, &d, rank, s, x, 2, outs, what)) {
        for (o = 0; o < outer; o++)
            for (i = 0; i < inner; i++)
                ix_ref_topk(x + o * len * inner + i, len, inner, (size_t)k, largest, rv + o * (size_t)k * inner + i,
                            ri + o * (size_t)k * inner + i, inner, taken);
        for (e = 0; e < n; e++)
            bad += ix[e] != ri[e] || (v[e] != rv[e] && !(v[e] != v[e] && rv[e] != rv[e]));
        CHECK(bad == 0, "%s: %ld wrong elements", what, bad);
    }
    free(v), free(rv), free(ix), free(ri), free(taken);
}

static void test_index_topk(void) {
    int th, si, ax, largest, data;
    for (th = 1; th <= 2; th++) {
        luthier_context *ctx = ctx_threads(th);
        char tag[64];
        for (si = 0; si < 6 && ctx; si++) {
            const int rank = ix_ranks[si];
            const int64_t *s = ix_shapes[si];
            size_t n = 1, e;
            float *x;
            for (e = 0; e < (size_t)rank; e++) n *= (size_t)s[e];
            x = (float *)malloc(n * 4);
            for (ax = -rank; ax < rank; ax++)
                for (data = 0; data < 3; data++) {
                    const int64_t len = s[ax < 0 ? ax + rank : ax];
                    int64_t ks[3];
                    int kk;
                    ks[0] = 1, ks[1] = len > 2 ? 2 : len, ks[2] = len;
                    for (e = 0; e < n; e++) x[e] = ix_val(data > 0, data == 2);
                    snprintf(tag, sizeof tag, "data %d threads %d", data, th);
                    for (largest = 0; largest < 2; largest++)
                        for (kk = 0; kk < 3; kk++) ix_topk_case(ctx, rank, s, ax, ks[kk], largest, x, tag);
                }
            free(x);
        }
        { /* long rows: the heap against the full sort */
            static const int64_t s[2] = {3, 1000}, s2[2] = {1000, 3};
            float *x = (float *)malloc(3000 * 4);
            size_t e;
            for (e = 0; e < 3000; e++) x[e] = ix_val(e % 2 == 0, e % 3 == 0);
            snprintf(tag, sizeof tag, "long threads %d", th);
            for (largest = 0; largest < 2 && ctx; largest++) {
                ix_topk_case(ctx, 2, s, 1, 5, largest, x, tag);
                ix_topk_case(ctx, 2, s, 1, 1000, largest, x, tag);
                ix_topk_case(ctx, 2, s2, 0, 37, largest, x, tag);
            }
            free(x);
        }
        luthier_context_destroy(ctx);
    }
}

/* The CUMSUM kernel on long rows (inner 1: blocks of 8 in registers and the remainders; every
   length 1..67) and wide inner strides (column groups of 16 and the remainders, several outer slices), every exclusive /
   reverse, in place too, 1 and 2 threads: against the spec's sums taken one by one in double,
   within 1e-6 of the absolute sum so far (a float rounding of the running total is 6e-8 of it). */
static void test_index_cumsum_long(void) {
    static const size_t shp[][3] = {{1, 1000, 1}, {3, 37, 1}, {4, 8, 1}, {2, 15, 1}, {1, 1, 1}, {2, 50, 17},
                                    {1, 9, 40},   {5, 3, 33}, {3, 20, 16}, {1, 1, 5}, {2, 7, 3}};
    const unsigned nshp = sizeof shp / sizeof shp[0];
    int th, ex, rev, inplace;
    unsigned si;
    for (th = 1; th <= 2; th++) {
        luthier_context *ctx = ctx_threads(th);
        for (si = 0; si < nshp + 2 * 67 && ctx; si++) { /* then rows of every length 1..67 (1 and 3 of them) */
            const size_t outer = si < nshp ? shp[si][0] : (si - nshp) % 2 ? 3 : 1;
            const size_t len = si < nshp ? shp[si][1] : (si - nshp) / 2 + 1, inner = si < nshp ? shp[si][2] : 1;
            const size_t n = outer * len * inner;
            float *x = (float *)test_alloc(n * 4), *y = (float *)test_alloc(n * 4);
            size_t e, o, i, j;
            for (e = 0; e < n; e++) x[e] = test_rand_float() * (e % 5 == 0 ? 100.0f : 1.0f);
            for (ex = 0; ex < 2; ex++)
                for (rev = 0; rev < 2; rev++)
                    for (inplace = 0; inplace < 2; inplace++) {
                        long bad = 0;
                        if (inplace) memcpy(y, x, n * 4);
                        CHECK(luthier__op_cumsum(ctx, NULL, inplace ? y : x, y, outer, len, inner, ex, rev) == LUTHIER_STATUS_OK, "status");
                        for (o = 0; o < outer; o++)
                            for (i = 0; i < inner; i++) {
                                double acc = 0, mag = 0;
                                for (j = 0; j < len; j++) {
                                    const size_t q = rev ? len - 1 - j : j, at = (o * len + q) * inner + i;
                                    double want;
                                    if (!ex) acc += x[at], mag += fabs(x[at]);
                                    want = acc;
                                    if (ex) acc += x[at], mag += fabs(x[at]);
                                    if (!(fabs(y[at] - want) <= 1e-6 * mag + 1e-30) && bad++ < 3)
                                        CHECK(0, "cumsum %zux%zux%zu exclusive %d reverse %d in place %d threads %d [%zu][%zu][%zu]: %.9g, expected %.9g",
                                              outer, len, inner, ex, rev, inplace, th, o, q, i, (double)y[at], want);
                                }
                            }
                        CHECK(bad == 0, "cumsum %zux%zux%zu: %ld wrong", outer, len, inner, bad);
                    }
            free(x), free(y);
        }
        luthier_context_destroy(ctx);
    }
}

/* One row of CUMSUM against the sums taken one by one in double: within half an ulp of the
   result plus 1e-12 of the absolute sum so far. The kernels carry their sums in double, so the
   only rounding that shows is the final one to float (a sum carried in float misses by ulps). */
static long ix_cumsum_row_check(const float *x, const float *y, size_t len, int ex, int rev, const char *what) {
    double acc = 0, mag = 0;
    long bad = 0;
    size_t j;
    for (j = 0; j < len; j++) {
        const size_t q = rev ? len - 1 - j : j;
        double want;
        if (!ex) acc += x[q], mag += fabs(x[q]);
        want = acc;
        if (ex) acc += x[q], mag += fabs(x[q]);
        if (!(fabs(y[q] - want) <= 0x1p-24 * fabs(want) + 1e-12 * mag) && bad++ < 3)
            CHECK(0, "%s len %zu exclusive %d reverse %d [%zu]: %.9g, expected %.17g", what, len, ex, rev, q, (double)y[q], want);
    }
    return bad;
}

/* CUMSUM's row kernels at every ISA of the CPU (AVX2 and AVX-512: blocks of 8 in vectors of 4
   doubles, two per step; the baseline's blocks of 8 in vectors of 2; the tails in sequence), with
   AVX-512 and AVX2 masked off in turn: the operator at 1 and 2
   threads on 3 rows (in place too), and the row kernel itself with plain and streaming stores at
   4 alignments of x and y, every exclusive / reverse, lengths 1..70 and long ones, magnitudes
   mixed (1 and 1e4), against ix_cumsum_row_check. */
static void test_index_cumsum_isa(void) {
    static const unsigned masks[3] = {0, LUTHIER_CPU_AVX512F, LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA};
    static const char *names[3] = {"native", "no avx512", "baseline"};
    const size_t maxlen = 4099, nlen = 70 + 5;
    float *xa = (float *)test_alloc((3 * maxlen + 32) * 4), *ya = (float *)test_alloc((3 * maxlen + 32) * 4);
    float *x = xa + (16 - ((uintptr_t)xa / 4) % 16) % 16, *y = ya + (16 - ((uintptr_t)ya / 4) % 16) % 16; /* 64-byte aligned */
    size_t e, li;
    int mi, th, ex, rev;
    for (e = 0; e < 3 * maxlen + 16; e++) x[e] = test_rand_float() * (e % 7 == 3 ? 1e4f : 1.0f);
    for (mi = 0; mi < 3; mi++)
        for (th = 1; th <= 2; th++) {
            luthier_context_desc cd;
            luthier_context *ctx = NULL;
            memset(&cd, 0, sizeof cd);
            cd.num_threads = th, cd.disabled_cpu_features = masks[mi];
            CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
            if (ctx) { /* the step's label: the row kernel that runs */
                const char *want = LUTHIER__SIMD_NEON                         ? "neon"
                                   : !LUTHIER__SIMD_X86                       ? "scalar"
                                   : ctx->cpu_features & LUTHIER_CPU_AVX2_FMA ? "avx2"
                                                                              : "sse2";
                const char *got = luthier__isa_name(luthier__op_cumsum_isa(ctx->cpu_features));
                CHECK(!strcmp(got, want), "cumsum %s: isa %s, want %s", names[mi], got, want);
            }
            for (li = 0; li < nlen && ctx; li++) {
                static const size_t longs[5] = {127, 128, 129, 1000, 4099};
                const size_t len = li < 70 ? li + 1 : longs[li - 70];
                char what[96];
                for (ex = 0; ex < 2; ex++)
                    for (rev = 0; rev < 2; rev++) {
                        size_t r, off;
                        int inplace, nt;
                        for (inplace = 0; inplace < 2; inplace++) { /* the operator, 3 rows */
                            if (inplace) memcpy(y, x, 3 * len * 4);
                            CHECK(luthier__op_cumsum(ctx, NULL, inplace ? y : x, y, 3, len, 1, ex, rev) == LUTHIER_STATUS_OK, "status");
                            snprintf(what, sizeof what, "cumsum %s threads %d in place %d", names[mi], th, inplace);
                            for (r = 0; r < 3; r++) ix_cumsum_row_check(x + r * len, y + r * len, len, ex, rev, what);
                        }
                        for (nt = 0; nt < 2 && th == 1; nt++) /* the row kernel */
                            for (off = 0; off < 4; off++) {
                                luthier__op_cumsum_row(x + off, y + 3 * off, len, ex, rev, ctx->cpu_features, nt);
                                snprintf(what, sizeof what, "cumsum row %s streaming %d offset %zu", names[mi], nt, off);
                                ix_cumsum_row_check(x + off, y + 3 * off, len, ex, rev, what);
                            }
                    }
            }
            luthier_context_destroy(ctx);
        }
    free(xa), free(ya);
}

static void test_index_cumsum_trilu(void) {
    int th, si, ax, ex, rev;
    for (th = 1; th <= 2; th++) {
        luthier_context *ctx = ctx_threads(th);
        for (si = 0; si < 6 && ctx; si++) {
            const int rank = ix_ranks[si];
            const int64_t *s = ix_shapes[si];
            size_t n = 1, e, outer, len, inner, o, i, j;
            float *x, *y;
            for (e = 0; e < (size_t)rank; e++) n *= (size_t)s[e];
            x = (float *)malloc(n * 4), y = (float *)malloc(n * 4);
            for (e = 0; e < n; e++) x[e] = ix_val(0, 0);
            for (ax = -rank; ax < rank; ax++)
                for (ex = 0; ex < 2; ex++)
                    for (rev = 0; rev < 2; rev++) {
                        luthier_node_desc d;
                        void *outs[1];
                        char what[192];
                        double worst = 0;
                        memset(&d, 0, sizeof d);
                        d.op = LUTHIER_OP_CUMSUM, d.typed = 1;
                        d.attr.cumsum.axis = ax, d.attr.cumsum.exclusive = ex, d.attr.cumsum.reverse = rev;
                        snprintf(what, sizeof what, "cumsum rank %d axis %d exclusive %d reverse %d threads %d", rank, ax, ex, rev, th);
                        outs[0] = y;
                        if (!ix_run(ctx, &d, rank, s, x, 1, outs, what)) continue;
                        ix_split(rank, s, ax < 0 ? ax + rank : ax, &outer, &len, &inner);
                        for (o = 0; o < outer; o++)
                            for (i = 0; i < inner; i++)
                                for (j = 0; j < len; j++) { /* the spec's sum over the window of j */
                                    double want = 0;
                                    size_t q;
                                    for (q = 0; q < len; q++)
                                        if (rev ? (ex ? q > j : q >= j) : (ex ? q < j : q <= j)) want += x[(o * len + q) * inner + i];
                                    if (fabs(y[(o * len + j) * inner + i] - want) > worst) worst = fabs(y[(o * len + j) * inner + i] - want);
                                }
                        CHECK(worst < 1e-4, "%s: max |diff| %g", what, worst);
                    }
            free(x), free(y);
        }
        { /* trilu over rank 2..4, square and not, diagonals inside and outside */
            static const int64_t ts[4][4] = {{4, 4}, {3, 5}, {2, 5, 3}, {2, 1, 3, 4}};
            static const int trk[4] = {2, 2, 3, 4};
            static const int64_t kd[7] = {-7, -2, -1, 0, 1, 3, 9};
            int t, u, kq;
            for (t = 0; t < 4 && ctx; t++) {
                size_t n = 1, e;
                float x[96], y[96];
                const int r = trk[t];
                for (e = 0; e < (size_t)r; e++) n *= (size_t)ts[t][e];
                for (e = 0; e < n; e++) x[e] = ix_val(0, e % 7 == 3);
                for (u = 0; u < 2; u++)
                    for (kq = 0; kq < 7; kq++) {
                        luthier_node_desc d;
                        void *outs[1];
                        char what[192];
                        long bad = 0;
                        const int64_t rows = ts[t][r - 2], cols = ts[t][r - 1];
                        memset(&d, 0, sizeof d);
                        d.op = LUTHIER_OP_TRILU, d.typed = 1;
                        d.attr.trilu.upper = u, d.attr.trilu.k = kd[kq];
                        snprintf(what, sizeof what, "trilu shape %d upper %d k %lld threads %d", t, u, (long long)kd[kq], th);
                        outs[0] = y;
                        if (!ix_run(ctx, &d, r, ts[t], x, 1, outs, what)) continue;
                        for (e = 0; e < n; e++) {
                            const int64_t rr = (int64_t)(e / (size_t)cols % (size_t)rows), cc = (int64_t)(e % (size_t)cols);
                            const int keep = u ? cc >= rr + kd[kq] : cc <= rr + kd[kq];
                            const float want = keep ? x[e] : 0.0f;
                            bad += !(y[e] == want || (y[e] != y[e] && want != want));
                        }
                        CHECK(bad == 0, "%s: %ld wrong elements", what, bad);
                    }
            }
        }
        luthier_context_destroy(ctx);
    }
}

/* ---- non-maximum suppression -------------------------------------------------------------- */

/* The ONNX reference's suppress_by_iou, written out again (f32, Python's max/min). */
static float ix_pmax(float a, float b) { return b > a ? b : a; }
static float ix_pmin(float a, float b) { return b < a ? b : a; }
static int ix_ref_suppress(const float *b1, const float *b2, int center, float thr) {
    float x1a, x1b, x2a, x2b, y1a, y1b, y2a, y2b, ixa, ixb, iya, iyb, inter, a1, a2, un;
    if (!center) {
        x1a = b1[1] >= b1[3] ? b1[3] : b1[1], x1b = b1[1] >= b1[3] ? b1[1] : b1[3];
        x2a = b2[1] >= b2[3] ? b2[3] : b2[1], x2b = b2[1] >= b2[3] ? b2[1] : b2[3];
        y1a = b1[0] >= b1[2] ? b1[2] : b1[0], y1b = b1[0] >= b1[2] ? b1[0] : b1[2];
        y2a = b2[0] >= b2[2] ? b2[2] : b2[0], y2b = b2[0] >= b2[2] ? b2[0] : b2[2];
    } else {
        x1a = b1[0] - b1[2] / 2, x1b = b1[0] + b1[2] / 2, x2a = b2[0] - b2[2] / 2, x2b = b2[0] + b2[2] / 2;
        y1a = b1[1] - b1[3] / 2, y1b = b1[1] + b1[3] / 2, y2a = b2[1] - b2[3] / 2, y2b = b2[1] + b2[3] / 2;
    }
    ixa = ix_pmax(x1a, x2a), ixb = ix_pmin(x1b, x2b);
    if (ixb <= ixa) return 0;
    iya = ix_pmax(y1a, y2a), iyb = ix_pmin(y1b, y2b);
    if (iyb <= iya) return 0;
    inter = (ixb - ixa) * (iyb - iya);
    if (inter <= 0) return 0;
    a1 = (x1b - x1a) * (y1b - y1a);
    a2 = (x2b - x2a) * (y2b - y2a);
    un = a1 + a2 - inter;
    if (a1 <= 0 || a2 <= 0 || un <= 0) return 0;
    return inter / un > thr;
}

/* The reference's loop: candidates (score > threshold when given; NaN scores left out), the
   best remaining first (higher score, then lower index), selected unless suppressed. Returns
   the count; rows into sel. */
static int64_t ix_ref_nms(const float *boxes, const float *scores, int64_t B, int64_t C, int64_t N, const luthier_nms_attrs *a,
                          int64_t *sel) {
    int64_t b, c, cnt = 0, t, q;
    char *used = (char *)malloc((size_t)N + 1);
    int64_t *kept = (int64_t *)malloc(sizeof(int64_t) * ((size_t)N + 1));
    for (b = 0; b < B; b++)
        for (c = 0; c < C; c++) {
            const float *sc = scores + (b * C + c) * N;
            int64_t nk = 0;
            for (t = 0; t < N; t++) used[t] = sc[t] != sc[t] || (a->use_score_threshold && !(sc[t] > a->score_threshold));
            while (nk < a->max_output_boxes_per_class) {
                int64_t best = -1;
                for (t = 0; t < N; t++)
                    if (!used[t] && (best < 0 || sc[t] > sc[best])) best = t;
                if (best < 0) break;
                used[best] = 1;
                for (q = 0; q < nk; q++)
                    if (ix_ref_suppress(boxes + (b * N + best) * 4, boxes + (b * N + kept[q]) * 4, a->center_point_box, a->iou_threshold))
                        break;
                if (q < nk) continue;
                kept[nk++] = best;
                sel[cnt * 3] = b, sel[cnt * 3 + 1] = c, sel[cnt * 3 + 2] = best;
                cnt++;
            }
        }
    free(used);
    free(kept);
    return cnt;
}

/* luthier_nms against ix_ref_nms; returns the count. */
static int64_t ix_nms_check(const float *boxes, const float *scores, int64_t B, int64_t C, int64_t N, const luthier_nms_attrs *a,
                            const char *what) {
    const int64_t cap = B * C * N + 1;
    int64_t *got = (int64_t *)malloc(sizeof(int64_t) * (size_t)cap * 3), *want = (int64_t *)malloc(sizeof(int64_t) * (size_t)cap * 3);
    int64_t count = -5, rc, e;
    luthier_status s = luthier_nms(boxes, scores, B, C, N, a, got, cap, &count, NULL);
    long bad = 0;
    rc = ix_ref_nms(boxes, scores, B, C, N, a, want);
    CHECK(s == LUTHIER_STATUS_OK && count == rc, "%s: status %d, count %lld, want %lld", what, (int)s, (long long)count, (long long)rc);
    for (e = 0; e < cap * 3; e++) bad += got[e] != (e < rc * 3 ? want[e] : -1);
    CHECK(bad == 0, "%s: %ld wrong values", what, bad);
    if (rc > 0) { /* a smaller buffer: the first rows, OVERFLOW, the full count */
        s = luthier_nms(boxes, scores, B, C, N, a, got, rc - 1, &count, NULL);
        CHECK(s == LUTHIER_STATUS_OVERFLOW && count == rc, "%s: capacity %lld: status %d count %lld", what, (long long)(rc - 1),
              (int)s, (long long)count);
        for (e = 0, bad = 0; e < (rc - 1) * 3; e++) bad += got[e] != want[e];
        CHECK(bad == 0, "%s: truncated rows differ", what);
    }
    free(got);
    free(want);
    return rc;
}

static void test_index_nms_random(void) {
    int seed;
    for (seed = 0; seed < 300; seed++) {
        const int64_t B = 1 + (int64_t)(test_rand_u64() % 2), C = 1 + (int64_t)(test_rand_u64() % 3), N = (int64_t)(test_rand_u64() % 40);
        float *boxes = (float *)malloc(sizeof(float) * (size_t)(B * N * 4 + 1)), *scores = (float *)malloc(sizeof(float) * (size_t)(B * C * N + 1));
        luthier_nms_attrs a;
        int64_t e;
        char what[192];
        memset(&a, 0, sizeof a);
        a.center_point_box = (int)(test_rand_u64() % 2);
        a.max_output_boxes_per_class = (int64_t)(test_rand_u64() % (uint64_t)(N + 3));
        a.iou_threshold = (float)(test_rand_u64() % 11) / 10.0f;
        a.use_score_threshold = (int)(test_rand_u64() % 2);
        a.score_threshold = (float)(test_rand_u64() % 5) / 8.0f;
        for (e = 0; e < B * N; e++) {
            float *bx = boxes + e * 4;
            const int kind = (int)(test_rand_u64() % 10);
            int q;
            for (q = 0; q < 4; q++) bx[q] = (float)(test_rand_u64() % 41) / 4.0f; /* quarter steps: exact areas, exact IoU ties */
            if (kind == 0) bx[2] = bx[0];                                          /* zero height */
            if (kind == 1 && e > 0) memcpy(bx, bx - 4, 16);                        /* a duplicate */
            if (a.center_point_box && kind == 2) bx[2] = -bx[2];                   /* negative width */
        }
        for (e = 0; e < B * C * N; e++) scores[e] = (float)(test_rand_u64() % 8) / 8.0f; /* ties */
        if (seed % 5 == 0 && B * C * N > 0) scores[0] = NAN;
        snprintf(what, sizeof what, "nms seed %d (B %lld C %lld N %lld)", seed, (long long)B, (long long)C, (long long)N);
        ix_nms_check(boxes, scores, B, C, N, &a, what);
        free(boxes);
        free(scores);
    }
}

static void test_index_nms_cases(void) {
    luthier_nms_attrs a;
    int64_t sel[30], cnt = 0;
    memset(&a, 0, sizeof a);
    a.max_output_boxes_per_class = 10;
    { /* identical boxes: the first (equal scores: the lower index) suppresses the others below IoU 1 */
        static const float bx[12] = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}, sc[3] = {0.5f, 0.5f, 0.5f};
        a.iou_threshold = 0.99f;
        CHECK(ix_nms_check(bx, sc, 1, 1, 3, &a, "identical") == 1, "identical boxes: one selected");
        luthier_nms(bx, sc, 1, 1, 3, &a, sel, 3, &cnt, NULL);
        CHECK(cnt == 1 && sel[2] == 0 && sel[3] == -1, "identical boxes: box 0, then -1");
        a.iou_threshold = 1.0f; /* IoU 1 is not > 1 */
        CHECK(ix_nms_check(bx, sc, 1, 1, 3, &a, "identical at 1") == 3, "identical boxes at threshold 1: all selected");
    }
    { /* zero-area boxes never suppress; flipped corners are the same box */
        static const float bx[12] = {0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0}, sc[3] = {0.9f, 0.8f, 0.7f};
        static const float fl[8] = {0, 0, 1, 1, 1, 1, 0, 0}, fs[2] = {0.9f, 0.8f};
        a.iou_threshold = 0;
        CHECK(ix_nms_check(bx, sc, 1, 1, 3, &a, "zero area") == 3, "zero-area boxes: all selected");
        CHECK(ix_nms_check(fl, fs, 1, 1, 2, &a, "flipped") == 1, "flipped corners: one selected");
    }
    { /* threshold edges: IoU exactly 0.5, scores exactly at the score threshold */
        static const float bx[8] = {0, 0, 1, 1, 0, 0, 1, 0.5f}, sc[2] = {0.75f, 0.5f};
        a.iou_threshold = 0.5f;
        CHECK(ix_nms_check(bx, sc, 1, 1, 2, &a, "iou edge") == 2, "IoU 0.5 at threshold 0.5: not suppressed");
        a.iou_threshold = 0.49f;
        CHECK(ix_nms_check(bx, sc, 1, 1, 2, &a, "iou below") == 1, "IoU 0.5 above threshold 0.49: suppressed");
        a.use_score_threshold = 1, a.score_threshold = 0.5f, a.iou_threshold = 1;
        CHECK(ix_nms_check(bx, sc, 1, 1, 2, &a, "score edge") == 1, "a score equal to the threshold is left out");
        a.max_output_boxes_per_class = 0;
        CHECK(ix_nms_check(bx, sc, 1, 1, 2, &a, "max 0") == 0, "max_output_boxes_per_class 0: nothing");
        a.max_output_boxes_per_class = -1;
        CHECK(luthier_nms(bx, sc, 1, 1, 2, &a, sel, 10, &cnt, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative max refused");
        a.max_output_boxes_per_class = 1, a.iou_threshold = NAN;
        CHECK(luthier_nms(bx, sc, 1, 1, 2, &a, sel, 10, &cnt, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NaN iou refused");
        a.iou_threshold = 0.5f, a.center_point_box = 2;
        CHECK(luthier_nms(bx, sc, 1, 1, 2, &a, sel, 10, &cnt, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "center_point_box 2 refused");
        a.center_point_box = 0;
        CHECK(luthier_nms(bx, sc, 1, 1, 2, &a, NULL, 10, &cnt, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL output refused");
        CHECK(luthier_nms_scratch_bytes(-1) == 0 && luthier_nms_scratch_bytes(10) >= 10 * 16, "scratch sizes");
    }
}

/* The NON_MAX_SUPPRESSION node: the same rows as luthier_nms, -1 after them, the count as
   output 1; at 1 and 2 threads. */
static void test_index_nms_graph(void) {
    static const int64_t bs[3] = {2, 12, 4}, ss[3] = {2, 3, 12};
    float boxes[96], scores[72];
    int th, e, mx;
    for (e = 0; e < 96; e++) boxes[e] = (float)(test_rand_u64() % 21) / 4.0f;
    for (e = 0; e < 72; e++) scores[e] = (float)(test_rand_u64() % 16) / 16.0f;
    for (th = 1; th <= 2; th++)
        for (mx = 0; mx <= 13; mx += 3) {
            luthier_context *ctx = ctx_threads(th);
            luthier_graph *g = NULL;
            luthier_plan *p = NULL;
            luthier_node_desc d;
            int in[2], o[2];
            int64_t rows = 2 * 3 * (mx < 12 ? mx : 12), bound = rows > 0 ? rows : 1, want[216], got[216], count = -1, wc = -1;
            const void *ins[2];
            void *outs[2];
            luthier_tensor_info ti;
            ins[0] = boxes, ins[1] = scores, outs[0] = got, outs[1] = &count;
            luthier_graph_create(&g);
            luthier_graph_input(g, "boxes", LUTHIER_DTYPE_F32, 3, bs, &in[0]);
            luthier_graph_input(g, "scores", LUTHIER_DTYPE_F32, 3, ss, &in[1]);
            memset(&d, 0, sizeof d);
            d.op = LUTHIER_OP_NON_MAX_SUPPRESSION, d.typed = 1, d.inputs = in, d.num_inputs = 2;
            d.attr.nms.max_output_boxes_per_class = mx, d.attr.nms.iou_threshold = 0.3f;
            d.attr.nms.use_score_threshold = 1, d.attr.nms.score_threshold = 0.2f;
            CHECK(luthier_graph_add_node(g, &d, o) == LUTHIER_STATUS_OK, "nms node: %s", luthier_graph_error(g));
            luthier_graph_tensor_info(g, o[0], &ti);
            CHECK(ti.dtype == LUTHIER_DTYPE_I64 && ti.rank == 2 && ti.shape[0] == bound && ti.shape[1] == 3, "nms output [%lld,3] i64",
                  (long long)bound);
            luthier_graph_output(g, o[0]);
            luthier_graph_output(g, o[1]);
            CHECK(ctx && luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK, "nms plan: %s", ctx ? luthier_context_error(ctx) : "");
            if (p) {
                CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "nms run: %s", luthier_context_error(ctx));
                luthier_nms(boxes, scores, 2, 3, 12, &d.attr.nms, want, bound, &wc, NULL);
                CHECK(count == wc && memcmp(got, want, sizeof(int64_t) * (size_t)bound * 3) == 0,
                      "nms node (max %d, threads %d): count %lld, want %lld", mx, th, (long long)count, (long long)wc);
            }
            luthier_plan_destroy(p);
            luthier_graph_destroy(g);
            luthier_context_destroy(ctx);
        }
}

/* Refusals at graph build: bad attributes, i64 values into f32 operators. */
static void test_index_refusals(void) {
    static const int64_t s[2] = {3, 4}, s1[1] = {4}, bx[3] = {1, 5, 4}, sc[3] = {1, 2, 6};
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int x, x1, b, c, o[2], in[2];
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 2, s, &x);
    luthier_graph_input(g, "x1", LUTHIER_DTYPE_F32, 1, s1, &x1);
    luthier_graph_input(g, "b", LUTHIER_DTYPE_F32, 3, bx, &b);
    luthier_graph_input(g, "c", LUTHIER_DTYPE_F32, 3, sc, &c);
#define IX_REFUSE(setup, input, what)                                                                     \
    do {                                                                                                  \
        memset(&d, 0, sizeof d);                                                                          \
        d.typed = 1;                                                                                      \
        setup;                                                                                            \
        luthier_node_attrs_default(d.op, &d.attr);                                                        \
        setup;                                                                                            \
        in[0] = input;                                                                                    \
        d.inputs = in;                                                                                    \
        if (!d.num_inputs) d.num_inputs = 1;                                                              \
        CHECK(luthier_graph_add_node(g, &d, o) == LUTHIER_STATUS_INVALID_ARGUMENT, "%s is refused", what); \
    } while (0)
    IX_REFUSE((d.op = LUTHIER_OP_ARGMAX, d.attr.argmax.axis = 2), x, "argmax axis 2 of rank 2");
    IX_REFUSE((d.op = LUTHIER_OP_ARGMIN, d.attr.argmin.keepdims = 2), x, "argmin keepdims 2");
    IX_REFUSE((d.op = LUTHIER_OP_TOPK, d.attr.topk.k = 0), x, "topk k 0");
    IX_REFUSE((d.op = LUTHIER_OP_TOPK, d.attr.topk.k = 5), x, "topk k 5 of 4");
    IX_REFUSE((d.op = LUTHIER_OP_TOPK, d.attr.topk.k = 1, d.attr.topk.largest = -1), x, "topk largest -1");
    IX_REFUSE((d.op = LUTHIER_OP_CUMSUM, d.attr.cumsum.axis = -3), x, "cumsum axis -3");
    IX_REFUSE((d.op = LUTHIER_OP_CUMSUM, d.attr.cumsum.reverse = 7), x, "cumsum reverse 7");
    IX_REFUSE((d.op = LUTHIER_OP_TRILU), x1, "trilu of rank 1");
    IX_REFUSE((d.op = LUTHIER_OP_NON_MAX_SUPPRESSION, d.num_inputs = 2, in[1] = x), b, "nms scores [3,4]");
    IX_REFUSE((d.op = LUTHIER_OP_NON_MAX_SUPPRESSION, d.num_inputs = 2, in[1] = c, d.attr.nms.iou_threshold = 1.5f), b, "nms iou 1.5");
    IX_REFUSE((d.op = LUTHIER_OP_NON_MAX_SUPPRESSION, d.num_inputs = 2, in[1] = c, d.attr.nms.max_output_boxes_per_class = -2), b,
              "nms max -2");
    { /* an i64 output: refused by f32 operators, passed by identity */
        int am = -1, r = -1;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_ARGMAX, d.typed = 1, d.inputs = &x, d.num_inputs = 1;
        CHECK(luthier_graph_add_node(g, &d, &am) == LUTHIER_STATUS_OK, "argmax: %s", luthier_graph_error(g));
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_RELU, d.inputs = &am, d.num_inputs = 1;
        CHECK(luthier_graph_add_node(g, &d, &r) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "i64"),
              "relu of an i64 value is refused: %s", luthier_graph_error(g));
        d.op = LUTHIER_OP_TOPK, d.typed = 1, d.attr.topk.k = 1, d.attr.topk.largest = 1, d.attr.topk.sorted = 1;
        CHECK(luthier_graph_add_node(g, &d, o) == LUTHIER_STATUS_INVALID_ARGUMENT, "topk of an i64 value is refused");
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_IDENTITY, d.inputs = &am, d.num_inputs = 1;
        CHECK(luthier_graph_add_node(g, &d, &r) == LUTHIER_STATUS_OK, "identity of an i64 value: %s", luthier_graph_error(g));
    }
#undef IX_REFUSE
    luthier_graph_destroy(g);
}

/* ---- ONNX ------------------------------------------------------------------------------------- */

/* x [2,5] -> op (attributes by the caller on node n) -> outputs; loads at opset, runs, returns
   the graph (NULL when refused, with err). */
static luthier_graph *ix_onnx_load(pbw *n, const char *const *outs, int nout, const int64_t *const *odims, const int *orank,
                                   const int *otype, pbw *inits, int opset, char *err, size_t errn) {
    static const int64_t xd[2] = {2, 5};
    pbw m = {0, 0, 0}, g = {0, 0, 0};
    luthier_graph *gr = NULL;
    int k;
    pbw_msg(&g, 1, n);
    if (inits && inits->n) pbw_raw(&g, inits->p, inits->n);
    pbw_vi(&g, 11, "x", 2, xd);
    for (k = 0; k < nout; k++) pbw_vi_t(&g, 12, outs[k], otype[k], orank[k], odims[k]);
    pbw_model(&m, &g, opset);
    if (luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, errn) != LUTHIER_STATUS_OK) gr = NULL;
    free(m.p);
    return gr;
}

static void ix_onnx_node(pbw *n, const char *op, const char *const *ins, int nin, const char *const *outs, int nout) {
    int k;
    memset(n, 0, sizeof *n);
    for (k = 0; k < nin; k++) pbw_str(n, 1, ins[k]);
    for (k = 0; k < nout; k++) pbw_str(n, 2, outs[k]);
    pbw_str(n, 3, outs[0]);
    pbw_str(n, 4, op);
}

static void test_index_onnx(void) {
    static const float x[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    static const int64_t d21[2] = {2, 1}, d22[2] = {2, 2}, d25[2] = {2, 5}, one[1] = {1};
    static const int i64t[2] = {7, 7}, f32i64[2] = {1, 7}, f32t[1] = {1};
    luthier_context *ctx = onnx_ctx();
    char err[512];
    { /* ArgMax axis 1 keepdims, ArgMin select_last_index: i64 graph outputs */
        static const char *const in1[1] = {"x"}, *const o1[1] = {"y"};
        const int64_t *od[1] = {d21};
        const int r2[1] = {2};
        int64_t y[2] = {-1, -1};
        pbw n;
        luthier_graph *gr;
        ix_onnx_node(&n, "ArgMax", in1, 1, o1, 1);
        pbw_attr_i(&n, "axis", -1);
        gr = ix_onnx_load(&n, o1, 1, od, r2, i64t, NULL, 13, err, sizeof err);
        CHECK(gr != NULL, "ArgMax loads: %s", err);
        if (gr && ctx) {
            void *outs[1];
            outs[0] = y;
            CHECK(onnx_run_simple(ctx, gr, x, (float *const *)outs) && y[0] == 4 && y[1] == 0, "ArgMax: %lld %lld (want 4 0)",
                  (long long)y[0], (long long)y[1]);
        }
        luthier_graph_destroy(gr);
        ix_onnx_node(&n, "ArgMin", in1, 1, o1, 1);
        pbw_attr_i(&n, "axis", 1);
        pbw_attr_i(&n, "select_last_index", 1);
        gr = ix_onnx_load(&n, o1, 1, od, r2, i64t, NULL, 13, err, sizeof err);
        CHECK(gr != NULL, "ArgMin loads: %s", err);
        if (gr && ctx) {
            void *outs[1];
            outs[0] = y;
            CHECK(onnx_run_simple(ctx, gr, x, (float *const *)outs) && y[0] == 3 && y[1] == 1, "ArgMin last: %lld %lld (want 3 1)",
                  (long long)y[0], (long long)y[1]);
        }
        luthier_graph_destroy(gr);
    }
    { /* TopK: K a constant input (opset 11, smallest), the k attribute (opset 9); a run-time K is refused */
        static const char *const in2[2] = {"x", "K"}, *const o2[2] = {"v", "i"};
        const int64_t *od[2] = {d22, d22};
        const int r2[2] = {2, 2};
        const int64_t kv = 2;
        float v[4];
        int64_t ii[4];
        pbw n, inits = {0, 0, 0};
        luthier_graph *gr;
        pbw_init(&inits, "K", 7, 1, one, &kv, 8);
        ix_onnx_node(&n, "TopK", in2, 2, o2, 2);
        pbw_attr_i(&n, "largest", 0);
        gr = ix_onnx_load(&n, o2, 2, od, r2, f32i64, &inits, 11, err, sizeof err);
        CHECK(gr != NULL, "TopK loads: %s", err);
        if (gr && ctx) {
            void *outs[2];
            int vo = luthier_onnx_output_index(gr, "v"), io = luthier_onnx_output_index(gr, "i");
            CHECK(vo >= 0 && io >= 0, "TopK outputs found");
            if (vo >= 0 && io >= 0) {
                outs[vo] = v, outs[io] = ii;
                CHECK(onnx_run_simple(ctx, gr, x, (float *const *)outs), "TopK runs");
                CHECK(v[0] == 1 && v[1] == 1 && ii[0] == 1 && ii[1] == 3 && v[2] == 2 && v[3] == 3 && ii[2] == 1 && ii[3] == 4,
                      "TopK smallest: %g %g (%lld %lld) %g %g (%lld %lld)", (double)v[0], (double)v[1], (long long)ii[0],
                      (long long)ii[1], (double)v[2], (double)v[3], (long long)ii[2], (long long)ii[3]);
            }
        }
        luthier_graph_destroy(gr);
        free(inits.p);
        ix_onnx_node(&n, "TopK", in2, 1, o2, 2);
        pbw_attr_i(&n, "k", 2);
        gr = ix_onnx_load(&n, o2, 2, od, r2, f32i64, NULL, 9, err, sizeof err);
        CHECK(gr != NULL, "TopK opset 9 loads: %s", err);
        luthier_graph_destroy(gr);
        { /* K as a graph input: refused, named */
            pbw m = {0, 0, 0}, g = {0, 0, 0};
            static const int64_t xd[2] = {2, 5};
            ix_onnx_node(&n, "TopK", in2, 2, o2, 2);
            pbw_msg(&g, 1, &n);
            pbw_vi(&g, 11, "x", 2, xd);
            pbw_vi_t(&g, 11, "K", 7, 1, one);
            pbw_vi(&g, 12, "v", 2, d22);
            pbw_vi_t(&g, 12, "i", 7, 2, d22);
            pbw_model(&m, &g, 11);
            gr = NULL;
            CHECK(luthier_onnx_load_memory(m.p, m.n, NULL, &gr, err, sizeof err) == LUTHIER_STATUS_UNSUPPORTED && strstr(err, "K"),
                  "a run-time K is refused: %s", err);
            luthier_graph_destroy(gr);
            free(m.p);
        }
    }
    { /* CumSum (axis -1, exclusive, reverse) and Trilu (lower, k = 1) */
        static const char *const inc[2] = {"x", "axis"}, *const inT[2] = {"x", "k"}, *const o1[1] = {"y"};
        const int64_t *od[1] = {d25};
        const int r2[1] = {2};
        const int64_t axv = -1, kv = 1;
        float y[10];
        pbw n, inits = {0, 0, 0};
        luthier_graph *gr;
        pbw_init(&inits, "axis", 7, 0, one, &axv, 8);
        ix_onnx_node(&n, "CumSum", inc, 2, o1, 1);
        pbw_attr_i(&n, "exclusive", 1);
        pbw_attr_i(&n, "reverse", 1);
        gr = ix_onnx_load(&n, o1, 1, od, r2, f32t, &inits, 14, err, sizeof err);
        CHECK(gr != NULL, "CumSum loads: %s", err);
        if (gr && ctx) {
            float *outs[1];
            outs[0] = y;
            CHECK(onnx_run_simple(ctx, gr, x, outs) && y[0] == 11 && y[3] == 5 && y[4] == 0 && y[5] == 16 && y[9] == 0,
                  "CumSum exclusive reverse: %g %g %g %g %g", (double)y[0], (double)y[3], (double)y[4], (double)y[5], (double)y[9]);
        }
        luthier_graph_destroy(gr);
        free(inits.p);
        memset(&inits, 0, sizeof inits);
        pbw_init(&inits, "k", 7, 0, one, &kv, 8);
        ix_onnx_node(&n, "Trilu", inT, 2, o1, 1);
        pbw_attr_i(&n, "upper", 0);
        gr = ix_onnx_load(&n, o1, 1, od, r2, f32t, &inits, 14, err, sizeof err);
        CHECK(gr != NULL, "Trilu loads: %s", err);
        if (gr && ctx) {
            float *outs[1];
            outs[0] = y;
            CHECK(onnx_run_simple(ctx, gr, x, outs) && y[0] == 3 && y[1] == 1 && y[2] == 0 && y[5] == 9 && y[7] == 6 && y[8] == 0,
                  "Trilu lower k 1");
        }
        luthier_graph_destroy(gr);
        free(inits.p);
        ix_onnx_node(&n, "Trilu", inT, 1, o1, 1);
        gr = ix_onnx_load(&n, o1, 1, od, r2, f32t, NULL, 13, err, sizeof err);
        CHECK(gr == NULL && strstr(err, "opset"), "Trilu at opset 13 is refused: %s", err);
    }
    luthier_context_destroy(ctx);
}

/* Index values through the views (reshape, flatten, identity) to graph outputs. */
static void test_index_views(void) {
    static const int64_t s[3] = {2, 3, 4}, flat[1] = {6};
    static const float x[24] = {5, 1, 2, 9, 0, 3, 3, 1, 7, 7, 2, 8, 1, 6, 0, 4, 2, 2, 9, 9, 5, 5, 8, 1};
    luthier_context *ctx = ctx_threads(2);
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc d;
    int xt, am, rs, fl, id, k;
    int64_t y1[6], y2[6], y3[6];
    const void *ins[1];
    void *outs[3];
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 3, s, &xt);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_ARGMAX, d.typed = 1, d.inputs = &xt, d.num_inputs = 1;
    d.attr.argmax.axis = -1, d.attr.argmax.keepdims = 1;
    CHECK(luthier_graph_add_node(g, &d, &am) == LUTHIER_STATUS_OK, "argmax: %s", luthier_graph_error(g));
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_RESHAPE, d.inputs = &am, d.num_inputs = 1, d.sizes = flat, d.num_sizes = 1;
    CHECK(luthier_graph_add_node(g, &d, &rs) == LUTHIER_STATUS_OK, "reshape of i64: %s", luthier_graph_error(g));
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_FLATTEN, d.inputs = &am, d.num_inputs = 1;
    CHECK(luthier_graph_add_node(g, &d, &fl) == LUTHIER_STATUS_OK, "flatten of i64: %s", luthier_graph_error(g));
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_IDENTITY, d.inputs = &rs, d.num_inputs = 1;
    CHECK(luthier_graph_add_node(g, &d, &id) == LUTHIER_STATUS_OK, "identity of i64: %s", luthier_graph_error(g));
    luthier_graph_output(g, rs);
    luthier_graph_output(g, fl);
    luthier_graph_output(g, id);
    ins[0] = x, outs[0] = y1, outs[1] = y2, outs[2] = y3;
    CHECK(ctx && luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK, "views plan: %s", ctx ? luthier_context_error(ctx) : "");
    if (p) {
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "views run: %s", luthier_context_error(ctx));
        for (k = 0; k < 6; k++) {
            const int64_t want = ix_ref_arg(x + k * 4, 4, 1, 0, 0);
            CHECK(y1[k] == want && y2[k] == want && y3[k] == want, "row %d: %lld %lld %lld, want %lld", k, (long long)y1[k],
                  (long long)y2[k], (long long)y3[k], (long long)want);
        }
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
}

static void run_index_tests(void) {
    RUN(test_index_views);
    RUN(test_index_argmax);
    RUN(test_index_topk);
    RUN(test_index_cumsum_trilu);
    RUN(test_index_cumsum_long);
    RUN(test_index_cumsum_isa);
    RUN(test_index_nms_random);
    RUN(test_index_nms_cases);
    RUN(test_index_nms_graph);
    RUN(test_index_refusals);
    RUN(test_index_onnx);
}
