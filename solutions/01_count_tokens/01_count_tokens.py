# %% [markdown]
# # 01 トークンを数える: 推定ではなく実物を
#
# 前提「合計トークン ÷ コンテキストウィンドウ ≤ 50%」の分子を、どう数えるかを扱います。
#
# **このレッスンで身につくこと**
#
# - `client.messages.count_tokens` で文書一式のトークン数を数えられる
# - 文字数からの推定が、なぜ判断の材料として足りないかを数字で説明できる
# - モデルごとのウィンドウ使用率を出し、文書が増えたときにどのモデルで前提を保てるかを先回りして決められる
#
# **所要時間** 約 45 分　**前提** 00_start_here

# %%
import ctxlab
from ctxlab import corpus
from ctxlab.costs import compare, pricing
from ctxlab.api import tokens

client = ctxlab.make_client()
ctxlab.show_cost("01_count_tokens", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. count_tokens で数える
#
# `count_tokens` は `messages.create` と同じ形のリクエストを受け取り、入力トークン数だけを返します。
# 無料ですがレート制限があり、値は推定値です（それでも手元の文字数よりはずっと正確です）。
# オフラインの sandbox は、推定方法を明示したうえで同じ形の応答を返します。
#
# 数えるのは、モデルに実際に渡す現行版の規程です（旧版は渡さないので数えません。00 を参照）。

# %%
docs = corpus.load()
all_text = "\n\n".join(d.text for d in docs)

n = client.messages.count_tokens(
    model="claude-opus-5",
    messages=[{"role": "user", "content": all_text}],
).input_tokens
print(f"{len(docs)} ファイル / {len(all_text):,} 字 → {n:,} tokens")

# %% [markdown]
# `ctxlab.api.tokens` は、規程を 1 ファイル 1 ブロックの文書として `count_tokens` に渡す関数にまとめ、**どの方法で数えたか**を結果に付けます。
# 実 API なら「API の count_tokens」、オフラインなら「sandbox の推定」と表示されます。
# 上のセルは全ファイルを 1 つの文字列につなげて送ったので、ブロックの区切りの分だけ数が少し違います（差は次のセルが表示します）。
# このコースの以降の数字は、モデルに実際に送る形に近い、ファイルごとのブロックで数えた値です。

# %%
count = tokens.count_documents([d.text for d in docs], client=client)
print(count)
print("推定か:", count.is_estimate)
print(f"1 つの文字列で数えた {n:,} tokens との差: {count.tokens - n:+,} tokens（ファイルごとのブロックに分けた分）")

# %% [markdown]
# ## 2. 文字数からの推定は、なぜ足りないか
#
# 使い分けの記事は「日本語は概ね 1 文字 ≈ 1 トークン」という目安を使いました。目安としては便利ですが、比率は文書の中身で変わります。
# 数字や英字の多い別表、全角記号の多い条文では、1 文字あたりのトークン数が違います。実際のトークナイザーでは、日本語は
# 1 文字あたり 1〜1.5 トークン程度とよく言われます（公式の値ではなく、現場で使われる目安です。このコースでは演習の幅に使います）。
# トークナイザーはモデルの世代で違い、Anthropic のドキュメントは新しいトークナイザー（Opus 4.7 以降、Sonnet 5、Haiku 5.5 など）が
# 同じ文章を約 30% 多く数えると書いています（内容によって変わる、という断り付きの目安です）。日本語については、第三者の独立の測定で
# ほぼ同じ（約 1.0 倍）だったという報告があります（公式の値ではありません。価格表の出典欄に書いてあります）。
# どちらにしても、数えるのは実際に使うモデルの `count_tokens` です。
#
# ファイルごとに「1 文字あたりのトークン数」を見てみます（オフラインでは推定器の値です）。

# %%
ratios = []
for d in docs:
    t = tokens.count_text(d.text).tokens
    ratios.append((t / d.chars, d.file))
ratios.sort()
print("比率が低いファイル:", [f"{f} {r:.3f}" for r, f in ratios[:3]])
print("比率が高いファイル:", [f"{f} {r:.3f}" for r, f in ratios[-3:]])
lo_r, hi_r = ratios[0][0], ratios[-1][0]
print(f"推定器の比率は {lo_r:.2f}〜{hi_r:.2f}: 現場の目安 1.0〜1.5 の"
      + ("幅より下" if hi_r < 1.0 else "幅の中" if lo_r >= 1.0 and hi_r <= 1.5 else "幅をまたぐ")
      + "（推定器は半角の英数字を 4 文字 1 トークン、空白と改行を 0 と数えるため。目安とも本物の数とも別のものです）")

# %% [markdown]
# 推定器の内側でも比率は揺れますが、もっと大きいのは**推定器と本物のトークナイザーの差**です。
# 1 文字 1.0 トークンと 1.5 トークンの幅で、モデルごとの使用率がどこに来るかを描きます。
# 幅が 50% の線をまたぐなら、推定では判断できません。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401  (日本語フォント)

chars = corpus.total_chars(docs)
models = list(pricing.models().values())
low = [chars * 1.0 / m.context_window for m in models]
high = [chars * 1.5 / m.context_window for m in models]

fig, ax = plt.subplots(figsize=(6.4, 3.2))
names = [m.display_name for m in models]
ax.barh(names, high, color="#f4b183", label="1 文字 = 1.5 トークン")
ax.barh(names, low, color="#5b9bd5", label="1 文字 = 1.0 トークン")
ax.axvline(0.5, color="red", ls="--", label="前提の上限 50%")
ax.set_xlabel("コンテキストウィンドウの使用率")
ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
ax.set_title(f"題材の規程 {chars:,} 字の使用率（比率 1.0〜1.5 の幅）")
ax.legend(fontsize=8, loc="lower right")
plt.tight_layout()

# %% [markdown]
# ## 3. モデルごとの使用率
#
# 数えた値（`count.tokens`）で、価格表にある各モデルの使用率を出します。ここでは 1 つの数をすべてのモデルに当てはめていますが、
# 本当はトークナイザーがモデルの世代で違います（旧世代の Haiku 4.5 は古いトークナイザー）。この数は新しいトークナイザーの
# モデルで数えたものなので、下の表のトークナイザーの列に「古い」と出るモデルは、そのモデルの `count_tokens` で数え直してから判断します。

# %%
compare.window_table(count.tokens, models, tokenizer=True)

# %% [markdown]
# ## 4. 文書が 10 倍になったら
#
# 規程は増えます。事業所ごとの版が加わった「10 倍の規程集」を `corpus.scaled(10)` で作り、同じ計算をします。
# 決まった手順で生成するので、何度実行しても同じ文書になります。

# %%
big = corpus.scaled(10)
big_count = tokens.count_documents([text for _, text in big], client=client)
print(f"{len(big)} ファイル → {big_count}")
compare.window_table(big_count.tokens, models)   # 満たさないモデルでは、06 の絞り込みか RAG を検討する


# %% [markdown] nbgrader={"grade": false, "grade_id": "verdict-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（2 点）: 推定の幅で判定する
#
# 文字数 `chars` とウィンドウ `window` から、1 文字あたり `low`〜`high` トークンの幅で使用率を出し、次のどれかを返す関数
# `usage_verdict(chars, window, low=1.0, high=1.5)` を書いてください。
#
# - `"fits"`: 幅の上端（`high`）で数えても使用率が 50% 以下
# - `"does_not_fit"`: 幅の下端（`low`）で数えても 50% を超える
# - `"count_it"`: 幅が 50% をまたぐ（推定では決められないので count_tokens で数える）
#
# `chars` や `window` が 0 以下なら `ValueError` を投げてください。

# %% nbgrader={"grade": false, "grade_id": "usage_verdict", "locked": false, "schema_version": 3, "solution": true, "task": false}
def usage_verdict(chars, window, low=1.0, high=1.5):
    ### BEGIN SOLUTION
    if chars <= 0 or window <= 0:
        raise ValueError("chars and window must be positive")
    if chars * high / window <= 0.5:
        return "fits"
    if chars * low / window > 0.5:
        return "does_not_fit"
    return "count_it"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 使用率は「文字数 × 比率 ÷ ウィンドウ」です。上端で収まれば確実に収まり、下端ではみ出せば確実にはみ出します。
# どちらでもないときだけ、実物を数える必要があります。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "usage_verdict-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert usage_verdict(197_000, 1_000_000) == "fits", "1.5 倍しても 30% 以下なので fits です"
assert usage_verdict(197_000, 200_000) == "does_not_fit", "1.0 倍でも 98.5% なので does_not_fit です"
assert usage_verdict(400_000, 1_000_000) == "count_it", "40%〜60% は 50% をまたぐので count_it です"
assert usage_verdict(100_000, 300_000) == "fits", "上端でちょうど 50% は「50% 以下」なので fits です"
assert usage_verdict(100_000, 200_000) == "count_it", "下端でちょうど 50% は超えていないので、does_not_fit ではありません"
assert usage_verdict(100_000, 1_000_000, low=1.0, high=6.0) == "count_it", \
    "幅は引数 low と high で決まります（1.0〜6.0 倍なら 10%〜60% で、50% をまたぎます）"
for _bad in [(0, 1_000_000), (10, -1)]:
    try:
        usage_verdict(*_bad)
    except ValueError:
        continue
    raise AssertionError(f"chars, window = {_bad} では ValueError を投げてください（どちらも 0 より大きい値だけを受け付ける）")
### BEGIN HIDDEN TESTS
for _args in [(197_000, 1_000_000), (197_000, 200_000), (400_000, 1_000_000)]:
    assert type(usage_verdict(*_args)) is str            # a string, not an object that equals anything
assert usage_verdict(100_000, 300_000) == "fits"          # exactly 50% at the high end
assert usage_verdict(100_000, 200_000) == "count_it"      # exactly 50% at the low end is not over
assert usage_verdict(100_001, 200_000) == "does_not_fit"
assert usage_verdict(100_000, 1_000_000, low=1.0, high=6.0) == "count_it"
try:
    usage_verdict(0, 1_000_000)
    raise AssertionError("ValueError expected for chars = 0")
except ValueError:
    pass
try:
    usage_verdict(10, -1)
    raise AssertionError("ValueError expected for a negative window")
except ValueError:
    pass
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "largest-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 増えていく文書に、どのモデルを選ぶか
#
# 規程は毎年 `yearly_growth`（0.3 なら 30%）ずつ増えるとします。今 `doc_tokens` トークンの文書が、これから `years` 年のあいだ
# ずっと前提（ウィンドウの 50% 以下）を満たす候補のうち、入力単価がいちばん安いモデルの id を返す関数
# `pick_model(doc_tokens, yearly_growth, years, candidates)` を書いてください。どの候補でも満たせないなら `None` を返します。
#
# - `candidates` は価格表の行（`pricing.ModelPrice`）の並びです。今日のラインアップなら `list(pricing.current_models().values())`、
#   品質で Opus と Sonnet に絞ったなら、その 2 つだけを渡します。ウィンドウ（`context_window`）と単価は行にあります
# - 単価は、**最後の年の文書を 1 回送るときの入力単価**で比べます。`m.rates(トークン数)[0]`（1 トークンあたりのドル）で取れます。
#   Haiku 5.5 のようにプロンプトの長さで単価が変わるモデル（プロンプトが料金の段を超えると高い単価）でも、その長さの単価が返ります
#   （どのトークンを数えるかは価格表が置いた前提で、公式には確かめられていません）。`input_usd_per_mtok` は最も低い段階の単価です
# - `doc_tokens` が 0 以下、`yearly_growth` か `years` が負なら `ValueError`

# %% nbgrader={"grade": false, "grade_id": "max_growth", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pick_model(doc_tokens, yearly_growth, years, candidates):
    ### BEGIN SOLUTION
    if doc_tokens <= 0 or yearly_growth < 0 or years < 0:
        raise ValueError("doc_tokens must be > 0, yearly_growth and years >= 0")
    final = doc_tokens * (1 + yearly_growth) ** years     # the documents only grow: the last year decides
    fits = [m for m in candidates if final <= 0.5 * m.context_window]
    if not fits:
        return None
    return min(fits, key=lambda m: m.rates(final)[0]).id   # the price at that length (a tier may raise it)
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 「ずっと満たす」は、どの年がいちばん厳しいかを考えると 1 つの比較になります。候補を絞ってから、安いものを選びます。
# 「安い」は、価格表の見出しの単価ではなく、実際に送る長さでの単価です。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "max_growth-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
import dataclasses
TODAY = list(pricing.current_models().values())
LEGACY = list(pricing.article_models().values())
_pair = [pricing.get_model("claude-haiku-4-5"), pricing.get_model("claude-sonnet-5-5")]
got = pick_model(100_000, 0.0, 0, _pair)
assert got is None or type(got) is str, f"モデルの id（文字列）か None を返してください: {got!r}"
assert got == "claude-haiku-4-5", f"10 万トークンは Haiku 4.5 の 20 万の 50% ちょうどで、2 つのうち単価が安いほうです: {got!r}"
assert pick_model(100_000, 0.1, 1, _pair) == "claude-sonnet-5-5", "1 年後の 11 万トークンは Haiku 4.5 の 50% を超えます"
assert pick_model(300_000, 0.0, 0, [pricing.get_model("claude-opus-5-5"), pricing.get_model("claude-sonnet-5-5")]) == \
    "claude-sonnet-5-5", "渡された候補（Opus 5.5 と Sonnet 5.5）の中から選んでください。ウィンドウが同じなら単価の安い Sonnet 5.5 です"
_mid = dataclasses.replace(pricing.get_model("claude-sonnet-5-5"), id="mid-price", display_name="仮の中価格モデル",
                           input_usd_per_mtok=0.3)
_tiered = [pricing.get_model("claude-haiku-5-5"), _mid]
assert pick_model(90_000, 0.0, 0, _tiered) == "claude-haiku-5-5", "9 万トークンなら Haiku 5.5 の低い段階の単価がいちばん安いはずです"
assert pick_model(90_000, 0.2, 1, _tiered) == "mid-price", (
    "1 年後の 10.8 万トークンは Haiku 5.5 の高い段階（10 万トークン超）の単価になり、仮の $0.3 のモデルのほうが安いはずです"
    "（m.rates(トークン数) で、その長さの単価を比べていますか）")
for _bad in [(0, 0.3, 1), (100_000, -0.1, 1), (100_000, 0.3, -1)]:
    try:
        pick_model(*_bad, TODAY)
    except ValueError:
        continue
    raise AssertionError(f"{_bad} では ValueError を投げてください（doc_tokens は 0 より大きく、増加率と年数は 0 以上）")
for years in (0, 3, 5):
    print(f"題材の規程（{count.tokens:,} tokens）が年 30% 増えて {years} 年: 今日のモデルなら {pick_model(count.tokens, 0.3, years, TODAY)}"
          f"・記事の 3 モデルなら {pick_model(count.tokens, 0.3, years, LEGACY)}")
### BEGIN HIDDEN TESTS
for _args, _cands, _want in [((count.tokens, 0.3, 4), LEGACY, "claude-sonnet-5"), ((count.tokens, 0.3, 5), LEGACY, None),
                             ((600_000, 0.0, 0), TODAY, None), ((500_000, 0.0, 0), TODAY, "claude-haiku-5-5"),
                             ((500_000, 0.0, 10), LEGACY, "claude-sonnet-5"), ((50_000, 1.0, 1), LEGACY, "claude-haiku-4-5"),
                             ((50_000, 1.0, 2), LEGACY, "claude-sonnet-5"),
                             ((100_000, 0.0, 0), _tiered, "claude-haiku-5-5"),       # exactly the tier: the lower rate
                             ((100_001, 0.0, 0), _tiered, "mid-price"),
                             ((120_000, 0.0, 0), [pricing.get_model("claude-haiku-5-5"), pricing.get_model("claude-haiku-4-5")],
                              "claude-haiku-5-5"),                                 # $0.5 over the tier still beats $1
                             ((10_000, 0.0, 0), [], None)]:
    _got = pick_model(*_args, _cands)
    assert (_got is None and _want is None) or (type(_got) is str and _got == _want), (_args, _got, _want)
# a cheaper big model the function has never heard of: it reads the rows, not the names it knows
_big = dataclasses.replace(pricing.get_model("claude-haiku-4-5"), id="cheap-big", input_usd_per_mtok=0.5,
                           context_window=2_000_000)
assert pick_model(900_000, 0.0, 0, LEGACY + [_big]) == "cheap-big"
for _bad in [(0, 0.1, 1), (1_000, -0.1, 1), (1_000, 0.1, -1)]:
    try:
        pick_model(*_bad, TODAY)
        raise AssertionError(f"ValueError expected for {_bad}")
    except ValueError:
        pass
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "estimate-risk-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・1 点）
#
# 「文字数 × 1 で計算したら使用率 45% だったので、ロングコンテキストで進めます」という報告を受けました。
# あなたならこの報告に何を確かめ、どう返しますか。2〜3 文で書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "estimate-risk", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 45% は推定で、本物のトークナイザーでは 1 文字 1〜1.5 トークンなので 45〜68% の幅があり、50% をまたぐ。
# count_tokens で実物を数えてから判断するよう返す。文書が増える見込みがあるなら、何年先まで前提を満たすかも合わせて出してもらう。
#
# ### BEGIN RUBRIC
# - 1 点（満点）: 45% は文字数からの推定で、1 文字 1〜1.5 トークンの幅（45〜68%）が 50% をまたぐので、count_tokens で実物を数えてから判断するよう返している。
# - 0.5 点（半分）: 推定であることは指摘しているが、幅が 50% をまたぐことと、数え直す方法（count_tokens）のどちらかがない。
# - 0 点: 45% < 50% なので問題ないと返している、または理由なしに RAG を勧めている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("estimate-risk")

# %% [markdown]
# ## まとめ
#
# - 分子は `count_tokens` で実物を数える。オフラインの値は推定で、結果にそう書いてある。
# - 文字数からの推定は 1.0〜1.5 倍の幅を持つ。幅が 50% をまたぐなら、推定では決められない。
# - 文書は増える。増え方を置いて、何年先まで前提を満たすモデルがあるかを先に出しておくと、RAG に移る時期が読める。
# - 次の節（02）では、数えたトークンを料金に換算します。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("01_count_tokens"))
check
