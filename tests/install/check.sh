#!/usr/bin/env bash
# Builds tests/install/consumer against an installed rtmem and asserts what a user is promised
# (docs/debugging.md, "As installed"): the check level each configuration gets, misuse caught
# with the documented message at level >= 1, no sanitizer report on legal use (the installed
# library is not sanitized; the consumer is), pool use-after-free and link-word reads caught by
# ASan at every level, a level mismatch refused at link time by name, and the C API from C with
# pkg-config's flags alone.
#   tests/install/check.sh <install prefix> <scratch directory>
set -euo pipefail
prefix=$(realpath "$1")
work=$(mkdir -p "$2" && realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS
fail() { echo "install check: FAILED: $*" >&2; exit 1; }
step() { echo "install check: $* ($((SECONDS - start)) s)"; }

asan=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
build() {  # <name> <cmake args...>
  local name=$1 dir=$work/$1
  shift
  rm -rf "$dir"
  cmake -S "$here/consumer" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "$@" \
    > "$dir.log" 2>&1 || { cat "$dir.log"; fail "configuring the $name consumer"; }
  cmake --build "$dir" >> "$dir.log" 2>&1 || { cat "$dir.log"; fail "building the $name consumer"; }
}
expect_level() {  # <name> <level>
  local got
  got=$("$work/$1/consumer" level)
  [ "$got" = "$2" ] || fail "$1 consumer: check level $got, expected $2"
}
expect_ok() {  # <name> <check>
  "$work/$1/consumer" "$2" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "$1 consumer: '$2' failed"; }
  if grep -q "Sanitizer" "$work/out.txt"; then cat "$work/out.txt"; fail "$1 consumer: sanitizer report on '$2'"; fi
}
expect_caught() {  # <name> <check> <expected text>
  if "$work/$1/consumer" "$2" > "$work/out.txt" 2>&1; then
    cat "$work/out.txt"; fail "$1 consumer: '$2' was not caught"
  fi
  grep -q -- "$3" "$work/out.txt" || { cat "$work/out.txt"; fail "$1 consumer: '$2' without '$3'"; }
}

step "Debug consumer (level 1 from the package)"
build debug -DCMAKE_BUILD_TYPE=Debug
expect_level debug 1
expect_ok debug legal
expect_caught debug misuse "rtmem: linear_allocator: stale_marker violation: rewind to"

step "Release consumer (level 0), and one without a build type (no NDEBUG: level 1)"
build release -DCMAKE_BUILD_TYPE=Release
expect_level release 0
expect_ok release legal
build plain
expect_level plain 1

step "ASan+UBSan consumers, Debug and Release, against the unsanitized library"
build asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=${asan[*]}"
build asan-release -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=${asan[*]}"
for name in asan asan-release; do
  expect_ok $name legal
  expect_caught $name pool-uaf "use-after-poison"
  expect_caught $name pool-link "use-after-poison"
done
expect_caught asan misuse "stale_marker violation"

step "a consumer choosing level 2 (RTMEM_CHECKS before find_package)"
build level2 -DCMAKE_BUILD_TYPE=Release -DRTMEM_CHECKS=2
expect_level level2 2
expect_caught level2 misuse "stale_marker violation"

step "code compiled at another level than its library: refused at link time"
if cmake --build "$work/debug" --target mismatch > "$work/mismatch.log" 2>&1; then
  fail "a level-2 translation unit linked against the level-1 library"
fi
grep -q "rtmem_code_built_with_RTMEM_CHECKS_2_needs_a_library_built_with_it" "$work/mismatch.log" ||
  { cat "$work/mismatch.log"; fail "the mismatch failed without naming the level"; }

step "C through pkg-config"
pc=$(dirname "$(find "$prefix" -name rtmem.pc | head -n 1)")
[ -n "$pc" ] || fail "no rtmem.pc under $prefix"
cflags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags rtmem)
libs=$(PKG_CONFIG_PATH=$pc pkg-config --libs rtmem)
cc -std=c11 -Wall -Wextra -Werror $cflags "$here/consumer/c_consumer.c" $libs -o "$work/c_consumer" \
  || fail "building the C consumer with: $cflags ... $libs"
"$work/c_consumer" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "the C consumer failed"; }

step "all passed"
