// Whole-program replay backends. Peers are loaded with dlopen(RTLD_LOCAL) and called through
// their prefixed APIs, and glibc is called through libc.so.6's own symbols, so no backend is
// measured through another one even if the process's malloc is interposed.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "rtmem/analyze/replay_backend.hpp"

namespace rtmem::analyze {
namespace {

template <class F>
F symbol(void* lib, const char* name) {
    void* s = lib != nullptr ? dlsym(lib, name) : nullptr;
    F f = nullptr;
    static_assert(sizeof f == sizeof s);
    std::memcpy(&f, &s, sizeof f);  // object pointer to function pointer without a cast warning
    return f;
}

void* open_library(const char* soname, int extra = 0) {
    return dlopen(soname, RTLD_NOW | RTLD_LOCAL | extra);
}

// ---- the malloc family: glibc and tcmalloc ----------------------------------------------------
/// malloc, calloc, realloc, memalign and free under a common prefix ("" in libc, "tc_").
struct malloc_family_api {
    void* (*malloc)(std::size_t) = nullptr;
    void* (*calloc)(std::size_t, std::size_t) = nullptr;
    void* (*realloc)(void*, std::size_t) = nullptr;
    void* (*memalign)(std::size_t, std::size_t) = nullptr;
    void (*free)(void*) = nullptr;

    void load(void* lib, const std::string& prefix) {
        malloc = symbol<decltype(malloc)>(lib, (prefix + "malloc").c_str());
        calloc = symbol<decltype(calloc)>(lib, (prefix + "calloc").c_str());
        realloc = symbol<decltype(realloc)>(lib, (prefix + "realloc").c_str());
        memalign = symbol<decltype(memalign)>(lib, (prefix + "memalign").c_str());
        free = symbol<decltype(free)>(lib, (prefix + "free").c_str());
    }
    [[nodiscard]] bool ok() const { return malloc && calloc && realloc && memalign && free; }
};

/// Blocks aligned beyond 16 (what malloc guarantees) go through memalign; realloc and calloc
/// only serve malloc's alignment, larger ones take replay_backend's copying defaults.
template <class Api>
class malloc_family_backend : public replay_backend {
  public:
    void* allocate(replay_call, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        tag = 0;
        return align <= 16 ? api_.malloc(size) : api_.memalign(align, size);
    }
    void* allocate_zeroed(replay_call c, std::size_t size, std::size_t align,
                          std::uint32_t& tag) noexcept override {
        if (align > 16) return replay_backend::allocate_zeroed(c, size, align, tag);
        tag = 0;
        return api_.calloc(1, size);
    }
    void deallocate(replay_call, void* p, std::size_t, std::size_t,
                    std::uint32_t) noexcept override {
        api_.free(p);
    }
    void* reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                     std::size_t size, std::size_t align, std::uint32_t& tag) noexcept override {
        if (align > 16) return replay_backend::reallocate(from, to, p, old_size, size, align, tag);
        return api_.realloc(p, size);
    }

  protected:
    const Api& api_ = Api::get();
};

// ---- glibc ---------------------------------------------------------------------------------
struct glibc_api : malloc_family_api {
    struct info {  // struct mallinfo2
        std::size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks,
            keepcost;
    };
    info (*mallinfo2)() = nullptr;

    static const glibc_api& get() {
        static const glibc_api api = [] {
            glibc_api a;
            void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
            a.load(libc, "");
            a.mallinfo2 = symbol<decltype(a.mallinfo2)>(libc, "mallinfo2");
            return a;
        }();
        return api;
    }
};

class glibc_backend final : public malloc_family_backend<glibc_api> {
  public:
    // Free space glibc already held (e.g. from the trace compilation) is not the replay's. Read
    // here, not in the constructor: mallinfo2 walks every free chunk, and only the footprint
    // pass needs it.
    std::size_t footprint_base() noexcept override {
        if (api_.mallinfo2 == nullptr) return 0;
        free_at_start_ = api_.mallinfo2().fordblks;
        return footprint();
    }
    std::size_t footprint() noexcept override {
        if (api_.mallinfo2 == nullptr) return 0;
        // In-use bytes (headers included) plus free space created since the start: free space
        // glibc already held (earlier replays, the trace compilation) is not this replay's.
        const auto i = api_.mallinfo2();
        return i.uordblks + i.hblkhd +
               (i.fordblks > free_at_start_ ? i.fordblks - free_at_start_ : 0);
    }

  private:
    std::size_t free_at_start_ = 0;
};

// ---- mimalloc ------------------------------------------------------------------------------
struct mimalloc_api {
    void* (*malloc)(std::size_t) = nullptr;
    void* (*malloc_aligned)(std::size_t, std::size_t) = nullptr;
    void* (*zalloc_aligned)(std::size_t, std::size_t) = nullptr;
    void* (*realloc_aligned)(void*, std::size_t, std::size_t) = nullptr;
    void (*free)(void*) = nullptr;
    void (*process_info)(std::size_t*, std::size_t*, std::size_t*, std::size_t*, std::size_t*,
                         std::size_t*, std::size_t*, std::size_t*) = nullptr;
    static const mimalloc_api& get() {
        static const mimalloc_api api = [] {
            mimalloc_api a;
            void* lib = open_library("libmimalloc.so.2");
            a.malloc = symbol<decltype(a.malloc)>(lib, "mi_malloc");
            a.malloc_aligned = symbol<decltype(a.malloc_aligned)>(lib, "mi_malloc_aligned");
            a.zalloc_aligned = symbol<decltype(a.zalloc_aligned)>(lib, "mi_zalloc_aligned");
            a.realloc_aligned = symbol<decltype(a.realloc_aligned)>(lib, "mi_realloc_aligned");
            a.free = symbol<decltype(a.free)>(lib, "mi_free");
            a.process_info = symbol<decltype(a.process_info)>(lib, "mi_process_info");
            return a;
        }();
        return api;
    }
    [[nodiscard]] bool ok() const {
        return malloc && malloc_aligned && zalloc_aligned && realloc_aligned && free;
    }
};

class mimalloc_backend final : public replay_backend {
  public:
    void* allocate(replay_call, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        tag = 0;
        return align <= 16 ? api_.malloc(size) : api_.malloc_aligned(size, align);
    }
    void* allocate_zeroed(replay_call, std::size_t size, std::size_t align,
                          std::uint32_t& tag) noexcept override {
        tag = 0;
        return api_.zalloc_aligned(size, align);
    }
    void deallocate(replay_call, void* p, std::size_t, std::size_t,
                    std::uint32_t) noexcept override {
        api_.free(p);
    }
    void* reallocate(replay_call, replay_call, void* p, std::size_t, std::size_t size,
                     std::size_t align, std::uint32_t&) noexcept override {
        return api_.realloc_aligned(p, size, align);
    }
    std::size_t footprint() noexcept override {  // memory mimalloc has committed (process-wide)
        if (api_.process_info == nullptr) return 0;
        std::size_t elapsed, user, sys, rss, peak_rss, commit = 0, peak_commit, faults;
        api_.process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
        return commit;
    }

  private:
    const mimalloc_api& api_ = mimalloc_api::get();
};

// ---- jemalloc ------------------------------------------------------------------------------
struct jemalloc_api {
    void* (*mallocx)(std::size_t, int) = nullptr;
    void* (*rallocx)(void*, std::size_t, int) = nullptr;
    void (*sdallocx)(void*, std::size_t, int) = nullptr;
    int (*mallctl)(const char*, void*, std::size_t*, void*, std::size_t) = nullptr;
    std::string error;
    static const jemalloc_api& get() {
        static const jemalloc_api api = [] {
            jemalloc_api a;
            void* lib = open_library("libjemalloc.so.2");
            if (lib == nullptr) a.error = dlerror();
            a.mallocx = symbol<decltype(a.mallocx)>(lib, "mallocx");
            a.rallocx = symbol<decltype(a.rallocx)>(lib, "rallocx");
            a.sdallocx = symbol<decltype(a.sdallocx)>(lib, "sdallocx");
            a.mallctl = symbol<decltype(a.mallctl)>(lib, "mallctl");
            return a;
        }();
        return api;
    }
    [[nodiscard]] bool ok() const { return mallocx && rallocx && sdallocx; }
};

int lg_align_flag(std::size_t align) noexcept {  // MALLOCX_LG_ALIGN
    if (align <= 16) return 0;
    int l = 0;
    while ((std::size_t{1} << l) < align) ++l;
    return l;
}

class jemalloc_backend final : public replay_backend {
  public:
    static constexpr int zero = 0x40;  // MALLOCX_ZERO
    void* allocate(replay_call, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        tag = 0;
        return api_.mallocx(size == 0 ? 1 : size, lg_align_flag(align));
    }
    void* allocate_zeroed(replay_call, std::size_t size, std::size_t align,
                          std::uint32_t& tag) noexcept override {
        tag = 0;
        return api_.mallocx(size == 0 ? 1 : size, lg_align_flag(align) | zero);
    }
    void deallocate(replay_call, void* p, std::size_t size, std::size_t align,
                    std::uint32_t) noexcept override {
        api_.sdallocx(p, size == 0 ? 1 : size, lg_align_flag(align));
    }
    void* reallocate(replay_call, replay_call, void* p, std::size_t, std::size_t size,
                     std::size_t align, std::uint32_t&) noexcept override {
        return p == nullptr ? api_.mallocx(size == 0 ? 1 : size, lg_align_flag(align))
                            : api_.rallocx(p, size == 0 ? 1 : size, lg_align_flag(align));
    }
    std::size_t footprint() noexcept override {  // stats.active after an epoch refresh
        if (api_.mallctl == nullptr) return 0;
        std::uint64_t epoch = 1;
        std::size_t len = sizeof epoch;
        api_.mallctl("epoch", &epoch, &len, &epoch, len);
        std::size_t active = 0;
        len = sizeof active;
        if (api_.mallctl("stats.active", &active, &len, nullptr, 0) != 0) return 0;
        return active;
    }

  private:
    const jemalloc_api& api_ = jemalloc_api::get();
};

// ---- tcmalloc ------------------------------------------------------------------------------
struct tcmalloc_api : malloc_family_api {
    void (*free_sized)(void*, std::size_t) = nullptr;
    int (*property)(const char*, std::size_t*) = nullptr;
    static const tcmalloc_api& get() {
        static const tcmalloc_api api = [] {
            tcmalloc_api a;
            void* lib = open_library("libtcmalloc_minimal.so.4");
            a.load(lib, "tc_");
            a.free_sized = symbol<decltype(a.free_sized)>(lib, "tc_free_sized");
            a.property = symbol<decltype(a.property)>(lib, "MallocExtension_GetNumericProperty");
            return a;
        }();
        return api;
    }
};

class tcmalloc_backend final : public malloc_family_backend<tcmalloc_api> {
  public:
    void deallocate(replay_call, void* p, std::size_t size, std::size_t align,
                    std::uint32_t) noexcept override {
        if (api_.free_sized != nullptr && align <= 16)
            api_.free_sized(p, size);
        else
            api_.free(p);
    }
    std::size_t footprint() noexcept override {  // heap size minus what was returned to the OS
        if (api_.property == nullptr) return 0;
        std::size_t heap = 0, unmapped = 0;
        api_.property("generic.heap_size", &heap);
        api_.property("tcmalloc.pageheap_unmapped_bytes", &unmapped);
        return heap - std::min(heap, unmapped);
    }
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;  // a second malloc beside the sanitizer's is not measured
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

template <class Backend, class Api>
backend_factory make_factory(const char* name, const char* missing) {
    backend_factory f;
    f.name = name;
    if (sanitized && std::string_view(name) != "glibc") {
        f.note = "not loaded in a sanitizer build";
    } else if (Api::get().ok()) {
        f.make = [] { return std::unique_ptr<replay_backend>(new Backend()); };
    } else {
        f.note = missing;
    }
    return f;
}

}  // namespace

backend_factory tlsf_backend_factory();         // replay_tlsf.cpp
backend_factory tlsf_cached_backend_factory();  // replay_tlsf.cpp
backend_factory rt_heap_backend_factory();      // replay_rt_heap.cpp

namespace {
// The whole-program backends in the order they are replayed and listed.
constexpr const char* backend_order[] = {"glibc", "mimalloc",    "jemalloc", "tcmalloc",
                                         "tlsf",  "tlsf_cached", "rt_heap"};
}  // namespace

std::vector<backend_factory> whole_program_backends() {
    std::vector<backend_factory> all;
    all.push_back(
        make_factory<glibc_backend, glibc_api>(backend_order[0], "libc.so.6 symbols not found"));
    all.push_back(make_factory<mimalloc_backend, mimalloc_api>(
        backend_order[1], "libmimalloc.so.2 not found (Debian libmimalloc2.0)"));
    all.push_back(make_factory<jemalloc_backend, jemalloc_api>(
        backend_order[2], "libjemalloc.so.2 not found (Debian libjemalloc2)"));
    all.push_back(make_factory<tcmalloc_backend, tcmalloc_api>(
        backend_order[3], "libtcmalloc_minimal.so.4 not found (Debian libtcmalloc-minimal4)"));
    all.push_back(tlsf_backend_factory());
    all.push_back(tlsf_cached_backend_factory());
    all.push_back(rt_heap_backend_factory());
    return all;
}

std::string backend_names() {
    std::string out;
    for (const char* name : backend_order) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

}  // namespace rtmem::analyze
