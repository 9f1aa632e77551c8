"""tools/check_z2jh_values.py: helm's merge of a chart's defaults and a values file, then the schema.

The real chart is not in this repository (the tool's docstring says which release to check out);
these tests give it a small chart of their own, with the same kinds of rules the real schema has
(required sections, closed sections, typed keys).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import check_z2jh_values as check  # tools/ (conftest puts it on sys.path)

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "additionalProperties": False,
    "required": ["hub", "cull"],
    "properties": {
        "hub": {"type": "object", "additionalProperties": True},
        "cull": {
            "type": "object",
            "additionalProperties": False,
            "required": ["enabled"],
            "properties": {"enabled": {"type": "boolean"}, "timeout": {"type": ["integer", "null"]}},
        },
    },
}
DEFAULTS = {"hub": {"config": {"JupyterHub": {"authenticator_class": "dummy"}}, "extraEnv": []},
            "cull": {"enabled": True, "timeout": 3600}}


@pytest.fixture()
def chart(tmp_path: Path) -> Path:
    folder = tmp_path / "jupyterhub"
    folder.mkdir()
    (folder / "values.schema.yaml").write_text(yaml.safe_dump(SCHEMA), encoding="utf-8")
    (folder / "values.yaml").write_text(yaml.safe_dump(DEFAULTS), encoding="utf-8")
    return folder


def _values(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_coalesce_merges_maps_replaces_the_rest_and_null_deletes():
    merged = check.coalesce(DEFAULTS, {"hub": {"config": {"JupyterHub": {"load_groups": {"g": {"users": ["a"]}}}},
                                               "extraEnv": [{"name": "X"}]},
                                       "cull": {"timeout": None}})
    assert merged["hub"]["config"]["JupyterHub"] == {"authenticator_class": "dummy",
                                                     "load_groups": {"g": {"users": ["a"]}}}
    assert merged["hub"]["extraEnv"] == [{"name": "X"}], "a list in the values file replaces the default list"
    assert merged["cull"] == {"enabled": True}, "null in the values file deletes the default"
    assert DEFAULTS["cull"] == {"enabled": True, "timeout": 3600}, "the defaults are not changed"


def test_a_file_that_only_adds_allowed_keys_passes(chart, tmp_path):
    values = _values(tmp_path, "hub:\n  services:\n    ctxlab: {url: 'http://ctxlab-grader:8888'}\ncull:\n  timeout: 600\n")
    assert check.errors(chart, values) == []
    assert check.main([str(chart), str(values)]) == 0


def test_unknown_keys_wrong_types_and_deleted_required_keys_are_reported_with_their_path(chart, tmp_path, capsys):
    values = _values(tmp_path, "cull:\n  timout: 600\n  enabled: null\nhubb: {}\n")
    found = check.errors(chart, values)
    assert any(line.startswith("cull:") and "'timout' was unexpected" in line for line in found), found
    assert any(line.startswith("cull:") and "'enabled' is a required property" in line for line in found), found
    assert any(line.startswith("(top level):") and "'hubb' was unexpected" in line for line in found), found
    assert check.main([str(chart), str(values)]) == 1
    assert "3 schema error(s)" in capsys.readouterr().out
    assert check.errors(chart, _values(tmp_path, "cull:\n  timeout: an hour\n")) == [
        "cull.timeout: 'an hour' is not of type 'integer', 'null'"]


def test_a_folder_that_is_not_the_chart_is_refused_with_what_to_give(tmp_path):
    with pytest.raises(SystemExit, match="give the chart's folder"):
        check.errors(tmp_path, check.VALUES)


def test_the_values_file_installs_the_chart_release_it_was_checked_against():
    header = check.VALUES.read_text(encoding="utf-8").split("\n\n", 1)[0]
    installed = re.findall(r"--version (\S+)", header)
    checked = re.findall(r"Checked against chart (\S+)", header) + re.findall(r"clone .*-b (\S+)", header)
    assert "tools/check_z2jh_values.py" in header, "say in the header how the file was checked"
    assert len(installed) == 1 and checked and set(checked) == set(installed), (
        f"helm installs {installed} but the header says the file was checked against {checked}: "
        "check it against the release you install (tools/check_z2jh_values.py) and update both")
