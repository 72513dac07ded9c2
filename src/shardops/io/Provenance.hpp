#pragma once
/// \file
/// \brief Provenance attributes: what made an output dataset.

#include <hdf5.h>

#include <map>
#include <string>

namespace shardops::io {

/// Attribute name -> text. Conventional keys: "op", "inputs", "options".
using Attributes = std::map<std::string, std::string>;

/// Name of the attribute holding the shardops version that wrote a dataset.
inline constexpr const char* kVersionAttribute = "shardops_version";

/// \brief Writes every entry of \p attributes, plus shardops_version (always the
/// running version, whatever \p attributes says), as a scalar variable-length
/// UTF-8 string attribute on \p object (h5py reads them as str). An attribute of
/// the same name is replaced.
/// \param what the dataset's name (FILE:/path), for messages. \throws IOError.
void write_provenance(hid_t object, const Attributes& attributes, const std::string& what);

}  // namespace shardops::io
