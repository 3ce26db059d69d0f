// The page script's tables: the bottom-up tree (allocating functions, expanded to their
// callers), the site table (sorted, filtered, 25 rows a page; a row opens the per-site view),
// the advice rows linked to their sites, and the start-up that draws every view.
#include "html/page_assets.hpp"

namespace rtmem::analyze {

const char* const script_tables = R"JS(
const BU={open:new Set(),limit:20};
function drawBottomUp(){const T=DATA.up,I=BU.I||(BU.I=treeIndex(T)),m=FG.metric,V=T[m],names=DATA.frames,el=$('bottomup');
 const byMetric=k=>k.slice().sort((a,b)=>V[b]-V[a]);let rows='';
 function emit(i,d){const k=I.kids[i],open=BU.open.has(i);
  rows+='<tr class="bu" data-i="'+i+'" data-depth="'+d+'"><td style="padding-left:'+(d*16)+'px"><span class="tw">'+(k.length?(open?'\u25be':'\u25b8'):'\u00b7')+'</span> '+esc(names[T.f[i]])+'</td><td>'+fmtMetric(m,V[i])+'</td><td>'+fmtPct(V[i],V[0])+'</td></tr>';
  if(open)for(const c of byMetric(k).slice(0,100))emit(c,d+1);}
 const top=byMetric(I.kids[0]);for(const c of top.slice(0,BU.limit))emit(c,1);
 el.innerHTML='<table class="butable"><tr><th>allocating function \u25b8 its callers</th><th>'+esc(METRIC_NAME[m])+'</th><th>share</th></tr>'+rows+'</table>'+
  (top.length>BU.limit?'<button id="bumore">show '+Math.min(50,top.length-BU.limit)+' more of '+top.length+'</button>':'');
 el.dataset.drawn='1';const more=$('bumore');if(more)more.onclick=()=>{BU.limit+=20;drawBottomUp();};}
function setupBottomUp(){$('bottomup').addEventListener('click',e=>{const r=e.target.closest('tr.bu');if(!r)return;const i=+r.dataset.i;
  if(BU.open.has(i))BU.open.delete(i);else BU.open.add(i);drawBottomUp();});drawBottomUp();}
const ST={key:'bytes',desc:true,page:0,per:25,filter:''};
const COLS=[['site','site'],['calls','calls'],['bytes','bytes'],['peak','live at peak'],['time','allocator time'],['leaked','leaked']];
function drawSites(){const S=DATA.sites,t=$('sites'),n=S.stack.length,k=ST.key,col=S[k];
 let rows=[];const f=ST.filter.toLowerCase();for(let r=0;r<n;r++)if(!f||S.site[r].toLowerCase().includes(f))rows.push(r);
 rows.sort((a,b)=>{if(S.stack[a]<0)return 1;if(S.stack[b]<0)return -1;const x=col[a],y=col[b];const c=typeof x==='string'?x.localeCompare(y):x-y;return ST.desc?-c:c;});
 const pages=Math.max(1,Math.ceil(rows.length/ST.per));ST.page=Math.min(ST.page,pages-1);
 let s='<tr>'+COLS.map(([c,l])=>'<th data-k="'+c+'">'+l+(c===k?(ST.desc?' \u25bc':' \u25b2'):'')+'</th>').join('')+'</tr>';
 for(const r of rows.slice(ST.page*ST.per,(ST.page+1)*ST.per)){const link=S.stack[r]>=0;
  s+='<tr'+(link?' class="site" data-stack="'+S.stack[r]+'"':'')+'><td class="name">'+esc(S.site[r])+'</td><td>'+S.calls[r].toLocaleString()+'</td><td>'+fmtBytes(S.bytes[r])+'</td><td>'+fmtBytes(S.peak[r])+'</td><td>'+fmtNs(S.time[r])+'</td><td>'+fmtBytes(S.leaked[r])+'</td></tr>';}
 t.innerHTML=s;t.dataset.drawn='1';t.dataset.page=ST.page;
 $('pager').innerHTML='<button id="prev"'+(ST.page?'':' disabled')+'>\u2039 previous</button> page <b id="pageno">'+(ST.page+1)+'</b> of '+pages+' ('+rows.length.toLocaleString()+' sites'+
  (DATA.limits.sites>DATA.limits.table_sites?'; the table holds the '+DATA.limits.table_sites.toLocaleString()+' largest of '+DATA.limits.sites.toLocaleString()+', the rest summed in one row':'')+') <button id="next"'+(ST.page+1<pages?'':' disabled')+'>next \u203a</button>';
 $('prev').onclick=()=>{ST.page--;drawSites();};$('next').onclick=()=>{ST.page++;drawSites();};}
function setupSites(){const t=$('sites');
 t.addEventListener('click',e=>{const th=e.target.closest('th');if(th){const k=th.dataset.k;ST.desc=k===ST.key?!ST.desc:k!=='site';ST.key=k;ST.page=0;drawSites();return;}
  const tr=e.target.closest('tr.site');if(tr)openSite(+tr.dataset.stack);});
 $('sitefilter').addEventListener('input',e=>{ST.filter=e.target.value;ST.page=0;drawSites();});drawSites();}
// The advice table's rows are in DATA.advised's order (the advice section recorded them).
function linkAdvice(){const rows=document.querySelectorAll('table.advice tbody tr');if(!rows.length||rows.length!==DATA.advised.length)return;
 rows.forEach((tr,i)=>{const td=tr.lastElementChild,a=document.createElement('a');a.href='#';a.className='sitelink';a.dataset.stack=DATA.advised[i];
  a.textContent=td.textContent;td.textContent='';td.appendChild(a);a.onclick=e=>{e.preventDefault();openSite(DATA.advised[i]);};});
 document.querySelector('table.advice').dataset.linked='1';}
function draw(){const t0=performance.now();drawOverview();setupSites();setupFlame();setupBottomUp();linkAdvice();
 document.body.dataset.rendered=String(document.querySelectorAll('[data-drawn="1"]').length);
 document.body.dataset.drawMs=Math.round(performance.now()-t0);}
window.addEventListener('load',draw);
)JS";

}  // namespace rtmem::analyze
