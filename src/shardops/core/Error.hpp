#pragma once
/// \file
/// \brief Errors with an exit-code class: bad input (2), I/O (3) and internal (1).
///
/// Host-side validation throws these; kernels never throw (they flag bad
/// indices with a reduction and the host raises afterwards).

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace shardops {

/// The class of a failure; its numeric value is the process exit code (docs/cli.md).
enum class ErrorKind : int { Internal = 1, InvalidArgument = 2, IO = 3 };

/// \brief Base of every error shardops raises; carries its exit-code class.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string subject = {})
      : std::runtime_error(message), kind_(kind), subject_(std::move(subject)) {}
  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return static_cast<int>(kind_); }
  /// Which input the error is about ("indices", "indices[2]", "partitions", ...), or
  /// empty; the command line maps it to the dataset the user named.
  const std::string& subject() const noexcept { return subject_; }

 private:
  ErrorKind kind_;
  std::string subject_;
};

/// Bad input: shapes, dtypes, indices, usage. Exit code 2.
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message, std::string subject = {})
      : Error(ErrorKind::InvalidArgument, message, std::move(subject)) {}
};

/// A file could not be read or written. Exit code 3.
class IOError : public Error {
 public:
  explicit IOError(const std::string& message, std::string subject = {})
      : Error(ErrorKind::IO, message, std::move(subject)) {}
};

/// Something that should not happen. Exit code 1.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(ErrorKind::Internal, message) {}
};

/// The IOError text of an op whose second read of an input saw other values than its first:
/// a program wrote into an input file (mapped) or array while the op used it.
inline std::string input_changed_text() {
  return "an input changed while this job used it: a program wrote into an input file during the job, and a second "
         "pass over its rows saw other values; nothing was written: run the job again";
}

/// The texts of a job that does not fit its memory: the start of an allocation's failure, and
/// the words of the memory budget's refusal (core/MemoryBudget.cpp). Both are InvalidArgument
/// (exit 2); the Python module raises them as ResourceExhaustedError, TensorFlow's class.
/// \brief An allocation's label as a message names it: the labels name a step of an op for
/// Kokkos' tools ("shardops::GatherNd::output"); a user reads "GatherNd output".
inline std::string readable_label(std::string label) {
  const std::string prefix = "shardops::";
  if (label.compare(0, prefix.size(), prefix) == 0) label.erase(0, prefix.size());
  for (std::size_t at = label.find("::"); at != std::string::npos; at = label.find("::", at)) label.replace(at, 2, " ");
  return label;
}

inline constexpr char kOutOfMemoryText[] = "out of memory: ";
inline constexpr char kMemoryBudgetText[] = "; this rank's memory budget is ";

/// Whether \p text is one of those (kOutOfMemoryText, kMemoryBudgetText).
inline bool out_of_memory_text(const std::string& text) {
  return text.rfind(kOutOfMemoryText, 0) == 0 || text.find(kMemoryBudgetText) != std::string::npos;
}

/// \brief The class and text of an exception another library threw: an allocation that
/// failed (std::bad_alloc, Kokkos' "Kokkos failed to allocate memory ...", as under
/// `ulimit -v`) is InvalidArgument, as the memory budget's refusals are (exit 2); anything
/// else Internal. Kokkos' trailer ("Traceback functionality not available") is dropped.
inline std::pair<ErrorKind, std::string> foreign_error(const std::exception& e) {
  std::string text = e.what();
  const std::size_t trailer = text.find("Traceback functionality not available");
  if (trailer != std::string::npos) text.erase(trailer);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const bool memory =
      dynamic_cast<const std::bad_alloc*>(&e) != nullptr || text.rfind("Kokkos failed to allocate memory", 0) == 0;
  if (memory) return {ErrorKind::InvalidArgument, kOutOfMemoryText + text};
  return {ErrorKind::Internal, text};
}

/// Throws the Error subclass that matches \p kind.
[[noreturn]] inline void throw_error(ErrorKind kind, const std::string& message, const std::string& subject = {}) {
  switch (kind) {
    case ErrorKind::InvalidArgument: throw InvalidArgument(message, subject);
    case ErrorKind::IO: throw IOError(message, subject);
    case ErrorKind::Internal: break;
  }
  throw InternalError(message);
}

}  // namespace shardops
