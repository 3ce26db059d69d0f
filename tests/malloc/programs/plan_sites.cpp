// Known allocation sites for the `rtmem run --plan` tests. Each site asks for its own sizes so
// the test tells them apart in the trace:
//   48 bytes (operator new)  make_node      pool; half its blocks freed by another thread
//   100..227 (malloc)        make_text      region; freed in batches, some grown by realloc
//   300 (calloc)             make_keeper    region; one block kept until exit
//   72 (malloc)              shared_buffer  called from buffer_a: planned with 2 frames
//   88 (malloc)              shared_buffer  called from buffer_b: the same frame 0, unplanned
// Then it forks while another thread allocates at the pool site: each child allocates there
// too (a site lock inherited held would hang it).
// Prints a checksum of everything it wrote, identical whatever allocator serves it.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace {

struct node {
    node* next;
    char payload[40];
};
static_assert(sizeof(node) == 48);

std::uint64_t g_sum = 0;
void mix(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) g_sum = (g_sum ^ b[i]) * 1099511628211ull;
}

__attribute__((noinline)) node* make_node(int i) {
    node* n = new node;
    n->next = nullptr;
    std::memset(n->payload, i & 0x7f, sizeof n->payload);
    return n;
}

__attribute__((noinline)) char* make_text(std::size_t size, int i) {
    auto* t = static_cast<char*>(std::malloc(size));
    std::memset(t, 'a' + i % 26, size);
    return t;
}

__attribute__((noinline)) char* make_keeper() {
    auto* k = static_cast<char*>(std::calloc(1, 300));
    k[0] = 1;
    return k;
}

__attribute__((noinline)) void* shared_buffer(std::size_t size) {
    void* p = std::malloc(size);
    std::memset(p, static_cast<int>(size), size);
    return p;
}
__attribute__((noinline)) void* buffer_a() {
    void* p = shared_buffer(72);
    mix(p, 72);
    return p;
}
__attribute__((noinline)) void* buffer_b() {
    void* p = shared_buffer(88);
    mix(p, 88);
    return p;
}

// Frees nodes handed over by the main thread.
struct remote_freer {
    std::mutex m;
    std::condition_variable cv;
    std::vector<node*> queue;
    bool done = false;
    std::uint64_t sum = 0;  // commutative: the order of frees does not matter
    void run() {
        std::unique_lock lock(m);
        for (;;) {
            cv.wait(lock, [&] { return done || !queue.empty(); });
            std::vector<node*> batch;
            batch.swap(queue);
            lock.unlock();
            for (node* n : batch) {
                for (char c : n->payload) sum += static_cast<unsigned char>(c);
                delete n;
            }
            lock.lock();
            if (done && queue.empty()) return;
        }
    }
};

}  // namespace

int main() {
    constexpr int nodes = 20000, texts = 12000, keepers = 3000, buffers = 500;
    remote_freer freer;
    std::thread t([&] { freer.run(); });
    std::vector<node*> mine;
    for (int i = 0; i < nodes; ++i) {
        node* n = make_node(i);
        if (i % 2 == 0) {
            mine.push_back(n);
            continue;
        }
        std::lock_guard lock(freer.m);
        freer.queue.push_back(n);
        freer.cv.notify_one();
    }
    {
        std::lock_guard lock(freer.m);
        freer.done = true;
        freer.cv.notify_one();
    }
    t.join();
    mix(&freer.sum, sizeof freer.sum);
    for (node* n : mine) {
        mix(n->payload, sizeof n->payload);
        delete n;
    }

    std::vector<char*> batch;
    for (int i = 0; i < texts; ++i) {
        const std::size_t size = 100 + static_cast<std::size_t>(i % 128);
        char* s = make_text(size, i);
        if (malloc_usable_size(s) < size) return 3;
        if (i % 1000 == 0) {  // grown past the site's sizes: realloc moves it off the site
            s = static_cast<char*>(std::realloc(s, 5000));
            std::memset(s + size, 'z', 5000 - size);
            mix(s, 5000);
            std::free(s);
            continue;
        }
        batch.push_back(s);
        if (batch.size() == 64) {
            for (char* b : batch) mix(b, 100);
            for (char* b : batch) std::free(b);
            batch.clear();
        }
    }
    for (char* b : batch) std::free(b);

    char* kept = nullptr;
    for (int i = 0; i < keepers; ++i) {
        char* k = make_keeper();
        for (int j = 1; j < 300; ++j)
            if (k[j] != 0) return 4;  // calloc must zero a recycled block
        std::memset(k, i & 0xff, 300);
        if (i == keepers / 2) {
            kept = k;  // this one lives until exit
            continue;
        }
        std::free(k);
    }
    mix(kept, 300);

    for (int i = 0; i < buffers; ++i) {
        void* a = buffer_a();
        void* b = buffer_b();
        std::free(a);
        std::free(b);
    }
    std::atomic<bool> stop{false};
    std::thread churn([&] {
        while (!stop.load()) delete make_node(1);
    });
    for (int i = 0; i < 20; ++i) {
        const pid_t child = fork();
        if (child == 0) {
            for (int k = 0; k < 100; ++k) delete make_node(k);
            _exit(0);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return 5;
    }
    stop = true;
    churn.join();
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(g_sum));
    std::free(kept);
    return 0;
}
