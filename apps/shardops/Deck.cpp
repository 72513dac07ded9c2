#include "Deck.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "DeckScan.hpp"
#include "ShapeText.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {
namespace app {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool is_integer_text(const std::string& t, std::int64_t& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

// A deck's tensor value has at most as many dimensions as HDF5 can write; the YAML
// around it (deck, tensors, the tensor's mapping, its value) adds four levels.
constexpr int kMaxValueRank = kMaxDatasetRank;
constexpr int kMaxDeckDepth = kMaxValueRank + 4;

// What one inline value costs once read: its number and text forms (DeckInput), twice
// (a vector's old and new storage are both alive while it grows), and its element in
// the tensor (at most a complex128).
constexpr std::size_t kInlineValueBytes = 2 * (sizeof(double) + sizeof(std::int64_t) + sizeof(std::string)) + 16;

std::string read_deck_file(const std::string& path) {
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

bool is_real_text(const std::string& t, double& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return *end == '\0';
}

class Loader {
 public:
  Loader(std::string path, const std::vector<std::string>& overrides) : path_(std::move(path)) {
    const std::size_t slash = path_.find_last_of('/');
    dir_ = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
    overrides_ = overrides;
  }

  Deck load(const std::string& text) {
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
    load_params(root["params"]);
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
      if (options["bad_indices"]) deck.bad_indices = scalar(options["bad_indices"], "bad_indices");
      if (options["schedule"]) deck.schedule = scalar(options["schedule"], "schedule");
    }
    return deck;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    throw InvalidArgument(path_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message);
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

  void load_params(const YAML::Node& params) {
    if (params) {
      if (!params.IsMap()) fail(params, "'params' must be a mapping of names to values");
      for (const auto& kv : params) params_[key_text(kv.first)] = scalar(kv.second, key_text(kv.first));
    }
    for (const std::string& o : overrides_) {
      const std::size_t eq = o.find('=');
      if (eq == std::string::npos || eq == 0) throw InvalidArgument("--set '" + o + "': expected NAME=VALUE");
      const std::string name = o.substr(0, eq);
      if (!params_.count(name)) throw InvalidArgument("--set " + name + ": the deck has no parameter '" + name + "'");
      params_[name] = o.substr(eq + 1);
    }
  }

  void define(const std::string& name, const YAML::Node& node) {
    if (name.empty()) fail(node, "a tensor name must not be empty");
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
          in.dataset = dataset(spec["dataset"], "dataset");
        } else if (spec["value"]) {
          load_value(spec["value"], in);
          if (spec["dtype"]) {
            DType given = in.dtype;
            try {
              given = dtype_from_name(scalar(spec["dtype"], "dtype"));
            } catch (const Error& e) {
              fail(spec["dtype"], e.what());
            }
            if (is_string(given) != is_string(in.dtype) && !(in.string_values.empty() && in.real_values.empty())) {
              fail(spec["dtype"], "tensor '" + in.name + "': dtype " + dtype_name(given) + " for " +
                                      (is_string(in.dtype) ? "string" : "numeric") + " values");
            }
            in.dtype = given;
          }
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

  // Nested sequences -> shape + values (rectangular), inferring TF's dtype: ints ->
  // int32, any real -> float32, true/false -> bool, quoted or non-numeric text -> string.
  void load_value(const YAML::Node& value, DeckInput& in) {
    bool any_real = false, any_bool = false, any_number = false, any_string = false;
    std::vector<std::int64_t> shape;
    std::function<void(const YAML::Node&, std::size_t)> walk = [&](const YAML::Node& n, std::size_t depth) {
      if (n.IsSequence()) {
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
      const std::string t = substitute(n, n.Scalar());
      std::int64_t i = 0;
      double f = 0;
      in.string_values.push_back(t);
      if (n.Tag() == "!") {  // quoted: always text ("1" is the string 1)
        any_string = true;
      } else if (t == "true" || t == "false") {
        any_bool = true;
        in.int_values.push_back(t == "true");
        in.real_values.push_back(t == "true");
      } else if (is_integer_text(t, i)) {
        any_number = true;
        in.int_values.push_back(i);
        in.real_values.push_back(static_cast<double>(i));
      } else if (is_real_text(t, f)) {
        any_number = any_real = true;
        in.int_values.push_back(0);  // unused: one real value makes the tensor real (and 1e82 has no int64)
        in.real_values.push_back(f);
      } else {
        any_string = true;
      }
    };
    walk(value, 0);
    if (any_string && (any_bool || any_number))
      fail(value, "tensor '" + in.name + "': mixes strings with numbers or booleans (quote every string element)");
    if (any_bool && any_number) fail(value, "tensor '" + in.name + "': mixes booleans and numbers");
    in.shape = shape;
    in.integer_values = !any_real;
    in.dtype = any_string ? DType::String : any_bool ? DType::Bool : (any_real ? DType::Float32 : DType::Int32);
    if (!any_string) in.string_values.clear();
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

  void require_defined(const YAML::Node& node, const std::string& name, const DeckStep& step) const {
    if (defined_.count(name)) return;
    fail(node, step.where.substr(step.where.find(": ") + 2) + ": tensor '" + name +
                   "' is not defined before this step (steps run in order; inputs go under 'tensors')");
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
    // Tensor keys name one tensor, list keys several ("name/*" expands to a partition's
    // outputs); attributes are literals (range's limit may name a tensor: its rows).
    std::vector<std::string> allowed{"op", "out"};
    for (const OpInput& in : spec->inputs) allowed.push_back(in.name);
    for (const OpAttr& a : spec->attrs) allowed.push_back(a.name);
    check_keys(node, allowed, "step " + std::to_string(index) + " (" + step.op + ")");
    for (const std::string& key : allowed) {
      const OpAttr* a = spec->attr(key);
      if (key == "op" || key == "out" || (a && !a->required)) continue;
      if (!node[key]) fail(node, "step " + std::to_string(index) + " (" + step.op + "): missing '" + key + "'");
    }
    if (!node["out"]) fail(node, "step " + std::to_string(index) + " (" + step.op + "): missing 'out'");

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
      }
      step.args[key] = v;
    }
    const std::string label = "step " + std::to_string(index) + " (" + step.op + "): ";
    for (const OpInput& in : spec->inputs) {
      const std::string& key = in.name;
      if (!node[key]) continue;
      DeckValue& v = step.args[key];
      if (!in.is_list) {
        if (v.is_list) fail(node[key], label + "'" + key + "' names one tensor");
        require_defined(node[key], v.text, step);
        step.inputs.push_back(v.text);
        continue;
      }
      if (!v.is_list) v = DeckValue{{}, {v.text}, true, v.line};
      std::vector<std::string> names;
      for (const std::string& item : v.list) {
        for (const std::string& n : expand(node[key], item)) {
          require_defined(node[key], n, step);
          names.push_back(n);
        }
      }
      v.list = names;
      step.inputs.insert(step.inputs.end(), names.begin(), names.end());
    }
    for (const OpAttr& a : spec->attrs) {
      if (a.kind != AttrKind::IntOrTensor || !node[a.name]) continue;
      std::int64_t ignored = 0;
      const std::string& text = step.args[a.name].text;
      if (!is_integer_text(text, ignored)) {
        require_defined(node[a.name], text, step);  // a tensor: its number of rows
        step.inputs.push_back(text);
      }
    }
    // Outputs: one name, or (dynamic_partition) a list of N names / a prefix for N.
    const DeckValue& out = step.args["out"];
    if (spec->output_per_partition) {
      const std::int64_t n = deck_int(step, "num_partitions");
      if (out.is_list) {
        if (static_cast<std::int64_t>(out.list.size()) != n) {
          fail(node["out"], label + "'out' lists " + std::to_string(out.list.size()) + " names for " +
                                std::to_string(n) + " partitions");
        }
        step.outputs = out.list;
      } else {
        try {  // bounded before the names are made
          check_count(n, sizeof(std::string) + out.text.size() + 12,
                      "num_partitions " + std::to_string(n) + ": the names of its outputs");
        } catch (const Error& e) {
          fail(node["num_partitions"], label + e.what());
        }
        for (std::int64_t p = 0; p < n; ++p) step.outputs.push_back(out.text + "/" + std::to_string(p));
      }
    } else {
      if (out.is_list) fail(node["out"], label + "'out' names one tensor");
      step.outputs.push_back(out.text);
    }
    for (const std::string& name : step.outputs) define(name, node["out"]);
    check_literal_types(*spec, step);
    return step;
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
          check_dataset_rank(deck_int_list(step, key).size(), step.where + ": '" + key + "'");
          break;
        case AttrKind::Number: deck_scalar(step, key, Scalar(), true); break;
        case AttrKind::IntOrTensor: break;  // checked above
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
        try {
          if (kv.second["compression"])
            io::parse_compression(scalar(kv.second["compression"], "compression"), o.storage);
        } catch (const Error& e) {
          fail(kv.second["compression"], e.what());
        }
        if (kv.second["shuffle"]) {
          const std::string t = scalar(kv.second["shuffle"], "shuffle");
          if (t != "true" && t != "false") fail(kv.second["shuffle"], "'shuffle' must be true or false");
          o.storage.shuffle = t == "true";
        }
        if (kv.second["chunk_rows"]) {
          std::int64_t rows = 0;
          if (!is_integer_text(scalar(kv.second["chunk_rows"], "chunk_rows"), rows) || rows < 1)
            fail(kv.second["chunk_rows"], "'chunk_rows' must be a whole number >= 1");
          o.storage.chunk_rows = rows;
        }
      } else {
        o.dataset = dataset(kv.second, o.name);
      }
      deck.outputs.push_back(o);
    }
  }

  std::string path_, dir_;
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

std::int64_t deck_int(const DeckStep& step, const std::string& key) {
  const DeckValue& v = arg(step, key);
  std::int64_t out = 0;
  if (v.is_list || !is_integer_text(v.text, out)) {
    throw InvalidArgument(step.where + ": '" + key + "' must be an integer, got '" + v.text + "'");
  }
  return out;
}

std::int64_t deck_int_or(const DeckStep& step, const std::string& key, std::int64_t fallback) {
  return step.args.count(key) ? deck_int(step, key) : fallback;
}

Scalar deck_scalar(const DeckStep& step, const std::string& key, const Scalar& fallback, bool required) {
  if (!step.args.count(key)) {
    if (required) throw InvalidArgument(step.where + ": missing '" + key + "'");
    return fallback;
  }
  const DeckValue& v = arg(step, key);
  std::int64_t i = 0;
  double f = 0;
  if (!v.is_list && is_integer_text(v.text, i)) return Scalar::integer(i);
  if (!v.is_list && is_real_text(v.text, f)) return Scalar::real(f);
  throw InvalidArgument(step.where + ": '" + key + "' must be a number, got '" + v.text + "'");
}

std::vector<std::int64_t> deck_int_list(const DeckStep& step, const std::string& key) {
  const DeckValue& v = arg(step, key);
  if (!v.is_list) throw InvalidArgument(step.where + ": '" + key + "' must be a list of integers, e.g. [4, 4]");
  std::vector<std::int64_t> out;
  for (const std::string& t : v.list) {
    std::int64_t x = 0;
    if (!is_integer_text(t, x))
      throw InvalidArgument(step.where + ": '" + key + "' item '" + t + "' is not an integer");
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
