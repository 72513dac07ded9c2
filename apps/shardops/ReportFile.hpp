#pragma once
/// \file
/// \brief The --report file: refused up front if it is one of the job's own files,
/// claimed before any work, written atomically after the commit.

#include <string>
#include <vector>

#include "Request.hpp"
#include "shardops/hdf5/StopSignals.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops {
namespace app {

/// The files a request reads or writes (for a deck: the deck, its bound inputs and outputs).
std::vector<std::string> job_files(const Request& r);

/// \brief A report file claimed for this job. Collective. The claim creates the report,
/// empty and still unnamed, in the report's folder (O_TMPFILE: it vanishes with the
/// process, however that ends), so a report that cannot be written fails the job before
/// any work, not after its commit. Where the file system has no unnamed files (NFS), a
/// hidden ".NAME.shardops-report.TOKEN" beside the path stands in, removed unless SIGKILL
/// ends the job.
class ReportFile {
 public:
  /// \throws InvalidArgument (exit 2) if \p path is one of \p job_files or a directory;
  /// IOError (exit 3) naming the reason if its folder is missing or not writable.
  ReportFile(const Comm& comm, const std::string& path, const std::vector<std::string>& job_files);
  ~ReportFile();
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;

  /// \brief Collective, once the inputs are read: \throws InvalidArgument (exit 2) if the
  /// report is one of \p files_read (rank 0's: InputWatch::files_read, the files links and
  /// virtual datasets lead to among them), which the names given could not show up front.
  void refuse_files_read(const Comm& comm, const std::vector<std::string>& files_read) const;

  /// \brief Rank 0: writes \p json and renames it into place. The outputs are committed
  /// by then, so a failure only prints a warning (returned false), never an error.
  bool write(const std::string& json) noexcept;

 private:
  /// Rank 0: \p json into a hidden name beside the report (linking the unnamed file there
  /// first), then renamed into place. False with errno set if any step fails.
  bool put_in_place(const std::string& json);

  int rank_ = 0;
  int unnamed_ = -1;  ///< the unnamed file (O_TMPFILE), or -1
  std::string path_, temp_;
  io::CleanupPath temp_on_stop_;
};

}  // namespace app
}  // namespace shardops
