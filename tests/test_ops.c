/* Operator kernels (luthier_ops.h) against naive double-precision references.
   Every op runs on a set of variants: 1 thread; the default context (all CPUs); a fake
   big:0,little:1 topology with a skewed ratio split; the same with the DYNAMIC schedule; and,
   where the CPU has them, contexts with AVX-512 (then AVX2) disabled. Variants of one ISA must
   agree bit for bit; all must match the reference within the op's tolerance. Buffers are exact
   size heap blocks (ASan catches overruns). Included by test_main.c. */

#define OPS_MAXV 6
typedef struct ops_env {
    luthier_context *ctx[OPS_MAXV];
    luthier__op_cfg cfg[OPS_MAXV];
    const luthier__op_cfg *cfgp[OPS_MAXV];
    int group[OPS_MAXV]; /* variants of one group use the same ISA: bit-identical */
    const char *name[OPS_MAXV]; /* for messages */
    int n;
    luthier_context *owned[OPS_MAXV];
    int nowned;
} ops_env;
static ops_env OE;
static const float ops_skew[2] = {0.85f, 0.15f};

static luthier_context *ops_new_ctx(int threads, const luthier_topology *topo, unsigned disabled) {
    luthier_context_desc cd;
    luthier_context *c = NULL;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = threads;
    cd.topology = topo;
    cd.disabled_cpu_features = disabled;
    if (luthier_context_create(&cd, &c) != LUTHIER_STATUS_OK) {
        CHECK(0, "cannot create a context (%d threads, disabled %#x)", threads, disabled);
        return NULL;
    }
    OE.owned[OE.nowned++] = c;
    return c;
}
static void ops_add(luthier_context *c, const luthier__op_cfg *cfg, int group, const char *name) {
    if (!c || OE.n >= OPS_MAXV) return;
    OE.ctx[OE.n] = c;
    if (cfg) {
        OE.cfg[OE.n] = *cfg;
        OE.cfgp[OE.n] = &OE.cfg[OE.n];
    } else {
        OE.cfgp[OE.n] = NULL;
    }
    OE.group[OE.n] = group;
    OE.name[OE.n] = name;
    OE.n++;
}
static void ops_env_create(void) {
    luthier_topology topo;
    char err[128];
    luthier__op_cfg cfg;
    const unsigned f = luthier_cpu_features();
    memset(&OE, 0, sizeof OE);
    ops_add(ops_new_ctx(1, NULL, 0), NULL, 0, "1 thread");
    ops_add(ops_new_ctx(0, NULL, 0), NULL, 0, "all CPUs");
    if (luthier_topology_parse("big:0,little:1", &topo, err, sizeof err) == LUTHIER_STATUS_OK) {
        luthier_context *c = ops_new_ctx(0, &topo, 0);
        memset(&cfg, 0, sizeof cfg);
        cfg.schedule = LUTHIER_SCHEDULE_RATIO;
        cfg.ratios = ops_skew;
        cfg.num_ratios = 2;
        if (c && luthier_context_num_threads(c) == 2) ops_add(c, &cfg, 0, "2 clusters, ratios 0.85/0.15");
        cfg.schedule = LUTHIER_SCHEDULE_DYNAMIC;
        cfg.ratios = NULL;
        cfg.num_ratios = 0;
        ops_add(c, &cfg, 0, "2 clusters, dynamic");
    }
    if (f & LUTHIER_CPU_AVX512F) ops_add(ops_new_ctx(0, NULL, LUTHIER_CPU_AVX512F), NULL, 1, "no AVX-512");
    if (f & (LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA))
        ops_add(ops_new_ctx(0, NULL, LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA), NULL, 2, "baseline ISA");
}
static void ops_env_destroy(void) {
    int i;
    for (i = 0; i < OE.nowned; i++) luthier_context_destroy(OE.owned[i]);
    memset(&OE, 0, sizeof OE);
}

typedef luthier_status (*ops_call)(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out);

static double ops_max_err; /* largest |out - ref| / (atol + rtol |ref|) of the last ops_verify */

/* out within atol + rtol*|ref| (NaN where ref is NaN, same infinities); returns failures */
static int ops_compare(const char *what, const float *out, const double *ref, size_t n, double atol, double rtol) {
    size_t i;
    int bad = 0;
    for (i = 0; i < n; i++) {
        const double o = out[i], r = ref[i];
        int ok;
        if (r != r) ok = o != o;
        else if (isinf(r)) ok = o == r;
        else {
            const double lim = atol + rtol * fabs(r), e = fabs(o - r);
            ok = e <= lim;
            if (lim > 0 && e / lim > ops_max_err) ops_max_err = e / lim;
        }
        if (!ok) {
            if (bad < 3) CHECK(0, "%s: [%zu] = %.9g, reference %.9g", what, i, o, r);
            bad++;
        }
    }
    return bad;
}

/* Runs call on every variant into fresh exact-size buffers: reference check + bit identity. */
static int ops_verify(const char *what, ops_call call, void *arg, size_t n, const double *ref, double atol,
                      double rtol) {
    float *first[3] = {NULL, NULL, NULL};
    int v, bad = 0;
    ops_max_err = 0;
    for (v = 0; v < OE.n; v++) {
        float *out = (float *)test_alloc(n * sizeof(float));
        const int g = OE.group[v];
        luthier_status s;
        size_t i;
        for (i = 0; i < n; i++) out[i] = test_sentinel();
        s = call(OE.ctx[v], OE.cfgp[v], arg, out);
        if (s != LUTHIER_STATUS_OK) {
            CHECK(0, "%s: variant %d returned %s (%s)", what, v, luthier_status_string(s), luthier_context_error(OE.ctx[v]));
            bad++;
            free(out);
            continue;
        }
        if (ref) bad += ops_compare(what, out, ref, n, atol, rtol);
        if (!first[g]) {
            first[g] = out;
        } else {
            if (memcmp(first[g], out, n * sizeof(float)) != 0) {
                CHECK(0, "%s: variant %d differs from the first of its ISA (not bit-identical)", what, v);
                bad++;
            }
            free(out);
        }
        if (bad) break;
    }
    for (v = 0; v < 3; v++) free(first[v]);
    return bad;
}

static float *ops_randf(size_t n, float lo, float hi) {
    float *p = (float *)test_alloc(n * sizeof(float));
    size_t i;
    for (i = 0; i < n; i++) p[i] = lo + (hi - lo) * 0.5f * (test_rand_float() + 1.0f);
    return p;
}
static double *ops_refbuf(size_t n) { return (double *)test_alloc((n ? n : 1) * sizeof(double)); }

static double ops_clampd(double v, luthier_activation act, float cmin, float cmax) {
    float lo, hi;
    if (!luthier__activation_bounds(act, cmin, cmax, &lo, &hi)) return v;
    if (v != v) return v;
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- unary ----------------------------------------------------------------------------------- */

static double ops_unary_ref(luthier__unary k, double a, double b, double x) {
    switch (k) {
    case LUTHIER__UNARY_RELU: return x != x ? x : x < 0 ? 0 : x;
    case LUTHIER__UNARY_CLIP: return x != x ? x : x < a ? a : x > b ? b : x;
    case LUTHIER__UNARY_GELU_ERF: return isinf(x) ? (x > 0 ? x : 0.0) : 0.5 * x * erfc(-x / sqrt(2.0));
    case LUTHIER__UNARY_GELU_TANH:
        /* 0.5 x (1 + tanh(u)) written without the cancellation of 1 + tanh(u) for x << 0 */
        return isinf(x) ? (x > 0 ? x : 0.0) : x / (1.0 + exp(-1.5957691216057308 * (x + 0.044715 * x * x * x)));
    case LUTHIER__UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case LUTHIER__UNARY_TANH: return tanh(x);
    case LUTHIER__UNARY_EXP: return exp(x);
    case LUTHIER__UNARY_ERF: return erf(x);
    case LUTHIER__UNARY_SQRT: return sqrt(x);
    case LUTHIER__UNARY_NEG: return -x;
    case LUTHIER__UNARY_ABS: return fabs(x);
    case LUTHIER__UNARY_RECIPROCAL: return 1.0 / x;
    case LUTHIER__UNARY_AFFINE: return (double)((float)x * (float)a + (float)b);
    /* the activations, from their definitions (libm's expm1 and log1p: no cancellation) */
    case LUTHIER__UNARY_LEAKY_RELU: return x < 0 ? a * x : x;
    case LUTHIER__UNARY_ELU: return x > 0 ? b * x : b * a * expm1(x);
    case LUTHIER__UNARY_CELU: return x > 0 ? x : a * expm1(x / a);
    case LUTHIER__UNARY_HARD_SIGMOID: {
        const double t = a * x + b;
        return t != t ? t : t < 0 ? 0 : t > 1 ? 1 : t;
    }
    case LUTHIER__UNARY_HARD_SWISH: {
        const double t = x / 6 + 0.5;
        return x * (t != t ? t : t < 0 ? 0 : t > 1 ? 1 : t);
    }
    case LUTHIER__UNARY_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case LUTHIER__UNARY_SOFTSIGN: return x / (1 + fabs(x));
    case LUTHIER__UNARY_MISH: return x * tanh(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)));
    case LUTHIER__UNARY_THRESHOLDED_RELU: return x != x ? x : x > a ? x : 0;
    case LUTHIER__UNARY_LOG: return log(x);
    case LUTHIER__UNARY_FLOOR: return floor(x);
    case LUTHIER__UNARY_CEIL: return ceil(x);
    case LUTHIER__UNARY_ROUND: return nearbyint(x); /* x is a float: its halves are exact in double */
    case LUTHIER__UNARY_SILU: return x / (1 + exp(-x));
    case LUTHIER__UNARY_NOT: return x == 0 ? 1 : 0; /* NaN is true */
    default: return 0;
    }
}

typedef struct ops_unary_arg {
    luthier__unary kind;
    float a, b;
    const float *x;
    size_t n;
    int in_place;
} ops_unary_arg;
static luthier_status ops_unary_call(luthier_context *c, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_unary_arg *u = (const ops_unary_arg *)arg;
    if (u->in_place) {
        memcpy(out, u->x, u->n * sizeof(float));
        return luthier__op_unary(c, cfg, u->kind, u->a, u->b, out, out, u->n);
    }
    return luthier__op_unary(c, cfg, u->kind, u->a, u->b, u->x, out, u->n);
}

/* Accuracy of the polynomial functions over dense sweeps (1 thread, each ISA), and the same bits
   for an element whatever its neighbours in the vector (per-vector branches must not leak). */
static void test_op_unary_accuracy(void) {
    /* error = |y - ref| / max(|ref|, floor_x * |x|): relative, except for gelu far left where the
       brief asks for an absolute error on the scale of |x| (floor 1e-2: |err| <= 1e-8 |x|) */
    static const struct { luthier__unary k; const char *name; float lo, hi; double rtol, floor_x; float a, b; } cases[] = {
        {LUTHIER__UNARY_EXP, "exp", -87.0f, 88.5f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_EXP, "exp(small)", -1.0f, 1.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_SIGMOID, "sigmoid", -80.0f, 30.0f, 5e-7, 0, 0, 0},
        {LUTHIER__UNARY_TANH, "tanh", -12.0f, 12.0f, 5e-7, 0, 0, 0},
        {LUTHIER__UNARY_TANH, "tanh(small)", -0.7f, 0.7f, 5e-7, 0, 0, 0},
        {LUTHIER__UNARY_ERF, "erf", -6.0f, 6.0f, 6e-7, 0, 0, 0},
        {LUTHIER__UNARY_ERF, "erf(small)", -0.6f, 0.6f, 6e-7, 0, 0, 0},
        {LUTHIER__UNARY_GELU_ERF, "gelu_erf", -9.0f, 9.0f, 1e-6, 1e-2, 0, 0},
        {LUTHIER__UNARY_GELU_ERF, "gelu_erf(|x|<3)", -3.0f, 3.0f, 2e-6, 0, 0, 0},
        {LUTHIER__UNARY_GELU_TANH, "gelu_tanh", -9.0f, 9.0f, 1e-6, 1e-2, 0, 0},
        {LUTHIER__UNARY_GELU_TANH, "gelu_tanh(|x|<3)", -3.0f, 3.0f, 1e-6, 0, 0, 0},
        {LUTHIER__UNARY_ELU, "elu", -20.0f, 5.0f, 4e-7, 0, 1.0f, 1.0f},
        {LUTHIER__UNARY_ELU, "elu(small)", -0.5f, 0.5f, 4e-7, 0, 1.0f, 1.0f},
        {LUTHIER__UNARY_ELU, "selu", -20.0f, 5.0f, 4e-7, 0, 1.67326319f, 1.05070102f},
        {LUTHIER__UNARY_CELU, "celu(alpha 0.5)", -10.0f, 5.0f, 4e-7, 0, 0.5f, 0},
        {LUTHIER__UNARY_CELU, "celu(alpha 3)", -0.5f, 0.5f, 4e-7, 0, 3.0f, 0},
        {LUTHIER__UNARY_SOFTPLUS, "softplus", -100.0f, 100.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_SOFTPLUS, "softplus(small)", -2.0f, 2.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_SOFTPLUS, "softplus(left)", -87.0f, -10.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_SOFTPLUS, "softplus(|x|<16)", -16.0f, 16.0f, 4e-7, 0, 0, 0}, /* AVX-512: every table */
        {LUTHIER__UNARY_SOFTPLUS, "softplus(16-)", -15.999999f, -8.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_MISH, "mish", -80.0f, 30.0f, 5e-7, 0, 0, 0},
        {LUTHIER__UNARY_MISH, "mish(small)", -2.0f, 2.0f, 5e-7, 0, 0, 0},
        {LUTHIER__UNARY_MISH, "mish(-87 edge)", -87.3f, -70.0f, 5e-7, 0, 0, 0}, /* vectors across v_exp_core's edge (exp normal) */
        {LUTHIER__UNARY_SOFTSIGN, "softsign", -1e6f, 1e6f, 1e-7, 0, 0, 0},
        {LUTHIER__UNARY_HARD_SWISH, "hard_swish", -4.0f, 4.0f, 3e-7, 0, 0, 0},
        /* a x + b cancels near its zero in float (one rounding of a x: ~1 ulp of b) */
        {LUTHIER__UNARY_HARD_SIGMOID, "hard_sigmoid", -4.0f, 4.0f, 2e-7, 0.1, 0.2f, 0.5f},
        {LUTHIER__UNARY_LOG, "log", 1e-30f, 3e38f, 3e-7, 0, 0, 0},
        {LUTHIER__UNARY_LOG, "log(near 1)", 0.5f, 2.0f, 3e-7, 0, 0, 0},
        {LUTHIER__UNARY_LOG, "log(subnormal)", 1e-45f, 1.1e-38f, 3e-7, 0, 0, 0},
        {LUTHIER__UNARY_SILU, "silu", -85.0f, 100.0f, 4e-7, 0, 0, 0}, /* below, the results are subnormal */
        {LUTHIER__UNARY_SILU, "silu(small)", -2.0f, 2.0f, 4e-7, 0, 0, 0},
        {LUTHIER__UNARY_SILU, "silu(-87 edge)", -87.3f, -70.0f, 4e-7, 0, 0, 0},
    };
    const size_t n = T.quick ? 20001 : 200001;
    float *x = (float *)test_alloc(n * sizeof(float));
    float *y = (float *)test_alloc(n * sizeof(float));
    unsigned ci;
    int v;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        size_t i;
        for (i = 0; i < n; i++) x[i] = cases[ci].lo + (cases[ci].hi - cases[ci].lo) * (float)((double)i / (double)(n - 1));
        for (v = 0; v < OE.n; v++) {
            double worst = 0;
            size_t wi = 0;
            if (v != 0 && OE.group[v] == OE.group[v - 1]) continue; /* once per ISA */
            CHECK(luthier__op_unary(OE.ctx[v], NULL, cases[ci].k, cases[ci].a, cases[ci].b, x, y, n) == LUTHIER_STATUS_OK, "status");
            for (i = 0; i < n; i++) {
                const double r = ops_unary_ref(cases[ci].k, cases[ci].a, cases[ci].b, x[i]);
                const double sc = fabs(r) > cases[ci].floor_x * fabs(x[i]) ? fabs(r) : cases[ci].floor_x * fabs(x[i]);
                const double e = fabs(y[i] - r) / (sc > 1e-37 ? sc : 1e-37);
                if (e > worst || e != e) {
                    worst = e != e ? 1e9 : e;
                    wi = i;
                }
            }
            { /* one lane later (other neighbours in every vector): the same bits */
                float *y1 = (float *)test_alloc(n * sizeof(float));
                CHECK(luthier__op_unary(OE.ctx[v], NULL, cases[ci].k, cases[ci].a, cases[ci].b, x + 1, y1, n - 1) == LUTHIER_STATUS_OK,
                      "status");
                for (i = 0; i + 1 < n && (memcmp(&y[i + 1], &y1[i], 4) == 0 || (y1[i] != y1[i] && y[i + 1] != y[i + 1])); i++) {
                }
                CHECK(i + 1 == n, "%s: x = %.9g gives %.9g or %.9g by its neighbours", cases[ci].name, (double)x[i + 1], (double)y[i + 1],
                      (double)y1[i]);
                free(y1);
            }
            printf("    %-16s ISA group %d: max rel error %.3g at x = %.8g\n", cases[ci].name, OE.group[v], worst, x[wi]);
            CHECK(worst <= cases[ci].rtol, "%s: max rel error %.3g at x = %.9g (limit %.3g)", cases[ci].name, worst,
                  x[wi], cases[ci].rtol);
        }
    }
    free(x);
    free(y);
}

/* special values: NaN propagation, infinities, extreme arguments */
static void test_op_unary_special(void) {
    const float nan = NAN, inf = INFINITY;
    float x[14], y[14];
    int v, k;
    x[0] = nan; x[1] = inf; x[2] = -inf; x[3] = 0.0f; x[4] = -0.0f; x[5] = 100.0f; x[6] = -100.0f;
    x[7] = 88.7f; x[8] = -103.0f; x[9] = 1e-30f; x[10] = -1e-30f; x[11] = 1e-40f;
    x[12] = -1.0f; x[13] = 1.0f; /* the parameters a, b below: thresholds of the activations */
    for (v = 0; v < OE.n; v++) {
        for (k = 0; k < (int)LUTHIER__UNARY_COUNT; k++) {
            int i;
            if (k == LUTHIER__UNARY_RECIPROCAL || k == LUTHIER__UNARY_SQRT || k == LUTHIER__UNARY_AFFINE) continue;
            CHECK(luthier__op_unary(OE.ctx[v], NULL, (luthier__unary)k, -1.0f, 1.0f, x, y, 14) == LUTHIER_STATUS_OK, "status");
            for (i = 0; i < 14; i++) {
                const double r = (float)ops_unary_ref((luthier__unary)k, -1.0, 1.0, x[i]);
                const int ok = r != r ? y[i] != y[i] : isinf(r) ? y[i] == r
                                                                : fabs(y[i] - r) <= 1e-6 * fabs(r) + 1e-37;
                CHECK(ok, "kind %d x = %g: %.9g, expected %.9g (variant %d)", k, (double)x[i], (double)y[i], r, v);
            }
        }
    }
}

/* LOG against double log in ulps of the float nearest the exact value: every binade from the
   smallest subnormal to 2^127 (its ends and random mantissas), x near 1 on both sides (1 +- k ulp
   and up to +-2^-5 away), the table's bucket edges +-1 ulp in many binades, specials (0, -0 ->
   -inf; < 0, -inf, NaN -> NaN; +inf -> +inf; 1 -> +0). Every variant (ISA groups, 1 and 2
   threads), at lengths 1 to 40 and the whole set (tails in every position). Measured over every
   positive float: 0.524 ulp on AVX-512 (the table path, at x = 1.0277828), 0.827 ulp with AVX2 or
   SSE2 (at x = 1.41364205). */
static double ops_log_ulps(float x, float y) {
    const double r = log((double)x);
    const float rf = (float)r;
    int ex;
    if (r != r) return y != y ? 0 : 1e9;
    if (isinf(r) || rf == 0.0f) return memcmp(&y, &rf, 4) == 0 ? 0 : 1e9; /* -inf, inf, +0 bit for bit */
    if (y != y) return 1e9;
    frexp(rf, &ex);
    return fabs((double)y - r) / ldexp(1.0, ex - 24);
}
static size_t ops_log_inputs(float *x) {
    static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, FLT_MIN, 1e-45f, -1e-45f,
                               -FLT_MIN, 0.5f, 2.0f, 0.99999994f, 1.00000012f, 7.17711438e-43f, 0.984375f, 1.03125f};
    size_t n = 0;
    int e, k, b;
    for (k = 0; k < (int)(sizeof sp / sizeof sp[0]); k++) x[n++] = sp[k];
    for (e = -149; e < 128; e++) { /* 2^e and 12 random mantissas; below 2^-126 the subnormals' bits */
        const float p = ldexpf(1.0f, e);
        x[n++] = p;
        x[n++] = nextafterf(p, 0.0f);
        for (k = 0; k < 12; k++) x[n++] = p * (1.0f + (test_rand_float() + 1.0f) * 0.5f);
    }
    for (k = 1; k <= 600; k++) { /* 1 +- k ulp, and further out to 2^-5 */
        x[n++] = 1.0f + (float)k * 1.1920929e-7f;
        x[n++] = 1.0f - (float)k * 5.9604645e-8f;
        x[n++] = 1.0f + test_rand_float() * 0.03125f;
    }
    for (b = 0; b <= 32; b++) /* the bucket edges 1 + b/32 of m, +-1 ulp, in several binades */
        for (e = -140; e < 128; e += 23) {
            const float p = ldexpf(1.0f + (float)b / 32.0f, e);
            x[n++] = p;
            x[n++] = nextafterf(p, 0.0f);
            x[n++] = nextafterf(p, INFINITY);
        }
    return n;
}
static void test_op_log_ulps(void) {
    float *x = (float *)test_alloc(6 * 8192 * sizeof(float)), *y = (float *)test_alloc(6 * 8192 * sizeof(float));
    const size_t n0 = ops_log_inputs(x), n = 6 * n0; /* six copies: more than two threads' grains */
    const int tab = (luthier_cpu_features() & LUTHIER_CPU_AVX512F) != 0;
    size_t i;
    int v;
    for (i = n0; i < n; i++) x[i] = x[i - n0];
    for (v = 0; v < OE.n; v++) {
        const double bound = tab && OE.group[v] == 0 ? 0.53 : 0.85;
        double worst = 0;
        float wy = 0;
        size_t len, wi = 0;
        for (len = 1; len <= n; len = len == 40 ? n : len + 1) {
            const size_t off = len == n ? 0 : (len * 37) % (n - len);
            CHECK(luthier__op_unary(OE.ctx[v], OE.cfgp[v], LUTHIER__UNARY_LOG, 0, 0, x + off, y, len) == LUTHIER_STATUS_OK, "status");
            for (i = 0; i < len; i++) {
                const double u = ops_log_ulps(x[off + i], y[i]);
                if (u > worst) {
                    worst = u;
                    wy = y[i];
                    wi = off + i;
                }
            }
        }
        if (v == 0 || OE.group[v] != OE.group[v - 1])
            printf("    log ISA group %d: max %.3f ulp at x = %.9g (%zu inputs)\n", OE.group[v], worst, (double)x[wi], n);
        CHECK(worst <= bound, "log (%s): %.3g ulp at x = %.9g (%a): %.9g, limit %.2f", OE.name[v], worst, (double)x[wi],
              (double)x[wi], (double)wy, bound);
    }
    free(x);
    free(y);
}

/* abs, floor, ceil, round and sqrt are exact: bit for bit what libm gives, on every ISA, over
   halves, integers and their neighbours, the 2^23 and 2^24 boundaries, subnormals, +-0,
   infinities, negative values (sqrt: NaN) and NaN (the sign of a NaN is not compared) */
static void test_op_unary_exact(void) {
    const size_t n = 4096 + 512;
    float *x = (float *)test_alloc(n * sizeof(float)), *y = (float *)test_alloc(n * sizeof(float));
    static const luthier__unary kinds[] = {LUTHIER__UNARY_ABS, LUTHIER__UNARY_FLOOR, LUTHIER__UNARY_CEIL, LUTHIER__UNARY_ROUND,
                                           LUTHIER__UNARY_SQRT};
    size_t i;
    unsigned ki;
    int v;
    for (i = 0; i < 4096; i++) { /* k/4 for k in [-2048, 2048): halves, quarters, integers */
        const float q = (float)((int)i - 2048) * 0.25f;
        x[i] = i % 3 == 0 ? nextafterf(q, INFINITY) : i % 3 == 1 ? q : nextafterf(q, -INFINITY);
    }
    for (; i < n; i++) {
        static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 8388608.0f, 8388607.5f, 8388609.0f,
                                   16777216.0f, 4194303.5f, 4194304.5f, 1e-45f, 1.17549435e-38f, 3e38f, 0.49999997f, 1.5f};
        const float s = sp[i % 16];
        x[i] = (i / 16) % 2 ? -s : s;
        if (i % 16 == 0 && i >= 4096 + 256) x[i] = test_rand_float() * 1e7f;
    }
    for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        for (v = 0; v < OE.n; v++) {
            int bad = 0;
            CHECK(luthier__op_unary(OE.ctx[v], NULL, kinds[ki], 0, 0, x, y, n) == LUTHIER_STATUS_OK, "status");
            for (i = 0; i < n && bad < 3; i++) {
                const float r = kinds[ki] == LUTHIER__UNARY_ABS     ? fabsf(x[i])
                                : kinds[ki] == LUTHIER__UNARY_FLOOR ? floorf(x[i])
                                : kinds[ki] == LUTHIER__UNARY_CEIL  ? ceilf(x[i])
                                : kinds[ki] == LUTHIER__UNARY_SQRT  ? sqrtf(x[i])
                                                                    : nearbyintf(x[i]);
                const int ok = r != r ? y[i] != y[i] : memcmp(&r, &y[i], sizeof r) == 0;
                if (!ok) bad++;
                CHECK(ok, "kind %d x = %.9g: %.9g, libm %.9g (variant %d)", (int)kinds[ki], (double)x[i], (double)y[i], (double)r, v);
            }
        }
    }
    free(x);
    free(y);
}

static void test_op_unary_shapes(void) {
    const size_t sizes[] = {0, 1, 2, 15, 16, 17, 63, 100, 16383, 16384, 16385, 40001};
    unsigned si;
    int k;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        float *x = ops_randf(n ? n : 1, -4.0f, 4.0f);
        double *ref = ops_refbuf(n);
        for (k = 0; k < (int)LUTHIER__UNARY_COUNT; k++) {
            ops_unary_arg a;
            size_t i;
            char what[64];
            a.kind = (luthier__unary)k;
            a.a = k == LUTHIER__UNARY_CLIP ? -0.5f : 1.5f;
            a.b = k == LUTHIER__UNARY_CLIP ? 0.75f : -0.25f;
            a.x = x;
            a.n = n;
            if (k == LUTHIER__UNARY_SQRT || k == LUTHIER__UNARY_LOG)
                for (i = 0; i < n; i++) x[i] = fabsf(x[i]);
            for (i = 0; i < n; i++) ref[i] = ops_unary_ref(a.kind, a.a, a.b, x[i]);
            for (a.in_place = 0; a.in_place < 2; a.in_place++) {
                const int gelu = k == LUTHIER__UNARY_GELU_ERF || k == LUTHIER__UNARY_GELU_TANH;
                sprintf(what, "unary kind %d n %zu%s", k, n, a.in_place ? " in place" : "");
                ops_verify(what, ops_unary_call, &a, n, ref, gelu ? 4e-8 : 1e-30,
                           k == LUTHIER__UNARY_RECIPROCAL ? 1e-7 : gelu ? 1e-6 : 1.2e-6);
            }
        }
        free(x);
        free(ref);
    }
}

/* ---- binary ---------------------------------------------------------------------------------- */

typedef struct ops_binary_arg {
    luthier__binary kind;
    const float *a, *b;
    int64_t as[6], bs[6], ys[6];
    int rank;
    luthier_activation act;
    float cmin, cmax;
    int alias; /* 1: y aliases a (copied into out first), 2: y aliases b */
    size_t na, nb, ny;
} ops_binary_arg;
static luthier_status ops_binary_call(luthier_context *c, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_binary_arg *o = (const ops_binary_arg *)arg;
    if (o->alias == 1) {
        memcpy(out, o->a, o->ny * sizeof(float));
        return luthier__op_binary(c, cfg, o->kind, out, o->as, o->b, o->bs, out, o->ys, o->rank, o->act, o->cmin, o->cmax);
    }
    if (o->alias == 2) {
        memcpy(out, o->b, o->ny * sizeof(float));
        return luthier__op_binary(c, cfg, o->kind, o->a, o->as, out, o->bs, out, o->ys, o->rank, o->act, o->cmin, o->cmax);
    }
    return luthier__op_binary(c, cfg, o->kind, o->a, o->as, o->b, o->bs, out, o->ys, o->rank, o->act, o->cmin, o->cmax);
}

static double ops_binary_refop(luthier__binary k, double a, double b) {
    switch (k) {
    case LUTHIER__BINARY_ADD: return (float)((float)a + (float)b);
    case LUTHIER__BINARY_SUB: return (float)((float)a - (float)b);
    case LUTHIER__BINARY_MUL: return (float)((float)a * (float)b);
    case LUTHIER__BINARY_DIV: return (float)((float)a / (float)b);
    case LUTHIER__BINARY_POW: return pow(a, b);
    case LUTHIER__BINARY_MAX: return a != a || b != b ? NAN : a > b ? a : b;
    case LUTHIER__BINARY_MIN: return a != a || b != b ? NAN : a < b ? a : b;
    case LUTHIER__BINARY_PRELU: return a < 0 ? (double)(float)(a * b) : a;
    case LUTHIER__BINARY_EQUAL: return a == b; /* NaN: false */
    case LUTHIER__BINARY_GREATER: return a > b;
    case LUTHIER__BINARY_LESS: return a < b;
    case LUTHIER__BINARY_GREATER_EQUAL: return a >= b;
    case LUTHIER__BINARY_LESS_EQUAL: return a <= b;
    case LUTHIER__BINARY_AND: return a != 0 && b != 0; /* nonzero (NaN too) is true */
    case LUTHIER__BINARY_OR: return a != 0 || b != 0;
    case LUTHIER__BINARY_XOR: return (a != 0) != (b != 0);
    case LUTHIER__BINARY_FMOD: return fmod(a, b);
    case LUTHIER__BINARY_MOD: { /* Python: a - floor(a / b) b, exact through fmod and the sign of b */
        const double r = fmod(a, b);
        return r != 0 && (r < 0) != (b < 0) ? (double)(float)(r + b) : r;
    }
    default: return 0;
    }
}

/* one binary case on given shapes; every alias that the contract allows */
static void ops_binary_case(luthier__binary kind, const int64_t *as, const int64_t *bs, int rank,
                            luthier_activation act, int with_nan) {
    ops_binary_arg o;
    float *a, *b;
    double *ref;
    size_t i;
    int d;
    char what[160];
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.rank = rank;
    o.act = act;
    o.cmin = -0.3f;
    o.cmax = 0.4f;
    o.na = o.nb = o.ny = 1;
    for (d = 0; d < rank; d++) {
        o.as[d] = as[d];
        o.bs[d] = bs[d];
        o.ys[d] = as[d] > bs[d] ? as[d] : bs[d];
        o.na *= (size_t)as[d];
        o.nb *= (size_t)bs[d];
        o.ny *= (size_t)o.ys[d];
    }
    a = ops_randf(o.na, kind == LUTHIER__BINARY_POW ? 0.1f : -2.0f, 2.0f);
    b = ops_randf(o.nb, -2.0f, 2.0f);
    if (kind == LUTHIER__BINARY_DIV || kind == LUTHIER__BINARY_MOD || kind == LUTHIER__BINARY_FMOD)
        for (i = 0; i < o.nb; i++) b[i] = b[i] < 0 ? b[i] - 0.5f : b[i] + 0.5f;
    if (kind >= LUTHIER__BINARY_EQUAL && kind <= LUTHIER__BINARY_XOR) /* equal values and zeros occur */
        for (i = 0; i < o.na; i++) a[i] = i % 3 ? a[i] : i % 2 ? 0.0f : b[i % o.nb];
    if (with_nan && o.na > 2) a[o.na / 2] = NAN;
    if (with_nan && o.nb > 2) b[o.nb - 1] = NAN;
    o.a = a;
    o.b = b;
    ref = ops_refbuf(o.ny);
    for (i = 0; i < o.ny; i++) { /* index y -> a, b by broadcasting */
        size_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
        for (d = rank - 1; d >= 0; d--) {
            const size_t id = rest % (size_t)o.ys[d];
            rest /= (size_t)o.ys[d];
            if (as[d] != 1) ia += id * sa;
            if (bs[d] != 1) ib += id * sb;
            sa *= (size_t)as[d];
            sb *= (size_t)bs[d];
        }
        ref[i] = ops_clampd(ops_binary_refop(kind, a[ia], b[ib]), act, o.cmin, o.cmax);
    }
    for (o.alias = 0; o.alias < 3; o.alias++) {
        if (o.alias == 1 && o.na != o.ny) continue;
        if (o.alias == 2 && o.nb != o.ny) continue;
        sprintf(what, "binary kind %d rank %d a %lldx%lldx%lld.. b %lldx%lldx%lld.. act %d alias %d", (int)kind, rank,
                (long long)as[0], (long long)(rank > 1 ? as[1] : 1), (long long)(rank > 2 ? as[2] : 1),
                (long long)bs[0], (long long)(rank > 1 ? bs[1] : 1), (long long)(rank > 2 ? bs[2] : 1), (int)act,
                o.alias);
        ops_verify(what, ops_binary_call, &o, o.ny, ref, 1e-30, kind == LUTHIER__BINARY_POW ? 4e-7 : 0);
    }
    free(a);
    free(b);
    free(ref);
}

/* ---- pow and mod against the scalar oracle ---------------------------------------------------- */

static const float ops_pm_special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, INFINITY, -INFINITY,
                                       NAN, 1e-40f, -1e-40f, FLT_MAX, -FLT_MAX, FLT_MIN, 1.5f, -2.5f, 1e10f, -1e10f, 7.0f,
                                       0.1f, 33.0f, -0.75f, 3e-39f, 1.0000001f, 16777215.0f, 16777216.0f, -8388609.0f};

/* bits distance of two floats of one sign (ulps), or a large number */
static uint32_t ops_ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if ((ia < 0) != (ib < 0)) return 0xffffffffu;
    return ia > ib ? (uint32_t)(ia - ib) : (uint32_t)(ib - ia);
}

/* got against the oracle want: NaN for NaN; zeros, infinities and (ulps == 0) everything
   bit for bit; else within ulps */
static int ops_pm_close(float got, float want, uint32_t ulps) {
    if (want != want) return got != got;
    if (want == 0.0f || isinf(want) || ulps == 0) return memcmp(&got, &want, 4) == 0;
    return ops_ulps(got, want) <= ulps;
}

/* kind over n pairs (b broadcast from one value when bscalar) on every variant: POW within
   ulps of powf, MOD / FMOD bit for bit luthier__op_fmod's; returns failures */
static int ops_pm_run(luthier__binary kind, const float *a, const float *b, size_t n, int bscalar, uint32_t ulps) {
    const int64_t sn[1] = {(int64_t)n}, s1[1] = {1};
    float *y = (float *)test_alloc((n ? n : 1) * sizeof(float));
    int v, bad = 0;
    size_t i;
    for (v = 0; v < OE.n && !bad; v++) {
        for (i = 0; i < n; i++) y[i] = test_sentinel();
        if (luthier__op_binary(OE.ctx[v], OE.cfgp[v], kind, a, sn, b, bscalar ? s1 : sn, y, sn, 1, LUTHIER_ACTIVATION_NONE, 0, 0) !=
            LUTHIER_STATUS_OK) {
            CHECK(0, "kind %d n %zu variant %s: %s", (int)kind, n, OE.name[v], luthier_context_error(OE.ctx[v]));
            bad++;
            break;
        }
        for (i = 0; i < n; i++) {
            const float bv = b[bscalar ? 0 : i];
            const float want = kind == LUTHIER__BINARY_POW ? powf(a[i], bv) : luthier__op_fmod(a[i], bv, kind == LUTHIER__BINARY_MOD);
            if (!ops_pm_close(y[i], want, kind == LUTHIER__BINARY_POW ? ulps : 0)) {
                if (bad < 3)
                    CHECK(0, "kind %d n %zu [%zu] variant %s: (%.9g, %.9g) gives %.9g, oracle %.9g", (int)kind, n, i, OE.name[v],
                          (double)a[i], (double)bv, (double)y[i], (double)want);
                bad++;
            }
        }
    }
    free(y);
    return bad;
}

/* a float from raw bits */
static float ops_bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Mod's edges of the float path (an fma of q = rint(fl(|a| / |b|)) and b) and of its hand-over to
   the double path, in eight kinds chosen per element: quotients near half-integers (q off by one
   from the true quotient's nearest integer) and near 2^22 (either side of the hand-over), |a| < |b|
   (near |b| / 2 and |b|), exact multiples (+-0), subnormal a and b (and a normal against a
   subnormal), b near FLT_MAX, raw bit patterns (NaN, inf, anything), both signs of each. */
static void ops_mod_edges(float *a, float *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        const double bb = ldexp(1.0 + 0.5 * (test_rand_float() + 1.0), test_rand_int(-120, 120)); /* [2^e, 2^(e+1)] */
        const int nudge = test_rand_int(-3, 3); /* a few ulps either side */
        float x, y = (float)bb;
        switch (i % 8) {
        case 0: x = (float)(((double)test_rand_int(0, 1 << 22) + 0.5) * (double)y); break; /* k + 1/2 */
        case 1: x = (float)(ldexp(1.0, 22) * (double)y) * (1.0f + (float)test_rand_int(-64, 64) * 0x1p-23f); break;
        case 2: x = (float)(y * (test_rand_int(0, 1) ? 0.5 : 1.0)); break; /* nudged below */
        case 3: /* 12-bit b times |k| <= 2^12: exact */
            y = (float)ldexp((double)test_rand_int(1, 4095), test_rand_int(-130, 100));
            x = y * (float)test_rand_int(-4096, 4096);
            break;
        case 4:
            y = ops_bits_float((uint32_t)test_rand_int(1, 0x7fffff) | (test_rand_int(0, 3) ? 0u : 0x800000u));
            x = test_rand_int(0, 1) ? ops_bits_float((uint32_t)test_rand_int(0, 0x7fffff))
                                    : y * (float)ldexp(1.0 + 0.5 * (test_rand_float() + 1.0), test_rand_int(0, 40));
            break;
        case 5:
            y = FLT_MAX * (1.0f - (float)test_rand_int(0, 1 << 20) * 0x1p-24f);
            x = test_rand_int(0, 1) ? FLT_MAX * (float)(0.5 * (test_rand_float() + 1.0)) : (float)bb;
            break;
        case 6: x = (float)(((double)test_rand_int(0, 1000) + 0.5 * (test_rand_float() + 1.0)) * (double)y); break;
        default:
            x = ops_bits_float((uint32_t)test_rand_u64());
            y = ops_bits_float((uint32_t)test_rand_u64());
            break;
        }
        if (nudge && (i % 8 < 3 || i % 8 == 6) && x != 0.0f) x = nextafterf(x, nudge > 0 ? INFINITY : 0.0f);
        a[i] = test_rand_int(0, 1) ? -x : x;
        b[i] = test_rand_int(0, 1) ? -y : y;
    }
}

/* Pow (general exponents: exp / log in double; the scalar exponents 2, 3, 0.5, 1, -1) and Mod /
   FMod (exact) in every ISA's vector code against powf and luthier__op_fmod: every pair of
   special values (zeros of both signs, infinities, NaN, subnormals, FLT_MAX, odd / even /
   fractional exponents, negative bases), random pairs over wide ranges (quotients past 2^28
   for mod), lengths 1..40 and 1000 (tails), b per element or broadcast; mod's float-path edges
   (ops_mod_edges) in runs of 1 to 79 elements, and each run again one lane later. */
/* Outputs past the last-level cache take streaming stores (luthier__op_stream): the same bits
   as ordinary stores, aligned or not, with tails, on every ISA and thread count; in place and
   small outputs never stream. The caches are shrunk to 4 KB so that tests' sizes stream. */
static void test_op_stream(void) {
    static const size_t lens[] = {1500, 16384 + 5, 3 * 16384 + 77};
    const size_t nmax = 3 * 16384 + 77 + 16;
    float *x = (float *)test_alloc(nmax * sizeof(float)), *b = (float *)test_alloc(nmax * sizeof(float));
    float *y0 = (float *)test_alloc(nmax * sizeof(float)), *y1 = (float *)test_alloc(nmax * sizeof(float));
    size_t i, li;
    int v, off, op;
    test_fill(x, nmax);
    test_fill(b, nmax);
    for (v = 0; v < OE.n; v++) {
        luthier_context *c = OE.ctx[v];
        const luthier_cache_info saved = c->caches;
        CHECK(!luthier__op_stream(c, y1, 1000, x, NULL), "%s: 1000 floats stream under a %zu-byte last level", OE.name[v],
              saved.l3 ? saved.l3 : saved.l2);
        for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (off = 0; off < 2; off++)
                for (op = 0; op < 4; op++) {
                    const size_t n = lens[li];
                    int64_t sh[1], one[1] = {1};
                    float *ya = y0 + off, *yb = y1 + off;
                    luthier_status s0, s1;
                    sh[0] = (int64_t)n;
                    memset(y0, 0, nmax * sizeof(float));
                    memset(y1, 0xff, nmax * sizeof(float));
                    c->caches = saved;
                    s0 = op == 0   ? luthier__op_unary(c, OE.cfgp[v], LUTHIER__UNARY_RELU, 0, 0, x, ya, n)
                         : op == 1 ? luthier__op_unary(c, OE.cfgp[v], LUTHIER__UNARY_GELU_TANH, 0, 0, x, ya, n)
                         : luthier__op_binary(c, OE.cfgp[v], op == 2 ? LUTHIER__BINARY_ADD : LUTHIER__BINARY_MUL, x, sh, b,
                                              op == 2 ? sh : one, ya, sh, 1, LUTHIER_ACTIVATION_RELU, 0, 0);
                    c->caches.l2 = c->caches.l3 = 4096;
                    CHECK(luthier__op_stream(c, yb, n, x, NULL) && !luthier__op_stream(c, x, n, x, NULL),
                          "%s: %zu floats under a 4 KB last level: stream (and not in place)", OE.name[v], n);
                    s1 = op == 0   ? luthier__op_unary(c, OE.cfgp[v], LUTHIER__UNARY_RELU, 0, 0, x, yb, n)
                         : op == 1 ? luthier__op_unary(c, OE.cfgp[v], LUTHIER__UNARY_GELU_TANH, 0, 0, x, yb, n)
                         : luthier__op_binary(c, OE.cfgp[v], op == 2 ? LUTHIER__BINARY_ADD : LUTHIER__BINARY_MUL, x, sh, b,
                                              op == 2 ? sh : one, yb, sh, 1, LUTHIER_ACTIVATION_RELU, 0, 0);
                    c->caches = saved;
                    CHECK(s0 == LUTHIER_STATUS_OK && s1 == LUTHIER_STATUS_OK, "status");
                    for (i = 0; i < n && memcmp(&ya[i], &yb[i], sizeof(float)) == 0; i++) {
                    }
                    CHECK(i == n && yb[n] != yb[n], "%s, op %d, %zu floats at offset %d: streamed output differs at %zu (%g vs %g), "
                          "or wrote past the end", OE.name[v], op, n, off, i, i < n ? ya[i] : 0.0, i < n ? yb[i] : 0.0);
                }
    }
    free(x);
    free(b);
    free(y0);
    free(y1);
}

static void test_op_pow_mod(void) {
    const size_t ns = sizeof ops_pm_special / sizeof ops_pm_special[0], np = ns * ns;
    /* the special exponents, the other integers in [-16, 16] (binary powering in double), 17 */
    static const float scal[] = {2.0f, 3.0f, 0.5f, 1.0f, -1.0f, 1.7f, -2.0f, 0.0f, NAN, INFINITY,
                                 4.0f, 5.0f, -3.0f, 7.0f, 16.0f, -16.0f, 11.0f, -0.5f, 17.0f, -INFINITY};
    static const float ints[] = {-2.0f, 4.0f, 5.0f, -3.0f, 7.0f, 16.0f, -16.0f, -9.0f};
    const size_t nr = T.quick ? 4000 : 40000;
    float *a = (float *)test_alloc((np > nr ? np : nr) * sizeof(float)), *b = (float *)test_alloc((np > nr ? np : nr) * sizeof(float));
    size_t i, n, k;
    int kind, fails = 0;
    for (i = 0; i < np; i++) {
        a[i] = ops_pm_special[i / ns];
        b[i] = ops_pm_special[i % ns];
    }
    for (kind = 0; kind < 3; kind++) {
        const luthier__binary kd = kind == 0 ? LUTHIER__BINARY_POW : kind == 1 ? LUTHIER__BINARY_MOD : LUTHIER__BINARY_FMOD;
        fails += ops_pm_run(kd, a, b, np, 0, 1);
        for (n = 1; n <= 40 && !fails; n++) fails += ops_pm_run(kd, a + 7 * n, b + 7 * n, n, 0, 1);
        for (k = 0; k < sizeof scal / sizeof scal[0] && !fails; k++) /* one exponent / divisor: the special paths */
            fails += ops_pm_run(kd, a, &scal[k], np, 1, k == 1 ? 2 : 1);
    }
    for (i = 0; i < nr; i++) { /* pow: bases over 2^-60 .. 2^60 of both signs, exponents +-24 (integers too) */
        const double e = (double)test_rand_int(-60, 60) + 0.5 * (test_rand_float() + 1.0);
        a[i] = (float)(exp2(e) * (test_rand_int(0, 3) ? 1 : -1));
        b[i] = test_rand_int(0, 2) ? 24.0f * test_rand_float() : (float)test_rand_int(-40, 40);
    }
    for (n = 0; n < nr && !fails; n += 1000) fails += ops_pm_run(LUTHIER__BINARY_POW, a + n, b + n, nr - n < 1000 ? nr - n : 1000, 0, 1);
    for (k = 0; k < sizeof ints / sizeof ints[0] && !fails; k++) /* random bases, one integer exponent */
        fails += ops_pm_run(LUTHIER__BINARY_POW, a, &ints[k], nr < 1000 ? nr : 1000, 1, 1);
    for (i = 0; i < nr; i++) { /* mod: quotients from 2^-40 to 2^40 */
        a[i] = (float)(exp2((double)test_rand_int(-50, 50) * test_rand_float()) * 1000.0 * test_rand_float());
        b[i] = (float)(exp2((double)test_rand_int(-20, 20) * test_rand_float()) * test_rand_float());
        if (i % 97 == 0) a[i] = b[i] * (float)test_rand_int(-1000, 1000); /* exact multiples: +-0 */
    }
    for (kind = 0; kind < 2; kind++)
        for (n = 0; n < nr && !fails; n += 1000)
            fails += ops_pm_run(kind ? LUTHIER__BINARY_MOD : LUTHIER__BINARY_FMOD, a + n, b + n, nr - n < 1000 ? nr - n : 1000, 0, 0);
    ops_mod_edges(a, b, nr);
    for (kind = 0; kind < 2; kind++) /* lengths with tails, and every pair one lane later */
        for (n = 0, k = 1; n + 1 < nr && !fails; n += k, k = k % 67 + 13) {
            const size_t len = nr - n - 1 < k ? nr - n - 1 : k;
            fails += ops_pm_run(kind ? LUTHIER__BINARY_MOD : LUTHIER__BINARY_FMOD, a + n, b + n, len, 0, 0);
            fails += ops_pm_run(kind ? LUTHIER__BINARY_MOD : LUTHIER__BINARY_FMOD, a + n + 1, b + n + 1, len, 0, 0);
        }
    free(a);
    free(b);
}

/* |got - ref| in units of the last place of ref's binade in float (2^-149 below the normals;
   inf counts as 2^128): 0.5 at most for a correctly rounded result. NaN against NaN is 0, NaN
   against a number or a zero of the other sign 1e9; where ref rounds to an infinity, inf or 1e9. */
static double ops_ulps_ref(float got, double ref) {
    const double g = isinf(got) ? copysign(0x1p128, (double)got) : (double)got;
    const double ar = fabs(ref);
    int ex;
    if (ref != ref) return got != got ? 0 : 1e9;
    if (got != got) return 1e9;
    if (ref == 0.0 && got == 0.0f) return !signbit(ref) == !signbit(got) ? 0 : 1e9;
    if (isinf((float)ref)) return got == (float)ref ? 0 : 1e9; /* overflows in float: inf */
    frexp(ar, &ex); /* ar in [2^(ex-1), 2^ex) */
    return fabs(g - ref) / ldexp(1.0, ex - 1 - 23 > -149 ? ex - 1 - 23 : -149);
}

/* Pow with a tensor exponent against double libm's pow rounded to float, in ulps, on every ISA
   (float path where the ISA has an fma, double path otherwise and for the lanes it does not
   hold): x near 1 with large y, |y log2 x| swept up to overflow and down past the subnormals,
   subnormal x, random x over 2^-126 .. 2^126 with |y| <= 30, negative x with integer y, every
   pair of the special values, and |y log2 x| < 31 (whole vectors of the float path). Each sweep
   also has a special x every 997 lanes (one vector of the float path in ~60 falls back), and
   runs again one lane later: a lane's bits must not depend on its neighbours. Within 1 ulp of the exact value everywhere (so within 1 ulp of the correctly
   rounded one); within 0.75 ulp for normal x and |y log2 x| < 30 on AVX-512 (its tables'
   path, and the double path past it), x just above powers of two (the tables' hardest bucket)
   included. */
static void test_op_pow_libm(void) {
    const size_t n = T.quick ? 40000 : 400000;
    const int64_t sn[1] = {(int64_t)n};
    float *a = (float *)test_alloc(n * sizeof(float)), *b = (float *)test_alloc(n * sizeof(float));
    float *y = (float *)test_alloc(n * sizeof(float));
    static const char *names[] = {"x near 1, large y", "|y log2 x| to the limits", "subnormal x", "random x, |y| <= 30",
                                  "negative x, integer y", "special pairs", "|y log2 x| < 31 (float path)",
                                  "x up to 2^-5 above 2^k, |t|<16"};
    const int avx512 = (luthier_cpu_features() & LUTHIER_CPU_AVX512F) != 0;
    int sweep, v;
    for (sweep = 0; sweep < 8; sweep++) {
        size_t i, wi = 0;
        for (i = 0; i < n; i++) {
            const double u = 0.5 * (test_rand_float() + 1.0); /* [0, 1] */
            const size_t ns = sizeof ops_pm_special / sizeof ops_pm_special[0];
            double xv, yv;
            switch (sweep) {
            case 0: /* x = 1 +- k 2^-24 or 1 +- 2^-5..2^-24; t up to +-150 */
                xv = 1.0 + (test_rand_int(0, 1) ? (double)test_rand_int(-300, 300) * 0x1p-24 : ldexp(test_rand_float(), -test_rand_int(5, 24)));
                yv = (test_rand_float() * 150.0) / log2(xv == 1.0 ? 1.5 : xv);
                break;
            case 1: /* x over 2^-100 .. 2^100, t = y log2 x in [-152, 130] */
                xv = exp2((double)test_rand_int(-100, 100) + u);
                yv = (-152.0 + 282.0 * (0.5 * (test_rand_float() + 1.0))) / log2(xv);
                break;
            case 2: /* subnormal x */
                xv = ldexp(u, -126 - test_rand_int(0, 23));
                yv = test_rand_int(0, 3) ? 1.2 * test_rand_float() : (double)test_rand_int(-3, 3) * 0.5;
                break;
            case 3:
                xv = exp2(126.0 * test_rand_float()) * (test_rand_int(0, 7) ? 1 : -1);
                yv = 30.0 * test_rand_float();
                break;
            case 4: /* |y| up to 2^25 (the even integers past 2^24) */
                xv = -exp2(4.0 * test_rand_float());
                yv = test_rand_int(0, 7) ? (double)test_rand_int(-40, 40) : ldexp((double)test_rand_int(-64, 64), test_rand_int(0, 19));
                break;
            case 5:
                xv = ops_pm_special[(i / ns) % ns];
                yv = ops_pm_special[i % ns];
                break;
            case 7: /* the AVX-512 tables' lowest bucket (r up to 2^-5), |t| < 16: the bound is 0.75 ulp there */
                xv = ldexp(1.0 + ldexp(u, -5), test_rand_int(0, 3) ? 0 : test_rand_int(-3, 3));
                yv = 16.0 * test_rand_float() / log2(xv == 1.0 ? 1.5 : xv);
                break;
            default: /* normal x of both signs over 2^-60 .. 2^60, |t| < 31 (y an integer for x < 0) */
                xv = exp2(120.0 * u - 60.0) * (test_rand_int(0, 1) ? 1 : -1);
                yv = 31.0 * test_rand_float() / log2(fabs(xv));
                if (xv < 0) yv = trunc(yv);
                break;
            }
            a[i] = (float)xv;
            b[i] = (float)yv;
            if (sweep != 5 && i % 997 == 13) a[i] = ops_pm_special[i % ns]; /* a special lane among float-path lanes */
        }
        for (v = 0; v < OE.n; v++) {
            double worst = 0, worst_mid = 0; /* all lanes; those with a normal x and |y log2 x| < 30 */
            if (v != 0 && OE.group[v] == OE.group[v - 1]) continue; /* once per ISA */
            CHECK(luthier__op_binary(OE.ctx[v], NULL, LUTHIER__BINARY_POW, a, sn, b, sn, y, sn, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
                      LUTHIER_STATUS_OK, "status");
            for (i = 0; i < n; i++) {
                const double e = ops_ulps_ref(y[i], pow((double)a[i], (double)b[i]));
                if (e > worst) worst = e, wi = i;
                if (e > worst_mid && isnormal(a[i]) && fabs((double)b[i] * log2(fabs((double)a[i]))) < 30) worst_mid = e;
            }
            printf("    pow %-26s ISA group %d: max %.3f ulp at (%.9g, %.9g), %.3f where |y log2 x| < 30\n", names[sweep],
                   OE.group[v], worst, (double)a[wi], (double)b[wi], worst_mid);
            CHECK(worst < 1, "pow %s: %.3f ulps at (%.9g, %.9g): %.9g, libm %.9g", names[sweep], worst, (double)a[wi],
                  (double)b[wi], (double)y[wi], pow((double)a[wi], (double)b[wi]));
            CHECK(!avx512 || OE.group[v] != 0 || worst_mid < 0.75, "pow %s, AVX-512: %.3f ulps where |y log2 x| < 30", names[sweep],
                  worst_mid); /* (the tables' lanes: 0.7 measured over 2^25 pairs) */
        }
        { /* the same pairs one lane later: other neighbours in every vector, the same bits */
            const int64_t sm[1] = {(int64_t)n - 1};
            float *y1 = (float *)test_alloc(n * sizeof(float));
            CHECK(luthier__op_binary(OE.ctx[0], NULL, LUTHIER__BINARY_POW, a + 1, sm, b + 1, sm, y1, sm, 1, LUTHIER_ACTIVATION_NONE, 0,
                                     0) == LUTHIER_STATUS_OK &&
                      luthier__op_binary(OE.ctx[0], NULL, LUTHIER__BINARY_POW, a, sn, b, sn, y, sn, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
                          LUTHIER_STATUS_OK,
                  "status");
            for (i = 0; i + 1 < n && (memcmp(&y[i + 1], &y1[i], 4) == 0 || (y1[i] != y1[i] && y[i + 1] != y[i + 1])); i++) {
            }
            CHECK(i + 1 == n, "pow %s: (%.9g, %.9g) gives %.9g or %.9g by its neighbours", names[sweep], (double)a[i + 1],
                  (double)b[i + 1], (double)y[i + 1], (double)y1[i]);
            free(y1);
        }
    }
    free(a);
    free(b);
    free(y);
}

static void test_op_binary(void) {
    const int iters = T.quick ? 60 : 300;
    int it, k;
    /* the fast paths by name */
    for (k = 0; k < (int)LUTHIER__BINARY_COUNT; k++) {
        const int64_t eq[1] = {40000}, sc[1] = {1}, nhwc_a[4] = {2, 5, 7, 19}, nhwc_b[4] = {1, 1, 1, 19};
        const int64_t nchw_a[4] = {2, 19, 7, 5}, nchw_b[4] = {1, 19, 1, 1}, small[2] = {3, 1}, s1[2] = {1, 1};
        ops_binary_case((luthier__binary)k, eq, eq, 1, LUTHIER_ACTIVATION_NONE, 0);
        ops_binary_case((luthier__binary)k, eq, sc, 1, LUTHIER_ACTIVATION_RELU, 0);
        ops_binary_case((luthier__binary)k, sc, eq, 1, LUTHIER_ACTIVATION_NONE, 0);
        ops_binary_case((luthier__binary)k, nhwc_a, nhwc_b, 4, LUTHIER_ACTIVATION_RELU6, 0);
        ops_binary_case((luthier__binary)k, nhwc_b, nhwc_a, 4, LUTHIER_ACTIVATION_NONE, 0);
        ops_binary_case((luthier__binary)k, nchw_a, nchw_b, 4, LUTHIER_ACTIVATION_CLAMP, 0);
        ops_binary_case((luthier__binary)k, nchw_b, nchw_a, 4, LUTHIER_ACTIVATION_NONE, 1);
        ops_binary_case((luthier__binary)k, small, s1, 2, LUTHIER_ACTIVATION_NONE, 0);
        ops_binary_case((luthier__binary)k, s1, s1, 2, LUTHIER_ACTIVATION_NONE, 0);
    }
    { /* pow with the special scalar exponents and a generic one */
        const float exps[6] = {2.0f, 3.0f, 0.5f, 1.0f, -1.0f, 1.7f};
        int e;
        for (e = 0; e < 6; e++) {
            ops_binary_arg o;
            float *a = ops_randf(1000, 0.05f, 3.0f);
            double *ref = ops_refbuf(1000);
            size_t i;
            memset(&o, 0, sizeof o);
            o.kind = LUTHIER__BINARY_POW;
            o.rank = 2;
            o.as[0] = o.ys[0] = 10;
            o.as[1] = o.ys[1] = 100;
            o.bs[0] = o.bs[1] = 1;
            o.a = a;
            o.b = &exps[e];
            o.ny = 1000;
            for (i = 0; i < 1000; i++) ref[i] = pow(a[i], exps[e]);
            ops_verify("pow scalar exponent", ops_binary_call, &o, 1000, ref, 0, 3.6e-7);
            free(a);
            free(ref);
        }
    }
    /* random ranks 1..6 with random broadcast patterns */
    for (it = 0; it < iters; it++) {
        int64_t as[6], bs[6];
        const int rank = test_rand_int(1, 6);
        int d;
        size_t tot = 1;
        for (d = 0; d < rank; d++) {
            const int64_t n = test_rand_int(1, rank > 3 ? 4 : 9);
            const int pat = test_rand_int(0, 3);
            as[d] = pat == 1 ? 1 : n;
            bs[d] = pat == 2 ? 1 : n;
            if (pat == 3 && test_rand_int(0, 1)) as[d] = bs[d] = 1;
            tot *= (size_t)n;
        }
        if (tot > 20000) continue;
        ops_binary_case((luthier__binary)test_rand_int(0, LUTHIER__BINARY_COUNT - 1), as, bs, rank, /* clamps only */
                        (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_CLAMP), test_rand_int(0, 4) == 0);
    }
}

/* ---- where and cast (f32 forms: the vector passes) ---------------------------------------------- */

typedef struct ops_wc_arg {
    const float *c, *x, *y;
    const int64_t *cs, *xs, *ys, *os;
    int rank, cast; /* cast: -1 where, else the luthier__cast target */
    size_t n;
} ops_wc_arg;

static luthier_status ops_wc_call(luthier_context *c, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_wc_arg *o = (const ops_wc_arg *)arg;
    if (o->cast >= 0) return luthier__op_cast(c, cfg, 0, (luthier__cast)o->cast, o->x, out, o->n);
    return luthier__op_where(c, cfg, o->c, o->cs, o->x, NULL, o->xs, o->y, NULL, o->ys, out, NULL, o->os, o->rank);
}

/* nearest binary16 value (ties to even) from the exponent's quantum */
static double ops_f16_ref(double f) {
    double a = fabs(f), q;
    int e;
    if (f != f || isinf(f) || a == 0) return f;
    if (a >= 65520.0) return f < 0 ? -INFINITY : INFINITY;
    e = (int)floor(log2(a));
    if (ldexp(1.0, e) > a) e--;
    if (ldexp(1.0, e + 1) <= a) e++;
    q = ldexp(1.0, (e < -14 ? -14 : e) - 10);
    return nearbyint(f / q) * q;
}

/* where with three-way broadcasting (a long row over the split, NaN conditions true) and casts of
   f32 to bool and f16 (the rounding edges, subnormal halves, overflow) on every variant: against
   the formulas and bit-identical within an ISA. */
static void test_op_where_cast(void) {
    const int64_t cs[3] = {3, 1, 40001}, xs[3] = {1, 5, 40001}, ys[3] = {3, 5, 1}, os[3] = {3, 5, 40001};
    const size_t nc = 3 * 40001, nx = 5 * 40001, ny = 15, no = 15 * 40001;
    float *c = ops_randf(nc, -1, 1), *x = ops_randf(nx, -5, 5), *y = ops_randf(ny, -5, 5), *h = ops_randf(no, -70000, 70000);
    double *ref = ops_refbuf(no);
    ops_wc_arg o;
    size_t i;
    int k;
    for (i = 0; i < nc; i += 3) c[i] = 0.0f;
    c[7] = NAN, c[10] = -0.0f;
    for (i = 0; i < no; i++) { /* o = (a, b, e): c[a][0][e], x[0][b][e], y[a][b][0] */
        const size_t e = i % 40001, b = i / 40001 % 5, a = i / 200005;
        ref[i] = c[a * 40001 + e] != 0 ? x[b * 40001 + e] : y[a * 5 + b];
    }
    memset(&o, 0, sizeof o);
    o.c = c, o.x = x, o.y = y, o.cs = cs, o.xs = xs, o.ys = ys, o.os = os, o.rank = 3, o.cast = -1;
    ops_verify("where", ops_wc_call, &o, no, ref, 0, 0);
    for (i = 0; i < no; i++) { /* f16 edges: halves near 2048 (ties), tiny values, 65504 .. 65520 */
        if (i % 7 == 0) h[i] = h[i] * 1e-9f;
        if (i % 11 == 0) h[i] = 2048.0f + (float)(i % 64) * 0.125f;
        if (i % 13 == 0) h[i] = 65504.0f + (float)(i % 32);
    }
    h[1] = NAN, h[2] = INFINITY, h[3] = -INFINITY, h[4] = -0.0f, h[5] = 2.9802322e-8f, h[6] = 8.940697e-8f;
    for (k = 0; k < 2; k++) {
        for (i = 0; i < no; i++) ref[i] = k ? ops_f16_ref(h[i]) : h[i] != 0 ? 1.0 : 0.0;
        o.cast = k ? LUTHIER__CAST_F16 : LUTHIER__CAST_BOOL;
        o.x = h;
        o.n = no;
        ops_verify(k ? "cast f16" : "cast bool", ops_wc_call, &o, no, ref, 0, 0);
    }
    free(c);
    free(x);
    free(y);
    free(h);
    free(ref);
}

/* ---- pooling --------------------------------------------------------------------------------- */

typedef struct ops_pool_arg {
    int is_max, cip;
    const float *x;
    size_t n, h, w, c, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
    int adaptive;
} ops_pool_arg;
static luthier_status ops_pool_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_pool_arg *p = (const ops_pool_arg *)arg;
    if (p->adaptive) return luthier__op_adaptive_avgpool_nhwc(ctx, cfg, p->x, p->n, p->h, p->w, p->c, out, p->oh, p->ow);
    return luthier__op_pool2d_nhwc(ctx, cfg, p->is_max, p->x, p->n, p->h, p->w, p->c, p->kh, p->kw, p->sh, p->sw, p->dh,
                                   p->dw, p->pt, p->pl, p->pb, p->pr, p->cip, out, p->oh, p->ow);
}

/* PyTorch output size with asymmetric padding and ceil mode */
static size_t ops_pool_out(size_t in, size_t k, size_t s, size_t d, size_t pa, size_t pb, int ceil_mode) {
    const long eff = (long)(d * (k - 1) + 1), span = (long)(in + pa + pb) - eff;
    long o;
    if (span < 0) return 0;
    o = (ceil_mode ? (span + (long)s - 1) / (long)s : span / (long)s) + 1;
    if (ceil_mode && (size_t)((o - 1) * (long)s) >= in + pa) o--;
    return (size_t)o;
}

static void ops_pool_ref(const ops_pool_arg *p, double *ref) {
    size_t b, oy, ox, ch;
    for (b = 0; b < p->n; b++)
        for (oy = 0; oy < p->oh; oy++)
            for (ox = 0; ox < p->ow; ox++)
                for (ch = 0; ch < p->c; ch++) {
                    double acc = p->is_max ? -INFINITY : 0.0;
                    long cnt = 0, cnt_pad_y = 0, cnt_pad_x = 0;
                    size_t i, k;
                    int nan = 0;
                    for (i = 0; i < p->kh; i++) {
                        const long yy = (long)(oy * p->sh) - (long)p->pt + (long)(i * p->dh);
                        if (yy >= -(long)p->pt && yy < (long)(p->h + p->pb)) cnt_pad_y++;
                    }
                    for (k = 0; k < p->kw; k++) {
                        const long xx = (long)(ox * p->sw) - (long)p->pl + (long)(k * p->dw);
                        if (xx >= -(long)p->pl && xx < (long)(p->w + p->pr)) cnt_pad_x++;
                    }
                    for (i = 0; i < p->kh; i++)
                        for (k = 0; k < p->kw; k++) {
                            const long yy = (long)(oy * p->sh) - (long)p->pt + (long)(i * p->dh);
                            const long xx = (long)(ox * p->sw) - (long)p->pl + (long)(k * p->dw);
                            double v;
                            if (yy < 0 || yy >= (long)p->h || xx < 0 || xx >= (long)p->w) continue;
                            v = p->x[((b * p->h + (size_t)yy) * p->w + (size_t)xx) * p->c + ch];
                            if (v != v) nan = 1;
                            if (p->is_max) acc = v > acc ? v : acc;
                            else acc += v;
                            cnt++;
                        }
                    if (!p->is_max) acc = cnt ? acc / (double)(p->cip ? cnt_pad_y * cnt_pad_x : cnt) : 0.0;
                    if (nan) acc = NAN;
                    ref[((b * p->oh + oy) * p->ow + ox) * p->c + ch] = acc;
                }
}

static void test_op_pool2d(void) {
    const int iters = T.quick ? 60 : 300;
    int it;
    for (it = 0; it < iters; it++) {
        ops_pool_arg p;
        double *ref;
        float *x;
        size_t nx, ny;
        int ceil_mode;
        char what[200];
        memset(&p, 0, sizeof p);
        p.is_max = test_rand_int(0, 1);
        p.cip = test_rand_int(0, 1);
        ceil_mode = test_rand_int(0, 1);
        p.n = (size_t)test_rand_int(1, 2);
        p.h = (size_t)test_rand_int(1, 13);
        p.w = (size_t)test_rand_int(1, 13);
        p.c = (size_t)(it % 7 == 0 ? test_rand_int(60, 140) : test_rand_int(1, 40));
        p.kh = (size_t)test_rand_int(1, 4);
        p.kw = (size_t)test_rand_int(1, 4);
        p.sh = (size_t)test_rand_int(1, 3);
        p.sw = (size_t)test_rand_int(1, 3);
        p.dh = (size_t)(test_rand_int(0, 3) == 0 ? 2 : 1);
        p.dw = (size_t)(test_rand_int(0, 3) == 0 ? 2 : 1);
        p.pt = (size_t)test_rand_int(0, (int)p.kh / 2);
        p.pb = (size_t)test_rand_int(0, (int)p.kh / 2);
        p.pl = (size_t)test_rand_int(0, (int)p.kw / 2);
        p.pr = (size_t)test_rand_int(0, (int)p.kw / 2);
        p.oh = ops_pool_out(p.h, p.kh, p.sh, p.dh, p.pt, p.pb, ceil_mode);
        p.ow = ops_pool_out(p.w, p.kw, p.sw, p.dw, p.pl, p.pr, ceil_mode);
        if (!p.oh || !p.ow) continue;
        nx = p.n * p.h * p.w * p.c;
        ny = p.n * p.oh * p.ow * p.c;
        x = ops_randf(nx, -1.0f, 1.0f);
        if (it % 11 == 0) x[nx / 2] = NAN;
        p.x = x;
        ref = ops_refbuf(ny);
        ops_pool_ref(&p, ref);
        sprintf(what, "%s pool n%zu %zux%zux%zu k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu ceil %d cip %d",
                p.is_max ? "max" : "avg", p.n, p.h, p.w, p.c, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, p.pb,
                p.pr, ceil_mode, p.cip);
        ops_verify(what, ops_pool_call, &p, ny, ref, p.is_max ? 0 : 1e-6, p.is_max ? 0 : 1e-6);
        free(x);
        free(ref);
    }
    { /* ResNet stem max pool and GoogLeNet-like 3x3 s1 pad 1 with large c */
        const size_t cfgs[2][8] = {{1, 32, 32, 64, 3, 2, 1, 1}, {1, 7, 7, 832, 3, 1, 1, 0}};
        int ci;
        for (ci = 0; ci < 2; ci++) {
            ops_pool_arg p;
            float *x;
            double *ref;
            size_t ny;
            memset(&p, 0, sizeof p);
            p.n = cfgs[ci][0]; p.h = cfgs[ci][1]; p.w = cfgs[ci][2]; p.c = cfgs[ci][3];
            p.kh = p.kw = cfgs[ci][4]; p.sh = p.sw = cfgs[ci][5]; p.pt = p.pl = p.pb = p.pr = cfgs[ci][6];
            p.dh = p.dw = 1;
            p.is_max = (int)cfgs[ci][7];
            p.oh = ops_pool_out(p.h, p.kh, p.sh, 1, p.pt, p.pb, 0);
            p.ow = ops_pool_out(p.w, p.kw, p.sw, 1, p.pl, p.pr, 0);
            ny = p.n * p.oh * p.ow * p.c;
            x = ops_randf(p.n * p.h * p.w * p.c, -1.0f, 1.0f);
            p.x = x;
            ref = ops_refbuf(ny);
            ops_pool_ref(&p, ref);
            ops_verify("pool network shape", ops_pool_call, &p, ny, ref, 1e-6, 1e-6);
            free(x);
            free(ref);
        }
    }
}

static void test_op_adaptive_avgpool(void) {
    const int iters = T.quick ? 40 : 200;
    int it;
    for (it = 0; it < iters + 2; it++) {
        ops_pool_arg p;
        float *x;
        double *ref;
        size_t ny, b, oy, ox, ch;
        memset(&p, 0, sizeof p);
        p.adaptive = 1;
        if (it == iters) { /* ResNet global pool */
            p.n = 1; p.h = p.w = 7; p.c = 2048; p.oh = p.ow = 1;
        } else if (it == iters + 1) {
            p.n = 2; p.h = 13; p.w = 9; p.c = 300; p.oh = 5; p.ow = 4;
        } else {
            p.n = (size_t)test_rand_int(1, 2);
            p.h = (size_t)test_rand_int(1, 12);
            p.w = (size_t)test_rand_int(1, 12);
            p.c = (size_t)(it % 5 == 0 ? test_rand_int(250, 530) : test_rand_int(1, 40));
            p.oh = (size_t)test_rand_int(1, (int)p.h + 2);
            p.ow = (size_t)test_rand_int(1, (int)p.w + 2);
        }
        ny = p.n * p.oh * p.ow * p.c;
        x = ops_randf(p.n * p.h * p.w * p.c, -1.0f, 1.0f);
        p.x = x;
        ref = ops_refbuf(ny);
        for (b = 0; b < p.n; b++)
            for (oy = 0; oy < p.oh; oy++)
                for (ox = 0; ox < p.ow; ox++)
                    for (ch = 0; ch < p.c; ch++) {
                        const size_t hs = (size_t)floor((double)(oy * p.h) / (double)p.oh);
                        const size_t he = (size_t)ceil((double)((oy + 1) * p.h) / (double)p.oh);
                        const size_t ws = (size_t)floor((double)(ox * p.w) / (double)p.ow);
                        const size_t we = (size_t)ceil((double)((ox + 1) * p.w) / (double)p.ow);
                        double s = 0;
                        size_t yy, xx;
                        for (yy = hs; yy < he; yy++)
                            for (xx = ws; xx < we; xx++) s += x[((b * p.h + yy) * p.w + xx) * p.c + ch];
                        ref[((b * p.oh + oy) * p.ow + ox) * p.c + ch] = s / (double)((he - hs) * (we - ws));
                    }
        ops_verify("adaptive avgpool", ops_pool_call, &p, ny, ref, 1e-6, 1e-6);
        free(x);
        free(ref);
    }
}

/* Global average pooling over whole images (squeeze-excitation blocks pool 20x20 to 80x80 maps):
   all-positive inputs make the rounding of a running sum grow with h w. The sum of row sums
   rounds about h + w times: on 112 x 112 its relative error is about 2.4e-7 rms (1.2e-6 is 5
   sigma), one running sum's about 2.5e-6 rms, so 1.2e-6 passes the first for any data and fails
   the second (built with -DLUTHIER__OP_POOL_ROW_SUMS=1000000: early outputs of all 4 shapes fail). */
static void test_op_global_avgpool_rounding(void) {
    static const size_t hw[4][2] = {{80, 80}, {112, 112}, {40, 40}, {57, 131}};
    int t;
    for (t = 0; t < 4; t++) {
        ops_pool_arg p;
        float *x;
        double *ref;
        size_t b, ch, i;
        memset(&p, 0, sizeof p);
        p.adaptive = 1;
        p.n = 2, p.h = hw[t][0], p.w = hw[t][1], p.c = t == 3 ? 35 : t == 1 ? 80 : 48, p.oh = p.ow = 1;
        x = ops_randf(p.n * p.h * p.w * p.c, 0.5f, 1.5f);
        p.x = x;
        ref = ops_refbuf(p.n * p.c);
        for (b = 0; b < p.n; b++)
            for (ch = 0; ch < p.c; ch++) {
                double s = 0;
                for (i = 0; i < p.h * p.w; i++) s += x[(b * p.h * p.w + i) * p.c + ch];
                ref[b * p.c + ch] = s / (double)(p.h * p.w);
            }
        ops_verify("global avgpool rounding", ops_pool_call, &p, p.n * p.c, ref, 0, 1.2e-6);
        free(x);
        free(ref);
    }
}

/* ---- normalization --------------------------------------------------------------------------- */

typedef struct ops_norm_arg {
    int op; /* 0 affine, 1 layernorm, 2 lrn */
    const float *x, *p1, *p2;
    size_t outer, c, inner;
    luthier_activation act;
    float cmin, cmax, f1, f2, f3;
    int in_place;
    size_t n;
} ops_norm_arg;
static luthier_status ops_norm_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_norm_arg *a = (const ops_norm_arg *)arg;
    const float *x = a->x;
    if (a->in_place) {
        memcpy(out, a->x, a->n * sizeof(float));
        x = out;
    }
    if (a->op == 0)
        return luthier__op_channel_affine(ctx, cfg, x, out, a->outer, a->c, a->inner, a->p1, a->p2, a->act, a->cmin, a->cmax);
    if (a->op == 1) return luthier__op_layernorm(ctx, cfg, x, out, a->outer, a->c, a->p1, a->p2, a->f1);
    return luthier__op_lrn_nhwc(ctx, cfg, x, out, a->outer, a->c, a->inner, a->f1, a->f2, a->f3);
}

static void test_op_channel_affine(void) {
    const int iters = T.quick ? 40 : 200;
    int it;
    for (it = 0; it < iters; it++) {
        ops_norm_arg a;
        float *x, *sc, *sh;
        double *ref;
        size_t i;
        memset(&a, 0, sizeof a);
        a.outer = (size_t)test_rand_int(1, 3);
        a.c = (size_t)test_rand_int(1, it % 4 == 0 ? 300 : 40);
        a.inner = test_rand_int(0, 1) ? 1 : (size_t)test_rand_int(1, it % 9 == 0 ? 20000 : 70);
        a.n = a.outer * a.c * a.inner;
        a.act = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_CLAMP); /* (the clamps: see luthier_activation) */
        a.cmin = -0.2f;
        a.cmax = 0.5f;
        x = ops_randf(a.n, -1.0f, 1.0f);
        sc = ops_randf(a.c, -2.0f, 2.0f);
        sh = ops_randf(a.c, -1.0f, 1.0f);
        a.x = x;
        a.p1 = test_rand_int(0, 3) ? sc : NULL;
        a.p2 = test_rand_int(0, 3) ? sh : NULL;
        a.in_place = test_rand_int(0, 1);
        ref = ops_refbuf(a.n);
        for (i = 0; i < a.n; i++) {
            const size_t ch = i / a.inner % a.c;
            const float v = x[i] * (a.p1 ? sc[ch] : 1.0f) + (a.p2 ? sh[ch] : 0.0f);
            ref[i] = ops_clampd(v, a.act, a.cmin, a.cmax);
        }
        ops_verify("channel affine", ops_norm_call, &a, a.n, ref, 1e-7, 1e-6);
        free(x);
        free(sc);
        free(sh);
        free(ref);
    }
}

static void test_op_layernorm(void) {
    const int iters = T.quick ? 30 : 150;
    int it;
    double worst = 0;
    for (it = 0; it < iters; it++) {
        ops_norm_arg a;
        float *x, *g, *b;
        double *ref;
        size_t r, i;
        const float offset = it % 3 == 0 ? 1e4f : it % 3 == 1 ? -300.0f : 0.0f;
        memset(&a, 0, sizeof a);
        a.op = 1;
        a.outer = (size_t)test_rand_int(1, 5);
        a.c = (size_t)(it % 6 == 0 ? test_rand_int(700, 3000) : test_rand_int(1, 100));
        a.n = a.outer * a.c;
        a.f1 = it % 2 ? 1e-5f : 1e-12f;
        x = ops_randf(a.n, -1.0f, 1.0f);
        for (i = 0; i < a.n; i++) x[i] += offset;
        g = ops_randf(a.c, 0.5f, 1.5f);
        b = ops_randf(a.c, -0.5f, 0.5f);
        a.x = x;
        a.p1 = test_rand_int(0, 3) ? g : NULL;
        a.p2 = test_rand_int(0, 3) ? b : NULL;
        a.in_place = test_rand_int(0, 1);
        ref = ops_refbuf(a.n);
        for (r = 0; r < a.outer; r++) {
            double m = 0, v = 0, rs;
            for (i = 0; i < a.c; i++) m += x[r * a.c + i];
            m /= (double)a.c;
            for (i = 0; i < a.c; i++) v += (x[r * a.c + i] - m) * (x[r * a.c + i] - m);
            v /= (double)a.c;
            rs = 1.0 / sqrt(v + (double)a.f1);
            for (i = 0; i < a.c; i++)
                ref[r * a.c + i] = (x[r * a.c + i] - m) * rs * (a.p1 ? g[i] : 1.0) + (a.p2 ? b[i] : 0.0);
        }
        /* |normalized| <= sqrt(c): absolute 2e-6 (plus relative) on values of order 1 */
        ops_verify("layernorm", ops_norm_call, &a, a.n, ref, 2e-6, 2e-6);
        worst = ops_max_err > worst ? ops_max_err : worst;
        free(x);
        free(g);
        free(b);
        free(ref);
    }
    printf("    layernorm: worst error / tolerance %.3f (offsets up to 1e4 with unit std)\n", worst);
}

static void test_op_lrn(void) {
    const int iters = T.quick ? 30 : 150;
    int it;
    for (it = 0; it < iters; it++) {
        ops_norm_arg a;
        float *x;
        double *ref;
        size_t p, ch;
        memset(&a, 0, sizeof a);
        a.op = 2;
        a.outer = (size_t)test_rand_int(1, 30);
        a.c = (size_t)test_rand_int(1, it % 4 == 0 ? 200 : 40);
        a.inner = (size_t)test_rand_int(1, 7); /* size */
        a.f1 = it % 2 ? 1e-4f : 0.5f;          /* alpha */
        a.f2 = it % 3 == 0 ? 0.75f : 0.5f + (float)test_rand_int(0, 10) * 0.1f; /* beta */
        a.f3 = it % 4 == 1 ? 2.0f : 1.0f;     /* bias */
        a.n = a.outer * a.c;
        x = ops_randf(a.n, -3.0f, 3.0f);
        a.x = x;
        ref = ops_refbuf(a.n);
        for (p = 0; p < a.outer; p++)
            for (ch = 0; ch < a.c; ch++) {
                const long lo = (long)ch - (long)((a.inner - 1) / 2), hi = (long)ch + (long)(a.inner / 2);
                double s = 0;
                long k;
                for (k = lo; k <= hi; k++)
                    if (k >= 0 && k < (long)a.c) s += (double)x[p * a.c + (size_t)k] * x[p * a.c + (size_t)k];
                ref[p * a.c + ch] = x[p * a.c + ch] / pow(a.f3 + a.f1 / (double)a.inner * s, a.f2);
            }
        ops_verify("lrn", ops_norm_call, &a, a.n, ref, 1e-7, 2e-6);
        free(x);
        free(ref);
    }
}

/* ---- softmax --------------------------------------------------------------------------------- */

typedef struct ops_softmax_arg {
    const float *x;
    size_t outer, len, inner, n;
    int log, in_place;
} ops_softmax_arg;
static luthier_status ops_softmax_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_softmax_arg *a = (const ops_softmax_arg *)arg;
    if (a->in_place) {
        memcpy(out, a->x, a->n * sizeof(float));
        return luthier__op_softmax(ctx, cfg, out, out, a->outer, a->len, a->inner, a->log);
    }
    return luthier__op_softmax(ctx, cfg, a->x, out, a->outer, a->len, a->inner, a->log);
}

static void test_op_softmax(void) {
    const int iters = T.quick ? 40 : 200;
    int it;
    double worst = 0;
    for (it = 0; it < iters + 1; it++) {
        ops_softmax_arg a;
        float *x;
        double *ref;
        size_t o, i, r;
        memset(&a, 0, sizeof a);
        if (it == iters) { /* GPT-2 vocabulary row */
            a.outer = 1; a.len = T.quick ? 5000 : 50257; a.inner = 1;
        } else {
            a.outer = (size_t)test_rand_int(1, 6);
            a.len = (size_t)test_rand_int(1, it % 5 == 0 ? 3000 : 70);
            a.inner = test_rand_int(0, 1) ? 1 : (size_t)test_rand_int(1, it % 7 == 0 ? 300 : 20);
        }
        a.log = test_rand_int(0, 1);
        a.in_place = test_rand_int(0, 1);
        a.n = a.outer * a.len * a.inner;
        x = ops_randf(a.n, -8.0f, 8.0f);
        if (it % 6 == 1 && a.len > 2) x[1 * a.inner] = -INFINITY; /* a masked entry */
        if (it % 6 == 2) for (i = 0; i < a.n; i++) x[i] += 60.0f; /* exp would overflow unshifted */
        a.x = x;
        ref = ops_refbuf(a.n);
        for (o = 0; o < a.outer; o++)
            for (i = 0; i < a.inner; i++) {
                double m = -INFINITY, s = 0;
                for (r = 0; r < a.len; r++) m = fmax(m, x[(o * a.len + r) * a.inner + i]);
                for (r = 0; r < a.len; r++) s += exp(x[(o * a.len + r) * a.inner + i] - m);
                for (r = 0; r < a.len; r++) {
                    const double v = x[(o * a.len + r) * a.inner + i] - m;
                    ref[(o * a.len + r) * a.inner + i] = a.log ? v - log(s) : exp(v) / s;
                }
            }
        ops_verify(a.log ? "log_softmax" : "softmax", ops_softmax_call, &a, a.n, ref, a.log ? 2e-6 : 1e-12, 2e-6);
        worst = ops_max_err > worst ? ops_max_err : worst;
        free(x);
        free(ref);
    }
    printf("    softmax: worst error / tolerance %.3f (tolerance: softmax 2e-6 relative)\n", worst);
}

/* ---- data movement --------------------------------------------------------------------------- */

typedef struct ops_move_arg {
    int op; /* 0 transpose, 1 concat, 2 split, 3 gather */
    const float *x;
    int rank, perm[6], count;
    int64_t shape[6];
    const float *xs[8];
    size_t lens[8], outer, inner, axis_len, num;
    const int64_t *idx;
} ops_move_arg;
static luthier_status ops_move_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_move_arg *a = (const ops_move_arg *)arg;
    if (a->op == 0) return luthier__op_transpose(ctx, cfg, a->x, out, a->rank, a->shape, a->perm);
    if (a->op == 1) return luthier__op_concat(ctx, cfg, a->xs, a->lens, a->count, a->outer, a->inner, out);
    if (a->op == 2) { /* split into consecutive parts of out (the concatenation of the ys) */
        float *ys[8];
        size_t off = 0;
        int k;
        for (k = 0; k < a->count; k++) {
            ys[k] = out + off;
            off += a->outer * a->lens[k] * a->inner;
        }
        return luthier__op_split(ctx, cfg, a->x, a->outer, a->inner, a->count, a->lens, ys);
    }
    return luthier__op_gather(ctx, cfg, a->x, a->outer, a->axis_len, a->inner, a->idx, a->num, out);
}

static void ops_transpose_case(int rank, const int64_t *shape, const int *perm) {
    ops_move_arg a;
    size_t n = 1, i, xst[6], s = 1;
    float *x;
    double *ref;
    int d;
    memset(&a, 0, sizeof a);
    a.rank = rank;
    for (d = 0; d < rank; d++) {
        a.shape[d] = shape[d];
        a.perm[d] = perm[d];
        n *= (size_t)shape[d];
    }
    for (d = rank - 1; d >= 0; d--) {
        xst[d] = s;
        s *= (size_t)shape[d];
    }
    x = ops_randf(n ? n : 1, -1.0f, 1.0f);
    a.x = x;
    ref = ops_refbuf(n);
    for (i = 0; i < n; i++) {
        size_t rest = i, xo = 0;
        for (d = rank - 1; d >= 0; d--) {
            const size_t ys = (size_t)shape[perm[d]];
            xo += rest % ys * xst[perm[d]];
            rest /= ys;
        }
        ref[i] = x[xo];
    }
    ops_verify("transpose", ops_move_call, &a, n, ref, 0, 0);
    free(x);
    free(ref);
}

static void test_op_transpose(void) {
    const int iters = T.quick ? 80 : 400;
    int it;
    { /* NCHW <-> NHWC, attention heads, big 2-D */
        const int64_t s1[4] = {2, 37, 9, 11}, s2[4] = {2, 9, 11, 37}, s3[4] = {2, 7, 12, 64}, s4[2] = {300, 257};
        const int p1[4] = {0, 2, 3, 1}, p2[4] = {0, 3, 1, 2}, p3[4] = {0, 2, 1, 3}, p4[2] = {1, 0};
        const int64_t s5[3] = {1, 1, 40000};
        const int p5[3] = {2, 0, 1};
        ops_transpose_case(4, s1, p1);
        ops_transpose_case(4, s2, p2);
        ops_transpose_case(4, s3, p3);
        ops_transpose_case(2, s4, p4);
        ops_transpose_case(3, s5, p5);
    }
    for (it = 0; it < iters; it++) {
        const int rank = test_rand_int(1, 6);
        int64_t shape[6];
        int perm[6], d;
        size_t n = 1;
        for (d = 0; d < rank; d++) {
            shape[d] = test_rand_int(1, rank > 3 ? 6 : 40);
            if (test_rand_int(0, 7) == 0) shape[d] = 1;
            n *= (size_t)shape[d];
            perm[d] = d;
        }
        if (n > 50000) continue;
        for (d = rank - 1; d > 0; d--) {
            const int e = test_rand_int(0, d), t = perm[d];
            perm[d] = perm[e];
            perm[e] = t;
        }
        ops_transpose_case(rank, shape, perm);
    }
}

static void test_op_concat_split(void) {
    const int iters = T.quick ? 40 : 200;
    int it;
    for (it = 0; it < iters; it++) {
        ops_move_arg a;
        float *xs[8], *whole;
        double *ref;
        size_t total = 0, i, o, off, sum_lens = 0;
        int k;
        memset(&a, 0, sizeof a);
        a.count = test_rand_int(1, 8);
        a.outer = (size_t)test_rand_int(1, 5);
        a.inner = (size_t)test_rand_int(1, it % 5 == 0 ? 9000 : 30);
        for (k = 0; k < a.count; k++) {
            a.lens[k] = (size_t)test_rand_int(0, 6);
            sum_lens += a.lens[k];
            xs[k] = ops_randf(a.outer * a.lens[k] * a.inner + 1, -1.0f, 1.0f);
            a.xs[k] = xs[k];
            total += a.outer * a.lens[k] * a.inner;
        }
        /* concat: reference from the parts */
        ref = ops_refbuf(total);
        whole = (float *)test_alloc((total ? total : 1) * sizeof(float));
        for (o = 0, i = 0; o < a.outer; o++)
            for (k = 0; k < a.count; k++) {
                const size_t pk = a.lens[k] * a.inner;
                for (off = 0; off < pk; off++, i++) {
                    ref[i] = xs[k][o * pk + off];
                    whole[i] = xs[k][o * pk + off];
                }
            }
        a.op = 1;
        ops_verify("concat", ops_move_call, &a, total, ref, 0, 0);
        /* split of the concatenation gives the parts back, laid end to end */
        a.op = 2;
        a.x = whole;
        for (k = 0, i = 0; k < a.count; k++)
            for (off = 0; off < a.outer * a.lens[k] * a.inner; off++, i++) ref[i] = xs[k][off];
        ops_verify("split", ops_move_call, &a, total, ref, 0, 0);
        (void)sum_lens;
        for (k = 0; k < a.count; k++) free(xs[k]);
        free(whole);
        free(ref);
    }
}

static void test_op_gather(void) {
    const int iters = T.quick ? 40 : 200;
    int it, v;
    for (it = 0; it < iters; it++) {
        ops_move_arg a;
        float *x;
        double *ref;
        int64_t *idx;
        size_t n, o, q, e;
        memset(&a, 0, sizeof a);
        a.op = 3;
        a.outer = (size_t)test_rand_int(1, 4);
        a.axis_len = (size_t)test_rand_int(1, 30);
        a.inner = (size_t)test_rand_int(1, it % 6 == 0 ? 20000 : 70);
        a.num = (size_t)test_rand_int(0, 12);
        n = a.outer * a.axis_len * a.inner;
        x = ops_randf(n, -1.0f, 1.0f);
        idx = (int64_t *)test_alloc((a.num ? a.num : 1) * sizeof(int64_t));
        for (q = 0; q < a.num; q++) idx[q] = test_rand_int(-(int)a.axis_len, (int)a.axis_len - 1);
        a.x = x;
        a.idx = idx;
        ref = ops_refbuf(a.outer * a.num * a.inner);
        for (o = 0; o < a.outer; o++)
            for (q = 0; q < a.num; q++) {
                const size_t src = (size_t)(idx[q] < 0 ? idx[q] + (int64_t)a.axis_len : idx[q]);
                for (e = 0; e < a.inner; e++)
                    ref[(o * a.num + q) * a.inner + e] = x[(o * a.axis_len + src) * a.inner + e];
            }
        ops_verify("gather", ops_move_call, &a, a.outer * a.num * a.inner, ref, 0, 0);
        free(x);
        free(idx);
        free(ref);
    }
    { /* out of range, after the sign fix: error with the exact message, nothing written */
        const float data[6] = {1, 2, 3, 4, 5, 6};
        const int64_t bad[3][2] = {{0, 3}, {-4, 1}, {2, 100}};
        const size_t pos[3] = {1, 0, 1};
        float out[4];
        int b;
        for (v = 0; v < OE.n; v++)
            for (b = 0; b < 3; b++) {
                char expect[128];
                luthier_status s;
                int i;
                for (i = 0; i < 4; i++) out[i] = test_sentinel();
                s = luthier__op_gather(OE.ctx[v], OE.cfgp[v], data, 2, 3, 1, bad[b], 2, out);
                sprintf(expect, "gather: index %lld at position %zu is out of range [-3, 3)", (long long)bad[b][pos[b]], pos[b]);
                CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT, "bad index %d: status %s", b, luthier_status_string(s));
                CHECK(strcmp(luthier_context_error(OE.ctx[v]), expect) == 0, "message '%s', expected '%s'",
                      luthier_context_error(OE.ctx[v]), expect);
                for (i = 0; i < 4; i++) CHECK(test_is_sentinel(out[i]), "gather wrote output before failing");
            }
    }
}

/* ---- attention ------------------------------------------------------------------------------- */

typedef struct ops_att_arg {
    const float *q, *k, *v;
    size_t bh, sq, skv, d, dv;
    float scale;
    int causal;
} ops_att_arg;
static luthier_status ops_att_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, float *out) {
    const ops_att_arg *a = (const ops_att_arg *)arg;
    const size_t nsc = luthier__op_attention_scratch_floats(luthier_context_num_threads(ctx), a->sq, a->skv);
    float *scratch = (float *)test_alloc((nsc ? nsc : 1) * sizeof(float));
    luthier_status s = luthier__op_attention(ctx, cfg, a->q, a->k, a->v, out, a->bh, a->sq, a->skv, a->d, a->dv,
                                             a->scale, a->causal, scratch);
    free(scratch);
    return s;
}

static void ops_att_case(size_t bh, size_t sq, size_t skv, size_t d, size_t dv, int causal) {
    ops_att_arg a;
    float *q = ops_randf(bh * sq * d + 1, -1.0f, 1.0f), *k = ops_randf(bh * skv * d + 1, -1.0f, 1.0f);
    float *v = ops_randf(bh * skv * dv + 1, -1.0f, 1.0f);
    double *ref = ops_refbuf(bh * sq * dv), *sc = ops_refbuf(skv);
    size_t b, i, j, t;
    char what[128];
    a.q = q; a.k = k; a.v = v;
    a.bh = bh; a.sq = sq; a.skv = skv; a.d = d; a.dv = dv;
    a.scale = d ? 1.0f / sqrtf((float)d) : 1.0f;
    a.scale *= 2.0f; /* sharper distributions than 1/sqrt(d) with uniform inputs */
    a.causal = causal;
    for (b = 0; b < bh; b++)
        for (i = 0; i < sq; i++) {
            const long lim = causal ? (long)i + (long)skv - (long)sq : (long)skv - 1;
            double m = -INFINITY, s = 0;
            size_t nk = lim < 0 ? 0 : (size_t)lim + 1 < skv ? (size_t)lim + 1 : skv;
            for (j = 0; j < nk; j++) {
                double dot = 0;
                for (t = 0; t < d; t++) dot += (double)q[(b * sq + i) * d + t] * k[(b * skv + j) * d + t];
                sc[j] = dot * a.scale;
                m = sc[j] > m ? sc[j] : m;
            }
            for (j = 0; j < nk; j++) s += (sc[j] = exp(sc[j] - m));
            for (t = 0; t < dv; t++) {
                double acc = 0;
                for (j = 0; j < nk; j++) acc += sc[j] * v[(b * skv + j) * dv + t];
                ref[(b * sq + i) * dv + t] = nk ? acc / s : 0.0;
            }
        }
    sprintf(what, "attention bh %zu sq %zu skv %zu d %zu dv %zu causal %d", bh, sq, skv, d, dv, causal);
    /* outputs are convex combinations of v in [-1, 1]: absolute tolerance */
    ops_verify(what, ops_att_call, &a, bh * sq * dv, ref, 3e-6, 0);
    free(q); free(k); free(v); free(ref); free(sc);
}

static void test_op_attention(void) {
    const int iters = T.quick ? 25 : 120;
    int it;
    ops_att_case(T.quick ? 2 : 12, 128, 128, 64, 64, 0); /* BERT-base */
    ops_att_case(T.quick ? 2 : 12, 1, 129, 64, 64, 1);   /* GPT-2 decode step */
    ops_att_case(2, 20, 20, 64, 64, 1);                  /* GPT-2 prompt */
    ops_att_case(1, 17, 40, 300, 70, 1);                 /* d > 256: dot path with many rows */
    ops_att_case(1, 9, 5, 8, 3, 1);                      /* sq > skv: the first queries see nothing */
    for (it = 0; it < iters; it++) {
        const size_t sq = (size_t)test_rand_int(1, 40);
        const size_t skv = test_rand_int(0, 1) ? sq : sq + (size_t)test_rand_int(0, 40);
        ops_att_case((size_t)test_rand_int(1, 3), sq, skv, (size_t)test_rand_int(1, 80), (size_t)test_rand_int(1, 90),
                     test_rand_int(0, 1));
    }
}

/* ---- arguments ------------------------------------------------------------------------------- */

static void test_op_bad_arguments(void) {
    luthier_context *c = OE.n > 2 ? OE.ctx[2] : OE.ctx[0];
    luthier__op_cfg cfg;
    float x[4] = {1, 2, 3, 4}, y[4];
    const float r3[3] = {1, 1, 1}, r0[2] = {0, 0};
    const int64_t s[1] = {4};
    memset(&cfg, 0, sizeof cfg);
    cfg.ratios = r3;
    cfg.num_ratios = 3;
    CHECK(luthier__op_unary(c, &cfg, LUTHIER__UNARY_RELU, 0, 0, x, y, 4) == LUTHIER_STATUS_INVALID_ARGUMENT, "3 ratios");
    cfg.ratios = r0;
    cfg.num_ratios = luthier_context_num_threads(c) == 2 && c == OE.ctx[2] ? 2 : 1;
    CHECK(luthier__op_unary(c, &cfg, LUTHIER__UNARY_RELU, 0, 0, x, y, 4) == LUTHIER_STATUS_INVALID_ARGUMENT, "zero ratios");
    cfg.ratios = NULL;
    cfg.num_ratios = 0;
    cfg.schedule = (luthier_schedule)7;
    CHECK(luthier__op_unary(c, &cfg, LUTHIER__UNARY_RELU, 0, 0, x, y, 4) == LUTHIER_STATUS_INVALID_ARGUMENT, "schedule");
    CHECK(luthier__op_unary(c, NULL, LUTHIER__UNARY_COUNT, 0, 0, x, y, 4) == LUTHIER_STATUS_INVALID_ARGUMENT, "kind");
    CHECK(luthier__op_binary(c, NULL, LUTHIER__BINARY_COUNT, x, s, x, s, y, s, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT, "binary kind");
    CHECK(luthier__op_binary(c, NULL, LUTHIER__BINARY_ADD, x, s, x, s, y, s, 7, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT, "rank 7");
}

/* Rough throughput of the main streaming kernels (informational; 1 thread and all threads). */
static void test_op_timing(void) {
    const size_t n = (size_t)1 << 20;
    float *x = ops_randf(n, -4.0f, 4.0f), *y = (float *)test_alloc(n * sizeof(float));
    const luthier__unary kinds[4] = {LUTHIER__UNARY_RELU, LUTHIER__UNARY_EXP, LUTHIER__UNARY_GELU_ERF, LUTHIER__UNARY_TANH};
    const char *names[4] = {"relu", "exp", "gelu_erf", "tanh"};
    int k, v, rep;
    if (T.quick) {
        free(x);
        free(y);
        return;
    }
    for (v = 0; v < 2 && v < OE.n; v++)
        for (k = 0; k < 4; k++) {
            double best = 1e30;
            for (rep = 0; rep < 5; rep++) {
                struct timespec t0, t1;
                double dt;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                luthier__op_unary(OE.ctx[v], NULL, kinds[k], 0, 0, x, y, n);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
                best = dt < best ? dt : best;
            }
            printf("    %-9s %d thread(s): %.2f Gelem/s\n", names[k], luthier_context_num_threads(OE.ctx[v]),
                   (double)n / best * 1e-9);
        }
    free(x);
    free(y);
}

static void run_ops_tests(void) {
    ops_env_create();
    RUN(test_op_unary_accuracy);
    RUN(test_op_unary_special);
    RUN(test_op_unary_exact);
    RUN(test_op_log_ulps);
    RUN(test_op_unary_shapes);
    RUN(test_op_binary);
    RUN(test_op_pow_mod);
    RUN(test_op_pow_libm);
    RUN(test_op_stream);
    RUN(test_op_where_cast);
    RUN(test_op_pool2d);
    RUN(test_op_adaptive_avgpool);
    RUN(test_op_global_avgpool_rounding);
    RUN(test_op_channel_affine);
    RUN(test_op_layernorm);
    RUN(test_op_lrn);
    RUN(test_op_softmax);
    RUN(test_op_transpose);
    RUN(test_op_concat_split);
    RUN(test_op_gather);
    RUN(test_op_attention);
    RUN(test_op_bad_arguments);
    RUN(test_op_timing);
    ops_env_destroy();
}
