/* The C API from a C program built with pkg-config's flags only (tests/install/check.sh). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rtmem.h>

int main(void) {
    rtmem_arena* arena = rtmem_arena_create(4096);
    if (arena == NULL) return 1;
    char* p = (char*)rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 100);
    if (p == NULL) return 1;
    memset(p, 1, 100);
    if (!rtmem_arena_mark(arena, RTMEM_SIDE_RIGHT)) return 1;
    if (rtmem_arena_alloc(arena, 0, RTMEM_SIDE_RIGHT, SIZE_MAX) != NULL ||
        rtmem_last_error() != RTMEM_ERROR_BAD_SIZE)
        return 1;
    if (!rtmem_arena_rewind(arena, RTMEM_SIDE_RIGHT) || !rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT))
        return 1;
    rtmem_trace_frame();
    if (rtmem_last_error() != RTMEM_OK) return 1;
    if (!rtmem_arena_destroy(arena)) return 1;
    puts("c consumer: ok");
    return 0;
}
