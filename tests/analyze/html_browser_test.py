#!/usr/bin/env python3
"""The HTML report in a real browser: records a trace of a real program (python3), writes the
report, loads it in headless Chromium through chromedriver (python3-selenium) and drives it:
the charts are drawn with tick labels (the size histogram's labels do not overlap), search
highlights frames, a click zooms the flame graph, the bottom-up tree lists callers, the site
table pages, and the per-site view opens from the table, the flame graph and the advice.

Usage: html_browser_test.py RTMEM_CLI WORK_DIR [REPORT.html]
(with REPORT.html it only checks that page). Exit 77 (ctest: skipped) when chromium,
chromedriver or selenium is missing: scripts/packages/tracer.txt installs them.
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77


def skip(why):
    print("SKIPPED: " + why + " (scripts/setup installs chromium, chromium-driver and python3-selenium)")
    sys.exit(SKIP)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    skip("python3-selenium is not installed")
chromium = shutil.which("chromium")
driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if chromium is None:
    skip("chromium is not installed")
if not os.path.exists(driver_path):
    skip("chromedriver (Debian package chromium-driver) is not installed")

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


PROGRAM = """
import json, sqlite3, xml.dom.minidom, collections
d = [{'a': i, 'b': str(i) * 5, 'c': [i] * (i % 40)} for i in range(30000)]
s = json.dumps(d); json.loads(s)
db = sqlite3.connect(':memory:'); db.execute('create table t(a, b)')
db.executemany('insert into t values (?, ?)', [(i, str(i) * 20) for i in range(20000)])
db.execute('select * from t order by b').fetchall()
xml.dom.minidom.parseString('<a>' + '<b x="1">t</b>' * 5000 + '</a>')
"""


def make_report(cli, work):
    os.makedirs(work, exist_ok=True)
    trace, page = os.path.join(work, "py.rtt"), os.path.join(work, "py.html")
    subprocess.run([cli, "record", "-o", trace, "--", sys.executable, "-c", PROGRAM], check=True)
    subprocess.run([cli, "report", trace, "--html", page], check=True, stdout=subprocess.DEVNULL)
    return page


def browser(work):
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,1000", "--user-data-dir=" + os.path.join(work, "profile")):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=opts)


def main():
    cli, work = sys.argv[1], sys.argv[2]
    own = len(sys.argv) <= 3
    page = make_report(cli, work) if own else sys.argv[3]
    print("page: %s (%d bytes)" % (page, os.path.getsize(page)))
    with open(page, encoding="utf-8") as f:
        text = f.read()
    check("http://" not in text.replace("http://www.w3.org", "") and " src=" not in text,
          "self-contained: no external scripts or links")
    b = browser(work)
    try:
        b.set_page_load_timeout(60)
        b.get("file://" + os.path.abspath(page))
        js = b.execute_script
        drawn = js("return document.body.dataset.rendered")
        timing = js("const n=performance.getEntriesByType('navigation')[0];"
                    "return [document.body.dataset.drawMs, Math.round(n.domContentLoadedEventEnd), Math.round(n.loadEventEnd)]")
        print("drawing took %s ms; DOMContentLoaded at %s ms, load done at %s ms" % tuple(timing))
        check(drawn is not None and int(drawn) >= 7, "every view drawn (data-rendered=%s)" % drawn)

        for chart in ("memory", "rate", "sizes", "lifetimes"):
            n = js("const e=document.getElementById(arguments[0]);"
                   "return e.dataset.drawn==='1' ? [e.querySelectorAll('svg text.xtick').length,"
                   " e.querySelectorAll('svg text.ytick').length, e.querySelectorAll('svg path.line,svg rect.bar').length,"
                   " e.querySelectorAll('svg text.axis').length] : null", chart)
            check(n is not None and n[0] >= 2 and n[1] >= 2 and n[2] >= 1 and n[3] == 2,
                  "chart %s: x ticks, y ticks, data, both axis titles %s" % (chart, n))
        overlaps = js("""const t=[...document.querySelectorAll('#sizes text.xtick')].map(e=>e.getBoundingClientRect());
            let o=0;for(let i=1;i<t.length;i++)if(t[i].left<t[i-1].right)o++;return [t.length,o];""")
        check(overlaps[0] >= 2 and overlaps[1] == 0, "size histogram labels do not overlap %s" % overlaps)
        kib = js("return [...document.querySelectorAll('#sizes text.xtick')].some(e=>/KiB|MiB/.test(e.textContent))")
        check(kib, "size histogram labels reach KiB")

        # Search: a function drawn at depth >= 1 lights up, and only matching frames do.
        # (a name with '+' or '.' is searched as text too: try the first drawn one)
        name = js("""const f=[...document.querySelectorAll('#flame .fg')].filter(e=>e.style.top!=='0px'&&e.offsetWidth>40&&!e.title.startsWith('['));
            return f.length?f[0].title.split(' \\u2014 ')[0]:null""")
        check(name is not None, "flame graph has named frames below the root (%s)" % name)
        box = b.find_element(By.ID, "search")
        box.send_keys(name)
        ms = js("const t=performance.now();flameSearch(arguments[0]);return Math.round(performance.now()-t)", name)
        print("search redraw took %s ms" % ms)
        hits = js("""const q=arguments[0].toLowerCase();const m=[...document.querySelectorAll('#flame .fg.match')];
            return [m.length, m.every(e=>e.title.toLowerCase().includes(q)), document.getElementById('searchinfo').textContent]""", name)
        check(hits[0] >= 1 and hits[1] and "matching" in hits[2], "search highlights matching frames %s" % hits[::2])
        box.clear()
        js("document.getElementById('search').dispatchEvent(new Event('input'))")
        check(js("return document.querySelectorAll('#flame .fg.match').length") == 0, "clearing the search clears it")

        # Zoom: clicking a frame makes it the root; the breadcrumbs lead back.
        before = js("return document.getElementById('flame').dataset.root")
        target = js("const f=[...document.querySelectorAll('#flame .fg')].filter(e=>e.style.top==='18px')"
                    ".sort((x,y)=>y.offsetWidth-x.offsetWidth);return f.find(e=>!e.title.startsWith('['))||f[0]")
        tname = target.get_attribute("title").split(" \u2014 ")[0]
        target.click()
        after = js("return [document.getElementById('flame').dataset.root, document.querySelector('#flame .fg').title]")
        check(before == "all allocations" and after[0] == tname and after[1].startswith(tname),
              "click zooms: root %r -> %r" % (before, after[0]))
        info = js("return [document.querySelectorAll('#frameinfo ul.callers li').length, document.querySelectorAll('#frameinfo a[data-stack]').length]")
        check(info[0] >= 1 and info[1] >= 1, "clicked frame lists its callers and its sites %s" % info)
        b.find_element(By.CSS_SELECTOR, "#frameinfo a[data-stack]").click()
        check(js("return !document.getElementById('siteview').hidden && document.getElementById('sv_mem')!==null"),
              "per-site view opens from the flame graph")
        b.find_element(By.ID, "svclose").click()
        b.find_element(By.CSS_SELECTOR, "#crumbs a").click()
        check(js("return document.getElementById('flame').dataset.root") == "all allocations", "breadcrumb zooms out")

        # Bottom-up: expanding an allocating function lists its callers one level deeper.
        rows = js("return document.querySelectorAll('#bottomup tr.bu[data-depth=\"1\"]').length")
        b.find_element(By.CSS_SELECTOR, "#bottomup tr.bu[data-depth='1']").click()
        callers = js("return [...document.querySelectorAll('#bottomup tr.bu[data-depth=\"2\"]')].map(r=>r.cells[0].textContent)")
        check(rows >= 1 and len(callers) >= 1, "bottom-up: %d functions, first has callers %s" % (rows, callers[:3]))

        # Site table: 25 rows a page, and the next page shows others.
        first = js("return [document.querySelectorAll('#sites tr.site').length, document.querySelector('#sites tr.site').dataset.stack]")
        b.find_element(By.ID, "next").click()
        second = js("return [document.getElementById('pageno').textContent, document.querySelector('#sites tr').nextElementSibling.dataset.stack]")
        check(first[0] == 25 and second[0] == "2" and second[1] != first[1], "site table pages %s -> %s" % (first, second))
        b.find_element(By.CSS_SELECTOR, "#sites tr.site").click()
        sv = js("""const v=document.getElementById('siteview');return [v.hidden, [...v.querySelectorAll('.chart')].map(c=>c.dataset.drawn==='1'&&(c.querySelectorAll('text.tick').length>=2||c.querySelector('.empty')!==null))]""")
        check(sv[0] is False and len(sv[1]) == 3 and all(sv[1]), "per-site view opens from the table with 3 charts (or a note that no block was freed) %s" % sv)
        b.find_element(By.ID, "svflame").click()
        back = js("return [document.getElementById('siteview').hidden, document.getElementById('flame').dataset.root,"
                  " [...document.querySelectorAll('#frameinfo a[data-stack]')].map(a=>a.dataset.stack)]")
        check(back[0] and back[1] != "all allocations" and str(second[1]) in back[2],
              "the site's 'show in the flame graph' zooms to its caller, which lists it %s" % back[:2])

        # Advice rows link to their sites.
        linked = js("const t=document.querySelector('table.advice');return t?[t.dataset.linked, t.querySelectorAll('a.sitelink').length,"
                    " t.querySelectorAll('tbody tr').length]:null")
        if own or (linked and linked[2] > 0):  # python3's trace always has advised sites
            check(linked is not None and linked[0] == "1" and linked[1] == linked[2] >= 1,
                  "advice rows link to sites %s" % linked)
        if linked and linked[1] >= 1:
            b.find_element(By.CSS_SELECTOR, "table.advice a.sitelink").click()
            check(js("return !document.getElementById('siteview').hidden"), "per-site view opens from the advice")

        errors = [e for e in b.get_log("browser") if e.get("level") == "SEVERE"]
        check(not errors, "no script errors %s" % errors[:3])
    finally:
        b.quit()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


main()
