"""A small airline environment that writes native trial records, for the audit's tests: every trial
starts from the same seeded database (independent trials), unless a test carries one trial's
database into another (a planted leak), copies a trial (a planted cache hit) or empties a pass."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.record import trial_from_dict

GREETINGS = ["Sure.", "Happy to help.", "Of course.", "Let me look.", "Certainly."]
CLOSINGS = ["All set.", "Done.", "Anything else?", "Have a good trip.", "That is booked."]


def _code(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(6))


def seed_db(seed: int = 7, users: int = 6) -> dict[str, Any]:
    """The seeded database every fresh trial starts from."""
    rng = random.Random(seed)
    db: dict[str, Any] = {"users": {}, "reservations": {}}
    for u in range(users):
        uid = f"user_{u}_{rng.randrange(1000, 9999)}"
        card = f"card_{rng.randrange(10**6, 10**7)}"
        res = []
        for _ in range(2):
            rid = _code(rng)
            db["reservations"][rid] = {
                "reservation_id": rid,
                "user_id": uid,
                "flights": [f"HAT{rng.randrange(100, 999)}"],
                "payment_history": [{"payment_id": card, "amount": rng.randrange(100, 900)}],
            }
            res.append(rid)
        db["users"][uid] = {"user_id": uid, "payment_methods": [card], "reservations": res}
    return db


@dataclass
class Env:
    db: dict[str, Any]
    rng: random.Random | None = None  # new ids at random; None: tau-bench's fixed "HATHAT"

    def call(self, name: str, args: dict[str, Any]) -> str:
        users, reservations = self.db["users"], self.db["reservations"]
        if name == "get_user_details":
            return json.dumps(users[args["user_id"]])
        if name == "get_reservation_details":
            return json.dumps(reservations[args["reservation_id"]])
        if name == "book_reservation":
            # tau-bench's own rule gives the same id in every fresh environment
            rid = "HATHAT" if self.rng is None else _code(self.rng)
            while rid in reservations:
                rid = rid[:-1] + chr(ord(rid[-1]) + 1)
            user = users[args["user_id"]]
            reservations[rid] = {
                "reservation_id": rid,
                "user_id": user["user_id"],
                "flights": [args["flight"]],
                "payment_history": [{"payment_id": user["payment_methods"][0], "amount": 250}],
            }
            user["reservations"].append(rid)
            return json.dumps(reservations[rid])
        if name == "cancel_reservation":
            r = reservations[args["reservation_id"]]
            r["status"] = "cancelled"
            return json.dumps(r)  # echoes seeded flights and payment ids the trial never read
        raise KeyError(name)


@dataclass
class Sim:
    """Generates a run of ``tasks`` × ``trials``; plant problems with the methods before ``records``."""

    seed: int = 0
    tasks: int = 12
    trials: int = 4
    run: str = "sim"
    leaks: list[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=list)
    copies: list[tuple[str, int, int, str]] = field(default_factory=list)
    hollow: list[tuple[str, int, str]] = field(default_factory=list)
    skill: dict[str, float] = field(default_factory=dict)  # a task's pass chance, else random
    random_ids: bool = False  # bookings get random ids instead of tau-bench's fixed HATHAT

    def plant_leak(self, creator: tuple[str, int], viewer: tuple[str, int]) -> None:
        """``viewer`` starts from the database ``creator`` left (both must be booking tasks)."""
        self.leaks.append((creator, viewer))

    def plant_copy(self, task: str, source: int, copy_: int, how: str = "assistant") -> None:
        """Trial ``copy_`` repeats ``source``: its every message ("assistant") or its tool
        results, latency and tokens with new wording ("replay")."""
        self.copies.append((task, source, copy_, how))

    def plant_hollow(self, task: str, trial: int, how: str) -> None:
        """Trial passes with ``how``: "empty" final turn, "silent" (no assistant turn), "no_tools"."""
        self.hollow.append((task, trial, how))

    def task_ids(self) -> list[str]:
        return [f"task_{i:02d}" for i in range(self.tasks)]

    def kind(self, task: str) -> str:
        return ("book", "cancel", "lookup")[int(task[-2:]) % 3]

    def records(self) -> list[dict[str, Any]]:
        rng = random.Random(self.seed)
        seed = seed_db()
        users = sorted(seed["users"])
        envs: dict[tuple[str, int], Env] = {}
        out: dict[tuple[str, int], dict[str, Any]] = {}
        skill = {t: rng.uniform(0.2, 0.95) for t in self.task_ids()} | self.skill
        viewer_of = {v: c for c, v in self.leaks}
        order = [(t, i) for i in range(self.trials) for t in self.task_ids()]
        order.sort(key=lambda x: x in viewer_of)  # creators run first
        for task, trial in order:
            source = viewer_of.get((task, trial))
            env = Env(copy.deepcopy(envs[source].db if source else seed))
            if self.random_ids:
                env.rng = random.Random(f"{self.seed}/{task}/{trial}")
            user = users[int(task[-2:]) % len(users)]
            rec = self._trial(rng, env, task, trial, user, rng.random() < skill[task])
            envs[(task, trial)] = env
            out[(task, trial)] = rec
        for task, src, dst, how in self.copies:
            a, b = out[(task, src)], out[(task, dst)]
            if how == "assistant":
                b["messages"] = copy.deepcopy(a["messages"])
            else:
                for mb, ma in zip(b["messages"], a["messages"], strict=True):
                    if mb["role"] == "tool":
                        mb["content"] = ma["content"]
                b["latency_s"], b["usage"] = a["latency_s"], copy.deepcopy(a["usage"])
        for task, trial, how in self.hollow:
            rec = out[(task, trial)]
            rec["outcome"] = {"passed": True}
            if how == "empty":
                rec["messages"][-1] = {"role": "assistant", "content": "  "}
            elif how == "silent":
                rec["messages"] = [m for m in rec["messages"] if m["role"] in ("system", "user")]
            else:
                rec["messages"] = rec["messages"][:2] + [
                    {"role": "assistant", "content": "Done, all handled."}
                ]
        return [out[(t, i)] for t in self.task_ids() for i in range(self.trials)]

    def _trial(
        self, rng: random.Random, env: Env, task: str, trial: int, user: str, passed: bool
    ) -> dict[str, Any]:
        msgs: list[dict[str, Any]] = [
            {"role": "system", "content": "You are an airline agent. Policy v3."},
            {"role": "user", "content": f"Hi, I am {user}."},
        ]
        n = 0

        def call(name: str, args: dict[str, Any], say: str = "") -> dict[str, Any]:
            nonlocal n
            n += 1
            cid = f"c{n}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": say,
                    "tool_calls": [{"id": cid, "name": name, "arguments": args}],
                }
            )
            result = env.call(name, args)
            msgs.append({"role": "tool", "tool_call_id": cid, "name": name, "content": result})
            return dict(json.loads(result))

        details = call("get_user_details", {"user_id": user}, rng.choice(GREETINGS))
        kind = self.kind(task)
        if kind == "book":
            call("book_reservation", {"user_id": user, "flight": f"HAT{100 + int(task[-2:])}"})
        elif kind == "cancel":
            call("cancel_reservation", {"reservation_id": details["reservations"][0]})
        else:
            call("get_reservation_details", {"reservation_id": details["reservations"][-1]})
        msgs.append(
            {
                "role": "assistant",
                "content": f"{rng.choice(CLOSINGS)} I compared {rng.randrange(2, 400)} fares.",
            }
        )
        return {
            "run": self.run,
            "task_id": task,
            "trial": trial,
            "outcome": {"passed": passed},
            "messages": msgs,
            "latency_s": round(rng.uniform(3, 60), 3),
            "usage": {"input_tokens": rng.randrange(1000, 9000), "output_tokens": 200},
        }


def digests(records: list[dict[str, Any]]) -> list[Any]:
    """Each record as the audit reads it, with its (run, task, trial) as its id."""
    from reviewer.metrics.audit_trial import digest_trial

    out = []
    for rec in records:
        trial = trial_from_dict(rec)
        out.append(digest_trial(f"{rec['task_id']}#{rec['trial']}", trial))
    return out


def audit(records: list[dict[str, Any]], run: str = "sim") -> Any:
    """The run's audit, fed in two passes task by task as the workflow does."""
    from reviewer.metrics.audit import RunAuditor, TrialRef

    auditor = RunAuditor(run)
    by_task: dict[str, list[Any]] = {}
    for d in digests(records):
        by_task.setdefault(d.task_id, []).append(d)
    for ds in by_task.values():
        for d in sorted(ds, key=lambda d: d.trial):
            auditor.add_created(
                TrialRef.of(d), {v: (c.message, c.tool) for v, c in d.created.items()}
            )
    for ds in by_task.values():
        auditor.add_task(ds)
    return auditor.finish()


def planted(path: Path) -> Path:
    """A JSONL run of 9 tasks x 4 trials with one leak, one copy and one hollow pass planted."""
    from tests.conftest import write_jsonl

    sim = Sim(seed=3, tasks=9, trials=4, random_ids=True, skill={"task_05": 1.0})
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_copy("task_01", 0, 3)
    sim.plant_hollow("task_05", 1, "no_tools")
    return write_jsonl(path, sim.records())


def shared_records(n: int, users: int = 10, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` trials (4 a task) run round by round through ONE environment never reset: each trial
    looks up its user, whose reservations hold every earlier trial's booking for that user, then
    books one (the case that gave a million leak findings before they were grouped and capped)."""
    rng = random.Random(seed)
    names = [f"user_{u}_{rng.randrange(1000, 9999)}" for u in range(users)]
    booked: dict[str, list[str]] = {u: [] for u in names}
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for trial in range(4):
        for task in range(n // 4):
            user = names[task % users]
            new = _code(rng)
            held = list(booked[user])
            booked[user].append(new)
            msgs: list[dict[str, Any]] = [
                {"role": "system", "content": "You are an airline agent."},
                {"role": "user", "content": f"I am {user}; book me a flight."},
            ]
            for cid, name, args, result in (
                ("c1", "get_user_details", {"user_id": user}, {"reservations": held}),
                ("c2", "book_reservation", {"user_id": user}, {"reservation_id": new}),
            ):
                msgs.append(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": cid, "name": name, "arguments": args}],
                    }
                )
                msgs.append(
                    {
                        "role": "tool",
                        "tool_call_id": cid,
                        "name": name,
                        "content": json.dumps(result),
                    }
                )
            msgs.append({"role": "assistant", "content": f"Booked {new}."})
            out[(task, trial)] = {
                "run": "shared",
                "task_id": f"task_{task:04d}",
                "trial": trial,
                "outcome": {"passed": rng.random() < 0.6},
                "messages": msgs,
            }
    return [out[k] for k in sorted(out)]
