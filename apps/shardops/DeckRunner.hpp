#pragma once
/// \file
/// \brief `shardops run DECK.yaml`: runs a checked deck. Intermediate tensors stay
/// distributed in memory between steps; outputs are written together, atomically.

#include <string>
#include <vector>

#include "ErrorReport.hpp"
#include "Report.hpp"
#include "Request.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops {
namespace app {

/// Collective. Loads \p request.deck (with --set overrides), runs its steps, writes
/// its outputs. Errors name the deck line and step.
void run_deck_command(const Comm& comm, const Request& request, RunRecord& record, InputList& inputs);

}  // namespace app
}  // namespace shardops
