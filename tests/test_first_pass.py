#!/usr/bin/env python3
"""scripts/test.sh's first pass leaves out exactly the tests of its second pass, those labelled
lesson (ctest: passes.first_pass), and keeps the lab self-tests (lab.neighbours, whose attacker
takes the GPU's memory from whatever runs beside it, is labelled lesson). ctest ignores -LE where the test
preset has an exclude label of its own, so test.sh excludes them by name (test_summary.py
--second-pass-regex): in this build folder, the tests that regex leaves are every test but those,
and none of those; the lab self-tests are among them.
And the two tiers split the tests between them: the label filters of CMakePresets.json's test
presets, applied to this build folder, give command 2 (presets default, ci, gpu) every test but
the sanitizer runs and the planted bugs, and scripts/test.sh --planted-bugs (presets
*planted-bugs) exactly the planted bugs and the counters checks (labels mutant, counters), and
both at least one test.
Within the planted bugs' tier, scripts/test.sh runs each test once, in one of three places: the
counters checks beside the build (-L counters -LE mutant), the side-by-side pass (every test not
labelled lesson), the second pass (label lesson, less the counters checks, by the regex test.sh
gives ctest's -E, read from test.sh itself).
    python3 tests/test_first_pass.py BUILD_DIR"""
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import test_summary  # noqa: E402


def names(build, *args):
    out = subprocess.run(["ctest", "--test-dir", build, "-N", "--show-only=json-v1", *args],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return {t["name"] for t in json.loads(out).get("tests", [])}


def main():
    build = str(Path(sys.argv[1]).resolve())
    everything = names(build)
    lessons, labs = names(build, "-L", "lesson"), names(build, "-L", "^lab$")
    second = lessons
    regex = test_summary.second_pass_regex(["--test-dir", build])
    first = names(build, "-E", regex)
    if not lessons or not labs or not regex:
        print(f"FAILED: no lesson or no lab tests found in {build} (regex {regex!r})")
        return 1
    # The lab self-tests run beside everything else (their gates are built for a busy GPU);
    # lab.neighbours, whose attacker takes the GPU's memory, is labelled lesson: the second pass.
    selftests = {n for n in labs if n.startswith("lab.selftest.")}
    wrong = (first & second) | ((everything - second) - first) | (selftests - first)
    if not selftests:
        print(f"FAILED: no lab self-test found in {build}")
        return 1
    print(f"{len(everything)} tests, {len(lessons)} labelled lesson and {len(labs)} lab, "
          f"{len(first)} in the first pass")
    if wrong:
        print("FAILED: the first pass gets these wrong:", ", ".join(sorted(wrong)[:10]))
        return 1
    return tiers(build, everything)


def tiers(build, everything):
    presets = {p["name"]: p for p in json.loads(
        (Path(__file__).resolve().parent.parent / "CMakePresets.json").read_text())["testPresets"]}

    def label_filter(name, kind):
        while name:  # "inherits", as CMake follows it (one parent here)
            value = presets[name].get("filter", {}).get(kind, {}).get("label")
            if value:
                return value
            name = presets[name].get("inherits")
        return None
    mutants, sanitize = names(build, "-L", "^(mutant|counters)$"), names(build, "-L", "sanitize")
    # The CPU tests that need Debian packages (Chromium, Slurm): CI's machine without a GPU runs
    # them; the gpu preset leaves them out (a GPU runner has no registry), and only it.
    packages = names(build, "-L", "^packages$")
    status = 0
    for name in ("default", "ci", "gpu", "planted-bugs", "ci-planted-bugs", "gpu-planted-bugs"):
        args = []
        for kind, flag in (("include", "-L"), ("exclude", "-LE")):
            value = label_filter(name, kind)
            if value:
                args += [flag, value]
        got = names(build, *args)
        want = mutants if "planted-bugs" in name else everything - mutants - sanitize
        if name == "gpu":
            want = want - packages
        if got != want or not got:
            print(f"FAILED: test preset {name} ({' '.join(args)}) selects {len(got)} tests, not "
                  f"the {len(want)} of its tier; e.g. {sorted(got ^ want)[:3]}")
            status = 1
    if status == 0:
        print(f"the tiers: command 2 {len(everything - mutants - sanitize)} tests, the planted bugs and "
              f"the counters checks "
              f"{len(mutants)}, the sanitizer runs {len(sanitize)}")
    return status or planted_passes(build, mutants)


def planted_passes(build, planted):
    script = (Path(__file__).resolve().parent.parent / "scripts" / "test.sh").read_text()
    hit = re.search(r"counted=\(-E '([^']+)'\)", script)
    if not hit:
        print("FAILED: scripts/test.sh gives its second pass no -E for the counters checks")
        return 1
    early = names(build, "-L", "counters", "-LE", "mutant")
    lessons = names(build, "-L", "lesson")
    second = names(build, "-L", "lesson", "-E", hit.group(1)) & planted
    side = planted - lessons
    places = {"beside the build": early, "side by side": side, "second pass": second}
    twice = {n for a in places for b in places if a < b for n in places[a] & places[b]}
    missing = planted - early - side - second
    stray = (early | second) - planted
    print(f"the planted bugs' tier: {len(early)} counters checks beside the build, {len(side)} side "
          f"by side, {len(second)} in the second pass")
    if twice or missing or stray or not early or not second:
        print(f"FAILED: twice {sorted(twice)[:3]}, never {sorted(missing)[:3]}, not of the tier "
              f"{sorted(stray)[:3]}" + ("" if early and second else ", or an empty place"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
