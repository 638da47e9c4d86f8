#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A server in a QEMU guest, reached from the host: goro's httpd or kvd, or
a peer in Debian's Linux under the same TCG (Go's net/http, the Go
memcached-protocol server, memcached 1.6 itself), on a NIC of its own.

Networking, two ways:
  tap    a namespace and tap device of our own (tools/net/netns.py; root):
         QEMU and the client run inside it, the guest answers at
         198.18.0.2. Multiqueue: one queue pair per vCPU.
  user   QEMU's user networking, a host port of 127.0.0.1 (chosen free)
         forwarded to the guest. Its listener has a backlog of one: many
         simultaneous connects time out there whatever the server, so
         results taken this way are labelled net=user (a quick mode).

The Linux guest is tools/bench/linux_guest.py's: Debian's kernel, an
initramfs written here with busybox, the virtio-net modules of that
kernel (modprobe --show-depends gives their order), a static address, and
the server as /init's last child. memcached comes from Debian's package
with the shared libraries ldd names. The Go peers (tools/net/httpd_go,
tools/net/kvd_go) are built here with Debian's go, statically.

A guest is ready when it answers a real request (GET / or memcached's
version) correctly, never when a connect succeeds: user networking
accepts connections before the guest listens.

Examples:
    tools/net/guest.py --peer httpd-go --cpus 2 --net tap -- \\
        wrk -t2 -c64 -d10s http://{addr}/
    tools/net/guest.py --peer memcached --cpus 2 --net user -- \\
        memcslap --servers={addr} --concurrency=4 --execute-number=1000
    tools/net/guest.py --goro build/goro.elf --app httpd --cpus 2 -- curl -s http://{addr}/

{addr} is HOST:PORT, {host} and {port} its parts; the command runs inside
the namespace with --net tap. Python 3 standard library.
"""
import argparse
import contextlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench.linux_guest import GUEST_APPEND, Cpio, find_kernel  # noqa: E402
from tools.net import netns  # noqa: E402
from tools.run import qemu  # noqa: E402

PEERS = {
    # name: (protocol, guest port)
    "httpd-go": ("http", 8080),
    "kvd-go": ("memcache", 11211),
    "memcached": ("memcache", 11211),
}
GORO_APPS = {"httpd": ("http", 8080), "kvd": ("memcache", 11211)}
USER_GUEST_IP, USER_GW = "10.0.2.15", "10.0.2.2"
APPLETS = ("sh", "mount", "poweroff", "echo", "cat", "dmesg", "sed", "tail", "insmod", "ip", "sleep", "ls", "grep")


def log(msg):
    print(f"guest: {msg}", file=sys.stderr, flush=True)


# ---- building the peers --------------------------------------------------------------------


def go_env(build):
    return dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false",
                GOCACHE=os.path.abspath(os.path.join(build, "go-cache")),
                GOPATH=os.path.abspath(os.path.join(build, "gopath")))


def build_go_peer(build, name):
    """tools/net/<name>_go built statically into BUILD/bench/net/<name>-go
    (again only when its sources or the toolchain are newer)."""
    if not shutil.which("go"):
        sys.exit("guest: no go on PATH: run make deps-bench (golang-go)")
    src = os.path.join(ROOT, "tools", "net", name.replace("-", "_"))
    out = os.path.abspath(os.path.join(build, "bench", "net", name))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    newest = max([os.path.getmtime(os.path.realpath(shutil.which("go")))] +
                 [os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src)])
    if not os.path.exists(out) or os.path.getmtime(out) < newest:
        subprocess.run(["go", "build", "-trimpath", "-o", out, "."], cwd=src, env=go_env(build), check=True)
    return out


def kernel_release(kernel):
    return os.path.basename(kernel)[len("vmlinuz-"):]


def nic_modules(release):
    """The .ko files virtio-net needs, in load order (built-in ones absent)."""
    mods = []
    for m in ("virtio_pci", "virtio_net"):
        out = subprocess.run(["modprobe", "--show-depends", "-S", release, m], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"guest: modprobe --show-depends -S {release} {m}: {out.stderr.strip()}")
        for line in out.stdout.splitlines():
            w = line.split()
            if w and w[0] == "insmod" and w[1] not in mods:
                mods.append(w[1])
    return mods


def shared_libs(binary):
    """The files ldd says binary needs (the loader included)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        w = line.split()
        path = w[2] if len(w) >= 3 and w[1] == "=>" else w[0] if w and w[0].startswith("/") else None
        if path and os.path.exists(path):
            libs.append(path)
    return libs


# ---- the Linux guest's initramfs --------------------------------------------------------------


def add_file(c, dirs, path, data=None, mode=0o755):
    """path (absolute in the guest) with its parent directories."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts)):
        d = "/".join(parts[:i])
        if d not in dirs:
            dirs.add(d)
            c.dir(d)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    c.file("/".join(parts), data, mode)


def server_command(peer, cpus, port, args=""):
    """The peer's command line; args (its own flags) go last."""
    if peer == "httpd-go":
        cmd = f"/peer/httpd-go -port {port}"
    elif peer == "kvd-go":
        cmd = f"/peer/kvd-go -port {port}"
    else:
        # Debian's memcached: its threads one per vCPU, 64 MB (its default),
        # connections enough for the big tests.
        cmd = f"/usr/bin/memcached -u root -l 0.0.0.0 -p {port} -U 0 -t {cpus} -m 64 -c 20000"
    return f"{cmd} {args}".strip()


def linux_initramfs(path, build, peer, cpus, port, guest_ip, prefixlen, gateway, args=""):
    kernel = find_kernel()
    release = kernel_release(kernel)
    c, dirs = Cpio(), set()
    for d in ("bin", "dev", "proc", "sys", "tmp", "etc", "peer", "root"):
        c.dir(d)
        dirs.add(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3)
    if not os.path.exists("/bin/busybox"):
        sys.exit("guest: /bin/busybox missing: run make deps-bench (busybox-static)")
    add_file(c, dirs, "/bin/busybox")
    for a in APPLETS:
        c.symlink(f"bin/{a}", "busybox")
    c.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n", 0o644)
    c.file("etc/group", b"root:x:0:\n", 0o644)
    mods = nic_modules(release)
    for m in mods:
        add_file(c, dirs, m, mode=0o644)
    if peer == "memcached":
        if not shutil.which("memcached"):
            sys.exit("guest: memcached missing: run make deps-bench (memcached)")
        # Each file where ldd found it (the names the loader looks for),
        # its contents read through the host's symlinks.
        for lib in ["/usr/bin/memcached"] + shared_libs("/usr/bin/memcached"):
            with open(lib, "rb") as f:
                add_file(c, dirs, lib, f.read())
    else:
        add_file(c, dirs, "/peer/" + peer, open(build_go_peer(build, peer), "rb").read())
    insmods = "\n".join(f"insmod {m}" for m in mods)
    init = f"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
export PATH=/bin
echo
{insmods}
ip link set lo up
ip link set eth0 up
ip addr add {guest_ip}/{prefixlen} dev eth0
ip route add default via {gateway}
echo "GUEST kernel=$(cat /proc/sys/kernel/osrelease) cpus=$(grep -c ^processor /proc/cpuinfo)" \\
     "queues=$(ls /sys/class/net/eth0/queues | grep -c rx)" \\
     "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo '### server {peer} begin'
{server_command(peer, cpus, port, args)}
echo '### server {peer} exited'
/bin/busybox poweroff -f
"""
    c.file("init", init.encode())
    with open(path, "wb") as f:
        f.write(c.bytes())


# ---- readiness -----------------------------------------------------------------------------------


def answers(proto, host, port, timeout=2.0):
    """Does the server at host:port answer a real request correctly?"""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            if proto == "http":
                s.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
                want = b"Hello, World!"
            else:
                s.sendall(b"version\r\n")
                want = b"VERSION "
            data = b""
            while want not in data and len(data) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return want in data and (proto != "http" or data.startswith(b"HTTP/1.1 200"))
    except OSError:
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- a running guest -----------------------------------------------------------------------------


class Guest:
    """One server guest; use as a context manager. addr is where the client
    reaches it, client_prefix what a client command is run under (the
    namespace), console the guest's serial log."""

    def __init__(self, build, cpus, net="tap", name=None, peer=None, goro=None, app=None, args="",
                 nic="virtio-net-pci", mem="1G", ready_timeout=180):
        # ready_timeout: seconds of QEMU's own time (see start).
        if (peer is None) == (goro is None):
            raise ValueError("a peer or a goro image")
        self.build, self.cpus, self.net, self.peer, self.goro, self.app = build, cpus, net, peer, goro, app
        self.args, self.nic, self.mem, self.ready_timeout = args, nic, mem, ready_timeout
        self.proto, self.guest_port = PEERS[peer] if peer else GORO_APPS[app]
        self.name = name or f"goro{os.getpid() % 100000}"
        self.label = peer or f"goro-{app}"
        os.makedirs(os.path.join(build, "bench", "net"), exist_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="guest-", dir=os.path.abspath(os.path.join(build, "bench", "net")))
        self.console = os.path.join(self.workdir, "console.log")
        self.proc = None
        self.ns = None

    # -- networking
    def _net_argv(self):
        if self.net == "tap":
            self.ns = netns.create(self.name, self.cpus)
            self.host, self.port = self.ns["guest_ip"], self.guest_port
            self.guest_ip, self.prefixlen, self.gateway = self.ns["guest_ip"], self.ns["prefixlen"], self.ns["host_ip"]
            self.client_prefix = ["ip", "netns", "exec", self.name]
            return netns.qemu_args(self.ns, self.nic)
        self.host, self.port = "127.0.0.1", free_port()
        self.guest_ip, self.prefixlen, self.gateway = USER_GUEST_IP, 24, USER_GW
        self.client_prefix = []
        return ["-netdev", f"user,id=net0,hostfwd=tcp:127.0.0.1:{self.port}-:{self.guest_port}",
                "-device", f"{self.nic},netdev=net0"]

    def _boot_argv(self):
        if self.peer:
            initrd = os.path.join(self.workdir, "initrd.cpio")
            linux_initramfs(initrd, self.build, self.peer, self.cpus, self.guest_port, self.guest_ip,
                            self.prefixlen, self.gateway, self.args)
            return ["-kernel", find_kernel(), "-initrd", initrd, "-append", GUEST_APPEND]
        net = f"ip={self.guest_ip}/{self.prefixlen} gw={self.gateway}"
        return qemu.kernel_boot(self.goro, f"{net} app={self.app} port={self.guest_port} {self.args}".strip())

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        net = self._net_argv()
        cmd = qemu.argv(self.cpus, self.mem, serial=f"file:{self.console}", exit_device=self.goro is not None,
                        extra=net) + self._boot_argv()
        if self.ns:
            cmd = self.client_prefix + cmd
        log(f"{self.label}, {self.cpus} vCPU, net={self.net}: {' '.join(shlex.quote(c) for c in cmd)}")
        qemu.thp()
        self.proc = qemu.spawn(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(self.workdir, "qemu.err"), "w"))
        # The bound is QEMU's own time (tools/run/qemu.py, own_seconds): on
        # a host at a load average of 20 to 140 the Linux guest's boot
        # takes minutes of wall time, most of it waiting for a host CPU,
        # and only a guest that does not answer in the time it was given
        # is a hang. Wall time has the last word at HARD_LIMIT times that.
        self.t0 = time.monotonic()
        base = qemu.cpu_waits(self.proc.pid)
        own = 0.0
        while own < self.ready_timeout and time.monotonic() - self.t0 < qemu.HARD_LIMIT * self.ready_timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label}: QEMU exited ({self.proc.returncode}) before the server "
                                   f"answered{self._last_words()}; console: {self.console}")
            if self._probe():
                self.ready_s = time.monotonic() - self.t0
                self.ready_own_s = qemu.own_seconds(self.ready_s, qemu.cpu_waits(self.proc.pid), base)
                log(f"{self.label}: answering after {self.ready_s:.1f} s ({self.ready_own_s:.1f} s of "
                    f"QEMU's own)")
                return
            time.sleep(0.5)
            own = qemu.own_seconds(time.monotonic() - self.t0, qemu.cpu_waits(self.proc.pid), base)
        raise RuntimeError(f"{self.label}: no answer within {self.ready_timeout} s of QEMU's own time "
                           f"({time.monotonic() - self.t0:.0f} s of wall time){self._last_words()}; "
                           f"console: {self.console}")

    def _last_words(self):
        """The console's last line, for a failure's message: where the
        guest stopped (the kernel's panic, the server's error, the /init
        step it was at). /init's own closing lines, after a server that
        exited, say nothing of why."""
        lines = [line.strip() for line in self.console_text().splitlines() if line.strip()
                 and not re.search(r"\] reboot: |^### server .* exited$", line.strip())]
        return f" (its console's last line: {lines[-1][:160]!r})" if lines else " (its console empty)"

    def _probe(self):
        if not self.ns:
            return answers(self.proto, self.host, self.port)
        code = ("import sys; sys.path.insert(0, %r); from tools.net.guest import answers; "
                "sys.exit(0 if answers(%r, %r, %d) else 1)" % (ROOT, self.proto, self.host, self.port))
        return subprocess.run(self.client_prefix + [sys.executable, "-c", code]).returncode == 0

    @property
    def addr(self):
        return f"{self.host}:{self.port}"

    def client(self, argv, timeout=600, **kw):
        """Runs argv ({addr}, {host}, {port} filled in) where it reaches the
        guest; a CompletedProcess with text output."""
        argv = [a.format(addr=self.addr, host=self.host, port=self.port) for a in argv]
        return subprocess.run(self.client_prefix + argv, capture_output=True, text=True, timeout=timeout, **kw)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            qemu.kill_group(self.proc)
            self.proc.wait()
        if self.ns:
            netns.destroy(self.name, quiet=True)
            self.ns = None
        initrd = os.path.join(self.workdir, "initrd.cpio")
        if os.path.exists(initrd):
            os.unlink(initrd)

    def console_text(self):
        try:
            with open(self.console, errors="replace") as f:
                return f.read().replace("\r", "")
        except OSError:
            return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", choices=sorted(PEERS), help="a Linux peer")
    ap.add_argument("--goro", metavar="ELF", help="a goro image (with --app)")
    ap.add_argument("--app", choices=sorted(GORO_APPS), help="goro's server")
    ap.add_argument("--args", default="", help="more of goro's command line, or the peer's own flags")
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--net", choices=("tap", "user"), default="tap")
    ap.add_argument("--name", default=None, help="namespace name (a prefix of your own; default goro<pid>)")
    ap.add_argument("--nic", default="virtio-net-pci", help="QEMU's NIC model (default virtio-net-pci)")
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="client command (after --)")
    opts = ap.parse_args()
    argv = opts.argv[1:] if opts.argv[:1] == ["--"] else opts.argv
    if bool(opts.goro) != bool(opts.app) or bool(opts.goro) == bool(opts.peer):
        ap.error("--peer, or --goro with --app")
    with Guest(opts.build, opts.cpus, opts.net, opts.name, peer=opts.peer, goro=opts.goro, app=opts.app,
               args=opts.args, nic=opts.nic) as g:
        if not argv:
            print(g.addr)
            return 0
        p = g.client(argv)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        return p.returncode


if __name__ == "__main__":
    sys.exit(main())
