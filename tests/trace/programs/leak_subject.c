/* A C program with a known heap: one 1000-byte block leaked, one 50-byte block freed, no stdio
 * (its buffer would be one more block). Traced, nothing else may appear: libstdc++, loaded
 * only for the tracer, must not add its emergency pool. */
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    (void)argv;
    char* kept = malloc(999 + (size_t)argc);
    memset(kept, 1, 1000);
    char* temporary = malloc(50);
    memset(temporary, 2, 50);
    free(temporary);
    return kept[argc] == 1 ? 0 : 1;
}
