"""The corpus and the 30 field questions are sound."""
import unicodedata
from collections import Counter

import pytest

from ctxlab import corpus


def test_corpus_validates():
    assert corpus.validate() == []


def test_corpus_size_and_shape():
    docs = corpus.load(current_only=False)
    assert 45 <= len(docs) <= 55
    total = corpus.total_chars(docs)
    assert 197_000 * 0.9 <= total <= 197_000 * 1.1
    assert set(d.dept for d in docs) == set(corpus.DEPARTMENTS)
    for d in docs:
        assert unicodedata.is_normalized("NFC", d.text)
        assert "第1条" in d.text or "第一条" in d.text
        assert "附則" in d.text


def test_revised_pairs_disagree():
    pairs = corpus.revised_pairs()
    assert len(pairs) >= 4
    for old, new in pairs:
        assert old.title == new.title and old.effective_date < new.effective_date
        assert not old.current and new.current
    current = {d.file for d in corpus.load()}
    assert all(new.file in current and old.file not in current for old, new in pairs)


def test_questions_validate():
    assert corpus.validate_questions() == []


def test_question_mix():
    qs = corpus.questions()
    assert len(qs) == 30
    cats = Counter(q.category for q in qs)
    for c in ("multi", "whole", "contradiction", "unanswerable"):
        assert cats[c] >= 4, cats
    assert cats["single"] >= 1
    assert any(q.question == "有給の繰越上限は？" for q in qs)
    for q in qs:
        if q.category == "multi":
            assert len(q.gold_files) >= 2
        if q.category == "contradiction":
            files = corpus.by_file()
            assert any(not files[g].current for g in q.gold_files) or any(files[g].supersedes for g in q.gold_files)


def test_unanswerable_topics_are_absent():
    text = "".join(d.text for d in corpus.load(current_only=False))
    for topic in ("誕生日休暇", "社員食堂", "ストックオプション", "ペット", "駐輪場", "社員旅行"):
        assert topic not in text


def _broken_copy(tmp_path, mutate):
    import shutil

    dest = tmp_path / "rules"
    shutil.copytree(corpus.RULES_DIR, dest)
    mutate(dest)
    return corpus.validate(dest)


def test_validation_catches_broken_data(tmp_path):
    import json

    def bad_supersedes(d):
        cat = json.loads((d / "catalog.json").read_text(encoding="utf-8"))
        cat["documents"][3]["supersedes"] = "nope.txt"
        (d / "catalog.json").write_text(json.dumps(cat, ensure_ascii=False), encoding="utf-8")

    assert any("supersedes nope.txt" in p for p in _broken_copy(tmp_path / "a", bad_supersedes))

    def not_utf8(d):
        (d / "hr_tsukin.txt").write_bytes("通勤手当規程".encode("cp932"))

    assert any("not UTF-8" in p for p in _broken_copy(tmp_path / "b", not_utf8))

    def not_nfc(d):
        p = d / "hr_tsukin.txt"
        p.write_text(unicodedata.normalize("NFD", p.read_text(encoding="utf-8")) + "ガ", encoding="utf-8")

    assert any("not NFC" in p for p in _broken_copy(tmp_path / "c", not_nfc))

    def too_small(d):
        (d / "hr_tsukin.txt").write_text("通勤手当規程\n\n第1条", encoding="utf-8")

    assert any("outside" in p for p in _broken_copy(tmp_path / "d", too_small))

    def missing(d):
        (d / "hr_tsukin.txt").unlink()

    assert any("missing" in p for p in _broken_copy(tmp_path / "e", missing))


def test_question_validation_catches_bad_gold(tmp_path):
    import json

    lines = corpus.QUESTIONS.read_text(encoding="utf-8").splitlines()
    q = json.loads(lines[0])
    q["gold_files"] = ["nope.txt"]
    q2 = json.loads(lines[1])
    q2["key_facts"] = ["この文字列はどこにもない"]
    p = tmp_path / "q.jsonl"
    p.write_text("\n".join([json.dumps(q, ensure_ascii=False), json.dumps(q2, ensure_ascii=False)]), encoding="utf-8")
    problems = corpus.validate_questions(p)
    assert any("nope.txt" in x for x in problems)
    assert any("appears in no gold file" in x for x in problems)


def test_scaled_corpus_is_deterministic():
    a = corpus.scaled(3)
    b = corpus.scaled(3)
    assert a == b
    n = len(corpus.load())
    assert len(a) == 3 * n
    assert len({name for name, _ in a}) == len(a)
    assert sum(len(t) for _, t in a) > 2.9 * corpus.total_chars(corpus.load())
    with pytest.raises(ValueError):
        corpus.scaled(0)
