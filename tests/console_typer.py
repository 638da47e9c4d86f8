# SPDX-License-Identifier: MIT
"""Typing into a guest's console, for tests/run.py: Config.console.

A conversation is a list of (expect, send) steps, or (expect, send, via)
to type one step another way than Config.console_via. Each step waits until
the regex `expect` (multi-line: ^ and $ match at every line) matches the
console output after the previous step's match, then types `send` one key
at a time, with a pause between keys, the way a person types (a line sent
in one write reaches the guest in one interrupt, which hides bugs of
character-at-a-time input). The keys go

  - into COM1 (via "serial"): QEMU connects the guest's COM1 to a socket
    this module listens on, whenever a step types there; the output is then
    read from the same socket, and this module writes the serial log from
    it as it arrives (QEMU 7.2's chardev logfile, behind a socket,
    sometimes writes a byte twice: "spinnningthreads"; its copy goes to
    qemu_log and is deleted);
  - or to the PS/2 keyboard (via "keyboard"): one `sendkey` per key through
    QEMU's monitor socket. Without serial steps the output is read from the
    serial log file.

In `send`, terminal sequences stand for the keys that make them on a serial
line: "\\n" Enter, "\\x7f" Backspace, "\\x03" Ctrl-C, "\\x15" Ctrl-U,
"\\x1b[A" / "\\x1b[B" / "\\x1b[C" / "\\x1b[D" the arrows. On the keyboard
path they become the sendkey names of those keys.

Python 3 standard library only.
"""

import codecs
import os
import re
import shutil
import socket
import tempfile
import threading
import time

ANSI_RE = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|[()][0-9A-Za-z]|[=>78cDEHM])")
KEY_PAUSE_S = 0.03
POLL_S = 0.1

# Terminal sequences -> QEMU sendkey names (the PS/2 path).
SEQ_KEYS = [("\x1b[A", "up"), ("\x1b[B", "down"), ("\x1b[C", "right"), ("\x1b[D", "left"),
            ("\x1b[H", "home"), ("\x1b[F", "end"), ("\x1b[3~", "delete")]
CHAR_KEYS = {
    "\n": "ret", " ": "spc", "\x7f": "backspace", "\t": "tab", "-": "minus", "=": "equal",
    ".": "dot", ",": "comma", "/": "slash", ";": "semicolon", "'": "apostrophe",
    "`": "grave_accent", "[": "bracket_left", "]": "bracket_right", "\\": "backslash",
    "_": "shift-minus", "+": "shift-equal", ":": "shift-semicolon", '"': "shift-apostrophe",
    "<": "shift-comma", ">": "shift-dot", "?": "shift-slash", "!": "shift-1", "@": "shift-2",
    "#": "shift-3", "$": "shift-4", "%": "shift-5", "^": "shift-6", "&": "shift-7",
    "*": "shift-8", "(": "shift-9", ")": "shift-0", "|": "shift-backslash",
    "{": "shift-bracket_left", "}": "shift-bracket_right", "~": "shift-grave_accent",
}


def serial_units(text):
    """text cut into what one key sends: an escape sequence stays whole."""
    units, i = [], 0
    while i < len(text):
        seq = next((seq for seq, _ in SEQ_KEYS if text.startswith(seq, i)), text[i])
        units.append(seq)
        i += len(seq)
    return units


def sendkey_name(unit):
    """The sendkey argument for one of serial_units' keys."""
    seq_name = dict(SEQ_KEYS).get(unit)
    if seq_name:
        return seq_name
    c = unit
    if "a" <= c <= "z" or "0" <= c <= "9":
        return c
    if "A" <= c <= "Z":
        return "shift-" + c.lower()
    if 1 <= ord(c) <= 26 and c not in "\n\t":
        return "ctrl-" + chr(ord(c) + 96)
    if c in CHAR_KEYS:
        return CHAR_KEYS[c]
    raise ValueError(f"no key types {c!r}")


def sendkey_names(text):
    """The sendkey argument for each key that types text."""
    return [sendkey_name(u) for u in serial_units(text)]


class ConsoleTyper:
    """Runs cfg.console against one QEMU run. start() before QEMU starts
    (QEMU connects to com1 at start-up), close() after it exits; then
    problems() says which step was not reached."""

    def __init__(self, cfg, log, monitor):
        self.steps = [(st[0], st[1], st[2] if len(st) > 2 else cfg.console_via)
                      for st in cfg.console]
        for _, _, via in self.steps:
            if via not in ("serial", "keyboard"):
                raise ValueError(f"console via {via!r}: serial or keyboard")
        self.via = "serial" if any(v == "serial" for _, _, v in self.steps) else "keyboard"
        self.log, self.monitor = log, monitor
        self.reached = 0                    # steps whose expect matched
        self.text = ""                      # output seen, escapes and \r removed
        self.pos = 0                        # where the next expect starts looking
        self.stop = threading.Event()
        self.dir = self.com1 = self.listener = self.qemu_log = None
        if self.via == "serial":
            self.qemu_log = log + ".qemu"
            self.dir = tempfile.mkdtemp(prefix="goro-com1-")   # short: sun_path has 108 bytes
            self.com1 = os.path.join(self.dir, "com1")
            self.listener = socket.socket(socket.AF_UNIX)
            self.listener.bind(self.com1)
            self.listener.listen(1)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def close(self):
        # QEMU has exited: the serial thread reads to the socket's end (the
        # last lines of the log) and stops by itself; a conversation that
        # never finished is stopped.
        self.thread.join(timeout=5)
        self.stop.set()
        if self.listener:
            self.listener.close()
        self.thread.join(timeout=5)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.qemu_log and os.path.exists(self.qemu_log):
            os.remove(self.qemu_log)

    def problems(self):
        if self.reached == len(self.steps):
            return []
        rx = self.steps[self.reached][0]
        return [f"console step {self.reached + 1} of {len(self.steps)}: no output matched "
                f"/{rx}/ after the previous step"]

    # ---- output ----

    def _add(self, raw):
        self.text += ANSI_RE.sub("", raw.replace("\r", ""))

    def _expect(self, rx, more):
        """Waits until rx matches after self.pos; more() adds output and
        returns False once no more can come."""
        pat = re.compile(rx, re.M)
        while not self.stop.is_set():
            m = pat.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return True
            if not more():
                return False
        return False

    # ---- the two paths ----

    def _run(self):
        try:
            if self.via == "serial":
                self._run_serial()
            else:
                self._run_keyboard()
        except OSError:
            pass

    def _converse(self, more, com1):
        for rx, send, via in self.steps:
            if not self._expect(rx, more):
                return
            self.reached += 1
            if via == "serial":
                for unit in serial_units(send):
                    com1.sendall(unit.encode())
                    time.sleep(KEY_PAUSE_S)
            else:
                self._sendkeys(sendkey_names(send))

    def _sendkeys(self, keys):
        if not keys:
            return
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(self.monitor)
            _read_until(s, b"(qemu)")
            for k in keys:
                s.sendall(f"sendkey {k} 20\n".encode())
                _read_until(s, b"(qemu)")
                time.sleep(KEY_PAUSE_S)

    def _run_serial(self):
        self.listener.settimeout(60)
        conn, _ = self.listener.accept()
        conn.settimeout(POLL_S)
        utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with conn, open(self.log, "wb", buffering=0) as logf:

            def more():
                try:
                    d = conn.recv(4096)
                except socket.timeout:
                    return True
                if not d:
                    return False
                logf.write(d)               # the serial log, every byte as it came
                self._add(utf8.decode(d))
                return True

            self._converse(more, conn)
            # keep reading, so QEMU never blocks on a full socket
            while not self.stop.is_set() and more():
                pass

    def _run_keyboard(self):
        seen = 0

        def more():
            nonlocal seen
            time.sleep(POLL_S)
            try:
                with open(self.log, "rb") as f:
                    f.seek(seen)
                    d = f.read()
            except FileNotFoundError:
                return True
            seen += len(d)
            self._add(d.decode(errors="replace"))
            return True

        self._converse(more, None)


def _read_until(sock, token):
    buf = b""
    try:
        while token not in buf:
            d = sock.recv(4096)
            if not d:
                break
            buf += d
    except socket.timeout:
        pass
    return buf
