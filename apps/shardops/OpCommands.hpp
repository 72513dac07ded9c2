#pragma once
/// \file
/// \brief One thin function per op: read the inputs, run the distributed op, write
/// the outputs atomically.

#include "ErrorReport.hpp"
#include "Report.hpp"
#include "Request.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops {
namespace app {

/// Collective. Runs \p request; fills \p record (for the report) and \p inputs (for
/// error messages) as it goes. Throws shardops::Error, the same on every rank.
void run_op_command(const Comm& comm, const Request& request, RunRecord& record, InputList& inputs);

}  // namespace app
}  // namespace shardops
