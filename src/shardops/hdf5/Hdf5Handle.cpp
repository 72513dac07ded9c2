#include "shardops/hdf5/Hdf5Handle.hpp"

#include <dlfcn.h>

#include <mutex>

namespace shardops::io {

void quiet_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (H5open() < 0 || H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) < 0) {
      throw InternalError("cannot initialise the HDF5 library");
    }
    // Debian's LZF plugin (hdf5-plugin-lzf, h5py's filter) calls liblzf without being
    // linked to it: with liblzf loaded for everyone first, HDF5 can load the plugin.
    static_cast<void>(::dlopen("liblzf.so.1", RTLD_NOW | RTLD_GLOBAL));
  });
}

bool files_still_open() noexcept { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE) > 0; }

namespace {
// H5Ewalk2 callback: keeps the first (innermost, walking upward) description.
herr_t take_innermost(unsigned n, const H5E_error2_t* entry, void* out) {
  auto* text = static_cast<std::string*>(out);
  if (n == 0 && entry != nullptr && entry->desc != nullptr) *text = entry->desc;
  return 0;
}
}  // namespace

std::string hdf5_error_detail() {
  std::string text;
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, &text) < 0) return std::string();
  H5Eclear2(H5E_DEFAULT);
  // HDF5's words for a part of the file in a format newer than it reads: what h5py on a later
  // HDF5 (a pip wheel) writes with libver='latest' (bool and complex datasets, for instance).
  if (text.rfind("bad version number", 0) == 0) {
    text += "; the file was written by a newer HDF5 than this one (" H5_VERSION
            "): h5py writes such files with libver='latest', and readable ones with its default libver";
  }
  return text;
}

bool hdf5_error_is(hid_t minor) {
  struct Seek {
    hid_t minor;
    bool found;
  } seek{minor, false};
  const auto look = [](unsigned, const H5E_error2_t* entry, void* data) -> herr_t {
    auto* s = static_cast<Seek*>(data);
    if (entry != nullptr && entry->min_num == s->minor) s->found = true;
    return 0;
  };
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, look, &seek) < 0) return false;
  return seek.found;
}

std::string with_hdf5_detail(const std::string& what) {
  const std::string detail = hdf5_error_detail();
  return detail.empty() ? what : what + " (HDF5: " + detail + ")";
}

hid_t check_id(hid_t id, const std::string& what, ErrorKind kind) {
  if (id < 0) throw_error(kind, with_hdf5_detail(what));
  return id;
}

void check_status(herr_t status, const std::string& what, ErrorKind kind) {
  if (status < 0) throw_error(kind, with_hdf5_detail(what));
}

}  // namespace shardops::io
