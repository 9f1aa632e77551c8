"""What lessons 06, 08 and 10 say in words about their own output, checked against the executed lessons.

These checks were asserts in the lessons' demo cells (issue 43: authoring asserts leave the learner's
notebook). They read the lessons as the site executed them (build/site/executed, reused while the release
and ctxlab are unchanged: no second execution), so a sentence that drifts from the printed output fails here.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    """The site's executions of the learner release (tools/build_site.py), made once and reused."""
    import build_site
    from ctxlab.grading.release import fresh_release

    release = tmp_path_factory.mktemp("release") / "course"
    fresh_release(release, ROOT)
    build_site.execute_lessons(ROOT / "build" / "site", release)
    return ROOT / "build" / "site" / "executed"


def printed(executed: Path, lesson: str, code: str) -> str:
    """The text output of the one code cell of ``lesson`` whose source holds ``code``."""
    import learner_time as lt

    nb = nbformat.read(executed / f"{lesson}.ipynb", as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and code in c.source]
    assert len(cells) == 1, f"{lesson}: {len(cells)} code cells hold {code!r}"
    return "".join(lt._output_text(o) for o in cells[0].outputs)


def number(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in the output:\n{text}"
    return float(m.group(1).replace(",", ""))


# ------------------------------------------------------------------ 06

def check_06_multiple(out: str) -> None:
    whole = number(r"入力の料金の倍率 ([\d.]+) =", out)
    volume, unit = number(r"= 量 ([\d.]+) ×", out), number(r"× 単価 ([\d.]+)", out)
    assert abs(whole - volume * unit) <= 0.005 * (volume + unit) + 0.01, (whole, volume, unit)
    assert volume > 1 and unit > 1     # §7.2's two parts: more tokens, and a dearer token (cache misses)


def test_06_the_cost_multiple_is_volume_times_unit_price(executed):
    """§7.2: 「入力の料金の倍率 = 量 × 単価」 (each printed to 2 decimals)."""
    check_06_multiple(printed(executed, "06_metadata_filtering", "volume = per_q.input_tokens_total"))


def test_06_choosing_per_question_costs_more_and_recalls_no_more(executed):
    """§5 and §7.2: per-question sets keep filter recall, cost more than the fixed sets, even more than no cache."""
    out = printed(executed, "06_metadata_filtering", "INTERVAL_S = 60")
    # the replay's table (its text form): label, filter recall, sets sent, hit rate, read, written, $, log $, no-cache $
    row = r"({}) +(\d+)% +(\d+) 種 +(\d+)% +([\d,]+) +([\d,]+) +([\d.]+) +([\d.]+) +([\d.]+)"
    rows = {}
    for label in ("固定セット", "質問ごとの集合"):
        m = re.search(row.format(label), out)
        assert m, f"{label}'s row is not in the output:\n{out}"
        rows[label] = [float(v.replace(",", "")) for v in m.groups()[1:]]
    fixed, per_q = rows["固定セット"], rows["質問ごとの集合"]
    assert len(fixed) == len(per_q) == 8, rows
    assert fixed[0] == per_q[0]                          # filter recall: the same
    assert number(r"固定セットの ([\d.]+) 倍", out) > 1
    assert per_q[-3] == per_q[-2] and fixed[-3] == fixed[-2]   # the replay's dollars are the sandbox log's
    assert per_q[-3] > per_q[-1] and fixed[-3] < fixed[-1]    # per question: dearer than no cache; fixed: cheaper


# ------------------------------------------------------------------ 08

def test_08_every_model_answer_grades_correct(executed):
    """§4: 「模範解答は、どれもこの物差しで「正しい」になります」."""
    out = printed(executed, "08_measure", "gold = [measure.grade(q.answer, q)")
    assert number(r"模範解答 (\d+) 件", out) == number(r"正しい (\d+) 件", out) == 30


def test_08_the_spot_check_reaches_every_grade_and_method(executed):
    """§7: the spot check's answers cover every (automatic grade, method) pair the run has."""
    out = printed(executed, "08_measure", "spot = measure.review_order(best)")
    assert number(r"人が見る (\d+) 件", out) == 15
    assert number(r"の組: (\d+)", out) == number(r"採点した記録にある組は (\d+)", out)


# ------------------------------------------------------------------ 10

def check_10_premise(out: str) -> None:
    lines = [line for line in out.splitlines() if "このコースの前提" in line]
    assert len(lines) == 2
    assert "ウィンドウ 200,000" in lines[0] and lines[0].endswith("（前提を超える）")
    assert "ウィンドウ 1,000,000" in lines[1] and lines[1].endswith("（前提を満たす）")


def test_10_the_rules_exceed_the_premise_on_200k_and_meet_it_on_the_default_window(executed):
    """§1: 「この規程集は 200K のウィンドウでは前提を超え、1M のウィンドウなら前提を満たします」."""
    check_10_premise(printed(executed, "10_rag_lab", "lab = rag_lab.Lab()"))


def test_the_checks_flag_planted_drift(executed):
    """Positive control: the same checks on the executed output with one figure changed fail."""
    out = printed(executed, "06_metadata_filtering", "volume = per_q.input_tokens_total")
    whole = re.search(r"入力の料金の倍率 ([\d.]+) =", out).group(1)
    with pytest.raises(AssertionError):
        check_06_multiple(out.replace(f"倍率 {whole} =", f"倍率 {float(whole) + 0.3:.2f} ="))
    out = printed(executed, "10_rag_lab", "lab = rag_lab.Lab()")
    assert out.count("（前提を満たす）") == 1
    with pytest.raises(AssertionError):
        check_10_premise(out.replace("（前提を満たす）", "（前提を超える）"))


def test_10_todays_small_model_reaches_more_documents_and_costs_less_than_the_article(executed):
    """§11.2 and 演習 3's model answer: more rules reach today's small model's minimum cache length than Haiku
    4.5's, and its cost per million document tokens is below the article's, Haiku 4.5's above it."""
    out = printed(executed, "10_rag_lab", "reach = {}")
    today, haiku45 = [line for line in out.splitlines() if "最小キャッシュ長" in line]
    assert "Haiku 4.5" in haiku45 and "Haiku 4.5" not in today
    reach = lambda line: number(r"件中 (\d+) 件", line)
    per_million = lambda line: number(r"100 万文書トークンあたり \$([\d.]+)", line)
    published = number(r"記事の見積もり（公表値）: 100 万文書トークンあたり \$([\d.]+)", out)
    assert reach(today) > reach(haiku45)
    assert per_million(today) < published < per_million(haiku45)


def test_08_current_versions_only_remove_the_old_values_for_all_three_methods(executed):
    """§11 (optional) and its 考えてみよう: with the current versions only, no method answers an old value
    (「3 方式とも消えます」), the contradiction accuracy does not fall, and some questions stay wrong (「残ります」)."""
    rows = table_rows(executed, "08_measure", "measure.old_versions_table(")
    assert [r[0] for r in rows] == ["long_context", "filter", "rag"]
    for method, all_versions, current_only, quoted_old, _correct, still_wrong in rows:
        assert quoted_old.startswith("0/"), (method, quoted_old)
        assert int(all_versions.rstrip("%")) <= int(current_only.rstrip("%")), method
    assert any(int(r[5]) > 0 for r in rows)


def table_rows(executed: Path, lesson: str, code: str) -> list[list[str]]:
    """The rows of the table (ctxlab._table.Table) the one code cell holding ``code`` displays, from its
    text form: the lines under the header's rule, split on whitespace, up to the first blank or note line."""
    nb = nbformat.read(executed / f"{lesson}.ipynb", as_version=4)
    [cell] = [c for c in nb.cells if c.cell_type == "code" and code in c.source]
    [text] = [o.data["text/plain"] for o in cell.outputs if o.output_type in ("display_data", "execute_result")]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line and set(line) <= {"-", " "}) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.startswith(("出典", "注:")):
            break
        rows.append(line.split())
    return rows
