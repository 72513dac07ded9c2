// Uses the installed shardops package: MPI and Kokkos set-up, a Tensor, gather_nd, an
// error with TensorFlow's text, and the op registry. Exits 0 when every rank got the expected results.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/ops/OpRegistry.hpp"
#include "shardops/ops/Ops.hpp"

namespace {

// Returns the number of failed checks on this rank.
int run_checks() {
  using shardops::DType;
  using shardops::Shape;
  using shardops::Tensor;
  int failures = 0;

  // params [[1,2],[3,4],[5,6]], indices [[2],[0]] -> [[5,6],[1,2]]
  const Tensor params = Tensor::from_vector<float>(DType::Float32, Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor indices = Tensor::from_vector<std::int32_t>(DType::Int32, Shape{2, 1}, {2, 0});
  const Tensor out = shardops::gather_nd(params, indices);
  if (out.shape() != Shape{2, 2} || out.to_vector<float>() != std::vector<float>{5, 6, 1, 2}) {
    std::fprintf(stderr, "consumer: gather_nd gave shape %s, expected [2,2] = {5,6,1,2}\n", out.shape().str().c_str());
    ++failures;
  }

  // An index out of range is an InvalidArgument with TensorFlow's message.
  const Tensor bad = Tensor::from_vector<std::int32_t>(DType::Int32, Shape{1, 1}, {7});
  try {
    shardops::gather_nd(params, bad);
    std::fprintf(stderr, "consumer: gather_nd accepted index 7 into shape [3,2]\n");
    ++failures;
  } catch (const shardops::InvalidArgument& e) {
    if (std::string(e.what()).find("does not index into param shape [3,2]") == std::string::npos) {
      std::fprintf(stderr, "consumer: unexpected error text: %s\n", e.what());
      ++failures;
    }
  }
  // The op registry is public: an op's names, and none for a name it does not list.
  const shardops::OpInfo* op = shardops::find_op("gather_nd");
  if (op == nullptr || op->tf_name != "GatherNd" || op->command != "gather-nd" ||
      shardops::find_op("tensor_scatter_mul") != nullptr) {
    std::fprintf(stderr, "consumer: the op registry has no gather_nd, or a tensor_scatter_mul\n");
    ++failures;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failures = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      failures = run_checks();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "consumer: unexpected exception: %s\n", e.what());
      failures = 1;
    }
  }
  int total = 0;
  int rank = 0;
  int size = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    std::printf("shardops %s consumer on %d rank(s): %s\n", SHARDOPS_VERSION_STRING, size,
                total == 0 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
