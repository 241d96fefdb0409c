# cmake -P script behind the libtorch_fashion_mnist test: the LibTorch sample
# trained with MirroredStrategy (2 replicas in one process) and with
# MultiWorkerMirroredStrategy (2 processes under troupe-launch) gives the same
# test accuracy, to every printed digit, after the same steps: troupe's
# all-reduce of the gradients (through DLPack) is the same sum either way.
#
# Inputs (-D): PROGRAM LAUNCHER
foreach(var PROGRAM LAUNCHER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "-D${var}=... is required")
  endif()
endforeach()
set(args --epochs 1 --max-steps 40)
execute_process(COMMAND "${PROGRAM}" --strategy mirrored --replicas 2 ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE mirrored ERROR_VARIABLE mirrored)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mirrored run failed (${rc}):\n${mirrored}")
endif()
execute_process(COMMAND "${LAUNCHER}" --workers 2 -- "${PROGRAM}" --strategy multi_worker ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE multi ERROR_VARIABLE multi)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "multi-worker run failed (${rc}):\n${multi}")
endif()
string(REGEX MATCH "RESULT test_accuracy ([0-9.]+)" found "${mirrored}")
set(mirrored_accuracy "${CMAKE_MATCH_1}")
string(REGEX MATCH "RESULT test_accuracy ([0-9.]+)" found "${multi}")
set(multi_accuracy "${CMAKE_MATCH_1}")
if(mirrored_accuracy STREQUAL "" OR NOT mirrored_accuracy STREQUAL multi_accuracy)
  message(FATAL_ERROR "the two runs differ: mirrored '${mirrored_accuracy}', multi-worker '${multi_accuracy}'\n"
                      "mirrored:\n${mirrored}\nmulti-worker:\n${multi}")
endif()
# 40 steps of Adam reach well above chance (0.1) on Fashion-MNIST.
if(mirrored_accuracy LESS 0.6)
  message(FATAL_ERROR "test accuracy ${mirrored_accuracy} after 40 steps: the model did not learn")
endif()
message(STATUS "mirrored and multi-worker: test accuracy ${mirrored_accuracy}")
