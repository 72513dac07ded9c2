#pragma once
/// \file
/// \brief Runs of rows: the rows of a block that are read when an op needs only a few of
/// them (GatherNd's params at the rows its indices name), as few contiguous pieces.

#include <cstdint>
#include <vector>

namespace shardops {

/// Rows [first, end) of a block.
struct RowRun {
  std::int64_t first = 0;
  std::int64_t end = 0;
};

/// Sorted, disjoint, non-empty runs, none touching the next.
using RowRuns = std::vector<RowRun>;

/// \brief The runs that hold every row of \p rows (in any order, repeats allowed), two runs
/// with at most \p gap rows between them made one: a read then takes fewer, longer pieces,
/// which costs less than skipping the rows between them.
RowRuns runs_of_rows(std::vector<std::int64_t> rows, std::int64_t gap);

/// The rows of \p runs, all together.
std::int64_t rows_in(const RowRuns& runs) noexcept;

}  // namespace shardops
