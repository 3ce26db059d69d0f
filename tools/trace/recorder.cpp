// The recorder of librtmem-trace.so: start-up (resolving the real functions, opening the
// trace), the end of the trace on every way a process can end, and fork. The real functions,
// the recursion guard and the bootstrap buffer are tools/interpose's.
// The hot path lives in event_buffers.cpp, stacks in stack_table.cpp, output in
// chunk_writer.cpp. No stdio, no C++ runtime allocation: raw syscalls, memory from mmap.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "recorder_internal.hpp"
#include "sampling.hpp"

namespace rtmem::trace {

bool g_use_tsc = false;
bool g_new_is_malloc = false;
bool g_fast_path = false;
std::uint32_t g_timing_period = trace_format::contract::default_timing_period;

namespace internal {

std::atomic<int> g_state{uninit};
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_paused{false};
int g_fd = -1;
std::atomic<std::uint64_t> g_file_offset{sizeof(fmt::file_header)};
std::uint64_t g_start_mono = 0;
int g_depth = fmt::contract::default_depth;
int g_zstd_level = fmt::contract::default_zstd_level;
bool g_use_writer = fmt::contract::default_writer;
char g_exe[4096];
std::uintptr_t g_self_begin = 0, g_self_end = 0;
std::atomic<std::uint64_t> g_dropped{0};
fmt::index_entry* g_index = nullptr;
std::atomic<std::uint64_t> g_index_count{0};

namespace {
__extension__ typedef unsigned __int128 u128;  // NOLINT: GCC/Clang extension, no ISO type
std::uint64_t g_tsc0 = 0, g_mono0 = 0;
std::uint64_t g_ns_per_tick_q32 = 1ull << 32;  // ns per tick in 32.32 fixed point

// Integer arithmetic: this runs for every event on the writer thread.
std::uint64_t ticks_to_ns(std::uint64_t d) noexcept {
    return static_cast<std::uint64_t>((static_cast<u128>(d) * g_ns_per_tick_q32) >> 32);
}
}  // namespace

std::uint64_t to_trace_ns(std::uint64_t t) noexcept {
    std::uint64_t mono = g_use_tsc ? g_mono0 + ticks_to_ns(t <= g_tsc0 ? 0 : t - g_tsc0) : t;
    return mono > g_start_mono ? mono - g_start_mono : 0;
}

std::uint32_t to_duration_ns(std::uint64_t t) noexcept {
    std::uint64_t ns = g_use_tsc ? ticks_to_ns(t) : t;
    return ns > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(ns);
}

}  // namespace internal

namespace {

using namespace internal;

namespace contract = fmt::contract;
bool g_malloc_is_libc = false;
bool g_follow_fork = contract::default_follow_fork;
char g_path[4096];
// The process whose trace this memory describes. A vfork child runs in the parent's memory
// until it execs or _exits, calling the exec and _exit hooks with another pid: those must
// not end the parent's trace.
pid_t g_owner = 0;

// Appends `s` / decimal `v` to the zero-terminated `buf` of capacity `cap`.
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
    int flags = O_RDWR | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
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
    h.timing_period = g_timing_period;
    h.sample_interval = g_sample_interval;
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

}  // namespace

// The end record and the index go out as one raw chunk (header, record, entries) after the
// counts chunk; payloads before headers, so a valid header means a complete chunk (a dump
// reading the file while it grows relies on it).
void internal::write_end_chunks(int fd, std::uint64_t& offset, fmt::end_reason reason, int sig,
                                std::uint64_t events, std::uint64_t dropped,
                                std::uint64_t index_count) noexcept {
    auto put = [&](fmt::chunk_type type, std::uint32_t count, const void* a, std::size_t a_size,
                   const void* b, std::size_t b_size) {
        fmt::chunk_header h{};
        h.magic = fmt::chunk_magic;
        h.type = type;
        h.coding = fmt::codec::raw;
        h.count = count;
        h.raw_size = static_cast<std::uint32_t>(a_size + b_size);
        h.stored_size = h.raw_size;
        h.check = fmt::header_check(h);
        write_all_at(fd, a, a_size, offset + sizeof h);
        if (b_size > 0) write_all_at(fd, b, b_size, offset + sizeof h + a_size);
        write_all_at(fd, &h, sizeof h, offset);
        offset += sizeof h + h.raw_size;
    };
    fmt::call_counts counts = counted_calls();
    put(fmt::chunk_type::counts, 1, &counts, sizeof counts, nullptr, 0);
    fmt::end_record end{};
    end.reason = static_cast<std::uint32_t>(reason);
    end.signal = static_cast<std::uint32_t>(sig);
    end.events = events;
    end.time = to_trace_ns(ticks()) + g_start_mono;
    end.dropped = dropped;
    put(fmt::chunk_type::end, static_cast<std::uint32_t>(index_count), &end, sizeof end, g_index,
        index_count * sizeof(fmt::index_entry));
}

namespace {

// Writes every buffered event and the end chunk. `in_signal`: no allocation (raw chunks) and
// bounded waits.
void write_end(fmt::end_reason reason, int sig, bool in_signal) noexcept {
    if (g_state.load() != ready || g_fd < 0) return;
    guard_scope g;
    drain_all_buffers(in_signal);
    refresh_modules(true);
    std::uint64_t n = g_index_count.load();
    if (n > max_index) n = max_index;
    std::uint64_t off = g_file_offset.fetch_add(end_chunks_size(n));
    write_end_chunks(g_fd, off, reason, sig, recorded_events(), g_dropped.load(), n);
}

void finish(fmt::end_reason reason, int sig, bool in_signal) noexcept {
    if (g_state.load() != ready) return;
    if (getpid() != g_owner) return;  // a vfork child, about to exec or _exit
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
    stacks_before_fork();
    sampling_before_fork();
}
void after_fork_parent() {
    sampling_after_fork();
    stacks_after_fork_parent();
}
void after_fork_child() {
    sampling_after_fork();
    g_owner = getpid();
    int old_fd = g_fd;
    g_fd = -1;
    if (old_fd >= 0) close(old_fd);
    bool tracing = g_follow_fork && !g_stopped.load();
    buffers_after_fork_child(tracing);
    if (!tracing) {
        set_gate(gate_closed, gate_closed_for_good);
        stacks_after_fork_child(false);
        g_state.store(disabled);
        return;
    }
    guard_scope g;
    char base[4096];
    std::memcpy(base, g_path, sizeof base);
    g_index_count.store(0);
    g_dropped.store(0);
    if (!open_child_trace(base)) {
        stacks_after_fork_child(false);
        g_state.store(disabled);
        return;
    }
    stacks_after_fork_child(true);
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
    double ns_per_tick = static_cast<double>(m1 - m0) / static_cast<double>(t1 - t0);
    g_ns_per_tick_q32 = static_cast<std::uint64_t>(ns_per_tick * 4294967296.0);
    g_tsc0 = t1;
    g_mono0 = m1;
    g_use_tsc = true;
#endif
}

void initialize() noexcept {
    guard_scope g;
    interpose::resolve_real();
    if (real.malloc == nullptr || real.free == nullptr || real.calloc == nullptr ||
        real.realloc == nullptr) {
        write_stderr("rtmem-trace: cannot resolve malloc; not recording\n");
        g_state.store(disabled);
        return;
    }
    auto from_libstdcxx = [](void* fn) {
        Dl_info info{};
        return fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fname != nullptr &&
               std::strstr(info.dli_fname, "libstdc++") != nullptr;
    };
    // glibc's malloc and free never call the interposed entry points: the fast path forwards
    // to them without the recursion guard.
    Dl_info libc_info{};
    g_malloc_is_libc =
        dladdr(reinterpret_cast<void*>(real.malloc), &libc_info) != 0 &&
        libc_info.dli_fname != nullptr && std::strstr(libc_info.dli_fname, "/libc.so") != nullptr &&
        dladdr(reinterpret_cast<void*>(real.free), &libc_info) != 0 &&
        libc_info.dli_fname != nullptr && std::strstr(libc_info.dli_fname, "/libc.so") != nullptr;
    g_new_is_malloc = from_libstdcxx(reinterpret_cast<void*>(real.new_scalar)) &&
                      from_libstdcxx(reinterpret_cast<void*>(real.new_array)) &&
                      from_libstdcxx(reinterpret_cast<void*>(real.delete_scalar)) &&
                      from_libstdcxx(reinterpret_cast<void*>(real.delete_array));
    ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
    g_exe[n > 0 ? n : 0] = 0;
    g_depth = static_cast<int>(parse_u64(getenv(contract::env_depth), std::uint64_t{contract::default_depth}));
    if (g_depth > contract::max_depth) g_depth = contract::max_depth;
    g_follow_fork = parse_u64(getenv(contract::env_follow_fork), contract::default_follow_fork) != 0;
    g_use_writer = parse_u64(getenv(contract::env_writer), contract::default_writer) != 0;
    g_fast_stacks = parse_u64(getenv(contract::env_fast_stacks), contract::default_fast_stacks) != 0;
    std::uint64_t period =
        parse_u64(getenv(contract::env_timing), contract::default_timing_period);
    g_timing_period = static_cast<std::uint32_t>(
        period < 1 ? 1 : period > contract::max_timing_period ? contract::max_timing_period : period);
    std::uint64_t seed = parse_u64(getenv(contract::env_seed), 0);
    if (seed == 0) seed = now_ns() ^ (static_cast<std::uint64_t>(getpid()) << 32);
    sampling_init(parse_u64(getenv(contract::env_sample), 0), seed);
    if (sampling()) g_timing_period = 1;  // sampled events are not timed (docs/tracer.md)
    g_paused.store(parse_u64(getenv(contract::env_start), 1) == 0);
    if (const char* lv = getenv(contract::env_zstd_level); lv != nullptr && *lv != 0) {
        bool negative = *lv == '-';
        auto v = static_cast<int>(parse_u64(negative ? lv + 1 : lv, 1));
        g_zstd_level = negative ? -v : v;
    }
    const char* file = getenv(contract::env_file);
    bool descendant = getenv(contract::env_active) != nullptr;
    char default_path[4200] = "";
    if (file == nullptr || *file == 0) {
        contract::default_file_name(default_path, sizeof default_path, g_exe,
                                    static_cast<std::uint64_t>(getpid()));
        file = default_path;
    }
    if (descendant && !g_follow_fork) {  // exec'd or spawned by a traced process
        g_state.store(disabled);
        return;
    }
    setenv(contract::env_active, "1", 1);
    g_owner = getpid();
    calibrate_tsc();
    g_start_mono = now_ns();
    if (g_use_tsc) g_start_mono = g_mono0;  // the TSC maps onto CLOCK_MONOTONIC from g_mono0
    find_self();
    find_own_libstdcxx();
    g_index = static_cast<fmt::index_entry*>(
        mmap(nullptr, max_index * sizeof(fmt::index_entry), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (g_index == MAP_FAILED) g_index = nullptr;
    if (!stacks_init() || !buffers_init()) {
        write_stderr("rtmem-trace: out of memory at start; not recording\n");
        g_state.store(disabled);
        return;
    }
    bool opened = descendant ? open_child_trace(file) : open_trace(file, false);
    if (!opened) {
        write_stderr("rtmem-trace: cannot open the trace file; not recording\n");
        g_state.store(disabled);
        return;
    }
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    install_signal_handlers();
    refresh_modules(false);
    g_state.store(ready, std::memory_order_release);
}

// The writer thread starts here rather than on the first full block, so that a program
// killed with SIGKILL still leaves what it recorded up to ~0.1 s before.
__attribute__((constructor)) void at_start() {
    end_own_libstdcxx_start();
    if (ensure_ready() && recording()) {
        start_writer();
        g_fast_path = sampling() && g_new_is_malloc && g_malloc_is_libc;
    }
}

__attribute__((destructor)) void at_exit() {
    if (recording()) free_libstdcxx_pool();
    finish(fmt::end_reason::exit, 0, false);
}

}  // namespace

std::uint64_t now_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

bool internal::ensure_ready_slow() noexcept {
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

void open_gate() noexcept {
    if (!g_fast_path || tl_guard > 0 || gate_value(gate_closed) != gate_not_set_up || !recording())
        return;
    guard_scope g;  // mapping the thread's buffer may allocate (pthread_setspecific)
    register_gate();
}

void finish_before_exec() noexcept {
    finish(fmt::end_reason::exec, 0, false);
}
void finish_quick_exit() noexcept {
    finish(fmt::end_reason::quick_exit, 0, false);
}

}  // namespace rtmem::trace

// The program marked a frame boundary (rtmem_trace_frame() in librtmem looks this up).
extern "C" __attribute__((visibility("default"))) void rtmem_trace_frame_hook(void) {
    using namespace rtmem::trace;
    if (tl_guard > 0 || !ensure_ready() || !recording()) return;
    guard_scope g;
    record(op::frame, 0, 0, nullptr, nullptr, ticks(), 0, false, false);
}
