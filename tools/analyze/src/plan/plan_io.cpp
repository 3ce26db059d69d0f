// plan.json reading and writing. Offsets are hex strings ("0x4f2a10") so a reader can match
// them against `nm`/`objdump` output; every rejected field is named in the error.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rtmem/analyze/plan.hpp"

namespace rtmem::analyze {

namespace {

using json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 4> strategy_names = {"heap", "pool", "region",
                                                            "thread_stack"};

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
    throw plan_error("plan: " + where + ": " + what);
}

const json& field(const json& object, const char* name, const std::string& where) {
    auto it = object.find(name);
    if (it == object.end()) fail(where, std::string("missing \"") + name + "\"");
    return *it;
}

std::uint64_t unsigned_field(const json& object, const char* name, const std::string& where,
                             std::uint64_t fallback) {
    auto it = object.find(name);
    if (it == object.end()) return fallback;
    if (!it->is_number_unsigned())
        fail(where, std::string("\"") + name + "\" must be a non-negative integer");
    return it->get<std::uint64_t>();
}

bool bool_field(const json& object, const char* name, const std::string& where) {
    auto it = object.find(name);
    if (it == object.end()) return false;
    if (!it->is_boolean()) fail(where, std::string("\"") + name + "\" must be true or false");
    return it->get<bool>();
}

std::uint64_t parse_offset(const json& value, const std::string& where) {
    if (!value.is_string()) fail(where, "\"offset\" must be a hex string like \"0x4f2a10\"");
    const auto text = value.get<std::string>();
    if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
        fail(where, "\"offset\" must be a hex string like \"0x4f2a10\", not \"" + text + "\"");
    std::uint64_t v = 0;
    for (std::size_t i = 2; i < text.size(); ++i) {
        const char c = text[i];
        unsigned d = 0;
        if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
        else fail(where, "\"offset\" has a non-hex digit: \"" + text + "\"");
        v = v * 16 + d;
    }
    return v;
}

plan_site parse_site(const json& s, const std::string& where) {
    if (!s.is_object()) fail(where, "a site must be an object");
    plan_site site;
    site.id = static_cast<std::uint32_t>(unsigned_field(s, "id", where, 0));
    if (auto it = s.find("label"); it != s.end() && it->is_string()) site.label = *it;
    if (auto it = s.find("reason"); it != s.end() && it->is_string()) site.reason = *it;
    const auto& strategy = field(s, "strategy", where);
    if (!strategy.is_string() || !parse_plan_strategy(strategy.get<std::string>(), site.strategy))
        fail(where, "unknown \"strategy\" " + strategy.dump() +
                        " (heap, pool, region or thread_stack)");
    const auto& frames = field(s, "frames", where);
    if (!frames.is_array() || frames.empty()) fail(where, "\"frames\" must be a non-empty array");
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const std::string fwhere = where + ".frames[" + std::to_string(i) + "]";
        const auto& f = frames[i];
        if (!f.is_object()) fail(fwhere, "a frame must be an object");
        const auto& module = field(f, "module", fwhere);
        if (!module.is_string() || module.get<std::string>().empty())
            fail(fwhere, "\"module\" must be a non-empty string");
        site.frames.push_back({module.get<std::string>(), parse_offset(field(f, "offset", fwhere), fwhere)});
    }
    site.whole_stack = bool_field(s, "whole_stack", where);
    site.frame_chunks = bool_field(s, "frame_chunks", where);
    site.placement_only = bool_field(s, "placement", where);
    site.block_size = unsigned_field(s, "block_size", where, 0);
    site.block_align = unsigned_field(s, "block_align", where, 0);
    site.chunk_bytes = unsigned_field(s, "chunk_bytes", where, 0);
    site.max_request = unsigned_field(s, "max_request", where, 0);
    site.allocations = unsigned_field(s, "allocations", where, 0);
    site.bytes = unsigned_field(s, "bytes", where, 0);
    if (auto it = s.find("expected_saved_ns"); it != s.end() && it->is_number())
        site.expected_saved_ns = it->get<double>();
    if (site.strategy == plan_strategy::pool) {
        if (site.block_size == 0) fail(where, "a pool needs \"block_size\" > 0");
        if (site.block_align != 0 && (site.block_align & (site.block_align - 1)) != 0)
            fail(where, "\"block_align\" must be a power of two");
    }
    if ((site.strategy == plan_strategy::region || site.strategy == plan_strategy::thread_stack) &&
        site.chunk_bytes == 0)
        fail(where, "a " + std::string(plan_strategy_name(site.strategy)) +
                        " needs \"chunk_bytes\" > 0");
    return site;
}

}  // namespace

std::string_view plan_strategy_name(plan_strategy s) noexcept {
    const auto i = static_cast<std::size_t>(s);
    return i < strategy_names.size() ? strategy_names[i] : std::string_view("?");
}

bool parse_plan_strategy(std::string_view name, plan_strategy& out) noexcept {
    for (std::size_t i = 0; i < strategy_names.size(); ++i)
        if (strategy_names[i] == name) {
            out = static_cast<plan_strategy>(i);
            return true;
        }
    return false;
}

std::string plan_to_json(const plan& p) {
    json j;
    j["format"] = plan::format_name;
    j["version"] = plan::format_version;
    j["program"] = p.program;
    j["trace"] = p.trace;
    j["frame_markers"] = p.frame_markers;
    j["depth"] = p.depth;
    j["sites"] = json::array();
    for (const auto& s : p.sites) {
        json site;
        site["id"] = s.id;
        site["label"] = s.label;
        site["strategy"] = plan_strategy_name(s.strategy);
        site["reason"] = s.reason;
        site["frames"] = json::array();
        for (const auto& f : s.frames)
            site["frames"].push_back({{"module", f.module}, {"offset", hex(f.offset)}});
        if (s.whole_stack) site["whole_stack"] = true;
        if (s.frame_chunks) site["frame_chunks"] = true;
        if (s.placement_only) site["placement"] = true;
        if (s.block_size != 0) site["block_size"] = s.block_size;
        if (s.block_align != 0) site["block_align"] = s.block_align;
        if (s.chunk_bytes != 0) site["chunk_bytes"] = s.chunk_bytes;
        if (s.max_request != 0) site["max_request"] = s.max_request;
        site["allocations"] = s.allocations;
        site["bytes"] = s.bytes;
        site["expected_saved_ns"] = s.expected_saved_ns;
        j["sites"].push_back(std::move(site));
    }
    return j.dump(2) + "\n";
}

plan plan_from_json(std::string_view text) {
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail("file", "not valid JSON");
    if (!j.is_object()) fail("file", "the top level must be an object");
    const auto& format = field(j, "format", "file");
    if (!format.is_string() || format.get<std::string>() != plan::format_name)
        fail("file", "\"format\" is " + format.dump() + ", not \"rtmem-plan\"");
    const auto version = unsigned_field(j, "version", "file", 0);
    if (version != static_cast<std::uint64_t>(plan::format_version))
        fail("file", "version " + std::to_string(version) + " is not supported (this rtmem reads " +
                         std::to_string(plan::format_version) + ")");
    plan p;
    if (auto it = j.find("program"); it != j.end() && it->is_string()) p.program = *it;
    if (auto it = j.find("trace"); it != j.end() && it->is_string()) p.trace = *it;
    if (auto it = j.find("frame_markers"); it != j.end() && it->is_boolean()) p.frame_markers = *it;
    p.depth = static_cast<std::uint32_t>(unsigned_field(j, "depth", "file", 0));
    const auto& sites = field(j, "sites", "file");
    if (!sites.is_array()) fail("file", "\"sites\" must be an array");
    for (std::size_t i = 0; i < sites.size(); ++i)
        p.sites.push_back(parse_site(sites[i], "sites[" + std::to_string(i) + "]"));
    return p;
}

plan read_plan_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw plan_error("plan: cannot open " + path);
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return plan_from_json(text.str());
    } catch (const plan_error& e) {
        throw plan_error(path + ": " + e.what());
    }
}

}  // namespace rtmem::analyze
