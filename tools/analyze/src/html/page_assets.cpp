// The page's inline style, and the script parts joined in dependency order.
#include "html/page_assets.hpp"

namespace rtmem::analyze {

const char* page_style() {
    return R"CSS(
body{font-family:sans-serif;margin:20px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}h3{font-size:14px;margin:8px 0}
table.totals td{padding:2px 12px 2px 0}
.chart{position:relative;width:100%;min-height:200px;border:1px solid #ddd;background:#fff}
.chart svg{display:block;font:11px sans-serif}.chart .gl{stroke:#eee}.chart .ax,.chart .xt{stroke:#888}
.chart .line{fill:none;stroke:#1f6feb;stroke-width:1.5}.chart .area{fill:#1f6feb22}.chart .bar{fill:#2da44e}.chart .bar:hover{fill:#1a7f37}
.chart .tick{fill:#444;font-size:10px}.chart .axis{fill:#222;font-size:11px}
.tip{position:absolute;display:none;background:#222;color:#fff;padding:2px 6px;font-size:11px;border-radius:3px;pointer-events:none;white-space:nowrap}
#sites,.butable{border-collapse:collapse;font-size:12px;width:100%}#sites th,.butable th{cursor:pointer;background:#f0f0f0;text-align:left;padding:3px}
#sites td,.butable td{padding:2px 6px;border-top:1px solid #eee;font-family:monospace;white-space:nowrap}
#sites td.name{white-space:normal;word-break:break-all}#sites tr.site{cursor:pointer}#sites tr.site:hover,.butable tr.bu:hover{background:#eef4ff}
.butable tr.bu{cursor:pointer}.butable td:first-child{white-space:normal;word-break:break-all}.tw{display:inline-block;width:1em}
.toolbar{margin:6px 0;font-size:13px}.toolbar input{width:22em}
#crumbs{font-size:12px;margin:4px 0}#crumbs a{color:#1f6feb}
#flame{position:relative;width:100%;font-size:11px;overflow:hidden;border:1px solid #ddd}
.fg{position:absolute;height:16px;overflow:hidden;white-space:nowrap;border-radius:2px;padding-left:2px;box-sizing:border-box;cursor:pointer;line-height:16px}
.fg.match{outline:1px solid #7b1fa2}.fg:hover{filter:brightness(0.9)}
.note{font-size:12px;color:#555}
#frameinfo{font-size:12px}#frameinfo ul{margin:4px 0;padding-left:18px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:16px}.grid3{display:grid;grid-template-columns:1fr 1fr 1fr;gap:12px}
#siteview{position:fixed;inset:0;background:#0006;overflow:auto;z-index:10}
.sv{background:#fff;margin:30px auto;max-width:1100px;padding:16px 20px;border-radius:6px}#svclose{float:right}
.stack{font-family:monospace;font-size:12px}
a.sitelink{color:#1f6feb}
)CSS";
}

std::string page_script() {
    return std::string(script_common) + script_charts + script_flame + script_tables;
}

}  // namespace rtmem::analyze
