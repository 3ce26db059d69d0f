#include "violation_recorder.hpp"

namespace rtmem::testing {
namespace {
violation_recorder* active = nullptr;
}

violation_recorder::violation_recorder()
    : previous_(set_violation_handler(&violation_recorder::record)), outer_(active) {
    active = this;
}

violation_recorder::~violation_recorder() {
    active = outer_;
    set_violation_handler(previous_);
}

std::size_t violation_recorder::count(violation_kind kind) const noexcept {
    std::size_t n = 0;
    for (const auto& v : seen_) n += v.kind == kind ? 1 : 0;
    return n;
}

void violation_recorder::record(const violation& v) {
    if (active == nullptr) return;
    active->seen_.push_back(recorded_violation{v.kind, std::string(v.allocator),
                                               std::string(v.message), v.pointer, v.size});
}

}  // namespace rtmem::testing
