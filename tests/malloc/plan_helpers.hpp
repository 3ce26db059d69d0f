// What the `rtmem run --plan` tests share: reading a file whole, one site's line of the exit
// summary, and the plan costs that make the advisor plan the tests' small sites.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rtmem::test {

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// "plan site ID KIND: matched, N served, D to the general heap, F freed"
struct site_line {
    bool found = false;
    std::string state;
    std::uint64_t served = 0, declined = 0, freed = 0;
};
inline site_line site_summary(const std::string& summary, std::uint32_t id) {
    // Parsed by hand: std::regex trips GCC 12's -Wmaybe-uninitialized under ASan at -O1.
    site_line s;
    const std::size_t at = summary.find("plan site " + std::to_string(id) + " ");
    if (at == std::string::npos) return s;
    const std::size_t state = summary.find(": ", at);
    const std::size_t comma = summary.find(", ", state);
    if (state == std::string::npos || comma == std::string::npos) return s;
    unsigned long long served = 0, declined = 0, freed = 0;
    if (std::sscanf(summary.c_str() + comma + 2,
                    "%llu served, %llu to the general heap, %llu freed", &served, &declined,
                    &freed) != 3)
        return s;
    s.found = true;
    s.state = summary.substr(state + 2, comma - state - 2);
    s.served = served;
    s.declined = declined;
    s.freed = freed;
    return s;
}

/// `rtmem advise --plan` options pricing the heap as glibc costs and memory as free: against
/// rt_heap the tests' small sites save nothing and the plan would stay empty.
inline constexpr const char* glibc_like_plan_costs =
    " --set plan_heap_list_ns=20 --set plan_heap_miss_ns=20 --set plan_page_ns=0"
    " --set plan_min_saved_ns=0 --set plan_probe_ns=0 ";

}  // namespace rtmem::test
