"""The console's server starts with production settings (no file watcher, no rerun on save, no full
garbage collection after every script run), and `make dev` turns the development ones back on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {"server.fileWatcherType": "none", "server.runOnSave": False, "runner.postScriptGC": False}
DEVELOPMENT = {"server.fileWatcherType": "auto", "server.runOnSave": True, "runner.postScriptGC": True}


def streamlit_options(names: list[str], tmp_path: Path, *flags: str) -> dict[str, object]:
    """The options as Streamlit resolves them for an app started from the repository's root (its
    .streamlit/config.toml; no user config, no STREAMLIT_* variables), with ``flags`` given on the
    command line as `streamlit run` passes them."""
    code = (
        "import json, sys\n"
        "from streamlit import config\n"
        "from streamlit.web.bootstrap import load_config_options\n"
        "flags = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
        "known = config.get_config_options()\n"
        "assert all(k.lstrip('-') in known for k in flags), flags\n"
        "value = {'true': True, 'false': False}\n"
        "load_config_options({k.lstrip('-').replace('.', '_'): value.get(v, v) for k, v in flags.items()})\n"
        f"print(json.dumps({{n: config.get_option(n) for n in {names!r}}}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env["HOME"] = str(tmp_path)  # no ~/.streamlit/config.toml of whoever runs the tests
    out = subprocess.run(
        [sys.executable, "-c", code, *flags], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_config_file_holds_the_production_settings():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    found = {name: config.get(name.split(".")[0], {}).get(name.split(".")[1]) for name in PRODUCTION}
    assert found == PRODUCTION


def test_streamlit_starts_the_app_with_them(tmp_path):
    assert streamlit_options(list(PRODUCTION), tmp_path) == PRODUCTION


def test_make_dev_turns_the_development_settings_back_on(tmp_path):
    script = (ROOT / "scripts" / "demo.sh").read_text()
    flags = re.search(r"dev=\((--[^)]*)\)", script)
    assert flags, "scripts/demo.sh passes the development settings with DEV set"
    given = flags.group(1).split()
    assert dict(zip(given[::2], given[1::2], strict=True)) == {f"--{k}": str(v).lower() for k, v in DEVELOPMENT.items()}
    assert streamlit_options(list(DEVELOPMENT), tmp_path, *given) == DEVELOPMENT
    assert re.search(r"^dev: .*\n\t@DEV=1 scripts/demo.sh$", (ROOT / "Makefile").read_text(), re.M)


def test_the_server_takes_a_plan_file_as_large_as_the_console_does(tmp_path):
    # Found in the browser: the uploaders said "Limit 200MB per file" (Streamlit's default) while a
    # plan may be 256 MiB; a 220 MB plan was refused by the server, not by the console's own check.
    from console.core.limits import MAX_PLAN_BYTES, MAX_PLAN_UPLOAD_MB

    assert MAX_PLAN_UPLOAD_MB * 2**20 == MAX_PLAN_BYTES
    assert streamlit_options(["server.maxUploadSize"], tmp_path) == {"server.maxUploadSize": MAX_PLAN_UPLOAD_MB}
