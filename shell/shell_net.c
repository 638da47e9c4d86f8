// SPDX-License-Identifier: MIT
// The shell's view of the PCI bus and the NICs (pci, net), and
// app=l2reflect, the NIC reflector that measures the frame rate a
// machine's NIC path allows (drivers/net/l2reflect.h). Kernel code beside
// the shell, as acpidump is: they read the drivers' own structures.
#include "shell/shell.h"
#include "drivers/net/l2reflect.h"
#include "drivers/net/netdev.h"
#include "drivers/pci/pci.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "kernel/sched.h"

// "16K", "128M": a BAR's size.
static void fmt_size(char *buf, size_t n, uint64_t size)
{
    static const char units[] = "KMGT";
    if (size < 1024) {
        snprintf(buf, n, "%lu", size);
        return;
    }
    int u = 0;
    size >>= 10;
    while (size >= 1024 && u < 3 && !(size & 1023)) {
        size >>= 10;
        u++;
    }
    snprintf(buf, n, "%lu%c", size, units[u]);
}

static void print_bars(const struct pci_func *f)
{
    static const char *const kinds[] = { "none", "io", "mem32", "mem64" };
    for (int i = 0; i < PCI_NBARS; i++) {
        const struct pci_bar *b = &f->bar[i];
        if (b->kind == PCI_BAR_NONE)
            continue;
        char size[16];
        fmt_size(size, sizeof size, b->size);
        kprintf("          BAR %d: %s 0x%lx, %s%s%s\n", i, kinds[b->kind], b->addr, size,
                b->prefetchable ? ", prefetchable" : "", b->addr ? "" : " (not assigned)");
    }
    if (f->msix.cap)
        kprintf("          MSI-X: %u vectors, table in BAR %u at 0x%x\n", f->msix.nvec, f->msix.table_bar,
                f->msix.table_off);
    if (f->msi.cap)
        kprintf("          MSI: %s%s\n", f->msi.addr64 ? "64-bit" : "32-bit",
                f->msi.maskable ? ", maskable" : "");
    if (f->irq_pin)
        kprintf("          INTx: pin %c, line %u\n", 'A' + f->irq_pin - 1, f->irq_line);
}

int shell_cmd_pci(int argc, char **argv)
{
    bool verbose = argc > 1 && !strcmp(argv[1], "-v");
    if (argc > 1 && !verbose) {
        kprintf("usage: %s [-v]\n", argv[0]);
        return 1;
    }
    uint32_t n = pci_count();
    kprintf("pci: %s: %u functions\n", pci_access_name(), n);
    kprintf("%-8s %-9s %-6s %-14s %-12s %s\n", "ADDRESS", "ID", "CLASS", "KIND", "DRIVER", "CAPABILITIES");
    for (uint32_t i = 0; i < n; i++) {
        const struct pci_func *f = pci_get(i);
        char caps[64] = "";
        int len = 0;
        for (uint32_t k = 0; k < f->ncaps && len < (int)sizeof caps - 8; k++)
            len += snprintf(caps + len, sizeof caps - (size_t)len, "%s%02x", k ? " " : "", f->caps[k].id);
        const char *by = pci_claimed_by(f);
        kprintf("%02x:%02x.%x  %04x:%04x %02x%02x   %-14s %-12s %s\n", f->bus, f->dev, f->fn, f->vendor,
                f->device, f->class, f->subclass, pci_class_name(f->class), by ? by : "-", caps);
        if (f->error != PCI_OK)
            kprintf("          not used: %s (at 0x%x)\n", pci_error_name(f->error), f->error_at);
        if (verbose)
            print_bars(f);
    }
    return 0;
}

int shell_cmd_net(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    uint32_t n = netdev_count();
    if (!n)
        kprintf("net: no NICs\n");
    for (uint32_t i = 0; i < n; i++) {
        const struct netdev *d = netdev_get(i);
        kprintf("%s: %s at %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, %u queue pair%s, %s, link %s%s%s\n",
                d->name, d->driver, d->bus_info, d->mac[0], d->mac[1], d->mac[2], d->mac[3], d->mac[4],
                d->mac[5], d->mtu, d->nqueues, d->nqueues == 1 ? "" : "s", d->irq_mode,
                netdev_link_up(d) ? "up" : "down", d->features & NETDEV_F_TX_CSUM ? ", tx checksum" : "",
                d->features & NETDEV_F_RX_CSUM ? ", rx checksum" : "");
        kprintf("  %5s %4s %6s %10s %10s %8s %10s %10s %8s %8s %10s\n", "QUEUE", "CORE", "VECTOR", "RX FRAMES",
                "RX BYTES", "RX DROP", "TX FRAMES", "TX BYTES", "TX BUSY", "TX DROP", "IRQS");
        for (uint16_t q = 0; q < d->nqueues; q++) {
            const struct netdev_queue *nq = &d->queues[q];
            const struct netdev_qstats *s = &nq->stats;
            char vector[8] = "polled";
            if (nq->vector)
                snprintf(vector, sizeof vector, "0x%02x", nq->vector);
            kprintf("  %5u %4u %6s %10lu %10lu %8lu %10lu %10lu %8lu %8lu %10lu\n", q, nq->cpu, vector,
                    SNAPSHOT(s->rx_frames), SNAPSHOT(s->rx_bytes), SNAPSHOT(s->rx_dropped),
                    SNAPSHOT(s->tx_frames), SNAPSHOT(s->tx_bytes), SNAPSHOT(s->tx_busy),
                    SNAPSHOT(s->tx_dropped), SNAPSHOT(s->irqs));
        }
    }
    return 0;
}

// ---- app=l2reflect -------------------------------------------------------------

#define SEC 1000000000ul

// l2reflect [net=N] [seconds=S] [csum=1]: reflects every frame netN
// receives back to its sender, MACs swapped, from the interrupt, for S
// seconds (0, the default: until the machine stops), printing each
// second's rate and each queue pair's count so far; csum=1 leaves each UDP
// datagram's checksum to the device (L2REFLECT_CSUM). A host tool sends
// the frames and counts what comes back (tools/bench/l2floor.py).
static int l2reflect_main(int argc, char **argv)
{
    uint64_t idx = 0, seconds = 0, csum = 0;
    for (int i = 1; i < argc; i++) {
        bool ok = false;
        if (!strncmp(argv[i], "net=", 4))
            ok = shell_parse_u64(argv[i] + 4, &idx) && idx < NETDEV_MAX;
        else if (!strncmp(argv[i], "seconds=", 8))
            ok = shell_parse_u64(argv[i] + 8, &seconds);
        else if (!strncmp(argv[i], "csum=", 5))
            ok = shell_parse_u64(argv[i] + 5, &csum) && csum <= 1;
        if (!ok) {
            printf("l2reflect: unknown argument \"%s\" (net=N, seconds=S, csum=0|1)\n", argv[i]);
            return 2;
        }
    }
    struct netdev *d = netdev_get((uint32_t)idx);
    if (!d) {
        printf("l2reflect: no net%lu (%u NICs)\n", idx, netdev_count());
        return 1;
    }
    for (int i = 0; i < 600 && !netdev_link_up(d); i++)
        sleep_ns(SEC / 10);
    if (!l2reflect_start(d, csum ? L2REFLECT_CSUM : 0)) {
        printf("l2reflect: %s has another consumer, or a queue without an interrupt (nic_irq=none)\n", d->name);
        return 1;
    }
    printf("l2reflect: reflecting on %s (%s, %u queue pair%s, %s, mac %02x:%02x:%02x:%02x:%02x:%02x): ready\n",
           d->name, d->driver, d->nqueues, d->nqueues == 1 ? "" : "s", d->irq_mode, d->mac[0], d->mac[1],
           d->mac[2], d->mac[3], d->mac[4], d->mac[5]);
    if (csum)
        printf("l2reflect: UDP checksums %s\n",
               l2reflect_csum(d) ? "made by the device" : "left as they came: the NIC makes none");
    printf("l2reflect: queue pairs' cores:");
    for (uint16_t q = 0; q < d->nqueues; q++)
        printf(" %u", d->queues[q].cpu);
    printf("\n");
    struct l2reflect_stats last = { 0 }, now;
    uint64_t t0 = nanotime(), prev = t0;
    for (uint64_t s = 1; !seconds || s <= seconds; s++) {
        uint64_t due = t0 + s * SEC, t = nanotime();
        if (due > t)
            sleep_ns(due - t);
        t = nanotime();
        l2reflect_stats(d, &now);
        uint64_t dt = t - prev;
        printf("l2reflect: %lu s: %lu frames/s reflected, %lu dropped, %lu interrupts (%lu off their "
               "queue's core so far)", s,
               (uint64_t)((now.reflected - last.reflected) * SEC / (dt ? dt : 1)), now.dropped - last.dropped,
               now.interrupts - last.interrupts, now.off_core);
        if (csum)
            printf(", checksums: %lu known on receive, %lu made by the device", now.csum_known, now.csum_asked);
        printf("; per queue:");
        for (uint16_t q = 0; q < d->nqueues; q++)
            printf(" %lu", now.queue_reflected[q]);
        printf("\n");
        last = now;
        prev = t;
    }
    l2reflect_stop(d);
    l2reflect_stats(d, &now);
    printf("l2reflect: done: %lu frames reflected, %lu dropped, %lu interrupts (%lu off their queue's core), "
           "%lu requeued; per queue:", now.reflected, now.dropped, now.interrupts, now.off_core, now.requeued);
    for (uint16_t q = 0; q < d->nqueues; q++)
        printf(" %lu", now.queue_reflected[q]);
    printf("\n");
    return 0;
}
GORO_APP(l2reflect, "reflect every frame a NIC receives back to its sender, from the interrupt (net=N seconds=S)",
         l2reflect_main);
