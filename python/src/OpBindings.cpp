#include <Kokkos_Core.hpp>

#include <pybind11/stl.h>

#include "Bindings.hpp"
#include "Call.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops::python {
namespace {

// How long the last op's library call took on this thread, without the conversions and
// the agreements around it: what python_bench compares the whole Python call with.
thread_local double t_last_op_seconds = 0;

/// \p f(), the library's op, timed into t_last_op_seconds.
template <class F>
auto library_call(F&& f) {
  Kokkos::Timer timer;
  auto result = f();
  Kokkos::fence();
  t_last_op_seconds = timer.seconds();
  return result;
}

OpOptions options_for(const std::string& bad_indices) {
  OpOptions options;
  options.bad_indices = bad_indices_from_string(bad_indices);
  return options;
}

py::list arrays_of(const Call& call, const std::vector<Tensor>& tensors) {
  py::list out;
  for (const Tensor& t : tensors) out.append(call.inputs().to_numpy(t));
  return out;
}

std::vector<Tensor> locals_of(const std::vector<DistTensor>& tensors) {
  std::vector<Tensor> out;
  for (const DistTensor& t : tensors) out.push_back(t.local());
  return out;
}

/// The op's output: \p local() on whole tensors, else \p dist(blocks) on this rank's blocks
/// of the inputs (Call::dist_inputs), without the GIL; the op alone is timed (library_call).
template <class Local, class Dist>
py::object single_output(const Call& call, Local&& local, Dist&& dist) {
  Tensor out;
  {
    ReleasedGil release;
    if (call.comm()) {
      const std::vector<DistTensor> blocks = call.dist_inputs();
      out = library_call([&] { return dist(blocks); }).local();
    } else {
      out = library_call(local);
    }
  }
  return call.inputs().to_numpy(out);
}

std::vector<std::int64_t> shape_argument(const py::handle& shape) {
  const auto refused = [&] {
    return InvalidArgument("shape: expected a sequence of ints, got " + py::repr(shape).cast<std::string>());
  };
  py::array a;
  try {
    a = py::module_::import("numpy").attr("asarray")(shape);
  } catch (const py::error_already_set&) {
    throw refused();
  }
  const char kind = a.dtype().kind();
  if (a.ndim() != 1) throw InvalidArgument("Shape must be a vector");  // TF's text
  if (a.size() > 0 && kind != 'i' && kind != 'u') throw refused();
  return a.attr("astype")("int64").attr("tolist")().cast<std::vector<std::int64_t>>();
}

std::string join(const std::vector<std::int64_t>& values) {
  std::string s;
  for (const auto v : values) s += std::to_string(v) + ",";
  return s;
}

/// An int attribute: an int or what stands for one (operator.index: NumPy's integers), never a
/// float, as TensorFlow takes it. Run inside Call::convert, so every rank agrees on a bad one.
std::int64_t int_attribute(const py::handle& value, const std::string& name) {
  try {
    return py::module_::import("operator").attr("index")(value).cast<std::int64_t>();
  } catch (const std::exception&) {
    throw InvalidArgument("Expected int for argument '" + name + "' not " + py::repr(value).cast<std::string>() + ".");
  }
}

py::object dynamic_partition_py(const py::object& data, const py::object& partitions,
                                const py::object& num_partitions_value, const py::object& comm) {
  Call call(distributed_comm(comm));
  std::int64_t num_partitions = 0;
  call.convert([&](CallInputs& in) {
    in.add(data, "data");
    in.add(partitions, "partitions", CallInputs::Values::Copied);
    num_partitions = int_attribute(num_partitions_value, "num_partitions");
    in.note("num_partitions=" + std::to_string(num_partitions));
  });
  const auto& t = call.inputs().tensors();
  std::vector<Tensor> outs;
  {
    ReleasedGil release;
    const std::vector<DistTensor> d = call.comm() ? call.dist_inputs() : std::vector<DistTensor>{};
    outs = call.comm()
               ? locals_of(library_call([&] { return dynamic_partition(*call.comm(), d[0], d[1], num_partitions); }))
               : library_call([&] { return dynamic_partition(t[0], t[1], num_partitions); });
  }
  return arrays_of(call, outs);
}

// \p tf_name: DynamicStitch or ParallelDynamicStitch, as the op's messages name it.
py::object dynamic_stitch_py(const std::string& tf_name, const py::sequence& indices, const py::sequence& data,
                             const py::object& comm) {
  Call call(distributed_comm(comm));
  OpOptions options;
  options.tf_name = tf_name;
  const auto m = static_cast<std::size_t>(py::len(indices));
  const auto n = static_cast<std::size_t>(py::len(data));
  call.convert([&](CallInputs& in) {
    for (std::size_t i = 0; i < m; ++i)
      in.add(indices[i], "indices[" + std::to_string(i) + "]", CallInputs::Values::Copied);
    for (std::size_t i = 0; i < n; ++i) in.add(data[i], "data[" + std::to_string(i) + "]");
  });
  const auto& t = call.inputs().tensors();
  const std::vector<Tensor> idx(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(m));
  const std::vector<Tensor> dat(t.begin() + static_cast<std::ptrdiff_t>(m), t.end());
  return single_output(
      call, [&] { return dynamic_stitch(idx, dat, options); },
      [&](const std::vector<DistTensor>& d) {
        const auto split = d.begin() + static_cast<std::ptrdiff_t>(m);
        return dynamic_stitch(*call.comm(), std::vector<DistTensor>(d.begin(), split),
                              std::vector<DistTensor>(split, d.end()), options);
      });
}

py::object scatter_nd_py(const py::object& indices, const py::object& updates, const py::object& shape,
                         const py::object& comm, const std::string& bad_indices) {
  Call call(distributed_comm(comm));
  std::vector<std::int64_t> dims;
  OpOptions options;
  call.convert([&](CallInputs& in) {
    in.add(indices, "indices");
    in.add(updates, "updates");
    dims = shape_argument(shape);
    options = options_for(bad_indices);
    in.note("shape=" + join(dims) + " bad_indices=" + bad_indices);
  });
  const auto& t = call.inputs().tensors();
  return single_output(
      call, [&] { return scatter_nd(t[0], t[1], dims, options); },
      [&](const std::vector<DistTensor>& d) { return scatter_nd(*call.comm(), d[0], d[1], dims, options); });
}

py::object tensor_scatter_py(ScatterOp op, const py::object& tensor, const py::object& indices,
                             const py::object& updates, const py::object& comm, const std::string& bad_indices) {
  Call call(distributed_comm(comm));
  OpOptions options;
  call.convert([&](CallInputs& in) {
    in.add(tensor, "tensor");
    in.add(indices, "indices");
    in.add(updates, "updates");
    options = options_for(bad_indices);
    in.note("bad_indices=" + bad_indices);
  });
  const auto& t = call.inputs().tensors();
  return single_output(
      call, [&] { return tensor_scatter(op, t[0], t[1], t[2], options); },
      [&](const std::vector<DistTensor>& d) { return tensor_scatter(*call.comm(), op, d[0], d[1], d[2], options); });
}

py::object gather_nd_py(const py::object& params, const py::object& indices, const py::object& comm,
                        const std::string& bad_indices) {
  Call call(distributed_comm(comm));
  OpOptions options;
  call.convert([&](CallInputs& in) {
    in.add(params, "params");
    in.add(indices, "indices");
    options = options_for(bad_indices);
    in.note("bad_indices=" + bad_indices);
  });
  const auto& t = call.inputs().tensors();
  return single_output(
      call, [&] { return gather_nd(t[0], t[1], options); },
      [&](const std::vector<DistTensor>& d) { return gather_nd(*call.comm(), d[0], d[1], options); });
}

}  // namespace

void bind_ops(py::module_& m) {
  // One function per op of the registry that has a Python name; its family says which
  // binding above runs it (the package, shardops/__init__.py, wraps each with keywords).
  for (const OpInfo& op : op_registry()) {
    if (op.python.empty()) continue;
    const char* name = op.python.c_str();  // the registry lives as long as the process
    switch (op.family) {
      case OpFamily::DynamicPartition:
        m.def(name, &dynamic_partition_py, py::arg("data"), py::arg("partitions"), py::arg("num_partitions"),
              py::arg("comm"));
        break;
      case OpFamily::DynamicStitch:
        m.def(
            name,
            [tf_name = op.tf_name](const py::sequence& indices, const py::sequence& data, const py::object& comm) {
              return dynamic_stitch_py(tf_name, indices, data, comm);
            },
            py::arg("indices"), py::arg("data"), py::arg("comm"));
        break;
      case OpFamily::ScatterNd:
        m.def(name, &scatter_nd_py, py::arg("indices"), py::arg("updates"), py::arg("shape"), py::arg("comm"),
              py::arg("bad_indices"));
        break;
      case OpFamily::TensorScatter:
        m.def(
            name,
            [scatter = op.scatter](const py::object& tensor, const py::object& indices, const py::object& updates,
                                   const py::object& comm, const std::string& bad_indices) {
              return tensor_scatter_py(scatter, tensor, indices, updates, comm, bad_indices);
            },
            py::arg("tensor"), py::arg("indices"), py::arg("updates"), py::arg("comm"), py::arg("bad_indices"));
        break;
      case OpFamily::GatherNd:
        m.def(name, &gather_nd_py, py::arg("params"), py::arg("indices"), py::arg("comm"), py::arg("bad_indices"));
        break;
      case OpFamily::Elementwise:
        throw InternalError("the Python module has no binding for element-wise op " + op.name);
    }
  }
  // The registry itself, as `shardops --list-ops` prints it.
  m.def("op_registry_json", &op_registry_json);
  // Seconds the last op call of this thread spent in the library itself (benchmarks).
  m.def("_last_op_seconds", [] { return t_last_op_seconds; });
  m.def("_last_op_seconds_reset", [] { t_last_op_seconds = 0; });
}

}  // namespace shardops::python
