#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BucketSort.hpp"
#include "shardops/kernels/PieceList.hpp"

namespace {

// Row i's bucket: scattered over [0, buckets), every seventh row dropped (-1).
struct ScatteredBucket {
  std::int64_t buckets;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const {
    if (i % 7 == 3) return -1;
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(i) * 2654435761u >> 7) %
                                     static_cast<std::uint64_t>(buckets));
  }
};

// The row in each output slot after a bucket sort with the given interleave (a free
// function: no KOKKOS_LAMBDA inside a TEST body).
std::vector<std::int64_t> sorted_rows(std::int64_t n, std::int64_t buckets, std::int64_t interleave,
                                      std::vector<std::int64_t>& begin) {
  const shardops::ExecSpace space;
  const ScatteredBucket of{buckets};
  const auto layout = shardops::kernels::bucket_layout(space, n, buckets, of, "test::bucket_sort", interleave);
  Kokkos::View<std::int64_t*, shardops::MemSpace> row_of_slot("row_of_slot", static_cast<std::size_t>(layout.total));
  auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t s) { row_of_slot(s) = i; };
  shardops::kernels::bucket_place(space, layout, of, place, "test::bucket_sort");
  space.fence();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row_of_slot);
  const auto host_begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
  begin.assign(host_begin.data(), host_begin.data() + buckets + 1);
  return std::vector<std::int64_t>(host.data(), host.data() + layout.total);
}

// Entry k of a batch reads source row 3 k + 1 (a list of rows, not the entries' own).
struct EveryThirdRow {
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const { return 3 * k + 1; }
};

// A batch's entries listed by piece (a free function, as above): the source row and the
// target of each listed entry, and where each piece starts.
struct Listed {
  std::vector<std::int64_t> rows, targets, begin;
  std::int64_t skipped = 0;
};
Listed list_entries(std::int64_t n, std::int64_t targets, std::int64_t piece_rows) {
  const shardops::ExecSpace space;
  const ScatteredBucket target_of{targets};
  const auto list = shardops::kernels::list_by_piece(space, n, target_of, EveryThirdRow{}, 3 * n + 1, targets,
                                                     piece_rows, "test::piece_list");
  const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.rows);
  const auto listed_targets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.targets);
  Listed out;
  out.rows.assign(rows.data(), rows.data() + rows.extent(0));
  out.targets.assign(listed_targets.data(), listed_targets.data() + listed_targets.extent(0));
  out.begin.assign(list.begin.data(), list.begin.data() + list.begin.extent(0));
  out.skipped = list.skipped;
  return out;
}

// Row i's bucket read from memory, as a row's partition id is read from an input file's
// pages: any value, including ones beyond the buckets.
struct BucketFromMemory {
  Kokkos::View<const std::int64_t*, shardops::MemSpace> ids;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return ids(i); }
};

// What a bucket sort did when the buckets in memory changed from \p before to \p after
// between its two passes: how often each slot was placed, places outside the slots, and
// whether it failed with an IOError.
struct ChangedSort {
  std::vector<std::int64_t> hits;
  std::int64_t outside = 0;
  bool failed = false;
};
ChangedSort sort_changed_between_passes(const std::vector<std::int64_t>& before, const std::vector<std::int64_t>& after,
                                        std::int64_t buckets, std::int64_t interleave) {
  const shardops::ExecSpace space;
  const auto n = static_cast<std::int64_t>(before.size());
  Kokkos::View<std::int64_t*, shardops::MemSpace> ids("ids", before.size());
  const auto load = [&](const std::vector<std::int64_t>& values) {
    const Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
        values.data(), values.size());
    Kokkos::deep_copy(ids, host);
  };
  load(before);
  const BucketFromMemory of{ids};
  const auto layout = shardops::kernels::bucket_layout(space, n, buckets, of, "test::changed", interleave);
  load(after);
  const std::int64_t total = layout.total;
  Kokkos::View<std::int64_t*, shardops::MemSpace> hits("hits", static_cast<std::size_t>(total));
  Kokkos::View<std::int64_t, shardops::MemSpace> outside("outside");
  auto place = KOKKOS_LAMBDA(const std::int64_t, const std::int64_t s) {
    if (s < 0 || s >= total)
      Kokkos::atomic_add(&outside(), std::int64_t{1});
    else
      Kokkos::atomic_add(&hits(s), std::int64_t{1});
  };
  ChangedSort result;
  try {
    shardops::kernels::bucket_place(space, layout, of, place, "test::changed");
  } catch (const shardops::IOError&) {
    result.failed = true;
  }
  space.fence();
  const auto host_hits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hits);
  result.hits.assign(host_hits.data(), host_hits.data() + total);
  Kokkos::deep_copy(result.outside, outside);
  return result;
}

}  // namespace

TEST(PieceList, EntriesByPieceInTheirOrder) {
  // Targets scattered over [0, targets), every seventh entry without one: the entries of each
  // piece of target rows in entry order, piece after piece, with their source rows and their
  // targets counted from their piece's first row.
  for (const std::int64_t n : {0, 1, 20, 4099}) {
    for (const std::int64_t targets : {1, 10, 300}) {
      for (const std::int64_t piece_rows : {1, 7, 300}) {
        Listed expected;
        expected.begin.push_back(0);
        const ScatteredBucket target_of{targets};
        const std::int64_t pieces = (targets + piece_rows - 1) / piece_rows;
        for (std::int64_t p = 0; p < pieces; ++p) {
          for (std::int64_t k = 0; k < n; ++k) {
            const std::int64_t t = target_of(k);
            if (t < 0 || t / piece_rows != p) continue;
            expected.rows.push_back(3 * k + 1);
            expected.targets.push_back(t - p * piece_rows);  // counted from the piece's first row
          }
          expected.begin.push_back(static_cast<std::int64_t>(expected.rows.size()));
        }
        const Listed got = list_entries(n, targets, piece_rows);
        const std::string what = std::to_string(n) + " entries, " + std::to_string(targets) + " targets, pieces of " +
                                 std::to_string(piece_rows);
        EXPECT_EQ(got.rows, expected.rows) << what;
        EXPECT_EQ(got.targets, expected.targets) << what;
        EXPECT_EQ(got.begin, expected.begin) << what;
        EXPECT_EQ(got.skipped, n - static_cast<std::int64_t>(expected.rows.size())) << what;
      }
    }
  }
}

TEST(PieceList, NumbersRowsAndTargetsIn32Bits) {
  // The lists hold 32-bit integers: source rows and pieces of targets up to 2^32 - 1 are
  // listed, more refused before anything is allocated (the ops hold their output there
  // instead). The targets themselves may be more: they are counted within their piece.
  EXPECT_TRUE(shardops::kernels::fits_piece_list(shardops::kernels::kMaxListed32, shardops::kernels::kMaxListed32));
  EXPECT_FALSE(shardops::kernels::fits_piece_list(shardops::kernels::kMaxListed32 + 1, 1));
  EXPECT_FALSE(shardops::kernels::fits_piece_list(1, shardops::kernels::kMaxListed32 + 1));
  const shardops::ExecSpace space;
  EXPECT_THROW(shardops::kernels::list_by_piece(space, 1, ScatteredBucket{1}, EveryThirdRow{},
                                                shardops::kernels::kMaxListed32 + 1, 1, 1, "test::piece_list"),
               std::length_error);
}

TEST(BucketSort, StableAtEveryInterleave) {
  // Row counts that do and do not split evenly into chunks, with and without chunks
  // walked side by side: the rows of each bucket, in input order, bucket after bucket.
  for (const std::int64_t n : {0, 1, 5, 17, 64, 1000, 4099}) {
    for (const std::int64_t buckets : {1, 2, 3, 7, 300}) {
      std::vector<std::int64_t> expected, expected_begin(1, 0);
      const ScatteredBucket of{buckets};
      for (std::int64_t b = 0; b < buckets; ++b) {
        for (std::int64_t i = 0; i < n; ++i)
          if (of(i) == b) expected.push_back(i);
        expected_begin.push_back(static_cast<std::int64_t>(expected.size()));
      }
      for (const std::int64_t interleave : {1, 2, 4, 5}) {
        std::vector<std::int64_t> begin;
        EXPECT_EQ(sorted_rows(n, buckets, interleave, begin), expected)
            << n << " rows, " << buckets << " buckets, interleave " << interleave;
        EXPECT_EQ(begin, expected_begin) << n << " rows, " << buckets << " buckets, interleave " << interleave;
      }
    }
  }
}

TEST(BucketSort, BucketsThatChangeBetweenPassesFailWithinTheSlots) {
  // An input written while the job reads it: the second pass sees other buckets. The
  // placement writes no slot outside the layout nor any slot twice, and fails; where only
  // rows of one chunk swapped buckets (the counts still agree) it fills every slot once.
  const std::int64_t n = 1000, buckets = 4;
  std::vector<std::int64_t> first(n), moved(n), beyond(n), dropped(n), swapped(n);
  for (std::int64_t i = 0; i < n; ++i) {
    first[i] = i % buckets;
    moved[i] = i < n / 2 ? buckets - 1 : first[i];  // one bucket overfills, the others fall short
    beyond[i] = i % 5 == 0 ? buckets + 100 : first[i];
    dropped[i] = i % 5 == 0 ? -1 : first[i];
  }
  swapped = first;
  std::swap(swapped[0], swapped[1]);
  for (const std::int64_t interleave : {1, 4}) {
    for (const auto* after : {&moved, &beyond, &dropped}) {
      const ChangedSort sorted = sort_changed_between_passes(first, *after, buckets, interleave);
      EXPECT_TRUE(sorted.failed) << "interleave " << interleave;
      EXPECT_EQ(sorted.outside, 0) << "interleave " << interleave;
      for (const std::int64_t h : sorted.hits) EXPECT_LE(h, 1) << "interleave " << interleave;
    }
    const ChangedSort sorted = sort_changed_between_passes(first, swapped, buckets, interleave);
    EXPECT_FALSE(sorted.failed) << "interleave " << interleave;
    EXPECT_EQ(sorted.outside, 0);
    EXPECT_EQ(sorted.hits, std::vector<std::int64_t>(static_cast<std::size_t>(n), 1)) << "interleave " << interleave;
  }
  // A bucket beyond the buckets in both passes is dropped, as -1 is.
  const ChangedSort kept = sort_changed_between_passes(beyond, beyond, buckets, 1);
  EXPECT_FALSE(kept.failed);
  EXPECT_EQ(kept.hits.size(), static_cast<std::size_t>(n - n / 5));
}
