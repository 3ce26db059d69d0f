// An open .rtt file: its validated header, reads at an offset, and chunk payloads (raw or
// zstd). Every error names the file and the byte offset (trace_error).
#pragma once
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rtmem/format/layout.hpp"

namespace rtmem::analyze::reader {

namespace fmt = rtmem::trace_format;

inline constexpr std::uint64_t unknown_time = ~std::uint64_t{0};

/// A chunk located in the file.
struct chunk_ref {
    std::uint64_t offset;  ///< of the chunk header
    fmt::chunk_header header;
    std::uint64_t first_time = unknown_time;  ///< events chunks: from the end chunk's index
};

class trace_file {
  public:
    /// Opens the file and checks its header (magic, version, size).
    explicit trace_file(std::string path);
    ~trace_file();
    trace_file(const trace_file&) = delete;
    trace_file& operator=(const trace_file&) = delete;

    [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;
    void read_at(void* dst, std::size_t n, std::uint64_t offset) const;
    /// The chunk header at `offset`, checked (magic, check sum, sizes, codec, file bounds).
    [[nodiscard]] chunk_ref chunk_at(std::uint64_t offset) const;
    /// The chunk's payload, decompressed into `out` (header.raw_size bytes).
    void load_payload(const chunk_ref& c, void* out);

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    [[nodiscard]] const fmt::file_header& header() const noexcept { return header_; }
    /// One call in this many was timed (version 1 timed every call).
    [[nodiscard]] std::uint32_t timing_period() const noexcept { return timing_period_; }

  private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    fmt::file_header header_{};
    std::uint32_t timing_period_ = 1;
    ZSTD_DCtx* dctx_ = nullptr;
    std::vector<char> scratch_;
};

}  // namespace rtmem::analyze::reader
