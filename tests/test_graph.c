/* Graphs and plans (luthier_graph.h): every plan is checked against a naive interpreter of the
   same graph (logical NCHW layout, double accumulation, no fusion, no arena). */

/* ---- the reference interpreter ---------------------------------------------------------- */

typedef struct ref_val {
    float *f;
    int64_t *i;      /* i64 tensors */
    const void *raw; /* i32 and bool graph inputs */
} ref_val;

static size_t ref_numel(const luthier__gtensor *t) {
    size_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++) n *= (size_t)t->shape[i];
    return n;
}

static double ref_act(double v, const luthier_fused_activation *a) {
    if (a->kind == LUTHIER_ACTIVATION_RELU) return v > 0 ? v : 0;
    if (a->kind == LUTHIER_ACTIVATION_RELU6) return v < 0 ? 0 : v > 6 ? 6 : v;
    if (a->kind == LUTHIER_ACTIVATION_CLAMP) return v < a->clamp_min ? a->clamp_min : v > a->clamp_max ? a->clamp_max : v;
    return v;
}

/* index of element e (of shape ys, rank r) in a tensor of shape s (rank rs) broadcast to ys */
static size_t ref_bidx(size_t e, const int64_t *ys, int r, const int64_t *s, int rs) {
    size_t off = 0, stride = 1;
    int d;
    for (d = r - 1; d >= 0; d--) {
        size_t idx = e % (size_t)ys[d];
        int ds = d - (r - rs);
        e /= (size_t)ys[d];
        if (ds >= 0) {
            if (s[ds] != 1) off += idx * stride;
            stride *= (size_t)s[ds];
        }
    }
    return off;
}

/* ONNX Resize on one axis, in the formulation of the ONNX reference implementation: the
   original coordinate x, the n input points nearest to it (ceil(x) - n/2 ...), coefficients of
   ratio = x - floor(x) taken in (0, 1] (1 when x is an integer), edge values outside the axis,
   exclude_outside renormalizing. Writes n taps. */
static int ref_resize_taps(const luthier_resize_attrs *a, int use_sizes, int axis, int64_t in, int64_t out, int64_t o,
                           int64_t *idx, double *w) {
    const double s = use_sizes ? (double)out / (double)in : (double)a->scales[axis];
    const double len = use_sizes ? (double)out : (double)in * s, xr = (double)o;
    const int n = a->mode == LUTHIER_RESIZE_NEAREST ? 2 : a->mode == LUTHIER_RESIZE_LINEAR ? 2 : 4;
    double x, ratio, A = a->cubic_coeff_a, sum = 0;
    int64_t base;
    int k;
    switch (a->coord) {
    case LUTHIER_RESIZE_PYTORCH_HALF_PIXEL: x = len > 1 ? (xr + 0.5) / s - 0.5 : 0; break;
    case LUTHIER_RESIZE_ALIGN_CORNERS: x = len == 1 ? 0 : xr * (double)(in - 1) / (len - 1); break;
    case LUTHIER_RESIZE_ASYMMETRIC: x = xr / s; break;
    case LUTHIER_RESIZE_HALF_PIXEL_SYMMETRIC: {
        const double adjustment = (double)out / len, center = (double)in / 2, offset = center * (1 - adjustment);
        x = offset + (xr + 0.5) / s - 0.5;
        break;
    }
    case LUTHIER_RESIZE_TF_HALF_PIXEL_FOR_NN: x = (xr + 0.5) / s; break;
    default: x = (xr + 0.5) / s - 0.5; break;
    }
    ratio = x == floor(x) ? 1 : x - floor(x);
    base = (int64_t)ceil(x) - n / 2;
    if (a->mode == LUTHIER_RESIZE_NEAREST) {
        int second = ratio == 1;
        if (!second) {
            switch (a->nearest_mode) {
            case LUTHIER_RESIZE_ROUND_PREFER_FLOOR: second = ratio > 0.5; break;
            case LUTHIER_RESIZE_ROUND_PREFER_CEIL: second = ratio >= 0.5; break;
            case LUTHIER_RESIZE_FLOOR: second = 0; break;
            default: second = 1; break;
            }
        }
        w[0] = !second, w[1] = second;
    } else if (a->mode == LUTHIER_RESIZE_LINEAR) {
        w[0] = 1 - ratio, w[1] = ratio;
    } else {
        const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
        w[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
        w[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
        w[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
        w[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
    }
    for (k = 0; k < n; k++) {
        int64_t i = base + k;
        if (a->exclude_outside && (i < 0 || i >= in)) w[k] = 0;
        sum += w[k];
        idx[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
    }
    if (a->exclude_outside)
        for (k = 0; k < n; k++) w[k] /= sum;
    return n;
}

static void ref_resize(const luthier_node_desc *d, const luthier__gtensor *xt, const luthier__gtensor *yt, const float *x,
                       float *y) {
    const luthier_resize_attrs *a = &d->attr.resize;
    const int r = xt->rank;
    int use_sizes = 0, k, t[LUTHIER_MAX_RANK], n[LUTHIER_MAX_RANK];
    int64_t idx[LUTHIER_MAX_RANK][4];
    double w[LUTHIER_MAX_RANK][4];
    size_t e, ny = ref_numel(yt);
    for (k = 0; k < r; k++) use_sizes |= a->sizes[k] != 0;
    for (e = 0; e < ny; e++) {
        size_t rem = e;
        double acc = 0;
        for (k = r - 1; k >= 0; k--) {
            n[k] = ref_resize_taps(a, use_sizes, k, xt->shape[k], yt->shape[k], (int64_t)(rem % (size_t)yt->shape[k]), idx[k], w[k]);
            rem /= (size_t)yt->shape[k];
            t[k] = 0;
        }
        for (;;) { /* every combination of taps */
            double wt = 1;
            size_t off = 0;
            for (k = 0; k < r; k++) wt *= w[k][t[k]], off = off * (size_t)xt->shape[k] + (size_t)idx[k][t[k]];
            acc += wt * x[off];
            for (k = r - 1; k >= 0 && ++t[k] == n[k]; k--) t[k] = 0;
            if (k < 0) break;
        }
        y[e] = (float)acc;
    }
}

/* numpy.pad's modes on one axis, for index i of the padded axis (before cropping); -1: value */
static int64_t ref_pad_index(int64_t i, int64_t len, int mode) {
    if (i >= 0 && i < len) return i;
    if (mode == LUTHIER_PAD_CONSTANT) return -1;
    if (mode == LUTHIER_PAD_EDGE) return i < 0 ? 0 : len - 1;
    if (mode == LUTHIER_PAD_WRAP) {
        while (i < 0) i += len;
        return i % len;
    }
    if (len == 1) return 0;
    while (i < 0 || i >= len) i = i < 0 ? -i : 2 * (len - 1) - i; /* reflect */
    return i;
}

/* ---- comparisons, logic, Mod, Where, Cast from the ONNX spec (naive loops) ---- */

/* element ie of tensor t as a double (f32) or int64 (i64, i32, bool) */
static double ref_getf(const ref_val *v, const luthier__gtensor *t, size_t ie) { (void)t; return v->f[ie]; }
static int64_t ref_geti(const ref_val *v, const luthier__gtensor *t, size_t ie) {
    if (t->dtype == LUTHIER_DTYPE_I64) return v->i[ie];
    if (t->dtype == LUTHIER_DTYPE_I32) return ((const int32_t *)v->raw)[ie];
    return ((const uint8_t *)v->raw)[ie] != 0;
}

/* nearest binary16 value of f (ties to even), by its exponent's quantum (no bit tricks) */
static double ref_f16(double f) {
    double a = fabs(f), q;
    int e;
    if (f != f || a == INFINITY) return f;
    if (a >= 65520.0) return f < 0 ? -INFINITY : INFINITY;
    if (a == 0) return f;
    e = (int)floor(log2(a));
    if (ldexp(1.0, e) > a) e--; /* log2 rounding */
    if (ldexp(1.0, e + 1) <= a) e++;
    if (e < -14) e = -14;
    q = ldexp(1.0, e - 10);
    return nearbyint(f / q) * q;
}

/* ONNX Cast to an integer range [lo, hi] from a float: truncation; NaN 0 and saturation are
   luthier's documented choices (undefined in the spec) */
static int64_t ref_f2i(double f, int bits) {
    const double lim = ldexp(1.0, bits - 1);
    if (f != f) return 0;
    if (f >= lim) return bits == 64 ? INT64_MAX : INT32_MAX;
    if (f <= -lim) return bits == 64 ? INT64_MIN : INT32_MIN;
    return (int64_t)trunc(f);
}

static void ref_logic(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    const luthier_node_desc *d = &n->d;
    const luthier__gtensor *xt = &g->tensors[n->inputs[0]], *yt = &g->tensors[n->outputs[0]];
    const luthier__gtensor *bt = d->num_inputs > 1 ? &g->tensors[n->inputs[1]] : NULL;
    const luthier__gtensor *ct = d->num_inputs > 2 ? &g->tensors[n->inputs[2]] : NULL;
    ref_val *x = &v[n->inputs[0]], *b = bt ? &v[n->inputs[1]] : NULL, *c = ct ? &v[n->inputs[2]] : NULL, *y = &v[n->outputs[0]];
    size_t ny = ref_numel(yt), e;
    for (e = 0; e < ny; e++) {
        size_t ia = ref_bidx(e, yt->shape, yt->rank, xt->shape, xt->rank);
        size_t ib = bt ? ref_bidx(e, yt->shape, yt->rank, bt->shape, bt->rank) : 0;
        size_t ic = ct ? ref_bidx(e, yt->shape, yt->rank, ct->shape, ct->rank) : 0;
        int r = 0;
        switch (d->op) {
        case LUTHIER_OP_EQUAL: case LUTHIER_OP_GREATER: case LUTHIER_OP_LESS: case LUTHIER_OP_GREATER_OR_EQUAL:
        case LUTHIER_OP_LESS_OR_EQUAL: {
            int lt, gt, eq;
            if (xt->dtype == LUTHIER_DTYPE_I64) {
                int64_t p = ref_geti(x, xt, ia), q = ref_geti(b, bt, ib);
                lt = p < q, gt = p > q, eq = p == q;
            } else { /* NaN: unordered, every comparison false */
                double p = ref_getf(x, xt, ia), q = ref_getf(b, bt, ib);
                lt = p < q, gt = p > q, eq = p == q;
            }
            r = d->op == LUTHIER_OP_EQUAL ? eq : d->op == LUTHIER_OP_GREATER ? gt : d->op == LUTHIER_OP_LESS ? lt
              : d->op == LUTHIER_OP_GREATER_OR_EQUAL ? gt || eq : lt || eq;
            y->f[e] = (float)r;
            break;
        }
        case LUTHIER_OP_AND: case LUTHIER_OP_OR: case LUTHIER_OP_XOR: {
            int p = x->f[ia] != 0, q = b->f[ib] != 0;
            y->f[e] = (float)(d->op == LUTHIER_OP_AND ? p && q : d->op == LUTHIER_OP_OR ? p || q : p != q);
            break;
        }
        case LUTHIER_OP_NOT: y->f[e] = x->f[ia] == 0 ? 1.0f : 0.0f; break;
        case LUTHIER_OP_MOD:
            if (xt->dtype == LUTHIER_DTYPE_I64) { /* from the quotient: truncated, or floored (fmod 0) */
                int64_t p = ref_geti(x, xt, ia), q = ref_geti(b, bt, ib), qt;
                if (q == 0 || q == -1) { y->i[e] = 0; break; } /* luthier: 0 (undefined in ONNX) */
                qt = p / q;
                if (!d->attr.mod.fmod && qt * q != p && ((p < 0) != (q < 0))) qt--;
                y->i[e] = (int64_t)((uint64_t)p - (uint64_t)qt * (uint64_t)q); /* (in range; the product may not be) */
            } else if (d->attr.mod.fmod) {
                y->f[e] = (float)fmod(x->f[ia], b->f[ib]);
            } else { /* integer-valued floats: Python's a - floor(a / b) b on integers */
                int64_t p = (int64_t)x->f[ia], q = (int64_t)b->f[ib], fl = p / q;
                if (fl * q != p && ((p < 0) != (q < 0))) fl--;
                y->f[e] = (float)(p - fl * q);
            }
            break;
        case LUTHIER_OP_WHERE:
            if (bt->dtype == LUTHIER_DTYPE_I64) y->i[e] = x->f[ia] != 0 ? b->i[ib] : c->i[ic];
            else y->f[e] = x->f[ia] != 0 ? b->f[ib] : c->f[ic];
            break;
        case LUTHIER_OP_CAST: {
            const int to = d->attr.cast.to, fsrc = xt->dtype == LUTHIER_DTYPE_F32;
            const double f = fsrc ? x->f[ia] : (double)ref_geti(x, xt, ia);
            const int64_t iv = fsrc ? 0 : ref_geti(x, xt, ia);
            switch (to) {
            case LUTHIER_CAST_TO_F32: y->f[e] = fsrc ? x->f[ia] : (float)iv; break;
            case LUTHIER_CAST_TO_BOOL: y->f[e] = (fsrc ? f != 0 : iv != 0) ? 1.0f : 0.0f; break;
            case LUTHIER_CAST_TO_F16: y->f[e] = (float)ref_f16(fsrc ? f : (double)(float)iv); break;
            case LUTHIER_CAST_TO_I64: y->i[e] = fsrc ? ref_f2i(f, 64) : iv; break;
            default: /* I32 */
                if (fsrc) {
                    y->i[e] = ref_f2i(f, 32);
                } else { /* modulo 2^32 into [-2^31, 2^31) */
                    int64_t m = (int64_t)(((uint64_t)iv) % 4294967296u);
                    y->i[e] = m >= 2147483648LL ? m - 4294967296LL : m;
                }
                break;
            }
            break;
        }
        default: break;
        }
    }
}

/* LSTM, GRU and RNN written from the ONNX operator document's equations (default activations,
   double precision); clip bounds each gate's pre-activation (onnxruntime's reading; the cell
   state itself is not clipped). Gate blocks: LSTM i, o, f, c; GRU z, r, h. */
static double ref_sig(double v) { return 1.0 / (1.0 + exp(-v)); }

static double ref_clip(const luthier_rnn_attrs *a, double v) {
    if (!a->has_clip) return v;
    return v < -a->clip ? -a->clip : v > a->clip ? a->clip : v;
}

typedef struct ref_rnn_t {
    const luthier_rnn_attrs *a;
    int64_t ns, nb, ni, nh, nd, ng; /* seq, batch, input, hidden, directions, gates */
    const float *x, *w, *r, *bias, *p;
    const int64_t *lens; /* sequence_lens or NULL (all seq) */
} ref_rnn_t;

/* x_t W_gate^T + Wb_gate for unit k of batch row b of direction dir */
static double ref_rnn_xw(const ref_rnn_t *m, int64_t dir, int64_t t, int64_t b, int64_t gate, int64_t k) {
    const float *xr = m->x + (m->a->layout ? b * m->ns + t : t * m->nb + b) * m->ni;
    const float *wr = m->w + (dir * m->ng * m->nh + gate * m->nh + k) * m->ni;
    double acc = m->bias ? m->bias[dir * 2 * m->ng * m->nh + gate * m->nh + k] : 0.0;
    int64_t i;
    for (i = 0; i < m->ni; i++) acc += (double)xr[i] * wr[i];
    return acc;
}

/* h R_gate^T + Rb_gate for unit k */
static double ref_rnn_hr(const ref_rnn_t *m, int64_t dir, const double *h, int64_t gate, int64_t k) {
    const float *rr = m->r + (dir * m->ng * m->nh + gate * m->nh + k) * m->nh;
    double acc = m->bias ? m->bias[dir * 2 * m->ng * m->nh + m->ng * m->nh + gate * m->nh + k] : 0.0;
    int64_t j;
    for (j = 0; j < m->nh; j++) acc += h[j] * rr[j];
    return acc;
}

/* one time step of one batch row: h, c (LSTM) updated */
static void ref_rnn_cell(const ref_rnn_t *m, luthier_op op, int64_t dir, int64_t t, int64_t b, double *h, double *c, double *tmp) {
    const luthier_rnn_attrs *a = m->a;
    const int64_t H = m->nh;
    const float *p = m->p ? m->p + dir * 3 * H : NULL;
    double *hn = tmp, *z = tmp + H, *r = tmp + 2 * H, *rh = tmp + 3 * H;
    int64_t k;
    for (k = 0; k < H; k++) {
        if (op == LUTHIER_OP_LSTM) {
            double it = ref_sig(ref_clip(a, ref_rnn_xw(m, dir, t, b, 0, k) + ref_rnn_hr(m, dir, h, 0, k) + (p ? p[k] * c[k] : 0)));
            double ft = a->input_forget ? 1 - it
                                        : ref_sig(ref_clip(a, ref_rnn_xw(m, dir, t, b, 2, k) + ref_rnn_hr(m, dir, h, 2, k) +
                                                                 (p ? p[2 * H + k] * c[k] : 0)));
            double ct = tanh(ref_clip(a, ref_rnn_xw(m, dir, t, b, 3, k) + ref_rnn_hr(m, dir, h, 3, k)));
            double cn = ft * c[k] + it * ct;
            double ot = ref_sig(ref_clip(a, ref_rnn_xw(m, dir, t, b, 1, k) + ref_rnn_hr(m, dir, h, 1, k) + (p ? p[H + k] * cn : 0)));
            c[k] = cn; /* c[k] is read only for unit k */
            hn[k] = ot * tanh(cn);
        } else if (op == LUTHIER_OP_GRU) {
            z[k] = ref_sig(ref_clip(a, ref_rnn_xw(m, dir, t, b, 0, k) + ref_rnn_hr(m, dir, h, 0, k)));
            r[k] = ref_sig(ref_clip(a, ref_rnn_xw(m, dir, t, b, 1, k) + ref_rnn_hr(m, dir, h, 1, k)));
            rh[k] = r[k] * h[k];
        } else {
            hn[k] = tanh(ref_clip(a, ref_rnn_xw(m, dir, t, b, 0, k) + ref_rnn_hr(m, dir, h, 0, k)));
        }
    }
    for (k = 0; k < H && op == LUTHIER_OP_GRU; k++) {
        double cand;
        if (a->linear_before_reset) {
            cand = ref_rnn_xw(m, dir, t, b, 2, k) + r[k] * ref_rnn_hr(m, dir, h, 2, k);
        } else { /* (r (.) h) R_h^T + Rb_h */
            const float *rr = m->r + (dir * m->ng * H + 2 * H + k) * H;
            int64_t j;
            cand = ref_rnn_xw(m, dir, t, b, 2, k) + (m->bias ? m->bias[dir * 2 * m->ng * H + m->ng * H + 2 * H + k] : 0.0);
            for (j = 0; j < H; j++) cand += rh[j] * rr[j];
        }
        hn[k] = (1 - z[k]) * tanh(ref_clip(a, cand)) + z[k] * h[k];
    }
    memcpy(h, hn, sizeof(double) * (size_t)H);
}

/* The whole layer on m's arrays: outputs y, yh and (LSTM) yc laid out as the node's. */
static void ref_rnn_raw(const ref_rnn_t *m, luthier_op op, const float *h0, const float *c0, float *y, float *yh, float *yc) {
    double *h = (double *)malloc(sizeof(double) * (size_t)(m->nb * m->nh));
    double *c = (double *)malloc(sizeof(double) * (size_t)(m->nb * m->nh));
    double *tmp = (double *)malloc(sizeof(double) * (size_t)(4 * m->nh));
    int64_t dir, step, b, k;
    for (dir = 0; dir < m->nd; dir++) {
        const int rev = m->a->direction == LUTHIER_RNN_REVERSE || dir == 1;
        for (b = 0; b < m->nb; b++)
            for (k = 0; k < m->nh; k++) {
                const int64_t si = (m->a->layout ? b * m->nd + dir : dir * m->nb + b) * m->nh + k;
                h[b * m->nh + k] = h0 ? h0[si] : 0.0;
                c[b * m->nh + k] = c0 ? c0[si] : 0.0;
            }
        for (b = 0; b < m->nb; b++) { /* a sequence of len steps (t < len; reverse from len - 1), zeros after */
            const int64_t len = m->lens ? m->lens[b] : m->ns;
            for (step = 0; step < m->ns; step++) {
                const int64_t t = step >= len ? step : rev ? len - 1 - step : step;
                if (step < len) ref_rnn_cell(m, op, dir, t, b, h + b * m->nh, c + b * m->nh, tmp);
                for (k = 0; k < m->nh; k++)
                    y[(m->a->layout ? (b * m->ns + t) * m->nd + dir : (t * m->nd + dir) * m->nb + b) * m->nh + k] =
                        step < len ? (float)h[b * m->nh + k] : 0.0f;
            }
        }
        for (b = 0; b < m->nb; b++)
            for (k = 0; k < m->nh; k++) {
                const int64_t si = (m->a->layout ? b * m->nd + dir : dir * m->nb + b) * m->nh + k;
                yh[si] = (float)h[b * m->nh + k];
                if (yc) yc[si] = (float)c[b * m->nh + k];
            }
    }
    free(h);
    free(c);
    free(tmp);
}

static void ref_rnn(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    const luthier_node_desc *d = &n->d;
    const luthier__gtensor *xt = &g->tensors[n->inputs[0]];
    const int ni = d->num_inputs;
    ref_rnn_t m;
    m.a = d->op == LUTHIER_OP_LSTM ? &d->attr.lstm : d->op == LUTHIER_OP_GRU ? &d->attr.gru : &d->attr.rnn;
    m.ns = xt->shape[m.a->layout], m.nb = xt->shape[1 - m.a->layout], m.ni = xt->shape[2], m.nh = m.a->hidden_size;
    m.nd = m.a->direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
    m.ng = d->op == LUTHIER_OP_LSTM ? 4 : d->op == LUTHIER_OP_GRU ? 3 : 1;
    m.x = v[n->inputs[0]].f, m.w = v[n->inputs[1]].f, m.r = v[n->inputs[2]].f;
    m.bias = ni > 3 && n->inputs[3] >= 0 ? v[n->inputs[3]].f : NULL;
    m.p = ni > 7 && n->inputs[7] >= 0 ? v[n->inputs[7]].f : NULL;
    m.lens = ni > 4 && n->inputs[4] >= 0 ? v[n->inputs[4]].i : NULL;
    ref_rnn_raw(&m, d->op, ni > 5 && n->inputs[5] >= 0 ? v[n->inputs[5]].f : NULL, ni > 6 && n->inputs[6] >= 0 ? v[n->inputs[6]].f : NULL,
                v[n->outputs[0]].f, v[n->outputs[1]].f, d->op == LUTHIER_OP_LSTM ? v[n->outputs[2]].f : NULL);
}

/* coordinates of element e of a tensor of shape s (rank r), and back */
static void ref_coords(size_t e, const int64_t *s, int r, int64_t *c) {
    int k;
    for (k = r - 1; k >= 0; k--) c[k] = (int64_t)(e % (size_t)s[k]), e /= (size_t)s[k];
}

static size_t ref_offset(const int64_t *c, const int64_t *s, int r) {
    size_t off = 0;
    int k;
    for (k = 0; k < r; k++) off = off * (size_t)s[k] + (size_t)c[k];
    return off;
}

/* ONNX ScatterND / ScatterElements reduction: none, add, mul, max, min (numpy.maximum: NaN wins) */
static float ref_scatter(int red, float y, float u) {
    if (red == LUTHIER_SCATTER_ADD) return y + u;
    if (red == LUTHIER_SCATTER_MUL) return y * u;
    if (red == LUTHIER_SCATTER_MAX) return isnan(y) || isnan(u) ? NAN : fmaxf(y, u);
    if (red == LUTHIER_SCATTER_MIN) return isnan(y) || isnan(u) ? NAN : fminf(y, u);
    return u;
}

/* The locals every reference case reads: the node, its first input and output. */
#define REF_LOCALS                                                                                   \
    const luthier_node_desc *d = &n->d;                                                              \
    const luthier__gtensor *xt = &g->tensors[n->inputs[0]], *yt = &g->tensors[n->outputs[0]];       \
    const float *x = v[n->inputs[0]].f;                                                              \
    float *y = v[n->outputs[0]].f;                                                                   \
    size_t ny = ref_numel(yt), e = 0;                                                                \
    (void)d, (void)xt, (void)yt, (void)x, (void)y, (void)ny, (void)e

static void ref_conv2d(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *wt = &g->tensors[n->inputs[1]];
    const float *w = v[n->inputs[1]].f, *b = d->num_inputs > 2 && n->inputs[2] >= 0 ? v[n->inputs[2]].f : NULL;
    int64_t N = xt->shape[0], C = xt->shape[1], H = xt->shape[2], W = xt->shape[3], O = wt->shape[0], KH = wt->shape[2],
            KW = wt->shape[3], OH = yt->shape[2], OW = yt->shape[3], G = d->attr.conv2d.groups, cg = C / G, og = O / G;
    int64_t sh = d->attr.conv2d.stride[0], sw = d->attr.conv2d.stride[1], dh = d->attr.conv2d.dilation[0],
            dw = d->attr.conv2d.dilation[1], b0, o, i, j, c, u, q;
    for (b0 = 0; b0 < N; b0++)
        for (o = 0; o < O; o++)
            for (i = 0; i < OH; i++)
                for (j = 0; j < OW; j++) {
                    double acc = b ? b[o] : 0;
                    int64_t gi = o / og;
                    for (c = 0; c < cg; c++)
                        for (u = 0; u < KH; u++)
                            for (q = 0; q < KW; q++) {
                                int64_t r = i * sh - d->attr.conv2d.pads[0] + u * dh, s = j * sw - d->attr.conv2d.pads[1] + q * dw;
                                if (r < 0 || s < 0 || r >= H || s >= W) continue;
                                acc += (double)x[((b0 * C + gi * cg + c) * H + r) * W + s] * w[((o * cg + c) * KH + u) * KW + q];
                            }
                    y[((b0 * O + o) * OH + i) * OW + j] = (float)ref_act(acc, &d->attr.conv2d.act);
                }
}

static void ref_dense(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *wt = &g->tensors[n->inputs[1]];
    const float *w = v[n->inputs[1]].f, *b = d->num_inputs > 2 && n->inputs[2] >= 0 ? v[n->inputs[2]].f : NULL;
    size_t K = (size_t)xt->shape[xt->rank - 1], N = (size_t)yt->shape[yt->rank - 1], M = ny / N, m, j, k;
    (void)wt;
    for (m = 0; m < M; m++)
        for (j = 0; j < N; j++) {
            double acc = b ? b[j] : 0;
            for (k = 0; k < K; k++) acc += (double)x[m * K + k] * (d->attr.dense.trans_b ? w[k * N + j] : w[j * K + k]);
            y[m * N + j] = (float)ref_act(acc, &d->attr.dense.act);
        }
}

static void ref_matmul(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *bt = &g->tensors[n->inputs[1]];
    const float *bb = v[n->inputs[1]].f;
    int r = yt->rank;
    size_t M = (size_t)yt->shape[r - 2], N = (size_t)yt->shape[r - 1], K = (size_t)xt->shape[xt->rank - 1];
    size_t batches = ny / (M * N), bi, m, j, k;
    for (bi = 0; bi < batches; bi++) {
        size_t ao = ref_bidx(bi, yt->shape, r - 2, xt->shape, xt->rank - 2) * M * K,
               bo = ref_bidx(bi, yt->shape, r - 2, bt->shape, bt->rank - 2) * K * N;
        for (m = 0; m < M; m++)
            for (j = 0; j < N; j++) {
                double acc = 0;
                for (k = 0; k < K; k++) acc += (double)x[ao + m * K + k] * (d->attr.matmul.trans_b ? bb[bo + j * K + k] : bb[bo + k * N + j]);
                y[bi * M * N + m * N + j] = (float)acc;
            }
    }
}

static void ref_pool(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    int64_t N = xt->shape[0], C = xt->shape[1], H = xt->shape[2], W = xt->shape[3], OH = yt->shape[2], OW = yt->shape[3];
    const luthier_pool_attrs *pa = &d->attr.pool;
    int64_t kh = pa->kernel[0], kw = pa->kernel[1], sh = pa->stride[0], sw = pa->stride[1], dh = pa->dilation[0],
            dw = pa->dilation[1], b0, c, i, j, u, q;
    for (b0 = 0; b0 < N; b0++)
        for (c = 0; c < C; c++)
            for (i = 0; i < OH; i++)
                for (j = 0; j < OW; j++) {
                    double acc = d->op == LUTHIER_OP_MAXPOOL ? -INFINITY : 0;
                    int64_t cnt = 0, hs = i * sh - pa->pads[0], ws = j * sw - pa->pads[1];
                    for (u = 0; u < kh; u++)
                        for (q = 0; q < kw; q++) {
                            int64_t r = hs + u * dh, s = ws + q * dw;
                            double t;
                            if (r < 0 || s < 0 || r >= H || s >= W) continue;
                            t = x[((b0 * C + c) * H + r) * W + s];
                            if (d->op == LUTHIER_OP_MAXPOOL) acc = t > acc ? t : acc;
                            else acc += t;
                            cnt++;
                        }
                    if (d->op == LUTHIER_OP_AVGPOOL) {
                        if (pa->count_include_pad) {
                            int64_t he = hs + kh, we = ws + kw;
                            if (he > H + pa->pads[2]) he = H + pa->pads[2];
                            if (we > W + pa->pads[3]) we = W + pa->pads[3];
                            cnt = (he - hs) * (we - ws);
                        }
                        acc /= (double)cnt;
                    }
                    y[((b0 * C + c) * OH + i) * OW + j] = (float)acc;
                }
}

static void ref_global_pool(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    int64_t N = xt->shape[0], C = xt->shape[1], H = xt->shape[2], W = xt->shape[3], OH = yt->shape[2], OW = yt->shape[3];
    int64_t b0, c, i, j, r, s;
    for (b0 = 0; b0 < N; b0++)
        for (c = 0; c < C; c++)
            for (i = 0; i < OH; i++)
                for (j = 0; j < OW; j++) {
                    int64_t h0 = i * H / OH, h1 = ((i + 1) * H + OH - 1) / OH, w0 = j * W / OW, w1 = ((j + 1) * W + OW - 1) / OW;
                    double acc = 0;
                    for (r = h0; r < h1; r++)
                        for (s = w0; s < w1; s++) acc += x[((b0 * C + c) * H + r) * W + s];
                    y[((b0 * C + c) * OH + i) * OW + j] = (float)(acc / (double)((h1 - h0) * (w1 - w0)));
                }
}

static void ref_activation(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier_node_attrs *a = &d->attr;
    for (e = 0; e < ny; e++) {
        double t = x[e], r, al, h;
        switch (d->op) {
        case LUTHIER_OP_LEAKY_RELU: r = t < 0 ? a->leaky_relu.alpha * t : t; break;
        case LUTHIER_OP_ELU: r = t < 0 ? a->elu.alpha * (exp(t) - 1.0) : t; break;
        case LUTHIER_OP_SELU:
            r = t <= 0 ? a->selu.gamma * (a->selu.alpha * exp(t) - a->selu.alpha) : a->selu.gamma * t;
            break;
        case LUTHIER_OP_CELU:
            al = a->celu.alpha;
            h = al * (exp(t / al) - 1);
            r = (t > 0 ? t : 0) + (h < 0 ? h : 0);
            break;
        case LUTHIER_OP_HARD_SIGMOID:
            h = a->hard_sigmoid.alpha * t + a->hard_sigmoid.beta;
            r = h < 0 ? 0 : h > 1 ? 1 : h;
            break;
        case LUTHIER_OP_HARD_SWISH:
            h = t / 6 + 0.5;
            r = t * (h < 0 ? 0 : h > 1 ? 1 : h);
            break;
        case LUTHIER_OP_SOFTPLUS: r = log(exp(t) + 1); break;
        case LUTHIER_OP_SOFTSIGN: r = t / (1 + fabs(t)); break;
        case LUTHIER_OP_MISH: r = t * tanh(log(exp(t) + 1)); break;
        default: r = t > a->thresholded_relu.alpha ? t : 0; break;
        }
        y[e] = (float)r;
    }
}

static void ref_binary(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *bt = &g->tensors[n->inputs[1]];
    const float *b = v[n->inputs[1]].f;
    for (e = 0; e < ny; e++) {
        double a = x[ref_bidx(e, yt->shape, yt->rank, xt->shape, xt->rank)], c = b[ref_bidx(e, yt->shape, yt->rank, bt->shape, bt->rank)], r;
        switch (d->op) {
        case LUTHIER_OP_ADD: r = a + c; break;
        case LUTHIER_OP_SUB: r = a - c; break;
        case LUTHIER_OP_MUL: r = a * c; break;
        case LUTHIER_OP_DIV: r = a / c; break;
        case LUTHIER_OP_POW: r = pow(a, c); break;
        case LUTHIER_OP_MAX: r = a > c ? a : c; break;
        default: r = a < c ? a : c; break;
        }
        y[e] = (float)ref_act(r, &d->attr.binary.act);
    }
}

static void ref_concat_split(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *whole = d->op == LUTHIER_OP_CONCAT ? yt : xt;
    int axis = d->attr.axis.axis < 0 ? d->attr.axis.axis + whole->rank : d->attr.axis.axis, k, parts = d->op == LUTHIER_OP_CONCAT ? d->num_inputs : n->num_outputs;
    size_t outer = 1, inner = 1, o, pos;
    for (k = 0; k < axis; k++) outer *= (size_t)whole->shape[k];
    for (k = axis + 1; k < whole->rank; k++) inner *= (size_t)whole->shape[k];
    for (o = 0; o < outer; o++) {
        pos = 0;
        for (k = 0; k < parts; k++) {
            int t = d->op == LUTHIER_OP_CONCAT ? n->inputs[k] : n->outputs[k];
            size_t len = (size_t)g->tensors[t].shape[axis];
            float *part = v[t].f;
            if (d->op == LUTHIER_OP_CONCAT) memcpy(y + (o * (size_t)whole->shape[axis] + pos) * inner, part + o * len * inner, len * inner * 4);
            else memcpy(part + o * len * inner, x + (o * (size_t)whole->shape[axis] + pos) * inner, len * inner * 4);
            pos += len;
        }
    }
}

static void ref_softmax(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    int axis = d->attr.softmax.axis < 0 ? d->attr.softmax.axis + xt->rank : d->attr.softmax.axis, k;
    size_t outer = 1, inner = 1, len = (size_t)xt->shape[axis], o, i, l;
    for (k = 0; k < axis; k++) outer *= (size_t)xt->shape[k];
    for (k = axis + 1; k < xt->rank; k++) inner *= (size_t)xt->shape[k];
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0;
            for (l = 0; l < len; l++) m = x[(o * len + l) * inner + i] > m ? x[(o * len + l) * inner + i] : m;
            for (l = 0; l < len; l++) s += exp(x[(o * len + l) * inner + i] - m);
            for (l = 0; l < len; l++) {
                double t = x[(o * len + l) * inner + i] - m;
                y[(o * len + l) * inner + i] = (float)(d->attr.softmax.log ? t - log(s) : exp(t) / s);
            }
        }
}

static void ref_layer_norm(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    int axis = d->attr.layer_norm.axis < 0 ? d->attr.layer_norm.axis + xt->rank : d->attr.layer_norm.axis, k;
    size_t cols = 1, rows, r, j;
    const float *ga = d->num_inputs > 1 && n->inputs[1] >= 0 ? v[n->inputs[1]].f : NULL;
    const float *be = d->num_inputs > 2 && n->inputs[2] >= 0 ? v[n->inputs[2]].f : NULL;
    for (k = axis; k < xt->rank; k++) cols *= (size_t)xt->shape[k];
    rows = ny / cols;
    for (r = 0; r < rows; r++) {
        double m = 0, var = 0;
        for (j = 0; j < cols; j++) m += x[r * cols + j];
        m /= (double)cols;
        for (j = 0; j < cols; j++) var += (x[r * cols + j] - m) * (x[r * cols + j] - m);
        var /= (double)cols;
        for (j = 0; j < cols; j++)
            y[r * cols + j] = (float)((x[r * cols + j] - m) / sqrt(var + d->attr.layer_norm.epsilon) * (ga ? ga[j] : 1) + (be ? be[j] : 0));
    }
}

static void ref_lrn(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    size_t C = (size_t)xt->shape[1], HW = (size_t)(xt->shape[2] * xt->shape[3]), size = (size_t)d->attr.lrn.size;
    double alpha = d->attr.lrn.alpha, beta = d->attr.lrn.beta, bias = d->attr.lrn.bias;
    for (e = 0; e < ny; e++) {
        size_t c = e / HW % C, base = e - c * HW;
        long lo = (long)c - (long)((size - 1) / 2), hi = (long)c + (long)(size / 2), q;
        double s = 0;
        for (q = lo; q <= hi; q++)
            if (q >= 0 && q < (long)C) s += (double)x[base + (size_t)q * HW] * x[base + (size_t)q * HW];
        y[e] = (float)(x[e] / pow(bias + alpha / (double)size * s, beta));
    }
}

static void ref_transpose(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    size_t st[LUTHIER_MAX_RANK], s = 1;
    int k;
    for (k = xt->rank - 1; k >= 0; k--) st[k] = s, s *= (size_t)xt->shape[k];
    for (e = 0; e < ny; e++) {
        size_t rem = e, src = 0;
        for (k = yt->rank - 1; k >= 0; k--) {
            src += rem % (size_t)yt->shape[k] * st[n->perm[k]];
            rem /= (size_t)yt->shape[k];
        }
        y[e] = x[src];
    }
}

static void ref_gather(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *it = &g->tensors[n->inputs[1]];
    const int64_t *idx = v[n->inputs[1]].i;
    int axis = d->attr.axis.axis < 0 ? d->attr.axis.axis + xt->rank : d->attr.axis.axis, k;
    size_t outer = 1, inner = 1, ni = ref_numel(it), len = (size_t)xt->shape[axis], o, j;
    for (k = 0; k < axis; k++) outer *= (size_t)xt->shape[k];
    for (k = axis + 1; k < xt->rank; k++) inner *= (size_t)xt->shape[k];
    for (o = 0; o < outer; o++)
        for (j = 0; j < ni; j++) {
            int64_t t = idx[j] < 0 ? idx[j] + (int64_t)len : idx[j];
            memcpy(y + (o * ni + j) * inner, x + (o * len + (size_t)t) * inner, inner * 4);
        }
}

static void ref_attention(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *kt = &g->tensors[n->inputs[1]], *vt = &g->tensors[n->inputs[2]];
    const float *k = v[n->inputs[1]].f, *vv = v[n->inputs[2]].f;
    int r = xt->rank;
    size_t sq = (size_t)xt->shape[r - 2], D = (size_t)xt->shape[r - 1], skv = (size_t)kt->shape[r - 2],
           dv = (size_t)vt->shape[r - 1], bh = ref_numel(xt) / (sq * D), b, i, j, c;
    double scale = d->attr.attention.has_scale ? d->attr.attention.scale : 1.0 / sqrt((double)D), *s = (double *)malloc(sizeof(double) * skv);
    for (b = 0; b < bh; b++)
        for (i = 0; i < sq; i++) {
            size_t lim = d->attr.attention.causal ? i + (skv - sq) + 1 : skv;
            double m = -INFINITY, sum = 0;
            for (j = 0; j < lim; j++) {
                double t = 0;
                for (c = 0; c < D; c++) t += (double)x[(b * sq + i) * D + c] * k[(b * skv + j) * D + c];
                s[j] = t * scale;
                m = s[j] > m ? s[j] : m;
            }
            for (j = 0; j < lim; j++) sum += (s[j] = exp(s[j] - m));
            for (c = 0; c < dv; c++) {
                double t = 0;
                for (j = 0; j < lim; j++) t += s[j] * vv[(b * skv + j) * dv + c];
                y[(b * sq + i) * dv + c] = (float)(t / sum);
            }
        }
    free(s);
}

/* each input element to its output element (ONNX Reduce*) */
static void ref_reduce(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier_reduce_attrs *a = &d->attr.reduce;
    int red[LUTHIER_MAX_RANK], k, pass;
    size_t nx = ref_numel(xt);
    double *acc = (double *)calloc(ny, sizeof(double)), *mx = (double *)malloc(ny * sizeof(double));
    for (k = 0; k < xt->rank; k++) red[k] = a->num_axes == 0;
    for (k = 0; k < a->num_axes; k++) red[a->axes[k] < 0 ? a->axes[k] + xt->rank : a->axes[k]] = 1;
    for (e = 0; e < ny; e++) mx[e] = a->kind == LUTHIER_REDUCE_MIN ? INFINITY : -INFINITY, acc[e] = a->kind == LUTHIER_REDUCE_PROD;
    for (pass = 0; pass < 2; pass++)
        for (e = 0; e < nx; e++) {
            size_t rem = e, out = 0, mul = 1;
            double xv = x[e];
            for (k = xt->rank - 1; k >= 0; k--) {
                size_t i = rem % (size_t)xt->shape[k];
                rem /= (size_t)xt->shape[k];
                if (!red[k]) out += i * mul, mul *= (size_t)xt->shape[k];
            }
            if (pass == 0) {
                if (xv != xv || mx[out] != mx[out]) mx[out] = NAN;
                else if (a->kind == LUTHIER_REDUCE_MIN ? xv < mx[out] : xv > mx[out]) mx[out] = xv;
                continue;
            }
            switch (a->kind) {
            case LUTHIER_REDUCE_PROD: acc[out] *= xv; break;
            case LUTHIER_REDUCE_L1: acc[out] += fabs(xv); break;
            case LUTHIER_REDUCE_L2: case LUTHIER_REDUCE_SUM_SQUARE: acc[out] += xv * xv; break;
            case LUTHIER_REDUCE_LOG_SUM_EXP: acc[out] += exp(xv - mx[out]); break;
            default: acc[out] += xv; break;
            }
        }
    for (e = 0; e < ny; e++) {
        double r = acc[e], cnt = (double)nx / (double)ny;
        switch (a->kind) {
        case LUTHIER_REDUCE_MAX: case LUTHIER_REDUCE_MIN: r = mx[e]; break;
        case LUTHIER_REDUCE_MEAN: r = acc[e] / cnt; break;
        case LUTHIER_REDUCE_L2: r = sqrt(acc[e]); break;
        case LUTHIER_REDUCE_LOG_SUM: r = log(acc[e]); break;
        case LUTHIER_REDUCE_LOG_SUM_EXP: r = mx[e] + log(acc[e]); break;
        default: break;
        }
        y[e] = (float)r;
    }
    free(acc);
    free(mx);
}

static void ref_depth_space(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    /* DCR: x reshaped [N, b, b, C/b^2, H, W], transposed [0,3,4,1,5,2]; CRD: [N, C/b^2, b, b, H, W],
       [0,1,4,2,5,3]; space_to_depth: [N, C, H/b, b, W/b, b], [0,3,5,1,2,4] (ONNX) */
    const int d2s = d->op == LUTHIER_OP_DEPTH_TO_SPACE, crd = d2s && d->attr.depth_to_space.mode == LUTHIER_DEPTH_TO_SPACE_CRD;
    const int64_t b = d2s ? d->attr.depth_to_space.blocksize : d->attr.space_to_depth.blocksize;
    const int64_t C = xt->shape[1], H = xt->shape[2], W = xt->shape[3], OC = yt->shape[1], OH = yt->shape[2], OW = yt->shape[3];
    int64_t nn, c, h, ww;
    for (nn = 0; nn < yt->shape[0]; nn++)
        for (c = 0; c < OC; c++)
            for (h = 0; h < OH; h++)
                for (ww = 0; ww < OW; ww++) {
                    int64_t src;
                    if (d2s) {
                        const int64_t i = h % b, j = ww % b;
                        const int64_t xc = crd ? (c * b + i) * b + j : (i * b + j) * OC + c;
                        src = ((nn * C + xc) * H + h / b) * W + ww / b;
                    } else {
                        const int64_t xc = c % C, blk = c / C, i = blk / b, j = blk % b;
                        src = ((nn * C + xc) * H + h * b + i) * W + ww * b + j;
                    }
                    y[((nn * OC + c) * OH + h) * OW + ww] = x[src];
                }
}

static void ref_pad(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier_pad_attrs *a = &d->attr.pad;
    for (e = 0; e < ny; e++) {
        size_t rem = e, off = 0, stride = 1;
        int k, outside = 0;
        for (k = yt->rank - 1; k >= 0; k--) {
            int64_t i = ref_pad_index((int64_t)(rem % (size_t)yt->shape[k]) - a->begin[k], xt->shape[k], a->mode);
            rem /= (size_t)yt->shape[k];
            if (i < 0) outside = 1;
            else off += (size_t)i * stride;
            stride *= (size_t)xt->shape[k];
        }
        y[e] = outside ? a->value : x[off];
    }
}

/* ONNX ConvTranspose: every input pixel scattered through the kernel */
static void ref_conv_transpose(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier_conv_transpose_attrs *a = &d->attr.conv_transpose;
    const luthier__gtensor *wt = &g->tensors[n->inputs[1]];
    const float *w = v[n->inputs[1]].f, *b = d->num_inputs > 2 && n->inputs[2] >= 0 ? v[n->inputs[2]].f : NULL;
    const int64_t N = xt->shape[0], C = xt->shape[1], H = xt->shape[2], W = xt->shape[3], CG = wt->shape[1], KH = wt->shape[2],
                  KW = wt->shape[3], O = yt->shape[1], OH = yt->shape[2], OW = yt->shape[3], G = a->groups, cig = C / G;
    double *acc = (double *)calloc(ny + 1, sizeof(double));
    int64_t b0, ci, iy, ix, co, ky, kx;
    for (e = 0; e < ny; e++) acc[e] = b ? b[(e / (size_t)(OH * OW)) % (size_t)O] : 0.0;
    for (b0 = 0; b0 < N; b0++)
        for (ci = 0; ci < C; ci++)
            for (iy = 0; iy < H; iy++)
                for (ix = 0; ix < W; ix++) {
                    const double xv = x[((b0 * C + ci) * H + iy) * W + ix];
                    const int64_t gi = ci / cig;
                    for (co = 0; co < CG; co++)
                        for (ky = 0; ky < KH; ky++)
                            for (kx = 0; kx < KW; kx++) {
                                const int64_t oy = iy * a->stride[0] - a->pads[0] + ky * a->dilation[0];
                                const int64_t ox = ix * a->stride[1] - a->pads[1] + kx * a->dilation[1];
                                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                                acc[((b0 * O + gi * CG + co) * OH + oy) * OW + ox] +=
                                    xv * (double)w[((ci * CG + co) * KH + ky) * KW + kx];
                            }
                }
    for (e = 0; e < ny; e++) y[e] = (float)ref_act(acc[e], &a->act);
    free(acc);
}

/* ONNX: out[i][j][k] = data[idx[i][j][k]][j][k] (axis 0), ... */
static void ref_elements(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *it = &g->tensors[n->inputs[1]];
    const int64_t *idx = v[n->inputs[1]].i;
    const int scat = d->op == LUTHIER_OP_SCATTER_ELEMENTS;
    const int ax0 = scat ? d->attr.scatter_elements.axis : d->attr.gather_elements.axis, axis = ax0 < 0 ? ax0 + xt->rank : ax0;
    int64_t c[LUTHIER_MAX_RANK];
    size_t ni = ref_numel(it);
    if (scat) memcpy(y, x, ny * 4);
    for (e = 0; e < ni; e++) {
        ref_coords(e, it->shape, it->rank, c);
        c[axis] = idx[e] < 0 ? idx[e] + xt->shape[axis] : idx[e];
        if (scat) y[ref_offset(c, xt->shape, xt->rank)] = ref_scatter(d->attr.scatter_elements.reduction, y[ref_offset(c, xt->shape, xt->rank)], v[n->inputs[2]].f[e]);
        else y[e] = x[ref_offset(c, xt->shape, xt->rank)];
    }
}

/* ONNX: each index tuple (after batch_dims) picks a slice */
static void ref_nd(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    REF_LOCALS;
    const luthier__gtensor *it = &g->tensors[n->inputs[1]];
    const int64_t *idx = v[n->inputs[1]].i;
    const int scat = d->op == LUTHIER_OP_SCATTER_ND, b = scat ? 0 : d->attr.gather_nd.batch_dims;
    const int q = it->rank, m = (int)it->shape[q - 1];
    size_t tuples = ref_numel(it) / (size_t)m, len = 1, batches = 1, t, k2;
    int64_t c[LUTHIER_MAX_RANK], ic[LUTHIER_MAX_RANK];
    int k;
    for (k = b + m; k < xt->rank; k++) len *= (size_t)xt->shape[k];
    for (k = 0; k < b; k++) batches *= (size_t)xt->shape[k];
    if (scat) memcpy(y, x, ny * 4);
    for (t = 0; t < tuples; t++) {
        size_t off;
        ref_coords(t, it->shape, q - 1, ic); /* the tuple's position in indices.shape[:-1] */
        for (k = 0; k < xt->rank; k++) c[k] = 0;
        for (k = 0; k < b; k++) c[k] = ic[k];
        for (k = 0; k < m; k++) {
            int64_t iv = idx[t * (size_t)m + (size_t)k];
            c[b + k] = iv < 0 ? iv + xt->shape[b + k] : iv;
        }
        off = ref_offset(c, xt->shape, xt->rank);
        for (k2 = 0; k2 < len; k2++) {
            if (scat) y[off + k2] = ref_scatter(d->attr.scatter_nd.reduction, y[off + k2], v[n->inputs[2]].f[t * len + k2]);
            else y[t * len + k2] = x[off + k2];
        }
    }
    (void)batches;
}

static void ref_node(const luthier_graph *g, const luthier__gnode *n, ref_val *v) {
    const luthier_node_desc *d = &n->d;
    const luthier__gtensor *xt = &g->tensors[n->inputs[0]], *yt = &g->tensors[n->outputs[0]];
    const float *x = v[n->inputs[0]].f;
    float *y = v[n->outputs[0]].f;
    size_t ny = ref_numel(yt), e;
    switch (d->op) {
    case LUTHIER_OP_CONV2D:
        ref_conv2d(g, n, v);
        break;
    case LUTHIER_OP_DENSE:
        ref_dense(g, n, v);
        break;
    case LUTHIER_OP_MATMUL:
        ref_matmul(g, n, v);
        break;
    case LUTHIER_OP_MAXPOOL:
    case LUTHIER_OP_AVGPOOL:
        ref_pool(g, n, v);
        break;
    case LUTHIER_OP_GLOBAL_AVGPOOL:
    case LUTHIER_OP_ADAPTIVE_AVGPOOL:
        ref_global_pool(g, n, v);
        break;
    case LUTHIER_OP_RELU: case LUTHIER_OP_CLIP: case LUTHIER_OP_GELU: case LUTHIER_OP_SIGMOID: case LUTHIER_OP_TANH:
    case LUTHIER_OP_ERF: case LUTHIER_OP_EXP: case LUTHIER_OP_SQRT: case LUTHIER_OP_NEG: case LUTHIER_OP_IDENTITY:
        for (e = 0; e < ny; e++) {
            double t = x[e], r;
            switch (d->op) {
            case LUTHIER_OP_RELU: r = t > 0 ? t : 0; break;
            case LUTHIER_OP_CLIP: r = t < d->attr.clip.min ? d->attr.clip.min : t > d->attr.clip.max ? d->attr.clip.max : t; break;
            case LUTHIER_OP_GELU:
                r = d->attr.gelu.approximate ? 0.5 * t * (1 + tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)))
                                   : 0.5 * t * (1 + erf(t / sqrt(2.0)));
                break;
            case LUTHIER_OP_SIGMOID: r = 1 / (1 + exp(-t)); break;
            case LUTHIER_OP_TANH: r = tanh(t); break;
            case LUTHIER_OP_ERF: r = erf(t); break;
            case LUTHIER_OP_EXP: r = exp(t); break;
            case LUTHIER_OP_SQRT: r = sqrt(t); break;
            case LUTHIER_OP_NEG: r = -t; break;
            default: r = t; break;
            }
            y[e] = (float)r;
        }
        break;
    /* the activations, as the ONNX operator specification writes them */
    case LUTHIER_OP_LEAKY_RELU: case LUTHIER_OP_ELU: case LUTHIER_OP_SELU: case LUTHIER_OP_CELU: case LUTHIER_OP_HARD_SIGMOID:
    case LUTHIER_OP_HARD_SWISH: case LUTHIER_OP_SOFTPLUS: case LUTHIER_OP_SOFTSIGN: case LUTHIER_OP_MISH:
    case LUTHIER_OP_THRESHOLDED_RELU:
        ref_activation(g, n, v);
        break;
    /* ONNX Abs, Log, Floor, Ceil, Round (half to even, from floor), Reciprocal; silu = x sigmoid(x) */
    case LUTHIER_OP_ABS: case LUTHIER_OP_LOG: case LUTHIER_OP_FLOOR: case LUTHIER_OP_CEIL: case LUTHIER_OP_ROUND:
    case LUTHIER_OP_RECIPROCAL: case LUTHIER_OP_SILU:
        for (e = 0; e < ny; e++) {
            double t = x[e], r, f = floor(t);
            switch (d->op) {
            case LUTHIER_OP_ABS: r = t < 0 ? -t : t; break;
            case LUTHIER_OP_LOG: r = log(t); break;
            case LUTHIER_OP_FLOOR: r = f; break;
            case LUTHIER_OP_CEIL: r = -floor(-t); break;
            case LUTHIER_OP_ROUND: r = t - f > 0.5 || (t - f == 0.5 && fmod(f, 2) != 0) ? f + 1 : f; break;
            case LUTHIER_OP_RECIPROCAL: r = 1 / t; break;
            default: r = t * (1 / (1 + exp(-t))); break;
            }
            y[e] = (float)r;
        }
        break;
    case LUTHIER_OP_PRELU: { /* ONNX PRelu: slope broadcast to x */
        const luthier__gtensor *st = &g->tensors[n->inputs[1]];
        const float *sl = v[n->inputs[1]].f;
        for (e = 0; e < ny; e++) {
            double t = x[e];
            y[e] = (float)(t < 0 ? sl[ref_bidx(e, yt->shape, yt->rank, st->shape, st->rank)] * t : t);
        }
        break;
    }
    case LUTHIER_OP_ADD: case LUTHIER_OP_SUB: case LUTHIER_OP_MUL: case LUTHIER_OP_DIV: case LUTHIER_OP_POW:
    case LUTHIER_OP_MAX: case LUTHIER_OP_MIN:
        ref_binary(g, n, v);
        break;
    case LUTHIER_OP_CONCAT:
    case LUTHIER_OP_SPLIT:
        ref_concat_split(g, n, v);
        break;
    case LUTHIER_OP_SOFTMAX:
        ref_softmax(g, n, v);
        break;
    case LUTHIER_OP_LAYER_NORM:
        ref_layer_norm(g, n, v);
        break;
    case LUTHIER_OP_BATCH_NORM: {
        size_t C = (size_t)xt->shape[1], inner = ny / ((size_t)xt->shape[0] * C);
        const float *ga = v[n->inputs[1]].f, *be = v[n->inputs[2]].f, *mu = v[n->inputs[3]].f, *va = v[n->inputs[4]].f;
        for (e = 0; e < ny; e++) {
            size_t c = e / inner % C;
            y[e] = (float)((x[e] - mu[c]) / sqrt((double)va[c] + d->attr.batch_norm.epsilon) * ga[c] + be[c]);
        }
        break;
    }
    case LUTHIER_OP_LRN:
        ref_lrn(g, n, v);
        break;
    case LUTHIER_OP_FLATTEN:
    case LUTHIER_OP_RESHAPE:
        memcpy(y, x, ny * 4);
        break;
    case LUTHIER_OP_TRANSPOSE:
        ref_transpose(g, n, v);
        break;
    case LUTHIER_OP_GATHER:
        ref_gather(g, n, v);
        break;
    case LUTHIER_OP_ATTENTION:
        ref_attention(g, n, v);
        break;
    case LUTHIER_OP_REDUCE:
        ref_reduce(g, n, v);
        break;
    case LUTHIER_OP_RESIZE:
        ref_resize(d, xt, yt, x, y);
        break;
    case LUTHIER_OP_DEPTH_TO_SPACE:
    case LUTHIER_OP_SPACE_TO_DEPTH:
        ref_depth_space(g, n, v);
        break;
    case LUTHIER_OP_LSTM:
    case LUTHIER_OP_GRU:
    case LUTHIER_OP_RNN:
        ref_rnn(g, n, v);
        break;
    case LUTHIER_OP_PAD:
        ref_pad(g, n, v);
        break;
    case LUTHIER_OP_EQUAL: case LUTHIER_OP_GREATER: case LUTHIER_OP_LESS: case LUTHIER_OP_GREATER_OR_EQUAL:
    case LUTHIER_OP_LESS_OR_EQUAL: case LUTHIER_OP_AND: case LUTHIER_OP_OR: case LUTHIER_OP_XOR: case LUTHIER_OP_MOD:
    case LUTHIER_OP_NOT: case LUTHIER_OP_WHERE: case LUTHIER_OP_CAST:
        ref_logic(g, n, v);
        break;
    case LUTHIER_OP_CONV_TRANSPOSE:
        ref_conv_transpose(g, n, v);
        break;
    case LUTHIER_OP_GATHER_ELEMENTS:
    case LUTHIER_OP_SCATTER_ELEMENTS:
        ref_elements(g, n, v);
        break;
    case LUTHIER_OP_GATHER_ND:
    case LUTHIER_OP_SCATTER_ND:
        ref_nd(g, n, v);
        break;
    default:
        break;
    }
}

/* Runs the whole graph; returns malloc'ed copies of the outputs (caller frees each and the array). */
static float **ref_run(const luthier_graph *g, const void *const *inputs) {
    ref_val *v = (ref_val *)calloc((size_t)g->num_tensors, sizeof *v);
    float **outs = (float **)calloc((size_t)g->num_outputs, sizeof *outs);
    int i;
    for (i = 0; i < g->num_tensors; i++) {
        const luthier__gtensor *t = &g->tensors[i];
        if (t->is_const) {
            if (t->dtype == LUTHIER_DTYPE_I64) v[i].i = (int64_t *)t->data;
            else v[i].f = (float *)t->data;
        } else if (t->is_input) {
            int k;
            for (k = 0; k < g->num_inputs; k++)
                if (g->inputs[k] == i) {
                    if (t->dtype == LUTHIER_DTYPE_I64) v[i].i = (int64_t *)inputs[k];
                    else if (t->dtype == LUTHIER_DTYPE_F32) v[i].f = (float *)inputs[k];
                    else v[i].raw = inputs[k];
                }
        } else if (t->dtype == LUTHIER_DTYPE_I64) {
            v[i].i = (int64_t *)malloc(ref_numel(t) * 8 + 8);
        } else {
            v[i].f = (float *)malloc(ref_numel(t) * 4 + 4);
        }
    }
    for (i = 0; i < g->num_nodes; i++) ref_node(g, &g->nodes[i], v);
    for (i = 0; i < g->num_outputs; i++) { /* i64 outputs: 8 bytes per element */
        const luthier__gtensor *t = &g->tensors[g->outputs[i]];
        const int wide = t->dtype == LUTHIER_DTYPE_I64;
        outs[i] = (float *)malloc(ref_numel(t) * (wide ? 8 : 4) + 8);
        memcpy(outs[i], wide ? (const void *)v[g->outputs[i]].i : (const void *)v[g->outputs[i]].f, ref_numel(t) * (wide ? 8 : 4));
    }
    for (i = 0; i < g->num_tensors; i++)
        if (!g->tensors[i].is_const && !g->tensors[i].is_input) {
            free(v[i].f);
            free(v[i].i);
        }
    free(v);
    return outs;
}

/* ---- graph building helpers ------------------------------------------------------------- */

typedef struct gb {
    luthier_graph *g;
    float *blobs[512];
    int nblobs;
    int fail;
} gb;

static int gb_const(gb *b, const char *name, int rank, const int64_t *shape, float lo, float hi) {
    size_t n = 1, i;
    int t = -1, k;
    float *d;
    for (k = 0; k < rank; k++) n *= (size_t)shape[k];
    d = (float *)malloc(n * 4 + 4);
    for (i = 0; i < n; i++) d[i] = lo + (hi - lo) * (float)test_rand_u64() * (1.0f / 18446744073709551616.0f);
    if (luthier_graph_constant(b->g, name, rank, shape, d, 0, &t) != LUTHIER_STATUS_OK) {
        printf("    gb_const %s: %s\n", name, luthier_graph_error(b->g));
        b->fail = 1;
    }
    b->blobs[b->nblobs++] = d;
    return t;
}

static int gb_node(gb *b, luthier_node_desc *d, int i0, int i1, int i2) {
    int in[3] = {i0, i1, i2}, out = -1;
    d->inputs = in;
    if (!d->num_inputs) d->num_inputs = i2 >= 0 ? 3 : i1 >= 0 ? 2 : 1;
    if (luthier_graph_add_node(b->g, d, &out) != LUTHIER_STATUS_OK) {
        printf("    gb_node %s: %s\n", d->name ? d->name : "?", luthier_graph_error(b->g));
        b->fail = 1;
    }
    d->inputs = NULL; /* in[] dies here */
    return out;
}

static int gb_conv(gb *b, const char *name, int x, int64_t cout, int64_t k, int64_t stride, int64_t pad, int64_t groups,
                   int with_bias, luthier_activation act) {
    luthier_tensor_info ti;
    luthier_node_desc d;
    char wn[96], bn[96];
    int64_t ws[4], bs[1];
    int w, bi = -1;
    luthier_graph_tensor_info(b->g, x, &ti);
    ws[0] = cout; ws[1] = ti.shape[1] / groups; ws[2] = ws[3] = k;
    bs[0] = cout;
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    w = gb_const(b, wn, 4, ws, -0.5f, 0.5f);
    if (with_bias) bi = gb_const(b, bn, 1, bs, -0.2f, 0.2f);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D;
    d.name = name;
    d.stride[0] = d.stride[1] = stride;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = pad;
    d.groups = groups;
    d.activation = act;
    return gb_node(b, &d, x, w, bi);
}

static int gb_bn(gb *b, const char *name, int x) {
    luthier_tensor_info ti;
    luthier_node_desc d;
    char nm[4][96];
    static const char *const suf[4] = {"weight", "bias", "running_mean", "running_var"};
    int p[4], k, in[5];
    int64_t s[1];
    luthier_graph_tensor_info(b->g, x, &ti);
    s[0] = ti.shape[1];
    for (k = 0; k < 4; k++) {
        snprintf(nm[k], sizeof nm[k], "%s.%s", name, suf[k]);
        p[k] = gb_const(b, nm[k], 1, s, k == 3 ? 0.5f : k == 0 ? 0.8f : -0.2f, k == 3 ? 1.5f : k == 0 ? 1.2f : 0.2f);
    }
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_BATCH_NORM;
    d.name = name;
    in[0] = x;
    for (k = 0; k < 4; k++) in[k + 1] = p[k];
    {
        int out = -1;
        d.inputs = in;
        d.num_inputs = 5;
        if (luthier_graph_add_node(b->g, &d, &out) != LUTHIER_STATUS_OK) {
            printf("    gb_bn: %s\n", luthier_graph_error(b->g));
            b->fail = 1;
        }
        return out;
    }
}

static int gb_op(gb *b, luthier_op op, const char *name, int x, int y) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.name = name;
    return gb_node(b, &d, x, y, -1);
}

static void gb_free(gb *b) {
    int i;
    luthier_graph_destroy(b->g);
    for (i = 0; i < b->nblobs; i++) free(b->blobs[i]);
    b->nblobs = 0;
    b->g = NULL;
}

static float *rand_buf(size_t n, float lo, float hi) {
    float *d = (float *)malloc(n * 4 + 4);
    size_t i;
    for (i = 0; i < n; i++) d[i] = lo + (hi - lo) * (float)test_rand_u64() * (1.0f / 18446744073709551616.0f);
    return d;
}

/* Plans g on ctx with pd, runs it on inputs and compares every output with the interpreter:
   max |diff| <= tol * max(1, max |ref|). Returns the max relative error (or 1e30 on failure). */
static double plan_vs_ref(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *pd,
                          const void *const *inputs, double tol, const char *what) {
    luthier_plan *p = NULL;
    luthier_status s = luthier_plan_create(ctx, g, pd, &p);
    float **ref, *outs[16];
    double worst = 0;
    int i, k;
    CHECK(s == LUTHIER_STATUS_OK, "%s: plan_create: %s: %s", what, luthier_status_string(s), luthier_context_error(ctx));
    CHECK(g->num_outputs <= 16, "%s: %d outputs (the harness takes 16)", what, g->num_outputs);
    if (s != LUTHIER_STATUS_OK || g->num_outputs > 16) {
        luthier_plan_destroy(p);
        return 1e30;
    }
    for (i = 0; i < g->num_outputs; i++) {
        size_t n = ref_numel(&g->tensors[g->outputs[i]]);
        outs[i] = (float *)malloc(n * 8);
        for (k = 0; k < (int)n; k++) outs[i][k] = NAN;
    }
    for (k = 0; k < 2; k++) { /* twice: the arena is reused */
        size_t before = test_luthier_allocs;
        s = luthier_plan_run(ctx, p, inputs, (void *const *)outs);
        CHECK(s == LUTHIER_STATUS_OK, "%s: plan_run: %s", what, luthier_context_error(ctx));
        CHECK(test_luthier_allocs == before, "%s: plan_run allocated %zu times", what, test_luthier_allocs - before);
    }
    ref = ref_run(g, inputs);
    for (i = 0; i < g->num_outputs; i++) {
        size_t n = ref_numel(&g->tensors[g->outputs[i]]), e, bad = 0;
        double mx = 1, md = 0;
        if (g->tensors[g->outputs[i]].dtype == LUTHIER_DTYPE_I64) { /* integers: exact */
            const int64_t *gi = (const int64_t *)(void *)outs[i], *ri = (const int64_t *)(void *)ref[i];
            for (e = 0; e < n && gi[e] == ri[e]; e++) {}
            CHECK(e == n, "%s: i64 output %d differs at %zu: got %lld want %lld", what, i, e, e < n ? (long long)gi[e] : 0LL,
                  e < n ? (long long)ri[e] : 0LL);
            free(outs[i]);
            free(ref[i]);
            continue;
        }
        for (e = 0; e < n; e++) mx = fabs(ref[i][e]) > mx && fabs(ref[i][e]) < INFINITY ? fabs(ref[i][e]) : mx;
        for (e = 0; e < n; e++) { /* the same value (infinities) or both NaN: no difference */
            const int same = outs[i][e] == ref[i][e] || (outs[i][e] != outs[i][e] && ref[i][e] != ref[i][e]);
            double dd = same ? 0 : fabs((double)outs[i][e] - ref[i][e]);
            if (!(dd <= md)) md = dd, bad = e;
        }
        CHECK(md <= tol * mx, "%s: output %d max |diff| %.3g at %zu (got %g want %g), max |ref| %.3g", what, i, md, bad,
              (double)outs[i][bad], (double)ref[i][bad], mx);
        if (md / mx > worst || md != md) worst = md != md ? 1e30 : md / mx;
        free(outs[i]);
        free(ref[i]);
    }
    free(ref);
    luthier_plan_destroy(p);
    return worst;
}

/* Layout-conversion steps of a plan of g on ctx (-1 when it does not plan). */
static int plan_conversions(luthier_context *ctx, const luthier_graph *g) {
    luthier_plan *p = NULL;
    luthier_plan_info pi;
    luthier_step_info si;
    int k, conv = 0;
    if (luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) return -1;
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    for (k = 0; k < pi.num_steps; k++)
        if (luthier_plan_step_info(p, k, &si) == LUTHIER_STATUS_OK && si.node < 0) conv++;
    luthier_plan_destroy(p);
    return conv;
}

/* A context of threads threads (0: all) over topo (NULL: this machine's), AUTO under policy. */
/* ---- cases ------------------------------------------------------------------------------ */

/* A ResNet-style network: stem conv+BN+ReLU, maxpool, two basic blocks (one with a
   downsampling 1x1 shortcut), global pool, flatten, dense. */
static void build_mini_resnet(gb *b, int64_t n, int64_t hw, int *input) {
    int64_t xs[4];
    int x, y, id, t;
    xs[0] = n; xs[1] = 3; xs[2] = hw; xs[3] = hw;
    memset(b, 0, sizeof *b);
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "image", LUTHIER_DTYPE_F32, 4, xs, &x);
    *input = x;
    y = gb_conv(b, "conv1", x, 16, 7, 2, 3, 1, 0, LUTHIER_ACTIVATION_NONE);
    y = gb_bn(b, "bn1", y);
    y = gb_op(b, LUTHIER_OP_RELU, "relu", y, -1);
    {
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_MAXPOOL; d.name = "maxpool";
        d.kernel[0] = d.kernel[1] = 3; d.stride[0] = d.stride[1] = 2;
        d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 1;
        y = gb_node(b, &d, y, -1, -1);
    }
    /* block 1: identity shortcut */
    id = y;
    t = gb_conv(b, "layer1.conv1", y, 16, 3, 1, 1, 1, 0, LUTHIER_ACTIVATION_NONE);
    t = gb_bn(b, "layer1.bn1", t);
    t = gb_op(b, LUTHIER_OP_RELU, "layer1.relu1", t, -1);
    t = gb_conv(b, "layer1.conv2", t, 16, 3, 1, 1, 1, 0, LUTHIER_ACTIVATION_NONE);
    t = gb_bn(b, "layer1.bn2", t);
    t = gb_op(b, LUTHIER_OP_ADD, "layer1.add", t, id);
    y = gb_op(b, LUTHIER_OP_RELU, "layer1.relu2", t, -1);
    /* block 2: stride 2, 1x1 downsample */
    t = gb_conv(b, "layer2.conv1", y, 32, 3, 2, 1, 1, 0, LUTHIER_ACTIVATION_NONE);
    t = gb_bn(b, "layer2.bn1", t);
    t = gb_op(b, LUTHIER_OP_RELU, "layer2.relu1", t, -1);
    t = gb_conv(b, "layer2.conv2", t, 32, 3, 1, 1, 1, 0, LUTHIER_ACTIVATION_NONE);
    t = gb_bn(b, "layer2.bn2", t);
    id = gb_conv(b, "layer2.down", y, 32, 1, 2, 0, 1, 0, LUTHIER_ACTIVATION_NONE);
    id = gb_bn(b, "layer2.down_bn", id);
    t = gb_op(b, LUTHIER_OP_ADD, "layer2.add", t, id);
    y = gb_op(b, LUTHIER_OP_RELU, "layer2.relu2", t, -1);
    y = gb_op(b, LUTHIER_OP_GLOBAL_AVGPOOL, "avgpool", y, -1);
    y = gb_op(b, LUTHIER_OP_FLATTEN, "flatten", y, -1);
    {
        int64_t ws[2] = {10, 32}, bs[1] = {10};
        int w = gb_const(b, "fc.weight", 2, ws, -0.3f, 0.3f), bb = gb_const(b, "fc.bias", 1, bs, -0.1f, 0.1f);
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_DENSE; d.name = "fc";
        y = gb_node(b, &d, y, w, bb);
    }
    luthier_graph_output(b->g, y);
}

static void test_graph_mini_resnet(void) {
    gb b;
    int x, threads, fusion;
    float *img;
    luthier_plan_desc pd;
    build_mini_resnet(&b, 2, 33, &x);
    CHECK(!b.fail, "build");
    if (b.fail) { gb_free(&b); return; }
    img = rand_buf(2 * 3 * 33 * 33, -1, 1);
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        for (fusion = 0; fusion < 2; fusion++) {
            char what[64];
            const void *ins[1];
            ins[0] = img;
            memset(&pd, 0, sizeof pd);
            pd.no_fusion = !fusion;
            snprintf(what, sizeof what, "mini resnet, %d threads, fusion %d", threads, fusion);
            plan_vs_ref(ctx, b.g, &pd, ins, 2e-5, what);
        }
        luthier_context_destroy(ctx);
    }
    free(img);
    gb_free(&b);
}

/* Fusion and memory: what the plan reports about the mini ResNet. */
/* Each step's bytes: the node's inputs read once and outputs written once (dense: x, w, bias,
   y), a gather only the rows it selects. */
static void test_graph_step_bytes(void) {
    gb b;
    int64_t xs[2] = {3, 10}, ws[2] = {7, 10}, bs[1] = {7}, ts[2] = {1000, 16}, is[1] = {4};
    static const int64_t idx[4] = {5, 999, 0, 5};
    int x, tb, it, w, bi, y, gi, i, seen = 0;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_plan_info info;
    luthier_node_desc d;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
    luthier_graph_input(b.g, "table", LUTHIER_DTYPE_F32, 2, ts, &tb);
    luthier_graph_constant_i64(b.g, "idx", 1, is, idx, &it);
    w = gb_const(&b, "w", 2, ws, -1, 1);
    bi = gb_const(&b, "b", 1, bs, -1, 1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_DENSE; d.name = "fc";
    y = gb_node(&b, &d, x, w, bi);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_GATHER; d.name = "rows";
    gi = gb_node(&b, &d, tb, it, -1);
    luthier_graph_output(b.g, y);
    luthier_graph_output(b.g, gi);
    CHECK(!b.fail && luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_get_info(p, &info);
        for (i = 0; i < info.num_steps; i++) {
            luthier_step_info si;
            luthier_plan_step_info(p, i, &si);
            if (si.op == LUTHIER_OP_DENSE) {
                seen++;
                CHECK(si.bytes == 4.0 * (30 + 70 + 7 + 21), "dense: %g bytes", si.bytes);
            } else if (si.op == LUTHIER_OP_GATHER) {
                seen++;
                CHECK(si.bytes == 8.0 * 64 + 8.0 * 4, "gather: %g bytes", si.bytes);
            }
        }
        CHECK(seen == 2, "%d steps seen", seen);
    }
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

static void test_graph_plan_info(void) {
    gb b;
    int x, i, convs = 0, fused_add = 0, bn_left = 0;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_plan_info info;
    build_mini_resnet(&b, 1, 64, &x);
    CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_get_info(p, &info);
        for (i = 0; i < info.num_steps; i++) {
            luthier_step_info si;
            luthier_plan_step_info(p, i, &si);
            if (si.op == LUTHIER_OP_CONV2D) convs++;
            if (si.op == LUTHIER_OP_BATCH_NORM || si.op == LUTHIER_OP_RELU) bn_left++;
            if (strstr(si.fused, "add")) fused_add++;
        }
        CHECK(convs == 6, "%d conv steps", convs);
        CHECK(bn_left == 0, "%d batch norm / relu steps left after fusion", bn_left);
        CHECK(fused_add == 2, "%d residual adds fused", fused_add);
        CHECK(info.arena_bytes > 0 && info.arena_bytes < info.sum_activation_bytes * 3 / 4, "arena %zu vs sum %zu",
              info.arena_bytes, info.sum_activation_bytes);
        CHECK(info.weights_bytes > 0 && info.flops > 1e6, "weights %zu flops %g", info.weights_bytes, info.flops);
    }
    luthier_plan_destroy(p);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

/* Caller-provided arena: the plan allocates nothing; running without one is refused. */
static void test_graph_external_arena(void) {
    gb b;
    int x;
    luthier_context *ctx = ctx_threads(2);
    luthier_plan *p = NULL, *q = NULL;
    luthier_plan_desc pd;
    luthier_plan_info info;
    float *img, out1[10], out2[10];
    void *arena;
    const void *ins[1];
    void *outs[1];
    build_mini_resnet(&b, 1, 40, &x);
    img = rand_buf(3 * 40 * 40, -1, 1);
    ins[0] = img;
    memset(&pd, 0, sizeof pd);
    pd.external_arena = 1;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    CHECK(luthier_plan_create(ctx, b.g, NULL, &q) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    gb_free(&b); /* plans outlive their graph */
    if (p && q) {
        luthier_plan_get_info(p, &info);
        outs[0] = out1;
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_INVALID_ARGUMENT, "run without an arena");
        CHECK(strstr(luthier_context_error(ctx), "arena") != NULL, "message: %s", luthier_context_error(ctx));
        arena = luthier__alloc(info.arena_bytes);
        CHECK(luthier_plan_bind_arena(p, arena, info.arena_bytes - 1) == LUTHIER_STATUS_INVALID_ARGUMENT, "short arena");
        CHECK(luthier_plan_bind_arena(p, (char *)arena + 4, info.arena_bytes) == LUTHIER_STATUS_INVALID_ARGUMENT, "misaligned");
        CHECK(luthier_plan_bind_arena(p, arena, info.arena_bytes) == LUTHIER_STATUS_OK, "bind");
        memset(arena, 0xff, info.arena_bytes); /* NaN garbage must not leak into results */
        {
            size_t before = test_luthier_allocs;
            CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
            CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
            CHECK(test_luthier_allocs == before, "plan_run allocated %zu times", test_luthier_allocs - before);
        }
        outs[0] = out2;
        CHECK(luthier_plan_run(ctx, q, ins, outs) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        CHECK(memcmp(out1, out2, sizeof out1) == 0, "external and internal arenas agree");
        luthier__free(arena);
    }
    luthier_plan_destroy(p);
    luthier_plan_destroy(q);
    luthier_context_destroy(ctx);
    free(img);
}

/* Outputs computed straight into the caller's buffers, and the arena path when those buffers
   overlap an input or each other: an output buffer that is the input's must not be written
   before the last step has read the input. Outputs: relu(x) (node first: bound to the input's
   buffer it would overwrite x before the convolution reads it), conv(x) with a fused relu, its
   reshape (the same root), and the input itself. */
static void test_graph_output_buffers(void) {
    gb b;
    int64_t xs[4] = {1, 4, 6, 6}, rs[2] = {1, 144};
    int x, r, y, z, threads, i, k;
    float *img = rand_buf(144, -1, 1), *keep = (float *)malloc(144 * 4), *want[4], *buf[4];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    r = gb_op(&b, LUTHIER_OP_RELU, "relu", x, -1);
    y = gb_conv(&b, "conv", x, 4, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_RELU);
    {
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_RESHAPE; d.name = "reshape"; d.sizes = rs; d.num_sizes = 2;
        z = gb_node(&b, &d, y, -1, -1);
    }
    luthier_graph_output(b.g, r);
    luthier_graph_output(b.g, y);
    luthier_graph_output(b.g, z);
    luthier_graph_output(b.g, x);
    CHECK(!b.fail, "build");
    memcpy(keep, img, 144 * 4);
    for (threads = 1; threads <= 2 && !b.fail; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        luthier_plan *p = NULL;
        const void *ins[1];
        ins[0] = img;
        plan_vs_ref(ctx, b.g, NULL, ins, 1e-5, "output buffers: separate");
        CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        for (i = 0; i < 4; i++) want[i] = (float *)malloc(144 * 4);
        CHECK(luthier_plan_run(ctx, p, ins, (void *const *)want) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        for (k = 0; k < 3; k++) { /* relu's buffer = the input's; conv's = reshape's; both */
            for (i = 0; i < 4; i++) buf[i] = (float *)malloc(144 * 4);
            if (k != 1) { free(buf[0]); buf[0] = img; }
            if (k != 0) { free(buf[2]); buf[2] = buf[1]; }
            CHECK(luthier_plan_run(ctx, p, ins, (void *const *)buf) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
            for (i = 0; i < 4; i++)
                if (!(k == 0 && i == 3) && !(k == 2 && i == 3)) /* the input's own output buffer was rewritten last */
                    CHECK(memcmp(buf[i], want[i], 144 * 4) == 0, "%d threads, case %d: output %d differs", threads, k, i);
            if (k != 1) CHECK(memcmp(img, want[0], 144 * 4) == 0, "%d threads, case %d: relu(x) not left in x's buffer", threads, k);
            for (i = 0; i < 4; i++)
                if (buf[i] != img && !(i == 2 && buf[2] == buf[1])) free(buf[i]);
            memcpy(img, keep, 144 * 4);
        }
        for (i = 0; i < 4; i++) free(want[i]);
        luthier_plan_destroy(p);
        luthier_context_destroy(ctx);
    }
    free(img);
    free(keep);
    gb_free(&b);
}

/* Every algorithm/kernel through per-node configs, and invalid configs. */
static void test_graph_configs(void) {
    gb b;
    int x, i, a;
    luthier_context *ctx = ctx_threads(2);
    luthier_node_config *cfg;
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    float *img;
    const void *ins[1];
    build_mini_resnet(&b, 1, 29, &x);
    img = rand_buf(3 * 29 * 29, -1, 1);
    ins[0] = img;
    cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = b.g->num_nodes;
    pd.fallback_invalid = 1;
    for (a = LUTHIER_CONV_IM2COL; a < LUTHIER_CONV_ALGORITHM_COUNT; a++) {
        char what[64];
        for (i = 0; i < b.g->num_nodes; i++) {
            cfg[i].algorithm = (luthier_conv_algorithm)a;
            cfg[i].num_ratios = ctx->pool->num_clusters;
            cfg[i].ratios[0] = 1.0f;
            cfg[i].schedule = (a & 1) ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
        }
        snprintf(what, sizeof what, "all nodes %s", luthier_conv_algorithm_name((luthier_conv_algorithm)a));
        plan_vs_ref(ctx, b.g, &pd, ins, a >= LUTHIER_CONV_WINOGRAD_2X3 ? 1e-3 : 2e-5, what);
    }
    /* without fallback an invalid choice names the node */
    pd.fallback_invalid = 0;
    for (i = 0; i < b.g->num_nodes; i++) cfg[i].algorithm = LUTHIER_CONV_WINOGRAD_4X3;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) != LUTHIER_STATUS_OK, "Winograd on a 7x7 stride-2 conv accepted");
    CHECK(strstr(luthier_context_error(ctx), "conv1") != NULL, "message names the node: %s", luthier_context_error(ctx));
    luthier_plan_destroy(p);
    p = NULL;
    memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
    snprintf(cfg[0].kernel, sizeof cfg[0].kernel, "no_such_kernel");
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_NOT_FOUND || p == NULL, "unknown kernel accepted");
    luthier_plan_destroy(p);
    p = NULL;
    memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
    cfg[0].num_ratios = 7;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT, "7 ratios accepted");
    { /* weights that cannot split work: all 0 (the plan used to accept them and fail at run time), negative, NaN */
        static const float bad[3] = {0.0f, -1.0f, NAN};
        int k;
        for (k = 0; k < 3; k++) {
            memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
            cfg[b.g->num_nodes - 1].num_ratios = ctx->pool->num_clusters;
            cfg[b.g->num_nodes - 1].ratios[0] = bad[k];
            CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && p == NULL &&
                      strstr(luthier_context_error(ctx), "ratios"), "ratio %g accepted: %s", (double)bad[k], luthier_context_error(ctx));
        }
        memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
    }
    pd.num_configs = 3;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT, "3 configs accepted");
    /* the context still works after failed plans */
    CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    luthier_plan_destroy(p);
    free(cfg);
    free(img);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* Layout transitions: NHWC producers feeding layout-sensitive consumers and broadcasts. */
static void test_graph_layouts(void) {
    gb b;
    int x, c1, c2, y, s, cat, parts[2], sm, fl, m, gap, r;
    int64_t xs[4] = {2, 5, 9, 7}, cs[4] = {1, 8, 1, 1}, fs[4] = {1, 1, 9, 7};
    luthier_node_desc d;
    luthier_context *ctx;
    float *img;
    const void *ins[1];
    int threads;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    c1 = gb_conv(&b, "c1", x, 8, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
    c2 = gb_conv(&b, "c2", x, 8, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_RELU);
    /* per-channel constant ([1,C,1,1]) and a spatial constant ([1,1,H,W]) broadcast on NHWC */
    y = gb_op(&b, LUTHIER_OP_MUL, "scale", c1, gb_const(&b, "chan", 4, cs, 0.5f, 1.5f));
    y = gb_op(&b, LUTHIER_OP_ADD, "spatial", y, gb_const(&b, "plane", 4, fs, -1, 1));
    /* the raw NCHW input joins an NHWC tensor */
    s = gb_op(&b, LUTHIER_OP_SUB, "sub_in", c2, gb_op(&b, LUTHIER_OP_SIGMOID, "sig", gb_conv(&b, "c3", x, 8, 1, 1, 0, 1, 0, LUTHIER_ACTIVATION_NONE), -1));
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONCAT; d.name = "cat"; d.axis = 1;
    cat = gb_node(&b, &d, y, s, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_SPLIT; d.name = "split"; d.axis = -1; d.num_outputs = 2;
    {
        int64_t sz[2] = {3, 4};
        int in[1];
        in[0] = cat;
        d.sizes = sz;
        d.inputs = in;
        d.num_inputs = 1;
        CHECK(luthier_graph_add_node(b.g, &d, parts) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(b.g));
    }
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_SOFTMAX; d.name = "softmax"; d.axis = 1;
    sm = gb_node(&b, &d, parts[1], -1, -1);
    fl = gb_op(&b, LUTHIER_OP_FLATTEN, "flatten", sm, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_MAXPOOL; d.name = "pool"; d.kernel[0] = d.kernel[1] = 3; d.stride[0] = d.stride[1] = 2; d.ceil_mode = 1;
    m = gb_node(&b, &d, parts[0], -1, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_AVGPOOL; d.name = "apool"; d.kernel[0] = d.kernel[1] = 2; d.stride[0] = d.stride[1] = 1;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 1; d.count_include_pad = 1;
    m = gb_node(&b, &d, m, -1, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_LRN; d.name = "lrn"; d.size = 3;
    m = gb_node(&b, &d, m, -1, -1);
    gap = gb_op(&b, LUTHIER_OP_GLOBAL_AVGPOOL, "gap", m, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_ADAPTIVE_AVGPOOL; d.name = "adaptive"; d.out_size[0] = 4; d.out_size[1] = 3;
    r = gb_node(&b, &d, cat, -1, -1);
    {
        int perm[4] = {0, 2, 1, 3};
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_TRANSPOSE; d.name = "transpose"; d.perm = perm;
        r = gb_node(&b, &d, r, -1, -1);
    }
    r = gb_bn(&b, "bn_plain", r); /* batch norm that cannot fold (input is not a conv) */
    luthier_graph_output(b.g, fl);
    luthier_graph_output(b.g, gap);
    luthier_graph_output(b.g, r);
    luthier_graph_output(b.g, c2); /* an output that is also consumed */
    CHECK(!b.fail, "build");
    img = rand_buf(2 * 5 * 9 * 7, -1, 1);
    ins[0] = img;
    for (threads = 1; threads <= 2; threads++) {
        ctx = ctx_threads(threads);
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, "layouts");
        luthier_context_destroy(ctx);
    }
    free(img);
    gb_free(&b);
}

/* A transformer block: embeddings (gather), dense q/k/v, reshape/transpose, attention
   (causal and not), residual dense, layer norm, GELU; plus a KV-cache-style decode graph. */
static int gb_lin(gb *b, const char *name, int x, int64_t out_f, int64_t in_f) {
    int64_t ws[2], bs[1];
    char wn[64], bn[64];
    luthier_node_desc d;
    int w, bb;
    ws[0] = out_f; ws[1] = in_f; bs[0] = out_f;
    snprintf(wn, sizeof wn, "%s.w", name);
    snprintf(bn, sizeof bn, "%s.b", name);
    w = gb_const(b, wn, 2, ws, -0.3f, 0.3f);
    bb = gb_const(b, bn, 1, bs, -0.1f, 0.1f);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_DENSE;
    d.name = name;
    return gb_node(b, &d, x, w, bb);
}

static int gb_reshape(gb *b, const char *name, int x, const int64_t *shape, int rank) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_RESHAPE;
    d.name = name;
    d.sizes = shape;
    d.num_sizes = rank;
    return gb_node(b, &d, x, -1, -1);
}

static int gb_heads(gb *b, const char *name, int x, const int *perm) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_TRANSPOSE;
    d.name = name;
    d.perm = perm;
    return gb_node(b, &d, x, -1, -1);
}

/* A transformer block: embeddings (gather), dense q/k/v, reshape/transpose, attention
   (causal and not), residual dense, layer norm, GELU; plus a KV-cache-style decode graph. */
static void build_block(gb *b, int64_t seq, int64_t past, int64_t dm, int64_t heads, int causal, int *tok, int *pk, int *pv) {
    int64_t ts[2], es[2], bs[1], hs[4], back[3], ps[4];
    static const int perm[4] = {0, 2, 1, 3};
    char nm[3][16] = {"q", "k", "v"};
    int e, qkv[3], a, h, f, t, i;
    luthier_node_desc d;
    ts[0] = 1; ts[1] = seq;
    es[0] = 50; es[1] = dm;
    bs[0] = dm;
    hs[0] = 1; hs[1] = seq; hs[2] = heads; hs[3] = dm / heads;
    back[0] = 1; back[1] = seq; back[2] = dm;
    ps[0] = 1; ps[1] = heads; ps[2] = past; ps[3] = dm / heads;
    memset(b, 0, sizeof *b);
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "tokens", LUTHIER_DTYPE_I64, 2, ts, tok);
    if (past) {
        luthier_graph_input(b->g, "past_k", LUTHIER_DTYPE_F32, 4, ps, pk);
        luthier_graph_input(b->g, "past_v", LUTHIER_DTYPE_F32, 4, ps, pv);
    }
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_GATHER;
    d.name = "embed";
    e = gb_node(b, &d, gb_const(b, "wte", 2, es, -1, 1), *tok, -1);
    for (i = 0; i < 3; i++) {
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "%s.r", nm[i]);
        snprintf(n2, sizeof n2, "%s.t", nm[i]);
        qkv[i] = gb_heads(b, n2, gb_reshape(b, n1, gb_lin(b, nm[i], e, dm, dm), hs, 4), perm);
    }
    if (past) {
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_CONCAT;
        d.axis = 2;
        d.name = "cat_k";
        qkv[1] = gb_node(b, &d, *pk, qkv[1], -1);
        d.name = "cat_v";
        qkv[2] = gb_node(b, &d, *pv, qkv[2], -1);
    }
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_ATTENTION;
    d.name = "attn";
    d.causal = causal;
    a = gb_node(b, &d, qkv[0], qkv[1], qkv[2]);
    a = gb_reshape(b, "attn.r", gb_heads(b, "attn.t", a, perm), back, 3);
    a = gb_lin(b, "proj", a, dm, dm);
    h = gb_op(b, LUTHIER_OP_ADD, "res1", a, e);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_LAYER_NORM;
    d.name = "ln1";
    h = gb_node(b, &d, h, gb_const(b, "ln1.g", 1, bs, 0.8f, 1.2f), gb_const(b, "ln1.b", 1, bs, -0.1f, 0.1f));
    f = gb_lin(b, "fc1", h, 2 * dm, dm);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_GELU;
    d.name = "gelu";
    d.approximate = causal;
    f = gb_node(b, &d, f, -1, -1);
    f = gb_lin(b, "fc2", f, dm, 2 * dm);
    t = gb_op(b, LUTHIER_OP_ADD, "res2", f, h);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_SOFTMAX;
    d.name = "softmax";
    d.axis = -1;
    t = gb_node(b, &d, t, -1, -1);
    luthier_graph_output(b->g, t);
    luthier_graph_output(b->g, qkv[1]);
}

static void test_graph_transformer(void) {
    int causal, threads;
    for (causal = 0; causal < 2; causal++)
        for (threads = 1; threads <= 2; threads++) {
            gb b;
            int tok, pk = -1, pv = -1, past = causal ? 5 : 0, i;
            int64_t ids[9];
            float *kk = rand_buf(2 * 5 * 8, -1, 1), *vv = rand_buf(2 * 5 * 8, -1, 1);
            const void *ins[3];
            luthier_context *ctx = ctx_threads(threads);
            build_block(&b, 9, past, 16, 2, causal, &tok, &pk, &pv);
            CHECK(!b.fail, "build");
            for (i = 0; i < 9; i++) ids[i] = (int64_t)(test_rand_u64() % 50) - (i == 3 ? 50 : 0);
            ins[0] = ids; ins[1] = kk; ins[2] = vv;
            plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, causal ? "decoder block with past" : "encoder block");
            ids[4] = 50; /* out of range at run time */
            {
                luthier_plan *p = NULL;
                float out1[9 * 16], out2[2 * 14 * 8];
                void *outs[2];
                outs[0] = out1; outs[1] = out2;
                CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
                CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_INVALID_ARGUMENT, "index 50 of 50 accepted");
                CHECK(strstr(luthier_context_error(ctx), "embed") != NULL, "message names the step: %s", luthier_context_error(ctx));
                luthier_plan_destroy(p);
            }
            gb_free(&b);
            free(kk);
            free(vv);
            luthier_context_destroy(ctx);
        }
}

/* Batched matmul with broadcasting, depthwise + grouped convolutions, element-wise zoo. */
static void test_graph_misc_ops(void) {
    gb b;
    int a, c, m, x, y, z, dw, gr;
    int64_t as[4] = {2, 3, 5, 4}, bs[3] = {1, 4, 6}, xs[4] = {1, 6, 8, 8};
    luthier_node_desc d;
    luthier_context *ctx = ctx_threads(2);
    float *ain = rand_buf(2 * 3 * 5 * 4, -1, 1), *xin = rand_buf(6 * 64, 0.1f, 2);
    const void *ins[2];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "a", LUTHIER_DTYPE_F32, 4, as, &a);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    c = gb_const(&b, "b", 3, bs, -1, 1);
    m = gb_op(&b, LUTHIER_OP_MATMUL, "matmul", a, c);
    m = gb_op(&b, LUTHIER_OP_TANH, "tanh", m, -1);
    {
        int64_t t[4] = {2, 3, 5, 6};
        int tb = gb_const(&b, "bt", 4, t, -1, 1);
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_MATMUL; d.name = "matmul_tb"; d.trans_b = 1;
        m = gb_node(&b, &d, m, tb, -1); /* [2,3,5,6] @ [2,3,5,6]^T */
    }
    dw = gb_conv(&b, "dw", x, 6, 3, 2, 1, 6, 1, LUTHIER_ACTIVATION_RELU6);
    gr = gb_conv(&b, "grouped", x, 4, 3, 1, 1, 2, 1, LUTHIER_ACTIVATION_NONE);
    y = gb_op(&b, LUTHIER_OP_SQRT, "sqrt", x, -1);
    y = gb_op(&b, LUTHIER_OP_EXP, "exp", gb_op(&b, LUTHIER_OP_NEG, "neg", y, -1), -1);
    y = gb_op(&b, LUTHIER_OP_DIV, "div", y, gb_op(&b, LUTHIER_OP_ERF, "erf", x, -1));
    y = gb_op(&b, LUTHIER_OP_POW, "pow", y, x);
    z = gb_op(&b, LUTHIER_OP_MAX, "max", y, gb_op(&b, LUTHIER_OP_MIN, "min", x, y));
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CLIP; d.name = "clip"; d.clamp_min = 0.2f; d.clamp_max = 0.9f;
    z = gb_node(&b, &d, z, -1, -1);
    z = gb_op(&b, LUTHIER_OP_IDENTITY, "identity", z, -1);
    luthier_graph_output(b.g, m);
    luthier_graph_output(b.g, dw);
    luthier_graph_output(b.g, gr);
    luthier_graph_output(b.g, z);
    luthier_graph_output(b.g, a); /* an input that is also an output */
    CHECK(!b.fail, "build");
    ins[0] = ain; ins[1] = xin;
    plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, "misc ops");
    free(ain);
    free(xin);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* The step info of the step whose node is named name, into si; 0 when none. */
static int step_named(const luthier_plan *p, const char *name, luthier_step_info *si) {
    luthier_plan_info info;
    int i;
    if (luthier_plan_get_info(p, &info) != LUTHIER_STATUS_OK) return 0;
    for (i = 0; i < info.num_steps; i++)
        if (luthier_plan_step_info(p, i, si) == LUTHIER_STATUS_OK && si->node >= 0 && !strcmp(si->name, name)) return 1;
    return 0;
}

/* A MatMul node configured with an unknown kernel: refused, naming the node and the kernel,
   without fallback_invalid; with it, the default kernel runs and the result is right. A dense
   step reports no convolution algorithm (AUTO), whatever its layer runs (fp32 and fp16 weights). */
static void test_graph_matmul_kernel_config(void) {
    gb b;
    int a, c, m, y, i;
    int64_t as[3] = {3, 5, 4}, bs[2] = {4, 6}, ws[2] = {7, 6};
    luthier_node_desc d;
    luthier_node_config *cfg;
    luthier_plan_desc pd;
    luthier_plan *p = NULL, *p0 = NULL;
    luthier_step_info si, si0;
    luthier_context *ctx = ctx_threads(2);
    float *ain = rand_buf(3 * 5 * 4, -1, 1);
    const void *ins[1];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "a", LUTHIER_DTYPE_F32, 3, as, &a);
    c = gb_const(&b, "b", 2, bs, -1, 1);
    m = gb_op(&b, LUTHIER_OP_MATMUL, "matmul", a, c);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_DENSE; d.name = "fc";
    y = gb_node(&b, &d, m, gb_const(&b, "w", 2, ws, -1, 1), -1);
    luthier_graph_output(b.g, y);
    CHECK(!b.fail, "build");
    ins[0] = ain;
    cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
    for (i = 0; i < b.g->num_nodes; i++)
        if (!strcmp(b.g->nodes[i].name, "matmul")) snprintf(cfg[i].kernel, sizeof cfg[i].kernel, "no_such_kernel");
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = b.g->num_nodes;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_NOT_FOUND && p == NULL, "unknown kernel accepted");
    CHECK(strstr(luthier_context_error(ctx), "matmul") && strstr(luthier_context_error(ctx), "no_such_kernel"),
          "message: %s", luthier_context_error(ctx));
    luthier_plan_destroy(p);
    p = NULL;
    pd.fallback_invalid = 1;
    plan_vs_ref(ctx, b.g, &pd, ins, 2e-5, "matmul with an unknown kernel, fallback");
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    CHECK(luthier_plan_create(ctx, b.g, NULL, &p0) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    if (p && p0) {
        luthier_plan_info info;
        luthier_plan_get_info(p, &info);
        CHECK(info.num_fallbacks == 1, "%d fallbacks", info.num_fallbacks);
        CHECK(step_named(p, "matmul", &si) && step_named(p0, "matmul", &si0), "matmul step");
        CHECK(si.kernel && si0.kernel && si.kernel[0] && !strcmp(si.kernel, si0.kernel), "fallback kernel %s, default %s",
              si.kernel ? si.kernel : "(null)", si0.kernel ? si0.kernel : "(null)");
        CHECK(step_named(p0, "fc", &si0) && si0.algorithm == LUTHIER_CONV_AUTO, "dense step algorithm %d", (int)si0.algorithm);
    }
    luthier_plan_destroy(p);
    luthier_plan_destroy(p0);
    p0 = NULL;
    memset(&pd, 0, sizeof pd);
    pd.precision = LUTHIER_PRECISION_FP16; /* the dense layer runs as a convolution layer of fp16 weights */
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p0) == LUTHIER_STATUS_OK, "fp16: %s", luthier_context_error(ctx));
    if (p0) CHECK(step_named(p0, "fc", &si0) && si0.algorithm == LUTHIER_CONV_AUTO, "fp16 dense step algorithm %d", (int)si0.algorithm);
    luthier_plan_destroy(p0);
    free(cfg);
    free(ain);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* Bad graphs: every refusal names the node and leaves the graph usable. */
static void test_graph_bad_input(void) {
    luthier_graph *g = NULL;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_node_desc d;
    int64_t xs[4] = {1, 3, 8, 8}, ws[4] = {4, 5, 3, 3}, neg[2] = {2, -1};
    float w[4 * 5 * 9] = {0};
    int x, wt, out[2], in[3], before;
    CHECK(luthier_graph_create(NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL out");
    CHECK(luthier_graph_create(&g) == LUTHIER_STATUS_OK, "create");
    CHECK(luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x) == LUTHIER_STATUS_OK, "input");
    CHECK(luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &wt) == LUTHIER_STATUS_INVALID_ARGUMENT, "duplicate name");
    CHECK(luthier_graph_input(g, "n", LUTHIER_DTYPE_F32, 2, neg, &wt) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative dim");
    CHECK(strstr(luthier_graph_error(g), "-1") != NULL, "%s", luthier_graph_error(g));
    CHECK(luthier_graph_input(g, "r", LUTHIER_DTYPE_F32, 7, xs, &wt) == LUTHIER_STATUS_INVALID_ARGUMENT, "rank 7");
    CHECK(luthier_graph_constant(g, "nul", 4, ws, NULL, 0, &wt) == LUTHIER_STATUS_INVALID_ARGUMENT, "missing weights");
    CHECK(luthier_graph_constant(g, "w", 4, ws, w, 1, &wt) == LUTHIER_STATUS_OK, "weights");
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D; d.name = "conv_bad";
    in[0] = x; in[1] = wt;
    d.inputs = in; d.num_inputs = 2;
    before = luthier_graph_num_tensors(g);
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "channel mismatch accepted");
    CHECK(strstr(luthier_graph_error(g), "conv_bad") && strstr(luthier_graph_error(g), "channels"), "%s", luthier_graph_error(g));
    CHECK(luthier_graph_num_tensors(g) == before && luthier_graph_num_nodes(g) == 0, "failed node left traces");
    d.op = (luthier_op)999;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_NOT_FOUND, "unknown op");
    CHECK(strstr(luthier_graph_error(g), "conv_bad") != NULL, "%s", luthier_graph_error(g));
    d.op = LUTHIER_OP_RELU; d.num_inputs = 1; in[0] = 42;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "dangling input");
    in[0] = x; d.num_inputs = 3;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "too many inputs");
    {
        int64_t is[1] = {2};
        int64_t iv[2] = {0, 1};
        int it;
        CHECK(luthier_graph_constant_i64(g, "idx", 1, is, iv, &it) == LUTHIER_STATUS_OK, "i64 constant");
        d.op = LUTHIER_OP_ADD; d.name = "add_dtype"; in[1] = it; d.num_inputs = 2;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "i64 into add accepted");
        CHECK(strstr(luthier_graph_error(g), "add_dtype") && strstr(luthier_graph_error(g), "i64"), "%s", luthier_graph_error(g));
        d.op = LUTHIER_OP_GATHER; d.name = "gather_range"; in[0] = x; in[1] = it; d.axis = 0;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "index 1 of 1 accepted");
    }
    d.op = LUTHIER_OP_RESHAPE; d.name = "reshape_bad"; d.num_inputs = 1; in[0] = x;
    {
        int64_t rs[2] = {5, -1};
        d.sizes = rs; d.num_sizes = 2;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "192 elements into 5 rows");
    }
    CHECK(luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_INVALID_ARGUMENT, "plan of a graph without outputs");
    CHECK(luthier_graph_output(g, 99) == LUTHIER_STATUS_INVALID_ARGUMENT, "output 99");
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_RELU; in[0] = x; d.inputs = in; d.num_inputs = 1;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_OK, "the graph is still usable: %s", luthier_graph_error(g));
    CHECK(luthier_graph_output(g, out[0]) == LUTHIER_STATUS_OK, "output");
    CHECK(luthier_graph_output(g, out[0]) == LUTHIER_STATUS_INVALID_ARGUMENT, "output twice");
    CHECK(luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    {
        const void *ins[1] = {NULL};
        float o[192];
        void *outs[1];
        outs[0] = o;
        CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL input");
        CHECK(luthier_plan_run(ctx, p, NULL, outs) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL inputs");
        CHECK(luthier_plan_run(NULL, p, ins, outs) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL ctx");
    }
    luthier_plan_destroy(p);
    luthier_plan_destroy(NULL);
    luthier_graph_destroy(g);
    luthier_graph_destroy(NULL);
    luthier_context_destroy(ctx);
}

/* Sizes at the edge: the checked helpers, shapes whose element or byte counts overflow, shape
   arithmetic past int64 (concat, split, reshape, pooling, LRN), an arena whose offsets would
   overflow, calibration ids that once wrote outside their arrays. Each is refused with a status
   and a message; none reaches undefined behaviour (this runs under UBSan in `make sanitize`). */
static void test_graph_size_limits(void) {
    luthier_graph *g = NULL;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_calibration *cal = NULL;
    luthier_node_desc d;
    const int64_t big = (int64_t)1 << 31, huge = ((int64_t)1 << 60) - 1, half = (int64_t)1 << 59;
    int64_t as[4] = {1, 1, big, 1}, bs[4] = {1, 1, 1, big}, hs[1] = {huge}, xs[4] = {1, 3, 4, 4}, hv[1] = {half};
    int a, b, h, x, hx, in[9], out[4], i;
    size_t z;
    int64_t sh[3] = {3, 5, 7}, neg[2] = {4, -1}, over[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    CHECK(luthier__size_mul(3, 5, &z) && z == 15, "3*5");
    CHECK(!luthier__size_mul(LUTHIER__SIZE_LIMIT / 2 + 1, 2, &z) && z == 0, "mul past the limit");
    CHECK(!luthier__size_mul(SIZE_MAX, 0, &z), "an operand past the limit");
    CHECK(luthier__size_add(LUTHIER__SIZE_LIMIT - 1, 1, &z) && z == LUTHIER__SIZE_LIMIT, "add to the limit");
    CHECK(!luthier__size_add(LUTHIER__SIZE_LIMIT, 1, &z), "add past the limit");
    CHECK(luthier__size_shape(3, sh, 4, &z) && z == 420, "shape bytes");
    CHECK(!luthier__size_shape(2, neg, 4, &z), "negative dim");
    CHECK(!luthier__size_shape(2, over, 1 << 23, &z), "shape bytes past the limit");
    luthier_graph_create(&g);
    CHECK(luthier_graph_input(g, "a", LUTHIER_DTYPE_F32, 4, as, &a) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    CHECK(luthier_graph_input(g, "b", LUTHIER_DTYPE_F32, 4, bs, &b) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    CHECK(luthier_graph_input(g, "h", LUTHIER_DTYPE_F32, 1, hs, &h) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    CHECK(luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
    memset(&d, 0, sizeof d);
    d.inputs = in;
    /* 2^62 elements: 2^64 bytes wrapped to 0, planned as an empty arena, written past it */
    d.op = LUTHIER_OP_ADD; d.name = "add_2p62"; in[0] = a; in[1] = b; d.num_inputs = 2;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_OVERFLOW && strstr(luthier_graph_error(g), "overflows"), "%s",
          luthier_graph_error(g));
    d.op = LUTHIER_OP_CONCAT; d.name = "concat_9"; d.num_inputs = 9;
    for (i = 0; i < 9; i++) in[i] = h;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "overflows"), "%s",
          luthier_graph_error(g));
    {
        int64_t sizes[3] = {INT64_MAX, INT64_MAX, 6}, rs[3] = {(int64_t)1 << 62, (int64_t)1 << 62, 4};
        d.op = LUTHIER_OP_SPLIT; d.name = "split_big"; d.num_inputs = 1; in[0] = h; d.num_outputs = 3; d.sizes = sizes;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "sizes"), "%s",
              luthier_graph_error(g));
        d.op = LUTHIER_OP_RESHAPE; d.name = "reshape_big"; d.num_outputs = 0; in[0] = x; d.sizes = rs; d.num_sizes = 3;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "more elements"),
              "%s", luthier_graph_error(g));
        d.sizes = NULL; d.num_sizes = 0;
    }
    d.op = LUTHIER_OP_LRN; d.name = "lrn_big"; in[0] = x; d.size = ((int64_t)1 << 62) + 1;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "size"), "%s",
          luthier_graph_error(g));
    d.op = LUTHIER_OP_MAXPOOL; d.name = "pool_big"; d.size = 0;
    d.kernel[0] = (int64_t)1 << 40; d.kernel[1] = 1; d.dilation[0] = (int64_t)1 << 23; d.pads[0] = ((int64_t)1 << 40) - 1;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "2^31"), "%s",
          luthier_graph_error(g));
    luthier_graph_destroy(g);
    /* five values of 2^61 bytes alive at once: the arena's offsets pass 2^63 */
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 1, hv, &hx);
    memset(&d, 0, sizeof d);
    d.inputs = in; d.num_inputs = 1; in[0] = hx;
    for (i = 0; i < 5; i++) {
        d.op = LUTHIER_OP_NEG; d.name = NULL;
        CHECK(luthier_graph_add_node(g, &d, &out[0]) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
        in[1 + i] = out[0];
    }
    d.op = LUTHIER_OP_ADD; d.num_inputs = 2; in[0] = in[1];
    for (i = 2; i <= 5; i++) {
        in[1] = in[i];
        CHECK(luthier_graph_add_node(g, &d, &out[0]) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
        in[0] = out[0];
    }
    luthier_graph_output(g, out[0]);
    CHECK(luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OVERFLOW && p == NULL, "%s", luthier_context_error(ctx));
    luthier_graph_destroy(g);
    /* calibration ids: INT_MAX + 1 wrapped, and a write landed outside the arrays */
    CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK, "calibration");
    CHECK(luthier_calibration_set_params(cal, INT_MAX, 0.5f, 3) == LUTHIER_STATUS_INVALID_ARGUMENT, "INT_MAX");
    CHECK(luthier_calibration_set_params(cal, INT_MAX - 1, 0.5f, 3) == LUTHIER_STATUS_INVALID_ARGUMENT, "INT_MAX - 1");
    CHECK(luthier_calibration_set_params(cal, LUTHIER__MAX_TENSORS, 0.5f, 3) == LUTHIER_STATUS_INVALID_ARGUMENT, "past the most tensors");
    CHECK(luthier_calibration_set_params(cal, 40, 0.5f, 3) == LUTHIER_STATUS_OK, "id 40");
    CHECK(luthier_calibration_set_range(cal, INT_MAX, -1.0f, 1.0f) == LUTHIER_STATUS_INVALID_ARGUMENT, "range at INT_MAX");
    CHECK(luthier_calibration_get(cal, INT_MAX, NULL, NULL) == LUTHIER_STATUS_NOT_FOUND, "get INT_MAX");
    luthier_calibration_destroy(cal);
    luthier_context_destroy(ctx);
}

/* Names are looked up by hash: building a graph is linear in its nodes (a 40k-node graph took
   4 s with linear name checks). Measured as a ratio in one run: 10x the nodes must not take
   100x the time. Lookups and duplicate names still behave. */
static double graph_chain_seconds(int nodes, int check) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int64_t xs[1] = {4};
    int x, y, i, in[1], bad = 0;
    char name[32];
    double t0 = luthier__seconds(), t;
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 1, xs, &x);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_RELU; d.inputs = in; d.num_inputs = 1; in[0] = x;
    for (i = 0; i < nodes; i++) {
        snprintf(name, sizeof name, "n%d", i);
        d.name = name;
        bad += luthier_graph_add_node(g, &d, &y) != LUTHIER_STATUS_OK;
        in[0] = y;
    }
    t = luthier__seconds() - t0;
    if (check) {
        int k;
        for (i = 0; i < 200; i++) {
            const int want = test_rand_int(0, nodes - 1);
            snprintf(name, sizeof name, "n%d", want);
            bad += luthier_graph_find_node(g, name, &k) != LUTHIER_STATUS_OK || k != want;
            bad += luthier_graph_find_tensor(g, name, &k) != LUTHIER_STATUS_OK || k != want + 1;
            d.name = name;
            bad += luthier_graph_add_node(g, &d, &y) != LUTHIER_STATUS_INVALID_ARGUMENT; /* duplicate */
        }
        bad += luthier_graph_find_node(g, "nope", &k) != LUTHIER_STATUS_NOT_FOUND;
        bad += luthier_graph_num_nodes(g) != nodes;
        CHECK(bad == 0, "%d wrong additions or lookups over %d nodes", bad, nodes);
    }
    luthier_graph_destroy(g);
    return t;
}

static void test_graph_many_nodes(void) {
    const int small = T.quick ? 2000 : 4000;
    double ts = 1e30, tl = 1e30;
    int r;
    for (r = 0; r < 5; r++) { /* alternating, best of five (a loaded machine preempts the long runs) */
        double a = graph_chain_seconds(small, r == 0), b = graph_chain_seconds(small * 10, r == 0);
        ts = a < ts ? a : ts;
        tl = b < tl ? b : tl;
    }
    /* linear: 10x; a quadratic name lookup: 100x */
    CHECK(tl < 50 * ts + 0.1, "%d nodes took %.3f s, %d took %.3f s: not linear", small, ts, small * 10, tl);
}

/* The operator registry: one row per operator, in LUTHIER_OP_LIST's order, each with its hooks;
   names unique and known to luthier_op_name. */
static void test_op_registry(void) {
    int i, j, views = 0;
    CHECK(sizeof luthier__ops / sizeof luthier__ops[0] == (size_t)LUTHIER_OP_COUNT, "%d rows for %d operators",
          (int)(sizeof luthier__ops / sizeof luthier__ops[0]), (int)LUTHIER_OP_COUNT);
    CHECK(sizeof luthier__op_names / sizeof luthier__op_names[0] == (size_t)LUTHIER_OP_COUNT, "names");
    for (i = 0; i < (int)LUTHIER_OP_COUNT; i++) {
        CHECK(luthier__ops[i].op == (luthier_op)i, "row %d is operator %d: out of LUTHIER_OP_LIST's order", i, (int)luthier__ops[i].op);
        CHECK(luthier__ops[i].attrs != NULL && luthier__ops[i].infer != NULL && luthier__ops[i].run != NULL && luthier__ops[i].lower != NULL, "row %d (%s) misses a hook", i, luthier_op_name((luthier_op)i));
        CHECK(luthier__op_names[i].lo >= 0 && luthier__op_names[i].lo <= luthier__op_names[i].hi && luthier__op_names[i].hi <= 64,
              "row %d: input counts %d..%d", i, luthier__op_names[i].lo, luthier__op_names[i].hi);
        for (j = 0; j < i; j++) CHECK(strcmp(luthier__op_names[i].name, luthier__op_names[j].name) != 0, "name '%s' twice", luthier__op_names[i].name);
        views += luthier__ops[i].run == luthier__run_view;
    }
    CHECK(views == 3, "%d view operators (reshape, flatten, identity)", views);
    CHECK(strcmp(luthier_op_name(LUTHIER_OP_COUNT), "unknown") == 0, "name past the end");
}

/* The plan as text: every step and the memory, the same length with and without a buffer, cut
   cleanly when the buffer is short. */
static void test_graph_plan_describe(void) {
    gb b;
    int x, i, steps;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_plan_info pi;
    size_t len, len2;
    char *text, small[16];
    build_mini_resnet(&b, 1, 17, &x);
    CHECK(!b.fail && ctx && luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "plan");
    if (!p) { gb_free(&b); luthier_context_destroy(ctx); return; }
    luthier_plan_get_info(p, &pi);
    len = luthier_plan_describe(p, NULL, 0);
    text = (char *)malloc(len + 1);
    len2 = luthier_plan_describe(p, text, len + 1);
    CHECK(len > 0 && len2 == len && strlen(text) == len, "length %zu, then %zu, text %zu", len, len2, strlen(text));
    for (i = 0, steps = 0; i < pi.num_steps; i++) {
        luthier_step_info si;
        luthier_plan_step_info(p, i, &si);
        steps += strstr(text, si.name) != NULL;
    }
    CHECK(steps == pi.num_steps, "%d of %d steps named", steps, pi.num_steps);
    CHECK(strstr(text, "conv2d") && strstr(text, "nhwc") && strstr(text, "arena") && strstr(text, "batch_norm"), "%s", text);
    CHECK(luthier_plan_describe(p, small, sizeof small) == len && strlen(small) == sizeof small - 1, "cut: '%s'", small);
    CHECK(luthier_plan_describe(NULL, small, sizeof small) == 0 && small[0] == 0, "NULL plan");
    free(text);
    luthier_plan_destroy(p);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* A record for this machine whose configuration does not fit its node (Winograd on a stride-2
   convolution) falls back to the default, and the plan says so instead of dropping it silently. */
static void test_graph_records_fallback_note(void) {
    gb b;
    int x, node = -1;
    luthier_context *ctx = ctx_threads(1);
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_plan_info pi;
    char fp[640], sig[256], text[1400];
    build_mini_resnet(&b, 1, 17, &x);
    CHECK(!b.fail && ctx && luthier_graph_find_node(b.g, "conv1", &node) == LUTHIER_STATUS_OK, "setup");
    if (node < 0 || !ctx) { gb_free(&b); luthier_context_destroy(ctx); return; }
    luthier_tune_fingerprint(ctx, fp, sizeof fp);
    CHECK(luthier_tune_signature(b.g, node, sig, sizeof sig) == LUTHIER_STATUS_OK, "signature");
    snprintf(text, sizeof text, "luthier-records 1\n%s\t%s\t%s\t-\tratio\tdefault\t1\t1\n", fp, sig,
             luthier_conv_algorithm_name(LUTHIER_CONV_WINOGRAD_4X3));
    memset(&pd, 0, sizeof pd);
    pd.records_text = text;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    CHECK(pi.num_fallbacks == 1, "%d fallbacks", pi.num_fallbacks);
    CHECK(strstr(luthier_context_error(ctx), "did not fit") && strstr(luthier_context_error(ctx), "conv1"), "note: '%s'",
          luthier_context_error(ctx));
    luthier_plan_destroy(p);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* Attributes whose products or sums overflow int64 are refused with a message, never wrapped
   (cases found by tests/fuzz_graph.c; each was accepted or undefined before). */
static void test_graph_attribute_overflow(void) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int64_t xs[4] = {1, 3, 8, 8};
    int x, in[2], out[4];
    CHECK(luthier_graph_create(&g) == LUTHIER_STATUS_OK, "create");
    CHECK(luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x) == LUTHIER_STATUS_OK, "input");
    in[0] = in[1] = x;
    /* pool: (kernel-1)*dilation = 2^32 * 2^32 wrapped to 0, and the window "fit" */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_MAXPOOL; d.name = "pool_huge"; d.inputs = in; d.num_inputs = 1;
    d.kernel[0] = ((int64_t)1 << 32) + 1; d.kernel[1] = 1; d.dilation[0] = (int64_t)1 << 32;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "pool window of 2^64 accepted");
    CHECK(strstr(luthier_graph_error(g), "pool_huge") && strstr(luthier_graph_error(g), "2^31"), "%s", luthier_graph_error(g));
    /* reshape: the product of the sizes wrapped (to 0 here: then a division by 0 inferring -1) */
    {
        int64_t rs[3] = {-1, (int64_t)1 << 32, (int64_t)1 << 32};
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_RESHAPE; d.name = "reshape_huge"; d.inputs = in; d.num_inputs = 1;
        d.sizes = rs; d.num_sizes = 3;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "sizes of 2^64 elements accepted");
        CHECK(strstr(luthier_graph_error(g), "reshape_huge") && strstr(luthier_graph_error(g), "more elements"), "%s", luthier_graph_error(g));
    }
    /* dense on a scalar: its last dimension was read (and the output's written) at index -1 */
    {
        int64_t ws[2] = {2, 1};
        float one = 1.0f, w2[2] = {1.0f, 2.0f};
        int s0, w0;
        CHECK(luthier_graph_constant(g, "scalar", 0, NULL, &one, 1, &s0) == LUTHIER_STATUS_OK, "scalar constant");
        CHECK(luthier_graph_constant(g, "w_dense", 2, ws, w2, 1, &w0) == LUTHIER_STATUS_OK, "weights");
        memset(&d, 0, sizeof d);
        in[0] = s0; in[1] = w0;
        d.op = LUTHIER_OP_DENSE; d.name = "dense_scalar"; d.inputs = in; d.num_inputs = 2;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "dense of a scalar accepted");
        CHECK(strstr(luthier_graph_error(g), "dense_scalar") && strstr(luthier_graph_error(g), "is a scalar"), "%s", luthier_graph_error(g));
        in[0] = in[1] = x;
    }
    /* split: the sum of the sizes overflowed (2^63-1 + 2^63-1 + 5 wraps to 3, the axis; the parts
       were then refused only as too large, with another status) */
    {
        int64_t sz[3] = {INT64_MAX, INT64_MAX, 5};
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_SPLIT; d.name = "split_huge"; d.inputs = in; d.num_inputs = 1;
        d.axis = 1; d.num_outputs = 3; d.sizes = sz;
        CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "split sizes of 2^64 accepted");
        CHECK(strstr(luthier_graph_error(g), "split_huge") && strstr(luthier_graph_error(g), "add up to"), "%s", luthier_graph_error(g));
    }
    /* lrn: 2 * size + 4 overflowed for the FLOP count */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_LRN; d.name = "lrn_huge"; d.inputs = in; d.num_inputs = 1; d.size = INT64_MAX - 1;
    CHECK(luthier_graph_add_node(g, &d, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "lrn size 2^63-2 accepted");
    CHECK(strstr(luthier_graph_error(g), "lrn_huge") && strstr(luthier_graph_error(g), "2^31"), "%s", luthier_graph_error(g));
    CHECK(luthier_graph_num_nodes(g) == 0 && luthier_graph_num_tensors(g) == 3, "failed node left traces");
    luthier_graph_destroy(g);
}

/* An int8 plan of a convolution whose weights hold NaN or infinity is refused with a message
   (their conversion to int8 was undefined); the fp32 plan of the same graph is made. */
static void test_graph_int8_nonfinite_weights(void) {
    luthier_graph *g = NULL;
    luthier_context *ctx = ctx_threads(1);
    luthier_calibration *cal = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_node_desc d;
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3};
    float w[3 * 2 * 9];
    int x, wt, in[2], y, k, t;
    for (k = 0; k < 2; k++) {
        test_fill(w, sizeof w / sizeof w[0]);
        w[20] = k ? INFINITY : NAN;
        luthier_graph_create(&g);
        luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        luthier_graph_constant(g, "w", 4, ws, w, 1, &wt);
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_CONV2D; d.name = "conv_nan"; in[0] = x; in[1] = wt; d.inputs = in; d.num_inputs = 2;
        CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_OK, "%s", luthier_graph_error(g));
        luthier_graph_output(g, y);
        luthier_calibration_create(&cal);
        for (t = 0; t < luthier_graph_num_tensors(g); t++) luthier_calibration_set_range(cal, t, -2.0f, 2.0f);
        memset(&pd, 0, sizeof pd);
        pd.int8 = cal;
        CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_UNSUPPORTED && p == NULL &&
                  strstr(luthier_context_error(ctx), "conv_nan") && strstr(luthier_context_error(ctx), "NaN or infinity"),
              "%s weights: %s", k ? "inf" : "NaN", luthier_context_error(ctx));
        CHECK(luthier_plan_create(ctx, g, NULL, &p) == LUTHIER_STATUS_OK, "fp32 plan: %s", luthier_context_error(ctx));
        luthier_plan_destroy(p);
        p = NULL;
        luthier_calibration_destroy(cal);
        luthier_graph_destroy(g);
    }
    luthier_context_destroy(ctx);
}

/* Typed attributes: LRN with alpha, beta or bias 0 (the flat fields read 0 as "default"),
   flatten at axis 0, the defaults, and the flat form still read when typed = 0. */
static void test_graph_typed_attrs(void) {
    static const float lrn[4][3] = {{0, 0.75f, 1}, {2e-2f, 0, 0.5f}, {0.3f, 0.5f, 0}, {1e-4f, 0.75f, 1}};
    gb b;
    luthier_node_attrs a;
    luthier_node_desc d, got;
    luthier_tensor_info ti;
    int64_t xs[4] = {2, 7, 5, 4};
    int x, t, k, threads, outs[6];
    float *img;
    const void *ins[1];
    CHECK(luthier_node_attrs_default(LUTHIER_OP_LRN, &a) == LUTHIER_STATUS_OK && a.lrn.alpha == 1e-4f &&
          a.lrn.beta == 0.75f && a.lrn.bias == 1.0f && a.lrn.size == 0, "LRN defaults");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_FLATTEN, &a) == LUTHIER_STATUS_OK && a.flatten.axis == 1, "flatten default");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_COUNT, &a) == LUTHIER_STATUS_INVALID_ARGUMENT, "unknown op");
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    for (k = 0; k < 4; k++) {
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_LRN;
        d.typed = 1;
        d.attr.lrn.size = 3 + k % 2 * 2;
        d.attr.lrn.alpha = lrn[k][0], d.attr.lrn.beta = lrn[k][1], d.attr.lrn.bias = lrn[k][2];
        outs[k] = gb_node(&b, &d, x, -1, -1);
        CHECK(luthier_graph_node_desc(b.g, luthier_graph_num_nodes(b.g) - 1, &got) == LUTHIER_STATUS_OK &&
              got.typed && got.attr.lrn.alpha == lrn[k][0] && got.attr.lrn.bias == lrn[k][2], "LRN %d kept as given", k);
    }
    memset(&d, 0, sizeof d); /* the flat form: 0 = default */
    d.op = LUTHIER_OP_LRN; d.size = 3;
    t = gb_node(&b, &d, x, -1, -1);
    CHECK(luthier_graph_node_desc(b.g, luthier_graph_num_nodes(b.g) - 1, &got) == LUTHIER_STATUS_OK && got.typed &&
          got.attr.lrn.alpha == 1e-4f && got.attr.lrn.beta == 0.75f && got.attr.lrn.bias == 1.0f && got.attr.lrn.size == 3,
          "flat LRN resolved to its defaults");
    outs[4] = t;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_FLATTEN; d.typed = 1; d.attr.flatten.axis = 0;
    outs[5] = gb_node(&b, &d, outs[2], -1, -1);
    luthier_graph_tensor_info(b.g, outs[5], &ti);
    CHECK(ti.rank == 2 && ti.shape[0] == 1 && ti.shape[1] == 280, "flatten axis 0: [%lld, %lld]", (long long)ti.shape[0],
          (long long)ti.shape[1]);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_FLATTEN; /* flat axis 0 = 1 */
    t = gb_node(&b, &d, outs[2], -1, -1);
    luthier_graph_tensor_info(b.g, t, &ti);
    CHECK(ti.rank == 2 && ti.shape[0] == 2 && ti.shape[1] == 140, "flat flatten: axis 1");
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_LRN; d.typed = 1; d.attr.lrn.size = 3; d.attr.lrn.beta = NAN;
    {
        int in[1], o;
        in[0] = x; d.inputs = in; d.num_inputs = 1;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "NaN beta refused");
    }
    for (k = 0; k < 6; k++) luthier_graph_output(b.g, outs[k]);
    { /* layer norm over every dim (axis 0), epsilon 0, of x * 1e-3 (variance ~1e-6: epsilon 1e-5 would show) */
        int64_t one[1] = {1};
        int sc = gb_const(&b, "ln.scale", 1, one, 1e-3f, 1e-3f), xs_;
        xs_ = gb_op(&b, LUTHIER_OP_MUL, "ln.x", x, sc);
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_LAYER_NORM; d.typed = 1; d.attr.layer_norm.axis = 0; d.attr.layer_norm.epsilon = 0;
        luthier_graph_output(b.g, gb_node(&b, &d, xs_, -1, -1));
    }
    memset(&d, 0, sizeof d); /* attention with scale 0 (uniform weights), causal */
    d.op = LUTHIER_OP_ATTENTION; d.typed = 1; d.attr.attention.causal = 1; d.attr.attention.has_scale = 1;
    luthier_graph_output(b.g, gb_node(&b, &d, x, x, x));
    {
        int64_t cs[1] = {7};
        int p[4], in[5], o = -1;
        for (k = 0; k < 4; k++) p[k] = gb_const(&b, k == 0 ? "bn.g" : k == 1 ? "bn.b" : k == 2 ? "bn.m" : "bn.v", 1, cs, k == 3 ? 1e-7f : -1, k == 3 ? 2e-7f : 1.5f);
        memset(&d, 0, sizeof d); /* batch norm, epsilon 0 */
        d.op = LUTHIER_OP_BATCH_NORM; d.typed = 1; d.attr.batch_norm.epsilon = 0;
        in[0] = x;
        for (k = 0; k < 4; k++) in[k + 1] = p[k];
        d.inputs = in; d.num_inputs = 5;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_OK, "bn: %s", luthier_graph_error(b.g));
        luthier_graph_output(b.g, o);
        d.attr.batch_norm.epsilon = -1;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative epsilon refused");
    }
    CHECK(!b.fail, "build");
    img = rand_buf(2 * 7 * 5 * 4, -2, 2);
    ins[0] = img;
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, "typed attrs");
        luthier_context_destroy(ctx);
    }
    free(img);
    gb_free(&b);
}

/* The older operators in typed form: their defaults, a typed desc read as given (its flat fields
   ignored, 0 meaning 0), the flat form resolving to the same attributes, and a typed network
   against the interpreter at 1 and 2 threads. */
static luthier_node_desc typed_desc(luthier_op op, const char *name) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.name = name;
    d.typed = 1;
    luthier_node_attrs_default(op, &d.attr);
    d.stride[0] = d.stride[1] = 5; /* flat fields a typed desc must ignore */
    d.groups = 3;
    d.axis = 2;
    d.trans_b = 1;
    d.clamp_min = 1, d.clamp_max = 2;
    return d;
}

static void typed_older_defaults(void) {
    luthier_node_attrs a;
    luthier_node_attrs_default(LUTHIER_OP_CONV2D, &a);
    CHECK(a.conv2d.stride[0] == 1 && a.conv2d.stride[1] == 1 && a.conv2d.dilation[0] == 1 && a.conv2d.dilation[1] == 1 &&
          a.conv2d.groups == 1 && a.conv2d.pads[2] == 0 && a.conv2d.act.kind == LUTHIER_ACTIVATION_NONE, "conv2d defaults");
    luthier_node_attrs_default(LUTHIER_OP_MAXPOOL, &a);
    CHECK(a.pool.stride[0] == 1 && a.pool.dilation[1] == 1 && a.pool.kernel[0] == 0 && !a.pool.ceil_mode, "pool defaults");
    luthier_node_attrs_default(LUTHIER_OP_CLIP, &a);
    CHECK(a.clip.min == -FLT_MAX && a.clip.max == FLT_MAX, "clip defaults");
    luthier_node_attrs_default(LUTHIER_OP_SOFTMAX, &a);
    CHECK(a.softmax.axis == -1 && !a.softmax.log, "softmax defaults");
    luthier_node_attrs_default(LUTHIER_OP_DENSE, &a);
    CHECK(!a.dense.trans_b && a.dense.act.kind == LUTHIER_ACTIVATION_NONE, "dense defaults");
}

/* Adds the same node in typed form (td) and in flat form (fd) to one graph; the graph must keep
   equal attributes for both. Returns the typed node's output. */
static int typed_vs_flat(gb *b, luthier_node_desc *td, luthier_node_desc *fd, int i0, int i1) {
    luthier_node_desc got_t, got_f;
    int o = gb_node(b, td, i0, i1, -1), n = luthier_graph_num_nodes(b->g);
    fd->name = NULL;
    gb_node(b, fd, i0, i1, -1);
    CHECK(luthier_graph_node_desc(b->g, n - 1, &got_t) == LUTHIER_STATUS_OK &&
              luthier_graph_node_desc(b->g, n, &got_f) == LUTHIER_STATUS_OK &&
              memcmp(&got_t.attr, &got_f.attr, sizeof got_t.attr) == 0,
          "%s: the flat form resolves to other attributes", td->name);
    return o;
}

static void test_graph_typed_older_ops(void) {
    gb b;
    luthier_node_desc t, f;
    luthier_tensor_info ti;
    int64_t xs[4] = {2, 4, 11, 9}, ws[4] = {6, 2, 3, 3}, ds[2] = {5, 36};
    int x, c, pm, pa, ad, dn, threads, in[1], o;
    float *img;
    const void *ins[1];
    typed_older_defaults();
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    t = typed_desc(LUTHIER_OP_CONV2D, "conv"); /* stride 2x1, dilation 2, groups 2, asymmetric pads, clamp */
    t.attr.conv2d.stride[0] = 2; t.attr.conv2d.dilation[0] = t.attr.conv2d.dilation[1] = 2; t.attr.conv2d.groups = 2;
    t.attr.conv2d.pads[0] = 1; t.attr.conv2d.pads[3] = 2;
    t.attr.conv2d.act.kind = LUTHIER_ACTIVATION_CLAMP, t.attr.conv2d.act.clamp_min = -0.5f, t.attr.conv2d.act.clamp_max = 0.7f;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_CONV2D; f.stride[0] = 2; f.dilation[0] = f.dilation[1] = 2; f.groups = 2; f.pads[0] = 1; f.pads[3] = 2;
    f.activation = LUTHIER_ACTIVATION_CLAMP, f.clamp_min = -0.5f, f.clamp_max = 0.7f;
    c = typed_vs_flat(&b, &t, &f, x, gb_const(&b, "w", 4, ws, -0.5f, 0.5f));
    luthier_graph_tensor_info(b.g, c, &ti);
    CHECK(ti.shape[1] == 6 && ti.shape[2] == 4 && ti.shape[3] == 7, "typed conv: [%lld,%lld,%lld]", (long long)ti.shape[1],
          (long long)ti.shape[2], (long long)ti.shape[3]);
    t = typed_desc(LUTHIER_OP_MAXPOOL, "maxpool"); /* typed stride default 1, not the kernel */
    t.attr.pool.kernel[0] = t.attr.pool.kernel[1] = 3; t.attr.pool.pads[1] = 1; t.attr.pool.ceil_mode = 1;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_MAXPOOL; f.kernel[0] = f.kernel[1] = 3; f.stride[0] = f.stride[1] = 1; f.pads[1] = 1; f.ceil_mode = 1;
    pm = typed_vs_flat(&b, &t, &f, c, -1);
    luthier_graph_tensor_info(b.g, pm, &ti);
    CHECK(ti.shape[2] == 2 && ti.shape[3] == 6, "typed maxpool stride 1: %lldx%lld", (long long)ti.shape[2], (long long)ti.shape[3]);
    t = typed_desc(LUTHIER_OP_AVGPOOL, "avgpool");
    t.attr.pool.kernel[0] = 2; t.attr.pool.kernel[1] = 3; t.attr.pool.stride[1] = 2; t.attr.pool.pads[3] = 1;
    t.attr.pool.count_include_pad = 1;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_AVGPOOL; f.kernel[0] = 2; f.kernel[1] = 3; f.stride[0] = 1; f.stride[1] = 2; f.pads[3] = 1; f.count_include_pad = 1;
    pa = typed_vs_flat(&b, &t, &f, c, -1);
    t = typed_desc(LUTHIER_OP_ADAPTIVE_AVGPOOL, "adaptive");
    t.attr.adaptive_pool.out_size[0] = 3; t.attr.adaptive_pool.out_size[1] = 2;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_ADAPTIVE_AVGPOOL; f.out_size[0] = 3; f.out_size[1] = 2;
    ad = typed_vs_flat(&b, &t, &f, pa, -1);
    t = typed_desc(LUTHIER_OP_FLATTEN, "flat");
    dn = gb_node(&b, &t, ad, -1, -1);
    t = typed_desc(LUTHIER_OP_DENSE, "dense"); /* trans_b as typed (0), relu6 */
    t.attr.dense.act.kind = LUTHIER_ACTIVATION_RELU6;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_DENSE; f.activation = LUTHIER_ACTIVATION_RELU6;
    dn = typed_vs_flat(&b, &t, &f, dn, gb_const(&b, "dw", 2, ds, -1.0f, 1.0f));
    t = typed_desc(LUTHIER_OP_MATMUL, "matmul");
    t.attr.matmul.trans_b = 1;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_MATMUL; f.trans_b = 1;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, dn, dn));
    t = typed_desc(LUTHIER_OP_CLIP, "clip");
    t.attr.clip.min = -0.3f; t.attr.clip.max = 0.4f;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_CLIP; f.clamp_min = -0.3f; f.clamp_max = 0.4f;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, pm, -1));
    t = typed_desc(LUTHIER_OP_CLIP, "clip_default"); /* no bounds: the identity */
    luthier_graph_output(b.g, gb_node(&b, &t, pm, -1, -1));
    t = typed_desc(LUTHIER_OP_GELU, "gelu");
    t.attr.gelu.approximate = 1;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_GELU; f.approximate = 1;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, pa, -1));
    t = typed_desc(LUTHIER_OP_ADD, "add_relu");
    t.attr.binary.act.kind = LUTHIER_ACTIVATION_RELU;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_ADD; f.activation = LUTHIER_ACTIVATION_RELU;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, pm, pm));
    t = typed_desc(LUTHIER_OP_SOFTMAX, "softmax"); /* the typed default axis is -1 */
    t.attr.softmax.log = 1;
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_SOFTMAX; f.axis = -1; f.log = 1;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, c, -1));
    t = typed_desc(LUTHIER_OP_CONCAT, "concat"); /* the typed default axis is 0 */
    memset(&f, 0, sizeof f);
    f.op = LUTHIER_OP_CONCAT;
    luthier_graph_output(b.g, typed_vs_flat(&b, &t, &f, pm, pm));
    t = typed_desc(LUTHIER_OP_CONV2D, "conv_stride0"); /* typed 0 means 0: refused */
    t.attr.conv2d.stride[1] = 0;
    in[0] = x;
    t.inputs = in; t.num_inputs = 1;
    CHECK(luthier_graph_add_node(b.g, &t, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "typed conv stride 0 refused");
    t = typed_desc(LUTHIER_OP_MAXPOOL, "pool_stride0");
    t.attr.pool.kernel[0] = t.attr.pool.kernel[1] = 2; t.attr.pool.stride[0] = 0;
    t.inputs = in; t.num_inputs = 1;
    CHECK(luthier_graph_add_node(b.g, &t, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "typed pool stride 0 refused");
    CHECK(!b.fail, "build");
    img = rand_buf(2 * 4 * 11 * 9, -2, 2);
    ins[0] = img;
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, "typed older operators");
        luthier_context_destroy(ctx);
    }
    free(img);
    gb_free(&b);
}

/* REDUCE: every kind over axis sets that fold into one, two and three runs, with and without
   keepdims, against the interpreter (each element to its output), 1 and 2 threads. */
static void test_graph_reduce(void) {
    static const int sets[][4] = {{0}, {1, 0}, {1, 3}, {2, 1, 2}, {2, 0, 2}, {2, 0, 3}, {2, -1, -3}, {3, 0, 1, 3}, {1, -4}};
    const int nsets = (int)(sizeof sets / sizeof sets[0]);
    int64_t xs[4] = {3, 4, 5, 6};
    int kind, si, k, threads;
    float *img = rand_buf(360, -1.5f, 1.5f);
    const void *ins[1];
    ins[0] = img;
    for (kind = 0; kind < (int)LUTHIER_REDUCE_KIND_COUNT; kind++) {
        gb b;
        int x, nout = 0;
        memset(&b, 0, sizeof b);
        luthier_graph_create(&b.g);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        if (kind == LUTHIER_REDUCE_LOG_SUM) x = gb_op(&b, LUTHIER_OP_EXP, "pos", x, -1); /* log of a positive sum */
        for (si = 0; si < nsets; si++) {
            luthier_node_desc d;
            memset(&d, 0, sizeof d);
            d.op = LUTHIER_OP_REDUCE;
            d.typed = 1;
            d.attr.reduce.kind = (luthier_reduce_kind)kind;
            d.attr.reduce.keepdims = si % 2;
            d.attr.reduce.num_axes = sets[si][0];
            for (k = 0; k < sets[si][0]; k++) d.attr.reduce.axes[k] = sets[si][k + 1];
            luthier_graph_output(b.g, gb_node(&b, &d, x, -1, -1));
            nout++;
        }
        CHECK(!b.fail && nout <= 16, "build kind %d", kind);
        for (threads = 1; threads <= 2; threads++) {
            luthier_context *ctx = ctx_threads(threads);
            char what[64];
            snprintf(what, sizeof what, "reduce kind %d, %d threads", kind, threads);
            plan_vs_ref(ctx, b.g, NULL, ins, kind == LUTHIER_REDUCE_PROD ? 1e-5 : 2e-6, what);
            luthier_context_destroy(ctx);
        }
        gb_free(&b);
    }
    { /* bad axes are refused by name */
        gb b;
        luthier_node_desc d;
        int x, o, in[1];
        memset(&b, 0, sizeof b);
        luthier_graph_create(&b.g);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_REDUCE; d.name = "r"; d.typed = 1; d.attr.reduce.num_axes = 2; d.attr.reduce.axes[0] = 1; d.attr.reduce.axes[1] = -3;
        in[0] = x; d.inputs = in; d.num_inputs = 1;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "'r'"),
              "repeated axis: %s", luthier_graph_error(b.g));
        d.attr.reduce.num_axes = 1; d.attr.reduce.axes[0] = 4;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "axis 4 of rank 4");
        d.attr.reduce.axes[0] = 0; d.attr.reduce.kind = LUTHIER_REDUCE_KIND_COUNT;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "unknown kind");
        gb_free(&b);
    }
    free(img);
}

/* ---- data movement: resize, depth_to_space / space_to_depth, pad -------------------------- */

/* x -> one node d -> y: y's shape must be ys and its values want (the plan at 1 and 2 threads,
   and the reference interpreter). */
static void dm_example(const char *what, luthier_node_desc *d, int rank, const int64_t *xs, const float *x, const int64_t *ys,
                       const float *want) {
    gb b;
    luthier_tensor_info ti;
    int t, y, k, threads;
    size_t n = 1, e;
    const void *ins[1];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, rank, xs, &t);
    d->name = what;
    y = gb_node(&b, d, t, -1, -1);
    CHECK(!b.fail, "%s: build", what);
    if (b.fail) {
        gb_free(&b);
        return;
    }
    luthier_graph_output(b.g, y);
    luthier_graph_tensor_info(b.g, y, &ti);
    CHECK(ti.rank == rank, "%s: rank %d", what, ti.rank);
    for (k = 0; k < rank; k++) {
        CHECK(ti.shape[k] == ys[k], "%s: dim %d is %lld, want %lld", what, k, (long long)ti.shape[k], (long long)ys[k]);
        n *= (size_t)ys[k];
    }
    ins[0] = x;
    {
        float **ref = ref_run(b.g, ins);
        for (e = 0; e < n; e++) CHECK(fabs(ref[0][e] - want[e]) <= 1e-5 * (1 + fabs(want[e])), "%s: reference [%zu] = %g, want %g", what, e, (double)ref[0][e], (double)want[e]);
        free(ref[0]);
        free(ref);
    }
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        luthier_plan *p = NULL;
        float *out = (float *)malloc(n * 4);
        void *outs[1];
        outs[0] = out;
        CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s: plan: %s", what, luthier_context_error(ctx));
        if (p) {
            CHECK(luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK, "%s: run: %s", what, luthier_context_error(ctx));
            for (e = 0; e < n; e++) CHECK(fabs(out[e] - want[e]) <= 1e-5 * (1 + fabs(want[e])), "%s: [%zu] = %g, want %g", what, e, (double)out[e], (double)want[e]);
        }
        luthier_plan_destroy(p);
        free(out);
        luthier_context_destroy(ctx);
    }
    gb_free(&b);
}

static luthier_node_desc rs_desc(int mode, int coord, int nearest, const float *scales, const int64_t *sizes, int rank) {
    luthier_node_desc d;
    int k;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_RESIZE;
    d.typed = 1;
    luthier_node_attrs_default(LUTHIER_OP_RESIZE, &d.attr);
    d.attr.resize.mode = mode;
    d.attr.resize.coord = coord;
    d.attr.resize.nearest_mode = nearest;
    for (k = 0; k < rank; k++) {
        if (scales) d.attr.resize.scales[k] = scales[k];
        if (sizes) d.attr.resize.sizes[k] = sizes[k];
    }
    return d;
}

/* The worked examples of the ONNX operator documents (Resize, DepthToSpace, SpaceToDepth, Pad). */
static void test_graph_dm_onnx_examples(void) {
    static const float x22[4] = {1, 2, 3, 4}, x24[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const int64_t s22[4] = {1, 1, 2, 2}, s24[4] = {1, 1, 2, 4};
    static const float sc_up_n[4] = {1, 1, 2, 3}, sc_down[4] = {1, 1, 0.6f, 0.6f}, sc_2[4] = {1, 1, 2, 2};
    static const float up_nearest[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    static const float up_linear[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
    static const float up_linear_ac[16] = {1, 1.33333333f, 1.66666667f, 2, 1.66666667f, 2, 2.33333333f, 2.66666667f,
                                           2.33333333f, 2.66666667f, 3, 3.33333333f, 3, 3.33333333f, 3.66666667f, 4};
    static const float down_nearest[2] = {1, 3}, down_linear[2] = {2.6666665f, 4.3333331f}, down_linear_ac[2] = {1, 3.142857f};
    static const int64_t sz_up[4] = {1, 1, 7, 8}, sz_down[4] = {1, 1, 1, 3};
    static const float up_sizes[56] = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2,
                                       3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4};
    static const float down_sizes[3] = {1, 2, 4};
    static const int64_t o46[4] = {1, 1, 4, 6}, o12[4] = {1, 1, 1, 2}, o44[4] = {1, 1, 4, 4};
    static const int64_t d2s_x[4] = {1, 8, 2, 3}, d2s_y[4] = {1, 2, 4, 6};
    static const float dcr[48] = {0, 18, 1, 19, 2, 20, 36, 54, 37, 55, 38, 56, 3, 21, 4, 22, 5, 23, 39, 57, 40, 58, 41, 59,
                                  9, 27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68};
    static const float crd[48] = {0, 9, 1, 10, 2, 11, 18, 27, 19, 28, 20, 29, 3, 12, 4, 13, 5, 14, 21, 30, 22, 31, 23, 32,
                                  36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68};
    static const float px[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
    static const int64_t ps_x[2] = {3, 2}, ps_y[2] = {3, 4};
    static const float p_const[12] = {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f};
    static const float p_reflect[12] = {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f};
    static const float p_edge[12] = {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f};
    float d2s_in[48];
    luthier_node_desc d;
    int k;
    d = rs_desc(LUTHIER_RESIZE_NEAREST, 0, 0, sc_up_n, NULL, 4);
    dm_example("resize_upsample_scales_nearest", &d, 4, s22, x22, o46, up_nearest);
    d = rs_desc(LUTHIER_RESIZE_NEAREST, 0, 0, sc_down, NULL, 4);
    dm_example("resize_downsample_scales_nearest", &d, 4, s24, x24, o12, down_nearest);
    d = rs_desc(LUTHIER_RESIZE_LINEAR, 0, 0, sc_2, NULL, 4);
    dm_example("resize_upsample_scales_linear", &d, 4, s22, x22, o44, up_linear);
    d = rs_desc(LUTHIER_RESIZE_LINEAR, LUTHIER_RESIZE_ALIGN_CORNERS, 0, sc_2, NULL, 4);
    dm_example("resize_upsample_scales_linear_align_corners", &d, 4, s22, x22, o44, up_linear_ac);
    d = rs_desc(LUTHIER_RESIZE_LINEAR, 0, 0, sc_down, NULL, 4);
    dm_example("resize_downsample_scales_linear", &d, 4, s24, x24, o12, down_linear);
    d = rs_desc(LUTHIER_RESIZE_LINEAR, LUTHIER_RESIZE_ALIGN_CORNERS, 0, sc_down, NULL, 4);
    dm_example("resize_downsample_scales_linear_align_corners", &d, 4, s24, x24, o12, down_linear_ac);
    d = rs_desc(LUTHIER_RESIZE_NEAREST, 0, 0, NULL, sz_up, 4);
    dm_example("resize_upsample_sizes_nearest", &d, 4, s22, x22, sz_up, up_sizes);
    d = rs_desc(LUTHIER_RESIZE_NEAREST, 0, 0, NULL, sz_down, 4);
    dm_example("resize_downsample_sizes_nearest", &d, 4, s24, x24, sz_down, down_sizes);
    for (k = 0; k < 48; k++) d2s_in[k] = (float)(k / 6 * 9 + k % 6);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_DEPTH_TO_SPACE; d.typed = 1; d.attr.depth_to_space.blocksize = 2;
    dm_example("depthtospace_example (DCR)", &d, 4, d2s_x, d2s_in, d2s_y, dcr);
    d.attr.depth_to_space.mode = LUTHIER_DEPTH_TO_SPACE_CRD;
    dm_example("depthtospace_crd_mode_example", &d, 4, d2s_x, d2s_in, d2s_y, crd);
    memset(&d, 0, sizeof d); /* space_to_depth undoes DCR */
    d.op = LUTHIER_OP_SPACE_TO_DEPTH; d.typed = 1; d.attr.space_to_depth.blocksize = 2;
    dm_example("spacetodepth of the DCR example", &d, 4, d2s_y, dcr, d2s_x, d2s_in);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_PAD; d.typed = 1; d.attr.pad.begin[1] = 2;
    dm_example("pad constant", &d, 2, ps_x, px, ps_y, p_const);
    d.attr.pad.mode = LUTHIER_PAD_REFLECT;
    dm_example("pad reflect", &d, 2, ps_x, px, ps_y, p_reflect);
    d.attr.pad.mode = LUTHIER_PAD_EDGE;
    dm_example("pad edge", &d, 2, ps_x, px, ps_y, p_edge);
}

/* Every mode and coordinate transformation of resize over shapes with odd sizes, up and down
   (integer and not), size-1 axes, ranks 1..4, scales and sizes, against the reference at 1 and 2
   threads. Nodes go 8 to a graph. */
static void test_graph_resize(void) {
    static const struct {
        int rank;
        int64_t shape[4];
        float scales[4];
        int64_t sizes[4];
    } cases[] = {
        {4, {1, 3, 4, 4}, {1, 1, 2, 2}, {0}},
        {4, {2, 3, 5, 7}, {1, 1, 1.5f, 0.6f}, {0}},
        {4, {1, 2, 9, 5}, {1, 1, 0.5f, 0.34f}, {0}},
        {4, {1, 1, 1, 6}, {1, 1, 3, 1}, {0}},
        {4, {1, 1, 5, 5}, {1.7f, 1.9f, 2.5f, 0.8f}, {0}},
        {4, {1, 4, 6, 1}, {0}, {1, 4, 13, 1}},
        {4, {2, 3, 7, 5}, {0}, {2, 3, 3, 11}},
        {4, {1, 16, 40, 40}, {1, 1, 2, 2}, {0}},
        {3, {2, 5, 9}, {1, 1.7f, 3}, {0}},
        {2, {7, 6}, {0}, {3, 10}},
        {1, {11}, {2.5f}, {0}},
        {1, {1}, {4}, {0}},
    };
    static const float cubic_a[2] = {-0.75f, -0.5f};
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int ci, threads;
    for (ci = 0; ci < ncases; ci++) {
        const int step = cases[ci].shape[1] == 16 ? 7 : 1; /* the large case: 8 combinations */
        int combo = 0;
        size_t n = 1;
        float *img;
        int k;
        for (k = 0; k < cases[ci].rank; k++) n *= (size_t)cases[ci].shape[k];
        img = rand_buf(n, -2, 2);
        while (combo < 54) { /* 24 nearest, 6 linear, 24 cubic */
            gb b;
            int x, outs = 0;
            char what[160];
            const void *ins[1];
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, cases[ci].rank, cases[ci].shape, &x);
            for (; outs < 8 && combo < 54; outs++, combo += step) {
                luthier_node_desc d;
                int mode = combo < 24 ? 0 : combo < 30 ? 1 : 2, c = combo < 24 ? combo % 6 : combo < 30 ? combo - 24 : (combo - 30) % 6;
                d = rs_desc(mode, c, combo < 24 ? combo / 6 : 0, cases[ci].sizes[0] ? NULL : cases[ci].scales,
                            cases[ci].sizes[0] ? cases[ci].sizes : NULL, cases[ci].rank);
                if (mode == 2) d.attr.resize.exclude_outside = (combo - 30) / 6 % 2, d.attr.resize.cubic_coeff_a = cubic_a[(combo - 30) / 12];
                if (c == LUTHIER_RESIZE_TF_HALF_PIXEL_FOR_NN && !(mode == 0 && (combo / 6 == 0 || combo / 6 == 2))) {
                    int kept = 1; /* refused unless the kept axes have size 1 (test_graph_resize_refusals) */
                    for (k = 0; k + 2 < cases[ci].rank; k++) kept &= cases[ci].shape[k] == 1;
                    if (!kept) {
                        outs--;
                        continue;
                    }
                }
                luthier_graph_output(b.g, gb_node(&b, &d, x, -1, -1));
            }
            CHECK(!b.fail, "case %d: build", ci);
            ins[0] = img;
            for (threads = 1; threads <= 2 && !b.fail; threads++) {
                luthier_context *ctx = ctx_threads(threads);
                snprintf(what, sizeof what, "resize case %d (rank %d), combinations up to %d, %d thread(s)", ci, cases[ci].rank,
                         combo - 1, threads);
                plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, what);
                luthier_context_destroy(ctx);
            }
            gb_free(&b);
        }
        free(img);
    }
}

/* conv -> op -> conv: the data-movement operators run on the convolution's NHWC output (no
   layout conversion around them: 2 conversions in all, at the graph's edges), at 1 and 2 threads;
   then the same operators on a plain graph input. */
static void test_graph_dm_nhwc(void) {
    static const float sc2[4] = {1, 1, 2, 2}, sc_odd[4] = {1, 1, 0.7f, 1.3f};
    int variant, threads, nhwc;
    for (nhwc = 1; nhwc >= 0; nhwc--)
        for (variant = 0; variant < 9; variant++) {
            gb b;
            luthier_node_desc d;
            int64_t xs[4] = {2, 3, 10, 14};
            int x, t, y;
            float *img;
            const void *ins[1];
            char what[96];
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
            t = nhwc ? gb_conv(&b, "c1", x, 16, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_RELU) : x;
            if (variant < 4) {
                d = rs_desc(variant % 3, variant == 3 ? LUTHIER_RESIZE_ALIGN_CORNERS : 0, 0, variant < 2 ? sc2 : sc_odd, NULL, 4);
            } else if (variant < 7) {
                memset(&d, 0, sizeof d);
                d.op = variant < 6 ? LUTHIER_OP_DEPTH_TO_SPACE : LUTHIER_OP_SPACE_TO_DEPTH;
                d.typed = 1;
                if (variant < 6) d.attr.depth_to_space.blocksize = nhwc ? 2 : 1, d.attr.depth_to_space.mode = variant - 4;
                else d.attr.space_to_depth.blocksize = 2;
            } else {
                memset(&d, 0, sizeof d);
                d.op = LUTHIER_OP_PAD;
                d.typed = 1;
                d.attr.pad.mode = variant == 7 ? LUTHIER_PAD_REFLECT : LUTHIER_PAD_EDGE;
                d.attr.pad.begin[2] = 2, d.attr.pad.end[2] = -1, d.attr.pad.begin[3] = 1, d.attr.pad.end[3] = 3;
                d.attr.pad.begin[1] = variant == 8 ? 1 : 0;
            }
            d.name = "dm";
            y = gb_node(&b, &d, t, -1, -1);
            if (nhwc) y = gb_conv(&b, "c2", y, 5, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
            luthier_graph_output(b.g, y);
            CHECK(!b.fail, "variant %d: build", variant);
            img = rand_buf(2 * 3 * 10 * 14, -1, 1);
            ins[0] = img;
            for (threads = 1; threads <= 2 && !b.fail; threads++) {
                luthier_context *ctx = ctx_threads(threads);
                snprintf(what, sizeof what, "%s variant %d (%s), %d thread(s)", nhwc ? "conv-op-conv" : "plain", variant,
                         luthier_op_name(d.op), threads);
                plan_vs_ref(ctx, b.g, NULL, ins, 1e-4, what);
                if (nhwc) {
                    int conv = plan_conversions(ctx, b.g);
                    CHECK(conv == 2, "%s: %d layout conversions (want 2: the op runs NHWC)", what, conv);
                }
                luthier_context_destroy(ctx);
            }
            free(img);
            gb_free(&b);
        }
}

/* depth_to_space (both modes) and space_to_depth over blocksizes and shapes; pad in every mode
   over ranks 1..5 with positive, zero and negative pads, pads longer than the axis (reflect
   repeats, wrap), at 1 and 2 threads. */
static void test_graph_depth_space_pad(void) {
    static const int64_t shapes[4][4] = {{1, 8, 3, 5}, {2, 18, 4, 6}, {1, 4, 1, 1}, {3, 32, 6, 2}};
    static const int64_t pshapes[5][5] = {{7}, {3, 5}, {2, 1, 4}, {2, 3, 5, 4}, {2, 2, 3, 1, 6}};
    int si, bsz, mode, threads, r, variant;
    for (si = 0; si < 4; si++)
        for (bsz = 1; bsz <= 4; bsz++)
            for (mode = 0; mode < 3; mode++) {
                const int64_t *s = shapes[si];
                gb b;
                luthier_node_desc d;
                int x, y;
                float *img;
                const void *ins[1];
                char what[96];
                if (mode < 2 ? s[1] % (bsz * bsz) : (s[2] % bsz || s[3] % bsz)) continue;
                memset(&b, 0, sizeof b);
                memset(&d, 0, sizeof d);
                luthier_graph_create(&b.g);
                luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, s, &x);
                d.typed = 1;
                d.op = mode < 2 ? LUTHIER_OP_DEPTH_TO_SPACE : LUTHIER_OP_SPACE_TO_DEPTH;
                if (mode < 2) d.attr.depth_to_space.blocksize = bsz, d.attr.depth_to_space.mode = mode;
                else d.attr.space_to_depth.blocksize = bsz;
                y = gb_node(&b, &d, x, -1, -1);
                luthier_graph_output(b.g, y);
                img = rand_buf((size_t)(s[0] * s[1] * s[2] * s[3]), -1, 1);
                ins[0] = img;
                for (threads = 1; threads <= 2 && !b.fail; threads++) {
                    luthier_context *ctx = ctx_threads(threads);
                    snprintf(what, sizeof what, "%s b %d mode %d shape %d, %d thread(s)", luthier_op_name(d.op), bsz, mode, si, threads);
                    plan_vs_ref(ctx, b.g, NULL, ins, 0, what);
                    luthier_context_destroy(ctx);
                }
                free(img);
                gb_free(&b);
            }
    for (r = 1; r <= 5; r++)
        for (variant = 0; variant < 4; variant++) {
            gb b;
            int x, k, m;
            size_t n = 1;
            float *img;
            const void *ins[1];
            char what[96];
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, r, pshapes[r - 1], &x);
            for (k = 0; k < r; k++) n *= (size_t)pshapes[r - 1][k];
            for (m = 0; m < 4; m++) {
                luthier_node_desc d;
                memset(&d, 0, sizeof d);
                d.op = LUTHIER_OP_PAD;
                d.typed = 1;
                d.attr.pad.mode = m;
                d.attr.pad.value = 0.5f * (float)variant - 1;
                for (k = 0; k < r; k++) {
                    const int64_t len = pshapes[r - 1][k];
                    /* 0: small positive, 1: crop one side, pad the other, 2: longer than the axis, 3: mixed */
                    d.attr.pad.begin[k] = variant == 0 ? (k % 2) : variant == 1 ? (len > 1 ? -1 : 1) : variant == 2 ? len + 2 : k - 1;
                    d.attr.pad.end[k] = variant == 0 ? 1 : variant == 1 ? 2 : variant == 2 ? 2 * len : (len > 3 ? -2 : 0);
                }
                luthier_graph_output(b.g, gb_node(&b, &d, x, -1, -1));
            }
            CHECK(!b.fail, "pad rank %d variant %d: build", r, variant);
            img = rand_buf(n, -1, 1);
            ins[0] = img;
            for (threads = 1; threads <= 2 && !b.fail; threads++) {
                luthier_context *ctx = ctx_threads(threads);
                snprintf(what, sizeof what, "pad rank %d variant %d, %d thread(s)", r, variant, threads);
                plan_vs_ref(ctx, b.g, NULL, ins, 0, what);
                luthier_context_destroy(ctx);
            }
            free(img);
            gb_free(&b);
        }
}

/* Hostile attributes are refused with a message naming the node and what is wrong. */
static void test_graph_dm_refusals(void) {
    static const struct {
        luthier_op op;
        int field; /* what to break */
        const char *msg;
    } bad[] = {
        {LUTHIER_OP_RESIZE, 0, "scales must be positive"},  {LUTHIER_OP_RESIZE, 1, "scales must be positive"},
        {LUTHIER_OP_RESIZE, 2, "scales must be positive"},  {LUTHIER_OP_RESIZE, 3, "scales must be positive"},
        {LUTHIER_OP_RESIZE, 4, "must be in [1, 2^40]"},     {LUTHIER_OP_RESIZE, 5, "sizes must be in"},
        {LUTHIER_OP_RESIZE, 6, "only the last two axes"},   {LUTHIER_OP_RESIZE, 7, "unknown mode"},
        {LUTHIER_OP_RESIZE, 8, "unknown coordinate"},       {LUTHIER_OP_RESIZE, 9, "unknown nearest_mode"},
        {LUTHIER_OP_RESIZE, 10, "cubic_coeff_a"},           {LUTHIER_OP_RESIZE, 11, "exclude_outside"},
        {LUTHIER_OP_RESIZE, 12, "too large"},               {LUTHIER_OP_RESIZE, 13, "tf_half_pixel_for_nn shifts"},
        {LUTHIER_OP_RESIZE, 14, "only the last two axes"},  {LUTHIER_OP_DEPTH_TO_SPACE, 0, "blocksize 0"},
        {LUTHIER_OP_DEPTH_TO_SPACE, 1, "do not divide"},    {LUTHIER_OP_DEPTH_TO_SPACE, 2, "unknown mode"},
        {LUTHIER_OP_DEPTH_TO_SPACE, 3, "blocksize"},        {LUTHIER_OP_SPACE_TO_DEPTH, 0, "blocksize -3"},
        {LUTHIER_OP_SPACE_TO_DEPTH, 1, "must divide"},      {LUTHIER_OP_PAD, 0, "unknown mode"},
        {LUTHIER_OP_PAD, 1, "leave"},                       {LUTHIER_OP_PAD, 2, "within"},
        {LUTHIER_OP_PAD, 3, "has pads, the input has rank"}, {LUTHIER_OP_PAD, 4, "too large"},
    };
    gb b;
    int64_t xs[4] = {2, 8, 6, 6};
    int x, k, o;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        luthier_node_desc d;
        luthier_node_attrs *a = &d.attr;
        int in[1];
        luthier_status s;
        memset(&d, 0, sizeof d);
        d.op = bad[k].op;
        d.typed = 1;
        luthier_node_attrs_default(d.op, a);
        d.name = "victim";
        if (d.op == LUTHIER_OP_RESIZE) {
            switch (bad[k].field) {
            case 0: a->resize.scales[3] = 0; break;
            case 1: a->resize.scales[2] = -2; break;
            case 2: a->resize.scales[3] = NAN; break;
            case 3: a->resize.scales[2] = INFINITY; break;
            case 4: a->resize.scales[3] = 0.1f; break; /* 6 * 0.1 rounds down to 0 */
            case 5: a->resize.sizes[0] = 2, a->resize.sizes[1] = 8, a->resize.sizes[2] = 0, a->resize.sizes[3] = 4; break;
            case 6: a->resize.scales[1] = 2; break;
            case 7: a->resize.mode = 3; break;
            case 8: a->resize.coord = -1; break;
            case 9: a->resize.nearest_mode = 4; break;
            case 10: a->resize.mode = 2, a->resize.cubic_coeff_a = NAN; break;
            case 11: a->resize.exclude_outside = 2; break;
            case 12: a->resize.scales[2] = a->resize.scales[3] = 1e9f; break;
            case 13: a->resize.coord = LUTHIER_RESIZE_TF_HALF_PIXEL_FOR_NN, a->resize.nearest_mode = LUTHIER_RESIZE_CEIL; break;
            default: a->resize.sizes[0] = 2, a->resize.sizes[1] = 9, a->resize.sizes[2] = 6, a->resize.sizes[3] = 6; break;
            }
        } else if (d.op == LUTHIER_OP_DEPTH_TO_SPACE) {
            a->depth_to_space.blocksize = bad[k].field == 0 ? 0 : bad[k].field == 1 ? 3 : bad[k].field == 2 ? 2 : ((int64_t)1 << 40);
            if (bad[k].field == 2) a->depth_to_space.mode = 2;
        } else if (d.op == LUTHIER_OP_SPACE_TO_DEPTH) {
            a->space_to_depth.blocksize = bad[k].field == 0 ? -3 : 4;
        } else {
            switch (bad[k].field) {
            case 0: a->pad.mode = 4; break;
            case 1: a->pad.begin[2] = -4, a->pad.end[2] = -2; break;
            case 2: a->pad.end[3] = INT64_MIN; break;
            case 3: a->pad.begin[4] = 1; break;
            default: a->pad.end[0] = a->pad.end[1] = a->pad.end[2] = a->pad.end[3] = (int64_t)1 << 40; break;
            }
        }
        in[0] = x;
        d.inputs = in;
        d.num_inputs = 1;
        s = luthier_graph_add_node(b.g, &d, &o);
        CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "'victim'") &&
                  strstr(luthier_graph_error(b.g), bad[k].msg),
              "%s case %d: status %s, message '%s' (want '%s')", luthier_op_name(d.op), bad[k].field, luthier_status_string(s),
              luthier_graph_error(b.g), bad[k].msg);
    }
    CHECK(luthier_graph_num_nodes(b.g) == 0, "a refused node was added");
    {
        luthier_node_attrs a;
        CHECK(sizeof a == 128, "luthier_node_attrs is %zu bytes", sizeof a);
        CHECK(luthier_node_attrs_default(LUTHIER_OP_RESIZE, &a) == LUTHIER_STATUS_OK && a.resize.cubic_coeff_a == -0.75f &&
                  a.resize.scales[5] == 1.0f && a.resize.sizes[0] == 0 && a.resize.mode == LUTHIER_RESIZE_NEAREST,
              "resize defaults");
    }
    gb_free(&b);
}

/* An activation node with its defaults, then alpha and the second attribute (gamma, beta) when
   not NAN. */
static int gb_act(gb *b, luthier_op op, const char *name, int x, float alpha, float second) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.name = name;
    d.typed = 1;
    luthier_node_attrs_default(op, &d.attr);
    if (alpha == alpha) d.attr.elu.alpha = alpha; /* alpha comes first in each of the structs */
    if (second == second) {
        if (op == LUTHIER_OP_SELU) d.attr.selu.gamma = second;
        else d.attr.hard_sigmoid.beta = second;
    }
    return gb_node(b, &d, x, -1, -1);
}

/* The activations against the interpreter: after a convolution (NHWC inside the plan), as a
   chain of sole consumers (in place), on odd 1-D and rank-5 shapes, with attributes off their
   defaults (negative slopes, alpha > 1, negative celu alpha). */
static void test_graph_activations(void) {
    static const luthier_op ops[] = {LUTHIER_OP_LEAKY_RELU, LUTHIER_OP_ELU, LUTHIER_OP_SELU, LUTHIER_OP_CELU,
                                     LUTHIER_OP_HARD_SIGMOID, LUTHIER_OP_HARD_SWISH, LUTHIER_OP_SOFTPLUS,
                                     LUTHIER_OP_SOFTSIGN, LUTHIER_OP_MISH, LUTHIER_OP_THRESHOLDED_RELU};
    gb b;
    int64_t xs[4] = {2, 5, 7, 3}, vs[1] = {37}, ws[5] = {1, 3, 1, 5, 2};
    int x, v, w, c, t, k, threads, o = 0, outs[8];
    float *xin = rand_buf(2 * 5 * 7 * 3, -3, 3), *vin = rand_buf(37, -4, 4), *win = rand_buf(30, -4, 4);
    const void *ins[3];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    luthier_graph_input(b.g, "v", LUTHIER_DTYPE_F32, 1, vs, &v);
    luthier_graph_input(b.g, "w", LUTHIER_DTYPE_F32, 5, ws, &w);
    c = gb_conv(&b, "conv", x, 6, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
    /* a chain on the convolution's NHWC output: each the sole consumer of the one before */
    t = gb_act(&b, LUTHIER_OP_LEAKY_RELU, "leaky", c, 0.1f, NAN);
    t = gb_act(&b, LUTHIER_OP_ELU, "elu", t, NAN, NAN);
    t = gb_act(&b, LUTHIER_OP_SELU, "selu", t, NAN, NAN);
    t = gb_act(&b, LUTHIER_OP_CELU, "celu", t, 0.7f, NAN);
    t = gb_act(&b, LUTHIER_OP_MISH, "mish", t, NAN, NAN);
    outs[o++] = gb_act(&b, LUTHIER_OP_SOFTSIGN, "softsign", t, NAN, NAN);
    /* branches off the convolution, defaults */
    for (k = 4; k < 10; k++)
        if (ops[k] != LUTHIER_OP_MISH && ops[k] != LUTHIER_OP_SOFTSIGN) outs[o++] = gb_act(&b, ops[k], luthier_op_name(ops[k]), c, NAN, NAN);
    /* every operator on the 1-D input, attributes off their defaults, then on rank 5 */
    t = v;
    for (k = 0; k < 10; k++) {
        static const float al[10] = {-0.5f, 2.0f, 0.5f, -1.5f, -0.3f, 0, 0, 0, 0, -1.0f}, se[10] = {0, 0, 1.5f, 0, 0.2f, 0, 0, 0, 0, 0};
        t = gb_act(&b, ops[k], NULL, k == 0 ? v : t, k < 5 || k == 9 ? al[k] : NAN, k == 2 || k == 4 ? se[k] : NAN);
    }
    outs[o++] = t;
    t = w;
    for (k = 9; k >= 0; k--) t = gb_act(&b, ops[k], NULL, t, k == 0 ? 1.5f : NAN, NAN); /* leaky alpha > 1 */
    outs[o++] = t;
    for (k = 0; k < o; k++) luthier_graph_output(b.g, outs[k]);
    CHECK(!b.fail && o == 7, "build (%d outputs)", o);
    ins[0] = xin; ins[1] = vin; ins[2] = win;
    for (threads = 1; threads <= 2; threads++) {
        /* exact algorithms for the convolution (no Winograd): the tolerance is the activations' */
        luthier_context *ctx = ctx_make(threads, NULL, LUTHIER_AUTO_MODEL_EXACT);
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-6, "activations");
        luthier_context_destroy(ctx);
    }
    free(xin);
    free(vin);
    free(win);
    gb_free(&b);
}

/* abs, log, floor, ceil, round, reciprocal, silu and prelu against the interpreter: abs, silu and
   prelu on a convolution's NHWC output (prelu per channel [C,1,1] and with a [1,H,W] slope that
   is not per channel), everything on an odd 1-D input holding halves (round to even), prelu on
   [N,C] with a [C] slope and on rank 5 with one slope value; 1 and 2 threads. */
static void test_graph_unary2(void) {
    gb b;
    int64_t xs[4] = {2, 5, 7, 3}, vs[1] = {41}, ws[2] = {3, 5}, zs[5] = {1, 2, 3, 1, 5};
    int64_t pc[3] = {6, 1, 1}, phw[3] = {1, 7, 3}, p1[1] = {1}, pw[1] = {5};
    int x, v, w, z, c, t, k, threads, o = 0, outs[16];
    float *xin = rand_buf(2 * 5 * 7 * 3, -3, 3), *vin = rand_buf(41, -6, 6), *win = rand_buf(15, -4, 4), *zin = rand_buf(30, -4, 4);
    const void *ins[4];
    for (k = 0; k < 12; k++) vin[k] = (float)(k - 6) + 0.5f; /* -5.5 .. 5.5: every half, odd and even */
    vin[12] = 0.25f; vin[13] = 2.0f; vin[14] = -3.0f; /* (no 0: the harness compares finite values) */
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    luthier_graph_input(b.g, "v", LUTHIER_DTYPE_F32, 1, vs, &v);
    luthier_graph_input(b.g, "w", LUTHIER_DTYPE_F32, 2, ws, &w);
    luthier_graph_input(b.g, "z", LUTHIER_DTYPE_F32, 5, zs, &z);
    c = gb_conv(&b, "conv", x, 6, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
    outs[o++] = gb_op(&b, LUTHIER_OP_PRELU, "prelu_c", c, gb_const(&b, "slope_c", 3, pc, -0.5f, 0.5f));
    outs[o++] = gb_op(&b, LUTHIER_OP_PRELU, "prelu_hw", c, gb_const(&b, "slope_hw", 3, phw, -2.0f, 2.0f));
    outs[o++] = gb_op(&b, LUTHIER_OP_ABS, "abs", c, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_SILU, "silu", c, -1);
    /* a chain of sole consumers (in place), on v: floor of the convolution's output could flip
       where the convolution's own rounding crosses an integer */
    t = gb_op(&b, LUTHIER_OP_SILU, "silu_chain", v, -1);
    t = gb_op(&b, LUTHIER_OP_FLOOR, "floor_chain", t, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_ABS, "abs_chain", t, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_FLOOR, "floor", v, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_CEIL, "ceil", v, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_ROUND, "round", v, -1);
    /* log of |v|, not of the convolution: near its zeros log would magnify the convolution's
       own rounding (the interpreter's is in double) */
    t = gb_op(&b, LUTHIER_OP_ABS, "abs_v", v, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_LOG, "log", t, -1);
    outs[o++] = t;
    outs[o++] = gb_op(&b, LUTHIER_OP_RECIPROCAL, "recip", v, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_SILU, "silu_v", v, -1);
    outs[o++] = gb_op(&b, LUTHIER_OP_PRELU, "prelu_w", w, gb_const(&b, "slope_w", 1, pw, -1.0f, 1.0f));
    outs[o++] = gb_op(&b, LUTHIER_OP_PRELU, "prelu_z", z, gb_const(&b, "slope_z", 1, p1, 0.2f, 0.3f));
    for (k = 0; k < o; k++) luthier_graph_output(b.g, outs[k]);
    CHECK(!b.fail && o == 14, "build (%d outputs)", o);
    ins[0] = xin; ins[1] = vin; ins[2] = win; ins[3] = zin;
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-6, "unary2");
        luthier_context_destroy(ctx);
    }
    free(xin);
    free(vin);
    free(win);
    free(zin);
    gb_free(&b);
}

/* conv -> prelu -> conv: the prelu (slope [C,1,1], [1,C,1,1] or one value) runs on the NHWC
   activation, so the plan converts layouts only at its two edges; 1 and 2 threads */
static void test_graph_prelu_nhwc(void) {
    int variant, threads;
    for (variant = 0; variant < 3; variant++) {
        gb b;
        int64_t xs[4] = {2, 3, 6, 5}, ss[3] = {4, 1, 1}, s1[1] = {1}, s4[4] = {1, 4, 1, 1};
        int x, y, sl;
        float *img = rand_buf(2 * 3 * 6 * 5, -1, 1);
        const void *ins[1];
        memset(&b, 0, sizeof b);
        luthier_graph_create(&b.g);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        y = gb_conv(&b, "c1", x, 4, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
        sl = variant == 0 ? gb_const(&b, "sc", 3, ss, -1.0f, 1.0f) : variant == 1 ? gb_const(&b, "s1", 1, s1, 0.1f, 0.2f)
                                                                  : gb_const(&b, "s4", 4, s4, -1.0f, 1.0f);
        y = gb_op(&b, LUTHIER_OP_PRELU, "prelu", y, sl);
        y = gb_conv(&b, "c2", y, 5, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
        luthier_graph_output(b.g, y);
        CHECK(!b.fail, "variant %d: build", variant);
        ins[0] = img;
        for (threads = 1; threads <= 2 && !b.fail; threads++) {
            luthier_context *ctx = ctx_threads(threads);
            int conv;
            plan_vs_ref(ctx, b.g, NULL, ins, 1e-5, "prelu nhwc");
            conv = plan_conversions(ctx, b.g);
            CHECK(conv == 2, "variant %d: %d layout conversions (want 2: prelu runs NHWC)", variant, conv);
            luthier_context_destroy(ctx);
        }
        free(img);
        gb_free(&b);
    }
}

/* prelu's slope must be a constant that broadcasts to x one way; refusals name the node */
static void test_graph_prelu_refusals(void) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int64_t xs[4] = {1, 3, 4, 4}, s3[1] = {3}, s4[2] = {2, 4}, big[5] = {1, 1, 3, 4, 4};
    float vals[96] = {0};
    int x, sv, in[2], y, k, cs[3];
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    luthier_graph_input(g, "slope_in", LUTHIER_DTYPE_F32, 1, s3, &sv);
    luthier_graph_constant(g, "s3", 1, s3, vals, 0, &cs[0]);  /* [3] lines up with W (4): no */
    luthier_graph_constant(g, "s24", 2, s4, vals, 0, &cs[1]); /* [2,4] against [4,4]: no */
    luthier_graph_constant(g, "s5", 5, big, vals, 0, &cs[2]); /* rank 5 > 4: the output would grow */
    for (k = 0; k < 4; k++) {
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_PRELU; d.name = "pr"; d.inputs = in; d.num_inputs = 2;
        in[0] = x; in[1] = k == 0 ? sv : cs[k - 1];
        CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "pr") &&
              strstr(luthier_graph_error(g), k == 0 ? "constant" : "broadcast"), "case %d refused: '%s'", k, luthier_graph_error(g));
    }
    CHECK(luthier_graph_num_nodes(g) == 0, "refused nodes left the graph as it was");
    luthier_graph_destroy(g);
}

/* A node with typed attributes (mod: fmod; cast: to). */
static int gb_typed(gb *b, luthier_op op, const char *name, int x, int y, int z, const luthier_node_attrs *a) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.name = name;
    d.typed = 1;
    d.attr = *a;
    return gb_node(b, &d, x, y, z);
}

static int gb_cast(gb *b, const char *name, int x, int to) {
    luthier_node_attrs a;
    memset(&a, 0, sizeof a);
    a.cast.to = to;
    return gb_typed(b, LUTHIER_OP_CAST, name, x, -1, -1, &a);
}

static int gb_mod(gb *b, const char *name, int x, int y, int fmod_) {
    luthier_node_attrs a;
    memset(&a, 0, sizeof a);
    a.mod.fmod = fmod_;
    return gb_typed(b, LUTHIER_OP_MOD, name, x, y, -1, &a);
}

/* The isa of the plan step named `name` ("" when none). */
static const char *plan_step_isa(const luthier_plan *p, const char *name) {
    luthier_plan_info pi;
    luthier_step_info si;
    int k;
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    for (k = 0; k < pi.num_steps; k++)
        if (luthier_plan_step_info(p, k, &si) == LUTHIER_STATUS_OK && !strcmp(si.name, name)) return si.isa;
    return "";
}

/* Comparisons (NaN and infinities among the inputs, broadcasting both ways and against a scalar
   constant), and / or / xor / not, where with three-way broadcasting, mod (floored on
   integer-valued floats, C fmod on fractions) and casts of f32 (bool, f16 at the rounding edges,
   i64 and i32 with NaN, infinities and out-of-range values) against the interpreter; 1 and 2
   threads. The f32 forms run the operator pass (step isa), the integer ones plain C. */
static void test_graph_logic(void) {
    gb b;
    int64_t as[4] = {2, 3, 4, 5}, bs[3] = {3, 1, 5}, one[1] = {1}, ws[4] = {2, 3, 4, 1}, five[1] = {5}, ms[2] = {4, 6},
            m2s[1] = {6}, f2s[2] = {1, 6}, hs[1] = {24}, gs[1] = {12};
    int a, bb, w, m1, m2, f1, f2, h, big, t0, t1, t2, t3, t4, o = 0, outs[16], k, threads;
    float *ain = rand_buf(120, -3, 3), *bin = rand_buf(15, -3, 3), *win = rand_buf(24, -5, 5), *m1in = rand_buf(24, -9, 9),
          *m2in = rand_buf(6, 1, 4), *f1in = rand_buf(24, -7, 7), *f2in = rand_buf(6, 0.5f, 2.5f);
    static const float hin[24] = {65504.0f, 65519.99f, 65520.0f, -70000.0f, 1e-8f, 5.9604645e-8f, 2.9802322e-8f, 3e-8f,
                                  6.1e-5f, 6.1035156e-5f, 0.1f, 0.33333334f, -2049.0f, 2051.0f, 1.00048828125f, 1.00146484375f,
                                  INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -3.5e-6f, 12345.678f, 0.99999994f};
    static const float gin[12] = {3e9f, -3e9f, INFINITY, -INFINITY, NAN, 2147483520.0f, -2147483648.0f, -1.9f, 1.9f, 0.5f,
                                  1e19f, -1e19f};
    const void *ins[9];
    for (k = 0; k < 120; k++) ain[k] = floorf(ain[k] * 2) / 2; /* halves: equal values occur */
    for (k = 0; k < 15; k++) bin[k] = floorf(bin[k] * 2) / 2;
    ain[3] = NAN, ain[17] = NAN, ain[40] = INFINITY, ain[41] = -INFINITY, ain[50] = 0.0f, ain[51] = -0.0f, bin[2] = NAN;
    for (k = 0; k < 24; k++) m1in[k] = floorf(m1in[k]);
    for (k = 0; k < 6; k++) m2in[k] = floorf(m2in[k]) * (k % 2 ? -1.0f : 1.0f); /* +-1 .. +-3 */
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "a", LUTHIER_DTYPE_F32, 4, as, &a);
    luthier_graph_input(b.g, "b", LUTHIER_DTYPE_F32, 3, bs, &bb);
    luthier_graph_input(b.g, "w", LUTHIER_DTYPE_F32, 4, ws, &w);
    luthier_graph_input(b.g, "m1", LUTHIER_DTYPE_F32, 2, ms, &m1);
    luthier_graph_input(b.g, "m2", LUTHIER_DTYPE_F32, 1, m2s, &m2);
    luthier_graph_input(b.g, "f1", LUTHIER_DTYPE_F32, 2, ms, &f1);
    luthier_graph_input(b.g, "f2", LUTHIER_DTYPE_F32, 2, f2s, &f2);
    luthier_graph_input(b.g, "h", LUTHIER_DTYPE_F32, 1, hs, &h);
    luthier_graph_input(b.g, "big", LUTHIER_DTYPE_F32, 1, gs, &big);
    outs[o++] = t0 = gb_op(&b, LUTHIER_OP_EQUAL, "eq", a, bb);
    outs[o++] = t1 = gb_op(&b, LUTHIER_OP_GREATER, "gt", bb, a);
    outs[o++] = t2 = gb_op(&b, LUTHIER_OP_LESS, "lt", a, bb);
    outs[o++] = t3 = gb_op(&b, LUTHIER_OP_GREATER_OR_EQUAL, "ge", a, bb);
    outs[o++] = t4 = gb_op(&b, LUTHIER_OP_LESS_OR_EQUAL, "le", a, gb_const(&b, "half", 1, one, 0.5f, 0.5f));
    outs[o++] = gb_op(&b, LUTHIER_OP_AND, "and", t1, t4);
    outs[o++] = gb_op(&b, LUTHIER_OP_OR, "or", t0, t2);
    outs[o++] = gb_op(&b, LUTHIER_OP_XOR, "xor", t3, t4);
    outs[o++] = gb_op(&b, LUTHIER_OP_NOT, "not", a, -1);
    {
        int cond = gb_op(&b, LUTHIER_OP_LESS, "cond", bb, gb_const(&b, "zero", 1, one, 0.0f, 0.0f)), in3[3] = {0, 0, 0}, y;
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_WHERE; d.name = "where"; d.inputs = in3; d.num_inputs = 3;
        in3[0] = cond; in3[1] = w; in3[2] = gb_const(&b, "other", 1, five, -1.0f, 1.0f);
        CHECK(luthier_graph_add_node(b.g, &d, &y) == LUTHIER_STATUS_OK, "where: %s", luthier_graph_error(b.g));
        outs[o++] = y;
    }
    outs[o++] = gb_mod(&b, "mod_floor", m1, m2, 0);
    outs[o++] = gb_mod(&b, "mod_fmod", f1, f2, 1);
    outs[o++] = gb_cast(&b, "to_bool", a, LUTHIER_CAST_TO_BOOL);
    outs[o++] = gb_cast(&b, "to_f16", h, LUTHIER_CAST_TO_F16);
    outs[o++] = gb_cast(&b, "to_i64", a, LUTHIER_CAST_TO_I64);
    outs[o++] = gb_cast(&b, "big_to_i32", big, LUTHIER_CAST_TO_I32);
    for (k = 0; k < o; k++) luthier_graph_output(b.g, outs[k]);
    CHECK(!b.fail && o == 16, "build (%d outputs)", o);
    ins[0] = ain; ins[1] = bin; ins[2] = win; ins[3] = m1in; ins[4] = m2in; ins[5] = f1in; ins[6] = f2in; ins[7] = hin; ins[8] = gin;
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        luthier_plan *p = NULL;
        plan_vs_ref(ctx, b.g, NULL, ins, 0, "logic");
        if (luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK) {
            const char *pass = luthier__isa_name(luthier__op_isa(ctx->cpu_features));
            CHECK(!strcmp(plan_step_isa(p, "eq"), pass) && !strcmp(plan_step_isa(p, "where"), pass) &&
                  !strcmp(plan_step_isa(p, "not"), pass) && !strcmp(plan_step_isa(p, "to_f16"), pass) &&
                  !strcmp(plan_step_isa(p, "mod_floor"), pass) && !strcmp(plan_step_isa(p, "mod_fmod"), pass),
                  "the f32 forms run the %s pass (eq %s, where %s, mod %s)", pass, plan_step_isa(p, "eq"), plan_step_isa(p, "where"),
                  plan_step_isa(p, "mod_floor"));
            CHECK(!strcmp(plan_step_isa(p, "to_i64"), "scalar"), "the integer forms are plain C (to_i64 %s)", plan_step_isa(p, "to_i64"));
        }
        luthier_plan_destroy(p);
        luthier_context_destroy(ctx);
    }
    free(ain); free(bin); free(win); free(m1in); free(m2in); free(f1in); free(f2in);
    gb_free(&b);
}

/* The integer forms: comparisons, mod (floored and truncated, zero and -1 divisors, INT64_MIN)
   and where on i64; casts of i64 (f32, i32 wrapping, bool, f16), of an i32 input and of a bool
   input (bytes, any nonzero true); where of rank 6 with three-way broadcasting and a rank-1
   comparison; 1 and 2 threads, integers compared exactly. */
static void test_graph_logic_i64(void) {
    gb b;
    int64_t ps[3] = {2, 1, 6}, qs[2] = {3, 1}, ts[1] = {5}, us[2] = {2, 3}, c6[6] = {2, 1, 3, 1, 2, 1}, x6[6] = {1, 2, 1, 4, 1, 3},
            y6[1] = {3}, r1[1] = {7}, one[1] = {1};
    static const int64_t pin[12] = {7, -7, 0, 1099511627781LL, -2147483649LL, INT64_MIN, 13, -13, 4294967295LL, INT64_MAX, 2048, -1};
    static const int64_t qin[3] = {3, -1, 0}, rin[7] = {5, -3, 0, 5, 1, 9, 5}, five = 5;
    static const int32_t tin[5] = {INT32_MIN, INT32_MAX, 0, -5, 65536};
    static const uint8_t uin[6] = {0, 1, 2, 0, 255, 1};
    int p, q, t, u, cc, xx, r, o = 0, outs[16], k, threads, gt, qp;
    float *cin = rand_buf(12, -1, 1), *xin = rand_buf(24, -4, 4);
    const void *ins[7];
    for (k = 0; k < 12; k++) cin[k] = k % 3 == 0 ? 0.0f : cin[k]; /* zeros: false */
    cin[1] = NAN; /* true */
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "p", LUTHIER_DTYPE_I64, 3, ps, &p);
    luthier_graph_input(b.g, "q", LUTHIER_DTYPE_I64, 2, qs, &q);
    luthier_graph_input(b.g, "t", LUTHIER_DTYPE_I32, 1, ts, &t);
    luthier_graph_input(b.g, "u", LUTHIER_DTYPE_BOOL, 2, us, &u);
    luthier_graph_input(b.g, "c6", LUTHIER_DTYPE_F32, 6, c6, &cc);
    luthier_graph_input(b.g, "x6", LUTHIER_DTYPE_F32, 6, x6, &xx);
    luthier_graph_input(b.g, "r", LUTHIER_DTYPE_I64, 1, r1, &r);
    outs[o++] = gb_op(&b, LUTHIER_OP_EQUAL, "eq", p, q);
    outs[o++] = gt = gb_op(&b, LUTHIER_OP_GREATER, "gt", q, p);
    outs[o++] = gb_op(&b, LUTHIER_OP_LESS_OR_EQUAL, "le", p, q);
    outs[o++] = gb_mod(&b, "mod_floor", p, q, 0);
    outs[o++] = gb_mod(&b, "mod_trunc", p, q, 1);
    {
        int in3[3], y;
        luthier_node_desc d;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_WHERE; d.name = "where_i64"; d.inputs = in3; d.num_inputs = 3;
        in3[0] = gt; in3[1] = p; in3[2] = q;
        CHECK(luthier_graph_add_node(b.g, &d, &y) == LUTHIER_STATUS_OK, "where: %s", luthier_graph_error(b.g));
        outs[o++] = y;
        d.name = "where_rank6";
        in3[0] = cc; in3[1] = xx; in3[2] = gb_const(&b, "y6", 1, y6, -1.0f, 1.0f);
        CHECK(luthier_graph_add_node(b.g, &d, &y) == LUTHIER_STATUS_OK, "where: %s", luthier_graph_error(b.g));
        outs[o++] = y;
    }
    outs[o++] = gb_cast(&b, "p_f32", p, LUTHIER_CAST_TO_F32);
    outs[o++] = gb_cast(&b, "p_i32", p, LUTHIER_CAST_TO_I32);
    outs[o++] = gb_cast(&b, "p_bool", p, LUTHIER_CAST_TO_BOOL);
    outs[o++] = gb_cast(&b, "p_f16", p, LUTHIER_CAST_TO_F16);
    outs[o++] = gb_cast(&b, "t_i64", t, LUTHIER_CAST_TO_I64);
    outs[o++] = gb_cast(&b, "t_f32", t, LUTHIER_CAST_TO_F32);
    outs[o++] = gb_cast(&b, "u_bool", u, LUTHIER_CAST_TO_BOOL);
    outs[o++] = gb_cast(&b, "u_i64", u, LUTHIER_CAST_TO_I64);
    if (luthier_graph_constant_i64(b.g, "five", 1, one, &five, &qp) != LUTHIER_STATUS_OK) b.fail = 1;
    outs[o++] = gb_op(&b, LUTHIER_OP_EQUAL, "eq_rank1", r, qp);
    for (k = 0; k < o; k++) luthier_graph_output(b.g, outs[k]);
    CHECK(!b.fail && o == 16, "build (%d outputs)", o);
    ins[0] = pin; ins[1] = qin; ins[2] = tin; ins[3] = uin; ins[4] = cin; ins[5] = xin; ins[6] = rin;
    for (threads = 1; threads <= 2; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        luthier_plan *pl = NULL;
        plan_vs_ref(ctx, b.g, NULL, ins, 0, "logic_i64");
        if (luthier_plan_create(ctx, b.g, NULL, &pl) == LUTHIER_STATUS_OK)
            CHECK(!strcmp(plan_step_isa(pl, "eq"), "scalar") && !strcmp(plan_step_isa(pl, "where_i64"), "scalar") &&
                  !strcmp(plan_step_isa(pl, "t_i64"), "scalar"), "the i64 forms are plain C (eq %s)", plan_step_isa(pl, "eq"));
        luthier_plan_destroy(pl);
        luthier_context_destroy(ctx);
    }
    free(cin);
    free(xin);
    gb_free(&b);
}

/* The comparisons, logic and mod between two convolutions stay NHWC (2 layout conversions: the
   input and the output), with per-channel, scalar and one-axis operands; the first convolution has
   integer weights and inputs, so its sums are exact and the comparisons cannot flip on rounding. */
static void test_graph_logic_nhwc(void) {
    gb b;
    int64_t xs[4] = {2, 3, 6, 5}, ws[4] = {6, 3, 3, 3}, pc[3] = {6, 1, 1}, one[1] = {1}, pw[1] = {5};
    float w[162], *img = rand_buf(180, -3, 3), thr[6] = {0.5f, -1.5f, 2.5f, -0.5f, 3.5f, 0.5f};
    int x, wt, c1, g, l, e, a, o, m, y, k, threads;
    luthier_node_desc d;
    const void *ins[1];
    for (k = 0; k < 162; k++) w[k] = (float)(k * 7 % 3) - 1.0f; /* -1, 0, 1 */
    for (k = 0; k < 180; k++) img[k] = floorf(img[k]);
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    if (luthier_graph_constant(b.g, "w1", 4, ws, w, 0, &wt) != LUTHIER_STATUS_OK) b.fail = 1;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D; d.name = "c1"; d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 1;
    c1 = gb_node(&b, &d, x, wt, -1);
    if (luthier_graph_constant(b.g, "thr", 3, pc, thr, 0, &k) != LUTHIER_STATUS_OK) b.fail = 1;
    g = gb_op(&b, LUTHIER_OP_GREATER, "gt", c1, k);                                      /* per channel */
    l = gb_op(&b, LUTHIER_OP_LESS_OR_EQUAL, "le", c1, gb_const(&b, "two", 1, one, 2.0f, 2.0f)); /* scalar */
    e = gb_op(&b, LUTHIER_OP_EQUAL, "eq", c1, gb_const(&b, "zero", 1, one, 0.0f, 0.0f));
    a = gb_op(&b, LUTHIER_OP_AND, "and", g, l);
    o = gb_op(&b, LUTHIER_OP_XOR, "xor", a, e);
    o = gb_op(&b, LUTHIER_OP_NOT, "not", o, -1);
    m = gb_mod(&b, "mod", c1, gb_const(&b, "three", 1, pw, 3.0f, 3.0f), 0);              /* last axis */
    y = gb_op(&b, LUTHIER_OP_ADD, "sum", o, m);
    y = gb_conv(&b, "c2", y, 4, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_NONE);
    luthier_graph_output(b.g, y);
    CHECK(!b.fail, "build");
    ins[0] = img;
    for (threads = 1; threads <= 2 && !b.fail; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        int conv;
        plan_vs_ref(ctx, b.g, NULL, ins, 1e-5, "logic nhwc");
        conv = plan_conversions(ctx, b.g);
        CHECK(conv == 2, "%d layout conversions (want 2: the comparisons run NHWC)", conv);
        luthier_context_destroy(ctx);
    }
    free(img);
    gb_free(&b);
}

/* Refusals name the node: mixed dtypes, an i64 condition, i64 operands of and, fmod 2, cast to
   an unknown type, shapes that do not broadcast; i32 / bool inputs feed nothing but a cast. */
static void test_graph_logic_refusals(void) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int64_t s4[1] = {4}, s3[1] = {3};
    int f, i, f3, bo, in[3], y, k;
    luthier_graph_create(&g);
    luthier_graph_input(g, "f", LUTHIER_DTYPE_F32, 1, s4, &f);
    luthier_graph_input(g, "i", LUTHIER_DTYPE_I64, 1, s4, &i);
    luthier_graph_input(g, "f3", LUTHIER_DTYPE_F32, 1, s3, &f3);
    luthier_graph_input(g, "bo", LUTHIER_DTYPE_BOOL, 1, s4, &bo);
    for (k = 0; k < 9; k++) {
        static const char *const want[9] = {"two f32 or two i64", "condition", "f32", "fmod", "to is", "broadcast",
                                            "two f32 or two i64", "bool", "do not broadcast"};
        memset(&d, 0, sizeof d);
        d.name = "bad";
        d.inputs = in;
        d.num_inputs = 2;
        in[0] = f; in[1] = i; in[2] = f;
        switch (k) {
        case 0: d.op = LUTHIER_OP_GREATER; break;
        case 1: d.op = LUTHIER_OP_WHERE; d.num_inputs = 3; in[0] = i; break;
        case 2: d.op = LUTHIER_OP_AND; in[0] = i; break;
        case 3: d.op = LUTHIER_OP_MOD; d.typed = 1; d.attr.mod.fmod = 2; in[1] = f; break;
        case 4: d.op = LUTHIER_OP_CAST; d.typed = 1; d.attr.cast.to = 99; d.num_inputs = 1; break;
        case 5: d.op = LUTHIER_OP_EQUAL; in[1] = f3; break;
        case 6: d.op = LUTHIER_OP_WHERE; d.num_inputs = 3; in[1] = i; in[2] = f; break;
        case 7: d.op = LUTHIER_OP_ADD; in[1] = bo; break;
        default: d.op = LUTHIER_OP_WHERE; d.num_inputs = 3; in[1] = f; in[2] = f3; break;
        }
        CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "'bad'") &&
              strstr(luthier_graph_error(g), want[k]), "case %d refused: '%s'", k, luthier_graph_error(g));
    }
    CHECK(luthier_graph_num_nodes(g) == 0, "refused nodes left the graph as it was");
    luthier_graph_destroy(g);
}

/* The activations' attributes: defaults, kept as given (typed or not: they have no flat form),
   non-finite values and a celu alpha of 0 refused with the node's name. */
static void test_graph_activation_attrs(void) {
    luthier_graph *g = NULL;
    luthier_node_attrs a;
    luthier_node_desc d, got;
    int64_t xs[2] = {3, 4};
    int x, in[1], y, k;
    static const struct { luthier_op op; float alpha, second; const char *msg; } bad[] = {
        {LUTHIER_OP_LEAKY_RELU, NAN, 0, "alpha"}, {LUTHIER_OP_ELU, INFINITY, 0, "alpha"},
        {LUTHIER_OP_SELU, 1.0f, -INFINITY, "gamma"}, {LUTHIER_OP_SELU, 1e30f, 1e30f, "overflows"},
        {LUTHIER_OP_CELU, 0.0f, 0, "divides"}, {LUTHIER_OP_HARD_SIGMOID, 0.2f, NAN, "beta"},
        {LUTHIER_OP_THRESHOLDED_RELU, -INFINITY, 0, "alpha"},
    };
    CHECK(luthier_node_attrs_default(LUTHIER_OP_LEAKY_RELU, &a) == LUTHIER_STATUS_OK && a.leaky_relu.alpha == 0.01f, "leaky");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_ELU, &a) == LUTHIER_STATUS_OK && a.elu.alpha == 1.0f, "elu");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_SELU, &a) == LUTHIER_STATUS_OK && a.selu.alpha == 1.67326319217681884765625f &&
          a.selu.gamma == 1.05070102214813232421875f, "selu");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_CELU, &a) == LUTHIER_STATUS_OK && a.celu.alpha == 1.0f, "celu");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_HARD_SIGMOID, &a) == LUTHIER_STATUS_OK && a.hard_sigmoid.alpha == 0.2f &&
          a.hard_sigmoid.beta == 0.5f, "hard sigmoid");
    CHECK(luthier_node_attrs_default(LUTHIER_OP_THRESHOLDED_RELU, &a) == LUTHIER_STATUS_OK && a.thresholded_relu.alpha == 1.0f, "thresholded");
    CHECK(sizeof(luthier_node_attrs) == 16 * sizeof(int64_t), "the union keeps its size (%zu bytes)", sizeof(luthier_node_attrs));
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
    in[0] = x;
    memset(&d, 0, sizeof d); /* typed = 0: attr is read as given, 0 meaning 0 */
    d.op = LUTHIER_OP_HARD_SIGMOID; d.inputs = in; d.num_inputs = 1; d.attr.hard_sigmoid.alpha = 0.25f;
    CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_OK, "untyped hard sigmoid: %s", luthier_graph_error(g));
    CHECK(luthier_graph_node_desc(g, 0, &got) == LUTHIER_STATUS_OK && got.typed && got.attr.hard_sigmoid.alpha == 0.25f &&
          got.attr.hard_sigmoid.beta == 0.0f, "kept as given");
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        memset(&d, 0, sizeof d);
        d.op = bad[k].op; d.name = "act"; d.inputs = in; d.num_inputs = 1; d.typed = 1;
        luthier_node_attrs_default(d.op, &d.attr);
        d.attr.elu.alpha = bad[k].alpha;
        if (d.op == LUTHIER_OP_SELU) d.attr.selu.gamma = bad[k].second;
        if (d.op == LUTHIER_OP_HARD_SIGMOID) d.attr.hard_sigmoid.beta = bad[k].second;
        CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "act") &&
              strstr(luthier_graph_error(g), bad[k].msg), "case %d (%s) refused: '%s'", k, luthier_op_name(d.op), luthier_graph_error(g));
    }
    CHECK(luthier_graph_num_nodes(g) == 1, "refused nodes left the graph as it was");
    luthier_graph_destroy(g);
}


/* ---- conv_transpose ---------------------------------------------------------------------- */

typedef struct ct_case {
    int64_t n, cin, h, w, cout, kh, kw, sh, sw, pads[4], dh, dw, oph, opw, groups;
    int bias;
    luthier_activation act;
} ct_case;

/* A conv_transpose node with random weights (and bias) on x; -1 when refused. */
static int gb_convt(gb *b, const char *name, int x, const ct_case *c) {
    luthier_node_desc d;
    char wn[96], bn[96];
    int64_t ws[4], bs[1];
    int w, bi = -1;
    ws[0] = c->cin; ws[1] = c->cout / c->groups; ws[2] = c->kh; ws[3] = c->kw;
    bs[0] = c->cout;
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    w = gb_const(b, wn, 4, ws, -0.5f, 0.5f);
    if (c->bias) bi = gb_const(b, bn, 1, bs, -0.5f, 0.5f);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV_TRANSPOSE;
    d.name = name;
    d.typed = 1;
    luthier_node_attrs_default(d.op, &d.attr);
    d.attr.conv_transpose.stride[0] = c->sh; d.attr.conv_transpose.stride[1] = c->sw;
    memcpy(d.attr.conv_transpose.pads, c->pads, sizeof c->pads);
    d.attr.conv_transpose.dilation[0] = c->dh; d.attr.conv_transpose.dilation[1] = c->dw;
    d.attr.conv_transpose.output_padding[0] = c->oph; d.attr.conv_transpose.output_padding[1] = c->opw;
    d.attr.conv_transpose.groups = c->groups;
    d.attr.conv_transpose.act.kind = c->act;
    d.attr.conv_transpose.act.clamp_min = -0.25f;
    d.attr.conv_transpose.act.clamp_max = 0.5f;
    return gb_node(b, &d, x, w, bi);
}

/* Against the scatter reference (the ONNX definition) over strides 1..3, symmetric and
   asymmetric pads, dilation, output_padding, groups (1, 2, one per input channel), kernels 1x1
   to 4x4, batch 2, odd sizes, bias and fused activations, 1 and 2 threads; "after conv": the
   input arrives NHWC from a convolution; the last cases run in several chunks of columns. */
static void test_graph_conv_transpose(void) {
    static const ct_case cases[] = {
        {1, 3, 5, 5, 4, 3, 3, 1, 1, {0, 0, 0, 0}, 1, 1, 0, 0, 1, 0, LUTHIER_ACTIVATION_NONE},
        {2, 4, 5, 7, 6, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_NONE},
        {2, 5, 3, 4, 3, 3, 3, 2, 2, {1, 0, 2, 1}, 1, 1, 1, 1, 1, 1, LUTHIER_ACTIVATION_RELU},
        {1, 4, 4, 3, 6, 3, 2, 3, 3, {0, 1, 1, 0}, 1, 1, 2, 1, 2, 1, LUTHIER_ACTIVATION_NONE},
        {2, 6, 5, 5, 6, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 1, 1, 6, 1, LUTHIER_ACTIVATION_RELU},
        {1, 4, 6, 5, 8, 3, 3, 1, 2, {2, 2, 2, 2}, 2, 2, 0, 1, 4, 0, LUTHIER_ACTIVATION_CLAMP},
        {2, 3, 7, 5, 5, 1, 1, 2, 3, {0, 0, 0, 0}, 1, 1, 1, 2, 1, 1, LUTHIER_ACTIVATION_RELU6},
        {1, 8, 6, 6, 4, 2, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 0, 2, 1, LUTHIER_ACTIVATION_NONE},
        {2, 3, 5, 3, 2, 3, 4, 2, 1, {0, 2, 3, 1}, 2, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE},
        {1, 1, 1, 1, 3, 3, 3, 1, 1, {0, 0, 0, 0}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_NONE},
        {1, 2, 1, 9, 4, 1, 4, 1, 2, {0, 1, 0, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_NONE}, /* 1-D as [N,C,1,L] */
        {1, 20, 9, 11, 40, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_RELU},
        /* depthwise (one channel per group: a direct loop by default): vector tails, strides,
           dilation, asymmetric pads, output_padding, clamps */
        {2, 19, 6, 7, 19, 3, 3, 2, 2, {1, 0, 2, 1}, 1, 1, 1, 0, 19, 1, LUTHIER_ACTIVATION_CLAMP},
        {1, 64, 5, 5, 64, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 64, 0, LUTHIER_ACTIVATION_NONE},
        {1, 33, 4, 6, 33, 3, 2, 3, 1, {0, 1, 1, 0}, 2, 2, 2, 0, 33, 1, LUTHIER_ACTIVATION_RELU6},
        {2, 8, 3, 3, 8, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, 0, 0, 8, 1, LUTHIER_ACTIVATION_RELU},
        /* several chunks of columns (LUTHIER__CONVT_COLS_FLOATS each; 1 MiB: 4 input rows) */
        {2, 8, 40, 64, 64, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_NONE},
        /* chunks of one input row (1 MiB; 8 rows at 8 MiB, one across the two images); dilation, asymmetric pads, relu */
        {2, 4, 20, 64, 256, 4, 4, 2, 2, {2, 1, 0, 3}, 2, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_RELU},
        /* chunks of 2 input rows (1 MiB; one across the images), output rows no input reaches */
        {2, 4, 9, 64, 1024, 1, 2, 3, 1, {0, 0, 0, 0}, 1, 1, 2, 1, 1, 1, LUTHIER_ACTIVATION_CLAMP},
    };
    const int nc = (int)(sizeof cases / sizeof cases[0]), big = nc - 3;
    int k, after, threads;
    for (k = 0; k < nc; k++)
        for (after = 0; after < 2; after++) {
            const ct_case *c = &cases[k];
            gb b;
            int64_t xs[4];
            int x, y;
            float *img;
            const void *ins[1];
            char what[96];
            if (after && k >= big) continue;
            xs[0] = c->n; xs[1] = after ? 3 : c->cin; xs[2] = c->h; xs[3] = c->w;
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
            if (after) x = gb_conv(&b, "pre", x, c->cin, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE);
            y = gb_convt(&b, "ct", x, c);
            luthier_graph_output(b.g, y);
            CHECK(!b.fail, "case %d: build", k);
            img = rand_buf((size_t)(xs[0] * xs[1] * xs[2] * xs[3]), -1, 1);
            ins[0] = img;
            for (threads = 1; threads <= 2 && !b.fail; threads++) {
                luthier_context *ctx = ctx_threads(threads);
                snprintf(what, sizeof what, "conv_transpose case %d%s, %d thread%s", k, after ? " after conv" : "", threads,
                         threads > 1 ? "s" : "");
                plan_vs_ref(ctx, b.g, NULL, ins, 1e-5, what);
                luthier_context_destroy(ctx);
            }
            free(img);
            gb_free(&b);
        }
}

/* The kernel knob: a node configuration's kernel is used (and reported, ISA included), an
   unknown one fails naming the node or falls back; defaults and the union's size. */
static void test_graph_conv_transpose_config(void) {
    static const ct_case c = {1, 4, 5, 6, 8, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_RELU};
    luthier_context *ctx = ctx_threads(2);
    luthier_node_config cfg[1];
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier_step_info si;
    luthier_kernel_info ki;
    luthier_node_attrs a;
    gb b;
    int64_t xs[4] = {1, 4, 5, 6};
    int x, y, k, ki_idx, step;
    float *img = rand_buf(4 * 5 * 6, -1, 1);
    const void *ins[1];
    CHECK(luthier_node_attrs_default(LUTHIER_OP_CONV_TRANSPOSE, &a) == LUTHIER_STATUS_OK && a.conv_transpose.stride[0] == 1 &&
              a.conv_transpose.stride[1] == 1 && a.conv_transpose.dilation[0] == 1 && a.conv_transpose.dilation[1] == 1 &&
              a.conv_transpose.groups == 1 && a.conv_transpose.pads[2] == 0 && a.conv_transpose.output_padding[1] == 0,
          "defaults");
    CHECK(sizeof(luthier_conv_transpose_attrs) <= 16 * sizeof(int64_t) && sizeof(luthier_node_attrs) == 16 * sizeof(int64_t),
          "the attributes fit the union (%zu bytes)", sizeof(luthier_conv_transpose_attrs));
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    y = gb_convt(&b, "up", x, &c);
    luthier_graph_output(b.g, y);
    ins[0] = img;
    memset(&pd, 0, sizeof pd);
    memset(cfg, 0, sizeof cfg);
    pd.configs = cfg;
    pd.num_configs = 1;
    for (k = 0; k < luthier_kernel_count(); k++) {
        char what[160];
        if (luthier_kernel_get(k, &ki) != LUTHIER_STATUS_OK || !ki.available) continue;
        snprintf(cfg[0].kernel, sizeof cfg[0].kernel, "%s", ki.name);
        cfg[0].schedule = (k & 1) ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
        snprintf(what, sizeof what, "conv_transpose on %s", ki.name);
        plan_vs_ref(ctx, b.g, &pd, ins, 1e-5, what);
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", what);
        for (step = 0; p && luthier_plan_step_info(p, step, &si) == LUTHIER_STATUS_OK; step++)
            if (si.op == LUTHIER_OP_CONV_TRANSPOSE) break;
        CHECK(p && si.op == LUTHIER_OP_CONV_TRANSPOSE && si.kernel && strcmp(si.kernel, ki.name) == 0 && strcmp(si.isa, ki.isa) == 0,
              "%s: the step runs %s on %s", what, p && si.kernel ? si.kernel : "?", p ? si.isa : "?");
        luthier_plan_destroy(p);
        p = NULL;
    }
    snprintf(cfg[0].kernel, sizeof cfg[0].kernel, "no_such_kernel");
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_NOT_FOUND && !p && strstr(luthier_context_error(ctx), "up"),
          "unknown kernel: %s", luthier_context_error(ctx));
    pd.fallback_invalid = 1;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "fallback: %s", luthier_context_error(ctx));
    CHECK(luthier_plan_step_info(p, 1, &si) == LUTHIER_STATUS_OK && si.kernel &&
              luthier_kernel_find(si.kernel, &ki_idx) == LUTHIER_STATUS_OK,
          "fallback runs a kernel");
    luthier_plan_destroy(p);
    free(img);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* The algorithm knob of conv_transpose: a depthwise layer runs the direct loop by default
   (no microkernel) and the GEMM + col2im when configured IM2COL, both against the reference;
   DEPTHWISE on a layer with several channels per group fails naming the node (or falls back to
   the GEMM with fallback_invalid); another algorithm is refused alike. */
static void test_graph_conv_transpose_algorithms(void) {
    static const ct_case dw = {2, 24, 7, 6, 24, 3, 3, 2, 2, {1, 1, 0, 1}, 1, 1, 1, 0, 24, 1, LUTHIER_ACTIVATION_RELU};
    static const ct_case dense = {1, 4, 5, 6, 8, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 2, 1, LUTHIER_ACTIVATION_NONE};
    static const luthier_conv_algorithm want[3] = {LUTHIER_CONV_AUTO, LUTHIER_CONV_DEPTHWISE, LUTHIER_CONV_IM2COL};
    luthier_context *ctx = ctx_threads(2);
    int k, which;
    for (which = 0; which < 2; which++) {
        const ct_case *c = which ? &dense : &dw;
        luthier_node_config cfg[1];
        luthier_plan_desc pd;
        luthier_plan *p = NULL;
        luthier_step_info si;
        int64_t xs[4];
        int x, y, step;
        float *img;
        const void *ins[1];
        gb b;
        xs[0] = c->n; xs[1] = c->cin; xs[2] = c->h; xs[3] = c->w;
        img = rand_buf((size_t)(xs[0] * xs[1] * xs[2] * xs[3]), -1, 1);
        ins[0] = img;
        memset(&b, 0, sizeof b);
        luthier_graph_create(&b.g);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
        y = gb_convt(&b, "up", x, c);
        luthier_graph_output(b.g, y);
        memset(&pd, 0, sizeof pd);
        pd.configs = cfg;
        pd.num_configs = 1;
        for (k = 0; k < 3; k++) {
            char what[128];
            const int fails = which && want[k] == LUTHIER_CONV_DEPTHWISE;
            const luthier_conv_algorithm runs = !which && want[k] != LUTHIER_CONV_IM2COL ? LUTHIER_CONV_DEPTHWISE : LUTHIER_CONV_IM2COL;
            memset(cfg, 0, sizeof cfg);
            cfg[0].algorithm = want[k];
            snprintf(what, sizeof what, "%s conv_transpose, algorithm %s", which ? "grouped" : "depthwise",
                     luthier_conv_algorithm_name(want[k]));
            if (fails) {
                CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_UNSUPPORTED && !p &&
                          strstr(luthier_context_error(ctx), "'up'") && strstr(luthier_context_error(ctx), "depthwise"),
                      "%s: %s", what, luthier_context_error(ctx));
                pd.fallback_invalid = 1;
            }
            plan_vs_ref(ctx, b.g, &pd, ins, 1e-5, what);
            CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s: %s", what, luthier_context_error(ctx));
            for (step = 0; p && luthier_plan_step_info(p, step, &si) == LUTHIER_STATUS_OK; step++)
                if (si.op == LUTHIER_OP_CONV_TRANSPOSE) break;
            CHECK(p && si.op == LUTHIER_OP_CONV_TRANSPOSE && si.algorithm == runs && (si.kernel[0] != 0) == (runs == LUTHIER_CONV_IM2COL),
                  "%s: the step runs %s with kernel '%s'", what, p ? luthier_conv_algorithm_name(si.algorithm) : "?", p ? si.kernel : "?");
            luthier_plan_destroy(p);
            p = NULL;
            pd.fallback_invalid = 0;
        }
        cfg[0].algorithm = LUTHIER_CONV_WINOGRAD_4X3;
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_UNSUPPORTED && !p && strstr(luthier_context_error(ctx), "winograd"),
              "winograd: %s", luthier_context_error(ctx));
        free(img);
        gb_free(&b);
    }
    luthier_context_destroy(ctx);
}

/* ---- indexing: gather_elements, gather_nd, scatter_nd, scatter_elements ----------------- */

static int64_t gx_numel(int r, const int64_t *s) {
    int64_t n = 1;
    int k;
    for (k = 0; k < r; k++) n *= s[k];
    return n;
}

typedef struct gx_case {
    luthier_op op;
    int axis, extra;       /* extra: batch_dims (gather_nd) or reduction (scatters) */
    int rx, ri;            /* ranks of data and indices */
    int64_t xs[6], is[6];  /* shapes; updates: the shape the operator wants */
    int unique;            /* scatters without reduction: no index twice */
} gx_case;

/* The node's attributes for c. */
static luthier_node_desc gx_desc(const gx_case *c, const char *name) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    d.op = c->op;
    d.name = name;
    d.typed = 1;
    if (c->op == LUTHIER_OP_GATHER_ELEMENTS) d.attr.gather_elements.axis = c->axis;
    if (c->op == LUTHIER_OP_GATHER_ND) d.attr.gather_nd.batch_dims = c->extra;
    if (c->op == LUTHIER_OP_SCATTER_ND) d.attr.scatter_nd.reduction = c->extra;
    if (c->op == LUTHIER_OP_SCATTER_ELEMENTS) d.attr.scatter_elements.axis = c->axis, d.attr.scatter_elements.reduction = c->extra;
    return d;
}

/* Random indices for c (negative ones included); unique: no two address the same element or slice. */
static int64_t *gx_indices(const gx_case *c, size_t *count) {
    const int elems = c->op == LUTHIER_OP_GATHER_ELEMENTS || c->op == LUTHIER_OP_SCATTER_ELEMENTS;
    const int b = c->op == LUTHIER_OP_GATHER_ND ? c->extra : 0, ax = c->axis < 0 ? c->axis + c->rx : c->axis;
    const size_t n = (size_t)gx_numel(c->ri, c->is), m = elems ? 1 : (size_t)c->is[c->ri - 1];
    int64_t *v = (int64_t *)malloc(n * sizeof(int64_t) + 8), co[6];
    size_t e, k;
    for (e = 0; e < n; e++) {
        const int64_t len = elems ? c->xs[ax] : c->xs[b + (int)(e % m)];
        v[e] = (int64_t)(test_rand_u64() % (uint64_t)(2 * len)) - len;
    }
    if (c->unique && elems) { /* per fiber along the axis: a rotation of 0..len-1 */
        for (e = 0; e < n; e++) {
            size_t fiber = 0;
            int64_t len = c->xs[ax], t;
            ref_coords(e, c->is, c->ri, co);
            for (k = 0; k < (size_t)c->ri; k++) fiber = fiber * 131 + (k == (size_t)ax ? 0 : (size_t)co[k]);
            t = (co[ax] + (int64_t)(fiber * 2654435761u % (size_t)len)) % len;
            v[e] = (e * 7) % 3 == 0 ? t - len : t;
        }
    } else if (c->unique) { /* tuple t addresses position perm[t] of data.shape[:m] */
        const size_t tuples = n / m, total = (size_t)gx_numel((int)m, c->xs);
        size_t *perm = (size_t *)malloc(total * sizeof(size_t));
        for (e = 0; e < total; e++) perm[e] = e;
        for (e = total; e > 1; e--) {
            size_t j = (size_t)(test_rand_u64() % e), tmp = perm[e - 1];
            perm[e - 1] = perm[j], perm[j] = tmp;
        }
        for (e = 0; e < tuples; e++) {
            ref_coords(perm[e], c->xs, (int)m, co);
            for (k = 0; k < m; k++) v[e * m + k] = (e + k) % 3 == 1 ? co[k] - c->xs[k] : co[k];
        }
        free(perm);
    }
    *count = n;
    return v;
}

/* The shape of c's updates into us; returns its rank. */
static int gx_updates_shape(const gx_case *c, int64_t *us) {
    int k, r = 0;
    if (c->op == LUTHIER_OP_SCATTER_ELEMENTS) {
        memcpy(us, c->is, sizeof(int64_t) * (size_t)c->ri);
        return c->ri;
    }
    for (k = 0; k < c->ri - 1; k++) us[r++] = c->is[k];
    for (k = (int)c->is[c->ri - 1]; k < c->rx; k++) us[r++] = c->xs[k];
    if (r == 0) us[r++] = 1;
    return r;
}

/* c as one node, indices constant (const_idx) or fed, against the reference at 1 and 2 threads. */
static void gx_run(const gx_case *c, int const_idx, const char *what) {
    const int scat = c->op == LUTHIER_OP_SCATTER_ND || c->op == LUTHIER_OP_SCATTER_ELEMENTS;
    gb b;
    luthier_node_desc d = gx_desc(c, what);
    int64_t us[6];
    int x, it, u = -1, ur = scat ? gx_updates_shape(c, us) : 0, threads, y;
    size_t ni;
    int64_t *idx = gx_indices(c, &ni);
    float *xd = rand_buf((size_t)gx_numel(c->rx, c->xs), -2, 2), *ud = scat ? rand_buf((size_t)gx_numel(ur, us), -2, 2) : NULL;
    const void *ins[3];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "data", LUTHIER_DTYPE_F32, c->rx, c->xs, &x);
    if (const_idx) CHECK(luthier_graph_constant_i64(b.g, "idx", c->ri, c->is, idx, &it) == LUTHIER_STATUS_OK, "%s: indices", what);
    else luthier_graph_input(b.g, "idx", LUTHIER_DTYPE_I64, c->ri, c->is, &it);
    if (scat) luthier_graph_input(b.g, "upd", LUTHIER_DTYPE_F32, ur, us, &u);
    y = gb_node(&b, &d, x, it, u);
    CHECK(!b.fail, "%s: build", what);
    if (!b.fail) {
        int k = 0;
        luthier_graph_output(b.g, y);
        ins[k++] = xd;
        if (!const_idx) ins[k++] = idx;
        ins[k++] = ud;
        for (threads = 1; threads <= 2; threads++) {
            luthier_context *ctx = ctx_threads(threads);
            char w2[128];
            snprintf(w2, sizeof w2, "%s (%s indices, %d threads)", what, const_idx ? "constant" : "fed", threads);
            plan_vs_ref(ctx, b.g, NULL, ins, 1e-6, w2);
            luthier_context_destroy(ctx);
        }
    }
    gb_free(&b);
    free(idx);
    free(xd);
    free(ud);
}

static void test_graph_index_ops(void) {
    static const gx_case cases[] = {
        {LUTHIER_OP_GATHER_ELEMENTS, 0, 0, 1, 1, {7}, {5}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, -1, 0, 1, 1, {3}, {9}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 1, 0, 2, 2, {3, 4}, {3, 6}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 0, 0, 2, 2, {3, 4}, {5, 4}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, -2, 0, 2, 2, {3, 4}, {2, 3}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 1, 0, 3, 3, {2, 3, 4}, {2, 2, 4}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 5, 0, 6, 6, {2, 1, 3, 1, 2, 3}, {2, 1, 3, 1, 2, 5}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 2, 0, 6, 6, {2, 1, 3, 1, 2, 3}, {1, 1, 4, 1, 2, 2}, 0},
        {LUTHIER_OP_GATHER_ELEMENTS, 0, 0, 2, 2, {64, 300}, {64, 300}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 3, 2, {2, 3, 4}, {5, 1}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 3, 2, {2, 3, 4}, {5, 2}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 3, 2, {2, 3, 4}, {4, 3}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 3, 1, {2, 3, 4}, {3}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 1, 3, 3, {2, 3, 4}, {2, 5, 1}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 1, 3, 2, {2, 3, 4}, {2, 2}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 2, 4, 4, {2, 3, 4, 5}, {2, 3, 2, 1}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 2, 2, {200, 100}, {300, 1}, 0},
        {LUTHIER_OP_GATHER_ND, 0, 0, 1, 3, {6}, {2, 3, 1}, 0},
        {LUTHIER_OP_SCATTER_ND, 0, 0, 3, 2, {4, 5, 3}, {3, 1}, 1},
        {LUTHIER_OP_SCATTER_ND, 0, 0, 3, 2, {4, 5, 3}, {7, 2}, 1},
        {LUTHIER_OP_SCATTER_ND, 0, 0, 3, 2, {2, 3, 4}, {5, 3}, 1},
        {LUTHIER_OP_SCATTER_ND, 0, 0, 1, 1, {6}, {1}, 1},
        {LUTHIER_OP_SCATTER_ND, 0, 0, 3, 3, {4, 5, 3}, {2, 2, 1}, 1},
        {LUTHIER_OP_SCATTER_ELEMENTS, 0, 0, 2, 2, {4, 5}, {3, 5}, 1},
        {LUTHIER_OP_SCATTER_ELEMENTS, -1, 0, 2, 2, {4, 5}, {2, 4}, 1},
        {LUTHIER_OP_SCATTER_ELEMENTS, 1, 0, 3, 3, {2, 6, 3}, {2, 5, 2}, 1},
        {LUTHIER_OP_SCATTER_ELEMENTS, 0, 0, 1, 1, {8}, {8}, 1},
    };
    int k, red, ci;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        const int scat = cases[k].op == LUTHIER_OP_SCATTER_ND || cases[k].op == LUTHIER_OP_SCATTER_ELEMENTS;
        for (red = 0; red < (scat ? (int)LUTHIER_SCATTER_REDUCTION_COUNT : 1); red++)
            for (ci = 0; ci < 2; ci++) {
                gx_case c = cases[k];
                char what[96];
                if (scat) c.extra = red, c.unique = red == LUTHIER_SCATTER_NONE; /* with a reduction: duplicates */
                if (scat && red && c.op == LUTHIER_OP_SCATTER_ND && c.ri > 1) c.is[0] *= 2;
                if (scat && red && c.op == LUTHIER_OP_SCATTER_ELEMENTS) c.is[c.axis < 0 ? c.axis + c.ri : c.axis] += 3;
                snprintf(what, sizeof what, "%s case %d reduction %d", luthier_op_name(c.op), k, red);
                gx_run(&c, ci, what);
            }
    }
}

/* ONNX's own examples, and the refusals: bad attributes and shapes, constant indices out of range
   when the node is added, fed ones when the plan runs (naming the node, writing nothing). */
static void test_graph_index_edges(void) {
    static const float data[4] = {1, 2, 3, 4}, upd[3] = {10, NAN, -5};
    static const int64_t s22[2] = {2, 2}, s4[1] = {4}, s31[2] = {3, 1}, s3[1] = {3}, ge_idx[4] = {0, 0, 1, 0};
    static const int64_t nd_idx[3] = {1, -3, 1}, bad_idx[4] = {0, 0, 2, 0};
    gb b;
    luthier_node_desc d;
    luthier_context *ctx = ctx_threads(2);
    luthier_plan *p = NULL;
    int x, x4, it, itc, u, o, in[3];
    float out[4];
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 2, s22, &x);
    luthier_graph_input(b.g, "i", LUTHIER_DTYPE_I64, 2, s22, &it);
    luthier_graph_constant_i64(b.g, "nd", 2, s31, nd_idx, &itc);
    luthier_graph_input(b.g, "u", LUTHIER_DTYPE_F32, 1, s3, &u);
    luthier_graph_input(b.g, "x4", LUTHIER_DTYPE_F32, 1, s4, &x4);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_GATHER_ELEMENTS; d.name = "ge"; d.typed = 1; d.attr.gather_elements.axis = 1;
    luthier_graph_output(b.g, gb_node(&b, &d, x, it, -1)); /* [[1,2],[3,4]] along 1 by [[0,0],[1,0]]: [[1,1],[4,3]] */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_SCATTER_ND; d.name = "snd"; d.typed = 1; d.attr.scatter_nd.reduction = LUTHIER_SCATTER_MAX;
    luthier_graph_output(b.g, gb_node(&b, &d, x4, itc, u)); /* max at 1, 1 (NaN), 1: NaN; -5 vs 4 ... */
    CHECK(!b.fail, "build");
    if (!b.fail && ctx && luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK) {
        float o2[4], *both[2];
        both[0] = out, both[1] = o2;
        {
            const void *all[4];
            all[0] = data, all[1] = ge_idx, all[2] = upd, all[3] = data;
            CHECK(luthier_plan_run(ctx, p, all, (void *const *)both) == LUTHIER_STATUS_OK, "run: %s", luthier_context_error(ctx));
            CHECK(out[0] == 1 && out[1] == 1 && out[2] == 4 && out[3] == 3, "gather_elements example: %g %g %g %g", out[0], out[1], out[2], out[3]);
            CHECK(o2[0] == 1 && isnan(o2[1]) && o2[2] == 3 && o2[3] == 4, "scatter_nd max: %g %g %g %g", o2[0], o2[1], o2[2], o2[3]);
            out[0] = out[1] = out[2] = out[3] = -7;
            all[1] = bad_idx; /* 2 is out of [-2, 2) */
            CHECK(luthier_plan_run(ctx, p, all, (void *const *)both) == LUTHIER_STATUS_INVALID_ARGUMENT &&
                      strstr(luthier_context_error(ctx), "'ge'") && strstr(luthier_context_error(ctx), "out of range"),
                  "fed index out of range: %s", luthier_context_error(ctx));
            CHECK(out[0] == -7 && out[3] == -7, "a failed run wrote its output");
        }
        luthier_plan_destroy(p);
    }
    /* refusals when the node is added, each naming it */
    in[0] = x, in[1] = it, in[2] = u;
    memset(&d, 0, sizeof d);
    d.name = "bad"; d.typed = 1; d.inputs = in; d.num_inputs = 2;
    d.op = LUTHIER_OP_GATHER_ELEMENTS; d.attr.gather_elements.axis = 2;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "'bad'"), "axis 2: %s", luthier_graph_error(b.g));
    d.attr.gather_elements.axis = 0; in[1] = x;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "i64"), "f32 indices: %s", luthier_graph_error(b.g));
    in[1] = itc; d.attr.gather_elements.axis = 1;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "above"),
          "indices [3,1] off the axis above data [2,2]: %s", luthier_graph_error(b.g));
    d.op = LUTHIER_OP_GATHER_ND; d.attr.gather_nd.batch_dims = 0;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "out of range"),
          "constant index -3 of an axis of 2: %s", luthier_graph_error(b.g));
    in[0] = x; d.attr.gather_nd.batch_dims = 2;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "batch_dims 2 of rank-2 indices");
    {
        static const int64_t far[2] = {0, 5}, s12[2] = {1, 2};
        int tf;
        luthier_graph_constant_i64(b.g, "far", 2, s12, far, &tf);
        d.attr.gather_nd.batch_dims = 0; in[1] = tf;
        CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "'bad'") &&
                  strstr(luthier_graph_error(b.g), "out of range"), "constant index 5 of 2: %s", luthier_graph_error(b.g));
    }
    d.op = LUTHIER_OP_SCATTER_ND; d.num_inputs = 3; in[0] = x4; in[1] = itc; in[2] = x;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(b.g), "updates"), "updates shape: %s", luthier_graph_error(b.g));
    in[2] = u; d.attr.scatter_nd.reduction = 5;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "reduction 5");
    d.op = LUTHIER_OP_SCATTER_ELEMENTS; d.attr.scatter_elements.reduction = 0; in[0] = x; in[1] = it; in[2] = u;
    CHECK(luthier_graph_add_node(b.g, &d, &o) == LUTHIER_STATUS_INVALID_ARGUMENT, "scatter_elements updates of another shape");
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* Refusals name the node and leave the graph as it was. */
static void test_graph_conv_transpose_refusals(void) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {4, 2, 3, 3}, w2[4] = {3, 2, 3, 3}, bs[1] = {3}, x3[3] = {1, 4, 5};
    float vals[256] = {0};
    int x, xi, w, wb, wv, bias, in[3], y, k;
    static const char *const msg[] = {"groups", "groups", "bias", "stride", "dilation", "pad", "output_padding", "output height",
                                      "activation", "constant", "rank", "rank", "2^40"};
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    luthier_graph_input(g, "x3", LUTHIER_DTYPE_F32, 3, x3, &xi);
    luthier_graph_input(g, "wv", LUTHIER_DTYPE_F32, 4, ws, &wv);
    luthier_graph_constant(g, "w", 4, ws, vals, 0, &w);
    luthier_graph_constant(g, "w2", 4, w2, vals, 0, &wb);
    luthier_graph_constant(g, "b", 1, bs, vals, 0, &bias);
    for (k = 0; k < (int)(sizeof msg / sizeof msg[0]); k++) {
        luthier_conv_transpose_attrs *a = &d.attr.conv_transpose;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_CONV_TRANSPOSE; d.name = "up"; d.inputs = in; d.num_inputs = 2; d.typed = 1;
        luthier_node_attrs_default(d.op, &d.attr);
        in[0] = x; in[1] = w; in[2] = bias;
        switch (k) {
        case 0: a->groups = 3; break;                     /* does not divide 4 */
        case 1: in[1] = wb; break;                        /* 3 weight rows for 4 channels */
        case 2: d.num_inputs = 3; break;                  /* 3 values for 2 outputs */
        case 3: a->stride[1] = 0; break;
        case 4: a->dilation[0] = -1; break;
        case 5: a->pads[3] = -1; break;
        case 6: a->output_padding[0] = -2; break;
        case 7: a->pads[0] = a->pads[2] = 4; break;       /* 4*1 - 8 + 2 + 1 < 1 */
        case 8: a->act.kind = LUTHIER_ACTIVATION_CLAMP; a->act.clamp_min = 1; a->act.clamp_max = 0; break;
        case 9: in[1] = wv; break;
        case 10: in[0] = xi; break;
        case 11: in[1] = bias; break;
        default: break;
        }
        if (k == 12) { /* an output height above 2^40: (2^20 - 1) * 2^30 */
            int64_t big[4] = {1, 4, (int64_t)1 << 20, 1};
            int xb;
            luthier_graph_input(g, "xbig", LUTHIER_DTYPE_F32, 4, big, &xb);
            in[0] = xb;
            a->stride[0] = (int64_t)1 << 30;
        }
        CHECK(luthier_graph_add_node(g, &d, &y) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(luthier_graph_error(g), "up") &&
                  strstr(luthier_graph_error(g), msg[k]),
              "case %d refused: '%s'", k, luthier_graph_error(g));
    }
    CHECK(luthier_graph_num_nodes(g) == 0, "refused nodes left the graph as it was");
    luthier_graph_destroy(g);
}

/* ---- recurrent layers: lstm, gru, rnn ----------------------------------------------------- */

typedef struct rnn_case {
    luthier_op op;
    int dir, layout, has_b, has_h0, has_c0, has_p, has_lens, h0_const;
    int64_t seq, batch, input, hidden;
    luthier_rnn_attrs a;
} rnn_case;

/* x -> one recurrent node; every output is a graph output. Returns the number of graph inputs
   (x, then initial_h / initial_c when they are inputs) or -1. */
static int rnn_build(gb *b, const rnn_case *rc) {
    const int64_t G = rc->op == LUTHIER_OP_LSTM ? 4 : rc->op == LUTHIER_OP_GRU ? 3 : 1, H = rc->hidden;
    const int64_t D = rc->a.direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
    int64_t xs[3], ws[3], rs[3], bs[2], ps[2], hs[3], ls[1];
    int in[8], outs[3], k, nin = 3, ninputs = 1;
    luthier_node_desc d;
    int64_t *lens = NULL;
    xs[0] = rc->layout ? rc->batch : rc->seq, xs[1] = rc->layout ? rc->seq : rc->batch, xs[2] = rc->input;
    ws[0] = rs[0] = bs[0] = ps[0] = D, ws[1] = rs[1] = G * H, ws[2] = rc->input, rs[2] = H, bs[1] = 2 * G * H, ps[1] = 3 * H;
    hs[0] = rc->layout ? rc->batch : D, hs[1] = rc->layout ? D : rc->batch, hs[2] = H, ls[0] = rc->batch;
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "x", LUTHIER_DTYPE_F32, 3, xs, &in[0]);
    in[1] = gb_const(b, "W", 3, ws, -0.6f, 0.6f);
    in[2] = gb_const(b, "R", 3, rs, -0.6f, 0.6f);
    for (k = 3; k < 8; k++) in[k] = -1;
    if (rc->has_b) in[3] = gb_const(b, "B", 2, bs, -0.5f, 0.5f), nin = 4;
    if (rc->has_lens) {
        lens = (int64_t *)malloc(sizeof(int64_t) * (size_t)rc->batch);
        for (k = 0; k < rc->batch; k++) lens[k] = k == 1 ? rc->seq : 1 + (k * 5 + rc->hidden) % rc->seq; /* ragged */
        luthier_graph_constant_i64(b->g, "lens", 1, ls, lens, &in[4]);
        b->blobs[b->nblobs++] = (float *)(void *)lens;
        nin = 5;
    }
    if (rc->has_h0) {
        if (rc->h0_const) in[5] = gb_const(b, "h0", 3, hs, -1.0f, 1.0f);
        else luthier_graph_input(b->g, "h0", LUTHIER_DTYPE_F32, 3, hs, &in[5]), ninputs++;
        nin = 6;
    }
    if (rc->has_c0) {
        if (rc->h0_const) in[6] = gb_const(b, "c0", 3, hs, -1.0f, 1.0f);
        else luthier_graph_input(b->g, "c0", LUTHIER_DTYPE_F32, 3, hs, &in[6]), ninputs++;
        nin = 7;
    }
    if (rc->has_p) in[7] = gb_const(b, "P", 2, ps, -0.5f, 0.5f), nin = 8;
    memset(&d, 0, sizeof d);
    d.op = rc->op;
    d.name = "rnn";
    d.inputs = in;
    d.num_inputs = nin;
    d.typed = 1;
    if (rc->op == LUTHIER_OP_LSTM) d.attr.lstm = rc->a;
    else if (rc->op == LUTHIER_OP_GRU) d.attr.gru = rc->a;
    else d.attr.rnn = rc->a;
    if (b->fail || luthier_graph_add_node(b->g, &d, outs) != LUTHIER_STATUS_OK) {
        printf("    rnn_build: %s\n", luthier_graph_error(b->g));
        return -1;
    }
    for (k = 0; k < (rc->op == LUTHIER_OP_LSTM ? 3 : 2); k++) luthier_graph_output(b->g, outs[k]);
    return ninputs;
}

/* One case against the reference at 1 and 2 threads. */
static void rnn_check(const rnn_case *rc, const char *what) {
    gb b;
    float *bufs[3] = {NULL, NULL, NULL};
    const void *ins[3];
    int threads, k, ninputs;
    memset(&b, 0, sizeof b);
    ninputs = rnn_build(&b, rc);
    CHECK(ninputs > 0, "%s: the graph builds", what);
    for (k = 0; k < ninputs && ninputs > 0; k++) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(b.g, luthier_graph_input_tensor(b.g, k), &ti);
        bufs[k] = rand_buf((size_t)(ti.shape[0] * ti.shape[1] * ti.shape[2]), -1.5f, 1.5f);
        ins[k] = bufs[k];
    }
    if (ninputs > 0) { /* the plan keeps the packed weights only, and describes the absent inputs */
        luthier_context *ctx = ctx_threads(1);
        luthier_plan *p = NULL;
        luthier_plan_info pi;
        char text[4096];
        const int64_t G = rc->op == LUTHIER_OP_LSTM ? 4 : rc->op == LUTHIER_OP_GRU ? 3 : 1, H = rc->hidden;
        const double D = rc->a.direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
        /* W and R packed in panels of about 64 columns (x86; other kernels pad a little
           differently: 10 %), the biases, Rb_h, P; a raw copy of W and R would double it */
#define PAD64(n) (((n) + 63) / 64 * 64)
        const int64_t rcols = rc->op == LUTHIER_OP_GRU && !rc->a.linear_before_reset ? PAD64(2 * H) + PAD64(H) : PAD64(G * H);
        const double bound = 4.0 * D * (double)(PAD64(G * H) * rc->input + rcols * H + G * H + 4 * H);
#undef PAD64
        CHECK(luthier_plan_create(ctx, b.g, NULL, &p) == LUTHIER_STATUS_OK, "%s: plan: %s", what, luthier_context_error(ctx));
        memset(&pi, 0, sizeof pi);
        luthier_plan_get_info(p, &pi);
        CHECK((double)pi.weights_bytes <= 1.1 * bound, "%s: weights %zu bytes, the packed W and R and the vectors %.0f", what, pi.weights_bytes, bound);
        CHECK(p && luthier_plan_describe(p, text, sizeof text) > 0 && strstr(text, luthier_op_name(rc->op)), "%s: describe", what);
        luthier_plan_destroy(p);
        luthier_context_destroy(ctx);
    }
    for (threads = 1; threads <= 2 && ninputs > 0; threads++) {
        luthier_context *ctx = ctx_threads(threads);
        char w[200];
        snprintf(w, sizeof w, "%s, %d thread%s", what, threads, threads > 1 ? "s" : "");
        plan_vs_ref(ctx, b.g, NULL, ins, 2e-5, w);
        luthier_context_destroy(ctx);
    }
    for (k = 0; k < 3; k++) free(bufs[k]);
    gb_free(&b);
}

/* lstm, gru and rnn against the equations of the ONNX document: every direction and layout,
   batch 1 and 3, seq 1 and 7, with and without B, initial states (graph inputs or constants),
   peepholes, sequence_lens, clip, GRU linear_before_reset and LSTM input_forget; odd hidden
   sizes (vector tails) and one batch large enough to split the gate math over threads. */
static void test_graph_rnn(void) {
    static const luthier_op ops[3] = {LUTHIER_OP_LSTM, LUTHIER_OP_GRU, LUTHIER_OP_RNN};
    int o, dir, layout, bi, si, c = 0;
    for (o = 0; o < 3; o++)
        for (dir = 0; dir < 3; dir++)
            for (layout = 0; layout < 2; layout++)
                for (bi = 0; bi < 2; bi++)
                    for (si = 0; si < 2; si++, c++) {
                        rnn_case rc;
                        char what[160];
                        const unsigned f = (unsigned)(test_rand_u64() >> 20);
                        memset(&rc, 0, sizeof rc);
                        rc.op = ops[o];
                        rc.a.direction = dir;
                        rc.a.layout = rc.layout = layout;
                        rc.batch = bi ? 3 : 1, rc.seq = si ? 7 : 1;
                        rc.input = c % 2 ? 4 : 7, rc.hidden = c % 3 == 0 ? 5 : c % 3 == 1 ? 8 : 19;
                        rc.a.hidden_size = rc.hidden;
                        rc.has_b = f & 1, rc.has_h0 = (f >> 1) & 1, rc.has_lens = (f >> 2) & 1, rc.h0_const = (f >> 3) & 1;
                        rc.has_c0 = rc.op == LUTHIER_OP_LSTM && ((f >> 4) & 1), rc.has_p = rc.op == LUTHIER_OP_LSTM && ((f >> 5) & 1);
                        if ((f >> 6) % 3 == 0) rc.a.has_clip = 1, rc.a.clip = 0.7f;
                        if (rc.op == LUTHIER_OP_GRU) rc.a.linear_before_reset = c & 1;
                        if (rc.op == LUTHIER_OP_LSTM) rc.a.input_forget = ((f >> 8) & 3) == 0;
                        snprintf(what, sizeof what, "%s dir %d layout %d batch %lld seq %lld hidden %lld B%d h0%d c0%d P%d lens%d clip%d lbr%d if%d",
                                 luthier_op_name(rc.op), dir, layout, (long long)rc.batch, (long long)rc.seq, (long long)rc.hidden,
                                 rc.has_b, rc.has_h0, rc.has_c0, rc.has_p, rc.has_lens, rc.a.has_clip, rc.a.linear_before_reset,
                                 rc.a.input_forget);
                        rnn_check(&rc, what);
                    }
    for (o = 0; o < 3; o++) { /* 64 x 128 states: the gate math splits over the threads */
        rnn_case rc;
        memset(&rc, 0, sizeof rc);
        rc.op = ops[o];
        rc.a.direction = LUTHIER_RNN_BIDIRECTIONAL;
        rc.batch = 64, rc.seq = 2, rc.input = 8, rc.hidden = rc.a.hidden_size = 128;
        rc.has_b = rc.has_h0 = 1, rc.has_c0 = rc.has_p = rc.op == LUTHIER_OP_LSTM;
        rc.a.linear_before_reset = rc.op == LUTHIER_OP_GRU;
        rnn_check(&rc, luthier_op_name(rc.op));
    }
}

/* Hostile recurrent nodes: each refusal names the node and what is wrong. */
static void test_graph_rnn_refusals(void) {
    static const struct { int what; const char *msg; } cases[] = {
        {0, "hidden_size"}, {1, "direction"}, {2, "layout"}, {3, "clip"}, {4, "linear_before_reset"}, {5, "input_forget"},
        {6, "'W'"}, {7, "constant"}, {8, "sequence_lens"}, {9, "initial_h"}, {10, "num_outputs"}, {11, "not optional"},
        {12, "'B'"}, {13, "'P'"}, {14, "input 'x'"},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int what = cases[k].what;
        gb b;
        luthier_node_desc d;
        int64_t xs[3] = {4, 2, 3}, ws[3] = {1, 12, 3}, rs[3] = {1, 12, 3}, bs[2] = {1, 24}, hs[3] = {1, 2, 3}, ls[1] = {2}, x2[2] = {4, 3};
        int64_t lens[2] = {4, 5}, ps[2] = {1, 9}; /* 5: past the sequence's 4 steps */
        int in[8], outs[3] = {-1, -1, -1}, nin = 3;
        luthier_status s;
        memset(&b, 0, sizeof b);
        luthier_graph_create(&b.g);
        luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, what == 14 ? 2 : 3, what == 14 ? x2 : xs, &in[0]);
        if (what == 6) ws[2] = 4;
        if (what == 7) luthier_graph_input(b.g, "W", LUTHIER_DTYPE_F32, 3, ws, &in[1]);
        else in[1] = gb_const(&b, "W", 3, ws, -1, 1);
        in[2] = gb_const(&b, "R", 3, rs, -1, 1);
        in[3] = in[4] = in[5] = in[6] = in[7] = -1;
        if (what == 12) bs[1] = 12, in[3] = gb_const(&b, "B", 2, bs, -1, 1), nin = 4;
        if (what == 8) luthier_graph_constant_i64(b.g, "lens", 1, ls, lens, &in[4]), nin = 5;
        if (what == 9) hs[0] = 2, in[5] = gb_const(&b, "h0", 3, hs, -1, 1), nin = 6;
        if (what == 13) ps[1] = 8, in[7] = gb_const(&b, "P", 2, ps, -1, 1), nin = 8;
        if (what == 11) in[2] = -1;
        memset(&d, 0, sizeof d);
        d.op = LUTHIER_OP_LSTM;
        d.name = "lstm_bad";
        d.inputs = in;
        d.num_inputs = nin;
        d.typed = 1;
        d.attr.lstm.hidden_size = what == 0 ? 0 : 3;
        if (what == 1) d.attr.lstm.direction = 3;
        if (what == 2) d.attr.lstm.layout = 2;
        if (what == 3) d.attr.lstm.has_clip = 1, d.attr.lstm.clip = -1.0f;
        if (what == 4) d.attr.lstm.linear_before_reset = 1;
        if (what == 5) d.attr.lstm.input_forget = 2;
        if (what == 10) d.num_outputs = 2;
        s = luthier_graph_add_node(b.g, &d, outs);
        CHECK(s != LUTHIER_STATUS_OK && strstr(luthier_graph_error(b.g), "lstm_bad") &&
                  strstr(luthier_graph_error(b.g), cases[k].msg),
              "case %d: %s: %s", what, luthier_status_string(s), luthier_graph_error(b.g));
        CHECK(luthier_graph_num_nodes(b.g) == 0, "case %d: the graph is unchanged", what);
        gb_free(&b);
    }
}

static void run_graph_tests(void) {
    RUN(test_graph_conv_transpose);
    RUN(test_graph_conv_transpose_config);
    RUN(test_graph_conv_transpose_algorithms);
    RUN(test_graph_conv_transpose_refusals);
    RUN(test_graph_rnn);
    RUN(test_graph_rnn_refusals);
    RUN(test_graph_index_ops);
    RUN(test_graph_index_edges);
    RUN(test_graph_reduce);
    RUN(test_graph_dm_onnx_examples);
    RUN(test_graph_dm_nhwc);
    RUN(test_graph_depth_space_pad);
    RUN(test_graph_dm_refusals);
    RUN(test_graph_resize);
    RUN(test_graph_activations);
    RUN(test_graph_activation_attrs);
    RUN(test_graph_unary2);
    RUN(test_graph_prelu_refusals);
    RUN(test_graph_logic);
    RUN(test_graph_logic_i64);
    RUN(test_graph_logic_nhwc);
    RUN(test_graph_logic_refusals);
    RUN(test_graph_prelu_nhwc);
    RUN(test_graph_typed_attrs);
    RUN(test_graph_typed_older_ops);
    RUN(test_graph_int8_nonfinite_weights);
    RUN(test_graph_records_fallback_note);
    RUN(test_graph_plan_describe);
    RUN(test_op_registry);
    RUN(test_graph_many_nodes);
    RUN(test_graph_size_limits);
    RUN(test_graph_bad_input);
    RUN(test_graph_attribute_overflow);
    RUN(test_graph_mini_resnet);
    RUN(test_graph_plan_info);
    RUN(test_graph_step_bytes);
    RUN(test_graph_external_arena);
    RUN(test_graph_output_buffers);
    RUN(test_graph_configs);
    RUN(test_graph_layouts);
    RUN(test_graph_transformer);
    RUN(test_graph_misc_ops);
    RUN(test_graph_matmul_kernel_config);
}
