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

/// \brief How to make a missing filter's plugin loadable: install \p source (a package) or
/// point HDF5_PLUGIN_PATH at it, and, where the environment is what keeps HDF5 from the
/// plugin it has installed, what it holds (importing TensorFlow sets
/// HDF5_PLUGIN_PATH=disable, which a shardops started from that Python inherits).
std::string plugin_advice(const std::string& source);

}  // namespace shardops::io
