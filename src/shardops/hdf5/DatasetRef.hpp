#pragma once
/// \file
/// \brief Dataset names on the command line and in decks: `FILE:/path/to/dataset`.

#include <cstdint>
#include <string>
#include <vector>

namespace shardops::io {

/// \brief A dataset inside an HDF5 file: the file's path and the absolute path of
/// the dataset inside it.
struct DatasetRef {
  std::string file;  ///< filesystem path, as given (relative paths are relative to the working directory)
  std::string path;  ///< absolute HDF5 path, "/group/dataset"; never "/" alone, no empty components
  /// Rows of axis 0 to read, as written after the path ("[start:stop]", NumPy's rules:
  /// either bound may be left out, a negative one counts from the end); "" for all rows.
  std::string rows = {};

  /// The name as the user writes it: "FILE:/path" (and "[start:stop]").
  std::string str() const { return file + ":" + path + rows; }

  friend bool operator==(const DatasetRef& a, const DatasetRef& b) {
    return a.file == b.file && a.path == b.path && a.rows == b.rows;
  }
  friend bool operator!=(const DatasetRef& a, const DatasetRef& b) { return !(a == b); }
};

/// \brief Parses "FILE:/path/to/dataset".
///
/// The name is split at the *last* ":/", so a file name may contain ':' (even ":/"),
/// while a dataset path cannot contain ":/". The dataset path must name something
/// below the root: no empty components ("//", a trailing '/'), no "." or "..".
/// A name may end in "[start:stop]" (rows of axis 0; see DatasetRef::rows): only a slice
/// of axis 0 without a step is taken, anything else in brackets is an error.
/// \throws InvalidArgument naming \p name and what is wrong with it.
DatasetRef parse_dataset_ref(const std::string& name);

/// \brief The rows [first, first + count) that \p ref.rows selects from a dataset with
/// \p rows rows (NumPy's rules for omitted and negative bounds; stop before start
/// selects nothing). \throws InvalidArgument naming \p ref if a bound lies outside
/// [-rows, rows].
struct RowRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
RowRange resolve_rows(const DatasetRef& ref, std::int64_t rows);

/// The components of an absolute HDF5 path: "/a/b/c" -> {"a", "b", "c"}.
std::vector<std::string> path_components(const std::string& path);

}  // namespace shardops::io
