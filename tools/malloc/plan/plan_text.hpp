// The compiled plan as librtmem-malloc reads it (format: rtmem/malloc/plan_contract.hpp),
// parsed in place: module paths point into the text, arrays come from a caller's mapper.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rtmem::site_plan {

struct plan_text_module {
    std::string_view path;
};
struct plan_text_frame {
    std::uint32_t module;
    std::uint64_t offset;
};
struct plan_text_site {
    std::uint32_t id;
    char kind;  // p, r, t
    std::uint64_t block, max_request;
    std::uint32_t first_frame, frame_count;
};
struct plan_text {
    plan_text_module* modules = nullptr;
    std::uint32_t module_count = 0;
    plan_text_site* sites = nullptr;
    std::uint32_t site_count = 0;
    plan_text_frame* frames = nullptr;
    std::uint32_t frame_count = 0;
};

/// Most frames a site may name (deeper plans are rejected by the CLI before they get here).
inline constexpr std::uint32_t plan_text_max_frames = 32;

using plan_text_mapper = void* (*)(std::size_t bytes) noexcept;

/// nullptr on success, else what is wrong (a static string).
const char* parse_plan_text(const char* text, plan_text& out, plan_text_mapper map) noexcept;

}  // namespace rtmem::site_plan
