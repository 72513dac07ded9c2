// Dataset names and read errors: each bad input gets its class (InvalidArgument =
// exit 2, IOError = exit 3), a message naming FILE:/path, and the same error on
// every rank.
#include <gtest/gtest.h>

#include <filesystem>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/hdf5/Io.hpp"

namespace shardops {
namespace {

using namespace test;

TEST(Hdf5Names, ParsesFileAndPathAtTheLastColonSlash) {
  EXPECT_EQ(io::parse_dataset_ref("data.h5:/x"), (io::DatasetRef{"data.h5", "/x"}));
  EXPECT_EQ(io::parse_dataset_ref("dir/data.h5:/group/sub/x"), (io::DatasetRef{"dir/data.h5", "/group/sub/x"}));
  EXPECT_EQ(io::parse_dataset_ref("/abs/run:12:30.h5:/x"), (io::DatasetRef{"/abs/run:12:30.h5", "/x"}));
  EXPECT_EQ(io::parse_dataset_ref("odd:/name.h5:/g/x"), (io::DatasetRef{"odd:/name.h5", "/g/x"}));
  EXPECT_EQ(io::parse_dataset_ref("f.h5:/a:b"), (io::DatasetRef{"f.h5", "/a:b"}));
  EXPECT_EQ(io::parse_dataset_ref("f.h5:/g/x").str(), "f.h5:/g/x");
}

TEST(Hdf5Names, MalformedNamesAreInvalidArguments) {
  const std::vector<std::pair<std::string, std::string>> bad{{"data.h5", "no ':/'"},
                                                             {"data.h5:x", "no ':/'"},
                                                             {":/x", "file name is empty"},
                                                             {"f.h5:/", "root group"},
                                                             {"f.h5:/a//b", "empty component"},
                                                             {"f.h5:/a/", "empty component"},
                                                             {"f.h5:/a/../b", "'..'"},
                                                             {"f.h5:/./b", "'.'"},
                                                             {"", "no ':/'"}};
  for (const auto& entry : bad) {
    const std::string name = entry.first, why = entry.second;  // (nvcc: no lambda capture of bindings)
    const Caught c = caught([&] { io::parse_dataset_ref(name); });
    EXPECT_EQ(c.exit_code, 2) << name << ": " << c.message;
    EXPECT_NE(c.message.find("'" + name + "'"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find(why), std::string::npos) << name << ": " << c.message;
    EXPECT_NE(c.message.find("FILE:/path"), std::string::npos) << c.message;
  }
}

// Expects \p call to throw on every rank with \p code and a message containing \p parts.
void expect_error(const std::function<void()>& call, int code, const std::vector<std::string>& parts) {
  const Caught c = caught(call);
  EXPECT_EQ(c.exit_code, code) << c.message;
  for (const std::string& part : parts) EXPECT_NE(c.message.find(part), std::string::npos) << c.message;
  // The same text on every rank.
  const std::string root = world().broadcast(c.message, 0);
  EXPECT_EQ(c.message, root);
}

void expect_read_error(const io::DatasetRef& ref, int code, const std::vector<std::string>& parts) {
  SCOPED_TRACE(ref.str());
  std::vector<std::string> all = parts;
  all.push_back(ref.str());
  expect_error([&] { io::inspect(world(), ref); }, code, all);
  expect_error([&] { io::read_dataset(world(), ref); }, code, all);
}

TEST(Hdf5ReadErrors, MissingFileDatasetOrGroup) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/f.h5";
  Rng rng(1);
  write_one({file, "/g/x"}, shard(random_tensor(rng, DType::Int32, Shape{3})));
  expect_read_error({dir + "/nope.h5", "/x"}, 2, {"does not exist"});
  expect_read_error({dir + "/no/dir/f.h5", "/x"}, 2, {"does not exist"});
  expect_read_error({file, "/y"}, 2, {"no such dataset"});
  expect_read_error({file, "/g/y"}, 2, {"no such dataset"});
  expect_read_error({file, "/h/y"}, 2, {"no such dataset", "'/h' does not exist"});
  expect_read_error({file, "/g"}, 2, {"is a group, not a dataset"});
  expect_read_error({file, "/g/x/z"}, 2, {"'/g/x' is a dataset, not a group"});
}

TEST(Hdf5ReadErrors, NotHdf5TruncatedOrNotAFileAreIOErrors) {
  const std::string dir = io_test_dir();
  const std::string good = dir + "/good.h5", text = dir + "/text.h5", empty = dir + "/empty.h5";
  Rng rng(2);
  write_one({good, "/x"}, shard(random_tensor(rng, DType::Float64, Shape{2000, 4})));
  const std::vector<unsigned char> bytes = file_bytes(good);
  ASSERT_GT(bytes.size(), 64000u);
  if (world().rank() == 0) {
    write_bytes(text, std::vector<unsigned char>{'n', 'o', 't', ' ', 'h', 'd', 'f', '\n'});
    write_bytes(empty, {});
    // Truncated at several points: inside the superblock, inside the metadata, inside the data.
    for (const std::size_t keep :
         {std::size_t(4), std::size_t(40), std::size_t(1000), bytes.size() / 2, bytes.size() - 1}) {
      write_bytes(dir + "/truncated_" + std::to_string(keep) + ".h5",
                  std::vector<unsigned char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    }
  }
  world().barrier();
  expect_read_error({text, "/x"}, 3, {"not an HDF5 file"});
  expect_read_error({empty, "/x"}, 3, {"not an HDF5 file"});
  expect_read_error({dir, "/x"}, 3, {"not a regular file"});
  for (const std::size_t keep :
       {std::size_t(4), std::size_t(40), std::size_t(1000), bytes.size() / 2, bytes.size() - 1}) {
    const io::DatasetRef ref{dir + "/truncated_" + std::to_string(keep) + ".h5", "/x"};
    SCOPED_TRACE(ref.str());
    expect_read_error(ref, 3, {});
  }
}

TEST(Hdf5ReadErrors, FileOnlySomeRanksCanSee) {
  // A file present on rank 0's view only (as on a node-local disk): every rank
  // must fail together rather than hang in the collective open.
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::string dir = io_test_dir();
  Rng rng(3);
  write_one({dir + "/f.h5", "/x"}, shard(random_tensor(rng, DType::Int8, Shape{4})));
  const std::string name = world().rank() == 0 ? dir + "/f.h5" : dir + "/missing-elsewhere.h5";
  expect_error([&] { io::read_dataset(world(), {name, "/x"}); }, 2, {"does not exist"});
}

}  // namespace
}  // namespace shardops
