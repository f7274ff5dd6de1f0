"""The lint of a student's folder, as `lab.py lint` runs it and as a student kit's own lint.py
runs it (lab.py make ships this module, labs.py, intake.py and lint.py into the kit, with the
lab's entry of labs.json: nothing else of the course)."""
import textwrap

from . import intake, lint
from .labs import EXIT_LOST, EXIT_OK, LabError, region_body


def lint_folder(folder, labs, only_present=False, course=None, ahead=None):
    """(problems, regions read, [the regions that still hold their skeleton's TODO]). With the
    course's repository (COURSE), the grader's whole check: every region is also read on clang's
    tree in the course's copy of its program (region_ast.MissingClang without libclang); ahead,
    if given, is handed every region first (program, body, first line, spec, name), to parse
    them side by side. Without it (a student kit), the token rules alone: the grader still
    applies the tree's whitelist."""
    problems, regions, todo = [], [], []
    for lab in labs:
        taken = intake.take(folder, lab)
        if only_present and all(t[0] is None for t in taken.values()):
            continue
        for task in lab["tasks"]:
            text, why, shown = taken[task["file"]]
            if text is None:
                problems.append(f"{why}")
                continue
            for name, spec in task["regions"].items():
                try:
                    body, first = region_body(text, name, shown)
                except LabError as e:
                    problems.append(str(e))
                    continue
                if any(f"TODO(lab {task['id']})" in line for line in body):
                    todo.append(name)
                program = course / lab["folder"] / task["file"] if course is not None else None
                regions.append((program, body, first, spec, name, shown))
    if course is not None and ahead is not None:
        ahead([r[:5] for r in regions])
    for program, body, first, spec, name, shown in regions:
        if course is not None:
            problems += lint.check_region(body, first, spec, shown, name, program)
        else:
            problems += lint.lint_region(body, first, spec, shown, name)
    return list(dict.fromkeys(problems)), len(regions), todo


def report(problems, seen, todo, command="lab.py lint"):
    """Prints the result; returns the exit code (0: no violation, 1: violations or no region)."""
    for p in problems:
        print(p)
    if not problems:
        print(f"{command}: {seen} regions, no violation")
    if todo:
        print(textwrap.fill(f"{command}: {len(todo)} of the {seen} regions still hold the "
                            f"skeleton's TODO (nothing written there yet): {', '.join(todo)}",
                            100, subsequent_indent="    ", break_on_hyphens=False))
    return EXIT_OK if not problems and seen else EXIT_LOST
