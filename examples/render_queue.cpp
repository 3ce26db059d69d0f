// A render command queue with frame_allocator<2>: the game thread records this frame's
// commands while the render thread executes last frame's, each in its own buffer. At the
// frame boundary the roles swap and the buffer read two frames ago is reset in O(1).
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <new>
#include <thread>

#include "rtmem/alloc/frame.hpp"

namespace {

struct draw_command {
    std::uint32_t mesh;
    std::uint32_t material;
    float transform[16];
    draw_command* next;
};

struct command_queue {
    draw_command* head = nullptr;
    draw_command* tail = nullptr;
    std::uint32_t count = 0;
};

constexpr int frames = 200;

}  // namespace

int main() {
    rtmem::frame_allocator<2> commands{256 * 1024};
    command_queue queues[2];  // queue of the frame recorded into buffer i
    std::uint64_t recorded_sum = 0, executed_sum = 0;
    int frame = 0;
    bool out_of_memory = false;

    // Runs once per frame when both threads arrive: swap buffers.
    std::barrier frame_end{2, [&]() noexcept {
                               commands.next_frame();  // resets the buffer the renderer finished
                               ++frame;
                               queues[frame % 2] = {};
                           }};

    std::thread render([&] {
        for (int f = 0; f < frames; ++f) {
            if (f > 0) {  // execute the previous frame's commands (the other buffer)
                for (const draw_command* c = queues[(f - 1) % 2].head; c != nullptr; c = c->next)
                    executed_sum += c->mesh + c->material;
            }
            frame_end.arrive_and_wait();
        }
    });

    for (int f = 0; f < frames; ++f) {  // the game thread
        command_queue& q = queues[f % 2];
        const std::uint32_t n = 100 + static_cast<std::uint32_t>(f % 50);
        for (std::uint32_t i = 0; i < n; ++i) {
            void* mem = commands.allocate(sizeof(draw_command), alignof(draw_command));
            if (mem == nullptr) {
                out_of_memory = true;
                break;
            }
            auto* c = new (mem) draw_command{i, i % 7, {}, nullptr};
            (q.tail != nullptr ? q.tail->next : q.head) = c;
            q.tail = c;
            ++q.count;
            if (f < frames - 1) recorded_sum += c->mesh + c->material;  // the last is never drawn
        }
        frame_end.arrive_and_wait();
    }
    render.join();

    const rtmem::stats s = commands.stats();
    std::printf(
        "render_queue: %d frames, %llu command checksum recorded, %llu executed; peak "
        "%zu KiB of 2 x 256 KiB\n",
        frames, static_cast<unsigned long long>(recorded_sum),
        static_cast<unsigned long long>(executed_sum), s.peak / 1024);
    return !out_of_memory && recorded_sum == executed_sum ? 0 : 1;
}
