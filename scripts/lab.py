#!/usr/bin/env python3
"""Labs an instructor can hand out and grade: one per chapter, made from the real programs.

    lab.py list                               the labs and their tasks
    lab.py make CHAPTER DIR [--solution]      a student folder: skeletons, headers, handout
    lab.py lint DIR [--lab CH]                (CPU) check the student regions: exit 0, or 1 with
                                              one line per violation
    lab.py grade [DIR] --lab CH [--out R]     grade one student's folder; the report goes to R
                                              (default build-lab/reports/NAME), never into DIR;
                                              --times N: N gradings, each with its own seed
    lab.py grade-class SUBMISSIONS --lab CH   every folder under SUBMISSIONS -> one CSV of scores
    lab.py check                              (CPU) every lab makes, no kit holds solution text,
                                              every skeleton compiles without a warning
    lab.py selftest [--labs CH...]            (GPU) skeletons score 0, solutions full marks, planted
                                              bugs lose their task's points, a hang scores 0, every
                                              cheat of tests/labs/cheats.py scores 0 on its task

The programs mark what a student writes with `// LAB <region> {` and `// LAB }`; labs/labs.json
says which regions make which task and how it is graded. The grader (labs/grader, one
module per stage) takes only the lab's files from a submission, lints every region, splices the
regions of one task into the course's copy of the program, and builds it with a grading driver
of its own (labs/drivers): the driver owns main, draws inputs from a seed picked at grade time
and writes the outputs to a file that the grader compares with the reference build's. Student
code is built and run inside a fence (docs/grader.md).

Exit codes: 0 full marks (GitHub Classroom's convention), 1 points lost (or a check failed),
2 usage, 77 cannot grade here (no GPU, no nvcc): never a pass, and the report says so.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "labs"))
from grader.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run(__doc__))
