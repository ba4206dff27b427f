#!/usr/bin/env python3
"""Fails when two classes or structs of the production code share one name
in one namespace: a program that links both has two definitions of one
type, and whichever inline member the linker keeps runs on the other's
layout (gc_report, once retention_report beside persistence's, crashed
`epochrt ckpt gc` in its destructor). Types in anonymous namespaces and
nested types are each file's own and are left out.

    unique_type_names.py SOURCE_DIR
"""

import pathlib
import re
import sys

FOLDERS = ["messages", "faults", "runtime", "persistence", "actors", "tools",
           "python"]
OPEN = re.compile(r"^namespace\s*([\w:]*)\s*\{")
CLOSE = re.compile(r"^\}\s*//\s*namespace")
TYPE = re.compile(r"^(?:struct|class)\s+(\w+)\s*(?:final\s*)?(?:\{|:(?!:))")


def definitions(path):
    """(namespace, name) of each type defined at namespace scope."""
    stack = []
    for line in path.read_text(errors="replace").splitlines():
        opened = OPEN.match(line)
        if opened:
            stack.append(opened.group(1))
            continue
        if CLOSE.match(line):
            if stack:
                stack.pop()
            continue
        found = TYPE.match(line)
        if found and stack and "" not in stack:
            yield "::".join(stack), found.group(1)


def main(source_dir):
    root = pathlib.Path(source_dir)
    seen = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".hpp", ".cpp"):
                for key in definitions(path):
                    seen.setdefault(key, []).append(
                        str(path.relative_to(root)))
    clashes = {k: v for k, v in seen.items() if len(set(v)) > 1}
    for (namespace, name), files in sorted(clashes.items()):
        print("%s::%s is defined in %s" % (namespace, name,
                                          ", ".join(sorted(set(files)))))
    if len(seen) < 100:
        print("only %d types found: the scan is broken" % len(seen))
        return 1
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
