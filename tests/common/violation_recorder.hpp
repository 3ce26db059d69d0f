// A violation handler for tests: records violations instead of aborting, so a test can assert
// that misuse was detected *and* that the allocator carried on safely.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "rtmem/core/violation.hpp"

namespace rtmem::testing {

struct recorded_violation {
    violation_kind kind;
    std::string allocator;
    std::string message;
    const void* pointer;
    std::size_t size;
};

/// Installs a recording handler for its lifetime (restores the previous one after). Not for
/// concurrent use from several threads.
class violation_recorder {
public:
    violation_recorder();
    ~violation_recorder();
    violation_recorder(const violation_recorder&) = delete;
    violation_recorder& operator=(const violation_recorder&) = delete;

    [[nodiscard]] std::size_t count() const noexcept { return seen_.size(); }
    [[nodiscard]] bool empty() const noexcept { return seen_.empty(); }
    [[nodiscard]] const recorded_violation& last() const { return seen_.back(); }
    [[nodiscard]] const std::vector<recorded_violation>& all() const noexcept { return seen_; }
    /// Number of recorded violations of one kind.
    [[nodiscard]] std::size_t count(violation_kind kind) const noexcept;
    void clear() noexcept { seen_.clear(); }

private:
    static void record(const violation& v);
    std::vector<recorded_violation> seen_;
    violation_handler previous_;
    violation_recorder* outer_;
};

}  // namespace rtmem::testing
