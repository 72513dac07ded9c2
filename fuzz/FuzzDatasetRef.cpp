// libFuzzer target: dataset names (FILE:/path, hdf5/DatasetRef.cpp). A name either is
// refused with shardops::Error or parses into a file and a path that name it again:
// str() of the result parses to the same file and path.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/DatasetRef.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  shardops::io::DatasetRef ref;
  try {
    ref = shardops::io::parse_dataset_ref(name);
  } catch (const shardops::Error&) {
    return 0;
  }
  if (ref.file.empty() || ref.path.empty() || ref.path[0] != '/') std::abort();
  const shardops::io::DatasetRef again = shardops::io::parse_dataset_ref(ref.str());
  if (again.file != ref.file || again.path != ref.path) std::abort();
  return 0;
}
