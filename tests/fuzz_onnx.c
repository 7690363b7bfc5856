/* libFuzzer target for luthier_onnx.h: the model loader and the TensorProto reader. Each input is
   loaded twice: from the fuzzer's (read-only) bytes, as luthier_onnx_load_memory does, and from
   a writable copy, as luthier_onnx_load does with the file it read (float raw_data may then be
   moved into alignment in place); both must give the same status.

   Build and run (clang; apt-get install clang), from the repository root:
       clang -std=c99 -O1 -g -fsanitize=fuzzer,address,undefined -I. tests/fuzz_onnx.c -o build/fuzz_onnx -lpthread -lm
       mkdir -p build/fuzz_corpus; cp the .onnx and .pb files under tests/data/onnx into build/fuzz_corpus
       build/fuzz_onnx -max_total_time=600 -rss_limit_mb=2048 build/fuzz_corpus
   A crash, leak, sanitizer report or timeout is a bug; error statuses are the expected outcome.
   Instrumenting all of luthier.h is slow to compile (minutes, GBs of RAM); to instrument only the
   loader, build the engine apart and define FUZZ_ONNX_SEPARATE_IMPL:
       printf '#define LUTHIER_IMPLEMENTATION\n#define LUTHIER_NO_THREADS\n#include "luthier.h"\n' > build/impl.c
       clang -O1 -fsanitize=address -I. -c build/impl.c -o build/impl.o
       clang -std=c99 -O1 -g -fsanitize=fuzzer,address,undefined -DFUZZ_ONNX_SEPARATE_IMPL -I. tests/fuzz_onnx.c \
             build/impl.o -o build/fuzz_onnx -lpthread -lm */
#ifndef FUZZ_ONNX_SEPARATE_IMPL
#define LUTHIER_IMPLEMENTATION
#define LUTHIER_NO_THREADS
#endif
#include "luthier.h"
#include "luthier_onnx.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    luthier_graph *g = NULL;
    luthier_onnx_tensor t;
    char err[512];
    luthier_status s = luthier_onnx_load_memory(data, size, NULL, &g, err, sizeof err);
    uint8_t *mut;
    luthier_graph_destroy(g);
    g = NULL;
    /* and as luthier_onnx_load reads files: from a buffer of its own, which it may change
       (float raw_data aligned in place); the outcome must be the same */
    if (size && (mut = (uint8_t *)malloc(size)) != NULL) {
        memcpy(mut, data, size);
        if (luthier_onnx__load_bytes(mut, mut, size, NULL, &g, err, sizeof err) != s) __builtin_trap();
        free(mut);
    } else if (luthier_onnx_load_memory(data, size, NULL, &g, err, sizeof err) != s) {
        __builtin_trap();
    }
    if (s == LUTHIER_STATUS_OK) {
        /* a loaded graph must be consistent: every output is a tensor of the graph */
        int i;
        for (i = 0; i < luthier_graph_num_outputs(g); i++) {
            luthier_tensor_info ti;
            if (luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti) != LUTHIER_STATUS_OK) __builtin_trap();
        }
        luthier_graph_destroy(g);
    } else if (g || !err[0]) {
        __builtin_trap(); /* failures leave no graph and always say why */
    }
    if (luthier_onnx_tensor_load_memory(data, size, &t, err, sizeof err) == LUTHIER_STATUS_OK) luthier_onnx_tensor_free(&t);
    return 0;
}
