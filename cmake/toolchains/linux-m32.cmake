# 32-bit x86 Linux with the host GCC (gcc-multilib / g++-multilib): the cheap check that nothing
# assumes 64-bit words. GoogleTest is built from /usr/src/googletest (libgtest-dev is 64-bit).
# -m32 is also in the m32 preset's CMAKE_<LANG>_FLAGS, which override the _INIT values.
set(CMAKE_C_FLAGS_INIT "-m32")
set(CMAKE_CXX_FLAGS_INIT "-m32")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-m32")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-m32")
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)
set(FIND_LIBRARY_USE_LIB32_PATHS ON)
