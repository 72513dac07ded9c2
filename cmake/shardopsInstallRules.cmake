# Installs the library, its headers and a CMake package: find_package(shardops)
# then target_link_libraries(app shardops::shardops).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS shardops shardops_warnings EXPORT shardopsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/shardops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
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
  ${PROJECT_SOURCE_DIR}/cmake/shardopsDependencies.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/shardops)
