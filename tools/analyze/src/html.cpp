// `rtmem report --html`: one self-contained page. The data goes in as JSON; inline JavaScript
// draws the charts on canvases and marks each one data-drawn="1" (the headless-browser test
// checks those marks), so the page needs no network and no external files.
#include <map>
#include <sstream>

#include "rtmem/analyze/report_sections.hpp"
#include "rtmem/analyze/report_output.hpp"

namespace rtmem::analyze {

namespace {

// JSON safe inside <script>: no "</" can close the element.
std::string script_json(const nlohmann::json& j) {
    std::string s = j.dump();
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '<') {
            out += "\\u003c";
        } else {
            out += s[i];
        }
    }
    return out;
}

struct flame_node {
    std::uint64_t bytes = 0;
    std::map<std::string, flame_node> children;
};

nlohmann::json flame_json(const std::string& name, const flame_node& n, int depth) {
    nlohmann::json j = {{"n", name}, {"v", n.bytes}};
    if (depth < 64 && !n.children.empty()) {
        nlohmann::json c = nlohmann::json::array();
        for (const auto& [k, child] : n.children) c.push_back(flame_json(k, child, depth + 1));
        j["c"] = c;
    }
    return j;
}

const char* page_script = R"JS(
function fmtBytes(b){const u=['B','KiB','MiB','GiB','TiB'];let i=0;while(b>=1024&&i<4){b/=1024;i++;}return (i?b.toFixed(1):b)+' '+u[i];}
function fmtNs(n){if(n<1e4)return n+' ns';if(n<1e7)return (n/1e3).toFixed(1)+' us';if(n<1e10)return (n/1e6).toFixed(1)+' ms';return (n/1e9).toFixed(2)+' s';}
function setup(id){const c=document.getElementById(id);const r=window.devicePixelRatio||1;c.width=c.clientWidth*r;c.height=c.clientHeight*r;const g=c.getContext('2d');g.scale(r,r);return [c,g,c.clientWidth,c.clientHeight];}
function axes(g,w,h,label){g.strokeStyle='#888';g.beginPath();g.moveTo(50,5);g.lineTo(50,h-20);g.lineTo(w-5,h-20);g.stroke();g.fillStyle='#333';g.font='11px sans-serif';g.fillText(label,55,14);}
function line(id,xs,ys,label,fy){const [c,g,w,h]=setup(id);axes(g,w,h,label);const mx=Math.max(1,...xs),my=Math.max(1,...ys);
 g.strokeStyle='#1f6feb';g.lineWidth=1.5;g.beginPath();xs.forEach((x,i)=>{const px=50+(w-60)*x/mx,py=h-20-(h-30)*ys[i]/my;i?g.lineTo(px,py):g.moveTo(px,py);});g.stroke();
 g.fillStyle='#333';g.fillText(fy(my),2,12);g.fillText(fmtNs(mx),w-70,h-5);c.dataset.drawn='1';}
function bars(id,labels,vals,label){const [c,g,w,h]=setup(id);axes(g,w,h,label);const my=Math.max(1,...vals),bw=(w-60)/Math.max(1,vals.length);
 g.fillStyle='#2da44e';vals.forEach((v,i)=>{const bh=(h-30)*v/my;g.fillRect(51+i*bw,h-20-bh,Math.max(1,bw-2),bh);});
 g.fillStyle='#333';g.font='9px sans-serif';labels.forEach((l,i)=>{if(vals.length<24||i%3==0)g.fillText(l,51+i*bw,h-8);});g.fillText(String(my),2,12);c.dataset.drawn='1';}
function table(){const t=document.getElementById('sites');const cols=['calls','bytes','peak_bytes','time_ns','leaked_bytes','site'];
 let rows=DATA.sites.slice();let key='bytes',desc=true;
 function render(){rows.sort((a,b)=>{const x=a[key],y=b[key];const r=typeof x==='string'?x.localeCompare(y):x-y;return desc?-r:r;});
  let s='<tr>'+cols.map(c=>'<th data-k="'+c+'">'+c+(c===key?(desc?' \u25bc':' \u25b2'):'')+'</th>').join('')+'</tr>';
  for(const r of rows.slice(0,500)){s+='<tr><td>'+r.calls+'</td><td>'+fmtBytes(r.bytes)+'</td><td>'+fmtBytes(r.peak_bytes)+'</td><td>'+fmtNs(r.time_ns)+'</td><td>'+fmtBytes(r.leaked_bytes)+'</td><td class="site"></td></tr>';}
  t.innerHTML=s;const cells=t.querySelectorAll('td.site');rows.slice(0,500).forEach((r,i)=>cells[i].textContent=r.site);
  t.querySelectorAll('th').forEach(th=>th.onclick=()=>{const k=th.dataset.k;desc=(k===key)?!desc:true;key=k;render();});t.dataset.drawn='1';}
 render();}
function flame(){const root=document.getElementById('flame');const W=root.clientWidth,H=18;let maxd=0;
 function walk(n,x,w,d){if(w<1)return;maxd=Math.max(maxd,d);const e=document.createElement('div');e.className='fg';e.style.left=x+'px';e.style.width=(w-1)+'px';e.style.top=(d*H)+'px';
  e.textContent=n.n;e.title=n.n+' \u2014 '+fmtBytes(n.v);e.style.background='hsl('+(20+(n.n.length*37)%40)+',85%,'+(60+d%3*6)+'%)';root.appendChild(e);
  let cx=x;for(const c of (n.c||[])){const cw=w*c.v/Math.max(1,n.v);walk(c,cx,cw,d+1);cx+=cw;}}
 walk(DATA.flame,0,W,0);root.style.height=((maxd+1)*H+4)+'px';root.dataset.drawn='1';}
function draw(){const tl=DATA.timeline;const xs=tl.map(p=>p.t);
 line('memory',xs,tl.map(p=>p.live),'live bytes over time',fmtBytes);
 bars('rate',tl.map(p=>''),tl.map(p=>Math.round(p.allocs*1e9/Math.max(1,DATA.step_ns))),'allocations per second');
 bars('sizes',DATA.sizes.map(b=>fmtBytes(b.max)),DATA.sizes.map(b=>b.count),'allocation sizes (count per log2 bucket)');
 bars('lifetimes',DATA.lifetimes.map(b=>fmtNs(b.max)),DATA.lifetimes.map(b=>b.count),'lifetimes (count per log2 bucket)');
 table();flame();document.body.dataset.rendered=String(document.querySelectorAll('[data-drawn="1"]').length);}
window.addEventListener('load',draw);
)JS";

const char* page_style = R"CSS(
body{font-family:sans-serif;margin:20px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table.totals td{padding:2px 12px 2px 0}canvas{width:100%;height:220px;border:1px solid #ddd}
#sites{border-collapse:collapse;font-size:12px;width:100%}#sites th{cursor:pointer;background:#f0f0f0;text-align:left;padding:3px}
#sites td{padding:2px 6px;border-top:1px solid #eee;font-family:monospace}
#flame{position:relative;width:100%;font-size:11px;overflow:hidden}
.fg{position:absolute;height:16px;overflow:hidden;white-space:nowrap;border-radius:2px;padding-left:2px;box-sizing:border-box}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:16px}
)CSS";

}  // namespace

std::string to_html(const trace_info& info, const report_data& r, site_names& names,
                    event_source& source, std::size_t top) {
    nlohmann::json data;
    nlohmann::json tl = nlohmann::json::array();
    for (const auto& p : r.timeline) {
        tl.push_back({{"t", p.time_ns}, {"live", p.live_bytes}, {"allocs", p.allocations}});
    }
    data["timeline"] = tl;
    data["step_ns"] = r.timeline_step_ns;
    auto hist = [](const log2_histogram& h) {
        nlohmann::json a = nlohmann::json::array();
        std::size_t first = h.buckets.size(), last = 0;
        for (std::size_t i = 0; i < h.buckets.size(); ++i) {
            if (h.buckets[i] != 0) {
                first = std::min(first, i);
                last = i;
            }
        }
        for (std::size_t i = first; i <= last && first < h.buckets.size(); ++i) {
            a.push_back({{"max", log2_histogram::upper_bound(i)}, {"count", h.buckets[i]}});
        }
        return a;
    };
    data["sizes"] = hist(r.sizes);
    data["lifetimes"] = hist(r.lifetimes_ns);
    nlohmann::json sites = nlohmann::json::array();
    flame_node root;
    for (const auto& s : top_sites(r, site_order::bytes, std::max<std::size_t>(top, 2000))) {
        sites.push_back({{"site", names.name(s.stack)},
                         {"calls", s.calls},
                         {"bytes", s.bytes},
                         {"peak_bytes", s.peak_bytes},
                         {"time_ns", s.time_ns},
                         {"leaked_bytes", s.live_bytes}});
        flame_node* n = &root;
        root.bytes += s.bytes;
        for (const auto& f : names.path(s.stack)) {
            n = &n->children[f];
            n->bytes += s.bytes;
        }
    }
    data["sites"] = sites;
    data["flame"] = flame_json("all allocations", root, 0);

    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rtmem report: "
      << escape_html(info.program) << "</title><style>" << page_style << "</style></head><body>\n";
    o << "<h1>rtmem report: " << escape_html(info.program) << "</h1>\n";
    const section_input in{info, r, names, top, &source};
    for (const auto& section : report_sections()) {
        if (section.html == nullptr) continue;
        if (section.titled) o << "<section><h2>" << escape_html(section.name) << "</h2>\n";
        o << section.html(in);
        if (section.titled) o << "\n</section>\n";
    }
    o << "<script>const DATA=" << script_json(data) << ";\n" << page_script << "</script>\n";
    o << "</body></html>\n";
    return o.str();
}

std::string escape_html(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

}  // namespace rtmem::analyze
