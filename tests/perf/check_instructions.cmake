# cmake -P: run DRIVER's CASE under callgrind (collecting only inside the case's function) and
# fail when instructions per operation exceed BOUND.
if(NOT VALGRIND OR NOT EXISTS "${VALGRIND}")
  message("SKIPPED: valgrind not found")
  return()
endif()
set(out "${WORK_DIR}/callgrind.${CASE}.out")
file(REMOVE "${out}")
execute_process(
  COMMAND "${VALGRIND}" --tool=callgrind --toggle-collect=rtmem_perf_${CASE}
          --callgrind-out-file=${out} "${DRIVER}" ${CASE} ${CALLS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT EXISTS "${out}")
  message(FATAL_ERROR "callgrind run of '${CASE}' failed (${rc}):\n${stdout}\n${stderr}")
endif()
file(STRINGS "${out}" totals REGEX "^(summary|totals):")
list(GET totals 0 line)
string(REGEX MATCH "[0-9]+" instructions "${line}")
math(EXPR per_op_x100 "${instructions} * 100 / ${CALLS}")
math(EXPR whole "${per_op_x100} / 100")
math(EXPR frac "${per_op_x100} % 100")
set(per_op "${whole}.${frac}")
if(frac LESS 10)
  set(per_op "${whole}.0${frac}")
endif()
message("${CASE}: ${instructions} instructions / ${CALLS} operations = ${per_op} per operation "
        "(bound ${BOUND})")
if(instructions GREATER 0 AND per_op_x100 LESS_EQUAL "${BOUND}00")
  return()
endif()
if(instructions EQUAL 0)
  message(FATAL_ERROR "no instructions collected: is rtmem_perf_${CASE} inlined or missing?")
endif()
message(FATAL_ERROR "${CASE} exceeds its budget: ${per_op} > ${BOUND} instructions per operation")
