// Loaded with dlopen by trace_subject: its allocation site must symbolise after dlclose.
#include <string>
#include <vector>

extern "C" __attribute__((visibility("default"))) int trace_plugin_work(int n) {
    auto* v = new std::vector<char>(2727);
    int r = static_cast<int>(v->size()) + n;
    delete v;
    return r;
}
