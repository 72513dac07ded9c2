#pragma once
/// \file
/// \brief Turning an error into the one line rank 0 prints: the op's message (TF's
/// text), the dataset it is about and, for shape errors, every input's shape.

#include <string>
#include <utility>
#include <vector>

#include "shardops/core/Error.hpp"

namespace shardops {
namespace app {

/// \brief The inputs a command has read so far: the CLI option, the dataset, and a
/// description of its shape and dtype. Error messages name them.
struct InputList {
  struct Entry {
    std::string subject;    ///< "indices", "indices[1]", "data[0]", "partitions", ...
    std::string option;     ///< "--indices"
    std::string dataset;    ///< "FILE:/path"
    std::string described;  ///< "[3,2] int32" once read
  };
  std::vector<Entry> entries;
  void add(std::string subject, std::string option, std::string dataset) {
    entries.push_back(Entry{std::move(subject), std::move(option), std::move(dataset), {}});
  }
  void describe(const std::string& subject, const std::string& text);
};

/// "dynamic-stitch: indices[1] is out of range (in --indices f.h5:/i1 [4] int32)".
std::string format_error(const std::string& command, const Error& e, const InputList& inputs);

/// \brief \p message on one line: control characters (a newline or a tab in a dataset name
/// the user gave, or in text read from a file) written as C escapes (`\n`, `\t`, `\x01`),
/// so that an error is always the one line a script or a log filter takes it for. Other
/// bytes, UTF-8 included, are kept.
std::string one_line(const std::string& message);

}  // namespace app
}  // namespace shardops
