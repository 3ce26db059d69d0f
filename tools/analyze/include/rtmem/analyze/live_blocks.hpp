// The one live-block model of the analyses: every block allocated and not yet freed, by
// address, with what its allocation said about it. Open addressing with linear probing and
// backward-shift deletion: no tombstones, no per-node memory, one probe for most lookups.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rtmem::analyze {

/// 48 bytes: the map is the analyses' hot memory, so a block holds only what they all need.
struct live_block {
    std::uint64_t ptr = 0;  ///< 0 = empty slot
    std::uint64_t size = 0;
    std::uint64_t time_ns = 0;  ///< when it was allocated
    std::uint64_t seq = 0;      ///< allocations before it in the trace (its allocation number)
    std::uint32_t stack = 0;
    std::uint32_t thread = 0;  ///< the allocating thread
    /// Frame markers before it, modulo 2^32: subtract in 32 bits for a span in frames.
    std::uint32_t frame = 0;
    std::uint32_t tag = 0;  ///< free for the consumer (replay: the block's slot)
};
static_assert(sizeof(live_block) == 48);

class live_blocks {
  public:
    live_blocks() : slots_(1024), mask_(1023) {}

    /// Adds `b`; a block already at b.ptr (freed without a recorded free) is replaced.
    live_block& insert(const live_block& b) {
        if ((size_ + 1) * 4 > slots_.size() * 3) grow();
        std::size_t i = slot_of(b.ptr);
        while (slots_[i].ptr != 0 && slots_[i].ptr != b.ptr) i = (i + 1) & mask_;
        if (slots_[i].ptr == 0) ++size_;
        slots_[i] = b;
        return slots_[i];
    }
    /// Removes the block at `ptr` into `out`; false if no block lives there.
    bool take(std::uint64_t ptr, live_block& out) {
        std::size_t i = slot_of(ptr);
        for (;; i = (i + 1) & mask_) {
            if (slots_[i].ptr == 0) return false;
            if (slots_[i].ptr == ptr) break;
        }
        out = slots_[i];
        std::size_t hole = i;
        for (std::size_t j = (i + 1) & mask_; slots_[j].ptr != 0; j = (j + 1) & mask_) {
            std::size_t home = slot_of(slots_[j].ptr);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!stays) {
                slots_[hole] = slots_[j];
                hole = j;
            }
        }
        slots_[hole].ptr = 0;
        --size_;
        return true;
    }
    template <class F>
    void for_each(F&& f) const {
        for (const auto& s : slots_) {
            if (s.ptr != 0) f(s);
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

  private:
    std::size_t slot_of(std::uint64_t p) const noexcept {
        p ^= p >> 33;
        p *= 0xff51afd7ed558ccdull;
        p ^= p >> 33;
        return static_cast<std::size_t>(p) & mask_;
    }
    void grow() {
        std::vector<live_block> old(slots_.size() * 2);
        old.swap(slots_);
        mask_ = slots_.size() - 1;
        size_ = 0;
        for (const auto& s : old) {
            if (s.ptr != 0) insert(s);
        }
    }
    std::vector<live_block> slots_;
    std::size_t mask_;
    std::size_t size_ = 0;
};

}  // namespace rtmem::analyze
