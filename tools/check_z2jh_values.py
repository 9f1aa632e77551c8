"""Check deploy/jupyterhub/z2jh-values.yaml against a Zero to JupyterHub chart, as helm would.

Helm merges the chart's own values.yaml under the file given with -f (maps key by key, any other
value replaces the default, null deletes it) and validates the result with the chart's JSON schema.
This does the same with the chart's jupyterhub/values.schema.yaml (the source of the packaged
values.schema.json), so the file can be checked on a machine without helm or a cluster.

Usage (the chart is not part of this repository: check out the release you deploy):
  git clone -q --depth 1 -b 4.4.0 https://github.com/jupyterhub/zero-to-jupyterhub-k8s /tmp/z2jh-chart
  .venv/bin/python tools/check_z2jh_values.py /tmp/z2jh-chart/jupyterhub [values.yaml]
Prints each schema error with its path and exits 1 if there is any.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
VALUES = ROOT / "deploy" / "jupyterhub" / "z2jh-values.yaml"


def coalesce(defaults: dict, values: dict) -> dict:
    """The chart's defaults with the user's values over them (helm's rule for -f files)."""
    out = copy.deepcopy(defaults)
    for key, value in values.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = coalesce(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def errors(chart: Path, values_file: Path) -> list[str]:
    """Schema errors of values_file merged over the chart's defaults, as 'path: message'."""
    for name in ("values.schema.yaml", "values.yaml"):
        if not (chart / name).is_file():
            raise SystemExit(f"{chart / name} not found: give the chart's folder (jupyterhub/ of the chart's repository)")
    schema = yaml.safe_load((chart / "values.schema.yaml").read_text(encoding="utf-8"))
    merged = coalesce(yaml.safe_load((chart / "values.yaml").read_text(encoding="utf-8")) or {},
                      yaml.safe_load(values_file.read_text(encoding="utf-8")) or {})
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    found = sorted(validator(schema).iter_errors(merged), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in found]


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.split("Usage", 1)[1].strip(), file=sys.stderr)
        return 2
    chart = Path(argv[0])
    values_file = Path(argv[1]) if len(argv) > 1 else VALUES
    found = errors(chart, values_file)
    for line in found:
        print(line)
    print(f"{values_file.name}: {len(found)} schema error(s) against {chart / 'values.schema.yaml'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
