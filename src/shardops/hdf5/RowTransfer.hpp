#pragma once
/// \file
/// \brief Hyperslab transfer of each rank's block of rows between host memory and a
/// dataset: the one piece of code both reading and writing use.
///
/// Each rank selects rows [first, first + count) x all trailing dims of the file
/// dataspace (nothing when count is 0; the whole dataspace for the rank holding a
/// scalar). Writes use H5FD_MPIO_COLLECTIVE; reads H5FD_MPIO_INDEPENDENT, because
/// HDF5 1.10.8's collective chunk paths fail or hang on chunks that were never
/// written (which h5py leaves out and reads as the fill value), and an independent
/// read that fails on one rank leaves no other rank inside a collective MPI call.
/// A write round is two agreed steps (the selections, then the transfer), so no rank
/// enters a collective write that another rank will not reach. Large blocks move in
/// rounds of at most max_transfer_bytes() per rank, so no MPI-IO count overflows 32
/// bits; every rank takes part in every round (an empty selection when it has
/// nothing left).
///
/// transfer_rows_staged() moves rows that need converting (strings) through a host
/// buffer of one round's rows that it allocates itself: before each round of a write
/// its fill hook converts the round's elements into the buffer, after each round of a
/// read its drain hook converts them out (and release frees what HDF5 allocated for
/// variable-length data), so memory holds one round's buffer, never a whole block of
/// HDF5's representation.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "shardops/core/RowRuns.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops::io {

enum class Transfer { Read, Write };

/// \brief Counts \p rows_now rows of \p row_bytes as moved by this phase (the report's
/// bytes), and under -v prints a line at most once a second: \p rows_done of \p rows_total
/// of \p what. Not collective.
void note_transfer_progress(std::int64_t rows_done, std::int64_t rows_total, std::size_t row_bytes,
                            std::int64_t rows_now, Transfer direction, const std::string& what);

/// Bytes one rank moves per collective call (default 1 GiB).
std::size_t max_transfer_bytes() noexcept;

/// \brief Selects the rows [first, first + rows) of \p file_space (a dataset of \p shape,
/// rank >= 1) and \returns the memory dataspace of those rows, of the same shape: rows, then
/// the dataset's other dimensions. A flat memory space of as many elements would do, but
/// HDF5 1.10 then maps chunked data element by element (10-40 times slower).
DataspaceHandle select_rows(hid_t file_space, const Shape& shape, std::int64_t first, std::int64_t rows,
                            const std::string& what);
/// Changes max_transfer_bytes() (tests use a tiny value to exercise the rounds).
void set_max_transfer_bytes(std::size_t bytes) noexcept;

/// \brief Collective (every rank calls it): moves this rank's rows between \p buffer (host, row-major,
/// \p count rows of \p mem_type elements) and dataset \p dset of global \p shape.
/// \param first  global index of the first row (ignored for a scalar)
/// \param count  rows this rank holds (a scalar: 1 on its holder, 0 elsewhere)
/// \param what   the dataset's name (FILE:/path), for messages
/// \throws IOError (agreed on all ranks) if HDF5 fails.
void transfer_rows(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                   std::int64_t count, void* buffer, Transfer direction, const std::string& what);

/// \brief Collective: transfer_rows() of only the rows \p runs of this rank's block (rows
/// counted from its first, global row \p first); \p buffer holds the whole block, and its
/// other rows are left as they are. A round takes up to 128 runs at once (one HDF5 selection
/// of all of them), so that a chunk several runs touch is read, and decompressed, once.
void transfer_row_runs(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                       const RowRuns& runs, void* buffer, Transfer direction, const std::string& what);

/// \brief The hooks of transfer_rows_staged(). Elements are counted in this rank's
/// block, row-major: a round covers elements [first, first + n) of the block.
struct RowStaging {
  /// Write: converts elements [first, first + n) into \p buffer (n mem_type elements).
  std::function<void(unsigned char* buffer, std::int64_t first, std::int64_t n)> fill;
  /// Read: converts the n elements HDF5 read into \p buffer (elements [first, first + n)).
  std::function<void(const unsigned char* buffer, std::int64_t first, std::int64_t n)> drain;
  /// Read: frees what HDF5 allocated for the n elements in \p buffer (variable-length
  /// data); runs after drain, and also when the read or drain failed (must not throw then).
  std::function<void(unsigned char* buffer, std::int64_t n)> release;
  /// Read, optional: sets the n elements of \p buffer before HDF5 reads into it, for the
  /// places it may leave as they were (a fill value); unset, the buffer is zeroed.
  std::function<void(unsigned char* buffer, std::int64_t n)> clear;
};

/// \brief Collective: transfer_rows() through a staging buffer of one round's rows
/// (at most max_transfer_bytes() of mem_type elements, allocated here after an agreed
/// memory check) and \p staging's hooks. Hooks run inside agreed steps: an error in
/// one on any rank is raised on every rank. A read buffer is cleared before each round
/// (staging.clear, else zeros).
/// \throws IOError (agreed) if HDF5 fails; InvalidArgument if the buffer does not fit
/// in memory; whatever a hook throws.
void transfer_rows_staged(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                          std::int64_t count, const RowStaging& staging, Transfer direction, const std::string& what);

}  // namespace shardops::io
