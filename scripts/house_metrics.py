#!/usr/bin/env python3
"""Prints the shape of troupe's library folders from their #include lines.

For each library folder: lines of code, the deepest chain of troupe includes
inside it, the headers it includes most, and the includes that run back up
(from a concern to one declared above it in CONCERNS). Also counts the
message types CAF cannot print (CAF_ALLOW_UNSAFE_MESSAGE_TYPE) and the typed
actor interfaces (caf::typed_actor).

  scripts/house_metrics.py [ROOT] [--layout-from DIR]

--layout-from measures an older tree (ROOT) with the concerns of the files
in DIR, matched by file name: how a flat folder measures against the layout
that replaced it.
"""
import argparse
import collections
import os
import re
import sys

# The library folders, lowest first: each may include only those before it.
FOLDERS = ["core", "ops", "net", "datasets", "collectives", "actors", "strategies"]
# The concerns inside a folder, lowest first (sub-folder names; "" is a file
# directly in the folder). An include from a concern to a later one runs back up.
CONCERNS = {
    "actors": ["", "fibers", "runtime", "gpu", "replicas", "ps", "modes"],
}
SOURCE_EXTENSIONS = (".hpp", ".cpp", ".cu", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def library_files(root):
    files = []
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith(SOURCE_EXTENSIONS):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(files)


def concern_of(path):
    """The sub-folder of a file inside its library folder ('' when none)."""
    parts = path.split("/")
    folder = parts[0]
    rest = parts[1:]
    if rest[:2] == ["troupe", folder]:
        rest = rest[2:]
    elif rest[:1] == ["src"]:
        rest = rest[1:]
    return rest[0] if len(rest) > 1 else ""


def includes_of(root, path, known):
    edges = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for line in f:
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            if kind == "<" and target.startswith("troupe/"):
                folder = target.split("/")[1]
                resolved = os.path.join(folder, target)
            elif kind == '"':
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
            else:
                continue
            if resolved in known:
                edges.append(resolved)
    return edges


def longest_chain(nodes, graph):
    """Files in the longest include chain inside `nodes` (a DAG)."""
    memo = {}

    def depth(n, active):
        if n in memo:
            return memo[n]
        if n in active:  # a cycle: count it once
            return 0
        active.add(n)
        best = 1 + max((depth(m, active) for m in graph[n] if m in nodes), default=0)
        active.discard(n)
        memo[n] = best
        return best

    return max((depth(n, set()) for n in nodes), default=0)


def line_count(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--layout-from", help="take each file's concern from this tree, by file name")
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    files = library_files(root)
    known = set(files)
    graph = {f: includes_of(root, f, known) for f in files}
    concern = {f: concern_of(f) for f in files}
    if args.layout_from:
        by_name = {}
        for f in library_files(os.path.abspath(args.layout_from)):
            by_name[(f.split("/")[0], os.path.basename(f))] = concern_of(f)
        for f in files:
            concern[f] = by_name.get((f.split("/")[0], os.path.basename(f)), concern[f])

    print(f"house metrics of {root}")
    print(f"{'folder':<12} {'files':>5} {'lines':>6} {'depth':>5} {'back-up':>7}  most included (by files in the folder)")
    back_edges = []
    for folder in FOLDERS:
        nodes = {f for f in files if f.startswith(folder + "/")}
        lines = sum(line_count(root, f) for f in nodes)
        order = CONCERNS.get(folder)
        backs = []
        if order:
            rank = {c: i for i, c in enumerate(order)}
            for f in sorted(nodes):
                for g in graph[f]:
                    if g in nodes and rank.get(concern[g], 0) > rank.get(concern[f], 0):
                        backs.append((f, g))
        back_edges += backs
        fan_in = collections.Counter(g for f in nodes for g in graph[f] if g in nodes and g != f)
        top = ", ".join(f"{os.path.basename(h)} {n}" for h, n in fan_in.most_common(3))
        back = str(len(backs)) if order else "-"
        print(f"{folder:<12} {len(nodes):>5} {lines:>6} {longest_chain(nodes, graph):>5} {back:>7}  {top}")

    for folder, order in CONCERNS.items():
        print(f"\n{folder}/ by concern (lowest first):")
        for c in order:
            members = [f for f in files if f.startswith(folder + "/") and concern[f] == c]
            if members:
                lines = sum(line_count(root, f) for f in members)
                print(f"  {c or '(top)':<10} {len(members):>3} files {lines:>6} lines")
    if back_edges:
        print("\nincludes that run back up:")
        for f, g in back_edges:
            print(f"  {f} [{concern[f] or '(top)'}] -> {g} [{concern[g] or '(top)'}]")

    print("\nlargest library sources:")
    sizes = sorted(((line_count(root, f), f) for f in files if not f.endswith((".hpp", ".h"))), reverse=True)
    for n, f in sizes[:8]:
        print(f"  {n:>5} {f}")

    unsafe = typed = 0
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        for name in names:
            if name.endswith(SOURCE_EXTENSIONS):
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                unsafe += len(re.findall(r"^\s*CAF_ALLOW_UNSAFE_MESSAGE_TYPE\(", text, re.M))
                # An extended handle (SimLinkActorHandle = DataPlaneHandle::extend<...>) is one more.
                typed += len(re.findall(r"=\s*(?:caf::typed_actor|\w+Handle::extend)\s*<", text))
    print(f"\nCAF_ALLOW_UNSAFE_MESSAGE_TYPE: {unsafe}")
    print(f"typed actor interfaces (using X = caf::typed_actor<...> or Y::extend<...>): {typed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
