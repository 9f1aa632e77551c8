# %% [markdown]
# # 05 分かれ目を動かす: どこから RAG のほうが安くなるか
#
# 02 では、文書 1 セット・1 日 20 問という 1 つの点で 3 つの方式の月額を比べました。
# 実際の判断では、文書は増え、質問数は読み違え、モデルは替わります。この節では、それらを動かしたときに
# **どこで方式の順位が入れ替わるか**を計算で求めます。後半では、コストの記事の「使い回し回数 k × 引く割合 ρ」の図で、
# 同じ判断を単価だけから見直します。
#
# **この節で身につくこと**
#
# - 文書量に対する月額を 3 つの方式で描き、RAG のほうが安くなる文書量（交点）を、図から読むのではなく計算で求められる
# - 質問数・キャッシュヒット率・モデル・ベクトル DB の月額が、交点をどちらへ動かすかを説明できる
# - ウィンドウの 50% と 100% の線を、料金の交点と同じ図の上で読める
# - ρ–k 図で、全文・キャッシュ・検索のどれが 1 回あたり最も安いかを判断し、ドルの試算と対応づけられる
#
# **所要時間** 約 40 分　**前提** 02（料金）、03（損益分岐と使い回し回数 k）、04（ヒット率）

# %%
import math
from dataclasses import replace

import ctxlab
from ctxlab.costs import compare, crossover, formulas, pricing
from ctxlab import corpus
from ctxlab.api import tokens

client = ctxlab.make_client()
print(ctxlab.mode_line(client))

# %% [markdown]
# この節で API を使うのは、文書のトークンを数える `count_tokens` だけです（実 API でも無料）。
# 料金はすべて価格表（`data/pricing.json`）と、02 で使った `ctxlab.costs.compare` の計算から出します。
#
# ## 1. 試算の前提
#
# 使い分けの記事の「試算に使っている値」の表を、このコースの前提（`compare.Profile` の既定値）と価格表から作り直します。
# 文書量だけは、題材の規程を実際に数えた値を使います。

# %%
from IPython.display import Markdown

docs = corpus.load(current_only=False)
doc_tokens = tokens.count_documents([d.text for d in docs], client=client).tokens
base = crossover.profile(questions_per_day=20)     # 使い分けの記事の前提（中身は下の表）

print(f"題材の規程: {len(docs)} ファイル・{doc_tokens:,} tokens")
Markdown("| 項目 | 値 | 根拠 |\n|---|---|---|\n"
         + "\n".join(f"| {item} | {value} | {basis} |" for item, value, basis in crossover.assumptions(base, len(docs))))

# %% [markdown]
# この前提での月額です。使い分けの記事の表と違うところ（質問文の単価、メタデータで絞る場合のヒット率）は、02 で見たとおり
# `compare` の注に書いてあります。

# %%
now = crossover.situation(doc_tokens, base, n_files=len(docs))
for key, label in crossover.PATHS.items():
    print(f"{label:22s} 月 ${now['monthly_' + key]:>8,.2f}")
print(f"（ロングコンテキストをキャッシュなしで送ると月 ${now['monthly_long_context_no_cache']:,.2f}）")
for note in compare.compare(doc_tokens, len(docs), base).notes:
    print("注:", note)

# %% [markdown]
# ## 2. 月額を、文書量の関数として見る
#
# 3 つの方式は、文書が増えたときの伸び方が違います。
#
# - **ロングコンテキスト**は、毎回文書全体を送ります。ミスした回は書き込みの倍率、ヒットした回は読み出しの倍率で払い、
#   どちらも文書量に比例します。月額は文書量の 1 次式です。
# - **メタデータで絞る**は、文書の一部（前提の表の「残る割合」）を同じように送るので、傾きがその割合だけ小さい 1 次式です。
# - **RAG** は、渡すチャンクの量が文書量によらず一定です。月額は横ばいで、ベクトル DB の固定費がその高さを底上げします。
#
# 1 次式と横ばいの線は、ロングコンテキストの傾きが正である限り、どこかで必ず交わります。その点より文書が多ければ RAG のほうが安くなります。
# 図には、モデルのウィンドウの 50% を超える範囲（薄い色）と、ウィンドウそのものを超える範囲（濃い色）も塗ってあります。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from ctxlab.plots.crossover import RhoKPlot, plot_monthly, plot_rho_k
from ctxlab.widgets import crossover as xw

plot_monthly(doc_tokens, base, n_files=len(docs));

# %%
lc = crossover.line("long_context", base)
rag = crossover.line("rag", base)
cross = crossover.crossover_tokens(base)
print(f"ロングコンテキスト: 文書 0 で月 ${lc.at0:,.2f}、文書 1 万トークンごとに月 ${lc.slope * 10_000:,.2f} 増える")
print(f"RAG（DB 込み）    : 文書量によらず月 ${rag.at0:,.2f}")
print(f"交点: {cross:,.0f} tokens。題材の規程 {doc_tokens:,} tokens はその {doc_tokens / cross:.1f} 倍の位置")

# %% [markdown]
# 交点は、`compare` の月額が文書量の 1 次式であることを使って、2 点から直線を決めて解いています（`crossover.line` と
# `crossover.crossover_tokens`）。図から目で読むより、この方が前提を変えてもすぐに出し直せます。
#
# ## 3. シミュレータ: 自社に近い値を入れる
#
# 下のウィジェットで、文書量・1 日の質問数・キャッシュヒット率・モデル・RAG のチャンク数・ベクトル DB の月額を動かせます。
# 図の横（画面が狭いときは下）に、3 つの方式の月額、ウィンドウの使用率、キャッシュが温まった状態での最初のトークンまでの時間（TTFT）が出ます。
# TTFT は 使い分けの記事の数字に合わせたシミュレーションで、実測ではありません。
#
# スライダーは JupyterLab でカーネルが動いているときだけ表示されます。GitHub のプレビューなどカーネルのない場所では、
# 上の静的な図が同じ内容です。

# %%
sim = xw.CrossoverSimulator(doc_tokens=doc_tokens, n_files=len(docs))
sim

# %% [markdown]
# ウィジェットが表示している数字は、カーネルの中の `sim.result` にあります。スライダーを動かしてからこのセルを実行し直すと、
# 動かした後の値が出ます。コードから値を変えるときは `sim.set(questions_per_day=5)` のように書きます。

# %%
r = sim.result
print(f"{r['model']}・1 日 {r['questions_per_day']:g} 問・ヒット率 {r['hit_rate']:.0%}・文書 {r['doc_tokens']:,} tokens")
print(f"月額: ロングコンテキスト ${r['monthly_long_context']:,.0f}  絞り込み ${r['monthly_filter']:,.0f}  "
      f"RAG ${r['monthly_rag']:,.0f}（最も安いのは {crossover.PATHS[r['cheapest']]}）")
print(f"ウィンドウ使用率 {r['window_usage']:.1%}、TTFT（キャッシュ時）{r['ttft_long_context_s']:.1f} 秒")
print("交点:", "なし" if r["crossover_tokens"] is None else f"{r['crossover_tokens']:,.0f} tokens")

# %% [markdown]
# ## 4. 動かすと見えること
#
# 使い分けの記事が挙げた 3 つの動き（文書量・質問数・モデル）を、ウィジェットではなく計算で確かめます。
# まず文書量です。規程が 2 倍、5 倍になったときの月額を並べます。

# %%
for times in (1, 2, 5):
    m = crossover.monthly(doc_tokens * times, base, len(docs))
    print(f"文書 {times} 倍（{doc_tokens * times:>9,} tokens）: ロングコンテキスト ${m['long_context']:>8,.0f}  RAG ${m['rag']:>6,.0f}")

# %% [markdown]
# ロングコンテキストだけが伸び、RAG は動きません。次に、質問数とモデルを動かしたときの交点を表にします。
# 交点がウィンドウの 50% より先にあるなら、ロングコンテキストを選べる範囲では、ずっとロングコンテキストのほうが安いことになります。

# %%
per_days = [5, 10, 20, 50, 100]
table = ["| RAG が安くなる文書量 | " + " | ".join(f"1 日 {q} 問" for q in per_days) + " | ウィンドウの 50% |",
         "|---" * (len(per_days) + 2) + "|"]
for model in pricing.models().values():
    cells = []
    for q in per_days:
        x = crossover.crossover_tokens(replace(base, model=model.id, questions_per_month=q * crossover.DAYS_PER_MONTH))
        beyond = x is not None and x > model.context_window / 2
        cells.append("なし" if x is None else f"**{x:,.0f}**" if beyond else f"{x:,.0f}")
    table.append(f"| {model.display_name} | " + " | ".join(cells) + f" | {model.context_window // 2:,} |")
table.append("\n太字: 交点がウィンドウの 50% より先（前提を満たす範囲では、ロングコンテキストがずっと安い）")
Markdown("\n".join(table))

# %% [markdown]
# 同じことを図にします。横軸が 1 日の質問数、縦軸が交点の文書量です。線より上（文書が多い側）では RAG が安く、下ではロングコンテキストが安い。
# 点線は各モデルのウィンドウの 50% です。

# %%
qs = np.geomspace(1, 300, 40)
fig, ax = plt.subplots(figsize=(6.6, 3.8))
for model, color in zip(pricing.models().values(), ["#1f77b4", "#ff7f0e", "#2ca02c"]):
    xs = [crossover.crossover_tokens(replace(base, model=model.id, questions_per_month=q * crossover.DAYS_PER_MONTH))
          for q in qs]
    ax.plot(qs, xs, color=color, label=f"{model.display_name}（ヒット率 {base.hit_rate:.0%}）")
    ax.axhline(model.context_window / 2, color=color, ls=":", lw=1)
ax.axhline(doc_tokens, color="black", lw=1, ls="--", label=f"題材の規程 {doc_tokens:,} tokens")
ax.plot([], [], color="gray", ls=":", lw=1, label="点線: 各モデルのウィンドウの 50%")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("1 日の質問数")
ax.set_ylabel("RAG が安くなる文書量（tokens）")
ax.set_title(f"交点は質問数とモデルで動く（RAG {base.rag_chunks} チャンク・DB ${base.db_monthly:g}/月）", fontsize=10)
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.tight_layout()

# %% [markdown]
# 読み取れることは 3 つです。
#
# - **質問が少ないほど交点は右（文書が多い側）へ逃げます。** RAG の DB の月額は質問数によらない固定費なので、質問が少ないと 1 問あたりが重くなります。
# - **入力単価の安いモデルほど交点は右へ逃げます。** 単価が下がると、安くなるのはロングコンテキストの側だけです（RAG の DB 代は変わりません）。
# - **ウィンドウの小さいモデルでは、交点より先にウィンドウの 50% に当たることがあります。** そのときは料金ではなく、載るかどうかで方式が決まります。
#
# ヒット率でも交点は動きます。ヒット率を上げると、ロングコンテキストの傾きが書き込みの倍率から読み出しの倍率の側へ寄ります。

# %%
for h in (0.0, 0.5, 0.8, 0.95):
    p = replace(base, hit_rate=h)
    print(f"ヒット率 {h:4.0%}: 文書 1 万トークンあたり月 ${crossover.line('long_context', p).slope * 10_000:6.2f}、"
          f"交点 {crossover.crossover_tokens(p):>9,.0f} tokens")

# %% [markdown]
# ## 5. 待ち時間の線
#
# 使い分けの記事の待ち時間の閾値は「キャッシュが効いた状態で、最初のトークンまで 3 秒以内」でした。
# 同じシミュレーション（`pricing.ttft_seconds`）で、3 秒に収まる最大の文書量を二分法で求め、ウィンドウの 50% と比べます。

# %%
ttft_cap = crossover.max_tokens_for_ttft(crossover.TTFT_LIMIT_S, base.prompt_tokens)
half = pricing.get_model(base.model).context_window / 2
print(f"キャッシュ時の TTFT が {crossover.TTFT_LIMIT_S:g} 秒に収まる文書量: {ttft_cap:,.0f} tokens（シミュレーション）")
print(f"{pricing.get_model(base.model).display_name} のウィンドウの 50%: {half:,.0f} tokens")
print("先に当たる線:", "ウィンドウの 50%" if half < ttft_cap else "待ち時間の 3 秒")
print(f"題材の規程をキャッシュから読むと TTFT {pricing.ttft_seconds(base.prompt_tokens, doc_tokens):.1f} 秒、"
      f"キャッシュなしなら {pricing.ttft_seconds(base.prompt_tokens + doc_tokens):.1f} 秒")


# %% [markdown]
# 先に当たるのがウィンドウの 50% なら、キャッシュが温まっている限り、待ち時間はロングコンテキストを諦める理由になりません。
# ただしキャッシュが冷えた回（ミスした回）は、キャッシュなしの値になります。ヒット率が低い用途では、その回の待ち時間も見てください。
#
# ## 6. 演習

# %% [markdown] nbgrader={"grade": false, "grade_id": "crossover-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: RAG が安くなる文書量を計算で求める
#
# 関数 `rag_crossover_tokens(profile, max_tokens)` を書いてください。`profile` は `compare.Profile` です。
# ロングコンテキスト（キャッシュあり）の月額と RAG（DB 込み）の月額が等しくなる文書量（トークン、小数）を返します。
#
# - 月額は `compare.compare(doc_tokens, 50, profile).monthly` の `"long_context"` と `"rag"` を使ってください（式を書き直さない）
# - 文書 0 トークンの時点で RAG の月額がロングコンテキスト以下なら `0.0` を返す
# - RAG がどれだけ文書を増やしても安くならない場合、または交点が `max_tokens` より先にある場合は `None` を返す
#
# 閉じた式（月額は文書量の 1 次式）でも、二分法でも構いません。`crossover.crossover_tokens` は使わずに、自分で解いてください。

# %% nbgrader={"grade": false, "grade_id": "rag_crossover_tokens", "locked": false, "schema_version": 3, "solution": true, "task": false}
def rag_crossover_tokens(profile, max_tokens):
    ### BEGIN SOLUTION
    def gap(d):
        m = compare.compare(d, 50, profile).monthly
        return m["long_context"] - m["rag"]

    at0 = gap(0)
    if at0 >= 0:
        return 0.0
    probe = 1_000_000
    slope = (gap(probe) - at0) / probe
    if slope <= 0:
        return None
    x = -at0 / slope
    return x if x <= max_tokens else None
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 月額の差 `gap(d) = ロングコンテキスト − RAG` を文書量 `d` の関数として考えます。文書 0 では負（RAG のほうが高い）で、
# ロングコンテキストだけが文書量に比例して増えるので、差は 1 次式です。2 つの文書量で差を測れば直線が決まり、0 になる点が交点です。
# 二分法なら、差が負の点と正の点を挟んで半分ずつ縮めます。正の点が見つからないときが「交わらない」です。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "rag_crossover_tokens-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
x = rag_crossover_tokens(base, 1_000_000)
assert x is not None, "使い分けの記事の前提（1 日 20 問）では、ウィンドウの中に交点があります"
m = compare.compare(x, 50, base).monthly
assert abs(m["long_context"] - m["rag"]) < 0.01, (
    f"返した {x:,.0f} tokens で 2 つの月額が等しくありません: ロングコンテキスト ${m['long_context']:.2f}、RAG ${m['rag']:.2f}")
after = compare.compare(x * 1.05, 50, base).monthly
assert after["rag"] < after["long_context"], "交点より文書が多ければ、RAG のほうが安いはずです"
print(f"RAG が安くなるのは {x:,.0f} tokens から")
### BEGIN HIDDEN TESTS
def _close(a, b):
    return a is not None and b is not None and abs(a - b) <= max(1.0, 1e-3 * b)

for _p in [crossover.profile(50, model="claude-sonnet-5", hit_rate=0.6),
           crossover.profile(5, hit_rate=0.0, db_monthly=200.0, ttl="1h"),
           crossover.profile(20, model="claude-haiku-4-5", rag_chunks=20, db_monthly=0.0),
           crossover.profile(100, hit_rate=1.0, rag_chunks=3)]:
    assert _close(rag_crossover_tokens(_p, 10_000_000), crossover.crossover_tokens(_p)), _p
# never crosses: no traffic, or the crossing lies beyond max_tokens
assert rag_crossover_tokens(crossover.profile(0), 10_000_000) is None
_haiku = crossover.profile(5, model="claude-haiku-4-5")
assert rag_crossover_tokens(_haiku, 200_000) is None
assert _close(rag_crossover_tokens(_haiku, 10_000_000), crossover.crossover_tokens(_haiku))
# RAG costs no more at zero tokens
assert rag_crossover_tokens(crossover.profile(20, rag_chunks=0, db_monthly=0.0), 1_000_000) == 0.0
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "max-questions-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: ロングコンテキストが安いままでいられる質問数
#
# 文書量を固定して、質問数だけを動かします。関数 `max_questions_per_day(doc_tokens, profile)` を書き、
# ロングコンテキスト（キャッシュあり）の月額が RAG（DB 込み）の月額**以下**にとどまる、1 日の質問数の上限（小数）を返してください。
#
# - 月の質問数は 1 日の質問数 × 30（`crossover.DAYS_PER_MONTH`）。質問数を変えた Profile は `replace(profile, questions_per_month=...)` で作れます
# - 月額は `compare.compare(doc_tokens, 50, p).monthly` の `"long_context"` と `"rag"` を使ってください
# - 質問を何問に増やしてもロングコンテキストが高くならないなら `math.inf`、1 問でも高くなるなら `0.0` を返す

# %% nbgrader={"grade": false, "grade_id": "max_questions_per_day", "locked": false, "schema_version": 3, "solution": true, "task": false}
def max_questions_per_day(doc_tokens, profile):
    ### BEGIN SOLUTION
    def gap(per_day):
        p = replace(profile, questions_per_month=per_day * crossover.DAYS_PER_MONTH)
        m = compare.compare(doc_tokens, 50, p).monthly
        return m["long_context"] - m["rag"]

    at0 = gap(0)                 # = - DB: the only cost without traffic
    slope = gap(1) - at0         # per question a day
    if slope <= 0:
        return math.inf
    return max(0.0, -at0 / slope)
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 質問数 n に対して、月額はどちらも「n × 1 問あたり + 固定費」の 1 次式です。固定費があるのは RAG（DB）だけです。
# 1 問あたりでロングコンテキストのほうが高いなら、差は n とともに広がり、DB の固定費を食いつぶしたところで逆転します。
# 1 問あたりでロングコンテキストのほうが安いなら、何問になっても逆転しません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "max_questions_per_day-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
q = max_questions_per_day(doc_tokens, base)
assert 0 < q < 20, f"題材の規程では、1 日 20 問ではすでに RAG が安いので、上限は 20 未満のはずです: {q}"
m = compare.compare(doc_tokens, 50, replace(base, questions_per_month=q * crossover.DAYS_PER_MONTH)).monthly
assert abs(m["long_context"] - m["rag"]) < 0.01, (
    f"1 日 {q:.2f} 問で 2 つの月額が等しくありません: ${m['long_context']:.2f} と ${m['rag']:.2f}")
print(f"題材の規程（{doc_tokens:,} tokens）では、1 日 {q:.1f} 問までならロングコンテキストのほうが安い")
### BEGIN HIDDEN TESTS
def _expected(d, p):
    one = compare.compare(d, 50, replace(p, questions_per_month=1)).monthly
    per_call = one["long_context"] - one["rag_api"]
    return math.inf if per_call <= 0 else max(0.0, p.db_monthly / per_call / crossover.DAYS_PER_MONTH)

for _d, _p in [(197_000, crossover.profile()),
               (500_000, crossover.profile(model="claude-sonnet-5", hit_rate=0.5)),
               (150_000, crossover.profile(model="claude-haiku-4-5", db_monthly=30.0, ttl="1h")),
               (900_000, crossover.profile(hit_rate=0.95, rag_chunks=20))]:
    _want, _got = _expected(_d, _p), max_questions_per_day(_d, _p)
    assert abs(_got - _want) <= 1e-3 * _want, (_d, _p, _got, _want)
# long context cheaper per call: never overtaken
assert max_questions_per_day(10_000, crossover.profile()) == math.inf
# no fixed cost and dearer per call: overtaken from the first question
assert max_questions_per_day(500_000, crossover.profile(db_monthly=0.0)) == 0.0
### END HIDDEN TESTS

# %% [markdown]
# ## 7. コストの記事の図: 単価だけで見る
#
# ここからは単位を変えます。コストの記事は、金額を「文書全体を通常単価で 1 回送る代金 aM」を 1 として測りました。
# この単位では、1 回あたりのコストは次の 3 つです（`formulas.relative_cost`）。
#
# | 方式 | 1 回あたり |
# |---|---|
# | 毎回全文を渡す | 1 |
# | 全文をキャッシュする | (w + (k − 1) r) / k |
# | 検索して引いた分だけ載せる | ρ + s |
#
# w は書き込みの倍率、r は読み出しの倍率、k は 1 回の書き込みを何回の呼び出しで分け合うか、ρ は 1 回に引く割合、s は検索 1 回の費用です。
# 横軸に k、縦軸に ρ を取り、各点で最も安い方式の色で塗ります。黒い線が、検索がキャッシュに勝つ ρ の上限
# `formulas.rho_limit(k)`、破線が k を大きくしたときの極限 r − s です。

# %%
W5 = pricing.get_model(base.model).write_multiplier("5m")
R = pricing.get_model(base.model).cache_read_multiplier
S = 0.02   # コストの記事の検索 1 回の費用（aM を 1 とした単位）
rk = plot_rho_k(W5, R, S)
for k, limit in rk.result["rho_limit"].items():
    print(f"k = {k:>2}: 検索が勝つのは ρ < {limit:.3f}")
print(f"k を大きくした極限: ρ < r − s = {rk.result['asymptote']:.3f}"
      f"（30 万トークンの規程なら 1 回 {rk.result['asymptote'] * 300_000:,.0f} tokens まで）")
print("図の中で最も安い面積:", "、".join(f"{crossover.METHOD_LABELS[m]} {v:.2%}" for m, v in rk.result["share"].items()))

# %% [markdown]
# 毎回全文を渡す方式が最も安いのは、左上のごく細い帯（k が損益分岐の (w − r)/(1 − r) より小さく、ほぼ全文を引く場合）だけです。
# 下のウィジェットで w・r・s を動かすと、色の境目と 2 本の線が動きます。1 時間 TTL（w = 2）にすると損益分岐が右へずれ、
# s を r より大きくすると破線が 0 より下に消え、使い回すほど検索が勝てなくなります。

# %%
explorer = xw.RhoKExplorer(W5, R, S)
explorer

# %% [markdown]
# ## 8. 2 つの図をつなぐ
#
# ドルの試算（1〜5 節）を、ρ–k 図の上に置いてみます。対応は次のとおりです（`crossover.profile_point`）。
#
# - **k**: ヒット率 h のとき、書き込みは 1 − h の割合で起きるので、1 回の書き込みを 1 / (1 − h) 回で分け合います
# - **ρ**: RAG が渡すチャンクのトークン ÷ 文書のトークン
# - **s**: 質問と回答はどの方式でも同じなので消えます。RAG に残る追加の費用は DB の月額で、1 回あたりに直すと
#   s = DB の月額 ÷（月の質問数 × aM）。**質問が減るほど s は大きくなります**
#
# まず、この対応でドルの月額がそのまま再現されることを確かめます。

# %%
pt = crossover.profile_point(doc_tokens, base)
n = base.questions_per_month
common = crossover.monthly(0, base)["long_context"]     # 質問・指示・回答: どの方式も払う分
lc_rel = formulas.relative_cost(1, pt.k, 0, 0, pt.w, pt.r)
rag_rel = formulas.relative_cost(0, pt.k, pt.rho, pt.s, pt.w, pt.r)
print(f"k = {pt.k:.2f}, ρ = {pt.rho:.4f}, s = {pt.s:.4f}, aM = ${pt.unit_usd:.4f}")
print(f"キャッシュ: {lc_rel:.4f} aM/回 → 月 ${lc_rel * pt.unit_usd * n + common:,.2f}（compare: ${now['monthly_long_context']:,.2f}）")
print(f"検索     : {rag_rel:.4f} aM/回 → 月 ${rag_rel * pt.unit_usd * n + common:,.2f}（compare: ${now['monthly_rag']:,.2f}）")

# %% [markdown]
# 同じ文書で、1 日 20 問と 1 日 5 問を並べます。文書も単価も同じで、違うのは s だけです。それでも色の境目は大きく動きます。

# %%
fig, axes = plt.subplots(1, 2, figsize=(12.5, 3.9), sharey=True)
for ax, per_day in zip(axes, (20, 5)):
    p = replace(base, questions_per_month=per_day * crossover.DAYS_PER_MONTH)
    pt = crossover.profile_point(doc_tokens, p)
    plot = RhoKPlot(ax, points=[(f"1 日 {per_day} 問", pt.k, pt.rho)], legend=ax is axes[-1])
    plot.update(pt.w, pt.r, pt.s)
    ax.set_title(f"1 日 {per_day} 問: s = {pt.s:.3f}、k = {pt.k:.0f} での上限 ρ < {pt.rho_limit:.3f}", fontsize=10)
    print(f"1 日 {per_day:>2} 問: ρ = {pt.rho:.3f}、上限 {pt.rho_limit:.3f} → 最も安いのは {crossover.METHOD_LABELS[pt.cheapest]}"
          f"（r − s = {pt.r - pt.s:.3f}）")
plt.tight_layout()

# %% [markdown] nbgrader={"grade": false, "grade_id": "two-views-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# コストの記事は「十分に使い回せるなら、検索が勝つのは ρ < r − s のときだけ」と結論しました。題材の規程で RAG が引くのは全体の数 % で、
# 7 節で出した r − s を下回っています。それなのに質問数を減らすと、ロングコンテキストのほうが安くなりました（演習 2）。
# 2 つの試算は矛盾していますか。8 節の数字（k・ρ・s・上限）を使って、2〜4 文で説明してください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "two-views", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 矛盾していない。コストの記事の s は検索 1 回の費用を定数と置いているが、使い分けの記事の RAG の追加費用の大半は DB の月額という固定費で、
# 1 回あたりに直すと s = DB ÷（月の質問数 × aM）となり、質問が減るほど大きくなる（1 日 20 問で約 0.12、5 問で約 0.5）。
# しかもヒット率 80% は k = 5 にすぎず、ρ < r − s は k が大きい極限の条件なので、k = 5 での上限 rho_limit を見る必要がある。
# 20 問では上限が約 0.2 で ρ（約 0.03）より大きく検索が勝つが、5 問では s が大きすぎて上限が負になり、キャッシュ（ロングコンテキスト）が勝つ。
# ### END SOLUTION

# %% [markdown]
# ## まとめ
#
# - ロングコンテキストの月額は文書量の 1 次式、RAG は横ばい（+ DB の固定費）。交点は 2 点から直線を決めれば計算で出せる。
# - 質問が少ないほど、入力単価が安いほど、交点は文書の多い側へ逃げる。ヒット率を上げても同じ向きに動く。
# - 交点がウィンドウの 50% より先にあるなら、料金ではなく「載るかどうか」で決まる。待ち時間はキャッシュが温まっていれば閾値に当たりにくい。
# - ρ–k 図では、毎回全文を渡す方式が最も安い範囲はごく狭い。検索が勝つ上限は rho_limit(k) で、使い回すほど r − s に近づく。
# - DB の月額は 1 回あたりの s に直すと質問数で変わる。だから同じ文書でも、質問数で勝つ方式が入れ替わる。
# - 次の節（06）では、絞り込みの方式を詳しく扱います。固定した文書セットならキャッシュが効き、上の図で最も安い線になっていました。
#
# 確認問題（答えると解説が出ます）:

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

Quiz(quiz.quiz_for("05_crossover"))
