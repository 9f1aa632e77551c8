"""What a grading run produced: the grades CSV (one row per learner) and the run's summary.

The CSV holds one column per assignment (the score, autograded plus any manual points
given; empty when nothing was submitted, 0 when a submission could not be graded), the
total, the written answers' points still to grade (``pending_manual``) and notes: every
issue of the learner, in Japanese. The summary says what was graded, what failed and why.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab.grading._nbgrader import gradebook_url
from ctxlab.grading.lms import KIND_TEXT, PROBLEMS, Issue, load_issues
from ctxlab.grading.lms_export import spreadsheet_safe
from ctxlab.grading.parallel import GradeRun, Outcome


@dataclass
class Report:
    """What one ``ctxlab grade`` run did (intake, grading, CSV), for its summary and exit code."""

    root: Path
    uploads: int = 0
    ignored: int = 0
    #: submissions of assignments left out with --assignment (read, not graded, not reported)
    other_assignments: int = 0
    placed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    run: GradeRun | None = None
    csv: Path | None = None
    regenerated: list[str] = field(default_factory=list)
    seconds: float = 0.0
    summary: dict | None = None
    names: dict[str, str] = field(default_factory=dict)   # learner id -> name as the LMS wrote it
    #: learner id -> {name, email, layout, ids: {assignment: LMS id}} (what this run read)
    lms: dict[str, dict] = field(default_factory=dict)
    #: resubmissions whose unchanged answers keep their manual grades: (learner, assignment) -> grade ids
    manual_kept: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: feedback made again from the gradebook's state (graded by hand since: _manual.stale_feedback)
    feedback_remade: int = 0
    #: why making feedback again failed (the last line of nbgrader's error), "" when it did not
    feedback_error: str = ""
    #: an earlier run's learner of the same LMS id: (earlier learner, assignment) -> this run's learner
    converged: dict[tuple[str, str], str] = field(default_factory=dict)
    #: what ctxlab.grading.lms_export wrote for the LMS (see format_summary)
    exports: dict | None = None
    sandbox: bool = True   # False: graded with --no-sandbox
    #: which bubblewrap ran the kernels (isolation.sandbox_tool), None without the sandbox
    sandbox_tool: str | None = None

    def who(self, learner: str | None) -> str:
        name = self.names.get(learner or "", "")
        return f"{name}（{learner}）" if name and name != learner else (learner or "?")

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in (self.run.outcomes if self.run else []) if not o.graded]

    @property
    def problems(self) -> list[Issue]:
        return [i for i in self.issues if i.kind in PROBLEMS]


# --------------------------------------------------------------------------- grades CSV

def export_csv(root: Path, path: Path, known: list[str], issues: list[Issue] | None = None) -> dict:
    """Write the grades CSV: one row per learner, one column per assignment (the score,
    autograded plus any manual points given; empty when nothing was submitted, 0 when a
    submission could not be graded), the total, the written answers' points still to grade
    (pending_manual) and notes. Returns a small summary."""
    from nbgrader.api import Gradebook

    issues = issues if issues is not None else load_issues(root)
    rows: dict[str, dict] = {}
    maxima: dict[str, float] = {}
    pending_total = 0.0
    by_hand: set[tuple[str, str]] = set()   # submissions graded by hand (a held one is settled then)
    with Gradebook(gradebook_url(root)) as gb:
        for a in gb.assignments:
            maxima[a.name] = float(a.max_score)
        for st in gb.students:
            rows[st.id] = {"learner_id": st.id, "name": st.last_name or "", "scores": {}, "pending": {},
                           "email": st.email or "", "lms_id": st.lms_user_id or ""}
        for a in gb.assignments:
            for sub in a.submissions:
                row = rows.setdefault(sub.student.id, {"learner_id": sub.student.id, "name": "", "scores": {}, "pending": {}})
                row["scores"][a.name] = float(sub.score)
                if any(g.manual_score is not None for nb in sub.notebooks for g in nb.grades):
                    by_hand.add((sub.student.id, a.name))
                pend = sum(float(g.max_score) for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade)
                if pend:
                    row["pending"][a.name] = pend
    for i in issues:
        if i.learner is None:
            continue
        row = rows.setdefault(i.learner, {"learner_id": i.learner, "name": "", "scores": {}, "pending": {}})
        if i.kind in ("broken_notebook", "autograde_failed", "link", "skipped_file") and i.assignment:
            row["scores"].setdefault(i.assignment, 0.0)
    assignments = [a for a in known if a in maxima] + sorted(a for a in maxima if a not in known)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:  # BOM: Excel opens Japanese names right
        w = csv.writer(fh)
        w.writerow(["learner_id", "name", "email", "lms_id", *assignments, "total", "pending_manual", "notes"])
        for lid, row in sorted(rows.items(), key=lambda kv: (kv[1]["name"], kv[0])):
            # a dropped manual grade stays a note until the answer is graded again
            notes = [i.text() for i in issues if i.learner == lid
                     and not (i.kind == "manual_dropped" and i.assignment not in row["pending"])
                     and not (i.kind == "review" and (lid, i.assignment) in by_hand
                              and i.assignment not in row["pending"])]
            notes = list(dict.fromkeys(notes))
            if row["pending"]:
                pending_total += sum(row["pending"].values())
                notes.append("記述の未採点: " + ", ".join(f"{a} {p:g} 点" for a, p in row["pending"].items()))
            cells = [f"{row['scores'][a]:g}" if a in row["scores"] else "" for a in assignments]
            w.writerow([lid, spreadsheet_safe(row["name"]), row.get("email", ""), row.get("lms_id", ""), *cells,
                        f"{sum(row['scores'].values()):g}", f"{sum(row['pending'].values()):g}",
                        spreadsheet_safe(" / ".join(notes))])
    return {"learners": len(rows), "assignments": assignments, "maxima": maxima, "pending": pending_total}


# --------------------------------------------------------------------------- summary

def _fmt_seconds(s: float) -> str:
    m, s = divmod(int(round(s)), 60)
    return f"{m} 分 {s} 秒" if m else f"{s} 秒"


def format_summary(report: Report, limit: int = 20) -> str:
    lines = []
    if report.run is not None and report.run.outcomes and not report.sandbox:
        lines.append("警告: --no-sandbox で採点しました。受講者のコードが教員の権限で動き、ファイル・鍵・gradebook・"
                     "ネットワークに届きました（CSV の notes にも記録）")
    if report.run is not None and report.run.outcomes and report.sandbox and report.sandbox_tool:
        lines.append(f"サンドボックス: {report.sandbox_tool}")
    if report.regenerated:
        lines.append(f"課題を生成しました（generate_assignment）: {', '.join(report.regenerated)}")
    run = report.run
    if run is not None:
        ok = sum(o.graded for o in run.outcomes)
        lines.append(f"採点 {len(run.outcomes)} 件（成功 {ok} / 失敗 {len(run.outcomes) - ok}）"
                     f"  ワーカー {run.workers}  採点 {_fmt_seconds(run.seconds)}  全体 {_fmt_seconds(report.seconds)}")
    if report.uploads:
        lines.append(f"提出物 {report.uploads} 件を読みました（前回と同じで採点済み {len(report.unchanged)} 件、"
                     f".ipynb 以外で無視 {report.ignored} 件）")
    if report.other_assignments:
        lines.append(f"--assignment で選ばなかった課題の提出 {report.other_assignments} 件は採点していません")

    def block(title: str, items: list[str]) -> None:
        items = list(dict.fromkeys(items))   # one line per distinct text
        if items:
            lines.append(f"{title}: {len(items)} 件")
            lines.extend(f"  - {x}" for x in items[:limit])
            if len(items) > limit:
                lines.append(f"  …ほか {len(items) - limit} 件（{report.root / 'issues.json'}）")

    block("採点できなかった", [f"{report.who(o.student)} {o.assignment}: {o.error}" for o in report.failed])
    if run is not None and run.feedback:
        block("フィードバックを作れなかった（採点は済み）",
              [f"{report.who(o.student)} {o.assignment}: {o.feedback_error or 'ログを参照'}"
               for o in run.outcomes if o.graded and not o.feedback])
    block("時間切れのセルあり（採点済み）",
          [f"{report.who(o.student)} {o.assignment}: {o.timeouts} セル" for o in (run.outcomes if run else [])
           if o.timeouts])
    block("サンドボックスが拒否・制限した操作あり（採点済み）",
          [f"{report.who(o.student)} {o.assignment}: {', '.join(o.limits)}" for o in (run.outcomes if run else [])
           if o.limits])
    block("自動採点を保留した（採点の仕組みに手を加えるコード・formgrader で確認して手動採点）",
          [f"{report.who(o.student)} {o.assignment}: {' / '.join(o.review)}" for o in (run.outcomes if run else [])
           if o.review])
    block("gradebook への採点以外の変更を破棄した",
          [f"{report.who(o.student)} {o.assignment}: {', '.join(o.discarded)}" for o in (run.outcomes if run else [])
           if o.discarded] + (run.discarded if run else []))
    for kind in ("broken_notebook", "link", "skipped_file", "unknown_assignment", "unknown_learner", "no_grade_cells",
                 "duplicate", "same_name", "same_name_distinct", "manual_dropped", "late"):
        # a shared name is one line (its detail names the name and every id), not one per learner
        block(KIND_TEXT[kind], [i.detail if kind.startswith("same_name") else f"{report.who(i.learner)}: {i.detail}"
                                for i in report.issues if i.kind == kind])
    if report.converged:
        lines.append(f"前回と別の受講者として記録されていた提出 {len(report.converged)} 件を、今回の受講者にまとめました"
                     "（同じ LMS の id。名簿を付けた再実行など）")
    if report.manual_kept:
        lines.append(f"再提出 {len(report.manual_kept)} 件は記述が前と同じため、手動採点を引き継ぎました")
    summ = report.summary
    if summ and report.csv:
        maxima = ", ".join(f"{a} {summ['maxima'][a]:g}" for a in summ["assignments"])
        lines.append(f"成績: {report.csv}（{summ['learners']} 人、記述の未採点 {summ['pending']:g} 点）")
        lines.append(f"  満点: {maxima}")
    if report.feedback_remade:
        lines.append(f"フィードバック {report.feedback_remade} 件を今の採点（手動採点を含む）から作り直しました")
    if report.feedback_error:
        lines.append(f"フィードバックを作り直せませんでした（{report.feedback_error}）。その提出のフィードバックは"
                     "フィードバック zip に入れていません。ctxlab grade --export --feedback でもう一度試してください")
    if run is not None and any(o.feedback for o in run.outcomes):
        lines.append(f"フィードバック: {report.root / 'feedback'}/<受講者>/<課題>/<課題>.html")
    lines.extend(_lms_lines(report))
    return "\n".join(lines)


def _lms_lines(report: Report) -> list[str]:
    """What was written for the LMS and the next step (docs/instructor.md「LMS に戻す」)."""
    ex = report.exports
    if ex is None:
        return []
    lines = []
    files = ex["files"]
    sheets = sum(p.name.endswith("_worksheet.csv") for p in files)
    zips = sum(p.name.endswith("_feedback.zip") for p in files)
    gradebook = [p for p in files if p.name.startswith("moodle_grades_")]
    canvas = [p for p in files if p.name.startswith("canvas_grades_")]
    canvas_zips = [p for p in files if p.name.startswith("canvas_feedback_")]
    if files:
        parts = [f"Moodle の評定ワークシート {sheets} 件・フィードバック zip {zips} 件（moodle/）"] if sheets or zips else []
        parts += [f"Moodle の評定表 CSV {len(gradebook)} 件（moodle_grades_<課題>.csv）"] if gradebook else []
        parts += [f"Canvas の成績 CSV {len(canvas)} 件（canvas_grades_<課題>.csv）"] if canvas else []
        parts += [f"Canvas のフィードバック zip {len(canvas_zips)} 件（canvas_feedback_<課題>.zip）"] if canvas_zips else []
        lines.append(f"LMS 用: {ex['dir']}/（{'、'.join(parts)}）")
    if ex["without_id"]:
        lines.append(f"  LMS の id もメールアドレスも分からない {len(ex['without_id'])} 人は LMS 用ファイルにありません"
                     "（--roster roster.csv で対応させるか、grades.csv から手で入力）")
    if ex.get("canvas_untitled"):
        lines.append(f"  {', '.join(ex['canvas_untitled'])}: Canvas の課題 id が分からないため、成績 CSV の列見出しは課題 id の"
                     "ままです。Canvas は列見出しと同じ名前の課題を探し、なければ取り込みで新しい課題を作ります"
                     "（--canvas-assignment 課題=Canvas の課題 id を付けて ctxlab grade --export で作り直してください）")
    if ex.get("anonymous"):
        lines.append(f"  Canvas の匿名採点の提出 {len(ex['anonymous'])} 件は canvas_grades にありません（匿名 id はユーザー id "
                     "ではないため。SpeedGrader で grades.csv の点を入力してください）")
    if ex.get("groups"):
        lines.append(f"  Moodle のグループ提出 {len(ex['groups'])} 件はワークシートにありません（番号はグループ id で参加者 id "
                     "ではないため。課題の評定画面でグループの点を入力してください）")
    if ex.get("answers_held"):
        lines.append(f"  {', '.join(ex['answers_held'])} のフィードバックは正解を含むため、フィードバック zip に入れていません"
                     "（提出の締め切り後に ctxlab grade --export --release-answers で作ってください）")
    if ex.get("stale_feedback"):
        lines.append(f"  フィードバックが今の点と合わない {len(ex['stale_feedback'])} 件はフィードバック zip に入れていません"
                     "（--no-feedback のため。ctxlab grade --export で作り直してください）")
    if ex["held"]:
        lines.append(f"  記述が未採点の提出 {len(ex['held'])} 件は LMS 用ファイルに入れていません"
                     f"（そのフィードバック {ex['marked']} 件には「記述は未採点」と表示）")
    same = sorted({i.learner for i in report.issues if i.kind == "same_name"})
    if same:
        lines.append("次に: 同名の受講者がいます。名簿（id, name, email。Moodle の評定ワークシートの CSV でも可）を作り、"
                     "--roster roster.csv を付けてもう一度実行してください（手順: docs/instructor.md「同じ名前の受講者と名簿」）")
    elif ex["held"]:
        lines.append("次に: formgrader で記述を採点し、ctxlab grade --export --feedback で点とフィードバックを"
                     "確定してから LMS に取り込んでください")
    elif files:
        steps = (["Moodle は課題ごとに「Upload grading worksheet」へ <課題>_worksheet.csv、「Upload multiple feedback "
                  "files in a zip」へ <課題>_feedback.zip"] if sheets or zips else [])
        steps += [f"Moodle の評定表の「インポート」（CSV ファイル）へ moodle_grades_<課題>.csv（{', '.join(ex['gradebook'])}。"
                  "取り込んだ点は評定表で上書き扱いになり、後で課題の画面で直した点は評定表に届きません）"] if gradebook else []
        steps += ["Canvas は成績の「インポート」へ canvas_grades_<課題>.csv を 1 つずつ"] if canvas else []
        steps += ["Canvas の課題の「提出物の再アップロード」（Re-upload submissions）へ canvas_feedback_<課題>.zip"
                  ] if canvas_zips else []
        lines.append(f"次に: {'。'.join(steps)}（手順: docs/instructor.md「LMS に戻す」）")
    return lines


def exit_reasons(report: Report) -> list[str]:
    """Why ``ctxlab grade`` ends with exit code 1 (empty: exit 0), each with its count, in the
    order an instructor handles them."""
    reasons = []
    if report.failed:
        reasons.append(f"採点できなかった提出 {len(report.failed)} 件")
    held = [o for o in (report.run.outcomes if report.run else []) if o.review]
    if held:
        reasons.append(f"自動採点を保留した提出 {len(held)} 件（formgrader で手動採点）")
    kinds: dict[str, int] = {}
    for i in report.problems:
        kinds[i.kind] = kinds.get(i.kind, 0) + 1
    for kind, n in kinds.items():
        if kind == "same_name":
            n = len({i.detail for i in report.problems if i.kind == kind})
            reasons.append(f"名簿で解決していない同名の受講者 {n} 組（--roster）")
        else:
            reasons.append(f"{KIND_TEXT[kind].split('（')[0]} {n} 件")
    return reasons
