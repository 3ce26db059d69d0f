// Routing by plan (`rtmem run --plan`): each allocation's return address is looked up in a
// small open-addressing table of the planned sites' frame-0 addresses; a miss (an unplanned
// site) costs one probe. A hit whose sites need more frames walks a trie of the planned frames
// up the stack: each frame's caller is read at a stack offset learned once per frame and
// looked up with its parent in one probe (recognition_walk.cpp). Frees, reallocs and usable sizes of planned blocks are recognised by
// one range check.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "site_strategies.hpp"

namespace rtmem::site_plan {

inline constexpr std::uint32_t no_site = ~std::uint32_t{0};

struct recognition_slot {
    std::uintptr_t ra;   ///< absolute frame-0 address; 0: empty
    std::uint32_t site;  ///< the site named by this frame alone (no_site: none)
    std::uint32_t node;  ///< 0: no site needs more frames here; else its trie node
};

/// A node's delta when no planned site names a frame above it: the walk ends there. Negative,
/// like an unusable distance and unlike a learned one, so one test tells a level to take.
inline constexpr std::int32_t leaf_delta = INT32_MIN;
/// A larger distance is left to the unwinder (learned as unusable): a misread (a frame whose
/// size varies) must stay within the live stack above the slot, which a frame of at most this
/// size guarantees in practice (the callers' frames, the thread's TLS or the process's
/// arguments lie above).
inline constexpr std::int32_t max_delta = 4096;

/// One frame of a planned site's frames: the trie's nodes are the slots of one open-addressing
/// table keyed by (parent node, return address) packed in one word, so a level of the walk is
/// one probe and one compare. A node's id is its slot (slot 0 is never a node: id 0 is none);
/// frame-0 nodes have parent 0 and are found through their recognition_slot instead.
struct alignas(32) recognition_node {
    std::uint64_t key;  ///< node_key(parent, ra); 0: an empty slot
    /// Bytes from the stack slot holding this frame's return address to the slot holding its
    /// caller's: the frame size of this function at this call, fixed unless it allocates on
    /// the stack dynamically; 1..max_delta once learned. 0: not learned yet; leaf_delta: no site
    /// names a frame above this one; other negatives: not usable (the unwinder decides).
    std::atomic<std::int32_t> delta;
    /// The deepest site whose frames end here or below (towards frame 0): the walk's answer
    /// when it stops at this node (no_site: none).
    std::uint32_t site;
    std::uint64_t id;       ///< this node's own id, ready to be or'ed into its children's keys
    std::uint16_t depth;    ///< frames from frame 0 to this one (frame 0's node: 1)
    std::uint16_t deepest;  ///< the most frames any site at or above this node names
};
static_assert(sizeof(recognition_node) == 32);

/// Node ids fit in this many bits, a user-space return address in 47, so a (parent, return
/// address) pair is exactly one word. 2^17 slots hold 65535 frames (a table at most half full):
/// `rtmem run` passes at most about 1000 sites of at most 16 frames.
inline constexpr int node_id_bits = 17;
inline constexpr std::uint64_t max_nodes = std::uint64_t{1} << node_id_bits;
/// Slot 0's key: it stays occupied so that probes pass it; no return address yields it.
inline constexpr std::uint64_t reserved_key = ~std::uint64_t{0};

[[gnu::always_inline]] inline std::uint64_t node_key(std::uint64_t parent,
                                                     std::uintptr_t ra) noexcept {
    return (static_cast<std::uint64_t>(ra) << node_id_bits) | parent;
}

struct recognition_table {
    std::size_t mask;
    recognition_slot* slots;
    planned_site* sites;
    std::size_t node_mask;
    recognition_node* nodes;
};

/// Published once the plan is loaded (never when there is none).
extern std::atomic<const recognition_table*> g_table;
/// The planned blocks' address range (0, 0 without a plan).
extern std::atomic<std::uintptr_t> g_range_base;
extern std::atomic<std::size_t> g_range_size;

[[gnu::always_inline]] inline std::size_t slot_of(std::uintptr_t ra, std::size_t mask) noexcept {
    return static_cast<std::size_t>(((ra * 0x9e3779b97f4a7c15ull) >> 32) & mask);
}

/// The slot where the node of `key` is looked for first (a constant that fits in the multiply
/// instruction; bits 32 and up of the product mix the parent's bits and the address's low
/// ones).
[[gnu::always_inline]] inline std::size_t node_slot(std::uint64_t key, std::size_t mask) noexcept {
    return static_cast<std::size_t>((key * 0xffffffff9e3779b1ull) >> 32) & mask;
}

/// The node of caller `ra` above `parent` (0: none).
[[gnu::always_inline]] inline std::uint32_t child_of(const recognition_table* t,
                                                     std::uint32_t parent,
                                                     std::uintptr_t ra) noexcept {
    const std::uint64_t key = node_key(parent, ra);
    for (std::size_t j = node_slot(key, t->node_mask);; j = (j + 1) & t->node_mask) {
        const recognition_node& c = t->nodes[j];
        if (c.key == key) return static_cast<std::uint32_t>(j);
        if (c.key == 0) return 0;
    }
}

/// A caller whose frame 0 is shared by sites named by more frames (`root`: its node): the walk
/// up the stack, then that site's strategy. Out of line: every entry point's fast path keeps
/// its few registers. `cfa`: the entry point's canonical frame address (its return address,
/// frame 0, is the word below). nullptr: no planned site, or its strategy declined.
/// The parameters are in the order the strategy's call takes them (this, size, align): the
/// walk's tail call moves nothing.
void* allocate_walked(const recognition_node* root, std::size_t size, std::size_t align,
                      const void* cfa, const recognition_table* t) noexcept;
/// A caller whose probe met a used slot of another frame 0: the rest of the probe chain.
void* allocate_probed(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                      const void* cfa, std::size_t size, std::size_t align) noexcept;

/// A block from the site that called (ra: __builtin_return_address(0) of the entry point, cfa:
/// its __builtin_dwarf_cfa()), or nullptr: not a planned site, or the site's strategy declined
/// (the general heap serves it).
[[gnu::always_inline]] inline void* try_allocate(std::size_t size, std::size_t align, void* ra,
                                                 const void* cfa) noexcept {
    const recognition_table* t = g_table.load(std::memory_order_acquire);
    if (t == nullptr) return nullptr;
    const auto key = reinterpret_cast<std::uintptr_t>(ra);
    const std::size_t i = slot_of(key, t->mask);
    const recognition_slot& e = t->slots[i];
    if (e.ra == 0) [[likely]] return nullptr;
    if (e.ra != key) [[unlikely]]
        return allocate_probed(t, i, key, cfa, size, align);
    if (e.node != 0) return allocate_walked(&t->nodes[e.node], size, align, cfa, t);
    return t->sites[e.site].allocate(size, align);
}

[[gnu::always_inline]] inline bool owns(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) - g_range_base.load(std::memory_order_relaxed) <
           g_range_size.load(std::memory_order_relaxed);
}

/// Whether a module the plan names is not loaded (yet): a dlopen may bring it.
bool modules_missing() noexcept;
/// Resolves the plan's modules loaded since start-up and routes their sites (after a dlopen).
void resolve_new_modules() noexcept;

/// p: a planned block (owns(p): the table is published).
inline void deallocate(void* p) noexcept {
    g_table.load(std::memory_order_relaxed)->sites[site_of(p)].deallocate(p);
}
inline std::size_t usable_size(const void* p) noexcept {
    return g_table.load(std::memory_order_relaxed)->sites[site_of(p)].usable_size(p);
}

}  // namespace rtmem::site_plan
