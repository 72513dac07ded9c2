// A Kokkos Tools library: wall time per kernel label, deep_copy and profiling region,
// printed per rank at exit. It shows where an op's time goes without a profiler:
//
//   KOKKOS_PROFILE_LIBRARY=build-bench/bench/libshardops_kernel_times.so \
//     mpirun -n 1 build-bench/bench/shardops_bench --ops w1
//   (Kokkos 4 reads KOKKOS_TOOLS_LIBS; scripts/bench/profile.sh sets both)
//
// Kernels run synchronously on host backends, so begin..end is the kernel's time,
// page faults on first touch included. Time inside a region but in no kernel or
// deep_copy (allocation, MPI, host code) is reported as "(outside kernels)" of that
// region. Only top-level regions whose name starts with SHARDOPS_KT_REGIONS (default
// "shardops::") are counted as the denominator of the percentages.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Stat {
  double seconds = 0;
  std::uint64_t calls = 0;
};

struct State {
  std::map<std::string, Stat> kernels;  // by label (regions' own time in "region:" entries)
  std::vector<std::pair<std::string, Clock::time_point>> open_kernels;
  std::vector<std::pair<std::string, Clock::time_point>> regions;
  std::vector<double> region_kernel_time;  // kernel time seen inside each open region
  double in_regions = 0, kernels_in_regions = 0;
  std::string prefix = "shardops::";
  std::uint64_t next_id = 0;
};

State& state() {
  static State s;
  return s;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void begin_kernel(const std::string& name, std::uint64_t* id) {
  State& s = state();
  *id = s.next_id++;
  s.open_kernels.emplace_back(name, Clock::now());
}

void end_kernel() {
  State& s = state();
  if (s.open_kernels.empty()) return;
  const auto k = s.open_kernels.back();
  s.open_kernels.pop_back();
  const double t = since(k.second);
  if (!s.open_kernels.empty()) return;  // nested (a deep_copy inside a kernel): count the outer one only
  if (s.regions.empty() || s.regions.front().first.rfind(s.prefix, 0) != 0) return;  // not inside an op
  Stat& st = s.kernels[k.first];
  st.seconds += t;
  st.calls++;
  if (!s.region_kernel_time.empty()) s.region_kernel_time.front() += t;
}

int rank_of_env() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* r = std::getenv(v)) return std::atoi(r);
  }
  return 0;
}

}  // namespace

struct SpaceHandle {
  char name[64];
};

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {
  if (const char* p = std::getenv("SHARDOPS_KT_REGIONS")) state().prefix = p;
}

void kokkosp_finalize_library() {
  State& s = state();
  std::vector<std::pair<std::string, Stat>> rows(s.kernels.begin(), s.kernels.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  const double denom = s.in_regions > 0 ? s.in_regions : 1.0;
  const int rank = rank_of_env();
  std::fprintf(stderr, "\n[kernel_times rank %d] time inside top-level regions '%s*': %.1f ms (kernels %.1f ms)\n",
               rank, s.prefix.c_str(), s.in_regions * 1e3, s.kernels_in_regions * 1e3);
  std::fprintf(stderr, "[kernel_times rank %d] %9s %6s %7s  %s\n", rank, "ms", "% reg", "calls",
               "kernel / deep_copy / region");
  for (const auto& r : rows) {
    if (r.second.seconds * 1e3 < 0.05) continue;
    std::fprintf(stderr, "[kernel_times rank %d] %9.1f %5.1f%% %7llu  %s\n", rank, r.second.seconds * 1e3,
                 100.0 * r.second.seconds / denom, static_cast<unsigned long long>(r.second.calls), r.first.c_str());
  }
}

void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t* id) { begin_kernel(name, id); }
void kokkosp_end_parallel_for(std::uint64_t) { end_kernel(); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t* id) { begin_kernel(name, id); }
void kokkosp_end_parallel_scan(std::uint64_t) { end_kernel(); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t* id) { begin_kernel(name, id); }
void kokkosp_end_parallel_reduce(std::uint64_t) { end_kernel(); }

void kokkosp_begin_deep_copy(SpaceHandle, const char* dst_name, const void*, SpaceHandle, const char* src_name,
                             const void*, std::uint64_t) {
  std::uint64_t id = 0;
  begin_kernel(std::string("deep_copy ") + src_name + " -> " + dst_name, &id);
}
void kokkosp_end_deep_copy() { end_kernel(); }

void kokkosp_push_profile_region(const char* name) {
  State& s = state();
  s.regions.emplace_back(name, Clock::now());
  if (s.regions.size() == 1) s.region_kernel_time.assign(1, 0.0);
}

void kokkosp_pop_profile_region() {
  State& s = state();
  if (s.regions.empty()) return;
  const auto r = s.regions.back();
  s.regions.pop_back();
  if (!s.regions.empty()) return;  // only top-level regions are counted
  if (r.first.rfind(s.prefix, 0) != 0) return;
  const double t = since(r.second);
  const double k = s.region_kernel_time.empty() ? 0.0 : s.region_kernel_time.front();
  s.in_regions += t;
  s.kernels_in_regions += k;
  Stat& outside = s.kernels["(outside kernels) " + r.first];
  outside.seconds += t - k;
  outside.calls++;
}

}  // extern "C"
