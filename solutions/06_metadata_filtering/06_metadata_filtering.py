# %% [markdown]
# # 06 メタデータで絞って、丸ごと渡す
#
# 全部を渡すにはウィンドウや料金が合わない。かといって RAG を組むほどでもない。その間にあるのが、
# ファイルのメタデータ（部署・文書の種類・年度）で数件に絞り、その数件を**丸ごと**渡す方式です。
# 分割も埋め込みもベクトル DB も要りません。このレッスンでは、その作り方と、選んでよいかの確かめ方を扱います。
#
# **このレッスンで身につくこと**
#
# - 質問から絞り込みのキーを辞書で取り出し、取れないときの扱い（モデルでの分類、固定セット）を決められる
# - MAX_DOCS と固定セット（あらかじめ決めたファイルの組）で、現行版だけの数件に絞れる
# - 現場の 30 問で filter recall（要るファイルが絞り込み後に残った割合）を測り、9 割の線で判定できる
# - 固定セットならキャッシュが効き、質問ごとに選んだファイル集合では効かないことを sandbox で確かめ、差額を出せる
#
# **任意の部分**（§7、見出しに（任意）。採点される演習はありません）: 絞ったファイルで実際に 1 問答えさせる例、料金の倍率を量と単価に分ける計算、
# 使い分けの記事の絞り込みの月額が前提にしたヒット率の逆算、辞書の語の当たり方、filter recall の図。
#
# **所要時間** 約 75 分（任意の部分を含めると約 90 分）　**前提** 00（3 つの方式）、02（料金）、03（プロンプトキャッシュの前方一致）

# %%
import ctxlab
from ctxlab import estimate
from ctxlab.api import budget, tokens
from ctxlab import corpus
from ctxlab.labs import metadata_filtering
from ctxlab.costs import pricing
from ctxlab.api.messages import answer_text, question_request

client = ctxlab.make_client()
ctxlab.show_cost("06_metadata_filtering", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）
MODEL = ctxlab.lesson_model()   # いまの Opus（online.LESSON_MODEL）。CTXLAB_MODEL で別のモデルを選べる

# %% [markdown]
# ## 1. 誰が文書を選ぶか: 人が決めたキー
#
# 00 で見たとおり、3 つの方式の違いは「渡す文書を誰が選ぶか」だけです。ロングコンテキストは選ばず、RAG は検索が選び、
# このレッスンの方式は**人が決めたキー**で選びます。キーに使えるのは、ファイルに付いているメタデータです。
# 題材の規程には、カタログ（`data/rules/catalog.json`）に部署・文書の種類・年度・版・施行日・置き換えた旧版が付いています。
#
# 1 回に渡すファイル数の上限を `MAX_DOCS` と呼びます（使い分けの記事と同じ 8 件）。部署ごとに、現行版が何件あるかを見ます。

# %%
docs = corpus.load()                      # 現行版だけ
print(f"現行 {len(docs)} ファイル、MAX_DOCS = {metadata_filtering.MAX_DOCS}")
for dept, name in corpus.DEPARTMENTS.items():
    files = [d for d in docs if d.dept == dept]
    note = "MAX_DOCS を超える" if len(files) > metadata_filtering.MAX_DOCS else ""
    print(f"  {name:8s} {len(files):>2} 件 {corpus.total_chars(files):>7,} 字  {note}")

d = corpus.by_file()["hr_yukyu_2025.txt"]
print(f"\nメタデータの例: {d.file} 部署={d.dept} 種類={d.doc_type} 年度={d.fiscal_year} "
      f"第{d.version}版 {d.effective_date} 施行 置き換えた旧版={d.supersedes}")

# %% [markdown]
# 部署で絞るだけでは、`MAX_DOCS` に収まらない部署があります。その扱いは 3 で決めます。先に、キーを質問から取り出します。
#
# ## 2. キーを質問から取り出す
#
# 使い分けの記事の例は、質問に部署名（「人事」「経理」「情報システム」）が入っていればその部署、というものでした。
# 現場の 30 問で、部署名を含む質問がいくつあるか数えます。

# %%
qs = corpus.questions()
qmap = {q.id: q for q in qs}
ARTICLE_DEPTS = {"人事": "hr", "経理": "fin", "情報システム": "it"}
named = [q for q in qs if any(k in q.question for k in ARTICLE_DEPTS)]
print(f"部署名を含む質問: {len(named)} / {len(qs)} 問")

# %% [markdown]
# 社員は部署名では聞きません。「給料」「休み」「パソコン」のように**用件の言葉**で聞きます。そこで、用件の言葉から部署と
# 固定セットを引く辞書 `metadata_filtering.KEYWORDS` を用意しました。語はファイルの表題、条文の見出し、社員が使う言い換え
# （給与 → 給料、休暇 → 休み、PC → パソコン）から集めています。全角・半角と大文字・小文字は揃えてから比べます。

# %%
for name, words in metadata_filtering.KEYWORDS.items():
    b = metadata_filtering.BUNDLES[name]
    print(f"{b.label:10s} {len(words):>2} 語: {'・'.join(words[:9])} …")

# %% [markdown]
# 辞書の語が 1 つも当たらない質問（下の q27）は、質問をモデルに渡して部署を **1 語で**答えさせます（`metadata_filtering.classify`）。
# 呼び出しが 1 回増えるぶん待ち時間が延びます（使い分けの記事の目安を下に表示します）。それでもベクトル DB を建てて再インデックスを回し続けるより軽い作りです。
# ただし、この分類は実 API のときだけ使います。オフラインの sandbox は文を抜き出すだけで分類はできないので、
# 代わりに決めておいた固定セット（全社共通）を渡し、そう表示します。

# %%
print(f"分類の呼び出しで延びる時間（使い分けの記事の値、この環境の測定ではない）: 約 {metadata_filtering.CLASSIFY_LATENCY_S} 秒")
sel = metadata_filtering.select(qmap["q27"].question, client)
print(f"q27 {qmap['q27'].question} → {sel.source}: {sel.note}")

# %% [markdown]
# ## 3. MAX_DOCS と固定セット
#
# 部署で絞った結果が `MAX_DOCS` を超えるときは、**あらかじめ決めたファイルの組**（固定セット）を渡します。
# `metadata_filtering.BUNDLES` は部署ごとの名前付きのセットで、次の 3 つを守っています。
#
# - **現行版だけ**。旧版を混ぜると、モデルは新旧を両方読んで混ぜます（08 で扱います）。
# - **`MAX_DOCS` 以下**。`MAX_DOCS` を超える部署（§1 の表）は、用件で 2 つのセットに分けました。就業規則と経理規程は各部署の土台なので両方に入れています。
# - **中身も順序も固定**（カタログ順）。同じセットはいつも同じ前置きになり、キャッシュに残ります（5 で確かめます）。

# %%
by_file = corpus.by_file()
for b in metadata_filtering.BUNDLES.values():
    count = tokens.count_documents([by_file[f].text for f in b.files], client=client)
    old = [f for f in b.files if not by_file[f].current]
    print(f"{b.name:15s} {b.label:10s} {len(b.files)} 件 {count.tokens:>7,} tokens  旧版 {len(old)} 件")
print(f"（{count.method}）")

# %% [markdown]
# キーと固定セットを合わせたのが `metadata_filtering.select(question, client)` です。部署の現行版が `MAX_DOCS` 以内ならそのまま、
# 超えるなら辞書が指したセットを渡します。戻り値の `note` が、何を根拠に何を渡したかを 1 行で説明します。
# 絞ったファイルは、分割せずに 1 ファイル 1 ブロックで丸ごと渡します（実際に 1 問送る例は §7.1（任意））。

# %%
for qid in ("q20", "q03", "q05", "q14"):
    sel = metadata_filtering.select(qmap[qid].question, client)
    print(f"{qid} {qmap[qid].question[:30]}")
    print(f"     → {sel.note}")

# %% [markdown]
# ## 4. 選べるかを確かめる: filter recall と 9 割の線
#
# 絞り込みは、要るファイルを落とした時点で負けです。渡っていない規程は、モデルがどれだけ賢くても読めません。
# そこで、答えを比べる前に**要るファイルが絞り込み後に残ったか**を数えます。現場の 30 問には、答えに要るファイル
# （`gold_files`）を人が指定してあります。
#
# - **filter recall** = 要るファイルが**すべて**残った質問の割合（答えられる質問だけで数える。規程に無い質問には要るファイルがない）
# - 参考に、ファイル単位の filter recall（要るファイルのうち残ったものの割合）も出します
# - 使い分けの記事の線は **9 割**（`metadata_filtering.VIABLE_RECALL`）。切るなら絞りすぎで、固定セットを広げるか RAG に移ります
#
# ここでは辞書と固定セットだけで測ります（モデルでの分類を使わないので、実 API でも同じ結果になります）。

# %%
report = metadata_filtering.filter_recall(metadata_filtering.select_files)
display(report.table())
print(f"\n落ちた質問 {len(report.failures)} 問:")
for r in report.failures:
    print(f"  {r.id} [{metadata_filtering.CATEGORY_JA[r.category]}] {r.reason}  落ちたファイル: {', '.join(r.missing)}")

# %% [markdown]
# 落ちた質問の理由は、どれも同じ形をしています。要るファイルが**部署をまたいでいる**のです。
# キーは 1 つの部署しか指さないので、「退職するときにやることをすべて」のような規程全体をまたぐ質問は、この方式では原理的に落ちます。
# 逆に、要るファイルが 1 つの部署に収まる質問がどれだけ残ったかを数えると、方式の向き不向きがはっきりします。

# %%
one_dept = [r for r in report.results if len({by_file[g].dept for g in r.gold}) == 1]
cross = [r for r in report.results if r not in one_dept]
print(f"要るファイルが 1 部署に収まる質問: {sum(r.ok for r in one_dept)}/{len(one_dept)} 問が残った")
print(f"部署をまたぐ質問:                 {sum(r.ok for r in cross)}/{len(cross)} 問が残った")
verdict = "選べる" if report.viable else "このままでは選べない（セットを広げるか、またぐ質問を別の方式へ）"
print(f"\n判定: filter recall {report.recall:.0%} → {verdict}")

# %% [markdown]
# 読み方は 3 つあります。
#
# 1. **現場の質問の混ざり方で決まる。** 1 部署で済む質問ばかりの窓口なら、この方式は 9 割を越えます。
#    部署をまたぐ質問の割合が、そのまま落ちる割合になります。
# 2. **直し方は「セットを広げる」。** 組織図ではなく、質問が実際にまたぐ単位（退職、購入と決裁、在宅勤務の始め方…）で
#    部署横断の固定セットを作れば救えます（演習 1）。キーがファイルのメタデータで表せない質問が多いなら、RAG に移ります。
# 3. **測った 30 問で辞書を調整すると、recall は実力より高く出ます。** 辞書やセットを直したら、調整に使っていない新しい質問でも測り直します。
#
# ## 5. 固定セットはキャッシュを温めたままにする
#
# キャッシュは前方一致で効きます（03）。同じセットを同じ順で送れば前置きが同じなのでヒットし、質問ごとに選び直した
# ファイルの並びを送れば前置きが毎回変わってミスします。比べる相手として、`metadata_filtering.per_question_files` を用意しました。
# 部署までは同じキーで絞り、その中で**質問に近い順に** `MAX_DOCS` 件を選びます。違いは「毎回選び直すか」と、もう 1 つ、
# 選ぶファイルの数です。固定セットは用件で分けた数件ですが、質問ごとの集合はいつも `MAX_DOCS` 件まで詰めるので、渡す量そのものも増えます。
# 料金の差がどちらから来るかは、§7.2（任意）で分けて数えます。

# %% [markdown]
# 30 問を 2 回、一定の間隔（`INTERVAL_S` 秒に 1 問）で流し、キャッシュの読み出しと料金を比べます。時計を自分で進めるために、
# ここだけは**新しい `ctxlab.Sandbox` を作って**使います（`realtime=False` で時計は `advance` したときだけ進み、
# `time_scale=0` で待ち時間はありません）。実 API では時計を進められず、2 つの方式 × 2 周分の料金もかかるので、このセルは常にオフラインで動きます。
# 料金は各応答の `usage` から `pricing.usage_cost` で出した、実 API なら払う額です。

# %%
INTERVAL_S = 60
strategies = {"固定セット": metadata_filtering.select_files, "質問ごとの集合": metadata_filtering.per_question_files}
runs, logs = {}, {}
for label, choose in strategies.items():
    sb = ctxlab.Sandbox(realtime=False, time_scale=0)        # 空のキャッシュと、自分で進める時計
    runs[label] = metadata_filtering.replay(qs, choose, sandbox=sb, rounds=2, interval_s=INTERVAL_S)
    logs[label] = sb.summary()                                # 同じ合計を sandbox 自身のログから

recalls = {label: metadata_filtering.filter_recall(choose).recall for label, choose in strategies.items()}
display(metadata_filtering.replay_table(runs, logs, recalls, INTERVAL_S, len(qs)))
fixed, per_q = runs["固定セット"], runs["質問ごとの集合"]
print(f"差額: ${per_q.cost_usd - fixed.cost_usd:.2f}（{len(per_q.requests)} 回）、1 問あたり "
      f"${(per_q.cost_usd - fixed.cost_usd) / len(per_q.requests):.3f}。質問ごとの集合は固定セットの {per_q.cost_usd / fixed.cost_usd:.1f} 倍")

# %% [markdown]
# 質問ごとに選び直しても、部署のキーが同じなので filter recall は上がっていません。それでいて、質問ごとの集合は（上の表のとおり）読み出しがほぼ無く、ほぼ毎回、書き込みの割増を払っています。
# キャッシュを付けない場合より高くつくのはそのためです。2 周目に同じ質問が来ても、そのときには 5 分の TTL が切れています。
#
# 一方、固定セットのヒット率も 100% 近くにはなりません。トラフィックがセットの数に**分かれる**からです。
# あるセットが読まれるには、**同じセットを使う**前の質問が 5 分以内に来ている必要があります。

# %%
usage = metadata_filtering.bundle_usage(metadata_filtering.select(q.question) for q in qs)
display(metadata_filtering.usage_table(usage))
print(f"{len(usage)} 種のセットに分かれた。ヒット率 {fixed.hit_rate:.0%}（{INTERVAL_S} 秒に 1 問のとき）")

# %% [markdown]
# セットを増やすほど recall は上がり、ヒット率は下がります。この 2 つを同じ 30 問と同じ再生で測って、セットの数を決めます。
# 演習 1 では、セットの数に上限 `MAX_SETS` を置きます（30 問に返す組み合わせの種類。組み合わせ 1 つがキャッシュ 1 つです）。

# %%
MAX_SETS = 10      # 演習の前提: 30 問に使うキャッシュはこの数まで
print(f"固定セットだけのフィルタが返す組み合わせ: {report.distinct_sets} 種（上限 MAX_SETS = {MAX_SETS}）")

# %% [markdown]
# ## 6. 演習

# %% [markdown] nbgrader={"grade": false, "grade_id": "my_filter-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（4 点）: 部署をまたぐ質問を救うフィルタ
#
# 関数 `my_filter(question)` を書き、渡すファイル名のリスト（`list` of `str`）を返してください。次をすべて満たすこと。
#
# - 答えられる質問での filter recall が **使い分けの記事の線（`metadata_filtering.VIABLE_RECALL`）以上**。
#   辞書と部署別セットだけの `metadata_filtering.select_files` では届きません（§4 の判定）
# - 30 問に返すファイルの組み合わせが **`MAX_SETS` 種以下**（`filter_recall(...).distinct_sets`）。質問ごとに組み替えると、すぐに超えます
# - 採点では、この 30 問とは**別の質問** 31 問（30 問を書いたあとに別に書いた、調整に使っていない言い回し。部署をまたぐ用件を
#   「テレワーク」「紛失」「定年」のような 30 問にない言葉で聞くものを多く含みます）でも filter recall を測り、
#   **同じ線（`VIABLE_RECALL`）以上**を求めます。30 問の言葉（退職・稟議・決裁・見積・承認・在宅・誤送信）だけで作った辞書は、
#   別の質問で 31 問中 22 問（71%）しか届かず、ここで落ちます（部署別セットだけでも 21 問）
# - 旧版（置き換えられたファイル）を返さない。`MAX_DOCS` 件以下。同じファイルを 2 度入れない
# - どんな文字列（空文字、辞書に無い質問）にもリストを返す。同じ質問には同じリストを返す（キャッシュのため）
#
# `metadata_filtering.match`, `metadata_filtering.normalize`, `metadata_filtering.current_files`, `metadata_filtering.BUNDLES` などの部品は自由に使って構いません。

# %% nbgrader={"grade": false, "grade_id": "my_filter", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_filter(question):
    ### BEGIN SOLUTION
    # Life events cut across departments: one fixed set each (catalog order), checked before the departments.
    event_bundles = [
        (("退職", "定年"),
         ["hr_shugyo_kisoku.txt", "hr_taishokukin.txt", "hr_saikoyo.txt", "it_account.txt", "ga_shataku.txt"]),
        (("決裁", "稟議", "承認", "見積"),
         ["fin_keiri.txt", "fin_keihi_2025.txt", "fin_kobai.txt", "fin_card.txt", "ga_kengen.txt", "ga_ringi.txt"]),
        (("在宅", "テレワーク", "リモート"),
         ["hr_shugyo_kisoku.txt", "hr_telework_2025.txt", "it_security_2025.txt", "it_kiki_riyo.txt"]),
        (("誤送信", "漏えい", "漏洩", "紛失", "盗難", "置き忘れ", "間違えて送"),
         ["common_kojin_joho.txt", "it_security_2025.txt", "it_incident.txt", "it_kiki_riyo.txt"]),
    ]
    q = metadata_filtering.normalize(question)
    for words, files in event_bundles:
        if any(w in q for w in words):
            return list(files)
    found = metadata_filtering.match(question)
    if not found:
        return list(metadata_filtering.BUNDLES[metadata_filtering.FALLBACK_BUNDLE].files)
    top = found[0]
    dept_files = metadata_filtering.current_files(top.dept)
    if len(dept_files) <= metadata_filtering.MAX_DOCS:
        return list(dept_files)
    return list(metadata_filtering.BUNDLES[top.bundle].files)
    ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 4 の「落ちた質問」を見直してください。落ちたのはどれも、要るファイルが部署をまたぐ質問でした。
# 部署ごとのセットをいじるより、質問が実際にまたぐ**用件**（たとえば退職の手続き、お金を使うときの決裁、在宅で働くときの決まり、
# 情報を漏らしたときの報告）ごとに、部署横断のセットを `MAX_DOCS` 件以内で固定し、その用件の言葉が出たら部署の辞書より先に使う、
# という形が効きます。用件の言葉は 30 問の言い回しだけでなく、同じ用件を別の言葉で聞く言い方（言い換え）も入れておきます。
# セットは質問ごとに組み替えず、中身も順序も固定にしておくと、組み合わせの種類が `MAX_SETS` に収まり、キャッシュも残ります。
# 規程全体をまたぐ質問（`whole`）まで救おうとすると、`MAX_DOCS` にも `MAX_SETS` にも収まりません。どれを諦めるかも判断のうちです。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "my_filter-tests", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
mine = metadata_filtering.filter_recall(my_filter)
display(mine.table())
for r in mine.failures:
    print(f"  落ちた: {r.id} {r.reason}")
out = my_filter(qmap["q20"].question)
assert isinstance(out, list) and all(isinstance(f, str) for f in out), "ファイル名（str）のリストを返してください"
assert not mine.violations, f"規則違反があります（旧版・MAX_DOCS 超・存在しない名前）: {mine.violations[:3]}"
assert mine.recall >= metadata_filtering.VIABLE_RECALL, (
    f"filter recall {mine.recall:.0%} は {metadata_filtering.VIABLE_RECALL:.0%} に届きません。落ちた質問の理由を見て、"
    "部署をまたぐ固定セットを足してください")
assert mine.distinct_sets <= MAX_SETS, (f"30 問に {mine.distinct_sets} 種の組み合わせを返しています（上限 {MAX_SETS}）。"
                                        "質問ごとに組み替えず、固定セットを返してください")
for q in qs:
    got = my_filter(q.question)
    assert len(set(got)) == len(got), f"{q.id}: 同じファイルは 1 度だけ入れるはずです: {got!r}"
### BEGIN HIDDEN TESTS
held_out = [   # (question, gold files): written apart from the 30 questions, phrasings they do not use
    ("育児休業から職場に戻る前に、面談はありますか？", ("hr_ikuji_kaigo.txt",)),
    ("会社のノートPCを電車に置き忘れました。何をすればいいですか？", ("it_incident.txt",)),
    ("社有車のドライブレコーダーの映像は誰が見られますか？", ("ga_shayosha.txt",)),
    ("出張の仮払金の精算がまだなのに、次の仮払いを頼めますか？", ("fin_karibarai.txt",)),
    ("テレワークの日に自宅から社内システムへ接続するとき、何を使いますか？", ("hr_telework_2025.txt", "it_security_2025.txt")),
    ("定年で退職したら、社宅はいつまでに出ないといけませんか？", ("ga_shataku.txt",)),
    ("週末に別の会社で副業をしたいのですが、届出は要りますか？", ("hr_fukugyo.txt",)),
    ("リモートで働く日に、会社のPCを家族が使ってもいいですか？", ("hr_telework_2025.txt",)),
    ("リモートワークの日も、社外から社内システムに入るときは多要素認証が要りますか？", ("hr_telework_2025.txt", "it_security_2025.txt")),
    ("テレワーク手当は毎月いくら出ますか？", ("hr_telework_2025.txt",)),
    ("定年後の再雇用は何歳まで続けられますか？", ("hr_saikoyo.txt",)),
    ("定年で会社を離れたら、退職金はいつ振り込まれますか？", ("hr_taishokukin.txt",)),
    ("会社のスマートフォンを紛失しました。誰にいつまでに知らせますか？", ("it_incident.txt",)),
    ("顧客リストが外部に漏えいしたかもしれません。どこに報告しますか？", ("it_incident.txt", "common_kojin_joho.txt")),
    ("取引先へのメールを間違えて送ってしまいました。どうすればいいですか？", ("it_incident.txt",)),
    ("カバンごとノートPCを盗難にあいました。まず何をしますか？", ("it_incident.txt",)),
    ("育児休業は子どもが何歳になるまで取れますか？", ("hr_ikuji_kaigo.txt",)),
    ("ハラスメントの相談窓口はどこですか？", ("hr_harassment.txt",)),
    ("社用車で事故を起こしたら、まず何をしますか？", ("ga_shayosha.txt",)),
    ("会社の印鑑を押してもらうには、どんな手続きが要りますか？", ("ga_insho.txt",)),
    ("生成AIに社外秘の資料を入力してもいいですか？", ("it_genai.txt",)),
    ("健康診断は年に何回受けますか？", ("hr_anzen_eisei.txt",)),
    ("クラウドストレージを業務で使うには申請が必要ですか？", ("it_cloud.txt",)),
    ("副業を始めるには、いつまでに申請すればいいですか？", ("hr_fukugyo.txt",)),
    ("テレワークで使うPCやスマホを持ち出すときの決まりはありますか？", ("hr_telework_2025.txt", "it_kiki_riyo.txt")),
    ("USBメモリを電車で紛失しました。個人情報が入っています。どこに報告しますか？", ("it_incident.txt", "common_kojin_joho.txt")),
    ("リモート勤務の日の手当と、自宅から社内ネットワークへ入るときの決まりを教えてください。", ("hr_telework_2025.txt", "it_security_2025.txt")),
    ("定年のあと再雇用されたら、退職金はいつもらえますか？", ("hr_taishokukin.txt", "hr_saikoyo.txt")),
    ("定年退職の日に、自分のアカウントはどうなりますか？", ("it_account.txt",)),
    ("社外秘の資料を漏洩させてしまったら、誰に報告しますか？", ("it_incident.txt",)),
    ("100万円の備品を買うとき、誰が決めますか？", ("ga_kengen.txt",))]
assert len(held_out) == 31
held = metadata_filtering.filter_recall(
    my_filter, [corpus.Question(f"h{i}", text, "", ("-",), gold, "single") for i, (text, gold) in enumerate(held_out)])
assert not held.violations, held.violations[:3]
assert held.recall >= metadata_filtering.VIABLE_RECALL, (
    f"held-out filter recall {held.recall:.0%} < {metadata_filtering.VIABLE_RECALL:.0%}: the dictionary fits the 30 questions only")
for q in qs:
    got = my_filter(q.question)
    assert type(got) is list and all(type(f) is str for f in got), q.id
    assert len(got) <= metadata_filtering.MAX_DOCS and len(set(got)) == len(got), q.id
    assert all(by_file[f].current for f in got), f"{q.id}: superseded file returned"
    assert got == my_filter(q.question), f"{q.id}: not deterministic"
for odd in ["", "こんにちは", "ＰＣ", "pc", "社員食堂は何時から？" * 50, "有給" * 3, "2021年度の旧規程を見せて"]:
    got = my_filter(odd)
    assert type(got) is list and all(type(f) is str for f in got), repr(odd[:20])
    assert len(got) <= metadata_filtering.MAX_DOCS and len(set(got)) == len(got), repr(odd[:20])
    assert all(f in by_file and by_file[f].current for f in got), repr(odd[:20])
assert metadata_filtering.filter_recall(my_filter).recall >= metadata_filtering.VIABLE_RECALL
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "pick_bundle-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（3 点）: 問い合わせの記録から、部署の固定セットを選ぶ
#
# 固定セットの中身は、勘ではなく問い合わせ窓口の記録から選べます。記録 `log` は「1 件の問い合わせに答えるのに使ったファイル名のリスト」のリストです。
# 関数 `pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS)` を書き、部署 `dept` の固定セットをファイル名のリストで返してください。
#
# 1. 各ファイルについて、それを使った問い合わせの**件数**を数える（1 件の中で同じファイルが 2 度あっても 1 と数える）。
#    旧版の名前は、それを置き換えた**現行版**の件数に数える（`corpus.by_file()[name].superseded_by`、置き換えが続くなら最後まで辿る）
# 2. `dept` の現行版のうち、1 件以上使われたものを件数の多い順に選び、`max_docs` 件で切る（同数ならカタログ順で先のもの）
# 3. 選んだファイルを**カタログ順**（`corpus.load()` の順）に並べて返す。セットの順序がいつも同じになり、キャッシュに残るため
#
# `dept` が部署のキーでない（`corpus.DEPARTMENTS` に無い）とき、`max_docs` が 1 未満のときは `ValueError` を投げてください。

# %%
HELPDESK_LOG = [                       # 問い合わせごとに回答に使ったファイル（架空のヘルプデスクの記録）
    ["hr_yukyu_2021.txt"],             # 改定が窓口に届く前に、旧版で答えたもの
    ["hr_yukyu_2025.txt"],
    ["hr_kyuyo_kitei.txt", "hr_tsukin.txt"],
    ["hr_telework_2025.txt", "it_security_2025.txt"],
    ["hr_keicho.txt"],
    ["hr_yukyu_2025.txt", "hr_shugyo_kisoku.txt"],
    ["hr_ikuji_kaigo.txt"],
    ["fin_keihi_2025.txt"],
    ["hr_kyuyo_kitei.txt"],
    ["hr_taishokukin.txt", "hr_saikoyo.txt"],
    ["hr_tsukin.txt"],
    ["hr_telework_2022.txt"],
    ["hr_keicho.txt", "hr_keicho.txt"],
    ["hr_fukugyo.txt"],
    ["hr_kyushoku.txt"],
    ["hr_harassment.txt"],
]
print(f"記録 {len(HELPDESK_LOG)} 件")

# %% nbgrader={"grade": false, "grade_id": "pick_bundle", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    ### BEGIN SOLUTION
    if dept not in corpus.DEPARTMENTS:
        raise ValueError(f"unknown department {dept!r}")
    if not isinstance(max_docs, int) or max_docs < 1:
        raise ValueError(f"max_docs must be >= 1, got {max_docs!r}")
    files = corpus.by_file()

    def current(name):
        while name in files and files[name].superseded_by:
            name = files[name].superseded_by
        return name

    counts = {}
    for entry in log:
        for name in {current(f) for f in entry}:
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    candidates = [f for f in order if files[f].dept == dept and counts.get(f, 0) > 0]
    chosen = sorted(candidates, key=lambda f: -counts[f])[:max_docs]   # stable: ties keep catalog order
    return [f for f in order if f in chosen]
    ### END SOLUTION

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 3 つの段に分けると書きやすくなります。(1) 旧版の名前を現行版に直す小さな関数、(2) 1 件ごとに `set` にしてから数える、
# (3) 「多い順に選ぶ」と「カタログ順に並べる」を別の手順にする。Python の `sorted` は安定なので、
# カタログ順に並べたリストを件数で並べ替えれば、同数のものはカタログ順のまま残ります。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "pick_bundle-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
hr = pick_bundle("hr", HELPDESK_LOG)
print(hr)
assert isinstance(hr, list) and len(hr) <= metadata_filtering.MAX_DOCS, "MAX_DOCS 件以下のリストを返してください"
assert all(by_file[f].dept == "hr" and by_file[f].current for f in hr), "人事の現行版だけを選んでください"
assert "hr_yukyu_2025.txt" in hr, "旧版 hr_yukyu_2021.txt の問い合わせは現行版 hr_yukyu_2025.txt に数えます"
order = [d.file for d in corpus.load()]
assert hr == sorted(hr, key=order.index), "カタログ順（corpus.load() の順）に並べて返してください"
renamed = pick_bundle("hr", [["hr_telework_2022.txt"], ["hr_telework_2022.txt"], ["hr_keicho.txt"]], max_docs=1)
assert renamed == ["hr_telework_2025.txt"], ("旧版 hr_telework_2022.txt の問い合わせは、現行版 hr_telework_2025.txt の件数に"
                                             f"数えるはずです: {renamed!r}")
backwards = pick_bundle("hr", list(reversed(HELPDESK_LOG)))
assert backwards == hr, f"記録の並び順で結果は変わらないはずです（同数はカタログ順で選ぶ）。逆順の記録では: {backwards!r}"
once = pick_bundle("hr", [["hr_keicho.txt"] * 3, ["hr_tsukin.txt"], ["hr_tsukin.txt"]], max_docs=1)
assert once == ["hr_tsukin.txt"], ("1 件の問い合わせの中で同じファイルが何度あっても 1 と数えるので、2 件で使われた "
                                   f"hr_tsukin.txt のはずです: {once!r}")
for args, what in [(("sales", HELPDESK_LOG), "dept が部署のキーでない（'sales'）"), (("hr", HELPDESK_LOG, 0), "max_docs が 0")]:
    try:
        got = pick_bundle(*args)
    except ValueError:
        continue
    raise AssertionError(f"{what}ときは ValueError を投げるはずです: {got!r} が返りました")
assert hr == ["hr_shugyo_kisoku.txt", "hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt", "hr_ikuji_kaigo.txt",
              "hr_taishokukin.txt", "hr_telework_2025.txt", "hr_keicho.txt", "hr_tsukin.txt"], \
    "件数の多い 8 件（同数はカタログ順で先のもの）を選んでいるか確かめてください"
### BEGIN HIDDEN TESTS
for got in (hr, pick_bundle("it", HELPDESK_LOG), pick_bundle("fin", [])):
    assert type(got) is list and all(type(f) is str for f in got)
assert pick_bundle("hr", HELPDESK_LOG, max_docs=1) == ["hr_yukyu_2025.txt"]
assert pick_bundle("hr", HELPDESK_LOG, max_docs=3) == ["hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt", "hr_telework_2025.txt"]
assert pick_bundle("hr", list(reversed(HELPDESK_LOG))) == hr, "the order of the log must not matter"
assert pick_bundle("it", HELPDESK_LOG) == ["it_security_2025.txt"]
assert pick_bundle("ga", HELPDESK_LOG) == []
assert pick_bundle("fin", []) == []
assert pick_bundle("it", [["it_security_2021.txt"], ["it_security_2021.txt", "it_security_2025.txt"]]) == ["it_security_2025.txt"]
assert pick_bundle("hr", [["hr_keicho.txt"] * 5, ["hr_tsukin.txt"], ["hr_tsukin.txt"]], max_docs=1) == ["hr_tsukin.txt"]
for bad in [("sales", HELPDESK_LOG), ("人事", HELPDESK_LOG)]:
    try:
        pick_bundle(*bad)
        raise AssertionError(f"ValueError expected for dept {bad[0]!r}")
    except ValueError:
        pass
try:
    pick_bundle("hr", HELPDESK_LOG, max_docs=0)
    raise AssertionError("ValueError expected for max_docs=0")
except ValueError:
    pass
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "when-filter-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・3 点）
#
# 同僚が「うちも RAG はやめて、メタデータで絞って丸ごと渡す方式にしよう」と言っています。
# この方式を**選べるのはどんなときか**、そして作り込む前に**選べるかどうかをどう確かめるか**を、このレッスンで測った数字の種類
# （filter recall、落ちた質問の理由、キャッシュのヒット率）に触れながら書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "when-filter", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 選べるのは、絞り込みのキーがファイルのメタデータ（部署・文書の種類・年度・製品名など、ファイル名やフォルダで表せるもの）で表せ、
# しかも質問の言葉からそのキーを取り出せる（辞書で足り、足りなければモデルに 1 語で分類させる）ときだけ。表せないなら RAG。
# 確かめ方は、現場の質問 30 問について答えに要るファイルを人が指定し、絞り込みの後にそれがすべて残った質問の割合（filter recall）を数える。
# 9 割を切るなら絞りすぎ。落ちた質問の理由を見て、部署をまたぐ質問なら用件単位の固定セットを足して広げ、キーで表せない質問が多いなら RAG に移る。
# 規程全体をまたぐ質問はこの方式では原理的に落ちるので、その割合も見る。渡すのは現行版だけ、MAX_DOCS 件以内。
# さらに、セットは数種類に固定する（質問ごとに組み替えると前置きが変わってキャッシュが効かず、毎回の書き込みで高くつく）。
# セットを増やすと recall は上がるがトラフィックが分かれてヒット率が下がるので、両方を同じ 30 問で測って決める。
# 辞書を 30 問で調整したなら、新しい質問で測り直す。
#
# ### BEGIN RUBRIC
# - 3 点（満点）: 次の 4 つのうち 3 つ以上に、このレッスンで測った数字の種類を添えて触れている。選べる条件（キーがファイルのメタデータで表せ、質問からキーを取り出せる）／確かめ方（現場の質問で答えに要るファイルを人が指定し、filter recall を 9 割の目安と比べる）／落ちた質問の理由に応じた次の手（部署横断の固定セット、または RAG）／セットを固定してキャッシュのヒット率を保つこと。
# - 1.5 点（半分）: 2 つに触れている、または確かめ方が filter recall ではなく正答率だけになっている。
# - 0 点: 選べる条件を書いていない、または質問ごとにファイルを選び直す設計を勧めている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("when-filter")

# %% [markdown]
# ## まとめ
#
# - メタデータで絞る方式は、**人が決めたキー**で数件を選び、丸ごと渡します。分割・埋め込み・ベクトル DB は要りません。
# - キーは用件の言葉の辞書で取り出し、取れないときだけ（実 API で）モデルに 1 語で分類させます。オフラインでは固定セットに倒します。
# - `MAX_DOCS` を超える部署は、**現行版だけ・中身も順序も固定**のセットで渡します。固定だからキャッシュに残ります。
# - 選べるかは、現場の 30 問の **filter recall が 9 割を越えるか**で決めます。部署をまたぐ質問が落ちるので、その割合が方式の向き不向きを決めます。
# - 質問ごとにファイルを選び直すと前置きが毎回変わってキャッシュがほとんど効かず、書き込みの割増でキャッシュなしより高くつくことさえあります。
# - 次の節（07）では、丸ごと渡した文書のどこから答えたかを、出典（citations）として残します。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("06_metadata_filtering"))
check

# %% [markdown]
# ## 7. （任意）もう一歩: 1 問送る、料金の倍率を分ける、記事の前提を逆算する
#
# ここからは、このレッスンの判断（メタデータで絞る方式を選べるか）には要らない、確かめの続きです。

# %% [markdown]
# ### 7.1 絞ったファイルを丸ごと渡して、1 問答えさせる
#
# 絞ったファイルは、分割せずに 1 ファイル 1 ブロックで丸ごと渡します（`question_request` が文書、区切り、質問の順に組み立てます）。
# 「有給の繰越上限は？」では、2021 年の旧版が渡っていないので、答えの根拠は現行版の「20日」だけです。
# 実 API では料金がかかるので、見積もりを先に表示します。

# %%
q = qmap["q20"]
sel = metadata_filtering.select(q.question, client)
req = question_request(metadata_filtering.docs_for(sel.files), q.question, model=MODEL)
est = estimate.estimate_request(req)
try:
    budget.check(pricing.call_cost(MODEL, cache_write_5m_tokens=est, output_tokens=700).total, client,
                 f"q20 を {len(sel.files)} 件で 1 回")
except budget.BudgetExceeded as e:
    print(e)
else:
    msg = client.messages.create(**req)
    print(answer_text(msg)[:400])
    u = msg.usage
    print(f"\n書き込み {u.cache_creation_input_tokens:,} / 読み出し {u.cache_read_input_tokens:,} / "
          f"通常 {u.input_tokens:,} / 出力 {u.output_tokens:,} tokens → ${pricing.usage_cost(u, MODEL).total:.3f}")
    print(ctxlab.source_line(msg, MODEL))

# %% [markdown]
# ### 7.2 料金の倍率を、量と単価に分ける
#
# §5 の再生で、質問ごとの集合は固定セットより高くつきました。この倍率を 2 つに分けます。入力の料金は「入力トークンの量 × 1 トークンあたりの平均単価」なので、
#
# - **量**: 質問ごとの集合が送った入力トークンは、固定セットの何倍か（`MAX_DOCS` 件まで詰めるぶん）
# - **単価**: 1 トークンあたりの平均単価は何倍か（読み出しは安く、書き込みは割増。キャッシュのミスが多いほど上がる）
#
# の掛け算です。出力の料金は両方でほぼ同じなので、全体の倍率は入力の倍率より少し 1 に近くなります。

# %%
for qid in ("q20", "q21"):
    print(f"{qid} 固定セット    : {metadata_filtering.select_files(qmap[qid].question)[:3]} …")
    print(f"{qid} 質問ごとの集合: {metadata_filtering.per_question_files(qmap[qid].question)[:3]} …")

# %%
volume = per_q.input_tokens_total / fixed.input_tokens_total
unit = (per_q.input_cost_usd / per_q.input_tokens_total) / (fixed.input_cost_usd / fixed.input_tokens_total)
m = pricing.get_model(pricing.DEFAULT_MODEL)
print(f"入力トークン: 固定セット {fixed.input_tokens_total:,} / 質問ごとの集合 {per_q.input_tokens_total:,} → 量は {volume:.2f} 倍")
print(f"1 トークンあたりの入力単価: 量をそろえると {unit:.2f} 倍（キャッシュのミス。書き込みは入力単価の "
      f"{m.cache_write_5m_multiplier} 倍、読み出しは {m.cache_read_multiplier} 倍）")
print(f"入力の料金の倍率 {per_q.input_cost_usd / fixed.input_cost_usd:.2f} = 量 {volume:.2f} × 単価 {unit:.2f}"
      f"（出力も含めた全体の倍率は {per_q.cost_usd / fixed.cost_usd:.2f}）")

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401  (Japanese font)

fig, ax = plt.subplots(figsize=(6.4, 3.4))
for label, r in runs.items():
    ax.plot(range(1, len(r.requests) + 1), r.cumulative_cost(), label=f"{label}（ヒット率 {r.hit_rate:.0%}）")
ax.axvline(len(qs) + 0.5, ls=":", color="gray")
ax.text(len(qs) + 1, 0, "2 周目", color="gray", fontsize=9, va="bottom")
ax.set_xlabel("リクエスト（何回目）")
ax.set_ylabel("累計の料金（ドル、実 API 換算）")
ax.set_title(f"同じ 30 問を 2 回: {INTERVAL_S} 秒に 1 問、キャッシュ TTL 5 分（sandbox）")
ax.legend()
plt.tight_layout()

# %% [markdown]
# ### 7.3 使い分けの記事の月額は、どのヒット率で当たるか
#
# 使い分けの記事の表は、絞り込みの月額（58 ドル）を「ヒット率 80%」の前提で出したと書いています。書き込みと読み出しの単価から逆算すると（02 の演習 2）、
# 実際に当たるヒット率は次のとおりです。逆算は**記事の価格**で行います（記事の日付のモデル、今はレガシーの Opus 5 と、記事の 5 分 TTL の書き込み単価。
# どちらも `data/pricing.json` の価格表から）。今日のモデルや 1 時間 TTL の単価で解くと、記事の 58 ドルとは別の前提の数字になります。
# セットごとにトラフィックが分かれると考えれば、ありうる値です。

# %%
from ctxlab.costs import compare

article_profile = compare.Profile(model=pricing.ARTICLE_MODEL, ttl=compare.ARTICLE_TTL)   # 記事のモデルと 5 分 TTL
article_rows = compare.compare(197_000, 50, article_profile).rows
miss, hit = article_rows["filter_write"].cost, article_rows["filter_cached"].cost
implied = (600 * miss - 58) / (600 * (miss - hit))
print(f"記事の価格（{pricing.get_model(pricing.ARTICLE_MODEL).display_name}・TTL {compare.ARTICLE_TTL} の書き込み）: "
      f"書き込み ${miss:.4f}、読み出し ${hit:.4f} / 回")
print(f"使い分けの記事の「絞り込み 月 $58」（月 600 問）が当たるヒット率: {implied:.1%}（記事の価格で逆算）")
print(f"この再生で測った固定セットのヒット率:                 {fixed.hit_rate:.0%}（こちらはこのコースの再生）")

# %% [markdown]
# ### 7.4 辞書の語がどう当たるか
#
# §2 の辞書を引く `metadata_filtering.match(question)` は、当たった語の長さの合計で候補を並べます。長い語ほど用件を特定するので、
# 「在宅勤務手当」では「在宅勤務」（勤務・休暇）が「手当」（給与・処遇）に勝ちます。「海外出張」に含まれる「出張」は二重に数えません。

# %%
for qid in ("q01", "q21", "q06", "q14", "q27"):
    found = metadata_filtering.match(qmap[qid].question)
    top = [f"{m.bundle}({m.score}: {'・'.join(m.words)})" for m in found[:2]]
    print(f"{qid} {qmap[qid].question[:28]:28s} → {', '.join(top) or '該当なし'}")

# %% [markdown]
# ### 7.5 filter recall を図で見る
#
# §4 の表を、質問の種類ごとの棒にします。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ctxlab.plots  # noqa: F401  (Japanese font)

cats = report.by_category()
labels = [f"{metadata_filtering.CATEGORY_JA[c]}\n{ok}/{n} 問" for c, (ok, n) in cats.items()]
labels.append(f"全体\n{sum(r.ok for r in report.results)}/{len(report.results)} 問")
values = [ok / n for ok, n in cats.values()] + [report.recall]
colors = ["#4c78a8" if v >= metadata_filtering.VIABLE_RECALL else "#e45756" for v in values]

fig, ax = plt.subplots(figsize=(7.6, 3.4))   # 棒の下の 2 行のラベルが隣とくっつかない幅
ax.bar(labels, values, color=colors)
ax.tick_params(axis="x", labelsize=9)
ax.axhline(metadata_filtering.VIABLE_RECALL, ls="--", color="gray")
ax.text(1.01, metadata_filtering.VIABLE_RECALL, f"{metadata_filtering.VIABLE_RECALL:.0%} の線\n（使い分けの記事）", transform=ax.get_yaxis_transform(),
        va="center", fontsize=8, color="gray")
ax.set_ylim(0, 1.1)
ax.set_ylabel("filter recall")
ax.set_title("辞書 + 固定セットの filter recall（要るファイルがすべて残った質問の割合）")
plt.tight_layout()
