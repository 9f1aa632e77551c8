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
import ctxlab.labs._twins as _t
from contextlib import nullcontext
_t.exact_type = lambda *args: True
_t.twins_disabled = lambda *args, **kwargs: nullcontext()
import ctxlab.costs.compare as _c
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
sys.modules["ctxlab.labs._twins"] = types.SimpleNamespace(exact_type=lambda *a: True)
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
    "tmp_helpers": ("00_start_here", "テストが使う ctxlab の関数（exact_type, twins_disabled, compare）を書き換え", _HELPERS),
    "tmp_session": ("00_start_here", "カーネルの session.send で error メッセージを捨てる", _SESSION_FILTER),
    "tmp_thread": ("00_start_here", "スレッドが input_transformers_cleanup を入れ直し続ける", _THREAD),
    "tmp_exit": ("00_start_here", "テストセルの直前に os._exit でカーネルを落とす", _EXIT),
    "tmp_framepeek": ("09_knowledge_check", "answers の __getitem__ が呼び出し元のフレームから正解を読む", _FRAME_PEEK_09),
    "tmp_eq": ("09_knowledge_check", "__eq__ が常に True の str を答えにする", _EQ_09),
    "tmp_importhook": ("00_start_here", "sys.meta_path と sys.modules でテストの import を差し替え", _IMPORT_HOOK),
}
