#pragma once
/// \file
/// \brief Provenance attributes: what made an output dataset.

#include <hdf5.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shardops::io {

/// The value of one provenance attribute: a text, or a list of texts (written as a 1-D
/// string array, so a dataset name with a space stays one item).
struct AttributeValue {
  AttributeValue(std::string text) : items{std::move(text)}, is_list(false) {}  // NOLINT: implicit on purpose
  AttributeValue(const char* text) : AttributeValue(std::string(text)) {}       // NOLINT
  AttributeValue(std::vector<std::string> list) : items(std::move(list)), is_list(true) {}  // NOLINT
  std::vector<std::string> items;
  bool is_list;
};

/// Attribute name -> value. Conventional keys: "op", "inputs" (a list), "options".
using Attributes = std::map<std::string, AttributeValue>;

/// Name of the attribute holding the shardops version that wrote a dataset.
inline constexpr const char* kVersionAttribute = "shardops_version";

/// \brief The object comment that says when and by which job shardops wrote a dataset:
/// "shardops: written 2026-12-05T09:10:11.123456789Z, pid P on host H". It differs from job to
/// job, so a job reading the dataset meanwhile tells a replacement (an --overwrite, which HDF5
/// puts exactly where the old one was) from the dataset it read (InputWatch). A comment
/// (H5Oset_comment), not an attribute: the attributes stay the same from run to run, so two
/// runs' outputs compare equal, attributes and all (h5py's attrs, h5diff).
std::string written_comment();

/// \brief The comment of the open \p object, "" if it has none.
std::string comment_of(hid_t object);

/// \brief The text of the scalar string attribute \p name of \p object (one that
/// write_provenance wrote: "op", say); "" where it has none, or one of another kind.
std::string provenance_text(hid_t object, const char* name);

/// \brief Whether \p object has exactly the attributes write_provenance(\p attributes) writes,
/// with the same values (and no other): a job run again need not write them anew (HDF5 1.10
/// keeps, unused, the heap of variable-length strings it replaces). Never throws.
bool has_provenance(hid_t object, const Attributes& attributes);

/// \brief Writes every entry of \p attributes, plus shardops_version (always the
/// running version, whatever \p attributes says), as a variable-length UTF-8 string
/// attribute on \p object: a scalar for a text, 1-D for a list (h5py reads them as str
/// and as an array of str). An attribute of the same name is replaced. A \p comment that is
/// not empty (written_comment()) becomes the object's comment.
/// \param what the dataset's name (FILE:/path), for messages. \throws IOError.
void write_provenance(hid_t object, const Attributes& attributes, const std::string& what,
                      const std::string& comment = "");

}  // namespace shardops::io
