// The page script's flame graph: the top-down call tree drawn from the outermost frame,
// widths by the chosen metric; click a frame to zoom into it (the breadcrumbs zoom out), type
// to highlight matching functions. The panel below names the clicked function's callers and
// callees (summed over every place it appears) and the sites under the frame.
#include "html/page_assets.hpp"

namespace rtmem::analyze {

const char* const script_flame = R"JS(
const FG={z:0,metric:'b',re:null};
const METRIC_NAME={b:'bytes allocated',n:'calls',k:'live at the peak',l:'leaked'};
function fmtMetric(m,v){return m==='n'?v.toLocaleString()+' calls':fmtBytes(v);}
function treeIndex(T){const N=T.f.length,kids=Array.from({length:N},()=>[]),depth=new Int32Array(N),end=new Int32Array(N);
 for(let i=1;i<N;i++){kids[T.p[i]].push(i);depth[i]=depth[T.p[i]]+1;}
 for(let i=N-1;i>=0;i--){end[i]=kids[i].length?end[kids[i][kids[i].length-1]]:i+1;}
 return {N,kids,depth,end};}
function flameColor(name,hit){if(hit)return '#e040fb';if(name[0]==='[')return '#c9c9c9';
 let h=0;for(let i=0;i<name.length;i++)h=(h*31+name.charCodeAt(i))>>>0;return 'hsl('+(10+h%45)+','+(70+h%20)+'%,'+(58+(h>>8)%14)+'%)';}
function drawFlame(){const T=DATA.down,I=FG.I||(FG.I=treeIndex(T)),el=$('flame'),W=el.clientWidth||1000,H=18,m=FG.metric,V=T[m];
 const z=FG.z,total=V[z]||1,names=DATA.frames;let html='',maxd=0,shown=0;const d0=I.depth[z];
 const stack=[[z,0]];while(stack.length){const [i,x]=stack.pop();const w=W*V[i]/total;if(w<1)continue;
  const d=I.depth[i]-d0;maxd=Math.max(maxd,d);const name=names[T.f[i]];const hit=FG.re&&FG.re.test(name);shown++;
  html+='<div class="fg'+(hit?' match':'')+'" data-i="'+i+'" style="left:'+x.toFixed(1)+'px;width:'+Math.max(0,w-1).toFixed(1)+'px;top:'+(d*H)+'px;background:'+flameColor(name,hit)+'" title="'+
   esc(name+' \u2014 '+fmtMetric(m,V[i])+' ('+fmtPct(V[i],V[0])+' of all)')+'">'+(w>24?esc(name):'')+'</div>';
  // children left to right in name order: pushed in reverse so the first pops first
  const k=I.kids[i];let acc=x;const pos=k.map(c=>{const p=acc;acc+=W*V[c]/total;return p;});for(let j=k.length-1;j>=0;j--)stack.push([k[j],pos[j]]);}
 el.innerHTML=html;el.style.height=((maxd+1)*H+2)+'px';el.dataset.drawn='1';el.dataset.root=names[T.f[z]];el.dataset.shown=shown;
 let crumbs='';for(let n=z;n>=0;n=T.p[n])crumbs='<a href="#" data-i="'+n+'">'+esc(names[T.f[n]])+'</a>'+(crumbs?' \u203a '+crumbs:'');
 $('crumbs').innerHTML='zoom: '+crumbs;
 const L=DATA.limits;$('flamenote').textContent=(L.down_nodes>T.f.length?'Merged from '+L.down_nodes.toLocaleString()+' call-tree nodes to the '+T.f.length.toLocaleString()+' heaviest (the rest are "other callees"). ':'')+
  (L.cut_stacks?L.cut_stacks.toLocaleString()+' stacks ('+fmtBytes(L.cut_bytes)+') were deeper than the recorded depth ('+L.depth+'): their outer frames are unknown, so they hang under one grey node; record with --depth 64 to root them. ':'')+
  'Frames narrower than a pixel are not drawn: click a frame to zoom in.';}
// A frame matches the search as a regular expression or as plain text (names such as
// "python3.11+0x5e90" are not the regular expression they look like).
function searcher(q){const text=q.toLowerCase();let re=null;try{re=new RegExp(q,'i');}catch(e){}
 return {test:n=>(re!==null&&re.test(n))||n.toLowerCase().includes(text)};}
function flameSearch(q){FG.re=null;let info='';if(q){FG.re=searcher(q);
  const T=DATA.down,I=FG.I||(FG.I=treeIndex(T)),V=T[FG.metric];let sum=0,hits=0;
  for(let i=1;i<I.N;){if(FG.re.test(DATA.frames[T.f[i]])){hits++;sum+=V[i];i=I.end[i];}else i++;}
  info=hits?hits.toLocaleString()+' matching frames, '+fmtPct(sum,V[0])+' of '+METRIC_NAME[FG.metric]:'no match';}
 $('searchinfo').textContent=info;drawFlame();}
function frameInfo(i){const T=DATA.down,I=FG.I,m=FG.metric,V=T[m],f=T.f[i],names=DATA.frames;
 const callers=new Map(),callees=new Map();let self=0;
 for(let n=1;n<I.N;n++){if(T.f[n]!==f)continue;let inner=false;for(let a=T.p[n];a>0;a=T.p[a])if(T.f[a]===f){inner=true;break;}
  if(inner)continue;self+=V[n];const p=T.p[n];if(p>=0)callers.set(T.f[p],(callers.get(T.f[p])||0)+V[n]);
  for(const c of I.kids[n])callees.set(T.f[c],(callees.get(T.f[c])||0)+V[c]);}
 const list=(mp)=>[...mp].sort((a,b)=>b[1]-a[1]).slice(0,15).map(([k,v])=>'<li>'+esc(names[k])+' \u2014 '+fmtMetric(m,v)+'</li>').join('')||'<li>(none)</li>';
 const S=DATA.sites,rows=[];for(let r=0;r<S.node.length;r++){const n=S.node[r];if(n>=i&&n<I.end[i])rows.push(r);}
 rows.sort((a,b)=>S.bytes[b]-S.bytes[a]);
 $('frameinfo').innerHTML='<h3>'+esc(names[f])+'</h3><p>'+fmtMetric(m,self)+' ('+fmtPct(self,V[0])+') under it, everywhere it appears</p><div class="grid3"><div><b>called from</b><ul class="callers">'+list(callers)+
  '</ul></div><div><b>calls</b><ul class="callees">'+list(callees)+'</ul></div><div><b>sites under this frame</b><ul class="fsites">'+
  (rows.slice(0,15).map(r=>'<li><a href="#" data-stack="'+S.stack[r]+'">'+esc(S.site[r])+'</a> \u2014 '+fmtBytes(S.bytes[r])+'</li>').join('')||'<li>(none in the table)</li>')+'</ul></div></div>';}
function setupFlame(){const el=$('flame');
 el.addEventListener('click',e=>{const b=e.target.closest('.fg');if(!b)return;const i=+b.dataset.i;FG.z=i;drawFlame();frameInfo(i);});
 $('crumbs').addEventListener('click',e=>{const a=e.target.closest('a');if(!a)return;e.preventDefault();FG.z=+a.dataset.i;drawFlame();});
 $('frameinfo').addEventListener('click',e=>{const a=e.target.closest('a[data-stack]');if(!a)return;e.preventDefault();openSite(+a.dataset.stack);});
 $('search').addEventListener('input',e=>flameSearch(e.target.value));
 $('metric').addEventListener('change',e=>{FG.metric=e.target.value;flameSearch($('search').value);drawBottomUp();});
 $('unzoom').onclick=()=>{FG.z=0;drawFlame();};
 window.addEventListener('resize',()=>drawFlame());drawFlame();}
)JS";

}  // namespace rtmem::analyze
