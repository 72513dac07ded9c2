#pragma once
/// \file
/// \brief Dataset names on the command line and in decks: `FILE:/path/to/dataset`.

#include <string>
#include <vector>

namespace shardops::io {

/// \brief A dataset inside an HDF5 file: the file's path and the absolute path of
/// the dataset inside it.
struct DatasetRef {
  std::string file;  ///< filesystem path, as given (relative paths are relative to the working directory)
  std::string path;  ///< absolute HDF5 path, "/group/dataset"; never "/" alone, no empty components

  /// The name as the user writes it: "FILE:/path".
  std::string str() const { return file + ":" + path; }

  friend bool operator==(const DatasetRef& a, const DatasetRef& b) { return a.file == b.file && a.path == b.path; }
  friend bool operator!=(const DatasetRef& a, const DatasetRef& b) { return !(a == b); }
};

/// \brief Parses "FILE:/path/to/dataset".
///
/// The name is split at the *last* ":/", so a file name may contain ':' (even ":/"),
/// while a dataset path cannot contain ":/". The dataset path must name something
/// below the root: no empty components ("//", a trailing '/'), no "." or "..".
/// \throws InvalidArgument naming \p name and what is wrong with it.
DatasetRef parse_dataset_ref(const std::string& name);

/// The components of an absolute HDF5 path: "/a/b/c" -> {"a", "b", "c"}.
std::vector<std::string> path_components(const std::string& path);

}  // namespace shardops::io
