#pragma once
/// \file
/// \brief What `shardops ls` shows: the datasets below a group of a file, with what a user
/// checks before naming them as inputs (shape, TF dtype, chunks, filters, attributes).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardops::io {

/// One dataset found by list_datasets().
struct DatasetListing {
  std::string path;                  ///< absolute, "/group/name"
  std::vector<std::int64_t> shape;   ///< empty for a scalar
  std::string dtype;                 ///< TF's Python name ("float32", "string"), or "unsupported (HDF5 class)"
  std::vector<std::int64_t> chunks;  ///< empty when not chunked
  std::vector<std::string> filters;  ///< HDF5's names, in pipeline order
  std::vector<std::pair<std::string, std::string>> attributes;  ///< name, value as text (when asked)
  std::string comment;  ///< the dataset's HDF5 comment (when attributes are asked for)
  std::string link;     ///< for a dataset reached through a soft or external link: "external link to 'F:/x'"
  std::string problem;  ///< instead of a dataset's shape: why it cannot be opened, or that a link leads to a group
};

/// \brief Every dataset at or below \p path in \p file (a dataset path lists that one), in
/// the order h5py lists them (creation order where tracked, else by name), then the soft
/// and external links there that lead to a dataset (a detector's master file reaches its
/// data through external links) or to a group (listed, not walked), each with its link. Serial: one
/// process opens the file read-only. \throws InvalidArgument if the file or the path does
/// not exist; IOError if the file is not HDF5 or damaged.
std::vector<DatasetListing> list_datasets(const std::string& file, const std::string& path, bool attributes);

/// \brief The datasets of a partition group: where \p path in \p file is a group, the length
/// N of its run of members named 0, 1, …, N-1 (as dynamic-partition writes its outputs;
/// members with other names, "07" among them, are not counted); std::nullopt where \p path is
/// not a group, or cannot be looked at (reading it as a dataset says why). Serial.
/// \throws InvalidArgument naming \p what where the group has no member "0", or has numbered
/// members past a gap in the run.
std::optional<std::int64_t> partition_group_size(const std::string& file, const std::string& path,
                                                 const std::string& what);

}  // namespace shardops::io
