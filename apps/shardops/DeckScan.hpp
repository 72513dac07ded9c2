#pragma once
/// \file
/// \brief A pass over a deck's YAML events before any node tree is built: what
/// yaml-cpp's tree would hide or cost too much to find out from it.
///
/// - Duplicate keys: yaml-cpp keeps one of them silently; a deck with two entries for
///   one output or tensor is refused, naming both lines.
/// - Nesting deeper than \p max_depth: refused at the line where it goes too deep
///   (before yaml-cpp's own recursion gets far).
/// - Aliases: in the tree an alias is a shared node, but every use of a tensor value
///   becomes its own elements when the deck is read ("billion laughs": a few hundred
///   bytes of anchors that stand for 10^9 values). The values with every alias
///   expanded are counted from the anchors' sizes as the events arrive, and refused at
///   the alias that makes them more than this rank's memory budget holds.
/// - Size: the nodes of the tree yaml-cpp would build and the values read from it,
///   together, against the budget too.

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardops {
namespace app {

struct DeckScanLimits {
  int max_depth = 0;                ///< deepest nesting of mappings and sequences
  std::size_t tree_node_bytes = 0;  ///< what yaml-cpp's tree spends per node
  std::size_t value_bytes = 0;      ///< what one value costs once read (aliases expanded)
};

/// What the pass counted.
struct DeckScan {
  std::uint64_t nodes = 0;     ///< as written
  std::uint64_t expanded = 0;  ///< with every alias replaced by what it names
};

/// \brief Scans the YAML document of \p text (the deck \p path).
/// \throws InvalidArgument "PATH:LINE: ..." for the cases above and for a second
/// document; YAML::Exception for text that is not YAML.
DeckScan scan_deck(const std::string& text, const std::string& path, const DeckScanLimits& limits);

/// The bytes yaml-cpp's node tree spends on one node (its node, reference, data and
/// their shared owners), from the sizes of its types.
std::size_t yaml_tree_node_bytes();

}  // namespace app
}  // namespace shardops
