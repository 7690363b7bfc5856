/* libFuzzer target for the cost-model reader, luthier__gbt_load (luthier_gbt.h, SERIALIZATION),
   reached as luthier_tune_desc.model_in: the input is written to a file and named as the model a
   tuning run of a small fixed CNN (fuzz_small_cnn in tests/fuzz_common.h) starts from. Such a run
   predicts with the model's trees before it measures (one measurement at most here), so a model
   that loads is also walked. Checked: a failure says why; a run that succeeds saves its model
   (model_out), and a second run reads that file back without error.

   Build and run: make fuzz-one T=gbt FUZZ_TIME=600 (see tests/fuzz_common.h). */
#include "fuzz_common.h"

#include <unistd.h>

static luthier_status fuzz_tune(luthier_context *ctx, const luthier_graph *g, const char *in, const char *out) {
    luthier_tune_desc d;
    memset(&d, 0, sizeof d);
    d.budget_seconds = 0.05;
    d.max_measurements = 1;
    d.progress = -1;
    d.no_plan_check = 1;
    d.model_in = in;
    d.model_out = out;
    return luthier_tune(ctx, g, &d, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static luthier_graph *g;
    static char path[64], path2[64];
    luthier_context *ctx = fuzz_context();
    luthier_status s;
    FILE *fh;
    if (!g) {
        g = fuzz_small_cnn();
        snprintf(path, sizeof path, "/tmp/luthier_fuzz_gbt_%ld.txt", (long)getpid());
        snprintf(path2, sizeof path2, "/tmp/luthier_fuzz_gbt_%ld.out", (long)getpid());
    }
    FUZZ_CHECK((fh = fopen(path, "wb")) != NULL);
    FUZZ_CHECK(fwrite(data, 1, size, fh) == size);
    FUZZ_CHECK(fclose(fh) == 0);
    remove(path2);
    s = fuzz_tune(ctx, g, path, path2);
    remove(path);
    if (s != LUTHIER_STATUS_OK) {
        FUZZ_CHECK(luthier_context_error(ctx)[0] != 0);
    } else { /* the model it saved (the input's, continued) reads back */
        s = fuzz_tune(ctx, g, path2, NULL);
        if (s != LUTHIER_STATUS_OK) fprintf(stderr, "saved model refused: %s\n", luthier_context_error(ctx));
        FUZZ_CHECK(s == LUTHIER_STATUS_OK);
    }
    remove(path2);
    return 0;
}
