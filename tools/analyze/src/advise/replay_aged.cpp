#include "rtmem/analyze/replay_aged.hpp"

#include <algorithm>
#include <random>

namespace rtmem::analyze {

namespace {

constexpr std::size_t litter_align = 16;  // the replay's default alignment, as malloc's

class aged final : public replay_backend {
  public:
    aged(std::unique_ptr<replay_backend> inner, const litter_plan& litter)
        : inner_(std::move(inner)) {
        (void)inner_->footprint_base();  // the inner backend's starting point (glibc: free space held)
        const replay_call who{0, 0, false};
        std::vector<void*> blocks(litter.sizes.size());
        tags_.resize(litter.sizes.size());
        for (std::size_t i = 0; i < blocks.size(); ++i)
            blocks[i] = inner_->allocate(who, litter.sizes[i], litter_align, tags_[i]);
        std::vector<bool> freed(blocks.size(), false);
        for (std::uint32_t i : litter.free_order) {
            if (i >= blocks.size() || freed[i]) continue;
            if (blocks[i] != nullptr) inner_->deallocate(who, blocks[i], litter.sizes[i], litter_align, tags_[i]);
            freed[i] = true;
        }
        for (std::size_t i = 0; i < blocks.size(); ++i)
            if (!freed[i] && blocks[i] != nullptr) kept_.push_back({blocks[i], litter.sizes[i], tags_[i]});
        base_ = inner_->footprint();
    }
    aged(const aged&) = delete;
    aged& operator=(const aged&) = delete;
    ~aged() override {
        for (const auto& k : kept_) inner_->deallocate(replay_call{}, k.p, k.size, litter_align, k.tag);
    }

    void* allocate(replay_call c, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        return inner_->allocate(c, size, align, tag);
    }
    void deallocate(replay_call c, void* p, std::size_t size, std::size_t align,
                    std::uint32_t tag) noexcept override {
        inner_->deallocate(c, p, size, align, tag);
    }
    void* allocate_zeroed(replay_call c, std::size_t size, std::size_t align,
                          std::uint32_t& tag) noexcept override {
        return inner_->allocate_zeroed(c, size, align, tag);
    }
    void* reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                     std::size_t size, std::size_t align, std::uint32_t& tag) noexcept override {
        return inner_->reallocate(from, to, p, old_size, size, align, tag);
    }
    void next_frame() noexcept override { inner_->next_frame(); }
    std::size_t footprint() noexcept override { return inner_->footprint(); }
    std::size_t footprint_base() noexcept override { return base_; }

  private:
    struct block {
        void* p;
        std::size_t size;
        std::uint32_t tag;
    };
    std::unique_ptr<replay_backend> inner_;
    std::vector<std::uint32_t> tags_;
    std::vector<block> kept_;
    std::size_t base_ = 0;
};

}  // namespace

litter_plan make_litter(const replay_program& program, const litter_options& o) {
    litter_plan out;
    std::vector<std::uint64_t> seen;  // the program's allocation sizes, one per call
    for (const auto& op : program.ops)
        if (op.kind == replay_op::allocate || op.kind == replay_op::allocate_zeroed ||
            op.kind == replay_op::reallocate)
            seen.push_back(op.size);
    if (seen.empty()) return out;
    const std::uint64_t n = o.blocks != 0 ? o.blocks : std::max<std::uint32_t>(program.slots, 1) - 1;
    std::mt19937_64 rng(o.seed);
    std::uniform_int_distribution<std::size_t> pick(0, seen.size() - 1);
    out.sizes.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) out.sizes.push_back(seen[pick(rng)]);
    std::vector<std::uint32_t> order(n);
    for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    const double keep = std::clamp(o.keep, 0.0, 1.0);
    const auto freed = static_cast<std::size_t>(static_cast<double>(n) * (1.0 - keep) + 0.5);
    out.free_order.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(freed));
    return out;
}

backend_factory aged_backend(backend_factory inner, std::shared_ptr<const litter_plan> litter) {
    backend_factory out = inner;
    if (!inner.make) return out;
    const std::size_t kept = litter->sizes.size() - litter->free_order.size();
    out.note = (inner.note.empty() ? "" : inner.note + "; ") + "aged: " +
               std::to_string(litter->sizes.size()) + " blocks littered, " +
               std::to_string(kept) + " kept";
    out.make = [make = inner.make, litter]() -> std::unique_ptr<replay_backend> {
        auto b = make();
        if (!b) return b;
        return std::make_unique<aged>(std::move(b), *litter);
    };
    return out;
}

}  // namespace rtmem::analyze
