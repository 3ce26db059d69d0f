// owned_buffer: the one buffer a linear, stack or double-ended allocator bumps through, either
// caller memory or a capacity taken once from an upstream (and handed back at destruction).
#pragma once
#include <cstddef>
#include <span>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem::detail {

/// Owns (or only borrows) [begin, end) and keeps ASan's view of it right: the whole buffer is
/// poisoned at the start and unpoisoned when given up, caller memory included, so the caller can
/// reuse it. When the upstream cannot supply the capacity the buffer is empty (begin == end ==
/// nullptr). Movable: the moved-from buffer is empty and owns nothing.
class owned_buffer {
  public:
    owned_buffer() noexcept = default;

    /// Caller memory; the caller keeps it alive longer than the buffer.
    explicit owned_buffer(std::span<std::byte> caller) noexcept
        : begin_(caller.data()), end_(begin_ + caller.size()) {
        poison(begin_, caller.size());
    }

    /// `capacity` bytes from `upstream`, given back by the destructor.
    owned_buffer(std::size_t capacity, upstream_ref upstream) noexcept
        : upstream_(upstream), owned_(true) {
        auto* p = static_cast<std::byte*>(upstream_.allocate(capacity, default_alignment));
        if (p == nullptr) return;
        begin_ = p;
        end_ = p + capacity;
        poison(begin_, capacity);
    }

    owned_buffer(owned_buffer&& o) noexcept
        : begin_(std::exchange(o.begin_, nullptr)),
          end_(std::exchange(o.end_, nullptr)),
          upstream_(o.upstream_),
          owned_(std::exchange(o.owned_, false)) {}
    owned_buffer& operator=(owned_buffer&& o) noexcept {
        if (this != &o) {
            release();
            begin_ = std::exchange(o.begin_, nullptr);
            end_ = std::exchange(o.end_, nullptr);
            upstream_ = o.upstream_;
            owned_ = std::exchange(o.owned_, false);
        }
        return *this;
    }
    owned_buffer(const owned_buffer&) = delete;
    owned_buffer& operator=(const owned_buffer&) = delete;
    ~owned_buffer() { release(); }

    [[nodiscard]] std::byte* begin() const noexcept { return begin_; }
    [[nodiscard]] std::byte* end() const noexcept { return end_; }
    [[nodiscard]] std::size_t size() const noexcept {
        return static_cast<std::size_t>(end_ - begin_);
    }

  private:
    void release() noexcept {
        if (begin_ == nullptr) return;
        unpoison(begin_, size());  // caller memory too
        if (owned_) upstream_.deallocate(begin_, size(), default_alignment);
        begin_ = end_ = nullptr;
        owned_ = false;
    }

    std::byte* begin_ = nullptr;
    std::byte* end_ = nullptr;
    upstream_ref upstream_{};
    bool owned_ = false;
};

}  // namespace rtmem::detail
