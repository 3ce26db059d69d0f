// tools/format: packed events decode to what was packed (and bad bytes are named), the event
// kinds are named, and the record<->preload contract builds the default file name.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rtmem/format/contract.hpp"
#include "rtmem/format/op.hpp"
#include "rtmem/format/packed.hpp"

namespace {

namespace fmt = rtmem::trace_format;

fmt::raw_event make(std::uint64_t time, fmt::op kind, std::uint64_t ptr, std::uint64_t size,
                    std::uint64_t old_ptr = 0, std::uint32_t duration = 0, std::uint8_t align_log2 = 0,
                    std::uint8_t flags = 0) {
    fmt::raw_event e{};
    e.time = time;
    e.kind = static_cast<std::uint8_t>(kind);
    e.ptr = ptr;
    e.size = size;
    e.old_ptr = old_ptr;
    e.stack = 7;
    e.duration = duration;
    e.align_log2 = align_log2;
    e.flags = flags;
    return e;
}

std::vector<fmt::raw_event> sample() {
    return {make(100, fmt::op::malloc, 0x7f0000001000, 48),
            make(150, fmt::op::realloc, 0x7f0000000800, 4096, 0x7f0000001000, 33, 0,
                 fmt::event_flag::timed),
            make(160, fmt::op::aligned_alloc, 0x7f0000010000, 64, 0, 0, 7),
            make(170, fmt::op::malloc, 0, 1ull << 40, 0, 0, 0, fmt::event_flag::failed),
            make(900, fmt::op::free, 0x7f0000000800, 0)};
}

std::vector<unsigned char> pack(const std::vector<fmt::raw_event>& ev) {
    std::vector<unsigned char> out(ev.size() * fmt::packed::max_event_bytes);
    out.resize(fmt::packed::pack(ev.data(), static_cast<std::uint32_t>(ev.size()), out.data()));
    return out;
}

TEST(packed, unpack_returns_what_pack_wrote) {
    const auto in = sample();
    const auto bytes = pack(in);
    std::vector<fmt::raw_event> out(in.size());
    ASSERT_EQ(fmt::packed::unpack(bytes.data(), bytes.size(), fmt::trace_version, out.data(),
                                  static_cast<std::uint32_t>(out.size())),
              nullptr);
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(std::memcmp(&in[i], &out[i], sizeof in[i]), 0) << "event " << i;
    }
}

TEST(packed, bad_bytes_are_named_not_read_past) {
    const auto in = sample();
    auto bytes = pack(in);
    std::vector<fmt::raw_event> out(in.size());
    const auto n = static_cast<std::uint32_t>(out.size());
    EXPECT_STREQ(fmt::packed::unpack(bytes.data(), bytes.size() - 1, 2, out.data(), n),
                 "packed events end early");
    bytes.push_back(0);
    EXPECT_STREQ(fmt::packed::unpack(bytes.data(), bytes.size(), 2, out.data(), n),
                 "packed events chunk has trailing bytes");
    std::vector<unsigned char> endless(16, 0xff);  // a varint that never ends
    endless[0] = 0;                                  // head: malloc, nothing optional
    EXPECT_STREQ(fmt::packed::unpack(endless.data(), endless.size(), 2, out.data(), 1),
                 "bad varint in packed events");
}

TEST(packed, version_1_always_carries_a_duration) {
    // head malloc, time 5, ptr +16 (zigzag 32), size 8, stack 1, duration 9
    const unsigned char v1[] = {0, 5, 32, 8, 1, 9};
    fmt::raw_event e{};
    ASSERT_EQ(fmt::packed::unpack(v1, sizeof v1, 1, &e, 1), nullptr);
    EXPECT_EQ(e.duration, 9u);
    EXPECT_NE(e.flags & fmt::event_flag::timed, 0);
    EXPECT_STREQ(fmt::packed::unpack(v1, sizeof v1, 2, &e, 1),
                 "packed events chunk has trailing bytes");
}

TEST(op, every_kind_is_named_and_count_closes_the_list) {
    EXPECT_EQ(fmt::op_count, 10u);
    for (std::size_t k = 0; k < fmt::op_count; ++k) {
        EXPECT_STRNE(fmt::op_name(static_cast<fmt::op>(k)), "?") << k;
    }
    EXPECT_STREQ(fmt::op_name(fmt::op::count), "?");
    EXPECT_STREQ(fmt::op_name(fmt::op::new_array), "new[]");
}

TEST(contract, default_file_name_is_rtmem_program_pid) {
    char name[64];
    EXPECT_EQ(fmt::contract::default_file_name(name, sizeof name, "/usr/bin/game", 4242),
              std::strlen("rtmem-game-4242.rtt"));
    EXPECT_STREQ(name, "rtmem-game-4242.rtt");
    fmt::contract::default_file_name(name, sizeof name, "tool", 0);
    EXPECT_STREQ(name, "rtmem-tool-0.rtt");
    char small[8];
    EXPECT_EQ(fmt::contract::default_file_name(small, sizeof small, "/bin/longname", 1), 7u);
    EXPECT_STREQ(small, "rtmem-l");
}

}  // namespace
