// SPDX-License-Identifier: MIT
// app=ktest [filter=SUBSTR]: runs the in-kernel tests (tests/kernel/test_*.c).
#include "goro.h"
#include "kernel/ktest.h"
#include "lib/string.h"

static int ktest_main(int argc, char **argv)
{
    const char *filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0) {
            filter = argv[i] + 7;
        } else {
            printf("ktest: unknown argument \"%s\" (accepted: filter=SUBSTR)\n", argv[i]);
            return 2;
        }
    }
    return ktest_run_all(filter);
}
GORO_APP(ktest, "run the in-kernel tests (filter=SUBSTR picks some)", ktest_main);
