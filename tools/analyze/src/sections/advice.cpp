// The advisor's recommendations as a section of the HTML report (the same table as
// `rtmem advise --html`); text and JSON stay with `rtmem advise`. It classifies the events in
// a pass of its own: the report's numbers do not say how blocks are freed.
#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/report_sections.hpp"
#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem::analyze {

namespace {

std::string advice_html(const section_input& in) {
    if (in.source == nullptr) return {};
    site_map sites(*in.source);
    const advice adv = advise(classify(*in.source, sites));
    format_options o;
    o.wrap = false;
    symbolizer* sym = in.names.symbols();
    const site_namer name = sym != nullptr ? symbol_namer(sites, *sym) : address_namer(sites);
    // format_html names each row of its table once, in order: the names asked for are the rows.
    return format_html(adv, [&](std::uint32_t site) {
        if (in.advised_stacks != nullptr) in.advised_stacks->push_back(sites.representative_stack(site));
        return name(site);
    }, o);
}

}  // namespace

extern const report_section advice_section;
const report_section advice_section{"Allocation advice (rtmem advise)", nullptr, nullptr,
                                    advice_html, true};

}  // namespace rtmem::analyze
