"""Canvas gets its grades and its feedback back in the forms its importers read.

Checked against canvas-lms: the gradebook importer (``GradebookImporter#parse_assignments``)
finds the assignment of a column by ``Assignment.title_and_id`` (``Title (id)``), else by an
exact title, else it creates a new assignment; "Re-upload submissions"
(``Assignment#generate_comments_from_files``, ``infer_comment_context_from_filename``) splits a
file name at ``_`` and takes the first two all-digit parts as the user id and the attachment id
of that user's submission. The two readers are mirrored here in Python.
"""
from __future__ import annotations

import csv
import re
import zipfile
from pathlib import Path

import pytest

from ctxlab.errors import GradeError
from ctxlab.grading import lms, lms_export, workflow
from ctxlab.grading.report import format_summary
from tests.test_lms import KNOWN, venv_path  # noqa: F401 (venv_path is a fixture)
from tests.test_lms_identity import A, _autograded, _notebook


def title_and_id(header: str) -> tuple[str, str | None]:
    """canvas-lms ``Assignment.title_and_id``: ``/\\A(.*)\\s\\((\\d+)\\)\\z/``."""
    m = re.match(r"\A(.*)\s\((\d+)\)\Z", header, re.S)
    return (m.group(1), m.group(2)) if m else (header, None)


def comment_context(filename: str) -> tuple[str | None, str | None]:
    """canvas-lms ``infer_comment_context_from_filename``: (user id, attachment id)."""
    digits = [p for p in Path(filename).name.split("_") if re.fullmatch(r"\d+", p)]
    return (digits + [None, None])[0], (digits + [None, None])[1]


def _canvas_class(tmp_path: Path) -> Path:
    up, root = tmp_path / "upload", tmp_path / "root"
    for fname in ("yamadataro_1001_5001_00_start_here.ipynb", "o_brienpat_LATE_1002_5003_00_start_here.ipynb",
                  "20240_1003_5004_00_start_here.ipynb"):
        _notebook(up / fname, fname)
    report = workflow.intake(up, root, KNOWN)
    _autograded(root, [lid for lid, _ in report.placed])
    return root


def test_canvas_csv_header_is_title_and_id_or_says_what_canvas_will_do(tmp_path, venv_path):
    root = _canvas_class(tmp_path)
    assert lms.load_lms_ids(root)["1002"]["attachments"] == {A: "5003"}
    ex = lms_export.export(root, [A])
    head = next(csv.reader((root / "lms" / f"canvas_grades_{A}.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert head[-1] == A and title_and_id(head[-1]) == (A, None), "no id known: the bare column"
    assert ex["canvas_untitled"] == [A]
    text = format_summary(workflow.Report(root=root, exports=ex))
    assert "新しい課題を作ります" in text and "--canvas-assignment" in text
    lms_export.save_canvas_assignments(root, [f"{A}=はじめに (Start) (12345)"], KNOWN)
    ex = lms_export.export(root, [A])
    head = next(csv.reader((root / "lms" / f"canvas_grades_{A}.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert title_and_id(head[-1]) == ("はじめに (Start)", "12345") and ex["canvas_untitled"] == []
    lms_export.save_canvas_assignments(root, [f"{A}=777"], KNOWN)
    assert title_and_id(lms_export.load_canvas_assignments(root)[A]) == (A, "777")
    for bad in (f"{A}", f"{A}=はじめに", "99_nope=1"):
        with pytest.raises(GradeError, match="--canvas-assignment"):
            lms_export.save_canvas_assignments(root, [bad], KNOWN)


def test_canvas_feedback_zip_names_each_submission_the_way_reupload_reads_it(tmp_path, venv_path):
    root = _canvas_class(tmp_path)
    ex = lms_export.export(root, [A])
    path = root / "lms" / f"canvas_feedback_{A}.zip"
    assert path in ex["files"]
    with zipfile.ZipFile(path) as zf:
        names = sorted(zf.namelist())
    assert sorted(comment_context(n) for n in names) == [("1001", "5001"), ("1002", "5003"), ("1003", "5004")]
    assert all("/" not in n and n.endswith(".html") for n in names)
    assert "n20240_1003_5004_00_start_here.html" in names, "an all-digit name is never read as the user id"
    text = format_summary(workflow.Report(root=root, exports=ex))
    assert "Canvas のフィードバック zip 1 件" in text and "Re-upload submissions" in text
