"""Regression tests for reviewer.toml messages: a date shown as Python's repr, an [import]
pass_threshold error not naming the file, and [monitor] sample refusing 0 that --sample takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reviewer.config import ConfigError, load_config


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "reviewer.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(tmp_path)


def test_config_date_value_says_got_a_date(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "[gate]\nmax_cost_per_task = 1979-05-27T07:32:00Z\n")
    message = str(caught.value)
    assert message.endswith(
        "[gate] max_cost_per_task: must be a number above 0, got a date and time"
    )
    assert "datetime" not in message
    with pytest.raises(ConfigError, match="got a date$"):
        _load(tmp_path, "[gate]\nmax_avg_steps = 1979-05-27\n")


@pytest.mark.parametrize("value", ["0", "1.5", "-1", "1e-07"])
def test_config_import_pass_threshold_error_names_the_file(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"[import]\npass_threshold = {value}\n")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'reviewer.toml'}: [import] pass_threshold {value}: ")
    assert "a reward above 0 and at most 1" in message


def test_config_monitor_sample_0_as_the_cli(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[monitor]\nsample = 0\n")
    assert cfg.monitor["sample"] == 0  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="sample: a share between 0 and 1, got 2"):
        _load(tmp_path, "[monitor]\nsample = 2\n")


HEX = "0x" + "f" * 5000  # TOML hex integers have no size limit (a 20,000-bit integer)


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        (f"[monitor]\nsample = {HEX}\n", "[monitor] sample: must be a finite number"),
        (f"[gate]\nmax_cost_per_task = {HEX}\n", "[gate] max_cost_per_task: must be a finite"),
        (f"[import]\npass_threshold = {HEX}\n", "pass_threshold an integer of 20000 bits: "),
        (f"[monitor]\nseed = {HEX}\n", "[monitor] seed: a whole number of 0 or more (below 2^63)"),
    ],
    ids=["monitor sample", "gate budget", "pass_threshold", "monitor seed"],
)
def test_an_integer_beyond_any_float_is_one_line(tmp_path: Path, toml: str, said: str) -> None:
    """float() of it raised OverflowError and repr() of it ValueError (Python's 4,300-digit
    limit): `reviewer monitor`, `import` and `gate` said 'internal error', exit 70."""
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, toml)
    assert said in str(caught.value)


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        (f"[judge]\nmax_cost = {HEX}\n", "[judge] max_cost must be a number below 2^63"),
        (f"[judge]\nmax_tokens = {HEX}\n", "[judge] max_tokens must be a number below 2^63"),
        (f"[judge]\nmodel = {HEX}\n", "[judge] model must be a string, got an integer of"),
        (
            f"[judge.prices]\nm = {{ input = {HEX}, output = 1 }}\n",
            "prices must be numbers of 0 or more USD per million tokens, got input inf",
        ),
    ],
    ids=["max_cost", "max_tokens", "model", "prices"],
)
def test_a_judge_setting_beyond_any_float_is_one_line(tmp_path: Path, toml: str, said: str) -> None:
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.workflows.judge import load_settings

    cfg = _load(tmp_path, toml)
    with pytest.raises(JudgeConfigError) as caught:
        load_settings(cfg)
    assert said in str(caught.value)


def test_settings_read_the_files_once_and_repeat_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, item 2: one read per process; every job after gets the same Config."""
    import reviewer.config as config_module
    from reviewer.config import ConfigError, Settings, resolve_config

    (tmp_path / "reviewer.toml").write_text('labeler = "ana"\n', encoding="utf-8")
    reads = []
    real = config_module.load_config

    def counted(cwd: Path | None = None) -> Any:
        reads.append(cwd)
        return real(cwd)

    monkeypatch.setattr(config_module, "load_config", counted)
    settings = Settings(tmp_path)
    assert settings.get() is settings.get() and settings.get().labeler == "ana"
    assert resolve_config(settings).labeler == "ana" and len(reads) == 1
    (tmp_path / "reviewer.toml").write_text('labeler = "bo"\n', encoding="utf-8")
    assert settings.get().labeler == "ana"  # read once: an edit is for the next process
    assert resolve_config(None).labeler is None  # no settings given: the defaults, no file read
    broken = Settings(tmp_path / "x")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "reviewer.toml").write_text("labeler = [\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ConfigError, match="reviewer.toml"):
            broken.get()
    assert len(reads) == 2


def test_a_command_that_needs_no_setting_runs_beside_a_broken_config(tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_RUNS, run_cli

    assert run_cli("--db", "x.db", "import", str(SAMPLE_RUNS))[0] == 0
    Path("reviewer.toml").write_text("[judge\n", encoding="utf-8")
    code, _, _ = run_cli("--db", "x.db", "report", "--run", "support-v1")
    assert code == 0
    code, _, err = run_cli("--db", "x.db", "agreement")
    assert code != 0 and err.startswith("reviewer: ") and "reviewer.toml" in err
    assert len(err.splitlines()) == 1


def test_a_config_folder_that_cannot_be_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Path.is_file raises on EACCES (a folder on the way not readable): ConfigError, one line."""
    real = Path.is_file

    def refused(self: Path) -> bool:
        if self.name == "reviewer.toml":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_file", refused)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value).endswith("reviewer.toml: cannot read: Permission denied")


def test_config_monitor_baseline_windows_has_a_maximum(tmp_path: Path) -> None:
    """baseline_windows = 99999999 was taken, and the monitor looped that many times a window."""
    cfg = _load(tmp_path, "[monitor]\nbaseline_windows = 10000\n")
    assert cfg.monitor["baseline_windows"] == 10000  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"\[monitor\] baseline_windows: at most 10,000, got"):
        _load(tmp_path, "[monitor]\nbaseline_windows = 99999999\n")


@pytest.mark.parametrize("value", ["0", "1001", "9223372036854775807", "true", "2.0"])
def test_config_gate_k_out_of_range_names_the_file(tmp_path: Path, value: str) -> None:
    """[gate] k of 1,001 or more passed the file's check and was refused by the gate as 'k must be
    from 1 to 1000, got 1001', naming neither reviewer.toml nor the setting the user never typed."""
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"[gate]\nk = {value}\n")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'reviewer.toml'}: [gate] k: a whole number from 1 to")


def test_config_gate_k_1000_is_taken(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[gate]\nk = 1000\n")
    assert cfg.gate["k"] == 1000  # type: ignore[attr-defined]
