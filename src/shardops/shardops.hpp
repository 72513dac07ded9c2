#pragma once
/// \file
/// \brief Everything a program that uses shardops as a library needs, in one include:
/// tensors (core), the communicator and row-sharded tensors (route), every op on one
/// rank's tensors and on row-sharded ones (ops), and the HDF5 I/O (hdf5).

#include "shardops/core/DType.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/core/StringTensor.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/ops/DistElementwise.hpp"
#include "shardops/ops/Elementwise.hpp"
#include "shardops/ops/Gather.hpp"
#include "shardops/ops/OpOptions.hpp"
#include "shardops/ops/Partition.hpp"
#include "shardops/ops/Scatter.hpp"
#include "shardops/ops/Stitch.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LauncherLink.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/RowLayout.hpp"
