#pragma once
/// \file
/// \brief The DType <-> HDF5 datatype mapping, laid out as h5py does so that NumPy
/// users read and write every file.
///
/// DType: written as (little-endian); read from
/// - int8..int64, uint8..uint64: H5T_STD_{I,U}nLE; any integer of 1/2/4/8 bytes, either byte order.
/// - float32, float64: H5T_IEEE_F32LE / F64LE; any float of 4 / 8 bytes.
/// - float16: h5py's IEEE half (sign bit 15, exponent bits 10..14 with bias 15, mantissa
///   bits 0..9); that layout, either byte order.
/// - bool: h5py's enum {FALSE=0, TRUE=1} of int8; that enum over any integer base.
/// - complex64/128: h5py's compound {r, i} of float32 / float64; {r, i} of two floats
///   of equal size 4 / 8, in any order.
/// - string, variable length: H5T_STRING of size H5T_VARIABLE with the input's charset
///   (h5py's `string_dtype()` is UTF-8); any variable-length H5T_STRING, UTF-8 or ASCII.
/// - string, fixed length: H5T_STRING of `width` bytes, NULPAD, the input's charset
///   (NumPy's `S<n>` is ASCII); any fixed-length H5T_STRING, NULPAD, NULLTERM or SPACEPAD.
///
/// A string tensor keeps the dataset's string type in its pool's StringFormat
/// (fixed_length, width, utf8), and is written back the same way; a fixed-length
/// output is widened to its longest string if that exceeds the width. Fixed-length
/// values are read as h5py reads them: through a NULPAD memory type of the same
/// width and charset (no conversion for NULPAD data, so embedded NULs stay; HDF5's
/// conversion for NULLTERM and SPACEPAD: cut at the first NUL, trailing spaces
/// dropped), then trailing NULs stripped as NumPy does ("a\0b" in S5 is 3 bytes).
///
/// Everything else (other enums and compounds, arrays (also of strings), variable
/// length sequences, references, opaque, bitfields, time) is refused with
/// InvalidArgument. Byte order and member layout differences are left to HDF5's
/// conversion: reads always use the native memory type of the DType (strings: the
/// memory type string_memory_type() gives).

#include <hdf5.h>

#include <string>

#include "shardops/core/DType.hpp"
#include "shardops/core/StringPool.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

/// The type shardops stores \p dtype as in a file (h5py's layout, little-endian).
/// \throws InternalError for DType::String (its type depends on the strings: string_file_type()).
TypeHandle file_type(DType dtype);
/// The in-memory type of \p dtype's C++ element type (native byte order): what
/// H5Dread / H5Dwrite get as the memory type. \throws InternalError for DType::String.
TypeHandle memory_type(DType dtype);

/// \brief The string type \p format names: variable length (char* in memory) or
/// \p format.width bytes NULPAD, with its charset. Used as both file and memory
/// type when writing (string types have no byte order).
/// \throws InternalError if a fixed-length width is below 1.
TypeHandle string_file_type(const StringFormat& format);

/// \brief The memory type to read the H5T_STRING type \p type with: variable
/// length: char* with its charset (HDF5 allocates each string: reclaim them);
/// fixed length: its width, NULPAD, its charset (see above: as h5py reads `S<n>`).
TypeHandle string_memory_type(hid_t type, const std::string& what);

/// \brief The StringFormat of the H5T_STRING type \p type (fixed_length, width, utf8).
/// \throws InvalidArgument naming \p what for a charset other than ASCII and UTF-8.
StringFormat string_format_of(hid_t type, const std::string& what);

/// \brief The DType a dataset of HDF5 type \p type is read as.
/// \param what the dataset's name (FILE:/path), for the message.
/// \throws InvalidArgument naming \p what and the HDF5 type class if the type is not supported.
DType dtype_from_hdf5(hid_t type, const std::string& what);

/// "H5T_INTEGER", "H5T_STRING", ... for messages.
const char* type_class_name(H5T_class_t cls) noexcept;

}  // namespace shardops::io
