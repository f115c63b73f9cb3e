"""Odd members and fields of Inspect logs: a header that is not an object, an epoch that is not a
whole number, fields of the wrong type. Each is one line naming the member (an ``.eval`` archive
has no lines) or the sample, never an exception; the other samples are imported."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import inspect_sample, run_cli, stored


def _eval(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def _err_lines(err: str, f: Path) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(str(f))]


@pytest.mark.parametrize("header", ["[1, 2]", '"x"', "null", "5"])
def test_an_eval_header_json_that_is_not_an_object_is_a_warning_and_samples_import(
    tmp_path: Path, header: str
) -> None:
    f = _eval(
        tmp_path / "x.eval",
        {"header.json": header, "samples/1_epoch_1.json": json.dumps(inspect_sample(1))},
    )
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "AttributeError" not in err, err
        assert _err_lines(err, f) == [f"{f}: header.json: not a JSON object"], err
    assert code == 0 and stored() == 1


def test_eval_skip_lines_name_the_member_not_its_index(tmp_path: Path) -> None:
    f = _eval(
        tmp_path / "archive.eval",
        {
            "header.json": json.dumps({"eval": {"task": "t", "model": "m"}}),
            "samples/1_epoch_1.json": json.dumps(inspect_sample(1)),
            "samples/2_epoch_1.json": json.dumps(inspect_sample(2)),
            "samples/3_epoch_1.json": json.dumps(inspect_sample(3)),
            "samples/4_epoch_1.json": json.dumps(
                inspect_sample(4, model_usage={"m": {"input_tokens": 1, "total_cost": 1.7e308}})
            ),
            "samples/1_epoch_1_copy.json": json.dumps(inspect_sample(1)),
        },
    )
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert _err_lines(err, f) == [
            f"{f}: samples/4_epoch_1.json: usage.cost_usd: 1.7e+308 is out of range (at most 1e12)",
            f"{f}: samples/1_epoch_1_copy.json: repeats the trial at samples/1_epoch_1.json",
        ], err
    assert stored() == 3


@pytest.mark.parametrize("epoch", ["1e300", '"1"', "1.5", "-1", "true"])
def test_an_eval_sample_with_epoch_1e300_is_a_skip_and_the_real_epoch_1_imports(
    tmp_path: Path, epoch: str
) -> None:
    odd = json.dumps(inspect_sample(2)).replace('"epoch": 1', f'"epoch": {epoch}')
    f = _eval(
        tmp_path / "x.eval",
        {
            "header.json": json.dumps({"eval": {"task": "t", "model": "m"}}),
            "samples/2_epoch_9.json": odd,  # read first: it must not take trial 1
            "samples/2_epoch_1.json": json.dumps(inspect_sample(2)),
        },
    )
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    said = _err_lines(err, f)
    assert len(said) == 1 and said[0].startswith(f"{f}: samples/2_epoch_9.json: epoch "), err
    assert "is not a whole number" in said[0]
    assert code == 0 and stored() == 1


ODD_FIELDS = {
    "scores a string": ({"scores": "C"}, "no score"),
    "messages a dict": ({"messages": {"a": 1}}, "no messages list"),
    "epoch a string": ({"epoch": "one"}, "epoch 'one' is not a whole number"),
    "epoch 1e300": ({"epoch": 1e300}, "epoch 1e+300 is not a whole number"),
    "tool_calls a number": (
        {"messages": [{"role": "assistant", "content": "", "tool_calls": 5}]},
        "malformed messages",
    ),
    "sample a list": (None, "not a JSON object (list)"),
}


@pytest.mark.parametrize("case", list(ODD_FIELDS))
@pytest.mark.parametrize("kind", ["eval", "json"])
def test_odd_typed_inspect_fields_are_a_skip_naming_the_sample(
    tmp_path: Path, case: str, kind: str
) -> None:
    extra, reason = ODD_FIELDS[case]
    bad: Any = [1, 2] if extra is None else inspect_sample(2, **extra)
    samples = [inspect_sample(1), bad, inspect_sample(3)]
    if kind == "eval":
        members = {f"samples/{i}_epoch_1.json": json.dumps(s) for i, s in enumerate(samples, 1)}
        members["header.json"] = json.dumps({"eval": {"task": "t", "model": "m"}})
        f = _eval(tmp_path / "x.eval", members)
        where = f"{f}: samples/2_epoch_1.json: "
    else:
        doc = {"version": 2, "status": "success", "eval": {"task": "t"}, "samples": samples}
        f = tmp_path / "x.json"
        f.write_text(json.dumps(doc))
        where = f"{f}: sample 2: "  # the sample, not a line: the document is read whole
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "Traceback" not in err, err
        said = _err_lines(err, f)
        assert len(said) == 1 and said[0].startswith(where) and reason in said[0], err
    assert code == 0 and stored() == 2
