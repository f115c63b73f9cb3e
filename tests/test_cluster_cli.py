"""`reviewer cluster` and `reviewer signatures` end to end, and the store's cluster edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.clusters import (
    cluster_members,
    latest_clusters,
    merge_clusters,
    rename_cluster,
    split_cluster,
)
from tests.conftest import SAMPLE_RUNS


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args), input=input)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def sample_db() -> str:
    code, _, err = invoke("--db", "s.db", "import", str(SAMPLE_RUNS))
    assert code == 0, err
    return "s.db"


def test_signatures_one_per_line_in_order(tmp_path: Path) -> None:
    lines = [
        "Error: order W5521 not found",
        "Error: order #W9912 not found",
        "HTTP 409 Conflict: order W1 already shipped",
        "",
    ]
    code, out, _ = invoke("signatures", "-", input="\n".join(lines) + "\n")
    assert code == 0
    sigs = out.split("\n")[: len(lines)]
    assert len(out.splitlines()) == len(lines)
    assert sigs[0] == sigs[1]
    assert sigs[0] != sigs[2]
    f = tmp_path / "errors.txt"
    f.write_text("\n".join(lines[:3]) + "\n")
    code, out2, _ = invoke("signatures", str(f))
    assert out2.splitlines() == sigs[:3]


def test_cluster_ranks_and_stores(sample_db: str) -> None:
    code, out, err = invoke("--db", sample_db, "cluster", "--json")
    assert code == 0, err
    data = json.loads(out)
    sizes = [c["size"] for c in data["clusters"]]
    assert sizes == sorted(sizes, reverse=True)
    assert sum(sizes) == data["n_failures"] == 22
    assert data["params"]["seed"] == 0
    top = data["clusters"][0]
    assert top["share"] == f"{top['size']} of 22 failures"
    stored = json.loads(invoke("--db", sample_db, "cluster", "--stored", "--json")[1])
    assert stored["clusters"] == data["clusters"]
    again = json.loads(invoke("--db", sample_db, "cluster", "--json")[1])
    assert [c["id"] for c in again["clusters"]] == [c["id"] for c in data["clusters"]]
    code, text, _ = invoke("--db", sample_db, "cluster", "--stored")
    assert code == 0 and "failed trials in" in text and "of 22 failures" in text


def test_cluster_one_run_and_no_failures(sample_db: str, tmp_path: Path) -> None:
    code, out, _ = invoke("--db", sample_db, "cluster", "--run", "support-v1", "--json")
    assert code == 0
    assert json.loads(out)["n_failures"] == 10
    code, _, err = invoke("--db", sample_db, "cluster", "--run", "nope")
    assert code == 1 and "no run named" in err


def test_rename_survives_reclustering_and_merge_split(sample_db: str) -> None:
    invoke("--db", sample_db, "cluster")
    db = open_store(sample_db)
    rows = latest_clusters(db)
    rename_cluster(db, rows[0].id, "Cancelled shipped orders")
    invoke("--db", sample_db, "cluster")
    db = open_store(sample_db)
    rows = latest_clusters(db)
    named = [r for r in rows if r.renamed]
    assert [r.name for r in named] == ["Cancelled shipped orders"]

    a, b = rows[0], rows[1]
    merge_clusters(db, a.id, [b.id])
    merged = {r.id: r for r in latest_clusters(db)}
    assert b.id not in merged and merged[a.id].size == a.size + b.size
    members = cluster_members(db, a.id)
    assert len(members) == a.size + b.size

    ids = split_cluster(db, a.id, [members[: a.size], members[a.size :]], ["first", "second"])
    after = {r.id: r for r in latest_clusters(db)}
    assert after[ids[0]].size == a.size and after[ids[1]].size == b.size
    assert sum(r.size for r in after.values()) == 22


def test_sample_clusters_match_the_generators_failure_modes(sample_db: str) -> None:
    from sklearn.metrics import adjusted_rand_score

    truth_by_run = json.loads((SAMPLE_RUNS / "ground_truth.json").read_text())
    data = json.loads(invoke("--db", sample_db, "cluster", "--json")[1])
    db = open_store(sample_db)
    where = {
        r[0]: (r[1], f"{r[2]}/{r[3]}")
        for r in db.execute("SELECT id, run, task_id, trial FROM trials")
    }
    truth, pred = [], []
    for c in data["clusters"]:
        for tid in cluster_members(db, c["id"]):
            run, key = where[tid]
            truth.append(truth_by_run[run][key])
            pred.append(c["id"])
    assert len(truth) == 22
    assert adjusted_rand_score(truth, pred) > 0.8
    names = " ".join(c["name"] for c in data["clusters"])
    assert "Never cancel an order that has already shipped" in names
