/* CPU topology: cluster detection from fake sysfs trees of real boards (tests/data/topology),
   the LUTHIER_CLUSTERS syntax and its errors. Included by test_main.c. The fixture paths are
   relative to the repository root, where `make test` runs the suite (natively and under qemu). */

#ifndef LUTHIER_TEST_TOPOLOGY_DIR
#define LUTHIER_TEST_TOPOLOGY_DIR "tests/data/topology"
#endif

/* Expected cluster: name, core, cpu list as text, capacity (checked to +-0.01), MHz. */
typedef struct test_cluster_expect {
    const char *name, *core, *cpus;
    double capacity;
    unsigned mhz;
} test_cluster_expect;

static void test_cpus_text(const luthier_cluster *c, char *buf, size_t size) {
    size_t len = 0;
    int i;
    buf[0] = 0;
    for (i = 0; i < c->num_cpus && len + 8 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", c->cpus[i]);
}

/* Every CPU id appears at most once, ids ascending within a cluster, capacities in (0, 1],
   fastest first with the first at 1.0. */
static void test_topology_invariants(const char *what, const luthier_topology *t) {
    static unsigned char seen[LUTHIER_MAX_CPUS];
    int c, i;
    memset(seen, 0, sizeof seen);
    CHECK(t->num_clusters >= 1 && t->num_clusters <= LUTHIER_MAX_CLUSTERS, "%s: %d clusters", what, t->num_clusters);
    for (c = 0; c < t->num_clusters && c < LUTHIER_MAX_CLUSTERS; c++) {
        const luthier_cluster *cl = &t->clusters[c];
        CHECK(cl->num_cpus >= 1 && cl->num_cpus <= LUTHIER_MAX_CPUS, "%s: cluster %d has %d cpus", what, c, cl->num_cpus);
        CHECK(cl->capacity > 0 && cl->capacity <= 1.0 + 1e-9, "%s: capacity %g", what, cl->capacity);
        CHECK(c == 0 ? fabs(cl->capacity - 1.0) < 1e-9 : cl->capacity <= t->clusters[c - 1].capacity + 1e-12,
              "%s: cluster %d (%s) capacity %g out of order", what, c, cl->name, cl->capacity);
        CHECK(cl->name[0] != 0 && memchr(cl->name, 0, sizeof cl->name), "%s: cluster %d name", what, c);
        CHECK(memchr(cl->core, 0, sizeof cl->core) != NULL, "%s: core not terminated", what);
        for (i = 0; i < cl->num_cpus && i < LUTHIER_MAX_CPUS; i++) {
            int id = cl->cpus[i];
            CHECK(id >= 0 && id < LUTHIER_MAX_CPUS, "%s: cpu id %d", what, id);
            if (id < 0 || id >= LUTHIER_MAX_CPUS) continue;
            CHECK(!seen[id], "%s: cpu %d twice", what, id);
            seen[id] = 1;
            CHECK(i == 0 || id > cl->cpus[i - 1], "%s: cpus not ascending in %s", what, cl->name);
        }
    }
}

static void test_expect_topology(const char *what, const luthier_topology *t, const char *source,
                                 const test_cluster_expect *e, int n) {
    int c;
    char buf[1024];
    test_topology_invariants(what, t);
    CHECK(strcmp(t->source, source) == 0, "%s: source '%s', expected '%s'", what, t->source, source);
    CHECK(t->num_clusters == n, "%s: %d clusters, expected %d", what, t->num_clusters, n);
    for (c = 0; c < n && c < t->num_clusters; c++) {
        const luthier_cluster *cl = &t->clusters[c];
        test_cpus_text(cl, buf, sizeof buf);
        CHECK(strcmp(cl->name, e[c].name) == 0, "%s: cluster %d named '%s', expected '%s'", what, c, cl->name, e[c].name);
        CHECK(strcmp(cl->core, e[c].core) == 0, "%s: %s core '%s', expected '%s'", what, cl->name, cl->core, e[c].core);
        CHECK(strcmp(buf, e[c].cpus) == 0, "%s: %s cpus %s, expected %s", what, cl->name, buf, e[c].cpus);
        CHECK(fabs(cl->capacity - e[c].capacity) < 0.01, "%s: %s capacity %.4f, expected %.2f", what, cl->name, cl->capacity, e[c].capacity);
        CHECK(cl->max_freq_khz / 1000 == e[c].mhz, "%s: %s %u kHz, expected %u MHz", what, cl->name, cl->max_freq_khz, e[c].mhz);
    }
}

static luthier_status test_detect_board(const char *board, const char *spec, luthier_topology *t, char *err, size_t err_size) {
    char root[512];
    snprintf(root, sizeof root, "%s/%s", LUTHIER_TEST_TOPOLOGY_DIR, board);
    return luthier_topology_detect(root, spec, t, err, err_size);
}

static void test_topology_boards(void) {
    static luthier_topology t; /* ~9 KiB: kept off the stack */
    char err[256], text[1024];
    /* rk3399: cpu_capacity 485 / 1024 */
    static const test_cluster_expect rk3399[] = {{"big", "Cortex-A72", "4,5", 1.0, 1800},
                                                 {"little", "Cortex-A53", "0,1,2,3", 485.0 / 1024, 1416}};
    /* odroid-n2plus: no cpu_capacity: 2.0 GHz x 1.0 (A53) vs 2.4 GHz x 1.8 (A73) */
    static const test_cluster_expect n2[] = {{"big", "Cortex-A73", "2,3,4,5", 1.0, 2400},
                                             {"little", "Cortex-A53", "0,1", 2000.0 / (2400.0 * 1.8), 2000}};
    /* snapdragon865: sm8250 capacity-dmips-mhz 448/1024/1024 scaled by max frequency */
    static const test_cluster_expect sd865[] = {{"big", "Cortex-A77", "7", 1.0, 2841},
                                                {"middle", "Cortex-A77", "4,5,6", 871.0 / 1024, 2419},
                                                {"little", "Cortex-A55", "0,1,2,3", 284.0 / 1024, 1804}};
    static const test_cluster_expect x86[] = {{"all", "Intel Xeon Platinum 8375C", "0,1,2,3,4,5,6,7", 1.0, 3500}};
    static const test_cluster_expect vm[] = {{"all", "Neoverse-N1", "0,1,2,3", 1.0, 0}};
    static const struct { const char *board; const test_cluster_expect *e; int n; } boards[] = {
        {"rk3399", rk3399, 2}, {"odroid-n2plus", n2, 2}, {"snapdragon865", sd865, 3},
        {"x86-server", x86, 1}, {"vm-no-cpufreq", vm, 1}};
    size_t b;
    for (b = 0; b < sizeof boards / sizeof boards[0]; b++) {
        luthier_status s = test_detect_board(boards[b].board, "", &t, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK, "%s: %s", boards[b].board, err);
        test_expect_topology(boards[b].board, &t, "sysfs", boards[b].e, boards[b].n);
        CHECK(err[0] == 0, "%s: err '%s' on success", boards[b].board, err);
    }
    /* the format used by demos */
    CHECK(test_detect_board("rk3399", "", &t, err, sizeof err) == LUTHIER_STATUS_OK, "rk3399");
    CHECK(luthier_topology_format(&t, text, sizeof text) == (int)strlen(text), "format length");
    CHECK(strcmp(text, "big: cpus 4-5 (2 x Cortex-A72, 1800 MHz, capacity 1.00)\n"
                       "little: cpus 0-3 (4 x Cortex-A53, 1416 MHz, capacity 0.47)\n") == 0, "format:\n%s", text);
    CHECK(luthier_topology_format(&t, NULL, 0) == (int)strlen(text), "format size query");
    CHECK(luthier_topology_format(&t, text, 10) == (int)strlen("big: cpus 4-5 (2 x Cortex-A72, 1800 MHz, capacity 1.00)\n"
                                                               "little: cpus 0-3 (4 x Cortex-A53, 1416 MHz, capacity 0.47)\n") &&
          strcmp(text, "big: cpus") == 0, "format truncated: '%s'", text);
    CHECK(test_detect_board("vm-no-cpufreq", "", &t, err, sizeof err) == LUTHIER_STATUS_OK, "vm");
    luthier_topology_format(&t, text, sizeof text);
    CHECK(strcmp(text, "all: cpus 0-3 (4 x Neoverse-N1, capacity 1.00)\n") == 0, "format vm: %s", text);
    if (!T.quick) { /* the fixtures as a demo would print them */
        for (b = 0; b < sizeof boards / sizeof boards[0]; b++) {
            test_detect_board(boards[b].board, "", &t, err, sizeof err);
            luthier_topology_format(&t, text, sizeof text);
            printf("    %s (%s):\n%s", boards[b].board, t.source, text);
        }
    }
}

static void test_topology_env_syntax(void) {
    static luthier_topology t;
    char err[256];
    static const test_cluster_expect two[] = {{"big", "", "4,5,6,7", 1.0, 0}, {"little", "", "0,1,2,3", 1.0, 0}};
    static const test_cluster_expect caps[] = {{"big", "", "4,5,6,7", 1.0, 0}, {"little", "", "0,1,3", 0.45, 0}};
    static const test_cluster_expect three[] = {{"prime", "", "7", 1.0, 0}, {"gold", "", "4,5,6", 0.5, 0},
                                                {"silver", "", "0,1,2,3", 0.25, 0}};
    CHECK(luthier_topology_parse("big:4-7,little:0-3", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("big:4-7,little:0-3", &t, "api", two, 2);
    /* capacities; a cpu list continuing after a comma; spaces; given out of speed order */
    CHECK(luthier_topology_parse(" little@0.45:0-1, 3 ,big@1.0:4-7", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("capacities", &t, "api", caps, 2);
    /* relative capacities of any scale are normalized */
    CHECK(luthier_topology_parse("silver@1:0-3,gold@2:4,5,6,prime@4:7", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("three", &t, "api", three, 3);
    CHECK(luthier_topology_parse("x:0", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.num_clusters == 1 &&
          t.clusters[0].num_cpus == 1 && strcmp(t.clusters[0].name, "x") == 0, "single cpu: %s", err);
    CHECK(luthier_topology_parse("a:0,b:1,c:2,d:3,e:4,f:5,g:6,h:255", &t, err, sizeof err) == LUTHIER_STATUS_OK &&
          t.num_clusters == 8 && t.clusters[7].cpus[0] == 255, "8 clusters, cpu 255: %s", err);
    CHECK(luthier_topology_parse("all:0-255", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.clusters[0].num_cpus == 256, "256 cpus: %s", err);
    CHECK(luthier_topology_parse("big@1e0:1,little@.5:0", &t, err, sizeof err) == LUTHIER_STATUS_OK &&
          fabs(t.clusters[1].capacity - 0.5) < 1e-12, "number forms: %s", err);
}

/* spec must fail with INVALID_ARGUMENT and a message containing each of the (up to 2) parts. */
static void test_expect_bad_spec(const char *spec, const char *part1, const char *part2) {
    static luthier_topology t;
    char err[256];
    luthier_status s;
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = 0;
    s = luthier_topology_parse(spec, &t, err, sizeof err);
    CHECK(s == LUTHIER_STATUS_INVALID_ARGUMENT, "'%s' gave status %d", spec, (int)s);
    CHECK(strstr(err, part1) != NULL, "'%s': message '%s' lacks '%s'", spec, err, part1);
    if (part2) CHECK(strstr(err, part2) != NULL, "'%s': message '%s' lacks '%s'", spec, err, part2);
    CHECK(t.num_clusters == 0, "'%s': out not cleared", spec);
}

static void test_topology_env_errors(void) {
    char err[8];
    luthier_topology t;
    test_expect_bad_spec("", "empty token at position 1", NULL);
    test_expect_bad_spec("big:4-7,,little:0-3", "empty token at position 9", NULL);
    test_expect_bad_spec("big:4-7,", "empty token at position 9", NULL);
    test_expect_bad_spec(":0-3", "empty cluster name", "position 1");
    test_expect_bad_spec("big:4-7,@0.5:0-3", "empty cluster name", "'@0.5:0-3' at position 9");
    test_expect_bad_spec("0-3", "expected name:cpus", "'0-3' at position 1");
    test_expect_bad_spec("big 4-7", "expected name:cpus", "'big 4-7'");
    test_expect_bad_spec("b!g:0", "bad character '!'", "position 1");
    test_expect_bad_spec("a_very_long_cluster_name:0", "too long", "max 15");
    test_expect_bad_spec("big:4-x", "bad CPU range '4-x'", "position 1");
    test_expect_bad_spec("big:4,x7", "bad CPU id 'x7'", "'x7' at position 7");
    test_expect_bad_spec("big:-1", "bad CPU range '-1'", NULL);
    test_expect_bad_spec("big:4:5", "bad CPU id '4:5'", NULL);
    test_expect_bad_spec("big:99999999999999999999", "bad CPU id", NULL);
    test_expect_bad_spec("big:7-4", "reversed range 7-4", "write 4-7");
    test_expect_bad_spec("big:4-256", "cpu 256 over the limit (max 255)", "'big:4-256'");
    test_expect_bad_spec("big:0,1000", "cpu 1000 over the limit", "position 7");
    test_expect_bad_spec("big:4-7,little:0-4", "cpu 4 is in two clusters, 'big' and 'little'", "'little:0-4' at position 9");
    test_expect_bad_spec("big:4-7,5", "cpu 5 listed twice in cluster 'big'", "position 9");
    test_expect_bad_spec("big:4-7,little:", "cluster 'little' has no CPUs", "position 9");
    test_expect_bad_spec("big@1:", "cluster 'big' has no CPUs", NULL);
    test_expect_bad_spec("a:0,b:1,c:2,d:3,e:4,f:5,g:6,h:7,i:8", "too many clusters (max 8)", "'i:8' at position 33");
    test_expect_bad_spec("big:1,big:2", "cluster name 'big' used twice", "position 7");
    test_expect_bad_spec("big@0:4-7", "capacity '0' is not a positive number", "position 1");
    test_expect_bad_spec("big@-1:4-7", "capacity '-1' is not a positive number", NULL);
    test_expect_bad_spec("big@fast:4-7", "capacity 'fast' is not a positive number", NULL);
    test_expect_bad_spec("big@nan:4-7", "capacity 'nan' is not a positive number", NULL);
    test_expect_bad_spec("big@inf:4-7", "capacity 'inf' is not a positive number", NULL);
    test_expect_bad_spec("big@1.0x:4-7", "capacity '1.0x'", NULL);
    test_expect_bad_spec("big@:4-7", "capacity missing", NULL);
    test_expect_bad_spec("big@1:4-7,little:0-3", "give a capacity to every cluster or to none", "'little' has none");
    /* capacities so far apart that the slower one normalizes to 0 (found by tests/fuzz_clusters.c) */
    test_expect_bad_spec("x@1e-300:0,y@1e29:1", "capacity 1e-300 of 'x' is too small next to 1e+29", NULL);
    CHECK(luthier_topology_parse("x@1e-300:0,y@1e-290:1", &t, err, sizeof err) == LUTHIER_STATUS_OK &&
          t.clusters[1].capacity > 0, "far apart but representable capacities");
    /* NULL arguments, tiny or absent message buffers */
    CHECK(luthier_topology_parse(NULL, &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strlen(err) == sizeof err - 1, "NULL spec");
    CHECK(luthier_topology_parse("big:0", NULL, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL out");
    CHECK(luthier_topology_parse("big:x", &t, NULL, 0) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL err");
    CHECK(luthier_topology_parse("big:x", &t, err, 0) == LUTHIER_STATUS_INVALID_ARGUMENT, "err_size 0");
    CHECK(luthier_topology_detect(NULL, "", NULL, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "detect NULL out");
}

static void test_topology_env_override(void) {
    static luthier_topology t;
    char err[256];
    const char *old = getenv("LUTHIER_CLUSTERS");
    char saved[256];
    /* a spec without capacities takes them, the cores and frequencies from the tree */
    static const test_cluster_expect rk[] = {{"fast", "Cortex-A72", "4,5", 1.0, 1800}, {"slow", "Cortex-A53", "0,1,2,3", 485.0 / 1024, 1416}};
    /* a spec with capacities keeps them, even against the tree */
    static const test_cluster_expect rk_caps[] = {{"slow", "Cortex-A53", "0,1,2,3", 1.0, 1416}, {"fast", "Cortex-A72", "4,5", 0.5, 1800}};
    /* clusters mixing core kinds have no core name; capacity = mean of their CPUs' */
    static const test_cluster_expect mixed[] = {{"a", "", "0,4", 1.0, 1800}, {"b", "Cortex-A53", "1,2,3", 485.0 / ((485.0 + 1024) / 2), 1416}};
    /* no speed information in the tree: capacities stay 1.0, the spec's order is kept */
    static const test_cluster_expect vm[] = {{"x", "Neoverse-N1", "2,3", 1.0, 0}, {"y", "Neoverse-N1", "0,1", 1.0, 0}};
    snprintf(saved, sizeof saved, "%s", old ? old : "");

    CHECK(test_detect_board("rk3399", "slow:0-3,fast:4-5", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("rk3399 + spec", &t, "env", rk, 2);
    CHECK(test_detect_board("rk3399", "fast@0.5:4-5,slow@1:0-3", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("rk3399 + spec with capacities", &t, "env", rk_caps, 2);
    CHECK(test_detect_board("rk3399", "b:1-3,a:0,4", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("rk3399 mixed", &t, "env", mixed, 2);
    CHECK(test_detect_board("vm-no-cpufreq", "x:2-3,y:0-1", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_expect_topology("vm + spec", &t, "env", vm, 2);
    /* CPUs that are not online in the tree */
    CHECK(test_detect_board("rk3399", "big:4-5,9", &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT &&
          strstr(err, "cpu 9 (cluster 'big') is not online (online: 0-5)"), "offline cpu: %s", err);
    CHECK(t.num_clusters == 0, "out cleared on error");
    CHECK(test_detect_board("snapdragon865", "big:8", &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT &&
          strstr(err, "online: 0-7"), "offline cpu: %s", err);
    CHECK(test_detect_board("rk3399", "big:4-7,", &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT &&
          strstr(err, "LUTHIER_CLUSTERS: empty token at position 9"), "env message names the variable: %s", err);
    /* without an online list (a missing tree) the spec is taken as is */
    CHECK(test_detect_board("no-such-board", "big:200", &t, err, sizeof err) == LUTHIER_STATUS_OK &&
          strcmp(t.source, "env") == 0 && t.clusters[0].cpus[0] == 200, "%s", err);

    /* the environment variable: read when env_spec is NULL, ignored when it is "" */
    setenv("LUTHIER_CLUSTERS", "little:0-3,big:4-5", 1);
    CHECK(test_detect_board("rk3399", NULL, &t, err, sizeof err) == LUTHIER_STATUS_OK && strcmp(t.source, "env") == 0 &&
          t.num_clusters == 2 && strcmp(t.clusters[0].name, "big") == 0 && fabs(t.clusters[1].capacity - 485.0 / 1024) < 0.01,
          "env var: %s %s", err, t.source);
    CHECK(test_detect_board("rk3399", "", &t, err, sizeof err) == LUTHIER_STATUS_OK && strcmp(t.source, "sysfs") == 0, "env ignored");
    CHECK(test_detect_board("rk3399", "solo:0-5", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.num_clusters == 1 &&
          strcmp(t.clusters[0].name, "solo") == 0 && strcmp(t.clusters[0].core, "") == 0, "env_spec beats the variable");
    setenv("LUTHIER_CLUSTERS", "big:4-5,little:0-3,6", 1);
    CHECK(test_detect_board("rk3399", NULL, &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT &&
          strstr(err, "cpu 6 (cluster 'little') is not online"), "bad env var: %s", err);
    setenv("LUTHIER_CLUSTERS", "", 1);
    CHECK(test_detect_board("rk3399", NULL, &t, err, sizeof err) == LUTHIER_STATUS_OK && strcmp(t.source, "sysfs") == 0, "empty env var");
    if (old) setenv("LUTHIER_CLUSTERS", saved, 1);
    else unsetenv("LUTHIER_CLUSTERS");
}

static void test_topology_malformed(void) {
    static luthier_topology t;
    char err[256];
    static const char *const trees[] = {"bad-empty-online", "bad-online-garbage", "bad-garbage", "bad-huge-online",
                                        "bad-partial", "no-such-board", "rk3399/sys", ""};
    size_t i;
    int c, total;
    for (i = 0; i < sizeof trees / sizeof trees[0]; i++) {
        luthier_status s = test_detect_board(trees[i], "", &t, err, sizeof err);
        CHECK(s == LUTHIER_STATUS_OK, "%s: %s", trees[i], err);
        test_topology_invariants(trees[i], &t);
    }
    /* no usable online list: one cluster of sysconf's online CPUs */
    CHECK(test_detect_board("bad-empty-online", "", &t, err, sizeof err) == LUTHIER_STATUS_OK &&
          strcmp(t.source, "default") == 0 && t.num_clusters == 1 && strcmp(t.clusters[0].name, "all") == 0 &&
          t.clusters[0].cpus[0] == 0, "empty online: %s", t.source);
    CHECK(test_detect_board("bad-online-garbage", "", &t, err, sizeof err) == LUTHIER_STATUS_OK && strcmp(t.source, "default") == 0,
          "garbage online: %s", t.source);
    /* garbage capacities / frequencies / cpuinfo: CPUs 0-3, all covered */
    CHECK(test_detect_board("bad-garbage", "", &t, err, sizeof err) == LUTHIER_STATUS_OK, "garbage");
    for (c = 0, total = 0; c < t.num_clusters; c++) total += t.clusters[c].num_cpus;
    CHECK(total == 4, "bad-garbage: %d cpus", total);
    /* ids past LUTHIER_MAX_CPUS are dropped */
    CHECK(test_detect_board("bad-huge-online", "", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.num_clusters == 1 &&
          t.clusters[0].num_cpus == LUTHIER_MAX_CPUS && strcmp(t.source, "default") == 0, "huge online: %d", t.clusters[0].num_cpus);
    /* cpu_capacity for only some CPUs is not mixed with frequencies */
    CHECK(test_detect_board("bad-partial", "", &t, err, sizeof err) == LUTHIER_STATUS_OK && strcmp(t.source, "sysfs") == 0, "partial");
    for (c = 0, total = 0; c < t.num_clusters; c++) total += t.clusters[c].num_cpus;
    CHECK(total == 4 && strcmp(t.clusters[0].core, "Cortex-A72") == 0 && t.clusters[0].cpus[0] == 0, "bad-partial: %d cpus, first %s",
          total, t.clusters[0].core);
    /* the real machine: whatever it is, a valid topology */
    CHECK(luthier_topology_detect(NULL, "", &t, err, sizeof err) == LUTHIER_STATUS_OK, "this machine: %s", err);
    test_topology_invariants("this machine", &t);
}

static void test_topology_many_kinds(void) {
    /* more kinds than LUTHIER_MAX_CLUSTERS merge into 8 clusters, nothing lost (a temp tree) */
    static luthier_topology t;
    char root[256], path[512], err[256];
    int i, c, total = 0;
    FILE *f;
    snprintf(root, sizeof root, "build/topology-many-%ld", (long)getpid());
    snprintf(path, sizeof path, "mkdir -p %s/sys/devices/system/cpu", root);
    if (system(path) != 0) { CHECK(0, "mkdir %s", root); return; }
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu/online", root);
    f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    if (!f) return;
    fputs("0-11\n", f);
    fclose(f);
    for (i = 0; i < 12; i++) {
        snprintf(path, sizeof path, "mkdir -p %s/sys/devices/system/cpu/cpu%d", root, i);
        if (system(path) != 0) break;
        snprintf(path, sizeof path, "%s/sys/devices/system/cpu/cpu%d/cpu_capacity", root, i);
        if ((f = fopen(path, "w")) != NULL) { fprintf(f, "%d\n", 100 + 70 * i); fclose(f); }
    }
    CHECK(luthier_topology_detect(root, "", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    test_topology_invariants("12 kinds", &t);
    for (c = 0; c < t.num_clusters; c++) total += t.clusters[c].num_cpus;
    CHECK(t.num_clusters == LUTHIER_MAX_CLUSTERS && total == 12 && strcmp(t.clusters[0].name, "c0") == 0 &&
          t.clusters[0].cpus[t.clusters[0].num_cpus - 1] == 11, "%d clusters, %d cpus", t.num_clusters, total);
    snprintf(path, sizeof path, "rm -rf %s", root);
    if (system(path) != 0) CHECK(0, "rm %s", root);
}
