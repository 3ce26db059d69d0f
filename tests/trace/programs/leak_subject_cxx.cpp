// leak_subject.c as a C++ program: its libstdc++ allocates the emergency pool at start-up,
// which is freed at exit (as under heaptrack and valgrind), so only the 1000 bytes leak.
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char**) {
    auto* kept = static_cast<char*>(std::malloc(999 + static_cast<std::size_t>(argc)));
    std::memset(kept, 1, 1000);
    std::vector<int> temporary(50);
    return kept[argc] == 1 && temporary.size() == 50 ? 0 : 1;
}
