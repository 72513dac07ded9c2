#pragma once
/// \file
/// \brief Input decks (docs/decks.md): named tensors bound to HDF5 datasets or
/// inline values, a list of steps (the ops plus a few element-wise helpers), and the
/// outputs to write. A deck is parsed and checked completely (unknown keys, wrong
/// types, undefined or not-yet-defined tensor names) before any work starts; every
/// message names the deck file, the line and the step.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/ops/Elementwise.hpp"

namespace shardops {
namespace app {

/// A value of a step key, with where it was written.
struct DeckValue {
  std::string text;               ///< scalar (after ${param} substitution)
  std::vector<std::string> list;  ///< sequence of scalars
  bool is_list = false;
  int line = 0;
  std::string tag;  ///< the scalar's explicit YAML tag (!!str, !!int, ...), else empty
};

struct DeckInput {
  std::string name;
  std::string dataset;                     ///< FILE:/path (FILE resolved against the deck's folder), or empty
  DType dtype = DType::Float32;            ///< inline values only
  std::vector<std::int64_t> shape;         ///< inline values only
  std::vector<double> real_values;         ///< inline numbers, as a static_cast to dtype stores them (InlineValue)
  std::vector<std::int64_t> int_values;    ///< the same, integers exact (uint64's above int64 as their bits)
  std::vector<std::string> string_values;  ///< inline strings (dtype string)
  int line = 0;
};

struct DeckStep {
  std::string op;
  std::map<std::string, DeckValue> args;
  std::vector<std::string> inputs;   ///< tensor names read (after expanding "name/*")
  std::vector<std::string> outputs;  ///< tensor names defined
  std::vector<std::string> dropped;  ///< names no longer defined after it (a shorter partition list's stale p/N)
  int line = 0;
  int index = 0;      ///< 1-based
  std::string where;  ///< "deck.yaml:12: step 3 (scatter_nd)"
};

struct DeckOutput {
  std::string name;
  std::string dataset;
  int line = 0;
  bool storage_given = false;  ///< the output's own compression/shuffle/chunk_rows (else the command line's)
  io::StorageOptions storage;
};

struct Deck {
  std::string path;
  std::string description;
  std::vector<DeckInput> inputs;
  std::vector<DeckStep> steps;
  std::vector<DeckOutput> outputs;
  std::string bad_indices;  ///< from the deck's options (empty: not set)
  std::string schedule;
  std::vector<std::string> set;  ///< the --set overrides as applied: "name=value", spaces around both dropped
};

/// \brief Parses and checks \p path; \p overrides ("name=value") replace params.
/// \throws InvalidArgument with "FILE:LINE: ..." for anything wrong.
Deck load_deck(const std::string& path, const std::vector<std::string>& overrides);

/// load_deck of a deck's \p text, named \p path (its folder anchors relative datasets).
Deck load_deck_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides);

/// Step keys as numbers, with the step's location in messages.
std::int64_t deck_int(const DeckStep& step, const std::string& key);
std::int64_t deck_int_or(const DeckStep& step, const std::string& key, std::int64_t fallback);
Scalar deck_scalar(const DeckStep& step, const std::string& key, const Scalar& fallback, bool required);
/// deck_scalar of \p key as a value of \p dtype, refused where TensorFlow refuses it: a real
/// for an integer or bool dtype, a number for bool; and, unless \p wrap, an integer
/// \p dtype does not hold. Checked at run time, with the step's tensors: \throws
/// InvalidArgument "'KEY': ..." (the runner names the step).
Scalar deck_scalar_as(const DeckStep& step, const std::string& key, DType dtype, bool wrap);
std::vector<std::int64_t> deck_int_list(const DeckStep& step, const std::string& key);
std::string deck_text_or(const DeckStep& step, const std::string& key, const std::string& fallback);

}  // namespace app
}  // namespace shardops
