// A synthetic trace generator implementing event_source, with sites whose behaviour (and so
// whose correct classification and capacity) is known by construction.
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "rtmem/analyze/event.hpp"

namespace rtmem::testing {

using analyze::event;
using analyze::op;

class synthetic_trace : public analyze::event_source {
  public:
    synthetic_trace() { stacks_.emplace_back(); }  // stack 0: unknown

    /// A new stack id whose frames are `frames` (innermost first).
    std::uint32_t add_stack(std::vector<std::uint64_t> frames) {
        stacks_.push_back(std::move(frames));
        return static_cast<std::uint32_t>(stacks_.size() - 1);
    }

    /// Appends an allocation and returns its pointer (unique, never reused).
    std::uint64_t alloc(std::uint32_t stack, std::uint64_t size, std::uint32_t thread = 0,
                        op kind = op::malloc) {
        const std::uint64_t p = next_ptr_;
        next_ptr_ += (size + 16) / 16 * 16 + 16;
        push(event{now(), p, 0, size, thread, stack, 0, kind});
        return p;
    }
    void free(std::uint64_t p, std::uint32_t thread = 0, op kind = op::free) {
        push(event{now(), p, 0, 0, thread, 0, 0, kind});
    }
    std::uint64_t realloc(std::uint32_t stack, std::uint64_t old, std::uint64_t size,
                          std::uint32_t thread = 0) {
        const std::uint64_t p = next_ptr_;
        next_ptr_ += (size + 16) / 16 * 16 + 16;
        push(event{now(), p, old, size, thread, stack, 0, op::realloc});
        return p;
    }
    void frame(std::uint32_t thread = 0) { push(event{now(), 0, 0, 0, thread, 0, 0, op::frame}); }
    /// Moves the clock (events are 10 ns apart unless set).
    void set_time(std::uint64_t t) { time_ = t; }

    bool next(event& e) override {
        if (pos_ >= events_.size()) return false;
        e = events_[pos_++];
        return true;
    }
    void rewind() override { pos_ = 0; }
    [[nodiscard]] std::span<const std::uint64_t> stack(std::uint32_t id) const override {
        return id < stacks_.size() ? std::span<const std::uint64_t>(stacks_[id])
                                   : std::span<const std::uint64_t>();
    }
    [[nodiscard]] std::size_t stack_count() const override { return stacks_.size(); }
    [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }

  private:
    std::uint64_t now() {
        time_ += 10;
        return time_;
    }
    void push(const event& e) { events_.push_back(e); }

    std::vector<event> events_;
    std::vector<std::vector<std::uint64_t>> stacks_;
    std::size_t pos_ = 0;
    std::uint64_t time_ = 0;
    std::uint64_t next_ptr_ = 0x10000;
};

/// The mixed trace of the classifier tests: one site of each kind, interleaved over 400 ticks
/// of 100 µs, on two threads. Known answers are in the members below.
struct mixed_trace {
    synthetic_trace trace;
    std::uint32_t stack_site, linear_site, linear_bad_site, pool_site, long_lived_site, random_site,
        periodic_site;
    static constexpr std::uint64_t pool_capacity = 200;  // live count held steady at 200
    static constexpr std::uint64_t pool_block = 48;
    /// The periodic burst: 8 blocks of these sizes each tick, then freed together.
    static constexpr std::uint64_t burst[8] = {64, 100, 128, 200, 256, 300, 400, 512};
    static constexpr std::uint64_t burst_bump = 64 + 112 + 128 + 208 + 256 + 304 + 400 + 512;

    explicit mixed_trace(unsigned seed = 1, int ticks = 400) {
        stack_site = trace.add_stack({0x401000, 0x402000});
        linear_site = trace.add_stack({0x411000, 0x412000});
        linear_bad_site = trace.add_stack({0x421000, 0x422000});
        pool_site = trace.add_stack({0x431000, 0x432000});
        long_lived_site = trace.add_stack({0x441000, 0x442000});
        random_site = trace.add_stack({0x451000, 0x452000});
        periodic_site = trace.add_stack({0x461000, 0x462000});
        std::mt19937_64 rng(seed);
        auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
            return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
        };
        auto take_random = [&](std::vector<std::uint64_t>& v) {
            const std::size_t i = uniform(0, v.size() - 1);
            const std::uint64_t p = v[i];
            v[i] = v.back();
            v.pop_back();
            return p;
        };

        std::vector<std::uint64_t> stacks[2], pool, random_live, long_lived;
        for (std::uint32_t t = 0; t < 2; ++t) stacks[t].push_back(trace.alloc(stack_site, 32, t));
        for (std::uint64_t i = 0; i < pool_capacity; ++i)
            pool.push_back(trace.alloc(pool_site, uniform(40, 48)));
        for (int i = 0; i < 50; ++i)
            long_lived.push_back(trace.alloc(long_lived_site, uniform(16, 4000)));

        for (int tick = 0; tick < ticks; ++tick) {
            trace.set_time(1'000'000 + static_cast<std::uint64_t>(tick) * 100'000);
            std::uint64_t burst_ptrs[8];
            for (int i = 0; i < 8; ++i) burst_ptrs[i] = trace.alloc(periodic_site, burst[i]);
            for (std::uint64_t p : burst_ptrs) trace.free(p);  // FIFO, drains every tick

            for (std::uint32_t t = 0; t < 2; ++t) {  // two threads, LIFO each, interleaved
                for (int i = 0; i < 10; ++i) {
                    auto& s = stacks[t];
                    if (s.size() > 1 && (s.size() >= 64 || uniform(0, 99) < 45)) {
                        trace.free(s.back(), t);
                        s.pop_back();
                    } else {
                        s.push_back(trace.alloc(stack_site, uniform(16, 2000), t));
                    }
                }
            }
            if (uniform(0, 2) == 0) {  // irregular bulk: allocate 10..50, free all in order
                std::vector<std::uint64_t> blocks;
                const std::uint64_t n = uniform(10, 50);
                for (std::uint64_t i = 0; i < n; ++i)
                    blocks.push_back(trace.alloc(linear_site, uniform(16, 256)));
                for (std::uint64_t p : blocks) trace.free(p);
            }
            if (uniform(0, 1) == 0) {  // bulk freed, but big blocks freed early: "linear bad"
                std::vector<std::uint64_t> smalls{trace.alloc(linear_bad_site, 16)};
                for (int i = 0; i < 4; ++i) trace.free(trace.alloc(linear_bad_site, 4096));
                for (int i = 0; i < 20; ++i) smalls.push_back(trace.alloc(linear_bad_site, 16));
                for (std::uint64_t p : smalls) trace.free(p);
            }
            for (int i = 0; i < 10; ++i) {  // pool churn at a constant live count
                trace.free(take_random(pool));
                pool.push_back(trace.alloc(pool_site, uniform(40, 48)));
            }
            for (int i = 0; i < 6; ++i) {  // random sizes, random order
                if (!random_live.empty() && (random_live.size() >= 100 || uniform(0, 1) == 0)) {
                    trace.free(take_random(random_live));
                } else {
                    random_live.push_back(trace.alloc(random_site, uniform(16, 8192)));
                }
            }
        }
        trace.set_time(1'000'000 + static_cast<std::uint64_t>(ticks) * 100'000);
        for (std::uint32_t t = 0; t < 2; ++t) {
            while (!stacks[t].empty()) {
                trace.free(stacks[t].back(), t);
                stacks[t].pop_back();
            }
        }
        while (!pool.empty()) trace.free(take_random(pool));
        while (!random_live.empty()) trace.free(take_random(random_live));
        // long-lived blocks are never freed
    }
};

/// A trace with frame markers: a per-frame site whose blocks die in the next frame
/// (frame_allocator<2>), a site whose blocks live ~10 frames (general) and a long-lived one.
struct frame_trace {
    synthetic_trace trace;
    std::uint32_t per_frame_site, slow_site, long_lived_site;
    static constexpr std::uint64_t blocks_per_frame = 10, block_size = 1000;
    static constexpr std::uint64_t bytes_per_frame = blocks_per_frame * 1008;

    explicit frame_trace(unsigned seed = 2, int frames = 60) {
        per_frame_site = trace.add_stack({0x501000, 0x502000});
        slow_site = trace.add_stack({0x511000, 0x512000});
        long_lived_site = trace.add_stack({0x521000, 0x522000});
        std::mt19937_64 rng(seed);
        std::vector<std::uint64_t> keep;
        for (int i = 0; i < 20; ++i) keep.push_back(trace.alloc(long_lived_site, 128));
        std::vector<std::uint64_t> previous, slow;
        std::vector<int> slow_age;
        for (int f = 0; f < frames; ++f) {
            trace.set_time(1'000'000 + static_cast<std::uint64_t>(f) * 16'000'000);
            trace.frame();
            std::vector<std::uint64_t> current;
            for (std::uint64_t i = 0; i < blocks_per_frame; ++i) {
                current.push_back(trace.alloc(per_frame_site, block_size, 0, op::new_array));
                if (i == 4) {  // half of last frame's blocks die early in this frame
                    for (std::size_t k = 0; k < previous.size() / 2; ++k)
                        trace.free(previous[k], 0, op::delete_array);
                }
            }
            for (std::size_t k = previous.size() / 2; k < previous.size(); ++k)
                trace.free(previous[k], 0, op::delete_array);
            previous = current;
            for (int i = 0; i < 3; ++i) {
                slow.push_back(trace.alloc(
                    slow_site, 64 + 64 * std::uniform_int_distribution<std::uint64_t>(0, 30)(rng),
                    0, op::new_scalar));
                slow_age.push_back(f);
            }
            for (std::size_t k = 0; k < slow.size();) {
                if (f - slow_age[k] >= 10) {
                    trace.free(slow[k], 0, op::delete_scalar);
                    slow[k] = slow.back();
                    slow.pop_back();
                    slow_age[k] = slow_age.back();
                    slow_age.pop_back();
                } else {
                    ++k;
                }
            }
        }
        trace.frame();
        for (std::uint64_t p : previous) trace.free(p, 0, op::delete_array);
        for (std::uint64_t p : slow) trace.free(p, 0, op::delete_scalar);
    }
};

}  // namespace rtmem::testing
