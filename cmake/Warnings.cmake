# One place for the project's warning policy: every target of ours gets it through apshim_warnings().
function(apshim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
