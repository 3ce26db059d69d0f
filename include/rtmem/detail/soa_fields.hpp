// Field access for soa_vector without a registration macro: the number of fields of an
// aggregate and a tuple of references to them, through structured bindings. The cases below are
// generated (one per arity, up to soa_max_fields); an aggregate with more fields is rejected
// with a static_assert in soa_vector.hpp.
#pragma once
#include <cstddef>
#include <tuple>

namespace rtmem::detail {

inline constexpr std::size_t soa_max_fields = 32;

/// std::tie over the N fields of the aggregate s (lvalue references, const-qualified like s).
template <std::size_t N, class S>
constexpr auto soa_tie(S& s) noexcept {
    // clang-format off
    if constexpr (N == 1) {
        auto& [f0] = s;
        return std::tie(f0);
    } else if constexpr (N == 2) {
        auto& [f0, f1] = s;
        return std::tie(f0, f1);
    } else if constexpr (N == 3) {
        auto& [f0, f1, f2] = s;
        return std::tie(f0, f1, f2);
    } else if constexpr (N == 4) {
        auto& [f0, f1, f2, f3] = s;
        return std::tie(f0, f1, f2, f3);
    } else if constexpr (N == 5) {
        auto& [f0, f1, f2, f3, f4] = s;
        return std::tie(f0, f1, f2, f3, f4);
    } else if constexpr (N == 6) {
        auto& [f0, f1, f2, f3, f4, f5] = s;
        return std::tie(f0, f1, f2, f3, f4, f5);
    } else if constexpr (N == 7) {
        auto& [f0, f1, f2, f3, f4, f5, f6] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6);
    } else if constexpr (N == 8) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7);
    } else if constexpr (N == 9) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8);
    } else if constexpr (N == 10) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
    } else if constexpr (N == 11) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10);
    } else if constexpr (N == 12) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11);
    } else if constexpr (N == 13) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12);
    } else if constexpr (N == 14) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13);
    } else if constexpr (N == 15) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14);
    } else if constexpr (N == 16) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15);
    } else if constexpr (N == 17) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16);
    } else if constexpr (N == 18) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17);
    } else if constexpr (N == 19) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18);
    } else if constexpr (N == 20) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19);
    } else if constexpr (N == 21) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20);
    } else if constexpr (N == 22) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21);
    } else if constexpr (N == 23) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22);
    } else if constexpr (N == 24) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23);
    } else if constexpr (N == 25) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24);
    } else if constexpr (N == 26) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25);
    } else if constexpr (N == 27) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26);
    } else if constexpr (N == 28) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27);
    } else if constexpr (N == 29) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28);
    } else if constexpr (N == 30) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29);
    } else if constexpr (N == 31) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30);
    } else if constexpr (N == 32) {
        auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31] = s;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31);
    } else {
        static_assert(N <= soa_max_fields, "soa_vector supports up to soa_max_fields fields");
        return std::tuple<>{};
    }
    // clang-format on
}

}  // namespace rtmem::detail
