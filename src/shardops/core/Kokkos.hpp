#pragma once
/// \file
/// \brief The execution and memory spaces the type-erased API runs in, and the
/// unmanaged View shapes kernels take.

#include <Kokkos_Core.hpp>

namespace shardops {

/// Where the type-erased ops (Tensor, DistTensor) run: Kokkos' default space.
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

using UnmanagedTraits = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

/// A contiguous run of elements.
template <class T, class Mem = MemSpace>
using FlatView = Kokkos::View<T*, Kokkos::LayoutRight, Mem, UnmanagedTraits>;

/// Row-major [rows, cols] matrix: the shape every op works in (index rows x K,
/// slices x slice_size).
template <class T, class Mem = MemSpace>
using MatrixView = Kokkos::View<T**, Kokkos::LayoutRight, Mem, UnmanagedTraits>;

}  // namespace shardops
