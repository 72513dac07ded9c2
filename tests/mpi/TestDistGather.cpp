// Distributed GatherNd against the one-rank op, byte for byte: every index depth
// (K = 0 .. rank), slices, rank-1 and rank-3 indices, params and indices sharded
// independently. Output layout: the layout of the indices (docs/design.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace {

using namespace test;

const char* gather_params_name(GatherParams how) {
  return how == GatherParams::Fetch ? "fetch" : how == GatherParams::Replicate ? "replicate" : "auto";
}

// gather_nd_lazy's rows are \p held's; they are made on demand where each rank can make
// them alone.
void check_lazy(const LazyTensor& lazy, const DistTensor& held, const Tensor& params, const Tensor& indices,
                GatherParams how, const std::string& label) {
  expect_same_rows(lazy, held, label + " (made later)");
  const std::int64_t depth = indices.rank() >= 2 ? indices.shape().dim(indices.rank() - 1) : 0;
  const bool alone = world().size() == 1 || how == GatherParams::Replicate;
  const bool expect_lazy =
      alone && !is_string(params.dtype()) && indices.rank() >= 2 && depth > 0 && held.shape().num_elements() > 0;
  EXPECT_EQ(!lazy.held(), expect_lazy) << label;
}

// Each way of getting remote params rows (forced fetch, forced replication, then the
// automatic choice, last so that options.stats tells what it did) gives the
// one-rank op's bytes, held or made later.
void check_gather(const Tensor& params, const Tensor& indices, const RowLayout& params_layout,
                  const RowLayout& index_layout, const OpOptions& options, const std::string& what) {
  const Tensor expected = gather_nd(params, indices, options);
  const int p = world().size();
  for (GatherParams how : {GatherParams::Fetch, GatherParams::Replicate, GatherParams::Auto}) {
    OpOptions opts = options;
    opts.gather_params = how;
    const std::string label = what + " (" + gather_params_name(how) + ")";
    const DistTensor got = gather_nd(world(), shard(params, params_layout), shard(indices, index_layout), opts);
    expect_same_tensor(got, expected, label);
    if (how != GatherParams::Auto) {
      const LazyTensor lazy = gather_nd_lazy(world(), shard(params, params_layout), shard(indices, index_layout), opts);
      check_lazy(lazy, got, params, indices, how, label);
    }
    if (indices.rank() >= 2) {
      EXPECT_EQ(got.layout(), index_layout) << label << ": " << layout_str(got.layout());
    } else {
      // One index row: the one output lives on rank 0.
      EXPECT_EQ(got.layout(), RowLayout::on_rank(expected.rows(), p, 0)) << label << ": " << layout_str(got.layout());
    }
  }
}

TEST(DistGatherNd, RowsOverDtypesAndLayouts) {
  Rng rng(401);
  const int p = world().size();
  for (DType dtype : movement_dtypes()) {
    for (DType index_dtype : {DType::Int32, DType::Int64}) {
      const Tensor params = random_tensor(rng, dtype, Shape{11, 3});
      const Tensor indices = random_indices(rng, index_dtype, Shape{30}, {11});
      const std::vector<RowLayout> pl = test_layouts(rng, 11, p), il = test_layouts(rng, 30, p);
      for (std::size_t i = 0; i < std::max(pl.size(), il.size()); ++i) {
        check_gather(params, indices, pl[i % pl.size()], il[i % il.size()], {},
                     std::string(dtype_name(dtype)) + "/" + dtype_name(index_dtype) + " params " +
                         layout_str(pl[i % pl.size()]) + " indices " + layout_str(il[i % il.size()]));
      }
    }
  }
}

TEST(DistGatherNd, EveryIndexDepth) {
  Rng rng(402);
  const int p = world().size();
  const Tensor params = random_tensor(rng, DType::Float32, Shape{5, 4, 3});
  for (int depth = 1; depth <= 3; ++depth) {
    const std::vector<std::int64_t> dims(params.shape().dims().begin(), params.shape().dims().begin() + depth);
    for (const Shape& batch : {Shape{17}, Shape{6, 4}, Shape{1}}) {
      const Tensor indices = random_indices(rng, DType::Int64, batch, dims);
      for (const RowLayout& il : test_layouts(rng, batch.dim(0), p)) {
        check_gather(params, indices, random_layout(rng, 5, p), il, {},
                     "K=" + std::to_string(depth) + " batch " + batch.str() + " " + layout_str(il));
      }
    }
  }
}

// K = 0: every index row selects all of params.
TEST(DistGatherNd, IndexDepthZero) {
  Rng rng(403);
  const int p = world().size();
  const Tensor params = random_tensor(rng, DType::Int16, Shape{4, 3});
  for (const Shape& batch : {Shape{5}, Shape{3, 2}, Shape{0}}) {
    const Tensor indices = index_tensor(DType::Int32, batch.concat(Shape{0}), {});
    for (const RowLayout& il : test_layouts(rng, batch.dim(0), p)) {
      for (const RowLayout& pl : test_layouts(rng, 4, p)) {
        check_gather(params, indices, pl, il, {},
                     "K=0 batch " + batch.str() + " indices " + layout_str(il) + " params " + layout_str(pl));
      }
    }
  }
  // Rank-1 K=0 indices (shape [0]): the output is params itself.
  const Tensor none = index_tensor(DType::Int64, Shape{0}, {});
  for (const RowLayout& pl : test_layouts(rng, 4, p)) {
    check_gather(params, none, pl, RowLayout::balanced(0, p), {}, "indices [0], params " + layout_str(pl));
  }
}

// Rank-1 indices are one index row: the output is params.shape[K:].
TEST(DistGatherNd, RankOneIndices) {
  Rng rng(404);
  const int p = world().size();
  const Tensor params = random_tensor(rng, DType::Float64, Shape{6, 5, 2});
  for (const std::vector<std::int64_t>& values :
       {std::vector<std::int64_t>{4}, std::vector<std::int64_t>{5, 3}, std::vector<std::int64_t>{2, 4, 1}}) {
    const Tensor indices = index_tensor(DType::Int32, Shape{static_cast<std::int64_t>(values.size())}, values);
    for (const RowLayout& il : test_layouts(rng, indices.rows(), p)) {
      for (const RowLayout& pl : test_layouts(rng, 6, p)) {
        check_gather(
            params, indices, pl, il, {},
            "rank-1 K=" + std::to_string(values.size()) + " indices " + layout_str(il) + " params " + layout_str(pl));
      }
    }
  }
}

TEST(DistGatherNd, EveryIndexFromOneRank) {
  Rng rng(405);
  const int p = world().size();
  const Tensor params = random_tensor(rng, DType::Complex64, Shape{4 * p, 2});
  const Tensor first = random_indices(rng, DType::Int32, Shape{40}, {4});  // rows owned by rank 0 (balanced)
  std::vector<std::int64_t> last_rows;
  for (std::int64_t i = 0; i < 40; ++i) last_rows.push_back(4 * p - 1 - (i % 3));
  const Tensor last = index_tensor(DType::Int64, Shape{40, 1}, last_rows);
  for (const RowLayout& il : test_layouts(rng, 40, p)) {
    check_gather(params, first, RowLayout::balanced(4 * p, p), il, {}, "from rank 0, " + layout_str(il));
    check_gather(params, last, RowLayout::balanced(4 * p, p), il, {}, "from the last rank, " + layout_str(il));
  }
}

TEST(DistGatherNd, IgnorePolicyWritesZeros) {
  Rng rng(406);
  const int p = world().size();
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  const Tensor params = random_tensor(rng, DType::Float32, Shape{7, 3, 2});
  Tensor indices = random_indices(rng, DType::Int64, Shape{25}, {7, 3});
  for (std::int64_t i = 0; i < 25; i += 3) set_index_value(indices, 2 * i + (i % 2), i % 2 ? 3 + i : -1 - i);
  for (const RowLayout& il : test_layouts(rng, 25, p)) {
    check_gather(params, indices, random_layout(rng, 7, p), il, ignore, "ignore " + layout_str(il));
  }
  const Tensor one_bad = index_tensor(DType::Int32, Shape{2}, {1, 9});
  check_gather(params, one_bad, RowLayout::balanced(7, p), RowLayout::balanced(2, p), ignore, "ignore rank-1");
}

TEST(DistGatherNd, EmptyInputs) {
  Rng rng(407);
  const int p = world().size();
  const Tensor params = random_tensor(rng, DType::UInt8, Shape{5, 3});
  const Tensor none = index_tensor(DType::Int32, Shape{0, 1}, {});
  check_gather(params, none, RowLayout::balanced(5, p), RowLayout::balanced(0, p), {}, "no indices");
  const Tensor empty_params(DType::UInt8, Shape{0, 3});
  check_gather(empty_params, none, RowLayout::balanced(0, p), RowLayout::balanced(0, p), {}, "empty params");
  // Zero-width slices of params that have rows but no elements: TF refuses them
  // ("Requested more than 0 entries, but params is empty"), on every rank alike.
  const Tensor thin(DType::Float32, Shape{6, 0});
  const Tensor indices = random_indices(rng, DType::Int32, Shape{9}, {6});
  for (const RowLayout& il : test_layouts(rng, 9, p)) {
    const std::string expected = error_of([&] { gather_nd(thin, indices); });
    EXPECT_NE(expected, "");
    EXPECT_EQ(error_of([&] { gather_nd(world(), shard(thin), shard(indices, il)); }), expected) << layout_str(il);
  }
  // Zero-width slices of params with elements: K = rank over [6, 2] gives [9] rows of
  // one element; a [0]-wide batch of them gives an empty output.
  const Tensor params2 = random_tensor(rng, DType::Float32, Shape{6, 2});
  const Tensor none2 = index_tensor(DType::Int64, Shape{0, 2}, {});
  check_gather(params2, none2, RowLayout::on_rank(6, p, p - 1), RowLayout::balanced(0, p), {}, "no element indices");
}

TEST(DistGatherNd, SplitExchangesGiveTheSameBytes) {
  Rng rng(408);
  const int p = world().size();
  const OpOptions rounds = with_round_limit(p);  // one row per peer per round
  const Tensor params = random_tensor(rng, DType::Int64, Shape{13, 3});
  const Tensor indices = random_indices(rng, DType::Int32, Shape{40}, {13});
  for (const RowLayout& il : test_layouts(rng, 40, p)) {
    check_gather(params, indices, random_layout(rng, 13, p), il, rounds, "rounds " + layout_str(il));
  }
}

TEST(DistGatherNd, RowsThatStayLocalAreNotSent) {
  Rng rng(409);
  const int p = world().size();
  const std::int64_t rows = 3 * p;
  std::vector<std::int64_t> own;
  for (std::int64_t i = 0; i < rows; ++i) own.push_back(i);
  const RowLayout layout = RowLayout::balanced(rows, p);
  const Tensor params = random_tensor(rng, DType::Float32, Shape{rows, 4});
  OpStats stats;
  OpOptions options;
  options.stats = &stats;
  check_gather(params, index_tensor(DType::Int64, Shape{rows, 1}, own), layout, layout, options, "own rows");
  EXPECT_EQ(stats.bytes_sent, 0);
}

// Auto replicates params no larger than the average rank's output (params rows x ranks
// <= index rows): each rank then sends its params block to every other rank. Larger
// params are fetched row by row. Errors and the ignore policy agree either way.
TEST(DistGatherNd, AutoReplicatesSmallParams) {
  Rng rng(410);
  const int p = world().size();
  const std::int64_t rows = 5;
  const Tensor params = random_tensor(rng, DType::Float32, Shape{rows, 3});
  const RowLayout pl = RowLayout::balanced(rows, p);
  const Tensor many = random_indices(rng, DType::Int64, Shape{rows * p}, {rows});
  OpStats stats;
  OpOptions options;
  options.stats = &stats;
  check_gather(params, many, pl, RowLayout::balanced(rows * p, p), options, "index rows = ranks x params rows");
  const std::int64_t block_bytes = pl.count(world().rank()) * 3 * 4;
  EXPECT_EQ(stats.bytes_sent, p > 1 ? block_bytes * (p - 1) : 0);
  if (p > 1) {
    // One index row fewer: fetch. No rank sends its whole block to everyone then
    // (at most one row per index row it asked about or was asked for).
    const Tensor fewer = random_indices(rng, DType::Int64, Shape{rows * p - 1}, {rows});
    check_gather(params, fewer, pl, RowLayout::balanced(rows * p - 1, p), options, "one index row fewer");
    EXPECT_NE(stats.bytes_sent, block_bytes * (p - 1));
  }
  // A bad index on a replicating gather: the error a one-rank run gives, on every rank.
  Tensor bad = random_indices(rng, DType::Int32, Shape{rows * p}, {rows});
  set_index_value(bad, rows * p - 2, rows + 4);
  for (GatherParams how : {GatherParams::Replicate, GatherParams::Fetch}) {
    OpOptions opts;
    opts.gather_params = how;
    const std::string expected = error_of([&] { gather_nd(params, bad); });
    EXPECT_NE(expected, "");
    EXPECT_EQ(error_of([&] { gather_nd(world(), shard(params, pl), shard(bad), opts); }), expected)
        << gather_params_name(how);
  }
}

// Params every rank can read whole (DistTensor::replica: what the command line attaches
// when it maps an input on every rank) are read there: the same bytes, nothing sent, as
// gather_nd_replicates_params predicted from the shapes. Where gather_nd fetches rows
// instead, the replica is not used and rows move as without it.
TEST(DistGatherNd, ReplicaIsReadInsteadOfCopies) {
  Rng rng(411);
  const int p = world().size();
  const std::int64_t rows = 5;
  const Tensor params = random_tensor(rng, DType::Float32, Shape{rows, 3});
  const RowLayout pl = RowLayout::balanced(rows, p);
  const DistTensor with_replica = shard(params, pl).with_replica(params);
  struct Case {
    Tensor indices;
    std::string what;
  };
  const std::vector<Case> cases = {
      {random_indices(rng, DType::Int64, Shape{rows * p}, {rows}), "index rows = ranks x params rows"},
      {random_indices(rng, DType::Int32, Shape{rows * p - 1}, {rows}), "one index row fewer"},
      {index_tensor(DType::Int64, Shape{2, 0}, {}), "index depth 0"}};
  for (const Case& c : cases) {
    const bool replicates = gather_nd_replicates_params(params.shape(), c.indices.shape(), p);
    OpStats plain_stats, replica_stats;
    OpOptions plain, replica;
    plain.stats = &plain_stats;
    replica.stats = &replica_stats;
    const Tensor expected = gather_nd(params, c.indices);
    const RowLayout il = RowLayout::balanced(c.indices.rows(), p);
    expect_same_tensor(gather_nd(world(), shard(params, pl), shard(c.indices, il), plain), expected, c.what);
    expect_same_tensor(gather_nd(world(), with_replica, shard(c.indices, il), replica), expected,
                       c.what + " (replica)");
    EXPECT_EQ(replicates, p > 1 && c.what != "one index row fewer") << c.what;
    if (replicates) {
      EXPECT_GT(plain_stats.bytes_sent, 0) << c.what;
    }
    EXPECT_EQ(replica_stats.bytes_sent, replicates ? 0 : plain_stats.bytes_sent) << c.what;
    // Rows made later read the replica too.
    const LazyTensor lazy = gather_nd_lazy(world(), with_replica, shard(c.indices, il), replica);
    expect_same_tensor(lazy.whole(), expected, c.what + " (replica, made later)");
    EXPECT_EQ(replica_stats.bytes_sent, replicates ? 0 : plain_stats.bytes_sent) << c.what << " (made later)";
  }
  EXPECT_FALSE(gather_nd_replicates_params(Shape{rows, 3}, Shape{rows * p, 3}, p));  // K > rank: refused
  EXPECT_THROW(shard(params, pl).with_replica(params.slice_rows(0, rows - 1)), InternalError);
}

// gather_nd_params_rows: each rank's runs hold every params row an index row on any rank
// names in its block and begin and end at named rows; a bad index names none; many index
// rows, index depth 0 and strings read everything.
TEST(DistGatherNd, ParamsRowsReadAreTheRowsNamed) {
  const int p = world().size();
  Rng rng(77);
  const Shape params{1000, 64, 64};  // rows of 16 KiB: runs are joined across up to 4 rows
  const RowLayout layout = RowLayout::balanced(1000, p);
  const std::int64_t first = layout.offset(world().rank()), rows = layout.count(world().rank());
  std::vector<std::int64_t> named;
  for (int i = 0; i < 60; ++i) named.push_back(static_cast<std::int64_t>(rng() % 1000));
  std::vector<std::int64_t> values = named;
  values.push_back(-1);    // bad: names no row
  values.push_back(1000);  // bad
  const Tensor depth1 = Tensor::from_vector(DType::Int64, Shape{62, 1}, values);
  std::vector<std::int32_t> pairs;
  for (const std::int64_t v : values) {
    pairs.push_back(static_cast<std::int32_t>(v));
    pairs.push_back(7);
  }
  const Tensor depth2 = Tensor::from_vector(DType::Int32, Shape{62, 2}, pairs);
  for (const Tensor& indices : {depth1, depth2}) {
    const RowLayout index_layout = RowLayout::on_rank(62, p, p - 1);  // every index row on one rank
    const std::optional<RowRuns> runs =
        gather_nd_params_rows(world(), params, DType::Float32, shard(indices, index_layout), layout);
    ASSERT_TRUE(runs.has_value());
    std::int64_t end = -1;
    for (const RowRun& run : *runs) {
      EXPECT_GT(run.first, end);
      EXPECT_LT(run.first, run.end);
      EXPECT_LE(run.end, rows);
      end = run.end;
      EXPECT_NE(std::find(named.begin(), named.end(), first + run.first), named.end()) << run.first;
      EXPECT_NE(std::find(named.begin(), named.end(), first + run.end - 1), named.end()) << run.end - 1;
    }
    for (const std::int64_t row : named) {
      if (row < first || row >= first + rows) continue;
      EXPECT_TRUE(std::any_of(runs->begin(), runs->end(),
                              [&](const RowRun& run) { return row - first >= run.first && row - first < run.end; }))
          << "row " << row << " not read";
    }
  }
  // A rank-1 index is one index row.
  const std::optional<RowRuns> one = gather_nd_params_rows(
      world(), params, DType::Float32,
      shard(Tensor::from_vector(DType::Int64, Shape{2}, std::vector<std::int64_t>{999, 3})), layout);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(rows_in(*one), layout.owner(999) == world().rank() ? 1 : 0);
  // Index rows for a quarter of params or more, index depth 0, strings: all of params.
  const Tensor many = Tensor::from_vector(DType::Int64, Shape{250, 1}, std::vector<std::int64_t>(250, 5));
  EXPECT_FALSE(gather_nd_params_rows(world(), params, DType::Float32, shard(many), layout).has_value());
  EXPECT_FALSE(gather_nd_params_rows(world(), params, DType::Float32, shard(Tensor(DType::Int64, Shape{4, 0})), layout)
                   .has_value());
  EXPECT_FALSE(gather_nd_params_rows(world(), params, DType::String, shard(depth1), layout).has_value());
}

}  // namespace
}  // namespace shardops
