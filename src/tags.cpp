// The process-wide tag registry: a fixed table (no heap allocation, so it is usable while the
// global operator new is routed through a tracked allocator).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "rtmem/core/violation.hpp"
#include "rtmem/diag/tag.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace rtmem {
namespace detail {
std::uint16_t tag_parents[max_tags] = {};
}

namespace {

struct tag_entry {
    char path[max_tag_path + 1];
    std::uint8_t length;
    std::uint8_t depth;
};

tag_entry entries[max_tags] = {};
std::atomic<std::size_t> count{1};  // entry 0 is the root ""
spin_mutex intern_lock;             // interning is rare; a spin lock needs no construction

// Finds or adds one path whose parent is already interned. Called with intern_lock held.
std::uint16_t intern_one(std::string_view path, std::uint16_t parent, std::uint8_t depth) {
    const std::size_t n = count.load(std::memory_order_relaxed);
    for (std::size_t i = 1; i < n; ++i)
        if (std::string_view(entries[i].path, entries[i].length) == path)
            return static_cast<std::uint16_t>(i);
    if (n == max_tags) {
        report_violation(violation_kind::bad_argument, "tag", nullptr, max_tags,
                         "more than %zu tags: \"%.*s\" not interned, using the root", max_tags,
                         static_cast<int>(path.size()), path.data());
        return 0;
    }
    std::memcpy(entries[n].path, path.data(), path.size());
    entries[n].path[path.size()] = '\0';
    entries[n].length = static_cast<std::uint8_t>(path.size());
    entries[n].depth = depth;
    detail::tag_parents[n] = parent;
    count.store(n + 1, std::memory_order_release);
    return static_cast<std::uint16_t>(n);
}

bool valid(std::string_view path) {
    if (path.size() > max_tag_path || path.front() == '/' || path.back() == '/') return false;
    return path.find("//") == std::string_view::npos;
}

}  // namespace

tag::tag(std::string_view path) noexcept {
    if (path.empty()) return;
    if (!valid(path)) {
        report_violation(violation_kind::bad_argument, "tag", nullptr, path.size(),
                         "invalid tag \"%.*s\" (empty segment, or longer than %zu characters)",
                         static_cast<int>(std::min<std::size_t>(path.size(), 200)), path.data(),
                         max_tag_path);
        return;
    }
    std::lock_guard guard(intern_lock);
    std::uint16_t parent = 0;
    std::uint8_t depth = 0;
    std::size_t end = 0;
    do {
        end = path.find('/', end + (depth == 0 ? 0 : 1));
        const std::string_view prefix = path.substr(0, end);
        parent = intern_one(prefix, parent, ++depth);
        if (parent == 0) return;  // table full
    } while (end != std::string_view::npos);
    id_ = parent;
}

std::string_view tag::path() const noexcept {
    return {entries[id_].path, entries[id_].length};
}

std::string_view tag::leaf() const noexcept {
    const std::string_view p = path();
    const auto slash = p.rfind('/');
    return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

std::size_t tag::depth() const noexcept {
    return entries[id_].depth;
}

bool tag::is_within(tag ancestor) const noexcept {
    for (tag t = *this;; t = t.parent()) {
        if (t == ancestor) return true;
        if (t.is_root()) return false;
    }
}

std::size_t tag_count() noexcept {
    return count.load(std::memory_order_acquire);
}

}  // namespace rtmem
