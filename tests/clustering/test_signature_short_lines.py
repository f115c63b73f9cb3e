"""Regression: `reviewer signatures` left `user bob not found` / `user alice not found` /
`user carol not found` unchanged, although words that vary across otherwise equal lines become <*>."""

from __future__ import annotations

from reviewer.clustering.signature import signatures_of_lines


def test_signatures_of_three_short_lines_came_back_unchanged() -> None:
    lines = ["user bob not found", "user alice not found", "user carol not found"]
    assert list(signatures_of_lines(lines)) == ["user <*> not found"] * 3


def test_two_lines_that_differ_in_one_word_stay_apart() -> None:
    lines = ["relation orders does not exist", "relation users does not exist"]
    assert list(signatures_of_lines(lines)) == lines


def test_a_long_word_without_a_zero_takes_linear_time() -> None:
    """`[A-Za-z0-9_]*0[A-Za-z0-9_]*` tried every position of a word with no 0 to its end: a
    200,000-character error line took 47 s (a megabyte, about 20 minutes), in `reviewer
    signatures` and in clustering a failure with such a reason."""
    import time

    start = time.process_time()
    assert list(signatures_of_lines(["x" * 200_000, "sha256 mismatch in utf8 data"]))[1] == (
        "sha256 mismatch in utf8 data"
    )
    assert time.process_time() - start < 10  # 47 s before


def test_signatures_cli_cuts_a_giant_line_and_refuses_a_device(tmp_path: object) -> None:
    """A line of any length was held whole, and /dev/zero (no line end, ever) took all memory."""
    from pathlib import Path

    from click.testing import CliRunner

    from reviewer.cli import cli

    f = Path(str(tmp_path)) / "errors.txt"
    f.write_text("y" * (3 << 20) + "\nuser bob not found\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["signatures", "--stream", str(f)])
    assert r.exit_code == 0
    first, second = r.stdout.splitlines()
    assert len(first) <= 1 << 20 and second == "user bob not found"
    r = CliRunner().invoke(cli, ["signatures", "/dev/zero"])
    assert r.exit_code == 1 and "/dev/zero: a device, not a file of error messages" in r.stderr
