// The recorder of librtmem-trace.so. Hot path: one uncontended per-thread flag, a stack
// capture and a store into the thread's buffer. A full buffer is compressed by its own thread
// and written at an offset reserved with one atomic add, so threads never wait for each other
// except on a call stack seen for the first time (stack table spin lock).
// No stdio, no C++ runtime allocation: raw syscalls with retry, memory from mmap.
#include "recorder.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "rtmem/analyze/trace_format.hpp"

namespace rtmem::trace {

namespace fmt = rtmem::trace_format;

real_functions real{};
bool g_use_tsc = false;
double g_ns_per_tick = 1.0;
std::uint64_t g_tsc0 = 0, g_mono0 = 0;
thread_local int tl_guard __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// ---- small freestanding helpers -------------------------------------------------------------

constexpr std::size_t events_per_buffer = 4096;
constexpr std::size_t stack_cache_size = 4096;  // per thread, direct mapped
constexpr int max_depth = 128;
constexpr std::size_t stack_chunk_bytes = 256 * 1024;
constexpr std::size_t max_modules = 4096;
constexpr std::size_t max_index = 1u << 21;

void* map_memory(std::size_t n) noexcept {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

bool write_all_at(int fd, const void* data, std::size_t n, std::uint64_t offset) noexcept {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
        offset += static_cast<std::uint64_t>(w);
    }
    return true;
}

void write_stderr(const char* s) noexcept {
    std::size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(2, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

// Appends decimal `v` to the zero-terminated `buf` of capacity `cap`.
void append_str(char* buf, std::size_t cap, const char* s) noexcept {
    std::size_t len = std::strlen(buf);
    while (*s != 0 && len + 1 < cap) buf[len++] = *s++;
    buf[len] = 0;
}
void append_u64(char* buf, std::size_t cap, std::uint64_t v) noexcept {
    char tmp[24];
    int i = 23;
    tmp[i] = 0;
    do {
        tmp[--i] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0 && i > 0);
    append_str(buf, cap, tmp + i);
}

std::uint64_t parse_u64(const char* s, std::uint64_t fallback) noexcept {
    if (s == nullptr || *s == 0) return fallback;
    std::uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + static_cast<std::uint64_t>(*s - '0');
    return v;
}

class spin_lock {
  public:
    void lock() noexcept {
        while (flag_.exchange(true, std::memory_order_acquire)) sched_yield();
    }
    bool try_lock_for(int spins) noexcept {
        for (int i = 0; i < spins; ++i) {
            if (!flag_.exchange(true, std::memory_order_acquire)) return true;
            sched_yield();
        }
        return false;
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }
    void reset() noexcept { flag_.store(false, std::memory_order_relaxed); }

  private:
    std::atomic<bool> flag_{false};
};

// ---- global state ---------------------------------------------------------------------------

enum state_value : int { uninit, initializing, ready, disabled };
std::atomic<int> g_state{uninit};
std::atomic<bool> g_stopped{false};  // end written: later events are counted as dropped
int g_fd = -1;
std::atomic<std::uint64_t> g_file_offset{sizeof(fmt::file_header)};
std::uint64_t g_start_mono = 0;
int g_depth = 16;
bool g_follow_fork = false;
int g_zstd_level = 1;
char g_path[4096];
char g_exe[4096];
std::uintptr_t g_self_begin = 0, g_self_end = 0;  // this library's mapping (skipped frames)
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<std::uint32_t> g_next_thread{1};
pthread_key_t g_thread_key;

fmt::index_entry* g_index = nullptr;
std::atomic<std::uint64_t> g_index_count{0};

// ---- chunk writer -----------------------------------------------------------------------------

// Writes one chunk; `scratch` (capacity ZSTD_compressBound(raw_size)) receives the compressed
// payload when `cctx` is given, otherwise the payload is stored raw (signal paths).
std::uint64_t write_chunk(fmt::chunk_type type, std::uint32_t thread, std::uint32_t count,
                          const void* payload, std::size_t raw_size, ZSTD_CCtx* cctx, void* scratch,
                          std::size_t scratch_cap, std::uint16_t flags = 0) noexcept {
    if (g_fd < 0) return 0;
    fmt::chunk_header h{};
    h.magic = fmt::chunk_magic;
    h.type = type;
    h.coding = fmt::codec::raw;
    h.flags = flags;
    h.thread = thread;
    h.count = count;
    h.raw_size = static_cast<std::uint32_t>(raw_size);
    const void* stored = payload;
    std::size_t stored_size = raw_size;
    if (cctx != nullptr && scratch != nullptr && raw_size > 0) {
        std::size_t c = ZSTD_compress2(cctx, scratch, scratch_cap, payload, raw_size);
        if (ZSTD_isError(c) == 0 && c < raw_size) {
            h.coding = fmt::codec::zstd;
            stored = scratch;
            stored_size = c;
        }
    }
    h.stored_size = static_cast<std::uint32_t>(stored_size);
    h.check = fmt::header_check(h);
    std::uint64_t off = g_file_offset.fetch_add(sizeof h + stored_size, std::memory_order_relaxed);
    write_all_at(g_fd, &h, sizeof h, off);
    write_all_at(g_fd, stored, stored_size, off + sizeof h);
    return off;
}

ZSTD_CCtx* make_cctx() noexcept {
    guard_scope g;
    ZSTD_CCtx* c = ZSTD_createCCtx();
    if (c != nullptr) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, g_zstd_level);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    }
    return c;
}

// ---- per-thread buffers -----------------------------------------------------------------------

struct cache_slot {
    std::uint64_t hash;
    std::uint32_t id;
};

struct thread_buffer {
    thread_buffer* next;  // registry, never unlinked
    std::atomic<bool> in_use;
    spin_lock lock;  // uncontended except against the end/fork/signal flush
    std::uint32_t thread;
    std::atomic<std::uint32_t> count;
    std::uint64_t recorded;  // events ever recorded into this buffer (end record total)
    ZSTD_CCtx* cctx;
    std::size_t scratch_cap;
    char* scratch;
    cache_slot cache[stack_cache_size];
    fmt::raw_event events[events_per_buffer];
    unsigned char packed[events_per_buffer * fmt::packed::max_event_bytes];
};

std::atomic<thread_buffer*> g_buffers{nullptr};
thread_local thread_buffer* tl_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local std::uint32_t tl_thread __attribute__((tls_model("initial-exec"))) = 0;
thread_local bool tl_has_thread __attribute__((tls_model("initial-exec"))) = false;

// Writes the buffer's events as one chunk. Caller holds b->lock (or owns the process).
void flush_buffer(thread_buffer* b, bool compress) noexcept {
    std::uint32_t n = b->count.load(std::memory_order_acquire);
    if (n == 0) return;
    if (compress && b->cctx == nullptr) b->cctx = make_cctx();
    std::size_t packed = fmt::packed::pack(b->events, n, b->packed);
    std::uint64_t off = write_chunk(fmt::chunk_type::events, b->thread, n, b->packed, packed,
                                    compress ? b->cctx : nullptr, b->scratch, b->scratch_cap,
                                    fmt::chunk_flag_packed);
    std::uint64_t slot = g_index_count.fetch_add(1, std::memory_order_relaxed);
    if (g_index != nullptr && slot < max_index) {
        g_index[slot] = {off, b->events[0].time, b->thread, n};
    }
    b->count.store(0, std::memory_order_release);
}

std::uint32_t current_thread_number() noexcept {
    if (!tl_has_thread) {
        tl_has_thread = true;
        tl_thread = static_cast<pid_t>(syscall(SYS_gettid)) == getpid()
                        ? 0
                        : g_next_thread.fetch_add(1, std::memory_order_relaxed);
    }
    return tl_thread;
}

thread_buffer* acquire_buffer() noexcept {
    thread_buffer* b = nullptr;
    for (thread_buffer* it = g_buffers.load(std::memory_order_acquire); it != nullptr;
         it = it->next) {
        bool expected = false;
        if (!it->in_use.load(std::memory_order_relaxed) &&
            it->in_use.compare_exchange_strong(expected, true)) {
            b = it;
            break;
        }
    }
    if (b == nullptr) {
        b = static_cast<thread_buffer*>(map_memory(sizeof(thread_buffer)));
        if (b == nullptr) return nullptr;
        b->scratch_cap = ZSTD_compressBound(sizeof b->packed);
        b->scratch = static_cast<char*>(map_memory(b->scratch_cap));
        b->in_use.store(true, std::memory_order_relaxed);
        thread_buffer* head = g_buffers.load(std::memory_order_relaxed);
        do {
            b->next = head;
        } while (!g_buffers.compare_exchange_weak(head, b, std::memory_order_release));
    }
    b->lock.lock();
    b->thread = current_thread_number();
    std::memset(b->cache, 0, sizeof b->cache);  // stack ids are global, but keep it simple
    b->lock.unlock();
    tl_buffer = b;
    pthread_setspecific(g_thread_key, b);
    return b;
}

// Thread exit: flush and hand the buffer to the next new thread. A later TLS destructor that
// allocates acquires a buffer again (pthread re-runs destructors for keys set again).
void release_buffer(void* p) {
    guard_scope g;
    auto* b = static_cast<thread_buffer*>(p);
    b->lock.lock();
    flush_buffer(b, true);
    b->lock.unlock();
    tl_buffer = nullptr;
    b->in_use.store(false, std::memory_order_release);
}

// ---- stack table --------------------------------------------------------------------------------

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
void refresh_modules(bool compress) noexcept;

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
    if (unknown_module) refresh_modules(true);
    return id;
}

std::uint32_t capture_stack(thread_buffer* b) noexcept {
    if (g_depth <= 0) return 0;
    void* raw[max_depth + 16];
    int n = unw_backtrace(raw, g_depth + 16);
    int first = 0;
    while (first < n && reinterpret_cast<std::uintptr_t>(raw[first]) >= g_self_begin &&
           reinterpret_cast<std::uintptr_t>(raw[first]) < g_self_end) {
        ++first;
    }
    int depth = n - first < g_depth ? n - first : g_depth;
    if (depth <= 0) return 0;
    std::uint64_t ips[max_depth];
    std::uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < depth; ++i) {
        ips[i] = reinterpret_cast<std::uintptr_t>(raw[first + i]);
        h = (h ^ ips[i]) * 1099511628211ull;
        h ^= h >> 29;
    }
    h |= 1;  // 0 marks an empty cache slot
    cache_slot& slot = b->cache[(h >> 7) & (stack_cache_size - 1)];
    if (slot.hash == h) return slot.id;
    std::uint32_t id = intern_stack(h, ips, static_cast<std::uint32_t>(depth));
    if (id != 0) slot = {h, id};
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

// Records modules loaded since the last scan. Try-lock: another thread is already scanning.
void refresh_modules(bool compress) noexcept {
    if (!g_module_lock.try_lock_for(compress ? 1 : 100)) return;
    static char records[256 * 1024];
    module_scan scan{records, 0, sizeof records, 0};
    dl_iterate_phdr(on_module, &scan);
    if (scan.count > 0) {
        ZSTD_CCtx* none = nullptr;
        write_chunk(fmt::chunk_type::modules, 0, scan.count, records, scan.used, none, nullptr, 0);
    }
    g_module_lock.unlock();
}

// ---- start and end ------------------------------------------------------------------------------

void write_meta() noexcept {
    char text[8192] = "";
    append_str(text, sizeof text, "program=");
    append_str(text, sizeof text, g_exe);
    append_str(text, sizeof text, "\npid=");
    append_u64(text, sizeof text, static_cast<std::uint64_t>(getpid()));
    append_str(text, sizeof text, "\nppid=");
    append_u64(text, sizeof text, static_cast<std::uint64_t>(getppid()));
    append_str(text, sizeof text, "\ndepth=");
    append_u64(text, sizeof text, static_cast<std::uint64_t>(g_depth));
    append_str(text, sizeof text, "\ncommand=");
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char cmd[4096];
        ssize_t n = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        if (n > 0) {
            for (ssize_t i = 0; i < n - 1; ++i) {
                if (cmd[i] == 0) cmd[i] = ' ';
                if (cmd[i] == '\n') cmd[i] = ' ';
            }
            cmd[n] = 0;
            append_str(text, sizeof text, cmd);
        }
    }
    append_str(text, sizeof text, "\n");
    ZSTD_CCtx* none = nullptr;
    write_chunk(fmt::chunk_type::meta, 0, 0, text, std::strlen(text), none, nullptr, 0);
}

bool open_trace(const char* path, bool exclusive) noexcept {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    g_fd = open(path, flags, 0644);
    if (g_fd < 0) return false;
    std::strncpy(g_path, path, sizeof g_path - 1);
    g_file_offset.store(sizeof(fmt::file_header));
    fmt::file_header h{};
    std::memcpy(h.magic, fmt::magic, sizeof h.magic);
    h.version = fmt::trace_version;
    h.header_size = sizeof h;
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    h.start_realtime = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
                       static_cast<std::uint64_t>(ts.tv_nsec);
    h.start_mono = g_start_mono;
    h.pid = static_cast<std::uint32_t>(getpid());
    h.stack_depth = static_cast<std::uint32_t>(g_depth);
    write_all_at(g_fd, &h, sizeof h, 0);
    write_meta();
    return true;
}

// Child files: "<path>.<pid>", made unique with ".<n>" (an exec'd image keeps its pid).
bool open_child_trace(const char* base) noexcept {
    for (std::uint64_t n = 0; n < 1000; ++n) {
        char path[4200] = "";
        append_str(path, sizeof path, base);
        append_str(path, sizeof path, ".");
        append_u64(path, sizeof path, static_cast<std::uint64_t>(getpid()));
        if (n > 0) {
            append_str(path, sizeof path, ".");
            append_u64(path, sizeof path, n);
        }
        if (open_trace(path, true)) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

// Flushes everything and writes the end chunk. `in_signal`: no allocation (raw chunks), and
// buffers whose lock cannot be taken quickly are flushed as they are.
void write_end(fmt::end_reason reason, int sig, bool in_signal) noexcept {
    if (g_state.load() != ready || g_fd < 0) return;
    guard_scope g;
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        bool locked = b->lock.try_lock_for(in_signal ? 50 : 100000);
        flush_buffer(b, !in_signal);
        if (locked) b->lock.unlock();
    }
    bool locked = g_stack_lock.try_lock_for(in_signal ? 50 : 100000);
    flush_stacks_locked(!in_signal);
    if (locked) g_stack_lock.unlock();
    refresh_modules(false);
    std::uint64_t n = g_index_count.load();
    if (n > max_index) n = max_index;
    fmt::end_record end{};
    end.reason = static_cast<std::uint32_t>(reason);
    end.signal = static_cast<std::uint32_t>(sig);
    std::uint64_t total = 0;
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        total += b->recorded;
    }
    end.events = total;
    end.time = fast_ns();
    end.dropped = g_dropped.load();
    // The end record and the index go out as one raw chunk: header, record, entries.
    fmt::chunk_header h{};
    h.magic = fmt::chunk_magic;
    h.type = fmt::chunk_type::end;
    h.coding = fmt::codec::raw;
    h.count = static_cast<std::uint32_t>(n);
    std::size_t index_bytes = n * sizeof(fmt::index_entry);
    h.raw_size = static_cast<std::uint32_t>(sizeof end + index_bytes);
    h.stored_size = h.raw_size;
    h.check = fmt::header_check(h);
    std::uint64_t off = g_file_offset.fetch_add(sizeof h + h.stored_size);
    write_all_at(g_fd, &h, sizeof h, off);
    write_all_at(g_fd, &end, sizeof end, off + sizeof h);
    if (index_bytes > 0) write_all_at(g_fd, g_index, index_bytes, off + sizeof h + sizeof end);
}

void finish(fmt::end_reason reason, int sig, bool in_signal) noexcept {
    if (g_state.load() != ready) return;
    if (g_stopped.exchange(true)) return;
    write_end(reason, sig, in_signal);
}

// Only signals whose default action ends the process and that programs rarely inspect: a
// handler on SIGINT would, e.g., stop Python from installing KeyboardInterrupt (it only does
// so when SIGINT is at its default), changing the traced program's behaviour.
constexpr int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM};

void on_fatal_signal(int sig) {
    int saved = errno;
    finish(fmt::end_reason::signal, sig, true);
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig);  // delivered when the handler returns: the program dies as it would have
}

void install_signal_handlers() noexcept {
    for (int sig : fatal_signals) {
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa {};
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(sig, &sa, nullptr);
    }
}

// fork: the child owns none of the other threads' events (the parent writes them).
void before_fork() {
    g_stack_lock.lock();
}
void after_fork_parent() {
    g_stack_lock.unlock();
}
void after_fork_child() {
    g_stack_lock.reset();
    g_module_lock.reset();
    for (thread_buffer* b = g_buffers.load(); b != nullptr; b = b->next) {
        b->lock.reset();
        b->count.store(0);
        if (b != tl_buffer) b->in_use.store(false);
    }
    tl_has_thread = false;
    g_next_thread.store(1);
    if (tl_buffer != nullptr) tl_buffer->thread = current_thread_number();
    int old_fd = g_fd;
    g_fd = -1;
    if (old_fd >= 0) close(old_fd);
    if (!g_follow_fork || g_stopped.load()) {
        g_state.store(disabled);
        return;
    }
    guard_scope g;
    char base[4096];
    std::memcpy(base, g_path, sizeof base);
    g_index_count.store(0);
    for (thread_buffer* b = g_buffers.load(); b != nullptr; b = b->next) b->recorded = 0;
    g_dropped.store(0);
    if (!open_child_trace(base)) {
        g_state.store(disabled);
        return;
    }
    // The child's file needs every stack and module it may refer to.
    g_stack_chunk_used = 0;
    g_stack_chunk_count = 0;
    for (std::size_t i = 0; i < g_stack_capacity; ++i) {
        if (g_stacks[i].id != 0)
            append_stack_record(g_stacks[i].id, g_stacks[i].ips, g_stacks[i].depth);
    }
    flush_stacks_locked(true);
    g_module_count.store(0);
    refresh_modules(true);
}

void find_self() noexcept {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&find_self), &info) == 0) return;
    auto base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    struct range {
        std::uintptr_t base, lo, hi;
    } r{base, ~std::uintptr_t{0}, 0};
    dl_iterate_phdr(
        [](dl_phdr_info* i, std::size_t, void* data) {
            auto* rr = static_cast<range*>(data);
            for (int k = 0; k < i->dlpi_phnum; ++k) {
                const auto& ph = i->dlpi_phdr[k];
                if (ph.p_type != PT_LOAD) continue;
                std::uintptr_t s = i->dlpi_addr + ph.p_vaddr;
                if (ph.p_offset == 0 && s != rr->base) return 0;  // not this object
                if (s < rr->lo) rr->lo = s;
                if (s + ph.p_memsz > rr->hi) rr->hi = s + ph.p_memsz;
            }
            return rr->hi != 0 ? 1 : 0;
        },
        &r);
    g_self_begin = r.lo;
    g_self_end = r.hi;
}

template <class F>
void resolve(F& fn, const char* name) noexcept {
    fn = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void resolve_all() noexcept {
    resolve(real.malloc, "malloc");
    resolve(real.calloc, "calloc");
    resolve(real.realloc, "realloc");
    resolve(real.free, "free");
    resolve(real.memalign, "memalign");
    resolve(real.posix_memalign, "posix_memalign");
    resolve(real.aligned_alloc, "aligned_alloc");
    resolve(real.valloc, "valloc");
    resolve(real.pvalloc, "pvalloc");
    resolve(real.malloc_usable_size, "malloc_usable_size");
    resolve(real.new_scalar, "_Znwm");
    resolve(real.new_array, "_Znam");
    resolve(real.new_scalar_nothrow, "_ZnwmRKSt9nothrow_t");
    resolve(real.new_array_nothrow, "_ZnamRKSt9nothrow_t");
    resolve(real.new_scalar_aligned, "_ZnwmSt11align_val_t");
    resolve(real.new_array_aligned, "_ZnamSt11align_val_t");
    resolve(real.new_scalar_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t");
    resolve(real.new_array_aligned_nothrow, "_ZnamSt11align_val_tRKSt9nothrow_t");
    resolve(real.delete_scalar, "_ZdlPv");
    resolve(real.delete_array, "_ZdaPv");
    resolve(real.delete_scalar_aligned, "_ZdlPvSt11align_val_t");
    resolve(real.delete_array_aligned, "_ZdaPvSt11align_val_t");
    resolve(real.exit_now, "_exit");
    resolve(real.execve, "execve");
    resolve(real.execvpe, "execvpe");
    resolve(real.fexecve, "fexecve");
}

// Uses the TSC when the CPU says it is invariant (constant_tsc and nonstop_tsc): ~1 ms of
// calibration against CLOCK_MONOTONIC at start.
void calibrate_tsc() noexcept {
#if defined(__x86_64__)
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    static char info[16384];
    ssize_t n = read(fd, info, sizeof info - 1);
    close(fd);
    if (n <= 0) return;
    info[n] = 0;
    if (std::strstr(info, " constant_tsc") == nullptr ||
        std::strstr(info, " nonstop_tsc") == nullptr) {
        return;
    }
    std::uint64_t m0 = now_ns(), t0 = __builtin_ia32_rdtsc(), m1 = m0, t1 = t0;
    while (m1 - m0 < 1000000) {
        m1 = now_ns();
        t1 = __builtin_ia32_rdtsc();
    }
    if (t1 <= t0) return;
    g_ns_per_tick = static_cast<double>(m1 - m0) / static_cast<double>(t1 - t0);
    g_tsc0 = t1;
    g_mono0 = m1;
    g_use_tsc = true;
#endif
}

void initialize() noexcept {
    guard_scope g;
    resolve_all();
    if (real.malloc == nullptr || real.free == nullptr || real.calloc == nullptr ||
        real.realloc == nullptr) {
        write_stderr("rtmem-trace: cannot resolve malloc; not recording\n");
        g_state.store(disabled);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
    g_exe[n > 0 ? n : 0] = 0;
    g_depth = static_cast<int>(parse_u64(getenv("RTMEM_TRACE_DEPTH"), 16));
    if (g_depth > max_depth) g_depth = max_depth;
    g_follow_fork = parse_u64(getenv("RTMEM_TRACE_FOLLOW_FORK"), 0) != 0;
    if (const char* lv = getenv("RTMEM_TRACE_ZSTD_LEVEL"); lv != nullptr && *lv != 0) {
        bool negative = *lv == '-';
        auto v = static_cast<int>(parse_u64(negative ? lv + 1 : lv, 1));
        g_zstd_level = negative ? -v : v;
    }
    const char* file = getenv("RTMEM_TRACE_FILE");
    bool descendant = getenv("RTMEM_TRACE_ACTIVE") != nullptr;
    char default_path[4200] = "";
    if (file == nullptr || *file == 0) {
        const char* slash = std::strrchr(g_exe, '/');
        append_str(default_path, sizeof default_path, "rtmem-");
        append_str(default_path, sizeof default_path, slash != nullptr ? slash + 1 : g_exe);
        append_str(default_path, sizeof default_path, "-");
        append_u64(default_path, sizeof default_path, static_cast<std::uint64_t>(getpid()));
        append_str(default_path, sizeof default_path, ".rtt");
        file = default_path;
    }
    if (descendant && !g_follow_fork) {  // exec'd or spawned by a traced process
        g_state.store(disabled);
        return;
    }
    setenv("RTMEM_TRACE_ACTIVE", "1", 1);
    calibrate_tsc();
    g_start_mono = fast_ns();
    find_self();
    g_index = static_cast<fmt::index_entry*>(
        mmap(nullptr, max_index * sizeof(fmt::index_entry), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (g_index == MAP_FAILED) g_index = nullptr;
    g_stack_chunk = static_cast<char*>(map_memory(stack_chunk_bytes));
    g_meta_scratch_cap = ZSTD_compressBound(stack_chunk_bytes);
    g_meta_scratch = static_cast<char*>(map_memory(g_meta_scratch_cap));
    bool opened = descendant ? open_child_trace(file) : open_trace(file, false);
    if (!opened || g_stack_chunk == nullptr || g_meta_scratch == nullptr) {
        write_stderr("rtmem-trace: cannot open the trace file; not recording\n");
        g_state.store(disabled);
        return;
    }
    pthread_key_create(&g_thread_key, release_buffer);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    install_signal_handlers();
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    refresh_modules(true);
    g_state.store(ready, std::memory_order_release);
}

__attribute__((destructor)) void at_exit() {
    finish(fmt::end_reason::exit, 0, false);
}

// Bootstrap: a bump buffer; blocks carry their size in a 16-byte header and are never freed.
alignas(4096) char g_bootstrap[4u << 20];
std::atomic<std::size_t> g_bootstrap_used{0};

}  // namespace

std::uint64_t now_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

bool recording() noexcept {
    return g_state.load(std::memory_order_acquire) == ready &&
           !g_stopped.load(std::memory_order_relaxed);
}
bool real_resolved() noexcept {
    return real.free != nullptr && real.malloc != nullptr;
}

bool ensure_ready() noexcept {
    int s = g_state.load(std::memory_order_acquire);
    if (s == ready || s == disabled) return true;
    if (tl_guard > 0) return real_resolved();  // re-entered from dlsym during initialize()
    int expected = uninit;
    if (g_state.compare_exchange_strong(expected, initializing)) {
        initialize();
        return true;
    }
    while (g_state.load(std::memory_order_acquire) == initializing) sched_yield();
    return true;
}

void record(op kind, std::uint64_t size, std::size_t align, const void* ptr, const void* old_ptr,
            std::uint64_t time, std::uint64_t duration, bool failed) noexcept {
    if (g_stopped.load(std::memory_order_relaxed)) {
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    thread_buffer* b = tl_buffer;
    if (b == nullptr) b = acquire_buffer();
    if (b == nullptr) {
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // Deallocations carry no stack: the report charges them to the allocating site, and
    // skipping the unwind halves the cost of a malloc/free pair.
    bool with_stack = analyze::is_allocation(kind) || kind == op::realloc;
    std::uint32_t stack = with_stack ? capture_stack(b) : 0;
    b->lock.lock();
    std::uint32_t n = b->count.load(std::memory_order_relaxed);
    if (n == events_per_buffer) {
        flush_buffer(b, true);
        n = 0;
    }
    fmt::raw_event& e = b->events[n];
    e.time = time - g_start_mono;
    e.ptr = reinterpret_cast<std::uintptr_t>(ptr);
    e.old_ptr = reinterpret_cast<std::uintptr_t>(old_ptr);
    e.size = size;
    e.stack = stack;
    e.duration = duration > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(duration);
    e.kind = static_cast<std::uint8_t>(kind);
    e.align_log2 = align == 0 ? 0 : static_cast<std::uint8_t>(__builtin_ctzll(align) + 1);
    e.flags = failed ? fmt::event_flag::failed : 0;
    std::memset(e.pad, 0, sizeof e.pad);
    b->count.store(n + 1, std::memory_order_release);
    ++b->recorded;
    b->lock.unlock();
}

void finish_before_exec() noexcept {
    finish(fmt::end_reason::exec, 0, false);
}
void finish_quick_exit() noexcept {
    finish(fmt::end_reason::quick_exit, 0, false);
}

void* bootstrap_alloc(std::size_t size, std::size_t align) noexcept {
    if (align < 16) align = 16;
    std::size_t need = ((size + 15) & ~std::size_t{15}) + align + 16;
    std::size_t start = g_bootstrap_used.fetch_add(need);
    if (start + need > sizeof g_bootstrap) {
        errno = ENOMEM;
        return nullptr;
    }
    auto base = reinterpret_cast<std::uintptr_t>(g_bootstrap) + start + 16;
    std::uintptr_t p = (base + align - 1) & ~(align - 1);
    std::size_t stored = size;
    std::memcpy(reinterpret_cast<void*>(p - 16), &stored, sizeof stored);
    return reinterpret_cast<void*>(p);
}
bool is_bootstrap(const void* p) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(g_bootstrap);
    return a >= b && a < b + sizeof g_bootstrap;
}
std::size_t bootstrap_size(const void* p) noexcept {
    std::size_t s = 0;
    std::memcpy(&s, static_cast<const char*>(p) - 16, sizeof s);
    return s;
}

}  // namespace rtmem::trace

// The program marked a frame boundary (rtmem_trace_frame() in librtmem looks this up).
extern "C" __attribute__((visibility("default"))) void rtmem_trace_frame_hook(void) {
    using namespace rtmem::trace;
    if (tl_guard > 0 || !ensure_ready() || !recording()) return;
    guard_scope g;
    record(op::frame, 0, 0, nullptr, nullptr, fast_ns(), 0, false);
}
