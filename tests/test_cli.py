"""`ctxlab compare` on fixture folders, the usage article's what-if, and every kind of bad input."""
import json
import os
import subprocess
import sys

import pytest

from ctxlab import cli
from ctxlab.costs.compare import Profile, compare
from ctxlab.corpus import documents as docs

# the usage article's table is priced on its own model (now legacy) at its own 5-minute TTL
# (the CLI's defaults are today's model and "auto")
SEED_ARGS = ["compare", "--total-tokens", "197000", "--model", "claude-opus-5", "--ttl", "5m", "--ask", "有給の繰越上限は？"]


def run(args, capsys):
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_default_ttl_is_the_cheaper_one_and_says_so(capsys):
    code, out, err = run(["compare", "--total-tokens", "197000", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    p = Profile(questions_per_month=600)
    five, hour = (compare(197_000, 50, Profile(questions_per_month=600, ttl=t)).monthly["long_context"]
                  for t in ("5m", "1h"))
    assert data["ttl"] == p.resolved_ttl() == ("1h" if hour < five else "5m")
    assert data["monthly"]["long_context"] == pytest.approx(min(five, hour), rel=1e-12)
    code, out, err = run(["compare", "--total-tokens", "197000"], capsys)
    assert f"TTL {data['ttl']}（安いほうを自動で選択）" in out and "安いほうの TTL" in out


def test_usage_article_figures(capsys):
    code, out, err = run(SEED_ARGS, capsys)
    assert code == 0, err
    assert "197,000 tokens" in out and "20%" in out
    for figure in ("$1.251", "$0.118", "$0.143", "$0.052", "$101"):
        assert figure in out, figure
    # the usage article's own accounting of the cached call, computed and explained in a note
    assert "$0.116" in out and "$206" in out
    assert "RAG $31 + DB $70" in out
    assert "注: 単価 $" in out and "注: ヒット率はトラフィックのモデル" in out  # assumptions are printed


def test_json_output(capsys):
    code, out, _ = run(SEED_ARGS + ["--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert round(data["rows"]["lc_write"]["cost"], 3) == 1.251
    assert round(data["rows"]["rag"]["cost"], 3) == 0.052
    assert round(data["monthly"]["rag"]) == 101
    assert data["rows"]["lc_write"]["input_tokens"] == 197_400
    assert data["rows"]["filter_write"]["input_tokens"] == 20_100
    assert data["rows"]["rag"]["input_tokens"] == 6_800
    assert data["window_usage"] == pytest.approx(0.197)


def test_other_model_and_profile(capsys):
    code, out, _ = run(["compare", "--total-tokens", "197000", "--model", "claude-haiku-4-5",
                        "--questions-per-month", "300", "--hit-rate", "0.5", "--db-monthly", "0", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["window_usage"] == pytest.approx(0.985)
    assert data["monthly"]["rag_db"] == 0


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))


def test_folder_is_counted(tmp_path, capsys):
    _write(tmp_path / "a.txt", "第1条　年次有給休暇は翌年度に限り繰り越せる。" * 20)
    _write(tmp_path / "b.md", "# 旅費\n日当は 2,500 円とする。")
    code, out, err = run(["compare", "--docs", str(tmp_path), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["n_files"] == 2
    assert data["chars"] == len("第1条　年次有給休暇は翌年度に限り繰り越せる。") * 20 + len("# 旅費\n日当は 2,500 円とする。")
    assert "推定" in data["token_method"]
    assert data["doc_tokens"] > 400


def test_cp932_file_is_read_with_a_warning(tmp_path, capsys):
    _write(tmp_path / "sjis.txt", "就業規則　第1条　この規則は従業員に適用する。", "cp932")
    code, out, err = run(["compare", "--docs", str(tmp_path)], capsys)
    assert code == 0
    assert "CP932" in err and "iconv" in err


def test_empty_file_is_skipped_with_a_warning(tmp_path, capsys):
    _write(tmp_path / "a.txt", "第1条　目的")
    _write(tmp_path / "empty.txt", "")
    code, out, err = run(["compare", "--docs", str(tmp_path), "--json"], capsys)
    assert code == 0 and json.loads(out)["n_files"] == 1
    assert any("empty.txt" in w for w in json.loads(out)["warnings"])


@pytest.mark.parametrize("setup, message", [
    (lambda p: p / "missing", "フォルダがありません"),
    (lambda p: p, "空のフォルダ"),
    (lambda p: (_write(p / "x.pdf", "%PDF-1.4\x00\x01binary"), p)[1], "バイナリ"),
    (lambda p: (_write(p / "x.txt", "abc\x00def"), p)[1], "バイナリ"),
    (lambda p: ((p / "bad.txt").write_bytes(b"\xff\xfe\xfa\x80\x81" * 10), p)[1], "UTF-8"),
    (lambda p: (_write(p / "f.txt", "本文"), p / "f.txt")[1], "フォルダではありません"),
    (lambda p: (_write(p / "e.txt", ""), p)[1], "中身のあるファイルがありません"),
])
def test_bad_folders_exit_nonzero_with_a_message(tmp_path, capsys, setup, message):
    target = setup(tmp_path)
    code, out, err = run(["compare", "--docs", str(target)], capsys)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_very_large_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(docs, "MAX_FILE_BYTES", 1000)
    _write(tmp_path / "big.txt", "あ" * 2000)
    code, out, err = run(["compare", "--docs", str(tmp_path)], capsys)
    assert code == 2 and "大きすぎ" in err


def test_neither_docs_nor_total(capsys):
    code, _, err = run(["compare"], capsys)
    assert code == 2 and "--total-tokens" in err


def test_count_api_without_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CTXLAB_OFFLINE", "1")
    _write(tmp_path / "a.txt", "第1条　目的")
    code, _, err = run(["compare", "--docs", str(tmp_path), "--count", "api"], capsys)
    assert code == 2 and "ANTHROPIC_API_KEY" in err


@pytest.mark.parametrize("args", [["--hit-rate", "1.5"], ["--hit-rate", "x"], ["--total-tokens", "-3"],
                                  ["--model", "nope"], ["--questions-per-month", "-1"]])
def test_bad_options(capsys, args):
    with pytest.raises(SystemExit) as exc:
        code = cli.main(["compare", "--total-tokens", "1000"] + args)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()


def test_console_script_runs():
    exe = os.path.join(os.path.dirname(sys.executable), "ctxlab")
    proc = subprocess.run([exe, *SEED_ARGS], capture_output=True, text=True)
    assert proc.returncode == 0 and "$1.251" in proc.stdout


def test_the_course_folder_counts_only_current_documents(capsys):
    from ctxlab.api import tokens
    from ctxlab.corpus import rules

    code, out, err = run(["compare", "--docs", "data/rules", "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    current = rules.load(current_only=True)
    assert got["n_files"] == len(current) == 48
    assert got["doc_tokens"] == tokens.count_documents([d.text for d in current]).tokens
    assert any("現行の 48 ファイル" in w and "改定前の 5 版" in w for w in got["warnings"])


def test_a_prompt_over_the_window_is_refused_not_priced(capsys):
    code, out, err = run(["compare", "--total-tokens", "400000", "--model", "claude-haiku-4-5"], capsys)
    assert code != 0 and "$" not in out
    assert "200,000" in err and "拒否" in err
