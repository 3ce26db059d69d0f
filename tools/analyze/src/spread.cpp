#include "rtmem/analyze/spread.hpp"

#include <algorithm>

namespace rtmem::analyze {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

spread spread_of(const std::vector<double>& v) {
    spread s;
    if (v.empty()) return s;
    s.median = median(v);
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    return s;
}

}  // namespace rtmem::analyze
