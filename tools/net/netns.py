#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A network namespace with a tap device for one QEMU guest (as root).

The namespace NAME holds a tap device also called NAME (multiqueue when
--queues is above 1: one queue per vCPU), up, with the host side's address;
the guest takes the next one. QEMU runs inside the namespace (it opens the
tap there), and so does the host-side client (`exec`), so nothing in the
host's own network changes and several namespaces never collide. --veth
adds a veth pair from the host's namespace into NAME instead, for a client
that must run outside: the host then routes the guest's subnet through it.
--dhcp runs busybox's udhcpd on the tap, for a guest that asks by DHCP.

Addresses come from 198.18.0.0/15 (RFC 2544's benchmarking block): the
guest's subnet is 198.18.0.0/24 inside the namespace; with --veth, where
the subnet is seen from the host's namespace too, a /24 of 198.18.0.0/16
and a /30 of 198.19.0.0/16 not routed there already, chosen from NAME.

Commands (NAME: 1-15 letters, digits, '-' or '_'; callers use a prefix of
their own):
    netns.py create NAME [--queues N] [--veth] [--dhcp]   prints the info
    netns.py destroy NAME          ends the namespace's processes, removes all
    netns.py exec NAME -- CMD...   CMD inside the namespace; its status
    netns.py info NAME [--shell]   what create printed (JSON, or VAR=value)
    netns.py qemu-args NAME        QEMU's -netdev and -device for the tap
    netns.py run [--queues N] [--veth] [--dhcp] NAME -- CMD...
                                   create, CMD inside, destroy: always, also
                                   when CMD fails or a signal ends this tool
                                   (the options go before NAME: after it
                                   they would be taken as CMD's)
    netns.py list [--prefix P]     namespaces this tool made

A create that fails part way removes what it made. State lives in
/run/goro-netns/NAME (the info, udhcpd's files): destroy removes it.

Examples:
    tools/net/netns.py create servers0 --queues 2
    tools/net/netns.py exec servers0 -- qemu-system-x86_64 ... \\
        $(tools/net/netns.py qemu-args servers0)
    tools/net/netns.py exec servers0 -- wrk -t2 -c64 -d10s http://198.18.0.2:8080/
    tools/net/netns.py destroy servers0

Python 3 standard library and iproute2 only.
"""
import argparse
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib

STATE_ROOT = "/run/goro-netns"
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,15}")
INNER_SUBNET = ipaddress.ip_network("198.18.0.0/24")
VETH_GUEST_POOL = ipaddress.ip_network("198.18.0.0/16")
VETH_LINK_POOL = ipaddress.ip_network("198.19.0.0/16")
MAC_PREFIX = "52:54:00"


class Failed(Exception):
    pass


def log(msg):
    print(f"netns: {msg}", file=sys.stderr, flush=True)


def sh(*argv, check=True, capture=False, ns=None):
    """Runs argv (inside namespace ns when given); Failed names the command."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in argv]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise Failed(f"{' '.join(cmd)}: {(p.stderr or p.stdout).strip() or 'exit ' + str(p.returncode)}")
    return p.stdout if capture else p.returncode


def check_name(name):
    if not NAME_RE.fullmatch(name):
        raise Failed(f"name {name!r}: 1-15 letters, digits, '-' or '_' (it names the tap too)")


def state_dir(name):
    return os.path.join(STATE_ROOT, name)


def namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def mac_of(name):
    """A locally administered MAC for the guest, stable for a name."""
    h = zlib.crc32(name.encode())
    return f"{MAC_PREFIX}:{h >> 16 & 0xff:02x}:{h >> 8 & 0xff:02x}:{h & 0xff:02x}"


def routed_in_host():
    """The host namespace's routes' destinations, as networks."""
    out = subprocess.run(["ip", "-4", "route", "show", "table", "all"], capture_output=True, text=True).stdout
    nets = []
    for line in out.splitlines():
        word = line.split()[0] if line.split() else ""
        if word in ("local", "broadcast", "unreachable", "prohibit", "blackhole"):
            word = line.split()[1]
        try:
            nets.append(ipaddress.ip_network(word, strict=False))
        except ValueError:
            pass
    return nets


def free_subnet(pool, prefix, name, taken):
    """The first subnet of pool/prefix, from the one NAME hashes to, that
    overlaps nothing in taken."""
    subs = list(pool.subnets(new_prefix=prefix))
    start = zlib.crc32(name.encode()) % len(subs)
    for i in range(len(subs)):
        s = subs[(start + i) % len(subs)]
        if not any(s.overlaps(t) for t in taken):
            return s
    raise Failed(f"no free /{prefix} left in {pool}")


def plan(name, queues, veth, dhcp):
    """The addresses and names create will use."""
    info = {"name": name, "netns": name, "tap": name, "queues": queues, "guest_mac": mac_of(name),
            "dhcp": dhcp, "veth": None}
    subnet = INNER_SUBNET
    if veth:
        taken = routed_in_host()
        subnet = free_subnet(VETH_GUEST_POOL, 24, name, taken + [VETH_LINK_POOL])
        link = free_subnet(VETH_LINK_POOL, 30, name, taken)
        a, b = list(link.hosts())
        if len(name) > 14:
            raise Failed(f"--veth: name {name!r} must be at most 14 characters (the veth ends are NAME+h, NAME+n)")
        info["veth"] = {"host_if": name + "h", "ns_if": name + "n", "link": str(link),
                        "host_ip": str(a), "ns_ip": str(b)}
    hosts = list(subnet.hosts())
    info.update({"subnet": str(subnet), "prefixlen": subnet.prefixlen, "host_ip": str(hosts[0]),
                 "guest_ip": str(hosts[1])})
    return info


def create(name, queues, veth=False, dhcp=False):
    check_name(name)
    if queues < 1 or queues > 256:
        raise Failed(f"--queues {queues}: 1 to 256")
    if name in namespaces():
        raise Failed(f"namespace {name} exists already (destroy it first, or choose another name)")
    if os.geteuid() != 0:
        raise Failed("making a namespace and a tap device needs root")
    info = plan(name, queues, veth, dhcp)
    os.makedirs(state_dir(name), exist_ok=True)
    try:
        sh("ip", "netns", "add", name)
        sh("ip", "link", "set", "lo", "up", ns=name)
        mq = ["multi_queue"] if queues > 1 else []
        sh("ip", "tuntap", "add", "dev", name, "mode", "tap", *mq, ns=name)
        sh("ip", "addr", "add", f"{info['host_ip']}/{info['prefixlen']}", "dev", name, ns=name)
        sh("ip", "link", "set", name, "up", ns=name)
        if veth:
            add_veth(info)
        if dhcp:
            start_dhcp(info)
        with open(os.path.join(state_dir(name), "info.json"), "w") as f:
            json.dump(info, f, indent=1)
    except BaseException:
        destroy(name, quiet=True)
        raise
    return info


def add_veth(info):
    name, v = info["name"], info["veth"]
    plen = ipaddress.ip_network(v["link"]).prefixlen
    sh("ip", "link", "add", v["host_if"], "type", "veth", "peer", "name", v["ns_if"], "netns", name)
    sh("ip", "addr", "add", f"{v['host_ip']}/{plen}", "dev", v["host_if"])
    sh("ip", "link", "set", v["host_if"], "up")
    sh("ip", "addr", "add", f"{v['ns_ip']}/{plen}", "dev", v["ns_if"], ns=name)
    sh("ip", "link", "set", v["ns_if"], "up", ns=name)
    # The namespace forwards between the veth and the tap; the guest's
    # replies go back by its default route through the tap's address.
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=name)
    sh("ip", "route", "add", info["subnet"], "via", v["ns_ip"], "dev", v["host_if"])


def start_dhcp(info):
    """busybox udhcpd on the tap, handing out the guest's one address."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    if not os.path.exists(busybox):
        raise Failed("--dhcp needs busybox (busybox-static)")
    d = state_dir(info["name"])
    conf = os.path.join(d, "udhcpd.conf")
    with open(conf, "w") as f:
        f.write(f"start {info['guest_ip']}\nend {info['guest_ip']}\ninterface {info['tap']}\n"
                f"lease_file {os.path.join(d, 'udhcpd.leases')}\npidfile {os.path.join(d, 'udhcpd.pid')}\n"
                f"option subnet {ipaddress.ip_network(info['subnet']).netmask}\n"
                f"option router {info['host_ip']}\noption lease 86400\n"
                f"static_lease {info['guest_mac']} {info['guest_ip']}\n")
    open(os.path.join(d, "udhcpd.leases"), "w").close()
    sh(busybox, "udhcpd", conf, ns=info["name"])        # daemonizes; destroy ends it


def destroy(name, quiet=False):
    """Ends every process in the namespace, removes it (its tap and veth end
    go with it), the host's veth end and route, and the state directory."""
    check_name(name)
    info = read_info(name, must=False)
    if name in namespaces():
        for attempt, sig in enumerate((signal.SIGTERM, signal.SIGKILL)):
            pids = [int(p) for p in sh("ip", "netns", "pids", name, check=False, capture=True).split()]
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 2
            while pids and time.monotonic() < deadline:
                pids = [p for p in pids if os.path.exists(f"/proc/{p}")]
                time.sleep(0.05)
            if not pids:
                break
        sh("ip", "netns", "del", name, check=False)
    if info and info.get("veth"):
        sh("ip", "link", "del", info["veth"]["host_if"], check=False)
    shutil.rmtree(state_dir(name), ignore_errors=True)
    if name in namespaces():
        raise Failed(f"namespace {name} is still there after ip netns del")
    if not quiet:
        log(f"{name}: removed")


def read_info(name, must=True):
    try:
        with open(os.path.join(state_dir(name), "info.json")) as f:
            return json.load(f)
    except OSError:
        if must:
            raise Failed(f"{name}: no such namespace made by this tool (no {state_dir(name)}/info.json)")
        return None


def qemu_args(info, model="virtio-net-pci"):
    """-netdev and -device for the tap: one queue pair per queue. virtio-net's
    MSI-X vectors: one per queue of each pair, one for configuration
    changes, one for the control queue (QEMU's own formula for mq=on)."""
    q = info["queues"]
    netdev = f"tap,id=net0,ifname={info['tap']},script=no,downscript=no"
    dev = f"{model},netdev=net0,mac={info['guest_mac']}"
    if q > 1:
        netdev += f",queues={q}"
        if model.startswith("virtio-net"):
            dev += f",mq=on,vectors={2 * q + 2}"
    return ["-netdev", netdev, "-device", dev]


def exec_in(name, argv):
    """Runs argv inside the namespace; its exit status."""
    check_name(name)
    if name not in namespaces():
        raise Failed(f"namespace {name} does not exist")
    if not argv:
        raise Failed("exec: no command (netns.py exec NAME -- CMD...)")
    return subprocess.call(["ip", "netns", "exec", name] + argv)


def run(name, queues, veth, dhcp, argv):
    """create, argv inside, destroy whatever happens (signals included)."""
    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, stop)
    info = create(name, queues, veth, dhcp)
    try:
        print(json.dumps(info), file=sys.stderr, flush=True)
        return exec_in(name, argv)
    finally:
        destroy(name, quiet=True)


def shell_vars(info):
    out = {"NETNS": info["netns"], "TAP": info["tap"], "QUEUES": info["queues"], "HOST_IP": info["host_ip"],
           "GUEST_IP": info["guest_ip"], "PREFIXLEN": info["prefixlen"], "SUBNET": info["subnet"],
           "GUEST_MAC": info["guest_mac"]}
    return "\n".join(f"{k}={v}" for k, v in out.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def create_opts(p):
        p.add_argument("name")
        p.add_argument("--queues", type=int, default=1, help="tap queues: one per guest vCPU (default 1)")
        p.add_argument("--veth", action="store_true", help="a veth pair from the host's namespace into NAME")
        p.add_argument("--dhcp", action="store_true", help="busybox udhcpd on the tap")
    create_opts(sub.add_parser("create", help="make the namespace and its tap; prints the info (JSON)"))
    sub.add_parser("destroy", help="remove the namespace and everything in it").add_argument("name")
    p = sub.add_parser("exec", help="run a command inside the namespace")
    p.add_argument("name")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p = sub.add_parser("info", help="the namespace's names and addresses")
    p.add_argument("name")
    p.add_argument("--shell", action="store_true", help="VAR=value lines instead of JSON")
    p = sub.add_parser("qemu-args", help="QEMU's -netdev/-device options, one per line")
    p.add_argument("name")
    p.add_argument("--model", default="virtio-net-pci", help="QEMU's NIC (default virtio-net-pci)")
    p = sub.add_parser("run", help="create, run a command inside, destroy")
    create_opts(p)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p = sub.add_parser("list", help="namespaces made by this tool")
    p.add_argument("--prefix", default="")
    opts = ap.parse_args()

    argv = getattr(opts, "argv", None)
    if argv and argv[0] == "--":
        argv = argv[1:]
    try:
        if opts.cmd == "create":
            print(json.dumps(create(opts.name, opts.queues, opts.veth, opts.dhcp), indent=1))
        elif opts.cmd == "destroy":
            destroy(opts.name)
        elif opts.cmd == "exec":
            return exec_in(opts.name, argv)
        elif opts.cmd == "info":
            info = read_info(opts.name)
            print(shell_vars(info) if opts.shell else json.dumps(info, indent=1))
        elif opts.cmd == "qemu-args":
            print("\n".join(qemu_args(read_info(opts.name), opts.model)))
        elif opts.cmd == "run":
            return run(opts.name, opts.queues, opts.veth, opts.dhcp, argv)
        elif opts.cmd == "list":
            live = set(namespaces())
            made = sorted(os.listdir(STATE_ROOT)) if os.path.isdir(STATE_ROOT) else []
            for n in made:
                if n.startswith(opts.prefix):
                    print(n + ("" if n in live else " (state only: destroy it)"))
    except Failed as e:
        log(str(e))
        return 1
    except KeyboardInterrupt as e:
        log(f"interrupted ({e})")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
