"""Generate the sample runs in this folder: a retail support agent under two prompt versions on a
50-task eval (support-v1: 7-8 trials a task; support-v2, cheaper but less reliable and breaking the
forbidden rule: 5-6), and with ``--production DIR`` a stream of unscored production conversations.

Deterministic and stdlib only: ``python sample_runs/generate.py`` rewrites every data file next to it.
All prose (system prompts, customer and agent wording, reasons, judge rationales) is in wording.txt.
The failure mode of each failed trial goes to ``ground_truth.json`` only, never into the trials.
The production stream must stay byte for byte what it is (the monitor's example in
docs/ci-and-monitoring.md reads it): what only the eval does is switched on by a trial's own world
(``Convo.style``) and draws nothing in production.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

SEED = 20250614
HERE = Path(__file__).resolve().parent
MODEL = "claude-sonnet-4-5"
RUBRIC = "support-policy@1"
TODAY = date(2025, 6, 14)
#: Input tokens sent on every model call besides the transcript (tool schemas, harness preamble).
OVERHEAD = {"v1": 2900, "v2": 1400}
ALNUM = string.ascii_letters + string.digits

#: The two runs of the eval: run name -> prompt version. Both run the same 50 tasks.
RUNS = {"support-v1": "v1", "support-v2": "v2"}

# The eval: one line per task, "task: <support-v1> | <support-v2>", each side the number of trials
# then the trials that did not simply pass: a failure mode, or "ok+nolookup" (a pass that refunds
# without calling get_order); "+nolookup" on a failure too. The other trials pass. A task is its
# family (the function that writes it) plus a two-digit number; its customer, orders and amounts are
# drawn once per task, so every trial of it (in both runs) sees the same ones. Trial order is shuffled.
PLAN_SRC = """
refund_simple_01: 8 | 6
refund_simple_02: 8 | 6 wrong_refund_amount+nolookup
refund_simple_03: 8 | 6 ok+nolookup
refund_simple_04: 8 | 6 wrong_refund_amount+nolookup ok+nolookup
refund_simple_05: 7 | 6
return_window_01: 8 | 6 hallucinated_policy
return_window_02: 8 hallucinated_policy | 6 hallucinated_policy
return_window_03: 8 | 5
return_window_04: 8 gave_up_transfer gave_up_transfer | 6
refund_partial_01: 8 | 6 wrong_refund_amount
refund_partial_02: 8 wrong_refund_amount | 6
refund_partial_03: 8 | 6 wrong_refund_amount
refund_partial_04: 8 wrong_refund_amount wrong_refund_amount | 6 wrong_refund_amount wrong_refund_amount
damaged_item_refund_01: 8 | 6
damaged_item_refund_02: 8 | 6 hallucinated_policy
damaged_item_refund_03: 8 | 6 wrong_refund_amount
damaged_item_refund_04: 8 | 6
cancel_pending_01: 8 | 6
cancel_pending_02: 8 | 6
cancel_pending_03: 8 tool_timeout | 6 tool_timeout
cancel_pending_04: 8 | 5
cancel_after_ship_01: 8 gave_up_transfer | 6 cancel_shipped cancel_shipped
cancel_after_ship_02: 8 gave_up_transfer hallucinated_policy | 6 cancel_shipped
cancel_after_ship_03: 8 gave_up_transfer gave_up_transfer gave_up_transfer hallucinated_policy \
    tool_timeout hallucinated_policy | 6 cancel_shipped hallucinated_policy tool_timeout
cancel_after_ship_04: 8 | 6 cancel_shipped
cancel_after_ship_05: 8 tool_timeout | 6 cancel_shipped
address_change_01: 8 | 6
address_change_02: 8 tool_timeout tool_timeout | 6 no_identity_check
address_change_03: 8 | 6 no_identity_check
address_change_04: 7 | 6
identity_check_01: 8 no_identity_check no_identity_check no_identity_check | \
    6 no_identity_check no_identity_check
identity_check_02: 8 no_identity_check | 6 no_identity_check no_identity_check
identity_check_03: 8 no_identity_check no_identity_check no_identity_check no_identity_check \
    no_identity_check | 6 no_identity_check no_identity_check
exchange_item_01: 8 | 6
exchange_item_02: 8 | 6 cancel_shipped
exchange_item_03: 8 | 6
exchange_item_04: 8 | 6 cancel_shipped
order_status_01: 8 | 6
order_status_02: 8 | 6 tool_timeout
order_status_03: 8 | 6
order_status_04: 8 | 6
order_status_05: 8 | 5 tool_timeout
multi_order_lookup_01: 8 missed_order | 6 missed_order
multi_order_lookup_02: 8 missed_order missed_order tool_timeout | 6 missed_order tool_timeout
multi_order_lookup_03: 8 | 6 missed_order
multi_order_lookup_04: 7 missed_order missed_order missed_order missed_order tool_timeout \
    missed_order | 6 missed_order
discount_request_01: 8 | 6
discount_request_02: 8 | 6 hallucinated_policy
discount_request_03: 8 gave_up_transfer gave_up_transfer | 6
discount_request_04: 8 | 5 hallucinated_policy
"""

#: Facts a task fixes instead of drawing them: whether the order to exchange has shipped yet (only
#: then can an agent cancel it by mistake), how many items the damaged order holds.
SCENARIOS: dict[str, dict[str, Any]] = {
    "exchange_item_01": {"shipped": False},
    "exchange_item_02": {"shipped": True},
    "exchange_item_03": {"shipped": False},
    "exchange_item_04": {"shipped": True},
    "damaged_item_refund_01": {"items": 1},
    "damaged_item_refund_02": {"items": 2},
    "damaged_item_refund_03": {"items": 2},
    "damaged_item_refund_04": {"items": 1},
}

#: How often the LLM judge gets a trial wrong: harsh on a pass, or lenient on a failure of each mode
#: (most often on the failures that read as good service: a change made, a cancel done, a promise).
JUDGE_WRONG = {
    "ok": 0.09,
    "no_identity_check": 0.5,
    "cancel_shipped": 0.4,
    "hallucinated_policy": 0.45,
    "gave_up_transfer": 0.35,
    "tool_timeout": 0.25,
    "wrong_refund_amount": 0.15,
    "missed_order": 0.15,
}


def parse_plans(src: str) -> dict[str, dict[str, list[str]]]:
    """run -> task -> one entry per trial ("ok", a failure mode, "+nolookup" on either)."""
    plans: dict[str, dict[str, list[str]]] = {run: {} for run in RUNS}
    for line in src.replace("\\\n", " ").splitlines():
        if not line.strip():
            continue
        task, _, sides = line.partition(": ")
        for run, side in zip(RUNS, sides.split(" | "), strict=True):
            n, *odd = side.split()
            plans[run][task] = odd + ["ok"] * (int(n) - len(odd))
    return plans


#: The harness's task list: the first task of every family, then the second, and so on.
FAMILIES = [
    "refund_simple", "refund_partial", "address_change", "cancel_after_ship", "multi_order_lookup",
    "exchange_item", "damaged_item_refund", "order_status", "return_window", "cancel_pending",
    "identity_check", "discount_request",
]  # fmt: skip


def harness_order(task: str) -> tuple[int, int]:
    """Sort key of ``task`` in the task list (the README's walk: the fourth is a cancel_after_ship)."""
    family, number = task.rsplit("_", 1)
    return int(number), FAMILIES.index(family)


def parse_text(src: str) -> dict[str, list[str]]:
    """wording.txt: ``key: variant | variant``; an indented line adds variants to the key above."""
    text: dict[str, list[str]] = {}
    key = ""
    for line in src.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line[0].isspace():
            key, _, line = line.partition(": ")
            text[key] = []
        text[key] += ["" if v.strip() == "-" else v.replace("\\n", "\n") for v in line.split(" | ")]
    return text


PLANS = parse_plans(PLAN_SRC)
TEXT = parse_text((HERE / "wording.txt").read_text(encoding="utf-8"))
POLICY = {v: TEXT[f"policy.{v}"][0] for v in ("v1", "v2")}
FIRST, LAST, DOMAINS = TEXT["vocab.first"], TEXT["vocab.last"], TEXT["vocab.domain"]
STREETS, DAMAGE = TEXT["vocab.street"], TEXT["vocab.damage"]
CITIES = [tuple(c.split(":")) for c in TEXT["vocab.city"]]
ITEMS = [(n, float(p)) for n, p in (x.split(":") for x in TEXT["vocab.item"])]
EXCHANGES = [(n, float(p), a, b) for n, p, a, b in (x.split(":") for x in TEXT["vocab.exchange"])]


def m(x: float) -> str:
    return f"{x:.2f}"


def new_address(rng: random.Random) -> tuple[str, str]:
    city, state, z0 = rng.choice(CITIES)
    zip_ = f"{z0}{rng.randint(10, 99)}"
    return f"{rng.randint(12, 9800)} {rng.choice(STREETS)}, {city}, {state} {zip_}", zip_


#: Style choices that vary from one sample of the model to the next: (old, new) swaps, each set
#: taken or not as a whole.
SWAPS = [
    [("I've", "I have"), ("can't", "cannot"), ("I'm", "I am"), ("I'll", "I will"), ("don't", "do not"),
     ("isn't", "is not"), ("hasn't", "has not"), ("You'll", "You will"), ("you'll", "you will")],
    [(" — ", " - "), ("—", " - ")],
    [("3–5 business days", "3 to 5 business days"), ("3–5 days", "3-5 days")],
    [("Done", "All done"), ("Sorry", "Apologies")],
    [("Thanks", "Thank you"), ("anything else", "anything more")],
    [("refund of", "refund for"), ("original payment method", "card on file")],
]  # fmt: skip
ORDER_ID = re.compile(r"(?<![#\w])W\d{4}\b")


def styles(rng: random.Random) -> dict[str, Any]:
    """One eval trial's style: which swaps it takes, whether it writes order ids as #W1234, and its
    greeting and sign-off (worded by prompt version, drawn by ``Convo``)."""
    return {
        "swaps": [pair for group in SWAPS if rng.random() < 0.5 for pair in group],
        "hash": rng.random() < 0.3,
        "open": "",
        "close": "",
    }


def customer(rng: random.Random) -> dict:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    f, last_ = (s.lower().translate(str.maketrans("áéí", "aei", "'")) for s in (first, last))
    local = rng.choice(["{f}.{l}", "{f}{l}{n}", "{i}{l}", "{f}_{l}", "{l}.{f}{n}"])
    email = local.format(f=f, l=last_, i=f[0], n=rng.randint(1, 99)) + "@" + rng.choice(DOMAINS)
    address, zip_ = new_address(rng)
    cid = f"C-{rng.randint(10000, 99999)}"
    return {
        "customer_id": cid,
        "name": f"{first} {last}",
        "email": email,
        "zip": zip_,
        "address": address,
    }


class Convo:
    """One trial being written: its messages, plus the facts the wording templates refer to."""

    def __init__(
        self,
        rng: random.Random,
        version: str,
        world: random.Random | None = None,
        scenario: dict | None = None,
    ) -> None:
        # rng draws the wording of this trial; world (rng itself in production) draws the facts of
        # the task (customer, orders, amounts), so every trial of an eval task sees the same ones
        self.rng, self.v, self.v1 = rng, version, version == "v1"
        self.w = world or rng
        self.scenario = scenario or {}
        # an eval trial (one with a world of its own) is worded with a style of its own: samples of
        # one model differ in small ways, so no two trials of a task read alike to the byte
        self.style = styles(rng) if world else None
        self.msgs: list[dict] = [{"role": "system", "content": POLICY[version]}]
        self.cust = customer(self.w)
        self.facts: dict = {"name": self.cust["name"].split()[0], "full": self.cust["name"]}
        self.facts.update(email=self.cust["email"], zip=self.cust["zip"])
        if self.style is not None:
            self.style.update(open=self.pick("eval.open"), close=self.pick("eval.close"))
        self.reason = ""
        self.error: dict | None = None
        self.tool_wait = 0.0
        self.typo: str | None = None
        self._ids: set[str] = set()

    def fixed(self, name: str, draw: Callable[[], Any]) -> Any:
        """A fact of the task: the eval's scenario sets it; in production it is drawn."""
        return self.scenario[name] if name in self.scenario else draw()

    def pick(self, key: str, **kw: object) -> str:
        """A random variant of the wording ``key`` for this prompt version, filled in with the facts."""
        options = TEXT.get(f"{key}.{self.v}", TEXT.get(key))
        if options is None:
            if f"{key}.v1" in TEXT or f"{key}.v2" in TEXT:
                return ""
            raise KeyError(key)
        return self.rng.choice(options).format(**{**self.facts, **kw})

    def user(self, key: str, **kw: object) -> None:
        self.msgs.append({"role": "user", "content": self.pick(key, **kw)})

    def say(self, key: str, **kw: object) -> None:
        self.reply(self.pick(key, **kw))

    def reply(self, text: str) -> None:
        self.msgs.append({"role": "assistant", "content": self.styled(text)})

    def styled(self, text: str) -> str:
        """``text`` in this trial's style; the first assistant turn opens with its greeting."""
        if self.style is None:
            return text
        for old, new in self.style["swaps"]:
            text = text.replace(old, new)
        if self.style["hash"]:
            text = ORDER_ID.sub(r"#\g<0>", text)
        if not any(msg["role"] == "assistant" for msg in self.msgs):
            text = (self.style["open"] + " " + text).strip()
        return text

    def sign_off(self) -> None:
        """An eval trial's last assistant words get its sign-off, if it has one."""
        last = next(msg for msg in reversed(self.msgs) if msg["role"] == "assistant")
        if self.style and self.style["close"] and last["content"]:
            last["content"] += self.style["close"]

    def turn(self, user_key: str, say_key: str) -> None:
        self.user(user_key)
        self.say(say_key)

    def end(self, key: str, reason: str = "", tail: bool = False, **kw: object) -> None:
        """The agent's last words, then the outcome reason (``<key>.reason`` unless given)."""
        if key:
            self.say(key, **kw)
        if tail and self.rng.random() < (0.5 if self.v1 else 0.25):
            self.turn("thanks", "bye")
        self.reason = self.pick(reason or f"{key}.reason")

    def call(self, *specs: tuple[str, dict, object], note: str = "") -> None:
        """One assistant turn with tool calls; each spec is (name, args, result), a str result an error."""
        calls, results = [], []
        for name, args, result in specs:
            cid = "toolu_01" + "".join(self.rng.choices(ALNUM, k=22))
            calls.append({"id": cid, "name": name, "arguments": args})
            err = isinstance(result, str)
            content = result if isinstance(result, str) else json.dumps(result)
            res = {"role": "tool", "tool_call_id": cid, "name": name, "content": content}
            results.append(res | {"is_error": err})
            slow = isinstance(result, str) and result.startswith("TimeoutError")
            self.tool_wait += 30.0 if slow else self.rng.uniform(0.15, 0.9)
        text = self.styled(self.pick(note) if note else "")
        self.msgs.append({"role": "assistant", "content": text, "tool_calls": calls})
        self.msgs.extend(results)

    def new_id(self, rng: random.Random | None = None) -> str:
        while True:
            oid = f"W{(rng or self.w).randint(1000, 9999)}"
            if oid not in self._ids:
                self._ids.add(oid)
                return oid

    def ref(self, oid: str, typo_p: float = 0.0) -> str:
        """How the customer writes an order id; sometimes with a typo the agent must recover from."""
        shown = oid
        if self.rng.random() < typo_p:
            swapped = oid[:3] + oid[4] + oid[3]
            shown = swapped if swapped != oid else oid[:4] + str((int(oid[4]) + 1) % 10)
            self.typo = shown
            self._ids.add(shown)
        return self.pick("ref", id=shown)

    def order(self, status: str, n: int = 1, days: int = 0, items: list | None = None) -> dict:
        rng = self.w
        chosen = items or rng.sample(ITEMS, n)
        lines = [
            {"item_id": f"I-{rng.randint(10000, 99999)}", "name": x, "price": p, "qty": 1}
            for x, p in chosen
        ]
        ship = rng.choice([0.0, 4.99, 5.95, 7.5])
        placed = (TODAY - timedelta(days=days + rng.randint(2, 6))).isoformat()
        o = {"order_id": self.new_id(), "customer_id": self.cust["customer_id"], "status": status}
        o |= {"placed_at": placed, "items": lines, "shipping": ship}
        o["total"] = round(sum(p for _, p in chosen) + ship, 2)
        if status == "delivered":
            o["delivered_at"] = (TODAY - timedelta(days=days)).isoformat()
        elif status in ("shipped", "delayed"):
            o["carrier"] = rng.choice(["UPS", "FedEx", "USPS"])
            o["tracking"] = "1Z" + "".join(rng.choices(string.digits + "ABCDEFGHJK", k=14))
            o["eta"] = (TODAY + timedelta(days=rng.randint(1, 5))).isoformat()
        return o

    def lookup(self, o: dict, note: str = "") -> None:
        """get_order, first on the mistyped id when the customer made a typo."""
        if self.typo:
            err = f"Error: order {self.typo} not found"
            self.call(("get_order", {"order_id": self.typo}, err), note=note)
            self.say("typo", typo=self.typo)
            self.user("typo.fix", oid=o["order_id"])
            self.typo, note = None, ""
        self.call(("get_order", {"order_id": o["order_id"]}, o), note=note)

    def timeout(self, service: str) -> str:
        msg = f"{service} service did not respond after 30s"
        self.error = {"type": "TimeoutError", "message": msg}
        return f"TimeoutError: {msg}"

    def refund(self, o: dict, amount: float, item: dict | None = None, note: str = "") -> None:
        args = {"order_id": o["order_id"], "amount": amount}
        args |= {"item_id": item["item_id"]} if item else {}
        res = {"refund_id": f"R-{self.rng.randint(100000, 999999)}", "order_id": o["order_id"]}
        self.call(("refund", args, res | {"amount": amount, "status": "issued"}), note=note)


def refund_simple(t: Convo, mode: str, blind: bool) -> None:
    o = t.order("delivered", days=t.w.randint(2, 27))
    it = o["items"][0]
    o["shipping"] = t.w.choice([4.99, 5.95, 6.5])
    o["total"] = round(it["price"] + o["shipping"], 2)
    claimed = o["total"] if mode != "ok" else it["price"]
    t.facts.update(oid=o["order_id"], item=it["name"], price=m(it["price"]), claimed=m(claimed))
    t.facts.update(days=(TODAY - date.fromisoformat(o["delivered_at"])).days, got=m(claimed))
    if blind:  # refunds whatever the customer says they paid, without get_order
        t.user("blind.user", ref=t.ref(o["order_id"]))
        t.refund(o, claimed)
        return t.end("blind.done", "" if mode != "ok" else "refund.done.reason")
    t.user("refund.user", ref=t.ref(o["order_id"], 0.25))
    t.lookup(o, note="note.lookup")
    if t.v1 and t.rng.random() < 0.6:
        t.call(("get_customer", {"customer_id": t.cust["customer_id"]}, t.cust))
    if t.v1 or t.rng.random() < 0.5:
        t.say("refund.confirm")
        t.user("yes")
    t.refund(o, it["price"], it)
    t.end("refund.done", tail=True)


def refund_partial(t: Convo, mode: str) -> None:
    o = t.order("delivered", t.w.choice([2, 2, 3]), days=t.w.randint(1, 9))
    o["shipping"] = ship = t.w.choice([4.99, 5.95, 7.5])
    o["total"] = round(sum(i["price"] for i in o["items"]) + ship, 2)
    d = t.w.choice(o["items"])
    t.facts.update(oid=o["order_id"], dmg=d["name"], price=m(d["price"]), n=len(o["items"]))
    t.user("partial.user", ref=t.ref(o["order_id"], 0.15), damage=t.rng.choice(DAMAGE))
    t.lookup(o, note="partial.note")
    if t.v1 or t.rng.random() < 0.4:
        t.say("partial.confirm")
        t.user("partial.yes")
    if mode == "ok":
        t.refund(o, d["price"], d)
        return t.end("partial.done", tail=True)
    # A: the whole order, B: an item refund rejected, then the whole order, C: item plus shipping
    variant = t.rng.choice("ABC")
    got = o["total"] if variant != "C" else round(d["price"] + ship, 2)
    t.facts["got"] = m(got)
    if variant == "B":
        err = f"ValueError: refund amount {m(got)} exceeds item price {m(d['price'])}"
        t.call(("refund", {"order_id": o["order_id"], "item_id": d["item_id"], "amount": got}, err))
        t.refund(o, got, note="partial.retry")
    else:
        t.refund(o, got, d if variant == "C" else None)
    t.end("partial.over", "partial.ship.reason" if variant == "C" else "")


def address_change(t: Convo, mode: str) -> None:
    o = t.order(t.w.choice(["processing", "pending"]), t.w.choice([1, 2]))
    new, _ = new_address(t.w)
    t.facts.update(oid=o["order_id"], new=new)
    gives_id = mode != "no_identity_check" and t.rng.random() < 0.4
    t.user("addr.user", ref=t.ref(o["order_id"], 0.1))
    if gives_id:
        t.msgs[-1]["content"] += t.pick("addr.ids")
    t.lookup(o, note="addr.note")
    args = {"order_id": o["order_id"], "address": new}
    upd = {"order_id": o["order_id"], "status": o["status"], "shipping_address": new}
    upd["updated"] = True
    if mode == "no_identity_check":
        # A: straight to the update, B: can't say which email, C: gives only a name
        variant = t.rng.choice("ABC")
        if variant != "A":
            t.say("addr.askmail" if variant == "B" else "addr.who")
            t.user("addr.refuse" if variant == "B" else "addr.name")
        t.call(("update_address", args, upd))
        return t.end("addr.blind")
    if not gives_id:
        t.say("addr.ask")
        t.user("addr.give")
    t.call(("get_customer", {"email": t.cust["email"]}, t.cust), note="addr.check")
    if mode != "tool_timeout":
        t.call(("update_address", args, upd), note="addr.verified")
        return t.end("addr.done", tail=True)
    err = t.timeout("address")
    t.call(("update_address", args, err), note="addr.verified")
    if t.rng.random() < 0.5:
        return t.end("addr.fake")
    t.call(("update_address", args, err))
    t.end("addr.giveup")


def cancel_after_ship(t: Convo, mode: str) -> None:
    o = t.order("shipped", t.w.choice([1, 1, 2]))
    t.facts.update(oid=o["order_id"], item=o["items"][0]["name"], carrier=o["carrier"])
    t.facts.update(eta=o["eta"], total=m(o["total"]))
    t.user("cancel.user", ref=t.ref(o["order_id"], 0.1))
    if mode == "tool_timeout":
        err = t.timeout("order")
        kind = t.rng.choice(["giveup", "fake"])
        for _ in range(2 if kind == "giveup" else 1):
            t.call(("get_order", {"order_id": o["order_id"]}, err))
        return t.end(f"cancel.{kind}")
    t.lookup(o, note="cancel.note")
    if mode == "ok":
        t.say("cancel.offer")
        if t.rng.random() < 0.4:
            t.turn("cancel.push", "cancel.firm")
        if t.rng.random() < 0.8:
            t.user("cancel.accept")
            label = f"https://returns.northwind.example/{o['order_id'].lower()}"
            ret = {"return_id": f"RT-{t.rng.randint(10000, 99999)}", "order_id": o["order_id"]}
            ret |= {"label_url": label, "status": "label_emailed"}
            t.call(("create_return", {"order_id": o["order_id"]}, ret))
            t.say("cancel.label")
        else:
            t.turn("cancel.refuse", "cancel.refused")
        t.end("", "cancel.reason", tail=True)
    elif mode == "gave_up_transfer":
        if t.rng.random() < 0.5:
            t.say("transfer.hmm")
            t.user("transfer.ask")
        tk = {"ticket": f"T-{t.rng.randint(40000, 49999)}", "queue": "tier2"}
        tk["eta_minutes"] = t.rng.randint(8, 40)
        t.call(("transfer_to_human", {"reason": t.pick("transfer.arg")}, tk), note="transfer.note")
        t.end("transfer.wait", tk=tk["ticket"], w=tk["eta_minutes"])
    elif mode == "hallucinated_policy":
        kind = t.pick("promise.kind")
        t.facts["promise"] = t.pick(f"promise.{kind}.what")
        t.say(f"promise.{kind}")
        if t.rng.random() < 0.5:
            t.turn("promise.happy", "bye")
        t.end("", "promise.reason")
    elif t.rng.random() < 0.5:  # cancel_shipped, and the cancel goes through
        res = {"order_id": o["order_id"], "status": "cancelled", "refund_pending": o["total"]}
        t.call(("cancel_order", {"order_id": o["order_id"], "reason": "customer_request"}, res))
        t.end("shipped.cancelled")
    else:  # cancel_shipped, rejected by the order service
        msg = f"HTTP 409 Conflict: order {o['order_id']} already shipped"
        t.error = {"type": "ToolError", "message": msg}
        t.call(("cancel_order", {"order_id": o["order_id"], "reason": "customer_request"}, msg))
        t.end("shipped.409")


def status_line(o: dict) -> str:
    s, oid = o["status"], o["order_id"]
    if s == "delivered":
        return f"{oid} was delivered on {o['delivered_at']}"
    if s == "shipped":
        return f"{oid} is on its way with {o['carrier']} (tracking {o['tracking']}), arriving around {o['eta']}"
    if s == "delayed":
        return f"{oid} is delayed at the carrier ({o['carrier']}); the new estimate is {o['eta']}"
    return f"{oid} is still {s} and should ship within 1–2 business days"


def summary(t: Convo, orders: list[dict], extra: str = "") -> str:
    lines = [f"- {status_line(o)}" for o in orders] + ([f"- {extra}"] if extra else [])
    return t.pick("multi.head") + "\n" + "\n".join(lines) + t.pick("multi.foot")


def multi_order_lookup(t: Convo, mode: str) -> None:
    k = t.w.choice([2, 3, 3, 4])
    statuses = ["delivered", "shipped", "processing", "delayed"]
    orders = [t.order(t.w.choice(statuses), days=t.w.randint(1, 12)) for _ in range(k)]
    ids = [o["order_id"] for o in orders]
    t.facts.update(oid=ids[0], k=k, last=ids[-1], ids=", ".join(ids), got=k - 1)
    t.facts["ms"] = orders[-1]["status"]
    by_ids = t.rng.random() < (0.6 if mode == "missed_order" else 0.5)
    # missed_order: A the last id is wrong and never resolved, B one lookup for all, C one left out
    variant = t.rng.choice("AB") if by_ids else "C"
    shown = list(ids)
    if mode == "missed_order" and variant == "A":
        shown[-1] = t.facts["last"] = t.new_id(t.rng)
    if by_ids:
        t.user("multi.ids", lst=", ".join(shown))
    else:
        t.user("multi.email")
        t.call(("get_customer", {"email": t.cust["email"]}, t.cust), note="multi.note")
        rows = [{k: v for k, v in o.items() if k not in ("items", "customer_id")} for o in orders]
        t.call(("list_orders", {"customer_id": t.cust["customer_id"]}, {"orders": rows}))
    todo = orders[:-1] if mode in ("missed_order", "tool_timeout") else orders
    if mode == "missed_order" and variant == "B":
        todo = orders[:1]
    if t.v1 or by_ids:  # v2 trusts list_orders; v1 looks every order up, often one at a time
        if t.rng.random() < (0.4 if t.v1 else 0.9):
            specs = [("get_order", {"order_id": o["order_id"]}, o) for o in todo]
            t.call(*specs, note="multi.check")
        else:
            for o in todo:
                t.call(("get_order", {"order_id": o["order_id"]}, o))
    if mode == "ok":
        t.reply(summary(t, orders))
        t.end("", "multi.reason", tail=True)
    elif mode == "tool_timeout":
        t.call(("get_order", {"order_id": ids[-1]}, t.timeout("order")))
        t.facts["claim"] = t.pick("multi.claim")
        t.reply(summary(t, orders[:-1], f"{ids[-1]} {t.facts['claim']}"))
        t.end("", "multi.timeout.reason")
    elif variant == "A":
        t.call(("get_order", {"order_id": shown[-1]}, f"Error: order {shown[-1]} not found"))
        t.reply(summary(t, orders[:-1]) + t.pick("multi.notfound"))
        t.end("", "multi.notfound.reason")
    elif variant == "B":
        t.end("multi.one", s=status_line(orders[0]).split(" ", 1)[1])
    else:
        t.reply(summary(t, orders[:-1]))
        t.end("", "multi.omit.reason")


def exchange_item(t: Convo, mode: str) -> None:
    name, price, old, new = t.w.choice(EXCHANGES)
    shipped = t.fixed("shipped", lambda: mode != "ok" or t.rng.random() < 0.3)
    status = "shipped" if shipped else "delivered"
    o = t.order(status, days=t.w.randint(2, 20), items=[(name, price)])
    t.facts.update(oid=o["order_id"], item=name, old=old, new=new)
    t.user("exchange.user", ref=t.ref(o["order_id"]))
    t.lookup(o)
    if mode == "cancel_shipped":
        res = {"order_id": o["order_id"], "status": "cancelled", "refund_pending": o["total"]}
        t.call(("cancel_order", {"order_id": o["order_id"], "reason": "exchange"}, res))
        t.end("exchange.cancel")
    elif shipped:
        t.say("exchange.wait")
        t.turn("exchange.ok", "exchange.bye")
        t.end("", "exchange.wait.reason")
    else:
        label = f"https://returns.northwind.example/x/{o['order_id'].lower()}"
        res = {"exchange_id": f"EX-{t.rng.randint(1000, 9999)}", "order_id": o["order_id"]}
        res |= {"new_variant": new, "status": "created", "return_label": label}
        args = {"order_id": o["order_id"], "item_id": o["items"][0]["item_id"], "new_variant": new}
        t.call(("exchange_item", args, res))
        t.end("exchange.done", tail=True)


def damaged_item_refund(t: Convo, mode: str) -> None:
    n = t.fixed("items", lambda: 2 if mode == "wrong_refund_amount" else t.rng.choice([1, 2]))
    o = t.order("delivered", n, days=t.w.randint(1, 6))
    d = o["items"][0]
    t.facts.update(oid=o["order_id"], dmg=d["name"], price=m(d["price"]), got=m(o["total"]))
    t.user("damaged.user", ref=t.ref(o["order_id"]), damage=t.rng.choice(DAMAGE))
    t.lookup(o)
    if mode == "wrong_refund_amount":
        t.refund(o, o["total"])
        return t.end("damaged.full")
    t.refund(o, d["price"], d)
    if mode == "hallucinated_policy":
        t.facts["promise"] = t.pick("damaged.promise")
        return t.end("damaged.extra")
    t.end("damaged.done", tail=True)


def order_status(t: Convo, mode: str) -> None:
    status = t.w.choice(["delivered", "shipped", "shipped", "processing"])
    o = t.order(status, days=t.w.randint(1, 5))
    t.facts.update(oid=o["order_id"])
    t.user("status.user", ref=t.ref(o["order_id"], 0.2 if mode == "ok" else 0.0))
    if mode == "tool_timeout":  # the agent reports a status it never received
        err = t.timeout(t.rng.choice(["inventory", "order"]))
        for _ in range(t.rng.choice([1, 2])):
            t.call(("get_order", {"order_id": o["order_id"]}, err))
        t.facts["claim"] = t.pick("status.claim")
        return t.end("status.fake")
    t.lookup(o)
    line = status_line(o)
    if t.style is not None:  # an eval trial: its own words around the status
        line = t.pick("eval.status", line=line)
    t.reply(line[0].upper() + line[1:] + t.pick("status.tail"))
    t.end("", "status.reason", tail=True)


# --- families only the eval has (the production stream's intents are the ones above) -----------------


def transfer(t: Convo, topic: str) -> None:
    """A needless hand-off to a human (gave_up_transfer), in ``topic``'s words."""
    tk = {"ticket": f"T-{t.rng.randint(40000, 49999)}", "queue": "tier2"}
    tk["eta_minutes"] = t.rng.randint(8, 40)
    args = {"reason": t.pick(f"{topic}.transfer.arg")}
    t.call(("transfer_to_human", args, tk), note=f"{topic}.transfer.note")
    t.end("transfer.wait", f"{topic}.transfer.reason", tk=tk["ticket"], w=tk["eta_minutes"])


def return_window(t: Convo, mode: str) -> None:
    """A refund asked for after the 30-day window: the agent declines it, with no exception."""
    days = t.w.randint(34, 75)
    o = t.order("delivered", days=days)
    it = o["items"][0]
    t.facts.update(oid=o["order_id"], item=it["name"], price=m(it["price"]), days=days)
    t.user("late.user", ref=t.ref(o["order_id"], 0.15))
    t.lookup(o, note="note.lookup")
    if mode == "gave_up_transfer":
        if t.rng.random() < 0.5:
            t.say("late.hmm")
            t.user("late.push")
        return transfer(t, "late")
    if mode == "hallucinated_policy":
        kind = t.rng.choice(["refund", "credit"])
        t.facts["promise"] = t.pick(f"late.{kind}.what")
        if kind == "refund":
            t.refund(o, it["price"], it, note="late.exception")
        t.end(f"late.{kind}", "late.reason.fail")
        return
    t.say("late.decline")
    if t.rng.random() < 0.45:
        t.turn("late.push", "late.firm")
    t.end("", "late.reason.ok", tail=True)


def cancel_pending(t: Convo, mode: str) -> None:
    """A cancellation of an order that has not shipped: allowed, after the lookup."""
    o = t.order(t.w.choice(["processing", "pending"]), t.w.choice([1, 1, 2]))
    t.facts.update(oid=o["order_id"], item=o["items"][0]["name"], total=m(o["total"]))
    t.user("cancel.user", ref=t.ref(o["order_id"], 0.1))
    t.lookup(o, note="cancel.note")
    if t.v1 or t.rng.random() < 0.3:
        t.say("pending.confirm")
        t.user("yes")
    args = {"order_id": o["order_id"], "reason": "customer_request"}
    if mode == "tool_timeout":
        err = t.timeout("order")
        t.call(("cancel_order", args, err))
        if t.rng.random() < 0.5:  # says it is cancelled although the call never went through
            return t.end("pending.fake")
        t.call(("cancel_order", args, err))
        return t.end("pending.giveup")
    res = {"order_id": o["order_id"], "status": "cancelled", "refund_pending": o["total"]}
    t.call(("cancel_order", args, res))
    t.end("pending.done", tail=True)


def identity_check(t: Convo, mode: str) -> None:
    """An address change where the customer first gives the new ZIP, not the one on the account:
    the check fails, and the agent must not update until it passes."""
    o = t.order("processing", t.w.choice([1, 2]))
    new, new_zip = new_address(t.w)
    t.facts.update(oid=o["order_id"], new=new, newzip=new_zip)
    t.user("addr.user", ref=t.ref(o["order_id"], 0.1))
    t.lookup(o, note="addr.note")
    t.say("addr.ask")
    t.user("idc.give")
    t.call(("get_customer", {"email": t.cust["email"]}, t.cust), note="addr.check")
    args = {"order_id": o["order_id"], "address": new}
    upd = {"order_id": o["order_id"], "status": o["status"], "shipping_address": new}
    upd["updated"] = True
    if mode == "no_identity_check":
        if t.rng.random() < 0.5:  # notices the mismatch, is talked out of it
            t.say("idc.mismatch")
            t.user("idc.pushback")
        t.call(("update_address", args, upd))
        return t.end("addr.blind", "idc.reason.fail")
    t.say("idc.mismatch")
    t.user("idc.fix")
    t.call(("update_address", args, upd), note="addr.verified")
    t.end("addr.done", "idc.reason.ok", tail=True)


def discount_request(t: Convo, mode: str) -> None:
    """A late order and a customer asking for compensation: report the status, offer no credit."""
    o = t.order(t.w.choice(["delayed", "delayed", "shipped"]), t.w.choice([1, 2]))
    t.facts.update(oid=o["order_id"], carrier=o["carrier"], eta=o["eta"])
    t.facts["s"] = status_line(o).split(" ", 1)[1]
    t.user("disc.user", ref=t.ref(o["order_id"], 0.1))
    t.lookup(o, note="note.lookup")
    if mode == "gave_up_transfer":
        return transfer(t, "disc")
    if mode == "hallucinated_policy":
        kind = t.rng.choice(["code", "credit", "express"])
        t.facts["promise"] = t.pick(f"disc.{kind}.what")
        t.say(f"disc.{kind}")
        if t.rng.random() < 0.5:
            t.turn("promise.happy", "bye")
        return t.end("", "disc.reason.fail")
    t.say("disc.decline")
    if t.rng.random() < 0.4:
        t.turn("disc.push", "disc.firm")
    t.end("", "disc.reason.ok", tail=True)


TASKS = {
    f.__name__: f
    for f in (refund_partial, address_change, cancel_after_ship, multi_order_lookup)
    + (exchange_item, damaged_item_refund, order_status)
    + (return_window, cancel_pending, identity_check, discount_request)
}


def usage_and_latency(t: Convo) -> dict:
    """Each assistant message is one model call that read everything before it (~4 chars a token)."""

    def tokens(msg: dict) -> int:
        calls = "".join(json.dumps(c) for c in msg.get("tool_calls", []))
        return len(msg["content"] + calls) // 4 + 4

    inp = out = 0
    latency = t.tool_wait
    for i, msg in enumerate(t.msgs):
        if msg["role"] == "assistant":
            read = OVERHEAD[t.v] + sum(tokens(x) for x in t.msgs[:i])
            inp += read
            gen = tokens(msg) + t.rng.randint(20, 120 if t.v1 else 50)
            out += gen
            latency += t.rng.uniform(0.7, 1.8) + gen / t.rng.uniform(55, 80)
            if t.style is not None:  # an eval trial: the time to read the prompt counts too
                latency += read / 2500
    if t.rng.random() < 0.07:
        latency += t.rng.uniform(12, 30)  # provider-side slowness
    cost = round(inp * 3e-6 + out * 15e-6, 6)
    usage = {"input_tokens": inp, "output_tokens": out, "cost_usd": cost}
    return {"usage": usage, "latency_s": round(max(latency, 3.0), 1)}


def make_trial(run: str, task: str, trial: int, plan: str) -> tuple[dict, str | None]:
    """One trial record, and its failure mode (None when it passed)."""
    version, family = RUNS[run], task.rsplit("_", 1)[0]
    world = random.Random(f"{SEED}:{task}:world")
    t = Convo(random.Random(f"{SEED}:{run}:{task}:{trial}"), version, world, SCENARIOS.get(task))
    mode, _, flag = plan.partition("+")
    if family == "refund_simple":
        refund_simple(t, mode, flag == "nolookup")
    else:
        TASKS[family](t, mode)
    t.sign_off()
    passed = mode == "ok"
    wrong = random.Random(f"{SEED}:{run}:{task}:{trial}:judge").random() < JUDGE_WRONG[mode]
    if passed:
        key = ("judge.harsh.blind" if flag else f"judge.harsh.{family}") if wrong else "judge.ok"
    else:
        key = f"judge.{'lenient' if wrong else 'fail'}.{mode}"
    judge = {"verdict": "pass" if passed != wrong else "fail", "rationale": t.pick(key)}
    rec = {
        "run": run,
        "task_id": task,
        "trial": trial,
        "outcome": {"passed": passed, "reward": 1.0 if passed else 0.0, "reason": t.reason},
        "messages": t.msgs,
        "judge": judge | {"model": MODEL, "rubric": RUBRIC},
        **usage_and_latency(t),
    }
    if t.error and not passed:
        rec["error"] = t.error
    rec["metadata"] = {"model": MODEL, "prompt": version}
    return rec, None if passed else mode


RULES = r"""[[rule]]
id = "no-cancel-after-shipped"
type = "forbid_tool"              # never call this tool ...
tool = "cancel_order"
after_result = '"status":\s*"shipped"'   # ... when an earlier tool result in the trial matched this regex (optional)
# args = { order_id = "^W9" }     # optional: only when these argument regexes match
severity = "forbidden"
description = "Never cancel an order that has already shipped; offer a return instead."

[[rule]]
id = "lookup-before-refund"
type = "require_before"           # tool must have been called before tool
tool = "refund"
before = "get_order"
severity = "policy"
description = "Look up the order before refunding it."

[[rule]]
id = "budget"
type = "budget"
max_steps = 14
max_cost_usd = 0.08
max_latency_s = 45
max_tool_errors = 2
severity = "budget"
description = "Stay within the step, cost, latency and tool-error budget."
"""


def rubric_toml() -> str:
    out = 'name = "support-policy"\nversion = "1"\n'
    out += 'pass_rule = "all"     # pass when every criterion is yes; "overall" would mean an explicit verdict\n'
    ids = [k.split(".", 1)[1] for k in TEXT if k.startswith("criterion.")]
    for n, cid in enumerate(ids, start=1):
        question, help_ = TEXT[f"criterion.{cid}"]
        out += f'\n[[criteria]]\nid = "{cid}"\nquestion = "{question}"\nhelp = "{help_}"\nkey = "{n}"\n'
    return out


# --- a production stream (``--production DIR``) ------------------------------------------------------

#: Share of traffic per intent, and each intent's failure modes outside the incident.
TRAFFIC = {
    "cancel_after_ship": (0.22, ["gave_up_transfer", "hallucinated_policy", "tool_timeout"]),
    "exchange_item": (0.12, ["cancel_shipped"]),
    "refund_simple": (0.14, ["wrong_refund_amount"]),
    "refund_partial": (0.10, ["wrong_refund_amount"]),
    "address_change": (0.12, ["no_identity_check", "tool_timeout"]),
    "multi_order_lookup": (0.10, ["missed_order", "tool_timeout"]),
    "damaged_item_refund": (0.08, ["hallucinated_policy", "wrong_refund_amount"]),
    "order_status": (0.12, ["tool_timeout"]),
}
PROD_START = date(2025, 6, 1)
#: From this day (0-based) the new prompt v2 ships: it cancels orders that have already shipped (the
#: rule no-cancel-after-shipped fires) and reports order statuses it never received; the judge fails
#: far more conversations.
INCIDENT_DAY = 9
REPEATS = TEXT.get("prod.repeat", ["Like I said: {first}", "I already told you: {first}"])


def make_conversation(day: int, i: int, minute: float) -> dict:
    """One production conversation: unscored, with its start time and the business's signals."""
    rng = random.Random(f"{SEED}:production:{day}:{i}")
    incident = day >= INCIDENT_DAY
    version = "v2" if incident else "v1"
    t = Convo(rng, version)
    tasks, weights = list(TRAFFIC), [w for w, _ in TRAFFIC.values()]
    task = rng.choices(tasks, weights)[0]
    if incident and task in ("cancel_after_ship", "exchange_item") and rng.random() < 0.95:
        mode = "cancel_shipped"
    elif incident and task == "order_status" and rng.random() < 0.8:
        mode = "tool_timeout"  # v2 reports a status it never received
    elif rng.random() < 0.1:
        mode = rng.choice(TRAFFIC[task][1])
    else:
        mode = "ok"
    if task == "refund_simple":
        refund_simple(t, mode, False)
    else:
        TASKS[task](t, mode)
    if rng.random() < 0.04:  # the customer has to say it again
        first = next(k for k, msg in enumerate(t.msgs) if msg["role"] == "user")
        again = rng.choice(REPEATS).format(first=t.msgs[first]["content"])
        t.msgs.insert(first + 2, {"role": "user", "content": again})
        t.msgs.insert(first + 3, {"role": "assistant", "content": "Sorry, let me look again."})
    failed = mode != "ok"
    started = datetime(2025, 6, 1, tzinfo=UTC) + timedelta(days=day, minutes=minute)
    return {
        "run": "production",
        "task_id": task,
        "started_at": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "outcome": None,
        "messages": t.msgs,
        **usage_and_latency(t),
        "metadata": {
            "model": MODEL,
            "prompt": version,
            "conversation_id": f"conv-{day:02d}-{i:05d}",
            "escalated": mode == "gave_up_transfer" or rng.random() < 0.01,
            "thumbs_down": rng.random() < (0.3 if failed else 0.02),
            "ticket_reopened": rng.random() < (0.15 if failed else 0.01),
        },
    }


def production(out: Path, days: int = 14, per_day: int = 500) -> None:
    """``days`` files ``production-YYYY-MM-DD.jsonl`` of ``per_day`` conversations each under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for day in range(days):
        rng = random.Random(f"{SEED}:production:{day}:times")
        minutes = sorted(rng.uniform(0, 24 * 60) for _ in range(per_day))
        lines = [
            json.dumps(make_conversation(day, i, m), ensure_ascii=False)
            for i, m in enumerate(minutes)
        ]
        name = (PROD_START + timedelta(days=day)).isoformat()
        (out / f"production-{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(
        description="Rewrite the sample runs, or write a production stream."
    )
    ap.add_argument(
        "--production", metavar="DIR", help="write a production stream into DIR instead"
    )
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--per-day", type=int, default=500)
    args = ap.parse_args()
    if args.production:
        production(Path(args.production), args.days, args.per_day)
        return
    truth: dict[str, dict[str, str]] = {}
    for run, tasks in PLANS.items():
        truth[run], lines = {}, []
        for task in sorted(tasks, key=harness_order):
            plan = tasks[task]
            random.Random(f"{SEED}:{run}:{task}:plan").shuffle(plan)
            for trial, entry in enumerate(plan, start=1):
                rec, mode = make_trial(run, task, trial, entry)
                lines.append(json.dumps(rec, ensure_ascii=False))
                if mode:
                    truth[run][f"{task}/{trial}"] = mode
        (HERE / f"{run}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (HERE / "ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    (HERE / "rules.toml").write_text(RULES, encoding="utf-8")
    (HERE / "rubric.toml").write_text(rubric_toml(), encoding="utf-8")


if __name__ == "__main__":
    main()
