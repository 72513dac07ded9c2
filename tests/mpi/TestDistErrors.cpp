// Error agreement: a bad index that only some ranks see makes every rank throw
// InvalidArgument with exactly the message the one-rank op gives on the full data.
// TensorFlow reports the LAST bad row for scatter/gather and the FIRST bad position
// for partition/stitch, so with bad indices on several ranks the chosen one depends
// on where it is in global order, not on which rank found it. The test finishing at
// all is the proof that no rank hangs.
#include <gtest/gtest.h>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistElementwise.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace {

using namespace test;

// Global rows of rank r's block under `layout` (empty ranks: none).
std::vector<std::int64_t> block_rows(const RowLayout& layout, int r) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = layout.offset(r); i < layout.offset(r) + layout.count(r); ++i) rows.push_back(i);
  return rows;
}

// The one-rank message (must be non-empty) equals what the distributed op throws on
// this rank. Every rank checks, so a rank that returned normally fails too.
void expect_same_error(const std::function<void()>& one_rank, const std::function<void()>& dist,
                       const std::string& what) {
  const std::string expected = error_of(one_rank);
  const std::string got = error_of(dist);
  EXPECT_FALSE(expected.empty()) << what << ": the one-rank op accepted the input";
  EXPECT_EQ(got, expected) << what << " (rank " << world().rank() << ")";
}

// A valid op right after a failed one: the communicator is still usable.
void expect_still_working() {
  Rng rng(7);
  const Tensor data = random_tensor(rng, DType::Float32, Shape{10, 2});
  const Tensor indices = random_indices(rng, DType::Int32, Shape{10}, {10});
  expect_same_tensor(gather_nd(world(), shard(data), shard(indices)), gather_nd(data, indices), "after an error");
}

// ------------------------------------------------------------------- scatter family

struct ScatterCase {
  std::string name;
  std::function<void(const Tensor& indices)> one_rank;
  std::function<void(const DistTensor& indices)> dist;
};

std::vector<ScatterCase> scatter_cases(Rng& rng, const RowLayout& index_layout, std::int64_t n) {
  const int p = world().size();
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{n, 2});
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{6, 3, 2});
  const RowLayout tensor_layout = random_layout(rng, 6, p);
  std::vector<ScatterCase> cases;
  cases.push_back({"ScatterNd",
                   [=](const Tensor& i) {
                     scatter_nd(i, updates, {6, 3, 2});
                   },
                   [=](const DistTensor& i) {
                     scatter_nd(world(), i, shard(updates, index_layout), {6, 3, 2});
                   }});
  for (ScatterOp op : {ScatterOp::Update, ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max}) {
    cases.push_back({scatter_op_name(op), [=](const Tensor& i) { tensor_scatter(op, tensor, i, updates); },
                     [=](const DistTensor& i) {
                       tensor_scatter(world(), op, shard(tensor, tensor_layout), i, shard(updates, index_layout));
                     }});
  }
  cases.push_back({"GatherNd", [=](const Tensor& i) { gather_nd(tensor, i); },
                   [=](const DistTensor& i) { gather_nd(world(), shard(tensor, tensor_layout), i); }});
  return cases;
}

// Index rows [n, 2] into dims [6, 3]; `bad` rows get an out-of-range coordinate
// (alternating the first and second coordinate, negative and too large).
Tensor with_bad_rows(const Tensor& good, const std::vector<std::int64_t>& bad) {
  Tensor t = good.deep_copy();
  for (std::int64_t row : bad) {
    const bool second = row % 2 == 1;
    set_index_value(t, 2 * row + (second ? 1 : 0), row % 3 == 0 ? -1 - row : (second ? 3 : 6) + row);
  }
  return t;
}

TEST(DistErrorAgreement, ScatterAndGatherBadIndexOnOneRank) {
  Rng rng(501);
  const int p = world().size();
  const std::int64_t n = 23;
  for (DType index_dtype : {DType::Int32, DType::Int64}) {
    const Tensor good = random_indices(rng, index_dtype, Shape{n}, {6, 3});
    for (const RowLayout& layout : test_layouts(rng, n, p)) {
      for (const ScatterCase& c : scatter_cases(rng, layout, n)) {
        for (int r = 0; r < p; ++r) {
          const std::vector<std::int64_t> rows = block_rows(layout, r);
          if (rows.empty()) continue;
          // Only rank r has a bad index: its last row, then its first.
          for (std::int64_t row : {rows.back(), rows.front()}) {
            const Tensor bad = with_bad_rows(good, {row});
            expect_same_error([&] { c.one_rank(bad); }, [&] { c.dist(shard(bad, layout)); },
                              c.name + " " + dtype_name(index_dtype) + " bad row " + std::to_string(row) + " on rank " +
                                  std::to_string(r) + " of " + layout_str(layout));
          }
        }
      }
    }
  }
  expect_still_working();
}

TEST(DistErrorAgreement, ScatterAndGatherReportTheLastBadRow) {
  Rng rng(502);
  const int p = world().size();
  const std::int64_t n = 31;
  const Tensor good = random_indices(rng, DType::Int64, Shape{n}, {6, 3});
  for (const RowLayout& layout : test_layouts(rng, n, p)) {
    // A bad row at the start of every rank's block and one in the middle.
    std::vector<std::int64_t> bad{n / 2};
    for (int r = 0; r < p; ++r) {
      if (layout.count(r) > 0) bad.push_back(layout.offset(r));
    }
    const Tensor indices = with_bad_rows(good, bad);
    for (const ScatterCase& c : scatter_cases(rng, layout, n)) {
      expect_same_error([&] { c.one_rank(indices); }, [&] { c.dist(shard(indices, layout)); },
                        c.name + " several bad rows, " + layout_str(layout));
    }
  }
  expect_still_working();
}

// Rows made later (scatter_nd_lazy, tensor_scatter_lazy: at most twice as many index rows
// as output rows): every index is checked before the op returns, with the held op's message,
// whichever rank holds the bad rows (the last one is reported).
TEST(DistErrorAgreement, StreamedScatterChecksEveryIndexFirst) {
  Rng rng(507);
  const int p = world().size();
  const std::int64_t n = 23;  // into 8 x 5 = 40 output rows
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{n, 2});
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{8, 5, 2});
  const RowLayout tensor_layout = random_layout(rng, 8, p);
  const Tensor good = random_indices(rng, DType::Int64, Shape{n}, {8, 5});
  for (const RowLayout& layout : test_layouts(rng, n, p)) {
    for (const std::vector<std::int64_t>& rows : {std::vector<std::int64_t>{0}, {n / 2, n - 1}, {n - 1}}) {
      Tensor bad = good.deep_copy();
      for (std::int64_t row : rows) set_index_value(bad, 2 * row + row % 2, row % 2 == 0 ? -1 - row : 5 + row);
      const std::string what = "bad rows up to " + std::to_string(rows.back()) + " " + layout_str(layout);
      expect_same_error(
          [&] {
            scatter_nd(bad, updates, {8, 5, 2});
          },
          [&] {
            scatter_nd_lazy(world(), shard(bad, layout), shard(updates, layout), {8, 5, 2});
          },
          "scatter_nd_lazy " + what);
      for (ScatterOp op : {ScatterOp::Update, ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max}) {
        expect_same_error([&] { tensor_scatter(op, tensor, bad, updates); },
                          [&] {
                            tensor_scatter_lazy(world(), op, shard(tensor, tensor_layout), shard(bad, layout),
                                                shard(updates, layout));
                          },
                          std::string("tensor_scatter_lazy ") + scatter_op_name(op) + " " + what);
      }
    }
  }
  expect_still_working();
}

// Indices and updates every rank reads whole (DistTensor::replica, the command line's
// mapped inputs): each rank finds its own rows among all index rows, and a bad one is
// reported as the one-rank op reports it (the last), held or made later, for one
// coordinate per row and for two.
TEST(DistErrorAgreement, ReplicatedScatterInputsReportTheLastBadRow) {
  Rng rng(508);
  const int p = world().size();
  const std::int64_t n = 23;  // into 8 x 5 = 40 output rows
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{n, 2});
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{8, 5, 2});
  const RowLayout tensor_layout = random_layout(rng, 8, p);
  for (const std::vector<std::int64_t>& dims : {std::vector<std::int64_t>{8}, {8, 5}}) {
    const auto depth = static_cast<std::int64_t>(dims.size());
    const Tensor good = random_indices(rng, DType::Int64, Shape{n}, dims);
    const std::vector<std::int64_t> out{8, 5, 2};
    const Tensor upd = depth == 1 ? random_tensor(rng, DType::Float32, Shape{n, 5, 2}) : updates;
    for (const RowLayout& layout : test_layouts(rng, n, p)) {
      for (const std::vector<std::int64_t>& rows : {std::vector<std::int64_t>{0}, {n / 2, n - 1}, {n - 1}}) {
        Tensor bad = good.deep_copy();
        for (std::int64_t row : rows)
          set_index_value(bad, depth * row + (depth - 1) * (row % 2), row % 2 == 0 ? -1 - row : 8 + row);
        const std::string what = std::to_string(depth) + "-coordinate bad rows up to " + std::to_string(rows.back()) +
                                 " " + layout_str(layout);
        const auto indices = [&] { return shard(bad, layout).with_replica(bad); };
        const auto updates_of = [&] { return shard(upd, layout).with_replica(upd); };
        expect_same_error([&] { scatter_nd(bad, upd, out); },
                          [&] { scatter_nd(world(), indices(), updates_of(), out); }, "scatter_nd " + what);
        expect_same_error([&] { scatter_nd(bad, upd, out); },
                          [&] { scatter_nd_lazy(world(), indices(), updates_of(), out); }, "scatter_nd_lazy " + what);
        for (ScatterOp op : {ScatterOp::Update, ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max}) {
          expect_same_error([&] { tensor_scatter(op, tensor, bad, upd); },
                            [&] { tensor_scatter(world(), op, shard(tensor, tensor_layout), indices(), updates_of()); },
                            std::string("tensor_scatter ") + scatter_op_name(op) + " " + what);
          expect_same_error(
              [&] { tensor_scatter(op, tensor, bad, upd); },
              [&] { tensor_scatter_lazy(world(), op, shard(tensor, tensor_layout), indices(), updates_of()); },
              std::string("tensor_scatter_lazy ") + scatter_op_name(op) + " " + what);
        }
      }
    }
  }
  expect_still_working();
}

// One coordinate per index row (the bad-index count's fast path): negative and too
// large values, two bad rows (the last one is reported), on every layout.
TEST(DistErrorAgreement, OneCoordinateBadIndices) {
  Rng rng(504);
  const int p = world().size();
  const std::int64_t n = 19;
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{6, 2});
  const Tensor updates = random_tensor(rng, DType::Float32, Shape{n, 2});
  for (DType index_dtype : {DType::Int32, DType::Int64}) {
    const Tensor good = random_indices(rng, index_dtype, Shape{n}, {6});
    for (const RowLayout& layout : test_layouts(rng, n, p)) {
      for (std::int64_t value : {std::int64_t(-1), std::int64_t(6), std::int64_t(-1000000)}) {
        Tensor bad = good.deep_copy();
        set_index_value(bad, n / 3, value);
        set_index_value(bad, n - 2, value);
        const std::string what =
            std::string(dtype_name(index_dtype)) + " value " + std::to_string(value) + " " + layout_str(layout);
        expect_same_error(
            [&] {
              scatter_nd(bad, updates, {6, 2});
            },
            [&] {
              scatter_nd(world(), shard(bad, layout), shard(updates, layout), {6, 2});
            },
            "ScatterNd " + what);
        for (ScatterOp op : {ScatterOp::Update, ScatterOp::Add}) {
          expect_same_error(
              [&] { tensor_scatter(op, tensor, bad, updates); },
              [&] { tensor_scatter(world(), op, shard(tensor), shard(bad, layout), shard(updates, layout)); },
              std::string(scatter_op_name(op)) + " " + what);
        }
        expect_same_error([&] { gather_nd(tensor, bad); },
                          [&] { gather_nd(world(), shard(tensor), shard(bad, layout)); }, "GatherNd " + what);
        // Rows made later: the error comes before any row is made.
        for (GatherParams how : {GatherParams::Fetch, GatherParams::Replicate}) {
          OpOptions options;
          options.gather_params = how;
          expect_same_error([&] { gather_nd(tensor, bad); },
                            [&] { gather_nd_lazy(world(), shard(tensor), shard(bad, layout), options); },
                            "gather_nd_lazy " + what);
        }
      }
    }
  }
  expect_still_working();
}

TEST(DistErrorAgreement, RankThreeAndRankOneIndices) {
  Rng rng(503);
  const int p = world().size();
  // Rank-3 indices: the message names the position as [i,j].
  const Tensor params = random_tensor(rng, DType::Int32, Shape{5, 4});
  Tensor deep = random_indices(rng, DType::Int32, Shape{6, 3}, {5, 4});
  set_index_value(deep, 2 * (3 * 4 + 1) + 1, 4);  // [4,1] second coordinate out of range
  set_index_value(deep, 2 * (3 * 1 + 2), 9);      // [1,2] too
  const Tensor updates = random_tensor(rng, DType::Int32, Shape{6, 3});
  for (const RowLayout& layout : test_layouts(rng, 6, p)) {
    expect_same_error([&] { gather_nd(params, deep); },
                      [&] { gather_nd(world(), shard(params, random_layout(rng, 5, p)), shard(deep, layout)); },
                      "GatherNd rank-3 indices " + layout_str(layout));
    expect_same_error([&] { gather_nd(params, deep); },
                      [&] { gather_nd_lazy(world(), shard(params, random_layout(rng, 5, p)), shard(deep, layout)); },
                      "gather_nd_lazy rank-3 indices " + layout_str(layout));
    expect_same_error(
        [&] {
          scatter_nd(deep, updates, {5, 4});
        },
        [&] {
          scatter_nd(world(), shard(deep, layout), shard(updates, layout), {5, 4});
        },
        "ScatterNd rank-3 indices " + layout_str(layout));
  }
  // Rank-1 indices: one index row, split over ranks by its elements.
  const Tensor one = index_tensor(DType::Int64, Shape{2}, {2, 7});
  for (const RowLayout& layout : test_layouts(rng, 2, p)) {
    expect_same_error([&] { gather_nd(params, one); }, [&] { gather_nd(world(), shard(params), shard(one, layout)); },
                      "GatherNd rank-1 indices " + layout_str(layout));
  }
  expect_still_working();
}

// ------------------------------------------------------------------- partition

TEST(DistErrorAgreement, PartitionReportsTheFirstBadValue) {
  Rng rng(511);
  const int p = world().size();
  const std::int64_t n = 26;
  const Tensor data = random_tensor(rng, DType::Float32, Shape{n, 2, 3});
  const Tensor good = random_int32(rng, Shape{n, 2}, 0, 3);
  auto with_bad = [&](const std::vector<std::int64_t>& flats) {
    std::vector<std::int32_t> v = good.to_vector<std::int32_t>();
    for (std::int64_t f : flats) v[static_cast<std::size_t>(f)] = f % 2 ? 4 + static_cast<std::int32_t>(f) : -1;
    return Tensor::from_vector(DType::Int32, good.shape(), v);
  };
  for (const RowLayout& layout : test_layouts(rng, n, p)) {
    // Only rank r is bad (rank 1 when there is one).
    for (int r = 0; r < p; ++r) {
      const std::vector<std::int64_t> rows = block_rows(layout, r);
      if (rows.empty()) continue;
      const Tensor ids = with_bad({2 * rows.back() + 1});
      expect_same_error([&] { dynamic_partition(data, ids, 4); },
                        [&] { dynamic_partition(world(), shard(data, layout), shard(ids, layout), 4); },
                        "bad partition on rank " + std::to_string(r) + " of " + layout_str(layout));
    }
    // Bad values on every rank: the first in global order wins.
    std::vector<std::int64_t> flats{2 * n - 1};
    for (int r = 0; r < p; ++r) {
      if (layout.count(r) > 0) flats.push_back(2 * (layout.offset(r) + layout.count(r) - 1));
    }
    const Tensor ids = with_bad(flats);
    expect_same_error([&] { dynamic_partition(data, ids, 4); },
                      [&] { dynamic_partition(world(), shard(data, random_layout(rng, n, p)), shard(ids, layout), 4); },
                      "bad partitions everywhere, " + layout_str(layout));
  }
  // Scalar partitions: "partitions = 17 is not in [0, 4)".
  const Tensor scalar_ids = Tensor::from_vector(DType::Int32, Shape(), std::vector<std::int32_t>{17});
  const Tensor vec = random_tensor(rng, DType::Int8, Shape{5});
  expect_same_error([&] { dynamic_partition(vec, scalar_ids, 4); },
                    [&] { dynamic_partition(world(), shard(vec), shard(scalar_ids), 4); }, "scalar partitions");
  expect_still_working();
}

// ------------------------------------------------------------------- stitch

TEST(DistErrorAgreement, StitchReportsTheFirstNegativeIndex) {
  Rng rng(521);
  const int p = world().size();
  const Tensor i0 = random_int32(rng, Shape{14}, 0, 20);
  const Tensor i1 = random_int32(rng, Shape{9, 2}, 0, 20);
  const Tensor d0 = random_tensor(rng, DType::Float64, Shape{14, 3});
  const Tensor d1 = random_tensor(rng, DType::Float64, Shape{9, 2, 3});
  auto with_negative = [](const Tensor& t, const std::vector<std::int64_t>& flats) {
    std::vector<std::int32_t> v = t.to_vector<std::int32_t>();
    for (std::int64_t f : flats) v[static_cast<std::size_t>(f)] = -1 - static_cast<std::int32_t>(f);
    return Tensor::from_vector(DType::Int32, t.shape(), v);
  };
  const RowLayout l0 = random_layout(rng, 14, p);
  for (const RowLayout& l1 : test_layouts(rng, 9, p)) {
    auto check = [&](const Tensor& a, const Tensor& b, const std::string& what) {
      expect_same_error(
          [&] {
            dynamic_stitch({a, b}, {d0, d1});
          },
          [&] {
            dynamic_stitch(world(), {shard(a, l0), shard(b, l1)}, {shard(d0, l0), shard(d1, l1)});
          },
          what + ", indices[1] sharded " + layout_str(l1));
      expect_same_error(
          [&] {
            dynamic_stitch({a, b}, {d0, d1});
          },
          [&] {
            dynamic_stitch_lazy(world(), {shard(a, l0), shard(b, l1)}, {shard(d0, l0), shard(d1, l1)});
          },
          "dynamic_stitch_lazy " + what + ", indices[1] sharded " + layout_str(l1));
    };
    // Only rank r has a negative index (in input 1).
    for (int r = 0; r < p; ++r) {
      const std::vector<std::int64_t> rows = block_rows(l1, r);
      if (rows.empty()) continue;
      check(i0, with_negative(i1, {2 * rows.back()}), "negative on rank " + std::to_string(r));
    }
    // Negatives in both inputs on different ranks: input 0's first one wins.
    check(with_negative(i0, {13, 5}), with_negative(i1, {0, 17}), "negatives in both inputs");
    check(i0, with_negative(i1, {17, 3, 9}), "several in input 1");
  }
  // A negative scalar index (on rank 0) after valid inputs elsewhere.
  const Tensor s = Tensor::from_vector(DType::Int32, Shape(), std::vector<std::int32_t>{-4});
  const Tensor ds = random_tensor(rng, DType::Float64, Shape{3});
  expect_same_error(
      [&] {
        dynamic_stitch({i0, s}, {d0, ds});
      },
      [&] {
        dynamic_stitch(world(), {shard(i0, RowLayout::on_rank(14, p, p - 1)), shard(s)},
                       {shard(d0, RowLayout::on_rank(14, p, p - 1)), shard(ds)});
      },
      "negative scalar index");
  expect_still_working();
}

// ------------------------------------------------------------------- shapes and dtypes

TEST(DistErrorAgreement, ShapeAndDtypeErrorsMatchTheOneRankOps) {
  Rng rng(531);
  const int p = world().size();
  const Tensor data = random_tensor(rng, DType::Float32, Shape{6, 2});
  const Tensor ids = random_int32(rng, Shape{5}, 0, 1);
  const RowLayout r5 = random_layout(rng, 5, p), r6 = random_layout(rng, 6, p);
  expect_same_error([&] { dynamic_partition(data, ids, 2); },
                    [&] { dynamic_partition(world(), shard(data, r6), shard(ids, r5), 2); }, "partition shapes");
  expect_same_error([&] { dynamic_partition(data, random_int32(rng, Shape{6}, 0, 0), 0); },
                    [&] { dynamic_partition(world(), shard(data), shard(random_int32(rng, Shape{6}, 0, 0)), 0); },
                    "num_partitions 0");
  const Tensor idx = random_indices(rng, DType::Int32, Shape{5}, {6});
  const Tensor upd = random_tensor(rng, DType::Float32, Shape{4, 2});
  expect_same_error(
      [&] {
        scatter_nd(idx, upd, {6, 2});
      },
      [&] {
        scatter_nd(world(), shard(idx, r5), shard(upd), {6, 2});
      },
      "scatter shapes");
  expect_same_error(
      [&] {
        tensor_scatter(ScatterOp::Add, data, idx, random_tensor(rng, DType::Float64, Shape{5, 2}));
      },
      [&] {
        tensor_scatter(world(), ScatterOp::Add, shard(data), shard(idx),
                       shard(random_tensor(rng, DType::Float64, Shape{5, 2})));
      },
      "scatter dtypes");
  const Tensor deep = random_indices(rng, DType::Int64, Shape{3}, {6, 2, 1});
  expect_same_error([&] { gather_nd(data, deep); }, [&] { gather_nd(world(), shard(data), shard(deep)); },
                    "gather depth");
  const Tensor float_ids = random_tensor(rng, DType::Float32, Shape{3, 1});
  expect_same_error([&] { gather_nd(data, float_ids); }, [&] { gather_nd(world(), shard(data), shard(float_ids)); },
                    "gather index dtype");
  expect_same_error([&] { dynamic_stitch({ids}, {data}); },
                    [&] { dynamic_stitch(world(), {shard(ids, r5)}, {shard(data, r6)}); }, "stitch shapes");
  expect_still_working();
}

// Bad shapes and a bad index on some rank together: the error TF checks first wins
// on every rank (shapes before index values, except DynamicStitch, which checks its
// index values first).
TEST(DistErrorAgreement, ShapeErrorsAndIndexErrorsTogether) {
  Rng rng(532);
  const int p = world().size();
  const RowLayout last5 = RowLayout::on_rank(5, p, p - 1);
  Tensor idx = random_indices(rng, DType::Int64, Shape{5}, {6});
  set_index_value(idx, 4, 17);                                         // on the last rank under `last5`
  const Tensor upd = random_tensor(rng, DType::Float32, Shape{5, 3});  // slice 3 does not fit [6, 2]
  const Tensor tensor = random_tensor(rng, DType::Float32, Shape{6, 2});
  expect_same_error(
      [&] {
        scatter_nd(idx, upd, {6, 2});
      },
      [&] {
        scatter_nd(world(), shard(idx, last5), shard(upd, last5), {6, 2});
      },
      "scatter");
  expect_same_error(
      [&] { tensor_scatter(ScatterOp::Max, tensor, idx, upd); },
      [&] { tensor_scatter(world(), ScatterOp::Max, shard(tensor), shard(idx, last5), shard(upd, last5)); },
      "tensor scatter");
  const Tensor deep_idx = index_tensor(DType::Int32, Shape{1, 3}, {9, 0, 0});  // K = 3 > rank 2, and 9 is bad
  expect_same_error([&] { gather_nd(tensor, deep_idx); }, [&] { gather_nd(world(), shard(tensor), shard(deep_idx)); },
                    "gather");
  const Tensor ids = Tensor::from_vector(DType::Int32, Shape{5}, std::vector<std::int32_t>{0, 1, 0, 1, 9});
  expect_same_error([&] { dynamic_partition(tensor, ids, 2); },
                    [&] { dynamic_partition(world(), shard(tensor), shard(ids, last5), 2); }, "partition");
  // Stitch: the negative index (on the last rank) is reported, not the data shape.
  const Tensor neg = Tensor::from_vector(DType::Int32, Shape{5}, std::vector<std::int32_t>{0, 1, 2, 3, -1});
  expect_same_error([&] { dynamic_stitch({neg}, {tensor}); },
                    [&] { dynamic_stitch(world(), {shard(neg, last5)}, {shard(tensor)}); }, "stitch");
  expect_still_working();
}

// A rank that passes other arguments than the rest (a shape, a count, the op, how many
// tensors, a bad-index policy): every rank throws the same InvalidArgument naming rank
// 0's call and the first rank whose call differs, instead of each rank answering its own
// call or waiting in an exchange the others skip.
TEST(DistErrorAgreement, RanksWhoseCallsDifferAllThrow) {
  const int p = world().size();
  if (p == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = world().rank() == p - 1;
  Rng rng(533);
  const Tensor data = random_tensor(rng, DType::Float32, Shape{6, 2});
  const Tensor ids = random_int32(rng, Shape{6}, 0, 2);
  const Tensor idx = random_indices(rng, DType::Int32, Shape{4, 1}, {6});
  const Tensor upd = random_tensor(rng, DType::Float32, Shape{4, 2});
  const std::string expected_rank = "; rank " + std::to_string(p - 1) + " passed ";
  const auto expect_differ = [&](const std::function<void()>& call, const std::string& op, const std::string& what) {
    const std::string got = error_of(call);
    EXPECT_EQ(got.rfind("the ranks' calls differ: rank 0 passed " + op + "(", 0), 0u) << what << ": " << got;
    EXPECT_NE(got.find(expected_rank), std::string::npos) << what << ": " << got;
  };
  expect_differ(
      [&] {
        scatter_nd(world(), shard(idx), shard(upd), {last ? std::int64_t{8} : 6, 2});
      },
      "ScatterNd", "shape");
  expect_differ([&] { dynamic_partition(world(), shard(data), shard(ids), last ? 4 : 3); }, "DynamicPartition",
                "num_partitions");
  expect_differ(
      [&] { tensor_scatter(world(), last ? ScatterOp::Add : ScatterOp::Update, shard(data), shard(idx), shard(upd)); },
      "TensorScatterUpdate", "op");
  std::vector<DistTensor> indices{shard(ids)}, parts{shard(data)};
  if (last) indices.push_back(shard(ids)), parts.push_back(shard(data));
  expect_differ([&] { dynamic_stitch(world(), indices, parts); }, "DynamicStitch", "tensor count");
  OpOptions ignore;
  ignore.bad_indices = last ? BadIndices::Ignore : BadIndices::Error;
  expect_differ([&] { gather_nd(world(), shard(data), shard(idx), ignore); }, "GatherNd", "bad_indices");
  expect_differ([&] { cast(world(), shard(data), last ? DType::Float64 : DType::Int32); }, "Cast", "cast dtype");
  // Host staging is each rank's own choice (route/GpuAwareMpi.hpp): not a difference.
  OpOptions staged;
  staged.route.stage_through_host = last;
  const Tensor idx64 = random_indices(rng, DType::Int64, Shape{4, 1}, {6});
  expect_same_tensor(gather_nd(world(), shard(data), shard(idx64), staged), gather_nd(data, idx64),
                     "staged on one rank");
  expect_still_working();
}

}  // namespace
}  // namespace shardops
