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

std::size_t capacity_for(std::size_t entries) noexcept {
    std::size_t cap = 64;  // at most a quarter full: a miss is almost always one probe
    while (cap < 4 * entries) cap *= 2;
    return cap;
}

struct builder {
    recognition_table* t;

    recognition_slot& root(std::uintptr_t ra) noexcept {
        std::size_t j = slot_of(ra, t->mask);
        while (t->slots[j].ra != 0 && t->slots[j].ra != ra) j = (j + 1) & t->mask;
        recognition_slot& s = t->slots[j];
        if (s.ra == 0) s = {ra, no_site, 0};
        return s;
    }
    // The node of `ra` above `parent` (0: frame 0), made a leaf when new.
    std::uint32_t node(std::uint32_t parent, std::uintptr_t ra) noexcept {
        const std::uint64_t key = node_key(parent, ra);
        std::size_t j = node_slot(key, t->node_mask);
        for (;; j = (j + 1) & t->node_mask) {
            recognition_node& c = t->nodes[j];
            if (c.key == key) return static_cast<std::uint32_t>(j);
            if (c.key == 0) break;
        }
        recognition_node& n = t->nodes[j];
        n.key = key;
        n.delta.store(leaf_delta, std::memory_order_relaxed);
        n.site = no_site;
        n.id = j;
        n.depth = n.deepest =
            static_cast<std::uint16_t>(parent == 0 ? 1 : t->nodes[parent].depth + 1);
        if (parent != 0) t->nodes[parent].delta.store(0, std::memory_order_relaxed);  // to learn
        return static_cast<std::uint32_t>(j);
    }
    // Each node's site becomes the deepest one named at or below it (frame 0's one-frame site
    // included), so the walk answers with the node where it stops.
    std::uint32_t inherit(std::uint32_t id, std::uint32_t below) noexcept {
        recognition_node& n = t->nodes[id];
        if (n.site == no_site) n.site = below;
        return n.site;
    }
};

// Parents first: a node's depth is one more than its parent's.
void inherit_sites(builder& b, std::size_t cap, std::uint16_t deepest) noexcept {
    recognition_table* t = b.t;
    for (std::size_t j = 0; j < t->mask + 1; ++j) {
        const recognition_slot& s = t->slots[j];
        if (s.ra != 0 && s.node != 0) b.inherit(s.node, s.site);
    }
    for (std::uint16_t depth = 2; depth <= deepest; ++depth)
        for (std::size_t j = 1; j < cap; ++j) {
            recognition_node& n = t->nodes[j];
            const auto parent = static_cast<std::uint32_t>(n.key & (max_nodes - 1));  // its id
            if (n.key != 0 && n.depth == depth) b.inherit(static_cast<std::uint32_t>(j), t->nodes[parent].site);
        }
}

}  // namespace

const recognition_table* build_recognition_table(const resolved_site* sites, std::uint32_t count,
                                                 planned_site* strategies) noexcept {
    std::size_t roots = 0, frames = 0;
    std::uint16_t deepest = 1;
    for (std::uint32_t i = 0; i < count; ++i)
        if (sites[i].resolved) {
            ++roots, frames += sites[i].nframes;
            if (sites[i].nframes > deepest) deepest = static_cast<std::uint16_t>(sites[i].nframes);
        }
    auto* t = static_cast<recognition_table*>(map_zeroed(sizeof(recognition_table)));
    if (t == nullptr) return nullptr;
    const std::size_t cap = capacity_for(roots);
    std::size_t node_cap = capacity_for(frames + 1);
    if (node_cap > max_nodes) node_cap = static_cast<std::size_t>(max_nodes);
    if (2 * (frames + 1) > node_cap) return nullptr;  // more frames than node ids
    t->mask = cap - 1;
    t->node_mask = node_cap - 1;
    t->sites = strategies;
    t->slots = static_cast<recognition_slot*>(map_zeroed(sizeof(recognition_slot) * cap));
    auto* nodes = static_cast<recognition_node*>(map_zeroed(sizeof(recognition_node) * node_cap));
    if (t->slots == nullptr || nodes == nullptr) return nullptr;
    for (std::size_t n = 0; n < node_cap; ++n) new (&nodes[n]) recognition_node{};
    nodes[0].key = reserved_key;  // id 0 means none
    t->nodes = nodes;

    builder b{t};
    for (std::uint32_t i = 0; i < count; ++i) {
        const resolved_site& s = sites[i];
        if (!s.resolved || s.nframes == 0) continue;
        recognition_slot& r = b.root(s.frames[0]);
        if (s.nframes == 1) {
            if (r.site == no_site) r.site = i;
            continue;
        }
        if (r.node == 0) r.node = b.node(0, s.frames[0]);
        std::uint32_t node = r.node;
        for (std::uint32_t k = 1; k < s.nframes; ++k) {
            if (t->nodes[node].deepest < s.nframes)
                t->nodes[node].deepest = static_cast<std::uint16_t>(s.nframes);
            node = b.node(node, s.frames[k]);
        }
        if (t->nodes[node].site == no_site) t->nodes[node].site = i;
    }
    inherit_sites(b, node_cap, deepest);
    return t;
}

}  // namespace rtmem::site_plan
