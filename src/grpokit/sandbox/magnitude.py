"""How big can the number an answer writes get? A log-size bound read from the syntax alone.

sympy evaluates every numeric sub-expression it parses: `9^{\\left(9^{9}\\right)}` is a
number of 370 million digits, `{1000000}!` of 5.6 million, `\\Gamma(10^{7})` of 66
million, and any of them holds a math worker for its whole time limit. Matching such
answers by their spelling loses to the next spelling (another bracket, `\\left(`, `**`,
`\\dbinom`), so this module reads the expression instead: a small precedence parser
that never builds the number, only an upper bound on its size, `L` = log10 of the
largest absolute value a sub-expression can take:

    literal n       log10(n)              a + b, a, b     max(La, Lb) + log10(2)
    a * b, a / b    La + Lb               a ^ b           10^Lb * La
    n!, Gamma(n)    log10(n!), n <= 10^Ln              binom(a, b)  min(10^Lb La, 10^La log10 2)

Letters are symbols (L = 0: sympy keeps `x^{1000}` symbolic) and `e` is log10(e), so
`e^{10^{9}}` is caught like `10^{10^{9}}`. Unknown commands (`\\sin`, `\\sqrt`) pass their
argument's size through, an over-estimate for all of them. Every sub-expression is
checked against the limits, since sympy computes each one: an exponent of 10^{10^{5}}
is refused even under `1^{...}`. The parser reads any text (prose, broken LaTeX) in
time linear in its length and never raises; what it cannot read it skips.
"""
from __future__ import annotations

import math
import re

# A result with more digits than this is not worth asking sympy about.
MAX_DIGITS = 20_000
# The largest n whose n! (or Gamma(n), or n!!) is computed: 2000! has 5,736 digits.
MAX_FACTORIAL = 2_000

_LOG2 = math.log10(2)
_LOGE = math.log10(math.e)
_INF = math.inf

# Digit groups joined by a thousands separator are one number (`1{,}000{,}000`, `1\,000`).
_TOKEN = re.compile(
    r"(?P<num>\d+(?:(?:,|\{,\}|\\[,;: ])\d{3}(?!\d))*(?:\.\d*)?|\.\d+)"
    r"|(?P<cmd>\\[A-Za-z]+|Γ)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<pow>\*\*|\^)"
    r"|(?P<op>[-+*/!(){}\[\],=<>|])"
    r"|(?P<skip>\\.|.)",
    re.DOTALL,
)
_TIMES = {"\\cdot", "\\times", "\\div", "\\ast"}
_SUM = {"\\pm", "\\mp", "\\le", "\\leq", "\\ge", "\\geq", "\\ne", "\\neq", "\\approx", "\\to", "\\quad", "\\qquad"}
_IGNORED = {"\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\displaystyle", "\\mathrm", "\\text",
            "\\textbf", "\\mathbf", "\\operatorname", "\\boxed", "\\fbox", "\\!", "\\,", "\\;", "\\:"}
_FACTORIALS = {"\\Gamma", "Γ", "\\gamma", "factorial", "gamma", "Gamma", "\\factorial"}
_BINOMIALS = {"\\binom", "\\dbinom", "\\tbinom", "binomial", "binom", "C"}
_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"}
_OPEN = {"(": ")", "{": "}", "[": "]"}
# Brackets, signs and exponents nested deeper than this are not an answer; refused.
_MAX_DEPTH = 60
_CONSTANTS = {"e": _LOGE, "\\pi": 0.5, "pi": 0.5, "E": _LOGE}


class TooBig(Exception):
    """The expression holds a sub-expression past the limits; the message says which kind."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        value = match.group()
        if kind == "skip" or value in _IGNORED:
            continue
        if kind == "cmd" and value in _TIMES:
            kind, value = "op", "*"
        elif kind == "cmd" and value in _SUM:
            kind, value = "op", "+"
        elif kind == "cmd" and value == "\\choose":
            kind, value = "op", "choose"
        elif kind == "op" and value in "=<>|,":
            value = "+"
        out.append((kind, value))
    return out


def _literal(text: str) -> float:
    digits = re.sub(r"\D", "", text.split(".")[0]) if "." in text else re.sub(r"\D", "", text)
    digits = digits.lstrip("0")
    if not digits:
        return 0.0
    if len(digits) > 15:
        return len(digits) - 1 + math.log10(int(digits[:15]) / 10**14)
    return math.log10(int(digits)) if int(digits) > 1 else 0.0


def _value(size: float) -> float:
    """The largest value a size bound allows, 10^L (inf past floats)."""
    return 10.0**size if size < 300 else _INF


class _Reader:
    """A precedence parser over the tokens that returns size bounds, checking every node."""

    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def checked(self, size: float, why: str = "huge power") -> float:
        if not size <= MAX_DIGITS:  # also nan
            raise TooBig(why)
        return size

    # sum := product (('+' | '-') product)*
    def sum(self, closer: str | None = None) -> float:
        size = self.product(closer)
        while (token := self.peek()) is not None and token[0] == "op" and token[1] in "+-":
            self.take()
            size = self.checked(max(size, self.product(closer)) + _LOG2)
        return size

    # product := unary (('*' | '/' | juxtaposition) unary)*, and `a \choose b`
    def product(self, closer: str | None) -> float:
        size = self.unary(closer)
        while (token := self.peek()) is not None:
            if token[0] == "op" and token[1] in "*/":
                self.take()
            elif token == ("op", "choose"):
                self.take()
                size = self.binomial(size, self.unary(closer))
                continue
            elif token[0] == "op" and token[1] not in _OPEN:
                break  # a closer, a sum sign, a stray `!`
            size = self.checked(size + self.unary(closer))
        return size

    def unary(self, closer: str | None, bang: bool = True) -> float:
        # Every nesting (brackets, signs, exponents) passes here: bounded, so the parser's
        # recursion stays far below Python's limit whatever the caller's stack holds.
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH:
                raise TooBig("nesting too deep")
            token = self.peek()
            while token is not None and token[0] == "op" and token[1] in "+-":
                self.take()  # |-x| = |x|
                token = self.peek()
            return self.power(closer, bang)
        finally:
            self.depth -= 1

    # power := atom '!'* ('^' unary)?   (right-associative: 9^9^9 is 9^(9^9))
    def power(self, closer: str | None, bang: bool = True) -> float:
        base = self.atom(closer)
        if bang:
            base = self.factorials(base)
        token = self.peek()
        if token is None or token[0] != "pow":
            return base
        self.take()
        exponent = self.unary(closer, bang=False)
        bangs = 0
        while bang and self.peek() == ("op", "!"):
            self.take()
            bangs += 1
        # `10^7!` reads as 10^(7!) or as (10^7)!: both must be within the limits.
        whole = self.checked(_value(exponent) * base if base > 0 else 0.0)
        inner = exponent
        for _ in range(bangs):
            whole, inner = self.factorial(whole), self.factorial(inner)
        return max(whole, self.checked(_value(inner) * base if base > 0 else 0.0))

    def factorials(self, size: float) -> float:
        while (token := self.peek()) is not None and token == ("op", "!"):
            self.take()
            size = self.factorial(size)
        return size

    def factorial(self, size: float) -> float:
        n = _value(size)
        if n > MAX_FACTORIAL * (1 + 1e-9):  # 10^log10(2000) is 2000.0000000000002
            raise TooBig("huge factorial")
        return self.checked(math.lgamma(n + 1) / math.log(10) if n > 1 else 0.0)

    def binomial(self, top: float, bottom: float) -> float:
        # C(a, b) <= a^b and <= 2^a
        a, b = _value(top), _value(bottom)
        by_power = b * top if top > 0 else 0.0
        return self.checked(min(by_power, a * _LOG2), "huge binomial")

    def group(self) -> float:
        """The size of a bracketed group whose opening token was just taken."""
        closer = _OPEN[self.tokens[self.pos - 1][1]]
        size = self.sum(closer)
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ")}]":
            self.take()  # a mismatched closer closes too: \left( ... \right] and broken text
        return size

    def argument(self) -> float:
        """A command's argument: a bracketed group, else the next power (`\\exp 10^{6}` is read
        as exp(10^6), the larger of its two readings)."""
        token = self.peek()
        if token is None:
            return 0.0
        if token[0] == "op" and token[1] in _OPEN:
            self.take()
            return self.group()
        return self.unary(None)

    def atom(self, closer: str | None) -> float:
        token = self.peek()
        if token is None:
            return 0.0
        kind, value = token
        if kind == "op" and value in ")}]":
            if closer is None:
                self.take()  # a stray closer at the top level: skip it
            return 0.0
        self.take()
        if kind == "num":
            return self.checked(_literal(value), "giant number literal")
        if kind == "op" and value in _OPEN:
            return self.group()
        if value in _CONSTANTS:
            return _CONSTANTS[value]
        if value in _FACTORIALS:
            return self.factorial(self.argument())
        if value in _FRACTIONS:
            return self.checked(self.argument() + self.argument())
        if value in _BINOMIALS:
            token = self.peek()
            if token is not None and token[1] == "(":  # binomial(a, b) / C(a, b): a sum of two parts
                self.take()
                top = self.product(")")
                bottom = 0.0
                if self.peek() == ("op", "+"):
                    self.take()
                    bottom = self.product(")")
                if self.peek() is not None and self.peek()[1] in ")}]":
                    self.take()
                return self.binomial(top, bottom)
            if value == "C":
                return 0.0
            return self.binomial(self.argument(), self.argument())
        if value in ("\\exp", "exp"):
            return self.checked(_value(self.argument()) * _LOGE)
        if kind == "cmd":
            token = self.peek()
            if token is not None and token[0] == "op" and token[1] in _OPEN:
                return self.argument()  # \sqrt{x}, \sin(x), \log(x): at most the argument's size
            return 0.0
        if kind == "op":  # a stray operator (`*` leading, `!` alone, `/`)
            return 0.0
        return 0.0  # a letter: a symbol


# Only these make a value longer than the text that writes it (sums, products and
# fractions of literals have at most as many digits as the text has characters).
_GROWS = re.compile(r"\^|\*\*|!|Γ|gamma|factorial|binom|choose|exp|C\s*\(", re.IGNORECASE)


def size_bound(text: str) -> float:
    """An upper bound on log10 of the largest number `text` makes sympy compute; raises TooBig
    (with the reason) when some sub-expression is past MAX_DIGITS digits or MAX_FACTORIAL!."""
    if len(text) <= MAX_DIGITS and not _GROWS.search(text):
        return float(len(text))  # the cheap case: most answers, and all prose without powers
    reader = _Reader(_tokens(text))
    size = 0.0
    while reader.pos < len(reader.tokens):
        start = reader.pos
        size = max(size, reader.sum())
        if reader.pos == start:
            reader.pos += 1  # a token no rule starts with: skip it
    return size


def too_big(text: str) -> str | None:
    """Why `text` would make sympy compute an enormous number (a short reason), or None."""
    try:
        size_bound(text)
    except TooBig as exc:
        return str(exc)
    except RecursionError:
        return "nesting too deep"
    return None
