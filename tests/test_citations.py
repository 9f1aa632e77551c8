"""ctxlab.labs.citations and ctxlab.widgets.citation_viewer: reading, rendering, mapping back, the fallback."""
import json
from types import SimpleNamespace

import anthropic
import pytest

from ctxlab.labs import citations
from ctxlab.plots.citations import citation_map
from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.api.client import make_client
from ctxlab.sandbox import Sandbox
from ctxlab.widgets.citation_viewer import CitationViewer, highlight_html

FILES = ["hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt", "hr_keicho.txt", "hr_telework_2025.txt"]


@pytest.fixture(scope="module")
def docs():
    by = corpus.by_file()
    return [by[f] for f in FILES]


@pytest.fixture(scope="module")
def client():
    return make_client(offline=True, sandbox=Sandbox())


@pytest.fixture(scope="module")
def resp(client, docs):
    return client.messages.create(**messages.question_request(docs, "在宅勤務手当はいくらですか？", citations=True))


TOY = [SimpleNamespace(file="a.txt", title="A", text="第1条 目的。\n第2条 範囲。"),
       ("B の規程", "<b>太字</b> & 記号。\n二行目。")]


# ---------------------------------------------------------------- reading a response


def test_collect_returns_sdk_citations_that_slice_the_source(resp, docs):
    cites = citations.collect(resp)
    assert cites, "the sandbox answer to this question cites the documents"
    for c in cites:
        assert c.type == "char_location"
        assert 0 <= c.document_index < len(docs)
        assert c.document_title == docs[c.document_index].label
        assert docs[c.document_index].text[c.start_char_index:c.end_char_index] == c.cited_text
    # more than one file is cited, so document_index is not always 0
    assert len({c.document_index for c in cites}) >= 2


def test_collect_pairs_keep_the_answer_text(resp):
    pairs = citations.collect_pairs(resp)
    assert [c for _, c in pairs] == citations.collect(resp)
    assert all(isinstance(t, str) and t for t, _ in pairs)


def test_collect_accepts_dicts_and_rejects_other_things():
    msg = {"content": [{"type": "text", "text": "前置き"},
                       {"type": "text", "text": "本文", "citations": [{"type": "char_location", "cited_text": "x",
                                                                       "document_index": 1, "document_title": "T",
                                                                       "start_char_index": 3, "end_char_index": 4}]},
                       {"type": "tool_use", "id": "t", "name": "n", "input": {}}]}
    assert [c["document_index"] for c in citations.collect(msg)] == [1]
    with pytest.raises(TypeError):
        citations.collect("not a response")


def test_render_numbers_citations_and_lists_title_range_and_text(resp):
    out = citations.render(resp)
    cites = citations.collect(resp)
    for i, c in enumerate(cites, 1):
        assert f"[{i}] {c.document_title}" in out
        assert f"文字 {c.start_char_index}–{c.end_char_index}" in out
    answer, refs = out.split("\n\n", 1)
    assert answer.count("[") >= len(cites)


def test_render_reuses_the_number_of_a_repeated_citation():
    c = {"type": "char_location", "cited_text": "同じ文。", "document_index": 0, "document_title": "T",
         "start_char_index": 0, "end_char_index": 4}
    msg = {"content": [{"type": "text", "text": "一。", "citations": [c]}, {"type": "text", "text": "二。", "citations": [c]}]}
    out = citations.render(msg)
    assert out.startswith("一。[1]二。[1]") and "[2]" not in out
    assert citations.render({"content": [{"type": "text", "text": "引用なしの答え"}]}).endswith("（引用なし）")


# ---------------------------------------------------------------- building citations


def test_cite_builds_a_valid_sdk_citation_and_checks_the_range():
    c = citations.cite(TOY, 0, 8, 15)
    assert isinstance(c, anthropic.types.CitationCharLocation)
    assert (c.document_index, c.cited_text, c.document_title) == (0, "第2条 範囲。", "A")
    assert citations.cite(TOY, 1, 0, 8).document_title == "B の規程"
    with pytest.raises(ValueError):
        citations.cite(TOY, 0, 5, 100)
    with pytest.raises(ValueError):
        citations.cite(TOY, 0, -1, 3)
    raw = citations.char_location(7, 9, 3, "any")  # values are not checked: for tests of checkers
    assert (raw.document_index, raw.start_char_index, raw.end_char_index) == (7, 9, 3)


def test_doc_accessors():
    assert messages.doc_name(TOY[0]) == "a.txt" and messages.doc_title(TOY[0]) == "A"
    assert messages.doc_name(TOY[1]) == "B の規程" and messages.doc_text(TOY[1]).startswith("<b>")
    d = corpus.by_file()["hr_keicho.txt"]
    assert messages.doc_title(d) == d.label and messages.doc_name(d) == "hr_keicho.txt"
    with pytest.raises(TypeError):
        messages.doc_text(SimpleNamespace(file="x"))


# ---------------------------------------------------------------- bundle


def test_bundle_parts_point_at_each_file_text(docs):
    b = citations.bundle(docs)
    assert len(b.parts) == len(docs)
    for p, d in zip(b.parts, docs):
        assert b.text[p.start:p.end] == d.text and p.name == d.file
    assert b.title.startswith("規程集") and b.as_document() == (b.title, b.text)


def test_bundle_locate_maps_back_and_refuses_ranges_outside_one_file(docs):
    b = citations.bundle(docs)
    p = b.parts[2]
    assert b.locate(p.start + 10, p.start + 20) == (p.name, 10, 20)
    assert b.locate(p.start, p.end) == (p.name, 0, p.end - p.start)
    with pytest.raises(ValueError):
        b.locate(0, 3)  # the first header
    with pytest.raises(ValueError):
        b.locate(b.parts[0].end - 2, b.parts[1].start + 2)  # across two files
    with pytest.raises(ValueError):
        citations.bundle([])


def test_editing_one_file_shifts_every_later_file(docs):
    edited = [docs[0], ("hr_yukyu_2025.txt", docs[1].text + "追記。"), *docs[2:]]
    a, b = citations.bundle(docs), citations.bundle(edited)
    assert [p.start == q.start for p, q in zip(a.parts, b.parts)] == [True, True, False, False]


def test_a_bundle_sent_as_one_document_has_one_index_and_one_title(client, docs):
    b = citations.bundle(docs)
    r = client.messages.create(**messages.question_request([b.as_document()], "在宅勤務手当はいくらですか？",
                                                           citations=True))
    cites = citations.collect(r)
    assert cites
    assert {c.document_index for c in cites} == {0} and {c.document_title for c in cites} == {b.title}
    for c in cites:
        name, s, e = b.locate(c.start_char_index, c.end_char_index)
        assert corpus.by_file()[name].text[s:e] == c.cited_text


# ---------------------------------------------------------------- the fallback


def test_numbered_docs_and_instruction(docs):
    nd = citations.numbered_docs(docs)
    assert [t.split(" ", 1)[0] for t, _ in nd] == [f"[{i}]" for i in range(1, len(docs) + 1)]
    assert nd[0][1] == docs[0].text
    assert f"[{len(docs)}]" in citations.numbered_instruction(len(docs))


@pytest.mark.parametrize("text, numbers, claims", [
    ("繰り越せます[3]。", [(3,)], ["繰り越せます"]),
    ("繰り越せます。[3]", [(3,)], ["繰り越せます。"]),
    ("一つ目です[1][2]。二つ目です[2, 4]。", [(1, 2), (2, 4)], ["一つ目です", "二つ目です"]),
    ("全角です［３］。隅付き【5】", [(3,), (5,)], ["全角です", "隅付き"]),
    ("前の文。後の文です [1] [1]", [(1,)], ["後の文です"]),
    ("・箇条書きの文。（[2] 給与規程）\n・次の文。（[4] 在宅勤務規程）", [(2,), (4,)], ["箇条書きの文。", "次の文。"]),
    ("番号なしの回答。[注] は番号ではない", [], []),
])
def test_parse_numbered_refs(text, numbers, claims):
    refs = citations.parse_numbered_refs(text)
    assert [r.numbers for r in refs] == numbers
    assert [r.claim for r in refs] == claims
    for r in refs:
        assert text[r.start:r.end].strip().startswith(("[", "［", "【"))


def test_numbered_ref_validity():
    refs = citations.parse_numbered_refs("あ[1]。い[0]。う[7]。え[2,9]。")
    assert [r.valid(6) for r in refs] == [True, False, False, False]
    with pytest.raises(TypeError):
        citations.parse_numbered_refs(None)


def test_citations_with_structured_output_are_refused_and_numbers_work_instead(client, docs):
    fmt = {"type": "json_schema", "schema": {"type": "object", "properties": {"answer": {"type": "string"}},
                                             "required": ["answer"], "additionalProperties": False}}
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(**messages.question_request(docs, "在宅勤務手当はいくらですか？", citations=True),
                               output_config={"format": fmt})
    assert e.value.status_code == 400 and "structured outputs" in e.value.body["error"]["message"]
    req = messages.question_request(citations.numbered_docs(docs), "在宅勤務手当はいくらですか？",
                                    system=messages.SYSTEM_PROMPT + citations.numbered_instruction(len(docs)))
    out = client.messages.create(**req, output_config={"format": fmt})
    answer = json.loads(out.content[0].text)["answer"]
    refs = citations.parse_numbered_refs(answer)
    assert refs and all(r.valid(len(docs)) for r in refs)
    # the sandbox quotes verbatim, so each claim is found in the document its number names
    assert all(any(r.claim in docs[n - 1].text for n in r.numbers) for r in refs)


# ---------------------------------------------------------------- plot


def test_plot_citation_map_draws_one_bar_per_document_plus_the_cited_ranges(resp, docs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cites = citations.collect(resp)
    ax = citation_map(docs, cites + [citations.char_location(99, 0, 1, "x")], boundaries=[100])
    assert len(ax.patches) == len(docs) + len(cites)  # the citation of a missing document is skipped
    by_height = sorted((t.get_position()[1], t.get_text()) for t in ax.get_yticklabels())
    assert [name for _, name in by_height] == [d.file for d in docs][::-1]  # the first document on top
    plt.close("all")


# ---------------------------------------------------------------- viewer


def test_highlight_html_marks_the_range_and_escapes_everything():
    text = TOY[1][1]
    h = highlight_html(text, 0, 9, context=5, heading="<見出し>")
    assert '<mark style="' in h and "&lt;b&gt;太字&lt;/b&gt;</mark>" in h
    assert "<b>" not in h and "&amp; 記号" in h and "&lt;見出し&gt;" in h
    assert h.rstrip("</div>").endswith("…")  # the text goes on after the context
    whole = highlight_html(text, 0, len(text), context=0)
    assert "…" not in whole
    for bad in [(-1, 2), (3, 2), (0, len(text) + 1)]:
        with pytest.raises(ValueError):
            highlight_html(text, *bad)


def test_viewer_state_lives_in_the_kernel(resp, docs):
    cites = citations.collect(resp)
    v = CitationViewer(cites, docs, context=40)
    assert v.index == 0 and v.current is cites[0] and "<mark" in v.html
    c = cites[0]
    assert docs[c.document_index].text[c.start_char_index:c.end_char_index].replace("&", "&amp;") in v.html
    v.next()
    assert v.index == 1 and v.dropdown.value == 1
    v.prev().prev()
    assert v.index == len(cites) - 1  # wraps around
    v.dropdown.value = 0  # what the browser does when the learner picks from the list
    assert v.index == 0 and v.html == v.html_for(0)
    v.next_button.click()
    assert v.index == 1
    v.prev_button.click()
    assert v.index == 0
    with pytest.raises(IndexError):
        v.select(len(cites))


def test_viewer_flags_stale_and_impossible_citations(docs):
    good = citations.cite(docs, 1, 10, 30)
    stale = citations.char_location(1, 10, 30, "昨年の文", docs[1].label)
    outside = citations.char_location(1, 10, 10 ** 6, "x")
    missing = citations.char_location(9, 0, 1, "x")
    v = CitationViewer([good, stale, outside, missing], docs)
    assert "一致しません" not in v.html_for(0)
    assert "<mark" in v.html_for(1) and "一致しません" in v.html_for(1)
    assert "<mark" not in v.html_for(2) and "文書" in v.html_for(2)
    assert "document_index=9" in v.html_for(3)


def test_viewer_without_citations_and_its_display_bundle(resp, docs):
    empty = CitationViewer([], docs)
    assert empty.current is None and empty.dropdown.disabled and "引用がありません" in empty.html
    assert empty.next() is empty
    v = CitationViewer(citations.collect(resp), docs)
    bundle = v._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # the stand-in is the viewer's HTML, kept from MathJax (a cited amount's "$" would start math)
    assert "<mark" in bundle["text/html"] and bundle["text/html"] == f'<div class="mathjax_ignore tex2jax_ignore">{v.html}</div>'


def test_viewer_from_responses_labels_each_citation_with_its_question(resp, docs):
    n = len(citations.collect(resp))
    assert n >= 1
    v = CitationViewer.from_responses([resp, resp], docs, questions=["質問A", "質問B"])
    assert len(v.cites) == 2 * n and v.index == 0 and v.question == "質問A"
    assert "Q1「質問A」の回答の引用" in v.html and v.dropdown.options[0][0].startswith("1. Q1 ")
    v.select(n)
    assert v.question == "質問B" and "Q2「質問B」" in v.html
    assert CitationViewer(citations.collect(resp), docs).question is None
    with pytest.raises(ValueError, match="one question per response"):
        CitationViewer.from_responses([resp], docs, questions=["a", "b"])
    with pytest.raises(ValueError, match="one question per citation"):
        CitationViewer(citations.collect(resp), docs, questions=["a"] * (n + 1))


def test_article_document_cites_whole_articles():
    from ctxlab import corpus
    from ctxlab.api.client import make_client
    from ctxlab.labs import citations as cit

    doc = corpus.by_file()["hr_telework_2025.txt"]
    art = cit.article_document(doc)
    blocks = art.block["source"]["content"]
    assert art.block["source"]["type"] == "content" and len(blocks) == len(art.labels)
    assert all(b["text"] in doc.text for b in blocks)
    i = art.labels.index("第11条（在宅勤務手当）")
    assert "5,000円" in blocks[i]["text"]
    resp = make_client(offline=True).messages.create(
        model="claude-opus-5", max_tokens=400,
        messages=[{"role": "user", "content": [art.block, {"type": "text", "text": "在宅勤務手当はいくらですか？"}]}])
    cs = cit.collect(resp)
    assert cs and all(c.type == "content_block_location" for c in cs)
    assert art.article_of(cs[0]) == "第11条（在宅勤務手当）"
    with pytest.raises(ValueError):
        art.article_of({"start_block_index": len(art.labels)})


def test_lesson_07s_article_blocks_are_not_a_constant_shift_from_the_article_numbers():
    """Issue 41 item 8: headings take blocks between chapters, so block index − article number varies (07 §5)."""
    import re
    from ctxlab import corpus
    from ctxlab.labs import citations as lab

    art = lab.article_document(corpus.by_file()["hr_telework_2025.txt"])
    shifts = {i - int(m.group(1)) for i, label in enumerate(art.labels) if (m := re.match(r"第(\d+)条", label))}
    assert len(shifts) > 1, shifts
    assert art.labels.index("第1条（目的）") == 2 and art.labels.index("第11条（在宅勤務手当）") == 15
