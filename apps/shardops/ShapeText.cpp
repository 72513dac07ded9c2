#include "ShapeText.hpp"

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/StorageLayout.hpp"

namespace shardops {
namespace app {

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> dims;
  // No dims: a scalar shape, which the op refuses with TensorFlow's message for its inputs.
  if (text.empty()) return dims;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t used = 0;
    long long v = 0;
    // std::stoll alone would take leading spaces and a '+'.
    bool ok = !item.empty() && (item[0] == '-' || (item[0] >= '0' && item[0] <= '9'));
    if (ok) {
      try {
        v = std::stoll(item, &used, 10);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || used != item.size()) {
      throw InvalidArgument("--shape '" + text + "': '" + item +
                            "' is not an integer (expected comma-separated dims, e.g. 4,4,4)");
    }
    dims.push_back(v);
    io::check_dataset_rank(dims.size(), "--shape '" + text + "'");
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return dims;
}

}  // namespace app
}  // namespace shardops
