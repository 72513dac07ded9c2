#include "shardops/hdf5/StorageLayout.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/Filters.hpp"

namespace shardops::io {

namespace {
// The default chunk when filtering: about 1 MiB, h5py's ballpark, enough rows to compress well.
constexpr std::size_t kDefaultChunkBytes = std::size_t(1) << 20;
// HDF5 refuses chunks of 4 GiB or more.
constexpr std::size_t kMaxChunkBytes = (std::size_t(1) << 32) - 1;
}  // namespace

void parse_compression(const std::string& text, StorageOptions& options) {
  const auto bad = [&] {
    return InvalidArgument("--compression '" + text + "': expected none, gzip, gzip=LEVEL (0-9) or lzf");
  };
  if (text == "none") {
    options.compression = Compression::None;
  } else if (text == "lzf") {
    options.compression = Compression::Lzf;
  } else if (text == "gzip") {
    options.compression = Compression::Gzip;
  } else if (text.rfind("gzip=", 0) == 0 && text.size() == 6 && text[5] >= '0' && text[5] <= '9') {
    options.compression = Compression::Gzip;
    options.gzip_level = text[5] - '0';
  } else {
    throw bad();
  }
}

PropListHandle dataset_creation(const StorageOptions& options, const Shape& shape, hid_t type,
                                const std::string& what) {
  const std::string failure = what + ": cannot create the dataset";
  PropListHandle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), failure, ErrorKind::Internal));
  // HDF5 refuses "never fill" for variable-length data, whose fill is zeros (empty strings).
  const htri_t variable = check_value(H5Tis_variable_str(type), failure, ErrorKind::Internal);
  if (variable == 0) check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), failure, ErrorKind::Internal);
  if (!options.chunked() || shape.rank() == 0 || shape.num_elements() == 0) return dcpl;

  const std::size_t element = H5Tget_size(type);
  const std::size_t row_bytes = std::max<std::size_t>(1, element * static_cast<std::size_t>(shape.product_from(1)));
  std::int64_t rows = options.chunk_rows > 0
                          ? options.chunk_rows
                          : static_cast<std::int64_t>(std::max<std::size_t>(1, kDefaultChunkBytes / row_bytes));
  rows = std::min<std::int64_t>(
      {rows, shape.dim(0), static_cast<std::int64_t>(std::max<std::size_t>(1, kMaxChunkBytes / row_bytes))});
  if (row_bytes > kMaxChunkBytes) {
    throw InvalidArgument(what + ": one row is " + std::to_string(row_bytes) +
                          " bytes, more than an HDF5 chunk can hold (4 GiB); write it contiguous (no --compression, "
                          "--shuffle or --chunk-rows)");
  }
  std::vector<hsize_t> chunk;
  for (int d = 0; d < shape.rank(); ++d) chunk.push_back(static_cast<hsize_t>(std::max<std::int64_t>(1, shape.dim(d))));
  chunk[0] = static_cast<hsize_t>(std::max<std::int64_t>(1, rows));
  check_status(H5Pset_chunk(dcpl.get(), shape.rank(), chunk.data()), failure);
  if (options.shuffle) check_status(H5Pset_shuffle(dcpl.get()), failure);
  if (options.compression == Compression::Gzip) {
    check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(options.gzip_level)), failure);
  } else if (options.compression == Compression::Lzf) {
    // Loads h5py's plugin from HDF5's plugin folder (or HDF5_PLUGIN_PATH) if it is there.
    const htri_t available = H5Zfilter_avail(kLzfFilter);
    hdf5_error_detail();  // clear the stack
    if (available <= 0) {
      throw InvalidArgument(what + ": the LZF filter (h5py's, HDF5 filter 32000) is not available: " +
                            plugin_advice("Debian package hdf5-plugin-lzf"));
    }
    // Optional, as h5py sets it: a chunk LZF cannot shrink is stored as it is.
    check_status(H5Pset_filter(dcpl.get(), kLzfFilter, H5Z_FLAG_OPTIONAL, 0, nullptr), failure);
  }
  return dcpl;
}

Extent contiguous_extent(hid_t dataset) {
  const haddr_t at = H5Dget_offset(dataset);
  hdf5_error_detail();  // clear the stack H5Dget_offset leaves when there is no offset
  if (at == HADDR_UNDEF || at > static_cast<haddr_t>(std::numeric_limits<long long>::max())) return {};
  return {static_cast<long long>(at), static_cast<long long>(H5Dget_storage_size(dataset))};
}

Extent raw_extent(hid_t dataset, hid_t mem_type) {
  const TypeHandle type(H5Dget_type(dataset));
  const bool same = type.valid() && H5Tequal(type.get(), mem_type) > 0;
  hdf5_error_detail();  // clear the stack of a failed call
  return same ? contiguous_extent(dataset) : Extent{};
}

void check_dataset_rank(std::size_t rank, const std::string& what) {
  if (rank <= static_cast<std::size_t>(kMaxDatasetRank)) return;
  throw InvalidArgument(what + ": " + std::to_string(rank) + " dimensions, more than the " +
                        std::to_string(kMaxDatasetRank) + " an HDF5 dataset can have");
}

}  // namespace shardops::io
