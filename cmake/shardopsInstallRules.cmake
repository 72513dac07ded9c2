# Installs the library, its headers and a CMake package: find_package(shardops)
# then target_link_libraries(app shardops::shardops).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The library only: its warnings target (shardops_warnings) is linked for our build alone.
install(TARGETS shardops EXPORT shardopsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers: every header under src/shardops but those in a detail/ folder (the
# implementation, namespace detail), plus the generated Version.hpp.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/shardops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp"
  PATTERN "detail" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/src/shardops/Version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardops)
install(EXPORT shardopsTargets NAMESPACE shardops:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/shardops)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/shardopsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/shardopsConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/shardops)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shardopsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/shardopsConfig.cmake
  ${PROJECT_BINARY_DIR}/shardopsConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/shardopsKokkosInclude.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/shardops)
