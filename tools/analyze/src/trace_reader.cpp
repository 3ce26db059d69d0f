// Reads .rtt traces: one pass over the chunk headers at open (stacks, modules and metadata are
// loaded, events chunks only located), then events stream per thread, merged by time.
#include "rtmem/analyze/trace_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "rtmem/format/layout.hpp"
#include "rtmem/format/packed.hpp"

namespace rtmem::analyze {

namespace fmt = rtmem::trace_format;

trace_error::trace_error(std::string file, std::uint64_t offset, const std::string& what)
    : std::runtime_error(file + ": offset " + std::to_string(offset) + ": " + what),
      file_(std::move(file)),
      offset_(offset) {}

namespace {

inline constexpr std::uint64_t unknown_time = ~std::uint64_t{0};

struct chunk_ref {
    std::uint64_t offset;  // of the chunk header
    fmt::chunk_header header;
    std::uint64_t first_time = unknown_time;  // events chunks: from the end chunk's index
};

struct thread_stream {
    std::uint32_t thread = 0;
    std::vector<chunk_ref> chunks;
    std::size_t next_chunk = 0;
    std::vector<fmt::raw_event> events;
    std::size_t pos = 0;
    std::uint64_t chunk_offset = 0;
    bool past_window = false;  // an event at or after the window's end was seen
};

}  // namespace

struct trace_reader::impl {
    std::string path;
    int fd = -1;
    std::uint64_t size = 0;
    fmt::file_header header{};
    std::string program, command;
    std::vector<module> modules;
    std::vector<std::uint64_t> ips;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stacks;  // id -> (first ip, depth)
    std::vector<thread_stream> streams;
    std::vector<std::uint32_t> heap;  // stream indices, min-heap on the next event's time
    std::uint64_t events = 0;
    bool complete = false;
    trace_end end = trace_end::unknown;
    int end_signal = 0;
    std::uint64_t dropped = 0;
    std::uint64_t recorded = 0;
    ZSTD_DCtx* dctx = nullptr;
    std::vector<char> scratch;
    std::unordered_map<std::uint64_t, fmt::index_entry> index;  // by chunk offset
    std::uint64_t index_offset = 0;                             // of the end chunk holding it
    bool indexed = false;  // every events chunk has an index entry
    time_window window;
    std::uint64_t chunks_decoded = 0;

    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    ~impl() {  // here, not in ~trace_reader: also runs when the constructor throws
        if (dctx != nullptr) ZSTD_freeDCtx(dctx);
        if (fd >= 0) ::close(fd);
    }

    [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
        throw trace_error(path, offset, what);
    }

    void read_at(void* dst, std::size_t n, std::uint64_t offset) const {
        auto* p = static_cast<char*>(dst);
        while (n > 0) {
            ssize_t r = pread(fd, p, n, static_cast<off_t>(offset));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) fail(offset, "read failed or file changed while reading");
            p += r;
            n -= static_cast<std::size_t>(r);
            offset += static_cast<std::uint64_t>(r);
        }
    }

    // Payload of a chunk, decompressed into `out` (raw_size bytes).
    void load_payload(const chunk_ref& c, void* out) {
        const auto& h = c.header;
        std::uint64_t at = c.offset + sizeof(fmt::chunk_header);
        if (h.coding == fmt::codec::raw) {
            read_at(out, h.raw_size, at);
            return;
        }
        scratch.resize(h.stored_size);
        read_at(scratch.data(), h.stored_size, at);
        if (dctx == nullptr) dctx = ZSTD_createDCtx();
        std::size_t r = ZSTD_decompressDCtx(dctx, out, h.raw_size, scratch.data(), h.stored_size);
        if (ZSTD_isError(r) != 0) {
            fail(c.offset, std::string("corrupted compressed chunk: ") + ZSTD_getErrorName(r));
        }
        if (r != h.raw_size) fail(c.offset, "chunk decompresses to the wrong size");
    }

    void open_file() {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail(0, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail(0, "not a regular file");
        size = static_cast<std::uint64_t>(st.st_size);
        if (size == 0) fail(0, "empty file (the program recorded nothing or did not start)");
        if (size < sizeof header) fail(size, "truncated file header");
        read_at(&header, sizeof header, 0);
        if (std::memcmp(header.magic, fmt::magic, sizeof header.magic) != 0) {
            fail(0, "not an rtmem trace (bad magic)");
        }
        if (header.version < fmt::oldest_trace_version || header.version > fmt::trace_version) {
            fail(8, "unsupported trace version " + std::to_string(header.version) +
                        " (this rtmem reads versions " + std::to_string(fmt::oldest_trace_version) +
                        " to " + std::to_string(fmt::trace_version) + ")");
        }
        // Version 1 timed every call; later versions say how many calls one timed call stands for.
        timing_period = header.version == 1 || header.timing_period == 0 ? 1 : header.timing_period;
        if (header.header_size != sizeof header) fail(12, "bad header size");
    }

    void scan() {
        std::unordered_map<std::uint32_t, std::size_t> by_thread;
        std::uint64_t off = sizeof header;
        std::vector<char> payload;
        while (off < size) {
            if (size - off < sizeof(fmt::chunk_header)) fail(off, "truncated chunk header");
            chunk_ref c{off, {}};
            read_at(&c.header, sizeof c.header, off);
            const auto& h = c.header;
            if (h.magic != fmt::chunk_magic || h.check != fmt::header_check(h)) {
                fail(off, "corrupted chunk header");
            }
            if (h.raw_size > fmt::max_chunk_raw || h.stored_size > fmt::max_chunk_raw) {
                fail(off, "chunk size out of range");
            }
            if (h.coding != fmt::codec::raw && h.coding != fmt::codec::zstd) {
                fail(off, "unknown chunk codec");
            }
            if (h.coding == fmt::codec::raw && h.raw_size != h.stored_size) {
                fail(off, "raw chunk with mismatched sizes");
            }
            std::uint64_t end_off = off + sizeof h + h.stored_size;
            if (end_off > size) {
                fail(off, "truncated chunk: " + std::to_string(h.stored_size) +
                              " payload bytes, the file ends after " +
                              std::to_string(size - off - sizeof h));
            }
            complete = false;
            if (h.type == fmt::chunk_type::events) {
                bool packed = (h.flags & fmt::chunk_flag_packed) != 0;
                if (h.count == 0 || h.count > fmt::max_chunk_raw ||
                    (!packed &&
                     static_cast<std::uint64_t>(h.count) * sizeof(fmt::raw_event) != h.raw_size)) {
                    fail(off, "events chunk size does not match its count");
                }
                auto [it, fresh] = by_thread.try_emplace(h.thread, streams.size());
                if (fresh) {
                    streams.emplace_back();
                    streams.back().thread = h.thread;
                }
                streams[it->second].chunks.push_back(c);
                events += h.count;
            } else {
                payload.resize(h.raw_size);
                load_payload(c, payload.data());
                switch (h.type) {
                    case fmt::chunk_type::meta:
                        parse_meta(payload);
                        break;
                    case fmt::chunk_type::stacks:
                        parse_stacks(c, payload);
                        break;
                    case fmt::chunk_type::modules:
                        parse_modules(c, payload);
                        break;
                    case fmt::chunk_type::end:
                        parse_end(c, payload);
                        break;
                    default:
                        fail(off, "unknown chunk type " + std::to_string(int(h.type)));
                }
            }
            off = end_off;
        }
        std::sort(modules.begin(), modules.end(),
                  [](const module& a, const module& b) { return a.start < b.start; });
        apply_index();
    }

    void parse_meta(const std::vector<char>& p) {
        std::string text(p.begin(), p.end());
        std::size_t pos = 0;
        while (pos < text.size()) {
            std::size_t nl = text.find('\n', pos);
            if (nl == std::string::npos) nl = text.size();
            std::string line = text.substr(pos, nl - pos);
            std::size_t eq = line.find('=');
            if (eq != std::string::npos) {
                std::string key = line.substr(0, eq), value = line.substr(eq + 1);
                if (key == "program") program = value;
                if (key == "command") command = value;
            }
            pos = nl + 1;
        }
    }

    void parse_stacks(const chunk_ref& c, const std::vector<char>& p) {
        std::size_t pos = 0;
        for (std::uint32_t i = 0; i < c.header.count; ++i) {
            std::uint32_t id = 0, depth = 0;
            if (p.size() - pos < 8) fail(c.offset, "truncated stack record");
            std::memcpy(&id, p.data() + pos, 4);
            std::memcpy(&depth, p.data() + pos + 4, 4);
            pos += 8;
            if (id == 0 || id > (1u << 28) || depth > 1024) fail(c.offset, "bad stack record");
            if ((p.size() - pos) / 8 < depth) fail(c.offset, "truncated stack record");
            if (stacks.size() <= id) stacks.resize(id + 1, {0, 0});
            if (stacks[id].second == 0) {
                stacks[id] = {static_cast<std::uint32_t>(ips.size()), depth};
                std::size_t first = ips.size();
                ips.resize(first + depth);
                std::memcpy(ips.data() + first, p.data() + pos, 8 * std::size_t{depth});
            }
            pos += 8 * std::size_t{depth};
        }
        if (pos != p.size()) fail(c.offset, "stack chunk has trailing bytes");
    }

    void parse_modules(const chunk_ref& c, const std::vector<char>& p) {
        std::size_t pos = 0;
        for (std::uint32_t i = 0; i < c.header.count; ++i) {
            if (p.size() - pos < 28) fail(c.offset, "truncated module record");
            module m;
            std::uint32_t len = 0;
            std::memcpy(&m.start, p.data() + pos, 8);
            std::memcpy(&m.end, p.data() + pos + 8, 8);
            std::memcpy(&m.bias, p.data() + pos + 16, 8);
            std::memcpy(&len, p.data() + pos + 24, 4);
            pos += 28;
            if (p.size() - pos < len || m.end < m.start) fail(c.offset, "bad module record");
            m.path.assign(p.data() + pos, len);
            pos += len;
            bool known = std::any_of(modules.begin(), modules.end(), [&](const module& o) {
                return o.start == m.start && o.end == m.end && o.path == m.path;
            });
            if (!known) modules.push_back(std::move(m));
        }
    }

    void parse_end(const chunk_ref& c, const std::vector<char>& p) {
        fmt::end_record r{};
        if (p.size() < sizeof r ||
            p.size() != sizeof r + std::size_t{c.header.count} * sizeof(fmt::index_entry)) {
            fail(c.offset, "bad end record");
        }
        std::memcpy(&r, p.data(), sizeof r);
        switch (static_cast<fmt::end_reason>(r.reason)) {
            case fmt::end_reason::exit:
                end = trace_end::exit;
                break;
            case fmt::end_reason::quick_exit:
                end = trace_end::quick_exit;
                break;
            case fmt::end_reason::signal:
                end = trace_end::signal;
                break;
            case fmt::end_reason::exec:
                end = trace_end::exec;
                break;
            default:
                fail(c.offset, "bad end reason");
        }
        end_signal = static_cast<int>(r.signal);
        dropped = r.dropped;
        recorded = r.events;
        complete = true;
        index_offset = c.offset;
        for (std::uint32_t i = 0; i < c.header.count; ++i) {
            fmt::index_entry entry{};
            std::memcpy(&entry, p.data() + sizeof r + i * sizeof entry, sizeof entry);
            index[entry.offset] = entry;
        }
    }

    // Gives events chunks their first time from the index. Chunks it does not list (an index
    // cut at the tracer's limit) are decoded to be placed. A thread whose chunks are all listed
    // is put in time order (whoever wrote a chunk, the thread's time order is what merging
    // needs); an entry naming no events chunk, or the wrong thread or count, is corruption, and
    // a first time is checked against the chunk when it is decoded.
    void apply_index() {
        indexed = complete;
        std::size_t matched = 0;
        for (auto& s : streams) {
            bool all_listed = true, ordered = true;
            std::uint64_t prev = 0;
            for (auto& c : s.chunks) {
                auto it = index.find(c.offset);
                if (it == index.end()) {
                    all_listed = false;
                    continue;
                }
                const fmt::index_entry& entry = it->second;
                if (entry.thread != c.header.thread || entry.count != c.header.count) {
                    fail(index_offset, "index entry for the events chunk at offset " +
                                           std::to_string(c.offset) + " does not match it");
                }
                c.first_time = entry.first_time;
                ordered = ordered && c.first_time >= prev;
                prev = c.first_time;
                ++matched;
            }
            indexed = indexed && all_listed;
            if (ordered) continue;
            if (!all_listed) fail(index_offset, "index times go back within a thread");
            std::stable_sort(
                s.chunks.begin(), s.chunks.end(),
                [](const chunk_ref& a, const chunk_ref& b) { return a.first_time < b.first_time; });
        }
        if (matched != index.size()) fail(index_offset, "index entry names no events chunk");
        index.clear();
    }

    // Whether chunk i of a thread can hold an event in the window. A thread's events are in
    // time order across its chunks, so chunk i ends no later than chunk i + 1 begins.
    bool may_overlap_window(const thread_stream& s, std::size_t i) const {
        const chunk_ref& c = s.chunks[i];
        if (c.first_time != unknown_time && c.first_time >= window.to_ns) return false;
        if (i + 1 < s.chunks.size()) {
            std::uint64_t next_first = s.chunks[i + 1].first_time;
            if (next_first != unknown_time && next_first < window.from_ns) return false;
        }
        return true;
    }

    // Loads the stream's next chunk with an event in the window, trimmed to the window; false
    // when it has none left. Chunks the index places outside the window are not read.
    bool advance_chunk(thread_stream& s) {
        for (;;) {
            s.events.clear();
            s.pos = 0;
            while (s.next_chunk < s.chunks.size() && !s.past_window &&
                   !may_overlap_window(s, s.next_chunk)) {
                if (s.chunks[s.next_chunk].first_time >= window.to_ns) s.past_window = true;
                ++s.next_chunk;
            }
            if (s.next_chunk == s.chunks.size() || s.past_window) {
                s.events.shrink_to_fit();
                return false;
            }
            const chunk_ref& c = s.chunks[s.next_chunk++];
            decode_chunk(s, c);
            if (c.first_time != unknown_time && s.events[0].time != c.first_time) {
                fail(c.offset, "events chunk does not start at the time its index entry says");
            }
            trim_to_window(s);
            if (s.pos < s.events.size()) return true;
        }
    }

    void decode_chunk(thread_stream& s, const chunk_ref& c) {
        ++chunks_decoded;
        s.events.resize(c.header.count);
        s.chunk_offset = c.offset;
        if ((c.header.flags & fmt::chunk_flag_packed) == 0) {
            load_payload(c, s.events.data());
            return;
        }
        packed_buf.resize(c.header.raw_size);
        load_payload(c, packed_buf.data());
        unpack(c, s.events);
    }

    // Skips events before the window and drops those at or after its end (the thread's later
    // chunks are then all past it too).
    void trim_to_window(thread_stream& s) {
        if (window.from_ns == 0 && window.to_ns == unknown_time) return;
        auto before = [](const fmt::raw_event& e, std::uint64_t t) { return e.time < t; };
        auto first = std::lower_bound(s.events.begin(), s.events.end(), window.from_ns, before);
        auto last = std::lower_bound(first, s.events.end(), window.to_ns, before);
        if (last != s.events.end()) {
            s.past_window = true;
            s.events.erase(last, s.events.end());
        }
        s.pos = static_cast<std::size_t>(first - s.events.begin());
    }

    void unpack(const chunk_ref& c, std::vector<fmt::raw_event>& out) {
        const char* error = fmt::packed::unpack(packed_buf.data(), packed_buf.size(),
                                                header.version, out.data(), c.header.count);
        if (error != nullptr) fail(c.offset, error);
    }
    std::vector<unsigned char> packed_buf;

    bool earlier(std::uint32_t a, std::uint32_t b) const {
        const auto& x = streams[a].events[streams[a].pos];
        const auto& y = streams[b].events[streams[b].pos];
        return x.time != y.time ? x.time < y.time : a < b;
    }
    void sift_down(std::size_t i) {
        std::size_t n = heap.size();
        for (;;) {
            std::size_t l = 2 * i + 1, best = i;
            if (l < n && earlier(heap[l], heap[best])) best = l;
            if (l + 1 < n && earlier(heap[l + 1], heap[best])) best = l + 1;
            if (best == i) return;
            std::swap(heap[i], heap[best]);
            i = best;
        }
    }

    void restart() {
        heap.clear();
        for (std::uint32_t i = 0; i < streams.size(); ++i) {
            streams[i].next_chunk = 0;
            streams[i].past_window = false;
            if (advance_chunk(streams[i])) heap.push_back(i);
        }
        for (std::size_t i = heap.size(); i-- > 0;) sift_down(i);
    }

    bool next(event& e) {
        if (heap.empty()) return false;
        thread_stream& s = streams[heap[0]];
        const fmt::raw_event& r = s.events[s.pos];
        if (r.kind >= op_count || r.align_log2 > 64) {
            fail(s.chunk_offset, "corrupted event (kind " + std::to_string(r.kind) + ")");
        }
        e.time_ns = r.time;
        e.ptr = r.ptr;
        e.old_ptr = r.old_ptr;
        e.size = r.size;
        e.thread = s.thread;
        e.stack = r.stack;
        e.align = r.align_log2 == 0 || r.align_log2 > 32 ? 0 : 1u << (r.align_log2 - 1);
        e.kind = static_cast<op>(r.kind);
        if ((r.flags & fmt::event_flag::failed) != 0) {
            e.ptr = 0;
            e.old_ptr = 0;  // a failed realloc frees nothing
        }
        bool timed = header.version == 1 || (r.flags & fmt::event_flag::timed) != 0;
        last_duration = timed ? std::uint64_t{r.duration} * timing_period : 0;
        if (++s.pos == s.events.size() && !advance_chunk(s)) {
            heap[0] = heap.back();
            heap.pop_back();
        }
        if (!heap.empty()) sift_down(0);
        return true;
    }
    std::uint64_t last_duration = 0;
    std::uint32_t timing_period = 1;
};

trace_reader::trace_reader(const std::string& path) : impl_(std::make_unique<impl>()) {
    impl_->path = path;
    impl_->open_file();
    impl_->scan();
    impl_->restart();
}

trace_reader::~trace_reader() = default;

bool trace_reader::next(event& e) {
    return impl_->next(e);
}
void trace_reader::rewind() {
    impl_->restart();
}
std::span<const std::uint64_t> trace_reader::stack(std::uint32_t id) const {
    if (id >= impl_->stacks.size()) return {};
    auto [first, depth] = impl_->stacks[id];
    return {impl_->ips.data() + first, depth};
}
std::size_t trace_reader::stack_count() const {
    return impl_->stacks.size();
}
const std::string& trace_reader::path() const noexcept {
    return impl_->path;
}
const std::string& trace_reader::program() const noexcept {
    return impl_->program;
}
const std::string& trace_reader::command_line() const noexcept {
    return impl_->command;
}
std::uint32_t trace_reader::pid() const noexcept {
    return impl_->header.pid;
}
std::uint32_t trace_reader::stack_depth() const noexcept {
    return impl_->header.stack_depth;
}
std::uint64_t trace_reader::start_realtime_ns() const noexcept {
    return impl_->header.start_realtime;
}
const std::vector<module>& trace_reader::modules() const noexcept {
    return impl_->modules;
}
std::uint64_t trace_reader::event_count() const noexcept {
    return impl_->events;
}
std::uint32_t trace_reader::thread_count() const noexcept {
    return static_cast<std::uint32_t>(impl_->streams.size());
}
std::uint64_t trace_reader::file_size() const noexcept {
    return impl_->size;
}
bool trace_reader::complete() const noexcept {
    return impl_->complete;
}
trace_end trace_reader::end() const noexcept {
    return impl_->end;
}
int trace_reader::end_signal() const noexcept {
    return impl_->end_signal;
}
std::uint64_t trace_reader::dropped_events() const noexcept {
    return impl_->dropped;
}
std::uint64_t trace_reader::recorded_events() const noexcept {
    return impl_->recorded;
}
void trace_reader::set_window(time_window w) {
    impl_->window = w;
    impl_->restart();
}
time_window trace_reader::window() const noexcept {
    return impl_->window;
}
bool trace_reader::indexed() const noexcept {
    return impl_->indexed;
}
std::uint64_t trace_reader::chunks_decoded() const noexcept {
    return impl_->chunks_decoded;
}
std::uint32_t trace_reader::timing_period() const noexcept {
    return impl_->timing_period;
}
std::uint64_t trace_reader::last_duration_ns() const noexcept {
    return impl_->last_duration;
}

}  // namespace rtmem::analyze
