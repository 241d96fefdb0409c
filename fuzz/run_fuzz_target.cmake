# Runs one fuzz target (ctest's fuzz.<name>): copies the seed corpus CORPUS
# to a scratch folder under WORK, so that what libFuzzer adds stays out of
# the source tree, and fuzzes it for TROUPE_FUZZ_SECONDS seconds (10 unless
# set). A crash, leak, timeout (10 s per input) or memory blow-up (2 GiB)
# fails the test; the input that caused it is WORK/crash-* (or leak-*,
# timeout-*, oom-*), ready for `FUZZER <that file>` to reproduce.
cmake_minimum_required(VERSION 3.25)

set(seconds 10)
if(DEFINED ENV{TROUPE_FUZZ_SECONDS} AND NOT "$ENV{TROUPE_FUZZ_SECONDS}" STREQUAL "")
  set(seconds "$ENV{TROUPE_FUZZ_SECONDS}")
endif()
if(NOT seconds MATCHES "^[0-9]+$" OR seconds EQUAL 0)
  message(FATAL_ERROR "TROUPE_FUZZ_SECONDS must be a positive number of seconds, not \"${seconds}\"")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${CORPUS}/ DESTINATION ${WORK}/corpus)

execute_process(
  COMMAND ${FUZZER} -max_total_time=${seconds} -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
          -malloc_limit_mb=1024 -artifact_prefix=${WORK}/ ${WORK}/corpus
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a failing input (exit status ${result}); it is in ${WORK}/")
endif()
