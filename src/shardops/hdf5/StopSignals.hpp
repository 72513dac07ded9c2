#pragma once
/// \file
/// \brief What a job does when SIGTERM, SIGINT or SIGHUP stops it (Slurm's scancel and
/// time limit, Ctrl-C, a closed terminal; Open MPI's mpirun forwards them to every rank
/// and sends SIGKILL about a second later, so there is no time for collective clean-up),
/// or another signal whose default action would end it: SIGUSR1, SIGUSR2 (Slurm's
/// --signal), SIGXCPU (`ulimit -t`), SIGALRM. SIGPIPE is ignored (a closed stdout).
///
/// Each rank's handler cuts the existing targets it wrote past their end back to their
/// length, removes, itself and at once, the temporary files the job registered (both
/// async-signal-safe), releases the output locks this rank holds,
/// prints one line (on the rank that prints messages) and exits with
/// stop_exit_code(signal). Before the commit nothing of a target changed below its
/// original length, so nothing else needs undoing. The commit itself is a window in which a stop signal is
/// held back: the commit runs to its end and the signal is acted on right after it (the
/// message then says that the outputs were written). What SIGKILL leaves behind is
/// cleaned up by the next job that writes the same file (OutputTransaction).
///
/// The same handlers catch SIGBUS in an input file's pages mapped into the process
/// (MappedRange): the file was cut short by another program while the job read it.
/// The job cleans up as for a stop signal, says which file, and exits 3 (an I/O
/// failure). A SIGBUS anywhere else keeps its default action.

#include <signal.h>

#include <cstddef>
#include <string>

namespace shardops::io {

/// The exit code of a job stopped by \p signal: 128 + the signal number, as shells report
/// it (SIGHUP 129, SIGINT 130, SIGTERM 143).
constexpr int stop_exit_code(int signal) { return 128 + signal; }

/// \brief Installs the handlers for the stop signals above, ignores SIGXFSZ (a write past
/// the file size limit then fails with EFBIG) and SIGPIPE (once per process; a
/// program that embeds shardops may choose not to). \p print_messages: this rank
/// prints the one line (rank 0 of the job).
void install_stop_handlers(bool print_messages);

/// \brief Cleans up now what a stop signal would (cuts the existing targets back, removes
/// the registered files), for a rank about to end the whole job without the others.
void clean_up_as_if_stopped() noexcept;

/// \brief The job has failed on every rank and said why (rank 0 printed the error): from
/// now on a stop signal ends this rank at once with \p exit_code, silently. Open MPI's
/// mpirun sends SIGTERM to the ranks still running as soon as one exits non-zero, and a rank
/// still finishing (Kokkos and MPI_Finalize) would otherwise print that it was stopped
/// after the error, and exit with another code than the job's.
void exit_quietly_on_stop(int exit_code);

/// \brief For a library call that writes outputs (the Python module's write): while it
/// lives, each stop signal above whose action is the default one (it would end the process
/// and leave what SIGKILL leaves) is handled as in a job: what the call registered is cleaned
/// up, one line printed (where \p print_messages), and the process ends with
/// stop_exit_code(signal), as the default action would have ended it; a commit under way
/// ends first. SIGXFSZ is ignored if it was not handled. A signal the program handles itself
/// (Python's SIGINT, raised as KeyboardInterrupt when the call returns) or ignores is left
/// alone. The earlier actions come back when it goes.
class StopHandlersWhileWriting {
 public:
  explicit StopHandlersWhileWriting(bool print_messages);
  ~StopHandlersWhileWriting();
  StopHandlersWhileWriting(const StopHandlersWhileWriting&) = delete;
  StopHandlersWhileWriting& operator=(const StopHandlersWhileWriting&) = delete;

 private:
  static constexpr std::size_t kTaken = 14;  ///< the stop signals and SIGXFSZ
  int taken_[kTaken] = {};
  struct sigaction previous_[kTaken] = {};
  std::size_t count_ = 0;
};

/// \brief A slot in one of the tables the handlers read, given back when this goes (or
/// on reset()). Movable, not copyable. The base of the three registrations below, each of
/// which throws InternalError when its table is full.
class SignalSlot {
 public:
  SignalSlot() = default;
  ~SignalSlot() { reset(); }
  SignalSlot(SignalSlot&& other) noexcept;
  SignalSlot& operator=(SignalSlot&& other) noexcept;
  SignalSlot(const SignalSlot&) = delete;
  SignalSlot& operator=(const SignalSlot&) = delete;
  /// Stops watching (does nothing else: removes, cuts or unmaps nothing).
  void reset() noexcept;

 protected:
  SignalSlot(int slot, void (*release)(int)) noexcept : slot_(slot), release_(release) {}

 private:
  int slot_ = -1;
  void (*release_)(int) = nullptr;
};

/// \brief While it lives, \p path is removed if the process is stopped by a signal.
class CleanupPath : public SignalSlot {
 public:
  CleanupPath() = default;
  explicit CleanupPath(const std::string& path);
};

/// \brief While it lives, the open file \p fd is cut back to \p length bytes if the
/// process is stopped by a signal (before the paths are removed): an existing target
/// that this rank wrote past its end, before the commit. The caller keeps \p fd open.
/// Only while the target's \p lock file holds \p lock_text (the job's lock, not yet
/// marked as committing, FileLock::mark_committing): a rank stopped late cuts back no
/// file that another job, or its own commit, has changed since.
class CleanupTruncate : public SignalSlot {
 public:
  CleanupTruncate() = default;
  CleanupTruncate(int fd, long long length, const std::string& lock, const std::string& lock_text);
};

/// \brief While it lives, a SIGBUS at an address in [\p begin, \p begin + \p bytes) is
/// reported as \p file having been cut short (the file comment says what happens).
class MappedRange : public SignalSlot {
 public:
  MappedRange() = default;
  MappedRange(const void* begin, std::size_t bytes, const std::string& file);
};

/// \brief The commit: while one lives, a stop signal waits until it ends. At its end a
/// signal that came in is acted on (clean-up, message, exit); \p committed says whether
/// the outputs had been committed by then, for the message.
class CommitWindow {
 public:
  CommitWindow();
  ~CommitWindow();
  CommitWindow(const CommitWindow&) = delete;
  CommitWindow& operator=(const CommitWindow&) = delete;
  /// The outputs are in place: a signal from now on says so.
  void committed() noexcept;
  /// Ends the window before its scope does (once): a signal held back is acted on now.
  /// Rank 0 ends it as soon as its commit is done, before it tells the other ranks: a rank
  /// that cannot be reached would hold a stop signal back until SIGKILL, without a word.
  void end() noexcept;

 private:
  bool open_ = true;
};

}  // namespace shardops::io
