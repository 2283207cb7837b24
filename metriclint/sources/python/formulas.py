"""KL estimators and entropies, read off the arithmetic that makes them (rules/code/divergences.yaml,
quantities.yaml).

A difference of two policies' log-probabilities, named so (`log_probs - ref_log_probs`), is a
log-ratio r, and it compares the current policy with the other one. Its sign is read from which
of the two drew the tokens: that one's minus the other's is the k1 estimator, the other way round
its negation; half its square is k2 either way, and exp(r) - 1 - r is k3 when r is the reversed
one (Schulman, "Approximating KL Divergence", 2020; rules/code/divergences.yaml). Only the whole
pattern in one expression counts; anything else about a log-ratio says nothing. An entropy written out is the negated
sum of probabilities times their logarithms, `-(probs * log_probs).sum(-1)`.
"""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.knowledge.code_sections import LogRatios, words_of
from metriclint.sources.python.code_shapes import same_expression

_PROBABILITY_WORDS = ("p", "probs", "prob", "probabilities", "probas")
_LOG_WORDS = ("log_p", "log_probs", "log_prob", "logp", "logps", "logprob", "logprobs", "log_ps")

Names = Callable[[ast.expr], str]  # the name a value is read from, "" if none


def log_ratio(node: ast.BinOp, names: Names, words: LogRatios) -> tuple[str, str] | None:
    """The policies `a - b` compares, when both operands are named as log-probabilities of
    different policies (an unqualified name is the current policy's)."""
    if not isinstance(node.op, ast.Sub):
        return None
    left, right = words.policy(names(node.left)), words.policy(names(node.right))
    if left is None or right is None or left == right:
        return None
    return left, right


def compared(policies: tuple[str, str]) -> str | None:
    """The policy a log-ratio compares the current one with; None when neither is current."""
    if "current" not in policies:
        return None
    return policies[1] if policies[0] == "current" else policies[0]


def half_square(node: ast.BinOp) -> ast.expr | None:
    """r in `0.5 * r ** 2`, `r ** 2 / 2`, `r.pow(2) * 0.5`, `0.5 * r.square()`."""
    if isinstance(node.op, ast.Div) and _number(node.right) == 2:
        return _squared(node.left)
    if isinstance(node.op, ast.Mult):
        for half, square in ((node.left, node.right), (node.right, node.left)):
            if _number(half) == 0.5:
                return _squared(square)
    return None


def exp_minus_one(node: ast.BinOp, exponential: Callable[[ast.expr], ast.expr | None]) -> ast.expr | None:
    """The exp's argument in exp(r) - 1 - r or exp(-r) - 1 + r (`r`, `-r`), terms in any order:
    `exponential` gives the argument of an exp call. Which way round r is decides whether the
    whole is k3 (divergences.yaml), so the argument is returned as written, its sign included."""
    if not isinstance(node.op, (ast.Add, ast.Sub)) or _depth(node.left) + _depth(node.right) != 1:
        return None  # exactly three terms: one of the operands is a sum of two
    terms = _terms(node, 1)
    if len(terms) != 3 or (-1, 1.0) not in ((sign, _number(term)) for sign, term in terms):
        return None
    exps = [(sign, arg) for sign, term in terms if (arg := exponential(term)) is not None]
    rest = [(sign, term) for sign, term in terms if _number(term) is None and exponential(term) is None]
    if len(exps) != 1 or len(rest) != 1 or exps[0][0] != 1:
        return None
    argument, (sign, other) = exps[0][1], rest[0]
    negated = isinstance(argument, ast.UnaryOp) and isinstance(argument.op, ast.USub)
    inner = argument.operand if isinstance(argument, ast.UnaryOp) and negated else argument
    if not same_expression(inner, other) or sign != (1 if negated else -1):
        return None
    return argument


def entropy(node: ast.UnaryOp, words: LogRatios) -> bool:
    """`-(p * log_p).sum(-1)` or `-torch.sum(p * log_p, -1)`, the factors named or computed
    as probabilities (`probs`, `softmax(...)`, `log_p.exp()`) and their logarithms (`log_probs`,
    `log_softmax(...)`, `p.log()`, `torch.log(p)`), in either order."""
    if not isinstance(node.op, ast.USub) or not isinstance(node.operand, ast.Call):
        return False
    total = node.operand
    func = total.func
    if not isinstance(func, ast.Attribute) or func.attr != "sum":
        return False
    product = total.args[0] if isinstance(func.value, ast.Name) and func.value.id == "torch" and total.args else func.value
    if not isinstance(product, ast.BinOp) or not isinstance(product.op, ast.Mult):
        return False
    pairs = ((product.left, product.right), (product.right, product.left))
    return any(_probability(p, logp) and _logarithm(logp, p, words) for p, logp in pairs)


def entropy_product(node: ast.BinOp, words: LogRatios) -> bool | None:
    """`p * log_p` (each factor as `entropy` reads it): True, the negative entropy of the
    elements (Shannon's H carries a minus); with one factor negated, `-p * log_p`, False, the
    entropy. None for any other product."""
    if not isinstance(node.op, ast.Mult):
        return None
    negated = [isinstance(f, ast.UnaryOp) and isinstance(f.op, ast.USub) for f in (node.left, node.right)]
    if all(negated):
        return None
    left, right = (f.operand if isinstance(f, ast.UnaryOp) and n else f for f, n in zip((node.left, node.right), negated))
    if not any(_probability(p, logp) and _logarithm(logp, p, words) for p, logp in ((left, right), (right, left))):
        return None
    return not any(negated)


def root(node: ast.BinOp) -> str | None:
    """Whether `node` raises its base to a fractional power: "constant" for a number between 0
    and 1 (`n ** 0.5`, `n ** (1 / 2)`), "variable" for one over a value the code does not fix
    (`n ** (1 / p)`, `n ** (1. / norm_type)`); None for any other power (`n ** 2`, `n ** p`)."""
    if not isinstance(node.op, ast.Pow):
        return None
    exponent = node.right
    fraction = _number(exponent)
    if fraction is not None:
        return "constant" if 0 < fraction < 1 else None
    if not isinstance(exponent, ast.BinOp) or not isinstance(exponent.op, ast.Div) or _number(exponent.left) != 1:
        return None
    divisor = _number(exponent.right)
    if divisor is None:
        return "variable" if isinstance(exponent.right, (ast.Name, ast.Attribute)) else None
    return "constant" if divisor > 1 else None


def _probability(node: ast.expr, logarithm: ast.expr) -> bool:
    """Whether `node` is the distribution `logarithm` is the logarithm of: the same name with
    its log-probability word swapped (`ref_probs`, `ref_log_probs`), the softmax of the same
    logits, or the exp of the logarithm itself. `teacher_probs * log_probs` is a cross-entropy."""
    if _method(logarithm) == "log":
        return _same(_argument(logarithm), node)
    if isinstance(node, ast.Name) and isinstance(logarithm, ast.Name):
        words, log_words = node.id.lower().split("_"), words_of(logarithm.id)
        kept = [w for w in log_words if w not in _LOG_WORDS]
        return len(kept) == len(log_words) - 1 and words[-1] in _PROBABILITY_WORDS and words[:-1] == kept
    if _method(node) == "exp":
        return _same(_argument(node), logarithm)
    return _method(node) == "softmax" and _method(logarithm) == "log_softmax" and _same(_argument(node), _argument(logarithm))


def _logarithm(node: ast.expr, probability: ast.expr, words: LogRatios) -> bool:
    if isinstance(node, ast.Name):
        return words.policy(node.id) is not None
    if _method(node) == "log":
        return _same(_argument(node), probability)
    return _method(node) == "log_softmax"


def _argument(node: ast.expr) -> ast.expr | None:
    """x in `torch.f(x, ...)` or `x.f(...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    head = node.func.value
    module = isinstance(head, ast.Name) and head.id in ("torch", "F", "functional", "np", "numpy", "math")
    return (node.args[0] if node.args else None) if module else head


def _same(a: ast.expr | None, b: ast.expr | None) -> bool:
    return a is not None and b is not None and same_expression(a, b)


def _method(node: ast.expr) -> str:
    """The name a call ends with: `torch.log_softmax(x)` and `x.log_softmax()` -> `log_softmax`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return ""


def _terms(node: ast.expr, sign: int) -> list[tuple[int, ast.expr]]:
    """A sum as its signed terms: `a - 1 - b` -> [(+1, a), (-1, 1), (-1, b)]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = sign if isinstance(node.op, ast.Add) else -sign
        return _terms(node.left, sign) + _terms(node.right, right)
    return [(sign, node)]


def _depth(node: ast.expr) -> int:
    """How many sums or differences nest in `node` down its left side, up to two."""
    depth = 0
    while depth < 2 and isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        node, depth = node.left, depth + 1
    return depth


def _squared(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right) == 2:
        return node.left
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        if node.func.attr == "square" and not node.args or node.func.attr == "pow" and len(node.args) == 1 and _number(node.args[0]) == 2:
            return node.func.value
    return None


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return None
