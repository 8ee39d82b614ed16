"""The mutation gate fails on fewer hits and on more control findings."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import check  # noqa: E402

BASE = {"packages": {"pkg": {"rename": {"made": 10, "min_hits": 5, "max_control_findings": 0}}}}


def result(hits, control_findings):
    return {"classes": [{"class": "rename", "hits": hits, "constructed": 10, "control_findings": control_findings,
                         "missed": ["a.b"], "false_positives": ["a.c: x"], "recall": hits / 10, "controls": 10}]}


def test_at_or_above_the_baseline_passes():
    assert check.problems(BASE, "pkg", result(5, 0)) == []
    assert check.problems(BASE, "pkg", result(9, 0)) == []


def test_fewer_hits_or_more_control_findings_fail_with_names():
    fewer = check.problems(BASE, "pkg", result(4, 0))
    assert len(fewer) == 1 and "4 hits" in fewer[0] and "a.b" in fewer[0]
    noisy = check.problems(BASE, "pkg", result(5, 1))
    assert len(noisy) == 1 and "drew a finding" in noisy[0] and "a.c" in noisy[0]
    assert check.problems(BASE, "other", result(5, 0)) == ["other: no baseline"]
