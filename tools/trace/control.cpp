// In-process control of the recording, for programs that cannot be restarted (librtmem's
// rtmem_trace_start/stop/dump look up rtmem_trace_control_hook): pause, resume, and a dump —
// a complete, readable copy of the trace so far, written while recording goes on.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recorder_internal.hpp"

namespace rtmem::trace::internal {

namespace {

spin_lock g_dump_lock;  // one dump at a time

// A chunk header at `offset` of the trace, once its writer has finished it (payloads are
// written before headers, so a valid header means a complete chunk). Waits up to 2 s for a
// chunk whose offset was reserved but whose write is still under way.
bool complete_chunk_at(std::uint64_t offset, fmt::chunk_header& h) noexcept {
    std::uint64_t start = now_ns();
    for (;;) {
        if (pread(g_fd, &h, sizeof h, static_cast<off_t>(offset)) == static_cast<ssize_t>(sizeof h) &&
            h.magic == fmt::chunk_magic && h.check == fmt::header_check(h)) {
            return true;
        }
        if (now_ns() - start > 2000000000ull) return false;
        sched_yield();
    }
}

bool copy_range(int to, std::uint64_t from_offset, std::uint64_t n, char* buf,
                std::size_t cap) noexcept {
    while (n > 0) {
        std::size_t part = n < cap ? static_cast<std::size_t>(n) : cap;
        ssize_t got = pread(g_fd, buf, part, static_cast<off_t>(from_offset));
        if (got <= 0) {
            if (got < 0 && errno == EINTR) continue;
            return false;
        }
        if (!write_all_at(to, buf, static_cast<std::size_t>(got), from_offset)) return false;
        from_offset += static_cast<std::uint64_t>(got);
        n -= static_cast<std::uint64_t>(got);
    }
    return true;
}

// The trace file up to what every thread has recorded so far, then the counts and an end
// record (reason dump, no index: readers place the chunks by decoding them).
int dump(const char* path) noexcept {
    if (path == nullptr || *path == 0) return EINVAL;
    flush_all_buffers();
    refresh_modules(true);
    std::uint64_t end = g_file_offset.load(std::memory_order_acquire);
    int to = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (to < 0) return errno;
    constexpr std::size_t cap = 1u << 16;
    char* buf = static_cast<char*>(map_memory(cap));
    int rc = buf == nullptr ? ENOMEM : 0;
    std::uint64_t events = 0;
    if (rc == 0 && !copy_range(to, 0, sizeof(fmt::file_header), buf, cap)) rc = EIO;
    for (std::uint64_t off = sizeof(fmt::file_header); rc == 0 && off < end;) {
        fmt::chunk_header h{};
        if (!complete_chunk_at(off, h)) {
            rc = EIO;
            break;
        }
        std::uint64_t size = sizeof h + h.stored_size;
        if (!copy_range(to, off, size, buf, cap)) rc = EIO;
        if (h.type == fmt::chunk_type::events) events += h.count;
        off += size;
    }
    if (rc == 0) write_end_chunks(to, end, fmt::end_reason::dump, 0, events, 0, 0);
    if (buf != nullptr) munmap(buf, cap);
    if (close(to) != 0 && rc == 0) rc = errno;
    return rc;
}

}  // namespace

}  // namespace rtmem::trace::internal

/// command: 0 start, 1 stop, 2 dump to `path`. Returns 0, or an errno value (ESRCH: the trace
/// has ended or this process is not recording; EINVAL: bad command or path).
extern "C" __attribute__((visibility("default"))) int rtmem_trace_control_hook(int command,
                                                                               const char* path) {
    using namespace rtmem::trace;
    using namespace rtmem::trace::internal;
    if (!ensure_ready() || !recording()) return ESRCH;
    guard_scope g;
    switch (command) {
        case 0:
            set_paused(false);
            return 0;
        case 1:
            set_paused(true);
            return 0;
        case 2: {
            g_dump_lock.lock();
            int rc = dump(path);
            g_dump_lock.unlock();
            return rc;
        }
        default:
            return EINVAL;
    }
}
