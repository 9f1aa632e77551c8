# %% [markdown]
# # 02 料金: 1 回あたりと月額を、DB まで含めて比べる
#
# 数えたトークンを料金に換算し、3 つの方式を月額で比べます。
#
# **このレッスンで身につくこと**
#
# - 1 回の呼び出しの料金を、通常の入力・キャッシュ書き込み・読み出し・出力に分けて計算できる
# - 月の質問数とキャッシュヒット率から月額を出し、RAG 側にベクトル DB の固定費と索引の費用を足せる
# - 「API 料金だけの比較」がなぜ RAG を実際より安く見せるかを説明できる
# - 元記事の表の数字を自分で計算し直し、ラベルと中身のずれを見つけられる
#
# **所要時間** 約 60 分　**前提** 00, 01

# %%
import ctxlab
from ctxlab.costs import compare, pricing, traffic
from ctxlab import corpus
from ctxlab.api import tokens

client = ctxlab.make_client()
ctxlab.show_cost("02_pricing", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. 価格表
#
# 単価は `data/pricing.json` にあり、日付と出典が付いています。キャッシュの倍率は「キャッシュを使わない入力単価」に対する倍率です。

# %%
compare.price_list()   # 表の下に出典と日付、注（▸）に価格の段の前提

# %% [markdown]
# ## 2. 1 回あたりの料金
#
# 1 回の料金は、API の `usage` の欄と同じ 4 つに分けて考えます。
#
# - `input_tokens`（キャッシュされない入力。キャッシュの最後の区切りより後ろ。区切りは 03 で扱う）× 入力単価
# - キャッシュ書き込み（`cache_creation_input_tokens`）× 入力単価 × 1.25（1 時間なら 2）。
#   5 分・1 時間はキャッシュの寿命（TTL, Time To Live）で、書き込んだ内容がどれだけ残るかです（選び方は 04）
# - キャッシュ読み出し（`cache_read_input_tokens`）× 入力単価 × 読み出しの倍率（モデルで違います。上の表の 0.1 倍・0.05 倍・0.025 倍）
# - `output_tokens` × 出力単価
#
# 題材の規程をまるごと渡す場合を、キャッシュなし・初回・2 回目以降で計算します。モデルは、このコースが計算に使う
# 既定のモデル（`pricing.DEFAULT_MODEL`）です。使い分けの記事が使った Opus 5 の後継にあたる、今日の Opus を選んでいます
# （記事と同じ立場のモデルで比べると、価格の改定だけの違いが見えるため）。記事の数字そのものは 4 節で、記事のモデルで再現します。
#
# 送るのは現行版の規程だけです（00 を参照）。

# %%
docs = corpus.load()
doc_tokens = tokens.count_documents([d.text for d in docs], client=client).tokens
QUESTION, ANSWER = 400, 700   # 質問と指示、回答（使い分けの記事の前提）

MODEL = pricing.get_model(pricing.DEFAULT_MODEL)
print(f"{MODEL.display_name}（価格表 {pricing.price_table_date()} 時点）・文書 {doc_tokens:,} tokens")
no_cache = pricing.call_cost(MODEL, input_tokens=doc_tokens + QUESTION, output_tokens=ANSWER)
first = pricing.call_cost(MODEL, input_tokens=QUESTION, cache_write_5m_tokens=doc_tokens, output_tokens=ANSWER)
cached = pricing.call_cost(MODEL, input_tokens=QUESTION, cache_read_tokens=doc_tokens, output_tokens=ANSWER)
from IPython.display import Markdown

Markdown("| 呼び出し | 入力 | 出力 | 合計 |\n|---|---:|---:|---:|\n"
         + "\n".join(f"| {name} | \\${c.input:.4f} | \\${c.output:.4f} | \\${c.total:.3f} |"
                     for name, c in [("キャッシュなし", no_cache), ("初回（書き込み・TTL 5 分）", first),
                                     ("2 回目以降（読み出し）", cached)])
         + f"\n\n出典: 価格表（{pricing.price_table_date()} 時点）の {MODEL.display_name} の単価で計算。"
           f"質問と指示 {QUESTION} トークン・回答 {ANSWER} トークン")

# %% [markdown]
# ## 3. 月額と、RAG 側の DB
#
# 月額 = 月の質問数 ×（ミスの割合 × ミス時の 1 回 + ヒットの割合 × ヒット時の 1 回）+ 固定費。
# RAG はチャンクが質問ごとに入れ替わるのでキャッシュがほとんど効きませんが、代わりにベクトル DB の月額がかかります。
# `ctxlab.costs.compare` が、この計算を方式ごとにまとめて比較表にします。
#
# 表の書き込みの行は、上の 2 節（TTL 5 分で書き込んだ額）と違い、TTL を自動で選んだ結果で値付けしています（04 の規則: その質問数とモデルで月額が安いほう）。
# どちらの TTL で書き込んだかは、行のラベルと表の下の「前提」に出ます。1 時間 TTL の書き込みは 5 分より割増が大きいので、額も違います。
#
# ヒット率（ヒットの割合）は、質問がどんな間隔で来るかで決まります。`compare` は、04 で作る合成トラフィック
# （朝夕に固まる社内の問い合わせ）を、標準誤差が 0.5 ポイント未満になる日数だけシミュレーションした平均を、質問数ごとに使います。使い分けの記事はどの質問数でも 80% と置いたので、
# その場合の額も注に出ます。

# %%
table = compare.compare(doc_tokens, len(docs), chars=corpus.total_chars(docs))
compare.table(table)

# %% [markdown]
# API の料金だけを見ると RAG が大きく安く見えます。DB の月額を足すと差が縮みます。グラフで並べます。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401

mo = table.monthly
labels = ["ロングコンテキスト\n（キャッシュなし）", "ロングコンテキスト\n（キャッシュ）", "メタデータで絞る", "RAG"]
api = [mo["long_context_no_cache"], mo["long_context"], mo["filter"], mo["rag_api"]]
db = [0, 0, 0, mo["rag_db"]]
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.bar(labels, api, label="API 料金")
ax.bar(labels, db, bottom=api, label="ベクトル DB", color="#f4b183")
for i, (a, b) in enumerate(zip(api, db)):
    ax.text(i, a + b, f"${a + b:,.0f}", ha="center", va="bottom", fontsize=9)
ax.set_ylabel("月額（ドル）")
ax.set_title(f"月 {table.profile.questions_per_month:,.0f} 問・ヒット率 {table.hit_rate:.0%}（合成トラフィックから）の月額")
ax.legend()
plt.tight_layout()

# %% [markdown]
# RAG にはもう 1 つ、索引を作る費用があります（チャンクに分けて埋め込みを計算し、DB に入れる）。コストの記事はこれを
# 「索引を作る一度きりの費用 E」と呼び、全文を通常単価で 1 回送る代金（aM）を 1 とする単位で 0.05 と置きました。
# E は呼び出しの回数に乗らないので、総額で見れば**切片**です。呼び出しが多ければ判断を変えません。
# 切片でなくなるのは、規程を更新するたびに差分ではなく全件を埋め込み直す構成です。更新の回数だけ E が積み上がります。

# %%
E = 0.05                                      # コストの記事の値（aM を 1 とした単位）
aM = doc_tokens * MODEL.input_per_token
print(f"aM（題材の規程を {MODEL.display_name} の通常単価で 1 回送る代金）= ${aM:.3f}、E = {E} aM = ${E * aM:.3f}")
for updates in (0, 4, 30, 300):
    print(f"月に {updates:>3} 回更新し、そのたびに全件を埋め込み直す: 索引の費用 月 ${updates * E * aM:7.2f}"
          f"（差分だけなら、変わった文書の分だけ）")

# %% [markdown]
# ## 4. 元記事の表を計算し直す
#
# 使い分けの記事の表は「ロングコンテキスト 1.251 ドル」「キャッシュ 0.116 ドル」「絞り込み 0.143 ドル」「RAG 0.052 ドル」、月額「206 ドル・58 ドル・31 ドル + 70 ドル」でした。
# 記事と同じ前提（197,000 トークン、50 ファイル、質問 400、回答 700、Opus 5、月 600 問、ヒット率 80% に固定）で計算し直すと、ラベルと中身のずれが見えます。

# %%
article = compare.compare(197_000, 50, compare.Profile(model=pricing.ARTICLE_MODEL, hit_rate=compare.ARTICLE_HIT_RATE,
                                                   ttl=compare.ARTICLE_TTL))   # 記事のモデル・ヒット率 80%・TTL 5 分
r = article.rows
print(f"「ロングコンテキスト」の行 ${r['lc_write'].cost:.3f} は、キャッシュ書き込み（1.25 倍）の値。キャッシュなしなら ${r['long_context'].cost:.3f}")
print(f"「キャッシュ」の行: 質問をキャッシュの区切りの後ろに置くと ${r['lc_cached'].cost:.3f}")
print(f"「絞り込み」の行 ${r['filter_write'].cost:.3f} も書き込み単価。読み出しなら ${r['filter_cached'].cost:.3f}")
print(f"「RAG」の行 ${r['rag'].cost:.3f} は通常単価（キャッシュなし）")
for note in article.notes[1:]:
    print("注:", note)
ours = compare.compare(197_000, 50, compare.Profile(model=pricing.ARTICLE_MODEL))
today = compare.compare(197_000, 50)
print(f"同じ文書・同じモデルで、TTL とヒット率を合成トラフィックから決めると（1 日 20 問で TTL {ours.ttl}・{ours.hit_rate:.0%}）"
      f"ロングコンテキストは月 ${ours.monthly['long_context']:,.0f}（記事の前提なら ${article.monthly['long_context']:,.0f}）")
print(f"今日の {pricing.get_model(today.profile.model).display_name} では同じ前提で月 ${today.monthly['long_context']:,.0f}"
      f"（RAG ${today.monthly['rag']:,.0f}）。記事の表は、記事の日付の価格での数字です")

# %% [markdown]
# 記事の絞り込みの月額 58 ドルがどのヒット率に当たるかは、月額をヒット率の式として逆に解けば分かります（演習 2）。
#
# ## 5. 詰め込みのコストは送ったトークンに比例する
#
# 長文コンテキストの記事は、毎回 20 万トークンを詰め込む設計と、指示と 6 チャンクで 3,000 トークンを渡す設計を、月 5 万回で比べました。

# %%
stuff, retrieve, calls = 200_000, 3_000, 50_000
print(f"詰め込み   {stuff * calls:>17,} tokens / 月")
print(f"検索して回答 {retrieve * calls:>15,} tokens / 月")
print(f"比 {stuff / retrieve:.1f} 倍（入力トークンだけで）")
opus = MODEL
print(f"{opus.display_name} の入力単価では月 ${stuff * calls * opus.input_per_token:,.0f} と ${retrieve * calls * opus.input_per_token:,.0f}")

# %% [markdown]
# ただし、この比較にはキャッシュが入っていません。同じ 20 万トークンを毎回送るなら、ヒットした回は入力単価に読み出しの倍率（1 節の表）を掛けた額で済みます。
# キャッシュが救うのは変わらない前置きの**料金**で、詰め込みすぎた文書の**正答率**ではありません（08 で扱います）。

# %%
def stuffed_month(hit):
    return pricing.monthly_cost(calls, cost_miss=stuff * opus.input_per_token * opus.cache_write_5m_multiplier,
                                cost_hit=stuff * opus.input_per_token * opus.cache_read_multiplier, hit_rate=hit)


retrieve_month = retrieve * calls * opus.input_per_token
hit_traffic = traffic.expected_hit_rate(calls / compare.DAYS_PER_MONTH)   # 1 日あたりに直した質問数のトラフィック
ratio = {}
for label, hit in [("合成トラフィックから", hit_traffic), ("使い分けの記事の 80%", compare.ARTICLE_HIT_RATE)]:
    ratio[label] = stuffed_month(hit) / retrieve_month
    print(f"ヒット率 {hit:.0%}（{label}）のキャッシュ込みの詰め込み: 月 ${stuffed_month(hit):,.0f}（入力のみ）"
          f" → 検索して回答の {ratio[label]:.1f} 倍")
print(f"キャッシュを入れないと {stuff / retrieve:.1f} 倍。キャッシュを入れると {min(ratio.values()):.1f}〜{max(ratio.values()):.1f} 倍に縮む")


# %% [markdown] nbgrader={"grade": false, "grade_id": "hit-range-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: ヒット率が幅でしか分からないときの判断
#
# 自社のログがまだないうちは、ヒット率は「このくらいからこのくらい」という幅でしか言えません。
# 3 節の値は合成トラフィックのシミュレーションで、実際の質問の間隔しだいで動きますし、
# 記事の固定の 80% も前提の置き方の 1 つにすぎません（演習 2 で逆算します）。
# ヒット率が `low`〜`high` のどこであっても月額で安い方式が同じかを判断する関数
# `cheaper_over_hit_range(doc_tokens, questions_per_month, db_monthly, low, high, model=pricing.DEFAULT_MODEL)` を書いてください。
#
# - 比べるのは、ロングコンテキスト（文書全体を TTL 5 分でキャッシュ）と RAG（API 料金 + ベクトル DB の月額 `db_monthly`）の月額です。
#   ほかの前提（質問と指示・回答・チャンクのトークン数）は `compare.Profile` の既定のまま、単価は引数 `model` のもの
# - 幅の中のどのヒット率でもロングコンテキストが RAG 以下なら `"long_context"`、
#   どのヒット率でも RAG のほうが安いなら `"rag"`、幅の途中で安いほうが入れ替わるなら `"depends"` を返す
# - `0 <= low <= high <= 1` でないときは `ValueError`
#
# 月額を出す道具は使ってかまいません:
# `compare.compare(doc_tokens, 50, compare.Profile(model=..., questions_per_month=..., hit_rate=..., ttl="5m", db_monthly=...)).monthly`
# の `"long_context"` と `"rag"`（ファイル数の引数はこの 2 つの月額に響きません）、
# または `pricing.call_cost` と `pricing.monthly_cost`。採点されるのは、どのヒット率で何を比べて、どう決めるかです。
#
# メタデータで絞る方式は、送る文書が全体の一部なので料金ではいつもロングコンテキストより安く、
# 代わりに正しい文書を外す危険を負います（06）。ここでは、料金で判断が分かれるロングコンテキストと RAG を比べます。

# %% nbgrader={"grade": false, "grade_id": "cheaper_over_hit_range", "locked": false, "schema_version": 3, "solution": true, "task": false}
def cheaper_over_hit_range(doc_tokens, questions_per_month, db_monthly, low, high, model=pricing.DEFAULT_MODEL):
    ### BEGIN SOLUTION
    if not 0 <= low <= high <= 1:
        raise ValueError(f"need 0 <= low <= high <= 1, got low={low!r}, high={high!r}")
    said = set()
    for hit in (low, high):   # each month is linear in the hit rate (RAG's is flat): the two ends decide
        p = compare.Profile(model=model, questions_per_month=questions_per_month, hit_rate=hit, ttl="5m",
                            db_monthly=db_monthly)
        month = compare.compare(doc_tokens, 50, p).monthly
        said.add("long_context" if month["long_context"] <= month["rag"] else "rag")
    return said.pop() if len(said) == 1 else "depends"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 3 節の式のとおり、キャッシュを使う方式の月額はヒット率の 1 次式で、RAG の月額はヒット率によりません。
# グラフにすると 2 本の直線です。2 本の直線の上下は、幅の中で何回まで入れ替わりうるでしょうか。
# そこから、どのヒット率で比べれば幅の全体について言えるかが決まります。
# 幅の中の 1 点（真ん中や記事の 80%）で比べただけでは、その点の答えにしかなりません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "cheaper_over_hit_range-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
got = cheaper_over_hit_range(doc_tokens, 600, 70, 0.9, 1.0)
assert type(got) is str, f"文字列（'long_context'・'rag'・'depends' のどれか）を返してください: {got!r}"
assert got == "long_context", ("ヒット率 90〜100% なら、どこでもロングコンテキスト（キャッシュ込み・TTL 5 分）が RAG（API 料金 + DB の月額）"
                               "より安いはずです（引数の幅のヒット率で比べていますか。RAG に db_monthly を足していますか。"
                               f"ロングコンテキストはキャッシュ込みの月額ですか）: {got!r}")
got = cheaper_over_hit_range(doc_tokens, 600, 70, 0.5, 0.95)
print(f"{MODEL.display_name}・月 600 問・DB $70、ヒット率 50〜95%: {got}")
assert got == "depends", ("ヒット率 50% では RAG、95% ではロングコンテキストが安く、幅の途中で入れ替わるので 'depends' のはずです"
                          f"（幅の中の 1 点、たとえば真ん中や片方の端だけで比べていませんか）: {got!r}")
got = cheaper_over_hit_range(doc_tokens, 600, 70, 0.2, 0.6, model="claude-haiku-5-5")
assert got == "long_context", ("Haiku 5.5 ならヒット率 20〜60% のどこでもロングコンテキストが安いはずです"
                               f"（引数 model の単価で計算していますか）: {got!r}")
got = cheaper_over_hit_range(doc_tokens, 600, 200, 0.7, 0.85)
assert got == "long_context", ("DB が月 $200 なら、ヒット率 70〜85% のどこでもロングコンテキストが安いはずです"
                               f"（RAG の側に足すのは既定の $70 ではなく、引数 db_monthly です）: {got!r}")
for _bad in [(0.6, 0.5), (-0.1, 0.5), (0.2, 1.1)]:
    try:
        cheaper_over_hit_range(doc_tokens, 600, 70, *_bad)
    except ValueError:
        continue
    raise AssertionError(f"low, high = {_bad} では ValueError を投げてください（0 <= low <= high <= 1）")
### BEGIN HIDDEN TESTS
def _month(d, n, db, hit, model):
    return compare.compare(d, 50, compare.Profile(model=model, questions_per_month=n, hit_rate=hit, ttl="5m",
                                                  db_monthly=db)).monthly


def _truth(d, n, db, lo, hi, model):
    # sampled across the range, ends included (not assuming the two ends decide)
    said = set()
    for i in range(21):
        m = _month(d, n, db, lo + (hi - lo) * i / 20, model)
        said.add("long_context" if m["long_context"] <= m["rag"] else "rag")
    return said.pop() if len(said) == 1 else "depends"


def _clear(d, n, db, lo, hi, model):
    # no near-tie at an end, where a learner's own arithmetic may differ from the library's in the last digit
    return all(abs(_month(d, n, db, h, model)["long_context"] - _month(d, n, db, h, model)["rag"]) > 1e-6
               for h in (lo, hi))


_models = list(pricing.models())
_scenarios = [
    (doc_tokens, 600, 70, 0.5, 0.95), (doc_tokens, 600, 70, 0.9, 1.0), (doc_tokens, 300, 70, 0.5, 0.6),
    (doc_tokens, 600, 200, 0.7, 0.85), (doc_tokens, 600, 0, 0.0, 1.0), (doc_tokens, 1200, 70, 0.75, 0.85),
    (197_000, 600, 70, 0.3, 0.6), (197_000, 3000, 70, 0.85, 0.99), (50_000, 150, 120, 0.1, 0.4),
    (400_000, 900, 70, 0.6, 0.9), (180_000, 20_000, 500, 0.9, 1.0), (120_000, 450, 40, 0.55, 0.55),
    (doc_tokens, 600, 70, 1.0, 1.0), (doc_tokens, 600, 70, 0.0, 0.0), (30_000, 60, 5, 0.0, 0.3),
]
_seen = set()
for _i, _s in enumerate(_scenarios):
    for _model in (_models[_i % len(_models)], _models[(_i + 3) % len(_models)], _models[(_i + 5) % len(_models)]):
        if _s[0] + 400 > pricing.get_model(_model).context_window or not _clear(*_s, _model):
            continue   # over the model's window (compare refuses it), or a near-tie at an end
        _got = cheaper_over_hit_range(*_s, model=_model)
        _want = _truth(*_s, _model)
        assert type(_got) is str and _got == _want, (_s, _model, _got, _want)
        _seen.add(_want)
assert _seen == {"long_context", "rag", "depends"}, _seen
# the default model is today's Opus
_got = cheaper_over_hit_range(doc_tokens, 300, 70, 0.5, 0.6)
assert type(_got) is str and _got == _truth(doc_tokens, 300, 70, 0.5, 0.6, pricing.DEFAULT_MODEL) == "rag", _got
# no questions: both months are the fixed cost; with no DB they tie, and a tie is long context's
assert cheaper_over_hit_range(doc_tokens, 0, 0, 0.2, 0.4) == "long_context", \
    "質問 0・DB なしなら 2 つの月額は同額（$0）で、同額は RAG 以下なので 'long_context' のはずです"
assert cheaper_over_hit_range(doc_tokens, 0, 70, 0.2, 0.4) == "long_context", "質問 0 なら RAG には DB の月額だけが残ります"
for _bad in [(0.6, 0.5), (-0.1, 0.5), (0.2, 1.1), (-1.0, -0.5), (1.0, 0.0)]:
    try:
        cheaper_over_hit_range(doc_tokens, 600, 70, *_bad)
        raise AssertionError(f"ValueError expected for low, high = {_bad}")
    except ValueError:
        pass
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "implied-hit-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 月額から逆算するヒット率
#
# 月額 `target` になるヒット率を返す関数 `implied_hit_rate(target, calls, cost_miss, cost_hit)` を書いてください。
# 月額はヒット率について 1 次式なので、式を解けば出ます。0〜1 の範囲に解がないときは `ValueError` を投げてください。

# %% nbgrader={"grade": false, "grade_id": "implied_hit_rate", "locked": false, "schema_version": 3, "solution": true, "task": false}
def implied_hit_rate(target, calls, cost_miss, cost_hit):
    ### BEGIN SOLUTION
    if calls <= 0 or cost_miss == cost_hit:
        raise ValueError("the monthly cost does not depend on the hit rate")
    h = (calls * cost_miss - target) / (calls * (cost_miss - cost_hit))
    if not 0 <= h <= 1:
        raise ValueError(f"no hit rate between 0 and 1 gives {target}")
    return h
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "implied_hit_rate-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
h = implied_hit_rate(58, 600, article.rows["filter_write"].cost, article.rows["filter_cached"].cost)
assert type(h) is float, f"ヒット率を小数（float）で返してください: {h!r}"
print(f"使い分けの記事の絞り込み $58 はヒット率 {h:.0%} に当たる")
assert 0.35 < h < 0.45, f"$58 は 80% ではなく約 40% のヒット率に当たります: {h:.3f}"
try:
    h0 = implied_hit_rate(600, 600, 1.0, 0.1)
except ValueError as e:
    h0 = f"ValueError: {e}"
assert type(h0) is float and abs(h0) < 1e-9, \
    f"月額が全部ミスの額（600 回 × $1）ちょうどなら、ヒット率 0 のはずです（0 と 1 も範囲に入ります）: {h0!r}"
for bad, why in [((10, 600, 1.0, 0.1), "全部ヒットしても $60 かかるので、$10 になるヒット率はありません"),
                 ((100, 600, 0.5, 0.5), "ミスとヒットの料金が同じなら、月額はヒット率で変わりません")]:
    try:
        got = implied_hit_rate(*bad)
    except ValueError:
        continue
    except Exception as e:
        raise AssertionError(f"implied_hit_rate{bad}: {why}。ValueError を投げるはずです: {type(e).__name__}: {e}") from e
    raise AssertionError(f"implied_hit_rate{bad}: {why}。ValueError を投げるはずです: {got!r}")
### BEGIN HIDDEN TESTS
assert type(implied_hit_rate(600 * 0.55, 600, 1.0, 0.1)) is float
assert abs(implied_hit_rate(600 * 0.55, 600, 1.0, 0.1) - 0.5) < 1e-9
assert abs(implied_hit_rate(600, 600, 1.0, 0.1)) < 1e-9
for bad in [(10, 600, 1.0, 0.1), (1000, 600, 1.0, 0.1)]:
    try:
        implied_hit_rate(*bad)
        raise AssertionError(f"ValueError expected for {bad}")
    except ValueError:
        pass
try:
    implied_hit_rate(100, 600, 0.5, 0.5)
    raise AssertionError("ValueError expected when miss and hit cost the same")
except ValueError:
    pass
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "api-only-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 「API 料金だけで比べたら RAG が 6 分の 1 だったので RAG にします」という提案に、料金の観点から足りないものを 2 つ挙げ、
# それぞれ何を足せば比べられるかを書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "api-only", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 1 つはベクトル DB の月額などの固定費（と、作って再インデックスを回し続ける運用の手間）で、RAG 側に足す必要がある。
# もう 1 つはロングコンテキスト側のプロンプトキャッシュで、ヒット率を質問の間隔から見積もって読み出しの倍率（今日の Opus 5.5 なら 0.05 倍、記事の日付のモデルなら 0.1 倍）を入れないと、5 節のとおり詰め込みの額を数倍に見積もる。
# 両方を入れた月額の差を、RAG を作って運用する費用と比べて初めて判断できる。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 足りないものを 2 つ（RAG 側のベクトル DB の月額などの固定費と運用、ロングコンテキスト側のキャッシュのヒット率と読み出しの倍率。倍率はモデルの価格表の値で、今日の Opus 5.5 なら 0.05 倍、記事の日付のモデルなら 0.1 倍のどちらで書いていてもよい）挙げ、それぞれ何を測って月額に足せば比べられるかを書いている。
# - 1 点（半分）: 1 つだけ正しく挙げている、または 2 つ挙げたが、何を足して比べるかが書かれていない。
# - 0 点: 料金以外（正答率など）だけを挙げている、または「6 分の 1」をそのまま受け入れている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("api-only")

# %% [markdown]
# ## まとめ
#
# - 1 回の料金は `usage` の 4 つの欄（通常の入力・書き込み・読み出し・出力）に単価と倍率を掛けて足す。
# - 月額は質問数 × ヒット率で重み付けした 1 回の料金 + 固定費。RAG には DB の固定費が乗り、索引の費用は総額の切片（全件の埋め込み直しを繰り返すと切片でなくなる）。
# - ヒット率は固定の 80% ではなく、質問数と間隔から出す（このコースでは 04 の合成トラフィック）。
#   幅でしか分からないうちは、月額がヒット率の 1 次式なので幅の両端で比べる。途中で安いほうが入れ替わるなら、判断はヒット率しだい（ログで確かめる）。
# - 元記事の表はラベルと中身が一部ずれていた。数字は自分の前提で計算し直す。
# - 次の節（03）では、キャッシュのヒットとミスを sandbox でシミュレーションし、`usage` の読み方を身につけます。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("02_pricing"))
check
