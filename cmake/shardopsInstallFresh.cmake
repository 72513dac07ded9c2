# cmake -DPREFIX=<dir> -DBUILD=<build dir> -P shardopsInstallFresh.cmake: installs the build
# into an emptied PREFIX (ctest install_package), so what is there is what the rules install.
if(NOT PREFIX OR NOT BUILD)
  message(FATAL_ERROR "usage: cmake -DPREFIX=<dir> -DBUILD=<build dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${PREFIX}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD} --prefix ${PREFIX} failed (${rc})")
endif()
