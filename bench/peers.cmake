# Peer allocators from Debian packages, through their prefixed APIs so they never replace the
# process's malloc. Each found peer adds RTMEM_HAVE_<NAME>=1 to rtmem_bench_peers.
add_library(rtmem_bench_peers INTERFACE)
# Debian's libmimalloc, libjemalloc and libtcmalloc export malloc and the global operator
# new/delete themselves: the dynamic linker binds each symbol to the first needed library that
# defines it, so a peer linked before libc or libstdc++ would serve every "glibc" malloc or new
# row. libc and then the C++ runtime go first among the needed libraries; heap_origin.cpp,
# compiled into every program that links the peers, checks the binding at start-up.
target_sources(rtmem_bench_peers INTERFACE ${CMAKE_CURRENT_LIST_DIR}/heap_origin.cpp)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_file(RTMEM_LIBC_SO libc.so.6
    PATHS /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /lib/aarch64-linux-gnu NO_DEFAULT_PATH)
  if(RTMEM_LIBC_SO)
    set(rtmem_cxx_runtime -lstdc++)
    if(CMAKE_CXX_FLAGS MATCHES "-stdlib=libc\\+\\+")
      set(rtmem_cxx_runtime -lc++)
    endif()
    target_link_options(rtmem_bench_peers INTERFACE
      "LINKER:--push-state,--no-as-needed" ${RTMEM_LIBC_SO} ${rtmem_cxx_runtime}
      "LINKER:--pop-state")
  endif()
endif()
find_package(PkgConfig QUIET)

find_package(mimalloc CONFIG QUIET)
if(TARGET mimalloc)
  target_link_libraries(rtmem_bench_peers INTERFACE mimalloc)
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_MIMALLOC=1)
endif()
find_library(JEMALLOC_LIB NAMES jemalloc)
find_path(JEMALLOC_INC jemalloc/jemalloc.h)
if(JEMALLOC_LIB AND JEMALLOC_INC)
  target_link_libraries(rtmem_bench_peers INTERFACE ${JEMALLOC_LIB})
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_JEMALLOC=1)
endif()
find_library(TCMALLOC_LIB NAMES tcmalloc_minimal tcmalloc)
find_path(TCMALLOC_INC gperftools/tcmalloc.h)
if(TCMALLOC_LIB AND TCMALLOC_INC)
  target_link_libraries(rtmem_bench_peers INTERFACE ${TCMALLOC_LIB})
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_TCMALLOC=1)
endif()
find_library(TBBMALLOC_LIB NAMES tbbmalloc)
find_path(TBB_INC tbb/scalable_allocator.h)
if(TBBMALLOC_LIB AND TBB_INC)
  target_link_libraries(rtmem_bench_peers INTERFACE ${TBBMALLOC_LIB})
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_TBB=1)
endif()
find_package(foonathan_memory CONFIG QUIET)
if(TARGET foonathan_memory)
  target_link_libraries(rtmem_bench_peers INTERFACE foonathan_memory)
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_FOONATHAN=1)
endif()
find_package(Boost QUIET)
if(Boost_FOUND)
  target_link_libraries(rtmem_bench_peers INTERFACE Boost::headers)
  target_compile_definitions(rtmem_bench_peers INTERFACE RTMEM_HAVE_BOOST=1)
endif()
