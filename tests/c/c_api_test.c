/* The C API from C11: create, allocate on both sides, memory points, rewind, errors, destroy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtmem.h"

static int failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                              \
        }                                                                            \
    } while (0)

static int aligned(const void* p, size_t a) {
    return ((uintptr_t)p & (a - 1)) == 0;
}

static void test_basic_sides(void) {
    rtmem_arena* arena = rtmem_arena_create(10000);
    CHECK(arena != NULL);
    CHECK(rtmem_last_error() == RTMEM_OK);
    const size_t total = rtmem_arena_remaining(arena);
    CHECK(total >= 10000); /* rounded up to whole pages, minus the header */

    char* left = (char*)rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 100);
    char* right = (char*)rtmem_arena_alloc(arena, 64, RTMEM_SIDE_RIGHT, 100);
    CHECK(left != NULL && right != NULL);
    CHECK(aligned(left, 16) && aligned(right, 64));
    CHECK(left + 100 <= right);
    memset(left, 1, 100);
    memset(right, 2, 100);
    char* left2 = (char*)rtmem_arena_alloc(arena, 8, RTMEM_SIDE_LEFT, 10);
    CHECK(left2 >= left + 100); /* left grows up */
    char* right2 = (char*)rtmem_arena_alloc(arena, 8, RTMEM_SIDE_RIGHT, 10);
    CHECK(right2 + 10 <= right); /* right grows down */
    CHECK(rtmem_arena_remaining(arena) < total - 220);
    CHECK(left[99] == 1 && right[0] == 2);
    CHECK(!rtmem_arena_destroy(arena)); /* blocks still live */
    CHECK(rtmem_last_error() == RTMEM_ERROR_LIVE_BLOCKS);
    CHECK(strlen(rtmem_error_string(RTMEM_ERROR_LIVE_BLOCKS)) > 0);
}

static void test_memory_points(void) {
    rtmem_arena* arena = rtmem_arena_create(4096);
    const size_t empty = rtmem_arena_remaining(arena);
    CHECK(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 64) != NULL);
    const size_t after_first = rtmem_arena_remaining(arena);
    CHECK(rtmem_arena_mark(arena, RTMEM_SIDE_LEFT));
    CHECK(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 500) != NULL);
    CHECK(rtmem_arena_mark(arena, RTMEM_SIDE_LEFT));
    CHECK(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 700) != NULL);
    CHECK(rtmem_arena_mark(arena, RTMEM_SIDE_RIGHT));
    CHECK(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_RIGHT, 300) != NULL);
    const size_t peak = rtmem_arena_peak(arena);
    CHECK(peak >= 64 + 500 + 700 + 300);

    rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT); /* back to the second point */
    rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT); /* back to the first point */
    rtmem_arena_rewind(arena, RTMEM_SIDE_RIGHT);
    CHECK(rtmem_arena_remaining(arena) == after_first);
    rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT); /* no point left: empties the side */
    CHECK(rtmem_arena_remaining(arena) == empty);
    CHECK(rtmem_arena_peak(arena) == peak); /* the high-water mark stays */
    CHECK(rtmem_arena_destroy(arena));      /* nothing live */
}

static void test_exhaustion(void) {
    rtmem_arena* arena = rtmem_arena_create(1);
    const size_t room = rtmem_arena_remaining(arena);
    CHECK(rtmem_arena_alloc(arena, 1, RTMEM_SIDE_LEFT, room + 1) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_OUT_OF_MEMORY);
    CHECK(rtmem_arena_alloc(arena, 1, RTMEM_SIDE_LEFT, room / 2) != NULL);
    CHECK(rtmem_arena_alloc(arena, 1, RTMEM_SIDE_RIGHT, room - room / 2) != NULL);
    CHECK(rtmem_arena_remaining(arena) == 0);
    CHECK(rtmem_arena_alloc(arena, 1, RTMEM_SIDE_RIGHT, 1) == NULL);
    CHECK(!rtmem_arena_mark(arena, RTMEM_SIDE_LEFT)); /* a memory point needs room too */
    rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT);
    rtmem_arena_rewind(arena, RTMEM_SIDE_RIGHT);
    CHECK(rtmem_arena_remaining(arena) == room);
    void* zero1 = rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 0);
    void* zero2 = rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 0);
    CHECK(zero1 != NULL && zero1 != zero2); /* size 0: unique pointers */
    rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT);
    CHECK(rtmem_arena_destroy(arena));
}

static void test_bad_arguments(void) {
    CHECK(rtmem_arena_alloc(NULL, 0, RTMEM_SIDE_LEFT, 8) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_NULL_ARENA);
    CHECK(!rtmem_arena_mark(NULL, RTMEM_SIDE_LEFT));
    rtmem_arena_rewind(NULL, RTMEM_SIDE_LEFT);
    CHECK(rtmem_last_error() == RTMEM_ERROR_NULL_ARENA);
    CHECK(rtmem_arena_remaining(NULL) == 0);
    CHECK(rtmem_arena_peak(NULL) == 0);
    CHECK(!rtmem_arena_destroy(NULL));

    rtmem_arena* arena = rtmem_arena_create(4096);
    CHECK(rtmem_arena_alloc(arena, 24, RTMEM_SIDE_LEFT, 8) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_ALIGNMENT);
    CHECK(rtmem_arena_alloc(arena, 8, 7, 8) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIDE);
    CHECK(!rtmem_arena_mark(arena, -1));
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIDE);
    rtmem_arena_rewind(arena, 2);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIDE);
    CHECK(strlen(rtmem_error_string(RTMEM_ERROR_BAD_SIDE)) > 0);
    CHECK(rtmem_arena_create(SIZE_MAX) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIZE);
    /* An impossible size is a bad size, not an exhausted arena. */
    CHECK(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, SIZE_MAX) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIZE);
    CHECK(rtmem_arena_alloc(arena, 64, RTMEM_SIDE_RIGHT, SIZE_MAX - 10) == NULL);
    CHECK(rtmem_last_error() == RTMEM_ERROR_BAD_SIZE);
    CHECK(rtmem_arena_destroy(arena));
}

static void test_trace_frame_without_tracer(void) {
    /* Not traced: a harmless no-op, also when called repeatedly. */
    for (int i = 0; i < 3; ++i) rtmem_trace_frame();
    /* A successful call clears an earlier error. */
    CHECK(rtmem_arena_alloc(NULL, 0, RTMEM_SIDE_LEFT, 8) == NULL);
    rtmem_trace_frame();
    CHECK(rtmem_last_error() == RTMEM_OK);
}

int main(void) {
    test_basic_sides();
    test_memory_points();
    test_exhaustion();
    test_bad_arguments();
    test_trace_frame_without_tracer();
    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return EXIT_FAILURE;
    }
    puts("C API: all checks passed");
    return EXIT_SUCCESS;
}
