# One place for the project's warning policy: every target of ours gets it through apshim_warnings().
function(apshim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(APSHIM_SANITIZE)
    # GCC 12's flow analysis under sanitizers reports maybe-uninitialized inside libstdc++'s
    # <regex> (pulled in by Catch2): a known false positive, not in our code. Not for the test
    # programs, which are built without the sanitizer (cmake/Sanitizers.cmake): their commands
    # stay the plain build's, so that scripts/test.sh's compiler cache compiles them once.
    target_compile_options(${target} PRIVATE "$<$<NOT:${_apshim_host_program}>:-Wno-maybe-uninitialized>")
  endif()
endfunction()
