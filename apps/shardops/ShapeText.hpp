#pragma once
/// \file
/// \brief The text of an output shape on the command line (scatter-nd --shape).

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shardops {
namespace app {

/// The most dimensions an output can have: every output is an HDF5 dataset.
inline constexpr int kMaxDatasetRank = H5S_MAX_RANK;

/// \throws InvalidArgument ("WHAT: N dimensions, more than ...") if a shape of \p rank
/// dimensions cannot be written, so that it fails before any work, not at the write.
void check_dataset_rank(std::size_t rank, const std::string& what);

/// Parses "4,4,4" into dims (exact: no spaces, no empty items, integers only, at most
/// kMaxDatasetRank of them). \throws InvalidArgument naming the item that is wrong.
std::vector<std::int64_t> parse_shape(const std::string& text);

}  // namespace app
}  // namespace shardops
