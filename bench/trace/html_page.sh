#!/usr/bin/env bash
# What `rtmem report --html` costs on a trace with ~10^5 call stacks: records
# rtmem_trace_many_stacks (2^17 stacks, 42 frames deep with --depth 64), writes the page, and
# prints its size, the CPU time to write it, and (when chromium, chromium-driver and
# python3-selenium are installed) how long the browser takes to draw it, through the
# browser test in page-only mode. Usage: bench/trace/html_page.sh [BUILD_DIR] (default build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
cli=$build/tools/cli/rtmem
program=$build/bench/trace/rtmem_trace_many_stacks
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cli" record --depth 64 -o "$work/t.rtt" -- "$program"
/usr/bin/time -f "report --html: %U s user, %e s wall, %M KiB max RSS" \
  "$cli" report "$work/t.rtt" --html "$work/t.html" >/dev/null
echo "page: $(stat -c %s "$work/t.html") bytes"
grep -o '"limits":{[^}]*}' "$work/t.html"
/usr/bin/python3 "$root/tests/analyze/html_browser_test.py" "$cli" "$work" "$work/t.html" |
  grep -E '^(drawing|search|FAIL|all|SKIPPED)' || true
