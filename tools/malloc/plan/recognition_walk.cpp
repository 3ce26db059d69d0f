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
// A larger distance is left to the unwinder: a misread (a frame whose size varies) must stay
// within the live stack above the slot, which a frame of at most this size guarantees in
// practice (the callers' frames, the thread's TLS or the process's arguments lie above).
constexpr std::int32_t max_delta = 4096;
constexpr int own_frames = 8;  // at most this many of the library's frames above frame 0
constexpr std::uint32_t max_frames = 32;

std::uintptr_t word_at(std::uintptr_t address) noexcept {
    return *reinterpret_cast<const std::uintptr_t*>(address);
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
        if (next == 0 || t->nodes[next].leaf) return;
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
    std::uint32_t node = root, best = t->nodes[root].site;
    for (int k = 1; k < depth && !t->nodes[node].leaf; ++k) {
        node = child_of(t, node, stack[k]);
        if (node == 0) break;
        if (t->nodes[node].site != no_site) best = t->nodes[node].site;
    }
    return best;
}

// The walk by learned distances. Returns false when a node on the way has none yet (0) or an
// unusable one.
// From `node` (its frame's return address at `at`; `best`: the deepest site matched so far).
[[gnu::always_inline]] inline bool walk_slots(const recognition_table* t, std::uint32_t node,
                                              std::uintptr_t at, std::uint32_t& best) noexcept {
    const recognition_node* n = &t->nodes[node];
    if (n->site != no_site) best = n->site;
    do {
        const std::int32_t d = n->delta.load(std::memory_order_relaxed);
        if (d <= 0) [[unlikely]]
            return false;
        at += static_cast<std::uintptr_t>(d);
        node = child_of(t, node, word_at(at));
        if (node == 0) break;
        n = &t->nodes[node];
        if (n->site != no_site) best = n->site;
    } while (!n->leaf);
    return true;
}

// A distance to learn, or none usable: the first call along a path, or a frame 0 the unwinder
// must handle.
// `slot`: frame 0's (the entry point's frame address - 8); learn() checks it against the
// unwinder before any distance is trusted.
[[gnu::noinline, gnu::cold]] std::uint32_t find_slow(const recognition_table* t, std::uint32_t root,
                                                     std::uintptr_t slot) noexcept {
    const std::uintptr_t ra = word_at(slot);
    learn(t, root, ra, slot);
    std::uint32_t site = no_site;
    if (walk_slots(t, root, slot, site)) return site;
    return walk_unwound(t, root, ra, slot + sizeof(std::uintptr_t));
}

}  // namespace

std::uint32_t find_deeper(const recognition_table* t, std::uint32_t root, std::uint32_t node,
                          std::uintptr_t at, const void* cfa) noexcept {
    std::uint32_t site = t->nodes[root].site;
    if (!walk_slots(t, node, at, site)) [[unlikely]]
        return find_slow(t, root, reinterpret_cast<std::uintptr_t>(cfa) - sizeof(std::uintptr_t));
    return site;
}

std::uint32_t find_deep(const recognition_table* t, std::uint32_t root, const void* cfa) noexcept {
    std::uint32_t site = no_site;
    // Frame 0's return address lies just below the entry point's frame address.
    const std::uintptr_t slot = reinterpret_cast<std::uintptr_t>(cfa) - sizeof(std::uintptr_t);
    if (!walk_slots(t, root, slot, site)) [[unlikely]]
        return find_slow(t, root, slot);
    return site;
}

void* allocate_recognised(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                          const void* cfa, std::size_t size, std::size_t align) noexcept {
    const recognition_slot* e = &t->slots[slot];
    while (e->ra != ra) {
        if (e->ra == 0) return nullptr;
        slot = (slot + 1) & t->mask;
        e = &t->slots[slot];
    }
    std::uint32_t site = e->site;
    if (e->node != 0) {
        site = walk_first(t, e->node, cfa);
        if (site == no_site) return nullptr;
    }
    return t->sites[site].allocate(size, align);
}

recognition_walk_counts recognition_walk_stats() noexcept {
    return {g_learned.load(std::memory_order_relaxed), g_fallback.load(std::memory_order_relaxed)};
}

void recognition_walk_init(bool count_calls) noexcept {
    g_counting = count_calls;
}

}  // namespace rtmem::site_plan
