#pragma once
/// \file
/// \brief How an output dataset is stored: contiguous (the default), or chunked with
/// h5py's filters (gzip, LZF, shuffle), which parallel HDF5 writes collectively.

#include <hdf5.h>

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

}  // namespace shardops::io
