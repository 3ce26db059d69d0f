// soa_vector: structure-of-arrays storage that reads like an array of structures.
//
// The record is written once as a template over a field wrapper:
//
//     template <template <class> class F>
//     struct particle { F<vec3> position; F<vec3> velocity; F<float> age; };
//
// particle<rtmem::soa_value> is the plain struct; particle<rtmem::soa_ref> (a struct of
// references) is the row proxy, so `v[i].position += v[i].velocity * dt` names real fields with
// no macro. Each field lives in its own 64-byte-aligned column; all columns share one allocation.
#pragma once
#include <compare>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <new>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/detail/soa_layout.hpp"

namespace rtmem {

/// Field wrappers: the plain value, a reference into a column, and a whole column.
template <class T>
using soa_value = T;
template <class T>
using soa_ref = T&;
template <class T>
using soa_cref = const T&;
template <class T>
using soa_column = std::span<T>;
template <class T>
using soa_const_column = std::span<const T>;

template <template <template <class> class> class S, allocator Upstream = malloc_allocator>
class soa_vector {
  public:
    using value_type = S<soa_value>;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    static constexpr std::size_t field_count = sizeof(S<detail::soa_one_byte>);
    static_assert(std::is_aggregate_v<value_type>, "a soa_vector record must be an aggregate");
    static_assert(field_count <= detail::soa_max_fields, "too many fields for soa_vector");
    static_assert(detail::soa_exact_arity<value_type, field_count>(),
                  "every data member of a soa_vector record must be a field F<...>");

    using field_types = typename detail::soa_field_types<value_type, field_count>::type;
    template <std::size_t I>
    using field_type = std::tuple_element_t<I, field_types>;

  private:
    using layout = detail::soa_layout<field_types>;
    using indices = std::make_index_sequence<field_count>;
    static constexpr bool nothrow_fields = []<std::size_t... I>(std::index_sequence<I...>) {
        return (std::is_nothrow_move_constructible_v<field_type<I>> && ...);
    }
    (indices{});
    static_assert(nothrow_fields, "soa_vector fields must be nothrow move constructible");

  public:
    class const_reference;

    /// A row: the record instantiated with references into the columns. Assigning to it writes
    /// the fields (proxy semantics); it converts to the plain value_type.
    class reference : public S<soa_ref> {
      public:
        explicit reference(S<soa_ref> refs) noexcept : S<soa_ref>(refs) {}
        reference(const reference&) = default;
        reference& operator=(const reference& other) { return assign(other.row_fields()); }
        reference& operator=(const const_reference& other) { return assign(other.row_fields()); }
        reference& operator=(const value_type& v) {
            return assign(detail::soa_tie<field_count>(v));
        }
        reference& operator=(value_type&& v) {
            auto src = detail::soa_tie<field_count>(v);
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((std::get<I>(row_fields()) = std::move(std::get<I>(src))), ...);
            }
            (indices{});
            return *this;
        }
        /// A copy of the row as the plain struct.
        [[nodiscard]] value_type row_value() const { return soa_vector::make_value(row_fields()); }
        operator value_type() const { return row_value(); }  // NOLINT: implicit on purpose
        /// References to the fields, in declaration order.
        [[nodiscard]] auto row_fields() const noexcept {
            return detail::soa_tie<field_count>(static_cast<const S<soa_ref>&>(*this));
        }
        /// Swaps the fields of two rows (what std::sort and std::iter_swap use).
        friend void swap(reference a,
                         reference b) noexcept(std::is_nothrow_swappable_v<value_type>) {
            auto x = a.row_fields();
            auto y = b.row_fields();
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                using std::swap;
                (swap(std::get<I>(x), std::get<I>(y)), ...);
            }
            (indices{});
        }

      private:
        template <class Tuple>
        reference& assign(const Tuple& src) {
            auto dst = row_fields();
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((std::get<I>(dst) = std::get<I>(src)), ...);
            }
            (indices{});
            return *this;
        }
    };

    /// A read-only row.
    class const_reference : public S<soa_cref> {
      public:
        explicit const_reference(S<soa_cref> refs) noexcept : S<soa_cref>(refs) {}
        const_reference(const reference& r) noexcept  // NOLINT: rows convert to read-only rows
            : S<soa_cref>(make_cref(r.row_fields())) {}
        const_reference(const const_reference&) = default;
        const_reference& operator=(const const_reference&) = delete;
        [[nodiscard]] value_type row_value() const { return soa_vector::make_value(row_fields()); }
        operator value_type() const { return row_value(); }  // NOLINT: implicit on purpose
        [[nodiscard]] auto row_fields() const noexcept {
            return detail::soa_tie<field_count>(static_cast<const S<soa_cref>&>(*this));
        }

      private:
        template <class Tuple>
        static S<soa_cref> make_cref(const Tuple& t) noexcept {
            return std::apply([](const auto&... f) { return S<soa_cref>{f...}; }, t);
        }
    };

    template <bool Const>
    class basic_iterator {
        using owner = std::conditional_t<Const, const soa_vector, soa_vector>;

      public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = soa_vector::value_type;
        using difference_type = std::ptrdiff_t;
        using reference =
            std::conditional_t<Const, soa_vector::const_reference, soa_vector::reference>;
        using pointer = void;

        basic_iterator() = default;
        basic_iterator(owner* v, std::size_t i) noexcept : v_(v), i_(i) {}
        operator basic_iterator<true>() const noexcept { return {v_, i_}; }  // NOLINT

        reference operator*() const noexcept { return (*v_)[i_]; }
        reference operator[](difference_type n) const noexcept { return (*v_)[index(n)]; }
        [[nodiscard]] std::size_t index() const noexcept { return i_; }

        basic_iterator& operator++() noexcept { return ++i_, *this; }
        basic_iterator& operator--() noexcept { return --i_, *this; }
        basic_iterator operator++(int) noexcept { return {v_, i_++}; }
        basic_iterator operator--(int) noexcept { return {v_, i_--}; }
        basic_iterator& operator+=(difference_type n) noexcept { return i_ = index(n), *this; }
        basic_iterator& operator-=(difference_type n) noexcept { return i_ = index(-n), *this; }
        friend basic_iterator operator+(basic_iterator it, difference_type n) noexcept {
            return it += n;
        }
        friend basic_iterator operator+(difference_type n, basic_iterator it) noexcept {
            return it += n;
        }
        friend basic_iterator operator-(basic_iterator it, difference_type n) noexcept {
            return it -= n;
        }
        friend difference_type operator-(basic_iterator a, basic_iterator b) noexcept {
            return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
        }
        friend bool operator==(basic_iterator a, basic_iterator b) noexcept { return a.i_ == b.i_; }
        friend auto operator<=>(basic_iterator a, basic_iterator b) noexcept {
            return a.i_ <=> b.i_;
        }

      private:
        [[nodiscard]] std::size_t index(difference_type n) const noexcept {
            return static_cast<std::size_t>(static_cast<difference_type>(i_) + n);
        }
        owner* v_ = nullptr;
        std::size_t i_ = 0;
    };
    using iterator = basic_iterator<false>;
    using const_iterator = basic_iterator<true>;

    // ---- construction ----------------------------------------------------------------------

    soa_vector() noexcept requires std::default_initializable<Upstream> : up_(&default_upstream()) {
    }
    explicit soa_vector(Upstream& upstream) noexcept : up_(&upstream) {}
    soa_vector(const soa_vector& other) : up_(other.up_) {
        try {
            reserve(other.size_);
            for (; size_ < other.size_; ++size_) construct_row(size_, other.tie_row(size_));
        } catch (...) {
            this->~soa_vector();  // no destructor runs for a constructor that throws
            throw;
        }
    }
    soa_vector(soa_vector&& other) noexcept
        : up_(other.up_),
          block_(std::exchange(other.block_, nullptr)),
          block_bytes_(std::exchange(other.block_bytes_, 0)),
          cols_(std::exchange(other.cols_, {})),
          size_(std::exchange(other.size_, 0)),
          capacity_(std::exchange(other.capacity_, 0)) {}
    soa_vector& operator=(soa_vector other) noexcept {
        swap(other);
        return *this;
    }
    ~soa_vector() {
        clear();
        up_->deallocate(block_, block_bytes_, layout::block_alignment(capacity_));
    }
    void swap(soa_vector& other) noexcept {
        std::swap(up_, other.up_);
        std::swap(block_, other.block_);
        std::swap(block_bytes_, other.block_bytes_);
        std::swap(cols_, other.cols_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
    }

    // ---- element access --------------------------------------------------------------------

    [[nodiscard]] reference operator[](std::size_t i) noexcept {
        check_index(i);
        return reference(make_row<S<soa_ref>>(i));
    }
    [[nodiscard]] const_reference operator[](std::size_t i) const noexcept {
        check_index(i);
        return const_reference(make_row<S<soa_cref>>(i));
    }
    [[nodiscard]] reference front() noexcept { return (*this)[0]; }
    [[nodiscard]] reference back() noexcept { return (*this)[size_ - 1]; }
    /// A copy of row i as the plain struct.
    [[nodiscard]] value_type value(std::size_t i) const { return (*this)[i].row_value(); }

    /// Field I of every row, contiguous and 64-byte aligned (for SIMD loops).
    template <std::size_t I>
    [[nodiscard]] std::span<field_type<I>> column() noexcept {
        return {col<I>(), size_};
    }
    template <std::size_t I>
    [[nodiscard]] std::span<const field_type<I>> column() const noexcept {
        return {col<I>(), size_};
    }
    /// Every column at once, by name: `auto c = v.columns(); c.position[i] += c.velocity[i];`
    [[nodiscard]] S<soa_column> columns() noexcept {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return S<soa_column>{column<I>()...};
        }
        (indices{});
    }
    [[nodiscard]] S<soa_const_column> columns() const noexcept {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return S<soa_const_column>{column<I>()...};
        }
        (indices{});
    }

    [[nodiscard]] iterator begin() noexcept { return {this, 0}; }
    [[nodiscard]] iterator end() noexcept { return {this, size_}; }
    [[nodiscard]] const_iterator begin() const noexcept { return {this, 0}; }
    [[nodiscard]] const_iterator end() const noexcept { return {this, size_}; }
    [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
    [[nodiscard]] const_iterator cend() const noexcept { return end(); }

    // ---- capacity --------------------------------------------------------------------------

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    [[nodiscard]] Upstream& upstream() const noexcept { return *up_; }

    /// Makes room for n rows (one allocation for all columns). Throws std::bad_alloc when the
    /// upstream is exhausted, like std::vector.
    void reserve(std::size_t n) {
        if (n > capacity_) reallocate(n);
    }
    void shrink_to_fit() {
        if (size_ == 0) {
            up_->deallocate(block_, block_bytes_, layout::block_alignment(capacity_));
            block_ = nullptr, block_bytes_ = 0, capacity_ = 0, cols_ = {};
        } else if (size_ < capacity_) {
            reallocate(size_);
        }
    }

    // ---- modifiers -------------------------------------------------------------------------

    void push_back(const value_type& v) {
        grow_for_one();
        construct_row(size_, detail::soa_tie<field_count>(v));
        ++size_;
    }
    void push_back(value_type&& v) {
        grow_for_one();
        construct_row(size_, as_rvalues(detail::soa_tie<field_count>(v)));
        ++size_;
    }
    /// Appends a row built field by field: one argument per field, in declaration order.
    template <class... A>
    requires(sizeof...(A) == field_count) reference emplace_back(A&&... args) {
        if (size_ == capacity_) [[unlikely]] {
            // The arguments may refer into this vector: take them before the columns move.
            field_types fields(std::forward<A>(args)...);
            grow_for_one();
            construct_row(size_, as_rvalues(fields));
        } else {
            construct_row(size_, std::forward_as_tuple(std::forward<A>(args)...));
        }
        return (*this)[size_++];
    }
    void pop_back() noexcept {
        if (size_ == 0) [[unlikely]] {
            report_violation(violation_kind::bad_argument, name, nullptr, 0,
                             "pop_back on an empty soa_vector");
            return;
        }
        destroy_row(--size_);
    }
    /// Removes row i keeping the order of the others (moves every later row down: O(n)).
    void erase(std::size_t i) noexcept {
        if (!valid_index(i, "erase")) return;
        for_each_column([&]<std::size_t I>() {
            auto* c = col<I>();
            std::move(c + i + 1, c + size_, c + i);
        });
        destroy_row(--size_);
    }
    iterator erase(const_iterator it) noexcept {
        erase(it.index());
        return {this, it.index()};
    }
    /// Removes row i by moving the last row into its place: O(1), order not kept.
    void swap_erase(std::size_t i) noexcept {
        if (!valid_index(i, "swap_erase")) return;
        const std::size_t last = size_ - 1;
        if (i != last) {
            for_each_column([&]<std::size_t I>() { col<I>()[i] = std::move(col<I>()[last]); });
        }
        destroy_row(--size_);
    }
    /// Grows with value-initialised rows or shrinks from the back.
    void resize(std::size_t n) {
        if (n > capacity_) reallocate(n);
        while (size_ < n) {
            construct_row(size_, std::tuple<>{});
            ++size_;
        }
        while (size_ > n) destroy_row(--size_);
    }
    void clear() noexcept {
        while (size_ > 0) destroy_row(--size_);
    }

    static constexpr std::string_view name = "soa_vector";

  private:
    static Upstream& default_upstream() noexcept {
        static Upstream instance;
        return instance;
    }

    template <std::size_t I>
    [[nodiscard]] field_type<I>* col() const noexcept {
        return static_cast<field_type<I>*>(cols_[I]);
    }

    template <class Row>
    [[nodiscard]] Row make_row(std::size_t i) const noexcept {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return Row{col<I>()[i]...};
        }
        (indices{});
    }

    [[nodiscard]] auto tie_row(std::size_t i) const noexcept {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<const field_type<I>&...>{col<I>()[i]...};
        }
        (indices{});
    }

    template <class Tuple>
    static value_type make_value(const Tuple& t) {
        return std::apply([](const auto&... f) { return value_type{f...}; }, t);
    }

    template <class F>
    static void for_each_column(F&& f) {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (f.template operator()<I>(), ...);
        }
        (indices{});
    }

    /// Constructs row i from the tuple src (empty tuple: value-initialise). If a field's
    /// constructor throws, the fields already built are destroyed again.
    /// (Elements are forwarded: a tuple of rvalue references moves, of lvalues copies.)
    template <class Tuple, std::size_t I = 0>
    void construct_row(std::size_t i, const Tuple& src) {
        if constexpr (I < field_count) {
            using F = field_type<I>;
            auto* at = col<I>() + i;
            if constexpr (std::tuple_size_v<Tuple> == 0) {
                ::new (static_cast<void*>(at)) F();
            } else {
                using E = std::tuple_element_t<I, Tuple>;
                ::new (static_cast<void*>(at)) F(static_cast<E&&>(std::get<I>(src)));
            }
            if constexpr (I + 1 < field_count) {
                try {
                    construct_row<Tuple, I + 1>(i, src);
                } catch (...) {
                    at->~F();
                    throw;
                }
            }
        }
    }

    template <class Tuple>
    static auto as_rvalues(Tuple&& t) noexcept {
        return std::apply([](auto&... f) { return std::forward_as_tuple(std::move(f)...); }, t);
    }

    void destroy_row(std::size_t i) noexcept {
        for_each_column([&]<std::size_t I>() {
            using F = field_type<I>;
            col<I>()[i].~F();
        });
    }

    void check_index([[maybe_unused]] std::size_t i) const noexcept {
        if constexpr (check_level >= 1) {
            if (i >= size_) [[unlikely]] {
                // No row exists to hand back: report, then stop rather than touch foreign memory.
                report_violation(violation_kind::bad_argument, name, nullptr, i,
                                 "row %zu out of range (size %zu)", i, size_);
                std::abort();
            }
        }
    }

    bool valid_index(std::size_t i, const char* what) const noexcept {
        if (i < size_) [[likely]]
            return true;
        report_violation(violation_kind::bad_argument, name, nullptr, i,
                         "%s of row %zu out of range (size %zu)", what, i, size_);
        return false;
    }

    void grow_for_one() {
        if (size_ == capacity_) [[unlikely]]
            reallocate(capacity_ < 8 ? 8 : capacity_ * 2);
    }

    RTMEM_NOINLINE void reallocate(std::size_t n) {
        std::array<std::size_t, field_count> offsets{};
        std::size_t bytes = 0;
        if (!layout::offsets(n, offsets, bytes)) throw std::bad_alloc();
        auto* block = static_cast<std::byte*>(up_->allocate(bytes, layout::block_alignment(n)));
        if (block == nullptr) throw std::bad_alloc();
        std::array<void*, field_count> cols{};
        for (std::size_t k = 0; k < field_count; ++k) cols[k] = block + offsets[k];
        for_each_column([&]<std::size_t I>() {
            using F = field_type<I>;
            auto* src = col<I>();
            std::uninitialized_move(src, src + size_, static_cast<F*>(cols[I]));
            std::destroy(src, src + size_);
        });
        up_->deallocate(block_, block_bytes_, layout::block_alignment(capacity_));
        block_ = block, block_bytes_ = bytes, cols_ = cols, capacity_ = n;
    }

    Upstream* up_;
    std::byte* block_ = nullptr;
    std::size_t block_bytes_ = 0;
    std::array<void*, field_count> cols_{};
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

/// A copy of a row as the plain struct (same as row.row_value()).
template <class Row>
[[nodiscard]] auto to_value(const Row& row) -> decltype(row.row_value()) {
    return row.row_value();
}

}  // namespace rtmem
