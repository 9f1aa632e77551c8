# %% [markdown]
# # 00 まず読む: RAG を組むかどうかは、最後に決める
#
# 社内規程をもとに LLM に答えさせたいとき、多くの現場は最初に RAG の構成図を描きます。
# このコースでは逆の順で考えます。**まずロングコンテキストで足りるかを数字で確かめ、数字が求めたときだけ移る**。
#
# **この節で身につくこと**
#
# - 前提「文書の合計トークン ÷ コンテキストウィンドウ ≤ 50%」を実物の文書で確かめられる
# - 料金・待ち時間・正答率・更新頻度の 4 つの数字と、それぞれの閾値を説明できる
# - ロングコンテキスト・メタデータで絞る・RAG の 3 つが「誰が文書を選ぶか」だけで違うことを説明できる
# - 4 つの数字から方式を決める関数を書ける
#
# **所要時間** 約 30 分　**前提知識** Python の基本、LLM の API を 1 回呼んだことがある程度
#
# **出典** このコースの事実と数字は、次の記事から取り、計算し直して使います（レッスンでは括弧内の短い名前で呼びます）。
#
# - 「RAG とロングコンテキストの使い分け」DBC Tech Academy（**使い分けの記事**）: 50% の前提、4 つの数字、比較表と月額の試算
# - 「エージェントに何を覚えさせるか：長いコンテキスト・RAG・Prompt Caching をコストで選ぶ」（**コストの記事**）: 使い回し回数 k と引く割合 ρ の式
# - Ercan Ermiş による長文コンテキストの記事、ercanermis.com（**長文コンテキストの記事**）: 位置による劣化と長さによる劣化、送る量の決め方
# - 「Introducing Contextual Retrieval」Anthropic Engineering Blog（**Contextual Retrieval の記事**）: 文脈つきチャンクと recall@20

# %%
import ctxlab
from ctxlab.costs import compare, pricing
from ctxlab import corpus
from ctxlab.api import tokens

client = ctxlab.make_client()
print(ctxlab.mode_line(client))
ctxlab.show_cost("00_start_here", client)   # what this lesson costs on the real API

# %% [markdown]
# 最初のセルは、どのレッスンでも同じです。`ANTHROPIC_API_KEY` が設定されていなければ、オフラインの sandbox が
# 本物の `anthropic` SDK の向こう側で API の代わりに答えます。ノートブックのコードは実 API に向けたときと同じです。
#
# ## 1. 題材: 株式会社みなと計測の社内規程
#
# このコースでは、架空の会社「株式会社みなと計測」の社内規程を題材にします。就業規則から情報セキュリティ規程まで、
# 部署ごとの規程が 1 ファイル 1 版で入っています。まず量を見ます。

# %%
docs = corpus.load()                       # 現行版だけ
all_versions = corpus.load(current_only=False)
print(f"{corpus.company()}: 現行 {len(docs)} ファイル（旧版を含めると {len(all_versions)} ファイル）")
print(f"合計 {corpus.total_chars(all_versions):,} 字")
for d in docs[:5]:
    print(f"  {d.file:28s} {d.title}  [{corpus.DEPARTMENTS[d.dept]}] {d.effective_date} 施行")

# %% [markdown]
# ## 2. 前提: 合計トークンがウィンドウの半分に収まるか
#
# ロングコンテキストを選べるかどうかは、次の 1 行で決まります。
#
# > 前提: 文書の合計トークン ÷ コンテキストウィンドウ ≤ 50%
#
# 分子は推定ではなく実物を数えます（数え方は 01 で詳しく扱います）。ここでは `client.messages.count_tokens` で数えます。
# オフラインでは sandbox が推定値を返し、推定であることを表示します。

# %%
count = tokens.count_documents([d.text for d in all_versions], client=client)
print(count)
chars = corpus.total_chars(all_versions)
ascii_chars = sum(ch.isascii() for d in all_versions for ch in d.text)
print(f"  {chars:,} 字 → {count.tokens:,} トークン。1 文字 1 トークンにならないのは、半角の英数字・記号・空白・改行"
      f"（{ascii_chars:,} 字）を、推定では単語ごとに 4 文字で 1 トークン（空白と改行は 0）と数えるから。"
      f"実 API のトークナイザーはまた違う数を返します（01 で扱います）")
for m in pricing.models().values():
    usage = tokens.window_usage(count.tokens, m.id)
    verdict = "前提を満たす" if usage <= 0.5 else "前提を満たさない"
    print(f"  {m.display_name:18s} ウィンドウ {m.context_window:>9,} tokens → 使用率 {usage:6.1%}  {verdict}")

# %% [markdown]
# ウィンドウそのものではなく**半分**を上限にするのは、詰めるほど中ほどに置いた文書が使われにくくなるからです。
# 入ることと、読まれることは別の話です。下の図は、正解を含む文書の位置を変えたときの正答率です。
# 論文の公表値で、このコースが測った値ではありません。

# %%
# %matplotlib inline
from ctxlab.plots import papers
papers.lost_in_the_middle();

# %% [markdown]
# ## 3. 4 つの数字と、移る閾値
#
# 前提を満たすなら、RAG に移る理由は次の 4 つの数字のどれかが閾値を割ったときだけです。
#
# | 数字 | ロングコンテキストのまま | RAG に移る |
# |---|---|---|
# | 料金 | 月額の差が、RAG の構築と運用にかける額を下回る | 差がそれを上回り続ける |
# | 待ち時間 | キャッシュが効いた状態で、最初のトークンまで 3 秒以内 | 3 秒を超え、利用者が待てない |
# | 正答率 | 現場の 30 問で、RAG を下回らない | 下回る |
# | 更新頻度 | 1 日に何度も更新され、即時の反映が要る | 更新が粗く、再インデックスが間に合う |
#
# **更新頻度だけ向きが逆**です。文書がよく変わるほどロングコンテキストが有利になります。RAG は再インデックスを回すまで
# 古い内容を返し続けますが、ロングコンテキストは現物を読み直すだけで反映されます。
#
# 料金と待ち時間は計算で先に出せます。題材の規程で、1 日 20 問・キャッシュヒット率 80% のときの比較表を出します。

# %%
texts = [d.text for d in all_versions]
table = compare.compare(count.tokens, len(texts), chars=corpus.total_chars(all_versions), token_method=count.method)
print(compare.format_table(table))

# %% [markdown]
# ## 4. 3 つの方式で違うのは、誰が文書を選ぶかだけ
#
# | 方式 | 文書を選ぶのは | 外し方 |
# |---|---|---|
# | ロングコンテキスト | 選ばない（全部渡す） | 矛盾する新旧の文書を両方読んで混ぜる／中ほどを読み落とす |
# | メタデータで絞る | 人が決めたキー（部署・種別・年度） | キーが質問から取れないと、正解のファイルを落とす |
# | RAG | 検索（チャンクの順位） | 上位に入らなかったチャンクは最初から見ない |
#
# LLM が答えを書くところは 3 つとも同じです。選ぶ主体が違うので、外し方が違います。
#
# ## 5. よくある思い込みを数字で崩す
#
# **思い込み 1: RAG はいつも安い。** 質問が少ないと、ベクトル DB の固定費が効いて逆転します。
# モデルと 1 日の質問数を変えて、月額（ロングコンテキストはキャッシュ込み、RAG は DB 込み）を比べます。

# %%
for model in ("claude-opus-5", "claude-sonnet-5"):
    for per_day in (10, 20, 100):
        c = compare.compare(count.tokens, len(texts), compare.Profile(model=model, questions_per_month=per_day * 30))
        lc, rag = c.monthly["long_context"], c.monthly["rag"]
        cheaper = "ロングコンテキスト" if lc < rag else "RAG"
        print(f"{model:16s} 1 日 {per_day:>3} 問: ロングコンテキスト ${lc:7,.0f} / RAG（DB 込み） ${rag:7,.0f} → 安いのは {cheaper}")


# %% [markdown]
# **思い込み 2: ロングコンテキストなら出典は要らない。** 全文を渡しても、どの規程のどの条から答えたかは自動では残りません。
# 比較表の「出典」列のとおり、ロングコンテキストでは citations を自分で組み込む必要があります（07 で扱います）。
# RAG ではチャンク ID が構造として残ります。
#
# ## 6. 演習: 4 つの数字から方式を決める
#
# 測った数字を受け取って、方式と決め手を返す関数 `choose_path` を書きます。

# %% [markdown] nbgrader={"grade": false, "grade_id": "choose_path-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）
#
# `choose_path(...)` は `(方式, 決め手)` のタプルを返します。
#
# - 方式: `"long_context"`, `"filter_or_rag"`, `"rag"` のどれか
# - 決め手: `"premise"`, `"cost"`, `"latency"`, `"accuracy"`, `"freshness"`, `"all_clear"` のどれか
#
# 判定の順序:
#
# 1. 使用率（`doc_tokens / context_window`）が 50% を**超える**なら `("filter_or_rag", "premise")`。
# 2. RAG に移る理由を、料金（`lc_monthly - rag_monthly` が `rag_budget_monthly` を上回る）、待ち時間（`ttft_cached_s` が 3 秒を超える）、
#    正答率（`lc_correct` が `rag_correct` を下回る）の順に調べる。
# 3. 理由がひとつもなければ `("long_context", "all_clear")`。
# 4. 理由があっても、再インデックスの周期 `reindex_hours` が許される反映の遅れ `max_delay_hours` を超えるなら、
#    RAG では鮮度が保てないので `("long_context", "freshness")`。
# 5. それ以外は `("rag", 最初に見つかった理由)`。

# %% nbgrader={"grade": false, "grade_id": "choose_path", "locked": false, "schema_version": 3, "solution": true, "task": false}
def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):
    """Return (path, reason) from the measured numbers."""
    ### BEGIN SOLUTION
    if doc_tokens / context_window > 0.5:
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
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 判定は上から順に、最初に当てはまったもので返します。料金・待ち時間・正答率の 3 つは「RAG に移る理由」をリストに集め、
# 更新頻度はその後で「移ってよいか」を確かめる向きに使います（向きが逆の数字です）。50% ちょうどは前提を満たします。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "choose_path-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# 約 20 万トークン・Opus 5 の例。月額の差（207 - 101）は RAG にかける月 300 ドルを下回る。
result = choose_path(197_000, 1_000_000, 207, 101, 300, 1.1, 27, 25, 24, 1)
assert isinstance(result, tuple) and len(result) == 2, "(方式, 決め手) のタプルを返してください"
assert result == ("long_context", "all_clear"), f"どの数字も閾値を割っていないので long_context のはずです: {result}"
# 20 万トークンを 20 万トークンのウィンドウに: 使用率 100%
assert choose_path(197_000, 200_000, 207, 101, 300, 1.1, 27, 25, 24, 1) == ("filter_or_rag", "premise"), \
    "使用率が 50% を超えるときは、ほかの数字を見る前に filter_or_rag です"
### BEGIN HIDDEN TESTS
# exactly 50% satisfies the premise
assert choose_path(100_000, 200_000, 10, 100, 0, 1.0, 30, 20, 24, 1)[0] == "long_context"
# cost alone moves to RAG when re-indexing keeps up
assert choose_path(500_000, 1_000_000, 2_000, 300, 500, 2.0, 27, 27, 24, 48) == ("rag", "cost")
# 3.0 s is still acceptable, 3.01 s is not
assert choose_path(197_000, 1_000_000, 207, 101, 300, 3.0, 27, 25, 24, 48) == ("long_context", "all_clear")
assert choose_path(197_000, 1_000_000, 207, 101, 300, 3.01, 27, 25, 24, 48) == ("rag", "latency")
# accuracy
assert choose_path(197_000, 1_000_000, 207, 101, 300, 1.1, 20, 25, 24, 48) == ("rag", "accuracy")
# cost is reported before latency and accuracy
assert choose_path(197_000, 1_000_000, 2_000, 101, 300, 5.0, 20, 25, 24, 48) == ("rag", "cost")
# freshness keeps long context even when the other numbers say move
assert choose_path(197_000, 1_000_000, 2_000, 101, 300, 5.0, 20, 25, 24, 1) == ("long_context", "freshness")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "cheaper-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: どちらが安いかを計算で確かめる
#
# `compare.compare(doc_tokens, n_files, compare.Profile(model=..., questions_per_month=...))` の `monthly` を使って、
# 1 日 `per_day` 問（月 30 日）のときに月額が安いほうを `"long_context"` か `"rag"` で返す関数
# `cheaper_path(doc_tokens, per_day, model)` を書いてください。ファイル数は 50、ほかの前提は `Profile` の既定値のままです。
# 同額なら `"long_context"` を返します（作らずに済むほうを選ぶ）。

# %% nbgrader={"grade": false, "grade_id": "cheaper_path", "locked": false, "schema_version": 3, "solution": true, "task": false}
def cheaper_path(doc_tokens, per_day, model):
    ### BEGIN SOLUTION
    c = compare.compare(doc_tokens, 50, compare.Profile(model=model, questions_per_month=per_day * 30))
    return "long_context" if c.monthly["long_context"] <= c.monthly["rag"] else "rag"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# `c.monthly` には `"long_context"`（キャッシュ込み）と `"rag"`（API + DB）が入っています。比べるだけです。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "cheaper_path-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert cheaper_path(197_000, 10, "claude-sonnet-5") == "long_context", "Sonnet 5・1 日 10 問では DB の固定費が効きます"
assert cheaper_path(197_000, 20, "claude-opus-5") == "rag", "Opus 5・1 日 20 問では RAG のほうが安くなります"
### BEGIN HIDDEN TESTS
assert cheaper_path(1_000, 100, "claude-opus-5") == "long_context"
assert cheaper_path(197_000, 0, "claude-opus-5") == "long_context"
assert cheaper_path(900_000, 50, "claude-sonnet-5") == "rag"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "why-not-rag-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# あなたの職場の文書（または題材の規程）について、「RAG を組まずに済むか」を判断するために、
# 最初の 1 日で何をどの順に測りますか。4 つの数字のうち、計算で先に出せるものと、実物を動かさないと出ないものを分けて、
# 3〜5 文で書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "why-not-rag", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 料金と待ち時間は、count_tokens で数えた合計トークンと想定質問数から計算で先に出せるので、まずそれで比較表を作る。
# 計算だけで RAG に決まる規模（使用率 50% 超、差額が予算を大きく上回る）ならそこで判断できる。
# 正答率は現場の質問 30 問を集めて両方式に流し、3 段階で採点して初めて分かる。
# 更新頻度は更新から回答に反映されるまでの時間で、再インデックスの周期と業務の許容を比べる（よく変わるほどロングコンテキストが有利）。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 料金と待ち時間は count_tokens の合計と想定質問数から計算で先に出せ（50% の前提の確認を含む）、正答率は現場の質問を両方式に流して採点しないと出ない、と分けて順序を示している。更新頻度を「反映までの時間」として扱い、よく変わるほどロングコンテキストが有利という向きに触れている。
# - 1 点（半分）: 計算で出せるものと実物で測るものの区別はあるが、順序か更新頻度の向きのどちらかが欠けている、または誤っている。
# - 0 点: 4 つの数字を区別していない、「よく変わるなら RAG」と向きを逆に書いている、または測らずに方式を決めている。
# ### END RUBRIC
# ### END SOLUTION

# %% [markdown]
# ## 7. 症状から原因を読む（予告）
#
# ロングコンテキストで組んだ直後によく見る症状が 3 つあります。それぞれ後の節で原因と直し方を扱います。
#
# | 症状 | 原因 | 直し方 | 節 |
# |---|---|---|---|
# | 請求額が下がらない。`cache_read_input_tokens` が 0 のまま | ブレークポイントより前に毎回変わる文字列（日時など） | 変わるものを後ろへ | 03 |
# | 新旧の規程を混ぜた答えが返る | 旧版と新版が両方コンテキストに入っている | 有効な版だけ渡す（文書管理の問題） | 08 |
# | 規程を改定したのに古い答えのまま | 起動時に一度だけ文書を読み込んでいる | 質問ごと（または更新検知時）に読み直す | 08 |
#
# ## まとめ
#
# - ロングコンテキストを選べるのは、合計トークンがウィンドウの **50% 以下**のときだけ。分子は実物を数える。
# - 前提を満たすなら、RAG に移る理由は料金・待ち時間・正答率のどれかが閾値を割ったときだけ。更新頻度は向きが逆。
# - 3 つの方式の違いは「誰が文書を選ぶか」。選び方が違うので外し方も違う。
# - 次の節（01）では、トークンを数えるときの「推定」と「実測」の違いを扱います。

# %% [markdown]
# ## 確認問題
#
# この節の判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("00_start_here"))
check
