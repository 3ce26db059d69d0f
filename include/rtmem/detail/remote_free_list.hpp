// remote_free_list: the blocks other threads freed into one rt_heap thread heap, waiting for its
// owner. An intrusive multi-producer single-consumer queue (D. Vyukov's "intrusive MPSC node-based
// queue"): a push is one atomic exchange and one store, wait-free, so a cross-thread free costs
// the freeing thread O(1) whatever the other threads do; the owner pops with plain loads.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "rtmem/sync/cache_aligned.hpp"

namespace rtmem::detail {

/// What a freed block holds while it waits in the queue: it is its own node (no memory of the
/// queue's own), so its user area must hold three words (every rt_heap block does).
struct remote_node {
    std::atomic<remote_node*> next;
    std::size_t size;     ///< the size passed to deallocate, for the owner's accounting
    std::uintptr_t mark;  ///< queued_mark(this) while queued: catches a second remote free
};

/// A value no live block's third word holds by accident in practice (tied to its address).
inline std::uintptr_t queued_mark(const void* node) noexcept {
    return reinterpret_cast<std::uintptr_t>(node) ^
           static_cast<std::uintptr_t>(0x5A17E0F0DEADC0DEull);
}

class remote_free_list {
  public:
    remote_free_list() noexcept {
        stub_.next.store(nullptr, std::memory_order_relaxed);
        head_->store(&stub_, std::memory_order_relaxed);
        tail_ = &stub_;
    }
    remote_free_list(const remote_free_list&) = delete;
    remote_free_list& operator=(const remote_free_list&) = delete;

    /// Any thread. Wait-free: one exchange, one store. `block` becomes the node.
    void push(void* block, std::size_t size) noexcept {
        auto* n = new (block) remote_node;
        n->size = size;
        n->mark = queued_mark(n);
        link(n);
    }

    /// Owner only: whether nothing was pushed since the last pop found the queue empty. One load
    /// of the shared word (a line other threads write only when they free into this heap).
    [[nodiscard]] bool empty() const noexcept {
        return tail_ == &stub_ && head_->load(std::memory_order_relaxed) == &stub_;
    }

    /// Owner only: the oldest node, or nullptr when empty or when the newest push is half done
    /// (its producer between exchange and link; the node comes out on a later pop). O(1).
    remote_node* pop() noexcept {
        remote_node* tail = tail_;
        remote_node* next = tail->next.load(std::memory_order_acquire);
        if (tail == &stub_) {
            if (next == nullptr) return nullptr;
            tail_ = tail = next;
            next = next->next.load(std::memory_order_acquire);
        }
        if (next != nullptr) {
            tail_ = next;
            return tail;
        }
        if (tail != head_->load(std::memory_order_acquire)) return nullptr;  // push under way
        link(&stub_);  // tail is the last node: put the stub behind it so it can leave
        next = tail->next.load(std::memory_order_acquire);
        if (next == nullptr) return nullptr;
        tail_ = next;
        return tail;
    }

    /// Owner only, while no push is under way: every queued node carries its mark and the queue
    /// ends within `limit` nodes (no cycle). O(queued).
    [[nodiscard]] bool check(std::size_t limit) const noexcept {
        std::size_t n = 0;
        for (const remote_node* p = tail_; p != nullptr;
             p = p->next.load(std::memory_order_acquire)) {
            if (p == &stub_) continue;
            if (p->mark != queued_mark(p) || ++n > limit) return false;
        }
        return true;
    }

  private:
    void link(remote_node* n) noexcept {
        n->next.store(nullptr, std::memory_order_relaxed);
        remote_node* prev = head_->exchange(n, std::memory_order_acq_rel);
        prev->next.store(n, std::memory_order_release);
    }

    // Written by every freeing thread: alone on its line pair.
    cache_aligned<std::atomic<remote_node*>> head_;
    // The owner's side.
    remote_node* tail_;
    remote_node stub_;
};

}  // namespace rtmem::detail
