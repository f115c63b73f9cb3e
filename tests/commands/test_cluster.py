"""`reviewer cluster` and `reviewer signatures` end to end, and the store's cluster edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.clusters import cluster_members, latest_clusters, rename_cluster
from reviewer.workflows import clusters as jobs
from tests.conftest import FIXTURES, REPO, SAMPLE_RUNS, sample_copy


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args), input=input)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def sample_db() -> str:
    sample_copy("s.db")
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
    assert code == 2 and "no run named" in err  # a usage error


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
    jobs.merge(db, [a.id, b.id])
    merged = {r.id: r for r in latest_clusters(db)}
    assert b.id not in merged and merged[a.id].size == a.size + b.size
    members = cluster_members(db, a.id)
    assert len(members) == a.size + b.size

    pieces = jobs.split(db, a.id, into=2)
    after = {r.id: r for r in latest_clusters(db)}
    assert [p.id for p in pieces][0] == a.id and len(pieces) == 2
    assert sum(p.size for p in pieces) == a.size + b.size
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


def clusters_of(db: str) -> list[dict[str, object]]:
    code, out, err = invoke("--db", db, "cluster", "--stored", "--json")
    assert code == 0, err
    clusters: list[dict[str, object]] = json.loads(out)["clusters"]
    return clusters


def refused(db: str, *args: str) -> str:
    """The one line a refused cluster command prints on stderr (exit 1); nothing on stdout, or
    with --json the same line as ``{"error": ...}``."""
    code, out, err = invoke("--db", db, "cluster", *args)
    said = {"error": err.removeprefix("reviewer: ").rstrip("\n")}
    assert code == 1 and (json.loads(out) == said if "--json" in args else out == ""), (
        code,
        out,
        err,
    )
    assert len(err.splitlines()) == 1 and err.startswith("reviewer: ") and "Traceback" not in err
    return err


def an_even_pair(clusters: list[dict[str, object]]) -> tuple[str, str]:
    """Two clusters of the same size, the one that sorts last by id first (the case that used to fail)."""
    by_size: dict[object, list[str]] = {}
    for c in clusters:
        by_size.setdefault(c["size"], []).append(str(c["id"]))
    pair = next(sorted(ids) for ids in by_size.values() if len(ids) >= 2)
    return pair[-1], pair[0]


def test_cluster_merge_text_and_json_and_recluster_after_it(sample_db: str) -> None:
    invoke("--db", sample_db, "cluster")
    before = {c["id"]: c for c in clusters_of(sample_db)}
    keep, other = an_even_pair(list(before.values()))
    code, out, err = invoke("--db", sample_db, "cluster", "merge", keep, other, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["merged"] == [keep, other]
    merged = data["cluster"]
    assert merged["id"] == keep  # equal sizes: the first given keeps its id
    assert merged["size"] == before[keep]["size"] + before[other]["size"]
    after = {c["id"]: c for c in clusters_of(sample_db)}
    assert other not in after and after[keep]["size"] == merged["size"]
    assert sum(int(c["size"]) for c in after.values()) == 22
    # re-clustering after a merge used to fail with UNIQUE constraint failed: clusters.clustering_id, ...
    code, out, err = invoke("--db", sample_db, "cluster", "--json")
    assert code == 0, err
    ids = [c["id"] for c in json.loads(out)["clusters"]]
    assert len(ids) == len(set(ids)) == len(before)

    small, big = sorted(after.values(), key=lambda c: (c["size"], c["id"]))[:: len(after) - 1]
    code, text, err = invoke(
        "--db", sample_db, "cluster", "merge", str(small["id"]), str(big["id"])
    )
    assert code == 0, err
    assert text.splitlines()[0] == f"merged 2 clusters into {big['id']}"  # the biggest keeps its id
    assert f"{big['id']}  " in text.splitlines()[1] and "of 22 failures" in text
    assert invoke("--db", sample_db, "cluster", "--json")[0] == 0


def test_cluster_split_text_json_and_into(sample_db: str) -> None:
    invoke("--db", sample_db, "cluster")
    clusters = clusters_of(sample_db)
    a, b = str(clusters[0]["id"]), str(clusters[1]["id"])
    size = int(clusters[0]["size"]) + int(clusters[1]["size"])
    invoke("--db", sample_db, "cluster", "merge", a, b)
    code, out, err = invoke("--db", sample_db, "cluster", "split", a, "--into", "2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["split"] == a and len(data["clusters"]) == 2
    assert data["clusters"][0]["id"] == a
    assert data["clusters"][0]["size"] >= data["clusters"][1]["size"]
    assert sum(c["size"] for c in data["clusters"]) == size
    part = str(data["clusters"][1]["id"])
    assert part in {str(c["id"]) for c in clusters_of(sample_db)}
    invoke("--db", sample_db, "cluster", "merge", a, part)
    code, text, err = invoke("--db", sample_db, "cluster", "split", a)
    assert code == 0, err
    lines = text.splitlines()
    assert lines[0].startswith(f"split {a} into ") and len(lines) == int(lines[0].split()[3]) + 1
    assert sum(c["size"] for c in clusters_of(sample_db)) == 22


def test_cluster_rename_text_and_json(sample_db: str) -> None:
    invoke("--db", sample_db, "cluster")
    cid = str(clusters_of(sample_db)[2]["id"])
    code, out, err = invoke(
        "--db", sample_db, "cluster", "rename", cid, "  Refunds  [b]wrong[/b] ", "--json"
    )
    assert code == 0, err
    row = json.loads(out)["cluster"]
    assert row["id"] == cid and row["name"] == "Refunds [b]wrong[/b]"
    assert row["generated_name"] != row["name"]
    code, text, _ = invoke("--db", sample_db, "cluster", "rename", cid, "Refunds wrong")
    assert code == 0 and text.splitlines()[0] == f"renamed {cid}" and "Refunds wrong" in text
    invoke("--db", sample_db, "cluster")
    named = [c for c in clusters_of(sample_db) if c["name"] == "Refunds wrong"]
    assert [c["id"] for c in named] == [cid]  # the name stays through re-clustering
    code, out, _ = invoke("--db", sample_db, "cluster", "--json", "rename", cid, "Again")
    assert code == 0 and json.loads(out)["cluster"]["name"] == "Again"


def test_cluster_edits_refuse_in_one_line(sample_db: str) -> None:
    assert "no clustering stored yet" in refused(sample_db, "merge", "a", "b")
    assert "no clustering stored yet" in refused(sample_db, "rename", "a", "x")
    assert "no clustering stored yet" in refused(sample_db, "split", "a")
    invoke("--db", sample_db, "cluster")
    clusters = clusters_of(sample_db)
    first = str(clusters[0]["id"])
    assert "no cluster with id 'nope'" in refused(sample_db, "merge", first, "nope", "--json")
    assert "two or more" in refused(sample_db, "merge", first)
    assert "two or more" in refused(sample_db, "merge", first, first)
    assert "no cluster with id 'nope'" in refused(sample_db, "split", "nope")
    assert "no cluster with id 'nope'" in refused(sample_db, "rename", "nope", "name")
    assert "cannot be empty" in refused(sample_db, "rename", first, "   ")
    assert "at most 200 characters" in refused(sample_db, "rename", first, "x" * 201)
    code, _, err = invoke("--db", sample_db, "cluster", "split", first, "--into", "1")
    assert code == 2 and "--into" in err
    results = [
        invoke("--db", sample_db, "cluster", "split", str(c["id"]))
        for c in clusters
        if int(str(c["size"])) >= 2
    ]
    refusals = [err for code, _, err in results if code != 0]
    assert refusals and all(e.startswith("reviewer: cluster ") for e in refusals)
    assert all(e.endswith(": its trials read alike; nothing to split\n") for e in refusals)
    assert any(code == 0 for code, _, _ in results)  # the others did split
    one = next(c for c in clusters_of(sample_db) if c["size"] == 1)
    assert "has one trial; it cannot be split" in refused(sample_db, "split", str(one["id"]))
    assert sum(c["size"] for c in clusters_of(sample_db)) == 22


def test_the_clusters_page_lists_the_cluster_edits() -> None:
    section = (REPO / "docs" / "clusters.md").read_text(encoding="utf-8")
    for command in ("reviewer cluster merge", "reviewer cluster split", "reviewer cluster rename"):
        assert command in section
        assert invoke(*command.split()[1:], "--help")[0] == 0


def test_trial_list_counts_follow_a_merge_and_a_split(sample_db: str) -> None:
    """Merges and splits change cluster members in place: a cached count must not outlive them."""
    from reviewer.store.trial_list import TrialFilter, count

    code, out, err = invoke("--db", sample_db, "cluster", "--json")
    assert code == 0, err
    first, second = (c["id"] for c in json.loads(out)["clusters"][:2])
    with open_store(sample_db) as db:
        before = count(db, TrialFilter(cluster_id=first))
        assert before == count(db, TrialFilter(cluster_id=first), cached=False)
    code, _, err = invoke("cluster", "merge", first, second, "--db", sample_db)
    assert code == 0, err
    with open_store(sample_db) as db:
        merged = count(db, TrialFilter(cluster_id=first))
        assert merged == count(db, TrialFilter(cluster_id=first), cached=False) > before
    code, _, err = invoke("cluster", "split", first, "--into", "2", "--db", sample_db)
    assert code == 0, err
    with open_store(sample_db) as db:
        after = count(db, TrialFilter(cluster_id=first))
        assert after == count(db, TrialFilter(cluster_id=first), cached=False) < merged


def test_rename_with_bytes_that_are_not_text_is_one_line(sample_db: str) -> None:
    code, out, err = invoke("--db", sample_db, "cluster", "--json")
    assert code == 0, err
    first = json.loads(out)["clusters"][0]["id"]
    code, out, err = invoke("--db", sample_db, "cluster", "rename", first, "\udcff\udcfe", "--json")
    assert code == 1 and json.loads(out) == {"error": err.removeprefix("reviewer: ").strip()}
    assert err.strip() == "reviewer: a cluster name must be text: it holds bytes that are not UTF-8"


def test_cluster_run_of_only_crashed_trials_says_they_were_left_out(tmp_path: Path) -> None:
    """Issue 15: a run whose failures are all infrastructure errors says so, as `report` does."""
    crashed = FIXTURES / "tau_bench" / "deepseek-v3-crashed.json"
    db = str(tmp_path / "c.db")
    assert invoke("--db", db, "import", str(crashed))[0] == 0
    run = open_store(db).execute("SELECT run FROM trials").fetchone()[0]
    code, out, err = invoke("--db", db, "cluster", "--run", run)
    assert code == 0, err
    assert "no failures to cluster" in out
    assert "note: 1 trial ended by an infrastructure error, left out" in out
    data = json.loads(invoke("--db", db, "cluster", "--run", run, "--json")[1])
    assert data["infra_left_out"] == 1 and data["clusters"] == []


def test_signatures_templates_across_lines_unless_streamed() -> None:
    lines = [f"password authentication failed for user {u}" for u in "abcde"] + [
        "deadlock detected"
    ]
    code, out, _ = invoke("signatures", "-", input="\n".join(lines) + "\n")
    assert code == 0
    assert out.splitlines() == ["password authentication failed for user <*>"] * 5 + [
        "deadlock detected"
    ]
    code, out, _ = invoke("signatures", "--stream", "-", input="\n".join(lines) + "\n")
    assert out.splitlines()[0] == "password authentication failed for user a"


# Folded in from tests/test_cluster_attacks.py:
# Regression test: `cluster split ID --into N` with N above half the members cut off single trials,
# which docs/clusters.md says a split never does.


def test_cluster_split_into_more_than_half_the_members_is_refused(sample_db: str) -> None:  # noqa: F811
    invoke("--db", sample_db, "cluster")
    big = max(clusters_of(sample_db), key=lambda c: int(str(c["size"])))
    size = int(str(big["size"]))
    before = len(clusters_of(sample_db))
    assert size >= 4
    code, out, err = invoke("--db", sample_db, "cluster", "split", str(big["id"]), "--into", "50")
    assert code == 1 and out == ""
    assert err == (
        f"reviewer: cannot split cluster {big['id']} of {size} trials into 50 pieces: at most "
        f"{size // 2} keep every piece at 2 trials or more\n"
    )
    assert len(clusters_of(sample_db)) == before  # nothing was split
