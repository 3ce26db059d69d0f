# Tests and benchmarks of the tools are configured before tools/, so they ask for the same
# dependencies tools/ needs before referring to its targets (rtmem_cli, rtmem_trace,
# rtmem_analyze) by name.
# rtmem_find_tool_deps(PREFIX module...): sets PREFIX_OK in the caller's scope and defines
# PkgConfig::PREFIX for the given pkg-config modules (a macro: the imported target belongs to
# the calling directory).
macro(rtmem_find_tool_deps prefix)
  set(${prefix}_OK FALSE)
  if(RTMEM_BUILD_TOOLS AND UNIX AND NOT APPLE)
    find_package(PkgConfig)
    find_package(CLI11 CONFIG QUIET)
    find_package(nlohmann_json 3 QUIET)
    if(PkgConfig_FOUND)
      pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${ARGN})
    endif()
    if(${prefix}_FOUND AND CLI11_FOUND AND nlohmann_json_FOUND)
      set(${prefix}_OK TRUE)
    endif()
  endif()
endmacro()
