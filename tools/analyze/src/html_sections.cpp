// Registry of extra HTML report sections.
#include "rtmem/analyze/html_sections.hpp"

namespace rtmem::analyze {

namespace {
std::vector<html_section>& registry() {
    static std::vector<html_section> sections;
    return sections;
}
}  // namespace

bool register_html_section(std::string name, html_section_fn render) {
    registry().push_back({std::move(name), std::move(render)});
    return true;
}

const std::vector<html_section>& html_sections() {
    return registry();
}

}  // namespace rtmem::analyze
