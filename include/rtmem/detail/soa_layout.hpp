// Compile-time description of a soa_vector record: the field count, the field types and the
// column layout inside the single allocation. No registration: the record is a template over a
// field wrapper, so the container instantiates it with wrappers of its own to learn its shape.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "rtmem/core/alignment.hpp"
#include "rtmem/detail/soa_fields.hpp"

namespace rtmem::detail {

/// Every field becomes one char: sizeof(S<soa_one_byte>) is the number of fields.
template <class>
using soa_one_byte = char;

/// Converts to anything: probes how many initializers an aggregate accepts.
struct soa_any {
    template <class U>
    operator U() const;  // declared only; used in unevaluated operands
};

template <class V, std::size_t... I>
constexpr bool soa_accepts(std::index_sequence<I...>) {
    return requires {
        V{(static_cast<void>(I), soa_any{})...};
    };
}

/// True when V accepts exactly N initializers: every data member is one field.
template <class V, std::size_t N>
constexpr bool soa_exact_arity() {
    return soa_accepts<V>(std::make_index_sequence<N>{}) &&
           !soa_accepts<V>(std::make_index_sequence<N + 1>{});
}

/// The field types of the plain record V (N fields), as a std::tuple of value types.
template <class V, std::size_t N>
struct soa_field_types {
    using tie_type = decltype(soa_tie<N>(std::declval<V&>()));
    template <std::size_t... I>
    static auto strip(std::index_sequence<I...>)
        -> std::tuple<std::remove_cvref_t<std::tuple_element_t<I, tie_type>>...>;
    using type = decltype(strip(std::make_index_sequence<N>{}));
};

/// Every column starts on its own cache line, so a column span is ready for aligned SIMD loads
/// and two columns never share a line.
inline constexpr std::size_t soa_column_alignment = 64;

template <class Tuple>
struct soa_layout;

template <class... T>
struct soa_layout<std::tuple<T...>> {
    static constexpr std::size_t count = sizeof...(T);
    static constexpr std::array<std::size_t, count> sizes{sizeof(T)...};
    static constexpr std::array<std::size_t, count> aligns{
        std::max(soa_column_alignment, alignof(T))...};
    static constexpr std::size_t block_alignment = std::max({aligns[0], alignof(T)...});

    /// Byte offset of each column for `capacity` rows and the total size; false on overflow.
    static bool offsets(std::size_t capacity, std::array<std::size_t, count>& out,
                        std::size_t& total) noexcept {
        std::size_t at = 0;
        for (std::size_t k = 0; k < count; ++k) {
            std::size_t bytes = 0;
            if (!checked_align_up(at, aligns[k], at) || !checked_mul(capacity, sizes[k], bytes))
                return false;
            out[k] = at;
            if (!checked_add(at, bytes, at)) return false;
        }
        total = at;
        return true;
    }
};

}  // namespace rtmem::detail
