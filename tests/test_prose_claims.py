"""Directional claims in the lessons' prose (「…を下回る」「…のほうが高い」「…側に見積もる」), each checked against
what the executed lesson printed (issue 43: prose that cannot drift). One test per claim; each docstring quotes the
sentence, and each test first finds the sentence, so that a rewritten sentence fails here rather than going unchecked.

The lessons are read as the site build executed them (build/site/executed, the ``executed_lessons`` fixture: no second
execution); tools/drift_check.py runs these same tests on the lessons executed with another default model.
"""
from __future__ import annotations

import re

import nbformat
import pytest

import prose_numbers as pn


@pytest.fixture(scope="module")
def lesson(executed_lessons):
    cache = {}

    def get(name):
        if name not in cache:
            nb = nbformat.read(executed_lessons / f"{name}.ipynb", as_version=4)
            cache[name] = {s.heading: s for s in pn.sections(nb)}
        return cache[name]
    return get


def section(lesson, name, prefix, sentence):
    """The printed output of the section whose heading starts with ``prefix``, after checking that its prose
    still says ``sentence`` (whitespace ignored)."""
    sec = next((s for h, s in lesson(name).items() if h.startswith(prefix)), None)
    assert sec is not None, f"{name}: no section {prefix!r}: update this test with the lesson"
    prose = re.sub(r"\s+", "", "".join(sec.markdown))
    assert re.sub(r"\s+", "", sentence) in prose, f"{name} §{prefix}: the sentence changed: 「{sentence}」"
    return sec.printed


def num(s: str) -> float:
    return float(s.replace(",", ""))


# ------------------------------------------------------------------ 00

def test_00_few_questions_favour_long_context_on_both_models(lesson):
    """00 §5: 「どちらのモデルでも、質問が少ない側ではロングコンテキストが安くなります。」"""
    out = section(lesson, "00_start_here", "5.", "どちらのモデルでも、質問が少ない側ではロングコンテキストが安くなります。")
    rows = re.findall(r"^(Claude \S+ [\d.]+)\s+(\d+)\s+(?:5m|1h)\s+\d+%\s+\$[\d,.]+\s+\$[\d,.]+\s+(\S+)$", out, re.M)
    models = {m for m, _, _ in rows}
    assert len(models) == 2, rows
    for m in models:
        fewest = min((int(q), who) for mm, q, who in rows if mm == m)
        assert fewest[1] == "ロングコンテキスト", (m, fewest)


def test_00_one_question_a_day_caching_costs_more_than_none(lesson):
    """00 §5: 「キャッシュ込みのほうが高くなります。質問がこれほど少ないなら、キャッシュを付けないのが安い選択です。」"""
    out = section(lesson, "00_start_here", "5.", "キャッシュ込みのほうが高くなります。")
    cached, none = re.search(r"1 日 1 問（ヒット率 0%）: キャッシュ込み \$([\d,.]+) / キャッシュなし \$([\d,.]+)", out).groups()
    assert num(cached) > num(none)


# ------------------------------------------------------------------ 03

def test_03_a_single_cached_call_costs_more_than_sending_everything(lesson):
    """03 付録 C.3（任意）: 「$k = 1$ では 1 を上回ります。割増を払っただけで、割引を一度も受け取っていない状態です。」"""
    out = section(lesson, "03_prompt_caching", "付録 C", "$k = 1$ では 1 を上回ります。")
    row = re.search(r"^\s*1\s+([\d.]+)\s+([\d.]+)\s*$", out, re.M)
    assert row and num(row.group(1)) > 1 and num(row.group(2)) > 1, row


def test_03_the_cache_pays_from_the_second_call_at_5m_and_later_at_1h(lesson):
    """03 付録 C.3's table (optional appendix): the relative cost per call falls below 1 (sending everything) after the first call."""
    out = section(lesson, "03_prompt_caching", "付録 C", "割増を払っただけで、割引を一度も受け取っていない状態です。")
    rows = {int(k): (num(a), num(b)) for k, a, b in re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s*$", out, re.M)}
    assert rows[2][0] < 1 and all(rows[k][0] < 1 and rows[k][1] < 1 for k in rows if k >= 3), rows


# ------------------------------------------------------------------ 04

def test_04_at_20_a_day_only_the_1h_ttl_reaches_80_percent(lesson):
    """04 §9: 「この合成トラフィックでは、1 日 20 問でヒット率 80% に届くのは 1 時間 TTL のほうで、…」"""
    out = section(lesson, "04_ttl", "9.", "1 日 20 問でヒット率 80% に届くのは 1 時間 TTL のほうで")
    five = re.search(r"^5 分 TTL でヒット率 80% 以上: (.*)$", out, re.M).group(1)
    hour = re.search(r"^1 時間 TTL でヒット率 80% 以上: (.*)$", out, re.M).group(1)
    assert "朝夕に集中・20 問" in hour and "朝夕に集中・20 問" not in five
    m5 = re.search(r"1 日 20 問（朝夕に集中）・TTL 5 分: (\d+)%", out)
    m1 = re.search(r"1 日 20 問（朝夕に集中）・TTL 1 時間: (\d+)%", out)
    assert int(m5.group(1)) < 80 <= int(m1.group(1))


# ------------------------------------------------------------------ 05

def test_05_todays_opus_crossing_moves_back_right_with_many_questions(lesson):
    """05 §9（任意）: 「読み出しが安くなった今日のモデルでは、質問の多い側で交点が右へ戻ります。」 (today's Opus, the default)"""
    out = section(lesson, "05_crossover", "9.", "読み出しが安くなった今日のモデルでは、質問の多い側で交点が右へ戻ります。")
    back = re.search(r"質問が増えると交点が文書の多い側へ戻るモデル:\s*(.*)$", out, re.M).group(1)
    todays = re.findall(r"^\| (\d+) \| [^|]+ \| [^|]+ \| [^|]+ \| (Claude Opus [\d.]+) \| ([\d,]+) \|", out, re.M)
    assert todays, "the table of 05 §9 lost today's Opus"
    opus = todays[0][1]
    assert opus in back, (opus, back)
    by_q = {int(q): num(x) for q, m, x in todays if m == opus}
    assert by_q[100] > by_q[20], by_q


def test_05_at_20_a_day_retrieval_wins_under_the_limit_with_r_minus_s_negative(lesson):
    """05 exercise 3 / §8: r − s is negative, yet at 20 a day 「その k での上限 rho_limit が ρ を上回るので検索が勝つ」;
    at 2 a day 「s が大きく、上限が負になって」."""
    out = section(lesson, "05_crossover", "8.", "ドルの試算（1〜5 節）を、ρ–k 図の上に置いてみます。")
    pat = (r"1 日\s+(\d+) 問: .*?ρ = ([\d.]+)、上限 (-?[\d.]+) → 最も安いのは (\S+?)（r − s = (-?[\d.]+)）")
    rows = {int(q): (num(rho), float(lim), who, float(rs)) for q, rho, lim, who, rs in re.findall(pat, out)}
    rho, lim, who, rs = rows[20]
    assert rs < 0 < rho and lim > rho and who.startswith("検索"), rows[20]
    assert rows[2][1] < 0 and not rows[2][2].startswith("検索"), rows[2]


# ------------------------------------------------------------------ 07

def test_07_the_second_question_reads_the_cache_and_switching_citations_rewrites_it(lesson):
    """07 §3: 「文書の並びが同じなので、2 問目からはキャッシュから読まれます。ただし引用の有効・無効を切り替えると、
    文書が同じでもキャッシュは作り直しです」"""
    out = section(lesson, "07_citations", "3.", "2 問目からはキャッシュから読まれます。")
    rows = {name.strip(): (num(r), num(w)) for name, r, w in
            re.findall(r"^(.+?)\s+読み出し\s+([\d,]+)\s+書き込み\s+([\d,]+)", out, re.M)}
    assert rows["引用あり 1 問目"][0] == 0 < rows["引用あり 1 問目"][1]
    assert rows["引用あり 2 問目"][0] > 0 == rows["引用あり 2 問目"][1]
    assert rows["引用あり 3 問目"][0] > 0 == rows["引用あり 3 問目"][1]
    assert rows["引用なしに切り替え"][0] == 0 < rows["引用なしに切り替え"][1]


def test_07_the_cited_text_is_the_slice_of_the_source(lesson):
    """07 §3: 「原文から同じ範囲を切り出すと、`cited_text` と一致するはずです。」"""
    out = section(lesson, "07_citations", "3.", "原文から同じ範囲を切り出すと、`cited_text` と一致するはずです。")
    assert "原文のスライスと cited_text が一致: True" in out


# ------------------------------------------------------------------ 11

def test_11_the_cost_verdict_is_on_the_long_context_side_while_rag_is_above(lesson):
    """11 §4: 「RAG の線が上にあるあいだは、料金はロングコンテキストの側に出ています。」: at today's questions the
    default model's RAG month is above long context's, and the verdict by cost is long context."""
    out = section(lesson, "11_decide", "4.", "RAG の線が上にあるあいだは、料金はロングコンテキストの側に出ています。")
    row = re.search(r"Claude \S+ [\d.]+\s+(?:1h|5m|なし)\s+\d+%\s+\$([\d,.]+)\s+\$([\d,.]+)\s+\$([\d,.]+)", out)
    assert row, out[:400]
    lc, _filter, rag = (num(x) for x in row.groups())
    verdict = re.search(r"どこでも料金の判定は (\S+) のまま", out)
    assert rag > lc and verdict and verdict.group(1) == "ロングコンテキスト", (lc, rag, verdict)


def test_11_the_same_procedure_on_the_course_regulations_reaches_another_verdict(lesson):
    """11 §6: 「同じ手順を、みなと計測の規程に 1 日 20 問で当てると、結論が変わります。」"""
    out = section(lesson, "11_decide", "6.", "同じ手順を、みなと計測の規程に 1 日 20 問で当てると、結論が変わります。")
    rows = re.findall(r"^(.+?): [\d,]+ tokens・1 日 ([\d.]+) 問 → (\S+?)（", out, re.M)
    verdicts = {name: verdict for name, _, verdict in rows}
    regs = re.search(r"^みなと計測の規程: [\d,]+ tokens・1 日 ([\d.]+) 問", out, re.M)
    assert regs and num(regs.group(1)) == 20, out[-400:]
    assert len(verdicts) == 2 and len(set(verdicts.values())) == 2, verdicts


# ------------------------------------------------------------------ 06

def _06_rows(out):
    """§5's replay table (its text): label, filter recall, sets, hit rate, read, written, $, log $, no-cache $."""
    pat = (r"(固定セット|質問ごとの集合) +(\d+)% +\d+ 種 +(\d+)% +[\d,]+ +[\d,]+ +([\d.]+) +[\d.]+ +([\d.]+)")
    return {name: (int(rec), int(hit), num(cost), num(plain)) for name, rec, hit, cost, plain in re.findall(pat, out)}


def test_06_per_question_sets_cost_more_than_no_cache_and_keep_the_same_recall(lesson):
    """06 §5: 「質問ごとに選び直しても、部署のキーが同じなので filter recall は上がっていません。… キャッシュを付けない場合より
    高くつくのはそのためです。」"""
    out = section(lesson, "06_metadata_filtering", "5.", "キャッシュを付けない場合より高くつくのはそのためです。")
    rows = _06_rows(out)
    fixed, per_q = rows["固定セット"], rows["質問ごとの集合"]
    assert per_q[0] <= fixed[0], rows                      # recall not higher
    assert per_q[2] > per_q[3], rows                       # dearer than no cache
    assert fixed[2] < fixed[3] and fixed[2] < per_q[2], rows   # the fixed sets are the cheap ones


def test_06_the_fixed_sets_hit_rate_is_far_from_100_percent(lesson):
    """06 §5: 「一方、固定セットのヒット率も 100% 近くにはなりません。トラフィックがセットの数に**分かれる**からです。」"""
    out = section(lesson, "06_metadata_filtering", "5.", "固定セットのヒット率も 100% 近くにはなりません。")
    fixed = _06_rows(out)["固定セット"]
    assert fixed[1] < 90, fixed


# ------------------------------------------------------------------ 10

def test_10_todays_small_model_reaches_more_regulations_and_costs_less_than_the_article(lesson):
    """10 §11（任意）: 「旧世代の Haiku 4.5 の最小キャッシュ長には多くが届きませんでした（上の 2 行目）。… Haiku 4.5 では記事の見積もり
    より割高になります。今の小型モデルは …より多くの規程が届き（上の 1 行目）、100 万文書トークンあたりの費用は記事の見積もりを
    下回ります。」"""
    out = section(lesson, "10_rag_lab", "11.", "100 万文書トークンあたりの費用は記事の見積もりを下回ります。")
    rows = re.findall(r"^Claude (Haiku [\d.]+): 最小キャッシュ長 [\d,]+ トークン.*?以上の文書 (\d+) 件中 (\d+) 件 .*?"
                      r"100 万文書トークンあたり \$([\d.]+)$", out, re.M)
    assert len(rows) == 2 and rows[1][0] == "Haiku 4.5", rows
    (_, n, today_reach, today_cost), (_, _, old_reach, old_cost) = rows
    article = num(re.search(r"記事の見積もり（公表値）: 100 万文書トークンあたり \$([\d.]+)", out).group(1))
    assert int(old_reach) < int(n) / 2 and int(today_reach) > int(old_reach), rows   # 「多くが届きませんでした」
    assert num(today_cost) < article < num(old_cost), (rows, article)


# ------------------------------------------------------------------ 08

def test_08_versions_in_the_catalogue_remove_old_values_for_all_three_methods(lesson):
    """08 §11 (optional): 「全版のフォルダでは、ロングコンテキストもメタデータで絞る方式も、旧版を**必ず**渡しています。」
    「旧版を渡すことも、旧版の値を答えることも、3 方式で同時になくなります。」「版の管理で新旧の混在は 3 方式とも消え、
    残りは方式ごとの誤り」"""
    out = section(lesson, "08_measure", "11.", "旧版を渡すことも、旧版の値を答えることも、3 方式で同時になくなります。")
    rows = {(docs, method): [tuple(map(int, x.split("/"))) for x in cells] for docs, method, *cells in
            re.findall(r"^(全版|現行版のみ)\s+(long_context|filter|rag)\s+(\d+/\d+)\s+(\d+/\d+)\s+(\d+/\d+)\s*$", out, re.M)}
    assert len(rows) == 6, rows
    for method in ("long_context", "filter"):
        sent, _, _ = rows["全版", method]
        assert sent[0] == sent[1] > 0, (method, sent)                        # always sent the old version
    for method in ("long_context", "filter", "rag"):
        sent, old, right = rows["現行版のみ", method]
        assert sent[0] == 0 and old[0] == 0, (method, rows["現行版のみ", method])
    assert any(rows["現行版のみ", m][2][0] < rows["現行版のみ", m][2][1] for m in ("long_context", "filter", "rag"))
