"""The `calculator` tool: exact arithmetic on rationals; nothing is evaluated as code.

The expression is parsed with Python's parser and walked node by node; only
numbers, + - * / // % **, unary signs, parentheses and abs() are accepted, and
every value is a Fraction, so 0.1 + 0.2 is exactly 3/10. Powers and results are
bounded, so `9**9**9` is refused instead of eating the trainer's memory.
"""
from __future__ import annotations

import ast
import operator
from fractions import Fraction

from grpokit.tools.registry import ToolError, register_tool

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 1000
MAX_RESULT_BITS = 20_000  # about 6,000 decimal digits

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


@register_tool("calculator")
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly, e.g. "(12 + 7) * 3 / 4".

    Supports + - * / // % ** parentheses and abs(); results are exact fractions.

    Args:
        expression: The arithmetic expression to evaluate.
    """
    value = evaluate(expression)
    return format_value(value)


def evaluate(expression: str) -> Fraction:
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError("give an arithmetic expression such as (12 + 7) * 3")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ToolError(f"not an arithmetic expression: {expression[:80]!r}") from None
    try:
        return _value(tree.body)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except RecursionError:
        raise ToolError("expression is nested too deeply") from None


def _value(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        # str() first: Fraction(0.1) is the binary float, Fraction("0.1") the decimal the model wrote.
        return Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _checked(_BINARY[type(node.op)](_value(node.left), _value(node.right)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _power(_value(node.left), _value(node.right))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise ToolError("^ is not a power here; write 2 ** 10")
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs"
            and len(node.args) == 1 and not node.keywords):
        return abs(_value(node.args[0]))
    raise ToolError(f"unsupported in an arithmetic expression: {ast.unparse(node)[:60]!r} "
                    "(numbers, + - * / // % **, parentheses and abs() only)")


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise ToolError("only whole-number exponents are exact; roots are not supported")
    if abs(exponent) > MAX_EXPONENT:
        raise ToolError(f"exponent {exponent} is too large (at most {MAX_EXPONENT})")
    bits = max(abs(base.numerator).bit_length(), base.denominator.bit_length())
    if bits * abs(int(exponent)) > MAX_RESULT_BITS:
        raise ToolError("result would be too large")
    return base ** int(exponent)


def _checked(value: Fraction) -> Fraction:
    if max(abs(value.numerator).bit_length(), value.denominator.bit_length()) > MAX_RESULT_BITS:
        raise ToolError("result is too large")
    return value


def format_value(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    decimal = f"{float(value):.10g}" if abs(value) < 10**300 else "too large to show"
    return f"{value.numerator}/{value.denominator} (about {decimal})"
