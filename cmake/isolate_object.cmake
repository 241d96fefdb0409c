# cmake -DINPUT=in.o -DOUTPUT=out.o -DKEEP=symbol -DSUFFIX=isa -DNM=nm -DOBJCOPY=objcopy -P isolate_object.cmake
#
# Copies an object file, renaming every global symbol it defines except KEEP
# to <name>.troupe_<SUFFIX>. core/cpu_kernels_isa.cpp is compiled once per
# instruction set, and each build defines the same Eigen and standard-library
# template instances (weak, COMDAT): left alone, the linker keeps one copy of
# each for the whole program, so the baseline kernels could run AVX-512 code
# (SIGILL on a CPU without it) or the AVX-512 kernels baseline code. Renamed,
# each build calls only its own copies. Undefined references (memcpy,
# operator new) are left as they are.
foreach(var INPUT OUTPUT KEEP SUFFIX NM OBJCOPY)
  if(NOT ${var})
    message(FATAL_ERROR "isolate_object.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${INPUT}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isolate_object.cmake: ${NM} failed on ${INPUT}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(map "")
set(kept FALSE)
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ ]+) ")
    set(name "${CMAKE_MATCH_1}")
    if(name STREQUAL KEEP)
      set(kept TRUE)
    else()
      string(APPEND map "${name} ${name}.troupe_${SUFFIX}\n")
    endif()
  endif()
endforeach()
if(NOT kept)
  message(FATAL_ERROR "isolate_object.cmake: ${INPUT} does not define ${KEEP}")
endif()
file(WRITE ${OUTPUT}.symbols "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUTPUT}.symbols ${INPUT} ${OUTPUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isolate_object.cmake: ${OBJCOPY} failed on ${INPUT}")
endif()
