# Checks the objects of ops/src/cpu_kernels_isa.cpp (see ops/CMakeLists.txt).
# Inputs: DIR (the build's ops/ folder), NM, OBJDUMP.
foreach(isa baseline x86_64_v3 x86_64_v4)
  set(object ${DIR}/cpu_kernels_${isa}.o)
  if(NOT EXISTS ${object})
    message(FATAL_ERROR "no ${object}")
  endif()
  # 1. Every global symbol it defines but its entry point carries its suffix,
  #    so no template instance is merged with another build's.
  execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${object}
                  OUTPUT_VARIABLE symbols)
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^ ]+) " AND NOT CMAKE_MATCH_1 STREQUAL "troupe_cpu_kernels_${isa}"
       AND NOT CMAKE_MATCH_1 MATCHES "\\.troupe_${isa}$")
      message(FATAL_ERROR "${object} defines ${CMAKE_MATCH_1} under its own name: another "
                          "build's copy could replace it")
    endif()
  endforeach()
endforeach()

# 2. The portable kernels: baseline x86-64 only, no estimates, no FMA, and no
#    C-library math (whose code depends on the CPU).
set(baseline ${DIR}/cpu_kernels_baseline.o)
execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${baseline} OUTPUT_VARIABLE code)
foreach(pattern "%ymm" "%zmm" "vfmadd" "vfnmadd" "vfmsub" "rsqrt" "rcpps" "rcpss" "rcp14")
  string(FIND "${code}" "${pattern}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the portable kernels use ${pattern}")
  endif()
endforeach()
execute_process(COMMAND ${NM} --undefined-only --format=posix ${baseline} OUTPUT_VARIABLE undefined)
string(REPLACE "\n" ";" lines "${undefined}")
foreach(line IN LISTS lines)
  if(line MATCHES "^(exp|expf|exp2|exp2f|log|logf|log2|log2f|pow|powf|sin|sinf|cos|cosf|tanh|tanhf)(@[^ ]*)? ")
    message(FATAL_ERROR "the portable kernels call the C library's ${CMAKE_MATCH_1}")
  endif()
endforeach()
message(STATUS "kernel objects checked")
