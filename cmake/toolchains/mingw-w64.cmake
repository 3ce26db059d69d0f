# Windows x86-64 with Debian's MinGW-w64 (g++-mingw-w64-x86-64-posix): the -posix compilers, whose
# libstdc++ has std::thread and std::mutex (the -win32 ones do not). Test binaries run under
# wine64 (ctest uses the emulator below: one wine process per test binary).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Static runtime: the test binaries run under wine without copying MinGW's DLLs next to them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
find_program(RTMEM_WINE NAMES wine64 wine PATHS /usr/lib/wine)  # Debian: wine64 lives there
if(RTMEM_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${RTMEM_WINE})
endif()
