#include "Deck.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <type_traits>

#include "DeckLiteral.hpp"
#include "DeckScan.hpp"
#include "InlineValue.hpp"
#include "ShapeText.hpp"
#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {
namespace app {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string trimmed(const std::string& t) {
  const std::size_t first = t.find_first_not_of(" \t");
  return first == std::string::npos ? "" : t.substr(first, t.find_last_not_of(" \t") - first + 1);
}

// A deck's tensor value has at most as many dimensions as HDF5 can write; the YAML
// around it (deck, tensors, the tensor's mapping, its value) adds four levels.
constexpr int kMaxValueRank = io::kMaxDatasetRank;
constexpr int kMaxDeckDepth = kMaxValueRank + 4;

// What one inline value costs once read: its number and text forms (DeckInput), twice
// (a vector's old and new storage are both alive while it grows), and its element in
// the tensor (at most a complex128).
constexpr std::size_t kInlineValueBytes = 2 * (sizeof(double) + sizeof(std::int64_t) + sizeof(std::string)) + 16;

std::string read_deck_file(const std::string& path) {
  // A pipe would block the open, a device read without end: a deck is a file.
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InvalidArgument(path + ": not a regular file (a deck is a YAML file)");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InvalidArgument(path + ": cannot read the deck file");
  const std::streamoff size = in.tellg();
  if (size > 0) check_allocation(static_cast<std::size_t>(size), path + ": reading the deck file");
  in.seekg(0);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidArgument(path + ": cannot read the deck file");
  return text.str();
}

class Loader {
 public:
  Loader(std::string path, const std::vector<std::string>& overrides) : path_(std::move(path)) {
    const std::size_t slash = path_.find_last_of('/');
    dir_ = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
    overrides_ = overrides;
  }

  Deck load(const std::string& text) {
    check_characters(text);
    YAML::Node root;
    try {
      // Duplicate keys, depth and alias expansion first: the tree would hide them.
      scan_deck(text, path_, DeckScanLimits{kMaxDeckDepth, yaml_tree_node_bytes(), kInlineValueBytes});
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InvalidArgument(path_ + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    if (!root.IsMap()) fail(root, "a deck is a mapping with keys params, tensors, steps, outputs, options");
    check_keys(root, {"description", "params", "tensors", "steps", "outputs", "options"}, "the deck");
    Deck deck;
    deck.path = path_;
    if (root["description"]) deck.description = scalar(root["description"], "description");
    deck.set = load_params(root["params"]);
    load_inputs(root["tensors"], deck);
    if (!root["steps"] || !root["steps"].IsSequence() || root["steps"].size() == 0) {
      fail(root["steps"] ? root["steps"] : root, "'steps' must be a non-empty list of steps");
    }
    int index = 0;
    for (const YAML::Node& step : root["steps"]) deck.steps.push_back(load_step(step, ++index));
    load_outputs(root["outputs"], deck);
    if (const YAML::Node options = root["options"]) {
      if (!options.IsMap()) fail(options, "'options' must be a mapping");
      check_keys(options, {"bad_indices", "schedule"}, "options");
      if (options["bad_indices"]) {
        deck.bad_indices = scalar(options["bad_indices"], "bad_indices");
        try {
          bad_indices_from_string(deck.bad_indices);
        } catch (const Error& e) {
          fail(options["bad_indices"], e.what());
        }
      }
      if (options["schedule"]) {
        deck.schedule = scalar(options["schedule"], "schedule");
        if (deck.schedule != "auto" && deck.schedule != "sequential" && deck.schedule != "parallel")
          fail(options["schedule"], "'schedule' must be auto, sequential or parallel, got '" + deck.schedule + "'");
      }
    }
    return deck;
  }

 private:
  // YAML is text: a control character other than a tab or a line break (a NUL from a
  // binary file, say) is refused by name and position, where yaml-cpp's message would
  // be about something else.
  void check_characters(const std::string& text) const {
    std::size_t line = 1, column = 1;
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if ((byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned>(byte));
        throw InvalidArgument(path_ + ":" + std::to_string(line) + ": column " + std::to_string(column) +
                              ": the control character " + code + " (a deck is YAML text)");
      }
      if (c == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    fail_at(node.IsDefined() ? node.Mark().line + 1 : 0, message);
  }

  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw InvalidArgument(path_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + step_ + message);
  }

  // A mapping's key as text: decks only use plain names as keys.
  std::string key_text(const YAML::Node& key) const {
    if (!key.IsScalar()) fail(key, "a key must be a plain name, not a list or a mapping");
    return key.Scalar();
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& what) const {
    for (const auto& kv : map) {
      const std::string key = key_text(kv.first);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(kv.first, "unknown key '" + key + "' in " + what + " (allowed: " + join(allowed) + ")");
      }
    }
  }

  std::string substitute(const YAML::Node& node, std::string text) const {
    std::size_t pos = 0;
    while ((pos = text.find("${", pos)) != std::string::npos) {
      const std::size_t end = text.find('}', pos);
      if (end == std::string::npos) fail(node, "unclosed ${ in '" + text + "'");
      const std::string name = text.substr(pos + 2, end - pos - 2);
      const auto it = params_.find(name);
      if (it == params_.end()) fail(node, "unknown parameter ${" + name + "} (declare it under params)");
      text.replace(pos, end - pos + 1, it->second);
      pos += it->second.size();
    }
    return text;
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, "'" + what + "' must be a single value");
    return substitute(node, node.Scalar());
  }

  // A setting's scalar: quoted reads as written plainly ('${rows}' has to be quoted in a
  // flow mapping); only an explicit tag (!!str, ...) says otherwise.
  static std::string explicit_tag(const YAML::Node& node) {
    return node.Tag() == "!" || node.Tag() == "?" ? "" : node.Tag();
  }

  // What \p node's scalar reads as (see Literal).
  Literal literal(const YAML::Node& node, const std::string& what) const {
    const std::string text = scalar(node, what);
    try {
      return read_literal(text, explicit_tag(node));
    } catch (const Error& e) {
      fail(node, "'" + what + "': " + e.what());
    }
  }

  std::string dataset(const YAML::Node& node, const std::string& what) const {
    std::string text = scalar(node, what);
    try {
      io::DatasetRef ref = io::parse_dataset_ref(text);
      if (!ref.file.empty() && ref.file[0] != '/') ref.file = dir_ + ref.file;  // relative to the deck
      return ref.str();
    } catch (const Error& e) {
      fail(node, e.what());
    }
  }

  // The overrides as applied ("name=value", spaces dropped), for the outputs' provenance.
  std::vector<std::string> load_params(const YAML::Node& params) {
    if (params) {
      if (!params.IsMap()) fail(params, "'params' must be a mapping of names to values");
      for (const auto& kv : params) params_[key_text(kv.first)] = scalar(kv.second, key_text(kv.first));
    }
    std::set<std::string> set;
    std::vector<std::string> applied;
    for (const std::string& o : overrides_) {
      const std::size_t eq = o.find('=');
      // Spaces around the name and the value are the shell's, not the deck's.
      const std::string name = trimmed(o.substr(0, eq));
      if (eq == std::string::npos || name.empty()) throw InvalidArgument("--set '" + o + "': expected NAME=VALUE");
      if (!params_.count(name)) throw InvalidArgument("--set " + name + ": the deck has no parameter '" + name + "'");
      if (!set.insert(name).second) throw InvalidArgument("--set " + name + ": given twice (set each parameter once)");
      params_[name] = trimmed(o.substr(eq + 1));
      applied.push_back(name + "=" + params_[name]);
    }
    return applied;
  }

  void define(const std::string& name, const YAML::Node& node) {
    if (name.empty()) fail(node, "a tensor name must not be empty");
    // range's limit takes a number or a tensor's name: a name that reads as a number
    // would make `limit: 5` mean either.
    const Literal lit = read_literal(name, "");
    if (lit.kind == Literal::Integer || lit.kind == Literal::Real)
      fail(node, "tensor name '" + name + "' reads as a number; give the tensor a name that does not");
    defined_.insert(name);
  }

  void load_inputs(const YAML::Node& tensors, Deck& deck) {
    if (!tensors) return;
    if (!tensors.IsMap())
      fail(tensors, "'tensors' must map names to datasets (FILE:/path) or {value: ..., dtype: ...}");
    for (const auto& kv : tensors) {
      DeckInput in;
      in.name = key_text(kv.first);
      in.line = kv.first.Mark().line + 1;
      const YAML::Node spec = kv.second;
      if (spec.IsScalar()) {
        in.dataset = dataset(spec, in.name);
      } else if (spec.IsMap()) {
        check_keys(spec, {"dataset", "value", "dtype"}, "tensor '" + in.name + "'");
        if (spec["dataset"] && spec["value"]) fail(spec, "tensor '" + in.name + "': give either dataset or value");
        if (spec["dataset"]) {
          if (spec["dtype"]) {
            fail(spec["dtype"], "tensor '" + in.name +
                                    "': a dataset keeps its own dtype ('dtype' is for inline values; a cast step "
                                    "converts)");
          }
          in.dataset = dataset(spec["dataset"], "dataset");
        } else if (spec["value"]) {
          type_value(spec, load_value(spec["value"], in), in);
        } else {
          fail(spec, "tensor '" + in.name + "' needs a dataset or a value");
        }
      } else {
        fail(spec, "tensor '" + in.name + "' must be FILE:/path or {value: ..., dtype: ...}");
      }
      define(in.name, kv.first);
      deck.inputs.push_back(in);
    }
  }

  // Nested sequences -> shape + values: rectangular, every element at the same depth.
  std::vector<InlineElement> load_value(const YAML::Node& value, DeckInput& in) const {
    std::vector<InlineElement> elements;
    std::vector<std::int64_t> shape;
    std::size_t element_depth = 0;  // where the elements are, once one is seen (0: none yet)
    std::function<void(const YAML::Node&, std::size_t)> walk = [&](const YAML::Node& n, std::size_t depth) {
      if (n.IsSequence()) {
        if (element_depth > 0 && depth + 1 >= element_depth)
          fail(n, "tensor '" + in.name + "': value is not rectangular");
        if (depth == shape.size()) {
          if (shape.size() == static_cast<std::size_t>(kMaxValueRank)) {
            fail(n, "tensor '" + in.name + "': value has more than " + std::to_string(kMaxValueRank) +
                        " dimensions (HDF5 datasets have at most " + std::to_string(kMaxValueRank) + ")");
          }
          shape.push_back(static_cast<std::int64_t>(n.size()));
        } else if (depth > shape.size() || shape[depth] != static_cast<std::int64_t>(n.size())) {
          fail(n, "tensor '" + in.name + "': value is not rectangular");
        }
        for (const YAML::Node& c : n) walk(c, depth + 1);
        return;
      }
      if (!n.IsScalar() || depth != shape.size()) fail(n, "tensor '" + in.name + "': value is not rectangular");
      element_depth = depth + 1;
      elements.push_back(read_element(n, in));
    };
    walk(value, 0);
    in.shape = shape;
    return elements;
  }

  // One element of an inline value, as its text reads.
  InlineElement read_element(const YAML::Node& n, const DeckInput& in) const {
    InlineElement e;
    e.text = substitute(n, n.Scalar());
    e.line = n.Mark().line + 1;
    try {
      e.literal = read_literal(e.text, n.Tag());  // quoted: always text ("1" is the string 1)
    } catch (const Error& err) {
      fail(n, "tensor '" + in.name + "': " + err.what());
    }
    return e;
  }

  // The value's dtype and elements: the dtype given, else TF's inference, each as
  // tf.constant(value, dtype) makes it (see InlineValue.hpp).
  void type_value(const YAML::Node& spec, const std::vector<InlineElement>& elements, DeckInput& in) const {
    const std::string name = "tensor '" + in.name + "': ";
    std::optional<DType> wanted;
    if (const YAML::Node given = spec["dtype"]) {
      const std::string text = scalar(given, "dtype");
      try {
        wanted = dtype_from_name(text);
      } catch (const Error& e) {
        fail(given, e.what());
      }
      const auto text_element = [](const InlineElement& e) { return e.literal.kind == Literal::Text; };
      if (!elements.empty() && is_string(*wanted) != text_element(elements.front())) {
        fail(given, name + "dtype " + dtype_name(*wanted) + " for " +
                        (text_element(elements.front()) ? "string" : "numeric") + " values");
      }
    }
    try {
      InlineValue value = convert_inline_value(elements, wanted);
      in.dtype = value.dtype;
      in.int_values = std::move(value.ints);
      in.real_values = std::move(value.reals);
      in.string_values = std::move(value.strings);
    } catch (const InlineValueError& e) {
      fail_at(e.line, name + e.message);
    }
  }

  // "name/*" -> the defined names name/0, name/1, ... in order.
  std::vector<std::string> expand(const YAML::Node& node, const std::string& item) const {
    if (item.size() < 2 || item.compare(item.size() - 2, 2, "/*") != 0) return {item};
    const std::string prefix = item.substr(0, item.size() - 1);
    std::vector<std::string> out;
    for (int k = 0;; ++k) {
      const std::string name = prefix + std::to_string(k);
      if (!defined_.count(name)) break;
      out.push_back(name);
    }
    if (out.empty()) fail(node, "'" + item + "' matches no tensor (" + prefix + "0 is not defined before this step)");
    return out;
  }

  void require_defined(const YAML::Node& node, const std::string& name) const {
    if (defined_.count(name)) return;
    fail(node, "tensor '" + name + "' is not defined before this step (steps run in order; inputs go under 'tensors')");
  }

  DeckStep load_step(const YAML::Node& node, int index) {
    DeckStep step;
    step.index = index;
    step.line = node.Mark().line + 1;
    if (!node.IsMap() || !node["op"]) fail(node, "step " + std::to_string(index) + " must be a mapping with an 'op'");
    step.op = scalar(node["op"], "op");
    step.where = path_ + ":" + std::to_string(step.line) + ": step " + std::to_string(index) + " (" + step.op + ")";
    const OpInfo* spec = find_op(step.op);
    if (spec == nullptr)
      fail(node["op"], "step " + std::to_string(index) + ": unknown op '" + step.op + "' (known: " + op_names() + ")");
    // Every message from here on names the step.
    step_ = "step " + std::to_string(index) + " (" + step.op + "): ";
    load_step_keys(node, *spec, step);
    load_step_inputs(node, *spec, step);
    load_step_outputs(node, *spec, step);
    check_literal_types(*spec, step);
    step_.clear();
    return step;
  }

  // Tensor keys name one tensor, list keys several ("name/*" expands to a partition's
  // outputs); attributes are literals (range's limit may name a tensor: its rows).
  void load_step_keys(const YAML::Node& node, const OpInfo& spec, DeckStep& step) const {
    std::vector<std::string> allowed{"op", "out"};
    for (const OpInput& in : spec.inputs) allowed.push_back(in.name);
    for (const OpAttr& a : spec.attrs) allowed.push_back(a.name);
    check_keys(node, allowed, "the step");
    for (const std::string& key : allowed) {
      const OpAttr* a = spec.attr(key);
      if (key == "op" || (a && !a->required)) continue;
      if (!node[key]) fail(node, "missing '" + key + "'");
    }
    for (const auto& kv : node) {
      const std::string key = key_text(kv.first);
      if (key == "op") continue;
      DeckValue v;
      v.line = kv.second.Mark().line + 1;
      if (kv.second.IsSequence()) {
        v.is_list = true;
        for (const YAML::Node& item : kv.second) v.list.push_back(scalar(item, key));
      } else {
        v.text = scalar(kv.second, key);
        v.tag = explicit_tag(kv.second);
      }
      step.args[key] = v;
    }
  }

  void load_step_inputs(const YAML::Node& node, const OpInfo& spec, DeckStep& step) const {
    for (const OpInput& in : spec.inputs) {
      const std::string& key = in.name;
      if (!node[key]) continue;
      DeckValue& v = step.args[key];
      if (!in.is_list) {
        if (v.is_list) fail(node[key], "'" + key + "' names one tensor");
        require_defined(node[key], v.text);
        step.inputs.push_back(v.text);
        continue;
      }
      if (!v.is_list) v = DeckValue{{}, {v.text}, true, v.line, {}};
      std::vector<std::string> names;
      for (const std::string& item : v.list) {
        for (const std::string& n : expand(node[key], item)) {
          require_defined(node[key], n);
          names.push_back(n);
        }
      }
      v.list = names;
      step.inputs.insert(step.inputs.end(), names.begin(), names.end());
    }
    for (const OpAttr& a : spec.attrs) {
      if (a.kind != AttrKind::IntOrTensor || !node[a.name]) continue;
      const DeckValue& v = step.args[a.name];
      if (v.is_list) fail(node[a.name], "'" + a.name + "' must be an integer or a tensor's name");
      try {
        if (read_literal(v.text, v.tag).kind != Literal::Text) continue;  // a number: checked with the literals
      } catch (const Error& e) {
        fail(node[a.name], "'" + a.name + "': " + e.what());
      }
      require_defined(node[a.name], v.text);  // a tensor: its number of rows
      step.inputs.push_back(v.text);
    }
  }

  // One name, or (dynamic_partition) a list of N names or a prefix p for p/0 .. p/N-1.
  void load_step_outputs(const YAML::Node& node, const OpInfo& spec, DeckStep& step) {
    const DeckValue& out = step.args["out"];
    if (!spec.output_per_partition) {
      if (out.is_list) fail(node["out"], "'out' names one tensor");
      step.outputs.push_back(out.text);
    } else {
      const std::int64_t n = deck_int(step, "num_partitions");
      if (out.is_list) {
        if (static_cast<std::int64_t>(out.list.size()) != n) {
          fail(node["out"],
               "'out' lists " + std::to_string(out.list.size()) + " names for " + std::to_string(n) + " partitions");
        }
        std::set<std::string> seen;
        for (const std::string& name : out.list) {
          if (!seen.insert(name).second) fail(node["out"], "'out' lists '" + name + "' twice");
        }
        step.outputs = out.list;
      } else {
        try {  // bounded before the names are made: TF's bound, then the memory's
          check_num_partitions(n);
          check_count(n, sizeof(std::string) + out.text.size() + 12,
                      "num_partitions " + std::to_string(n) + ": the names of its outputs");
        } catch (const Error& e) {
          fail(node["num_partitions"], e.what());
        }
        for (std::int64_t p = 0; p < n; ++p) step.outputs.push_back(out.text + "/" + std::to_string(p));
        // An earlier, longer list p/0 .. p/M-1 ends here: "p/*" means these N.
        for (std::int64_t p = n; defined_.erase(out.text + "/" + std::to_string(p)) > 0; ++p)
          step.dropped.push_back(out.text + "/" + std::to_string(p));
      }
    }
    for (const std::string& name : step.outputs) define(name, node["out"]);
  }

  // Literal keys are checked now, so a typo fails before any work starts.
  static void check_literal_types(const OpInfo& op, const DeckStep& step) {
    for (const auto& kv : step.args) {
      const std::string& key = kv.first;
      const OpAttr* a = op.attr(key);
      if (a == nullptr) continue;
      switch (a->kind) {
        case AttrKind::Int: deck_int(step, key); break;
        case AttrKind::Shape:
          io::check_dataset_rank(deck_int_list(step, key).size(), step.where + ": '" + key + "'");
          break;
        case AttrKind::Number: {
          // An integer beyond int64 is a number for a uint64 tensor alone: checked when the
          // step runs, once the tensor's dtype is known (deck_scalar_as).
          bool for_uint64 = false;
          try {
            for_uint64 = !kv.second.is_list && beyond_int64(read_literal(kv.second.text, kv.second.tag));
          } catch (const Error&) {  // deck_scalar says what is wrong with it
          }
          if (!for_uint64) deck_scalar(step, key, Scalar(), true);
          break;
        }
        case AttrKind::IntOrTensor:  // a tensor's name is checked with the inputs
          if (read_literal(kv.second.text, kv.second.tag).kind != Literal::Text) deck_int(step, key);
          break;
        case AttrKind::DType: {
          DType dtype = DType::Float32;
          try {
            dtype = dtype_from_name(kv.second.text);
          } catch (const Error& e) {
            throw InvalidArgument(step.where + ": " + e.what());
          }
          if (is_string(dtype)) throw InvalidArgument(step.where + ": " + step.op + " makes numbers, not strings");
          break;
        }
      }
    }
  }

  void load_outputs(const YAML::Node& outputs, Deck& deck) {
    if (!outputs || !outputs.IsMap() || outputs.size() == 0) {
      fail(outputs ? outputs : YAML::Node(), "'outputs' must map tensor names to datasets (FILE:/path)");
    }
    for (const auto& kv : outputs) {
      DeckOutput o;
      o.name = key_text(kv.first);
      o.line = kv.first.Mark().line + 1;
      if (!defined_.count(o.name)) fail(kv.first, "output '" + o.name + "' is not a tensor of the deck");
      if (kv.second.IsMap()) {
        // {dataset: F:/p, compression: gzip=4, shuffle: true, chunk_rows: N}: this output's storage.
        check_keys(kv.second, {"dataset", "compression", "shuffle", "chunk_rows"}, "output '" + o.name + "'");
        if (!kv.second["dataset"]) fail(kv.second, "output '" + o.name + "' needs a dataset (FILE:/path)");
        o.dataset = dataset(kv.second["dataset"], o.name);
        o.storage_given = true;
        if (kv.second["compression"]) {
          // scalar() names the deck line itself; parse_compression's text gets it here.
          const std::string compression = scalar(kv.second["compression"], "compression");
          try {
            io::parse_compression(compression, o.storage);
          } catch (const Error& e) {
            fail(kv.second["compression"], e.what());
          }
        }
        if (kv.second["shuffle"]) {
          const Literal shuffle = literal(kv.second["shuffle"], "shuffle");
          if (shuffle.kind != Literal::Bool) fail(kv.second["shuffle"], "'shuffle' must be true or false");
          o.storage.shuffle = shuffle.i != 0;
        }
        if (kv.second["chunk_rows"]) {
          const Literal rows = literal(kv.second["chunk_rows"], "chunk_rows");
          if (rows.kind != Literal::Integer || rows.range != Literal::Int64 || rows.i < 1)
            fail(kv.second["chunk_rows"], "'chunk_rows' must be a whole number >= 1");
          o.storage.chunk_rows = rows.i;
        }
      } else {
        o.dataset = dataset(kv.second, o.name);
      }
      deck.outputs.push_back(o);
    }
  }

  std::string path_, dir_;
  std::string step_;  ///< "step 3 (scatter_nd): " while a step is read
  std::vector<std::string> overrides_;
  std::map<std::string, std::string> params_;
  std::set<std::string> defined_;
};

const DeckValue& arg(const DeckStep& step, const std::string& key) {
  const auto it = step.args.find(key);
  if (it == step.args.end()) throw InvalidArgument(step.where + ": missing '" + key + "'");
  return it->second;
}

}  // namespace

Deck load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  return load_deck_text(read_deck_file(path), path, overrides);
}

Deck load_deck_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  try {
    return Loader(path, overrides).load(text);
  } catch (const YAML::Exception& e) {  // a node used as what it is not, if a check above missed one
    throw InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

namespace {

// A key's value as written: "[1, 2]" for a list.
std::string shown(const DeckValue& v) {
  if (!v.is_list) return v.text;
  std::string out;
  for (const std::string& item : v.list) out += (out.empty() ? "" : ", ") + item;
  return "[" + out + "]";
}

Literal step_literal(const DeckStep& step, const std::string& key) {
  const DeckValue& v = arg(step, key);
  if (v.is_list) return Literal();
  try {
    return read_literal(v.text, v.tag);
  } catch (const Error& e) {
    throw InvalidArgument(step.where + ": '" + key + "': " + e.what());
  }
}

}  // namespace

std::int64_t deck_int(const DeckStep& step, const std::string& key) {
  const Literal lit = step_literal(step, key);
  if (lit.kind != Literal::Integer || lit.range != Literal::Int64) {
    throw InvalidArgument(step.where + ": '" + key + "' must be an integer" +
                          (lit.kind == Literal::Integer ? " that int64 holds" : "") + ", got '" +
                          shown(arg(step, key)) + "'");
  }
  return lit.i;
}

std::int64_t deck_int_or(const DeckStep& step, const std::string& key, std::int64_t fallback) {
  return step.args.count(key) ? deck_int(step, key) : fallback;
}

Scalar deck_scalar(const DeckStep& step, const std::string& key, const Scalar& fallback, bool required) {
  if (!step.args.count(key)) {
    if (required) throw InvalidArgument(step.where + ": missing '" + key + "'");
    return fallback;
  }
  const Literal lit = step_literal(step, key);
  if (lit.kind == Literal::Real) return Scalar::real(lit.f);
  if (lit.kind == Literal::Bool || (lit.kind == Literal::Integer && lit.range == Literal::Int64))
    return Scalar::integer(lit.i);
  throw InvalidArgument(step.where + ": '" + key + "' must be a number" +
                        (lit.kind == Literal::Integer ? " (an integer that int64 holds)" : "") + ", got '" +
                        shown(arg(step, key)) + "'");
}

Scalar deck_scalar_as(const DeckStep& step, const std::string& key, DType dtype, bool wrap) {
  // An integer beyond int64 that uint64 holds goes into a uint64 tensor, as TensorFlow
  // converts a Python number to the tensor's dtype (as its bits: Scalar holds an int64).
  if (step.args.count(key)) {
    const Literal lit = step_literal(step, key);
    if (beyond_int64(lit)) {
      if (dtype == DType::UInt64) return Scalar::integer(lit.i);
      throw InvalidArgument("'" + key + "': cannot convert " + arg(step, key).text + " to dtype " + dtype_name(dtype) +
                            " (an integer beyond int64 goes into uint64 alone)");
    }
  }
  const Scalar s = deck_scalar(step, key, Scalar(), true);
  const Literal::Kind kind = step_literal(step, key).kind;
  const DeckValue& v = arg(step, key);
  const std::string text = v.tag.empty() ? v.text : shown_tag(v.tag) + " " + v.text;
  const std::string where = "'" + key + "': ";
  // TensorFlow converts no real to an integer or bool dtype and no number to bool.
  if ((kind == Literal::Real && (is_integer(dtype) || dtype == DType::Bool)) ||
      (kind != Literal::Bool && dtype == DType::Bool)) {
    throw InvalidArgument(where + "cannot convert " + text + " to dtype " + dtype_name(dtype) +
                          (dtype == DType::Bool ? " (TensorFlow makes no bool of a number; write true or false)"
                                                : " (TensorFlow makes no integer of a real value)"));
  }
  if (!wrap && is_integer(dtype)) {
    dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral<T>::value) {
        if (static_cast<std::int64_t>(static_cast<T>(s.i)) != s.i || (s.i < 0 && std::is_unsigned<T>::value))
          throw InvalidArgument(where + text + " does not fit " + dtype_name(dtype));
      }
    });
  }
  return s;
}

std::vector<std::int64_t> deck_int_list(const DeckStep& step, const std::string& key) {
  const DeckValue& v = arg(step, key);
  if (!v.is_list) throw InvalidArgument(step.where + ": '" + key + "' must be a list of integers, e.g. [4, 4]");
  std::vector<std::int64_t> out;
  for (const std::string& t : v.list) {
    std::int64_t x = 0;
    if (!read_int64(t, "", x)) throw InvalidArgument(step.where + ": '" + key + "' item '" + t + "' is not an integer");
    out.push_back(x);
  }
  return out;
}

std::string deck_text_or(const DeckStep& step, const std::string& key, const std::string& fallback) {
  const auto it = step.args.find(key);
  return it == step.args.end() ? fallback : it->second.text;
}

}  // namespace app
}  // namespace shardops
