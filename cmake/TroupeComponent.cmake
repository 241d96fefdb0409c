# troupe_add_component(<name> SOURCES ... HEADERS ... DEPS ... PRIVATE_DEPS ...)
#
# One folder, one component: a static library `troupe_<name>`. Its headers
# live under <name>/troupe/<name>/ and its sources under <name>/src/, so that
# `#include <troupe/<name>/...>` resolves from the source tree as it does from
# an installed one. SOURCES are relative to src/, HEADERS (the public ones,
# installed) to troupe/<name>/, subfolders kept.
function(troupe_add_component name)
  cmake_parse_arguments(arg "" "" "SOURCES;HEADERS;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target troupe_${name})
  list(TRANSFORM arg_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/src/)
  add_library(${target} STATIC ${arg_SOURCES})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${TROUPE_GENERATED_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC ${arg_DEPS} PRIVATE ${arg_PRIVATE_DEPS})
  add_library(troupe::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS ${target} EXPORT troupeTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(header IN LISTS arg_HEADERS)
    # The API reference (cmake/TroupeDocs.cmake) covers exactly these.
    set_property(GLOBAL APPEND PROPERTY TROUPE_PUBLIC_HEADERS ${CMAKE_CURRENT_SOURCE_DIR}/troupe/${name}/${header})
    get_filename_component(subdir ${header} DIRECTORY)
    install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/troupe/${name}/${header}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/troupe/${name}/${subdir})
  endforeach()
endfunction()
