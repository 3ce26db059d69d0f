// rtmem::source_location: std::source_location where the standard library has it, otherwise the
// same interface over the compiler builtins (clang 14 with libstdc++ 12 lacks the std one).
#pragma once
#include <cstdint>

#if __has_include(<source_location>)
#include <source_location>
#endif

namespace rtmem {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
class source_location {
  public:
    static constexpr source_location current(const char* file = __builtin_FILE(),
                                             const char* function = __builtin_FUNCTION(),
                                             std::uint_least32_t line = __builtin_LINE()) noexcept {
        source_location l;
        l.file_ = file;
        l.function_ = function;
        l.line_ = line;
        return l;
    }
    constexpr source_location() noexcept = default;
    [[nodiscard]] constexpr const char* file_name() const noexcept { return file_; }
    [[nodiscard]] constexpr const char* function_name() const noexcept { return function_; }
    [[nodiscard]] constexpr std::uint_least32_t line() const noexcept { return line_; }
    [[nodiscard]] constexpr std::uint_least32_t column() const noexcept { return 0; }

  private:
    const char* file_ = "";
    const char* function_ = "";
    std::uint_least32_t line_ = 0;
};
#endif

}  // namespace rtmem
