#!/usr/bin/env python3
"""Summarises a `make eval-llm` run directory into its report.md: per set and
context mode, located and explained precision/recall for offline alone, the
model alone and offline + model; tokens per review; graph_rag's tokens as a
share of full_files'; graph_rag's recall over diff_only's; the judge's
measured agreement; live vs replayed model answers.

Usage: eval/llm/summarise.py OUT_DIR   (reads OUT_DIR/<set>-<engine>/<run>/results.json)
"""
import json
import pathlib
import sys


def newest(run_dir: pathlib.Path):
    runs = sorted(p for p in run_dir.iterdir() if (p / "results.json").is_file())
    return json.loads((runs[-1] / "results.json").read_text()) if runs else None


def fmt(v):
    return "—" if v is None else f"{v:.2f}"


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    lines = ["# Context-mode ablation with a real model", ""]
    for extra in ("model.txt", "command.txt"):
        p = out / extra
        if p.exists():
            lines += [f"## {extra}", "", "```", p.read_text().strip(), "```", ""]
    sets = sorted({d.name.rsplit("-", 1)[0] for d in out.iterdir() if d.is_dir() and "-" in d.name})
    for name in sets:
        runs = {e: newest(out / f"{name}-{e}") for e in ("offline", "model") if (out / f"{name}-{e}").is_dir()}
        runs = {e: r for e, r in runs.items() if r}
        if not runs:
            continue
        lines += [f"## {name}", "", "| mode | findings of | located P | located R | explained P | explained R | FP on clean | tokens/review | live | replayed |", "|---|---|---|---|---|---|---|---|---|---|"]
        tokens = {}
        recall = {}
        judges = []
        for engine, r in runs.items():
            for m in r["modes"]:
                per = m["tokens"] / max(m["reviews"], 1)
                views = [("offline" if engine == "offline" else "offline + model", m, m.get("explained"))]
                if m.get("model_alone"):
                    views.append(("model alone", m["model_alone"], m.get("model_alone_explained")))
                if m.get("model_before_critic"):
                    views.append(("model alone, before the critic", m["model_before_critic"], None))
                for label, located, explained in views:
                    lines.append(
                        f"| {m['mode']} | {label} | {fmt(located['precision'])} | {fmt(located['recall'])} | "
                        f"{fmt(explained and explained['precision'])} | {fmt(explained and explained['recall'])} | "
                        f"{located['clean_false_positives']} | {per:.0f} | {m['live_calls']} | {m['replayed_calls']} |"
                    )
                    recall[(label, m["mode"])] = (located["recall"], explained and explained["recall"])
                if engine == "model":
                    tokens[m["mode"]] = per
            j = r.get("judge")
            if j:
                judges.append(f"- judge `{j['judge_model']}` ({engine} run): agreement with the labels {j['accuracy']:.2f}, Cohen's kappa {j['kappa']:.2f} on {j['labels']} pairs ({j['errors']} errors)")
        lines.append("")
        lines += judges
        if tokens.get("full_files") and "graph_rag" in tokens:
            lines.append(f"- graph_rag tokens / full_files tokens: **{tokens['graph_rag'] / tokens['full_files']:.2f}** (target ≤ 0.4)")
        for label in ("model alone", "offline + model"):
            g, d = recall.get((label, "graph_rag")), recall.get((label, "diff_only"))
            if g and d:
                gain = g[0] - d[0]
                ex = "" if g[1] is None or d[1] is None else f"; explained {g[1] - d[1]:+.2f}"
                lines.append(f"- {label}: graph_rag − diff_only recall, located **{gain:+.2f}**{ex} (target +0.2)")
        lines.append("")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
