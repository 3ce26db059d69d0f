// A program for the tracer tests: `trace_subject MODE` exercises one hard case of recording.
// Allocations the tests look for use distinctive sizes (e.g. 12345) so they can be found in
// the trace exactly. Output is deterministic so native and traced runs can be compared.
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

// Keeps the compiler from removing allocations whose results are otherwise unused.
void* volatile sink;

// malloc from a static constructor, before main.
struct static_allocator {
    static_allocator() { sink = std::malloc(9191); }
} static_instance;

struct tls_object {
    void* p = nullptr;
    ~tls_object() {
        std::free(p);
        sink = std::malloc(9292);  // allocation inside a thread-local destructor
        std::free(sink);
    }
};
thread_local tls_object tls;

struct alignas(64) aligned_thing {
    char bytes[64];
};

__attribute__((noinline)) int run_basic() {
    void* a = std::malloc(12345);
    void* b = std::calloc(3, 4115);  // 12345
    void* c = std::realloc(a, 23456);
    void* d = nullptr;
    if (posix_memalign(&d, 64, 34567) != 0) return 1;
    void* e = aligned_alloc(128, 128 * 100);
    void* f = memalign(32, 45678);
    void* g = valloc(5678);
    void* h = reallocarray(nullptr, 10, 567);
    std::printf("usable %d\n", malloc_usable_size(c) >= 23456 ? 1 : 0);
    auto* i = new int(7);
    auto* j = new int[321];
    auto* k = new aligned_thing;
    auto* l = new aligned_thing[3];
    auto* m = new (std::nothrow) char[4321];
    std::free(b);
    std::free(c);
    std::free(d);
    std::free(e);
    std::free(f);
    std::free(g);
    std::free(h);
    delete i;
    delete[] j;
    delete k;
    delete[] l;
    delete[] m;
    std::puts("basic done");
    return 0;
}

int run_threads() {
    constexpr int producers = 4, per_thread = 5000;
    std::mutex mu;
    std::vector<void*> handed_over;
    std::vector<std::thread> threads;
    for (int t = 0; t < producers; ++t) {
        threads.emplace_back([&] {
            for (int n = 0; n < per_thread; ++n) {
                void* p = std::malloc(777);
                std::lock_guard<std::mutex> lock(mu);
                handed_over.push_back(p);
            }
        });
    }
    for (auto& t : threads) t.join();
    for (void* p : handed_over) std::free(p);  // every one a cross-thread free
    std::printf("threads done %zu\n", handed_over.size());
    return 0;
}

int run_fork() {
    sink = std::malloc(4242);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        sink = std::malloc(5151);
        std::puts("child done");
        std::exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    sink = std::malloc(6161);
    std::printf("parent done %d\n", WEXITSTATUS(status));
    return 0;
}

int run_exec(const char* self) {
    sink = std::malloc(3131);
    std::fflush(stdout);
    execl(self, self, "exec-child", static_cast<char*>(nullptr));
    return 1;
}

// vfork shares the parent's memory until the child execs: the tracer's exec hook runs in the
// child but must not end the parent's trace (gcc's driver starts cc1 this way).
int run_vfork(const char* self) {
    sink = std::malloc(3636);
    std::fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0) {
        execl(self, self, "exec-child", static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    sink = std::malloc(3737);
    std::printf("vfork done %d\n", WEXITSTATUS(status));
    return 0;
}

int run_spawn(const char* self) {
    sink = std::malloc(3434);
    pid_t pid = 0;
    char* argv[] = {const_cast<char*>(self), const_cast<char*>("spawn-child"), nullptr};
    std::fflush(stdout);
    if (posix_spawn(&pid, self, nullptr, nullptr, argv, environ) != 0) return 1;
    int status = 0;
    waitpid(pid, &status, 0);
    sink = std::malloc(3535);
    std::printf("spawn done %d\n", WEXITSTATUS(status));
    return 0;
}

int run_dlopen(const char* lib) {
    void* h = dlopen(lib, RTLD_NOW);
    if (h == nullptr) {
        std::printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    auto fn = reinterpret_cast<int (*)(int)>(dlsym(h, "trace_plugin_work"));
    int r = fn(3);
    dlclose(h);
    std::printf("plugin %d\n", r);
    return 0;
}

int run_exceptions() {
    int caught = 0;
    for (int n = 0; n < 100; ++n) {
        try {
            throw std::runtime_error("error number " + std::to_string(n) +
                                     " with a long enough message to allocate");
        } catch (const std::exception&) {
            ++caught;
        }
    }
    try {
        sink = new char[static_cast<std::size_t>(1) << 62];
    } catch (const std::bad_alloc&) {
        ++caught;
    }
    std::printf("caught %d\n", caught);
    return 0;
}

std::atomic<int> ticks{0};
void on_alarm(int) {
    ticks.fetch_add(1, std::memory_order_relaxed);
}

int run_signals() {
    struct sigaction sa {};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the tracer's writes see EINTR
    sigaction(SIGALRM, &sa, nullptr);
    itimerval it{{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, nullptr);
    for (int n = 0; n < 100000; ++n) {
        void* p = std::malloc(1000 + static_cast<std::size_t>(n % 7));
        std::free(p);
    }
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    std::printf("signals done %d\n", ticks.load() > 0 ? 1 : 0);
    return 0;
}

// What librtmem's rtmem_trace_frame() does: find the tracer's hook and call it.
int run_frames() {
    auto hook = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "rtmem_trace_frame_hook"));
    for (int frame = 0; frame < 3; ++frame) {
        sink = std::malloc(6060);
        std::free(sink);
        if (hook != nullptr) hook();
    }
    std::puts("frames done");
    return 0;
}

int run_tls() {
    std::thread t([] { tls.p = std::malloc(8181); });
    t.join();
    std::puts("tls done");
    return 0;
}

// The same malloc call site reached through different callers with identical frame layouts,
// and through recursion of different depths, interleaved: the tracer's stack cache must tell
// every chain apart.
__attribute__((noinline)) void chain_leaf(std::size_t size) {
    sink = std::malloc(size);
    std::free(sink);
}
__attribute__((noinline)) void chain_from_first(std::size_t size) {
    chain_leaf(size);
}
__attribute__((noinline)) void chain_from_second(std::size_t size) {
    chain_leaf(size);
}
__attribute__((noinline)) void chain_recurse(int depth) {
    if (depth == 0) {
        chain_leaf(4545);
        return;
    }
    chain_recurse(depth - 1);
}

int run_chains() {
    for (int i = 0; i < 3000; ++i) {
        chain_from_first(4343);
        chain_from_second(4343);
        if (i % 3 == 0) chain_from_first(4343);
        chain_recurse(i % 4);
    }
    // Long runs: the cache hits within a run and must notice when the run changes.
    for (int run = 0; run < 4; ++run) {
        for (int i = 0; i < 2000; ++i) {
            if (run % 2 == 0) {
                chain_from_first(4747);
            } else {
                chain_from_second(4747);
            }
        }
    }
    std::printf("chains done\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: trace_subject MODE\n");
        return 2;
    }
    std::string mode = argv[1];
    if (mode == "basic") return run_basic();
    if (mode == "threads") return run_threads();
    if (mode == "fork") return run_fork();
    if (mode == "exec") return run_exec(argv[0]);
    if (mode == "exec-child" || mode == "spawn-child") {
        sink = std::malloc(mode == "exec-child" ? 3232 : 3333);
        std::printf("%s done\n", mode.c_str());
        return 0;
    }
    if (mode == "spawn") return run_spawn(argv[0]);
    if (mode == "vfork") return run_vfork(argv[0]);
    if (mode == "dlopen") return run_dlopen(argc > 2 ? argv[2] : "");
    if (mode == "exceptions") return run_exceptions();
    if (mode == "signals") return run_signals();
    if (mode == "tls") return run_tls();
    if (mode == "frames") return run_frames();
    if (mode == "chains") return run_chains();
    if (mode == "exit-while-busy") {  // exit() while four threads still allocate
        for (int t = 0; t < 4; ++t) {
            std::thread([] {
                for (;;) {
                    void* p = std::malloc(7171);
                    sink = p;
                    std::free(p);
                }
            }).detach();
        }
        usleep(200000);
        std::printf("exiting\n");
        std::fflush(stdout);
        std::exit(0);
    }
    if (mode == "kill-me") {  // the test kills this process with SIGKILL once it is ready
        static void* blocks[100];
        for (auto& b : blocks) b = std::malloc(6161);
        std::printf("ready %d\n", static_cast<int>(getpid()));
        std::fflush(stdout);
        sleep(30);
        return 1;
    }
    sink = std::malloc(1111);  // the ends below must still leave this in a readable trace
    std::puts("ending");
    std::fflush(stdout);
    if (mode == "exit") std::exit(3);
    if (mode == "_exit") _exit(4);
    if (mode == "abort") std::abort();
    if (mode == "sigterm") raise(SIGTERM);
    if (mode == "sigint") raise(SIGINT);
    if (mode == "segv") raise(SIGSEGV);
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
}
