// Packed events, what the tracer writes into an events chunk before zstd, encoded and decoded
// side by side. Per event:
//   u8 head = kind | failed << 4 | has_old << 5 | has_align << 6 | timed << 7
//   varint time - previous time, zigzag varint ptr - previous ptr,
//   [zigzag varint old_ptr - ptr], varint size, varint stack, [varint duration],
//   [u8 align_log2]
// (version 1: no timed bit, the duration varint is always present)
// "previous" starts at 0 in every chunk, so chunks decode independently.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rtmem/format/layout.hpp"

namespace rtmem::trace_format::packed {

inline constexpr std::size_t max_event_bytes = 1 + 10 * 6 + 1;

inline constexpr unsigned head_failed = 1u << 4;
inline constexpr unsigned head_old = 1u << 5;
inline constexpr unsigned head_align = 1u << 6;
inline constexpr unsigned head_timed = 1u << 7;

inline std::uint64_t zigzag(std::uint64_t v) noexcept {
    return (v << 1) ^ (0 - (v >> 63));
}
inline std::uint64_t unzigzag(std::uint64_t v) noexcept {
    return (v >> 1) ^ (0 - (v & 1));
}
inline unsigned char* put_varint(unsigned char* p, std::uint64_t v) noexcept {
    while (v >= 0x80) {
        *p++ = static_cast<unsigned char>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<unsigned char>(v);
    return p;
}

/// Packs `n` events into `out` (room for n * max_event_bytes); returns the packed size.
inline std::size_t pack(const raw_event* ev, std::uint32_t n, unsigned char* out) noexcept {
    unsigned char* p = out;
    std::uint64_t prev_time = 0, prev_ptr = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const raw_event& e = ev[i];
        bool has_old = e.old_ptr != 0, has_align = e.align_log2 != 0;
        bool is_timed = (e.flags & event_flag::timed) != 0;
        *p++ = static_cast<unsigned char>(e.kind | ((e.flags & event_flag::failed) != 0 ? head_failed : 0) |
                                          (has_old ? head_old : 0) | (has_align ? head_align : 0) |
                                          (is_timed ? head_timed : 0));
        p = put_varint(p, e.time - prev_time);
        p = put_varint(p, zigzag(e.ptr - prev_ptr));
        if (has_old) p = put_varint(p, zigzag(e.old_ptr - e.ptr));
        p = put_varint(p, e.size);
        p = put_varint(p, e.stack);
        if (is_timed) p = put_varint(p, e.duration);
        if (has_align) *p++ = e.align_log2;
        prev_time = e.time;
        prev_ptr = e.ptr;
    }
    return static_cast<std::size_t>(p - out);
}

/// Unpacks `n` events of a chunk written in trace `version` from [in, in + size) into `out`.
/// Returns nullptr, or what is wrong with the bytes (the caller names file and offset).
inline const char* unpack(const unsigned char* in, std::size_t size, std::uint32_t version,
                          raw_event* out, std::uint32_t n) noexcept {
    const unsigned char* p = in;
    const unsigned char* const stop = in + size;
    const char* error = nullptr;
    auto varint = [&]() -> std::uint64_t {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p == stop) {
                if (error == nullptr) error = "packed events end early";
                return 0;
            }
            unsigned char b = *p++;
            v |= std::uint64_t{b & 0x7fu} << shift;
            if ((b & 0x80) == 0) return v;
        }
        if (error == nullptr) error = "bad varint in packed events";
        return 0;
    };
    std::uint64_t time = 0, ptr = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        raw_event& e = out[i];
        if (p == stop) return "packed events end early";
        unsigned char head = *p++;
        e = {};
        e.kind = head & 0x0f;
        e.flags = (head & head_failed) != 0 ? event_flag::failed : 0;
        time += varint();
        ptr += unzigzag(varint());
        e.time = time;
        e.ptr = ptr;
        if ((head & head_old) != 0) e.old_ptr = ptr + unzigzag(varint());
        e.size = varint();
        bool timed = version == 1 || (head & head_timed) != 0;
        std::uint64_t stack = varint(), duration = timed ? varint() : 0;
        if (error != nullptr) return error;
        if (stack > 0xffffffffu || duration > 0xffffffffu) return "bad packed event";
        e.stack = static_cast<std::uint32_t>(stack);
        e.duration = static_cast<std::uint32_t>(duration);
        if (timed) e.flags |= event_flag::timed;
        if ((head & head_align) != 0) {
            if (p == stop) return "packed events end early";
            e.align_log2 = *p++;
        }
    }
    if (p != stop) return "packed events chunk has trailing bytes";
    return nullptr;
}

}  // namespace rtmem::trace_format::packed
