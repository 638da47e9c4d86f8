#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Folded stacks -> a flame graph PNG, drawn with matplotlib.

`flamegraph.py cpu.folded -o cpu.png [--title T]` reads the folded stacks
tools/trace/profile2pprof.py writes ("root;caller;...;leaf count" per line) and
draws the classic flame graph: one box per frame, its width the share of
samples under it, callers below callees, siblings sorted by name. Frames
narrower than --min-width (a fraction of the total) are left out.

Needs matplotlib (Debian's python3-matplotlib).
"""
import argparse
import hashlib
import sys


def build(lines):
    """A tree {name: [count, children]} and the total count."""
    root = [0, {}]
    for line in lines:
        line = line.strip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        n = int(count)
        root[0] += n
        node = root
        for frame in stack.split(";"):
            node = node[1].setdefault(frame, [0, {}])
            node[0] += n
    return root


def color(name):
    """A warm colour fixed by the name (the flame palette)."""
    h = int(hashlib.md5(name.encode()).hexdigest()[:6], 16)
    return (0.85 + 0.15 * ((h & 0xFF) / 255), 0.35 + 0.45 * (((h >> 8) & 0xFF) / 255),
            0.1 + 0.2 * (((h >> 16) & 0xFF) / 255))


def draw(root, out, title, min_width):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    total = root[0] or 1
    boxes = []                      # (x, depth, width, name, count)

    def walk(node, x, depth):
        for name in sorted(node[1]):
            child = node[1][name]
            w = child[0] / total
            if w >= min_width:
                boxes.append((x, depth, w, name, child[0]))
                walk(child, x, depth + 1)
            x += w

    walk(root, 0.0, 0)
    depth = 1 + max((b[1] for b in boxes), default=0)
    fig, ax = plt.subplots(figsize=(16, 0.32 * depth + 1.2), dpi=100)
    for x, d, w, name, count in boxes:
        ax.add_patch(plt.Rectangle((x, d), w, 0.95, facecolor=color(name), edgecolor="white",
                                   linewidth=0.4))
        chars = int(w * 16 * 100 / 7)       # about 7 pixels per character at this size
        if chars >= 4:
            label = name if len(name) <= chars else name[:chars - 2] + ".."
            ax.text(x + 0.002, d + 0.45, label, fontsize=8, va="center", ha="left",
                    family="monospace", clip_on=True)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, depth)
    ax.set_yticks([])
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1])
    ax.set_xticklabels(["0", "25%", "50%", "75%", f"100% ({root[0]} samples)"])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folded", help="folded stacks (tools/trace/profile2pprof.py --folded)")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--title", default="goro CPU profile")
    ap.add_argument("--min-width", type=float, default=0.002)
    args = ap.parse_args()
    with open(args.folded) as f:
        root = build(f)
    try:
        draw(root, args.output, args.title, args.min_width)
    except ImportError:
        sys.exit("flamegraph.py: matplotlib is missing (apt-get install python3-matplotlib)")
    print(f"flamegraph: {root[0]} samples -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
