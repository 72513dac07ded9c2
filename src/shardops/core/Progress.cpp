#include "shardops/core/Progress.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include "shardops/core/NumberText.hpp"

namespace shardops {

namespace {
using Clock = std::chrono::steady_clock;
std::atomic<bool> g_on{false};
std::atomic<std::int64_t> g_phase_bytes{0};
Clock::time_point g_start = Clock::now(), g_last_line = Clock::now();

double since_start() { return std::chrono::duration<double>(Clock::now() - g_start).count(); }

std::string rate(std::int64_t bytes, double seconds) {
  const double mb = static_cast<double>(bytes) / 1e6;
  return fixed_text(mb, 1) + " MB" + (seconds > 0 ? ", " + fixed_text(mb / seconds, 0) + " MB/s" : std::string());
}

// "[shardops   1.234 s]": the start of every line.
std::string stamp() {
  std::string t = fixed_text(since_start(), 3);
  if (t.size() < 7) t.insert(0, 7 - t.size(), ' ');
  return "[shardops " + t + " s]";
}
}  // namespace

void set_progress(bool on) noexcept {
  g_on.store(on);
  g_start = Clock::now();
}

bool progress_on() noexcept { return g_on.load(); }

std::int64_t progress_phase_start(const char* phase) noexcept {
  const std::int64_t mark = g_phase_bytes.load();
  if (!g_on.load()) return mark;
  g_last_line = Clock::now();
  std::fprintf(stderr, "%s %s ...\n", stamp().c_str(), phase);
  return mark;
}

void progress_phase_end(const char* phase, double seconds, std::int64_t mark) noexcept {
  if (!g_on.load()) return;
  const std::int64_t bytes = g_phase_bytes.load() - mark;
  if (bytes > 0) {
    std::fprintf(stderr, "%s %s done in %s s (rank 0: %s)\n", stamp().c_str(), phase, fixed_text(seconds, 3).c_str(),
                 rate(bytes, seconds).c_str());
  } else {
    std::fprintf(stderr, "%s %s done in %s s\n", stamp().c_str(), phase, fixed_text(seconds, 3).c_str());
  }
}

void progress_note(const char* text) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "%s %s\n", stamp().c_str(), text);
}

void progress_inner_phase_start(const char* phase, const char* how) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "%s %s ... (%s)\n", stamp().c_str(), phase, how);
}

void progress_inner_phase_end(const char* phase, double seconds) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "%s %s done in %s s\n", stamp().c_str(), phase, fixed_text(seconds, 3).c_str());
}

void progress_count(std::int64_t bytes) noexcept { g_phase_bytes.fetch_add(bytes); }

void progress_bytes(const char* what, std::int64_t done, std::int64_t total) noexcept {
  if (!g_on.load()) return;
  const auto now = Clock::now();
  if (now - g_last_line < std::chrono::seconds(1)) return;
  g_last_line = now;
  std::fprintf(stderr, "%s   %s: %s of %s MB (rank 0)\n", stamp().c_str(), what,
               fixed_text(static_cast<double>(done) / 1e6, 1).c_str(),
               fixed_text(static_cast<double>(total) / 1e6, 1).c_str());
}

}  // namespace shardops
