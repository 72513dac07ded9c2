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

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "shardops/core/Tensor.hpp"

namespace shardops::io::detail {

/// \brief A host tensor of \p dtype x \p shape over bytes [\p offset, \p offset + its
/// nbytes) of \p file, mapped copy-on-write; nothing when the file comment's conditions
/// are not met or the OS refuses (never throws). Not collective.
std::optional<Tensor> map_file_rows(const std::string& file, long long offset, DType dtype, const Shape& shape);

/// \brief Bytes [\p offset, \p offset + \p bytes) of the open file \p fd (named \p file in
/// messages) mapped shared, for an output's rows to be made where they are written: what is
/// stored there reaches the file (the page cache) and its disk blocks, with nothing copied.
/// The caller must have reserved the range on disk (fallocate) and extended the file over
/// it, so that no page of it needs space when it is first written; it then writes its
/// own bytes only (the pages at the ends may hold other ranks' rows or HDF5's metadata). Only
/// on file systems whose fallocate reserves the blocks those pages are written to (ext4,
/// xfs, tmpfs): not on copy-on-write ones, network or parallel ones. A SIGBUS in the range
/// ends the job with its file named (StopSignals, MappedUse::OutputRows). Unmapped when the
/// last owner goes; nullptr where it is not done or the OS refuses (never throws).
std::shared_ptr<unsigned char> map_file_for_writing(int fd, long long offset, std::size_t bytes,
                                                    const std::string& file);

}  // namespace shardops::io::detail
