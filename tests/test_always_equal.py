"""Always-equal submissions earn nothing on lessons 00-05's autograded exercises (no nbgrader process).

For every autograded exercise of lessons 00-05, the function is replaced by one that returns an object whose
``__eq__`` (and every comparison and arithmetic) answers "yes", and the exercise's test cell, hidden tests
included, runs on it in a kernel that ran the whole solution notebook: a test that compared values only would
pass it. The hidden tests check exact types (``type(x) is ...``), so the test cell raises, and nbgrader gives a
test cell its points only when it runs without an error. The solution itself must still pass (run again after
each bad submission). At grading the same object cannot even cross from the learner's kernel (the codec of
ctxlab/grading/codec.py rebuilds only plain values and the course's types: tests/test_grading_codec.py).

(A submission that calls the library function answering its exercise is the graded build's part:
tests/test_graded_build.py and tests/test_tamper.py's ``TWIN_CALLS``.)
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

import nbfixtures
from nbfixtures import answer_cells, grade_id

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ["00_start_here", "01_count_tokens", "02_pricing", "03_prompt_caching", "04_ttl", "05_crossover"]

ANYTHING = '''
class _Anything:
    """Equal to everything, smaller and larger than everything, closed under arithmetic."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    __le__ = __gt__ = __ge__ = __lt__
    def __hash__(self): return 0
    def __bool__(self): return True
    def __abs__(self): return self
    def __neg__(self): return self
    def _same(self, other): return self
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    def __round__(self, n=None): return self
    def __getitem__(self, key): return self
    def __contains__(self, key): return True
    def __len__(self): return 2
    def __iter__(self): return iter([self, self])
    def __format__(self, spec): return "anything"
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __index__(self): return 0


def {name}(*args, **kwargs):
    return _Anything()
'''

def _exercises(nb) -> list[tuple[int, str, int]]:
    """(answer cell index, function name, test cell index) for every autograded function exercise."""
    out = []
    tests = nbfixtures.test_cells(nb)
    for a in answer_cells(nb):
        src = nb.cells[a].source
        names = [line.split("(")[0][4:] for line in src.splitlines() if line.startswith("def ")]
        after = [t for t in tests if t > a]
        if names and after:
            out.append((a, names[0], after[0]))
    return out


def _trial(key: str, submission: str, test_src: str, restore: str) -> list:
    run = textwrap.dedent(f"""
    _bad_outcome = None
    try:
        exec(compile({submission!r}, "submission", "exec"), globals())
        exec(compile({test_src!r}, "test cell", "exec"), globals())
        _bad_outcome = "passed"
    except Exception as _e:
        _bad_outcome = "raised " + type(_e).__name__
    exec(compile({restore!r}, "solution", "exec"), globals())
    try:
        exec(compile({test_src!r}, "test cell", "exec"), globals())
        _good_outcome = "passed"
    except Exception as _e:
        _good_outcome = "raised " + type(_e).__name__ + ": " + str(_e)[:200]
    _outcomes[{key!r}] = [_bad_outcome, _good_outcome]
    """)
    return [new_code_cell(run)]


def _grade(lesson: str) -> tuple[dict, list[str]]:
    nb = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    keys, extra = [], [new_code_cell("_outcomes = {}")]
    for a, name, t in _exercises(nb):
        key = f"{grade_id(nb.cells[t])}:always_equal"
        keys.append(key)
        extra += _trial(key, ANYTHING.format(name=name), nb.cells[t].source, nb.cells[a].source)
    extra.append(new_code_cell("import json\nprint('OUTCOMES' + json.dumps(_outcomes))"))
    nb.cells += extra
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "solutions" / lesson)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return json.loads(text.split("OUTCOMES", 1)[1]), keys


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_always_equal_submissions_earn_nothing(lesson):
    outcomes, keys = _grade(lesson)
    assert set(outcomes) == set(keys) and keys
    earned = {k: bad for k, (bad, _good) in outcomes.items() if bad == "passed"}
    assert not earned, f"these always-equal submissions would get the exercise's points: {sorted(earned)}"
    broken = {k: good for k, (_bad, good) in outcomes.items() if good != "passed"}
    assert not broken, f"the solution no longer passes after an always-equal submission: {broken}"
    # every exercise was tried
    assert len(keys) == len(_exercises(nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)))
