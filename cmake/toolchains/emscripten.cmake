# WebAssembly with Debian's emscripten (3.1.6), tests run under node. Chosen over clang+WASI:
# Debian's WASI libc++ is built without exceptions and WASI there has no threads, while the
# tests report contract violations by throwing and the library's locks, per-thread arenas and
# the C arena are multi-threaded; emscripten has both (exceptions, pthreads on Web Workers).
#   emscripten needs NODE_PATH=/usr/share/nodejs (set by make wasm and .ci/run); node 20 rejects
#   the --experimental-wasm-threads flag emscripten's own toolchain file would pass, and
#   --no-experimental-fetch keeps node's fetch from shadowing emscripten's loader.
include(/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake)
find_program(RTMEM_NODE NAMES node nodejs)
set(CMAKE_CROSSCOMPILING_EMULATOR ${RTMEM_NODE};--no-experimental-fetch CACHE STRING "" FORCE)
# C++ exceptions on (emscripten catches none by default); pthreads with main() on a worker so
# it may block on joins; the runtime exits when main returns; 64 KiB wasm pages grown on demand.
set(CMAKE_C_FLAGS_INIT "-pthread -fexceptions")
set(CMAKE_CXX_FLAGS_INIT "-pthread -fexceptions")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-pthread -fexceptions -sPROXY_TO_PTHREAD -sPTHREAD_POOL_SIZE=8 \
-sEXIT_RUNTIME=1 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=256MB -sMAXIMUM_MEMORY=2GB \
-Wno-pthreads-mem-growth")
