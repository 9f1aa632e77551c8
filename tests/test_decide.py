"""`ctxlab decide` (lesson 11): the course's procedure on a user's folder, its memo, and every bad input.

* the figures for data/rules at 20 questions a day equal what lessons 02 and 05 compute through the
  library, and the capstone corpus (data/capstone) gets a different verdict;
* documents: text, CP932, PDF, Word, hidden, binary, unreadable, duplicates;
* traffic logs: the formats, bad lines with their line numbers, the replay is lesson 04's;
* each bad input ends with one message, exit 2, and nothing written;
* online (count_tokens, latency, accuracy with the judge) through the local HTTP stand-in within a budget.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab import cli
from ctxlab.api import tokens
from ctxlab.api.client import make_client
from ctxlab.corpus import rules
from ctxlab.costs import compare, crossover, traffic
from ctxlab.decide import Options, decide, memo, parse_time, read_folder, read_log
from ctxlab.decide._measure import read_questions
from ctxlab.errors import DocumentError, InputError, SchemaError

ROOT = Path(__file__).resolve().parent.parent
CAPSTONE = ROOT / "data" / "capstone"
CTXLAB = str(Path(sys.executable).parent / "ctxlab")


@pytest.fixture(scope="module")
def rules_memo(tmp_path_factory):
    out = tmp_path_factory.mktemp("rules") / "memo"
    d = decide(Options(docs=ROOT / "data" / "rules", questions_per_day=20, progress=False))
    memo.write(d, out)
    return d, out


# ---------------------------------------------------------------- the same figures as the lessons

def test_rules_at_20_a_day_equal_lessons_02_and_05(rules_memo):
    d, out = rules_memo
    docs = rules.load()
    # lesson 02 and 05: the sandbox's count of the current regulations, compare at the default profile
    n = tokens.count_documents([x.text for x in docs], client=make_client(offline=True)).tokens
    lesson02 = compare.compare(n, len(docs), chars=rules.total_chars(docs))
    lesson05 = crossover.situation(n, crossover.profile(questions_per_day=20), n_files=len(docs))
    p = d.primary
    assert (p.doc_tokens, d.n_files) == (n, len(docs))
    assert p.long_context_cached == lesson02.monthly["long_context"] == lesson05["monthly_long_context"]
    assert p.rag == lesson02.monthly["rag"] == lesson05["monthly_rag"]
    assert p.filter == lesson02.monthly["filter"] == lesson05["monthly_filter"]
    assert p.hit_rate == lesson02.hit_rate and p.ttl == lesson02.ttl
    assert p.crossover_tokens == lesson05["crossover_tokens"]
    assert p.ttft_cached_s == lesson05["ttft_long_context_s"]
    # the memo prints those figures
    text = (out / "memo.md").read_text(encoding="utf-8")
    assert f"${lesson02.monthly['long_context']:,.0f}" in text and f"{lesson05['crossover_tokens']:,.0f}" in text


def test_capstone_gets_a_different_verdict(rules_memo):
    d_rules, _ = rules_memo
    d_cap = decide(Options(docs=CAPSTONE / "docs", questions_per_day=20, progress=False))
    assert (d_rules.path, d_rules.reason) == ("rag", "cost")
    assert (d_cap.path, d_cap.reason) == ("long_context", "all_clear")
    assert d_cap.primary.long_context < d_cap.primary.rag
    # a verdict flips somewhere for the rules, never within 1..300 a day for the small FAQ
    assert d_rules.flip[0] is not None and d_cap.flip[0] is None


def test_every_current_model_is_priced_and_the_filter_uses_subfolders():
    from ctxlab.costs import pricing

    d = decide(Options(docs=CAPSTONE / "docs", questions_per_day=5, progress=False))
    assert [m.model for m in d.months] == list(pricing.current_models())
    assert d.filter_files == 3 and all(m.filter is not None for m in d.months)   # 8 files in 3 subfolders
    assert "サブフォルダ 3 個" in d.filter_key


def test_no_cache_where_it_is_cheaper():
    d = decide(Options(docs=CAPSTONE / "docs", questions_per_day=1, progress=False))
    m = d.primary
    assert m.hit_rate == 0 and m.ttl == "none" and m.long_context == m.long_context_no_cache < m.long_context_cached


# ---------------------------------------------------------------- documents

def _pdf(path: Path, text: str | None):
    """A one-page PDF; with ``text``, a text layer in Helvetica (ASCII)."""
    import pypdf
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    w = pypdf.PdfWriter()
    page = w.add_blank_page(200, 200)
    if text:
        font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                 NameObject("/BaseFont"): NameObject("/Helvetica")})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): w._add_object(font)})})
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = w._add_object(stream)
    with path.open("wb") as f:
        w.write(f)


def test_folder_reads_every_format_and_lists_what_it_skips(tmp_path):
    import docx

    (tmp_path / "hr").mkdir()
    (tmp_path / "fin").mkdir()
    (tmp_path / "hr" / "a.md").write_text("# 就業\n始業は 9 時。\n", encoding="utf-8")
    (tmp_path / "hr" / "copy.txt").write_text("# 就業\n始業は 9 時。\n", encoding="utf-8")
    (tmp_path / "fin" / "sjis.txt").write_bytes("経費は月末締め。".encode("cp932"))
    _pdf(tmp_path / "fin" / "rules.pdf", "Travel expenses are paid monthly")
    doc = docx.Document()
    doc.add_paragraph("稟議は部長が承認する。")
    doc.save(tmp_path / "fin" / "ringi.docx")
    (tmp_path / ".secret.md").write_text("隠し", encoding="utf-8")
    (tmp_path / "fin" / "logo.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "fin" / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    _pdf(tmp_path / "fin" / "scan.pdf", None)
    f = read_folder(tmp_path, progress=False)
    assert sorted(d.file for d in f.documents) == ["fin/ringi.docx", "fin/rules.pdf", "fin/sjis.txt", "hr/a.md"]
    kinds = {d.file: d.kind for d in f.documents}
    assert kinds["fin/rules.pdf"] == "pdf" and "Travel expenses" in next(d.text for d in f.documents if d.kind == "pdf")
    assert f.duplicates == [("hr/copy.txt", "hr/a.md")]
    skipped = dict(f.skipped)
    assert set(skipped) == {".secret.md", "fin/logo.bin", "fin/broken.pdf", "fin/scan.pdf"}
    assert "隠し" in skipped[".secret.md"] and "バイナリ" in skipped["fin/logo.bin"]
    assert "壊れている" in skipped["fin/broken.pdf"] and "OCR" in skipped["fin/scan.pdf"]
    assert any("CP932" in n and "sjis.txt" in n for n in f.notes)
    assert f.departments() == {"fin": 3, "hr": 1}


# ---------------------------------------------------------------- traffic logs

def test_log_formats_and_bad_lines(tmp_path):
    for s in ("2026-11-02T09:15:00+09:00", "2026-11-02 09:15", "2026-11-02 09:15:30", "2026/11/02 09:15:30",
              "2026-11-02T00:15:00Z"):
        parse_time(s)
    for bad in ("2026-11-02", "09:15", "yesterday", "2026-13-02 09:15"):
        with pytest.raises(ValueError):
            parse_time(bad)
    log = tmp_path / "log.txt"
    log.write_text("2026-11-02 09:00:00\n2026-11-02 09:03:00\nnonsense\n2026-11-02 10:00:00\n\n2026-11-03 09:00\n",
                   encoding="utf-8")
    got = read_log(log)
    assert len(got.times) == 4 and got.days == 2 and got.bad == 1 and got.bad_examples == [(3, "nonsense")]
    assert "3 行目" in got.bad_report()
    assert traffic.hit_rate(got.times, "5m") == 0.25    # lesson 04's rule: only the 09:03 request hits
    csv_log = tmp_path / "log.csv"
    csv_log.write_text("user,timestamp\nu1,2026-11-02T09:00:00+09:00\nu2,2026-11-02T09:01:00+09:00\n", encoding="utf-8")
    assert len(read_log(csv_log).times) == 2


def test_capstone_log_replay(tmp_path):
    log = read_log(CAPSTONE / "requests.csv")
    d = decide(Options(docs=CAPSTONE / "docs", log=CAPSTONE / "requests.csv", progress=False))
    assert d.traffic.per_day == len(log.times) / log.days
    assert d.traffic.log_rates == {t: traffic.hit_rate(log.times, t) for t in ("5m", "1h")}
    assert log.bad == 2 and [n for n, _ in log.bad_examples] == [41, 91]
    assert any("41 行目" in w for w in d.warnings)


# ---------------------------------------------------------------- bad input: one message, exit 2, nothing written

def _bad(tmp_path, capsys, *args) -> str:
    out = tmp_path / "memo"
    code = cli.main(["decide", *args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("ctxlab: エラー: ") and "Traceback" not in err, err
    assert not out.exists() and not list(tmp_path.glob(".memo.*")), "nothing is written half-way"
    return err


def test_empty_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert "空のフォルダ" in _bad(tmp_path, capsys, "--docs", str(tmp_path / "empty"), "--questions-per-day", "20")


def test_only_pdfs_without_text(tmp_path, capsys):
    (tmp_path / "scans").mkdir()
    for i in range(2):
        _pdf(tmp_path / "scans" / f"scan{i}.pdf", None)
    err = _bad(tmp_path, capsys, "--docs", str(tmp_path / "scans"), "--questions-per-day", "20")
    assert "読める文書が 1 つもありません" in err and "OCR" in err


def test_log_without_a_valid_line(tmp_path, capsys):
    (tmp_path / "log.txt").write_text("hello\nworld\n", encoding="utf-8")
    err = _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--log", str(tmp_path / "log.txt"))
    assert "読める行が 1 つもありません" in err and "1 行目" in err


def test_csv_log_without_a_time_column(tmp_path, capsys):
    (tmp_path / "log.csv").write_text("user,when\nu1,2026-11-02 09:00\n", encoding="utf-8")
    assert "timestamp" in _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--log", str(tmp_path / "log.csv"))


def test_questions_with_schema_errors(tmp_path, capsys):
    q = tmp_path / "q.jsonl"
    q.write_text('{"question": "始業は？", "answer": "9 時", "key_facts": ["9 時"], "gold_files": ["setup/install.md"]}\n'
                 '{"question": "終業は？", "answer": "18 時", "key_facts": "18 時", "gold_files": ["nowhere.md"]}\n'
                 "not json\n", encoding="utf-8")
    err = _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "20", "--questions", str(q))
    assert "2 行目: key_facts" in err and "3 行目" in err
    c = tmp_path / "q.csv"
    c.write_text("question,answer,key_facts,gold_files\n始業は？,9 時,9 時,install.md\n終業は？,18 時,18 時,nowhere.md\n",
                 encoding="utf-8")
    with pytest.raises(SchemaError) as e:
        read_questions(c, ["setup/install.md"])
    assert e.value.problems == ["3 行目: gold_files: 'nowhere.md' はフォルダにありません"]
    ok = read_questions(CAPSTONE / "questions.jsonl", [d.file for d in read_folder(CAPSTONE / "docs", progress=False).documents])
    assert len(ok) == 9 and ok[-1].category == "unanswerable"


def test_unknown_model(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "20", "--model", "gpt-9")
    assert "unknown model 'gpt-9'" in err and "claude-opus-5-5" in err


def test_no_traffic_bad_durations_and_out_a_file(tmp_path, capsys):
    assert "--questions-per-day" in _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"))
    assert "30m・12h" in _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "5",
                              "--update-every", "often", "--reindex-every", "1d")
    assert "2 つ一緒に" in _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "5",
                              "--update-every", "1d")
    assert "0 より大きい" in _bad(tmp_path, capsys, "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "0")
    (tmp_path / "file").write_text("x")
    code = cli.main(["decide", "--docs", str(CAPSTONE / "docs"), "--questions-per-day", "5", "--out",
                     str(tmp_path / "file"), "--quiet"])
    assert code == 2 and "フォルダではありません" in capsys.readouterr().err


# ---------------------------------------------------------------- the memo

def test_memo_is_self_contained_and_escapes_names(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 規程\n始業は 9 時。\n", encoding="utf-8")
    (docs / "<img src=x onerror=alert(1)>.exe").write_bytes(b"\x00evil")
    d = decide(Options(docs=docs, questions_per_day=20, update_every="1d", reindex_every="1h", progress=False))
    files = memo.write(d, tmp_path / "memo")
    page = (tmp_path / "memo" / "memo.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;.exe" in page
    import re

    assert not re.findall(r'(?:src|href)="(?:https?:)?//', page), "nothing is loaded from elsewhere"
    assert page.count("<svg") >= 2 and "Content-Security-Policy" in page
    md = (tmp_path / "memo" / "memo.md").read_text(encoding="utf-8")
    assert md.count("data:image/svg+xml;base64,") == 2 and "<img" not in md
    for text in (page, md):
        for n in d.numbers:
            assert n.how in text
        assert "シミュレーション" in text and "推定" in text
    assert [p.name for p in files] == ["memo.html", "memo.md"]
    assert oct((tmp_path / "memo").stat().st_mode & 0o777) != "0o700"


# ---------------------------------------------------------------- online, through the local HTTP stand-in

def test_online_count_latency_accuracy_within_budget(tmp_path):
    from standin import StandIn, online_env

    with StandIn() as s:
        env = online_env(s, 2.0)
        out = tmp_path / "memo"
        r = subprocess.run([CTXLAB, "decide", "--docs", str(CAPSTONE / "docs"), "--log", str(CAPSTONE / "requests.csv"),
                            "--questions", str(CAPSTONE / "questions.jsonl"), "--budget", "2", "--out", str(out),
                            "--quiet"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        paths = [x.path for x in s.received]
        assert paths.count("/v1/messages/count_tokens") >= 1
        bodies = [x.body for x in s.received if x.path == "/v1/messages"]
        assert any(b.get("stream") for b in bodies), "latency is measured with streaming"
        assert s.billed_usd() <= 2.0
    text = (out / "memo.md").read_text(encoding="utf-8")
    assert "実測（API の count_tokens" in text and "実測: ストリーミング" in text and "実測（モデルの判定）" in text
    import csv

    with (out / "spot_check.csv").open(encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    assert len(sheet) == 9 * 3 and {r["method"] for r in sheet} == {"long_context", "filter", "rag"}
    assert all(r["judge_grade"] in ("correct", "partial", "wrong") and r["your_grade"] == "" for r in sheet)
    assert "sk-ant" not in r.stdout + r.stderr + text


def test_online_budget_too_small_for_one_call(tmp_path):
    from standin import StandIn, online_env

    with StandIn() as s:
        r = subprocess.run([CTXLAB, "decide", "--docs", str(ROOT / "data" / "rules"), "--questions-per-day", "20",
                            "--budget", "0.001", "--out", str(tmp_path / "memo"), "--quiet"],
                           capture_output=True, text=True, env=online_env(s, 0.001), cwd=tmp_path, timeout=600)
        assert s.messages() == 0
    assert r.returncode == 2 and "Traceback" not in r.stderr and "予算" in r.stderr, r.stderr[-1000:]
    assert not (tmp_path / "memo").exists()


def test_readme_first_screen_shows_decide_beside_make_lab():
    first = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    assert "make lab" in first and "ctxlab decide --docs" in first
    assert "docs/images/decide_memo.png" in first and (ROOT / "docs" / "images" / "decide_memo.png").is_file()


@pytest.mark.parametrize("per_day", [2.5, 20, 64])
def test_flip_is_the_whole_number_a_scan_finds(per_day):
    from ctxlab.decide import _costs

    n, files = 169_659, 48
    flip, now, to = _costs.flip_per_day(n, files, "claude-opus-5-5", per_day, db_monthly=70, filter_files=5)

    def side(d):
        return _costs.model_month(n, files, "claude-opus-5-5", _costs.Traffic(d), db_monthly=70, filter_files=5).cost_side

    assert now == side(per_day) and to != now and side(flip) == to
    # every whole number strictly between today and the flip is still on today's side
    between = range(flip + 1, int(per_day) + 1) if flip < per_day else range(int(per_day) + 1, flip)
    assert all(side(d) == now for d in between)


def test_lesson_11s_own_inputs_give_the_verdicts_its_prose_compares(rules_memo):
    """Lesson 11 section 6 says the rules at 20 a day end elsewhere than its FAQ with the log: check with its inputs."""
    d_rules, _ = rules_memo
    lesson = decide(Options(docs=CAPSTONE / "docs", log=CAPSTONE / "requests.csv", questions=CAPSTONE / "questions.jsonl",
                            update_every="1d", reindex_every="7d", progress=False))
    assert lesson.path != d_rules.path and lesson.path == "long_context"
    assert len(lesson.plan) == len([m for m in lesson.months if m.fits]) and all(n > 0 for _, n, _ in lesson.plan)


def test_lesson_11_online_with_the_default_budget_runs_on_without_an_error(tmp_path):
    """With $0.05 the measurements do not fit: the lesson says so and goes on (simulation and plan), nothing over budget."""
    import shutil

    from standin import StandIn, online_env, run_online

    src = ROOT / "solutions" / "11_decide" / "11_decide.ipynb"
    shutil.copy(src, tmp_path / src.name)
    with StandIn() as s:
        run = run_online(tmp_path / src.name, online_env(s, 0.05), stand_in=s, allow_errors=True)
        billed = s.billed_usd()
    errors = [o for c in run.notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, [(e["ename"], e["evalue"][:200]) for e in errors]
    assert billed <= 0.05 and run.ledger["spent_usd"] <= 0.05
    text = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")   # the banner is a display
                   for c in run.notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "予算に収まらないので測らず" in text and "実 API" in text
