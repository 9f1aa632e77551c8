"""Forged submissions: cells that try to pass hidden tests without answering (issue 31, "full marks without answers").

Each forgery is one code cell that a learner puts right after the first answer cell of a
*guess*: the release notebook whose answers are constant guesses (:data:`GUESSES`: 00's
functions return one fixed value, 09 answers "a" everywhere), so the functions return instead
of raising and a test passes only when it was silenced, rewritten or answered for the learner.
tests/test_tamper.py grades them all in one batch with ``ctxlab grade`` and checks that each
scores no more than blank and is held for review.

:data:`FORGERIES` maps a learner id to (assignment, what it tries, the cell).
"""
from __future__ import annotations

_CLEANUP_EMPTY = '''
get_ipython().input_transformers_cleanup.append(lambda lines: [])
'''

_AST_TRY = '''
import ast

class _Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[], finalbody=[])]
        return ast.fix_missing_locations(node)

get_ipython().ast_transformers.append(_Swallow())
'''

_SHOWTRACEBACK = '''
from IPython.core.interactiveshell import ExecutionResult
ExecutionResult.success = property(lambda self: True)
get_ipython().showtraceback = lambda *args, **kwargs: None
'''

_AST_NO_ASSERT = '''
import ast

class _NoAssert(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()

get_ipython().ast_transformers.append(_NoAssert())
'''

_PEEK_09 = '''
import re

answers = {f"q{i}": "a" for i in range(1, 10)}

def _peek(info):
    for letter, key in re.findall(r'"([a-d])"\\.__eq__\\(answers\\["(q\\d)"\\]\\)', info.raw_cell or ""):
        answers[key] = letter

get_ipython().events.register("pre_run_cell", _peek)
'''

_SETTRACE_JUMP = '''
import ast, linecache, sys

def _asserts(filename):
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except SyntaxError:
        return {}
    return {n.lineno: n for n in ast.walk(tree) if isinstance(n, ast.Assert)}

def _local(frame, event, arg):
    if event == "line":
        node = _asserts(frame.f_code.co_filename).get(frame.f_lineno)
        if node is not None:
            loc = frame.f_locals
            if "got" in loc and "path" in loc and "reasons" in loc:
                loc["got"] = (loc["path"], sorted(loc["reasons"])[0])   # written back when the tracer returns
            else:
                try:
                    frame.f_lineno = node.end_lineno + 1                  # skip the assert
                except ValueError:
                    pass
    return _local

def _jumper(frame, event, arg):
    return _local if "/ipykernel_" in frame.f_code.co_filename else None

sys.settrace(_jumper)
'''

_CUSTOM_EXC = '''
get_ipython().set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)
from IPython.core.interactiveshell import ExecutionResult
ExecutionResult.success = property(lambda self: True)
'''

_BUILTINS = '''
import builtins
builtins.abs = lambda x: 0
builtins.all = lambda *args: True
builtins.round = lambda x, n=None: x
builtins.sorted = lambda x, **k: list(x)
'''

_SHADOW = '''
def abs(x):
    return 0

def isinstance(*args):
    return True

def all(*args):
    return True
'''

_HELPERS = '''
import ctxlab.quiz as _q
import ctxlab.costs.compare as _c
_q.check_answers = lambda *args, **kwargs: None
_c.compare = lambda *args, **kwargs: None
'''

_SESSION_FILTER = '''
_session = get_ipython().kernel.session
_send = _session.send

def _quiet_send(stream, msg_or_type, *args, **kwargs):
    kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("header", {}).get("msg_type")
    if kind == "error":
        return None
    if kind == "execute_reply" and not isinstance(msg_or_type, str):
        pass
    return _send(stream, msg_or_type, *args, **kwargs)

_session.send = _quiet_send
from IPython.core.interactiveshell import ExecutionResult
ExecutionResult.success = property(lambda self: True)
'''

_THREAD = '''
import threading, time

def _empty(lines):
    return []

def _keep_installed():
    ip = get_ipython()
    while True:
        if _empty not in ip.input_transformers_cleanup:
            ip.input_transformers_cleanup.append(_empty)
        time.sleep(0.0005)

threading.Thread(target=_keep_installed, daemon=True).start()
'''

_EXIT = '''
import os

def _bail(info):
    if "HIDDEN" in (info.raw_cell or "") or "assert" in (info.raw_cell or ""):
        os._exit(0)

get_ipython().events.register("pre_run_cell", _bail)
'''

_FRAME_PEEK_09 = '''
import sys

class _Oracle(dict):
    def __getitem__(self, key):
        caller = sys._getframe(1)
        letters = [c for c in caller.f_code.co_consts if c in ("a", "b", "c", "d")]
        return letters[0] if letters else "a"

answers = _Oracle({f"q{i}": "a" for i in range(1, 10)})
'''

_EQ_09 = '''
class _Same(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__

answers = {f"q{i}": _Same("a") for i in range(1, 10)}
'''

_IMPORT_HOOK = '''
import sys, types

class _Finder:
    def find_spec(self, name, path=None, target=None):
        return None

sys.meta_path.insert(0, _Finder())
sys.modules["ctxlab.costs.compare"] = types.SimpleNamespace(compare=lambda *a, **k: None)
'''

# --------------------------------------------------------------------------- issue 42: read, rebind or copy the tests

_STDOUT_BUFFERS_09 = '''
import re, sys

class _Reader(dict):
    def __getitem__(self, key):
        text = "".join(str(b) for b in getattr(sys.stdout, "_buffers", {}).values()) if hasattr(sys.stdout, "_buffers") else ""
        found = re.findall(r"正解: ([a-d])", text)
        return found[-1] if found else "a"

answers = _Reader({f"q{i}": "a" for i in range(1, 10)})
'''

_EXTRACT_STACK_09 = '''
import re, traceback

class _Stack(dict):
    def __getitem__(self, key):
        for frame in traceback.extract_stack():
            m = re.search(r'"([a-d])"', frame.line or "")
            if m:
                return m.group(1)
        return "a"

answers = _Stack({f"q{i}": "a" for i in range(1, 10)})
'''

_RESOLVE_GETFRAME_00 = '''
import inspect, pkgutil

def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):
    frame = pkgutil.resolve_name("sys:_getframe")(1)
    while frame is not None:
        info = inspect.getargvalues(frame)
        if "path" in info.locals and "reasons" in info.locals:
            return (info.locals["path"], sorted(info.locals["reasons"])[0])
        frame = frame.f_back
    return ("long_context", "all_clear")
'''

_IN_LAST_00 = '''
import ast

def choose_path(*args):
    cell = (globals().get("In") or [""])[-1]
    for line in cell.splitlines():
        line = line.strip()
        if line.startswith("_check((") and line.endswith(")"):
            try:
                call = ast.literal_eval(line[len("_check"):])
            except (ValueError, SyntaxError):
                continue
            if tuple(call[0]) == tuple(args):
                return (call[1], sorted(call[2])[0])
    return ("long_context", "all_clear")
'''

_AUDIT_00 = '''
import re, sys

_seen = []

def _hook(event, args):
    if event == "compile" and args and isinstance(args[0], (str, bytes)):
        _seen.append(args[0] if isinstance(args[0], str) else args[0].decode("utf-8", "replace"))

getattr(sys, "add" + "audithook")(_hook)

def choose_path(*args):
    for text in reversed(_seen):
        for m in re.finditer(r"_check\\((\\(.*?\\)), \\"(\\w+)\\", \\{\\"(\\w+)\\"", text):
            if m.group(1) == repr(tuple(args)).replace("'", '"'):
                return (m.group(2), m.group(3))
    return ("long_context", "all_clear")
'''

_REBIND_CHECK_00 = '''
def choose_path(*args):
    global _check
    _check = lambda *a, **k: None
    globals()["choose_path"] = lambda *a: ("long_context", "all_clear")
    return ("long_context", "all_clear")

_check = lambda *a, **k: None
'''

_CALL_TRUTH_00 = '''
def cheaper_over_range(doc_tokens, n_files, model, low, high):
    truth = globals().get("_truth")
    return truth(doc_tokens, n_files, model, low, high) if truth else "rag"
'''

_CODE_SWAP_00 = '''
import functools
import ctxlab.costs.compare as _c
import ctxlab.quiz.scoring as _s

def _free(*args, **kwargs):
    return True

for _f in (_c.compare, _s.check_answers):
    _f.__code__ = (lambda *a, **k: True).__code__
    functools.update_wrapper(_free, _f)
'''

_RUNPY_00 = '''
import runpy
_copy = runpy.run_module("ctxlab.costs.compare")
_cheaper = _copy["cheaper_path"]

def cheaper_over_range(doc_tokens, n_files, model, low, high):
    return "rag"
'''

#: assignment -> {answer grade_id: the guessed answer cell} (wrong, but returns instead of raising)
GUESSES = {
    "00_start_here": {
        "choose_path": ("def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,\n"
                        "                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):\n"
                        "    return ('long_context', 'all_clear')\n"),
        "cheaper_path": "def cheaper_over_range(doc_tokens, n_files, model, low, high):\n    return 'rag'\n",
    },
    "09_knowledge_check": {"answers": 'answers = {f"q{i}": "a" for i in range(1, 10)}\n'},
}

#: learner id -> (assignment, technique, cell source)
FORGERIES = {
    "tmp_cleanup": ("00_start_here", "input_transformers_cleanup が全セルを空にする", _CLEANUP_EMPTY),
    "tmp_asttry": ("00_start_here", "AST 変換で全セルを try/except BaseException で包む", _AST_TRY),
    "tmp_showtb": ("00_start_here", "showtraceback を無効にし ExecutionResult.success を常に True", _SHOWTRACEBACK),
    "tmp_noassert": ("00_start_here", "AST 変換で assert を消す", _AST_NO_ASSERT),
    "tmp_peek": ("09_knowledge_check", "pre_run_cell フックが隠しテストの正解を読んで answers に書く", _PEEK_09),
    "tmp_settrace": ("00_start_here", "sys.settrace のトレース関数が assert の行を飛ばし、テストの変数を書き換える", _SETTRACE_JUMP),
    "tmp_customexc": ("00_start_here", "set_custom_exc で例外の表示を止める", _CUSTOM_EXC),
    "tmp_builtins": ("00_start_here", "builtins の abs / all / round / sorted を差し替え", _BUILTINS),
    "tmp_shadow": ("00_start_here", "ユーザー名前空間で abs / isinstance / all を定義し直す", _SHADOW),
    "tmp_helpers": ("00_start_here", "テストが使いそうな ctxlab の関数（check_answers, compare）を書き換え", _HELPERS),
    "tmp_session": ("00_start_here", "カーネルの session.send で error メッセージを捨てる", _SESSION_FILTER),
    "tmp_thread": ("00_start_here", "スレッドが input_transformers_cleanup を入れ直し続ける", _THREAD),
    "tmp_exit": ("00_start_here", "テストセルの直前に os._exit でカーネルを落とす", _EXIT),
    "tmp_framepeek": ("09_knowledge_check", "answers の __getitem__ が呼び出し元のフレームから正解を読む", _FRAME_PEEK_09),
    "tmp_eq": ("09_knowledge_check", "__eq__ が常に True の str を答えにする", _EQ_09),
    "tmp_importhook": ("00_start_here", "sys.meta_path と sys.modules でテストの import を差し替え", _IMPORT_HOOK),
    # issue 42
    "tmp_stdoutbuf": ("09_knowledge_check", "answers の __getitem__ が sys.stdout._buffers から「正解: c」を読む", _STDOUT_BUFFERS_09),
    "tmp_stack": ("09_knowledge_check", "answers の __getitem__ が traceback.extract_stack() から assert の行を読む", _EXTRACT_STACK_09),
    "tmp_resolve": ("00_start_here", "pkgutil.resolve_name('sys:_getframe') と inspect.getargvalues で呼び出し元の変数を読む", _RESOLVE_GETFRAME_00),
    "tmp_inlast": ("00_start_here", "In[-1] から実行中のテストセルを読む", _IN_LAST_00),
    "tmp_audit": ("00_start_here", "監査フック（sys.addaudithook を名前で）がコンパイルされるセルを読む", _AUDIT_00),
    "tmp_rebind": ("00_start_here", "global _check; _check = lambda *a, **k: None", _REBIND_CHECK_00),
    "tmp_truth": ("00_start_here", "隠しテストの _truth を呼ぶ", _CALL_TRUTH_00),
    "tmp_codeswap": ("00_start_here", "compare / check_answers の __code__ を差し替え（functools.update_wrapper。以前は採点の守りの関数）", _CODE_SWAP_00),
    "tmp_runpy": ("00_start_here", "runpy.run_module でライブラリの新しい写しを作る", _RUNPY_00),
}

# --------------------------------------------------------------------------- honest but unusual (issue 42)

_CHOOSE = """    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if ttft_cached_s > 3.0:
        reasons.append("latency")
    if lc_correct < rag_correct:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
"""
_SIG = ("def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,\n"
        "                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):\n")

#: learner id -> (assignment, what is unusual, a cell put after the solution's first answer cell):
#: each redefines an answer honestly, in a way the retired in-process guard held for review
HONEST_UNUSUAL = {
    "ok_globals": ("00_start_here", "globals() で関数を探す",
                   "def _pick():\n    return globals()['choose_path']\nassert callable(_pick())\n"),
    "ok_getattr": ("00_start_here", "getattr(compare, 'compare')",
                   "from ctxlab.costs import compare\n_cmp = getattr(compare, 'compare')\n"),
    "ok_lock": ("00_start_here", "import threading の Lock",
                "import threading\n_lock = threading.Lock()\n" + _SIG + "    with _lock:\n" +
                "".join("    " + ln + "\n" for ln in _CHOOSE.splitlines())),
    "ok_operator": ("00_start_here", "import operator",
                    "import operator\n" + _SIG + _CHOOSE.replace("doc_tokens / context_window > 0.5",
                                                                  "operator.gt(operator.truediv(doc_tokens, context_window), 0.5)")),
    "ok_namespace": ("00_start_here", "types.SimpleNamespace",
                     "import types\n" + _SIG + "    n = types.SimpleNamespace(share=doc_tokens / context_window)\n" +
                     _CHOOSE.replace("doc_tokens / context_window", "n.share")),
    "ok_vars": ("00_start_here", "vars(dataclass)",
                "from dataclasses import dataclass\n\n@dataclass\nclass _Nums:\n    share: float\n\n" + _SIG +
                "    share = vars(_Nums(doc_tokens / context_window))['share']\n" +
                _CHOOSE.replace("doc_tokens / context_window", "share")),
    "ok_max": ("00_start_here", "ローカルな def max",
               _SIG + "    def max(a, b):\n        return a if a > b else b\n    assert max(1, 2) == 2\n" + _CHOOSE),
    "ok_classname": ("00_start_here", "x.__class__.__name__ をエラーメッセージに",
                     "def cheaper_over_range(doc_tokens, n_files, model, low, high):\n"
                     "    if not isinstance(low, int):\n"
                     "        raise TypeError(f'low must be int, got {low.__class__.__name__}')\n"
                     "    if low < 1 or low > high:\n"
                     "        raise ValueError(f'need 1 <= low <= high, got {low!r}, {high!r}')\n"
                     "    seen = {compare.cheaper_path(doc_tokens, n_files, compare.Profile(model=model, questions_per_month=d * 30))\n"
                     "            for d in range(low, high + 1)}\n"
                     "    return seen.pop() if len(seen) == 1 and 'tie' not in seen else 'depends'\n"),
    "ok_inspect": ("00_start_here", "import inspect でシグネチャを見る",
                   "import inspect\n" + _SIG + "    assert len(inspect.signature(choose_path).parameters) == 10\n" + _CHOOSE),
    "ok_answers_copy": ("09_knowledge_check", "dict(...) と zip で answers を作り直す",
                        "answers = dict(zip(list(answers), [str(v) for v in answers.values()]))\n"),
    "ok_diagnose": ("03_prompt_caching", "diagnose で getattr(u, name, None)（dict でも SDK のオブジェクトでも）",
                    "def diagnose(usages):\n"
                    "    def field(u, name):\n"
                    "        v = u.get(name) if isinstance(u, dict) else getattr(u, name, None)\n"
                    "        return v or 0\n"
                    "    usages = list(usages)\n"
                    "    if len(usages) < 2:\n"
                    "        raise ValueError(f'need at least 2 calls, got {len(usages)}')\n"
                    "    reads = [field(u, 'cache_read_input_tokens') > 0 for u in usages]\n"
                    "    writes = [field(u, 'cache_creation_input_tokens') > 0 for u in usages]\n"
                    "    if not any(reads) and not any(writes):\n"
                    "        return 'nothing_cached'\n"
                    "    if not any(reads):\n"
                    "        return 'never_hits'\n"
                    "    return 'hit' if all(reads) else 'write_then_hit'\n"),
}


#: a learner that records every cell its kernel compiles or runs (pre_run_cell, an audit hook, the
#: shell's history) and, in a last cell, prints how many of them were test cells: 0 since issue 42
#: a learner's function that answers with the library's own version of the exercise (issue 42, "copying the
#: library"): in the graded build that version holds only the results the lesson's narrative and visible tests
#: use, so the hidden tests fail and the exercise earns nothing. learner -> (assignment, test grade id, what,
#: the cell put after the answer cell of the solution it redefines)
TWIN_CALLS = {
    "twin_call": ("03_prompt_caching", "first_paying_call-tests", "formulas.first_paying_call を呼ぶ",
                  "def first_paying_call(w, r):\n    from ctxlab.costs import formulas as _f\n"
                  "    return _f.first_paying_call(w, r)\n"),
    "twin_runpy": ("03_prompt_caching", "first_paying_call-tests", "runpy で formulas の新しい写しを作って呼ぶ",
                   "import runpy\n_fresh = runpy.run_module('ctxlab.costs.formulas')['first_paying_call']\n"
                   "def first_paying_call(w, r):\n    return _fresh(w, r)\n"),
    "twin_shapes": ("03_prompt_caching", "choose_placement-tests", "shape_costs で形ごとの合計を出して最安を返す",
                    "def choose_placement(turns, conversations):\n"
                    "    usd = prompt_caching.shape_costs(sim, cache_docs, turns, conversations, model=CACHE_MODEL,\n"
                    "                                     system=BASE_SYSTEM, questions=CONVERSATION + SECOND)\n"
                    "    return min(usd, key=usd.get)\n"),
    "twin_by_method": ("08_measure", "accuracy-tests", "measure.by_method を functools.partial で呼ぶ",
                       "import functools\n_by = functools.partial(measure.by_method)\n"
                       "def accuracy_by_method(graded, partial_weight=0.5):\n"
                       "    return {m: v['all'] for m, v in _by(graded, partial_weight).items()}\n"),
    "twin_rrf": ("10_rag_lab", "rrf-tests", "retrieval.rrf を別名で呼ぶ",
                 "from ctxlab.retrieval import rrf as _fuse\ndef rrf(rankings, k=60):\n    return _fuse(rankings, k)\n"),
}

SPY = ("00_start_here", '''
import sys
_spy_seen = []
get_ipython().events.register("pre_run_cell", lambda info: _spy_seen.append(info.raw_cell or ""))

def _spy_audit(event, args):
    if event == "compile" and args and isinstance(args[0], (str, bytes)):
        _spy_seen.append(args[0] if isinstance(args[0], str) else args[0].decode("utf-8", "replace"))

sys.addaudithook(_spy_audit)
''', '''
_spy_all = [t for t in _spy_seen + list(In) if "_spy_" not in t]   # not the spy's own cells
_spy_marks = ["HIDDEN" + " TESTS", "_check" + "(", "_truth" + "(", "assert choose" + "_path("]
_spy_tests = [t for t in _spy_all if any(m in t for m in _spy_marks)]
print(f"SPY saw {len(_spy_all)} sources, {len(_spy_tests)} of them test code")
''')
