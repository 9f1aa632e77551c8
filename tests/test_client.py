"""make_client(): the mode switch, .env support, and the offline client without a network."""
from __future__ import annotations

import socket

import anthropic
import pytest

import ctxlab.api.client as cc
from ctxlab import estimate
from ctxlab.api import tokens
from ctxlab.api.client import get_sandbox, is_offline, make_client, mode_line
from ctxlab.costs import pricing
from ctxlab.sandbox import ANSWER_MARKER, Sandbox

FAKE_KEY = "fake-test-key-0123456789-do-not-print"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    """No key, no grading, no forced mode; cwd and 'repo root' are an empty temp folder."""
    for name in ("ANTHROPIC_API_KEY", "NBGRADER_EXECUTION", "CTXLAB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CTXLAB_TIME_SCALE", "0")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cc, "REPO_ROOT", tmp_path)


def test_no_key_means_offline_sandbox():
    client = make_client()
    assert isinstance(client, anthropic.Anthropic)
    assert is_offline(client)
    assert str(client.base_url).rstrip("/") == "http://sandbox.local"
    assert client.max_retries == 0
    assert mode_line(client).startswith("モード: オフライン sandbox（API キー不要・料金は発生しません）")
    assert mode_line() == mode_line(client)


def test_key_in_environment_means_real_api(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    client = make_client()
    assert isinstance(client, anthropic.Anthropic)
    assert not is_offline(client) and get_sandbox(client) is None
    assert "sandbox.local" not in str(client.base_url)
    line = mode_line(client)
    assert line.startswith(f"モード: 実 API（{pricing.DEFAULT_MODEL} など・料金が発生します）")
    assert FAKE_KEY not in line and FAKE_KEY[-8:] not in line
    assert FAKE_KEY not in mode_line()


@pytest.mark.parametrize("setting", ["offline_arg", "CTXLAB_OFFLINE", "NBGRADER_EXECUTION"])
def test_offline_wins_over_a_key(monkeypatch, setting):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    if setting == "offline_arg":
        client = make_client(offline=True)
    else:
        monkeypatch.setenv(setting, "1" if setting == "CTXLAB_OFFLINE" else "autograde")
        client = make_client()
    assert is_offline(client)
    assert "オフライン" in mode_line(client) and FAKE_KEY not in mode_line(client)


def test_grading_is_always_offline_even_with_offline_false(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert is_offline(make_client(offline=False))


def test_offline_false_without_key_says_what_to_do():
    with pytest.raises(RuntimeError, match="ANTHROPIC_API_KEY"):
        make_client(offline=False)


def test_dotenv_in_current_dir_is_used(tmp_path):
    (tmp_path / ".gitignore").write_text("__pycache__/\n.env\n")
    (tmp_path / ".env").write_text(
        "# course settings\nexport OTHER=1\nANTHROPIC_API_KEY='" + FAKE_KEY + "'\n"
    )
    client = make_client()
    assert not is_offline(client)
    assert client.api_key == FAKE_KEY
    line = mode_line(client)
    assert ".env" in line and FAKE_KEY not in line


def test_dotenv_at_repo_root_from_a_lesson_folder(tmp_path, monkeypatch):
    (tmp_path / ".gitignore").write_text(".env\n")
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    lesson = tmp_path / "course" / "03_prompt_caching"
    lesson.mkdir(parents=True)
    monkeypatch.chdir(lesson)
    assert make_client().api_key == FAKE_KEY


def test_dotenv_at_the_top_of_a_learner_kit_from_a_lesson_folder(tmp_path, monkeypatch):
    """A learner kit has no .git and no pyproject.toml; its top folder holds the root marker, the
    .env beside course/ and a .gitignore (tools/learner_bundle.py). Kernels run in course/NN/."""
    kit = tmp_path / "kit" / "ctxlab-learner-graded-0.1.0"
    lesson = kit / "course" / "03_prompt_caching"
    lesson.mkdir(parents=True)
    (kit / ".gitignore").write_text(".env\n")
    (kit / ".env").write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    monkeypatch.setattr(cc, "REPO_ROOT", tmp_path / "site-packages")   # an installed ctxlab: not the kit
    monkeypatch.chdir(lesson)
    assert is_offline(make_client())   # control: without the marker the kit's .env is not found
    (kit / cc.ROOT_MARKER).write_text("# marker\n")
    client = make_client()
    assert client.api_key == FAKE_KEY and ".env" in mode_line(client)


def test_dotenv_not_git_ignored_warns(tmp_path):
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    with pytest.warns(UserWarning, match="gitignore"):
        client = make_client()
    assert not is_offline(client)


def test_dotenv_without_key_stays_offline(tmp_path):
    (tmp_path / ".gitignore").write_text(".env\n")
    (tmp_path / ".env").write_text("CTXLAB_BUDGET_USD=1\n# ANTHROPIC_API_KEY=commented-out\n")
    assert is_offline(make_client())


def test_given_sandbox_is_used_and_default_is_shared():
    sb = Sandbox()
    client = make_client(offline=True, sandbox=sb)
    assert get_sandbox(client) is sb
    client.messages.create(model="claude-opus-5", max_tokens=50, messages=[{"role": "user", "content": "質問"}])
    assert [e.endpoint for e in sb.log] == ["messages"]
    assert get_sandbox(make_client()) is get_sandbox(make_client(offline=True)) is cc.default_sandbox()
    with pytest.raises(TypeError):
        make_client(offline=True, sandbox="not a sandbox")


def test_token_counting_through_the_offline_client():
    client = make_client(offline=True, sandbox=Sandbox())
    text = "年次有給休暇は、入社6か月後に10日付与する。"
    counted = tokens.count_text(text, client)
    assert counted.method == tokens.METHOD_SANDBOX and counted.is_estimate
    assert counted.tokens == estimate.estimate_request({"messages": [{"role": "user", "content": text}]})


def test_offline_client_works_with_network_blocked(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)

    client = make_client(offline=True, sandbox=Sandbox())
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                          "data": "出張の日当は1日3000円とする。宿泊料は1泊12000円を上限とする。"},
           "title": "出張旅費規程", "citations": {"enabled": True}}
    messages = [{"role": "user", "content": [doc, {"type": "text", "text": "日当はいくら？"}]}]
    msg = client.messages.create(model="claude-opus-5", max_tokens=300, messages=messages)
    assert msg.content[0].text.startswith(ANSWER_MARKER)
    assert any(c.cited_text == "出張の日当は1日3000円とする。" for b in msg.content for c in (b.citations or []))
    assert client.messages.count_tokens(model="claude-opus-5", messages=messages).input_tokens > 0
    with client.messages.stream(model="claude-opus-5", max_tokens=300, messages=messages) as s:
        assert "3000円" in "".join(s.text_stream)
