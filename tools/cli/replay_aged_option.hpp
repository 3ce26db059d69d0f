// `rtmem replay --aged [--aged-keep F]`: replay on a littered heap (replay_aged.hpp). Kept
// apart from replay.cpp: one hook there.
#pragma once
#include <memory>

#include "command.hpp"
#include "rtmem/analyze/replay_aged.hpp"

namespace rtmem::cli {

struct aged_option {
    bool on = false;
    double keep = 0.5;

    void add_to(CLI::App& sub) {
        sub.add_flag("--aged", on,
                     "Litter each allocator's heap before the replay (blocks of the program's own "
                     "sizes, as many as its peak live count, a random part freed), so it starts "
                     "aged instead of fresh");
        sub.add_option("--aged-keep", keep,
                       "With --aged: the fraction of litter blocks still allocated (default 0.5)")
            ->check(CLI::Range(0.0, 1.0));
    }
    void apply(const analyze::replay_program& prog, analyze::replay_options& o) const {
        if (!on) return;
        analyze::litter_options l;
        l.keep = keep;
        auto litter = std::make_shared<const analyze::litter_plan>(analyze::make_litter(prog, l));
        o.prepare = [litter](analyze::backend_factory b) {
            return analyze::aged_backend(std::move(b), litter);
        };
    }
};

}  // namespace rtmem::cli
