#include "shardops/hdf5/StopSignals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"

namespace shardops::io {

namespace {

// Paths to remove on a stop signal. Registration allocates; the handler only reads
// the pointers and calls unlink().
constexpr int kSlots = 1024;
std::array<std::atomic<char*>, kSlots> g_paths{};

// Files to cut back to a length on a stop signal (an existing target written in place
// past its end): the descriptor and the length. A slot is free while its fd is -1 and
// taken but not yet armed while it is -2; the handler acts on fds >= 0 only.
// A cut is made only while the target's lock file still holds the text the job's lock
// wrote (lock, text; a slot whose lock is not set, or no longer, makes none): a rank that
// hears of the stop late (its host
// frozen, or cut off, until after the next job committed; or held while rank 0 commits)
// must not cut back a file that is no longer its job's to cut.
constexpr int kCuts = 64;
struct Cut {
  std::atomic<int> fd{-1};
  std::atomic<long long> length{0};
  std::atomic<char*> lock{nullptr};
  std::atomic<char*> text{nullptr};
};
std::array<Cut, kCuts> g_cuts{};

// Input files mapped into the process: [begin, end) and the file's name. A slot is free
// while its name is null and taken but not yet armed while it is kClaimed; the handler
// reads the addresses only of named slots.
constexpr int kRanges = 256;
struct Range {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<char*> file{nullptr};
};
std::array<Range, kRanges> g_ranges{};
char kClaimedName[] = "";
char* const kClaimed = kClaimedName;

std::atomic<bool> g_print{false};
std::atomic<int> g_windows{0};         // open CommitWindows
std::atomic<int> g_pending{0};         // a signal held back by a window
std::atomic<bool> g_committed{false};  // set by CommitWindow::committed()
std::atomic<int> g_failed_code{0};     // set by exit_quietly_on_stop()

// Appends \p text to the line being built in \p line (async-signal-safe: no library call).
void append(char* line, std::size_t& used, std::size_t size, const char* text) {
  while (*text != '\0' && used + 1 < size) line[used++] = *text++;
  line[used] = '\0';
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    case SIGALRM: return "SIGALRM";
    case SIGQUIT: return "SIGQUIT";
    case SIGVTALRM: return "SIGVTALRM";
    case SIGPROF: return "SIGPROF";
    case SIGPWR: return "SIGPWR";
    case SIGSTKFLT: return "SIGSTKFLT";
    case SIGIO: return "SIGIO";
    default: return "a signal";
  }
}

// Whether the lock file \p lock holds exactly \p text (async-signal-safe: open, read, close).
bool lock_holds(const char* lock, const char* text) {
  const int fd = ::open(lock, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char held[512];
  const ssize_t n = ::read(fd, held, sizeof held);
  ::close(fd);
  ssize_t k = 0;
  while (k < n && text[k] != '\0' && held[k] == text[k]) ++k;
  return k == n && text[k] == '\0';
}

// Async-signal-safe: ftruncate, unlink, open, read, close.
void clean_up_now() {
  // Cuts first: a journal removed below must not outlive the bytes it would undo.
  for (auto& cut : g_cuts) {
    const int fd = cut.fd.load();
    const char* lock = cut.lock.load();
    if (fd >= 0 && lock != nullptr && lock_holds(lock, cut.text.load()))
      static_cast<void>(::ftruncate(fd, static_cast<off_t>(cut.length.load())));
  }
  for (auto& slot : g_paths) {
    const char* path = slot.load();
    if (path != nullptr) ::unlink(path);
  }
}

// What the outputs are now, ending the line: committed or as they were.
void append_outcome(char* line, std::size_t& used, std::size_t size) {
  if (g_committed.load()) {
    append(line, used, size, ": the outputs were written completely (the commit had happened)\n");
  } else {
    append(line, used, size, ": nothing was committed, the output files are as they were\n");
  }
}

// Async-signal-safe: ftruncate, unlink, write, nanosleep, _exit.
[[noreturn]] void stop_now(int sig) {
  clean_up_now();
  if (!g_print.load()) {
    // A signal sent to every rank (srun, or kill of each) reaches them together; the first
    // rank to exit makes mpirun kill the others, so a rank that does not print waits a
    // moment for the one that does to say what happened (the commit's end, say).
    const timespec moment{0, 200 * 1000 * 1000};
    ::nanosleep(&moment, nullptr);
  } else {
    // One write() of the whole line: the launcher's own messages cannot land inside it.
    char line[512];
    std::size_t used = 0;
    append(line, used, sizeof line, "shardops: stopped by ");
    append(line, used, sizeof line, signal_name(sig));
    if (g_committed.load()) {
      append(line, used, sizeof line, " after the commit: the outputs were written completely\n");
    } else {
      append(line, used, sizeof line, " during the ");
      append(line, used, sizeof line, current_phase_name());
      append(line, used, sizeof line, " phase: nothing was committed, the output files are as they were\n");
    }
    static_cast<void>(::write(STDERR_FILENO, line, used));
  }
  ::_exit(stop_exit_code(sig));
}

// The mapped input file that holds \p address, or nullptr.
const char* mapped_file_at(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (auto& range : g_ranges) {
    const char* file = range.file.load();
    if (file != nullptr && file != kClaimed && a >= range.begin.load() && a < range.end.load()) return file;
  }
  return nullptr;
}

extern "C" void on_bus_error(int sig, siginfo_t* info, void*) {
  const char* file = info != nullptr ? mapped_file_at(info->si_addr) : nullptr;
  if (file == nullptr) {
    // Not an input's pages: the default action (a core dump) once the handler returns
    // and the access faults again.
    static_cast<void>(::signal(sig, SIG_DFL));
    return;
  }
  clean_up_now();
  // Every rank that touches the pages gets here: each prints, since the rank that prints
  // messages may be one that never reads that part of the file.
  char line[1024];
  std::size_t used = 0;
  append(line, used, sizeof line, "shardops: the input file '");
  append(line, used, sizeof line, file);
  append(line, used, sizeof line, "' was cut short by another program while the job read it");
  append_outcome(line, used, sizeof line);
  static_cast<void>(::write(STDERR_FILENO, line, used));
  ::_exit(static_cast<int>(ErrorKind::IO));
}

extern "C" void on_stop_signal(int sig) {
  if (const int code = g_failed_code.load(); code != 0) {
    clean_up_now();
    ::_exit(code);
  }
  if (g_windows.load() > 0) {
    int expected = 0;
    g_pending.compare_exchange_strong(expected, sig);
    return;
  }
  stop_now(sig);
}

}  // namespace

namespace {
// Beyond the three a user or a scheduler stops a job with, every other signal that another
// process sends and whose default action ends the process: SIGUSR1/SIGUSR2 (what Slurm's
// --signal sends ahead of a time limit, unless told to send it to the batch shell alone),
// SIGXCPU (the CPU time limit, `ulimit -t`), SIGQUIT (Ctrl-\: the job's files matter more
// than a core dump of it), the timers' and the rest. Not the signals of a fault in the
// process itself (SIGSEGV, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP): the next job cleans up
// after those, as after SIGKILL.
constexpr int kStopSignals[] = {SIGTERM, SIGINT,  SIGHUP,    SIGUSR1, SIGUSR2,   SIGXCPU, SIGALRM,
                                SIGQUIT, SIGPROF, SIGVTALRM, SIGPWR,  SIGSTKFLT, SIGIO};
}  // namespace

void install_stop_handlers(bool print_messages) {
  g_print.store(print_messages);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int sig : kStopSignals) {
    if (::sigaction(sig, &action, nullptr) != 0) throw InternalError("sigaction failed");
  }
  // A closed pipe on stdout or stderr (`… | head`) makes a write fail with EPIPE instead of
  // killing the rank mid-job.
  if (::signal(SIGPIPE, SIG_IGN) == SIG_ERR) throw InternalError("signal(SIGPIPE) failed");
  struct sigaction bus {};
  bus.sa_sigaction = on_bus_error;
  sigemptyset(&bus.sa_mask);
  bus.sa_flags = SA_SIGINFO;
  if (::sigaction(SIGBUS, &bus, nullptr) != 0) throw InternalError("sigaction failed");
  // A write past the largest file the process may write (RLIMIT_FSIZE: `ulimit -f`, which
  // Slurm carries from the submitting shell into the job) raises SIGXFSZ, whose default
  // action kills the rank mid-write with its temporary files left behind. Ignored, the
  // write fails with EFBIG instead, which the output layer reports and cleans up after.
  if (::signal(SIGXFSZ, SIG_IGN) == SIG_ERR) throw InternalError("signal(SIGXFSZ) failed");
}

void exit_quietly_on_stop(int exit_code) { g_failed_code.store(exit_code); }

void clean_up_as_if_stopped() noexcept { clean_up_now(); }

StopHandlersWhileWriting::StopHandlersWhileWriting(bool print_messages) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  std::size_t n = 0;
  static_assert(std::size(kStopSignals) + 1 <= kTaken, "room for every stop signal and SIGXFSZ");
  int signals[std::size(kStopSignals) + 1];
  std::copy(std::begin(kStopSignals), std::end(kStopSignals), signals);
  signals[std::size(kStopSignals)] = SIGXFSZ;
  for (const int sig : signals) {
    struct sigaction before {};
    if (::sigaction(sig, nullptr, &before) != 0) continue;
    // Only where the default action would end the process: a signal the program handles or
    // ignores stays the program's.
    if ((before.sa_flags & SA_SIGINFO) != 0 || before.sa_handler != SIG_DFL) continue;
    // SIGXFSZ ignored: a write past `ulimit -f` fails (EFBIG) and is cleaned up after.
    if (::sigaction(sig, sig == SIGXFSZ ? &ignore : &action, nullptr) != 0) continue;
    taken_[n] = sig;
    previous_[n] = before;
    ++n;
  }
  count_ = n;
  if (count_ > 0) g_print.store(print_messages);
}

StopHandlersWhileWriting::~StopHandlersWhileWriting() {
  for (std::size_t i = 0; i < count_; ++i) static_cast<void>(::sigaction(taken_[i], &previous_[i], nullptr));
}

namespace {

// What each table's slot is given back with (a registration's end).
void release_path(int slot) { std::free(g_paths[static_cast<std::size_t>(slot)].exchange(nullptr)); }
void release_cut(int slot) {
  Cut& cut = g_cuts[static_cast<std::size_t>(slot)];
  char* lock = cut.lock.exchange(nullptr);  // first: a slot without its lock makes no cut
  char* text = cut.text.exchange(nullptr);
  cut.fd.store(-1);
  std::free(lock);
  std::free(text);
}
void release_range(int slot) { std::free(g_ranges[static_cast<std::size_t>(slot)].file.exchange(nullptr)); }

int claim_path(const std::string& path) {
  char* copy = ::strdup(path.c_str());
  if (copy == nullptr) throw InternalError("out of memory registering " + path);
  for (int i = 0; i < kSlots; ++i) {
    char* expected = nullptr;
    if (g_paths[static_cast<std::size_t>(i)].compare_exchange_strong(expected, copy)) return i;
  }
  std::free(copy);
  throw InternalError("more than " + std::to_string(kSlots) + " temporary files at once");
}

int claim_cut(int fd, long long length, const std::string& lock, const std::string& text) {
  char* lock_copy = ::strdup(lock.c_str());
  char* text_copy = ::strdup(text.c_str());
  if (lock_copy == nullptr || text_copy == nullptr) {
    std::free(lock_copy);
    std::free(text_copy);
    throw InternalError("out of memory registering " + lock);
  }
  for (int i = 0; i < kCuts; ++i) {
    Cut& cut = g_cuts[static_cast<std::size_t>(i)];
    int expected = -1;
    // Claim the slot first (-2: taken, not armed), so no live slot's length is touched.
    if (cut.fd.compare_exchange_strong(expected, -2)) {
      cut.length.store(length);
      cut.text.store(text_copy);
      cut.lock.store(lock_copy);
      cut.fd.store(fd);
      return i;
    }
  }
  std::free(lock_copy);
  std::free(text_copy);
  throw InternalError("more than " + std::to_string(kCuts) + " files written in place at once");
}

int claim_range(const void* begin, std::size_t bytes, const std::string& file) {
  char* name = ::strdup(file.c_str());
  if (name == nullptr) throw InternalError("out of memory registering " + file);
  for (int i = 0; i < kRanges; ++i) {
    Range& range = g_ranges[static_cast<std::size_t>(i)];
    char* expected = nullptr;
    // Claim the slot first, then set the addresses, then name it: a handler never reads a
    // half-set range.
    if (range.file.compare_exchange_strong(expected, kClaimed)) {
      range.begin.store(reinterpret_cast<std::uintptr_t>(begin));
      range.end.store(reinterpret_cast<std::uintptr_t>(begin) + bytes);
      range.file.store(name);
      return i;
    }
  }
  std::free(name);
  throw InternalError("more than " + std::to_string(kRanges) + " input files mapped at once");
}

}  // namespace

SignalSlot::SignalSlot(SignalSlot&& other) noexcept
    : slot_(std::exchange(other.slot_, -1)), release_(std::exchange(other.release_, nullptr)) {}

SignalSlot& SignalSlot::operator=(SignalSlot&& other) noexcept {
  if (this != &other) {
    reset();
    slot_ = std::exchange(other.slot_, -1);
    release_ = std::exchange(other.release_, nullptr);
  }
  return *this;
}

void SignalSlot::reset() noexcept {
  if (slot_ >= 0) release_(slot_);
  slot_ = -1;
  release_ = nullptr;
}

CleanupPath::CleanupPath(const std::string& path) : SignalSlot(claim_path(path), release_path) {}

CleanupTruncate::CleanupTruncate(int fd, long long length, const std::string& lock, const std::string& lock_text)
    : SignalSlot(claim_cut(fd, length, lock, lock_text), release_cut) {}

MappedRange::MappedRange(const void* begin, std::size_t bytes, const std::string& file)
    : SignalSlot(claim_range(begin, bytes, file), release_range) {}

CommitWindow::CommitWindow() {
  g_committed.store(false);
  g_windows.fetch_add(1);
}

void CommitWindow::committed() noexcept { g_committed.store(true); }

void CommitWindow::end() noexcept {
  if (!open_) return;
  open_ = false;
  if (g_windows.fetch_sub(1) == 1) {
    const int sig = g_pending.exchange(0);
    if (sig != 0) stop_now(sig);
  }
}

CommitWindow::~CommitWindow() { end(); }

}  // namespace shardops::io
