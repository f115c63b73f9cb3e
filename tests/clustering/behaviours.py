"""Labeled failures whose modes are behaviours, each graded with reasons worded several ways (issue
28): the agent's trajectory shows what it did (cancelled a delivered order, changed flights without
asking, handed off at once, gave up after a tool error, ran out of steps, wrote a wrong value, ...),
with instance details (ids, amounts, dates) and the conversation around it varying. ``DEV`` wordings
are the only ones anything was tuned on; ``HELD_OUT`` wordings (other phrasings of the same modes,
written separately) are only measured. Seeded: ``failures(split, n, seed)`` gives the same list
every time."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from reviewer.clustering.signature import FailureDoc, evidence_of
from reviewer.models import Message, ToolCall, Trial

# mode -> (dev wordings, held-out wordings); {o} order or reservation id, {n} number, {u} user
WORDINGS: dict[str, tuple[list[str], list[str]]] = {
    "cancel_delivered": (
        [
            "cancelled order {o} although it had already been delivered",
            "the agent canceled a delivered order instead of starting a return",
            "policy violation: cancellation of an order that was not pending",
        ],
        [
            "order {o} arrived already, yet the assistant voided it",
            "should have offered a return; the package was received and it got cancelled",
            "cancel_pending_order used on a fulfilled purchase",
        ],
    ),
    "unasked_flight_change": (
        [
            "changed the flights on {o} without the user's explicit confirmation",
            "updated the reservation before getting a yes from the customer",
            "modified the itinerary without asking first",
        ],
        [
            "no consent was obtained prior to rebooking {u}",
            "the assistant swapped flights on its own initiative",
            "policy: must list the change and wait for approval, did not",
        ],
    ),
    "early_transfer": (
        [
            "transferred to a human agent instead of handling the request",
            "escalated to support although the task was within scope",
            "handed the user off without trying to help",
        ],
        [
            "passed {u} to a representative for a routine change",
            "gave the conversation to a person straight away",
            "premature handoff: the agent could have done this itself",
        ],
    ),
    "gave_up_after_error": (
        [
            "the order lookup failed and the agent stopped trying",
            "did not retry after the service error",
            "abandoned the task when the tool returned an error",
        ],
        [
            "one failed call and the assistant apologised and quit",
            "never attempted the lookup again after it broke",
            "left {u} without an answer once the backend hiccupped",
        ],
    ),
    "ran_out_of_steps": (
        [
            "hit the step limit while searching",
            "the episode ran too long and was cut off",
            "kept searching for products until the budget ran out",
        ],
        [
            "exceeded {n} turns without finishing",
            "looped over the catalogue and never completed the exchange",
            "conversation truncated: maximum number of actions reached",
        ],
    ),
    "wrong_address": (
        [
            "shipped to the wrong zip code: used {n} instead of the user's",
            "the new address has a typo in the street",
            "address update for {o} does not match what the user dictated",
        ],
        [
            "entered an incorrect postal code when updating {o}",
            "the delivery address saved differs from the one requested",
            "wrote {n} into the address field, which the customer never said",
        ],
    ),
    "wrong_refund_method": (
        [
            "refunded to a gift card instead of the original credit card",
            "the return used the wrong payment method",
            "money for {o} went back to the wrong account",
        ],
        [
            "reimbursement should have gone to the card on file",
            "chose paypal for the refund though the user asked for the original method",
            "return processed but the refund destination was incorrect",
        ],
    ),
    "answered_without_lookup": (
        [
            "told the user a delivery date without checking the order",
            "made up the shipping status instead of calling a tool",
            "answered from memory, no lookup was done",
        ],
        [
            "the ETA it gave for {o} was invented",
            "claimed the parcel was on its way without any tool call",
            "hallucinated tracking information for {u}",
        ],
    ),
}
MODES = sorted(WORDINGS)

_CLOSINGS = [
    "Is there anything else I can help you with?",
    "Let me know if you need anything else.",
    "Have a great day!",
    "Thank you for your patience.",
]
_USERS = ["mia_li_3668", "olivia_gonzalez_2305", "yusuf_rossi_9620", "ingrid_moreau_1024"]


class _Script:
    """A trajectory being written: messages with tool calls paired to their results."""

    def __init__(self, rng: random.Random, user: str) -> None:
        self.rng = rng
        self.messages: list[Message] = [
            Message("system", "You are a customer service agent. Follow the policy."),
            Message("user", f"Hi, I'm {user.split('_')[0]}. I need help with an order."),
        ]
        self.calls = 0

    def say(self, text: str) -> None:
        self.messages.append(Message("assistant", text))

    def user(self, text: str) -> None:
        self.messages.append(Message("user", text))

    def call(self, name: str, args: dict[str, object], result: object, error: bool = False) -> None:
        self.calls += 1
        cid = f"call_{self.calls}"
        self.messages.append(Message("assistant", "", [ToolCall(name, args, cid)]))
        content = result if isinstance(result, str) else json.dumps(result)
        self.messages.append(Message("tool", content, tool_call_id=cid, name=name, is_error=error))

    def identify(self, user: str) -> None:
        if self.rng.random() < 0.7:
            self.call("find_user_id_by_email", {"email": f"{user}@example.com"}, user)
        if self.rng.random() < 0.5:
            self.call("get_user_details", {"user_id": user}, {"user_id": user, "orders": 3})

    def close(self) -> None:
        self.say(self.rng.choice(_CLOSINGS))


def _order(o: str, status: str, rng: random.Random) -> dict[str, object]:
    return {
        "order_id": o,
        "status": status,
        "items": [{"item_id": str(rng.randint(10**9, 10**10)), "price": rng.randint(10, 900)}],
        "payment_history": [{"payment_method_id": "credit_card_1"}],
    }


def _cancel_delivered(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    s.call("get_order_details", {"order_id": o}, _order(o, "delivered", s.rng))
    if s.rng.random() < 0.7:
        s.say(f"I can cancel order {o}. Do you confirm (yes/no)?")
        s.user("yes")
    s.call(
        "cancel_pending_order",
        {"order_id": o, "reason": "no longer needed"},
        _order(o, "cancelled", s.rng),
    )
    s.say(f"Order {o} is cancelled.")
    s.close()


def _unasked_flight_change(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    s.call(
        "get_reservation_details", {"reservation_id": o}, {"reservation_id": o, "cabin": "economy"}
    )
    s.call("search_direct_flight", {"origin": "JFK", "destination": "SFO"}, [{"flight": "HAT012"}])
    s.call(
        "update_reservation_flights",
        {"reservation_id": o, "cabin": "economy", "flights": [{"flight_number": "HAT012"}]},
        {"reservation_id": o, "flights": ["HAT012"]},
    )
    s.say("Your flights have been updated.")
    s.close()


def _early_transfer(s: _Script, o: str, u: str) -> None:
    if s.rng.random() < 0.5:
        s.identify(u)
    if s.rng.random() < 0.5:
        s.call("get_order_details", {"order_id": o}, _order(o, "pending", s.rng))
    s.call("transfer_to_human_agents", {"summary": "user wants a change"}, "Transfer successful")
    s.say("I've transferred you to a human agent.")


def _gave_up_after_error(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    error = s.rng.choice(
        [
            "Error: request timed out after 30s",
            "TimeoutError: the order service did not respond",
            "503 Service Unavailable",
        ]
    )
    s.call("get_order_details", {"order_id": o}, error, error=True)
    s.say(
        s.rng.choice(
            [
                "I'm sorry, I can't access your order right now. Please try again later.",
                "Unfortunately the system is not responding. Please contact us later.",
            ]
        )
    )


def _ran_out_of_steps(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    s.call("get_order_details", {"order_id": o}, _order(o, "delivered", s.rng))
    for _ in range(s.rng.randint(4, 8)):
        s.call("get_product_details", {"product_id": str(s.rng.randint(10**9, 10**10))}, {"v": 1})


def _wrong_address(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    s.call("get_order_details", {"order_id": o}, _order(o, "pending", s.rng))
    s.say(f"I will change the address of order {o} to the one you gave. Shall I proceed?")
    s.user("Yes please.")
    s.call(
        "modify_pending_order_address",
        {"order_id": o, "zip": str(s.rng.randint(10000, 99999)), "address1": "1 Main St"},
        _order(o, "pending", s.rng),
    )
    s.say("The address has been updated.")
    s.close()


def _wrong_refund_method(s: _Script, o: str, u: str) -> None:
    s.identify(u)
    s.call("get_order_details", {"order_id": o}, _order(o, "delivered", s.rng))
    s.say(f"I can return the item of order {o} with a refund to your gift card. Confirm?")
    s.user("ok")
    s.call(
        "return_delivered_order_items",
        {"order_id": o, "item_ids": ["1"], "payment_method_id": "gift_card_7"},
        _order(o, "return requested", s.rng),
    )
    s.say("The return is requested.")
    s.close()


def _answered_without_lookup(s: _Script, o: str, u: str) -> None:
    s.say(
        s.rng.choice(
            [
                f"Your order {o} will arrive on Friday.",
                f"Order {o} has shipped and should arrive in two days.",
                "Your parcel is on its way.",
            ]
        )
    )
    s.close()


_SCRIPTS: dict[str, Callable[[_Script, str, str], None]] = {
    "cancel_delivered": _cancel_delivered,
    "unasked_flight_change": _unasked_flight_change,
    "early_transfer": _early_transfer,
    "gave_up_after_error": _gave_up_after_error,
    "ran_out_of_steps": _ran_out_of_steps,
    "wrong_address": _wrong_address,
    "wrong_refund_method": _wrong_refund_method,
    "answered_without_lookup": _answered_without_lookup,
}
_TERMINATIONS = {"ran_out_of_steps": ["max_steps", "max steps reached", "step limit exceeded"]}


def failures(split: str, n: int = 240, seed: int = 0) -> tuple[list[FailureDoc], list[str]]:
    """``n`` failures of ``split`` ("dev" or "held_out"), and their true modes."""
    rng = random.Random(f"behaviours:{split}:{seed}")
    docs: list[FailureDoc] = []
    truth: list[str] = []
    for i in range(n):
        mode = MODES[i % len(MODES)]
        wordings = WORDINGS[mode][0 if split == "dev" else 1]
        o = f"#W{rng.randint(1000000, 9999999)}"
        u = rng.choice(_USERS)
        reason = rng.choice(wordings).format(o=o, n=rng.randint(10, 99999), u=u)
        script = _Script(rng, u)
        _SCRIPTS[mode](script, o, u)
        termination = rng.choice(_TERMINATIONS.get(mode, ["user_stop"]))
        trial = Trial(
            task_id=f"task_{rng.randint(0, 40)}",
            messages=script.messages,
            passed=False,
            reason=reason,
            termination=termination,
            run="behaviours",
        )
        docs.append(evidence_of(trial, trial_id=f"{split}-{seed}-{i:04}"))
        truth.append(mode)
    return docs, truth
