/* make demo: tune and run ResNet-18 on this machine.

   1. detects and prints the CPU clusters,
   2. builds ResNet-18 (torchvision architecture, deterministic weights from luthier_zoo.h),
   3. runs it with the default configuration of every layer,
   4. tunes every convolution / dense task (algorithm x kernel x cluster shares) with the
      cost-model-guided search, within a budget (default 60 s; argument 1 overrides),
   5. runs it again with the tuned records and prints per-layer choices, tuned vs default
      latency, memory, and where the records, the report and the SVG heatmap were written.

   Build alone: cc -O2 -I. examples/resnet18_demo.c -o demo -lpthread -lm
   Usage: demo [budget_seconds] [output_dir] */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_zoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Minimum latency over runs of about `seconds` in total (at least 5 runs). */
static double time_plan(luthier_context *ctx, luthier_plan *p, const void *const *in, void *const *out, double seconds) {
    double best = 1e30, start = now_s();
    int runs = 0;
    while (runs < 5 || now_s() - start < seconds) {
        double t0 = now_s();
        if (luthier_plan_run(ctx, p, in, out) != LUTHIER_STATUS_OK) return -1;
        t0 = now_s() - t0;
        if (t0 < best) best = t0;
        runs++;
    }
    return best * 1e3;
}

static void top5(const float *logits, int n, int *idx) {
    int i, k;
    for (k = 0; k < 5; k++) {
        idx[k] = -1;
        for (i = 0; i < n; i++) {
            int taken = 0, j;
            for (j = 0; j < k; j++) taken |= idx[j] == i;
            if (!taken && (idx[k] < 0 || logits[i] > logits[idx[k]])) idx[k] = i;
        }
    }
}

/* max |a[i] - b[i]| over n values. */
static double max_abs_diff(const float *a, const float *b, int n) {
    double maxdiff = 0;
    int i;
    for (i = 0; i < n; i++) {
        double d = a[i] - b[i];
        if (d < 0) d = -d;
        if (d > maxdiff) maxdiff = d;
    }
    return maxdiff;
}

/* max |a[i]| over n values. */
static double max_abs(const float *a, int n) {
    double mx = 0;
    int i;
    for (i = 0; i < n; i++) mx = a[i] > mx ? a[i] : -a[i] > mx ? -a[i] : mx;
    return mx;
}

/* 1. The clusters the context runs on (detected, or $LUTHIER_CLUSTERS), its threads and its
   default microkernel. */
static void print_clusters(const luthier_context *ctx) {
    luthier_topology topo;
    char topo_s[512];
    luthier_context_topology(ctx, &topo);
    luthier_topology_format(&topo, topo_s, sizeof topo_s);
    printf("luthier %d.%d.%d - ResNet-18, batch 1, 224x224\n\nCPU clusters (%s):\n%s\n", LUTHIER_VERSION_MAJOR,
           LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH, topo.source, topo_s);
    printf("threads: %d, default microkernel: %s\n\n", luthier_context_num_threads(ctx), luthier_context_kernel(ctx));
}

/* 2. ResNet-18 (torchvision architecture, deterministic weights) and an input image (3x224x224,
   allocated into *image). Returns 0, or 1 (said on stderr). */
static int build_resnet18(luthier_graph **g, float **image) {
    luthier_zoo_options zo;
    char err[256];
    memset(&zo, 0, sizeof zo);
    if (luthier_zoo_build("resnet18", &zo, g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "resnet18: %s\n", err);
        return 1;
    }
    *image = (float *)malloc(sizeof(float) * 3 * 224 * 224);
    if (!*image || luthier_zoo_input("resnet18", &zo, 0, *image, sizeof(float) * 3 * 224 * 224) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "cannot make the input\n");
        return 1;
    }
    return 0;
}

/* 3. The default plan: steps, work, latency and memory. */
static void print_plan_info(const luthier_plan_info *info, double ms) {
    printf("default plan: %d steps, %.2f GFLOP, %.2f ms (%.1f GFLOP/s)\n", info->num_steps, info->flops * 1e-9, ms,
           info->flops * 1e-9 / (ms * 1e-3));
    printf("memory: weights %.1f MB, activation arena %.2f MB (all activations: %.2f MB), workspace %.2f MB\n\n",
           info->weights_bytes / 1e6, info->arena_bytes / 1e6, info->sum_activation_bytes / 1e6,
           info->workspace_bytes / 1e6);
}

/* 4. Tunes every convolution / dense task of g within `budget` seconds (progress on stderr)
   and writes the records, the report and the heatmap. Returns 0, or 1 (said on stderr). */
static int tune_network(luthier_context *ctx, const luthier_graph *g, double budget, const char *records,
                        const char *report, const char *heatmap) {
    luthier_tune_desc td;
    luthier_tune_result tr;
    printf("tuning (budget %.0f s): per task, trials measured / candidates, best time, default time\n", budget);
    fflush(stdout);
    memset(&td, 0, sizeof td);
    td.budget_seconds = budget;
    td.progress = 1;
    td.report_path = report;
    td.heatmap_path = heatmap;
    if (luthier_tune(ctx, g, &td, records, &tr) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "tune: %s\n", luthier_context_error(ctx));
        return 1;
    }
    printf("%d convolution/dense ops in %d tasks: %d measurements of a %d-candidate space in %.1f s\n\n", tr.ops,
           tr.tasks, tr.measurements, tr.candidates, tr.seconds);
    return 0;
}

/* 5. Per convolution / dense layer of the plan, as its last (profiled) run found it: the ops
   fused into it, algorithm, kernel, split between the clusters, time. */
static void print_layers(const luthier_plan *p) {
    luthier_plan_info info;
    int i, k;
    luthier_plan_get_info(p, &info);
    printf("%-22s %-20s %-14s %-28s %-10s %8s\n", "layer", "fused", "algorithm", "kernel", "split", "ms");
    for (i = 0; i < info.num_steps; i++) {
        luthier_step_info si;
        char split[64] = "default";
        const char *kn;
        luthier_plan_step_info(p, i, &si);
        if (si.op != LUTHIER_OP_CONV2D && si.op != LUTHIER_OP_DENSE) continue;
        if (si.schedule == LUTHIER_SCHEDULE_DYNAMIC) snprintf(split, sizeof split, "dynamic");
        else if (si.num_ratios) {
            size_t used = 0;
            for (k = 0; k < si.num_ratios; k++)
                used += (size_t)snprintf(split + used, sizeof split - used, "%s%.0f", k ? "/" : "",
                                         (double)si.ratios[k]);
        }
        kn = si.kernel && strncmp(si.kernel, "luthier_sgemm_ukernel_", 22) == 0 ? si.kernel + 22 : si.kernel;
        printf("%-22.22s %-20.20s %-14s %-28.28s %-10s %8.3f\n", si.name, si.fused,
               si.op == LUTHIER_OP_CONV2D ? luthier_conv_algorithm_name(si.algorithm) : "gemm", kn && *kn ? kn : "-",
               split, si.last_seconds * 1e3);
    }
}

int main(int argc, char **argv) {
    double budget = argc > 1 ? atof(argv[1]) : 60.0;
    const char *dir = argc > 2 ? argv[2] : "build";
    char records[512], report[512], heatmap[512];
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_graph *g = NULL;
    luthier_plan *def = NULL, *tuned = NULL;
    luthier_plan_desc pd;
    luthier_plan_info info;
    float *image = NULL, logits_def[1000], logits_tuned[1000];
    const void *in[1];
    void *out[1];
    double ms_def, ms_tuned;
    int t5[5], rc = 1;

    if (!(budget > 0)) {
        fprintf(stderr, "usage: %s [budget_seconds > 0] [output_dir]\n", argv[0]);
        return 2;
    }
    snprintf(records, sizeof records, "%s/resnet18.records", dir);
    snprintf(report, sizeof report, "%s/resnet18.tune.txt", dir);
    snprintf(heatmap, sizeof heatmap, "%s/resnet18.heatmap.svg", dir);

    /* 1. clusters */
    memset(&cd, 0, sizeof cd);
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "cannot create a context (check $LUTHIER_CLUSTERS)\n");
        return 1;
    }
    print_clusters(ctx);

    /* 2. the network */
    if (build_resnet18(&g, &image) != 0) goto done;
    in[0] = image;

    /* 3. default configurations */
    memset(&pd, 0, sizeof pd);
    if (luthier_plan_create(ctx, g, &pd, &def) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "plan: %s\n", luthier_context_error(ctx));
        goto done;
    }
    luthier_plan_get_info(def, &info);
    out[0] = logits_def;
    ms_def = time_plan(ctx, def, in, out, 1.0);
    print_plan_info(&info, ms_def);

    /* 4. tune */
    if (tune_network(ctx, g, budget, records, report, heatmap) != 0) goto done;

    /* 5. the tuned plan */
    pd.records = records;
    if (luthier_plan_create(ctx, g, &pd, &tuned) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "tuned plan: %s\n", luthier_context_error(ctx));
        goto done;
    }
    out[0] = logits_tuned;
    ms_tuned = time_plan(ctx, tuned, in, out, 1.0);
    out[0] = logits_def;
    ms_def = time_plan(ctx, def, in, out, 1.0); /* again, right after the tuned one */
    luthier_plan_set_profiling(tuned, 1);
    out[0] = logits_tuned;
    luthier_plan_run(ctx, tuned, in, out);
    print_layers(tuned);
    top5(logits_tuned, 1000, t5);
    printf("\ntop-5 classes: %d %d %d %d %d (tuned vs default logits: max difference %.2g of max |logit| %.3g)\n",
           t5[0], t5[1], t5[2], t5[3], t5[4], max_abs_diff(logits_def, logits_tuned, 1000), max_abs(logits_def, 1000));
    printf("latency: default %.2f ms, tuned %.2f ms: %.2fx\n", ms_def, ms_tuned, ms_def / ms_tuned);
    printf("written: %s (records: plans read them through luthier_plan_desc.records)\n         %s (per-task report)\n"
           "         %s (time of the costliest layer by kernel x cluster share, or x algorithm on one cluster)\n",
           records, report, heatmap);
    rc = 0;
done:
    luthier_plan_destroy(def);
    luthier_plan_destroy(tuned);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    free(image);
    return rc;
}
