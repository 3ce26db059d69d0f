#include "caller_frames.hpp"

#include <atomic>
#include <cstring>

#include "rtmem/interpose/guard.hpp"

#if RTMEM_PLAN_UNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace rtmem::site_plan {

namespace {

std::atomic<std::uint64_t> g_cached{0}, g_unwound{0};

#if RTMEM_PLAN_UNWIND
constexpr int cached_frames = 16;  // frames 1..16 above frame 0 (advise --plan goes to 16)
constexpr int cache_entries = 16;
constexpr int own_frames = 8;     // at most this many of the library's frames above frame 0

struct cache_entry {
    std::uintptr_t anchor, ra;
    int depth;  // frames cached after frame 0
    std::uintptr_t slot[cached_frames];
    std::uintptr_t ip[cached_frames];
};

// 16 x 280 bytes of static TLS (initial-exec, like the rest of the library's thread state).
constinit thread_local cache_entry tl_cache[cache_entries]
    __attribute__((tls_model("initial-exec"))) = {};
bool g_counting = false;  // only for the summary: a shared counter costs every thread

void count(std::atomic<std::uint64_t>& c) noexcept {
    if (g_counting) c.fetch_add(1, std::memory_order_relaxed);
}

constinit thread_local std::size_t tl_next_victim __attribute__((tls_model("initial-exec"))) = 0;

std::size_t entry_index(std::uintptr_t anchor, std::uintptr_t ra) noexcept {
    std::uint64_t h = (anchor ^ (ra * 0x9e3779b97f4a7c15ull)) >> 4;
    return static_cast<std::size_t>((h ^ (h >> 17)) & (cache_entries - 1));
}

// Steps through the stack noting where each return address above frame 0 was read from
// (x86-64: just below the caller's stack pointer). Fills `e`; false when the chain cannot be
// cached (then e.depth is 0 and the caller takes unw_backtrace's answer).
bool refill(cache_entry& e, std::uintptr_t ra, std::uintptr_t anchor, int want) noexcept {
    e = {};
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return false;
    bool found = false;
    for (int step = 0; step < own_frames + cached_frames + 2; ++step) {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (found) {
            unw_get_reg(&cursor, UNW_REG_SP, &sp);
            if (*reinterpret_cast<const std::uintptr_t*>(sp - 8) != ip) return e.depth > 0;
            e.slot[e.depth] = sp - 8;
            e.ip[e.depth] = ip;
            if (++e.depth >= want - 1 || e.depth == cached_frames) break;
        } else if (ip == ra) {
            found = true;
        } else if (step >= own_frames) {
            return false;
        }
        if (unw_step(&cursor) <= 0) break;
    }
    if (!found) return false;
    e.anchor = anchor;
    e.ra = ra;
    return true;
}
#endif

}  // namespace

int caller_frames(std::uintptr_t ra, std::uintptr_t anchor, std::uintptr_t* out,
                  int want) noexcept {
#if RTMEM_PLAN_UNWIND
    out[0] = ra;
    if (want <= 1) return 1;
    interpose::guard_scope guard;  // libunwind's own allocations, if any, go to glibc
    // Two ways per (anchor, frame 0): callers that take turns through one frame 0 keep both.
    const std::size_t way = entry_index(anchor, ra);
    if (want - 1 <= cached_frames) {
        cache_entry* hit = nullptr;
        for (std::size_t w = 0; w < 2 && hit == nullptr; ++w) {
            cache_entry& c = tl_cache[way ^ w];
            bool valid = c.anchor == anchor && c.ra == ra && c.depth > 0;
            for (int k = 0; valid && k < c.depth; ++k)
                valid = *reinterpret_cast<const std::uintptr_t*>(c.slot[k]) == c.ip[k];
            if (valid) hit = &c;
        }
        if (hit != nullptr) {
            count(g_cached);
        } else {
            count(g_unwound);
            cache_entry& victim = tl_cache[way ^ (tl_next_victim ^= 1)];
            if (refill(victim, ra, anchor, want)) hit = &victim;
        }
        if (hit != nullptr) {
            const int n = hit->depth < want - 1 ? hit->depth : want - 1;
            std::memcpy(out + 1, hit->ip, sizeof(std::uintptr_t) * static_cast<std::size_t>(n));
            return n + 1;
        }
    } else {
        count(g_unwound);
    }
    // Not cacheable (or deeper than the cache): libunwind's backtrace, from frame 0 on.
    void* raw[own_frames + 40];
    const int limit = want + own_frames < 40 ? want + own_frames : 40;
    const int n = unw_backtrace(raw, limit);
    int first = 0;
    while (first < n && first < own_frames && reinterpret_cast<std::uintptr_t>(raw[first]) != ra)
        ++first;
    if (first >= n || first >= own_frames) return 0;
    int depth = 0;
    for (int i = first; i < n && depth < want; ++i)
        out[depth++] = reinterpret_cast<std::uintptr_t>(raw[i]);
    return depth;
#else
    (void)ra, (void)anchor, (void)out, (void)want;
    return 0;
#endif
}

caller_frame_counts caller_frame_stats() noexcept {
    return {g_cached.load(std::memory_order_relaxed), g_unwound.load(std::memory_order_relaxed)};
}

void caller_frames_init(bool count_calls) noexcept {
#if RTMEM_PLAN_UNWIND
    g_counting = count_calls;
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);  // as the tracer does
#else
    (void)count_calls;
#endif
}

}  // namespace rtmem::site_plan
