"""The labs (labs/labs.json) and the LAB markers: skeletons, splicing, solution lines."""
import json
import re
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXIT_OK, EXIT_LOST, EXIT_USAGE, EXIT_CANNOT = 0, 1, 2, 77
OPEN = re.compile(r"^(\s*)// LAB (\S+) \{\s*$")
CLOSE = re.compile(r"^\s*// LAB \}\s*$")
TOOLS = ("memcheck", "racecheck", "synccheck")


def kit_info(repo=REPO):
    """The grading kit's kit.json (lab.py kit), or None in the course repository."""
    path = Path(repo) / "kit.json"
    return json.loads(path.read_text()) if path.exists() else None


def file_task(lab, task):
    """In a grading kit the programs are skeletons: a task is spliced together with the
    student's other regions of the same file (the kit has no reference for them)."""
    regions_ = {n: s for t in lab["tasks"] if t["file"] == task["file"] for n, s in t["regions"].items()}
    return dict(task, regions=regions_)


class LabError(Exception):
    """A lab definition, a marker or a student's file that the grader cannot use."""


def load_labs(repo=REPO):
    return json.loads((Path(repo) / "labs" / "labs.json").read_text())


def find_lab(chapter):
    data = load_labs()
    for lab in data["labs"]:
        if chapter in (lab["chapter"], lab["folder"]):
            return lab, data.get("selftest", {}).get(lab["chapter"], {})
    names = ", ".join(lab["chapter"] for lab in data["labs"])
    raise LabError(f"no lab {chapter!r} (the labs: {names})")


def regions(text, where):
    """{name: (open line index, close line index, indent)} of a file's LAB blocks."""
    found, current = {}, None
    for i, line in enumerate(text.split("\n")):
        m = OPEN.match(line)
        if m:
            if current:
                raise LabError(f"{where}:{i + 1}: LAB {m.group(2)} opens inside LAB {current[0]}")
            current = (m.group(2), i, m.group(1))
        elif CLOSE.match(line):
            if not current:
                raise LabError(f"{where}:{i + 1}: '// LAB }}' closes nothing")
            if current[0] in found:
                raise LabError(f"{where}: LAB {current[0]} appears twice")
            found[current[0]] = (current[1], i, current[2])
            current = None
    if current:
        raise LabError(f"{where}: LAB {current[0]} is never closed ('// LAB }}')")
    return found


def region_body(text, name, where):
    r = regions(text, where)
    if name not in r:
        raise LabError(f"{where}: the markers of LAB {name} are missing: restore the lines "
                       f"'// LAB {name} {{' and '// LAB }}' around your code for this task")
    first, last, _ = r[name]
    return text.split("\n")[first + 1:last], first + 2  # the lines, and the first's number


def task_of_region(lab):
    return {name: task for task in lab["tasks"] for name in task["regions"]}


def skeleton(text, lab, filename):
    """The solution with every region of this lab replaced by its TODO block and stub."""
    owner = task_of_region(lab)
    lines = text.split("\n")
    found = regions(text, filename)
    for name, (first, last, indent) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        if name not in owner:
            continue  # a region of no task of this lab stays as it is
        task = owner[name]
        spec = task["regions"][name]
        todo = textwrap.wrap(f"TODO(lab {task['id']}): {spec['todo']}", 100 - len(indent) - 3)
        block = [f"{indent}// {t}" if i == 0 else f"{indent}//   {t}" for i, t in enumerate(todo)]
        block += [indent + s for s in spec["stub"]]
        lines[first + 1:last] = block
    missing = [n for n, t in owner.items() if t["file"] == filename and n not in found]
    if missing:
        raise LabError(f"{filename}: no LAB markers for {', '.join(missing)}")
    return "\n".join(lines)


def splice(reference, student, task, ref_name, student_name):
    """The reference program with this task's regions taken from the student's file.
    #line directives make the compiler's messages name the student's file and lines."""
    ref_lines = reference.split("\n")
    found = regions(reference, ref_name)
    for name in sorted(task["regions"], key=lambda n: -found[n][0]):
        body, first_no = region_body(student, name, student_name)
        first, last, _ = found[name]
        ref_lines[first + 1:last] = ([f'#line {first_no} "{student_name}"'] + body +
                                     [f'#line {last + 1} "{ref_name}"'])
    return "\n".join(ref_lines)


def code_of(line):
    """A line without its // comment, stripped (for the leak check)."""
    return line.split("//", 1)[0].strip()


def solution_lines(text, where, least=16):
    """The lines of code inside the regions of a solution that are not trivial: a skeleton, or
    any other file of a student's folder, that holds one of them gives a part of a task away."""
    lines = text.split("\n")
    found = set()
    for first, last, _ in regions(text, where).values():
        found.update(code_of(lines[i]) for i in range(first + 1, last))
    return {l for l in found if len(l) >= least}
