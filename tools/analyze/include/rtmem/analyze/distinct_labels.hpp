// Labels for call stacks that never collide: a site is named by its innermost frames, and two
// sites that share those (they differ deeper, or in frames whose names are equal, e.g. two calls
// in one function without line info) would otherwise print as identical rows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace rtmem::analyze {

struct label_style {
    std::size_t frames = 3;       ///< innermost frames in a label
    std::string separator = " < ";
    std::function<std::string(std::uint64_t ip)> text;  ///< a frame's name
    std::function<std::string(std::uint64_t ip)> key;   ///< module+offset: distinct per ip
};

/// One label per stack (innermost frame first): its `frames` innermost frames' texts. Stacks
/// whose labels would be equal get, each, the first frame where it differs from the others,
/// as "  [frame N: text]" (with the frame's module+offset when the text alone is shared), so
/// distinct stacks get distinct labels. An empty stack is labelled `empty`.
[[nodiscard]] std::vector<std::string> distinct_labels(
    const std::vector<std::span<const std::uint64_t>>& stacks, const label_style& style,
    const std::string& empty);

}  // namespace rtmem::analyze
