#include "shardops/core/Phases.hpp"

#include "shardops/core/Kokkos.hpp"

namespace shardops {

namespace {
std::map<std::string, double>& table() {
  static std::map<std::string, double> t;
  return t;
}
}  // namespace

void PhaseClock::add(const std::string& phase, double seconds) { table()[phase] += seconds; }
std::map<std::string, double> PhaseClock::totals() { return table(); }
void PhaseClock::reset() { table().clear(); }

ScopedPhase::~ScopedPhase() {
  ExecSpace().fence();
  PhaseClock::add(phase_, timer_.seconds());
}

}  // namespace shardops
