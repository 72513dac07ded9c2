#include "shardops/hdf5/DatasetRef.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <utility>

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

namespace {

enum class Bound { Ok, NotAnInteger, BeyondInt64 };

// A bound of a slice: empty, or an optional '-' and decimal digits that fit int64.
Bound parse_bound(const std::string& text, std::optional<std::int64_t>& out) {
  if (text.empty()) return Bound::Ok;
  std::size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return Bound::NotAnInteger;
  for (std::size_t k = i; k < text.size(); ++k)
    if (text[k] < '0' || text[k] > '9') return Bound::NotAnInteger;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE) return Bound::BeyondInt64;
  if (*end != '\0') return Bound::NotAnInteger;
  out = v;
  return Bound::Ok;
}

struct Slice {
  std::optional<std::int64_t> start, stop;
};

// "[start:stop]" without the brackets.
Slice parse_slice(const std::string& name, const std::string& inside) {
  if (inside.find(',') != std::string::npos)
    malformed(name, "only rows of axis 0 can be selected ('[start:stop]'), not '[" + inside + "]'");
  const std::size_t colon = inside.find(':');
  if (colon == std::string::npos)
    malformed(name, "'[" + inside + "]' is not a slice: write [start:stop] (one row: [i:i+1])");
  if (inside.find(':', colon + 1) != std::string::npos)
    malformed(name, "'[" + inside + "]' has a step; slices with a step are not supported");
  Slice s;
  const std::string a = inside.substr(0, colon), b = inside.substr(colon + 1);
  for (const auto& [text, bound] : {std::pair{a, &s.start}, std::pair{b, &s.stop}}) {
    switch (parse_bound(text, *bound)) {
      case Bound::Ok: break;
      case Bound::NotAnInteger: malformed(name, "'[" + inside + "]': the bounds must be integers (or left out)");
      case Bound::BeyondInt64:
        malformed(name, "'[" + inside + "]': the bound " + text + " lies beyond the 64-bit integers");
    }
  }
  return s;
}

}  // namespace

RowRange resolve_rows(const DatasetRef& ref, std::int64_t rows) {
  if (ref.rows.empty()) return {0, rows};
  const Slice s = parse_slice(ref.str(), ref.rows.substr(1, ref.rows.size() - 2));
  const auto place = [&](std::optional<std::int64_t> bound, std::int64_t fallback) {
    if (!bound) return fallback;
    const std::int64_t b = *bound;
    if (b < -rows || b > rows) {
      throw InvalidArgument(ref.str() + ": the row bound " + std::to_string(b) + " lies outside the " +
                            std::to_string(rows) + " rows of the dataset (bounds from " + std::to_string(-rows) +
                            " to " + std::to_string(rows) + ")");
    }
    return b < 0 ? b + rows : b;
  };
  const std::int64_t first = place(s.start, 0), stop = place(s.stop, rows);
  return {first, std::max<std::int64_t>(0, stop - first)};
}

DatasetRef parse_dataset_ref(const std::string& name) {
  const std::size_t split = name.rfind(":/");
  if (split == std::string::npos) malformed(name, "no ':/' between the file and the dataset path");
  DatasetRef ref{name.substr(0, split), name.substr(split + 1)};
  if (!ref.path.empty() && ref.path.back() == ']') {
    const std::size_t open = ref.path.rfind('[');
    if (open == std::string::npos) malformed(name, "a ']' without '['");
    ref.rows = ref.path.substr(open);
    ref.path = ref.path.substr(0, open);
    parse_slice(name, ref.rows.substr(1, ref.rows.size() - 2));
  }
  if (ref.file.empty()) malformed(name, "the file name is empty");
  if (ref.path == "/") malformed(name, "'/' is the root group, not a dataset");
  for (const std::string& part : path_components(ref.path)) {
    if (part.empty()) malformed(name, "the dataset path '" + ref.path + "' has an empty component");
    if (part == "." || part == "..") malformed(name, "the dataset path '" + ref.path + "' contains '" + part + "'");
  }
  return ref;
}

}  // namespace shardops::io
