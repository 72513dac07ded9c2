# Test registration helpers: unit tests (no MPI) and MPI tests run at several rank counts.
set(SHARDOPS_TEST_RANKS 1 2 3 4 CACHE STRING "Rank counts every MPI test runs at")
# This machine has 2 cores and CI runs as root: Open MPI needs both flags. Ranks yield when
# idle: Open MPI does not count 2 ranks on 2 busy cores as oversubscribed and would spin.
set(SHARDOPS_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root CACHE STRING "Extra mpiexec flags for tests")

function(shardops_add_unit_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE shardops::shardops shardops_test_main shardops_warnings)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit" TIMEOUT 600 ENVIRONMENT "OMP_NUM_THREADS=2")
endfunction()

# Registers ${name}_np_N for every N in SHARDOPS_TEST_RANKS.
function(shardops_add_mpi_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE shardops::shardops shardops_mpi_test_main shardops_warnings)
  foreach(np IN LISTS SHARDOPS_TEST_RANKS)
    add_test(NAME ${name}_np_${np}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SHARDOPS_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_np_${np} PROPERTIES LABELS "mpi;np${np}" TIMEOUT 120 PROCESSORS ${np}
      ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_MCA_pml=ob1;OMPI_MCA_btl=self,vader;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
endfunction()
