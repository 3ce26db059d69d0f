# Thin wrapper over the CMake presets. Every target installs missing Debian packages first.
#   make demo    the main job (scripts/demo)        make test   build + run all tests (dev preset)
#   make bench   benchmark suite and report          make asan / make tsan   sanitizer test runs
JOBS ?= $(shell nproc)
export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

.PHONY: setup test demo bench asan tsan release install-check format clean

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

asan: setup
	cmake --preset asan
	cmake --build --preset asan
	ctest --preset asan

tsan: setup
	cmake --preset tsan
	cmake --build --preset tsan
	ctest --preset tsan

format:
	git ls-files '*.hpp' '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf build
