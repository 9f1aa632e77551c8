"""Lesson 11 (ctxlab decide): the procedure itself, from a folder and the traffic to the four numbers and the verdict.

Order (seed 000's procedure, lesson 00's table): count the documents, price every path at the
traffic, take the latency, the accuracy and the freshness, then choose. Every figure carries how
it was obtained: 実測 (measured through the API), 推定 (computed from an estimate or a count and the
price table), シミュレーション (the sandbox's latency model), 未測定 (needs the API).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from ctxlab.api import budget
from ctxlab.api.client import is_offline, make_client
from ctxlab.corpus import rules
from ctxlab.costs import compare, crossover, pricing, traffic as traffic_model
from ctxlab.decide import _costs, _measure, _verdict
from ctxlab.decide._documents import Folder, UserDoc, read_folder
from ctxlab.decide._traffic import Log, read_log, replay
from ctxlab.errors import BudgetExceeded, InputError
from ctxlab.estimate import estimate_request

#: the offline estimate's known error band (ctxlab.estimate: "can be off by half")
ESTIMATE_BAND = 0.5
MEASURED, ESTIMATED, SIMULATED, NOT_MEASURED = "実測", "推定", "シミュレーション", "未測定"
#: questions a day on the memo's first figure
PER_DAY_GRID = _costs.FLIP_GRID


@dataclass
class Options:
    docs: Path
    questions: Path | None = None
    log: Path | None = None
    questions_per_day: float | None = None
    models: tuple[str, ...] = ()
    db_monthly: float = 70.0
    rag_budget_monthly: float = 0.0
    update_every: str | None = None
    reindex_every: str | None = None
    budget_usd: float | None = None
    progress: bool = True
    #: online, when a measurement does not fit the budget: "raise" (the CLI: one message, exit 2) or
    #: "simulate" (a lesson: say so, keep the simulated latency and the accuracy plan, go on)
    over_budget: str = "raise"


@dataclass
class Decision:
    options: Options
    online: bool
    folder: Folder | None
    n_files: int
    chars: int
    doc_note: str
    tokens: dict[str, int]
    token_method: str
    token_how: str
    traffic: _costs.Traffic
    log: Log | None
    months: list[_costs.ModelMonth]
    primary: _costs.ModelMonth
    filter_files: int | None
    filter_key: str
    flip: tuple[int | None, str, str]
    latency: _measure.Latency | None
    latency_how: str
    accuracy: _measure.Accuracy | None
    plan: list[tuple[str, int, float]]
    questions: list
    numbers: list[_verdict.Number]
    path: str
    reason: str
    verdict: str
    changes: list[str]
    assumptions: list[tuple[str, str, str, str]]
    curve_day: dict[str, list]
    curve_tokens: dict[str, list]
    token_grid: list[float]
    warnings: list[str] = field(default_factory=list)
    spent_usd: float = 0.0

    def side_at(self, per_day: float) -> str:
        """The cost verdict ("long_context" or "rag") of these documents at ``per_day`` questions a day (04's synthetic traffic)."""
        m = self.primary
        return _costs.model_month(m.doc_tokens, self.n_files, m.model, _costs.Traffic(per_day),
                                  db_monthly=self.options.db_monthly, filter_files=self.filter_files).cost_side


def _documents(opts: Options) -> tuple[list, Folder | None, str, int | None, str]:
    """(documents, folder report, note, filter files, where the filter's key comes from)."""
    root = Path(opts.docs)
    if (root / "catalog.json").is_file():   # the course's folder: the catalog says which versions are current
        docs = rules.load(current_only=True, rules_dir=root)
        every = rules.load(current_only=False, rules_dir=root)
        note = (f"catalog.json に従い、現行の {len(docs)} ファイルだけを数えます"
                f"（改定前の {len(every) - len(docs)} 版とカタログ自体は数えません）")
        return docs, None, note, compare.Profile().filter_files, "catalog.json の部署（06 の固定セット: 平均的なファイル 5 件）"
    folder = read_folder(root, progress=opts.progress)
    depts = folder.departments()
    keep = max(1, round(len(folder.documents) / len(depts))) if depts else None
    key = (f"サブフォルダ {len(depts)} 個（{', '.join(list(depts)[:6])}{' ほか' if len(depts) > 6 else ''}）を部署のキーにして、"
           f"1 部署の平均 {keep} ファイルを渡す") if depts else "サブフォルダが 2 つ以上ないのでキーがなく、絞り込みは計算しません"
    return folder.documents, folder, "", keep, key


def _traffic(opts: Options) -> tuple[_costs.Traffic, Log | None]:
    if opts.log is not None:
        log = read_log(opts.log)
        rep = replay(log)
        src = (f"{log.path.name} の {len(log.times):,} 件（{log.first:%Y-%m-%d}〜{log.last:%Y-%m-%d}、リクエストのある "
               f"{log.days} 日）を 04 の規則で再生: ヒット率 5m {rep.hit_rates['5m']:.0%}・1h {rep.hit_rates['1h']:.0%}")
        return _costs.Traffic(log.per_day, rep.hit_rates, src), log
    if opts.questions_per_day is None:
        raise InputError("--log（リクエストのログ）か --questions-per-day N のどちらかを指定してください。")
    if not opts.questions_per_day > 0:
        raise InputError(f"--questions-per-day は 0 より大きい数にしてください（got {opts.questions_per_day:g}）。")
    return _costs.Traffic(opts.questions_per_day, None,
                          f"ログなし: 1 日 {opts.questions_per_day:g} 問を 04 の合成トラフィック（{traffic_model.DEFAULT_PROFILE}）"
                          "でシミュレーションしたヒット率（実測ではない）"), None


def _models(opts: Options) -> tuple[list[str], str]:
    current = list(pricing.current_models())
    for mid in opts.models:
        pricing.get_model(mid)   # ValueError naming the known ids
    primary = opts.models[0] if opts.models else pricing.DEFAULT_MODEL
    return list(dict.fromkeys(list(opts.models) + current)), primary


def _token_grid(doc_tokens: int, mm: _costs.ModelMonth, points: int = 16) -> list[float]:
    """Document volumes for the crossover figure: past both today's volume and the crossover, inside the window."""
    top = 2.0 * doc_tokens
    if mm.fits and math.isfinite(mm.crossover_tokens):
        top = max(top, 1.5 * mm.crossover_tokens)
    top = min(top, pricing.get_model(mm.model).context_window - compare.Profile().prompt_tokens)
    return sorted({top * i / points for i in range(1, points + 1)} | {float(doc_tokens)})


def _times(x: float) -> str:
    return f"{x:,.0f} 倍" if x >= 10 else f"{x:.2g} 倍"


def _changes(d_tokens: int, mm: _costs.ModelMonth, flip: tuple[int | None, str, str], per_day: float) -> list[str]:
    out = []
    at, now, to = flip
    side = {"long_context": "ロングコンテキスト", "rag": "RAG"}
    if at is None:
        out.append(f"質問数: 1 日 {_costs.FLIP_GRID[0]}〜{_costs.FLIP_GRID[-1]} 問の目盛り（{'・'.join(map(str, _costs.FLIP_GRID))}）"
                   f"のどこでも料金の判定は {side[now]} のまま（04 の合成トラフィックで計算）")
    else:
        out.append(f"質問数: 1 日 {at} 問{'以上' if at > per_day else '以下'}で料金の判定が {side[now]} → {side[to]} に変わる"
                   "（04 の合成トラフィックで計算）")
    if mm.fits and math.isfinite(mm.crossover_tokens):
        ratio = mm.crossover_tokens / d_tokens if d_tokens else math.inf
        out.append(f"文書量: 交点は {mm.crossover_tokens:,.0f} tokens（今の {_times(ratio)}）。これを超えるとロングコンテキストが RAG より高い")
    if mm.long_context is not None and mm.long_context > 0:
        r = mm.rag / mm.long_context
        out.append(f"料金: ロングコンテキストの月額が今の {r:.2f} 倍（{abs(1 - r):.0%} {'安く' if r < 1 else '高く'}）になると RAG と同額"
                   "（単価の改定は RAG の API 料金も動かすので、価格表を更新して出し直す）")
    out.append(f"50% の前提: 文書が {pricing.get_model(mm.model).context_window * crossover.HALF_WINDOW:,.0f} tokens"
               f"（今の {_times(crossover.HALF_WINDOW / max(mm.window_usage, 1e-9))}）を超えると前提を満たさない")
    return out


def _assumptions(opts: Options, dec_traffic: _costs.Traffic, token_how: str, primary: str, filter_key: str) -> list:
    m = pricing.get_model(primary)
    asof = pricing.price_table_date()
    today = date.today().isoformat()
    p = compare.Profile()
    return [
        ("単価", f"{m.display_name} 入力 ${m.input_usd_per_mtok:g} / 出力 ${m.output_usd_per_mtok:g}（100 万トークン）",
         "data/pricing.json（Anthropic の料金ページ）", asof),
        ("キャッシュの倍率", f"書き込み 5m {m.cache_write_5m_multiplier:g} 倍・1h {m.cache_write_1h_multiplier:g} 倍、"
         f"読み出し {m.cache_read_multiplier:g} 倍", "data/pricing.json", asof),
        ("文書のトークン数", token_how, "ctxlab.estimate（オフライン）/ count_tokens（API）", today),
        ("トラフィック", dec_traffic.source, "--log / --questions-per-day、ctxlab.costs.traffic（04）", today),
        ("質問と指示・回答", f"{p.prompt_tokens:,} tok・{p.output_tokens:,} tok", "使い分けの記事の前提", asof),
        ("RAG", f"{p.chunk_tokens:,} tok × {p.rag_chunks} チャンク、DB 月 ${opts.db_monthly:g}",
         "使い分けの記事の前提・--db-monthly", today),
        ("RAG にかけてよい月額", f"${opts.rag_budget_monthly:,.0f}（料金の差がこれを上回れば RAG）", "--rag-budget-monthly", today),
        ("メタデータで絞る", filter_key, "フォルダの構造（06）", today),
        ("待ち時間の閾値", f"キャッシュ時の最初のトークンまで {crossover.TTFT_LIMIT_S:g} 秒", "使い分けの記事", asof),
        ("50% の前提", "文書がコンテキストウィンドウの半分以下", "使い分けの記事（00）", asof),
        ("1 か月", f"{compare.DAYS_PER_MONTH} 日", "使い分けの記事（1 日 20 問 = 月 600 問）", asof),
    ]


def decide(opts: Options, client=None) -> Decision:
    """Run the procedure (see the module docstring); InputError / DocumentError / SchemaError for bad input."""
    if opts.over_budget not in ("raise", "simulate"):
        raise InputError(f"over_budget must be 'raise' or 'simulate', got {opts.over_budget!r}")
    if opts.db_monthly < 0 or opts.rag_budget_monthly < 0:
        raise InputError("--db-monthly と --rag-budget-monthly は 0 以上にしてください。")
    update_s = _verdict.parse_duration(opts.update_every) if opts.update_every else None
    reindex_s = _verdict.parse_duration(opts.reindex_every) if opts.reindex_every else None
    if (update_s is None) != (reindex_s is None):
        raise InputError("--update-every と --reindex-every は 2 つ一緒に指定してください（例: --update-every 1d --reindex-every 7d）。")
    models, primary_id = _models(opts)
    dec_traffic, log = _traffic(opts)
    docs, folder, note, filter_files, filter_key = _documents(opts)
    files = [d.file for d in docs]
    questions = _measure.read_questions(opts.questions, files) if opts.questions else []
    texts = [d.text for d in docs]
    client = client if client is not None else make_client()
    online = not is_offline(client)
    if online and opts.budget_usd is not None:
        budget.set_budget(opts.budget_usd)
    spent0 = budget.spent_usd() if online else 0.0

    # tokens: the same count the lessons make offline (the sandbox's count is this estimate)
    if online:
        per_model = _measure.count(texts, client, models)
        token_method, token_how = "API の count_tokens", f"{MEASURED}（API の count_tokens、トークナイザの系統ごと）"
    else:
        est = estimate_request({"messages": [{"role": "user", "content": [{"type": "text", "text": t} for t in texts]}]})
        per_model = {mid: est for mid in models}
        token_method = "推定"
        token_how = (f"{ESTIMATED}（日本語 1 文字 = 1 トークン・英数字 4 文字 = 1 トークン。実際とは ±{ESTIMATE_BAND:.0%} ほどずれうる: "
                     "閾値の近くでは API の count_tokens で数え直す）")
    months = [_costs.model_month(per_model[mid], len(docs), mid, dec_traffic, db_monthly=opts.db_monthly,
                                 filter_files=filter_files) for mid in models]
    primary = months[models.index(primary_id)]
    doc_tokens = per_model[primary_id]
    flip = _costs.flip_per_day(doc_tokens, len(docs), primary_id, dec_traffic.per_day, db_monthly=opts.db_monthly,
                               filter_files=filter_files)

    # latency
    lat = None
    warnings_budget: list[str] = []
    if online and primary.fits:
        try:
            lat = _measure.latency(texts, doc_tokens, client, primary_id)
        except BudgetExceeded as exc:
            if opts.over_budget != "simulate":
                raise
            warnings_budget.append(f"待ち時間は予算に収まらないので測らず、シミュレーションの値を使います（{exc}）")
    if lat is not None:
        latency_how, ttft = MEASURED, lat.cached_s
    else:
        latency_how, ttft = SIMULATED, primary.ttft_cached_s

    # accuracy
    acc, plan = None, []
    with_filter = filter_files is not None and folder is not None
    if questions and online:
        try:
            acc = _measure.accuracy(docs, questions, client, primary_id, with_filter)
        except BudgetExceeded as exc:
            if opts.over_budget != "simulate":
                raise
            warnings_budget.append(f"正答率は予算に収まらないので測らず、測定の計画だけを出します（{exc}）")
    if questions and acc is None:
        plan = _measure.plan(docs, questions, [m.model for m in months if m.fits], with_filter)

    cost_how = "計算（API で数えたトークンと価格表）" if online else ESTIMATED
    numbers = [
        _verdict.cost_number(primary.long_context, primary.rag, opts.rag_budget_monthly, cost_how),
        _verdict.latency_number(ttft, latency_how),
        _verdict.accuracy_number(acc.by_method.get("long_context") if acc else None,
                                 acc.by_method.get("rag") if acc else None, len(questions),
                                 "実測（モデルの判定）" if acc else NOT_MEASURED),
        _verdict.freshness_number(update_s, reindex_s),
    ]
    path, reason = _verdict.decide(primary.window_usage, numbers)
    verdict = _verdict.verdict_text(path, reason, primary.display_name, primary.window_usage)
    if primary.filter is not None and primary.filter < min(v for v in (primary.long_context, primary.rag) if v is not None):
        verdict += (f" なお、メタデータで絞る（月 ${primary.filter:,.0f}）がいちばん安い: キーで正解のファイルを 90% 以上拾えるなら"
                    "（06 の絞り込みの再現率）、中間の選択肢として検討します。")
    grid = _token_grid(doc_tokens, primary)
    warnings = ([note] if note else []) + (folder.notes if folder else []) + warnings_budget
    for w in warnings_budget:
        print(w)
    if log is not None and log.bad:
        warnings.append(log.bad_report())
    return Decision(
        opts, online, folder, len(docs), sum(len(t) for t in texts), note, per_model, token_method, token_how,
        dec_traffic, log, months, primary, filter_files if (with_filter or folder is None) else None, filter_key, flip,
        lat, latency_how, acc, plan, questions, numbers, path, reason, verdict,
        _changes(doc_tokens, primary, flip, dec_traffic.per_day),
        _assumptions(opts, dec_traffic, token_how, primary_id, filter_key),
        _costs.curve_per_day(doc_tokens, len(docs), primary_id, list(PER_DAY_GRID), db_monthly=opts.db_monthly,
                             filter_files=filter_files),
        _costs.curve_tokens(len(docs), primary_id, dec_traffic, grid, db_monthly=opts.db_monthly,
                            filter_files=filter_files),
        grid, warnings, (budget.spent_usd() - spent0) if online else 0.0,
    )
