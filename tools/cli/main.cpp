// rtmem: record, report, diff (and whatever else registered itself in command.hpp's registry).
#include <cstdio>
#include <exception>

#include "command.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::cli {
namespace {
std::vector<command>& registry() {
    static std::vector<command> commands;
    return commands;
}
}  // namespace

bool register_command(const command& c) {
    registry().push_back(c);
    return true;
}
const std::vector<command>& commands() {
    return registry();
}

}  // namespace rtmem::cli

int main(int argc, char** argv) {
    using namespace rtmem::cli;
    CLI::App app{"rtmem: record, analyse and compare the allocations of a program"};
    app.set_version_flag("--version", "rtmem " RTMEM_VERSION);
    app.require_subcommand(1);
    const auto& cmds = commands();
    std::vector<std::function<int()>> runs(cmds.size());
    std::vector<CLI::App*> subs;
    for (std::size_t i = 0; i < cmds.size(); ++i) {
        CLI::App* sub = app.add_subcommand(cmds[i].name, cmds[i].help);
        cmds[i].setup(*sub, runs[i]);
        subs.push_back(sub);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    }
    try {
        for (std::size_t i = 0; i < subs.size(); ++i) {
            if (subs[i]->parsed() && runs[i]) return runs[i]();
        }
        std::fprintf(stderr, "rtmem: error: no command\n");
        return 2;
    } catch (const rtmem::analyze::trace_error& e) {
        std::fprintf(stderr, "rtmem: error: %s\n", e.what());
        return 2;
    } catch (const usage_error& e) {
        std::fprintf(stderr, "rtmem: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rtmem: error: %s\n", e.what());
        return 1;
    }
}
