// Memory kept for reuse (core/HostMemory.hpp): a freed large block or scratch View
// comes back for the next request of its size, never while someone still holds it,
// and a zeroed tensor on reused memory is still all zeros. Fresh memory an op will write
// whole is faulted in at once (on one host thread); zeros an op may leave untouched are not.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Tensor.hpp"

namespace {

using shardops::Init;
using shardops::Tensor;
using HostBytes = Kokkos::View<unsigned char*, Kokkos::HostSpace>;
using HostInts = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;

constexpr std::size_t kBig = std::size_t(16) << 20;  // above the size worth keeping

bool host_tensors() { return std::is_same<shardops::MemSpace, Kokkos::HostSpace>::value; }

TEST(HostMemory, FreedTensorBlockServesTheNextTensorOfItsSize) {
  if (!host_tensors()) GTEST_SKIP() << "tensor blocks are kept for host memory only";
  shardops::release_kept_memory();
  const unsigned char* first = nullptr;
  {
    Tensor t(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(kBig)}, Init::Uninitialized, "a");
    first = t.data();
    std::memset(t.data(), 0xab, t.nbytes());
  }
  EXPECT_GE(shardops::kept_memory_bytes(), kBig);
  Tensor again(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(kBig)}, Init::Zero, "b");
  EXPECT_EQ(again.data(), first);
  // Reused memory held 0xab: Init::Zero must still give zeros.
  for (std::size_t i = 0; i < again.nbytes(); i += 4093) ASSERT_EQ(again.data()[i], 0) << i;
  EXPECT_EQ(again.data()[again.nbytes() - 1], 0);
  // A block in use is not handed out twice.
  Tensor other(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(kBig)}, Init::Zero, "c");
  EXPECT_NE(other.data(), again.data());
}

TEST(HostMemory, BlockMuchLargerThanTheRequestIsNotUsed) {
  if (!host_tensors()) GTEST_SKIP() << "tensor blocks are kept for host memory only";
  shardops::release_kept_memory();
  const unsigned char* big = nullptr;
  {
    Tensor t(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(4 * kBig)}, Init::Uninitialized, "a");
    big = t.data();
  }
  Tensor small(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(kBig)}, Init::Uninitialized, "b");
  EXPECT_NE(small.data(), big);
}

TEST(HostMemory, ScratchViewIsReusedOnlyOnceFree) {
  shardops::release_kept_memory();
  const std::size_t n = kBig / sizeof(std::int64_t);
  HostInts held = shardops::allocate_uninitialized<HostInts>("held", n);
  const std::int64_t* p = nullptr;
  {
    HostInts a = shardops::allocate_uninitialized<HostInts>("a", n);
    EXPECT_NE(a.data(), held.data());
    p = a.data();
  }
  // A little smaller fits the freed one (a prefix of it); the held one is never used.
  HostInts b = shardops::allocate_uninitialized<HostInts>("b", n - 100);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.extent(0), n - 100);
  HostInts c = shardops::allocate_uninitialized<HostInts>("c", n);
  EXPECT_NE(c.data(), p);
  EXPECT_NE(c.data(), held.data());
}

TEST(HostMemory, ScratchInUseIsCountedUntilFreed) {
  // The memory budget adds it to the tensors' bytes (core/MemoryBudget.hpp).
  shardops::release_kept_memory();
  const std::size_t before = shardops::scratch_in_use_bytes();
  {
    HostBytes a = shardops::allocate_uninitialized<HostBytes>("a", kBig);
    EXPECT_EQ(shardops::scratch_in_use_bytes(), before + kBig);
    const HostBytes copy = a;  // a second holder: still one allocation
    EXPECT_EQ(shardops::scratch_in_use_bytes(), before + kBig);
  }
  EXPECT_EQ(shardops::scratch_in_use_bytes(), before);
  EXPECT_GE(shardops::kept_memory_bytes(), kBig);  // free now: kept, not in use
}

TEST(HostMemory, ReleaseReturnsEverythingFree) {
  shardops::release_kept_memory();
  HostBytes held = shardops::allocate_uninitialized<HostBytes>("held", kBig);
  { HostBytes freed = shardops::allocate_uninitialized<HostBytes>("freed", kBig); }
  if (host_tensors()) {
    Tensor t(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(kBig)}, Init::Uninitialized, "t");
  }
  EXPECT_GE(shardops::kept_memory_bytes(), kBig);
  shardops::release_kept_memory();
  EXPECT_EQ(shardops::kept_memory_bytes(), 0u);
  // The held View is untouched by the release.
  held(kBig - 1) = 7;
  EXPECT_EQ(held(kBig - 1), 7);
}

TEST(HostMemory, SmallAllocationsAreNotKept) {
  shardops::release_kept_memory();
  { HostBytes small = shardops::allocate_uninitialized<HostBytes>("small", 4096); }
  EXPECT_EQ(shardops::kept_memory_bytes(), 0u);
}

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
// Whether this kernel faults pages in on request (Linux 5.14 and later).
bool kernel_populates() {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = madvise(p, page, MADV_POPULATE_WRITE) == 0;
  munmap(p, page);
  return ok;
}

// The fraction of the whole pages inside [p, p + bytes) that are resident.
double resident_fraction(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
  std::vector<unsigned char> in((end - begin) / page);
  if (in.empty() || mincore(reinterpret_cast<void*>(begin), end - begin, in.data()) != 0) return -1;
  std::size_t resident = 0;
  for (unsigned char c : in) resident += c & 1;
  return static_cast<double>(resident) / static_cast<double>(in.size());
}

TEST(HostMemory, FreshMemoryIsFaultedInOnlyWhereItWillBeWritten) {
  if (!host_tensors()) GTEST_SKIP() << "tensor blocks are host memory only here";
  if (!kernel_populates()) GTEST_SKIP() << "this kernel lacks MADV_POPULATE_WRITE";
  // On several host threads the kernels' own first touches fault the pages in instead.
  const bool one_thread = shardops::kx::concurrency(Kokkos::DefaultHostExecutionSpace()) == 1;
  auto faulted_in = [](const void* p, std::size_t bytes) { return resident_fraction(p, bytes) == 1.0; };
  auto untouched = [](const void* p, std::size_t bytes) { return resident_fraction(p, bytes) < 0.05; };
  shardops::release_kept_memory();
  const shardops::Shape shape{static_cast<std::int64_t>(kBig)};
  {
    // Zeros an op may leave untouched (a sparse scatter): fresh pages stay unbacked.
    Tensor sparse(shardops::DType::UInt8, shape, Init::Zero, "sparse");
    EXPECT_TRUE(untouched(sparse.data(), sparse.nbytes()));
    // Zeros an accumulation reads and writes all over, and outputs written whole.
    Tensor dense(shardops::DType::UInt8, shape, Init::ZeroDense, "dense");
    EXPECT_TRUE(one_thread ? faulted_in(dense.data(), dense.nbytes()) : untouched(dense.data(), dense.nbytes()));
    for (std::size_t i = 0; i < dense.nbytes(); i += 4093) ASSERT_EQ(dense.data()[i], 0) << i;
    Tensor whole(shardops::DType::UInt8, shape, Init::Uninitialized, "whole");
    EXPECT_TRUE(one_thread ? faulted_in(whole.data(), whole.nbytes()) : untouched(whole.data(), whole.nbytes()));
  }
  shardops::release_kept_memory();
  // A new scratch View (its data starts past a header, not on a page).
  HostBytes scratch = shardops::allocate_uninitialized<HostBytes>("scratch", kBig);
  EXPECT_TRUE(one_thread ? faulted_in(scratch.data(), kBig) : untouched(scratch.data(), kBig));
}
#endif

}  // namespace
