# samples/train_fashion_mnist --strategy ps across processes, on a slice of the
# data: troupe-launch --workers 2 --ps 2 starts the chief, the workers and the
# parameter servers; the chief alone trains and prints, the model learns
# (asynchronous training is not bitwise reproducible: the accuracy is checked
# against chance, 0.10), every task ends on its own once the chief is done,
# and a mirrored run refuses a cluster with ps tasks.
# Inputs: PROGRAM, LAUNCHER, WORK (a scratch directory).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${LAUNCHER} --workers 2 --ps 2 --timeout-seconds 200 --
                        ${PROGRAM} --strategy ps --limit 2048 --epochs 2 --quiet --seed 3 --out ${WORK}/out
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 220)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "troupe-launch ... --strategy ps exited with ${rc}:\n${out}\n${err}")
endif()
if(NOT out MATCHES "\\[chief:0\\] [^\n]*one process each")
  message(FATAL_ERROR "the chief did not train across processes:\n${out}")
endif()
if(out MATCHES "\\[(worker|ps):[0-9]+\\]")
  message(FATAL_ERROR "a worker or ps task printed (only the chief should):\n${out}")
endif()
string(REGEX MATCH "\\[chief:0\\] final test accuracy ([0-9.]+)" _ "${out}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 LESS 0.5)
  message(FATAL_ERROR "the model did not learn across processes (measured about 0.70 after 2 epochs "
                      "of 2048 images; chance is 0.10):\n${out}")
endif()
if(err MATCHES "stopping the tasks still running|was killed by troupe-launch")
  message(FATAL_ERROR "the launcher had to stop tasks that should have ended with the chief:\n${err}")
endif()

execute_process(COMMAND ${LAUNCHER} --workers 1 --ps 1 --timeout-seconds 60 --
                        ${PROGRAM} --limit 256 --epochs 1 --quiet --out ${WORK}/mirrored
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 80)
if(rc EQUAL 0 OR NOT err MATCHES "pass --strategy ps")
  message(FATAL_ERROR "a mirrored run in a cluster with ps tasks should fail naming --strategy ps (${rc}):\n${out}\n${err}")
endif()
