#pragma once
/// \file
/// \brief The communicator every collective of shardops runs on: a dup of the
/// caller's communicator (so our messages never mix with theirs), RAII, with every
/// MPI return code checked.

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
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

/// \brief Collective: returns when \p call (a collective call and its arguments, as text)
/// is the same on every rank; otherwise throws InvalidArgument on every rank, "the ranks'
/// calls differ: rank 0 passed A; rank R passed B" (R the lowest rank that differs). A
/// rank that passes other arguments would follow another plan, which can hang or give
/// each rank its own answer. One allgather of a hash when the ranks agree.
void agree_on_call(const Comm& comm, const std::string& call);

/// \brief Collective: runs \p body on every rank; an exception on any rank (a
/// shardops::Error keeps its kind, anything else is Internal) is raised on all of
/// them, the lowest failing rank's one. \p body must not itself call collectives
/// that other ranks could skip because of the failure.
template <class Body>
void run_agreed(const Comm& comm, Body&& body) {
  PendingError pending;
  bool failed = false;
  try {
    body();
  } catch (const Error& e) {
    pending = PendingError{e.kind(), e.what(), 0, e.subject()};
    failed = true;
  } catch (const std::exception& e) {
    pending = PendingError{ErrorKind::Internal, e.what(), 0};
    failed = true;
  }
  agree_on_error(comm, failed ? &pending : nullptr);
}

}  // namespace shardops
