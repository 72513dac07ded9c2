#pragma once
/// \file
/// \brief The one list of shardops' ops: for each op its names (deck, command line,
/// TensorFlow, Python), its inputs and their roles, its attributes, the dtypes
/// TensorFlow's CPU has kernels for, the command line's help, and the entry point of
/// ops/DistOps.hpp (or ops/DistElementwise.hpp) that runs it.
///
/// The command line (its subcommands and options), the deck parser and runner, the
/// report, the Python module's function names and the tests all read this list
/// (`shardops --list-ops` prints it as JSON), so an op that is not in it does not
/// exist anywhere, and adding one is its kernel plus one entry in OpRegistry.cpp.
/// A name that is not in the list is an InvalidArgument (exit 2), never a default.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "shardops/core/DType.hpp"
#include "shardops/core/RowRuns.hpp"
#include "shardops/ops/Elementwise.hpp"
#include "shardops/ops/Ops.hpp"
#include "shardops/ops/Validation.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LazyTensor.hpp"

namespace shardops {

/// The start of TensorFlow's message for an op called with dtypes it has no CPU kernel for
/// (an InvalidArgument here, exit 2; TensorFlow's Python raises a NotFoundError, and so
/// does shardops' Python module).
inline constexpr char kNoKernelText[] = "Could not find device for node: ";

/// Which entry point runs an op (ops/DistOps.hpp, ops/DistElementwise.hpp).
enum class OpFamily {
  DynamicPartition,  ///< dynamic_partition
  DynamicStitch,     ///< dynamic_stitch (DynamicStitch and ParallelDynamicStitch)
  ScatterNd,         ///< scatter_nd
  TensorScatter,     ///< tensor_scatter with OpInfo::scatter
  GatherNd,          ///< gather_nd
  Elementwise,       ///< a deck-only helper: range, compare_scalar, arith_scalar, cast, random_uniform
};

/// What an input is to its op.
enum class InputRole {
  Data,        ///< rows to move (DynamicPartition's data, DynamicStitch's data[m])
  Partitions,  ///< DynamicPartition's int32 partition ids
  Indices,     ///< index rows (scatter/gather family) or stitch indices[m]
  Updates,     ///< the scatter family's update rows
  Tensor,      ///< the tensor TensorScatter* copies and updates
  Params,      ///< the tensor GatherNd gathers from
  Operand,     ///< an element-wise helper's x
};

/// One tensor input of an op.
struct OpInput {
  std::string name;  ///< the deck key, the command-line option (--name) and the Python argument
  InputRole role = InputRole::Data;
  bool is_list = false;     ///< several tensors (DynamicStitch's indices[m] and data[m])
  std::string paired_with;  ///< read in the row layout of this other input ("" if none)
  std::string help;         ///< the command-line option's help
  /// The input whose values name the rows of this one that the op reads (GatherNd's
  /// params: its indices); "" if none. The command line reads that one first and this one
  /// through OpInfo::rows_read.
  std::string rows_named_by;
};

/// The kind of value an attribute takes.
enum class AttrKind {
  Int,          ///< an integer (num_partitions, seed)
  Shape,        ///< a shape: a deck list [4, 4], on the command line "4,4"
  IntOrTensor,  ///< an integer, or a tensor's name meaning its number of rows (range's limit)
  Number,       ///< a scalar: an integer stays exact, anything else is a double
  DType,        ///< a dtype name ("int32"); string dtypes are refused: the helpers make numbers
};

/// One non-tensor argument of an op.
struct OpAttr {
  std::string name;  ///< the deck key; the command-line option is --name with '-' for '_'
  AttrKind kind = AttrKind::Int;
  bool required = true;
  std::string fallback;  ///< the value when not given (required == false), as a deck would write it
  std::string help;      ///< the command-line option's help
};

/// The arguments an op runs with, by input and attribute name.
struct OpArgs {
  std::map<std::string, std::vector<DistTensor>> tensors;  ///< one tensor, or several for a list input
  std::map<std::string, std::vector<std::int64_t>> ints;   ///< Int, IntOrTensor (one value) and Shape
  std::map<std::string, Scalar> numbers;                   ///< Number
  std::map<std::string, DType> dtypes;                     ///< DType
  OpOptions options;

  /// The tensor of input \p name. \throws InternalError if it is missing.
  const DistTensor& tensor(const std::string& name) const;
  const std::vector<DistTensor>& tensor_list(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  const std::vector<std::int64_t>& integers(const std::string& name) const;
  const Scalar& number(const std::string& name) const;
  DType dtype(const std::string& name) const;
};

struct OpInfo;

/// Runs an op: collective over \p comm; returns its outputs (DynamicPartition's N, one otherwise).
using OpRun = std::function<std::vector<DistTensor>(const Comm& comm, const OpInfo& op, const OpArgs& args)>;
/// Runs an op as OpRun does, but may leave the output's rows to be made as they are
/// written (route/LazyTensor.hpp).
using OpRunLazy = std::function<std::vector<LazyTensor>(const Comm& comm, const OpInfo& op, const OpArgs& args)>;
/// An input's global shape and dtype, as its file has them.
struct InputSpec {
  Shape shape;
  DType dtype = DType::Float32;
};
/// Where an op's ranks run: how many, and whether they share one node (its memory, and the
/// page cache an input file's pages are read through).
struct RankPlacement {
  int nranks = 1;
  bool one_node = true;
};
/// The inputs an op would read whole on every rank, given the spec of each of its
/// (non-list) inputs by name; none if it would not. Not collective.
using OpReplicatedInputs = std::function<std::vector<std::string>(
    const std::map<std::string, InputSpec>& inputs, const RankPlacement& placement, const OpOptions& options)>;

/// The rows of input \p input (global \p spec) that the op reads, of this rank's block in
/// \p layout, counted from the block's first row, given \p args with the input that names
/// them (OpInput::rows_named_by) read; std::nullopt for all of them. Collective.
using OpRowsRead = std::function<std::optional<RowRuns>(const Comm& comm, const OpArgs& args, const std::string& input,
                                                        const InputSpec& spec, const RowLayout& layout)>;

/// \brief One op and everything the command line, decks, the report, Python and the
/// tests need to know of it.
struct OpInfo {
  std::string name;     ///< the deck's op name: "tensor_scatter_update"
  std::string command;  ///< the command-line subcommand: "tensor-scatter-update" ("" for deck-only ops)
  std::string tf_name;  ///< TensorFlow's op: "TensorScatterUpdate" (its messages name it)
  std::string python;   ///< the Python module's function: "tensor_scatter_nd_update" ("" if none)
  OpFamily family = OpFamily::Elementwise;
  ScatterOp scatter = ScatterOp::ScatterNd;  ///< the combine, for OpFamily::TensorScatter
  std::vector<OpInput> inputs;               ///< in the order of TF's op definition
  std::vector<OpAttr> attrs;
  /// One output per partition (DynamicPartition: OUT/0 .. OUT/N-1, N = the attr
  /// num_partitions), else one output.
  bool output_per_partition = false;

  /// \name TensorFlow's dtype tables (docs/tf-fidelity.md; ops/detail/TfKernels.hpp checks them)
  /// @{
  bool tindices = false;            ///< TF checks the index dtype against a Tindices attr list
  std::vector<DType> index_dtypes;  ///< index dtypes the op's definition allows, in TF's order
  std::vector<DType> kernel_index;  ///< index dtypes TF registers CPU kernels for
  std::vector<DType> no_kernel;     ///< element dtypes without a CPU kernel
  bool bad_indices = false;         ///< TF's op has a bad_indices_policy attr (Python's bad_indices=)
  /// @}

  /// \name The command line's help
  /// @{
  std::string summary;  ///< one line
  std::string meaning;  ///< what it computes
  std::string example;  ///< a command line
  /// @}

  OpRun run;  ///< the entry point (see OpFamily)
  /// Set where the op can leave its output's rows to be made as they are written
  /// (gather_nd_lazy, dynamic_partition_lazy, scatter_nd_lazy, tensor_scatter_lazy,
  /// dynamic_stitch_lazy): a one-op job then never holds the output whole. Empty for the
  /// other ops.
  OpRunLazy run_lazy;
  /// Set where the op may read inputs whole on every rank (GatherNd's params, the scatter
  /// family's indices and updates): the command line then reads them with
  /// io::ReadOptions::replicate, so the ranks read the file's shared pages instead of
  /// moving rows between them. Empty for the other ops.
  OpReplicatedInputs replicated_inputs;
  /// Set where the op may read only a few rows of an input (OpInput::rows_named_by): the
  /// command line then reads just those of a dataset it copies rather than maps
  /// (io::ReadOptions::only_rows). Empty for the other ops.
  OpRowsRead rows_read;

  /// Whether \p dtype has a CPU kernel of this op with index dtype \p index (TF's table).
  bool has_kernel(DType dtype, DType index) const;
  /// Whether string tensors have a kernel (the movement ops and ScatterNd).
  bool has_string_kernel() const;
  /// The input named \p name, or nullptr.
  const OpInput* input(const std::string& name) const;
  /// The attribute named \p name, or nullptr.
  const OpAttr* attr(const std::string& name) const;
};

/// \brief Every op, in the order the command line's help lists them: the data-movement
/// ops (each with a subcommand), then the deck-only element-wise helpers.
const std::vector<OpInfo>& op_registry();

/// The op whose deck name is \p name, or nullptr.
const OpInfo* find_op(const std::string& name);
/// The op whose command-line subcommand is \p command, or nullptr.
const OpInfo* find_op_by_command(const std::string& command);
/// The op whose TensorFlow name is \p tf_name, or nullptr.
const OpInfo* find_op_by_tf_name(const std::string& tf_name);

/// \brief The op whose deck name is \p name.
/// \throws InvalidArgument "unknown op 'NAME' (known: ...)" otherwise.
const OpInfo& op_named(const std::string& name);
/// \brief The op whose subcommand is \p command.
/// \throws InvalidArgument "unknown command 'NAME' (the commands are ...)" otherwise.
const OpInfo& op_for_command(const std::string& command);

/// The deck names of every op, comma-separated (for messages).
std::string op_names();
/// The subcommands of every op that has one, comma-separated (for messages).
std::string op_commands();

/// The names of \p role ("indices"), \p family ("tensor_scatter") and \p kind ("shape"), as --list-ops prints them.
const char* input_role_name(InputRole role) noexcept;
const char* op_family_name(OpFamily family) noexcept;
const char* attr_kind_name(AttrKind kind) noexcept;

/// \brief The registry as JSON (what `shardops --list-ops` prints and the Python
/// module's op_registry() returns): a list of objects with the fields of OpInfo, dtypes
/// by NumPy name; of the help texts only the summary.
std::string op_registry_json();

}  // namespace shardops
