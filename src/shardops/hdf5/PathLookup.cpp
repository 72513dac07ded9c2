#include "shardops/hdf5/PathLookup.hpp"

#include <cstddef>
#include <vector>

#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

namespace {
ObjectKind kind_of(hid_t file, const std::string& prefix, const std::string& what, hid_t lapl) {
  H5O_info_t info;
  check_status(H5Oget_info_by_name2(file, prefix.c_str(), &info, H5O_INFO_BASIC, lapl),
               what + ": cannot read the object '" + prefix + "'");
  switch (info.type) {
    case H5O_TYPE_GROUP: return ObjectKind::Group;
    case H5O_TYPE_DATASET: return ObjectKind::Dataset;
    default: break;
  }
  return ObjectKind::Other;
}

// What a failed lookup of \p prefix says, with HDF5's own words (the stack cleared).
std::string cannot_look_up(const std::string& prefix, const std::string& what) {
  return with_hdf5_detail(what + ": cannot look up '" + prefix + "'");
}

// A lookup of \p prefix that failed: a loop of links (InvalidArgument, as a loop of symbolic
// links is), else a file HDF5 cannot read.
[[noreturn]] void lookup_failed(const std::string& prefix, const std::string& what) {
  if (hdf5_error_is(H5E_NLINKS)) {
    hdf5_error_detail();  // clears the stack
    throw InvalidArgument(what + ": '" + prefix +
                          "' leads through more links than HDF5 follows (16): a loop of soft or external links");
  }
  throw IOError(cannot_look_up(prefix, what));
}

// Whether \p name (absolute) in \p file is a soft link itself (not what it leads to).
bool is_soft_link(hid_t file, const std::string& name) {
  H5L_info_t info;
  herr_t status = -1;
  H5E_BEGIN_TRY { status = H5Lget_info(file, name.c_str(), &info, H5P_DEFAULT); }
  H5E_END_TRY;
  return status >= 0 && info.type == H5L_TYPE_SOFT;
}

}  // namespace

PathLookup lookup_path(hid_t file, const std::string& path, const std::string& what, hid_t lapl) {
  PathLookup result;
  std::string prefix;
  const auto parts = path_components(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    prefix += "/" + parts[i];
    const htri_t exists = H5Lexists(file, prefix.c_str(), lapl);
    if (exists < 0) lookup_failed(prefix, what);
    // A soft link whose target is gone counts as missing.
    htri_t resolves = exists > 0 ? H5Oexists_by_name(file, prefix.c_str(), lapl) : 0;
    if (resolves < 0) {
      if (hdf5_error_is(H5E_NLINKS)) lookup_failed(prefix, what);
      // HDF5 1.10 fails, rather than answer no, for a soft link whose target path misses a
      // group on the way or passes through a dataset ('/nope/x', '/d/x'): it leads to nothing.
      const std::string failure = cannot_look_up(prefix, what);
      if (!is_soft_link(file, prefix)) throw IOError(failure);
      resolves = 0;
    }
    if (resolves == 0) {
      result.stop = prefix;
      return result;
    }
    const ObjectKind kind = kind_of(file, prefix, what, lapl);
    if (i + 1 == parts.size()) {
      result.kind = kind;
    } else if (kind != ObjectKind::Group) {
      result.stop = prefix;
      result.blocked = true;
      result.blocked_by = kind;
      return result;
    }
  }
  return result;
}

bool external_link_target(hid_t loc, const std::string& name, std::string& file, std::string& path) {
  H5L_info_t info;
  if (H5Lget_info(loc, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5L_TYPE_EXTERNAL) return false;
  std::string value(info.u.val_size, '\0');
  unsigned flags = 0;
  const char* other_file = nullptr;
  const char* other_path = nullptr;
  if (value.empty() || H5Lget_val(loc, name.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0 ||
      H5Lunpack_elink_val(value.data(), value.size(), &flags, &other_file, &other_path) < 0 || !other_file ||
      !other_path)
    return false;
  file = other_file;
  path = other_path;
  return true;
}

std::string link_text(hid_t loc, const std::string& name) {
  H5L_info_t info;
  if (H5Lget_info(loc, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type == H5L_TYPE_HARD) {
    hdf5_error_detail();  // clears what a failed call left
    return "";
  }
  std::string to;
  if (info.type == H5L_TYPE_SOFT) {
    std::string value(info.u.val_size, '\0');
    if (info.u.val_size > 0 && H5Lget_val(loc, name.c_str(), value.data(), value.size(), H5P_DEFAULT) >= 0)
      to = value.c_str();
  } else if (info.type == H5L_TYPE_EXTERNAL) {
    std::string file, path;
    if (external_link_target(loc, name, file, path)) to = file + ":" + path;
  }
  hdf5_error_detail();
  const char* kind = info.type == H5L_TYPE_SOFT       ? "a soft link"
                     : info.type == H5L_TYPE_EXTERNAL ? "an external link"
                                                      : "a user-defined link";
  return std::string(kind) + (to.empty() ? "" : " to '" + to + "'");
}

std::string first_link_on(hid_t file, const std::string& path, H5L_type_t& type, std::string& rest) {
  std::string prefix;
  const std::vector<std::string> parts = path_components(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    prefix += (i == 0 && path[0] != '/' ? "" : "/") + parts[i];  // a relative path stays relative to file
    // Earlier components are hard links to groups: the lookup stays in this file.
    H5L_info_t info;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0 || H5Lget_info(file, prefix.c_str(), &info, H5P_DEFAULT) < 0)
      break;
    if (info.type == H5L_TYPE_HARD) continue;
    type = info.type;
    rest.clear();
    for (std::size_t k = i + 1; k < parts.size(); ++k) rest += "/" + parts[k];
    return prefix;
  }
  type = H5L_TYPE_ERROR;
  return "";
}

std::string link_in_the_way(hid_t file, const std::string& file_name, const std::string& path) {
  H5L_type_t type = H5L_TYPE_ERROR;
  std::string rest;
  const std::string link = first_link_on(file, path, type, rest);
  const std::string text = link.empty() ? std::string() : link_text(file, link);
  hdf5_error_detail();  // clears what the lookups left
  return text.empty() ? "" : "'" + link + "' in '" + file_name + "' is " + text;
}

const char* object_kind_name(ObjectKind kind) noexcept {
  switch (kind) {
    case ObjectKind::Missing: return "missing";
    case ObjectKind::Group: return "a group";
    case ObjectKind::Dataset: return "a dataset";
    case ObjectKind::Other: return "a named datatype";
  }
  return "an object";
}

}  // namespace shardops::io
