// One rt_heap shared by a game's threads: a main thread that builds command buffers, an audio
// thread that allocates voice buffers on its own, and a job thread that consumes the command
// buffers and frees them (cross-thread frees: a wait-free push, taken back by the main thread in
// bounded batches). Real-time mode: all memory is committed and prefaulted at start, so no call
// in the frame loop asks the OS for anything; each thread attaches before its loop starts.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "rtmem/alloc/rt_heap.hpp"

namespace {

struct command_buffer {
    std::size_t bytes;
    unsigned frame;
};

}  // namespace

int main() {
    rtmem::rt_heap heap{rtmem::rt_heap_options::real_time_with(std::size_t{32} << 20)};
    if (!heap.ready()) {
        std::fprintf(stderr, "could not commit 32 MiB\n");
        return 1;
    }
    std::mutex queue_lock;
    std::vector<command_buffer*> queue;
    std::atomic<bool> done{false};
    std::atomic<unsigned> consumed{0}, voices{0};

    std::thread jobs([&] {  // frees what the main thread allocated
        heap.attach();
        for (bool finished = false; !finished;) {
            std::vector<command_buffer*> batch;
            {
                std::lock_guard guard(queue_lock);
                batch.swap(queue);
                finished = done.load();  // set after the last push: this batch holds the rest
            }
            for (command_buffer* c : batch) {
                heap.deallocate(c, c->bytes);
                consumed.fetch_add(1, std::memory_order_relaxed);
            }
            std::this_thread::yield();
        }
    });
    std::thread audio([&] {  // allocates and frees its own blocks: no lock, no other thread
        heap.attach();
        for (int block = 0; block < 2000; ++block) {
            auto* voice = static_cast<float*>(heap.allocate(256 * sizeof(float)));
            for (int i = 0; i < 256; ++i) voice[i] = static_cast<float>(i) * 0.5f;
            heap.deallocate(voice, 256 * sizeof(float));
            voices.fetch_add(1, std::memory_order_relaxed);
        }
    });

    heap.attach();
    for (unsigned frame = 0; frame < 600; ++frame) {
        for (unsigned k = 0; k < 20; ++k) {
            const std::size_t bytes = 64 + (frame * 31 + k * 97) % 4000;
            auto* c = static_cast<command_buffer*>(heap.allocate(bytes));
            if (c == nullptr) {
                std::fprintf(stderr, "frame %u: heap exhausted\n", frame);
                return 1;
            }
            std::memset(static_cast<void*>(c), 0, bytes);
            c->bytes = bytes;
            c->frame = frame;
            std::lock_guard guard(queue_lock);
            queue.push_back(c);
        }
    }
    done.store(true);
    audio.join();
    jobs.join();
    heap.collect();  // take back the last blocks the job thread freed into the main heap
    const rtmem::stats s = heap.stats();
    std::printf("command buffers freed by the job thread: %u, audio voices: %u\n", consumed.load(),
                voices.load());
    std::printf("live blocks %zu, used %zu of %zu bytes granted, %zu of %zu segments\n",
                s.live_count, s.used, s.capacity, heap.segments_used(), heap.segment_count());
    std::printf("thread heaps: %u attached, %u left by exited threads (reused by the next)\n",
                heap.threads_attached(), heap.threads_abandoned());
    return heap.check() && s.live_count == 0 && consumed.load() == 12000 ? 0 : 1;
}
