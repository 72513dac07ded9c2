#include "shardops/hdf5/LinkTarget.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/FileAccess.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/PathLookup.hpp"

namespace shardops::io {

namespace {

namespace fs = std::filesystem;

// HDF5's "extpath" of a file: the folder of its name as opened, made absolute.
std::string folder_of(const std::string& file) {
  fs::path p(file);
  std::error_code ec;
  if (p.is_relative()) p = fs::current_path(ec) / p;
  return p.parent_path().string();
}

std::string join(const std::string& folder, const std::string& name) {
  if (folder.empty()) return name;
  return folder + (folder.back() == '/' ? "" : "/") + name;
}

// check_external_links() from \p file (open, named \p file_name), \p hops links deep.
void follow_external_links(hid_t file, const std::string& file_name, const std::string& path, const std::string& what,
                           int hops, std::vector<std::string>* passed, LinkEnd* end) {
  constexpr int kMaxHops = 16;  // HDF5's default limit of links followed in one lookup
  H5L_type_t type = H5L_TYPE_ERROR;
  std::string rest, target_file, target_path;
  const std::string link = first_link_on(file, path, type, rest);
  const bool external = type == H5L_TYPE_EXTERNAL && external_link_target(file, link, target_file, target_path);
  hdf5_error_detail();  // clears what the lookups left
  if (end != nullptr) *end = LinkEnd{file_name, path};
  if (!external) return;
  if (hops >= kMaxHops) {
    throw InvalidArgument((what.empty() ? "" : what + ": ") + "'" + link + "' in '" + file_name +
                          "' leads through more links than HDF5 follows (16): a loop of soft or external links");
  }
  const std::string how = "the external link '" + link + "' in '" + file_name + "'";
  const std::string found = linked_file(file_name, target_file, "HDF5_EXT_PREFIX", how, what);
  if (found.empty()) return;
  if (passed != nullptr) passed->push_back(found);
  const FileHandle next =
      open_serial(found, H5F_ACC_RDONLY, what + " (through " + how + "): cannot open '" + found + "'");
  follow_external_links(next.get(), found, target_path + rest, what, hops + 1, passed, end);
}

// The name of the source file (\p get: H5Pget_virtual_filename) or dataset (H5Pget_virtual_dsetname)
// of the mapping \p i of \p dcpl ("" where HDF5 cannot say).
std::string mapping_name(ssize_t (*get)(hid_t, size_t, char*, size_t), hid_t dcpl, size_t i) {
  return hdf5_name(dcpl, [&](hid_t id, char* buffer, size_t size) { return get(id, i, buffer, size); });
}

}  // namespace

std::vector<std::string> linked_file_places(const std::string& parent_file, const std::string& named,
                                            const char* prefix_variable) {
  if (named.empty()) return {};
  std::vector<std::string> places;
  std::string name = named;
  if (named[0] == '/') {
    places.push_back(named);
    name = named.substr(named.find_last_of('/') + 1);
  }
  if (const char* prefixes = std::getenv(prefix_variable)) {
    const std::string list = prefixes;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t end = std::min(list.find(':', at), list.size());
      std::string prefix = list.substr(at, end - at);
      if (prefix.rfind("${ORIGIN}", 0) == 0) prefix = folder_of(parent_file) + prefix.substr(9);
      if (!prefix.empty()) places.push_back(join(prefix, name));
      at = end + 1;
    }
  }
  places.push_back(join(folder_of(parent_file), name));
  places.push_back(name);
  std::error_code ec;
  const fs::path real = fs::canonical(fs::path(parent_file), ec);
  if (!ec) places.push_back(join(real.parent_path().string(), name));
  return places;
}

std::string linked_file(const std::string& parent_file, const std::string& named, const char* prefix_variable,
                        const std::string& how, const std::string& what) {
  const std::string context = what.empty() ? "through " + how : what + " (through " + how + ")";
  std::string first_problem;     // of the first place that holds something HDF5 cannot read
  bool first_is_a_loop = false;  // a loop of symbolic links: a bad name, as when given directly
  for (const std::string& place : linked_file_places(parent_file, named, prefix_variable)) {
    struct stat st {};
    if (::stat(place.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) continue;
      if (first_problem.empty()) {
        first_is_a_loop = err == ELOOP;
        first_problem = context + (first_is_a_loop ? ": '" + place + "' is a loop of symbolic links"
                                                   : ": cannot access '" + place + "': " + std::strerror(err));
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (first_problem.empty()) first_problem = context + ": '" + place + "' is not a regular file";
      continue;
    }
    // A pipe or a device: HDF5 would open it and wait on it, or read what it gives.
    if (!S_ISREG(st.st_mode)) throw IOError(context + ": '" + place + "' is not a regular file");
    try {
      check_input_file(place, context);
      open_serial(place, H5F_ACC_RDONLY, context + ": cannot open '" + place + "' as HDF5 (truncated or damaged?)");
      return place;
    } catch (const Error& e) {
      if (first_problem.empty()) first_problem = e.what();
    }
  }
  if (first_is_a_loop) throw InvalidArgument(first_problem);
  if (!first_problem.empty()) throw IOError(first_problem);
  return "";
}

namespace {

// A file and dataset as one key, the file by its canonical path.
std::string source_key(const std::string& file, const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  return (ec ? file : canonical.string()) + ":" + (path.empty() || path[0] != '/' ? "/" + path : path);
}

void add_file(std::vector<std::string>& files, const std::string& file) {
  if (std::none_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, file); }))
    files.push_back(file);
}

void follow_virtual(hid_t dataset, const std::string& vds_file, std::vector<std::string>& chain,
                    const std::string& what, std::vector<std::string>& sources) {
  const PropListHandle dcpl(check_id(H5Dget_create_plist(dataset), what + ": cannot read the virtual layout"));
  size_t count = 0;
  check_status(H5Pget_virtual_count(dcpl.get(), &count), what + ": cannot read the virtual layout");
  for (size_t i = 0; i < count; ++i) {
    const std::string name = mapping_name(H5Pget_virtual_filename, dcpl.get(), i);
    const std::string dset = mapping_name(H5Pget_virtual_dsetname, dcpl.get(), i);
    // A name with a printf-style pattern (%b) names many files, left to HDF5.
    if (name.empty() || dset.empty() || name.find('%') != std::string::npos || dset.find('%') != std::string::npos)
      continue;
    std::string file = vds_file;
    if (name != ".") {
      // HDF5 reads the fill value in place of a source it cannot open: one that is there must
      // be readable, at any depth (linked_file throws).
      file = linked_file(vds_file, name, "HDF5_VDS_PREFIX", "the virtual dataset's source file '" + name + "'", what);
      if (file.empty()) continue;  // missing: HDF5 reads the fill value
      add_file(sources, file);
    }
    const std::string key = source_key(file, dset);
    if (std::find(chain.begin(), chain.end(), key) != chain.end() || chain.size() >= 16) {
      std::string way;
      for (const std::string& k : chain) way += "'" + k + "' -> ";
      throw InvalidArgument(what + ": " +
                            (chain.size() >= 16 ? "virtual datasets take rows from virtual datasets more than 16 deep"
                                                : "a loop of virtual datasets") +
                            ": " + way + "'" + key + "' (HDF5 cannot read it)");
    }
    const FileHandle f = open_serial(file, H5F_ACC_RDONLY, what + ": cannot open '" + file + "' to read its rows");
    DatasetHandle source;
    H5E_BEGIN_TRY { source = DatasetHandle(H5Dopen2(f.get(), dset.c_str(), serial_link_access().get())); }
    H5E_END_TRY;
    hdf5_error_detail();
    if (!source.valid()) continue;  // not there: HDF5 reads the fill value
    // A source that an external link of its file names lies in the link's target.
    const std::string held = hdf5_name(source.get(), H5Fget_name);
    if (!held.empty() && !same_file(held, file)) add_file(sources, held);
    const PropListHandle sdcpl(H5Dget_create_plist(source.get()));
    if (sdcpl.valid() && H5Pget_layout(sdcpl.get()) == H5D_VIRTUAL) {
      chain.push_back(key);
      follow_virtual(source.get(), file, chain, what, sources);
      chain.pop_back();
    }
  }
}
}  // namespace

std::vector<std::string> virtual_source_files(hid_t dataset, const std::string& vds_file, const std::string& path,
                                              const std::string& what) {
  std::vector<std::string> chain{source_key(vds_file, path)};
  std::vector<std::string> sources;
  follow_virtual(dataset, vds_file, chain, what, sources);
  sources.erase(
      std::remove_if(sources.begin(), sources.end(), [&](const std::string& s) { return same_file(s, vds_file); }),
      sources.end());
  return sources;
}

void check_external_links(hid_t file, const std::string& file_name, const std::string& path, const std::string& what,
                          std::vector<std::string>* passed, LinkEnd* end) {
  follow_external_links(file, file_name, path, what, 0, passed, end);
}

}  // namespace shardops::io
