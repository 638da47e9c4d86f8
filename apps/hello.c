// SPDX-License-Identifier: MIT
// The smallest application: says hello from the main goroutine and exits 0.
#include "goro.h"

static int hello_main(int argc, char **argv)
{
    printf("hello from goro: %d cores, main on core %d", num_cpu(), core_id());
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n");
    return 0;
}
GORO_APP(hello, "print a greeting and exit 0", hello_main);

// Returns its first argument, to test the exit-code contract.
static int exit_code_main(int argc, char **argv)
{
    int v = 0;
    if (argc > 1)
        for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
            v = v * 10 + (*p - '0');
    printf("exit_code: returning %d\n", v);
    return v;
}
GORO_APP(exit_code, "return the number given as the first argument", exit_code_main);

// A goroutine calls exit(N) while main waits forever: the machine exits
// with N; under the shell, the run ends with N and main is left behind.
static void exit_now(void *arg)
{
    printf("exit_in_goroutine: goroutine %lu calls exit(%d)\n", goid(), (int)(uintptr_t)arg);
    exit((int)(uintptr_t)arg);
}

static int exit_in_goroutine_main(int argc, char **argv)
{
    int v = 0;
    if (argc > 1)
        for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
            v = v * 10 + (*p - '0');
    go(exit_now, (void *)(uintptr_t)v);
    chan_select(0, 0, true);        // parks forever, like Go's select {}
    return 0;
}
GORO_APP(exit_in_goroutine, "a goroutine calls exit(N) while main waits forever",
         exit_in_goroutine_main);
