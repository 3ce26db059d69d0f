// Reads .rtt traces: one pass over the chunk headers at open (reader/trace_catalog: stacks,
// modules and metadata are loaded, events chunks only located), then events stream per thread,
// merged by time (reader/event_merge), from the file (reader/trace_file).
#include "rtmem/analyze/trace_reader.hpp"

#include "reader/event_merge.hpp"
#include "reader/trace_catalog.hpp"
#include "reader/trace_file.hpp"

namespace rtmem::analyze {

trace_error::trace_error(std::string file, std::uint64_t offset, const std::string& what)
    : std::runtime_error(file + ": offset " + std::to_string(offset) + ": " + what),
      file_(std::move(file)),
      offset_(offset) {}

struct trace_reader::impl {
    explicit impl(const std::string& path)
        : file(path), catalog(reader::scan(file)), merge(file, catalog.threads) {}
    reader::trace_file file;
    reader::trace_catalog catalog;
    reader::event_merge merge;
    time_window window;
    std::uint64_t last_duration = 0;
};

trace_reader::trace_reader(const std::string& path) : impl_(std::make_unique<impl>(path)) {
    impl_->merge.restart(impl_->window);
}

trace_reader::~trace_reader() = default;

bool trace_reader::next(event& e) {
    return impl_->merge.next(e, impl_->last_duration);
}
void trace_reader::rewind() {
    impl_->merge.restart(impl_->window);
}
std::span<const std::uint64_t> trace_reader::stack(std::uint32_t id) const {
    const auto& c = impl_->catalog;
    if (id >= c.stacks.size()) return {};
    auto [first, depth] = c.stacks[id];
    return {c.ips.data() + first, depth};
}
std::size_t trace_reader::stack_count() const {
    return impl_->catalog.stacks.size();
}
const std::string& trace_reader::path() const noexcept {
    return impl_->file.path();
}
const std::string& trace_reader::program() const noexcept {
    return impl_->catalog.program;
}
const std::string& trace_reader::command_line() const noexcept {
    return impl_->catalog.command;
}
std::uint32_t trace_reader::pid() const noexcept {
    return impl_->file.header().pid;
}
std::uint32_t trace_reader::stack_depth() const noexcept {
    return impl_->file.header().stack_depth;
}
std::uint64_t trace_reader::start_realtime_ns() const noexcept {
    return impl_->file.header().start_realtime;
}
const std::vector<module>& trace_reader::modules() const noexcept {
    return impl_->catalog.modules;
}
std::uint64_t trace_reader::event_count() const noexcept {
    return impl_->catalog.events;
}
std::uint32_t trace_reader::thread_count() const noexcept {
    return static_cast<std::uint32_t>(impl_->catalog.threads.size());
}
std::uint64_t trace_reader::file_size() const noexcept {
    return impl_->file.size();
}
bool trace_reader::complete() const noexcept {
    return impl_->catalog.complete;
}
trace_end trace_reader::end() const noexcept {
    return impl_->catalog.end;
}
int trace_reader::end_signal() const noexcept {
    return impl_->catalog.end_signal;
}
std::uint64_t trace_reader::dropped_events() const noexcept {
    return impl_->catalog.dropped;
}
std::uint64_t trace_reader::recorded_events() const noexcept {
    return impl_->catalog.recorded;
}
void trace_reader::set_window(time_window w) {
    impl_->window = w;
    impl_->merge.restart(w);
}
time_window trace_reader::window() const noexcept {
    return impl_->window;
}
bool trace_reader::indexed() const noexcept {
    return impl_->catalog.indexed;
}
std::uint64_t trace_reader::chunks_decoded() const noexcept {
    return impl_->merge.chunks_decoded();
}
std::uint32_t trace_reader::timing_period() const noexcept {
    return impl_->file.timing_period();
}
std::uint64_t trace_reader::sample_interval() const noexcept {
    const auto& h = impl_->file.header();
    return h.version >= 3 ? h.sample_interval : 0;
}
const call_counts* trace_reader::exact_counts() const noexcept {
    return impl_->catalog.has_counts ? &impl_->catalog.counts : nullptr;
}
std::uint64_t trace_reader::last_duration_ns() const noexcept {
    return impl_->last_duration;
}

}  // namespace rtmem::analyze
