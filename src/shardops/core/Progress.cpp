#include "shardops/core/Progress.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

namespace shardops {

namespace {
using Clock = std::chrono::steady_clock;
std::atomic<bool> g_on{false};
std::atomic<std::int64_t> g_phase_bytes{0};
Clock::time_point g_start = Clock::now(), g_last_line = Clock::now();

double since_start() { return std::chrono::duration<double>(Clock::now() - g_start).count(); }

std::string rate(std::int64_t bytes, double seconds) {
  char text[64];
  const double mb = static_cast<double>(bytes) / 1e6;
  if (seconds > 0) {
    std::snprintf(text, sizeof text, "%.1f MB, %.0f MB/s", mb, mb / seconds);
  } else {
    std::snprintf(text, sizeof text, "%.1f MB", mb);
  }
  return text;
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
  std::fprintf(stderr, "[shardops %7.3f s] %s ...\n", since_start(), phase);
  return mark;
}

void progress_phase_end(const char* phase, double seconds, std::int64_t mark) noexcept {
  if (!g_on.load()) return;
  const std::int64_t bytes = g_phase_bytes.load() - mark;
  if (bytes > 0) {
    std::fprintf(stderr, "[shardops %7.3f s] %s done in %.3f s (rank 0: %s)\n", since_start(), phase, seconds,
                 rate(bytes, seconds).c_str());
  } else {
    std::fprintf(stderr, "[shardops %7.3f s] %s done in %.3f s\n", since_start(), phase, seconds);
  }
}

void progress_note(const char* text) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "[shardops %7.3f s] %s\n", since_start(), text);
}

void progress_inner_phase_start(const char* phase, const char* how) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "[shardops %7.3f s] %s ... (%s)\n", since_start(), phase, how);
}

void progress_inner_phase_end(const char* phase, double seconds) noexcept {
  if (!g_on.load()) return;
  std::fprintf(stderr, "[shardops %7.3f s] %s done in %.3f s\n", since_start(), phase, seconds);
}

void progress_count(std::int64_t bytes) noexcept { g_phase_bytes.fetch_add(bytes); }

void progress_bytes(const char* what, std::int64_t done, std::int64_t total) noexcept {
  if (!g_on.load()) return;
  const auto now = Clock::now();
  if (now - g_last_line < std::chrono::seconds(1)) return;
  g_last_line = now;
  std::fprintf(stderr, "[shardops %7.3f s]   %s: %.1f of %.1f MB (rank 0)\n", since_start(), what,
               static_cast<double>(done) / 1e6, static_cast<double>(total) / 1e6);
}

}  // namespace shardops
