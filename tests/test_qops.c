/* uint8 quantized-activation operators (luthier_ops.h >>ops-u8) bit-exact against naive scalar
   references: quantize, dequantize, qadd (in place too), max / average / adaptive average
   pooling on NHWC. Random shapes (1 element, odd sizes, sizes around the 64/16 blocks and the
   16384-element units), zero points 0 / 128 / 255 / random, scales over several orders of
   magnitude, saturation at both ends, inputs built to hit exact .5 ties (quantize, qadd) and
   exact half remainders (pool means), NaN / inf inputs of quantize, pads / strides / dilation
   / ceil-mode windows / windows without a tap, windows beyond 65536 taps (the uint64 path).
   Tails: every size 1..67 and every odd channel count up to 67 (the hand-written NEON of
   AArch64 runs 16 per step and the C blocks the rest), also against the C blocks themselves.
   Every case runs on every variant of test_ops.c's environment (ops_env: 1 thread, all CPUs,
   2 clusters with a skewed ratio split, the same with the DYNAMIC schedule, and on x86
   contexts with AVX-512 (then AVX2) disabled): the results do not depend on the ISA, so every
   variant must equal the reference. Output buffers are exact-size heap blocks prefilled with a
   per-variant byte (a missed element shows in some variant). Included by test_main.c after
   test_ops.c and test_qconv.c. */

/* One op call on a variant: writes `bytes` bytes at out. */
typedef luthier_status (*qo_call)(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, void *out);

/* Runs call on every variant into a fresh exact-size buffer and compares it with ref byte for
   byte (uint8 outputs) or bit for bit (float outputs, elem = 4). Returns the failed variants. */
static int qo_verify(const char *what, qo_call call, void *arg, const void *ref, size_t bytes, size_t elem) {
    int v, bad = 0;
    for (v = 0; v < OE.n; v++) {
        unsigned char *out = (unsigned char *)test_alloc(bytes);
        const luthier__op_cfg *cfg = OE.cfgp[v];
        luthier_status s;
        memset(out, 0x5b + 37 * v, bytes);
        s = call(OE.ctx[v], cfg, arg, out);
        if (s != LUTHIER_STATUS_OK) {
            CHECK(0, "%s [%s]: returned %s (%s)", what, OE.name[v], luthier_status_string(s),
                  luthier_context_error(OE.ctx[v]));
            bad++;
        } else if (memcmp(out, ref, bytes) != 0) {
            size_t i, shown = 0, wrong = 0;
            for (i = 0; i < bytes; i += elem)
                if (memcmp(out + i, (const unsigned char *)ref + i, elem) != 0) {
                    wrong++;
                    if (shown++ < 3) {
                        if (elem == 4) {
                            float o, r;
                            memcpy(&o, out + i, 4);
                            memcpy(&r, (const unsigned char *)ref + i, 4);
                            CHECK(0, "%s [%s]: [%zu] = %.9g, reference %.9g", what, OE.name[v], i / 4, o, r);
                        } else {
                            CHECK(0, "%s [%s]: [%zu] = %d, reference %d", what, OE.name[v], i, out[i],
                                  ((const unsigned char *)ref)[i]);
                        }
                    }
                }
            CHECK(0, "%s [%s]: %zu of %zu elements differ", what, OE.name[v], wrong, bytes / elem);
            bad++;
        }
        free(out);
        if (bad) break;
    }
    return bad;
}

static uint8_t *qo_rand_u8(size_t n, int lo, int hi) {
    uint8_t *p = (uint8_t *)test_alloc(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)test_rand_int(lo, hi);
    return p;
}
static int32_t qo_pick_zero(void) {
    static const int32_t zs[3] = {0, 128, 255};
    return test_rand_int(0, 3) ? zs[test_rand_int(0, 2)] : test_rand_int(0, 255);
}
/* log-uniform in [10^lo, 10^hi] */
static float qo_rand_scale(double lo, double hi) {
    return (float)pow(10.0, lo + (hi - lo) * 0.5 * ((double)test_rand_float() + 1.0));
}
/* sizes: 1, around the 16 / 64 blocks, odd, and a few beyond one 16384-element unit */
static size_t qo_rand_n(int it) {
    static const size_t fixed[] = {1, 2, 3, 15, 16, 17, 63, 64, 65, 127, 129, 16383, 16384, 16385, 50001};
    if (it < (int)(sizeof fixed / sizeof fixed[0])) return fixed[it];
    if (test_rand_int(0, 5) == 0) return (size_t)test_rand_int(16385, 90000);
    return (size_t)test_rand_int(1, 700);
}
/* clamp of an exact integer-valued double */
static uint8_t qo_clamp(double v, double lo, double hi) {
    return (uint8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* ---- quantize / dequantize ------------------------------------------------------------------ */

typedef struct qo_quant_arg {
    const float *x;
    const uint8_t *q;
    size_t n;
    float scale;
    int32_t zero;
} qo_quant_arg;
static luthier_status qo_quantize_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, void *out) {
    const qo_quant_arg *a = (const qo_quant_arg *)arg;
    return luthier__op_quantize(ctx, cfg, a->x, (uint8_t *)out, a->n, a->scale, a->zero);
}
static luthier_status qo_dequantize_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, void *out) {
    const qo_quant_arg *a = (const qo_quant_arg *)arg;
    return luthier__op_dequantize(ctx, cfg, a->q, (float *)out, a->n, a->scale, a->zero);
}

/* the definition: clamp(nearbyint(x * (1 / scale)) + zero, 0, 255), NaN -> zero */
static uint8_t qo_quantize_ref(float x, float scale, int32_t zero) {
    const float inv = 1.0f / scale;
    const float t = x * inv;
    if (t != t) return (uint8_t)zero;
    return qo_clamp((double)nearbyintf(t) + zero, 0, 255);
}

/* x with fl(x * (1 / scale)) == k + 0.5 exactly (0 when none is found near) */
static float qo_tie_input(float scale, int k, int *found) {
    const float inv = 1.0f / scale, want = (float)k + 0.5f;
    float x = (float)((double)want / (double)inv);
    int s;
    *found = 0;
    for (s = 0; s < 8; s++) {
        if (x * inv == want) {
            *found = 1;
            return x;
        }
        x = x * inv < want ? nextafterf(x, INFINITY) : nextafterf(x, -INFINITY);
    }
    return 0.0f;
}

static void test_qops_quantize(void) {
    const int iters = T.quick ? 40 : 160;
    int it, ties = 0, sat_lo = 0, sat_hi = 0, nans = 0;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_quant_arg a;
        const size_t n = qo_rand_n(it);
        float *x = (float *)test_alloc(n * sizeof(float));
        uint8_t *ref = (uint8_t *)test_alloc(n);
        const int pow2 = test_rand_int(0, 3) == 0;
        size_t i;
        char what[160];
        a.zero = qo_pick_zero();
        a.scale = pow2 ? ldexpf(1.0f, test_rand_int(-12, 6)) : qo_rand_scale(-5.0, 3.0);
        for (i = 0; i < n; i++) {
            const int kind = test_rand_int(0, 15);
            if (kind <= 6) { /* in range and a little beyond: t in [-300, 300] */
                x[i] = (float)(300.0 * test_rand_float()) * a.scale;
            } else if (kind <= 9) { /* exact .5 ties */
                int found, k = test_rand_int(-260, 260);
                x[i] = qo_tie_input(a.scale, k, &found);
                if (!found) x[i] = (float)k * a.scale;
            } else if (kind <= 11) { /* far out: saturation */
                x[i] = (test_rand_int(0, 1) ? 1.0f : -1.0f) * a.scale * (float)test_rand_int(256, 1 << 20);
            } else if (kind == 12) { /* integers exactly */
                x[i] = (float)test_rand_int(-300, 300) * a.scale;
            } else if (kind == 13) {
                static const float special[8] = {0.0f, -0.0f, 1e30f, -1e30f, 3.4e38f, -3.4e38f, 1e-40f, -1e-40f};
                x[i] = special[test_rand_int(0, 7)];
            } else if (kind == 14) {
                x[i] = test_rand_int(0, 1) ? INFINITY : -INFINITY;
            } else {
                x[i] = test_rand_int(0, 1) ? NAN : -NAN;
            }
        }
        for (i = 0; i < n; i++) {
            const float t = x[i] * (1.0f / a.scale);
            ref[i] = qo_quantize_ref(x[i], a.scale, a.zero);
            if (t == t && t - floorf(t) == 0.5f && fabsf(t) < 255.0f) ties++;
            if (t != t) nans++;
            else if (t < -(float)a.zero - 1.0f) sat_lo++;
            else if (t > 256.0f - (float)a.zero) sat_hi++;
        }
        a.x = x;
        a.n = n;
        sprintf(what, "quantize n %zu scale %.6g zero %d", n, (double)a.scale, (int)a.zero);
        qo_verify(what, qo_quantize_call, &a, ref, n, 1);
        free(x);
        free(ref);
    }
    CHECK(ties > 100 && sat_lo > 100 && sat_hi > 100 && nans > 10, "inputs hit %d ties, %d / %d saturations, %d NaN",
          ties, sat_lo, sat_hi, nans);
    { /* every tie between two uint8 levels once, zero 128, scale 1 / 2^k and 0.1 */
        static const float scales[3] = {1.0f, 0.0078125f, 0.1f};
        int si;
        for (si = 0; si < 3; si++) {
            qo_quant_arg a;
            float x[512];
            uint8_t ref[512];
            int k, cnt = 0;
            for (k = -256; k < 256; k++) {
                int found;
                const float v = qo_tie_input(scales[si], k, &found);
                if (!found) continue;
                x[cnt] = v;
                ref[cnt] = qo_quantize_ref(v, scales[si], 128);
                cnt++;
            }
            CHECK(cnt > 400, "scale %g: only %d ties constructed", (double)scales[si], cnt);
            /* half to even: 0.5 -> 0, 1.5 -> 2, -0.5 -> -0, -1.5 -> -2 (before the zero point) */
            a.x = x;
            a.n = (size_t)cnt;
            a.scale = scales[si];
            a.zero = 128;
            qo_verify("quantize: ties", qo_quantize_call, &a, ref, (size_t)cnt, 1);
        }
        CHECK(qo_quantize_ref(0.5f, 1.0f, 128) == 128 && qo_quantize_ref(1.5f, 1.0f, 128) == 130 &&
                  qo_quantize_ref(-0.5f, 1.0f, 128) == 128 && qo_quantize_ref(-1.5f, 1.0f, 128) == 126,
              "reference rounds half to even");
    }
    ops_env_destroy();
}

static void test_qops_dequantize(void) {
    const int iters = T.quick ? 30 : 120;
    int it;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_quant_arg a;
        const size_t n = it == 0 ? 256 : qo_rand_n(it);
        uint8_t *q = qo_rand_u8(n, 0, 255);
        float *ref = (float *)test_alloc(n * sizeof(float));
        size_t i;
        char what[160];
        if (it == 0)
            for (i = 0; i < n; i++) q[i] = (uint8_t)i; /* every level */
        a.zero = qo_pick_zero();
        a.scale = qo_rand_scale(-6.0, 4.0);
        for (i = 0; i < n; i++) ref[i] = a.scale * (float)((int32_t)q[i] - a.zero);
        a.q = q;
        a.n = n;
        sprintf(what, "dequantize n %zu scale %.6g zero %d", n, (double)a.scale, (int)a.zero);
        qo_verify(what, qo_dequantize_call, &a, ref, n * sizeof(float), 4);
        free(q);
        free(ref);
    }
    ops_env_destroy();
}

/* ---- qadd ------------------------------------------------------------------------------------ */

typedef struct qo_qadd_arg {
    const uint8_t *a, *b;
    float sa, sb, sy;
    int32_t za, zb, zy, qmin, qmax;
    size_t n;
    int inplace; /* 1: y == a, 2: y == b, 3: y == a == b */
} qo_qadd_arg;
static luthier_status qo_qadd_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, void *out) {
    const qo_qadd_arg *p = (const qo_qadd_arg *)arg;
    uint8_t *y = (uint8_t *)out;
    const uint8_t *a = p->a, *b = p->b;
    if (p->inplace == 1) {
        memcpy(y, p->a, p->n);
        a = y;
    } else if (p->inplace == 2) {
        memcpy(y, p->b, p->n);
        b = y;
    } else if (p->inplace == 3) {
        memcpy(y, p->a, p->n);
        a = b = y;
    }
    return luthier__op_qadd(ctx, cfg, a, p->sa, p->za, b, p->sb, p->zb, y, p->sy, p->zy, p->qmin, p->qmax, p->n);
}

/* v = fa * (a - za) + fb * (b - zb) with both products rounded to float (volatile: no
   contraction into an FMA whatever the compiler flags), then the float sum */
static float qo_qadd_value(const qo_qadd_arg *p, uint8_t a, uint8_t b) {
    const float fa = p->sa / p->sy, fb = p->sb / p->sy;
    volatile float pa = fa * (float)((int32_t)a - p->za);
    volatile float pb = fb * (float)((int32_t)b - p->zb);
    return pa + pb;
}
static uint8_t qo_qadd_ref(const qo_qadd_arg *p, uint8_t a, uint8_t b) {
    return qo_clamp((double)p->zy + (double)nearbyintf(qo_qadd_value(p, a, b)), p->qmin, p->qmax);
}

static void test_qops_qadd(void) {
    const int iters = T.quick ? 50 : 200;
    int it, ties = 0, sat_lo = 0, sat_hi = 0;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_qadd_arg p;
        const size_t n = qo_rand_n(it);
        const int mode = test_rand_int(0, 3);
        uint8_t *a = qo_rand_u8(n, 0, 255), *b = test_rand_int(0, 7) ? qo_rand_u8(n, 0, 255) : NULL;
        uint8_t *ref = (uint8_t *)test_alloc(n);
        size_t i;
        char what[200];
        memset(&p, 0, sizeof p);
        if (!b) { /* a + a */
            b = (uint8_t *)test_alloc(n);
            memcpy(b, a, n);
        }
        p.za = qo_pick_zero();
        p.zb = qo_pick_zero();
        p.zy = qo_pick_zero();
        if (mode == 0) { /* power-of-two ratios: fa, fb in {1/4, 1/2, 3/4, 1, 3/2, 2}: many exact ties */
            static const float r[6] = {0.25f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f};
            p.sy = ldexpf(1.0f, test_rand_int(-10, 4));
            p.sa = p.sy * r[test_rand_int(0, 5)];
            p.sb = p.sy * r[test_rand_int(0, 5)];
        } else if (mode == 1) { /* any scales over several orders of magnitude */
            p.sa = qo_rand_scale(-4.0, 2.0);
            p.sb = qo_rand_scale(-4.0, 2.0);
            p.sy = qo_rand_scale(-4.0, 2.0);
        } else if (mode == 2) { /* the usual case: scales within a factor of a few */
            p.sy = qo_rand_scale(-3.0, 0.0);
            p.sa = p.sy * qo_rand_scale(-0.5, 0.5);
            p.sb = p.sy * qo_rand_scale(-0.5, 0.5);
        } else { /* output scale much smaller: saturation */
            p.sa = qo_rand_scale(-2.0, 0.0);
            p.sb = qo_rand_scale(-2.0, 0.0);
            p.sy = p.sa * qo_rand_scale(-3.0, -1.0);
        }
        if (test_rand_int(0, 2) == 0) {
            p.qmin = 0;
            p.qmax = 255;
        } else if (test_rand_int(0, 1)) { /* fused ReLU: qmin = zy */
            p.qmin = p.zy;
            p.qmax = 255;
        } else {
            p.qmin = test_rand_int(0, 255);
            p.qmax = test_rand_int(p.qmin, 255);
        }
        p.inplace = test_rand_int(0, 4) == 0 ? 0 : test_rand_int(0, 3);
        if (p.inplace == 3) memcpy(b, a, n);
        for (i = 0; i < n; i++) {
            const float v = qo_qadd_value(&p, a[i], b[i]);
            ref[i] = qo_qadd_ref(&p, a[i], b[i]);
            if (v - floorf(v) == 0.5f) ties++;
            if (v + (float)p.zy < -0.5f) sat_lo++;
            if (v + (float)p.zy > 255.5f) sat_hi++;
        }
        p.a = a;
        p.b = b;
        p.n = n;
        sprintf(what, "qadd n %zu sa %.6g za %d sb %.6g zb %d sy %.6g zy %d q [%d, %d] in place %d", n, (double)p.sa,
                (int)p.za, (double)p.sb, (int)p.zb, (double)p.sy, (int)p.zy, (int)p.qmin, (int)p.qmax, p.inplace);
        qo_verify(what, qo_qadd_call, &p, ref, n, 1);
        free(a);
        free(b);
        free(ref);
    }
    CHECK(ties > (T.quick ? 200 : 1000) && sat_lo > 100 && sat_hi > 100, "inputs hit %d ties, %d / %d saturations", ties,
          sat_lo, sat_hi);
    { /* every (a, b) pair: 65536 elements, fa = 0.5, fb = 1.5, zero points 128 / 127 / 128 */
        qo_qadd_arg p;
        uint8_t *a = (uint8_t *)test_alloc(65536), *b = (uint8_t *)test_alloc(65536), *ref = (uint8_t *)test_alloc(65536);
        size_t i;
        memset(&p, 0, sizeof p);
        for (i = 0; i < 65536; i++) {
            a[i] = (uint8_t)(i & 255);
            b[i] = (uint8_t)(i >> 8);
        }
        p.sy = 0.0625f;
        p.sa = 0.03125f;
        p.sb = 0.09375f;
        p.za = 128;
        p.zb = 127;
        p.zy = 128;
        p.qmin = 0;
        p.qmax = 255;
        p.a = a;
        p.b = b;
        p.n = 65536;
        for (i = 0; i < 65536; i++) ref[i] = qo_qadd_ref(&p, a[i], b[i]);
        qo_verify("qadd: all pairs, ties", qo_qadd_call, &p, ref, 65536, 1);
        CHECK(qo_qadd_ref(&p, 129, 127) == 128 && qo_qadd_ref(&p, 131, 127) == 130 && qo_qadd_ref(&p, 127, 127) == 128,
              "reference rounds half to even (0.5 -> 0, 1.5 -> 2, -0.5 -> 0)");
        free(a);
        free(b);
        free(ref);
    }
    { /* pairs where a contraction into an FMA (either product fused) would change the result:
         searched over all 65536 (a, b) of random scale sets, repeated past one 64-element
         block, then checked against the two rounded products */
        qo_qadd_arg p;
        uint8_t *a = (uint8_t *)test_alloc(4096), *b = (uint8_t *)test_alloc(4096), *ref = (uint8_t *)test_alloc(4096);
        int sets = 0, tries, ia, ib;
        for (tries = 0; tries < 1000 && sets < (T.quick ? 2 : 6); tries++) {
            size_t cnt = 0, n, i;
            float fa, fb;
            memset(&p, 0, sizeof p);
            p.sy = qo_rand_scale(-3.0, 0.0);
            p.sa = p.sy * qo_rand_scale(-0.3, 1.0);
            p.sb = p.sy * qo_rand_scale(-0.3, 1.0);
            p.za = qo_pick_zero();
            p.zb = qo_pick_zero();
            p.zy = qo_pick_zero();
            p.qmin = 0;
            p.qmax = 255;
            fa = p.sa / p.sy;
            fb = p.sb / p.sy;
            for (ia = 0; ia < 256 && cnt < 4096; ia++)
                for (ib = 0; ib < 256 && cnt < 4096; ib++) {
                    const float da = (float)(ia - p.za), db = (float)(ib - p.zb);
                    volatile float pa = fa * da, pb = fb * db;
                    const uint8_t r = qo_qadd_ref(&p, (uint8_t)ia, (uint8_t)ib);
                    const uint8_t r1 = qo_clamp((double)p.zy + (double)nearbyintf(fmaf(fa, da, pb)), 0, 255);
                    const uint8_t r2 = qo_clamp((double)p.zy + (double)nearbyintf(fmaf(fb, db, pa)), 0, 255);
                    if (r1 != r || r2 != r) {
                        a[cnt] = (uint8_t)ia;
                        b[cnt] = (uint8_t)ib;
                        cnt++;
                    }
                }
            if (!cnt) continue;
            n = cnt < 150 ? 150 : cnt;
            for (i = cnt; i < n; i++) {
                a[i] = a[i % cnt];
                b[i] = b[i % cnt];
            }
            for (i = 0; i < n; i++) ref[i] = qo_qadd_ref(&p, a[i], b[i]);
            p.a = a;
            p.b = b;
            p.n = n;
            p.inplace = sets % 3;
            qo_verify("qadd: pairs an FMA would round differently", qo_qadd_call, &p, ref, n, 1);
            sets++;
        }
        CHECK(sets > 0, "no scale set with FMA-sensitive pairs found");
        free(a);
        free(b);
        free(ref);
    }
    { /* every (a, b) pair with random scales and zero points */
        qo_qadd_arg p;
        uint8_t *a = (uint8_t *)test_alloc(65536), *b = (uint8_t *)test_alloc(65536), *ref = (uint8_t *)test_alloc(65536);
        size_t i;
        int set;
        for (i = 0; i < 65536; i++) {
            a[i] = (uint8_t)(i & 255);
            b[i] = (uint8_t)(i >> 8);
        }
        for (set = 0; set < (T.quick ? 3 : 8); set++) {
            char what[160];
            memset(&p, 0, sizeof p);
            p.sy = qo_rand_scale(-3.0, 0.0);
            p.sa = p.sy * qo_rand_scale(-0.7, 0.3);
            p.sb = p.sy * qo_rand_scale(-0.7, 0.3);
            p.za = qo_pick_zero();
            p.zb = qo_pick_zero();
            p.zy = qo_pick_zero();
            p.qmin = 0;
            p.qmax = 255;
            p.a = a;
            p.b = b;
            p.n = 65536;
            for (i = 0; i < 65536; i++) ref[i] = qo_qadd_ref(&p, a[i], b[i]);
            sprintf(what, "qadd: all pairs, sa %.6g za %d sb %.6g zb %d sy %.6g zy %d", (double)p.sa, (int)p.za,
                    (double)p.sb, (int)p.zb, (double)p.sy, (int)p.zy);
            qo_verify(what, qo_qadd_call, &p, ref, 65536, 1);
        }
        free(a);
        free(b);
        free(ref);
    }
    ops_env_destroy();
}

/* ---- pooling --------------------------------------------------------------------------------- */

typedef struct qo_pool_arg {
    int kind; /* 0 max, 1 avg, 2 adaptive avg */
    int cip;
    int32_t zero;
    const uint8_t *x;
    size_t n, h, w, c, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
} qo_pool_arg;
static luthier_status qo_pool_call(luthier_context *ctx, const luthier__op_cfg *cfg, void *arg, void *out) {
    const qo_pool_arg *p = (const qo_pool_arg *)arg;
    uint8_t *y = (uint8_t *)out;
    if (p->kind == 0)
        return luthier__op_qmaxpool_nhwc(ctx, cfg, p->x, p->n, p->h, p->w, p->c, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw,
                                         p->pt, p->pl, p->pb, p->pr, y, p->oh, p->ow, p->zero);
    if (p->kind == 1)
        return luthier__op_qavgpool_nhwc(ctx, cfg, p->x, p->n, p->h, p->w, p->c, p->kh, p->kw, p->sh, p->sw, p->pt,
                                         p->pl, p->pb, p->pr, p->cip, y, p->oh, p->ow, p->zero);
    return luthier__op_qadaptive_avgpool_nhwc(ctx, cfg, p->x, p->n, p->h, p->w, p->c, y, p->oh, p->ow);
}

/* PyTorch / ONNX output size with asymmetric padding and ceil mode (the last window must start
   inside the input or its left padding) */
static size_t qo_pool_out(size_t in, size_t k, size_t s, size_t d, size_t pa, size_t pb, int ceil_mode) {
    const long eff = (long)(d * (k - 1) + 1), span = (long)(in + pa + pb) - eff;
    long o;
    if (span < 0) return 0;
    o = (ceil_mode ? (span + (long)s - 1) / (long)s : span / (long)s) + 1;
    if (ceil_mode && (size_t)((o - 1) * (long)s) >= in + pa) o--;
    return (size_t)o;
}

static int qo_pool_ties; /* even-count means with remainder exactly cnt / 2 in the references */
static int qo_pool_empty; /* windows without a tap inside the input */

/* mean rounded half up: (sum + cnt / 2) / cnt; cnt 0 -> zero */
static uint8_t qo_mean(uint64_t sum, uint64_t cnt, int32_t zero) {
    if (!cnt) return (uint8_t)zero;
    if (cnt % 2 == 0 && sum % cnt == cnt / 2) qo_pool_ties++;
    return (uint8_t)((sum + cnt / 2) / cnt);
}

static void qo_pool_ref(const qo_pool_arg *p, uint8_t *ref) {
    size_t b, oy, ox, ch, i, k;
    for (b = 0; b < p->n; b++)
        for (oy = 0; oy < p->oh; oy++)
            for (ox = 0; ox < p->ow; ox++) {
                long y0, y1, x0, x1; /* adaptive bins [y0, y1) x [x0, x1) */
                long npy = 0, npx = 0, valid = 0;
                y0 = (long)(oy * p->h / (p->oh ? p->oh : 1));
                y1 = (long)(((oy + 1) * p->h + p->oh - 1) / (p->oh ? p->oh : 1));
                x0 = (long)(ox * p->w / (p->ow ? p->ow : 1));
                x1 = (long)(((ox + 1) * p->w + p->ow - 1) / (p->ow ? p->ow : 1));
                if (p->kind != 2) {
                    for (i = 0; i < p->kh; i++) { /* taps inside the padded input */
                        const long yy = (long)(oy * p->sh) - (long)p->pt + (long)(i * p->dh);
                        if (yy >= -(long)p->pt && yy < (long)(p->h + p->pb)) npy++;
                    }
                    for (k = 0; k < p->kw; k++) {
                        const long xx = (long)(ox * p->sw) - (long)p->pl + (long)(k * p->dw);
                        if (xx >= -(long)p->pl && xx < (long)(p->w + p->pr)) npx++;
                    }
                }
                for (ch = 0; ch < p->c; ch++) {
                    uint64_t sum = 0;
                    int mx = -1;
                    uint8_t r;
                    valid = 0;
                    if (p->kind == 2) {
                        long yy, xx;
                        for (yy = y0; yy < y1; yy++)
                            for (xx = x0; xx < x1; xx++) {
                                sum += p->x[((b * p->h + (size_t)yy) * p->w + (size_t)xx) * p->c + ch];
                                valid++;
                            }
                        r = qo_mean(sum, (uint64_t)valid, 0);
                    } else {
                        for (i = 0; i < p->kh; i++)
                            for (k = 0; k < p->kw; k++) {
                                const long yy = (long)(oy * p->sh) - (long)p->pt + (long)(i * p->dh);
                                const long xx = (long)(ox * p->sw) - (long)p->pl + (long)(k * p->dw);
                                uint8_t v;
                                if (yy < 0 || yy >= (long)p->h || xx < 0 || xx >= (long)p->w) continue;
                                v = p->x[((b * p->h + (size_t)yy) * p->w + (size_t)xx) * p->c + ch];
                                mx = v > mx ? v : mx;
                                sum += v;
                                valid++;
                            }
                        if (!valid && ch == 0) qo_pool_empty++;
                        if (p->kind == 0) {
                            r = valid ? (uint8_t)mx : (uint8_t)p->zero;
                        } else if (p->cip) {
                            const uint64_t cnt = (uint64_t)(npy * npx);
                            r = qo_mean(sum + (cnt - (uint64_t)valid) * (uint64_t)p->zero, cnt, p->zero);
                        } else {
                            r = qo_mean(sum, (uint64_t)valid, p->zero);
                        }
                    }
                    ref[((b * p->oh + oy) * p->ow + ox) * p->c + ch] = r;
                }
            }
}

static void qo_pool_describe(const qo_pool_arg *p, int ceil_mode, char *what) {
    static const char *kinds[3] = {"qmaxpool", "qavgpool", "qadaptive_avgpool"};
    sprintf(what, "%s n%zu %zux%zux%zu k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu out %zux%zu ceil %d cip %d zero %d",
            kinds[p->kind], p->n, p->h, p->w, p->c, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->pt, p->pl, p->pb,
            p->pr, p->oh, p->ow, ceil_mode, p->cip, (int)p->zero);
}

/* input data: uniform, small values (many half remainders), all 255 (largest sums), or 0/255 */
static uint8_t *qo_pool_data(size_t nx) {
    const int style = test_rand_int(0, 4);
    uint8_t *x = qo_rand_u8(nx, 0, style == 1 ? 3 : 255);
    size_t i;
    if (style == 2) memset(x, 255, nx);
    if (style == 3)
        for (i = 0; i < nx; i++) x[i] = test_rand_int(0, 1) ? 255 : 0;
    return x;
}

static void qo_pool_check(qo_pool_arg *p, int ceil_mode) {
    const size_t nx = p->n * p->h * p->w * p->c, ny = p->n * p->oh * p->ow * p->c;
    uint8_t *x = qo_pool_data(nx), *ref = (uint8_t *)test_alloc(ny);
    char what[300];
    p->x = x;
    qo_pool_ref(p, ref);
    qo_pool_describe(p, ceil_mode, what);
    qo_verify(what, qo_pool_call, p, ref, ny, 1);
    free(x);
    free(ref);
}

static size_t qo_rand_c(int it) {
    static const size_t fixed[] = {1, 3, 16, 17, 64, 65, 80, 95, 128, 130};
    if (it < (int)(sizeof fixed / sizeof fixed[0])) return fixed[it];
    return (size_t)(it % 5 == 0 ? test_rand_int(60, 300) : test_rand_int(1, 40));
}

/* random 2-D window (kind 0: max with dilation, 1: avg without); 0 when the output is empty */
static int qo_pool_random(qo_pool_arg *p, int kind, int it, int *ceil_mode) {
    const int big_pad = test_rand_int(0, 5) == 0; /* ONNX allows pads >= kernel: windows without a tap */
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->cip = test_rand_int(0, 1);
    p->zero = qo_pick_zero();
    *ceil_mode = test_rand_int(0, 1);
    p->n = (size_t)test_rand_int(1, 2);
    p->h = (size_t)test_rand_int(1, 13);
    p->w = (size_t)test_rand_int(1, 13);
    p->c = qo_rand_c(it);
    p->kh = (size_t)test_rand_int(1, 5);
    p->kw = (size_t)test_rand_int(1, 5);
    p->sh = (size_t)test_rand_int(1, 3);
    p->sw = (size_t)test_rand_int(1, 3);
    p->dh = kind == 0 && test_rand_int(0, 3) == 0 ? 2 : 1;
    p->dw = kind == 0 && test_rand_int(0, 3) == 0 ? 2 : 1;
    if (big_pad) {
        p->pt = (size_t)test_rand_int(0, (int)(p->dh * (p->kh - 1)) + 2);
        p->pb = (size_t)test_rand_int(0, (int)(p->dh * (p->kh - 1)) + 2);
        p->pl = (size_t)test_rand_int(0, (int)(p->dw * (p->kw - 1)) + 2);
        p->pr = (size_t)test_rand_int(0, (int)(p->dw * (p->kw - 1)) + 2);
    } else {
        p->pt = (size_t)test_rand_int(0, (int)p->kh / 2);
        p->pb = (size_t)test_rand_int(0, (int)p->kh / 2);
        p->pl = (size_t)test_rand_int(0, (int)p->kw / 2);
        p->pr = (size_t)test_rand_int(0, (int)p->kw / 2);
    }
    p->oh = qo_pool_out(p->h, p->kh, p->sh, p->dh, p->pt, p->pb, *ceil_mode);
    p->ow = qo_pool_out(p->w, p->kw, p->sw, p->dw, p->pl, p->pr, *ceil_mode);
    return p->oh && p->ow;
}

static void test_qops_maxpool(void) {
    const int iters = T.quick ? 80 : 400;
    int it, ceil_mode;
    qo_pool_empty = 0;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_pool_arg p;
        if (qo_pool_random(&p, 0, it, &ceil_mode)) qo_pool_check(&p, ceil_mode);
    }
    CHECK(qo_pool_empty > 0, "no window without a tap was tested");
    { /* ResNet stem 3x3 s2 p1 (several units), ceil-mode 3x3 s2 of GoogLeNet, a 1x1 image */
        static const size_t cfgs[4][9] = {/* h, w, c, k, s, pad, ceil, n, d */
                                          {112, 112, 64, 3, 2, 1, 0, 1, 1},
                                          {28, 28, 192, 3, 2, 0, 1, 1, 1},
                                          {1, 1, 5, 3, 1, 1, 0, 2, 1},
                                          {15, 9, 48, 3, 1, 2, 1, 1, 2}};
        int ci;
        for (ci = 0; ci < 4; ci++) {
            qo_pool_arg p;
            memset(&p, 0, sizeof p);
            p.kind = 0;
            p.zero = qo_pick_zero();
            p.h = cfgs[ci][0];
            p.w = cfgs[ci][1];
            p.c = cfgs[ci][2];
            p.kh = p.kw = cfgs[ci][3];
            p.sh = p.sw = cfgs[ci][4];
            p.pt = p.pl = p.pb = p.pr = cfgs[ci][5];
            p.n = cfgs[ci][7];
            p.dh = p.dw = cfgs[ci][8];
            p.oh = qo_pool_out(p.h, p.kh, p.sh, p.dh, p.pt, p.pb, (int)cfgs[ci][6]);
            p.ow = qo_pool_out(p.w, p.kw, p.sw, p.dw, p.pl, p.pr, (int)cfgs[ci][6]);
            qo_pool_check(&p, (int)cfgs[ci][6]);
        }
    }
    ops_env_destroy();
}

static void test_qops_avgpool(void) {
    const int iters = T.quick ? 80 : 400;
    int it, ceil_mode;
    qo_pool_ties = 0;
    qo_pool_empty = 0;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_pool_arg p;
        if (qo_pool_random(&p, 1, it, &ceil_mode)) qo_pool_check(&p, ceil_mode);
    }
    CHECK(qo_pool_ties > 100, "only %d exact half remainders tested", qo_pool_ties);
    CHECK(qo_pool_empty > 0, "no window without a tap was tested");
    { /* 3x3 s1 p1 both ways (several units), ceil-mode 3x3 s2 windows past the padded input,
         a global 7x7 kernel, 16x16 = 256 taps (the last SWAR size), 17x17 = 289 taps (uint32
         sums), 256x256 = 65536 (uint32, all-255 sums fit) and 300x300 = 90000 taps (uint64) */
        static const size_t cfgs[10][9] = {/* h, w, c, k, s, pad, ceil, cip, n */
                                           {56, 56, 64, 3, 1, 1, 0, 1, 1},
                                           {56, 56, 64, 3, 1, 1, 0, 0, 1},
                                           {14, 14, 67, 3, 2, 1, 1, 1, 2},
                                           {14, 14, 67, 3, 2, 1, 1, 0, 2},
                                           {7, 7, 2048, 7, 1, 0, 0, 0, 1},
                                           {18, 17, 83, 16, 1, 1, 0, 1, 1},
                                           {19, 17, 83, 17, 1, 1, 1, 1, 1},
                                           {20, 18, 83, 17, 2, 2, 1, 0, 1},
                                           {256, 256, 3, 256, 1, 0, 0, 1, 1},
                                           {300, 300, 2, 300, 1, 0, 0, 0, 1}};
        int ci;
        for (ci = 0; ci < 10; ci++) {
            qo_pool_arg p;
            memset(&p, 0, sizeof p);
            p.kind = 1;
            p.zero = qo_pick_zero();
            p.h = cfgs[ci][0];
            p.w = cfgs[ci][1];
            p.c = cfgs[ci][2];
            p.kh = p.kw = cfgs[ci][3];
            p.sh = p.sw = cfgs[ci][4];
            p.pt = p.pl = p.pb = p.pr = cfgs[ci][5];
            p.cip = (int)cfgs[ci][7];
            p.n = cfgs[ci][8];
            p.dh = p.dw = 1;
            p.oh = qo_pool_out(p.h, p.kh, p.sh, 1, p.pt, p.pb, (int)cfgs[ci][6]);
            p.ow = qo_pool_out(p.w, p.kw, p.sw, 1, p.pl, p.pr, (int)cfgs[ci][6]);
            qo_pool_check(&p, (int)cfgs[ci][6]);
        }
    }
    { /* count_include_pad counts like the fp32 op: a tensor of ones pooled in fp32 gives
         valid / cnt; compare cnt through a quantized tensor of 255s with zero 0 */
        const size_t h = 5, w = 6, c = 3, k = 3, s = 2, pad = 1;
        const size_t oh = qo_pool_out(h, k, s, 1, pad, pad, 1), ow = qo_pool_out(w, k, s, 1, pad, pad, 1);
        float *xf = (float *)test_alloc(h * w * c * sizeof(float)), *yf = (float *)test_alloc(oh * ow * c * sizeof(float));
        uint8_t *xq = (uint8_t *)test_alloc(h * w * c), *yq = (uint8_t *)test_alloc(oh * ow * c);
        size_t i;
        for (i = 0; i < h * w * c; i++) {
            xf[i] = 1.0f;
            xq[i] = 255;
        }
        CHECK(luthier__op_pool2d_nhwc(OE.ctx[0], NULL, 0, xf, 1, h, w, c, k, k, s, s, 1, 1, pad, pad, pad, pad, 1, yf,
                                      oh, ow) == LUTHIER_STATUS_OK, "fp32 pool");
        CHECK(luthier__op_qavgpool_nhwc(OE.ctx[0], NULL, xq, 1, h, w, c, k, k, s, s, pad, pad, pad, pad, 1, yq, oh, ow,
                                        0) == LUTHIER_STATUS_OK, "qavgpool");
        for (i = 0; i < oh * ow * c; i++) {
            const double want = floor(255.0 * (double)yf[i] + 0.5); /* 255 * valid / cnt, half up */
            CHECK((double)yq[i] == want, "cip [%zu]: %d, the fp32 op gives %.9g -> %.0f", i, yq[i], (double)yf[i], want);
        }
        free(xf);
        free(yf);
        free(xq);
        free(yq);
    }
    ops_env_destroy();
}

static void test_qops_adaptive_avgpool(void) {
    const int iters = T.quick ? 60 : 300;
    int it;
    qo_pool_ties = 0;
    ops_env_create();
    for (it = 0; it < iters; it++) {
        qo_pool_arg p;
        memset(&p, 0, sizeof p);
        p.kind = 2;
        p.n = (size_t)test_rand_int(1, 2);
        p.h = (size_t)test_rand_int(1, 17);
        p.w = (size_t)test_rand_int(1, 17);
        p.c = qo_rand_c(it);
        if (test_rand_int(0, 3) == 0) {
            p.oh = p.ow = 1; /* global */
        } else {
            p.oh = (size_t)test_rand_int(1, (int)p.h + 3); /* more bins than pixels: overlapping bins */
            p.ow = (size_t)test_rand_int(1, (int)p.w + 3);
        }
        qo_pool_check(&p, 0);
    }
    CHECK(qo_pool_ties > 100, "only %d exact half remainders tested", qo_pool_ties);
    { /* ResNet global pool (n 2), 1x1 input, a 7x7 bin grid, windows of 300 and 660 taps
         (uint32 sums), 65536 and 90000 taps (uint64) */
        static const size_t cfgs[8][6] = {/* n, h, w, c, oh, ow */
                                          {2, 7, 7, 2048, 1, 1},
                                          {1, 1, 1, 7, 1, 1},
                                          {1, 1, 1, 7, 3, 2},
                                          {1, 20, 13, 70, 7, 7},
                                          {1, 20, 15, 83, 1, 1},
                                          {2, 40, 33, 83, 2, 1},
                                          {1, 256, 256, 3, 1, 1},
                                          {1, 300, 300, 2, 1, 1}};
        int ci;
        for (ci = 0; ci < 8; ci++) {
            qo_pool_arg p;
            memset(&p, 0, sizeof p);
            p.kind = 2;
            p.n = cfgs[ci][0];
            p.h = cfgs[ci][1];
            p.w = cfgs[ci][2];
            p.c = cfgs[ci][3];
            p.oh = cfgs[ci][4];
            p.ow = cfgs[ci][5];
            qo_pool_check(&p, 0);
        }
    }
    ops_env_destroy();
}

/* ---- tails and edges: every size 1..67, odd channel counts --------------------------------------
   The operators run 16 elements (channels) per step in the hand-written NEON of AArch64
   (>>ops-u8-neon) and blocks of 64 / 16 elsewhere, and the rest through the C blocks: every
   size from 1 to 67 and every odd channel count up to 67 puts each remainder behind each number
   of full steps. Saturation edges: inputs 0 and 255 (and +-inf, NaN, huge), scales from 1e-30
   to 1e30, qadd ratios up to 1e4 and fused clamps. Each result must equal the definition's
   reference and, for quantize and qadd, the library's own C blocks (the code a target without
   hand-written SIMD runs), bit for bit. */

static const float qo_edge_scales[6] = {1e-30f, 0.0078125f, 0.1f, 1.0f, 3.7f, 1e30f};

static float qo_edge_float(float scale, int i) {
    static const float special[6] = {0.0f, -0.0f, INFINITY, -INFINITY, 3.4e38f, -3.4e38f};
    const int kind = test_rand_int(0, 7);
    if (kind == 0) return special[i % 6];
    if (kind == 1) return NAN;
    if (kind == 2) return ((float)test_rand_int(-300, 300) + 0.5f) * scale; /* ties (when exact) */
    return (float)(400.0 * test_rand_float()) * scale;
}

static void qo_edge_quantize(size_t n, float scale, int32_t zero) {
    float *x = (float *)test_alloc(n * sizeof(float));
    uint8_t *ref = (uint8_t *)test_alloc(n), *cb = (uint8_t *)test_alloc(n);
    luthier__op_qelt_job j;
    qo_quant_arg a;
    char what[120];
    size_t i;
    for (i = 0; i < n; i++) x[i] = qo_edge_float(scale, (int)i);
    for (i = 0; i < n; i++) ref[i] = qo_quantize_ref(x[i], scale, zero);
    memset(&j, 0, sizeof j);
    j.fa = 1.0f / scale;
    j.lo = (float)-zero;
    j.hi = (float)(255 - zero);
    j.zy = zero;
    for (i = 0; i < n; i += LUTHIER__U8_BLK) luthier__op_quantize_blk(&j, x + i, cb + i, luthier__min_sz(LUTHIER__U8_BLK, n - i));
    sprintf(what, "quantize edges n %zu scale %g zero %d", n, (double)scale, (int)zero);
    CHECK(memcmp(cb, ref, n) == 0, "%s: the C blocks differ from the reference", what);
    a.x = x;
    a.q = NULL;
    a.n = n;
    a.scale = scale;
    a.zero = zero;
    qo_verify(what, qo_quantize_call, &a, ref, n, 1);
    free(x);
    free(ref);
    free(cb);
}

static void qo_edge_dequantize(size_t n, float scale, int32_t zero) {
    uint8_t *q = qo_rand_u8(n, 0, 255);
    float *ref = (float *)test_alloc(n * sizeof(float));
    qo_quant_arg a;
    char what[120];
    size_t i;
    for (i = 0; i < n; i++) q[i] = i % 5 == 0 ? 0 : i % 5 == 1 ? 255 : q[i];
    for (i = 0; i < n; i++) ref[i] = scale * (float)((int32_t)q[i] - zero);
    a.x = NULL;
    a.q = q;
    a.n = n;
    a.scale = scale;
    a.zero = zero;
    sprintf(what, "dequantize edges n %zu scale %g zero %d", n, (double)scale, (int)zero);
    qo_verify(what, qo_dequantize_call, &a, ref, n * sizeof(float), 4);
    free(q);
    free(ref);
}

static void qo_edge_qadd(size_t n, int it) {
    static const float ratios[7] = {1e-4f, 0.25f, 0.5f, 0.7f, 1.0f, 3.0f, 1e4f};
    uint8_t *a = qo_rand_u8(n, 0, 255), *b = qo_rand_u8(n, 0, 255);
    uint8_t *ref = (uint8_t *)test_alloc(n), *cb = (uint8_t *)test_alloc(n);
    luthier__op_qelt_job j;
    qo_qadd_arg p;
    char what[200];
    size_t i;
    for (i = 0; i < n; i++) { /* both ends, together and crossed */
        if (i % 7 == 0) a[i] = b[i] = 255;
        if (i % 7 == 1) a[i] = b[i] = 0;
        if (i % 7 == 2) a[i] = 255, b[i] = 0;
    }
    memset(&p, 0, sizeof p);
    p.a = a;
    p.b = b;
    p.n = n;
    p.za = qo_pick_zero();
    p.zb = qo_pick_zero();
    p.zy = qo_pick_zero();
    p.sy = qo_edge_scales[1 + it % 4];
    p.sa = p.sy * ratios[test_rand_int(0, 6)];
    p.sb = p.sy * ratios[test_rand_int(0, 6)];
    p.qmin = it % 3 == 0 ? p.zy : 0; /* fused ReLU */
    p.qmax = it % 5 == 0 ? test_rand_int(p.qmin, 255) : 255;
    p.inplace = it % 4;
    if (p.inplace == 3) memcpy(b, a, n); /* y == a == b: a + a */
    for (i = 0; i < n; i++) ref[i] = qo_qadd_ref(&p, a[i], b[i]);
    memset(&j, 0, sizeof j);
    j.fa = p.sa / p.sy;
    j.fb = p.sb / p.sy;
    j.za = p.za;
    j.zb = p.zb;
    j.zy = p.zy;
    j.lo = (float)(p.qmin - p.zy);
    j.hi = (float)(p.qmax - p.zy);
    luthier__op_qadd_tail(&j, a, b, cb, n);
    sprintf(what, "qadd edges n %zu sa %g za %d sb %g zb %d sy %g zy %d q %d..%d inplace %d", n, (double)p.sa,
            (int)p.za, (double)p.sb, (int)p.zb, (double)p.sy, (int)p.zy, (int)p.qmin, (int)p.qmax, p.inplace);
    CHECK(memcmp(cb, ref, n) == 0, "%s: the C blocks differ from the reference", what);
    qo_verify(what, qo_qadd_call, &p, ref, n, 1);
    free(a);
    free(b);
    free(ref);
    free(cb);
}

static void test_qops_tails(void) {
    size_t n;
#if LUTHIER__SIMD_NEON /* the hand-written NEON runs whatever the compiler: the query says so */
    CHECK(luthier__op_u8_isa(0) == LUTHIER__ISA_NEON, "uint8 operators report %s on AArch64",
          luthier__isa_name(luthier__op_u8_isa(0)));
#endif
    ops_env_create();
    for (n = 1; n <= 67; n++) {
        const int it = (int)n;
        qo_edge_quantize(n, qo_edge_scales[it % 6], qo_pick_zero());
        qo_edge_dequantize(n, qo_edge_scales[1 + it % 4], qo_pick_zero());
        qo_edge_qadd(n, it);
    }
    ops_env_destroy();
}

/* pools over every odd channel count up to 67 (and 16..64): max 3x3 s2 pad 1, average 3x3 with
   the pad counted, global means of 49, 256 (16-bit sums at their limit), 257 and 289 taps
   (32-bit sums) */
static void test_qops_pool_tails(void) {
    static const size_t cs[] = {16, 32, 48, 64};
    size_t ci;
    int cfg;
    ops_env_create();
    for (ci = 0; ci < 34 + sizeof cs / sizeof cs[0]; ci++) {
        const size_t c = ci < 34 ? 2 * ci + 1 : cs[ci - 34];
        for (cfg = 0; cfg < 6; cfg++) {
            static const size_t hw[6][2] = {{9, 7}, {9, 7}, {7, 7}, {16, 16}, {1, 257}, {17, 17}};
            qo_pool_arg p;
            memset(&p, 0, sizeof p);
            p.kind = cfg == 0 ? 0 : cfg == 1 ? 1 : 2;
            p.n = 1;
            p.h = hw[cfg][0];
            p.w = hw[cfg][1];
            p.c = c;
            p.zero = qo_pick_zero();
            if (cfg < 2) {
                p.kh = p.kw = 3;
                p.sh = p.sw = 2;
                p.dh = p.dw = 1;
                p.pt = p.pl = p.pb = p.pr = 1;
                p.cip = 1;
                p.oh = qo_pool_out(p.h, 3, 2, 1, 1, 1, 0);
                p.ow = qo_pool_out(p.w, 3, 2, 1, 1, 1, 0);
            } else {
                p.oh = p.ow = 1;
            }
            qo_pool_check(&p, 0);
        }
    }
    ops_env_destroy();
}

/* Bad cfg: the ops fail like the fp32 ops, whatever the size (also with no work). */
static void test_qops_bad_arguments(void) {
    luthier__op_cfg cfg;
    uint8_t q[4] = {1, 2, 3, 4}, y[4];
    float f[4] = {0, 0, 0, 0};
    ops_env_create();
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = (luthier_schedule)7;
    CHECK(luthier__op_quantize(OE.ctx[0], &cfg, f, y, 4, 1.0f, 0) == LUTHIER_STATUS_INVALID_ARGUMENT, "schedule");
    CHECK(luthier__op_dequantize(OE.ctx[0], &cfg, q, f, 0, 1.0f, 0) == LUTHIER_STATUS_INVALID_ARGUMENT, "schedule, n 0");
    CHECK(luthier__op_qadd(OE.ctx[0], &cfg, q, 1, 0, q, 1, 0, y, 1, 0, 0, 255, 4) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "qadd schedule");
    CHECK(luthier__op_qmaxpool_nhwc(OE.ctx[0], &cfg, q, 1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, y, 1, 1, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT, "qmaxpool schedule");
    CHECK(luthier__op_qavgpool_nhwc(OE.ctx[0], &cfg, q, 1, 2, 2, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, y, 1, 1, 0) ==
              LUTHIER_STATUS_INVALID_ARGUMENT, "qavgpool schedule");
    CHECK(luthier__op_qadaptive_avgpool_nhwc(OE.ctx[0], &cfg, q, 1, 2, 2, 1, y, 1, 1) == LUTHIER_STATUS_INVALID_ARGUMENT,
          "qadaptive schedule");
    cfg.schedule = LUTHIER_SCHEDULE_RATIO; /* empty tensors: OK, nothing written */
    memset(y, 7, sizeof y);
    CHECK(luthier__op_quantize(OE.ctx[0], &cfg, f, y, 0, 1.0f, 0) == LUTHIER_STATUS_OK && y[0] == 7, "n 0");
    CHECK(luthier__op_qadaptive_avgpool_nhwc(OE.ctx[0], NULL, q, 1, 2, 2, 0, y, 1, 1) == LUTHIER_STATUS_OK && y[0] == 7,
          "c 0");
    ops_env_destroy();
}

