# %% [markdown]
# # 09 理解度チェック: 数字と症状から判断する
#
# 00〜08 で扱った判断を、現場でよくある相談の形で 9 問にしました。正解を当てるだけでは合格ではありません。
# **なぜその選択肢なのかを、式か数字で説明できること**が合格の条件です。最後に、理由を自分の言葉で書く記述問題があります。
#
# **このレッスンで身につくこと**
#
# - 相談の文面から、どの数字（前提・料金・待ち時間・正答率・更新頻度）とどの仕組みの話かを見分けられる
# - 選んだ答えの理由を、`ctxlab` で計算した数字や API の `usage` の値で裏付けられる
# - 間違えた問から、見直すべき節を特定できる
#
# **所要時間** 約 65 分　**前提** 00〜08

# %%
import ctxlab
from ctxlab import quiz as qz

client = ctxlab.make_client()
ctxlab.show_cost("09_knowledge_check", client)   # モードと、実 API で動かしたときの料金（1 行。詳しくは ▸ を開く）

# %% [markdown]
# ## 1. 進め方
#
# 9 問は `ctxlab` に入っていて、下のセルで読み込みます。1 問ずつ表示され、選択肢を選んで「回答」を押します。配られた版によって、答えたあとが違います。
#
# - **自習版**（リポジトリの `course/`）: すぐに正誤が出て、選んだ選択肢だけでなく、すべての選択肢について「なぜ成り立つか／成り立たないか」が表示されます。
# - **採点版**（ワークショップで講師が配る版）: 答えは記録されるだけで、正誤は表示されません。採点のあと、フィードバックに正解とすべての選択肢の解説が出ます。
#   提出するまでは答えを変えられます。
#
# - 選択肢の並びは問題ごとに決まった順に並べ替えてあります（何度開いても同じ順です）。選択肢の id（a〜d）は並び順ではなく、選択肢そのものに付いた名前です。
# - 自習版で記録されるのは**最初の答え**です。答えた問題の選択肢は変えられません。最後の画面の「最初から」で全部やり直せます。
# - 答えはカーネルの中の `quiz.answers`（問題 id → 選んだ選択肢の id）に入ります。採点に届けるには、演習 1 の答えのセルでノートブックに書き込みます。
#
# **キーボードだけで操作する場合**: Tab で選択肢を 1 つずつ移り、選びたい選択肢で Space を押します。Tab で「回答」に移って Enter を押すと、
# フォーカスが「次へ」に移るので、もう一度 Enter で次の問題に進みます（フォーカスは次の問題の最初の選択肢に戻ります。Shift + Tab で前に戻れます）。
#
# どちらの版か、どの節の問題がいくつあるかを先に見ておきます。

# %%
bank = qz.load(qz.KNOWLEDGE_CHECK, key_file=qz.KEY_FILE)   # 解答キーのファイルは、自習用のときだけこのノートブックの隣にある
print("採点版: 答えは記録だけ。正誤と解説は採点後のフィードバックに出ます" if bank.graded
      else "自習版: 答えるとすぐ、正誤とすべての選択肢の解説が出ます")
print(f"{bank.title}: {len(bank)} 問")
for lesson in qz.LESSONS:
    n = sum(q.lesson == lesson for q in bank)
    if n:
        print(f"  {lesson:24s} {n} 問")

# %% [markdown]
# ## 2. 答える
#
# 下のセルを実行するとクイズが表示されます。表示されない環境（ウィジェットを描けない画面）では、`quiz.select(選択肢の id)` →
# `quiz.submit()` → `quiz.next()` と、ボタンと同じ操作をコードから行えます。いま表示している問題と選択肢は
# `print(quiz.as_text())` で読めます。

# %%
from ctxlab.widgets.quiz import Quiz

quiz = Quiz(bank)
quiz

# %% [markdown] nbgrader={"grade": false, "grade_id": "answers-task", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 1（9 点・1 問 1 点）: 答えを提出する
#
# 採点されるのは、下のセルの変数 `answers`（問題 id `"q1"`〜`"q9"` から、選んだ選択肢の id `"a"`〜`"d"` への辞書）です。
# 採点（と Validate）はノートブックを新しいカーネルで上から実行し直すので、クイズで押した答えは、ノートブックに書き込んでおかないと届きません。
#
# - **クイズで答えたとき**: 下のセルの `answers = quiz.write_answers()` を実行します。セルの中身が `answers = {...}` の辞書に書き換わるので、
#   **保存してから**提出します。あとで答えを変えたら、セルをこの 1 行に戻して実行し直します。
# - **手で書くとき**: セルの中身を、9 問ぶんの辞書 `answers = {"q1": "選択肢の id", ...}` に書き換えます。
#
# 採点版のクイズは正誤を表示しないので、どちらで答えても、採点されるのは自分の判断です。
# 正解を引くライブラリの関数は使わずに、自分の判断で答えてください（採点の環境には正解のファイルがないので、使うとエラーになります）。
# 採点のセルは 1 問に 1 つです。答えのない問のセルは「q1 に答えがありません」のように失敗し、その問は 0 点です。答えた問はそれぞれ採点され、
# その問の解説がフィードバックに出ます。

# %% nbgrader={"grade": false, "grade_id": "answers", "locked": false, "schema_version": 3, "solution": true, "task": false} tags=["no-stub"]
# 上のクイズで答えてから実行します。このセルが answers = {...} に書き換わります（保存してから提出）。
### BEGIN SOLUTION
# 学習者がマウスで押すのと同じ操作を、クイズのボタンで行う（1 問に 1 つ、順に）
quiz.restart()
for choice in ("c", "d", "b", "a", "d", "c", "b", "c", "a"):
    quiz.select(choice)
    quiz.submit_button.click()
    quiz.next_button.click()
### END SOLUTION
answers = quiz.write_answers()

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 各問で、まず「どの数字・どの仕組みの話か」（前提の 50%、4 つの数字、キャッシュの前方一致、TTL、使い回し回数 k、絞り込みの filter recall、
# citations の単位、新旧の版の矛盾）を決めてから、選択肢ごとに「その数字で本当にそうなるか」を確かめます。
# 計算が要る問は、書き込み倍率 w・読み出し倍率 r・使い回し回数 k で 1 回あたり（または合計）の料金を書き出すと決まります。
#
# </details>

# %% [markdown]
# 次の採点セルは 1 問につき 1 つです。見えているテストは答えの形（その問に、実在する選択肢の id で答えているか）だけを確かめます。
# 正誤は採点のときに確かめ、その問の解説（すべての選択肢について、なぜ成り立つか／成り立たないか）がフィードバックに出ます。

# %% nbgrader={"grade": true, "grade_id": "q1-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q1（01_count_tokens）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q1")
### BEGIN HIDDEN TESTS
print("q1（01_count_tokens）50% の前提と、数え方\n正解: c\n\na) 58% でもウィンドウの内側には十分に収まるので、予定どおり全文を渡す設計で進める。\n   ウィンドウに入ることと、読まれることは別です（Lost in the Middle）。上限近くまで詰めるほど中ほどの文書が使われにくくなるので、前提の上限はウィンドウそのものではなくその半分に置きます。\nb) count_tokens も推定値なので、文字数から出した 42% を採って全文を渡す設計で進める。\n   count_tokens も推定ですが、モデルのトークナイザーに基づく数です。文字数からの目安は 1 文字 1〜1.5 トークンの幅があり（ここでは 42〜63%）、幅が 50% をまたぐなら目安では決められません。分子は数えた値を使います。\nc) 58% は前提の 50% を超えるので全文を渡す案は外し、絞り込みか RAG を検討する。（正解）\n   前提「合計トークン ÷ ウィンドウ ≤ 50%」を、実物を数えた値で判定しています。満たさないときの行き先は、キーがメタデータで表せるなら絞り込み、表せないなら RAG です。\nd) 全文をプロンプトキャッシュに載せれば 1 回あたりが安くなるので、58% のまま進める。\n   キャッシュが下げるのは料金で、モデルが読むトークン列は変わりません。50% の前提は読まれるかどうかの話なので、キャッシュを付けても満たしたことにはなりません。\n\nなぜ: 前提は「文書の合計トークン ÷ コンテキストウィンドウ ≤ 50%」で、分子は推定ではなく実物を数えます。日本語は 1 文字あたり 1〜1.5 トークンほどの幅があり、 42 万字なら 42〜63% と 50% をまたぐので、文字数からの目安では決められません。数え直した 58% は前提を満たさないので、ロングコンテキストは選べません。 行き先は、キーがメタデータで表せるなら「絞ってから丸ごと渡す」、表せないなら RAG です。")
assert "c".__eq__(answers["q1"]) is True, "q1 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q2-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q2（00_start_here）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q2")
### BEGIN HIDDEN TESTS
print("q2（00_start_here）更新頻度は向きが逆\n正解: d\n\na) 賛成する。変更の多い文書ほど、索引を作り直せる RAG のほうが改訂にすばやく追従しやすい。\n   向きが逆です。RAG は再インデックスを回すまで古いチャンクを返し続け、反映の速さは再インデックスの周期より速くなりません。次の問い合わせからの反映という要件を満たせません。\nb) RAG にして再インデックスを 1 時間ごとに回せば、改訂の反映にはほぼ間に合う。\n   遅れは縮みますが 0 にはならず、改訂から最大 1 時間は古い内容で答えます。そもそも料金・待ち時間・正答率のどれも RAG に移る理由を示していないので、作って回し続けるものが増えるだけです。\nc) ロングコンテキストのまま、規程は起動時に一度だけ読み込み、毎晩プロセスを再起動する。\n   起動時に一度だけ読み込む作りは、ロングコンテキストでも次の再起動まで古い内容を渡し続けます。質問ごとに読み直すか、ファイルの更新を検知したときに読み直します。\nd) 反対する。よく変わる文書ほどロングコンテキストが有利なので、質問のたびに文書を読み直す。（正解）\n   4 つの数字のうち更新頻度だけは「よく変わるほどロングコンテキスト」という向きです。現物を読み直せば次の呼び出しで反映されます。読み直した文書が前と同じなら、キャッシュもそのまま効きます。\n\nなぜ: 前提を満たしたうえで、料金・待ち時間・正答率は RAG に移る理由を示していません。残る更新頻度は、4 つの数字のうち 1 つだけ向きが逆です。 ロングコンテキストは現物を読み直せば即時に反映され、RAG は再インデックスの周期より速くなりません。 ただし、プロセスの起動時に一度だけ文書を読み込む作りだと、ロングコンテキストでも古い内容を渡し続けます。読み直すタイミングまで設計します。")
assert "d".__eq__(answers["q2"]) is True, "q2 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q3-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q3（03_prompt_caching）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q3")
### BEGIN HIDDEN TESTS
print("q3（03_prompt_caching）キャッシュを壊すもの\n正解: b\n\na) 監査ログと突き合わせるため、system の指示文の先頭に呼び出し時刻を入れる。\n   system は messages より前に組み立てられるので、時刻は区切りより前に入ります。呼び出すたびに変わるので、前方一致でそこから後ろの文書は毎回キャッシュから外れ、書き込みの割増だけを払うことになります。\nb) 呼び出し時刻と利用者名を、最後の文書より後ろ、質問と同じブロックに入れる。（正解）\n   毎回変わるものを区切りの後ろに置いています。区切りまでの前置きはバイト単位で毎回同じなので読み出しが続き、時刻と利用者名の分だけが通常単価になります。\nc) tools に渡すツール定義の説明文に、その呼び出しの利用者名と時刻を書き込む。\n   組み立ての順は tools → system → messages です。先頭の tools が呼び出しのたびに変わる（時刻が入る）と、その後ろの system と文書は毎回キャッシュから外れ、書き込みの割増を毎回払います。\nd) 質問に関係のありそうな規程が先に来るよう、文書の並び順を質問ごとに入れ替える。\n   並びが変われば前置きのバイト列が変わり、毎回書き直しになります。順番を変えたいなら、並べ替えてよいのはキャッシュの外（区切りより後ろ）に置いたものだけです。\n\nなぜ: キャッシュは前方一致で、tools → system → messages の順に組み立てたリクエストのうち、区切り（cache_control）より前が 1 バイトでも変わると、 その後ろはすべてキャッシュから外れます。毎回同じものを前に、日時・利用者名・質問のように毎回変わるものは区切りの後ろに置きます。")
assert "b".__eq__(answers["q3"]) is True, "q3 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q4-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q4（03_prompt_caching）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q4")
### BEGIN HIDDEN TESTS
print("q4（03_prompt_caching）cache_read_input_tokens が 0 のとき\n正解: a\n\na) 連続する 2 回のリクエストを、区切りより前の部分でバイト単位に比べ、違う箇所を探す。（正解）\n   毎回の全量書き込みと読み出し 0 は、区切りより前に毎回変わる文字列（日時・利用者名・キー順の変わる JSON など）があるときの形です。違う箇所を見つけたら区切りの後ろへ移します。\nb) 1〜2 分おきでも TTL が切れているので、1 時間 TTL に切り替えて様子を見る。\n   間隔は 1〜2 分で 5 分の内側です。読み出しがあれば TTL は延びるので、期限切れでは説明できません。1 時間 TTL にすると書き込みの割増が 1.25 倍から 2 倍になり、請求はさらに増えます。\nc) 前置きが最小キャッシュ長に届いていないので、固定の指示文を足して前置きを長くする。\n   最小長を下回ると何もキャッシュされず、cache_creation_input_tokens も 0 になります。毎回 197,000 トークンが書き込まれているので、長さは足りています。\nd) input_tokens が 400 なら効いている。増えたのは出力なので max_tokens を絞る。\n   input_tokens は最後の区切りより後ろだけの数で、入力の合計ではありません。合計は 3 つの欄の和で、読み出しが 0 なので何も割り引かれず、197,000 トークンに毎回 1.25 倍の書き込み単価がかかっています。\n\nなぜ: 毎回 cache_creation が全量で cache_read が 0 なのは、毎回書き直しているということです。間隔は 5 分以内なので TTL 切れではなく、 書き込みが起きているので最小長の問題でもありません。残るのは「区切りより前に、毎回変わる文字列が入っている」ことです。 1 回の書き込みが一度も読まれない（k = 1）ので、書き込みの割増 1.25 倍だけを払い、入力の料金はキャッシュなしより増えます。")
assert "a".__eq__(answers["q4"]) is True, "q4 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q5-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q5（04_ttl）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q5")
### BEGIN HIDDEN TESTS
print("q5（04_ttl）キャッシュの損益分岐（5 分と 1 時間）\n正解: d\n\na) 1 時間 TTL にする。書き込み 2 倍でも、2 問目を 0.1 倍で読めば損益分岐を超える。\n   2 + 0.1 = 2.1 は、キャッシュなしで 2 回送る 2.0 より高くつきます。1 時間 TTL が得になるのは 3 回目からです（2 + 0.1 × 2 = 2.2 < 3）。\nb) 5 分 TTL にする。書き込み 1.25 倍・読み出し 0.1 倍なので、2 回目で損益分岐を超える。\n   5 分 TTL が 2 回目から得になるのは、2 回目が 5 分以内に来て読み出しになる場合です。20 分空くと 2 回とも書き込みになり、1.25 × 2 = 2.5 といちばん高くつきます。\nc) 5 分 TTL にする。読み出しのたびに TTL は延びるので、20 分後の 2 問目も読み出せる。\n   TTL が延びるのは、期限の内側で読み出しがあったときだけです。1 問目のあと 20 分間は何も読まれないので、エントリは 5 分で消え、2 問目は書き込みからやり直しになります。\nd) キャッシュは付けない。2 問なら 1 時間 TTL でも 2.1 で、付けない 2.0 より高い。（正解）\n   間隔と回数から TTL ごとの合計を比べています（なし 2.0、1 時間 2.1、5 分は 2 回とも書き込みで 2.5）。1 回の実行で 20 分おきに 3 問以上送るようになれば、1 時間 TTL が得になります。\n\nなぜ: 倍率はキャッシュを使わない入力単価に対するものです。5 分 TTL は 1.25 + 0.1 = 1.35 < 2 なので 2 回目から、1 時間 TTL は 2 + 0.1 = 2.1 > 2 で、 2 + 0.1 × 2 = 2.2 < 3 の 3 回目から得になります。ただし読み出しになるのは TTL の内側に次の呼び出しが来たときだけです。 20 分おきの 2 問では、キャッシュなしが 2.0、1 時間 TTL が 2.1、5 分 TTL は 2 回とも書き込みで 2.5 になります。")
assert "d".__eq__(answers["q5"]) is True, "q5 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q6-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q6（05_crossover）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q6")
### BEGIN HIDDEN TESTS
print("q6（05_crossover）検索が安くなる条件（ρ < r − s）\n正解: c\n\na) RAG が安い。渡すのは全文の 15% だけなので、全文を送る 1.0 より 1 回あたりが安い。\n   比べる相手は全文を素で送る 1.0 ではなく、全文をキャッシュから読む 0.1 倍前後です。十分使い回せるなら、検索が勝つのは引く割合が r − s = 0.08 を下回るときだけです。\nb) RAG が安い。キャッシュは書き込みが 1.25 倍なので、1 回あたりは 1.0 を下回らない。\n   書き込みの割増を払うのは 1 回の書き込みにつき 1 回だけで、k 回で分け合います。1 回あたりは (w + (k − 1) r) / k で、k = 50 なら約 0.12 です。\nc) 全文のキャッシュが安い。k = 50 なら 1 回あたり約 0.12 で、検索の 0.17 を下回る。（正解）\n   1 回あたりをキャッシュ (w + (k − 1) r) / k と検索 ρ + s で比べています。k が大きいほどキャッシュ側は r に近づき、検索が勝つには ρ < r − s = 0.08 が要ります。\nd) 決められない。どちらが安いかは 1 日の質問数で入れ替わるので、質問数がないと比べられない。\n   質問数が効くのは、使い回し回数 k と、固定費を 1 回あたりに直した s を通してです。この問ではその 2 つ（k = 50、s = 0.02）が与えられているので、1 回あたりの料金は決まります。\n\nなぜ: 全文を素で 1 回送る代金を 1 とすると、キャッシュは 1 回あたり (w + (k − 1) r) / k = (1.25 + 49 × 0.1) / 50 ≈ 0.12、検索は ρ + s = 0.15 + 0.02 = 0.17 です。 k が大きいとキャッシュ側は r に近づくので、検索が安くなるのは ρ < r − s（ここでは 0.08、30 万トークンなら 1 回 2.4 万トークン）のときだけです。 使い回しが少ない（k が小さい）用途ほど、検索が勝てる範囲は広がります。索引の費用や DB の月額、正答率は別に見ます。")
assert "c".__eq__(answers["q6"]) is True, "q6 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q7-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q7（06_metadata_filtering）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q7")
### BEGIN HIDDEN TESTS
print("q7（06_metadata_filtering）メタデータで絞れるかの確かめ方（filter recall）\n正解: b\n\na) 8 割が残れば十分。正答率は後で別に測るので、このまま絞り込みで進める。\n   目安は 9 割です。要るファイルが渡っていない問は、モデルがどれだけ賢くても根拠なしで答えることになり、8 割では 5 問に 1 問がそうなります。後で測る正答率では取り返せません。\nb) 9 割を切るので絞りすぎ。落ちた問がまたぐ用件ごとに、部署横断の固定セットを足す。（正解）\n   残った割合を 9 割の線と比べ、落ちた理由（部署をまたぐ）から直し方を選んでいます。キーがメタデータで表せない質問が多ければ RAG に移り、直したら調整に使っていない質問でも測り直します。\nc) 落ちた問に備えて、部署の中から質問に近いファイルを毎回選び直して渡す。\n   質問ごとに選び直すと前置きが毎回変わり、キャッシュがほとんど効かず、書き込みの割増でキャッシュなしより高くつくこともあります。部署のキーが同じなので、部署をまたぐ問の recall も上がりません。\nd) 落ちた 5 問の言い回しを辞書に足し、同じ 25 問で測り直して 9 割を越えれば進める。\n   測った質問に合わせて辞書を直すと、その質問での recall は実力より高く出ます。しかも落ちた原因は言い回しではなく部署をまたぐことなので、1 部署を指すキーのままでは直りません。\n\nなぜ: 絞り込みが選べるのは、絞るキーが部署・種別・年度のようにファイルのメタデータで表せるときだけです。確かめ方は、答えのある質問について要るファイルが 絞り込み後にすべて残った割合（filter recall）で、9 割を切ったら絞りすぎです。ここでは 20 / 25 = 80%。落ちた問が部署をまたぐなら、 用件単位の部署横断セットを足して広げ（中身も順序も固定すればキャッシュも効く）、キーで表せない質問が多いなら RAG に移ります。 辞書やセットを直したら、調整に使っていない新しい質問でも測り直します。")
assert "b".__eq__(answers["q7"]) is True, "q7 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q8-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q8（07_citations）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q8")
### BEGIN HIDDEN TESTS
print("q8（07_citations）出典（1 ファイル 1 ブロック、構造化出力とは併用しない）\n正解: c\n\na) このままでよい。citations を有効にすれば、どのファイルのどこかは自動で返る。\n   連結すると、返る文字位置は連結後の文字列の中の位置で、文書も 1 つだけです。どのファイルかは応答から分かりません。さらに citations と構造化出力を同時に使うと、リクエストは 400 エラーになります。\nb) 連結は残し、返った start_char_index から各ファイルの文字数を順に引いてファイルを割り出す。\n   連結時のオフセット表を持ち続ける逆算で、規程を 1 つ直すとそれより後ろの位置がすべてずれます。1 ファイル 1 ブロックなら document_index と title がそのままファイルを指します。構造化出力との併用エラーも残ったままです。\nc) 1 ファイル 1 ブロックにし、構造化出力はやめて、citations 付きの応答から JSON を自前で組む。（正解）\n   連結と構造化出力の 2 つをどちらも直しています。引用の文書番号・文字範囲・cited_text を手元で JSON に並べれば、画面の強調表示に要る位置も残ります。\nd) 1 ファイル 1 ブロックで渡し、JSON は構造化出力で受け、出典は本文に [n] の番号で書かせる。\n   番号による出典は JSON が要るときの逃げ道ですが、分かるのはどの文書かまでで、文書の中の位置は分かりません。番号も指示どおりに書かれる保証がないので、原文の強調表示という要件を満たせません。\n\nなぜ: citations は document ブロックごとに document_index と title を返し、文字位置はそのブロックの中の位置です。だから文書は 1 ファイル 1 ブロックで渡します。 また citations と構造化出力（JSON で受け取る設定）は同時に使えず、リクエストがエラーになります。JSON が要るなら、構造化出力を使わずに引用付きの応答を受け、 JSON はこちらのコードで組み立てます。番号で出典を書かせる方法もありますが、位置を失い、番号も抜けたり間違ったりするので、強調表示が要る画面には足りません。")
assert "c".__eq__(answers["q8"]) is True, "q8 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "q9-tests", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# q9（08_measure）: 答えの形を確かめる
from ctxlab.quiz import check_answers, load
check_answers(load(), answers, only="q9")
### BEGIN HIDDEN TESTS
print("q9（08_measure）新旧の規程が混ざるとき（直すのは方式ではなく文書）\n正解: a\n\na) 旧版を外して有効な版だけを渡す仕組みにし、同じ 30 問で正答率を測り直す。（正解）\n   混ざる原因（旧版が渡っていること）を文書の側で直し、方式を比べる前に測り直しています。現行版だけでもロングコンテキストが RAG を下回るなら、そのとき初めて移る理由になります。\nb) RAG に移る。検索なら上位に片方の版しか来ないので、新旧の値が混ざらなくなる。\n   片方の版しか上位に来るとは限りません。08 §11（任意）で数えたとおり、全版を索引にした RAG は、矛盾の質問のどれでも旧版のチャンクを現行版のチャンクと一緒に上位に入れました（新旧の版は言葉がほとんど同じです）。旧版がインデックスに残る限り、方式を変えても同じ誤りが出ます。\nc) 文書はそのまま渡し、system に「施行日の新しい規程を優先すること」と書き足す。\n   指示は守られないことがあり、本文だけから新旧や施行日を確実に判断できるとも限りません。有効な版だけを渡せば、混ぜる材料そのものがなくなります。\nd) 上位のモデルに替えて、同じ全版のフォルダのまま 30 問を測り直す。\n   旧版と現行版が両方渡っている限り、どのモデルも両方を読みます。どちらが有効かは文書の外（カタログの版や施行日）で決まっていることで、モデルを替えても直りません。\n\nなぜ: ロングコンテキストが弱いのは量より矛盾です。新旧の版が両方入っていれば両方を読んで混ぜるので、渡す前に有効な版だけにします （版をカタログで管理していれば、旧版の値を混ぜる誤りは 3 方式すべてで同時になくなります。ただし残りの誤り（要る文書を渡していない、 答えの文を拾えない）は方式ごとに残るので、正答率そのものは測り直して確かめます。版を判定できないなら文書管理の問題で、RAG でも直りません）。 直してから同じ 30 問で測り直し、現行版だけで測った正答率でもロングコンテキストが RAG を下回るなら、そのとき方式を見直します。")
assert "a".__eq__(answers["q9"]) is True, "q9 の答えが違います（解説は上）"
### END HIDDEN TESTS

# %% [markdown]
# ## 3. 節ごとの結果
#
# 自習版では、どの節の判断でつまずいたかを図にします。赤い部分のある節が、見直す節です。
# 採点版では正誤がまだ分からないので、どの節の問に答えたかだけを表示します（見直す節は、フィードバックの解説で確かめます）。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

from ctxlab.plots import quiz as quiz_plots

if bank.graded:
    for q in bank:
        print(f"  {q.id}（{q.lesson}）: {'回答済み' if q.id in answers else '未回答'}")
else:
    result = qz.score(bank, answers)
    quiz_plots.by_lesson(bank, answers)
    plt.tight_layout()
    print(result)
    for qid in result.wrong + result.unanswered:
        q = bank.question(qid)
        print(f"  見直す: {qid} {q.topic} → {q.lesson}")

# %% [markdown]
# ## 4. 判断に使う式を、別の数字で試す
#
# 計算が要る問は、どれも `ctxlab.costs` の式で決まります。ここでは**問題とは別の数字**で式の動きを確かめます。
# 問題の条件（間隔、回数、割合）を入れて答えを確かめるのは、自分の手で行ってください（採点版では、答え合わせはフィードバックで）。
# 倍率は問題と同じく記事の時点の Opus 5 の値（読み出し 0.1 倍）で、金額は「キャッシュを使わずに文書を 1 回送る代金」を 1 とした単位です。
# 今の既定のモデル（`pricing.DEFAULT_MODEL`）で同じ式がどうなるかも、括弧の行に並べます（モデルの名前と読み出しの倍率は出力のとおり）。
#
# まず、キャッシュが得になる回数です。k 回の呼び出しは、キャッシュなしで k、キャッシュありで w + (k − 1) r なので、
# k > (w − r) / (1 − r) で得になります。

# %%
from ctxlab.costs import formulas, pricing

opus = pricing.get_model(pricing.ARTICLE_MODEL)   # クイズの倍率: 記事の Opus 5
r = opus.cache_read_multiplier
TTL = {"5 分": (5, opus.cache_write_5m_multiplier), "1 時間": (60, opus.cache_write_1h_multiplier)}
for name, (_, w) in TTL.items():
    print(f"TTL {name}: 書き込み {w}x・読み出し {r}x → k > {formulas.breakeven_reuses(w, r):.2f}、"
          f"{formulas.first_paying_call(w, r)} 回目から得")
today = pricing.get_model(pricing.DEFAULT_MODEL)
for name, (_, w) in TTL.items():
    print(f"（{today.display_name}: TTL {name} 読み出し {today.cache_read_multiplier}x → "
          f"k > {formulas.breakeven_reuses(w, today.cache_read_multiplier):.2f}、"
          f"{formulas.first_paying_call(w, today.cache_read_multiplier)} 回目から得）")


# %% [markdown]
# ただし、読み出しになるのは TTL の内側に次の呼び出しが来たときだけです。呼び出しの間隔と TTL から合計を出す小さな関数を用意し、
# 問題にない間隔（3 分おきと 90 分おき、どちらも 4 回）で試します。

# %%
def batch_cost(calls, gap_min, ttl_min=None, w=1.0):
    """Input cost of `calls` calls `gap_min` minutes apart, in units of one uncached send."""
    if ttl_min is None:
        return float(calls)
    reads = calls - 1 if gap_min <= ttl_min else 0   # 読み出しで TTL が延びる
    return w * (calls - reads) + r * reads


for gap in (3, 90):
    costs = {"なし": batch_cost(4, gap)}
    costs.update({name: batch_cost(4, gap, ttl, w) for name, (ttl, w) in TTL.items()})
    best = min(costs, key=costs.get)
    print(f"{gap} 分おきに 4 回: " + "、".join(f"{k} {v:.2f}" for k, v in costs.items()) + f" → 最安は {best}")

# %% [markdown]
# 検索（RAG）が全文のキャッシュより安くなる条件です。1 回あたりは、キャッシュが (w + (k − 1) r) / k、検索が ρ + s です。
# k が大きいとキャッシュ側は r に近づくので、検索が勝つ条件は ρ < r − s になります。ここでは検索費 s を問題と違う 0.05 にして、
# 使い回し回数 k ごとに、検索が勝つために引いてよい割合の上限 `rho_limit` を出します。

# %%
w5 = opus.cache_write_5m_multiplier
s = 0.05
print(f"s = {s}: k が大きいときに検索が勝つ条件 ρ < r − s = {formulas.rho_asymptote(r, s):.2f}")
for k_ in (2, 5, 20, 100):
    print(f"  k = {k_:>3}: キャッシュ {formulas.cached_cost_per_call(k_, w5, r):.3f} / 回、"
          f"検索が勝つ ρ の上限 {formulas.rho_limit(k_, w5, r, s):.2f}")

# %% [markdown]
# ## 5. 症状を手元で再現する: 区切りより前に時刻がある
#
# 「キャッシュを入れたのに請求が下がらない」を実際に起こして、`usage` の 3 つの欄で見ます。
# 同じ質問を 3 回ずつ、(1) システムプロンプトの先頭に呼び出し時刻を入れた形、(2) 時刻を質問の前（区切りの後ろ）に移した形で送ります。
# 実演には今のラインアップの安い小型モデル（`pricing.SMALL_MODEL`）と規程 1 ファイルを使います。オフラインでは sandbox が答え、実 API でも同じコードが動きます
# （実 API では、呼び出しの前に見積もりを表示し、`CTXLAB_BUDGET_USD` の範囲でだけ実行します）。
#
# システムプロンプトの末尾の「実行 ID」は、ノートブックを実行し直しても (2) の 1 回目が書き込みから始まるようにするためのもので、
# 1 回の実行の中では変わりません。

# %%
import uuid
from datetime import datetime

from ctxlab.api import budget, messages, tokens
from ctxlab import corpus

DEMO = pricing.SMALL_MODEL   # いまの小さいモデル
RUN_ID = uuid.uuid4().hex[:8]
SYSTEM = f"{messages.SYSTEM_PROMPT}\n（実行 ID: {RUN_ID}）"
docs = [corpus.by_file()["hr_kyuyo_kitei.txt"]]
QUESTION = "給料は毎月何日に振り込まれますか？"


def request(time_before_breakpoint):
    now = datetime.now().isoformat(timespec="microseconds")   # 呼び出しごとに変わる
    if time_before_breakpoint:
        return messages.question_request(docs, QUESTION, model=DEMO, max_tokens=100,
                                         system=f"現在時刻: {now}\n{SYSTEM}")
    return messages.question_request(docs, f"現在時刻: {now}\n{QUESTION}", model=DEMO, max_tokens=100, system=SYSTEM)


prefix = tokens.count_request(request(False), client=client, model=DEMO)
write = pricing.call_cost(DEMO, cache_write_5m_tokens=prefix.tokens, output_tokens=100).total
read = pricing.call_cost(DEMO, cache_read_tokens=prefix.tokens, output_tokens=100).total
budget.check(4 * write + 2 * read, client, f"このレッスンの 6 回の呼び出し（{prefix.tokens:,} トークン前後、書き込み 4 回・読み出し 2 回）")

for label, before in (("時刻が区切りより前", True), ("時刻が区切りより後ろ", False)):
    print(label)
    for i in range(3):
        u = client.messages.create(**request(before)).usage
        print(f"  {i + 1} 回目: cache_creation {u.cache_creation_input_tokens:>6,}  "
              f"cache_read {u.cache_read_input_tokens:>6,}  input {u.input_tokens:>4,}")

# %% [markdown]
# 前者は毎回、前置き全体を書き込み、読み出しは 0 のままです。前置きの先頭にある時刻が毎回変わるので、前方一致が 1 回も成り立ちません。
# 時刻を区切りの後ろに移すだけで、2 回目から読み出しになります。`cache_creation_input_tokens` が 0 でない（長さは足りている）のに
# `cache_read_input_tokens` が 0 のまま、という組み合わせが、この症状の見分け方です。

# %% [markdown] nbgrader={"grade": false, "grade_id": "why-prompt", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ### 演習 2（記述・3 点）: なぜ、を説明する
#
# 9 問から 1 問を選び（間違えた問か、迷った問を勧めます）、最初に問題 id を書いてから、次の 2 つを 3〜5 文で書いてください。
#
# 1. 正しい選択肢がなぜ成り立つか。式・`ctxlab` で計算した数字・API の `usage` の値のどれかを 1 つ以上使うこと。
# 2. いちばん迷った（または選んでしまった）選択肢が、どの条件のもとでなら正しくなり、この問ではなぜ成り立たないか。
#
# 採点の観点: 数字や式が問題の条件と合っているか／不正解の選択肢の「もっともらしさ」を正しく言い当てているか／結論が判断として使える形か。

# %% [markdown] nbgrader={"grade": true, "grade_id": "why", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# q5。1 時間 TTL は書き込みが 2 倍で、読み出しが 0.1 倍なので、2 問だけなら 2 + 0.1 = 2.1 となり、キャッシュなしで 2 回送る 2.0 より高い。
# 損益分岐は k > (w − r) / (1 − r) = 2.11 なので、1 時間 TTL が得になるのは 3 回目から（2.2 < 3）。
# 迷った「5 分 TTL なら 2 回目から得」は、2 回目が 5 分以内に来て読み出しになる場合には正しい（1.25 + 0.1 = 1.35 < 2）。
# この問では間隔が 20 分で、2 回とも書き込みになって 2.5 と最も高くなるので成り立たない。損得は倍率だけでなく、TTL の内側に次の呼び出しが来るかで決まる。
#
# ### BEGIN RUBRIC
# - 3 点（満点）: 問題 id を書き、正しい選択肢を問題の条件を入れた式・計算値・usage の値で裏付け、迷った選択肢がどの条件なら正しくなり、この問ではなぜ成り立たないかを具体的に述べ、結論が判断として使える形になっている。
# - 1.5 点（半分）: 正しい選択肢の理由は条件に合った数字か式で示しているが、迷った選択肢の条件の説明がない、または一般論にとどまる。
# - 0 点: 問題 id がない、選択肢の文をなぞるだけで数字・式・usage の値がない、または数字が問題の条件と合っていない。
# ### END RUBRIC
# ### END SOLUTION

# %%
# 自分の答えを書いて保存してから、採点基準と解答例を開けます（自習用の配布だけ。採点される版ではフィードバックで届きます）
from ctxlab.widgets.written import Reveal

Reveal("why")

# %% [markdown]
# <details><summary>ヒント（開くと表示）</summary>
#
# 理由を書くときは、選択肢の文をなぞるのではなく、問題文の条件（間隔、回数、割合、usage の値）を式に入れて結論まで運びます。
# 不正解の選択肢は「どんな条件なら正しいか」を先に考えると、この問で成り立たない理由がはっきりします。
#
# </details>

# %% [markdown]
# ## まとめ
#
# - 方式の判断は、前提（合計トークン ÷ ウィンドウ ≤ 50%）と 4 つの数字で決まる。更新頻度だけは向きが逆。
# - キャッシュは前方一致。区切りより前に毎回変わるものを置かない。効いているかは `cache_read_input_tokens` で確かめる。
# - キャッシュの損得は倍率と「1 回の書き込みが何回読まれるか」で決まり、読まれるかどうかは TTL と間隔で決まる。
# - 検索が安いのは、引く割合が読み出しの割引から検索費を引いた値（r − s）を下回るときだけ。
# - 絞り込みは要るファイルの 9 割が残るかで確かめ、出典は 1 ファイル 1 ブロックで取る。新旧の版が混ざる誤りは、方式より先に文書（有効な版だけを渡す）で直す。
# - 次の節（10）では、RAG を組むと決めたときに、検索の取りこぼしを測って減らす方法を扱います。
