# %% [markdown]
# # 11 自社の数字で決める: 同じ手順を自分の文書とトラフィックで回す
#
# ここまでの 10 のレッスンは、架空の会社（みなと計測）の規程で判断の手順を学びました。このレッスンでは同じ手順を、**あなたが選んだフォルダ**と
# リクエストのログで回し、最後に意思決定メモ（`ctxlab decide` が書くもの）を作ります。既定では、コースに付いている
# もう 1 つの小さな文書セット（タブレットのレジアプリ「こもれびレジ」のサポート FAQ）で、オフラインのまま最後まで動きます。
#
# **このレッスンで身につくこと**
#
# - 自分の文書フォルダ（.md・.txt・PDF・Word）を数え、読めなかったファイルと重複を確かめてから数字を出せる
# - リクエストのログを 04 の規則で再生し、TTL ごとのヒット率と 1 日の質問数を自分のトラフィックから出せる
# - 4 つの数字（料金・待ち時間・正答率・更新頻度）を、実測・推定・シミュレーションの区別を付けて並べ、方式を決められる
# - 結論が変わる条件（質問数・文書量・価格）を言える形で、意思決定メモに残せる
#
# **所要時間** 約 50 分　**前提** 00（4 つの数字と判断の順序）、02（料金）、04（TTL とログ）、05（交点）、08（正答率の測り方）

# %%
import ctxlab
from ctxlab import corpus, decide
from ctxlab._paths import DATA_DIR
from ctxlab.api.online import lesson_model
from ctxlab.costs import pricing, traffic
from ctxlab.decide import memo

client = ctxlab.make_client()
ctxlab.show_cost("11_decide", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. フォルダを選ぶ
#
# 下の `DOCS` を自社の文書のフォルダに書き換えると、このレッスンのすべてのセルがその文書で動きます。サブフォルダは部署として扱い、
# メタデータで絞る方式のキーにします（06）。既定は、コースに付いている FAQ です。みなと計測の規程（下に出すファイル数の社内規程）とは
# 形が違い、ファイルが少なく短い、製品のサポート窓口の文書です。
#
# 読めないファイル（画像だけの PDF、バイナリ、隠しファイル）は、理由を付けて飛ばします。同じ本文のファイルは 1 回だけ数え、
# どれと同じだったかを残します。Shift_JIS（CP932）のファイルは読んだうえで、そう知らせます。

# %%
DOCS = DATA_DIR / "capstone" / "docs"          # ← 自社のフォルダに書き換える
LOG = DATA_DIR / "capstone" / "requests.csv"   # ← 自社のリクエストのログ（なければ None にして、下の PER_DAY を使う）
QUESTIONS = DATA_DIR / "capstone" / "questions.jsonl"   # ← 現場の質問（なければ None）
PER_DAY = 20                                   # ログがないときの 1 日の質問数

folder = decide.read_folder(DOCS, progress=False)
print(f"読んだ文書: {len(folder.documents)} ファイル・{folder.chars:,} 字（部署: {folder.departments() or 'なし'}）")
print(f"（比べると、00〜10 のみなと計測の規程は {len(corpus.by_file())} ファイル）")
for f, reason in folder.skipped:
    print(f"飛ばした: {f}: {reason}")
for f, original in folder.duplicates:
    print(f"重複: {f} は {original} と同じ本文")
for note in folder.notes:
    print("注:", note)

# %% [markdown]
# ## 2. 数える: 50% の前提をモデルごとに
#
# 01 のとおり、分子はトークン数です。オフラインでは推定（日本語 1 文字 = 1 トークン）で、実際のトークナイザとは半分ほどずれることが
# あります。実 API なら `count_tokens` で数えます（`decide` はトークナイザの系統ごとに 1 回だけ数えます）。ここでは
# `decide` 全体を先に 1 回走らせ、その結果を節ごとに読んでいきます。

# %%
MODEL = lesson_model()   # 結論を出すモデル（CTXLAB_MODEL で変えられる。料金の表は全モデル）
opts = decide.Options(docs=DOCS, log=LOG, questions=QUESTIONS, models=(MODEL,),
                      questions_per_day=None if LOG else PER_DAY, update_every="1d", reindex_every="7d", progress=False,
                      over_budget="simulate")   # 予算に収まらない測定は、シミュレーションと計画のままにする
result = decide.decide(opts, client=client)
print("トークンの数え方:", result.token_how)
for m in result.months:
    print(f"{m.display_name:18s} {m.doc_tokens:>9,} tokens  ウィンドウの {m.window_usage:6.2%}  "
          f"→ {'前提を満たす' if m.within_half else '前提を満たさない'}")

# %% [markdown]
# ## 3. トラフィック: ログを 04 の規則で再生する
#
# 04 の規則は「1 つ前のリクエストの開始から TTL 未満で次が来ればヒット」です。ログの時刻をそのまま並べて、TTL ごとにヒット率を出します。
# ログは 1 行に 1 時刻か、`timestamp` 列のある CSV です。読めない行は数えて飛ばし、最初のいくつかを行番号付きで知らせます。
# 同じ質問数の合成トラフィック（04 のモデル）のヒット率も並べます。自社のログと形が違えば、ここで差が出ます。

# %%
if result.log is not None:
    log = result.log
    print(f"{len(log.times):,} 件・リクエストのある日 {log.days} 日 → 1 日 {log.per_day:.1f} 問")
    if log.bad:
        print(log.bad_report())
    for ttl, rate in result.traffic.log_rates.items():
        synthetic = traffic.expected_hit_rate(log.per_day, ttl)
        print(f"TTL {ttl}: ログの再生 {rate:.0%} / 合成トラフィック {synthetic:.0%}")
else:
    print(result.traffic.source)

# %% [markdown]
# ## 4. 料金: 今の価格表の全モデル、交点、判定が変わる質問数
#
# 月額は 02 の `compare` が出します。ロングコンテキストは、ログが得をさせる TTL でキャッシュした額と、キャッシュなしの額の安いほうです
# （質問がまばらだと、キャッシュは書き込みの割増だけを払います: 00）。RAG はベクトル DB の月額込みです。
# 交点（05）は、このトラフィックでロングコンテキストと RAG の月額が等しくなる文書量です。

# %%
from IPython.display import HTML

def _usd(v):
    return "—" if v is None else f"${v:,.2f}"

rows = "".join(
    f"<tr><td>{m.display_name}</td><td>{'なし' if m.ttl == 'none' else m.ttl}</td><td>{m.hit_rate:.0%}</td>"
    f"<td>{_usd(m.long_context)}</td><td>{_usd(m.filter)}</td><td>{_usd(m.rag)}</td>"
    f"<td>{m.crossover_tokens:,.0f}</td></tr>" for m in result.months)
HTML("<table><caption>月額（推定: 価格表 " + pricing.price_table_date() + " と、" +
     ("ログの再生" if result.log else "04 の合成トラフィック") + "のヒット率）</caption>"
     "<tr><th>モデル</th><th>キャッシュの TTL</th><th>ヒット率</th><th>ロングコンテキスト</th><th>メタデータで絞る</th>"
     "<th>RAG（DB 込み）</th><th>交点（tokens）</th></tr>" + rows + "</table>")

# %%
for line in result.changes:
    print("-", line)

# %% [markdown]
# 質問数と月額の関係を図にします。縦の線が今の質問数です。RAG の線が上にあるあいだは、料金はロングコンテキストの側に出ています。

# %%
# %matplotlib inline
from ctxlab.plots import decide as decide_plots

decide_plots.per_day(list(decide.PER_DAY_GRID), result.curve_day, result.traffic.per_day,
                     title=f"月額と 1 日の質問数（{result.primary.display_name}、推定）");

# %% [markdown]
# ## 5. 待ち時間・正答率・更新頻度
#
# 待ち時間は、オフラインでは sandbox の待ち時間モデル（使い分けの記事の数字に合わせたシミュレーション）です。実 API なら
# ストリーミングで最初のトークンまでを、キャッシュなしとキャッシュ時で数回ずつ測り、中央値を出します。
# 正答率は実 API が要ります。オフラインでは、質問ファイルの問題を 3 方式で答えて判定まで回したらいくらかかるかの計画を出します。
# 更新頻度は、文書の更新の間隔と RAG の再インデックスの周期から、RAG が古い内容を返す長さを出します。

# %%
for n in result.numbers:
    print(f"{n.label}: {n.value}（{n.how}）")
for model, calls, usd in result.plan:
    print(f"正答率の測定計画: {model} で {calls} 回の呼び出し、上限 ${usd:,.2f}")

# %% [markdown]
# ## 6. 決める、そしてメモに残す
#
# 00 の順序のとおり、まず前提、次に RAG に移る理由（料金・待ち時間・正答率）、最後に更新頻度が逆向きに効くかを見ます。
# `memo.write` が、4 つの数字と閾値、結論とそれを変える条件、図、前提の出典と日付を、1 ファイルで開ける HTML と
# 同じ内容の Markdown に書きます。各数字には、実測・推定・シミュレーションのどれかが付きます。

# %%
print(f"結論: {decide.PATH_JA[result.path]}（決め手: {decide.REASON_JA[result.reason]}）")
print(result.verdict)
written = memo.write(result, "memo_11")
print("書いたファイル:", ", ".join(p.name for p in written), "（memo_11/ を開く）")

# %% [markdown]
# 同じ手順を、みなと計測の規程に 1 日 20 問で当てると、結論が変わります。違いを生んだのがどの数字かを見比べてください。

# %%
rules_result = decide.decide(decide.Options(docs=DATA_DIR / "rules", questions_per_day=20, models=(MODEL,), progress=False,
                                            over_budget="simulate"), client=client)
for name, r in (("FAQ（このレッスン）", result), ("みなと計測の規程", rules_result)):
    print(f"{name}: {r.primary.doc_tokens:,} tokens・1 日 {r.traffic.per_day:.1f} 問 → "
          f"{decide.PATH_JA[r.path]}（決め手: {decide.REASON_JA[r.reason]}）")

# %% [markdown]
# ## 7. 演習
#
# ### 演習 1（3 点）: 見たことのない会社の 4 つの数字から決める
#
# 関数 `choose(company)` を書いてください。`company` は次のキーを持つ辞書で、`(方式, 決め手)` のタプルを返します。
# 方式と決め手の名前は 00 の演習と同じです（`"long_context"`, `"filter_or_rag"`, `"rag"` と、`"premise"`, `"cost"`,
# `"latency"`, `"accuracy"`, `"freshness"`, `"all_clear"`）。
#
# - `doc_tokens`, `context_window`: 文書のトークン数とウィンドウ
# - `lc_cached_monthly`, `lc_no_cache_monthly`: ロングコンテキストの月額（キャッシュあり・なし）。**安いほうで運用する**ものとします
# - `rag_monthly`: RAG の月額（DB 込み）、`rag_budget_monthly`: RAG に毎月かけてよい額
# - `ttft_cached_s`: キャッシュ時の最初のトークンまでの秒数
# - `accuracy`: `{"long_context": 0.8, "rag": 0.7}` のような正答率、**まだ測っていなければ `None`**（測っていない数字は理由になりません）
# - `update_hours`, `reindex_hours`: 更新の間隔と再インデックスの周期（時間）、**指定がなければ `None`**
#
# 閾値ちょうど（50%、3 秒）は移らない側です。更新頻度は、RAG に移る理由があって、再インデックスの周期が更新の間隔より長いときだけ、
# ロングコンテキストに引き戻します。

# %% nbgrader={"grade": false, "grade_id": "choose", "locked": false, "schema_version": 3, "solution": true, "task": false}
def choose(company):
    """Return (path, reason) for one company's numbers."""
    ### BEGIN SOLUTION
    c = company
    if c["doc_tokens"] / c["context_window"] > 0.5:
        return ("filter_or_rag", "premise")
    lc = min(c["lc_cached_monthly"], c["lc_no_cache_monthly"])
    reasons = []
    if lc - c["rag_monthly"] > c["rag_budget_monthly"]:
        reasons.append("cost")
    if c["ttft_cached_s"] > 3.0:
        reasons.append("latency")
    acc = c["accuracy"]
    if acc is not None and acc["long_context"] < acc["rag"]:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if c["update_hours"] is not None and c["reindex_hours"] is not None and c["reindex_hours"] > c["update_hours"]:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 00 の表と同じ順に見ます。新しいのは 3 つです: ロングコンテキストの月額が 2 つあること、測っていない数字（`None`）があること、
# 更新頻度の指定がないことがあること。`None` の数字は「移る理由」にも「引き戻す理由」にもなりません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "choose-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# レッスンで見せていない 3 社（数字は演習のための作りもの）
_base = dict(doc_tokens=40_000, context_window=1_000_000, lc_cached_monthly=30.0, lc_no_cache_monthly=25.0,
             rag_monthly=80.0, rag_budget_monthly=0.0, ttft_cached_s=0.8, accuracy=None,
             update_hours=None, reindex_hours=None)
got = choose(_base)
assert type(got) is tuple and len(got) == 2, f"(方式, 決め手) のタプルを返してください: {got!r}"
assert got == ("long_context", "all_clear"), f"小さな FAQ で、移る理由がひとつもありません: {got!r}"
# ウィンドウの 60% を埋めるマニュアル一式
assert choose({**_base, "doc_tokens": 600_000}) == ("filter_or_rag", "premise"), "使用率 60% は前提を満たしません"
# ロングコンテキストが高く、RAG は更新に追いつく
assert choose({**_base, "lc_cached_monthly": 400.0, "lc_no_cache_monthly": 900.0, "update_hours": 168,
               "reindex_hours": 24}) == ("rag", "cost"), "差 320 ドルが RAG にかけてよい 0 ドルを上回り、再インデックスは間に合います"
### BEGIN HIDDEN TESTS
def _check(changes, path, reasons):
    got = choose({**_base, **changes})
    assert type(got) is tuple and len(got) == 2 and all(type(x) is str for x in got), got
    assert got[0] == path and got[1] in reasons, (changes, got, path, reasons)

# the cheaper of the two long-context months counts: cached is dear, uncached is cheap
_check(dict(lc_cached_monthly=500.0, lc_no_cache_monthly=60.0), "long_context", {"all_clear"})
_check(dict(lc_cached_monthly=60.0, lc_no_cache_monthly=500.0, rag_monthly=50.0, rag_budget_monthly=5.0),
       "rag", {"cost"})
# exactly 50% and exactly 3 s stay
_check(dict(doc_tokens=500_000), "long_context", {"all_clear"})
_check(dict(ttft_cached_s=3.0), "long_context", {"all_clear"})
_check(dict(ttft_cached_s=3.2), "rag", {"latency"})
# unmeasured accuracy is no reason; measured lower accuracy is
_check(dict(accuracy={"long_context": 0.7, "rag": 0.8}), "rag", {"accuracy"})
_check(dict(accuracy={"long_context": 0.8, "rag": 0.8}), "long_context", {"all_clear"})
# freshness pulls back only with a reason to move and a slower re-index; unset freshness does not
_check(dict(ttft_cached_s=4.0, update_hours=2, reindex_hours=24), "long_context", {"freshness"})
_check(dict(ttft_cached_s=4.0, update_hours=None, reindex_hours=24), "rag", {"latency"})
_check(dict(ttft_cached_s=4.0, update_hours=48, reindex_hours=24), "rag", {"latency"})
_check(dict(update_hours=2, reindex_hours=24), "long_context", {"all_clear"})
# the premise comes first, whatever else says
_check(dict(doc_tokens=900_000, update_hours=1, reindex_hours=24), "filter_or_rag", {"premise"})
### END HIDDEN TESTS

# %% [markdown]
# ### 演習 2（2 点）: 質問数の見込みに幅があるとき、結論は保つか
#
# 質問数は見込みでしかありません。`side_at(per_day)` は 1 日の質問数を受け取り、料金の判定（`"long_context"` か `"rag"`）を返す関数です。
# 1 日 `low` 問から `high` 問までの**すべての整数**で判定が同じなら `True`、どこかで変わるなら `False` を返す関数
# `holds(side_at, low, high)` を書いてください。`low` が 1 未満か、`low > high` なら `ValueError` です。
# 下のセルは、このレッスンの文書とトラフィックから作った `side_at` で試します。

# %% nbgrader={"grade": false, "grade_id": "holds", "locked": false, "schema_version": 3, "solution": true, "task": false}
def holds(side_at, low, high):
    """True when side_at(d) is the same for every whole d from low to high."""
    ### BEGIN SOLUTION
    if low < 1 or low > high:
        raise ValueError("need 1 <= low <= high")
    first = side_at(low)
    return all(side_at(d) == first for d in range(int(low), int(high) + 1))
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 両端だけを比べると、途中で 1 回変わって戻る判定を見落とします。幅の中を全部見てください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "holds-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
def side_here(d):
    return result.side_at(d)   # このレッスンの文書で、1 日 d 問のときの料金の結論（合成トラフィック）


got = holds(lambda d: "rag", 1, 5)
assert got is True, f"どこでも同じ判定なら True です: {got!r}"
assert holds(lambda d: "rag" if d >= 4 else "long_context", 2, 6) is False, "4 問で判定が変わります"
for _bad in [(0, 5), (6, 5)]:
    try:
        holds(lambda d: "rag", *_bad)
    except ValueError:
        continue
    raise AssertionError(f"low={_bad[0]}, high={_bad[1]} では ValueError を投げてください")
print(f"このレッスンの文書で、1 日 10〜40 問の見込みなら結論は保つか: {holds(side_here, 10, 40)}")
### BEGIN HIDDEN TESTS
# a change and a change back inside the range: the ends agree, the middle does not
assert holds(lambda d: "rag" if 5 <= d <= 6 else "long_context", 1, 10) is False
assert holds(lambda d: "rag" if d > 10 else "long_context", 1, 10) is True
assert holds(lambda d: "rag" if d > 10 else "long_context", 10, 11) is False
assert holds(lambda d: "long_context", 7, 7) is True
_calls = []
assert holds(lambda d: _calls.append(d) or "rag", 3, 9) is True and sorted(set(_calls)) == list(range(3, 10))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "own-memo-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）: あなたのメモの理由
#
# `memo_11/memo.html` を開き（自社のフォルダで回したならそのメモを）、次の 3 つを 3〜5 文で書いてください。
# (1) 結論と、それを決めた数字（どれが実測で、どれが推定・シミュレーションか）。(2) 結論を変えうる条件のうち、いちばん近いもの。
# (3) 本番の前に、まだ測っていない数字のどれを、どう測るか。

# %% [markdown] nbgrader={"grade": true, "grade_id": "own-memo", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# FAQ はウィンドウのごく一部で、料金は月額の差がロングコンテキストの側に大きく出た（推定: 価格表とログの再生）。
# 待ち時間はシミュレーションで閾値を大きく下回るが実測ではない。いちばん近い変化は文書量で、交点は今の文書量の何十倍も先にある。
# 本番の前に、API キーを設定して待ち時間をストリーミングで測り、現場の質問 30 問で 3 方式の正答率をモデルの判定と人の見直しで測る。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 結論と決め手の数字を挙げ、実測・推定・シミュレーションを区別し、いちばん近い変化の条件を数字で言い、未測定の数字の測り方（API・質問・判定と人の確認）を書いている。
# - 1 点（半分）: 結論と数字はあるが、推定と実測の区別か、変化の条件か、測り方のどれかが欠けている。
# - 0 点: 数字なしで結論だけを書いている、またはシミュレーションの数字を実測として扱っている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("own-memo")

# %% [markdown]
# ## まとめ
#
# - 手順は同じ: 数える → 料金（全モデル・自社のトラフィック）→ 待ち時間 → 正答率 → 更新頻度 → 決める。
# - 数字には出どころを付ける。推定やシミュレーションで決めた結論は、実測で確かめるまで仮の結論として扱う。
# - 結論より「何が変われば結論が変わるか」のほうが長く役に立つ。結論が入れ替わる質問数・文書量・価格（交点）をメモに残す。
#
# ## 自社で試す
#
# - 自社の規程フォルダで `ctxlab decide --docs フォルダ --questions-per-day 見込み --out memo` を実行し、飛ばされたファイルの一覧を確かめる
#   （画像だけの PDF は OCR が要る）。
# - 1 か月分のリクエストのログ（時刻の列だけでよい）を `--log` に渡し、合成トラフィックとヒット率がどれだけ違うかを見る。
# - 現場の質問を 30 問、question・answer・key_facts・gold_files の CSV にし、予算（`--budget`）を決めて実 API で正答率を測る。
#   判定の結果は spot_check.csv で 1 割ほど人が見直す。
# - 文書の更新と再インデックスの周期を `--update-every` と `--reindex-every` に入れ、RAG に移ったら何日古い答えが出うるかをチームで確認する。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("11_decide"))
check
