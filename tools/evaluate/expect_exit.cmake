# Runs CMD with ARGS (a ;-list) and fails unless it exits with CODE and its stderr matches the
# regular expression EXPECT. Used by the command-line tests of vw-evaluate.
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL CODE)
  message(FATAL_ERROR "exit status ${code}, expected ${CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
endif()
