// Fuzz entry for the trace reader: the input either is a trace file itself (starts with the
// magic) or mutates a valid synthetic trace (truncation length, then offset/byte pairs), so
// random bytes reach the chunk and event decoders. Any outcome but a crash or a non-
// trace_error exception is fine. A time window is read as well (index seeking).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "trace_writer.hpp"

namespace {

std::vector<std::uint8_t> make_seed() {
    std::string path = "/tmp/rtmem_fuzz_seed_" + std::to_string(getpid()) + ".rtt";
    {
        rtmem::testing::trace_writer w(path);
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        w.stack(1, {0x1100, 0x1200});
        w.stack(2, {0x1300});
        using rtmem::analyze::op;
        for (std::uint64_t i = 0; i < 300; ++i) {
            auto t = static_cast<std::uint32_t>(i % 3);
            w.event(t, op::malloc, 10 * i, 0x10000 + 64 * i, 16 + i % 50, 1 + t % 2);
            if (i % 2 == 0) w.event(t, op::free, 10 * i + 5, 0x10000 + 64 * i, 0);
        }
        w.finish();
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    std::remove(path.c_str());
    return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::vector<std::uint8_t> seed = make_seed();
    std::vector<std::uint8_t> file;
    if (size >= 8 && std::memcmp(data, "RTMTRACE", 8) == 0) {
        file.assign(data, data + size);
    } else {
        file = seed;
        if (size >= 2) {
            std::size_t keep = (std::size_t{data[0]} << 8 | data[1]) % (seed.size() + 1);
            if (data[0] & 0x80) file.resize(keep);  // truncate half of the time
        }
        for (std::size_t i = 2; i + 2 < size && !file.empty(); i += 3) {
            std::size_t at = (std::size_t{data[i]} << 8 | data[i + 1]) % file.size();
            file[at] = data[i + 2];
        }
    }
    int fd = memfd_create("rtmem_fuzz", 0);
    if (fd < 0) return 0;
    if (!file.empty() && write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) {
        close(fd);
        return 0;
    }
    try {
        rtmem::analyze::trace_reader r("/proc/self/fd/" + std::to_string(fd));
        auto rep = rtmem::analyze::analyze_events(r);
        for (std::uint32_t id = 0; id < r.stack_count(); ++id) (void)r.stack(id);
        if (rep.events > r.event_count()) std::abort();  // more events than the index said
        // A window seeks with the index: never more events than the whole read.
        std::uint64_t from = size > 0 ? std::uint64_t{data[size - 1]} * 12 : 0;
        auto part = rtmem::analyze::analyze_window(r, {from, from + 1000}, (size & 1) != 0);
        if (part.events > rep.events) std::abort();
    } catch (const rtmem::analyze::trace_error&) {
    }
    close(fd);
    return 0;
}
