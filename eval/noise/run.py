#!/usr/bin/env python3
"""Noise on real code: how many findings the offline engine ships on
released, reviewed open-source code in Python, TypeScript and Go.

Each package is pinned to an exact version and fetched from its registry
with that registry's ordinary client: Python sdists with `pip download`, a
TypeScript package's published tarball with `npm pack`, Go libraries as
Debian packages them (`apt-get download`, the sources under
/usr/share/gocode/src). Its sources are added to an empty repository in PRs
of at most 300 KiB of files each (under the review's size budget, so every
file is read); `quorum review` runs each through the full fleet. Every line
is new, so every rule sees all of the package's code. Nothing here is a
seeded bug: each finding is either a real smell in shipped code or a false
positive, and the findings are listed so a reader can judge which.
`testing` findings ("changed without a test") and nitpicks are not counted,
as in the eval.

What is reviewed: for a Python package, everything under the sdist's `src/`
(or its package directory), tests included where they ship there; for the
TypeScript package, the `.ts` files under the tarball's `src/` (no `.d.ts`
ships there; the compiled `dist/` and the tsconfig files are left out); for
a Go package, everything Debian ships under its import path — the `.go`
files including `_test.go`, and go.mod/go.sum. Lines are counted over the
files of the package's language (`.py`, `.ts` without `.d.ts`, `.go`),
blank and comment lines included.

Usage: eval/noise/run.py QUORUM_BIN OUT_DIR   (writes OUT_DIR/noise.md, noise.json)
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

# (registry, name, exact version, language). For apt, the version is
# Debian's (upstream version + Debian revision).
PACKAGES = [
    ("pypi", "click", "8.1.7", "Python"),
    ("pypi", "requests", "2.32.3", "Python"),
    ("pypi", "flask", "3.0.3", "Python"),
    ("pypi", "httpx", "0.27.0", "Python"),
    ("pypi", "jinja2", "3.1.4", "Python"),
    ("pypi", "werkzeug", "3.0.3", "Python"),
    ("npm", "rxjs", "7.8.1", "TypeScript"),
    ("apt", "golang-github-spf13-cobra-dev", "1.6.1-1", "Go"),
    ("apt", "golang-github-go-sql-driver-mysql-dev", "1.5.0-2", "Go"),
]

# The Go import path each apt package ships its sources under.
GO_IMPORT_PATH = {
    "golang-github-spf13-cobra-dev": "github.com/spf13/cobra",
    "golang-github-go-sql-driver-mysql-dev": "github.com/go-sql-driver/mysql",
}

LANGUAGES = ["Python", "TypeScript", "Go"]

# Under the intake's 384 KiB patch budget (a patch is a little larger than its file).
BATCH_BYTES = 300 * 1024

FINDING = re.compile(r"^#### `([^`]+):(\d+)`\n\n\*\*([^*]+)\*\* \(([a-z]+), ([a-z-]+), confidence ([0-9.]+)\)", re.M)

HERE = pathlib.Path(__file__).resolve().parent

# How to read a low count outside Python, printed under the table.
READING = """Reading the TypeScript and Go rows: every line is an addition, so only
rules that judge added code on its own can fire; the rules about what a
change removed or altered (an inverted condition, a shifted offset, a removed
authorization check, a broken contract) cannot. On TypeScript that leaves an
empty or ignored `catch`, `eval`, `exec`/`execSync` commands built from
strings, SQL built from strings, TLS verification turned off, MD5/SHA-1 near
passwords and committed secrets; on Go only the last four (Go has no shell,
eval or swallowed-error rule yet). A zero there says these rules stay quiet
on clean code, not that the code was checked for much else."""


def spec_of(registry, name, version):
    return {"pypi": f"{name}=={version}", "npm": f"{name}@{version}", "apt": f"{name}={version}"}[registry]


def is_language_file(path: pathlib.Path, language: str) -> bool:
    n = path.name
    if language == "Python":
        return n.endswith(".py")
    if language == "TypeScript":
        return n.endswith(".ts") and not n.endswith(".d.ts")
    if language == "Go":
        return n.endswith(".go")
    raise ValueError(language)


def git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=noise@quorum", "-c", "user.name=noise", *args],
        check=True,
        capture_output=True,
    )


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def fetch_pypi(tmp: pathlib.Path, name: str, version: str) -> pathlib.Path:
    """The sdist's src/ (or package directory); every file under it is reviewed."""
    dl = tmp / "pypi"
    sdist = next(dl.glob(f"{name}-{version}.tar.gz"), None) or next(dl.glob(f"{name.capitalize()}-{version}.tar.gz"))
    unpacked = tmp / f"{name}-src"
    with tarfile.open(sdist) as t:
        t.extractall(unpacked, filter="data")
    top = next(p for p in unpacked.iterdir() if p.is_dir())
    if (top / "src").is_dir():
        return top / "src"
    pkg = top / name.lower()
    if pkg.is_dir():
        return pkg
    sys.exit(f"{top}: no src/ or {name}/ directory")


def fetch_npm(tmp: pathlib.Path, name: str, version: str) -> pathlib.Path:
    """The published tarball's src/ (only its .ts files are reviewed)."""
    dl = tmp / f"{name}-npm"
    dl.mkdir()
    if shutil.which("npm") is None:
        sys.exit("npm is not installed (apt-get install npm); it fetches the TypeScript package")
    run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=dl)
    tgz = next(dl.glob("*.tgz"))
    with tarfile.open(tgz) as t:
        t.extractall(dl, filter="data")
    shipped = json.loads((dl / "package" / "package.json").read_text())["version"]
    if shipped != version:
        sys.exit(f"npm pack {name}@{version} gave version {shipped}")
    src = dl / "package" / "src"
    if not src.is_dir():
        sys.exit(f"{name}@{version}: the published tarball ships no src/ directory")
    return src


def apt_versions(name: str) -> list:
    out = subprocess.run(["apt-cache", "madison", name], capture_output=True, text=True).stdout
    return [line.split("|")[1].strip() for line in out.splitlines() if line.count("|") >= 2]


def fetch_apt(tmp: pathlib.Path, name: str, version: str) -> pathlib.Path:
    """The Go sources a Debian -dev package ships under /usr/share/gocode/src."""
    if shutil.which("apt-get") is None:
        sys.exit(f"{name}: apt-get is needed to fetch the Go package from Debian's archive")
    offered = apt_versions(name)
    if not offered:
        # Empty package lists (a fresh container): read them once.
        subprocess.run(["apt-get", "update", "-q"], capture_output=True)
        offered = apt_versions(name)
    if version not in offered:
        sys.exit(f"{name}: pinned Debian version {version}, but apt offers {offered or 'nothing'}; "
                 "update the pin in eval/noise/run.py (and the figures in noise.md and README.md)")
    dl = tmp / f"{name}-deb"
    dl.mkdir()
    dl.chmod(0o777)  # apt drops to its _apt user to write the download
    run(["apt-get", "download", "-q", f"{name}={version}"], cwd=dl)
    deb = next(dl.glob("*.deb"))
    got = run(["dpkg-deb", "-f", str(deb), "Version"]).strip()
    if got != version:
        sys.exit(f"apt-get download {name}={version} gave version {got}")
    root = dl / "root"
    run(["dpkg-deb", "-x", str(deb), str(root)])
    src = root / "usr/share/gocode/src" / GO_IMPORT_PATH[name]
    if not src.is_dir():
        sys.exit(f"{deb.name}: no /usr/share/gocode/src/{GO_IMPORT_PATH[name]}")
    return src


def reviewed_files(src: pathlib.Path, registry: str, language: str) -> list:
    files = sorted(p for p in src.rglob("*") if p.is_file())
    if registry == "npm":
        return [p for p in files if is_language_file(p, language)]
    return files


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    quorum, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    verdicts_path = HERE / "verdicts.json"
    verdicts = json.loads(verdicts_path.read_text()) if verdicts_path.exists() else {}
    rows, findings = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        pypi = [spec_of(r, n, v) for r, n, v, _ in PACKAGES if r == "pypi"]
        if pypi:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(tmp / "pypi"), *pypi],
                check=True,
            )
        for registry, name, version, language in PACKAGES:
            spec = spec_of(registry, name, version)
            src = {"pypi": fetch_pypi, "npm": fetch_npm, "apt": fetch_apt}[registry](tmp, name, version)
            repo = tmp / f"{name}-repo"
            repo.mkdir()
            git(repo, "init", "-q")
            git(repo, "commit", "-q", "--allow-empty", "-m", "base")
            # One PR per batch of files that fits the review's size budget
            # (384 KiB of patch), so every file is reviewed.
            files = reviewed_files(src, registry, language)
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
            counted_files = [p for p in (repo / src.name).rglob("*") if p.is_file() and is_language_file(p, language)]
            lines = sum(len(p.read_text(errors="replace").splitlines()) for p in counted_files)
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
                # An agent keeps at most its 50 most severe findings; only the
                # (uncounted) tests agent may hit that cap, or counted ones are lost.
                for agent, status in re.findall(r"^\| (\w+) \| ([^|]+) \|", part, re.M):
                    if agent != "tests" and "kept the" in status:
                        sys.exit(f"{spec}: the {agent} agent {status.strip()}; lower BATCH_BYTES")
                review += part
            found = [m.groups() for m in FINDING.finditer(review)]
            counted = [f for f in found if f[4] != "testing" and f[3] != "nitpick"]
            by_title = {}
            for f in counted:
                by_title[f[2]] = by_title.get(f[2], 0) + 1
            rows.append({"package": spec, "registry": registry, "language": language, "files_reviewed": len(files),
                         "language_files": len(counted_files), "lines": lines, "prs": len(batches),
                         "findings": len(counted), "by_title": by_title})
            for path, line, title, severity, category, conf in counted:
                text = (repo / path).read_text(errors="replace").splitlines()[int(line) - 1].strip()
                verdict = verdicts.get(spec, {}).get(f"{path}:{line} {title}")
                findings.append({"package": spec, "language": language, "path": path, "line": int(line), "title": title,
                                 "severity": severity, "category": category, "confidence": float(conf), "text": text,
                                 "verdict": verdict})
    md = ["# Noise on real code", "", __doc__.split("Usage:")[0].strip(), "",
          "| package | language | files reviewed | language files | lines | PRs | findings | per 1k lines | by title |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per = 1000 * r["findings"] / max(r["lines"], 1)
        titles = ", ".join(f"{t} ×{n}" for t, n in sorted(r["by_title"].items()))
        md.append(f"| {r['package']} | {r['language']} | {r['files_reviewed']} | {r['language_files']} | {r['lines']} | {r['prs']} "
                  f"| {r['findings']} | {per:.2f} | {titles} |")
    totals = []
    for language in LANGUAGES + [None]:
        group = [r for r in rows if language is None or r["language"] == language]
        if not group:
            continue
        lines, n = sum(r["lines"] for r in group), sum(r["findings"] for r in group)
        label = f"**all {language}** ({len(group)})" if language else f"**all** ({len(group)})"
        totals.append({"language": language or "all", "packages": len(group), "lines": lines, "findings": n,
                       "per_1k_lines": round(1000 * n / max(lines, 1), 2)})
        md.append(f"| {label} | {language or ''} | {sum(r['files_reviewed'] for r in group)} | {sum(r['language_files'] for r in group)} "
                  f"| {lines} | {sum(r['prs'] for r in group)} | {n} | {1000 * n / max(lines, 1):.2f} | |")
    md += ["", READING]
    summary = len(md)
    judged = {}
    for f in findings:
        if f["verdict"]:
            kind = "real smell" if f["verdict"].startswith("real smell") else "false positive"
            judged.setdefault(f["package"], {}).setdefault(kind, 0)
            judged[f["package"]][kind] += 1
    if judged:
        md += ["", "Verdicts on the judged findings (listed below): " + "; ".join(
            f"{pkg}: " + ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(kinds.items(), reverse=True))
            for pkg, kinds in judged.items()) + "."]
    stale = [f"{pkg} {key}" for pkg, keys in verdicts.items() for key in keys
             if not any(f["package"] == pkg and f"{f['path']}:{f['line']} {f['title']}" == key for f in findings)]
    for s in stale:
        print(f"warning: verdicts.json names a finding this run did not ship: {s}", file=sys.stderr)
    md += ["", "## Every finding", "",
           "Verdicts (kept in `eval/noise/verdicts.json`, keyed by package and `path:line title`) say whether a "
           "finding is a real smell a reviewer could fairly raise or a false positive, and why. They are given for "
           "the TypeScript and Go packages; the Python findings are judged together in README.md (\"Noise on real "
           "code\"). A finding with no verdict on file shows \"—\".", "",
           "| package | where | title | severity | confidence | line | verdict |", "|---|---|---|---|---|---|---|"]
    for f in findings:
        shown = f["text"][:90].replace("|", "\\|")
        verdict = (f["verdict"] or "—").replace("|", "\\|")
        md.append(f"| {f['package']} | `{f['path']}:{f['line']}` | {f['title']} | {f['severity']} | {f['confidence']:.2f} | `{shown}` | {verdict} |")
    md.append("")
    (out / "noise.md").write_text("\n".join(md))
    (out / "noise.json").write_text(json.dumps({"packages": rows, "totals": totals, "findings": findings}, indent=2, ensure_ascii=False) + "\n")
    print("\n".join(md[:summary + 2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
