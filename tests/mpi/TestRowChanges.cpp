// The rows of an output that differ from the dataset it replaces (hdf5/RowChanges.hpp), and
// their change through the undo journal (JournaledCommit::change). Each rank works alone on
// a file of its own: nothing here is collective but the scratch directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/JournaledCommit.hpp"
#include "shardops/hdf5/RowChanges.hpp"

namespace shardops {
namespace {

using test::world;

constexpr std::int64_t kRows = 1000, kCols = 4;  // rows of 16 bytes: 256 rows make kRunGapBytes
constexpr long long kAt = 100;                   // the old rows' place in their file

std::vector<std::int32_t> numbered_rows() {
  std::vector<std::int32_t> v(static_cast<std::size_t>(kRows * kCols));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i);
  return v;
}

// This rank's file holding \p rows at kAt, open for reading.
int file_of(const std::string& dir, const std::vector<std::int32_t>& rows) {
  const std::string path = dir + "/old." + std::to_string(world().rank());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_TRUE(io::write_all(fd, rows.data(), rows.size() * sizeof(std::int32_t), kAt));
  return fd;
}

// The new rows as a LazyTensor of one rank, made on demand (\p lazy) or held.
LazyTensor tensor_of(const std::vector<std::int32_t>& rows, bool lazy) {
  const Shape shape{kRows, kCols};
  if (!lazy) {
    return LazyTensor(
        DistTensor(Tensor::from_vector(DType::Int32, shape, rows), shape, RowLayout::on_rank(kRows, 1, 0), 0));
  }
  return LazyTensor(shape, DType::Int32, RowLayout::on_rank(kRows, 1, 0), 0,
                    [rows](std::int64_t first, std::int64_t count, unsigned char* out) {
                      std::memcpy(out, rows.data() + first * kCols,
                                  static_cast<std::size_t>(count * kCols) * sizeof(std::int32_t));
                    });
}

std::int64_t bytes_only(std::int64_t bytes, std::int64_t) { return bytes; }

TEST(RowChanges, FindsTheRowsThatDifferInRunsAndPacksThem) {
  const std::string dir = test::io_test_dir();
  const std::vector<std::int32_t> old = numbered_rows();
  std::vector<std::int32_t> now = old;
  for (const std::int64_t row : {5, 6, 200, 900}) now[static_cast<std::size_t>(row * kCols + 1)] = -1;
  const int fd = file_of(dir, old);
  for (const bool lazy : {false, true}) {
    SCOPED_TRACE(lazy ? "made on demand" : "held");
    const LazyTensor tensor = tensor_of(now, lazy);
    double making = 0;
    const io::ChangedRows changes = io::find_changed_rows(tensor, fd, kAt, bytes_only, 1 << 20, making, "test");
    EXPECT_FALSE(changes.over);
    EXPECT_EQ(changes.differ, 4);
    // Rows 5 and 6, and 200 less than a gap's rows after them, make one run (the rows between
    // written again); row 900 is far from it.
    ASSERT_EQ(changes.runs.size(), 2U);
    EXPECT_EQ(changes.runs[0].first, 5);
    EXPECT_EQ(changes.runs[0].end, 201);
    EXPECT_EQ(changes.runs[1].first, 900);
    EXPECT_EQ(changes.runs[1].end, 901);
    EXPECT_EQ(rows_in(changes.runs), 197);
    std::vector<std::int32_t> applied = old;
    io::for_each_changed_run(io::pack_changed_rows(tensor, changes), kCols * 4,
                             [&](std::int64_t first, std::int64_t rows, const unsigned char* bytes) {
                               std::memcpy(applied.data() + first * kCols, bytes,
                                           static_cast<std::size_t>(rows * kCols * 4));
                             });
    EXPECT_TRUE(applied == now) << "the packed runs do not make the new rows";
  }
  ::close(fd);
}

TEST(RowChanges, StopsWhereMostRowsDifferOrTheCostPassesTheLimit) {
  const std::string dir = test::io_test_dir();
  const std::vector<std::int32_t> old = numbered_rows();
  const int fd = file_of(dir, old);
  std::vector<std::int32_t> now = old;
  for (std::size_t i = 0; i < now.size(); i += kCols * 2) now[i] = -1;  // every other row
  double making = 0;
  io::ChangedRows changes = io::find_changed_rows(tensor_of(now, true), fd, kAt, bytes_only, 1 << 20, making, "test");
  EXPECT_TRUE(changes.over) << "half the rows and more differ: not stopped";
  now = old;
  now[0] = now[kCols * 999] = -1;
  changes = io::find_changed_rows(tensor_of(now, false), fd, kAt, bytes_only, 16, making, "test");
  EXPECT_TRUE(changes.over) << "two rows of 16 bytes passed a limit of 16: not stopped";
  changes = io::find_changed_rows(tensor_of(now, false), fd, kAt, bytes_only, 32, making, "test");
  EXPECT_FALSE(changes.over);
  EXPECT_EQ(changes.differ, 2);
  ::close(fd);
}

TEST(RowChanges, ChangeThroughTheJournalIsHeldUntilTheCloseAndRollsBack) {
  const std::string dir = test::io_test_dir();
  const std::string file = dir + "/t." + std::to_string(world().rank()) + ".h5";
  {
    io::FileHandle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_TRUE(f.valid());
  }
  const std::vector<unsigned char> before = test::file_bytes(file);
  const long long length = static_cast<long long>(before.size());
  const unsigned char changed[4] = {1, 2, 3, 4};
  for (const bool finish : {false, true}) {
    SCOPED_TRACE(finish ? "finished" : "rolled back");
    io::JournaledCommit journal(file, true, "test");
    journal.set_early_apply(false);
    EXPECT_NE(test::caught([&] { journal.change(length - 2, changed, 4, "test"); }).exit_code, 0)
        << "a change past the original length was taken";
    journal.change(length - 4, changed, 4, "test");
    EXPECT_TRUE(test::file_bytes(file) == before) << "the change reached the file before the close";
    {
      io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, journal.file_access()));
      ASSERT_TRUE(f.valid());
      ASSERT_EQ(f.close(), 0);
    }
    std::vector<unsigned char> after = test::file_bytes(file);
    ASSERT_GE(after.size(), before.size());
    EXPECT_EQ(std::memcmp(after.data() + length - 4, changed, 4), 0) << "the change is not in the file";
    if (finish) {
      journal.finish();
    } else {
      journal.roll_back();
      EXPECT_TRUE(test::file_bytes(file) == before) << "the roll-back did not restore the file";
    }
  }
}

}  // namespace
}  // namespace shardops
