"""Inputs A and B of bench/plan/run.py's programs: scripts, sources and data, the data generated
with fixed seeds (the same bytes every run). A and B differ in shape, not only in size, so that
a plan recorded on A meets on B the same code paths with other sizes, counts and lifetimes, as a
plan made on one day's input does on the next day's."""
import random

# python3, cc1plus, sqlite3, perl: scripts, sources and SQL as they are.

PY_A = """import json
d = [{'k': i, 'v': str(i) * 3, 'l': [i, i + 1]} for i in range(40000)]
s = json.dumps(d)
print(len(s), len(json.loads(s)))
"""
PY_B = """import json, collections
class Rec:
    def __init__(self, i):
        self.name = 'n%07d' % (i * 7919 % 100003)
        self.tags = [str(i % 13), str(i % 17)]
rs = sorted((Rec(i) for i in range(25000)), key=lambda r: r.name)
groups = collections.defaultdict(list)
for r in rs:
    groups[r.tags[0]].append({'name': r.name, 'tags': r.tags})
s = json.dumps(groups, sort_keys=True)
print(len(s), sum(len(v) for v in json.loads(s).values()))
"""

CXX_A = """#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
struct node { std::string name; std::vector<std::unique_ptr<node>> kids; };
int count(const node& n, std::map<std::string, int>& m, std::set<std::string>& s) {
    int c = ++m[n.name];
    s.insert(n.name);
    for (const auto& k : n.kids) c += count(*k, m, s);
    return c;
}
"""
CXX_B = """#include <algorithm>
#include <iostream>
#include <sstream>
#include <unordered_map>
#include <variant>
#include <vector>
using value = std::variant<int, double, std::string>;
std::string show(const std::vector<value>& v) {
    std::ostringstream out;
    std::unordered_map<std::string, int> seen;
    for (const auto& x : v)
        std::visit([&](const auto& y) { out << y << ' '; }, x);
    auto s = out.str();
    std::sort(s.begin(), s.end());
    ++seen[s];
    return s;
}
"""

SQL_A = """CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 60000)
INSERT INTO t SELECT i, printf('name%06d', (i * 7919) % 60000), i % 97, hex(randomblob(24)) FROM c;
CREATE INDEX t_name ON t(name);
SELECT grp, count(*), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 5;
SELECT count(*) FROM t WHERE name LIKE 'name01%';
"""
SQL_B = """CREATE TABLE a(id INTEGER PRIMARY KEY, k TEXT, v REAL);
CREATE TABLE b(id INTEGER PRIMARY KEY, k TEXT, w TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 80000)
INSERT INTO a SELECT i, printf('k%05d', i % 40000), i * 0.5 FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 40000)
INSERT INTO b SELECT i, printf('k%05d', (i * 31) % 40000), printf('%x-%x', i, i * i) FROM c;
CREATE INDEX a_k ON a(k);
SELECT count(*), sum(a.v) FROM a JOIN b ON a.k = b.k;
SELECT k, group_concat(w, ',') FROM b GROUP BY substr(k, 1, 4) ORDER BY k LIMIT 3;
SELECT length(group_concat(k || v, '')) FROM (SELECT * FROM a ORDER BY v DESC);
"""

PL_A = r"""my %h;
for my $i (1 .. 150000) { $h{"key$i"} = join(",", $i, $i * 2, "x" x ($i % 20)); }
my $n = 0;
for my $k (sort keys %h) { $n += length($h{$k}) if $k =~ /7/; }
print "$n\n";
"""
PL_B = r"""my @recs;
for my $i (1 .. 120000) { push @recs, { id => $i, name => sprintf("n%06d", ($i * 7919) % 120000), tags => [ $i % 7, $i % 11 ] }; }
my %by;
push @{ $by{ $_->{tags}[0] } }, $_->{name} for @recs;
my $s = join(";", map { join(",", sort @{ $by{$_} }[0 .. 9]) } sort keys %by);
my @w = split /,/, $s; my %c; $c{substr($_, 0, 3)}++ for @w;
print length($s), " ", scalar(keys %c), "\n";
"""


# xmllint, jq, lua5.4, gawk: generated data and the scripts that read it.

def xml_catalog(path, items=40000, seed=1):
    """Input A of xmllint: a product catalog, attributes and text in every item."""
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<catalog>\n')
        for i in range(items):
            tags = "".join(f'<tag w="{r.randint(0, 9)}">t{r.randint(0, 500)}</tag>'
                           for _ in range(r.randint(1, 6)))
            words = " ".join(f"word{r.randint(0, 3000)}" for _ in range(r.randint(3, 20)))
            f.write(f'<item id="i{i}" price="{r.randint(1, 999)}.{r.randint(0, 99):02d}" '
                    f'cat="c{r.randint(0, 40)}"><name>Item {i} {"x" * r.randint(0, 30)}</name>'
                    f'<tags>{tags}</tags><desc>{words}</desc></item>\n')
        f.write("</catalog>\n")


def xml_orders(path, orders=30000, seed=2):
    """Input B of xmllint: orders with a customer, several lines each and a note; deeper."""
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<orders region="eu">\n')
        for i in range(orders):
            lines = "".join(f'<line sku="s{r.randint(0, 9999)}" qty="{r.randint(1, 12)}">'
                            f'<price cur="EUR">{r.randint(1, 500)}</price></line>'
                            for _ in range(r.randint(1, 8)))
            note = " ".join(f"n{r.randint(0, 900)}" for _ in range(r.randint(0, 12)))
            f.write(f'<order id="o{i}" date="2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}">'
                    f'<customer><first>F{r.randint(0, 5000)}</first><last>L{r.randint(0, 9000)}'
                    f'</last></customer>{lines}<note>{note}</note></order>\n')
        f.write("</orders>\n")


def json_users(path, users=40000, seed=3):
    """Input A of jq: an array of user records."""
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write("[")
        for i in range(users):
            tags = ",".join(f'"t{r.randint(0, 300)}"' for _ in range(r.randint(0, 5)))
            f.write(("," if i else "") +
                    f'{{"id":{i},"name":"user{r.randint(0, 999999):06d}","g":{r.randint(0, 50)},'
                    f'"score":{r.random() * 100:.3f},"tags":[{tags}],'
                    f'"addr":{{"city":"c{r.randint(0, 999)}","zip":"{r.randint(0, 99999):05d}"}}}}')
        f.write("]\n")


def json_events(path, events=30000, seed=4):
    """Input B of jq: a log of events with nested payloads of varying length."""
    r = random.Random(seed)
    kinds = ["click", "view", "debug", "buy", "error"]
    with open(path, "w") as f:
        f.write("[")
        for i in range(events):
            vals = ",".join(str(r.randint(0, 1000)) for _ in range(r.randint(1, 12)))
            msg = " ".join(f"m{r.randint(0, 400)}" for _ in range(r.randint(1, 6)))
            f.write(("," if i else "") +
                    f'{{"t":{1700000000 + i * 7},"kind":"{r.choice(kinds)}",'
                    f'"user":{{"id":{r.randint(0, 5000)},"region":"r{r.randint(0, 30)}"}},'
                    f'"payload":{{"vals":[{vals}],"msg":"{msg}"}}}}')
        f.write("]\n")


JQ_A = ("group_by(.g) | map({g: .[0].g, n: length, best: (max_by(.score).name), "
        "tags: ([.[].tags[]] | unique | length)})")
JQ_B = ('map(select(.kind != "debug")) | group_by(.user.region) | map({r: .[0].user.region, '
        "n: length, total: (map(.payload.vals | add) | add), "
        "msgs: ([.[].payload.msg | split(\" \")[]] | unique | length)})")

# Lua 5.4 allocates through one realloc-based l_alloc: realloc(NULL, n) for every new string,
# table and closure, free() for every collected one.
LUA_A = """-- points built, bucketed by label, each bucket sorted and summed
local seed = 7
local function rnd(m) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % m end
local buckets, labels = {}, {}
for i = 1, 120000 do
  local p = { x = rnd(10000), y = rnd(10000), label = "l" .. rnd(300) .. "-" .. rnd(9) }
  local b = buckets[p.label]
  if not b then b = {}; buckets[p.label] = b; labels[#labels + 1] = p.label end
  b[#b + 1] = p
end
table.sort(labels)
local parts = {}
for _, l in ipairs(labels) do
  local b = buckets[l]
  table.sort(b, function(u, v) return u.x < v.x end)
  parts[#parts + 1] = l .. "=" .. b[1].x .. "/" .. #b
end
local s = table.concat(parts, ";")
print(#labels, #s, s:sub(1, 40))
"""
LUA_B = """-- records built, sorted by name, grouped and joined
local seed = 12345
local function rnd(m) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % m end
local recs = {}
for i = 1, 150000 do
  recs[i] = { id = i, name = string.format("n%07d", rnd(1000000)), vals = { rnd(100), rnd(1000), rnd(7) } }
end
table.sort(recs, function(a, b) return a.name < b.name end)
local groups = {}
for _, r in ipairs(recs) do
  local g = groups[r.vals[3]]
  if not g then g = {}; groups[r.vals[3]] = g end
  g[#g + 1] = r.name .. ":" .. r.vals[1]
end
local total = 0
for k = 0, 6 do total = total + #table.concat(groups[k], ",") end
print(total, #recs)
"""


def log_lines(path, lines=200000, seed=5):
    """Input A of gawk: web-server-like log lines."""
    r = random.Random(seed)
    methods = ["GET", "POST", "PUT", "DELETE"]
    with open(path, "w") as f:
        for i in range(lines):
            f.write(f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(0, 255)} "
                    f"{r.choice(methods)} /p/{r.randint(0, 3000)}/{r.randint(0, 50)} "
                    f"{r.choice([200, 200, 200, 304, 404, 500])} {r.randint(100, 90000)}\n")


def table_rows(path, rows=250000, seed=6):
    """Input B of gawk: key / group / value / text / comma-separated parts per row."""
    r = random.Random(seed)
    with open(path, "w") as f:
        for i in range(rows):
            parts = ",".join(f"p{r.randint(0, 20000)}" for _ in range(r.randint(1, 4)))
            f.write(f"k{i} g{r.randint(0, 5000)} {r.randint(0, 1000)} {'v' * r.randint(1, 20)} "
                    f"{parts}\n")


AWK_A = r"""{ hits[$1]++; bytes[$1] += $5; split($3, p, "/"); page[p[3]]++; st[$4 " " $2]++ }
END { n = 0; for (h in hits) if (hits[h] > 1) n++
      top = ""; for (k in page) if (page[k] > 90) top = top k ","
      s = 0; for (k in st) s += st[k]
      printf "%d %d %d %d\n", length(hits), n, length(top), s }
"""
AWK_B = r"""{ n[$2]++; s[$2] += $3; w[$1] = $4 " " $2; split($5, parts, ","); for (q in parts) t[parts[q]]++ }
END { for (k in n) out = out sprintf("%s %d %.2f\n", k, n[k], s[k]); m = 0; for (k in t) m++
      c = 0; for (k in w) c += length(w[k]); printf "%d %d %d %d\n", length(n), m, c, length(out) }
"""
