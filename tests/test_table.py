"""ctxlab._table: one set of cells, a text table padded by display width and an escaped HTML table."""
import pytest

from ctxlab import _table, _text


def test_text_columns_line_up_by_display_width():
    t = _table.Table(["方式", "月額"], [["ロングコンテキスト", "$203"], ["RAG", "$102"]])
    lines = str(t).splitlines()
    assert [_text.width(line) for line in lines[2:]] == [_text.width(lines[0])] * 2 == [24, 24]
    assert lines[2].endswith("$203") and lines[3].endswith("$102")
    assert lines[1] == "-" * 18 + "  " + "-" * 4
    assert t.align == ["l", "r"]


def test_html_escapes_every_cell_and_keeps_alignment():
    t = _table.Table(["<b>列</b>", "n"], [["<script>alert(1)</script>", "1,000"]], caption="a & b")
    h = t._repr_html_()
    assert "<script>" not in h and "&lt;script&gt;" in h and "&lt;b&gt;列" in h
    assert "a &amp; b</caption>" in h
    assert '<td style="text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap">1,000</td>' in h


def test_a_row_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        _table.Table(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="align"):
        _table.Table(["a"], [["x"]], align=["c"])


def test_intro_summary_and_folded_notes():
    """The lines around a table keep their order in text; in HTML the notes fold into a <details>."""
    t = _table.Table(["方式", "月額"], [["RAG", "$95"]], caption="出典: 価格表", intro=["13 ファイル"],
                     summary=["差は月 $71"], notes=["単価 $4 / $20", "<i>x</i>"])
    assert str(t).splitlines() == ["13 ファイル", "方式  月額", "----  ----", "RAG    $95", "出典: 価格表",
                                   "差は月 $71", "注: 単価 $4 / $20", "注: <i>x</i>"]
    h = t._repr_html_()
    assert h.index("13 ファイル") < h.index("<table>") < h.index("差は月 $71") < h.index("<details")
    assert "<summary>注と前提（2 件）</summary><ul><li>単価 $4 / $20</li><li>&lt;i&gt;x&lt;/i&gt;</li></ul>" in h
    assert "caption-side:bottom" in h and "出典: 価格表</caption>" in h
