// A program that uses the default operator new/delete: tools/check-no-default-new must list it.
#include <memory>
#include <string>
#include <vector>

int main() {
    std::vector<std::string> names(100, std::string(64, 'n'));
    auto p = std::make_unique<int[]>(1000);
    return names.size() == 100 && p != nullptr ? 0 : 1;
}
