// Writes .rtt files the way librtmem-trace.so does (docs/trace-format.md), for tests, fuzz
// seeds and the analysis benchmark: synthetic traces of any size without running a program.
#pragma once
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "rtmem/analyze/event.hpp"
#include "rtmem/format/layout.hpp"
#include "rtmem/format/packed.hpp"

namespace rtmem::testing {

class trace_writer {
  public:
    /// `packed`: events chunks packed as the tracer writes them (false: raw_event arrays,
    /// which the reader also accepts). `timing_period`: one call in this many was timed (an
    /// event with a non-zero duration is a timed one). `version` 1 writes the old format, in
    /// which every call was timed.
    explicit trace_writer(const std::string& path, std::uint32_t pid = 4242, bool packed = true,
                          std::uint32_t timing_period = 1,
                          std::uint32_t version = trace_format::trace_version,
                          std::uint64_t sample_interval = 0)
        : file_(std::fopen(path.c_str(), "wb")), packed_(packed), version_(version) {
        if (file_ == nullptr) throw std::runtime_error("cannot write " + path);
        trace_format::file_header h{};
        std::memcpy(h.magic, trace_format::magic, sizeof h.magic);
        h.version = version;
        h.timing_period = version == 1 ? 0 : timing_period;
        h.header_size = sizeof h;
        h.sample_interval = version >= 3 ? sample_interval : 0;
        h.pid = pid;
        h.stack_depth = 16;
        put(&h, sizeof h);
        std::string meta = "program=/synthetic/program\npid=" + std::to_string(pid) +
                           "\ncommand=synthetic --test\n";
        chunk(trace_format::chunk_type::meta, 0, 0, meta.data(), meta.size(), false);
    }
    ~trace_writer() {
        if (file_ != nullptr) std::fclose(file_);
        ZSTD_freeCCtx(cctx_);
    }
    trace_writer(const trace_writer&) = delete;
    trace_writer& operator=(const trace_writer&) = delete;

    void stack(std::uint32_t id, const std::vector<std::uint64_t>& ips) {
        std::vector<char> rec(8 + 8 * ips.size());
        auto depth = static_cast<std::uint32_t>(ips.size());
        std::memcpy(rec.data(), &id, 4);
        std::memcpy(rec.data() + 4, &depth, 4);
        std::memcpy(rec.data() + 8, ips.data(), 8 * ips.size());
        chunk(trace_format::chunk_type::stacks, 0, 1, rec.data(), rec.size(), true);
    }
    void module(const std::string& path, std::uint64_t start, std::uint64_t end,
                std::uint64_t bias) {
        std::vector<char> rec(28 + path.size());
        auto len = static_cast<std::uint32_t>(path.size());
        std::memcpy(rec.data(), &start, 8);
        std::memcpy(rec.data() + 8, &end, 8);
        std::memcpy(rec.data() + 16, &bias, 8);
        std::memcpy(rec.data() + 24, &len, 4);
        std::memcpy(rec.data() + 28, path.data(), path.size());
        chunk(trace_format::chunk_type::modules, 0, 1, rec.data(), rec.size(), false);
    }
    void event(std::uint32_t thread, analyze::op kind, std::uint64_t time, std::uint64_t ptr,
               std::uint64_t size, std::uint32_t stack = 0, std::uint64_t old_ptr = 0,
               std::uint32_t duration = 0) {
        trace_format::raw_event e{};
        e.time = time;
        e.ptr = ptr;
        e.old_ptr = old_ptr;
        e.size = size;
        e.stack = stack;
        e.duration = duration;
        e.kind = static_cast<std::uint8_t>(kind);
        if (duration != 0 || version_ == 1) e.flags = trace_format::event_flag::timed;
        auto& buf = buffers_[thread];
        buf.push_back(e);
        if (buf.size() == 4096) flush(thread);
    }
    /// The exact call counts, written just before the end chunk (as the tracer does).
    void counts(const trace_format::call_counts& c) {
        counts_ = c;
        has_counts_ = true;
    }
    /// Flushes the events and, unless `with_end` is false (a killed process), the end chunk.
    /// The end chunk carries the index of the events chunks, as the tracer writes it.
    void finish(trace_format::end_reason reason = trace_format::end_reason::exit,
                bool with_end = true, std::uint64_t dropped = 0) {
        for (auto& [t, b] : buffers_) flush(t);
        if (with_end && has_counts_) {
            chunk(trace_format::chunk_type::counts, 0, 1, &counts_, sizeof counts_, false);
        }
        if (with_end) {
            trace_format::end_record end{};
            end.reason = static_cast<std::uint32_t>(reason);
            end.dropped = dropped;
            std::vector<char> payload(sizeof end + index_.size() * sizeof(index_[0]));
            std::memcpy(payload.data(), &end, sizeof end);
            if (!index_.empty()) {
                std::memcpy(payload.data() + sizeof end, index_.data(),
                            index_.size() * sizeof(index_[0]));
            }
            chunk(trace_format::chunk_type::end, 0, static_cast<std::uint32_t>(index_.size()),
                  payload.data(), payload.size(), false);
        }
        std::fclose(file_);
        file_ = nullptr;
    }

  private:
    trace_format::call_counts counts_{};
    bool has_counts_ = false;

    void flush(std::uint32_t thread) {
        auto& buf = buffers_[thread];
        if (buf.empty()) return;
        auto n = static_cast<std::uint32_t>(buf.size());
        index_.push_back({offset_, buf.front().time, thread, n});
        if (packed_) {  // as the tracer writes them
            std::vector<unsigned char> p(buf.size() * trace_format::packed::max_event_bytes);
            p.resize(trace_format::packed::pack(buf.data(), n, p.data()));
            chunk(trace_format::chunk_type::events, thread, n, p.data(), p.size(), true,
                  trace_format::chunk_flag_packed);
        } else {
            chunk(trace_format::chunk_type::events, thread, n, buf.data(),
                  buf.size() * sizeof buf[0], true);
        }
        buf.clear();
    }
    void chunk(trace_format::chunk_type type, std::uint32_t thread, std::uint32_t count,
               const void* data, std::size_t size, bool compress, std::uint16_t flags = 0) {
        trace_format::chunk_header h{};
        h.flags = flags;
        h.magic = trace_format::chunk_magic;
        h.type = type;
        h.thread = thread;
        h.count = count;
        h.raw_size = static_cast<std::uint32_t>(size);
        std::vector<char> z;
        const void* stored = data;
        std::size_t stored_size = size;
        if (compress) {
            z.resize(ZSTD_compressBound(size));
            if (cctx_ == nullptr) {
                cctx_ = ZSTD_createCCtx();
                ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 1);
                ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);  // as the tracer does
            }
            std::size_t n = ZSTD_compress2(cctx_, z.data(), z.size(), data, size);
            if (ZSTD_isError(n) == 0) {
                h.coding = trace_format::codec::zstd;
                stored = z.data();
                stored_size = n;
            }
        }
        h.stored_size = static_cast<std::uint32_t>(stored_size);
        h.check = trace_format::header_check(h);
        put(&h, sizeof h);
        put(stored, stored_size);
    }
    void put(const void* p, std::size_t n) {
        if (std::fwrite(p, 1, n, file_) != n) throw std::runtime_error("short write");
        offset_ += n;
    }

    std::FILE* file_;
    bool packed_;
    std::uint32_t version_;
    ZSTD_CCtx* cctx_ = nullptr;
    std::uint64_t offset_ = 0;  // of the next byte written
    std::vector<trace_format::index_entry> index_;
    std::map<std::uint32_t, std::vector<trace_format::raw_event>> buffers_;
};

}  // namespace rtmem::testing
