/* luthier test suite: one translation unit with the implementation, so that the tests can call
   the microkernels and the driver directly.
   Usage: test_luthier [--quick] [--small-models] [--seed N] [--filter SUBSTRING]
   The last line reads "N passed, N failed"; the exit status is nonzero when a case failed. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* what luthier.h would define: it must come before any system header */
#endif
#include <stdlib.h>
/* Every allocation of the library is counted (the engine promises none inside luthier_plan_run). */
static size_t test_luthier_allocs;
static void *test_luthier_malloc(size_t bytes) {
    __atomic_fetch_add(&test_luthier_allocs, 1, __ATOMIC_RELAXED); /* contexts may be created on several threads */
    return malloc(bytes);
}
#define LUTHIER_MALLOC(bytes) test_luthier_malloc(bytes)
#define LUTHIER_FREE(ptr) free(ptr)
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"

#include "harness.h"
#include "test_api.c"
#include "test_kernels.c"
#include "test_gemm.c"
#include "test_topology.c"
#include "test_threads.c"
#include "test_conv.c"
#include "test_depthwise.c"
#include "test_ops.c"
#include "test_graph.c"
#include "test_models.c"
#include "test_gbt.c"
#include "test_tune.c"
#include "test_costmodel.c"
#include "test_onnx.c"
#include "test_index.c"
#include "test_lengths.c"
#include "test_int8.c"
#include "test_qconv.c"
#include "test_qops.c"
#include "test_qplan.c"
#include "test_sharing.c"
#include "test_isa.c"
#include "test_fp16.c"
#include "test_fp16_elt.c"
#include "test_wino16.c"
#include "test_fuse.c"
#include "test_precision.c"

int main(int argc, char **argv) {
    int i;
    T.seed = 0x5eed1u;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) T.quick = 1;
        else if (strcmp(argv[i], "--small-models") == 0) T.small_models = 1;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) T.seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) T.filter = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--small-models] [--seed N] [--filter SUBSTRING]\n", argv[0]);
            return 2;
        }
    }
    test_rng_state = T.seed;
    printf("luthier %d.%d.%d tests, seed %#llx%s, default kernel %s\n", LUTHIER_VERSION_MAJOR,
           LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH, (unsigned long long)T.seed,
           T.quick ? " (quick)" : "", luthier__ukernels[luthier__select_default_kernel(luthier_cpu_features())].name);

    RUN(test_status_strings);
    RUN(test_context_create);
    RUN(test_kernel_queries);
    RUN(test_sgemm_bad_arguments);
    RUN(test_env_kernel);
    RUN(test_registry);
    RUN(test_registry_families);
    RUN(test_ukernels_all_edges);
    RUN(test_ukernels_little_cluster);
    RUN(test_ukernels_hybrid_row_ends);
    RUN(test_gemm_degenerate);
    RUN(test_gemm_random_shapes);
    RUN(test_gemm_small_blocks);
    RUN(test_gemm_packed_reuse);
    RUN(test_gemm_dispatch_levels);
    RUN(test_gemm_dnn_shapes);
    RUN(test_gemm_kernel_for_n);
    RUN(test_gemm_prefetch_schedule);
    RUN(test_topology_boards);
    RUN(test_topology_env_syntax);
    RUN(test_topology_env_errors);
    RUN(test_topology_env_override);
    RUN(test_topology_malformed);
    RUN(test_topology_many_kinds);
    RUN(test_threads_ratio_partition);
    RUN(test_threads_cluster_busy);
    RUN(test_threads_bad_ratios);
    RUN(test_threads_many_regions);
    RUN(test_threads_gemm_equal);
    RUN(test_threads_gemm_split);
    RUN(test_threads_gemm_grouped);
    RUN(test_threads_conv_grouped);
    RUN(test_threads_pinning);
    RUN(test_threads_gemm_bad_ratios);
    RUN(test_conv_bad_arguments);
    RUN(test_conv_auto_choice);
    RUN(test_conv_nan_inf);
    RUN(test_conv_algorithm_table);
    RUN(test_conv_im2col);
    RUN(test_conv_1x1);
    RUN(test_conv_implicit_gemm);
    RUN(test_conv_indirection);
    RUN(test_conv_first_block);
    RUN(test_conv_depthwise);
    RUN(test_conv_depthwise_3x3);
    RUN(test_conv_depthwise_families);
    RUN(test_conv_depthwise_rows);
    RUN(test_conv_depthwise_nan);
    RUN(test_conv_depthwise_pick);
    RUN(test_conv_layout_transpose);
    RUN(test_conv_winograd_refusals);
    RUN(test_conv_winograd_2x3);
    RUN(test_conv_winograd_4x3);
    RUN(test_conv_winograd_6x3);
    RUN(test_conv_resnet18);
    RUN(test_conv_cluster_kernels);
    run_ops_tests();
    run_graph_tests();
    run_sharing_tests();
    run_model_tests();
    run_gbt_tests();
    run_tune_tests();
    run_costmodel_tests();
    run_onnx_tests();
    run_index_tests();
    run_lengths_tests();
    run_int8_tests();
    run_qconv_tests();
    RUN(test_qops_quantize);
    RUN(test_qops_dequantize);
    RUN(test_qops_qadd);
    RUN(test_qops_maxpool);
    RUN(test_qops_avgpool);
    RUN(test_qops_adaptive_avgpool);
    RUN(test_qops_tails);
    RUN(test_qops_pool_tails);
    RUN(test_qops_bad_arguments);
    run_qplan_tests();
    run_isa_tests();
    run_fp16_tests();
    run_fp16_elt_tests();
    run_wino16_tests();
    run_fuse_tests();
    run_precision_tests();
#ifdef LUTHIER_HAVE_OPENBLAS
    RUN(test_gemm_vs_openblas);
#else
    printf("skip test_gemm_vs_openblas: OpenBLAS not linked (apt-get install libopenblas-dev)\n");
#endif

    printf("%d passed, %d failed\n", T.cases_passed, T.cases_failed);
    return T.cases_failed ? 1 : 0;
}
