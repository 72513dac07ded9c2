# Debian's Trilinos-built Kokkos (libtrilinos-kokkos-dev 13.2) points Kokkos::kokkos's
# INTERFACE_INCLUDE_DIRECTORIES at /usr/lib/include, which does not exist (its headers are
# in /usr/include/trilinos, which it reports as Kokkos_INCLUDE_DIRS); CMake then refuses
# every target that links Kokkos::kokkos. Used by the build (shardopsDependencies.cmake)
# and by consumers of the installed package (shardopsConfig.cmake), so it is a function
# (its variables stay inside) and it changes nothing unless a listed directory is missing:
# then it drops the missing ones and appends Kokkos_INCLUDE_DIRS, on that target only.
function(shardops_fix_kokkos_include_dirs)
  if(NOT TARGET Kokkos::kokkos)
    return()
  endif()
  get_target_property(_dirs Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _dirs)
    return()
  endif()
  set(_kept)
  set(_missing FALSE)
  foreach(_dir IN LISTS _dirs)
    if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
      list(APPEND _kept "${_dir}")
    else()
      set(_missing TRUE)
    endif()
  endforeach()
  if(_missing)
    list(APPEND _kept ${Kokkos_INCLUDE_DIRS})
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
  endif()
endfunction()
