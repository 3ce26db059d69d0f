// Opening an .rtt file and reading its chunks.
#include "reader/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze::reader {

trace_file::trace_file(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail(0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) fail(0, "not a regular file");
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ == 0) fail(0, "empty file (the program recorded nothing or did not start)");
    if (size_ < sizeof header_) fail(size_, "truncated file header");
    read_at(&header_, sizeof header_, 0);
    if (std::memcmp(header_.magic, fmt::magic, sizeof header_.magic) != 0) {
        fail(0, "not an rtmem trace (bad magic)");
    }
    if (header_.version < fmt::oldest_trace_version || header_.version > fmt::trace_version) {
        fail(8, "unsupported trace version " + std::to_string(header_.version) +
                    " (this rtmem reads versions " + std::to_string(fmt::oldest_trace_version) +
                    " to " + std::to_string(fmt::trace_version) + ")");
    }
    // Version 1 timed every call; later versions say how many calls one timed call stands for.
    timing_period_ =
        header_.version == 1 || header_.timing_period == 0 ? 1 : header_.timing_period;
    if (header_.header_size != sizeof header_) fail(12, "bad header size");
}

trace_file::~trace_file() {
    if (dctx_ != nullptr) ZSTD_freeDCtx(dctx_);
    if (fd_ >= 0) ::close(fd_);
}

void trace_file::fail(std::uint64_t offset, const std::string& what) const {
    throw trace_error(path_, offset, what);
}

void trace_file::read_at(void* dst, std::size_t n, std::uint64_t offset) const {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
        ssize_t r = pread(fd_, p, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) fail(offset, "read failed or file changed while reading");
        p += r;
        n -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
}

chunk_ref trace_file::chunk_at(std::uint64_t off) const {
    if (size_ - off < sizeof(fmt::chunk_header)) fail(off, "truncated chunk header");
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
    if (off + sizeof h + h.stored_size > size_) {
        fail(off, "truncated chunk: " + std::to_string(h.stored_size) +
                      " payload bytes, the file ends after " +
                      std::to_string(size_ - off - sizeof h));
    }
    return c;
}

void trace_file::load_payload(const chunk_ref& c, void* out) {
    const auto& h = c.header;
    std::uint64_t at = c.offset + sizeof(fmt::chunk_header);
    if (h.coding == fmt::codec::raw) {
        read_at(out, h.raw_size, at);
        return;
    }
    scratch_.resize(h.stored_size);
    read_at(scratch_.data(), h.stored_size, at);
    if (dctx_ == nullptr) dctx_ = ZSTD_createDCtx();
    std::size_t r = ZSTD_decompressDCtx(dctx_, out, h.raw_size, scratch_.data(), h.stored_size);
    if (ZSTD_isError(r) != 0) {
        fail(c.offset, std::string("corrupted compressed chunk: ") + ZSTD_getErrorName(r));
    }
    if (r != h.raw_size) fail(c.offset, "chunk decompresses to the wrong size");
}

}  // namespace rtmem::analyze::reader
