// A module loaded with dlopen by malloc_dlopen: it allocates for its host and frees what the
// host allocated, with malloc and new, and keeps a static and a thread_local that allocate.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
std::vector<std::string> registry(100, std::string(40, 'r'));  // allocated at dlopen
thread_local std::string per_thread(64, 't');
}  // namespace

extern "C" __attribute__((visibility("default"))) char* plugin_make(const char* text) {
    per_thread += text;
    char* p = static_cast<char*>(std::malloc(std::strlen(text) + 1));
    std::strcpy(p, text);
    return p;
}
extern "C" __attribute__((visibility("default"))) std::string* plugin_string(int n) {
    return new std::string(static_cast<std::size_t>(n), 'p');
}
extern "C" __attribute__((visibility("default"))) void plugin_free(void* p, std::vector<int>* v) {
    std::free(p);
    delete v;
}
extern "C" __attribute__((visibility("default"))) std::size_t plugin_size() {
    return registry.size() + per_thread.size();
}
