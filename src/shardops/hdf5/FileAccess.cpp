#include "shardops/hdf5/FileAccess.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shardops/hdf5/FileSystem.hpp"

namespace shardops::io {

namespace {
// The serial driver without HDF5's own file lock (open_serial says why).
PropListHandle serial_file_access(const std::string& failure) {
  PropListHandle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), failure, ErrorKind::Internal));
  check_status(H5Pset_fapl_sec2(fapl.get()), failure, ErrorKind::Internal);
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7) || H5_VERSION_GE(1, 12, 1)
  check_status(H5Pset_file_locking(fapl.get(), false, true), failure, ErrorKind::Internal);
#endif
  return fapl;
}
}  // namespace

PropListHandle mpio_file_access(const Comm& comm, bool collective_reads) {
  quiet_hdf5();
  // One rank without MPI (Comm::self()): the serial driver, without HDF5's file lock as
  // MPI-IO takes none.
  if (comm.get() == MPI_COMM_NULL) return serial_file_access("a file access property list");
  PropListHandle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(H5P_FILE_ACCESS)", ErrorKind::Internal));
  check_status(H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL), "H5Pset_fapl_mpio", ErrorKind::Internal);
  check_status(H5Pset_coll_metadata_write(fapl.get(), true), "H5Pset_coll_metadata_write", ErrorKind::Internal);
  check_status(H5Pset_all_coll_metadata_ops(fapl.get(), collective_reads), "H5Pset_all_coll_metadata_ops",
               ErrorKind::Internal);
  return fapl;
}

namespace {
// Metadata of existing files (inputs, copies of an existing output) is read
// independently by every rank: with collective metadata reads rank 0 reads and
// broadcasts, and a corrupt object header that fails on rank 0 could leave the
// other ranks waiting in the broadcast. Files we create ourselves use them.
constexpr bool kCollectiveReadsOfExistingFiles = false;
constexpr bool kCollectiveReadsOfNewFiles = true;

FileHandle open_agreed(const Comm& comm, const std::string& path, unsigned flags, bool create, bool collective_reads,
                       const std::string& what, const std::string& failure) {
  PropListHandle fapl = mpio_file_access(comm, collective_reads);
  // A new file's root group lists its links in the order they were made (h5py's track_order).
  PropListHandle fcpl(check_id(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate(H5P_FILE_CREATE)", ErrorKind::Internal));
  check_status(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
               "H5Pset_link_creation_order", ErrorKind::Internal);
  // Decided together before the collective open: a rank that runs out of descriptors inside
  // MPI-IO's open leaves its file set up unlike the others', and the collective close of the
  // job's abort then waits without end (rank 0 holds more: the locks, journals and notes).
  struct rlimit limit {};
  static_cast<void>(::getrlimit(RLIMIT_NOFILE, &limit));
  // Each rank's descriptors left and its limit: the message names the rank short of them
  // and its own limit (ranks on other hosts may have other limits).
  const std::vector<std::int64_t> every =
      comm.allgather(std::vector<std::int64_t>{descriptors_left(), static_cast<std::int64_t>(limit.rlim_cur)});
  for (int r = 0; r < comm.size(); ++r) {
    const std::int64_t left = every[2 * static_cast<std::size_t>(r)];
    if (left >= kDescriptorsPerOpen) continue;
    throw IOError(what + ": cannot " + (create ? "create '" : "open '") + path + "': rank " + std::to_string(r) +
                  " has " + (left > 0 ? "only " + std::to_string(left) : std::string("no")) +
                  " file descriptors left, fewer than the " + std::to_string(kDescriptorsPerOpen) +
                  " an open takes (too many open files: its limit, `ulimit -n`, is " +
                  std::to_string(every[2 * static_cast<std::size_t>(r) + 1]) + ")");
  }
  FileHandle file;
  run_agreed(comm, [&] {
    const hid_t id =
        create ? H5Fcreate(path.c_str(), flags, fcpl.get(), fapl.get()) : H5Fopen(path.c_str(), flags, fapl.get());
    if (id < 0) {
      // Out of file descriptors, HDF5 and MPI-IO say only that the open failed.
      const std::string shortage = descriptor_shortage_text();
      if (shortage.empty()) throw IOError(with_hdf5_detail(what + ": " + failure));
      hdf5_error_detail();  // clears HDF5's error stack
      throw IOError(what + ": cannot " + (create ? "create '" : "open '") + path + "'" + shortage);
    }
    file = FileHandle(id);
  });
  return file;
}
}  // namespace

FileHandle open_input_file(const Comm& comm, const std::string& file, const std::string& what) {
  run_agreed(comm, [&] { check_input_file(file, what); });
  return open_agreed(comm, file, H5F_ACC_RDONLY, false, kCollectiveReadsOfExistingFiles, what,
                     "cannot open '" + file + "' as HDF5 (truncated or corrupt file?)");
}

FileHandle open_serial(const std::string& path, unsigned flags, const std::string& failure) {
  quiet_hdf5();
  const PropListHandle fapl = serial_file_access(failure);
  return FileHandle(check_id(H5Fopen(path.c_str(), flags, fapl.get()), failure));
}

PropListHandle serial_link_access() {
  const std::string failure = "an access property list for external links";
  const PropListHandle fapl = serial_file_access(failure);
  // A dataset access list is a link access list too: one for H5Dopen2 and the H5O/H5L calls.
  PropListHandle dapl(check_id(H5Pcreate(H5P_DATASET_ACCESS), failure, ErrorKind::Internal));
  check_status(H5Pset_elink_fapl(dapl.get(), fapl.get()), failure, ErrorKind::Internal);
  return dapl;
}

FileHandle create_output_file(const Comm& comm, const std::string& path, const std::string& what) {
  // Made here with the mode 0666, as h5py and NumPy make theirs, and then truncated by HDF5:
  // Open MPI creates a file with 0666 less the umask given as its mode, so in a folder with
  // a default ACL (where the kernel ignores the umask) the ACL's mask would come from the
  // umask (group r-- under 022) instead of from the folder's rules.
  run_agreed(comm, [&] {
    if (comm.rank() != 0) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
      throw IOError(what + ": cannot create the temporary output file '" + path + "': " + std::strerror(errno));
    ::close(fd);
  });
  return open_agreed(comm, path, H5F_ACC_TRUNC, true, kCollectiveReadsOfNewFiles, what,
                     "cannot create the temporary output file '" + path + "'");
}

FileHandle open_output_file(const Comm& comm, const std::string& path, const std::string& original,
                            const std::string& what) {
  return open_agreed(comm, path, H5F_ACC_RDWR, false, kCollectiveReadsOfExistingFiles, what,
                     "the existing output file '" + original +
                         "' cannot be opened as HDF5 (truncated or corrupt file?); it is left as it is");
}

}  // namespace shardops::io
