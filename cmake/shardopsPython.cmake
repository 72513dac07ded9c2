# The Python module (python/): Python 3's development files and pybind11 turn it on by
# default (NumPy and mpi4py are needed when it runs, not to build it). It links the static
# library into a shared extension, so everything is built position independent when it is on (include this before add_subdirectory(src)).
# Debian's python3 (where NumPy, h5py and mpi4py are packaged) is preferred over others
# on PATH; pass -DPython3_EXECUTABLE=... to use another.
if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED SKBUILD AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
find_package(pybind11 CONFIG QUIET)
set(_shardops_python_found FALSE)
if(Python3_FOUND AND pybind11_FOUND)
  set(_shardops_python_found TRUE)
endif()
option(SHARDOPS_ENABLE_PYTHON "Build the Python module (needs Python 3's development files and pybind11)"
  ${_shardops_python_found})
if(SHARDOPS_ENABLE_PYTHON)
  if(NOT _shardops_python_found)
    message(FATAL_ERROR "SHARDOPS_ENABLE_PYTHON: need Python 3's development files and pybind11 "
      "(Debian: python3-dev pybind11-dev)")
  endif()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  message(STATUS "Python module: ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION}")
else()
  message(STATUS "Python module: off (needs Python 3's development files and pybind11)")
endif()
