// Every malloc-family and operator new edge case, printed as plain facts (null or not, errno,
// alignment, contents kept). Run natively and under `rtmem run`: the outputs must be equal.
// With RTMEM_EXPECT_OWNED=1 it also checks that rt_heap, not glibc, served the calls.
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

namespace {

bool expect_owned = false;
int (*owns_fn)(const void*) = nullptr;
int failures = 0;

void owned(const char* what, const void* p) {
    if (!expect_owned || p == nullptr) return;
    if (owns_fn == nullptr || owns_fn(p) == 0) {
        std::fprintf(stderr, "malloc_api: %s: %p is not rt_heap's\n", what, p);
        ++failures;
    }
}

bool aligned_to(const void* p, std::size_t a) {
    return reinterpret_cast<std::uintptr_t>(p) % a == 0;
}

void fill(void* p, std::size_t n, unsigned char seed) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i * 7);
}
bool filled(const void* p, std::size_t n, unsigned char seed) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != static_cast<unsigned char>(seed + i * 7)) return false;
    return true;
}

// "name: null|ptr errno=E" (errno as the call left it) and, for a pointer, its alignment check and usable >= n.
void report(const char* name, void* p, std::size_t n, std::size_t align) {
    const int err = errno;  // read here: after the call that is an argument
    if (p == nullptr) {
        std::printf("%s: null errno=%d\n", name, err);
        return;
    }
    std::printf("%s: ptr errno=%d aligned=%d usable_ok=%d\n", name, err, aligned_to(p, align),
                malloc_usable_size(p) >= n);
    fill(p, n, 3);
}

}  // namespace

int main() {
    expect_owned = std::getenv("RTMEM_EXPECT_OWNED") != nullptr;
    owns_fn = reinterpret_cast<int (*)(const void*)>(dlsym(RTLD_DEFAULT, "rtmem_malloc_owns"));
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    volatile std::size_t max_size = SIZE_MAX;  // hidden from the compiler's size warnings
    const std::size_t huge = max_size;
    const std::size_t too_big = static_cast<std::size_t>(PTRDIFF_MAX) + 1;

    // malloc
    errno = 0;
    void* a = malloc(0);
    void* b = malloc(0);
    std::printf("malloc(0): a=%d b=%d distinct=%d errno=%d\n", a != nullptr, b != nullptr, a != b,
                errno);
    owned("malloc(0)", a);
    free(a);
    free(b);
    free(nullptr);
    for (std::size_t n : {huge, too_big, huge - 4096}) {
        errno = 0;
        void* p = malloc(n);
        report("malloc(huge)", p, 0, 1);
        free(p);
    }
    for (std::size_t n : {1ul, 15ul, 16ul, 24ul, 100ul, 1000ul, 4096ul, 100000ul, 3000000ul}) {
        errno = 0;
        void* p = malloc(n);
        report("malloc(n)", p, n, 16);
        if (n <= 100000) owned("malloc(n)", p);
        std::printf("  kept=%d\n", filled(p, n, 3));
        free(p);
    }
    std::printf("malloc_usable_size(NULL)=%zu\n", malloc_usable_size(nullptr));

    // calloc
    errno = 0;
    void* c0 = calloc(0, 0);
    std::printf("calloc(0,0): %d errno=%d\n", c0 != nullptr, errno);
    free(c0);
    errno = 0;
    report("calloc overflow", calloc(huge / 2, 3), 0, 1);
    errno = 0;
    report("calloc(1, huge)", calloc(1, huge), 0, 1);
    for (int round = 0; round < 3; ++round) {  // reused memory must come back zeroed
        void* d = malloc(8000);
        std::memset(d, 0xab, 8000);
        free(d);
        auto* z = static_cast<unsigned char*>(calloc(1000, 8));
        owned("calloc", z);
        bool zero = true;
        for (int i = 0; i < 8000; ++i) zero = zero && z[i] == 0;
        std::printf("calloc zeroed: %d\n", zero);
        free(z);
    }

    // realloc
    errno = 0;
    void* r = realloc(nullptr, 100);
    owned("realloc(NULL)", r);
    report("realloc(NULL,100)", r, 100, 16);
    for (std::size_t n : {200ul, 50ul, 5000ul, 2000000ul, 300ul, 64ul}) {
        errno = 0;
        void* q = realloc(r, n);
        std::printf("realloc(p,%zu): %d kept=%d errno=%d\n", n, q != nullptr,
                    q != nullptr && filled(q, n < 50 ? n : 50, 3), errno);
        if (q != nullptr) {
            fill(q, n, 3);
            r = q;
        }
    }
    errno = 0;
    void* q = realloc(r, huge);
    const int q_errno = errno;
    std::printf("realloc(p,huge): %d errno=%d p_kept=%d\n", q != nullptr, q_errno, filled(r, 64, 3));
    errno = 0;
    q = realloc(r, 0);
    std::printf("realloc(p,0): %d errno=%d\n", q != nullptr, errno);
    free(q);
    errno = 0;
    q = realloc(nullptr, 0);
    std::printf("realloc(NULL,0): %d errno=%d\n", q != nullptr, errno);
    free(q);

    // reallocarray
    errno = 0;
    report("reallocarray(NULL,huge,2)", reallocarray(nullptr, huge, 2), 0, 1);
    void* ra = reallocarray(nullptr, 10, 10);
    fill(ra, 100, 3);
    errno = 0;
    void* rb = reallocarray(ra, huge / 2, 4);
    const int rb_errno = errno;
    std::printf("reallocarray(p,overflow): %d errno=%d p_kept=%d\n", rb != nullptr, rb_errno,
                filled(ra, 100, 3));
    rb = reallocarray(ra, 20, 20);
    std::printf("reallocarray(p,20,20): %d kept=%d\n", rb != nullptr, filled(rb, 100, 3));
    errno = 0;
    report("reallocarray(p,0,5)", reallocarray(rb, 0, 5), 0, 1);

    // memalign / aligned_alloc
    const std::size_t aligns[] = {0, 1, 2, 8, 16, 24, 32, 48, 64, 256, 4096, 65536, 1u << 20};
    for (std::size_t al : aligns) {
        for (std::size_t n : {0ul, 1ul, 100ul, 5000ul}) {
            std::size_t expect = 16;
            while (expect < al) expect <<= 1;  // glibc rounds a non-power of two up
            errno = 0;
            void* p = memalign(al, n);
            char name[80];
            std::snprintf(name, sizeof name, "memalign(%zu,%zu)", al, n);
            report(name, p, n, expect);
            owned(name, p);
            free(p);
            errno = 0;
            p = aligned_alloc(al, n);
            std::snprintf(name, sizeof name, "aligned_alloc(%zu,%zu)", al, n);
            report(name, p, n, expect);
            if (al != 0 && (al & (al - 1)) == 0) owned(name, p);  // else glibc decides
            free(p);
        }
    }
    errno = 0;
    report("memalign(SIZE_MAX/2+2)", memalign(huge / 2 + 2, 10), 10, 1);
    errno = 0;
    report("memalign(64,huge)", memalign(64, huge), 0, 1);
    errno = 0;
    report("aligned_alloc(64,huge)", aligned_alloc(64, huge), 0, 1);

    // posix_memalign
    for (std::size_t al : {0ul, 4ul, 8ul, 16ul, 24ul, 32ul, 40ul, 64ul, 4096ul, 1ul << 20}) {
        for (std::size_t n : {0ul, 10ul, 3000ul}) {
            void* out = &failures;  // must stay untouched on failure
            errno = 0;
            int rc = posix_memalign(&out, al, n);
            std::printf("posix_memalign(%zu,%zu): rc=%d errno=%d untouched=%d aligned=%d\n", al, n,
                        rc, errno, out == &failures, rc == 0 && aligned_to(out, al));
            if (rc == 0) {
                owned("posix_memalign", out);
                fill(out, n, 3);
                free(out);
            }
        }
    }
    void* out = &failures;
    errno = 0;
    int rc = posix_memalign(&out, 64, huge);
    std::printf("posix_memalign(64,huge): rc=%d errno=%d untouched=%d\n", rc, errno,
                out == &failures);

    // valloc / pvalloc
    for (std::size_t n : {0ul, 1ul, 100ul, 5000ul}) {
        errno = 0;
        void* p = valloc(n);
        report("valloc", p, n, page);
        owned("valloc", p);
        free(p);
        errno = 0;
        p = pvalloc(n);
        report("pvalloc", p, n == 0 ? 0 : (n + page - 1) / page * page, page);
        free(p);
    }
    errno = 0;
    report("pvalloc(huge)", pvalloc(huge), 0, 1);
    errno = 0;
    report("valloc(huge)", valloc(huge), 0, 1);

    // operator new / delete
    void* n0 = ::operator new(0);
    void* n1 = ::operator new(0);
    std::printf("new(0): distinct=%d\n", n0 != n1);
    owned("new(0)", n0);
    ::operator delete(n0);
    ::operator delete(n1, std::size_t{0});
    int* arr = new int[0];
    delete[] arr;
    struct alignas(256) wide {
        char c[300];
    };
    auto* w = new wide;
    std::printf("new aligned 256: %d\n", aligned_to(w, 256));
    owned("new aligned", w);
    delete w;
    auto* wa = new wide[3];
    std::printf("new[] aligned 256: %d\n", aligned_to(wa, 256));
    delete[] wa;
    void* an = ::operator new(100, std::align_val_t{4096}, std::nothrow);
    std::printf("new aligned nothrow: %d\n", aligned_to(an, 4096));
    ::operator delete(an, std::align_val_t{4096}, std::nothrow);
    ::operator delete(::operator new[](50, std::align_val_t{64}), std::size_t{50},
                      std::align_val_t{64});
    std::printf("new nothrow huge: %d\n", ::operator new(huge - 64, std::nothrow) != nullptr);
    std::printf("new[] nothrow huge: %d\n", ::operator new[](huge - 64, std::nothrow) != nullptr);
    try {
        void* p = ::operator new(huge - 64);
        std::printf("new huge: returned %d\n", p != nullptr);
    } catch (const std::bad_alloc&) {
        std::printf("new huge: bad_alloc\n");
    }
    static int handler_calls = 0;
    std::set_new_handler([] {
        if (++handler_calls == 3) std::set_new_handler(nullptr);
    });
    try {
        void* p = ::operator new(huge - 64, std::align_val_t{64});
        std::printf("new aligned huge: returned %d\n", p != nullptr);
    } catch (const std::bad_alloc&) {
        std::printf("new aligned huge: bad_alloc after %d handler calls\n", handler_calls);
    }

    // Memory the C library allocates for the program, freed by the program.
    char* s = strdup("rtmem");
    owned("strdup", s);
    std::printf("strdup: %s\n", s);
    free(s);
    char* line = nullptr;
    std::size_t cap = 0;
    FILE* f = fmemopen(const_cast<char*>("one line\n"), 9, "r");
    ssize_t got = getline(&line, &cap, f);
    std::printf("getline: %zd %s", got, line);
    free(line);
    fclose(f);
    return failures == 0 ? 0 : 3;
}
