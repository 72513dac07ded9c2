# Finds Kokkos, MPI and parallel HDF5 for the build. (Consumers of the installed package
# find them through shardopsConfig.cmake, which does not change their project: it enables
# no language, and takes HDF5 as this build found it instead of running FindHDF5.)

# No version in find_package: Debian's Kokkos 3.4 ships a SameMajorVersion
# version file that rejects any 4.x request, and Kokkos 4 the reverse.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4.1)
  message(FATAL_ERROR "shardops needs Kokkos >= 3.4.1, found ${Kokkos_VERSION} in ${Kokkos_DIR}")
endif()
message(STATUS "Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR} (devices: ${Kokkos_DEVICES})")

include(shardopsKokkosInclude)
shardops_fix_kokkos_include_dirs()

find_package(MPI REQUIRED COMPONENTS CXX)

# FindHDF5 probes the compiler wrappers with a C test program (our build only).
get_property(_shardops_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "C" IN_LIST _shardops_languages)
  enable_language(C)
endif()
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "shardops needs a parallel (MPI) HDF5; found a serial one in ${HDF5_INCLUDE_DIRS}")
endif()
if(NOT TARGET HDF5::HDF5)
  add_library(HDF5::HDF5 INTERFACE IMPORTED)
  set_target_properties(HDF5::HDF5 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${HDF5_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${HDF5_LIBRARIES}"
    INTERFACE_COMPILE_DEFINITIONS "${HDF5_DEFINITIONS}")
endif()
# What the installed package's shardops::hdf5 target holds (shardopsConfig.cmake): the
# parallel HDF5 found here, so consumers need neither FindHDF5 nor the C language.
string(REPLACE "-D" "" SHARDOPS_HDF5_DEFINITIONS "${HDF5_DEFINITIONS}")
set(SHARDOPS_HDF5_INCLUDE_DIRS "${HDF5_INCLUDE_DIRS}")
set(SHARDOPS_HDF5_LIBRARIES "${HDF5_LIBRARIES}")
