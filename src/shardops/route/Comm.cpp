#include "shardops/route/Comm.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <thread>

namespace shardops {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw InternalError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

namespace {
void free_comm(MPI_Comm* c) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && *c != MPI_COMM_NULL) MPI_Comm_free(c);
  delete c;
}
}  // namespace

Comm::Comm(MPI_Comm parent) {
  auto* dup = new MPI_Comm(MPI_COMM_NULL);
  const int rc = MPI_Comm_dup(parent, dup);
  handle_ = std::shared_ptr<MPI_Comm>(dup, free_comm);
  check_mpi(rc, "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(*dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(*dup, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(*dup, &size_), "MPI_Comm_size");
}

Comm Comm::self() noexcept { return Comm(nullptr); }

namespace {
std::int64_t reduce_one(MPI_Comm c, std::int64_t v, MPI_Op op) {
  if (c == MPI_COMM_NULL) return v;  // Comm::self()
  std::int64_t out = 0;
  check_mpi(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, op, c), "MPI_Allreduce");
  return out;
}
}  // namespace

std::int64_t Comm::sum(std::int64_t value) const { return size_ == 1 ? value : reduce_one(get(), value, MPI_SUM); }
std::int64_t Comm::max(std::int64_t value) const { return size_ == 1 ? value : reduce_one(get(), value, MPI_MAX); }
std::int64_t Comm::min(std::int64_t value) const { return size_ == 1 ? value : reduce_one(get(), value, MPI_MIN); }

std::vector<std::int64_t> Comm::sum(const std::vector<std::int64_t>& values) const {
  if (size_ == 1) return values;
  std::vector<std::int64_t> out(values.size());
  if (values.empty()) return out;
  check_mpi(MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM, get()),
            "MPI_Allreduce");
  return out;
}

std::vector<std::int64_t> Comm::allgather(std::int64_t value) const {
  if (size_ == 1) return {value};
  std::vector<std::int64_t> out(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&value, 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, get()), "MPI_Allgather");
  return out;
}

std::vector<std::int64_t> Comm::allgather(const std::vector<std::int64_t>& values) const {
  if (size_ == 1) return values;
  std::vector<std::int64_t> out(values.size() * static_cast<std::size_t>(size_));
  if (values.empty()) return out;
  const int n = static_cast<int>(values.size());
  check_mpi(MPI_Allgather(values.data(), n, MPI_INT64_T, out.data(), n, MPI_INT64_T, get()), "MPI_Allgather");
  return out;
}

std::string Comm::broadcast(const std::string& text, int root) const {
  if (size_ == 1) return text;
  std::int64_t len = static_cast<std::int64_t>(text.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT64_T, root, get()), "MPI_Bcast");
  std::string out = rank_ == root ? text : std::string(static_cast<std::size_t>(len), '\0');
  if (len > 0) check_mpi(MPI_Bcast(&out[0], static_cast<int>(len), MPI_CHAR, root, get()), "MPI_Bcast");
  return out;
}

std::vector<std::string> Comm::gather(const std::string& bytes, int root) const {
  if (size_ == 1) return {bytes};
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InternalError("Comm::gather: " + std::to_string(bytes.size()) + " bytes from one rank, more than MPI counts");
  int mine = static_cast<int>(bytes.size());
  std::vector<int> counts(rank_ == root ? static_cast<std::size_t>(size_) : 0);
  check_mpi(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, root, get()), "MPI_Gather");
  std::vector<int> displs(counts.size());
  long long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max())
    throw InternalError("Comm::gather: " + std::to_string(total) + " bytes in all, more than MPI counts");
  std::string all(static_cast<std::size_t>(total), '\0');
  check_mpi(MPI_Gatherv(bytes.data(), mine, MPI_CHAR, &all[0], counts.data(), displs.data(), MPI_CHAR, root, get()),
            "MPI_Gatherv");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < counts.size(); ++r) out.push_back(all.substr(displs[r], counts[r]));
  return out;
}

void Comm::barrier() const {
  if (size_ > 1) check_mpi(MPI_Barrier(get()), "MPI_Barrier");
}

namespace {
// The second half of an agreement, once every rank knows that some rank has an error:
// the chosen one is thrown on every rank.
[[noreturn]] void throw_chosen_error(const Comm& comm, const PendingError* local) {
  struct {
    long order;
    int rank;
  } mine{local ? static_cast<long>(local->order) : std::numeric_limits<long>::max(), comm.rank()}, best{};
  // Among the ranks with an error, the smallest order wins (MINLOC: lowest rank on ties).
  if (!local) mine.rank = comm.size();  // never chosen over a rank that has one
  check_mpi(MPI_Allreduce(&mine, &best, 1, MPI_LONG_INT, MPI_MINLOC, comm.get()), "MPI_Allreduce");
  const int root = best.rank;
  const std::string message = comm.broadcast(local ? local->message : std::string(), root);
  std::int64_t kind = local ? static_cast<std::int64_t>(local->kind) : 0;
  check_mpi(MPI_Bcast(&kind, 1, MPI_INT64_T, root, comm.get()), "MPI_Bcast");
  const std::string subject = comm.broadcast(local ? local->subject : std::string(), root);
  throw_error(static_cast<ErrorKind>(kind), message, subject);
}
}  // namespace

void agree_on_error(const Comm& comm, const PendingError* local) {
  if (comm.size() == 1) {  // nothing to agree on
    if (local) throw_error(local->kind, local->message, local->subject);
    return;
  }
  int any_local = local ? 1 : 0, any = 0;
  check_mpi(MPI_Allreduce(&any_local, &any, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  if (any) throw_chosen_error(comm, local);
}

void agree_on_error_or_abort(const Comm& comm, const PendingError* local, std::chrono::milliseconds patience,
                             const std::function<void(const PendingError&)>& give_up) {
  if (comm.size() == 1) {
    if (local) throw_error(local->kind, local->message, local->subject);
    return;
  }
  int any_local = local ? 1 : 0, any = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&any_local, &any, 1, MPI_INT, MPI_MAX, comm.get(), &request), "MPI_Iallreduce");
  if (!local) {
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  } else {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (int done = 0;;) {
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        give_up(*local);
        MPI_Abort(comm.get(), static_cast<int>(local->kind));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (any) throw_chosen_error(comm, local);
}

std::optional<TextDifference> first_difference(const Comm& comm, const std::string& text) {
  if (comm.size() == 1) return std::nullopt;
  // FNV-1a: two different texts that hash alike are left unnoticed once in 2^64.
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  const std::vector<std::int64_t> all = comm.allgather(static_cast<std::int64_t>(hash));
  const auto other = std::find_if(all.begin(), all.end(), [&](std::int64_t h) { return h != all[0]; });
  if (other == all.end()) return std::nullopt;
  TextDifference d;
  d.rank = static_cast<int>(other - all.begin());
  d.first = comm.broadcast(text, 0);
  d.theirs = comm.broadcast(text, d.rank);
  return d;
}

void agree_on_call(const Comm& comm, const std::string& call) {
  if (const std::optional<TextDifference> d = first_difference(comm, call)) {
    throw InvalidArgument("the ranks' calls differ: rank 0 passed " + d->first + "; rank " + std::to_string(d->rank) +
                          " passed " + d->theirs);
  }
}

}  // namespace shardops
