#!/usr/bin/env python3
"""Noise on real code: how many findings the offline engine ships on
released, reviewed open-source Python code.

Each package's sdist (pinned, fetched with pip) is added to an empty
repository in PRs of at most 300 KiB of files each (under the review's size
budget, so every file is read); `quorum review` runs each through the full
fleet. Every line is new, so every rule sees all of the
package's code. Nothing here is a seeded bug: each finding is either a real
smell in shipped code or a false positive, and the findings are listed so a
reader can judge which. `testing` findings ("changed without a test") are
not counted, as in the eval.

Usage: eval/noise/run.py QUORUM_BIN OUT_DIR   (writes OUT_DIR/noise.md, noise.json)
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

PACKAGES = [
    "click==8.1.7",
    "requests==2.32.3",
    "flask==3.0.3",
    "httpx==0.27.0",
    "jinja2==3.1.4",
    "werkzeug==3.0.3",
]

# Under the intake's 384 KiB patch budget (a patch is a little larger than its file).
BATCH_BYTES = 300 * 1024

FINDING = re.compile(r"^#### `([^`]+):(\d+)`\n\n\*\*([^*]+)\*\* \(([a-z]+), ([a-z-]+), confidence ([0-9.]+)\)", re.M)


def git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=noise@quorum", "-c", "user.name=noise", *args],
        check=True,
        capture_output=True,
    )


def source_root(unpacked: pathlib.Path, name: str) -> pathlib.Path:
    top = next(p for p in unpacked.iterdir() if p.is_dir())
    if (top / "src").is_dir():
        return top / "src"
    pkg = top / name.lower()
    if pkg.is_dir():
        return pkg
    sys.exit(f"{top}: no src/ or {name}/ directory")


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    quorum, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rows, listing = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(tmp / "dl"), *PACKAGES],
            check=True,
        )
        for spec in PACKAGES:
            name, version = spec.split("==")
            sdist = next((tmp / "dl").glob(f"{name}-{version}.tar.gz"), None) or next((tmp / "dl").glob(f"{name.capitalize()}-{version}.tar.gz"))
            unpacked = tmp / f"{name}-src"
            with tarfile.open(sdist) as t:
                t.extractall(unpacked, filter="data")
            repo = tmp / f"{name}-repo"
            repo.mkdir()
            git(repo, "init", "-q")
            git(repo, "commit", "-q", "--allow-empty", "-m", "base")
            src = source_root(unpacked, name)
            # One PR per batch of files that fits the review's size budget
            # (384 KiB of patch), so every file is reviewed.
            files = sorted(p for p in src.rglob("*") if p.is_file())
            batches, batch, size = [], [], 0
            for f in files:
                n = f.stat().st_size
                if batch and size + n > BATCH_BYTES:
                    batches.append(batch)
                    batch, size = [], 0
                batch.append(f)
                size += n
            if batch:
                batches.append(batch)
            for i, batch in enumerate(batches):
                for f in batch:
                    dest = repo / src.name / f.relative_to(src)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, dest)
                git(repo, "add", "-A")
                git(repo, "commit", "-q", "-m", f"add {spec} part {i + 1}")
            py = [p for p in repo.rglob("*.py")]
            lines = sum(len(p.read_text(errors="replace").splitlines()) for p in py)
            review = ""
            for back in range(len(batches), 0, -1):
                part = subprocess.run(
                    [str(quorum), "review", "--repo", str(repo), "--base", f"HEAD~{back}", "--head", f"HEAD~{back - 1}", "--title", f"add {spec}"],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                if "### Not reviewed" in part:
                    sys.exit(f"{spec}: a batch was not fully reviewed; lower BATCH_BYTES")
                review += part
            found = [m.groups() for m in FINDING.finditer(review)]
            counted = [f for f in found if f[4] != "testing" and f[3] != "nitpick"]
            by_title = {}
            for f in counted:
                by_title[f[2]] = by_title.get(f[2], 0) + 1
            rows.append({"package": spec, "python_files": len(py), "lines": lines, "prs": len(batches), "findings": len(counted), "by_title": by_title})
            for path, line, title, severity, category, conf in counted:
                text = (repo / path).read_text(errors="replace").splitlines()[int(line) - 1].strip()
                shown = text[:90].replace("|", "\\|")
                listing.append(f"| {spec} | `{path}:{line}` | {title} | {severity} | {conf} | `{shown}` |")
    total_lines = sum(r["lines"] for r in rows)
    total = sum(r["findings"] for r in rows)
    md = ["# Noise on real code", "", __doc__.split("Usage:")[0].strip(), "",
          "| package | .py files | lines | PRs | findings | per 1k lines | by title |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        per = 1000 * r["findings"] / max(r["lines"], 1)
        titles = ", ".join(f"{t} ×{n}" for t, n in sorted(r["by_title"].items()))
        md.append(f"| {r['package']} | {r['python_files']} | {r['lines']} | {r['prs']} | {r['findings']} | {per:.2f} | {titles} |")
    md.append(f"| **all** | | {total_lines} | {sum(r['prs'] for r in rows)} | {total} | {1000 * total / max(total_lines, 1):.2f} | |")
    md += ["", "## Every finding", "", "| package | where | title | severity | confidence | line |", "|---|---|---|---|---|---|", *listing, ""]
    (out / "noise.md").write_text("\n".join(md))
    (out / "noise.json").write_text(json.dumps({"packages": rows}, indent=2) + "\n")
    print("\n".join(md[:len(rows) + 7]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
