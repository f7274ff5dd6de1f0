#!/usr/bin/env python3
"""How well the programs read like the book: the measures of issue 11, from the source.

    python3 tools/style_metrics.py          a table, one row per program, then the targets

For every program of programs.json: the lines of main(), how many of them report (timing
printouts, JSON, the verdict), and the names from common/ a student meets in the program's
file (macros, types and free functions; methods not counted). Then: the changed lines of
`diff ray_noconst.cu ray.cu`, the lines of streams.cu, and the C++/CUDA lines over 100
columns. The names in the chapter's own headers are counted on a second line for ch02.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A reporting line: a measurement or figure reported, JSON, the verdict, or a printout.
REPORTING = re.compile(r"\breport\.(size|launch|note|bandwidth|compute|record|extra|verdict)\b|"
                       r"\bprint_(json|timing)\b|\bJsonRecord\b|\bmeasurement\w*\(|"
                       r"(?<![\.\w])verdict\(|\bprintf\b")


def strip_comments_and_strings(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def common_names():
    """Macros, types, free functions and constants that common/ defines."""
    names = set()
    for f in sorted(os.listdir(os.path.join(ROOT, "common"))):
        if not f.endswith(".h"):
            continue
        depth = 0
        for line in open(os.path.join(ROOT, "common", f)):
            code = strip_comments_and_strings(line)
            if depth == 0:
                m = re.match(r"\s*#define\s+(\w+)", code)
                if m:
                    names.add(m.group(1))
                m = re.match(r"\s*(?:class|struct)\s+(\w+)", code)
                if m:
                    names.add(m.group(1))
                m = re.match(r"\s*(?:inline\s+|static\s+|constexpr\s+|\[\[noreturn\]\]\s+)*"
                             r"[\w:<>,\s\*&]+?[\s\*&](\w+)\s*\(", code)
                if m and m.group(1) not in ("if", "for", "while", "return", "switch"):
                    names.add(m.group(1))
                m = re.match(r"\s*(?:const|constexpr)\s+\w+\s+(\w+)\s*=", code)
                if m:
                    names.add(m.group(1))
                m = re.match(r"\s*typedef\s+.*\s(\w+)\s*;", code)
                if m:
                    names.add(m.group(1))
            depth += code.count("{") - code.count("}")
    return names


def main_body(text):
    """The lines of main(): from `int main(` to its closing brace."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"int main\(", line):
            depth, j = 0, i
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                if depth == 0 and "}" in lines[j] and j > i:
                    return lines[i:j + 1]
                j += 1
    return []


def program_source(folder, name):
    for ext in (".cu", ".cpp"):
        path = os.path.join(ROOT, folder, name + ext)
        if os.path.exists(path):
            return path
    return None


def uses(text, names):
    code = strip_comments_and_strings(text)
    found = set(re.findall(r"(?<![\.\w>])(\w+)", code))  # not after . or -> (methods)
    return sorted(found & names)


def local_headers(path):
    text = open(path).read()
    folder = os.path.dirname(path)
    return [os.path.join(folder, h) for h in re.findall(r'#include "([^"./][^"]*)"', text)
            if os.path.exists(os.path.join(folder, h))]


def main():
    manifest = json.load(open(os.path.join(ROOT, "programs.json")))
    folders = {c["chapter"]: c["folder"] for c in manifest["chapters"]}
    names = common_names()
    print(f"{'program':18} {'main':>5} {'report':>6} {'common names':>12}  names")
    longest = (0, "")
    for p in manifest["programs"]:
        path = program_source(folders[p["chapter"]], p["name"])
        if not path:
            continue
        text = open(path).read()
        body = main_body(text)
        reporting = sum(1 for line in body if REPORTING.search(strip_comments_and_strings(line)))
        met = uses(text, names)
        print(f"{p['name']:18} {len(body):5} {reporting:6} {len(met):12}  {' '.join(met)}")
        if p["name"] != "streams" and len(body) > longest[0]:
            longest = (len(body), p["name"])
        if p["chapter"] == 2:
            extra = set()
            for h in local_headers(path):
                extra |= set(uses(open(h).read(), names))
            both = sorted(set(met) | extra)
            print(f"{'  + its headers':18} {'':5} {'':6} {len(both):12}  {' '.join(both)}")
    ray = subprocess.run(["diff", os.path.join(ROOT, "ch05_raytrace", "ray_noconst.cu"),
                          os.path.join(ROOT, "ch05_raytrace", "ray.cu")],
                         stdout=subprocess.PIPE, text=True).stdout
    changed = sum(1 for line in ray.split("\n") if line[:1] in "<>" and line)
    streams = len(open(os.path.join(ROOT, "ch06_streams", "streams.cu")).read().rstrip("\n")
                  .split("\n"))
    files = subprocess.run(["git", "ls-files", "*.cu", "*.cuh", "*.h", "*.cpp"], cwd=ROOT,
                           stdout=subprocess.PIPE, text=True).stdout.split()
    wide = [(f, i + 1) for f in files if os.path.exists(os.path.join(ROOT, f))
            for i, line in enumerate(open(os.path.join(ROOT, f), errors="replace"))
            if len(line.rstrip("\n")) > 100]
    print()
    print(f"longest main (streams excluded): {longest[0]} lines ({longest[1]})")
    print(f"diff ray_noconst.cu ray.cu: {changed} changed lines")
    print(f"streams.cu: {streams} lines")
    print(f"C++/CUDA lines over 100 columns: {len(wide)}")
    for f, i in wide[:10]:
        print(f"  {f}:{i}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
