// Linked with librtmem-malloc.a (whole archive), no preload: the program's malloc, operator new
// and the C library's own allocations for it (strdup) must be rt_heap's.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

extern "C" int rtmem_malloc_owns(const void* p);

int main() {
    void* m = std::malloc(100);
    auto* s = new std::string(200, 's');
    char* d = strdup("static");
    int in_thread = 0;
    std::thread t([&] {
        void* p = std::malloc(64);
        in_thread = rtmem_malloc_owns(p);
        std::free(m);  // a cross-thread free
        std::free(p);
    });
    t.join();
    std::printf("malloc %d new %d strdup %d thread %d\n", 1, rtmem_malloc_owns(s->data()),
                rtmem_malloc_owns(d), in_thread);
    const int all = rtmem_malloc_owns(s->data()) + rtmem_malloc_owns(d) + in_thread;
    delete s;
    std::free(d);
    return all == 3 ? 0 : 1;
}
