"""Tests for docs/check_docs.py: run with `python3 -m pytest -q -p no:cacheprovider docs/tests`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "docs" / "check_docs.py"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A copy of the repository's checked Markdown and everything it links to."""
    root = tmp_path / "repo"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".git", "target", "__pycache__"))
    return root


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_real_tree_passes() -> None:
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("check_docs: OK:")
    assert "files" in result.stdout and "links checked" in result.stdout


def test_copy_of_the_real_tree_passes(tree: Path) -> None:
    result = run("--root", tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_unclosed_fence_fails_naming_the_line(tree: Path) -> None:
    readme = tree / "README.md"
    lines = readme.read_text(encoding="utf-8").split("\n")
    lines += ["", "An example:", "", "```sh", "make run"]
    readme.write_text("\n".join(lines) + "\n", encoding="utf-8")
    opened_at = len(lines) - 1  # 1-based line of the "```sh" line
    result = run("--root", tree)
    assert result.returncode == 1
    assert f"README.md:{opened_at}: code fence ``` opened here is never closed" in result.stdout


def test_fence_closes_only_with_same_char_and_length(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# a\n\n````\n```\n~~~~\n````\n\n~~~\n```\n")
    result = run("--root", tmp_path, "a.md")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["a.md:8: code fence ~~~ opened here is never closed"]


def test_dead_relative_link_fails(tree: Path) -> None:
    page = tree / "docs" / "install.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [the old guide](old-guide.md).\n", encoding="utf-8"
    )
    line = len(page.read_text(encoding="utf-8").split("\n")) - 1
    result = run("--root", tree)
    assert result.returncode == 1
    assert f"docs/install.md:{line}: dead link 'old-guide.md'" in result.stdout


def test_link_relative_to_root_from_docs_is_dead(tmp_path: Path) -> None:
    write(tmp_path, "eval/x.md", "x\n")
    write(tmp_path, "docs/page.md", "[x](eval/x.md) and [y](../eval/x.md)\n")
    result = run("--root", tmp_path, "docs/page.md")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["docs/page.md:1: dead link 'eval/x.md' (no docs/eval/x.md)"]


def test_links_in_code_fences_and_spans_are_ignored(tmp_path: Path) -> None:
    write(
        tmp_path,
        "README.md",
        "# t\n\n```\n[a](missing-in-fence.md)\n```\n\n~~~md\n![i](missing.png)\n~~~\n\n"
        "Inline `[b](missing-in-span.md)` and ``[c](also-missing.md)`` are code.\n",
    )
    result = run("--root", tmp_path, "README.md")
    assert result.returncode == 0, result.stdout
    assert "0 relative links checked" in result.stdout


def test_anchor_only_and_http_links_are_not_checked(tmp_path: Path) -> None:
    write(
        tmp_path,
        "README.md",
        "# t\n\n[top](#t) [web](https://example.com/x.md) [plain](http://example.com) "
        "[mail](mailto:a@example.com)\n",
    )
    result = run("--root", tmp_path, "README.md")
    assert result.returncode == 0, result.stdout
    assert "0 relative links checked (4 external or anchor links skipped)" in result.stdout


def test_link_with_fragment_to_existing_file_passes(tmp_path: Path) -> None:
    write(tmp_path, "docs/install.md", "# Install\n\n## On GitLab\n")
    write(tmp_path, "README.md", "[GitLab](docs/install.md#on-gitlab) ![chart](docs/install.md)\n")
    result = run("--root", tmp_path, "README.md")
    assert result.returncode == 0, result.stdout
    assert "2 relative links checked" in result.stdout


def test_links_to_directories_and_images_are_checked(tmp_path: Path) -> None:
    write(tmp_path, "eval/heldout/click/README.md", "c\n")
    write(tmp_path, "docs/eval.md", "[click](../eval/heldout/click) ![chart](eval-chart.svg)\n")
    result = run("--root", tmp_path, "docs/eval.md")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "docs/eval.md:1: dead link 'eval-chart.svg' (no docs/eval-chart.svg)"
    ]
