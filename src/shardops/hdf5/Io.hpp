#pragma once
/// \file
/// \brief The HDF5 layer in one include: dataset names, reading, atomic output.
///
/// Everything is in namespace shardops::io. Errors follow the exit codes of the
/// command line (docs/cli.md): a missing
/// file or dataset, an unsupported type or a malformed name is InvalidArgument
/// (exit 2); a file that is not HDF5, is truncated or damaged, or cannot be written
/// or renamed is IOError (exit 3). Every collective call agrees on its errors, so all
/// ranks throw the same one.

#include "shardops/hdf5/DatasetRead.hpp"
#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/OutputTransaction.hpp"
#include "shardops/hdf5/Provenance.hpp"
