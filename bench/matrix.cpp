// Thesis (Kaltenbrunn 2018) Figs 3.9/3.10: multiplying an N x M matrix by an M x N matrix, the
// naive loop (listing 3.2, column walks of b) vs transposing b first (listing 3.3, row walks of
// both). The speedup curve is cycles_naive / cycles_transposed; the thesis saw 2.08x at 200 x 100
// rising to 8x at 2000 x 1900.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "suite_mode.hpp"

namespace {

class matrix {
  public:
    matrix(std::size_t width, std::size_t height)
        : width_(width), height_(height), data_(width * height) {}
    int& at(std::size_t x, std::size_t y) { return data_[y * width_ + x]; }
    int at(std::size_t x, std::size_t y) const { return data_[y * width_ + x]; }
    std::size_t width() const { return width_; }
    std::size_t height() const { return height_; }
    matrix transposed() const {
        matrix t(height_, width_);
        for (std::size_t y = 0; y < height_; ++y)
            for (std::size_t x = 0; x < width_; ++x) t.at(y, x) = at(x, y);
        return t;
    }
    int* data() { return data_.data(); }

  private:
    std::size_t width_, height_;
    std::vector<int> data_;
};

matrix filled(std::size_t width, std::size_t height, int seed) {
    matrix m(width, height);
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x)
            m.at(x, y) = static_cast<int>((x * 7 + y * 13 + static_cast<std::size_t>(seed)) % 17);
    return m;
}

matrix multiply(const matrix& a, const matrix& b) {  // listing 3.2
    matrix result(b.width(), a.height());
    for (std::size_t x = 0; x < result.width(); ++x)
        for (std::size_t y = 0; y < result.height(); ++y)
            for (std::size_t i = 0; i < a.width(); ++i) result.at(x, y) += a.at(i, y) * b.at(x, i);
    return result;
}

matrix multiply_transposed(const matrix& a, const matrix& b) {  // listing 3.3
    matrix result(b.width(), a.height());
    const matrix bt = b.transposed();
    for (std::size_t x = 0; x < result.width(); ++x)
        for (std::size_t y = 0; y < result.height(); ++y) {
            int sum = 0;
            for (std::size_t i = 0; i < a.width(); ++i) sum += a.at(i, y) * bt.at(i, x);
            result.at(x, y) = sum;
        }
    return result;
}

template <bool Transposed>
void multiply_bench(benchmark::State& state, std::size_t n, std::size_t m) {
    // a is M wide and N high (N x M); b is N wide and M high (M x N); the result is N x N.
    const matrix a = filled(m, n, 1);
    const matrix b = filled(n, m, 2);
    for (auto _ : state) {
        matrix r = Transposed ? multiply_transposed(a, b) : multiply(a, b);
        benchmark::DoNotOptimize(r.data());
    }
    state.counters["N"] = static_cast<double>(n);
    state.counters["M"] = static_cast<double>(m);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = rtmem::bench::quick_mode();
    std::vector<std::pair<int, int>> sizes = {{200, 100}, {400, 300}, {600, 500}};
    if (!quick) {  // up to the thesis' largest point, 2000 x 1900 (tens of seconds per naive run)
        sizes.emplace_back(800, 700);
        sizes.emplace_back(1000, 900);
        sizes.emplace_back(1200, 1100);
        sizes.emplace_back(1600, 1500);
        sizes.emplace_back(2000, 1900);
    }
    for (auto [n, m] : sizes) {
        for (bool transposed : {false, true}) {
            std::string name = std::string("fig3_9/") + (transposed ? "transposed" : "naive") +
                               "/" + std::to_string(n) + "x" + std::to_string(m);
            auto un = static_cast<std::size_t>(n), um = static_cast<std::size_t>(m);
            auto* b =
                transposed
                    ? benchmark::RegisterBenchmark(name.c_str(), multiply_bench<true>, un, um)
                    : benchmark::RegisterBenchmark(name.c_str(), multiply_bench<false>, un, um);
            b->Unit(benchmark::kMillisecond);
            if (n >= 1600) b->Iterations(1)->Repetitions(3);  // one multiply is seconds long
        }
    }
    return rtmem::bench::run_benchmarks(argc, argv);
}
