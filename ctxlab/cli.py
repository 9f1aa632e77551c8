"""The ``ctxlab`` command, every subcommand of the course: compare, release, grade, quiz.

Errors are reported in one or two lines with what to do, and a non-zero exit code; the
command never shows a traceback for bad input. A subcommand's implementation is imported
when it runs, so ``ctxlab compare`` does not pay for nbgrader or the SDK.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ctxlab.costs import pricing, traffic
from ctxlab.costs.compare import TTL_CHOICES, Profile, compare, format_table
from ctxlab.corpus.documents import DocumentError, load_folder
from ctxlab.errors import CtxlabError


def _positive_int(s: str) -> int:
    try:
        v = int(s.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"整数を指定してください (an integer), got {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"0 以上を指定してください (>= 0), got {v}")
    return v


def _nonneg_float(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"数値を指定してください (a number), got {s!r}") from None
    if v < 0 or v != v:
        raise argparse.ArgumentTypeError(f"0 以上を指定してください (>= 0), got {s}")
    return v


def _rate(s: str) -> float:
    v = _nonneg_float(s)
    if v > 1:
        raise argparse.ArgumentTypeError(f"0 から 1 の割合で指定してください (e.g. 0.8), got {s}")
    return v


def _count_docs(texts: list[str], mode: str, model: str) -> tuple[int, str]:
    from ctxlab.api import tokens

    if mode == "api":
        from ctxlab.api.client import is_offline, make_client

        client = make_client()
        if is_offline(client):
            raise DocumentError("--count api には ANTHROPIC_API_KEY が要ります (set it in the environment or .env)")
        tc = tokens.count_documents(texts, client=client, model=model)
    else:
        tc = tokens.count_documents(texts, model=model)
    return tc.tokens, tc.method


def _folder_documents(folder: Path) -> tuple[list[str], int, list[str]]:
    """(texts, characters, warnings) of a document folder; with a ``catalog.json``, only its current versions.

    A folder with the course's catalog (data/rules) keeps superseded versions beside the current ones;
    a long-context prompt sends only the current ones, so only those are counted (and the catalog itself is not a document).
    """
    if (folder / "catalog.json").is_file():
        from ctxlab.corpus import rules

        docs = rules.load(current_only=True, rules_dir=folder)
        every = rules.load(current_only=False, rules_dir=folder)
        note = (f"{folder}/catalog.json に従い、現行の {len(docs)} ファイルだけを数えます"
                f"（改定前の {len(every) - len(docs)} 版とカタログ自体は数えません）")
        return [d.text for d in docs], sum(len(d.text) for d in docs), [note]
    report = load_folder(folder)
    return [d.text for d in report.documents], report.chars, report.warnings


def cmd_compare(args: argparse.Namespace) -> int:
    profile = Profile(
        model=args.model,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        questions_per_month=args.questions_per_month,
        hit_rate=args.hit_rate,
        db_monthly=args.db_monthly,
        filter_files=args.filter_files,
        rag_chunks=args.rag_chunks,
        chunk_tokens=args.chunk_tokens,
        ttl=args.ttl,
        traffic=args.traffic,
    )
    warnings: list[str] = []
    if args.total_tokens is not None:
        doc_tokens, method, chars = args.total_tokens, "--total-tokens で指定", None
        n_files = args.files
        if args.docs:
            texts, chars, warnings = _folder_documents(args.docs)
            n_files = len(texts)
    elif args.docs:
        texts, chars, warnings = _folder_documents(args.docs)
        doc_tokens, method = _count_docs(texts, args.count, args.model)
        n_files = len(texts)
    else:
        raise DocumentError("--docs DIR か --total-tokens N のどちらかを指定してください。")
    result = compare(doc_tokens, n_files, profile, chars=chars, token_method=method, question=args.ask)
    if args.json:
        out = result.to_dict()
        out["warnings"] = warnings
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        for w in warnings:
            print("警告: " + w, file=sys.stderr)
        print(format_table(result))
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from ctxlab.grading.release import release, release_graded

    if args.graded is not None:
        names = release_graded(args.graded, Path(args.root), assignments=args.assignment or None)
        print(f"graded release in {args.graded}: {', '.join(names)} (no answer key: checked)")
        return 0
    changed = release(Path(args.root), assignments=args.assignment or None)
    for name in changed:
        print(f"released {name}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from ctxlab.grading.workflow import run

    return run(args)


def cmd_quiz(args: argparse.Namespace) -> int:
    import yaml

    from ctxlab import quiz

    if args.action == "key":
        path = quiz.bank_path(args.bank)
        if args.bank == quiz.KNOWLEDGE_CHECK:   # graded: the salt is in the instructor's key file
            path = quiz.INSTRUCTOR_KEY
        with open(path, encoding="utf-8") as f:
            salt = ((yaml.safe_load(f) or {}).get("salt") or "").strip()
        if not salt:
            print(f"{args.bank}: the bank needs a salt first", file=sys.stderr)
            return 1
        print(quiz.key_hash(salt, args.question, args.choice))
        return 0
    ok = True
    for path in sorted(quiz.QUIZZES.glob("*.yaml")):
        try:
            bank = quiz.load(path)
            if bank.graded and path.stem == quiz.KNOWLEDGE_CHECK:
                bank = quiz.instructor_bank()
                print(f"{path.name}: graded, {len(bank)} questions OK with {quiz.INSTRUCTOR_KEY.name}")
            else:
                print(f"{path.name}: {len(bank)} questions OK")
        except quiz.QuizError as e:
            ok = False
            print(e)
    return 0 if ok else 1


def cmd_eval_grader(args: argparse.Namespace) -> int:
    """The rule grader (and, with --judge, the model judge) measured on data/eval/labelled_answers.jsonl."""
    from ctxlab.evaluation import judge, labelled, rules

    parts = labelled.measure_parts(rules.grade)
    print("ルール採点をラベル付き回答の二つの集合で別々に測った結果。採点の誤りの見積もりに使うのは検証用の数字です。\n")
    print(labelled.format_parts(parts))
    print()
    print(labelled.format_before_after(parts))
    if args.judge:
        from ctxlab.api.client import make_client

        client = make_client()
        jm = judge.measure_on_labels(client, model=args.model or judge.JUDGE_MODEL)
        cost = (f"実 API なら約 ${jm.cost_usd:.3f}（sandbox の見積もり）" if jm.measured.name == judge.SANDBOX_JUDGE
                else f"料金 ${jm.cost_usd:.3f}（実 API）")
        print(f"\n判定: {judge.GRADER_JA.get(jm.measured.name, jm.measured.name)}（{cost}）")
        print(jm.measured.agreement.format("判定"))
        print(jm.measured.format_kinds())
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    from ctxlab.decide import Options, decide
    from ctxlab.decide import memo

    opts = Options(docs=args.docs, questions=args.questions, log=args.log, questions_per_day=args.questions_per_day,
                   models=tuple(args.model or ()), db_monthly=args.db_monthly, rag_budget_monthly=args.rag_budget_monthly,
                   update_every=args.update_every, reindex_every=args.reindex_every, budget_usd=args.budget,
                   progress=not args.quiet)
    d = decide(opts)
    written = memo.write(d, args.out) if args.out is not None else []
    print(memo.summary(d))
    for p in written:
        print(f"書きました: {p}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ctxlab", description="RAG か ロングコンテキストか: course tools")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compare", help="使い分けの記事の比較表を、フォルダかトークン数から作る")
    c.add_argument("--docs", type=Path, help="文書のフォルダ (.txt / .md, UTF-8 or CP932)")
    c.add_argument("--ask", help="質問 (表の見出しに出す)")
    c.add_argument("--model", default=pricing.DEFAULT_MODEL, help="model id from data/pricing.json")
    c.add_argument("--questions-per-month", type=_nonneg_float, default=600)
    c.add_argument("--hit-rate", type=_rate, default=None,
                   help="cache hit rate, 0..1 (default: from lesson 04's traffic model for the questions per day)")
    c.add_argument("--traffic", choices=sorted(traffic.PROFILES), default=traffic.DEFAULT_PROFILE,
                   help="traffic shape the default hit rate is taken from (lesson 04)")
    c.add_argument("--db-monthly", type=_nonneg_float, default=70.0, help="vector DB $ per month")
    c.add_argument("--total-tokens", type=_positive_int, help="use N document tokens instead of counting")
    c.add_argument("--files", type=_positive_int, default=50, help="file count with --total-tokens (default 50)")
    c.add_argument("--prompt-tokens", type=_positive_int, default=400, help="question + instructions per call")
    c.add_argument("--output-tokens", type=_positive_int, default=700)
    c.add_argument("--filter-files", type=_positive_int, default=5)
    c.add_argument("--rag-chunks", type=_positive_int, default=8)
    c.add_argument("--chunk-tokens", type=_positive_int, default=800)
    c.add_argument("--ttl", choices=list(TTL_CHOICES), default="auto",
                   help="cache TTL; auto (default): the cheaper one for this traffic and model (lesson 04)")
    c.add_argument("--count", choices=["estimate", "api"], default="estimate",
                   help="estimate offline (default) or call count_tokens (needs ANTHROPIC_API_KEY)")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=cmd_compare)

    d = sub.add_parser("decide", help="自社の文書とトラフィックで 4 つの数字を出し、方式を決めて意思決定メモを書く（11）")
    d.add_argument("--docs", type=Path, required=True, help="文書のフォルダ（.md / .txt / .pdf / .docx、サブフォルダ = 部署）")
    d.add_argument("--questions", type=Path, help="質問の CSV か JSONL（question, answer, key_facts, gold_files）")
    d.add_argument("--log", type=Path, help="リクエストのログ（1 行に 1 時刻、または timestamp 列のある CSV）")
    d.add_argument("--questions-per-day", type=_nonneg_float, help="ログがないときの 1 日の質問数（04 の合成トラフィック）")
    d.add_argument("--model", action="append", help="主に見るモデル（繰り返し可。既定: 価格表の既定モデル）")
    d.add_argument("--db-monthly", type=_nonneg_float, default=70.0, help="ベクトル DB の月額ドル（既定 70）")
    d.add_argument("--rag-budget-monthly", type=_nonneg_float, default=0.0,
                   help="RAG を作って運用するために毎月かけてよい額（料金の差がこれを上回れば RAG。既定 0）")
    d.add_argument("--update-every", help="文書が更新される間隔（例: 1d, 12h, 2w）")
    d.add_argument("--reindex-every", help="RAG の再インデックスの周期（例: 7d）")
    d.add_argument("--budget", type=_nonneg_float, help="オンラインで使ってよい額（ドル。CTXLAB_BUDGET_USD の代わり）")
    d.add_argument("--out", type=Path, help="意思決定メモ（memo.html と memo.md）を書くフォルダ")
    d.add_argument("--quiet", action="store_true", help="進み具合のバーを出さない")
    d.set_defaults(func=cmd_decide)

    r = sub.add_parser("release", help="regenerate course/ (self-study) or a graded release from solutions/ with nbgrader")
    r.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    r.add_argument("--root", default=".", help="course root (holds solutions/ and course/)")
    r.add_argument("--graded", type=Path, metavar="OUT",
                   help="write the graded release (for a workshop) to OUT instead: the knowledge check records "
                        "answers without judging them, and no answer key ships")
    r.set_defaults(func=cmd_release)

    from ctxlab.grading.workflow import add_arguments as grade_arguments

    g = sub.add_parser("grade", help="提出物（LMS のフォルダか zip）を nbgrader で並列に採点し、成績 CSV とフィードバックを作る")
    grade_arguments(g)
    g.set_defaults(func=cmd_grade)

    q = sub.add_parser("quiz", help="問題集 (quizzes/*.yaml) を検査する、正解のキーを作る")
    qs = q.add_subparsers(dest="action", required=True)
    qs.add_parser("check", help="validate every bank in quizzes/")
    k = qs.add_parser("key", help="print the key of a correct choice")
    k.add_argument("bank")
    k.add_argument("question")
    k.add_argument("choice")
    q.set_defaults(func=cmd_quiz)

    e = sub.add_parser("eval-grader", help="ルール採点（と --judge で採点モデル）をラベル付き回答で測る: κ と混同行列")
    e.add_argument("--judge", action="store_true",
                   help="also measure the model judge (online with ANTHROPIC_API_KEY, within CTXLAB_BUDGET_USD; "
                        "offline the sandbox only simulates the plumbing)")
    e.add_argument("--model", default=None, help="the judge's model (default: ctxlab.evaluation.judge.JUDGE_MODEL)")
    e.set_defaults(func=cmd_eval_grader)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (DocumentError, ValueError, CtxlabError) as exc:
        print(f"ctxlab: エラー: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
