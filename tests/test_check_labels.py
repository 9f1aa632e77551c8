"""tools/check_labels.py: the labelled set, the second reading and the two readers' agreement."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import check_labels as check  # tools/ (conftest puts it on sys.path)


def test_kappa_matches_a_hand_computed_case():
    pairs = ([("correct", "correct")] * 4 + [("correct", "partial")] + [("partial", "partial")] * 2
             + [("partial", "correct")] + [("wrong", "wrong")] * 2)
    # observed 8/10; both readers' marginals c5 p3 w2 -> chance (25 + 9 + 4) / 100 = 0.38
    assert check.cohen_kappa(pairs) == pytest.approx((0.8 - 0.38) / (1 - 0.38))


def test_kappa_is_zero_when_one_reader_always_says_the_same():
    pairs = [("correct", "correct"), ("partial", "correct"), ("wrong", "correct")]
    assert check.cohen_kappa(pairs) == pytest.approx(0.0)


def rows_and_review():
    rows = [{"id": "q01-01", "level": "correct"}, {"id": "q01-02", "level": "wrong"}]
    review = [{"id": "q01-01", "level_first": "correct", "level_second": "correct", "agree": True, "note": ""},
              {"id": "q01-02", "level_first": "partial", "level_second": "wrong", "agree": False,
               "note": "resolved: first label changed; the deadline is wrong"}]
    return rows, review


def test_a_consistent_review_has_no_problems():
    assert check.review_problems(*reversed(rows_and_review())) == []


@pytest.mark.parametrize("edit, expected", [
    (lambda rows, rev: rev[0].update(agree=False), "agree must be True"),
    (lambda rows, rev: rev[1].update(agree=1), "agree must be False"),
    (lambda rows, rev: rev[1].update(note=""), "starts with one of"),
    (lambda rows, rev: rev[1].update(note="guide: a rule was added"), "a changed label"),
    (lambda rows, rev: rows[0].update(level="partial"), "a changed label"),
    (lambda rows, rev: rev[0].update(note="fine"), "stays empty"),
    (lambda rows, rev: rev.pop(), "has no second reading"),
    (lambda rows, rev: rev[0].update(level_second="ok"), "levels must be"),
])
def test_a_review_that_does_not_match_the_set_is_reported(edit, expected):
    rows, review = rows_and_review()
    edit(rows, review)
    assert any(expected in p for p in check.review_problems(review, rows)), check.review_problems(review, rows)


def test_the_repository_set_review_and_guide_agree():
    done = subprocess.run([sys.executable, str(check.ROOT / "tools" / "check_labels.py")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Cohen の κ" in done.stdout
    review = [json.loads(line) for line in check.REVIEW.read_text(encoding="utf-8").splitlines()]
    assert len(review) == len(check.LABELS.read_text(encoding="utf-8").splitlines())


def test_a_relabel_after_the_review_must_match_the_set_and_the_review():
    rows = [{"id": "q13-05", "level": "partial"}]
    review = [{"id": "q13-05", "level_first": "correct", "level_second": "correct", "agree": True, "note": ""}]
    relabel = {"id": "q13-05", "from": "correct", "to": "partial", "when": "2026-12-04", "why": "key facts fixed"}
    assert check.review_problems(review, rows, [relabel]) == []
    assert check.relabel_problems([relabel], rows, review) == []
    # without the relabel the review's reading disagrees with the set
    assert check.review_problems(review, rows, [])
    assert "the set holds 'partial'" in check.relabel_problems([{**relabel, "to": "wrong"}], rows, review)[0]
    assert "resolved it as 'correct'" in check.relabel_problems([{**relabel, "from": "wrong"}], rows, review)[0]
    assert "keys" in check.relabel_problems([{"id": "q13-05"}], rows, review)[0]


def test_the_relabels_in_data_are_consistent():
    rows = [json.loads(line) for line in check.LABELS.read_text(encoding="utf-8").splitlines()]
    review = [json.loads(line) for line in check.REVIEW.read_text(encoding="utf-8").splitlines() if line.strip()]
    relabels = [json.loads(line) for line in check.RELABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {x["id"] for x in relabels} == {"q13-03", "q13-05", "q13-07"}
    assert check.relabel_problems(relabels, rows, review) == [] and check.review_problems(review, rows, relabels) == []
