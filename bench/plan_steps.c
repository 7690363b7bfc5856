/* plan_steps - a zoo network's plan, one tab-separated line per step: the per-layer work that
   bench/rk3399_estimate.py turns into an RK3399 estimate.

     plan_steps NAME...     (built for AArch64 and run under qemu: the plan an ARM board makes)

   Columns: step, op, fused, algorithm (conv2d), kernel, isa, flops, bytes, then for a node's
   first input, second input (weights of a conv) and first output: dims joined by 'x' ("-" when
   none). The plan is made on a 1-thread context with the default configurations (no records).
   Build: aarch64-linux-gnu-gcc -std=c99 -O2 -I. bench/plan_steps.c -o build/arm64/plan_steps
   -static -lpthread -lm (make build/arm64/plan_steps). */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include "luthier_zoo.h"
#include <stdio.h>
#include <string.h>

static void print_dims(const luthier_graph *g, const int *ts, int n, int i) {
    luthier_tensor_info ti;
    int d;
    if (i >= n || luthier_graph_tensor_info(g, ts[i], &ti) != LUTHIER_STATUS_OK || ti.rank < 1) {
        printf("\t-");
        return;
    }
    printf("\t");
    for (d = 0; d < ti.rank; d++) printf(d ? "x%lld" : "%lld", (long long)ti.shape[d]);
}

static int dump(const char *name) {
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    luthier_zoo_options zo;
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_plan_info pi;
    char err[256];
    int s;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    memset(&zo, 0, sizeof zo);
    memset(&pd, 0, sizeof pd);
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
    if (luthier_zoo_build(name, &zo, &g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "plan_steps: %s: %s\n", name, err);
        luthier_context_destroy(ctx);
        return 1;
    }
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "plan_steps: %s: plan: %s\n", name, luthier_context_error(ctx));
        luthier_graph_destroy(g);
        luthier_context_destroy(ctx);
        return 1;
    }
    memset(&pi, 0, sizeof pi);
    luthier_plan_get_info(p, &pi);
    printf("# model %s steps %d flops %.0f\n", name, pi.num_steps, pi.flops);
    for (s = 0; s < pi.num_steps; s++) {
        luthier_step_info si;
        const int *ins = NULL, *outs = NULL;
        int nin = 0, nout = 0;
        luthier_plan_step_info(p, s, &si);
        if (si.node >= 0) luthier_graph_node(g, si.node, NULL, NULL, &ins, &nin, &outs, &nout, NULL);
        printf("%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f", si.name, si.node < 0 ? "convert" : luthier_op_name(si.op),
               si.fused[0] ? si.fused : "-", si.op == LUTHIER_OP_CONV2D ? luthier_conv_algorithm_name(si.algorithm) : "-",
               si.kernel[0] ? si.kernel : "-", si.isa, si.flops, si.bytes);
        print_dims(g, ins, nin, 0);
        print_dims(g, ins, nin, 1);
        print_dims(g, outs, nout, 0);
        printf("\n");
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
    return 0;
}

int main(int argc, char **argv) {
    int i, rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: plan_steps NAME...\n");
        return 2;
    }
    for (i = 1; i < argc; i++) rc |= dump(argv[i]);
    return rc;
}
