// Console-style memory budgets: every subsystem allocates under a tag, each tag has a budget, and
// the frame's report shows who uses what. An over-budget request is reported to a callback that
// decides whether it goes ahead (here: textures may not grow past their budget, audio may).
#include <cstdio>
#include <memory_resource>
#include <string>
#include <vector>

#include "rtmem/adapt/pmr.hpp"
#include "rtmem/adapt/typed.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/diag/tagged_new.hpp"
#include "rtmem/diag/tracked.hpp"

namespace {
struct mesh {
    std::vector<float> vertices;
};
struct voice {
    float gain = 1.0f;
    int channel = 0;
};
}  // namespace

int main() {
    rtmem::malloc_allocator heap;
    rtmem::tracked<rtmem::malloc_allocator> memory{heap};

    // Intern once (a string compare at start-up), then tags are integers.
    static const rtmem::tag textures{"render/textures"}, meshes{"render/meshes"},
        music{"audio/music"}, render{"render"}, audio{"audio"};
    memory.set_budget(render, 64 << 10);
    memory.set_budget(textures, 48 << 10);
    memory.set_budget(audio, 16 << 10);

    int denied = 0, allowed_over = 0;
    memory.set_budget_callback([&](const rtmem::budget_event& e) {
        std::printf("over budget: %.*s (%zu of %zu bytes) at %s:%u\n",
                    static_cast<int>(e.tag.path().size()), e.tag.path().data(), e.live_bytes,
                    e.budget, e.where.file_name(), static_cast<unsigned>(e.where.line()));
        if (e.tag.is_within(audio)) {
            ++allowed_over;
            return rtmem::budget_action::allow;  // music may stream a bit more
        }
        ++denied;
        return rtmem::budget_action::deny;
    });

    rtmem::resource resource{memory};  // any pmr container can be charged to the current tag
    std::vector<void*> texture_blocks;
    {
        rtmem::tag_scope scope{textures};
        for (int i = 0; i < 8; ++i) {
            void* p = memory.allocate(8 << 10, 256);
            if (p != nullptr) texture_blocks.push_back(p);  // the 7th no longer fits
        }
    }
    // Coherent Labs' tagged new: the subsystem is named in the new-expression itself.
    const rtmem::memory_tag in_meshes{memory, meshes};
    const rtmem::memory_tag in_music{memory, music};
    mesh* m = new (in_meshes) mesh();
    voice* voices = rtmem::new_array<voice>(in_music, 32);  // element by element, count header
    {
        rtmem::tag_scope scope{meshes};
        std::pmr::vector<float> staging{&resource};
        staging.resize(1000, 1.0f);
    }
    std::pmr::string track{&resource};
    {
        rtmem::tag_scope scope{music};
        track.assign(20 << 10, 'm');  // over the audio budget: allowed by the callback
    }

    std::printf("\n%s\n%s\n", memory.report().c_str(), memory.report_json().c_str());

    rtmem::destroy(m, in_meshes);
    rtmem::destroy_array(voices, in_music);
    for (void* p : texture_blocks) memory.deallocate(p, 8 << 10, 256);
    track = std::pmr::string{&resource};
    const bool ok = m != nullptr && voices != nullptr && texture_blocks.size() == 6 &&
                    denied == 2 && allowed_over == 1 && memory.stats(meshes).live_bytes == 0 &&
                    memory.stats(music).deallocations == 1 &&
                    memory.stats(render).peak_bytes >= (48 << 10);
    std::printf("textures kept: %zu, denied: %d, allowed over budget: %d -> %s\n",
                texture_blocks.size(), denied, allowed_over, ok ? "as expected" : "UNEXPECTED");
    return ok ? 0 : 1;
}
