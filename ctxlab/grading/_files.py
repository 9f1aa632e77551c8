"""Files a learner hands in, read safely: a zip extracted, a folder copied, a notebook checked.

One learner's file is that learner's problem. :func:`extract_zip` leaves out an entry it cannot
write (a name over 255 bytes) or that is over :data:`MAX_FILE_MB`; :func:`copy_tree` copies a
folder without following any link (a link is reported, never read); :func:`check_notebook`
says why a notebook cannot be graded: too large, nesting too deep to parse, not a notebook, or
nbgrader metadata that would stop nbgrader's whole run (:func:`nbgrader_metadata_problem`).
The callers (:mod:`~ctxlab.grading.workflow`, :mod:`~ctxlab.grading.exchange`) report each
with the learner it belongs to and go on with the rest of the class.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import time
import zipfile
import zlib
from pathlib import Path, PurePosixPath

#: the largest file intake reads (a lesson notebook with its outputs is a few MB; the 10 MB
#: output of a runaway print still fits): a bigger one is reported and never read into memory
MAX_FILE_MB = 50
#: the deepest folder intake reads (an LMS export is 2 to 4 levels deep): deeper ones would
#: exhaust file descriptors and Python's recursion while walking
MAX_DEPTH = 16


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The entry's real name: zips without the UTF-8 flag (Windows, some LMS) store
    cp437-decoded bytes, which are usually UTF-8 or CP932 (Japanese Windows)."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.filename.encode("cp437", errors="replace")
    for enc in ("utf-8", "cp932"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    return info.filename


def extract_zip(path: Path, dest: Path) -> list[tuple[str, str]]:
    """Extract a zip into dest with decoded names, safe paths and the entries' times.

    An entry that cannot be extracted (a name longer than the file system allows, a file
    over :data:`MAX_FILE_MB`, damaged data: :data:`_CORRUPT`) is left out: returns (entry name, why) for each, for the
    learner's record; the other entries are extracted."""
    skipped = []
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = _zip_name(info)
            parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
            if not parts:
                continue
            if len(parts) > MAX_DEPTH:
                skipped.append((name, _too_deep()))
                continue
            if info.file_size > MAX_FILE_MB * 2**20:
                skipped.append((name, _too_large(info.file_size)))
                continue
            target = dest.joinpath(*parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
            except (OSError, *_CORRUPT) as exc:
                try:
                    target.unlink(missing_ok=True)   # a partly written file (disk full, a corrupted entry)
                except OSError:
                    pass
                skipped.append((name, _os_reason(exc) if isinstance(exc, OSError) else _corrupt(exc)))
                continue
            try:
                t = time.mktime(info.date_time + (0, 0, -1))
                os.utime(target, (t, t))
            except (OverflowError, ValueError):
                pass
    return skipped


#: what reading one damaged entry of a zip raises: altered deflate data (zlib.error), a bad CRC or
#: header (BadZipFile), data cut short (EOFError), an unknown method or an encrypted entry
_CORRUPT = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)


def _corrupt(exc: BaseException) -> str:
    return (f"zip の中のこのファイルが壊れていて読めません（{type(exc).__name__}: {str(exc)[:80]}）。"
            "LMS からもう一度ダウンロードするか、提出し直してもらってください")


def _too_large(size: int) -> str:
    return (f"大きすぎます（{size / 2**20:.0f} MB、上限 {MAX_FILE_MB} MB）。出力を消して"
            "（Kernel → Restart Kernel and Clear Outputs）保存し直し、提出し直してください")


def _too_deep() -> str:
    return f"フォルダが深すぎます（{MAX_DEPTH} 段まで）。ノートブックだけを提出し直してください"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "名前が長すぎて書き出せません（255 バイトまで）。短い名前で提出し直してください"
    return f"コピーできません（{exc.strerror or type(exc).__name__}）"


def _copy_capped(src, target: Path) -> bool:
    """Copy an open file into target, at most :data:`MAX_FILE_MB` (a file that grows while it
    is copied is stopped there); False, and nothing left behind, when it was larger."""
    limit = MAX_FILE_MB * 2**20
    with open(target, "wb") as out:
        while chunk := src.read(min(2**20, limit + 1 - out.tell())):
            out.write(chunk)
            if out.tell() > limit:
                break
        whole = out.tell() <= limit
    if not whole:
        target.unlink()
    return whole


def copy_tree(src: Path, dest: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Copy a folder into ``dest`` without following any symbolic link; returns (the links
    found, as paths inside ``src``; (path, why) of the files left out).

    A link is data, never followed: it is neither read, nor copied, nor resolved (its target
    is not reported either). Only regular files are copied, each opened with ``O_NOFOLLOW``
    relative to its folder's descriptor (:func:`os.fwalk`), so a link swapped in while the
    copy runs is refused too; files over :data:`MAX_FILE_MB` (also one that grows while it is
    copied) and folders deeper than :data:`MAX_DEPTH` are left out. File times are kept (the
    newest of two submissions is chosen by them)."""
    src, dest = Path(src), Path(dest)
    links: list[str] = []
    skipped: list[tuple[str, str]] = []
    if src.is_symlink():
        return [src.name], []
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    for dirpath, dirnames, filenames, dirfd in os.fwalk(src, follow_symlinks=False):
        rel_dir = Path(dirpath).relative_to(src)
        try:
            (dest / rel_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            skipped.append((rel_dir.as_posix(), _os_reason(exc)))
            dirnames.clear()
            continue
        for name in list(dirnames) + filenames:
            rel = (rel_dir / name).as_posix()
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as exc:
                skipped.append((rel, _os_reason(exc)))
                continue
            if stat.S_ISLNK(st.st_mode):
                links.append(rel)
                if name in dirnames:
                    dirnames.remove(name)
                continue
            if name in dirnames:
                if len(rel_dir.parts) + 1 >= MAX_DEPTH:
                    skipped.append((rel, _too_deep()))
                    dirnames.remove(name)
                continue
            try:
                fd = os.open(name, flags, dir_fd=dirfd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:   # it became a link after the stat
                    links.append(rel)
                else:
                    skipped.append((rel, _os_reason(exc)))
                continue
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode):
                    skipped.append((rel, "通常のファイルではありません"))
                    continue
                if st.st_size > MAX_FILE_MB * 2**20:
                    skipped.append((rel, _too_large(st.st_size)))
                    continue
                target = dest / rel_dir / name
                try:
                    whole = _copy_capped(fh, target)
                except OSError as exc:
                    skipped.append((rel, _os_reason(exc)))
                    continue
                if not whole:
                    skipped.append((rel, _too_large(MAX_FILE_MB * 2**20 + 1)))
                    continue
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return links, skipped


def check_notebook(path: Path) -> tuple[str | None, int]:
    """(why the file cannot be graded or None, number of nbgrader cells).

    Besides JSON and nbformat: the file's size (at most :data:`MAX_FILE_MB`), nesting too
    deep to parse (``RecursionError``), and the nbgrader metadata that nbgrader cannot grade
    (:func:`nbgrader_metadata_problem`)."""
    import nbformat

    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"読めません（{exc.strerror or type(exc).__name__}）", 0
    if size > MAX_FILE_MB * 2**20:
        return _too_large(size), 0
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return "UTF-8 のテキストではありません", 0
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"JSON として読めません（{exc.msg}, {exc.lineno} 行目）", 0
    except RecursionError:
        return "入れ子（[ や {）が深すぎて読めません。配布されたノートブックで解き直してください", 0
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return "ノートブックの形ではありません（cells がありません）", 0
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several kinds (RecursionError included)
        return f"ノートブックとして読めません（{type(exc).__name__}: {str(exc)[:120]}）", 0
    problem = nbgrader_metadata_problem(nb)
    if problem:
        return problem, 0
    return None, sum(1 for c in nb.cells if c.get("metadata", {}).get("nbgrader"))


def nbgrader_metadata_problem(nb) -> str | None:
    """Why nbgrader's autograde cannot grade this notebook's nbgrader metadata, or None.

    nbgrader's own validator (``CheckCellMetadata``) runs after ``DeduplicateIds`` and
    ``OverwriteCells``, which restore a grade cell's source, points and lock but never its
    schema version. So two faults found here stop nbgrader for sure, and not only for this
    learner: a schema version other than nbgrader's (``"nbgrader": {}`` has none) raises
    ``SchemaTooOldError`` (or ``...TooNew``), which ends nbgrader's whole run with every later
    learner of the batch ungraded; and a grade id used twice, whose earlier cell
    ``DeduplicateIds`` empties to ``"nbgrader": {}``, with the same end. Other metadata errors
    are left to nbgrader, which fails that submission alone."""
    from nbgrader.nbgraderformat import MetadataValidator
    from nbgrader.nbgraderformat.common import SchemaMismatchError

    validator = MetadataValidator()
    seen: dict[str, int] = {}
    for n, cell in enumerate(nb.cells, 1):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            continue
        where = f"セル {n}" + (f"（{meta['grade_id']}）" if isinstance(meta, dict) and meta.get("grade_id") else "")
        if not isinstance(meta, dict):
            return f"{where} の nbgrader メタデータが辞書ではありません。配布版のノートブックに解答を写して提出し直してください"
        try:
            validator.validate_cell(cell)
        except SchemaMismatchError as exc:
            return (f"{where} の nbgrader メタデータが壊れています（schema_version が {exc.actual_version}、nbgrader が"
                    f"読めるのは {exc.expected_version}。\"nbgrader\": {{}} だけのセルも同じ）。nbgrader の採点全体が止まるため"
                    "採点していません。そのセルを消すか、配布版のセルに解答を写して提出し直してください")
        except Exception:  # noqa: S112 (left to nbgrader: OverwriteCells may restore it)
            continue
        gid = meta.get("grade_id")
        if gid and (meta.get("grade") or meta.get("solution") or meta.get("locked")):
            if gid in seen:
                return (f"セル {seen[gid]} とセル {n} の grade id が同じ（{gid}）です。コピーしたセルを消して"
                        "提出し直してください")
            seen[gid] = n
    return None
