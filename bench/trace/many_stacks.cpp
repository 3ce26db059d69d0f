// A program with 2^17 distinct call stacks, for the size and speed of `rtmem report --html`
// on a trace with ~10^5 sites (bench/trace/html_page.sh): a 17-level recursion goes through
// left() or right() by the bits of i, then allocates (three blocks in four are freed).
#include <cstdlib>

namespace {
void* volatile sink;
}

extern "C" {
__attribute__((noinline)) void many_stacks_leaf(unsigned i) {
    void* p = std::malloc(16 + (i % 64) * 16);
    sink = p;
    if (i % 4 != 0) std::free(p);
}
__attribute__((noinline)) void many_stacks_left(unsigned i, int d);
__attribute__((noinline)) void many_stacks_right(unsigned i, int d);
__attribute__((noinline)) void many_stacks_step(unsigned i, int d) {
    if (d == 17) {
        many_stacks_leaf(i);
    } else if (((i >> d) & 1) != 0) {
        many_stacks_right(i, d + 1);
    } else {
        many_stacks_left(i, d + 1);
    }
}
// The empty asm keeps each call a call (no tail call), so each level is a frame.
void many_stacks_left(unsigned i, int d) {
    many_stacks_step(i, d);
    __asm__ volatile("");
}
void many_stacks_right(unsigned i, int d) {
    many_stacks_step(i, d);
    __asm__ volatile("");
}
}

int main() {
    for (unsigned i = 0; i < (1u << 17); ++i) many_stacks_step(i, 0);
    return 0;
}
