#include "shardops/hdf5/TypeMap.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace shardops::io {

namespace {

TypeHandle copy_type(hid_t predefined) {
  return TypeHandle(check_id(H5Tcopy(predefined), "H5Tcopy", ErrorKind::Internal));
}

void must(herr_t status, const char* call) { check_status(status, call, ErrorKind::Internal); }

// h5py's float16: IEEE_F32 copied, then sign 15, exponent 10..14 (5 bits), mantissa 0..9, bias 15.
TypeHandle half_type(H5T_order_t order) {
  TypeHandle t = copy_type(H5T_IEEE_F32LE);
  must(H5Tset_fields(t.get(), 15, 10, 5, 0, 10), "H5Tset_fields");
  must(H5Tset_size(t.get(), 2), "H5Tset_size");
  must(H5Tset_ebias(t.get(), 15), "H5Tset_ebias");
  must(H5Tset_order(t.get(), order), "H5Tset_order");
  return t;
}

// h5py's bool: enum {FALSE = 0, TRUE = 1} over an 8-bit signed integer.
TypeHandle bool_type(hid_t base) {
  TypeHandle t(check_id(H5Tenum_create(base), "H5Tenum_create", ErrorKind::Internal));
  const std::int8_t no = 0, yes = 1;
  must(H5Tenum_insert(t.get(), "FALSE", &no), "H5Tenum_insert");
  must(H5Tenum_insert(t.get(), "TRUE", &yes), "H5Tenum_insert");
  return t;
}

// h5py's complex: compound {r, i} of two floats, r first.
TypeHandle complex_type(hid_t part, std::size_t part_size) {
  TypeHandle t(check_id(H5Tcreate(H5T_COMPOUND, 2 * part_size), "H5Tcreate", ErrorKind::Internal));
  must(H5Tinsert(t.get(), "r", 0, part), "H5Tinsert");
  must(H5Tinsert(t.get(), "i", part_size, part), "H5Tinsert");
  return t;
}

H5T_order_t native_order() {
  const std::uint16_t probe = 1;
  return *reinterpret_cast<const unsigned char*>(&probe) == 1 ? H5T_ORDER_LE : H5T_ORDER_BE;
}

[[noreturn]] void unsupported(const std::string& what, H5T_class_t cls, const std::string& detail) {
  throw InvalidArgument(what + ": unsupported HDF5 type class " + type_class_name(cls) + " (" + detail +
                        "); shardops reads integers of 1/2/4/8 bytes, IEEE floats of 2/4/8 bytes, h5py's bool "
                        "enum, h5py's complex compound {r, i}, and variable- or fixed-length strings");
}

std::string member_name(hid_t type, unsigned i) {
  std::unique_ptr<char, decltype(&H5free_memory)> name(H5Tget_member_name(type, i), H5free_memory);
  if (!name) throw IOError(with_hdf5_detail("H5Tget_member_name"));
  return name.get();
}

DType integer_dtype(hid_t type, const std::string& what) {
  const std::size_t size = H5Tget_size(type);
  const H5T_sign_t sign = H5Tget_sign(type);
  if (sign < 0) throw IOError(with_hdf5_detail(what + ": cannot read the sign of its integer type"));
  const bool is_signed = sign == H5T_SGN_2;
  switch (size) {
    case 1: return is_signed ? DType::Int8 : DType::UInt8;
    case 2: return is_signed ? DType::Int16 : DType::UInt16;
    case 4: return is_signed ? DType::Int32 : DType::UInt32;
    case 8: return is_signed ? DType::Int64 : DType::UInt64;
    default: break;
  }
  unsupported(what, H5T_INTEGER, "integer of " + std::to_string(size) + " bytes");
}

DType float_dtype(hid_t type, const std::string& what) {
  const std::size_t size = H5Tget_size(type);
  if (size == 4) return DType::Float32;
  if (size == 8) return DType::Float64;
  if (size == 2) {
    std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    check_status(H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize), what + ": cannot read its float layout");
    if (spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 && H5Tget_ebias(type) == 15) {
      return DType::Float16;
    }
    unsupported(what, H5T_FLOAT,
                "2-byte float that is not IEEE half (exponent " + std::to_string(esize) + " bits, mantissa " +
                    std::to_string(msize) + " bits, e.g. bfloat16)");
  }
  unsupported(what, H5T_FLOAT, "float of " + std::to_string(size) + " bytes, e.g. numpy.longdouble");
}

DType enum_dtype(hid_t type, const std::string& what) {
  const int n = check_value(H5Tget_nmembers(type), what + ": cannot read its enum members");
  TypeHandle base(check_id(H5Tget_super(type), what + ": cannot read its enum base type"));
  // Compare member values in the enum's own base type with FALSE/TRUE converted to it.
  TypeHandle value_type = copy_type(H5T_NATIVE_LLONG);
  bool is_bool = n == 2;
  for (int i = 0; is_bool && i < n; ++i) {
    const std::string name = member_name(type, static_cast<unsigned>(i));
    long long value = 0;
    std::size_t base_size = H5Tget_size(base.get());
    std::unique_ptr<unsigned char[]> raw(
        new unsigned char[base_size > sizeof(long long) ? base_size : sizeof(long long)]());
    check_status(H5Tget_member_value(type, static_cast<unsigned>(i), raw.get()),
                 what + ": cannot read its enum values");
    check_status(H5Tconvert(base.get(), value_type.get(), 1, raw.get(), nullptr, H5P_DEFAULT),
                 what + ": cannot convert its enum values");
    std::memcpy(&value, raw.get(), sizeof value);
    if (!((name == "FALSE" && value == 0) || (name == "TRUE" && value == 1))) is_bool = false;
  }
  if (is_bool) return DType::Bool;
  unsupported(what, H5T_ENUM,
              "an enum with " + std::to_string(n) + " members that is not h5py's bool {FALSE=0, TRUE=1}");
}

DType compound_dtype(hid_t type, const std::string& what) {
  const int n = check_value(H5Tget_nmembers(type), what + ": cannot read its compound members");
  std::string names;
  // h5py reads {r, i} as complex, and {i, r} (the names in the other order, wherever the
  // members lie) as a structured array, whose fields no TensorFlow dtype holds.
  bool r_then_i = n == 2;
  std::size_t part = 0;
  bool floats = true;
  for (int i = 0; i < n; ++i) {
    const std::string name = member_name(type, static_cast<unsigned>(i));
    names += (i ? ", " : "") + name;
    r_then_i = r_then_i && name == (i == 0 ? "r" : "i");
    TypeHandle member(
        check_id(H5Tget_member_type(type, static_cast<unsigned>(i)), what + ": cannot read a member type"));
    const std::size_t size = H5Tget_size(member.get());
    if (H5Tget_class(member.get()) != H5T_FLOAT || (size != 4 && size != 8) || (part != 0 && size != part))
      floats = false;
    part = size;
  }
  if (r_then_i && floats) return part == 4 ? DType::Complex64 : DType::Complex128;
  unsupported(what, H5T_COMPOUND,
              "compound {" + names + "}; only h5py's complex {r, i} of two float32 or two float64 is supported");
}

}  // namespace

const char* type_class_name(H5T_class_t cls) noexcept {
  switch (cls) {
    case H5T_INTEGER: return "H5T_INTEGER";
    case H5T_FLOAT: return "H5T_FLOAT";
    case H5T_TIME: return "H5T_TIME";
    case H5T_STRING: return "H5T_STRING";
    case H5T_BITFIELD: return "H5T_BITFIELD";
    case H5T_OPAQUE: return "H5T_OPAQUE";
    case H5T_COMPOUND: return "H5T_COMPOUND";
    case H5T_REFERENCE: return "H5T_REFERENCE";
    case H5T_ENUM: return "H5T_ENUM";
    case H5T_VLEN: return "H5T_VLEN";
    case H5T_ARRAY: return "H5T_ARRAY";
    default: break;
  }
  return "H5T_NO_CLASS";
}

TypeHandle file_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return bool_type(H5T_STD_I8LE);
    case DType::Int8: return copy_type(H5T_STD_I8LE);
    case DType::Int16: return copy_type(H5T_STD_I16LE);
    case DType::Int32: return copy_type(H5T_STD_I32LE);
    case DType::Int64: return copy_type(H5T_STD_I64LE);
    case DType::UInt8: return copy_type(H5T_STD_U8LE);
    case DType::UInt16: return copy_type(H5T_STD_U16LE);
    case DType::UInt32: return copy_type(H5T_STD_U32LE);
    case DType::UInt64: return copy_type(H5T_STD_U64LE);
    case DType::Float16: return half_type(H5T_ORDER_LE);
    case DType::Float32: return copy_type(H5T_IEEE_F32LE);
    case DType::Float64: return copy_type(H5T_IEEE_F64LE);
    case DType::Complex64: return complex_type(H5T_IEEE_F32LE, 4);
    case DType::Complex128: return complex_type(H5T_IEEE_F64LE, 8);
    case DType::String: break;  // the type depends on the strings: string_file_type()
  }
  throw InternalError(std::string("io::file_type: no HDF5 type for dtype ") + dtype_name(dtype));
}

TypeHandle memory_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return bool_type(H5T_NATIVE_INT8);
    case DType::Int8: return copy_type(H5T_NATIVE_INT8);
    case DType::Int16: return copy_type(H5T_NATIVE_INT16);
    case DType::Int32: return copy_type(H5T_NATIVE_INT32);
    case DType::Int64: return copy_type(H5T_NATIVE_INT64);
    case DType::UInt8: return copy_type(H5T_NATIVE_UINT8);
    case DType::UInt16: return copy_type(H5T_NATIVE_UINT16);
    case DType::UInt32: return copy_type(H5T_NATIVE_UINT32);
    case DType::UInt64: return copy_type(H5T_NATIVE_UINT64);
    case DType::Float16: return half_type(native_order());
    case DType::Float32: return copy_type(H5T_NATIVE_FLOAT);
    case DType::Float64: return copy_type(H5T_NATIVE_DOUBLE);
    case DType::Complex64: return complex_type(H5T_NATIVE_FLOAT, sizeof(float));
    case DType::Complex128: return complex_type(H5T_NATIVE_DOUBLE, sizeof(double));
    case DType::String: break;  // string_file_type() / string_memory_type()
  }
  throw InternalError(std::string("io::memory_type: no HDF5 type for dtype ") + dtype_name(dtype));
}

TypeHandle string_file_type(const StringFormat& format) {
  TypeHandle t = copy_type(H5T_C_S1);
  if (format.fixed_length) {
    if (format.width < 1) {
      throw InternalError("io::string_file_type: fixed-length width " + std::to_string(format.width));
    }
    must(H5Tset_size(t.get(), static_cast<std::size_t>(format.width)), "H5Tset_size");
    must(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  } else {
    must(H5Tset_size(t.get(), H5T_VARIABLE), "H5Tset_size(H5T_VARIABLE)");
    must(H5Tset_strpad(t.get(), H5T_STR_NULLTERM), "H5Tset_strpad");  // as h5py's string_dtype()
  }
  must(H5Tset_cset(t.get(), format.utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII), "H5Tset_cset");
  return t;
}

StringFormat string_format_of(hid_t type, const std::string& what) {
  StringFormat format;
  const htri_t variable = check_value(H5Tis_variable_str(type), what + ": cannot read its string type");
  const H5T_cset_t cset = H5Tget_cset(type);
  if (cset == H5T_CSET_ERROR) throw IOError(with_hdf5_detail(what + ": cannot read its string charset"));
  if (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) {
    unsupported(
        what, H5T_STRING,
        "a string of charset " + std::to_string(static_cast<int>(cset)) + "; strings are read as ASCII or UTF-8");
  }
  format.utf8 = cset == H5T_CSET_UTF8;
  format.fixed_length = variable == 0;
  if (format.fixed_length) {
    const std::size_t size = H5Tget_size(type);
    if (size == 0) throw IOError(with_hdf5_detail(what + ": cannot read its string width"));
    format.width = static_cast<std::int64_t>(size);
  }
  return format;
}

TypeHandle string_memory_type(hid_t type, const std::string& what) {
  const StringFormat format = string_format_of(type, what);
  // Fixed length: the same width and charset, NULPAD: what h5py reads S<n> with. A
  // NULPAD dataset then needs no conversion (its bytes, embedded NULs included, are
  // read as stored); NULLTERM and SPACEPAD data get HDF5's conversion, as in h5py.
  return string_file_type(format);
}

DType dtype_from_hdf5(hid_t type, const std::string& what) {
  const H5T_class_t cls = H5Tget_class(type);
  switch (cls) {
    case H5T_INTEGER: return integer_dtype(type, what);
    case H5T_FLOAT: return float_dtype(type, what);
    case H5T_ENUM: return enum_dtype(type, what);
    case H5T_COMPOUND: return compound_dtype(type, what);
    case H5T_STRING: string_format_of(type, what); return DType::String;
    case H5T_NO_CLASS:
    case H5T_NCLASSES: throw IOError(with_hdf5_detail(what + ": cannot read its datatype"));
    case H5T_ARRAY:
      // h5py's dtype(('f4', (2,))): each element a small array, which TF has no dtype for.
      unsupported(what, cls, "each element an array; store it as extra dimensions of the dataset instead");
    default: break;
  }
  unsupported(what, cls, "not a numeric type");
}

}  // namespace shardops::io
