# The Debian package (make deb: cpack -G DEB in a Release build installed to /usr): the
# libraries at every check level, headers, CMake package, pkg-config files, the `rtmem` command
# and its preload library. Depends come from dpkg-shlibdeps on the binaries.
set(CPACK_PACKAGE_NAME rtmem)
set(CPACK_PACKAGE_VENDOR "rtmem")
set(CPACK_PACKAGE_CONTACT "rtmem maintainers <rtmem@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What a C or C++ consumer needs to build against the static libraries and headers.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libstdc++-12-dev | libstdc++-dev, pkgconf | pkg-config")
# `rtmem replay` loads these with dlopen when present, to compare allocators.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libmimalloc2.0, libjemalloc2, libtcmalloc-minimal4")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Memory management for real-time C++
 Allocators with small, bounded cost, containers, diagnostics and an allocation tracer
 (rtmem record/report/advise/replay/diff). The library is installed at contract check levels
 0, 1 and 2; find_package(rtmem) gives Debug builds level 1 and Release builds level 0.")
include(CPack)
