// A plan: the advisor's choice of allocator per site, in a form a program can be run with
// unchanged (`rtmem run --plan`) or replayed with (`rtmem replay --plan`). Sites are named by
// module-relative return addresses, so a plan made from one run matches the same build's
// later runs whatever the load addresses; sites that match nothing are ignored.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rtmem::analyze {

/// Strategies that are safe for any program: a block stays valid until the program frees it,
/// and its free reaches the allocator that owns it (an address-range lookup).
enum class plan_strategy : std::uint8_t {
    heap,          ///< the general heap (a site kept in the plan only to say why)
    pool,          ///< per-site pool of fixed-size blocks
    region,        ///< per-site bump region; a chunk is recycled when its last block is freed
    thread_stack,  ///< per-thread LIFO stack; an out-of-order free is still correct
};

[[nodiscard]] std::string_view plan_strategy_name(plan_strategy s) noexcept;
/// false for an unknown name.
bool parse_plan_strategy(std::string_view name, plan_strategy& out) noexcept;

/// One return address: the module (its path as the trace recorded it) and the address
/// relative to the module's load bias (the ELF virtual address), so ASLR does not matter.
struct plan_frame {
    std::string module;
    std::uint64_t offset = 0;
    friend bool operator==(const plan_frame&, const plan_frame&) = default;
};

struct plan_site {
    std::uint32_t id = 0;   ///< the advisor's site id in the source trace (for cross-reference)
    std::string label;      ///< symbolised, for humans
    std::vector<plan_frame> frames;  ///< innermost first; frames[0] called malloc/new
    /// The frames are the site's entire stack: a longer stack starting with the same frames is
    /// another site (a matcher that ignores this only misroutes that longer site).
    bool whole_stack = false;
    plan_strategy strategy = plan_strategy::heap;
    std::string reason;     ///< why this strategy (and any fallback, e.g. "no frame markers")
    std::uint64_t block_size = 0;    ///< pool: bytes per block (requests up to it)
    std::uint64_t block_align = 0;   ///< pool
    std::uint64_t chunk_bytes = 0;   ///< region/thread_stack: bytes per chunk
    /// region: start a new chunk at each rtmem_trace_frame() (a frame region: one frame's
    /// blocks share chunks, recycled when the last is freed). A runner that ignores it is
    /// still correct: a plain region.
    bool frame_chunks = false;
    std::uint64_t max_request = 0;   ///< larger requests at this site go to the general heap
    // What the trace showed, to compare with what the run sees.
    std::uint64_t allocations = 0, bytes = 0;
    double expected_saved_ns = 0;  ///< against rt_heap, net of memory and recognition costs
    /// Planned only for where its blocks go: without the packing credit (grouped_page_ns,
    /// large_page_ns) it would stay on the heap. Whether a program gains by that depends on how
    /// it reads the blocks, which a trace does not show; `rtmem tune` times it. Written to the
    /// plan file as "placement": true.
    bool placement_only = false;
};

struct plan {
    static constexpr std::string_view format_name = "rtmem-plan";
    static constexpr int format_version = 1;
    std::string program;           ///< the traced program's path
    std::string trace;             ///< the trace the plan was made from
    bool frame_markers = false;    ///< the program called rtmem_trace_frame()
    std::uint32_t depth = 0;       ///< the most frames any site needs to be told apart
    std::vector<plan_site> sites;  ///< ranked by expected saving, largest first
};

/// A plan file that cannot be used: the message says which field and why.
struct plan_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[nodiscard]] std::string plan_to_json(const plan& p);
/// Throws plan_error on malformed JSON, a wrong format name or version, or an invalid field
/// (unknown strategy, a pool without block size, empty frames, ...).
[[nodiscard]] plan plan_from_json(std::string_view text);
[[nodiscard]] plan read_plan_file(const std::string& path);

struct advice;
class site_map;
struct module;

/// What a planned site saves and costs against the general heap the plan runs in front of
/// (rt_heap under `rtmem run --plan`), per call and per page; every field settable by name
/// (`--set plan_...=VALUE`). Measured on this machine (docs/advisor.md, "What a site saves
/// against rt_heap").
struct plan_costs {
    // The call costs are bench/plan_run/plan_costs.py's figures (per call: half a pair).
    double heap_list_ns = 4.0;   ///< rt_heap call served by its size-class list (pop or push)
    /// rt_heap call whose list is empty (allocate: one TLSF block, or a run once the heap takes
    /// back other threads' frees) or full (free: TLSF)
    double heap_miss_ns = 8.8;
    double heap_large_ns = 12;   ///< rt_heap call for a block above the lists' largest: TLSF
    double call_ns = 4.6;        ///< a call served by a pool (from the thread's cache)
    /// a call served by a region (thread_stack runs as one): its bump walks into fresh lines
    double region_call_ns = 4.9;
    /// every call of the program once a plan is loaded: the site probe of an unplanned call
    double probe_ns = 1.2;
    double page_ns = 2000;        ///< a 4 KiB page touched beyond what the heap would touch
    /// a page of a site's blocks above the lists' largest kept together in the site's own
    /// spans rather than among rt_heap's other TLSF blocks (the program reads them together)
    double large_page_ns = 5000;
    /// a page of a region site's bulk-freed blocks laid out in allocation order in its own
    /// chunks rather than among the blocks other sites took from rt_heap's TLSF meanwhile
    double grouped_page_ns = 1500;
    double min_saved_ns = 100000;  ///< a site's net saving over the trace below this: heap
    double heap_list_blocks = 32;         ///< blocks a size-class list holds (cache_depth)
    double heap_list_max_request = 2032;  ///< largest request the lists serve
};
/// Sets one plan cost by its name ("plan_call_ns", ...); false for an unknown name.
bool set_plan_cost(plan_costs& c, std::string_view name, double value) noexcept;
/// The names set_plan_cost accepts, for help texts.
[[nodiscard]] std::vector<std::string_view> plan_cost_names();

struct plan_options {
    std::size_t max_sites = 0;     ///< the best N sites that pay (0 = all of them)
    bool keep_heap_sites = false;  ///< also list general sites as "heap", with the reason
    std::uint32_t recorded_depth = 0;  ///< the trace's stack depth (0: unknown)
    std::size_t site_depth = 0;        ///< the site_map's merge depth (0: whole stacks)
    /// What telling a site apart beyond its first frame costs, per allocation made at that
    /// frame and per frame walked above it (run --plan reads each caller at a learned stack
    /// offset: ~45 instructions a walk of one frame, measured in docs/advisor.md). 0: free.
    double unwind_ns = 5;
    /// A site is planned only where its strategy beats rt_heap by at least min_saved_ns over
    /// the trace, net of its memory cost and its share of the stack walk.
    plan_costs costs;
    std::string program, trace;
};

/// The advisor's advice as a plan (src/plan/make_plan.cpp, docs/advisor.md "Plans"): one site
/// per recommendation whose safe strategy saves against rt_heap (`o.costs`: its calls, the
/// pages its chunks touch beyond its live bytes, its share of the stack walk), ranked by that
/// net saving; its strategy from the site's class, its
/// frames module-relative (the trace's module table) and cut to the fewest innermost frames
/// that tell it apart from every other allocating site; sites needing more than one frame only
/// where their saving pays for the unwind. Frames in the tracer's or an allocator's own modules
/// are never included. `label` names a site for humans (may be empty).
[[nodiscard]] plan make_plan(const advice& a, const site_map& sites,
                             const std::vector<module>& modules, const plan_options& o,
                             const std::function<std::string(std::uint32_t)>& label = {});
/// True for a module the plan must never name: the tracer, rtmem's preload heap, or a
/// malloc replacement (mimalloc, jemalloc, tcmalloc).
[[nodiscard]] bool allocator_module(std::string_view path) noexcept;

}  // namespace rtmem::analyze
