#include "ReportFile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "Deck.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/FileSystem.hpp"

namespace shardops {
namespace app {

namespace fs = std::filesystem;

namespace {
// InvalidArgument if the report \p path is one of \p files, which the job uses as \p how says.
void refuse_if_among(const std::string& path, const std::vector<std::string>& files, const std::string& how) {
  for (const std::string& file : files) {
    if (io::same_file(path, file))
      throw InvalidArgument("--report '" + path + "' is " + how + " ('" + file + "'); a report never replaces one");
  }
}
}  // namespace

std::vector<std::string> job_files(const Request& r) {
  std::vector<std::string> names;
  if (r.command == "run") {
    const Deck deck = load_deck(r.deck, r.set);
    for (const DeckInput& in : deck.inputs) {
      if (!in.dataset.empty()) names.push_back(in.dataset);
    }
    for (const DeckOutput& out : deck.outputs) names.push_back(out.dataset);
  } else {
    for (const auto& [input, datasets] : r.inputs) names.insert(names.end(), datasets.begin(), datasets.end());
    if (!r.out.empty()) names.push_back(r.out);
  }
  std::vector<std::string> files;
  for (const std::string& name : names) files.push_back(io::parse_dataset_ref(name).file);
  if (r.command == "run") files.push_back(r.deck);  // the deck is read too
  return files;
}

ReportFile::ReportFile(const Comm& comm, const std::string& path, const std::vector<std::string>& job_files)
    : rank_(comm.rank()), path_(path) {
  run_agreed(comm, [&] {
    if (rank_ != 0) return;
    const std::string what = "--report '" + path + "'";
    refuse_if_among(path, job_files, "a file this job reads or writes");
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw InvalidArgument(what + " is a directory; name a file");
    const std::string target = io::resolve_output_path(path, what);
    path_ = target;
    unnamed_ = ::open(fs::path(target).parent_path().c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (unnamed_ >= 0) return;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      throw IOError(what + ": cannot create a file in its folder: " + std::strerror(errno));
    temp_ = io::hidden_path_beside(target, ".shardops-report." + io::unique_token());
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      temp_.clear();
      throw IOError(what + ": cannot create a file in its folder: " + std::strerror(errno));
    }
    ::close(fd);
    temp_on_stop_ = io::CleanupPath(temp_);
  });
}

void ReportFile::refuse_files_read(const Comm& comm, const std::vector<std::string>& files_read) const {
  run_agreed(comm, [&] {
    if (rank_ == 0)
      refuse_if_among(path_, files_read,
                      "a file this job reads (an input's, or one its link, virtual dataset or raw data leads to)");
  });
}

ReportFile::~ReportFile() {
  if (unnamed_ >= 0) ::close(unnamed_);
  if (!temp_.empty()) io::remove_quietly(temp_);
}

bool ReportFile::put_in_place(const std::string& json) {
  const bool unnamed = unnamed_ >= 0;
  const int fd = unnamed ? unnamed_ : ::open(temp_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return false;
  bool written = io::write_all(fd, json.data(), json.size(), 0);
  int err = errno;
  if (!unnamed && ::close(fd) != 0 && written) {
    written = false;
    err = errno;
  }
  if (!written) {
    errno = err;
    return false;
  }
  if (unnamed) {
    // An unnamed file gets a name only by a link; then, as a named one, it is renamed.
    temp_ = io::hidden_path_beside(path_, ".shardops-report." + io::unique_token());
    temp_on_stop_ = io::CleanupPath(temp_);
    const std::string self = "/proc/self/fd/" + std::to_string(unnamed_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      const int link_err = errno;
      temp_on_stop_.reset();
      temp_.clear();
      errno = link_err;
      return false;
    }
  }
  return std::rename(temp_.c_str(), path_.c_str()) == 0;
}

bool ReportFile::write(const std::string& json) noexcept {
  if (rank_ != 0 || (unnamed_ < 0 && temp_.empty())) return true;
  bool done = false;
  try {
    done = put_in_place(json);
  } catch (const std::exception&) {
    errno = ENOMEM;  // the name's text: nothing else in it throws
  }
  if (done) {
    temp_on_stop_.reset();
    temp_.clear();
    return true;
  }
  std::cerr << "shardops: warning: the outputs were written, but the report '" << path_
            << "' could not be: " << std::strerror(errno) << std::endl;
  return false;
}

}  // namespace app
}  // namespace shardops
