#pragma once
/// \file
/// \brief Opening and creating HDF5 files: with the MPI-IO driver on a Comm, or by one
/// process alone (open_serial).
///
/// Every function on a Comm is collective over it and agreed: when a step fails
/// on any rank, every rank throws the same error (never a hang, never a rank left
/// holding an open file the others closed).

#include <string>

#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops::io {

/// \brief A file access property list for the MPI-IO driver on \p comm, with
/// collective metadata writes, and collective metadata reads if \p collective_reads; for a
/// Comm without MPI (Comm::self(), a job of one rank), HDF5's serial driver, as open_serial's.
PropListHandle mpio_file_access(const Comm& comm, bool collective_reads);

/// \brief Collective: opens an input file read-only (inputs are never opened for
/// writing). Each rank first checks the file (check_input_file), then all open it
/// together. \p what names the dataset being read, for messages.
/// \throws InvalidArgument if the file does not exist; IOError if it is not a
/// readable HDF5 file (not HDF5, truncated, corrupt).
FileHandle open_input_file(const Comm& comm, const std::string& file, const std::string& what);

/// \brief Not collective: opens \p path with \p flags in this process alone (the serial
/// driver), without HDF5's own file lock, as the MPI-IO driver takes none (and some
/// parallel file systems refuse locks): the job's own new file, a virtual dataset's file
/// (HDF5 1.10 reads those through no other driver), `shardops ls`.
/// \throws IOError \p failure, with HDF5's detail.
FileHandle open_serial(const std::string& path, unsigned flags, const std::string& failure);

/// \brief An access list for objects of a file open_serial opened (links and datasets):
/// the files their external links lead to are opened as open_serial opens them. Left to
/// HDF5, it opens them with its own file locking on, and a file already open without it
/// (an external link into the same file) then cannot be opened through the link.
PropListHandle serial_link_access();

/// \brief Collective: creates the new file \p path (fails if it exists) for writing.
/// \throws IOError naming \p what.
FileHandle create_output_file(const Comm& comm, const std::string& path, const std::string& what);

/// \brief Collective: reopens the job's own new file \p path (beside the target
/// \p original) for writing; never a user's file.
/// \throws IOError naming \p what and \p original.
FileHandle open_output_file(const Comm& comm, const std::string& path, const std::string& original,
                            const std::string& what);

}  // namespace shardops::io
