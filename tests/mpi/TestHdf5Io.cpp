// HDF5 round trips: every dtype written by shardops and read back at every rank
// count, under balanced, ragged and empty-shard layouts, scalars and 0-size
// datasets; inspect(); transfers split into rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/hdf5/RowTransfer.hpp"

namespace shardops {
namespace {

using namespace test;

const std::vector<Shape>& round_trip_shapes() {
  static const std::vector<Shape> shapes{Shape{7, 3}, Shape{5},    Shape{1, 2, 2}, Shape{2, 3, 1, 2},
                                         Shape(),     Shape{0, 4}, Shape{0},       Shape{3, 0}};
  return shapes;
}

std::string shape_name(const Shape& s) {
  std::string name = "s";
  for (const std::int64_t d : s.dims()) name += "_" + std::to_string(d);
  return name;
}

TEST(Hdf5RoundTrip, EveryDTypeAndShapeUnderEveryLayout) {
  const std::string dir = io_test_dir();
  Rng rng(2024);
  const int p = world().size();
  for (const DType dtype : kAllDTypes) {
    // One file per dtype, written in one transaction: every shape under every layout.
    struct Written {
      io::DatasetRef ref;
      Tensor full;
      RowLayout layout;
    };
    std::vector<Written> written;
    {
      io::OutputTransaction out(world());
      for (const Shape& shape : round_trip_shapes()) {
        const Tensor full = random_tensor(rng, dtype, shape);
        const std::vector<RowLayout> layouts = shape.rank() == 0 ? std::vector<RowLayout>{RowLayout::on_rank(1, p, 0)}
                                                                 : test_layouts(rng, shape.dim(0), p);
        for (std::size_t l = 0; l < layouts.size(); ++l) {
          const io::DatasetRef ref{dir + "/" + dtype_name(dtype) + ".h5",
                                   "/" + shape_name(shape) + "/layout" + std::to_string(l)};
          out.write(ref, shard(full, layouts[l]), roundtrip_provenance(ref.path, dtype));
          written.push_back({ref, full, layouts[l]});
        }
      }
      out.commit();
    }
    for (const Written& w : written) {
      const Shape& shape = w.full.shape();
      const std::string what = w.ref.str() + " " + shape.str() + " written under " + layout_str(w.layout);
      SCOPED_TRACE(what);
      const io::DatasetInfo info = io::inspect(world(), w.ref);
      EXPECT_EQ(info.dtype, dtype);
      EXPECT_EQ(info.shape, shape);
      // Default (balanced) layout, then the layout it was written under.
      const DistTensor back = io::read_dataset(world(), w.ref);
      EXPECT_EQ(back.shape(), shape);
      if (shape.rank() > 0) {
        EXPECT_EQ(back.layout(), RowLayout::balanced(shape.dim(0), p));
      }
      expect_same_tensor(back, w.full, what + ", read balanced");
      const DistTensor again = io::read_dataset(world(), w.ref, &w.layout);
      EXPECT_EQ(again.layout(), w.layout);
      expect_same_tensor(again, w.full, what + ", read under the same layout");
    }
  }
}

TEST(Hdf5RoundTrip, ScalarLivesOnRankZero) {
  const std::string dir = io_test_dir();
  const Tensor scalar = Tensor::from_vector(DType::Float64, Shape(), std::vector<double>{-2.5});
  const io::DatasetRef ref{dir + "/scalar.h5", "/x"};
  write_one(ref, DistTensor::from_replicated(world(), scalar));
  const DistTensor back = io::read_dataset(world(), ref);
  EXPECT_TRUE(back.is_scalar());
  if (world().rank() == 0) {
    EXPECT_EQ(back.local().shape(), Shape());
    EXPECT_EQ(back.local().to_vector<double>(), std::vector<double>{-2.5});
  } else {
    EXPECT_EQ(back.local().shape(), Shape{0});
  }
  // A scalar takes no layout but rank 0's.
  if (world().size() > 1) {
    const RowLayout elsewhere = RowLayout::on_rank(1, world().size(), 1);
    const Caught c = caught([&] { io::read_dataset(world(), ref, &elsewhere); });
    EXPECT_EQ(c.exit_code, 2) << c.message;
    EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  }
}

TEST(Hdf5RoundTrip, ManyDatasetsInOneTransactionAndNestedGroups) {
  const std::string dir = io_test_dir();
  Rng rng(5);
  const std::string file = dir + "/many.h5";
  std::vector<Tensor> fulls;
  {
    io::OutputTransaction out(world());
    for (int i = 0; i < 4; ++i) {
      fulls.push_back(random_tensor(rng, DType::Int32, Shape{i * 3 + 1, 2}));
      const io::DatasetRef ref{file, "/g" + std::to_string(i % 2) + "/deeper/d" + std::to_string(i)};
      out.write(ref, shard(fulls.back()), roundtrip_provenance(ref.path, DType::Int32));
    }
    out.commit();
    EXPECT_TRUE(out.committed());
  }
  for (int i = 0; i < 4; ++i) {
    const io::DatasetRef ref{file, "/g" + std::to_string(i % 2) + "/deeper/d" + std::to_string(i)};
    expect_same_tensor(io::read_dataset(world(), ref), fulls[static_cast<std::size_t>(i)], ref.str());
  }
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5RoundTrip, TransfersSplitIntoRounds) {
  const std::string dir = io_test_dir();
  Rng rng(9);
  const std::size_t saved = io::max_transfer_bytes();
  for (const std::size_t limit : {std::size_t(1), std::size_t(100)}) {
    io::set_max_transfer_bytes(limit);
    std::vector<std::tuple<io::DatasetRef, Tensor, RowLayout>> written;
    {
      io::OutputTransaction out(world());
      for (const DType dtype : {DType::Float64, DType::Complex128, DType::Bool, DType::Float16}) {
        const Tensor full = random_tensor(rng, dtype, Shape{37, 3});
        for (const RowLayout& layout : test_layouts(rng, 37, world().size())) {
          const io::DatasetRef ref{dir + "/rounds" + std::to_string(limit) + ".h5",
                                   std::string("/") + dtype_name(dtype) + layout_str(layout)};
          out.write(ref, shard(full, layout), {});
          written.emplace_back(ref, full, layout);
        }
      }
      out.commit();
    }
    for (const auto& [ref, full, layout] : written) {
      expect_same_tensor(io::read_dataset(world(), ref, &layout), full, ref.str());
    }
  }
  io::set_max_transfer_bytes(saved);
}

// ReadOptions::only_rows: the rows asked for, each rank its own runs (none on one rank),
// read from contiguous, chunked and compressed datasets, in one round or many; the rows
// not asked for are zeros.
TEST(Hdf5RoundTrip, ReadsOnlyTheRowsAsked) {
  const std::string dir = io_test_dir();
  Rng rng(13);
  const Tensor full = random_tensor(rng, DType::Int32, Shape{1000, 3, 2});
  const std::string file = dir + "/runs.h5";
  std::vector<std::pair<std::string, io::StorageOptions>> layouts{{"/contiguous", {}}, {"/chunked", {}}, {"/gzip", {}}};
  layouts[1].second.chunk_rows = 4;
  layouts[2].second.chunk_rows = 5;
  layouts[2].second.compression = io::Compression::Gzip;
  for (const auto& [path, storage] : layouts) {
    io::OutputTransaction out(world(), io::OutputOptions{false, false, storage, nullptr});
    out.write(io::DatasetRef{file, path}, shard(full), {});
    out.commit();
  }
  const int me = world().size() > 1 ? world().rank() : 0;
  const RowLayout layout = RowLayout::balanced(1000, world().size());
  const std::int64_t rows = layout.count(world().rank());
  // Rank 1 asks for nothing; the others for a lone row, a run, the block's last row, and
  // every third row of a stretch (more runs than one round takes).
  RowRuns runs;
  if (me != 1 && rows > 0) {
    std::vector<std::int64_t> asked{0, rows - 1, rows / 2, rows / 2 + 1, rows / 2 + 2};
    for (std::int64_t r = 10; r < rows / 2 - 10; r += 3) asked.push_back(r);
    runs = runs_of_rows(asked, 0);
  }
  const std::size_t saved = io::max_transfer_bytes();
  for (const std::size_t limit : {std::size_t(1), std::size_t(50), saved}) {
    io::set_max_transfer_bytes(limit);
    for (const auto& layout_path : layouts) {
      const std::string& path = layout_path.first;
      io::ReadOptions options;
      options.only_rows = &runs;
      const DistTensor got = io::read_dataset(world(), io::DatasetRef{file, path}, &layout, options);
      const std::vector<std::int32_t> values = got.local().to_vector<std::int32_t>(),
                                      want = full.to_vector<std::int32_t>();
      const std::int64_t first = layout.offset(world().rank());
      for (std::int64_t r = 0; r < rows; ++r) {
        const bool asked =
            std::any_of(runs.begin(), runs.end(), [r](const RowRun& run) { return r >= run.first && r < run.end; });
        for (std::int64_t e = 0; e < 6; ++e) {
          const std::int32_t expected = asked ? want[static_cast<std::size_t>((first + r) * 6 + e)] : 0;
          ASSERT_EQ(values[static_cast<std::size_t>(r * 6 + e)], expected)
              << path << " row " << first + r << " (limit " << limit << ")";
        }
      }
    }
  }
  io::set_max_transfer_bytes(saved);
}

TEST(Hdf5RoundTrip, ReadWithLayoutThatDoesNotFit) {
  const std::string dir = io_test_dir();
  Rng rng(3);
  const io::DatasetRef ref{dir + "/f.h5", "/x"};
  write_one(ref, shard(random_tensor(rng, DType::Float32, Shape{6, 2})));
  const RowLayout short_layout = RowLayout::balanced(5, world().size());
  Caught c = caught([&] { io::read_dataset(world(), ref, &short_layout); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  // A layout wrong on rank 0 only: every rank throws the same error (no hang).
  const RowLayout mine = world().rank() == 0 ? short_layout : RowLayout::balanced(6, world().size());
  c = caught([&] { io::read_dataset(world(), ref, &mine); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find("5 rows"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace shardops
