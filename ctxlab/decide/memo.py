"""Lesson 11 (ctxlab decide): the decision memo (意思決定メモ) as one self-contained HTML page and a Markdown twin.

:func:`markdown` and :func:`html` render a :class:`~ctxlab.decide.Decision`; :func:`write` puts
``memo.html``, ``memo.md`` (and ``spot_check.csv`` after an online accuracy run) into a folder
atomically: everything is written into a temporary folder beside it first, so a failure leaves
nothing half-written. Figures are SVG, inline in the HTML and as data URIs in the Markdown.
Every text that comes from the user's files (document names, questions, answers) is escaped.
"""
from __future__ import annotations

import base64
import csv
import html as html_mod
import io
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from ctxlab.decide._core import PER_DAY_GRID, Decision
from ctxlab.plots import decide as plots
from ctxlab.decide._costs import PATH_LABELS
from ctxlab.decide._verdict import PATH_JA, REASON_JA
from ctxlab.errors import InputError

SIDE_JA = {"long_context": "ロングコンテキスト側", "rag": "RAG 側", "unknown": "—"}
FILES = ("memo.html", "memo.md", "spot_check.csv")
SHOW_SKIPPED = 30


def _usd(v) -> str:
    return "—" if v is None else f"${v:,.0f}" if v >= 10 else f"${v:,.2f}"


def _figures(d: Decision) -> list[tuple[str, str, str]]:
    """(title, caption, svg) of the memo's figures."""
    out = []
    m = d.primary
    tok_how = "推定" if not d.online else "count_tokens の実数"
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    plots.per_day(list(PER_DAY_GRID), d.curve_day, d.traffic.per_day, ax=ax,
                  title=f"月額と 1 日の質問数（{m.display_name}・{m.doc_tokens:,} tokens）")
    out.append(("図 1: 月額と質問数", f"推定: 価格表（{tok_how}のトークン数）と 04 の合成トラフィックのヒット率から計算した月額。"
                "ログの再生ではない（ログはその質問数の 1 点だけを語る）。", _svg(fig)))
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    plots.crossover(d.token_grid, d.curve_tokens, m.doc_tokens, m.crossover_tokens, ax=ax,
                    title=f"月額と文書量: 交点（{m.display_name}・1 日 {d.traffic.per_day:g} 問）")
    out.append(("図 2: 交点", f"推定: 今のトラフィック（{'ログの再生' if d.log else '合成トラフィック'}）で文書量だけを変えた月額。"
                "交点は ctxlab.costs.crossover.crossover_tokens（05）。", _svg(fig)))
    plt.close("all")
    return out


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _tables(d: Decision) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Every table of the memo as (header, rows) of plain text (escaped by the renderer)."""
    t: dict[str, tuple[list[str], list[list[str]]]] = {}
    t["numbers"] = (["数字", "値", "閾値", "向き", "出し方"],
                    [[n.label, n.value, n.threshold, SIDE_JA[n.side], n.how] for n in d.numbers])
    t["months"] = (["モデル", "文書 tokens", "ウィンドウ使用率", "キャッシュ", "ヒット率", "ロングコンテキスト",
                    "メタデータで絞る", "RAG（DB 込み）", "交点 tokens", "料金の判定"],
                   [[m.display_name + ("（主）" if m is d.primary else ""), f"{m.doc_tokens:,}", f"{m.window_usage:.1%}",
                     {"none": "なしが安い", "-": "—"}.get(m.ttl, f"TTL {m.ttl}"), f"{m.hit_rate:.0%}" if m.fits else "—",
                     _usd(m.long_context) if m.fits else "ウィンドウに入らない", _usd(m.filter), _usd(m.rag),
                     f"{m.crossover_tokens:,.0f}" if m.fits else "—",
                     {"long_context": "ロングコンテキスト", "rag": "RAG"}[m.cost_side]] for m in d.months])
    t["assumptions"] = (["項目", "値", "出典", "日付"], [list(a) for a in d.assumptions])
    if d.folder is not None and (d.folder.skipped or d.folder.duplicates):
        rows = [[f, r] for f, r in d.folder.skipped[:SHOW_SKIPPED]]
        rows += [[f, f"{orig} と同じ本文（1 回だけ数えた）"] for f, orig in d.folder.duplicates[:SHOW_SKIPPED]]
        t["skipped"] = (["ファイル", "理由"], rows)
    if d.accuracy is not None:
        t["accuracy"] = (["方式", "正答率（モデルの判定）"],
                         [[k, f"{v:.0%}"] for k, v in d.accuracy.by_method.items()])
    if d.plan:
        t["plan"] = (["モデル", "呼び出し（回答 + 判定）", "料金の上限の見積もり"],
                     [[m, f"{n:,}", f"${usd:,.2f}"] for m, n, usd in d.plan])
    return t


def _latency_text(d: Decision) -> str:
    m = d.primary
    if d.latency is not None:
        return (f"実測: ストリーミングで最初のイベントまで、キャッシュなし {d.latency.uncached_s:.2f} 秒・キャッシュ時 "
                f"{d.latency.cached_s:.2f} 秒（それぞれ {d.latency.calls} 回の中央値、費用 ${d.latency.cost_usd:.3f}）。")
    if not m.fits:
        return "ロングコンテキストはウィンドウに入らないので測りません。"
    return (f"シミュレーション（実測ではない）: sandbox の待ち時間モデルでキャッシュなし {m.ttft_uncached_s:.2f} 秒・キャッシュ時 "
            f"{m.ttft_cached_s:.2f} 秒・RAG {m.ttft_rag_s:.2f} 秒。API キーを設定して実測してください。")


def _sections(d: Decision) -> list[tuple[str, list]]:
    """The memo as (heading, parts); a part is a paragraph (str), ("table", key), ("list", [...]) or ("figure", i)."""
    f = d.folder
    docs_line = f"{d.n_files:,} ファイル・{d.chars:,} 字 → {d.primary.doc_tokens:,} tokens（{d.token_how}）。"
    if f is not None:
        docs_line += (f" 読んだ形式: テキスト {sum(x.kind == 'text' for x in f.documents)}・PDF "
                      f"{sum(x.kind == 'pdf' for x in f.documents)}（{f.pdf_pages} ページ）・Word "
                      f"{sum(x.kind == 'docx' for x in f.documents)}。飛ばしたファイル {len(f.skipped)} 件、重複 {len(f.duplicates)} 件。")
    acc_parts: list = []
    if d.accuracy is not None:
        acc_parts = [f"{d.accuracy.n} 問を 3 方式で答え、モデルの判定で採点しました（費用 ${d.accuracy.cost_usd:.3f}）。"
                     "spot_check.csv で人が一部を見直してください（your_grade の列）。", ("table", "accuracy")]
    elif d.plan:
        acc_parts = [f"正答率は API が要ります（オフライン）。{len(d.questions)} 問を各方式で答え、モデルの判定で採点する計画と、"
                     "モデルごとの料金の上限の見積もり:", ("table", "plan")]
    else:
        acc_parts = ["--questions（question, answer, key_facts, gold_files の CSV か JSONL）を渡すと、正答率の測定（オンライン）か"
                     "その計画（オフライン）が入ります。"]
    parts = [
        ("結論", [f"**{PATH_JA[d.path]}**（決め手: {REASON_JA[d.reason]}）。{d.verdict}",
                f"モード: {'実 API（オンライン）' if d.online else 'オフライン（API キーなし）'}。", ("list", d.changes)]),
        ("4 つの数字と閾値", [("table", "numbers")]),
        ("文書", [docs_line] + ([("table", "skipped")] if f is not None and (f.skipped or f.duplicates) else [])
         + ([("list", d.warnings)] if d.warnings else [])),
        ("料金（今の価格表の全モデル）", [f"トラフィック: {d.traffic.source}。メタデータで絞る: {d.filter_key}。", ("table", "months")]),
        ("図", [("figure", 0), ("figure", 1)]),
        ("待ち時間", [_latency_text(d)]),
        ("正答率", acc_parts),
        ("前提（出典と日付）", [("table", "assumptions")]),
    ]
    return parts


def markdown(d: Decision, figures: list[tuple[str, str, str]] | None = None) -> str:
    figures = _figures(d) if figures is None else figures
    tables = _tables(d)

    def cell(s: str) -> str:
        return html_mod.escape(str(s)).replace("|", "\\|").replace("\n", " ")

    out = ["# 意思決定メモ: RAG か ロングコンテキストか", "",
           f"対象: `{html_mod.escape(str(d.options.docs))}`（ctxlab decide）", ""]
    for head, parts in _sections(d):
        out += [f"## {head}", ""]
        for p in parts:
            if isinstance(p, str):
                out += [html_mod.escape(p).replace("**", "**"), ""]
            elif p[0] == "list":
                out += [f"- {html_mod.escape(x)}" for x in p[1]] + [""]
            elif p[0] == "table":
                header, rows = tables[p[1]]
                out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows] + [""]
            elif p[0] == "figure":
                title, caption, svg = figures[p[1]]
                uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
                out += [f"![{title}]({uri})", "", f"*{title}（{html_mod.escape(caption)}）*", ""]
    return "\n".join(out)


CSS = """body{font-family:"Noto Sans CJK JP","Hiragino Sans","Yu Gothic",sans-serif;max-width:960px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.6}table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
th,td{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#eef}
.verdict{font-size:1.3em;background:#f4f8ee;border-left:6px solid #6a4;padding:.5em 1em}
figure{margin:1em 0}figcaption{font-size:.9em;color:#555}svg{max-width:100%;height:auto}"""


def html(d: Decision, figures: list[tuple[str, str, str]] | None = None) -> str:
    figures = _figures(d) if figures is None else figures
    tables = _tables(d)
    e = html_mod.escape
    out = ["<!DOCTYPE html>", '<html lang="ja"><head><meta charset="utf-8">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
           "<title>意思決定メモ: RAG か ロングコンテキストか</title>", f"<style>{CSS}</style></head><body>",
           "<h1>意思決定メモ: RAG か ロングコンテキストか</h1>",
           f"<p>対象: <code>{e(str(d.options.docs))}</code>（ctxlab decide）</p>"]
    for i, (head, parts) in enumerate(_sections(d)):
        out.append(f"<h2>{e(head)}</h2>")
        for p in parts:
            if isinstance(p, str):
                text = e(p)
                if text.startswith("**"):
                    a, _, b = text[2:].partition("**")
                    out.append(f'<p class="verdict"><strong>{a}</strong>{b}</p>')
                else:
                    out.append(f"<p>{text}</p>")
            elif p[0] == "list":
                out.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in p[1]) + "</ul>")
            elif p[0] == "table":
                header, rows = tables[p[1]]
                out.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>"
                           + "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in rows)
                           + "</tbody></table>")
            elif p[0] == "figure":
                title, caption, svg = figures[p[1]]
                out.append(f"<figure>{svg}<figcaption>{e(title)}: {e(caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)


def spot_check_csv(d: Decision) -> str:
    buf = io.StringIO()
    rows = d.accuracy.rows if d.accuracy else []
    w = csv.DictWriter(buf, fieldnames=["id", "method", "question", "answer", "rule_grade", "judge_grade",
                                        "judge_reason", "your_grade"])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write(d: Decision, out: str | Path) -> list[Path]:
    """Write the memo into ``out`` (created if missing) atomically; returns the files written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: フォルダではありません。--out にはメモを書くフォルダを指定してください。")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise InputError(f"{parent}: フォルダがありません。--out の親フォルダを先に作ってください。")
    figures = _figures(d)
    texts = {"memo.html": html(d, figures), "memo.md": markdown(d, figures)}
    if d.accuracy is not None:
        texts["spot_check.csv"] = spot_check_csv(d)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)
    try:
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if not out.exists():
            os.replace(tmp, out)
        else:
            for name in texts:
                os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [out / name for name in texts]


def summary(d: Decision) -> str:
    """What ``ctxlab decide`` prints: the verdict, the four numbers and the months (plain text, Japanese)."""
    lines = [f"結論: {PATH_JA[d.path]}（決め手: {REASON_JA[d.reason]}）", d.verdict, ""]
    for n in d.numbers:
        lines.append(f"- {n.label}: {n.value}（{n.how}・{SIDE_JA[n.side]}）")
    lines.append("")
    lines.append(f"トラフィック: {d.traffic.source}")
    for m in d.months:
        lc = _usd(m.long_context) if m.fits else "ウィンドウに入らない"
        lines.append(f"  {m.display_name:18s} {m.doc_tokens:>10,} tok  ロングコンテキスト {lc:>8}  "
                     f"絞る {_usd(m.filter):>6}  RAG {_usd(m.rag):>6}  → {PATH_LABELS[m.cost_side]}")
    lines += ["", "判定が変わる条件:"] + [f"  - {c}" for c in d.changes]
    for w in d.warnings:
        lines.append(f"注: {w}")
    if d.folder is not None and (d.folder.skipped or d.folder.duplicates):
        lines.append(f"飛ばしたファイル {len(d.folder.skipped)} 件・重複 {len(d.folder.duplicates)} 件（一覧はメモに）:")
        for f, r in d.folder.skipped[:5]:
            lines.append(f"  - {f}: {r}")
        for f, orig in d.folder.duplicates[:5]:
            lines.append(f"  - {f}: {orig} と同じ本文")
    for m, n, usd in d.plan:
        lines.append(f"正答率の測定計画: {m} で {n:,} 回の呼び出し・上限 ${usd:,.2f}（API キーを設定すると測ります）")
    return "\n".join(lines)
