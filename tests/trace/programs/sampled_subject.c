/* Run under `rtmem record --sample`: allocations of known sizes from known sites ("sizes"),
 * and the in-process control API from C ("control DUMP_PATH", recorded with --paused). Each
 * site is its own non-inlined function so the trace names it apart. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtmem.h"

#define NOINLINE __attribute__((noinline))

static void* volatile sink;

NOINLINE static void small_site(void) { /* 200000 x 64 B, each freed at once */
    for (int i = 0; i < 200000; ++i) {
        sink = malloc(64);
        free(sink);
    }
}
NOINLINE static void medium_site(void** keep) { /* 20000 x 3000 B, 1000 kept */
    for (int i = 0; i < 20000; ++i) {
        void* p = malloc(3000);
        if (i % 20 == 0) {
            keep[i / 20] = p;
        } else {
            free(p);
        }
    }
}
NOINLINE static void large_site(void) { /* 400 x 1 MiB */
    for (int i = 0; i < 400; ++i) {
        sink = malloc(1u << 20);
        free(sink);
    }
}
NOINLINE static void growing_site(void) { /* 5000 blocks grown 100 B -> 10000 B by realloc */
    for (int i = 0; i < 5000; ++i) {
        char* p = malloc(100);
        for (size_t n = 1000; n <= 10000; n += 3000) p = realloc(p, n);
        free(p);
    }
}

static int run_sizes(void) {
    static void* keep[1000];
    small_site();
    medium_site(keep);
    large_site();
    growing_site();
    for (int i = 0; i < 1000; i += 2) free(keep[i]); /* 500 x 3000 B leaked */
    puts("sizes done");
    return 0;
}

NOINLINE static void* paused_site(void) { return malloc(128 * 1024); }
NOINLINE static void* recorded_site(void) { return malloc(256 * 1024); }
NOINLINE static void* stopped_site(void) { return malloc(192 * 1024); }

static void say(const char* what, bool ok) {
    printf("%s %s %s\n", what, ok ? "ok" : "failed", ok ? "" : rtmem_error_string(rtmem_last_error()));
}

/* Begun paused: 100 blocks unrecorded, start, 300 recorded, dump, stop, 100 more unrecorded,
 * the 300 freed while stopped (their frees are still recorded), start again. */
static int run_control(const char* dump_path) {
    static void* blocks[300];
    void* before[100];
    void* after[100];
    for (int i = 0; i < 100; ++i) before[i] = paused_site();
    say("start", rtmem_trace_start());
    for (int i = 0; i < 300; ++i) blocks[i] = recorded_site();
    say("dump", rtmem_trace_dump(dump_path));
    say("dump(NULL)", rtmem_trace_dump(NULL));
    say("dump(bad dir)", rtmem_trace_dump("/nonexistent-rtmem-dir/x.rtt"));
    say("stop", rtmem_trace_stop());
    for (int i = 0; i < 100; ++i) after[i] = stopped_site();
    for (int i = 0; i < 300; ++i) free(blocks[i]);
    say("start", rtmem_trace_start());
    for (int i = 0; i < 100; ++i) {
        free(before[i]);
        free(after[i]);
    }
    return 0;
}

/* A pause must reach a thread already on the tracer's fast path: a worker allocates 1000
 * blocks of 1000 B (its gate opens), 700 while the main thread has the trace stopped, then 500
 * after it started it again. Counted: 1500. */
static pthread_barrier_t g_step;
NOINLINE static void churn(int n) {
    for (int i = 0; i < n; ++i) {
        sink = malloc(1000);
        free(sink);
    }
}
static void* pause_worker(void* arg) {
    (void)arg;
    churn(1000);
    pthread_barrier_wait(&g_step); /* main stops */
    pthread_barrier_wait(&g_step);
    churn(700);
    pthread_barrier_wait(&g_step); /* main starts */
    pthread_barrier_wait(&g_step);
    churn(500);
    return NULL;
}
static int run_pause_threads(void) {
    pthread_t worker;
    pthread_barrier_init(&g_step, NULL, 2);
    if (pthread_create(&worker, NULL, pause_worker, NULL) != 0) return 1;
    pthread_barrier_wait(&g_step);
    bool stopped = rtmem_trace_stop();
    pthread_barrier_wait(&g_step);
    pthread_barrier_wait(&g_step);
    bool started = rtmem_trace_start();
    pthread_barrier_wait(&g_step);
    pthread_join(worker, NULL);
    say("stop", stopped);
    say("start", started);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "sizes") == 0) return run_sizes();
    if (argc > 2 && strcmp(argv[1], "control") == 0) return run_control(argv[2]);
    if (argc > 1 && strcmp(argv[1], "pause-threads") == 0) return run_pause_threads();
    fprintf(stderr, "usage: sampled_subject sizes | control DUMP_PATH | pause-threads\n");
    return 2;
}
