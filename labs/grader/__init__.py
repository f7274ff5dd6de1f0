"""The lab grader of scripts/lab.py, one module per stage (docs/grader.md):

    labs     the lab definitions (labs/labs.json), the LAB markers, skeletons and splicing
    intake   copies the lab's listed files out of a submission: regular files, small, text
    lint     checks every student region before anything is built
    fence    runs student code: own process group, time limit, no network, another uid, limits
    build    builds the grading driver with the reference's or the student's regions
    verify   reads the driver's output files and compares student with reference
    score    the points of a task, from the grader's own comparisons only
    report   the table, results.json and junit.xml, written by the grader alone
    cli      the command line (scripts/lab.py)
"""
