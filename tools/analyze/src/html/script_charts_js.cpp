// The page script's overview charts: memory and allocation rate over time, size and lifetime
// histograms (the chart helpers are in script_common_js.cpp).
#include "html/page_assets.hpp"

namespace rtmem::analyze {

const char* const script_charts = R"JS(
function drawOverview(){const T=DATA.timeline,xs=T.live.map((_,i)=>T.t0+i*T.step);
 lineChart($('memory'),xs,T.live,{fy:fmtBytes,ticks:tickBytes,ytitle:'live bytes (highest in interval)'});
 lineChart($('rate'),xs,T.allocs.map(a=>a*1e9/Math.max(1,T.step)),{fy:v=>fmtCount(v)+'/s',ticks:tickCount,ytitle:'allocations per second'});
 histChart($('sizes'),DATA.sizes,{fx:fmtPow2Bytes,ytitle:'allocations',xtitle:'size requested (bar: from this size to twice it)',what:'allocations'});
 histChart($('lifetimes'),DATA.lifetimes,{fx:fmtNs,ytitle:'blocks',xtitle:'lifetime (bar: from this to twice it)',what:'blocks'});}
)JS";

}  // namespace rtmem::analyze
