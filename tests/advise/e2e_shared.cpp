// A program whose messages are allocated by a producer thread and freed by a consumer thread
// in random order: recorded, `rtmem advise` must recommend rt_heap for make_message.
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

std::mutex mutex;
std::condition_variable ready, space;
std::deque<char*> queue;
constexpr int messages = 20000;
// Bounded, so allocations and frees interleave however the threads are scheduled (unbounded,
// a producer that ran ahead made every free come after every allocation: a bulk, "linear" site).
constexpr std::size_t queue_limit = 32;

[[gnu::noinline]] char* make_message(std::mt19937& rng) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(16, 4096)(rng);
    auto* p = static_cast<char*>(std::malloc(size));
    if (p != nullptr) std::memset(p, 'm', size);
    return p;
}

void produce() {
    std::mt19937 rng(1);
    for (int i = 0; i < messages; ++i) {
        char* m = make_message(rng);
        std::unique_lock lock(mutex);
        space.wait(lock, [] { return queue.size() < queue_limit; });
        queue.push_back(m);
        ready.notify_one();
    }
}

long consume() {
    std::mt19937 rng(2);
    std::vector<char*> held;  // freed in random order, so no allocator pattern but "general"
    long sum = 0;
    for (int i = 0; i < messages; ++i) {
        std::unique_lock lock(mutex);
        ready.wait(lock, [] { return !queue.empty(); });
        held.push_back(queue.front());
        queue.pop_front();
        space.notify_one();
        lock.unlock();
        sum += held.back() != nullptr ? held.back()[0] : 0;
        if (held.size() > 64) {
            const std::size_t k =
                std::uniform_int_distribution<std::size_t>(0, held.size() - 1)(rng);
            std::free(held[k]);
            held[k] = held.back();
            held.pop_back();
        }
    }
    for (char* p : held) std::free(p);
    return sum;
}

}  // namespace

int main() {
    long sum = 0;
    std::thread consumer([&] { sum = consume(); });
    std::thread producer(produce);
    producer.join();
    consumer.join();
    std::printf("%ld\n", sum);
    return 0;
}
