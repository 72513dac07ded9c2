#include "shardops/core/Phases.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

#include "shardops/core/Kokkos.hpp"
#include "shardops/core/Progress.hpp"

namespace shardops {

namespace {
std::map<std::string, double>& table() {
  static std::map<std::string, double> t;
  return t;
}
// Phase names live as long as the process, so a signal handler may read them.
std::atomic<const char*> g_current{"startup"};
const char* interned(const std::string& name) {
  static std::set<std::string> names;
  return names.insert(name).first->c_str();
}
}  // namespace

const char* current_phase_name() noexcept { return g_current.load(); }

void test_pause(const char* where) {
  static const std::string setting = [] {
    const char* text = std::getenv("SHARDOPS_TEST_PAUSE");
    return std::string(text != nullptr ? text : "");
  }();
  if (setting.empty()) return;
  const std::size_t colon = setting.rfind(':');
  if (colon == std::string::npos || setting.compare(0, colon, where) != 0) return;
  std::fprintf(stderr, "shardops: test pause at %s\n", where);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(setting.c_str() + colon + 1)));
}

void PhaseClock::add(const std::string& phase, double seconds) { table()[phase] += seconds; }
void PhaseClock::move(const std::string& from, const std::string& to, double seconds) {
  if (seconds <= 0) return;
  table()[from] -= seconds;
  table()[to] += seconds;
}
std::map<std::string, double> PhaseClock::totals() { return table(); }
void PhaseClock::reset() { table().clear(); }

ScopedPhase::ScopedPhase(std::string phase) : phase_(std::move(phase)), outer_(g_current.load()) {
  g_current.store(interned(phase_));
  progress_mark_ = progress_phase_start(g_current.load());
  test_pause(g_current.load());
}

ScopedPhase::~ScopedPhase() {
  ExecSpace().fence();
  const double seconds = timer_.seconds();
  PhaseClock::add(phase_, seconds);
  progress_phase_end(phase_.c_str(), seconds, progress_mark_);
  g_current.store(outer_);
}

}  // namespace shardops
