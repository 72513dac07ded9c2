// MPI through host staging (SHARDOPS_MPI_STAGING=host, GpuAwareMpi.hpp) against the
// direct path, byte for byte: the ExchangePlan's routes, one Alltoallv or split into
// rounds, and the distributed ops that exchange rows (DynamicStitch, ScatterNd,
// TensorScatter*, GatherNd, and DynamicPartition with data to align). On a build whose
// memory is host memory the direct path hands MPI the MemSpace buffers and the staging
// path copies through separate host buffers: a Kokkos Tools allocation callback checks
// that those buffers are really made, so this is the code a GPU without GPU-aware MPI
// runs.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "DistTestUtil.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/route/GpuAwareMpi.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {
namespace {

using namespace test;

constexpr const char* kStaging = "SHARDOPS_MPI_STAGING";

// Sets (or, with nullptr, unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) {
    if (value)
      setenv(name_.c_str(), value, 1);
    else
      unsetenv(name_.c_str());
  }
  std::string name_;
  std::optional<std::string> old_;
};

// Counts, while alive, the Kokkos allocations labelled "shardops::ExchangePlan::send_host"
// (the host buffer the staging path copies the rows to send into), through the Kokkos
// Tools allocation callback.
class StagingAllocations {
 public:
  StagingAllocations() {
    count_ = 0;
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
  }
  ~StagingAllocations() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  StagingAllocations(const StagingAllocations&) = delete;
  StagingAllocations& operator=(const StagingAllocations&) = delete;
  std::int64_t count() const { return count_; }

 private:
  static void on_allocate(const Kokkos::Tools::SpaceHandle, const char* label, const void*, const std::uint64_t) {
    if (label && std::strcmp(label, "shardops::ExchangePlan::send_host") == 0) ++count_;
  }
  static inline std::int64_t count_ = 0;
};

bool host_memory() { return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible; }

TEST(MpiStaging, TheEnvironmentDecides) {
  {
    ScopedEnv env(kStaging, nullptr);
    EXPECT_FALSE(mpi_staging_forced());
    EXPECT_EQ(RouteOptions().mpi_takes_memspace_pointers(), host_memory() || gpu_aware_mpi_enabled());
  }
  for (const char* value : {"", "auto"}) {
    ScopedEnv env(kStaging, value);
    EXPECT_FALSE(mpi_staging_forced()) << "'" << value << "'";
    EXPECT_EQ(RouteOptions().mpi_takes_memspace_pointers(), host_memory() || gpu_aware_mpi_enabled())
        << "'" << value << "'";
  }
  {
    ScopedEnv env(kStaging, "host");
    EXPECT_TRUE(mpi_staging_forced());
    EXPECT_FALSE(RouteOptions().mpi_takes_memspace_pointers());
    ScopedEnv aware("SHARDOPS_GPU_AWARE_MPI", "1");  // staging wins over GPU-aware MPI
    EXPECT_TRUE(gpu_aware_mpi_enabled());
    EXPECT_FALSE(RouteOptions().mpi_takes_memspace_pointers());
  }
  {
    // Read when the options are made: a later change of the environment does not
    // reach a route already built.
    ScopedEnv env(kStaging, nullptr);
    const ExchangePlan plan = plan_to({});
    ScopedEnv later(kStaging, "host");
    EXPECT_FALSE(plan.options().stage_through_host);
    EXPECT_TRUE(RouteOptions().stage_through_host);
  }
  {
    ScopedEnv env(kStaging, "device");
    EXPECT_THROW(mpi_staging_forced(), InvalidArgument);
    EXPECT_THROW(RouteOptions(), InvalidArgument);
  }
}

// ------------------------------------------------------------ ExchangePlan

std::int64_t mixed_dest(int src, std::int64_t i, int nranks) {
  if (i % 7 == 6) return -1;
  return (src * 3 + i * i + i / 2) % nranks;
}
std::int64_t all_to_zero(int, std::int64_t, int) { return 0; }
std::int64_t all_to_last(int, std::int64_t, int nranks) { return nranks - 1; }
std::int64_t next_rank(int src, std::int64_t i, int nranks) { return i % 5 == 4 ? src : (src + 1) % nranks; }
using DestRule = std::int64_t (*)(int, std::int64_t, int);

// Every byte names (rank, row, byte, salt).
std::vector<unsigned char> payload(int rank, std::int64_t rows, std::size_t row_bytes, int salt) {
  std::vector<unsigned char> out(static_cast<std::size_t>(rows) * row_bytes);
  for (std::size_t b = 0; b < out.size(); ++b)
    out[b] = static_cast<unsigned char>((rank * 131 + static_cast<std::int64_t>(b) * 7 + salt) & 0xff);
  return out;
}

// `bytes` without the rows [lo, lo + n) (what a remote-only route leaves unwritten).
std::vector<unsigned char> without_rows(std::vector<unsigned char> bytes, std::int64_t lo, std::int64_t n,
                                        std::size_t row_bytes) {
  const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(lo) * row_bytes);
  bytes.erase(first, first + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * row_bytes));
  return bytes;
}

// What every route of one plan returns for one payload.
struct Routes {
  std::vector<unsigned char> forward, reverse, unpacked, forward_remote, reverse_remote, unpacked_remote;
  std::int64_t bytes_sent = 0, bytes_staged = 0, staging_allocations = 0;
};

Routes run_routes(const ExchangePlan& plan, std::size_t row_bytes, int salt) {
  const int me = world().rank();
  const std::int64_t n = plan.num_rows();
  const std::size_t self = static_cast<std::size_t>(me);
  const std::int64_t sent_before = plan.bytes_sent(), staged_before = plan.bytes_staged();
  StagingAllocations allocations;
  Routes r;
  const ByteView local = to_byte_view(payload(me, n, row_bytes, salt));
  const ByteView recv = plan.forward(local.data(), row_bytes);
  r.forward = byte_view_to_host(recv);
  // The owner answers with its own bytes; the reply goes back and is unpacked.
  const ByteView reply = to_byte_view(payload(me + 7, plan.num_recv(), row_bytes, salt + 1));
  const ByteView back = plan.exchange_reverse(reply, row_bytes);
  r.reverse = byte_view_to_host(back);
  ByteView out = to_byte_view(std::vector<unsigned char>(static_cast<std::size_t>(n) * row_bytes, 0xcd));
  plan.unpack(back, out.data(), row_bytes);
  r.unpacked = byte_view_to_host(out);
  // Remote-only: the buffers leave the self segments out, in and out.
  const std::int64_t self_recv = plan.recv_offsets()[self];
  r.forward_remote = byte_view_to_host(plan.forward_remote(local.data(), row_bytes));
  const ByteView reply_remote =
      to_byte_view(without_rows(byte_view_to_host(reply), self_recv, plan.num_self(), row_bytes));
  const ByteView back_remote = plan.exchange_reverse_remote(reply_remote, row_bytes);
  r.reverse_remote = byte_view_to_host(back_remote);
  ByteView out_remote = to_byte_view(std::vector<unsigned char>(static_cast<std::size_t>(n) * row_bytes, 0xcd));
  plan.unpack_remote(back_remote, out_remote.data(), row_bytes);
  r.unpacked_remote = byte_view_to_host(out_remote);
  // Remote-only routes give the plain routes' rows less the self segments; their
  // unpack leaves the rows sent to self as they were.
  const std::int64_t self_send = plan.send_offsets()[self];
  EXPECT_EQ(r.forward_remote, without_rows(r.forward, self_recv, plan.num_self(), row_bytes));
  EXPECT_EQ(r.reverse_remote, without_rows(r.reverse, self_send, plan.num_self(), row_bytes));
  const auto slots = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.slots());
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool to_self = slots(i) >= self_send && slots(i) < self_send + plan.num_self();
    for (std::size_t b = 0; b < row_bytes; ++b) {
      const std::size_t at = static_cast<std::size_t>(i) * row_bytes + b;
      wrong += r.unpacked_remote[at] != (to_self ? 0xcd : r.unpacked[at]);
    }
  }
  EXPECT_EQ(wrong, 0) << "unpack_remote";
  r.bytes_sent = plan.bytes_sent() - sent_before;
  r.bytes_staged = plan.bytes_staged() - staged_before;
  r.staging_allocations = allocations.count();
  return r;
}

void expect_same_routes(const Routes& staged, const Routes& direct) {
  EXPECT_EQ(staged.forward, direct.forward);
  EXPECT_EQ(staged.reverse, direct.reverse);
  EXPECT_EQ(staged.unpacked, direct.unpacked);
  EXPECT_EQ(staged.forward_remote, direct.forward_remote);
  EXPECT_EQ(staged.reverse_remote, direct.reverse_remote);
  EXPECT_EQ(staged.unpacked_remote, direct.unpacked_remote);
  EXPECT_EQ(staged.bytes_sent, direct.bytes_sent);
}

TEST(MpiStaging, ExchangePlanRoutesGiveTheSameBytes) {
  const int me = world().rank(), p = world().size();
  for (DestRule rule : {mixed_dest, all_to_zero, all_to_last, next_rank}) {
    const std::int64_t n = me == 1 ? 0 : 60 + 9 * me;  // rank 1 has no rows
    std::vector<std::int64_t> dests;
    for (std::int64_t i = 0; i < n; ++i) dests.push_back(rule(me, i, p));
    // limit 0: no round limit (one Alltoallv); else rows per round, split into many rounds.
    for (std::int64_t limit : {0, 1, 5, 2 * p + 1}) {
      RouteOptions direct_route = round_limit(limit), staged_route = direct_route;
      direct_route.stage_through_host = false;
      staged_route.stage_through_host = true;
      const ExchangePlan plan = plan_to(dests, direct_route), staged_plan = plan_to(dests, staged_route);
      // Rows to other ranks, both ways: what staging copies per byte of row.
      std::int64_t remote_rows = 0;
      for (int r = 0; r < p; ++r) {
        if (r == me) continue;
        remote_rows +=
            plan.send_counts()[static_cast<std::size_t>(r)] + plan.recv_counts()[static_cast<std::size_t>(r)];
      }
      for (std::size_t row_bytes : {std::size_t(1), std::size_t(3), std::size_t(8), std::size_t(24)}) {
        SCOPED_TRACE("limit " + std::to_string(limit) + ", row_bytes " + std::to_string(row_bytes));
        const Routes direct = run_routes(plan, row_bytes, static_cast<int>(row_bytes));
        const Routes staged = run_routes(staged_plan, row_bytes, static_cast<int>(row_bytes));
        expect_same_routes(staged, direct);
        // Four routes (two each way) staged the remote rows, each through its own host buffer.
        EXPECT_EQ(staged.bytes_staged, 4 * remote_rows * static_cast<std::int64_t>(row_bytes));
        EXPECT_EQ(staged.staging_allocations, 4);
        if (host_memory()) {
          EXPECT_EQ(direct.bytes_staged, 0);
          EXPECT_EQ(direct.staging_allocations, 0);
        }
      }
    }
  }
}

// ------------------------------------------------------------ distributed ops

// Runs `op` under \p base with MPI as the build decides, then with host staging
// forced: the allgathered results must be the same bytes, and equal to `expected` (the
// one-rank op). Where rows moved between ranks, every rank must have staged. Returns
// this rank's count of staging buffers.
std::int64_t expect_staging_changes_nothing(const std::function<std::vector<DistTensor>(const OpOptions&)>& op,
                                            const std::vector<Tensor>& expected, const std::string& what,
                                            const OpOptions& base = {}) {
  std::vector<Tensor> direct, staged;
  std::int64_t allocations = 0;
  OpStats sent_direct, sent_staged;
  {
    OpOptions options = base;
    options.route.stage_through_host = false;
    options.stats = &sent_direct;
    for (const DistTensor& t : op(options)) direct.push_back(t.allgather(world()));
  }
  {
    OpOptions options = base;
    options.route.stage_through_host = true;
    options.stats = &sent_staged;
    StagingAllocations counter;
    const std::vector<DistTensor> out = op(options);
    allocations = counter.count();
    for (const DistTensor& t : out) staged.push_back(t.allgather(world()));
  }
  EXPECT_EQ(direct.size(), expected.size()) << what;
  EXPECT_EQ(staged.size(), expected.size()) << what;
  if (direct.size() != expected.size() || staged.size() != expected.size()) return allocations;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string name = what + " output " + std::to_string(i);
    expect_same_tensor(staged[i], direct[i], name + " (staged vs direct)");
    expect_same_tensor(direct[i], expected[i], name + " (vs one-rank op)");
  }
  EXPECT_EQ(sent_staged.bytes_sent, sent_direct.bytes_sent) << what;
  if (world().sum(sent_staged.bytes_sent) > 0) {
    EXPECT_GT(allocations, 0) << what << ": staging did not run";
  }
  return allocations;
}

// Each op under split rounds too: none (one Alltoallv), a few rows, one row per round.
std::vector<std::int64_t> round_limits() { return {0, 2 * world().size(), 1}; }

TEST(MpiStaging, DynamicStitch) {
  Rng rng(801);
  const int p = world().size();
  for (std::int64_t limit : round_limits()) {
    const OpOptions rounds = with_round_limit(limit);
    for (DType dtype : {DType::Float32, DType::Int8, DType::Complex128}) {
      // Two inputs with duplicate targets within and across them.
      const Tensor i0 = random_int32(rng, Shape{37}, 0, 40), i1 = random_int32(rng, Shape{9, 2}, 0, 40);
      const Tensor d0 = random_tensor(rng, dtype, Shape{37, 3}), d1 = random_tensor(rng, dtype, Shape{9, 2, 3});
      const Tensor expected = dynamic_stitch({i0, i1}, {d0, d1});
      for (const RowLayout& layout : test_layouts(rng, 37, p)) {
        const RowLayout other = random_layout(rng, 9, p);
        const std::string what = std::string(dtype_name(dtype)) + " limit " + std::to_string(limit) + " " +
                                 layout_str(layout) + " " + layout_str(other);
        expect_staging_changes_nothing(
            [&](const OpOptions& o) {
              return std::vector<DistTensor>{dynamic_stitch(world(), {shard(i0, layout), shard(i1, other)},
                                                            {shard(d0, layout), shard(d1, other)}, o)};
            },
            {expected}, "stitch " + what, rounds);
      }
    }
  }
}

TEST(MpiStaging, ScatterNdAndTensorScatter) {
  Rng rng(802);
  const int p = world().size();
  for (std::int64_t limit : round_limits()) {
    const OpOptions rounds = with_round_limit(limit);
    for (DType dtype : {DType::Float32, DType::Float16, DType::Int64}) {
      const Tensor indices = random_indices(rng, DType::Int64, Shape{50}, {14, 2}, 6);
      const Tensor updates = random_tensor(rng, dtype, Shape{50, 3});
      const Tensor tensor = random_tensor(rng, dtype, Shape{14, 2, 3});
      for (const RowLayout& layout : test_layouts(rng, 50, p)) {
        const RowLayout tensor_layout = random_layout(rng, 14, p);
        const std::string what = std::string(dtype_name(dtype)) + " limit " + std::to_string(limit) + " " +
                                 layout_str(layout) + " " + layout_str(tensor_layout);
        expect_staging_changes_nothing(
            [&](const OpOptions& o) {
              return std::vector<DistTensor>{
                  scatter_nd(world(), shard(indices, layout), shard(updates, layout), {14, 2, 3}, o)};
            },
            {scatter_nd(indices, updates, {14, 2, 3})}, "scatter_nd " + what, rounds);
        for (ScatterOp op : {ScatterOp::Update, ScatterOp::Add, ScatterOp::Max}) {
          // Updates sharded unlike their indices: aligned first (one more exchange).
          const RowLayout update_layout = random_layout(rng, 50, p);
          expect_staging_changes_nothing(
              [&](const OpOptions& o) {
                return std::vector<DistTensor>{tensor_scatter(world(), op, shard(tensor, tensor_layout),
                                                              shard(indices, layout), shard(updates, update_layout),
                                                              o)};
              },
              {tensor_scatter(op, tensor, indices, updates)}, std::string(scatter_op_name(op)) + " " + what, rounds);
        }
      }
    }
  }
}

TEST(MpiStaging, GatherNd) {
  Rng rng(803);
  const int p = world().size();
  for (std::int64_t limit : round_limits()) {
    const OpOptions rounds = with_round_limit(limit);
    for (DType dtype : {DType::Float64, DType::UInt8}) {
      const Tensor params = random_tensor(rng, dtype, Shape{23, 4, 2});
      for (const std::vector<std::int64_t>& dims : {std::vector<std::int64_t>{23}, std::vector<std::int64_t>{23, 4}}) {
        const Tensor indices = random_indices(rng, DType::Int32, Shape{41}, dims);
        for (const RowLayout& layout : test_layouts(rng, 41, p)) {
          const RowLayout params_layout = random_layout(rng, 23, p);
          const std::string what = std::string(dtype_name(dtype)) + " K " + std::to_string(dims.size()) + " limit " +
                                   std::to_string(limit) + " " + layout_str(layout) + " " + layout_str(params_layout);
          // Rows fetched through the exchange, and all of params brought to every rank.
          for (GatherParams how : {GatherParams::Fetch, GatherParams::Replicate}) {
            OpOptions opts = rounds;
            opts.gather_params = how;
            expect_staging_changes_nothing(
                [&](const OpOptions& o) {
                  return std::vector<DistTensor>{
                      gather_nd(world(), shard(params, params_layout), shard(indices, layout), o)};
                },
                {gather_nd(params, indices)},
                "gather_nd " + what + (how == GatherParams::Fetch ? " fetch" : " replicate"), opts);
          }
        }
      }
    }
  }
}

// DynamicPartition moves no rows itself; data sharded unlike its partitions is
// aligned to them first, through the same exchange.
TEST(MpiStaging, DynamicPartitionWithDataToAlign) {
  Rng rng(804);
  const int p = world().size();
  for (std::int64_t limit : round_limits()) {
    const OpOptions rounds = with_round_limit(limit);
    const Tensor partitions = random_int32(rng, Shape{45}, 0, 4);
    const Tensor data = random_tensor(rng, DType::Float32, Shape{45, 5});
    const std::vector<Tensor> expected = dynamic_partition(data, partitions, 5);
    for (const RowLayout& layout : test_layouts(rng, 45, p)) {
      const RowLayout data_layout = random_layout(rng, 45, p);
      const std::string what =
          "partition limit " + std::to_string(limit) + " " + layout_str(layout) + " " + layout_str(data_layout);
      const std::int64_t allocations = expect_staging_changes_nothing(
          [&](const OpOptions& o) {
            return dynamic_partition(world(), shard(data, data_layout), shard(partitions, layout), 5, o);
          },
          expected, what, rounds);
      if (!(data_layout == layout)) {
        EXPECT_GT(allocations, 0) << what << ": the data were aligned without staging";
      }
    }
  }
}

}  // namespace
}  // namespace shardops
