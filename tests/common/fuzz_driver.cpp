// Stand-in for libFuzzer when the compiler has none (g++) or for ctest runs: feeds
// LLVMFuzzerTestOneInput deterministic pseudo-random inputs, or the files named on the command line.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) {
            std::ifstream in(argv[i], std::ios::binary);
            std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        }
        return 0;
    }
    std::mt19937_64 rng(12345);
    for (int run = 0; run < 200; ++run) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rng() % 8192));
        for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
    std::puts("fuzz driver: 200 inputs ran clean");
    return 0;
}
