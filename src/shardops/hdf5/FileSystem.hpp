#pragma once
/// \file
/// \brief One-rank filesystem steps of the io layer: checking an input file,
/// resolving an output path, temporary files beside a target, reserving space, rename, remove.
///
/// None of these is collective; callers run them on one rank (or each rank) inside
/// run_agreed so every rank raises the same error. Errors: a missing input file is
/// InvalidArgument (bad input, exit 2); everything the filesystem refuses is IOError (3).

#include <optional>
#include <string>
#include <vector>

namespace shardops::io {

/// \brief Where the HDF5 superblock of the open file \p fd of \p size bytes lies: where
/// HDF5 looks for its signature, at 0 or past a user block at 512, 1024, 2048, …; nullopt
/// where there is none.
std::optional<long long> hdf5_superblock_at(int fd, long long size);

/// \brief \throws IOError naming \p what (and \p role: "the input file", "the existing
/// output file") if \p file's superblock says an HDF5 program has it open for writing (its
/// write flags, SWMR's too): HDF5 refuses such a file, and what it holds may be half-written.
/// Nothing for a file that cannot be read or has no superblock (its open says why).
void refuse_if_marked_open_for_writing(const std::string& file, const std::string& role, const std::string& what);

/// \brief Checks that \p file can be read as HDF5: it exists (else InvalidArgument),
/// is a regular file, can be opened for reading and carries the HDF5 signature
/// (else IOError). \p what names the dataset being read, for the message.
void check_input_file(const std::string& file, const std::string& what);

/// \brief \p file as an absolute path with its symbolic links resolved, a link to a
/// file that does not exist yet included: where a write to \p file lands.
/// \throws InvalidArgument naming \p what for a loop of links.
std::string resolved_path(const std::string& file, const std::string& what);

/// \brief The path an output to \p file really goes to (symbolic links resolved, so
/// the temporary file lands beside the real file). Checks that its directory exists,
/// is a directory and is writable, and that an existing \p file is a regular file.
/// \throws IOError naming \p what and the reason.
std::string resolve_output_path(const std::string& file, const std::string& what);

/// \brief True if \p a and \p b name the same file: the same inode where both exist; where
/// one does not exist yet, where a write to each would land (resolved_path) is the same name
/// in the same folder (its device and inode: one folder reached by two paths, through a bind
/// mount or a link to a folder, is one). Never throws (a loop of links: compared as given).
bool same_file(const std::string& a, const std::string& b) noexcept;

/// True if \p path exists (any kind of file).
bool path_exists(const std::string& path) noexcept;

/// "PID.NANOS.COUNTER": unique among the processes of one machine and over time.
std::string unique_token();

/// "pid P on host H": this process, for messages and marks other processes read.
std::string this_process_text();

/// \brief The user name of the owner of \p path where that is not this user and this user
/// may not read it ("uid N" without a name), else "": who can undo or remove a file another
/// user's job left.
std::string other_owner_of_unreadable(const std::string& path);

/// \brief The start of the hidden names of the files a job keeps beside \p target (its
/// new file, lock, journal, notes): "." + the target's name, or, for a name too long to take
/// a suffix within the file system's 255 bytes, "." + its first 80 bytes + "~" + a hash of
/// the whole name (the same in every job, so that the next one finds what a killed one left).
std::string hidden_stem(const std::string& target);

/// \brief "DIR/" + hidden_stem(target) + \p suffix, DIR being \p target's folder.
std::string hidden_path_beside(const std::string& target, const std::string& suffix);

/// \brief A fresh name beside \p target: "DIR/.NAME.shardops-tmp.PID.NANOS.COUNTER".
std::string temp_path_beside(const std::string& target);

/// \brief Renames the new file \p temp to \p target, which must not exist: a file that
/// appeared there while the job ran is never replaced (IOError naming \p what). With
/// \p durable, \p temp is flushed to disk first and the directory after.
void rename_new_file(const std::string& temp, const std::string& target, bool durable, const std::string& what);

/// \brief Reserves the bytes [offset, offset + length) of the open file \p fd on disk, so
/// that writing them cannot run out of space (MPI-IO may report a write that failed for
/// lack of space as a success). Returns false if the file system cannot reserve space
/// (the write is then checked only afterwards). \throws IOError naming \p what and the
/// space left in \p dir if there is not enough space or quota.
/// With \p keep_size the file's size does not change (room past its end).
bool reserve_space(int fd, long long offset, long long length, const std::string& dir, const std::string& what,
                   bool keep_size = false);

/// \brief Checks, before anything is written, that a dataset of \p bytes can fit in the
/// file system holding \p dir, and that its file, then about \p file_end bytes long, stays
/// within the largest file this process may write (RLIMIT_FSIZE: `ulimit -f`, which Slurm
/// carries from the submitting shell into the job). \throws IOError naming \p what, the
/// bytes and the space or limit if not. HDF5 extends its file to each dataset it allocates
/// and, after a write past what the file system or the limit allows, cannot close the file:
/// the job would crash or hang at its end instead of failing cleanly. An output made as it
/// is written (LazyTensor) is bounded by no memory, so a shape of terabytes reaches the
/// file first. Not a reservation: the space is reserved as the rows are written
/// (reserve_space).
void expect_room(const std::string& dir, long long bytes, long long file_end, const std::string& what);

/// \brief \throws IOError naming \p what unless the file system of \p dir has the free inodes
/// that a job of \p ranks ranks needs there: \p own files of its own, and for Open MPI's shared
/// file pointer two per rank, or none at all (Open MPI 4.1 carries on without them where no rank
/// can make them, but waits for ever in MPI_File_close where some ranks made theirs and others
/// could not). Nothing is checked where the file system does not count inodes (btrfs).
void expect_inodes(const std::string& dir, long long own, int ranks, const std::string& what);

/// \brief "; the largest file this job may write is N bytes (the file size limit, `ulimit
/// -f`)" where the process has such a limit, else "": appended to a failed write, which
/// HDF5 reports without the reason (EFBIG).
std::string file_size_limit_text();

/// \brief How many more files this process may open (RLIMIT_NOFILE, `ulimit -n`, less the
/// descriptors open now); a large number where that cannot be told.
long long descriptors_left() noexcept;

/// \brief The descriptors an MPI-IO open may hold at once (the file, the two files of OMPIO's
/// shared file pointer for a file opened to write (mpi_io_side_files), HDF5's): fewer than
/// this left, an open fails for want of them.
constexpr long long kDescriptorsPerOpen = 8;

/// \brief "; this process has only K file descriptors left (too many open files: its limit,
/// `ulimit -n`, is N)" when fewer than kDescriptorsPerOpen are left, else "": appended to a
/// failed open, which HDF5 and MPI-IO report without the reason (EMFILE).
std::string descriptor_shortage_text();

/// "N bytes free" for the file system holding \p dir ("" if unknown).
std::string free_space_text(const std::string& dir);

/// The size in bytes of the file \p path; -1 if it cannot be read.
long long file_size(const std::string& path) noexcept;

/// Whether \p path still names the file open as \p fd (not renamed over, not removed).
bool still_named(int fd, const std::string& path) noexcept;

/// \brief The files in the directory of \p target whose names start with "." + the
/// target's name + \p suffix_prefix (such as ".shardops-tmp."): what earlier jobs left.
std::vector<std::string> leftovers_of(const std::string& target, const std::string& suffix_prefix);

/// Reads \p n bytes at \p at (pread, retried on EINTR and short reads); what lies past
/// the end of the file reads as zeros. Returns false with errno set if it cannot.
bool read_all(int fd, void* data, std::size_t n, long long at);

/// Writes all \p n bytes at \p at (pwrite, retried on EINTR and short writes). Returns
/// false with errno set (EIO for a write of 0 bytes) if it cannot.
bool write_all(int fd, const void* data, std::size_t n, long long at);

/// \brief write_all() for bytes that are fsynced next: the disk writes of each few MiB
/// start as soon as they are written (sync_file_range), while the rest is still being
/// copied, so the fsync has little left to wait for. Errors of those writes are the
/// fsync's to report, as before.
bool write_all_then_sync(int fd, const void* data, std::size_t n, long long at);

/// fsyncs the directory holding \p path (a new or removed name in it reaches the disk);
/// never throws.
void sync_dir_of(const std::string& path) noexcept;

/// Removes \p path if it exists; never throws.
void remove_quietly(const std::string& path) noexcept;

/// \brief The files Open MPI's MPI-IO makes beside \p file while rank \p rank has it open to
/// write: it sets up a shared file pointer at every MPI_File_open, though shardops uses none,
/// and the component left to do it (route/MpiStartup.hpp) keeps "FILE.data.RANK" and
/// "FILE.metadata.RANK", removed when the file closes. A job that stops or fails with the
/// file open removes them as it removes the file; after a SIGKILL the next job's clean-up
/// does (their names start with the file's).
std::vector<std::string> mpi_io_side_files(const std::string& file, int rank);

}  // namespace shardops::io
