#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs say what the tree has (make check-docs, part of make test).
Fails, naming the file and line, on

  - a generated part (<!-- FIGURES ... -->) that differs from what its
    data in docs/data/ gives: a figure edited by hand, or data changed
    without `make figures` (tools/bench/figures.py);
  - a path, or a Markdown link, that README.md, HACKING.md or docs/*.md
    name and the tree does not have (an upper-case word stands for any
    name: tests/host/test_NAME.c); a link's #anchor that its page lacks;
  - a `make TARGET` in code that the Makefile does not define;
  - a top-level file or folder of tools/ or apps/ that the README's tree
    does not name;
  - a page (NAME.md) that code or a comment cites and the tree does not
    have;
  - a session, wave or issue by number or by its place in a sequence
    ("the third session"), anywhere in the tree: history lives in
    commit messages;
  - the reference pages, docs/*.md together, at DOCS_BUDGET lines or
    more: each is read in a sitting or two, and what grows past that is
    history (docs/notes/, dated) or belongs in the code it describes.

docs/notes/ is history, dated: its paths are not checked.

Python 3 standard library only.
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import figures  # noqa: E402

DOCS = ["README.md", "HACKING.md", "docs/*.md"]
SELF = "tools/check/check_docs.py"
# docs/*.md together (docs/notes/ is not counted), so that the reference
# stays readable in a sitting or two.
DOCS_BUDGET = 2500
TOP = ("apps", "arch", "boot", "docs", "drivers", "include", "kernel", "lib", "net", "shell",
       "tests", "tools", ".ci")
PATH_RE = re.compile(r"(?<![\w./-])((?:%s)/[\w./*{},-]*[\w*/}])"
                     % "|".join(re.escape(t) for t in TOP))
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
CODE_RE = re.compile(r"`([^`\n]+)`")
# `make a b` in a code span, or a command line of a code block ("$ make
# run APP=x" names the target run).
MAKE_RE = re.compile(r"^\s*(?:\$\s+)?make((?:\s+[a-z][\w-]*)+)")
ORDINAL = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
           r"twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
           r"nineteenth|twentieth|last|previous|earlier|later|next|this|that|same)")
HISTORY_RE = re.compile(
    r"\b(?:issue|session|wave) #?\d+\b|\bissue \d+'s\b|"
    r"\b%s (?:sessions?|waves?)\b|\bover (?:two|three|four|five|six|\d+) sessions\b" % ORDINAL,
    re.I)


def history_words(text):
    """Where text records history: a session, wave or issue by number or
    by its place in a sequence. A process's session or a shell session is
    not history.

    >>> history_words("In its third session the soak ran 3.1 x 10^8 operations.")
    ['third session']
    >>> history_words("Fixed in issue 17; see wave 2 and the previous session's log.")
    ['issue 17', 'wave 2', 'previous session']
    >>> history_words("QEMU runs in a session of its own; ## A shell session")
    []
    """
    return [m.group(0) for m in HISTORY_RE.finditer(text)]


def tracked(*patterns):
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", *patterns],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\n") if f and os.path.exists(os.path.join(ROOT, f))]


def doc_files():
    out = []
    for pat in DOCS:
        out += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pat)))
    return out


def exists(path):
    """A path of the tree; an upper-case word (NAME, N) in it stands for
    any name, a * for anything, {a,b} for each of a and b.

    >>> exists("tests/host/test_NAME.c"), exists("tools/check/check_{layers,docs}.py")
    (True, True)
    >>> exists("kernel/no_such_file.c")
    False
    """
    path = path.rstrip(".")
    full = os.path.join(ROOT, path)
    if os.path.exists(full):
        return True
    pat = re.sub(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?![a-z0-9])", "*", path)
    m = re.search(r"\{([^}]*)\}", pat)
    if m:           # a {a,b} list: every one must exist
        return all(exists(pat[:m.start()] + alt + pat[m.end():]) for alt in m.group(1).split(","))
    return bool(glob.glob(os.path.join(ROOT, pat)))


def slug(heading):
    """GitHub's anchor for a heading.

    >>> slug("Scheduling latency: goro beside Go's runtime/metrics")
    'scheduling-latency-goro-beside-gos-runtimemetrics'
    >>> slug("The `make test` flow")
    'the-make-test-flow'
    """
    h = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(path):
    out, seen = set(), {}
    in_code = False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code and line.startswith("#"):
                s = slug(line.lstrip("#"))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
    return out


def make_targets():
    targets = set()
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.split("\n"):
        m = re.match(r"^\.PHONY:(.*)", line)
        if m:
            targets |= set(m.group(1).split())
            continue
        m = re.match(r"^([a-z][\w -]*?)\s*:(?![=:])", line)
        if m:
            targets |= set(m.group(1).split())
    return targets


def check_doc(rel, targets, problems):
    here = os.path.dirname(rel)
    in_code = False
    with open(os.path.join(ROOT, rel)) as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if "<!-- FIGURES" in line:
            continue
        for m in PATH_RE.finditer(line):
            p = re.sub(r":\d[\d-]*$", "", m.group(1))
            if p.startswith("net/") and "." not in p and not p.endswith("/"):
                continue    # a Go package (net/http), not net/'s files
            if not exists(p):
                problems.append(f"{rel}:{n}: names {p}, which the tree does not have")
        for m in LINK_RE.finditer(line):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, path)) if path else rel
            if path and not exists(dest):
                problems.append(f"{rel}:{n}: links to {path}, which the tree does not have")
            elif (anchor and dest.endswith(".md")
                  and anchor not in anchors(os.path.join(ROOT, dest))):
                problems.append(f"{rel}:{n}: links to {dest}#{anchor}: no such heading there")
        code = [line] if in_code else CODE_RE.findall(line)
        for c in code:
            for m in MAKE_RE.finditer(c.split(";")[0]):
                for word in m.group(1).split():
                    if word not in targets:
                        problems.append(f"{rel}:{n}: `make {word}`: "
                                        f"the Makefile has no such target")


def readme_tree(problems):
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"^## The tree\n.*?```\n(.*?)```", text, re.S | re.M)
    if not m:
        problems.append("README.md: no '## The tree' section with the tree in a code block")
        return
    # a{b,c}d names abd and acd
    tree = re.sub(r"([\w-]*)\{([\w,-]+)\}([\w.-]*)",
                  lambda b: " ".join(b.group(1) + x + b.group(3) for x in b.group(2).split(",")),
                  m.group(1))
    for top in ("tools", "apps"):
        for name in sorted(os.listdir(os.path.join(ROOT, top))):
            if name.startswith((".", "__")) or not tracked(f"{top}/{name}"):
                continue
            stem = name if os.path.isdir(os.path.join(ROOT, top, name)) else name.rsplit(".", 1)[0]
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(stem), tree):
                problems.append(f"README.md: the tree does not name {top}/{name}")


def texts(root, files, skip):
    """(rel, text) of each of files under root but this one and those under
    the prefixes skip; binary files and folders are passed over."""
    for rel in files:
        if rel == SELF or rel.startswith(skip):
            continue
        try:
            with open(os.path.join(root, rel)) as f:
                yield rel, f.read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue


def history(problems, root=ROOT, files=None):
    """Every file of the tree (or files, under root) that records history.
    This file is left out: its examples are history on purpose.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "boot.md"), "w").write(
    ...     "# Boot\\n\\nIn the sixteenth session entry to main took 1.19 ms.\\n")
    >>> p = []; history(p, d, ["boot.md"]); p
    ['boot.md:3: "sixteenth session": history belongs in commit messages']
    """
    for rel, text in texts(root, tracked() if files is None else files,
                           ("tests/fuzz/corpus/", "docs/data/", "docs/img/")):
        for m in HISTORY_RE.finditer(text):
            n = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel}:{n}: \"{m.group(0)}\": history belongs in commit messages")


MD_RE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.md)\b")


def md_cites(problems, root=ROOT, files=None):
    """Pages that code and comments cite (docs/boot.md, HACKING.md) and the
    tree does not have. A name with a folder is a path from the top or from
    the citing file's folder; a bare name is any page of that name; one
    under BUILD/ or build/ is a file the build writes, not a page.

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); os.makedirs(os.path.join(d, "docs"))
    >>> _ = open(os.path.join(d, "docs", "api.md"), "w").write("# API\\n")
    >>> _ = open(os.path.join(d, "exit.c"), "w").write(
    ...     "// exit codes: docs/api.md, api.md, DESIGN.md, docs/gone.md\\n"
    ...     "// the report: BUILD/report.md\\n")
    >>> p = []; md_cites(p, d, ["docs/api.md", "exit.c"]); p
    ['exit.c:1: cites DESIGN.md, which the tree does not have', \
'exit.c:1: cites docs/gone.md, which the tree does not have']
    """
    files = tracked() if files is None else files
    pages = {os.path.basename(f) for f in files if f.endswith(".md")}
    for rel, text in texts(root, [f for f in files if not f.endswith(".md")],
                           ("tests/fuzz/corpus/", "docs/")):
        for m in MD_RE.finditer(text):
            cite = m.group(1)
            if cite.startswith(("BUILD/", "build/")):
                continue
            if "/" in cite:
                ok = any(os.path.exists(os.path.join(base, cite))
                         for base in (root, os.path.join(root, os.path.dirname(rel))))
            else:
                ok = cite in pages
            if not ok:
                n = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{n}: cites {cite}, which the tree does not have")


def budget(problems, root=ROOT, limit=DOCS_BUDGET):
    """The reference pages (docs/*.md, not docs/notes/) at limit lines or
    more, each page's count named; returns their total. A part make figures
    writes (between FIGURES markers) is data, not prose: it does not count.

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); os.makedirs(os.path.join(d, "docs", "notes"))
    >>> _ = open(os.path.join(d, "docs", "a.md"), "w").write("x\\n" * 30)
    >>> _ = open(os.path.join(d, "docs", "b.md"), "w").write("y\\n" * 20)
    >>> _ = open(os.path.join(d, "docs", "notes", "old.md"), "w").write("z\\n" * 99)
    >>> p = []; budget(p, d, 60), p
    (50, [])
    >>> p = []; budget(p, d, 50), p
    (50, ['docs/*.md: 50 lines, at or over the budget of 50 (a.md 30, b.md 20): \
cut what repeats or narrates, or move history to docs/notes/'])
    >>> _ = open(os.path.join(d, "docs", "c.md"), "w").write(
    ...     "t\\n<!-- FIGURES t (x) -->\\n" + "| r |\\n" * 40 + "<!-- END FIGURES t -->\\n")
    >>> budget([], d, 60)
    51
    """
    pages = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    counts = []
    for page in pages:
        with open(page) as f:
            text = figures.BLOCK_RE.sub("", f.read())
            counts.append((os.path.basename(page), text.count("\n")))
    total = sum(n for _, n in counts)
    if total >= limit:
        each = ", ".join(f"{name} {n}" for name, n in sorted(counts, key=lambda c: -c[1]))
        problems.append(f"docs/*.md: {total} lines, at or over the budget of {limit} ({each}): "
                        "cut what repeats or narrates, or move history to docs/notes/")
    return total


def main():
    problems = figures.regenerate(write=False)
    targets = make_targets()
    for rel in doc_files():
        check_doc(rel, targets, problems)
    readme_tree(problems)
    md_cites(problems)
    history(problems)
    lines = budget(problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check-docs: {len(problems)} problem(s): the docs must say what the tree has")
        return 1
    print("check-docs: the figures match their data, every path, link and target named exists, "
          f"and docs/*.md are {lines} lines of a budget of {DOCS_BUDGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
