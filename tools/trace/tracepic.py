#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Screenshots of `go tool trace`'s pages, rendered by headless Chromium.

    tracepic.py build/trace/trace.out -o docs/img/trace [--pages goroutines,goroutine,trace]

serves the trace with `go tool trace -http=127.0.0.1:0`, drives Debian's
`chromium` through the DevTools protocol on a pipe (--remote-debugging-pipe;
Python's standard library only) and writes one PNG per page:

    PREFIX-goroutines.png  /goroutines: the goroutines grouped by start function
    PREFIX-goroutine.png   /goroutine?id=...: the busiest group's goroutines, each
                           one's execution, blocking and scheduler-wait times
    PREFIX-trace.png       /trace: the timeline, once its importer is done

`make trace-screenshot APP=... ARGS=...` runs `make trace` then this.
Chromium is optional: `tracepic.py --install` asks apt for it (as root),
nothing installs it otherwise.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.trace.trace2go import TraceServer, goroutine_groups  # noqa: E402


def log(msg):
    print(f"tracepic: {msg}", file=sys.stderr, flush=True)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium on a DevTools pipe: fd 3 in, fd 4 out, NUL-ended JSON."""

    def __init__(self, width, height):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        self.width, self.height = width, height
        # fds 3 and 4 of the child, inheritable (os.pipe's are close-on-exec,
        # and a dup2 onto itself keeps the flag): through fresh copies first.
        def fds():
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.p = subprocess.Popen([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                                   "--hide-scrollbars", "--remote-debugging-pipe",
                                   f"--window-size={width},{height}", "about:blank"],
                                  preexec_fn=fds, close_fds=False,   # keeps 3 and 4
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id = b"", 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, True)
        self.call("Page.enable", {}, True)

    def call(self, method, params, in_page=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if in_page:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, True)
        return r.get("result", {}).get("value")

    def shot(self, url, path, ready="document.readyState == 'complete'", timeout=60, settle=1.0,
             then=None, height=None):
        """Loads url, waits for the ready expression, runs then, and writes
        the top height pixels (default: the window) as a PNG."""
        self.call("Page.navigate", {"url": url}, True)
        end = time.time() + timeout
        while time.time() < end and not self.eval(ready):
            time.sleep(0.5)
        if then:
            self.eval(then)
        time.sleep(settle)
        params = {"format": "png"}
        if height:
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
        data = self.call("Page.captureScreenshot", params, True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        log(f"{url} -> {path}")

    def close(self):
        self.p.terminate()
        self.p.wait()


# The timeline is ready when the importer's dialog is gone and a track is drawn.
TRACE_READY = ("!!document.querySelector('tr-ui-timeline-view') && "
               "!document.querySelector('tr-ui-b-overlay[visible]') && "
               "document.title.indexOf('Importing') < 0")


# The polyfill warning bar of Go 1.19's viewer in a current Chromium: its Hide button.
HIDE_BANNER = """(function walk(root) {
    const all = root && root.querySelectorAll ? Array.prototype.slice.call(root.querySelectorAll('*')) : [];
    for (const e of all) {
        if (e.shadowRoot && e.shadowRoot !== root) walk(e.shadowRoot);
        for (const t of Array.prototype.slice.call(e.childNodes))
            if (t.nodeType == 3 && t.textContent.indexOf('WebComponentsV0 polyfill') >= 0)
                (e.closest('tr-ui-b-info-bar') || e.parentElement || e).style.display = 'none';
    }
})(document)"""


def busiest_group(srv):
    """(link, count, name) of the group with the most goroutines (its
    /goroutine?id= page in Go 1.19, ?name= in 1.22 and later)."""
    best = None
    for link, name, n in goroutine_groups(srv.get("/goroutines")):
        if best is None or n > best[1]:
            best = (link, n, name)
    return best


def install():
    if shutil.which("apt-get") is None or os.getuid() != 0:
        sys.exit("tracepic: run as root on Debian: apt-get install -y --no-install-recommends chromium")
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("trace", nargs="?", help="a Go execution trace (make trace's build/trace/trace.out)")
    ap.add_argument("-o", "--prefix", default="build/trace/shot", help="PNG path prefix (default build/trace/shot)")
    ap.add_argument("--pages", default="goroutines,goroutine,trace", help="which pages (default all three)")
    ap.add_argument("--size", default="1400x900", help="window WIDTHxHEIGHT (default 1400x900)")
    ap.add_argument("--trace-height", type=int, default=0, help="keep the top N pixels of the timeline's shot")
    ap.add_argument("--install", action="store_true", help="apt-get install chromium (as root) and exit")
    args = ap.parse_args()
    if args.install:
        install()
        return 0
    if not args.trace:
        ap.error("a trace file is needed")
    if not chromium():
        sys.exit("tracepic: no chromium: `tools/trace/tracepic.py --install` (as root) or apt-get install chromium")
    width, height = (int(v) for v in args.size.split("x"))
    pages = [p for p in args.pages.split(",") if p]
    os.makedirs(os.path.dirname(os.path.abspath(args.prefix)), exist_ok=True)
    srv = TraceServer(args.trace)
    browser = None
    try:
        browser = Browser(width, height)
        if "goroutines" in pages:
            browser.shot(srv.url + "/goroutines", f"{args.prefix}-goroutines.png")
        if "goroutine" in pages:
            group = busiest_group(srv)
            if group:
                browser.shot(srv.url + group[0], f"{args.prefix}-goroutine.png")
        if "trace" in pages:
            browser.shot(srv.url + "/trace", f"{args.prefix}-trace.png", TRACE_READY, timeout=120, settle=2.0,
                         then=HIDE_BANNER, height=args.trace_height)
    finally:
        if browser:
            browser.close()
        srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
