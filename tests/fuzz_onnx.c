/* libFuzzer target for luthier_onnx.h: the model loader and the TensorProto reader, then the
   engine on what loads. Each input is loaded twice: from the fuzzer's (read-only) bytes, as
   luthier_onnx_load_memory does, and from a writable copy, as luthier_onnx_load does with the
   file it read (float raw_data may then be moved into alignment in place); both must give the
   same status. A graph that loads is planned on a 1-thread context and, when its arena, weights
   and workspace stay under 64 MiB and a run costs little, run twice on inputs made from the
   fuzzer's bytes (tests/fuzz_common.h: same outputs whatever the arena held before).

   Build and run (clang; apt-get install clang), from the repository root:
       make fuzz-one T=onnx FUZZ_TIME=600        (see the Makefile's fuzz targets)
   or by hand, all of luthier instrumented in one translation unit (minutes to compile):
       clang -std=c99 -O1 -g -fsanitize=fuzzer,address,undefined -I. tests/fuzz_onnx.c -o build/fuzz_onnx -lpthread -lm
       mkdir -p build/fuzz_corpus; cp the .onnx and .pb files under tests/data/onnx into build/fuzz_corpus
       build/fuzz_onnx -max_total_time=600 -rss_limit_mb=2048 build/fuzz_corpus
   A crash, leak, sanitizer report or timeout is a bug; error statuses are the expected outcome.
   With FUZZ_SEPARATE_IMPL the engine comes from another object (the Makefile builds one,
   instrumented, shared by every target); the loader is always compiled here. */
#if defined(FUZZ_ONNX_SEPARATE_IMPL) && !defined(FUZZ_SEPARATE_IMPL)
#define FUZZ_SEPARATE_IMPL
#endif
#include "fuzz_common.h"
#include "luthier_onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    luthier_graph *g = NULL;
    luthier_onnx_tensor t;
    char err[512];
    luthier_onnx_options opt;
    luthier_status s;
    uint8_t *mut;
    memset(&opt, 0, sizeof opt);
    opt.memory_budget = (size_t)64 << 20; /* the budget's refusals, without 1 GiB models that take
                                             seconds each under the sanitizers */
    s = luthier_onnx_load_memory(data, size, &opt, &g, err, sizeof err);
    luthier_graph_destroy(g);
    g = NULL;
    /* and as luthier_onnx_load reads files: from a buffer of its own, which it may change
       (float raw_data aligned in place); the outcome must be the same */
    if (size && (mut = (uint8_t *)malloc(size)) != NULL) {
        memcpy(mut, data, size);
        FUZZ_CHECK(luthier_onnx__load_bytes(mut, mut, size, &opt, &g, err, sizeof err) == s);
        free(mut);
    } else {
        FUZZ_CHECK(luthier_onnx_load_memory(data, size, &opt, &g, err, sizeof err) == s);
    }
    if (s == LUTHIER_STATUS_OK) {
        /* a loaded graph must be consistent: every output is a tensor of the graph */
        static const fuzz_caps caps = {(size_t)64 << 20, (size_t)64 << 20, 2e7};
        int i;
        for (i = 0; i < luthier_graph_num_outputs(g); i++) {
            luthier_tensor_info ti;
            FUZZ_CHECK(luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti) == LUTHIER_STATUS_OK);
        }
        /* and what loads plans, or says why not, and runs */
        fuzz_plan_run(fuzz_context(), g, NULL, data, size, &caps, NULL);
        luthier_graph_destroy(g);
    } else {
        FUZZ_CHECK(!g && err[0]); /* failures leave no graph and always say why */
    }
    if (luthier_onnx_tensor_load_memory(data, size, &t, err, sizeof err) == LUTHIER_STATUS_OK) luthier_onnx_tensor_free(&t);
    return 0;
}
