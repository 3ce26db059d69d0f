// Cross-thread frees and thread churn through plain malloc/free and new/delete: producers
// allocate and fill blocks, consumers on other threads check and free them; then 300 short
// threads each leave blocks behind for main to free (their heaps are handed back and adopted).
// Prints checksums only, so native and `rtmem run` outputs compare equal.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct mailbox {
    std::mutex m;
    std::vector<unsigned char*> blocks;
};

std::uint64_t next(std::uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

}  // namespace

int main() {
    constexpr int pairs = 4, per_thread = 60000;
    std::vector<mailbox> boxes(pairs);
    std::vector<std::uint64_t> sums(pairs, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < pairs; ++t) {
        threads.emplace_back([&, t] {  // producer t -> box t
            std::uint64_t s = 88172645463325252ull + static_cast<std::uint64_t>(t);
            for (int i = 0; i < per_thread; ++i) {
                std::size_t n = 1 + next(s) % (i % 100 == 0 ? 20000 : 300);
                auto* b = static_cast<unsigned char*>(std::malloc(n + 8));
                std::memcpy(b, &n, 8);
                std::memset(b + 8, static_cast<int>(n & 0xff), n);
                std::lock_guard g(boxes[static_cast<std::size_t>(t)].m);
                boxes[static_cast<std::size_t>(t)].blocks.push_back(b);
            }
        });
        threads.emplace_back([&, t] {  // consumer of box t
            int done = 0;
            std::vector<unsigned char*> got;
            while (done < per_thread) {
                {
                    std::lock_guard g(boxes[static_cast<std::size_t>(t)].m);
                    got.swap(boxes[static_cast<std::size_t>(t)].blocks);
                }
                for (unsigned char* b : got) {
                    std::size_t n = 0;
                    std::memcpy(&n, b, 8);
                    for (std::size_t k = 0; k < n; ++k) sums[static_cast<std::size_t>(t)] += b[8 + k];
                    auto* keep = new std::string(reinterpret_cast<char*>(b + 8), n % 64);
                    std::free(b);
                    delete keep;
                    ++done;
                }
                got.clear();
                if (done < per_thread) std::this_thread::yield();
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < pairs; ++t) std::printf("pair %d: checksum %llu\n", t, static_cast<unsigned long long>(sums[static_cast<std::size_t>(t)]));

    // Churn: more threads over time than rt_heap's thread heaps; main frees what they leave.
    std::vector<std::unique_ptr<int[]>> left;
    std::mutex m;
    for (int round = 0; round < 30; ++round) {
        std::vector<std::thread> batch;
        for (int i = 0; i < 10; ++i)
            batch.emplace_back([&, i] {
                std::vector<void*> own;
                for (int k = 0; k < 200; ++k) own.push_back(std::malloc(static_cast<std::size_t>(16 + k)));
                for (void* p : own) std::free(p);
                std::unique_ptr<int[]> keep(new int[64 + i]);
                keep[0] = i;
                std::lock_guard g(m);
                left.push_back(std::move(keep));
            });
        for (auto& th : batch) th.join();
    }
    long total = 0;
    for (auto& p : left) total += p[0];
    left.clear();
    std::printf("churn: %zu threads, sum %ld\n", std::size_t{300}, total);
    return 0;
}
