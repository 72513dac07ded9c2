#!/usr/bin/env python3
"""Pastes the summary tables of a benchmark run into a Markdown page: docs/performance.md.

Usage: update_readme.py RESULTS_MD [PAGE]   (PAGE: docs/performance.md unless given)

RESULTS_MD is results/bench-<date>/results.md from scripts/bench/run_all.sh; the part
between its readme-table markers replaces what lies between the bench markers of the
page (the section is added at the end of the page if it has no markers yet).
Everything else in the page is left as it is.
"""
import os
import re
import sys

SRC_BEGIN, SRC_END = "<!-- readme-table:begin -->", "<!-- readme-table:end -->"
DST_BEGIN, DST_END = "<!-- bench:begin -->", "<!-- bench:end -->"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    results = sys.argv[1]
    readme = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                                                                       "performance.md")
    text = open(results).read()
    if SRC_BEGIN not in text or SRC_END not in text:
        sys.exit(f"update_readme.py: {results} has no {SRC_BEGIN} ... {SRC_END} block")
    table = text.split(SRC_BEGIN, 1)[1].split(SRC_END, 1)[0].strip("\n")
    run = os.path.basename(os.path.dirname(os.path.abspath(results)))
    machine = re.search(r"^Machine: (.*)$", text, re.M)
    quick = "Quick mode" in text
    block = "\n".join([
        DST_BEGIN,
        f"Measured by `scripts/bench/run_all.sh` ({run}{', quick mode' if quick else ''}); "
        f"{machine.group(1) if machine else ''}",
        "",
        table,
        "",
        "Reproduce: `scripts/bench/run_all.sh && python3 scripts/bench/update_readme.py results/bench-$(date +%Y-%m-%d)/results.md docs/performance.md`",
        DST_END,
    ])
    doc = open(readme).read()
    if DST_BEGIN in doc and DST_END in doc:
        head, rest = doc.split(DST_BEGIN, 1)
        tail = rest.split(DST_END, 1)[1]
        doc = head + block + tail
    else:
        doc = doc.rstrip("\n") + "\n\n## Performance\n\n" + block + "\n"
    with open(readme, "w") as f:
        f.write(doc)
    print(f"update_readme.py: pasted {run} into {os.path.relpath(readme)}")


if __name__ == "__main__":
    main()
