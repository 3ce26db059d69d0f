// The render thread: consumes the command queue the game thread filled one frame earlier, while
// the game thread builds the next one (the double-buffered queue of the thesis).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "common.hpp"

namespace demo {

/// Queue must offer for_each(f) over its commands and retire() (called on the render thread
/// when it is done with them: the baseline frees them there, cross-thread; the rtmem variant
/// leaves them to the frame allocator).
template <class Queue>
class render_thread {
  public:
    render_thread() : worker_([this] { run(); }) {}
    render_thread(const render_thread&) = delete;
    render_thread& operator=(const render_thread&) = delete;
    ~render_thread() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        worker_.join();
    }

    /// Blocks until the previously submitted queue has been consumed.
    void wait_idle() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return pending_ == nullptr; });
    }

    void submit(Queue& queue) {
        {
            std::lock_guard lock(mutex_);
            pending_ = &queue;
        }
        changed_.notify_all();
    }

    /// Hash of every command consumed so far, in order (call after wait_idle()).
    std::uint64_t hash() const {
        std::lock_guard lock(mutex_);
        return hash_;
    }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [this] { return stop_ || pending_ != nullptr; });
            if (pending_ == nullptr) return;  // stop requested and nothing left
            Queue* queue = pending_;
            std::uint64_t h = hash_;
            lock.unlock();
            queue->for_each([&h](const auto& cmd) { h = execute(h, cmd); });
            queue->retire();
            lock.lock();
            hash_ = h;
            pending_ = nullptr;
            changed_.notify_all();
        }
    }

    /// Stands in for the driver work: reads everything a real submission would read.
    template <class Cmd>
    static std::uint64_t execute(std::uint64_t h, const Cmd& cmd) {
        h = mix(h, cmd.sort_key);
        h = mix(h, cmd.label);
        h = mix(h, (std::uint64_t{cmd.mesh} << 32) | cmd.material);
        for (float t : cmd.transform) h = mix(h, t);
        for (std::size_t i = 0; i < cmd.params.size(); ++i) h = mix(h, cmd.params[i]);
        return h;
    }

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    Queue* pending_ = nullptr;
    bool stop_ = false;
    std::uint64_t hash_ = 0;
    std::thread worker_;  // last: starts after the members above exist
};

}  // namespace demo
