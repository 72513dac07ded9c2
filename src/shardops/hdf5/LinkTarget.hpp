#pragma once
/// \file
/// \brief The file an external link or a virtual dataset's source names, found as HDF5
/// looks for it, so that a target HDF5 could not open is told apart from a missing one:
/// HDF5 says only that the object was not found (a link) or reads the fill value (a
/// virtual dataset's source), where the file is there but not readable.

#include <hdf5.h>

#include <string>
#include <vector>

namespace shardops::io {

/// \brief Where HDF5 1.10 looks for the file \p named by a link in \p parent_file
/// (H5F_prefix_open_file): \p named itself if absolute (else its last component from here
/// on), then under each folder of the environment variable \p prefix_variable
/// (HDF5_EXT_PREFIX for external links, HDF5_VDS_PREFIX for virtual datasets; `${ORIGIN}`
/// is the parent's folder), in \p parent_file's folder, relative to the working directory,
/// and in the folder \p parent_file's symbolic links lead to.
/// \return the first of those that exists (of any kind), or "" if none does.
std::string find_linked_file(const std::string& parent_file, const std::string& named, const char* prefix_variable);

/// \brief Throws IOError naming \p what and \p file (found by find_linked_file, reached
/// through \p how: "the external link '/x'") if HDF5 cannot read \p file: not a regular
/// file, not readable, not HDF5, marked as open for writing, truncated or damaged.
/// Returns if it opens (then the object it should hold is what is missing).
void check_linked_file(const std::string& file, const std::string& how, const std::string& what);

/// \brief Before HDF5 follows the external links on \p path (absolute, or relative to \p file,
/// an open file or group of the file named \p file_name): follows them itself, file by file
/// (serial opens, each target found by find_linked_file and checked before it is opened), and
/// throws IOError as check_linked_file() does for the first target file that is there but
/// cannot be read — a folder or a pipe among them, which HDF5's MPI-IO driver would try to
/// read (a pipe without end). Returns where a target file is missing (HDF5 says the link
/// leads nowhere) and where every file opens. Soft links end the walk.
void check_external_links(hid_t file, const std::string& file_name, const std::string& path, const std::string& what);

/// \brief The source files of the virtual dataset \p dataset (of the file \p vds_file) that
/// are there, each found by find_linked_file (HDF5_VDS_PREFIX) and checked by
/// check_linked_file(): HDF5 reads the fill value in place of a source it cannot open, so
/// a source that is there but cannot be read is an IOError naming \p what, where only a
/// missing one reads as the fill value. Sources in \p vds_file itself ('.') are left out.
std::vector<std::string> virtual_source_files(hid_t dataset, const std::string& vds_file, const std::string& what);

}  // namespace shardops::io
