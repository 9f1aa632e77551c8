"""Data files are read against pydantic schemas: a broken file reports every problem at once."""
import json
import shutil

import pytest

from ctxlab import _schema, corpus
from ctxlab._paths import DATA_DIR
from ctxlab.costs import pricing
from ctxlab.errors import CtxlabError, SchemaError


def test_the_shipped_files_are_valid():
    assert pricing._table().models
    assert corpus.load() and corpus.questions()
    assert corpus.validate() == [] and corpus.validate_questions() == []
    from ctxlab.evaluation import labelled
    rows = labelled.load()
    assert rows
    if labelled.REVIEW.exists():
        assert labelled.load_review(labelled.REVIEW, rows)


def test_broken_price_table_lists_every_problem_with_its_field(tmp_path):
    raw = json.loads((DATA_DIR / "pricing.json").read_text(encoding="utf-8"))
    raw["models"][0]["input_usd_per_mtok"] = "five"
    del raw["models"][1]["context_window"]
    raw["models"][2]["cache_read_multiplier"] = 1.5
    raw["surprise"] = 1
    path = tmp_path / "pricing.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(SchemaError) as e:
        _schema.load_json(path, pricing.PriceTable)
    text = str(e.value)
    assert len(e.value.problems) == 4, e.value.problems
    for where in ("models.0.input_usd_per_mtok", "models.1.context_window", "models.2.cache_read_multiplier", "surprise"):
        assert where in text
    assert str(path) in text
    assert isinstance(e.value, CtxlabError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("breakage, message", [
    (lambda m: m.pop("tier_rule"), "tier_rule"),
    (lambda m: m["sources"].pop("released"), "released"),
    (lambda m: m["prompt_tiers"].append({"over_prompt_tokens": 2_000_000, "input_usd_per_mtok": 1,
                                         "output_usd_per_mtok": 5}), "context window"),
])
def test_a_tier_without_its_rule_or_a_figure_without_a_source_is_refused(tmp_path, breakage, message):
    raw = json.loads((DATA_DIR / "pricing.json").read_text(encoding="utf-8"))
    haiku = next(m for m in raw["models"] if m["id"] == "claude-haiku-5-5")
    breakage(haiku)
    path = tmp_path / "pricing.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(SchemaError, match=message):
        _schema.load_json(path, pricing.PriceTable)


def test_duplicate_model_ids_are_refused(tmp_path):
    raw = json.loads((DATA_DIR / "pricing.json").read_text(encoding="utf-8"))
    raw["models"].append(raw["models"][0])
    path = tmp_path / "pricing.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(SchemaError, match="unique"):
        _schema.load_json(path, pricing.PriceTable)


def test_broken_questions_report_line_and_field(tmp_path):
    lines = (DATA_DIR / "eval" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["category"] = "easy"
    third = json.loads(lines[2])
    del third["gold_files"]
    lines[0], lines[2] = json.dumps(first, ensure_ascii=False), json.dumps(third, ensure_ascii=False)
    lines[4] = lines[4][:-5]  # truncated JSON
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(SchemaError) as e:
        corpus.questions(path)
    probs = e.value.problems
    assert any(p.startswith("1 行目: category") for p in probs), probs
    assert any(p.startswith("3 行目: gold_files") for p in probs), probs
    assert any(p.startswith("5 行目") for p in probs), probs


def test_broken_catalog_reports_every_entry(tmp_path):
    rules = tmp_path / "rules"
    shutil.copytree(DATA_DIR / "rules", rules)
    raw = json.loads((rules / "catalog.json").read_text(encoding="utf-8"))
    raw["documents"][0]["dept"] = "sales"
    raw["documents"][3]["fiscal_year"] = "2024年"
    (rules / "catalog.json").write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SchemaError) as e:
        corpus.company(rules)
    assert {p.split(":")[0] for p in e.value.problems} == {"documents.0.dept", "documents.3.fiscal_year"}


@pytest.mark.parametrize("content, says", [(b"\xff\xfe\x00bad", "UTF-8"), (b"{", "JSON")])
def test_unreadable_files_say_what_to_do(tmp_path, content, says):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(SchemaError, match=says):
        _schema.load_json(path, pricing.PriceTable)
    with pytest.raises(SchemaError, match="ありません"):
        _schema.load_json(tmp_path / "missing.json", pricing.PriceTable)
