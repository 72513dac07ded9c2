#include "shardops/core/RowRuns.hpp"

#include <algorithm>

namespace shardops {

RowRuns runs_of_rows(std::vector<std::int64_t> rows, std::int64_t gap) {
  std::sort(rows.begin(), rows.end());
  RowRuns runs;
  for (const std::int64_t row : rows) {
    if (!runs.empty() && row - runs.back().end <= gap) {
      runs.back().end = std::max(runs.back().end, row + 1);
    } else {
      runs.push_back({row, row + 1});
    }
  }
  return runs;
}

std::int64_t rows_in(const RowRuns& runs) noexcept {
  std::int64_t n = 0;
  for (const RowRun& r : runs) n += r.end - r.first;
  return n;
}

}  // namespace shardops
