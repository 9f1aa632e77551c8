# %% [markdown]
# # 04 TTL: 5 分か 1 時間かを、質問の間隔で決める
#
# キャッシュのエントリには寿命（TTL, Time To Live）があります。5 分と 1 時間の 2 種類で、1 時間は書き込みの割増が大きい代わりに長く残ります。
# どちらが得かは、質問がどんな間隔で来るかで決まります。このレッスンでは、時計を進められる sandbox で TTL の規則をシミュレーションし、
# 1 日ぶんの質問を再生してヒット率と料金を見積もります。sandbox は、このレッスンで述べる規則どおりに動くように作ってあります。
# ここで見えるのは規則の帰結で、実 API の測定ではありません（実 API で確かめるには、実際に 5 分・1 時間待つことになります）。
#
# **このレッスンで身につくこと**
#
# - 読み出しのたびに TTL が延びることを、sandbox の時計を動かして見せられる
# - 間隔を「前の質問の開始から次の質問の開始まで」で測る理由を説明できる
# - 1 日のリクエスト時刻を再生し、TTL 5 分と 1 時間のヒット率と料金を見積もれる
# - 「ヒット率 ≈ 前の質問から TTL 以内に来た質問の割合」を使い、リクエストのログから TTL を選べる
#
# **所要時間** 約 75 分（任意の部分を含めると約 80 分）　**前提** 02（料金）、03（プロンプトキャッシュ）
#
# **任意の部分** 最後の 11 節（同時に送った質問）と 12 節（質問数を動かしたときの TTL の図）は、演習には使いません。時間のあるときに読んでください。

# %%
import ctxlab
from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.costs import compare, pricing
from ctxlab.labs import ttl as traffic

client = ctxlab.make_client()
ctxlab.show_cost("04_ttl", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. 時計を進められる sandbox
#
# TTL を確かめるには時間がかかります。「1 時間後もキャッシュが残っているか」を実 API で見るには、1 時間待つしかありません。
# そこでこのレッスンの実験は、時計を手で進められる sandbox で行います。`ctxlab.Sandbox(realtime=False)` の時計は、
# `sb.advance(秒)` を呼んだときだけ進みます。**API キーがあっても、このレッスンの実験は sandbox で動きます**（実 API の時計は進められないため）。
# 送るコードは実 API と同じ `client.messages.create` です。時計はセルが進めたときだけ動くので、読むのに何分かけても出力は本文のとおりです。
#
# 送るのは、現行版の規程をまるごと（1 ファイル 1 ブロック）と質問です。区切り（cache_control）は最後の文書に置き、質問はその後ろです（03 と同じ形）。
# 回答の長さは TTL と関係がないので、`max_tokens` は短くしておきます。

# %%
sb = ctxlab.Sandbox(realtime=False, time_scale=0)   # 時計は sb.advance() でだけ進む。待ち時間のシミュレーションなし
lab = ctxlab.make_client(offline=True, sandbox=sb)  # このレッスンの時計の実験に使うクライアント
print(ctxlab.simulated_note("このレッスンの TTL の実験", "実 API の時計は進められないため。送るコードは実 API と同じです"))
docs = corpus.load()                                 # 現行版: このコースが送る文書
questions = [q.question for q in corpus.questions()]
MODEL = pricing.DEFAULT_MODEL   # このレッスンの料金の計算に使うモデル（いまの Opus）


def ask(i, ttl="5m", max_tokens=16):
    """Send field question i (in turn) over the whole corpus, cached with the given TTL."""
    req = messages.question_request(docs, questions[i % len(questions)], model=MODEL,
                                    max_tokens=max_tokens, cache_ttl=ttl)
    return lab.messages.create(**req)


def kind(usage):
    if usage.cache_read_input_tokens:
        return "読み出し"
    return "書き込み" if usage.cache_creation_input_tokens else "キャッシュなし"


print(f"{len(docs)} ファイル / {corpus.total_chars(docs):,} 字、sandbox の時計は {traffic.clock_label(sb.now())} から")

# %% [markdown]
# ## 2. 読み出しが TTL を延ばす
#
# 4 分おきに 1 時間、質問を送ります。5 分 TTL のエントリは、書き込んだだけなら 5 分で消えます。
# ところが読み出しがあるたびに、寿命は「最後に使われてから 5 分」に延びます。延長に料金はかかりません。

# %%
kinds = []
for i in range(16):                      # 08:00, 08:04, ..., 09:00
    if i:
        sb.advance(4 * 60)               # 4 分後
    r = ask(i)
    kinds.append(kind(r.usage))
    cost = pricing.usage_cost(r.usage, MODEL)
    print(f"{traffic.clock_label(sb.now())}  {kind(r.usage)}  "
          f"書き込み {r.usage.cache_creation_input_tokens:>7,}  読み出し {r.usage.cache_read_input_tokens:>7,}  ${cost.total:.3f}")
entry = sb.cache_entries()[0]            # sandbox だけで見られるキャッシュの中身
print(f"エントリ: 読まれた回数 {entry['reads']}、あと {entry['expires_in_s']:.0f} 秒で期限切れ")

# %% [markdown]
# 最初の 1 回だけが書き込みで、残りはすべて読み出しです。書き込みから 1 時間たっても、エントリはまだ生きています。
# では、間隔を 6 分に空けるとどうなるでしょうか。

# %%
read_cost = cost.total                   # 上の最後のリクエストは読み出し
sb.advance(6 * 60)                       # 6 分後: past the 5-minute TTL
r = ask(16)
write_cost = pricing.usage_cost(r.usage, MODEL).total
print(f"{traffic.clock_label(sb.now())}（6 分後）  {kind(r.usage)}  ${write_cost:.3f}（読み出しの {write_cost / read_cost:.1f} 倍）")

# %% [markdown]
# 5 分を少しでも超えると、エントリは消えていて、文書全体をもう一度書き込みます。1 回の料金が読み出しの何倍にもなります。
#
# ## 3. 間隔は「開始から開始まで」
#
# 使い分けの記事によれば、TTL の時計はリクエストが届いた時点から数えます（API のドキュメントは、どの時点から数えるかまでは書いていません。
# sandbox はこの記事の説明どおりに作ってあります）。そうだとすると、利用者の感覚では「回答を読み終えてから 5 分以内なら大丈夫」と思いがちですが、
# **回答の生成にかかった時間も間隔に含まれます**。どちらの時点から数えるにしても、ぎりぎりを狙う設計はやめて、
# 回答の所要時間ぶん以上の余裕（5 分 TTL なら 4 分程度を上限と見る）を取っておくのが安全です。
#
# たとえば、規程をまるごとキャッシュから読み、700 トークンの回答を書く場合の所要時間を、価格表にある待ち時間のモデル（使い分けの記事の数字に合わせたシミュレーション。実測ではない）で見積もります。
# 回答が出終わってから 4 分 50 秒考えて次を聞く利用者と、前の質問を送ってから 4 分 50 秒後に次を聞く利用者を比べます。

# %%
doc_tokens = r.usage.cache_creation_input_tokens          # キャッシュした前半部分（API が数えた値）
lm = pricing.latency_model()
answer_s = pricing.ttft_seconds(0, doc_tokens) + 700 / lm["output_tokens_per_s"]
THINK = 4 * 60 + 50
print(f"回答の所要時間（シミュレーション）: {answer_s:.1f} 秒")

for label, gap in [("送ってから 4 分 50 秒後に次", THINK), ("出終わってから 4 分 50 秒後に次", answer_s + THINK)]:
    sb.clear_cache()
    ask(0)                                              # 最初の質問がキャッシュを書き込む
    sb.advance(gap)
    nxt = ask(1)
    print(f"{label:18s} 開始から開始まで {gap:6.1f} 秒 → {kind(nxt.usage)}")

# %% [markdown]
# 利用者にとっては同じ「4 分 50 秒」でも、回答が出終わってから数えると、開始から開始までは 5 分を超えてしまいます。
# ログから間隔を測るときは、**リクエストを送った時刻どうし**の差を取ってください。
#
# ## 5. 1 日の質問を作る
#
# 次は 1 日ぶんの質問です。`traffic.office_day` は、朝と夕方に固まる社内の問い合わせを、シード付きの乱数で決まった形に作ります
# （同じ引数なら、どのマシンでも同じ時刻の列になります）。**これは合成したトラフィックで、実測のログではありません。**
# 自社のログがあれば、その時刻の列（08:00 からの秒数）で置き換えれば、以下はそのまま動きます。

# %%
print("プロファイル bunched:", traffic.PROFILES["bunched"].description)
day = traffic.office_day(20, seed=0, profile="bunched")
print(" ".join(traffic.clock_label(t) for t in day))

g = traffic.gaps(day)
print(f"間隔 {len(g)} 個: 5 分未満 {sum(x < 300 for x in g)}、5〜60 分 {sum(300 <= x < 3600 for x in g)}、"
      f"60 分以上 {sum(x >= 3600 for x in g)}")

# %% [markdown]
# ## 6. 1 日を sandbox でシミュレーションする
#
# `traffic.replay` は、時刻の列を受け取り、新しい sandbox の時計をその時刻まで進めては、本物の SDK で 1 件ずつ送ります。
# 返ってきた `usage` から、ヒットかどうかと料金を集めます。TTL 5 分と 1 時間で同じ 1 日を再生します。

# %%
replays = {ttl: traffic.replay(day, docs, ttl=ttl, model=MODEL) for ttl in ("5m", "1h")}
for ttl, rep in replays.items():
    print(f"TTL {ttl}: ヒット率 {rep.hit_rate:4.0%}  入力側の料金 ${rep.input_cost_usd:6.2f}"
          f"（キャッシュなしなら ${rep.input_cost_without_cache_usd:.2f}）")

# %% [markdown]
# 1 日の流れを図にします。上は 30 分ごとの質問数、下は TTL ごとに、各質問がヒット（読み出し）だったかミス（書き込み）だったかです。

# %%
# %matplotlib inline
from ctxlab.plots import ttl as ttl_plot

top, bottom = ttl_plot.day(day, {ttl: rep.hits for ttl, rep in replays.items()},
                           title="1 日 20 問（朝夕に集中する合成トラフィック）を sandbox で再生")

# %% [markdown]
# 5 分 TTL では、質問が途切れるたびに書き込みからやり直しになります。1 時間 TTL は、同じ 1 日の多くの区間をつないでいます。
#
# ## 7. ヒット率 ≈ 前の質問から TTL 以内に来た質問の割合
#
# 読み出しも書き込みも、そのリクエストの時刻から寿命を TTL ぶんに決め直します。つまり、ある質問がヒットするかどうかは
# **直前の質問から TTL 以内に来たかどうか**だけで決まります。キャッシュを再生しなくても、間隔の分布からヒット率が読めるはずです。
# 再生したヒット率（シミュレーション）と、間隔から数えた割合を並べます。

# %%
n = len(day)
for ttl, rep in replays.items():
    share = traffic.share_within(day, ttl)
    print(f"TTL {ttl}: 再生したヒット率 {rep.hit_rate:6.1%}  |  間隔のうち {ttl} 未満の割合 {share:6.1%}"
          f"  × (n-1)/n = {share * (n - 1) / n:6.1%}")

# %% [markdown]
# 「ほぼ同じ」の差は、その日の最初の質問です。最初の質問には前がないので必ずミスになり、間隔の数は質問の数より 1 つ少なくなります。
# 間隔の割合に (n − 1)/n を掛けると、再生したヒット率と同じ値になります。sandbox はこの規則どおりに作ってあるので、
# 同じ値になるのは当然で、これは規則の帰結を 2 通りに計算しただけです（実 API が同じ規則で動くことの証明ではありません）。
# 自社のログでも、リクエストの時刻の差を取って数えるだけで、TTL ごとのヒット率をこの規則で見積もれます。
# 実際のヒット率は、実 API の応答の `cache_read_input_tokens` を数えて確かめます。
#
# ## 8. 料金: 1 時間 TTL はいつ割増に見合うか
#
# TTL を 5 分から 1 時間に変えると、2 つのことが同時に起きます。
#
# - 書き込み 1 回が高くなる（書き込みの倍率が上がる）
# - 5〜60 分の間隔が、ミス（書き込み）からヒット（読み出し）に変わる
#
# 価格表の倍率で、この 2 つを文書 1 回ぶんの単価に直します。

# %%
opus = pricing.get_model(MODEL)
w5, w1, rd = opus.cache_write_5m_multiplier, opus.cache_write_1h_multiplier, opus.cache_read_multiplier
extra_per_write = w1 - w5
saving_per_gap = w5 - rd
print(f"1h のミス 1 回は、5m のミスより「文書を通常単価で 1 回送る額」の {extra_per_write:.2f} 倍だけ高い")
print(f"5〜60 分の間隔 1 つが 5m のミスから 1h のヒットに変わると、同じ額の {saving_per_gap:.2f} 倍だけ安い")
print(f"→ 1h が得になるのは「5〜60 分の間隔の数」>「1h でもミスする回数」× {extra_per_write / saving_per_gap:.3g} のとき")

for ttl, rep in replays.items():
    writes = sum(r.wrote for r in rep.requests)
    print(f"TTL {ttl}: 書き込み {writes:2d} 回・読み出し {len(rep.requests) - writes:2d} 回 → "
          f"文書ぶん ${sum(r.cost.cache_write + r.cost.cache_read for r in rep.requests):.2f}")


# %% [markdown] nbgrader={"grade": false, "grade_id": "ttl-from-log-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（3 点）: リクエストのログから TTL を選ぶ
#
# 関数 `ttl_from_log(log, model)` を書いてください。`log` はリクエスト 1 件ごとの `(送った時刻, 回答が出終わった時刻)`（秒）のリストで、
# 時刻の順に並んでいるとは限りません。`model` は料金を計算するモデルの名前です。すべてのリクエストが同じ文書を同じ区切りでキャッシュするとして、
# 組 `(choice, gaps_5_60, misses_1h)` を返します。
#
# - `gaps_5_60`（int）: 5 分 TTL ではミスで、1 時間 TTL ならヒットになるリクエストの数（直前の質問との間隔が 5〜60 分のもの）
# - `misses_1h`（int）: 1 時間 TTL でもミスするリクエストの数（その日の最初と、60 分以上空いたもの）
# - `choice`（str）: `"none"`（キャッシュしない）・`"5m"`・`"1h"` のうち、その日の料金がいちばん安いもの。同額なら none → 5m → 1h の順で先のもの
#
# 間隔をどこから測るかは 3 節、1 時間が割増に見合う条件は 8 節です。ヒットかミスかは道具で数えて構いません:
# `traffic.model_hits(時刻のリスト, "5m")`（リクエストごとにヒットなら True。同じ時刻のリクエストが互いを読めない規則も入っています）、
# `traffic.hit_rate`、`traffic.gaps`。倍率は `pricing.get_model(model)` の `cache_write_5m_multiplier`・`cache_write_1h_multiplier`・`cache_read_multiplier` です。
# 料金をまとめて出す `traffic.compare_ttls`・`traffic.day_cost`（演習 2 の答え）は、採点では使えません。

# %% nbgrader={"grade": false, "grade_id": "ttl_from_log", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ttl_from_log(log, model):
    ### BEGIN SOLUTION
    starts = [sent for sent, _done in log]   # gaps run from start to start (section 3), not from the answer's end
    n = len(starts)
    hits_5m = sum(traffic.model_hits(starts, "5m"))
    hits_1h = sum(traffic.model_hits(starts, "1h"))
    gaps_5_60 = hits_1h - hits_5m            # misses at 5m that 1h turns into reads
    misses_1h = n - hits_1h                  # the first request and the gaps of an hour or more
    m = pricing.get_model(model)
    # the question and the answer cost the same under all three: compare the document's part,
    # in units of sending the document once at the base input price
    cost = {"none": n,
            "5m": (n - hits_5m) * m.cache_write_5m_multiplier + hits_5m * m.cache_read_multiplier,
            "1h": misses_1h * m.cache_write_1h_multiplier + hits_1h * m.cache_read_multiplier}
    choice = min(cost, key=cost.get)         # on a tie, the first of none, 5m, 1h
    return choice, gaps_5_60, misses_1h
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 質問と回答のトークンは、3 つのどれを選んでも同じだけかかります。差が出るのは文書の部分だけなので、「文書を通常単価で 1 回送る額」を 1 として、
# なし・5 分・1 時間のそれぞれで 1 日に何単位払うかを数えれば比べられます（8 節の倍率の差がそのまま効きます）。
# ヒット率が高いほうが安いとは限りません。1 時間にすると、ヒットに変わる質問で得をする一方、1 時間でもミスする質問では書き込みが高くなります。
# 倍率はモデルごとに価格表にあります。記事の表の値ではなく、引数のモデルの値を使ってください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "ttl_from_log-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
def sent_at(starts, took=30):   # (送った時刻, 出終わった時刻) のログ。回答はどれも took 秒
    return [(t, t + took) for t in starts]


def sessions(n, extra):   # 2 時間おきに n 回の会話（1 分おきに 4 問）。最初の extra 回は 10 分後にもう 1 問
    offsets = lambda i: (0, 60, 120, 180, 780) if i < extra else (0, 60, 120, 180)
    return sent_at([i * 7200 + d for i in range(n) for d in offsets(i)], 25)


def check_log(log, model, want, why):
    got = ttl_from_log(log, model)
    assert type(got) is tuple and len(got) == 3, f"(choice, gaps_5_60, misses_1h) の組（tuple）で返してください: {got!r}"
    choice, g, m = got
    assert type(choice) is str and choice in ("none", "5m", "1h"), f"choice は none・5m・1h のどれか（str）: {choice!r}"
    assert type(g) is int and type(m) is int, f"gaps_5_60 と misses_1h は件数（int）です: {g!r}, {m!r}"
    assert (choice, g, m) == want, f"{why}。{want} のはずです: {got!r}"


check_log(sent_at([0, 240, 480, 840]), MODEL, ("1h", 1, 1),
          "0・4 分・8 分・14 分: 5 分ではミスで 1 時間ならヒットになるのは 14 分の 1 件、1 時間でもミスするのは最初の 1 件です")
check_log([(0, 40), (310, 350), (620, 660)], MODEL, ("1h", 2, 1),
          "間隔は送った時刻どうし（開始から開始、3 節）で測ります。回答が出終わってからだと 270 秒に見えますが、"
          "実際は 310 秒なので 5 分 TTL ではミスです")
check_log([(0, 20), (400, 420), (400, 430)], MODEL, ("1h", 2, 1),
          "400 秒に同時に送った 2 件は互いの書き込みを読めないので、どちらも 0 秒のリクエストとの間隔（400 秒）で判定します"
          "（traffic.model_hits はこの規則で数えます）")
check_log(sent_at([i * 5400 for i in range(5)]), MODEL, ("none", 0, 5),
          "90 分おきなら、どちらの TTL でも一度も読まれず、書き込みの割増だけを払います。"
          "キャッシュしない（\"none\"）も選択肢に入れていますか")
check_log(sent_at([0, 60, 120, 7200, 7260, 7320, 7920, 14400, 14460, 14520]), MODEL, ("5m", 1, 3),
          "1 時間のほうがヒット率は高くても、ヒットに変わる 1 件では、1 時間でもミスする 3 件の書き込みの割増を取り返せません。"
          "ヒット率ではなく料金で比べます（8 節の条件）")
# 読み出しの倍率が違う 2 つのモデル: 同じログで結論が入れ替わる
for other, want in ((MODEL, "1h"), ("claude-haiku-5-5", "5m")):
    check_log(sessions(30, 19), other, (want, 19, 30),
              f"30 回の会話のうち 19 回が 10 分後にもう 1 問: {pricing.get_model(other).display_name} の倍率"
              f"（読み出し {pricing.get_model(other).cache_read_multiplier}）で比べます。引数 model のモデルの倍率を使っていますか")
# 5 節の 1 日（回答の所要時間は 3 節のシミュレーション）を、6 節の sandbox の再生と比べる
day_log = [(t, t + answer_s) for t in day]
_hits = {ttl: sum(rep.hits) for ttl, rep in replays.items()}
_sandbox = {"none": replays["5m"].input_cost_without_cache_usd,
            **{ttl: rep.input_cost_usd for ttl, rep in replays.items()}}
check_log(day_log, MODEL, (min(_sandbox, key=_sandbox.get), _hits["1h"] - _hits["5m"], len(day) - _hits["1h"]),
          "5 節の 1 日: 6 節で sandbox が再生したヒットの数と料金（シミュレーション）と合いません")
print("5 節の 1 日:", ttl_from_log(day_log, MODEL), "（6 節の sandbox の再生と同じ数と結論）")
print("採点では、ほかのログとモデルでも確かめます。")
### BEGIN HIDDEN TESTS
import random as _random
from ctxlab.costs import pricing as _pricing
from ctxlab.labs import ttl as _ttl


def _expected(log, model):
    """(choice, gaps_5_60, misses_1h) from the library, and how far the cheapest is from the next (dollars)."""
    starts = [s for s, _ in log]
    h5, h1 = sum(_ttl.model_hits(starts, "5m")), sum(_ttl.model_hits(starts, "1h"))
    usd = {k: v["cost_usd"] for k, v in _ttl.compare_ttls(starts, 100_000, model=model).items()}
    ranked = sorted(usd.values())
    return (_ttl.cheapest(usd), h1 - h5, len(starts) - h1), ranked[1] - ranked[0]


_rng = _random.Random(4)
_cases = [([], "claude-opus-5-5"), ([(100.0, 130.0)], "claude-haiku-5-5"),
          ([(0, 20), (400, 420), (400, 430)], "claude-opus-5-5"),            # same time: both judged against 0
          ([(0, 10), (0, 15), (0, 30), (10, 40)], "claude-sonnet-5-5"),
          ([(0, 290), (300, 310)], "claude-opus-5-5"),                      # a gap of exactly 300 s misses at 5m
          ([(0, 3590), (3600, 3610), (3900, 3910)], "claude-opus-5-5"),    # and exactly 3600 s at 1h
          (sessions(30, 19), "claude-opus-5-5"), (sessions(30, 19), "claude-haiku-5-5"),
          (sessions(30, 19), "claude-fable-5-2"), (sessions(30, 19), "claude-opus-5"),
          (sent_at([i * 1800 for i in range(20)], 200), "claude-opus-5-5"),
          (sent_at([i * 60 for i in range(100)], 50), "claude-haiku-4-5")]
_models = sorted(_pricing.models())
for _n, _profile in [(5, "bunched"), (10, "spread"), (20, "bunched"), (30, "meetings"), (40, "spread"), (80, "bunched"),
                     (160, "bunched"), (12, "meetings")]:
    for _seed in range(3):
        _starts = _ttl.office_day(_n, seed=_seed + 11, profile=_profile)
        _log = [(t, t + _rng.uniform(5, 240)) for t in _starts]
        _rng.shuffle(_log)
        _cases.append((_log, _rng.choice(_models)))
assert ttl_from_log([], "claude-opus-5-5") == ("none", 0, 0)   # nothing to pay: the tie goes to none
_flips = 0
for _log, _model in _cases:
    _want, _margin = _expected(_log, _model)
    _got = ttl_from_log(list(_log), _model)
    assert type(_got) is tuple and len(_got) == 3, _got
    assert type(_got[0]) is str and type(_got[1]) is int and type(_got[2]) is int, _got
    assert _got[1:] == _want[1:], (_log[:5], _model, _got, _want)
    if _margin > 1e-9:   # an exact tie allows either answer's rounding
        assert _got[0] == _want[0], (_log[:5], _model, _got, _want)
    _flips += _want[0] != _expected(_log, "claude-opus-5-5")[0][0]
assert _flips > 0   # the cases include logs where the model changes the choice
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "ttl-costs-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（3 点）: TTL ごとの 1 日の料金
#
# 関数 `ttl_costs(times, doc_tokens, model="claude-opus-5-5", question_tokens=400, output_tokens=700)` を書き、
# `{"none": ..., "5m": ..., "1h": ...}`（ドル）を返してください。
#
# - `"none"`: キャッシュを使わない。毎回 `doc_tokens + question_tokens` を通常単価で送る
# - `"5m"` / `"1h"`: ミスした質問は文書 `doc_tokens` をその TTL の単価で書き込み、ヒットした質問は読み出す。どちらでも質問 `question_tokens` は通常単価
# - 回答 `output_tokens` は、どの場合も毎回かかる
#
# ヒットの数は `traffic.model_hits(times, "5m")`（リクエストごとにヒットなら True）か `traffic.hit_rate` で数えられます。`pricing.call_cost` を使って構いません（`traffic.day_cost` / `traffic.compare_ttls` は採点では使えません）。

# %% nbgrader={"grade": false, "grade_id": "ttl_costs", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ttl_costs(times, doc_tokens, model="claude-opus-5-5", question_tokens=400, output_tokens=700):
    ### BEGIN SOLUTION
    n = len(times)
    base = dict(input_tokens=question_tokens, output_tokens=output_tokens)
    out = {"none": n * pricing.call_cost(model, input_tokens=doc_tokens + question_tokens,
                                         output_tokens=output_tokens).total}
    for ttl, write_field in [("5m", "cache_write_5m_tokens"), ("1h", "cache_write_1h_tokens")]:
        hits = sum(traffic.model_hits(times, ttl))
        miss = pricing.call_cost(model, **base, **{write_field: doc_tokens}).total
        hit = pricing.call_cost(model, **base, cache_read_tokens=doc_tokens).total
        out[ttl] = (n - hits) * miss + hits * hit
    return out
    ### END SOLUTION


# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# TTL ごとに「ミスの回数」と「ヒットの回数」が分かれば、あとは 1 回ぶんの料金を 2 種類（ミスのとき・ヒットのとき）作って掛けるだけです。
# 書き込みの倍率は TTL で違います。`pricing.call_cost` の引数 `cache_write_5m_tokens` と `cache_write_1h_tokens` を使い分けてください。
#
# </details>

# %% nbgrader={"grade": true, "grade_id": "ttl_costs-tests", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
c = ttl_costs([0, 120, 1000], 100_000)
c_haiku = ttl_costs([0, 120, 1000], 100_000, model="claude-haiku-4-5")
mine = ttl_costs(day, doc_tokens, question_tokens=0, output_tokens=0)
full = ttl_costs(day, doc_tokens)
assert set(c) == {"none", "5m", "1h"}, f"キーは none・5m・1h の 3 つです: {sorted(c)}"
_per_q = pricing.call_cost(MODEL, input_tokens=400, output_tokens=700).total
_doc = 100_000 * opus.input_per_token
assert abs(c["none"] - 3 * (_per_q + _doc)) < 1e-9, f"キャッシュなしは 3 回とも通常単価: {c['none']:.4f}"
assert abs(c["5m"] - (3 * _per_q + _doc * (w5 + rd + w5))) < 1e-9, \
    f"0・120・1000 秒を 5m で送ると 書き込み・読み出し・書き込み です: {c['5m']:.4f}"
assert abs(c["1h"] - (3 * _per_q + _doc * (w1 + rd + rd))) < 1e-9, \
    f"1h なら 1000 秒の質問もヒットして 書き込み・読み出し・読み出し です: {c['1h']:.4f}"
_haiku_call = lambda **kw: pricing.call_cost("claude-haiku-4-5", input_tokens=400, output_tokens=700, **kw).total
assert abs(c_haiku["1h"] - (_haiku_call(cache_write_1h_tokens=100_000) + 2 * _haiku_call(cache_read_tokens=100_000))) < 1e-9, (
    f"model=\"claude-haiku-4-5\" なら Haiku 4.5 の単価で計算するはずです（引数 model を使っていますか）: {c_haiku['1h']:.4f}")
# モデルの文書部分と、同じ日の sandbox のシミュレーションを比べる
for ttl, rep in replays.items():
    measured = sum(r.cost.cache_write + r.cost.cache_read for r in rep.requests)
    assert abs(mine[ttl] - measured) < 1e-6, f"TTL {ttl}: sandbox の文書ぶん ${measured:.4f} と違います: ${mine[ttl]:.4f}"
print("sandbox のシミュレーション（6 節の再生）と同じ額です:", {k: round(v, 2) for k, v in full.items()})
### BEGIN HIDDEN TESTS
from ctxlab.labs import ttl as _ttl
_c = ttl_costs([0, 120, 1000], 100_000)
assert type(_c) is dict and all(type(v) in (float, int) for v in _c.values()), _c
assert ttl_costs([], 100_000) == {"none": 0, "5m": 0, "1h": 0}
_batch = ttl_costs([i * 5400 for i in range(7)], 150_000)
_busy = ttl_costs([i * 60 for i in range(100)], 150_000)
_half = ttl_costs([i * 1800 for i in range(20)], 150_000)
_haiku = ttl_costs([0, 200, 2000, 9000], 50_000, model="claude-haiku-4-5", question_tokens=100, output_tokens=50)
_day = ttl_costs(_ttl.office_day(60, seed=3), 180_000)
assert min(_batch, key=_batch.get) == "none"
assert min(_busy, key=_busy.get) == "5m"
assert min(_half, key=_half.get) == "1h"
_ref = _ttl.compare_ttls(_ttl.office_day(60, seed=3), 180_000, model="claude-opus-5-5")   # the exercise's default model
assert all(abs(_day[k] - _ref[k]["cost_usd"]) < 1e-9 for k in _ref)
_h = pricing.get_model("claude-haiku-4-5")
_q = 4 * (100 * _h.input_per_token + 50 * _h.output_per_token)
_d = 50_000 * _h.input_per_token
assert abs(_haiku["5m"] - (_q + _d * (3 * _h.cache_write_5m_multiplier + _h.cache_read_multiplier))) < 1e-9
assert abs(_haiku["1h"] - (_q + _d * (2 * _h.cache_write_1h_multiplier + 2 * _h.cache_read_multiplier))) < 1e-9
### END HIDDEN TESTS

# %% [markdown]
# ## 9. トラフィックの形で、答えは変わる
#
# 同じ計算を `ctxlab.labs.ttl.compare_ttls` にまとめてあります（演習と同じ規則で、上で sandbox のシミュレーションと同じ額になったもの）。
# 再生しなくても計算できるので、形の違うトラフィックをまとめて比べます。文書は規程まるごと、質問 400・回答 700 トークン（使い分けの記事の前提）です。

# %%
profiles = [
    ("朝夕に集中・20 問", traffic.office_day(20, seed=0, profile="bunched")),
    ("終日に分散・20 問", traffic.office_day(20, seed=0, profile="spread")),
    ("朝夕に集中・60 問", traffic.office_day(60, seed=0, profile="bunched")),
    ("朝夕に集中・200 問", traffic.office_day(200, seed=0, profile="bunched")),
    ("会議のときだけ・30 問", traffic.office_day(30, seed=0, profile="meetings")),
    ("90 分おきのバッチ・7 問", [i * 5400.0 for i in range(7)]),
]
LABEL = traffic.TTL_LABELS
table, shown = traffic.traffic_table(dict(profiles), doc_tokens, model=MODEL)
shown

# %% [markdown]
# 表から読み取れることを、最安の列から出します（どれも合成トラフィックの 1 日ずつで、平均ではありません）。

# %%
cheapest_of = {name: traffic.cheapest(c) for name, c in table.items()}
office = [name for name in table if name.startswith(("朝夕", "終日"))]
print("会議のときだけ（5 分以内に続き、途切れると 1 時間以上空く）:", LABEL[cheapest_of["会議のときだけ・30 問"]], "が最安")
print("社内の問い合わせ（5〜60 分の間隔が混ざる）:", "、".join(f"{n} → {LABEL[cheapest_of[n]]}" for n in office))
print("90 分おきのバッチ（間隔がいつも 1 時間超）:", LABEL[cheapest_of["90 分おきのバッチ・7 問"]], "が最安")

# %% [markdown]
# - 質問が 5 分以内に続き、途切れると 1 時間以上空くなら、5 分 TTL で足ります。1 時間にしても増えるヒットがなく、書き込みの割増だけが増えます。
# - 5〜60 分の間隔が混ざる社内の問い合わせでは、1 時間 TTL が割増に見合う日があります。ただし質問数と日によって入れ替わります（10 節と、任意の 12 節の図）。
# - 間隔がいつも 1 時間を超える定時のバッチでは、どちらの TTL でも一度も読まれません。キャッシュしないのがいちばん安く、キャッシュすると書き込みの割増だけを払います。
#
# 使い分けの記事は「利用が朝夕に固まる社内システムでは、ヒット率は 7 割から 9 割」とし、月額を「1 日 20 問・ヒット率 80%」と 5 分 TTL の書き込み単価で計算していました。
# この合成トラフィックで、どの行がどちらの TTL で 80% に届くかを確かめます。

# %%
reach = [name for name, c in table.items() if c["5m"]["hit_rate"] >= 0.8]
print("5 分 TTL でヒット率 80% 以上:", ", ".join(reach) or "なし")
print("1 時間 TTL でヒット率 80% 以上:", ", ".join(n for n, c in table.items() if c["1h"]["hit_rate"] >= 0.8) or "なし")

five, hour = traffic.hit_rate_stats(20, "5m"), traffic.hit_rate_stats(20, "1h")
for name, st in (("5 分", five), ("1 時間", hour)):
    print(f"1 日 20 問（朝夕に集中）・TTL {name}: {st.label()}。1 日ごとには {st.lowest:.0%}〜{st.highest:.0%}")

# %% [markdown]
# この合成トラフィックでは、1 日 20 問でヒット率 80% に届くのは 1 時間 TTL のほうで、その場合の書き込みは 5 分 TTL より高い単価です。
# 00・02・05 と `ctxlab compare` の月額は、この合成トラフィックのヒット率を質問数ごとに使います（記事の 80% は注に並べます）。
# 1 日ごとのヒット率は大きくばらつくので、平均の標準誤差が 0.5 ポイント未満になるまで日数を重ねます（`traffic.hit_rate_stats`。何日かはセルが表示します）。
# 「ヒット率 80%」と「5 分 TTL の単価」を同時に置いて月額を出すなら、その前提が成り立つかを自社のログの間隔で確かめてください。
# ここで使ったトラフィックは仮定した一例にすぎず、結論はログの形しだいで変わります。

# %% [markdown]
# ## 10. ログから TTL を選ぶ
#
# ある部署（10 人ほど）の 1 週間ぶんのログがあるとします。ここでは `spread` プロファイルの 5 日分で代用します。
# 日ごとに、間隔の分布と料金を並べます。料金は `traffic.compare_ttls`（演習 2 の `ttl_costs` と同じ計算をするライブラリの関数）で出すので、
# 演習 2 を解く前でも、解き方を間違えていても、この表は同じです。

# %%
week = [traffic.office_day(10, seed=s, profile="spread") for s in range(5)]
totals = {"none": 0.0, "5m": 0.0, "1h": 0.0}
for d, ts in enumerate(week, 1):
    g = traffic.gaps(ts)
    c = {k: v["cost_usd"] for k, v in traffic.compare_ttls(ts, doc_tokens, model=MODEL).items()}
    for k in totals:
        totals[k] += c[k]
    print(f"{d} 日目: 間隔 5 分未満 {sum(x < 300 for x in g)}・5〜60 分 {sum(300 <= x < 3600 for x in g)}・"
          f"60 分以上 {sum(x >= 3600 for x in g)}  "
          + "  ".join(f"{LABEL[k]} ${v:.2f}" for k, v in c.items())
          + f"  → 最安 {LABEL[min(c, key=c.get)]}")
print("1 週間の合計:", "  ".join(f"{LABEL[k]} ${v:.2f}" for k, v in totals.items()))
week_gaps = [x for ts in week for x in traffic.gaps(ts)]
print(f"1 週間の間隔 {len(week_gaps)} 個: 5 分未満 {sum(x < 300 for x in week_gaps)}・"
      f"5〜60 分 {sum(300 <= x < 3600 for x in week_gaps)}・60 分以上 {sum(x >= 3600 for x in week_gaps)}、"
      f"1 時間でもミスする回数（各日の最初 + 60 分以上）{len(week) + sum(x >= 3600 for x in week_gaps)}")

# %% [markdown] nbgrader={"grade": false, "grade_id": "choose-ttl-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 3（記述・2 点）: この部署にどの TTL を設定するか
#
# 上の 1 週間のログについて、この部署に設定する TTL（なし・5 分・1 時間）を 1 つ選び、理由を書いてください。
# 次の 3 つに触れてください。
#
# 1. 料金の比較（上のセルの出力を引用して）
# 2. なぜその TTL が得になるのかを、間隔の分布（5 分未満・5〜60 分・60 分以上）と、節 8 の「1 時間 TTL が得になる条件」で説明する
# 3. この判断が変わりうる条件と、設定したあとに何を見て確かめるか

# %% [markdown] nbgrader={"grade": true, "grade_id": "choose-ttl", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# （採点の観点）出力の数字を引用して合計で比べていること、日によって最安が入れ替わることに気づいていること、
# 間隔の分布と節 8 の条件で理由を説明していること、確かめ方を挙げていること。
#
# 解答例: 5 分 TTL を選ぶ。1 週間の合計（出力の最終行）では 5 分が最安で、1 時間との差は小さく、キャッシュなしよりははっきり安い。
# 日によって 5 分が最安の日と 1 時間が最安の日が入れ替わるので、1 日だけを見て決めず、週の合計で判断する。理由は間隔の分布にある。5 分未満の間隔はどちらの TTL でもヒットなので差を生まない。
# 差を生むのは 5〜60 分の間隔（1 時間にするとミスがヒットに変わり、文書 1 回ぶんで書き込み 5m と読み出しの差だけ安くなる）と、
# 1 時間でもミスする回数（その日の最初と 60 分以上の間隔。1 回ごとに書き込みの倍率の差だけ高くなる）で、
# 節 8 の条件（5〜60 分の間隔の数 > 1 時間でもミスする回数 × 倍率の比）を満たす日が多いかどうかで決まる。
# 1 日 10 問ほどでは両者の差は小さいので、料金が拮抗するなら、ヒットが多いほうが最初のトークンまでの待ち時間も短くなる点を加味してよい。
# 判断が変わるのは、質問数が増えて 5 分未満の間隔が大半になったとき（5 分で足りる）や、利用が減って 60 分以上の間隔が増えたとき（キャッシュなしが有利になる）。
# 設定後は、実際のリクエストの時刻の差の分布と、応答の cache_read_input_tokens / cache_creation_input_tokens の比でヒット率を測り、同じ計算をやり直す。
# 一斉に送る処理があるなら、最初の 1 本でウォームアップしてから送る。
#
# ### BEGIN RUBRIC
# - 2 点（満点）: 上のセルの出力の数字を引いて TTL を 1 つ選び、理由を間隔の分布（5〜60 分の間隔が 1 時間 TTL でヒットに変わる数と、1 時間でもミスする回数）と節 8 の条件で説明し、判断が変わる条件と設定後に確かめるもの（リクエスト時刻の差の分布、cache_read と cache_creation の比）を挙げている。
# - 1 点（半分）: 3 つの観点のうち 2 つを満たしている（例: 数字と選択は正しいが、間隔の分布による説明がない）。
# - 0 点: 出力の数字を引かずに選んでいる、または「1 時間のほうが長く残るから得」のように倍率と間隔を無視している。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("choose-ttl")

# %% [markdown]
# ## まとめ
#
# - 読み出しは TTL を無料で延ばす。だから、ある質問がヒットするかは「直前の質問から TTL 以内に来たか」だけで決まる。
# - 間隔はリクエストの**開始から開始まで**。回答を書いている時間も含まれる。キャッシュが空のときに同時に送った質問は全部ミスになる（任意の 11 節）。
# - ヒット率 ≈ 間隔のうち TTL 未満の割合（正確には × (n − 1)/n。その日の最初の質問は必ずミス）。キャッシュを再生しなくても、ログの時刻の差から見積もれる。
# - 5 分か 1 時間かは、5〜60 分の間隔の数と、1 時間でもミスする回数の比で決まる。間隔がいつも 1 時間を超えるなら、キャッシュしないのが最安。
# - ヒット率は 1 日ごとにばらつく。月額に使うのは多くの日の平均で、00・02・05 と `ctxlab compare` はこのレッスンの合成トラフィックで、標準誤差が 0.5 ポイント未満になる日数の平均を使う。
# - 次の節（05）では、そのヒット率を入れて、ロングコンテキスト・キャッシュ・絞り込み・RAG の月額がどこで入れ替わるかを見ます。

# %% [markdown]
# ## 確認問題
#
# このレッスンの判断を確かめる問題です（採点はされません）。答えるとすぐに正誤と、**すべての選択肢**について、なぜ成り立つか／成り立たないかが出ます。
# ウィジェットを描けない画面では、問題が文字で表示されます。`check.select("b")` → `check.submit()` → `check.next()` で答え、
# `print(check.as_text())` で解説を読めます。

# %%
from ctxlab import quiz
from ctxlab.widgets.quiz import Quiz

check = Quiz(quiz.quiz_for("04_ttl"))
check

# %% [markdown]
# ## 11.（任意） 同時に送った最初の質問は、全部ミスになる
#
# キャッシュのエントリは、それを書き込む応答が始まってから使えるようになります。したがって、キャッシュが空のときに
# 同じ文書で質問を同時に送ると、どれも他方の書き込みを読めず、全部が書き込みになります。
# sandbox の `sb.concurrent()` は、ブロックの中のリクエストを同時に送ったものとして扱います（sandbox だけの機能です）。

# %%
sb.clear_cache()
with sb.concurrent():
    burst = [ask(i) for i in range(3)]
after = ask(3)
for name, m in [("同時 1", burst[0]), ("同時 2", burst[1]), ("同時 3", burst[2]), ("その後", after)]:
    print(f"{name}: {kind(m.usage)}  ${pricing.usage_cost(m.usage, MODEL).total:.3f}")

# %% [markdown]
# 一斉に投げるバッチや、朝いちばんに複数の人が同時に聞く場面では、この分だけ書き込みが重なります。
# 避けたいときは、まず 1 本だけ送って応答が始まるのを待ち、残りをそのあとに送ります（ウォームアップ）。

# %% [markdown]
# ## 12.（任意） 質問数を動かしたときの TTL
#
# 9 節の表は 1 日ずつでした。質問数を動かして、TTL ごとのヒット率と 1 問あたりの料金を描きます（朝夕に集中するプロファイル、00・02・05 と同じ平均）。

# %%
import matplotlib.pyplot as plt

counts = [5, 10, 20, 40, 80, 160, 320]


def mean_day_cost(n_q, ttl):
    """A day's cost averaged over the same simulated days as the hit rate of that traffic and TTL."""
    days = traffic.days_for(n_q, ttl or "5m")
    return sum(traffic.day_cost(traffic.office_day(n_q, seed=s), ttl, doc_tokens, model=MODEL) for s in range(days)) / days


rate = {ttl: [traffic.hit_rate_stats(n_q, ttl).mean for n_q in counts] for ttl in ("5m", "1h")}
per_q = {ttl: [mean_day_cost(n_q, None if ttl == "none" else ttl) / n_q for n_q in counts] for ttl in ("none", "5m", "1h")}

COLOR = {"none": "gray", "5m": "tab:blue", "1h": "tab:orange"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
for ttl in rate:
    ax1.plot(counts, rate[ttl], marker="o", color=COLOR[ttl], label=f"TTL {LABEL[ttl]}")
for ttl in per_q:
    ax2.plot(counts, per_q[ttl], marker="o", color=COLOR[ttl],
             label="キャッシュなし" if ttl == "none" else f"TTL {LABEL[ttl]}")
ax1.set_ylabel("ヒット率")
ax2.set_ylabel("1 問あたりの料金（ドル）")
for ax in (ax1, ax2):
    ax.set_xscale("log")
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set_xlabel("1 日の質問数")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle("朝夕に集中する合成トラフィック（シミュレーション）: 質問数と TTL", fontsize=10)
plt.tight_layout()

# %% [markdown]
# 図の数字を、5 分と 1 時間の 1 問あたりの差として並べます。差が正なら 1 時間が安く、差の大きさが割増に見合う度合いです。

# %%
gap = {n_q: per_q["5m"][i] - per_q["1h"][i] for i, n_q in enumerate(counts)}
print("1 問あたり（5 分 − 1 時間）:", "  ".join(f"{n_q} 問 ${g:+.3f}" for n_q, g in gap.items()))
widest = max(gap, key=gap.get)
five_wins = [n_q for n_q, g in gap.items() if g < 0]
print(f"1 時間の得がいちばん大きいのは 1 日 {widest} 問（質問が増えると 5 分のヒット率も上がって差が縮み、減ると 1 時間でもミスが増える）"
      + (f"。5 分のほうが安いのは 1 日 {', '.join(map(str, five_wins))} 問" if five_wins else ""))
