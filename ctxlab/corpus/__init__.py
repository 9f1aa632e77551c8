"""The corpus of 株式会社みなと計測: its regulations with metadata, and the field questions.

``ctxlab.corpus`` is the public surface; the code lives in :mod:`ctxlab.corpus.rules`
(regulations and catalog), :mod:`ctxlab.corpus.questions` (the 30 questions) and
:mod:`ctxlab.corpus.documents` (reading any folder of documents safely).
"""
from ctxlab.corpus.documents import Document, FolderReport, load_folder, read_document
from ctxlab.corpus.questions import CATEGORIES, CATEGORY_JA, QUESTIONS, Question, questions, validate_questions
from ctxlab.corpus.rules import (
    CATALOG, DEPARTMENTS, RULES_DIR, Doc, by_file, company, load, revised_pairs, scaled, total_chars, validate,
)
from ctxlab.errors import DocumentError

__all__ = [
    "CATALOG", "CATEGORIES", "CATEGORY_JA", "DEPARTMENTS", "QUESTIONS", "RULES_DIR", "Doc", "Document", "DocumentError",
    "FolderReport", "Question", "by_file", "company", "load", "load_folder", "questions", "read_document",
    "revised_pairs", "scaled", "total_chars", "validate", "validate_questions",
]
