"""Sync each lesson pair in solutions/: NN_name.ipynb <-> NN_name.py (jupytext percent format).

An instructor edits either file (the notebook in JupyterLab, the script in an editor) and
runs ``make notebooks``. For each pair this script

1. decides which side holds the edit. When the two files have the same cells there is
   nothing to decide. When they differ, a file counts as unedited when its cells are those
   of its last committed version (``git show HEAD:...``) or those of the last sync in this
   checkout (recorded in .lesson-sync.json, untracked); the edited side wins.
   Modification times are not used: after a fresh ``git clone`` they are checkout order,
   and when both files were edited the newer one would silently drop the other's edit
   (which is what a plain ``jupytext --sync`` does). When the choice is ambiguous (both
   sides edited, neither edited but the pair already differs, or nothing to compare with)
   nothing is written: the script names the files and says how to choose (``--keep PATH``,
   ``make notebooks KEEP=PATH``);
2. writes the .py with jupytext (percent format, the cell metadata that
   solutions/jupytext.toml lets through: nbgrader's);
3. rebuilds the .ipynb from that text with jupytext, so it carries exactly the same cells,
   and gives every cell the id it had before (jupytext's own cell matching, as in
   ``jupytext --update``); cells that are new get their nbgrader grade_id or a fresh id.
   Outputs and execution counts are empty (a notebook run and saved in JupyterLab loses
   them here), and the notebook metadata is the python3 kernelspec only, so JupyterLab
   opens it without asking for a kernel.

A file is written only when its bytes change, so a second run changes nothing.

Usage: python tools/sync_lessons.py [--root DIR] [--check] [--keep PATH ...] [LESSON ...]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from jupytext.combine import map_outputs_to_inputs
from jupytext.config import JupytextConfiguration, load_jupytext_configuration_file

ROOT = Path(__file__).resolve().parent.parent
RECORD = ".lesson-sync.json"  # at the course root: each lesson's cells at its last sync (a digest)
TEXT_FMT = "py:percent"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}


class SyncError(Exception):
    """A pair cannot be synced without a choice from the instructor (nothing was written)."""


@dataclass
class Pair:
    lesson: str
    ipynb: Path
    py: Path

    def side(self, name: str) -> Path:
        return self.ipynb if name == "ipynb" else self.py


def load_config(root: Path) -> JupytextConfiguration:
    path = root / "solutions" / "jupytext.toml"
    if not path.is_file():
        raise SyncError(f"{path} is missing: it configures the lesson pairs (formats = \"ipynb,py:percent\")")
    return load_jupytext_configuration_file(str(path))


def pairs(root: Path, lessons: list[str] | None = None) -> list[Pair]:
    """One pair per lesson folder solutions/NN_name/ that holds NN_name.ipynb or NN_name.py."""
    src = root / "solutions"
    found = []
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        ipynb, py = folder / f"{folder.name}.ipynb", folder / f"{folder.name}.py"
        if ipynb.exists() or py.exists():
            found.append(Pair(folder.name, ipynb, py))
    if lessons:
        unknown = sorted(set(lessons) - {p.lesson for p in found})
        if unknown:
            raise SyncError(f"no such lesson in {src}: {', '.join(unknown)}")
        found = [p for p in found if p.lesson in lessons]
    return found


# -- what a file says --------------------------------------------------------------------------

def to_text(nb, config) -> str:
    return jupytext.writes(nb, TEXT_FMT, config=config)


def cells_of_text(text: str, config) -> list[tuple]:
    nb = jupytext.reads(text, TEXT_FMT, config=config)
    return [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]


def cells(path_or_text, kind: str, config) -> list[tuple]:
    """The cells a file carries into the pair: type, source and the metadata the .py keeps.

    An .ipynb goes through the text format first, so outputs, execution counts, ids and
    JupyterLab's own cell metadata (collapsed, scrolled, ...) are not part of the comparison.
    """
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    if kind == "ipynb":
        text = to_text(nbformat.reads(text, as_version=4), config)
    return cells_of_text(text, config)


def digest(cell_list: list[tuple]) -> str:
    return hashlib.sha256(json.dumps(cell_list, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def read_record(root: Path) -> dict[str, str]:
    try:
        record = json.loads((root / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def committed(root: Path, path: Path) -> str | None:
    """The file's text at HEAD, or None (not a git checkout, or the file is not committed)."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        rel = path.resolve().relative_to(Path(top).resolve()).as_posix()
        proc = subprocess.run(["git", "-C", top, "show", f"HEAD:{rel}"], capture_output=True, check=True)
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    return proc.stdout.decode("utf-8")


# -- which side wins ---------------------------------------------------------------------------

def _how_to_choose(root: Path, pair: Pair) -> str:
    rel = lambda p: p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)
    return (f"  keep the notebook:  make notebooks KEEP={rel(pair.ipynb)}\n"
            f"  keep the script:    make notebooks KEEP={rel(pair.py)}\n"
            f"  (or: python tools/sync_lessons.py --keep PATH; compare first with "
            f"`jupytext --diff {rel(pair.ipynb)} {rel(pair.py)}`)")


def source_side(root: Path, pair: Pair, config, keep: str | None = None, synced: str | None = None) -> str:
    """'ipynb' or 'py': the side whose cells the pair takes. Raises SyncError when ambiguous.

    ``synced`` is the digest of the pair's cells at the last sync in this checkout, if known.
    """
    if keep:
        return keep
    if not pair.ipynb.exists():
        return "py"
    if not pair.py.exists():
        return "ipynb"
    now = {"ipynb": cells(pair.ipynb, "ipynb", config), "py": cells(pair.py, "py", config)}
    if now["ipynb"] == now["py"]:
        return "ipynb"  # in sync: the notebook keeps its ids, the script is re-rendered (same cells)
    edited = {}
    for kind in ("ipynb", "py"):
        base = committed(root, pair.side(kind))
        unedited = {synced} | ({digest(cells(base, kind, config))} if base is not None else set())
        edited[kind] = digest(now[kind]) not in unedited
    if edited["ipynb"] and not edited["py"]:
        return "ipynb"
    if edited["py"] and not edited["ipynb"]:
        return "py"
    if all(edited.values()):
        why = ("both files were edited since the last commit and the last sync (or were never "
               "committed), so keeping either one would drop the other's edit")
    else:
        why = ("neither file changed since the last commit or the last sync, but the pair differs "
               "(committed that way, or a file was restored), so there is no telling which one holds the edit")
    raise SyncError(f"{pair.ipynb.name} and {pair.py.name} ({pair.lesson}) have different cells: {why}.\n"
                    f"Nothing was written. Choose the file to keep (the other one is rewritten from it):\n"
                    + _how_to_choose(root, pair))


# -- writing -----------------------------------------------------------------------------------

def _ids(new_cells, old_nb) -> list[str]:
    """Each new cell's id: the id of the old cell jupytext matches it with, else grade_id or a fresh one."""
    mapping = map_outputs_to_inputs(new_cells, old_nb.cells) if old_nb is not None else [None] * len(new_cells)
    ids, used = [], set()
    for cell, j in zip(new_cells, mapping):
        candidates = []
        if j is not None and old_nb.cells[j].get("id"):
            candidates.append(old_nb.cells[j]["id"])
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id:
            candidates.append(grade_id)
        candidates.append(cell.get("id") or nbformat.v4.new_code_cell().id)
        cid = next(c for c in candidates if c not in used)
        while cid in used:  # jupytext's random id clashed: draw again
            cid = nbformat.v4.new_code_cell().id
        used.add(cid)
        ids.append(cid)
    return ids


def render(pair: Pair, side: str, config) -> tuple[str, str]:
    """The (ipynb, py) texts the pair gets when ``side`` wins."""
    old_nb = nbformat.read(pair.ipynb, as_version=4) if pair.ipynb.exists() else None
    if side == "ipynb":
        py_text = to_text(old_nb, config)
    else:
        py_text = to_text(jupytext.reads(pair.py.read_text(encoding="utf-8"), TEXT_FMT, config=config), config)
    built = jupytext.reads(py_text, TEXT_FMT, config=config)
    cells_out = []
    for cell, cid in zip(built.cells, _ids(built.cells, old_nb)):
        new = (nbformat.v4.new_code_cell if cell.cell_type == "code" else
               nbformat.v4.new_markdown_cell if cell.cell_type == "markdown" else nbformat.v4.new_raw_cell)
        cells_out.append(new(cell.source, metadata=dict(cell.metadata), id=cid))  # no outputs, no count
    nb = nbformat.v4.new_notebook(cells=cells_out, metadata={"kernelspec": KERNELSPEC,
                                                             "language_info": LANGUAGE_INFO})
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n", py_text  # nbformat.write ends the file with a newline too


def _write(path: Path, text: str, check: bool) -> bool:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    if not check:
        path.write_text(text, encoding="utf-8")
    return True


def sync(root: Path = ROOT, lessons: list[str] | None = None, keep: list[str | Path] = (),
         check: bool = False) -> list[str]:
    """Sync the pairs; return the files written (with check: the files that would be).

    Every pair is decided before anything is written: when one is ambiguous, SyncError
    names it and no file changes.
    """
    root = Path(root).resolve()
    config = load_config(root)
    todo = pairs(root, lessons)
    kept = {}
    for k in keep:
        path = Path(k)
        if not path.is_absolute():  # relative to the course root (as the messages print it), else to cwd
            path = root / k if (root / k).exists() else Path.cwd() / k
        path = path.resolve()
        match = [(p, kind) for p in todo for kind in ("ipynb", "py") if p.side(kind).resolve() == path]
        if not match:
            raise SyncError(f"--keep {k}: not a lesson file (solutions/NN_name/NN_name.ipynb or .py)")
        if not path.exists():
            raise SyncError(f"--keep {k}: the file does not exist")
        pair, kind = match[0]
        if kept.get(pair.lesson, kind) != kind:
            raise SyncError(f"--keep names both files of {pair.lesson}: keep one")
        kept[pair.lesson] = kind
    record = read_record(root)
    errors, plans = [], []
    for pair in todo:
        try:
            plans.append((pair, source_side(root, pair, config, kept.get(pair.lesson), record.get(pair.lesson))))
        except SyncError as e:
            errors.append(str(e))
    if errors:
        raise SyncError("\n\n".join(errors))
    written = []
    for pair, side in plans:
        ipynb_text, py_text = render(pair, side, config)
        # the script first, then the notebook: JupyterLab (jupytext) trusts a text file newer than its .ipynb
        for path, text in ((pair.py, py_text), (pair.ipynb, ipynb_text)):
            if _write(path, text, check):
                written.append(path.relative_to(root).as_posix())
        record[pair.lesson] = digest(cells_of_text(py_text, config))
    if not check:
        _write(root / RECORD, json.dumps(record, indent=1, sort_keys=True) + "\n", check)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    ap.add_argument("--root", type=Path, default=ROOT, help="course root (holds solutions/)")
    ap.add_argument("--keep", action="append", default=[], metavar="PATH",
                    help="the file of a pair to keep when both differ (the other is rewritten from it)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    args = ap.parse_args(argv)
    keep = [k for arg in args.keep for k in arg.split()]  # make notebooks KEEP="a.py b.ipynb"
    try:
        written = sync(args.root, args.lessons, keep, check=args.check)
    except SyncError as e:
        print(f"sync_lessons: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(("out of date: " if args.check else "synced ") + path)
    if args.check and written:
        print("run `make notebooks` to sync the lesson pairs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
