# Finds Kokkos, MPI and parallel HDF5; shared by the build tree and (through
# shardopsConfig.cmake) by consumers of the installed package.

# No version in find_package: Debian's Kokkos 3.4 ships a SameMajorVersion
# version file that rejects any 4.x request, and Kokkos 4 the reverse.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4.1)
  message(FATAL_ERROR "shardops needs Kokkos >= 3.4.1, found ${Kokkos_VERSION} in ${Kokkos_DIR}")
endif()
message(STATUS "Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR} (devices: ${Kokkos_DEVICES})")

# Debian's Trilinos-built Kokkos points Kokkos::kokkos at /usr/lib/include,
# which does not exist; swap in the real include dirs when that happens.
if(TARGET Kokkos::kokkos)
  get_target_property(_shardops_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_shardops_fixed_inc)
  set(_shardops_needs_fix FALSE)
  foreach(_dir IN LISTS _shardops_kokkos_inc)
    if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
      list(APPEND _shardops_fixed_inc "${_dir}")
    else()
      set(_shardops_needs_fix TRUE)
    endif()
  endforeach()
  if(_shardops_needs_fix)
    list(APPEND _shardops_fixed_inc ${Kokkos_INCLUDE_DIRS})
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_shardops_fixed_inc}")
  endif()
endif()

find_package(MPI REQUIRED COMPONENTS CXX)

# FindHDF5 probes the compiler wrappers with a C test program.
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
