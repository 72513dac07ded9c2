#pragma once
/// \file
/// \brief Every difference between Kokkos 3.4 (Debian, CI) and Kokkos 4.x (users'
/// OpenMP/CUDA builds) lives here, and only here, so that the rest of the code
/// is written once. Delete a guard when support for the older version is dropped.

#include <Kokkos_Core.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace shardops {
namespace kx {

/// min/max/swap usable in kernels: Kokkos 3.4 has no Kokkos::min/max (3.6+) and no
/// kokkos_swap (4.3). std::min's argument order, so NaN handling matches Eigen's.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr const T& min(const T& a, const T& b) {
  return (b < a) ? b : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION constexpr const T& max(const T& a, const T& b) {
  return (a < b) ? b : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION void swap(T& a, T& b) {
  T t = a;
  a = b;
  b = t;
}

/// Reinterpret the bits of a trivially copyable value (std::bit_cast is C++20).
template <class To, class From>
KOKKOS_INLINE_FUNCTION To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "shardops::kx::bit_cast: sizes differ");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

/// RAII profiling region (Kokkos::Profiling::ScopedRegion is 4.1+).
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

/// Labelled fence where the Kokkos version has one (3.6+), plain fence otherwise.
template <class ExecSpace>
void fence(const ExecSpace& space, const char* label) {
#if KOKKOS_VERSION >= 30600
  space.fence(label);
#else
  (void)label;
  space.fence();
#endif
}

/// Number of threads an execution space instance runs (static in 3.x, a member in 4.x;
/// calling it on an instance works for both).
template <class ExecSpace>
int concurrency(const ExecSpace& space) {
  return static_cast<int>(space.concurrency());
}

/// Uninitialised allocation in a memory space (the 3.4 and 4.x spellings of the
/// WithoutInitializing mirror differ; view_alloc with a label works in both).
template <class ViewType>
ViewType make_uninitialized(const std::string& label, std::size_t n) {
  return ViewType(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n);
}

/// What a --kokkos-NAME command-line argument takes after '=': nothing (a flag), a
/// boolean or nothing (true), a count of at least 1, an index of at least 0, one or two
/// such indices ("N" or "N,M"), one of the words listed, or any text.
enum class ArgValue { None, Bool, Count, Index, IndexPair, Word, Text };

/// A command-line argument Kokkos::initialize reads: its NAME in --kokkos-NAME.
struct CommandLineArgument {
  const char* name;
  ArgValue value;
  const char* words = "";  ///< ArgValue::Word: the words it takes, '|' between them
};

/// \brief The --kokkos-* arguments this Kokkos reads. It ignores (3.4) or only warns about
/// (4.x) a name it does not know, and aborts the process on a value it cannot read, so
/// the program checks them against this list first.
inline std::vector<CommandLineArgument> command_line_arguments() {
#if KOKKOS_VERSION >= 40000
  return {{"help", ArgValue::None},
          {"tools-help", ArgValue::None},
          {"disable-warnings", ArgValue::Bool},
          {"print-configuration", ArgValue::Bool},
          {"tune-internals", ArgValue::Bool},
          {"num-threads", ArgValue::Count},
          {"device-id", ArgValue::Index},
          {"map-device-id-by", ArgValue::Word, "mpi_rank|random"},
          {"tools-libs", ArgValue::Text},
          {"tools-library", ArgValue::Text},
          {"tools-args", ArgValue::Text}};
#else
  return {
      {"help", ArgValue::None},           {"tools-help", ArgValue::None},       {"disable-warnings", ArgValue::None},
      {"tune-internals", ArgValue::None}, {"threads", ArgValue::Count},         {"numa", ArgValue::Count},
      {"device-id", ArgValue::Index},     {"num-devices", ArgValue::IndexPair}, {"ndevices", ArgValue::IndexPair},
      {"skip-device", ArgValue::Index},   {"tools-library", ArgValue::Text},    {"tools-args", ArgValue::Text}};
#endif
}

}  // namespace kx
}  // namespace shardops

/// Hint that \p addr will be read soon. Random-target scatter and gather are bound by
/// the latency of cache misses, not by bandwidth: prefetching keeps several misses in
/// flight at once. Device passes compile it away.
/// SHARDOPS_PREFETCH_WRITE: the same for a row about to be written (read-modify-write
/// or overwritten), which fetches the line for ownership at once.
/// SHARDOPS_PREFETCH_ROW(p, words): the first and the last word of the row of \p words
/// words at \p p. A row that does not start on a cache line (NumPy aligns its buffers to
/// 16 bytes) spans one line more than it fills, and the miss on that line would come late.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define SHARDOPS_PREFETCH(addr) ((void)0)
#define SHARDOPS_PREFETCH_WRITE(addr) ((void)0)
#define SHARDOPS_PREFETCH_ROW(addr, words) ((void)0)
#elif defined(__GNUC__) || defined(__clang__)
#define SHARDOPS_PREFETCH(addr) __builtin_prefetch((addr))
#define SHARDOPS_PREFETCH_WRITE(addr) __builtin_prefetch((addr), 1)
#define SHARDOPS_PREFETCH_ROW(addr, words)         \
  do {                                             \
    const auto* shardops_row_ = (addr);            \
    __builtin_prefetch(shardops_row_);             \
    __builtin_prefetch(shardops_row_ + (words)-1); \
  } while (0)
#else
#define SHARDOPS_PREFETCH(addr) ((void)0)
#define SHARDOPS_PREFETCH_WRITE(addr) ((void)0)
#define SHARDOPS_PREFETCH_ROW(addr, words) ((void)0)
#endif
