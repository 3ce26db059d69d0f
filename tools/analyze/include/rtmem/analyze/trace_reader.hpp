// Reads an .rtt trace written by librtmem-trace.so as an event_source, in bounded memory:
// one decompressed chunk per thread at a time, merged into time order.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rtmem/analyze/event.hpp"

namespace rtmem::analyze {

/// Bad input: names the file and the byte offset where the problem was found.
class trace_error : public std::runtime_error {
  public:
    trace_error(std::string file, std::uint64_t offset, const std::string& what);
    [[nodiscard]] const std::string& file() const noexcept { return file_; }
    [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }

  private:
    std::string file_;
    std::uint64_t offset_;
};

/// A loaded object of the traced process: [start, end) absolute addresses of its mappings.
struct module {
    std::string path;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t bias = 0;  ///< load bias (l_addr): file address = address - bias
};

/// How the traced process ended, when it said so (dump: a snapshot by rtmem_trace_dump()).
enum class trace_end { unknown, exit, quick_exit, signal, exec, dump };

/// Events with from_ns <= time < to_ns (ns since the start of recording).
struct time_window {
    std::uint64_t from_ns = 0;
    std::uint64_t to_ns = ~std::uint64_t{0};
};

class trace_reader final : public event_source {
  public:
    /// Opens and indexes the file (reads stacks, modules and metadata; events stream later).
    /// Throws trace_error on a missing, empty, truncated, corrupted or wrong-version file.
    explicit trace_reader(const std::string& path);
    ~trace_reader() override;
    trace_reader(const trace_reader&) = delete;
    trace_reader& operator=(const trace_reader&) = delete;

    bool next(event& e) override;  ///< throws trace_error on a corrupted events chunk
    void rewind() override;
    [[nodiscard]] std::span<const std::uint64_t> stack(std::uint32_t id) const override;
    [[nodiscard]] std::size_t stack_count() const override;

    [[nodiscard]] const std::string& path() const noexcept;
    [[nodiscard]] const std::string& program() const noexcept;  ///< executable path
    [[nodiscard]] const std::string& command_line() const noexcept;
    [[nodiscard]] std::uint32_t pid() const noexcept;
    [[nodiscard]] std::uint32_t stack_depth() const noexcept;
    [[nodiscard]] std::uint64_t start_realtime_ns() const noexcept;
    [[nodiscard]] const std::vector<module>& modules() const noexcept;
    [[nodiscard]] std::uint64_t event_count() const noexcept;  ///< from the chunk index
    [[nodiscard]] std::uint32_t thread_count() const noexcept;
    [[nodiscard]] std::uint64_t file_size() const noexcept;
    /// False when the process died without writing the end record (e.g. SIGKILL); the
    /// events up to the last complete chunk are still read.
    [[nodiscard]] bool complete() const noexcept;
    [[nodiscard]] trace_end end() const noexcept;
    [[nodiscard]] int end_signal() const noexcept;
    /// Calls the tracer saw but could not record (from the end record; 0 without one), e.g.
    /// made by other threads while the process was already ending.
    [[nodiscard]] std::uint64_t dropped_events() const noexcept;
    /// Events the tracer says it recorded (from the end record; 0 without one): equal to the
    /// events in the file unless output was lost.
    [[nodiscard]] std::uint64_t recorded_events() const noexcept;
    /// Restricts next() to the events in `w` and rewinds. With an index (complete traces)
    /// chunks outside the window are skipped unread; without one (a killed process) every
    /// chunk up to the window's end is decoded and filtered. The default is the whole trace.
    void set_window(time_window w);
    [[nodiscard]] time_window window() const noexcept;
    /// True when the end chunk's index gives every events chunk's first time (seekable).
    [[nodiscard]] bool indexed() const noexcept;
    /// Events chunks decompressed since the reader was opened (to measure seeking).
    [[nodiscard]] std::uint64_t chunks_decoded() const noexcept;
    /// The allocator time the call last returned by next() stands for: the tracer times a
    /// random sample of calls (one in timing_period()), so this is the measured ns ×
    /// timing_period() for a timed call and 0 for the others. Sums over many calls estimate
    /// the total time; a single value does not describe its own call.
    [[nodiscard]] std::uint64_t last_duration_ns() const noexcept override;
    /// One call in this many was timed (1: every call, as in version 1 traces).
    [[nodiscard]] std::uint32_t timing_period() const noexcept override;
    /// Mean sampling interval in bytes of a sampled trace (`record --sample`); 0: every call.
    [[nodiscard]] std::uint64_t sample_interval() const noexcept override;
    /// The exact counts of every call made while recording (v3 traces that ended cleanly or
    /// were dumped); nothing otherwise.
    [[nodiscard]] const call_counts* exact_counts() const noexcept override;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace rtmem::analyze
