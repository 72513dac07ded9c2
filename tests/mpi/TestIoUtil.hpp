#pragma once
/// \file
/// \brief Helpers of the HDF5 tests (TestHdf5*.cpp): a scratch directory per test,
/// the h5py helper script, file bytes, and what a call threw.
///
/// Every helper that touches the filesystem on one rank only is collective: rank 0
/// does the work, the others wait, so all ranks see the same files afterwards.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/Provenance.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops {
namespace test {

/// Collective: a fresh, empty directory for the running test, the same on every rank.
std::string io_test_dir();

/// Collective: runs TestHdf5Py.py with \p args under the Python that has h5py (rank 0
/// only) and returns its exit status on every rank.
int run_h5py_script(const std::vector<std::string>& args);

/// Collective and cached: whether that Python can import h5py and numpy.
bool have_h5py();

/// The bytes of \p path on this rank (empty if it cannot be read).
std::vector<unsigned char> file_bytes(const std::string& path);
/// Writes \p bytes to \p path (this rank only).
void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes);
/// Names of the entries of \p dir that look like shardops temporary files.
std::vector<std::string> temp_files_in(const std::string& dir);

/// What a call threw: exit_code 0 and "" if nothing; a shardops::Error's exit code
/// (1, 2, 3) and message; -1 for any other exception.
struct Caught {
  int exit_code = 0;
  std::string message;
};
Caught caught(const std::function<void()>& call);

/// Collective: writes \p tensor as \p target in its own transaction and commits,
/// with the provenance the h5py check expects.
void write_one(const io::DatasetRef& target, const DistTensor& tensor, bool overwrite = false);

/// The provenance the h5py check expects for a dataset of \p dtype at \p path.
io::Attributes roundtrip_provenance(const std::string& path, DType dtype);

/// "PATH DTYPE DIMS" as in TestHdf5Py.py's manifests.
std::string manifest_line(const std::string& path, DType dtype, const Shape& shape);
/// "expected/<path with / as _>.bin" relative to a manifest directory.
std::string expected_bin(const std::string& path);

}  // namespace test
}  // namespace shardops
