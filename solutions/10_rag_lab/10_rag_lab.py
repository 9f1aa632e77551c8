# %% [markdown]
# # 10 RAG 実習: チャンク分割・日本語の BM25・文脈付き検索を recall@20 で測る
#
# RAG の出来は、回答を書くモデルより手前の**検索**で決まります。答えの書かれたチャンクが上位に来なければ、
# どんなモデルも答えられません。このレッスンでは、Anthropic の記事「Introducing Contextual Retrieval」の手順を題材の規程集で組み立て、
# 記事と同じ物差し **1 − recall@20**（上位 20 チャンクで取りこぼした割合）で測ります。
#
# **このレッスンで身につくこと**
#
# - 固定長と条文区切りのチャンク分割を比べ、それぞれが何を失うかを実物で示せる
# - recall@k を「答えに要る事実のうち、上位 k チャンクに届いた割合」と定義し、答えのある質問で測れる
# - チャンクに決まった手順で文脈（見出し）を付け、索引を作り直して効き目を測れる
# - BM25・文脈付き BM25・順位の融合（RRF）を同じ表で比べ、公表値との違いを説明できる
# - 上位 k 件を返す検索では答えられない質問を見分けられる
#
# **任意の部分**（§10〜14、見出しに（任意）。採点される演習はありません）: 実 API で Claude に文脈を書かせる手順とその一度きりの費用、
# 条文チャンクだけが落とした質問、助詞と助動詞を索引から外す効き目、リランキング（実 API）、k を変えたときの recall の図。
#
# **所要時間** 約 70 分（任意の部分を含めると約 95 分）　**前提** 02（料金）、03（プロンプトキャッシュ）、08（30 問と key facts）

# %%
import ctxlab
from ctxlab import estimate
from ctxlab.api import budget
from ctxlab import corpus, published, retrieval
from ctxlab.costs import pricing
from ctxlab.labs import rag_lab

client = ctxlab.make_client()
ctxlab.show_cost("10_rag_lab", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. 題材と、このレッスンの実験台
#
# `rag_lab.Lab` が、現行版の規程を 2 通りにチャンク分割し、形態素解析（fugashi + unidic-lite）でトークンに分けて BM25 の索引を作ります。
# トークン分割の結果はこの実行のあいだキャッシュされるので、方式を何度比べても分割し直しません。
#
# 測る質問は 08 の 30 問のうち、規程に答えがある質問です（数は下に表示します）。「記載がない」質問には正解のチャンクがないので、recallを定義できません。

# %%
lab = rag_lab.Lab()   # chunk_tokens と overlap_tokens は既定値（下に表示）
doc_tokens = sum(estimate.estimate_text(d.text) for d in lab.docs)
whole_limit = published.figures()["contextual_retrieval"]["whole_prompt_below_tokens"]

print(f"現行の規程 {len(lab.docs)} ファイル、約 {doc_tokens:,} トークン（オフラインの推定: 日本語 1 文字 = 1 トークン）")
print(f"測る質問 {len(lab.questions)} 問（除外した記載のない質問: {', '.join(q.id for q in lab.left_out)}）")
print(f"チャンク: 約 {lab.chunk_tokens} トークン、重なり {lab.overlap_tokens} トークン")
for s in lab.sets.values():
    sizes = [c.meta["tokens"] for c in s.chunks]
    print(f"  {s.label}: {len(sizes)} チャンク、平均 {sum(sizes) / len(sizes):.0f} トークン、最大 {max(sizes)}")
print(f"記事の目安（公表値）: 知識ベースが {whole_limit:,} トークン未満なら、RAG を作らず全体をプロンプトに入れられる"
      f" → この規程集は {doc_tokens / whole_limit:.0%}")
for name in ("claude-haiku-4-5", pricing.DEFAULT_MODEL):   # 200K のウィンドウ（旧世代の Haiku 4.5）と、コースの既定のモデル
    window = pricing.get_model(name).context_window
    print(f"  このコースの前提（使用率はウィンドウの半分まで）: {name} のウィンドウ {window:,} → {window // 2:,} トークンまで"
          f" → この規程集は使用率 {doc_tokens / window:.0%}（{'前提を満たす' if doc_tokens <= window / 2 else '前提を超える'}）")

# %% [markdown]
# 記事の目安は、ウィンドウが 200K のモデルを前提に「ウィンドウに入るなら入れてしまえ」と言っています。このコースの前提（00）はもっと慎重で、
# 使用率をウィンドウの**半分**までに抑えます（08 で見たとおり、入ることと読まれることは別だからです）。200K のウィンドウなら、
# 前提の線は記事の目安の半分です。上の行のとおり、この規程集は 200K のウィンドウ（旧世代の Haiku 4.5）では前提を超え、1M のウィンドウなら前提を満たします。
# 本番で 1M のモデルを使えるなら、00〜08 で見たロングコンテキスト（とキャッシュ）が第一候補です。
# このレッスンは、規程集が大きくなったとき、あるいは上位数件だけを渡したいときに備えて、**検索の部品を自分で測れるようになる**ための実習です。
#
# ## 2. チャンク分割: 固定長か、条文の区切りか
#
# 記事の推奨はおよそ 800 トークンのチャンクと、分野に合わせて調整する重なり（オーバーラップ）です。ここでは 2 通りを作りました。
#
# - **固定長**: 文の切れ目で上に表示したトークン数ごとに切り、隣と重ねる（`retrieval.chunk_by_size`）
# - **条文**: 章・条の区切りで切り、同じ章の短い条はまとめ、長い条だけ文の切れ目で分ける（`retrieval.chunk_by_articles`）
#
# 固定長は文書の構造を知りません。条の途中で切れると、見出しと中身が別のチャンクに分かれます。
# 慶弔休暇の規程で、重なりでも救えない切れ目を探します。

# %%
doc = next(d for d in lab.docs if d.file == "hr_keicho.txt")
spans = lab.spans[doc.file]
size_chunks = [c for c in lab.chunks("size") if c.doc_id == doc.file]
for i, c in enumerate(size_chunks[:-1]):
    cut = rag_lab.cut_article(c, doc.text, spans)
    nxt = size_chunks[i + 1]
    if cut and nxt.start > cut["start"]:      # 次のチャンクは条文の始まりを含まない
        break
heading = cut["article"] + cut["caption"]
print(f"固定長チャンク {c.meta['index']}（{doc.title}）は {heading} の途中で終わる。末尾:")
print("    " + "\n    ".join(c.text.splitlines()[-4:]))
print(f"次のチャンク {nxt.meta['index']} の先頭:")
print("    " + "\n    ".join(nxt.text.splitlines()[:4]))
print(f"次のチャンクに見出し「{heading}」はあるか: {heading in nxt.text}")

# %% [markdown]
# 次のチャンクは表の途中から始まります。「2日」「1日」が何の日数なのか、見出しも表の列名もこのチャンクにはありません。
# 条文の区切りで切れば、この問題は起きません。ただし条文チャンクにも失うものがあります。
# 規程名は文書の 1 行目にしかないので、2 つ目以降のチャンクは**どの規程の条文なのか**を自分では言えません。

# %%
yukyu = next(d for d in lab.docs if d.file == "hr_yukyu_2025.txt")
arts = lab.chunks("articles")
i_carry = next(i for i, c in enumerate(arts) if c.doc_id == yukyu.file and "第6条" in c.meta["articles"])
carry = arts[i_carry]
print(carry.text[:160] + " …")
print()
print(f"規程名「{yukyu.title}」を含むか: {yukyu.title in carry.text}　「有給」を含むか: {'有給' in carry.text}")
print(f"文書の構造から付けられる見出し: {rag_lab.situate(carry, yukyu.text, yukyu.title, lab.spans[yukyu.file])}")

# %% [markdown]
# このチャンクは「有給の繰越上限は？」という質問の答え（繰越しできる日数の上限）を持っていますが、本文は略称の「年休」で書かれ、
# 「有給」という語も規程名もありません。見出しを前に付ければ、この欠けを埋められます（§4 で扱います）。
#
# ## 3. 測り方: 事実の recall@k
#
# 記事の recall@20 は「正解のチャンクのうち上位 20 件に入った割合」です。ここでは、固定長と条文でチャンクの切り方が違っても
# 比べられるように、チャンクではなく**事実**で数えます。
#
# - 質問ごとに、答えに欠かせない事実（`key_facts`、例: 「20日」）と、それが書かれたファイル（`gold_files`）が決まっています（08 と同じ）。
# - チャンクが**関連する**のは、正解のファイルから来ていて、**モデルに渡る文面**（文脈付きの方式では見出しを含む）に key fact を 1 つ以上含むときです。
# - 質問の recall@k = 上位 k 件の関連チャンクに含まれた key facts の割合。方式の recall@k は答えのある質問の平均、表には 1 − recall@k を載せます。
#
# 「関連チャンクが 1 つでも入れば 1」という数え方（any-hit）もありますが、複数の事実が要る質問で半分しか届かなくても満点になるので、
# ここでは事実の割合を使い、最後まで同じ定義で通します。1 問の例で、上位 5 件を見ます。

# %%
q = lab.question("q20")
qi = lab.questions.index(q)
texts, files = lab.texts("bm25_articles"), lab.files("bm25_articles")
print(f"{q.id}「{q.question}」 key_facts={list(q.key_facts)} gold_files={list(q.gold_files)}")
for rank, i in enumerate(lab.rankings("bm25_articles")[qi][:5], start=1):
    held = rag_lab.facts_held(texts[i], q.key_facts) if files[i] in q.gold_files else set()
    print(f"  {rank}. {lab.sets['articles'].headers[i][:48]:48s} 関連={'○ ' + ','.join(held) if held else '—'}")
for k in (1, 5, 20):
    print(f"recall@{k} = {lab.per_question('bm25_articles', k)[qi]:.2f}")

# %% [markdown]
# 2 つのチャンク分割を、文脈を付けない BM25 で測ります。取りこぼした質問も並べます（条文チャンクだけが落とした質問の中身は §10（任意））。

# %%
K = 20
for name in ("bm25_size", "bm25_articles"):
    per_q = lab.per_question(name, K)
    missed = [f"{q.id}({r:.2f})" for q, r in zip(lab.questions, per_q) if r < 1]
    print(f"{rag_lab.METHODS[name].label:18s} 1 − recall@{K} = {1 - lab.recall(name, K):.1%}   取りこぼし: {' '.join(missed)}")
    print(f"{'':18s} any-hit で数えると {1 - lab.recall(name, K, any_hit=True):.1%}")

# %% [markdown]
# ## 4. 文脈付きチャンク
#
# 記事の提案は、索引に入れる前に、各チャンクの前へ「文書全体のどこにある、何についての部分か」という短い文脈を付けることです。
#
# ### 4.1 オフライン: 決まった手順の文脈付与
#
# オフラインでは、文書の構造から決まった手順で見出しを作ります。規程名 > 章 > 条の範囲です。
# モデルは使わないので費用はかからず、何度作っても同じ結果になります。Claude が書く文脈とは別物なので、出力にはそう明記します（実 API で Claude に書かせる手順と、その一度きりの費用は §11（任意））。

# %%
print(rag_lab.OFFLINE_CONTEXT_LABEL)
arts_set = lab.sets["articles"]
for i in (i_carry, i_carry + 1):
    print("  " + arts_set.headers[i])
size_set = lab.sets["size"]
print("固定長チャンクにも、位置から同じ形の見出しを付けられます:")
print("  " + size_set.headers[size_set.chunks.index(nxt)])

# %% [markdown]
# ### 4.2 文脈を付けて索引を作り直す
#
# `rag_lab.contextualize` は、実 API なら Claude で全チャンクの文脈を書き（見積もりが `CTXLAB_BUDGET_USD` に収まるときだけ。手順と費用は §11（任意））、
# オフラインや予算超過のときは 4.1 の見出しを返します。どちらを使ったかは `method` に残ります。

# %%
ctx = rag_lab.contextualize(lab.chunks("articles"), lab.docs, client)
lab.use_context("articles", ctx)
print(f"条文チャンクの文脈: {ctx.method}（{len(ctx.headers)} 件）")
print("表での名前:", lab.label("ctx_bm25_articles"))

# %% [markdown]
# オフラインでは、この後の「文脈付き」の行はすべて**決まった手順の見出し**（規程名 > 章 > 条）で作ったものです。Claude が書いた文脈ではないので、
# §7 の表で記事の公表値（Claude が書いた文脈）と並べても、同じ方法の比較にはなりません。表の名前の［ ］に、どちらで作ったかを出します。
# 実 API で予算が足りれば、同じセルが Claude の文脈に置き換え、［ ］の中も変わります。

# %% [markdown]
# ## 5. BM25 と文脈付き BM25
#
# 同じ条文チャンクで、文脈なしと文脈付きを比べます。文脈付きでは、見出しもチャンクの一部として索引に入り、モデルにも渡ります。

# %%
base, ctx_bm25 = "bm25_articles", "ctx_bm25_articles"
print(f"1 − recall@{K}: {lab.label(base)} {1 - lab.recall(base, K):.1%} → {lab.label(ctx_bm25)} {1 - lab.recall(ctx_bm25, K):.1%}")
for q, a, b in zip(lab.questions, lab.per_question(base, K), lab.per_question(ctx_bm25, K)):
    if a != b:
        print(f"  {q.id}（{q.category}）{a:.2f} → {b:.2f}  {q.question}")
raw = lab.recall(ctx_bm25, K, judge="raw")
print(f"文脈付きの順位のまま、関連の判定を本文だけで行うと: {1 - raw:.1%}")

# %% [markdown]
# 最後の行が大事です。文脈付きの順位で並べても、本文だけで判定すると改善が消えるなら、効いたのは**順位**ではなく、
# 見出しが運んだ**中身**（ここでは規程名）です。「30 万円以上で稟議が要ると書いてある規程はどれか」という質問は、
# 条文を見つけるだけでなく、それが**どの規程か**が分からないと答えられません。

# %% [markdown]
# ## 6. ハイブリッド検索と順位の融合（RRF）
#
# 記事は、意味の近さで探す**埋め込み検索**と、語の一致で探す **BM25** を組み合わせ、2 つの順位を**ランク融合**でまとめています。
# 埋め込みは、質問の「給料」と規程の「給与」のような言い換えに強く、BM25 は固有名詞や数字、専門用語に強いからです。

# %%
backend = rag_lab.embedding_backend()
e = rag_lab.EMBEDDING_MODEL
if backend is None:
    print(f"埋め込みモデルはインストールされていないので、このレッスンでは使いません（オフラインで動くものだけを使うため）。")
    print(f"使うなら: {e['name']}（{e['licence']} ライセンス、{e['note']}）")
else:
    print(f"{backend} が使えます。{e['name']} をローカルに置けば、埋め込みの順位も RRF に加えられます。")

# %% [markdown]
# 埋め込みの代わりに、ここでは**もう 1 つのトークン分割**を使います。形態素解析は語を辞書形にそろえますが、辞書にない複合語や、
# 語の切れ目の違いには弱いことがあります。**文字 bigram**（2 文字ずつずらして切る）は辞書を使わず、語の一部でも一致します。

# %%
for text in ("有給休暇の繰越上限", "給与の支払日"):
    print(f"{text}: 形態素 {retrieval.tokenize(text)}  bigram {rag_lab.bigram_tokens(text)}")

# %% [markdown]
# 2 つの索引は、スコアの尺度がまったく違います。そこで**スコアではなく順位**を足し合わせるのが RRF（Reciprocal Rank Fusion）です。
# 文書 $d$ の融合スコアは、各ランキングでの順位 $\mathrm{rank}(d)$（1 から数える）を使って
#
# $$\mathrm{RRF}(d) = \sum_{\text{ランキング}} \frac{1}{k + \mathrm{rank}(d)}$$
#
# で、そのランキングに現れない文書は 0 を足します。$k$（慣例で 60）は、上位の 1 位と 2 位の差をどれだけ効かせるかを決めます。

# %% [markdown] nbgrader={"grade": false, "grade_id": "rrf-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: RRF を実装して、基準線の recall@20 を超える
#
# 関数 `rrf(rankings, k=60)` を書いてください。
#
# - `rankings` は、ランキング（チャンク番号のリスト、良い順）のリストです。
# - 戻り値は、融合スコアの高い順に並べたチャンク番号の `list` です。どれかのランキングに現れた番号をすべて 1 回ずつ含めます。
# - `retrieval.rrf`（`rag_lab.rrf`）はこの計算そのものなので、採点のときは使えません（呼ぶとエラーになります）。
# - 順位は 1 から数えます。同点の並びは問いません。
# - 下の確認のセルは、並び・型・全部の番号が入ること・ライブラリを呼んでいないことを確かめます。採点ではさらに非公開のテスト（空の入力、文字列の番号、`k` で並びが変わる例）が走ります。
#
# できたら、`lab.recall_with(rrf)` が、文脈付き条文チャンクの「形態素 BM25」と「文字 bigram BM25」の順位をあなたの `rrf` で融合し、
# recall@20 を測ります。基準線（文脈なしの BM25・条文チャンク）を超えれば合格です。ただし、これは**実装の確かめ**で、
# 融合が基準線より良い方式だという証拠ではありません。差が質問何問分かを確認のセルが表示します。§7 で見るとおり、1〜2 問の差は
# 偶然と区別できません。

# %% nbgrader={"grade": false, "grade_id": "rrf", "locked": false, "schema_version": 3, "solution": true, "task": false}
def rrf(rankings, k=60):
    ### BEGIN SOLUTION
    score, first_seen = {}, {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(item, len(first_seen))
    return sorted(score, key=lambda item: (-score[item], first_seen[item]))
    ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 辞書に「番号 → ここまでの合計スコア」をためていきます。各ランキングを `enumerate(ranking, start=1)` で読めば、順位が 1 から取れます。
# 最後に、合計スコアの大きい順に番号を並べます（`sorted` の `key` に、スコアの符号を反転したものを使うと便利です）。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "rrf-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
fused = rrf([[1, 2, 3], [3, 1, 2]])
only = rrf([[4], [5, 4]])
assert type(fused) is list, f"list を返してください: {type(fused).__name__}"
assert sorted(only) == [4, 5], f"どれかのランキングに現れた番号は、すべて 1 回ずつ入れてください: {only!r}"
a = ["x"] + [f"a{i}" for i in range(6)] + ["y"]                                  # x is 1st, y is 8th
b = [f"b{i}" for i in range(11)] + ["y"] + [f"c{i}" for i in range(9)] + ["x"]   # y is 12th, x is 22nd
close = rrf([a, b])
assert close.index("y") < close.index("x"), ("k = 60 では y（8 位と 12 位）が x（1 位と 22 位）をわずかに上回るはずです。"
                                              "順位を 1 から数えていますか（0 から数えると、この 2 つの並びが入れ替わります）")
assert list(fused) == [1, 3, 2], f"1 は 1 位と 2 位、3 は 3 位と 1 位、2 は 2 位と 3 位なので [1, 3, 2] のはずです: {list(fused)}"
mine, baseline = lab.recall_with(rrf, K), lab.recall(rag_lab.BASELINE, K)
print(f"あなたの rrf で融合: 1 − recall@{K} = {1 - mine:.1%}　基準線（{rag_lab.METHODS[rag_lab.BASELINE].label}）: {1 - baseline:.1%}")
assert mine > baseline, "基準線の recall@20 を超えていません。順位は 1 から数え、1/(k + 順位) を足し合わせていますか"
print(f"差は質問 {(mine - baseline) * len(lab.questions):.1f} 問分（{len(lab.questions)} 問）: 実装の確かめで、方式の優劣の証拠ではありません")
### BEGIN HIDDEN TESTS
# graded in the grader's kernel; in the learner's kernel (the graded build) retrieval.rrf holds the lesson's results only
baseline_recall = lab.recall(rag_lab.BASELINE, K)
outs = [rrf([]), rrf([[5, 4, 3]]), rrf([[1, 2], [3, 4]]), rrf([["a", "b"], ["b", "c"]]), rrf([[1, 2], [2, 1], [1]]),
        rrf([[7, 8], [9, 8]])]
big, small = rrf([["x", "y"], ["q", "y", "p", "x"]], k=60), rrf([["x", "y"], ["q", "y", "p", "x"]], k=1)
fused_recall = lab.recall_with(rrf, K)
for out in outs + [big, small]:
    assert type(out) is list and all(type(x) in (int, str) for x in out), f"a list of ids expected: {out!r}"
assert outs[0] == [] and outs[1] == [5, 4, 3] and sorted(outs[2]) == [1, 2, 3, 4] and outs[3][0] == "b"
assert len(outs[4]) == 2 and outs[5][0] == 8
assert big.index("y") < big.index("x") and small.index("x") < small.index("y"), "k must change the order"
assert fused_recall > baseline_recall + 0.02
assert list(rrf([])) == []
assert list(rrf([[5, 4, 3]])) == [5, 4, 3]
assert sorted(rrf([[1, 2], [3, 4]])) == [1, 2, 3, 4]
assert list(rrf([["a", "b"], ["b", "c"]]))[0] == "b"
assert len(list(rrf([[1, 2], [2, 1], [1]]))) == 2
assert list(rrf([[7, 8], [9, 8]]))[0] == 8
big, small = rrf([["x", "y"], ["q", "y", "p", "x"]], k=60), rrf([["x", "y"], ["q", "y", "p", "x"]], k=1)
assert list(big).index("y") < list(big).index("x") and list(small).index("x") < list(small).index("y"), "k must change the order"
### END HIDDEN TESTS

# %% [markdown]
# ## 7. 方式の表と、公表値との違い
#
# 記事と同じ形の表にします。上がこの規程集での測定、下が記事の公表値（測定ではありません）です。

# %%
measured = lab.table(K)
rag_lab.recall_table(measured, rag_lab.published_rows(), K, extra=[("+ リランキング", "実 API のみ（§13（任意））")])

# %% [markdown]
# 数字をそのまま並べて「記事と同じくらい効いた」と読むのは早計です。条件がいくつも違います。

# %%
n_q = len(lab.questions)
facts_per_q = sorted(len(q.key_facts) for q in lab.questions)
top_share = K * sum(c.meta["tokens"] for c in arts) / len(arts) / doc_tokens
print(f"質問 {n_q} 問: 1 問をまるごと落とすと 1 − recall が {1 / n_q:.1%} 動く"
      f"（事実が {facts_per_q[-1]} 個の質問なら、事実 1 個で {1 / n_q / facts_per_q[-1]:.1%}）")
print(f"チャンク {len(arts)} 個: 上位 {K} 件で、規程集全体のおよそ {top_share:.0%} を渡している")
print(f"埋め込み: {'使っていない（BM25 の 2 つのトークン分割で代用）' if rag_lab.embedding_backend() is None else '使える'}")
same = [(r, p) for r in measured for p in rag_lab.published_rows()
        if f"{r['one_minus_recall']:.1%}" == f"{p['one_minus_recall']:.1%}"]
for r, p in same:
    print(f"同じ値に見える行: 測定「{rag_lab.METHODS[r['method']].short if r.get('method') in rag_lab.METHODS else r['label']}」と"
          f"公表値「{p['label']}」がどちらも {p['one_minus_recall']:.1%}。方式も文書も数え方も違う測定の、偶然の一致です")

# %% [markdown]
# - **規模**: 記事の知識ベースは大きく、上位 20 件は全体のごく一部です。ここで上位 20 件が規程集に占める割合（上の 2 行目）はそれよりずっと大きく、取りこぼしがもともと起きにくい条件です。
# - **粒度**: 上の 1 行目のとおり、この質問数では 1 問の差が数ポイントになります。方式の差が 1〜2 問分しかないなら、偶然と区別できません（08 で見た「30 問集める」理由です）。
# - **言語と語彙**: 日本語は語の切れ目がないので、BM25 の前に形態素解析が要ります。質問は話し言葉（「給料」「有給」）、規程は書き言葉（「給与」「年休」）で、この言い換えを拾うのは本来は埋め込みの役目です。
# - **方式そのもの**: 記事の基準線は埋め込み検索で、ここの基準線は BM25 です。行の名前が似ていても、同じものを比べてはいません。
# - **一度に 2 つ**: 「文脈付き・RRF」の行は、文脈付与と順位の融合を同時に変えています（文脈なしの RRF の行はありません）。
#   どちらが効いたのかは、この表からは分けられません。
# - **数え方**: 記事はチャンク単位、ここは事実単位の recallです。
# - **偶然の一致**: 測定の行と公表値の行が同じ数字になることがあります（上のセルが、あれば表示します）。条件の違う測定が
#   たまたま同じ値になっただけで、「記事と同じ結果が出た」ことにはなりません。

# %% [markdown]
# ## 8. 検索の限界: 全体を見渡す質問
#
# 08 で `whole` に分類した質問は、答えの事実が何本もの規程に散らばっています。上位 k 件を返す検索は、
# **関連しそうな上位**を返すのであって、**該当するものをすべて**返すわけではありません。

# %%
best = "ctx_hybrid_articles"
whole = [q for q in lab.questions if q.category == "whole"]
display(lab.spread_table(whole, best, K, doc_tokens))
q = max(whole, key=lambda q: lab.needed_k(best, q) or 10**9)
r = lab.rankings(best)[lab.questions.index(q)][:K]
got = {f for i in r if lab.files(best)[i] in q.gold_files for f in rag_lab.facts_held(lab.texts(best)[i], q.key_facts)}
print(f"{q.id}「{q.question}」 上位 {K} 件に届かなかった事実: {sorted(set(q.key_facts) - got)}")
never = [q.id for q in whole if all(lab.per_question(n, K)[lab.questions.index(q)] < 1 for n in rag_lab.METHODS)]
print(f"どの方式でも recall@{K} が 1 に届かない whole の質問: {', '.join(never) or 'なし'}")

# %% [markdown]
# 最後の行の質問は、どの方式でも事実を上位 20 件に集められませんでした。全部そろえるには、右端の列のとおり規程集の大きな割合を渡す必要があります。
# これは検索の調整では直りません。長文コンテキストの記事の言う判断の基準、「必要な部分集合に名前をつけられるか」で考えます。
# つけられるなら検索すればよく、つけられない（質問がコーパス全体にまたがる）なら、ウィンドウに全体を入れるのが本来の使い方です。
#
# ## 9. 1 − recall@k を自分で計算する

# %% [markdown] nbgrader={"grade": false, "grade_id": "failure-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（3 点）: ランキングから 1 − recall@k を出す
#
# 関数 `one_minus_recall_at_k(rankings, questions, texts, files, k=20)` を書いてください。このレッスンの定義どおりに計算します。
#
# - `rankings[j]` は `questions[j]` のランキング（チャンク番号のリスト、良い順）、`texts[i]` と `files[i]` はチャンク `i` の文面とファイル名です。
# - チャンクが関連するのは、`files[i]` が質問の `gold_files` にあり、文面に `key_facts` の 1 つ以上を含むとき（`rag_lab.facts_held(text, facts)` が使えます）。
# - 質問の recall@k = 上位 k 件の関連チャンクに含まれた key facts の割合（同じ事実は 1 回だけ数える）。
# - `key_facts` のない質問（記載のない質問）は除いて平均し、1 − 平均 を `float` で返します。残る質問がなければ、また `k` が 1 未満なら `ValueError` を投げてください。
# - `lab.recall` や `retrieval.fact_recall` はこの計算そのものなので、採点のときは使えません（呼ぶとエラーになります）。`rag_lab.facts_held` は使えます。
# - 下の確認のセルは、このレッスンの表の値（k = 20 と k = 1）・`ValueError`・ライブラリを呼んでいないことを確かめます。採点ではさらに非公開のテスト（小さな手作りの例、記載のない質問だけのとき）が走ります。

# %% nbgrader={"grade": false, "grade_id": "one_minus_recall_at_k", "locked": false, "schema_version": 3, "solution": true, "task": false}
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    ### BEGIN SOLUTION
    if k < 1:
        raise ValueError("k must be at least 1")
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking)[:k]:
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    if not values:
        raise ValueError("no answerable question")
    return 1 - sum(values) / len(values)
    ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 質問ごとに「見つかった事実」の集合を作ります。上位 `k` 件（`ranking[:k]`）を順に見て、正解のファイルから来たチャンクだけ、
# 含む事実を集合に足します。集合なので、同じ事実が 2 つのチャンクにあっても 1 回です。recall は「見つかった数 ÷ 事実の数」。
# `key_facts` が空の質問は平均に入れません。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "failure-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
name = "bm25_articles"
mine = one_minus_recall_at_k(lab.rankings(name), lab.questions, lab.texts(name), lab.files(name), K)
at_1 = one_minus_recall_at_k(lab.rankings(name), lab.questions, lab.texts(name), lab.files(name), 1)
assert type(mine) in (float, int), f"float を返してください: {type(mine).__name__}"
print(f"あなたの計算: {mine:.4f}　Lab の値: {1 - lab.recall(name, K):.4f}")
assert abs(mine - (1 - lab.recall(name, K))) < 1e-9, "この節の表の値と一致しません。正解のファイル以外のチャンクを数えていないか、事実を重複して数えていないか確かめてください"
assert abs(at_1 - (1 - lab.recall(name, 1))) < 1e-9, "k = 1 の値が合いません。上位 k 件だけを見ていますか"
try:
    one_minus_recall_at_k(lab.rankings(name), lab.questions, lab.texts(name), lab.files(name), 0)
except ValueError:
    pass
else:
    raise AssertionError("k が 1 未満なら、課題のとおり ValueError を投げてください")
### BEGIN HIDDEN TESTS
# graded in the grader's kernel; in the learner's kernel (the graded build) the recall functions and the Lab's
# recall hold the lesson's results only
Q = corpus.Question
t = ["上限は20日", "20日と12文字以上", "上限は20日", "無関係"]
f = ["a.txt", "a.txt", "b.txt", "a.txt"]
q1 = Q("x1", "?", "", ("20日", "12文字以上"), ("a.txt",), "single")
q0 = Q("x0", "?", "", (), (), "unanswerable")
name = "ctx_hybrid_articles"
ranks, texts_, files_ = lab.rankings(name), lab.texts(name), lab.files(name)
expected = {k: 1 - lab.recall(name, k) for k in (1, 5, 50)}
got = [one_minus_recall_at_k([[3, 2, 0, 1]], [q1], t, f, 2), one_minus_recall_at_k([[3, 2, 0, 1]], [q1], t, f, 3),
       one_minus_recall_at_k([[0, 1]], [q1], t, f, 50), one_minus_recall_at_k([[0, 2]], [q1], t, f, 2),
       one_minus_recall_at_k([[1], [0]], [q0, q1], t, f, 1), one_minus_recall_at_k([[], [1]], [q1, q1], t, f, 5)]
real = {k: one_minus_recall_at_k(ranks, lab.questions, texts_, files_, k) for k in expected}
for bad in [([[0]], [q0], t, f, 1), ([[0]], [q1], t, f, 0)]:
    try:
        one_minus_recall_at_k(*bad)
        raise AssertionError(f"ValueError expected for {bad[-1]=}")
    except ValueError:
        pass
for value in got + list(real.values()):
    assert type(value) in (float, int), f"a float expected: {value!r}"
for value, want in zip(got, [1.0, 0.5, 0.0, 0.5, 0.5, 0.5]):
    assert abs(value - want) < 1e-9
for k in expected:
    assert abs(real[k] - expected[k]) < 1e-9
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "rag-decision-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 上司が「記事の表では、文脈付き検索とリランキングで検索の失敗が大きく減っている。うちの規程検索にもすぐ入れよう」と言っています。
# このレッスンで**測った**数字を 2 つ以上使って、あなたの返答を書いてください（入れる・入れない・先に測ることのどれでも構いません。理由が大事です）。

# %% [markdown] nbgrader={"grade": true, "grade_id": "rag-decision", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# （例・数字はノートブックが表示した値を引く）この規程集は §1 で表示したとおり記事の目安より小さく、1M のウィンドウなら使用率も半分を下回るので、
# まずは全体をキャッシュして渡す方式が候補になる。RAG にする場合でも、§7 の表で文脈なし BM25 と「文脈付き + RRF」の差は数問分で、
# 答えのある質問が少なく 1 問で数ポイント動くため、公表値と同じ効き方をしたとは言えない。§5 では、文脈付きの改善は
# 判定を本文だけにすると消えた（効いたのは規程名が載ったこと）。文脈付与は一度きりで、任意の §11 の見積もりでは今の小型モデルなら
# 規程が最小キャッシュ長に届き、100 万文書トークンあたり記事の見積もりより安い（旧世代の Haiku 4.5 なら届かない規程が多く、割高になる）。
# 費用は入れない理由にならない。§8 の whole の質問は、どの方式でも上位 20 件に事実がそろわなかった。
# したがって「すぐ入れる」ではなく、実際の問い合わせを増やして測り直し、全体を見渡す質問が多いならロングコンテキストを選ぶ、と返す。
# （採点の目安: 測定値を 2 つ以上正しく引いている 1 点、規模・質問数・whole の限界・費用のいずれかで公表値との違いを説明し、判断につなげている 1 点）
#
# ### BEGIN RUBRIC
# - 2 点（満点）: このレッスンで測った数字を 2 つ以上正しく引き（規程集のトークン数と 20 万トークンの目安、文脈付き + RRF と BM25 の recall の差と 25 問での 1 問の重み、whole の質問の取りこぼしなど）、公表値との違い（規模・質問数・判定の仕方）を説明して、判断（入れる／入れない／先に測る）につなげている。
# - 1 点（半分）: 測った数字を 2 つ以上正しく引いているが判断につながっていない、または測った数字が 1 つだけ。
# - 0 点: 公表値だけで判断している、または測った数字を引いていない。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("rag-decision")

# %% [markdown]
# ## まとめ
#
# - チャンク分割は何かを失う。固定長は条文を途中で切り、見出しと中身を分ける。条文チャンクは規程名と、隣の条が持っていた手がかりを失う。
# - 検索は「答えに要る事実のうち、上位 k 件に届いた割合」で測る。定義を決めたら、全部の方式に同じ定義を使う。
# - 文脈付与は、オフラインなら文書の構造から決まった手順で、実 API なら Claude と文書のキャッシュで作る。費用は価格表と式から出せ、最小キャッシュ長に届かない短い文書では割高になる（どの文書が届くかはモデルで違う。§11、任意）。
# - 2 つの順位は、スコアの尺度が違っても RRF で融合できる。埋め込みが使えない環境では、2 つのトークン分割の融合で代用して効き目を測れる。
# - 公表値は条件の違う測定。自分の文書と質問で測り直し、差が何問分かを確かめる。全体を見渡す質問は、上位 k 件の検索では答えられない。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("10_rag_lab"))
check

# %% [markdown]
# ## 10. （任意）条文チャンクだけが落とした質問
#
# §3 の表のとおり、条文チャンクのほうが良いとは限りません。条文チャンクだけが落とした質問を、1 つ開いて理由を確かめます。

# %%
only_articles = [q for q, a, b in zip(lab.questions, lab.per_question("bm25_size", K), lab.per_question("bm25_articles", K))
                 if b < a]
q = only_articles[0]
fact = q.key_facts[0]
q_terms = set(retrieval.tokenize(q.question))
print(f"{q.id}「{q.question}」 答えに要る事実: {fact}（{q.gold_files[0]}）")
for name in ("articles", "size"):
    s = lab.sets[name]
    i = next(i for i, c in enumerate(s.chunks) if c.doc_id == q.gold_files[0] and fact in c.text)
    shared = sorted(q_terms & set(retrieval.tokenize(s.chunks[i].text)))
    print(f"  {s.label}: 事実を含むチャンク「{rag_lab.situate(s.chunks[i], lab.doc_text(q.gold_files[0]), None, lab.spans[q.gold_files[0]])}」")
    print(f"      質問と共通の語: {shared}")

# %% [markdown]
# 上の例では、条文チャンクにすると、答えの事実がある条と、質問の語がある隣の条が別のチャンクに分かれました（共通の語の行を見比べてください）。
# 固定長チャンクは両方の条をまたいでいたので、質問の語で見つかりました。条文で切ると、**隣の条が持っていた手がかり**を失います。
# どちらの切り方が良いかは文書と質問の書き方で変わるので、自分の質問で測って決めます。

# %% [markdown]
# ## 11. （任意）実 API で Claude に文脈を書かせる、その一度きりの費用
#
# ### 11.1 実 API: Claude に文脈を書かせ、文書はキャッシュする
#
# 記事の方法では、チャンクごとに Claude を呼び、文書全体とチャンクを渡して 50〜100 トークンほどの文脈を書かせます。
# 記事のプロンプトを日本語で書き直したものが `rag_lab.context_request` です。要点は並べ方にあります。
#
# - 文書全体を先頭のブロックに置き、そこに `cache_control` を付ける（区切り）。
# - チャンクと指示は、区切りの**後ろ**に置く。
#
# こうすると、同じ文書の 2 つ目以降のチャンクは文書部分をキャッシュから読み、新しく払うのはチャンクと指示だけになります。
# 最初の応答が始まるまでキャッシュは使えないので、1 つの文書の呼び出しは並列にせず順に送ります。

# %%
req = rag_lab.context_request("（ここに文書全体）", "（ここにチャンク）")
for block in req["messages"][0]["content"]:
    print(f"--- cache_control={block.get('cache_control')}")
    print(block["text"])

# %% [markdown]
# いちばん長い規程の最初の 3 チャンクで、実際に送ってみます。実 API では料金が発生するので、先に見積もりを `budget.check` に通します。
# オフラインの sandbox は文脈を書けません（文書から文を抜き出して返すだけです）。ここで確かめるのは、料金を決める `usage` の欄です。

# %%
big = max(lab.docs, key=lambda d: estimate.estimate_text(d.text))
demo = [c for c in lab.chunks("articles") if c.doc_id == big.file][:3]
est = rag_lab.context_cost(estimate.estimate_text(big.text), [c.meta["tokens"] for c in demo])
budget.check(est.total, client, f"文脈付与の実演（{big.title}・{len(demo)} チャンク、{rag_lab.CONTEXT_MODEL}）")
for c in demo:
    msg = client.messages.create(**rag_lab.context_request(big.text, c.text))
    u = msg.usage
    print(f"書き込み {u.cache_creation_input_tokens:>5,}  読み出し {u.cache_read_input_tokens:>5,}  "
          f"キャッシュ外の入力 {u.input_tokens:>4,}  出力 {u.output_tokens:>3}  → ${pricing.usage_cost(u, rag_lab.CONTEXT_MODEL).total:.4f}")

# %% [markdown]
# 1 回目が文書を書き込み、2 回目からは読み出しています。キャッシュ外の入力は、チャンクと指示の分だけです。
#
# ### 11.2 一度きりの費用を計算する
#
# 1 つの文書（ブロック全体で $D$ トークン）を $n$ 個のチャンク（$c_i$ トークン）に分け、指示が $p$ トークン、文脈の出力が $o$ トークンのとき、
# 入力単価 $P_\mathrm{in}$、出力単価 $P_\mathrm{out}$、書き込み倍率 $w$、読み出し倍率 $r$ で
#
# $$\text{費用} = P_\mathrm{in}\Big(wD + (n-1)\,rD + \sum_i (c_i + p)\Big) + P_\mathrm{out}\, n\, o$$
#
# です（1 回目が書き込み、残りの $n-1$ 回が読み出し）。キャッシュしなければ、毎回 $D$ を通常単価で払います。
# 記事の前提（8k トークンの文書、800 トークンのチャンク）と、このコースの価格表で計算します。

# %%
published_cost = published.figures()["contextual_retrieval"]["cost_usd_per_million_document_tokens"]
m = pricing.get_model(rag_lab.CONTEXT_MODEL)
with_cache = rag_lab.cost_per_million_document_tokens(8000, 800)
no_cache = rag_lab.cost_per_million_document_tokens(8000, 800, cache=False)
print(f"{m.display_name}（入力 ${m.input_usd_per_mtok} / 出力 ${m.output_usd_per_mtok}、書き込み {m.cache_write_5m_multiplier}x、"
      f"読み出し {m.cache_read_multiplier}x）、指示 p = {rag_lab.CHUNK_PROMPT_TOKENS} トークン、出力 o = {rag_lab.CONTEXT_OUTPUT_TOKENS} トークン")
print(f"  キャッシュあり: 100 万文書トークンあたり ${with_cache.per_million_document_tokens:.2f}"
      f"（書き込み ${with_cache.cache_write:.4f} + 読み出し ${with_cache.cache_read:.4f} + チャンクと指示 ${with_cache.uncached_input:.4f}"
      f" + 出力 ${with_cache.output:.4f}、1 文書 {with_cache.calls} 回の呼び出し）")
print(f"  キャッシュなし: ${no_cache.per_million_document_tokens:.2f}")
print(f"記事の見積もり（公表値）: ${published_cost}")
scale = published_cost / with_cache.per_million_document_tokens
print(f"  → 同じ式で ${published_cost} になるのは、単価がこの表の {scale:.2f} 倍"
      f"（入力 ${m.input_usd_per_mtok * scale:.2f} / 出力 ${m.output_usd_per_mtok * scale:.2f}）のモデル")

# %% [markdown]
# 記事の数字は、当時の安い小型モデルの単価で出したものです。式は同じで、単価が変われば費用もそのまま比例します。
# 次に、この規程集を実際のチャンクで見積もります。ここで効いてくるのが**最小キャッシュ長**です。これより短い文書は、
# `cache_control` を付けてもキャッシュされず（エラーにもなりません）、チャンクごとに文書全体を通常単価で払います。
# 最小キャッシュ長はモデルで違うので、今の小型モデルと、旧世代の Haiku 4.5（記事の時点の小型モデル）の両方で数えます。

# %%
arts = lab.chunks("articles")
reach = {}
for model in (rag_lab.CONTEXT_MODEL, "claude-haiku-4-5"):
    mm = pricing.get_model(model)
    n_min, confirmed = pricing.min_cacheable_tokens(mm)
    reach[model] = sum(estimate.estimate_text(d.text) + rag_lab.DOC_WRAPPER_TOKENS >= n_min for d in lab.docs)
    cost = rag_lab.corpus_context_cost(lab.docs, arts, model=model)
    print(f"{mm.display_name}: 最小キャッシュ長 {n_min:,} トークン{'' if confirmed else '（未確認の仮定）'}以上の文書 "
          f"{len(lab.docs)} 件中 {reach[model]} 件 → 条文チャンク {cost.calls} 個の文脈付与: 合計 ${cost.total:.2f}、"
          f"100 万文書トークンあたり ${cost.per_million_document_tokens:.2f}")
per_million = {model: rag_lab.corpus_context_cost(lab.docs, arts, model=model).per_million_document_tokens
               for model in (rag_lab.CONTEXT_MODEL, "claude-haiku-4-5")}
print(f"記事の見積もり（公表値）: 100 万文書トークンあたり ${published_cost}")

# %% [markdown]
# 規程は 1 本が短く、旧世代の Haiku 4.5 の最小キャッシュ長には多くが届きませんでした（上の 2 行目）。届かない文書は
# チャンクごとに全体を通常単価で払うので、Haiku 4.5 では記事の見積もりより割高になります。今の小型モデルは最小キャッシュ長が短く
# （第三者の資料による値）、より多くの規程が届き（上の 1 行目）、100 万文書トークンあたりの費用は記事の見積もりを下回ります。モデルを替えると、同じ手順の費用がこの理由でも変わります。
# ここで使っている日本語のトークン数は推定（1 文字 = 1 トークン）で、実際のトークナイザーはもっと多く数えることがあります。
# しきい値の近くで決めるときは、実 API の `count_tokens` を使って数え直してください（01）。

# %% [markdown]
# ## 12. （任意）助詞と助動詞を外す、文脈で順位は動いたか
#
# ### 12.1 助詞と助動詞を索引から外す
#
# 形態素解析の結果には「の」「は」「を」「って」「ます」のような助詞・助動詞も入っています。BM25 の IDF はどこにでもある語をほとんど
# 数えませんが、ゼロではありません。fugashi は語ごとに品詞（UniDic の品詞）を返すので、助詞と助動詞を索引からも質問からも外せます
# （`retrieval.content_terms`）。品詞で外すので、外す語の一覧を手で書く必要はありません。

# %%
q = lab.question("q01")
print(f"{q.question}")
print("  すべての語    :", retrieval.tokenize(q.question))
print("  助詞・助動詞を除く:", retrieval.content_terms(q.question))
print("  品詞:", [(lemma, pos) for pos, _, lemma in retrieval.tagged(q.question)])

plain, content = "bm25_articles", "bm25_articles_content"
print(f"\n1 − recall@{K}: {lab.label(plain)} {1 - lab.recall(plain, K):.1%} → {lab.label(content)} {1 - lab.recall(content, K):.1%}")
changed = [(q, a, b) for q, a, b in zip(lab.questions, lab.per_question(plain, K), lab.per_question(content, K)) if a != b]
for q, a, b in changed:
    print(f"  {q.id}（{q.category}）{a:.2f} → {b:.2f}  {q.question}")
print(f"動いた質問 {len(changed)} 問、差し引き 質問 {sum(b - a for _, a, b in changed):+.1f} 問分")

# %% [markdown]
# 上の行が、この規程集と質問で測った効き目です（sandbox は関係しません。検索だけの測定です）。話し言葉の質問（「〜って」「〜ますか」）は助詞と助動詞が多く、規程の条文にも「は」「の」が
# どこにでもあるので、それらが一致しただけの無関係なチャンクが上位に入ることがあります。外すとその分だけ、内容の語の一致で並びます。
# ただし、差し引きが質問 1〜2 問分なら、§7 で見るとおり偶然と区別できません。上がった質問と下がった質問の両方を見て、自分の質問で測り直します。

# %% [markdown]
# ### 12.2 文脈付きで、順位は動いたか
#
# §5 の文脈付き BM25 で、順位のほうはどうでしょうか。答えの事実を持つ最初のチャンク（本文で判定）が何位に来たかを、質問ごとに比べます。

# %%
moved = [(q, lab.first_relevant(base, q), lab.first_relevant(ctx_bm25, q)) for q in lab.questions]
moved = [(q, a, b) for q, a, b in moved if a != b]
print(f"最初の関連チャンクの順位が変わった質問: {len(lab.questions)} 問中 {len(moved)} 問")
for q, a, b in moved:
    print(f"  {q.id} {a} 位 → {b} 位  {q.question}")

# %% [markdown]
# オフラインの決まった手順の見出しが足すのは、規程名・章・条の見出しの語だけです。ここの質問は話し言葉で、規程名や条の見出しをほとんど口にしないので、
# 順位はあまり動きません。記事が勧めるように、Claude に書かせる文脈のプロンプトへ**用語集**（「給料 = 給与」「有給 = 年休」のような
# 社内の言い換え）を足せば、質問の語が文脈に入り、順位にも効く見込みがあります。実 API で試すなら
# `rag_lab.contextualize(..., glossary={"給料": "給与", ...})` と渡します。用語集はどの呼び出しでも同じなので、system に置かれ、文書と一緒にキャッシュされます。
# 用語集は評価に使う質問から作らず、問い合わせの履歴など別の資料から作ってください。評価の質問に合わせて作ると、測った数字が実力より良く出ます。

# %% [markdown]
# ## 13. （任意）リランキング（実 API の手順）
#
# 記事はさらに、最初の検索で多め（150 件）に取り、より精度の高いモデルで並べ直して上位 20 件を使う**リランキング**を加えています。
# `rag_lab.rerank` は、融合した順位の上位の候補（下のセルの `candidates`）を Claude に渡して並べ直させる実装です。呼び出しは質問ごとに 1 回で、見積もりを `budget.check` に通してから送ります。
# sandbox は文書から文を抜き出すだけで順位を付けられないので、オフラインでは実行しません。

# %%
reranked = rag_lab.rerank(lab, client, "ctx_hybrid_articles", candidates=50, top_n=K)
if reranked is not None:
    print(f"+ リランキング（Claude）: 1 − recall@{K} = {1 - lab.recall('ctx_hybrid_articles', K, rankings=reranked):.1%}"
          f"（{len(lab.questions)} 問。§7 の表の「文脈付き・RRF」の行と比べます）")

# %% [markdown]
# ## 14. （任意）図: k を変えたときの recall
#
# 表は k = 20 の 1 点だけです。k を 1 から順に大きくすると、方式の差がどこで開き、どこで消えるかが見えます。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401  (Japanese font)

ks = list(range(1, 51))
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
for name, method in rag_lab.METHODS.items():
    ax1.plot(ks, lab.curve(name, ks), label=method.label)
ax1.axvline(K, ls=":", color="gray")
ax1.set_xlabel("k（上位何件のチャンクを渡すか）")
ax1.set_ylabel(f"recall@k（{len(lab.questions)} 問の平均）")
ax1.set_title("事実の recall と k")
ax1.legend(fontsize=8, loc="lower right")
ax1.grid(alpha=0.3)

pub = rag_lab.published_rows()
labels = ([rag_lab.METHODS[r["method"]].short if r.get("method") in rag_lab.METHODS else r["label"] for r in measured]
          + [f"公表: {r['label']}" for r in pub])
values = [r["one_minus_recall"] * 100 for r in measured] + [r["one_minus_recall"] * 100 for r in pub]
colors = ["tab:blue"] * len(measured) + ["lightgray"] * len(pub)
ax2.barh(range(len(labels)), values, color=colors)
ax2.set_yticks(range(len(labels)), labels, fontsize=8)
ax2.invert_yaxis()
ax2.set_xlabel(f"1 − recall@{K} (%)")
ax2.set_title("青: この規程集で測定　灰: 記事の公表値（測定ではない）", fontsize=9)
plt.tight_layout()
