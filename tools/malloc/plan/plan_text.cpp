// Parses the compiled plan without the C library's parsers (strtoull may consult the locale)
// and without malloc: it runs in the preload's constructor.
#include "plan_text.hpp"

#include <cstring>

#include "rtmem/malloc/plan_contract.hpp"

namespace rtmem::site_plan {

namespace {

struct cursor {
    const char* p;
    bool ok = true;

    void expect(const char* word) noexcept {
        const std::size_t n = std::strlen(word);
        if (ok && std::strncmp(p, word, n) == 0) p += n;
        else ok = false;
    }
    std::uint64_t number(unsigned base) noexcept {
        std::uint64_t v = 0;
        const char* start = p;
        for (;; ++p) {
            unsigned d = 0;
            if (*p >= '0' && *p <= '9') d = static_cast<unsigned>(*p - '0');
            else if (base == 16 && *p >= 'a' && *p <= 'f') d = static_cast<unsigned>(*p - 'a' + 10);
            else break;
            if (v > (~0ull - d) / base) ok = false;  // overflow
            v = v * base + d;
        }
        if (p == start) ok = false;
        return v;
    }
    void separator(char c) noexcept {
        if (ok && *p == c) ++p;
        else ok = false;
    }
};

}  // namespace

const char* parse_plan_text(const char* text, plan_text& out, plan_text_mapper map) noexcept {
    cursor c{text};
    c.expect(malloc_contract::plan_magic);
    if (!c.ok) return "not a compiled plan of this version (RTMEM_MALLOC_PLAN)";
    c.expect("modules ");
    const std::uint64_t modules = c.number(10);
    c.separator('\n');
    if (!c.ok || modules > 100000) return "bad module count";
    out.module_count = static_cast<std::uint32_t>(modules);
    out.modules = static_cast<plan_text_module*>(map(sizeof(plan_text_module) * (modules + 1)));
    if (out.modules == nullptr) return "out of memory";
    for (std::uint32_t i = 0; i < out.module_count; ++i) {
        const std::uint64_t len = c.number(10);
        c.separator(' ');
        if (!c.ok || len == 0 || std::strlen(c.p) < len + 1) return "bad module path";
        out.modules[i].path = std::string_view(c.p, static_cast<std::size_t>(len));
        c.p += len;
        c.separator('\n');
        if (!c.ok) return "bad module path";
    }
    c.expect("sites ");
    const std::uint64_t sites = c.number(10);
    c.expect(" frames ");
    const std::uint64_t frames = c.number(10);
    c.separator('\n');
    if (!c.ok || sites > 1000000 || frames > sites * plan_text_max_frames) return "bad site count";
    out.site_count = static_cast<std::uint32_t>(sites);
    out.sites = static_cast<plan_text_site*>(map(sizeof(plan_text_site) * (sites + 1)));
    out.frames = static_cast<plan_text_frame*>(map(sizeof(plan_text_frame) * (frames + 1)));
    if (out.sites == nullptr || out.frames == nullptr) return "out of memory";
    std::uint32_t used = 0;
    for (std::uint32_t i = 0; i < out.site_count; ++i) {
        plan_text_site& s = out.sites[i];
        s.id = static_cast<std::uint32_t>(c.number(10));
        c.separator(' ');
        s.kind = *c.p;
        if (s.kind != 'p' && s.kind != 'r' && s.kind != 't') return "bad strategy";
        ++c.p;
        c.separator(' ');
        s.block = c.number(10);
        c.separator(' ');
        s.max_request = c.number(10);
        c.separator(' ');
        const std::uint64_t n = c.number(10);
        if (!c.ok || n == 0 || n > plan_text_max_frames || used + n > frames)
            return "bad frame count";
        s.first_frame = used;
        s.frame_count = static_cast<std::uint32_t>(n);
        for (std::uint32_t k = 0; k < n; ++k) {
            c.separator(' ');
            const std::uint64_t m = c.number(10);
            c.separator(' ');
            const std::uint64_t off = c.number(16);
            if (!c.ok || m >= modules) return "bad frame";
            out.frames[used++] = {static_cast<std::uint32_t>(m), off};
        }
        c.separator('\n');
        if (!c.ok) return "bad site line";
    }
    if (*c.p != 0) return "trailing text";
    out.frame_count = used;
    return nullptr;
}

}  // namespace rtmem::site_plan
