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

#include "caller_frames.hpp"
#include "plan_text.hpp"
#include "recognition_build.hpp"
#include "recognition_walk.hpp"
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
    bool only_missing;  // after start-up: a module already resolved keeps its bias
    std::uint8_t* was_missing;
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
        if (m->only_missing && m->was_missing[i] == 0) continue;
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
    char line[560];
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
                  "sites to the general heap; %llu frees; %zu spans of %zu KiB used; deeper "
                  "frames: %llu stack offsets learned, %llu walks through the caller-frame "
                  "cache (%llu hits, %llu unwound)\n",
                  pid, matched, g_site_count, resolved, g_modules_loaded, g_modules,
                  static_cast<unsigned long long>(served[0]),
                  static_cast<unsigned long long>(served[1]),
                  static_cast<unsigned long long>(served[2]),
                  static_cast<unsigned long long>(declined), static_cast<unsigned long long>(freed),
                  g_group.arena().spans_used(), span_bytes >> 10,
                  static_cast<unsigned long long>(recognition_walk_stats().learned),
                  static_cast<unsigned long long>(recognition_walk_stats().fallback),
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

// The table of every resolved site (built again when a module is loaded later).
const recognition_table* g_built = nullptr;
bool publish_table() noexcept {
    auto* sites = static_cast<resolved_site*>(map_zeroed(sizeof(resolved_site) * (g_site_count + 1)));
    if (sites == nullptr) return false;
    for (std::uint32_t i = 0; i < g_site_count; ++i)
        sites[i] = {g_info[i].nframes, g_info[i].frames, g_info[i].resolved};
    g_built = build_recognition_table(sites, g_site_count, g_sites);
    munmap(sites, sizeof(resolved_site) * (g_site_count + 1));
    return g_built != nullptr;
}

plan_text g_text;
module_match* g_match = nullptr;
std::uintptr_t* g_frames = nullptr;
std::atomic<bool> g_missing{false};  // a plan module is not loaded (yet)
pthread_mutex_t g_resolve_lock = PTHREAD_MUTEX_INITIALIZER;

// Sites whose every module is loaded now get their absolute frames. Returns how many are.
std::uint32_t resolve_sites() noexcept {
    std::uint32_t resolved = 0, used = 0;
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        const plan_text_site& s = g_text.sites[i];
        site_info& info = g_info[i];
        if (!info.resolved) {
            bool all = true;
            for (std::uint32_t k = 0; k < s.frame_count; ++k)
                all = all && g_match->quality[g_text.frames[s.first_frame + k].module] != 0;
            for (std::uint32_t k = 0; all && k < s.frame_count; ++k) {
                const plan_text_frame& f = g_text.frames[s.first_frame + k];
                g_frames[used + k] = g_match->bias[f.module] + f.offset;
            }
            info.resolved = all;
        }
        used += s.frame_count;
        resolved += info.resolved ? 1 : 0;
    }
    g_modules_loaded = 0;
    for (std::uint32_t i = 0; i < g_text.module_count; ++i)
        g_modules_loaded += g_match->quality[i] != 0;
    g_missing.store(g_modules_loaded < g_text.module_count, std::memory_order_relaxed);
    return resolved;
}

void match_modules() noexcept {
    g_match->first = true;
    dl_iterate_phdr(on_module, g_match);
}

bool build() noexcept {
    const plan_text& text = g_text;
    // Modules: resolve every plan module against what is loaded now.
    auto* bias = static_cast<std::uintptr_t*>(map_zeroed(8 * (text.module_count + 1)));
    auto* quality = static_cast<std::uint8_t*>(map_zeroed(text.module_count + 1));
    auto* was_missing = static_cast<std::uint8_t*>(map_zeroed(text.module_count + 1));
    g_match = static_cast<module_match*>(map_zeroed(sizeof(module_match)));
    if (bias == nullptr || quality == nullptr || was_missing == nullptr || g_match == nullptr)
        return false;
    g_match->modules = text.modules;
    g_match->count = text.module_count;
    g_match->bias = bias;
    g_match->quality = quality;
    g_match->was_missing = was_missing;
    const ssize_t n = readlink("/proc/self/exe", g_match->exe, sizeof g_match->exe - 1);
    g_match->exe[n > 0 ? n : 0] = 0;
    match_modules();
    g_modules = text.module_count;

    // Sites and their absolute frames.
    g_site_count = text.site_count;
    g_sites = static_cast<planned_site*>(map_zeroed(sizeof(planned_site) * g_site_count));
    g_info = static_cast<site_info*>(map_zeroed(sizeof(site_info) * g_site_count));
    g_frames = static_cast<std::uintptr_t*>(map_zeroed(8 * (text.frame_count + 1)));
    if (g_sites == nullptr || g_info == nullptr || g_frames == nullptr) return false;
    std::uint32_t used_frames = 0;
    for (std::uint32_t i = 0; i < g_site_count; ++i) new (&g_sites[i]) planned_site();
    g_group.init(g_sites, g_site_count);
    for (std::uint32_t i = 0; i < g_site_count; ++i) {
        const plan_text_site& s = text.sites[i];
        g_info[i] = {s.id, s.kind, s.frame_count, g_frames + used_frames, false};
        used_frames += s.frame_count;
        g_sites[i].configure(&g_group, i, s.kind == 'p' ? strategy::pool : strategy::region,
                             s.block, s.max_request);
    }
    resolve_sites();
    return true;
}

// Routes the resolved sites: the range reserved the first time, the table built and published
// (again after a dlopen; a table once published is never freed, a reader may still hold it).
bool activate() noexcept {
    if (g_group.arena().size() == 0) {
        if (!g_group.reserve(range_bytes)) return false;
        pthread_atfork(lock_all, unlock_in_parent, unlock_in_child);
        caller_frames_init(g_stats_fd >= 0);
        recognition_walk_init(g_stats_fd >= 0);
        g_range_size.store(g_group.arena().size(), std::memory_order_relaxed);
        g_range_base.store(g_group.arena().base(), std::memory_order_relaxed);
    }
    if (!publish_table()) return false;
    g_table.store(g_built, std::memory_order_release);
    return true;
}

__attribute__((constructor)) void load_plan() {
    const char* env = std::getenv(contract::env_plan);
    if (env == nullptr || *env == 0) return;
    interpose::guard_scope guard;  // whatever is allocated meanwhile goes to glibc
    if (env_flag(contract::env_plan_stats) || env_flag(contract::env_stats))
        g_stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
    const char* error = parse_plan_text(env, g_text, map_zeroed);
    if (error != nullptr) return fail(error);
    if (!build()) return fail("cannot map its tables");
    // Nothing of the plan in this process yet (another program, a child that exec'd, or only
    // modules it will dlopen): no range, no table; the summary still says so.
    bool any = false;
    for (std::uint32_t i = 0; i < g_site_count; ++i) any = any || g_info[i].resolved;
    if (any && !activate()) {
        g_missing.store(false, std::memory_order_relaxed);
        return fail("cannot build its tables (no memory, or more than 65535 frames) or reserve "
                    "its address range");
    }
}

}  // namespace

bool modules_missing() noexcept {
    return g_missing.load(std::memory_order_relaxed);
}

void resolve_new_modules() noexcept {
    if (!modules_missing()) return;
    interpose::guard_scope guard;
    // Another thread resolving (or, in a child forked meanwhile, a lock never to be released):
    // this dlopen's module waits for the next one.
    if (pthread_mutex_trylock(&g_resolve_lock) != 0) return;
    for (std::uint32_t i = 0; i < g_text.module_count; ++i)
        g_match->was_missing[i] = g_match->quality[i] == 0;
    g_match->only_missing = true;
    match_modules();
    bool added = false;
    for (std::uint32_t i = 0; i < g_text.module_count; ++i)
        added = added || (g_match->was_missing[i] != 0 && g_match->quality[i] != 0);
    if (added) {
        resolve_sites();
        if (!activate()) {
            g_missing.store(false, std::memory_order_relaxed);
            fail("cannot build its tables or reserve its address range after a dlopen");
        }
    }
    pthread_mutex_unlock(&g_resolve_lock);
}

}  // namespace rtmem::site_plan
