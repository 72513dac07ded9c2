// libFuzzer target: the deck parser (apps/shardops/Deck.cpp and DeckScan.cpp) on any
// text. A malformed deck must raise shardops::Error (exit 2 in the command); anything
// else (a crash, a sanitizer report, another exception, running out of memory) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "Deck.hpp"
#include "FuzzSetup.hpp"
#include "shardops/core/Error.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shardops::fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    shardops::app::load_deck_text(text, "fuzz/deck.yaml", {});
  } catch (const shardops::Error&) {
  }
  return 0;
}
