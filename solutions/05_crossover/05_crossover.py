# %% [markdown]
# # 05 交点を動かす: どこから RAG のほうが安くなるか
#
# 02 では、文書 1 セット・1 日 20 問という 1 つの点で 3 つの方式の月額を比べました。
# 実際の判断では、文書は増え、質問数は読み違え、モデルは替わります。このレッスンでは、それらを動かしたときに
# **どこで方式の順位が入れ替わるか**を計算で求めます。後半では、コストの記事の「使い回し回数 k × 引く割合 ρ」の図で、
# 同じ判断を単価だけから見直します。
#
# **このレッスンで身につくこと**
#
# - 文書量に対する月額を 3 つの方式で描き、RAG のほうが安くなる文書量（交点）を、図から読むのではなく計算で求められる
# - 質問数（とそれで決まるキャッシュヒット率）・モデル・ベクトル DB の月額が、交点をどちらへ動かすかを説明できる
# - ロングコンテキストのままでよい最低のヒット率を求め、トラフィックから見積もったヒット率の幅と比べて判断できる
# - ウィンドウの 50% と 100% の線・待ち時間の線を料金の交点と並べ、文書が増えたとき最初に当たる線を判断できる
# - 「何を送るか（ρ）」と「使い回すか（k）」の 2 軸の図で、全文・キャッシュ・検索のどれが 1 回あたり最も安いかを判断し、ドルの試算と対応づけられる
#
# **所要時間** 約 75 分（任意の部分を含めると約 100 分）　**前提** 02（料金）、03（損益分岐と使い回し回数 k）、04（ヒット率）
#
# **任意の部分** 最後の 9 節（ヒット率を 80% に固定したときのずれと、今日のモデルでの計算し直し）と 10 節（固定部分もキャッシュする検索）は、
# 演習には使いません。時間のあるときに読んでください。

# %%
import math
from dataclasses import replace

import ctxlab
from ctxlab.costs import compare, crossover, formulas, pricing
from ctxlab.labs.prompt_caching import COST_ARTICLE
from ctxlab import corpus
from ctxlab.api import tokens

client = ctxlab.make_client()
ctxlab.show_cost("05_crossover", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# このレッスンで API を使うのは、文書のトークンを数える `count_tokens` だけです（実 API でも無料）。
# 料金はすべて価格表（`data/pricing.json`）と、02 で使った `ctxlab.costs.compare` の計算から出します。
#
# ## 1. 試算の前提
#
# 使い分けの記事の「試算に使っている値」の表を、このコースの前提（`compare.Profile` の既定値）と価格表から作り直します。
# 文書量は、題材の規程（現行版）を数えた値を使います。キャッシュヒット率は記事の 80% ではなく、04 の合成トラフィックを
# 多くの日数（平均の標準誤差が 0.5 ポイント未満になるまで）シミュレーションした平均で、質問数を変えると一緒に変わります。TTL も記事の 5 分に決め打ちせず、04 と同じく
# その質問数とモデルで月額が安いほうを使います（選んだ TTL は表の「キャッシュの倍率」の行に出ます）。

# %%
from IPython.display import Markdown

docs = corpus.load()                         # 現行版: このコースが送る文書
doc_tokens = tokens.count_documents([d.text for d in docs], client=client).tokens
base = crossover.profile(questions_per_day=20)     # 使い分けの記事の前提（中身は下の表）

print(f"題材の規程: {len(docs)} ファイル・{doc_tokens:,} tokens")
Markdown("| 項目 | 値 | 根拠 |\n|---|---|---|\n"
         + "\n".join(f"| {item} | {value} | {basis} |" for item, value, basis in crossover.assumptions(base, len(docs))))

# %% [markdown]
# この前提での月額です。使い分けの記事の表と違うところ（ヒット率、質問文の単価、メタデータで絞る場合のヒット率）は、02 で見たとおり
# `compare` の注に書いてあります。

# %%
now = crossover.situation(doc_tokens, base, n_files=len(docs))
display(Markdown("| 方式 | 月額（ドル） |\n|---|---:|\n"   # Markdown の出力に $ を 2 つ置くと数式として表示されるので、単位は見出しに
         + "\n".join(f"| {label} | {now['monthly_' + key]:,.2f} |" for key, label in crossover.PATHS.items())
         + f"\n| （ロングコンテキストをキャッシュなしで） | {now['monthly_long_context_no_cache']:,.2f} |"
         + f"\n\n出典: 価格表（{pricing.price_table_date()} 時点）の単価と、04 の合成トラフィックのヒット率（シミュレーション）で計算"))
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
# 図には、モデルのウィンドウの 50% を超える範囲（薄い色）と、ウィンドウそのものを超える範囲（濃い色）を、横軸の範囲に入るときだけ塗ります
# （どちらが図に入っているかは、図の下の行に出ます）。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from ctxlab.plots.crossover import RhoKPlot, plot_monthly, plot_rho_k
from ctxlab.widgets import crossover as xw

monthly_plot = plot_monthly(doc_tokens, base, n_files=len(docs))
_xmax, _window = monthly_plot.ax.get_xlim()[1], pricing.get_model(base.model).context_window
print(f"横軸は {_xmax:,.0f} tokens まで: ウィンドウの 50%（{_window * crossover.HALF_WINDOW:,.0f}）は"
      f"{'図の中' if _window * crossover.HALF_WINDOW < _xmax else '図の外'}、ウィンドウそのもの（{_window:,}）は"
      f"{'図の中' if _window < _xmax else '図の外'}")

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
# 下のウィジェットで、文書量・1 日の質問数・キャッシュヒット率・キャッシュの TTL・モデル・RAG のチャンク数・ベクトル DB の月額を動かせます。
# ヒット率は「トラフィックから」（04 の合成トラフィックの平均。質問数を動かすと一緒に動き、スライダーはその値を表示するだけ）と
# 「固定」（スライダーの値）を切り替えられます。TTL は「自動」が既定で、04 と同じ規則（その質問数とモデルで月額が安いほう）で
# 5 分か 1 時間を選びます。どちらかに固定して、選ばなかった側の月額も確かめられます。
# 使い分けの記事の前提と比べるときは、ヒット率を「固定」の 80%、TTL を 5 分にします（数字の欄にも記事の前提での額が出ます）。
# 図の横（画面が狭いときは下）に、3 つの方式の月額、ウィンドウの使用率、キャッシュが温まった状態での最初のトークンまでの時間（TTFT）が出ます。
# TTFT は使い分けの記事の数字に合わせたシミュレーションで、実測ではありません。
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
r = sim.result          # 数字は dict でも読めます（r["monthly_rag"]、r["window_usage"] など）
print(sim.summary())

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
# ロングコンテキストだけが伸び、RAG は動きません。次に、質問数とモデルを動かしたときの交点を表にします（ヒット率は質問数ごとにトラフィックから）。
# モデルは使い分けの記事の 3 モデル（`pricing.article_models()`、記事の日付の価格。いまは旧世代）です。交点がウィンドウの外に出るときは「なし」と表示します（ウィンドウを超えるプロンプトには料金がありません）。
# 交点がウィンドウの 50% より先にあるなら、ロングコンテキストを選べる範囲では、ずっとロングコンテキストのほうが安いことになります。

# %%
per_days = [5, 10, 20, 50, 100]
table = ["| RAG が安くなる文書量 | " + " | ".join(f"1 日 {q} 問" for q in per_days) + " | ウィンドウの 50% |",
         "|---" * (len(per_days) + 2) + "|"]
for model in pricing.article_models().values():
    cells = []
    for q in per_days:
        x = crossover.crossover_tokens(replace(base, model=model.id, questions_per_month=q * crossover.DAYS_PER_MONTH))
        beyond = x is not None and x > model.context_window / 2
        cells.append("なし" if x is None else f"**{x:,.0f}**" if beyond else f"{x:,.0f}")
    table.append(f"| {model.display_name} | " + " | ".join(cells) + f" | {model.context_window // 2:,} |")
table.append("\n太字: 交点がウィンドウの 50% より先（前提を満たす範囲では、ロングコンテキストがずっと安い）")
Markdown("\n".join(table))

# %% [markdown]
# 表の数字から、次のことを確かめます（セルが計算して表示します）。

# %%
art = replace(base, model=pricing.ARTICLE_MODEL)   # 80% 固定の線には記事のモデル（記事の時点の単価）


def far(x):
    return math.inf if x is None else x   # None はウィンドウの内側で交差しないこと（ウィンドウの外のロングコンテキストには料金がない）


cross = {m.id: {q: far(crossover.crossover_tokens(replace(base, model=m.id, questions_per_month=q * crossover.DAYS_PER_MONTH)))
                for q in per_days} for m in pricing.article_models().values()}
few = [q for q in per_days if q <= 20]
falls = all(all(c[a] > c[b] or math.isinf(c[a]) for a, b in zip(few, few[1:])) for c in cross.values())
print(f"1 日 {few[0]}〜{few[-1]} 問では、どのモデルでも質問が少ないほど交点は文書の多い側: {falls}")
opus_hi = cross[art.model]
print(f"{pricing.get_model(art.model).display_name} の 1 日 {per_days[-2]} 問と {per_days[-1]} 問の交点: {opus_hi[per_days[-2]]:,.0f} と {opus_hi[per_days[-1]]:,.0f} tokens"
      f"（差 {abs(opus_hi[per_days[-1]] / opus_hi[per_days[-2]] - 1):.0%}）")
by_price = sorted(pricing.article_models().values(), key=lambda m: m.input_usd_per_mtok)
cheaper_further = all(cross[a.id][q] > cross[b.id][q] or math.isinf(cross[a.id][q])
                      for q in per_days for a, b in zip(by_price, by_price[1:]))
print("どの質問数でも、入力単価の安いモデルほど交点は文書の多い側:", cheaper_further)
half_first = [m.display_name for m in pricing.article_models().values()
              if any(x > m.context_window / 2 for x in cross[m.id].values())]
print("交点よりウィンドウの 50% が先に来る質問数があるモデル:", "、".join(half_first) or "なし")


# %% [markdown]
# 読み取れることは 3 つです（記事の 3 モデルの上で）。
#
# - **質問が少ないほど交点は右（文書が多い側）へ逃げます。** RAG の DB の月額は質問数によらない固定費なので、質問が少ないと 1 問あたりが重くなります。
#   質問が多い側では、ヒット率も上がってロングコンテキストの傾きが小さくなるので、交点はあまり動かなくなります（上の Opus 5 の 2 つの値）。
# - **入力単価の安いモデルほど交点は右へ逃げます。** 単価が下がると、RAG の API の部分も安くなりますが、それは文書量によらない高さの一部で、DB 代は変わりません。
#   文書量とともに伸びるロングコンテキストの傾きが小さくなるので、交点は右へ動きます。
# - **ウィンドウの小さいモデルでは、交点より先にウィンドウの 50% に当たることがあります。** そのときは料金ではなく、載るかどうかで方式が決まります。
#
# ヒット率を記事のように 80% に固定すると交点がどちらへずれるか、今日のモデルではこの 3 つのどれが崩れるかは、任意の 9 節で確かめます。

# %% [markdown]
# ## 5. 待ち時間の線
#
# 使い分けの記事の待ち時間の閾値は「キャッシュが効いた状態で、最初のトークンまで 3 秒以内」でした。
# 待ち時間は、使い分けの記事の数字に合わせて作った待ち時間のモデル（`pricing.ttft_seconds`）のシミュレーションで、実測ではありません。
# このモデルで、3 秒に収まる最大の文書量を二分法で求め、ウィンドウの 50% と比べます。

# %%
ttft_cap = crossover.max_tokens_for_ttft(crossover.TTFT_LIMIT_S, base.prompt_tokens)
half = pricing.get_model(base.model).context_window / 2
print(f"キャッシュ時の TTFT が {crossover.TTFT_LIMIT_S:g} 秒に収まる文書量: {ttft_cap:,.0f} tokens（シミュレーション）")
print(f"{pricing.get_model(base.model).display_name} のウィンドウの 50%: {half:,.0f} tokens")
print("先に当たる線（待ち時間はモデルのシミュレーション）:", "ウィンドウの 50%" if half < ttft_cap else "待ち時間の 3 秒")
print(f"題材の規程をキャッシュから読むと TTFT {pricing.ttft_seconds(base.prompt_tokens, doc_tokens):.1f} 秒、"
      f"キャッシュなしなら {pricing.ttft_seconds(base.prompt_tokens + doc_tokens):.1f} 秒")


# %% [markdown]
# このモデルの上では、先に当たるのがウィンドウの 50% なら、キャッシュが温まっている限り、待ち時間はロングコンテキストを諦める理由になりません。
# ただしキャッシュが冷えた回（ミスした回）は、キャッシュなしの値になります。ヒット率が低い用途では、その回の待ち時間も見てください。
# 実際の待ち時間は、実 API でストリーミングの最初のトークンまでの時間を測って確かめます（08 で扱います）。
#
# ## 6. 演習

# %% [markdown] nbgrader={"grade": false, "grade_id": "min-hit-rate-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: ヒット率がどこまで下がったら RAG にするか
#
# 1 節の月額と 2 節の交点は、前提のヒット率での 1 つの点の結果です。そのヒット率は 04 の合成トラフィックのシミュレーションで、実際には外れます。
# 判断に要るのは、**ヒット率がいくつ以上ならロングコンテキストのままでよいか**という条件です。
#
# 関数 `min_hit_rate_for_long_context(doc_tokens, profile)` を書き、文書量 `doc_tokens` と前提 `profile`（`compare.Profile`）のもとで、
# ロングコンテキストの月額が RAG（DB 込み）以下になる**最低のキャッシュヒット率**を返してください。
#
# - 0 以上 1 以下の小数（float）で返す（`0.85` のような割合。パーセントの数字ではありません）
# - TTL は `profile.resolved_ttl()` に固定し、ヒット率だけを動かす（`replace(profile, ttl=..., hit_rate=h)`。`ttl="auto"` のままヒット率を固定すると 5 分に替わります）
# - キャッシュを付けずに送ることもできる: キャッシュなしの月額が RAG 以下なら、ヒット率によらず `0.0`。同じ月額ならロングコンテキスト
# - ヒット率が `1.0` でも RAG より高いとき、文書と質問がウィンドウに載らないときは `None`
#
# 道具として `compare.compare(doc_tokens, 50, p).monthly`（キー `"long_context"`・`"long_context_no_cache"`・`"rag"`）、`crossover.fits`
# （ウィンドウに載るか）、`crossover.crossover_tokens` などを使ってかまいません。採点されるのは、どの条件で月額を比べて結論を出すかです。
# 記事の 80% を当てはめたり 2 節の直線を延ばしたりせず、この文書量で月額を計算してください（料金の段のあるモデルでは、月額は文書量の直線ではありません）。

# %% nbgrader={"grade": false, "grade_id": "min_hit_rate_for_long_context", "locked": false, "schema_version": 3, "solution": true, "task": false}
def min_hit_rate_for_long_context(doc_tokens, profile):
    ### BEGIN SOLUTION
    if not crossover.fits(doc_tokens, profile):
        return None                      # long context cannot be sent at all
    ttl = profile.resolved_ttl()         # the team's TTL: only the hit rate moves

    def month(h):
        return compare.compare(doc_tokens, 50, replace(profile, ttl=ttl, hit_rate=h)).monthly

    at0, at1 = month(0.0), month(1.0)
    if min(at0["long_context"], at0["long_context_no_cache"]) <= at0["rag"]:
        return 0.0                       # no dearer at any hit rate (without the cache if need be)
    if at1["long_context"] > at1["rag"]:
        return None                      # dearer even when every call reads the cache
    # at a fixed TTL the month is linear in the hit rate: solve long context = RAG between the two ends
    return (at0["long_context"] - at0["rag"]) / (at0["long_context"] - at1["long_context"])
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# まず、ロングコンテキストが選べるか（ウィンドウに載るか）を確かめ、次に両端を見ます。ヒット率が `0.0` なら、キャッシュを付けない送り方とも比べます。
# `1.0` でも負けるなら条件はありません。その間は、TTL を固定すれば月額がヒット率の 1 次式なので（02 の演習 2 と同じ形）、両端の 2 点から決まります。
# 直線で結んでよいのはヒット率の軸で、文書量の軸ではありません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "min_hit_rate_for_long_context-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
def _month_at(d, p, h):
    return compare.compare(d, 50, replace(p, ttl=p.resolved_ttl(), hit_rate=h)).monthly


def _equal_at(d, p, h):   # ヒット率 h でロングコンテキストと RAG の月額が等しいか
    m = _month_at(d, p, h) if type(h) is float and 0.0 <= h <= 1.0 else None
    return m is not None and abs(m["long_context"] - m["rag"]) < 0.01


def _call(d, p, where):
    try:
        return min_hit_rate_for_long_context(d, p)
    except NotImplementedError:
        raise
    except Exception as e:
        raise AssertionError(f"{where}でエラーになりました: {type(e).__name__}: {e}") from None


h = _call(doc_tokens, base, "題材の規程・1 日 20 問")
assert h is not None, ("題材の規程・1 日 20 問では、ヒット率を十分に上げればロングコンテキストが RAG 以下になるので、None ではなく"
                       "そのヒット率を返すはずです。1 つのヒット率（記事の 80% など）だけで判断していませんか")
assert type(h) is float and 0.0 <= h <= 1.0, f"ヒット率はパーセントの数字ではなく、0〜1 の小数（float）で返してください（85% なら 0.85）: {h!r}"
assert _equal_at(doc_tokens, base, h), (
    f"返したヒット率 {h:.1%} で、題材の規程・1 日 20 問（TTL {base.resolved_ttl()}）のロングコンテキストと RAG の月額が等しくありません。"
    "TTL を profile.resolved_ttl() に固定して、ヒット率だけを動かしましたか")
_m0 = _month_at(doc_tokens, crossover.profile(3), 0.0)
got = _call(doc_tokens, crossover.profile(3), "1 日 3 問")
assert type(got) is float and got == 0.0, (
    f"1 日 3 問では、キャッシュを付けないロングコンテキスト（月 ${_m0['long_context_no_cache']:,.2f}）が RAG（月 ${_m0['rag']:,.2f}）より安いので、"
    f"ヒット率によらず 0.0 のはずです（キャッシュなしの月額も比べましたか）: {got!r}")
got = _call(250_000, crossover.profile(20, model="claude-haiku-4-5"), "ウィンドウに載らない文書（Haiku 4.5 に 250,000 tokens）")
assert got is None, f"Haiku 4.5 のウィンドウ（200,000 tokens）に載らない文書では、ロングコンテキストは使えないので None のはずです: {got!r}"
got = _call(doc_tokens, crossover.profile(100, model="claude-opus-5"), "Opus 5・1 日 100 問")
assert got is None, ("Opus 5・1 日 100 問では、ヒット率 100% でもロングコンテキストが RAG より高いので None のはずです"
                     f"（ヒット率 1.0 の月額も比べましたか。profile のモデルや DB の月額を置き換えていませんか）: {got!r}")
got = _call(doc_tokens, crossover.profile(100, model="claude-haiku-5-5"), "Haiku 5.5・1 日 100 問")
assert _equal_at(doc_tokens, crossover.profile(100, model="claude-haiku-5-5"), got), (
    f"Haiku 5.5・1 日 100 問の答え {got!r} で、ロングコンテキストと RAG の月額が等しくありません。題材の規程は Haiku 5.5 の料金の段より上にあり、"
    "段の上では単価が跳ね上がります。図の直線（crossover.line）ではなく、この文書量で compare を計算しましたか")
for _q in (3, 5, 20, 100):   # 質問数ごとのチームの判断: 要るヒット率と、見積もりのヒット率の幅を比べる
    _need, _p = min_hit_rate_for_long_context(doc_tokens, crossover.profile(_q)), crossover.profile(_q)
    _lo, _hi = (b.effective_hit_rate() for b in compare.hit_rate_band(_p))
    _say = ("RAG" if _need is None or _hi < _need else "ロングコンテキスト" if _lo >= _need else "同額圏（見積もりの幅の内）")
    print(f"1 日 {_q:>3} 問（TTL {_p.resolved_ttl()}）: ロングコンテキストに要るヒット率 {'100% でも足りない' if _need is None else 'なし（キャッシュなしでも RAG 以下）' if _need == 0.0 else f'{_need:.1%}'}、"
          f"トラフィックの見積もり {_lo:.1%}〜{_hi:.1%}（±2 標準誤差、シミュレーション）→ {_say}")
### BEGIN HIDDEN TESTS
def _truth(d, p):
    """The lowest hit rate at which long context costs no more than RAG, from compare at the two ends."""
    if d + p.prompt_tokens > pricing.get_model(p.model).context_window:
        return None
    a, b = _month_at(d, p, 0.0), _month_at(d, p, 1.0)
    if min(a["long_context"], a["long_context_no_cache"]) <= a["rag"]:
        return 0.0
    if b["long_context"] > b["rag"]:
        return None
    return (a["long_context"] - a["rag"]) / (a["long_context"] - b["long_context"])


_cases = []
for _model in pricing.models():
    _win = pricing.get_model(_model).context_window
    for _q, _d in ((1, 40_000), (4, doc_tokens), (12, 99_000), (30, 150_000), (300, 60_000), (150, _win - 400), (20, _win)):
        _cases.append((_d, crossover.profile(_q, model=_model)))
_cases += [(doc_tokens, crossover.profile(20, ttl="5m")), (doc_tokens, crossover.profile(5, ttl="1h")),
           (doc_tokens, crossover.profile(20, hit_rate=0.5)),              # a fixed rate in the profile: auto TTL is 5m
           (doc_tokens, crossover.profile(20, db_monthly=0.0)), (doc_tokens, crossover.profile(20, db_monthly=400.0)),
           (doc_tokens, crossover.profile(20, rag_chunks=30, prompt_tokens=3_000, output_tokens=2_000)),
           (0, crossover.profile(20)), (doc_tokens, crossover.profile(0)),
           (120_000, crossover.profile(60, model="claude-haiku-5-5", db_monthly=20.0)),   # above the tier
           (90_000, crossover.profile(60, model="claude-haiku-5-5", db_monthly=20.0)),    # below the tier
           (1_500_000, crossover.profile(20))]
_kinds = set()
for _d, _p in _cases:
    _want, _got = _truth(_d, _p), min_hit_rate_for_long_context(_d, _p)
    _kinds.add("none" if _want is None else "zero" if _want == 0.0 else "between")
    if _want is None:
        assert _got is None, (_d, _p, _got)
    else:
        assert type(_got) is float and abs(_got - _want) <= 1e-4, (_d, _p, _got, _want)
assert _kinds == {"none", "zero", "between"}, _kinds
### END HIDDEN TESTS


# %% [markdown] nbgrader={"grade": false, "grade_id": "first-line-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 文書が増えていくとき、最初に当たる線
#
# 規程は年々増えます。質問数・モデル・DB の月額を決めた `profile` のもとで文書を 0 から増やしていくと、ロングコンテキストをやめる理由は、
# 次の 3 本の線のうち**最初に当たった線**で決まります（2 節の図と 5 節で見た線です）。関数 `first_line(profile, ttft_limit_s=crossover.TTFT_LIMIT_S)` を書き、
# `(線, 文書量)` のタプルを返してください。
#
# - `"half_window"`: 文書がウィンドウの 50%（`context_window * crossover.HALF_WINDOW`）に達する。そこから先は前提を満たさない
# - `"latency"`: キャッシュ時の TTFT が `ttft_limit_s` 秒を超える文書量 `crossover.max_tokens_for_ttft(ttft_limit_s, profile.prompt_tokens)`（シミュレーション）
# - `"cost"`: RAG（DB 込み）のほうが安くなる文書量 `crossover.crossover_tokens(profile)`。ウィンドウの内側で交わらないときは `None` を返すので、その線には当たらない
# - 文書量が最も小さい線を返す。同じ文書量で重なるときは、載るかどうか（`"half_window"`）、待ち時間（`"latency"`）、料金（`"cost"`）の順に優先する（00 の表で、前提をほかの数字より先に見たのと同じ順）

# %% nbgrader={"grade": false, "grade_id": "first_line", "locked": false, "schema_version": 3, "solution": true, "task": false}
def first_line(profile, ttft_limit_s=crossover.TTFT_LIMIT_S):
    ### BEGIN SOLUTION
    lines = [("half_window", pricing.get_model(profile.model).context_window * crossover.HALF_WINDOW),
             ("latency", crossover.max_tokens_for_ttft(ttft_limit_s, profile.prompt_tokens))]
    x = crossover.crossover_tokens(profile)
    if x is not None:
        lines.append(("cost", x))
    # min keeps the first of equal volumes: the order above is the priority
    return min(lines, key=lambda line: line[1])
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 3 本の線の文書量を並べて、小さいものを選ぶだけに見えます。気をつけるのは 2 つです。交わらない料金の線（`None`）は「0 で当たる」のでも
# 「比べられない」のでもなく、当たらない線です。そして、RAG が文書 0 からすでに安い（交点 `0.0`）ときは、その線に文書 0 で当たっています。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "first_line-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
got = first_line(base)
assert type(got) is tuple and len(got) == 2, f"(線, 文書量) のタプルを返してください: {got!r}"
assert got[0] == "cost" and abs(got[1] - crossover.crossover_tokens(base)) < 1, (
    f"Opus 5.5・1 日 20 問では、交点がウィンドウの 50% より手前なので ('cost', 交点) のはずです: {got!r}")
got = first_line(crossover.profile(5, model="claude-haiku-4-5"))
assert got == ("half_window", 100_000.0), (
    "Haiku 4.5・1 日 5 問ではウィンドウの内側で交わらない（crossover_tokens が None）ので、先に当たるのはウィンドウ 20 万の 50% の "
    f"('half_window', 100000.0) のはずです: {got!r}")
got = first_line(crossover.profile(2), ttft_limit_s=1.0)
assert got[0] == "latency" and got[1] < crossover.crossover_tokens(crossover.profile(2)), (
    "1 日 2 問では交点が文書の多い側へ逃げます。業務が TTFT 1 秒を求めるなら、その前に待ち時間の線に当たるはずです"
    f"（ttft_limit_s を使っていますか）: {got!r}")
got = first_line(crossover.profile(20, rag_chunks=0, db_monthly=0.0))
assert got == ("cost", 0.0), (f"チャンク 0・DB $0 の RAG は文書 0 から安い（交点 0.0）ので ('cost', 0.0) のはずです"
                              f"（0.0 を「交わらない」と取り違えていませんか）: {got!r}")
_line, _at = first_line(base)
_names = {"cost": "料金の交点", "half_window": "ウィンドウの 50%", "latency": "待ち時間の線"}
print(f"題材の規程の前提（1 日 20 問）で最初に当たる線: {_names.get(_line, _line)}（文書 {_at:,.0f} tokens）")
### BEGIN HIDDEN TESTS
def _truth(p, lim=crossover.TTFT_LIMIT_S):
    cands = [("half_window", pricing.get_model(p.model).context_window * crossover.HALF_WINDOW),
             ("latency", crossover.max_tokens_for_ttft(lim, p.prompt_tokens))]
    x = crossover.crossover_tokens(p)
    if x is not None:
        cands.append(("cost", x))
    return min(cands, key=lambda c: c[1])

for _p, _lim in [(crossover.profile(2, model="claude-sonnet-5-5"), 3.0),      # crossing beyond the half window
                 (crossover.profile(100, model="claude-haiku-4-5"), 3.0),     # crossing beyond the half window, small window
                 (crossover.profile(20, model="claude-haiku-5-5"), 3.0),
                 (crossover.profile(100, model="claude-haiku-5-5"), 3.0),
                 (crossover.profile(5, model="claude-opus-5"), 1.5),
                 (crossover.profile(2, model="claude-opus-5-5"), 1.5),
                 (crossover.profile(2, model="claude-sonnet-5-5"), 1.0),      # latency before a far crossing
                 (crossover.profile(0, model="claude-sonnet-5"), 3.0)]:       # no traffic: never crosses
    _got = first_line(_p, _lim)
    _want = _truth(_p, _lim)
    assert type(_got) is tuple and len(_got) == 2 and _got[0] == _want[0] and abs(_got[1] - _want[1]) <= 1, (_p, _lim, _got, _want)
# ties at zero: the latency line (no documents fit 0.5 s) comes before the cost line (RAG cheaper from 0)
_got = first_line(crossover.profile(20, rag_chunks=0, db_monthly=0.0), 0.5)
assert _got == ("latency", 0.0), _got
_got = first_line(crossover.profile(20, rag_chunks=0, db_monthly=0.0), 3.0)
assert _got == ("cost", 0.0), _got
### END HIDDEN TESTS

# %% [markdown]
# ## 7. コストの記事の図: 単価だけで見る
#
# ここからは単位を変えます。コストの記事は、金額を「文書全体を通常単価で 1 回送る代金 aM」を 1 として測りました（03 の 6 節の式）。
#
# コストの記事の要点は、ロングコンテキスト・キャッシュ・検索を 3 つの選択肢として並べないことです。
# **何を送るか**（全部か、検索で引いた割合 ρ だけか）と、**送ったものを使い回すか**（キャッシュ、使い回し回数 k）は別の軸です。
# 検索を使う構成でも、システムプロンプト・ツール定義・共通の手順書といった固定部分（全体に対する割合 m0）はキャッシュできます。
# 2 つの軸の組み合わせで、1 回あたりのコストは次の 4 行になります（`formulas.relative_cost`。キャッシュしない状態は w = r = 1 に当たります）。
#
# | 方式 | 何を送るか | 使い回すか | 1 回あたり |
# |---|---|---|---|
# | 毎回全文を渡す | 全部 | しない（w = r = 1） | 1 |
# | 全文をキャッシュする（CAG） | 全部 | する | (w + (k − 1) r) / k |
# | 検索して引いた分だけ載せる | 固定部分 m0 + 引いた ρ | しない | m0 + ρ + s |
# | 検索しつつ固定部分をキャッシュする | 固定部分 m0 + 引いた ρ | 固定部分だけ | m0 (w + (k − 1) r) / k + ρ + s |
#
# w は書き込みの倍率、r は読み出しの倍率、k は使い回し回数（1 回の書き込みを分け合う呼び出しの数）、ρ は 1 回に引く割合、s は検索 1 回の費用です。
# 横軸に k、縦軸に ρ を取り、各点で最も安い方式の色で塗ります。黒い線が、検索がキャッシュに勝つ ρ の上限
# `formulas.rho_limit(k)`、破線が k を大きくしたときの極限 r − s です。w と r は価格表にある今日の既定のモデルの倍率（5 分 TTL）、s はコストの記事の値です。
# コストの記事と同じく固定部分なし（m0 = 0）で描きます（固定部分がある場合は任意の 10 節）。最後の行で、コストの記事の倍率（記事の日付のモデル）での極限と並べます。

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
A = COST_ARTICLE   # コストの記事の倍率（記事の時点のモデル）
print(f"コストの記事の倍率（r = {A['r']:g}、s = {A['s']:g}）では極限 r − s = {A['r'] - A['s']:.3f}"
      f"（30 万トークンなら {(A['r'] - A['s']) * 300_000:,.0f} tokens）。{pricing.get_model(base.model).display_name} は"
      f"読み出しが r = {R:g} に下がったぶん、検索が勝てる範囲も狭い")

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
# 同じ文書で、1 日 20 問と 1 日 2 問を並べます。文書も単価も同じで、違うのは s（DB の月額を質問数で割った値）と、
# ヒット率から決まる k です。それでも色の境目は大きく動きます。

# %%
points = {}
fig, axes = plt.subplots(1, 2, figsize=(12.5, 3.9), sharey=True)
for ax, per_day in zip(axes, (20, 2)):
    p = replace(base, questions_per_month=per_day * crossover.DAYS_PER_MONTH)
    pt = crossover.profile_point(doc_tokens, p)
    plot = RhoKPlot(ax, points=[(f"1 日 {per_day} 問", pt.k, pt.rho)], legend=ax is axes[-1])
    plot.update(pt.w, pt.r, pt.s)
    ax.set_title(f"1 日 {per_day} 問: s = {pt.s:.3f}、k = {pt.k:.2f} での上限 ρ < {pt.rho_limit:.3f}", fontsize=10)
    points[per_day] = pt
    print(f"1 日 {per_day:>2} 問: ヒット率 {p.effective_hit_rate():.0%} → k = {pt.k:.2f}、s = {pt.s:.3f}、ρ = {pt.rho:.3f}、"
          f"上限 {pt.rho_limit:.3f} → 最も安いのは {crossover.METHOD_LABELS[pt.cheapest]}（r − s = {pt.r - pt.s:.3f}）")
plt.tight_layout()

# %% [markdown] nbgrader={"grade": false, "grade_id": "two-views-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# コストの記事は「十分に使い回せるなら、検索が勝つのは ρ < r − s のときだけ」と結論しました。
# 8 節の出力の 1 日 20 問と 1 日 2 問の行で、ρ と r − s を比べてください。この規則だけで判断すると、それぞれの日に検索は勝ちますか。
# それは 8 節が出した「最も安いのは」と合っていますか。合わない日があるなら、なぜ合わないのかを、8 節の数字（k・ρ・s・その k での上限）を
# 引用して 2〜4 文で説明してください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "two-views", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 8 節の s は DB の月額を 1 回あたりに直した値（s = DB ÷（月の質問数 × aM））で、コストの記事の 0.02 よりずっと大きく、r − s はどちらの日も負になる。
# 規則だけで判断すると、どちらの日も検索は勝たない。2 問の日はそのとおり検索が負けるが、20 問の日は 8 節が検索を最も安いと出しており、合わない。
# 合わないのは、ρ < r − s が k を大きくした極限の条件だから。実際の k はヒット率から 1 / (1 − h) と有限で、20 問の k（8 節の出力）ではキャッシュの 1 回あたりがまだ r より高く、
# その k での上限 rho_limit が ρ を上回るので検索が勝つ。2 問では質問が少ないので s が大きく、上限が負になって、検索はどの ρ でも勝てない。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 8 節の出力から、規則だけでは 20 問の日の結論（検索が最安）と合わないことを読み取り、(1) ρ < r − s は k が大きい極限の条件で、実際の k はヒット率で決まる有限の値なので、その k での rho_limit と ρ を比べる必要があること、(2) s は DB の月額を質問数で割った値なので質問が減るほど大きくなること、の両方を 8 節の出力の数字を引用して示している。問題文やコストの記事の前提が出力と合わない（例: s が記事の 0.02 と違う、r − s が負）と指摘し、出力の数字で論じている答えも、この 2 点を押さえていれば満点とする。
# - 1 点（半分）: 2 つの理由のうち 1 つだけを数字で示している。
# - 0 点: 8 節の出力を読まずに記事の規則だけで結論を出している（出力と食い違う結論を述べている）、または数字を使わずに説明している。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("two-views")

# %% [markdown]
# ## まとめ
#
# - ロングコンテキストの月額は文書量の 1 次式、RAG は横ばい（+ DB の固定費）。交点は 2 点から直線を決めれば計算で出せる。
# - 記事の 3 モデルの価格では、質問が少ないほど、入力単価が安いほど、交点は文書の多い側へ逃げる。
# - 判断は 1 点の勝ち負けでなく条件で書く: ロングコンテキストに要る最低のヒット率を、見積もったヒット率の幅と比べる（演習 1。キャッシュなしで送る選択肢とウィンドウも確かめる）。
# - 文書が増えていくときは、料金の交点・ウィンドウの 50%・待ち時間の線のうち、最初に当たった線が方式を決める（演習 2）。交点がウィンドウの 50% より先にあるなら、料金ではなく「載るかどうか」で決まる。待ち時間は、使い分けの記事の数字に合わせた待ち時間のモデル（シミュレーション）の上では、キャッシュが温まっていれば閾値に当たりにくい。実際の値は実 API で測る。
# - 「何を送るか（ρ）」と「使い回すか（k）」は別の軸。ρ–k 図では、毎回全文を渡す方式が最も安い範囲はごく狭い。検索が勝つ上限は rho_limit(k) で、使い回すほど r − s に近づく。
# - DB の月額は 1 回あたりの s に直すと質問数で変わる。だから同じ文書でも、質問数で勝つ方式が入れ替わる。
# - 任意の 9 節: ヒット率は質問数で決まるので、80% に固定すると交点を読み違える（質問が少なければ文書の多い側に、多ければ少ない側に）。読み出しが安くなった今日のモデルでは、質問の多い側で交点が文書の多い側へ戻る。価格が変わったら、覚えた結論ではなく同じ計算で出し直す。
# - 任意の 10 節: 検索する場合も、固定部分は損益分岐を超えればキャッシュしたほうが安い。
# - 次の節（06）では、絞り込みの方式を詳しく扱います。固定した文書セットならキャッシュが効き、上の図で最も安い線になっていました。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("05_crossover"))
check

# %% [markdown]
# ## 9.（任意） ヒット率の固定と、今日のモデル
#
# ここからの 2 つの節は任意です。演習には使いません。4 節の表を、ヒット率を記事のように 80% に固定した場合と、今日のモデルの価格で見直します。
#
# まず 4 節の表を図にします。横軸が 1 日の質問数、縦軸が交点の文書量です。線より上（文書が多い側）では RAG が安く、下ではロングコンテキストが安い。
# 点線は各モデルのウィンドウの 50% です。Opus 5 には、使い分けの記事のようにヒット率を 80% に固定した場合も破線で重ねます。

# %%
qs = np.geomspace(1, 300, 40)
fig, ax = plt.subplots(figsize=(6.6, 3.8))
for model, color in zip(pricing.article_models().values(), ["#1f77b4", "#ff7f0e", "#2ca02c"]):
    xs = [crossover.crossover_tokens(replace(base, model=model.id, questions_per_month=q * crossover.DAYS_PER_MONTH))
          for q in qs]
    ax.plot(qs, xs, color=color, label=f"{model.display_name}（ヒット率はトラフィックから）")
    ax.axhline(model.context_window / 2, color=color, ls=":", lw=1)
fixed = [crossover.crossover_tokens(replace(art, questions_per_month=q * crossover.DAYS_PER_MONTH,
                                            hit_rate=compare.ARTICLE_HIT_RATE)) for q in qs]
ax.plot(qs, fixed, color="#1f77b4", ls="--", lw=1,
        label=f"{pricing.get_model(art.model).display_name}（記事の {compare.ARTICLE_HIT_RATE:.0%} に固定）")
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
# 破線と実線の差が、記事の前提と、このトラフィックの差です。ずれの向きを、質問数ごとに確かめます（同額圏: シミュレーションしたヒット率の精度の内）。

# %%
def fixed_80_side(q):
    """Where the article's fixed 80% puts the crossing against the traffic's hit rate at q a day:
    +1 further (more documents), -1 nearer, 0 tied within the simulated hit rate's band."""
    p = replace(art, questions_per_month=q * crossover.DAYS_PER_MONTH)
    fixed = far(crossover.crossover_tokens(replace(p, hit_rate=compare.ARTICLE_HIT_RATE)))
    sides = {(fixed > far(crossover.crossover_tokens(b))) - (fixed < far(crossover.crossover_tokens(b)))
             for b in compare.hit_rate_band(p)}
    return sides.pop() if len(sides) == 1 else 0


side = {q: fixed_80_side(q) for q in range(1, 121)}
further_to = max(q for q, v in side.items() if v > 0)
nearer_from = min(q for q, v in side.items() if v < 0)
print(f"{pricing.get_model(art.model).display_name} でヒット率を記事の {compare.ARTICLE_HIT_RATE:.0%} に固定すると、交点を "
      f"1 日 {further_to} 問までは文書の多い側に、{nearer_from} 問からは少ない側に見積もる"
      + (f"（間の {nearer_from - further_to - 1} 問はシミュレーションしたヒット率の精度の内で決まらない）"
         if nearer_from - further_to > 1 else ""))

# %% [markdown]
# **ヒット率を 80% に固定したときのずれの向きは、質問数で変わります。** 質問が少ないと、このトラフィックのヒット率は低く、文書 1 トークンあたりの単価
# $(1-h)w + hr$ が記事の前提（80%・TTL 5 分）より高いので、固定すると交点を文書の多い側に見積もります。質問が多いと、1 時間 TTL のヒット率が
# 高くなって単価が記事の前提より安くなるので、逆に少ない側に見積もります。入れ替わる質問数は上のセルの行です（破線と実線が交わるところ）。
#
# ヒット率だけを固定して動かしても、交点は動きます。ヒット率を上げると、ロングコンテキストの傾きが書き込みの倍率から読み出しの倍率の側へ寄ります。
# 最後の行は、1 日 20 問のトラフィックから出したヒット率です。

# %%
for h in (0.0, 0.5, compare.ARTICLE_HIT_RATE, 0.95, None):
    p = replace(base, hit_rate=h)
    print(f"{p.hit_rate_label():58s}: 文書 1 万トークンあたり月 ${crossover.line('long_context', p).slope * 10_000:6.2f}、"
          f"交点 {crossover.crossover_tokens(p):>9,.0f} tokens")

# %% [markdown]
# ### 今日のモデルで計算し直す
#
# ここまでの表と読み取りは、使い分けの記事の 3 モデル（記事の日付の価格）の上のものでした。価格表には今日のモデルも入っています
# （`pricing.current_models()`）。読み出しの倍率が 0.05 倍（Opus 5.5・Sonnet 5.5）や 0.025 倍（Fable）に下がり、
# Haiku 5.5 はプロンプトの長さで単価が変わります（100,000 トークンまでと、それを超えるプロンプト）。どのトークンを長さに数えるかと、
# 超えたときに出力まで高い単価になるかは、公式のページに書かれておらず、価格表が置いた前提です。倍率・単価・前提は下のセルが価格表から表示します。
# 同じ計算を、記事の各モデルの後継（同じ系統の今日のモデル）でやり直し、どの結論が動いたかを確かめます。
# 覚えるのは数字ではなく、価格が変わったら同じ計算で出し直す手順です。

# %%
def successor(m):
    """The current model of the same family (Opus, Sonnet, Haiku) as the article's model ``m``."""
    family = m.display_name.split()[1]
    return next(c for c in pricing.current_models().values() if c.display_name.split()[1] == family)


def verdict(p):
    """Which path is cheaper for the course's documents under profile ``p`` (the premise first)."""
    s = crossover.situation(doc_tokens, p, n_files=len(docs))
    if not s["within_half_window"]:
        return "前提外（ウィンドウの 50% 超）"
    return {"long_context": "ロングコンテキスト", "rag": "RAG", "tie": "同額圏"}[compare.cheaper_path(doc_tokens, len(docs), p)]


COUNTED = {"input_tokens": "入力", "cache_creation_input_tokens": "キャッシュの書き込み", "cache_read_input_tokens": "読み出し"}
print(f"価格表 {pricing.price_table_date()} 時点")
for m in pricing.current_models().values():
    tiers = "・".join(f"{t.over_prompt_tokens:,} tokens 超は ${t.input_usd_per_mtok:g} / ${t.output_usd_per_mtok:g}"
                     for t in m.prompt_tiers) or "なし"
    print(f"  {m.display_name:17s} ${m.input_usd_per_mtok:g} / ${m.output_usd_per_mtok:g}  読み出し {m.cache_read_multiplier:g} 倍"
          f"  長さの段階: {tiers}")
    if m.prompt_tiers:   # どのトークンを数え、高い単価が何に掛かるか: 価格表が置いた前提
        edge = m.prompt_tiers[0].over_prompt_tokens
        print(f"    {'前提（公式のページは「プロンプトの長さ」としか書かず、第三者の価格情報による）' if m.tier_rule.assumption else '規則'}: "
              f"数えるのは{'・'.join(COUNTED[t] for t in m.tier_rule.counted_tokens)}の合計、超えたら"
              f"{'出力も含めて' if 'output included' in m.tier_rule.applies_to else ''}呼び出し全体が高い単価。"
              f"題材の規程 {doc_tokens:,} tokens は料金の段の{'上' if doc_tokens > edge else '下'}")
moved, rows = [], ["| 1 日の質問数 | 記事のモデル | 交点 | 題材の規程で安いのは | 今日のモデル | 交点 | 題材の規程で安いのは |",
                   "|---" * 7 + "|"]
for old in pricing.article_models().values():
    new = successor(old)
    for q in (5, 20, 100):
        cells, said = [], []
        for m in (old, new):
            p = replace(base, model=m.id, questions_per_month=q * crossover.DAYS_PER_MONTH)
            x = crossover.crossover_tokens(p)
            said.append(verdict(p))
            cells += [m.display_name, "なし" if x is None else f"{x:,.0f}", said[-1]]
        if said[0] != said[1]:
            moved.append((q, old.display_name, said[0], new.display_name, said[1]))
            cells[-1] = f"**{cells[-1]}**"
        rows.append(f"| {q} | " + " | ".join(cells) + " |")
rows.append("\n太字: 記事のモデルから結論が入れ替わった組み合わせ（ヒット率と TTL は質問数ごとにトラフィックから）。"
            f"同額圏: シミュレーションしたヒット率の精度（平均の ±{compare.BAND_SE:g} 標準誤差）の内で、安いほうが入れ替わる")
Markdown("\n".join(rows))

# %%
for q, a, va, b, vb in moved:
    print(f"1 日 {q} 問: {a} では {va} → {b} では {vb}")
print(f"結論が入れ替わった組み合わせ: {len(moved)} / {3 * len(pricing.article_models())}")
now_cross = {m.id: [far(crossover.crossover_tokens(replace(base, model=m.id, questions_per_month=q * crossover.DAYS_PER_MONTH)))
                    for q in per_days] for m in pricing.current_models().values()}
comes_back = [pricing.get_model(m).display_name for m, xs in now_cross.items()
              if any(b > a for a, b in zip(xs, xs[1:]) if not math.isinf(a))]
print(f"1 日 {per_days[0]}〜{per_days[-1]} 問で、質問が増えると交点が文書の多い側へ戻るモデル:", "、".join(comes_back) or "なし")

# %% [markdown]
# 記事の 3 モデルで成り立った「質問が少ないほど交点は文書の多い側」は、今日のモデルでは質問の多い側で崩れます（上のセルが該当するモデルを表示します）。
# 交点は「RAG の月額 − 文書 0 のロングコンテキストの月額」を「文書 1 トークンあたりの月額」で割った値です。質問が増えると、
# 分子の DB の固定費は薄まります（交点は左へ）。一方でヒット率が上がり、1 トークンあたりの単価 $(1-h)w + hr$ は下がり続けます（交点は右へ）。
# 読み出しの倍率 $r$ が小さいほど後者が大きく効くので、読み出しが安くなった今日のモデルでは、質問の多い側で交点が右へ戻ります。
# 表の太字は、題材の規程で安い方式が記事のモデルから入れ替わった組み合わせです（上のセルが一覧にします）。交点の列は、
# 入れ替わらなかった組み合わせでも交点がどれだけ動いたかを示します。価格表の日付が変わったら、このセルを実行し直すだけで、どの結論が動いたかが出ます。

# %% [markdown]
# ## 10.（任意） 固定部分もキャッシュする検索と、倍率を動かす図
#
# 固定部分があると、検索の側にもその分が乗ります。キャッシュしなければ毎回 m0、キャッシュすれば損益分岐より右で m0 より安くなります。
# 共通の手順書などで全体の 5% を固定部分とした場合（仮の値です）を描くと、検索の領域のうち損益分岐より右が「検索しつつ固定部分をキャッシュ」に替わります。

# %%
M0 = 0.05   # 仮の値: 固定部分が資料全体の 5%
hy = plot_rho_k(W5, R, S, m0=M0)
print("m0 =", M0, "の面積:", "、".join(f"{crossover.METHOD_LABELS[m]} {v:.2%}" for m, v in hy.result["share"].items()))
print(f"損益分岐 k > {hy.result['breakeven_k']:.2f} より右で、検索するなら固定部分もキャッシュするほうが安い"
      f"（k = 5 で 1 回あたり {M0 - M0 * formulas.cached_cost_per_call(5, W5, R):.3f} aM の差）")

# %% [markdown]
# 毎回全文を渡す方式が最も安いのは、左上のごく細い帯（k が損益分岐の (w − r)/(1 − r) より小さく、ほぼ全文を引く場合）だけです。
# 下のウィジェットで w・r・s・m0 を動かすと、色の境目と 2 本の線が動きます。1 時間 TTL（w = 2）にすると損益分岐が右へずれ、
# s を r より大きくすると破線が 0 より下に消え、使い回すほど検索が勝てなくなります。

# %%
explorer = xw.RhoKExplorer(W5, R, S)
explorer
