"""The generated figures add up per language and keep every class and reason."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import report  # noqa: E402


def cls(name, made, hits, fp, reasons=None):
    return {"class": name, "sites": made * 2, "constructed": made, "hits": hits, "recall": hits / made if made else 0.0,
            "controls": made, "control_findings": fp, "miss_reasons": reasons or {}}


def test_cells_totals_and_reasons():
    a = {"seed": 1, "files": 3, "classes": [cls("rename", 10, 9, 0, {"method through a receiver": 1}), cls("drop-await", 0, 0, 0)]}
    b = {"seed": 1, "files": 5, "classes": [cls("rename", 10, 5, 1, {"method through a receiver": 4, "called by name": 1})]}
    md = report.render([("pa", "Python", a), ("pb", "Python", b)])
    assert "| pa | Python | 3 | 0.90 (9/10; 0) | — |" in md
    assert "| pb | Python | 5 | 0.50 (5/10; 1) | — |" in md
    # Totals per language: 14 of 20, one control finding of 20.
    assert "| rename | Python | 40 | 20 | 14 | 0.70 | 1 / 20 |" in md
    assert "| rename | method through a receiver | 5 |" in md
    assert "| rename | called by name | 1 |" in md
    # A class no package could make has no totals row.
    assert "| drop-await | Python" not in md
