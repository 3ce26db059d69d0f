// rtmem's tlsf_allocator as a whole-program replay backend, growing by
// adding pools taken from glibc as the replay needs them: "tlsf" (plain, every free coalesces)
// and "tlsf_cached" (front cache at depth 7), so a trace shows which one its program wants.
#include "rtmem/analyze/replay_backend.hpp"

#include <cstdlib>
#include <span>

#include "rtmem/alloc/tlsf.hpp"

namespace rtmem::analyze {

namespace {

class tlsf_backend final : public replay_backend {
  public:
    explicit tlsf_backend(unsigned cache_depth) {
        grow(0);
        tlsf_.set_cache_depth(cache_depth);
    }
    tlsf_backend(const tlsf_backend&) = delete;
    tlsf_backend& operator=(const tlsf_backend&) = delete;

    void* allocate(replay_call, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        tag = 0;
        void* p = tlsf_.allocate(size, align);
        if (p == nullptr && grow(size + align)) p = tlsf_.allocate(size, align);
        return p;
    }
    void deallocate(replay_call, void* p, std::size_t size, std::size_t align,
                    std::uint32_t) noexcept override {
        tlsf_.deallocate(p, size, align);
    }
    void* reallocate(replay_call, replay_call, void* p, std::size_t old_size, std::size_t size,
                     std::size_t align, std::uint32_t& tag) noexcept override {
        tag = 0;
        void* q = tlsf_.reallocate(p, old_size, size, align);
        if (q == nullptr && grow(size + align)) q = tlsf_.reallocate(p, old_size, size, align);
        return q;
    }
    std::size_t footprint() noexcept override { return pooled_; }
    std::size_t footprint_base() noexcept override { return 0; }

  private:
    bool grow(std::size_t need) noexcept {
        std::size_t bytes = std::size_t{4} << 20;
        while (bytes < need * 2) bytes *= 2;
        void* mem = std::malloc(bytes);
        if (mem == nullptr) return false;
        pools_.blocks.push_back(mem);
        tlsf_.add_pool(std::span<std::byte>(static_cast<std::byte*>(mem), bytes));
        pooled_ += bytes;
        return true;
    }
    /// Declared before the allocator so the pools outlive it (its destructor reads them).
    struct pools {
        std::vector<void*> blocks;
        pools() = default;
        pools(const pools&) = delete;
        pools& operator=(const pools&) = delete;
        ~pools() {
            for (void* p : blocks) std::free(p);
        }
    } pools_;
    rtmem::tlsf_allocator tlsf_;
    std::size_t pooled_ = 0;
};

}  // namespace

backend_factory tlsf_backend_factory() {
    return {"tlsf", [] { return std::unique_ptr<replay_backend>(new tlsf_backend(0)); }, ""};
}
backend_factory tlsf_cached_backend_factory() {
    return {"tlsf_cached", [] { return std::unique_ptr<replay_backend>(new tlsf_backend(7)); }, ""};
}

}  // namespace rtmem::analyze
