"""JSON schemas written out in place: local ``$ref``s replaced by the definitions they name."""

from __future__ import annotations

from typing import Any


class RecursiveSchema(ValueError):
    """A schema whose definition refers to itself, which cannot be written out in place."""


def inline_refs(schema: dict[str, Any], *, keep_titles: bool) -> dict[str, Any]:
    """``schema`` with its local ``$ref``s replaced by their definitions and without ``$defs``;
    ``title``s are kept or dropped as asked.

    Raises:
        RecursiveSchema: a definition refers to itself.
        ValueError: a ``$ref`` names a definition the schema does not have.
    """
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def node(value: Any, seen: tuple[str, ...]) -> Any:
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in definitions:
                raise ValueError(f"tool schema refers to {ref!r}, which it does not define")
            if name in seen:
                raise RecursiveSchema(f"the schema {name!r} refers to itself")
            siblings = {key: item for key, item in value.items() if key != "$ref"}
            return {**node(definitions[name], (*seen, name)), **node(siblings, seen)}
        simplified: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("$defs", "definitions") or (key == "title" and not keep_titles):
                continue
            if key == "properties" and isinstance(item, dict):
                simplified[key] = {name: node(prop, seen) for name, prop in item.items()}
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(item, list):
                simplified[key] = [node(option, seen) for option in item]
            elif key in ("items", "additionalProperties", "not"):
                simplified[key] = node(item, seen)
            else:
                simplified[key] = item
        return simplified

    resolved: dict[str, Any] = node(schema, ())
    return resolved
