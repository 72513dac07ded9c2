// libFuzzer target: opening an HDF5 file and mapping its datasets' types, shapes and
// filters the way every shardops input is opened (io::inspect: the MPI-IO open, the
// path lookup, the type map and string formats, the dataspace; then the filter and
// size checks read_dataset makes before it reads). The input is written to a file; a
// the datasets the seed files have are opened
// through shardops. A
// bad file must raise shardops::Error; anything else is a bug. The corpus is made with
// h5py (fuzz/make_hdf5_corpus.py). Decoding the data itself is HDF5's code, not
// shardops': see docs/limits.md for what fuzzing it found.
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "FuzzSetup.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/hdf5/DatasetRead.hpp"
#include "shardops/hdf5/Filters.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace {

// The dataset names the seed corpus uses (make_hdf5_corpus.py): the files are opened
// only through shardops, so every HDF5 call made is one shardops makes.
const char* const kNames[] = {"/x", "/vlen", "/fixed", "/g/h/x", "/link", "/g"};

std::string g_file;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  Kokkos::initialize();
  shardops::io::quiet_hdf5();
  shardops::fuzz::limit_memory();
  const char* dir = std::getenv("TMPDIR");
  g_file = std::string(dir && *dir ? dir : "/tmp") + "/shardops-fuzz-hdf5-" + std::to_string(::getpid()) + ".h5";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::FILE* f = std::fopen(g_file.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  const shardops::Comm comm(MPI_COMM_SELF);
  for (const std::string path : kNames) {
    try {
      const shardops::io::DatasetInfo info = shardops::io::inspect(comm, shardops::io::DatasetRef{g_file, path});
      shardops::tensor_bytes(info.shape, info.dtype, path);
      const shardops::io::FileHandle file(H5Fopen(g_file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
      const shardops::io::DatasetHandle dataset(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT));
      if (dataset.valid()) shardops::io::check_filters_available(dataset.get(), path);
    } catch (const shardops::Error&) {
    }
    H5Eclear2(H5E_DEFAULT);
  }
  std::remove(g_file.c_str());
  return 0;
}
