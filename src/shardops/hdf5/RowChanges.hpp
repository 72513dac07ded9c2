#pragma once
/// \file
/// \brief The rows of an output that differ from those of the dataset it replaces, found
/// by comparing them, so that a replacement of a dataset by one of the same shape and type
/// (an --overwrite of a tensor with a few rows scattered into it) writes those rows only.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardops/core/RowRuns.hpp"
#include "shardops/route/LazyTensor.hpp"

namespace shardops::io {

/// \brief Rank 0, an existing file open for writing: where the rows of the dataset \p path
/// of \p file begin, if an output of \p shape and \p dtype that replaces it can change its
/// rows instead: a contiguous dataset of that shape, stored in that dtype's file type as
/// the job would write it (the bytes of its rows those of the output's), with one name (a
/// dataset reached by two hard links keeps the old rows under the other name), wholly
/// below \p original_length (the file's length before the job). -1 where not. Never throws.
long long row_changeable_offset(hid_t file, const std::string& path, const Shape& shape, DType dtype,
                                long long original_length) noexcept;

/// \brief Deletes every attribute of \p object: a dataset changed in place ends with the
/// attributes of the one that would have replaced it. \throws IOError naming \p what.
void remove_attributes(hid_t object, const std::string& what);

/// The runs of a rank's rows (local row numbers) that differ, in order.
struct ChangedRows {
  RowRuns runs;
  std::int64_t differ = 0;  ///< rows that differ (the runs also hold rows between them)
  bool over = false;        ///< stopped early: more than the limits allowed
};

/// Rows changed closer than this many bytes apart are written as one run, the rows between
/// them too (the same bytes again): a run costs a journal record and a write of its own.
inline constexpr std::size_t kRunGapBytes = std::size_t(4) << 10;

/// \brief Local: compares this rank's rows of \p tensor (held, or made a piece at a time)
/// with the rows of the dataset whose row 0 lies at byte \p dataset_offset of the file open
/// as \p fd (the same shape and byte layout), and returns the runs that differ. Stops, with
/// `over`, once \p cost(bytes, runs) of the runs found passes \p limit, or once more than
/// half of the rows compared differ (a piece at a time). \p making: the
/// seconds spent making rows. \throws IOError naming \p what if the file cannot be read.
ChangedRows find_changed_rows(const LazyTensor& tensor, int fd, long long dataset_offset,
                              const std::function<std::int64_t(std::int64_t, std::int64_t)>& cost, std::int64_t limit,
                              double& making, const std::string& what);

/// \brief Local: the bytes of \p changes' rows of \p tensor, each run after its global first
/// row and row count (two int64), for gather_changes() and for_each_changed_run().
std::string pack_changed_rows(const LazyTensor& tensor, const ChangedRows& changes);

/// \brief Calls \p f(global first row, rows, bytes) for every run that pack_changed_rows()
/// put in \p packed (\p row_bytes a row). \throws InternalError if \p packed is not whole.
void for_each_changed_run(const std::string& packed, std::size_t row_bytes,
                          const std::function<void(std::int64_t, std::int64_t, const unsigned char*)>& f);

}  // namespace shardops::io
