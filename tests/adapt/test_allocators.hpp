// Allocators for adapter tests: counting_allocator checks that every block comes back with the
// size and alignment it was allocated with, and can be given a byte limit to force exhaustion.
#pragma once
#include <cstddef>
#include <map>
#include <string_view>

#include "rtmem/core/malloc_allocator.hpp"

namespace rtmem::testing {

class counting_allocator {
  public:
    static constexpr std::string_view name = "counting_allocator";

    explicit counting_allocator(std::size_t limit = static_cast<std::size_t>(-1)) : limit_(limit) {}
    counting_allocator(const counting_allocator&) = delete;
    counting_allocator& operator=(const counting_allocator&) = delete;

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept {
        if (size > limit_ - live_bytes) return nullptr;
        void* p = up_.allocate(size, align);
        if (p == nullptr) return nullptr;
        blocks_[p] = {size, align};
        live_bytes += size;
        ++allocations;
        return p;
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        if (p == nullptr) return;
        auto it = blocks_.find(p);
        if (it == blocks_.end()) {
            ++bad_frees;
            return;
        }
        if (it->second.size != size || it->second.align != align) ++mismatched_frees;
        live_bytes -= it->second.size;
        blocks_.erase(it);
        ++deallocations;
        up_.deallocate(p, size, align);
    }

    [[nodiscard]] std::size_t live_blocks() const noexcept { return blocks_.size(); }
    void set_limit(std::size_t limit) noexcept { limit_ = limit; }

    std::size_t allocations = 0, deallocations = 0, live_bytes = 0, bad_frees = 0,
                mismatched_frees = 0;

  private:
    struct info {
        std::size_t size, align;
    };
    malloc_allocator up_;
    std::size_t limit_;
    std::map<void*, info> blocks_;
};

}  // namespace rtmem::testing
