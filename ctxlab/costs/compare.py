"""The course's comparison table (lessons 00 and 02, ``ctxlab compare``), computed for any folder or token total.

:func:`compare` returns a :class:`Comparison` (rows per path, monthly summary, the
assumptions); :func:`format_table` renders it in Japanese for the terminal or a notebook.

The month's cache hit rate comes, unless a profile fixes it, from lesson 04's traffic model
(:func:`ctxlab.costs.traffic.expected_hit_rate` for the profile's questions a day, TTL and
traffic shape), so one traffic level gives one hit rate in every lesson and in the CLI. The
source article's fixed 80% is shown next to it (:data:`ARTICLE_HIT_RATE`).

The TTL is lesson 04's choice too: ``Profile(ttl="auto")`` (the default) prices the month at
the TTL that :func:`choose_ttl` finds cheaper for that traffic and model, so one traffic level
and one model give one TTL, one hit rate and one month everywhere; ``"5m"`` or ``"1h"`` fixes it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache

from ctxlab.costs import pricing, traffic
from ctxlab.costs._checks import nonneg, share
from ctxlab import _table, _text


#: the hit rate the source article (使い分けの記事) assumes for every traffic level
ARTICLE_HIT_RATE = 0.8
#: the TTL the source article prices its cache at (the 1.25x write)
ARTICLE_TTL = "5m"
DAYS_PER_MONTH = 30          # the article: 20 questions a day = 600 a month
#: the API's cache TTLs, and "auto": the one that makes the month cheaper (:func:`choose_ttl`)
TTLS = ("5m", "1h")
TTL_CHOICES = ("auto",) + TTLS


@dataclass(frozen=True)
class Profile:
    """The assumptions of a comparison (the source article's defaults, the hit rate from traffic).

    ``hit_rate=None`` (the default) takes the hit rate from the traffic model for
    ``questions_per_month / 30`` questions a day of ``traffic`` at the TTL
    (:meth:`effective_hit_rate`); a number fixes it. ``ttl="auto"`` (the default) takes the
    TTL that makes the month cheaper (:meth:`resolved_ttl`, :func:`choose_ttl`).
    """

    model: str = pricing.DEFAULT_MODEL
    prompt_tokens: int = 400          # question and instructions: what changes every call
    output_tokens: int = 700
    questions_per_month: float = 600  # 20 a day, 30 days
    hit_rate: float | None = None     # share of calls that read the cache; None: from the traffic model
    db_monthly: float = 70.0          # vector database, $ per month
    filter_files: int = 5             # files left after the metadata filter
    rag_chunks: int = 8
    chunk_tokens: int = 800
    ttl: str = "auto"                 # "5m", "1h", or "auto": the cheaper one for this traffic and model
    traffic: str = traffic.DEFAULT_PROFILE   # the traffic shape the hit rate is taken from

    @property
    def questions_per_day(self) -> float:
        return self.questions_per_month / DAYS_PER_MONTH

    @property
    def hit_rate_from_traffic(self) -> bool:
        return self.hit_rate is None

    def resolved_ttl(self) -> str:
        """The TTL the month is priced at: the fixed one, or :func:`choose_ttl`'s for ``"auto"``."""
        return choose_ttl(self).ttl

    def effective_hit_rate(self) -> float:
        """The hit rate the month is priced with: fixed, or the traffic model's mean at the resolved TTL."""
        if self.hit_rate is not None:
            return self.hit_rate
        return traffic.expected_hit_rate(self.questions_per_day, self.resolved_ttl(), self.traffic)

    def ttl_label(self) -> str:
        """The TTL and where it comes from, in Japanese: 「TTL 1h（安いほうを自動で選択）」."""
        ttl = self.resolved_ttl()
        return f"TTL {ttl}（安いほうを自動で選択）" if self.ttl == "auto" else f"TTL {ttl}（指定）"

    def hit_rate_label(self) -> str:
        """Where the hit rate comes from, in Japanese (for tables and figures)."""
        h = self.effective_hit_rate()
        if self.hit_rate is not None:
            return f"ヒット率 {h:.0%}（固定）"
        st = traffic.hit_rate_stats(self.questions_per_day, self.resolved_ttl(), self.traffic)
        return (f"ヒット率 {h:.0%}（04 の合成トラフィック {self.traffic}・TTL {self.resolved_ttl()}、"
                f"{st.days:,} 日の平均で標準誤差 {st.se * 100:.1f} ポイント）")

    def check(self) -> None:
        pricing.get_model(self.model)
        for name in ("prompt_tokens", "output_tokens", "questions_per_month", "db_monthly",
                     "filter_files", "rag_chunks", "chunk_tokens"):
            nonneg(name, getattr(self, name))
        if self.hit_rate is not None:
            share("hit_rate", self.hit_rate)
        if self.ttl not in TTL_CHOICES:
            raise ValueError(f"ttl must be 'auto', '5m' or '1h', got {self.ttl!r}")
        if self.traffic not in traffic.PROFILES:
            raise ValueError(f"traffic must be one of {', '.join(traffic.PROFILES)}, got {self.traffic!r}")


@dataclass(frozen=True)
class TtlChoice:
    """Which TTL a month is priced at, and why (:func:`choose_ttl`).

    ``hit_rates`` and ``unit_costs`` are per TTL; a unit cost is what one question pays for
    each cached document token, in multiples of the input price: ``(1 - h) * w + h * r``
    (a miss writes at the TTL's multiple w, a hit reads at r). The question, the answer and the
    price tier are the same at both TTLs, so the TTL with the lower unit cost has the cheaper
    month for every document size.
    """

    ttl: str
    fixed: bool
    hit_rates: dict[str, float]
    unit_costs: dict[str, float]

    def reason(self) -> str:
        """One sentence in Japanese: the TTL and the comparison that chose it."""
        parts = "、".join(f"{t} はヒット率 {self.hit_rates[t]:.0%} で {self.unit_costs[t]:.3f}" for t in TTLS)
        how = "指定された TTL" if self.fixed else "安いほうの TTL"
        return (f"{how} {self.ttl}: 文書 1 トークンあたり 1 問の入力単価の倍数は {parts}"
                "（ミスは書き込み倍率、ヒットは読み出し倍率）")


def choose_ttl(p: Profile) -> TtlChoice:
    """The TTL that makes the month cheaper for ``p``'s traffic and model (or ``p.ttl`` when fixed).

    With a fixed hit rate both TTLs hit equally often, so the cheaper write (5m) wins; from the
    traffic model, the 1-hour TTL's higher hit rate can pay for its dearer write. A tie goes to 5m.
    """
    if p.ttl not in TTL_CHOICES:
        raise ValueError(f"ttl must be 'auto', '5m' or '1h', got {p.ttl!r}")
    return _choose_ttl(p.ttl, p.model, p.questions_per_day, p.hit_rate, p.traffic)


@lru_cache(maxsize=1024)
def _choose_ttl(ttl: str, model: str, per_day: float, hit_rate: float | None, shape: str) -> TtlChoice:
    m = pricing.get_model(model)
    rates = {t: hit_rate if hit_rate is not None else traffic.expected_hit_rate(per_day, t, shape) for t in TTLS}
    units = {t: (1 - rates[t]) * m.write_multiplier(t) + rates[t] * m.cache_read_multiplier for t in TTLS}
    if ttl != "auto":
        return TtlChoice(ttl, True, rates, units)
    return TtlChoice(min(TTLS, key=lambda t: (units[t], t != "5m")), False, rates, units)


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    input_tokens: int
    cost: float
    ttft_s: float
    citations: str


@dataclass
class Comparison:
    doc_tokens: int
    n_files: int
    chars: int | None
    token_method: str
    question: str | None
    profile: Profile
    rows: dict[str, Row]
    monthly: dict[str, float]
    window_usage: float
    hit_rate: float = 0.0                      # the rate the month was priced with
    ttl: str = "5m"                            # the TTL the month was priced at (the profile's, resolved)
    article_monthly: dict[str, float] = field(default_factory=dict)  # the same month at the article's 80%
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows"] = {k: asdict(v) for k, v in self.rows.items()}
        return d


def compare(doc_tokens: int, n_files: int, profile: Profile | None = None, *, chars: int | None = None,
            token_method: str = "given", question: str | None = None) -> Comparison:
    """Compute the rows and the month for documents of ``doc_tokens`` tokens in ``n_files`` files."""
    p = profile or Profile()
    p.check()
    nonneg("doc_tokens", doc_tokens)
    if n_files < 1:
        raise ValueError(f"n_files must be >= 1, got {n_files!r}")
    m = pricing.get_model(p.model)
    q = p.prompt_tokens
    out = p.output_tokens
    ttl = p.resolved_ttl()
    rows = _rows(doc_tokens, n_files, p, ttl)
    n = p.questions_per_month
    h = p.effective_hit_rate()
    monthly = _month(rows, n, h, p.db_monthly)
    # the article's month: its 80% at its 5-minute TTL, whatever this profile's TTL is
    article = _month(rows if ttl == ARTICLE_TTL else _rows(doc_tokens, n_files, p, ARTICLE_TTL), n,
                     ARTICLE_HIT_RATE, p.db_monthly)

    # The usage article counts the whole input, question included, at the read rate on a cached call.
    seed_cached = pricing.call_cost(m, cache_read_tokens=doc_tokens + q, output_tokens=out).total
    seed_write = pricing.call_cost(m, output_tokens=out, cache_write_5m_tokens=doc_tokens + q).total
    seed_month = pricing.monthly_cost(n, cost_miss=seed_write, cost_hit=seed_cached, hit_rate=ARTICLE_HIT_RATE)
    notes = [
        f"使い分けの記事はどの質問数でも TTL 5 分・ヒット率 {ARTICLE_HIT_RATE:.0%} と置きます。その前提ならロングコンテキスト月 "
        f"${article['long_context']:,.0f}・絞り込み ${article['filter']:,.0f}（この表は {p.hit_rate_label()}）。",
        f"使い分けの記事の数え方（質問 {q:,} tok もキャッシュ読み出しとして数え、TTL 5 分・ヒット率 {ARTICLE_HIT_RATE:.0%}）では、"
        f"キャッシュ時 ${seed_cached:.3f}/回・ロングコンテキスト月 ${seed_month:,.0f}。"
        f"実際には質問はキャッシュの区切りの後ろにあり毎回通常単価なので、上の表の値が正しい数字です。",
        f"メタデータで絞る月額はヒット率 {h:.0%} を絞り込み後の文書セットにも当てはめた値です。"
        "質問ごとに文書セットが変わるとヒット率は下がります（バンドルを固定すると保てます）。",
    ]
    if p.ttl == "auto":
        notes.append(choose_ttl(p).reason() + "。")
    return Comparison(doc_tokens, n_files, chars, token_method, question, p, rows, monthly,
                      doc_tokens / m.context_window, h, ttl, article, notes)


#: how wide the band of a simulated hit rate is, in standard errors of its mean (about 95%)
BAND_SE = 2.0


def hit_rate_band(p: Profile, z: float = BAND_SE) -> tuple[Profile, Profile]:
    """``p`` with its simulated hit rate fixed at the mean - z and + z standard errors (same TTL).

    The month of a traffic level rests on a simulated mean; two paths whose months swap inside
    this band are tied at the simulation's precision. A fixed hit rate has no band: ``(p, p)``.
    """
    if p.hit_rate is not None:
        return p, p
    ttl = p.resolved_ttl()
    st = traffic.hit_rate_stats(p.questions_per_day, ttl, p.traffic)
    return (replace(p, ttl=ttl, hit_rate=max(0.0, st.mean - z * st.se)),
            replace(p, ttl=ttl, hit_rate=min(1.0, st.mean + z * st.se)))


def cheaper_path(doc_tokens: int, n_files: int, p: Profile, a: str = "long_context", b: str = "rag") -> str:
    """``a`` when it costs no more than ``b`` across the hit-rate band of ``p``, ``b`` when it costs
    more across it, ``"tie"`` when the band holds both answers (the simulation's noise decides)."""
    said = {a if m[a] <= m[b] else b
            for m in (compare(doc_tokens, n_files, q).monthly for q in hit_rate_band(p))}
    return said.pop() if len(said) == 1 else "tie"


def _rows(doc_tokens: int, n_files: int, p: Profile, ttl: str) -> dict[str, Row]:
    m = pricing.get_model(p.model)
    q = p.prompt_tokens
    out = p.output_tokens
    write = {"cache_write_5m_tokens" if ttl == "5m" else "cache_write_1h_tokens": doc_tokens}

    filt_docs = round(doc_tokens * min(p.filter_files, n_files) / n_files)
    filt_write = {"cache_write_5m_tokens" if ttl == "5m" else "cache_write_1h_tokens": filt_docs}
    rag_in = p.rag_chunks * p.chunk_tokens + q

    rows = {
        "long_context": Row("long_context", "ロングコンテキスト（キャッシュなし）", doc_tokens + q,
                            pricing.call_cost(m, input_tokens=doc_tokens + q, output_tokens=out).total,
                            pricing.ttft_seconds(doc_tokens + q), "citations API（要実装）"),
        "lc_write": Row("lc_write", f"同上・初回（キャッシュ書き込み・TTL {ttl}）", doc_tokens + q,
                        pricing.call_cost(m, input_tokens=q, output_tokens=out, **write).total,
                        pricing.ttft_seconds(doc_tokens + q), "citations API（要実装）"),
        "lc_cached": Row("lc_cached", "同上・2 回目以降（キャッシュ読み出し）", doc_tokens + q,
                         pricing.call_cost(m, input_tokens=q, output_tokens=out, cache_read_tokens=doc_tokens).total,
                         pricing.ttft_seconds(q, doc_tokens), "citations API（要実装）"),
        "filter_write": Row("filter_write", f"メタデータで絞る（{min(p.filter_files, n_files)} 件・初回・TTL {ttl}）", filt_docs + q,
                            pricing.call_cost(m, input_tokens=q, output_tokens=out, **filt_write).total,
                            pricing.ttft_seconds(filt_docs + q), "citations API（要実装）"),
        "filter_cached": Row("filter_cached", "同上・キャッシュ読み出し", filt_docs + q,
                             pricing.call_cost(m, input_tokens=q, output_tokens=out, cache_read_tokens=filt_docs).total,
                             pricing.ttft_seconds(q, filt_docs), "citations API（要実装）"),
        "rag": Row("rag", f"RAG（上位 {p.rag_chunks} チャンク）", rag_in,
                   pricing.call_cost(m, input_tokens=rag_in, output_tokens=out).total,
                   pricing.ttft_seconds(rag_in, retrieval=True), "チャンク ID が構造で残る"),
    }
    return rows


def _month(rows: dict[str, Row], n: float, h: float, db_monthly: float) -> dict[str, float]:
    monthly = {
        "long_context_no_cache": pricing.monthly_cost(n, cost_miss=rows["long_context"].cost),
        "long_context": pricing.monthly_cost(n, cost_miss=rows["lc_write"].cost, cost_hit=rows["lc_cached"].cost,
                                             hit_rate=h),
        "filter": pricing.monthly_cost(n, cost_miss=rows["filter_write"].cost, cost_hit=rows["filter_cached"].cost,
                                       hit_rate=h),
        "rag_api": pricing.monthly_cost(n, cost_miss=rows["rag"].cost),
        "rag_db": db_monthly,
    }
    monthly["rag"] = monthly["rag_api"] + db_monthly
    return monthly


def table(c: Comparison) -> _table.Table:
    """A comparison as a table in Japanese: an HTML table in a notebook, the same cells as text in a terminal."""
    p = c.profile
    m = pricing.get_model(p.model)
    head = f"{c.n_files} ファイル"
    if c.chars is not None:
        head += f" / {c.chars:,} 字"
    head += f" → {c.doc_tokens:,} tokens（{c.token_method}）"
    verdict = "前提を満たす" if c.window_usage <= 0.5 else "前提を満たさない（絞るか RAG）"
    intro = [head, f"{m.display_name} のコンテキストウィンドウ {m.context_window:,} tokens の {c.window_usage:.0%}"
                   f"（50% 以下なら {verdict}）"]
    if c.question:
        intro.append(f"質問: {c.question}")
    rows = [[r.label, f"{r.input_tokens:,}", f"${r.cost:.3f}", f"{r.ttft_s:.1f}s", r.citations] for r in c.rows.values()]
    per_day = p.questions_per_month / 30
    mo = c.monthly
    summary = [f"月 {p.questions_per_month:,.0f} 問（1 日 {per_day:g} 問・{p.ttl_label()}・{p.hit_rate_label()}）",
               f"ロングコンテキスト ${mo['long_context']:,.0f}（キャッシュなしなら ${mo['long_context_no_cache']:,.0f}）"
               f"  絞り込み ${mo['filter']:,.0f}  RAG ${mo['rag_api']:,.0f} + DB ${mo['rag_db']:,.0f} = ${mo['rag']:,.0f}"]
    if mo["long_context_no_cache"] < mo["long_context"]:
        summary.append(f"この質問数では、キャッシュを付けないほうが月 ${mo['long_context'] - mo['long_context_no_cache']:,.2f} 安い"
                       "（書き込みの割増を取り戻すほど読まれない: 04）。TTL の自動選択は 5m と 1h だけを比べます。")
    diff = mo["long_context"] - mo["rag"]
    if diff > 0:
        summary.append(f"差は月 ${diff:,.0f}: この額で RAG を作って運用し続ける価値があるかが判断です。")
    else:
        summary.append(f"ロングコンテキストのほうが月 ${-diff:,.0f} 安い: RAG を作る理由は料金にはありません。")
    premises = [
        f"単価 ${m.input_usd_per_mtok:g} / ${m.output_usd_per_mtok:g}（100 万トークン, {pricing.price_table_date()} 時点）"
        + "".join(f"、{t.over_prompt_tokens:,} tok を超えるプロンプトは呼び出し全体が ${t.input_usd_per_mtok:g} / "
                  f"${t.output_usd_per_mtok:g}（{'価格表が置いた前提: 公式には未確認' if m.tier_rule.assumption else '価格表の規則'}）"
                  for t in m.prompt_tiers),
        f"質問と指示 {p.prompt_tokens:,} tok, 回答 {p.output_tokens:,} tok",
        f"キャッシュ書き込み {m.write_multiplier(c.ttl)}x（TTL {c.ttl}）, 読み出し {m.cache_read_multiplier}x",
        f"RAG は {p.chunk_tokens:,} tok × {p.rag_chunks} チャンク, DB 月 ${p.db_monthly:g}",
        f"絞り込みは平均的なファイル {p.filter_files} 件",
        ("ヒット率はトラフィックのモデル（04）から。実際の率は自社のログの間隔で確かめる" if p.hit_rate is None
         else f"ヒット率 {p.hit_rate:.0%} は指定した固定値。実際の率は自社のログの間隔で確かめる"),
    ]
    caption = (f"出典: 価格表（{pricing.price_table_date()} 時点）の単価で計算した料金。"
               "最初tok（最初のトークンまでの時間）は使い分けの記事の数字に合わせたシミュレーション（実測ではない）")
    return _table.Table(["方式", "入力tok", "課金/回", "最初tok", "出典"], rows, caption=caption,
                        align=["l", "r", "r", "r", "l"], intro=intro, summary=summary,
                        notes=premises + list(c.notes))


def format_table(c: Comparison) -> str:
    """:func:`table` as text for the terminal (``ctxlab compare``)."""
    return str(table(c))


def price_list(models: dict | None = None) -> _table.Table:
    """The price table (lesson 02 section 1): today's models and the article's, with their cache multiples."""
    models = pricing.models() if models is None else models
    article = set(pricing.article_models())
    rows = [[m.display_name, "記事の時点（旧世代）" if m.id in article else "今日のモデル",
             f"${m.input_usd_per_mtok:g}", f"${m.output_usd_per_mtok:g}", f"{m.cache_write_5m_multiplier:g} 倍",
             f"{m.cache_write_1h_multiplier:g} 倍", f"{m.cache_read_multiplier:g} 倍", f"{m.context_window:,}"]
            for m in models.values()]
    notes = [f"{m.display_name}: {t.over_prompt_tokens:,} トークンを超えるプロンプトは ${t.input_usd_per_mtok:g} / "
             f"${t.output_usd_per_mtok:g}（{'どのトークンを数え、何に高い単価が掛かるかは価格表が置いた前提: 公式には未確認' if m.tier_rule.assumption else '価格表の規則'}）"
             for m in models.values() for t in m.prompt_tiers]
    return _table.Table(["モデル", "区分", "入力", "出力", "書き込み 5 分", "書き込み 1 時間", "読み出し", "ウィンドウ（tokens）"],
                        rows, caption=f"出典: 価格表 data/pricing.json（{pricing.price_table_date()} 時点。Anthropic の料金と"
                                      "モデルのページ、数字ごとの出典は価格表に）。入力・出力は 100 万トークンあたりのドル、"
                                      "キャッシュの倍率は入力単価に対する倍率",
                        notes=notes)


TOKENIZER_LABELS = {"newer": "新しい", "older": "古い（そのモデルで数え直す）"}


def window_table(doc_tokens: int, models=None, *, tokenizer: bool = False) -> _table.Table:
    """Each model's window usage for ``doc_tokens`` and whether it meets the 50% premise (lessons 00 and 01);
    ``tokenizer`` adds the model's tokenizer generation (a count made on one generation is re-counted on the other)."""
    models = list((pricing.models() if models is None else models).values()) if isinstance(models, dict) or models is None \
        else [pricing.get_model(m) for m in models]
    rows = []
    for m in models:
        usage = doc_tokens / m.context_window
        rows.append([m.display_name, f"{m.context_window:,}", f"{usage:.1%}", "満たす" if usage <= 0.5 else "満たさない"]
                    + ([TOKENIZER_LABELS[m.tokenizer_family]] if tokenizer else []))
    return _table.Table(["モデル", "ウィンドウ（tokens）", "使用率", "前提（50% 以下）"] + (["トークナイザー"] if tokenizer else []),
                        rows,
                        caption=f"文書 {doc_tokens:,} tokens を各モデルのウィンドウで割った値。ウィンドウは価格表"
                                f"（{pricing.price_table_date()} 時点）から")


VERDICT_LABELS = {"long_context": "ロングコンテキスト", "rag": "RAG", "tie": "同額圏"}


def verdict_table(doc_tokens: int, n_files: int, models, per_days) -> tuple[dict, _table.Table]:
    """The month of long context (cached) and RAG (with its DB) for each model and questions a day, and which is
    cheaper by :func:`cheaper_path` (lesson 00 section 5): ``({(model, per_day): verdict}, table)``."""
    verdicts, rows = {}, []
    for model in models:
        for per_day in per_days:
            p = Profile(model=model, questions_per_month=per_day * DAYS_PER_MONTH)
            c = compare(doc_tokens, n_files, p)
            verdicts[model, per_day] = cheaper_path(doc_tokens, n_files, p)
            rows.append([pricing.get_model(model).display_name, f"{per_day}", c.ttl, f"{c.hit_rate:.0%}",
                         f"${c.monthly['long_context']:,.2f}", f"${c.monthly['rag']:,.2f}",
                         VERDICT_LABELS[verdicts[model, per_day]]])
    table = _table.Table(["モデル", "1 日の質問数", "TTL", "ヒット率", "ロングコンテキスト（キャッシュ込み）", "RAG（DB 込み）",
                          "安いのは"], rows,
                         caption=f"出典: 価格表（{pricing.price_table_date()} 時点）の単価と、04 の合成トラフィックから出した"
                                 "ヒット率（シミュレーションの平均）で計算した月額",
                         summary=[f"同額圏: ヒット率を、シミュレーションした平均の ±{BAND_SE:g} 標準誤差の幅で動かすと、"
                                  "安いほうが入れ替わる"])
    return verdicts, table
