// TLSF block header and size-class mapping (Masmano et al., "TLSF: a new dynamic memory
// allocator for real-time systems", 2004). Internal to tlsf_allocator.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace rtmem::detail {

/// A block as seen from its header. The user area starts at `next_free` and runs `size` bytes;
/// its last slot doubles as the next block's `prev_phys`, so an allocated block costs exactly one
/// slot (size_flags). next_free/prev_free exist only while the block is free; prev_phys is valid
/// only while the previous block is free (boundary tag for coalescing).
///
/// Every field is an 8-byte slot, on 64-bit targets a plain word. On 32-bit targets (i386,
/// wasm32) a slot is a 4-byte word and 4 bytes of padding: the layout, the size rules (sizes
/// 8 mod 16, so user pointers are 16-aligned and bits 0-2 are free for flags) and the class
/// mapping stay the same as on 64-bit, at the price of 4 bytes per allocated block.
struct tlsf_block {
    static constexpr std::size_t slot = 8;

    alignas(slot) tlsf_block* prev_phys;
    alignas(slot) std::size_t size_flags;  // size | this_free (bit 0) | prev_free (1) | cached (2)
    alignas(slot) tlsf_block* next_free;
    alignas(slot) tlsf_block* prev_free;

    // cached: freed by the caller but parked in tlsf_allocator's front cache (neither live nor in
    // a free list; its neighbours see it as used). Sizes are 8 mod 16, so bits 0-2 are free.
    static constexpr std::size_t this_free_bit = 1, prev_free_bit = 2, cached_bit = 4;
    static constexpr std::size_t flag_bits = 7;
    static constexpr std::size_t overhead = slot;         // per allocated block
    static constexpr std::size_t user_offset = 2 * slot;  // header start -> user data
    static constexpr std::size_t min_size = 3 * slot;     // size slot + two links

    [[nodiscard]] std::size_t size() const noexcept { return size_flags & ~flag_bits; }
    void set_size(std::size_t s) noexcept { size_flags = s | (size_flags & flag_bits); }
    [[nodiscard]] bool is_free() const noexcept { return size_flags & this_free_bit; }
    [[nodiscard]] bool is_cached() const noexcept { return size_flags & cached_bit; }
    [[nodiscard]] bool is_prev_free() const noexcept { return size_flags & prev_free_bit; }
    [[nodiscard]] bool is_last() const noexcept { return size() == 0; }  // the pool sentinel
    void set_free(bool f) noexcept {
        size_flags = f ? size_flags | 1 : size_flags & ~std::size_t{1};
    }
    void set_prev_free(bool f) noexcept {
        size_flags = f ? size_flags | 2 : size_flags & ~std::size_t{2};
    }

    [[nodiscard]] std::byte* user() noexcept {
        return reinterpret_cast<std::byte*>(this) + user_offset;
    }
    static tlsf_block* from_user(const void* p) noexcept {
        return reinterpret_cast<tlsf_block*>(
            const_cast<std::byte*>(static_cast<const std::byte*>(p)) - user_offset);
    }
    /// The physically next block: its header starts at the last slot of this block's user area.
    [[nodiscard]] tlsf_block* next_phys() noexcept {
        return reinterpret_cast<tlsf_block*>(user() + size() - overhead);
    }
    /// next_phys(), also recording this block as its boundary tag.
    tlsf_block* link_next() noexcept {
        tlsf_block* n = next_phys();
        n->prev_phys = this;
        return n;
    }
};
static_assert(sizeof(tlsf_block) == 4 * tlsf_block::slot);

/// Size-class parameters: second level 2^5 = 32 lists per power of two, 8-byte granularity.
struct tlsf_classes {
    static constexpr unsigned align_log2 = 3;
    static constexpr std::size_t align = std::size_t{1} << align_log2;
    static constexpr unsigned sl_log2 = 5;
    static constexpr unsigned sl_count = 1u << sl_log2;
    static constexpr unsigned fl_shift = sl_log2 + align_log2;  // below 2^8: one linear class
    static constexpr std::size_t small_block = std::size_t{1} << fl_shift;
    static constexpr unsigned fl_max = sizeof(std::size_t) == 8 ? 40 : 30;
    static constexpr unsigned fl_count = fl_max - fl_shift + 1;
    static constexpr std::size_t max_block = (std::size_t{1} << fl_max) - 2 * align;
    /// One bit per first-level class: a 32-bit word on 32-bit targets (fl_count 23), 64 bits
    /// on 64-bit ones (fl_count 33), so the bitmap scans stay single instructions on both.
    using fl_map = std::conditional_t<(fl_count <= 32), std::uint32_t, std::uint64_t>;

    /// Every user pointer is aligned to 16 (like malloc) at no cost: block sizes are kept
    /// congruent to 8 mod 16, so size + the one header word is a multiple of 16 and the next
    /// user pointer stays aligned.
    static constexpr std::size_t user_align = 2 * align;
    /// The block size serving a request of n bytes (n <= max_block).
    static constexpr std::size_t block_size_for(std::size_t n) noexcept {
        const std::size_t s = ((n + align + (user_align - 1)) & ~(user_align - 1)) - align;
        return s < 3 * align ? 3 * align : s;
    }
    static constexpr bool valid_size(std::size_t s) noexcept { return s % user_align == align; }

    static unsigned fls(std::size_t x) noexcept {
        return static_cast<unsigned>(std::bit_width(x)) - 1;
    }

    /// The list a free block of `size` bytes lives in.
    static void insert_index(std::size_t size, unsigned& fl, unsigned& sl) noexcept {
        if (size < small_block) {
            fl = 0;
            sl = static_cast<unsigned>(size / (small_block / sl_count));
        } else {
            const unsigned f = fls(size);
            sl = static_cast<unsigned>(size >> (f - sl_log2)) ^ sl_count;
            fl = f - (fl_shift - 1);
        }
    }

    /// Whether sizes a and b map to the same list: a class is an aligned interval 8 bytes wide
    /// below small_block and 2^(fls - sl_log2) wide above it, so both sizes agree above that
    /// width (a size in another power of two differs in a higher bit). No branch.
    static bool same_class(std::size_t a, std::size_t b) noexcept {
        return (a ^ b) < (std::size_t{1} << (fls(a | small_block) - sl_log2));
    }

    /// The first list whose every block is >= size (size rounded up to the next class).
    static void search_index(std::size_t size, unsigned& fl, unsigned& sl) noexcept {
        if (size >= small_block) size += (std::size_t{1} << (fls(size) - sl_log2)) - 1;
        insert_index(size, fl, sl);
    }
};

}  // namespace rtmem::detail
