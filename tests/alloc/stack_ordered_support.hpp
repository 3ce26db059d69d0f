// Test helpers shared by the stack-ordered allocator tests.
#pragma once
#include <cstddef>
#include <new>
#include <set>

#include "rtmem/core/allocator.hpp"

namespace rtmem::testing {

/// An upstream that counts what it hands out and what comes back, so tests can assert that
/// chunks really return to it.
class counting_upstream {
  public:
    static constexpr std::string_view name = "counting_upstream";
    [[nodiscard]] void* allocate(std::size_t size, std::size_t align) noexcept {
        // Aligned operator new, not std::aligned_alloc: the MS C runtime has no aligned_alloc.
        void* p = ::operator new(size, std::align_val_t{align}, std::nothrow);
        if (p == nullptr) return nullptr;
        ++allocations;
        bytes += size;
        live.insert(p);
        return p;
    }
    void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        if (p == nullptr) return;
        if (live.erase(p) == 1) {
            ++deallocations;
            bytes -= size;
        } else {
            ++bad_frees;
        }
        ::operator delete(p, std::align_val_t{align});
    }
    std::size_t allocations = 0, deallocations = 0, bad_frees = 0, bytes = 0;
    std::set<void*> live;
    bool fail_next = false;
};

}  // namespace rtmem::testing
