// SPDX-License-Identifier: MIT
// app=ktest [filter=SUBSTR[,SUBSTR...]] [clock=exact]: runs the in-kernel
// tests (tests/kernel/test_*.c). clock=exact says the guest's clock counts
// instructions (QEMU's -icount), so bounds on guest time are asserted
// (KT_GUEST_BOUND).
#include "goro.h"
#include "kernel/ktest.h"
#include "lib/string.h"

static int ktest_main(int argc, char **argv)
{
    const char *filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0) {
            filter = argv[i] + 7;
        } else if (strcmp(argv[i], "clock=exact") == 0) {
            ktest_set_clock_exact(true);
        } else {
            printf("ktest: unknown argument \"%s\" (accepted: filter=SUBSTR[,SUBSTR...], clock=exact)\n",
                   argv[i]);
            return 2;
        }
    }
    return ktest_run_all(filter);
}
GORO_APP(ktest, "run the in-kernel tests (filter=SUBSTR[,SUBSTR...] picks some; clock=exact under -icount)",
         ktest_main);
