# cmake -P: run DRIVER's CASE under callgrind collecting only inside each of FUNCTIONS (one run
# each, summed), subtract the harness's own per-call cost (an empty out-of-line function: its
# entry and return) per function, and fail when instructions per operation exceed BOUND.
cmake_minimum_required(VERSION 3.25)  # script mode: if() reads numbers and constants (CMP0012)
if(NOT VALGRIND OR NOT EXISTS "${VALGRIND}")
  message("SKIPPED: valgrind not found")
  return()
endif()

# instructions collected inside `function` while the driver runs `case` CALLS times. The output
# file is named after this test too (its CASE and FUNCTIONS): every test collects the baseline,
# and ctest runs tests in parallel, so a shared name let one test remove another's file.
string(MD5 env_id "${DRIVER}|${ENV}")  # one case and function in other drivers or environments
string(SUBSTRING "${env_id}" 0 8 env_id)
string(MAKE_C_IDENTIFIER "${CASE}.${FUNCTIONS}.${env_id}" this_test)
function(collect case function result)
  set(out "${WORK_DIR}/callgrind.${this_test}.${case}.${function}.out")
  file(REMOVE "${out}")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${environment}
            "${VALGRIND}" --tool=callgrind --toggle-collect=${function}
            --callgrind-out-file=${out} "${DRIVER}" ${case} ${CALLS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${out}")
    message(FATAL_ERROR "callgrind run of '${case}' failed (${rc}):\n${stdout}\n${stderr}")
  endif()
  file(STRINGS "${out}" totals REGEX "^(summary|totals):")
  list(GET totals 0 line)
  string(REGEX MATCH "[0-9]+" collected "${line}")
  if(NOT collected OR collected EQUAL 0)
    message(FATAL_ERROR "no instructions collected in ${function}: inlined or missing?")
  endif()
  set(${result} ${collected} PARENT_SCOPE)
endfunction()

# ENV: variables for the driver, "|"-separated (e.g. a preload library and its settings).
string(REPLACE "|" ";" environment "${ENV}")
collect(baseline rtmem_perf_baseline base)
set(total 0)
set(net 0)
foreach(function IN LISTS FUNCTIONS)
  collect(${CASE} ${function} n)
  math(EXPR total "${total} + ${n}")
  math(EXPR net "${net} + ${n} - ${base}")
endforeach()
string(REPLACE ";" " + " FUNCTION "${FUNCTIONS}")
if(NOT OPS)
  set(OPS 1)  # operations per call of the case function
endif()
math(EXPR per_op_x100 "${net} * 100 / (${CALLS} * ${OPS})")
math(EXPR whole "${per_op_x100} / 100")
math(EXPR frac "${per_op_x100} % 100")
if(frac LESS 10)
  set(frac "0${frac}")
endif()
math(EXPR base_per_call "${base} / ${CALLS}")
message("${FUNCTION} (${CASE}): ${whole}.${frac} instructions per operation (${total} collected over "
        "${CALLS} calls, minus ${base_per_call} per call of harness entry/return); bound ${BOUND}")
if(per_op_x100 GREATER "${BOUND}00")
  message(FATAL_ERROR "${FUNCTION} exceeds its budget: ${whole}.${frac} > ${BOUND} "
                      "instructions per operation")
endif()
