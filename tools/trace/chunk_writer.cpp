// Raw output of librtmem-trace.so: chunks written with pwrite at offsets reserved by one atomic
// add (writers never wait for each other), events packed and compressed on the way out.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recorder_internal.hpp"

namespace rtmem::trace::internal {

namespace {
constexpr std::size_t pack_capacity = block_events * fmt::packed::max_event_bytes;
}

void* map_memory(std::size_t n) noexcept {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

bool write_all_at(int fd, const void* data, std::size_t n, std::uint64_t offset) noexcept {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
        offset += static_cast<std::uint64_t>(w);
    }
    return true;
}

void write_stderr(const char* s) noexcept {
    std::size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(2, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

std::uint64_t write_chunk(fmt::chunk_type type, std::uint32_t thread, std::uint32_t count,
                          const void* payload, std::size_t raw_size, ZSTD_CCtx* cctx, void* scratch,
                          std::size_t scratch_cap, std::uint16_t flags) noexcept {
    if (g_fd < 0) return 0;
    fmt::chunk_header h{};
    h.magic = fmt::chunk_magic;
    h.type = type;
    h.coding = fmt::codec::raw;
    h.flags = flags;
    h.thread = thread;
    h.count = count;
    h.raw_size = static_cast<std::uint32_t>(raw_size);
    const void* stored = payload;
    std::size_t stored_size = raw_size;
    if (cctx != nullptr && scratch != nullptr && raw_size > 0) {
        std::size_t c = ZSTD_compress2(cctx, scratch, scratch_cap, payload, raw_size);
        if (ZSTD_isError(c) == 0 && c < raw_size) {
            h.coding = fmt::codec::zstd;
            stored = scratch;
            stored_size = c;
        }
    }
    h.stored_size = static_cast<std::uint32_t>(stored_size);
    h.check = fmt::header_check(h);
    std::uint64_t off = g_file_offset.fetch_add(sizeof h + stored_size, std::memory_order_relaxed);
    // Payload first: a valid header then always means a complete chunk (rtmem_trace_dump
    // copies the file while it grows).
    write_all_at(g_fd, stored, stored_size, off + sizeof h);
    write_all_at(g_fd, &h, sizeof h, off);
    return off;
}

ZSTD_CCtx* make_cctx() noexcept {
    guard_scope g;
    ZSTD_CCtx* c = ZSTD_createCCtx();
    if (c != nullptr) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, g_zstd_level);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    }
    return c;
}

bool prepare(flush_context& c, bool compress) noexcept {
    if (c.packed == nullptr) c.packed = static_cast<unsigned char*>(map_memory(pack_capacity));
    if (c.packed == nullptr) return false;
    if (!compress) return true;
    if (c.scratch == nullptr) {
        c.scratch_cap = ZSTD_compressBound(pack_capacity);
        c.scratch = static_cast<char*>(map_memory(c.scratch_cap));
    }
    if (c.cctx == nullptr) c.cctx = make_cctx();
    return true;
}

void write_events(flush_context& c, bool compress, std::uint32_t thread, fmt::raw_event* events,
                  std::uint32_t n) noexcept {
    if (n == 0) return;
    if (!prepare(c, compress)) {
        g_dropped.fetch_add(n, std::memory_order_relaxed);
        return;
    }
    // Events hold ticks until here: the conversion runs on the writer, not the allocating thread.
    for (std::uint32_t i = 0; i < n; ++i) {
        events[i].time = to_trace_ns(events[i].time);
        if ((events[i].flags & fmt::event_flag::timed) != 0) {
            events[i].duration = to_duration_ns(events[i].duration);
        }
    }
    std::size_t packed = fmt::packed::pack(events, n, c.packed);
    bool zstd = compress && c.cctx != nullptr && c.scratch != nullptr;
    std::uint64_t off =
        write_chunk(fmt::chunk_type::events, thread, n, c.packed, packed, zstd ? c.cctx : nullptr,
                    c.scratch, c.scratch_cap, fmt::chunk_flag_packed);
    std::uint64_t slot = g_index_count.fetch_add(1, std::memory_order_relaxed);
    if (g_index != nullptr && slot < max_index) g_index[slot] = {off, events[0].time, thread, n};
}

}  // namespace rtmem::trace::internal
