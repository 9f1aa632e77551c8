"""``ctxlab grade``: grade a class's submissions as the LMS exports them.

One command takes a folder or a zip of submissions (:mod:`~ctxlab.grading.lms` reads it),
places the notebooks where nbgrader expects them in a course root (default ``grading/``,
git-ignored), autogrades them in parallel (:func:`~ctxlab.grading.parallel.grade_parallel`),
generates feedback and writes a grades CSV with one row per learner
(:mod:`~ctxlab.grading.report`) and the files that go back to the LMS
(:mod:`~ctxlab.grading.lms_export`). What could not be graded is reported with the reason, and
the learner still gets a row. The upload is only read, never modified (a zip is extracted
to a temporary folder). One run at a time per course root (a lock): the gradebook has one writer.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import sys
import tempfile
import time
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from ctxlab._paths import REPO_ROOT
from ctxlab.errors import GradeError
from ctxlab.grading import _nbgrader, lms_export
from ctxlab.grading._converge import another_class, converge
from ctxlab.grading._manual import keep_manual_grades, record_feedback, remake_feedback, resubmitted, stale_feedback
from ctxlab.grading._nbgrader import SOURCE_DIR, gradebook_url, place_submission, rmtree, sync_course_root
from ctxlab.grading.lms import (Issue, Person, check_notebook, copy_tree, extract_zip, key_learners, load_issues,
                                newest, read_roster, save_issues, save_lms_ids, scan, scan_zips)
from ctxlab.grading.graded_build import NoLessons, kernel_package
from ctxlab.grading.isolation import INSTALL_HINT, limits_config_args, sandbox_tool, unavailable_reason
from ctxlab.grading.parallel import Caps, grade_parallel
from ctxlab.grading.release import assignments as all_assignments
from ctxlab.grading.report import Report, exit_reasons, export_csv, format_summary

DESCRIPTION = """提出物を採点する（LMS から書き出したフォルダか zip）。

受講者ごとのフォルダ（LEARNER/00_start_here.ipynb、LEARNER/00_start_here/00_start_here.ipynb）、
Moodle（氏名_12345_assignsubmission_file_/00_start_here.ipynb）、
Canvas（learnername_12345_67890_00_start_here.ipynb）の形を読み、課題はパスに含まれる課題 id で見分けます。
採点は nbgrader の autograde を並列に実行し（常にオフライン）、成績 CSV、フィードバック、
LMS に戻すファイル（ROOT/lms/: Moodle の評定ワークシートとフィードバック zip、Canvas の成績 CSV）を作ります。
受講者のコードはサンドボックス（bubblewrap）の中で動き、自分の作業フォルダしか見えず、ネットワークも
鍵もなく、メモリ・プロセス数・ファイルサイズ・時間に上限があります。
元の提出物は読むだけで、変更しません。
"""

EPILOG = """例:
  ctxlab grade ~/Downloads/submissions.zip            # grading/ に採点し、grading/grades.csv を書く
  ctxlab grade exports/ --workers 4 --timeout 60
  ctxlab grade moodle.zip --roster roster.csv          # 名簿（id, name, email）で Moodle の id を人に対応させる
  ctxlab grade --export                               # 手動採点の後: 採点の変わったフィードバックを作り直し、CSV と LMS 用ファイル（ROOT/lms/）を書き直す
  ctxlab grade --export --feedback                    # すべてのフィードバックを作り直す
  ctxlab grade b組.zip --root grading/b組              # クラスごとに採点フォルダを分ける
  ctxlab grade --validate course/00_start_here/00_start_here.ipynb   # 1 冊だけテストが通るか確かめる

終了コード: 0 すべて採点できた / 1 採点できなかった提出、名簿で解決していない同名の受講者がある、自動採点を保留した提出がある（理由は最後の「終了コード 1:」の行、要約と CSV の notes 列）・
--validate でテストが失敗 / 2 入力の誤り
"""


def _timestamp(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _graded(root: Path, student: str, assignment: str) -> bool:
    ag = root / "autograded" / student / assignment
    return ag.exists() and any(ag.glob("*.ipynb"))


def intake(upload: Path, root: Path, known: list[str], force: bool = False,
           course_assignments: list[str] | None = None, roster: dict[str, Person] | None = None,
           groups: bool = False, same_class: bool = False) -> Report:
    """Read an upload and place the submissions to grade in ``root/submitted``.

    ``known`` are the assignments to grade; ``course_assignments`` (default: ``known``) every
    assignment of the course, so that a submission of one not chosen is skipped quietly
    instead of being reported as an unknown assignment. ``roster`` maps LMS ids to people
    (:func:`~ctxlab.grading.lms.read_roster`). A resubmission of a manually graded notebook
    keeps the manual grades of unchanged answers and drops those of changed ones (reported).
    An upload that shares no learner with the two or more already graded in ``root`` is
    refused as another class (:func:`~ctxlab.grading._converge.another_class`) unless
    ``same_class``."""
    from nbgrader.api import Gradebook

    report = Report(root=root)
    root.mkdir(parents=True, exist_ok=True)
    # a submission that nbgrader could not grade is tried again only when it changed (or --force)
    failed_before = {(i.learner, i.assignment) for i in load_issues(root) if i.kind == "autograde_failed"}
    with tempfile.TemporaryDirectory(prefix="ctxlab-upload-") as tmp, Gradebook(gradebook_url(root)) as gb:
        if upload.is_file():
            if not zipfile.is_zipfile(upload):
                raise GradeError(f"{upload} は zip でもフォルダでもありません")
            folder = Path(tmp) / "upload"
            try:
                links, left_out = [], extract_zip(upload, folder)
            except zipfile.BadZipFile as exc:   # the zip's own directory, not one entry
                raise GradeError(f"{upload} は zip として読めません（{exc}）。LMS からもう一度ダウンロードしてください") from None
        elif upload.is_dir():  # a private copy: links are reported, never followed
            folder = Path(tmp) / "upload"
            links, left_out = copy_tree(upload, folder)
        else:
            raise GradeError(f"{upload} が見つかりません")
        uploads, issues, report.ignored = scan(folder, course_assignments or known, links, left_out)
        if upload.is_dir():  # a folder of zips (Moodle gives one per assignment)
            more, more_issues, ignored = scan_zips(folder, Path(tmp) / "zips", course_assignments or known)
            uploads, issues, report.ignored = uploads + more, issues + more_issues, report.ignored + ignored
        others = {a for a in (course_assignments or known) if a not in known}
        report.other_assignments = sum(u.assignment in others for u in uploads)
        uploads = [u for u in uploads if u.assignment not in others]
        issues = [i for i in issues if i.assignment not in others]
        issues += key_learners(uploads, roster, groups=groups)
        report.uploads = len(uploads)
        kept, dups = newest(uploads)
        issues += dups
        other = None if same_class else another_class(root, gb, uploads)
        if other:
            raise GradeError(other)
        report.converged = converge(root, gb, uploads)   # an earlier run's learner of the same LMS id
        learners: dict[str, dict] = {}
        for up in kept:
            if up.late:
                issues.append(Issue("late", up.learner, up.assignment, f"{up.rel}: 締め切り後の提出", up.rel))
            reason, n_cells = check_notebook(up.file)
            learners[up.learner] = {"name": up.name, "lms_id": up.lms_id if up.layout == "canvas" else "",
                                    "email": up.email}
            entry = report.lms.setdefault(up.learner, {"name": up.name, "email": up.email, "layout": up.layout,
                                                       "ids": {}, "attachments": {}})
            entry["ids"][up.assignment] = up.lms_id
            if up.attachment:
                entry["attachments"][up.assignment] = up.attachment
            if reason:
                issues.append(Issue("broken_notebook", up.learner, up.assignment, f"{up.rel}: {reason}", up.rel))
                continue
            if n_cells == 0:
                issues.append(Issue("no_grade_cells", up.learner, up.assignment,
                                    f"{up.rel}: nbgrader のセルがありません。0 点になります", up.rel))
            target = root / "submitted" / up.learner / up.assignment / f"{up.assignment}.ipynb"
            same = target.exists() and target.read_bytes() == up.file.read_bytes()
            if same and not force and (_graded(root, up.learner, up.assignment)
                                       or (up.learner, up.assignment) in failed_before):
                report.unchanged.append((up.learner, up.assignment))
                continue
            if target.exists():
                dropped, kept_manual = resubmitted(gb, target, up.file, up.learner, up.assignment)
                if dropped:
                    issues.append(Issue("manual_dropped", up.learner, up.assignment,
                                        f"{up.rel}: 変わった解答 {', '.join(dropped)} の手動採点を取り消しました", up.rel))
                if kept_manual:
                    report.manual_kept[(up.learner, up.assignment)] = kept_manual
            rmtree(target.parent)
            place_submission(root, up.learner, up.assignment, up.file, _timestamp(up.mtime))
            for extra in up.extras:  # nbgrader's own timestamp wins over the file time
                shutil.copy(extra, target.parent / extra.name)
            report.placed.append((up.learner, up.assignment))
        for issue in issues:
            if issue.learner and issue.learner not in learners:
                up = next((u for u in uploads if u.learner == issue.learner), None)
                learners[issue.learner] = {"name": up.name if up else issue.learner,
                                           "lms_id": up.lms_id if up and up.layout == "canvas" else "",
                                           "email": up.email if up else ""}
        for lid, info in learners.items():
            attrs = {k: v for k, v in (("last_name", info["name"]), ("lms_user_id", info["lms_id"]),
                                       ("email", info["email"])) if v}
            gb.update_or_create_student(lid, **attrs)
    save_lms_ids(root, report.lms)
    report.issues = issues
    report.names = {lid: info["name"] for lid, info in learners.items()}
    return report


def _record(root: Path, report: Report) -> list[Issue]:
    """Keep the issues of earlier runs that still hold, add this run's; return all."""
    graded_now = {(o.student, o.assignment) for o in (report.run.outcomes if report.run else []) if o.graded}
    fresh = [i for i in report.issues if i.kind != "duplicate"]  # duplicates are for this run's summary only
    for o in report.failed:
        fresh.append(Issue("autograde_failed", o.student, o.assignment, o.error))
    for o in (report.run.outcomes if report.run else []):
        if o.graded and o.timeouts:
            fresh.append(Issue("timeout", o.student, o.assignment, f"{o.timeouts} セルが制限時間で止められました"))
        if o.limits:
            fresh.append(Issue("sandbox_limit", o.student, o.assignment, ", ".join(o.limits)))
        if o.review:
            fresh.append(Issue("review", o.student, o.assignment, " / ".join(o.review)))
        if o.discarded:
            fresh.append(Issue("gradebook_discarded", o.student, o.assignment, ", ".join(o.discarded)))
        if o.graded and not report.sandbox:
            fresh.append(Issue("no_sandbox", o.student, o.assignment, "受講者のコードが教員の権限で動きました"))
    keys = {(i.kind, i.learner, i.assignment, i.file) for i in fresh}
    replaced = graded_now | {(i.learner, i.assignment) for i in fresh if i.assignment}
    old = load_issues(root)
    # names shared by two ids are worked out again from every upload (a roster may settle them)
    reread = {"same_name", "same_name_distinct"} if report.uploads else set()
    kept = [i for i in old if (i.kind, i.learner, i.assignment, i.file) not in keys and i.kind not in reread
            and not (i.assignment and (i.learner, i.assignment) in replaced)]
    allissues = kept + fresh
    save_issues(root, allissues)
    return allissues


def course_dir(arg: str | None) -> Path:
    """The course (nbgrader_config.py and solutions/): ``--course``, else the current folder
    when it is one, else this repository."""
    if arg:
        d = Path(arg).resolve()
    else:
        cwd = Path.cwd()
        d = cwd if (cwd / _nbgrader.CONFIG).exists() and (cwd / SOURCE_DIR).is_dir() else REPO_ROOT
    if not (d / _nbgrader.CONFIG).exists() or not (d / SOURCE_DIR).is_dir():
        raise GradeError(f"{d} に nbgrader_config.py と {SOURCE_DIR}/ がありません（--course で指定してください）")
    return d


class _Lock:
    """One ``ctxlab grade`` at a time per course root (the gradebook has one writer)."""

    def __init__(self, root: Path):
        self.path = root / ".lock"

    def __enter__(self):
        import fcntl

        self.fh = open(self.path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.fh.close()
            raise GradeError(f"{self.path.parent} では別の ctxlab grade が実行中です") from None
        return self

    def __exit__(self, *exc):
        self.fh.close()


def grade(upload: Path | None, root: Path, course: Path = REPO_ROOT, workers: int | None = None,
          timeout: int | None = None, feedback: bool | None = None, csv_path: Path | None = None,
          force: bool = False, progress: bool = True, config_args: list[str] | None = None,
          assignments: list[str] | None = None, roster: Path | None = None,
          sandbox: bool = True, groups: bool = False, release_answers: bool = False,
          same_class: bool = False, canvas_assignments: list[str] | None = None, caps: Caps | None = None) -> Report:
    """The whole run: course root, intake, parallel autograde with feedback, CSV, LMS files.

    Every kernel runs in the grading sandbox (:mod:`~ctxlab.grading.isolation`); where none
    is available the run is refused, unless ``sandbox`` is False (``--no-sandbox``: the
    summary and the CSV notes say so)."""
    t0 = time.perf_counter()
    if upload is not None and sandbox:
        reason = unavailable_reason()
        if reason:
            raise GradeError(f"採点のサンドボックスが使えません: {reason}。{INSTALL_HINT}")
        with contextlib.suppress(NoLessons):   # the graded build, made once here rather than in a worker's first kernel
            kernel_package(course=course)
    if upload is not None:
        upload = Path(upload)
        if not upload.exists():
            raise GradeError(f"{upload} が見つかりません")
        if upload.is_file() and not zipfile.is_zipfile(upload):
            raise GradeError(f"{upload} は zip でもフォルダでもありません")
    people = read_roster(Path(roster)) if roster else None
    everything = known = all_assignments(course)
    if assignments:
        unknown = [a for a in assignments if a not in known]
        if unknown:
            raise GradeError(f"知らない課題 id: {', '.join(unknown)}（{', '.join(known)}）")
        known = [a for a in known if a in assignments]
    root = Path(root).resolve()
    if upload is not None and upload.resolve().is_relative_to(root / "submitted"):
        # intake replaces root/submitted/LEARNER/ASSIGNMENT with the upload: it would delete what it reads
        raise GradeError(f"{upload} は採点用コースルートの submitted/ の中です。nbgrader collect は別のフォルダに集めてください"
                         "（例: nbgrader collect 00_start_here --CourseDirectory.submitted_directory=collected）")
    root.mkdir(parents=True, exist_ok=True)
    args = [*limits_config_args(isolate=sandbox), *(config_args or [])]
    if timeout:
        args.append(f"--ExecutePreprocessor.timeout={int(timeout)}")
    with _Lock(root):
        if canvas_assignments:   # the Canvas CSV's column header, kept for later runs
            lms_export.save_canvas_assignments(root, canvas_assignments, everything)
        regenerated = sync_course_root(root, known, course)
        if upload is not None:
            report = intake(Path(upload), root, known, force=force, course_assignments=everything, roster=people,
                            groups=groups, same_class=same_class)
            report.sandbox = sandbox
            report.sandbox_tool = sandbox_tool() if sandbox else None
            report.run = grade_parallel(root, report.placed, workers=workers, config_args=args,
                                        feedback=feedback is not False, progress=progress, caps=caps)
            keep_manual_grades(root, report.manual_kept)
            record_feedback(root, {(o.student, o.assignment) for o in report.run.outcomes if o.feedback},
                            auto_only=True)
        else:
            report = Report(root=root)
        if feedback is not False:   # feedback and grades from one state: what changed since is made again
            stale = stale_feedback(root) if feedback is None else None
            if stale is None or stale:
                report.feedback_remade, report.feedback_error = remake_feedback(root, stale, args)
        report.regenerated = regenerated
        issues = _record(root, report)
        report.csv = Path(csv_path) if csv_path else root / "grades.csv"
        report.summary = export_csv(root, report.csv, known, issues)
        report.exports = lms_export.export(root, everything, answer_sheets=lms_export.answer_sheets(course, everything),
                                           release_answers=release_answers)
    report.seconds = time.perf_counter() - t0
    return report


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("submissions", nargs="?", type=Path,
                   help="提出物のフォルダか zip（LMS の一括ダウンロード）。省略すると --export")
    p.add_argument("--root", type=Path, default=Path("grading"),
                   help="採点用のコースルート（既定 grading/、git 管理外）")
    p.add_argument("--course", help="solutions/ と nbgrader_config.py のあるフォルダ（既定: リポジトリ）")
    p.add_argument("--workers", type=int, default=None,
                   help=f"並列に採点する数（既定: CPU 数 = {os.cpu_count()}）")
    p.add_argument("--timeout", type=int, default=None,
                   help="セル 1 つの制限時間（秒、既定は nbgrader_config.py の 120）")
    p.add_argument("--max-seconds", type=int, default=Caps.seconds, help=f"提出 1 件の採点時間の上限（秒、既定 {Caps.seconds}、0 で上限なし。"
                   f"セル {Caps.cells:,} 個・1 冊 {Caps.notebook_mb} MB を超える提出は採点しない）")
    p.add_argument("--assignment", action="append", help="この課題だけ採点する（繰り返し可）")
    p.add_argument("--roster", type=Path,
                   help="名簿 CSV（id, name, email）: LMS の id を人に対応させる（Moodle の id は課題ごとに違う）")
    p.add_argument("--moodle-groups", dest="groups", action="store_true",
                   help="Moodle のグループ提出の課題: フォルダ名の番号をグループ id として読む（参加者 id ではない）")
    p.add_argument("--release-answers", action="store_true",
                   help="締め切りの後に: 正解を含むフィードバック（09 など）も Moodle のフィードバック zip に入れる")
    p.add_argument("--same-class", action="store_true",
                   help="ROOT で採点済みの受講者と一人も重ならない提出も同じクラスとして採点する（既定では別のクラスと"
                        "みなして断ります。クラスごとに --root を分けてください）")
    p.add_argument("--canvas-assignment", action="append", metavar="課題=ID",
                   help="Canvas の課題（繰り返し可）: 00_start_here=12345 か 00_start_here='課題名 (12345)'。成績 CSV の"
                        "列見出しになります（ないと Canvas は同名の課題を探し、なければ新しい課題を作ります）。"
                        "ROOT に記録され、次からは不要")
    p.add_argument("--csv", type=Path, help="成績 CSV の出力先（既定 ROOT/grades.csv）")
    p.add_argument("--no-feedback", dest="feedback", action="store_false",
                   help="フィードバックを作らない（採点と合わないフィードバックは LMS 用の zip に入れない）")
    p.add_argument("--feedback", dest="feedback", action="store_true",
                   help="すべてのフィードバックを作り直す（既定では、採点が変わった提出のものだけを作り直す）")
    p.add_argument("--force", action="store_true", help="前回と同じ提出物も採点し直す")
    p.add_argument("--export", action="store_true", help="採点せず、成績 CSV と LMS 用ファイルを書き直す（手動採点の後など）")
    p.add_argument("--quiet", action="store_true", help="進捗バーを出さない")
    p.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                   help="サンドボックス（bubblewrap）なしで採点する。受講者のコードが教員の権限で、ファイル・鍵・"
                        "ネットワークに届く状態で動きます（要約と CSV に警告が出ます）")
    p.add_argument("--validate", nargs="+", type=Path, metavar="NOTEBOOK",
                   help="採点せず、ノートブックのテストが通るかだけ確かめる（nbgrader validate。失敗があれば終了コード 1）")
    p.set_defaults(feedback=None)


def validate(paths: list[Path], timeout: int | None = None, sandbox: bool = True) -> int:
    """``--validate``: nbgrader's validation (the kernel in the sandbox unless ``sandbox`` is
    False), with an exit code that says whether tests failed."""
    reason = unavailable_reason() if sandbox else None
    if reason:
        raise GradeError(f"採点のサンドボックスが使えません: {reason}。{INSTALL_HINT}")
    if not sandbox:
        print("警告: --no-sandbox: ノートブックのコードを教員の権限で実行します")
    bad = 0
    for path in paths:
        if not path.exists():
            raise GradeError(f"{path} が見つかりません")
        try:
            res = _nbgrader.validate(path, timeout, isolate=sandbox)
        except RuntimeError as exc:
            print(f"{path}: 確かめられませんでした: {exc}")
            bad += 1
            continue
        failed, changed, typed = res.get("failed", []), res.get("changed", []), res.get("type_changed", [])
        if not (failed or changed or typed):
            print(f"{path}: OK（公開テストはすべて通ります）")
            continue
        bad += 1
        if typed or changed:
            print(f"{path}: 編集してはいけないセルが変更されています（{len(typed) + len(changed)} セル）")
        for cell in failed:
            first = cell["source"].strip().split("\n")[0][:80]
            raw = re.sub(r"\x1b\[[0-9;]*m", "", cell.get("raw_error") or "").strip()
            last = raw.split("\n")[-1][:160]
            print(f"{path}: 失敗: {first} … → {last}")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    if args.validate:
        return validate(args.validate, args.timeout, sandbox=args.sandbox)
    if args.submissions is None and not args.export:
        raise GradeError("提出物のフォルダか zip を指定してください（CSV だけ書き直すときは --export）")
    if args.workers is not None and args.workers < 1:
        raise GradeError("--workers は 1 以上にしてください")
    report = grade(None if args.export else args.submissions, args.root, course_dir(args.course),
                   workers=args.workers, timeout=args.timeout, feedback=args.feedback, csv_path=args.csv,
                   force=args.force, progress=not args.quiet, assignments=args.assignment, roster=args.roster,
                   sandbox=args.sandbox, groups=args.groups, release_answers=args.release_answers,
                   same_class=args.same_class, canvas_assignments=args.canvas_assignment,
                   caps=Caps(seconds=max(0, args.max_seconds)))
    print(format_summary(report))
    reasons = exit_reasons(report)
    if reasons:
        print(f"終了コード 1: {'、'.join(reasons)}（詳しくは上の要約と grades.csv の notes 列）")
    return 1 if reasons else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ctxlab grade")
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except GradeError as exc:
        print(f"ctxlab grade: エラー: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
