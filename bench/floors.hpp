// Hand-written floors: the least work an allocation of each kind can do. Every ratio in the
// report is measured against one of these in the same run (docs/benchmarks.md, "Floors").
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace rtmem::bench {

/// Bump pointer over one malloc'd, pre-faulted buffer: align up, add, compare, store.
class bump_floor {
  public:
    explicit bump_floor(std::size_t capacity)
        : buffer_(static_cast<std::byte*>(std::malloc(capacity))), end_(buffer_ + capacity) {
        if (buffer_ == nullptr) throw std::bad_alloc();
        for (std::byte* p = buffer_; p < end_; p += 4096) *p = std::byte{0};  // prefault
        cur_ = buffer_;
    }
    ~bump_floor() { std::free(buffer_); }
    bump_floor(const bump_floor&) = delete;
    bump_floor& operator=(const bump_floor&) = delete;

    void* allocate(std::size_t size, std::size_t align = alignof(std::max_align_t)) noexcept {
        auto cur = reinterpret_cast<std::uintptr_t>(cur_);
        std::uintptr_t aligned = (cur + align - 1) & ~(align - 1);
        std::uintptr_t next = aligned + size;
        if (next > reinterpret_cast<std::uintptr_t>(end_)) [[unlikely]]
            return nullptr;
        cur_ = reinterpret_cast<std::byte*>(next);
        return reinterpret_cast<void*>(aligned);
    }
    void deallocate(void*, std::size_t, std::size_t = 0) noexcept {}
    std::byte* marker() const noexcept { return cur_; }
    void rewind(std::byte* m) noexcept { cur_ = m; }
    void reset() noexcept { cur_ = buffer_; }

  private:
    std::byte* buffer_;
    std::byte* end_;
    std::byte* cur_;
};

/// Intrusive free list of fixed-size blocks carved from one pre-faulted buffer: pop and push.
class free_list_floor {
  public:
    free_list_floor(std::size_t block_size, std::size_t blocks)
        : block_((block_size + sizeof(void*) - 1) / sizeof(void*) * sizeof(void*)),
          storage_(block_ * blocks / sizeof(void*)) {
        auto* base = reinterpret_cast<std::byte*>(storage_.data());
        for (std::size_t i = blocks; i-- > 0;) push(base + i * block_);
    }
    void* allocate(std::size_t = 0, std::size_t = 0) noexcept {
        node* n = head_;
        if (n == nullptr) [[unlikely]]
            return nullptr;
        head_ = n->next;
        return n;
    }
    void deallocate(void* p, std::size_t = 0, std::size_t = 0) noexcept { push(p); }
    std::size_t block_size() const noexcept { return block_; }

  private:
    struct node {
        node* next;
    };
    void push(void* p) noexcept {
        auto* n = static_cast<node*>(p);
        n->next = head_;
        head_ = n;
    }
    std::size_t block_;
    std::vector<void*> storage_;  // void*-aligned, zero-filled (so pre-faulted) by the vector
    node* head_ = nullptr;
};

}  // namespace rtmem::bench
