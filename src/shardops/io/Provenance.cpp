#include "shardops/io/Provenance.hpp"

#include "shardops/Version.hpp"
#include "shardops/io/Hdf5Handle.hpp"

namespace shardops::io {

namespace {
void write_one(hid_t object, hid_t type, hid_t space, const std::string& name, const std::string& value,
               const std::string& what) {
  const std::string failure = what + ": cannot write the attribute '" + name + "'";
  const htri_t exists = check_value(H5Aexists(object, name.c_str()), failure);
  if (exists > 0) check_status(H5Adelete(object, name.c_str()), failure);
  const AttributeHandle attr(
      check_id(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), failure));
  const char* text = value.c_str();
  check_status(H5Awrite(attr.get(), type, &text), failure);
}
}  // namespace

void write_provenance(hid_t object, const Attributes& attributes, const std::string& what) {
  const TypeHandle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy(H5T_C_S1)", ErrorKind::Internal));
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size(H5T_VARIABLE)", ErrorKind::Internal);
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset(H5T_CSET_UTF8)", ErrorKind::Internal);
  const DataspaceHandle space(check_id(H5Screate(H5S_SCALAR), "H5Screate(H5S_SCALAR)", ErrorKind::Internal));
  Attributes all = attributes;
  all[kVersionAttribute] = SHARDOPS_VERSION_STRING;
  for (const auto& [name, value] : all) write_one(object, type.get(), space.get(), name, value, what);
}

}  // namespace shardops::io
