// gtest main for the MPI tests: MPI, then Kokkos, then the tests, once per rank.
//
// - Only rank 0 keeps gtest's default result printer, so a run prints its report once.
// - A failure on another rank is printed by that rank (prefixed with its rank) and,
//   at the end of every test, reduced over all ranks: rank 0 then marks the test
//   failed too, so its report and its exit code tell the truth.
// - The exit code is reduced with MPI_Allreduce: a failure on any rank makes every
//   rank exit non-zero, so mpiexec (and ctest) fail whichever rank it is.
//
// Models: kokkos-comm unit_tests/test_main.cpp, Cabana's test harness.
#include <mpi.h>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdio>

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Non-root ranks: print each failed assertion (the default printer is gone there).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    if (result.file_name()) {
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name(), result.line_number(),
                   result.message());
    } else {
      std::fprintf(stderr, "[rank %d] Failure\n%s\n", rank_, result.message());
    }
    std::fflush(stderr);
  }

 private:
  int rank_;
};

// Every rank: after each test, agree on whether any rank failed it. Rank 0 records
// a failure it did not see itself, naming the ranks, so its report is complete.
// Every rank runs the same tests in the same order (same binary, same filter), so
// the reductions pair up.
class FailureReducer : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int failed = info.result()->Failed() ? 1 : 0;
    int failed_ranks = 0;  // count of ranks that failed
    MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed_ranks > 0 && !failed && world_rank() == 0) {
      std::fprintf(stdout, "[  FAILED  ] %s.%s failed on %d of %d ranks (not on rank 0; see their output)\n",
                   info.test_suite_name(), info.name(), failed_ranks, size);
      std::fflush(stdout);
      any_remote_failure_ = true;
    }
  }
  bool any_remote_failure() const { return any_remote_failure_; }

 private:
  bool any_remote_failure_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    const int rank = world_rank();
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) {
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(rank));
    }
    auto* reducer = new FailureReducer;  // owned by gtest
    listeners.Append(reducer);

    int local = RUN_ALL_TESTS();
    if (reducer->any_remote_failure()) local = 1;
    MPI_Allreduce(&local, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && result != 0 && reducer->any_remote_failure()) {
      std::fprintf(stdout, "[  FAILED  ] tests failed on other ranks (listed above): every rank exits with 1\n");
    }
  }  // Kokkos finalizes before MPI does
  MPI_Finalize();
  return result;
}
