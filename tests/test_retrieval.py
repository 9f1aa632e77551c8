"""Japanese retrieval: tokenizer, sentence spans, chunking, BM25, recall@k."""
from __future__ import annotations

import re

import pytest

from ctxlab import retrieval
from ctxlab.retrieval import (
    BM25Index,
    Chunk,
    chunk_by_articles,
    chunk_by_size,
    mean_recall_at_k,
    recall_at_k,
    split_sentences,
    tokenize,
)
from ctxlab.retrieval import tokens as search_tokens
from ctxlab.estimate import estimate_text

REGULATION = """年次有給休暇取扱規程

第1章　総則

（目的）
第1条　この規程は、就業規則第20条に基づき、年次有給休暇（以下「有給休暇」という。）の取扱いを定める。

（適用範囲）
第2条　この規程は、正社員及び契約社員に適用する。
２　パートタイマーについては、別に定める。

第2章　付与及び繰越

（付与日数）
第3条　入社6か月後に10日を付与し、以後1年ごとに所定の日数を付与する。

（繰越）
第4条　当年度に使用しなかった有給休暇は、翌年度に限り繰り越すことができる。ただし、繰越の上限は20日とする。

（時季指定）
第5条　会社は、年5日について時季を指定して取得させる。

第3章　申請

（申請手続）
第6条　有給休暇を取得しようとする者は、3日前までに所属長に申請しなければならない。

附則
この規程は、2025年4月1日から施行する。
"""


# ---------------------------------------------------------------- tokenizer


def test_tokenizer_splits_japanese_into_words():
    toks = tokenize("有給休暇の繰越上限")
    assert len(toks) > 2
    assert "有給" in toks or "繰越" in toks
    assert "休暇" in toks and "上限" in toks
    assert "有給休暇の繰越上限" not in toks  # not one big token
    assert all(len(t) < 6 for t in toks)  # words, and no character split either:
    assert any(len(t) >= 2 for t in toks)


def test_tokenizer_drops_punctuation_and_normalizes():
    toks = tokenize("　繰越は、２０日まで！（上限）ＡＢＣ")
    assert not any(re.fullmatch(r"[\W_]+", t) for t in toks), toks
    assert "20" in toks and "abc" in toks  # NFKC + lower-case
    # inflected forms meet at the lemma: a question and a rule in another inflection match
    assert "繰り越す" in tokenize("繰り越せますか") and "繰り越す" in tokenize("繰り越すことができる")


def test_tagger_is_created_once():
    tokenize("一度目")
    tagger = search_tokens._tagger
    tokenize("二度目の呼び出し")
    assert tagger is not None and search_tokens._tagger is tagger


def test_tokenize_rejects_non_strings():
    with pytest.raises(TypeError):
        tokenize(["有給"])


# ---------------------------------------------------------------- sentences


def test_sentence_spans_are_exact():
    text = "第1条　有給休暇は、翌年度に限り繰り越す。ただし上限は20日とする。\n\n　申請は？　3日前まで！\n最後の行"
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == [
        "第1条　有給休暇は、翌年度に限り繰り越す。",
        "ただし上限は20日とする。",
        "申請は？",
        "3日前まで！",
        "最後の行",
    ]
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert spans == sorted(spans)


def test_terminator_inside_brackets_does_not_split():
    text = "年次有給休暇（以下「有給休暇」という。）の取扱いを定める。彼は「はい。」と答えた。"
    assert [text[s:e] for s, e in split_sentences(text)] == [
        "年次有給休暇（以下「有給休暇」という。）の取扱いを定める。",
        "彼は「はい。」と答えた。",
    ]


def test_sentence_edge_cases():
    assert split_sentences("") == []
    assert split_sentences("\n\n　\n") == []
    assert [t for t in ("本当？！ええ。",) for s, e in split_sentences(t)] == ["本当？！ええ。"] * 2
    text = "本当？！ええ。"
    assert [text[s:e] for s, e in split_sentences(text)] == ["本当？！", "ええ。"]


# ---------------------------------------------------------------- chunks


def test_chunk_by_articles_offsets_and_headings():
    chunks = chunk_by_articles(REGULATION, max_tokens=800, doc_id="yukyu", title="年次有給休暇取扱規程")
    assert all(isinstance(c, Chunk) for c in chunks)
    for c in chunks:
        assert c.text == REGULATION[c.start : c.end]
        assert c.doc_id == "yukyu"
        assert c.meta["tokens"] == estimate_text(c.text) <= 800
    chapters = [c.meta["chapter"] for c in chunks]
    assert chapters == ["第1章　総則", "第2章　付与及び繰越", "第3章　申請", "附則"]
    assert chunks[1].meta["articles"] == ["第3条", "第4条", "第5条"]
    assert chunks[1].meta["headings"][1] == "第4条（繰越）"
    assert chunks[0].text.startswith("年次有給休暇取扱規程")  # the title joins the first article
    assert chunks[1].text.startswith("第2章　付与及び繰越")  # a chapter heading joins its articles
    assert "（繰越）\n第4条" in chunks[1].text  # the caption stays with its article
    assert chunks[1].context_header() == "年次有給休暇取扱規程 > 第2章　付与及び繰越 > 第3条（付与日数）〜第5条（時季指定）"
    # every article is in exactly one chunk
    for n in range(1, 7):
        assert sum(f"第{n}条" in c.meta["articles"] for c in chunks) == 1


def test_chunk_by_articles_splits_and_merges_by_size():
    small = chunk_by_articles(REGULATION, max_tokens=60)
    assert all(c.text == REGULATION[c.start : c.end] for c in small)
    assert all(c.meta["tokens"] <= 60 for c in small)
    assert len(small) > 4
    long_article = "第1章　総則\n第1条　" + "社員は規程を守る。" * 200 + "\n第2条　以上。\n"
    parts = chunk_by_articles(long_article, max_tokens=300)
    first = [c for c in parts if c.meta["articles"] == ["第1条"]]
    assert len(first) > 1 and all(c.meta["part"][1] == len(first) for c in first)
    assert all(c.meta["tokens"] <= 300 and c.text == long_article[c.start : c.end] for c in parts)
    overlapped = chunk_by_articles(REGULATION, max_tokens=120, overlap=40)
    assert all(c.text == REGULATION[c.start : c.end] for c in overlapped)
    assert any(b.start < a.end for a, b in zip(overlapped, overlapped[1:]))


def test_chunk_by_size_offsets_sizes_overlap():
    text = REGULATION * 3
    chunks = chunk_by_size(text, size_tokens=120, overlap_tokens=30, doc_id="x")
    assert len(chunks) > 3
    for c in chunks:
        assert c.text == text[c.start : c.end]
        assert estimate_text(c.text) <= 120
    for a, b in zip(chunks, chunks[1:]):
        assert a.start < b.start <= a.end  # moving forward, overlapping or touching
    assert any(b.start < a.end for a, b in zip(chunks, chunks[1:]))
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    # one sentence longer than the size is cut by characters
    long = "あ" * 1000 + "。"
    pieces = chunk_by_size(long, size_tokens=300, overlap_tokens=0)
    assert "".join(p.text for p in pieces) == long
    with pytest.raises(ValueError):
        chunk_by_size(text, size_tokens=100, overlap_tokens=100)


# ---------------------------------------------------------------- BM25

DOCS = [
    "年次有給休暇は、翌年度に限り20日を上限として繰り越すことができる。",
    "出張の日当は1日3000円、宿泊料は1泊12000円を上限とする。",
    "パスワードは12文字以上とし、他のサービスと使い回してはならない。",
    "育児休業は、子が1歳に達するまでの間、申し出により取得できる。",
    "通勤手当は、公共交通機関の定期代の実費を支給する。",
    "秘密文書を社外に持ち出すときは、文書管理責任者の承認を得る。",
]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("有給休暇の繰越上限は何日？", 0),
        ("出張したときの宿泊料", 1),
        ("パスワードの長さ", 2),
        ("育児休業はいつまで取れますか", 3),
        ("通勤手当の支給額", 4),
        ("秘密文書の持ち出し", 5),
    ],
)
def test_bm25_finds_the_right_document(query, expected):
    index = BM25Index(DOCS)
    hits = index.search(query, k=3)
    assert hits[0][0] == expected
    assert all(score > 0 for _, score in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_bm25_edge_cases():
    index = BM25Index(DOCS)
    assert len(index) == len(DOCS)
    assert index.search("量子コンピュータ", k=5) == []  # no shared term: nothing, not noise
    assert index.search("", k=5) == []
    assert len(index.search("は", k=2)) <= 2
    assert BM25Index([]).search("有給", k=3) == []
    by_tokens = BM25Index(tokens=[tokenize(d) for d in DOCS])
    assert by_tokens.search("宿泊料", k=1)[0][0] == 1
    with pytest.raises(ValueError):
        index.search("有給", k=0)
    with pytest.raises(ValueError):
        BM25Index(DOCS, tokens=[["x"]])


def test_bm25_over_chunks_with_context_headers():
    chunks = chunk_by_articles(REGULATION, max_tokens=80, title="年次有給休暇取扱規程")
    plain = BM25Index.from_chunks(chunks)
    contextual = BM25Index.from_chunks(chunks, contextual=True)
    best = plain.search("有給休暇の申請は何日前まで？", k=1)[0][0]
    assert "3日前まで" in chunks[best].text
    assert len(contextual) == len(chunks)


def test_recall_at_k():
    ranked = [(4, 9.0), (2, 7.5), (0, 3.1), (5, 1.0)]
    assert recall_at_k(ranked, {2}, k=1) == 0.0
    assert recall_at_k(ranked, {2}, k=2) == 1.0
    assert recall_at_k(ranked, [0, 5, 3], k=4) == pytest.approx(2 / 3)
    assert recall_at_k(["a", "b"], "b", k=20) == 1.0
    assert mean_recall_at_k([(ranked, {4}), (ranked, {3})], k=20) == 0.5
    with pytest.raises(ValueError):
        recall_at_k(ranked, set(), k=5)
    with pytest.raises(ValueError):
        recall_at_k(ranked, {1}, k=0)


def test_fact_recall_counts_facts_of_gold_files_once():
    texts = ["上限は20日", "20日と12文字以上", "上限は 20 日", "無関係"]
    files = ["a", "a", "b", "a"]
    facts, gold = ("20日", "12文字以上"), ("a",)
    assert retrieval.fact_recall([3, 2, 0, 1], texts, files, facts, gold, 2) == 0.0   # b is not a gold file
    assert retrieval.fact_recall([3, 2, 0, 1], texts, files, facts, gold, 3) == 0.5
    assert retrieval.fact_recall([0, 1], texts, files, facts, gold, 50) == 1.0
    assert retrieval.fact_recall([0, 0, 0], texts, files, ("20日", "20日"), gold, 3) == 1.0
    assert retrieval.hit_recall([3, 0], texts, files, facts, gold, 2) == 1.0
    assert retrieval.hit_recall([3, 2], texts, files, facts, gold, 2) == 0.0
    with pytest.raises(ValueError):
        retrieval.fact_recall([0], texts, files, (), gold, 1)
    with pytest.raises(ValueError):
        retrieval.fact_recall([0], texts, files, facts, gold, 0)


def test_facts_held_normalizes_width_and_separators():
    assert retrieval.facts_held("上限は５０，０００円", ["50,000円"]) == {"50,000円"}
    assert retrieval.facts_held("上限は 50000 円", ["50,000円", "20日"]) == {"50,000円"}


def test_rrf():
    assert retrieval.rrf([[1, 2, 3], [3, 1, 2]]) == [1, 3, 2]
    assert retrieval.rrf([]) == []
    assert retrieval.rrf([[5, 4, 3]]) == [5, 4, 3]
    assert retrieval.rrf([[1, 2], [3, 4]]) == [1, 3, 2, 4]  # ties keep first appearance
    assert retrieval.rrf([[1, 1, 2]]) == [1, 2]
    # x at ranks 1 and 4, y at 2 and 2: k decides
    rankings = [["x", "y"], ["q", "y", "p", "x"]]
    assert retrieval.rrf(rankings, k=60).index("y") < retrieval.rrf(rankings, k=60).index("x")
    assert retrieval.rrf(rankings, k=1).index("x") < retrieval.rrf(rankings, k=1).index("y")
    with pytest.raises(ValueError):
        retrieval.rrf([[1]], k=-1)


def test_bigram_tokens():
    assert retrieval.bigram_tokens("繰越上限") == ["繰越", "越上", "上限"]
    assert retrieval.bigram_tokens("Ａ・支払日") == ["a", "支払", "払日"]
    assert retrieval.bigram_tokens("") == []
    with pytest.raises(TypeError):
        retrieval.bigram_tokens(3)


def test_one_recall_measure_by_ids_and_by_facts():
    """recall_at_k and fact_recall are the same curve: the share of the relevant items covered so far."""
    assert retrieval.recall_curve([["a"], [], ["b", "x"]], {"a", "b"}, 5) == [0.5, 0.5, 1.0, 1.0, 1.0]
    assert retrieval.recall_curve([[], ["b"]], {"a", "b"}, 3, any_hit=True) == [0.0, 1.0, 1.0]
    assert retrieval.recall_curve([], {"a"}, 2) == [0.0, 0.0]
    texts, files = ["20日まで", "無関係", "12文字以上"], ["a", "a", "a"]
    as_ids = ["20日", "—", "12文字以上"]  # what each chunk covers, written as an id
    for k, expected in ((1, 0.5), (2, 0.5), (3, 1.0)):
        assert retrieval.fact_recall([0, 1, 2], texts, files, ("20日", "12文字以上"), ("a",), k) == expected
        assert recall_at_k(as_ids, {"20日", "12文字以上"}, k) == expected
    with pytest.raises(ValueError, match="depth"):
        retrieval.recall_curve([["a"]], {"a"}, 0)


def test_recall_edge_cases_of_the_unified_measure():
    # a bool is not a count (recall_at_k once took k=True as 1)
    with pytest.raises(ValueError, match="positive int"):
        recall_at_k(["a"], {"a"}, k=True)
    # hit_recall of a question without key facts is an error, as for fact_recall (it once returned 0.0)
    with pytest.raises(ValueError, match="unanswerable"):
        retrieval.hit_recall([0], ["x"], ["a"], (), ("a",), 1)
    with pytest.raises(ValueError, match="no questions"):
        mean_recall_at_k([], k=5)


def test_fact_key_folds_width_case_spaces_and_separators():
    assert retrieval.fact_key("上限は ５０，０００ 円") == "上限は50000円"
    assert retrieval.fact_key("暗号化ＵＳＢメモリ") == retrieval.fact_key("暗号化usbメモリ") == "暗号化usbメモリ"
    assert retrieval.facts_held("暗号化USBメモリを使う", ["暗号化ｕｓｂメモリ"]) == {"暗号化ｕｓｂメモリ"}


def test_every_regulation_of_the_corpus_has_article_boundaries():
    from ctxlab import corpus

    for d in corpus.load(current_only=False):
        chunks = retrieval.chunk_by_articles(d.text, 800, title=d.title)
        articles = [a for c in chunks for a in c.meta["articles"]]
        assert "第1条" in articles, d.file
        assert len(articles) >= 5, (d.file, articles)


def test_bm25s_default_splitter_is_the_word_pattern_not_a_japanese_tokenizer():
    """quizzes/10_rag_lab.yaml c10-1 b: bm25s' default token_pattern (\\w\\w+) leaves Japanese in long runs."""
    import inspect

    import bm25s

    assert inspect.signature(bm25s.tokenize).parameters["token_pattern"].default == r"(?u)\b\w\w+\b"
    got = bm25s.tokenize(["給与は、毎月25日に支払う。"], stopwords=None, return_ids=False, show_progress=False)
    assert got == [["給与は", "毎月25日に支払う"]]
