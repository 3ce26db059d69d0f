#!/usr/bin/env python3
"""Shows `rtmem advise`'s top recommendations for the recorded baseline and checks them
against what the rtmem variant of the demo actually does: which patterns it found, which it
missed.

usage: compare_advice.py ADVISE.txt ADVISE.json
"""
import json
import re
import sys

# The rtmem variant's choices, and the baseline call sites that each one replaced (matched on
# the site's symbolised stack, first pattern wins: a command pushed from cull_view is a render
# command, not a temporary). A pattern is found when the advisor puts one of its sites in one of
# the accepted classes.
PATTERNS = [
    ("render command queue", "frame_allocator<2>", r"command_queue::push", {"frame"}),
    ("particles", "object_pool<particle_body> + soa_vector", r"particle_store::spawn", {"pool"}),
    ("level file + decompression", "double_ended bottom (temporary)", r"read_file|decompress|level_temp",
     {"stack", "linear", "frame"}),
    ("level assets", "double_ended top (reset on unload)", r"load_assets|level_asset", {"linear", "long-lived"}),
    ("per-call temporaries", "temp_scope (thread's arena)", r"steering|cull_view|debug_label|draw_particles",
     {"stack", "linear", "frame"}),
    ("long-lived world", "arena", r"create_world|make_string", {"long-lived", "long_lived", "linear"}),
]
TOP_LINES = 14


def main():
    text_path, json_path = sys.argv[1], sys.argv[2]
    with open(text_path) as f:
        lines = f.read().splitlines()
    print("   rtmem advise, top recommendations (full text: %s):" % text_path)
    for line in lines[:TOP_LINES]:
        print("     " + line[:160])
    try:
        with open(json_path) as f:
            sites = json.load(f).get("sites", [])
    except (OSError, ValueError) as e:
        print(f"   (no JSON advice to compare: {e})")
        return 0

    print("\n   Did the advisor rediscover what the rtmem variant does?")
    owner = {}
    for s in sites:
        for i, (_, _, pattern, _) in enumerate(PATTERNS):
            if re.search(pattern, s.get("name", "")):
                owner[id(s)] = i
                break
    found = 0
    for i, (name, ours, pattern, accepted) in enumerate(PATTERNS):
        mine = [s for s in sites if owner.get(id(s)) == i]
        if not mine:
            print(f"     NOT SEEN  {name:<26} (rtmem: {ours}): no site named {pattern!r} in the advice")
            continue
        classes = {}
        for s in mine:
            classes[s["class"]] = classes.get(s["class"], 0) + int(s.get("calls", 0))
        hits = [s for s in mine if s["class"] in accepted]
        summary = ", ".join(f"{c} ({n:,} calls)" for c, n in sorted(classes.items(), key=lambda kv: -kv[1]))
        if hits:
            found += 1
            best = max(hits, key=lambda s: int(s.get("calls", 0)))
            print(f"     FOUND     {name:<26} (rtmem: {ours}): advised {best['allocator']} {best['config']}"
                  f"  [sites: {summary}]")
        else:
            top = max(mine, key=lambda s: int(s.get("calls", 0)))
            why = top.get("evidence", "").split(";")[-1].strip()
            print(f"     MISSED    {name:<26} (rtmem: {ours}): classed as {summary}; {why}")
    print(f"   {found} of {len(PATTERNS)} patterns rediscovered from the trace alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
