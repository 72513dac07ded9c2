#pragma once
/// \file
/// \brief How a dataset is stored: an output's options, contiguous (the default) or
/// chunked with h5py's filters (gzip, LZF, shuffle), which parallel HDF5 writes
/// collectively; and where a contiguous dataset's bytes lie in its file, for the paths
/// that move them without HDF5 (pwrite of outputs, mapping of inputs).

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "shardops/core/Shape.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

enum class Compression { None, Gzip, Lzf };

/// The storage of an output (the CLI's --compression, --shuffle, --chunk-rows).
struct StorageOptions {
  Compression compression = Compression::None;
  int gzip_level = 4;           ///< 0-9, h5py's default 4
  bool shuffle = false;         ///< the byte-shuffle filter before compressing
  std::int64_t chunk_rows = 0;  ///< rows of axis 0 per chunk; 0: contiguous, or about 1 MiB chunks when filtered

  bool chunked() const noexcept { return chunk_rows > 0 || shuffle || compression != Compression::None; }
};

/// h5py's filter number for LZF (registered with The HDF Group).
constexpr H5Z_filter_t kLzfFilter = 32000;

/// \brief Parses "none", "gzip", "gzip=LEVEL" (0-9) or "lzf" into \p options.
/// \throws InvalidArgument naming the text.
void parse_compression(const std::string& text, StorageOptions& options);

/// \brief The dataset creation property list for a dataset of \p shape and file \p type
/// stored as \p options say. A scalar or an empty dataset stays contiguous. Every
/// element is written, so fixed-size types get no fill pass.
/// \throws InvalidArgument naming \p what if a filter is not available (LZF without
/// h5py's plugin: Debian's hdf5-plugin-lzf).
PropListHandle dataset_creation(const StorageOptions& options, const Shape& shape, hid_t type, const std::string& what);

/// Where a dataset's data lies in its file: \p bytes from \p offset, or offset -1 when
/// there is no one place (chunked, compact, external, not yet allocated).
struct Extent {
  long long offset = -1;
  long long bytes = 0;
};

/// \brief The Extent of \p dataset (HDF5's own address: a user block is counted in).
/// Never throws; leaves no error on HDF5's stack.
Extent contiguous_extent(hid_t dataset);

/// \brief contiguous_extent() of a dataset whose bytes are exactly \p mem_type's
/// elements (the same type, byte order and layout), which can then be moved without
/// HDF5; offset -1 otherwise. Never throws.
Extent raw_extent(hid_t dataset, hid_t mem_type);

/// The most dimensions a dataset, so every output, can have.
inline constexpr int kMaxDatasetRank = H5S_MAX_RANK;

/// \throws InvalidArgument ("WHAT: N dimensions, more than the 32 an HDF5 dataset can have")
/// if a tensor of \p rank dimensions cannot be written: a usage error, before any work where
/// the shape is known up front (--shape, a deck's values), else before the dataset is made.
void check_dataset_rank(std::size_t rank, const std::string& what);

}  // namespace shardops::io
