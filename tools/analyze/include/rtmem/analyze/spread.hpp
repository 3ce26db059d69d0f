// A figure measured over repetitions: the median and the range it came from.
#pragma once

namespace rtmem::analyze {

struct spread {
    double median = 0, min = 0, max = 0;
};

}  // namespace rtmem::analyze
