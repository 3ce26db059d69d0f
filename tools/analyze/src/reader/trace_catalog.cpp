// The scan of an .rtt file at open: chunk headers in file order, metadata, stacks, modules,
// the end record and its index of events chunks.
#include "reader/trace_catalog.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace rtmem::analyze::reader {

namespace {

class scanner {
  public:
    scanner(trace_file& file, trace_catalog& out) : file_(file), t_(out) {}

    void run() {
        std::unordered_map<std::uint32_t, std::size_t> by_thread;
        std::uint64_t off = sizeof(fmt::file_header);
        std::vector<char> payload;
        while (off < file_.size()) {
            chunk_ref c = file_.chunk_at(off);
            const auto& h = c.header;
            t_.complete = false;
            if (h.type == fmt::chunk_type::events) {
                bool packed = (h.flags & fmt::chunk_flag_packed) != 0;
                if (h.count == 0 || h.count > fmt::max_chunk_raw ||
                    (!packed &&
                     static_cast<std::uint64_t>(h.count) * sizeof(fmt::raw_event) != h.raw_size)) {
                    fail(off, "events chunk size does not match its count");
                }
                auto [it, fresh] = by_thread.try_emplace(h.thread, t_.threads.size());
                if (fresh) {
                    t_.threads.emplace_back();
                    t_.threads.back().thread = h.thread;
                }
                t_.threads[it->second].chunks.push_back(c);
                t_.events += h.count;
            } else {
                payload.resize(h.raw_size);
                file_.load_payload(c, payload.data());
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
                    case fmt::chunk_type::counts:
                        parse_counts(c, payload);
                        break;
                    default:
                        fail(off, "unknown chunk type " + std::to_string(int(h.type)));
                }
            }
            off += sizeof h + h.stored_size;
        }
        std::sort(t_.modules.begin(), t_.modules.end(),
                  [](const module& a, const module& b) { return a.start < b.start; });
        apply_index();
    }

  private:
    [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
        file_.fail(offset, what);
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
                if (key == "program") t_.program = value;
                if (key == "command") t_.command = value;
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
            if (t_.stacks.size() <= id) t_.stacks.resize(id + 1, {0, 0});
            if (t_.stacks[id].second == 0) {
                t_.stacks[id] = {static_cast<std::uint32_t>(t_.ips.size()), depth};
                std::size_t first = t_.ips.size();
                t_.ips.resize(first + depth);
                std::memcpy(t_.ips.data() + first, p.data() + pos, 8 * std::size_t{depth});
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
            bool known = std::any_of(t_.modules.begin(), t_.modules.end(), [&](const module& o) {
                return o.start == m.start && o.end == m.end && o.path == m.path;
            });
            if (!known) t_.modules.push_back(std::move(m));
        }
    }

    void parse_counts(const chunk_ref& c, const std::vector<char>& p) {
        fmt::call_counts raw{};
        if (p.size() != sizeof raw || c.header.count != 1) fail(c.offset, "bad counts chunk");
        std::memcpy(&raw, p.data(), sizeof raw);
        for (std::size_t i = 0; i < op_count; ++i) {
            t_.counts.calls[i] = raw.calls[i];
            t_.counts.bytes[i] = raw.bytes[i];
        }
        t_.has_counts = true;
    }

    void parse_end(const chunk_ref& c, const std::vector<char>& p) {
        fmt::end_record r{};
        if (p.size() < sizeof r ||
            p.size() != sizeof r + std::size_t{c.header.count} * sizeof(fmt::index_entry)) {
            fail(c.offset, "bad end record");
        }
        std::memcpy(&r, p.data(), sizeof r);
        // By end_reason (1..5): exit, quick_exit, signal, exec, dump.
        static constexpr trace_end ends[] = {trace_end::exit, trace_end::quick_exit,
                                             trace_end::signal, trace_end::exec, trace_end::dump};
        if (r.reason < 1 || r.reason > std::size(ends)) fail(c.offset, "bad end reason");
        t_.end = ends[r.reason - 1];
        t_.end_signal = static_cast<int>(r.signal);
        t_.dropped = r.dropped;
        t_.recorded = r.events;
        t_.complete = true;
        index_offset_ = c.offset;
        for (std::uint32_t i = 0; i < c.header.count; ++i) {
            fmt::index_entry entry{};
            std::memcpy(&entry, p.data() + sizeof r + i * sizeof entry, sizeof entry);
            index_[entry.offset] = entry;
        }
    }

    // Gives events chunks their first time from the index. Chunks it does not list (an index
    // cut at the tracer's limit) are decoded to be placed. A thread whose chunks are all listed
    // is put in time order (whoever wrote a chunk, the thread's time order is what merging
    // needs); an entry naming no events chunk, or the wrong thread or count, is corruption, and
    // a first time is checked against the chunk when it is decoded.
    void apply_index() {
        t_.indexed = t_.complete;
        std::size_t matched = 0;
        for (auto& s : t_.threads) {
            bool all_listed = true, ordered = true;
            std::uint64_t prev = 0;
            for (auto& c : s.chunks) {
                auto it = index_.find(c.offset);
                if (it == index_.end()) {
                    all_listed = false;
                    continue;
                }
                const fmt::index_entry& entry = it->second;
                if (entry.thread != c.header.thread || entry.count != c.header.count) {
                    fail(index_offset_, "index entry for the events chunk at offset " +
                                           std::to_string(c.offset) + " does not match it");
                }
                c.first_time = entry.first_time;
                ordered = ordered && c.first_time >= prev;
                prev = c.first_time;
                ++matched;
            }
            t_.indexed = t_.indexed && all_listed;
            if (ordered) continue;
            if (!all_listed) fail(index_offset_, "index times go back within a thread");
            std::stable_sort(
                s.chunks.begin(), s.chunks.end(),
                [](const chunk_ref& a, const chunk_ref& b) { return a.first_time < b.first_time; });
        }
        if (matched != index_.size()) fail(index_offset_, "index entry names no events chunk");
        index_.clear();
    }

    trace_file& file_;
    trace_catalog& t_;
    std::unordered_map<std::uint64_t, fmt::index_entry> index_;  // by chunk offset
    std::uint64_t index_offset_ = 0;                             // of the end chunk holding it
};

}  // namespace

trace_catalog scan(trace_file& file) {
    trace_catalog t;
    scanner(file, t).run();
    return t;
}

}  // namespace rtmem::analyze::reader
