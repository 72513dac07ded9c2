#include "shardops/hdf5/RowTransfer.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "shardops/core/Progress.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/hdf5/CollectiveAgreement.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

namespace {
std::atomic<std::size_t> g_max_transfer_bytes{std::size_t(1) << 30};

// One round's selections: this rank's rows [first, first + rows) of the file (or the
// scalar when whole_scalar) and as many elements of memory.
struct RoundSelection {
  DataspaceHandle file_space;
  DataspaceHandle mem_space;
};

}  // namespace

DataspaceHandle select_rows(hid_t file_space, const Shape& shape, std::int64_t first, std::int64_t rows,
                            const std::string& what) {
  std::vector<hsize_t> start(static_cast<std::size_t>(shape.rank()), 0), count(start.size());
  start[0] = static_cast<hsize_t>(first);
  count[0] = static_cast<hsize_t>(rows);
  for (int d = 1; d < shape.rank(); ++d) count[static_cast<std::size_t>(d)] = static_cast<hsize_t>(shape.dim(d));
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
               what + ": cannot select rows [" + std::to_string(first) + ", " + std::to_string(first + rows) + ")");
  return DataspaceHandle(
      check_id(H5Screate_simple(shape.rank(), count.data(), nullptr), what + ": cannot create a dataspace"));
}

namespace {

// The rows \p pieces (of the block starting at global row \p first, rank >= 1) selected
// in \p file_space; returns the memory space of the rows from the first piece's start to
// the last one's end, with the same pieces selected in it.
DataspaceHandle select_pieces(hid_t file_space, const Shape& shape, std::int64_t first, const RowRuns& pieces,
                              const std::string& what) {
  const RowRun& one = pieces.front();
  if (pieces.size() == 1) return select_rows(file_space, shape, first + one.first, one.end - one.first, what);
  const std::int64_t base = one.first;
  std::vector<hsize_t> start(static_cast<std::size_t>(shape.rank()), 0), count(start.size()), span(start.size());
  for (int d = 1; d < shape.rank(); ++d)
    count[static_cast<std::size_t>(d)] = span[static_cast<std::size_t>(d)] = static_cast<hsize_t>(shape.dim(d));
  span[0] = static_cast<hsize_t>(pieces.back().end - base);
  DataspaceHandle mem(
      check_id(H5Screate_simple(shape.rank(), span.data(), nullptr), what + ": cannot create a dataspace"));
  for (const RowRun& p : pieces) {
    const H5S_seloper_t op = &p == &one ? H5S_SELECT_SET : H5S_SELECT_OR;
    count[0] = static_cast<hsize_t>(p.end - p.first);
    start[0] = static_cast<hsize_t>(first + p.first);
    check_status(
        H5Sselect_hyperslab(file_space, op, start.data(), nullptr, count.data(), nullptr),
        what + ": cannot select rows [" + std::to_string(first + p.first) + ", " + std::to_string(first + p.end) + ")");
    start[0] = static_cast<hsize_t>(p.first - base);
    check_status(H5Sselect_hyperslab(mem.get(), op, start.data(), nullptr, count.data(), nullptr),
                 what + ": cannot select rows in memory");
  }
  return mem;
}

// One round's selections: \p pieces of the block starting at row \p first (none: an empty
// selection), or the scalar when whole_scalar.
RoundSelection select_round(hid_t dset, const Shape& shape, std::int64_t first, const RowRuns& pieces,
                            bool whole_scalar, const std::string& what) {
  RoundSelection sel;
  sel.file_space = DataspaceHandle(check_id(H5Dget_space(dset), what + ": cannot get the dataspace"));
  const bool any = shape.rank() == 0 ? whole_scalar : !pieces.empty() && shape.product_from(1) > 0;
  if (any && shape.rank() > 0) {
    sel.mem_space = select_pieces(sel.file_space.get(), shape, first, pieces, what);
    return sel;
  }
  const hsize_t one = 1;
  sel.mem_space = DataspaceHandle(check_id(H5Screate_simple(1, &one, nullptr), what + ": cannot create a dataspace"));
  if (!any) {
    check_status(H5Sselect_none(sel.file_space.get()), what + ": H5Sselect_none");
    check_status(H5Sselect_none(sel.mem_space.get()), what + ": H5Sselect_none");
  }
  return sel;
}

// \p rows from \p first: the span of the round's \p pieces.
void transfer_round(hid_t dset, hid_t mem_type, hid_t dxpl, const RoundSelection& sel, const Shape& shape,
                    std::int64_t first, std::int64_t rows, const RowRuns& pieces, void* buffer, Transfer direction,
                    const std::string& what) {
  const herr_t status = direction == Transfer::Read
                            ? H5Dread(dset, mem_type, sel.mem_space.get(), sel.file_space.get(), dxpl, buffer)
                            : H5Dwrite(dset, mem_type, sel.mem_space.get(), sel.file_space.get(), dxpl, buffer);
  if (status < 0) {
    const std::string span = "[" + std::to_string(first) + ", " + std::to_string(first + rows) + ")";
    const std::string rows_text = shape.rank() == 0    ? std::string("the scalar")
                                  : pieces.size() <= 1 ? "rows " + span
                                                       : std::to_string(rows_in(pieces)) + " of the rows " + span;
    if (direction == Transfer::Read) throw IOError(with_hdf5_detail(what + ": reading " + rows_text + " failed"));
    throw IOError(with_hdf5_detail(what + ": writing " + rows_text + " failed") + file_size_limit_text());
  }
}

// One round: \p pieces of the block that starts at global row \p first, between the
// dataset and \p buffer (the block's first row). A write is two agreed steps: the
// selections are made (and their failures agreed) before any rank enters H5Dwrite, because
// a collective write that one rank never reaches leaves the others waiting inside MPI-IO,
// where no agreement can reach them. An independent read needs no other rank, so one
// agreed step does both.
void run_round(const Comm& comm, hid_t dset, hid_t mem_type, hid_t dxpl, const Shape& shape, std::int64_t first,
               const RowRuns& pieces, unsigned char* buffer, std::size_t row_bytes, Transfer direction,
               const std::string& what) {
  RoundSelection sel;
  const std::int64_t base = pieces.empty() ? 0 : pieces.front().first;
  const std::int64_t span = pieces.empty() ? 0 : pieces.back().end - base;
  auto select = [&] { sel = select_round(dset, shape, first, pieces, shape.rank() == 0 && span > 0, what); };
  auto transfer = [&] {
    transfer_round(dset, mem_type, dxpl, sel, shape, first + base, span, pieces,
                   buffer + static_cast<std::size_t>(base) * row_bytes, direction, what);
  };
  if (direction == Transfer::Read) {
    run_agreed(comm, [&] {
      select();
      transfer();
    });
  } else {
    run_agreed(comm, select);
    run_agreed_collective_io(comm, transfer);
  }
}

}  // namespace

std::size_t max_transfer_bytes() noexcept { return g_max_transfer_bytes.load(); }

void set_max_transfer_bytes(std::size_t bytes) noexcept { g_max_transfer_bytes.store(bytes > 0 ? bytes : 1); }

namespace {

// Reads are independent, writes collective. HDF5 1.10.8's collective chunk paths
// hand chunks that were never written (address undefined: h5py leaves them out and
// they read as the fill value) to MPI-IO: MPI_ERR_TYPE, "addr overflow" for filtered
// data, or ranks that wait in MPI_File_set_view for one that failed. Independent reads
// take the serial chunk path (fill values included) and make no collective call, so a
// failure on one rank is agreed afterwards; for contiguous data they read as fast.
// Writes stay collective: that is what HDF5 requires for filtered (chunked) outputs.
H5FD_mpio_xfer_t transfer_mode(Transfer direction) {
  return direction == Transfer::Read ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE;
}

// Pieces one round selects at most. HDF5 1.10 merges each piece OR'd into a selection with
// all the pieces before it (its span tree), so a selection of n pieces costs n^2: seconds for
// ten thousand. Rounds of a few pieces cost an agreement each instead.
constexpr std::size_t kMaxPiecesPerRound = 128;

// \p runs cut into rounds of at most \p rows_per_round rows and kMaxPiecesPerRound pieces
// each, in order.
std::vector<RowRuns> rounds_of(const RowRuns& runs, std::int64_t rows_per_round) {
  std::vector<RowRuns> rounds;
  std::int64_t in_round = rows_per_round;
  for (RowRun run : runs) {
    while (run.first < run.end) {
      if (in_round == rows_per_round || rounds.back().size() == kMaxPiecesPerRound) {
        rounds.emplace_back();
        in_round = 0;
      }
      const std::int64_t take = std::min(run.end - run.first, rows_per_round - in_round);
      rounds.back().push_back({run.first, run.first + take});
      in_round += take;
      run.first += take;
    }
  }
  return rounds;
}

// The rounds of one rank's transfer: a dxpl and how many rows go per round.
struct RoundPlan {
  PropListHandle dxpl;
  std::int64_t rows_per_round = 1;
  std::int64_t rounds = 0;    // agreed: the most any rank needs
  std::size_t row_bytes = 0;  // in memory
  std::int64_t row_elements = 1;
};

// \p runs given, their rounds go to \p rounds (count: their rows).
RoundPlan plan_rounds(const Comm& comm, hid_t mem_type, const Shape& shape, std::int64_t count, Transfer direction,
                      const std::string& what, const RowRuns* runs = nullptr, std::vector<RowRuns>* rounds = nullptr) {
  RoundPlan plan;
  std::int64_t local_rounds = 0;
  run_agreed(comm, [&] {
    plan.dxpl =
        PropListHandle(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(H5P_DATASET_XFER)", ErrorKind::Internal));
    // A file of one rank without MPI has the serial driver, which takes no MPI-IO mode.
    if (comm.get() != MPI_COMM_NULL)
      check_status(H5Pset_dxpl_mpio(plan.dxpl.get(), transfer_mode(direction)), "H5Pset_dxpl_mpio",
                   ErrorKind::Internal);
    const std::size_t elem = H5Tget_size(mem_type);
    if (elem == 0) throw InternalError(with_hdf5_detail(what + ": memory type has no size"));
    plan.row_elements = shape.rank() == 0 ? 1 : shape.product_from(1);
    plan.row_bytes = elem * static_cast<std::size_t>(plan.row_elements);
    if (plan.row_bytes > 0 && count > 0) {
      plan.rows_per_round = static_cast<std::int64_t>(std::max<std::size_t>(1, max_transfer_bytes() / plan.row_bytes));
      local_rounds = (count + plan.rows_per_round - 1) / plan.rows_per_round;
      if (runs != nullptr) {
        *rounds = rounds_of(*runs, plan.rows_per_round);
        local_rounds = static_cast<std::int64_t>(rounds->size());
      }
    }
  });
  plan.rounds = comm.max(local_rounds);
  return plan;
}

}  // namespace

void note_transfer_progress(std::int64_t rows_done, std::int64_t rows_total, std::size_t row_bytes,
                            std::int64_t rows_now, Transfer direction, const std::string& what) {
  progress_count(rows_now * static_cast<std::int64_t>(row_bytes));
  if (!progress_on()) return;
  const std::string label = (direction == Transfer::Read ? "reading " : "writing ") + what;
  progress_bytes(label.c_str(), rows_done * static_cast<std::int64_t>(row_bytes),
                 rows_total * static_cast<std::int64_t>(row_bytes));
}

void transfer_rows(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                   std::int64_t count, void* buffer, Transfer direction, const std::string& what) {
  transfer_row_runs(comm, dset, mem_type, shape, first, count > 0 ? RowRuns{{0, count}} : RowRuns{}, buffer, direction,
                    what);
}

void transfer_row_runs(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                       const RowRuns& runs, void* buffer, Transfer direction, const std::string& what) {
  const std::int64_t count = rows_in(runs);
  std::vector<RowRuns> rounds;
  const RoundPlan plan = plan_rounds(comm, mem_type, shape, count, direction, what, &runs, &rounds);
  // HDF5 wants a buffer even for an empty selection.
  unsigned char dummy = 0;
  auto* bytes = buffer != nullptr ? static_cast<unsigned char*>(buffer) : &dummy;
  std::int64_t done = 0;
  for (std::int64_t round = 0; round < plan.rounds; ++round) {
    const RowRuns none;
    const RowRuns& pieces =
        static_cast<std::size_t>(round) < rounds.size() ? rounds[static_cast<std::size_t>(round)] : none;
    run_round(comm, dset, mem_type, plan.dxpl.get(), shape, first, pieces, bytes, plan.row_bytes, direction, what);
    const std::int64_t rows = rows_in(pieces);
    done += rows;
    note_transfer_progress(done, count, plan.row_bytes, rows, direction, what);
  }
}

void transfer_rows_staged(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                          std::int64_t count, const RowStaging& staging, Transfer direction, const std::string& what) {
  const RoundPlan plan = plan_rounds(comm, mem_type, shape, count, direction, what);
  std::vector<unsigned char> buffer;
  run_agreed(comm, [&] {
    const std::size_t bytes = static_cast<std::size_t>(std::min(count, plan.rows_per_round)) * plan.row_bytes;
    check_allocation(bytes, what + ": staging buffer of " + std::to_string(bytes) + " bytes");
    buffer.resize(std::max<std::size_t>(bytes, 1));
  });
  for (std::int64_t round = 0; round < plan.rounds; ++round) {
    const std::int64_t done = std::min(count, round * plan.rows_per_round);
    const std::int64_t rows = std::min(count - done, plan.rows_per_round);
    const std::int64_t first_element = done * plan.row_elements, elements = rows * plan.row_elements;
    const std::size_t round_bytes = static_cast<std::size_t>(rows) * plan.row_bytes;
    if (direction == Transfer::Write) {
      run_agreed(comm, [&] {
        if (elements > 0) staging.fill(buffer.data(), first_element, elements);
      });
    } else if (staging.clear) {  // the same on every rank: each joins the agreement
      run_agreed(comm, [&] {
        if (elements > 0) staging.clear(buffer.data(), elements);
      });
    } else {
      std::fill_n(buffer.begin(), round_bytes, static_cast<unsigned char>(0));
    }
    try {
      run_round(comm, dset, mem_type, plan.dxpl.get(), shape, first + done, rows > 0 ? RowRuns{{0, rows}} : RowRuns{},
                buffer.data(), plan.row_bytes, direction, what);
      note_transfer_progress(done + rows, count, plan.row_bytes, rows, direction, what);
    } catch (...) {
      if (direction == Transfer::Read && elements > 0 && staging.release) staging.release(buffer.data(), elements);
      throw;
    }
    if (direction == Transfer::Read) {
      run_agreed(comm, [&] {
        if (elements == 0) return;
        try {
          staging.drain(buffer.data(), first_element, elements);
        } catch (...) {
          if (staging.release) staging.release(buffer.data(), elements);
          throw;
        }
        if (staging.release) staging.release(buffer.data(), elements);
      });
    }
  }
}

}  // namespace shardops::io
