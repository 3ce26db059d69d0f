// retreat_log: where the top of a stack-ordered allocator went down, so a marker whose bytes were
// freed (and perhaps handed out again) since it was taken is recognised as stale.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem::detail {

/// A marker taken at time t (allocations so far) at position p is intact while no retreat since
/// t went below p. The log keeps the retreats that matter for that question: a later retreat to
/// a lower position hides the earlier ones above it, so the kept entries rise in both time and
/// position and the first entry at or after t holds the lowest retreat since t. The log holds
/// `capacity` entries (nested scopes rarely go deeper); when full, the oldest is forgotten, which
/// can only make an old stale marker pass, never reject a valid one. Updated with checks on only.
class retreat_log {
  public:
    static constexpr std::size_t capacity = 4;

    /// The top went down to `position` at time `now`.
    void note(std::uintptr_t position, std::uint64_t now) noexcept {
        while (size_ > 0 && entries_[size_ - 1].position >= position) --size_;
        if (size_ == capacity) {
            for (std::size_t i = 1; i < capacity; ++i) entries_[i - 1] = entries_[i];
            --size_;
        }
        entries_[size_++] = {position, now};
    }

    /// Whether no retreat at or after time `taken` went below `position`.
    [[nodiscard]] bool intact(std::uintptr_t position, std::uint64_t taken) const noexcept {
        for (std::size_t i = 0; i < size_; ++i)
            if (entries_[i].time >= taken) return entries_[i].position >= position;
        return true;
    }

  private:
    struct entry {
        std::uintptr_t position;
        std::uint64_t time;
    };
    entry entries_[capacity] = {};
    std::size_t size_ = 0;
};

}  // namespace rtmem::detail
