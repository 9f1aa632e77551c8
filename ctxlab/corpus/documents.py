"""Reading document folders safely: encodings, binary files, sizes.

Japanese offices often keep text in Shift_JIS (CP932). A file that is not UTF-8 but
decodes as CP932 is read and reported, so the learner knows to convert it
(``iconv -f CP932 -t UTF-8``); anything else gets an error that says what to do.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab.errors import DocumentError

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".csv", ".tsv", ".json", ".html", ".htm", ".xml", ".rst"}
MAX_FILE_BYTES = 20 * 1024 * 1024




@dataclass
class Document:
    path: Path
    text: str
    encoding: str = "utf-8"

    @property
    def name(self) -> str:
        return self.path.name


@dataclass
class FolderReport:
    documents: list[Document]
    warnings: list[str] = field(default_factory=list)

    @property
    def chars(self) -> int:
        return sum(len(d.text) for d in self.documents)


def read_document(path: str | Path, max_bytes: int | None = None) -> Document:
    """Read one text file as NFC text; raise DocumentError for what cannot be read."""
    path = Path(path)
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if not path.is_file():
        raise DocumentError(f"{path}: ファイルがありません (file not found)")
    size = path.stat().st_size
    if size > max_bytes:
        raise DocumentError(
            f"{path}: {size / 1e6:.1f} MB は大きすぎます (over {max_bytes // 1_000_000} MB). "
            "分割するか、--total-tokens でトークン数を直接指定してください。"
        )
    raw = path.read_bytes()
    if b"\x00" in raw[:65536]:
        raise DocumentError(
            f"{path}: バイナリファイルのようです (contains NUL bytes). "
            "PDF や Word はテキストに変換してからフォルダに入れてください。"
        )
    encoding = "utf-8"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        try:
            text = raw.decode("cp932")
            encoding = "cp932"
        except UnicodeDecodeError:
            raise DocumentError(
                f"{path}: UTF-8 でも Shift_JIS (CP932) でも読めません (byte {exc.start}). "
                "UTF-8 で保存し直してください (e.g. iconv -f ENCODING -t UTF-8)."
            ) from None
    return Document(path, unicodedata.normalize("NFC", text), encoding)


def load_folder(folder: str | Path, suffixes: set[str] | None = None) -> FolderReport:
    """Read every text file of a folder (recursively, sorted by path).

    Empty files are skipped with a warning; CP932 files are read with a warning; a missing
    or empty folder, a binary file or an unreadable file raises DocumentError.
    """
    folder = Path(folder)
    suffixes = TEXT_SUFFIXES if suffixes is None else suffixes
    if not folder.exists():
        raise DocumentError(f"{folder}: フォルダがありません (folder not found). パスを確かめてください。")
    if not folder.is_dir():
        raise DocumentError(f"{folder}: フォルダではありません (not a folder). 文書を入れたフォルダを指定してください。")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    if not files:
        raise DocumentError(f"{folder}: 空のフォルダです (no files). 文書 (.txt, .md) を入れてください。")
    report = FolderReport([])
    for p in files:
        if p.suffix.lower() not in suffixes:
            raw_head = p.read_bytes()[:4096]
            if b"\x00" in raw_head:
                raise DocumentError(
                    f"{p}: バイナリファイルです. PDF や Word はテキストに変換してからフォルダに入れてください。"
                )
            report.warnings.append(f"{p.name}: 拡張子 {p.suffix or '(なし)'} はテキストとして読みます")
        doc = read_document(p)
        if not doc.text.strip():
            report.warnings.append(f"{p.name}: 空のファイルなので数えません")
            continue
        if doc.encoding != "utf-8":
            report.warnings.append(
                f"{p.name}: Shift_JIS (CP932) として読みました。UTF-8 への変換をおすすめします "
                f"(iconv -f CP932 -t UTF-8)"
            )
        report.documents.append(doc)
    if not report.documents:
        raise DocumentError(f"{folder}: 中身のあるファイルがありません (all files are empty).")
    return report
