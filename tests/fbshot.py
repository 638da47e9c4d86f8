# SPDX-License-Identifier: MIT
"""Watched QEMU runs and the framebuffer screenshot check, for tests/run.py.

A watched run has a QEMU monitor on a unix socket (tools/run/qemu.py). When the
serial log matches the configuration's stop_at regex, the runner may take a
`screendump` of the display, then `quit`s QEMU (exit status 0). That is how
a test looks at a machine that does not exit by itself: a boot that went
back to the firmware, or a kernel halted after its last line (no
isa-debug-exit device) whose screen is then final.

The screenshot check renders the kernel's console output, from its first
framebuffer line ("fb: WxHxB at ...") to the end of the serial log, with
the kernel's own font table (drivers/font8x16.c) and the same wrap and
scroll rules as drivers/fb.c, and compares every character cell of the
screendump against it pixel by pixel.

Python 3 standard library only.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.run import qemu  # noqa: E402

FONT_W, FONT_H = 8, 16
CURSOR_ROWS = 2                        # drivers/fb.c's FB_CURSOR_ROWS
MAX_COLS, MAX_ROWS = 512, 192          # drivers/fb.c's FB_MAX_COLS/ROWS
FB_START_RE = re.compile(rb"fb: \d+x\d+x\d+ at ")
POLL_S = 0.2


def load_font(path):
    """drivers/font8x16.c -> {code: [16 row bytes]}."""
    font = {}
    with open(path) as f:
        for m in re.finditer(r"\[0x([0-9a-f]{2})\] = \{([^}]*)\}", f.read()):
            font[int(m.group(1), 16)] = [int(b, 16) for b in m.group(2).split(",")]
    return font


def render_text(text, cols, rows, cursor=None):
    """The character grid drivers/fb.c leaves after writing text; with a
    list for cursor, [row, col] of its cursor too (col == cols: none shown)."""
    grid = [[" "] * cols for _ in range(rows)]
    row = col = 0

    def newline():
        nonlocal row, col
        col = 0
        if row + 1 < rows:
            row += 1
        else:
            del grid[0]
            grid.append([" "] * cols)

    def put(ch):
        nonlocal col
        if ch == "\n":
            newline()
        elif ch == "\r":
            col = 0
        elif ch == "\t":
            put(" ")
            while col % 8:
                put(" ")
        elif ch == "\b":
            col = max(0, col - 1)
        else:
            if col == cols:
                newline()
            grid[row][col] = ch
            col += 1

    for ch in text:
        put(ch)
    if cursor is not None:
        cursor[:] = [row, col]
    return ["".join(r) for r in grid]


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    # "P6\n<w> <h>\n255\n" then RGB triples, as QEMU writes it.
    magic, dims, maxval, pixels = data.split(b"\n", 3)
    if magic != b"P6" or maxval != b"255":
        raise ValueError(f"{path}: not an 8-bit P6 PPM")
    w, h = map(int, dims.split())
    return w, h, pixels


def check_screenshot(ppm, log, font_path):
    """Problems ([] when the screen shows exactly the rendered log)."""
    try:
        w, h, px = read_ppm(ppm)
    except (OSError, ValueError) as e:
        return [f"no screenshot: {e}"]
    with open(log, "rb") as f:
        raw = f.read()
    starts = list(FB_START_RE.finditer(raw))
    if not starts:
        return ["the log has no 'fb: ...' line: the kernel found no framebuffer"]
    text = raw[starts[-1].start():].decode(errors="replace")
    font = load_font(font_path)
    cols, rows = min(w // FONT_W, MAX_COLS), min(h // FONT_H, MAX_ROWS)
    cursor = []
    grid = render_text(text, cols, rows, cursor)
    bad = []
    for r, line in enumerate(grid):
        for c, ch in enumerate(line):
            glyph = font.get(ord(ch), font[ord("?")]) if 0x20 <= ord(ch) < 0x7f else font[ord("?")]
            if [r, c] == cursor:        # drivers/fb.c's cursor: the bottom rows lit
                glyph = glyph[:FONT_H - CURSOR_ROWS] + [0xFF] * CURSOR_ROWS
            if not cell_matches(px, w, r, c, glyph):
                bad.append((r, c, ch))
    if not any(l.strip() for l in grid):
        return ["the rendered log is empty"]
    if bad:
        r, c, ch = bad[0]
        return [f"{len(bad)} of {rows * cols} character cells differ from the log's "
                f"rendering; first at row {r} col {c}, expected {ch!r} "
                f"(line: {grid[r].rstrip()!r})"]
    return []


def cell_matches(px, w, r, c, glyph):
    for y in range(FONT_H):
        bits = glyph[y]
        base = ((r * FONT_H + y) * w + c * FONT_W) * 3
        for x in range(FONT_W):
            p = base + x * 3
            lit = px[p] + px[p + 1] + px[p + 2] > 3 * 0x60
            if lit != bool(bits & (0x80 >> x)):
                return False
    return True


# ---- the watched run ---------------------------------------------------------

def log_matches(log, rx):
    try:
        with open(log, "rb") as f:
            return re.search(rx.encode(), f.read()) is not None
    except FileNotFoundError:
        return False


def wait_for_log(p, log, rx, silence):
    """True once the serial log matches rx; False if QEMU ended or the log
    stayed silent too long first (a qemu.Silence)."""
    while not silence.expired() and p.poll() is None:
        if log_matches(log, rx):
            return True
        time.sleep(POLL_S)
    return False


def wait_for_file(path, timeout=10.0):
    t0 = time.monotonic()
    while not os.path.exists(path) and time.monotonic() - t0 < timeout:
        time.sleep(0.05)


def screendump_and_quit(mon_path, shot):
    with qemu.Monitor(mon_path) as mon:
        if shot:
            # Not after "stop": QEMU 7.2's screendump waits for a display
            # update that a paused machine never makes.
            mon.command(f"screendump {shot}")
            wait_for_file(shot)
        mon.quit()


def run_watched(runner, argv, log, mon_path, stop_at, shot, timeout):
    """Like qemu.Group.run, for a QEMU started with qemu.monitor_argv(mon_path):
    returns (exit status or None on timeout, stderr text, seconds)."""
    t0 = time.monotonic()
    try:
        with runner.started(argv) as p:
            matched = wait_for_log(p, log, stop_at, qemu.Silence(log, timeout, t0, pid=p.pid))
            if matched:
                screendump_and_quit(mon_path, shot)
            remaining = max(1.0, timeout - (time.monotonic() - t0))
            status, _, err = qemu.wait(p, remaining if matched or p.poll() is not None else 0.1)
    except qemu.Stopped:
        return None, "runner stopped", 0.0
    finally:
        if os.path.exists(mon_path):
            os.remove(mon_path)
    return status, err.decode(errors="replace"), time.monotonic() - t0
