// A one-line progress bar on stderr for long commands (rtmem replay): on a terminal redrawn in
// place at most ten times a second and erased when done; elsewhere (--progress into a log) one
// line per 10%. Never
// writes to stdout, so text and JSON output stay clean.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace rtmem::cli {

class progress_bar {
  public:
    /// Shown when `forced` (--progress) or when stderr is a terminal.
    progress_bar(std::string label, bool forced)
        : label_(std::move(label)), tty_(isatty(STDERR_FILENO) == 1), shown_(forced || tty_) {}
    progress_bar(const progress_bar&) = delete;
    progress_bar& operator=(const progress_bar&) = delete;
    ~progress_bar() { finish(); }

    [[nodiscard]] bool shown() const noexcept { return shown_; }

    void update(std::size_t done, std::size_t total) {
        if (!shown_ || total == 0) return;
        const auto now = clock::now();
        const double f = done >= total ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
        if (tty_ && done < total && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
        const int tenth = static_cast<int>(f * 10);  // a log (not a terminal) gets a line per 10%
        if (!tty_ && drawn_ && tenth == last_tenth_) return;
        last_tenth_ = tenth;
        last_ = now;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        constexpr int width = 30;
        const int filled = static_cast<int>(f * width);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.append(static_cast<std::size_t>(width - filled), '.');
        char line[160];
        if (f > 0.02 && f < 1.0) {
            std::snprintf(line, sizeof line, "%s [%s] %3.0f%%  %.1f s, ~%.0f s left", label_.c_str(),
                          bar.c_str(), 100 * f, elapsed, elapsed / f - elapsed);
        } else {
            std::snprintf(line, sizeof line, "%s [%s] %3.0f%%  %.1f s", label_.c_str(), bar.c_str(),
                          100 * f, elapsed);
        }
        std::fprintf(stderr, tty_ ? "\r%s\033[K" : "%s\n", line);
        std::fflush(stderr);
        drawn_ = true;
    }

    /// Erases the bar on a terminal (the result follows on stdout).
    void finish() {
        if (!shown_ || !drawn_) return;
        if (tty_) std::fputs("\r\033[K", stderr);
        std::fflush(stderr);
        drawn_ = false;
    }

  private:
    using clock = std::chrono::steady_clock;
    std::string label_;
    bool tty_, shown_, drawn_ = false;
    int last_tenth_ = -1;
    clock::time_point start_ = clock::now(), last_{};
};

}  // namespace rtmem::cli
