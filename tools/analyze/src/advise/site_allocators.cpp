// The advised rtmem allocators as mixed-replay adapters. One instance per thread (the advice
// says thread_local); misuse is detected here before the allocator sees it.
#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/frame.hpp"
#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/stack.hpp"
#include "site_allocator.hpp"

namespace rtmem::analyze::detail {
namespace {

/// What every per-thread site allocator shares: one Instance per thread, made on first use
/// (or by prepare) from the arguments given at construction, and a footprint of
/// `instance_bytes` per instance made.
template <class Instance, class... Args>
class per_thread_site : public site_allocator {
  public:
    explicit per_thread_site(std::size_t instance_bytes, Args... args)
        : instance_bytes_(instance_bytes), args_(args...) {}
    void prepare(std::uint32_t thread) override { (void)of(thread); }
    [[nodiscard]] std::size_t footprint() const noexcept override {
        std::size_t made = 0;
        for (const auto& i : instances_) made += i != nullptr;
        return instance_bytes_ * made;
    }

  protected:
    Instance& of(std::uint32_t thread) {
        if (thread >= instances_.size()) instances_.resize(thread + 1);
        if (!instances_[thread]) {
            instances_[thread] = std::apply(
                [](const Args&... a) { return std::make_unique<Instance>(a...); }, args_);
        }
        return *instances_[thread];
    }
    template <class F>
    void for_each_instance(F&& f) {
        for (auto& i : instances_) {
            if (i) f(*i);
        }
    }

  private:
    std::size_t instance_bytes_;
    std::tuple<Args...> args_;
    std::vector<std::unique_ptr<Instance>> instances_;
};

/// `alloc.allocate(size, align)`; a failure is counted as an overflow (the caller falls back).
template <class Alloc>
void* allocate_or_count(Alloc& alloc, std::size_t size, std::size_t align,
                        site_violations& v) noexcept {
    void* p = alloc.allocate(size, align);
    if (p == nullptr) ++v.overflow;
    return p;
}

struct stack_instance {
    struct entry {
        void* p;
        std::size_t size, align;
        bool live;
    };
    rtmem::stack_allocator alloc;
    std::vector<entry> order;
    explicit stack_instance(std::size_t bytes) : alloc(bytes) {}
};

/// stack_allocator: a free that is not the thread's most recent block is a violation; the
/// block stays allocated until the blocks above it are freed, then all go in LIFO order.
class stack_site final : public per_thread_site<stack_instance, std::size_t> {
  public:
    explicit stack_site(std::size_t capacity) : per_thread_site(capacity, capacity) {}
    void* allocate(std::uint32_t thread, std::size_t size, std::size_t align, std::uint32_t& tag,
                   site_violations& v) noexcept override {
        stack_instance& in = of(thread);
        void* p = allocate_or_count(in.alloc, size, align, v);
        if (p == nullptr) return nullptr;
        in.order.push_back({p, size, align, true});
        tag = thread + 1;
        return p;
    }
    void deallocate(std::uint32_t, void* p, std::size_t, std::size_t, std::uint32_t tag,
                    site_violations& v) noexcept override {
        stack_instance& in = of(tag - 1);
        auto& order = in.order;
        if (!order.empty() && order.back().p == p) {
            order.back().live = false;
        } else {
            ++v.non_lifo;
            for (auto it = order.rbegin(); it != order.rend(); ++it) {
                if (it->p == p) {
                    it->live = false;
                    break;
                }
            }
        }
        while (!order.empty() && !order.back().live) {
            in.alloc.deallocate(order.back().p, order.back().size, order.back().align);
            order.pop_back();
        }
    }
    /// The top block grows or shrinks where it is (free it, allocate again at the same top).
    void* reallocate(std::uint32_t thread, void* p, std::size_t, std::size_t size,
                     std::size_t align, std::uint32_t& tag, site_violations& v) noexcept override {
        stack_instance& in = of(tag - 1);
        if (in.order.empty() || in.order.back().p != p) return nullptr;
        in.alloc.deallocate(p, in.order.back().size, in.order.back().align);
        in.order.pop_back();
        void* q = allocate(thread, size, align, tag, v);
        if (q == nullptr) tag = 0;  // released, and the new size did not fit: caller falls back
        return q;
    }
};

struct linear_instance {
    rtmem::linear_allocator alloc;
    std::uint64_t live = 0;
    explicit linear_instance(std::size_t bytes) : alloc(bytes) {}
};

/// linear_allocator: frees are no-ops; the allocator is reset when the site's blocks of that
/// thread are all freed (the bulk free the advice relies on).
class linear_site final : public per_thread_site<linear_instance, std::size_t> {
  public:
    explicit linear_site(std::size_t capacity) : per_thread_site(capacity, capacity) {}
    void* allocate(std::uint32_t thread, std::size_t size, std::size_t align, std::uint32_t& tag,
                   site_violations& v) noexcept override {
        linear_instance& in = of(thread);
        void* p = allocate_or_count(in.alloc, size, align, v);
        if (p == nullptr) return nullptr;
        ++in.live;
        tag = thread + 1;
        return p;
    }
    void deallocate(std::uint32_t, void*, std::size_t, std::size_t, std::uint32_t tag,
                    site_violations&) noexcept override {
        linear_instance& in = of(tag - 1);
        if (--in.live == 0) in.alloc.reset();
    }
};

struct pool_instance {
    rtmem::pool_allocator<> alloc;
    std::uint64_t live = 0;
    pool_instance(std::size_t block, std::size_t align, std::size_t count)
        : alloc(block, align, count) {}
};

/// pool_allocator with the advised capacity: a larger block or a full pool falls back.
class pool_site final
    : public per_thread_site<pool_instance, std::size_t, std::size_t, std::size_t> {
  public:
    pool_site(std::size_t block, std::size_t align, std::size_t capacity)
        : per_thread_site(block * capacity, block, align, capacity),
          block_(block),
          align_(align),
          capacity_(capacity) {}
    void* allocate(std::uint32_t thread, std::size_t size, std::size_t align, std::uint32_t& tag,
                   site_violations& v) noexcept override {
        if (size > block_ || align > std::max<std::size_t>(align_, 16)) {  // 16: malloc's own
            ++v.wrong_size;
            return nullptr;
        }
        pool_instance& in = of(thread);
        if (in.live == capacity_) {
            ++v.overflow;
            return nullptr;
        }
        void* p = allocate_or_count(in.alloc, block_, align_, v);
        if (p == nullptr) return nullptr;
        ++in.live;
        tag = thread + 1;
        return p;
    }
    void deallocate(std::uint32_t, void* p, std::size_t, std::size_t, std::uint32_t tag,
                    site_violations&) noexcept override {
        pool_instance& in = of(tag - 1);
        in.alloc.deallocate(p, block_, align_);
        --in.live;
    }

  private:
    std::size_t block_, align_, capacity_;
};

template <std::size_t N>
struct frame_instance {
    rtmem::frame_allocator<N> alloc;
    std::uint64_t live = 0;
    explicit frame_instance(std::size_t bytes) : alloc(bytes) {}
};

/// frame_allocator<N>: frees are no-ops; a block freed after its frame was recycled is counted
/// (in the program it would be a use after free). Without frame markers (a detected period),
/// the frame advances when the site's blocks are all freed.
template <std::size_t N>
class frame_site final : public per_thread_site<frame_instance<N>, std::size_t> {
    using base = per_thread_site<frame_instance<N>, std::size_t>;

  public:
    frame_site(std::size_t bytes, bool markers) : base(bytes * N, bytes), markers_(markers) {}
    void* allocate(std::uint32_t thread, std::size_t size, std::size_t align, std::uint32_t& tag,
                   site_violations& v) noexcept override {
        frame_instance<N>& in = this->of(thread);
        void* p = allocate_or_count(in.alloc, size, align, v);
        if (p == nullptr) return nullptr;
        ++in.live;
        tag = static_cast<std::uint32_t>(frame_ + 1);
        return p;
    }
    void deallocate(std::uint32_t thread, void*, std::size_t, std::size_t, std::uint32_t tag,
                    site_violations& v) noexcept override {
        if (frame_ + 1 - tag >= N) ++v.expired;
        frame_instance<N>& in = this->of(thread);
        if (in.live > 0) --in.live;
        if (!markers_ && in.live == 0) in.alloc.next_frame();
    }
    void next_frame() noexcept override {
        ++frame_;
        this->for_each_instance([](frame_instance<N>& in) { in.alloc.next_frame(); });
    }

  private:
    bool markers_;
    std::uint64_t frame_ = 0;
};

/// arena for long-lived blocks: grows by chunks, frees are no-ops.
class arena_site final : public site_allocator {
  public:
    explicit arena_site(std::size_t chunk) : chunk_(chunk), arena_(chunk) {}
    void* allocate(std::uint32_t, std::size_t size, std::size_t align, std::uint32_t& tag,
                   site_violations& v) noexcept override {
        void* p = allocate_or_count(arena_, size, align, v);
        if (p == nullptr) return nullptr;
        used_ += size;
        tag = 1;
        return p;
    }
    void deallocate(std::uint32_t, void*, std::size_t, std::size_t, std::uint32_t,
                    site_violations&) noexcept override {}
    void prepare(std::uint32_t) override {}
    [[nodiscard]] std::size_t footprint() const noexcept override {
        return (used_ / chunk_ + 1) * chunk_;
    }

  private:
    std::size_t chunk_;
    rtmem::arena arena_;
    std::size_t used_ = 0;
};

}  // namespace

std::unique_ptr<site_allocator> make_site_allocator(const recommendation& r, bool have_frames,
                                                    std::string& why_not) {
    switch (r.cls) {
        case site_class::stack:
            return std::make_unique<stack_site>(r.capacity_bytes);
        case site_class::linear:
            return std::make_unique<linear_site>(r.capacity_bytes);
        case site_class::pool:
            return std::make_unique<pool_site>(r.block_size, r.block_align, r.capacity_blocks);
        case site_class::frame:
            switch (r.frames) {
                case 1:
                    return std::make_unique<frame_site<1>>(r.capacity_bytes, have_frames);
                case 2:
                    return std::make_unique<frame_site<2>>(r.capacity_bytes, have_frames);
                default:
                    return std::make_unique<frame_site<3>>(r.capacity_bytes, have_frames);
            }
        case site_class::long_lived:
            return std::make_unique<arena_site>(r.capacity_bytes);
        case site_class::general:
            why_not = "general sites stay on the baseline";
            return nullptr;
    }
    return nullptr;
}

}  // namespace rtmem::analyze::detail
