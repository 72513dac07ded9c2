#include "shardops/hdf5/FileListing.hpp"

#include <hdf5.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "shardops/core/DType.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/hdf5/FileAccess.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/LinkTarget.hpp"
#include "shardops/hdf5/PathLookup.hpp"
#include "shardops/hdf5/Provenance.hpp"
#include "shardops/hdf5/TypeMap.hpp"

namespace shardops::io {

namespace {

std::vector<std::int64_t> dims_of(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return std::vector<std::int64_t>(dims.begin(), dims.end());
}

std::string dtype_text(hid_t type) {
  try {
    return dtype_name(dtype_from_hdf5(type, ""));
  } catch (const Error&) {
    hdf5_error_detail();  // clear the stack
    return std::string("unsupported (") + type_class_name(H5Tget_class(type)) + ")";
  }
}

// An attribute's value as text: strings as they are, numbers as numbers, else its class.
std::string attribute_text(hid_t attr) {
  const TypeHandle type(H5Aget_type(attr));
  const DataspaceHandle space(H5Aget_space(attr));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const H5T_class_t cls = H5Tget_class(type.get());
  std::ostringstream os;
  if (n <= 0) return "[]";
  const auto list = [&](const auto& values) {
    if (n > 1 || H5Sget_simple_extent_ndims(space.get()) > 0) os << "[";
    for (hssize_t i = 0; i < n && i < 16; ++i) os << (i ? ", " : "") << values[static_cast<std::size_t>(i)];
    if (n > 16) os << ", ... (" << n << " values)";
    if (n > 1 || H5Sget_simple_extent_ndims(space.get()) > 0) os << "]";
  };
  if (cls == H5T_STRING) {
    const TypeHandle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND));
    if (H5Tis_variable_str(type.get()) > 0) {
      std::vector<char*> texts(static_cast<std::size_t>(n), nullptr);
      if (H5Aread(attr, mem.get(), texts.data()) < 0) return "(unreadable)";
      std::vector<std::string> values;
      for (char* t : texts) values.emplace_back(t != nullptr ? t : "");
      H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, texts.data());
      list(values);
    } else {
      const std::size_t width = H5Tget_size(type.get());
      std::vector<char> bytes(width * static_cast<std::size_t>(n));
      if (H5Aread(attr, mem.get(), bytes.data()) < 0) return "(unreadable)";
      std::vector<std::string> values;
      for (hssize_t i = 0; i < n; ++i) {
        std::string v(bytes.data() + static_cast<std::size_t>(i) * width, width);
        v.erase(v.find_last_not_of('\0') + 1);
        values.push_back(v);
      }
      list(values);
    }
  } else if (cls == H5T_INTEGER) {
    std::vector<long long> values(static_cast<std::size_t>(n));
    if (H5Aread(attr, H5T_NATIVE_LLONG, values.data()) < 0) return "(unreadable)";
    list(values);
  } else if (cls == H5T_FLOAT) {
    std::vector<double> values(static_cast<std::size_t>(n));
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()) < 0) return "(unreadable)";
    list(values);
  } else if (cls == H5T_ENUM) {
    // By their members' names (h5py's bool: FALSE, TRUE).
    const TypeHandle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND));
    const std::size_t width = H5Tget_size(mem.get());
    std::vector<unsigned char> bytes(width * static_cast<std::size_t>(n));
    if (!mem.valid() || H5Aread(attr, mem.get(), bytes.data()) < 0) return "(unreadable)";
    std::vector<std::string> values;
    for (hssize_t i = 0; i < n; ++i) {
      char member[256] = {};
      const void* value = bytes.data() + static_cast<std::size_t>(i) * width;
      values.emplace_back(H5Tenum_nameof(mem.get(), value, member, sizeof member) >= 0 ? member : "(not a member)");
    }
    list(values);
  } else {
    os << "(" << type_class_name(cls) << ")";
  }
  hdf5_error_detail();
  return os.str();
}

DatasetListing describe(hid_t dataset, const std::string& path, bool attributes) {
  DatasetListing d;
  d.path = path;
  const TypeHandle type(H5Dget_type(dataset));
  const DataspaceHandle space(H5Dget_space(dataset));
  d.shape = dims_of(space.get());
  d.dtype = dtype_text(type.get());
  // h5py's Empty: not a scalar, though it has no dims either; no op can read it.
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) d.problem = "a null dataspace (no data at all), " + d.dtype;
  const PropListHandle dcpl(H5Dget_create_plist(dataset));
  if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(d.shape.size());
    H5Pget_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
    d.chunks.assign(chunk.begin(), chunk.end());
  }
  for (int k = 0, n = H5Pget_nfilters(dcpl.get()); k < n; ++k) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char name[128] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(k), &flags, &nvalues, nullptr, sizeof name, name, &config);
    d.filters.push_back(name[0] != '\0' ? std::string(name) : "filter " + std::to_string(id));
  }
  if (attributes) {
    d.comment = comment_of(dataset);
    const int count = H5Aget_num_attrs(dataset);
    for (int k = 0; k < count; ++k) {
      const AttributeHandle attr(
          H5Aopen_by_idx(dataset, ".", H5_INDEX_NAME, H5_ITER_INC, static_cast<hsize_t>(k), H5P_DEFAULT, H5P_DEFAULT));
      char name[256] = {};
      H5Aget_name(attr.get(), sizeof name, name);
      d.attributes.emplace_back(name, attribute_text(attr.get()));
    }
  }
  hdf5_error_detail();
  return d;
}

struct Visit {
  std::string file;  ///< the file's name, as given
  std::string prefix;
  bool attributes;
  std::vector<DatasetListing>* out;
  hid_t access = H5P_DEFAULT;  ///< how links and datasets are opened (serial_link_access)
  /// Each dataset's path where the walk met it first (H5Ovisit lists an object once; a
  /// dataset with a second name, a hard link, is listed again under it by on_link).
  std::map<haddr_t, std::string> first_path = {};
};

// The dataset \p name of \p group (opened with \p access) listed as \p path, reached
// through \p link ("" where by its own name); one that cannot be opened is listed all the
// same, with why: a dataset left out would look like one that is not there.
void list_dataset(hid_t group, const char* name, hid_t access, const std::string& path, const std::string& link,
                  Visit* v) {
  const DatasetHandle d(H5Dopen2(group, name, access));
  DatasetListing listing;
  if (d.valid()) {
    listing = describe(d.get(), path, v->attributes);
  } else {
    listing.path = path;
    listing.problem = with_hdf5_detail("cannot be opened");
  }
  listing.link = link;
  v->out->push_back(std::move(listing));
}

herr_t on_object(hid_t group, const char* name, const H5O_info_t* info, void* data) {
  auto* v = static_cast<Visit*>(data);
  if (info->type != H5O_TYPE_DATASET) return 0;
  v->first_path.emplace(info->addr, v->prefix + name);
  list_dataset(group, name, H5P_DEFAULT, v->prefix + name, "", v);
  return 0;
}

// A hard link to a dataset the walk met under another name (H5Lvisit and H5Ovisit go in the
// same order, so the first name is the one on_object listed): listed under this name too.
void list_second_name(hid_t group, const char* name, Visit* v) {
  H5O_info_t object;
  if (H5Oget_info_by_name2(group, name, &object, H5O_INFO_BASIC, v->access) < 0) {
    hdf5_error_detail();
    return;
  }
  const auto first = v->first_path.find(object.addr);
  const std::string path = v->prefix + name;
  if (object.type != H5O_TYPE_DATASET || first == v->first_path.end() || first->second == path) return;
  list_dataset(group, name, v->access, path, "the same dataset as " + first->second, v);
}

// Soft and external links that lead to a dataset or a group (H5Lvisit does not follow them,
// so each is seen once, where it is).
herr_t on_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* v = static_cast<Visit*>(data);
  if (info->type == H5L_TYPE_HARD) {
    list_second_name(group, name, v);
    return 0;
  }
  if (info->type == H5L_TYPE_EXTERNAL) {
    // A target file that is there but cannot be read (HDF5 would say it leads to nothing,
    // or wait without end on a pipe) is listed with why.
    try {
      check_external_links(group, v->file, name, "");
    } catch (const Error& e) {
      DatasetListing listing;
      listing.path = v->prefix + name;
      listing.problem = std::string(e.kind() == ErrorKind::InvalidArgument ? "" : "cannot be read: ") + e.what();
      listing.link = link_text(group, name);
      v->out->push_back(std::move(listing));
      return 0;
    }
  }
  const htri_t resolves = H5Oexists_by_name(group, name, v->access);
  if (resolves <= 0) {
    // A link that leads to nothing (a missing file or object) or round in a loop: listed,
    // so that it is seen.
    DatasetListing listing;
    listing.path = v->prefix + name;
    const bool loop = resolves < 0 && hdf5_error_is(H5E_NLINKS);
    hdf5_error_detail();  // clears what the failed call left
    listing.problem = loop ? "leads through more links than HDF5 follows (16): a loop of links" : "leads to nothing";
    listing.link = link_text(group, name);
    v->out->push_back(std::move(listing));
    return 0;
  }
  H5O_info_t object;
  if (H5Oget_info_by_name2(group, name, &object, H5O_INFO_BASIC, v->access) < 0) {
    hdf5_error_detail();
    return 0;
  }
  if (object.type == H5O_TYPE_GROUP) {
    // Listed, not walked (a link may lead back up, round and round): its line says how.
    DatasetListing listing;
    listing.path = v->prefix + name;
    listing.problem = "a group; shardops ls " + v->file + ":" + listing.path + " lists its datasets";
    listing.link = link_text(group, name);
    v->out->push_back(std::move(listing));
    return 0;
  }
  if (object.type != H5O_TYPE_DATASET) return 0;
  list_dataset(group, name, v->access, v->prefix + name, link_text(group, name), v);
  return 0;
}

// A member name as dynamic-partition writes it: a number in decimal, without leading zeros.
bool partition_number(const char* name, std::int64_t& number) {
  const std::string text(name);
  if (text.empty() || text.size() > 18 || (text.size() > 1 && text[0] == '0')) return false;
  number = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + (c - '0');
  }
  return true;
}

herr_t on_member(hid_t, const char* name, const H5L_info_t*, void* data) {
  std::int64_t number = 0;
  if (partition_number(name, number)) static_cast<std::vector<std::int64_t>*>(data)->push_back(number);
  return 0;
}

}  // namespace

std::optional<std::int64_t> partition_group_size(const std::string& file, const std::string& path,
                                                 const std::string& what) {
  std::vector<std::int64_t> numbers;
  try {
    check_input_file(file, what);
    const FileHandle f = open_serial(file, H5F_ACC_RDONLY, what + ": cannot open '" + file + "'");
    const PropListHandle access = serial_link_access();
    check_external_links(f.get(), file, path, what);
    if (lookup_path(f.get(), path, what, access.get()).kind != ObjectKind::Group) return std::nullopt;
    const GroupHandle g(check_id(H5Gopen2(f.get(), path.c_str(), access.get()), what + ": cannot open the group"));
    check_status(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, on_member, &numbers),
                 what + ": cannot list the group");
  } catch (const Error&) {
    hdf5_error_detail();  // clears the stack: the read says what is wrong
    return std::nullopt;
  }
  std::sort(numbers.begin(), numbers.end());
  std::int64_t n = 0;
  while (n < static_cast<std::int64_t>(numbers.size()) && numbers[static_cast<std::size_t>(n)] == n) ++n;
  const std::string rule =
      " (a group given for a list of inputs stands for its datasets 0, 1, 2, …, as "
      "dynamic-partition writes them)";
  if (n == 0) throw InvalidArgument(what + ": '" + path + "' is a group with no dataset named 0" + rule);
  if (n < static_cast<std::int64_t>(numbers.size())) {
    throw InvalidArgument(what + ": the group '" + path + "' has a member named " +
                          std::to_string(numbers[static_cast<std::size_t>(n)]) + " but none named " +
                          std::to_string(n) + rule);
  }
  return n;
}

std::vector<DatasetListing> list_datasets(const std::string& file, const std::string& path, bool attributes) {
  const std::string what = file + ":" + path;
  check_input_file(file, what);
  const FileHandle f =
      open_serial(file, H5F_ACC_RDONLY, what + ": cannot open '" + file + "' as HDF5 (truncated or corrupt file?)");
  const PropListHandle access = serial_link_access();
  check_external_links(f.get(), file, path, what);
  const PathLookup found = lookup_path(f.get(), path, what, access.get());
  if (path != "/" && found.kind == ObjectKind::Missing) {
    throw InvalidArgument(what + ": '" + (found.stop.empty() ? path : found.stop) + "' does not exist in '" + file +
                          "'");
  }
  std::vector<DatasetListing> out;
  if (found.kind == ObjectKind::Dataset) {
    const DatasetHandle d(check_id(H5Dopen2(f.get(), path.c_str(), access.get()), what + ": cannot open the dataset"));
    out.push_back(describe(d.get(), path, attributes));
    out.back().link = link_text(f.get(), path);
    return out;
  }
  const GroupHandle g(check_id(H5Gopen2(f.get(), path.c_str(), H5P_DEFAULT), what + ": cannot open the group"));
  // Creation order where the groups track it (what h5py lists), else by name.
  const PropListHandle gcpl(H5Gget_create_plist(g.get()));
  unsigned order = 0;
  H5Pget_link_creation_order(gcpl.get(), &order);
  const H5_index_t index = (order & H5P_CRT_ORDER_INDEXED) != 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  Visit visit{file, path == "/" ? "/" : path + "/", attributes, &out, access.get()};
  hdf5_error_detail();
  check_status(H5Ovisit2(g.get(), index, H5_ITER_INC, on_object, &visit, H5O_INFO_BASIC),
               what + ": cannot walk the file");
  check_status(H5Lvisit(g.get(), index, H5_ITER_INC, on_link, &visit), what + ": cannot walk the file's links");
  return out;
}

}  // namespace shardops::io
