# Checks of samples/train_fashion_mnist --strategy tpu on a slice of the data (fast):
# 1. it trains on emulated TPU cores and says so; each epoch takes
#    ceil(steps / steps_per_run) host round trips, the partial last batch
#    dropped (static shapes);
# 2. steps_per_run changes the round trips, not the arithmetic: 1 and 3 steps
#    per round trip end with the same weights;
# 3. --checkpoint resumes to the same weights;
# 4. with no partial batch it trains exactly as the mirrored job with the same
#    replicas and global batch (the same step function, the same weights);
# 5. the model learns (test accuracy far above chance);
# 6. bad --strategy tpu flags fail with exit status 2, naming the flag.
# Inputs: PROGRAM, WORK (a scratch directory).
# 1000 examples at batch 128: 7 full steps, the last 104 examples dropped.
set(examples 1000)
set(batch 128)
set(common --batch ${batch} --quiet --seed 7 --epochs 2)
set(tpu --strategy tpu --tpu-cores 4 --limit ${examples})

include(${CMAKE_CURRENT_LIST_DIR}/train_job.cmake)

# Every epoch line of `text` must report `trips` round trips for `steps` steps.
function(expect_round_trips text epochs steps trips)
  string(REGEX MATCHALL "epoch [0-9]+/[0-9]+: [^\n]*" lines "${text}")
  list(LENGTH lines count)
  if(NOT count EQUAL epochs)
    message(FATAL_ERROR "expected ${epochs} epoch lines, got ${count}:\n${text}")
  endif()
  foreach(line IN LISTS lines)
    if(NOT line MATCHES ", ${trips} host round trips for ${steps} steps$")
      message(FATAL_ERROR "expected ${trips} host round trips for ${steps} steps per epoch, got:\n${line}")
    endif()
  endforeach()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

math(EXPR steps "${examples} / ${batch}")
set(steps_per_run 3)
math(EXPR trips "(${steps} + ${steps_per_run} - 1) / ${steps_per_run}")
run_job(multi ${tpu} --steps-per-run ${steps_per_run} --out ${WORK}/multi)
if(NOT multi MATCHES "TPUStrategy\\(devices=\\[TPU:0, TPU:1, TPU:2, TPU:3\\]\\) on 4 emulated TPU cores")
  message(FATAL_ERROR "the header does not name the emulated TPU cores:\n${multi}")
endif()
expect_round_trips("${multi}" 2 ${steps} ${trips})

run_job(single ${tpu} --steps-per-run 1 --out ${WORK}/single)
expect_round_trips("${single}" 2 ${steps} ${steps})
fingerprint_of("${multi}" fm)
fingerprint_of("${single}" fs)
if(NOT fm STREQUAL fs)
  message(FATAL_ERROR "--steps-per-run 3 and 1 ended with different weights: ${fm} vs ${fs}")
endif()

# A run stopped after epoch 1 and resumed from its checkpoint ends as an uninterrupted one.
run_job(first ${tpu} --stop-after 1 --checkpoint ${WORK}/ckpt --out ${WORK}/ckpt_out)
run_job(resumed ${tpu} --checkpoint ${WORK}/ckpt --out ${WORK}/ckpt_out)
if(NOT resumed MATCHES "resumed from .* after epoch 1")
  message(FATAL_ERROR "the second run did not resume:\n${resumed}")
endif()
fingerprint_of("${resumed}" fr)
if(NOT fr STREQUAL fm)
  message(FATAL_ERROR "a resumed TPU run ended with other weights than an uninterrupted one: ${fr} vs ${fm}")
endif()

# 1024 examples: 8 full steps, none dropped: the TPU job is the mirrored job.
run_job(tpu_full --strategy tpu --tpu-cores 4 --limit 1024 --steps-per-run 3 --out ${WORK}/tpu_full)
run_job(mirrored_full --strategy mirrored --replicas 4 --limit 1024 --out ${WORK}/mirrored_full)
expect_round_trips("${tpu_full}" 2 8 3)
fingerprint_of("${tpu_full}" ft)
fingerprint_of("${mirrored_full}" fmir)
if(NOT ft STREQUAL fmir)
  message(FATAL_ERROR "the TPU job and the mirrored job (4 replicas, batch ${batch}) ended with different "
                      "weights: ${ft} vs ${fmir}")
endif()
# The epoch's metrics summed over every step of each round trip, not just its last.
function(epoch_metrics text out_var)
  string(REGEX MATCHALL "epoch [0-9]+/[0-9]+: train loss [0-9.]+, train accuracy [0-9.]+, test accuracy [0-9.]+"
         metrics "${text}")
  set(${out_var} "${metrics}" PARENT_SCOPE)
endfunction()
epoch_metrics("${tpu_full}" tpu_metrics)
epoch_metrics("${mirrored_full}" mirrored_metrics)
if(NOT tpu_metrics OR NOT tpu_metrics STREQUAL mirrored_metrics)
  message(FATAL_ERROR "the TPU job's epoch metrics differ from the mirrored job's:\n${tpu_metrics}\n"
                      "${mirrored_metrics}")
endif()

# A model that does not learn stays near 0.10.
string(REGEX MATCH "final test accuracy ([0-9.]+)" _ "${multi}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 LESS 0.5)
  message(FATAL_ERROR "2 epochs reached a test accuracy of '${CMAKE_MATCH_1}', below the floor 0.5:\n${multi}")
endif()
if(NOT EXISTS ${WORK}/multi/metrics.csv)
  message(FATAL_ERROR "no metrics.csv written")
endif()

# Bad input: exit status 2 and the flag named, before any training.
function(expect_refused pattern)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --out ${WORK}/refused OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${pattern}" OR out MATCHES "epoch 1/")
    message(FATAL_ERROR "'${ARGN}' was not refused with exit status 2 and '${pattern}' (${rc}):\n${out}\n${err}")
  endif()
endfunction()
expect_refused("--tpu-cores 3 is not a TPU slice size: pass 1, 2, 4, 8, 16 or 32" --strategy tpu --tpu-cores 3)
expect_refused("--tpu-cores \"64\" is not valid" --strategy tpu --tpu-cores 64)
expect_refused("--steps-per-run \"0\" is not valid: expected a number from 1" --strategy tpu --steps-per-run 0)
expect_refused("--workers applies to --strategy ps only; with --strategy tpu use --tpu-cores"
               --strategy tpu --workers 2)
expect_refused("--ps applies to --strategy ps only" --strategy tpu --ps 2)
expect_refused("--replicas does not apply to --strategy tpu" --strategy tpu --replicas 2)
expect_refused("--batch 100 is not divisible by --tpu-cores 8" --strategy tpu --batch 100)
expect_refused("--steps-per-run applies to --strategy tpu only" --steps-per-run 5)
expect_refused("--tpu-cores applies to --strategy tpu only" --strategy ps --tpu-cores 8)
file(REMOVE_RECURSE ${WORK})
