#pragma once
/// \file
/// \brief The communicator every collective of shardops runs on: a dup of the
/// caller's communicator (so our messages never mix with theirs), RAII, with every
/// MPI return code checked.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardops/core/Error.hpp"

namespace shardops {

/// Throws InternalError naming the call if \p rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* call);

/// \brief A duplicated communicator. Cheap to copy (copies share the dup, which is
/// freed with the last copy). The dup returns errors instead of aborting, so a
/// failed call becomes an exception.
///
/// Every collective below returns at once on a one-rank communicator (a sum of one
/// value is that value), so a one-rank run never calls MPI through them.
class Comm {
 public:
  /// Collective over \p parent.
  explicit Comm(MPI_Comm parent = MPI_COMM_WORLD);

  /// \brief A one-rank communicator that needs no MPI (MPI may be uninitialised): the
  /// one-rank ops run the distributed ones over it. Every collective is then a local
  /// copy, and get() is MPI_COMM_NULL.
  static Comm self() noexcept;

  MPI_Comm get() const noexcept { return handle_ ? *handle_ : MPI_COMM_NULL; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  /// Collective: the sum / max / min of \p value over all ranks.
  std::int64_t sum(std::int64_t value) const;
  std::int64_t max(std::int64_t value) const;
  std::int64_t min(std::int64_t value) const;
  /// Collective: element-wise sums.
  std::vector<std::int64_t> sum(const std::vector<std::int64_t>& values) const;
  /// Collective: every rank's value, in rank order.
  std::vector<std::int64_t> allgather(std::int64_t value) const;
  /// Collective: every rank's vector (all the same length), rank-major.
  std::vector<std::int64_t> allgather(const std::vector<std::int64_t>& values) const;
  /// Collective: \p text from \p root on every rank.
  std::string broadcast(const std::string& text, int root) const;
  /// Collective: every rank's \p bytes, in rank order, on \p root (elsewhere: empty).
  std::vector<std::string> gather(const std::string& bytes, int root) const;
  void barrier() const;

 private:
  Comm(std::nullptr_t) noexcept {}
  std::shared_ptr<MPI_Comm> handle_;
  int rank_ = 0;
  int size_ = 1;
};

/// \brief An error a rank found, waiting to be agreed on. \p order ranks errors: the
/// one with the smallest order over all ranks is raised (ties: lowest rank), so
/// every rank reports what a one-rank run would.
struct PendingError {
  ErrorKind kind = ErrorKind::InvalidArgument;
  std::string message;
  std::int64_t order = 0;
  std::string subject = {};  ///< see Error::subject()
};

/// \brief Collective: if any rank passes an error, every rank throws the chosen one
/// (same kind, same text). Returns normally when no rank has an error. Every rank
/// must call it at the same point; that is what keeps a failure on one rank from
/// leaving the others waiting.
void agree_on_error(const Comm& comm, const PendingError* local);

/// \brief Collective: agree_on_error after a collective call of another library (HDF5's
/// collective write) that an error may have cut short on some ranks only: a rank that
/// left it early may have left another inside it, waiting for an MPI call that will never
/// come, where no agreement reaches it. A rank with an error waits \p patience for the
/// others to join; then it calls \p give_up (which must not call collectives: it cleans up
/// what this rank made and says why) and ends the whole job, MPI_Abort with its error's
/// exit code. A rank without one waits as long as it takes.
void agree_on_error_or_abort(const Comm& comm, const PendingError* local, std::chrono::milliseconds patience,
                             const std::function<void(const PendingError&)>& give_up);

/// \brief Collective: returns when \p call (a collective call and its arguments, as text)
/// is the same on every rank; otherwise throws InvalidArgument on every rank, "the ranks'
/// calls differ: rank 0 passed A; rank R passed B" (R the lowest rank that differs). A
/// rank that passes other arguments would follow another plan, which can hang or give
/// each rank its own answer. One allgather of a hash when the ranks agree.
void agree_on_call(const Comm& comm, const std::string& call);

/// \brief Collective: where \p text is not rank 0's on every rank, the lowest rank whose
/// text differs, and rank 0's and its text (the same on every rank); nothing where all
/// agree. One allgather of a hash when they do.
struct TextDifference {
  int rank = 0;
  std::string first;   ///< rank 0's
  std::string theirs;  ///< that rank's
};
std::optional<TextDifference> first_difference(const Comm& comm, const std::string& text);

/// \brief Runs \p body (not collective): the error it threw, to be agreed on (a
/// shardops::Error keeps its kind, anything else is foreign_error's), or none.
template <class Body>
std::optional<PendingError> pending_error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return PendingError{e.kind(), e.what(), 0, e.subject()};
  } catch (const std::exception& e) {
    auto [kind, text] = foreign_error(e);
    return PendingError{kind, std::move(text), 0};
  }
  return std::nullopt;
}

/// \brief Collective: runs \p body on every rank; an exception on any rank (a
/// shardops::Error keeps its kind, anything else is Internal) is raised on all of
/// them, the lowest failing rank's one. \p body must not itself call collectives
/// that other ranks could skip because of the failure.
template <class Body>
void run_agreed(const Comm& comm, Body&& body) {
  const std::optional<PendingError> pending = pending_error_of(std::forward<Body>(body));
  agree_on_error(comm, pending ? &*pending : nullptr);
}

}  // namespace shardops
