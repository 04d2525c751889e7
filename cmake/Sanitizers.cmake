# APSHIM_SANITIZE=address|address+undefined|thread|undefined builds the project's own code with that sanitizer.
#
# The integration test programs under tests/ (all but tests/unit) stand for real, uninstrumented
# hosts: they are compiled WITHOUT the sanitizer and only linked with it (so the ones that link
# our own libraries, gat_job and gat_fill, get the runtime those need). Under ThreadSanitizer an
# instrumented OpenMP/TBB program beside uninstrumented libgomp/libomp/libtbb reports nothing but
# false races (it cannot see their barriers); under ASan the programs' own accesses are not what
# we test. A preloaded sanitized libapshim.so needs the sanitizer runtime first in LD_PRELOAD:
# scripts/test.sh passes it to the tests as TEST_PRELOAD_FIRST (tests/README-sanitizers.md).
set(_apshim_unit_test "$<PATH:IS_PREFIX,${PROJECT_SOURCE_DIR}/tests/unit,$<TARGET_PROPERTY:SOURCE_DIR>>")
set(_apshim_host_program
    "$<AND:$<PATH:IS_PREFIX,${PROJECT_SOURCE_DIR}/tests,$<TARGET_PROPERTY:SOURCE_DIR>>,$<NOT:${_apshim_unit_test}>>")
# Catch2's own main (tests/unit's catch_main) is not our code either: uninstrumented, it compiles
# with the same command in every build, so CI's compiler cache builds it once, not three times
# (15-18 s each on 2 cores).
set(_apshim_uninstrumented "$<OR:${_apshim_host_program},$<STREQUAL:$<TARGET_PROPERTY:NAME>,catch_main>>")
macro(_apshim_sanitize)
  foreach(_flag ${ARGN})
    add_compile_options("$<$<NOT:${_apshim_uninstrumented}>:${_flag}>")
  endforeach()
endmacro()
# Our instrumented code is built at -O1 (after the build type's -O2, so it wins): the level the
# sanitizers' documentation suggests, and a third less compile time for CI's two extra builds
# (under ASan+UBSan, tests/unit/test_table.cpp: 46 s at -O2, 29 s at -O1). The unit tests' own
# files are at -O0 in every build (tests/unit/CMakeLists.txt; their options come after these).
if(NOT APSHIM_SANITIZE STREQUAL "")
  _apshim_sanitize(-O1)
endif()
if(APSHIM_SANITIZE STREQUAL "address")
  _apshim_sanitize(-fsanitize=address -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address)
elseif(APSHIM_SANITIZE STREQUAL "address+undefined")
  _apshim_sanitize(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(APSHIM_SANITIZE STREQUAL "thread")
  _apshim_sanitize(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
elseif(APSHIM_SANITIZE STREQUAL "undefined")
  _apshim_sanitize(-fsanitize=undefined -fno-sanitize-recover=all)
  add_link_options(-fsanitize=undefined)
elseif(NOT APSHIM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "APSHIM_SANITIZE must be '', address, address+undefined, thread or undefined (got '${APSHIM_SANITIZE}')")
endif()
