// A figure measured over repetitions: the median and the range it came from.
#pragma once
#include <vector>

namespace rtmem::analyze {

struct spread {
    double median = 0, min = 0, max = 0;
};

/// The middle value (the mean of the two middle ones for an even count); 0 for none.
[[nodiscard]] double median(std::vector<double> v);
/// Median, min and max of `v` (all 0 for none).
[[nodiscard]] spread spread_of(const std::vector<double>& v);

}  // namespace rtmem::analyze
