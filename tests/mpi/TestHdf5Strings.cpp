// String datasets (HDF5 H5T_STRING <-> DType::String): variable- and fixed-length
// strings round trip through OutputTransaction and read_dataset at every rank count
// and layout (uneven blocks, empty blocks, scalars, 0-size and 2-D datasets), with
// empty, long (> 64 KiB), non-ASCII and (fixed length) embedded-NUL strings, through
// tiny transfer rounds too; fixed-length outputs widen to their longest string;
// variable-length outputs refuse NUL bytes and leave nothing behind; --overwrite;
// files h5py writes (string_dtype(), S<n>, NULLTERM, SPACEPAD) read as h5py reads
// them, and what we write reads back in h5py with the same string type.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "DistTestUtil.hpp"
#include "TestIoUtil.hpp"
#include "shardops/Version.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/hdf5/RowTransfer.hpp"
#include "shardops/kernels/StringKernels.hpp"

namespace shardops {
namespace {

using namespace test;
namespace fs = std::filesystem;

const std::string& long_string() {
  static const std::string s = [] {
    std::string x(70000, ' ');  // > 64 KiB
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<char>(0x20 + (i * 7919) % 95);
    return x;
  }();
  return s;
}

std::string with_nul(const char* text, std::size_t n) { return std::string(text, n); }

/// \p n strings: first the interesting ones (empty, long, UTF-8, emoji, and with
/// \p nuls embedded NULs, never trailing ones), then a mix of lengths.
std::vector<std::string> sample_strings(std::int64_t n, bool nuls, std::uint64_t seed) {
  std::vector<std::string> base{
      "", "a", "größe", "日本語", "emoji 🙂👍🏽", long_string(), "tab\tnew\nline", std::string(300, 'x'), "ok"};
  if (nuls) {
    base.insert(base.begin() + 2, with_nul("a\0b", 3));
    base.push_back(with_nul("\0lead", 5));
    base.push_back(with_nul("mid\0\0dle", 8));
  }
  std::vector<std::string> out;
  Rng rng(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    if (static_cast<std::size_t>(i) < base.size()) {
      out.push_back(base[static_cast<std::size_t>((static_cast<std::uint64_t>(i) + seed) % base.size())]);
    } else {
      const std::size_t len = rng() % 40;
      std::string s;
      for (std::size_t k = 0; k < len; ++k) s += static_cast<char>('a' + rng() % 26);
      if (rng() % 3 == 0) s += "é";
      out.push_back(s);
    }
  }
  return out;
}

StringFormat vlen(bool utf8 = true) { return StringFormat{false, 0, utf8}; }
StringFormat fixed(std::int64_t width, bool utf8 = false) { return StringFormat{true, width, utf8}; }

std::string format_str(const StringFormat& f) {
  return f.fixed_length ? "fixed" + std::to_string(f.width) + (f.utf8 ? "utf8" : "ascii")
                        : std::string("vlen") + (f.utf8 ? "utf8" : "ascii");
}

std::string shape_name(const Shape& s) {
  std::string name = "s";
  for (const std::int64_t d : s.dims()) name += "_" + std::to_string(d);
  return name;
}

std::int64_t longest(const std::vector<std::string>& values) {
  std::int64_t n = 0;
  for (const std::string& v : values) n = std::max<std::int64_t>(n, static_cast<std::int64_t>(v.size()));
  return n;
}

/// The format a tensor of \p values written with \p f reads back with.
StringFormat written_format(const StringFormat& f, const std::vector<std::string>& values) {
  if (!f.fixed_length) return f;
  return fixed(std::max<std::int64_t>({f.width, longest(values), 1}), f.utf8);
}

/// This rank's block of \p values (row-major, of \p shape) under \p layout, its pool
/// homed at this rank. A scalar lives on rank 0.
DistTensor shard_strings(const std::vector<std::string>& values, const Shape& shape, const RowLayout& layout,
                         const StringFormat& format) {
  const int rank = world().rank();
  if (shape.rank() == 0) {
    const Tensor local =
        rank == 0 ? make_string_tensor(Shape(), values, 0, format) : make_string_tensor(Shape{0}, {}, rank, format);
    return DistTensor(local, shape, RowLayout::on_rank(1, world().size(), 0), rank);
  }
  const std::int64_t row = shape.product_from(1);
  const auto begin = values.begin() + layout.offset(rank) * row;
  const std::vector<std::string> mine(begin, begin + layout.count(rank) * row);
  return DistTensor(make_string_tensor(shape.with_dim0(layout.count(rank)), mine, rank, format), shape, layout, rank);
}

/// Every rank's strings of \p t, in row order, on every rank.
std::vector<std::string> all_strings(const DistTensor& t) { return string_values(t.allgather(world())); }

std::string shown(const std::string& s) {
  std::ostringstream o;
  o << "(" << s.size() << " bytes) \"";
  for (std::size_t i = 0; i < s.size() && i < 24; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      o << s[i];
    } else {
      o << "\\x" << std::hex << static_cast<int>(c) << std::dec;
    }
  }
  o << (s.size() > 24 ? "...\"" : "\"");
  return o.str();
}

/// \p t holds \p values (global, row-major) in \p shape, with pools homed at their
/// ranks carrying \p format.
void expect_strings(const DistTensor& t, const std::vector<std::string>& values, const Shape& shape,
                    const StringFormat& format, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(t.dtype(), DType::String);
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.local().strings().home, world().rank());
  const StringFormat& got = t.local().strings().format;
  EXPECT_EQ(format_str(got), format_str(format));
  const std::vector<std::string> all = all_strings(t);
  ASSERT_EQ(all.size(), values.size());
  int shown_diffs = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] != values[i] && shown_diffs++ < 3) {
      ADD_FAILURE() << "element " << i << ": got " << shown(all[i]) << ", expected " << shown(values[i]);
    }
  }
}

class TransferLimit {
 public:
  explicit TransferLimit(std::size_t bytes) : saved_(io::max_transfer_bytes()) { io::set_max_transfer_bytes(bytes); }
  ~TransferLimit() { io::set_max_transfer_bytes(saved_); }

 private:
  std::size_t saved_;
};

const std::vector<Shape>& string_shapes() {
  static const std::vector<Shape> shapes{Shape{7},    Shape{7, 2}, Shape(),        Shape{0},
                                         Shape{0, 3}, Shape{3, 0}, Shape{5, 1, 2}, Shape{1}};
  return shapes;
}

struct Written {
  io::DatasetRef ref;
  std::vector<std::string> values;
  Shape shape;
  RowLayout layout;
  StringFormat format;  ///< as read back
};

// Writes every shape under every layout in \p format to \p file in one transaction,
// with a numeric dataset after each (the transaction's file is closed and reopened
// around variable-length writes), then reads everything back.
void round_trip(const std::string& file, const StringFormat& format, Rng& rng, std::uint64_t seed) {
  const int p = world().size();
  std::vector<Written> written;
  std::vector<std::pair<io::DatasetRef, Tensor>> numbers;
  {
    io::OutputTransaction out(world());
    for (const Shape& shape : string_shapes()) {
      const std::vector<std::string> values = sample_strings(shape.num_elements(), format.fixed_length, seed++);
      const std::vector<RowLayout> layouts =
          shape.rank() == 0 ? std::vector<RowLayout>{RowLayout::on_rank(1, p, 0)} : test_layouts(rng, shape.dim(0), p);
      for (std::size_t l = 0; l < layouts.size(); ++l) {
        const io::DatasetRef ref{file, "/" + shape_name(shape) + "/layout" + std::to_string(l)};
        out.write(ref, shard_strings(values, shape, layouts[l], format), roundtrip_provenance(ref.path, DType::String));
        written.push_back({ref, values, shape, layouts[l], written_format(format, values)});
        const Tensor number = random_tensor(rng, DType::Int32, Shape{5, 2});
        const io::DatasetRef number_ref{file, ref.path + "_after"};
        out.write(number_ref, shard(number), {});
        numbers.emplace_back(number_ref, number);
      }
    }
    out.commit();
  }
  for (const Written& w : written) {
    const std::string what = w.ref.str() + " " + format_str(format) + " written under " + layout_str(w.layout);
    const io::DatasetInfo info = io::inspect(world(), w.ref);
    EXPECT_EQ(info.dtype, DType::String) << what;
    EXPECT_EQ(info.shape, w.shape) << what;
    EXPECT_EQ(format_str(info.strings), format_str(w.format)) << what;
    const DistTensor back = io::read_dataset(world(), w.ref);
    if (w.shape.rank() > 0) {
      EXPECT_EQ(back.layout(), RowLayout::balanced(w.shape.dim(0), p)) << what;
    }
    expect_strings(back, w.values, w.shape, w.format, what + ", read balanced");
    if (w.shape.rank() > 0) {
      const DistTensor again = io::read_dataset(world(), w.ref, &w.layout);
      EXPECT_EQ(again.layout(), w.layout) << what;
      expect_strings(again, w.values, w.shape, w.format, what + ", read under the same layout");
    }
  }
  for (const auto& [ref, number] : numbers) expect_same_tensor(io::read_dataset(world(), ref), number, ref.str());
  EXPECT_TRUE(temp_files_in(fs::path(file).parent_path().string()).empty());
}

TEST(Hdf5Strings, RoundTripEveryKindShapeAndLayout) {
  const std::string dir = io_test_dir();
  Rng rng(31);
  for (const StringFormat& format : {vlen(true), vlen(false), fixed(8, false), fixed(16, true)}) {
    round_trip(dir + "/" + format_str(format) + ".h5", format, rng, 100);
  }
}

TEST(Hdf5Strings, TinyTransferRoundsStageStringsRowByRow) {
  const std::string dir = io_test_dir();
  Rng rng(32);
  for (const std::size_t limit : {std::size_t(1), std::size_t(40)}) {
    const TransferLimit scoped(limit);
    for (const StringFormat& format : {vlen(true), fixed(4, false)}) {
      round_trip(dir + "/" + format_str(format) + std::to_string(limit) + ".h5", format, rng, 7);
    }
  }
}

TEST(Hdf5Strings, SevenRowsOverEveryRankCountUneven) {
  // 7 rows: uneven blocks at 2, 3 and 4 ranks (3 ranks: 3, 2, 2).
  const std::string dir = io_test_dir();
  const std::vector<std::string> values{"größe", "", "日本語", "🙂", long_string(), "z", "mixed é length"};
  for (const StringFormat& format : {vlen(true), fixed(5, false)}) {
    const io::DatasetRef ref{dir + "/seven.h5", "/" + format_str(format)};
    write_one(ref, shard_strings(values, Shape{7}, RowLayout::balanced(7, world().size()), format));
    const DistTensor back = io::read_dataset(world(), ref);
    EXPECT_EQ(back.local().shape(), Shape{RowLayout::balanced(7, world().size()).count(world().rank())});
    expect_strings(back, values, Shape{7}, written_format(format, values), ref.str());
  }
}

TEST(Hdf5Strings, FixedLengthOutputsWidenToTheLongestString) {
  const std::string dir = io_test_dir();
  const int p = world().size();
  struct Case {
    std::string path;
    StringFormat format;
    std::vector<std::string> values;
    std::int64_t width;
  };
  const std::vector<Case> cases{
      // Longer than the input's width (e.g. ScatterNd concatenation), the longest on the last rank.
      {"/wider", fixed(3), {"abc", "a", "", "ab", "abcdefgh"}, 8},
      {"/wider_utf8", fixed(2, true), {"é", "日本語"}, 9},
      // Narrower strings keep the input's width.
      {"/same", fixed(10), {"a", "bb", with_nul("c\0c", 3)}, 10},
      // All empty, no width known: one byte.
      {"/empty_strings", fixed(0), {"", "", ""}, 1},
  };
  for (const Case& c : cases) {
    const io::DatasetRef ref{dir + "/wide.h5", c.path};
    const auto n = static_cast<std::int64_t>(c.values.size());
    write_one(ref, shard_strings(c.values, Shape{n}, RowLayout::on_rank(n, p, p - 1), c.format));
    const io::DatasetInfo info = io::inspect(world(), ref);
    EXPECT_EQ(format_str(info.strings), format_str(fixed(c.width, c.format.utf8))) << ref.str();
    expect_strings(io::read_dataset(world(), ref), c.values, Shape{n}, fixed(c.width, c.format.utf8), ref.str());
  }
}

TEST(Hdf5Strings, VariableLengthRefusesNulBytesAndWritesNothing) {
  const std::string dir = io_test_dir();
  const int p = world().size();
  std::vector<std::string> values{"fine", "also fine", "", "x", "y", "z", "w"};
  values[5] = with_nul("bad\0byte", 8);  // element 5: on the last rank under on_rank(.., p - 1)
  const RowLayout layout = RowLayout::on_rank(7, p, p - 1);
  // A new file: not created.
  const io::DatasetRef fresh{dir + "/new.h5", "/s"};
  Caught c = caught([&] { write_one(fresh, shard_strings(values, Shape{7}, layout, vlen())); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(fresh.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("NUL"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("element 5"), std::string::npos) << c.message;
  EXPECT_EQ(world().max(fs::exists(dir + "/new.h5") ? 1 : 0), 0);
  // An existing file: unchanged, byte for byte.
  const std::string file = dir + "/existing.h5";
  const std::vector<std::string> kept{"kept", "as is"};
  write_one({file, "/kept"}, shard_strings(kept, Shape{2}, RowLayout::balanced(2, p), vlen()));
  const std::vector<unsigned char> before = file_bytes(file);
  c = caught([&] { write_one({file, "/s"}, shard_strings(values, Shape{7}, RowLayout::balanced(7, p), vlen())); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_EQ(file_bytes(file), before) << "the target changed";
  EXPECT_TRUE(temp_files_in(dir).empty());
  expect_strings(io::read_dataset(world(), {file, "/kept"}), kept, Shape{2}, vlen(), "kept");
  // Fixed-length output keeps the NULs.
  write_one({file, "/s"}, shard_strings(values, Shape{7}, layout, fixed(4)));
  expect_strings(io::read_dataset(world(), {file, "/s"}), values, Shape{7}, fixed(9), "fixed keeps NULs");
}

TEST(Hdf5Strings, ExistingDatasetNeedsOverwriteAndOthersAreKept) {
  const std::string dir = io_test_dir();
  const int p = world().size();
  const std::string file = dir + "/out.h5";
  Rng rng(4);
  const Tensor numbers = random_tensor(rng, DType::Float64, Shape{6, 2});
  const std::vector<std::string> first = sample_strings(9, false, 1), second = sample_strings(4, false, 2);
  write_one({file, "/numbers"}, shard(numbers));
  write_one({file, "/s"}, shard_strings(first, Shape{9}, RowLayout::balanced(9, p), vlen()));
  const std::vector<unsigned char> before = file_bytes(file);
  const io::DatasetRef ref{file, "/s"};
  const Caught c = caught([&] { write_one(ref, shard_strings(second, Shape{4}, RowLayout::balanced(4, p), vlen())); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("--overwrite"), std::string::npos) << c.message;
  EXPECT_EQ(file_bytes(file), before) << "the target changed";
  expect_strings(io::read_dataset(world(), ref), first, Shape{9}, vlen(), "unchanged");
  write_one(ref, shard_strings(second, Shape{4}, RowLayout::on_rank(4, p, 0), vlen(false)), /*overwrite=*/true);
  expect_strings(io::read_dataset(world(), ref), second, Shape{4}, vlen(false), "replaced");
  expect_same_tensor(io::read_dataset(world(), {file, "/numbers"}), numbers, "numbers kept");
  // Two files in one transaction, variable length in both.
  {
    io::OutputTransaction out(world());
    out.write({dir + "/one.h5", "/a"}, shard_strings(first, Shape{9}, RowLayout::balanced(9, p), vlen()), {});
    out.write({dir + "/two.h5", "/b"}, shard_strings(second, Shape{4}, RowLayout::balanced(4, p), vlen()), {});
    out.write({dir + "/one.h5", "/c"}, shard(numbers), {});
    EXPECT_EQ(world().max(fs::exists(dir + "/one.h5") ? 1 : 0), 0) << "renamed before commit";
    out.commit();
  }
  expect_strings(io::read_dataset(world(), {dir + "/one.h5", "/a"}), first, Shape{9}, vlen(), "one.h5:/a");
  expect_strings(io::read_dataset(world(), {dir + "/two.h5", "/b"}), second, Shape{4}, vlen(), "two.h5:/b");
  expect_same_tensor(io::read_dataset(world(), {dir + "/one.h5", "/c"}), numbers, "one.h5:/c");
  EXPECT_TRUE(temp_files_in(dir).empty());
}

// ---- h5py interoperability -------------------------------------------------------

#define REQUIRE_H5PY() \
  if (!have_h5py()) GTEST_SKIP() << "no Python with h5py (set SHARDOPS_TEST_PYTHON)"

struct StringEntry {
  std::string path;
  StringFormat format;
  Shape shape;
};

std::vector<StringEntry> read_string_manifest(const std::string& dir) {
  std::vector<StringEntry> entries;
  std::ifstream in(dir + "/strings_manifest.txt");
  std::string path, kind, cset, dims;
  std::int64_t width = 0;
  while (in >> path >> kind >> width >> cset >> dims) {
    std::vector<std::int64_t> d;
    if (dims != "-") {
      std::istringstream s(dims);
      std::string part;
      while (std::getline(s, part, ',')) d.push_back(std::stoll(part));
    }
    entries.push_back({path, StringFormat{kind == "fixed", width, cset == "utf8"}, dims == "-" ? Shape() : Shape(d)});
  }
  return entries;
}

std::string strs_path(const std::string& dir, const std::string& path) {
  std::string bin = expected_bin(path);
  return dir + "/" + bin.substr(0, bin.size() - 4) + ".strs";
}

std::vector<std::string> read_strs(const std::string& file) {
  const std::vector<unsigned char> bytes = file_bytes(file);
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at + 8 <= bytes.size()) {
    std::uint64_t n = 0;
    for (int k = 7; k >= 0; --k) n = (n << 8) | bytes[at + static_cast<std::size_t>(k)];
    at += 8;
    out.emplace_back(reinterpret_cast<const char*>(bytes.data()) + at, static_cast<std::size_t>(n));
    at += static_cast<std::size_t>(n);
  }
  return out;
}

void write_strs(const std::string& file, const std::vector<std::string>& values) {
  std::vector<unsigned char> bytes;
  for (const std::string& v : values) {
    std::uint64_t n = v.size();
    for (int k = 0; k < 8; ++k) bytes.push_back(static_cast<unsigned char>(n >> (8 * k)));
    bytes.insert(bytes.end(), v.begin(), v.end());
  }
  write_bytes(file, bytes);
}

// One h5py-made string file per test binary run.
const std::string& h5py_strings_dir() {
  static std::string dir;
  if (dir.empty()) {
    const std::string made = io_test_dir();
    if (run_h5py_script({"make-strings", made}) != 0) throw std::runtime_error("TestHdf5Py.py make-strings failed");
    dir = made;
  }
  return dir;
}

TEST(Hdf5StringsH5py, ReadsWhatH5pyWrites) {
  REQUIRE_H5PY();
  const std::string dir = h5py_strings_dir();
  const std::vector<StringEntry> entries = read_string_manifest(dir);
  ASSERT_EQ(entries.size(), 13u);
  Rng rng(21);
  for (const StringEntry& e : entries) {
    const io::DatasetRef ref{dir + "/h5py_strings.h5", e.path};
    const io::DatasetInfo info = io::inspect(world(), ref);
    EXPECT_EQ(info.dtype, DType::String) << ref.str();
    EXPECT_EQ(info.shape, e.shape) << ref.str();
    EXPECT_EQ(format_str(info.strings), format_str(e.format)) << ref.str();
    const std::vector<std::string> want = read_strs(strs_path(dir, e.path));
    expect_strings(io::read_dataset(world(), ref), want, e.shape, e.format, ref.str() + " balanced");
    if (e.shape.rank() > 0) {
      for (const RowLayout& layout : test_layouts(rng, e.shape.dim(0), world().size())) {
        expect_strings(io::read_dataset(world(), ref, &layout), want, e.shape, e.format,
                       ref.str() + " " + layout_str(layout));
      }
    }
  }
  // What h5py reads, independently of the expected files: NumPy's S<n> keeps embedded
  // NULs and drops trailing ones; NULLTERM ends at a NUL; SPACEPAD drops trailing spaces.
  const auto element = [&](const std::string& path, std::size_t i) {
    const std::vector<std::string> all = all_strings(io::read_dataset(world(), {dir + "/h5py_strings.h5", path}));
    return i < all.size() ? all[i] : std::string("<missing>");
  };
  EXPECT_EQ(element("/fixed", 1), with_nul("a\0b", 3));
  EXPECT_EQ(element("/fixed", 4), with_nul("\0lead", 5));
  EXPECT_EQ(element("/fixed", 5), "ab");
  EXPECT_EQ(element("/fixed", 6), "");
  EXPECT_EQ(element("/fixed", 3), "abcde");
  EXPECT_EQ(element("/nullterm", 1), "a");
  EXPECT_EQ(element("/spacepad", 3), " x y");
  EXPECT_EQ(element("/spacepad", 2), "ab  ");
  EXPECT_EQ(element("/vlen_utf8", 2), "größe");
  EXPECT_EQ(element("/vlen_utf8", 5), long_string());
  EXPECT_EQ(element("/fixed_long", 0), long_string());
  EXPECT_EQ(element("/scalar_fixed", 0), with_nul("sc\0alar", 7));
}

TEST(Hdf5StringsH5py, HugeStringDatasetIsRefusedBeforeAllocating) {
  REQUIRE_H5PY();
  const io::DatasetRef ref{h5py_strings_dir() + "/h5py_strings.h5", "/huge/vlen"};
  EXPECT_EQ(io::inspect(world(), ref).shape, (Shape{std::int64_t(1) << 40}));
  const Caught c = caught([&] { io::read_dataset(world(), ref); });
  EXPECT_EQ(c.exit_code, 2) << c.message;
  EXPECT_NE(c.message.find(ref.str()), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("memory"), std::string::npos) << c.message;
}

TEST(Hdf5StringsH5py, H5pyReadsWhatWeWriteWithTheSameType) {
  REQUIRE_H5PY();
  const std::string source = h5py_strings_dir();
  const std::string dir = io_test_dir();
  const std::string file = dir + "/ours.h5";
  const int p = world().size();
  Rng rng(77);
  struct Out {
    std::string path;
    DistTensor tensor;
    std::vector<std::string> values;
    StringFormat format;  ///< expected in the file
  };
  std::vector<Out> outs;
  const auto add = [&](const std::string& path, const std::vector<std::string>& values, const Shape& shape,
                       const StringFormat& format) {
    const RowLayout layout = shape.rank() == 0 ? RowLayout::on_rank(1, p, 0) : random_layout(rng, shape.dim(0), p);
    outs.push_back({path, shard_strings(values, shape, layout, format), values, written_format(format, values)});
  };
  add("/vlen_utf8", sample_strings(9, false, 1), Shape{9}, vlen(true));
  add("/vlen_ascii", {"plain", "", "ascii", long_string()}, Shape{4}, vlen(false));
  add("/fixed", sample_strings(14, true, 2), Shape{7, 2}, fixed(8));
  add("/fixed_utf8", {"größe", "日本語", ""}, Shape{3}, fixed(20, true));
  add("/fixed_widened", {"abc", "abcdefghij"}, Shape{2}, fixed(3));
  add("/scalar_vlen", {"日本語 scalar"}, Shape(), vlen());
  add("/scalar_fixed", {with_nul("sc\0alar", 7)}, Shape(), fixed(7));
  add("/empty_vlen", {}, Shape{0}, vlen());
  add("/empty_fixed", {}, Shape{0, 3}, fixed(4));
  add("/vlen_2d", sample_strings(12, false, 3), Shape{4, 3}, vlen());
  // Read from h5py's file and written back: the same string type.
  for (const std::string path : {"/vlen_utf8", "/vlen_ascii", "/fixed", "/fixed_utf8", "/spacepad", "/fixed_2d"}) {
    const DistTensor in = io::read_dataset(world(), {source + "/h5py_strings.h5", path});
    const std::vector<std::string> values = read_strs(strs_path(source, path));
    outs.push_back({"/copied" + path, in, values, in.local().strings().format});
  }
  std::string manifest;
  {
    io::OutputTransaction out(world());
    for (const Out& o : outs) {
      out.write({file, o.path}, o.tensor, roundtrip_provenance(o.path, DType::String));
      std::string dims;
      for (const std::int64_t d : o.tensor.shape().dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      manifest += o.path + (o.format.fixed_length ? " fixed " : " vlen ") + std::to_string(o.format.width) +
                  (o.format.utf8 ? " utf8 " : " ascii ") + (o.tensor.is_scalar() ? std::string("-") : dims) + "\n";
    }
    out.commit();
  }
  if (world().rank() == 0) {
    fs::create_directories(dir + "/expected");
    std::ofstream(dir + "/strings_manifest.txt") << manifest;
    for (const Out& o : outs) write_strs(strs_path(dir, o.path), o.values);
  }
  world().barrier();
  EXPECT_EQ(run_h5py_script({"check-strings", file, dir, SHARDOPS_VERSION_STRING}), 0);
}

}  // namespace
}  // namespace shardops
