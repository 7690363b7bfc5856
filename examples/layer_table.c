/* layer_table.c - one convolution layer under every configuration: the three knobs, measured.

   luthier tunes three things per layer; this program makes them visible on one layer:
     1. the algorithm: how the convolution becomes matrix products (im2col + GEMM, implicit
        GEMM through an indirection buffer, 1x1 as a plain GEMM, Winograd F(2,3)/F(4,3)/F(6,3)
        which trades multiplies for transforms, depthwise direct loops);
     2. the kernel: the GEMM microkernel, i.e. the tile of the output computed in registers
        (e.g. 6x64 = 6 rows x 64 columns on AVX-512, 8x12 on NEON) and how it reads A;
     3. the workload distribution: which share of the output rows each CPU cluster computes.
   It runs the layer under every valid (algorithm, kernel, share) triple, checks each result
   against a plain loop, and prints the time of each, so you can see how much each knob matters
   and that the best choice is not the same for every layer (try a 1x1 or a depthwise layer).

   On a machine with one kind of core the program declares two "clusters" of equal CPUs
   (CPU 0, and the others) so that the share knob exists; with LUTHIER_CLUSTERS set (e.g.
   LUTHIER_CLUSTERS=big:4-5,little:0-3 on an RK3399) it uses the real ones.

   Build: make examples   (or: cc -std=c99 -O2 -I. examples/layer_table.c -o layer_table -lpthread -lm)
   Usage: layer_table [IN_CHANNELS SIZE OUT_CHANNELS KERNEL STRIDE [GROUPS]]
          default 64 28 64 3 1: a ResNet-18 3x3 convolution on a 28x28 image, padding kernel/2
          (so "64 28 64 1 1" is a pointwise layer, "96 28 96 3 1 96" a depthwise one)
   Exit status: 0 when every configuration computed the right result. */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fill(float *x, size_t n, unsigned seed) {
    size_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
    }
}

typedef struct row {
    luthier_conv_algorithm algorithm;
    char kernel[48];
    float share; /* of the first (fastest) cluster, in percent; -1 = dynamic scheduling */
    double ms, err;
} row;

static const char *share_name(const row *r, char *buf, size_t size) {
    if (r->share < 0) snprintf(buf, size, "dynamic");
    else snprintf(buf, size, "%.0f/%.0f", (double)r->share, 100.0 - r->share);
    return buf;
}

/* The layer's tensors (NHWC input x, OIHW weights w, bias, output y) and the reference output. */
typedef struct tensors {
    float *x, *w, *bias, *y, *ref;
    size_t nx, nw, ny;
} tensors;

/* The measured configurations, the fastest (best) and slowest times, and the failures. */
typedef struct table {
    row *rows;
    int nrows, best, failures;
    double best_ms, worst_ms;
} table;

/* The clusters into *topo: the machine's, or two declared ones (CPU 0, and the others) when it
   has one kind of core, so that the share knob exists. Returns 0, or 1 (said on stderr). */
static int detect_clusters(luthier_topology *topo) {
    char err[256];
    if (luthier_topology_detect(NULL, NULL, topo, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (topo->num_clusters == 1 && topo->clusters[0].num_cpus >= 2) {
        char spec[64];
        snprintf(spec, sizeof spec, "big:%d,little:%d-%d", topo->clusters[0].cpus[0], topo->clusters[0].cpus[1],
                 topo->clusters[0].cpus[topo->clusters[0].num_cpus - 1]);
        if (luthier_topology_detect(NULL, spec, topo, err, sizeof err) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s: %s\n", spec, err);
            return 1;
        }
        printf("one kind of core: declared two clusters (%s) so that the share knob exists\n", spec);
    }
    return 0;
}

/* The reference: the convolution's definition (padding kernel/2, ReLU), summed in double. */
static void reference_conv(const luthier_conv2d_desc *d, int64_t oh, int64_t ow, tensors *t) {
    const int ic = (int)d->in_channels, size = (int)d->in_h, oc = (int)d->out_channels;
    const int ks = (int)d->kernel_h, stride = (int)d->stride_h, groups = (int)d->groups;
    const int cpg = ic / groups, opg = oc / groups;
    int oy, ox, o, c, ky, kx;
    for (oy = 0; oy < oh; oy++)
        for (ox = 0; ox < ow; ox++)
            for (o = 0; o < oc; o++) {
                double acc = t->bias[o];
                const int g0 = (o / opg) * cpg;
                for (ky = 0; ky < ks; ky++)
                    for (kx = 0; kx < ks; kx++) {
                        const int iy = oy * stride - ks / 2 + ky, ix = ox * stride - ks / 2 + kx;
                        if (iy < 0 || iy >= size || ix < 0 || ix >= size) continue;
                        for (c = 0; c < cpg; c++) /* weights are OIHW: [o][c][ky][kx] */
                            acc += (double)t->x[((size_t)iy * size + ix) * ic + g0 + c] *
                                   t->w[(((size_t)o * cpg + c) * ks + ky) * ks + kx];
                    }
                t->ref[((size_t)oy * ow + ox) * oc + o] = (float)(acc > 0 ? acc : 0);
            }
}

/* max |y - ref| / max |ref| (a NaN in y counts as a mismatch). */
static double max_rel_error(const float *y, const float *ref, size_t n) {
    double e_max = 0, ymax = 0;
    size_t e;
    for (e = 0; e < n; e++) {
        const double diff = fabs((double)y[e] - ref[e]);
        if (!(diff <= e_max)) e_max = diff;
        if (fabs((double)ref[e]) > ymax) ymax = fabs((double)ref[e]);
    }
    return e_max / (ymax > 0 ? ymax : 1);
}

/* The fastest of several runs of the layer, in ms (at least 3 runs, more within 50 ms). */
static double fastest_ms(luthier_context *ctx, const luthier_conv2d_layer *layer, const float *x, float *y) {
    double t0, spent = 0, best = 1e30;
    int reps = 0;
    while (reps < 3 || (spent < 0.05 && reps < 200)) {
        t0 = now_s();
        luthier_conv2d_run(ctx, layer, x, y);
        t0 = now_s() - t0;
        spent += t0, reps++;
        if (t0 * 1e3 < best) best = t0 * 1e3;
    }
    return best;
}

/* One configuration: the layer d with algorithm a, kernel ki and the first cluster's share
   (percent; -1: dynamic scheduling) is created, run once and checked against the reference,
   then timed; the result becomes a row of the table. d keeps these settings afterwards. */
static void run_config(luthier_context *ctx, const luthier_topology *topo, luthier_conv2d_desc *d,
                       float ratios[2], int a, const luthier_kernel_info *ki, float share, const tensors *t,
                       table *tab) {
    luthier_conv2d_layer *layer = NULL;
    row *r = &tab->rows[tab->nrows];
    d->algorithm = (luthier_conv_algorithm)a;
    d->kernel = a == LUTHIER_CONV_DEPTHWISE ? NULL : ki->name;
    d->schedule = share < 0 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
    ratios[0] = share, ratios[1] = 100 - share;
    d->ratios = topo->num_clusters == 2 && share >= 0 ? ratios : NULL;
    d->num_ratios = d->ratios ? 2 : 0;
    if (luthier_conv2d_create(ctx, d, t->w, t->bias, &layer) != LUTHIER_STATUS_OK ||
        luthier_conv2d_run(ctx, layer, t->x, t->y) != LUTHIER_STATUS_OK) {
        printf("%-14s %-40s error: %s\n", luthier_conv_algorithm_name(d->algorithm), ki->name,
               luthier_context_error(ctx));
        luthier_conv2d_destroy(layer);
        tab->failures++;
        return;
    }
    r->err = max_rel_error(t->y, t->ref, t->ny);
    r->ms = fastest_ms(ctx, layer, t->x, t->y);
    luthier_conv2d_destroy(layer);
    r->algorithm = d->algorithm;
    snprintf(r->kernel, sizeof r->kernel, "%s",
             a == LUTHIER_CONV_DEPTHWISE ? "(direct)" : ki->name + strlen("luthier_sgemm_ukernel_"));
    r->share = topo->num_clusters >= 2 ? share : 100;
    if (!(r->err <= 1e-4)) tab->failures++;
    if (r->ms < tab->best_ms) tab->best_ms = r->ms, tab->best = tab->nrows;
    if (r->ms > tab->worst_ms) tab->worst_ms = r->ms;
    tab->nrows++;
}

/* Every valid algorithm x kernel x share, one row each. An algorithm's validity is asked of the
   layer itself (no kernel named: any kernel that suits it), not of the last configuration's. */
static void run_all(luthier_context *ctx, const luthier_topology *topo, luthier_conv2d_desc *d, const tensors *t,
                    table *tab) {
    static const float shares[] = {100, 75, 50, 25, -1};
    const int nk = luthier_kernel_count();
    float ratios[2];
    int a, k, s;
    for (a = 1; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++) {
        luthier_conv2d_desc layer = *d;
        layer.kernel = NULL;
        layer.ratios = NULL;
        layer.num_ratios = 0;
        if (luthier_conv2d_algorithm_valid(ctx, &layer, (luthier_conv_algorithm)a) != LUTHIER_STATUS_OK) {
            printf("%-14s not valid here: %s\n", luthier_conv_algorithm_name((luthier_conv_algorithm)a),
                   luthier_context_error(ctx));
            continue;
        }
        for (k = 0; k < nk; k++) {
            luthier_kernel_info ki;
            luthier_kernel_get(k, &ki);
            if (a == LUTHIER_CONV_DEPTHWISE && k > 0) break; /* no GEMM kernel: one set of rows */
            if (a != LUTHIER_CONV_DEPTHWISE &&
                (!ki.available || (strcmp(ki.isa, "scalar") == 0 && nk > 2) ||
                 (a == LUTHIER_CONV_IMPLICIT_GEMM && ki.kind != LUTHIER_KERNEL_HYBRID)))
                continue; /* not on this CPU; the scalar oracle is slow; implicit GEMM needs a hybrid kernel */
            for (s = 0; s < (int)(sizeof shares / sizeof shares[0]); s++) {
                if (topo->num_clusters < 2 && s > 0) break;
                run_config(ctx, topo, d, ratios, a, &ki, shares[s], t, tab);
            }
        }
    }
}

/* Every configuration's row: time, GFLOP/s, against the best, error. */
static void print_table(const table *tab, double flops) {
    char text[64];
    int i;
    printf("%-14s %-32s %-9s %9s %8s %7s %9s\n", "algorithm", "kernel", "share", "ms", "GFLOP/s", "vs best", "error");
    for (i = 0; i < tab->nrows; i++) {
        const row *r = &tab->rows[i];
        const char *share = share_name(r, text, sizeof text);
        printf("%-14s %-32s %-9s %9.3f %8.1f %6.2fx %9.1e%s\n", luthier_conv_algorithm_name(r->algorithm), r->kernel,
               share, r->ms, flops / r->ms * 1e-6, r->ms / tab->best_ms, r->err,
               !(r->err <= 1e-4) ? "  WRONG" : i == tab->best ? "  <- best" : "");
    }
}

/* The fastest configuration of each algorithm. */
static void print_best_per_algorithm(const table *tab) {
    const row *rows = tab->rows;
    char text[64];
    int a;
    printf("\nthe best of each algorithm:\n");
    for (a = 1; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++) {
        int i, b = -1;
        for (i = 0; i < tab->nrows; i++)
            if (rows[i].algorithm == (luthier_conv_algorithm)a && (b < 0 || rows[i].ms < rows[b].ms)) b = i;
        if (b >= 0)
            printf("  %-14s %-32s %-9s %9.3f ms %6.2fx the best\n", luthier_conv_algorithm_name(rows[b].algorithm),
                   rows[b].kernel, share_name(&rows[b], text, sizeof text), rows[b].ms, rows[b].ms / tab->best_ms);
    }
}

int main(int argc, char **argv) {
    luthier_conv2d_desc d;
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_topology topo;
    char text[1024];
    tensors t;
    table tab;
    int64_t oh, ow;
    double flops;
    int ic = 64, size = 28, oc = 64, ks = 3, stride = 1, groups = 1;

    if (argc >= 6) {
        ic = atoi(argv[1]), size = atoi(argv[2]), oc = atoi(argv[3]), ks = atoi(argv[4]), stride = atoi(argv[5]);
        groups = argc > 6 ? atoi(argv[6]) : 1;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [IN_CHANNELS SIZE OUT_CHANNELS KERNEL STRIDE [GROUPS]]\n", argv[0]);
        return 2;
    }
    memset(&d, 0, sizeof d);
    d.batch = 1, d.in_channels = ic, d.in_h = d.in_w = size, d.out_channels = oc;
    d.kernel_h = d.kernel_w = ks, d.stride_h = d.stride_w = stride, d.groups = groups;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = ks / 2;
    d.layout = LUTHIER_LAYOUT_NHWC; /* channels last: the layout luthier runs networks in */
    d.activation = LUTHIER_ACTIVATION_RELU;
    if (luthier_conv2d_output_size(&d, &oh, &ow) != LUTHIER_STATUS_OK || ic <= 0 || oc <= 0 || groups <= 0 ||
        ic % groups || oc % groups) {
        fprintf(stderr, "not a valid layer: %d channels %dx%d -> %d channels, kernel %d, stride %d, groups %d\n",
                ic, size, size, oc, ks, stride, groups);
        return 2;
    }

    /* The clusters: the machine's, or two declared ones when it has one kind of core. */
    memset(&cd, 0, sizeof cd);
    if (detect_clusters(&topo) != 0) return 1;
    cd.topology = &topo;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    luthier_topology_format(&topo, text, sizeof text);
    printf("clusters:\n%s", text);

    /* Data, and the reference: the convolution's definition, summed in double. */
    t.nx = (size_t)size * size * ic, t.nw = (size_t)oc * (ic / groups) * ks * ks, t.ny = (size_t)oh * ow * oc;
    t.x = (float *)malloc(t.nx * sizeof *t.x), t.w = (float *)malloc(t.nw * sizeof *t.w);
    t.bias = (float *)malloc(oc * sizeof *t.bias);
    t.y = (float *)malloc(t.ny * sizeof *t.y), t.ref = (float *)malloc(t.ny * sizeof *t.ref);
    memset(&tab, 0, sizeof tab);
    tab.rows = (row *)malloc(sizeof *tab.rows * (size_t)LUTHIER_CONV_ALGORITHM_COUNT *
                             (size_t)(luthier_kernel_count() + 1) * 5);
    if (!t.x || !t.w || !t.bias || !t.y || !t.ref || !tab.rows) return 1;
    fill(t.x, t.nx, 1), fill(t.w, t.nw, 2), fill(t.bias, (size_t)oc, 3);
    reference_conv(&d, oh, ow, &t);
    flops = 2.0 * (double)t.ny * (ic / groups) * ks * ks;
    printf("layer: %d x %dx%d -> %d x %lldx%lld, kernel %dx%d, stride %d, groups %d, ReLU: %.1f MFLOP\n\n", ic, size,
           size, oc, (long long)oh, (long long)ow, ks, ks, stride, groups, flops * 1e-6);

    /* Every algorithm x kernel x share, then the table. */
    tab.best = -1, tab.best_ms = 1e30, tab.worst_ms = 0;
    run_all(ctx, &topo, &d, &t, &tab);
    print_table(&tab, flops);
    print_best_per_algorithm(&tab);
    if (tab.best >= 0)
        printf("%d configurations; the best is %.1fx faster than the worst.\n"
               "share: the first cluster's percentage of the output rows (dynamic: handed out on demand).\n"
               "Winograd's error is larger by design (the same sum computed through transforms); the limit is 1e-4.\n",
               tab.nrows, tab.worst_ms / tab.best_ms);
    if (tab.failures) printf("%d configuration(s) FAILED\n", tab.failures);
    luthier_context_destroy(ctx);
    free(t.x), free(t.w), free(t.bias), free(t.y), free(t.ref), free(tab.rows);
    return tab.failures ? 1 : 0;
}
