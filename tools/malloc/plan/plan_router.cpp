// Loads the compiled plan at start-up (a constructor: the program's modules are mapped by
// then), resolves its frames against the loaded modules, builds the recognition table, and
// prints the summary at exit. Nothing here allocates through malloc: tables are mmap'd, the
// plan text is parsed in place in the environment.
#include "plan_router.hpp"

#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include "caller_frames.hpp"
#include "plan_text.hpp"
#include "rtmem/interpose/guard.hpp"
#include "rtmem/malloc/contract.hpp"
#include "rtmem/malloc/plan_contract.hpp"
#include "site_strategies.hpp"


namespace rtmem::site_plan {

std::atomic<const recognition_table*> g_table{nullptr};
std::atomic<std::uintptr_t> g_range_base{0};
std::atomic<std::size_t> g_range_size{0};

namespace {

namespace contract = malloc_contract;

// 4 GiB of address space for planned blocks (committed as touched).
constexpr std::size_t range_bytes = std::size_t{4} << 30;
constexpr std::uint32_t max_frames = 32;

struct site_info {
    std::uint32_t id;
    char kind;              // p, r, t
    std::uint32_t nframes;
    std::uintptr_t* frames;  // absolute; valid when resolved
    bool resolved;           // every frame's module is loaded
};

site_group g_group;
planned_site* g_sites = nullptr;
site_info* g_info = nullptr;
std::uint32_t g_site_count = 0;
std::uint32_t* g_candidates = nullptr;
recognition_table g_table_storage;
std::uint32_t g_modules = 0, g_modules_loaded = 0;
int g_stats_fd = -1;

void say(int fd, const char* text) noexcept {
    if (fd >= 0) (void)!write(fd, text, std::strlen(text));
}

void* map_zeroed(std::size_t bytes) noexcept {
    void* m = mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? nullptr : m;
}

// ---- modules --------------------------------------------------------------------------------

struct module_match {
    const plan_text_module* modules;
    std::uint32_t count;
    std::uintptr_t* bias;  // per plan module; set when found
    std::uint8_t* quality;  // 2: same path, 1: same file name, 0: not loaded
    char exe[4096];
    bool first;
};

std::string_view base_name(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

int on_module(dl_phdr_info* info, std::size_t, void* data) {
    auto* m = static_cast<module_match*>(data);
    std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
    if (name.empty() && m->first) name = m->exe;  // the main program
    m->first = false;
    if (name.empty()) return 0;
    for (std::uint32_t i = 0; i < m->count; ++i) {
        const std::string_view want = m->modules[i].path;
        std::uint8_t q = want == name ? 2 : base_name(want) == base_name(name) ? 1 : 0;
        if (q > m->quality[i]) {
            m->quality[i] = q;
            m->bias[i] = info->dlpi_addr;
        }
    }
    return 0;
}

// ---- fork: no site lock may be inherited held -------------------------------------------------

void lock_all() noexcept { g_group.lock_for_fork(); }
void unlock_in_parent() noexcept { g_group.unlock_after_fork_in_parent(); }
void unlock_in_child() noexcept { g_group.unlock_after_fork_in_child(); }

// ---- the summary -----------------------------------------------------------------------------

const char* kind_name(char k) noexcept {
    return k == 'p' ? "pool" : k == 'r' ? "region" : "thread_stack (as region)";
}

// Without --stats: one line when the program's own modules were found but no planned site
// allocated (a plan from another build, or an input that never reaches those sites), which
// would otherwise pass unnoticed. Processes of other programs (nothing resolved) stay silent.
void warn_if_unused() noexcept {
    std::uint32_t matched = 0, resolved = 0;
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        const site_counters c = g_sites[i].counters();
        matched += c.served + c.declined != 0 ? 1 : 0;
        resolved += g_info[i].resolved ? 1 : 0;
    }
    if (resolved == 0 || matched != 0) return;
    char line[320];
    std::snprintf(line, sizeof line,
                  "rtmem run: pid %d: plan: none of its %u sites allocated in this process (a "
                  "plan from another build, or an input that never reaches them); --stats "
                  "shows each site\n",
                  static_cast<int>(getpid()), g_site_count);
    say(2, line);
}

__attribute__((destructor)) void print_summary() {
    if (g_sites == nullptr) return;
    if (g_stats_fd < 0) {
        warn_if_unused();
        return;
    }
    std::uint64_t served[3] = {}, declined = 0, freed = 0;
    std::uint32_t matched = 0, resolved = 0;
    char line[480];
    const int pid = static_cast<int>(getpid());
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        const site_info& s = g_info[i];
        const site_counters c = g_sites[i].counters();
        const bool hit = c.served + c.declined != 0;
        matched += hit ? 1 : 0;
        resolved += s.resolved ? 1 : 0;
        served[s.kind == 'p' ? 0 : s.kind == 'r' ? 1 : 2] += c.served;
        declined += c.declined;
        freed += c.freed;
        std::snprintf(line, sizeof line,
                      "rtmem run: pid %d: plan site %u %s: %s, %llu served, %llu to the general "
                      "heap, %llu freed\n",
                      pid, s.id, kind_name(s.kind),
                      hit ? "matched" : s.resolved ? "not matched" : "not matched (module not loaded)",
                      static_cast<unsigned long long>(c.served),
                      static_cast<unsigned long long>(c.declined),
                      static_cast<unsigned long long>(c.freed));
        say(g_stats_fd, line);
    }
    std::snprintf(line, sizeof line,
                  "rtmem run: pid %d: plan: %u of %u sites matched (%u resolved; %u of %u modules "
                  "loaded); "
                  "served: pool %llu, region %llu, thread_stack %llu; %llu requests of planned "
                  "sites to the general heap; %llu frees; %zu spans of %zu KiB used; caller "
                  "frames %llu from the cache, %llu unwound\n",
                  pid, matched, g_site_count, resolved, g_modules_loaded, g_modules,
                  static_cast<unsigned long long>(served[0]),
                  static_cast<unsigned long long>(served[1]),
                  static_cast<unsigned long long>(served[2]),
                  static_cast<unsigned long long>(declined), static_cast<unsigned long long>(freed),
                  g_group.arena().spans_used(), span_bytes >> 10,
                  static_cast<unsigned long long>(caller_frame_stats().cached),
                  static_cast<unsigned long long>(caller_frame_stats().unwound));
    say(g_stats_fd, line);
}

bool env_flag(const char* name) noexcept {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] == '1';
}

// ---- loading ---------------------------------------------------------------------------------

void fail(const char* why) noexcept {
    char line[300];
    std::snprintf(line, sizeof line, "rtmem run: ignoring the plan: %s\n", why);
    say(2, line);
}

bool build(const plan_text& text) noexcept {
    // Modules: resolve every plan module against what is loaded now.
    auto* bias = static_cast<std::uintptr_t*>(map_zeroed(8 * (text.module_count + 1)));
    auto* quality = static_cast<std::uint8_t*>(map_zeroed(text.module_count + 1));
    auto* match = static_cast<module_match*>(map_zeroed(sizeof(module_match)));
    if (bias == nullptr || quality == nullptr || match == nullptr) return false;
    match->modules = text.modules;
    match->count = text.module_count;
    match->bias = bias;
    match->quality = quality;
    match->first = true;
    const ssize_t n = readlink("/proc/self/exe", match->exe, sizeof match->exe - 1);
    match->exe[n > 0 ? n : 0] = 0;
    dl_iterate_phdr(on_module, match);
    g_modules = text.module_count;
    for (std::uint32_t i = 0; i < text.module_count; ++i) g_modules_loaded += quality[i] != 0;

    // Sites and their absolute frames.
    g_site_count = text.site_count;
    g_sites = static_cast<planned_site*>(map_zeroed(sizeof(planned_site) * g_site_count));
    g_info = static_cast<site_info*>(map_zeroed(sizeof(site_info) * g_site_count));
    auto* frames = static_cast<std::uintptr_t*>(map_zeroed(8 * (text.frame_count + 1)));
    g_candidates = static_cast<std::uint32_t*>(map_zeroed(4 * (g_site_count + 1)));
    if (g_sites == nullptr || g_info == nullptr || frames == nullptr || g_candidates == nullptr)
        return false;
    for (std::uint32_t i = 0; i < g_site_count; ++i) new (&g_sites[i]) planned_site();
    g_group.init(g_sites, g_site_count);
    std::uint32_t used_frames = 0, resolved = 0;
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        const plan_text_site& s = text.sites[i];
        site_info& info = g_info[i];
        info = {s.id, s.kind, s.frame_count, frames + used_frames, true};
        for (std::uint32_t k = 0; k < s.frame_count; ++k) {
            const plan_text_frame& f = text.frames[s.first_frame + k];
            if (quality[f.module] == 0) info.resolved = false;
            else info.frames[k] = bias[f.module] + f.offset;
        }
        used_frames += s.frame_count;
        g_sites[i].configure(&g_group, i, s.kind == 'p' ? strategy::pool : strategy::region,
                             s.block, s.max_request);
        resolved += info.resolved ? 1 : 0;
    }

    // Nothing of the plan in this process (another program, a child that exec'd): no range,
    // no table; the summary still says so.
    if (resolved == 0) return true;
    if (!g_group.reserve(range_bytes)) return false;

    // The table: frame-0 addresses, at most a quarter full (a miss is almost always one probe).
    std::uint64_t cap = 64;
    while (cap < 4ull * resolved) cap *= 2;
    auto* slots = static_cast<recognition_slot*>(map_zeroed(sizeof(recognition_slot) * cap));
    if (slots == nullptr) return false;
    // Candidates grouped by frame 0, deepest first (the most specific site wins).
    std::uint32_t next = 0;
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        if (!g_info[i].resolved) continue;
        const std::uintptr_t ra = g_info[i].frames[0];
        std::size_t j = slot_of(ra, cap - 1);
        while (slots[j].ra != 0 && slots[j].ra != ra) j = (j + 1) & (cap - 1);
        if (slots[j].ra == ra) continue;  // grouped when its first site was met
        std::uint32_t count = 0;
        for (std::uint32_t k = i; k < g_site_count; ++k)
            if (g_info[k].resolved && g_info[k].frames[0] == ra) g_candidates[next + count++] = k;
        if (count == 1 && g_info[i].nframes == 1) {  // the common case: frame 0 is the site
            slots[j] = {ra, i, 0};
            continue;
        }
        slots[j] = {ra, next, count};
        // Deepest first: insertion sort on a handful.
        for (std::uint32_t a = 1; a < slots[j].count; ++a)
            for (std::uint32_t b = a; b > 0 && g_info[g_candidates[next + b]].nframes >
                                                    g_info[g_candidates[next + b - 1]].nframes;
                 --b)
                std::swap(g_candidates[next + b], g_candidates[next + b - 1]);
        next += slots[j].count;
    }
    g_table_storage = {cap - 1, slots, g_sites};
    return true;
}

__attribute__((constructor)) void load_plan() {
    const char* env = std::getenv(contract::env_plan);
    if (env == nullptr || *env == 0) return;
    interpose::guard_scope guard;  // whatever is allocated meanwhile goes to glibc
    if (env_flag(contract::env_plan_stats) || env_flag(contract::env_stats))
        g_stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
    static plan_text text;
    const char* error = parse_plan_text(env, text, map_zeroed);
    if (error != nullptr) return fail(error);
    if (!build(text)) return fail("cannot map its tables or reserve its address range");
    if (g_group.arena().size() == 0) return;  // no site resolved: nothing to route
    pthread_atfork(lock_all, unlock_in_parent, unlock_in_child);
    caller_frames_init(g_stats_fd >= 0);
    g_range_size.store(g_group.arena().size(), std::memory_order_relaxed);
    g_range_base.store(g_group.arena().base(), std::memory_order_relaxed);
    g_table.store(&g_table_storage, std::memory_order_release);
}

}  // namespace

void* allocate_recognised(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                          std::size_t size, std::size_t align) noexcept {
    for (;; slot = (slot + 1) & t->mask) {
        const recognition_slot& e = t->slots[slot];
        if (e.ra == 0) return nullptr;
        if (e.ra == ra) break;
    }
    const recognition_slot& e = t->slots[slot];
    if (e.count == 0) return g_sites[e.first].allocate(size, align);
    // Candidates deepest first: the first one's frames are all any of them needs.
    std::uintptr_t stack[max_frames];
    const int want = static_cast<int>(g_info[g_candidates[e.first]].nframes);
    const int depth = want > 1 ? caller_frames(ra, reinterpret_cast<std::uintptr_t>(
                                                       __builtin_frame_address(0)),
                                               stack, want)
                               : 1;
    for (std::uint32_t c = 0; c < e.count; ++c) {
        const std::uint32_t site = g_candidates[e.first + c];
        const site_info& s = g_info[site];
        if (static_cast<std::uint32_t>(depth) < s.nframes) continue;
        bool same = true;
        for (std::uint32_t k = 1; same && k < s.nframes; ++k) same = stack[k] == s.frames[k];
        if (same) return g_sites[site].allocate(size, align);
    }
    return nullptr;
}

}  // namespace rtmem::site_plan
