/* rtmem C API: the Weaver arena (two stacks in one mapping, with memory points) and the
 * tracer's frame marker. Compiles as C11 and as C++.
 *
 * Errors: functions that fail return NULL / false / 0 and set this thread's last error, read
 * with rtmem_last_error() (successful calls set RTMEM_OK). Nothing here aborts on bad
 * arguments. */
#ifndef RTMEM_H
#define RTMEM_H

#include <stddef.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Sides of an arena: LEFT grows up from the start, RIGHT grows down from the end. */
#define RTMEM_SIDE_LEFT 0
#define RTMEM_SIDE_RIGHT 1

typedef enum rtmem_error {
    RTMEM_OK = 0,
    RTMEM_ERROR_NULL_ARENA,    /**< the arena argument was NULL */
    RTMEM_ERROR_BAD_ALIGNMENT, /**< alignment neither 0 nor a power of two */
    RTMEM_ERROR_BAD_SIDE,      /**< side neither RTMEM_SIDE_LEFT nor RTMEM_SIDE_RIGHT */
    RTMEM_ERROR_OUT_OF_MEMORY, /**< the two sides would meet, or the OS refused the mapping */
    RTMEM_ERROR_BAD_SIZE,      /**< size arithmetic overflows */
    RTMEM_ERROR_OTHER_THREAD,  /**< a rewind would free another thread's blocks or point */
    RTMEM_ERROR_LIVE_BLOCKS,   /**< destroy: blocks or memory points were still live */
    RTMEM_ERROR_NOT_TRACED,    /**< the process is not recording (no `rtmem record`, or ended) */
    RTMEM_ERROR_BAD_ARGUMENT,  /**< a NULL or empty path */
    RTMEM_ERROR_IO             /**< the trace dump could not be written */
} rtmem_error;

/** An arena: one mapping holding its own header, a mutex, and two stacks. Thread-safe.
 *
 * Threads: all threads share both sides, so their blocks interleave on a side. A memory point
 * belongs to the thread that pushed it, and rtmem_arena_rewind() frees only what is provably
 * the calling thread's: it refuses, with RTMEM_ERROR_OTHER_THREAD and nothing freed, when the
 * side's last memory point was pushed by another thread, or when another thread allocated on
 * the side after that point (with no point: when another thread has blocks on the side). So a
 * thread rewinds its own work as long as no other thread allocates on that side meanwhile;
 * give each thread its own side or its own arena for independent scopes. rtmem_arena_reset()
 * empties a side whoever filled it, for a moment when no other thread uses it. */
typedef struct rtmem_arena rtmem_arena;

/** Maps `bytes` (plus the header, rounded up to whole pages) with one mmap. NULL on failure. */
rtmem_arena* rtmem_arena_create(size_t bytes);

/** Unmaps the arena. Returns false when blocks or memory points were still live (the arena is
 * destroyed anyway; error RTMEM_ERROR_LIVE_BLOCKS), or when arena is NULL. */
bool rtmem_arena_destroy(rtmem_arena* arena);

/** `size` bytes from one side, aligned to `alignment` (0 means alignof(max_align_t); otherwise a
 * power of two). Size 0 gives a unique pointer. NULL when the sides would meet
 * (RTMEM_ERROR_OUT_OF_MEMORY) or size + alignment overflows (RTMEM_ERROR_BAD_SIZE). */
void* rtmem_arena_alloc(rtmem_arena* arena, size_t alignment, int side, size_t size);

/** Pushes a memory point on `side` (it takes a few bytes of that side). False on error. */
bool rtmem_arena_mark(rtmem_arena* arena, int side);

/** Frees `side` back to its last memory point and pops it, or empties the side when it has
 * none. Returns false, freeing nothing, when that would free another thread's blocks or memory
 * point (RTMEM_ERROR_OTHER_THREAD; see "Threads" above) or on a bad argument. */
bool rtmem_arena_rewind(rtmem_arena* arena, int side);

/** Empties `side` and pops all its memory points, whichever threads made them. The caller
 * guarantees no other thread still uses that side's blocks. False only on a bad argument. */
bool rtmem_arena_reset(rtmem_arena* arena, int side);

/** Bytes between the two sides (0 for NULL). */
size_t rtmem_arena_remaining(const rtmem_arena* arena);

/** High-water mark of the bytes used by both sides together (0 for NULL). */
size_t rtmem_arena_peak(const rtmem_arena* arena);

/** The error of this thread's last rtmem call, and a short English description of an error. */
rtmem_error rtmem_last_error(void);
const char* rtmem_error_string(rtmem_error error);

/** Marks a frame boundary for the allocation tracer (`rtmem record`); a no-op when the program
 * is not being traced. Call it once per frame, e.g. after presenting. Sets RTMEM_OK. */
void rtmem_trace_frame(void);

/** In-process control of the tracer, for programs that cannot be restarted: run the program
 * under `rtmem record` (typically `--sample 512K --paused`, or RTMEM_TRACE_START=0 with the
 * preload library set by hand) and decide from inside it what is recorded.
 *
 * rtmem_trace_stop() pauses: allocations are neither recorded nor counted (in a sampled
 * trace the frees of blocks recorded before still are, so they do not look leaked).
 * rtmem_trace_start() resumes (or starts a trace begun paused). rtmem_trace_dump(path) writes
 * a complete trace of everything recorded so far to `path` (readable by `rtmem report`; it
 * ends "by a dump") while recording goes on into the main trace; it costs a copy of the trace
 * file, so dump a sampled trace (bounded size) rather than a full one.
 *
 * Each returns true on success; false with RTMEM_ERROR_NOT_TRACED when the process is not
 * being recorded (not under `rtmem record`, or its trace has ended), RTMEM_ERROR_BAD_ARGUMENT
 * for a NULL or empty path, RTMEM_ERROR_IO when the dump cannot be written. Thread-safe. */
bool rtmem_trace_start(void);
bool rtmem_trace_stop(void);
bool rtmem_trace_dump(const char* path);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_H */
