#!/usr/bin/python3
"""Checks the relative links of README.md and docs/*.md: every link names a file or folder of
the repository, and every #anchor on a Markdown page is one of that page's headings (GitHub's
rule: lower case, punctuation dropped, spaces to hyphens). Links to other sites are not
followed. e2e_readme runs it (tests/e2e/test_readme.py); by hand:

    python3 tests/e2e/doc_links.py          # prints each broken link, exits 1 if there is one
"""
import os
import re
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# [text](target) outside code; the target ends at whitespace or ")".
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def pages(repo=REPO):
    docs = os.path.join(repo, "docs")
    names = sorted(f for f in os.listdir(docs) if f.endswith(".md")) if os.path.isdir(docs) else []
    return [os.path.join(repo, "README.md")] + [os.path.join(docs, f) for f in names]


def prose_lines(path, keep_code=False):
    """(line number, text) of the lines outside fenced code blocks, inline code removed
    unless keep_code (a heading's code spans are part of its anchor)."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line if keep_code else re.sub(r"`[^`]*`", "", line)


def anchor(heading):
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found = set()
    for _, line in prose_lines(path, keep_code=True):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            found.add(anchor(m.group(1)))
    return found


def broken_links(repo=REPO):
    """Every broken relative link as "FILE:LINE: target (why)"."""
    broken = []
    for page in pages(repo):
        for number, line in prose_lines(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                    continue  # https:, mailto:, ...
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = "%s:%d: %s" % (os.path.relpath(page, repo), number, target)
                if not os.path.exists(dest):
                    broken.append(where + " (no such file)")
                elif fragment and dest.endswith(".md") and fragment not in anchors(dest):
                    broken.append(where + " (no heading #%s in %s)" % (fragment, os.path.relpath(dest, repo)))
    return broken


def main():
    broken = broken_links()
    for b in broken:
        print(b)
    print("doc_links: %d pages, %d broken links" % (len(pages()), len(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
