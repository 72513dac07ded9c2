// Distributed ScatterNd and TensorScatter{Update,Add,Sub,Min,Max} against the
// one-rank ops, byte for byte: float sums with many duplicates spread over ranks
// must come out in TensorFlow's order on every rank count. Output layouts: ScatterNd
// balanced, TensorScatter* the layout of `tensor` (docs/design.md).
#include <gtest/gtest.h>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/TfKernels.hpp"

namespace shardops {
namespace {

using namespace test;

constexpr ScatterOp kTensorOps[] = {ScatterOp::Update, ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max};

// The streamed op's rows are the held op's, made whole and a few rows at a time. They
// are made later for fixed-size rows in host memory wherever the index rows are at most
// twice the output's rows (stream_scatter_output), and for TensorScatterUpdate always.
void check_lazy(const LazyTensor& lazy, const DistTensor& held, const Tensor& indices, const std::string& what,
                bool update = false) {
  expect_same_rows(lazy, held, what + " (made later)");
  const Shape& out = held.shape();
  const std::int64_t depth = indices.rank() == 0 ? 0 : indices.shape().dim(indices.rank() - 1);
  const bool expect_lazy = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible &&
                           !is_string(held.dtype()) && out.rank() > 0 && out.num_elements() > 0 && depth > 0 &&
                           (update || indices.num_elements() / depth <= 2 * out.product(0, static_cast<int>(depth)));
  EXPECT_EQ(!lazy.held(), expect_lazy) << what;
}

// \p full in \p layout, readable whole on every rank as well (DistTensor::replica): how the
// command line reads a mapped input where the op reads it that way.
DistTensor replicated(const Tensor& full, const RowLayout& layout) { return shard(full, layout).with_replica(full); }

// With indices and updates that every rank reads whole, the op takes its updates from them
// where scatter_reads_replicas says so (nothing sent), and gives the same bytes either way,
// its output held or made later.
template <class Run, class RunLazy>
void check_replicas(const Tensor& indices, const Tensor& updates, const Tensor& expected, const OpOptions& options,
                    const Run& run, const RunLazy& run_lazy, const std::string& what, bool update = false) {
  OpStats stats;
  OpOptions counted = options;
  counted.stats = &stats;
  const DistTensor got = run(counted);
  expect_same_tensor(got, expected, what + " (replicas)");
  const bool reads =
      scatter_reads_replicas(indices.shape(), indices.dtype(), updates.shape(), updates.dtype(), world().size());
  if (reads) {
    EXPECT_EQ(stats.bytes_sent, 0) << what;
  }
  check_lazy(run_lazy(counted), got, indices, what + " (replicas)", update);
}

void check_scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                      const RowLayout& index_layout, const RowLayout& update_layout, const OpOptions& options,
                      const std::string& what) {
  const Tensor expected = scatter_nd(indices, updates, shape, options);
  const DistTensor got =
      scatter_nd(world(), shard(indices, index_layout), shard(updates, update_layout), shape, options);
  expect_same_tensor(got, expected, what);
  EXPECT_EQ(got.layout(), RowLayout::balanced(shape.at(0), world().size())) << what << ": " << layout_str(got.layout());
  check_lazy(scatter_nd_lazy(world(), shard(indices, index_layout), shard(updates, update_layout), shape, options), got,
             indices, what);
  if (indices.rank() == 0) return;
  check_replicas(
      indices, updates, expected, options,
      [&](const OpOptions& o) {
        return scatter_nd(world(), replicated(indices, index_layout), replicated(updates, update_layout), shape, o);
      },
      [&](const OpOptions& o) {
        return scatter_nd_lazy(world(), replicated(indices, index_layout), replicated(updates, update_layout), shape,
                               o);
      },
      what);
}

void check_tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                          const RowLayout& tensor_layout, const RowLayout& index_layout, const RowLayout& update_layout,
                          const OpOptions& options, const std::string& what) {
  const std::string name = std::string(scatter_op_name(op)) + " " + what;
  const Tensor expected = tensor_scatter(op, tensor, indices, updates, options);
  const DistTensor t = shard(tensor, tensor_layout);
  const DistTensor got =
      tensor_scatter(world(), op, t, shard(indices, index_layout), shard(updates, update_layout), options);
  expect_same_tensor(got, expected, name);
  EXPECT_EQ(got.layout(), tensor_layout) << name << ": " << layout_str(got.layout());
  check_lazy(tensor_scatter_lazy(world(), op, t, shard(indices, index_layout), shard(updates, update_layout), options),
             got, indices, name, op == ScatterOp::Update);
  // The input tensor is not modified.
  expect_same_tensor(t, tensor, name + " (input unchanged)");
  if (indices.rank() == 0) return;
  check_replicas(
      indices, updates, expected, options,
      [&](const OpOptions& o) {
        return tensor_scatter(world(), op, t, replicated(indices, index_layout), replicated(updates, update_layout), o);
      },
      [&](const OpOptions& o) {
        return tensor_scatter_lazy(world(), op, t, replicated(indices, index_layout),
                                   replicated(updates, update_layout), o);
      },
      name, op == ScatterOp::Update);
  expect_same_tensor(t, tensor, name + " (input unchanged, replicas)");
}

TEST(DistScatterNd, SumsWithDuplicatesAcrossRanksMatchExactly) {
  Rng rng(301);
  const int p = world().size();
  for (DType dtype : arithmetic_dtypes()) {
    for (DType index_dtype : {DType::Int32, DType::Int64}) {
      // 120 updates into 3 hot rows of 10: long runs of float additions whose
      // result depends on the order.
      const std::vector<std::int64_t> shape{10, 4};
      const Tensor indices = random_indices(rng, index_dtype, Shape{120}, {10}, 3);
      const Tensor updates = random_tensor(rng, dtype, Shape{120, 4});
      for (const RowLayout& layout : test_layouts(rng, 120, p)) {
        check_scatter_nd(indices, updates, shape, layout, layout, {},
                         std::string(dtype_name(dtype)) + "/" + dtype_name(index_dtype) + " " + layout_str(layout));
      }
    }
  }
}

TEST(DistScatterNd, IndexDepthsSlicesAndLayouts) {
  Rng rng(302);
  const int p = world().size();
  struct Case {
    std::vector<std::int64_t> shape;
    int depth;
    Shape batch;
  };
  const std::vector<Case> cases{
      {{7, 3, 2}, 1, Shape{25}},  // slices of [3, 2]
      {{7, 3, 2}, 2, Shape{25}},  // slices of [2]
      {{7, 3, 2}, 3, Shape{25}},  // K = rank: single elements
      {{5, 4}, 2, Shape{6, 5}},   // rank-3 indices
      {{3}, 1, Shape{40}},        // fewer output rows than ranks may hold
      {{2, 6}, 1, Shape{9}},      // more ranks than output rows
  };
  for (const Case& c : cases) {
    const std::vector<std::int64_t> dims(c.shape.begin(), c.shape.begin() + c.depth);
    const Shape slice = Shape(c.shape).suffix(c.depth);
    for (DType dtype : {DType::Float32, DType::Float16, DType::Int64}) {
      const Tensor indices = random_indices(rng, DType::Int64, c.batch, dims);
      const Tensor updates = random_tensor(rng, dtype, c.batch.concat(slice));
      for (const RowLayout& layout : test_layouts(rng, c.batch.dim(0), p)) {
        check_scatter_nd(indices, updates, c.shape, layout, layout, {},
                         std::string(dtype_name(dtype)) + " shape " + Shape(c.shape).str() +
                             " K=" + std::to_string(c.depth) + " " + layout_str(layout));
      }
      // Updates sharded unlike the indices.
      check_scatter_nd(indices, updates, c.shape, random_layout(rng, c.batch.dim(0), p),
                       random_layout(rng, c.batch.dim(0), p), {}, "mixed layouts " + Shape(c.shape).str());
    }
  }
}

TEST(DistScatterNd, BoolAccumulatesAsOrAndParallelSchedule) {
  Rng rng(303);
  const int p = world().size();
  const Tensor indices = random_indices(rng, DType::Int32, Shape{60}, {8}, 4);
  const Tensor flags = random_tensor(rng, DType::Bool, Shape{60, 3});
  OpOptions parallel;
  parallel.schedule = Schedule::Parallel;
  for (const RowLayout& layout : test_layouts(rng, 60, p)) {
    check_scatter_nd(indices, flags, {8, 3}, layout, layout, {}, "bool " + layout_str(layout));
    for (DType dtype : {DType::Float32, DType::Float16, DType::Float64}) {
      const Tensor updates = random_tensor(rng, dtype, Shape{60, 3});
      check_scatter_nd(indices, updates, {8, 3}, layout, layout, parallel,
                       std::string("parallel schedule ") + dtype_name(dtype) + " " + layout_str(layout));
    }
  }
}

TEST(DistScatterNd, EveryUpdateToOneRank) {
  Rng rng(304);
  const int p = world().size();
  const std::int64_t rows = 4 * p;  // balanced output: rank 0 owns rows [0, 4)
  const Tensor first = random_indices(rng, DType::Int32, Shape{50}, {4});
  std::vector<std::int64_t> last_rows;
  for (std::int64_t i = 0; i < 50; ++i) last_rows.push_back(rows - 1 - (i % 4));
  const Tensor last = index_tensor(DType::Int32, Shape{50, 1}, last_rows);
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{50, 5});
  for (const RowLayout& layout : test_layouts(rng, 50, p)) {
    check_scatter_nd(first, updates, {rows, 5}, layout, layout, {}, "all to rank 0 " + layout_str(layout));
    check_scatter_nd(last, updates, {rows, 5}, layout, layout, {}, "all to the last rank " + layout_str(layout));
  }
}

TEST(DistScatter, OutputsOfSeveralPieces) {
  // Rows of 16 KiB: an 8 MiB piece of the output (LazyTensor::kPieceBytes) is 512 rows, so
  // 1300 rows are three pieces, and rows made 3 at a time (expect_same_rows) or all at once
  // cross their boundaries. Fewer updates than rows, with duplicates: streamed. With index
  // depth 2 into [650, 2, 4096] each row of the output is two targets.
  Rng rng(306);
  const int p = world().size();
  const Tensor indices = random_indices(rng, DType::Int64, Shape{700}, {1300}, 40);
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{700, 4096});
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{1300, 4096});
  const Tensor deep = random_indices(rng, DType::Int32, Shape{700}, {650, 2}, 40);
  for (const RowLayout& layout : {RowLayout::balanced(700, p), random_layout(rng, 700, p)}) {
    const std::string what = "1300 rows of 16 KiB " + layout_str(layout);
    check_scatter_nd(indices, updates, {1300, 4096}, layout, layout, {}, what);
    check_scatter_nd(deep, updates, {650, 2, 4096}, layout, layout, {}, what + ", index depth 2");
    for (const ScatterOp op : {ScatterOp::Add, ScatterOp::Update})
      check_tensor_scatter(op, tensor, indices, updates, random_layout(rng, 1300, p), layout, layout, {}, what);
  }
}

TEST(DistScatterNd, IgnorePolicyAndEmptyInputs) {
  Rng rng(305);
  const int p = world().size();
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  // A third of the index rows out of range (negative or too large) in either coordinate.
  Tensor indices = random_indices(rng, DType::Int64, Shape{45}, {6, 3});
  for (std::int64_t i = 0; i < 45; i += 3) set_index_value(indices, 2 * i + (i % 2), i % 6 == 0 ? -1 : 6 + i);
  const Tensor updates = random_tensor(rng, DType::Float64, Shape{45, 2});
  for (const RowLayout& layout : test_layouts(rng, 45, p)) {
    check_scatter_nd(indices, updates, {6, 3, 2}, layout, layout, ignore, "ignore " + layout_str(layout));
  }
  // No updates at all.
  const Tensor no_indices = index_tensor(DType::Int32, Shape{0, 1}, {});
  const Tensor no_updates(DType::Float32, Shape{0, 4});
  check_scatter_nd(no_indices, no_updates, {5, 4}, RowLayout::balanced(0, p), RowLayout::balanced(0, p), {},
                   "no updates");
  // An empty output (shape [0, 4]) with no updates.
  check_scatter_nd(no_indices, no_updates, {0, 4}, RowLayout::balanced(0, p), RowLayout::balanced(0, p), {},
                   "empty output");
}

// Rank-1 indices: TF reads them as K = indices.shape[0] in one check and as depth-1
// rows in another, so almost none pass; the distributed ops must refuse them with
// the same text on every rank, however the index elements are spread.
TEST(DistScatterNd, RankOneIndicesAreRefusedAlike) {
  Rng rng(306);
  const int p = world().size();
  for (DType index_dtype : {DType::Int32, DType::Int64}) {
    const Tensor indices = index_tensor(index_dtype, Shape{2}, {3, 1});
    const Tensor updates = random_tensor(rng, DType::Float32, Shape{2});
    const Tensor tensor = random_tensor(rng, DType::Float32, Shape{5, 5, 2});
    for (const RowLayout& layout : test_layouts(rng, 2, p)) {
      const std::string expected = error_of([&] { scatter_nd(indices, updates, {5, 5, 2}); });
      EXPECT_NE(expected, "");
      EXPECT_EQ(error_of([&] {
                  scatter_nd(world(), shard(indices, layout), shard(updates, layout), {5, 5, 2});
                }),
                expected)
          << layout_str(layout);
      const std::string expected_t = error_of([&] { tensor_scatter(ScatterOp::Add, tensor, indices, updates); });
      EXPECT_NE(expected_t, "");
      EXPECT_EQ(error_of([&] {
                  tensor_scatter(world(), ScatterOp::Add, shard(tensor), shard(indices, layout),
                                 shard(updates, layout));
                }),
                expected_t)
          << layout_str(layout);
    }
  }
}

TEST(DistTensorScatter, EveryOpOverDtypesAndLayouts) {
  Rng rng(311);
  const int p = world().size();
  for (DType dtype : arithmetic_dtypes()) {
    for (ScatterOp op : kTensorOps) {
      const DType index_dtype = op == ScatterOp::Add || op == ScatterOp::Min ? DType::Int32 : DType::Int64;
      if (!tf_has_cpu_kernel(scatter_op_name(op), dtype, index_dtype)) continue;
      const Tensor tensor = random_tensor(rng, dtype, Shape{9, 3});
      const Tensor indices = random_indices(rng, index_dtype, Shape{70}, {9}, 4);  // duplicates in rows 0..3
      const Tensor updates = random_tensor(rng, dtype, Shape{70, 3});
      const std::vector<RowLayout> tensor_layouts = test_layouts(rng, 9, p);
      const std::vector<RowLayout> index_layouts = test_layouts(rng, 70, p);
      for (std::size_t i = 0; i < std::max(tensor_layouts.size(), index_layouts.size()); ++i) {
        const RowLayout& tl = tensor_layouts[i % tensor_layouts.size()];
        const RowLayout& il = index_layouts[i % index_layouts.size()];
        check_tensor_scatter(
            op, tensor, indices, updates, tl, il, il, {},
            std::string(dtype_name(dtype)) + " tensor " + layout_str(tl) + " indices " + layout_str(il));
      }
    }
  }
}

TEST(DistTensorScatter, MovementOpOnEveryRowSize) {
  Rng rng(312);
  const int p = world().size();
  for (DType dtype : movement_dtypes()) {
    const Tensor tensor = random_tensor(rng, dtype, Shape{12, 2});
    const Tensor indices = random_indices(rng, DType::Int32, Shape{30}, {12}, 5);
    const Tensor updates = random_tensor(rng, dtype, Shape{30, 2});
    for (const RowLayout& layout : test_layouts(rng, 30, p)) {
      check_tensor_scatter(ScatterOp::Update, tensor, indices, updates, random_layout(rng, 12, p), layout, layout, {},
                           std::string(dtype_name(dtype)) + " " + layout_str(layout));
    }
  }
}

// TensorScatterUpdate with few updates for many rows and many for few, on both
// schedules: the last writer in global order wins however the updates arrive
// (from lower ranks, this rank's own, from higher ranks).
TEST(DistTensorScatter, UpdateWithFewAndManyUpdatesPerRow) {
  Rng rng(315);
  const int p = world().size();
  OpOptions parallel;
  parallel.schedule = Schedule::Parallel;
  struct Case {
    std::int64_t rows, updates, duplicated;
  };
  for (const Case c : {Case{64, 6, 3}, Case{64, 15, 64}, Case{8, 40, 3}, Case{5, 200, 5}}) {
    const Tensor tensor = random_tensor(rng, DType::Float32, Shape{c.rows, 4});
    const Tensor indices = random_indices(rng, DType::Int64, Shape{c.updates}, {c.rows}, c.duplicated);
    const Tensor updates = random_tensor(rng, DType::Float32, Shape{c.updates, 4});
    for (const RowLayout& layout : test_layouts(rng, c.updates, p)) {
      const RowLayout tensor_layout = random_layout(rng, c.rows, p);
      const std::string what =
          std::to_string(c.updates) + " updates into " + std::to_string(c.rows) + " rows " + layout_str(layout);
      check_tensor_scatter(ScatterOp::Update, tensor, indices, updates, tensor_layout, layout, layout, {}, what);
      check_tensor_scatter(ScatterOp::Update, tensor, indices, updates, tensor_layout, layout, layout, parallel,
                           what + " parallel");
    }
  }
}

TEST(DistTensorScatter, DeepIndicesParallelScheduleAndMixedLayouts) {
  Rng rng(313);
  const int p = world().size();
  OpOptions parallel;
  parallel.schedule = Schedule::Parallel;
  for (ScatterOp op : kTensorOps) {
    const Tensor tensor = random_tensor(rng, DType::Float32, Shape{6, 4, 3});
    const Tensor indices = random_indices(rng, DType::Int64, Shape{8, 6}, {6, 4}, 2);  // rank-3 indices, K=2
    const Tensor updates = random_tensor(rng, DType::Float32, Shape{8, 6, 3});
    for (const RowLayout& layout : test_layouts(rng, 8, p)) {
      const RowLayout tensor_layout = random_layout(rng, 6, p);
      check_tensor_scatter(op, tensor, indices, updates, tensor_layout, layout, layout, {},
                           "K=2 " + layout_str(layout));
      check_tensor_scatter(op, tensor, indices, updates, tensor_layout, layout, random_layout(rng, 8, p), parallel,
                           "K=2 parallel, updates elsewhere " + layout_str(layout));
    }
    // K = rank: element updates.
    const Tensor element_indices = random_indices(rng, DType::Int32, Shape{40}, {6, 4, 3}, 2);
    const Tensor element_updates = random_tensor(rng, DType::Float32, Shape{40});
    check_tensor_scatter(op, tensor, element_indices, element_updates, RowLayout::on_rank(6, p, p - 1),
                         random_layout(rng, 40, p), random_layout(rng, 40, p), {}, "K=rank");
  }
}

TEST(DistTensorScatter, EveryUpdateToOneRankIgnorePolicyAndEmpty) {
  Rng rng(314);
  const int p = world().size();
  const Tensor tensor = random_tensor(rng, DType::Float64, Shape{10, 2});
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < 33; ++i) rows.push_back(9 - (i % 2));
  const Tensor indices = index_tensor(DType::Int64, Shape{33, 1}, rows);  // rows 8 and 9
  const Tensor updates = random_tensor(rng, DType::Float64, Shape{33, 2});
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  Tensor bad = indices.deep_copy();
  for (std::int64_t i = 0; i < 33; i += 4) set_index_value(bad, i, i % 8 == 0 ? -2 : 10 + i);
  for (ScatterOp op : kTensorOps) {
    for (const RowLayout& layout : test_layouts(rng, 33, p)) {
      // Tensor all on rank 0, or balanced: the owner of rows 8, 9 gets every update.
      check_tensor_scatter(op, tensor, indices, updates, RowLayout::on_rank(10, p, 0), layout, layout, {},
                           "to one rank " + layout_str(layout));
      check_tensor_scatter(op, tensor, bad, updates, RowLayout::balanced(10, p), layout, layout, ignore,
                           "ignore " + layout_str(layout));
    }
    const Tensor no_indices = index_tensor(DType::Int32, Shape{0, 1}, {});
    const Tensor no_updates(DType::Float64, Shape{0, 2});
    check_tensor_scatter(op, tensor, no_indices, no_updates, random_layout(rng, 10, p), RowLayout::balanced(0, p),
                         RowLayout::balanced(0, p), {}, "no updates");
    const Tensor empty_tensor(DType::Float64, Shape{0, 2});
    check_tensor_scatter(op, empty_tensor, no_indices, no_updates, RowLayout::balanced(0, p), RowLayout::balanced(0, p),
                         RowLayout::balanced(0, p), {}, "empty tensor");
  }
}

// Exchanges split into many rounds (a few rows per peer each) give the same bytes.
TEST(DistScatter, SplitExchangesGiveTheSameBytes) {
  Rng rng(315);
  const int p = world().size();
  const OpOptions rounds = with_round_limit(2 * p);
  for (DType dtype : {DType::Float32, DType::Float16}) {
    const Tensor indices = random_indices(rng, DType::Int64, Shape{90}, {12}, 5);
    const Tensor updates = random_tensor(rng, dtype, Shape{90, 3});
    const Tensor tensor = random_tensor(rng, dtype, Shape{12, 3});
    for (const RowLayout& layout : test_layouts(rng, 90, p)) {
      check_scatter_nd(indices, updates, {12, 3}, layout, layout, rounds, "rounds " + layout_str(layout));
      check_tensor_scatter(ScatterOp::Update, tensor, indices, updates, random_layout(rng, 12, p), layout, layout,
                           rounds, "rounds " + layout_str(layout));
    }
  }
}

// Index rows whose target row lives on their own rank never go through MPI.
TEST(DistScatter, RowsThatStayLocalAreNotSent) {
  Rng rng(316);
  const int p = world().size();
  const std::int64_t rows = 5 * p;
  std::vector<std::int64_t> own, reversed;
  for (std::int64_t i = 0; i < rows; ++i) {
    own.push_back(i);
    reversed.push_back(rows - 1 - i);
  }
  const RowLayout layout = RowLayout::balanced(rows, p);  // = ScatterNd's output layout
  const Tensor updates = random_tensor(rng, DType::Float64, Shape{rows, 2});
  const Tensor local_indices = index_tensor(DType::Int32, Shape{rows, 1}, own);
  OpStats stats;
  OpOptions options;
  options.stats = &stats;
  check_scatter_nd(local_indices, updates, {rows, 2}, layout, layout, options, "own rows");
  EXPECT_EQ(stats.bytes_sent, 0);
  check_tensor_scatter(ScatterOp::Add, updates, local_indices, updates, layout, layout, layout, options, "own rows");
  EXPECT_EQ(stats.bytes_sent, 0);
  const Tensor remote_indices = index_tensor(DType::Int32, Shape{rows, 1}, reversed);
  check_scatter_nd(remote_indices, updates, {rows, 2}, layout, layout, options, "reversed rows");
  const std::int64_t sent = world().sum(stats.bytes_sent);
  if (p > 1) {
    EXPECT_GT(sent, 0);
  } else {
    EXPECT_EQ(sent, 0);
  }
}

// When the ops read replicated indices and updates instead of routing: the other ranks'
// index rows ((ranks - 1) per own one) may cost no more than routing a row (its bookkeeping,
// kRouteBytesPerRow, and its update row); fixed-size dtypes, an index depth above 0, rows.
TEST(DistScatter, WhenReplicasAreRead) {
  const auto reads = [](Shape indices, DType index_dtype, Shape updates, DType dtype, int ranks) {
    return scatter_reads_replicas(indices, index_dtype, updates, dtype, ranks);
  };
  // 16 float32 per row, int64 indices (W1, W2): 8 (R - 1) <= 28 + 64 up to 12 ranks.
  EXPECT_FALSE(reads(Shape{100, 1}, DType::Int64, Shape{100, 16}, DType::Float32, 1));
  EXPECT_TRUE(reads(Shape{100, 1}, DType::Int64, Shape{100, 16}, DType::Float32, 2));
  EXPECT_TRUE(reads(Shape{100, 1}, DType::Int64, Shape{100, 16}, DType::Float32, 12));
  EXPECT_FALSE(reads(Shape{100, 1}, DType::Int64, Shape{100, 16}, DType::Float32, 13));
  // One float32 per row: 8 (R - 1) <= 32 up to 5 ranks; int32 indices up to 9.
  EXPECT_TRUE(reads(Shape{100, 1}, DType::Int64, Shape{100}, DType::Float32, 5));
  EXPECT_FALSE(reads(Shape{100, 1}, DType::Int64, Shape{100}, DType::Float32, 6));
  EXPECT_TRUE(reads(Shape{100, 1}, DType::Int32, Shape{100}, DType::Float32, 9));
  // Two coordinates per row, rows of a batch: [4, 25, 2] indices are 100 rows of 16 bytes.
  EXPECT_TRUE(reads(Shape{4, 25, 2}, DType::Int64, Shape{4, 25, 3}, DType::Float64, 4));
  EXPECT_FALSE(reads(Shape{4, 25, 2}, DType::Int64, Shape{4, 25, 3}, DType::Float64, 5));
  // Never: strings, bools, no index rows, index depth 0, updates that do not fit the rows.
  EXPECT_FALSE(reads(Shape{100, 1}, DType::Int64, Shape{100}, DType::String, 2));
  EXPECT_FALSE(reads(Shape{100, 1}, DType::Int64, Shape{100}, DType::Bool, 2));
  EXPECT_FALSE(reads(Shape{0, 1}, DType::Int64, Shape{0}, DType::Float32, 2));
  EXPECT_FALSE(reads(Shape{100, 0}, DType::Int64, Shape{100, 5}, DType::Float32, 2));
  EXPECT_FALSE(reads(Shape{4, 1}, DType::Int64, Shape{3}, DType::Float32, 2));
}

}  // namespace
}  // namespace shardops
