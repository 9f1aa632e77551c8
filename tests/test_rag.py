"""ctxlab.labs.rag_lab (lesson 10) and the small additions to ctxlab.retrieval it uses."""
import pytest

import ctxlab
from ctxlab import corpus, retrieval
from ctxlab.costs import pricing
from ctxlab.labs import rag_lab as rag
from ctxlab.corpus import Question

INLINE = """年次有給休暇取扱規程

第1章　総則

第1条（目的）
この規程は、年次有給休暇（以下「年休」という。）の取扱いを定める。

第2条（適用範囲）
この規程は、正社員に適用する。

第2章　繰越し

第3条（繰越し）
付与年度の末日に残った年休は、次の付与年度に限って繰り越す。
２　繰越しできる日数の上限は20日とする。

附則
この規程は、2025年4月1日から施行する。
"""


@pytest.fixture(scope="module")
def lab():
    return rag.Lab()


# ---------------------------------------------------------------- retrieval additions


def test_inline_captions_are_article_boundaries():
    old = retrieval.chunk_by_articles(INLINE, 800, inline_captions=False)
    assert all(c.meta["articles"] == [] for c in old)  # a chunker that knows one style only
    new = retrieval.chunk_by_articles(INLINE, 800, title="年次有給休暇取扱規程")  # the default knows both
    assert [c.meta["chapter"] for c in new] == ["第1章　総則", "第2章　繰越し", "附則"]
    assert new[0].meta["articles"] == ["第1条", "第2条"]
    assert new[1].meta["headings"] == ["第3条（繰越し）"]
    assert new[1].context_header() == "年次有給休暇取扱規程 > 第2章　繰越し > 第3条（繰越し）"
    for c in new:
        assert c.text == INLINE[c.start:c.end]


def test_article_spans_cover_the_structure():
    spans = retrieval.article_spans(INLINE)
    arts = [u for u in spans if u["kind"] == "article"]
    assert [(u["article"], u["caption"]) for u in arts] == [("第1条", "（目的）"), ("第2条", "（適用範囲）"), ("第3条", "（繰越し）")]
    assert INLINE[arts[2]["start"]:arts[2]["end"]].startswith("第3条（繰越し）")
    assert "上限は20日" in INLINE[arts[2]["start"]:arts[2]["end"]]
    assert spans[-1]["kind"] == "supplementary"
    with pytest.raises(TypeError):
        retrieval.article_spans(None)


def test_corpus_article_chunks_have_real_articles(lab):
    arts = lab.chunks("articles")
    assert sum(1 for c in arts if c.meta["articles"]) > 0.8 * len(arts)
    # every document's body is covered: chunks hold every key fact of every gold file
    for q in lab.questions:
        for fact in q.key_facts:
            assert any(fact in c.text for c in arts if c.doc_id in q.gold_files) or q.category == "whole"


# ---------------------------------------------------------------- headers


def test_situate_names_regulation_chapter_and_article_range():
    c = retrieval.chunk_by_size(INLINE, 60, 0)[1]
    h = rag.situate(c, INLINE, "年次有給休暇取扱規程")
    assert h.startswith("年次有給休暇取扱規程 > ")
    assert "第" in h and "条" in h
    whole = retrieval.Chunk(None, INLINE, 0, len(INLINE))
    assert rag.situate(whole, INLINE, "T") == "T > 第1章　総則〜附則 > 第1条（目的）〜第3条（繰越し）"
    art3 = next(c for c in retrieval.chunk_by_articles(INLINE, 800, inline_captions=True) if "第3条" in c.meta["articles"])
    assert rag.situate(art3, INLINE, "T") == "T > 第2章　繰越し > 第3条（繰越し）"


def test_cut_article_finds_a_split_article():
    text = INLINE
    start = text.index("付与年度の末日")
    c = retrieval.Chunk(None, text[:start + 5], 0, start + 5)
    cut = rag.cut_article(c, text)
    assert cut["article"] == "第3条" and cut["inside"].endswith("付与年度の") and "上限は20日" in cut["outside"]
    end = text.index("附則")
    assert rag.cut_article(retrieval.Chunk(None, text[:end], 0, end), text) is None


# ---------------------------------------------------------------- recall and fusion


def test_lesson_names_are_the_retrieval_implementations():
    """Lesson 10 calls these through rag_lab; there is one implementation, in ctxlab.retrieval."""
    for name in ("facts_held", "fact_recall", "hit_recall", "rrf", "bigram_tokens", "line_tokens"):
        assert getattr(rag, name) is getattr(retrieval, name), name


def test_line_tokens_equal_whole_text_tokens(lab):
    for c in lab.chunks("size")[:20] + lab.chunks("articles")[:20]:
        assert retrieval.line_tokens(c.text) == retrieval.tokenize(c.text)


# ---------------------------------------------------------------- the lab


def test_lab_measures_every_method(lab):
    assert len(lab.questions) == 25 and all(q.key_facts for q in lab.questions)
    assert {q.category for q in lab.left_out} == {"unanswerable"}
    rows = lab.table(20)
    assert [r["method"] for r in rows] == list(rag.METHODS)
    for r in rows:
        assert 0 <= r["one_minus_recall"] <= 1
        assert abs(r["recall"] + r["one_minus_recall"] - 1) < 1e-12
    # recall grows with k, and per_question agrees with the mean and with fact_recall
    for name in rag.METHODS:
        curve = lab.curve(name, range(1, 51))
        assert curve == sorted(curve)
        assert abs(curve[19] - lab.recall(name, 20)) < 1e-12
        pq = lab.per_question(name, 20)
        texts, files = lab.texts(name), lab.files(name)
        for r, q, v in zip(lab.rankings(name), lab.questions, pq):
            assert v == retrieval.fact_recall(r, texts, files, q.key_facts, q.gold_files, 20)
        hits = lab.per_question(name, 20, any_hit=True)
        for r, q, v in zip(lab.rankings(name), lab.questions, hits):
            assert v == retrieval.hit_recall(r, texts, files, q.key_facts, q.gold_files, 20)


def test_contextual_index_matches_from_chunks(lab):
    """Header tokens + cached chunk tokens give the same index as BM25Index.from_chunks."""
    arts = lab.sets["articles"]
    ref = retrieval.BM25Index([h + "\n" + c.text for h, c in zip(arts.headers, arts.chunks)])
    mine = lab.index("articles", True, "lemma")
    for q in lab.questions[:5]:
        assert ref.search(q.question, 10) == mine.search(q.question, 10)


def test_fusion_beats_the_baseline_with_margin(lab):
    base = lab.recall(rag.BASELINE, 20)
    assert lab.recall_with(retrieval.rrf, 20) > base + 0.02
    assert lab.recall("ctx_hybrid_articles", 20) == lab.recall_with(retrieval.rrf, 20)


def test_whole_questions_are_the_limit(lab):
    best = "ctx_hybrid_articles"
    whole = [q for q in lab.questions if q.category == "whole"]
    short = [q for q in whole if lab.per_question(best, 20)[lab.questions.index(q)] < 1]
    assert short, "some whole question stays below recall 1 at k = 20"
    for q in short:
        k = lab.needed_k(best, q)
        assert k is None or k > 20
    single = [q for q in lab.questions if q.category == "single"]
    assert all(lab.first_relevant(best, q) is not None for q in single)


def test_use_context_replaces_headers_and_results(lab):
    fresh = rag.Lab()
    before = fresh.recall("ctx_bm25_articles", 20)
    n = len(fresh.chunks("articles"))
    fresh.use_context("articles", rag.Contextualized(["無関係な見出し"] * n, "test"))
    assert fresh.sets["articles"].context_label == "test"
    assert fresh.recall("ctx_bm25_articles", 20) != before
    assert fresh.recall("bm25_articles", 20) == lab.recall("bm25_articles", 20)
    with pytest.raises(ValueError):
        fresh.use_context("articles", rag.Contextualized(["x"], "bad"))


def test_format_table_labels_published_figures(lab):
    text = rag.format_table(lab.table(20), rag.published_rows(), 20, extra=[("+ リランキング", "オンラインのみ")])
    assert "公表値" in text and "測定ではない" in text and "5.7%" in text and "—" in text
    assert [r["one_minus_recall"] for r in rag.published_rows()] == [0.057, 0.037, 0.029, 0.019]


# ---------------------------------------------------------------- contextualizer and its cost


def test_context_request_caches_the_document_and_puts_the_chunk_after():
    req = rag.context_request("DOC", "CHUNK")
    doc_block, chunk_block = req["messages"][0]["content"]
    assert doc_block["cache_control"] == {"type": "ephemeral"} and "DOC" in doc_block["text"]
    assert "cache_control" not in chunk_block and "CHUNK" in chunk_block["text"]
    assert "system" not in req
    g = rag.context_request("DOC", "CHUNK", glossary={"給料": "給与"}, ttl="1h")
    assert "給料 = 給与" in g["system"] and g["messages"][0]["content"][0]["cache_control"]["ttl"] == "1h"
    with pytest.raises(ValueError):
        rag.context_request("D", "C", ttl="2h")


def test_context_cost_formula():
    m = pricing.get_model(rag.CONTEXT_MODEL)       # today's small model; 8,000 tokens are in its lower tier
    assert rag.CONTEXT_MODEL == pricing.SMALL_MODEL and m.status == "latest"
    c = rag.context_cost(8000, [800] * 10)
    d = 8000 + rag.DOC_WRAPPER_TOKENS
    p = m.input_per_token
    assert abs(c.cache_write - 1.25 * d * p) < 1e-12
    assert abs(c.cache_read - 9 * 0.1 * d * p) < 1e-12
    assert abs(c.uncached_input - 10 * (800 + rag.CHUNK_PROMPT_TOKENS) * p) < 1e-12
    assert abs(c.output - 10 * rag.CONTEXT_OUTPUT_TOKENS * m.output_per_token) < 1e-12
    assert c.calls == 10
    per_m = rag.cost_per_million_document_tokens(8000, 800)
    assert abs(per_m.per_million_document_tokens - c.total * 1e6 / 8000) < 1e-9
    no_cache = rag.context_cost(8000, [800] * 10, cache=False)
    assert no_cache.cache_write == no_cache.cache_read == 0 and no_cache.total > c.total
    # below the minimum cacheable length nothing is cached
    n = pricing.min_cacheable_tokens(m)[0] - rag.DOC_WRAPPER_TOKENS - 100
    short = rag.context_cost(n, [50, 50])
    assert short.cache_write == 0 and abs(short.uncached_input - (2 * (n + rag.DOC_WRAPPER_TOKENS) + 100
                                                                 + 2 * rag.CHUNK_PROMPT_TOKENS) * p) < 1e-12
    assert rag.context_cost(1000, []).total == 0
    with pytest.raises(ValueError):
        rag.context_cost(-1, [1])


def test_corpus_context_cost_sums_documents(lab):
    arts = lab.chunks("articles")
    total = rag.corpus_context_cost(lab.docs, arts)
    assert total.calls == len(arts)
    one = lab.docs[0]
    mine = [c for c in arts if c.doc_id == one.file]
    assert abs(rag.corpus_context_cost([one], mine).total
               - rag.context_cost(ctxlab.estimate.estimate_text(one.text), [c.meta["tokens"] for c in mine]).total) < 1e-12


def test_contextualize_offline_is_the_labelled_fixed_header(lab):
    client = ctxlab.make_client(offline=True)
    arts = lab.chunks("articles")[:5]
    ctx = rag.contextualize(arts, lab.docs, client)
    assert ctx.method == rag.OFFLINE_CONTEXT_LABEL == "決まった手順の文脈付与（オフライン）"
    assert ctx.headers == lab.sets["articles"].headers[:5]
    with pytest.raises(ValueError):
        rag.contextualize(arts, [], client)


def test_context_requests_hit_the_cache_in_the_sandbox(lab):
    client = ctxlab.make_client(sandbox=ctxlab.Sandbox())
    big = max(lab.docs, key=lambda d: len(d.text))
    chunks = [c for c in lab.chunks("articles") if c.doc_id == big.file][:3]
    usages = [client.messages.create(**rag.context_request(big.text, c.text)).usage for c in chunks]
    assert usages[0].cache_creation_input_tokens > 0 and usages[0].cache_read_input_tokens == 0
    for u in usages[1:]:
        assert u.cache_read_input_tokens == usages[0].cache_creation_input_tokens
        assert u.cache_creation_input_tokens == 0


def test_rerank_is_skipped_offline(lab, capsys):
    assert rag.rerank(lab, ctxlab.make_client(offline=True)) is None
    assert "オフラインでは実行せず" in capsys.readouterr().out


def test_rerank_parsing_and_request():
    assert rag.parse_rerank("順に [3, 0, 7, 3, 99]", 5) == [3, 0]
    assert rag.parse_rerank("なし", 5) == []
    req = rag.rerank_request("有給は？", ["a", "b"], top_n=1)
    assert '<candidate id="1">' in req["messages"][0]["content"][0]["text"]
    assert "有給は？" in req["messages"][0]["content"][1]["text"]


def test_embedding_backend_reports_what_is_importable():
    assert rag.embedding_backend() in (None, "sentence_transformers", "fastembed")
    assert rag.EMBEDDING_MODEL["licence"] == "MIT"


def test_lab_accepts_other_corpora():
    docs = corpus.scaled(1)[:3]
    q = Question("t1", "繰越の上限は？", "", ("20日",), (docs[0][0],), "single")
    small = rag.Lab(docs, [q])
    assert small.questions == [q] and len(small.chunks("size")) > 0
    assert 0 <= small.recall("ctx_hybrid_articles", 5) <= 1


def test_lab_counts_each_given_fact_like_fact_recall():
    """Two key facts that are one text after fact_key are both found (the lab once counted them as one of two)."""
    docs = corpus.scaled(1)[:3]
    name, text = docs[0]
    fact = next(t for t in ("20日", "1日", "1年") if t in text)
    q = Question("t1", "繰越の上限は？", "", (fact, f" {fact} "), (name,), "single")
    small = rag.Lab(docs, [q])
    for method in rag.METHODS:
        r = small.rankings(method)[0]
        value = small.per_question(method, 50)[0]
        assert value in (0.0, 1.0)  # both facts or neither, never half
        assert value == retrieval.fact_recall(r, small.texts(method), small.files(method), q.key_facts, (name,), 50)
    assert small.needed_k("bm25_articles", q) == small.first_relevant("bm25_articles", q, judge="passed")
    with pytest.raises(ValueError, match="ks is empty"):
        small.curve("bm25_articles", [])
    with pytest.raises(ValueError, match="positive int"):
        small.per_question("bm25_articles", True)


# ---------------------------------------------------------------- the online paths, driven through the sandbox


@pytest.fixture
def pretend_online(monkeypatch):
    """An SDK client on a stand-in API (the sandbox served at another URL): ctxlab treats it as the real API."""
    import anthropic
    import httpx2

    from ctxlab.api._ledger import LEDGER

    LEDGER.reset()  # a fresh kernel's budget: no spend, not stopped
    client = anthropic.Anthropic(api_key="test-key", base_url="http://stand-in.invalid", max_retries=0,
                                 http_client=httpx2.Client(transport=ctxlab.Sandbox().transport()))
    assert not ctxlab.is_offline(client)
    return client


def test_contextualize_online_over_budget_falls_back(lab, pretend_online, monkeypatch, capsys):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "0.001")
    ctx = rag.contextualize(lab.chunks("articles"), lab.docs, pretend_online, progress=False)
    assert ctx.method == rag.OFFLINE_CONTEXT_LABEL
    assert "CTXLAB_BUDGET_USD" in capsys.readouterr().out


def test_contextualize_online_calls_the_api_in_order(lab, pretend_online, monkeypatch):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "5")
    big = max(lab.docs, key=lambda d: len(d.text))
    chunks = [c for c in lab.chunks("articles") if c.doc_id == big.file][:3]
    ctx = rag.contextualize(chunks, [big], pretend_online, progress=False, glossary={"有給": "年休"})
    assert ctx.method.startswith("Claude による文脈付与") and len(ctx.headers) == 3
    assert all(h.strip() for h in ctx.headers) and ctx.cost_usd > 0
    expected = rag.context_cost(ctxlab.estimate.estimate_text(big.text), [c.meta["tokens"] for c in chunks])
    assert ctx.cost_usd < 2 * expected.total


def test_rerank_online_returns_permutations(pretend_online, monkeypatch):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "5")
    docs = corpus.scaled(1)[:4]
    q = Question("t1", "安全衛生委員会は何をしますか？", "", ("委員会",), tuple(n for n, _ in docs), "single")
    small = rag.Lab(docs, [q])
    out = rag.rerank(small, pretend_online, candidates=10, top_n=5)
    base = small.rankings("ctx_hybrid_articles")
    assert out is not None and len(out) == 1 and sorted(out[0]) == sorted(base[0])
