// rtmem's rt_heap as a whole-program replay backend ("rt_heap"): one heap with the default
// options (4 GiB reserved, 1 MiB segments, front cache depth 8), committed as the replay grows.
// The replay runs every call on one thread, so the replaying thread's own thread heap serves
// every block: what is measured is the own-heap path (binding and queue checks included), not
// the cross-thread queue (docs/advisor.md, "How replay treats threads").
#include "rtmem/analyze/replay_backend.hpp"

#include "rtmem/alloc/rt_heap.hpp"

namespace rtmem::analyze {

namespace {

class rt_heap_backend final : public replay_backend {
  public:
    rt_heap_backend() { heap_.attach(); }  // bind now, as a thread would at its start

    void* allocate(replay_call, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        tag = 0;
        return heap_.allocate(size, align);
    }
    void deallocate(replay_call, void* p, std::size_t size, std::size_t align,
                    std::uint32_t) noexcept override {
        heap_.deallocate(p, size, align);
    }
    void* reallocate(replay_call, replay_call, void* p, std::size_t old_size, std::size_t size,
                     std::size_t align, std::uint32_t& tag) noexcept override {
        tag = 0;
        return heap_.reallocate(p, old_size, size, align);
    }
    /// Bytes of the segments granted to thread heaps (committed as they are granted).
    std::size_t footprint() noexcept override {
        return heap_.segments_used() * options_.segment_bytes;
    }
    std::size_t footprint_base() noexcept override { return 0; }

  private:
    rtmem::rt_heap_options options_;
    rtmem::rt_heap heap_{options_};
};

}  // namespace

backend_factory rt_heap_backend_factory() {
    return {"rt_heap", [] { return std::unique_ptr<replay_backend>(new rt_heap_backend()); }, ""};
}

}  // namespace rtmem::analyze
