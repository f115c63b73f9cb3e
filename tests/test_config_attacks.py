"""Regression tests for reviewer.toml messages: a date shown as Python's repr, an [import]
pass_threshold error not naming the file, and [monitor] sample refusing 0 that --sample takes."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize("value", ["0", "1.5", "-1"])
def test_config_import_pass_threshold_error_names_the_file(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"[import]\npass_threshold = {value}\n")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'reviewer.toml'}: [import] pass_threshold {value}: ")
    assert "a reward from 0 (not included) to 1" in message


def test_config_monitor_sample_0_as_the_cli(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[monitor]\nsample = 0\n")
    assert cfg.monitor["sample"] == 0  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="sample: a share between 0 and 1, got 2"):
        _load(tmp_path, "[monitor]\nsample = 2\n")
