#pragma once
/// \file
/// \brief The options every op takes (OpOptions), and what an op reports (OpStats).

#include <cstdint>
#include <string>

#include "shardops/core/TfFloat.hpp"
#include "shardops/kernels/Schedule.hpp"
#include "shardops/ops/Validation.hpp"
#include "shardops/route/GpuAwareMpi.hpp"

namespace shardops {

/// How the distributed GatherNd gets the params rows other ranks hold
/// (ops/DistGather.cpp). Every choice gives the same bytes.
enum class GatherParams {
  Auto,       ///< Replicate when params are no larger than a rank's share of the output, else Fetch
  Fetch,      ///< send each index to its row's owner, which sends the row back
  Replicate,  ///< every rank receives all of params (one exchange) and gathers locally
};

/// What an op reports about its run, for the caller's report.
struct OpStats {
  /// Bytes this rank sent to other ranks in the op's main exchange (0 on one rank, or
  /// when every row stayed where it was).
  std::int64_t bytes_sent = 0;
};

/// Options common to all ops.
struct OpOptions {
  BadIndices bad_indices = BadIndices::Error;
  Schedule schedule = Schedule::Auto;
  GatherParams gather_params = GatherParams::Auto;  ///< distributed GatherNd only
  /// Subnormal floats in the arithmetic ops (ScatterNd, TensorScatterAdd/Sub/Min/Max):
  /// flushed to zero as TF's CPU kernels do, or kept (core/TfFloat.hpp).
  Denormals denormals = Denormals::Flush;
  /// How the distributed ops move rows between ranks (a default one reads the
  /// environment once, when the options are made: route/GpuAwareMpi.hpp).
  RouteOptions route;
  /// Where the op writes what it reports (null: nowhere). The op overwrites it.
  OpStats* stats = nullptr;
  /// The TensorFlow op its messages name where one op stands for another
  /// (ParallelDynamicStitch, run by dynamic_stitch); empty: the op's own name.
  std::string tf_name;
};

}  // namespace shardops
