#pragma once
/// \file
/// \brief The filters (compression, shuffle, checksums) a dataset's chunks went
/// through, and whether this HDF5 can undo them: HDF5 itself only says that it could
/// not load a plugin from its plugin folder, not which filter the data needs.

#include <hdf5.h>

#include <string>

namespace shardops::io {

/// \brief \throws IOError naming \p what, the filter (id and name) and how to get it,
/// if a filter the chunks need is not available.
void check_filters_available(hid_t dataset, const std::string& what);

}  // namespace shardops::io
