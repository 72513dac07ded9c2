#pragma once
/// \file
/// \brief DynamicPartition on one shard: a stable bucket sort of rows by partition id.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BucketSort.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/RowCopy.hpp"

namespace shardops {
namespace kernels {

/// Partition id of row i, or -1 when out of [0, num_partitions).
template <class MemorySpace>
struct PartitionOf {
  FlatView<const std::int32_t, MemorySpace> ids;
  std::int32_t num_partitions;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const {
    const std::int32_t p = ids(i);
    return (p >= 0 && p < num_partitions) ? p : -1;
  }
};

/// Position of the first partition id outside [0, num_partitions), or -1.
template <class ExecSpace>
std::int64_t first_bad_partition(const ExecSpace& space,
                                 const FlatView<const std::int32_t, typename ExecSpace::memory_space>& ids,
                                 int num_partitions) {
  const PartitionOf<typename ExecSpace::memory_space> of{ids, num_partitions};
  auto bad = KOKKOS_LAMBDA(const std::int64_t i) { return of(i) < 0; };
  return first_where(space, static_cast<std::int64_t>(ids.extent(0)), bad, "shardops::DynamicPartition::validate");
}

/// Counts rows per partition; bucket_begin(p) is where partition p starts in the
/// grouped output. Rows with an out-of-range id are dropped.
template <class ExecSpace>
BucketLayout<typename ExecSpace::memory_space> partition_layout(
    const ExecSpace& space, const FlatView<const std::int32_t, typename ExecSpace::memory_space>& ids,
    int num_partitions) {
  const PartitionOf<typename ExecSpace::memory_space> of{ids, num_partitions};
  return bucket_layout(space, static_cast<std::int64_t>(ids.extent(0)), num_partitions, of,
                       "shardops::DynamicPartition");
}

/// \brief Copies the rows of \p data into \p out grouped by partition, each group in
/// input order (TF's stable order). \p out has layout.total rows.
template <class ExecSpace, class W>
void partition_rows(const ExecSpace& space, const BucketLayout<typename ExecSpace::memory_space>& layout,
                    const FlatView<const std::int32_t, typename ExecSpace::memory_space>& ids, int num_partitions,
                    const MatrixView<const W, typename ExecSpace::memory_space>& data,
                    const MatrixView<W, typename ExecSpace::memory_space>& out) {
  const std::int64_t words = static_cast<std::int64_t>(data.extent(1));
  if (words == 0 || layout.total == 0) return;
  const PartitionOf<typename ExecSpace::memory_space> of{ids, num_partitions};
  const W* src = data.data();
  W* dst = out.data();
  auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t slot) {
    copy_row(dst + slot * words, src + i * words, words);
  };
  bucket_place(space, layout, of, place, "shardops::DynamicPartition");
}

/// \brief The row numbers partition_rows() would copy, in its order: \p listed[slot] is
/// the row of \p ids that goes to \p slot (layout.total slots), so that the grouped rows
/// can be gathered later, a run of slots at a time. Consumes layout.cursor. \p Index holds
/// every row number of \p ids.
template <class ExecSpace, class Index>
void list_partition_rows(const ExecSpace& space, const BucketLayout<typename ExecSpace::memory_space>& layout,
                         const FlatView<const std::int32_t, typename ExecSpace::memory_space>& ids, int num_partitions,
                         Index* listed) {
  if (layout.total == 0) return;
  const PartitionOf<typename ExecSpace::memory_space> of{ids, num_partitions};
  auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t slot) { listed[slot] = static_cast<Index>(i); };
  bucket_place(space, layout, of, place, "shardops::DynamicPartition::list");
}

}  // namespace kernels
}  // namespace shardops
