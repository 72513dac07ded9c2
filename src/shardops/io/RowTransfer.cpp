#include "shardops/io/RowTransfer.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/io/Hdf5Handle.hpp"

namespace shardops::io {

namespace {
std::atomic<std::size_t> g_max_transfer_bytes{std::size_t(1) << 30};

// One round: this rank's rows [first, first + rows) (or the scalar when whole_scalar).
void transfer_once(hid_t dset, hid_t mem_type, hid_t dxpl, const Shape& shape, std::int64_t first, std::int64_t rows,
                   bool whole_scalar, void* buffer, Transfer direction, const std::string& what) {
  DataspaceHandle file_space(check_id(H5Dget_space(dset), what + ": cannot get the dataspace"));
  const std::int64_t elements = shape.rank() == 0 ? (whole_scalar ? 1 : 0) : rows * shape.product_from(1);
  const hsize_t mem_dim = static_cast<hsize_t>(elements > 0 ? elements : 1);
  DataspaceHandle mem_space(check_id(H5Screate_simple(1, &mem_dim, nullptr), what + ": cannot create a dataspace"));
  if (elements == 0) {
    check_status(H5Sselect_none(file_space.get()), what + ": H5Sselect_none");
    check_status(H5Sselect_none(mem_space.get()), what + ": H5Sselect_none");
  } else if (shape.rank() > 0) {
    std::vector<hsize_t> start(static_cast<std::size_t>(shape.rank()), 0), count(start.size());
    start[0] = static_cast<hsize_t>(first);
    count[0] = static_cast<hsize_t>(rows);
    for (int d = 1; d < shape.rank(); ++d) count[static_cast<std::size_t>(d)] = static_cast<hsize_t>(shape.dim(d));
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                 what + ": cannot select rows [" + std::to_string(first) + ", " + std::to_string(first + rows) + ")");
  }
  const herr_t status = direction == Transfer::Read
                            ? H5Dread(dset, mem_type, mem_space.get(), file_space.get(), dxpl, buffer)
                            : H5Dwrite(dset, mem_type, mem_space.get(), file_space.get(), dxpl, buffer);
  if (status < 0) {
    const std::string rows_text = shape.rank() == 0
                                      ? std::string("the scalar")
                                      : "rows [" + std::to_string(first) + ", " + std::to_string(first + rows) + ")";
    throw IOError(with_hdf5_detail(what + ": " + (direction == Transfer::Read ? "reading " : "writing ") + rows_text +
                                   " failed"));
  }
}
}  // namespace

std::size_t max_transfer_bytes() noexcept { return g_max_transfer_bytes.load(); }

void set_max_transfer_bytes(std::size_t bytes) noexcept { g_max_transfer_bytes.store(bytes > 0 ? bytes : 1); }

namespace {

// The rounds of one rank's transfer: a dxpl and how many rows go per round.
struct RoundPlan {
  PropListHandle dxpl;
  std::int64_t rows_per_round = 1;
  std::int64_t rounds = 0;    // agreed: the most any rank needs
  std::size_t row_bytes = 0;  // in memory
  std::int64_t row_elements = 1;
};

RoundPlan plan_rounds(const Comm& comm, hid_t mem_type, const Shape& shape, std::int64_t count,
                      const std::string& what) {
  RoundPlan plan;
  std::int64_t local_rounds = 0;
  run_agreed(comm, [&] {
    plan.dxpl =
        PropListHandle(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(H5P_DATASET_XFER)", ErrorKind::Internal));
    check_status(H5Pset_dxpl_mpio(plan.dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio", ErrorKind::Internal);
    const std::size_t elem = H5Tget_size(mem_type);
    if (elem == 0) throw InternalError(with_hdf5_detail(what + ": memory type has no size"));
    plan.row_elements = shape.rank() == 0 ? 1 : shape.product_from(1);
    plan.row_bytes = elem * static_cast<std::size_t>(plan.row_elements);
    if (plan.row_bytes > 0 && count > 0) {
      plan.rows_per_round = static_cast<std::int64_t>(std::max<std::size_t>(1, max_transfer_bytes() / plan.row_bytes));
      local_rounds = (count + plan.rows_per_round - 1) / plan.rows_per_round;
    }
  });
  plan.rounds = comm.max(local_rounds);
  return plan;
}

}  // namespace

void transfer_rows(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                   std::int64_t count, void* buffer, Transfer direction, const std::string& what) {
  const RoundPlan plan = plan_rounds(comm, mem_type, shape, count, what);
  // HDF5 wants a buffer even for an empty selection.
  unsigned char dummy = 0;
  auto* bytes = buffer != nullptr ? static_cast<unsigned char*>(buffer) : &dummy;
  for (std::int64_t round = 0; round < plan.rounds; ++round) {
    const std::int64_t done = std::min(count, round * plan.rows_per_round);
    const std::int64_t rows = std::min(count - done, plan.rows_per_round);
    run_agreed(comm, [&] {
      transfer_once(dset, mem_type, plan.dxpl.get(), shape, first + done, rows, shape.rank() == 0 && rows > 0,
                    bytes + static_cast<std::size_t>(done) * plan.row_bytes, direction, what);
    });
  }
}

void transfer_rows_staged(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                          std::int64_t count, const RowStaging& staging, Transfer direction, const std::string& what) {
  const RoundPlan plan = plan_rounds(comm, mem_type, shape, count, what);
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
    } else {
      std::fill_n(buffer.begin(), round_bytes, static_cast<unsigned char>(0));
    }
    try {
      run_agreed(comm, [&] {
        transfer_once(dset, mem_type, plan.dxpl.get(), shape, first + done, rows, shape.rank() == 0 && rows > 0,
                      buffer.data(), direction, what);
      });
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
