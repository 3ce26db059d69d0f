// fork while another thread allocates and threads exit, the child freeing the parent's blocks
// and starting a thread of its own; then exec of this program (argument "exec"), which must
// start with the preload's heap again. Prints facts that do not depend on the allocator.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "exec") == 0) {
        std::vector<std::string> v;
        for (int i = 0; i < 10000; ++i) v.push_back(std::to_string(i) + " after exec");
        std::printf("exec: %zu strings, last '%s'\n", v.size(), v.back().c_str());
        return 0;
    }
    std::atomic<bool> stop{false};
    std::thread busy([&] {  // allocates and frees across every fork below
        while (!stop.load()) {
            std::vector<std::string> v(50, std::string(100, 'x'));
            std::free(std::malloc(3000));
        }
    });
    std::vector<void*> parent_blocks;
    for (int i = 0; i < 100; ++i) parent_blocks.push_back(std::malloc(static_cast<std::size_t>(32 + i)));
    int ok = 0;
    for (int round = 0; round < 20; ++round) {
        std::thread exiting([] { std::free(std::malloc(100)); });  // exits around the fork
        pid_t pid = fork();
        if (pid == 0) {
            for (void* p : parent_blocks) std::free(p);
            std::thread t([] {
                std::vector<int*> v;
                for (int i = 0; i < 1000; ++i) v.push_back(new int(i));
                for (int* p : v) delete p;
            });
            t.join();
            std::string s(100000, 'c');
            _exit(s.size() == 100000 ? 0 : 1);
        }
        exiting.join();
        int status = 0;
        waitpid(pid, &status, 0);
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    stop = true;
    busy.join();
    for (void* p : parent_blocks) std::free(p);
    std::printf("fork: %d of 20 children ok\n", ok);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "exec", static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("exec child: status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return ok == 20 ? 0 : 1;
}
