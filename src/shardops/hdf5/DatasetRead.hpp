#pragma once
/// \file
/// \brief Reading datasets: their dtype and shape, and a DistTensor of their rows.

#include <cstddef>
#include <list>
#include <string>
#include <utility>

#include "shardops/core/DType.hpp"
#include "shardops/core/RowRuns.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/core/StringPool.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/InputWatch.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops::io {

/// \brief What a dataset holds: the DType it is read as and its shape (rank 0 for
/// a scalar dataset; dims may be 0); for a string dataset also its string type.
struct DatasetInfo {
  DType dtype = DType::Float32;
  Shape shape;
  /// DType::String: variable or fixed length, width, charset (what the tensor's
  /// pool carries, so outputs keep the input's type). Default elsewhere.
  StringFormat strings;
};

/// \brief Collective: the dtype and shape of \p ref, without reading data.
/// \throws InvalidArgument if the file or the dataset does not exist, the path names
/// a group, or the HDF5 type is not supported; IOError if the file is not HDF5 or is
/// damaged. Every rank throws the same error.
DatasetInfo inspect(const Comm& comm, const DatasetRef& ref);

/// \brief How read_dataset() gets the bytes.
struct ReadOptions {
  /// Map the file's pages into the process where that can be done (see
  /// detail/MappedRows.hpp) instead of copying them: much cheaper for a file in the page
  /// cache. The tensor then reads the file's pages for as long as it lives: for a job that
  /// reads its inputs, runs and exits (the command line), not for a program that keeps
  /// tensors while files change (another program cutting the file short while it is
  /// mapped raises SIGBUS; the stop handlers of StopSignals.hpp report it as exit 3).
  bool map_file = false;
  /// Only datasets of at least this many bytes are mapped (a mapping each is not worth it
  /// for small ones).
  std::int64_t map_from_bytes = std::int64_t(1) << 20;
  /// Where the dataset is mapped, map all of its rows on every rank and attach them
  /// (DistTensor::replica), the rank's block being a part of them: for an input whose rows
  /// the op would otherwise move between the ranks (OpInfo::replicated_inputs). The ranks
  /// then share the file's cached pages instead of each receiving a copy. Nothing is
  /// attached where the dataset is read rather than mapped.
  bool replicate = false;
  /// Where set, only these rows of the rank's block (counted from its first row) are read
  /// where the rows are copied (not mapped; strings are read whole): an op that needs few
  /// rows of a large dataset (GatherNd's params, OpInfo::rows_read). The block's other rows
  /// are zeros, or the dataset's fill value where it has one.
  const RowRuns* only_rows = nullptr;
  /// Where given, set to how many rows of the rank's block were read: only_rows' where those
  /// alone were read, else all of them (the job's report counts the bytes read).
  std::int64_t* rows_read = nullptr;
};

/// \brief Collective: reads \p ref as a DistTensor, each rank its own block of rows
/// (one hyperslab, independent transfer: see RowTransfer.hpp for why; byte order and
/// type layout converted by HDF5).
///
/// A string dataset becomes a DType::String tensor whose pool on rank r is homed at r
/// and carries the dataset's StringFormat. Its rows are read round by round through
/// a staging buffer (see RowTransfer.hpp): variable-length strings HDF5 allocates are
/// copied out and reclaimed each round; fixed-length values lose their trailing NULs
/// (NumPy's rule: embedded NULs stay). Memory: the block's handles and string bytes
/// plus one round's buffer.
///
/// \param layout the row blocks to read; nullptr means RowLayout::balanced(dim 0).
///   A scalar dataset is read by rank 0 (DistTensor's scalar convention) and takes
///   no layout other than that.
/// \throws as inspect(); also InvalidArgument if \p layout does not fit the dataset
/// or a block needs more memory than is available (checked before allocating; for
/// strings, the handles and the staging buffer), and
/// IOError if reading fails. Every rank throws the same error.
DistTensor read_dataset(const Comm& comm, const DatasetRef& ref, const RowLayout* layout = nullptr,
                        const ReadOptions& options = {});

/// \brief The input files of a job that reads several datasets: a file is opened
/// (collectively, on first use) and kept open for the next dataset read from it, and all
/// are closed when this goes. At most kMaxOpen files are kept open, the least recently used
/// closed first: a stitch of a thousand partition files must not run out of the process's
/// file descriptors (`ulimit -n`). inspect() and read() are those above. Every rank must
/// make the same calls in the same order. Close it (end its scope) before the job writes
/// into one of these files.
///
/// Each file is watched (InputWatch) from before its first open: a file another program is
/// writing is not read, and read() fails (IOError, every rank) if the dataset was written
/// anew while its rows were read. Rows mapped from the file's pages (ReadOptions::map_file)
/// are read from the file until the tensor goes: the job checks those again before its
/// commit, through the \p watch it passes here and to its OutputTransaction
/// (OutputOptions::inputs).
class InputFiles {
 public:
  explicit InputFiles(const Comm& comm, InputWatch* watch = nullptr);
  ~InputFiles();
  InputFiles(const InputFiles&) = delete;
  InputFiles& operator=(const InputFiles&) = delete;

  DatasetInfo inspect(const DatasetRef& ref);
  DistTensor read(const DatasetRef& ref, const RowLayout* layout = nullptr, const ReadOptions& options = {});

 private:
  static constexpr std::size_t kMaxOpen = 32;
  using Open = std::list<std::pair<std::string, FileHandle>>;

  hid_t file(const DatasetRef& ref);
  Open::iterator find(const std::string& file);

  const Comm& comm_;
  InputWatch own_watch_;
  InputWatch* watch_;  ///< the job's, or own_watch_
  Open open_;          ///< by the file's name as given, the latest used first
};

}  // namespace shardops::io
