/* A module for symbolizer_debug_dir_test: built with -g and a fixed build id, then stripped by
 * the test. fixture_hidden_step is static, so once stripped only its debug file names it. */
static volatile int fixture_sink;

__attribute__((noinline)) static void fixture_hidden_step(int x) {
    fixture_sink = x * 3;
}

void fixture_entry(int x) {
    fixture_hidden_step(x + 1);
}
