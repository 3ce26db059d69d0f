// tracked<A>: per-tag accounting over any rtmem allocator (calls, live and peak bytes), memory
// budgets per tag, a report as a table or JSON, and a leak report listing every block still live
// when the tracker is destroyed, with its size, tag and allocating call site.
#pragma once
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/source_location.hpp"
#include "rtmem/diag/tag.hpp"
#include "rtmem/sync/cache_aligned.hpp"
#include "rtmem/sync/per_thread.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace rtmem {

/// One tag's figures. Byte counts are requested sizes (what the caller asked for); live and
/// peak include the tag's descendants ("render" counts "render/textures").
struct tag_stats {
    std::uint64_t allocations = 0;    ///< successful allocations charged to exactly this tag
    std::uint64_t deallocations = 0;  ///< blocks of exactly this tag given back
    std::size_t live_bytes = 0;       ///< bytes live in this tag and below
    std::size_t peak_bytes = 0;       ///< high-water mark of live_bytes
    std::size_t self_live_bytes = 0;  ///< bytes live in exactly this tag
    std::size_t budget = 0;           ///< 0: no budget
};

/// Passed to the budget callback when an allocation would take a tag over its budget.
struct budget_event {
    rtmem::tag tag;           ///< the tag whose budget is exceeded (may be an ancestor)
    rtmem::tag requested_in;  ///< the tag the allocation is charged to
    std::size_t budget;       ///< the tag's budget in bytes
    std::size_t live_bytes;   ///< the tag's live bytes if the allocation goes ahead
    std::size_t request;      ///< the requested size
    rtmem::source_location where;
};

enum class budget_action { allow, deny };
/// Decides whether an allocation over budget goes ahead (deny: allocate returns nullptr). Without
/// a callback, the allocation is denied and a budget_exceeded violation is reported.
using budget_callback = std::function<budget_action(const budget_event&)>;

/// A block still live, as listed by live_blocks() and the leak report.
struct live_block {
    const void* pointer;
    std::size_t size;
    rtmem::tag tag;
    rtmem::source_location where;
};

namespace detail {
void append_json_string(std::string& out, std::string_view s);
std::string format_tag_table(const std::vector<std::pair<tag, tag_stats>>& rows);
std::string format_tag_json(const std::vector<std::pair<tag, tag_stats>>& rows,
                            const rtmem::stats& totals);
std::string format_leaks(std::string_view allocator, const std::vector<live_block>& blocks);
}  // namespace detail

/// Wraps an upstream A it refers to. Each block carries a small header (links, size, tag, call
/// site) so live blocks can be listed; the per-tag byte counters are cache_aligned and the call
/// counters per_thread, and the bookkeeping itself is thread-safe, so tracked<locked<X>> can be
/// shared by threads. The call site recorded is the caller of allocate (through adapters such as
/// resource<> it is the adapter's). Its tables (about 64 KiB) come from the global heap once, at
/// construction.
template <allocator A>
class tracked {
  public:
    static constexpr std::string_view name = "tracked";

    explicit tracked(A& upstream) : up_(&upstream), t_(std::make_unique<tables>()) {}
    tracked(tracked&&) noexcept = default;
    tracked& operator=(tracked&&) = delete;
    tracked(const tracked&) = delete;
    tracked& operator=(const tracked&) = delete;

    /// Reports blocks still live through the leak sink (stderr by default). They are not freed:
    /// the caller may still own them.
    ~tracked() {
        if (!t_) return;
        if (t_->live_count.load(std::memory_order_acquire) != 0) {
            const std::string text = leak_report();
            if (leak_sink_) {
                leak_sink_(text);
            } else {
                std::fputs(text.c_str(), stderr);
            }
        }
    }

    /// Charges the block to the calling thread's current tag (see tag_scope).
    [[nodiscard]] void* allocate(
        std::size_t size, std::size_t align = default_alignment,
        rtmem::source_location where = rtmem::source_location::current()) noexcept {
        return allocate(size, align, current_tag(), where);
    }

    /// Charges the block to t.
    [[nodiscard]] void* allocate(
        std::size_t size, std::size_t align, rtmem::tag t,
        rtmem::source_location where = rtmem::source_location::current()) noexcept {
        if (!is_pow2(align)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two", align);
            return nullptr;
        }
        std::size_t offset = 0, total = 0;
        if (!offset_for(align, offset) || !checked_add(size, offset, total)) [[unlikely]] {
            report_violation(violation_kind::bad_size, name, nullptr, size,
                             "size %zu with alignment %zu overflows", size, align);
            return nullptr;
        }
        if (!charge(t, size, where)) return nullptr;
        auto* base = static_cast<std::byte*>(up_->allocate(total, block_align(align)));
        if (base == nullptr) [[unlikely]] {
            uncharge(t, size);
            return nullptr;
        }
        std::byte* user = base + offset;
        header* h = header_of(user);
        h->size = size;
        h->where = where;
        h->tag = t.id();
        h->magic = live_magic;
        link(h);
        note_peaks(t);
        t_->calls.local().allocations[t.id()].fetch_add(1, std::memory_order_relaxed);
        add_held(total);
        return user;
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        if (p == nullptr) return;
        std::size_t offset = 0;
        if (!is_pow2(align) || !offset_for(align, offset)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, p, size,
                             "deallocate with alignment %zu", align);
            return;
        }
        header* h = header_of(static_cast<std::byte*>(p));
        if (h->magic != live_magic) [[unlikely]] {
            report_violation(h->magic == dead_magic ? violation_kind::double_free
                                                    : violation_kind::foreign_pointer,
                             name, p, size, "%s",
                             h->magic == dead_magic ? "block freed twice" : "not a tracked block");
            return;
        }
        if (h->size != size) [[unlikely]] {
            report_violation(violation_kind::size_mismatch, name, p, size,
                             "freed with size %zu, allocated with %zu at %s:%u", size, h->size,
                             h->where.file_name(), static_cast<unsigned>(h->where.line()));
            return;
        }
        const rtmem::tag t = rtmem::tag::from_id(h->tag);
        unlink(h);
        h->magic = dead_magic;
        uncharge(t, size);
        t_->calls.local().deallocations[t.id()].fetch_add(1, std::memory_order_relaxed);
        t_->held.fetch_sub(size + offset, std::memory_order_relaxed);
        t_->live_count.fetch_sub(1, std::memory_order_release);
        up_->deallocate(reinterpret_cast<std::byte*>(p) - offset, size + offset,
                        block_align(align));
    }

    /// Budget for t and its descendants, in requested bytes (0 removes it).
    void set_budget(rtmem::tag t, std::size_t bytes) noexcept {
        t_->bytes[t.id()]->budget.store(bytes, std::memory_order_relaxed);
    }
    void set_budget_callback(budget_callback cb) { on_budget_ = std::move(cb); }
    /// Where the leak report goes on destruction (default: stderr).
    void set_leak_sink(std::function<void(std::string_view)> sink) { leak_sink_ = std::move(sink); }

    [[nodiscard]] tag_stats stats(rtmem::tag t) const noexcept {
        tag_stats s;
        const auto& b = *t_->bytes[t.id()];
        s.live_bytes = b.live.load(std::memory_order_relaxed);
        s.peak_bytes = b.peak.load(std::memory_order_relaxed);
        s.self_live_bytes = b.self_live.load(std::memory_order_relaxed);
        s.budget = b.budget.load(std::memory_order_relaxed);
        t_->calls.for_each([&](const call_counts& c) {
            s.allocations += c.allocations[t.id()].load(std::memory_order_relaxed);
            s.deallocations += c.deallocations[t.id()].load(std::memory_order_relaxed);
        });
        return s;
    }

    /// Totals in the shape every allocator reports (used includes tracked's headers).
    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        s.used = t_->held.load(std::memory_order_relaxed);
        s.peak = t_->held_peak.load(std::memory_order_relaxed);
        s.live_count = t_->live_count.load(std::memory_order_relaxed);
        s.total_count = t_->total_count.load(std::memory_order_relaxed);
        return s;
    }

    /// Every tag with activity or a budget, as a table ordered by path (children under parents).
    [[nodiscard]] std::string report() const { return detail::format_tag_table(rows()); }
    /// The same figures as a JSON object: {"used":..,"peak":..,"live_blocks":..,"tags":[...]}.
    [[nodiscard]] std::string report_json() const {
        return detail::format_tag_json(rows(), stats());
    }

    [[nodiscard]] std::vector<live_block> live_blocks() const {
        std::vector<live_block> out;
        std::lock_guard guard(t_->list_lock);
        for (const header* h = t_->head; h != nullptr; h = h->next)
            out.push_back(live_block{user_of(h), h->size, rtmem::tag::from_id(h->tag), h->where});
        return out;
    }

    /// The text written on destruction when blocks are still live ("" when none).
    [[nodiscard]] std::string leak_report() const {
        auto blocks = live_blocks();
        return blocks.empty() ? std::string() : detail::format_leaks(A::name, blocks);
    }

    [[nodiscard]] A& upstream() const noexcept { return *up_; }

  private:
    static constexpr std::uint32_t live_magic = 0x7a11c0de;
    static constexpr std::uint32_t dead_magic = 0xdeadb10c;

    struct header {
        header* prev;
        header* next;
        std::size_t size;
        rtmem::source_location where;
        std::uint32_t magic;
        std::uint16_t tag;
    };

    struct tag_bytes {
        std::atomic<std::size_t> live{0}, peak{0}, self_live{0}, budget{0};
    };
    struct call_counts {
        std::array<std::atomic<std::uint64_t>, max_tags> allocations{}, deallocations{};
    };
    struct tables {
        std::array<cache_aligned<tag_bytes>, max_tags> bytes{};
        per_thread<call_counts, 8> calls;
        std::atomic<std::size_t> held{0}, held_peak{0}, live_count{0}, total_count{0};
        spin_mutex list_lock;
        header* head = nullptr;
    };

    static constexpr std::size_t block_align(std::size_t align) noexcept {
        return align > alignof(header) ? align : alignof(header);
    }
    static bool offset_for(std::size_t align, std::size_t& offset) noexcept {
        return checked_align_up(sizeof(header), block_align(align), offset);
    }
    static header* header_of(std::byte* user) noexcept {
        return reinterpret_cast<header*>(user - sizeof(header));
    }
    static const void* user_of(const header* h) noexcept {
        return reinterpret_cast<const std::byte*>(h) + sizeof(header);
    }

    static void raise_peak(std::atomic<std::size_t>& peak, std::size_t value) noexcept {
        std::size_t seen = peak.load(std::memory_order_relaxed);
        while (seen < value &&
               !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
        }
    }

    // Adds size to t and every ancestor's live bytes, checking budgets; undoes everything when
    // denied. Peaks are raised by note_peaks() once the block exists.
    bool charge(rtmem::tag t, std::size_t size, const rtmem::source_location& where) noexcept {
        t_->bytes[t.id()]->self_live.fetch_add(size, std::memory_order_relaxed);
        for (rtmem::tag a = t;; a = a.parent()) {
            auto& b = *t_->bytes[a.id()];
            const std::size_t live = b.live.fetch_add(size, std::memory_order_relaxed) + size;
            const std::size_t budget = b.budget.load(std::memory_order_relaxed);
            if (budget != 0 && live > budget) [[unlikely]] {
                if (!over_budget(budget_event{a, t, budget, live, size, where})) {
                    for (rtmem::tag u = t;; u = u.parent()) {  // roll back up to and including a
                        t_->bytes[u.id()]->live.fetch_sub(size, std::memory_order_relaxed);
                        if (u == a) break;
                    }
                    t_->bytes[t.id()]->self_live.fetch_sub(size, std::memory_order_relaxed);
                    return false;
                }
            }
            if (a.is_root()) return true;
        }
    }

    // After the upstream granted a charged request: only then does it count in the peaks, so
    // a request denied by a budget or by the upstream leaves every peak as it was.
    void note_peaks(rtmem::tag t) noexcept {
        for (rtmem::tag a = t;; a = a.parent()) {
            auto& b = *t_->bytes[a.id()];
            raise_peak(b.peak, b.live.load(std::memory_order_relaxed));
            if (a.is_root()) return;
        }
    }

    void uncharge(rtmem::tag t, std::size_t size) noexcept {
        t_->bytes[t.id()]->self_live.fetch_sub(size, std::memory_order_relaxed);
        for (rtmem::tag a = t;; a = a.parent()) {
            t_->bytes[a.id()]->live.fetch_sub(size, std::memory_order_relaxed);
            if (a.is_root()) return;
        }
    }

    RTMEM_NOINLINE bool over_budget(const budget_event& e) noexcept {
        if (on_budget_) return on_budget_(e) == budget_action::allow;
        const std::string_view path = e.tag.path();
        report_violation(
            violation_kind::budget_exceeded, name, nullptr, e.request,
            "tag \"%.*s\": %zu bytes live with this request of %zu, budget %zu (%s:%u)",
            static_cast<int>(path.size()), path.data(), e.live_bytes, e.request, e.budget,
            e.where.file_name(), static_cast<unsigned>(e.where.line()));
        return false;
    }

    void add_held(std::size_t total) noexcept {
        raise_peak(t_->held_peak, t_->held.fetch_add(total, std::memory_order_relaxed) + total);
        t_->total_count.fetch_add(1, std::memory_order_relaxed);
        t_->live_count.fetch_add(1, std::memory_order_release);
    }

    void link(header* h) noexcept {
        std::lock_guard guard(t_->list_lock);
        h->prev = nullptr;
        h->next = t_->head;
        if (t_->head != nullptr) t_->head->prev = h;
        t_->head = h;
    }
    void unlink(header* h) noexcept {
        std::lock_guard guard(t_->list_lock);
        if (h->prev != nullptr)
            h->prev->next = h->next;
        else
            t_->head = h->next;
        if (h->next != nullptr) h->next->prev = h->prev;
    }

    std::vector<std::pair<rtmem::tag, tag_stats>> rows() const {
        std::vector<std::pair<rtmem::tag, tag_stats>> out;
        const std::size_t n = tag_count();
        for (std::size_t i = 0; i < n; ++i) {
            const auto t = rtmem::tag::from_id(static_cast<std::uint16_t>(i));
            const tag_stats s = stats(t);
            if (i == 0 || s.allocations != 0 || s.peak_bytes != 0 || s.budget != 0)
                out.emplace_back(t, s);
        }
        return out;
    }

    A* up_;
    std::unique_ptr<tables> t_;
    budget_callback on_budget_;
    std::function<void(std::string_view)> leak_sink_;
};

}  // namespace rtmem
