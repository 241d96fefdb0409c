# samples/train_fashion_mnist --strategy ps --checkpoint, on a slice of the data:
# 1. a run stopped after epoch 2 saved after each epoch, printing the state's
#    fingerprint (weights and the servers' optimizer slots);
# 2. a run resumed from that checkpoint starts at epoch 3 with exactly the
#    saved state (its "resumed" fingerprint is the one printed after the save)
#    and reaches a sensible accuracy (asynchronous training is not bitwise
#    reproducible, so the final weights are not compared);
# 3. the same checkpoint resumes into 3 parameter servers (another sharding);
# 4. a corrupt checkpoint fails naming the file, before training.
# Inputs: PROGRAM, WORK (a scratch directory).
set(common --strategy ps --workers 2 --limit 1024 --batch 64 --epochs 3 --quiet --seed 7)

include(${CMAKE_CURRENT_LIST_DIR}/train_job.cmake)

# The fingerprint of `text`'s line "<what> ... after epoch <epoch>, state fingerprint X".
function(fingerprint_after text what epoch out_var)
  string(REGEX MATCH "${what} [^\n]* after epoch ${epoch}, state fingerprint ([0-9a-f]+)" _ "${text}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no \"${what} ... after epoch ${epoch}, state fingerprint\" line in:\n${text}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(check_resumed text saved_fingerprint)
  fingerprint_after("${text}" resumed 2 resumed_fingerprint)
  if(NOT resumed_fingerprint STREQUAL saved_fingerprint)
    message(FATAL_ERROR "resumed with state ${resumed_fingerprint}, not the saved ${saved_fingerprint}:\n${text}")
  endif()
  if(text MATCHES "epoch [12]/3:" OR NOT text MATCHES "epoch 3/3:")
    message(FATAL_ERROR "the resumed run did not train epoch 3 alone:\n${text}")
  endif()
  # Measured about 0.70 after 3 epochs of 1024 images; a model that does not
  # learn (or lost its weights) stays near chance, 0.10.
  string(REGEX MATCH "final test accuracy ([0-9.]+)" _ "${text}")
  if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 LESS 0.5)
    message(FATAL_ERROR "the resumed run reached a test accuracy of '${CMAKE_MATCH_1}', below the floor 0.5:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

run_job(first --stop-after 2 --checkpoint ${WORK}/ckpt --out ${WORK}/first)
fingerprint_after("${first}" saved 1 _)
fingerprint_after("${first}" saved 2 saved)
if(first MATCHES "epoch 3/3:" OR first MATCHES "resumed")
  message(FATAL_ERROR "--stop-after 2 did not stop after epoch 2, or a fresh run resumed:\n${first}")
endif()
file(COPY ${WORK}/ckpt/model.ckpt DESTINATION ${WORK}/copy)

run_job(resumed --checkpoint ${WORK}/ckpt --out ${WORK}/resumed)
check_resumed("${resumed}" ${saved})

run_job(three_ps --ps 3 --checkpoint ${WORK}/copy --out ${WORK}/three_ps)
check_resumed("${three_ps}" ${saved})

file(WRITE ${WORK}/bad/model.ckpt "TROUPECK and then garbage")
execute_process(COMMAND ${PROGRAM} ${common} --checkpoint ${WORK}/bad --out ${WORK}/bad_out
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
if(rc EQUAL 0 OR NOT err MATCHES "bad/model.ckpt\" is not a valid troupe checkpoint" OR out MATCHES "epoch 1/3")
  message(FATAL_ERROR "a corrupt checkpoint was not refused before training (${rc}):\n${out}\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
