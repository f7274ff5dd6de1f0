#!/usr/bin/env python3
"""programs.json, the one list of the programs, and what is made from it.

    python3 scripts/manifest.py index    rewrites the table of docs/README.md from programs.json
    python3 scripts/manifest.py check    exits 1 when programs.json, the CMake files, the
                                         sources and the docs disagree (a ctest runs this)

The tour (scripts/tour.py) reads programs.json for what to run; CMake reads it for each
program's --help and bad-flag tests (tests/CMakeLists.txt).
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- programs.json: begin (scripts/manifest.py index writes this table) -->"
END = "<!-- programs.json: end -->"


def load():
    with open(os.path.join(ROOT, "programs.json")) as f:
        return json.load(f)


def index_table(manifest):
    rows = ["| chapter | handout | programs | key ideas |", "| --- | --- | --- | --- |"]
    for c in manifest["chapters"]:
        names = ", ".join(p["name"] for p in manifest["programs"] if p["chapter"] == c["chapter"])
        link = os.path.relpath(os.path.join(ROOT, c["handout"]), os.path.join(ROOT, "docs"))
        rows.append(f"| {c['chapter']} | [{c['title']}]({link}) | {names} | {c['ideas']} |")
    return "\n".join(rows)


def docs_index_text(manifest):
    path = os.path.join(ROOT, "docs", "README.md")
    text = open(path).read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"manifest.py: {path} has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return path, text, head + BEGIN + "\n" + index_table(manifest) + "\n" + END + tail


def check(manifest):
    problems = []
    folders = {c["chapter"]: c["folder"] for c in manifest["chapters"]}
    listed = set()
    for p in manifest["programs"]:
        name, folder = p["name"], folders.get(p["chapter"])
        listed.add(name)
        if folder is None:
            problems.append(f"{name}: chapter {p['chapter']} is not in the chapters list")
            continue
        if not any(os.path.exists(os.path.join(ROOT, folder, name + e)) for e in (".cu", ".cpp")):
            problems.append(f"{name}: no {folder}/{name}.cu or .cpp")
        if not p.get("runs"):
            problems.append(f"{name}: no runs (the tour would never run it)")
        handout = next(c["handout"] for c in manifest["chapters"] if c["chapter"] == p["chapter"])
        if name not in open(os.path.join(ROOT, handout)).read():
            problems.append(f"{name}: its handout {handout} never names it")
    for c in manifest["chapters"]:
        cmake = os.path.join(ROOT, c["folder"], "CMakeLists.txt")
        for built in re.findall(r"^\s*add_example\((\S+)", open(cmake).read(), re.M):
            if built not in listed:
                problems.append(f"{built}: built by {c['folder']}/CMakeLists.txt, not in programs.json")
    path, text, wanted = docs_index_text(manifest)
    if text != wanted:
        problems.append("docs/README.md: its table differs from programs.json "
                        "(run python3 scripts/manifest.py index)")
    for problem in problems:
        print(f"manifest.py: {problem}")
    if not problems:
        print(f"manifest.py: programs.json, the CMake files, the sources and the docs agree "
              f"({len(listed)} programs)")
    return 1 if problems else 0


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("index", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    manifest = load()
    if sys.argv[1] == "check":
        return check(manifest)
    path, text, wanted = docs_index_text(manifest)
    if text != wanted:
        open(path, "w").write(wanted)
        print(f"manifest.py: rewrote the table of {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
