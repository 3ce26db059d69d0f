// Violation reporting: the default handler and the handler registry.
#include "rtmem/core/violation.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace rtmem {
namespace {

void default_handler(const violation& v) {
    std::fprintf(stderr, "rtmem: %.*s: %.*s violation: %.*s\n", static_cast<int>(v.allocator.size()),
                 v.allocator.data(), static_cast<int>(to_string(v.kind).size()),
                 to_string(v.kind).data(), static_cast<int>(v.message.size()), v.message.data());
    std::fflush(stderr);
    std::abort();
}

std::atomic<violation_handler> current_handler{&default_handler};

}  // namespace

std::string_view to_string(violation_kind kind) noexcept {
    switch (kind) {
        case violation_kind::bad_alignment: return "bad_alignment";
        case violation_kind::bad_size: return "bad_size";
        case violation_kind::foreign_pointer: return "foreign_pointer";
        case violation_kind::double_free: return "double_free";
        case violation_kind::lifo_order: return "lifo_order";
        case violation_kind::stale_marker: return "stale_marker";
        case violation_kind::size_mismatch: return "size_mismatch";
        case violation_kind::fence_overwritten: return "fence_overwritten";
        case violation_kind::out_of_memory: return "out_of_memory";
        case violation_kind::stale_handle: return "stale_handle";
        case violation_kind::budget_exceeded: return "budget_exceeded";
        case violation_kind::corrupted: return "corrupted";
        case violation_kind::bad_argument: return "bad_argument";
    }
    return "unknown";
}

violation_handler set_violation_handler(violation_handler h) noexcept {
    return current_handler.exchange(h != nullptr ? h : &default_handler);
}

violation_handler get_violation_handler() noexcept { return current_handler.load(); }

void report_violation(violation_kind kind, std::string_view allocator, const void* pointer,
                      std::size_t size, const char* fmt, ...) noexcept {
    char message[512];
    va_list args;
    va_start(args, fmt);
    int n = std::vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    std::size_t len = n < 0 ? 0 : (static_cast<std::size_t>(n) < sizeof message ? static_cast<std::size_t>(n) : sizeof message - 1);
    current_handler.load()(violation{kind, allocator, std::string_view(message, len), pointer, size});
}

}  // namespace rtmem

// The level this library was built with, for the link-time check in rtmem/core/config.hpp.
extern "C" {
const char RTMEM_DETAIL_LEVEL_SYMBOL = static_cast<char>('0' + RTMEM_CHECKS);
}
