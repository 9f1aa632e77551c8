"""The learner-time model (tools/learner_time.py) reads output as the notebook shows it, and splits off
the optional parts (level-2 headings with （任意）)."""
from __future__ import annotations

import nbformat

import learner_time as lt


def _lesson(tmp_path, outputs):
    md = nbformat.v4.new_markdown_cell
    code = nbformat.v4.new_code_cell("run()", outputs=outputs)
    optional = nbformat.v4.new_code_cell("more()", outputs=[nbformat.v4.new_output("stream", name="stdout", text="x" * 500)])
    nb = nbformat.v4.new_notebook(cells=[md("# L\n\n**所要時間** 約 5 分（任意の部分を含めると約 7 分）"), code,
                                         md("## まとめ"), md("## 2. （任意）続き"), optional])
    path = tmp_path / "l.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_redrawn_progress_bar_counts_once(tmp_path):
    bar = [nbformat.v4.new_output("stream", name="stderr", text=f"\rprogress {i:3d}/100") for i in range(101)]
    done = nbformat.v4.new_output("stream", name="stdout", text="finished\n")
    path = _lesson(tmp_path, bar + [done])
    part = lt.lesson_time(path, path).core
    assert part.output_chars == len("progress100/100") + len("finished")   # the bar's last state and the line
    assert lt._displayed("a\rb\rc\nd\r") == "c\nd"


def test_the_optional_part_runs_from_its_heading_and_the_header_states_both(tmp_path):
    path = _lesson(tmp_path, [])
    m = lt.lesson_time(path, path)
    assert m.optional.output_chars == 500 and m.core.output_chars == 0
    assert m.total_min - m.core_min == m.optional.minutes() > 0
    assert lt.stated(path) == (5, 7)
