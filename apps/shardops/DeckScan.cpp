#include "DeckScan.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/node/detail/node.h>
#include <yaml-cpp/node/detail/node_data.h>
#include <yaml-cpp/node/detail/node_ref.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/core/MemoryBudget.hpp"

#include "DeckLiteral.hpp"

namespace shardops {
namespace app {

namespace {

/// One open mapping or sequence.
struct Frame {
  bool is_map = false;
  YAML::anchor_t anchor = YAML::NullAnchor;
  std::uint64_t expanded = 1;  ///< the container itself and everything in it so far
  bool expect_key = true;      ///< mappings: the next complete node is a key
  std::map<std::string, int> keys;
};

/// What reading a deck of \p nodes YAML nodes and \p values values costs: yaml-cpp's
/// tree and the values read from it live at the same time (saturates at the maximum).
std::uint64_t deck_bytes(std::uint64_t nodes, std::uint64_t values, const DeckScanLimits& limits) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t tree = limits.tree_node_bytes, value = limits.value_bytes;
  if ((tree && nodes > kMax / 2 / tree) || (value && values > kMax / 2 / value)) return kMax;
  return nodes * tree + values * value;
}

/// check_allocation of a deck's cost, refused with "PATH[:LINE]: ...".
void check_deck_bytes(std::uint64_t bytes, const std::string& where, const std::string& what) {
  try {
    check_allocation(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, std::numeric_limits<std::size_t>::max())),
                     what);
  } catch (const Error& e) {
    throw InvalidArgument(where + ": " + e.what());
  }
}

class Scanner : public YAML::EventHandler {
 public:
  Scanner(std::string path, const DeckScanLimits& limits) : path_(std::move(path)), limits_(limits) {
    const MemoryBudget budget = memory_budget();
    const std::uint64_t held = memory_held();
    left_ = budget.bytes > held ? budget.bytes - held : 0;
  }

  DeckScan result() const { return {nodes_, expanded_}; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp's tree holds the first document only: the rest of the file would go unread.
    if (++documents_ > 1) fail(mark, "a second YAML document ('---'); a deck is one document");
  }
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, "~"); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_scalar_tag(mark, tag);
    leaf(mark, anchor, value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto scalar = anchor_scalars_.find(anchor);
    const auto it = anchor_sizes_.find(anchor);
    const std::uint64_t size = it == anchor_sizes_.end() ? 1 : it->second;
    expanded_ += size;
    ++nodes_;
    const std::uint64_t bytes = deck_bytes(nodes_, expanded_, limits_);
    if (bytes > left_) {  // only then is the message worth making
      const std::string name = anchor_names_.count(anchor) ? anchor_names_[anchor] : std::to_string(anchor);
      check_deck_bytes(bytes, path_ + ":" + std::to_string(mark.line + 1),
                       "with this use of alias *" + name + " (" + std::to_string(size) + " values) the deck's " +
                           std::to_string(expanded_) + " values");
    }
    // An alias of a scalar is that scalar: as a key it is compared as one.
    add_to_parent(mark, size, scalar == anchor_scalars_.end() ? nullptr : &scalar->second);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_container_tag(mark, tag, false);
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_container_tag(mark, tag, true);
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const {
    throw InvalidArgument(path_ + ":" + std::to_string(mark.line + 1) + ": " + message);
  }

  // Tags say what a scalar is (DeckLiteral.hpp); a list or a mapping takes none but its own
  // (!!seq, !!map), which the reader would otherwise drop without a word.
  void check_container_tag(const YAML::Mark& mark, const std::string& tag, bool is_map) const {
    if (tag.empty() || tag == "?" || tag == "!" || shown_tag(tag) == (is_map ? "!!map" : "!!seq")) return;
    fail(mark, "the tag '" + shown_tag(tag) + "' on a " + (is_map ? "mapping" : "list") +
                   ": only single values take tags (!!str, !!int, !!float, !!bool)");
  }

  // A scalar's tag is one of those a deck reads (DeckLiteral.hpp), wherever the scalar is:
  // whether the value matches it is the reader's to say.
  void check_scalar_tag(const YAML::Mark& mark, const std::string& tag) const {
    if (!known_scalar_tag(tag)) fail(mark, unknown_tag_text(tag));
  }

  void remember_anchor(YAML::anchor_t anchor, std::uint64_t size) {
    if (anchor == YAML::NullAnchor) return;
    anchor_sizes_[anchor] = size;
    if (!pending_name_.empty()) anchor_names_[anchor] = pending_name_;
    pending_name_.clear();
  }

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& text) {
    ++nodes_;
    ++expanded_;
    remember_anchor(anchor, 1);
    if (anchor != YAML::NullAnchor) anchor_scalars_[anchor] = text;
    add_to_parent(mark, 1, &text);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      fail(mark, "nested more than " + std::to_string(limits_.max_depth) +
                     " levels deep (a deck's tensor value has at most as many dimensions as HDF5 can store)");
    }
    ++nodes_;
    ++expanded_;
    // The anchor's name arrives before the container's first event; keep it for close().
    if (anchor != YAML::NullAnchor && !pending_name_.empty()) anchor_names_[anchor] = pending_name_;
    pending_name_.clear();
    Frame f;
    f.is_map = is_map;
    f.anchor = anchor;
    frames_.push_back(std::move(f));
    marks_.push_back(mark);
  }

  void close() {
    const Frame done = std::move(frames_.back());
    const YAML::Mark mark = marks_.back();
    frames_.pop_back();
    marks_.pop_back();
    if (done.anchor != YAML::NullAnchor) anchor_sizes_[done.anchor] = done.expanded;
    add_to_parent(mark, done.expanded, nullptr);
  }

  /// A complete node of \p size (aliases expanded) inside the open container; \p key_text:
  /// its text when it is a scalar (a mapping's keys are compared by it).
  void add_to_parent(const YAML::Mark& mark, std::uint64_t size, const std::string* key_text) {
    if (frames_.empty()) return;
    Frame& parent = frames_.back();
    parent.expanded += size;
    if (!parent.is_map) return;
    if (parent.expect_key && key_text != nullptr) {
      const int line = mark.line + 1;
      const auto [it, fresh] = parent.keys.emplace(*key_text, line);
      if (!fresh) {
        fail(mark, "duplicate key '" + *key_text + "' (first at line " + std::to_string(it->second) +
                       "); each key may appear once in a mapping");
      }
    }
    parent.expect_key = !parent.expect_key;
  }

  std::string path_;
  DeckScanLimits limits_;
  std::uint64_t left_ = 0;  ///< bytes of the budget not held yet
  std::uint64_t nodes_ = 0, expanded_ = 0;
  int documents_ = 0;
  std::vector<Frame> frames_;
  std::vector<YAML::Mark> marks_;
  std::map<YAML::anchor_t, std::uint64_t> anchor_sizes_;
  std::map<YAML::anchor_t, std::string> anchor_names_;
  std::map<YAML::anchor_t, std::string> anchor_scalars_;  ///< the text of the scalars with anchors
  std::string pending_name_;
};

}  // namespace

std::size_t yaml_tree_node_bytes() {
  // A node, its node_ref and node_data, each behind a shared_ptr (a control block
  // each), and the entry of the document's memory set that keeps the node alive: seven
  // heap blocks, each with malloc's header; and its pointer in its parent's sequence,
  // twice while that vector grows.
  constexpr std::size_t kControlBlock = 2 * sizeof(long) + sizeof(void*);
  constexpr std::size_t kSetEntry = 4 * sizeof(void*) + sizeof(std::shared_ptr<YAML::detail::node>);
  constexpr std::size_t kBlocks = 7;
  constexpr std::size_t kMallocHeader = alignof(std::max_align_t);
  return sizeof(YAML::detail::node) + sizeof(YAML::detail::node_ref) + sizeof(YAML::detail::node_data) +
         3 * kControlBlock + kSetEntry + kBlocks * kMallocHeader + 2 * sizeof(void*);
}

DeckScan scan_deck(const std::string& text, const std::string& path, const DeckScanLimits& limits) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  Scanner scanner(path, limits);
  parser.HandleNextDocument(scanner);
  parser.HandleNextDocument(scanner);  // refuses a second document
  const DeckScan scan = scanner.result();
  check_deck_bytes(deck_bytes(scan.nodes, scan.expanded, limits), path,
                   "reading its " + std::to_string(scan.nodes) + " YAML nodes (" + std::to_string(scan.expanded) +
                       " values with aliases expanded)");
  return scan;
}

}  // namespace app
}  // namespace shardops
