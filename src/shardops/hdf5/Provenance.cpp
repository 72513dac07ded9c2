#include "shardops/hdf5/Provenance.hpp"

#include <cstdio>
#include <ctime>

#include "shardops/Version.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

#include <optional>
#include <vector>

namespace shardops::io {

namespace {
void write_one(hid_t object, hid_t type, const std::string& name, const AttributeValue& value,
               const std::string& what) {
  const std::string failure = what + ": cannot write the attribute '" + name + "'";
  const hsize_t n = value.items.size();
  const DataspaceHandle space(
      check_id(value.is_list ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_SCALAR), failure, ErrorKind::Internal));
  const htri_t exists = check_value(H5Aexists(object, name.c_str()), failure);
  if (exists > 0) check_status(H5Adelete(object, name.c_str()), failure);
  const AttributeHandle attr(
      check_id(H5Acreate2(object, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT), failure));
  std::vector<const char*> texts;
  for (const std::string& item : value.items) texts.push_back(item.c_str());
  const char* none = "";
  check_status(H5Awrite(attr.get(), type, texts.empty() ? &none : texts.data()), failure);
}
}  // namespace

std::string written_comment() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  ::gmtime_r(&now.tv_sec, &utc);
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &utc);
  char nanos[16] = {};
  std::snprintf(nanos, sizeof nanos, ".%09ldZ", static_cast<long>(now.tv_nsec));
  return std::string("shardops: written ") + when + nanos + ", " + this_process_text();
}

std::string comment_of(hid_t object) {
  const ssize_t size = H5Oget_comment(object, nullptr, 0);
  if (size <= 0) return "";
  std::string text(static_cast<std::size_t>(size) + 1, '\0');
  if (H5Oget_comment(object, text.data(), text.size()) < 0) return "";
  text.resize(static_cast<std::size_t>(size));
  return text;
}

std::string provenance_text(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return "";
  const AttributeHandle attr(H5Aopen(object, name, H5P_DEFAULT));
  const TypeHandle type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  const DataspaceHandle space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Sget_simple_extent_type(space.get()) != H5S_SCALAR) {
    return "";
  }
  const TypeHandle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND));
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    if (H5Aread(attr.get(), mem.get(), &text) < 0 || text == nullptr) return "";
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), mem.get(), value.data()) < 0) return "";
  value.erase(value.find_last_not_of('\0') + 1);
  return value;
}

namespace {
// The texts of the string attribute \p name of \p object as write_one() writes them (variable
// length, a scalar or a 1-D list); nullopt for any other attribute.
std::optional<AttributeValue> written_value(hid_t object, const std::string& name) {
  const AttributeHandle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  const TypeHandle type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  const DataspaceHandle space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Tis_variable_str(type.get()) <= 0 || H5Tget_cset(type.get()) != H5T_CSET_UTF8)
    return std::nullopt;
  const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
  if (shape != H5S_SCALAR && (shape != H5S_SIMPLE || H5Sget_simple_extent_ndims(space.get()) != 1)) return std::nullopt;
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return std::nullopt;
  const TypeHandle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND));
  std::vector<char*> texts(static_cast<std::size_t>(n), nullptr);
  if (!mem.valid() || (n > 0 && H5Aread(attr.get(), mem.get(), texts.data()) < 0)) return std::nullopt;
  std::vector<std::string> items;
  for (char* text : texts) {
    items.emplace_back(text != nullptr ? text : "");
    H5free_memory(text);
  }
  if (shape == H5S_SCALAR) return items.empty() ? std::nullopt : std::optional<AttributeValue>(items.front());
  return AttributeValue(std::move(items));
}
}  // namespace

bool has_provenance(hid_t object, const Attributes& attributes) {
  Attributes all = attributes;
  all.insert_or_assign(kVersionAttribute, AttributeValue(SHARDOPS_VERSION_STRING));
  H5O_info_t info;
  bool same = H5Oget_info2(object, &info, H5O_INFO_NUM_ATTRS) >= 0 && info.num_attrs == all.size();
  for (auto it = all.begin(); same && it != all.end(); ++it) {
    const std::optional<AttributeValue> found = written_value(object, it->first);
    same = found && found->is_list == it->second.is_list && found->items == it->second.items;
  }
  hdf5_error_detail();  // clear what a failed look left
  return same;
}

void write_provenance(hid_t object, const Attributes& attributes, const std::string& what, const std::string& comment) {
  const TypeHandle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy(H5T_C_S1)", ErrorKind::Internal));
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size(H5T_VARIABLE)", ErrorKind::Internal);
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset(H5T_CSET_UTF8)", ErrorKind::Internal);
  Attributes all = attributes;
  all.insert_or_assign(kVersionAttribute, AttributeValue(SHARDOPS_VERSION_STRING));
  for (const auto& [name, value] : all) write_one(object, type.get(), name, value, what);
  if (!comment.empty()) {
    check_status(H5Oset_comment(object, comment.c_str()), what + ": cannot write the dataset's comment");
  }
}

}  // namespace shardops::io
