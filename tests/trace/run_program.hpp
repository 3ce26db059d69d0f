// Runs a program (argv[0] a path) with stdout and stderr captured in files under `dir`: the
// end-to-end tests of tests/trace run `rtmem record` and its subjects this way.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace rtmem::test {

struct run_result {
    int status = -1;  // wait status
    std::string out;
    std::string err;
};

inline std::string slurp_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// extra_env: NAME=VALUE entries put in front of this process's environment.
inline run_result run_program(const std::vector<std::string>& args,
                              const std::filesystem::path& dir,
                              const std::vector<std::string>& extra_env = {}) {
    const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = extra_env;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    run_result r;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) == 0)
        waitpid(pid, &r.status, 0);
    posix_spawn_file_actions_destroy(&actions);
    r.out = slurp_file(out);
    r.err = slurp_file(err);
    return r;
}

}  // namespace rtmem::test
