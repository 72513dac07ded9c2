#pragma once
/// \file
/// \brief What an absolute path inside an HDF5 file names, found link by link so a
/// missing dataset is told apart from a damaged file.

#include <hdf5.h>

#include <string>

namespace shardops::io {

enum class ObjectKind { Missing, Group, Dataset, Other };

/// \brief The result of lookup_path().
struct PathLookup {
  /// Kind of the object at the full path; Missing if it or one of its parents does not exist.
  ObjectKind kind = ObjectKind::Missing;
  /// The first prefix of the path that does not exist (kind Missing), or the parent
  /// that exists but is not a group (blocked); empty otherwise.
  std::string stop;
  /// True if a proper prefix exists but is a dataset or other non-group object.
  bool blocked = false;
  /// What that prefix is, when blocked.
  ObjectKind blocked_by = ObjectKind::Missing;
};

/// \brief Looks up \p path ("/a/b/c", valid as parse_dataset_ref checks) in \p file, links
/// followed with the link access list \p lapl.
/// \throws IOError naming \p what if HDF5 cannot read the links (damaged file).
PathLookup lookup_path(hid_t file, const std::string& path, const std::string& what, hid_t lapl = H5P_DEFAULT);

/// \brief The file and the path the external link \p name (relative to \p loc, or absolute)
/// names, as stored; false if it is not an external link (or cannot be read).
bool external_link_target(hid_t loc, const std::string& name, std::string& file, std::string& path);

/// \brief "a soft link to '/x'", "an external link to 'F:/x'" for the link \p name (relative to
/// \p loc, or absolute); "" for a hard link or none.
std::string link_text(hid_t loc, const std::string& name);

/// \brief The first link on \p path (absolute, or relative to \p file, a file or group) that is
/// not a hard link: its name, its type (H5L_TYPE_ERROR: every component is a hard link, or the
/// path ends before one is met) and the components after it in \p rest.
std::string first_link_on(hid_t file, const std::string& path, H5L_type_t& type, std::string& rest);

/// \brief The first link on \p path that an output must not be written through or in
/// place of: an external link (into another file, which the job's commit does not cover)
/// or a soft link (whose target HDF5 resolves differently as the commit deletes and copies
/// objects), anywhere on it. "'/d' in 'F' is an external link to 'G:/x'", or "" if every
/// component is a hard link (or the path is missing from there on).
std::string link_in_the_way(hid_t file, const std::string& file_name, const std::string& path);

/// "a group", "a dataset", "a named datatype", for messages.
const char* object_kind_name(ObjectKind kind) noexcept;

}  // namespace shardops::io
