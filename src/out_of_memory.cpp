// The out-of-memory handler registry used by the typed helpers and adapters.
#include "rtmem/adapt/out_of_memory.hpp"

#include <atomic>
#include <cstdlib>

#include "rtmem/core/violation.hpp"

namespace rtmem {
namespace {

void default_out_of_memory(std::size_t size, std::size_t align) {
    report_violation(violation_kind::out_of_memory, "rtmem", nullptr, size,
                     "allocator exhausted: request of %zu bytes (alignment %zu) failed", size,
                     align);
    std::abort();
}

std::atomic<out_of_memory_handler> current{&default_out_of_memory};

}  // namespace

out_of_memory_handler set_out_of_memory_handler(out_of_memory_handler h) noexcept {
    return current.exchange(h != nullptr ? h : &default_out_of_memory);
}

out_of_memory_handler get_out_of_memory_handler() noexcept {
    return current.load();
}

namespace detail {

void call_out_of_memory_handler(std::size_t size, std::size_t align) noexcept {
    current.load()(size, align);
}

// Compiled with the library's exception setting, but it never throws: it is for callers that
// cannot continue either way.
void out_of_memory_fatal(std::size_t size, std::size_t align) {
    current.load()(size, align);
    std::abort();
}

}  // namespace detail
}  // namespace rtmem
