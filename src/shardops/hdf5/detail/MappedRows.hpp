#pragma once
/// \file
/// \brief Reading a block of rows by mapping the file's pages into the process.
///
/// A contiguous dataset stored exactly as it is held in memory is a run of bytes in the
/// file. On a local file system those bytes sit in the page cache once the file has been
/// read or written; copying them into a tensor means fresh pages, each of which the OS
/// zeroes and faults in first, and on many machines that costs more than the copy
/// itself. Mapping the pages instead (private, copy-on-write: the tensor can still be
/// written, and the file never is) makes them the tensor's memory, all mapped in one
/// call.
///
/// The caller maps only datasets whose bytes are their elements as held in memory, in one
/// place in the file (io::raw_extent). Where this is not done either (the caller then
/// reads with HDF5): network and parallel file systems (their page caches and readahead
/// differ; MPI-IO is tuned for them), blocks whose elements are not at their own
/// alignment in the file, and files shorter than the dataset claims (HDF5 reports those).
///
/// A file cut short by another program while it is mapped raises SIGBUS on the next
/// access of a page past its new end; StopSignals reports it (MappedRange).

#include <optional>
#include <string>

#include "shardops/core/Tensor.hpp"

namespace shardops::io::detail {

/// \brief A host tensor of \p dtype x \p shape over bytes [\p offset, \p offset + its
/// nbytes) of \p file, mapped copy-on-write; nothing when the file comment's conditions
/// are not met or the OS refuses (never throws). Not collective.
std::optional<Tensor> map_file_rows(const std::string& file, long long offset, DType dtype, const Shape& shape);

}  // namespace shardops::io::detail
