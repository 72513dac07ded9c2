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

/// \brief Where HDF5 1.10 looks for the file \p named by a link in \p parent_file, in its
/// order (H5F_prefix_open_file): \p named itself if absolute (else its last component from
/// here on), then under each folder of the environment variable \p prefix_variable
/// (HDF5_EXT_PREFIX for external links, HDF5_VDS_PREFIX for virtual datasets; `${ORIGIN}` is
/// the parent's folder), in \p parent_file's folder, relative to the working directory, and in
/// the folder \p parent_file's symbolic links lead to.
std::vector<std::string> linked_file_places(const std::string& parent_file, const std::string& named,
                                            const char* prefix_variable);

/// \brief The file HDF5 opens for that link: the first of linked_file_places() that holds a
/// file HDF5 can read (checked as an input is, then opened); "" where no place holds anything
/// (HDF5 then says the link leads nowhere, or reads a virtual dataset's fill value).
/// \throws IOError naming \p what and \p how ("the external link '/x' in 'F'") with the first
/// place's problem where places hold something but none can be read (not a regular file, not
/// readable, not HDF5, marked as open for writing, truncated or damaged), or at once for a pipe
/// or a device, which HDF5 would wait on without end. \throws InvalidArgument where that first
/// place is a loop of symbolic links (a bad name, as an input named directly is).
std::string linked_file(const std::string& parent_file, const std::string& named, const char* prefix_variable,
                        const std::string& how, const std::string& what);

/// \brief Before HDF5 follows the external links on \p path (absolute, or relative to \p file,
/// an open file or group of the file named \p file_name): follows them itself, file by file
/// (serial opens, each target found and checked by linked_file() before it is opened), and
/// throws its IOError for a target that is there but cannot be read. Returns where a target
/// file is missing (HDF5 says the link leads nowhere) and where every file opens. Soft links
/// end the walk. \p passed, if given, gets each file the links lead through or to (inputs
/// as much as the one named: another program writing one is an error).
/// \p end, if given, gets where the walk ended: the file the last link led to (\p file_name
/// where none did) and the path left to look up there.
struct LinkEnd {
  std::string file, path;
};
void check_external_links(hid_t file, const std::string& file_name, const std::string& path, const std::string& what,
                          std::vector<std::string>* passed = nullptr, LinkEnd* end = nullptr);

/// \brief The files of the sources of the virtual dataset \p dataset (\p path in
/// \p vds_file), at any depth (sources that are virtual datasets themselves, in this file or
/// others), and the file a source reached through an external link lies in; \p vds_file itself
/// left out. Each found and checked by linked_file() (HDF5_VDS_PREFIX): HDF5 reads the fill
/// value in place of a source it cannot open, so one that is there but cannot be read is its
/// IOError naming \p what, where only a missing one reads as the fill value. Sources named by
/// a pattern are left to HDF5. \throws InvalidArgument naming \p what if the sources lead back
/// to one already on the way (HDF5 1.10 recurses without end reading a virtual dataset that
/// takes rows from itself, and reads fill values for a loop through other files), or go more
/// than 16 deep.
std::vector<std::string> virtual_source_files(hid_t dataset, const std::string& vds_file, const std::string& path,
                                              const std::string& what);

}  // namespace shardops::io
