// DistTensor: sharding a replicated tensor, gathering it back, moving it between
// layouts, scalars.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {
namespace {

using namespace test;

// The block of `full` that rank r holds under `layout`.
Tensor block_of(const Tensor& full, const RowLayout& layout, int r) {
  return full.slice_rows(layout.offset(r), layout.offset(r) + layout.count(r));
}

void expect_holds_block(const DistTensor& t, const Tensor& full, const RowLayout& layout, const std::string& what) {
  const int me = world().rank();
  EXPECT_EQ(t.layout(), layout) << what << ": layout " << layout_str(t.layout()) << " vs " << layout_str(layout);
  EXPECT_EQ(t.shape(), full.shape()) << what;
  EXPECT_EQ(t.row_offset(), layout.offset(me)) << what;
  expect_same_tensor(t.local(), block_of(full, layout, me), what + " (local block)");
}

TEST(DistTensor, FromReplicatedAndAllgatherRoundTrip) {
  Rng rng(11);
  const int p = world().size();
  for (DType dtype : movement_dtypes()) {
    for (std::int64_t rows : {0, 1, 2, 3, 5, 37}) {
      const Tensor full = random_tensor(rng, dtype, Shape{rows, 2, 3});
      for (const RowLayout& layout : test_layouts(rng, rows, p)) {
        const std::string what =
            std::string(dtype_name(dtype)) + " rows " + std::to_string(rows) + " layout " + layout_str(layout);
        const DistTensor t = shard(full, layout);
        expect_holds_block(t, full, layout, what);
        EXPECT_EQ(t.row_elements(), 6) << what;
        EXPECT_EQ(t.row_bytes(), 6 * dtype_size(dtype)) << what;
        expect_same_tensor(t.allgather(world()), full, what);
      }
    }
  }
  // Balanced by default.
  const Tensor full = random_tensor(rng, DType::Float32, Shape{10});
  EXPECT_EQ(shard(full).layout(), RowLayout::balanced(10, p));
}

TEST(DistTensor, MoreRanksThanRows) {
  Rng rng(12);
  const int p = world().size();
  const Tensor full = random_tensor(rng, DType::Int64, Shape{1, 4});
  const DistTensor t = shard(full);
  EXPECT_EQ(t.layout().count(0), 1);
  for (int r = 1; r < p; ++r) EXPECT_EQ(t.layout().count(r), 0);
  expect_same_tensor(t.allgather(world()), full, "one row");
  expect_same_tensor(t.rebalance(world()).allgather(world()), full, "one row rebalanced");
  const RowLayout last = RowLayout::on_rank(1, p, p - 1);
  expect_holds_block(t.redistribute(world(), last), full, last, "one row to the last rank");
}

TEST(DistTensor, Scalars) {
  Rng rng(13);
  const int me = world().rank(), p = world().size();
  for (DType dtype : movement_dtypes()) {
    const Tensor full = random_tensor(rng, dtype, Shape());
    const DistTensor t = shard(full);
    EXPECT_TRUE(t.is_scalar());
    EXPECT_EQ(t.shape(), Shape());
    EXPECT_EQ(t.layout(), RowLayout::on_rank(1, p, 0));
    EXPECT_EQ(t.local().shape(), me == 0 ? Shape() : Shape{0}) << dtype_name(dtype);
    EXPECT_EQ(t.row_elements(), 1);
    expect_same_tensor(t.allgather(world()), full, std::string("scalar ") + dtype_name(dtype));
    // A scalar is not split: rebalancing leaves it on rank 0; it can still be moved whole.
    expect_same_tensor(t.rebalance(world()).allgather(world()), full, "scalar rebalanced");
    EXPECT_EQ(t.rebalance(world()).layout(), t.layout());
    const DistTensor moved = t.redistribute(world(), RowLayout::on_rank(1, p, p - 1));
    EXPECT_EQ(moved.local().shape(), me == p - 1 ? Shape() : Shape{0});
    expect_same_tensor(moved.allgather(world()), full, "scalar on the last rank");
    const DistTensor back = moved.redistribute(world(), RowLayout::on_rank(1, p, 0));
    expect_same_tensor(back.local(), t.local(), "scalar moved back");
  }
}

TEST(DistTensor, RedistributeBetweenLayoutsRoundTrips) {
  Rng rng(14);
  const int p = world().size();
  for (DType dtype : {DType::Int8, DType::Float16, DType::Float64, DType::Complex128}) {
    for (std::int64_t rows : {0, 3, 41}) {
      const Tensor full = random_tensor(rng, dtype, Shape{rows, 3});
      const std::vector<RowLayout> layouts = test_layouts(rng, rows, p);
      for (const RowLayout& from : layouts) {
        const DistTensor t = shard(full, from);
        for (const RowLayout& to : layouts) {
          const std::string what = std::string(dtype_name(dtype)) + " " + layout_str(from) + " -> " + layout_str(to);
          const DistTensor moved = t.redistribute(world(), to);
          expect_holds_block(moved, full, to, what);
          const DistTensor back = moved.redistribute(world(), from);
          expect_holds_block(back, full, from, what + " and back");
        }
      }
    }
  }
}

TEST(DistTensor, RebalanceGivesBalancedBlocks) {
  Rng rng(15);
  const int p = world().size();
  for (std::int64_t rows : {0, 1, 7, 64}) {
    const Tensor full = random_tensor(rng, DType::Float32, Shape{rows, 5});
    for (const RowLayout& layout : test_layouts(rng, rows, p)) {
      const DistTensor balanced = shard(full, layout).rebalance(world());
      expect_holds_block(balanced, full, RowLayout::balanced(rows, p), "rebalance from " + layout_str(layout));
    }
  }
}

TEST(DistTensor, RedistributeWithZeroByteRowsAndInRounds) {
  Rng rng(16);
  const int p = world().size();
  // Rows of zero bytes: only the shape moves.
  const Tensor empty_rows(DType::Float32, Shape{9, 0});
  const DistTensor t = shard(empty_rows, RowLayout::on_rank(9, p, p - 1));
  const DistTensor moved = t.rebalance(world());
  EXPECT_EQ(moved.layout(), RowLayout::balanced(9, p));
  EXPECT_EQ(moved.local().shape(), Shape({RowLayout::balanced(9, p).count(world().rank()), 0}));
  // A redistribution split into many small rounds.
  const RouteOptions rounds = round_limit(3);
  const Tensor full = random_tensor(rng, DType::Int32, Shape{50, 2});
  for (const RowLayout& layout : test_layouts(rng, 50, p)) {
    expect_holds_block(shard(full, layout).rebalance(world(), rounds), full, RowLayout::balanced(50, p),
                       "rounds of 3 rows from " + layout_str(layout));
  }
}

TEST(DistTensor, FromLocal) {
  Rng rng(17);
  const int me = world().rank(), p = world().size();
  // Rank r contributes r+1 rows (rank 1: none).
  const std::int64_t mine = me == 1 ? 0 : me + 1;
  std::vector<std::int64_t> counts;
  for (int r = 0; r < p; ++r) counts.push_back(r == 1 ? 0 : r + 1);
  const RowLayout layout(counts);
  const Tensor full = random_tensor(rng, DType::Int16, Shape{layout.total(), 4});
  const DistTensor t = DistTensor::from_local(world(), block_of(full, layout, me).deep_copy());
  EXPECT_EQ(t.local().rows(), mine);
  expect_holds_block(t, full, layout, "from_local");
  expect_same_tensor(t.allgather(world()), full, "from_local gathered");

  // Trailing dims that differ between ranks: every rank throws, none hangs.
  const Tensor odd(DType::Int16, Shape{2, me == p - 1 && p > 1 ? 5 : 4});
  const std::string err = error_of([&] { DistTensor::from_local(world(), odd); });
  if (p > 1) {
    EXPECT_NE(err.find("ranks disagree"), std::string::npos) << err;
  } else {
    EXPECT_EQ(err, "");
  }
  EXPECT_NE(error_of([&] { DistTensor::from_local(world(), Tensor(DType::Int16, Shape())); }).find("scalar"),
            std::string::npos);
}

// What \p call threw: a shardops::Error's exit code and message, 0 if nothing, -1 otherwise.
struct Caught {
  int exit_code = 0;
  std::string message;
};
Caught caught(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return {e.exit_code(), e.what()};
  } catch (const std::exception& e) {
    return {-1, e.what()};
  }
  return {};
}

// A caller's mistakes that used to give other ranks' rows, crash or write reinterpreted bytes:
// refused on every rank with InvalidArgument, before any collective (none hangs).
TEST(DistTensor, TensorsOfAnotherCommunicatorOrLayoutAreRefused) {
  Rng rng(18);
  const int me = world().rank(), p = world().size();
  const Tensor full = random_tensor(rng, DType::Float32, Shape{6, 1});
  const Tensor idx = index_tensor(DType::Int32, Shape{3, 1}, {5, 0, 2});
  const DistTensor params = shard(full), indices = shard(idx);
  // An op on Comm::self() with tensors of every rank: where they are laid out over more.
  const Caught on_self = caught([&] { gather_nd(Comm::self(), params, indices); });
  if (p > 1) {
    EXPECT_EQ(on_self.exit_code, 2) << on_self.message;
    EXPECT_NE(on_self.message.find("pass the communicator the tensor was made with"), std::string::npos)
        << on_self.message;
  } else {
    EXPECT_EQ(on_self.exit_code, 0) << on_self.message;
  }
  // A layout over another number of ranks.
  const Caught wrong_layout =
      caught([&] { DistTensor::from_replicated(world(), full, RowLayout::balanced(6, p + 1)); });
  EXPECT_EQ(wrong_layout.exit_code, 2) << wrong_layout.message;
  const Caught wrong_rows = caught([&] { DistTensor::from_replicated(world(), full, RowLayout::balanced(5, p)); });
  EXPECT_EQ(wrong_rows.exit_code, 2) << wrong_rows.message;
  const Caught wrong_target = caught([&] { params.redistribute(world(), RowLayout::balanced(6, p + 1)); });
  EXPECT_EQ(wrong_target.exit_code, 2) << wrong_target.message;
  // A block that is not the layout's.
  const Caught wrong_block = caught([&] {
    DistTensor(Tensor(DType::Float32, Shape{7, 1}), Shape{6, 1}, RowLayout::balanced(6, p), me);
  });
  EXPECT_EQ(wrong_block.exit_code, 2) << wrong_block.message;
  // Ranks that disagree on the dtype.
  const Tensor mixed = me == 0 ? Tensor::from_vector<float>(DType::Float32, Shape{1}, {1.5f})
                               : Tensor::from_vector<std::int32_t>(DType::Int32, Shape{1}, {7});
  const Caught dtypes = caught([&] { DistTensor::from_local(world(), mixed); });
  if (p > 1) {
    EXPECT_EQ(dtypes.exit_code, 2) << dtypes.message;
    EXPECT_NE(dtypes.message.find("dtype"), std::string::npos) << dtypes.message;
  } else {
    EXPECT_EQ(dtypes.exit_code, 0) << dtypes.message;
  }
  // Host vectors of another element size than the dtype's.
  EXPECT_THROW(Tensor::from_vector<double>(DType::Float32, Shape{2}, {1.0}), InvalidArgument);
  EXPECT_THROW(Tensor::from_vector<std::int32_t>(DType::Float32, Shape{1}, {1}).to_vector<double>(), InvalidArgument);
  EXPECT_EQ(world().sum(1), p);  // every rank is still here, none waits in a collective
}

}  // namespace
}  // namespace shardops
