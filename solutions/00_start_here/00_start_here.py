# %% [markdown]
# # 00 まず読む: RAG を組むかどうかは、最後に決める
#
# 社内規程をもとに LLM に答えさせたいとき、多くの現場は最初に RAG の構成図を描きます。
# このコースでは逆の順で考えます。**まずロングコンテキストで足りるかを数字で確かめ、数字が求めたときだけ移る**。
#
# **このレッスンで身につくこと**
#
# - 前提「文書の合計トークン ÷ コンテキストウィンドウ ≤ 50%」を実物の文書で確かめ、それが経験則であることを説明できる
# - 料金・待ち時間・正答率・更新頻度の 4 つの数字と、それぞれの閾値を説明できる
# - ロングコンテキスト・メタデータで絞る・RAG の 3 つが「誰が文書を選ぶか」だけで違うことを説明できる
# - 4 つの数字から方式を決め、質問数の見込みの幅で結論が変わるかを判断できる
#
# **所要時間** 約 60 分　**前提知識** Python の基本、LLM の API を 1 回呼んだことがある程度
#
# **出典** このコースの事実と数字は、次の記事から取り、計算し直して使います（レッスンでは括弧内の短い名前で呼びます）。
#
# - 「RAG とロングコンテキストの使い分け」DBC Tech Academy（**使い分けの記事**）: 50% の前提、4 つの数字、比較表と月額の試算
# - 「エージェントに何を覚えさせるか：長いコンテキスト・RAG・Prompt Caching をコストで選ぶ」（**コストの記事**）: 使い回し回数 k と引く割合 ρ の式
# - Ercan Ermiş による長文コンテキストの記事、ercanermis.com（**長文コンテキストの記事**）: 位置による劣化と長さによる劣化、送る量の決め方
# - 「Introducing Contextual Retrieval」Anthropic Engineering Blog（**Contextual Retrieval の記事**）: 文脈つきチャンクと recall@20
#
# **進め方** 上から順にセルを実行します（Run All でも構いません）。演習を解く前でも Run All は最後まで進み、解いていない演習は
# その確認のセルが「演習 N はまだ解かれていません」と 1 行で知らせます（採点では、ここにない非公開のテストも実行されます）。
# カーネルを再起動したときや、保存したノートブックを開き直したときは、変数もウィジェットも消えています
# （`NameError` や「model not found」と出ます）: 最初のセルから実行し直してください。

# %%
import ctxlab
from ctxlab.costs import compare, pricing
from ctxlab import corpus
from ctxlab.api import tokens

client = ctxlab.make_client()
ctxlab.show_cost("00_start_here", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# 最初のセルは、どのレッスンでも同じです。`ANTHROPIC_API_KEY` が設定されていなければ、オフラインの sandbox が
# 本物の `anthropic` SDK の向こう側で API の代わりに答えます。ノートブックのコードは実 API に向けたときと同じです。
#
# ## 1. 題材: 株式会社みなと計測の社内規程
#
# このコースでは、架空の会社「株式会社みなと計測」の社内規程を題材にします。就業規則から情報セキュリティ規程まで、
# 部署ごとの規程が 1 ファイル 1 版で入っています。改定で置き換えられた旧版もフォルダに残っていますが、
# モデルに渡すのは**現行版だけ**です（新旧を両方渡すと、矛盾する答えが混ざります。08 で確かめます）。まず量を見ます。

# %%
docs = corpus.load()                       # 現行版だけ: このコースが送る文書
all_versions = corpus.load(current_only=False)
print(f"{corpus.company()}: 現行 {len(docs)} ファイル（フォルダには旧版を含めて {len(all_versions)} ファイル。旧版は送らない）")
print(f"現行版の合計 {corpus.total_chars(docs):,} 字")
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
count = tokens.count_documents([d.text for d in docs], client=client)
print(count)
chars = corpus.total_chars(docs)
ascii_chars = sum(ch.isascii() for d in docs for ch in d.text)
print(f"  {chars:,} 字 → {count.tokens:,} トークン。1 文字 1 トークンにならないのは、半角の英数字・記号・空白・改行"
      f"（{ascii_chars:,} 字）を、推定では単語ごとに 4 文字で 1 トークン（空白と改行は 0）と数えるから。"
      f"実 API のトークナイザーはまた違う数を返します（01 で扱います）")
compare.window_table(count.tokens)   # モデルごとの使用率: 合計トークン ÷ ウィンドウ

# %% [markdown]
# ウィンドウそのものではなく**半分**を上限にするのは、使い分けの記事の**経験則**です。どこかで測って決まった線ではありません。
# 根拠に挙がるのは、入ることと読まれることが別だという 2 種類の劣化で、長文コンテキストの記事はこの 2 つを分けて扱います。
#
# - **長さによる劣化**: 入力が長くなるほど、どこに置いても読み落としが増える。RULER（Hsieh et al., 2024）は、
#   モデルが名乗るウィンドウより「実効の長さ」がずっと短いことが多いと報告しました（公表値、次のセル）。
# - **位置による劣化**: 同じ長さでも、中ほどに置いた文書が使われにくい。下の図の Lost in the Middle です。
#
# 50% という数字はこのどちらからも直接は出てきません。自社の文書と質問で正答率を測るまでの、安全側の目安です（08 で測ります）。

# %%
from ctxlab.published import figures

ruler = figures()["ruler"]
for ex in ruler["examples"]:
    print(f"{ex['model']}: 名乗るウィンドウ {ex['claimed']:,} → 実効 {ex['effective']:,} tokens"
          f"（{ex['effective'] / ex['claimed']:.0%}）")
print(f"出典: {ruler['citation']}（公表値。このコースの測定ではない）")

# %% [markdown]
# 下の図は、正解を含む文書の位置を変えたときの正答率です（20 文書の実験の公表値。1 文書は 100 トークン前後の短い段落で、20 文書を合わせても数千トークン）。
# 位置の効き方はモデルで違い、GPT-3.5-Turbo は中ほどで大きく落ちますが、Claude-1.3 の線はほぼ平らです。
# この図が示すのは**位置**の効果で、「ウィンドウの何 % まで詰めてよいか」ではありません。

# %%
# %matplotlib inline
from ctxlab.plots import papers
papers.lost_in_the_middle();

# %% [markdown]
# ## 3. 4 つの数字と、移る閾値
#
# 前提を満たすなら、RAG に移るのは、料金・待ち時間・正答率のどれかが「RAG に移る」側に出て、**しかも**更新頻度が移ることを許すときだけです。
#
# | 数字 | ロングコンテキストのまま | RAG に移る |
# |---|---|---|
# | 料金 | 月額の差が、RAG の構築と運用にかける額を下回る | 差がそれを上回り続ける |
# | 待ち時間 | キャッシュが効いた状態で、最初のトークンまで 3 秒以内 | 3 秒を超え、利用者が待てない |
# | 正答率 | 現場の 30 問で、RAG を下回らない | 下回る |
# | 更新頻度（移ってよいかの条件） | 再インデックスの周期が、業務の許す反映の遅れに間に合わない: ほかの数字が移る側に出ても、とどまる | 間に合う: 移ってよい（これだけでは移る理由にならない） |
#
# **更新頻度だけ役割が違います**。移る理由にはならず、ほかの 3 つが移る理由を出したときに、移ってよいかを決めます。
# 文書がよく変わるほどロングコンテキストが有利です。RAG は再インデックスを回すまで古い内容を返し続けますが、
# ロングコンテキストは現物を読み直すだけで反映されます。
#
# 料金と待ち時間は計算で先に出せます。題材の規程で、1 日 20 問のときの比較表を出します。
#
# 月額は**キャッシュヒット率**（キャッシュから読めた呼び出しの割合）で大きく変わります。使い分けの記事は質問数によらず 80% と置きましたが、
# ヒット率は質問の間隔で決まります。このコースでは 04 で作る「朝夕に固まる社内の問い合わせ」の合成トラフィックから、
# 質問数ごとのヒット率（日ごとのばらつきが平均に残らないよう、標準誤差が 0.5 ポイント未満になるまで日数を重ねた平均）を出して使います。記事の 80% での額も注に並べます。
# キャッシュの仕組みは 03、キャッシュの寿命（TTL）とヒット率は 04 で扱います。

# %%
texts = [d.text for d in docs]
table = compare.compare(count.tokens, len(texts), chars=corpus.total_chars(docs), token_method=count.method)
compare.table(table)

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
# ロングコンテキストで文書一式をキャッシュに載せたまま質問だけを差し替える構成を、使い分けの記事は
# **CAG**（Cache-Augmented Generation）と呼んでいます。このコースの「ロングコンテキスト（キャッシュ込み）」がそれです。
# なお、「何を送るか」（全部か、絞るか、検索で引くか）と「送ったものを使い回すか」（キャッシュ）は別の軸です。
# 検索を使う構成でも、指示文などの固定部分はキャッシュできます。2 つの軸で見る図は 05 で描きます。
#
# ## 5. よくある思い込みを数字で崩す
#
# **思い込み 1: RAG はいつも安い。** RAG にはベクトル DB の固定費があるので、質問が少ないと逆転するはずです。
# モデルと 1 日の質問数を変えて、月額（ロングコンテキストはキャッシュ込み、RAG は DB 込み）を比べます。モデルは今日の Opus と Sonnet です。
# ヒット率は質問数ごとに合成トラフィックから出し（質問が少ないと、おおむね低くなります）、TTL も質問数ごとに、月額が安いほうを選びます（04 の規則）。

# %%
PER_DAY = (1, 2, 5, 10, 20, 100)
MODELS = (pricing.DEFAULT_MODEL, "claude-sonnet-5-5")
# 各行は compare.cheaper_path(count.tokens, len(texts), compare.Profile(model=..., questions_per_month=1 日の質問数 * 30)) の判定
verdicts, shown = compare.verdict_table(count.tokens, len(texts), MODELS, PER_DAY)
shown

# %% [markdown]
# どちらのモデルでも、質問が少ない側ではロングコンテキストが安くなります。質問が増えたときに RAG がはっきり安くなるか、
# 2 つの月額が同額圏にとどまるかは、モデルの単価で違います（上の表の「安いのは」の列）。
# 月額は、シミュレーションしたヒット率（平均）から出しています。平均には精度の幅があり、その幅の中で安いほうが入れ替わる質問数では、
# どちらが安いとも言えません。そこを「同額圏」と書き、何問目で入れ替わるという 1 つの数字にはしません。
# 質問数の見込みに幅があるとき、その幅のどこでも同じ答えになるかは 6 節の演習 2 で確かめます。ヒット率を記事のように 80% に固定したときに
# どちらへずれるかは 05（任意の 9 節）で動かします。
#
# 上の表の 1 日 1 問の行は、もう 1 つのことを示しています。どの質問もその日の最初の質問なのでヒットが起きず（ヒット率 0%）、
# 毎回キャッシュ書き込みの割増を払います。キャッシュなしの月額と並べます。

# %%
one = compare.compare(count.tokens, len(texts), compare.Profile(questions_per_month=30))
print(f"1 日 1 問（ヒット率 {one.hit_rate:.0%}）: キャッシュ込み ${one.monthly['long_context']:,.0f} / "
      f"キャッシュなし ${one.monthly['long_context_no_cache']:,.0f}")

# %% [markdown]
# キャッシュ込みのほうが高くなります。質問がこれほど少ないなら、キャッシュを付けないのが安い選択です。
#
# **思い込み 2: ロングコンテキストなら出典は要らない。** 全文を渡しても、どの規程のどの条から答えたかは自動では残りません。
# 比較表の「出典」列のとおり、ロングコンテキストでは citations を自分で組み込む必要があります（07 で扱います）。
# RAG ではチャンク ID が構造として残ります。
#
# ## 6. 演習: 4 つの数字から方式を決める
#
# 測った数字を受け取って、方式と決め手を返す関数 `choose_path` を書きます。

# %% [markdown] nbgrader={"grade": false, "grade_id": "choose_path-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: 4 つの数字から方式を決める
#
# 測った数字を受け取り、2 節の前提と 3 節の表に従って方式を決める関数 `choose_path(...)` を書いてください。
# `(方式, 決め手)` のタプルを返します。
#
# - 方式: `"long_context"`, `"filter_or_rag"`（前提を満たさないので、絞るか RAG を検討する）, `"rag"` のどれか
# - 決め手: その方式に決めた数字。`"premise"`, `"cost"`, `"latency"`, `"accuracy"`、
#   RAG に移る理由がひとつもないときは `"all_clear"`、移る理由はあるのに再インデックスが間に合わないのでとどまるときは `"freshness"`。
#   理由が複数あるときは、そのうちのどれを返しても構いません
#
# 引数: 文書の合計トークン `doc_tokens` とウィンドウ `context_window`、ロングコンテキストと RAG の月額 `lc_monthly`・`rag_monthly`、
# RAG を作って運用するために毎月かけてよい額 `rag_budget_monthly`、キャッシュが効いた状態の最初のトークンまでの秒数 `ttft_cached_s`、
# 現場の 30 問での正答数 `lc_correct`・`rag_correct`、RAG の再インデックスの周期 `reindex_hours`、業務が許す反映の遅れ `max_delay_hours`。
# 閾値ちょうど（使用率 50%、3 秒）は、まだ移らない側です。

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
# 3 節の表の 4 行は、同じ向きの数字ではありません。どれが「移る理由」になり、どれが「移ってよいか」を決めるのかを先に分けてください。
# 前提を満たさないときは、ほかの数字を比べる意味がありません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "choose_path-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# 約 20 万トークン・Opus 5 の例。月額は使い分けの記事の前提（ヒット率 80%・TTL 5 分）で数え直した $207 と $101（記事の表は $206）で、
# 差の 106 ドルは RAG にかける月 300 ドルを下回る（トラフィックから出すと差は変わる: 02 の表）。
result = choose_path(197_000, 1_000_000, 207, 101, 300, 1.1, 27, 25, 24, 1)
assert type(result) is tuple and len(result) == 2, "(方式, 決め手) のタプルを返してください"
assert result == ("long_context", "all_clear"), f"RAG に移る理由がひとつもないので long_context のはずです: {result}"
# 20 万トークンを 20 万トークンのウィンドウに: 使用率 100%
assert choose_path(197_000, 200_000, 207, 101, 300, 1.1, 27, 25, 24, 1) == ("filter_or_rag", "premise"), \
    "使用率が 50% を超えるときは、ほかの数字を見る前に filter_or_rag です"
# 閾値ちょうど（50% と 3 秒）は、まだ移らない側
assert choose_path(100_000, 200_000, 207, 101, 300, 1.1, 27, 25, 24, 48) == ("long_context", "all_clear"), \
    "使用率ちょうど 50% は前提を満たします（「50% 以下」）"
assert choose_path(197_000, 1_000_000, 207, 101, 300, 3.0, 27, 25, 24, 48) == ("long_context", "all_clear"), \
    "キャッシュ時の TTFT ちょうど 3 秒は、まだ移らない側です（「3 秒以内」）"
# 料金は、片方の月額ではなく月額の差を RAG にかける額と比べる
assert choose_path(197_000, 1_000_000, 400, 200, 300, 1.1, 27, 25, 24, 48) == ("long_context", "all_clear"), \
    "月額の差 400 − 200 = 200 ドルは RAG にかける 300 ドルを下回るので、料金は移る理由になりません"
assert choose_path(197_000, 1_000_000, 2_000, 101, 300, 1.1, 27, 25, 24, 48) == ("rag", "cost"), \
    "月額の差が RAG にかける額を上回り、再インデックスも間に合うので ('rag', 'cost') のはずです"
assert choose_path(197_000, 1_000_000, 2_000, 101, 300, 1.1, 27, 25, 24, 1) == ("long_context", "freshness"), \
    ("料金は移る側ですが、再インデックス（24 時間ごと）が業務の許す反映の遅れ（1 時間）に間に合わないので、"
     "とどまって ('long_context', 'freshness') のはずです（更新頻度は、移ってよいかの条件）")
### BEGIN HIDDEN TESTS
def _check(args, path, reasons):
    got = choose_path(*args)
    assert type(got) is tuple and len(got) == 2 and all(type(x) is str for x in got), got
    assert got[0] == path and got[1] in reasons, (args, got, path, reasons)

# exactly 50% satisfies the premise
_check((100_000, 200_000, 10, 100, 0, 1.0, 30, 20, 24, 1), "long_context", {"all_clear"})
# cost alone moves to RAG when re-indexing keeps up
_check((500_000, 1_000_000, 2_000, 300, 500, 2.0, 27, 27, 24, 48), "rag", {"cost"})
# 3.0 s is still acceptable, 3.01 s is not
_check((197_000, 1_000_000, 207, 101, 300, 3.0, 27, 25, 24, 48), "long_context", {"all_clear"})
_check((197_000, 1_000_000, 207, 101, 300, 3.01, 27, 25, 24, 48), "rag", {"latency"})
_check((197_000, 1_000_000, 207, 101, 300, 1.1, 20, 25, 24, 48), "rag", {"accuracy"})
# several reasons: any of them is a right answer
_check((197_000, 1_000_000, 2_000, 101, 300, 5.0, 20, 25, 24, 48), "rag", {"cost", "latency", "accuracy"})
_check((197_000, 1_000_000, 207, 101, 300, 5.0, 20, 25, 24, 48), "rag", {"latency", "accuracy"})
# freshness keeps long context when the other numbers say move, and only then
_check((197_000, 1_000_000, 2_000, 101, 300, 5.0, 20, 25, 24, 1), "long_context", {"freshness"})
_check((197_000, 1_000_000, 207, 101, 300, 1.0, 27, 25, 24, 1), "long_context", {"all_clear"})
# over the premise, the other numbers do not matter
_check((600_000, 1_000_000, 0, 101, 300, 1.0, 30, 0, 1, 48), "filter_or_rag", {"premise"})
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "cheaper-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 質問数の見込みに幅があるとき
#
# 導入前の質問数は読み違えるものです。見込みが「1 日 `low` 〜 `high` 問」という幅で来たとき、その幅のどこでも
# 月額で安いほうが同じかを判断する関数 `cheaper_over_range(doc_tokens, n_files, model, low, high)` を書いてください。
#
# - 1 日ごとの判定は 5 節と同じ `compare.cheaper_path(doc_tokens, n_files, compare.Profile(model=model, questions_per_month=1 日の質問数 * 30))`
#   です。`"long_context"`（キャッシュ込みのロングコンテキストが RAG（DB 込み）以下）、`"rag"`、`"tie"`（同額圏: シミュレーションしたヒット率の
#   精度の内で安いほうが入れ替わる）のどれかを返します。ヒット率はその既定（質問数からトラフィックで決まる）のまま
# - 幅の中のどの（整数の）質問数でも `"long_context"` なら `"long_context"`、どの質問数でも `"rag"` なら `"rag"`、
#   それ以外（幅の途中で入れ替わる、または同額圏の日がある）なら `"depends"` を返す
# - `low` が 1 未満か `high` より大きいときは `ValueError`

# %% nbgrader={"grade": false, "grade_id": "cheaper_path", "locked": false, "schema_version": 3, "solution": true, "task": false}
def cheaper_over_range(doc_tokens, n_files, model, low, high):
    ### BEGIN SOLUTION
    if low < 1 or low > high:
        raise ValueError(f"need 1 <= low <= high, got low={low!r}, high={high!r}")
    seen = set()
    for per_day in range(low, high + 1):
        seen.add(compare.cheaper_path(doc_tokens, n_files, compare.Profile(model=model, questions_per_month=per_day * 30)))
    return seen.pop() if len(seen) == 1 and "tie" not in seen else "depends"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# ヒット率は質問数で変わるので、月額は質問数の 1 次式ではありません。両端だけを見て決めてよいかを考えてください。
# 「同額圏」の日は、どちらが安いとも言えない日です。その日を含む幅について、何と答えるのが正直かも考えてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "cheaper_path-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
got = cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, 5, 12)
assert type(got) is str, f"文字列を返してください: {got!r}"
assert got == "rag", f"Opus 5.5・1 日 5〜12 問では、どこでも RAG が安いはずです: {got!r}"
got = cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, 1, 8)
assert got == "depends", f"1 日 1 問ではロングコンテキスト、8 問では RAG が安いので 'depends' のはずです: {got!r}"
got = cheaper_over_range(250_000, 50, pricing.DEFAULT_MODEL, 1, 3)
assert got == "depends", ("文書 25 万トークン・Opus 5.5 では幅の途中で安いほうが変わるので "
                          f"'depends' のはずです（幅の両端の日も含めて、ヒット率は compare の既定のまま）: {got!r}")
got = cheaper_over_range(210_000, 50, "claude-sonnet-5-5", 13, 15)
assert got == "depends", ("文書 21 万トークン・Sonnet 5.5 の 1 日 13〜15 問は、両端の 13 問と 15 問では RAG が安くても、途中の 14 問は"
                          "cheaper_path が 'tie'（同額圏）を返すので 'depends' のはずです（両端だけでなく幅の中の毎日を見て、"
                          f"同額圏の日も数えていますか）: {got!r}")
got = cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, 4, 6)
assert got == "depends", ("Opus 5.5・1 日 4〜6 問には cheaper_path が 'tie'（同額圏）を返す日があるので 'depends' のはずです"
                          f"（月額を 1 回比べるだけでは、シミュレーションの精度の内の差で決めてしまいます）: {got!r}")
for _bad in [(0, 5), (5, 4)]:
    try:
        cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, *_bad)
    except ValueError:
        continue
    raise AssertionError(f"low, high = {_bad} では ValueError を投げてください（low は 1 以上、high 以下）")
print("Sonnet 5.5・1 日 1〜3 問:", cheaper_over_range(count.tokens, len(texts), "claude-sonnet-5-5", 1, 3))
### BEGIN HIDDEN TESTS
def _truth(d, n, model, lo, hi):
    said = {compare.cheaper_path(d, n, compare.Profile(model=model, questions_per_month=30 * k)) for k in range(lo, hi + 1)}
    return next(iter(said)) if len(said) == 1 and "tie" not in said else "depends"

# ends that agree and a middle that differs (an endpoints-only answer says long_context or rag)
for _args in [(180_000, 50, "claude-sonnet-5-5", 22, 28), (180_000, 50, "claude-sonnet-5", 21, 24),
              (105_000, 50, pricing.DEFAULT_MODEL, 104, 106)]:
    _got = cheaper_over_range(*_args)
    assert _got == "depends" == _truth(*_args), (_args, _got)
for _args in [(count.tokens, len(texts), "claude-sonnet-5", 1, 3), (1_000, 50, pricing.DEFAULT_MODEL, 1, 30),
              (900_000, 50, "claude-sonnet-5", 30, 40), (count.tokens, len(texts), "claude-opus-5", 1, 4),
              (count.tokens, len(texts), "claude-sonnet-5-5", 1, 12), (count.tokens, len(texts), pricing.DEFAULT_MODEL, 7, 7)]:
    _got = cheaper_over_range(*_args)
    assert type(_got) is str and _got == _truth(*_args), (_args, _got)
# one day inside the tie band: neither path can be called cheaper
_tie_day = next(k for k in range(1, 11) if compare.cheaper_path(
    count.tokens, len(texts), compare.Profile(questions_per_month=30 * k)) == "tie")
assert cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, _tie_day, _tie_day) == "depends"
for _bad in [(0, 5), (5, 4), (-3, -1)]:
    try:
        cheaper_over_range(count.tokens, len(texts), pricing.DEFAULT_MODEL, *_bad)
        raise AssertionError(f"ValueError expected for low, high = {_bad}")
    except ValueError:
        pass
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

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("why-not-rag")

# %% [markdown]
# ## 7. 症状から原因を読む（予告）
#
# ロングコンテキストで組んだ直後によく見る症状が 3 つあります。それぞれ後の節で原因と直し方を扱います。
#
# | 症状 | 原因 | 直し方 | 節 |
# |---|---|---|---|
# | 請求額が下がらない。`cache_read_input_tokens` が 0 のまま | キャッシュの区切り（03）より前に毎回変わる文字列（日時など） | 変わるものを後ろへ | 03 |
# | 新旧の規程を混ぜた答えが返る | 旧版と新版が両方コンテキストに入っている | 有効な版だけ渡す（文書管理の問題） | 08 |
# | 規程を改定したのに古い答えのまま | 起動時に一度だけ文書を読み込んでいる | 質問ごと（または更新検知時）に読み直す | 08 |
#
# ## まとめ
#
# - ロングコンテキストを選ぶ目安は、合計トークンがウィンドウの **50% 以下**（使い分けの記事の経験則。長さの劣化と位置の劣化は別物）。分子は実物を数える。
# - 前提を満たすなら、RAG に移るのは料金・待ち時間・正答率のどれかが RAG の側に出て、しかも再インデックスが業務の許す反映の遅れに間に合うときだけ。更新頻度は移る理由ではなく、移ってよいかの条件（よく変わるほどロングコンテキストが有利）。
# - 月額はヒット率しだいで、ヒット率は質問数と間隔で決まる。質問数の見込みに幅があるなら、幅の全体で比べる。
# - 3 つの方式の違いは「誰が文書を選ぶか」。選び方が違うので外し方も違う。
# - 次の節（01）では、トークンを数えるときの「推定」と「実測」の違いを扱います。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("00_start_here"))
check
