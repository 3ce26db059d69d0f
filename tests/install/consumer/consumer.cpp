// One program, several checks chosen by argv[1] (tests/install/check.sh runs each):
//   level      prints the check level this program and the library were built with
//   misuse     a stale marker: caught at level >= 1 by the default handler (message, abort)
//   legal      legal use that must raise no sanitizer report (inline and compiled code agree)
//   pool-uaf   a write to a freed pool block (ASan must report it)
//   pool-link  a read of a freed pool block's first word, the free-list link (ASan must report)
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include <rtmem/alloc/arena.hpp>
#include <rtmem/alloc/linear.hpp>
#include <rtmem/alloc/pool.hpp>
#include <rtmem/alloc/stack.hpp>
#include <rtmem/alloc/tlsf.hpp>
#include <rtmem/diag/tracked.hpp>

namespace {

int misuse() {
    rtmem::linear_allocator a{4096};
    const auto m1 = a.marker();
    (void)a.allocate(64, 8);
    const auto m2 = a.marker();
    a.rewind(m1);
    (void)a.allocate(200, 8);
    a.rewind(m2);  // stale: rewound past, then grown back over
    rtmem::arena ar{4096};
    const auto b = ar.marker();
    rtmem::arena other{4096};
    other.rewind(b);  // a foreign marker
    std::puts("misuse: not caught");
    return 0;
}

int legal() {
    std::vector<std::byte> heap(1 << 20);
    rtmem::tlsf_allocator tlsf{heap};
    auto* p = static_cast<unsigned char*>(tlsf.allocate(4096, 64));
    if (p == nullptr) return 1;
    std::memset(p, 1, 4096);
    // docs/debugging.md's tracked snippet
    rtmem::tracked<rtmem::tlsf_allocator> memory{tlsf};
    static const rtmem::tag textures{"render/textures"};
    void* q = nullptr;
    {
        rtmem::tag_scope scope{textures};
        q = memory.allocate(1000, 16);
        if (q == nullptr) return 1;
        std::memset(q, 2, 1000);
    }
    void* r = memory.allocate(4096, 64, rtmem::tag{"audio/music"});
    if (r == nullptr) return 1;
    std::memset(r, 3, 4096);
    memory.deallocate(r, 4096, 64);
    memory.deallocate(q, 1000, 16);
    tlsf.deallocate(p, 4096, 64);
    // The stack-ordered allocators and the arena, across chunks.
    rtmem::arena ar{1024};
    for (int i = 0; i < 50; ++i) std::memset(ar.allocate(300, 32), 4, 300);
    rtmem::stack_allocator st{4096};
    void* s1 = st.allocate(100, 64);
    void* s2 = st.allocate(100, 8);
    std::memset(s1, 5, 100);
    std::memset(s2, 5, 100);
    st.deallocate(s2, 100, 8);
    st.deallocate(s1, 100, 64);
    if (st.stats().used != 0) return 1;
    rtmem::pool_allocator<> pool{64, 16, 8};
    std::vector<void*> blocks;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 20; ++i) blocks.push_back(pool.allocate_block());
        for (void* b : blocks) std::memset(b, 6, 64);
        for (void* b : blocks) pool.deallocate_block(b);
        blocks.clear();
    }
    std::puts("legal: ok");
    return 0;
}

int pool_use_after_free() {
    rtmem::pool_allocator<> pool{64, 16, 8};
    auto* p = static_cast<volatile unsigned char*>(pool.allocate_block());
    (void)pool.allocate_block();
    pool.deallocate_block(const_cast<unsigned char*>(p));
    p[20] = 1;
    std::puts("pool-uaf: not caught");
    return 0;
}

int pool_link_read() {
    rtmem::pool_allocator<> pool{64, 16, 8};
    auto* p = static_cast<void* volatile*>(pool.allocate_block());
    (void)pool.allocate_block();
    pool.deallocate_block(const_cast<void**>(p));
    void* link = p[0];
    std::printf("pool-link: not caught (%p)\n", link);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view what = argc > 1 ? argv[1] : "level";
    if (what == "level") {
        std::printf("%d\n", rtmem::check_level);
        return 0;
    }
    if (what == "misuse") return misuse();
    if (what == "legal") return legal();
    if (what == "pool-uaf") return pool_use_after_free();
    if (what == "pool-link") return pool_link_read();
    std::fprintf(stderr, "unknown check %.*s\n", static_cast<int>(what.size()), what.data());
    return 2;
}
