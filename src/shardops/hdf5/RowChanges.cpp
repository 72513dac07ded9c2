#include "shardops/hdf5/RowChanges.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/hdf5/TypeMap.hpp"

namespace shardops::io {

long long row_changeable_offset(hid_t file, const std::string& path, const Shape& shape, DType dtype,
                                long long original_length) noexcept {
  long long offset = -1;
  try {
    if (dtype == DType::String || shape.rank() == 0 || shape.num_elements() == 0) return -1;
    const DatasetHandle dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
    H5O_info_t info;
    if (!dataset.valid() || H5Oget_info2(dataset.get(), &info, H5O_INFO_BASIC) < 0 || info.rc != 1) return -1;
    const DataspaceHandle space(H5Dget_space(dataset.get()));
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != shape.rank()) return -1;
    std::vector<hsize_t> dims(static_cast<std::size_t>(shape.rank()));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    for (int d = 0; d < shape.rank(); ++d) {
      if (dims[static_cast<std::size_t>(d)] != static_cast<hsize_t>(shape.dim(d))) return -1;
    }
    const TypeHandle stored(H5Dget_type(dataset.get())), written(file_type(dtype)), mem(memory_type(dtype));
    if (!stored.valid() || H5Tequal(stored.get(), written.get()) <= 0 || H5Tequal(mem.get(), written.get()) <= 0)
      return -1;
    const Extent extent = contiguous_extent(dataset.get());
    const long long bytes = shape.num_elements() * static_cast<long long>(dtype_size(dtype));
    if (extent.offset >= 0 && extent.bytes == bytes && extent.offset + bytes <= original_length) offset = extent.offset;
  } catch (...) {
    offset = -1;
  }
  hdf5_error_detail();  // clear the stack of a failed look
  return offset;
}

void remove_attributes(hid_t object, const std::string& what) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  hsize_t at = 0;
  check_status(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_NATIVE, &at, collect, &names),
               what + ": cannot list the attributes of the dataset it replaces");
  for (const std::string& name : names)
    check_status(H5Adelete(object, name.c_str()), what + ": cannot delete the attribute '" + name + "'");
}

ChangedRows find_changed_rows(const LazyTensor& tensor, int fd, long long dataset_offset,
                              const std::function<std::int64_t(std::int64_t, std::int64_t)>& cost, std::int64_t limit,
                              double& making, const std::string& what) {
  ChangedRows changes;
  const std::int64_t rows = tensor.local_rows();
  const auto row_bytes = static_cast<std::int64_t>(tensor.row_bytes());
  if (rows <= 0 || row_bytes <= 0) return changes;
  const std::int64_t piece = std::max<std::int64_t>(1, static_cast<std::int64_t>(LazyTensor::kPieceBytes) / row_bytes);
  const std::int64_t gap_rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(kRunGapBytes) / row_bytes);
  std::vector<unsigned char> old(static_cast<std::size_t>(std::min(piece, rows) * row_bytes));
  const long long first_byte = dataset_offset + tensor.row_offset() * row_bytes;
  std::int64_t in_runs = 0;  // rows_in(changes.runs), kept as they grow
  making += tensor.for_each_run(piece, [&](std::int64_t done, std::int64_t now, const unsigned char* mine) {
    if (!read_all(fd, old.data(), static_cast<std::size_t>(now * row_bytes), first_byte + done * row_bytes))
      throw IOError(what + ": cannot read the rows of the dataset it replaces: " + std::strerror(errno));
    for (std::int64_t r = 0; r < now; ++r) {
      const auto at = static_cast<std::size_t>(r * row_bytes);
      if (std::memcmp(mine + at, old.data() + at, static_cast<std::size_t>(row_bytes)) == 0) continue;
      const std::int64_t row = done + r;
      ++changes.differ;
      RowRun* last = changes.runs.empty() ? nullptr : &changes.runs.back();
      if (last != nullptr && row - last->end < gap_rows) {
        in_runs += row + 1 - last->end;
        last->end = row + 1;
      } else {
        changes.runs.push_back({row, row + 1});
        ++in_runs;
      }
    }
    // Most of the rows compared differ: an output made anew, not a few rows changed. Told
    // early, the replacement that follows pays for one piece compared, not a whole limit's.
    const bool mostly_changed = in_runs * 2 > done + now;
    changes.over = mostly_changed || cost(in_runs * row_bytes, static_cast<std::int64_t>(changes.runs.size())) > limit;
    return !changes.over;
  });
  return changes;
}

std::string pack_changed_rows(const LazyTensor& tensor, const ChangedRows& changes) {
  const auto row_bytes = static_cast<std::int64_t>(tensor.row_bytes());
  std::string packed(changes.runs.size() * 16 + static_cast<std::size_t>(rows_in(changes.runs) * row_bytes), '\0');
  auto* out = reinterpret_cast<unsigned char*>(packed.data());
  const auto* data = tensor.held() ? static_cast<const unsigned char*>(tensor.tensor().local().data()) : nullptr;
  for (const RowRun& run : changes.runs) {
    const std::int64_t count = run.end - run.first;
    const std::int64_t head[2] = {tensor.row_offset() + run.first, count};
    std::memcpy(out, head, sizeof head);
    out += sizeof head;
    const auto n = static_cast<std::size_t>(count * row_bytes);
    if (data != nullptr)
      std::memcpy(out, data + run.first * row_bytes, n);
    else
      tensor.make_rows(run.first, count, out);
    out += n;
  }
  return packed;
}

void for_each_changed_run(const std::string& packed, std::size_t row_bytes,
                          const std::function<void(std::int64_t, std::int64_t, const unsigned char*)>& f) {
  const auto* at = reinterpret_cast<const unsigned char*>(packed.data());
  const auto* end = at + packed.size();
  while (at < end) {
    std::int64_t head[2];
    if (end - at < static_cast<std::ptrdiff_t>(sizeof head)) throw InternalError("changed rows: a cut-off run");
    std::memcpy(head, at, sizeof head);
    at += sizeof head;
    const auto n = static_cast<std::size_t>(head[1]) * row_bytes;
    if (head[1] <= 0 || static_cast<std::size_t>(end - at) < n) throw InternalError("changed rows: a cut-off run");
    f(head[0], head[1], at);
    at += n;
  }
}

}  // namespace shardops::io
