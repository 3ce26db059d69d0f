// dlopen a module (argv[1]) that allocates for us and frees our blocks, from the main thread
// and from another thread (its thread_local allocates there), then dlclose.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    for (int round = 0; round < 3; ++round) {
        void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            std::printf("dlopen: %s\n", dlerror());
            return 1;
        }
        auto make = reinterpret_cast<char* (*)(const char*)>(dlsym(h, "plugin_make"));
        auto str = reinterpret_cast<std::string* (*)(int)>(dlsym(h, "plugin_string"));
        auto pfree = reinterpret_cast<void (*)(void*, std::vector<int>*)>(dlsym(h, "plugin_free"));
        auto size = reinterpret_cast<std::size_t (*)()>(dlsym(h, "plugin_size"));
        std::size_t total = 0;
        std::thread t([&] {
            for (int i = 0; i < 1000; ++i) {
                char* p = make("abc");
                total += std::strlen(p);
                std::free(p);
                std::string* s = str(i % 50);
                total += s->size();
                delete s;
                pfree(std::malloc(static_cast<std::size_t>(i + 1)), new std::vector<int>(10, i));
            }
            total += size();
        });
        t.join();
        total += size();
        std::printf("round %d: total %zu\n", round, total);
        dlclose(h);
    }
    return 0;
}
