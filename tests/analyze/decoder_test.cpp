// The decoder: what each event means (which handler call, with which live block), whatever
// the analysis on top.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rtmem/analyze/decoder.hpp"

namespace {

using namespace rtmem::analyze;

class vector_source final : public event_source {
  public:
    explicit vector_source(std::vector<event> events) : events_(std::move(events)) {}
    bool next(event& e) override {
        if (pos_ == events_.size()) return false;
        e = events_[pos_++];
        return true;
    }
    void rewind() override { pos_ = 0; }
    [[nodiscard]] std::span<const std::uint64_t> stack(std::uint32_t) const override { return {}; }
    [[nodiscard]] std::size_t stack_count() const override { return 0; }
    [[nodiscard]] std::uint64_t last_duration_ns() const noexcept override { return 7; }

  private:
    std::vector<event> events_;
    std::size_t pos_ = 0;
};

event ev(op kind, std::uint64_t ptr, std::uint64_t size, std::uint64_t old_ptr = 0,
         std::uint32_t thread = 0) {
    event e;
    e.kind = kind;
    e.ptr = ptr;
    e.size = size;
    e.old_ptr = old_ptr;
    e.thread = thread;
    e.stack = 3;
    return e;
}

// Writes one word per call, with the sizes of the blocks involved.
struct log_handler : decode_handler {
    std::vector<std::string> calls;
    void on_thread(std::uint32_t t) { calls.push_back("thread " + std::to_string(t)); }
    void on_frame(const event&) { calls.push_back("frame"); }
    void on_allocation(const event&, live_block& b, std::uint64_t ns) {
        calls.push_back("alloc " + std::to_string(b.size) + " seq " + std::to_string(b.seq) +
                        " ns " + std::to_string(ns));
    }
    void on_failed(const event&, std::uint64_t) { calls.push_back("failed"); }
    void on_free(const event& e, const live_block& b, std::uint64_t) {
        calls.push_back("free " + std::to_string(b.size) + (b.thread != e.thread ? " cross" : ""));
    }
    void on_unknown_free(const event&, std::uint64_t ptr) {
        calls.push_back("unknown " + std::to_string(ptr));
    }
    void on_realloc(const event&, const live_block* old, live_block* fresh, std::uint64_t) {
        calls.push_back("realloc " + (old ? std::to_string(old->size) : std::string("-")) + " -> " +
                        (fresh ? std::to_string(fresh->size) : std::string("-")));
    }
};

TEST(decoder, every_event_kind_becomes_one_call_with_its_block) {
    vector_source src({ev(op::malloc, 0x10, 8), ev(op::new_scalar, 0x20, 16, 0, 1),
                       ev(op::frame, 0, 0), ev(op::realloc, 0x30, 32, 0x10),
                       ev(op::realloc, 0, 0, 0x30), ev(op::free, 0x999, 0), ev(op::free, 0, 0),
                       ev(op::malloc, 0, 64), ev(op::delete_scalar, 0x20, 0),
                       ev(op::realloc, 0x40, 4, 0x777)});
    decoder d;
    log_handler h;
    d.run(src, h);
    const std::vector<std::string> expected = {
        "thread 0",        "alloc 8 seq 0 ns 7", "thread 1", "alloc 16 seq 1 ns 7",
        "frame",           "realloc 8 -> 32",    "realloc 32 -> -", "unknown 2457",
        "failed",          "free 16 cross",      "unknown 1911",   "realloc - -> 4"};
    EXPECT_EQ(h.calls, expected);
    EXPECT_EQ(d.allocations(), 4u);
    EXPECT_EQ(d.frames(), 1u);
    ASSERT_EQ(d.live().size(), 1u);  // the block of the last realloc
    d.live().for_each([](const live_block& b) {
        EXPECT_EQ(b.ptr, 0x40u);
        EXPECT_EQ(b.frame, 1u);
    });
}

TEST(decoder, handlers_without_on_thread_still_see_every_event) {
    struct count : decode_handler {
        int events = 0, after = 0;
        void on_event(const event&, std::uint64_t) { ++events; }
        void after_event(const event&) { ++after; }
    } h;
    vector_source src({ev(op::malloc, 0x10, 8, 0, 5), ev(op::free, 0x10, 0, 0, 6)});
    decoder d;
    d.run(src, h);
    EXPECT_EQ(h.events, 2);
    EXPECT_EQ(h.after, 2);
    EXPECT_EQ(d.live().size(), 0u);
}

}  // namespace
