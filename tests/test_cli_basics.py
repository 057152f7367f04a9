"""Bad input to the `agent` command: one clear line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AGENT = Path(sys.executable).with_name("agent")
SECRET = "sk-secret-0123456789abcdefXYZ"


def agent(*args: str, cwd: Path, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    full_env.update(XDG_CONFIG_HOME=str(cwd / "xdg"), NO_COLOR="1", **(env or {}))
    # A narrow terminal: a long error must still come out as one line.
    full_env["COLUMNS"] = "80"
    return subprocess.run([*prefix, str(AGENT), *args], cwd=cwd, env=full_env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error:"), lines[0]
    return lines[0]


@pytest.fixture(autouse=True)
def _have_agent() -> None:
    if not AGENT.exists():
        pytest.skip(f"{AGENT} is not installed (pip install -e .)")


def test_missing_path(tmp_path: Path) -> None:
    proc = agent("port", "no/such/dir", cwd=tmp_path)
    line = one_error_line(proc)
    assert proc.returncode == 1
    assert "no/such/dir" in line and "no such" in line


def test_directory_where_a_file_is_expected(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").mkdir()
    line = one_error_line(agent("trace", "show", "trace.jsonl", cwd=tmp_path))
    assert "trace.jsonl" in line and "cannot read" in line


def test_missing_argument(tmp_path: Path) -> None:
    proc = agent("port", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "Missing" in proc.stderr and "PATH" in proc.stderr.upper()


def test_bad_option_value(tmp_path: Path) -> None:
    (tmp_path / "k.json").write_text("{}")
    proc = agent("port", "k.json", "--jobs", "many", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "jobs" in proc.stderr


def test_unreadable_file(tmp_path: Path) -> None:
    # Root reads any file whatever its mode, so the CLI runs as an unprivileged user here.
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("running as root without setpriv: a mode-000 file stays readable")
        prefix = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
        probe = subprocess.run([*prefix, sys.executable, "-c", "import agent.cli"], capture_output=True, cwd="/")
        if probe.returncode != 0:
            pytest.skip(f"the unprivileged user cannot run this checkout's agent: {probe.stderr.decode()[-200:]}")
    work = Path(tempfile.mkdtemp(prefix="agent-cli-"))
    try:
        work.chmod(0o755)
        secret = work / "trace.jsonl"
        secret.write_text("{}\n")
        secret.chmod(0o000)
        proc = agent("trace", "show", "trace.jsonl", cwd=work, prefix=prefix)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "trace.jsonl" in proc.stderr and ("Permission denied" in proc.stderr or "not readable" in proc.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_bad_config_value_in_toml(tmp_path: Path) -> None:
    (tmp_path / "agent.toml").write_text('sandbox = "vm"\n')
    line = one_error_line(agent("config", "show", cwd=tmp_path))
    assert "sandbox" in line and "agent.toml" in line


def test_bad_nested_config_value_in_toml(tmp_path: Path) -> None:
    (tmp_path / "agent.toml").write_text("[budgets]\nmax_iters = 0\n")
    line = one_error_line(agent("config", "show", cwd=tmp_path))
    assert "budgets.max_iters" in line


def test_bad_config_value_in_env(tmp_path: Path) -> None:
    line = one_error_line(agent("config", "show", cwd=tmp_path, env={"AGENT_JOBS": "many"}))
    assert "jobs" in line and "environment" in line


def test_bad_llm_spec_in_env(tmp_path: Path) -> None:
    line = one_error_line(agent("config", "show", cwd=tmp_path, env={"AGENT_LLM": "gemini:pro"}))
    assert "llm" in line and "gemini" in line


def test_toml_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "agent.toml").write_text("sandbox = \n")
    line = one_error_line(agent("config", "show", cwd=tmp_path))
    assert "agent.toml" in line and "line 1" in line


def test_config_show_masks_secrets(tmp_path: Path) -> None:
    proc = agent("config", "show", cwd=tmp_path, env={"AGENT_OPENAI_API_KEY": SECRET, "AGENT_LLM": "openai:gpt-4o"})
    assert proc.returncode == 0, proc.stderr
    assert "openai_api_key" in proc.stdout
    assert SECRET not in proc.stdout + proc.stderr
    assert SECRET[8:] not in proc.stdout + proc.stderr  # not even its tail
    assert "openai:gpt-4o" in proc.stdout


def test_config_show_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "agent.toml").write_text("jobs = 3\n")
    proc = agent("config", "show", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "agent.toml" in proc.stdout and "jobs = 3" in proc.stdout


def test_config_show_prints_toml_that_reads_back_into_the_same_settings(tmp_path: Path, monkeypatch) -> None:
    import tomllib

    from agent.configuration import Settings

    (tmp_path / "agent.toml").write_text('jobs = 3\n[budgets]\nmax_iters = 2\n[prices."gpt-4.1"]\n'
                                         'input_per_mtok = 1.5\noutput_per_mtok = 6.0\n')
    proc = agent("config", "show", cwd=tmp_path, env={"AGENT_OPENAI_API_KEY": SECRET, "AGENT_COMPILER__CXX": "g++-12"})
    assert proc.returncode == 0, proc.stderr
    shown = tomllib.loads(proc.stdout)  # the whole output is TOML, the file list a comment
    assert "# openai_api_key = " in proc.stdout and "openai_api_key" not in shown  # masked, on a comment line
    for key in [k for k in os.environ if k.startswith("AGENT_")]:
        monkeypatch.delenv(key)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no configuration file here nor in XDG_CONFIG_HOME: only what was printed counts
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere))
    expected = Settings(jobs=3, budgets={"max_iters": 2}, compiler={"cxx": "g++-12"},
                        prices={"gpt-4.1": {"input_per_mtok": 1.5, "output_per_mtok": 6.0}})  # a file's table replaces the default one
    assert Settings(**shown) == expected


NOT_BUILT = """
import sys
from agent.commands import tui
from agent.errors import NotBuiltYet

def not_built(*args, **kwargs):
    raise NotBuiltYet("`agent tui` is not built yet")

tui.run = not_built
sys.argv = ["agent", "tui", "--no-start"]
from agent.cli import main
main()
"""


def test_not_built_command_exits_2(tmp_path: Path) -> None:
    # Every command is built by now; the contract for one that is not still holds:
    # a command whose run() raises NotBuiltYet, through the real entry point.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    proc = subprocess.run([sys.executable, "-c", NOT_BUILT], cwd=tmp_path, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    line = one_error_line(proc)
    assert proc.returncode == 2
    assert "`agent tui` is not built yet" in line
