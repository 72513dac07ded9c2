#include "shardops/io/DatasetRef.hpp"

#include "shardops/core/Error.hpp"

namespace shardops::io {

namespace {
[[noreturn]] void malformed(const std::string& name, const std::string& why) {
  throw InvalidArgument("malformed dataset name '" + name + "': " + why +
                        " (expected FILE:/path/to/dataset, e.g. data.h5:/group/x)");
}
}  // namespace

std::vector<std::string> path_components(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t begin = path.empty() || path[0] != '/' ? 0 : 1;
  while (begin <= path.size()) {
    const std::size_t end = path.find('/', begin);
    const std::size_t stop = end == std::string::npos ? path.size() : end;
    parts.push_back(path.substr(begin, stop - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return parts;
}

DatasetRef parse_dataset_ref(const std::string& name) {
  const std::size_t split = name.rfind(":/");
  if (split == std::string::npos) malformed(name, "no ':/' between the file and the dataset path");
  DatasetRef ref{name.substr(0, split), name.substr(split + 1)};
  if (ref.file.empty()) malformed(name, "the file name is empty");
  if (ref.path == "/") malformed(name, "'/' is the root group, not a dataset");
  for (const std::string& part : path_components(ref.path)) {
    if (part.empty()) malformed(name, "the dataset path '" + ref.path + "' has an empty component");
    if (part == "." || part == "..") malformed(name, "the dataset path '" + ref.path + "' contains '" + part + "'");
  }
  return ref;
}

}  // namespace shardops::io
