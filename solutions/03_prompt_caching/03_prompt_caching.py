# %% [markdown]
# # 03 プロンプトキャッシュ: 前方一致と、損益分岐の回数
#
# ロングコンテキストの料金と待ち時間は、プロンプトキャッシュ (prompt caching) を使うかどうかで桁が変わります。
# この節では、キャッシュが効く瞬間と効かない瞬間を sandbox でシミュレーションし、応答の `usage` を読んでドルに直します。
# sandbox はこの節で述べる規則（前方一致・区切り・最小長・倍率）どおりに動くので、オフラインで見えるのは**規則の帰結**で、API の測定ではありません。
# 実際の API が同じ規則で動くかは、API キーを設定して同じセルを実行すると確かめられます（この節全体で数十セント）。
#
# **この節で身につくこと**
#
# - 前方一致 (prefix match) と区切り（キャッシュの区切り。API の用語では cache breakpoint）の位置から、どこまでがキャッシュされるかを言える
# - `usage` の欄（`input_tokens`・`cache_creation_input_tokens`・`cache_read_input_tokens`・`cache_creation`）から、書き込みか読み出しかを判定し、料金に直せる
# - キャッシュを壊す書き方（区切りより前の時刻、キー順の違う JSON、モデルの切り替え、最小長に届かない前置き、会話の途中でのシステムプロンプトや設定の変更）を見抜ける
# - キャッシュが安くなる条件（損益分岐）k > (w − r)/(1 − r) を、自分のモデルの倍率で計算できる
# - キャッシュありとなしを、正しい基準線とドルで比べられる
#
# **所要時間** 約 65 分　**前提** 01（トークンを数える）、02（料金）

# %%
import json
import uuid
from datetime import datetime, timedelta

import ctxlab
from ctxlab.api import budget, messages, tokens
from ctxlab.labs import prompt_caching
from ctxlab import corpus
from ctxlab.costs import formulas, pricing
from ctxlab.costs.usage import call_kind, total_input, usage_dict

client = ctxlab.make_client()
print(ctxlab.mode_line(client))

# %% [markdown]
# 実演には、安いモデル（Haiku 4.5）と規程 2 ファイルを使います。仕組みはどのモデルでも同じで、実 API で動かしても
# この節全体で数十セントに収まる大きさです（次のセルが見積もりを表示します。実 API で動かすときは、環境変数 `CTXLAB_BUDGET_USD` を
# 見積もり以上に設定してからカーネルを起動してください。足りなければセルは実行を止めます）。規程全体を Opus 5 で送る場合の金額は、同じ式で計算して示します。
#
# システムプロンプトの末尾に入れる「実行 ID」は、このノートブックを実行し直しても 1 回目が必ず書き込みになるようにするためのものです。
# 1 回の実行の中では変わらないので、キャッシュを壊しません。
#
# オフラインでは、時計を手で進める sandbox（`ctxlab.Sandbox(realtime=False, time_scale=0)`）を使います。時計はセルが進めたときだけ動くので、
# 節と節のあいだで何分読んでいても、キャッシュの寿命（TTL、既定は 5 分。04 で扱います）は切れず、出力は本文のとおりになります。
# 実 API では本物の時計が動きます。2 節から 7 節までを 5 分以上あけて実行すると、書き込みからやり直しになることがあります。

# %%
if ctxlab.is_offline(client):   # a manual clock (and no simulated waiting): the cache outlives however long you read
    client = ctxlab.make_client(offline=True, sandbox=ctxlab.Sandbox(realtime=False, time_scale=0))
DEMO = "claude-haiku-4-5"
RUN_ID = uuid.uuid4().hex[:8]
SYSTEM = f"{messages.SYSTEM_PROMPT}\n（実行 ID: {RUN_ID}）"
docs = [d for d in corpus.load() if d.file in ("hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt")]


def ask(question, model=DEMO, cache_ttl="5m", docs=docs):
    """A request: system, the documents, a breakpoint on the last document, then the question."""
    return messages.question_request(docs, question, model=model, max_tokens=200,
                                     cache_ttl=cache_ttl, system=SYSTEM)


prefix = tokens.count_request(ask("?"), client=client, model=DEMO)
print(f"前置き（システムプロンプト + 規程 {len(docs)} ファイル）: {prefix}")
# the whole lesson sends 25 requests (sections 2-7); online it runs only within CTXLAB_BUDGET_USD
CALLS = 25
per_call = pricing.call_cost(DEMO, cache_write_5m_tokens=prefix.tokens, output_tokens=200).total
budget.check(CALLS * per_call, client, f"この節の実演（{CALLS} 回の呼び出し）")

# %% [markdown]
# ## 1. 前方一致と区切り
#
# API はリクエストを決まった順に 1 本の列として組み立てます: **tools → system → messages**。
# `cache_control` を付けたブロックが**区切り**（API の用語では cache breakpoint）で、列の先頭からそのブロックまで（それを含む）がキャッシュの単位になります。
# 次の呼び出しで、先頭から区切りまでが **バイト単位で同じ** なら保存済みの項目を読み出し、1 バイトでも違えば別物として書き直します。
#
# - 区切りは 1 リクエストに 4 つまで。API は区切りから最大 20 ブロック手前までさかのぼって、一致する項目を探します。
# - 区切りより後ろ（質問）は毎回通常の単価です。だから **毎回同じものを前に、毎回変わるものを後ろに** 置きます。
#
# `ctxlab.api.messages.question_request` は、この並べ方でリクエストを組み立てます。`prompt_caching.layout` で列の順に見てみます。

# %%
req = ask("有給休暇は何日まで繰り越せますか？")
print(prompt_caching.layout(req))

# %% [markdown]
# ## 2. 書き込みと読み出しを `usage` で見る
#
# 同じ前置きに、違う質問を 2 回送ります。1 回目は書き込み、2 回目は読み出しになるはずです。
# 応答の `usage` には 4 つの入力の欄があります。
#
# | 欄 | 意味 | 単価（通常の入力に対する倍率） |
# |---|---|---|
# | `cache_creation_input_tokens` | 区切りまでを新しく保存した分 | 5 分 TTL は 1.25 倍、1 時間は 2 倍 |
# | `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens` | 上の内訳（TTL 別） | 同上 |
# | `cache_read_input_tokens` | 保存済みの項目から読んだ分 | 0.1 倍 |
# | `input_tokens` | **最後の区切りより後ろ** の、キャッシュされない分 | 1 倍 |
#
# （倍率は `data/pricing.json` のモデルごとの値です。新しいモデルには読み出しがもっと安いものもあります。）

# %%
QUESTIONS = ["有給休暇は何日まで繰り越せますか？", "給与の支払日はいつですか？", "時間単位の年休は取れますか？"]
r1 = client.messages.create(**ask(QUESTIONS[0]))
r2 = client.messages.create(**ask(QUESTIONS[1]))
for name, resp in [("1 回目", r1), ("2 回目", r2)]:
    print(name, resp.usage.model_dump(include={"input_tokens", "cache_creation_input_tokens",
                                            "cache_read_input_tokens", "cache_creation"}))

# %% [markdown]
# `input_tokens` が小さいことに注意してください。これは区切りの後ろ（質問）だけの数で、入力の合計ではありません。
# 合計は 3 つの欄の和です。`prompt_caching.explain` が、1 回の `usage` をこの内訳と料金（`pricing.usage_cost`）に直します。

# %%
for name, resp in [("1 回目", r1), ("2 回目", r2)]:
    print(f"--- {name}")
    print(prompt_caching.explain(resp.usage, DEMO))

# %% [markdown]
# ## 3. 正しい比べ方: `cache_control` のない基準線と、ドル
#
# キャッシュの効果を測るときの間違い方は、Anthropic の claude-cookbooks にある `misc/prompt_caching.ipynb` がよい見本です
# （版によって細部が違います）。基準線の「キャッシュなし」と書き込みの区別があいまいで
# （`cache_control` のない「キャッシュなし」の呼び出しが、後の呼び出しのためにキャッシュに載せると説明されています）、
# 比べているのは応答時間と `input_tokens` だけで、ドルの金額は一度も出てきません。`input_tokens` は区切りの後ろだけの数なので、
# キャッシュの有無を比べる材料になりません。書き込みの割増を払った回を基準にすると、節約は実際より大きく見えます。
#
# 正しい比べ方は次のとおりです。
#
# 1. 基準線は `cache_control` を付けないリクエスト（`cache_ttl=None`）で、同じ質問を同じ回数送る
# 2. キャッシュありの側は、1 回目の書き込みも含めて全部数える
# 3. 両方を `usage` からドルに直して、合計で比べる

# %%
r3 = client.messages.create(**ask(QUESTIONS[2]))
cached = [r1, r2, r3]
baseline = [client.messages.create(**ask(q, cache_ttl=None)) for q in QUESTIONS]

print("キャッシュあり（1 回目が書き込み）")
print(prompt_caching.format_calls([r.usage for r in cached], DEMO))
print()
print("基準線: cache_control なし")
print(prompt_caching.format_calls([r.usage for r in baseline], DEMO))

# %%
cost_cached = sum(pricing.usage_cost(r.usage, DEMO).total for r in cached)
cost_base = sum(pricing.usage_cost(r.usage, DEMO).total for r in baseline)
wrong = pricing.usage_cost(r1.usage, DEMO).input / pricing.usage_cost(r2.usage, DEMO).input
right = pricing.usage_cost(baseline[1].usage, DEMO).input / pricing.usage_cost(r2.usage, DEMO).input
in_cached = sum(pricing.usage_cost(r.usage, DEMO).input for r in cached)
in_base = sum(pricing.usage_cost(r.usage, DEMO).input for r in baseline)
print(f"正しい比較（{len(QUESTIONS)} 回の合計、出力込み）: キャッシュあり ${cost_cached:.5f} / なし ${cost_base:.5f}"
      f" → {cost_cached / cost_base:.0%}")
print(f"　入力だけなら: キャッシュあり ${in_cached:.5f} / なし ${in_base:.5f} → {in_cached / in_base:.0%}"
      "（出力の料金はキャッシュで変わらない）")
print(f"間違った比較: 書き込みの回を基準にすると、読み出しは入力が 1/{wrong:.1f} に見える（正しい基準なら 1/{right:.1f}）")

# %% [markdown]
# 実演の額は小さいので、同じ比率を規程全体に当てはめます。使い分けの記事の前提（197,000 トークン、質問と指示 400、回答 700、Opus 5）で、
# 同じ 3 問を送ったときの金額です。

# %%
DOC, Q, OUT, n = 197_000, 400, 700, len(QUESTIONS)
big = "claude-opus-5"
no_cache = n * pricing.call_cost(big, input_tokens=DOC + Q, output_tokens=OUT).total
with_cache = (pricing.call_cost(big, input_tokens=Q, cache_write_5m_tokens=DOC, output_tokens=OUT).total
              + (n - 1) * pricing.call_cost(big, input_tokens=Q, cache_read_tokens=DOC, output_tokens=OUT).total)
print(f"規程全体 × {n} 問（Opus 5、出力込み）: キャッシュなし ${no_cache:.3f} / あり ${with_cache:.3f}"
      f"（差 ${no_cache - with_cache:.3f}）")

# %% [markdown]
# ## 4. キャッシュは正答率を動かさない
#
# 検索して数件だけ渡す、メタデータで絞る、といった手段は **モデルが読むもの** を変えるので、料金と一緒に正答率も動きます。
# キャッシュは違います。モデルに渡るトークン列はキャッシュありでもなしでも同じで、変わるのは課金と前処理（prefill）の扱いだけです。
# このコースで比べる手段（毎回全文・キャッシュ・メタデータで絞る・検索）のうち、正答率を動かさずに料金を下げられるのはキャッシュだけです
# （Batch API の割引も読むものは変えませんが、応答が非同期になるので対話の用途には使えません）。だから、検索を入れるかどうかを議論する前に、固定部分のキャッシュを済ませておきます。
#
# 同じ質問をキャッシュあり・なしで送った 1 回目どうしを比べます。

# %%
a, b = cached[0], baseline[0]
print("入力の合計トークン: キャッシュあり", total_input(a.usage), "/ なし", total_input(b.usage))
print("回答の本文が同じ:", messages.answer_text(a) == messages.answer_text(b))

# %% [markdown]
# sandbox の回答は決定的なので本文まで一致します。実 API では生成のたびに言い回しが揺れることがありますが、それは
# サンプリングの揺れで、キャッシュのせいではありません。モデルが読むトークン列は同じです。
#
# ## 5. キャッシュを壊す書き方
#
# 前方一致なので、危ない書き方は決まっています。**区切りより前に、呼び出しごとに変わるものがある** 形です。
# 4 つの書き方を sandbox でシミュレーションします（sandbox は前方一致の規則どおりに答えます。実 API で同じになるかは、キーを設定して同じセルで確かめられます）。
#
# ### 5.1 システムプロンプトに現在時刻を入れる
#
# よくある書き方です。1 分おきの 3 回の質問を再現します（時刻は `datetime.now()` の代わりに 1 分ずつ進めた値を使います）。

# %%
start = datetime(2026, 12, 1, 9, 0)


def with_clock_in_system(question, now):
    req = ask(question)
    req["system"] = f"現在日時: {now:%Y-%m-%d %H:%M}\n{SYSTEM}"   # changes every call, before the breakpoint
    return req


clock_calls = [client.messages.create(**with_clock_in_system(q, start + timedelta(minutes=i)))
               for i, q in enumerate(QUESTIONS)]
print(prompt_caching.format_calls([r.usage for r in clock_calls], DEMO))
billed = sum(pricing.usage_cost(r.usage, DEMO).input for r in clock_calls)
plain = sum(prompt_caching.uncached_cost(r.usage, DEMO).input for r in clock_calls)
w_demo = pricing.get_model(DEMO).cache_write_5m_multiplier
print(f"入力の請求: ${billed:.6f}（キャッシュを付けなければ ${plain:.6f}）→ {billed / plain:.4f} 倍"
      f"（書き込みの倍率 {w_demo} をわずかに下回る）")
assert 1 < billed / plain < w_demo   # what the next cell says

# %% [markdown]
# `cache_read_input_tokens` が毎回 0 で、毎回書き込みになっています。料金は下がらず、書き込みの割増だけが乗るので、
# 入力の請求は付けなかった場合の書き込みの倍率（1.25 倍）に近くなります。区切りの後ろの質問は通常単価なので、倍率をわずかに下回ります。
#
# 直し方: 時刻は区切りの **後ろ**、質問と一緒に送ります。区切りまでは 2〜3 節のリクエストと同じバイト列になるので、1 回目から読み出しです。

# %%
fixed_calls = [client.messages.create(**ask(f"現在日時: {start + timedelta(minutes=i):%Y-%m-%d %H:%M}\n{q}"))
               for i, q in enumerate(QUESTIONS)]
print(prompt_caching.format_calls([r.usage for r in fixed_calls], DEMO))


# %% [markdown]
# ### 5.2 JSON のキー順
#
# ツール定義はリクエストの先頭（tools）に入ります。同じ内容の辞書でも、組み立てる経路が違うとキーの順番が変わり、
# `json.dumps` したバイト列は別物になります。ツールが変わると、その後ろの system と messages もすべて外れます。

# %%
def lookup_tool(fields):
    return {"name": "lookup_rule", "description": "規程の条文を、ファイル名と条番号で引く",
            "input_schema": {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()},
                             "required": ["file"]}}


tool_a = lookup_tool({"file": "string", "article": "integer"})        # built in one place
tool_b = lookup_tool({"article": "integer"} | {"file": "string"})     # merged from defaults elsewhere
print("辞書として等しい:", tool_a == tool_b)
print("json.dumps が等しい:", json.dumps(tool_a) == json.dumps(tool_b))


def with_tool(question, tool):
    return dict(ask(question), tools=[tool])


key_order = [client.messages.create(**with_tool(QUESTIONS[0], tool_a)),
             client.messages.create(**with_tool(QUESTIONS[1], tool_b))]
print(prompt_caching.format_calls([r.usage for r in key_order], DEMO, ["tool_a", "tool_b"]))


# %% [markdown]
# 直し方: 送る前に `sort_keys=True` でキー順を固定します。どちらの経路で組み立てても同じバイト列になります。
# JSON をシステムプロンプトの文字列に埋め込むときも同じで、`json.dumps(..., sort_keys=True)` を使います
# （リストの順番は `sort_keys` では揃わないので、並べる順も決めておきます）。

# %%
def canonical(obj):
    return json.loads(json.dumps(obj, sort_keys=True, ensure_ascii=False))


print("sort_keys 後の json.dumps が等しい:", json.dumps(canonical(tool_a)) == json.dumps(canonical(tool_b)))
sorted_calls = [client.messages.create(**with_tool(QUESTIONS[0], canonical(tool_a))),
                client.messages.create(**with_tool(QUESTIONS[1], canonical(tool_b)))]
print(prompt_caching.format_calls([r.usage for r in sorted_calls], DEMO, ["canonical(a)", "canonical(b)"]))

# %% [markdown]
# ### 5.3 モデルの切り替え
#
# キャッシュはモデルごとに持たれます。2 節で書き込んだのと同じリクエストを、モデルだけ替えて送ります。

# %%
other = "claude-sonnet-5"
switched = client.messages.create(**ask(QUESTIONS[0], model=other))
print(prompt_caching.explain(switched.usage, other))

# %% [markdown]
# 前置きはバイト単位で同じでも、読み出しは 0 で、新しいモデルの側にもう一度書き込んでいます。
# 質問の難しさでモデルを振り分ける設計では、振り分け先ごとにキャッシュが分かれることを見込んでおきます。
#
# ### 5.4 最小長に届かない前置き
#
# キャッシュできる前置きには、モデルごとの最小の長さがあります。下回ると `cache_control` は **エラーにならずに無視されます**。
# 短い規程 1 ファイルだけを区切りの前に置いてみます。

# %%
short_doc = [d for d in corpus.load() if d.file == "hr_tsukin.txt"]
short_req = ask(QUESTIONS[0], docs=short_doc)
n_short = tokens.count_request(short_req, client=client, model=DEMO).tokens
for m in (DEMO, other):
    print(f"{m}: 最小長 {pricing.get_model(m).min_cacheable_tokens:,} tokens")
print(f"この前置き: 約 {n_short:,} tokens")
short_calls = [client.messages.create(**ask(q, docs=short_doc)) for q in QUESTIONS[:2]]
print(prompt_caching.format_calls([r.usage for r in short_calls], DEMO))

# %% [markdown]
# 書き込みも読み出しも 0 で、エラーもありません。数千トークンの指示文をキャッシュしたつもりで効いていない、というのはよくある行き違いです。
# 最小長はモデルで違うので、モデルを替えたら確かめ直します。
#
# ### 5.5 途中で変える設定: システムプロンプトの書き換え、citations
#
# 長い会話の途中でシステムプロンプトを書き換える設計も、同じ理由で壊します（コストの記事が挙げる例です）。system は messages より前にあるので、
# それまでに積み上げた履歴の分まで一度に読めなくなります。引用（citations、07 で扱います）を途中で有効にするのも同じで、
# API のドキュメントでは citations の切り替えは system と messages の両方を無効にします。2 節で書き込んだ前置きに対して、それぞれ 1 回ずつ送ります。

# %%
rewritten = dict(ask(QUESTIONS[0]), system=SYSTEM + "\n回答は箇条書きで書いてください。")   # changed mid-conversation
with_citations = messages.question_request(docs, QUESTIONS[0], model=DEMO, max_tokens=200, citations=True,
                                           system=SYSTEM)
toggled = [client.messages.create(**rewritten), client.messages.create(**with_citations)]
print(prompt_caching.format_calls([r.usage for r in toggled], DEMO, ["system を書き換え", "citations を有効に"]))

# %% [markdown]
# どちらも読み出しが 0 で、前置き全体を書き直しています。ドキュメントは、ほかにも次の設定の変更がキャッシュを無効にすると書いています
# （sandbox もこの表どおりに扱いますが、ここでは実演しません）。
#
# | 変えたもの | 無効になる範囲 |
# |---|---|
# | ツール定義（tools） | すべて（tools・system・messages） |
# | citations の有効・無効、システムプロンプト | system と messages |
# | `tool_choice`、画像の有無、thinking（拡張思考）の設定 | messages |
#
# 会話の途中でこれらを切り替える設計では、切り替えた回に書き込みの割増を払い、それまでの履歴の読み出しを失います。
# 切り替えるなら会話の最初に決めておきます（07 で citations を使うときも同じです）。
#
# ## 6. 症状を読む: キャッシュを入れたのに請求が下がらない
#
# | 症状 | 確かめる欄 | 原因 | 直し方 |
# |---|---|---|---|
# | 請求が下がらない、むしろ上がった | `cache_read_input_tokens` が毎回 0、`cache_creation_input_tokens` が毎回出る | 区切りより前に毎回変わるものがある（時刻・利用者名・キー順の違う JSON・組み替えたツール）、モデルを切り替えている、または会話の途中で system・citations・`tool_choice`・thinking を変えている | 変わるものを区切りの後ろへ。JSON は `sort_keys=True`。ツールの集合と設定は会話の最初に決める |
# | 請求が下がらない、割増もない | 書き込みも読み出しも 0 | 区切りがない、または区切りまでがモデルの最小長に届かない | 区切りを置く位置を確かめ、足りなければ固定部分を区切りの前にまとめる |
# | ときどきしか下がらない | 読み出しと書き込みが交互に出る | 呼び出しの間隔が TTL を超えている | 04 で扱う（TTL の選び方） |
#
# 5.1 の最後の呼び出しを `explain` に通すと、1 行目の症状がそのまま読めます。

# %%
print(prompt_caching.explain(clock_calls[-1].usage, DEMO))


# %% [markdown] nbgrader={"grade": false, "grade_id": "diagnose-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: 一連の呼び出しの `usage` から診断する
#
# 同じ前置きで送った一連の呼び出しの `usage` を受け取り、キャッシュの状態を次の 4 つのどれかで返す関数 `diagnose(usages)` を書いてください。
#
# | 返す値 | 条件 |
# |---|---|
# | `"nothing_cached"` | 何もキャッシュされていない（区切りがない、または区切りまでが最小長に届かない。`usage` からはどちらか区別できない） |
# | `"never_hits"` | 書き込みは起きているのに、読み出しが一度もない（区切りより前で何かが変わっている） |
# | `"hit"` | どの呼び出しも読み出している（最初からキャッシュが温まっていた） |
# | `"write_then_hit"` | 読み出した呼び出しと、読み出さなかった呼び出しがある |
#
# - `usages` の要素は、API が返す形の dict か、SDK の `resp.usage` オブジェクトです。欄が欠けているか `None` なら 0 と読みます。
# - 判定には 2 回以上の呼び出しが要ります。0 回か 1 回なら `ValueError` を投げてください。

# %% nbgrader={"grade": false, "grade_id": "diagnose", "locked": false, "schema_version": 3, "solution": true, "task": false}
def diagnose(usages):
    ### BEGIN SOLUTION
    records = [usage_dict(u) for u in usages]
    if len(records) < 2:
        raise ValueError(f"need at least 2 calls to judge a cache, got {len(records)}")
    reads = [u["cache_read_input_tokens"] > 0 for u in records]
    writes = [u["cache_creation_input_tokens"] > 0 for u in records]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    if all(reads):
        return "hit"
    return "write_then_hit"
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 欄の欠けや `None`、SDK のオブジェクトと dict の違いは `usage_dict(u)` がまとめて吸収します。
# 会話が伸びていく呼び出しでは、読み出しと書き込みが同じ回に両方出ます。そういう回をどちらに数えるかを、表の言葉から決めてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "diagnose-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
def u(write=0, read=0, tail=20):
    return {"input_tokens": tail, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 100}


got = diagnose([u(write=9000), u(read=9000), u(read=9000)])
assert got == "write_then_hit", f"1 回目が書き込み、2 回目から読み出し: 'write_then_hit' のはずが {got!r}"
got = diagnose([u(write=9000)] * 3)
assert got == "never_hits", f"読み出しが毎回 0 で書き込みが毎回: 'never_hits' のはずが {got!r}"
got = diagnose([u(tail=3000)] * 3)
assert got == "nothing_cached", f"書き込みも読み出しも 0: 'nothing_cached' のはずが {got!r}"
got = diagnose([u(read=9000)] * 2)
assert got == "hit", f"毎回読み出し: 'hit' のはずが {got!r}"
for name, calls in [("2 節", cached), ("5.1 時刻", clock_calls), ("5.1 直した版", fixed_calls), ("5.4 短い", short_calls)]:
    print(f"{name}: {diagnose([r.usage for r in calls])}")
### BEGIN HIDDEN TESTS
for _calls in ([u(write=9000), u(read=9000)], [u(write=9000)] * 2, [u()] * 2, [u(read=9000)] * 2):
    assert type(diagnose(_calls)) is str      # a string, not an object that equals anything
for bad in ([], [u(write=9000)]):
    try:
        diagnose(bad)
        raise AssertionError(f"ValueError expected for {len(bad)} call(s)")
    except ValueError:
        pass
# real SDK usage objects from the demos above
assert diagnose([r.usage for r in cached]) == "write_then_hit"
assert diagnose([r.usage for r in clock_calls]) == "never_hits"
assert diagnose([r.usage for r in fixed_calls]) == "hit"
assert diagnose([r.usage for r in short_calls]) == "nothing_cached"
assert diagnose([r.usage for r in key_order]) == "never_hits"
assert diagnose([r.usage for r in baseline]) == "nothing_cached"
# None and missing fields count as 0
assert diagnose([{"input_tokens": 3000, "cache_creation_input_tokens": None, "cache_read_input_tokens": None},
                 {"input_tokens": 3000}]) == "nothing_cached"
assert diagnose([{"input_tokens": 10, "cache_creation_input_tokens": 9000},
                 {"input_tokens": 10, "cache_read_input_tokens": 9000, "cache_creation_input_tokens": None}]) == "write_then_hit"
# 1-hour writes only, never read
one_hour = {"input_tokens": 10, "cache_creation_input_tokens": 9000, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 9000}}
assert diagnose([one_hour, one_hour]) == "never_hits"
# a growing conversation: every call reads the old prefix and writes the new turn
assert diagnose([u(write=500, read=9000), u(write=400, read=9500), u(write=300, read=9900)]) == "hit"
assert diagnose([u(write=9000), u(write=500, read=9000), u(read=9500)]) == "write_then_hit"
# expired in the middle: still some hits
assert diagnose([u(read=9000), u(write=9000), u(read=9000)]) == "write_then_hit"
# one write, then nothing cached: reads never came
assert diagnose([u(write=9000), u(), u()]) == "never_hits"
# a big uncached tail is not a cache hit
assert diagnose([u(tail=200_000), u(tail=200_000)]) == "nothing_cached"
# SDK-like objects with attribute access
from types import SimpleNamespace as NS
objs = [NS(input_tokens=12, cache_creation_input_tokens=8000, cache_read_input_tokens=0,
           cache_creation=NS(ephemeral_5m_input_tokens=8000, ephemeral_1h_input_tokens=0), output_tokens=5),
        NS(input_tokens=12, cache_creation_input_tokens=0, cache_read_input_tokens=8000,
           cache_creation=None, output_tokens=5)]
assert diagnose(objs) == "write_then_hit"
### END HIDDEN TESTS

# %% [markdown]
# ## 7. 損益分岐: k > (w − r)/(1 − r)
#
# コストの記事は、3 つの方式の 1 回あたりの入力コストを 1 つの式にまとめています。参照しうる資料の全体を $M$ トークン、
# 入力トークン 1 つあたりの通常単価を $a$ とすると、$aM$ は「資料の全体を通常単価で 1 回送る代金」です。1 回の呼び出しの入力コスト $C$ を
# この $aM$ で割った値（$aM$ を 1 とする単位）で測ります。出力の料金はどの方式でも同じなので、式には入りません。
#
# $$\frac{C}{aM} = \frac{M_0}{M}\cdot\frac{w+(k-1)r}{k} + \rho + s$$
#
# - $M_0/M$: キャッシュする固定部分の割合、$k$: 使い回し回数（1 回の書き込みを分け合う呼び出しの数）
# - $w$: 書き込みの倍率、$r$: 読み出しの倍率、$\rho$: 検索して毎回載せる割合、$s$: 検索 1 回の費用
#
# 全文をキャッシュする場合（$M_0/M = 1$, $\rho = s = 0$）が、毎回全文を送る 1 を下回る条件を解くと
#
# $$\frac{w+(k-1)r}{k} < 1 \iff k > \frac{w-r}{1-r}$$
#
# 右辺には文書の長さも呼び出し回数の絶対値も出てきません。倍率 2 つだけで決まります。

# %%
opus = pricing.get_model("claude-opus-5")
r = opus.cache_read_multiplier
for ttl in ("5m", "1h"):
    w = opus.write_multiplier(ttl)
    print(f"TTL {ttl}: w = {w}, r = {r} → k > {formulas.breakeven_reuses(w, r):.2f}"
          f" → {formulas.first_paying_call(w, r)} 回目から安い")

# %% [markdown]
# 1 時間 TTL の書き込みが `usage` のどこに出るかを見ます（別の規程で前置きを作ります）。内訳は `ephemeral_1h_input_tokens` に入り、
# `usage_cost` は価格表の倍率で書き込みを計算します。この倍率は価格表から来るもので、sandbox が測ったものではありません。
# 実際に請求される額は、実 API で送ったあとにコンソールの利用明細で確かめます。

# %%
fin_docs = [d for d in corpus.load() if d.file in ("fin_keihi_2025.txt", "fin_ryohi_2024.txt")]
hour = client.messages.create(**ask("出張の日当はいくらですか？", cache_ttl="1h", docs=fin_docs))
hu = usage_dict(hour.usage)
print(hu["cache_creation"])
written = hu["cache_creation_input_tokens"]
multiplier = pricing.usage_cost(hu, DEMO).cache_write / (written * pricing.get_model(DEMO).input_per_token)
print(f"書き込み {written:,} tokens を usage_cost で計算すると、通常単価の {multiplier:.2f} 倍（価格表の倍率）")

# %% [markdown]
# コストの記事の表を、式から計算し直します。$k$ 回で 1 回書き込み、$k-1$ 回読み出したときの 1 回あたりのコストです。

# %%
table = prompt_caching.per_call_table(ks=(1, 2, 3, 5, 10, 20), ws=(1.25, 2.0), r=r)
print(f"{'k':>3}  {'w = 1.25 (5m)':>14}  {'w = 2.00 (1h)':>14}")
for row in table:
    print(f"{row['k']:>3}  {row[1.25]:>14.3f}  {row[2.0]:>14.3f}")

# %% [markdown]
# $k = 1$ では 1 を上回ります。割増を払っただけで、割引を一度も受け取っていない状態です。5.1 の時刻入りのシステムプロンプトは、
# 毎回この行にいます。
#
# コストの記事の 2 つの図を、同じ式から描きます（$w = 1.25$、$r = 0.1$、検索は $\rho = 0.3$、$s = 0.02$、索引を作る一度きりの費用 $E = 0.05$）。
# 左は呼び出し回数に対する総額、右は使い回し回数に対する 1 回あたりのコストです。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

from ctxlab.plots.prompt_caching import cost_curves

article = prompt_caching.COST_ARTICLE   # the cost article's w, r, rho, s, E
fig = cost_curves(**article, n_max=10, k_max=20)
plt.show()

# %% [markdown]
# 左の図では、傾きの差がそのまま総額の差になります。毎回全文の傾きは 1、キャッシュは 2 回目から $r$、検索は $\rho + s$ です。
# 検索は初回こそ安いものの、いずれキャッシュに追いつかれます。どこで並ぶかを式から出します。

# %%
meet = prompt_caching.meeting_call(**article)
print(f"キャッシュと検索の総額が並ぶ回数: n = {meet:.2f}")
for n in (4, 5, 6):
    t = prompt_caching.total_costs(n, **article)
    print(f"n = {n}: キャッシュ {t['cache']:.3f} / 検索 {t['retrieval']:.3f} / 毎回全文 {t['full']:.3f}")

# %% [markdown]
# コストの記事は「5 回目でキャッシュに追い抜かれる」と書いていますが、上の出力のとおり、5 回目はちょうど同額で、
# キャッシュが安くなるのはその次からです。図の読み方としては同じ結論（数回で逆転する）ですが、損益分岐の回数を見積もりに使うときは
# 等号の扱いに気をつけてください。
#
# 同じ式から、実際の使い回し回数を `usage` から求める方法も出てきます。一連の呼び出しの `cache_read_input_tokens` の合計を
# `cache_creation_input_tokens` の合計で割ると、書き込み 1 回あたり何回読まれたか、つまり $k - 1$ です。
# 実 API の `usage` で計算すれば実測値になります。オフラインでは、sandbox のシミュレーションから出した値です。

# %%
reads = sum(usage_dict(resp.usage)["cache_read_input_tokens"] for resp in cached)
writes = sum(usage_dict(resp.usage)["cache_creation_input_tokens"] for resp in cached)
print(f"2〜3 節の 3 回: 読み出し / 書き込み = {reads / writes:.2f} → k ≈ {reads / writes + 1:.2f}"
      f"（{'sandbox のシミュレーション' if ctxlab.is_offline(client) else '実 API の usage から'}）")


# %% [markdown] nbgrader={"grade": false, "grade_id": "breakeven-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（2 点）: 何回目からキャッシュが安くなるか
#
# 書き込みの倍率 `w` と読み出しの倍率 `r`（どちらも通常の入力単価に対する倍率）を受け取り、
# 同じ前置きを `k` 回送ったとき、キャッシュありの合計 `w + (k - 1) r` がキャッシュなしの合計 `k` を **下回る** 最小の `k`（整数）を返す関数
# `first_paying_call(w, r)` を書いてください。
#
# - 同額（ちょうど損益分岐）は「安くなった」に数えません。
# - `r` が 1 以上なら何回送っても安くならないので `ValueError`、`w` か `r` が負なら `ValueError` を投げてください。
# - 価格表にないモデルでも使えるようにします。たとえば読み出しが 0.1 倍より安いモデルでも、同じ関数で答えが出るはずです。

# %% nbgrader={"grade": false, "grade_id": "first_paying_call", "locked": false, "schema_version": 3, "solution": true, "task": false}
def first_paying_call(w, r):
    ### BEGIN SOLUTION
    if w < 0 or r < 0:
        raise ValueError(f"multipliers must be >= 0, got w={w!r}, r={r!r}")
    if r >= 1:
        raise ValueError(f"a read multiplier r={r!r} >= 1 never pays back")
    k = 1
    while not w + (k - 1) * r < k:
        k += 1
    return k
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 式 $k > (w - r)/(1 - r)$ の右辺がちょうど整数になるときは、その回はまだ同額です。
# `0.1` のように 2 進数で表せない値を含む割り算では、浮動小数点の結果が整数の少し上か少し下にずれることがあります。
# そのずれで答えが 1 回ぶん変わらない書き方を考えてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "first_paying_call-tests", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
got = first_paying_call(1.25, 0.1)
assert got == 2, f"5 分 TTL（w = 1.25, r = 0.1）は 2 回目から安いはず: {got!r}"
got = first_paying_call(2.0, 0.1)
assert got == 3, f"1 時間 TTL（w = 2.0, r = 0.1）は 3 回目から安いはず: {got!r}"
for m in pricing.models().values():
    print(f"{m.display_name:18s} 5m: {first_paying_call(m.write_multiplier('5m'), m.cache_read_multiplier)} 回目から"
          f" / 1h: {first_paying_call(m.write_multiplier('1h'), m.cache_read_multiplier)} 回目から")
### BEGIN HIDDEN TESTS
import dataclasses
# the library's own versions must not be what answers: they raise while the learner's function runs
_twins = {name: getattr(formulas, name) for name in ("first_paying_call", "breakeven_reuses")}
def _twin(*args, **kwargs):
    raise AssertionError("ctxlab.costs.formulas の first_paying_call / breakeven_reuses を使わずに書いてください")
for _name in _twins:
    setattr(formulas, _name, _twin)
try:
    _got = {(w_, r_): first_paying_call(w_, r_) for w_, r_ in [(1.25, 0.1), (2.0, 0.1), (2.0, 0.0), (2.0, 0.5),
                                                              (1.0, 0.1), (0.9, 0.1), (3.0, 0.1), (1.25, 0.5),
                                                              (1.25, 0.9), (1.25, 0.05), (2.0, 0.05), (1.1, 0.1)]}
finally:
    for _name, _f in _twins.items():
        setattr(formulas, _name, _f)
assert all(type(v) is int for v in _got.values()), _got
assert _got == {(1.25, 0.1): 2, (2.0, 0.1): 3, (2.0, 0.0): 3, (2.0, 0.5): 4, (1.0, 0.1): 2, (0.9, 0.1): 1,
                (3.0, 0.1): 4, (1.25, 0.5): 2, (1.25, 0.9): 4, (1.25, 0.05): 2, (2.0, 0.05): 3, (1.1, 0.1): 2}, _got
cheap = dataclasses.replace(pricing.get_model("claude-opus-5"), id="cheap-read", cache_read_multiplier=0.05)
assert first_paying_call(cheap.write_multiplier("5m"), cheap.cache_read_multiplier) == 2
assert first_paying_call(cheap.write_multiplier("1h"), cheap.cache_read_multiplier) == 3
assert first_paying_call(2.0, 0.0) == 3          # exactly even at k = 2
assert first_paying_call(2.0, 0.5) == 4          # exactly even at k = 3
assert first_paying_call(1.0, 0.1) == 2          # even at k = 1
assert first_paying_call(0.9, 0.1) == 1          # a write below base price pays at once
assert first_paying_call(3.0, 0.1) == 4
assert first_paying_call(1.25, 0.5) == 2
assert first_paying_call(1.25, 0.9) == 4         # (1.25 - 0.9) / 0.1 = 3.5
result = first_paying_call(1.25, 0.1)
assert isinstance(result, int) and not isinstance(result, bool)
for w_, r_ in [(1.25, 1.0), (1.25, 1.5), (-1.0, 0.1), (1.25, -0.1)]:
    try:
        first_paying_call(w_, r_)
        raise AssertionError(f"ValueError expected for w={w_}, r={r_}")
    except ValueError:
        pass
### END HIDDEN TESTS

# %% [markdown]
# 読み出しの倍率を下げても、損益分岐の回数はほとんど動きません。損益分岐を決めているのは書き込みの割増のほうです。
# TTL の選び方（5 分か 1 時間か）は、呼び出しの間隔と合わせて 04 で扱います。

# %% [markdown] nbgrader={"grade": false, "grade_id": "compare-claim-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）
#
# 同僚が次の手順で「プロンプトキャッシュで入力コストが激減した」と報告しました。
#
# > `cache_control` を付けた同じリクエストを 2 回送り、1 回目と 2 回目の `input_tokens` と応答時間を比べた。
# > 2 回目の `input_tokens` は 1 回目のごく一部だった。
#
# この測り方の問題点を 2 つ以上挙げ、チームに報告できる比べ方の手順を書いてください。

# %% [markdown] nbgrader={"grade": true, "grade_id": "compare-claim", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 問題点:
# - 1 回目も cache_control 付きなので「キャッシュなし」ではなく書き込み（1.25 倍の割増）。書き込みと読み出しを比べており、節約を大きく見せる。基準線は cache_control を付けないリクエストにする。
# - input_tokens は最後の区切りより後ろだけの数なので、キャッシュの有無にかかわらず小さい。入力の合計は cache_read + cache_creation + input_tokens で、比べるなら全欄をドルに直す必要がある。
# - 2 回だけの比較は k = 2 の場合でしかない。実際の節約は何回使い回せるか（間隔・TTL・前置きの更新）で決まるので、想定する回数や実測の読み出し/書き込み比で示す。
# - 応答時間は揺れるので、1 回ずつの比較では言えない。
#
# 手順: 同じ質問の列を、cache_control なしの基準線とキャッシュありで同じ回数送り、キャッシュありは 1 回目の書き込みも含めて、usage の全欄を usage_cost でドルに直して合計で比べる。cache_read_input_tokens が 2 回目以降に出ていることも確かめる。
# ### END SOLUTION

# %% [markdown]
# ## まとめ
#
# - キャッシュは前方一致。tools → system → messages の順に、先頭から区切り（`cache_control`）までがバイト単位で同じときだけ読み出せる。
# - `usage` は 3 つの入力欄の和で読む。`input_tokens` は区切りの後ろだけ。書き込みは 1.25 倍（1 時間は 2 倍）、読み出しは 0.1 倍。
# - 区切りより前の時刻・キー順の違う JSON・組み替えたツール・モデルの切り替えで、読み出しは 0 のまま割増だけ払う。最小長に届かなければ何も起きない（エラーも出ない）。
# - キャッシュが安くなるのは、損益分岐 (w − r)/(1 − r) を超えた最初の回から。損益分岐を決めているのは書き込みの割増で、割増の大きい 1 時間 TTL ほど遅い。
# - 比べるときは、`cache_control` のない基準線と、ドル。キャッシュはモデルが読むトークン列を変えないので、正答率を動かさずに料金だけを下げる。
# - 次の節（04）では、呼び出しの間隔と TTL から、実際のヒット率と $k$ を見積もります。
