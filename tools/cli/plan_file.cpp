#include "plan_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "command.hpp"

namespace rtmem::cli {

void check_plan_writable(const std::string& option, const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    std::error_code ec;
    if (fs::is_directory(p, ec))
        throw usage_error(option + " " + path + ": is a directory, not a file");
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
        throw usage_error(option + " " + path + ": directory " + dir.string() + " does not exist");
    const bool exists = fs::exists(p, ec);
    if (::access(exists ? p.c_str() : dir.c_str(), W_OK) != 0)
        throw usage_error(option + " " + path + ": cannot write (" + std::strerror(errno) + ")");
}

void write_plan_file(const analyze::plan& p, const std::string& option, const std::string& path) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << analyze::plan_to_json(p);
    if (!file.flush()) throw usage_error(option + ": cannot write " + path);
}

}  // namespace rtmem::cli
