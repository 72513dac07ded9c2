#include "shardops/io/RowTransfer.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

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

void transfer_rows(const Comm& comm, hid_t dset, hid_t mem_type, const Shape& shape, std::int64_t first,
                   std::int64_t count, void* buffer, Transfer direction, const std::string& what) {
  PropListHandle dxpl;
  std::int64_t rows_per_round = 1, local_rounds = 0;
  std::size_t row_bytes = 0;
  run_agreed(comm, [&] {
    dxpl = PropListHandle(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(H5P_DATASET_XFER)", ErrorKind::Internal));
    check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio", ErrorKind::Internal);
    const std::size_t elem = H5Tget_size(mem_type);
    if (elem == 0) throw InternalError(with_hdf5_detail(what + ": memory type has no size"));
    row_bytes = elem * static_cast<std::size_t>(shape.rank() == 0 ? 1 : shape.product_from(1));
    if (row_bytes > 0 && count > 0) {
      rows_per_round = static_cast<std::int64_t>(std::max<std::size_t>(1, max_transfer_bytes() / row_bytes));
      local_rounds = (count + rows_per_round - 1) / rows_per_round;
    }
  });
  const std::int64_t rounds = comm.max(local_rounds);
  // HDF5 wants a buffer even for an empty selection.
  unsigned char dummy = 0;
  auto* bytes = buffer != nullptr ? static_cast<unsigned char*>(buffer) : &dummy;
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::int64_t done = std::min(count, round * rows_per_round);
    const std::int64_t rows = std::min(count - done, rows_per_round);
    run_agreed(comm, [&] {
      transfer_once(dset, mem_type, dxpl.get(), shape, first + done, rows, shape.rank() == 0 && rows > 0,
                    bytes + static_cast<std::size_t>(done) * row_bytes, direction, what);
    });
  }
}

}  // namespace shardops::io
