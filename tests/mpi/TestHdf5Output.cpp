// Atomic output: temporary file beside the target, renamed only on success; other
// datasets of an existing file kept; existing datasets refused without overwrite
// (file unchanged, byte for byte) and replaced with it; failures on one rank leave
// neither temporary file nor target; unwritable places are IOErrors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/hdf5/JournaledCommit.hpp"

namespace shardops {
namespace {

using namespace test;
namespace fs = std::filesystem;

Tensor sample(DType dtype, const Shape& shape, std::uint64_t seed) {
  Rng rng(seed);
  return random_tensor(rng, dtype, shape);
}

bool exists_on_all_ranks(const std::string& path) { return world().min(fs::exists(path) ? 1 : 0) == 1; }

TEST(Hdf5Output, ExistingFileKeepsItsOtherDatasets) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  const Tensor a = sample(DType::Float32, Shape{9, 2}, 1), b = sample(DType::Int64, Shape{4}, 2);
  write_one({file, "/a"}, shard(a));
  write_one({file, "/group/b"}, shard(b));
  expect_same_tensor(io::read_dataset(world(), {file, "/a"}), a, "a kept");
  expect_same_tensor(io::read_dataset(world(), {file, "/group/b"}), b, "b added");
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, ExistingDatasetWithoutOverwriteIsRefusedAndFileUnchanged) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  const Tensor a = sample(DType::Float64, Shape{5, 3}, 3);
  write_one({file, "/a"}, shard(a));
  const std::vector<unsigned char> before = file_bytes(file);
  const io::DatasetRef ref{file, "/a"};
  const Caught c = caught([&] { write_one(ref, shard(sample(DType::Float64, Shape{5, 3}, 4))); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("--overwrite"), std::string::npos) << c.message;
  EXPECT_EQ(file_bytes(file), before) << "the target changed";
  EXPECT_TRUE(temp_files_in(dir).empty());
  expect_same_tensor(io::read_dataset(world(), ref), a, "a unchanged");
}

TEST(Hdf5Output, OverwriteReplacesTheDatasetAndKeepsTheOthers) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  const Tensor a = sample(DType::Float64, Shape{5, 3}, 5), keep = sample(DType::UInt8, Shape{3}, 6);
  write_one({file, "/a"}, shard(a));
  write_one({file, "/keep"}, shard(keep));
  const Tensor replacement = sample(DType::Complex64, Shape{8, 2, 2}, 7);  // other dtype and shape
  write_one({file, "/a"}, shard(replacement), /*overwrite=*/true);
  const io::DatasetInfo info = io::inspect(world(), {file, "/a"});
  EXPECT_EQ(info.dtype, DType::Complex64);
  EXPECT_EQ(info.shape, (Shape{8, 2, 2}));
  expect_same_tensor(io::read_dataset(world(), {file, "/a"}), replacement, "replaced");
  expect_same_tensor(io::read_dataset(world(), {file, "/keep"}), keep, "kept");
}

TEST(Hdf5Output, GroupsAndDatasetsInTheWay) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  write_one({file, "/g/x"}, shard(sample(DType::Int32, Shape{2}, 8)));
  for (const bool overwrite : {false, true}) {
    // A group is never replaced.
    Caught c = caught([&] { write_one({file, "/g"}, shard(sample(DType::Int32, Shape{2}, 9)), overwrite); });
    EXPECT_EQ(c.exit_code, 2) << c.message;
    EXPECT_NE(c.message.find("a group"), std::string::npos) << c.message;
    // Nothing can be created below a dataset.
    c = caught([&] { write_one({file, "/g/x/y"}, shard(sample(DType::Int32, Shape{2}, 9)), overwrite); });
    EXPECT_EQ(c.exit_code, 2) << c.message;
    EXPECT_NE(c.message.find("'/g/x'"), std::string::npos) << c.message;
  }
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, SameDatasetTwiceInOneTransaction) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  const Caught c = caught([&] {
    io::OutputTransaction out(world(), io::OutputOptions{true});
    out.write({file, "/x"}, shard(sample(DType::Int8, Shape{3}, 1)), {});
    // The same file under another name resolves to the same temporary file.
    out.write({dir + "/./out.h5", "/x"}, shard(sample(DType::Int8, Shape{3}, 2)), {});
    out.commit();
  });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find("twice"), std::string::npos) << c.message;
  EXPECT_FALSE(exists_on_all_ranks(file));
  EXPECT_TRUE(temp_files_in(dir).empty());
}

// Ranks that name other targets (or tensors): refused on every rank, nothing written (rank
// 0's target used to get every rank's rows, the others' files were never made).
TEST(Hdf5Output, RanksThatNameOtherTargetsAreRefused) {
  const std::string dir = io_test_dir();
  const int me = world().rank();
  const Caught c = caught([&] {
    io::OutputTransaction out(world());
    out.write({dir + (me == 0 ? "/d0.h5" : "/d1.h5"), "/a"}, shard(sample(DType::Int32, Shape{6}, 1)), {});
    out.commit();
  });
  if (world().size() > 1) {
    EXPECT_EQ(c.exit_code, 2) << c.message;
    EXPECT_NE(c.message.find("calls differ"), std::string::npos) << c.message;
    EXPECT_FALSE(exists_on_all_ranks(dir + "/d0.h5"));
    EXPECT_FALSE(fs::exists(dir + "/d1.h5"));
  } else {
    EXPECT_EQ(c.exit_code, 0) << c.message;
  }
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, TemporaryFileLivesBesideTheTargetUntilCommit) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/out.h5";
  io::OutputTransaction out(world());
  out.write({file, "/x"}, shard(sample(DType::Float16, Shape{6, 2}, 1)), {});
  const std::vector<std::string> temps = out.temp_paths();
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_EQ(fs::path(temps[0]).parent_path(), fs::weakly_canonical(dir));
  EXPECT_TRUE(exists_on_all_ranks(temps[0]));
  EXPECT_FALSE(exists_on_all_ranks(file)) << "the target appeared before commit";
  out.commit();
  world().barrier();
  EXPECT_TRUE(exists_on_all_ranks(file));
  EXPECT_TRUE(temp_files_in(dir).empty());
}

// A target that does not exist yet and one that does, for jobs that fail: afterwards the
// first is still missing, the second unchanged, and no temporary file is left.
struct TwoTargets {
  std::string dir = io_test_dir();
  std::string fresh = dir + "/fresh.h5", existing = dir + "/existing.h5";
  std::vector<unsigned char> before;
  TwoTargets() {
    write_one({existing, "/old"}, shard(sample(DType::Int16, Shape{4}, 1)));
    before = file_bytes(existing);
  }
  void expect_as_they_were() const {
    world().barrier();
    EXPECT_FALSE(exists_on_all_ranks(fresh));
    EXPECT_EQ(file_bytes(existing), before) << "the existing target changed";
    EXPECT_TRUE(temp_files_in(dir).empty());
  }
};

TEST(Hdf5Output, FailureOnOneRankMidwayLeavesNoTempAndNoTarget) {
  const TwoTargets t;
  const std::string &fresh = t.fresh, &existing = t.existing;
  const int failing_rank = world().size() - 1;
  const Caught c = caught([&] {
    io::OutputTransaction out(world());
    out.write({fresh, "/a"}, shard(sample(DType::Float32, Shape{10, 2}, 2)), {});
    out.write({existing, "/new"}, shard(sample(DType::Float32, Shape{3}, 3)), {});
    // Some later step fails on one rank only; the error is agreed, every rank unwinds.
    run_agreed(world(), [&] {
      if (world().rank() == failing_rank) throw IOError("simulated failure on rank " + std::to_string(failing_rank));
    });
    out.commit();
  });
  EXPECT_EQ(c.exit_code, 3) << c.message;
  EXPECT_NE(c.message.find("simulated failure"), std::string::npos) << c.message;
  t.expect_as_they_were();
}

// Rows made on demand (LazyTensor) from \p source's block, counting the rows made.
LazyTensor made_from(const DistTensor& source, std::int64_t& rows_made) {
  const std::size_t row = source.row_bytes();
  return LazyTensor(source.shape(), source.dtype(), source.layout(), world().rank(),
                    [source, row, &rows_made](std::int64_t first, std::int64_t count, unsigned char* out) {
                      std::copy_n(source.local().data() + static_cast<std::size_t>(first) * row,
                                  static_cast<std::size_t>(count) * row, out);
                      rows_made += count;
                    });
}

TEST(Hdf5Output, RowsMadeOnDemandAreWrittenAsTheyAreMade) {
  const std::string dir = io_test_dir();
  // Over 8 MiB in all, so the rows are made and written in several pieces and a remainder.
  const Tensor data = sample(DType::Float64, Shape{70001, 16}, 11);
  const DistTensor source = shard(data);
  struct Case {
    std::string file;
    io::StorageOptions storage;
    bool existing;
    bool streamed;
  };
  io::StorageOptions chunked;
  chunked.chunk_rows = 1000;
  for (const Case& c : {Case{dir + "/new.h5", {}, false, true}, Case{dir + "/old.h5", {}, true, true},
                        Case{dir + "/chunked.h5", chunked, false, false}}) {
    const Tensor kept = sample(DType::Int32, Shape{7}, 12);
    if (c.existing) write_one({c.file, "/kept"}, shard(kept));
    std::int64_t rows_made = 0;
    io::OutputTransaction out(world());
    EXPECT_EQ(out.write({c.file, "/rows"}, made_from(source, rows_made), {}, c.storage), c.streamed) << c.file;
    out.commit();
    EXPECT_EQ(rows_made, source.layout().count(world().rank())) << c.file << ": every row made once";
    expect_same_tensor(io::read_dataset(world(), {c.file, "/rows"}), data, c.file);
    if (c.existing) expect_same_tensor(io::read_dataset(world(), {c.file, "/kept"}), kept, c.file + " kept");
  }
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, RowsThatCannotBeMadeOnOneRankLeaveNothing) {
  const TwoTargets t;
  const DistTensor source = shard(sample(DType::Float32, Shape{200000, 16}, 13));
  const int failing_rank = world().size() - 1;
  for (const std::string& file : {t.fresh, t.existing}) {
    const Caught c = caught([&] {
      io::OutputTransaction out(world());
      out.write({file, "/rows"},
                LazyTensor(source.shape(), source.dtype(), source.layout(), world().rank(),
                           [&](std::int64_t first, std::int64_t count, unsigned char*) {
                             // Fails at its last piece (on one rank, after a first piece
                             // was written).
                             if (world().rank() == failing_rank && first + count == source.layout().count(failing_rank))
                               throw IOError("simulated failure while making rows");
                           }),
                {});
      out.commit();
    });
    EXPECT_EQ(c.exit_code, 3) << c.message;
    EXPECT_NE(c.message.find("simulated failure"), std::string::npos) << c.message;
  }
  t.expect_as_they_were();
}

TEST(Hdf5Output, UncommittedTransactionAndExplicitAbortLeaveNothing) {
  const std::string dir = io_test_dir();
  {
    io::OutputTransaction out(world());
    out.write({dir + "/a.h5", "/x"}, shard(sample(DType::Bool, Shape{5}, 1)), {});
  }
  io::OutputTransaction out(world());
  out.write({dir + "/b.h5", "/x"}, shard(sample(DType::Bool, Shape{5}, 1)), {});
  out.abort();
  out.commit();  // nothing left to commit
  world().barrier();
  EXPECT_FALSE(exists_on_all_ranks(dir + "/a.h5"));
  EXPECT_FALSE(exists_on_all_ranks(dir + "/b.h5"));
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, UnwritablePlacesAreIOErrors) {
  const std::string dir = io_test_dir();
  const std::string plain = dir + "/plain.txt";
  if (world().rank() == 0) write_bytes(plain, {'h', 'i', '\n'});
  world().barrier();
  const Tensor t = sample(DType::Int32, Shape{4}, 1);
  // A parent that is a regular file fails even for root (permissions would not).
  for (const std::string& target : {plain + "/out.h5", dir + "/no/such/dir/out.h5"}) {
    const io::DatasetRef ref{target, "/x"};
    const Caught c = caught([&] { write_one(ref, shard(t)); });
    EXPECT_EQ(c.exit_code, 3) << c.message;
    EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("directory"), std::string::npos) << c.message;
  }
  // An existing target that is not HDF5 is not replaced.
  const Caught c = caught([&] { write_one({plain, "/x"}, shard(t)); });
  EXPECT_EQ(c.exit_code, 3) << c.message;
  EXPECT_NE(c.message.find("not an HDF5 file"), std::string::npos) << c.message;
  EXPECT_EQ(file_bytes(plain), (std::vector<unsigned char>{'h', 'i', '\n'}));
  // A directory as the target.
  const Caught d = caught([&] { write_one({dir, "/x"}, shard(t)); });
  EXPECT_EQ(d.exit_code, 3) << d.message;
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, DamagedExistingTargetIsLeftAlone) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/damaged.h5";
  write_one({file, "/a"}, shard(sample(DType::Float64, Shape{500, 4}, 1)));
  std::vector<unsigned char> bytes = file_bytes(file);
  bytes.resize(bytes.size() / 2);
  world().barrier();
  if (world().rank() == 0) write_bytes(file, bytes);
  world().barrier();
  const io::DatasetRef ref{file, "/b"};
  const Caught c = caught([&] { write_one(ref, shard(sample(DType::Float64, Shape{3}, 2))); });
  EXPECT_EQ(c.exit_code, 3) << c.message;
  EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("truncated"), std::string::npos) << c.message;
  EXPECT_EQ(file_bytes(file), bytes);
  EXPECT_TRUE(temp_files_in(dir).empty());
}

TEST(Hdf5Output, InputAndOutputInTheSameFile) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/both.h5";
  const Tensor in = sample(DType::Float64, Shape{6}, 1);
  write_one({file, "/in"}, shard(in));
  const std::vector<unsigned char> before = file_bytes(file);
  const DistTensor read = io::read_dataset(world(), {file, "/in"});
  io::OutputTransaction out(world());
  out.write({file, "/out"}, read, {});
  // Before the commit the new rows may lie past the file's end (written in place); what the
  // file held is untouched.
  const std::vector<unsigned char> during = file_bytes(file);
  ASSERT_GE(during.size(), before.size());
  EXPECT_TRUE(std::equal(before.begin(), before.end(), during.begin())) << "the input changed before commit";
  out.commit();
  expect_same_tensor(io::read_dataset(world(), {file, "/in"}), in, "input kept");
  expect_same_tensor(io::read_dataset(world(), {file, "/out"}), in, "output");
}

// The undo journal by itself (rank 0, serial): a change made through it and rolled back
// leaves the file byte for byte as it was; a change finished is there for the next reader.
TEST(Hdf5Output, JournaledChangeRollsBackByteForByte) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/journaled.h5";
  const Tensor a = sample(DType::Float32, Shape{300, 4}, 11);
  write_one({file, "/a"}, shard(a));
  const std::vector<unsigned char> before = file_bytes(file);
  if (world().rank() == 0) {
    for (const bool finish : {false, true}) {
      io::JournaledCommit journal(file, true, "test");
      {
        io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, journal.file_access()));
        ASSERT_TRUE(f.valid());
        const hsize_t n = 1000;
        io::DataspaceHandle space(H5Screate_simple(1, &n, nullptr));
        ASSERT_GE(H5Ldelete(f.get(), "/a", H5P_DEFAULT), 0);  // a change below the original length
        io::GroupHandle g(H5Gcreate2(f.get(), "/added", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        io::DatasetHandle d2(
            H5Dcreate2(f.get(), "/added/x", H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        std::vector<std::int64_t> values(n, 42);
        ASSERT_GE(H5Dwrite(d2.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
        ASSERT_TRUE(fs::exists(journal.journal_path()));
        ASSERT_EQ(d2.close(), 0);
        ASSERT_EQ(g.close(), 0);
        ASSERT_EQ(f.close(), 0);
      }
      EXPECT_NE(file_bytes(file), before) << "the change reached the file";
      if (finish) {
        journal.finish();
        EXPECT_FALSE(fs::exists(journal.journal_path()));
      } else {
        journal.roll_back();
        EXPECT_EQ(file_bytes(file), before) << "the roll-back did not restore the file";
        EXPECT_FALSE(fs::exists(journal.journal_path()));
      }
    }
  }
  world().barrier();
  // The finished change: /a deleted, /added/x there.
  EXPECT_EQ(caught([&] { io::read_dataset(world(), {file, "/a"}); }).exit_code, 2);
  const DistTensor x = io::read_dataset(world(), {file, "/added/x"});
  EXPECT_EQ(x.shape(), Shape{1000});
  EXPECT_TRUE(temp_files_in(dir).empty());
}

// A change below the original length larger than the journal holds back at once (64 MiB):
// it is journaled and applied in rounds, a later write landing on bytes an earlier round
// already changed. Within the change HDF5 reads what was written; rolled back, the file is
// as it was byte for byte; finished, it holds the last values written.
TEST(Hdf5Output, JournaledChangeInRoundsRollsBackByteForByte) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/rounds.h5";
  constexpr hsize_t kRows = hsize_t(12) << 20;  // 96 MiB of int64, contiguous
  if (world().rank() == 0) {
    {
      io::FileHandle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
      io::DataspaceHandle space(H5Screate_simple(1, &kRows, nullptr));
      io::DatasetHandle d(
          H5Dcreate2(f.get(), "/x", H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      std::vector<std::int64_t> values(kRows);
      for (hsize_t i = 0; i < kRows; ++i) values[i] = static_cast<std::int64_t>(i);
      ASSERT_GE(H5Dwrite(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    }
    const std::vector<unsigned char> before = file_bytes(file);
    // Written in pieces of 16 MiB (so rounds end between pieces), then the first piece again.
    constexpr hsize_t kPiece = hsize_t(2) << 20;
    std::vector<std::int64_t> expected(kRows);
    for (const bool finish : {false, true}) {
      SCOPED_TRACE(finish ? "finished" : "rolled back");
      io::JournaledCommit journal(file, true, "test");
      {
        io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, journal.file_access()));
        ASSERT_TRUE(f.valid());
        io::DatasetHandle d(H5Dopen2(f.get(), "/x", H5P_DEFAULT));
        io::DataspaceHandle space(H5Dget_space(d.get()));
        const auto write_piece = [&](hsize_t start, std::int64_t base) {
          std::vector<std::int64_t> piece(kPiece);
          for (hsize_t i = 0; i < kPiece; ++i) piece[i] = base - static_cast<std::int64_t>(start + i);
          std::copy(piece.begin(), piece.end(), expected.begin() + static_cast<std::ptrdiff_t>(start));
          io::DataspaceHandle mem(H5Screate_simple(1, &kPiece, nullptr));
          const hsize_t count = 1;
          ASSERT_GE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &count, &kPiece), 0);
          ASSERT_GE(H5Dwrite(d.get(), H5T_NATIVE_INT64, mem.get(), space.get(), H5P_DEFAULT, piece.data()), 0);
        };
        for (hsize_t start = 0; start < kRows; start += kPiece) write_piece(start, -1);
        write_piece(0, -(std::int64_t(1) << 40));
        std::vector<std::int64_t> read(kRows);
        ASSERT_GE(H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, read.data()), 0);
        EXPECT_TRUE(read == expected) << "the change read back within it is not what was written";
        ASSERT_EQ(d.close(), 0);
        ASSERT_EQ(f.close(), 0);
      }
      if (finish) {
        journal.finish();
        io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
        io::DatasetHandle d(H5Dopen2(f.get(), "/x", H5P_DEFAULT));
        std::vector<std::int64_t> read(kRows);
        ASSERT_GE(H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, read.data()), 0);
        EXPECT_TRUE(read == expected) << "the finished change is not in the file";
      } else {
        journal.roll_back();
        EXPECT_TRUE(file_bytes(file) == before) << "the roll-back did not restore the file";
      }
      EXPECT_FALSE(fs::exists(journal.journal_path()));
    }
  }
  world().barrier();
  EXPECT_TRUE(temp_files_in(dir).empty());
}

// Adds a dataset through the journal and prepares the change (complete on disk, the journal
// kept, as a job that dies in its commit leaves them); returns a copy of that journal, and lets
// the change stand. The copy is then what a dead job left.
std::string prepared_change_with_journal_copy(const std::string& file, const std::string& name) {
  io::JournaledCommit journal(file, true, "test");
  {
    io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, journal.file_access()));
    EXPECT_TRUE(f.valid());
    const hsize_t n = 500;
    io::DataspaceHandle space(H5Screate_simple(1, &n, nullptr));
    io::DatasetHandle d(
        H5Dcreate2(f.get(), name.c_str(), H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    std::vector<std::int64_t> values(n, 7);
    EXPECT_GE(H5Dwrite(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    EXPECT_EQ(d.close(), 0);
    EXPECT_EQ(f.close(), 0);
  }
  journal.prepare();
  const std::string copy = journal.journal_path() + "0";  // still a leftover journal's name
  fs::copy_file(journal.journal_path(), copy);
  journal.discard();
  return copy;
}

// A journal left by a dead job is rolled back only where the file is as that job left it:
// a file that another program changed since (a dataset added with HDF5, or the file made
// anew in place) keeps that change, and the journal goes; rolled back, it would be cut to
// the length it had before the job, which HDF5 cannot open.
TEST(Hdf5Output, DeadJobsJournalSparesALaterChange) {
  const std::string dir = io_test_dir();
  const std::string file = dir + "/dead_job.h5";
  const Tensor a = sample(DType::Float32, Shape{300, 4}, 12);
  for (const std::string later : {"none", "dataset added", "made anew"}) {
    SCOPED_TRACE(later);
    write_one({file, "/a"}, shard(a));
    if (world().rank() == 0) {
      const std::vector<unsigned char> before = file_bytes(file);
      const std::string journal = prepared_change_with_journal_copy(file, "/by_job");
      if (later == "dataset added") {
        io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
        const hsize_t n = 100000;
        io::DataspaceHandle space(H5Screate_simple(1, &n, nullptr));
        io::DatasetHandle d(
            H5Dcreate2(f.get(), "/later", H5T_NATIVE_INT8, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      } else if (later == "made anew") {
        io::FileHandle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
        const hsize_t n = 100000;
        io::DataspaceHandle space(H5Screate_simple(1, &n, nullptr));
        io::DatasetHandle d(
            H5Dcreate2(f.get(), "/later", H5T_NATIVE_INT8, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      }
      const std::vector<unsigned char> after_later = file_bytes(file);
      const bool rolled_back = io::roll_back_journal(file, journal);
      EXPECT_FALSE(fs::exists(journal));
      if (later == "none") {
        EXPECT_TRUE(rolled_back);
        EXPECT_EQ(file_bytes(file), before) << "the dead job's change was not undone";
      } else {
        EXPECT_FALSE(rolled_back);
        EXPECT_EQ(file_bytes(file), after_later) << "the later change was not kept";
        io::FileHandle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
        EXPECT_TRUE(f.valid()) << "HDF5 cannot open the file";
        EXPECT_GT(H5Lexists(f.get(), "/later", H5P_DEFAULT), 0);
      }
      fs::remove(file);
    }
    world().barrier();
  }
}

}  // namespace
}  // namespace shardops
