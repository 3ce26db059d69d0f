// Setting and listing the fields of a settings struct (thresholds, costs) by name, from one
// visitor per struct that calls f("name", field) for each field.
#pragma once
#include <string_view>
#include <type_traits>
#include <vector>

namespace rtmem::analyze::detail {

/// `visit(f)` calls f(name, field) for every field. False when no field has `name`.
template <class Visit>
bool set_field(Visit&& visit, std::string_view name, double value) noexcept {
    bool found = false;
    visit([&](std::string_view n, auto& field) {
        if (n != name) return;
        found = true;
        field = static_cast<std::remove_reference_t<decltype(field)>>(value);
    });
    return found;
}

template <class Visit>
std::vector<std::string_view> field_names(Visit&& visit) {
    std::vector<std::string_view> out;
    visit([&](std::string_view n, auto&) { out.push_back(n); });
    return out;
}

}  // namespace rtmem::analyze::detail
