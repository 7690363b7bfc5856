/* Graphs and plans (luthier_graph.h). */
static void run_graph_tests(void) {}
