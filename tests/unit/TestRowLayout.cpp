#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/route/RowLayout.hpp"

namespace {

using shardops::OwnerOf;
using shardops::RowLayout;

// The device lookup of every row in [0, total), copied back to the host (a free
// function: no KOKKOS_LAMBDA inside a TEST body).
std::vector<int> device_owners(const OwnerOf& owner, std::int64_t total) {
  Kokkos::View<int*, shardops::MemSpace> out("owners", static_cast<std::size_t>(total));
  Kokkos::parallel_for(
      "device_owners", Kokkos::RangePolicy<shardops::ExecSpace>(0, total),
      KOKKOS_LAMBDA(const std::int64_t row) { out(row) = owner(row); });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  return std::vector<int>(host.data(), host.data() + total);
}

// Every row's owner on the device equals the host's search of the offsets.
void expect_device_owner_matches(const RowLayout& layout) {
  const std::vector<int> got = device_owners(layout.device_owner(), layout.total());
  for (std::int64_t row = 0; row < layout.total(); ++row) {
    ASSERT_EQ(got[static_cast<std::size_t>(row)], layout.owner(row))
        << "row " << row << " of " << layout.total() << " on " << layout.nranks() << " ranks";
  }
}

}  // namespace

TEST(RowLayout, BalancedOwnerMatchesOffsets) {
  // Even and uneven splits (the first total % nranks ranks hold one more row), and
  // fewer rows than ranks; up to 33 ranks by the span table, 3000 by arithmetic (more
  // spans than the table holds).
  for (int nranks : {1, 2, 3, 4, 7, 16, 33, 3000}) {
    for (std::int64_t total : {0, 1, 2, 5, 16, 17, 100, 1000, 4099, 65537}) {
      expect_device_owner_matches(RowLayout::balanced(total, nranks));
    }
  }
}

TEST(RowLayout, RaggedOwnerMatchesOffsets) {
  // By the span table (empty blocks between, before and after the others)...
  expect_device_owner_matches(RowLayout(std::vector<std::int64_t>{3, 0, 10, 1, 0, 7}));
  expect_device_owner_matches(RowLayout(std::vector<std::int64_t>{0, 0, 5}));
  expect_device_owner_matches(RowLayout(std::vector<std::int64_t>{0, 4, 0, 0, 9, 4, 0}));
  expect_device_owner_matches(RowLayout(std::vector<std::int64_t>{1000, 1000, 999, 1, 1000}));
  expect_device_owner_matches(RowLayout::on_rank(9, 4, 2));
  // ... and by the search: one block of one row against more rows than the table's spans.
  expect_device_owner_matches(RowLayout(std::vector<std::int64_t>{2, 5000, 1, 0, 100}));
}

TEST(RowLayout, BalancedOwnerOfLargeRowNumbers) {
  // Row numbers past 2^40, around 2^52 (where the reciprocal's estimate stops being
  // exact to one) and past it: the first and last row of each block. 3000 ranks take the
  // reciprocal (more spans than the table holds), the others the span table.
  for (const std::int64_t total : {(std::int64_t(1) << 41) + 12345, (std::int64_t(1) << 52) + 7,
                                   (std::int64_t(1) << 52) * 3 + 1, (std::int64_t(1) << 60) + 5}) {
    for (int nranks : {3, 7, 1000, 3000}) {
      const RowLayout layout = RowLayout::balanced(total, nranks);
      const OwnerOf owner = layout.device_owner();
      for (int r = 0; r < nranks; r += (nranks > 10 ? 97 : 1)) {
        for (std::int64_t row : {layout.offset(r), layout.offset(r) + layout.count(r) - 1}) {
          EXPECT_EQ(owner(row), r) << "row " << row << " of " << total;
        }
      }
    }
  }
}
