"""Whose notebook is this: a learner and an assignment from a path inside an LMS export.

A submission belongs to the learner whose TOP-LEVEL entry holds it; the names of nested
folders and files are the learner's own data, never an identity:

- a Moodle folder ``氏名_12345_assignsubmission_file_/…`` at the top: that participant, whatever
  the folders below are called (a subfolder named like another participant's is data);
- a file at the top: Moodle's flat download ``氏名_12345_assignsubmission_file_<file>`` or
  Canvas's ``name_userid_attachmentid_<file>``; a flat Moodle name that carries the marker
  ``_<digits>_assignsubmission_file_`` twice cannot say which participant wrote it (the name
  before the marker and the file after it are both typed by a learner), so it is nobody's
  submission and reported with both ids;
- any other folder at the top: a folder export, that folder is the learner
  (``LEARNER/00_start_here.ipynb``, ``LEARNER/00_start_here/00_start_here.ipynb``); a top folder
  named after an assignment holds learner folders (``00_start_here/LEARNER/…``).

"The top" is the upload's own top, below the wrapping folders every path shares
(:func:`wrapper_depth`: a zip of ``export/alice/…``, ``export/bob/…`` is read from ``alice``,
``bob``). A wrapper is only removed when what lies under it still names two or more learners
or is LMS-shaped, so one learner's folder is never taken for a wrapper around the folders
inside it.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Canvas's names never hold "_<digits>_" (content_zipper.rb sanitize_user_name), so the first one
# ends the name; an anonymous id is alphanumeric with at least one letter (a learner named "anon")
_CANVAS = re.compile(r"^(?:(?P<alate>LATE_)?anon_(?P<anon>(?=\d*[A-Za-z])[A-Za-z0-9]+)"
                     r"|(?P<name>.+?)(?P<late>_LATE)?_(?P<uid>\d+))_(?P<sub>\d+)_(?P<file>.+)$")
_MARK = r"_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_"
# a Moodle folder ends with the marker: anchored at the end, the last marker is the LMS's
_MOODLE = re.compile(r"^(?P<name>.+)" + _MARK + "?$")
# Moodle's flat download ("without folders"): the same prefix on the file name itself
_MOODLE_FLAT = re.compile(r"^(?P<name>.+?)" + _MARK + "(?P<file>.+)$")
_ANY_MARK = re.compile(r"_\d+_assignsubmission_(?:file|onlinetext)_")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def learner_id(name: str) -> str:
    """An nbgrader student id for a learner name: the name itself when it is a safe ASCII
    identifier, otherwise ``u`` and 10 hex digits of the hash of the exact name (two names
    that differ in case, width, spacing or punctuation get two ids; the name stays in the
    CSV's name column)."""
    text = unicodedata.normalize("NFC", name)
    if _SAFE.match(text):
        return text
    return "u" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


@dataclass
class Upload:
    rel: str                 # path inside the upload (as reported)
    file: Path               # where it is readable now
    mtime: float
    learner: str | None = None
    name: str = ""
    lms_id: str = ""         # Canvas user id, Moodle participant id (per assignment)
    email: str = ""          # from the roster
    layout: str = ""         # folder, moodle, canvas; canvas_anon, moodle_group (the id is not a person's)
    late: bool = False       # the LMS marked it late (Canvas's LATE)
    attachment: str = ""     # Canvas's attachment id (its "Re-upload submissions" names feedback by it)
    assignment: str | None = None
    extras: list[Path] = field(default_factory=list)   # nbgrader's timestamp.txt, submission_secret.txt
    #: a flat Moodle name with two markers: the participant ids it could belong to (it is nobody's)
    ambiguous: list[str] = field(default_factory=list)


def _assignment_in(text: str, known: list[str]) -> str | None:
    found = [a for a in known if re.search(rf"(?<![A-Za-z0-9]){re.escape(a)}(?![A-Za-z0-9])", text)]
    return max(found, key=len) if found else None


def _lms_shaped(part: str, is_file: bool, known: list[str]) -> bool:
    if not is_file:
        return bool(_MOODLE.match(part))
    m = _CANVAS.match(part)
    return bool(_MOODLE_FLAT.match(part) or (m and _assignment_in(m.group("file"), known)))


def wrapper_depth(rels: list[str], known: list[str]) -> int:
    """How many wrapping folders every path of an upload shares (see the module's doc)."""
    parts = [PurePosixPath(r).parts for r in rels]
    depth = 0
    while parts and all(len(p) > depth + 1 for p in parts):
        first = {p[depth] for p in parts}
        if len(first) != 1 or _MOODLE.match(next(iter(first))):
            break
        below = {(p[depth + 1], len(p) == depth + 2) for p in parts}
        if len({b for b, _ in below}) < 2 and not all(_lms_shaped(b, f, known) for b, f in below):
            break
        depth += 1
    return depth


def identify(rel: str, known: list[str], top: int = 0) -> Upload:
    """Learner, name, LMS id, layout and assignment of one notebook path inside an upload
    (``top``: the wrapping folders to skip, :func:`wrapper_depth`)."""
    parts = PurePosixPath(rel).parts
    fname = parts[-1]
    mine = parts[top:] if len(parts) > top else parts[-1:]
    up = Upload(rel=rel, file=Path(), mtime=0.0)
    head = mine[0]
    moodle = _MOODLE.match(head) if len(mine) > 1 else None
    flat = _MOODLE_FLAT.match(head) if len(mine) == 1 else None
    canvas = _CANVAS.match(head) if len(mine) == 1 else None
    if flat and len(_ANY_MARK.findall(head)) > 1:
        up.ambiguous = [m.group(1) for m in re.finditer(r"_(\d+)_assignsubmission_(?:file|onlinetext)_", head)]
    elif moodle or flat:
        mm = moodle or flat
        name = unicodedata.normalize("NFC", mm.group("name"))   # exact: names are labels
        up.name, up.lms_id, up.layout, up.learner = name, mm.group("pid"), "moodle", learner_id(name)
    elif canvas:
        up.late = bool(canvas.group("alate") or canvas.group("late"))
        if canvas.group("anon"):
            up.name, up.lms_id, up.layout = f"anon_{canvas.group('anon')}", canvas.group("anon"), "canvas_anon"
            up.learner = f"anon_{canvas.group('anon')}"
        else:
            up.name, up.lms_id, up.layout = canvas.group("name"), canvas.group("uid"), "canvas"
            up.learner, up.attachment = canvas.group("uid"), canvas.group("sub")
    elif len(mine) > 1:
        folder = mine[1] if head in known and len(mine) > 2 else head   # 00_start_here/LEARNER/…
        if folder not in known:
            up.name, up.layout = unicodedata.normalize("NFC", folder), "folder"
            up.learner = learner_id(folder)
    up.assignment = _assignment_in(PurePosixPath(fname).stem, known)
    if up.assignment is None:
        for p in reversed(parts[:-1]):
            up.assignment = _assignment_in(p, known)
            if up.assignment:
                break
    return up
