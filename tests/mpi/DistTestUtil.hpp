#pragma once
/// \file
/// \brief Helpers of the distributed tests.
///
/// The pattern of every test: all ranks draw the same random inputs from the same
/// seed, shard them with DistTensor::from_replicated under some layout, run the
/// distributed op, allgather the result and compare it byte for byte with the
/// one-rank op (ops/Ops.hpp) on the full tensors. Because every rank holds the
/// same full tensors, every rank reaches the same verdict.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/ops/Ops.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LazyTensor.hpp"
#include "shardops/route/RowLayout.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {
namespace test {

/// The communicator of the tests (a dup of MPI_COMM_WORLD, made once).
const Comm& world();

/// The generator every rank seeds alike.
using Rng = std::mt19937_64;

/// Random elements of \p dtype. Floats have fractional parts and mixed signs so sums
/// depend on their order; integers are small; bool is 0/1.
Tensor random_tensor(Rng& rng, DType dtype, const Shape& shape);

/// Index tensor of shape \p batch + [dims.size()] (int32 or int64), each index row a
/// valid position in \p dims. With \p hot > 0 only the first \p hot values of dim 0
/// are used (many duplicates).
Tensor random_indices(Rng& rng, DType index_dtype, const Shape& batch, const std::vector<std::int64_t>& dims,
                      std::int64_t hot = 0);

/// int32 tensor of random values in [lo, hi].
Tensor random_int32(Rng& rng, const Shape& shape, std::int32_t lo, std::int32_t hi);

/// An index tensor (int32 or int64) from values.
Tensor index_tensor(DType index_dtype, const Shape& shape, const std::vector<std::int64_t>& values);

/// Element \p flat of an index tensor (int32 or int64), on the host.
std::int64_t index_value(const Tensor& t, std::int64_t flat);
/// Sets element \p flat of an index tensor (host round trip; tests only).
void set_index_value(Tensor& t, std::int64_t flat, std::int64_t value);

/// \brief Layouts of \p rows rows over \p nranks ranks that every test runs under:
/// balanced, all rows on the last rank, all on rank 0, and random ragged ones with
/// empty shards. Identical on every rank (drawn from \p rng).
std::vector<RowLayout> test_layouts(Rng& rng, std::int64_t rows, int nranks);
/// A random layout of \p rows rows, some ranks empty.
RowLayout random_layout(Rng& rng, std::int64_t rows, int nranks);
/// "[3,0,2]" (for traces).
std::string layout_str(const RowLayout& layout);

/// Shards \p full under \p layout (a scalar: on rank 0, whatever \p layout says).
DistTensor shard(const Tensor& full, const RowLayout& layout);
/// Balanced shards of \p full.
DistTensor shard(const Tensor& full);

/// Expects the same dtype, shape and bytes. \p what names the tensor.
void expect_same_tensor(const Tensor& actual, const Tensor& expected, const std::string& what);
/// Allgathers \p actual and compares it with \p expected.
void expect_same_tensor(const DistTensor& actual, const Tensor& expected, const std::string& what);
/// \brief Expects \p lazy to be \p held's tensor: its shape, layout and, made whole and
/// made 1 and 3 rows at a time from every start, this rank's bytes. Not collective but
/// for the whole tensor's comparison (collective).
void expect_same_rows(const LazyTensor& lazy, const DistTensor& held, const std::string& what);

/// What a call threw: "" when it did not; the message of an InvalidArgument (and
/// " [about SUBJECT]" when it names the input it is about);
/// "<kind> error: message" for another shardops::Error; "std::exception: ..." else.
std::string error_of(const std::function<void()>& call);

/// Rows each rank holds after a one-rank op on the full data, for the partition
/// layout checks: count of p in partitions[block r] for every r.
std::vector<std::int64_t> counts_of(const Tensor& partitions_flat, const RowLayout& element_layout, std::int32_t p);

/// Route options whose exchanges split into rounds of at most \p rows rows per
/// message (forces the split of a large exchange); 0: no limit.
RouteOptions round_limit(std::int64_t rows);
/// Op options whose exchanges split as round_limit(\p rows) says.
OpOptions with_round_limit(std::int64_t rows, OpOptions base = {});

/// Collective: an ExchangePlan sending local row i to rank dests[i] (-1: not sent).
ExchangePlan plan_to(const std::vector<std::int64_t>& dests, const RouteOptions& route = RouteOptions());
/// Host bytes into a ByteView in MemSpace, and back.
ByteView to_byte_view(const std::vector<unsigned char>& bytes);
std::vector<unsigned char> byte_view_to_host(const ByteView& v);

/// The dtypes that move rows of 1, 2, 4, 8 and 16 bytes (and bool).
std::vector<DType> movement_dtypes();
/// The dtypes whose sums are order-dependent or wrap, for the accumulating ops.
std::vector<DType> arithmetic_dtypes();

}  // namespace test
}  // namespace shardops
