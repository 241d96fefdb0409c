# The API reference: Doxygen (Debian's doxygen) over the public headers, the
# ones installed, from their `///` comments. `cmake --build build --target
# docs` writes build/docs/api/html/index.html. It is part of the default
# build when Doxygen is there (scripts/setup.sh installs it), and a warning
# (a malformed comment, a \param that names no parameter) fails it.
find_package(Doxygen 1.9 QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "Doxygen not found: no API reference (target docs); apt-get install doxygen")
  return()
endif()
get_property(troupe_public_headers GLOBAL PROPERTY TROUPE_PUBLIC_HEADERS)
list(APPEND troupe_public_headers ${CMAKE_SOURCE_DIR}/strategies/troupe/troupe.hpp)
list(JOIN troupe_public_headers " \\\n    " TROUPE_DOXYGEN_INPUT)
set(TROUPE_DOXYGEN_OUTPUT ${CMAKE_BINARY_DIR}/docs/api)
configure_file(${CMAKE_SOURCE_DIR}/cmake/Doxyfile.in ${CMAKE_BINARY_DIR}/Doxyfile @ONLY)
add_custom_command(
  OUTPUT ${TROUPE_DOXYGEN_OUTPUT}/html/index.html
  COMMAND ${CMAKE_COMMAND} -E make_directory ${TROUPE_DOXYGEN_OUTPUT}
  COMMAND Doxygen::doxygen ${CMAKE_BINARY_DIR}/Doxyfile
  DEPENDS ${troupe_public_headers} ${CMAKE_BINARY_DIR}/Doxyfile
  COMMENT "API reference (Doxygen) -> ${TROUPE_DOXYGEN_OUTPUT}/html/index.html"
  VERBATIM)
add_custom_target(docs ALL DEPENDS ${TROUPE_DOXYGEN_OUTPUT}/html/index.html)
