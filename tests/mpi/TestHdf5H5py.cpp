// Interoperability with h5py (Debian's python3-h5py): files h5py writes read
// correctly (every dtype, both byte orders, scalars, 0-size, h5py's bool enum,
// complex compound and float16), unsupported types (strings inside compounds and
// arrays among them; string datasets: TestHdf5Strings.cpp) are refused by name, and what
// shardops writes reads back in h5py as the same numpy dtype and values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/Version.hpp"
#include "shardops/hdf5/Io.hpp"

namespace shardops {
namespace {

using namespace test;

struct ManifestEntry {
  std::string path;
  std::string dtype;
  Shape shape;
};

std::vector<ManifestEntry> read_manifest(const std::string& dir) {
  std::vector<ManifestEntry> entries;
  std::ifstream in(dir + "/manifest.txt");
  std::string path, dtype, dims;
  while (in >> path >> dtype >> dims) {
    std::vector<std::int64_t> d;
    if (dims != "-") {
      std::istringstream s(dims);
      std::string part;
      while (std::getline(s, part, ',')) d.push_back(std::stoll(part));
    }
    entries.push_back({path, dtype, dims == "-" ? Shape() : Shape(d)});
  }
  return entries;
}

// One h5py-made file per test binary run (made by the first test that needs it).
const std::string& h5py_dir() {
  static std::string dir;
  if (dir.empty()) {
    const std::string made = io_test_dir();
    if (run_h5py_script({"make", made}) != 0) throw std::runtime_error("TestHdf5Py.py make failed");
    dir = made;
  }
  return dir;
}

#define REQUIRE_H5PY() \
  if (!have_h5py()) GTEST_SKIP() << "no Python with h5py (set SHARDOPS_TEST_PYTHON)"

TEST(Hdf5H5py, ReadsEveryDatasetH5pyWrites) {
  REQUIRE_H5PY();
  const std::string dir = h5py_dir();
  const std::vector<ManifestEntry> entries = read_manifest(dir);
  ASSERT_GE(entries.size(), 30u);
  Rng rng(17);
  for (const ManifestEntry& e : entries) {
    const io::DatasetRef ref{dir + "/h5py_types.h5", e.path};
    SCOPED_TRACE(ref.str());
    const io::DatasetInfo info = io::inspect(world(), ref);
    EXPECT_STREQ(dtype_name(info.dtype), e.dtype.c_str());
    EXPECT_EQ(info.shape, e.shape);
    const std::vector<unsigned char> want = file_bytes(dir + "/" + expected_bin(e.path));
    const Tensor expected = Tensor::from_host_bytes(info.dtype, e.shape, want.data(), want.size());
    expect_same_tensor(io::read_dataset(world(), ref), expected, ref.str() + " balanced");
    if (e.shape.rank() > 0) {
      for (const RowLayout& layout : test_layouts(rng, e.shape.dim(0), world().size())) {
        expect_same_tensor(io::read_dataset(world(), ref, &layout), expected, ref.str() + " " + layout_str(layout));
      }
    }
  }
}

TEST(Hdf5H5py, RefusesUnsupportedTypesByName) {
  REQUIRE_H5PY();
  const std::string file = h5py_dir() + "/h5py_types.h5";
  const std::vector<std::pair<std::string, std::string>> bad{{"compound_with_str", "H5T_COMPOUND"},
                                                             {"str_array", "H5T_ARRAY"},
                                                             {"compound", "H5T_COMPOUND"},
                                                             {"complex_other_names", "H5T_COMPOUND"},
                                                             {"enum", "H5T_ENUM"},
                                                             {"array", "H5T_ARRAY"},
                                                             {"longdouble", "H5T_FLOAT"},
                                                             {"opaque", "H5T_OPAQUE"},
                                                             {"vlen_int", "H5T_VLEN"},
                                                             {"reference", "H5T_REFERENCE"}};
  for (const auto& [name, cls] : bad) {
    const io::DatasetRef ref{file, "/bad/" + name};
    for (const bool read : {false, true}) {
      const Caught c = caught([&] {
        if (read) {
          io::read_dataset(world(), ref);
        } else {
          io::inspect(world(), ref);
        }
      });
      EXPECT_EQ(c.exit_code, 2) << ref.str() << ": " << c.message;
      EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
      EXPECT_NE(c.message.find(cls), std::string::npos) << c.message;
    }
  }
  const io::DatasetRef null_space{file, "/bad_shape/null"};
  const Caught c = caught([&] { io::inspect(world(), null_space); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find("null dataspace"), std::string::npos) << c.message;
}

TEST(Hdf5H5py, HugeDatasetsAreRefusedBeforeAllocating) {
  REQUIRE_H5PY();
  const std::string file = h5py_dir() + "/h5py_types.h5";
  const io::DatasetRef too_big{file, "/huge/too_big"};
  const io::DatasetInfo info = io::inspect(world(), too_big);
  EXPECT_EQ(info.shape, (Shape{std::int64_t(1) << 40, 16}));
  Caught c = caught([&] { io::read_dataset(world(), too_big); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(too_big.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("memory"), std::string::npos) << c.message;
  const io::DatasetRef overflow{file, "/huge/overflow"};
  c = caught([&] { io::read_dataset(world(), overflow); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(overflow.str()), std::string::npos) << c.message;
}

TEST(Hdf5H5py, H5pyReadsWhatWeWrite) {
  REQUIRE_H5PY();
  const std::string dir = io_test_dir();
  const std::string file = dir + "/ours.h5";
  Rng rng(99);
  std::string manifest;
  std::vector<std::pair<std::string, Tensor>> written;
  for (const DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{7, 3}, Shape(), Shape{0, 2}, Shape{4}}) {
      std::string path = std::string("/") + dtype_name(dtype) + "/r" + std::to_string(shape.rank());
      if (shape.num_elements() == 0) path += "_empty";
      written.emplace_back(path, random_tensor(rng, dtype, shape));
      manifest += manifest_line(path, dtype, shape) + "\n";
    }
  }
  {
    io::OutputTransaction out(world());
    for (const auto& [path, full] : written) {
      const RowLayout layout = full.rank() == 0 ? RowLayout::on_rank(1, world().size(), 0)
                                                : random_layout(rng, full.shape().dim(0), world().size());
      out.write(io::DatasetRef{file, path}, shard(full, layout), roundtrip_provenance(path, full.dtype()));
    }
    out.commit();
  }
  if (world().rank() == 0) {
    std::filesystem::create_directories(dir + "/expected");
    std::ofstream(dir + "/manifest.txt") << manifest;
    for (const auto& [path, full] : written) write_bytes(dir + "/" + expected_bin(path), full.to_host_bytes());
  }
  world().barrier();
  EXPECT_EQ(run_h5py_script({"check", file, dir, SHARDOPS_VERSION_STRING}), 0);
}

}  // namespace
}  // namespace shardops
