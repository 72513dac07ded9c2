#pragma once
/// \file
/// \brief RAII ownership of HDF5 identifiers, and the checks that turn a failed
/// HDF5 call into a shardops exception.
///
/// Every hid_t shardops opens lives in one of these handles, so an exception on any
/// path closes what was opened. HDF5's automatic error printing is switched off
/// (quiet_hdf5()); a failed call's message is ours, with the innermost entry of
/// HDF5's error stack appended as detail.

#include <hdf5.h>

#include <string>
#include <utility>

#include "shardops/core/Error.hpp"

namespace shardops::io {

/// \brief Owns one hid_t and closes it with \p Close. Move-only; an invalid id
/// (negative) is "no handle".
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) noexcept : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  /// Closes quietly (a destructor cannot report; use close() where failure matters).
  ~Handle() { reset(); }

  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  /// Closes now; returns the status of the close call (0 when there was nothing to close).
  herr_t close() noexcept { return id_ >= 0 ? Close(std::exchange(id_, H5I_INVALID_HID)) : 0; }
  void reset() noexcept { static_cast<void>(close()); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using FileHandle = Handle<H5Fclose>;
using DatasetHandle = Handle<H5Dclose>;
using DataspaceHandle = Handle<H5Sclose>;
using TypeHandle = Handle<H5Tclose>;
using PropListHandle = Handle<H5Pclose>;
using AttributeHandle = Handle<H5Aclose>;
using GroupHandle = Handle<H5Gclose>;

/// \brief Whether HDF5 still holds a file open in this process. Where a file could not be
/// closed (its flush failed: a write past the largest file the process may write, which no
/// truncation can undo), HDF5 tries again when MPI_Finalize ends the library, and crashes
/// there; a program whose job failed then ends without MPI_Finalize.
bool files_still_open() noexcept;

/// \brief Switches off HDF5's automatic printing of its error stack (once per
/// process; idempotent). Every entry point of the io layer calls it.
void quiet_hdf5();

/// \brief The innermost message on HDF5's current error stack ("truncated file:
/// eof = 96, ...", "unable to open file"), or "" if the stack is empty. Call it
/// right after the failed call, before any other HDF5 call clears the stack.
std::string hdf5_error_detail();

/// \brief \p what followed by ": " and the HDF5 detail, if there is one.
std::string with_hdf5_detail(const std::string& what);

/// \brief Whether HDF5's error stack (left as it is) holds the minor error \p minor
/// (H5E_NLINKS: more links on a path than HDF5 follows, a loop of them).
bool hdf5_error_is(hid_t minor);

/// \brief Returns \p id; throws \p kind with \p what (plus HDF5's detail) if it is negative.
hid_t check_id(hid_t id, const std::string& what, ErrorKind kind = ErrorKind::IO);
/// \brief Throws \p kind with \p what (plus HDF5's detail) if \p status is negative.
void check_status(herr_t status, const std::string& what, ErrorKind kind = ErrorKind::IO);
/// \brief Returns the tri-state result \p value (htri_t, or any non-negative count);
/// throws as check_status if it is negative.
template <class T>
T check_value(T value, const std::string& what, ErrorKind kind = ErrorKind::IO) {
  if (value < 0) throw_error(kind, with_hdf5_detail(what));
  return value;
}

/// \brief A name HDF5 gives of \p id, asked for twice (its length, then its bytes) through
/// \p get_name(id, buffer, size): H5Fget_name, H5Iget_name, or a lambda around a call with more
/// arguments (a virtual mapping's source). "" if HDF5 has none.
template <class GetName>
std::string hdf5_name(hid_t id, GetName get_name) {
  const ssize_t n = get_name(id, nullptr, 0);
  if (n <= 0) {
    hdf5_error_detail();  // clears the stack of a failed call
    return "";
  }
  std::string name(static_cast<std::size_t>(n) + 1, '\0');
  if (get_name(id, name.data(), name.size()) != n) {
    hdf5_error_detail();
    return "";
  }
  name.resize(static_cast<std::size_t>(n));
  return name;
}

}  // namespace shardops::io
