# %% [markdown]
# # 09 理解度チェック: 数字と症状から判断する
#
# 00〜08 で扱った判断を、現場でよくある相談の形で 9 問にしました。正解を当てるだけでは合格ではありません。
# **なぜその選択肢なのかを、式か数字で説明できること**が合格の条件です。最後に、理由を自分の言葉で書く記述問題があります。
#
# **この節で身につくこと**
#
# - 相談の文面から、どの数字（前提・料金・待ち時間・正答率・更新頻度）とどの仕組みの話かを見分けられる
# - 選んだ答えの理由を、`ctxlab` で計算した数字や API の `usage` の値で裏付けられる
# - 間違えた問から、見直すべき節を特定できる
#
# **所要時間** 約 30 分　**前提** 00〜08

# %%
import ctxlab
from ctxlab import quiz as qz

client = ctxlab.make_client()
print(ctxlab.mode_line(client))
ctxlab.show_cost("09_knowledge_check", client)   # what this lesson costs on the real API

# %% [markdown]
# ## 1. 進め方
#
# 問題は `quizzes/knowledge_check.yaml` にあります。1 問ずつ表示され、選択肢を選んで「回答」を押すと、すぐに正誤と解説が出ます。
# 選んだ選択肢が誤りなら、その選択肢のどこが誤りかも表示されます。
#
# - 選択肢の並びは問題ごとに決まった順に並べ替えてあります（何度開いても同じ順です）。選択肢の id（a〜d）は並び順ではなく、選択肢そのものに付いた名前です。
# - 記録されるのは**最初の答え**です。答えた問題の選択肢は変えられません。最後の画面の「最初から」で全部やり直せます。
# - 答えはカーネルの中の `quiz.answers`（問題 id → 選んだ選択肢の id）に入ります。
#
# **キーボードだけで操作する場合**: Tab で選択肢を 1 つずつ移り、選びたい選択肢で Space を押します。Tab で「回答」に移って Enter を押すと、
# フォーカスが「次へ」に移るので、もう一度 Enter で次の問題に進みます（フォーカスは次の問題の最初の選択肢に戻ります。Shift + Tab で前に戻れます）。
#
# どの節の問題がいくつあるかを先に見ておきます。

# %%
bank = qz.load()
print(f"{bank.title}: {len(bank)} 問")
for lesson in qz.LESSONS:
    n = sum(q.lesson == lesson for q in bank)
    if n:
        print(f"  {lesson:24s} {n} 問")

# %% [markdown]
# ## 2. 答える
#
# 下のセルを実行するとクイズが表示されます。表示されない環境（ウィジェットを描けない画面）では、`quiz.select(選択肢の id)` →
# `quiz.submit()` → `quiz.next()` と、ボタンと同じ操作をコードから行えます。いま表示している問題と選択肢は
# `print(quiz.as_text())` で読めます。

# %%
from ctxlab.widgets.quiz import Quiz

quiz = Quiz(bank)
quiz

# %% [markdown] nbgrader={"grade": false, "grade_id": "answers-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（9 点・1 問 1 点）: 答えを提出する
#
# 変数 `answers` に、問題 id（`"q1"`〜`"q9"`）から選んだ選択肢の id（`"a"`〜`"d"`）への辞書を入れてください。
# 上のクイズで答えたなら `answers = dict(quiz.answers)` で足ります。手で書いても構いません。
# 9 問すべてに答えがないと、採点のセルはどれも通りません。

# %% nbgrader={"grade": false, "grade_id": "answers", "locked": false, "schema_version": 3, "solution": true, "task": false}
# クイズの答えをそのまま使う:       answers = dict(quiz.answers)
# 手で書く: 問題 id → 選択肢の id の辞書（9 問ぶん）
### BEGIN SOLUTION
answers = {
    "q1": "c",
    "q2": "d",
    "q3": "b",
    "q4": "a",
    "q5": "d",
    "q6": "c",
    "q7": "b",
    "q8": "c",
    "q9": "a",
}
### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 各問で、まず「どの数字・どの仕組みの話か」（前提の 50%、4 つの数字、キャッシュの前方一致、TTL、使い回し回数 k、絞り込みの残存率、
# citations の単位、新旧の版の矛盾）を決めてから、選択肢ごとに「その数字で本当にそうなるか」を確かめます。
# 計算が要る問は、書き込み倍率 w・読み出し倍率 r・使い回し回数 k で 1 回あたり（または合計）の料金を書き出すと決まります。
#
# </details>

# %% [markdown]
# 次の採点セルは 1 問につき 1 つです。見えているテストは答えの形（全問に、実在する選択肢の id で答えているか）だけを確かめます。

# %% nbgrader={"grade": true, "grade_id": "q1-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q1（01_count_tokens）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q1", answers["q1"]) == "9b3f7446491ebafc", "q1 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q2-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q2（00_start_here）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q2", answers["q2"]) == "39094a275c58a708", "q2 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q3-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q3（03_prompt_caching）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q3", answers["q3"]) == "ef8cb43260356d39", "q3 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q4-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q4（03_prompt_caching）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q4", answers["q4"]) == "8a9f6359b7a31562", "q4 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q5-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q5（04_ttl）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q5", answers["q5"]) == "1613fc0722a7be64", "q5 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q6-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q6（05_crossover）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q6", answers["q6"]) == "1a9ae91c286121db", "q6 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q7-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q7（06_metadata_filtering）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q7", answers["q7"]) == "2fda9a1933c76c11", "q7 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q8-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q8（07_citations）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q8", answers["q8"]) == "c2a9782b667c3842", "q8 の答えが違います"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q9-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q9（08_measure）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers)
### BEGIN HIDDEN TESTS
from ctxlab.quiz import key_hash
assert key_hash("ctxlab-knowledge-check-2026-11", "q9", answers["q9"]) == "d85456802a927841", "q9 の答えが違います"
### END HIDDEN TESTS

# %% [markdown]
# ## 3. 節ごとの結果
#
# どの節の判断でつまずいたかを図にします。赤い部分のある節が、見直す節です。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

from ctxlab.plots import quiz as quiz_plots

result = qz.score(bank, answers)
quiz_plots.by_lesson(bank, answers)
plt.tight_layout()
print(result)
for qid in result.wrong + result.unanswered:
    q = bank.question(qid)
    print(f"  見直す: {qid} {q.topic} → {q.lesson}")

# %% [markdown]
# ## 4. 解説の数字を、計算で確かめる
#
# 解説に出てくる数字は、どれも `ctxlab.costs.pricing` の式で出せます。答え合わせが済んだら、ここで計算し直してください。
# 倍率は価格表（Opus 5）の値で、金額は「キャッシュを使わずに文書を 1 回送る代金」を 1 とした単位です。
#
# まず、キャッシュが得になる回数です。k 回の呼び出しは、キャッシュなしで k、キャッシュありで w + (k − 1) r なので、
# k > (w − r) / (1 − r) で得になります。

# %%
from ctxlab.costs import formulas, pricing

opus = pricing.get_model("claude-opus-5")
r = opus.cache_read_multiplier
TTL = {"5 分": (5, opus.cache_write_5m_multiplier), "1 時間": (60, opus.cache_write_1h_multiplier)}
for name, (_, w) in TTL.items():
    print(f"TTL {name}: 書き込み {w}x・読み出し {r}x → k > {formulas.breakeven_reuses(w, r):.2f}、"
          f"{formulas.first_paying_call(w, r)} 回目から得")


# %% [markdown]
# ただし、読み出しになるのは TTL の内側に次の呼び出しが来たときだけです。呼び出しの間隔と TTL から合計を出す小さな関数で、
# 月次バッチ（20 分おき）の場合を計算します。

# %%
def batch_cost(calls, gap_min, ttl_min=None, w=1.0):
    """Input cost of `calls` calls `gap_min` minutes apart, in units of one uncached send."""
    if ttl_min is None:
        return float(calls)
    reads = calls - 1 if gap_min <= ttl_min else 0   # a read refreshes the TTL
    return w * (calls - reads) + r * reads


for calls in (2, 3):
    costs = {"なし": batch_cost(calls, 20)}
    costs.update({name: batch_cost(calls, 20, ttl, w) for name, (ttl, w) in TTL.items()})
    best = min(costs, key=costs.get)
    print(f"20 分おきに {calls} 問: " + "、".join(f"{k} {v:.2f}" for k, v in costs.items()) + f" → 最安は {best}")

# %% [markdown]
# 検索（RAG）が全文のキャッシュより安くなる条件です。1 回あたりは、キャッシュが (w + (k − 1) r) / k、検索が ρ + s です。
# k が大きいとキャッシュ側は r に近づくので、境目は ρ < r − s になります。

# %%
w5 = opus.cache_write_5m_multiplier
s, rho, k, doc_tokens = 0.02, 0.15, 50, 300_000
cache = formulas.relative_cost(1.0, k, 0.0, 0.0, w5, r)
rag = formulas.relative_cost(0.0, 1, rho, s, w5, r)
limit = formulas.rho_asymptote(r, s)
print(f"k = {k}: キャッシュ {cache:.3f} / 回、検索（ρ = {rho}）{rag:.3f} / 回")
print(f"検索が勝つ境目（k が大きいとき）: ρ < r − s = {limit:.2f}"
      f"（{doc_tokens:,} トークンなら 1 回 {limit * doc_tokens:,.0f} トークンまで）")
for k_ in (2, 10, 50):
    print(f"  k = {k_:>2}: 引いてよい割合の上限 {formulas.rho_limit(k_, w5, r, s):.2f}")

# %% [markdown]
# キャッシュが一度も読まれないとき（`cache_read_input_tokens` が 0 のまま）に、入力の料金がどれだけ増えるか。
# そして、絞り込みで要るファイルが残った割合（06 と同じく、規程に答えがある質問だけで数えます）です。

# %%
doc, question = 197_000, 400
never_read = pricing.call_cost("claude-opus-5", input_tokens=question, cache_write_5m_tokens=doc)
no_cache = pricing.call_cost("claude-opus-5", input_tokens=doc + question)
print(f"毎回書き込み ${never_read.total:.3f} / 回、キャッシュなし ${no_cache.total:.3f} / 回 "
      f"→ {never_read.total / no_cache.total - 1:+.0%}")

kept, answerable, target = 20, 25, 0.9
print(f"絞り込み後に要るファイルがすべて残った割合 {kept / answerable:.0%}（目安 {target:.0%}）→ "
      f"{'足りる' if kept / answerable >= target else '絞りすぎ'}")

# %% [markdown]
# ## 5. 症状を手元で再現する: 区切りより前に時刻がある
#
# 「キャッシュを入れたのに請求が下がらない」を実際に起こして、`usage` の 3 つの欄で見ます。
# 同じ質問を 3 回ずつ、(1) システムプロンプトの先頭に呼び出し時刻を入れた形、(2) 時刻を質問の前（区切りの後ろ）に移した形で送ります。
# 実演には安いモデル（Haiku 4.5）と規程 1 ファイルを使います。オフラインでは sandbox が答え、実 API でも同じコードが動きます
# （実 API では、呼び出しの前に見積もりを表示し、`CTXLAB_BUDGET_USD` の範囲でだけ実行します）。
#
# システムプロンプトの末尾の「実行 ID」は、ノートブックを実行し直しても (2) の 1 回目が書き込みから始まるようにするためのもので、
# 1 回の実行の中では変わりません。

# %%
import uuid
from datetime import datetime

from ctxlab.api import budget, messages, tokens
from ctxlab import corpus

DEMO = "claude-haiku-4-5"
RUN_ID = uuid.uuid4().hex[:8]
SYSTEM = f"{messages.SYSTEM_PROMPT}\n（実行 ID: {RUN_ID}）"
docs = [corpus.by_file()["hr_kyuyo_kitei.txt"]]
QUESTION = "給料は毎月何日に振り込まれますか？"


def request(time_before_breakpoint):
    now = datetime.now().isoformat(timespec="microseconds")   # differs on every call
    if time_before_breakpoint:
        return messages.question_request(docs, QUESTION, model=DEMO, max_tokens=100,
                                         system=f"現在時刻: {now}\n{SYSTEM}")
    return messages.question_request(docs, f"現在時刻: {now}\n{QUESTION}", model=DEMO, max_tokens=100, system=SYSTEM)


prefix = tokens.count_request(request(False), client=client, model=DEMO)
write = pricing.call_cost(DEMO, cache_write_5m_tokens=prefix.tokens, output_tokens=100).total
read = pricing.call_cost(DEMO, cache_read_tokens=prefix.tokens, output_tokens=100).total
budget.check(4 * write + 2 * read, client, f"この節の 6 回の呼び出し（{prefix.tokens:,} トークン前後、書き込み 4 回・読み出し 2 回）")

for label, before in (("時刻が区切りより前", True), ("時刻が区切りより後ろ", False)):
    print(label)
    for i in range(3):
        u = client.messages.create(**request(before)).usage
        print(f"  {i + 1} 回目: cache_creation {u.cache_creation_input_tokens:>6,}  "
              f"cache_read {u.cache_read_input_tokens:>6,}  input {u.input_tokens:>4,}")

# %% [markdown]
# 前者は毎回、前置き全体を書き込み、読み出しは 0 のままです。前置きの先頭にある時刻が毎回変わるので、前方一致が 1 回も成り立ちません。
# 時刻を区切りの後ろに移すだけで、2 回目から読み出しになります。`cache_creation_input_tokens` が 0 でない（長さは足りている）のに
# `cache_read_input_tokens` が 0 のまま、という組み合わせが、この症状の見分け方です。

# %% [markdown] nbgrader={"grade": false, "grade_id": "why-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（記述・3 点）: なぜ、を説明する
#
# 9 問から 1 問を選び（間違えた問か、迷った問を勧めます）、最初に問題 id を書いてから、次の 2 つを 3〜5 文で書いてください。
#
# 1. 正しい選択肢がなぜ成り立つか。式・`ctxlab` で計算した数字・API の `usage` の値のどれかを 1 つ以上使うこと。
# 2. いちばん迷った（または選んでしまった）選択肢が、どの条件のもとでなら正しくなり、この問ではなぜ成り立たないか。
#
# 採点の観点: 数字や式が問題の条件と合っているか／不正解の選択肢の「もっともらしさ」を正しく言い当てているか／結論が判断として使える形か。

# %% [markdown] nbgrader={"grade": true, "grade_id": "why", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# q5。1 時間 TTL は書き込みが 2 倍で、読み出しが 0.1 倍なので、2 問だけなら 2 + 0.1 = 2.1 となり、キャッシュなしで 2 回送る 2.0 より高い。
# 損益分岐は k > (w − r) / (1 − r) = 2.11 なので、1 時間 TTL が得になるのは 3 回目から（2.2 < 3）。
# 迷った「5 分 TTL なら 2 回目から得」は、2 回目が 5 分以内に来て読み出しになる場合には正しい（1.25 + 0.1 = 1.35 < 2）。
# この問では間隔が 20 分で、2 回とも書き込みになって 2.5 と最も高くなるので成り立たない。損得は倍率だけでなく、TTL の内側に次の呼び出しが来るかで決まる。
# ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 理由を書くときは、選択肢の文をなぞるのではなく、問題文の条件（間隔、回数、割合、usage の値）を式に入れて結論まで運びます。
# 不正解の選択肢は「どんな条件なら正しいか」を先に考えると、この問で成り立たない理由がはっきりします。
#
# </details>

# %% [markdown]
# ## まとめ
#
# - 方式の判断は、前提（合計トークン ÷ ウィンドウ ≤ 50%）と 4 つの数字で決まる。更新頻度だけは向きが逆。
# - キャッシュは前方一致。区切りより前に毎回変わるものを置かない。効いているかは `cache_read_input_tokens` で確かめる。
# - キャッシュの損得は倍率と「1 回の書き込みが何回読まれるか」で決まり、読まれるかどうかは TTL と間隔で決まる。
# - 検索が安いのは、引く割合が読み出しの割引から検索費を引いた値（r − s）を下回るときだけ。
# - 絞り込みは要るファイルの 9 割が残るかで確かめ、出典は 1 ファイル 1 ブロックで取る。新旧の版が混ざる誤りは、方式より先に文書（有効な版だけを渡す）で直す。
# - 次の節（10）では、RAG を組むと決めたときに、検索の取りこぼしを測って減らす方法を扱います。
