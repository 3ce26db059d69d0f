// Small helpers the benchmark programs share: a seeded xorshift generator for workloads that
// must be identical for every allocator, a reporter base for the programs that print a ratio
// table after the console output, and the bodies of their main().
#pragma once
#include <benchmark/benchmark.h>

#include "xorshift.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rtmem::bench {

/// Console output, then a table: record() sees each run the table reads (the only run, or the
/// median when repetitions are asked for) and print_table() runs after the console output.
class table_reporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& r : runs)
            if (r.run_type != Run::RT_Aggregate || r.aggregate_name == "median") record(r);
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        print_table();
    }

  protected:
    virtual void record(const Run& r) = 0;
    virtual void print_table() = 0;
};

/// The rest of main() once the benchmarks are registered (heap_origin.cpp has already put the
/// libraries serving malloc and operator new in the JSON context).
inline int run_benchmarks(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

/// The whole of main() for a program whose output ends with its reporter's table.
template <class Reporter>
int run_with_reporter(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    Reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}

}  // namespace rtmem::bench
