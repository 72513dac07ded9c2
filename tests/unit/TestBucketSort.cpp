#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BucketSort.hpp"

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

}  // namespace

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
