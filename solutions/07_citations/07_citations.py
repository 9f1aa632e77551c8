# %% [markdown]
# # 07 引用: どこに書いてあるかを、答えに残す
#
# RAG では「どのチャンクを渡したか」が構造として残るので、**渡した範囲**は分かります。ただし、回答のどの文がどのチャンクに
# 拠るのかまでは、それだけでは分かりません（チャンクを API の `search_result` ブロックにして引用を有効にすれば、RAG でも文ごとの
# 引用が返ります。§5 の終わりで形を見ます）。ロングコンテキストでは全部を渡すので、どこに拠ったかは引用を作り込まないと出ません。根拠を示す必要がある社内規程の回答では、ここが方式の差になります。
# このレッスンでは、API の引用（citations）で出典を答えに残し、画面で原文と突き合わせられるところまで作ります。
#
# **このレッスンで身につくこと**
#
# - 1 ファイルを 1 つの文書ブロックにして引用を有効にし、応答の `char_location` を読める
# - 引用された範囲を原文の中で強調表示し、ファイル名と行番号に戻せる
# - 全ファイルを 1 つの文書に連結すると何が失われるかを、実際の応答で示せる
# - 引用と構造化出力が同時に使えないときに、番号による出典へ切り替え、その弱さを説明できる
#
# **所要時間** 約 75 分　**前提** 00、03（キャッシュの区切り）。06 を読んでいると、固定セットの話がつながります。

# %%
import json

import anthropic
import ctxlab
from ctxlab.api import budget, messages, tokens
from ctxlab.labs import citations
from ctxlab import corpus
from ctxlab.costs import pricing
from ctxlab.widgets.citation_viewer import CitationViewer

client = ctxlab.make_client()
ctxlab.show_cost("07_citations", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）
MODEL = ctxlab.lesson_model()   # いまの Opus（online.LESSON_MODEL）。CTXLAB_MODEL で別のモデルを選べる

# %% [markdown]
# ## 1. 題材と、このレッスンでかかる額
#
# 人事の規程から 6 ファイルを使います。リクエストに並べた順番が、そのまま応答の `document_index`（0 始まり）になります。
# 実 API では呼び出しに料金がかかるので、このレッスンの呼び出し全体の見積もりを先に出します（オフラインでは料金は発生しません）。

# %%
FILES = ["hr_shugyo_kisoku.txt", "hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt",
         "hr_keicho.txt", "hr_tsukin.txt", "hr_telework_2025.txt"]
by_file = corpus.by_file()
docs = [by_file[f] for f in FILES]
for i, d in enumerate(docs):
    print(f"document_index {i}: {d.file:22s} {d.chars:>5,} 字  {d.label}")

doc_tokens = tokens.count_documents([d.text for d in docs], client=client).tokens
write = pricing.call_cost(MODEL, input_tokens=50, cache_write_5m_tokens=doc_tokens, output_tokens=300).total
read = pricing.call_cost(MODEL, input_tokens=50, cache_read_tokens=doc_tokens, output_tokens=300).total
budget.check(5 * write + 5 * read, client, f"このレッスンの呼び出し（{doc_tokens:,} トークンの文書で書き込み 5 回・読み出し 5 回）")

# %% [markdown]
# ## 2. 1 ファイル 1 ブロックで、引用を有効にして送る
#
# 文書は `document` ブロックに入れ、`"citations": {"enabled": true}` を付けます。引用は全部の文書で有効にするか、
# 全部で無効にするかのどちらかです。`ctxlab.api.messages.question_request` がこの形（文書、最後の文書にキャッシュの区切り、
# その後ろに質問）を組み立てます。

# %%
QUESTIONS = ["在宅勤務手当はいくらですか？", "自分が結婚するとき、休みは何日もらえますか？", "電車通勤の交通費に上限はありますか？"]

req = messages.question_request(docs, QUESTIONS[0], citations=True, model=MODEL)
first = req["messages"][0]["content"][0]
print({k: v for k, v in first.items() if k != "source"})
print("source:", {**first["source"], "data": first["source"]["data"][:8] + "…"})
print("最後の要素:", req["messages"][0]["content"][-1])

resp = client.messages.create(**req)
print(f"応答の text ブロック {len(resp.content)} 個、そのうち引用付き {sum(1 for b in resp.content if b.citations)} 個")

# %% [markdown]
# ## 3. 引用を読む
#
# 回答は、引用の付いた塊と付かない塊に分かれて返ります。`ctxlab.labs.citations.render` は `response.content` を順に見て、
# 引用の付いた塊の後ろに `[n]` を付け、最後に文書名・文字の範囲・引用された文を並べます。

# %%
print(citations.render(resp))

# %% [markdown]
# 1 つの引用は、文書の番号とタイトル、その文書の何文字目から何文字目か（0 始まり、終わりは含まない）、そしてその範囲の原文を持っています。
# 原文から同じ範囲を切り出すと、`cited_text` と一致するはずです。

# %%
c = citations.collect(resp)[0]
print(c.type, c.document_index, c.document_title, c.start_char_index, c.end_char_index)
source_slice = docs[c.document_index].text[c.start_char_index:c.end_char_index]
print("原文のスライスと cited_text が一致:", source_slice == c.cited_text)

# %% [markdown]
# 残りの質問も同じ文書で聞きます。文書の並びが同じなので、2 問目からはキャッシュから読まれます。
# ただし引用の有効・無効を切り替えると、文書が同じでもキャッシュは作り直しです（引用の設定は system と messages のキャッシュを無効にします）。

# %%
more = [client.messages.create(**messages.question_request(docs, q, citations=True, model=MODEL)) for q in QUESTIONS[1:]]
no_cite = client.messages.create(**messages.question_request(docs, QUESTIONS[0], citations=False, model=MODEL))
for name, r in [("引用あり 1 問目", resp), ("引用あり 2 問目", more[0]), ("引用あり 3 問目", more[1]), ("引用なしに切り替え", no_cite)]:
    u = r.usage
    print(f"{name:10s} 読み出し {u.cache_read_input_tokens:>6,}  書き込み {u.cache_creation_input_tokens:>6,}")

# %% [markdown]
# ## 4. 原文の中で確かめる
#
# 文字の範囲が返るので、画面の側でその位置を強調表示できます。利用者は回答をうのみにせず、原文を自分で読んで確かめられます。
# `CitationViewer` は引用を 1 件ずつ、前後の文と一緒に、引用された範囲に印を付けて表示します。
# ドロップダウンか ◀ ▶ で引用を切り替えてください。どの質問の回答の引用かも表示されます。
# 状態はカーネルにあり、`viewer.index`・`viewer.question`・`viewer.current` で読めます。

# %%
responses = [resp] + more
viewer = CitationViewer.from_responses(responses, docs, questions=QUESTIONS)
cites = viewer.cites
viewer

# %%
print(f"表示中: {viewer.index + 1} 件目 / {len(cites)} 件  質問「{viewer.question}」  {viewer.current.document_title}")
print("強調表示の <mark> がある:", "<mark" in viewer.html)

# %% [markdown]
# ## 5. 全部を 1 つの文書に連結すると
#
# 「1 ファイルずつブロックを作るのは面倒なので、全部つないで 1 つの文書にしよう」と考えたくなります。同じ 6 ファイルを
# 1 つの文書にして、同じ 3 問を聞いてみます。`citations.bundle` はファイル名の見出しを挟んで連結し、各ファイルが
# 連結後のどこに入ったかの表（`bundle.parts`）を手元に残します。

# %%
bundle = citations.bundle(docs)
bundled = [client.messages.create(**messages.question_request([bundle.as_document()], q, citations=True, model=MODEL))
           for q in QUESTIONS]
bcites = [c for r in bundled for c in citations.collect(r)]
print("document_index の種類:", sorted({c.document_index for c in bcites}))
print("document_title の種類:", sorted({c.document_title for c in bcites}))
for c in bcites[:4]:
    print(f"  文字 {c.start_char_index:>6,}–{c.end_char_index:<6,} 「{c.cited_text[:28]}…」")

# %% [markdown]
# 応答が教えてくれるのは「連結した文書の何文字目か」だけです。どのファイルかは、手元に残した表と突き合わせて初めて分かります。

# %%
for c in bcites[:4]:
    try:
        name, a, b = bundle.locate(c.start_char_index, c.end_char_index)
        print(f"  連結後 {c.start_char_index:>6,} → {name:22s} の {a:>5,}–{b:<5,}")
    except ValueError:  # 見出し、または 2 つのファイルにまたがる範囲: 指せるファイルがない
        print(f"  連結後 {c.start_char_index:>6,} → どのファイルとも決められない範囲")
print("表:", [(p.name, p.start, p.end) for p in bundle.parts[:3]], "…")

# %% [markdown]
# この表は、文書を 1 文字でも直すと作り直しです。昨年版の規程を入れた連結と今の連結で、各ファイルの開始位置を比べます。
# 変わったファイルより後ろは、すべての位置がずれます。過去の回答に残した位置を読み直すには、そのときの表も保存しておく必要があります。

# %%
last_year = [by_file[d.supersedes] if d.supersedes else d for d in docs]
old_bundle = citations.bundle(last_year)
for p, q in zip(bundle.parts, old_bundle.parts):
    print(f"{p.name:22s} 今 {p.start:>6,}  昨年版 {q.start:>6,}  {'ずれる' if p.start != q.start else ''}")

# %% [markdown]
# 2 つの渡し方で、引用がどこに落ちたかを並べて描きます。上は連結した 1 文書で、点線（ファイルの境目）は応答からは分からず、
# 自分で残した表から描いています。下は 1 ファイル 1 ブロックで、`document_index` と文字位置がそのままファイルと位置になります。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

from ctxlab.plots.citations import citation_map

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 4.6), gridspec_kw={"height_ratios": [1, 3.2]})
citation_map([bundle.as_document()], bcites, ax=top, names=["連結した 1 文書"],
                            boundaries=[p.start for p in bundle.parts[1:]],
                            title="1 つの文書に連結: 位置は通し番号。点線は自分の表からしか描けない")
citation_map(docs, cites, ax=bottom, title="1 ファイル 1 ブロック: 番号と位置がそのままファイルと位置")
plt.tight_layout()

# %% [markdown]
# ### 条文ごとに引用させる: カスタムコンテンツの文書
#
# プレーンテキストの文書は、API が**文ごと**に区切って引用します。規程では「第 11 条に書いてある」と条文で示したいことがよくあります。
# そのときは文書を `"source": {"type": "content", "content": [...]}`（カスタムコンテンツ）にして、**1 条を 1 ブロック**に入れます。
# カスタムコンテンツの文書は、ブロックより細かくは引用されません。返る引用は `content_block_location` で、`start_block_index`
# は**ブロックの番号**です。条文の番号とは一致しません（規程の題名や章の見出しもブロックを 1 つずつ使うので、番号がずれます。
# 見出しは章の変わり目ごとに入るので、ずれの幅も一定ではありません。下のセルが、この文書の表からずれを数えます）。
# `citations.article_document` が文書を条文ごとのブロックに分け、どのブロックがどの条文かの表（`labels`）を持っています。
# `art.article_of(引用)` がその表を引いて、ブロックの番号を条文の名前に直します。

# %%
telework = by_file["hr_telework_2025.txt"]
art = citations.article_document(telework)
print(f"{telework.label}: {len(art.labels)} ブロック  例: {art.labels[2:5]}")
art_req = {"model": MODEL, "max_tokens": 500, "system": messages.SYSTEM_PROMPT,
           "messages": [{"role": "user", "content": [art.block, {"type": "text", "text": QUESTIONS[0]}]}]}
art_resp = client.messages.create(**art_req)
for c in citations.collect(art_resp):
    print(f"  {c.type}: ブロック {c.start_block_index}–{c.end_block_index} → {art.article_of(c)}  「{c.cited_text[:30]}…」")
import re

mapping = [(label.split("（")[0], i, i - int(m.group(1)))
           for i, label in enumerate(art.labels) if (m := re.match(r"第(\d+)条", label))]
print("条文 → ブロックの番号（ずれ）:", "、".join(f"{name} → {i}（+{shift}）" for name, i, shift in mapping))
shifts = sorted({shift for _, _, shift in mapping})
print(f"ずれは {len(shifts)} 通り（{'・'.join(map(str, shifts))}）: 決まった数を足しても条文にはならないので、表（art.labels）を引きます")

# %% [markdown]
# RAG のチャンクにも同じ考え方が使えます。検索で選んだチャンクを 1 つずつ `search_result` ブロック（出どころ・題名・本文のブロック）に
# して `citations` を有効にすると、応答の引用は `search_result_location` として、どのチャンクのどのブロックかを返します。
# 形だけ見ておきます（このセルは API を呼びません）。

# %%
import json as _json

start = telework.text.index("第11条")
chunk_text = telework.text[start:start + 80]   # 条文 1 つを、検索で引いたチャンクとして
search_block = {"type": "search_result", "source": telework.file, "title": telework.label,
                "content": [{"type": "text", "text": chunk_text}], "citations": {"enabled": True}}
print(_json.dumps(search_block, ensure_ascii=False, indent=1))

# %% [markdown]
# 引用の単位が条文になるので、画面には「在宅勤務規程 第 11 条」と出せます。その代わり、条文の中のどの文かは分かりません。
# 文まで強調表示したいならプレーンテキスト、条文で示せば足りるならカスタムコンテンツ、と用途で選びます。
#
# ## 6. 引用と構造化出力は同時に使えない
#
# 回答を JSON の形で受け取る設定（`output_config.format`）と引用を一緒に使うと、リクエストは 400 エラーになります。
# エラーを受け止めて、メッセージを読みます。

# %%
SCHEMA = {"type": "json_schema",
          "schema": {"type": "object", "properties": {"answer": {"type": "string"}},
                     "required": ["answer"], "additionalProperties": False}}
try:
    client.messages.create(**messages.question_request(docs, QUESTIONS[0], citations=True, model=MODEL),
                           output_config={"format": SCHEMA})
except anthropic.BadRequestError as e:
    body = e.body if isinstance(e.body, dict) else {}
    print(e.status_code, body.get("error", {}).get("message", e.message))
else:
    print("エラーになりませんでした。API の仕様が変わった可能性があります（ドキュメントを確かめてください）")

# %% [markdown]
# JSON で受けたいなら、出典を本文の中の番号として書かせる指示に切り替えます。文書のタイトルに `[1]`〜`[6]` の番号を付け、
# system プロンプトで「根拠にした文書の番号を `[n]` の形で書く」ように頼み、返ってきた文字列から番号を読み取ります。
# 読み取りは `citations.parse_numbered_refs` です。

# %%
from ctxlab.api.online import source_line

numbered = citations.numbered_docs(docs)
req = messages.question_request(numbered, QUESTIONS[0], model=MODEL,
                                system=messages.SYSTEM_PROMPT + citations.numbered_instruction(len(docs)))
out = client.messages.create(**req, output_config={"format": SCHEMA})
answer = json.loads(out.content[0].text)["answer"]
print(answer, "\n")
kinds = []
for ref in citations.parse_numbered_refs(answer):
    if not ref.valid(len(docs)):
        print(f"{ref.numbers}: 送っていない文書の番号")
        continue
    files = [docs[n - 1].file for n in ref.numbers]
    verbatim = any(ref.claim in docs[n - 1].text for n in ref.numbers)
    print(f"{ref.numbers} → {files}  {'原文にそのままある' if verbatim else '言い換えなので原文で位置を引けない'}")
    kinds.append(verbatim)
print(f"原文にそのままある {sum(kinds)} 件 / 言い換え {len(kinds) - sum(kinds)} 件（{source_line(out)}）")

# %% [markdown]
# オフラインの sandbox では、どれも「原文にそのままある」になります（上の最後の行）。sandbox は文書の文を**そのまま写して**答えるからで、
# これは実際のモデルの姿ではありません。実 API では言い換えが混ざり、その数が同じ行に出ます。
# 実際のモデルは文を言い換えて書きます。番号の書き方も揺れますし、送っていない番号や、別の文書の番号を書くこともあります。
# モデルが書きそうな回答を手で書いて、同じ確かめ方を通します（sandbox は言い換えを書けないので、ここは手書きの例です）。

# %%
written = ("在宅勤務をした月は、通信費と光熱費の補助として毎月5,000円が出ます[6]。"
           "支払いは翌月の給料日です［２］。結婚休暇は5日もらえます[4]。出張旅費も同じです[9]。")
for ref in citations.parse_numbered_refs(written):
    if not ref.valid(len(docs)):
        print(f"{str(ref.numbers):8s} 送っていない文書の番号 「{ref.claim}」")
        continue
    verbatim = any(ref.claim in docs[n - 1].text for n in ref.numbers)
    print(f"{str(ref.numbers):8s} → {[docs[n - 1].file for n in ref.numbers]}  "
          f"{'原文にそのままある' if verbatim else '言い換えなので原文で位置を引けない'}  「{ref.claim}」")

# %% [markdown]
# 言い換えた文は、原文の中で位置を引けません。番号が指す文書の中に、その主張を支える文があるかどうかは、人が読んで確かめるしかありません。
# たとえば 2 文目の［２］は給与規程を指しています。給与規程にも在宅勤務手当の条はありますが、「翌月に払う」という決まりがあるのは
# 在宅勤務規程（[6]）のほうです（次のセルで確かめます）。番号が主張を支えているかは、形式からは分かりません。4 文目の [9] は送っていない番号です。

# %%
rule = "翌月の賃金支払日"
print(f"「{rule}」があるか: [2] {docs[1].file} {rule in docs[1].text} / [6] {docs[5].file} {rule in docs[5].text}")

# %% [markdown]
#
# パーサーがいろいろな書き方をどう読むかも、手で書いた例で確かめておきます。

# %%
sample = "繰り越せるのは翌年度までです[3]。残りは消滅します［３］［1］。手当は月額で支払います[2, 6]。出張旅費も同じです[9]。"
for ref in citations.parse_numbered_refs(sample):
    print(f"{str(ref.numbers):8s} 有効 {ref.valid(len(docs))!s:5s} 「{ref.claim}」")


# %% [markdown]
# 番号による出典で分かるのは「どの文書か」までで、文書の中の位置は分かりません。番号は指示に従って書かれたもので、
# 抜けたり間違ったりします。API の引用は、これより強い保証を 1 つ持っています。`cited_text` は API が文書から切り出した範囲なので、
# **その文が原文にそのままある**ことは保証されます（2 で確かめたとおり、スライスと一致します）。ただし、引用された文が
# 回答の主張を**本当に支えているか**までは保証されません。主張と引用文を並べて人が読み、確かめる必要は残ります。
# JSON が要るなら、もう 1 つの道もあります。構造化出力を使わずに引用付きの応答を受け、JSON はこちらのコードで組み立てることです
# （`citations.collect` が返すものを並べるだけです）。
#
# ## 7. 引用をファイルと行に戻す
#
# 画面や監査のログでは「どのファイルの何行目か」で示したいことがよくあります。引用の `document_index` と `start_char_index` から、
# ファイル名と行番号（1 始まり）を出す関数を書きます。

# %% [markdown] nbgrader={"grade": false, "grade_id": "locate-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: 引用をファイル名と行番号に戻す
#
# 関数 `locate(citation, docs)` を書き、`(ファイル名, 行番号)` を返してください。
#
# - `citation` は `char_location` の引用（`document_index`, `start_char_index`, `end_char_index`, `cited_text` を持つ）
# - `docs` はリクエストで送った順の文書のリスト（各要素は `.file` と `.text` を持つ）
# - 行番号は 1 始まりで、`start_char_index` の文字がある行です（引用が複数行にまたがるときも、始まりの行）

# %% nbgrader={"grade": false, "grade_id": "locate", "locked": false, "schema_version": 3, "solution": true, "task": false}
def locate(citation, docs):
    ### BEGIN SOLUTION
    doc = docs[citation.document_index]
    line = doc.text.count("\n", 0, citation.start_char_index) + 1
    return doc.file, line
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 行番号は「その位置より前に、行の区切りがいくつあるか」で決まります。最初の行は区切りが 0 個なので 1 行目です。
# どの文書の位置なのかは `document_index` が決めます。`cited_text` で原文を検索する方法は、同じ文が 2 回出てくる文書で外れます。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "locate-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
from types import SimpleNamespace

c0 = citations.collect(resp)[0]
result = locate(c0, docs)
assert type(result) is tuple and len(result) == 2, f"(ファイル名, 行番号) のタプルを返すはずです: {result!r}"
name, line = locate(c0, docs)
assert type(name) is str and type(line) is int, "(ファイル名 str, 行番号 int) のタプルを返してください"
assert name == docs[c0.document_index].file, f"ファイル名は docs[document_index].file です: {name!r}"
line_text = docs[c0.document_index].text.split("\n")[line - 1]
assert c0.cited_text.split("\n")[0] in line_text, f"{line} 行目 {line_text!r} に引用の始まりがありません"
toy = [SimpleNamespace(file="toy.txt", text="第1条\n第2条\n第3条")]
assert locate(citations.cite(toy, 0, 4, 7), toy) == ("toy.txt", 2), "「第2条」は 2 行目です（行番号は 1 始まり）"
got = locate(citations.cite(toy, 0, 4, 11), toy)
assert got == ("toy.txt", 2), f"複数行にまたがる引用（「第2条」から「第3条」まで）は、始まりの 2 行目のはずです: {got!r}"
two = [SimpleNamespace(file="a.txt", text="見出し\n同じ文。\n"), SimpleNamespace(file="b.txt", text="同じ文。\n別の文。\n同じ文。")]
got = locate(citations.cite(two, 1, 10, 14), two)
assert got == ("b.txt", 3), ("document_index 1 の文書の 2 つ目の「同じ文。」（start_char_index 10）は、b.txt の 3 行目のはずです。"
                             f"cited_text を検索すると、同じ文が前にあるとき別の行を指します: {got!r}")
print("OK:", name, line, "行目")
### BEGIN HIDDEN TESTS
def L(citation, documents):
    r = locate(citation, documents)
    assert type(r) is tuple and len(r) == 2 and type(r[0]) is str and type(r[1]) is int, f"(str, int) expected: {r!r}"
    return r
three = [SimpleNamespace(file="a.txt", text="x\ny\n"),
         SimpleNamespace(file="b.txt", text="alpha\nbeta\n"),
         SimpleNamespace(file="c.txt", text="一行目。\n二行目。\n同じ文。\n四行目。\n同じ文。")]
assert L(citations.cite(three, 2, 0, 4), three) == ("c.txt", 1)            # very first character
assert L(citations.cite(three, 2, 5, 9), three) == ("c.txt", 2)            # right after a newline
assert L(citations.cite(three, 2, 20, 24), three) == ("c.txt", 5)          # last line, no trailing newline
assert L(citations.cite(three, 2, 10, 19), three) == ("c.txt", 3)          # multi-line range: its first line
assert L(citations.cite(three, 2, 4, 9), three) == ("c.txt", 1)            # starts on the newline itself
assert L(citations.cite(three, 1, 6, 10), three) == ("b.txt", 2)           # document_index beyond the first
assert L(citations.cite(three, 0, 2, 3), three) == ("a.txt", 2)
dup = citations.cite(three, 2, 20, 24)
assert dup.cited_text == three[2].text[10:14] and L(dup, three)[1] == 5      # the same sentence is on line 3 too
for cc in cites:
    f, n = L(cc, docs)
    assert (f, n) == (docs[cc.document_index].file, len(docs[cc.document_index].text[:cc.start_char_index].split("\n")))
### END HIDDEN TESTS

# %% [markdown]
# ## 8. 文書が変わると、保存した引用は別の場所を指す
#
# 引用の位置は「送ったときの文書の文字列」の中の位置です。昨年、旧版の規程で答えた回答とその引用を保存していたとします。
# 規程が改定された今、同じ位置を今の文書で開くと、別の文を指します。

# %%
saved = [c for q in ["年休は何日まで繰り越せますか？", QUESTIONS[0]]
         for c in citations.collect(client.messages.create(**messages.question_request(last_year, q, citations=True, model=MODEL)))]
for c in saved[:3]:
    now = docs[c.document_index].text[c.start_char_index:c.end_char_index]
    print(f"{c.document_title}  文字 {c.start_char_index}–{c.end_char_index}")
    print("  保存した引用      :", c.cited_text[:34].replace("\n", "⏎"))
    print("  今の文書の同じ位置:", now[:34].replace("\n", "⏎"))


# %% [markdown] nbgrader={"grade": false, "grade_id": "mismatch-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 原文と合わない引用を見つける
#
# 関数 `mismatched(cites, docs)` を書き、原文と合わない引用の番号（`cites` の中の 0 始まりの位置）をリストで返してください。
# 次のどれかに当てはまる引用が「合わない」です。
#
# - `document_index` に当たる文書が `docs` にない
# - `[start_char_index, end_char_index)` が文書の中に収まっていない（負の位置、文書の長さを超える終わり、始まりが終わりより後）
# - 原文のその範囲が `cited_text` と一致しない

# %% nbgrader={"grade": false, "grade_id": "mismatched", "locked": false, "schema_version": 3, "solution": true, "task": false}
def mismatched(cites, docs):
    ### BEGIN SOLUTION
    bad = []
    for i, c in enumerate(cites):
        k, a, b = c.document_index, c.start_char_index, c.end_char_index
        if not 0 <= k < len(docs):
            bad.append(i)
            continue
        text = docs[k].text
        if not 0 <= a <= b <= len(text) or text[a:b] != c.cited_text:
            bad.append(i)
    return bad
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# Python のスライスは範囲の外でもエラーになりません。`text[-5:]` は末尾の 5 文字を、`text[10:10**9]` は末尾までを黙って返します。
# 一致を比べる前に、位置が文書の中にあるかを自分で確かめてください。文書の番号も同じで、`docs[-1]` は最後の文書を返してしまいます。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "mismatched-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
assert mismatched(cites, docs) == [], f"今の文書への今の引用は、すべて原文と一致するはずです: {mismatched(cites, docs)}"
good = cites[0]
moved = citations.char_location(good.document_index, good.start_char_index + 1, good.end_char_index + 1,
                                good.cited_text, good.document_title)
assert mismatched([good, moved], docs) == [1], "1 文字ずれた引用（2 件目）だけを返してください"
from types import SimpleNamespace
small = [SimpleNamespace(file="s.txt", text="第1条 目的。\n第2条 範囲。")]
size = len(small[0].text)
for what, bad in [("負の document_index（docs[-1] は最後の文書を返してしまいます）",
                   citations.char_location(-1, 0, 7, small[0].text[:7])),
                  ("文書の長さを超える終わり（スライスは範囲の外でも黙って末尾までを返します）",
                   citations.char_location(0, 8, size + 5, small[0].text[8:]))]:
    got = mismatched([citations.cite(small, 0, 0, 7), bad], small)
    assert got == [1], f"{what}の引用（2 件目）は、cited_text がスライスと一致しても合わないはずです: {got!r}"
stale = mismatched(saved, docs)
print(f"昨年の回答の引用 {len(saved)} 件のうち、今の文書と合わないもの {len(stale)} 件: {stale}")
### BEGIN HIDDEN TESTS
def M(cs, documents):
    r = mismatched(cs, documents)
    assert type(r) is list and all(type(i) is int for i in r), f"a list of int expected: {r!r}"
    return r
from types import SimpleNamespace

small = [SimpleNamespace(file="s.txt", text="第1条 目的。\n第2条 範囲。")]
ok = citations.cite(small, 0, 0, 7)
assert M([ok], small) == []
assert M([citations.char_location(1, 0, 7, ok.cited_text)], small) == [0]          # no such document
assert M([citations.char_location(-1, 0, 7, ok.cited_text)], small) == [0]         # negative index
tail = small[0].text[-7:]
assert M([citations.char_location(0, -7, len(small[0].text), tail)], small) == [0]  # negative start
end_text = small[0].text[8:]
assert M([citations.char_location(0, 8, len(small[0].text) + 5, end_text)], small) == [0]  # end too far
assert M([citations.char_location(0, 5, 3, "")], small) == [0]                    # start after end
assert M([ok, citations.char_location(0, 0, 7, "第1条 目的")], small) == [1]       # text differs
expected = [i for i, c in enumerate(saved) if docs[c.document_index].text[c.start_char_index:c.end_char_index] != c.cited_text]
assert stale == expected and stale
assert M([], docs) == []
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "design-review-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 社内 FAQ ボットの設計レビューで、次の案が出ました。
#
# > 規程の全ファイルを 1 つのテキストにつないで、引用を有効にした 1 つの文書ブロックで渡す（ブロックを作る手間が省ける）。
# > 画面側は `{"answer": ..., "sources": [...]}` の JSON が欲しいので、構造化出力（`output_config.format`）で受け取る。
# > 画面では根拠の文を原文の中で強調表示したい。
#
# この案でうまくいかない点を 2 つ挙げ、あなたならどう作るかを 3〜5 文で書いてください。このレッスンで見た結果を根拠にしてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "design-review", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 1 つ目: 1 つの文書にすると document_index は常に 0、タイトルは連結したものになり、返る位置は連結後の通し番号になる。
# ファイルに戻すには連結時のオフセット表を持ち続ける必要があり、規程を 1 つ直すとそれより後ろの位置がすべてずれるので、
# 過去の回答の位置も読めなくなる。
# 2 つ目: 引用と構造化出力は同時に使えず 400 になる。番号で出典を書かせる方法に逃げると、分かるのは文書までで文字位置が無く、
# 番号も指示どおりに書かれる保証がないので、原文の強調表示という要件を満たせない。
# 作り方: 1 ファイル 1 ブロックで引用を有効にし、構造化出力は使わずに引用付きの応答を受け、JSON（answer と、ファイル名・文字範囲・
# cited_text の sources）はこちらのコードで組み立てる。保存する引用には文書の版（タイトルの版と施行日）を残し、表示の前に
# cited_text と原文の一致を確かめる。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 2 つの問題（連結すると document_index とタイトルがファイルを指さず、位置が連結後の通し番号になる／citations と構造化出力は同時に使えず 400 になる）を挙げ、1 ファイル 1 ブロックで引用付きの応答を受け、JSON はコードで組み立てる作り方を書いている。
# - 1 点（半分）: 問題を 1 つだけ正しく挙げている、または番号で出典を書かせるなど文字位置を失う作り方を提案している。
# - 0 点: 案のままでよいとしている、または挙げた問題点が誤っている。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("design-review")

# %% [markdown]
# ## まとめ
#
# - 文書は 1 ファイル 1 ブロックで渡し、全部の文書で引用を有効にする。`document_index` はリクエスト全体で 0 から数える。
# - 引用は文書の番号・タイトル・文字の範囲（0 始まり、終わりは含まない）・引用文を持つ。範囲から原文を切り出せば `cited_text` と一致する。
# - 範囲が返るので、画面で原文を強調表示でき、ファイル名と行番号にも戻せる。
# - 全部を 1 つの文書に連結すると、応答からはどのファイルかが分からなくなる。戻すには自前の表が要り、文書を直すたびに作り直しになる。
# - 引用と構造化出力は同時に使えない。JSON が要るなら、引用付きの応答から自分で組み立てるか、番号による出典に切り替える（位置は失う）。
# - 保存した引用は、送ったときの文書の中の位置を指す。文書が改定されたら、使う前に原文との一致を確かめる。
# - 次の節（08）では、30 問で正答率を測り、矛盾する新旧の文書が混ざったときの振る舞いを見ます。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("07_citations"))
check
