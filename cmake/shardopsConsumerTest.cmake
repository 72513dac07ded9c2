# ctest tests (label "install") that the installed package works for a user's project:
# install_package installs this build into an empty <build>/install; install_consumer then
# configures, builds and runs tests/consumer against that install (find_package(shardops)),
# which also checks that only public headers were installed and that find_package(shardops)
# left the consumer's project as it was.
set(_shardops_test_prefix ${PROJECT_BINARY_DIR}/install)
# The prefix is emptied first, so a header an older build installed cannot hide a wrong rule.
add_test(NAME install_package
  COMMAND ${CMAKE_COMMAND} -DPREFIX=${_shardops_test_prefix} -DBUILD=${PROJECT_BINARY_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/shardopsInstallFresh.cmake)
add_test(NAME install_consumer
  COMMAND ${CMAKE_CTEST_COMMAND} --build-and-test ${PROJECT_SOURCE_DIR}/tests/consumer ${PROJECT_BINARY_DIR}/consumer
          --build-generator ${CMAKE_GENERATOR} --build-makeprogram ${CMAKE_MAKE_PROGRAM}
          --build-options -DCMAKE_PREFIX_PATH=${_shardops_test_prefix} -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
                          -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
                          -DKokkos_DIR=${Kokkos_DIR} -DSHARDOPS_SOURCE_DIR=${PROJECT_SOURCE_DIR}
          --test-command ${CMAKE_CTEST_COMMAND} --output-on-failure)
set_tests_properties(install_package PROPERTIES LABELS install FIXTURES_SETUP shardops_install)
set_tests_properties(install_consumer PROPERTIES LABELS install FIXTURES_REQUIRED shardops_install
  TIMEOUT 600 PROCESSORS 2
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_pml=ob1;OMPI_MCA_rmaps_base_oversubscribe=1")
