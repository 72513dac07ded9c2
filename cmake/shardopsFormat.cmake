# format-check / format targets with the pinned clang-format (14, Debian's).
find_program(SHARDOPS_CLANG_FORMAT NAMES clang-format-14 clang-format)
if(SHARDOPS_CLANG_FORMAT)
  file(GLOB_RECURSE _shardops_format_files CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/src/*.hpp ${PROJECT_SOURCE_DIR}/src/*.cpp
    ${PROJECT_SOURCE_DIR}/apps/*.hpp ${PROJECT_SOURCE_DIR}/apps/*.cpp
    ${PROJECT_SOURCE_DIR}/tests/*.hpp ${PROJECT_SOURCE_DIR}/tests/*.cpp
    ${PROJECT_SOURCE_DIR}/bench/*.hpp ${PROJECT_SOURCE_DIR}/bench/*.cpp
    ${PROJECT_SOURCE_DIR}/python/*.hpp ${PROJECT_SOURCE_DIR}/python/*.cpp)
  add_custom_target(format-check
    COMMAND ${SHARDOPS_CLANG_FORMAT} --dry-run --Werror ${_shardops_format_files}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} COMMENT "clang-format --dry-run --Werror")
  add_custom_target(format
    COMMAND ${SHARDOPS_CLANG_FORMAT} -i ${_shardops_format_files}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} COMMENT "clang-format -i")
endif()
