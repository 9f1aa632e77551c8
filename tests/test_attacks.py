"""Grading that a hostile submission cannot exploit (issue 18), graded as an instructor runs it.

The hostile learners of tests/attacks.py are graded in the class batch of
tests/graded_class.py (``ctxlab grade`` on one LMS export, in parallel, with a fake key in
``.env`` files and in the environment and a listener on 127.0.0.1). The tests read what the
batch left: no key in any output, no score above the honest one, nothing written outside
the submission's own folder, no connection made, no hidden test in any feedback, every
limit holding and reported, every honest learner graded as before (tests/test_grading_e2e.py
checks the honest ones cell by cell in the same batch). Then tests that need no nbgrader run:
a tampered worker gradebook, the refusal without a sandbox, the wall-time limit. Last, one
learner's file as that learner's problem (issue 31): files that once stopped the batch, read
in the class batch; links in a folder export and a submission that stops nbgrader's whole run,
in a small batch of their own; and collect through a local exchange folder.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import warnings
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

import attacks
from ctxlab.errors import GradeError
from ctxlab.grading import isolation, parallel, workflow
from ctxlab.grading.lms import Issue
from ctxlab.grading.report import Report, format_summary
from graded_class import ASSIGNMENTS, ROOT, source
from test_feedback import html_text, secret_lines

NAME = attacks.ASSIGNMENT
pytestmark = pytest.mark.skipif(NAME not in ASSIGNMENTS, reason=f"{NAME} is not in solutions/")


@pytest.fixture(scope="module")
def graded(graded_class):
    return graded_class


def attack_output(graded, learner: str) -> str:
    """The text the attack cell printed in the autograded notebook."""
    nb = nbformat.read(graded["root"] / "autograded" / learner / NAME / f"{NAME}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "ATTACK" in c.source)
    return "\n".join(o.get("text", "") or str(o.get("evalue", "")) for o in cell.outputs)


def every_output_file(graded) -> list[Path]:
    root = graded["root"]
    files = [p for folder in ("autograded", "feedback", "logs") for p in (root / folder).rglob("*") if p.is_file()]
    return files + [root / "grades.csv", root / "issues.json", root / "gradebook.db"]


@pytest.mark.slow
def test_attacks_are_graded_no_higher_than_the_honest_solution(graded):
    sc, rows = graded["scores"], graded["rows"]
    honest = sc[("solution", NAME)]
    for learner in attacks.ATTACKS:
        o = graded["outcomes"][(learner, NAME)]
        assert o.graded and o.feedback, f"{learner}: {o.error or o.feedback_error}"
        s = sc[(learner, NAME)]
        assert not o.discarded, f"{learner}: {o.discarded}"
        if learner in attacks.HELD:
            # it reaches the shell's hooks, forks or imports site: held for review, its tests 0 until then
            assert o.review and s.code_score == 0 and s.needs_manual_grade, (learner, o.review)
            assert s.written_score == honest.written_score
            continue
        assert not o.review, (learner, o.review)
        assert (s.code_score, s.written_score) == (honest.code_score, honest.written_score), learner
        assert float(rows[learner][NAME]) == float(rows["solution"][NAME]), learner
    assert not graded["report"].run.discarded


@pytest.mark.slow
def test_no_key_in_any_output(graded):
    out = attack_output(graded, "atk_env")
    assert "ATTACK key lookup: (None, '')" in out, out[:2000]
    for f in every_output_file(graded):
        assert attacks.FAKE_KEY.encode() not in f.read_bytes(), f"the key is in {f}"
    assert attacks.FAKE_KEY not in format_summary(graded["report"])


@pytest.mark.slow
def test_the_kernel_sees_only_the_interpreter_and_ctxlab(graded):
    out = attack_output(graded, "atk_env")
    repo = re.search(r"ATTACK repo: (\[.*?\])", out)
    assert repo, out[:2000]
    assert set(eval(repo.group(1))) <= {".venv", "ctxlab", "data", "quizzes"}  # noqa: S307 (our own output)
    env = eval(re.search(r"ATTACK env: (\{.*?\})\n", out).group(1))  # noqa: S307
    assert not {"ANTHROPIC_API_KEY", "CTXLAB_INSTRUCTOR_TOKEN"} & set(env)
    assert env["CTXLAB_OFFLINE"] == "1" and env["HOME"].startswith("/tmp/")
    assert ".env" not in out.split("ATTACK repo:")[1]
    assert not re.search(r"ATTACK \.env .* ANTHROPIC", out)


@pytest.mark.slow
def test_gradebooks_are_out_of_reach_and_untouched(graded):
    out = attack_output(graded, "atk_gradebook")
    assert "ATTACK gradebook updated" not in out, out
    found = re.findall(r"ATTACK gradebook (/\S+) ", out)
    # what it can see are read-only files of installed packages (nbgrader's own test fixtures)
    assert all(str(ROOT / ".venv") in p or "site-packages" in p for p in found), found
    assert str(graded["root"]) not in out
    con = sqlite3.connect(graded["root"] / "gradebook.db")
    try:
        assert con.execute("SELECT count(*) FROM grade WHERE extra_credit IS NOT NULL OR manual_score = 99").fetchone() == (0,)
    finally:
        con.close()


@pytest.mark.slow
def test_nothing_is_written_outside_the_submission_folder(graded):
    out = attack_output(graded, "atk_write")
    assert "Read-only file system" in out, out
    root = graded["root"]
    for d in attacks.write_targets(ROOT, root):
        assert not list(d.glob(f"{attacks.MARK}*")), f"written into {d}"
    assert not [p for p in root.parent.rglob(f"{attacks.MARK}*")]
    # its working folder was a private tmpfs: not even its own autograded folder got the files
    assert sorted(p.name for p in (root / "autograded" / "atk_write" / NAME).iterdir()) == [f"{NAME}.ipynb", "timestamp.txt"]


@pytest.mark.slow
def test_no_connection_is_made(graded):
    out = attack_output(graded, "atk_net")
    assert "ATTACK connected" not in out and "Connection refused" in out, out
    assert graded["secrets"].connections == []


@pytest.mark.slow
def test_no_hidden_test_in_any_feedback(graded):
    root = graded["root"]
    release = (root / "course" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8")
    secrets = secret_lines(source(NAME), release)
    assert secrets, "the assignment must have hidden tests"
    out = attack_output(graded, "atk_hidden")
    assert not re.search(r"ATTACK read \S+ [1-9]\d* hidden blocks", out), "a notebook with hidden tests was readable"
    # the kernel does see the hidden tests it runs (nbgrader runs them in it): what it printed
    # is in the autograded notebook, and must not reach the feedback
    autograded = (root / "autograded" / "atk_hidden" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8")
    assert "ATTACK cell:" in autograded
    for fb in (root / "feedback").glob(f"*/{NAME}/{NAME}.html"):
        text = html_text(fb)
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{fb.parent.parent.name}: hidden test lines in the feedback: {leaked[:3]}"


@pytest.mark.slow
def test_limits_hold_inside_the_sandbox_and_are_reported(graded):
    limits = isolation.Limits()
    fork = re.search(r"fork stopped after (\d+) children: \[Errno 11\]", attack_output(graded, "atk_fork"))
    assert fork and int(fork.group(1)) < limits.processes
    memory = attack_output(graded, "atk_memory")
    assert "ATTACK 30 GB: MemoryError" in memory, memory[-800:]
    hog = re.search(r"hog stopped at (\d+) MB: MemoryError", memory)
    assert hog and int(hog.group(1)) <= limits.memory_mb, memory[-800:]
    big = re.findall(r"stopped at (\d+) MB: \[Errno (27|28)\]", attack_output(graded, "atk_bigfile"))
    assert len(big) == 2 and all(int(mb) <= limits.file_mb for mb, _ in big)
    outcomes = graded["outcomes"]
    expect = {"atk_fork": "プロセス数の制限", "atk_memory": "メモリの制限", "atk_bigfile": "ファイルサイズの制限",
              "atk_write": "書き込み禁止", "atk_net": "ネットワーク"}
    text = format_summary(graded["report"])
    for learner, what in expect.items():
        assert any(what in x for x in outcomes[(learner, NAME)].limits), (learner, outcomes[(learner, NAME)].limits)
        line = next(x for x in text.splitlines() if x.strip().startswith(f"- {learner} {NAME}:") and what in x)
        assert line
        assert "サンドボックスが拒否" in graded["rows"][learner]["notes"]
    honest = [k for k, o in outcomes.items() if o.limits and not k[0].startswith("atk_")]
    assert not honest, f"honest submissions reported as hitting the sandbox: {honest}"


# --------------------------------------------------------------------------- no nbgrader run

def test_a_tampered_worker_gradebook_is_not_merged(tmp_path, monkeypatch):
    """What the kernel of an unsandboxed run could do to its worker's gradebook copy: extra
    credit and manual scores everywhere, another learner's rows, an automatic score above
    the maximum. None of it reaches the master; all of it is reported."""
    from nbgrader import api as nbgrader_api
    from sqlalchemy.exc import SAWarning

    from test_grading import _ALEMBIC_HEAD, _gradebook

    monkeypatch.setattr(nbgrader_api, "get_alembic_version", lambda: _ALEMBIC_HEAD)
    master, worker, pristine = tmp_path / "master.db", tmp_path / "worker.db", tmp_path / "pristine.db"
    _gradebook(master, ["honest", "eve"])
    parallel.copy_db(master, pristine)
    parallel.copy_db(master, worker)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{worker}") as gb:
        warnings.simplefilter("ignore", SAWarning)
        gb.find_grade("code", "a1", "a1", "eve").auto_score = 2.0          # what autograde wrote
        gb.find_grade("essay", "a1", "a1", "eve").needs_manual_grade = True
        gb.db.commit()
    con = sqlite3.connect(worker)
    con.execute("UPDATE grade SET extra_credit = 50")                   # every row, the other learner's too
    con.execute("UPDATE grade SET manual_score = 3 WHERE manual_score IS NULL")
    con.execute("UPDATE comment SET manual_comment = 'great'")
    con.commit()
    con.close()
    own, other = parallel.audit(pristine, worker, [("eve", "a1")])
    assert set(own[("eve", "a1")]) == {"grade.extra_credit ×2", "grade.manual_score ×2", "comment.manual_comment ×1"}
    assert other and all("grade" in x or "comment" in x for x in other)
    parallel.merge_gradebook(master, worker, [("eve", "a1")])
    with Gradebook(f"sqlite:///{master}") as gb:
        eve, honest = gb.find_submission("a1", "eve"), gb.find_submission("a1", "honest")
        assert eve.score == 2.0 and honest.score == 0
        for learner in ("eve", "honest"):
            for cell in ("code", "essay"):
                g = gb.find_grade(cell, "a1", "a1", learner)
                assert g.extra_credit is None and g.manual_score is None, (learner, cell)
    # an automatic score above the cell's maximum is reported and clamped
    con = sqlite3.connect(worker)
    con.execute("UPDATE grade SET auto_score = 99 WHERE auto_score = 2.0")
    con.commit()
    con.close()
    own, _ = parallel.audit(pristine, worker, [("eve", "a1")])
    assert any("満点の範囲外" in x for x in own[("eve", "a1")])
    parallel.merge_gradebook(master, worker, [("eve", "a1")])
    with Gradebook(f"sqlite:///{master}") as gb:
        assert gb.find_submission("a1", "eve").code_score == 2.0


def test_grading_is_refused_without_a_sandbox(tmp_path, monkeypatch, capsys):
    from ctxlab import cli

    monkeypatch.setattr(workflow, "unavailable_reason", lambda: "bwrap がありません")
    upload = tmp_path / "export"
    upload.mkdir()
    with pytest.raises(GradeError, match="apt-get install bubblewrap"):
        workflow.grade(upload, tmp_path / "g", course=ROOT, progress=False)
    assert cli.main(["grade", str(upload), "--root", str(tmp_path / "g")]) == 2
    assert "--no-sandbox" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()  # refused before anything was made


def test_no_sandbox_is_said_in_the_summary_and_the_csv_notes(tmp_path):
    report = Report(root=tmp_path, sandbox=False)
    report.run = parallel.GradeRun([parallel.Outcome("alice", NAME, True, feedback=True)], 1, 1.0)
    assert "警告: --no-sandbox" in format_summary(report)
    issues = workflow._record(tmp_path, report)
    assert [i.kind for i in issues] == ["no_sandbox"]
    assert "--no-sandbox" in issues[0].text()  # the CSV notes are the issues' texts
    assert isolation.limits_config_args(isolate=False) == ["--IsolatedKernelManager.isolate=False"]
    assert json.loads((tmp_path / "issues.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # starts a kernel and waits out its 45 s wall-time limit
@pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here")
def test_wall_time_limit_stops_the_kernel(tmp_path):
    """A kernel that outlives its wall-time limit is killed from outside (a learner's code
    cannot catch it), and nbgrader's client sees a dead kernel."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                          "time.sleep(900)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    # long enough for the kernel to start on a loaded machine, far below the cell's own timeout
    km = isolation.IsolatedKernelManager(kernel_name="python3", wall_seconds=45)
    client = NotebookClient(nb, km=km, timeout=600, startup_timeout=40, resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(DeadKernelError):
        client.execute()
    assert not list(tmp_path.iterdir())  # and it left nothing in its folder


def test_issue_kinds_have_words():
    for kind in ("sandbox_limit", "gradebook_discarded", "no_sandbox"):
        assert not Issue(kind, "a", NAME, "x").text().startswith(kind)


# --------------------------------------------------------------------------- one learner's file, one learner's problem

@pytest.mark.slow
def test_files_that_once_stopped_the_batch_are_reported_with_their_learner(graded):
    """Broken nbgrader metadata, a duplicated grade cell, 100,000 nested ``[``, a 51 MB file and
    a name over 255 bytes sit in the class's upload beside the honest learners: each is
    reported at intake with its learner and cause, never reaches nbgrader, and the rest of the
    class is graded (tests/test_grading_e2e.py checks every honest learner)."""
    report, rows = graded["report"], graded["rows"]
    assert graded["breakers"], "the batch must hold the files"
    for learner, (kind, says) in graded["breakers"].items():
        found = [i for i in report.issues if i.learner == learner]
        assert [i.kind for i in found] == [kind], (learner, found)
        assert found[0].assignment == NAME and says in found[0].detail, found[0]
        assert rows[learner][NAME] == "0" and says in rows[learner]["notes"], rows[learner]
        assert (learner, NAME) not in graded["outcomes"]
    assert all(o.graded for k, o in graded["outcomes"].items() if k[0] != "1006"), "only the dying kernel fails"


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """A second small batch, in its own course root: a folder export with symbolic links
    (tests/attacks.py ``link_export``) read by intake, plus a submission that stops nbgrader's
    whole run placed past intake, graded in one worker between two honest learners (full
    solutions); the instructor's ``.env`` holds the fake key. It needs no other fixture, so it
    runs alone too."""
    from ctxlab.grading import _nbgrader

    tmp = tmp_path_factory.mktemp("linked")
    root = tmp / "grading"
    _nbgrader.sync_course_root(root, [NAME], ROOT)
    solution = source(NAME)
    with attacks.Secrets(root) as secrets:
        made = attacks.link_export(tmp / "export", ROOT, secrets.env_files[0], solution)
        report = workflow.intake(tmp / "export", root, [NAME])
        _nbgrader.place_submission(root, "mid_stopper", NAME, _write(tmp / "stopper.ipynb", attacks.stopper(solution)))
        run = parallel.grade_parallel(root, [*report.placed, ("mid_stopper", NAME)], workers=1, progress=False,
                                      config_args=[*isolation.limits_config_args(isolate=True),
                                                   "--ExecutePreprocessor.timeout=30"])
    return {"root": root, "made": made, "report": report, "run": run,
            "outcomes": {o.student: o for o in run.outcomes}, "scores": {s.student: s for s in _nbgrader.scores(root)}}


def _write(path: Path, nb) -> Path:
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_links_in_a_folder_export_are_reported_and_never_followed(linked):
    report, root = linked["report"], linked["root"]
    links = {i.file: i for i in report.issues if i.kind == "link"}
    for learner, rels in linked["made"].items():
        for rel in rels:
            assert rel in links and links[rel].learner == learner, (rel, sorted(links))
    assert sorted(report.placed) == [("eve_secret", NAME), ("zed", NAME)]  # no linked notebook is graded
    assert (root / "submitted" / "eve_secret" / NAME / "timestamp.txt").read_text(encoding="utf-8").startswith("20")
    assert not (root / "submitted" / "eve_secret" / NAME / "submission_secret.txt").exists()
    for f in [p for p in root.rglob("*") if p.is_file() and p != root / ".env"]:  # the instructor's own .env
        assert attacks.FAKE_KEY.encode() not in f.read_bytes(), f"the key is in {f}"
    assert not [p for p in root.rglob("*") if p.is_symlink()]
    mine = linked["scores"]["eve_secret"]   # her own notebook, graded as the full solution it is
    assert mine.code_score == mine.max_code_score
    assert attacks.FAKE_KEY not in format_summary(report)


@pytest.mark.slow
def test_a_submission_that_stops_nbgrader_stops_alone_and_the_worker_grades_the_rest(linked):
    out = linked["outcomes"]
    assert linked["run"].workers == 1
    stopper = out["mid_stopper"]
    assert not stopper.graded and "nbgrader の採点全体が止まりました" in stopper.error and "old version" in stopper.error, stopper
    for learner in ("eve_secret", "zed"):   # before and after it in the same worker
        assert out[learner].graded and out[learner].feedback, out[learner]
        assert linked["scores"][learner].code_score == linked["scores"][learner].max_code_score, learner
    assert "mid_stopper" not in linked["scores"]


@pytest.mark.slow
def test_collect_from_the_exchange_never_follows_a_link(linked, tmp_path):
    """nbgrader's exchange as JupyterHub learners use it: each learner writes their own folder
    into inbound/. The grading root's ``nbgrader collect`` (its nbgrader_config.py) copies the
    honest one and none of the links, and names each link in its log."""
    from ctxlab.grading import _nbgrader
    from ctxlab.grading.parallel import copy_db

    root = tmp_path / "grading"
    root.mkdir()
    shutil.copy(ROOT / _nbgrader.CONFIG, root / _nbgrader.CONFIG)
    copy_db(linked["root"] / "gradebook.db", root / "gradebook.db")  # an existing gradebook: no alembic run
    env = root / ".env"
    env.write_text(f"ANTHROPIC_API_KEY={attacks.FAKE_KEY}\n", encoding="utf-8")
    course = "ctxlab"
    inbound = tmp_path / "exchange" / course / "inbound"
    stamp = "2026-11-30 10:00:00.000000 UTC"
    export = tmp_path / "learners"
    made = attacks.link_export(export, ROOT, env, source(NAME))
    for learner in ("zed", "eve_secret"):
        shutil.copytree(export / learner / NAME, inbound / f"{learner}+{NAME}+{stamp}", symlinks=True)
    for learner in ("eve_sol", "eve_peer"):
        folder = inbound / f"{learner}+{NAME}+{stamp}"
        folder.mkdir()
        (folder / f"{NAME}.ipynb").symlink_to((export / made[learner][0]).readlink())
    (inbound / f"eve_dir+{NAME}+{stamp}").symlink_to(ROOT / "solutions" / NAME, target_is_directory=True)
    proc = _nbgrader.nbgrader(root, "collect", NAME, f"--Exchange.root={tmp_path / 'exchange'}",
                              f"--CourseDirectory.course_id={course}", "--CourseDirectory.submitted_directory=collected",
                              "--CollectApp.check_owner=False")
    collected = root / "collected"
    assert sorted(p.name for p in (collected / "zed" / NAME).iterdir()) == [f"{NAME}.ipynb", "timestamp.txt"]
    assert [p.name for p in (collected / "eve_secret" / NAME).iterdir()] == [f"{NAME}.ipynb"]
    for learner in ("eve_sol", "eve_peer", "eve_dir"):
        assert not list((collected / learner).rglob("*.ipynb")), learner
    for f in [p for p in collected.rglob("*") if p.is_file()]:
        assert attacks.FAKE_KEY.encode() not in f.read_bytes(), f
    log = proc.stdout + proc.stderr
    assert attacks.FAKE_KEY not in log
    for learner in ("eve_secret", "eve_sol", "eve_peer", "eve_dir"):
        assert re.search(rf"Not collected: {learner}\+\S+.* is a symbolic link", log), (learner, log[-2000:])


def _keyring_call(nr: int, *args):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(nr, *args)


def _run_in_kernel(tmp_path: Path, code: str, isolate: bool) -> str:
    """What one cell prints in a kernel run as nbgrader runs it (IsolatedExecute; ``isolate``
    False is ``ctxlab grade --no-sandbox``)."""
    from traitlets.config import Config

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    config = Config({"IsolatedKernelManager": {"isolate": isolate}})
    ep = isolation.IsolatedExecute(config=config, timeout=180, startup_timeout=60)
    ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    return "".join(o.get("text", "") for o in nb.cells[0].outputs)


sandboxed = pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here")


@sandboxed
def test_shared_memory_counts_against_the_memory_limit(tmp_path):
    """Issue 31 item 4: mmap(-1, 3 GB) written in full passed RLIMIT_DATA (a shared mapping is not data)."""
    out = _run_in_kernel(tmp_path, attacks.MMAP, isolate=True)
    assert "ATTACK mmap stopped: OSError [Errno 12] Cannot allocate memory" in out, out


@sandboxed
def test_the_kernels_socket_folder_takes_no_data(tmp_path, monkeypatch):
    """Issue 31 item 4: the kernel's socket folder (/tmp/ctxlab-k-*, on the host's disk) took 250 MB
    past the 128 MB tmpfs limit. Once the kernel is ready it cannot write there at all (as root;
    without root a kernel could give the folder its write bit back), and the folder is removed."""
    folders = []
    original = isolation.IsolatedKernelManager.lock_rundir

    def lock(self):
        folders.append(self._rundir)
        original(self)

    monkeypatch.setattr(isolation.IsolatedKernelManager, "lock_rundir", lock)
    out = _run_in_kernel(tmp_path, attacks.RUNDIR, isolate=True)
    if os.geteuid() == 0:
        assert re.search(r"ATTACK rundir stopped at 0 MB: \[Errno 13\] Permission denied", out), out
    assert len(folders) == 1 and not folders[0].exists()


@sandboxed
def test_output_is_capped_while_it_arrives(tmp_path):
    """Issue 31 item 4: a 1 GB print grew the grader's nbgrader process without bound (outputs are
    kept in memory until the notebook is written). IsolatedExecute keeps at most max_output_chars
    of a cell's output as it arrives and says it dropped the rest."""
    from traitlets.config import Config

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(attacks.FLOOD), nbformat.v4.new_code_cell("print('next')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ep = isolation.IsolatedExecute(config=Config(), timeout=300, startup_timeout=60)
    ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    kept = sum(len(o.get("text", "")) for o in nb.cells[0].outputs)
    assert 100 * 2**20 > ep.max_output_chars
    assert kept <= ep.max_output_chars + len(isolation.STREAM_CAP_NOTE) + 20, kept
    assert any("実行中に" in o.get("text", "") for o in nb.cells[0].outputs)
    assert "next" in nb.cells[1].outputs[0]["text"]      # the next cell is kept as usual


@sandboxed
def test_a_kernel_cannot_start_sessions_of_its_own(tmp_path):
    """Issue 31 item 4: 30 busy processes in sessions of their own slowed an honest learner in another
    worker (the scheduler shares CPU between sessions). The sandbox refuses setsid, so a kernel's
    processes share one session; bench/bench_cpu_share.py measures the effect on an honest kernel."""
    out = _run_in_kernel(tmp_path, attacks.SESSIONS.replace("{seconds}", "1"), isolate=True)
    assert "ATTACK setsid [Errno 1] Operation not permitted" in out, out


@sandboxed
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the attack uses x86_64 system call numbers")
def test_a_kernel_cannot_read_or_add_keys_in_the_graders_keyrings(tmp_path):
    """Issue 31 item 5: a kernel read a secret from the grader's session keyring and added a key
    that outlived grading. The sandbox's seccomp filter makes every keyring call fail (and the
    unshare a root sandbox could use to leave its size limits). The same cell without the
    sandbox reads the secret: the attack is real and the check can fail."""
    import ctypes

    secret_name, secret = f"ctxlab_test_{os.getpid()}".encode(), b"grader-secret-0123"
    key = _keyring_call(248, b"user", secret_name, secret, len(secret), ctypes.c_long(-3))   # add_key to @s
    if key < 0:
        pytest.skip("no session keyring for this process (keyctl denied here)")
    try:
        code = attacks.KEYRING.replace("{secret_name}", secret_name.decode()).replace("{mark}", attacks.MARK)
        out = _run_in_kernel(tmp_path, code, isolate=True)
        assert secret.decode() not in out, out
        for line in [x for x in out.splitlines() if x.startswith("ATTACK")]:
            assert line.endswith("Operation not permitted"), out
        assert out.count("ATTACK") == 7, out
        # nothing was added to the grader's keyrings
        for ring in (-3, -4):
            assert _keyring_call(250, 10, ctypes.c_long(ring), b"user", attacks.MARK.encode(), 0) < 0
        # control: the kernel nbgrader would run without the sandbox reads the secret
        probe = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                 f"k = libc.syscall(250, 10, ctypes.c_long(-3), b'user', {secret_name!r}, 0)\n"
                 "buf = ctypes.create_string_buffer(256)\nlibc.syscall(250, 11, ctypes.c_long(k), buf, 256)\n"
                 "print(buf.value.decode())\n")
        unsandboxed = _run_in_kernel(tmp_path, probe, isolate=False)
        assert secret.decode() in unsandboxed, unsandboxed
    finally:
        _keyring_call(250, 21, ctypes.c_long(key), ctypes.c_long(-3))   # KEYCTL_UNLINK from @s
