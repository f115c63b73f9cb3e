"""``export --redact`` end to end: task ids made from a task id holding a secret are masked, stay
unique and are the same every time, so ``--append --redact`` adds nothing twice."""

from __future__ import annotations

from pathlib import Path

from reviewer.export.run import export_tasks
from reviewer.export.select import Selection
from reviewer.store.labels import add_label
from tests.export.conftest import BuildDb, Spec, read_lines

KEY = "sk-" + "ant-" + "fake-" + "x" * 40


def test_task_ids_built_from_a_secret_task_id_are_redacted_unique_and_stable(
    tmp_path: Path, build_db: BuildDb
) -> None:
    tasks = ["refund ana@example.com", "refund bob@example.com", f"use {KEY} now"]
    db, ids = build_db([Spec(t) for t in tasks])
    for tid in ids:
        add_label(db, tid, "ana", "fail", note="mail ana@example.com")
    out = tmp_path / "t.jsonl"
    summary = export_tasks(db, Selection(), out, redact=True)
    text = out.read_text(encoding="utf-8")
    for leak in ("ana@example.com", "bob@example.com", "ana_example", "bob_example", KEY[:12]):
        assert leak not in text and leak not in str(summary.to_json())
    records = read_lines(out)
    task_ids = [r["id"] for r in records]
    assert summary.ids == task_ids and len(set(task_ids)) == 3
    assert [i.rsplit("-", 1)[0] for i in task_ids] == [
        "refund_redacted_email",
        "refund_redacted_email",
        "use_redacted_api-key_now",
    ]
    assert [r["provenance"]["task_id"] for r in records] == [
        "refund <redacted:email>",
        "refund <redacted:email>",
        "use <redacted:api-key> now",
    ]
    # the email of a task id, its note and its expected text count once per task
    assert summary.redacted == {"api key": 1, "email": 4}

    again = tmp_path / "again.jsonl"
    export_tasks(db, Selection(), again, redact=True)
    assert again.read_bytes() == out.read_bytes()
    appended = export_tasks(db, Selection(), out, append=True, redact=True)
    assert (appended.written, appended.already) == (0, 3)
    assert len(read_lines(out)) == 3


def test_inspect_samples_get_the_redacted_id(tmp_path: Path, build_db: BuildDb) -> None:
    db, ids = build_db([Spec("call +1 415 555 0100")])
    add_label(db, ids[0], "ana", "fail")
    export_tasks(db, Selection(), tmp_path / "i.jsonl", "inspect", redact=True)
    (sample,) = read_lines(tmp_path / "i.jsonl")
    assert sample["id"].startswith("call_redacted_phone-number-")
    assert "555 0100" not in (tmp_path / "i.jsonl").read_text(encoding="utf-8")


def test_a_secret_in_the_run_name_metadata_or_a_note_never_reaches_the_file(
    tmp_path: Path, build_db: BuildDb
) -> None:
    """Issue 27: a run named ``prod-sk-ant-...`` (a key after a hyphen), a metadata value under
    ``api_key`` and a note with ``PGPASSWORD=``, ``mysql -p`` and ``curl -u`` were exported as
    they were."""
    secrets = {
        "run key": KEY[7:],
        "metadata key": "f4kef4kef4kef4ke",
        "pgpassword": "Hunter2Secret",
        "mysql": "S3cretPw99",
        "curl": "Pa55word1",
    }
    extra = {"metadata": {"api_key": secrets["metadata key"], "prompt": "v1"}}
    db, ids = build_db([Spec("t1", extra=extra)], run=f"prod-{KEY}")
    add_label(
        db,
        ids[0],
        "ana",
        "fail",
        note=f"PGPASSWORD={secrets['pgpassword']} psql; mysql -u root -p{secrets['mysql']} shop; "
        f"curl -u bob:{secrets['curl']} https://api.example.com",
    )
    for fmt, name in (("native", "n.jsonl"), ("inspect", "i.jsonl")):
        summary = export_tasks(db, Selection(), tmp_path / name, fmt, redact=True)
        text = (tmp_path / name).read_text(encoding="utf-8")
        shown = "\n".join(summary.lines()) + str(summary.to_json())
        for what, secret in secrets.items():
            assert secret not in text and secret not in shown, what
    (record,) = read_lines(tmp_path / "n.jsonl")
    assert record["provenance"]["run"] == "prod-<redacted:api-key>"
    assert record["provenance"]["metadata"] == {"api_key": "<redacted:credential>", "prompt": "v1"}
    assert summary.redacted == {"api key": 1, "credential": 2, "password": 2}
