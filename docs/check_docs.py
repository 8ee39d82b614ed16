#!/usr/bin/env python3
"""Check the project's Markdown for unbalanced code fences and dead relative links.

Usage:
    python3 docs/check_docs.py                  # README.md, ARCHITECTURE.md, docs/**/*.md
    python3 docs/check_docs.py FILE...          # only these files (relative to --root)
    python3 docs/check_docs.py --root DIR [FILE...]

Checks, per file:
  (a) every code fence (``` or ~~~, three or more) that is opened is closed. As in
      CommonMark, a fence closes only with the same character, at least as long as the
      opening one, and with nothing but spaces after it. Fences may be indented (list
      items) or inside a block quote.
  (b) every relative link or image, inline `[text](target)` or a reference definition
      `[label]: target`, points to a file or directory that exists. The target is
      resolved against the file's directory (a leading `/` against the root), with any
      `#fragment` or `?query` removed. URLs with a scheme (http:, https:, mailto:, ...)
      and anchor-only links (`#...`) are not checked. Links inside fenced code blocks and
      inline code spans are ignored.

Each problem is printed as `path:line: message` and the exit status is 1; otherwise one
OK line is printed and the exit status is 0. Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

DEFAULT_ROOT = Path(__file__).resolve().parent.parent

FENCE_RE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
QUOTE_PREFIX_RE = re.compile(r"^(?:\s{0,3}>\s?)+")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
REF_DEF_RE = re.compile(r"^\s{0,3}\[(?P<label>[^\]]+)\]:[ \t]*(?P<rest>\S.*)$")


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    files: int = 0
    links_checked: int = 0
    links_skipped: int = 0


def default_files(root: Path) -> list[Path]:
    files = [root / "README.md", root / "ARCHITECTURE.md"]
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(p for p in docs.rglob("*.md") if p.is_file())
    return [f for f in files if f.is_file()]


def mask_fences(lines: list[str], rel: str, report: Report) -> list[str]:
    """Return the lines with fenced code replaced by empty lines; report unclosed fences."""
    out: list[str] = []
    open_char = ""
    open_len = 0
    open_line = 0
    for number, line in enumerate(lines, 1):
        body = QUOTE_PREFIX_RE.sub("", line)
        m = FENCE_RE.match(body)
        if not open_char:
            if m:
                fence, info = m.group("fence"), m.group("info")
                # A backtick fence's info string may not contain a backtick (CommonMark).
                if not (fence[0] == "`" and "`" in info):
                    open_char, open_len, open_line = fence[0], len(fence), number
                    out.append("")
                    continue
            out.append(line)
        else:
            if m:
                fence, info = m.group("fence"), m.group("info")
                if fence[0] == open_char and len(fence) >= open_len and not info.strip():
                    open_char = ""
            out.append("")
    if open_char:
        report.problems.append(
            f"{rel}:{open_line}: code fence {open_char * open_len} opened here is never closed"
        )
    return out


def mask_code_spans(text: str) -> str:
    """Blank out inline code spans (keeping newlines) so links inside them are ignored."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c != "`":
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        run = j - i
        # Find the closing run of exactly `run` backticks, within the same paragraph.
        k = j
        end = -1
        while k < n:
            if text[k] == "`":
                m = k
                while m < n and text[m] == "`":
                    m += 1
                if m - k == run:
                    end = m
                    break
                k = m
                continue
            if text[k] == "\n":
                next_end = text.find("\n", k + 1)
                if not text[k + 1 : n if next_end == -1 else next_end].strip():
                    break  # a blank line ends the paragraph, and the span with it
            k += 1
        if end == -1:
            i = j  # a literal backtick run
            continue
        for p in range(i, end):
            if chars[p] != "\n":
                chars[p] = " "
        i = end
    return "".join(chars)


def parse_destination(text: str, start: int) -> str | None:
    """Parse a link destination beginning at text[start] (just after '(')."""
    i, n = start, len(text)
    while i < n and text[i] in " \t\n":
        i += 1
    if i < n and text[i] == "<":
        end = text.find(">", i + 1)
        if end == -1:
            return None
        return text[i + 1 : end]
    depth = 0
    j = i
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            j += 2
            continue
        if c in " \t\n":
            break
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        j += 1
    return text[i:j]


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def check_target(target: str, path: Path, root: Path, rel: str, line: int, report: Report) -> None:
    target = target.strip()
    if not target or target.startswith("#") or SCHEME_RE.match(target):
        report.links_skipped += 1
        return
    report.links_checked += 1
    local = unquote(re.split(r"[#?]", target, maxsplit=1)[0])
    if not local:
        return
    base = root if local.startswith("/") else path.parent
    resolved = base / local.lstrip("/")
    if not resolved.exists():
        report.problems.append(f"{rel}:{line}: dead link '{target}' (no {display(resolved, root)})")


def display(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return str(path)


def check_file(path: Path, root: Path, report: Report) -> None:
    rel = display(path, root)
    report.files += 1
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        report.problems.append(f"{rel}:1: cannot read: {err}")
        return
    lines = raw.split("\n")
    masked_lines = mask_fences(lines, rel, report)
    for number, line in enumerate(masked_lines, 1):
        m = REF_DEF_RE.match(line)
        if m:
            dest = parse_destination(m.group("rest"), 0)
            if dest is not None:
                check_target(dest, path, root, rel, number, report)
    text = mask_code_spans("\n".join(masked_lines))
    for m in re.finditer(r"\]\(", text):
        dest = parse_destination(text, m.end())
        if dest is None:
            continue
        check_target(dest, path, root, rel, line_of(text, m.start()), report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="tree to check (default: the repository)")
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md, ARCHITECTURE.md, docs/**/*.md)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"check_docs: no such directory: {root}", file=sys.stderr)
        return 2
    if args.files:
        files = []
        for f in args.files:
            candidate = f if f.is_absolute() else root / f
            if not candidate.is_file() and not f.is_absolute() and f.is_file():
                candidate = f.resolve()
            files.append(candidate)
    else:
        files = default_files(root)
    report = Report()
    for f in files:
        if not f.is_file():
            report.problems.append(f"{display(f, root)}:1: no such file")
            continue
        check_file(f, root, report)
    for problem in report.problems:
        print(problem)
    if report.problems:
        print(f"check_docs: {len(report.problems)} problem(s) in {report.files} file(s)", file=sys.stderr)
        return 1
    print(
        f"check_docs: OK: {report.files} files, {report.links_checked} relative links checked "
        f"({report.links_skipped} external or anchor links skipped), fences balanced"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
