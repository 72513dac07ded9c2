#pragma once
/// \file
/// \brief The text of an output shape on the command line (scatter-nd --shape).

#include <cstdint>
#include <string>
#include <vector>

namespace shardops {
namespace app {

/// Parses "4,4,4" into dims (exact: no spaces, no empty items, integers only, at most
/// io::kMaxDatasetRank of them). \throws InvalidArgument naming the item that is wrong.
std::vector<std::int64_t> parse_shape(const std::string& text);

}  // namespace app
}  // namespace shardops
