// Call stacks and loaded modules. A stack is captured with libunwind, hashed, looked up in the
// thread's direct-mapped cache and, only when the thread has not seen it, in the process table
// (the one lock on the recording path, taken once per distinct stack per thread).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstring>

#include "recorder_internal.hpp"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace rtmem::trace::internal {

namespace {

constexpr std::size_t stack_chunk_bytes = 256 * 1024;
constexpr std::size_t max_modules = 4096;

struct stack_entry {
    std::uint64_t hash;
    const std::uint64_t* ips;
    std::uint32_t id;
    std::uint32_t depth;
};

spin_lock g_stack_lock;
stack_entry* g_stacks = nullptr;
std::size_t g_stack_capacity = 0;  // power of two
std::size_t g_stack_size = 0;
std::uint32_t g_next_stack = 1;
char* g_ip_arena = nullptr;
std::size_t g_ip_arena_left = 0;
char* g_stack_chunk = nullptr;  // pending stack records
std::size_t g_stack_chunk_used = 0;
std::uint32_t g_stack_chunk_count = 0;
ZSTD_CCtx* g_meta_cctx = nullptr;
char* g_meta_scratch = nullptr;
std::size_t g_meta_scratch_cap = 0;

void flush_stacks_locked(bool compress) noexcept {
    if (g_stack_chunk_used == 0) return;
    if (compress && g_meta_cctx == nullptr) g_meta_cctx = make_cctx();
    write_chunk(fmt::chunk_type::stacks, 0, g_stack_chunk_count, g_stack_chunk, g_stack_chunk_used,
                compress ? g_meta_cctx : nullptr, g_meta_scratch, g_meta_scratch_cap);
    g_stack_chunk_used = 0;
    g_stack_chunk_count = 0;
}

void append_stack_record(std::uint32_t id, const std::uint64_t* ips, std::uint32_t depth) noexcept {
    std::size_t need = 8 + 8 * static_cast<std::size_t>(depth);
    if (g_stack_chunk_used + need > stack_chunk_bytes) flush_stacks_locked(true);
    std::memcpy(g_stack_chunk + g_stack_chunk_used, &id, 4);
    std::memcpy(g_stack_chunk + g_stack_chunk_used + 4, &depth, 4);
    std::memcpy(g_stack_chunk + g_stack_chunk_used + 8, ips, 8 * static_cast<std::size_t>(depth));
    g_stack_chunk_used += need;
    ++g_stack_chunk_count;
}

bool grow_stack_table() noexcept {
    std::size_t cap = g_stack_capacity == 0 ? 4096 : g_stack_capacity * 2;
    auto* t = static_cast<stack_entry*>(map_memory(cap * sizeof(stack_entry)));
    if (t == nullptr) return false;
    for (std::size_t i = 0; i < g_stack_capacity; ++i) {
        if (g_stacks[i].id == 0) continue;
        std::size_t j = g_stacks[i].hash & (cap - 1);
        while (t[j].id != 0) j = (j + 1) & (cap - 1);
        t[j] = g_stacks[i];
    }
    if (g_stacks != nullptr) munmap(g_stacks, g_stack_capacity * sizeof(stack_entry));
    g_stacks = t;
    g_stack_capacity = cap;
    return true;
}

bool module_known(std::uint64_t ip) noexcept;

std::uint32_t intern_stack(std::uint64_t hash, const std::uint64_t* ips,
                           std::uint32_t depth) noexcept {
    bool unknown_module = false;
    std::uint32_t id = 0;
    g_stack_lock.lock();
    if ((g_stack_size + 1) * 2 > g_stack_capacity && !grow_stack_table()) {
        g_stack_lock.unlock();
        return 0;
    }
    std::size_t mask = g_stack_capacity - 1;
    for (std::size_t j = hash & mask;; j = (j + 1) & mask) {
        stack_entry& e = g_stacks[j];
        if (e.id == 0) {
            std::size_t bytes = 8 * static_cast<std::size_t>(depth);
            if (g_ip_arena_left < bytes) {
                g_ip_arena = static_cast<char*>(map_memory(1u << 22));
                g_ip_arena_left = g_ip_arena == nullptr ? 0 : (1u << 22);
            }
            if (g_ip_arena_left < bytes) break;
            auto* copy = reinterpret_cast<std::uint64_t*>(g_ip_arena);
            std::memcpy(copy, ips, bytes);
            g_ip_arena += bytes;
            g_ip_arena_left -= bytes;
            id = g_next_stack++;
            e = {hash, copy, id, depth};
            ++g_stack_size;
            append_stack_record(id, ips, depth);
            for (std::uint32_t i = 0; i < depth && !unknown_module; ++i) {
                unknown_module = !module_known(ips[i]);
            }
            break;
        }
        if (e.hash == hash && e.depth == depth &&
            std::memcmp(e.ips, ips, 8 * static_cast<std::size_t>(depth)) == 0) {
            id = e.id;
            break;
        }
    }
    g_stack_lock.unlock();
    if (unknown_module) refresh_modules(false);
    return id;
}

// ---- module map ---------------------------------------------------------------------------------

struct module_range {
    std::uint64_t start, end;
};
module_range g_modules[max_modules];
std::atomic<std::size_t> g_module_count{0};
spin_lock g_module_lock;

bool module_known(std::uint64_t ip) noexcept {
    std::size_t n = g_module_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
        if (ip >= g_modules[i].start && ip < g_modules[i].end) return true;
    }
    return false;
}

struct module_scan {
    char* records;
    std::size_t used;
    std::size_t cap;
    std::uint32_t count;
};

int on_module(dl_phdr_info* info, std::size_t, void* data) {
    auto* scan = static_cast<module_scan*>(data);
    std::uint64_t lo = ~0ull, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        std::uint64_t s = info->dlpi_addr + ph.p_vaddr;
        if (s < lo) lo = s;
        if (s + ph.p_memsz > hi) hi = s + ph.p_memsz;
    }
    if (hi == 0) return 0;
    std::size_t n = g_module_count.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
        if (g_modules[i].start == lo && g_modules[i].end == hi) return 0;
    }
    if (n >= max_modules) return 0;
    const char* name = info->dlpi_name;
    if (name == nullptr || name[0] == 0) name = g_exe;
    auto len = static_cast<std::uint32_t>(std::strlen(name));
    if (scan->used + 28 + len > scan->cap) return 1;
    std::uint64_t bias = info->dlpi_addr;
    char* r = scan->records + scan->used;
    std::memcpy(r, &lo, 8);
    std::memcpy(r + 8, &hi, 8);
    std::memcpy(r + 16, &bias, 8);
    std::memcpy(r + 24, &len, 4);
    std::memcpy(r + 28, name, len);
    scan->used += 28 + len;
    ++scan->count;
    g_modules[n] = {lo, hi};
    g_module_count.store(n + 1, std::memory_order_release);
    return 0;
}

}  // namespace

bool g_fast_stacks = true;

namespace {

std::uint64_t hash_ips(const std::uint64_t* ips, int depth) noexcept {
    std::uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < depth; ++i) {
        h = (h ^ ips[i]) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h | 1;  // 0 marks an empty cache slot
}

std::uint32_t stack_id(stack_cache& c, const std::uint64_t* ips, int depth) noexcept {
    std::uint64_t h = hash_ips(ips, depth);
    cache_slot& slot = c.by_hash[(h >> 7) & (stack_cache_size - 1)];
    if (slot.hash == h) return slot.id;
    std::uint32_t id = intern_stack(h, ips, static_cast<std::uint32_t>(depth));
    if (id != 0) slot = {h, id};
    return id;
}

bool on_thread_stack(const stack_cache& c, std::uintptr_t a) noexcept {
    return a >= c.stack_lo && a + 8 <= c.stack_hi && (a & 7) == 0;
}

// The stack slot holding the return address into the program: this library is built with
// frame pointers, so its own frames are a chain of (saved rbp, return address) pairs from
// here up to the interposed entry point. 0 when the chain leaves the thread's stack.
__attribute__((noinline)) std::uintptr_t entry_return_slot(const stack_cache& c) noexcept {
#if defined(__x86_64__)
    auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    for (int i = 0; i < 16 && on_thread_stack(c, fp) && on_thread_stack(c, fp + 8); ++i) {
        std::uintptr_t ra = *reinterpret_cast<const std::uintptr_t*>(fp + 8);
        if (ra < g_self_begin || ra >= g_self_end) return fp + 8;
        std::uintptr_t next = *reinterpret_cast<const std::uintptr_t*>(fp);
        if (next <= fp) return 0;  // frames only go up
        fp = next;
    }
#else
    (void)c;
#endif
    return 0;
}

fast_stack& fast_slot(stack_cache& c, std::uintptr_t slot0, std::uint64_t ra0) noexcept {
    std::uint64_t h = (slot0 ^ (ra0 * 0x9e3779b97f4a7c15ull)) >> 4;
    return c.fast[(h ^ (h >> 17)) & (fast_entries - 1)];
}

// The fast path: the cached unwind for this entry slot still matches the stack.
std::uint32_t lookup_fast(stack_cache& c, std::uintptr_t slot0) noexcept {
    auto ra0 = *reinterpret_cast<const std::uint64_t*>(slot0);
    const fast_stack& f = fast_slot(c, slot0, ra0);
    if (f.id == 0 || f.slot[0] != slot0 || f.ip[0] != ra0) return 0;
    for (std::uint32_t k = 1; k < f.depth; ++k) {
        if (*reinterpret_cast<const std::uint64_t*>(f.slot[k]) != f.ip[k]) return 0;
    }
    return f.id;
}

}  // namespace

void reset_stack_cache(stack_cache& c) noexcept {
    std::memset(&c, 0, sizeof c);
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void* lo = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
        c.stack_lo = reinterpret_cast<std::uintptr_t>(lo);
        c.stack_hi = c.stack_lo + size;
    }
    pthread_attr_destroy(&attr);
}

namespace {

// libunwind's fast trace (a per-thread cache of frame layouts, ~15 ns a frame).
int backtrace_ips(std::uint64_t* ips) noexcept {
    void* raw[max_depth + 16];
    int n = unw_backtrace(raw, g_depth + 16);
    int first = 0;
    while (first < n && reinterpret_cast<std::uintptr_t>(raw[first]) >= g_self_begin &&
           reinterpret_cast<std::uintptr_t>(raw[first]) < g_self_end) {
        ++first;
    }
    int depth = n - first < g_depth ? n - first : g_depth;
    for (int i = 0; i < depth; ++i) ips[i] = reinterpret_cast<std::uintptr_t>(raw[first + i]);
    return depth < 0 ? 0 : depth;
}

// A step-by-step unwind that also notes where each return address was read from (x86-64:
// the slot below the caller's stack pointer), so later calls can verify the chain. Slow
// (~0.5 us a frame): run once per new entry slot, then with exponential back-off. Returns the
// stack id when the chain was cached (0: not cacheable; the caller unwinds the usual way).
std::uint32_t refill(stack_cache& c, fast_stack& f, std::uintptr_t slot0) noexcept {
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
    std::uint64_t ips[fast_depth_max];
    std::uint64_t slots[fast_depth_max];
    int depth = 0;
    for (int guard = 0; guard < fast_depth_max + 64 && depth < g_depth; ++guard) {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (depth > 0 || ip < g_self_begin || ip >= g_self_end) {
            unw_get_reg(&cursor, UNW_REG_SP, &sp);
            // Only a chain wholly on this thread's stack, return addresses where x86-64 puts
            // them (a signal frame, say, breaks that and is never cached).
            if (!on_thread_stack(c, sp - 8) ||
                *reinterpret_cast<const std::uint64_t*>(sp - 8) != ip) {
                return 0;
            }
            ips[depth] = ip;
            slots[depth] = sp - 8;
            ++depth;
        }
        if (unw_step(&cursor) <= 0) break;
    }
    if (depth == 0 || slots[0] != slot0) return 0;  // both walks must agree on the entry
    std::uint32_t id = stack_id(c, ips, depth);
    if (id == 0) return 0;
    f.id = id;
    f.depth = static_cast<std::uint32_t>(depth);
    std::memcpy(f.slot, slots, sizeof(std::uint64_t) * static_cast<std::size_t>(depth));
    std::memcpy(f.ip, ips, sizeof(std::uint64_t) * static_cast<std::size_t>(depth));
    return id;
}

}  // namespace

std::uint32_t capture_stack(stack_cache& c) noexcept {
    if (g_depth <= 0) return 0;
    bool fast = g_fast_stacks && g_depth <= fast_depth_max;
    std::uintptr_t slot0 = fast ? entry_return_slot(c) : 0;
    fast_stack* f = nullptr;
    if (slot0 != 0) {
        if (std::uint32_t id = lookup_fast(c, slot0); id != 0) return id;
        f = &fast_slot(c, slot0, *reinterpret_cast<const std::uint64_t*>(slot0));
        std::uint32_t misses = ++f->misses;
        if ((misses & (misses - 1)) == 0) {  // 1st, 2nd, 4th, 8th ... miss
            if (std::uint32_t id = refill(c, *f, slot0); id != 0) return id;
        }
    }
    std::uint64_t ips[max_depth];
    int depth = backtrace_ips(ips);
    return depth == 0 ? 0 : stack_id(c, ips, depth);
}

void flush_stacks(bool in_signal) noexcept {
    bool locked = g_stack_lock.try_lock_for(in_signal ? 50 : 100000);
    flush_stacks_locked(!in_signal);
    if (locked) g_stack_lock.unlock();
}

void refresh_modules(bool patient) noexcept {
    if (!g_module_lock.try_lock_for(patient ? 100 : 1)) return;
    static char records[256 * 1024];
    module_scan scan{records, 0, sizeof records, 0};
    dl_iterate_phdr(on_module, &scan);
    if (scan.count > 0) {
        write_chunk(fmt::chunk_type::modules, 0, scan.count, records, scan.used, nullptr, nullptr,
                    0);
    }
    g_module_lock.unlock();
}

void stacks_before_fork() noexcept {
    g_stack_lock.lock();
}
void stacks_after_fork_parent() noexcept {
    g_stack_lock.unlock();
}

void stacks_after_fork_child(bool tracing) noexcept {
    g_stack_lock.reset();
    g_module_lock.reset();
    g_meta_cctx = nullptr;  // another thread may have been inside it; leak rather than reuse
    if (!tracing) return;
    g_stack_chunk_used = 0;
    g_stack_chunk_count = 0;
    for (std::size_t i = 0; i < g_stack_capacity; ++i) {
        if (g_stacks[i].id != 0)
            append_stack_record(g_stacks[i].id, g_stacks[i].ips, g_stacks[i].depth);
    }
    flush_stacks_locked(true);
    g_module_count.store(0);
    refresh_modules(false);
}

bool stacks_init() noexcept {
    g_stack_chunk = static_cast<char*>(map_memory(stack_chunk_bytes));
    g_meta_scratch_cap = ZSTD_compressBound(stack_chunk_bytes);
    g_meta_scratch = static_cast<char*>(map_memory(g_meta_scratch_cap));
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    return g_stack_chunk != nullptr && g_meta_scratch != nullptr;
}

}  // namespace rtmem::trace::internal
