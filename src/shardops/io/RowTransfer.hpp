#pragma once
/// \file
/// \brief Collective hyperslab transfer of each rank's block of rows between host
/// memory and a dataset: the one piece of code both reading and writing use.
///
/// Each rank selects rows [first, first + count) x all trailing dims of the file
/// dataspace (nothing when count is 0; the whole dataspace for the rank holding a
/// scalar) and transfers with H5FD_MPIO_COLLECTIVE. Large blocks move in rounds
/// of at most max_transfer_bytes() per rank, so no MPI-IO count overflows 32 bits;
/// every rank takes part in every round (an empty selection when it has nothing
/// left).

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "shardops/core/Shape.hpp"
#include "shardops/dist/Comm.hpp"

namespace shardops::io {

enum class Transfer { Read, Write };

/// Bytes one rank moves per collective call (default 1 GiB).
std::size_t max_transfer_bytes() noexcept;
/// Changes max_transfer_bytes() (tests use a tiny value to exercise the rounds).
void set_max_transfer_bytes(std::size_t bytes) noexcept;

/// \brief Collective: moves this rank's rows between \p buffer (host, row-major,
/// \p count rows of \p mem_type elements) and dataset \p dset of global \p shape.
/// \param first  global index of the first row (ignored for a scalar)
/// \param count  rows this rank holds (a scalar: 1 on its holder, 0 elsewhere)
/// \param what   the dataset's name (FILE:/path), for messages
/// \throws IOError (agreed on all ranks) if HDF5 fails.
void transfer_rows(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                   std::int64_t count, void* buffer, Transfer direction, const std::string& what);

}  // namespace shardops::io
