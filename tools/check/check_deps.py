#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make check-deps: every program a make target runs is in tools/deps.list
for that target, so that a missing package fails here and not on a user's
first run.

For each target of tools/deps.list (run, test, soak, bench, ...) it asks
make what the target would run (`make -n -B TARGET` in a scratch build: the
Makefile's own commands, sub-makes included), then reads every in-tree
script those commands name, and the scripts and modules those import or
run, for the programs they start:

  - the Makefile's commands and shell scripts: the first word of each
    command (after ;, &&, ||, |, "then", "exec", "env", "nice", ...), and
    the program handed to a shell function that runs its arguments
    ("$@", after its shifts: step NAME LOG git clone ... runs git);
  - Python: subprocess.run/Popen/call/check_call/check_output whose first
    argument is a list starting with a string ("go", "tool", ...), and
    every import that is neither the standard library nor in the tree;
  - Python helpers that run what they are given: a function whose
    parameter becomes the head of the command it hands to subprocess (or
    to another such helper), e.g. netns.py's sh(*argv) behind an optional
    "ip netns exec NS" prefix. A call of one by name (sh("sysctl", ...),
    netns.sh(...), g.run(["curl", ...])) with a string there runs that
    program.

A program must be one of the commands (or py:MODULE) that tools/deps.list
checks for a line naming the target, or be in the tree. A call through a
variable (subprocess.run(cmd)) is not seen: name the program in a literal
list where it is called.

    tools/check/check_deps.py [--target T ...]   one line per problem; exit 1 on any
    tools/check/check_deps.py --tests            PASS/FAIL lines (the runner's host test)

Python 3 standard library only.
"""

import argparse
import ast
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tools", "deps.list")

# Shell words that are not programs: keywords, builtins, and the wrappers
# whose next word is the program (those are programs too, and listed).
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case",
    "esac", "{", "}", "!", "[", "[[", "]]", "test", "echo", "printf", "exit", "return", "cd",
    "set", "unset", "export", "true", "false", ":", ".", "source", "read", "shift", "local",
    "trap", "wait", "eval", "command", "break", "continue", "umask", "type", "hash", "exec",
    "ulimit", "alias", "getopts", "pwd",
}
# Programs that run another program: the word after their options is one too.
WRAPPERS = {"nice", "timeout", "setarch", "env", "exec", "stdbuf", "nohup", "sudo"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "$(", "`", ";;", "\n"}
SUBPROCESS_RE = re.compile(
    r"subprocess\.(?:run|Popen|call|check_call|check_output)\(\s*\[((?:\s*(?:f?\"[^\"]*\"|f?'[^']*')\s*,?)+)")
LITERAL_RE = re.compile(r"(f?)(\"[^\"]*\"|'[^']*')")
IMPORT_RE = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\s+\(?([\w\s,]+))", re.M)


def read_list(path=LIST):
    """[(package, targets, checks)] from tools/deps.list.

    >>> rows = read_list()
    >>> any(p == "golang-go" and "test" in t and "go" in c for p, t, c in rows)
    True
    """
    rows = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#") or len(words) < 3:
                continue
            rows.append((words[0], set(words[1].split(",")), words[2].split(",")))
    return rows


def provided(rows, target):
    """The commands and py:modules the list gives target."""
    have = set()
    for _, targets, checks in rows:
        if target in targets:
            for c in (alt for check in checks for alt in check.split("|")):
                if not c.startswith("/"):
                    have.add(c.split(">=")[0])
    return have


def list_targets(rows):
    return sorted({t for _, targets, _ in rows for t in targets})


# ---- what a line of shell runs --------------------------------------------------

# What "$@" reads as in a shell function's body: a command whose first
# word it is runs the function's arguments.
ARGV = "GORO_ARGV"
ARGV_RE = re.compile(r'"\$@"|"\$\{@\}"|(?<![\w"$\\])\$@(?![\w"])')


def shell_programs(text):
    """(word, line offset) of each program a piece of shell starts,
    including those handed to a function that runs its arguments ("$@",
    after its shifts).

    >>> [w for w, _ in shell_programs("set -e; x=1 nice -n 19 go build && cc -o a b | sort")]
    ['nice', 'go', 'cc', 'sort']
    >>> [w for w, _ in shell_programs("if [ -f x ]; then exec env A=1 python3 t.py; fi")]
    ['env', 'python3']
    >>> [w for w, _ in shell_programs("f() { mformat -i x ::; }\\nf")]
    ['mformat']
    >>> [w for w, _ in shell_programs('run() { echo "+ $*"; "$@"; }\\nrun go build\\nrun "$x" y')]
    ['go']
    >>> [w for w, _ in shell_programs('step() {\\n\\tr=$1\\n\\tshift 2\\n\\tnice "$@" > "$log"\\n}\\nstep a b curl -s')]
    ['nice', 'curl']
    """
    text = ARGV_RE.sub(ARGV, text)
    defined = set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)", text, re.M))
    lines = simplify_shell(text).split("\n")
    cmds = shell_commands(lines)
    runners = argv_runners(lines, cmds, defined)
    out = []
    for w, lineno, rest in cmds:
        if w in runners:
            words = program_words(rest[runners[w]:])
            out += [(p, lineno) for p in words if p not in defined and is_program_word(p)]
        elif w not in defined and is_program_word(w):
            out.append((w, lineno))
    return out


def is_program_word(w):
    return not (w in SHELL_WORDS or w == ARGV or w.startswith("$") or "`" in w or w == "Q")


def shell_commands(lines):
    """(first word, line offset, the words after it) of each command the
    simplified shell lines run, shell words and functions included; after
    a wrapper (nice -n 19 go) the wrapped program is a command too."""
    cmds = []
    for lineno, line in enumerate(lines):
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"make(\[\d+\])?: ", line):
            continue
        # a case pattern ("--auto | --check)", "*)") is not a command
        line = re.sub(r"^[^()$]*\)", ";", line)
        line = re.sub(r"\bcase\b.*?\bin\b[^()]*\)", ";", line)
        line = re.sub(r";;\s*[^()]*\)", ";", line)
        line = re.sub(r"^[A-Za-z_][\w-]*\s*\(\)", "", line)     # a function's header
        try:
            lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()`<>")
            lex.whitespace_split = True
            lex.commenters = "#"
            words = list(lex)
        except ValueError:
            continue            # an unfinished quote
        start = True
        after_wrapper = None
        skip = False
        for i, w in enumerate(words):
            if skip:
                skip = False
                continue
            if set(w) <= set("<>&") and set(w) & set("<>"):
                skip = True         # a redirection: the next word is its file or descriptor
                continue
            if w == ")":
                start = False       # the end of a $( ): the outer command goes on
                continue
            if w in SEPARATORS or set(w) <= set(";&|(`"):
                start, after_wrapper = True, None
                continue
            if start and w in ("then", "else", "do", "{", "!", "elif", "if", "while", "until"):
                continue
            if after_wrapper:
                # options and their values (nice -n 19, timeout 60, setarch x86_64 -R)
                if w.startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", w) or "=" in w or \
                        (after_wrapper == "setarch" and re.fullmatch(r"x86_64|i[3-6]86|linux\d*", w)):
                    continue
                after_wrapper = None
                start = True
            if not start:
                continue
            start = False
            if re.fullmatch(r"[A-Za-z_]\w*=.*", w):
                start = True        # an assignment before the command
                continue
            cmds.append((w, lineno, simple_command_words(words[i + 1:])))
            if w == "exec":
                start = True
            if w in WRAPPERS and w not in SHELL_WORDS:
                after_wrapper = w
    return cmds


def simple_command_words(words):
    """The words up to the end of a simple command, redirections left out."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif set(w) <= set("<>&") and set(w) & set("<>"):
            skip = True
        elif w in SEPARATORS or w == ")" or set(w) <= set(";&|(`"):
            break
        else:
            out.append(w)
    return out


def argv_runners(lines, cmds, defined):
    """{function: index of the argument that is the program it runs} for
    the functions of the text that run their arguments: a command in the
    body that is "$@" (after the body's shifts), or a call of another such
    function that hands it "$@" there."""
    bodies = {}
    for i, line in enumerate(lines):
        m = re.match(r"\s*([A-Za-z_][\w-]*)\s*\(\)", line)
        if not m or m.group(1) not in defined:
            continue
        depth, j, opened = 0, i, False
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if opened and depth <= 0:
                break
            j += 1
        bodies[m.group(1)] = (i, j)
    runners, changed = {}, True
    while changed:
        changed = False
        for name, (first, last) in bodies.items():
            if name in runners:
                continue
            shifts = 0
            for w, lineno, rest in cmds:
                if not first <= lineno <= last:
                    continue
                if w == "shift":
                    shifts += int(rest[0]) if rest and rest[0].isdigit() else 1
                elif w == ARGV:
                    runners[name] = shifts
                elif w in runners and w != name and ARGV in rest[:runners[w] + 1]:
                    runners[name] = shifts + runners[w] - rest.index(ARGV)
                if name in runners:
                    changed = True
                    break
    return runners


def simplify_shell(text):
    r"""The shell text with what is never a command taken out, line numbers
    kept: comments, quoted strings (awk and sed programs, messages), all but
    the command substitutions inside them, so that "$(cmd ...)" shows as
    $(cmd ...). Continued lines join.

    >>> simplify_shell("# x\nawk '{ print }' f # y\necho \"a | b\"; d=\"$(dirname \"$0\")/..\"")
    '\nawk Q f \necho Q; d=Q$(dirname Q)Q'
    """
    text = re.sub(r"\\\n", "  ", text)
    out, stack, i = [], [], 0       # stack: '"' in a string, '(' in a $( )
    while i < len(text):
        c = text[i]
        top = stack[-1] if stack else None
        if top == '"':
            if c == "\\":
                i += 2
                continue
            if text.startswith("$((", i):
                j = text.find("))", i)
                i = len(text) if j < 0 else j + 2
                continue
            if text.startswith("$(", i):
                out.append("Q$(")
                stack.append("(")
                i += 2
                continue
            if c == '"':
                stack.pop()
                out.append("Q")
            elif c == "\n":
                out.append("\n")
            i += 1
            continue
        if text.startswith("${", i):
            j = text.find("}", i)           # a parameter, not a command
            j = len(text) - 1 if j < 0 else j
            out.append("Q")
            i = j + 1
            continue
        if text.startswith("$((", i):
            j = text.find("))", i)          # arithmetic, not a command
            j = len(text) - 2 if j < 0 else j
            out.append("Q")
            i = j + 2
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if c == "'":
            j = text.find("'", i + 1)
            j = len(text) - 1 if j < 0 else j
            out.append("Q" + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == '"':
            stack.append('"')
        elif text.startswith("$(", i):
            stack.append("(")
            out.append("$(")
            i += 2
            continue
        elif c == "(" and top == "(":
            stack.append("(")
            out.append(c)
        elif c == ")" and top == "(":
            stack.pop()
            out.append(c)
        else:
            out.append(c)
        i += 1
    return re.sub(r"Q+", "Q", "".join(out))


# ---- what a Python file runs and imports ----------------------------------------

def python_programs(text):
    """(program, line number) of each literal subprocess call.

    >>> src = 'subprocess.run(["nice", "-n", "10", "go", "build"], check=True)\\nsubprocess.run([f"llvm-cov{s}", "x"])'
    >>> python_programs(src)
    [('nice', 1), ('go', 1)]
    """
    out = []
    for m in SUBPROCESS_RE.finditer(text):
        lineno = text.count("\n", 0, m.start()) + 1
        lits = [(f, s[1:-1]) for f, s in LITERAL_RE.findall(m.group(1))]
        i = 0
        while i < len(lits):
            is_f, word = lits[i]
            if is_f and "{" in word:
                break               # built at run time: not seen
            out.append((word, lineno))
            if word not in WRAPPERS:
                break
            i += 1
            while i < len(lits) and (lits[i][1].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", lits[i][1])
                                     or re.fullmatch(r"x86_64|i[3-6]86", lits[i][1])):
                i += 1
    return out


SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}


def command_heads(node, params, assigned):
    """The parameters (of params) that may be the first word of the command
    the expression node builds: ["ip", ...] + rest has "ip" first, never
    rest; (["ip"] if ns else []) + [str(a) for a in argv] may have argv's.
    assigned: {local name: [expressions assigned to it]}. Returns (heads,
    whether node may be an empty list)."""
    if isinstance(node, ast.Name):
        if node.id in params:
            return {node.id}, False
        heads, empty = set(), not assigned.get(node.id)
        for value in assigned.pop(node.id, []):     # popped: no loops through x = x + ...
            h, e = command_heads(value, params, assigned)
            heads, empty = heads | h, empty or e
        return heads, empty
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            return set(), True
        first = node.elts[0]
        if isinstance(first, ast.Starred):
            return command_heads(first.value, params, assigned)
        if isinstance(first, ast.Constant):
            return set(), False
        return command_heads(first, params, assigned)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        heads, empty = command_heads(node.left, params, assigned)
        if empty:
            h, empty = command_heads(node.right, params, assigned)
            heads |= h
        return heads, empty
    if isinstance(node, ast.IfExp):
        h1, e1 = command_heads(node.body, params, assigned)
        h2, e2 = command_heads(node.orelse, params, assigned)
        return h1 | h2, e1 or e2
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return command_heads(node.generators[0].iter, params, assigned)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") \
            and node.args:
        return command_heads(node.args[0], params, assigned)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return command_heads(node.args[0], params, assigned)
    return set(), True      # an attribute, a call: may be empty, has no parameter of its own


def called_name(call):
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def runs_command(call, helpers):
    """The argument of call that is the command it runs: a subprocess
    call's first, or a known helper's (helpers: {name: (index, star)})."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "subprocess" \
            and f.attr in SUBPROCESS_CALLS:
        return call.args[0] if call.args else None
    name = called_name(call)
    if name in helpers:
        index, star = helpers[name]
        if star:
            return ast.List(elts=call.args[index:]) if len(call.args) > index else None
        return call.args[index] if len(call.args) > index else None
    return None


def find_helpers(trees):
    """{function name: (index of its command parameter, whether it is
    *args)} of the functions of trees that run what they are given,
    through subprocess or through one another."""
    helpers = {}
    funcs = [n for t in trees for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    changed = True
    while changed:
        changed = False
        for fn in funcs:
            if fn.name in helpers:
                continue
            positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if positional[:1] in (["self"], ["cls"]):
                positional = positional[1:]
            params = set(positional) | ({fn.args.vararg.arg} if fn.args.vararg else set())
            assigned = {}
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign):
                    for t in n.targets:
                        if isinstance(t, ast.Name):
                            assigned.setdefault(t.id, []).append(n.value)
            for n in ast.walk(fn):
                if not isinstance(n, ast.Call):
                    continue
                cmd = runs_command(n, helpers)
                if cmd is None:
                    continue
                heads, _ = command_heads(cmd, params, {k: list(v) for k, v in assigned.items()})
                if not heads:
                    continue
                head = sorted(heads)[0]
                if fn.args.vararg and head == fn.args.vararg.arg:
                    helpers[fn.name] = (len(positional), True)
                else:
                    helpers[fn.name] = (positional.index(head), False)
                changed = True
                break
    return helpers


def joined_paths(tree):
    """The in-tree scripts a Python file names as os.path.join(ROOT,
    "tools", "net", "netns.py"): the string parts joined, when they end in
    .py or .sh (it runs them with sys.executable or sh).

    >>> joined_paths(ast.parse('p = os.path.join(ROOT, "tools", "net", "netns.py")'))
    ['tools/net/netns.py']
    """
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and called_name(n) == "join":
            parts = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if parts and parts[-1].endswith((".py", ".sh")):
                out.append("/".join(parts))
    return out


def literal_words(node):
    """The leading string constants of a list expression (["nice", "-n",
    "5", x] gives the first three; ["go"] + rest gives "go")."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        node = node.left
    words = []
    for e in node.elts if isinstance(node, (ast.List, ast.Tuple)) else []:
        if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
            break
        words.append(e.value)
    return words


def helper_programs(trees, helpers):
    r"""(program, line number, tree index) of each call of a helper with
    the program written out.

    >>> t = ast.parse('def sh(*argv, ns=None):\n    cmd = (["ip", "netns", "exec", ns] if ns else []) + '
    ...               '[str(a) for a in argv]\n    return subprocess.run(cmd)\n'
    ...               'def go(*args):\n    subprocess.run(["go"] + list(args))\n'
    ...               'def run(cmd, t):\n    return sh(*cmd)\n'
    ...               'sh("sysctl", "-w", ns="x"); go("build"); netns.run(["nice", "-n", "5", "curl", "-s"], 5)')
    >>> h = find_helpers([t]); sorted(h.items())
    [('run', (0, False)), ('sh', (0, True))]
    >>> [p for p, _, _ in helper_programs([t], h)]
    ['sysctl', 'nice', 'curl']
    """
    out = []
    for i, tree in enumerate(trees):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and called_name(n) in helpers and \
                    not (isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                         and n.func.value.id == "subprocess"):
                cmd = runs_command(n, helpers)
                if cmd is not None:
                    out += [(w, n.lineno, i) for w in program_words(literal_words(cmd))]
    return out


def program_words(words):
    """The programs a command's leading words start: the first, and after
    a wrapper (nice -n 5, timeout 60) the next."""
    out, i = [], 0
    while i < len(words):
        out.append(words[i])
        if words[i] not in WRAPPERS:
            break
        i += 1
        while i < len(words) and (words[i].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", words[i])
                                  or re.fullmatch(r"x86_64|i[3-6]86", words[i])):
            i += 1
    return out


def python_imports(text):
    """The modules text imports, as dotted names (from X import a, b gives
    X, X.a and X.b: either may be the module), but those imported in a try:
    block (the caller does without them).

    >>> python_imports("import os, re\\ntry:\\n    import matplotlib\\nexcept ImportError:\\n    pass\\nfrom tools.run import qemu, soak  # x")
    ['os', 're', 'tools.run', 'tools.run.qemu', 'tools.run.soak']
    """
    names = []
    for m in IMPORT_RE.finditer(text):
        before = text[:m.start()].split("\n")[-4:-1]
        if any(l.strip() == "try:" for l in before):
            continue
        if m.group(1):
            names += [n.strip() for n in m.group(1).split(",")]
        else:
            names.append(m.group(2))
            names += [f"{m.group(2)}.{n.strip()}" for n in m.group(3).split("#")[0].split(",")
                      if n.strip() and n.split()[0] != "as"]
    return names


def in_tree_module(name, near):
    """The in-tree file of a dotted module name: a package path from the
    top (tools.run.qemu), or a plain name beside the importer or where the
    tests put their sys.path (tests/, tests/fuzz/)."""
    parts = name.split(".")
    dirs = [ROOT] if len(parts) > 1 else [near, os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "fuzz")]
    for d in dirs:
        p = os.path.join(d, *parts)
        if os.path.isfile(p + ".py"):
            return p + ".py"
        if os.path.isfile(os.path.join(p, "__init__.py")):
            return os.path.join(p, "__init__.py")
    return None


STDLIB = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | {"__future__"}


# ---- one target -------------------------------------------------------------------

class Scan:
    """What one target runs: programs with where they are run from."""

    def __init__(self):
        self.uses = []          # (program, where)
        self.seen = set()
        self.trees = []         # (Python file's path in the tree, its ast, programs looked up first)

    def file(self, path):
        path = os.path.realpath(path)
        if path in self.seen or not path.startswith(ROOT + os.sep) or not os.path.isfile(path):
            return
        self.seen.add(path)
        rel = os.path.relpath(path, ROOT)
        try:
            text = open(path, errors="replace").read()
        except OSError:
            return
        if path.endswith(".py"):
            # a program looked up first (shutil.which("perf")) is optional
            optional = set(re.findall(r"shutil\.which\(\s*[\"']([^\"']+)[\"']", text))
            for prog, line in python_programs(text):
                if prog not in optional:
                    self.use(prog, f"{rel}:{line}")
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                tree = None
            if tree:
                self.trees.append((rel, tree, optional))
                for named in joined_paths(tree):
                    self.file(os.path.join(ROOT, named))
            for name in python_imports(text):
                # "from netcheck import run_checks" names netcheck.run_checks:
                # the module is its first part, beside the importer.
                first = name.split(".")[0]
                mod = in_tree_module(name, os.path.dirname(path)) or in_tree_module(first, os.path.dirname(path))
                if mod:
                    self.file(mod)
                elif first not in STDLIB and not in_tree_module(first, ROOT):
                    self.uses.append((f"py:{name.split('.')[0]}", rel))
        elif path.endswith(".sh") or text.startswith("#!/bin/sh"):
            for prog, line in shell_programs(text):
                self.use(prog, f"{rel}:{line + 1}")
            self.named_files(simplify_shell(text))

    def helpers(self):
        """The programs run through helper functions, once every file is
        read (a helper and its callers may be in different files)."""
        trees = [t for _, t, _ in self.trees]
        for prog, line, i in helper_programs(trees, find_helpers(trees)):
            rel, _, optional = self.trees[i]
            if prog not in optional:
                self.use(prog, f"{rel}:{line}")

    def use(self, prog, where):
        p = prog.strip("'\"")
        if "/" in p:
            full = p if os.path.isabs(p) else os.path.join(ROOT, p)
            if os.path.realpath(full).startswith(ROOT + os.sep) or "$" in p or p.startswith(("/tmp/", "./")):
                self.file(full)
                return
            p = os.path.basename(p)
        self.uses.append((p, where))

    def named_files(self, text):
        """In-tree scripts a piece of text names (run as "sh tools/x.sh",
        "python3 tests/y.py", or a path written in a wrapper script)."""
        for m in re.finditer(r"[\w./-]*?((?:tools|tests|\.ci)/[\w./-]+\.(?:py|sh))", text):
            self.file(os.path.join(ROOT, m.group(1)))

    def make(self, target, variables=()):
        with tempfile.TemporaryDirectory(prefix="goro-check-deps-") as d:
            env = {k: v for k, v in os.environ.items()
                   if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "BUILD")}
            # One job at a time: under -j two sub-makes print at once, and a
            # line longer than PIPE_BUF (a link's) can be split by the other's
            # when the reader is slow, so that its middle reads as a command.
            p = subprocess.run(["make", "-n", "-B", "-C", ROOT, f"BUILD={d}/b", "BUILD_JOBS=-j1",
                                *variables, target],
                               capture_output=True, text=True, env=env, timeout=300)
        if p.returncode:
            raise RuntimeError(f"make -n {target} failed: {p.stderr.strip()[-300:]}")
        text = p.stdout
        for prog, line in shell_programs(text):
            self.use(prog, f"make {target} (its commands)")
        self.named_files(text)


# Targets that run more under a variable: make run NET=tap runs
# tools/net/netns.py as well.
VARIANTS = {"run": [(), ("NET=tap",)]}


def problems_of(target, rows):
    scan = Scan()
    for variables in VARIANTS.get(target, [()]):
        scan.make(target, variables)
    scan.helpers()
    return missing(scan, target, rows)


def missing(scan, target, rows):
    have = provided(rows, target)
    out, said = [], set()
    for prog, where in scan.uses:
        if prog in have or prog in said:
            continue
        said.add(prog)
        what = f"imports {prog[3:]}" if prog.startswith("py:") else f"runs {prog}"
        out.append(f"make {target} {what} ({where}), which tools/deps.list does not give {target}")
    return out


# A helper in one module, as netns.py's sh(), and its callers in another.
FAKE_HELPER = """import subprocess
def sh(*argv, ns=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in argv]
    return subprocess.run(cmd).returncode
def go(*args):
    return sh("go", *args)
"""
FAKE_CALLER = """import fakehelper
fakehelper.sh("frobnicate-helper", "-w", ns="x")
fakehelper.go("version")
"""
# A shell function that runs its arguments after its own ("$@", shifted),
# as tools/run/test_fresh.sh's step does.
FAKE_SHELL = """#!/bin/sh
step() {
	name=$1
	shift
	nice -n 5 "$@" > "/tmp/$name.log" 2>&1
}
step one frobnicate-shell --flag
"""


def self_test(rows):
    """The check finds a program the list lacks: [problem] for each of a
    script that runs one, a script that runs one through a helper of
    another module (where the helper's own program, go, is listed), and a
    shell script that runs one through a function running "$@"."""
    with tempfile.TemporaryDirectory(prefix="goro-check-deps-", dir=os.path.join(ROOT, "tests")) as d:
        py = os.path.join(d, "fake.py")
        with open(py, "w") as f:
            # (split, so that this file's own scan does not see the call)
            f.write("import subprocess\nsubprocess" + '.run(["frobnicate-goro", "x"])\n'
                    "subprocess" + '.run(["timeout", "5", "go", "version"])\n')
        for name, text in (("fakehelper.py", FAKE_HELPER), ("fakecaller.py", FAKE_CALLER),
                           ("fakeshell.sh", FAKE_SHELL)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        found = []
        for script, prog in (("fake.py", "frobnicate-goro"), ("fakecaller.py", "frobnicate-helper"),
                             ("fakeshell.sh", "frobnicate-shell")):
            scan = Scan()
            scan.file(os.path.join(d, script))
            scan.helpers()
            got = missing(scan, "test", rows)
            found.append([] if len(got) == 1 and f"runs {prog} " in got[0] else
                         [f"a script running {prog} (beside listed programs) gave {got}, not one problem naming {prog}"])
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", help="only this target (repeatable)")
    ap.add_argument("--tests", action="store_true", help="PASS/FAIL lines, one per target")
    args = ap.parse_args()
    rows = read_list()
    targets = args.target or list_targets(rows)
    failed = 0
    if args.tests:
        for name, probs in zip(("finds_an_unlisted_program", "finds_an_unlisted_program_run_through_a_helper",
                                "finds_an_unlisted_program_run_by_a_shell_function"), self_test(rows)):
            print(f"PASS {name}" if not probs else f"FAIL {name}: {probs[0]}")
            failed += bool(probs)
    for t in targets:
        try:
            probs = problems_of(t, rows)
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            probs = [f"cannot scan make {t}: {e}"]
        if args.tests:
            name = f"make_{t}_runs_only_listed_programs"
            print(f"PASS {name}" if not probs else f"FAIL {name}: {probs[0]}" +
                  (f" (and {len(probs) - 1} more)" if len(probs) > 1 else ""))
            for p in probs[1:]:
                print(f"    {p}")
        else:
            for p in probs:
                print(f"check-deps: {p}")
        failed += bool(probs)
    if not args.tests and not failed:
        print(f"check-deps: every program make {', '.join(targets)} run is in tools/deps.list")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
