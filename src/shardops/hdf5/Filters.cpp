#include "shardops/hdf5/Filters.hpp"

#include <cstdlib>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

namespace {

/// Where Debian packages the filters h5py and hdf5plugin write: inputs are made with h5py,
/// so a user who meets one of its filters learns which package reads it.
std::string where_to_get(H5Z_filter_t id) {
  switch (id) {
    case 32000: return "LZF: Debian package hdf5-plugin-lzf";
    case 307:
    case 32004:
    case 32008: return "BZip2, LZ4, Bitshuffle: Debian package hdf5-filter-plugin";
    default: return "its HDF5 plugin";
  }
}

/// The registered names of the filters h5py and hdf5plugin write, for a dataset that does
/// not store one (HDF5's registry: https://github.com/HDFGroup/hdf5_plugins).
const char* registered_name(H5Z_filter_t id) {
  switch (id) {
    case 307: return "bzip2";
    case 32000: return "lzf";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32008: return "bitshuffle";
    case 32015: return "zstd";
    case 32017: return "sz";
    case 32026: return "blosc2";
    default: return "unnamed";
  }
}

}  // namespace

namespace {

// Whether no stored chunk of \p dataset went through its filter number \p index: an optional
// filter (H5Z_FLAG_OPTIONAL) that could not run when a chunk was written is skipped for that
// chunk, as the chunk's filter mask records, and HDF5 reads such chunks without it. Looks at
// every chunk, which only a dataset whose optional filter this HDF5 lacks pays for.
bool no_chunk_went_through(hid_t dataset, unsigned index) {
  // HDF5 1.10 takes the dataset's own dataspace here, not H5S_ALL.
  const DataspaceHandle space(H5Dget_space(dataset));
  hsize_t chunks = 0;
  if (!space.valid() || H5Dget_num_chunks(dataset, space.get(), &chunks) < 0) return false;
  for (hsize_t k = 0; k < chunks; ++k) {
    unsigned mask = 0;
    haddr_t address = 0;
    hsize_t size = 0;
    if (H5Dget_chunk_info(dataset, space.get(), k, nullptr, &mask, &address, &size) < 0) return false;
    if ((mask & (1u << index)) == 0) return false;
  }
  return true;
}

}  // namespace

void check_filters_available(hid_t dataset, const std::string& what) {
  const PropListHandle dcpl(check_id(H5Dget_create_plist(dataset), what + ": cannot read the dataset's properties"));
  const int n = check_value(H5Pget_nfilters(dcpl.get()), what + ": cannot read the dataset's filters");
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;  // an optional filter may have been skipped for some chunks
    std::size_t nvalues = 0;
    std::vector<char> name(256, '\0');
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues, nullptr, name.size(),
                                           name.data(), &config);
    if (id < 0) throw IOError(with_hdf5_detail(what + ": cannot read filter " + std::to_string(i) + " of the dataset"));
    const htri_t available = H5Zfilter_avail(id);
    hdf5_error_detail();  // clear the stack
    if (available > 0) continue;
    if ((flags & H5Z_FLAG_OPTIONAL) != 0 && no_chunk_went_through(dataset, static_cast<unsigned>(i))) {
      hdf5_error_detail();
      continue;
    }
    hdf5_error_detail();
    const std::string filter_name = name[0] != '\0' ? std::string(name.data()) : std::string(registered_name(id));
    throw IOError(what + ": the data is stored with HDF5 filter " + std::to_string(id) + " (" + filter_name +
                  "), which this HDF5 cannot load; " + plugin_advice(where_to_get(id)));
  }
}

std::string plugin_advice(const std::string& source) {
  std::string advice = "install it (" + source + ") or point HDF5_PLUGIN_PATH at the folder that has it";
  // HDF5 looks only in HDF5_PLUGIN_PATH's folders where it is set, and loads no plugin at
  // all where HDF5_PLUGIN_PRELOAD is "::".
  const char* path = std::getenv("HDF5_PLUGIN_PATH");
  const char* preload = std::getenv("HDF5_PLUGIN_PRELOAD");
  if (preload != nullptr && std::string(preload) == "::")
    advice += "; HDF5_PLUGIN_PRELOAD is '::' in this job's environment, which turns every HDF5 plugin off";
  else if (path != nullptr)
    advice += std::string("; HDF5_PLUGIN_PATH is '") + path +
              "' in this job's environment, so HDF5 looks for plugins only there, not in its own plugin folder "
              "(importing TensorFlow sets it to 'disable')";
  return advice;
}

}  // namespace shardops::io
