#include "recognition_build.hpp"

#include <sys/mman.h>

#include <new>

namespace rtmem::site_plan {

namespace {

void* map_zeroed(std::size_t bytes) noexcept {
    void* m = mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? nullptr : m;
}

std::uint64_t capacity_for(std::uint64_t entries) noexcept {
    std::uint64_t cap = 64;  // at most a quarter full: a miss is almost always one probe
    while (cap < 4 * entries) cap *= 2;
    return cap;
}

struct builder {
    recognition_table* t;
    std::uint32_t next_node = 1;

    recognition_slot& root(std::uintptr_t ra) noexcept {
        std::size_t j = slot_of(ra, t->mask);
        while (t->slots[j].ra != 0 && t->slots[j].ra != ra) j = (j + 1) & t->mask;
        recognition_slot& s = t->slots[j];
        if (s.ra == 0) s = {ra, no_site, 0};
        return s;
    }
    std::uint32_t new_node(std::uint16_t depth) noexcept {
        recognition_node& n = t->nodes[next_node];
        n.delta.store(0, std::memory_order_relaxed);
        n.site = no_site;
        n.depth = n.deepest = depth;
        n.leaf = true;
        return next_node++;
    }
    std::uint32_t child(std::uint32_t parent, std::uintptr_t ra) noexcept {
        std::size_t j = child_slot(parent, ra, t->child_mask);
        for (;; j = (j + 1) & t->child_mask) {
            recognition_child& c = t->children[j];
            if (c.ra == ra && c.parent == parent) return c.node;
            if (c.ra == 0) break;
        }
        const std::uint32_t n = new_node(static_cast<std::uint16_t>(t->nodes[parent].depth + 1));
        t->children[j] = {ra, parent, n};
        t->nodes[parent].leaf = false;
        return n;
    }
};

}  // namespace

const recognition_table* build_recognition_table(const resolved_site* sites, std::uint32_t count,
                                                 planned_site* strategies) noexcept {
    std::uint64_t roots = 0, frames = 0;
    for (std::uint32_t i = 0; i < count; ++i)
        if (sites[i].resolved) ++roots, frames += sites[i].nframes;
    auto* t = static_cast<recognition_table*>(map_zeroed(sizeof(recognition_table)));
    if (t == nullptr) return nullptr;
    const std::uint64_t cap = capacity_for(roots), child_cap = capacity_for(frames);
    t->mask = cap - 1;
    t->child_mask = child_cap - 1;
    t->sites = strategies;
    t->slots = static_cast<recognition_slot*>(map_zeroed(sizeof(recognition_slot) * cap));
    t->children =
        static_cast<recognition_child*>(map_zeroed(sizeof(recognition_child) * child_cap));
    t->nodes = static_cast<recognition_node*>(map_zeroed(sizeof(recognition_node) * (frames + 2)));
    if (t->slots == nullptr || t->children == nullptr || t->nodes == nullptr) return nullptr;
    for (std::uint64_t n = 0; n < frames + 2; ++n) new (&t->nodes[n]) recognition_node{};

    builder b{t};
    for (std::uint32_t i = 0; i < count; ++i) {
        const resolved_site& s = sites[i];
        if (!s.resolved || s.nframes == 0) continue;
        recognition_slot& r = b.root(s.frames[0]);
        if (s.nframes == 1) {
            if (r.site == no_site) r.site = i;
            continue;
        }
        if (r.node == 0) r.node = b.new_node(1);
        std::uint32_t node = r.node;
        for (std::uint32_t k = 1; k < s.nframes; ++k) {
            if (t->nodes[node].deepest < s.nframes)
                t->nodes[node].deepest = static_cast<std::uint16_t>(s.nframes);
            node = b.child(node, s.frames[k]);
        }
        if (t->nodes[node].site == no_site) t->nodes[node].site = i;
    }
    // A frame 0 that is a site by itself and also the start of deeper sites: the walk's first
    // node answers for it.
    for (std::uint64_t j = 0; j < cap; ++j)
        if (t->slots[j].ra != 0 && t->slots[j].node != 0)
            t->nodes[t->slots[j].node].site = t->slots[j].site;
    return t;
}

}  // namespace rtmem::site_plan
