#include "TestIoUtil.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "DistTestUtil.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/hdf5/OutputTransaction.hpp"

#ifndef SHARDOPS_TEST_PYTHON
#define SHARDOPS_TEST_PYTHON "/usr/bin/python3"
#endif
#ifndef SHARDOPS_TEST_H5PY_SCRIPT
#error "SHARDOPS_TEST_H5PY_SCRIPT must name TestHdf5Py.py"
#endif

namespace shardops {
namespace test {

namespace fs = std::filesystem;

namespace {

// The run's scratch root, made on first use and removed when the tests end.
class ScratchRoot : public ::testing::Environment {
 public:
  const std::string& path() {
    if (path_.empty()) {
      std::string made;
      if (world().rank() == 0) {
        std::string templ = (fs::temp_directory_path() / "shardops-io-test-XXXXXX").string();
        if (mkdtemp(&templ[0]) != nullptr) made = templ;
      }
      path_ = world().broadcast(made, 0);
      if (path_.empty()) throw std::runtime_error("cannot create a scratch directory");
    }
    return path_;
  }
  void TearDown() override {
    if (!path_.empty() && world().rank() == 0) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }

 private:
  std::string path_;
};

ScratchRoot* const g_scratch = static_cast<ScratchRoot*>(::testing::AddGlobalTestEnvironment(new ScratchRoot));

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int run_on_root(const std::string& command) {
  std::int64_t status = -1;
  if (world().rank() == 0) {
    const int raw = std::system(command.c_str());
    status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::vector<std::int64_t> all = world().allgather(status);
  return static_cast<int>(all[0]);
}

}  // namespace

std::string io_test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("no-test");
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string dir = g_scratch->path() + "/" + name;
  if (world().rank() == 0) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
  }
  world().barrier();
  return dir;
}

int run_h5py_script(const std::vector<std::string>& args) {
  std::string command = quoted(SHARDOPS_TEST_PYTHON) + " " + quoted(SHARDOPS_TEST_H5PY_SCRIPT);
  for (const std::string& a : args) command += " " + quoted(a);
  return run_on_root(command);
}

bool have_h5py() {
  static const int status = run_on_root(quoted(SHARDOPS_TEST_PYTHON) + " -c 'import h5py, numpy' > /dev/null 2>&1");
  return status == 0;
}

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> temp_files_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".shardops-") != std::string::npos) names.push_back(name);  // temp, journal, lock
  }
  return names;
}

Caught caught(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return Caught{e.exit_code(), e.what()};
  } catch (const std::exception& e) {
    return Caught{-1, e.what()};
  }
  return Caught{};
}

io::Attributes roundtrip_provenance(const std::string& path, DType dtype) {
  return {{"op", "roundtrip"}, {"inputs", path}, {"options", std::string("dtype=") + dtype_name(dtype)}};
}

void write_one(const io::DatasetRef& target, const DistTensor& tensor, bool overwrite) {
  io::OutputTransaction out(world(), io::OutputOptions{overwrite});
  out.write(target, tensor, roundtrip_provenance(target.path, tensor.dtype()));
  out.commit();
}

std::string manifest_line(const std::string& path, DType dtype, const Shape& shape) {
  std::string dims;
  for (const std::int64_t d : shape.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return path + " " + dtype_name(dtype) + " " + (shape.rank() == 0 ? std::string("-") : dims);
}

std::string expected_bin(const std::string& path) {
  std::string name = path.substr(1);
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return "expected/" + name + ".bin";
}

}  // namespace test
}  // namespace shardops
