/* firmware.c - luthier the way a firmware image or an embedded app uses it.

   - All of the library's memory comes from one static pool the application owns (through
     LUTHIER_MALLOC / LUTHIER_FREE), the activation arena is bound by the caller, and nothing is
     allocated once the network runs (this program counts and checks it).
   - The weights are the application's own constant arrays, borrowed by the graph (not copied).
   - The tuned configuration comes from records held in memory (luthier_plan_desc.records_text),
     so planning opens no file; running never touches the file system.

   The network is a depthwise-separable keyword-spotting CNN (DS-CNN: 49 x 10 MFCC features in,
   12 classes out), the kind of model that runs on microcontroller-class and big.LITTLE
   devices alike.

   A product is made in two steps; this program does both:
     1. development, on the target board:  firmware --tune kws.records [SECONDS]
        tunes the network for that board (clusters, ISA, caches) and writes the records.
        Turn them into a C array for the image, e.g.  xxd -i kws.records > kws_records.h
        (add the terminating 0), and pass the array as records_text.
     2. the image:                        firmware [kws.records]
        boots (pool allocator, graph, plan from the records, arena), then runs inferences.
        Here the records are read at boot from the file named on the command line, standing
        in for the array in the image; without it every layer runs its default configuration.
   Records are keyed by machine: records made on another machine are ignored (with a note).

   Build: make examples   (or: cc -std=c99 -O2 -I. examples/firmware.c -o firmware -lpthread -lm)
   Exit status: 0 when the outputs are right and no allocation happened while running. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* what luthier.h defines for itself; it must precede every system header */
#endif
#include <stddef.h> /* size_t, for the allocator's declarations, needed before luthier.h */
static void *fw_malloc(size_t bytes);
static void fw_free(void *ptr);
#define LUTHIER_MALLOC(bytes) fw_malloc(bytes) /* every allocation of the library comes here */
#define LUTHIER_FREE(ptr) fw_free(ptr)
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the memory the application owns ------------------------------------------------------- */

#define POOL_BYTES (2u << 20) /* 2 MiB: weights, plan, context workspace, arena */
static unsigned char pool[POOL_BYTES];
static size_t pool_top;        /* bytes handed out (a bump allocator: boot-time allocations) */
static size_t pool_live;       /* bytes not freed yet */
static unsigned long pool_calls; /* allocations, counted: none may happen while running */
static int pool_off;           /* development mode (--tune): use the C library instead */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each block starts with a 16-byte header holding its size. Freed blocks are not reused: the
   library allocates while it boots and plans, not afterwards, so a bump allocator is enough
   (a general-purpose allocator over the same pool would reuse the freed scaffolding). */
static void *fw_malloc(size_t bytes) {
    size_t need = (bytes + 16 + 15) & ~(size_t)15;
    unsigned char *p = NULL;
    if (pool_off) return malloc(bytes);
    pthread_mutex_lock(&pool_lock);
    pool_calls++;
    if (bytes <= POOL_BYTES && need <= POOL_BYTES - pool_top) {
        p = pool + pool_top;
        memcpy(p, &bytes, sizeof bytes);
        pool_top += need;
        pool_live += bytes;
        p += 16;
    }
    pthread_mutex_unlock(&pool_lock);
    return p; /* NULL when the pool is exhausted: the library reports OUT_OF_MEMORY */
}

static void fw_free(void *ptr) {
    size_t bytes;
    if (!ptr) return;
    if (pool_off) {
        free(ptr);
        return;
    }
    memcpy(&bytes, (unsigned char *)ptr - 16, sizeof bytes);
    pthread_mutex_lock(&pool_lock);
    pool_live -= bytes;
    pthread_mutex_unlock(&pool_lock);
}

/* ---- the network: DS-CNN, weights as the application's constant data ---------------------- */

enum { IN_H = 49, IN_W = 10, CH = 64, BLOCKS = 4, CLASSES = 12 };

/* In a product these arrays are `const` data exported from training; here they are filled
   once at boot with reproducible values (uniform, scaled by 1/sqrt(fan-in)). */
static float w_conv1[CH * 1 * 10 * 4], w_dw[BLOCKS][CH * 1 * 3 * 3], w_pw[BLOCKS][CH * CH * 1 * 1];
static float bn[1 + 2 * BLOCKS][4][CH]; /* per batch norm: scale, shift, mean, variance */
static float w_fc[CLASSES * CH], b_fc[CLASSES];

static void fill(float *x, size_t n, double scale, uint32_t *seed) {
    size_t i;
    for (i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        x[i] = (float)(((double)(*seed >> 8) / 16777216.0 * 2.0 - 1.0) * scale);
    }
}

static void make_weights(void) {
    uint32_t seed = 2024;
    int b, c;
    fill(w_conv1, sizeof w_conv1 / sizeof(float), 1.0 / sqrt(40.0), &seed);
    for (b = 0; b < BLOCKS; b++) {
        fill(w_dw[b], CH * 9, 1.0 / 3.0, &seed);
        fill(w_pw[b], CH * CH, 1.0 / 8.0, &seed);
    }
    for (b = 0; b < 1 + 2 * BLOCKS; b++)
        for (c = 0; c < CH; c++) {
            bn[b][0][c] = 1.0f + 0.1f * (float)((c * 7 + b) % 5 - 2);
            bn[b][1][c] = 0.05f * (float)((c * 3 + b) % 7 - 3);
            bn[b][2][c] = 0.02f * (float)((c + b) % 9 - 4);
            bn[b][3][c] = 0.5f + 0.1f * (float)((c * 5 + b) % 6);
        }
    fill(w_fc, CLASSES * CH, 1.0 / 8.0, &seed);
    fill(b_fc, CLASSES, 0.1, &seed);
}

/* conv (no bias) -> batch norm -> ReLU; the plan folds the batch norm and fuses the ReLU. */
static int conv_bn_relu(luthier_graph *g, int x, const char *name, int64_t out_c, int64_t in_c_per_group,
                        int64_t kh, int64_t kw, int64_t stride, const int64_t pads[4], int64_t groups,
                        const float *w, int bn_index) {
    int64_t ws[4], cs[1] = {CH};
    int t_w, t_bn[4], in[5], y, i;
    char nm[64];
    luthier_node_desc n;
    ws[0] = out_c, ws[1] = in_c_per_group, ws[2] = kh, ws[3] = kw;
    snprintf(nm, sizeof nm, "%s.weight", name);
    if (luthier_graph_constant(g, nm, 4, ws, w, 0 /* borrow: no copy */, &t_w)) return -1;
    for (i = 0; i < 4; i++) {
        snprintf(nm, sizeof nm, "%s.bn%d", name, i);
        if (luthier_graph_constant(g, nm, 1, cs, bn[bn_index][i], 0, &t_bn[i])) return -1;
    }
    memset(&n, 0, sizeof n);
    in[0] = x, in[1] = t_w;
    n.op = LUTHIER_OP_CONV2D, n.name = name, n.inputs = in, n.num_inputs = 2;
    n.stride[0] = n.stride[1] = stride, n.groups = groups;
    memcpy(n.pads, pads, sizeof n.pads);
    if (luthier_graph_add_node(g, &n, &y)) return -1;
    memset(&n, 0, sizeof n);
    in[0] = y, in[1] = t_bn[0], in[2] = t_bn[1], in[3] = t_bn[2], in[4] = t_bn[3];
    n.op = LUTHIER_OP_BATCH_NORM, n.inputs = in, n.num_inputs = 5;
    if (luthier_graph_add_node(g, &n, &y)) return -1;
    memset(&n, 0, sizeof n);
    in[0] = y;
    n.op = LUTHIER_OP_RELU, n.inputs = in, n.num_inputs = 1;
    return luthier_graph_add_node(g, &n, &y) ? -1 : y;
}

static luthier_status build_dscnn(luthier_graph **out) {
    static const int64_t pad_stem[4] = {4, 1, 5, 2}, pad_same[4] = {1, 1, 1, 1}, pad_none[4] = {0, 0, 0, 0};
    const int64_t xs[4] = {1, 1, IN_H, IN_W}, fs[2] = {CLASSES, CH}, bs[1] = {CLASSES};
    luthier_graph *g;
    luthier_node_desc n;
    int x, t_fc, t_bfc, in[3], b;
    char nm[32];
    luthier_status s = luthier_graph_create(&g);
    if (s) return s;
    *out = g;
    if ((s = luthier_graph_input(g, "mfcc", LUTHIER_DTYPE_F32, 4, xs, &x))) return s;
    if ((x = conv_bn_relu(g, x, "conv1", CH, 1, 10, 4, 2, pad_stem, 1, w_conv1, 0)) < 0) return LUTHIER_STATUS_INVALID_ARGUMENT;
    for (b = 0; b < BLOCKS; b++) {
        snprintf(nm, sizeof nm, "block%d.dw", b + 1);
        if ((x = conv_bn_relu(g, x, nm, CH, 1, 3, 3, 1, pad_same, CH, w_dw[b], 1 + 2 * b)) < 0) return LUTHIER_STATUS_INVALID_ARGUMENT;
        snprintf(nm, sizeof nm, "block%d.pw", b + 1);
        if ((x = conv_bn_relu(g, x, nm, CH, CH, 1, 1, 1, pad_none, 1, w_pw[b], 2 + 2 * b)) < 0) return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    memset(&n, 0, sizeof n);
    in[0] = x;
    n.op = LUTHIER_OP_GLOBAL_AVGPOOL, n.name = "pool", n.inputs = in, n.num_inputs = 1;
    if ((s = luthier_graph_add_node(g, &n, &x))) return s;
    in[0] = x;
    n.op = LUTHIER_OP_FLATTEN, n.name = "flatten";
    if ((s = luthier_graph_add_node(g, &n, &x))) return s;
    if ((s = luthier_graph_constant(g, "fc.weight", 2, fs, w_fc, 0, &t_fc)) ||
        (s = luthier_graph_constant(g, "fc.bias", 1, bs, b_fc, 0, &t_bfc)))
        return s;
    in[0] = x, in[1] = t_fc, in[2] = t_bfc;
    n.op = LUTHIER_OP_DENSE, n.name = "fc", n.inputs = in, n.num_inputs = 3;
    if ((s = luthier_graph_add_node(g, &n, &x))) return s;
    memset(&n, 0, sizeof n);
    in[0] = x;
    n.op = LUTHIER_OP_SOFTMAX, n.name = "probabilities", n.inputs = in, n.num_inputs = 1, n.axis = -1;
    if ((s = luthier_graph_add_node(g, &n, &x))) return s;
    return luthier_graph_output(g, x);
}

/* ---- boot, then run ------------------------------------------------------------------------ */

static char records_text[64 * 1024]; /* stands in for the records array of the image */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, luthier_status s, luthier_context *ctx, luthier_graph *g) {
    fprintf(stderr, "%s: %s: %s\n", what, luthier_status_string(s),
            ctx ? luthier_context_error(ctx) : g ? luthier_graph_error(g) : "");
    return 1;
}

/* Development step: tune on this board and write the records. */
static int tune(const char *path, double seconds) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_graph *g = NULL;
    luthier_tune_desc td;
    luthier_tune_result r;
    luthier_status s;
    pool_off = 1; /* tuning is a development-time job: ordinary heap */
    memset(&cd, 0, sizeof cd);
    if ((s = luthier_context_create(&cd, &ctx))) return fail("context", s, NULL, NULL);
    if ((s = build_dscnn(&g))) return fail("graph", s, NULL, g);
    memset(&td, 0, sizeof td);
    td.budget_seconds = seconds;
    td.progress = 1;
    s = luthier_tune(ctx, g, &td, path, &r);
    if (s) return fail("tune", s, ctx, NULL);
    printf("tuned %d layers (%d tasks) in %.1f s: sum of layer times %.3f -> %.3f ms; records: %s\n", r.ops, r.tasks,
           r.seconds, r.default_ms, r.tuned_ms, path);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    return 0;
}

int main(int argc, char **argv) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_graph *g = NULL;
    luthier_plan *plan = NULL, *plan_default = NULL;
    luthier_plan_desc pd;
    luthier_plan_info info;
    luthier_status s;
    static float mfcc[IN_H * IN_W], probs[CLASSES], probs_default[CLASSES];
    const void *in[1];
    void *out[1];
    unsigned char *arena;
    unsigned long calls_at_boot;
    size_t arena_bytes;
    double t0, best = 1e30, maxdiff = 0, sum = 0;
    uint32_t seed = 7;
    int i, top = 0, matched = 0, runs = 200;

    make_weights();
    if (argc >= 3 && strcmp(argv[1], "--tune") == 0) return tune(argv[2], argc > 3 ? atof(argv[3]) : 10.0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [RECORDS]   or   %s --tune RECORDS [SECONDS]\n", argv[0], argv[0]);
        return 2;
    }
    if (argc == 2) { /* in the image, records_text would be a const array: no file at all */
        FILE *f = fopen(argv[1], "rb");
        size_t n = f ? fread(records_text, 1, sizeof records_text - 1, f) : 0;
        if (!f || !feof(f)) {
            fprintf(stderr, "%s: cannot read it (or larger than %zu bytes)\n", argv[1], sizeof records_text - 1);
            if (f) fclose(f);
            return 1;
        }
        fclose(f);
        records_text[n] = 0;
    }

    /* Boot: context, graph, plans, arena. Every byte below comes from `pool`. */
    memset(&cd, 0, sizeof cd);
    if ((s = luthier_context_create(&cd, &ctx))) return fail("context", s, NULL, NULL);
    if ((s = build_dscnn(&g))) return fail("graph", s, NULL, g);
    memset(&pd, 0, sizeof pd);
    pd.external_arena = 1; /* the caller provides the activation memory */
    if ((s = luthier_plan_create(ctx, g, &pd, &plan_default))) return fail("plan", s, ctx, NULL);
    if (records_text[0]) {
        luthier_node_config cfg[64];
        pd.records_text = records_text;
        if (luthier_graph_num_nodes(g) <= 64 && luthier_records_apply_text(ctx, g, records_text, cfg, &matched) == LUTHIER_STATUS_OK &&
            luthier_context_error(ctx)[0])
            printf("records: %s\n", luthier_context_error(ctx));
    }
    if ((s = luthier_plan_create(ctx, g, &pd, &plan))) return fail("plan from records", s, ctx, NULL);
    luthier_graph_destroy(g); /* the plans keep what they need */
    luthier_plan_get_info(plan, &info);
    arena_bytes = info.arena_bytes;
    luthier_plan_get_info(plan_default, &info);
    if (info.arena_bytes > arena_bytes) arena_bytes = info.arena_bytes;
    /* One arena serves both plans (they never run at the same time); 64-byte aligned. */
    arena = (unsigned char *)fw_malloc(arena_bytes + 64);
    if (!arena) return fail("arena", LUTHIER_STATUS_OUT_OF_MEMORY, NULL, NULL);
    arena += (64 - (uintptr_t)arena % 64) % 64;
    if ((s = luthier_plan_bind_arena(plan, arena, arena_bytes)) || (s = luthier_plan_bind_arena(plan_default, arena, arena_bytes)))
        return fail("bind arena", s, NULL, NULL);
    luthier_plan_get_info(plan, &info);
    calls_at_boot = pool_calls;
    printf("booted: %d threads; %d steps, %.2f MFLOP per inference; %d of %d conv/dense layers configured from records\n",
           luthier_context_num_threads(ctx), info.num_steps, info.flops * 1e-6, matched, 1 + 2 * BLOCKS + 1);
    printf("memory: pool %zu KiB handed out (%zu KiB live) of %u KiB; in it: packed weights %.1f KiB, arena %.1f KiB, "
           "workspace %.1f KiB\n",
           pool_top >> 10, pool_live >> 10, POOL_BYTES >> 10, info.weights_bytes / 1024.0, arena_bytes / 1024.0,
           info.workspace_bytes / 1024.0);

    /* Run: many inferences, nothing allocated. */
    fill(mfcc, IN_H * IN_W, 1.0, &seed);
    in[0] = mfcc;
    out[0] = probs_default;
    if ((s = luthier_plan_run(ctx, plan_default, in, out))) return fail("run", s, ctx, NULL);
    out[0] = probs;
    for (i = 0; i < runs; i++) {
        t0 = now_s();
        if ((s = luthier_plan_run(ctx, plan, in, out))) return fail("run", s, ctx, NULL);
        if ((t0 = now_s() - t0) < best) best = t0;
    }
    for (i = 0; i < CLASSES; i++) {
        const double d = fabs((double)probs[i] - probs_default[i]);
        if (!(d <= maxdiff)) maxdiff = d;
        if (probs[i] > probs[top]) top = i;
        sum += probs[i];
    }
    printf("ran %d inferences: best %.3f ms; class %d (p = %.3f); probabilities sum to %.6f; "
           "tuned vs default configuration: max difference %.2g\n",
           runs, best * 1e3, top, (double)probs[top], sum, maxdiff);
    printf("allocations while running: %lu\n", pool_calls - calls_at_boot);

    luthier_plan_destroy(plan);
    luthier_plan_destroy(plan_default);
    luthier_context_destroy(ctx);
    return pool_calls != calls_at_boot || !(maxdiff < 1e-5) || !(fabs(sum - 1.0) < 1e-5);
}
