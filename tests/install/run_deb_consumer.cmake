# cmake -P script behind the deb_consumer test:
#   1. builds troupe's Debian package with CPack (cpack -G DEB),
#   2. unpacks it into a scratch root (dpkg-deb -x: no root, no dpkg database)
#      and checks its files and dependencies,
#   3. builds and runs tests/install/consumer against the root with CMake
#      (find_package(troupe)) and with pkg-config (troupe.pc), as a user would.
# Every step fails the test with the command's output.
#
# Inputs (-D): TROUPE_BINARY_DIR WORK_DIR SOURCE_DIR GENERATOR MAKE_PROGRAM
# CXX_COMPILER LAUNCHER EXTRA_FLAGS
cmake_minimum_required(VERSION 3.25)

foreach(var TROUPE_BINARY_DIR WORK_DIR SOURCE_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_deb_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run step)
  cmake_parse_arguments(arg "" "WORKING_DIRECTORY" "COMMAND" ${ARGN})
  list(JOIN arg_COMMAND " " text)
  message(STATUS "[${step}] ${text}")
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY "${WORK_DIR}")
  endif()
  execute_process(COMMAND ${arg_COMMAND} WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[${step}] failed (${rc}):\n${out}")
  endif()
  message("${out}")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# -- 1. the package -----------------------------------------------------------------
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/package")
find_program(CPACK cpack HINTS "${CMAKE_COMMAND}/.." REQUIRED)
run(cpack COMMAND "${CPACK}" -G DEB --config "${TROUPE_BINARY_DIR}/CPackConfig.cmake" -B "${WORK_DIR}/package")
file(GLOB debs "${WORK_DIR}/package/*.deb")
list(LENGTH debs deb_count)
if(NOT deb_count EQUAL 1)
  message(FATAL_ERROR "[cpack] expected one .deb in ${WORK_DIR}/package, found: ${debs}")
endif()

# -- 2. its contents ------------------------------------------------------------------
set(root "${WORK_DIR}/root")
run(unpack COMMAND dpkg-deb -x "${debs}" "${root}")
run(fields COMMAND dpkg-deb -f "${debs}" Package Version Depends)
foreach(expected "Package: troupe-dev" "libcaf-dev" "libucx-dev" "libboost-context-dev")
  string(FIND "${last_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "[fields] the package's control fields lack '${expected}':\n${last_output}")
  endif()
endforeach()
foreach(file include/troupe/troupe.hpp lib/libtroupe_core.a lib/libtroupe_strategies.a
             lib/cmake/troupe/troupeConfig.cmake lib/pkgconfig/troupe.pc bin/troupe-launch bin/troupe-sim)
  if(NOT EXISTS "${root}/usr/${file}")
    message(FATAL_ERROR "[contents] the package has no /usr/${file}")
  endif()
endforeach()

# -- 3a. a CMake consumer ---------------------------------------------------------------
set(configure_args -S "${SOURCE_DIR}" -B "${WORK_DIR}/cmake-consumer" -G "${GENERATOR}"
                   -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${root}/usr"
                   "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(LAUNCHER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
if(EXTRA_FLAGS)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
endif()
run(cmake-configure COMMAND ${CMAKE_COMMAND} ${configure_args})
string(REGEX MATCH "troupe [^ ]+ from ([^\n]*)" found "${last_output}")
string(FIND "${CMAKE_MATCH_1}" "${root}/" position)
if(NOT position EQUAL 0)
  message(FATAL_ERROR "[cmake-configure] found troupe in '${CMAKE_MATCH_1}', not in the unpacked package")
endif()
run(cmake-build COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/cmake-consumer" -j 2)
run(cmake-run COMMAND "${WORK_DIR}/cmake-consumer/troupe_consumer")
if(NOT last_output MATCHES "all_reduce over 2 replicas OK")
  message(FATAL_ERROR "[cmake-run] troupe_consumer did not report success")
endif()

# -- 3b. a pkg-config consumer ------------------------------------------------------------
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${root}/usr/lib/pkgconfig")
run(pkg-config COMMAND "${PKG_CONFIG}" --cflags --libs troupe)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
string(FIND "${last_output}" "-I${root}/usr/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "[pkg-config] troupe.pc's include path is not the unpacked package's:\n${last_output}")
endif()
set(compile ${CXX_COMPILER} -std=c++20 -O1 ${EXTRA_FLAGS} "${SOURCE_DIR}/main.cpp" -o "${WORK_DIR}/pc-consumer" ${flags})
if(LAUNCHER)
  list(PREPEND compile "${LAUNCHER}")
endif()
run(pkg-config-build COMMAND ${compile})
run(pkg-config-run COMMAND "${WORK_DIR}/pc-consumer")
if(NOT last_output MATCHES "all_reduce over 2 replicas OK")
  message(FATAL_ERROR "[pkg-config-run] the pkg-config consumer did not report success")
endif()
