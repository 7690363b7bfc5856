/* Shared by the libFuzzer targets tests/fuzz_*.c: one context, a checked failure, and planning +
   running a graph under a memory and work cap.

   Each target is one translation unit. By default it compiles the implementation itself; with
   FUZZ_SEPARATE_IMPL it links against an engine compiled apart (the Makefile's `fuzz` target
   builds build/fuzz/engine.o once, instrumented with ASan + UBSan + coverage, and links every
   target against it: the engine takes minutes to compile instrumented).

   What a target checks, beyond the sanitizers: every failing call says why (a non-empty message);
   a plan that runs gives the same outputs twice, with the arena and the output buffers filled
   with different garbage before each run (a step that reads memory it did not write shows up as
   a difference). */
#ifndef LUTHIER_FUZZ_COMMON_H
#define LUTHIER_FUZZ_COMMON_H

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#ifndef FUZZ_SEPARATE_IMPL
#define LUTHIER_IMPLEMENTATION
#endif
#include "luthier.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* helpers a target may leave unused */
#define FUZZ_FN static __attribute__((unused))

/* A broken promise of the library: report it and crash, so that libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "fuzz check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

/* What fuzz_plan_run did, printed at exit when FUZZ_STATS is set (e.g. over a corpus with
   -runs=0: how much of it reaches the engine). */
static unsigned long fuzz_stat_plans, fuzz_stat_plan_failed, fuzz_stat_capped, fuzz_stat_ran, fuzz_stat_run_failed;
static void fuzz_print_stats(void) {
    fprintf(stderr, "fuzz stats: %lu plans made, %lu refused; %lu over the caps, %lu ran twice, %lu runs refused\n",
            fuzz_stat_plans, fuzz_stat_plan_failed, fuzz_stat_capped, fuzz_stat_ran, fuzz_stat_run_failed);
}

/* One context for the whole run (1 thread: no workers, deterministic results). */
FUZZ_FN luthier_context *fuzz_context(void) {
    static luthier_context *ctx;
    if (!ctx) {
        luthier_context_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.num_threads = 1;
        FUZZ_CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK);
        if (getenv("FUZZ_STATS")) atexit(fuzz_print_stats);
    }
    return ctx;
}

/* Reads bytes, then zeros once they run out. */
typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n, i;
} fuzz_reader;

FUZZ_FN unsigned fuzz_u8(fuzz_reader *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
FUZZ_FN unsigned fuzz_u16(fuzz_reader *r) {
    unsigned lo = fuzz_u8(r);
    return lo | fuzz_u8(r) << 8;
}
/* in [lo, hi] */
FUZZ_FN int fuzz_range(fuzz_reader *r, int lo, int hi) { return lo + (int)(fuzz_u8(r) % (unsigned)(hi - lo + 1)); }

/* Elements of a tensor, 0 when the count is over 2^40 (nothing the targets would run). */
FUZZ_FN size_t fuzz_numel(const luthier_tensor_info *ti) {
    uint64_t n = 1;
    int i;
    for (i = 0; i < ti->rank; i++) {
        if (ti->shape[i] < 0 || (ti->shape[i] && n > ((uint64_t)1 << 40) / (uint64_t)ti->shape[i])) return 0;
        n *= (uint64_t)ti->shape[i];
    }
    return (size_t)n;
}

FUZZ_FN size_t fuzz_dtype_bytes(luthier_dtype t) { return t == LUTHIER_DTYPE_I64 ? 8 : 4; }

/* Bytes of every tensor of g together (saturating at SIZE_MAX): a graph over the cap is not
   planned at all, so that no step asks for gigabytes. */
FUZZ_FN size_t fuzz_graph_bytes(const luthier_graph *g) {
    size_t sum = 0;
    int t;
    for (t = 0; t < luthier_graph_num_tensors(g); t++) {
        luthier_tensor_info ti;
        size_t n;
        FUZZ_CHECK(luthier_graph_tensor_info(g, t, &ti) == LUTHIER_STATUS_OK);
        n = fuzz_numel(&ti);
        if (!n && ti.rank) return SIZE_MAX;
        n *= fuzz_dtype_bytes(ti.dtype);
        if (sum > SIZE_MAX - n) return SIZE_MAX;
        sum += n;
    }
    return sum;
}

/* Limits of fuzz_plan_run. */
typedef struct fuzz_caps {
    size_t graph_bytes; /* all tensors of the graph: above it nothing is planned */
    size_t run_bytes;   /* arena + weights + workspace + inputs + outputs: above it nothing runs */
    double run_flops;   /* per run */
} fuzz_caps;

FUZZ_FN void fuzz_fill_pattern(void *p, size_t bytes, unsigned char c) {
    if (bytes) memset(p, c, bytes);
}

/* Plans g on ctx with *pd (external arena forced), checks the failure message, and when the plan
   fits caps runs it twice on inputs made from fill[] (fp32: small values; i64: indices -1, 0, 1,
   so a gather along a dimension of 1 fails with a message and others run). Returns the status of
   the first failing call, OK when nothing failed (planned and run, or skipped by the caps).
   *ran (may be NULL) = 1 when the plan ran. */
FUZZ_FN luthier_status fuzz_plan_run(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *pd_in,
                                    const uint8_t *fill, size_t fill_size, const fuzz_caps *caps, int *ran) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier_plan_info info;
    luthier_status s;
    int ni, no, i, k;
    void **ins = NULL, **outs = NULL, **outs2 = NULL;
    size_t *out_bytes = NULL, total, fi = 0;
    unsigned char *arena_mem = NULL, *arena;
    if (ran) *ran = 0;
    if (fuzz_graph_bytes(g) > caps->graph_bytes) return LUTHIER_STATUS_OK;
    memset(&pd, 0, sizeof pd);
    if (pd_in) pd = *pd_in;
    pd.external_arena = 1; /* the arena is ours: allocated only under the cap, filled with garbage */
    s = luthier_plan_create(ctx, g, &pd, &p);
    if (s != LUTHIER_STATUS_OK) {
        FUZZ_CHECK(p == NULL);
        FUZZ_CHECK(luthier_context_error(ctx)[0] != 0);
        fuzz_stat_plan_failed++;
        return s;
    }
    fuzz_stat_plans++;
    FUZZ_CHECK(p != NULL);
    FUZZ_CHECK(luthier_plan_get_info(p, &info) == LUTHIER_STATUS_OK);
    ni = luthier_graph_num_inputs(g);
    no = luthier_graph_num_outputs(g);
    FUZZ_CHECK(info.num_inputs == ni && info.num_outputs == no);
    for (i = 0; i < info.num_steps; i++) {
        luthier_step_info si;
        FUZZ_CHECK(luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK);
        FUZZ_CHECK(si.name != NULL && si.kernel != NULL && si.fused != NULL);
    }
    total = info.arena_bytes;
    if (info.weights_bytes > caps->run_bytes || info.workspace_bytes > caps->run_bytes || total > caps->run_bytes ||
        !(info.flops <= caps->run_flops)) {
        fuzz_stat_capped++;
        goto done;
    }
    total += info.weights_bytes + info.workspace_bytes;
    ins = (void **)calloc((size_t)ni + 1, sizeof *ins);
    outs = (void **)calloc((size_t)no + 1, sizeof *outs);
    outs2 = (void **)calloc((size_t)no + 1, sizeof *outs2);
    out_bytes = (size_t *)calloc((size_t)no + 1, sizeof *out_bytes);
    FUZZ_CHECK(ins && outs && outs2 && out_bytes);
    for (i = 0; i < ni + no; i++) {
        luthier_tensor_info ti;
        size_t n, b;
        FUZZ_CHECK(luthier_graph_tensor_info(g, i < ni ? luthier_graph_input_tensor(g, i) : luthier_graph_output_tensor(g, i - ni), &ti) ==
                   LUTHIER_STATUS_OK);
        n = fuzz_numel(&ti);
        b = n * fuzz_dtype_bytes(ti.dtype);
        if (!n || b > caps->run_bytes || total > caps->run_bytes - b) {
            fuzz_stat_capped++;
            goto done;
        }
        total += b;
        if (i < ni) {
            FUZZ_CHECK((ins[i] = malloc(b)) != NULL);
            for (k = 0; (size_t)k < n; k++) {
                unsigned v = fill_size ? fill[fi++ % fill_size] : 0x80u;
                if (ti.dtype == LUTHIER_DTYPE_I64) ((int64_t *)ins[i])[k] = (int64_t)(v % 3) - 1;
                else ((float *)ins[i])[k] = ((float)v - 128.0f) * (1.0f / 32.0f);
            }
        } else {
            out_bytes[i - ni] = b;
            FUZZ_CHECK((outs[i - ni] = malloc(b)) != NULL && (outs2[i - ni] = malloc(b)) != NULL);
        }
    }
    arena_mem = (unsigned char *)malloc(info.arena_bytes + 64);
    FUZZ_CHECK(arena_mem != NULL);
    arena = arena_mem + (64 - (uintptr_t)arena_mem % 64) % 64;
    FUZZ_CHECK(luthier_plan_bind_arena(p, arena, info.arena_bytes) == LUTHIER_STATUS_OK);
    for (k = 0; k < 2; k++) {
        void **o = k ? outs2 : outs;
        fuzz_fill_pattern(arena, info.arena_bytes, k ? 0xffu : 0x00u);
        for (i = 0; i < no; i++) fuzz_fill_pattern(o[i], out_bytes[i], k ? 0x7fu : 0x00u);
        s = luthier_plan_run(ctx, p, (const void *const *)ins, o);
        if (s != LUTHIER_STATUS_OK) {
            FUZZ_CHECK(luthier_context_error(ctx)[0] != 0);
            FUZZ_CHECK(k == 0); /* the second run of the same inputs cannot fail where the first did not */
            fuzz_stat_run_failed++;
            goto done;
        }
    }
    if (ran) *ran = 1;
    fuzz_stat_ran++;
    /* the same inputs give the same bits, whatever the arena and the output buffers held */
    for (i = 0; i < no; i++)
        if (memcmp(outs[i], outs2[i], out_bytes[i]) != 0) {
            fprintf(stderr, "fuzz: output %d differs between two runs of the same inputs\n", i);
            abort();
        }
done:
    for (i = 0; ins && i < ni; i++) free(ins[i]);
    for (i = 0; outs && i < no; i++) free(outs[i]), free(outs2[i]);
    free(ins);
    free(outs);
    free(outs2);
    free(out_bytes);
    free(arena_mem);
    luthier_plan_destroy(p);
    return s;
}

/* A small fixed CNN (x [1,8,12,12]): conv3x3+bias+relu "conv3x3", conv1x1 "conv1x1" + residual
   add "residual" (output), depthwise 3x3 stride 2 + clamp "dw", dilated 3x3 "dilated", global
   average pool, flatten, dense "fc" (output). Constants "w0".."w3", "b", "wd", "bd". */
FUZZ_FN luthier_graph *fuzz_small_cnn(void) {
    static float w[16 * 16 * 9], b[16], wd[10 * 16];
    luthier_graph *g;
    luthier_node_desc d;
    int x, w0, w1, w2, w3, b0, wdt, bd, n0, n1, n2, n3, n4, n5, n6, n7, in[3];
    int64_t xs[4] = {1, 8, 12, 12}, w0s[4] = {16, 8, 3, 3}, w1s[4] = {16, 16, 1, 1}, w2s[4] = {16, 1, 3, 3},
            w3s[4] = {16, 16, 3, 3}, bs[1] = {16}, wds[2] = {10, 16}, bds[1] = {10};
    size_t i;
    for (i = 0; i < sizeof w / sizeof *w; i++) w[i] = (float)((int)(i * 7919 % 41) - 20) * 0.01f;
    for (i = 0; i < sizeof b / sizeof *b; i++) b[i] = (float)i * 0.05f - 0.3f;
    for (i = 0; i < sizeof wd / sizeof *wd; i++) wd[i] = (float)((int)(i * 31 % 17) - 8) * 0.02f;
    FUZZ_CHECK(luthier_graph_create(&g) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "w0", 4, w0s, w, 0, &w0) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "w1", 4, w1s, w, 0, &w1) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "w2", 4, w2s, w, 0, &w2) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "w3", 4, w3s, w, 0, &w3) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "b", 1, bs, b, 0, &b0) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "wd", 2, wds, wd, 0, &wdt) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_constant(g, "bd", 1, bds, b, 0, &bd) == LUTHIER_STATUS_OK);
    /* n0: 3x3 conv + bias + relu (im2col, implicit GEMM, Winograd) */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D;
    d.name = "conv3x3";
    in[0] = x; in[1] = w0; in[2] = b0;
    d.inputs = in;
    d.num_inputs = 3;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 1;
    d.activation = LUTHIER_ACTIVATION_RELU;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n0) == LUTHIER_STATUS_OK);
    /* n1: 1x1 conv, n2: residual add (fused into n1) */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D;
    d.name = "conv1x1";
    in[0] = n0; in[1] = w1;
    d.inputs = in;
    d.num_inputs = 2;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n1) == LUTHIER_STATUS_OK);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_ADD;
    d.name = "residual";
    in[0] = n1; in[1] = n0;
    d.inputs = in;
    d.num_inputs = 2;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n2) == LUTHIER_STATUS_OK);
    /* n3: depthwise 3x3 stride 2, clamp */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D;
    d.name = "dw";
    in[0] = n2; in[1] = w2; in[2] = b0;
    d.inputs = in;
    d.num_inputs = 3;
    d.groups = 16;
    d.stride[0] = d.stride[1] = 2;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 1;
    d.activation = LUTHIER_ACTIVATION_CLAMP;
    d.clamp_min = 0;
    d.clamp_max = 6;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n3) == LUTHIER_STATUS_OK);
    /* n4: 3x3 conv, dilation 2 */
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV2D;
    d.name = "dilated";
    in[0] = n3; in[1] = w3;
    d.inputs = in;
    d.num_inputs = 2;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = 2;
    d.dilation[0] = d.dilation[1] = 2;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n4) == LUTHIER_STATUS_OK);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_GLOBAL_AVGPOOL;
    in[0] = n4;
    d.inputs = in;
    d.num_inputs = 1;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n5) == LUTHIER_STATUS_OK);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_FLATTEN;
    in[0] = n5;
    d.inputs = in;
    d.num_inputs = 1;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n6) == LUTHIER_STATUS_OK);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_DENSE;
    d.name = "fc";
    in[0] = n6; in[1] = wdt; in[2] = bd;
    d.inputs = in;
    d.num_inputs = 3;
    FUZZ_CHECK(luthier_graph_add_node(g, &d, &n7) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_output(g, n7) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_graph_output(g, n2) == LUTHIER_STATUS_OK);
    return g;
}

#endif
