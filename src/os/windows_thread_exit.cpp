// detail::at_thread_exit on Windows: one fiber-local storage slot for rtmem, whose value is the
// thread's list of cleanups and whose callback runs them when the thread exits.
#include <windows.h>

#include "rtmem/detail/thread_exit.hpp"

namespace rtmem::detail {
namespace {

struct exit_node {
    void (*destroy)(void*);
    void* object;
    exit_node* next;
};

void WINAPI run_cleanups(void* head) {
    for (auto* n = static_cast<exit_node*>(head); n != nullptr;) {
        exit_node* next = n->next;
        n->destroy(n->object);
        HeapFree(GetProcessHeap(), 0, n);
        n = next;
    }
}

DWORD slot() noexcept {
    static const DWORD index = FlsAlloc(&run_cleanups);
    return index;
}

}  // namespace

bool at_thread_exit(void (*destroy)(void*), void* object) noexcept {
    const DWORD index = slot();
    if (index == FLS_OUT_OF_INDEXES) return false;
    // The process heap, not malloc: a routed global operator new must not see these nodes.
    auto* n = static_cast<exit_node*>(HeapAlloc(GetProcessHeap(), 0, sizeof(exit_node)));
    if (n == nullptr) return false;
    *n = exit_node{destroy, object, static_cast<exit_node*>(FlsGetValue(index))};
    if (FlsSetValue(index, n) == 0) {
        HeapFree(GetProcessHeap(), 0, n);
        return false;
    }
    return true;
}

}  // namespace rtmem::detail
