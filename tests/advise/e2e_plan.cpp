// A program with one site of each plannable class, for `rtmem advise --plan`'s end-to-end test.
// With --frames it calls rtmem_trace_frame() after each frame; without, the frame site's class
// can only come from its drain period (and the plan must fall back to a region).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rtmem.h"

namespace {

volatile unsigned char sink;
unsigned rng = 12345;
unsigned next() { return rng = rng * 1103515245u + 12345u; }

void touch(void* p, std::size_t n) {
    std::memset(p, 1, n);
    sink = static_cast<unsigned char>(sink + static_cast<unsigned char*>(p)[0]);
}

// One helper called from two places: its own frame is shared, the caller tells them apart.
__attribute__((noinline)) void* make_node(std::size_t n) {
    void* p = std::malloc(n);
    touch(p, n);
    return p;
}
// (Not tail calls: each caller keeps its frame, so the stacks differ in their second frame.)
__attribute__((noinline)) void* tree_node() {  // pool (churn)
    void* p = make_node(32);
    touch(p, 32);
    return p;
}
__attribute__((noinline)) void* list_node() {  // long-lived
    void* p = make_node(64);
    touch(p, 64);
    return p;
}

__attribute__((noinline)) void* scope_block(std::size_t n) {  // stack (LIFO)
    void* p = std::malloc(n);
    touch(p, 16);
    return p;
}

__attribute__((noinline)) void* token(std::size_t n) {  // linear (freed in bulk)
    void* p = std::malloc(n);
    touch(p, 16);
    return p;
}

__attribute__((noinline)) void* frame_scratch(std::size_t n) {  // frame
    void* p = std::malloc(n);
    touch(p, 16);
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    const bool frames = argc > 1 && std::strcmp(argv[1], "--frames") == 0;
    std::vector<void*> tree, list, scope, tokens, scratch;
    tree.reserve(64);
    list.reserve(256);
    scope.reserve(64);
    tokens.reserve(64);
    scratch.reserve(64);
    // Load phase, before any frame: bulk-freed token batches (linear).
    for (int batch = 0; batch < 20; ++batch) {
        const std::size_t n = 10 + next() % 40;
        for (std::size_t i = 0; i < n; ++i) tokens.push_back(token(16 + next() % 240));
        for (void* p : tokens) std::free(p);
        tokens.clear();
    }
    for (int i = 0; i < 50; ++i) tree.push_back(tree_node());
    for (int frame = 0; frame < 100; ++frame) {
        for (int i = 0; i < 20; ++i) scratch.push_back(frame_scratch(32 + next() % 480));
        for (int i = 0; i < 10; ++i) {  // tree nodes die and are replaced in no order
            const std::size_t k = next() % tree.size();
            std::free(tree[k]);
            tree[k] = tree_node();
        }
        for (int i = 0; i < 20; ++i) {  // a random walk of nested scopes
            if (scope.size() > 1 && (scope.size() >= 32 || next() % 100 < 45)) {
                std::free(scope.back());
                scope.pop_back();
            } else {
                scope.push_back(scope_block(16 + next() % 2000));
            }
        }
        list.push_back(list_node());
        list.push_back(list_node());
        for (void* p : scratch) std::free(p);  // the frame's scratch dies with the frame
        scratch.clear();
        if (frames) rtmem_trace_frame();
    }
    for (void* p : scope) std::free(p);
    for (void* p : tree) std::free(p);
    std::printf("%d\n", static_cast<int>(sink));
    return 0;  // the list is never freed: long-lived
}
