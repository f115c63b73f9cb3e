"""Validate an XML document against an XSD that uses only global elements, ``ref``, ``sequence``,
``choice``, attributes and ``mixed`` / ``xs:string`` content (the JUnit schema in
tests/fixtures/junit does): the rules are read from the schema, not written here. Stdlib only, as
no XSD validator is among the project's packages (see tests/fixtures/junit/SOURCE.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"
UNBOUNDED = 1 << 30


@dataclass
class Decl:
    name: str
    text_allowed: bool
    attributes: set[str] = field(default_factory=set)
    required: set[str] = field(default_factory=set)
    #: "sequence" (children in this order, each with min/max) or "choice" (any of them, any order)
    model: str = "empty"
    children: list[tuple[str, int, int]] = field(default_factory=list)


def _occurs(node: ET.Element, attr: str, default: int) -> int:
    value = node.get(attr)
    if value is None:
        return default
    return UNBOUNDED if value == "unbounded" else int(value)


def load_schema(path: Path) -> dict[str, Decl]:
    root = ET.parse(path).getroot()
    decls: dict[str, Decl] = {}
    for el in root.findall(f"{XS}element"):
        name = el.get("name")
        assert name
        ctype = el.find(f"{XS}complexType")
        if ctype is None:
            assert el.get("type") == "xs:string", f"unsupported type of {name}"
            decls[name] = Decl(name, text_allowed=True)
            continue
        decl = Decl(name, text_allowed=ctype.get("mixed") == "true")
        for a in ctype.findall(f"{XS}attribute"):
            decl.attributes.add(a.get("name") or "")
            if a.get("use") == "required":
                decl.required.add(a.get("name") or "")
        group = ctype.find(f"{XS}sequence")
        if group is None:
            group = ctype.find(f"{XS}choice")
        if group is not None:
            inner = group.find(f"{XS}choice") if group.tag == f"{XS}sequence" else None
            if inner is not None:  # a sequence holding one repeated choice: a choice
                group = inner
            decl.model = "choice" if group.tag == f"{XS}choice" else "sequence"
            for child in group.findall(f"{XS}element"):
                ref = child.get("ref")
                assert ref, f"only ref'd elements are supported ({name})"
                decl.children.append(
                    (ref, _occurs(child, "minOccurs", 1), _occurs(child, "maxOccurs", 1))
                )
        decls[name] = decl
    return decls


def validate(document: str | bytes, schema: Path) -> list[str]:
    """Every way ``document`` breaks the schema (empty when it is valid)."""
    decls = load_schema(schema)
    root = ET.fromstring(document)
    problems: list[str] = []
    if root.tag not in decls:
        return [f"root element <{root.tag}> is not declared"]
    _check(root, decls, problems, root.tag)
    return problems


def _check(el: ET.Element, decls: dict[str, Decl], problems: list[str], where: str) -> None:
    decl = decls[el.tag]
    for a in el.attrib:
        if a not in decl.attributes:
            problems.append(f"{where}: attribute {a!r} is not declared")
    for a in decl.required - el.attrib.keys():
        problems.append(f"{where}: required attribute {a!r} missing")
    texts = [el.text or ""] + [c.tail or "" for c in el]
    if not decl.text_allowed and any(t.strip() for t in texts):
        problems.append(f"{where}: text content is not allowed")
    allowed = [c[0] for c in decl.children]
    tags = [c.tag for c in el]
    if decl.model == "choice":
        for t in tags:
            if t not in allowed:
                problems.append(f"{where}: <{t}> is not allowed here")
    elif decl.model == "sequence":
        i = 0
        for ref, lo, hi in decl.children:
            n = 0
            while i < len(tags) and tags[i] == ref and n < hi:
                i, n = i + 1, n + 1
            if n < lo:
                problems.append(f"{where}: needs at least {lo} <{ref}>")
        if i < len(tags):
            problems.append(f"{where}: <{tags[i]}> is not allowed here")
    elif tags:
        problems.append(f"{where}: no child elements allowed, got <{tags[0]}>")
    for n, child in enumerate(el):
        if child.tag in decls:
            _check(child, decls, problems, f"{where}/{child.tag}[{n}]")
        else:
            problems.append(f"{where}: <{child.tag}> is not declared")
