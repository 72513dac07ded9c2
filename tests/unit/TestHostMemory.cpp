// Memory kept for reuse (core/HostMemory.hpp): a freed large block or scratch View
// comes back for the next request of its size, never while someone still holds it,
// and a zeroed tensor on reused memory is still all zeros.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

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

}  // namespace
