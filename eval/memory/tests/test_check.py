"""The memory eval's gate fails on each kind of broken result."""

import copy
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import check  # noqa: E402

GOOD = json.loads((pathlib.Path(__file__).resolve().parents[1] / "results.json").read_text())


def test_the_committed_results_pass():
    assert check.problems(GOOD) == []


def test_each_broken_result_is_named():
    def broken(kind, field, value):
        r = copy.deepcopy(GOOD)
        case = next(c for c in r["cases"] if c["kind"] == kind)
        case[field] = value
        return case["id"], check.problems(r)

    for kind, field, value, words in [
        ("dismissed", "with", True, "reported again"),
        ("dismissed", "without", False, "tests nothing"),
        ("convention", "with", False, "not applied"),
        ("convention", "without", True, "tests nothing"),
        ("clean", "unchanged", False, "changed a clean control"),
    ]:
        cid, found = broken(kind, field, value)
        assert len(found) == 1 and cid in found[0] and words in found[0], found


def test_too_few_clean_controls():
    r = copy.deepcopy(GOOD)
    r["clean_total"] = 1
    assert any("clean controls" in p for p in check.problems(r))
