"""Lesson 11 (ctxlab decide): reading a user's own document folder, including PDF and Word.

:func:`read_folder` walks a folder recursively and returns a :class:`Folder`: the documents it
read (text, markdown, PDF through pypdf, Word .docx through python-docx), the files it skipped
with the reason (hidden, binary, unreadable, empty, a PDF without a text layer), duplicates (same
text) counted once and named, and notes (CP932 files). A folder that gives no document raises
:class:`~ctxlab.errors.DocumentError` with what to do. Plain-text files are read by
:func:`ctxlab.corpus.documents.read_document` (the one reader of encodings).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab import _progress
from ctxlab.corpus.documents import MAX_FILE_BYTES, read_document
from ctxlab.errors import DocumentError

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)
WORD_SUFFIXES = (".docx",)
#: show a progress bar from this many files on
PROGRESS_FROM = 200


@dataclass(frozen=True)
class UserDoc:
    """One document of a user's folder, shaped like the course's documents (``file``, ``title``, ``text``)."""

    file: str          # path relative to the folder, with "/" (a subfolder is the filter's key)
    text: str
    kind: str          # "text", "pdf", "docx"
    pages: int = 0     # PDF pages read

    @property
    def title(self) -> str:
        return Path(self.file).stem

    @property
    def department(self) -> str | None:
        """The first subfolder (the metadata key a filter can use), or None at the top level."""
        parts = self.file.split("/")
        return parts[0] if len(parts) > 1 else None


@dataclass
class Folder:
    """What :func:`read_folder` found."""

    root: Path
    documents: list[UserDoc]
    skipped: list[tuple[str, str]] = field(default_factory=list)        # (file, reason)
    duplicates: list[tuple[str, str]] = field(default_factory=list)     # (file, the file it repeats)
    notes: list[str] = field(default_factory=list)

    @property
    def chars(self) -> int:
        return sum(len(d.text) for d in self.documents)

    @property
    def pdf_pages(self) -> int:
        return sum(d.pages for d in self.documents)

    def departments(self) -> dict[str, int]:
        """Files per first subfolder; empty when any document sits at the top level (no key for every file)."""
        out: dict[str, int] = {}
        for d in self.documents:
            if d.department is None:
                return {}
            out[d.department] = out.get(d.department, 0) + 1
        return out if len(out) > 1 else {}


def _pdf_text(path: Path) -> tuple[str, int]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception:  # noqa: BLE001 - any failure means "needs a password"
            raise DocumentError("パスワードで保護された PDF です") from None
    pages = [p.extract_text() or "" for p in reader.pages]
    return "\n".join(pages), len(pages)


def _docx_text(path: Path) -> str:
    import docx

    d = docx.Document(str(path))
    parts = [p.text for p in d.paragraphs]
    for table in d.tables:
        for row in table.rows:
            parts.append("\t".join(c.text for c in row.cells))
    return "\n".join(parts)


def _read_one(path: Path, rel: str) -> tuple[UserDoc | None, str | None, str | None]:
    """(document, reason it was skipped, note) of one file."""
    suffix = path.suffix.lower()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None, f"{MAX_FILE_BYTES // 1_000_000} MB を超えるので読みません（分割してください）", None
        if suffix in PDF_SUFFIXES:
            text, pages = _pdf_text(path)
            if not text.strip():
                return None, f"PDF の {pages} ページから文字が取れません（画像だけの PDF: OCR してから入れてください）", None
            return UserDoc(rel, text, "pdf", pages), None, None
        if suffix in WORD_SUFFIXES:
            text = _docx_text(path)
            if not text.strip():
                return None, "Word 文書に本文がありません", None
            return UserDoc(rel, text, "docx"), None, None
        if suffix in TEXT_SUFFIXES:
            doc = read_document(path)
            if not doc.text.strip():
                return None, "空のファイル", None
            note = (f"{rel}: Shift_JIS (CP932) として読みました。UTF-8 への変換をおすすめします (iconv -f CP932 -t UTF-8)"
                    if doc.encoding != "utf-8" else None)
            return UserDoc(rel, doc.text, "text"), None, note
        with path.open("rb") as f:
            binary = b"\x00" in f.read(4096)
        kind = "バイナリファイル" if binary else f"対応していない形式（{suffix or '拡張子なし'}）"
        return None, f"{kind}: .md / .txt / .pdf / .docx だけを読みます", None
    except DocumentError as exc:
        return None, str(exc).split(": ", 1)[-1], None
    except OSError as exc:
        return None, f"読めません（{exc.strerror or exc}）", None
    except Exception as exc:  # noqa: BLE001 - a broken PDF or .docx raises the library's own errors
        return None, f"壊れているか読めないファイル（{type(exc).__name__}）", None


def _walk(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every file under root (sorted), and the hidden ones (skipped, with the reason)."""
    files, hidden = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for d in sorted(dirnames):
            if d.startswith("."):
                hidden.append((str((base / d).relative_to(root)) + "/", "隠しフォルダ"))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            p = base / name
            if name.startswith("."):
                hidden.append((str(p.relative_to(root)), "隠しファイル"))
            elif p.is_file():
                files.append(p)
    return sorted(files), sorted(hidden)


def read_folder(folder: str | Path, *, progress: bool = True, exclude: tuple[str, ...] = ()) -> Folder:
    """Read every document under ``folder`` (see the module docstring); ``exclude``: file names to leave out."""
    root = Path(folder)
    if not root.exists():
        raise DocumentError(f"{root}: フォルダがありません (folder not found). --docs に文書のフォルダを指定してください。")
    if not root.is_dir():
        raise DocumentError(f"{root}: フォルダではありません (not a folder). --docs には文書を入れたフォルダを指定してください。")
    files, skipped = _walk(root)
    files = [p for p in files if p.name not in exclude]
    if not files:
        raise DocumentError(f"{root}: 空のフォルダです (no files). .md / .txt / .pdf / .docx の文書を入れてください。")
    out = Folder(root, [], list(skipped))
    seen: dict[str, str] = {}
    bar = _progress.progress(files, desc="文書を読む", unit="件", enabled=progress and len(files) >= PROGRESS_FROM)
    for p in bar:
        rel = p.relative_to(root).as_posix()
        doc, reason, note = _read_one(p, rel)
        if doc is None:
            out.skipped.append((rel, reason or "読めません"))
            continue
        if note:
            out.notes.append(note)
        digest = hashlib.blake2b(doc.text.strip().encode("utf-8"), digest_size=16).hexdigest()
        if digest in seen:
            out.duplicates.append((rel, seen[digest]))
            continue
        seen[digest] = rel
        out.documents.append(doc)
    if not out.documents:
        reasons = "; ".join(f"{f}: {r}" for f, r in out.skipped[:5])
        raise DocumentError(f"{root}: 読める文書が 1 つもありません（{len(out.skipped)} 件を飛ばしました: {reasons}）。"
                            "テキストのある .md / .txt / .pdf / .docx を入れてください。")
    return out
