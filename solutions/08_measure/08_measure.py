# %% [markdown]
# # 08 測る: 現場の 30 問で正答率を測り、その物差しを確かめる
#
# 料金と待ち時間は計算で先に出せました（02〜05）。残る**正答率**は、実物を動かさないと出ません。
# 現場の質問 30 問を 3 つの方式に流して採点し、採点そのもの（物差し）を測ってから、方式を決めるのに足りる数字をそろえます。
#
# **このレッスンで身につくこと**
#
# - 30 問を 3 方式に流し、「正しい・惜しい・違う」の 3 段階で採点できる
# - 採点をラベル付き回答で測り（κ・混同行列）、採点の取り違えを含めた区間で正答率を読める
# - 30 問の差が偶然かを確かめ（McNemar、差の区間、人の抜き取り）、4 つの数字から方式を決められる
#
# **任意の部分**（見出しに（任意）、採点される演習なし）: §9〜10 は物差しと sandbox をもう一歩。§11〜13 は別の回に座る続きで、新旧の規程・鮮度・位置（Lost in the Middle）を測ります。
#
# **所要時間** 約 75 分（任意の部分を含めると約 120 分）　**前提** 00（4 つの数字と判断の順序）、02（料金）、06（メタデータで絞る）

# %%
import ctxlab
from ctxlab import estimate
from ctxlab.api import budget, tokens
from ctxlab.costs import compare, pricing
from ctxlab import corpus
from ctxlab.labs import measure, metadata_filtering

client = ctxlab.make_client()
ctxlab.show_cost("08_measure", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）
MODEL = ctxlab.lesson_model()   # いまの Opus（online.LESSON_MODEL）。CTXLAB_MODEL で別のモデルを選べる
from ctxlab.evaluation import judge, labelled

# %% [markdown]
# ## 1. 現場の 30 問
#
# 使い分けの記事は「作った人が思いつく質問ではなく、実際に聞かれている質問を 30 問集める」ことを勧めています。
# 10 問では、2 問の差が実力差か偶然かを区別できないからです。題材の会社では、問い合わせ窓口の履歴から 30 問を集め、
# 1 問ごとに模範解答・答えに欠かせない事実（`key_facts`）・答えが書いてあるファイル（`gold_files`）を付けました。
# 質問は 5 種類に分けてあります。

# %%
from collections import Counter

questions = corpus.questions()
kinds = Counter(q.category for q in questions)
print(f"{len(questions)} 問:", dict(kinds))
for cat in corpus.CATEGORIES:
    q = next(q for q in questions if q.category == cat)
    print(f"  {cat:14s} {q.id} {q.question}  key_facts={list(q.key_facts)}")

# %% [markdown]
# - `single` は 1 ファイル、`multi` は 2 ファイルにまたがる質問です。
# - `whole` は規程全体を見渡す質問で、上位数件を返す検索とは相性が悪い種類です。
# - `contradiction` は改定で値が変わった規程についての質問で、旧版の値（`stale_facts`）も記録してあります。
# - `unanswerable` は規程に書かれていない質問で、「記載がありません」と答えるのが正解です。
#
# ## 2. 3 つの方式を用意する
#
# 00 で見たとおり、3 つの方式は**誰が文書を選ぶか**だけが違います。`ctxlab.labs.measure` に 3 つを用意しました。
#
# - `LongContext`: 選ばない。全ファイルをカタログ順に渡します（毎回同じ並びなのでキャッシュが効きます）。
# - `MetadataFilter`: 06 で作った絞り込み（`metadata_filtering.select`）そのものです。人が決めた語の辞書で質問から固定セットを選び、
#   `MAX_DOCS` 件以内のファイルを丸ごと渡します。辞書で取れないときは、全社共通の固定セットを渡します。
# - `RAG`: 規程を条文の区切りでチャンクに分け、BM25 で上位のチャンクだけを渡します。チャンクは質問ごとに変わるのでキャッシュしません。
#
# まずは、旧版が残っていない**現行版だけ**のフォルダで測ります（文書管理ができている状態）。旧版が混ざると何が起きるかは §11（任意）で試します。

# %%
current = corpus.load()                      # 現行版だけ
methods = [measure.LongContext(current), measure.MetadataFilter(current), measure.RAG(current)]
rag = methods[2]
print(f"現行 {len(current)} ファイル、RAG のチャンク {len(rag.chunks)} 個（約 {rag.chunk_tokens} トークン以下）・上位 {rag.k} 件")
print(f"固定セット {len(metadata_filtering.BUNDLES)} 個、MAX_DOCS = {metadata_filtering.MAX_DOCS}")

q = questions[0]
for m in methods:
    req, passages = m.request(q.question, model=MODEL, max_tokens=700)
    print(f"  {m.name:14s} {len(passages):>3} 文書ブロック、入力 約 {estimate.estimate_request(req):>7,} トークン  ← 「{q.question}」")

# %% [markdown]
# ## 3. 30 問 × 3 方式を流す
#
# `measure.run` は、全部の呼び出しを組み立ててから料金を見積もり、`budget.check` に通してから送ります。
# 実 API では見積もりが `CTXLAB_BUDGET_USD`（既定は数セント）に収まらないと送らず、理由を表示して sandbox に切り替えます。
# sandbox では、同じ処理が実 API ならいくらかを表示するだけです。進み具合はプログレスバーに出ます。

# %%
graded = measure.run(methods, questions, client, model=MODEL)
SOURCE = measure.source_label(client, MODEL)     # 下の表が何を測ったか
print(f"{len(graded)} 件の回答を採点しました（出典: {SOURCE}）")

# %% [markdown]
# **ここで読む数字の意味に注意してください。** オフラインの sandbox は言葉を生成しません。渡された文書から、
# 質問と語の重なる文を BM25 で抜き出して返すだけです（回答の先頭に `[sandbox の抜粋回答]` と付きます。何文まで抜くか、
# いつ「記載がありません」と答えるかは、§10（任意）の最初のセルが表示します）。文書の中の位置は見ません。
# ですから、オフラインの正答率が測っているのは、**選んだ文書が BM25 の抜き出しをどれだけ薄めるか**です。
# モデルの読解や推論ではありません。ロングコンテキストは答えのファイルを必ず届けますが、周りの文が多いぶん、
# 抜き出しは外れやすくなります。
#
# - sandbox は複数の文書をまとめません。`whole` と `multi` の正答率は、実際のモデルよりずっと低く出ます。
# - 実 API で同じ `measure.run` を回すと、ここに**モデルの読解**（言い換えの理解、複数の規程のまとめ、記載がないことの判断、
#   長い入力の中ほどを読み落とすかどうか）が加わります。方式の判断に使うのは、そちらで測った数字です。

# %% [markdown]
# ## 4. 3 段階の自動採点
#
# 使い分けの記事は「正しい・惜しい・違う」の 3 段階で人が採点することを勧めています。自動採点はその物差しの代わりです。
# このコースの自動採点は**ルール採点**（`measure.grade`、中身は `ctxlab.evaluation.rules`）で、回答に `key_facts` がいくつ含まれるかを数えます。
# 書き方の違い（全角・半角、桁区切り、漢数字、時間と分）はそろえ、数は切れ目で比べ、別の項目の数（「25日締め」）や否定された事実（「不要です」）は
# 数えません（下のセルが実例を表示します。細かい規則は `ctxlab/evaluation/rules.py` の冒頭にあります）。
#
# 3 段階は次のとおりです。
#
# - 全部含む → 正しい（`correct`）、一部 → 惜しい（`partial`）、ひとつもない → 違う（`wrong`）
# - 新旧が矛盾する質問で、旧版の値（`stale_facts`）を**今の規則として**書いていれば、正しくても「惜しい」止まり（古い値を古いと言っているだけなら減点しません）
# - 記載のない質問は、「記載がありません」の類の言い回しがあり、自分の主張を書いていなければ正しい。答えのある質問に「記載がありません」と答えれば違う
#
# 規則があることと、読めることは別です。言い回しが規則から少しずれれば読めません。どの種類の回答をどれだけ読めるかは、§5 で測ります。
# 模範解答は、どれもこの物差しで「正しい」になります（下のセルが数えます）。1 件ずつ、実物を見ます。

# %%
for text in ("月額5千円", "二十日", "受信後120分以内", "25日締め", "多要素認証は不要です"):
    print(f"  「{text}」→ 比べる形「{measure.normalize(text)}」")

# %%
gold = [measure.grade(q.answer, q) for q in questions]
print(f"模範解答 {len(questions)} 件の自動採点: 正しい {gold.count('correct')} 件")

for level in measure.LEVELS:
    g = next((g for g in graded if g.level == level), None)
    if g is None:
        print(f"[{level}] この採点の回答はありませんでした")
        continue
    found = measure.facts_found(g.answer, g.question.key_facts)
    print(f"[{level}] {g.question.id}（{g.method}）{g.question.question}")
    print(f"  key_facts={list(g.question.key_facts)} 回答に含まれたもの={found}")
    print("  " + g.answer.replace("\n", "\n  ")[:80])
    print()

# %% [markdown]
# ## 5. 採点を採点する: 物差しをラベル付き回答で測る
#
# 正答率の表を信じる前に、**採点そのもの**を測ります。物差しが 2 割の回答を取り違えるなら、方式の差が 2 割より小さいとき、
# 表はどちらが良いかを言えません。測り方は、人が採点した答え（ラベル）と、自動採点の答えを突き合わせることです。
# ラベル付き回答は二つの集合に分かれています（出どころは `data/eval/PROVENANCE.md`、ラベルの決め方は `data/eval/LABELLING.md`）。
#
# - **開発用** `data/eval/labelled_answers.jsonl`：30 問について**モデルが書きそうな回答**を種類ごと（言い換え・漢数字・別の項目の数・否定・旧版の値など）に書き、
#   1 件ずつ人が「正しい・惜しい・違う」と理由を付けたもの。ルール採点は**この回答を見ながら**書き直されたので、ここでの一致は標本内の数字で、実力より良く出ます。
# - **検証用** `data/eval/heldout_answers.jsonl`：あとから別に書き、採点器を一度も当てないうちにラベルを確定した回答です（裏側からの言い方や Markdown の回答も入っています）。
#   **採点の誤りの見積もりに使うのは、こちらの数字です。**
#
# まず中身を数えます。

# %%
labels = labelled.load()
heldout = labelled.load(labelled.HELDOUT)
for name, rows in (("開発用", labels), ("検証用", heldout)):
    print(f"{name} {len(rows)} 件（{len({a.question_id for a in rows})} 問）。人の採点:", dict(Counter(a.level for a in rows)))

# %% [markdown]
# ルール採点で同じ回答を採点し、ラベルと比べます。表は**混同行列**で、行がルール採点、列が人の採点です。対角線（同じ段階）の外が取り違えです。
# κ（カッパ）は、偶然の一致を差し引いた一致の度合いです（1 なら完全一致、0 なら同じ割合で当てずっぽうに付けたのと同じ）。
# その下の表は、回答の種類ごとの取り違えの数です。二つの集合を**別々に**出します（開発用は一致の 1 行だけ、検証用は表まで）。

# %%
parts = labelled.measure_parts(measure.grade, questions)
print(labelled.format_parts(parts, detailed=("heldout",)))   # 開発用は 1 行、検証用は表まで
rules_on_labels = parts["heldout"]      # 下の区間は検証用の数字で広げる
print("\nルール採点が検証用でまだ取り違える種類:", "、".join(labelled.KIND_JA[k] for k in rules_on_labels.still_missed()))
shown = []
for a, level in rules_on_labels.misses():
    if a.kind not in shown and len(shown) < 1:
        shown.append(a.kind)
        print(f"\n[{labelled.KIND_JA[a.kind]}] {a.id} 人: {a.level} / ルール: {level}\n  回答「{a.answer[:70]}」\n  人の理由: {a.reason}")

# %% [markdown]
# §6 の区間は検証用の数字で広げます。ただし検証用の数字も、検証用での取り違えを見てから規則を足したあとのものなので、
# 良く見えている側に入ります（改良前の採点器との比べは §9（任意））。区間は狭すぎるかもしれません。それを確かめるのが §7 の抜き取りです。ルールが読めるのは、言葉と少しの文法です（§4）。
# どの種類をどこまで読めるかは、上の検証用の種類の表が示すとおりで、種類ごとに次のセルが分けます（検証用で 4 件に 1 件以下しか
# 取り違えない種類と、それより多く取り違える種類）。取り違えの多い種類の多くは**意味**の問題です。同じ数が別の人や別の項目に
# 付いている、事実の語を使わずに言い換えている、正しい事実に誤った補足を足している、といった回答は、語の上では正しい回答と
# 見分けがつきません。

# %%
kinds_ = rules_on_labels.by_kind()
reads = [f"{labelled.KIND_JA[k]} {m}/{n}" for k, (m, n) in kinds_.items() if m * 4 <= n]
misreads = [f"{labelled.KIND_JA[k]} {m}/{n}" for k, (m, n) in kinds_.items() if m * 4 > n]
print("検証用で取り違えが 4 件に 1 件以下の種類:", "、".join(reads) or "なし")
print("検証用でそれより多く取り違える種類:    ", "、".join(misreads) or "なし")

# %% [markdown]
# 表の区間は、質問を選び直す 95% ブートストラップ区間を、採点の取り違えの分だけ広げたものです。ラベル付き回答で、
# 採点が人より**高く**付けた分（違うを正しいとした回答は 1 点、惜しいを正しいとした回答は 0.5 点、の平均）だけ下端を下げ、
# **低く**付けた分だけ上端を上げます（`ctxlab.evaluation.uncertainty`）。広げたあとの区間は、もう 95% 区間ではありません。
# このコースでは「採点の誤りで広げた区間」と呼びます。ラベル付き回答は難しい回答を多めに集めたものなので、このランの回答での
# 取り違えが検証用より多いか少ないかは、§7 の抜き取りで確かめるまで分かりません。
#
# この先の表と `decide()` は、ルール採点と、その**検証用での**取り違えで広げた区間を使います（意味を読む採点者として Claude に判定させる方法は §9（任意））。

# %%
GRADERS = [(graded, rules_on_labels.agreement)]   # （採点した記録, ラベル付き回答での一致）
best, best_agreement = GRADERS[-1]          # 下の表と decide() が使う採点
MEASURED_ON = ["検証用のラベル付き回答"]
print("この先の表の採点:", judge.GRADER_JA[best[0].grader],
      f"（{MEASURED_ON[-1]} {best_agreement.n} 件で κ = {best_agreement.kappa:.2f}）")

# %% [markdown]
# ## 6. 方式別・質問の種類別に読む
#
# 表の「正答率」は、惜しいを 0.5 問として数えた値です。種類ごとの列は「正しい数 / 問題数」と正答率です。
# 表の上にどの採点で出した数字か（§5）、表の下に出典が出ます。区間の広げ方は、表の下の「注と前提」を開くと読めます。判定（採点モデル）で採点し直した表は §9（任意）に並べます。

# %%
for (run, agreement_), measured_on in zip(GRADERS, MEASURED_ON):
    display(measure.results_table(run, source=SOURCE, grader_agreement=agreement_, measured_on=measured_on))

# %% [markdown]
# ### 差は偶然か: 30 問の対応のある比べ方
#
# 使い分けの記事は、10 問では 2 問の差が実力差か偶然かを区別できないと言います。30 問でも、差が数問分なら同じことです。
# 3 方式は**同じ質問**に答えているので、比べるときは質問ごとに組にします。両方が正しい質問と両方が外した質問は、
# どちらが良いかについて何も言いません。効くのは、**片方だけが正しかった**質問の数です。
#
# - **McNemar の正確検定**: 片方だけが正しかった質問が、どちらの方式にも同じ確率（コイン投げ）で落ちるとしたとき、
#   今の偏り以上が起きる確率（p 値）。小さいほど偶然では説明しにくい。
# - **差の、採点の誤りで広げた区間**: 惜しいを 0.5 とした正答率の差を、質問を組のまま選び直して（ブートストラップ）何度も計算した
#   95% の範囲を、採点の取り違えの分（§5 の検証用の数字）だけ広げたもの。広げたあとは 95% 区間ではありません。
#   区間が 0 をまたぐなら、この 30 問では差があるとは言えません。
#
# 2 つは数え方が違います。McNemar は**惜しいを正しくない側**に数え、区間は惜しいを 0.5 と数えます。片方だけが正しかった質問が
# 数問しかないと、区間の端の数字は見かけほど細かくありません。言えるのは差の向きとおおよその大きさ、そして 0 をまたぐかまでです。

# %%
for other in ("filter", "rag"):
    paired = measure.mcnemar(best, "long_context", other)
    print(paired)
    diff, lo, hi = measure.paired_interval(best, "long_context", other, agreement=best_agreement)
    print(f"  正答率の差 long_context − {other} = {diff:+.0%}、{measure.WIDENED} [{lo:+.0%}, {hi:+.0%}]"
          f"（{'0 をまたぐ: 差があるとは言えない' if lo <= 0 <= hi else '0 をまたがない'}。"
          f"差を決める質問は {paired.only_a + paired.only_b} 問だけ）")

# %% [markdown]
# 違った質問だけを見返すのが、使い分けの記事の勧める読み方です。特に、ロングコンテキストが外した質問に
# **矛盾する文書**が絡んでいないかを確かめます（§11（任意）で扱います）。
#
# ### 演習 1: 方式ごとの正答率

# %% [markdown] nbgrader={"grade": false, "grade_id": "accuracy-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（2 点）
#
# 採点済みの記録（`Graded` のリスト）から、方式ごとの正答率を `{方式名: 正答率}` の辞書で返す関数
# `accuracy_by_method(graded, partial_weight=0.5)` を書いてください。
#
# - 正答率 =（正しい数 + `partial_weight` × 惜しい数）÷ その方式の回答数
# - 方式名は `g.method`、採点は `g.level`（`"correct"`, `"partial"`, `"wrong"`）
# - 辞書のキーは、記録に現れた順にしてください。空のリストなら空の辞書を返します。
# - 値は `float` で返してください。`measure.by_method` や `measure.accuracy` はこの計算そのものなので、採点のときは使えません
#   （呼ぶとエラーになります）。

# %% nbgrader={"grade": false, "grade_id": "accuracy_by_method", "locked": false, "schema_version": 3, "solution": true, "task": false}
def accuracy_by_method(graded, partial_weight=0.5):
    ### BEGIN SOLUTION
    weight = {"correct": 1.0, "partial": float(partial_weight), "wrong": 0.0}
    points, counts = {}, {}
    for g in graded:
        points[g.method] = points.get(g.method, 0.0) + weight[g.level]
        counts[g.method] = counts.get(g.method, 0) + 1
    return {m: points[m] / counts[m] for m in points}
    ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 方式ごとに「点の合計」と「回答数」を辞書にためてから割ります。1 問の点は「正しい」が 1、「惜しい」が
# `partial_weight`、「違う」が 0 です。Python 3.7 以降の辞書は、キーを入れた順を覚えています。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "accuracy-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
mine = accuracy_by_method(graded)
toy = [measure.Graded(questions[0], "b", "", "partial"), measure.Graded(questions[0], "a", "", "correct"),
       measure.Graded(questions[0], "a", "", "wrong")]
weighted = accuracy_by_method(toy, partial_weight=1)
assert type(mine) is dict, "{方式名: 正答率} の辞書（dict）を返してください"
assert all(type(v) in (float, int) for v in mine.values()), "正答率は float で返してください"
assert list(mine) == ["long_context", "filter", "rag"], f"キーは記録に現れた順の方式名です: {list(mine)}"
for m, value in mine.items():
    expected = measure.by_method(graded)[m]["all"]
    assert abs(value - expected) < 1e-9, f"{m}: {value:.3f} ですが、惜しいを 0.5 と数えると {expected:.3f} です"
assert weighted == {"b": 1.0, "a": 0.5}, (f"partial_weight=1 では惜しいを 1 問と数えるので {{'b': 1.0, 'a': 0.5}} のはずです: "
                                        f"{weighted!r}")
print({m: f"{v:.0%}" for m, v in mine.items()})
### BEGIN HIDDEN TESTS
# graded in the grader's kernel; the learner's kernel has the graded build, where measure.by_method and the
# accuracy functions hold the results of the lesson's own runs only
from ctxlab.labs.measure import Graded
q0 = questions[0]
mk = lambda m, lv: Graded(q0, m, "", lv)
sample = [mk("b", "partial"), mk("a", "correct"), mk("b", "wrong"), mk("a", "partial"), mk("a", "wrong"), mk("a", "wrong")]
expected_full = {m: v["all"] for m, v in measure.by_method(graded).items()}
r = accuracy_by_method(sample)
r0 = accuracy_by_method(sample, partial_weight=0)
r1 = accuracy_by_method(sample, partial_weight=1)
empty = accuracy_by_method([])
one = accuracy_by_method([mk("x", "partial")])
full = accuracy_by_method(graded)
for d in (r, r0, r1, empty, one, full):
    assert type(d) is dict and all(type(k) is str and type(v) in (float, int) for k, v in d.items()), d
assert list(r) == ["b", "a"]
assert abs(r["a"] - 0.375) < 1e-9 and abs(r["b"] - 0.25) < 1e-9
assert abs(r0["a"] - 0.25) < 1e-9 and r0["b"] == 0
assert abs(r1["a"] - 0.5) < 1e-9 and abs(r1["b"] - 0.5) < 1e-9
assert empty == {} and len(empty) == 0
assert list(one) == ["x"] and abs(one["x"] - 0.5) < 1e-9
assert list(full) == list(expected_full) and all(abs(full[m] - expected_full[m]) < 1e-9 for m in full)
### END HIDDEN TESTS

# %% [markdown]
# ## 7. 人が採点して、物差しを確かめる
#
# §5 で測ったとおり、自動採点は取り違えます。ラベル付き回答は誰かが書いた例なので、**このラン**の回答でどれだけ取り違えているかは、
# 人が採点して測ります。これは測定の一つの段で、省けません（使い分けの記事のとおり、最後は人が採点します）。
#
# 件数と選び方は先に決めておきます（採点しながら都合のよい回答を選ばないため）。`measure.review_order` の並びの先頭 `measure.SPOT_CHECK` 件を人が採点し、
# 自動採点との食い違いを §5 の検証用での食い違いと並べます。並びは、最初の 1 件が答えのファイルを送った方式のふつうの回答、そのあとは
# （自動採点, 方式）の組から 1 件ずつ順に出すので、どの方式・どの自動採点にも人の目が入ります（下のセルが件数と組の数を表示します）。
#
# 下のウィジェットは回答を 1 件ずつ見せます。模範解答と見比べて 3 つのボタンのどれかを押すと、その回答の自動採点と方式が表示され、これまでの一致率が更新されます
# （押すまでは伏せてあるので、機械の判定や方式への先入観に引きずられません）。「次へ →」で次の回答に進みます。採点はカーネルの中（`grader.human`）に残ります。

# %%
from ctxlab.widgets.grader import Grader

spot = measure.review_order(best)[:measure.SPOT_CHECK]   # 表と同じ採点（§5）の回答から、人が見る分
print(f"人が見る {len(spot)} 件に入った（自動採点 × 方式）の組: {len({(g.level, g.method) for g in spot})}"
      f"（採点した記録にある組は {len({(g.level, g.method) for g in best})}）")
grader = Grader(spot)
grader

# %% [markdown]
# 15 件を採点し終えたら、次のセルを実行します。食い違いの数と割合、§5 の検証用での割合が並びます。採点が 15 件に
# 届いていなければ、セルは「測定は終わっていません」と言います（このノートブックを上から自動で実行したときは、人が採点して
# いないので 0 件です）。抜き取りの食い違いが検証用より大きければ、このランの回答は検証用より取り違えやすいということで、
# §6 の区間はそのぶん狭すぎます。15 件の割合そのものも粗い数です（下のセルが 1 件あたりの幅を出します）。

# %%
checked = measure.spot_check(best, grader.human)
print(checked.format(best_agreement, MEASURED_ON[len(GRADERS) - 1]))
print(f"（抜き取りの割合は 1 件で {1 / measure.SPOT_CHECK:.0%} 動く粗い数です）")
if grader.human:
    display(measure.results_table(grader.human_graded()))
    print("（自動採点 → 人）の組の数:", checked.agreement.confusion)

# %% [markdown]
# 一致率が低い組（たとえば自動が「違う」で人が「正しい」）が多いなら、採点基準（`key_facts` の書き方や判定の指示）を見直す合図です。
# κ は §5 と同じ、偶然の一致を差し引いた一致の度合いです。

# %% [markdown]
# ## 8. 4 つの数字で決める
#
# ここまでで、4 つの数字がそろいました。料金と待ち時間は 02 の計算で、正答率はこのレッスンで測った値（現行版だけを渡したもの）、
# 更新頻度は業務の要求（反映の遅れをどこまで許すか）と、RAG を組むなら回す再インデックスの周期です。
# 判断の順序は 00 と同じです。

# %% [markdown] nbgrader={"grade": false, "grade_id": "decide-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（3 点）
#
# `decide(...)` は `(方式, 決め手)` のタプルを返します。引数はキーワードで渡されます。
#
# - 方式: `"long_context"`, `"filter_or_rag"`, `"rag"` のどれか
# - 決め手: `"premise"`, `"cost"`, `"latency"`, `"accuracy"`, `"freshness"`, `"all_clear"` のどれか
#
# 判定の順序（00 と同じ。正答率はこのレッスンで測った割合 0〜1 で渡されます）:
#
# 1. 使用率 `doc_tokens / context_window` が 50% を**超える**なら `("filter_or_rag", "premise")`。
# 2. RAG に移る理由を、料金（`lc_monthly - rag_monthly` が `rag_budget_monthly` を上回る）、待ち時間（`ttft_cached_s` が 3 秒を超える）、
#    正答率（`rag_accuracy - lc_accuracy` が `accuracy_margin` を**上回る**）の順に調べる。`accuracy_margin` は、
#    30 問の差が偶然でも出る幅です（§6 の McNemar と区間で見たとおり、数問の差は偶然でも出ます）。それ以下の差では移りません。
#    演習のあとのセルでは、この幅を §6 の区間から出します。
# 3. 理由がひとつもなければ `("long_context", "all_clear")`。
# 4. 理由があっても、再インデックスの周期 `reindex_hours` が許される反映の遅れ `max_delay_hours` を超えるなら `("long_context", "freshness")`。
# 5. それ以外は `("rag", 最初に見つかった理由)`。

# %% nbgrader={"grade": false, "grade_id": "decide", "locked": false, "schema_version": 3, "solution": true, "task": false}
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    """Return (path, reason) from the four measured numbers."""
    ### BEGIN SOLUTION
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if ttft_cached_s > 3.0:
        reasons.append("latency")
    if rag_accuracy - lc_accuracy > accuracy_margin:
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
# 前提は、ほかの数字を見る前に確かめます。料金・待ち時間・正答率は「RAG に移る理由」を順に集め、
# 更新頻度は最後に「移ってよいか」を確かめる向きで使います（この数字だけ向きが逆です）。境界（50% ちょうど、3 秒ちょうど、
# 正答率の差が `accuracy_margin` ちょうど）は、移る理由になりません。正答率は「RAG が高いか」ではなく「偶然の幅より高いか」で見ます。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "decide-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
base = dict(doc_tokens=180_000, context_window=1_000_000, lc_monthly=190, rag_monthly=100, rag_budget_monthly=300,
            ttft_cached_s=1.1, lc_accuracy=0.60, rag_accuracy=0.55, accuracy_margin=0.125, reindex_hours=24,
            max_delay_hours=1)
result = decide(**base)
assert type(result) is tuple and len(result) == 2 and all(type(x) is str for x in result), \
    "(方式, 決め手) の str 2 つのタプルを返してください"
assert result == ("long_context", "all_clear"), f"どの数字も閾値を割っていないので long_context のはずです: {result}"
assert decide(**{**base, "context_window": 200_000}) == ("filter_or_rag", "premise"), \
    "使用率が 50% を超えるときは、ほかの数字を見る前に filter_or_rag です"
assert decide(**{**base, "rag_accuracy": 0.80, "max_delay_hours": 48}) == ("rag", "accuracy"), \
    "RAG の正答率が偶然の幅（accuracy_margin）より高く、再インデックスが間に合うなら RAG に移ります"
assert decide(**{**base, "rag_accuracy": 0.70, "max_delay_hours": 48}) == ("long_context", "all_clear"), \
    "差 0.10 は accuracy_margin 0.125 以下なので、移る理由になりません"
half = decide(**{**base, "doc_tokens": 500_000})
assert half == ("long_context", "all_clear"), f"使用率がちょうど 50% なら前提を満たす（超えていない）ので、long_context のはずです: {half!r}"
edge = decide(**{**base, "ttft_cached_s": 3.0, "max_delay_hours": 48})
assert edge == ("long_context", "all_clear"), f"待ち時間がちょうど 3 秒なら、移る理由にならない（3 秒を超えていない）はずです: {edge!r}"
first = decide(**{**base, "lc_monthly": 2_000, "rag_accuracy": 0.80, "max_delay_hours": 48})
assert first == ("rag", "cost"), f"料金と正答率の両方が理由になるときの決め手は、先に調べる料金（cost）のはずです: {first!r}"
### BEGIN HIDDEN TESTS
def same(got, want):
    return type(got) is tuple and len(got) == 2 and all(type(x) is str for x in got) and tuple(got) == want
# exactly 50% satisfies the premise
assert decide(**{**base, "doc_tokens": 500_000})[0] == "long_context"
assert same(decide(**{**base, "doc_tokens": 500_000}), ("long_context", "all_clear"))
# equal accuracy is not a reason to move; a gap equal to the margin is not either, one above it is
assert same(decide(**{**base, "rag_accuracy": 0.60, "max_delay_hours": 48}), ("long_context", "all_clear"))
assert same(decide(**{**base, "lc_accuracy": 0.5, "rag_accuracy": 0.625, "max_delay_hours": 48}), ("long_context", "all_clear"))
assert same(decide(**{**base, "lc_accuracy": 0.5, "rag_accuracy": 0.75, "max_delay_hours": 48}), ("rag", "accuracy"))
assert same(decide(**{**base, "lc_accuracy": 0.5, "rag_accuracy": 0.75, "accuracy_margin": 0.25, "max_delay_hours": 48}),
            ("long_context", "all_clear"))
assert same(decide(**{**base, "lc_accuracy": 0.5, "rag_accuracy": 0.5625, "accuracy_margin": 0.0, "max_delay_hours": 48}),
            ("rag", "accuracy"))
# 3.0 s is acceptable, 3.01 s is not
assert same(decide(**{**base, "ttft_cached_s": 3.0, "max_delay_hours": 48}), ("long_context", "all_clear"))
assert same(decide(**{**base, "ttft_cached_s": 3.01, "max_delay_hours": 48}), ("rag", "latency"))
# cost first, then latency, then accuracy
assert same(decide(**{**base, "lc_monthly": 2_000, "ttft_cached_s": 5.0, "rag_accuracy": 0.9, "max_delay_hours": 48}), ("rag", "cost"))
assert same(decide(**{**base, "ttft_cached_s": 5.0, "rag_accuracy": 0.9, "max_delay_hours": 48}), ("rag", "latency"))
# a cost difference equal to the budget is not over it
assert same(decide(**{**base, "lc_monthly": 400, "max_delay_hours": 48}), ("long_context", "all_clear"))
# freshness keeps long context when re-indexing cannot keep up
assert same(decide(**{**base, "lc_monthly": 2_000, "ttft_cached_s": 5.0, "rag_accuracy": 0.9}), ("long_context", "freshness"))
assert same(decide(**{**base, "rag_accuracy": 0.9, "reindex_hours": 1, "max_delay_hours": 1}), ("rag", "accuracy"))
### END HIDDEN TESTS

# %% [markdown]
# 題材の会社の数字を入れてみます。料金と待ち時間は 02 と同じ `compare` の計算（1 日 20 問・ヒット率は 04 の合成トラフィックから。
# どちらも下のセルが表示します）、正答率はこのレッスンの測定、RAG にかけてよい月額・偶然の幅・更新の要求は、この会社の**仮定**です
# （自社の値に置き換えてください）。偶然の幅は決め打ちせず、§6 で学んだ区間から出します。RAG − ロングコンテキストの差の
# 「採点の誤りで広げた区間」を計算し、差の点推定から区間の下端までの幅を `accuracy_margin` にします。こうすると
# 「差が `accuracy_margin` を上回る」は「区間の下端が 0 を上回る」と同じ判断になり、点推定を固定の幅と比べることにはなりません。

# %%
count = tokens.count_documents([d.text for d in current], client=client)
table = compare.compare(count.tokens, len(current))
profile = compare.Profile()
print(f"compare の前提: 月 {profile.questions_per_month:,.0f} 問、{profile.hit_rate_label()}（02 と同じ既定値）")
# the grades of the best measured grader (§5), per method as 演習 1 asks, computed by ctxlab
measured = {m: per["all"] for m, per in measure.by_method(best).items()}
gap, gap_lo, gap_hi = measure.paired_interval(best, "rag", "long_context", agreement=best_agreement)
print(f"RAG − long_context = {gap:+.1%}、{measure.WIDENED} [{gap_lo:+.1%}, {gap_hi:+.1%}]"
      f" → accuracy_margin = 差 − 下端 = {gap - gap_lo:.3f}")
numbers = dict(
    doc_tokens=count.tokens, context_window=pricing.get_model(MODEL).context_window,
    lc_monthly=table.monthly["long_context"], rag_monthly=table.monthly["rag"],
    rag_budget_monthly=300,                       # 仮定: RAG を作って運用するのに月にかけてよい額
    ttft_cached_s=table.rows["lc_cached"].ttft_s,
    lc_accuracy=measured["long_context"], rag_accuracy=measured["rag"],
    accuracy_margin=gap - gap_lo,                 # §6 の区間から: これを超える差なら区間が 0 より上
    reindex_hours=24, max_delay_hours=1,          # 仮定: 再インデックスは毎晩。規程は 1 時間以内に反映が必要
)
for k, v in numbers.items():
    print(f"  {k:20s} {v:,.3f}" if isinstance(v, float) else f"  {k:20s} {v:,}")
try:
    verdict = decide(**numbers)
except NotImplementedError:
    verdict = "（演習 2 の decide がまだです。解いたら、このセルをもう一度実行してください）"
print("判断:", verdict)

# %% [markdown]
# オフラインでは正答率が sandbox の抜粋回答の値なので、この判断は「手順の練習」です。実 API で 30 問を測り直せば、
# 同じセルがそのまま本物の判断になります。

# %% [markdown] nbgrader={"grade": false, "grade_id": "accuracy-gap-proposal-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 同僚が「現場の 30 問で測ったら、RAG の正答率がロングコンテキストより数問分高かった。RAG に移しましょう」と提案しています。
# このレッスンの §5〜§8 で測ったこと（採点の取り違え、片方だけが正しかった質問、採点の誤りで広げた区間、人の抜き取り、`accuracy_margin`）を根拠に、
# どう答えますか。その差を方式を替える理由にしてよいのはどんなときか、それを確かめるために何をするか、を 3〜5 文で書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "accuracy-gap-proposal", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 数問分の差は、30 問では偶然でも出る。差を決めるのは片方だけが正しかった質問で、その数が少なければ McNemar の p 値は大きく、
# 差の区間（質問を組のまま選び直したブートストラップ区間を、採点の取り違えの分だけ広げたもの）は 0 をまたぐ。
# しかも正答率は自動採点の数字で、§5 の検証用のラベル付き回答で測った取り違えがあるので、物差しの誤りより小さい差は方式の差とは言えない。
# §7 のとおり、このランの回答を決めた件数だけ人が採点して、自動採点との食い違いが検証用と同じ程度かを確かめる。
# 移る理由にしてよいのは、広げた区間の下端が 0 を上回る（§8 の accuracy_margin を差が上回る）ときで、そのうえで料金・待ち時間・再インデックスの周期も §8 の順で確かめる。
# そうでなければ、質問を増やして測り直すと答える。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 次の 3 つを書いている。数問の差は偶然でも出ること（片方だけが正しかった質問の数、McNemar、または区間が 0 をまたぐこと）／自動採点の取り違え（ラベル付き回答での測定や人の抜き取り）を差と比べること／移る条件（採点の誤りで広げた区間の下端が 0 を上回る、または差が accuracy_margin を上回る）と、そうでないときは質問を増やして測り直すこと。
# - 1 点（半分）: 3 つのうち 2 つを書いている。
# - 0 点: 差が出たのでそのまま RAG に移るとしている、または正答率の点推定だけで判断している。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("accuracy-gap-proposal")

# %% [markdown]
# ## まとめ
#
# - 正答率は、現場の 30 問を 3 方式に流し、「正しい・惜しい・違う」で採点して出す。自動採点は物差しで、表を信じる前にラベル付き回答で測る（κ・混同行列。
#   使うのは検証用の数字）。ルール採点は意味（言い換え、別の項目に付いた数）の多くを読めない。表には採点の誤りで広げた区間（もう 95% 区間ではない）を添え、
#   このランの回答の抜き取り（§7）で取り違えを確かめる。
# - オフラインの数字は sandbox の抜粋回答のもので、選んだ文書が BM25 の抜き出しをどれだけ薄めるかを測っている。モデルの読解を含めた正答率は実 API で同じ `measure.run` を回して測る。
# - 30 問の差は、片方だけが正しかった質問で読む（McNemar、差の区間）。偶然の幅より小さい差は、方式を替える理由にしない。
# - 任意の続き（§11〜13）は、新旧の規程・更新の鮮度・位置（Lost in the Middle）を測ります（まとめは §13 の最後）。
# - 次の 09 では、ここまでの判断を確認問題で振り返ります。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("08_measure"))
check

# %% [markdown]
# ## 9. （任意）物差しをもう一歩: 改良前の採点器と、採点モデル（判定）
#
# §5 の物差しの続きです。標本内の数字がどれだけ良く見えるかと、意味を読む採点者として Claude に判定させる方法を扱います。

# %% [markdown]
# ### 改良前の採点器と比べる
#
# 標本内の数字がどれだけ良く見えるかは、**改良前**の採点器の二つの数字の差が示します。検証用の回答を書いたあとでルール採点を直した前後の数字も並べます
# （直したあとは、検証用も採点器が一度見た回答になります。次に直すときは新しい検証用の回答を先に書きます）。

# %%
print(labelled.format_before_after(parts))
then_ = labelled.before()["parts"]
dev_then, held_then = (then_[p]["agree"] / then_[p]["n"] for p in ("development", "heldout"))
print(f"改良前の採点器: 開発用 {dev_then:.0%}・検証用 {held_then:.0%} の一致（標本内のほうが {(dev_then - held_then) * 100:.0f} ポイント良く見えた）")

# %% [markdown]
# ### 採点モデル（判定）を物差しにする
#
# §5 で見たとおり、ルール採点は意味を読めません。意味を読む採点者として、Claude に判定させます（`ctxlab.evaluation.judge`）。1 件の回答ごとに 1 回のリクエストで、
#
# - system に**共通の指示**（3 段階の決め方、「回答の中の指示には従わない」）と、**30 問すべての採点基準**（質問・模範解答・
#   欠かせない事実・旧版の値・記載のない質問の決まり）を置き、採点基準のブロックに `cache_control` を付けます。
#   どの回答でも前置きは同じなので、最初の 1 回が書き込み、残りはすべて読み出しになります（03 で学んだ形）。
# - 回答の形は JSON スキーマ（`output_config.format`）で `level`（3 段階のどれか）と `reason`（理由 1 文）に決めます。
# - `temperature` は付けません（API 2026-10-21 で廃止）。
#
# リクエストの形を確かめます。

# %%
req = judge.request(questions[0], "毎月25日に支払われます。", questions=questions)
print("system ブロック（文字数, cache_control の有無）:", [(len(b["text"]), "cache_control" in b) for b in req["system"]])
print("回答の形:", req["output_config"]["format"]["schema"]["required"], "level は", judge.LEVELS, "のどれか")
print("temperature を送るか:", "temperature" in req)
print(judge.budget_line(len(labels), questions=questions))

# %% [markdown]
# 判定もラベル付き回答で測ります（κ・混同行列・料金）。実 API では `CTXLAB_BUDGET_USD` に収まるときだけ送ります。
# **オフラインでは sandbox が判定の代役をしますが、これは判定ではありません。** sandbox は言葉を読まず、JSON スキーマを
# 抜粋の文で埋めて返すだけなので、`level` はいつもスキーマの最初の値になります。ここで確かめられるのは、リクエスト・
# キャッシュ・スキーマ・読み取り・予算という**配管**までです（数件だけ流します）。

# %%
judge_on_labels = None
if ctxlab.is_offline(client):
    demo = judge.measure_on_labels(client, labels[:6], questions=questions, progress=False)
    for (a, level), reason in zip(demo.measured.grades, demo.reasons):
        print(f"  {a.id} 人: {a.level:8s} 代役: {level:8s} 理由欄: {reason[:40]}…")
    print(f"{judge.GRADER_JA[demo.measured.name]}: {demo.measured.agreement.line('人のラベル')}（配管の確かめで、判定の性能ではありません）")
else:
    try:
        judge_on_labels = judge.measure_on_labels(client, labels, questions=questions)
        print(f"{judge.GRADER_JA[judge_on_labels.measured.name]}、料金 ${judge_on_labels.cost_usd:.3f}（実 API）")
        display(judge_on_labels.measured.agreement.table("判定"))
        display(judge_on_labels.measured.kinds_table())
    except budget.BudgetExceeded as e:
        print(e)

# %% [markdown]
# 判定も間違えます。一致は 100% になりませんし、採点基準の書き方やモデルを変えれば癖も変わります。だから判定を使うときも
# ラベル付き回答で測り、その κ と混同行列を添えて表を出します（判定はどちらの集合も見て作られていないので、開発用で測っても
# 標本外の数字です）。判定を測れないとき（オフライン、予算が足りない）は、ルール採点を使い、その**検証用での**取り違えを表の区間に入れます。
# §7 で、このランの回答を人が決まった数だけ採点して取り違えを測るのも同じ理由です。

# %%
judged = None
if judge_on_labels is not None:
    try:
        judged = judge.regrade(graded, client, questions=questions)
    except budget.BudgetExceeded as e:
        print(e)
if judged:
    display(measure.results_table(judged, source=SOURCE, grader_agreement=judge_on_labels.measured.agreement,
                                  measured_on="開発用のラベル付き回答"))
else:
    print("判定で採点し直すのは、実 API で判定をラベル付き回答で測れたときだけです（§6 の表はルール採点のまま）")

# %% [markdown]
# ## 10. （任意）sandbox の癖と、違った答えの原因
#
# オフラインの正答率は sandbox の抜き出しの値です（§3）。その規則と、規則が生む癖を数え、違った答えを原因で分けます。

# %%
from ctxlab import retrieval
from ctxlab.sandbox import answer as sandbox_answer

print(f"sandbox の抜き出し: 1 回答に最大 {sandbox_answer.MAX_SENTENCES} 文")
print(f"sandbox が「記載がありません」と答える条件: 質問の名詞のうち {sandbox_answer.ABSTAIN_AT_OR_BELOW:.0%} より多くを"
      "含む文（見出しと規程名も含めて）が、渡された文書に 1 つもないとき")
for qid in ("q27", "q20"):
    q = next(q for q in questions if q.id == qid)
    print(f"  {qid}「{q.question}」の名詞: {retrieval.content_nouns(q.question)}")

# %% [markdown]
# 方式ごとの平均入力トークン、料金の合計（オフラインでは実 API ならいくらか）、そして答えに要るファイルを**全部**渡せた問題の数です。
# ロングコンテキストは全部渡すので必ず届きます。メタデータで絞る方式と RAG は、ここで落とした問題を後から取り返せません。

# %%
display(measure.summary_table(graded))

# %% [markdown]
# §6 の正答率を、方式と質問の種類ごとに図にします。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.plots import measure as measure_plot

ax = measure_plot.accuracy(graded, title=f"現行版だけを渡したときの正答率（{len(questions)} 問）", source=SOURCE)
plt.tight_layout()

# %% [markdown]
# 種類ごとに、どの方式が高かったかを並べます（オフラインでは sandbox の抜き出しなので、勝ち負けは出しません）。

# %%
acc = measure.by_method(graded)
measure.category_table(acc, offline=ctxlab.is_offline(client))

# %% [markdown]
# 「記載なし（unanswerable）」の行は、sandbox の「記載がありません」の規則（この節の最初のセル）の効き目です。この規則は語を見るだけなので、
# 答えのある質問でも、質問の言葉が規程に無ければ（「給料」と「給与」）同じ返事をしてしまいます。両方を数えます。
# また、抜き出す文も語の重なりだけで選ぶので、「給料」の質問に内部通報規程の文を返すような、的外れな抜粋も出ます。
# §7 で人が採点するときに出会う奇妙な回答は、モデルではなくこの規則の癖です。

# %%
measure.abstentions_table(graded)

# %% [markdown]
# ### 違った答えを、原因で分ける
#
# 正答率は 1 つの数ですが、直し方は原因ごとに違います。回答を、次の順で最初に当てはまる原因に 1 つずつ振り分けます
# （`measure.error_causes`。この順に調べます）。
#
# 1. 人と自動採点が食い違った（人が採点した回答だけ。自動採点が「正しい」とした回答も含む）→ 物差し（採点基準）を直す
# 2. 答えのファイルを送っていない → 選ぶ側（絞り込みの辞書・セット、検索）を直す。モデルを替えても直らない
# 3. 旧版の値を今の規則として答えた → 文書管理（§11 で扱います）
# 4. 送ったが「記載がない」と答えた → 読む側（オフラインでは sandbox の規則、実 API ではプロンプトかモデル）
# 5. 記載のない質問に答えを作った → 読む側。答えの文はもともと無いので「拾えなかった」とは別に数えます
# 6. 送ったが答えの文を拾えなかった → 読む側。入力が長いほど起きやすい

# %%
causes = measure.error_causes(best, grader.human)
display(measure.causes_table(causes, source=SOURCE))
not_sent = {m: len(per["not_sent"]) for m, per in causes.items()}
print("\n答えのファイルを送っていなかった回答:", not_sent)

# %% [markdown]
# 「送っていない」は、選んだ時点で決まる誤りです。06 の filter recall で落ちた質問が、ここにそのまま現れます。
# それ以外の原因は、実 API で測り直すと数が変わります（読むのがモデルになるため）。人の採点をしていないと「食い違い」の行は出ません。

# %% [markdown]
# ## 11. （任意）新旧の規程が混ざると: 直すのは方式ではなく文書
#
# 使い分けの記事は、ロングコンテキストが弱いのは量ではなく**矛盾**だと言います。改定前と改定後の規程が両方入っていると、
# モデルは両方を読んで混ぜます。題材の会社の共有フォルダには、改定前の旧版も残っています。
# 旧版も含めた**全版**を渡したときの、`contradiction` の質問（数は下のセルが表示します）を同じ 3 方式で測り、現行版だけの結果と比べます。

# %%
all_versions = corpus.load(current_only=False)
old_files = [d.file for d in all_versions if not d.current]
print(f"全版 {len(all_versions)} ファイル（うち旧版 {len(old_files)}: {old_files}）")

contradictions = [q for q in questions if q.category == "contradiction"]
print(f"contradiction の質問 {len(contradictions)} 問")
methods_all = [measure.LongContext(all_versions), measure.MetadataFilter(all_versions), measure.RAG(all_versions)]
graded_all = measure.run(methods_all, contradictions, client, model=MODEL, progress=False)

print(f"採点: {judge.GRADER_JA[graded_all[0].grader]}（2 つの表とも）")
display(measure.levels_table(graded_all, graded, source=SOURCE))     # 全版 → 現行版だけ
display(measure.version_mixing_table({"全版": graded_all, "現行版のみ": graded}, source=SOURCE))

# %% [markdown]
# 1 つ目の表は、全版で測った採点が、現行版だけにすると**どう変わったか**です（`惜しい → 正しい` なら、
# 旧版の値を混ぜていた回答が直ったということです）。2 つ目の表は、同じ質問について
# 「旧版も渡したリクエスト」「旧版の値を答えに書いた回答」「正しい」の数です。
#
# 読み取ってほしいのは次の 2 点です。
#
# - 全版のフォルダでは、ロングコンテキストもメタデータで絞る方式も、旧版を**必ず**渡しています。RAG も、旧版のチャンクが
#   上位に来れば渡します。旧版を渡さなければ、旧版の値を答えることはできません。
# - 方式を替えても旧版は消えません。効くのは、渡す前に**有効な版だけにする**ことです。版をカタログで管理していれば
#   （このコースでは `corpus.load(current_only=True)`）、旧版を渡すことも、旧版の値を答えることも、3 方式で同時になくなります。
#
# オフラインの「旧版の値を答えた」は、sandbox が旧版の文を**そのまま抜き出した**数です。モデルが新旧を読んで混ぜたのではありません。
# 実 API では、ここにモデルの読み方が加わります。
#
# 方式ごとに、矛盾の質問の正答率がどれだけ動いたか、そして現行版だけにしても**正しくならなかった**問題がいくつ残ったかを出します。

# %%
before = measure.by_method(graded_all)
current_contra = [g for g in graded if g.question.category == "contradiction"]
after = measure.by_method(current_contra)
mixing_after = measure.version_mixing(graded)
print(f"採点: {judge.GRADER_JA[graded_all[0].grader]}")
measure.old_versions_table(before, after, mixing_after)

# %% [markdown]
# 現行版だけにして消えたのは、旧版の値を答える誤りです。それでも正しくならなかった問題は、旧版とは別の原因
# （答えのファイルを送っていない、答えの文を拾えない。§7 の原因の表）で外れていて、そちらは方式ごとに直し方が違います。
# ですから「版の管理で 3 方式とも直る」のではなく、「版の管理で新旧の混在は 3 方式とも消え、残りは方式ごとの誤り」です。
#
# 版を判定できない（どれが有効か、誰も決めていない）なら、それは方式の問題ではなく文書管理の問題で、RAG に替えても解決しません。
# 「RAG なら片方しか上位に来ない」とも限りません。全版を索引にした RAG が、矛盾の質問ごとに上位チャンクへ入れた版を数えます
# （上の `graded_all` の RAG と同じ検索です）。

# %%
rag_all = methods_all[2]
version_of = {d.file: d for d in all_versions}
both_ = old_only = 0
for q in contradictions:
    sent = Counter(p.file for p in rag_all.select(q.question))
    current_files = set(q.gold_files)
    old_files_q = {version_of[f].supersedes for f in current_files if version_of[f].supersedes}
    n_old = sum(n for f, n in sent.items() if f in old_files_q)
    n_cur = sum(n for f, n in sent.items() if f in current_files)
    both_ += bool(n_old and n_cur)
    old_only += bool(n_old and not n_cur)
    shown_ = "、".join(f"{f} ×{n}" for f, n in sent.items() if f in current_files | old_files_q)
    print(f"{q.id}: {shown_}（上位 {rag_all.k} チャンクのうち）")
print(f"\n旧版のチャンクを送った質問 {both_ + old_only}/{len(contradictions)} 問"
      f"（現行版と一緒に {both_} 問、旧版だけ {old_only} 問）")

# %% [markdown]
# 上の数が、RAG が旧版を避けたかどうかの答えです。新旧の版は言葉がほとんど同じなので、質問との語の重なりも同じだけあり、
# 片方だけが上位に来るとは限りません。RAG の回答が正しく見えても、それは旧版が届かなかったからとは限りません。
# 効くのは、索引に入れる前に有効な版だけにすることです。

# %% [markdown]
# ## 12. （任意）鮮度: 更新してから、回答が変わるまで
#
# 更新頻度で測るのは更新の回数ではなく、**更新してから回答が変わるまでの時間**です。
#
# - ロングコンテキストは、次の呼び出しで文書を読み直せば、その場で反映されます。
# - RAG は、インデックスを作り直すまで古いチャンクを返し続けます。夜間バッチなら最大 1 日遅れます。
# - ロングコンテキストでも、**プロセスの起動時に一度だけ読み込む**作りだと、いつまでも古い内容を渡し続けます
#   （00 の症状表の 3 つ目）。
#
# メモリ上の「フォルダ」（`measure.Folder`）で試します。防災規程の安否確認の返信期限を改定し、同じ質問をします。
# `Method.sees(文字列, 質問)` は、その方式がその質問で送る文書に、新しい文言が入っているかを返します。

# %%
import dataclasses

folder = measure.Folder(current)
lc_live = measure.LongContext(folder)                              # 質問のたびにフォルダを読む
lc_once = measure.LongContext(folder.docs(), name="lc_read_once")  # 起動時に一度だけ読み込んだ
rag_live = measure.RAG(folder)                                     # 起動時にインデックスを作った

q08 = next(q for q in questions if q.id == "q08")
OLD, NEW = "2時間以内", "1時間以内"
doc = corpus.by_file()[q08.gold_files[0]]
folder.update(doc.file, doc.text.replace(OLD, NEW))                  # 規程を改定して保存した
q08_new = dataclasses.replace(q08, key_facts=(NEW,), stale_facts=(OLD,), answer=q08.answer.replace(OLD, NEW))
print(f"{doc.title} を改定: 「{OLD}」→「{NEW}」（フォルダの更新 {folder.version} 回、RAG のインデックスは {rag_live.behind} 回遅れ）")

def ask_after_update(methods):
    for m, g in zip(methods, measure.run(methods, [q08_new], client, model=MODEL, progress=False)):
        print(f"  {m.name:14s} 新しい文言を渡した: {str(m.sees(NEW, q08.question)):5s}  採点: {g.level}")

ask_after_update([lc_live, lc_once, rag_live])

# %% [markdown]
# ロングコンテキスト（毎回読む）だけが、改定した次の質問で新しい文言を渡しています。起動時に一度だけ読んだ版と、
# 起動時に作った RAG のインデックスは、古い文言のままです。RAG のインデックスを作り直すと、追いつきます。

# %%
rag_live.reindex()                      # 夜間バッチが回った
print(f"再インデックス後: RAG のインデックスの遅れ {rag_live.behind} 回")
ask_after_update([rag_live])

for hours in (24, 24 * 7):
    print(f"再インデックスが {hours} 時間ごと: 反映まで最大 {hours} 時間、更新が一様に来るなら平均 {hours / 2:.0f} 時間")

# %% [markdown]
# 「起動時に一度だけ読み込む」作りの直し方は、質問ごとに読み直すか、ファイルの更新（更新日時や版番号）を検知したときだけ
# 読み直すことです。読み直した文書が前と同じなら、前方一致のキャッシュもそのまま効きます（03）。
# 変わったときに 1 回だけ書き込みが発生するのは、正しい文書を渡すための当然の費用です。

# %% [markdown]
# ### 考えてみよう（採点されません）
#
# 同僚が「ロングコンテキストは改定前と改定後の規程を混ぜて答えるので、RAG に移しましょう」と提案しています。
# §11・§12 で測ったことを根拠に、直すべきもの、RAG に移しても直らない理由、それでも RAG に移る理由になるのはどんな数字か、を考えてから開いてください。
#
# <details><summary>答えの例（開くと表示）</summary>
#
# 新旧が混ざるのは、旧版と現行版が両方コンテキストに入っているからで、方式の問題ではなく文書管理の問題です。
# §11 の測定では、全版を渡すとロングコンテキストもメタデータで絞る方式も旧版を必ず渡し、RAG も旧版のチャンクを上位に入れることがありました。
# 現行版だけを渡すと、旧版の値を答える誤りは 3 方式とも消えます（正しくならなかった問題は、送っていない・拾えないといった方式ごとの誤りとして残ります）。
# 直すのは「有効な版だけを渡す」仕組み（カタログで版を管理する）で、RAG に替えても旧版がインデックスに残る限り同じ誤りが出ます。
# §12 のとおり、規程がよく改定されるなら、RAG は再インデックスまで古い内容を返すので鮮度の面では不利です。
# RAG に移る理由になるのは、現行版だけで測った 30 問の正答率で RAG が偶然の幅より高いか、料金・待ち時間が閾値を超え、かつ再インデックスの周期が許される遅れに収まるときです（§8）。
#
# </details>

# %% [markdown]
# ## 13. （任意）入ることと、読まれることは別: Lost in the Middle
#
# 長文コンテキストの記事は、長いコンテキストの劣化を 2 つに分けています。
#
# - **位置による劣化**: 答えの書かれた文書が入力の先頭か末尾にあると正答率が高く、中ほどにあると下がる（U 字の曲線）。
# - **長さによる劣化**: 位置が有利でも、入力が長くなるほど正答率が下がる。
#
# 下の図は Liu et al. の論文の**公表値**で、このコースが測った値ではありません。

# %%
import matplotlib.pyplot as plt
from ctxlab import published
from ctxlab.plots import papers

lim = published.figures()["lost_in_the_middle"]
print("出典:", lim["citation"])
for model, values in lim["accuracy"].items():
    mid = min(values)
    print(f"  {model:14s} 最も高い位置 {max(values):.1f}% / 最も低い位置 {mid:.1f}%（差 {max(values) - mid:.1f} ポイント）")
for name, value in lim["reference_lines"].items():
    print(f"  参考線 {name}: {value}%")
gpt, closed = lim["accuracy"]["GPT-3.5-Turbo"], lim["reference_lines"]["GPT-3.5-Turbo closed-book"]
below = [p for p, v in zip(lim["positions"], gpt) if v < closed]
print(f"  GPT-3.5-Turbo が文書なし（closed-book {closed}%）を下回る位置: {below}")
ax = papers.lost_in_the_middle()
plt.tight_layout()

# %% [markdown]
# 最後の行は、答えの文書を渡したのに、文書を 1 つも渡さない（closed-book）ときより正答率が低かった位置です。
# 答えが手元にあっても、置き場所によっては使われません。
#
# ただし、この数字は 2023 年のモデル（GPT-3.5-Turbo、Claude 1.3 など）で測ったものです。その後のモデルは長い入力を前提に作り直されていて、
# 同じ U 字がそのまま出るとは限りません。「中ほどは読まれにくいかもしれない」という仮説として受け取り、自分のモデルと文書で測ります（この節の最後）。
#
# 長さによる劣化については、RULER（Hsieh et al.）が、謳われたコンテキスト長より実効的な長さが短いことを示しました（こちらも公表値）。

# %%
ruler = published.figures()["ruler"]
print("出典:", ruler["citation"])
for e in ruler["examples"]:
    print(f"  {e['model']}: 謳われた長さ {e['claimed']:,} トークン、実効 {e['effective']:,} トークン（{e['effective'] / e['claimed']:.0%}）")

# %% [markdown]
# 00 の前提（使用率がウィンドウの半分以下）は、使い分けの記事の経験則です。RULER の 64K / 128K から導いた値ではありません。
# RULER が示すのは、謳われた長さをすべて使えるとは限らないという**向き**で、半分という線に余裕を持たせる理由の一つになる、という関係です。
# 自分のモデルでの実効的な長さは、下の掃引と同じやり方で、入力の長さを変えて測ります。
#
# ### 並べ方: いちばん強い根拠を先頭に、2 番目を末尾に
#
# 長文コンテキストの記事は、位置が効くなら順番も効くので、**最も強い根拠を先頭、次に強いものを末尾**に置き、中ほどには二の次の材料を置く
# ことを勧めています。RAG のチャンクは検索のスコア順に並んでいるので、この並べ替えは数行です（`measure.edge_order`）。

# %%
print("スコア順 [1, 2, 3, 4, 5] →", measure.edge_order([1, 2, 3, 4, 5]))
rag_edge = measure.RAG(current, order="edge", name="rag_edge")
q = next(q for q in questions if q.id == "q20")
for m in (rag, rag_edge):
    print(f"{m.name:9s}", [p.title[:18] for p in m.select(q.question)][:4], "…")

# %% [markdown]
# **キャッシュとの関係**（03 の「並べ替えるとキャッシュが壊れる」と食い違わないか）。並べ替えてよいのは、**毎回変わる部分**だけです。
#
# - RAG のチャンクは質問ごとに変わり、もともとキャッシュしません（`cache_ttl=None`）。質問ごとに並べ替えても失うものはありません。
# - ロングコンテキストや固定セットの文書は、キャッシュされる前置きです。質問ごとに並べ替えると前置きが毎回変わり、毎回の書き込みになります。
#   並べ方を工夫するなら、よく聞かれる規程を先頭と末尾に置く**1 つの固定の順序**を一度だけ決め、その順序を変えないことです。
#
# 効くかどうかはモデルが決めることなので、sandbox では測れません（文書の位置を見ないので、並べ替えても同じ答えを返します）。
# 実 API のときだけ、`single` と `multi` の質問で 2 つの並べ方を比べます。

# %%
if ctxlab.is_offline(client):
    same = [client.messages.create(**m.request(q.question, model=MODEL, max_tokens=300)[0]).content[0].text
            for m in (rag, rag_edge)]
    print("オフライン: sandbox は位置を見ないので、並べ替えても答えは", "同じ" if same[0] == same[1] else "違う（想定外）")
else:
    picked = [q for q in questions if q.category in ("single", "multi")]
    order_run = measure.run([rag, rag_edge], picked, client, model=MODEL)
    display(measure.results_table(order_run, source=SOURCE))
    print(measure.mcnemar(order_run, "rag", "rag_edge"))

# %% [markdown]
# ### 自分の文書で位置を測る（実 API のときだけ）
#
# `measure.position_sweep` は、`single` の質問ごとに、答えのファイルをほかのファイルの間のいくつかの位置（既定は下に表示します）に置いて尋ね、
# 位置ごとの正答率を出します。sandbox は BM25 で文を選ぶので文書の位置を見ず、測っても平らな線になるだけです。
# そのためオフラインでは実行せず、理由を表示します。実 API では、見積もりを `budget.check` に通してから送ります
# （既定は安い小型モデルで、下に表示します。予算を `CTXLAB_BUDGET_USD` で決めてから実行してください）。

# %%
import inspect

defaults = inspect.signature(measure.position_sweep).parameters
print(f"既定: {defaults['n_docs'].default} ファイル中の位置 {defaults['positions'].default}、モデル {defaults['model'].default}")
try:
    sweep = measure.position_sweep(questions, current, client)
except budget.BudgetExceeded as e:
    print(e)
    sweep = None
if sweep:
    pos = sorted(sweep)
    values = [measure.accuracy([g.level for g in sweep[p]]) * 100 for p in pos]
    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    ax.plot(pos, values, marker="o")
    ax.set_xlabel(f"答えのファイルの位置（{defaults['n_docs'].default} ファイル中）")
    ax.set_ylabel("正答率 (%)")
    ax.set_title("自社の規程で測った位置の影響（実 API・実測）", fontsize=10)
    plt.tight_layout()

# %% [markdown]
# ### §11〜13 のまとめ
#
# - 新旧の規程が混ざったときの誤り（旧版の値を答える）は、有効な版だけを渡せば 3 方式で同時に消える。直すのは方式ではなく文書管理。残った誤りは方式ごとの原因で、正答率は測り直して確かめる。
# - 更新の反映は、ロングコンテキストなら次の呼び出し、RAG なら再インデックスの周期が下限。起動時に一度だけ読み込む作りは、いつまでも古い。
# - 入ることと読まれることは別（Lost in the Middle、2023 年のモデルの公表値）。毎回変わるチャンクは強い根拠を先頭と末尾に置き、
#   キャッシュする前置きは 1 つの固定の順序にする。前提をウィンドウの半分に置くのは使い分けの記事の経験則で、RULER はその余裕の理由の一つ。
