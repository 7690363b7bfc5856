/* luthier_gbt.h - the tuner's machine-learning core: gradient-boosted regression trees and a
   model-guided search over an abstract candidate set.
   Part of luthier (MIT license, see luthier.h). Include luthier.h, never this file on its own:
   luthier.h pulls it into the implementation (before luthier_tune.h). Nothing here is public
   API: every symbol is LUTHIER_PRIVATE with the luthier__gbt_ / luthier__search_ prefixes.

   GRADIENT-BOOSTED TREES (XGBoost-style, second order)
   - Each tree fits the gradients g and hessians h of the loss at the current predictions:
     split gain 1/2 [GL^2/(HL+lambda) + GR^2/(HR+lambda) - G^2/(H+lambda)] - gamma, leaf weight
     -G/(H+lambda) times the learning rate (shrinkage); children need H >= min_child_weight.
   - Splits are found on histograms: each feature is cut at up to num_bins-1 quantile points
     (midpoints between distinct training values; every distinct value gets its own bin when
     there are few). A node builds the histogram of its smaller child and subtracts it from its
     own for the other (depth-first, one histogram buffer per depth).
   - Trees are stored as flat node arrays with the raw float threshold (x <= threshold goes
     left, NaN goes right), so prediction does not need the cut points; the cut points of the
     last fit are kept (and saved) for inspection. fit_more recomputes them from its own data:
     continuing on data of another range (transfer to another layer) keeps full resolution.
   - Losses: LUTHIER__GBT_SQUARED (base score = mean of y; g = pred - y, h = 1) and
     LUTHIER__GBT_PAIRWISE (RankNet / pairwise logistic over pairs of one group with different
     y, base 0: predictions are scores ordered like y, not values of y). Pairs: all of them
     while a group has at most 65536, otherwise a fixed number of random partners per sample.
   - Deterministic: one splitmix64 state (seeded from params.seed, carried in the model and
     saved with it) drives row and column sampling and pair sampling; all sums run in a
     fixed order. Same data + params = the same model bit for bit.
   - Bad input (NULL, zero rows, non-finite features or targets, bad params) returns a status;
     luthier__gbt_predict returns NaN for a NULL model or row.

   SERIALIZATION: text, one item per line, floats as %.9g (exact for binary32):
       luthier-gbt 1
       features F
       params trees T depth D lr .. lambda .. gamma .. min_child_weight .. bins B loss L
              subsample .. colsample .. seed S          (one line)
       base B
       rng R
       cuts            then F lines: count c1 c2 ...
       trees N         then per tree: "tree K" and K lines "feature left value"
                       (feature -1 = leaf; children at left and left+1, left > own index)
       end
   The loader checks every count, index and value (finite, in range, cuts increasing, trees
   acyclic) and refuses other versions, truncated or malformed text with a message.

   MODEL-GUIDED SEARCH (luthier__search): measure a diverse first batch (farthest-point
   sampling on range-normalized features, or the warm model's top picks), fit a model of
   log(seconds) (squared or pairwise), rank all unmeasured candidates, measure the predicted
   best of each batch plus a random exploration share, refit, repeat. Stops on the measurement
   or wall-clock budget, when every candidate is measured, or after `patience` rounds without
   improving the best by more than 0.5 %. A candidate is never measured twice; failed ones
   (negative, zero or NaN seconds) enter the model as twice the slowest time and are never
   best. With a warm model, every round continues that model with new trees (fit_more) on the
   measurements so far, in the warm model's own loss.
   BALANCE (optional: num_clusters, shares, group): when a measurement also reports how long
   each cluster was busy with its share, the search learns that (algorithm, kernel)'s cost per
   unit share on every cluster and predicts all the group's other shares (the largest
   share x cost, plus the overhead seen). Each batch then goes first to the shares predicted
   to beat the best so far, then to the model's picks of not yet measured groups (one per
   group, all clusters used, so one measurement tells every cluster's cost), so the model's
   job shrinks from (algorithm x kernel x split) to (algorithm x kernel). Smaller batches
   (8, then 4) follow the predictions sooner. The returned model is fitted with the balance
   predictions of the unmeasured shares too, so it knows every split of what was measured
   when it warm-starts another search.

   TABLE OF CONTENTS: >>gbt-types >>gbt-util >>gbt-cuts >>gbt-grow >>gbt-fit >>gbt-predict
   >>gbt-save >>gbt-load >>search
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_gbt.h is part of luthier: include luthier.h instead"
#endif

#if defined(LUTHIER_IMPLEMENTATION) && !defined(LUTHIER__GBT_IMPL_DONE)
#define LUTHIER__GBT_IMPL_DONE

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* >>gbt-types */

enum { LUTHIER__GBT_SQUARED = 0, LUTHIER__GBT_PAIRWISE = 1 };

#define LUTHIER__GBT_MAX_BINS 256      /* bins are uint8 */
#define LUTHIER__GBT_MAX_DEPTH 16
#define LUTHIER__GBT_MAX_FEATURES 65536
#define LUTHIER__GBT_MAX_TREES 1000000
#define LUTHIER__GBT_ALL_PAIRS 65536   /* enumerate every pair of a group up to this many */
#define LUTHIER__GBT_SAMPLED_PAIRS 131072 /* otherwise about this many pairs per group */

typedef struct luthier__gbt_params {
    int num_trees;          /* 0 = 100 */
    int max_depth;          /* 0 = 6 (at most 16) */
    float learning_rate;    /* 0 = 0.1 (shrinkage) */
    float lambda;           /* L2 on leaf weights, 0 = 1.0 */
    float gamma;            /* min split gain, 0 = 0 */
    float min_child_weight; /* 0 = 1.0 (sum of hessians) */
    int num_bins;           /* histogram bins per feature, 0 = 64 (2..256, quantile cut points) */
    int loss;               /* LUTHIER__GBT_SQUARED or LUTHIER__GBT_PAIRWISE */
    float subsample, colsample; /* 0 = 1.0; fractions of rows / features per tree, (0, 1] */
    uint64_t seed;
} luthier__gbt_params;

typedef struct luthier__gbt_node {
    int32_t feature; /* -1 = leaf */
    int32_t left;    /* left child's index within the tree; the right child is left + 1 */
    float value;     /* internal node: threshold (x <= value goes left); leaf: output */
} luthier__gbt_node;

typedef struct luthier__gbt {
    int num_features;
    luthier__gbt_params params; /* resolved: no zeros left */
    float base;                 /* initial prediction */
    uint64_t rng;               /* splitmix64 state after the last fit */
    int *cut_start;             /* num_features + 1: cuts of feature j are cuts[cut_start[j]..] */
    float *cuts;                /* strictly increasing per feature */
    int num_trees, cap_trees;
    int *tree_start;            /* cap_trees + 1: first node of each tree */
    luthier__gbt_node *nodes;
    size_t num_nodes, cap_nodes;
} luthier__gbt;

/* >>gbt-util */

LUTHIER_PRIVATE uint64_t luthier__gbt_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [0, 1) */
LUTHIER_PRIVATE double luthier__gbt_uniform(uint64_t *s) {
    return (double)(luthier__gbt_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}
/* uniform in [0, n), n > 0 */
LUTHIER_PRIVATE size_t luthier__gbt_below(uint64_t *s, size_t n) {
    return (size_t)(luthier__gbt_rand(s) % (uint64_t)n);
}
LUTHIER_PRIVATE int luthier__gbt_finite(double v) { return v - v == 0.0; }

LUTHIER_PRIVATE int luthier__gbt_cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Fills defaults and checks ranges. */
LUTHIER_PRIVATE luthier_status luthier__gbt_resolve(const luthier__gbt_params *in, luthier__gbt_params *out) {
    luthier__gbt_params p;
    if (in) p = *in;
    else memset(&p, 0, sizeof p);
    if (p.num_trees < 0 || p.num_trees > LUTHIER__GBT_MAX_TREES || p.max_depth < 0 ||
        p.max_depth > LUTHIER__GBT_MAX_DEPTH || p.num_bins < 0 || p.num_bins == 1 ||
        p.num_bins > LUTHIER__GBT_MAX_BINS ||
        (p.loss != LUTHIER__GBT_SQUARED && p.loss != LUTHIER__GBT_PAIRWISE))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!(p.learning_rate >= 0 && p.learning_rate <= 1e6f) || !(p.lambda >= 0 && p.lambda <= 1e30f) ||
        !(p.gamma >= 0 && p.gamma <= 1e30f) || !(p.min_child_weight >= 0 && p.min_child_weight <= 1e30f) ||
        !(p.subsample >= 0 && p.subsample <= 1) || !(p.colsample >= 0 && p.colsample <= 1))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (p.num_trees == 0) p.num_trees = 100;
    if (p.max_depth == 0) p.max_depth = 6;
    if (p.learning_rate == 0) p.learning_rate = 0.1f;
    if (p.lambda == 0) p.lambda = 1.0f;
    if (p.min_child_weight == 0) p.min_child_weight = 1.0f;
    if (p.num_bins == 0) p.num_bins = 64;
    if (p.subsample == 0) p.subsample = 1.0f;
    if (p.colsample == 0) p.colsample = 1.0f;
    *out = p;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE void luthier__gbt_free(luthier__gbt *m) {
    if (!m) return;
    luthier__free(m->cut_start);
    luthier__free(m->cuts);
    luthier__free(m->tree_start);
    luthier__free(m->nodes);
    luthier__free(m);
}

LUTHIER_PRIVATE luthier__gbt *luthier__gbt_new(int f) {
    luthier__gbt *m = (luthier__gbt *)luthier__zalloc(sizeof *m);
    if (!m) return NULL;
    m->num_features = f;
    m->cut_start = (int *)luthier__zalloc(sizeof(int) * ((size_t)f + 1));
    m->tree_start = (int *)luthier__alloc(sizeof(int));
    if (!m->cut_start || !m->tree_start) {
        luthier__gbt_free(m);
        return NULL;
    }
    m->tree_start[0] = 0;
    return m;
}

/* Room for `trees` more trees of up to `nodes` more nodes in total. */
LUTHIER_PRIVATE int luthier__gbt_reserve(luthier__gbt *m, size_t trees, size_t nodes) {
    if (trees > (size_t)INT_MAX - (size_t)m->num_trees - 1) return 0;
    if ((size_t)m->num_trees + trees > (size_t)m->cap_trees) {
        size_t cap = (size_t)m->num_trees + trees;
        int *ts = (int *)luthier__alloc(sizeof(int) * (cap + 1));
        if (!ts) return 0;
        memcpy(ts, m->tree_start, sizeof(int) * ((size_t)m->num_trees + 1));
        luthier__free(m->tree_start);
        m->tree_start = ts;
        m->cap_trees = (int)cap;
    }
    if (nodes > (size_t)INT_MAX - m->num_nodes) return 0;
    if (m->num_nodes + nodes > m->cap_nodes) {
        size_t cap = m->num_nodes + nodes;
        luthier__gbt_node *nn;
        if (cap < 2 * m->cap_nodes && 2 * m->cap_nodes <= (size_t)INT_MAX) cap = 2 * m->cap_nodes;
        nn = (luthier__gbt_node *)luthier__alloc(sizeof(luthier__gbt_node) * cap);
        if (!nn) return 0;
        if (m->num_nodes) memcpy(nn, m->nodes, sizeof(luthier__gbt_node) * m->num_nodes);
        luthier__free(m->nodes);
        m->nodes = nn;
        m->cap_nodes = cap;
    }
    return 1;
}

/* A deep copy (the search continues a warm model without touching it). */
LUTHIER_PRIVATE luthier__gbt *luthier__gbt_clone(const luthier__gbt *src) {
    luthier__gbt *m = luthier__gbt_new(src->num_features);
    const size_t ncuts = (size_t)src->cut_start[src->num_features];
    if (!m) return NULL;
    m->params = src->params;
    m->base = src->base;
    m->rng = src->rng;
    if (!luthier__gbt_reserve(m, (size_t)src->num_trees, src->num_nodes)) goto fail;
    m->cuts = (float *)luthier__alloc(sizeof(float) * (ncuts ? ncuts : 1));
    if (!m->cuts) goto fail;
    memcpy(m->cut_start, src->cut_start, sizeof(int) * ((size_t)src->num_features + 1));
    if (ncuts) memcpy(m->cuts, src->cuts, sizeof(float) * ncuts);
    memcpy(m->tree_start, src->tree_start, sizeof(int) * ((size_t)src->num_trees + 1));
    if (src->num_nodes) memcpy(m->nodes, src->nodes, sizeof(luthier__gbt_node) * src->num_nodes);
    m->num_trees = src->num_trees;
    m->num_nodes = src->num_nodes;
    return m;
fail:
    luthier__gbt_free(m);
    return NULL;
}

/* >>gbt-predict */

LUTHIER_PRIVATE float luthier__gbt_tree_predict(const luthier__gbt_node *nd, const float *row) {
    int i = 0;
    while (nd[i].feature >= 0) i = row[nd[i].feature] <= nd[i].value ? nd[i].left : nd[i].left + 1;
    return nd[i].value;
}

LUTHIER__UNUSED LUTHIER_PRIVATE float luthier__gbt_predict(const luthier__gbt *m, const float *row) {
    float s;
    int t;
    if (!m || !row) return (float)NAN;
    s = m->base;
    for (t = 0; t < m->num_trees; t++) s += luthier__gbt_tree_predict(m->nodes + m->tree_start[t], row);
    return s;
}

LUTHIER__UNUSED LUTHIER_PRIVATE void luthier__gbt_predict_batch(const luthier__gbt *m, const float *x, size_t n,
                                                               float *out) {
    size_t i;
    if (!out) return;
    for (i = 0; i < n; i++)
        out[i] = (m && x) ? luthier__gbt_predict(m, x + i * (size_t)m->num_features) : (float)NAN;
}

/* >>gbt-cuts: quantile cut points of feature j over n rows; tmp holds n floats. Returns the count. */
LUTHIER_PRIVATE int luthier__gbt_make_cuts(const float *x, size_t n, int f, int j, int max_bins, float *tmp,
                                           float *cuts) {
    size_t i, nd = 0, acc = 0;
    int nc = 0, q = 1;
    for (i = 0; i < n; i++) tmp[i] = x[i * (size_t)f + (size_t)j];
    qsort(tmp, n, sizeof(float), luthier__gbt_cmp_float);
    for (i = 0; i < n; i++)
        if (i == 0 || tmp[i] != tmp[i - 1]) nd++;
    for (i = 0; i < n;) {
        size_t e = i + 1;
        int cut = 0;
        while (e < n && tmp[e] == tmp[i]) e++;
        acc += e - i;
        if (e >= n) break;
        if (nd <= (size_t)max_bins) {
            cut = 1;
        } else if ((double)acc >= (double)n * q / max_bins && nc < max_bins - 1) {
            cut = 1;
            while (q < max_bins && (double)acc >= (double)n * q / max_bins) q++;
        }
        if (cut) {
            float mid = (float)(((double)tmp[i] + (double)tmp[e]) * 0.5);
            if (!(mid < tmp[e])) mid = tmp[i];
            cuts[nc++] = mid;
        }
        i = e;
    }
    return nc;
}

/* first bin whose cut is >= v (bins 0..count) */
LUTHIER_PRIVATE int luthier__gbt_bin(const float *cuts, int count, float v) {
    int lo = 0, hi = count;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (v <= cuts[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* >>gbt-grow */

typedef struct luthier__gbt_work {
    const float *x, *y;
    size_t n;
    int f;
    const luthier__gbt_params *p;
    uint8_t *bins;        /* n x f local bin per feature */
    int *boff;            /* f: first global bin of each feature; nb[j] = boff[j+1]-boff[j] */
    int total_bins;
    double *grad, *hess;  /* n */
    double *pred;         /* n: current raw predictions */
    uint32_t *rows, *tmp; /* n */
    double *hist;         /* (max_depth + 2) x total_bins x 2 */
    unsigned char *fmask; /* f: features allowed in this tree */
    int *perm;            /* f: column sampling */
    uint32_t *order;      /* n: samples sorted by group (pairwise) */
    size_t *gstart;       /* groups + 1 */
    size_t ngroups;
    luthier__gbt_node *tree; /* nodes of the tree being grown */
    int tree_nodes, tree_cap;
    uint64_t *rng;
} luthier__gbt_work;

LUTHIER_PRIVATE void luthier__gbt_hist_build(luthier__gbt_work *w, const uint32_t *rows, size_t count,
                                             double *hist) {
    const int f = w->f;
    size_t i;
    int j;
    memset(hist, 0, sizeof(double) * 2 * (size_t)w->total_bins);
    for (i = 0; i < count; i++) {
        const uint32_t r = rows[i];
        const uint8_t *b = w->bins + (size_t)r * (size_t)f;
        const double g = w->grad[r], h = w->hess[r];
        for (j = 0; j < f; j++) {
            double *c = hist + 2 * (size_t)(w->boff[j] + b[j]);
            c[0] += g;
            c[1] += h;
        }
    }
}

/* Grows node `id` over rows[begin, end) whose histogram is hist (slot `depth`). */
LUTHIER_PRIVATE void luthier__gbt_grow(luthier__gbt_work *w, const luthier__gbt *m, int id, size_t begin,
                                       size_t end, int depth, double G, double H) {
    const luthier__gbt_params *p = w->p;
    const double lambda = p->lambda, mcw = p->min_child_weight;
    double *hist = w->hist + (size_t)depth * 2 * (size_t)w->total_bins;
    double best_gain = 0, bGL = 0, bHL = 0;
    int best_f = -1, best_b = -1, j;
    luthier__gbt_node *nd;
    if (depth < p->max_depth && H >= 2 * mcw && end - begin >= 2) {
        const double parent = G * G / (H + lambda);
        for (j = 0; j < w->f; j++) {
            const int nb = w->boff[j + 1] - w->boff[j];
            const double *c = hist + 2 * (size_t)w->boff[j];
            double GL = 0, HL = 0;
            int b;
            if (!w->fmask[j]) continue;
            for (b = 0; b + 1 < nb; b++) {
                double GR, HR, gain, lt;
                GL += c[2 * b];
                HL += c[2 * b + 1];
                if (HL < mcw) continue;
                HR = H - HL;
                if (HR < mcw) break;
                GR = G - GL;
                lt = GL * GL / (HL + lambda) + GR * GR / (HR + lambda);
                if (lt - parent <= 1e-10 * lt) continue; /* rounding noise, not a gain */
                gain = 0.5 * (lt - parent) - p->gamma;
                if (gain > best_gain) {
                    best_gain = gain;
                    best_f = j;
                    best_b = b;
                    bGL = GL;
                    bHL = HL;
                }
            }
        }
    }
    nd = w->tree + id;
    if (best_f < 0) {
        nd->feature = -1;
        nd->left = 0;
        nd->value = (float)(-G / (H + lambda) * p->learning_rate);
        return;
    }
    {
        const int left = w->tree_nodes;
        const int f = w->f;
        size_t i, nl = 0, nr = 0, mid;
        double *small_hist = hist + 2 * (size_t)w->total_bins; /* slot depth + 1 */
        size_t k;
        nd->feature = best_f;
        nd->left = left;
        nd->value = m->cuts[m->cut_start[best_f] + best_b];
        w->tree_nodes += 2;
        /* stable partition */
        for (i = begin; i < end; i++) {
            const uint32_t r = w->rows[i];
            if (w->bins[(size_t)r * (size_t)f + (size_t)best_f] <= best_b) w->rows[begin + nl++] = r;
            else w->tmp[nr++] = r;
        }
        mid = begin + nl;
        memcpy(w->rows + mid, w->tmp, sizeof(uint32_t) * nr);
        if (depth + 1 >= p->max_depth) { /* children are leaves: no histograms */
            luthier__gbt_grow(w, m, left, begin, mid, depth + 1, bGL, bHL);
            luthier__gbt_grow(w, m, left + 1, mid, end, depth + 1, G - bGL, H - bHL);
            return;
        }
        /* smaller child built, larger = parent - smaller (in place, slot depth) */
        if (nl <= nr) {
            luthier__gbt_hist_build(w, w->rows + begin, nl, small_hist);
            for (k = 0; k < 2 * (size_t)w->total_bins; k++) hist[k] -= small_hist[k];
            /* left child's histogram must sit in slot depth + 1 while it grows, right's in slot
               depth: grow left first (it uses slots >= depth + 1), then right. */
            luthier__gbt_grow(w, m, left, begin, mid, depth + 1, bGL, bHL);
            /* right's histogram is in slot depth: move it to depth + 1 */
            memcpy(small_hist, hist, sizeof(double) * 2 * (size_t)w->total_bins);
            luthier__gbt_grow(w, m, left + 1, mid, end, depth + 1, G - bGL, H - bHL);
        } else {
            luthier__gbt_hist_build(w, w->rows + mid, nr, small_hist);
            for (k = 0; k < 2 * (size_t)w->total_bins; k++) hist[k] -= small_hist[k];
            luthier__gbt_grow(w, m, left + 1, mid, end, depth + 1, G - bGL, H - bHL);
            memcpy(small_hist, hist, sizeof(double) * 2 * (size_t)w->total_bins);
            luthier__gbt_grow(w, m, left, begin, mid, depth + 1, bGL, bHL);
        }
    }
}

/* >>gbt-fit */

typedef struct luthier__gbt_gidx {
    int group;
    uint32_t index;
} luthier__gbt_gidx;

LUTHIER_PRIVATE int luthier__gbt_cmp_gidx(const void *a, const void *b) {
    const luthier__gbt_gidx *x = (const luthier__gbt_gidx *)a, *y = (const luthier__gbt_gidx *)b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

LUTHIER_PRIVATE void luthier__gbt_work_free(luthier__gbt_work *w) {
    luthier__free(w->bins);
    luthier__free(w->boff);
    luthier__free(w->grad);
    luthier__free(w->hess);
    luthier__free(w->pred);
    luthier__free(w->rows);
    luthier__free(w->tmp);
    luthier__free(w->hist);
    luthier__free(w->fmask);
    luthier__free(w->perm);
    luthier__free(w->order);
    luthier__free(w->gstart);
    luthier__free(w->tree);
}

LUTHIER_PRIVATE luthier_status luthier__gbt_check_data(const float *x, const float *y, size_t n, int f) {
    size_t i;
    if (!x || !y || n == 0 || f <= 0 || f > LUTHIER__GBT_MAX_FEATURES) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (n >= (size_t)UINT32_MAX || n > SIZE_MAX / sizeof(float) / (size_t)f) return LUTHIER_STATUS_OVERFLOW;
    for (i = 0; i < n * (size_t)f; i++)
        if (!luthier__gbt_finite(x[i])) return LUTHIER_STATUS_INVALID_ARGUMENT;
    for (i = 0; i < n; i++)
        if (!luthier__gbt_finite(y[i])) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return LUTHIER_STATUS_OK;
}

/* Cut points of this data (replacing the model's), binned rows, buffers, groups. */
LUTHIER_PRIVATE luthier_status luthier__gbt_prepare(luthier__gbt_work *w, luthier__gbt *m, const float *x,
                                                    const float *y, const int *group, size_t n) {
    const int f = m->num_features;
    const luthier__gbt_params *p = &m->params;
    size_t i, cap_nodes;
    int j, total = 0;
    float *tmp, *cuts;
    memset(w, 0, sizeof *w);
    w->x = x;
    w->y = y;
    w->n = n;
    w->f = f;
    w->p = p;
    w->rng = &m->rng;
    tmp = (float *)luthier__alloc(sizeof(float) * n);
    cuts = (float *)luthier__alloc(sizeof(float) * (size_t)f * (LUTHIER__GBT_MAX_BINS - 1));
    w->bins = (uint8_t *)luthier__alloc(n * (size_t)f);
    w->boff = (int *)luthier__alloc(sizeof(int) * ((size_t)f + 1));
    if (!tmp || !cuts || !w->bins || !w->boff) {
        luthier__free(tmp);
        luthier__free(cuts);
        return LUTHIER_STATUS_OUT_OF_MEMORY;
    }
    for (j = 0; j < f; j++) {
        const int nc = luthier__gbt_make_cuts(x, n, f, j, p->num_bins, tmp, cuts + total);
        m->cut_start[j] = total;
        w->boff[j] = total + j;
        for (i = 0; i < n; i++)
            w->bins[i * (size_t)f + (size_t)j] = (uint8_t)luthier__gbt_bin(cuts + total, nc, x[i * (size_t)f + (size_t)j]);
        total += nc;
    }
    m->cut_start[f] = total;
    w->boff[f] = total + f;
    w->total_bins = total + f;
    luthier__free(tmp);
    luthier__free(m->cuts);
    m->cuts = cuts; /* (over-allocated: f x 255) */

    cap_nodes = 2 * n - 1;
    if (p->max_depth < 30 && ((size_t)2 << p->max_depth) - 1 < cap_nodes) cap_nodes = ((size_t)2 << p->max_depth) - 1;
    w->tree_cap = (int)cap_nodes;
    w->grad = (double *)luthier__alloc(sizeof(double) * n);
    w->hess = (double *)luthier__alloc(sizeof(double) * n);
    w->pred = (double *)luthier__alloc(sizeof(double) * n);
    w->rows = (uint32_t *)luthier__alloc(sizeof(uint32_t) * n);
    w->tmp = (uint32_t *)luthier__alloc(sizeof(uint32_t) * n);
    w->hist = (double *)luthier__alloc(sizeof(double) * 2 * (size_t)w->total_bins * ((size_t)p->max_depth + 2));
    w->fmask = (unsigned char *)luthier__alloc((size_t)f);
    w->perm = (int *)luthier__alloc(sizeof(int) * (size_t)f);
    w->tree = (luthier__gbt_node *)luthier__alloc(sizeof(luthier__gbt_node) * cap_nodes);
    if (!w->grad || !w->hess || !w->pred || !w->rows || !w->tmp || !w->hist || !w->fmask || !w->perm || !w->tree)
        return LUTHIER_STATUS_OUT_OF_MEMORY;
    if (p->loss == LUTHIER__GBT_PAIRWISE) {
        luthier__gbt_gidx *gi = (luthier__gbt_gidx *)luthier__alloc(sizeof(luthier__gbt_gidx) * n);
        w->order = (uint32_t *)luthier__alloc(sizeof(uint32_t) * n);
        w->gstart = (size_t *)luthier__alloc(sizeof(size_t) * (n + 1));
        if (!gi || !w->order || !w->gstart) {
            luthier__free(gi);
            return LUTHIER_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < n; i++) {
            gi[i].group = group ? group[i] : 0;
            gi[i].index = (uint32_t)i;
        }
        qsort(gi, n, sizeof *gi, luthier__gbt_cmp_gidx);
        w->ngroups = 0;
        for (i = 0; i < n; i++) {
            if (i == 0 || gi[i].group != gi[i - 1].group) w->gstart[w->ngroups++] = i;
            w->order[i] = gi[i].index;
        }
        w->gstart[w->ngroups] = n;
        luthier__free(gi);
    }
    for (i = 0; i < n; i++) w->pred[i] = luthier__gbt_predict(m, x + i * (size_t)f);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE void luthier__gbt_pair(luthier__gbt_work *w, uint32_t i, uint32_t j) {
    double d, rho, h;
    if (w->y[i] == w->y[j]) return;
    if (w->y[i] < w->y[j]) {
        const uint32_t t = i;
        i = j;
        j = t;
    }
    /* y[i] > y[j]: loss log(1 + exp(-(s_i - s_j))) */
    d = w->pred[i] - w->pred[j];
    rho = 1.0 / (1.0 + exp(d < 700 ? d : 700));
    h = rho * (1.0 - rho);
    if (h < 1e-16) h = 1e-16;
    w->grad[i] -= rho;
    w->grad[j] += rho;
    w->hess[i] += h;
    w->hess[j] += h;
}

LUTHIER_PRIVATE void luthier__gbt_gradients(luthier__gbt_work *w) {
    size_t i, g;
    if (w->p->loss == LUTHIER__GBT_SQUARED) {
        for (i = 0; i < w->n; i++) {
            w->grad[i] = w->pred[i] - (double)w->y[i];
            w->hess[i] = 1.0;
        }
        return;
    }
    memset(w->grad, 0, sizeof(double) * w->n);
    memset(w->hess, 0, sizeof(double) * w->n);
    for (g = 0; g < w->ngroups; g++) {
        const uint32_t *mem = w->order + w->gstart[g];
        const size_t cnt = w->gstart[g + 1] - w->gstart[g];
        size_t a, b, k;
        if (cnt < 2) continue;
        if ((double)cnt * (double)(cnt - 1) / 2 <= LUTHIER__GBT_ALL_PAIRS) {
            for (a = 0; a < cnt; a++)
                for (b = a + 1; b < cnt; b++) luthier__gbt_pair(w, mem[a], mem[b]);
        } else {
            size_t per = LUTHIER__GBT_SAMPLED_PAIRS / cnt;
            if (per < 4) per = 4;
            for (a = 0; a < cnt; a++)
                for (k = 0; k < per; k++) {
                    b = luthier__gbt_below(w->rng, cnt);
                    if (b != a) luthier__gbt_pair(w, mem[a], mem[b]);
                }
        }
    }
}

/* Adds num_trees trees fitted to the work's data. */
LUTHIER_PRIVATE luthier_status luthier__gbt_boost(luthier__gbt *m, luthier__gbt_work *w, int num_trees) {
    const luthier__gbt_params *p = &m->params;
    const int f = w->f;
    int t, j;
    size_t i;
    if (!luthier__gbt_reserve(m, (size_t)num_trees, 0)) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (t = 0; t < num_trees; t++) {
        size_t count = 0;
        double G = 0, H = 0;
        luthier__gbt_node *dst;
        luthier__gbt_gradients(w);
        if (p->subsample < 1) {
            for (i = 0; i < w->n; i++)
                if (luthier__gbt_uniform(w->rng) < p->subsample) w->rows[count++] = (uint32_t)i;
        }
        if (count == 0) {
            for (i = 0; i < w->n; i++) w->rows[i] = (uint32_t)i;
            count = w->n;
        }
        if (p->colsample < 1) {
            int k = (int)(p->colsample * (float)f + 0.5f);
            int *perm = w->perm;
            if (k < 1) k = 1;
            for (j = 0; j < f; j++) perm[j] = j;
            memset(w->fmask, 0, (size_t)f);
            for (j = 0; j < k; j++) {
                const int r = j + (int)luthier__gbt_below(w->rng, (size_t)(f - j));
                const int v = perm[r];
                perm[r] = perm[j];
                perm[j] = v;
                w->fmask[v] = 1;
            }
        } else {
            memset(w->fmask, 1, (size_t)f);
        }
        for (i = 0; i < count; i++) {
            G += w->grad[w->rows[i]];
            H += w->hess[w->rows[i]];
        }
        luthier__gbt_hist_build(w, w->rows, count, w->hist);
        w->tree_nodes = 1;
        luthier__gbt_grow(w, m, 0, 0, count, 0, G, H);
        if (!luthier__gbt_reserve(m, 0, (size_t)w->tree_nodes)) return LUTHIER_STATUS_OUT_OF_MEMORY;
        dst = m->nodes + m->num_nodes;
        memcpy(dst, w->tree, sizeof(luthier__gbt_node) * (size_t)w->tree_nodes);
        m->num_nodes += (size_t)w->tree_nodes;
        m->num_trees++;
        m->tree_start[m->num_trees] = (int)m->num_nodes;
        for (i = 0; i < w->n; i++) w->pred[i] += luthier__gbt_tree_predict(dst, w->x + i * (size_t)f);
    }
    return LUTHIER_STATUS_OK;
}

/* Adds trees; on failure the model keeps the trees it had. */
LUTHIER_PRIVATE luthier_status luthier__gbt_train(luthier__gbt *m, const float *x, const float *y, const int *group,
                                                  size_t n, int num_trees) {
    luthier__gbt_work w;
    const int trees0 = m->num_trees;
    const size_t nodes0 = m->num_nodes;
    luthier_status s = luthier__gbt_prepare(&w, m, x, y, group, n);
    if (s == LUTHIER_STATUS_OK) s = luthier__gbt_boost(m, &w, num_trees);
    luthier__gbt_work_free(&w);
    if (s != LUTHIER_STATUS_OK) {
        m->num_trees = trees0;
        m->num_nodes = nodes0;
    }
    return s;
}

LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__gbt_fit(const float *x, const float *y, const int *group,
                                                               size_t n, int f, const luthier__gbt_params *p,
                                                               luthier__gbt **out) {
    luthier__gbt_params rp;
    luthier__gbt *m;
    luthier_status s;
    size_t i;
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    if ((s = luthier__gbt_check_data(x, y, n, f)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__gbt_resolve(p, &rp)) != LUTHIER_STATUS_OK) return s;
    m = luthier__gbt_new(f);
    if (!m) return LUTHIER_STATUS_OUT_OF_MEMORY;
    m->params = rp;
    m->rng = rp.seed;
    if (rp.loss == LUTHIER__GBT_SQUARED) {
        double sum = 0;
        for (i = 0; i < n; i++) sum += y[i];
        m->base = (float)(sum / (double)n);
    }
    s = luthier__gbt_train(m, x, y, group, n, rp.num_trees);
    if (s != LUTHIER_STATUS_OK) {
        luthier__gbt_free(m);
        return s;
    }
    *out = m;
    return LUTHIER_STATUS_OK;
}

/* num_trees 0 = the model's params.num_trees. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__gbt_fit_more(luthier__gbt *m, const float *x, const float *y,
                                                                    const int *group, size_t n, int num_trees) {
    luthier_status s;
    if (!m || num_trees < 0 || num_trees > LUTHIER__GBT_MAX_TREES) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((s = luthier__gbt_check_data(x, y, n, m->num_features)) != LUTHIER_STATUS_OK) return s;
    if (num_trees == 0) num_trees = m->params.num_trees;
    if (m->num_trees > LUTHIER__GBT_MAX_TREES - num_trees) return LUTHIER_STATUS_OVERFLOW;
    return luthier__gbt_train(m, x, y, group, n, num_trees);
}

/* >>gbt-save */

typedef struct luthier__gbt_buf {
    char *p;
    size_t len, cap;
    int failed;
} luthier__gbt_buf;

LUTHIER__PRINTF(2, 3)
LUTHIER_PRIVATE void luthier__gbt_printf(luthier__gbt_buf *b, const char *fmt, ...) {
    va_list ap;
    int k;
    if (b->failed) return;
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)k < b->cap - b->len) {
            b->len += (size_t)k;
            return;
        }
        {
            size_t cap = 2 * b->cap + (size_t)k + 64;
            char *np = (char *)luthier__alloc(cap);
            if (!np) {
                b->failed = 1;
                return;
            }
            memcpy(np, b->p, b->len);
            luthier__free(b->p);
            b->p = np;
            b->cap = cap;
        }
    }
}

/* text is NUL-terminated (len excludes the NUL); free it with luthier__free. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__gbt_save(const luthier__gbt *m, char **text, size_t *len) {
    luthier__gbt_buf b;
    const luthier__gbt_params *p;
    int j, t;
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!m || !text) return LUTHIER_STATUS_INVALID_ARGUMENT;
    p = &m->params;
    b.cap = 256 + (size_t)m->cut_start[m->num_features] * 16 + m->num_nodes * 24 + (size_t)m->num_trees * 16;
    b.len = 0;
    b.failed = 0;
    b.p = (char *)luthier__alloc(b.cap);
    if (!b.p) return LUTHIER_STATUS_OUT_OF_MEMORY;
    b.p[0] = 0;
    luthier__gbt_printf(&b, "luthier-gbt 1\nfeatures %d\n", m->num_features);
    luthier__gbt_printf(&b,
                        "params trees %d depth %d lr %.9g lambda %.9g gamma %.9g min_child_weight %.9g bins %d "
                        "loss %d subsample %.9g colsample %.9g seed %llu\n",
                        p->num_trees, p->max_depth, (double)p->learning_rate, (double)p->lambda, (double)p->gamma,
                        (double)p->min_child_weight, p->num_bins, p->loss, (double)p->subsample,
                        (double)p->colsample, (unsigned long long)p->seed);
    luthier__gbt_printf(&b, "base %.9g\nrng %llu\ncuts\n", (double)m->base, (unsigned long long)m->rng);
    for (j = 0; j < m->num_features; j++) {
        int c;
        luthier__gbt_printf(&b, "%d", m->cut_start[j + 1] - m->cut_start[j]);
        for (c = m->cut_start[j]; c < m->cut_start[j + 1]; c++) luthier__gbt_printf(&b, " %.9g", (double)m->cuts[c]);
        luthier__gbt_printf(&b, "\n");
    }
    luthier__gbt_printf(&b, "trees %d\n", m->num_trees);
    for (t = 0; t < m->num_trees; t++) {
        int i;
        const int cnt = m->tree_start[t + 1] - m->tree_start[t];
        const luthier__gbt_node *nd = m->nodes + m->tree_start[t];
        luthier__gbt_printf(&b, "tree %d\n", cnt);
        for (i = 0; i < cnt; i++)
            luthier__gbt_printf(&b, "%d %d %.9g\n", (int)nd[i].feature, (int)nd[i].left, (double)nd[i].value);
    }
    luthier__gbt_printf(&b, "end\n");
    if (b.failed) {
        luthier__free(b.p);
        return LUTHIER_STATUS_OUT_OF_MEMORY;
    }
    *text = b.p;
    if (len) *len = b.len;
    return LUTHIER_STATUS_OK;
}

/* >>gbt-load */

typedef struct luthier__gbt_lex {
    const char *s;
    size_t len, pos;
    int line;
    char tok[64];
    char *err;
    size_t err_size;
} luthier__gbt_lex;

LUTHIER__PRINTF(2, 3)
LUTHIER_PRIVATE luthier_status luthier__gbt_lfail(luthier__gbt_lex *L, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    luthier__set_error_f("luthier-gbt line %d: %s", L->line, msg);
    luthier__copy_error(L->err, L->err_size);
    return LUTHIER_STATUS_INVALID_ARGUMENT;
}

/* Next whitespace-separated token into L->tok; 0 at the end of the text or when too long. */
LUTHIER_PRIVATE int luthier__gbt_next(luthier__gbt_lex *L) {
    size_t k = 0;
    while (L->pos < L->len && (L->s[L->pos] == ' ' || L->s[L->pos] == '\t' || L->s[L->pos] == '\n' ||
                               L->s[L->pos] == '\r')) {
        if (L->s[L->pos] == '\n') L->line++;
        L->pos++;
    }
    if (L->pos >= L->len || L->s[L->pos] == 0) {
        strcpy(L->tok, "(end of text)");
        return 0;
    }
    while (L->pos < L->len && L->s[L->pos] != ' ' && L->s[L->pos] != '\t' && L->s[L->pos] != '\n' &&
           L->s[L->pos] != '\r' && L->s[L->pos] != 0) {
        if (k + 1 >= sizeof L->tok) {
            strcpy(L->tok, "(overlong token)");
            return 0;
        }
        L->tok[k++] = L->s[L->pos++];
    }
    L->tok[k] = 0;
    return 1;
}

LUTHIER_PRIVATE int luthier__gbt_expect(luthier__gbt_lex *L, const char *word) {
    return luthier__gbt_next(L) && strcmp(L->tok, word) == 0;
}

LUTHIER_PRIVATE int luthier__gbt_int(luthier__gbt_lex *L, long lo, long hi, int *v) {
    char *e;
    long x;
    if (!luthier__gbt_next(L)) return 0;
    errno = 0;
    x = strtol(L->tok, &e, 10);
    if (e == L->tok || *e || errno || x < lo || x > hi) return 0;
    *v = (int)x;
    return 1;
}

LUTHIER_PRIVATE int luthier__gbt_u64(luthier__gbt_lex *L, uint64_t *v) {
    char *e;
    unsigned long long x;
    if (!luthier__gbt_next(L) || L->tok[0] < '0' || L->tok[0] > '9') return 0;
    errno = 0;
    x = strtoull(L->tok, &e, 10);
    if (*e || errno) return 0;
    *v = (uint64_t)x;
    return 1;
}

LUTHIER_PRIVATE int luthier__gbt_float(luthier__gbt_lex *L, float *v) {
    char *e;
    double x;
    if (!luthier__gbt_next(L)) return 0;
    x = strtod(L->tok, &e);
    if (e == L->tok || *e || !luthier__gbt_finite(x) || x > FLT_MAX || x < -FLT_MAX) return 0;
    *v = (float)x;
    return 1;
}

/* The model after its parameters (m has them): base, rng, cuts, trees and "end". */
LUTHIER_PRIVATE luthier_status luthier__gbt_parse_model(luthier__gbt_lex *L, luthier__gbt *m) {
    const int f = m->num_features;
    int ntrees, j, t;
    size_t total;
    if (!luthier__gbt_expect(L, "base") || !luthier__gbt_float(L, &m->base))
        return luthier__gbt_lfail(L, "expected 'base' and a finite value, got '%s'", L->tok);
    if (!luthier__gbt_expect(L, "rng") || !luthier__gbt_u64(L, &m->rng))
        return luthier__gbt_lfail(L, "expected 'rng' and a state, got '%s'", L->tok);
    if (!luthier__gbt_expect(L, "cuts")) return luthier__gbt_lfail(L, "expected 'cuts', got '%s'", L->tok);
    m->cuts = (float *)luthier__alloc(sizeof(float) * (size_t)f * (LUTHIER__GBT_MAX_BINS - 1));
    if (!m->cuts) return LUTHIER_STATUS_OUT_OF_MEMORY;
    total = 0;
    for (j = 0; j < f; j++) {
        int c, nc;
        m->cut_start[j] = (int)total;
        if (!luthier__gbt_int(L, 0, LUTHIER__GBT_MAX_BINS - 1, &nc))
            return luthier__gbt_lfail(L, "feature %d: bad cut count '%s'", j, L->tok);
        for (c = 0; c < nc; c++) {
            float v;
            if (!luthier__gbt_float(L, &v) || (c > 0 && !(v > m->cuts[total - 1])))
                return luthier__gbt_lfail(L, "feature %d: cut %d is '%s' (finite, increasing)", j, c, L->tok);
            m->cuts[total++] = v;
        }
    }
    m->cut_start[f] = (int)total;
    /* every node takes at least 6 characters: bound the counts by the text left */
    if (!luthier__gbt_expect(L, "trees") || !luthier__gbt_int(L, 0, LUTHIER__GBT_MAX_TREES, &ntrees) ||
        (size_t)ntrees > (L->len - L->pos) / 6)
        return luthier__gbt_lfail(L, "expected 'trees' and a count the text can hold, got '%s'", L->tok);
    if (!luthier__gbt_reserve(m, (size_t)ntrees, 0)) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (t = 0; t < ntrees; t++) {
        int cnt, i;
        luthier__gbt_node *nd;
        if (!luthier__gbt_expect(L, "tree") || !luthier__gbt_int(L, 1, INT_MAX / 2, &cnt) || !(cnt & 1) ||
            (size_t)cnt > (L->len - L->pos) / 6 + 1)
            return luthier__gbt_lfail(L, "tree %d: expected 'tree' and an odd node count the text can hold, got '%s'", t, L->tok);
        if (!luthier__gbt_reserve(m, 0, (size_t)cnt)) return LUTHIER_STATUS_OUT_OF_MEMORY;
        nd = m->nodes + m->num_nodes;
        for (i = 0; i < cnt; i++) {
            int feat, left;
            if (!luthier__gbt_int(L, -1, f - 1, &feat) || !luthier__gbt_int(L, 0, INT_MAX - 1, &left) ||
                !luthier__gbt_float(L, &nd[i].value))
                return luthier__gbt_lfail(L, "tree %d node %d: expected 'feature left value', got '%s'", t, i, L->tok);
            if (feat >= 0 && (left <= i || left + 1 >= cnt))
                return luthier__gbt_lfail(L, "tree %d node %d: children %d, %d out of order or range", t, i, left, left + 1);
            nd[i].feature = feat;
            nd[i].left = feat >= 0 ? left : 0;
        }
        m->num_nodes += (size_t)cnt;
        m->num_trees++;
        m->tree_start[m->num_trees] = (int)m->num_nodes;
    }
    if (!luthier__gbt_expect(L, "end"))
        return luthier__gbt_lfail(L, "expected 'end', got '%s' (truncated?)", L->tok);
    if (luthier__gbt_next(L))
        return luthier__gbt_lfail(L, "unexpected '%s' after 'end'", L->tok);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__gbt_parse(luthier__gbt_lex *L, luthier__gbt **out) {
    luthier__gbt_params p;
    luthier__gbt *m;
    luthier_status s;
    int f, version;
    memset(&p, 0, sizeof p);
    if (!luthier__gbt_expect(L, "luthier-gbt")) return luthier__gbt_lfail(L, "not a luthier-gbt model (starts with '%s')", L->tok);
    if (!luthier__gbt_int(L, 0, INT_MAX, &version)) return luthier__gbt_lfail(L, "bad version '%s'", L->tok);
    if (version != 1) return luthier__gbt_lfail(L, "unsupported version %d (this build reads version 1)", version);
    if (!luthier__gbt_expect(L, "features") || !luthier__gbt_int(L, 1, LUTHIER__GBT_MAX_FEATURES, &f))
        return luthier__gbt_lfail(L, "expected 'features' and a count in 1..%d, got '%s'", LUTHIER__GBT_MAX_FEATURES, L->tok);
#define LUTHIER__GBT_FIELD(word, ok)                                                          \
    if (!luthier__gbt_expect(L, word) || !(ok))                                               \
        return luthier__gbt_lfail(L, "expected '%s' and its value, got '%s'", word, L->tok)
    LUTHIER__GBT_FIELD("params", 1);
    LUTHIER__GBT_FIELD("trees", luthier__gbt_int(L, 1, LUTHIER__GBT_MAX_TREES, &p.num_trees));
    LUTHIER__GBT_FIELD("depth", luthier__gbt_int(L, 1, LUTHIER__GBT_MAX_DEPTH, &p.max_depth));
    LUTHIER__GBT_FIELD("lr", luthier__gbt_float(L, &p.learning_rate));
    LUTHIER__GBT_FIELD("lambda", luthier__gbt_float(L, &p.lambda));
    LUTHIER__GBT_FIELD("gamma", luthier__gbt_float(L, &p.gamma));
    LUTHIER__GBT_FIELD("min_child_weight", luthier__gbt_float(L, &p.min_child_weight));
    LUTHIER__GBT_FIELD("bins", luthier__gbt_int(L, 2, LUTHIER__GBT_MAX_BINS, &p.num_bins));
    LUTHIER__GBT_FIELD("loss", luthier__gbt_int(L, 0, 1, &p.loss));
    LUTHIER__GBT_FIELD("subsample", luthier__gbt_float(L, &p.subsample));
    LUTHIER__GBT_FIELD("colsample", luthier__gbt_float(L, &p.colsample));
    LUTHIER__GBT_FIELD("seed", luthier__gbt_u64(L, &p.seed));
    if (luthier__gbt_resolve(&p, &p) != LUTHIER_STATUS_OK || p.learning_rate <= 0 || p.lambda <= 0 ||
        p.min_child_weight <= 0 || p.subsample <= 0 || p.colsample <= 0)
        return luthier__gbt_lfail(L, "parameters out of range");
#undef LUTHIER__GBT_FIELD
    m = luthier__gbt_new(f);
    if (!m) return LUTHIER_STATUS_OUT_OF_MEMORY;
    m->params = p;
    if ((s = luthier__gbt_parse_model(L, m)) != LUTHIER_STATUS_OK) {
        luthier__gbt_free(m);
        return s;
    }
    *out = m;
    return LUTHIER_STATUS_OK;
}

/* text need not be NUL-terminated (a NUL ends it early). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__gbt_load(const char *text, size_t len, luthier__gbt **out,
                                                                char *err, size_t err_size) {
    luthier__gbt_lex L;
    if (err && err_size) err[0] = 0;
    if (out) *out = NULL;
    memset(&L, 0, sizeof L);
    L.s = text;
    L.len = len;
    L.line = 1;
    L.err = err;
    L.err_size = err_size;
    if (!out || !text) {
        if (err && err_size) snprintf(err, err_size, "luthier-gbt: NULL argument");
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    return luthier__gbt_parse(&L, out);
}

/* >>search */

typedef struct luthier__search_desc {
    size_t num_candidates;
    int num_features;
    const float *features; /* num_candidates x num_features */
    /* measures candidate i: seconds (> 0), or a negative value when it failed (never retried,
       never best; 0 and NaN count as failures too). busy: NULL, or (when num_clusters > 0) an
       array of num_clusters zeros that the callback may fill with the seconds each cluster
       spent on its share of the work (see shares) */
    double (*measure)(void *user, size_t i, double *busy);
    void *user;
    /* Workload balance (optional, num_clusters = 0: none). Candidate i gives the fraction
       shares[i * num_clusters + c] of its work to cluster c and belongs to group[i] in
       [0, num_groups): the candidates that differ only in their shares (-1: no group, e.g. a
       dynamic schedule). A measurement that reports busy seconds gives its group one cost per
       unit share per cluster; every unmeasured candidate of the group is then predicted as the
       largest share x cost over its clusters plus the group's measured overhead (total minus
       the longest busy time), and the search spends part of each batch on those predicted to
       beat the best so far. The model picks the rest, one candidate per group. */
    int num_clusters;
    int num_groups;
    const float *shares;
    const int *group;
    /* Optional: candidate i's stratum (>= 0; -1 = none), e.g. the value of the knob whose
       choice matters most (a convolution's algorithm). The first batch then starts with one
       candidate of every stratum: the warm model's best-predicted one (else a random one),
       strata in order of those predictions, as many as the budget allows. A warm model fitted
       on other tasks can rank a whole stratum last that is the best on this one (Winograd on
       a 3-channel stem vs on 64 channels); a search that never measures it cannot learn so. */
    const int *stratum;
    /* Optional: a prior per candidate, lower = predicted faster (e.g. the log of the analytical
       model's seconds, >>impl-costmodel; NaN = none). It orders the first batch: the stratum
       cover takes each stratum's best-prior candidate (before the warm model's), and without a
       warm model the rest of the batch is the best-prior candidates (the explore fraction still
       farthest-point sampled). */
    const float *prior;
    int initial;           /* first batch (diverse), 0 = auto: num_features clamped to 8..16 */
    int batch;             /* measured per round, 0 = auto: initial / 2, at least 4 */
    float explore;         /* fraction of each batch picked at random, 0 = 0.1, -1 = none */
    int max_measurements;  /* budget, 0 = no limit (but see patience) */
    double max_seconds;    /* wall-clock budget of the search, 0 = none */
    int patience;          /* stop after this many rounds without improving the best by > 0.5 %, 0 = 3 */
    int loss;              /* LUTHIER__GBT_SQUARED (on log seconds, default) or LUTHIER__GBT_PAIRWISE */
    const luthier__gbt *warm; /* optional model to start from (transfer); ranks the first batch */
    double y_offset;       /* the model's target is log(seconds) - y_offset (e.g. the log of the
                              task's default time: a warm model fitted on several tasks then sees
                              each task's times relative to its default) */
    uint64_t seed;
} luthier__search_desc;

typedef struct luthier__search_result {
    size_t best;         /* SIZE_MAX when no measurement succeeded */
    double best_seconds; /* as measured */
    int measurements;
    int rounds;          /* batches measured, the first included */
    double seconds;      /* wall clock of the search */
} luthier__search_result;

/* Model of the search: small data, so fewer and shallower trees than the defaults. */
#define LUTHIER__SEARCH_TREES 60
#define LUTHIER__SEARCH_DEPTH 5
#define LUTHIER__SEARCH_LR 0.2f
#define LUTHIER__SEARCH_FARTHEST_POOL 4096

typedef struct luthier__search_key {
    float pred;
    uint32_t tie; /* random: breaks the many ties of a piecewise-constant model */
    size_t index;
} luthier__search_key;

LUTHIER_PRIVATE int luthier__search_cmp_key(const void *a, const void *b) {
    const luthier__search_key *x = (const luthier__search_key *)a, *y = (const luthier__search_key *)b;
    if (x->pred != y->pred) return x->pred < y->pred ? -1 : 1;
    if (x->tie != y->tie) return x->tie < y->tie ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

typedef struct luthier__search_state {
    const luthier__search_desc *d;
    size_t n;
    int f;
    unsigned char *measured;
    size_t *midx;       /* measured candidates, in order */
    double *msec;       /* their seconds (<= 0: failed) */
    size_t count;
    size_t budget;
    double t0;
    uint64_t rng;
    size_t best;
    double best_seconds;
    float *tx, *ty;     /* training set */
    luthier__search_key *keys;
    float *pred;
    size_t *pick;
    /* balance: per group and cluster, the sum and count of busy seconds per unit share; per
       group, the sum and count of overheads */
    double *rate_sum, *ovh_sum, *busy;
    int *rate_n, *ovh_n;
    unsigned char *taken; /* per group: picked in the current batch */
    size_t informative;   /* unmeasured candidates of a group with every share positive */
} luthier__search_state;

/* The key of candidate i ranked by pred (NaN last), its tie broken by the search's stream. */
LUTHIER_PRIVATE luthier__search_key luthier__search_key_of(luthier__search_state *S, size_t i, float pred) {
    luthier__search_key key;
    key.pred = pred == pred ? pred : HUGE_VALF;
    key.tie = (uint32_t)luthier__gbt_rand(&S->rng);
    key.index = i;
    return key;
}

LUTHIER_PRIVATE int luthier__search_out_of_budget(const luthier__search_state *S) {
    if (S->count >= S->budget) return 1;
    if (S->d->max_seconds > 0 && luthier__seconds() - S->t0 >= S->d->max_seconds) return 1;
    return 0;
}

/* What the busy seconds of candidate c's measurement (sec seconds) teach about its group. */
LUTHIER_PRIVATE void luthier__search_learn_balance(luthier__search_state *S, size_t c, double sec) {
    const luthier__search_desc *d = S->d;
    const int nc = d->num_clusters, g = d->group[c];
    const float *sh = d->shares + c * (size_t)nc;
    double longest = 0;
    int j, any = 0;
    if (g < 0) return;
    for (j = 0; j < nc; j++)
        if (!(S->busy[j] >= 0) || !luthier__gbt_finite(S->busy[j])) return; /* garbage: ignored */
    for (j = 0; j < nc; j++) {
        if (sh[j] <= 0 || S->busy[j] <= 0) continue;
        S->rate_sum[(size_t)g * (size_t)nc + (size_t)j] += S->busy[j] / sh[j];
        S->rate_n[(size_t)g * (size_t)nc + (size_t)j]++;
        if (S->busy[j] > longest) longest = S->busy[j];
        any = 1;
    }
    if (!any) return;
    S->ovh_sum[g] += sec > longest ? sec - longest : 0.0;
    S->ovh_n[g]++;
}

/* The balance prediction of candidate i (seconds), or 0 when its group lacks the costs of one
   of the clusters it uses. */
LUTHIER_PRIVATE double luthier__search_balance_predict(const luthier__search_state *S, size_t i) {
    const luthier__search_desc *d = S->d;
    const int nc = d->num_clusters, g = d->group[i];
    const float *sh = d->shares + i * (size_t)nc;
    double worst = 0;
    int j;
    if (g < 0 || S->ovh_n[g] == 0) return 0;
    for (j = 0; j < nc; j++) {
        const size_t k = (size_t)g * (size_t)nc + (size_t)j;
        double t;
        if (sh[j] <= 0) continue;
        if (S->rate_n[k] == 0) return 0;
        t = sh[j] * S->rate_sum[k] / S->rate_n[k];
        if (t > worst) worst = t;
    }
    return worst > 0 ? worst + S->ovh_sum[g] / S->ovh_n[g] : 0;
}

/* With balance: whether candidate i is in a group and gives every cluster a share, so that
   measuring it tells the costs of every cluster. */
LUTHIER_PRIVATE int luthier__search_all_shares(const luthier__search_desc *d, size_t i) {
    int j;
    if (d->group[i] < 0) return 0;
    for (j = 0; j < d->num_clusters; j++)
        if (!(d->shares[i * (size_t)d->num_clusters + (size_t)j] > 0)) return 0;
    return 1;
}

/* Whether the first batch and the model may pick candidate i: with balance, only candidates
   without a group or with every share positive while such remain unmeasured (the others are
   reached through the balance prediction). */
LUTHIER_PRIVATE int luthier__search_informative(const luthier__search_state *S, size_t i) {
    if (!S->busy || S->d->group[i] < 0 || S->informative == 0) return 1;
    return luthier__search_all_shares(S->d, i);
}

/* Appends to pick one unmeasured candidate per stratum (see luthier__search_desc.stratum): the
   best by the prior where there is one, else the model's best-predicted (m NULL: a random
   one), the strata in order of those predictions, at most k. keys holds S->n entries. */
LUTHIER_PRIVATE void luthier__search_cover(luthier__search_state *S, const luthier__gbt *m, size_t k, size_t *pick,
                                           size_t *npick) {
    const int *st = S->d->stratum;
    luthier__search_key *best = S->keys;
    size_t i, j, nb = 0;
    if (!st || k == 0) return;
    /* keys[0..nb): the best candidate seen of each stratum met so far (strata are few) */
    for (i = 0; i < S->n; i++) {
        luthier__search_key key;
        if (S->measured[i] || st[i] < 0 || !luthier__search_informative(S, i)) continue;
        key = luthier__search_key_of(S, i, S->d->prior && S->d->prior[i] == S->d->prior[i] ? S->d->prior[i]
                                           : m ? luthier__gbt_predict(m, S->d->features + i * (size_t)S->f) : 0.0f);
        for (j = 0; j < nb && st[best[j].index] != st[i]; j++) continue;
        if (j == nb) best[nb++] = key;
        else if (luthier__search_cmp_key(&key, &best[j]) < 0) best[j] = key;
    }
    qsort(best, nb, sizeof *best, luthier__search_cmp_key);
    for (j = 0; j < nb && j < k; j++) pick[(*npick)++] = best[j].index;
}

/* Appends to pick the k unmeasured candidates with the lowest prior (luthier__search_desc.prior;
   NaN last). keys holds S->n entries. */
LUTHIER_PRIVATE void luthier__search_prior_pick(luthier__search_state *S, size_t k, size_t *pick, size_t *npick) {
    size_t i, n = 0;
    for (i = 0; i < S->n; i++)
        if (!S->measured[i] && luthier__search_informative(S, i)) S->keys[n++] = luthier__search_key_of(S, i, S->d->prior[i]);
    qsort(S->keys, n, sizeof *S->keys, luthier__search_cmp_key);
    for (i = 0; i < n && i < k; i++) pick[(*npick)++] = S->keys[i].index;
}

/* Measures the picked candidates (until the budget runs out). */
LUTHIER_PRIVATE void luthier__search_measure(luthier__search_state *S, const size_t *pick, size_t k) {
    size_t i;
    for (i = 0; i < k; i++) {
        const size_t c = pick[i];
        double sec;
        if (S->measured[c]) continue;
        if (luthier__search_out_of_budget(S)) return;
        if (S->busy) memset(S->busy, 0, sizeof(double) * (size_t)S->d->num_clusters);
        sec = S->d->measure(S->d->user, c, S->busy);
        if (!(sec > 0) || !luthier__gbt_finite(sec)) sec = -1;
        if (sec > 0 && S->busy) luthier__search_learn_balance(S, c, sec);
        S->measured[c] = 1;
        if (S->busy && luthier__search_all_shares(S->d, c)) S->informative--;
        S->midx[S->count] = c;
        S->msec[S->count] = sec;
        S->count++;
        if (sec > 0 && (S->best == SIZE_MAX || sec < S->best_seconds)) {
            S->best = c;
            S->best_seconds = sec;
        }
    }
}

/* Up to k unmeasured candidates by farthest-point sampling on range-normalized features
   (over a random pool of at most LUTHIER__SEARCH_FARTHEST_POOL), appended to pick. */
/* mind[i] = min(mind[i], the scaled squared distance of candidate pool[i] to features a), for the
   pool's candidates not picked yet (mind[i] >= 0). */
LUTHIER_PRIVATE void luthier__search_nearer(const float *x, int f, const float *scale, const float *a, const size_t *pool,
                                            size_t np, double *mind) {
    size_t i;
    int j;
    for (i = 0; i < np; i++) {
        const float *b = x + pool[i] * (size_t)f;
        double d2 = 0;
        if (mind[i] < 0) continue;
        for (j = 0; j < f; j++) {
            const double t = ((double)a[j] - (double)b[j]) * scale[j];
            d2 += t * t;
        }
        if (d2 < mind[i]) mind[i] = d2;
    }
}

LUTHIER_PRIVATE luthier_status luthier__search_diverse(luthier__search_state *S, size_t k, size_t *pick,
                                                       size_t *npick) {
    const size_t n = S->n;
    const int f = S->f;
    const float *x = S->d->features;
    size_t *pool, np = 0, i, c;
    float *scale;
    double *mind;
    int j;
    luthier_status s = LUTHIER_STATUS_OK;
    pool = (size_t *)luthier__alloc(sizeof(size_t) * n);
    mind = (double *)luthier__alloc(sizeof(double) * (n < LUTHIER__SEARCH_FARTHEST_POOL ? n : LUTHIER__SEARCH_FARTHEST_POOL));
    scale = (float *)luthier__alloc(sizeof(float) * (size_t)f);
    if (!pool || !mind || !scale) {
        s = LUTHIER_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < n; i++)
        if (!S->measured[i] && luthier__search_informative(S, i)) pool[np++] = i;
    /* random order (partial shuffle: only the pool's head is used) */
    for (i = 0; i < np && i < LUTHIER__SEARCH_FARTHEST_POOL; i++) {
        const size_t r = i + luthier__gbt_below(&S->rng, np - i);
        const size_t v = pool[r];
        pool[r] = pool[i];
        pool[i] = v;
    }
    if (np > LUTHIER__SEARCH_FARTHEST_POOL) np = LUTHIER__SEARCH_FARTHEST_POOL;
    if (np == 0) goto done;
    for (j = 0; j < f; j++) {
        float mn = x[j], mx = x[j];
        for (i = 1; i < n; i++) {
            const float v = x[i * (size_t)f + (size_t)j];
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
        scale[j] = mx > mn ? 1.0f / (mx - mn) : 0.0f;
    }
    for (i = 0; i < np; i++) mind[i] = HUGE_VAL;
    /* the distances to what is already measured count too */
    for (c = 0; c < S->count; c++) luthier__search_nearer(x, f, scale, x + S->midx[c] * (size_t)f, pool, np, mind);
    for (c = 0; c < k; c++) {
        size_t bi = 0;
        double bd = -1;
        for (i = 0; i < np; i++)
            if (mind[i] > bd) {
                bd = mind[i];
                bi = i;
            }
        if (bd < 0) break; /* pool used up */
        pick[(*npick)++] = pool[bi];
        mind[bi] = -2;
        luthier__search_nearer(x, f, scale, x + pool[bi] * (size_t)f, pool, np, mind);
    }
done:
    luthier__free(pool);
    luthier__free(mind);
    luthier__free(scale);
    return s;
}

/* A model of (x, y): base continued with new trees (in base's own loss) when given, else a
   fresh fit with the search's parameters. */
LUTHIER_PRIVATE luthier_status luthier__search_model(const luthier__gbt *base, const float *x, const float *y, size_t n,
                                                     int f, int loss, uint64_t seed, luthier__gbt **out) {
    luthier__gbt_params p;
    luthier_status s;
    *out = NULL;
    if (base) {
        luthier__gbt *m = luthier__gbt_clone(base);
        if (!m) return LUTHIER_STATUS_OUT_OF_MEMORY;
        if ((s = luthier__gbt_fit_more(m, x, y, NULL, n, LUTHIER__SEARCH_TREES)) != LUTHIER_STATUS_OK) {
            luthier__gbt_free(m);
            return s;
        }
        *out = m;
        return LUTHIER_STATUS_OK;
    }
    memset(&p, 0, sizeof p);
    p.num_trees = LUTHIER__SEARCH_TREES;
    p.max_depth = LUTHIER__SEARCH_DEPTH;
    p.learning_rate = LUTHIER__SEARCH_LR;
    p.loss = loss;
    p.seed = seed;
    return luthier__gbt_fit(x, y, NULL, n, f, &p, out);
}

/* Fits the model of the measurements so far (log seconds; failures = twice the slowest). With
   augment (balance on), the unmeasured candidates with a balance prediction join the training
   set with that prediction: the model then knows every share of the measured groups (used for
   the model the search returns, which warm-starts other searches). */
LUTHIER_PRIVATE luthier_status luthier__search_fit(luthier__search_state *S, int augment, luthier__gbt **model) {
    const luthier__search_desc *d = S->d;
    const int f = S->f;
    double worst = -HUGE_VAL;
    size_t i, rows;
    *model = NULL;
    for (i = 0; i < S->count; i++)
        if (S->msec[i] > 0 && log(S->msec[i]) - d->y_offset > worst) worst = log(S->msec[i]) - d->y_offset;
    if (worst == -HUGE_VAL) return LUTHIER_STATUS_OK; /* nothing succeeded yet: no model */
    for (i = 0; i < S->count; i++) {
        memcpy(S->tx + i * (size_t)f, d->features + S->midx[i] * (size_t)f, sizeof(float) * (size_t)f);
        S->ty[i] = (float)(S->msec[i] > 0 ? log(S->msec[i]) - d->y_offset : worst + log(2.0));
    }
    rows = S->count;
    if (S->busy && augment)
        for (i = 0; i < S->n; i++) {
            double b;
            if (S->measured[i] || !((b = luthier__search_balance_predict(S, i)) > 0)) continue;
            memcpy(S->tx + rows * (size_t)f, d->features + i * (size_t)f, sizeof(float) * (size_t)f);
            S->ty[rows++] = (float)(log(b) - d->y_offset);
        }
    return luthier__search_model(d->warm, S->tx, S->ty, rows, f, d->loss, d->seed ^ 0x6a09e667f3bcc909ull, model);
}

/* The k best-ranked unmeasured candidates by model m, plus `nexplore` random ones. */
LUTHIER_PRIVATE void luthier__search_rank(luthier__search_state *S, const luthier__gbt *m, size_t k,
                                          size_t nexplore, size_t *pick, size_t *npick) {
    const int f = S->f;
    size_t i, nk = 0;
    for (i = 0; i < S->n; i++)
        if (!S->measured[i]) S->keys[nk++] = luthier__search_key_of(S, i, luthier__gbt_predict(m, S->d->features + i * (size_t)f));
    qsort(S->keys, nk, sizeof *S->keys, luthier__search_cmp_key);
    for (i = 0; i < nk && i < k; i++) pick[(*npick)++] = S->keys[i].index;
    /* exploration: random among the rest */
    for (i = 0; i < nexplore && k + i < nk; i++) {
        const size_t r = k + i + luthier__gbt_below(&S->rng, nk - k - i);
        const luthier__search_key t = S->keys[r];
        S->keys[r] = S->keys[k + i];
        S->keys[k + i] = t;
        pick[(*npick)++] = t.index;
    }
}

/* A batch of k + nexplore when balance is on: first, up to half of k among the candidates whose
   balance prediction beats the best measured time (best predicted first); then the model's
   best-ranked candidates of the others, one per group (a group's first measurement gives the
   costs that predict all its shares); then more balance-predicted ones, best first, and
   random ones among the model's. */
LUTHIER_PRIVATE void luthier__search_pick(luthier__search_state *S, const luthier__gbt *m, size_t k, size_t nexplore,
                                          size_t *pick, size_t *npick) {
    const int f = S->f;
    size_t i, nb = 0, nk = 0, nm = 0, nq = 0;
    const size_t quota = (k + 1) / 2;
    luthier__search_key *bal = S->keys, *mod;
    if (!S->busy) {
        luthier__search_rank(S, m, k, nexplore, pick, npick);
        return;
    }
    /* keys: balance-predicted candidates from the front, the others from the back */
    for (i = 0; i < S->n; i++) {
        double b;
        luthier__search_key *key;
        if (S->measured[i]) continue;
        b = luthier__search_balance_predict(S, i);
        if (!(b > 0) && !luthier__search_informative(S, i)) continue;
        key = b > 0 ? &bal[nb++] : &S->keys[S->n - 1 - nm++];
        *key = luthier__search_key_of(S, i, b > 0 ? (float)b : luthier__gbt_predict(m, S->d->features + i * (size_t)f));
    }
    mod = S->keys + (S->n - nm);
    qsort(bal, nb, sizeof *bal, luthier__search_cmp_key);
    qsort(mod, nm, sizeof *mod, luthier__search_cmp_key);
    memset(S->taken, 0, (size_t)S->d->num_groups);
    for (; nq < nb && nk < quota && (S->best == SIZE_MAX || bal[nq].pred < S->best_seconds); nq++, nk++)
        pick[(*npick)++] = bal[nq].index;
    for (i = 0; i < nm && nk < k; i++) {
        const int g = S->d->group[mod[i].index];
        if (g >= 0 && S->taken[g]) continue;
        if (g >= 0) S->taken[g] = 1;
        pick[(*npick)++] = mod[i].index;
        mod[i].pred = -HUGE_VALF; /* (marks it picked) */
        nk++;
    }
    for (; nq < nb && nk < k; nq++, nk++) pick[(*npick)++] = bal[nq].index;
    /* exploration: random among the model's unpicked candidates */
    for (i = 0; i < nexplore && nm > 0; i++) {
        int tries;
        for (tries = 0; tries < 8; tries++) {
            const size_t r = luthier__gbt_below(&S->rng, nm);
            if (mod[r].pred == -HUGE_VALF) continue;
            mod[r].pred = -HUGE_VALF;
            pick[(*npick)++] = mod[r].index;
            break;
        }
    }
}

/* luthier__search's arguments, before anything is allocated. */
LUTHIER_PRIVATE luthier_status luthier__search_check(const luthier__search_desc *d) {
    size_t i;
    if (!d->features || !d->measure || d->num_candidates == 0 || d->num_features <= 0 ||
        d->initial < 0 || d->batch < 0 || d->max_measurements < 0 || d->patience < 0 ||
        !(d->max_seconds >= 0) || !luthier__gbt_finite(d->y_offset) || !(d->explore == -1.0f || (d->explore >= 0 && d->explore <= 1)) ||
        (d->loss != LUTHIER__GBT_SQUARED && d->loss != LUTHIER__GBT_PAIRWISE) || d->num_clusters < 0 ||
        d->num_clusters > 64 || (d->num_clusters > 0 && (!d->shares || !d->group || d->num_groups <= 0)))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (d->num_candidates >= (size_t)UINT32_MAX || d->num_features > LUTHIER__GBT_MAX_FEATURES ||
        d->num_candidates > SIZE_MAX / sizeof(float) / (size_t)d->num_features)
        return LUTHIER_STATUS_OVERFLOW;
    if (d->warm && d->warm->num_features != d->num_features) return LUTHIER_STATUS_INCOMPATIBLE;
    for (i = 0; i < d->num_candidates * (size_t)d->num_features; i++)
        if (!luthier__gbt_finite(d->features[i])) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (d->num_clusters > 0) {
        if (d->num_candidates > SIZE_MAX / sizeof(float) / (size_t)d->num_clusters ||
            (size_t)d->num_groups > SIZE_MAX / sizeof(double) / (size_t)d->num_clusters)
            return LUTHIER_STATUS_OVERFLOW;
        for (i = 0; i < d->num_candidates; i++)
            if (d->group[i] < -1 || d->group[i] >= d->num_groups) return LUTHIER_STATUS_INVALID_ARGUMENT;
        for (i = 0; i < d->num_candidates * (size_t)d->num_clusters; i++)
            if (!(d->shares[i] >= 0 && d->shares[i] <= 1)) return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    if (d->stratum)
        for (i = 0; i < d->num_candidates; i++)
            if (d->stratum[i] < -1) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return LUTHIER_STATUS_OK;
}

/* The search state for d: its arrays allocated (OUT_OF_MEMORY: free with luthier__search_close). */
LUTHIER_PRIVATE luthier_status luthier__search_open(luthier__search_state *S, const luthier__search_desc *d) {
    size_t i;
    memset(S, 0, sizeof *S);
    S->d = d;
    S->n = d->num_candidates;
    S->f = d->num_features;
    S->t0 = luthier__seconds();
    S->rng = d->seed;
    S->best = SIZE_MAX;
    S->budget = d->max_measurements > 0 && (size_t)d->max_measurements < S->n ? (size_t)d->max_measurements : S->n;
    S->measured = (unsigned char *)luthier__alloc(S->n);
    S->midx = (size_t *)luthier__alloc(sizeof(size_t) * S->budget);
    S->msec = (double *)luthier__alloc(sizeof(double) * S->budget);
    S->tx = (float *)luthier__alloc(sizeof(float) * (d->num_clusters > 0 ? S->n : S->budget) * (size_t)S->f);
    S->ty = (float *)luthier__alloc(sizeof(float) * (d->num_clusters > 0 ? S->n : S->budget));
    S->keys = (luthier__search_key *)luthier__alloc(sizeof(luthier__search_key) * S->n);
    S->pick = (size_t *)luthier__alloc(sizeof(size_t) * S->n);
    if (!S->measured || !S->midx || !S->msec || !S->tx || !S->ty || !S->keys || !S->pick) {
        return LUTHIER_STATUS_OUT_OF_MEMORY;
    }
    if (d->num_clusters > 0) {
        const size_t gc = (size_t)d->num_groups * (size_t)d->num_clusters;
        S->busy = (double *)luthier__alloc(sizeof(double) * (size_t)d->num_clusters);
        S->rate_sum = (double *)luthier__zalloc(sizeof(double) * gc);
        S->rate_n = (int *)luthier__zalloc(sizeof(int) * gc);
        S->ovh_sum = (double *)luthier__zalloc(sizeof(double) * (size_t)d->num_groups);
        S->ovh_n = (int *)luthier__zalloc(sizeof(int) * (size_t)d->num_groups);
        S->taken = (unsigned char *)luthier__alloc((size_t)d->num_groups);
        if (!S->busy || !S->rate_sum || !S->rate_n || !S->ovh_sum || !S->ovh_n || !S->taken) {
            return LUTHIER_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < S->n; i++) S->informative += (size_t)luthier__search_all_shares(d, i);
    }
    memset(S->measured, 0, S->n);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE void luthier__search_close(luthier__search_state *S) {
    luthier__free(S->measured);
    luthier__free(S->midx);
    luthier__free(S->msec);
    luthier__free(S->tx);
    luthier__free(S->ty);
    luthier__free(S->keys);
    luthier__free(S->pick);
    luthier__free(S->busy);
    luthier__free(S->rate_sum);
    luthier__free(S->rate_n);
    luthier__free(S->ovh_sum);
    luthier__free(S->ovh_n);
    luthier__free(S->taken);
}

LUTHIER__UNUSED LUTHIER_PRIVATE luthier_status luthier__search(const luthier__search_desc *d, luthier__search_result *r,
                                                              luthier__gbt **model_out) {
    luthier__search_state S;
    luthier__gbt *model = NULL;
    luthier_status s = LUTHIER_STATUS_OK;
    size_t initial, batch, nexp, npick;
    int patience, stale = 0, rounds = 0;
    float explore;
    if (model_out) *model_out = NULL;
    if (r) {
        memset(r, 0, sizeof *r);
        r->best = SIZE_MAX;
    }
    if (!d || !r) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((s = luthier__search_check(d)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__search_open(&S, d)) != LUTHIER_STATUS_OK) goto done;

    /* with balance, smaller batches: a group's first measurement predicts all its shares, so
       the next batch is better informed (simulated machines, 40 seeds: 8 then 4 missed 3 % in
       3 of 960 searches; 16 then 8 left too few rounds to follow the predictions and missed
       several times more often) */
    initial = d->initial > 0 ? (size_t)d->initial
              : S.busy ? 8 : (size_t)(d->num_features < 8 ? 8 : d->num_features > 16 ? 16 : d->num_features);
    batch = d->batch > 0 ? (size_t)d->batch : S.busy ? 4 : (initial / 2 < 4 ? 4 : initial / 2);
    explore = d->explore == 0 ? 0.1f : d->explore < 0 ? 0.0f : d->explore;
    patience = d->patience > 0 ? d->patience : 3;

    /* first batch: a candidate per stratum, then the warm model's picks, else a diverse set */
    npick = 0;
    luthier__search_cover(&S, d->warm, initial < S.budget ? initial : S.budget, S.pick, &npick);
    luthier__search_measure(&S, S.pick, npick);
    {
        const size_t left = initial > npick ? initial - npick : 0;
        npick = 0;
        nexp = (size_t)floor((double)explore * (double)left + 0.5);
        if (left == 0) {
            /* the strata filled the first batch */
        } else if (d->warm) {
            luthier__search_pick(&S, d->warm, left - (nexp < left ? nexp : left), nexp, S.pick, &npick);
        } else if (d->prior) {
            luthier__search_prior_pick(&S, left - (nexp < left ? nexp : left), S.pick, &npick);
            luthier__search_measure(&S, S.pick, npick);
            npick = 0;
            if (nexp > 0 && (s = luthier__search_diverse(&S, nexp, S.pick, &npick)) != LUTHIER_STATUS_OK) goto done;
        } else {
            s = luthier__search_diverse(&S, left, S.pick, &npick);
            if (s != LUTHIER_STATUS_OK) goto done;
        }
    }
    luthier__search_measure(&S, S.pick, npick);
    rounds = 1;

    nexp = (size_t)floor((double)explore * (double)batch + 0.5);
    if (explore > 0 && nexp == 0 && batch >= 2) nexp = 1;
    if (nexp >= batch) nexp = batch - 1;
    while (!luthier__search_out_of_budget(&S) && S.count < S.n && stale < patience) {
        const double before = S.best_seconds;
        const size_t had_best = S.best;
        const size_t count0 = S.count;
        luthier__gbt_free(model);
        model = NULL;
        s = luthier__search_fit(&S, 0, &model);
        if (s != LUTHIER_STATUS_OK) goto done;
        npick = 0;
        if (model) luthier__search_pick(&S, model, batch - nexp, nexp, S.pick, &npick);
        else if ((s = luthier__search_diverse(&S, batch, S.pick, &npick)) != LUTHIER_STATUS_OK) goto done;
        luthier__search_measure(&S, S.pick, npick);
        rounds++;
        if (S.count == count0) break; /* nothing left to pick */
        if (S.best != SIZE_MAX && (had_best == SIZE_MAX || S.best_seconds < before * (1.0 - 0.005))) stale = 0;
        else stale++;
    }
    if (model_out && S.count > 0) {
        luthier__gbt_free(model);
        model = NULL;
        s = luthier__search_fit(&S, 1, &model);
        if (s != LUTHIER_STATUS_OK) goto done;
        *model_out = model;
        model = NULL;
    }
done:
    r->best = S.best;
    r->best_seconds = S.best != SIZE_MAX ? S.best_seconds : 0;
    r->measurements = (int)S.count;
    r->rounds = rounds;
    r->seconds = luthier__seconds() - S.t0;
    luthier__gbt_free(model);
    luthier__search_close(&S);
    if (s == LUTHIER_STATUS_OK && S.best == SIZE_MAX) s = LUTHIER_STATUS_NOT_FOUND;
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_IMPLEMENTATION && !LUTHIER__GBT_IMPL_DONE */
