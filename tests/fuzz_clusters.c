/* libFuzzer target for the LUTHIER_CLUSTERS syntax (luthier.h >>impl-topology): the input,
   cut at its first NUL, is a cluster spec given to luthier_topology_parse, then to
   luthier_topology_detect over a fake sysfs tree of a real board (tests/data/topology, relative
   to the repository root, where the Makefile runs the target), which merges the spec with what
   the tree tells about the CPUs. Checked: a failure says why; a success is a valid topology
   (the invariants of tests/test_topology.c) that luthier_topology_format prints consistently.

   Build and run: make fuzz-one T=clusters FUZZ_TIME=600 (see tests/fuzz_common.h). */
#include "fuzz_common.h"

static void fuzz_check_topology(const luthier_topology *t, const char *source) {
    unsigned char seen[LUTHIER_MAX_CPUS];
    char buf[4096], small[7];
    int c, i, len;
    memset(seen, 0, sizeof seen);
    FUZZ_CHECK(t->num_clusters >= 1 && t->num_clusters <= LUTHIER_MAX_CLUSTERS);
    FUZZ_CHECK(strcmp(t->source, source) == 0);
    for (c = 0; c < t->num_clusters; c++) {
        const luthier_cluster *cl = &t->clusters[c];
        FUZZ_CHECK(cl->num_cpus >= 1 && cl->num_cpus <= LUTHIER_MAX_CPUS);
        FUZZ_CHECK(cl->capacity > 0 && cl->capacity <= 1.0 + 1e-9);
        FUZZ_CHECK(c == 0 ? cl->capacity > 1.0 - 1e-9 : cl->capacity <= t->clusters[c - 1].capacity);
        FUZZ_CHECK(cl->name[0] != 0 && memchr(cl->name, 0, sizeof cl->name) != NULL);
        FUZZ_CHECK(memchr(cl->core, 0, sizeof cl->core) != NULL);
        for (i = 0; i < cl->num_cpus; i++) {
            int id = cl->cpus[i];
            FUZZ_CHECK(id >= 0 && id < LUTHIER_MAX_CPUS && !seen[id]);
            FUZZ_CHECK(i == 0 || id > cl->cpus[i - 1]);
            seen[id] = 1;
        }
    }
    len = luthier_topology_format(t, NULL, 0);
    FUZZ_CHECK(len > 0 && (size_t)len < sizeof buf);
    FUZZ_CHECK(luthier_topology_format(t, buf, sizeof buf) == len && strlen(buf) == (size_t)len);
    FUZZ_CHECK(luthier_topology_format(t, small, sizeof small) == len);
    FUZZ_CHECK(strlen(small) < sizeof small && strncmp(small, buf, strlen(small)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const boards[] = {"tests/data/topology/rk3399", "tests/data/topology/snapdragon865",
                                         "tests/data/topology/odroid-n2plus"};
    static luthier_topology t; /* ~9 KiB */
    char *spec = (char *)malloc(size + 1), err[256];
    luthier_status s;
    FUZZ_CHECK(spec != NULL);
    memcpy(spec, data, size);
    spec[size] = 0;
    err[0] = 0;
    s = luthier_topology_parse(spec, &t, err, sizeof err);
    if (s == LUTHIER_STATUS_OK) fuzz_check_topology(&t, "api");
    else FUZZ_CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    /* "" means: ignore the environment, read the tree alone */
    err[0] = 0;
    s = luthier_topology_detect(boards[size % 3], spec, &t, err, sizeof err);
    if (s == LUTHIER_STATUS_OK) fuzz_check_topology(&t, spec[0] ? "env" : "sysfs");
    else FUZZ_CHECK(err[0] != 0 && t.num_clusters == 0);
    free(spec);
    return 0;
}
