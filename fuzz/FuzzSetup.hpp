#pragma once
/// \file
/// \brief What every fuzz target sets up once: a memory budget far below libFuzzer's
/// RSS limit, so an input that asks for more is refused by shardops' own check
/// (core/MemoryBudget.hpp), which is the behaviour under test, instead of being
/// reported as an out-of-memory crash.

#include <cstdint>

#include "shardops/core/MemoryBudget.hpp"

namespace shardops::fuzz {

inline void limit_memory() { set_memory_budget(std::uint64_t(256) << 20, 1, "the fuzz target's budget"); }

}  // namespace shardops::fuzz
