#pragma once
/// \file
/// \brief The functions of shardops._shardops, by group (the Python package wraps them).

#include <pybind11/pybind11.h>

namespace shardops::python {

namespace py = pybind11;

/// The ops of the op registry (ops/OpRegistry.hpp) that have a Python name, and
/// op_registry_json().
void bind_ops(py::module_& m);
/// read, write, row_block.
void bind_io(py::module_& m);

}  // namespace shardops::python
