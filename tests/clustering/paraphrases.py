"""Labeled failures with paraphrased reasons (issue 16, item 2): each failure mode is worded several
ways, with instance details (ids, amounts, dates) varying. ``DEV`` wordings tuned nothing; they
and the ``HELD_OUT`` wordings (different phrasings of the same modes, written separately) are
both measured. Seeded: ``failures(split, n, seed)`` gives the same list every time."""

from __future__ import annotations

import random

from reviewer.clustering.signature import FailureDoc, evidence_of
from reviewer.models import Trial

# mode -> (dev wordings, held-out wordings); {o} order id, {n} number, {d} date, {u} user
MODES: dict[str, tuple[list[str], list[str]]] = {
    "no_identity_check": (
        [
            "changed the address before verifying the customer's identity",
            "updated shipping details for {o} without checking who the user was",
            "skipped identity verification and modified order {o}",
        ],
        [
            "never confirmed the caller's email or zip before editing {o}",
            "the agent did not authenticate {u} prior to making account changes",
        ],
    ),
    "cancel_shipped": (
        [
            "cancelled order {o} even though it had already shipped",
            "cancel_order was called on a shipped order {o}",
            "the agent canceled a package that was already in transit",
        ],
        [
            "order {o} was cancelled after shipment instead of offering a return",
            "terminated an order that had left the warehouse on {d}",
        ],
    ),
    "wrong_refund": (
        [
            "refunded {n} dollars but the expected refund was {n}",
            "the refund amount was wrong: issued {n} instead of {n}",
            "gave back the wrong amount of money for order {o}",
        ],
        [
            "customer received an incorrect reimbursement of ${n}",
            "refund total did not match the item price ({n} vs {n})",
        ],
    ),
    "gave_up_timeout": (
        [
            "the order service timed out and the agent gave up",
            "stopped after a timeout from get_order without retrying",
            "a backend timeout ended the conversation with no follow-up",
        ],
        [
            "request to the order API exceeded {n}s and was never retried",
            "after the lookup service failed to respond the assistant abandoned the task",
        ],
    ),
    "partial_lookup": (
        [
            "only looked up one of the {n} orders the user asked about",
            "checked order {o} but ignored the other orders",
            "answered about a single order when several were requested",
        ],
        [
            "the user mentioned {n} orders and the agent investigated just {o}",
            "missed the remaining orders after handling the first one",
        ],
    ),
    "promised_discount": (
        [
            "promised a {n}% discount code that policy does not allow",
            "offered the customer an unauthorized coupon",
            "made up a store credit of ${n} as an apology",
        ],
        [
            "invented a compensation voucher worth {n} percent",
            "told {u} they would get a discount the agent cannot grant",
        ],
    ),
    "premature_transfer": (
        [
            "transferred to a human agent instead of handling the return",
            "escalated to a specialist although the request was routine",
            "handed the conversation off to support staff without trying",
        ],
        [
            "passed {u} to a human representative for a simple exchange",
            "the assistant escalated the call rather than processing the return itself",
        ],
    ),
    "wrong_flight": (
        [
            "booked flight {o} on {d} instead of the requested later flight",
            "reserved the wrong departure time for the trip",
            "the new reservation used an earlier flight than the user wanted",
        ],
        [
            "changed the itinerary to a flight the traveler had rejected",
            "picked flight {o} although the user asked for one after 11am",
        ],
    ),
}


def _fill(text: str, rng: random.Random) -> str:
    return text.format(
        o=f"W{rng.randint(1000, 9999)}",
        n=rng.randint(2, 300),
        d=f"2024-05-{rng.randint(10, 28)}",
        u=rng.choice(["mia_li_3668", "olivia_gonzalez_2305", "C-26027", "ingrid_moreau"]),
    )


def failures(split: str, n: int = 240, seed: int = 0) -> tuple[list[FailureDoc], list[str]]:
    """``n`` failures of ``split`` ("dev" or "held_out"), and their true modes."""
    rng = random.Random(f"{split}:{seed}")
    docs: list[FailureDoc] = []
    truth: list[str] = []
    modes = sorted(MODES)
    for i in range(n):
        mode = modes[i % len(modes)]
        wordings = MODES[mode][0 if split == "dev" else 1]
        reason = _fill(rng.choice(wordings), rng)
        trial = Trial(
            task_id=f"task_{rng.randint(0, 30)}", messages=[], passed=False, reason=reason
        )
        docs.append(evidence_of(trial, trial_id=f"{split}-{i:04}"))
        truth.append(mode)
    return docs, truth
