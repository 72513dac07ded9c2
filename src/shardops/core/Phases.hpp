#pragma once
/// \file
/// \brief Wall time per named phase ("read", "validate", "route", "apply", "write";
/// and "mpi", the time inside the exchanges' MPI calls, also counted in the phase they
/// ran in, "route" for the ops),
/// accumulated on this rank; the command line reports the max over ranks.

#include <cstdint>
#include <map>
#include <string>

#include <Kokkos_Timer.hpp>

namespace shardops {

class PhaseClock {
 public:
  static void add(const std::string& phase, double seconds);
  /// Counts \p seconds already counted in phase \p from in phase \p to instead (an op's
  /// work done inside another phase: rows made while they are written).
  static void move(const std::string& from, const std::string& to, double seconds);
  static std::map<std::string, double> totals();
  static void reset();
};

/// \brief Times a scope into a phase. The execution space is fenced at the end so
/// that device work is counted where it ran.
class ScopedPhase {
 public:
  explicit ScopedPhase(std::string phase);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  std::string phase_;
  const char* outer_;  ///< the phase this one runs inside
  std::int64_t progress_mark_ = 0;
  Kokkos::Timer timer_;
};

/// \brief Fault-injection point for the tests of what signals and kills leave behind:
/// if SHARDOPS_TEST_PAUSE is "WHERE:SECONDS" and \p where is WHERE, rank-independent
/// sleep here. Every phase calls it at its start with its name; the journaled commit
/// also at "journaled" (the file changed, the journal not yet removed).
void test_pause(const char* where);

/// \brief The innermost phase running now on this rank ("startup" before the first),
/// readable from a signal handler (a static string, never freed).
const char* current_phase_name() noexcept;

}  // namespace shardops
