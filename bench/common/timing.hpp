// Reducing repeated timings, shared by the benchmark programs: every rank's time of a
// repeat is the slowest rank's (max over ranks), and a figure is the median of repeats.
#ifndef SHARDOPS_BENCH_TIMING_HPP
#define SHARDOPS_BENCH_TIMING_HPP

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double max_over_ranks(MPI_Comm comm, double v) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

#endif
