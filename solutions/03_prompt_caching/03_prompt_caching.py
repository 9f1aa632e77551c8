# %% [markdown]
# # 03 プロンプトキャッシュ: 前方一致と、損益分岐の回数
#
# ロングコンテキストの料金は、プロンプトキャッシュ (prompt caching) を使うかどうかで桁が変わります。キャッシュが効く瞬間と効かない瞬間を
# sandbox でシミュレーションし、応答の `usage` を読んでドルに直します。オフラインで見えるのは sandbox の規則の帰結で、API の測定ではありません。
#
# **このレッスンで身につくこと**
#
# - 前方一致 (prefix match) と区切り（API の用語では cache breakpoint）から、どこまでがキャッシュされるかを言える
# - `usage` から書き込みか読み出しかを判定してドルに直し、キャッシュありとなしを正しい基準線で比べられる
# - キャッシュが壊れている症状を `usage` から見抜き、損益分岐 k > (w − r)/(1 − r) を自分のモデルの倍率で計算できる
# - 自動キャッシュ・明示の区切り・併用のどれが安いかを、リクエストの形（会話の長さと数）から決められる
#
# **所要時間** 約 75 分（任意の部分を含めると約 120 分）　**前提** 01（トークンを数える）、02（料金）
#
# 最後の付録 A〜C（見出しに **（任意）**）は、このコースの問いの先にある細部です。演習はすべて本編にあります。

# %%
import uuid
from datetime import datetime, timedelta

import ctxlab
from ctxlab.api import budget, messages, tokens
from ctxlab.labs import prompt_caching
from ctxlab import corpus
from ctxlab.costs import formulas, pricing
from ctxlab.costs.usage import total_input, usage_dict

client = ctxlab.make_client()
ctxlab.show_cost("03_prompt_caching", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# 実演には安い小型モデル（Haiku 5.5、`pricing.SMALL_MODEL`）と規程 2 ファイルを使います（実 API では、次のセルの見積もり以上を `CTXLAB_BUDGET_USD` に設定）。
# システムプロンプトの「実行 ID」は、実行し直しても 1 回目が書き込みになるためのものです。オフラインの sandbox は時計を手で進めるので、
# 何分読んでいてもキャッシュの寿命（TTL、04 で扱います）は切れません。

# %%
if ctxlab.is_offline(client):   # 手動で進める時計（待ち時間のシミュレーションなし）: どれだけ読んでいてもキャッシュは切れない
    client = ctxlab.make_client(offline=True, sandbox=ctxlab.Sandbox(realtime=False, time_scale=0))
DEMO = pricing.SMALL_MODEL   # いまの小さいモデル: 実 API でもデモが安く済む
SOURCE = "出典: sandbox のシミュレーション" if ctxlab.is_offline(client) else "出典: 実 API が返した usage"
SYSTEM = f"{messages.SYSTEM_PROMPT}\n（実行 ID: {uuid.uuid4().hex[:8]}）"
docs = [d for d in corpus.load() if d.file in ("hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt")]


def ask(question, model=DEMO, cache_ttl="5m", docs=docs):
    """A request: system, the documents, a breakpoint on the last document, then the question."""
    return messages.question_request(docs, question, model=model, max_tokens=200, cache_ttl=cache_ttl, system=SYSTEM)


prefix = tokens.count_request(ask("?"), client=client, model=DEMO)   # 前置き（システムプロンプト + 規程 2 ファイル）
# 2〜4 節と付録 A・C で 32 リクエスト、7 節と付録 B で最大 60。実 API では CTXLAB_BUDGET_USD の予算内でだけ送る
budget.check(prompt_caching.estimate_usd(32 + 60, prefix.tokens, DEMO), client, "このレッスンの実演（最大 92 回の呼び出し）")

# %% [markdown]
# ## 1. 前方一致と区切り
#
# API はリクエストを決まった順に 1 本の列として組み立てます: **tools → system → messages**。
# `cache_control` を付けたブロックが**区切り**（API の用語では cache breakpoint）で、列の先頭からそのブロックまで（それを含む）がキャッシュの単位になります。
# 次の呼び出しで、先頭から区切りまでが **バイト単位で同じ** なら保存済みのエントリ（キャッシュに保存された前置き。04 でも同じ呼び方をします）を読み出し、1 バイトでも違えば別物として書き直します。
#
# 区切りは 1 リクエストに 4 つまで。区切りより後ろ（質問）は毎回通常の単価です。だから **毎回同じものを前に、毎回変わるものを後ろに** 置きます。
# `prompt_caching.layout` で、このレッスンのリクエストを列の順に見てみます。

# %%
req = ask("有給休暇は何日まで繰り越せますか？")
print(prompt_caching.layout(req))

# %% [markdown]
# ## 2. 書き込みと読み出しを `usage` で見る
#
# 同じ前置きに、違う質問を 2 回送ります。1 回目は書き込み、2 回目は読み出しになるはずです。
# 応答の `usage` には 4 つの入力の欄があります。
#
# | 欄 | 意味 | 単価（通常の入力に対する倍率） |
# |---|---|---|
# | `cache_creation_input_tokens`（内訳は `cache_creation`） | 区切りまでを新しく保存した分 | 5 分 TTL は 1.25 倍、1 時間は 2 倍 |
# | `cache_read_input_tokens` | 保存済みのエントリから読んだ分 | モデルで違う（このレッスンの DEMO のモデルは 0.1 倍） |
# | `input_tokens` | **最後の区切りより後ろ** の、キャッシュされない分 | 1 倍 |
#
# 倍率はモデルごとに価格表にあります（次のセル）。読み出しの倍率は、今日のモデルでは下がっています。

# %%
prompt_caching.multipliers_table()

# %%
QUESTIONS = ["有給休暇は何日まで繰り越せますか？", "給与の支払日はいつですか？", "時間単位の年休は取れますか？"]
r1 = client.messages.create(**ask(QUESTIONS[0]))
r2 = client.messages.create(**ask(QUESTIONS[1]))
for name, resp in [("1 回目", r1), ("2 回目", r2)]:   # explain: usage の内訳と料金（pricing.usage_cost）
    print(f"--- {name}\n{prompt_caching.explain(resp.usage, DEMO)}")

# %% [markdown]
# 「キャッシュされない」の数（`input_tokens`）が小さいことに注意してください。これは区切りの後ろ（質問）だけの数で、入力の合計ではありません。合計は 3 つの欄の和です。

# %% [markdown]
# ## 3. 正しい比べ方: `cache_control` のない基準線と、ドル
#
# キャッシュの効果の測り方でよくある間違いは、書き込みの回を「キャッシュなし」の基準にすることと、`input_tokens`（区切りの後ろだけの数）と
# 応答時間だけを比べてドルを出さないことです（Anthropic の claude-cookbooks の `misc/prompt_caching.ipynb` がこの形です。版によって細部が違います）。
# 書き込みの割増を払った回を基準にすると、節約は実際より大きく見えます。正しい比べ方は次のとおりです。
#
# 1. 基準線は `cache_control` を付けないリクエスト（`cache_ttl=None`）で、同じ質問を同じ回数送る
# 2. キャッシュありの側は、1 回目の書き込みも含めて全部数える
# 3. 両方を `usage` からドルに直して、合計で比べる

# %%
r3 = client.messages.create(**ask(QUESTIONS[2]))
cached = [r1, r2, r3]
baseline = [client.messages.create(**ask(q, cache_ttl=None)) for q in QUESTIONS]

display(prompt_caching.calls_table([r.usage for r in cached], DEMO, source=f"キャッシュあり（1 回目が書き込み）。{SOURCE}"))
display(prompt_caching.calls_table([r.usage for r in baseline], DEMO, source=f"基準線: cache_control なし。{SOURCE}"))

# %%
cost_cached = sum(pricing.usage_cost(r.usage, DEMO).total for r in cached)
cost_base = sum(pricing.usage_cost(r.usage, DEMO).total for r in baseline)
wrong = pricing.usage_cost(r1.usage, DEMO).input / pricing.usage_cost(r2.usage, DEMO).input
right = pricing.usage_cost(baseline[1].usage, DEMO).input / pricing.usage_cost(r2.usage, DEMO).input
print(f"正しい比較（{len(QUESTIONS)} 回の合計、出力込み）: キャッシュあり ${cost_cached:.5f} / なし ${cost_base:.5f}"
      f" → {cost_cached / cost_base:.0%}")
print(f"間違った比較: 書き込みの回を基準にすると、読み出しは入力が 1/{wrong:.1f} に見える（正しい基準なら 1/{right:.1f}）")

# %% [markdown]
# ## 4. キャッシュを壊す書き方
#
# 危ないのは **区切りより前に、呼び出しごとに変わるものがある** 形です。いちばんよくある例（時刻）を見ます（ほかの例と API の診断は付録 A）。
#
# ### 4.1 システムプロンプトに現在時刻を入れる
#
# 1 分おきの 3 回の質問を再現します（`datetime.now()` の代わりに 1 分ずつ進めた時刻）。

# %%
start = datetime(2026, 12, 1, 9, 0)


def with_clock_in_system(question, now):   # 呼び出しごとに変わる時刻が、区切りより前（system）にある
    return dict(ask(question), system=f"現在日時: {now:%Y-%m-%d %H:%M}\n{SYSTEM}")


clock_calls = [client.messages.create(**with_clock_in_system(q, start + timedelta(minutes=i)))
               for i, q in enumerate(QUESTIONS)]
display(prompt_caching.calls_table([r.usage for r in clock_calls], DEMO, source=SOURCE))
billed = (sum(pricing.usage_cost(r.usage, DEMO).input for r in clock_calls)
          / sum(prompt_caching.uncached_cost(r.usage, DEMO).input for r in clock_calls))
print(f"入力の請求は、キャッシュを付けない場合の {billed:.4f} 倍（書き込みの倍率は {pricing.get_model(DEMO).cache_write_5m_multiplier}）")

# %% [markdown]
# `cache_read_input_tokens` が毎回 0 で、毎回書き込みになっています。料金は下がらず、書き込みの割増だけが乗るので、
# 入力の請求は付けなかった場合の書き込みの倍率（1.25 倍）に近くなります。区切りの後ろの質問は通常単価なので、倍率をわずかに下回ります。
#
# 直し方: 時刻は区切りの **後ろ**、質問と一緒に送ります。区切りまでは 2〜3 節のリクエストと同じバイト列になるので、1 回目から読み出しです。

# %%
fixed_calls = [client.messages.create(**ask(f"現在日時: {start + timedelta(minutes=i):%Y-%m-%d %H:%M}\n{q}"))
               for i, q in enumerate(QUESTIONS)]
display(prompt_caching.calls_table([r.usage for r in fixed_calls], DEMO, source=SOURCE))


# %% [markdown]
# ## 5. 症状を読む: キャッシュを入れたのに請求が下がらない
#
# | 症状 | 確かめる欄 | 原因 | 直し方 |
# |---|---|---|---|
# | 請求が下がらない、むしろ上がった | 読み出しが毎回 0、書き込みが毎回出る | 区切りより前に毎回変わるもの（時刻・利用者名・キー順の違う JSON）、モデルや会話の途中での設定の切り替え（付録 A） | 変わるものを区切りの後ろへ。設定は会話の最初に決める |
# | 請求が下がらない、割増もない | 書き込みも読み出しも 0 | 区切りがない、または区切りまでが最小長に届かない（付録 A） | 固定部分を区切りの前にまとめる |
# | ときどきしか下がらない | 読み出しと書き込みが交互に出る | 呼び出しの間隔が TTL を超えている | 04 で扱う（TTL の選び方） |

# %% [markdown] nbgrader={"grade": false, "grade_id": "diagnose-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: 一連の呼び出しの `usage` から診断する
#
# 同じ前置きで送った一連の呼び出しの `usage` を受け取り、キャッシュの状態を次の 4 つのどれかで返す関数 `diagnose(usages)` を書いてください。
#
# | 返す値 | 条件 |
# |---|---|
# | `"nothing_cached"` | 何もキャッシュされていない（区切りがない、または区切りまでが最小長に届かない。`usage` からはどちらか区別できない） |
# | `"never_hits"` | 書き込みは起きているのに、読み出しが一度もない（区切りより前で何かが変わっている） |
# | `"hit"` | どの呼び出しも読み出している（最初からキャッシュが温まっていた） |
# | `"write_then_hit"` | 読み出した呼び出しと、読み出さなかった呼び出しがある |
#
# - `usages` の要素は、API が返す形の dict か、SDK の `resp.usage` オブジェクトです。欄が欠けているか `None` なら 0 と読みます。
# - 判定には 2 回以上の呼び出しが要ります。0 回か 1 回なら `ValueError` を投げてください。

# %% nbgrader={"grade": false, "grade_id": "diagnose", "locked": false, "schema_version": 3, "solution": true, "task": false}
def diagnose(usages):
    ### BEGIN SOLUTION
    records = [usage_dict(u) for u in usages]
    if len(records) < 2:
        raise ValueError(f"need at least 2 calls to judge a cache, got {len(records)}")
    reads = [u["cache_read_input_tokens"] > 0 for u in records]
    writes = [u["cache_creation_input_tokens"] > 0 for u in records]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    if all(reads):
        return "hit"
    return "write_then_hit"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 欄の欠けや `None`、SDK のオブジェクトと dict の違いは `usage_dict(u)` がまとめて吸収します。
# 会話が伸びていく呼び出しでは、読み出しと書き込みが同じ回に両方出ます。そういう回をどちらに数えるかを、表の言葉から決めてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "diagnose-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
def u(write=0, read=0, tail=20):
    return {"input_tokens": tail, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 100}


got = diagnose([u(write=9000), u(read=9000), u(read=9000)])
assert got == "write_then_hit", f"1 回目が書き込み、2 回目から読み出し: 'write_then_hit' のはずが {got!r}"
got = diagnose([u(write=9000)] * 3)
assert got == "never_hits", f"読み出しが毎回 0 で書き込みが毎回: 'never_hits' のはずが {got!r}"
got = diagnose([u(tail=3000)] * 3)
assert got == "nothing_cached", f"書き込みも読み出しも 0: 'nothing_cached' のはずが {got!r}"
got = diagnose([u(read=9000)] * 2)
assert got == "hit", f"毎回読み出し: 'hit' のはずが {got!r}"
try:
    diagnose([u(write=9000)])
except ValueError:
    pass
else:
    raise AssertionError("呼び出しが 1 回では判定できません: 課題のとおり ValueError を投げてください")
for name, calls in [("2 節", cached), ("4.1 時刻", clock_calls), ("4.1 直した版", fixed_calls), ("3 節の基準線", baseline)]:
    print(f"{name}: {diagnose([r.usage for r in calls])}")
### BEGIN HIDDEN TESTS
for _calls in ([u(write=9000), u(read=9000)], [u(write=9000)] * 2, [u()] * 2, [u(read=9000)] * 2):
    assert type(diagnose(_calls)) is str      # a string, not an object that equals anything
for bad in ([], [u(write=9000)]):
    try:
        diagnose(bad)
        raise AssertionError(f"ValueError expected for {len(bad)} call(s)")
    except ValueError:
        pass
# real SDK usage objects from the demos above
assert diagnose([r.usage for r in cached]) == "write_then_hit"
assert diagnose([r.usage for r in clock_calls]) == "never_hits"
assert diagnose([r.usage for r in fixed_calls]) == "hit"
assert diagnose([r.usage for r in baseline]) == "nothing_cached"
# None and missing fields count as 0
assert diagnose([{"input_tokens": 3000, "cache_creation_input_tokens": None, "cache_read_input_tokens": None},
                 {"input_tokens": 3000}]) == "nothing_cached"
assert diagnose([{"input_tokens": 10, "cache_creation_input_tokens": 9000},
                 {"input_tokens": 10, "cache_read_input_tokens": 9000, "cache_creation_input_tokens": None}]) == "write_then_hit"
# 1-hour writes only, never read
one_hour = {"input_tokens": 10, "cache_creation_input_tokens": 9000, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 9000}}
assert diagnose([one_hour, one_hour]) == "never_hits"
# a growing conversation: every call reads the old prefix and writes the new turn
assert diagnose([u(write=500, read=9000), u(write=400, read=9500), u(write=300, read=9900)]) == "hit"
assert diagnose([u(write=9000), u(write=500, read=9000), u(read=9500)]) == "write_then_hit"
# expired in the middle: still some hits
assert diagnose([u(read=9000), u(write=9000), u(read=9000)]) == "write_then_hit"
# one write, then nothing cached: reads never came
assert diagnose([u(write=9000), u(), u()]) == "never_hits"
# a big uncached tail is not a cache hit
assert diagnose([u(tail=200_000), u(tail=200_000)]) == "nothing_cached"
# SDK-like objects with attribute access
from types import SimpleNamespace as NS
objs = [NS(input_tokens=12, cache_creation_input_tokens=8000, cache_read_input_tokens=0,
           cache_creation=NS(ephemeral_5m_input_tokens=8000, ephemeral_1h_input_tokens=0), output_tokens=5),
        NS(input_tokens=12, cache_creation_input_tokens=0, cache_read_input_tokens=8000,
           cache_creation=None, output_tokens=5)]
assert diagnose(objs) == "write_then_hit"
### END HIDDEN TESTS

# %% [markdown]
# ## 6. 損益分岐: k > (w − r)/(1 − r)
#
# コストの記事は、3 つの方式の 1 回あたりの入力コスト $C$ を 1 つの式にまとめています。資料の全体を $M$ トークン、通常単価を $a$ として、
# $aM$（資料の全体を通常単価で 1 回送る代金）を 1 とする単位で測ります。出力の料金はどの方式でも同じなので、式には入りません。
#
# $$\frac{C}{aM} = \frac{M_0}{M}\cdot\frac{w+(k-1)r}{k} + \rho + s$$
#
# $M_0/M$ はキャッシュする固定部分の割合、$k$ は使い回し回数、$w$・$r$ は書き込み・読み出しの倍率、$\rho$ は検索して毎回載せる割合、$s$ は検索 1 回の費用です。
# 全文をキャッシュする場合（$M_0/M = 1$, $\rho = s = 0$）が、毎回全文を送る 1 を下回る条件を解くと
#
# $$\frac{w+(k-1)r}{k} < 1 \iff k > \frac{w-r}{1-r}$$
#
# 右辺には文書の長さも呼び出し回数の絶対値も出てきません。倍率 2 つだけで決まります。

# %%
opus = pricing.get_model(pricing.DEFAULT_MODEL)   # いまの Opus（読み出し 0.05 倍）
r = opus.cache_read_multiplier
for ttl in ("5m", "1h"):
    w = opus.write_multiplier(ttl)
    print(f"TTL {ttl}: w = {w}, r = {r} → k > {formulas.breakeven_reuses(w, r):.2f}"
          f" → {formulas.first_paying_call(w, r)} 回目から安い")


# %% [markdown] nbgrader={"grade": false, "grade_id": "breakeven-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 何回目からキャッシュが安くなるか
#
# 書き込みの倍率 `w` と読み出しの倍率 `r`（どちらも通常の入力単価に対する倍率）を受け取り、
# 同じ前置きを `k` 回送ったとき、キャッシュありの合計 `w + (k - 1) r` がキャッシュなしの合計 `k` を **下回る** 最小の `k`（整数）を返す関数
# `first_paying_call(w, r)` を書いてください。
#
# - 同額（ちょうど損益分岐）は「安くなった」に数えません。
# - `r` が 1 以上なら何回送っても安くならないので `ValueError`、`w` か `r` が負なら `ValueError` を投げてください。
# - 価格表にないモデルでも使えるようにします。たとえば読み出しが記事のモデルの 0.1 倍より安いモデルでも、同じ関数で答えが出るはずです。
# - この節の上で使った `formulas.first_paying_call`（と `formulas.breakeven_reuses`）は、この演習の答えそのものです。呼ばずに自分で計算してください（採点では使えません）。
# - 下の確認のセルは、ちょうど同額になる場合・`ValueError`・ライブラリを呼んでいないことを確かめます。採点ではさらに非公開のテスト（境界の値、型）が走ります。

# %% nbgrader={"grade": false, "grade_id": "first_paying_call", "locked": false, "schema_version": 3, "solution": true, "task": false}
def first_paying_call(w, r):
    ### BEGIN SOLUTION
    if w < 0 or r < 0:
        raise ValueError(f"multipliers must be >= 0, got w={w!r}, r={r!r}")
    if r >= 1:
        raise ValueError(f"a read multiplier r={r!r} >= 1 never pays back")
    k = 1
    while not w + (k - 1) * r < k:
        k += 1
    return k
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 式 $k > (w - r)/(1 - r)$ の右辺がちょうど整数になるときは、その回はまだ同額です。
# `0.1` のように 2 進数で表せない値を含む割り算では、浮動小数点の結果が整数の少し上か少し下にずれることがあります。
# そのずれで答えが 1 回ぶん変わらない書き方を考えてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "first_paying_call-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
got = first_paying_call(1.25, 0.1)
assert got == 2, f"5 分 TTL（w = 1.25, r = 0.1）は 2 回目から安いはず: {got!r}"
got = first_paying_call(2.0, 0.1)
assert got == 3, f"1 時間 TTL（w = 2.0, r = 0.1）は 3 回目から安いはず: {got!r}"
got = first_paying_call(2.0, 0.5)
assert got == 4, (f"w = 2.0, r = 0.5 は 3 回目でちょうど同額（3.0 = 3.0）: 同額は安くなったに数えないので 4 のはず: {got!r}"
                  "（割り算の結果を切り上げると、ちょうど割り切れるときに 1 回ずれます）")
for w_, r_ in [(1.25, 1.0), (-1.0, 0.1)]:
    try:
        first_paying_call(w_, r_)
    except ValueError:
        pass
    else:
        raise AssertionError(f"w={w_}, r={r_}: 課題のとおり ValueError を投げてください（r が 1 以上、または負の倍率）")
_library = formulas.first_paying_call
formulas.first_paying_call = None   # ライブラリの答えは使えない: 採点と同じく、ここで呼ぶと失敗する
try:
    first_paying_call(1.25, 0.1)
except TypeError as e:
    raise AssertionError("ctxlab.costs.formulas.first_paying_call を呼ばずに、自分で計算してください"
                         "（採点ではライブラリの同じ関数は使えません）") from e
finally:
    formulas.first_paying_call = _library
for m in pricing.models().values():
    print(f"{m.display_name:18s} 5m: {first_paying_call(m.write_multiplier('5m'), m.cache_read_multiplier)} 回目から"
          f" / 1h: {first_paying_call(m.write_multiplier('1h'), m.cache_read_multiplier)} 回目から")
### BEGIN HIDDEN TESTS
import dataclasses
# graded in the grader's kernel: the learner's kernel has the graded build, where formulas.first_paying_call
# holds recorded results only (the lessons' inputs), so a call of it fails on these inputs
_got = {(w_, r_): first_paying_call(w_, r_) for w_, r_ in [(1.25, 0.1), (2.0, 0.1), (2.0, 0.0), (2.0, 0.5),
                                                          (1.0, 0.1), (0.9, 0.1), (3.0, 0.1), (1.25, 0.5),
                                                          (1.25, 0.9), (1.25, 0.05), (2.0, 0.05), (1.1, 0.1)]}
assert all(type(v) is int for v in _got.values()), _got
assert _got == {(1.25, 0.1): 2, (2.0, 0.1): 3, (2.0, 0.0): 3, (2.0, 0.5): 4, (1.0, 0.1): 2, (0.9, 0.1): 1,
                (3.0, 0.1): 4, (1.25, 0.5): 2, (1.25, 0.9): 4, (1.25, 0.05): 2, (2.0, 0.05): 3, (1.1, 0.1): 2}, _got
cheap = dataclasses.replace(pricing.get_model("claude-opus-5"), id="cheap-read", cache_read_multiplier=0.05)
assert first_paying_call(cheap.write_multiplier("5m"), cheap.cache_read_multiplier) == 2
assert first_paying_call(cheap.write_multiplier("1h"), cheap.cache_read_multiplier) == 3
assert first_paying_call(2.0, 0.0) == 3          # exactly even at k = 2
assert first_paying_call(2.0, 0.5) == 4          # exactly even at k = 3
assert first_paying_call(1.0, 0.1) == 2          # even at k = 1
assert first_paying_call(0.9, 0.1) == 1          # a write below base price pays at once
assert first_paying_call(3.0, 0.1) == 4
assert first_paying_call(1.25, 0.5) == 2
assert first_paying_call(1.25, 0.9) == 4         # (1.25 - 0.9) / 0.1 = 3.5
result = first_paying_call(1.25, 0.1)
assert isinstance(result, int) and not isinstance(result, bool)
for w_, r_ in [(1.25, 1.0), (1.25, 1.5), (-1.0, 0.1), (1.25, -0.1)]:
    try:
        first_paying_call(w_, r_)
        raise AssertionError(f"ValueError expected for w={w_}, r={r_}")
    except ValueError:
        pass
### END HIDDEN TESTS

# %% [markdown]
# 読み出しの倍率を下げても、損益分岐の回数はほとんど動きません。損益分岐を決めているのは書き込みの割増のほうです。
# TTL の選び方（5 分か 1 時間か）は、呼び出しの間隔と合わせて 04 で扱います。

# %% [markdown] nbgrader={"grade": false, "grade_id": "compare-claim-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 同僚が次の手順で「プロンプトキャッシュで入力コストが激減した」と報告しました。
#
# > `cache_control` を付けた同じリクエストを 2 回送り、1 回目と 2 回目の `input_tokens` と応答時間を比べた。
# > 2 回目の `input_tokens` は 1 回目のごく一部だった。
#
# この測り方の問題点を 2 つ以上挙げ、チームに報告できる比べ方の手順を書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "compare-claim", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 問題点:
# - 1 回目も cache_control 付きなので「キャッシュなし」ではなく書き込み（1.25 倍の割増）。書き込みと読み出しを比べており、節約を大きく見せる。基準線は cache_control を付けないリクエストにする。
# - input_tokens は最後の区切りより後ろだけの数なので、キャッシュの有無にかかわらず小さい。入力の合計は cache_read + cache_creation + input_tokens で、比べるなら全欄をドルに直す必要がある。
# - 2 回だけの比較は k = 2 の場合でしかない。実際の節約は何回使い回せるか（間隔・TTL・前置きの更新）で決まるので、想定する回数や実測の読み出し/書き込み比で示す。
# - 応答時間は揺れるので、1 回ずつの比較では言えない。
#
# 手順: 同じ質問の列を、cache_control なしの基準線とキャッシュありで同じ回数送り、キャッシュありは 1 回目の書き込みも含めて、usage の全欄を usage_cost でドルに直して合計で比べる。cache_read_input_tokens が 2 回目以降に出ていることも確かめる。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 問題点を 2 つ以上正しく挙げ（1 回目も cache_control 付きで基準線が書き込みになっている／input_tokens は最後の区切りより後ろだけで入力の合計ではない／2 回だけでは k = 2 の場合しか言えない／応答時間を 1 回ずつ比べている）、cache_control なしの基準線と同じ回数を送り、usage の全欄をドルに直して合計で比べる手順を書いている。
# - 1 点（半分）: 問題点を 1 つだけ正しく挙げている、または問題点は正しいが手順に基準線か全欄の合計が欠けている。
# - 0 点: input_tokens の比較をそのまま認めている、または挙げた問題点が誤っている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("compare-claim")

# %% [markdown]
# ## 7. 区切りの置き方: 自動キャッシュ・明示の区切り・併用
#
# ここまでは区切りを文書の後ろに自分で置いてきました。公式ドキュメント「Prompt caching」は、リクエストの最上位に
# `cache_control={"type": "ephemeral"}` を 1 つ付ける **自動キャッシュ** を最初に載せています。置き方は 3 通りあります。
#
# | 置き方 | 書き方 | 区切りの位置 |
# |---|---|---|
# | 自動キャッシュ（`auto`） | `messages.create(..., cache_control={"type": "ephemeral"})` | API が **最後のキャッシュできるブロック** に置く。会話が伸びると一緒に前へ動く |
# | 明示の区切り（`explicit`） | 最後の文書ブロックに `cache_control`（ここまでの形） | 自分で置いた場所から動かない |
# | 併用（`both`） | 上の 2 つを両方 | 文書の後ろと、最後のブロックの 2 か所 |
#
# 書き込みは **区切りの位置でだけ** 起き、読み出しは区切りから手前へ **前のリクエストが書いたエントリ** を探します（細部は付録 B）。
# 同じ文書に 3 つの形のリクエスト列を 3 つの置き方で送ります: 単発の質問 3 問（1 分おき）、1 人の 6 ターンの会話（45 秒おき）、その 45 秒後に 2 人目の 3 ターン。

# %%
lab = prompt_caching.manual_clock(client)   # オフライン: 置き方ごとに手動の時計の sandbox、実 API: 同じクライアント
CACHE_MODEL, cache_docs, BASE_SYSTEM = DEMO, docs, messages.SYSTEM_PROMPT
CONVERSATION, SECOND, PLACEMENTS = prompt_caching.CONVERSATION, prompt_caching.SECOND, prompt_caching.PLACEMENTS
SINGLE, kw = QUESTIONS, dict(model=CACHE_MODEL, system=BASE_SYSTEM)   # 単発の質問は 2 節と同じ 3 問
SINGLE_GAP_S, TURN_GAP_S = 60, 45   # 単発の質問の間隔と、会話のターンの間隔（秒）
single_runs = {p: prompt_caching.run_single(lab, cache_docs, SINGLE, p, gap_s=SINGLE_GAP_S, **kw) for p in PLACEMENTS}
conv_runs = {p: prompt_caching.run_conversation(lab, cache_docs, CONVERSATION, p, tag="conv", gap_s=TURN_GAP_S, **kw)
             for p in PLACEMENTS}
second_runs = {p: prompt_caching.run_conversation(lab, cache_docs, SECOND, p, tag="conv", gap_s=TURN_GAP_S, lead_s=TURN_GAP_S, **kw)
               for p in PLACEMENTS}   # 同じアプリケーション（tag）の 2 人目
print(f"間隔: 単発の質問は {SINGLE_GAP_S} 秒おき、会話のターンは {TURN_GAP_S} 秒おき、2 人目の会話は 1 人目の最後のターンの {TURN_GAP_S} 秒後")
two_users = {p: conv_runs[p] + second_runs[p] for p in PLACEMENTS}
prompt_caching.shapes_table({f"単発の質問 {len(SINGLE)} 問": single_runs, f"1 人の {len(CONVERSATION)} ターンの会話": conv_runs,
                             f"2 人の会話（{len(CONVERSATION)} + {len(SECOND)} ターン）": two_users}, CACHE_MODEL, lab.source)


# %% [markdown]
# **単発の質問** では、自動キャッシュだけだとエントリが毎回「文書 + その回の質問」の位置に書かれ、次の質問からは読めません（5 節の表の 1 行目の症状）。
# 併用は毎回その回の質問も割増で書き込む（誰も読まない）ので、明示の区切りのほうがわずかに安くなります。
#
# **1 本の会話** では立場が入れ替わります。明示の区切りだけだと、会話の履歴が毎ターン通常単価で送り直しになります。
# 自動キャッシュは区切りが会話の末尾と一緒に前へ動くので、前のターンまでを読み出します。併用も 1 本の会話では同じ動きで、合計も同じです。
#
# **2 人目が新しい会話を始める** と、自動キャッシュだけのエントリは「文書 + 1 人目の会話」の位置にしかないので、2 人目は文書を書き込み直します。
# 明示の区切りと併用には文書の終わりにもエントリがあるので、2 人目も 1 ターン目から文書を読み出せます（付録 B に 2 人目のターン 1 の `usage`）。
#
# | リクエストの形 | 選ぶ置き方 |
# |---|---|
# | 単発の質問（同じ文書、毎回違う質問） | 明示の区切りを文書の後ろに |
# | 1 本の長い会話 | 自動キャッシュ（併用でも同じ額） |
# | 同じ文書で多くの長い会話 | 併用 |
# | 最後のブロックに毎回変わるもの（時刻、利用者名）がある | 自動キャッシュは使わない。明示の区切りを変わらない部分の終わりに |

# %% [markdown] nbgrader={"grade": false, "grade_id": "choose_placement-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 4（3 点）: リクエストの形から、区切りの置き方を決める
#
# 上の表にない形もあります（2〜3 ターンで終わる会話、1 人が 1 問だけ聞く場合）。同じ文書について `conversations` 人が順に 1 本ずつ
# `turns` ターンの会話をする（`turns == 1` は単発の質問）とき、いちばん安い置き方を返す関数 `choose_placement(turns, conversations)` を書いてください。
#
# - 返すのは `"auto"`・`"explicit"`・`"both"` のどれか（文字列）。最安と同額（差が 1e-9 ドル未満）ならどれでも正解です。
# - 採点は、この節と同じ sandbox・文書・モデルでその形を 3 つの置き方で送った合計ドル（出力込み）で判定します（質問は `CONVERSATION + SECOND` から順に。回答は質問よりずっと長い。間隔は 45 秒）。
# - 規則を立てても（書き込みの割増は、あとで読まれてはじめて元が取れる。6 節）、sandbox で `prompt_caching.run_conversation` を使って測ってもかまいません（ヒント）。
#   形ごとの合計を出す `shape_costs`・`compare_placements` は、採点では表の 3 つの形にしか答えません。
# - 確認のセルは表の 3 つの形を確かめます。採点では表にない形も確かめます。

# %% nbgrader={"grade": false, "grade_id": "choose_placement", "locked": false, "schema_version": 3, "solution": true, "task": false}
def choose_placement(turns, conversations):
    ### BEGIN SOLUTION
    # A block written at the premium pays back only when a later request reads it. In a conversation of
    # two turns or fewer the history written by auto is read at most once and the last turn's write never,
    # which does not pay back the premium on answers longer than questions: the fixed breakpoint wins.
    if turns <= 2:
        return "explicit"
    # longer conversations: the moving breakpoint reads the history; a second conversation also needs
    # the entry at the end of the documents, which only the explicit breakpoint writes
    return "auto" if conversations == 1 else "both"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 自動キャッシュが割増で書いた履歴は、同じ会話のあとのターンでしか読まれず、最後のターンの書き込みは誰にも読まれません。2 ターンの会話なら何回読まれますか。
# 測るなら、sandbox の `sim = prompt_caching.manual_clock(ctxlab.make_client(offline=True))` で `run_conversation(sim, cache_docs, 質問のリスト, 置き方, tag=…, **kw)` を送り、
# `usage` を `pricing.usage_cost(…).total` で足します（`tag` を形ごとに新しくすると空のキャッシュから始まります。`lab` は API キーがあると実 API に送ります）。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "choose_placement-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
SHAPE_QUESTIONS = CONVERSATION + SECOND
sim = prompt_caching.manual_clock(ctxlab.make_client(offline=True))   # 測るのは常に sandbox（API キーがあっても送らない）
for (turns, conversations), row in [((1, 3), "単発の質問"), ((6, 1), "1 本の長い会話"), ((6, 2), "同じ文書で多くの長い会話")]:
    got = choose_placement(turns, conversations)
    usd = prompt_caching.shape_costs(sim, cache_docs, turns, conversations, model=CACHE_MODEL, system=BASE_SYSTEM,
                                     questions=SHAPE_QUESTIONS)   # 採点と同じ測り方（sandbox のシミュレーション）
    cheapest = [p for p in PLACEMENTS if usd[p] - min(usd.values()) < 1e-9]
    assert type(got) is str and got in cheapest, (
        f"{turns} ターン × {conversations} 人（表の「{row}」）: {got!r} ではなく {' か '.join(cheapest)} がいちばん安い。"
        f"測った合計: {', '.join(f'{p} ${v:.6f}' for p, v in usd.items())}")
print("表の 3 つの形は合っています。採点では、表にない形（ほかのターン数と人数）も確かめます。")
### BEGIN HIDDEN TESTS
# expected from the simulation (not typed in); the learner's kernel has the graded build, where the functions
# that total a shape (shape_costs, compare_placements) hold recorded results only
_shapes = [(1, 1), (1, 6), (2, 1), (2, 2), (2, 5), (3, 1), (3, 2), (4, 4), (5, 1), (8, 2), (12, 1), (3, 6)]
_want = {}
for _shape in _shapes:
    _usd = prompt_caching.shape_costs(sim, cache_docs, *_shape, model=CACHE_MODEL, system=BASE_SYSTEM,
                                      questions=SHAPE_QUESTIONS)
    _want[_shape] = {p for p in _usd if _usd[p] - min(_usd.values()) < 1e-9}
_got = {_shape: choose_placement(*_shape) for _shape in _shapes}
for _shape in _shapes:
    assert type(_got[_shape]) is str and _got[_shape] in _want[_shape], (_shape, _got[_shape], sorted(_want[_shape]))
### END HIDDEN TESTS

# %% [markdown]
# ## まとめ
#
# - キャッシュは前方一致。tools → system → messages の順に、先頭から区切り（`cache_control`）までがバイト単位で同じときだけ読み出せる。
# - `usage` は 3 つの入力欄の和で読む。`input_tokens` は区切りの後ろだけ。書き込みは 1.25 倍（1 時間は 2 倍）、読み出しの倍率はモデルで違う（2 節の表）。価格表で確かめる。
# - 区切りより前の時刻で、読み出しは 0 のまま割増だけ払う。最小長に届かなければ何も起きない（エラーも出ない）。
# - キャッシュが安くなるのは、損益分岐 (w − r)/(1 − r) を超えた最初の回から。割増の大きい 1 時間 TTL ほど遅い。
# - 比べるときは、`cache_control` のない基準線と、ドル。キャッシュはモデルが読むトークン列を変えないので、正答率を動かさずに料金だけを下げる。
# - 区切りの置き方はリクエストの形で決める。割増で書いた分は、あとで読まれてはじめて元が取れる。
# - 次のレッスン（04）では、呼び出しの間隔と TTL から、実際のヒット率と $k$ を見積もります。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("03_prompt_caching"))
check

# %% [markdown]
# ## 付録 A（任意）: キャッシュを壊すほかの書き方と、API の診断
#
# ここからは任意です。4 節と同じ規則（区切りより前で何かが変わると読めない）の、ほかの現れ方を見ます。

# %%
import json

# %% [markdown]
# ### A.1 最小長に届かない前置き
#
# キャッシュできる前置きには、モデルごとの最小の長さ（最小キャッシュ長）があります。下回ると `cache_control` は **エラーにならずに無視されます**。
# 短い規程 1 ファイル（通勤手当規程）の第 1 条だけを区切りの前に置いた場合と、同じ規程をまるごと置いた場合を、2 問ずつ送ります。

# %%
full_rule = [d for d in corpus.load() if d.file == "hr_tsukin.txt"]
first_article = [(full_rule[0].label, full_rule[0].text[:full_rule[0].text.index("第2条")])]   # 第1条 only
LEGACY_SMALL = "claude-haiku-4-5"   # 比較用: 記事の小さいモデル
for m in (DEMO, pricing.MID_MODEL, LEGACY_SMALL):
    n_min, confirmed = pricing.min_cacheable_tokens(m)
    third_party = pricing.get_model(m).sources["min_cacheable_tokens"].source.startswith("third-party")
    print(f"{pricing.get_model(m).display_name}: 最小長 {n_min:,} tokens"
          + ("（未確認: sandbox が仮に置く値）" if not confirmed else "（未確認: 第三者の情報のみで、公式のページでは確かめられない）"
             if third_party else ""))
sizes, sent = {}, {}
for label, part in (("第 1 条だけ", first_article), ("規程 1 ファイル全体", full_rule)):
    sizes[label] = tokens.count_request(ask(QUESTIONS[0], docs=part), client=client, model=DEMO).tokens
    sent[label] = [client.messages.create(**ask(q, docs=part)) for q in QUESTIONS[:2]]
    print(f"\n{label}（前置き 約 {sizes[label]:,} tokens）")
    display(prompt_caching.calls_table([r.usage for r in sent[label]], DEMO, source=SOURCE))
short_calls = sent["第 1 条だけ"]   # 最小トークン数に届かない: 演習 1 で診断する呼び出し
old_min = pricing.min_cacheable_tokens(LEGACY_SMALL)[0]
print(f"\n旧世代の Haiku 4.5（最小長 {old_min:,}）なら、規程全体（約 {sizes['規程 1 ファイル全体']:,} tokens）は"
      + ("キャッシュされません" if sizes["規程 1 ファイル全体"] < old_min else "キャッシュされます"))


# %% [markdown]
# 第 1 条だけのときは、書き込みも読み出しも 0 で、エラーもありません。数百トークンの指示文をキャッシュしたつもりで効いていない、というのはよくある行き違いです。
# 規程全体なら 1 回目が書き込み、2 回目が読み出しになります。ただし同じ前置きでも、最小長の大きいモデルでは効かないことがあります（上の最後の行が、旧世代の Haiku 4.5 でどうなるかを価格表の最小長から示します）。
# 最小長はモデルで違い、公式に確かめられない値もある（上の「未確認」）ので、モデルを替えたら `usage` の書き込みが 0 でないかを確かめ直します。

# %% [markdown]
# ### A.2 JSON のキー順
#
# ツール定義はリクエストの先頭（tools）に入ります。同じ内容の辞書でも、組み立てる経路が違うとキーの順番が変わり、
# `json.dumps` したバイト列は別物になります。ツールが変わると、その後ろの system と messages もすべて外れます。

# %%
def lookup_tool(fields):
    return {"name": "lookup_rule", "description": "規程の条文を、ファイル名と条番号で引く",
            "input_schema": {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()},
                             "required": ["file"]}}


tool_a = lookup_tool({"file": "string", "article": "integer"})        # 1 か所で組み立てたもの
tool_b = lookup_tool({"article": "integer"} | {"file": "string"})     # 別の場所の既定値とマージしたもの
print("辞書として等しい:", tool_a == tool_b)
print("json.dumps が等しい:", json.dumps(tool_a) == json.dumps(tool_b))


def with_tool(question, tool):
    return dict(ask(question), tools=[tool])


key_order = [client.messages.create(**with_tool(QUESTIONS[0], tool_a)),
             client.messages.create(**with_tool(QUESTIONS[1], tool_b))]
display(prompt_caching.calls_table([r.usage for r in key_order], DEMO, ["tool_a", "tool_b"]))


# %% [markdown]
# 直し方: 送る前に `sort_keys=True` でキー順を固定します。どちらの経路で組み立てても同じバイト列になります。
# JSON をシステムプロンプトの文字列に埋め込むときも同じで、`json.dumps(..., sort_keys=True)` を使います
# （リストの順番は `sort_keys` では揃わないので、並べる順も決めておきます）。

# %%
def canonical(obj):
    return json.loads(json.dumps(obj, sort_keys=True, ensure_ascii=False))


print("sort_keys 後の json.dumps が等しい:", json.dumps(canonical(tool_a)) == json.dumps(canonical(tool_b)))
sorted_calls = [client.messages.create(**with_tool(QUESTIONS[0], canonical(tool_a))),
                client.messages.create(**with_tool(QUESTIONS[1], canonical(tool_b)))]
display(prompt_caching.calls_table([r.usage for r in sorted_calls], DEMO, ["canonical(a)", "canonical(b)"]))

# %% [markdown]
# ### A.3 モデルの切り替え
#
# キャッシュはモデルごとに持たれます。2 節で書き込んだのと同じリクエストを、モデルだけ替えて送ります。

# %%
other = pricing.MID_MODEL   # Sonnet 5.5 のこと
switched = client.messages.create(**ask(QUESTIONS[0], model=other))
print(prompt_caching.explain(switched.usage, other))

# %% [markdown]
# 前置きはバイト単位で同じでも、読み出しは 0 で、新しいモデルの側にもう一度書き込んでいます。
# 質問の難しさでモデルを振り分ける設計では、振り分け先ごとにキャッシュが分かれることを見込んでおきます。
#
# ### A.4 途中で変える設定: システムプロンプトの書き換え、citations
#
# 長い会話の途中でシステムプロンプトを書き換える設計も、同じ理由で壊します（コストの記事が挙げる例です）。system は messages より前にあるので、
# それまでに積み上げた履歴の分まで一度に読めなくなります。引用（citations、07 で扱います）を途中で有効にするのも同じで、
# API のドキュメントでは citations の切り替えは system と messages の両方を無効にします。2 節で書き込んだ前置きに対して、それぞれ 1 回ずつ送ります。

# %%
rewritten = dict(ask(QUESTIONS[0]), system=SYSTEM + "\n回答は箇条書きで書いてください。")   # 会話の途中で変えた
with_citations = messages.question_request(docs, QUESTIONS[0], model=DEMO, max_tokens=200, citations=True,
                                           system=SYSTEM)
toggled = [client.messages.create(**rewritten), client.messages.create(**with_citations)]
display(prompt_caching.calls_table([r.usage for r in toggled], DEMO, ["system を書き換え", "citations を有効に"]))

# %% [markdown]
# どちらも読み出しが 0 で、前置き全体を書き直しています。ドキュメントは、ほかにも次の設定の変更がキャッシュを無効にすると書いています
# （sandbox もこの表どおりに扱いますが、ここでは実演しません）。
#
# | 変えたもの | 無効になる範囲 |
# |---|---|
# | ツール定義（tools） | すべて（tools・system・messages） |
# | citations の有効・無効、システムプロンプト | system と messages |
# | `tool_choice`、画像の有無、thinking（拡張思考）の設定 | messages |
#
# 会話の途中でこれらを切り替える設計では、切り替えた回に書き込みの割増を払い、それまでの履歴の読み出しを失います。
# 切り替えるなら会話の最初に決めておきます（07 で citations を使うときも同じです）。
#
# ### A.5 API に原因を聞く: キャッシュの診断
#
# ここまでは `usage` の欄から原因を推理しました。API には、前の呼び出しと比べて何が変わったかを答えさせる方法もあります（キャッシュの診断）。
# リクエストに `diagnostics={"previous_message_id": 前の応答の id}` を付けると、前の呼び出しより読めた分が少ないとき、応答の
# `diagnostics.cache_miss_reason` に原因の種類（`model_changed`・`system_changed`・`tools_changed`・`messages_changed` など）と、
# 読めなかったトークン数の見積もりが入ります。最初の 1 回は `previous_message_id` を `None` にします。
# 4.1・A.3・A.4 と同じ変え方を、診断を付けて送ります（モデルは、このレッスンでまだキャッシュを書いていない既定のモデル `pricing.DEFAULT_MODEL` に切り替えます）。原因の判定は、sandbox ではドキュメントの規則どおりに判定するシミュレーションです。

# %%
first = client.messages.create(**ask(QUESTIONS[0]), diagnostics={"previous_message_id": None})
changes = {
    "質問だけを変えた": ask(QUESTIONS[1]),
    "現在時刻を system に入れた（4.1）": with_clock_in_system(QUESTIONS[1], start + timedelta(hours=2)),
    "モデルを切り替えた（まだ使っていないモデルへ）": ask(QUESTIONS[1], model=pricing.DEFAULT_MODEL),
    "system を書き換えた（A.4）": dict(ask(QUESTIONS[1]), system=SYSTEM + "\n回答は表で書いてください。"),
}
diagnosed = {}
for what, req in changes.items():
    resp = client.messages.create(**req, diagnostics={"previous_message_id": first.id})
    u = usage_dict(resp.usage)
    reason = resp.diagnostics.cache_miss_reason if resp.diagnostics else None
    diagnosed[what] = reason.type if reason else None
    api = "なし（前と同じだけ読めた）" if reason is None else (
        f"{reason.type}（読めなかった見積もり {getattr(reason, 'cache_missed_input_tokens', None) or 0:,} tokens）")
    print(f"{what}\n  usage: 読み出し {u['cache_read_input_tokens']:>6,}・書き込み {u['cache_creation_input_tokens']:>6,}"
          f"  → API の診断: {api}")

# %% [markdown]
# `usage` が教えるのは「読めたか、どれだけ書いたか」で、どの応答にも必ず付きます。あとからログを集計するときも使えます（5 節の表と演習 1）。
# ただし原因は推理するしかありません。モデルの切り替えと system の書き換えは、`usage` の上では同じ症状（読み出し 0、前置きの書き直し）ですが、
# 診断はこの 2 つを `model_changed` と `system_changed` に分けて答えます。
# 診断が教えるのは「前のどの呼び出しと比べて、何が変わったか」です。送るときに前の応答の id を付けた場合だけ答え、
# 比べる相手は名指しした 1 回だけです。原因が判定できないとき（TTL が切れた、まだ書かれていない）は `unavailable` になります。
# 開発中に「なぜ読めないのか」を確かめるには診断、運用で「どれだけ読めているか」を見張るには `usage`、と使い分けます。

# %% [markdown]
# ## 付録 B（任意）: 呼び出しごとの `usage` と、エージェントの会話
#
# ### B.1 7 節の呼び出しごとの `usage`
#
# 7 節の合計を、呼び出しごとに開きます（置き方ごとの読み出し・書き込みのトークン数の合計は最後の表）。単発の質問で自動キャッシュだけの行が毎回書き込みになっていること、会話で明示の区切りだけの行の
# 「キャッシュされない入力」がターンごとに増えていくことを確かめられます。

# %%
for title, runs in ((f"単発の質問 {len(SINGLE)} 問", single_runs), (f"1 人の {len(CONVERSATION)} ターンの会話", conv_runs)):
    for p, calls in runs.items():
        display(prompt_caching.calls_table([c.usage for c in calls], CACHE_MODEL, [c.label for c in calls],
                                           source=f"{title}・{prompt_caching.PLACEMENT_LABELS[p]}。{lab.source}"))
for p in PLACEMENTS:
    first_turn = second_runs[p][0].usage
    print(f"2 人目のターン 1（{prompt_caching.PLACEMENT_LABELS[p]}）: 読み出し {first_turn.cache_read_input_tokens:,}"
          f" / 書き込み {first_turn.cache_creation_input_tokens:,} tokens")
display(prompt_caching.comparison_table(two_users, CACHE_MODEL, "2 人の会話の合計（置き方ごと）", lab.source))

# %% [markdown]
# 公式ドキュメントが述べている規則で、ここから使うものです（sandbox はこのとおりに動き、`tests/test_auto_caching.py` が 1 つずつ確かめています）。
#
# - さかのぼるのは区切りを 1 つ目として **20 か所** まで。ただし Claude API では、連続した `tool_use` ブロックの並びは 1 か所、連続した `tool_result` の並びも 1 か所と数える。
# - 自動キャッシュの区切りも、4 つまでの区切りの枠を 1 つ使う。TTL（既定 5 分、`"ttl": "1h"` も可）、最小長、料金、20 か所のさかのぼりは明示の区切りと同じ。
#
# 公式ドキュメントが書いていないことと、sandbox が選んだ動きも挙げておきます。
#
# - 「最後のキャッシュできるブロック」から外れる種類として、ドキュメントが挙げるのは thinking ブロックだけです（区切りを付けられない）。sandbox は
#   thinking と redacted_thinking のブロックだけを飛ばして、手前のブロックに区切りを置きます。
# - 連続した `tool_use` / `tool_result` を 1 か所と数えるのは「Claude API では」と書かれています。ほかのプラットフォームでどう数えるかは書かれていません。sandbox は Claude API の数え方です。
# - 並びの中のどのブロックにエントリがあっても、その 1 か所で見つかったものとして扱います（ドキュメントはこの細部を書いていません）。
#
# ### B.2 エージェントの会話: 1 回の応答が大量のツール呼び出しを足すとき
#
# ツールを使うエージェントでは、1 回の応答がたくさんのブロックを足します。自動キャッシュの区切りは毎回リクエストの末尾に付くので、
# 前のリクエストが書いたエントリが 20 か所以内にあれば読み出せます。では、1 回の応答で 20 か所以上増えたら？
#
# 次の実演は、利用者の 3 ターンからなるセッションです。ターン 2 でエージェントは規程の条文を 10 回引きます（`lookup_rule` ツール）。
# 1 回ずつ「第 N 条を確認します。」と書いてから呼ぶ応答なので、文とツール呼び出しが交互に並び、ブロックの一つひとつが別の位置に数えられます
# （エージェントの応答は台本で固定し、実 API が返す文面は使いません。送るリクエストは実 API にそのまま通る形です）。
# 呼び出しの間は 30 秒とします。区切りの置き方を 3 つ比べます。
#
# - `auto`: 自動キャッシュだけ（末尾の区切り 1 つ）
# - `rolling`: 自動キャッシュに加えて、**直前のリクエストの最後のブロック** に明示の区切り（前のリクエストがエントリを書いた場所。合わせて 2 つで、4 つの枠に収まる）
# - `last_two`: 最後の 2 つのメッセージの末尾に明示の区切り

# %%
AGENT_TURNS = ["有給休暇の繰越の規則を確認したいです。", "関係する条文を 1 つずつ確認して、要点をまとめてください。", "では、来年 4 月に消える日数は？"]
AGENT_CALLS = [("hr_yukyu_2025.txt", article) for article in range(1, 11)]
reply, results = prompt_caching.tool_reply(AGENT_CALLS)
print(f"ターン 2 の応答: {len(reply['content'])} ブロック（文とツール呼び出しが交互）/ ツール結果: {len(results['content'])} ブロック（1 つの並び）")
agent_runs = {s: prompt_caching.run_agent(lab, cache_docs, AGENT_TURNS, AGENT_CALLS, s, model=CACHE_MODEL,
                                          system=BASE_SYSTEM, gap_s=30) for s in prompt_caching.STRATEGIES}
for s, calls in agent_runs.items():
    display(prompt_caching.calls_table([c.usage for c in calls], CACHE_MODEL, [c.label for c in calls],
                                       source=f"置き方 {s}。{lab.source}"))

# %% [markdown]
# `auto` と `last_two` では、ツール結果を返すリクエストで `cache_read_input_tokens` が 0 になり、文書も会話もまるごと書き込み直しています。
# 区切り（ツール結果）から 20 か所さかのぼっても、前のリクエストが書いた場所（ターン 2 の質問）に届かないからです。`last_two` の 2 つ目の区切りは応答の末尾で、
# やはり届きません。`rolling` は前のリクエストが書いた場所そのものに区切りがあるので、そこを読み出し、増えた応答とツール結果だけを書き込みます。
#
# 1 セッションの差は小さく見えますが、毎日たくさんのセッションがあれば積み上がります。1 日のセッション数と営業日数を決めて、月額に直します。

# %%
SESSIONS_PER_DAY, DAYS = 200, 20
prompt_caching.month_table(agent_runs, CACHE_MODEL, sessions_per_day=SESSIONS_PER_DAY, days=DAYS, source=lab.source)

# %% [markdown]
# 同じ 10 回の呼び出しでも、文をはさまずにまとめて呼ぶ応答（並列のツール呼び出し）なら、`tool_use` の並びが 1 か所、`tool_result` の並びも 1 か所なので、
# 自動キャッシュだけでも読み出しは続きます。公式ドキュメントが「並列のツール呼び出しが多いだけでは、前のエントリは窓から押し出されない」と書いている場合です。

# %%
parallel = prompt_caching.run_agent(lab, cache_docs, AGENT_TURNS, AGENT_CALLS, "auto", model=CACHE_MODEL,
                                    system=BASE_SYSTEM, narrate=False, gap_s=30)
display(prompt_caching.calls_table([c.usage for c in parallel], CACHE_MODEL, [c.label for c in parallel],
                                   source=f"並列のツール呼び出し・auto。{lab.source}"))

# %% [markdown]
# - 区切りがさかのぼるのは 20 か所まで。1 回で 20 か所以上増えるエージェントの応答では、前のリクエストが書いた場所にも区切りを置く（rolling）。
# - 区切りより前のバイト列が 1 バイトでも変わると（空白だけのブロックが出たり消えたりしても）、まるごと書き込みになるのは明示の区切りと同じです。

# %% [markdown]
# ## 付録 C（任意）: 1 時間 TTL、規程全体での金額、損益分岐の表と記事の図、正答率
#
# ### C.1 1 時間 TTL の書き込み

# %% [markdown]
# 1 時間 TTL の書き込みが `usage` のどこに出るかを見ます（別の規程で前置きを作ります）。内訳は `ephemeral_1h_input_tokens` に入り、
# `usage_cost` は価格表の倍率で書き込みを計算します。この倍率は価格表から来るもので、sandbox が測ったものではありません。
# 実際に請求される額は、実 API で送ったあとにコンソールの利用明細で確かめます。

# %%
fin_docs = [d for d in corpus.load() if d.file in ("fin_keihi_2025.txt", "fin_ryohi_2024.txt")]
hour = client.messages.create(**ask("出張の日当はいくらですか？", cache_ttl="1h", docs=fin_docs))
hu = usage_dict(hour.usage)
print(hu["cache_creation"])
written = hu["cache_creation_input_tokens"]
multiplier = pricing.usage_cost(hu, DEMO).cache_write / (written * pricing.get_model(DEMO).input_per_token)
print(f"書き込み {written:,} tokens を usage_cost で計算すると、通常単価の {multiplier:.2f} 倍（価格表の倍率）")

# %% [markdown]
# ### C.2 規程全体での金額
#
# 3 節の実演の額は小さいので、同じ比率を規程全体に当てはめます。使い分けの記事の前提（197,000 トークン、質問と指示 400、回答 700）で、
# 同じ 3 問を送ったときの金額です。記事のモデル（Opus 5、記事の時点の価格）と、今のモデル（Opus 5.5）の両方で計算します。

# %%
DOC, Q, OUT, n = 197_000, 400, 700, len(QUESTIONS)
for big in (pricing.ARTICLE_MODEL, pricing.DEFAULT_MODEL):
    no_cache = n * pricing.call_cost(big, input_tokens=DOC + Q, output_tokens=OUT).total
    with_cache = (pricing.call_cost(big, input_tokens=Q, cache_write_5m_tokens=DOC, output_tokens=OUT).total
                  + (n - 1) * pricing.call_cost(big, input_tokens=Q, cache_read_tokens=DOC, output_tokens=OUT).total)
    print(f"規程全体 × {n} 問（{pricing.get_model(big).display_name}、出力込み）: キャッシュなし ${no_cache:.3f} / あり ${with_cache:.3f}"
          f"（差 ${no_cache - with_cache:.3f}）")

# %% [markdown]
# ### C.3 損益分岐の表: 1 回あたりのコスト
#
# コストの記事の表と同じ形の表を、今日の Opus の倍率で式から計算します。$k$ 回で 1 回書き込み、$k-1$ 回読み出したときの 1 回あたりのコストです。
# コストの記事の表は記事の日付のモデルの読み出し倍率で作られているので、値はその表と同じにはなりません（表の下に両方の r を示します）。

# %%
table = prompt_caching.per_call_table(ks=(1, 2, 3, 5, 10, 20), ws=(1.25, 2.0), r=r)
view = prompt_caching.per_call_view(table, r, f"{opus.display_name}（価格表 {pricing.price_table_date()} 時点）")
view.summary = [f"コストの記事の表は r = {prompt_caching.COST_ARTICLE['r']:g}（記事の日付のモデル）で作られています。"]
view

# %% [markdown]
# $k = 1$ では 1 を上回ります。割増を払っただけで、割引を一度も受け取っていない状態です。4.1 の時刻入りのシステムプロンプトは、
# 毎回この行にいます。

# %% [markdown]
# ### C.4 記事の図: キャッシュと検索の総額
#
# コストの記事の図を、記事の値のまま同じ式から描きます（$w = 1.25$、$r = 0.1$、検索は $\rho = 0.3$、$s = 0.02$、索引を作る一度きりの費用 $E = 0.05$）。
# **ここで $r$ を変えています**: C.3 の表は今日の Opus の $r$ でしたが、図は記事と見比べられるように、記事の日付のモデルの $r = 0.1$ で描きます。
# 左は呼び出し回数に対する総額、右は使い回し回数に対する 1 回あたりのコストです。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

from ctxlab.plots.prompt_caching import cost_curves

article = prompt_caching.COST_ARTICLE   # コストの記事の w, r, rho, s, E
fig = cost_curves(**article, n_max=10, k_max=20)
plt.show()

# %% [markdown]
# 左の図では、傾きの差がそのまま総額の差になります。毎回全文の傾きは 1、キャッシュは 2 回目から $r$、検索は $\rho + s$ です。
# 検索は初回こそ安いものの、いずれキャッシュに追いつかれます。どこで並ぶかを式から出します。

# %%
meet = prompt_caching.meeting_call(**article)
print(f"キャッシュと検索の総額が並ぶ回数: n = {meet:.2f}")
for n in (4, 5, 6):
    t = prompt_caching.total_costs(n, **article)
    print(f"n = {n}: キャッシュ {t['cache']:.3f} / 検索 {t['retrieval']:.3f} / 毎回全文 {t['full']:.3f}")

# %% [markdown]
# コストの記事は「5 回目でキャッシュに追い抜かれる」と書いていますが、上の出力のとおり、5 回目はちょうど同額で、
# キャッシュが安くなるのはその次からです。図の読み方としては同じ結論（数回で逆転する）ですが、損益分岐の回数を見積もりに使うときは
# 等号の扱いに気をつけてください。
#
# 同じ式から、実際の使い回し回数を `usage` から求める方法も出てきます。一連の呼び出しの `cache_read_input_tokens` の合計を
# `cache_creation_input_tokens` の合計で割ると、書き込み 1 回あたり何回読まれたか、つまり $k - 1$ です。
# 実 API の `usage` で計算すれば実測値になります。オフラインでは、sandbox のシミュレーションから出した値です。

# %%
reads = sum(usage_dict(resp.usage)["cache_read_input_tokens"] for resp in cached)
writes = sum(usage_dict(resp.usage)["cache_creation_input_tokens"] for resp in cached)
print(f"2〜3 節の 3 回: 読み出し / 書き込み = {reads / writes:.2f} → k ≈ {reads / writes + 1:.2f}"
      f"（{'sandbox のシミュレーション' if ctxlab.is_offline(client) else '実 API の usage から'}）")

# %% [markdown]
# ### C.5 キャッシュは正答率を動かさない
#
# 検索して数件だけ渡す、メタデータで絞る、といった手段は **モデルが読むもの** を変えるので、料金と一緒に正答率も動きます。
# キャッシュは違います。モデルに渡るトークン列はキャッシュありでもなしでも同じで、変わるのは課金と前処理（prefill）の扱いだけです。
# このコースで比べる手段（毎回全文・キャッシュ・メタデータで絞る・検索）のうち、正答率を動かさずに料金を下げられるのはキャッシュだけです
# （Batch API の割引も読むものは変えませんが、応答が非同期になるので対話の用途には使えません）。だから、検索を入れるかどうかを議論する前に、固定部分のキャッシュを済ませておきます。
#
# 同じ質問をキャッシュあり・なしで送った 1 回目どうしを比べます。

# %%
a, b = cached[0], baseline[0]
print("入力の合計トークン: キャッシュあり", total_input(a.usage), "/ なし", total_input(b.usage))
print("回答の本文が同じ:", messages.answer_text(a) == messages.answer_text(b))

# %% [markdown]
# sandbox の回答は決定的なので本文まで一致します。実 API では生成のたびに言い回しが揺れることがありますが、それは
# サンプリングの揺れで、キャッシュのせいではありません。モデルが読むトークン列は同じです。
