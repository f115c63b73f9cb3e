"""Pictures of the main screens at a fixed size (pytest-textual-snapshot); the data is fixed too."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable

from reviewer.calibration.sampling import make_queue
from reviewer.store import open_store
from reviewer.store.trial_list import TrialFilter
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.audit import AuditScreen
from reviewer.tui.screens.bias import BiasScreen
from reviewer.tui.screens.choose_k import ChooseK
from reviewer.tui.screens.cluster_judge import ClusterJudgeScreen
from reviewer.tui.screens.compare import CompareScreen
from reviewer.tui.screens.error import ErrorModal
from reviewer.tui.screens.failures import FailuresScreen
from reviewer.tui.screens.gate import GateScreen
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.import_report import ImportReport
from reviewer.tui.screens.importing import ImportModal
from reviewer.tui.screens.judging import JudgeScreen
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.monitor import MonitorScreen
from reviewer.tui.screens.plan import PlanScreen
from reviewer.tui.screens.queues import QueuesScreen
from reviewer.tui.screens.trials import TrialsScreen
from tests.conftest import SAMPLE_RUNS, sample_copy
from tests.tui.conftest import settle, until

SIZE = (100, 30)


def _frozen(path: Path) -> Path:
    """The import time fixed (the runs screen shows it)."""
    db = open_store(path)
    with db.atomic():
        db.execute("UPDATE runs SET imported_at = '2026-01-05T09:30:00+00:00'")
    db.close()
    return path


@pytest.fixture
def frozen_db(tmp_path: Path) -> Path:
    return _frozen(sample_copy(tmp_path / "snap.db"))


async def _settle(pilot: Pilot[None]) -> None:
    await settle(pilot.app, pilot)


def _sized(table: DataTable[Any]) -> bool:
    """The table is filled and every column is as wide as its widest cell: the table measures its
    cells when idle, so a picture taken just after the rows arrive could cut them."""
    if not table.row_count:
        return False
    for i, column in enumerate(table.ordered_columns):
        widest = max(
            (
                getattr(row[i], "cell_len", 0)
                for row in map(table.get_row_at, range(table.row_count))
            ),
            default=0,
        )
        if column.content_width < widest:
            return False
    return True


def test_runs_screen(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=_settle)


def test_tasks_screen(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    async def go(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)
        await until(pilot, lambda: _sized(pilot.app.screen.query_one("#tasks", DataTable)))
        await pilot.pause()

    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=go)


def test_failing_transcript(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    async def go(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)
        await pilot.press("down", "down", "down", "F")
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)

    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=go)


# One picture per screen module of reviewer/tui/screens/ (runs, tasks and transcript above), each
# opened on the frozen sample at SIZE: the app settles, the screen is pushed, the app settles again.


def _opened(make: Callable[[ReviewerApp], Screen[Any]]) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def go(pilot: Pilot[None]) -> None:
        await settle(pilot.app, pilot)
        pilot.app.push_screen(make(pilot.app))  # type: ignore[arg-type]
        await settle(pilot.app, pilot)

    return go


SCREENS: dict[str, Callable[[ReviewerApp], Screen[Any]]] = {
    "trials": lambda app: TrialsScreen(TrialFilter(), title="All trials"),
    "failures": lambda app: FailuresScreen(),
    "compare": lambda app: CompareScreen("support-v1", "support-v2"),
    "gate": lambda app: GateScreen("support-v2"),
    "plan": lambda app: PlanScreen("support-v2"),
    "queues": lambda app: QueuesScreen(),
    "agreement": lambda app: AgreementScreen(),
    "audit": lambda app: AuditScreen(),
    "bias": lambda app: BiasScreen(),
    "monitor": lambda app: MonitorScreen(),
    "help": lambda app: HelpScreen(app.screen),
    "choose_k": lambda app: ChooseK(5),
    "error": lambda app: ErrorModal("Could not open the database", "a [b]bracket[/b] stays text"),
    "import_report": lambda app: ImportReport(
        ["support-v1.jsonl: 44 trials", "bad.jsonl:3: not JSON"]
    ),
    "importing": lambda app: ImportModal(),
    "judging": lambda app: JudgeScreen(),
    "cluster_judge": lambda app: ClusterJudgeScreen(),
}


#: Screens shown on the sample clustered (unclustered, they only say to cluster first).
CLUSTERED = {"failures", "cluster_judge"}


@pytest.mark.parametrize("name", list(SCREENS))
def test_screen(snap_compare, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    path = sample_copy(
        tmp_path / "snap.db", SAMPLE_RUNS, *(["cluster"] if name in CLUSTERED else [])
    )
    assert snap_compare(
        ReviewerApp(db_path=_frozen(path)), terminal_size=SIZE, run_before=_opened(SCREENS[name])
    )


def test_label_screen(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(frozen_db) as db:
        make_queue(db, "q", 6, seed=1, labeler="ana")

    async def go(pilot: Pilot[None]) -> None:
        await settle(pilot.app, pilot)
        screen = LabelScreen("q", "ana")
        pilot.app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None and screen.state is not None)
        await settle(pilot.app, pilot)

    assert snap_compare(
        ReviewerApp(db_path=frozen_db, labeler="ana"), terminal_size=SIZE, run_before=go
    )
