# Warnings for rtmem's own targets (never forced on consumers): rtmem_set_warnings(<target>).
function(rtmem_set_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${RTMEM_WERROR}>:/WX>)
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion
      -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
      $<$<BOOL:${RTMEM_WERROR}>:-Werror>)
  endif()
endfunction()
