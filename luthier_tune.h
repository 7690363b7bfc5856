/* luthier_tune.h - the tuner of luthier: tasks, configuration space, measurements, model-guided
   search, records. Part of luthier (MIT license, see luthier.h). Include luthier.h, never this
   file on its own.

   luthier_tune(ctx, graph, desc, path, result) finds, per TASK, the best configuration of the
   three knobs and writes it to a records file that plans read (luthier_plan_desc.records):
     algorithm   convolutions: every luthier_conv_algorithm valid for the layer
     kernel      every microkernel this CPU runs that the algorithm accepts (scalar kernels are
                 left out when a SIMD ISA is present; depthwise runs no microkernel)
     workload    per-cluster shares of the work in steps of desc.ratio_step % summing to 100 %
                 (1, 2 or 3 clusters; more clusters keep the default split), plus the dynamic
                 schedule
   A task is a set of nodes with one signature: operator, shapes, stride, padding, dilation,
   groups and the fused epilogue (activation, residual add) as the plan will run them. Tuned
   ops: convolutions, dense layers and transposed convolutions (kernel and workload; timed as
   their step in a plan of the node alone); the other operators keep their defaults.

   Search (luthier_gbt.h): a gradient-boosted-tree cost model over features of the task (shape,
   FLOPs, bytes, intensity), the algorithm, the kernel (MR, NR, kind, ISA) and the workload
   (shares, capacity x threads per cluster), predicting log(time / the task's default time).
   Per task: the model fitted on everything measured so far in this run (on top of
   desc.model_in) ranks the candidates and the first batch is its top picks plus some random
   ones (the first task, with nothing measured yet, starts from a diverse set); then the model
   is refitted with the task's own measurements, the best predicted candidates plus a little
   exploration are measured, and so on, until the task's measurement cap (max_fraction) or its
   share of the budget is spent or the best stops improving. On 2 or 3 clusters every
   measurement also reads how long each cluster was busy with its share (the pool times its
   slots while the tuner measures), and the search predicts each (algorithm, kernel)'s other
   splits from that (balance, luthier_gbt.h; desc.no_balance turns it off). A measurement runs the real layer
   on the real shape on ctx (warm-up, then repetitions until ~5 ms, minimum taken; a sample
   whose median is far above its minimum is measured again).
   IN-PLAN CHECK: a layer measured alone is not the layer inside the network (its input arrives
   hot from the previous step, its weights compete with its neighbours' for the caches, and a
   larger transformed weight set slows the layers after it). So the winners are checked where
   they will run: the default plan, the plan of the winners and up to three plans of
   runners-up (per task, for each algorithm nearly as fast alone as the winner: that algorithm
   on the default kernel and its best measured pair; luthier__task_runners) are created and
   profiled in alternating rounds; each task takes the configuration whose steps together are
   fastest in the plans, the default unless something beats it there
   (luthier_tune_result.reverted, .runner_ups).

   RECORDS are a text file, one line per task:
       luthier-records 1
       <fingerprint>\t<signature>\t<algorithm>\t<kernel>\t<schedule>\t<ratios>\t<ms>\t<default_ms>\t<precision>
   (precision: the layer's, fp32, fp16 or int8; a line without it is fp32). The fingerprint
   names the machine: clusters (names, capacities, CPUs), thread count and
   CPU features. Lines of another fingerprint are ignored (counted in a note); malformed
   lines are skipped with a warning; a different version is refused.

   TABLE OF CONTENTS: >>api-tune; implementation: >>impl-tune-tasks >>impl-tune-space >>impl-tune-offline
   >>impl-tune-measure >>impl-tune-records >>impl-tune-kinds >>impl-tune-run >>impl-tune-auto >>impl-tune-svg
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_tune.h is part of luthier: include luthier.h instead"
#endif

#ifndef LUTHIER_TUNE_H_INCLUDED
#define LUTHIER_TUNE_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* >>api-tune */

typedef struct luthier_tune_desc {
    double budget_seconds;   /* wall-clock budget of the whole run; 0 = 120 */
    int max_measurements;    /* over the whole run; 0 = no limit */
    double max_fraction;     /* per task, measure at most this fraction of its candidates
                                (the default configuration included, and the runners-up of a
                                search the cost model orders; at least 3); 0 = 0.1, 1 = no
                                cap besides the budget */
    int ratio_step;          /* workload share step in percent (divides 100); 0 = 10 */
    int exhaustive;          /* measure every candidate (a reference for the search) */
    int random_search;       /* measure random candidates (a baseline with the same budget) */
    int no_dynamic;          /* leave the dynamic schedule out of the space */
    int no_balance;          /* search with the model alone: no per-cluster busy times (a
                                baseline for the balance prediction, see >>impl-tune-run) */
    uint64_t seed;           /* 0 = 1 */
    int progress;            /* 0 = one line per task when stderr is a terminal, 1 = always,
                                -1 = never */
    const char *model_in;    /* cost model to start from (transfer), NULL = none */
    const char *model_out;   /* where to save the final cost model, NULL = nowhere */
    const char *report_path; /* per-task report (text), NULL = none */
    const char *heatmap_path;/* SVG heatmap of the costliest task: time over (kernel x share of
                                the fastest cluster, or x algorithm on one cluster); NULL = none */
    /* Tune the int8 plan of g (the calibration its plans get as luthier_plan_desc.int8): the
       nodes that run int8 there become int8 tasks ("int8 conv2d ..." signatures) whose kernel
       knob takes the int8 kernels (luthier_qkernel_*) and whose algorithm knob takes IM2COL,
       1X1 and DEPTHWISE; the other nodes are tuned as in fp32. NULL = the fp32 plan. */
    const luthier_calibration *int8;
    /* The plan's precision (luthier_plan_desc.precision): with FP16, dense layers become
       "fp16 dense ..." tasks whose kernel knob takes the F16W kernels (their plans then keep the
       weights in fp16), and on CPUs with fp16 arithmetic the convolutions that fp16 plans compute
       in fp16 become "fp16 conv2d ..." tasks over the F16 kernels (IM2COL, 1X1). Their records
       configure fp16 plans only.
       AUTO: a precision per node (>>impl-tune-auto). The tasks are tuned in fp32, then the
       layers that have a lower precision are tuned again in it: fp16, and int8 when int8 (the
       calibration) is given; each of the budget's equal parts goes to one precision. Each
       layer takes its fastest precision (all the nodes of one fp32 signature take the same),
       then the ACCURACY GUARD: the plan of these choices and the fp32 plan run on the accuracy
       inputs (below), and while their outputs differ by more than min_cosine or max_abs_error
       allow, the layer whose lower precision alone costs the most of that allowance goes back
       to fp32. Records carry each layer's precision; they configure plans of precision AUTO
       (with the same int8 calibration, which fusion depends on). */
    luthier_precision precision;
    /* AUTO's accuracy guard: num_accuracy_sets sets of inputs, set s's i-th graph input at
       accuracy_inputs[s * luthier_graph_num_inputs + i] (NULL: 4 sets of values drawn in
       [-1, 1], integer inputs 0: pass the calibration's inputs). Over all the sets' fp32
       outputs, the cosine of the plan's outputs and the fp32 plan's must be at least min_cosine
       (0 = 0.9999) and no element may differ by more than max_abs_error (0 = 1 % of the largest
       magnitude among the fp32 plan's outputs). The fp32 plan is the plan of the fp32 pass's
       configurations: with every layer back in fp32 the guard holds whatever its bounds. */
    const void *const *accuracy_inputs;
    int num_accuracy_sets;
    double min_cosine;
    double max_abs_error;
    int no_plan_check;       /* keep every task's winner without the in-plan check (below) */
    int no_prior;            /* do not let the analytical cost model (luthier_conv2d_predict)
                                order a task's first batch nor be a feature of the trees (the
                                search as it was without the model) */
    /* Predict instead of measuring, for a machine that is not this one (a board a firmware is
       cross-compiled for): every fp32 task takes the candidate the analytical cost model
       (>>impl-costmodel) predicts fastest among those AUTO's model policy may pick (Winograd
       within LUTHIER_AUTO_MAX_ERROR); nothing runs (no measurement, no in-plan check, no
       heatmap; exhaustive and random_search are refused). ctx describes the target: its
       clusters (luthier_context_desc.topology, e.g. luthier_topology_cores("A72x2,A53x4") or
       the board's sysfs tree), threads and CPU features, so run on the target's ISA with its
       features (an AArch64 board: its build under qemu-aarch64 with a matching -cpu). The
       records are predicted ones: their fingerprint names the machine by the model's core rows
       ("predicted|Cortex-A72x2;Cortex-A53x4|threads=6|features=0x100"), which the board's own
       detection matches, and their ms are the model's. int8 and fp16 tasks, which the model does
       not rate, get no record (their defaults stand). */
    int offline;
} luthier_tune_desc;

typedef struct luthier_tune_result {
    int tasks, ops;           /* distinct signatures (AUTO: over its passes), and the nodes they cover */
    int measurements;         /* layer runs measured (each a warm-up plus repetitions) */
    int candidates;           /* size of the whole space (what an exhaustive search measures) */
    double seconds;           /* wall-clock time of the run (without drawing the heatmap) */
    double default_ms;        /* sum over ops of the default configuration's time */
    double tuned_ms;          /* sum over ops of the chosen configuration's time */
    int reverted;             /* tasks that keep the default: nothing beat it inside the plan */
    int runner_ups;           /* tasks that take a runner-up: faster than the winner in the plan */
    double plan_default_ms;   /* the in-plan check: the tuned tasks' steps, summed, in the */
    double plan_tuned_ms;     /* default plan, in the plan of the winners, and with each task */
    double plan_chosen_ms;    /* as chosen (0: no check) */
    /* The analytical cost model (luthier_conv2d_predict) against the measurements, median over
       the fp32 tasks (the F32 kernel family's: int8 and fp16 tasks are not rated): Spearman correlation of predicted and measured times over each task's
       measured candidates (NaN: no task measured 3), and the model's rank (1 = predicted
       fastest) of each task's fastest measured candidate among all its candidates (0: none). */
    double model_spearman;
    double model_rank;
    /* AUTO: conv/dense nodes left in fp16 and in int8, nodes whose lower precision the guard
       took back to fp32, and the guard's figures of the final choice */
    int nodes_fp16, nodes_int8, guard_dropped;
    double guard_cosine, guard_max_abs;
    /* AUTO: nodes taken back to fp32 because the conversions their precision puts around them
       (quantize / dequantize steps, timed in the plan) cost more than the node saves */
    int conversions_dropped;
} luthier_tune_result;

/* Tunes every conv2d, dense and conv_transpose task of g on ctx and writes records_path (NULL =
   no file). result may be NULL. Bad input returns a status with the reason in
   luthier_context_error(ctx). */
LUTHIER_API luthier_status luthier_tune(luthier_context *ctx, const luthier_graph *g,
                                        const luthier_tune_desc *desc, const char *records_path,
                                        luthier_tune_result *result);

/* Fills configs[num_nodes of g] (all-zero = default) from the records of path that match ctx's
   fingerprint and g's task signatures (of g's fp32 plan; luthier_plan_create applies records to
   int8 plans itself); *matched = nodes configured. Missing file: NOT_FOUND.
   Malformed lines are skipped; notes (skipped lines, other machines) go to
   luthier_context_error(ctx) even on success. */
LUTHIER_API luthier_status luthier_records_apply(luthier_context *ctx, const luthier_graph *g,
                                                 const char *path, luthier_node_config *configs,
                                                 int *matched);
/* The same from records held in memory (a NUL-terminated copy of a records file, e.g. a const
   array in a firmware image): no file is opened. */
LUTHIER_API luthier_status luthier_records_apply_text(luthier_context *ctx, const luthier_graph *g,
                                                      const char *text, luthier_node_config *configs,
                                                      int *matched);

/* The task signature of node (conv2d, dense, conv_transpose; others: LUTHIER_STATUS_NOT_FOUND) as tuning and
   records use it, and the machine fingerprint of ctx. */
LUTHIER_API luthier_status luthier_tune_signature(const luthier_graph *g, int node, char *buf,
                                                  size_t size);
LUTHIER_API int luthier_tune_fingerprint(const luthier_context *ctx, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_TUNE_H_INCLUDED */

#if defined(LUTHIER_TUNE_IMPLEMENTATION) && !defined(LUTHIER__TUNE_IMPL_DONE)
#define LUTHIER__TUNE_IMPL_DONE

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-tune-tasks ============================================================================ */

#define LUTHIER__PLAN_RUNNERS 3    /* runners-up per task that run against the winner in the plan */
#define LUTHIER__RUNNER_SLACK 1.25 /* ... measured alone at most this much slower than the winner */

typedef struct luthier__task {
    luthier__layer l;        /* what is tuned (the records module's layer and its signature) */
    int first_node;          /* representative */
    int ops;                 /* nodes with this signature */
    int *nodes;
    /* results */
    int best;                /* candidate index */
    double best_ms, default_ms;
    int measured;
    /* the in-plan runoff (luthier__task_runners) */
    int runners;
    double runner_ms[LUTHIER__PLAN_RUNNERS];
    luthier_node_config runner_cfg[LUTHIER__PLAN_RUNNERS];
    /* the analytical model (>>impl-costmodel) against the measurements: Spearman correlation
       of predicted and measured times over the measured candidates (NaN below 3), and the
       model's rank (1 = predicted fastest) of the fastest measured candidate among all (0: none) */
    double spearman;
    int model_rank;
} luthier__task;

/* Task of node i (its layer, with node i as representative); 0 when the node is not tuned. */
LUTHIER_PRIVATE int luthier__task_of(const luthier_context *ctx, const luthier_graph *g, const luthier__fuse *f, int i,
                                     const luthier_calibration *cal, luthier_precision prec, luthier__task *t) {
    memset(t, 0, sizeof *t);
    t->first_node = i;
    return luthier__layer_of(ctx, g, f, i, cal, prec, &t->l);
}

/* Task t's layer as a convolution: a convolution's own descriptor, else the 1x1 convolution of
   its GEMM (m pixels, k input and n output channels; strides, dilations and groups 1). */
LUTHIER_PRIVATE void luthier__task_conv(const luthier__task *t, luthier_conv2d_desc *cd) {
    if (t->l.op == LUTHIER_OP_CONV2D) {
        *cd = t->l.cd;
        return;
    }
    memset(cd, 0, sizeof *cd);
    cd->batch = t->l.m, cd->in_channels = t->l.k, cd->out_channels = t->l.n;
    cd->in_h = cd->in_w = cd->kernel_h = cd->kernel_w = 1;
    cd->stride_h = cd->stride_w = cd->dilation_h = cd->dilation_w = cd->groups = 1;
}

/* >>impl-tune-space: candidates and their features */

#define LUTHIER__TUNE_MAX_SHARES 3

typedef struct luthier__cand {
    short algo;             /* luthier_conv_algorithm (DENSE: 0) */
    short kernel;           /* registry index; -1 = none (depthwise) */
    short same;             /* 1: every cluster runs kernel itself, not its variant for the
                               cluster's cores (>>cluster-kernels; only where one differs) */
    short dynamic;
    short shares[LUTHIER__TUNE_MAX_SHARES]; /* percent per cluster (RATIO) */
} luthier__cand;

#define LUTHIER__TUNE_FEATURES 31 /* 10 shape, 8 algorithm, 5 kernel, 1 schedule, 6 workload, 1 prediction */

LUTHIER_PRIVATE double luthier__log2p(double x) { return log(x + 1.0) / log(2.0); }

/* Features of candidate c of task t; pred_rel: the analytical model's log(seconds / the task's
   fastest prediction) (>>impl-costmodel, >= 0), or -1 where it has none (int8 and fp16 tasks). */
LUTHIER_PRIVATE void luthier__cand_features(const luthier_context *ctx, const luthier__task *t, const luthier__cand *c,
                                            double pred_rel, float *f) {
    const luthier__pool *p = ctx->pool;
    luthier_conv2d_desc cd;
    int64_t oh = 1, ow = 1;
    double m, n, k;
    int i, j = 0;
    luthier__task_conv(t, &cd);
    luthier_conv2d_output_size(&cd, &oh, &ow);
    m = (double)(cd.batch * oh * ow);
    n = (double)(cd.out_channels / cd.groups);
    k = (double)(cd.in_channels / cd.groups * cd.kernel_h * cd.kernel_w);
    f[j++] = (float)luthier__log2p(m);
    f[j++] = (float)luthier__log2p(n);
    f[j++] = (float)luthier__log2p(k);
    f[j++] = (float)luthier__log2p(t->l.flops);
    f[j++] = (float)luthier__log2p(t->l.bytes);
    f[j++] = (float)(t->l.flops / (t->l.bytes + 1.0));
    f[j++] = t->l.op == LUTHIER_OP_CONV2D ? (float)t->l.cd.kernel_h : 0.0f;
    f[j++] = t->l.op == LUTHIER_OP_CONV2D ? (float)t->l.cd.stride_h : 0.0f;
    f[j++] = t->l.op == LUTHIER_OP_CONV2D ? (float)luthier__log2p((double)t->l.cd.groups) : 0.0f;
    f[j++] = t->l.op == LUTHIER_OP_CONV2D ? (float)luthier__log2p((double)t->l.cd.in_channels) : 0.0f;
    f[j++] = (float)c->algo; /* trees split on categories well enough with the index */
    for (i = LUTHIER_CONV_IM2COL; i <= LUTHIER_CONV_WINOGRAD_6X3 && j < 18; i++) f[j++] = c->algo == i ? 1.0f : 0.0f;
    if (c->kernel >= 0) {
        luthier_kernel_info ki;
        memset(&ki, 0, sizeof ki);
        luthier_kernels_get(t->l.fam, c->kernel, &ki);
        if (!ki.nr) ki.nr = 1;
        f[j++] = (float)ki.mr;
        f[j++] = (float)ki.nr;
        f[j++] = (float)ki.kind + 2.0f * (float)c->same;
        f[j++] = (float)(ki.required_cpu_features);
        f[j++] = (float)(fmod(n, (double)ki.nr) / (double)ki.nr); /* waste in the last panel */
    } else {
        f[j++] = 0; f[j++] = 0; f[j++] = -1; f[j++] = 0; f[j++] = 0;
    }
    f[j++] = (float)c->dynamic;
    for (i = 0; i < LUTHIER__TUNE_MAX_SHARES; i++) {
        double cap = i < p->num_clusters ? ctx->topology.clusters[i].capacity * (double)p->cluster_threads[i] : 0.0;
        f[j++] = (float)(c->dynamic ? -1 : c->shares[i]) / 100.0f;
        f[j++] = (float)cap;
    }
    f[j++] = (float)pred_rel;
    while (j < LUTHIER__TUNE_FEATURES) f[j++] = 0;
}

/* All compositions of 100 into nc parts of step percent (nc <= 3). */
LUTHIER_PRIVATE int luthier__share_sets(int nc, int step, short (*out)[LUTHIER__TUNE_MAX_SHARES], int cap) {
    int n = 0, a, b;
    if (nc == 1) {
        if (cap > 0) out[0][0] = 100, out[0][1] = out[0][2] = 0;
        return 1;
    }
    for (a = 0; a <= 100; a += step) {
        if (nc == 2) {
            if (n < cap) out[n][0] = (short)a, out[n][1] = (short)(100 - a), out[n][2] = 0;
            n++;
            continue;
        }
        for (b = 0; a + b <= 100; b += step) {
            if (n < cap) out[n][0] = (short)a, out[n][1] = (short)b, out[n][2] = (short)(100 - a - b);
            n++;
        }
    }
    return n;
}

/* Whether a cluster of ctx would run a variant of kernel k of family fam (>>cluster-kernels). */
LUTHIER_PRIVATE int luthier__tune_has_variant(const luthier_context *ctx, luthier_kernel_family fam, int k) {
    const luthier__kernel_entry *e = luthier__kernel_in(fam, k);
    int cl;
    for (cl = 0; cl < ctx->pool->num_clusters; cl++)
        if (luthier__cluster_kernel(ctx, cl, e) != e) return 1;
    return 0;
}

/* The candidates of task t on ctx (luthier__alloc'd); 0 candidates on OOM. */
LUTHIER_PRIVATE luthier__cand *luthier__task_space(luthier_context *ctx, const luthier__task *t, int step, int dynamic,
                                                   size_t *count) {
    short shares[256][LUTHIER__TUNE_MAX_SHARES];
    int nc = ctx->pool->num_clusters, nsh, a, k, s, nk = luthier_kernels_count(t->l.fam), have_simd = 0;
    size_t n = 0;
    int cap = 0;
    luthier__cand *c = NULL;
    char saved[256];
    *count = 0;
    if (nc > LUTHIER__TUNE_MAX_SHARES) nsh = 0; /* default split only */
    else nsh = luthier__share_sets(nc, step, shares, 256);
    for (k = 0; k < nk; k++) {
        luthier_kernel_info ki;
        luthier_kernels_get(t->l.fam, k, &ki);
        if ((ki.required_cpu_features & ~ctx->cpu_features) == 0 && strcmp(ki.isa, "scalar") != 0) have_simd = 1;
    }
    snprintf(saved, sizeof saved, "%s", ctx->error);
    for (a = 0; a < (t->l.op != LUTHIER_OP_DENSE ? (int)LUTHIER_CONV_ALGORITHM_COUNT : 1); a++) {
        if (t->l.op == LUTHIER_OP_CONV_TRANSPOSE) { /* GEMM + col2im, or depthwise where it fits */
            if (a != LUTHIER_CONV_IM2COL && !(a == LUTHIER_CONV_DEPTHWISE && luthier__layer_convt_dw(&t->l))) continue;
        } else if (t->l.op == LUTHIER_OP_CONV2D && t->l.fam != LUTHIER_KERNELS_F32) { /* the algorithms of its family */
            if (luthier__conv_algo_fits(ctx, "", &t->l.cd, (luthier_conv_algorithm)a, t->l.fam) != LUTHIER_STATUS_OK)
                continue;
        } else if (t->l.op == LUTHIER_OP_CONV2D &&
                   (a == LUTHIER_CONV_AUTO || luthier_conv2d_algorithm_valid(ctx, &t->l.cd, (luthier_conv_algorithm)a) != LUTHIER_STATUS_OK)) {
            continue;
        }
        for (k = -1; k < 2 * nk; k++) {
            luthier_kernel_info ki;
            int per = (nsh ? nsh : 1) + (dynamic ? 1 : 0), q;
            if (k < 0) { /* depthwise runs no microkernel */
                if (a != LUTHIER_CONV_DEPTHWISE) continue;
            } else {
                if (a == LUTHIER_CONV_DEPTHWISE) continue;
                /* k >= nk: kernel k - nk on every cluster, where a cluster would run a variant */
                if (k >= nk && !luthier__tune_has_variant(ctx, t->l.fam, k - nk)) continue;
                /* (layers timed in a plan take one kernel name: its variants run where they exist) */
                if (k >= nk && t->l.op != LUTHIER_OP_CONV2D && t->l.op != LUTHIER_OP_DENSE) continue;
                luthier_kernels_get(t->l.fam, k % nk, &ki);
                if ((ki.required_cpu_features & ~ctx->cpu_features) != 0) continue;
                if (have_simd && strcmp(ki.isa, "scalar") == 0) continue;
                if (!t->l.q && t->l.op == LUTHIER_OP_CONV2D && a == LUTHIER_CONV_IMPLICIT_GEMM && ki.kind != LUTHIER_KERNEL_HYBRID) continue;
            }
            if (!luthier__grow((void **)&c, &cap, (int)n + per, sizeof *c)) {
                luthier__free(c);
                return NULL;
            }
            for (q = 0; q < per; q++) {
                luthier__cand *x = &c[n++];
                memset(x, 0, sizeof *x);
                x->algo = (short)a;
                x->kernel = (short)(k >= nk ? k - nk : k);
                x->same = (short)(k >= nk);
                if (q == per - 1 && dynamic) {
                    x->dynamic = 1;
                } else if (nsh) {
                    for (s = 0; s < LUTHIER__TUNE_MAX_SHARES; s++) x->shares[s] = shares[q][s];
                } else {
                    x->shares[0] = -1; /* default split */
                }
            }
        }
    }
    snprintf(ctx->error, sizeof ctx->error, "%s", saved);
    *count = n;
    return c;
}

/* The analytical model's seconds for candidate c of task t on machine mc (0: no prediction:
   the model knows the F32 kernels only, not the int8 or fp16 ones). A dense task is the 1x1
   convolution of its GEMM. */
LUTHIER_PRIVATE double luthier__cand_predict(const luthier__cm_machine *machine, const luthier__task *t, const luthier__cand *c) {
    luthier_conv2d_desc in, d;
    luthier__cm_machine same = *machine;
    const luthier__cm_machine *mc = &same;
    double sh[LUTHIER__TUNE_MAX_SHARES], s;
    int64_t oh, ow;
    int j;
    if (t->l.fam != LUTHIER_KERNELS_F32 || (t->l.op == LUTHIER_OP_CONV_TRANSPOSE && c->kernel < 0)) return 0;
    luthier__task_conv(t, &in);
    if (luthier__conv_normalize(NULL, &in, &d, &oh, &ow) != LUTHIER_STATUS_OK) return 0;
    same.same_kernel = c->same;
    for (j = 0; j < LUTHIER__TUNE_MAX_SHARES; j++) sh[j] = c->shares[j] / 100.0;
    s = luthier__cm_conv_seconds(mc, &d, oh, ow, t->l.op == LUTHIER_OP_CONV2D ? (luthier_conv_algorithm)c->algo : LUTHIER_CONV_1X1,
                                 c->kernel, c->dynamic || c->shares[0] < 0 || mc->num_clusters > LUTHIER__TUNE_MAX_SHARES ? NULL : sh,
                                 c->dynamic);
    return s > 0 ? s : 0;
}

typedef struct luthier__rank_key {
    double v;
    size_t i;
} luthier__rank_key;

LUTHIER_PRIVATE int luthier__rank_cmp(const void *a, const void *b) {
    const luthier__rank_key *x = (const luthier__rank_key *)a, *y = (const luthier__rank_key *)b;
    return x->v < y->v ? -1 : x->v > y->v ? 1 : x->i < y->i ? -1 : x->i > y->i ? 1 : 0;
}

/* Ranks (1-based, ties averaged) of v[0..n) into r; k: n keys of scratch. */
LUTHIER_PRIVATE void luthier__ranks(const double *v, size_t n, double *r, luthier__rank_key *k) {
    size_t i, j, q;
    for (i = 0; i < n; i++) k[i].v = v[i], k[i].i = i;
    qsort(k, n, sizeof *k, luthier__rank_cmp);
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && k[j].v == k[i].v; j++) {}
        for (q = i; q < j; q++) r[k[q].i] = 0.5 * (double)(i + j - 1) + 1.0;
    }
}

/* Spearman's rank correlation of x and y (n pairs; NaN below 3 or without variance). */
LUTHIER_PRIVATE double luthier__spearman(const double *x, const double *y, size_t n) {
    double *rx = (double *)luthier__alloc(sizeof(double) * 2 * (n + 1)), *ry, mean = 0.5 * (double)(n + 1), sxy = 0, sxx = 0, syy = 0;
    luthier__rank_key *k = (luthier__rank_key *)luthier__alloc(sizeof *k * (n + 1));
    size_t i;
    if (!rx || !k || n < 3) {
        luthier__free(rx);
        luthier__free(k);
        return NAN;
    }
    ry = rx + n;
    luthier__ranks(x, n, rx, k);
    luthier__ranks(y, n, ry, k);
    for (i = 0; i < n; i++) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    luthier__free(rx);
    luthier__free(k);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* The model against task t's measurements (times in ms, 0 = not measured): t->spearman over
   the measured candidates, t->model_rank of the fastest measured one (best) among all. */
LUTHIER_PRIVATE void luthier__tune_model_quality(luthier__task *t, const double *pred, size_t nc, const double *times, int best) {
    double *px = (double *)luthier__alloc(sizeof(double) * 2 * (nc + 1)), *py;
    size_t c, n = 0;
    t->spearman = NAN;
    t->model_rank = 0;
    if (!px || !pred) {
        luthier__free(px);
        return;
    }
    py = px + nc;
    for (c = 0; c < nc; c++)
        if (pred[c] > 0 && times[c] > 0) px[n] = pred[c], py[n++] = times[c];
    t->spearman = luthier__spearman(px, py, n);
    if (best >= 0 && pred[best] > 0) {
        t->model_rank = 1;
        for (c = 0; c < nc; c++) t->model_rank += pred[c] > 0 && pred[c] < pred[best];
    }
    luthier__free(px);
}

/* The model's seconds of each of t's candidates (0: none) and their logs as the search's prior
   (NaN: none); NULL when memory is short. *prior_out points into the same block. */
LUTHIER_PRIVATE double *luthier__tune_predict(const luthier_context *ctx, const luthier__task *t, const luthier__cand *cands, size_t nc,
                                              float **prior_out) {
    luthier__cm_machine mc;
    double *pred = (double *)luthier__alloc(sizeof(double) * (nc + 1) + sizeof(float) * (nc + 1));
    float *prior;
    size_t c;
    *prior_out = NULL;
    if (!pred) return NULL;
    prior = (float *)(pred + nc + 1);
    luthier__cm_machine_of(ctx, &mc);
    for (c = 0; c < nc; c++) {
        pred[c] = luthier__cand_predict(&mc, t, &cands[c]);
        prior[c] = pred[c] > 0 ? (float)log(pred[c]) : NAN;
    }
    *prior_out = prior;
    return pred;
}

/* The features of t's nc candidates into feat (nc x LUTHIER__TUNE_FEATURES), the model's
   prediction among them relative to the task's fastest (pred: luthier__tune_predict's, or NULL). */
LUTHIER_PRIVATE void luthier__tune_features(const luthier_context *ctx, const luthier__task *t, const luthier__cand *cands, size_t nc,
                                            const double *pred, float *feat) {
    double best = 0;
    size_t c;
    for (c = 0; pred && c < nc; c++)
        if (pred[c] > 0 && (best == 0 || pred[c] < best)) best = pred[c];
    for (c = 0; c < nc; c++)
        luthier__cand_features(ctx, t, &cands[c], pred && pred[c] > 0 ? log(pred[c] / best) : -1.0, feat + c * LUTHIER__TUNE_FEATURES);
}

/* >>impl-tune-measure */

#define LUTHIER__TUNE_CACHE 6

/* One layer object the tuner keeps (luthier__tmeas.cache): per (algorithm, kernel, same),
   whatever its kind creates (>>impl-tune-kinds). */
typedef struct luthier__tslot {
    int algo, kernel, same, used;
    luthier_conv2d_layer *conv;    /* convolutions (fp32, fp16) */
    luthier_packed_b *pb;          /* dense layers: the packed weights and the call */
    luthier_sgemm_desc sd;
    luthier_qconv2d_layer *qconv;  /* int8 layers (dense: a 1x1 convolution over m pixels) */
    luthier_plan *plan;            /* other layers: a plan of the node alone, and its step */
    luthier__pstep *step;
    float ratios[LUTHIER_MAX_CLUSTERS];
    const char *names[LUTHIER_MAX_CLUSTERS]; /* luthier__cand_kernels */
} luthier__tslot;

typedef struct luthier__tmeas {
    luthier_context *ctx;
    const luthier__task *t;
    const luthier_graph *g;     /* the tuned graph and its fusion decisions (layers timed in a plan) */
    const luthier__fuse *f;
    const luthier__cand *cands;
    double *times;              /* per candidate, ms (0 = not measured, < 0 failed) */
    float *in, *out, *w, *bias, *res;
    size_t in_n, out_n, w_n, bias_n;
    luthier__tslot cache[LUTHIER__TUNE_CACHE];
    int tick;
    unsigned char *flush;       /* written before every timed run: evicts L1/L2 */
    size_t flush_bytes;
    int measurements;
    int max_measurements;       /* remaining budget of the run (<0 = none) */
    double deadline;
} luthier__tmeas;

/* The candidate's workload on the cached object. */
LUTHIER_PRIVATE void luthier__cand_ratios(const luthier_context *ctx, const luthier__cand *c, luthier_schedule *sch,
                                          float *ratios, int *num) {
    int i;
    *sch = c->dynamic ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
    *num = 0;
    if (c->dynamic || c->shares[0] < 0) return;
    *num = ctx->pool->num_clusters;
    for (i = 0; i < *num; i++) ratios[i] = (float)c->shares[i];
}

/* Empties a slot of the cache: whatever layer its kind created. */
LUTHIER_PRIVATE void luthier__tslot_clear(luthier__tslot *s) {
    luthier_conv2d_destroy(s->conv);
    luthier_packed_b_destroy(s->pb);
    luthier_qconv2d_destroy(s->qconv);
    luthier_plan_destroy(s->plan);
    memset(s, 0, sizeof *s);
}

LUTHIER_PRIVATE void luthier__tmeas_flush(luthier__tmeas *m) {
    int i;
    for (i = 0; i < LUTHIER__TUNE_CACHE; i++) luthier__tslot_clear(&m->cache[i]);
}

/* Inside a network a layer's weights come from memory: the layers run since its last run have
   streamed theirs through every cache level. A measurement in a loop would find them in L2/L3
   (Winograd's transformed weights are 1.8-7x the direct ones: F(2,3) on 512x512 channels
   measured 2.4 ms in a loop, 4.1 ms inside ResNet-18). So the weights are flushed from all
   levels before every timed run (clflush / dc civac; elsewhere a write sweep over 2 x L2). */
/* Bytes of cv->packed: weight_bytes also counts the bias, which is a separate allocation (and
   flushing past the end of packed could touch an unmapped page). */
LUTHIER_PRIVATE size_t luthier__conv_packed_bytes(const luthier_conv2d_layer *cv) {
    const size_t bias = cv->bias ? (size_t)cv->d.out_channels * sizeof(float) : 0;
    return cv->weight_bytes > bias ? cv->weight_bytes - bias : 0;
}

LUTHIER_PRIVATE void luthier__evict(luthier__tmeas *m, const void *p, size_t bytes) {
    const char *c = (const char *)p;
    size_t i;
    /* weights larger than the last-level cache stream from memory anyway */
    if (!p || !bytes || bytes > (m->ctx->caches.l3 > 0 ? m->ctx->caches.l3 : ((size_t)32 << 20))) return;
#if LUTHIER__X86 && (defined(__GNUC__) || defined(__clang__))
    (void)m;
    for (i = 0; i < bytes; i += 64) __builtin_ia32_clflush(c + i);
    __builtin_ia32_mfence();
#elif LUTHIER__ARM64 && (defined(__GNUC__) || defined(__clang__))
    (void)m;
    for (i = 0; i < bytes; i += 64) __asm__ __volatile__("dc civac, %0" : : "r"(c + i) : "memory");
    __asm__ __volatile__("dsb ish" : : : "memory");
#else
    (void)c;
    for (i = 0; m->flush && i < m->flush_bytes; i += 64) m->flush[i] = (unsigned char)(m->flush[i] + 1);
#endif
}

/* The int8 layer of task t (shapes, fused activation, output kind) with placeholder scales; the
   caller sets algorithm and kernel. Dense tasks are 1x1 convolutions over m pixels. */
LUTHIER_PRIVATE void luthier__tune_qdesc(const luthier__task *t, luthier_qconv2d_desc *qd) {
    luthier_conv2d_desc c;
    const luthier_conv2d_desc *cd = &c;
    luthier__task_conv(t, &c);
    memset(qd, 0, sizeof *qd);
    qd->batch = cd->batch; qd->in_channels = cd->in_channels; qd->in_h = cd->in_h; qd->in_w = cd->in_w;
    qd->out_channels = cd->out_channels; qd->kernel_h = cd->kernel_h; qd->kernel_w = cd->kernel_w;
    qd->stride_h = cd->stride_h; qd->stride_w = cd->stride_w; qd->dilation_h = cd->dilation_h; qd->dilation_w = cd->dilation_w;
    qd->pad_top = cd->pad_top; qd->pad_left = cd->pad_left; qd->pad_bottom = cd->pad_bottom; qd->pad_right = cd->pad_right;
    qd->groups = cd->groups;
    qd->layout = LUTHIER_LAYOUT_NHWC;
    qd->input_zero_point = 3;
    if (t->l.out_u8) {
        qd->output = LUTHIER_QOUTPUT_UINT8;
        qd->output_zero_point = t->l.act == LUTHIER_ACTIVATION_NONE ? 128 : 0;
        qd->multiplier = 1 << 30;
        qd->shift = 12;
        qd->output_min = t->l.act == LUTHIER_ACTIVATION_NONE ? 0 : qd->output_zero_point;
        qd->output_max = t->l.act == LUTHIER_ACTIVATION_RELU6 ? 200 : 255;
    } else {
        qd->output = LUTHIER_QOUTPUT_FLOAT;
        qd->input_scale = 0.02f;
        qd->weight_scale = 0.01f;
        qd->activation = t->l.act;
        qd->clamp_min = t->l.cmin;
        qd->clamp_max = t->l.cmax;
    }
}

/* The cluster kernels of candidate c: its kernel on each cluster (names, returned) when c->same,
   else NULL (each cluster its kernel's variant). */
LUTHIER_PRIVATE const char *const *luthier__cand_kernels(const luthier_context *ctx, const luthier__task *t, const luthier__cand *c,
                                                         const char **names) {
    int cl;
    if (!c->same || c->kernel < 0) return NULL;
    for (cl = 0; cl < LUTHIER_MAX_CLUSTERS; cl++)
        names[cl] = cl < ctx->pool->num_clusters ? luthier__kernel_tables[t->l.fam].rows[c->kernel].name : NULL;
    return names;
}

/* >>impl-tune-records: a candidate as the node configuration records hold */

/* a registry name without its "luthier_[sq]gemm_ukernel_" prefix */
LUTHIER_PRIVATE const char *luthier__kernel_short(const char *name) {
    return name + (strncmp(name, "luthier_sgemm_ukernel_", 22) == 0 || strncmp(name, "luthier_qgemm_ukernel_", 22) == 0 ? 22 : 0);
}

LUTHIER_PRIVATE void luthier__cand_config(const luthier_context *ctx, const luthier__task *t, const luthier__cand *c,
                                          luthier_node_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->algorithm = (luthier_conv_algorithm)c->algo;
    if (c->kernel >= 0)
        snprintf(cfg->kernel, sizeof cfg->kernel, "%s", luthier__kernel_tables[t->l.fam].rows[c->kernel].name);
    if (c->kernel >= 0 && c->same) { /* the knob's list form, short names: "K,K,..." */
        const char *k = luthier__kernel_short(cfg->kernel);
        size_t len = 0;
        int cl;
        char list[sizeof cfg->kernel];
        for (cl = 0; cl < ctx->pool->num_clusters && len < sizeof list; cl++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", cl ? "," : "", k);
        if (len < sizeof list) memcpy(cfg->kernel, list, len + 1); /* (else the plain name: variants) */
    }
    luthier__cand_ratios(ctx, c, &cfg->schedule, cfg->ratios, &cfg->num_ratios);
}

/* >>impl-tune-kinds: how the tuner creates a layer of each kind for a candidate, gives it the
   candidate's split (s->ratios), times one run of it, flushes its weights, and finds the
   configuration a plan without records gives it (dc arrives zeroed, kernel -1, default split);
   one row per kind, luthier__tkind_of picks it. */
typedef struct luthier__tkind {
    luthier_status (*create)(luthier__tmeas *m, luthier__tslot *s, const luthier__cand *c);
    void (*split)(luthier__tslot *s, luthier_schedule sch, int nr);
    double (*run)(luthier__tmeas *m, luthier__tslot *s); /* seconds; < 0: it failed */
    void (*evict)(luthier__tmeas *m, const luthier__tslot *s);
    void (*default_cand)(luthier__tmeas *m, luthier__cand *dc);
    void (*sizes)(luthier__tmeas *m); /* m->in_n, out_n, w_n, bias_n */
} luthier__tkind;

/* The elements of a convolution's or dense layer's input, output, weights and bias (the
   tuner's random operands). */
LUTHIER_PRIVATE void luthier__tk_layer_sizes(luthier__tmeas *m) {
    luthier_conv2d_desc cd;
    int64_t oh = 1, ow = 1;
    luthier__task_conv(m->t, &cd);
    luthier_conv2d_output_size(&cd, &oh, &ow);
    m->in_n = (size_t)(cd.batch * cd.in_channels * cd.in_h * cd.in_w);
    m->out_n = (size_t)(cd.batch * cd.out_channels * oh * ow);
    m->w_n = (size_t)(cd.out_channels * (cd.in_channels / cd.groups) * cd.kernel_h * cd.kernel_w);
    m->bias_n = (size_t)cd.out_channels;
}

/* The split of a convolution layer (fp32, fp16 or int8). */
LUTHIER_PRIVATE void luthier__tk_conv_split_of(luthier_conv2d_layer *cv, const float *ratios, luthier_schedule sch, int nr) {
    int i;
    cv->d.schedule = sch;
    cv->d.num_ratios = nr;
    for (i = 0; i < nr; i++) cv->ratios[i] = ratios[i];
    cv->d.ratios = nr ? cv->ratios : NULL;
}

/* Convolutions (fp32, fp16): a luthier_conv2d_layer. */
LUTHIER_PRIVATE luthier_status luthier__tk_conv_create(luthier__tmeas *m, luthier__tslot *s, const luthier__cand *c) {
    luthier_conv2d_desc cd = m->t->l.cd;
    cd.algorithm = (luthier_conv_algorithm)c->algo;
    cd.kernel = c->kernel >= 0 ? luthier__kernel_tables[m->t->l.fam].rows[c->kernel].name : NULL;
    cd.cluster_kernels = luthier__cand_kernels(m->ctx, m->t, c, s->names);
    return luthier_conv2d_create(m->ctx, &cd, m->w, m->bias, &s->conv);
}
LUTHIER_PRIVATE void luthier__tk_conv_split(luthier__tslot *s, luthier_schedule sch, int nr) {
    luthier__tk_conv_split_of(s->conv, s->ratios, sch, nr);
}
LUTHIER_PRIVATE double luthier__tk_conv_run(luthier__tmeas *m, luthier__tslot *s) {
    const double t0 = luthier__seconds();
    return luthier_conv2d_run(m->ctx, s->conv, m->in, m->out) == LUTHIER_STATUS_OK ? luthier__seconds() - t0 : -1.0;
}
LUTHIER_PRIVATE void luthier__tk_conv_evict(luthier__tmeas *m, const luthier__tslot *s) {
    luthier__evict(m, s->conv->packed, luthier__conv_packed_bytes(s->conv));
}
LUTHIER_PRIVATE void luthier__tk_conv_default(luthier__tmeas *m, luthier__cand *dc) {
    luthier_conv2d_layer *tmp = NULL;
    luthier_conv2d_desc cd = m->t->l.cd; /* as the plan creates it without a configuration */
    int j;
    if (m->t->l.fam == LUTHIER_KERNELS_F16) cd.kernel = luthier__conv_f16_kernel(m->ctx, &cd, LUTHIER_PRECISION_FP16);
    if (luthier_conv2d_create(m->ctx, &cd, m->w, m->bias, &tmp) == LUTHIER_STATUS_OK) {
        luthier_conv2d_info info;
        memset(&info, 0, sizeof info);
        luthier_conv2d_get_info(tmp, &info);
        dc->algo = (short)info.algorithm;
        if (info.kernel && *info.kernel && luthier_kernels_find(m->t->l.fam, info.kernel, &j) == LUTHIER_STATUS_OK)
            dc->kernel = (short)j;
        luthier_conv2d_destroy(tmp);
    }
}

/* int8 layers: a luthier_qconv2d_layer (dense: a 1x1 convolution over m pixels). */
LUTHIER_PRIVATE luthier_status luthier__tk_q_create(luthier__tmeas *m, luthier__tslot *s, const luthier__cand *c) {
    luthier_qconv2d_desc qd;
    luthier__tune_qdesc(m->t, &qd);
    qd.algorithm = (luthier_conv_algorithm)c->algo;
    qd.kernel = c->kernel >= 0 ? luthier__qkernels[c->kernel].name : NULL;
    qd.cluster_kernels = luthier__cand_kernels(m->ctx, m->t, c, s->names);
    return luthier_qconv2d_create(m->ctx, &qd, (const int8_t *)m->w, m->t->l.out_u8 ? (const int32_t *)m->bias : NULL, &s->qconv);
}
LUTHIER_PRIVATE void luthier__tk_q_split(luthier__tslot *s, luthier_schedule sch, int nr) {
    luthier__tk_conv_split_of(&s->qconv->cv, s->ratios, sch, nr);
}
LUTHIER_PRIVATE double luthier__tk_q_run(luthier__tmeas *m, luthier__tslot *s) {
    const double t0 = luthier__seconds();
    return luthier_qconv2d_run(m->ctx, s->qconv, (const uint8_t *)m->in, m->out) == LUTHIER_STATUS_OK ? luthier__seconds() - t0
                                                                                                     : -1.0;
}
LUTHIER_PRIVATE void luthier__tk_q_evict(luthier__tmeas *m, const luthier__tslot *s) {
    const luthier_conv2d_layer *cv = &s->qconv->cv;
    luthier__evict(m, cv->packed, cv->group_floats * sizeof(float) * (size_t)cv->d.groups);
}
LUTHIER_PRIVATE void luthier__tk_q_default(luthier__tmeas *m, luthier__cand *dc) {
    luthier_qconv2d_layer *tmp = NULL;
    luthier_qconv2d_desc qd;
    int j;
    luthier__tune_qdesc(m->t, &qd);
    if (luthier_qconv2d_create(m->ctx, &qd, (const int8_t *)m->w, NULL, &tmp) == LUTHIER_STATUS_OK) {
        luthier_conv2d_info info;
        memset(&info, 0, sizeof info);
        luthier_qconv2d_get_info(tmp, &info);
        dc->algo = m->t->l.op == LUTHIER_OP_CONV2D ? (short)info.algorithm : 0;
        if (info.kernel && *info.kernel && luthier_qkernel_find(info.kernel, &j) == LUTHIER_STATUS_OK) dc->kernel = (short)j;
        luthier_qconv2d_destroy(tmp);
    }
}

/* Dense layers: the packed weights and the luthier_sgemm_packed call of the plan's step. */
LUTHIER_PRIVATE luthier_status luthier__tk_dense_create(luthier__tmeas *m, luthier__tslot *s, const luthier__cand *c) {
    const luthier__layer *l = &m->t->l;
    luthier_sgemm_desc *sd = &s->sd;
    luthier_status st;
    memset(sd, 0, sizeof *sd);
    sd->m = l->m; sd->n = l->n; sd->k = l->k;
    sd->trans_b = !l->trans_w;
    sd->kernel = luthier__kernel_tables[l->fam].rows[c->kernel].name;
    if ((st = luthier_sgemm_pack_b(m->ctx, sd, m->w, &s->pb)) != LUTHIER_STATUS_OK) return st;
    sd->kernel = NULL;
    sd->bias = m->bias;
    sd->activation = l->act;
    sd->clamp_min = l->cmin;
    sd->clamp_max = l->cmax;
    sd->accumulate = l->residual;
    sd->cluster_kernels = luthier__cand_kernels(m->ctx, m->t, c, s->names);
    return LUTHIER_STATUS_OK;
}
LUTHIER_PRIVATE void luthier__tk_dense_split(luthier__tslot *s, luthier_schedule sch, int nr) {
    s->sd.schedule = sch;
    s->sd.ratios = nr ? s->ratios : NULL;
    s->sd.num_ratios = nr;
}
LUTHIER_PRIVATE double luthier__tk_dense_run(luthier__tmeas *m, luthier__tslot *s) {
    const double t0 = luthier__seconds();
    return luthier_sgemm_packed(m->ctx, &s->sd, m->in, s->pb, m->out) == LUTHIER_STATUS_OK ? luthier__seconds() - t0 : -1.0;
}
LUTHIER_PRIVATE void luthier__tk_dense_evict(luthier__tmeas *m, const luthier__tslot *s) {
    luthier__evict(m, s->pb->data, s->pb->layout.bytes);
}
LUTHIER_PRIVATE void luthier__tk_dense_default(luthier__tmeas *m, luthier__cand *dc) {
    const luthier__task *t = m->t;
    const luthier__kernel_entry *e = t->l.fam == LUTHIER_KERNELS_F16W ? luthier__f16w_kernel(m->ctx, (size_t)t->l.n)
                                                                       : &luthier__ukernels[luthier__kernel_for_n(m->ctx, (size_t)t->l.n)];
    dc->kernel = (short)(e - luthier__kernel_tables[t->l.fam].rows);
}

/* Other layers (conv_transpose): timed as their step in a plan of the node alone, its fused
   activation included, made with the candidate's configuration (>>impl-records). */
LUTHIER_PRIVATE luthier_status luthier__tk_plan_create(luthier__tmeas *m, luthier__tslot *s, const luthier__cand *c) {
    const luthier__gnode *gn = &m->g->nodes[m->t->first_node];
    const luthier__fuse *fz = &m->f[m->t->first_node];
    luthier_graph *g1 = NULL;
    luthier_node_desc d = gn->d;
    luthier_fused_activation *act = (luthier_fused_activation *)luthier__node_act(&d);
    luthier_node_config cfg;
    luthier_plan_desc pd;
    luthier_step_info si;
    int in[8], out = -1, i, k;
    luthier_status st = luthier_graph_create(&g1);
    for (i = 0; st == LUTHIER_STATUS_OK && i < d.num_inputs && i < 8; i++) {
        const luthier__gtensor *x = gn->inputs[i] >= 0 ? &m->g->tensors[gn->inputs[i]] : NULL;
        if (!x) in[i] = -1;
        else if (x->is_const && x->dtype == LUTHIER_DTYPE_F32)
            st = luthier_graph_constant(g1, x->name, x->rank, x->shape, (const float *)x->data, 0, &in[i]);
        else if (i == 0 && x->dtype == LUTHIER_DTYPE_F32)
            st = luthier_graph_input(g1, x->name, LUTHIER_DTYPE_F32, x->rank, x->shape, &in[i]);
        else
            st = LUTHIER_STATUS_UNSUPPORTED;
    }
    d.inputs = in;
    if (act) act->kind = fz->act, act->clamp_min = fz->cmin, act->clamp_max = fz->cmax;
    if (st == LUTHIER_STATUS_OK && d.num_inputs <= 8 && (st = luthier_graph_add_node(g1, &d, &out)) == LUTHIER_STATUS_OK)
        st = luthier_graph_output(g1, out);
    luthier__cand_config(m->ctx, m->t, c, &cfg);
    memset(&pd, 0, sizeof pd);
    pd.configs = &cfg;
    pd.num_configs = 1;
    if (st == LUTHIER_STATUS_OK && (st = luthier_plan_create(m->ctx, g1, &pd, &s->plan)) == LUTHIER_STATUS_OK)
        st = luthier_plan_set_profiling(s->plan, 1);
    luthier_graph_destroy(g1);
    for (k = 0; st == LUTHIER_STATUS_OK && luthier_plan_step_info(s->plan, k, &si) == LUTHIER_STATUS_OK; k++)
        if (si.node == 0) s->step = &s->plan->steps[k];
    return st != LUTHIER_STATUS_OK ? st : s->step ? LUTHIER_STATUS_OK : LUTHIER_STATUS_NOT_FOUND;
}
LUTHIER_PRIVATE void luthier__tk_plan_split(luthier__tslot *s, luthier_schedule sch, int nr) {
    int i;
    s->step->cfg.schedule = sch;
    s->step->cfg.num_ratios = nr;
    for (i = 0; i < nr; i++) s->step->cfg.ratios[i] = s->ratios[i];
}
LUTHIER_PRIVATE double luthier__tk_plan_run(luthier__tmeas *m, luthier__tslot *s) {
    const void *in[1];
    void *out[1];
    in[0] = m->in;
    out[0] = m->out;
    return luthier_plan_run(m->ctx, s->plan, in, out) == LUTHIER_STATUS_OK ? s->step->seconds : -1.0;
}
LUTHIER_PRIVATE void luthier__tk_plan_evict(luthier__tmeas *m, const luthier__tslot *s) {
    luthier__evict(m, s->step->packed, s->step->packed_bytes);
}
LUTHIER_PRIVATE void luthier__tk_plan_sizes(luthier__tmeas *m) {
    const luthier__gnode *gn = &m->g->nodes[m->t->first_node];
    const luthier__gtensor *x = &m->g->tensors[gn->inputs[0]], *y = &m->g->tensors[gn->outputs[0]];
    int ok;
    m->in_n = (size_t)luthier__numel(x->rank, x->shape, &ok);
    m->out_n = (size_t)luthier__numel(y->rank, y->shape, &ok);
    m->w_n = m->bias_n = 1; /* (the weights are the graph's) */
}
LUTHIER_PRIVATE void luthier__tk_plan_default(luthier__tmeas *m, luthier__cand *dc) {
    luthier__tslot s;
    luthier__cand c = *dc;
    int j;
    memset(&s, 0, sizeof s);
    c.kernel = -1; /* no kernel knob: the plan's own choice */
    c.algo = LUTHIER_CONV_AUTO;
    if (luthier__tk_plan_create(m, &s, &c) == LUTHIER_STATUS_OK) {
        dc->algo = (short)s.step->algorithm;
        if (s.step->kernel[0] && luthier_kernels_find(m->t->l.fam, s.step->kernel, &j) == LUTHIER_STATUS_OK) dc->kernel = (short)j;
    }
    luthier__tslot_clear(&s);
}

enum { LUTHIER__TK_CONV, LUTHIER__TK_Q, LUTHIER__TK_DENSE, LUTHIER__TK_PLAN };
static const luthier__tkind luthier__tkinds[] = {
    {luthier__tk_conv_create, luthier__tk_conv_split, luthier__tk_conv_run, luthier__tk_conv_evict, luthier__tk_conv_default, luthier__tk_layer_sizes},
    {luthier__tk_q_create, luthier__tk_q_split, luthier__tk_q_run, luthier__tk_q_evict, luthier__tk_q_default, luthier__tk_layer_sizes},
    {luthier__tk_dense_create, luthier__tk_dense_split, luthier__tk_dense_run, luthier__tk_dense_evict, luthier__tk_dense_default, luthier__tk_layer_sizes},
    {luthier__tk_plan_create, luthier__tk_plan_split, luthier__tk_plan_run, luthier__tk_plan_evict, luthier__tk_plan_default, luthier__tk_plan_sizes}};

LUTHIER_PRIVATE const luthier__tkind *luthier__tkind_of(const luthier__task *t) {
    return &luthier__tkinds[t->l.q ? LUTHIER__TK_Q
                            : t->l.op == LUTHIER_OP_CONV2D ? LUTHIER__TK_CONV
                            : t->l.op == LUTHIER_OP_DENSE  ? LUTHIER__TK_DENSE
                                                           : LUTHIER__TK_PLAN];
}

/* The slot of m's cache that holds candidate c's layer, created in the least recently used
   one when none does; NULL when it cannot be created. */
LUTHIER_PRIVATE luthier__tslot *luthier__tmeas_slot(luthier__tmeas *m, const luthier__cand *c) {
    luthier__tslot *s = NULL;
    int i;
    for (i = 0; i < LUTHIER__TUNE_CACHE; i++)
        if (m->cache[i].used && m->cache[i].algo == c->algo && m->cache[i].kernel == c->kernel && m->cache[i].same == c->same)
            s = &m->cache[i];
    if (!s) {
        s = &m->cache[0];
        for (i = 1; i < LUTHIER__TUNE_CACHE; i++)
            if (m->cache[i].used < s->used) s = &m->cache[i];
        luthier__tslot_clear(s);
        s->algo = c->algo;
        s->kernel = c->kernel;
        s->same = c->same;
        if (luthier__tkind_of(m->t)->create(m, s, c) != LUTHIER_STATUS_OK) {
            luthier__tslot_clear(s);
            return NULL;
        }
    }
    s->used = ++m->tick;
    return s;
}

/* Times one run of the candidate (ms, minimum of repetitions); < 0 when it cannot run. busy
   (NULL, or one per cluster): the seconds each cluster spent on its share in that fastest run. */
LUTHIER_PRIVATE double luthier__measure_cand(luthier__tmeas *m, const luthier__cand *c, double *busy) {
    luthier_context *ctx = m->ctx;
    const luthier__tkind *kind = luthier__tkind_of(m->t);
    luthier__tslot *s = luthier__tmeas_slot(m, c);
    luthier_schedule sch;
    int nr, reps, r, pass;
    double best = 1e30, first, med[32];
    if (!s) return -1.0;
    luthier__cand_ratios(ctx, c, &sch, s->ratios, &nr);
    kind->split(s, sch, nr);
    if ((first = kind->run(m, s)) < 0) return -1.0; /* warm-up */
    reps = first > 0 ? (int)(0.005 / first) : 32;
    if (reps < 3) reps = 3;
    if (reps > 32) reps = 32;
    /* a noisy sample (median far above the minimum) is taken once more */
    for (pass = 0; pass < 2; pass++) {
        int a, below = 0;
        for (r = 0; r < reps; r++) {
            double dt;
            kind->evict(m, s);
            if (busy) luthier__pool_timing(ctx, 1);
            dt = kind->run(m, s);
            if (!pass) med[r] = dt;
            if (dt >= 0 && dt < best) {
                best = dt;
                if (busy) luthier__pool_cluster_busy(ctx, busy);
            }
        }
        for (a = 0; a < reps; a++, below = 0) {
            for (r = 0; r < reps; r++) below += med[r] < med[a];
            if (below >= reps / 2) break;
        }
        if (pass || !(a < reps && med[a] > 1.5 * best && reps <= 8)) break;
    }
    if (busy) luthier__pool_timing(ctx, 0);
    return best < 1e30 ? best * 1e3 : -1.0;
}

/* The search's measure callback: seconds, negative when the candidate fails or the budget is
   out; busy (NULL or one per cluster) as luthier__measure_cand's. */
LUTHIER_PRIVATE double luthier__tune_measure(void *user, size_t i, double *busy) {
    luthier__tmeas *m = (luthier__tmeas *)user;
    double ms;
    if (m->times[i] != 0) return m->times[i] > 0 ? m->times[i] * 1e-3 : -1.0;
    if ((m->max_measurements >= 0 && m->measurements >= m->max_measurements) ||
        (m->deadline > 0 && luthier__seconds() > m->deadline))
        return -1.0;
    ms = luthier__measure_cand(m, &m->cands[i], busy);
    m->measurements++;
    m->times[i] = ms > 0 ? ms : -1.0;
    return ms > 0 ? ms * 1e-3 : -1.0;
}

/* m set up to measure task t (of graph g with fusion f) over its nc candidates on ctx: times
   zeroed, random data for the operands; 0 when memory is short (luthier__tmeas_free frees what
   it got). */
LUTHIER_PRIVATE int luthier__tmeas_open(luthier__tmeas *m, luthier_context *ctx, const luthier_graph *g, const luthier__fuse *f,
                                        const luthier__task *t, const luthier__cand *cands, size_t nc) {
    size_t i;
    uint64_t st = 0x1234567;
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->t = t;
    m->g = g;
    m->f = f;
    m->cands = cands;
    m->times = (double *)luthier__zalloc(sizeof(double) * (nc ? nc : 1));
    luthier__tkind_of(t)->sizes(m);
    m->in = (float *)luthier__alloc(sizeof(float) * m->in_n);
    m->out = (float *)luthier__alloc(sizeof(float) * m->out_n);
    m->w = (float *)luthier__alloc(sizeof(float) * m->w_n);
    m->bias = (float *)luthier__alloc(sizeof(float) * m->bias_n);
    /* fallback eviction buffer (see luthier__evict) */
    m->flush_bytes = 2 * (m->ctx->caches.l2 > 0 ? m->ctx->caches.l2 : ((size_t)1 << 20)) + m->ctx->caches.l1d;
    m->flush = (unsigned char *)luthier__zalloc(m->flush_bytes);
    if (!m->times || !m->in || !m->out || !m->w || !m->bias || !m->flush) return 0;
    for (i = 0; i < m->in_n; i++) m->in[i] = (float)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 40) * 1e-7f - 0.8f;
    for (i = 0; i < m->w_n; i++) m->w[i] = (float)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 40) * 1e-9f - 0.008f;
    for (i = 0; i < m->out_n; i++) m->out[i] = 0.0f;
    for (i = 0; i < m->bias_n; i++) m->bias[i] = 0.01f;
    if (t->l.q) { /* the same buffers hold uint8 input, int8 weights and int32 bias */
        for (i = 0; i < m->w_n; i++) ((int8_t *)m->w)[i] = (int8_t)((int)(i * 37 % 255) - 127);
        for (i = 0; i < m->bias_n; i++) ((int32_t *)m->bias)[i] = 100;
    }
    return 1;
}

LUTHIER_PRIVATE void luthier__tmeas_free(luthier__tmeas *m) {
    luthier__tmeas_flush(m);
    luthier__free(m->in);
    luthier__free(m->out);
    luthier__free(m->w);
    luthier__free(m->bias);
    luthier__free(m->flush);
    luthier__free(m->times);
    m->in = m->out = m->w = m->bias = NULL;
    m->flush = NULL;
    m->times = NULL;
}

/* >>impl-tune-svg: time over (kernel x share of cluster 0, or x algorithm) for one task */

LUTHIER_PRIVATE void luthier__svg_color(double v, char *buf, size_t size) {
    /* v in [0, 1]: 0 = fast (dark blue) .. 1 = slow (yellow) */
    int r = (int)(30 + 220 * v), g2 = (int)(40 + 190 * v), b = (int)(120 - 90 * v);
    snprintf(buf, size, "#%02x%02x%02x", r, g2, b < 0 ? 0 : b);
}

LUTHIER_PRIVATE void luthier__write_heatmap(luthier_context *ctx, luthier__tmeas *m, const luthier__task *t,
                                            const luthier__cand *best, const char *path) {
    FILE *fh;
    int nk = luthier_kernels_count(t->l.fam), rows = 0, cols, r, c, k, by_share = ctx->pool->num_clusters >= 2;
    int kernels[64];
    double cell[64][16], lo = 1e30, hi = 0;
    const char *colname[16];
    char colbuf[16][24];
    luthier__cand cd = *best;
    if (!(fh = fopen(path, "w"))) return;
    cols = by_share ? 11 : 0;
    if (!by_share && t->l.op != LUTHIER_OP_CONV2D) colname[cols++] = "gemm"; /* a dense task has no algorithm knob */
    else if (!by_share)
        for (c = 1; c < (int)LUTHIER_CONV_ALGORITHM_COUNT && cols < 16; c++) colname[cols++] = luthier_conv_algorithm_name((luthier_conv_algorithm)c);
    for (k = 0; k < nk && rows < 64; k++) {
        luthier_kernel_info ki;
        luthier_kernels_get(t->l.fam, k, &ki); /* the task's family (int8, fp16 tasks: theirs) */
        if ((ki.required_cpu_features & ~ctx->cpu_features) || strcmp(ki.isa, "scalar") == 0) continue;
        kernels[rows] = k;
        for (c = 0; c < cols; c++) {
            double ms;
            cd = *best;
            cd.kernel = (short)k;
            cd.dynamic = 0;
            if (by_share) {
                cd.shares[0] = (short)(c * 10);
                cd.shares[1] = (short)(100 - c * 10);
                cd.shares[2] = 0;
                if (ctx->pool->num_clusters > 2) cd.shares[1] = (short)((100 - c * 10) / 2), cd.shares[2] = (short)(100 - c * 10 - cd.shares[1]);
            } else if (t->l.op == LUTHIER_OP_CONV2D) {
                cd.algo = (short)(c + 1);
            } else if (cd.algo == LUTHIER_CONV_DEPTHWISE) {
                cd.algo = LUTHIER_CONV_IM2COL; /* (a depthwise conv_transpose: its GEMM per kernel) */
            }
            if (t->l.op == LUTHIER_OP_CONV2D &&
                (luthier_conv2d_algorithm_valid(ctx, &t->l.cd, (luthier_conv_algorithm)cd.algo) != LUTHIER_STATUS_OK ||
                 (cd.algo == LUTHIER_CONV_IMPLICIT_GEMM && ki.kind != LUTHIER_KERNEL_HYBRID) || cd.algo == LUTHIER_CONV_DEPTHWISE))
                ms = -1;
            else
                ms = luthier__measure_cand(m, &cd, NULL);
            cell[rows][c] = ms;
            if (ms > 0 && ms < lo) lo = ms;
            if (ms > hi) hi = ms;
        }
        rows++;
    }
    if (by_share)
        for (c = 0; c < cols; c++) {
            snprintf(colbuf[c], sizeof colbuf[c], "%d%%", c * 10);
            colname[c] = colbuf[c];
        }
    fprintf(fh, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            260 + cols * 64, 90 + rows * 22);
    fprintf(fh, "<text x=\"10\" y=\"18\" font-size=\"13\">%s</text>\n", t->l.sig);
    fprintf(fh, "<text x=\"10\" y=\"36\">time per run (ms) by kernel and %s; darker is faster; algorithm %s</text>\n",
            by_share ? "share of the fastest cluster" : t->l.op == LUTHIER_OP_CONV2D ? "algorithm" : "GEMM",
            by_share || t->l.op != LUTHIER_OP_CONV2D ? luthier_conv_algorithm_name((luthier_conv_algorithm)best->algo) : "per column");
    for (c = 0; c < cols; c++)
        fprintf(fh, "<text x=\"%d\" y=\"60\" text-anchor=\"middle\">%s</text>\n", 250 + c * 64 + 32, colname[c]);
    for (r = 0; r < rows; r++) {
        const char *kn = luthier__kernel_tables[t->l.fam].rows[kernels[r]].name;
        if (strncmp(kn, "luthier_sgemm_ukernel_", 22) == 0) kn += 22;
        fprintf(fh, "<text x=\"10\" y=\"%d\">%s</text>\n", 80 + r * 22, kn);
        for (c = 0; c < cols; c++) {
            char col[16];
            double v = cell[r][c];
            if (v <= 0) {
                fprintf(fh, "<rect x=\"%d\" y=\"%d\" width=\"62\" height=\"20\" fill=\"#dddddd\"/>\n", 250 + c * 64, 66 + r * 22);
                continue;
            }
            luthier__svg_color(hi > lo ? (log(v) - log(lo)) / (log(hi) - log(lo)) : 0.0, col, sizeof col);
            fprintf(fh, "<rect x=\"%d\" y=\"%d\" width=\"62\" height=\"20\" fill=\"%s\"/>"
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%.3g</text>\n",
                    250 + c * 64, 66 + r * 22, col, 250 + c * 64 + 31, 80 + r * 22, v > (lo + hi) / 2 ? "#000" : "#fff", v);
        }
    }
    fprintf(fh, "</svg>\n");
    fclose(fh);
}

/* >>impl-tune-run */

LUTHIER_PRIVATE int luthier__isatty_stderr(void) {
#if defined(__unix__) || defined(__APPLE__)
    return isatty(2);
#else
    return 0;
#endif
}


/* Everything measured so far in a tuning run, as (features, log(time / the task's default time)):
   the cost model that starts each task's search is fitted on it, so the tasks tuned before
   rank the first candidates of the next one (on top of desc.model_in when given). */
typedef struct luthier__tune_data {
    float *x, *y;
    size_t n;
    int cap;
} luthier__tune_data;

LUTHIER_PRIVATE int luthier__tune_data_add(luthier__tune_data *D, const float *x, float y) {
    int cx = D->cap, cy = D->cap;
    if (!luthier__grow((void **)&D->x, &cx, (int)D->n + 1, sizeof(float) * LUTHIER__TUNE_FEATURES) ||
        !luthier__grow((void **)&D->y, &cy, (int)D->n + 1, sizeof(float)))
        return 0; /* (a grown x keeps its rows) */
    D->cap = cx < cy ? cx : cy;
    memcpy(D->x + D->n * LUTHIER__TUNE_FEATURES, x, sizeof(float) * LUTHIER__TUNE_FEATURES);
    D->y[D->n++] = y;
    return 1;
}

/* The model of D (continuing base when given); NULL when D is too small or memory is short. */
LUTHIER_PRIVATE luthier__gbt *luthier__tune_data_fit(const luthier__tune_data *D, const luthier__gbt *base, uint64_t seed) {
    luthier__gbt *m = NULL;
    if (D->n < 8) return base ? luthier__gbt_clone(base) : NULL;
    if (luthier__search_model(base, D->x, D->y, D->n, LUTHIER__TUNE_FEATURES, LUTHIER__GBT_SQUARED, seed, &m) != LUTHIER_STATUS_OK)
        m = NULL;
    return m;
}

#define LUTHIER__PLAN_CHECK_ROUNDS 5


#define LUTHIER__PLAN_SETS (2 + LUTHIER__PLAN_RUNNERS)

/* A plan description that runs num configs (NULL: none) with the int8 calibration cal in precision
   prec; a configuration a node cannot take falls back to its default (fallback_invalid). */
LUTHIER_PRIVATE void luthier__tune_plan_desc(luthier_plan_desc *pd, const luthier_node_config *configs, int num,
                                             const luthier_calibration *cal, luthier_precision prec) {
    memset(pd, 0, sizeof *pd);
    pd->configs = configs;
    pd->num_configs = num;
    pd->fallback_invalid = 1;
    pd->int8 = cal;
    pd->precision = prec;
}

/* Element count of tensor t (checked by the graph), its dtype in *f32 (1: fp32). */
LUTHIER_PRIVATE size_t luthier__guard_numel(const luthier_graph *g, int t, int *f32) {
    luthier_tensor_info ti;
    size_t n = 1;
    int a;
    *f32 = 0;
    if (luthier_graph_tensor_info(g, t, &ti) != LUTHIER_STATUS_OK) return 0;
    for (a = 0; a < ti.rank; a++) n *= (size_t)ti.shape[a];
    *f32 = ti.dtype == LUTHIER_DTYPE_F32;
    return n;
}

/* A buffer for tensor t of g, 8 bytes per element and 8 more, zeroed; with draw, its fp32
   elements uniform in [-1, 1] from seed (other types keep 0: an index valid for any gather).
   NULL when memory is short. */
LUTHIER_PRIVATE void *luthier__tune_buffer(const luthier_graph *g, int t, int draw, uint64_t seed) {
    int f32;
    const size_t n = luthier__guard_numel(g, t, &f32);
    void *p = luthier__zalloc(n * 8 + 8);
    size_t e;
    for (e = 0; p && draw && f32 && e < n; e++) ((float *)p)[e] = (float)(2.0 * luthier__gbt_uniform(&seed) - 1.0);
    return p;
}

/* The in-plan check (see the top of this file): plans of nsets configuration sets, set k
   giving task i the configuration sets[k][i] (sets[k] NULL: every node its default; a task
   whose best is the default keeps it in every set), profiled in alternating rounds;
   times[k * ntasks + i] = task i's steps summed over a run of plan k, the smallest of the
   rounds. 0 when it cannot run (memory, a plan that does not build): then nothing changes.
   Sets past the first two whose plans cannot be created (memory: each plan packs its own
   weights) are dropped: *nsets is lowered to the sets that ran. */
LUTHIER_PRIVATE int luthier__tune_plan_times(luthier_context *ctx, const luthier_graph *g, const luthier_tune_desc *d,
                                            const luthier__task *tasks, int ntasks, const int *node_task,
                                            const luthier_node_config *const *sets, int *nsets_io, double *times,
                                            char *why, size_t why_size) {
    int nsets = *nsets_io;
    luthier_plan *plan[LUTHIER__PLAN_SETS];
    luthier_node_config *configs = NULL;
    void **in = NULL, **out = NULL;
    double *round = NULL;
    const int nin = luthier_graph_num_inputs(g), nout = luthier_graph_num_outputs(g);
    int ok = 0, i, k, r, nsteps[LUTHIER__PLAN_SETS];
    for (k = 0; k < LUTHIER__PLAN_SETS; k++) plan[k] = NULL, nsteps[k] = 0;
    if (nsets < 1 || nsets > LUTHIER__PLAN_SETS) {
        snprintf(why, why_size, "%d plans", nsets);
        return 0;
    }
    in = (void **)luthier__zalloc(sizeof(void *) * (size_t)(nin + 1));
    out = (void **)luthier__zalloc(sizeof(void *) * (size_t)(nout + 1));
    configs = (luthier_node_config *)luthier__alloc(sizeof *configs * (size_t)(g->num_nodes + 1));
    round = (double *)luthier__alloc(sizeof(double) * (size_t)(ntasks + 1));
    if (!in || !out || !configs || !round) goto done;
    for (i = 0; i < nin; i++)
        if (!(in[i] = luthier__tune_buffer(g, luthier_graph_input_tensor(g, i), 1, 0x5eedull + (uint64_t)i))) goto done;
    for (i = 0; i < nout; i++)
        if (!(out[i] = luthier__tune_buffer(g, luthier_graph_output_tensor(g, i), 0, 0))) goto done;
    for (k = 0; k < nsets; k++) {
        luthier_plan_desc pd;
        luthier_plan_info info;
        memset(configs, 0, sizeof *configs * (size_t)g->num_nodes);
        for (i = 0; sets[k] && i < g->num_nodes; i++)
            if (node_task[i] >= 0 && tasks[node_task[i]].best >= 0) configs[i] = sets[k][node_task[i]];
        luthier__tune_plan_desc(&pd, sets[k] ? configs : NULL, sets[k] ? g->num_nodes : 0, d->int8, d->precision);
        if (k >= 2 && luthier_plan_create(ctx, g, &pd, &plan[k]) != LUTHIER_STATUS_OK) {
            *nsets_io = nsets = k;
            break;
        }
        if ((k < 2 && luthier_plan_create(ctx, g, &pd, &plan[k]) != LUTHIER_STATUS_OK) || luthier_plan_get_info(plan[k], &info) != LUTHIER_STATUS_OK ||
            luthier_plan_set_profiling(plan[k], 1) != LUTHIER_STATUS_OK ||
            luthier_plan_run(ctx, plan[k], (const void *const *)in, out) != LUTHIER_STATUS_OK) /* warm-up */
            goto done;
        nsteps[k] = info.num_steps;
    }
    for (i = 0; i < nsets * ntasks; i++) times[i] = 1e30;
    for (r = 0; r < nsets * LUTHIER__PLAN_CHECK_ROUNDS; r++) {
        /* the sets in turn, every other round backwards: 0 1 2 | 2 1 0 | 0 1 2 ... */
        const int q0 = r % nsets, k = (r / nsets) % 2 ? nsets - 1 - q0 : q0;
        double *best = times + (size_t)k * (size_t)ntasks;
        int s;
        if (luthier_plan_run(ctx, plan[k], (const void *const *)in, out) != LUTHIER_STATUS_OK) goto done;
        for (i = 0; i < ntasks; i++) round[i] = 0;
        for (s = 0; s < nsteps[k]; s++) {
            luthier_step_info si;
            if (luthier_plan_step_info(plan[k], s, &si) == LUTHIER_STATUS_OK && si.node >= 0 && si.node < g->num_nodes &&
                node_task[si.node] >= 0)
                round[node_task[si.node]] += si.last_seconds * 1e3;
        }
        for (i = 0; i < ntasks; i++)
            if (round[i] < best[i]) best[i] = round[i];
    }
    ok = 1;
done:
    for (k = 0; k < LUTHIER__PLAN_SETS; k++) luthier_plan_destroy(plan[k]);
    for (i = 0; in && i < nin; i++) luthier__free(in[i]);
    for (i = 0; out && i < nout; i++) luthier__free(out[i]);
    luthier__free(in);
    luthier__free(out);
    luthier__free(configs);
    luthier__free(round);
    snprintf(why, why_size, "%s", ok ? "" : ctx->error[0] ? ctx->error : "out of memory");
    ctx->error[0] = 0; /* a failed check is not the run's error */
    return ok;
}

/* 1 if candidate c's (algorithm, kernel) pair is the winner's or a runner-up's already */
LUTHIER_PRIVATE int luthier__runner_taken(const luthier__task *t, const luthier__tmeas *m, size_t c, const int *runner) {
    int k;
    for (k = -1; k < t->runners; k++) {
        const luthier__cand *o = &m->cands[k < 0 ? t->best : runner[k]];
        if (m->cands[c].algo == o->algo && m->cands[c].kernel == o->kernel && m->cands[c].same == o->same) return 1;
    }
    return 0;
}

/* Adds candidate c to t's runners-up (runner[] their indices) if it is another (algorithm,
   kernel) pair than the winner's and theirs and runs faster alone than the default, measuring
   it first when the search did not and may_measure says so. Returns the measurements made (0 or
   1). */
LUTHIER_PRIVATE int luthier__runner_add(luthier_context *ctx, luthier__task *t, luthier__tmeas *m, size_t c, int *runner,
                                        int may_measure) {
    const luthier__cand *x = &m->cands[c];
    int made = 0;
    if (t->runners >= LUTHIER__PLAN_RUNNERS || luthier__runner_taken(t, m, c, runner)) return 0;
    if (m->times[c] == 0 && !may_measure) return 0;
    if (m->times[c] == 0) {
        const double ms = luthier__measure_cand(m, x, NULL);
        m->times[c] = ms > 0 ? ms : -1.0;
        made = 1;
        t->measured++;
    }
    if (m->times[c] > 0 && m->times[c] < t->default_ms) {
        runner[t->runners] = (int)c;
        t->runner_ms[t->runners] = m->times[c];
        luthier__cand_config(ctx, t, x, &t->runner_cfg[t->runners]);
        t->runners++;
    }
    return made;
}

/* The runners-up of a task whose winner is not the default: kernels rank differently alone
   (weights flushed) and in the plan (ResNet-101, 2 threads: the 8x32 kernel won the 14x14
   Winograd layers alone and ran 7 % slower than 6x64 in the plan; layer2's F(2x2) ran at 0.47
   ms with 14x32 and 0.36 with 6x64), and the search measures a tenth of the space. So per
   algorithm whose best time alone is within LUTHIER__RUNNER_SLACK of the winner's, fastest
   first: the algorithm on the task's default kernel (the split and schedule of its best pair;
   measured now if need be), then its best measured pair; then, slots left, the next fastest
   measured pairs. Each must run faster alone than the default. may_measure = 0 (a search the
   cost model ordered: its measured candidates are already the pairs predicted fastest, and
   the per-task cap covers everything measured) takes only measured pairs. Returns the
   measurements made. */
LUTHIER_PRIVATE int luthier__task_runners(luthier_context *ctx, luthier__task *t, luthier__tmeas *m, size_t nc,
                                          int default_kernel, int may_measure) {
    int runner[LUTHIER__PLAN_RUNNERS], made = 0, done[LUTHIER_CONV_ALGORITHM_COUNT + 1];
    size_t c, v;
    memset(done, 0, sizeof done);
    t->runners = 0;
    for (;;) { /* algorithms, by their best time alone */
        int bc = -1;
        for (c = 0; c < nc; c++)
            if (m->times[c] > 0 && m->times[c] <= LUTHIER__RUNNER_SLACK * t->best_ms &&
                (unsigned)m->cands[c].algo <= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT && !done[m->cands[c].algo] &&
                (bc < 0 || m->times[c] < m->times[bc]))
                bc = (int)c;
        if (bc < 0 || t->runners >= LUTHIER__PLAN_RUNNERS) break;
        done[m->cands[bc].algo] = 1;
        for (v = 0; default_kernel >= 0 && v < nc; v++)
            if (m->cands[v].algo == m->cands[bc].algo && m->cands[v].kernel == default_kernel && !m->cands[v].same &&
                m->cands[v].dynamic == m->cands[bc].dynamic &&
                memcmp(m->cands[v].shares, m->cands[bc].shares, sizeof m->cands[v].shares) == 0) {
                made += luthier__runner_add(ctx, t, m, v, runner, may_measure);
                break;
            }
        made += luthier__runner_add(ctx, t, m, (size_t)bc, runner, may_measure);
    }
    while (t->runners < LUTHIER__PLAN_RUNNERS) { /* the next fastest measured pairs */
        const int before = t->runners;
        int bc = -1;
        for (c = 0; c < nc; c++)
            if (m->times[c] > 0 && m->times[c] <= LUTHIER__RUNNER_SLACK * t->best_ms && m->times[c] < t->default_ms &&
                !luthier__runner_taken(t, m, c, runner) && (bc < 0 || m->times[c] < m->times[bc]))
                bc = (int)c;
        if (bc < 0) break;
        made += luthier__runner_add(ctx, t, m, (size_t)bc, runner, may_measure);
        if (t->runners == before) break;
    }
    return made;
}

/* >>impl-tune-offline: luthier_tune_desc.offline. The model must know the target's cores with
   this build's kernels: a cluster whose core row cannot run the context's kernel (an ARM board
   described to an x86 build) is refused. */
LUTHIER_PRIVATE luthier_status luthier__tune_offline_check(luthier_context *ctx) {
    luthier__cm_machine mc;
    int c;
    luthier__cm_machine_of(ctx, &mc);
    for (c = 0; c < mc.num_clusters; c++)
        if (!luthier__cm_core_runs(mc.core[c], &luthier__ukernels[ctx->kernel]))
            return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                                 "tune: offline: cluster '%s' (%s) is a %s core, which does not run this build's kernels "
                                 "(%s): predict with the target's build (an AArch64 board's under qemu-aarch64)",
                                 ctx->topology.clusters[c].name, ctx->topology.clusters[c].core[0] ? ctx->topology.clusters[c].core : "unknown",
                                 mc.core[c]->name, luthier__ukernels[ctx->kernel].name);
    return LUTHIER_STATUS_OK;
}

/* The default configuration of fp32 task t, as a plan without records picks it (AUTO under
   ctx's policy; dense: the kernel for its n), found without creating the layer. */
LUTHIER_PRIVATE void luthier__tune_default_guess(luthier_context *ctx, const luthier__task *t, luthier__cand *dc) {
    luthier_conv2d_desc nd;
    luthier_conv_algorithm a;
    int64_t oh, ow;
    int k = -1;
    memset(dc, 0, sizeof *dc);
    dc->shares[0] = -1;
    dc->kernel = -1;
    if (luthier__layer_convt_dw(&t->l)) {
        dc->algo = LUTHIER_CONV_DEPTHWISE;
    } else if (t->l.op != LUTHIER_OP_CONV2D) {
        dc->kernel = (short)luthier__kernel_for_n(ctx, (size_t)t->l.n);
        if (t->l.op == LUTHIER_OP_CONV_TRANSPOSE) dc->algo = LUTHIER_CONV_IM2COL;
    } else if (luthier__conv_normalize(NULL, &t->l.cd, &nd, &oh, &ow) == LUTHIER_STATUS_OK &&
               luthier__conv_choose(ctx, &nd, &a, &k) == LUTHIER_STATUS_OK) {
        dc->algo = (short)a;
        dc->kernel = (short)k;
    }
}

/* >>impl-tune-phases: luthier_tune runs these phases over one state (luthier__tuner):
     open        the descriptor checked, the cost model read, records and report opened
     tasks       tunable layers grouped by signature (the records module's layers)
     search      per task: the default measured, the model-guided search over its space, the
                 best and its runners-up, the report line (and the heatmap of the costliest)
     plan check  the winners, the default and the runners-up profiled inside the plan
     finish      the records written (records module), the cost model saved, the summary */

typedef struct luthier__tuner {
    luthier_context *ctx;
    const luthier_graph *g;
    luthier_tune_desc d;
    luthier_tune_result res;
    luthier__fuse *f;
    luthier__task *tasks;
    int ntasks;
    int *node_task;            /* task of each node, -1 */
    luthier_node_config *tcfg; /* each task's winner (all zero: the default) */
    luthier__gbt *model;       /* desc.model_in */
    luthier__tune_data data;   /* everything measured, for the warm models */
    double t_start, heat_s;
    int progress, costliest;
    int lowered_only;          /* AUTO's pass of a lower precision: its layers of that precision only */
    uint64_t seed;
    FILE *rec, *rep;
    char fpr[640];
} luthier__tuner;

LUTHIER_PRIVATE luthier_status luthier__tune_open(luthier__tuner *T, const luthier_tune_desc *desc, const char *records_path) {
    luthier_context *ctx = T->ctx;
    luthier_tune_desc *dd = &T->d;
    if (desc) *dd = *desc;
    if (dd->budget_seconds < 0 || dd->budget_seconds != dd->budget_seconds || dd->max_measurements < 0)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: budget_seconds and max_measurements must be >= 0");
    if (!dd->budget_seconds) dd->budget_seconds = 120;
    if (!dd->ratio_step) dd->ratio_step = 10;
    if (dd->ratio_step < 1 || dd->ratio_step > 100 || 100 % dd->ratio_step)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: ratio_step %d must divide 100", dd->ratio_step);
    if ((unsigned)dd->precision >= (unsigned)LUTHIER_PRECISION_COUNT || dd->precision == LUTHIER_PRECISION_AUTO)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: unknown precision %d", (int)dd->precision);
    dd->precision = luthier__plan_precision(dd->precision, dd->int8);
    if (dd->precision == LUTHIER_PRECISION_INT8 && !dd->int8)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: precision int8 without a calibration (int8)");
    if (!dd->max_fraction) dd->max_fraction = 0.1;
    if (!(dd->max_fraction > 0 && dd->max_fraction <= 1))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: max_fraction %g must be in (0, 1]", dd->max_fraction);
    if (dd->exhaustive && dd->random_search)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: exhaustive and random_search exclude each other");
    if (dd->offline && (dd->exhaustive || dd->random_search))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: offline measures nothing: it excludes %s",
                             dd->exhaustive ? "exhaustive" : "random_search");
    if (dd->offline) {
        luthier_status s = luthier__tune_offline_check(ctx);
        if (s != LUTHIER_STATUS_OK) return s;
    }
    T->seed = dd->seed ? dd->seed : 1;
    T->progress = dd->progress > 0 || (dd->progress == 0 && luthier__isatty_stderr());
    if (dd->model_in) {
        char *text = NULL, err[400];
        size_t len = 0;
        luthier_status s = luthier__read_file(dd->model_in, &text, &len, err, sizeof err);
        if (s != LUTHIER_STATUS_OK) return luthier__fail(ctx, s, "tune: cost model: %s", err);
        s = luthier__gbt_load(text, len, &T->model, err, sizeof err);
        luthier__free(text);
        if (s != LUTHIER_STATUS_OK) return luthier__fail(ctx, s, "tune: cost model '%s': %s", dd->model_in, err);
        if (T->model->num_features != LUTHIER__TUNE_FEATURES)
            return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                                 "tune: cost model '%s' has %d features, this tuner's have %d (a model of another "
                                 "version: tune without it and save a new one)", dd->model_in, T->model->num_features,
                                 LUTHIER__TUNE_FEATURES);
    }
    if (records_path && !(T->rec = fopen(records_path, "w")))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: cannot write records '%s'", records_path);
    if (dd->report_path && !(T->rep = fopen(dd->report_path, "w")))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: cannot write the report '%s'", dd->report_path);
    return LUTHIER_STATUS_OK;
}

/* Tasks: the tunable layers of the graph grouped by signature. */
LUTHIER_PRIVATE luthier_status luthier__tune_tasks(luthier__tuner *T) {
    const luthier_graph *g = T->g;
    int i, j;
    if (!(T->f = luthier__fuse_only(g, T->d.int8)) ||
        !(T->tasks = (luthier__task *)luthier__alloc(sizeof *T->tasks * (size_t)(g->num_nodes + 1))) ||
        !(T->node_task = (int *)luthier__alloc(sizeof(int) * (size_t)(g->num_nodes + 1))) ||
        !(T->tcfg = (luthier_node_config *)luthier__alloc(sizeof *T->tcfg * (size_t)(g->num_nodes + 1))))
        return luthier__fail(T->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
    for (i = 0; i < g->num_nodes; i++) {
        luthier__task t;
        T->node_task[i] = -1;
        if (!luthier__task_of(T->ctx, g, T->f, i, T->d.int8, T->d.precision, &t) ||
            (T->lowered_only && luthier__precision_of_family(t.l.fam) != T->d.precision))
            continue;
        T->res.ops++;
        for (j = 0; j < T->ntasks; j++)
            if (strcmp(T->tasks[j].l.sig, t.l.sig) == 0) break;
        if (j == T->ntasks) T->tasks[T->ntasks++] = t;
        T->tasks[j].ops++;
        T->node_task[i] = j;
    }
    T->res.tasks = T->ntasks;
    if (T->d.offline) luthier__fingerprint_predicted(T->ctx, T->fpr, sizeof T->fpr);
    else luthier_tune_fingerprint(T->ctx, T->fpr, sizeof T->fpr);
    if (T->rec) luthier__records_write_header(T->rec, T->fpr);
    if (T->rec && T->d.offline)
        fprintf(T->rec, "# predicted by the analytical cost model, nothing measured: ms and default_ms are predictions\n");
    return LUTHIER_STATUS_OK;
}

/* The heatmap of the costliest fp32 task, drawn after the last task's search: when that is
   another task, its grid is measured now (m, cands, nc, feat are replaced by its own). */
LUTHIER_PRIVATE void luthier__tune_heatmap(luthier__tuner *T, const luthier__task *t, luthier__tmeas *m, luthier__cand **cands,
                                           size_t *nc, float **feat) {
    double heat_t0;
    luthier__task *ct = &T->tasks[T->costliest];
    if (ct != t) {
        luthier__tmeas_free(m);
        luthier__free(*feat);
        luthier__free(*cands);
        *cands = luthier__task_space(T->ctx, ct, T->d.ratio_step, 0, nc);
        *feat = NULL;
        if (!luthier__tmeas_open(m, T->ctx, T->g, T->f, ct, *cands, *nc) || !*cands) *nc = 0;
    }
    heat_t0 = luthier__seconds();
    if (*nc) {
        luthier__cand bc;
        memset(&bc, 0, sizeof bc);
        if (ct->best >= 0 && ct == t) bc = (*cands)[ct->best];
        else bc = (*cands)[0];
        if (bc.algo == LUTHIER_CONV_DEPTHWISE) bc = (*cands)[*nc - 1];
        luthier__write_heatmap(T->ctx, m, ct, &bc, T->d.heatmap_path);
    }
    T->heat_s = luthier__seconds() - heat_t0;
}

/* Search of task i: its space, the default, the model-guided search, the best and runners-up. */
/* The default configuration of task t measured (the baseline of its search and of the report);
   *kernel: the default's kernel (registry index, -1: none). */
LUTHIER_PRIVATE void luthier__tune_default(luthier__tuner *T, luthier__task *t, luthier__tmeas *mp, luthier__cand *dcp) {
    luthier__cand dc;
    memset(&dc, 0, sizeof dc);
    dc.shares[0] = -1;
    dc.kernel = -1;
    luthier__tkind_of(t)->default_cand(mp, &dc);
    t->default_ms = luthier__measure_cand(mp, &dc, NULL);
    T->res.measurements++;
    *dcp = dc;
}

/* The candidate of the space (cands, nc) that is the default configuration dc, so that the
   search does not measure it again; nc when there is none. On one cluster the default split
   is the whole machine (the share 100); on several it is the capacities', which the space's
   share steps need not hold, so none. */
LUTHIER_PRIVATE size_t luthier__tune_default_cand(const luthier_context *ctx, const luthier__cand *cands, size_t nc,
                                                  const luthier__cand *dc) {
    size_t c;
    if (ctx->pool->num_clusters != 1 || (dc->kernel < 0 && dc->algo != LUTHIER_CONV_DEPTHWISE)) return nc;
    for (c = 0; c < nc; c++)
        if (cands[c].algo == dc->algo && cands[c].kernel == dc->kernel && !cands[c].same && !cands[c].dynamic &&
            (cands[c].shares[0] == 100 || cands[c].shares[0] < 0))
            return c;
    return nc;
}

/* Balance: the search learns each (algorithm, kernel)'s cost per cluster from the pool's busy
   times and predicts its other shares (luthier_gbt.h). Sets sd's share fields when it can;
   *shares and *group: the arrays it allocated (to free after the search). */
LUTHIER_PRIVATE void luthier__tune_balance(luthier_context *ctx, const luthier_tune_desc *dd, const luthier__cand *cands, size_t nc,
                                           luthier__search_desc *sdp, float **sharesp, int **groupp) {
    float *shares = NULL;
    int *group = NULL, ngroups = 0, j;
    size_t c;
    luthier__search_desc sd = *sdp;
    const luthier_tune_desc d = *dd;
    if (!d.no_balance && ctx->pool->num_clusters >= 2 && ctx->pool->num_clusters <= LUTHIER__TUNE_MAX_SHARES &&
        (shares = (float *)luthier__alloc(sizeof(float) * nc * (size_t)ctx->pool->num_clusters)) != NULL &&
        (group = (int *)luthier__alloc(sizeof(int) * nc)) != NULL) {
        const int ncl = ctx->pool->num_clusters;
        for (c = 0; c < nc; c++) {
            const luthier__cand *x = &cands[c];
            group[c] = -1;
            for (j = 0; j < ncl; j++) shares[c * (size_t)ncl + (size_t)j] = 0;
            if (x->dynamic || x->shares[0] < 0) continue;
            /* the space lists the shares of one (algorithm, kernel) together */
            if (c == 0 || group[c - 1] < 0 || cands[c - 1].algo != x->algo || cands[c - 1].kernel != x->kernel ||
                cands[c - 1].same != x->same)
                ngroups++;
            group[c] = ngroups - 1;
            for (j = 0; j < ncl; j++) shares[c * (size_t)ncl + (size_t)j] = (float)(x->shares[j] / 100.0);
        }
        if (ngroups > 0) {
            sd.patience = 12; /* its rounds of 4: the same 48 measurements without a gain */
            sd.num_clusters = ncl;
            sd.num_groups = ngroups;
            sd.shares = shares;
            sd.group = group;
        }
    }
    *sdp = sd;
    *sharesp = shares;
    *groupp = group;
}

/* The report line (and the progress line) of task i, configured as cfg; nc: its candidates. */
LUTHIER_PRIVATE void luthier__report_task(const luthier__tuner *T, int i, const luthier_node_config *cfgp, size_t nc) {
    const luthier__task *t = &T->tasks[i];
    const luthier_node_config cfg = *cfgp;
    char ratios[96];
    luthier__ratios_str(&cfg, ratios, sizeof ratios);
    if (T->rep)
        fprintf(T->rep, "task %d/%d x%d  %s\n    chosen: %s %s %s %s  %.4f ms (%.1f GFLOP/s)  default %.4f ms  speedup %.2fx  measured %d of %zu\n",
                i + 1, T->ntasks, t->ops, t->l.sig,
                t->l.op != LUTHIER_OP_DENSE ? luthier_conv_algorithm_name(cfg.algorithm) : "gemm",
                cfg.kernel[0] ? luthier__kernel_short(cfg.kernel) : "(default)",
                cfg.schedule == LUTHIER_SCHEDULE_DYNAMIC ? "dynamic" : "ratio", ratios, t->best_ms,
                t->l.flops / (t->best_ms * 1e6), t->default_ms, t->default_ms / t->best_ms, t->measured, nc);
    if (T->rep && (t->model_rank > 0 || t->spearman == t->spearman))
        fprintf(T->rep, "    cost model: fastest measured is predicted #%d of %zu; Spearman %.3f over the measured\n", t->model_rank, nc,
                t->spearman);
    if (T->progress)
        fprintf(stderr, "tune: task %2d/%d  %-60.60s  %4d/%-5zu trials  best %8.3f ms %6.1f GFLOP/s  (default %.3f)  %6.1f s\n",
                i + 1, T->ntasks, t->l.sig, t->measured, nc, t->best_ms, t->l.flops / (t->best_ms * 1e6), t->default_ms,
                luthier__seconds() - T->t_start);
}

/* Task i decided (t->best: its candidate, -1: the default): its configuration, totals, report. */
LUTHIER_PRIVATE void luthier__tune_task_done(luthier__tuner *T, int i, const luthier__cand *cands, size_t nc) {
    const luthier__task *t = &T->tasks[i];
    luthier_node_config cfg;
    T->res.default_ms += t->default_ms * t->ops;
    T->res.tuned_ms += t->best_ms * t->ops;
    if (t->best >= 0) luthier__cand_config(T->ctx, t, &cands[t->best], &cfg);
    else memset(&cfg, 0, sizeof cfg);
    T->tcfg[i] = cfg;
    luthier__report_task(T, i, &cfg, nc);
}

/* Task i offline: the fastest predicted of its nc candidates (cands, freed here) that AUTO's
   model policy could pick, unless the default is predicted as fast; best_ms and default_ms are
   predictions (0: the model does not rate the task). */
LUTHIER_PRIVATE luthier_status luthier__tune_offline_task(luthier__tuner *T, int i, luthier__cand *cands, size_t nc) {
    luthier__task *t = &T->tasks[i];
    luthier__cm_machine mc;
    luthier__cand dc;
    float *prior = NULL;
    double *pred = luthier__tune_predict(T->ctx, t, cands, nc, &prior), best = 0;
    size_t c;
    t->best = -1;
    for (c = 0; pred && c < nc; c++) {
        const double err = t->l.op == LUTHIER_OP_CONV2D ? luthier__conv_algos[cands[c].algo].rel_error : 0.0;
        if (pred[c] > 0 && err <= LUTHIER_AUTO_MAX_ERROR && (best == 0 || pred[c] < best)) best = pred[c], t->best = (int)c;
    }
    luthier__free(pred);
    luthier__cm_machine_of(T->ctx, &mc);
    luthier__tune_default_guess(T->ctx, t, &dc);
    t->default_ms = 1e3 * luthier__cand_predict(&mc, t, &dc);
    t->best_ms = 1e3 * best;
    if (t->best < 0 || !(t->default_ms > 0) || t->default_ms <= t->best_ms) t->best = -1, t->best_ms = t->default_ms;
    luthier__tune_task_done(T, i, cands, nc);
    luthier__free(cands);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__tune_search_task(luthier__tuner *T, int i) {
    luthier_context *ctx = T->ctx;
    const luthier_tune_desc d = T->d;
    luthier__task *t = &T->tasks[i];
    int j;
    luthier__tmeas m;
    luthier__cand *cands;
    size_t nc = 0, c;
    float *feat = NULL, *shares = NULL, *prior = NULL;
    double *pred = NULL;
    int *group = NULL, default_kernel = -1;
    luthier__cand dc;
    luthier__search_desc sd;
    luthier__search_result sr;
    luthier__gbt *warm = NULL;
    double now = luthier__seconds(), share;
    if (!(cands = luthier__task_space(ctx, t, d.ratio_step, !d.no_dynamic, &nc)) || !nc) {
        luthier__free(cands);
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory (space of task %d)", i);
    }
    T->res.candidates += (int)nc;
    if (d.offline) return luthier__tune_offline_task(T, i, cands, nc);
    feat = (float *)luthier__alloc(sizeof(float) * nc * LUTHIER__TUNE_FEATURES);
    if (!luthier__tmeas_open(&m, ctx, T->g, T->f, t, cands, nc) || !feat) {
        luthier__free(feat);
        luthier__free(cands);
        luthier__tmeas_free(&m);
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory (task %d)", i);
    }
    m.max_measurements = d.max_measurements ? (d.max_measurements > T->res.measurements ? d.max_measurements - T->res.measurements : 0) : -1;
    /* the task's share of the remaining time, by FLOPs */
    {
        double rem_flops = 0, left = d.budget_seconds - (now - T->t_start);
        for (j = i; j < T->ntasks; j++) rem_flops += T->tasks[j].l.flops * T->tasks[j].ops;
        share = rem_flops > 0 ? left * (t->l.flops * t->ops) / rem_flops : left;
        if (share < 0.2 && left > 0.2) share = 0.2;
        m.deadline = d.exhaustive ? 0 : now + share;
    }
    pred = luthier__tune_predict(ctx, t, cands, nc, &prior);
    luthier__tune_features(ctx, t, cands, nc, d.no_prior ? NULL : pred, feat);
    luthier__tune_default(T, t, &m, &dc);
    default_kernel = dc.kernel;
    if ((c = luthier__tune_default_cand(ctx, cands, nc, &dc)) < nc && t->default_ms > 0) m.times[c] = t->default_ms;
    memset(&sd, 0, sizeof sd);
    sd.num_candidates = nc;
    sd.num_features = LUTHIER__TUNE_FEATURES;
    sd.features = feat;
    sd.measure = luthier__tune_measure;
    sd.user = &m;
    sd.warm = warm = luthier__tune_data_fit(&T->data, T->model, T->seed ^ (uint64_t)i);
    sd.prior = d.no_prior ? NULL : prior; /* orders the first batch when there is no warm model yet */
    sd.y_offset = t->default_ms > 0 ? log(t->default_ms * 1e-3) : 0.0;
    sd.patience = 6; /* 3 stopped 3-cluster searches up to 6 % short on the simulated machine */
    {
        /* the default configuration, measured above, counts against the task's cap */
        double cap = floor(d.max_fraction * (double)nc) - 1;
        sd.max_measurements = cap < 2 ? 2 : (int)cap;
    }
    sd.seed = T->seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    luthier__tune_balance(ctx, &d, cands, nc, &sd, &shares, &group);
    /* past the task's deadline every measurement fails: stop there */
    if (m.deadline > 0) sd.max_seconds = m.deadline - luthier__seconds() > 1e-3 ? m.deadline - luthier__seconds() : 1e-3;
    memset(&sr, 0, sizeof sr);
    if (d.exhaustive || nc <= 8) {
        for (c = 0; c < nc; c++) luthier__tune_measure(&m, c, NULL);
    } else if (d.random_search) {
        /* the baseline: as many measurements as the model-guided search may make, drawn at random */
        uint64_t st = sd.seed;
        size_t tries = 0;
        while (luthier__seconds() < m.deadline && tries < 4 * nc && m.measurements < sd.max_measurements &&
               (m.max_measurements < 0 || m.measurements < m.max_measurements)) {
            st += 0x9E3779B97F4A7C15ull;
            luthier__tune_measure(&m, (size_t)((st >> 11) % nc), NULL);
            tries++;
        }
    } else {
        /* the first batch measures every algorithm: the warm model learnt from other shapes,
           and the algorithm is the knob worth 2-3x (luthier__search_desc.stratum); without
           memory for the strata the search runs without them */
        int *strata = (int *)luthier__alloc(sizeof(int) * nc);
        if (strata) {
            for (c = 0; c < nc; c++) strata[c] = cands[c].algo;
            sd.stratum = strata;
        }
        (void)luthier__search(&sd, &sr, NULL); /* NOT_FOUND (nothing ran) keeps the default */
        luthier__free(strata);
    }
    luthier__gbt_free(warm);
    luthier__free(shares);
    luthier__free(group);
    /* what this task measured teaches the next ones */
    for (c = 0; c < nc && t->default_ms > 0; c++)
        if (m.times[c] > 0 && !luthier__tune_data_add(&T->data, feat + c * LUTHIER__TUNE_FEATURES, (float)log(m.times[c] / t->default_ms)))
            break;
    /* best measured */
    t->best = -1;
    t->best_ms = 1e30;
    for (c = 0; c < nc; c++) {
        if (m.times[c] > 0) t->measured++;
        if (m.times[c] > 0 && m.times[c] < t->best_ms) t->best_ms = m.times[c], t->best = (int)c;
    }
    T->res.measurements += m.measurements;
    luthier__tune_model_quality(t, pred, nc, m.times, t->best);
    luthier__free(pred);
    if (t->best < 0) { /* nothing ran (budget): keep the default */
        t->best_ms = t->default_ms;
    } else if (t->default_ms > 0 && t->default_ms < t->best_ms) {
        t->best = -1; /* the default was faster than anything measured */
        t->best_ms = t->default_ms;
    }
    /* runners-up for the in-plan runoff (luthier__task_runners) */
    if (t->best >= 0) T->res.measurements += luthier__task_runners(ctx, t, &m, nc, default_kernel, d.no_prior);
    else t->runners = 0;
    luthier__tune_task_done(T, i, cands, nc);
    /* (the heatmap is drawn for fp32 tasks) */
    if (!t->l.q && (T->costliest < 0 || t->best_ms * t->ops > T->tasks[T->costliest].best_ms * T->tasks[T->costliest].ops)) T->costliest = i;
    if (d.heatmap_path && i == T->ntasks - 1 && T->costliest >= 0) luthier__tune_heatmap(T, t, &m, &cands, &nc, &feat);
    luthier__tmeas_free(&m);
    luthier__free(feat);
    luthier__free(cands);
    return LUTHIER_STATUS_OK;
}

/* The winners where they run, against the default and the runners-up: each task takes the
   configuration whose steps are fastest in the plan; the default unless one beats it. */
LUTHIER_PRIVATE void luthier__tune_plan_check(luthier__tuner *T) {
    luthier_context *ctx = T->ctx;
    const luthier_graph *g = T->g;
    const luthier_tune_desc d = T->d;
    int i, j;
    for (i = 0, j = 0; i < T->ntasks; i++) j += T->tasks[i].best >= 0;
    if (!d.no_plan_check && j > 0) {
        const luthier_node_config *sets[LUTHIER__PLAN_SETS];
        luthier_node_config *rcfg = (luthier_node_config *)luthier__alloc(sizeof *rcfg * (size_t)(T->ntasks + 1) * LUTHIER__PLAN_RUNNERS);
        double *pms = (double *)luthier__alloc(sizeof(double) * (size_t)T->ntasks * LUTHIER__PLAN_SETS);
        char why[300] = "out of memory";
        int nsets = 2, wanted, k;
        /* set 2 + r: the r-th runner-up where there is one, else the winner */
        for (i = 0; i < T->ntasks; i++)
            if (T->tasks[i].runners > nsets - 2) nsets = 2 + T->tasks[i].runners;
        sets[0] = NULL;
        sets[1] = T->tcfg;
        for (k = 2; rcfg && k < nsets; k++) {
            luthier_node_config *set = rcfg + (size_t)(k - 2) * (size_t)T->ntasks;
            for (i = 0; i < T->ntasks; i++) set[i] = T->tasks[i].runners > k - 2 ? T->tasks[i].runner_cfg[k - 2] : T->tcfg[i];
            sets[k] = set;
        }
        wanted = nsets;
        if (!rcfg || !pms || !luthier__tune_plan_times(ctx, g, &d, T->tasks, T->ntasks, T->node_task, sets, &nsets, pms, why, sizeof why)) {
            if (T->rep) fprintf(T->rep, "\nin-plan check skipped (the winners are kept): %s\n", why);
            if (T->progress) fprintf(stderr, "tune: in-plan check skipped (the winners are kept): %s\n", why);
        } else {
            if (T->rep)
                fprintf(T->rep, "\nin-plan check (each task's steps summed, best of %d alternating runs; runners-up: the next "
                             "fastest (algorithm, kernel) pairs measured alone%s):\n",
                        LUTHIER__PLAN_CHECK_ROUNDS, nsets < wanted ? "; the plans of some runners-up could not be created (memory)" : "");
            for (i = 0; i < T->ntasks; i++) {
                luthier__task *t = &T->tasks[i];
                const double pd = pms[i], pt = pms[T->ntasks + i];
                double pbest = pt;
                int choice = -1, x; /* -1: the winner, else a runner-up */
                if (t->best < 0) continue;
                for (x = 0; x < t->runners && 2 + x < nsets; x++)
                    if (pms[(size_t)(2 + x) * (size_t)T->ntasks + (size_t)i] < pbest) pbest = pms[(size_t)(2 + x) * (size_t)T->ntasks + (size_t)i], choice = x;
                T->res.plan_default_ms += pd;
                T->res.plan_tuned_ms += pt;
                T->res.plan_chosen_ms += pbest < pd ? pbest : pd;
                if (T->rep) {
                    fprintf(T->rep, "task %d/%d x%d  default %.6f ms  tuned %.6f ms", i + 1, T->ntasks, t->ops, pd, pt);
                    for (x = 0; x < t->runners && 2 + x < nsets; x++)
                        fprintf(T->rep, "  runner-up %.6f ms (%s %s)", pms[(size_t)(2 + x) * (size_t)T->ntasks + (size_t)i],
                                t->l.op != LUTHIER_OP_DENSE ? luthier_conv_algorithm_name(t->runner_cfg[x].algorithm) : "gemm",
                                t->runner_cfg[x].kernel[0] ? luthier__kernel_short(t->runner_cfg[x].kernel) : "(default)");
                    if (pbest >= pd) fprintf(T->rep, "  reverted to the default\n");
                    else if (choice < 0) fprintf(T->rep, "  kept\n");
                    else fprintf(T->rep, "  took the runner-up #%d\n", choice + 1);
                }
                if (pbest >= pd) {
                    T->res.reverted++;
                    T->res.tuned_ms += (t->default_ms - t->best_ms) * t->ops;
                    t->best = -1;
                    t->best_ms = t->default_ms;
                    memset(&T->tcfg[i], 0, sizeof T->tcfg[i]);
                } else if (choice >= 0) {
                    T->res.runner_ups++;
                    T->res.tuned_ms += (t->runner_ms[choice] - t->best_ms) * t->ops;
                    t->best_ms = t->runner_ms[choice];
                    T->tcfg[i] = t->runner_cfg[choice];
                }
            }
            if (T->progress)
                fprintf(stderr, "tune: in-plan check: %d of %d tuned tasks kept (%d by a runner-up); their steps %.3f ms -> %.3f ms per run\n",
                        j - T->res.reverted, j, T->res.runner_ups, T->res.plan_default_ms, T->res.plan_chosen_ms);
        }
        luthier__free(rcfg);
        luthier__free(pms);
    }
}

/* Records (records module), the cost model of everything measured, the summary. */
LUTHIER_PRIVATE int luthier__dbl_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The result's medians over tasks of the model's Spearman correlation and winner's rank. */
LUTHIER_PRIVATE void luthier__tune_model_medians(luthier__tuner *T) {
    double *v = (double *)luthier__alloc(sizeof(double) * (size_t)(T->ntasks + 1));
    int i, n = 0, pass;
    T->res.model_spearman = NAN;
    T->res.model_rank = 0;
    for (pass = 0; v && pass < 2; pass++) {
        for (i = 0, n = 0; i < T->ntasks; i++) {
            const double x = pass ? (double)T->tasks[i].model_rank : T->tasks[i].spearman;
            if (pass ? x > 0 : x == x) v[n++] = x;
        }
        if (!n) continue;
        qsort(v, (size_t)n, sizeof *v, luthier__dbl_cmp);
        if (pass) T->res.model_rank = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        else T->res.model_spearman = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
    luthier__free(v);
}

LUTHIER_PRIVATE void luthier__tune_finish(luthier__tuner *T) {
    const luthier_tune_desc d = T->d;
    int i;
    for (i = 0; i < T->ntasks && T->rec; i++)
        if (!d.offline || T->tasks[i].best_ms > 0) /* offline: the tasks the model rates */
            luthier__record_write(T->rec, T->fpr, &T->tasks[i].l, &T->tcfg[i], T->tasks[i].best_ms, T->tasks[i].default_ms);
    if (d.model_out) { /* the model of everything measured (continuing model_in) */
        luthier__gbt *out = luthier__tune_data_fit(&T->data, T->model, T->seed);
        char *text = NULL;
        size_t len = 0;
        FILE *mf;
        if (out && luthier__gbt_save(out, &text, &len) == LUTHIER_STATUS_OK && (mf = fopen(d.model_out, "w"))) {
            fwrite(text, 1, len, mf);
            fclose(mf);
        }
        luthier__free(text);
        luthier__gbt_free(out);
    }
    luthier__tune_model_medians(T);
    T->res.seconds = luthier__seconds() - T->t_start - T->heat_s; /* the picture is not tuning */
    if (T->rep)
        fprintf(T->rep, "\n%d T->tasks, %d ops, %d measurements of %d candidates, %.1f s; sum over ops: default %.3f ms, tuned %.3f ms (%.2fx)\n",
                T->res.tasks, T->res.ops, T->res.measurements, T->res.candidates, T->res.seconds, T->res.default_ms, T->res.tuned_ms,
                T->res.tuned_ms > 0 ? T->res.default_ms / T->res.tuned_ms : 0.0);
}

/* One tuning run (a precision that is not AUTO) of g on ctx into T (zeroed, but for
   lowered_only); luthier__tuner_free releases it. */
LUTHIER_PRIVATE luthier_status luthier__tune_run(luthier__tuner *T, luthier_context *ctx, const luthier_graph *g,
                                                 const luthier_tune_desc *desc, const char *records_path) {
    luthier_status status;
    int i;
    T->ctx = ctx;
    T->g = g;
    T->t_start = luthier__seconds();
    T->costliest = -1;
    status = luthier__tune_open(T, desc, records_path);
    if (status == LUTHIER_STATUS_OK) status = luthier__tune_tasks(T);
    for (i = 0; status == LUTHIER_STATUS_OK && i < T->ntasks; i++) status = luthier__tune_search_task(T, i);
    if (status == LUTHIER_STATUS_OK) {
        if (!T->d.offline) luthier__tune_plan_check(T);
        luthier__tune_finish(T);
    }
    if (T->rec) fclose(T->rec);
    if (T->rep) fclose(T->rep);
    T->rec = T->rep = NULL;
    return status;
}

LUTHIER_PRIVATE void luthier__tuner_free(luthier__tuner *T) {
    luthier__free(T->f);
    luthier__free(T->tasks);
    luthier__free(T->node_task);
    luthier__free(T->tcfg);
    luthier__gbt_free(T->model);
    luthier__free(T->data.x);
    luthier__free(T->data.y);
    memset(T, 0, sizeof *T);
}

/* >>impl-tune-auto =============================================================================
   luthier_tune_desc.precision AUTO: one tuning pass per precision (fp32 for every layer, then
   each lower precision for the layers that have it), a precision per layer (per fp32 task: the
   unit the choice and the guard work on), then the accuracy guard (luthier_tune_desc). */

typedef struct luthier__guard {
    luthier_context *ctx;
    const luthier_graph *g;
    const luthier_calibration *cal;
    int nsets, nin, nout;
    const void **in;  /* nsets * nin */
    void **drawn;     /* the inputs drawn here (nsets * nin, NULL where given) */
    void **out;       /* nout */
    size_t *numel;    /* nout; 0 for outputs that are not fp32 */
    double *ref, *got;/* the fp32 plan's outputs and a plan's, every set's fp32 outputs in a row */
    size_t nref;
    double min_cos, max_abs;
} luthier__guard;

/* Runs the plan of configs (NULL: the fp32 plan's defaults) on every set into v; 0 = ok. */
LUTHIER_PRIVATE int luthier__guard_run(luthier__guard *G, const luthier_node_config *configs, double *v) {
    luthier_plan_desc pd;
    luthier_plan *plan = NULL;
    size_t at = 0, e;
    int s, o, ok = 1;
    luthier__tune_plan_desc(&pd, configs, configs ? G->g->num_nodes : 0, G->cal, LUTHIER_PRECISION_FP32);
    if (luthier_plan_create(G->ctx, G->g, &pd, &plan) != LUTHIER_STATUS_OK) return 0;
    for (s = 0; s < G->nsets && ok; s++) {
        ok = luthier_plan_run(G->ctx, plan, (const void *const *)(G->in + (size_t)s * (size_t)G->nin), G->out) == LUTHIER_STATUS_OK;
        for (o = 0; o < G->nout && ok; o++)
            for (e = 0; e < G->numel[o]; e++) v[at++] = ((const float *)G->out[o])[e];
    }
    luthier_plan_destroy(plan);
    return ok;
}

/* The cosine and largest difference of the plan of configs's outputs against the fp32 plan's;
   0 when the plan cannot run. */
LUTHIER_PRIVATE int luthier__guard_error(luthier__guard *G, const luthier_node_config *configs, double *cosine, double *max_abs) {
    double dot = 0, na = 0, nb = 0, m = 0;
    size_t e;
    if (!luthier__guard_run(G, configs, G->got)) return 0;
    for (e = 0; e < G->nref; e++) {
        const double a = G->ref[e], b = G->got[e], d = fabs(a - b);
        dot += a * b, na += a * a, nb += b * b;
        if (!(d <= m)) m = d; /* NaN wins */
    }
    *cosine = m == 0 ? 1.0 : dot / (sqrt(na) * sqrt(nb)); /* (equal outputs: 1 exactly, not its rounding) */
    *max_abs = m;
    return 1;
}

/* Whether the guard holds for these figures, and the share of its allowance they use. */
LUTHIER_PRIVATE int luthier__guard_holds(const luthier__guard *G, double cosine, double max_abs) {
    return cosine >= G->min_cos && max_abs <= G->max_abs;
}
LUTHIER_PRIVATE double luthier__guard_harm(const luthier__guard *G, double cosine, double max_abs) {
    const double c = (1.0 - cosine) / (1.0 - G->min_cos > 1e-300 ? 1.0 - G->min_cos : 1e-300);
    const double a = max_abs / (G->max_abs > 1e-300 ? G->max_abs : 1e-300);
    return c != c || a != a ? HUGE_VAL : c > a ? c : a;
}

LUTHIER_PRIVATE void luthier__guard_free(luthier__guard *G) {
    int k;
    for (k = 0; G->drawn && k < G->nsets * G->nin; k++) luthier__free(G->drawn[k]);
    for (k = 0; G->out && k < G->nout; k++) luthier__free(G->out[k]);
    luthier__free(G->drawn);
    luthier__free((void *)G->in);
    luthier__free(G->out);
    luthier__free(G->numel);
    luthier__free(G->ref);
    luthier__free(G->got);
}

/* The guard's inputs (desc's, else drawn), buffers and the outputs of the plan of ref (the
   fp32 choices) that the others are held against. */
LUTHIER_PRIVATE luthier_status luthier__guard_open(luthier__guard *G, const luthier_tune_desc *d, const luthier_node_config *ref) {
    luthier_context *ctx = G->ctx;
    const luthier_graph *g = G->g;
    double big = 0;
    size_t e;
    int k, f32 = 0;
    G->nin = luthier_graph_num_inputs(g);
    G->nout = luthier_graph_num_outputs(g);
    G->nsets = d->accuracy_inputs ? d->num_accuracy_sets : 4;
    G->min_cos = d->min_cosine ? d->min_cosine : 0.9999;
    G->in = (const void **)luthier__alloc(sizeof(void *) * (size_t)(G->nsets * G->nin + 1));
    G->drawn = (void **)luthier__zalloc(sizeof(void *) * (size_t)(G->nsets * G->nin + 1));
    G->out = (void **)luthier__zalloc(sizeof(void *) * (size_t)(G->nout + 1)); /* (luthier__guard_free reads them) */
    G->numel = (size_t *)luthier__alloc(sizeof(size_t) * (size_t)(G->nout + 1));
    if (!G->in || !G->drawn || !G->out || !G->numel) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
    for (k = 0; k < G->nsets * G->nin; k++) {
        if (d->accuracy_inputs) {
            G->in[k] = d->accuracy_inputs[k];
            continue;
        }
        if (!(G->drawn[k] = luthier__tune_buffer(g, luthier_graph_input_tensor(g, k % G->nin), 1, 0xacc0ull + (uint64_t)k)))
            return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
        G->in[k] = G->drawn[k];
    }
    for (k = 0; k < G->nout; k++) {
        size_t n = luthier__guard_numel(g, luthier_graph_output_tensor(g, k), &f32);
        if (!(G->out[k] = luthier__alloc(n * 8 + 8))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
        G->numel[k] = f32 ? n : 0;
        G->nref += G->numel[k] * (size_t)G->nsets;
    }
    G->ref = (double *)luthier__alloc(sizeof(double) * (G->nref + 1));
    G->got = (double *)luthier__alloc(sizeof(double) * (G->nref + 1));
    if (!G->ref || !G->got) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
    if (!luthier__guard_run(G, ref, G->ref))
        return luthier__fail_in(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: the accuracy guard's fp32 plan does not run");
    for (e = 0; e < G->nref; e++)
        if (fabs(G->ref[e]) > big) big = fabs(G->ref[e]);
    G->max_abs = d->max_abs_error ? d->max_abs_error : 0.01 * big;
    return LUTHIER_STATUS_OK;
}

/* The state of an AUTO run: pass k tuned precision prec[k] (pass 0: fp32, every layer); unit
   u (an fp32 task) runs in pass choice[u]'s precision. */
typedef struct luthier__auto {
    luthier__tuner T[LUTHIER_PRECISION_COUNT];
    luthier_precision prec[LUTHIER_PRECISION_COUNT];
    int npass;
    int *choice;
    double *harm;
    luthier_node_config *configs;
} luthier__auto;

/* configs for the units' choices (unit only >= 0: that unit's, the others fp32). */
LUTHIER_PRIVATE void luthier__auto_configs(luthier__auto *A, const luthier_graph *g, int only) {
    int i;
    memset(A->configs, 0, sizeof *A->configs * (size_t)g->num_nodes);
    for (i = 0; i < g->num_nodes; i++) {
        const int u = A->T[0].node_task[i];
        int k, j;
        if (u < 0) continue;
        k = only < 0 || only == u ? A->choice[u] : 0;
        j = A->T[k].node_task[i];
        A->configs[i] = A->T[k].tcfg[j];
        A->configs[i].precision = A->prec[k];
    }
}

/* The time of unit u in pass k: the sum of its nodes' tasks' (HUGE_VAL where a node has none). */
LUTHIER_PRIVATE double luthier__auto_unit_ms(const luthier__auto *A, const luthier_graph *g, int u, int k) {
    double ms = 0;
    int i;
    for (i = 0; i < g->num_nodes && ms < HUGE_VAL; i++)
        if (A->T[0].node_task[i] == u) {
            const int j = A->T[k].node_task[i];
            ms += j >= 0 && A->T[k].tasks[j].best_ms > 0 ? A->T[k].tasks[j].best_ms : HUGE_VAL;
        }
    return ms;
}

/* Each unit's fastest pass. */
LUTHIER_PRIVATE void luthier__auto_choose(luthier__auto *A, const luthier_graph *g) {
    int u, k;
    for (u = 0; u < A->T[0].ntasks; u++) {
        double best = 0;
        A->choice[u] = 0;
        for (k = 0; k < A->npass; k++) {
            const double ms = luthier__auto_unit_ms(A, g, u, k);
            if (k == 0 || ms < best) best = ms, A->choice[u] = k;
        }
    }
}

/* The unit of plan step st (-1: none, or a unit left in fp32). */
LUTHIER_PRIVATE int luthier__auto_step_unit(const luthier__auto *A, const luthier__pstep *st) {
    const int u = st->node >= 0 ? A->T[0].node_task[st->node] : -1;
    return u >= 0 && A->choice[u] ? u : -1;
}

/* cost[unit] (ms) of the datatype conversions in plan p, each step's st->seconds: a conversion
   (a step of no node, not a layout one) costs the lowered unit that reads its output, else
   the lowered unit that wrote its input. */
LUTHIER_PRIVATE void luthier__auto_conversion_costs(const luthier__auto *A, const luthier_plan *p, double *cost) {
    int k, q, a, b, u;
    for (u = 0; u < A->T[0].ntasks; u++) cost[u] = 0;
    for (k = 0; k < p->num_steps; k++) {
        const luthier__pstep *c = &p->steps[k];
        if (c->kind == LUTHIER__STEP_NODE || c->kind == LUTHIER__STEP_CONVERT || c->nin < 1 || c->nout < 1) continue;
        for (u = -1, q = 0; q < p->num_steps && u < 0; q++) /* a reader of its output */
            for (a = 0; a < p->steps[q].nin && u < 0; a++)
                if (p->steps[q].in[a] == c->out[0]) u = luthier__auto_step_unit(A, &p->steps[q]);
        for (q = 0; q < p->num_steps && u < 0; q++) /* else the writer of its input */
            for (b = 0; b < p->steps[q].nout && u < 0; b++)
                if (p->steps[q].out[b] == c->in[0]) u = luthier__auto_step_unit(A, &p->steps[q]);
        if (u >= 0) cost[u] += c->seconds * 1e3;
    }
}

/* Takes back to fp32 the lowered units whose conversions cost more than they save; 1 when one
   went back. */
LUTHIER_PRIVATE int luthier__auto_drop_costly(luthier__auto *A, const luthier_graph *g, const double *cost, luthier_tune_result *res) {
    int u, dropped = 0;
    for (u = 0; u < A->T[0].ntasks; u++) {
        if (!A->choice[u] || cost[u] <= luthier__auto_unit_ms(A, g, u, 0) - luthier__auto_unit_ms(A, g, u, A->choice[u])) continue;
        A->choice[u] = 0;
        res->conversions_dropped += A->T[0].tasks[u].ops;
        dropped = 1;
    }
    return dropped;
}

/* The conversions where precisions meet, timed in the plan of the choices (the least of 3
   profiled runs per step, on the guard's first input set): units that do not pay for theirs go
   back to fp32, and the plan is timed again, until every lowered unit pays (4 rounds at most). */
LUTHIER_PRIVATE luthier_status luthier__auto_conversions(luthier__auto *A, luthier__guard *G, luthier_tune_result *res) {
    const luthier_graph *g = G->g;
    double *cost = (double *)luthier__alloc(sizeof(double) * (size_t)(A->T[0].ntasks + 1)), *best = NULL;
    luthier_status s = cost ? LUTHIER_STATUS_OK : luthier__fail(G->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
    int round, r, k;
    for (round = 0; round < 4 && s == LUTHIER_STATUS_OK; round++) {
        luthier_plan_desc pd;
        luthier_plan *plan = NULL;
        luthier__auto_configs(A, g, -1);
        luthier__tune_plan_desc(&pd, A->configs, g->num_nodes, G->cal, LUTHIER_PRECISION_FP32);
        if (luthier_plan_create(G->ctx, g, &pd, &plan) != LUTHIER_STATUS_OK || luthier_plan_set_profiling(plan, 1) != LUTHIER_STATUS_OK ||
            !(best = (double *)luthier__alloc(sizeof(double) * (size_t)(plan->num_steps + 1)))) {
            luthier_plan_destroy(plan);
            break; /* (the guard reports a plan that cannot be made) */
        }
        for (r = 0; r < 3; r++) {
            if (luthier_plan_run(G->ctx, plan, (const void *const *)G->in, G->out) != LUTHIER_STATUS_OK) break;
            for (k = 0; k < plan->num_steps; k++)
                if (!r || plan->steps[k].seconds < best[k]) best[k] = plan->steps[k].seconds;
        }
        for (k = 0; r == 3 && k < plan->num_steps; k++) plan->steps[k].seconds = best[k];
        if (r == 3) luthier__auto_conversion_costs(A, plan, cost);
        luthier_plan_destroy(plan);
        luthier__free(best);
        best = NULL;
        if (r < 3 || !luthier__auto_drop_costly(A, g, cost, res)) break;
    }
    G->ctx->error[0] = 0;
    luthier__free(cost);
    return s;
}

/* The guard: the harm of each lowered unit alone, then units back to fp32, most harmful first,
   until the whole plan holds. */
LUTHIER_PRIVATE luthier_status luthier__auto_guard(luthier__auto *A, luthier__guard *G, luthier_tune_result *res) {
    const luthier_graph *g = G->g;
    const int nu = A->T[0].ntasks;
    double c, m;
    int u;
    for (u = 0; u < nu; u++) {
        A->harm[u] = 0;
        if (!A->choice[u]) continue;
        luthier__auto_configs(A, g, u);
        A->harm[u] = luthier__guard_error(G, A->configs, &c, &m) ? luthier__guard_harm(G, c, m) : HUGE_VAL;
    }
    for (;;) {
        int worst = -1;
        luthier__auto_configs(A, g, -1);
        if (!luthier__guard_error(G, A->configs, &c, &m)) c = -1, m = HUGE_VAL;
        res->guard_cosine = c, res->guard_max_abs = m;
        if (luthier__guard_holds(G, c, m)) return LUTHIER_STATUS_OK;
        for (u = 0; u < nu; u++)
            if (A->choice[u] && (worst < 0 || A->harm[u] > A->harm[worst])) worst = u;
        if (worst < 0) return LUTHIER_STATUS_OK; /* every unit fp32: the reference itself */
        A->choice[worst] = 0;
        res->guard_dropped += A->T[0].tasks[worst].ops;
    }
}

/* The records of the choices: per unit, its pass's tasks for the unit's nodes (once each). */
LUTHIER_PRIVATE luthier_status luthier__auto_records(luthier__auto *A, const luthier_graph *g, const char *path, luthier_tune_result *res) {
    FILE *fh = path ? fopen(path, "w") : NULL;
    int k, i, j;
    if (path && !fh) return luthier__fail(A->T[0].ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: cannot write records '%s'", path);
    if (fh) luthier__records_write_header(fh, A->T[0].fpr);
    res->tuned_ms = 0;
    for (k = 0; k < A->npass; k++) {
        luthier__tuner *T = &A->T[k];
        for (j = 0; j < T->ntasks; j++) {
            int uses = 0;
            for (i = 0; i < g->num_nodes; i++)
                if (T->node_task[i] == j && A->T[0].node_task[i] >= 0 && A->choice[A->T[0].node_task[i]] == k) uses++;
            if (!uses) continue;
            if (A->prec[k] == LUTHIER_PRECISION_FP16) res->nodes_fp16 += uses;
            if (A->prec[k] == LUTHIER_PRECISION_INT8) res->nodes_int8 += uses;
            res->tuned_ms += T->tasks[j].best_ms * uses;
            if (fh) luthier__record_write(fh, T->fpr, &T->tasks[j].l, &T->tcfg[j], T->tasks[j].best_ms, T->tasks[j].default_ms);
        }
    }
    if (fh && fclose(fh) != 0) return luthier__fail(A->T[0].ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: cannot write records '%s'", path);
    return LUTHIER_STATUS_OK;
}

/* The passes: fp32, then each lower precision the run allows, each on its part of the budget. */
LUTHIER_PRIVATE luthier_status luthier__auto_passes(luthier__auto *A, luthier_context *ctx, const luthier_graph *g,
                                                    const luthier_tune_desc *desc) {
    luthier_status s = LUTHIER_STATUS_OK;
    int k;
    A->prec[A->npass++] = LUTHIER_PRECISION_FP32;
    A->prec[A->npass++] = LUTHIER_PRECISION_FP16;
    if (desc->int8) A->prec[A->npass++] = LUTHIER_PRECISION_INT8;
    for (k = 0; k < A->npass && s == LUTHIER_STATUS_OK; k++) {
        luthier_tune_desc d = *desc;
        d.precision = A->prec[k];
        d.budget_seconds = (desc->budget_seconds ? desc->budget_seconds : 120) / A->npass;
        if (desc->max_measurements) d.max_measurements = desc->max_measurements / A->npass > 0 ? desc->max_measurements / A->npass : 1;
        if (k) d.report_path = d.heatmap_path = d.model_out = NULL;
        A->T[k].lowered_only = k > 0;
        s = luthier__tune_run(&A->T[k], ctx, g, &d, NULL);
    }
    return s;
}

/* The checks of AUTO's own fields. */
LUTHIER_PRIVATE luthier_status luthier__auto_check(luthier_context *ctx, const luthier_graph *g, const luthier_tune_desc *d) {
    if (d->offline) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: precision auto measures: it excludes offline");
    if (!(d->min_cosine >= 0 && d->min_cosine <= 1) || !(d->max_abs_error >= 0 && d->max_abs_error < HUGE_VAL))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: min_cosine must be in [0, 1] and max_abs_error finite, >= 0");
    if (d->accuracy_inputs && (d->num_accuracy_sets < 1 || d->num_accuracy_sets > 4096))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: %d accuracy sets (1 to 4096 with accuracy_inputs)",
                             d->num_accuracy_sets);
    if (luthier_graph_num_inputs(g) < 1)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: precision auto needs a graph with inputs");
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__tune_auto(luthier_context *ctx, const luthier_graph *g, const luthier_tune_desc *desc,
                                                  const char *records_path, luthier_tune_result *result) {
    luthier__auto A;
    luthier__guard G;
    luthier_tune_result res;
    luthier_status s;
    const double t0 = luthier__seconds();
    int k;
    memset(&A, 0, sizeof A);
    memset(&G, 0, sizeof G);
    memset(&res, 0, sizeof res);
    G.ctx = ctx, G.g = g, G.cal = desc->int8;
    if ((s = luthier__auto_check(ctx, g, desc)) == LUTHIER_STATUS_OK) s = luthier__auto_passes(&A, ctx, g, desc);
    if (s == LUTHIER_STATUS_OK) {
        const size_t nu = (size_t)A.T[0].ntasks + 1;
        A.choice = (int *)luthier__zalloc(sizeof(int) * nu);
        A.harm = (double *)luthier__alloc(sizeof(double) * nu);
        A.configs = (luthier_node_config *)luthier__alloc(sizeof *A.configs * (size_t)(g->num_nodes + 1));
        if (!A.choice || !A.harm || !A.configs) s = luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "tune: out of memory");
    }
    if (s == LUTHIER_STATUS_OK) {
        luthier__auto_configs(&A, g, -1);
        s = luthier__guard_open(&G, desc, A.configs);
    }
    if (s == LUTHIER_STATUS_OK) {
        res = A.T[0].res;
        for (k = 1; k < A.npass; k++) {
            res.tasks += A.T[k].res.tasks;
            res.measurements += A.T[k].res.measurements;
            res.candidates += A.T[k].res.candidates;
        }
        res.guard_dropped = 0;
        luthier__auto_choose(&A, g);
        s = luthier__auto_conversions(&A, &G, &res);
    }
    if (s == LUTHIER_STATUS_OK) {
        s = luthier__auto_guard(&A, &G, &res);
    }
    if (s == LUTHIER_STATUS_OK) s = luthier__auto_records(&A, g, records_path, &res);
    res.seconds = luthier__seconds() - t0;
    if (s == LUTHIER_STATUS_OK && (desc->progress > 0 || (desc->progress == 0 && luthier__isatty_stderr())))
        fprintf(stderr, "tune: auto precision: %d nodes fp16, %d int8; back to fp32: %d for their conversions' cost, %d by the guard "
                "(cosine %.6f, max |diff| %g)\n", res.nodes_fp16, res.nodes_int8, res.conversions_dropped, res.guard_dropped,
                res.guard_cosine, res.guard_max_abs);
    for (k = 0; k < A.npass; k++) luthier__tuner_free(&A.T[k]);
    luthier__free(A.choice);
    luthier__free(A.harm);
    luthier__free(A.configs);
    luthier__guard_free(&G);
    if (result) *result = res;
    return s;
}

LUTHIER_API luthier_status luthier_tune(luthier_context *ctx, const luthier_graph *g, const luthier_tune_desc *desc,
                                        const char *records_path, luthier_tune_result *result) {
    luthier__tuner T;
    luthier_status status;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!g) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "tune: graph is NULL");
    if (desc && desc->precision == LUTHIER_PRECISION_AUTO) return luthier__tune_auto(ctx, g, desc, records_path, result);
    memset(&T, 0, sizeof T);
    status = luthier__tune_run(&T, ctx, g, desc, records_path);
    if (result) *result = T.res;
    luthier__tuner_free(&T);
    return status;
}
#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_TUNE_IMPLEMENTATION */
