// The threaded stress run shared by the locked<> tests: threads allocate blocks of random sizes
// from one shared allocator, fill them with a pattern naming the block, hand most of them to
// other threads through a mailbox, and the receiving thread verifies the contents and frees the
// block (a cross-thread free). Run under TSan in CI (label `threads`).
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "rtmem/core/allocator.hpp"

namespace rtmem::testing {

struct stress_options {
    int threads = 8;
    int blocks_per_thread = 4000;
    std::size_t min_size = 8;  ///< >= 8: the block's id is written in its first bytes
    std::size_t max_size = 512;
    std::size_t align = 8;
};

struct stress_result {
    std::size_t allocated = 0, freed_elsewhere = 0, exhausted = 0, corrupted = 0;
};

template <allocator A>
stress_result run_stress(A& shared, const stress_options& o) {
    struct block {
        unsigned char* p;
        std::size_t size;
        std::uint64_t id;
    };
    std::mutex box_lock;
    std::vector<block> mailbox;
    std::atomic<std::size_t> allocated{0}, foreign_frees{0}, exhausted{0}, corrupted{0};

    auto fill = [](const block& b) {
        for (std::size_t i = 0; i < b.size; ++i)
            b.p[i] = static_cast<unsigned char>((b.id * 131 + i * 7) >> 1);
    };
    auto intact = [](const block& b) {
        for (std::size_t i = 0; i < b.size; ++i)
            if (b.p[i] != static_cast<unsigned char>((b.id * 131 + i * 7) >> 1)) return false;
        return true;
    };
    auto release = [&](const block& b) {
        if (!intact(b)) corrupted.fetch_add(1);
        shared.deallocate(b.p, b.size, o.align);
    };

    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
        threads.emplace_back([&, t] {
            std::uint64_t rng = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(t + 1);
            auto next = [&rng] {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                return rng;
            };
            std::vector<block> own;
            for (int i = 0; i < o.blocks_per_thread; ++i) {
                const auto size =
                    static_cast<std::size_t>(o.min_size + next() % (o.max_size - o.min_size + 1));
                auto* p = static_cast<unsigned char*>(shared.allocate(size, o.align));
                if (p == nullptr) {
                    exhausted.fetch_add(1);
                } else {
                    allocated.fetch_add(1);
                    const block b{p, size,
                                  (static_cast<std::uint64_t>(t) << 32) | static_cast<unsigned>(i)};
                    fill(b);
                    if (next() % 4 == 0) {
                        own.push_back(b);  // freed later by this thread
                    } else {
                        std::lock_guard guard(box_lock);
                        mailbox.push_back(b);
                    }
                }
                // Take a block some other thread allocated, verify it, free it here.
                if (next() % 2 == 0) {
                    block got{};
                    {
                        std::lock_guard guard(box_lock);
                        if (!mailbox.empty()) {
                            const auto k = static_cast<std::size_t>(next() % mailbox.size());
                            got = mailbox[k];
                            mailbox[k] = mailbox.back();
                            mailbox.pop_back();
                        }
                    }
                    if (got.p != nullptr) {
                        if ((got.id >> 32) != static_cast<std::uint64_t>(t))
                            foreign_frees.fetch_add(1);
                        release(got);
                    }
                }
                if (own.size() > 64) {
                    release(own.front());
                    own.erase(own.begin());
                }
            }
            for (const auto& b : own) release(b);
        });
    }
    for (auto& th : threads) th.join();
    for (const auto& b : mailbox) release(b);
    return {allocated.load(), foreign_frees.load(), exhausted.load(), corrupted.load()};
}

}  // namespace rtmem::testing
