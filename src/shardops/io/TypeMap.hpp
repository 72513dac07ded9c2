#pragma once
/// \file
/// \brief The DType <-> HDF5 datatype mapping of SPEC section 3, laid out as h5py
/// does so NumPy users read and write every file.
///
/// | DType | written as (little-endian) | read from |
/// |---|---|---|
/// | int8..int64, uint8..uint64 | H5T_STD_{I,U}nLE | any integer of 1/2/4/8 bytes, either byte order |
/// | float32, float64 | H5T_IEEE_F32LE / F64LE | any float of 4 / 8 bytes |
/// | float16 | h5py's IEEE half: sign bit 15, exponent bits 10..14 (bias 15), mantissa 0..9 | that layout, either byte
/// order | | bool | h5py's enum {FALSE=0, TRUE=1} of int8 | that enum over any integer base | | complex64/128 | h5py's
/// compound {r, i} of float32 / float64 | {r, i} of two floats of equal size 4 / 8, any order |
///
/// Everything else (strings for now, other enums and compounds, arrays, variable
/// length, references, opaque, bitfields, time) is refused with InvalidArgument.
/// Byte order and member layout differences are left to HDF5's conversion: reads
/// always use the native memory type of the DType.

#include <hdf5.h>

#include <string>

#include "shardops/core/DType.hpp"
#include "shardops/io/Hdf5Handle.hpp"

namespace shardops::io {

/// The type shardops stores \p dtype as in a file (h5py's layout, little-endian).
TypeHandle file_type(DType dtype);
/// The in-memory type of \p dtype's C++ element type (native byte order): what
/// H5Dread / H5Dwrite get as the memory type.
TypeHandle memory_type(DType dtype);

/// \brief The DType a dataset of HDF5 type \p type is read as.
/// \param what the dataset's name (FILE:/path), for the message.
/// \throws InvalidArgument naming \p what and the HDF5 type class if the type is not supported.
DType dtype_from_hdf5(hid_t type, const std::string& what);

/// "H5T_INTEGER", "H5T_STRING", ... for messages.
const char* type_class_name(H5T_class_t cls) noexcept;

}  // namespace shardops::io
