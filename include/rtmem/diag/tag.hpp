// Memory tags: hierarchical names ("render/textures") interned once into a small integer, so the
// allocation hot path carries an integer, never a string. tag_scope sets the calling thread's
// current tag; tracked<A> charges allocations to it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rtmem {

/// At most this many distinct tags (the root included) per process; interning more is a
/// bad_argument violation and yields the root tag.
inline constexpr std::size_t max_tags = 256;
/// Longest tag path in characters.
inline constexpr std::size_t max_tag_path = 119;

namespace detail {
/// Parent id of every interned tag (the root is its own parent). Written once per tag before the
/// tag's id is handed out, read without locking.
extern std::uint16_t tag_parents[max_tags];
inline thread_local std::uint16_t current_tag_id = 0;
}  // namespace detail

/// A handle to an interned tag. The default tag is the root (""), which every tag descends from
/// and which stands for "untagged" allocations.
class tag {
  public:
    constexpr tag() noexcept = default;

    /// Interns path and each of its parents ("render/textures" also interns "render"). Segments
    /// are separated by '/', must be non-empty; "" is the root. Thread-safe; takes a lock and
    /// scans the table, so intern once (e.g. a static) and reuse the tag.
    explicit tag(std::string_view path) noexcept;

    [[nodiscard]] static constexpr tag from_id(std::uint16_t id) noexcept { return tag(id, 0); }

    [[nodiscard]] constexpr std::uint16_t id() const noexcept { return id_; }
    [[nodiscard]] constexpr bool is_root() const noexcept { return id_ == 0; }
    /// Full path, e.g. "render/textures" ("" for the root).
    [[nodiscard]] std::string_view path() const noexcept;
    /// Last segment, e.g. "textures".
    [[nodiscard]] std::string_view leaf() const noexcept;
    [[nodiscard]] tag parent() const noexcept { return from_id(detail::tag_parents[id_]); }
    /// Number of segments ("" 0, "render" 1, "render/textures" 2).
    [[nodiscard]] std::size_t depth() const noexcept;
    /// True when this tag is `ancestor` or lies below it.
    [[nodiscard]] bool is_within(tag ancestor) const noexcept;

    friend constexpr bool operator==(tag, tag) noexcept = default;

  private:
    constexpr tag(std::uint16_t id, int) noexcept : id_(id) {}
    std::uint16_t id_ = 0;
};

/// Number of tags interned so far (the root included).
[[nodiscard]] std::size_t tag_count() noexcept;

/// The calling thread's current tag (the root unless a tag_scope is active).
[[nodiscard]] inline tag current_tag() noexcept {
    return tag::from_id(detail::current_tag_id);
}

/// Makes t the calling thread's current tag until the scope ends (scopes nest).
class tag_scope {
  public:
    explicit tag_scope(tag t) noexcept : previous_(detail::current_tag_id) {
        detail::current_tag_id = t.id();
    }
    ~tag_scope() { detail::current_tag_id = previous_; }
    tag_scope(const tag_scope&) = delete;
    tag_scope& operator=(const tag_scope&) = delete;

  private:
    std::uint16_t previous_;
};

}  // namespace rtmem
