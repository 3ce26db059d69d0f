/* Linked with -static: the dynamic loader never runs, so LD_PRELOAD cannot trace it and
 * `rtmem record` must say so before running it. */
#include <stdio.h>

int main(void) {
    puts("static subject ran");
    return 0;
}
