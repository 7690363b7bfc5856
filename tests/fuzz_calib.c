/* libFuzzer target for the calibration reader, luthier_calibration_load (luthier_graph.h
   >>impl-calibration): the input is written to a file and read as the calibration of a small
   fixed CNN (fuzz_small_cnn in tests/fuzz_common.h; its tensors are named x, w0..w3, b, wd, bd,
   conv3x3, conv1x1, residual, dw, dilated, global_avgpool_5, flatten_6, fc). Checked: a failure
   says why; every parameter set is a valid one (scale > 0 and finite, zero point 0..255); saving
   what was read and reading it back gives the same parameters; and the int8 plan of the graph
   with those parameters is made (or says why not) and runs twice with the same outputs.

   Build and run: make fuzz-one T=calib FUZZ_TIME=600 (see tests/fuzz_common.h). */
#include "fuzz_common.h"

#include <float.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static luthier_graph *g;
    static char path[64], path2[64];
    static const fuzz_caps caps = {(size_t)16 << 20, (size_t)16 << 20, 1e7};
    luthier_context *ctx = fuzz_context();
    luthier_calibration *c = NULL, *c2 = NULL;
    luthier_plan_desc pd;
    luthier_status s;
    FILE *fh;
    int t, n;
    if (!g) {
        g = fuzz_small_cnn();
        snprintf(path, sizeof path, "/tmp/luthier_fuzz_calib_%ld.txt", (long)getpid());
        snprintf(path2, sizeof path2, "/tmp/luthier_fuzz_calib_%ld.out", (long)getpid());
    }
    n = luthier_graph_num_tensors(g);
    FUZZ_CHECK((fh = fopen(path, "wb")) != NULL);
    FUZZ_CHECK(fwrite(data, 1, size, fh) == size);
    FUZZ_CHECK(fclose(fh) == 0);
    FUZZ_CHECK(luthier_calibration_create(&c) == LUTHIER_STATUS_OK);
    s = luthier_calibration_load(ctx, c, g, path);
    remove(path);
    if (s != LUTHIER_STATUS_OK) FUZZ_CHECK(luthier_context_error(ctx)[0] != 0);
    for (t = -1; t <= n; t++) {
        float scale;
        int32_t zp;
        luthier_status sg = luthier_calibration_get(c, t, &scale, &zp);
        if (t < 0) FUZZ_CHECK(sg == LUTHIER_STATUS_INVALID_ARGUMENT);
        else if (t == n) FUZZ_CHECK(sg == LUTHIER_STATUS_NOT_FOUND);
        if (sg == LUTHIER_STATUS_OK) FUZZ_CHECK(scale > 0.0f && scale <= FLT_MAX && zp >= 0 && zp <= 255);
    }
    /* what was read (all of it, or the lines before a bad one) saves and reads back the same */
    FUZZ_CHECK(luthier_calibration_save(ctx, c, g, path2) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_calibration_create(&c2) == LUTHIER_STATUS_OK);
    FUZZ_CHECK(luthier_calibration_load(ctx, c2, g, path2) == LUTHIER_STATUS_OK);
    remove(path2);
    for (t = 0; t < n; t++) {
        float s1 = 0, s2 = 0;
        int32_t z1 = 0, z2 = 0;
        luthier_status a = luthier_calibration_get(c, t, &s1, &z1), b = luthier_calibration_get(c2, t, &s2, &z2);
        FUZZ_CHECK(a == b && s1 == s2 && z1 == z2);
    }
    luthier_calibration_destroy(c2);
    if (s == LUTHIER_STATUS_OK) {
        memset(&pd, 0, sizeof pd);
        pd.int8 = c;
        fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL);
    }
    luthier_calibration_destroy(c);
    return 0;
}
