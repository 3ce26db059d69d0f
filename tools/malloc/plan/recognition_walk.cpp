#include "recognition_walk.hpp"

#include <atomic>

#include "caller_frames.hpp"
#include "recognition_build.hpp"
#include "rtmem/interpose/guard.hpp"

#if RTMEM_PLAN_UNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace rtmem::site_plan {

namespace {

std::atomic<std::uint64_t> g_learned{0}, g_fallback{0};
bool g_counting = false;  // only for the summary: a shared counter costs every thread

void count(std::atomic<std::uint64_t>& c) noexcept {
    if (g_counting) c.fetch_add(1, std::memory_order_relaxed);
}

constexpr std::int32_t unusable = -1;
constexpr int own_frames = 8;  // at most this many of the library's frames above frame 0
constexpr std::uint32_t max_frames = 32;

std::uintptr_t word_at(std::uintptr_t address) noexcept {
    return *reinterpret_cast<const std::uintptr_t*>(address);
}

bool is_leaf(const recognition_node& n) noexcept {
    return n.delta.load(std::memory_order_relaxed) == leaf_delta;
}

void set_delta(const recognition_node& n, std::int32_t d) noexcept {
    auto& delta = const_cast<std::atomic<std::int32_t>&>(n.delta);
    std::int32_t expected = 0;
    if (delta.compare_exchange_strong(expected, d, std::memory_order_relaxed)) count(g_learned);
}

// Unwinds once from here and sets the distance of every node along this call's path through
// the trie that has none: from frame 0's node (`node`; frame 0 is `ra`, read from `slot`) up.
void learn(const recognition_table* t, std::uint32_t node, std::uintptr_t ra,
           std::uintptr_t slot) noexcept {
#if RTMEM_PLAN_UNWIND
    interpose::guard_scope guard;  // libunwind's own allocations, if any, go to glibc
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0)
        return set_delta(t->nodes[node], unusable);
    // Up to frame 0: its stack pointer is the entry point's frame address, 8 above the slot.
    bool found = false;
    for (int step = 0; step < own_frames && !found; ++step) {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (ip == ra) {
            unw_get_reg(&cursor, UNW_REG_SP, &sp);
            found = sp - 8 == slot;
            break;
        }
        if (unw_step(&cursor) <= 0) break;
    }
    if (!found) return set_delta(t->nodes[node], unusable);
    for (;;) {
        const recognition_node& n = t->nodes[node];
        unw_word_t ip = 0, sp = 0;
        if (unw_step(&cursor) <= 0 || unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 ||
            unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0 || word_at(sp - 8) != ip)
            return set_delta(n, unusable);
        const auto d = static_cast<std::int64_t>(sp - 8) - static_cast<std::int64_t>(slot);
        set_delta(n, d > 0 && d <= max_delta ? static_cast<std::int32_t>(d) : unusable);
        const std::uint32_t next = child_of(t, node, ip);
        if (next == 0 || is_leaf(t->nodes[next])) return;
        node = next;
        slot = sp - 8;
    }
#else
    (void)ra, (void)slot;
    set_delta(t->nodes[node], unusable);
#endif
}

// The walk by the caller-frame cache or libunwind: for frames 0s whose distances are unusable.
std::uint32_t walk_unwound(const recognition_table* t, std::uint32_t root, std::uintptr_t ra,
                           std::uintptr_t anchor) noexcept {
    count(g_fallback);
    std::uintptr_t stack[max_frames];
    const std::uint32_t want = t->nodes[root].deepest;
    const int depth = caller_frames(ra, anchor, stack, static_cast<int>(want));
    std::uint32_t node = root;
    for (int k = 1; k < depth && !is_leaf(t->nodes[node]); ++k) {
        const std::uint32_t next = child_of(t, node, stack[k]);
        if (next == 0) break;
        node = next;
    }
    return t->nodes[node].site;
}

// The walk by learned distances from `n` (its frame's return address at `at`): on return, the
// node where it stops (a leaf, or a caller no site names: its site is the answer) and that
// node's slot; false when the node reached has no usable distance (not learned yet, or left to
// the unwinder).
[[gnu::always_inline]] inline bool walk_slots(const recognition_table* t,
                                              const recognition_node*& n,
                                              std::uintptr_t& at) noexcept {
    for (;;) {
        const std::int32_t d = n->delta.load(std::memory_order_relaxed);
        // One test for the common case: a learned distance is positive (at most max_delta:
        // set_delta stores no other).
        if (d <= 0) [[unlikely]]
            return d == leaf_delta;
        const std::uintptr_t caller = at + static_cast<std::uintptr_t>(d);
        const std::uint64_t key =
            node_key(n->id, *reinterpret_cast<const std::uintptr_t*>(caller));
        std::size_t j = node_slot(key, t->node_mask);
        const recognition_node* c = &t->nodes[j];
        while (c->key != key) [[unlikely]] {
            if (c->key == 0) return true;
            j = (j + 1) & t->node_mask;
            c = &t->nodes[j];
        }
        n = c;
        at = caller;
    }
}

std::uint32_t parent_of(const recognition_node& n) noexcept {
    return static_cast<std::uint32_t>(n.key & ((std::uint64_t{1} << node_id_bits) - 1));
}

// A distance to learn, or none usable: the first call along a path, or a frame 0 the unwinder
// must handle. `n`: the node the walk stopped at, its return address at `at`; frame 0's node
// and slot are found again from them (the slots below are at the parents' distances, all
// learned since the walk passed them): the fast path keeps no more values live than it needs.
// learn() checks frame 0's slot against the unwinder before any distance is trusted.
[[gnu::noinline, gnu::cold]] void* allocate_slow(const recognition_table* t,
                                                 const recognition_node* n, std::uintptr_t at,
                                                 std::size_t size, std::size_t align) noexcept {
    const std::int32_t stop_delta = n->delta.load(std::memory_order_relaxed);
    for (std::uint32_t p = parent_of(*n); p != 0; p = parent_of(*n)) {
        n = &t->nodes[p];
        at -= static_cast<std::uintptr_t>(n->delta.load(std::memory_order_relaxed));
    }
    const auto root = static_cast<std::uint32_t>(n - t->nodes);
    const std::uintptr_t slot = at;
    const std::uintptr_t ra = word_at(slot);
    // One unwind to learn a distance not learned yet; a node already found unusable goes to the
    // caller-frame cache without it.
    if (stop_delta == 0) learn(t, root, ra, slot);
    std::uint32_t site = no_site;
    const recognition_node* stop = n;
    if (walk_slots(t, stop, at))
        site = stop->site;
    else
        site = walk_unwound(t, root, ra, slot + sizeof(std::uintptr_t));
    return site == no_site ? nullptr : t->sites[site].allocate(size, align);
}

}  // namespace

void* allocate_walked(const recognition_node* root, std::size_t size, std::size_t align,
                      const void* cfa, const recognition_table* t) noexcept {
    const recognition_node* n = root;
    // Frame 0's return address lies just below the entry point's frame address.
    std::uintptr_t at = reinterpret_cast<std::uintptr_t>(cfa) - sizeof(std::uintptr_t);
    if (!walk_slots(t, n, at)) [[unlikely]]
        return allocate_slow(t, n, at, size, align);
    if (n->site == no_site) return nullptr;
    return t->sites[n->site].allocate(size, align);
}

void* allocate_probed(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                      const void* cfa, std::size_t size, std::size_t align) noexcept {
    const recognition_slot* e = &t->slots[slot];
    while (e->ra != ra) {
        if (e->ra == 0) return nullptr;
        slot = (slot + 1) & t->mask;
        e = &t->slots[slot];
    }
    if (e->node != 0) return allocate_walked(&t->nodes[e->node], size, align, cfa, t);
    return t->sites[e->site].allocate(size, align);
}

recognition_walk_counts recognition_walk_stats() noexcept {
    return {g_learned.load(std::memory_order_relaxed), g_fallback.load(std::memory_order_relaxed)};
}

void recognition_walk_init(bool count_calls) noexcept {
    g_counting = count_calls;
}

}  // namespace rtmem::site_plan
