#include "ListCommand.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <sstream>

#include "ErrorReport.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/hdf5/FileListing.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/JobCommit.hpp"

namespace shardops {
namespace app {

void run_list_command(const Comm& comm, const Request& r) {
  std::string file = r.listing, path = "/";
  // FILE or FILE:/group (the last ":/" splits, as dataset names do).
  const std::size_t split = r.listing.rfind(":/");
  if (split != std::string::npos) {
    file = r.listing.substr(0, split);
    path = r.listing.substr(split + 1);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
  }
  std::vector<io::DatasetListing> found;
  std::string uncommitted;
  run_agreed(comm, [&] {
    if (comm.rank() != 0) return;
    found = io::list_datasets(file, path, r.list_attributes);
    // What a dead job left that still holds a change: not a journal its file no longer
    // matches (rolled back by another user's job that could not remove it, say).
    const std::string target = io::resolved_path(file, r.listing);
    if (!io::uncommitted_change_of(target).empty()) uncommitted = io::uncommitted_change_left(target);
  });
  if (comm.rank() != 0 || r.verbosity == Verbosity::Quiet) return;
  // ls only reads: it says so rather than undo the change, as a job reading the file does.
  if (!uncommitted.empty()) {
    std::cerr << "shardops: note: '" << file << "' may hold a change that no shardops job committed ('" << uncommitted
              << "' beside it); the next shardops job that reads or writes the file undoes it first\n";
  }
  // Columns count characters, not bytes: a UTF-8 name's continuation bytes take no column
  // (East Asian wide characters take two on most terminals; counted as one).
  const auto columns = [](const std::string& text) {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  };
  // Names and values as one line each (one_line escapes control characters): a newline in a
  // name or an attribute would otherwise print what reads as another dataset's line.
  std::size_t wide = 4;
  for (const auto& d : found) wide = std::max(wide, columns(one_line(d.path)));
  std::ostringstream os;
  for (const auto& d : found) {
    const std::string path = one_line(d.path);
    os << path << std::string(wide + 2 - columns(path), ' ');
    if (!d.problem.empty()) {
      os << one_line(d.problem);  // nothing else is known of it
    } else {
      os << dims_text(d.shape) << "  " << d.dtype;
      if (!d.chunks.empty()) os << "  chunks " << dims_text(d.chunks);
      if (!d.filters.empty()) {
        os << "  filters ";
        for (std::size_t i = 0; i < d.filters.size(); ++i) os << (i ? ", " : "") << d.filters[i];
      }
    }
    if (!d.link.empty()) os << "  (" << one_line(d.link) << ")";
    os << "\n";
    for (const auto& [name, value] : d.attributes) os << "    @" << one_line(name) << " = " << one_line(value) << "\n";
    if (!d.comment.empty()) os << "    # " << one_line(d.comment) << "\n";
  }
  if (found.empty()) os << "(no datasets in " << r.listing << ")\n";
  errno = 0;
  std::cout << os.str() << std::flush;
  // The listing is all that ls makes: a standard output that cannot take it (a full disk) fails
  // the command. A reader that stopped reading (`| head`) is not a failure, as for coreutils.
  if (!std::cout && errno != EPIPE) {
    throw IOError("cannot write the listing of '" + r.listing + "' to standard output" +
                  (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
}

}  // namespace app
}  // namespace shardops
