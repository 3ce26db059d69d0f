# Install rules: headers, the library, a CMake package (config + version) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS rtmem EXPORT rtmemTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rtmemTargets NAMESPACE rtmem:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)

configure_package_config_file(cmake/rtmemConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rtmemConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/rtmemConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rtmem)

configure_file(cmake/rtmem.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rtmem.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rtmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
