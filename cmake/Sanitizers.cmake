# APSHIM_SANITIZE=address|thread|undefined builds the project's own code with that sanitizer.
# A preloaded shim cannot carry ASan/TSan into an uninstrumented host (the runtime must come first),
# so sanitizer builds exercise the unit tests and the integration programs linked directly
# (see tests/CMakeLists.txt); the LD_PRELOAD tests are skipped there.
if(APSHIM_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address)
elseif(APSHIM_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
elseif(APSHIM_SANITIZE STREQUAL "undefined")
  add_compile_options(-fsanitize=undefined -fno-sanitize-recover=all)
  add_link_options(-fsanitize=undefined)
elseif(NOT APSHIM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "APSHIM_SANITIZE must be '', address, thread or undefined (got '${APSHIM_SANITIZE}')")
endif()
