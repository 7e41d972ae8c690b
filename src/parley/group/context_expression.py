"""Conditions and texts computed from context variables, without a model: ``ContextExpression`` and
``ContextStr``."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# patterns, compiled by ``re`` (and kept in its cache) the first time an expression is parsed
_VARIABLE = r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}"
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_SYMBOLS = ((r"!(?!=)", " not "), (r"&", " and "), (r"\|", " or "))
_PLACEHOLDER = "__context_{}__"
_COMPARISONS: dict[type[ast.cmpop], Any] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


@dataclass(frozen=True)
class ContextExpression:
    """A logical expression over context variables, evaluated without a model.

    Variables are written ``${name}``. Allowed: ``not``/``!``, ``and``/``&``, ``or``/``|``, the
    comparisons ``== != < <= > >=``, parentheses, ``len(${name})``, and literals (numbers, quoted
    strings, ``True``, ``False``, ``None``). For example
    ``ContextExpression("len(${orders}) > 0 and not ${blocked}")``.

    Raises:
        SyntaxError: the expression cannot be parsed.
        ValueError: it uses anything else (arithmetic, attribute access, other functions...).
    """

    expression: str
    _tree: ast.expr = field(init=False, repr=False, compare=False)
    _variables: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str) or not self.expression.strip():
            raise ValueError(f"a ContextExpression needs a non-empty expression, not {self.expression!r}")
        variables = tuple(dict.fromkeys(re.findall(_VARIABLE, self.expression)))
        python = re.sub(_VARIABLE, lambda match: _PLACEHOLDER.format(match.group(1)), self.expression)
        python = _outside_strings(python)
        try:
            tree = ast.parse(python.strip(), mode="eval").body
        except SyntaxError as error:
            raise SyntaxError(f"invalid expression syntax in {self.expression!r}: {error.msg}") from None
        _check(tree, self.expression)
        object.__setattr__(self, "_tree", tree)
        object.__setattr__(self, "_variables", variables)

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the context variables the expression reads."""
        return self._variables

    def evaluate(self, context_variables: Mapping[str, Any]) -> Any:
        """The expression's value with these context variables.

        Raises:
            KeyError: a variable the expression reads is not set.
        """
        for name in self._variables:
            if name not in context_variables:
                raise KeyError(
                    f"Missing context variable: {name!r} (in ContextExpression {self.expression!r})"
                )
        return _evaluate(self._tree, context_variables)

    def __str__(self) -> str:
        return f"ContextExpression({self.expression!r})"


@dataclass(frozen=True)
class ContextStr:
    """Text with ``{name}`` placeholders filled from the context variables when it is used (a handoff's
    condition, a selection message...)."""

    template: str

    def __post_init__(self) -> None:
        if not isinstance(self.template, str):
            raise ValueError(f"a ContextStr's template must be a string, not {self.template!r}")

    def format(self, context_variables: Mapping[str, Any]) -> str:
        """The text with the context variables substituted (the template itself while the context is
        empty).

        Raises:
            KeyError: the template names a variable that is not set.
        """
        if not context_variables:
            return self.template
        return self.template.format(**context_variables)

    def __str__(self) -> str:
        return f"ContextStr, unformatted: {self.template}"


def _outside_strings(text: str) -> str:
    """``!``, ``&`` and ``|`` as Python's keywords, except inside string literals."""
    parts: list[str] = []
    position = 0
    for match in re.finditer(_STRING, text):
        parts.append(_keywords(text[position : match.start()]))
        parts.append(match.group(0))
        position = match.end()
    parts.append(_keywords(text[position:]))
    return "".join(parts)


def _keywords(code: str) -> str:
    for pattern, keyword in _SYMBOLS:
        code = re.sub(pattern, keyword, code)
    return code


def _check(node: ast.AST, expression: str) -> None:
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value, expression)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub | ast.UAdd):
        _check(node.operand, expression)  # not, and a number's sign (-1, -${balance})
    elif isinstance(node, ast.Compare):
        for operator in node.ops:
            if type(operator) not in _COMPARISONS:
                raise ValueError(f"comparison {type(operator).__name__} is not allowed in {expression!r}")
        for operand in [node.left, *node.comparators]:
            _check(operand, expression)
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id == "len") or node.keywords:
            raise ValueError(f"only len(${{name}}) may be called in {expression!r}")
        if len(node.args) != 1:
            raise ValueError(f"len() takes exactly one argument in {expression!r}")
        _check(node.args[0], expression)
    elif isinstance(node, ast.Name):
        if not (node.id.startswith("__context_") or node.id in ("True", "False", "None")):
            raise ValueError(f"{node.id!r} in {expression!r}: write context variables as ${{{node.id}}}")
    elif not isinstance(node, ast.Constant):
        raise ValueError(f"{type(node).__name__} is not allowed in the logical expression {expression!r}")


def _evaluate(node: ast.expr, context: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        for operand in node.values:
            value = _evaluate(operand, context)
            if bool(value) is not is_and:
                return value
        return value
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, context)
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, context)
        for operator, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, context)
            if not _COMPARISONS[type(operator)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call):
        return len(_evaluate(node.args[0], context))
    if isinstance(node, ast.Name):
        if node.id.startswith("__context_"):
            return context[node.id[len("__context_") : -2]]
        return {"True": True, "False": False, "None": None}[node.id]
    assert isinstance(node, ast.Constant)
    return node.value
