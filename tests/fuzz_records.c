/* libFuzzer target for the tuner's records reader (luthier_tune.h >>impl-tune-records): what
   luthier_plan_create reads from luthier_plan_desc.records (a file) or .records_text (memory).

   The input is records text with placeholders, so that the fuzzer reaches the lines that match
   this machine and these nodes: "%F" becomes the context's fingerprint (luthier_tune_fingerprint)
   and "%0".."%9" the task signature of node 0..9 of a small fixed graph (convolutions of each
   algorithm's kind, a residual add, pools and a dense layer). The text is applied three ways,
   which must agree: luthier_records_apply_text, a plan from records_text and a plan from the same
   bytes written to a file (records); a plan that is made runs twice (tests/fuzz_common.h). When
   the text mentions "int8", an int8 plan (every tensor calibrated) is made from it as well, and
   plans of precision AUTO (each node's precision from the records' ninth field) always.

   Build and run: make fuzz-one T=records FUZZ_TIME=600 (see tests/fuzz_common.h). */
#include "fuzz_common.h"

#include <unistd.h>

/* The input with its placeholders replaced (NUL-terminated, malloc'ed). */
static char *fuzz_expand(const uint8_t *data, size_t size, const char *fpr, char sigs[10][320], size_t *len) {
    size_t cap = size * 4 + 64, n = 0, i;
    char *out = (char *)malloc(cap + 1);
    FUZZ_CHECK(out != NULL);
    for (i = 0; i < size; i++) {
        const char *rep = NULL;
        size_t rl;
        if (data[i] == '%' && i + 1 < size) {
            if (data[i + 1] == 'F') rep = fpr;
            else if (data[i + 1] >= '0' && data[i + 1] <= '9') rep = sigs[data[i + 1] - '0'];
        }
        rl = rep ? strlen(rep) : 1;
        if (n + rl > cap) {
            cap = (n + rl) * 2;
            out = (char *)realloc(out, cap + 1);
            FUZZ_CHECK(out != NULL);
        }
        if (rep) {
            memcpy(out + n, rep, rl);
            i++;
        } else {
            out[n] = (char)data[i];
        }
        n += rl;
    }
    out[n] = 0;
    *len = n;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static luthier_graph *g;
    static luthier_calibration *cal;
    static char fpr[640], sigs[10][320], path[64];
    static const fuzz_caps caps = {(size_t)16 << 20, (size_t)16 << 20, 1e7};
    luthier_context *ctx = fuzz_context();
    luthier_node_config configs[16];
    luthier_plan_desc pd;
    luthier_status s_apply, s_text, s_file;
    char *text;
    size_t len;
    int matched = -1, i;
    FILE *fh;
    if (!g) {
        g = fuzz_small_cnn();
        luthier_tune_fingerprint(ctx, fpr, sizeof fpr);
        for (i = 0; i < 10; i++)
            if (i >= luthier_graph_num_nodes(g) || luthier_tune_signature(g, i, sigs[i], sizeof sigs[i]) != LUTHIER_STATUS_OK)
                sigs[i][0] = 0;
        FUZZ_CHECK(luthier_calibration_create(&cal) == LUTHIER_STATUS_OK);
        for (i = 0; i < luthier_graph_num_tensors(g); i++) FUZZ_CHECK(luthier_calibration_set_range(cal, i, -4.0f, 4.0f) == LUTHIER_STATUS_OK);
        snprintf(path, sizeof path, "/tmp/luthier_fuzz_records_%ld.txt", (long)getpid());
    }
    text = fuzz_expand(data, size, fpr, sigs, &len);

    memset(configs, 0, sizeof configs);
    s_apply = luthier_records_apply_text(ctx, g, text, configs, &matched);
    if (s_apply != LUTHIER_STATUS_OK) FUZZ_CHECK(luthier_context_error(ctx)[0] != 0);
    else FUZZ_CHECK(matched >= 0 && matched <= luthier_graph_num_nodes(g));

    memset(&pd, 0, sizeof pd);
    pd.records_text = text;
    s_text = fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL);
    /* a records file that cannot be used fails the plan; one that can makes it (fallback) */
    FUZZ_CHECK(s_text == s_apply);

    FUZZ_CHECK((fh = fopen(path, "wb")) != NULL);
    FUZZ_CHECK(fwrite(text, 1, len, fh) == len);
    FUZZ_CHECK(fclose(fh) == 0);
    memset(&pd, 0, sizeof pd);
    pd.records = path;
    s_file = fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL);
    FUZZ_CHECK(s_file == s_text);
    remove(path);

    if (strstr(text, "int8")) {
        memset(&pd, 0, sizeof pd);
        pd.records_text = text;
        pd.int8 = cal;
        FUZZ_CHECK(fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL) == s_text);
    }
    /* a plan of precision AUTO takes each matching node's precision from its record: usable
       records make it (with and without the calibration) exactly when they make the fp32 plan */
    memset(&pd, 0, sizeof pd);
    pd.records_text = text;
    pd.precision = LUTHIER_PRECISION_AUTO;
    FUZZ_CHECK(fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL) == s_text);
    pd.int8 = cal;
    FUZZ_CHECK(fuzz_plan_run(ctx, g, &pd, data, size, &caps, NULL) == s_text);
    free(text);
    return 0;
}
