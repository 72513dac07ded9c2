// Distributed DynamicStitch against the one-rank op, byte for byte: several inputs
// of any index rank (scalars too), duplicates within and across inputs and ranks,
// and the balanced output layout of docs/design.md.
#include <gtest/gtest.h>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace {

using namespace test;

// One stitch input: the index tensor, its data, and how each is sharded.
struct Input {
  Tensor indices, data;
  RowLayout index_layout, data_layout;
};

void check_stitch(const std::vector<Input>& inputs, const OpOptions& options, const std::string& what) {
  std::vector<Tensor> indices, data;
  std::vector<DistTensor> dindices, ddata;
  for (const Input& in : inputs) {
    indices.push_back(in.indices);
    data.push_back(in.data);
    dindices.push_back(shard(in.indices, in.index_layout));
    ddata.push_back(shard(in.data, in.data_layout));
  }
  const Tensor expected = dynamic_stitch(indices, data, options);
  // Both schedules (in key order; keyed by an atomic max) when the caller leaves it open.
  std::vector<Schedule> schedules{options.schedule};
  if (options.schedule == Schedule::Auto) schedules = {Schedule::Sequential, Schedule::Parallel};
  for (Schedule schedule : schedules) {
    OpOptions opts = options;
    opts.schedule = schedule;
    const std::string label = what + (schedule == Schedule::Sequential ? " (sequential)" : " (parallel)");
    const DistTensor got = dynamic_stitch(world(), dindices, ddata, opts);
    expect_same_tensor(got, expected, label);
    // Rows made later (dynamic_stitch_lazy): the same rows, made where the rows are bytes,
    // of at least one element, and at most twice as many index elements as output rows.
    const LazyTensor lazy = dynamic_stitch_lazy(world(), dindices, ddata, opts);
    expect_same_rows(lazy, got, label + " (made later)");
    std::int64_t entries = 0;
    for (const Tensor& t : indices) entries += t.num_elements();
    const bool expect_lazy = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible &&
                             !is_string(expected.dtype()) && expected.num_elements() > 0 &&
                             entries <= 2 * expected.shape().dim(0);
    EXPECT_EQ(!lazy.held(), expect_lazy) << label;
    // DynamicStitch's output is balanced.
    const std::int64_t rows = expected.shape().dim(0);
    EXPECT_EQ(got.layout(), RowLayout::balanced(rows, world().size()))
        << label << ": layout " << layout_str(got.layout());
  }
}

std::int64_t rows_of(const Shape& s) { return s.rank() == 0 ? 1 : s.dim(0); }

// indices of `shape` with values in [lo, hi], and data of shape + slice.
Input make_input(Rng& rng, DType dtype, const Shape& index_shape, const Shape& slice, std::int32_t lo,
                 std::int32_t hi) {
  Input in;
  in.indices = random_int32(rng, index_shape, lo, hi);
  in.data = random_tensor(rng, dtype, index_shape.concat(slice));
  const int p = world().size();
  const std::int64_t rows = index_shape.rank() == 0 ? 1 : index_shape.dim(0);
  in.index_layout = index_shape.rank() == 0 ? RowLayout::on_rank(1, p, 0) : random_layout(rng, rows, p);
  // A scalar index pairs with data of the slice's shape: shard that by its own rows.
  in.data_layout = index_shape.rank() == 0 ? random_layout(rng, rows_of(in.data.shape()), p) : in.index_layout;
  return in;
}

TEST(DistDynamicStitch, OneInputOverLayoutsAndDtypes) {
  Rng rng(201);
  const int p = world().size();
  for (DType dtype : movement_dtypes()) {
    for (std::int64_t rows : {1, 2, 5, 60}) {
      Input in = make_input(rng, dtype, Shape{rows}, Shape{3}, 0, static_cast<std::int32_t>(rows + 3));
      for (const RowLayout& layout : test_layouts(rng, rows, p)) {
        in.index_layout = in.data_layout = layout;
        check_stitch({in}, {},
                     std::string(dtype_name(dtype)) + " rows " + std::to_string(rows) + " " + layout_str(layout));
      }
    }
  }
}

TEST(DistDynamicStitch, SeveralInputsWithScalarAndMatrixIndices) {
  Rng rng(202);
  const int p = world().size();
  for (DType dtype : {DType::Int8, DType::Float16, DType::Float32, DType::Complex128}) {
    for (int trial = 0; trial < 6; ++trial) {
      const Shape slice = trial % 2 ? Shape{2, 3} : Shape{};
      std::vector<Input> inputs;
      inputs.push_back(make_input(rng, dtype, Shape{23}, slice, 0, 30));
      inputs.push_back(make_input(rng, dtype, Shape(), slice, 0, 30));      // scalar index
      inputs.push_back(make_input(rng, dtype, Shape{7, 3}, slice, 0, 30));  // rank-2 index
      inputs.push_back(make_input(rng, dtype, Shape{0}, slice, 0, 30));     // empty input
      inputs.push_back(make_input(rng, dtype, Shape(), slice, 31, 31));     // scalar that sets the size
      inputs.push_back(make_input(rng, dtype, Shape{11}, slice, 0, 30));
      // Data sharded unlike its indices (moved to the indices' layout by the op).
      inputs[0].data_layout = random_layout(rng, 23, p);
      inputs[2].data_layout = RowLayout::on_rank(7, p, p - 1);
      check_stitch(inputs, {}, std::string(dtype_name(dtype)) + " trial " + std::to_string(trial));
    }
  }
}

// Many writers of few rows, spread over all ranks and inputs: the last (m, i) in
// global order must win on every rank count.
TEST(DistDynamicStitch, DuplicatesAcrossRanksAndInputs) {
  Rng rng(203);
  const int p = world().size();
  for (DType dtype : {DType::Float32, DType::Int64, DType::Complex64}) {
    std::vector<Input> inputs;
    for (int m = 0; m < 3; ++m) inputs.push_back(make_input(rng, dtype, Shape{40}, Shape{2}, 0, 4));
    for (const RowLayout& layout : test_layouts(rng, 40, p)) {
      for (Input& in : inputs) in.index_layout = in.data_layout = layout;
      check_stitch(inputs, {}, std::string(dtype_name(dtype)) + " hot rows, " + layout_str(layout));
    }
    // Each input sharded its own way.
    for (Input& in : inputs) in.index_layout = in.data_layout = random_layout(rng, 40, p);
    check_stitch(inputs, {}, std::string(dtype_name(dtype)) + " hot rows, mixed layouts");
  }
}

TEST(DistDynamicStitch, OutputsOfSeveralPieces) {
  // Rows of 16 KiB: an 8 MiB piece of the output (LazyTensor::kPieceBytes) is 512 rows, so
  // 1300 rows are three pieces, and rows made 3 at a time (expect_same_rows) or all at once
  // cross their boundaries. Fewer index elements than rows, with duplicates: streamed.
  Rng rng(211);
  std::vector<Input> inputs;
  for (int m = 0; m < 2; ++m) inputs.push_back(make_input(rng, DType::Float32, Shape{400}, Shape{4096}, 0, 1299));
  inputs.push_back(make_input(rng, DType::Float32, Shape{1}, Shape{4096}, 1299, 1299));  // the last row named
  check_stitch(inputs, {}, "1300 rows of 16 KiB");
}

TEST(DistDynamicStitch, EveryRowToOneRank) {
  Rng rng(204);
  const int p = world().size();
  // Output of 4p rows, balanced: rank 0 owns [0, 4), the last rank [4p-4, 4p).
  const std::int32_t last = 4 * p - 1;
  for (bool to_last : {false, true}) {
    std::vector<Input> inputs;
    inputs.push_back(make_input(rng, DType::Float64, Shape{30}, Shape{3}, to_last ? last - 3 : 0, to_last ? last : 3));
    inputs.push_back(make_input(rng, DType::Float64, Shape{1}, Shape{3}, last, last));  // sets the size
    for (const RowLayout& layout : test_layouts(rng, 30, p)) {
      inputs[0].index_layout = inputs[0].data_layout = layout;
      check_stitch(inputs, {}, std::string(to_last ? "all to the last rank " : "all to rank 0 ") + layout_str(layout));
    }
  }
}

TEST(DistDynamicStitch, TensorFlowDocumentationExample) {
  const int p = world().size();
  // tf.dynamic_stitch docs: indices 6, [4, 1], [[5, 2], [0, 3]].
  std::vector<Input> inputs(3);
  inputs[0].indices = Tensor::from_vector(DType::Int32, Shape(), std::vector<std::int32_t>{6});
  inputs[0].data = Tensor::from_vector(DType::Float32, Shape{2}, std::vector<float>{61, 62});
  inputs[1].indices = Tensor::from_vector(DType::Int32, Shape{2}, std::vector<std::int32_t>{4, 1});
  inputs[1].data = Tensor::from_vector(DType::Float32, Shape{2, 2}, std::vector<float>{41, 42, 11, 12});
  inputs[2].indices = Tensor::from_vector(DType::Int32, Shape{2, 2}, std::vector<std::int32_t>{5, 2, 0, 3});
  inputs[2].data =
      Tensor::from_vector(DType::Float32, Shape{2, 2, 2}, std::vector<float>{51, 52, 21, 22, 1, 2, 31, 32});
  inputs[0].index_layout = RowLayout::on_rank(1, p, 0);
  inputs[0].data_layout = RowLayout::on_rank(2, p, p - 1);
  inputs[1].index_layout = inputs[1].data_layout = RowLayout::on_rank(2, p, p - 1);
  inputs[2].index_layout = inputs[2].data_layout = RowLayout::balanced(2, p);
  check_stitch(inputs, {}, "TF example");
  std::vector<DistTensor> di, dd;
  for (const Input& in : inputs) {
    di.push_back(shard(in.indices, in.index_layout));
    dd.push_back(shard(in.data, in.data_layout));
  }
  const Tensor merged = dynamic_stitch(world(), di, dd).allgather(world());
  EXPECT_EQ(merged.shape(), Shape({7, 2}));
  EXPECT_EQ(merged.to_vector<float>(), (std::vector<float>{1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62}));
}

TEST(DistDynamicStitch, IgnorePolicySkipsNegativeIndices) {
  Rng rng(205);
  const int p = world().size();
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  std::vector<Input> inputs;
  inputs.push_back(make_input(rng, DType::Int32, Shape{35}, Shape{2}, -3, 12));
  inputs.push_back(make_input(rng, DType::Int32, Shape{9}, Shape{2}, -1, 5));
  for (const RowLayout& layout : test_layouts(rng, 35, p)) {
    inputs[0].index_layout = inputs[0].data_layout = layout;
    check_stitch(inputs, ignore, "ignore " + layout_str(layout));
  }
}

TEST(DistDynamicStitch, EmptyInputsAndRows) {
  Rng rng(206);
  const int p = world().size();
  // No index at all: output [0, 3].
  std::vector<Input> none{make_input(rng, DType::Float32, Shape{0}, Shape{3}, 0, 0),
                          make_input(rng, DType::Float32, Shape{0, 2}, Shape{3}, 0, 0)};
  check_stitch(none, {}, "no indices");
  // Rows of zero elements.
  std::vector<Input> zero{make_input(rng, DType::Float32, Shape{12}, Shape{0}, 0, 20)};
  for (const RowLayout& layout : test_layouts(rng, 12, p)) {
    zero[0].index_layout = zero[0].data_layout = layout;
    check_stitch(zero, {}, "zero-width rows " + layout_str(layout));
  }
  // More output rows than ranks hold indices: untouched rows are zero.
  std::vector<Input> sparse{make_input(rng, DType::UInt16, Shape{2}, Shape{4}, 40, 41)};
  check_stitch(sparse, {}, "sparse");
}

// The output starts uninitialised and the rows nobody names are zeroed explicitly:
// check that on memory a previous, fully named stitch of the same size left full of
// values (large enough to be kept for reuse: core/HostMemory.hpp).
// Both schedules: the sequential one zeros the output before it assigns, the parallel
// one zeros only the unnamed rows.
void expect_unnamed_rows_zero_on_reused_memory(Schedule schedule) {
  OpOptions options;
  options.schedule = schedule;
  const int p = world().size();
  const std::int64_t rows = std::int64_t(1) << 19, cols = 16;  // 32 MB of float32: >= 8 MB per rank at 4
  const RowLayout layout = RowLayout::balanced(rows, p);
  const std::int64_t mine = layout.count(world().rank()), first = layout.offset(world().rank());
  {
    std::vector<std::int32_t> all(static_cast<std::size_t>(mine));
    for (std::int64_t i = 0; i < mine; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(first + i);
    std::vector<float> ones(static_cast<std::size_t>(mine * cols), 1.5f);
    const DistTensor idx(Tensor::from_vector(DType::Int32, Shape{mine}, all), Shape{rows}, layout, world().rank());
    const DistTensor val(Tensor::from_vector(DType::Float32, Shape{mine, cols}, ones), Shape{rows, cols}, layout,
                         world().rank());
    (void)dynamic_stitch(world(), {idx}, {val}, options);
  }
  // Only the last row is named now.
  const RowLayout one = RowLayout::on_rank(1, p, p - 1);
  const bool last = world().rank() == p - 1;
  const DistTensor idx(Tensor::from_vector(DType::Int32, Shape{last ? 1 : 0},
                                           last ? std::vector<std::int32_t>{static_cast<std::int32_t>(rows - 1)}
                                                : std::vector<std::int32_t>{}),
                       Shape{1}, one, world().rank());
  const DistTensor val(Tensor::from_vector(DType::Float32, Shape{last ? 1 : 0, cols},
                                           std::vector<float>(last ? static_cast<std::size_t>(cols) : 0, 2.5f)),
                       Shape{1, cols}, one, world().rank());
  const DistTensor got = dynamic_stitch(world(), {idx}, {val}, options);
  ASSERT_EQ(got.local().shape(), (Shape{mine, cols}));
  const std::vector<float> local = got.local().to_vector<float>();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < mine; ++i) {
    const float want = first + i == rows - 1 ? 2.5f : 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) wrong += local[static_cast<std::size_t>(i * cols + c)] != want;
  }
  EXPECT_EQ(wrong, 0) << "rank " << world().rank() << (schedule == Schedule::Sequential ? " sequential" : " parallel");
}

TEST(DistDynamicStitch, UnnamedRowsAreZeroOnReusedMemory) {
  expect_unnamed_rows_zero_on_reused_memory(Schedule::Sequential);
  expect_unnamed_rows_zero_on_reused_memory(Schedule::Parallel);
}

TEST(DistDynamicStitch, SplitExchangesGiveTheSameBytes) {
  Rng rng(207);
  const int p = world().size();
  const OpOptions rounds = with_round_limit(2 * p);
  std::vector<Input> inputs;
  for (int m = 0; m < 3; ++m) inputs.push_back(make_input(rng, DType::Float16, Shape{30}, Shape{3}, 0, 9));
  for (const RowLayout& layout : test_layouts(rng, 30, p)) {
    inputs[1].index_layout = inputs[1].data_layout = layout;
    check_stitch(inputs, rounds, "rounds " + layout_str(layout));
  }
}

TEST(DistDynamicStitch, RowsThatStayLocalAreNotSent) {
  Rng rng(208);
  const int p = world().size();
  const std::int64_t rows = 4 * p;
  std::vector<std::int32_t> own;
  for (std::int32_t i = 0; i < rows; ++i) own.push_back(i);
  Input in;
  in.indices = Tensor::from_vector(DType::Int32, Shape{rows}, own);
  in.data = random_tensor(rng, DType::Int32, Shape{rows, 2});
  in.index_layout = in.data_layout = RowLayout::balanced(rows, p);  // = the output layout
  OpStats stats;
  OpOptions options;
  options.stats = &stats;
  check_stitch({in}, options, "own rows");
  EXPECT_EQ(stats.bytes_sent, 0);
}

// The inverse of a partition of each rank's own rows (the W5 pattern): every index
// names a row of the rank that holds it, so nothing is routed. Uneven blocks, a
// last input that names some of each rank's rows again (the later writer wins), and
// ignored negative indices; then one stray index on the last rank, which names a row
// of rank 0 and makes every rank route (the choice is collective).
TEST(DistDynamicStitch, InverseOfALocalPartitionStaysInPlace) {
  Rng rng(209);
  const int p = world().size();
  const std::int64_t rows = 10 * p + 3, pieces = 4;
  const RowLayout out = RowLayout::balanced(rows, p);  // the stitch's output layout
  for (bool ignore_negatives : {false, true}) {
    // pos[m][r]: the rows of rank r's block in piece m, in order.
    std::vector<std::vector<std::vector<std::int32_t>>> pos(
        static_cast<std::size_t>(pieces + 1), std::vector<std::vector<std::int32_t>>(static_cast<std::size_t>(p)));
    for (int r = 0; r < p; ++r) {
      const std::size_t ru = static_cast<std::size_t>(r);
      for (std::int64_t row = out.offset(r); row < out.offset(r) + out.count(r); ++row) {
        pos[rng() % pieces][ru].push_back(static_cast<std::int32_t>(row));
        if (ignore_negatives && rng() % 5 == 0) pos[rng() % pieces][ru].push_back(-1);
      }
      for (int k = 0; k < 4; ++k) {  // rewrites of the rank's own rows
        pos[pieces][ru].push_back(static_cast<std::int32_t>(
            out.offset(r) + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(out.count(r)))));
      }
    }
    std::vector<Input> inputs;
    for (const auto& piece : pos) {
      std::vector<std::int32_t> all;
      std::vector<std::int64_t> counts;
      for (const auto& block : piece) {
        all.insert(all.end(), block.begin(), block.end());
        counts.push_back(static_cast<std::int64_t>(block.size()));
      }
      Input in;
      const std::int64_t n = static_cast<std::int64_t>(all.size());
      in.indices = Tensor::from_vector(DType::Int32, Shape{n}, all);
      in.data = random_tensor(rng, DType::Float32, Shape{n, 3});
      in.index_layout = in.data_layout = RowLayout(counts);
      inputs.push_back(in);
    }
    OpStats stats;
    OpOptions options;
    options.stats = &stats;
    if (ignore_negatives) options.bad_indices = BadIndices::Ignore;
    const std::string what = ignore_negatives ? "ignoring negatives" : "all named";
    check_stitch(inputs, options, "in place, " + what);
    EXPECT_EQ(stats.bytes_sent, 0) << what;
    // One index of the last rank's rows in piece 0 now names row 0 (rank 0's).
    Input& first = inputs[0];
    const std::int64_t last_rank_first = first.index_layout.offset(p - 1);
    if (p > 1 && first.index_layout.count(p - 1) > 0) {
      std::vector<std::int32_t> ids = first.indices.to_vector<std::int32_t>();
      ids[static_cast<std::size_t>(last_rank_first)] = 0;
      first.indices = Tensor::from_vector(DType::Int32, first.indices.shape(), ids);
      check_stitch(inputs, options, "one stray index, " + what);
    }
  }
}

}  // namespace
}  // namespace shardops
