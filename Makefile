# Thin wrapper over the CMake presets. Every target installs missing Debian packages first.
#   make demo    the main job (scripts/demo)        make test   build + run all tests (dev preset)
#   make bench   benchmark suite and report          make asan / make tsan   sanitizer test runs
#   make bench-plan   the advisor's plan run on the demo and eight Debian programs (bench/plan)
#   make bench-sample-accuracy   sampled recording's estimates against exact traces (bench/tracer)
#   make install-check   consumers against an installed Release build (tests/install)
#   make deb     the Debian package (build/deb)       make deb-check   consumers against it
#   make m32 / make windows / make wasm   the library and tests on 32-bit x86 Linux, on Windows
#                (MinGW-w64, tests under wine) and on WebAssembly (emscripten, tests under node)
JOBS ?= $(shell nproc)
export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

.PHONY: setup test demo bench bench-plan bench-sample-accuracy asan tsan m32 windows wasm release install-check deb deb-check format clean

setup:
	@scripts/setup

test: setup
	cmake --preset dev
	cmake --build --preset dev
	ctest --preset dev

release: setup
	cmake --preset release
	cmake --build --preset release

demo: release
	scripts/demo

bench: setup
	scripts/bench

bench-plan: setup
	cmake --preset release
	cmake --build --preset release --target rtmem_cli rtmem_trace rtmem_malloc rtmem_demo
	bench/plan/run.py

bench-sample-accuracy: setup
	cmake --preset release
	cmake --build --preset release --target rtmem_cli rtmem_trace rtmem_bench_sample_accuracy
	bench/tracer/sample_accuracy.py --rtmem build/release/tools/cli/rtmem \
	  --tool build/release/bench/trace/rtmem_bench_sample_accuracy --interval 512K,16K

asan: setup
	cmake --preset asan
	cmake --build --preset asan
	ctest --preset asan

tsan: setup
	cmake --preset tsan
	cmake --build --preset tsan
	ctest --preset tsan

install-check: setup
	scripts/install-check

deb: setup
	cmake -S . -B build/deb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	  -DRTMEM_INSTALL_CHECK_LEVELS="0;1;2" -DRTMEM_BUILD_TESTS=OFF -DRTMEM_BUILD_BENCHMARKS=OFF \
	  -DRTMEM_BUILD_EXAMPLES=OFF -DRTMEM_WERROR=$${RTMEM_WERROR:-OFF}
	cmake --build build/deb
	cd build/deb && cpack -G DEB

deb-check: deb
	scripts/install-check --deb

m32: setup
	cmake --preset m32
	cmake --build --preset m32
	ctest --preset m32

# One wine process per test binary (~3 s each); the prefix is made once.
windows: setup
	test -d "$${WINEPREFIX:-$$HOME/.wine}" || WINEDEBUG=-all /usr/lib/wine/wine64 wineboot --init
	cmake --preset windows
	cmake --build --preset windows
	WINEDEBUG=-all ctest --preset windows

wasm: setup
	NODE_PATH=/usr/share/nodejs cmake --preset wasm
	NODE_PATH=/usr/share/nodejs cmake --build --preset wasm
	ctest --preset wasm

format:
	git ls-files '*.hpp' '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf build
