// The page script's shared part: number formatting, SVG charts built as markup (so the page
// carries no namespace URL), and the per-site view that the site table, the flame graph and
// the advice open.
#include "html/page_assets.hpp"

namespace rtmem::analyze {

const char* const script_common = R"JS(
const $=id=>document.getElementById(id);
const esc=s=>String(s).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;').replace(/"/g,'&quot;');
const UNITS_B=['B','KiB','MiB','GiB','TiB'];
function fmtBytes(b){let i=0;while(b>=1024&&i<4){b/=1024;i++;}return (i?(b<10?b.toFixed(2):b<100?b.toFixed(1):b.toFixed(0)):b)+' '+UNITS_B[i];}
function fmtNs(n){if(n<1e3)return Math.round(n)+' ns';if(n<1e6)return +(n/1e3).toPrecision(3)+' us';if(n<1e9)return +(n/1e6).toPrecision(3)+' ms';return +(n/1e9).toPrecision(3)+' s';}
function fmtCount(n){return n>=1e9?+(n/1e9).toPrecision(3)+'G':n>=1e6?+(n/1e6).toPrecision(3)+'M':n>=1e4?+(n/1e3).toPrecision(3)+'k':String(Math.round(n));}
function fmtPct(v,t){return t?(100*v/t).toFixed(v*1000<t?2:1)+'%':'-';}
// Ticks at round values of the unit the maximum is shown in: 1, 2 or 5 times a power of ten.
function ticks(max,base,units,n){let u=1,k=0;while(max/u>=base&&k<units-1){u*=base;k++;}
 const raw=max/u/(n||5),p=Math.pow(10,Math.floor(Math.log10(raw||1))),f=raw/p;
 const step=(f<=1?1:f<=2?2:f<=5?5:10)*p*u;const out=[];for(let v=0;v<=max*1.0001;v+=step)out.push(v);return out;}
const tickBytes=m=>ticks(m,1024,5),tickNs=m=>ticks(m,1000,4),tickCount=m=>ticks(m,1e3,4);
// An SVG chart frame: the plot area, tick labels and grid on both axes, axis titles.
function frame(el,o){const W=Math.max(300,el.clientWidth),H=o.h||230,L=72,R=12,T=10,B=o.rot?62:44;
 return {W,H,L,R,T,B,pw:W-L-R,ph:H-T-B};}
function yAxis(f,max,tk,fmt,title){let s='';for(const v of tk(max)){const y=f.T+f.ph-f.ph*v/max;
  s+='<line class="gl" x1="'+f.L+'" x2="'+(f.W-f.R)+'" y1="'+y+'" y2="'+y+'"/><text class="tick ytick" x="'+(f.L-6)+'" y="'+(y+4)+'" text-anchor="end">'+esc(fmt(v))+'</text>';}
 return s+'<text class="axis" transform="translate(12,'+(f.T+f.ph/2)+') rotate(-90)" text-anchor="middle">'+esc(title)+'</text>';}
function axesLines(f){return '<line class="ax" x1="'+f.L+'" x2="'+f.L+'" y1="'+f.T+'" y2="'+(f.T+f.ph)+'"/><line class="ax" x1="'+f.L+'" x2="'+(f.W-f.R)+'" y1="'+(f.T+f.ph)+'" y2="'+(f.T+f.ph)+'"/>';}
function xTitle(f,title){return '<text class="axis" x="'+(f.L+f.pw/2)+'" y="'+(f.H-6)+'" text-anchor="middle">'+esc(title)+'</text>';}
function put(el,f,inner){el.innerHTML='<svg width="'+f.W+'" height="'+f.H+'" viewBox="0 0 '+f.W+' '+f.H+'">'+inner+'</svg>';el.dataset.drawn='1';}
// A line over time: xs in ns since the start of recording.
function lineChart(el,xs,ys,o){const f=frame(el,o);if(!xs.length){el.textContent='(no events)';el.dataset.drawn='1';return;}
 const x0=xs[0],x1=Math.max(xs[xs.length-1],x0+1),my=Math.max(1,...ys);
 const px=x=>f.L+f.pw*(x-x0)/(x1-x0),py=y=>f.T+f.ph-f.ph*y/my;
 let s=yAxis(f,my,o.ticks,o.fy,o.ytitle);
 for(const v of tickNs(x1-x0)){const x=px(x0+v);s+='<line class="xt" x1="'+x+'" x2="'+x+'" y1="'+(f.T+f.ph)+'" y2="'+(f.T+f.ph+4)+'"/><text class="tick xtick" x="'+x+'" y="'+(f.T+f.ph+16)+'" text-anchor="middle">'+esc(fmtNs(x0+v))+'</text>';}
 let d='';xs.forEach((x,i)=>{d+=(i?'L':'M')+px(x).toFixed(1)+' '+py(ys[i]).toFixed(1);});
 if(xs.length===1)d+='L'+px(x1)+' '+py(ys[0]);
 s+='<path class="area" d="'+d+'L'+px(xs[xs.length-1]).toFixed(1)+' '+(f.T+f.ph)+'L'+px(x0)+' '+(f.T+f.ph)+'Z"/><path class="line" d="'+d+'"/>';
 s+=axesLines(f)+xTitle(f,o.xtitle||'time since the start of recording');
 put(el,f,s);
 const svg=el.firstChild;const tip=document.createElement('div');tip.className='tip';el.appendChild(tip);
 svg.addEventListener('mousemove',ev=>{const r=svg.getBoundingClientRect();const t=x0+(ev.clientX-r.left-f.L)/f.pw*(x1-x0);
  let i=0;while(i+1<xs.length&&xs[i+1]<=t)i++;if(t<x0||t>x1){tip.style.display='none';return;}
  tip.style.display='block';tip.style.left=(ev.clientX-r.left+12)+'px';tip.style.top=(ev.clientY-r.top)+'px';tip.textContent=fmtNs(xs[i])+': '+o.fy(ys[i]);});
 svg.addEventListener('mouseleave',()=>tip.style.display='none');}
// A log2 histogram, `h` = [first bucket, counts...]; bucket i holds [2^(i-1), 2^i). Each bar is
// labelled with its lower bound; labels are thinned (every 2nd, 4th...) until they cannot touch.
function histChart(el,h,o){const f=frame(el,o);if(!h||h.length<2){el.innerHTML='<p class="note empty">'+esc(o.empty||'(none)')+'</p>';el.dataset.drawn='1';return;}
 const first=h[0],c=h.slice(1),my=Math.max(1,...c),bw=f.pw/c.length;
 const lo=i=>i===0?0:Math.pow(2,i-1);
 const labels=c.map((_,k)=>o.fx(lo(first+k)));const widest=Math.max(...labels.map(l=>l.length))*6.2+8;
 let every=1;while(every*bw<widest)every*=2;
 let s=yAxis(f,my,tickCount,fmtCount,o.ytitle);
 c.forEach((v,k)=>{const bh=f.ph*v/my,x=f.L+k*bw;
  s+='<rect class="bar" x="'+(x+1).toFixed(1)+'" y="'+(f.T+f.ph-bh).toFixed(1)+'" width="'+Math.max(1,bw-2).toFixed(1)+'" height="'+bh.toFixed(1)+'"><title>'+esc(o.fx(lo(first+k))+' to '+o.fx(Math.pow(2,first+k))+': '+v.toLocaleString()+' '+o.what)+'</title></rect>';
  if(k%every===0)s+='<text class="tick xtick" x="'+(x+bw/2).toFixed(1)+'" y="'+(f.T+f.ph+16)+'" text-anchor="middle">'+esc(labels[k])+'</text>';});
 s+=axesLines(f)+xTitle(f,o.xtitle);put(el,f,s);}
function fmtPow2Bytes(b){return b<1024?b+' B':b<1048576?(b/1024)+' KiB':b<1073741824?(b/1048576)+' MiB':(b/1073741824)+' GiB';}
function stackOf(stack){const p=DATA.detail.paths[stack];if(p)return p.map(i=>DATA.frames[i]);
 const S=DATA.sites,row=S.stack.indexOf(stack);if(row<0||S.node[row]<0)return [];
 const T=DATA.down,out=[];for(let n=S.node[row];n>0;n=T.p[n])out.push(DATA.frames[T.f[n]]);return out.reverse();}
// The per-site view: totals, the whole stack, and the site's own histograms and memory.
function openSite(stack){const S=DATA.sites,row=S.stack.indexOf(stack),v=$('siteview');if(row<0)return;
 const d=DATA.detail.sites[stack];
 let s='<div class="sv"><button id="svclose">close</button><h2>Site: '+esc(S.site[row])+'</h2><p>'+
  S.calls[row].toLocaleString()+' calls, '+fmtBytes(S.bytes[row])+' allocated, '+fmtBytes(S.peak[row])+' live at the peak, '+
  fmtBytes(S.leaked[row])+' leaked, '+fmtNs(S.time[row])+' in the allocator'+
  (S.node[row]>0?' — <a href="#" id="svflame">show in the flame graph</a>':'')+'</p>';
 s+='<details open><summary>call stack (allocating function first)</summary><ol class="stack">'+stackOf(stack).reverse().map(x=>'<li>'+esc(x)+'</li>').join('')+'</ol></details>';
 if(d)s+='<div class="grid"><div><h3>Memory of this site over time</h3><div class="chart" id="sv_mem"></div></div>'+
  '<div><h3>Sizes</h3><div class="chart" id="sv_sizes"></div></div><div><h3>Lifetimes (blocks freed)</h3><div class="chart" id="sv_life"></div></div></div>';
 else s+='<p class="note">No per-site charts: they are kept for the '+DATA.limits.detail_sites+' sites with the most bytes, the top sites of every other column and the advised sites.</p>';
 v.innerHTML=s+'</div>';v.hidden=false;v.dataset.stack=stack;$('svclose').onclick=()=>{v.hidden=true;};
 if($('svflame'))$('svflame').onclick=e=>{e.preventDefault();v.hidden=true;const T=DATA.down;FG.z=Math.max(0,T.p[S.node[row]]);drawFlame();frameInfo(FG.z);$('flame').scrollIntoView();};
 if(d){const D=DATA.detail;lineChart($('sv_mem'),d.m.map((_,i)=>D.t0+i*D.step),d.m,{fy:fmtBytes,ticks:tickBytes,ytitle:'live bytes',h:200});
  histChart($('sv_sizes'),d.s,{fx:fmtPow2Bytes,ytitle:'allocations',xtitle:'size (bar: from this size to twice it)',what:'allocations',h:200});
  histChart($('sv_life'),d.l,{fx:fmtNs,ytitle:'blocks',xtitle:'lifetime (bar: from this to twice it)',what:'blocks',h:200,empty:'(no block of this site was freed)'});}
 v.scrollIntoView();}
document.addEventListener('keydown',e=>{if(e.key==='Escape')$('siteview').hidden=true;});
)JS";

}  // namespace rtmem::analyze
