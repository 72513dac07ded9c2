// Route on its own: fetch brings each leaf its root's row, reduce hands the owners their
// rows in global order (segments included) with keys that increase along it, collect
// brings every row, replicate_others the other blocks.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "DistTestUtil.hpp"
#include "shardops/route/Route.hpp"

namespace shardops {
namespace {

using test::world;

std::int64_t leaves_of(int rank) { return rank == 1 ? 0 : 20 + 3 * rank; }
std::int64_t roots_of(int rank) { return 5 + rank; }

// Owner of leaf i of rank src: a mix of every rank, the rank itself, and leaves without one.
int owner_rank_of(int src, std::int64_t i, int nranks) {
  return i % 7 == 6 ? -1 : static_cast<int>((src * 3 + i * i + i / 2) % nranks);
}
std::int64_t owner_row_of(int src, std::int64_t i, int owner) { return (src * 5 + i * 3) % roots_of(owner); }

// A value that names (rank, row).
std::int64_t tag(int rank, std::int64_t row) { return 1000 * (rank + 1) + row; }

struct Leaves {
  Kokkos::View<int*, MemSpace> rank;
  Kokkos::View<std::int64_t*, MemSpace> row;
};

Leaves make_leaves(int src, int nranks) {
  const std::int64_t n = leaves_of(src);
  Kokkos::View<int*, Kokkos::HostSpace> rank("rank", static_cast<std::size_t>(n));
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> row("row", static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    rank(i) = owner_rank_of(src, i, nranks);
    row(i) = rank(i) < 0 ? -1 : owner_row_of(src, i, rank(i));
  }
  return {Kokkos::create_mirror_view_and_copy(MemSpace(), rank), Kokkos::create_mirror_view_and_copy(MemSpace(), row)};
}

// (root row, leaf row value, key) of each entry of a batch, on the host. A named template:
// no KOKKOS_LAMBDA in a test body.
template <class Batch>
std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> entries(const Batch& b, std::int64_t first_key) {
  Kokkos::View<std::int64_t*, MemSpace> to("to", static_cast<std::size_t>(b.n)),
      from("from", static_cast<std::size_t>(b.n));
  const auto target = b.target_of_entry();
  const auto row_of = b.row_of;
  Kokkos::parallel_for(
      "test::entries", Kokkos::RangePolicy<ExecSpace>(0, b.n), KOKKOS_LAMBDA(const std::int64_t k) {
        to(k) = target(k);
        from(k) = row_of(k);
      });
  const auto h_to = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), to);
  const auto h_from = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), from);
  const std::vector<std::int64_t> values = b.rows.template to_vector<std::int64_t>();
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> out;
  for (std::int64_t k = 0; k < b.n; ++k)
    out.emplace_back(h_to(k), values[static_cast<std::size_t>(h_from(k))], first_key + k);
  return out;
}

TEST(Route, FetchBringsEachLeafItsRoot) {
  const Comm& comm = world();
  const int me = comm.rank(), p = comm.size();
  const Leaves leaves = make_leaves(me, p);
  const Route route = Route::build(comm, leaves.rank, leaves.row);
  std::vector<std::int64_t> roots;
  for (std::int64_t r = 0; r < roots_of(me); ++r) {
    roots.push_back(tag(me, r));
    roots.push_back(-tag(me, r));
  }
  const Tensor root_rows = Tensor::from_vector(DType::Int64, Shape{roots_of(me), 2}, roots);
  const Tensor out(DType::Int64, Shape{leaves_of(me), 2}, Init::Uninitialized);
  route.fetch(root_rows, 2).write(out);
  const std::vector<std::int64_t> got = out.to_vector<std::int64_t>();
  for (std::int64_t i = 0; i < leaves_of(me); ++i) {
    const int owner = owner_rank_of(me, i, p);
    const std::int64_t want = owner < 0 ? 0 : tag(owner, owner_row_of(me, i, owner));
    EXPECT_EQ(got[static_cast<std::size_t>(2 * i)], want) << "leaf " << i;
    EXPECT_EQ(got[static_cast<std::size_t>(2 * i + 1)], -want) << "leaf " << i;
  }
}

// Every root's writers in the order reduce must visit them: (segment, source rank, local
// order), the leaves of rank src split into segments at `split`.
std::map<std::int64_t, std::vector<std::int64_t>> expected_writers(int me, int p, bool segmented) {
  std::map<std::int64_t, std::vector<std::int64_t>> want;
  for (int seg = 0; seg < (segmented ? 2 : 1); ++seg) {
    for (int src = 0; src < p; ++src) {
      const std::int64_t n = leaves_of(src), split = segmented ? n / 3 : n;
      for (std::int64_t i = seg == 0 ? 0 : split; i < (seg == 0 ? split : n); ++i) {
        if (owner_rank_of(src, i, p) == me) want[owner_row_of(src, i, me)].push_back(tag(src, i));
      }
    }
  }
  return want;
}

void check_reduce(bool segmented) {
  const Comm& comm = world();
  const int me = comm.rank(), p = comm.size();
  const Leaves leaves = make_leaves(me, p);
  const std::int64_t n = leaves_of(me), split = segmented ? n / 3 : n;
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(tag(me, i));
  const Tensor all = Tensor::from_vector(DType::Int64, Shape{n, 1}, values);
  const std::vector<Tensor> segments =
      segmented ? std::vector<Tensor>{all.slice_rows(0, split), all.slice_rows(split, n)} : std::vector<Tensor>{all};
  const Route route =
      Route::build(comm, leaves.rank, leaves.row, RouteOptions(),
                   segmented ? std::vector<std::int64_t>{split, n - split} : std::vector<std::int64_t>{});
  const RootRows rows = route.reduce(segments, 1);
  std::map<std::int64_t, std::vector<std::int64_t>> got;
  std::int64_t last_key = -1;
  rows.for_each([&](const auto& batch, std::int64_t first_key) {
    for (const auto& [to, value, key] : entries(batch, first_key)) {
      EXPECT_GT(key, last_key);
      last_key = key;
      if (to >= 0) got[to].push_back(value);
    }
  });
  EXPECT_EQ(got, expected_writers(me, p, segmented));
  if (!segmented) {  // apply() hands over the same three batches in the same order
    std::map<std::int64_t, std::vector<std::int64_t>> applied;
    rows.apply([&](const auto&... batch) {
      const auto add = [&](const auto& b) {
        for (const auto& [to, value, key] : entries(b, 0)) applied[to].push_back(value);
      };
      (add(batch), ...);
    });
    EXPECT_EQ(applied, got);
  }
}

TEST(Route, ReduceVisitsEachRootsRowsInGlobalOrder) { check_reduce(false); }
TEST(Route, ReduceWithSegmentsOrdersBySegmentFirst) { check_reduce(true); }

TEST(Route, CollectBringsEveryRowOwnOnesIncluded) {
  const Comm& comm = world();
  const int me = comm.rank(), p = comm.size();
  const Leaves leaves = make_leaves(me, p);
  const Route route = Route::build(comm, leaves.rank, leaves.row);
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < leaves_of(me); ++i) values.push_back(tag(me, i));
  const CollectedRows all = route.collect(Tensor::from_vector(DType::Int64, Shape{leaves_of(me), 1}, values), 1);
  const std::vector<std::int64_t> rows = all.rows.to_vector<std::int64_t>(), to = all.targets.to_vector<std::int64_t>();
  std::map<std::int64_t, std::vector<std::int64_t>> got;
  for (std::size_t k = 0; k < rows.size(); ++k) got[to[k]].push_back(rows[k]);
  EXPECT_EQ(got, expected_writers(me, p, false));
}

TEST(Route, ReplicateOthersLeavesOutOwnBlock) {
  const Comm& comm = world();
  const int me = comm.rank(), p = comm.size();
  std::vector<std::int64_t> counts;
  for (int r = 0; r < p; ++r) counts.push_back(roots_of(r));
  const RowLayout layout(counts);
  std::vector<std::int64_t> block;
  for (std::int64_t i = 0; i < roots_of(me); ++i) block.push_back(tag(me, i));
  std::int64_t sent = -1;
  const Tensor others = replicate_others(comm, layout, Tensor::from_vector(DType::Int64, Shape{roots_of(me)}, block),
                                         RouteOptions(), &sent);
  std::vector<std::int64_t> want;
  for (int r = 0; r < p; ++r) {
    for (std::int64_t i = 0; r != me && i < roots_of(r); ++i) want.push_back(tag(r, i));
  }
  EXPECT_EQ(others.to_vector<std::int64_t>(), want);
  EXPECT_EQ(sent, roots_of(me) * 8 * (p - 1));
}

}  // namespace
}  // namespace shardops
