"""eval/check_results.py accepts a well-formed results.json and names what is wrong in a broken one."""
import copy
import json
import pathlib
import subprocess
import sys

import pytest

CHECK = pathlib.Path(__file__).resolve().parents[1] / "check_results.py"

FINDING = {
    "file": "shop/repository.py",
    "start_line": 70,
    "line": 71,
    "category": "security",
    "severity": "critical",
    "title": "SQL built by string interpolation",
}

VALID = {
    "schema_version": 3,
    "fixture": "storefront-fixture",
    "engine": "offline",
    "invalid_cases": [],
    "modes": [
        {
            "mode": "graph_rag",
            "reviews": 1,
            "precision": 1.0,
            "recall": 0.5,
            "f1": 0.6667,
            "clean_false_positives": 0,
            "tokens": 0,
            "usd_per_review": 0.0,
            "latency_p50_ms": 90.0,
            "latency_max_ms": 101.5,
            "recall_spread": 0.0,
            "live_calls": 0,
            "replayed_calls": 0,
        }
    ],
    "cases": [
        {
            "case": "01-sql",
            "mode": "graph_rag",
            "run": 0,
            "score": {
                "expected": 2,
                "found": 1,
                "counted": 1,
                "true_positives": 1,
                "hits": [True, False],
                "false_positives": [],
            },
            "missed": ["shop/pricing.py: no finding near the line"],
            "findings": [FINDING],
            "rejected": [dict(FINDING, severity="minor", reason="cited line is not in the diff")],
            "latency_ms": 90.0,
            "tokens": {"prompt": 0, "cached_prompt": 0, "completion": 0},
            "usd": 0.0,
            "model_calls": {"live": 0, "replayed": 0},
        }
    ],
}


def run(tmp_path, doc):
    (tmp_path / "results.json").write_text(json.dumps(doc))
    return subprocess.run([sys.executable, str(CHECK), str(tmp_path)], capture_output=True, text=True)


def test_valid_document_passes(tmp_path):
    r = run(tmp_path, VALID)
    assert r.returncode == 0, r.stderr


def broken(edit):
    doc = copy.deepcopy(VALID)
    edit(doc)
    return doc


@pytest.mark.parametrize(
    "doc, where",
    [
        (broken(lambda d: d.pop("modes")), "(root)"),
        (broken(lambda d: d.update(schema_version=2)), "schema_version"),
        (broken(lambda d: d["modes"][0].pop("reviews")), "modes/0"),
        (broken(lambda d: d["modes"][0].update(recall=1.5)), "modes/0/recall"),
        (broken(lambda d: d["modes"][0].update(mode="full_context")), "modes/0/mode"),
        (broken(lambda d: d["cases"][0]["score"].update(hits="yes")), "cases/0/score/hits"),
        (broken(lambda d: d["cases"][0]["findings"][0].update(severity="blocker")), "cases/0/findings/0/severity"),
        (broken(lambda d: d["cases"][0]["findings"][0].update(extra=1)), "cases/0/findings/0"),
        (broken(lambda d: d["cases"][0]["rejected"][0].pop("reason")), "cases/0/rejected/0"),
        (broken(lambda d: d["cases"][0].pop("tokens")), "cases/0"),
        (broken(lambda d: d["cases"][0]["model_calls"].update(replayed=-1)), "cases/0/model_calls/replayed"),
        (broken(lambda d: d["modes"][0].pop("replayed_calls")), "modes/0"),
    ],
)
def test_broken_document_fails_and_says_where(tmp_path, doc, where):
    r = run(tmp_path, doc)
    assert r.returncode == 1
    assert f": {where}: " in r.stderr, r.stderr
