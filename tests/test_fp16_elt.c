/* The element-wise operators on fp16 activations (luthier__op_unary_h16, luthier__op_binary_h16:
   the fp32 code on halves widened in registers, and Armv8.2 FP16 lanes for ReLU, clip, add, sub,
   mul, max, min) against two references: double math on the fp16 operands, rounded once to fp16
   (exactly for the kinds whose result is exact or correctly rounded, else within one fp16 step),
   and the fp32 operator on the widened operands, narrowed (the same value or both NaN). Lengths
   1..67 (every tail), one long row split over units, broadcasting of either operand, fp32 second
   operands, +-0, +-inf, NaN, a fused clamp; 1 and 2 threads; every form this CPU runs (features
   masked: no FP16 arithmetic, no AVX-512, no AVX2). Then fp16 plans: element-wise steps take no
   workspace. Included by test_main.c after test_fp16.c. */

/* x rounded to fp16 once (round to nearest even; overflow to inf), as a float */
static float h16e_round(double x) {
    double a = fabs(x), ulp, q;
    int e;
    if (x != x || a == INFINITY) return (float)x;
    if (a == 0) return (float)x;
    e = (int)floor(log2(a));
    if (ldexp(1.0, e) > a) e--; /* (log2's rounding) */
    if (ldexp(1.0, e + 1) <= a) e++;
    if (e < -14) e = -14;
    ulp = ldexp(1.0, e - 10);
    q = nearbyint(a / ulp) * ulp;
    if (q >= 65520.0) q = INFINITY;
    return (float)(x < 0 ? -q : q);
}

/* one fp16 step at v's magnitude (the subnormal step below 2^-14) */
static double h16e_step(double v) {
    int e;
    v = fabs(v);
    if (!(v < INFINITY)) return 0;
    e = v < ldexp(1.0, -14) ? -14 : (int)floor(log2(v));
    return ldexp(1.0, e - 10);
}

/* n random fp16 operands: values of [-8, 8] of every step size, some tiny (subnormal) or large,
   and with specials (+-0, +-inf, NaN) at random places when `specials` */
static uint16_t *h16e_operand(size_t n, int specials) {
    static const uint16_t sp[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff};
    uint16_t *h = (uint16_t *)test_alloc(n * sizeof(uint16_t) + 2);
    size_t i;
    for (i = 0; i < n; i++) {
        const int r = test_rand_int(0, 19);
        double v = test_rand_float() * 8.0;
        if (r == 0) v *= 1e-5;
        else if (r == 1) v *= 4000.0;
        h[i] = specials && r == 2 ? sp[test_rand_int(0, (int)(sizeof sp / sizeof sp[0]) - 1)] : luthier__f32_to_f16((float)v);
    }
    return h;
}

typedef struct h16e_unary_case {
    luthier__unary kind;
    float a, b;
    int exact; /* the result is the operand's (or a bound's) value: bit for bit */
} h16e_unary_case;

static double h16e_unary_ref(const h16e_unary_case *c, double x) {
    double t;
    switch (c->kind) {
    case LUTHIER__UNARY_RELU: return x < 0 ? 0 : x;
    case LUTHIER__UNARY_CLIP: return x < c->a ? c->a : x > c->b ? c->b : x;
    case LUTHIER__UNARY_NEG: return -x;
    case LUTHIER__UNARY_ABS: return fabs(x);
    case LUTHIER__UNARY_LEAKY_RELU: return x < 0 ? (double)c->a * x : x;
    case LUTHIER__UNARY_HARD_SIGMOID: t = (double)c->a * x + c->b; return t < 0 ? 0 : t > 1 ? 1 : t;
    case LUTHIER__UNARY_HARD_SWISH: t = x + 3; return x * (t < 0 ? 0 : t > 6 ? 6 : t) / 6;
    case LUTHIER__UNARY_SIGMOID: return 1 / (1 + exp(-x));
    case LUTHIER__UNARY_SILU: return x / (1 + exp(-x));
    case LUTHIER__UNARY_TANH: return tanh(x);
    case LUTHIER__UNARY_EXP: return exp(x);
    case LUTHIER__UNARY_GELU_ERF: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    default: /* GELU_TANH */
        return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    }
}

/* got (fp16) against the double reference (finite operands only) and against the fp32 pass's
   bits narrowed (f32: every operand); *shown limits the lines printed */
static int h16e_check(uint16_t got, double want, uint16_t f32, int exact, int finite, const char *what, size_t i, int *shown) {
    const float g = luthier__f16_to_f32(got), w = h16e_round(want), p = luthier__f16_to_f32(f32);
    int ok = (g == p) || (g != g && p != p);
    if (finite && ok) {
        if (exact || w != w) ok = g == w || (g != g && w != w);
        else ok = g == w || fabs((double)g - want) <= h16e_step(want); /* (w: overflow to inf) */
    }
    if (!ok && (*shown)++ < 3)
        printf("    %s: [%zu] got %.9g (0x%04x), fp32 pass %.9g, double %.9g\n", what, i, g, got, p, want);
    return ok;
}

/* the feature sets to run: as detected, then with the fp16 arithmetic, AVX-512 and AVX2 masked
   in turn (each only where it changes the form run) */
static int h16e_features(const luthier_context *ctx, unsigned *out) {
    static const unsigned drop[] = {LUTHIER_CPU_FP16, LUTHIER_CPU_AVX512F, LUTHIER_CPU_AVX2_FMA};
    unsigned f = ctx->cpu_features;
    int n = 0, k;
    out[n++] = f;
    for (k = 0; k < 3; k++)
        if (f & drop[k]) out[n++] = f &= ~drop[k];
    return n;
}

static void test_fp16_elt_unary(void) {
    static const h16e_unary_case cases[] = {
        {LUTHIER__UNARY_RELU, 0, 0, 1},          {LUTHIER__UNARY_CLIP, 0.0f, 6.0f, 1},
        {LUTHIER__UNARY_CLIP, -0.7f, 1.3f, 1},   {LUTHIER__UNARY_NEG, 0, 0, 1},
        {LUTHIER__UNARY_ABS, 0, 0, 1},           {LUTHIER__UNARY_LEAKY_RELU, 0.01f, 0, 0},
        {LUTHIER__UNARY_HARD_SIGMOID, 0.2f, 0.5f, 0}, {LUTHIER__UNARY_HARD_SWISH, 0, 0, 0},
        {LUTHIER__UNARY_SIGMOID, 0, 0, 0},       {LUTHIER__UNARY_SILU, 0, 0, 0},
        {LUTHIER__UNARY_TANH, 0, 0, 0},          {LUTHIER__UNARY_EXP, 0, 0, 0},
        {LUTHIER__UNARY_GELU_ERF, 0, 0, 0},      {LUTHIER__UNARY_GELU_TANH, 0, 0, 0}};
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int t, ci, fi, nf;
    unsigned feats[4];
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        const unsigned saved = ctx->cpu_features;
        nf = h16e_features(ctx, feats);
        for (fi = 0; fi < nf; fi++)
            for (ci = 0; ci < ncases; ci++) {
                const h16e_unary_case *c = &cases[ci];
                size_t len;
                for (len = 1; len <= 68; len++) {
                    const size_t n = len == 68 ? (size_t)LUTHIER__OP_GRAIN * 2 + 37 : len; /* (68: units) */
                    uint16_t *x = h16e_operand(n, 1), *y = (uint16_t *)test_alloc(n * 2 + 2), *ref = (uint16_t *)test_alloc(n * 2 + 2);
                    float *xf = (float *)test_alloc(n * sizeof(float));
                    test_guarded gx;
                    const uint16_t *xg = (const uint16_t *)test_guarded_copy(&gx, x, n * sizeof(uint16_t));
                    size_t i, bad = 0;
                    int shown = 0;
                    char what[128];
                    luthier_status s;
                    snprintf(what, sizeof what, "unary kind %d (%g, %g), %zu elements, features 0x%x, %d threads", (int)c->kind,
                             (double)c->a, (double)c->b, n, feats[fi], t);
                    for (i = 0; i < n; i++) xf[i] = luthier__f16_to_f32(x[i]);
                    ctx->cpu_features = feats[fi]; /* (the fp32 pass of the same ISA: passes differ in the last bit) */
                    CHECK(luthier__op_unary(ctx, NULL, c->kind, c->a, c->b, xf, xf, n) == LUTHIER_STATUS_OK, "%s: fp32", what);
                    for (i = 0; i < n; i++) ref[i] = luthier__f32_to_f16(xf[i]);
                    y[n] = 0xbeef;
                    s = luthier__op_unary_h16(ctx, NULL, c->kind, c->a, c->b, xg, y, n);
                    CHECK(s == LUTHIER_STATUS_OK && y[n] == 0xbeef, "%s: status %d, past the end 0x%04x", what, (int)s, y[n]);
                    for (i = 0; i < n; i++) {
                        const double xv = luthier__f16_to_f32(x[i]);
                        bad += !h16e_check(y[i], h16e_unary_ref(c, xv), ref[i], c->exact, xv - xv == 0, what, i, &shown);
                    }
                    CHECK(bad == 0, "%s: %zu of %zu differ", what, bad, n);
                    /* in place */
                    memcpy(y, x, n * sizeof(uint16_t));
                    CHECK(luthier__op_unary_h16(ctx, NULL, c->kind, c->a, c->b, y, y, n) == LUTHIER_STATUS_OK, "%s: in place", what);
                    for (i = 0, bad = 0; i < n; i++) bad += y[i] != ref[i] && !(luthier__f16_to_f32(y[i]) != luthier__f16_to_f32(y[i]) && luthier__f16_to_f32(ref[i]) != luthier__f16_to_f32(ref[i]));
                    CHECK(bad == 0, "%s: in place, %zu of %zu differ from the fp32 pass", what, bad, n);
                    test_guarded_free(&gx);
                    free(x), free(y), free(ref), free(xf);
                    if (T.quick && len >= 20 && len < 60) len += 6;
                }
            }
        ctx->cpu_features = saved;
        luthier_context_destroy(ctx);
    }
}

static double h16e_binary_ref(luthier__binary k, double a, double b) {
    switch (k) {
    case LUTHIER__BINARY_ADD: return a + b;
    case LUTHIER__BINARY_SUB: return a - b;
    case LUTHIER__BINARY_MUL: return a * b;
    case LUTHIER__BINARY_DIV: return a / b;
    case LUTHIER__BINARY_MAX: return a != a || b != b ? NAN : a > b ? a : b;
    case LUTHIER__BINARY_MIN: return a != a || b != b ? NAN : a < b ? a : b;
    default: return a < 0 ? a * b : a; /* PRELU */
    }
}

/* One binary case: y [d0, d1, d2] from a and b, each of the output's shape or 1 along the dims
   whose bit is set in abc / bbc (bit 0: d0 ... ), b fp16 or fp32 (hb); a fused clamp or not. */
static void h16e_binary_one(luthier_context *ctx, luthier__binary k, const int64_t *ys, int abc, int bbc, int hb,
                            luthier_activation act, float lo, float hi, const char *tag) {
    int64_t as[3], bs[3];
    size_t na = 1, nb = 1, n = 1, i, bad = 0;
    /* exact: one rounding of the exact result (an fp32 operand's product or sum rounds twice) */
    int d, shown = 0, exact = k != LUTHIER__BINARY_DIV && (hb || k == LUTHIER__BINARY_MAX || k == LUTHIER__BINARY_MIN);
    uint16_t *a, *b16, *y, *ref;
    float *af, *bf, *yf;
    test_guarded ga, gb2;
    const void *ag, *bg;
    char what[192];
    luthier_status s;
    float clo = -INFINITY, chi = INFINITY;
    const int clamp = luthier__activation_bounds(act, lo, hi, &clo, &chi);
    for (d = 0; d < 3; d++) {
        as[d] = (abc >> d) & 1 ? 1 : ys[d];
        bs[d] = (bbc >> d) & 1 ? 1 : ys[d];
        na *= (size_t)as[d], nb *= (size_t)bs[d], n *= (size_t)ys[d];
    }
    a = h16e_operand(na, 1), b16 = h16e_operand(nb, 1);
    y = (uint16_t *)test_alloc(n * 2 + 2), ref = (uint16_t *)test_alloc(n * 2 + 2);
    af = (float *)test_alloc(na * 4), bf = (float *)test_alloc(nb * 4), yf = (float *)test_alloc(n * 4);
    for (i = 0; i < na; i++) af[i] = luthier__f16_to_f32(a[i]);
    for (i = 0; i < nb; i++) bf[i] = hb ? luthier__f16_to_f32(b16[i]) : test_rand_float() * 3.0f;
    if (k == LUTHIER__BINARY_PRELU && !hb)
        for (i = 0; i < nb; i++) bf[i] = 0.01f + 0.2f * fabsf(bf[i]);
    snprintf(what, sizeof what, "%s: binary kind %d, %lldx%lldx%lld, a 1s 0x%x, b 1s 0x%x (%s), clamp %d, features 0x%x", tag,
             (int)k, (long long)ys[0], (long long)ys[1], (long long)ys[2], abc, bbc, hb ? "fp16" : "fp32", clamp,
             ctx->cpu_features);
    CHECK(luthier__op_binary(ctx, NULL, k, af, as, bf, bs, yf, ys, 3, act, lo, hi) == LUTHIER_STATUS_OK, "%s: fp32", what);
    for (i = 0; i < n; i++) ref[i] = luthier__f32_to_f16(yf[i]);
    ag = test_guarded_copy(&ga, a, na * 2);
    bg = hb ? test_guarded_copy(&gb2, b16, nb * 2) : test_guarded_copy(&gb2, bf, nb * 4);
    y[n] = 0xbeef;
    s = luthier__op_binary_h16(ctx, NULL, k, ag, 1, as, bg, hb, bs, y, ys, 3, act, lo, hi);
    CHECK(s == LUTHIER_STATUS_OK && y[n] == 0xbeef, "%s: status %d, past the end 0x%04x", what, (int)s, y[n]);
    for (i = 0; i < n; i++) {
        size_t c[3], ia = 0, ib = 0;
        double av, bv, w;
        c[2] = i % (size_t)ys[2], c[1] = i / (size_t)ys[2] % (size_t)ys[1], c[0] = i / (size_t)(ys[2] * ys[1]);
        for (d = 0; d < 3; d++) {
            ia = ia * (size_t)as[d] + (as[d] == 1 ? 0 : c[d]);
            ib = ib * (size_t)bs[d] + (bs[d] == 1 ? 0 : c[d]);
        }
        av = af[ia], bv = bf[ib];
        w = h16e_binary_ref(k, av, bv);
        if (clamp && w == w) w = w < clo ? clo : w > chi ? chi : w;
        if (!h16e_check(y[i], w, ref[i], exact, av - av == 0 && bv - bv == 0, what, i, &shown)) {
            if (shown <= 3) printf("      (operands %.9g, %.9g)\n", av, bv);
            bad++;
        }
    }
    CHECK(bad == 0, "%s: %zu of %zu differ", what, bad, n);
    test_guarded_free(&ga), test_guarded_free(&gb2);
    free(a), free(b16), free(y), free(ref), free(af), free(bf), free(yf);
}

static void test_fp16_elt_binary(void) {
    static const luthier__binary kinds[] = {LUTHIER__BINARY_ADD, LUTHIER__BINARY_SUB, LUTHIER__BINARY_MUL, LUTHIER__BINARY_MAX,
                                            LUTHIER__BINARY_MIN, LUTHIER__BINARY_DIV, LUTHIER__BINARY_PRELU};
    static const int bcast[][2] = {{0, 0}, {0, 3}, {0, 4}, {0, 5}, {0, 7}, {1, 0}, {4, 3}, {2, 0}};
    const int nk = (int)(sizeof kinds / sizeof kinds[0]), nb = (int)(sizeof bcast / sizeof bcast[0]);
    int t, fi, nf, ki, len;
    unsigned feats[4];
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        const unsigned saved = ctx->cpu_features;
        nf = h16e_features(ctx, feats);
        for (fi = 0; fi < nf; fi++) {
            ctx->cpu_features = feats[fi];
            for (ki = 0; ki < nk; ki++)
                for (len = 1; len <= 67; len += T.quick && len > 17 ? 7 : 1) {
                    const luthier__binary k = kinds[ki];
                    const int bi = test_rand_int(0, nb - 1), hb = k == LUTHIER__BINARY_PRELU ? 0 : test_rand_int(0, 3) != 0;
                    const int ac = test_rand_int(0, 4);
                    const luthier_activation act = ac == 0 ? LUTHIER_ACTIVATION_RELU : ac == 1 ? LUTHIER_ACTIVATION_RELU6
                                                 : ac == 2 ? LUTHIER_ACTIVATION_CLAMP : LUTHIER_ACTIVATION_NONE;
                    int64_t ys[3];
                    ys[0] = test_rand_int(1, 3), ys[1] = test_rand_int(1, 4), ys[2] = len;
                    h16e_binary_one(ctx, k, ys, len == 1 ? 0 : bcast[bi][0], bcast[bi][1], hb, act, -0.7f, 1.3f, "rows");
                    h16e_binary_one(ctx, k, ys, 0, 0, 1, act, -0.7f, 1.3f, "same shape");
                }
            { /* one long row, split over units (both fp16: the fp16 lanes where the CPU has them) */
                int64_t ys[3];
                ys[0] = 1, ys[1] = 2, ys[2] = (int64_t)LUTHIER__OP_GRAIN + 4099;
                h16e_binary_one(ctx, LUTHIER__BINARY_ADD, ys, 0, 0, 1, LUTHIER_ACTIVATION_RELU6, 0, 0, "long");
                h16e_binary_one(ctx, LUTHIER__BINARY_MUL, ys, 0, 1, 1, LUTHIER_ACTIVATION_NONE, 0, 0, "long, b over d0");
                h16e_binary_one(ctx, LUTHIER__BINARY_MAX, ys, 0, 3, 0, LUTHIER_ACTIVATION_NONE, 0, 0, "long, b a row, fp32");
            }
        }
        ctx->cpu_features = saved;
        luthier_context_destroy(ctx);
    }
}

/* A broadcast -0 keeps its sign in the fp32 pass and the fp16 one: x / -0 is -inf for x > 0. */
static void test_fp16_elt_negative_zero(void) {
    luthier_context *ctx = ctx_threads(1);
    const int64_t s[1] = {5}, one[1] = {1};
    const float a[5] = {1.0f, -2.0f, 3.0f, 0.5f, 7.0f};
    const float nz = -0.0f;
    const uint16_t nzh = 0x8000;
    uint16_t ah[5], yh[5];
    float y[5];
    int i;
    for (i = 0; i < 5; i++) ah[i] = luthier__f32_to_f16(a[i]);
    CHECK(luthier__op_binary(ctx, NULL, LUTHIER__BINARY_DIV, a, s, &nz, one, y, s, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_OK, "fp32");
    CHECK(luthier__op_binary_h16(ctx, NULL, LUTHIER__BINARY_DIV, ah, 1, s, &nzh, 1, one, yh, s, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_OK, "fp16");
    for (i = 0; i < 5; i++) {
        const float want = a[i] > 0 ? -INFINITY : INFINITY;
        CHECK(y[i] == want && luthier__f16_to_f32(yh[i]) == want, "%g / -0: fp32 %g, fp16 %g", (double)a[i], (double)y[i],
              (double)luthier__f16_to_f32(yh[i]));
    }
    luthier_context_destroy(ctx);
}

/* The kinds without an fp16 form are refused (status, message), not run. */
static void test_fp16_elt_refusal(void) {
    luthier_context *ctx = ctx_threads(1);
    const int64_t s[1] = {4};
    uint16_t a[4] = {0}, y[4];
    CHECK(luthier__op_binary_h16(ctx, NULL, LUTHIER__BINARY_POW, a, 1, s, a, 1, s, y, s, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_context_error(ctx), "no fp16 form"),
          "pow: %s", luthier_context_error(ctx));
    CHECK(luthier__op_binary_h16(ctx, NULL, LUTHIER__BINARY_EQUAL, a, 1, s, a, 1, s, y, s, 1, LUTHIER_ACTIVATION_NONE, 0, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT, "equal: %s", luthier_context_error(ctx));
    CHECK(luthier__op_unary_h16(ctx, NULL, LUTHIER__UNARY_COUNT, 0, 0, a, y, 4) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "unary kind: %s", luthier_context_error(ctx));
    luthier_context_destroy(ctx);
}

/* Dense layers [16, 256] -> [16, 256]; with `chain` the element-wise operators between them
   (ReLU, add of the two branches, sigmoid, mul by an fp32 constant, clip, add). */
static void h16e_plan_graph(gb *b, int chain) {
    static const luthier_op ops[] = {LUTHIER_OP_RELU, LUTHIER_OP_SIGMOID, LUTHIER_OP_CLIP};
    luthier_node_desc d;
    int64_t xs[2] = {16, 256}, cs[2] = {1, 256};
    int x, h, h2, c, k, s;
    float *cd;
    memset(b, 0, sizeof *b);
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
    h = fp16_identity(b, "w1", x, 256, 0);
    h2 = fp16_identity(b, "w2", x, 256, 0);
    for (k = 0; chain && k < 3; k++) {
        char name[16];
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "u%d", k);
        d.op = ops[k], d.name = name, d.typed = 1;
        luthier_node_attrs_default(ops[k], &d.attr);
        if (ops[k] == LUTHIER_OP_CLIP) d.attr.clip.min = -1.0f, d.attr.clip.max = 1.0f;
        h = gb_node(b, &d, h, -1, -1);
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "b%d", k);
        d.op = k == 1 ? LUTHIER_OP_MUL : LUTHIER_OP_ADD, d.name = name;
        if (k == 1) {
            cd = fp16_const(b, "c", 2, cs, &c);
            for (s = 0; s < 256; s++) cd[s] = 0.5f + (float)s / 256.0f;
            h = gb_node(b, &d, h, c, -1);
        } else {
            h = gb_node(b, &d, h, h2, -1);
        }
    }
    if (!chain) { /* (h2 used) */
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_CONCAT, d.name = "cat", d.typed = 1;
        luthier_node_attrs_default(LUTHIER_OP_CONCAT, &d.attr);
        d.attr.axis.axis = 0;
        h = gb_node(b, &d, h, h2, -1);
    }
    h = fp16_identity(b, "w3", h, 256, 0);
    luthier_graph_output(b->g, h);
}

/* In an fp16 plan the chain of h16e_plan_graph runs on fp16 values without fp32 copies: each of
   its 5 steps (the clip fuses into the mul) reads and writes fp16 and has no wide workspace, the
   plan runs, and its workspace is no larger than that of the graph without the chain. */
static void test_fp16_elt_plan_workspace(void) {
    int t, chain;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        size_t ws[2] = {0, 0};
        for (chain = 0; chain <= 1; chain++) {
            luthier_plan_desc pd;
            luthier_plan *p = NULL;
            luthier_plan_info pi;
            int s, elt = 0;
            gb b;
            h16e_plan_graph(&b, chain);
            memset(&pd, 0, sizeof pd);
            pd.precision = LUTHIER_PRECISION_FP16;
            pd.fp16_activations = fp16_act_mode(ctx);
            CHECK(!b.fail && luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "plan: %s", luthier_context_error(ctx));
            for (s = 0; p && s < p->num_steps; s++) {
                const luthier__pstep *st = &p->steps[s];
                if (st->kind != LUTHIER__STEP_NODE || luthier__ops[st->d.op].h16 != luthier__h16_elt) continue;
                elt++;
                CHECK(p->vals[st->out[0]].dtype == LUTHIER__DTYPE_F16 && p->vals[st->in[0]].dtype == LUTHIER__DTYPE_F16 &&
                          st->h16_wide == 0,
                      "step '%s': in dtype %d, out dtype %d, fp32 copies %zu bytes", st->name, (int)p->vals[st->in[0]].dtype,
                      (int)p->vals[st->out[0]].dtype, st->h16_wide);
            }
            CHECK(elt == 5 * chain, "%d element-wise steps on fp16 (want %d: the clip fuses into the mul)", elt, 5 * chain);
            if (p) {
                const size_t n = (size_t)(chain ? 16 : 32) * 256;
                float *in = rand_buf(16 * 256, -2, 2), *out = (float *)test_alloc(n * sizeof(float));
                void *outs[1];
                const void *ins[1];
                ins[0] = in, outs[0] = out;
                CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "run: %s", luthier_context_error(ctx));
                memset(&pi, 0, sizeof pi);
                luthier_plan_get_info(p, &pi);
                ws[chain] = pi.workspace_bytes;
                free(in), free(out);
            }
            luthier_plan_destroy(p);
            gb_free(&b);
        }
        CHECK(ws[1] <= ws[0], "workspace %zu bytes with the element-wise chain, %zu without", ws[1], ws[0]);
        luthier_context_destroy(ctx);
    }
}

static void run_fp16_elt_tests(void) {
    RUN(test_fp16_elt_unary);
    RUN(test_fp16_elt_binary);
    RUN(test_fp16_elt_negative_zero);
    RUN(test_fp16_elt_refusal);
    RUN(test_fp16_elt_plan_workspace);
}
