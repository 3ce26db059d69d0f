# Install rules: headers, the library, a CMake package (config + version) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(rtmem_level_targets "")
foreach(level IN LISTS rtmem_check_levels)
  list(APPEND rtmem_level_targets rtmem_checks${level})
endforeach()
install(TARGETS ${rtmem_level_targets} EXPORT rtmemTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rtmemTargets NAMESPACE rtmem:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)

set(RTMEM_DEFAULT_CHECK_LEVEL ${rtmem_check_level})
set(RTMEM_INSTALLED_CHECK_LEVELS "${rtmem_check_levels}")
configure_package_config_file(cmake/rtmemConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rtmemConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)

# pkg-config: rtmem.pc is the default level (rtmem::rtmem), rtmem-checks<N>.pc each level.
# Cflags are C-clean (C++ users choose -std=c++20 themselves); Libs name the C++ runtime, which
# the static library needs even when only the C API (rtmem.h) is used.
# The prefix is relative to the .pc file, so an unpacked package (dpkg -x) works where it lies.
file(RELATIVE_PATH RTMEM_PC_UP ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" RTMEM_PC_UP "${RTMEM_PC_UP}")
foreach(level IN LISTS rtmem_check_levels)
  set(RTMEM_PC_LEVEL ${level})
  configure_file(cmake/rtmem.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rtmem-checks${level}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rtmem-checks${level}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
set(RTMEM_PC_LEVEL ${rtmem_check_level})
configure_file(cmake/rtmem.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rtmem.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rtmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
