#include "rtmem/diag/tagged_new.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "rtmem/core/malloc_allocator.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::memory_tag;
using rtmem::tracked;
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

struct counted {
    static inline int alive = 0;
    static inline int constructed = 0;
    static inline int throw_at = -1;  // the constructor with this sequence number throws
    int value;
    explicit counted(int v = 7) : value(v) {
        if (constructed++ == throw_at) throw std::runtime_error("constructor failed");
        ++alive;
    }
    counted(const counted&) = delete;
    ~counted() { --alive; }
};

struct alignas(64) wide {
    double lanes[8] = {};
};

struct base {
    virtual ~base() = default;
    int b = 1;
};
struct other {
    virtual ~other() = default;
    int o = 2;
};
struct derived : other, base {
    std::string name = "derived";
};

// Placement new[] with a tag does not compile: arrays go through new_array (the post's advice).
template <class M>
concept has_tagged_array_new = requires(M m) { new (m) wide[2]; };
static_assert(!has_tagged_array_new<memory_tag<rtmem::malloc_allocator>>);
static_assert(requires(memory_tag<rtmem::malloc_allocator> m) { new (m) wide(); });

class TaggedNew : public ::testing::Test {
  protected:
    void SetUp() override {
        counted::alive = counted::constructed = 0;
        counted::throw_at = -1;
        heap.set_leak_sink([this](std::string_view text) { leaks = text; });
    }
    rtmem::malloc_allocator upstream;
    tracked<rtmem::malloc_allocator> heap{upstream};
    std::string leaks;
    const rtmem::tag audio{"test/audio"};
    const rtmem::tag render{"test/render"};
};

TEST_F(TaggedNew, NewChargesTheTagAndDestroyGivesItBack) {
    const memory_tag in_audio{heap, audio};
    auto* c = new (in_audio) counted(42);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->value, 42);
    EXPECT_EQ(counted::alive, 1);
    EXPECT_GE(heap.stats(audio).live_bytes, sizeof(counted));
    EXPECT_EQ(heap.stats(audio).allocations, 1u);
    EXPECT_EQ(heap.stats(render).live_bytes, 0u);
    rtmem::destroy(c, in_audio);
    EXPECT_EQ(counted::alive, 0);
    EXPECT_EQ(heap.stats(audio).live_bytes, 0u);
    EXPECT_EQ(heap.stats(audio).deallocations, 1u);
    rtmem::destroy(static_cast<counted*>(nullptr), in_audio);  // does nothing
}

TEST_F(TaggedNew, OverAlignedTypesUseTheAlignedOverload) {
    const memory_tag in_render{heap, render};
    auto* w = new (in_render) wide();
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 64, 0u);
    rtmem::destroy(w, in_render);
    EXPECT_EQ(heap.stats(render).live_bytes, 0u);
}

TEST_F(TaggedNew, DestroyThroughAPolymorphicBaseFindsTheBlock) {
    const memory_tag in_render{heap, render};
    base* b = new (in_render) derived();
    ASSERT_NE(static_cast<void*>(b), dynamic_cast<void*>(b));  // base is not at offset 0
    rtmem::destroy(b, in_render);
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST_F(TaggedNew, ArraysAreBuiltElementByElementBehindACount) {
    const memory_tag in_audio{heap, audio};
    counted* voices = rtmem::new_array<counted>(in_audio, 16, 5);
    ASSERT_NE(voices, nullptr);
    EXPECT_EQ(rtmem::array_size(voices), 16u);
    EXPECT_EQ(counted::alive, 16);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(voices[i].value, 5);
    EXPECT_GE(heap.stats(audio).live_bytes, 16 * sizeof(counted));
    rtmem::destroy_array(voices, in_audio);
    EXPECT_EQ(counted::alive, 0);
    EXPECT_EQ(heap.stats(audio).live_bytes, 0u);

    wide* lanes = rtmem::new_array<wide>(in_audio, 3);
    ASSERT_NE(lanes, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lanes) % 64, 0u);
    rtmem::destroy_array(lanes, in_audio);
    counted* none = rtmem::new_array<counted>(in_audio, 0);
    ASSERT_NE(none, nullptr);
    EXPECT_EQ(rtmem::array_size(none), 0u);
    rtmem::destroy_array(none, in_audio);
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST_F(TaggedNew, AThrowingConstructorFreesTheMemory) {
    const memory_tag in_audio{heap, audio};
    counted::throw_at = 0;
    EXPECT_THROW((void)new (in_audio) counted(1), std::runtime_error);  // placement delete runs
    EXPECT_EQ(heap.stats().live_count, 0u);
    counted::constructed = 0;
    counted::throw_at = 3;
    EXPECT_THROW((void)rtmem::new_array<counted>(in_audio, 8), std::runtime_error);
    EXPECT_EQ(counted::alive, 0);  // the three built were destroyed
    EXPECT_EQ(heap.stats().live_count, 0u);
    EXPECT_EQ(heap.stats(audio).live_bytes, 0u);
}

TEST_F(TaggedNew, BudgetDenialYieldsNullAndConstructsNothing) {
    heap.set_budget(audio, 64);
    heap.set_budget_callback([](const rtmem::budget_event&) { return rtmem::budget_action::deny; });
    const memory_tag in_audio{heap, audio};
    counted* c = rtmem::new_array<counted>(in_audio, 100);
    EXPECT_EQ(c, nullptr);
    EXPECT_EQ(counted::constructed, 0);
    auto* w = new (in_audio) wide();
    EXPECT_EQ(w, nullptr);
}

TEST_F(TaggedNew, DestroyUnderTheWrongTagIsReportedAndFreesNothing) {
    violation_recorder rec;
    const memory_tag in_audio{heap, audio};
    const memory_tag in_render{heap, render};
    auto* c = new (in_audio) counted();
    rtmem::destroy(c, in_render);
    ASSERT_EQ(rec.count(violation_kind::bad_argument), 1u);
    EXPECT_NE(rec.last().message.find("under tag 'test/render'"), std::string::npos);
    EXPECT_NE(rec.last().message.find("allocated under 'test/audio'"), std::string::npos);
    EXPECT_EQ(counted::alive, 1);  // not destroyed
    EXPECT_EQ(heap.stats().live_count, 1u);
    rtmem::destroy(c, in_audio);
    EXPECT_EQ(heap.stats().live_count, 0u);
    EXPECT_EQ(rec.count(), 1u);
}

TEST_F(TaggedNew, MixingObjectAndArrayFormsAndDoubleDestroyAreReported) {
    violation_recorder rec;
    const memory_tag in_audio{heap, audio};
    counted* arr = rtmem::new_array<counted>(in_audio, 2);
    rtmem::destroy(arr, in_audio);
    ASSERT_EQ(rec.count(violation_kind::bad_argument), 1u);
    EXPECT_NE(rec.last().message.find("use destroy_array"), std::string::npos);
    auto* one = new (in_audio) counted();
    rtmem::destroy_array(one, in_audio);
    ASSERT_EQ(rec.count(violation_kind::bad_argument), 2u);
    EXPECT_NE(rec.last().message.find("use destroy"), std::string::npos);
    rtmem::destroy_array(arr, in_audio);
    rtmem::destroy(one, in_audio);
    EXPECT_EQ(counted::alive, 0);
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST_F(TaggedNew, ALeakNamesTheTagAndTheNewExpression) {
    {
        tracked<rtmem::malloc_allocator> local{upstream};
        std::string report;
        local.set_leak_sink([&](std::string_view text) { report = text; });
        const memory_tag in_audio{local, audio};
        auto* c = new (in_audio) counted(3);  // the line the leak report must name
        const int line = __LINE__ - 1;
        (void)c;
        const std::string text = local.leak_report();
        EXPECT_NE(text.find("test/audio"), std::string::npos) << text;
        EXPECT_NE(text.find("tagged_new_test.cpp:" + std::to_string(line)), std::string::npos)
            << text;
        rtmem::destroy(c, in_audio);
    }
}

}  // namespace
