"""The Z3 backend of the election algebra: Kafka's election rules run on symbolic values.

`kcm.model.election` writes Kafka's leader-election algorithms, their wrappers and the controller's
ISR shrink over a small collection algebra, `Ops`, as Kafka writes them over Scala collections
(`assignment.find(id => liveReplicas.contains(id) && isr.contains(id))`). `PY` runs them on tuples
and sets. `Z3` below runs the *same* functions on Z3 terms, so that `kcm.checker.proofs` proves
properties of the code the model and the implementation call, not of a transcription of it.

Representation:

- A collection is a `MaskedList`: a fixed number of slots `(present, value)`, a Z3 Bool and a Z3
  Int. Its meaning is the sequence of the values of the present slots, in slot order. Symbolic
  presence gives every subset; symbolic values give every order. `filter` only strengthens the
  masks, so it keeps the length and needs no case split; `ite` on two lists pads the shorter one
  with absent slots and chooses slot by slot.
- An option is an `Option(is_some, value)`. The value of an empty option is a fresh, unconstrained
  constant, never a sentinel such as -1: a property that forgets to test `is_some` then fails
  instead of proving something about a made-up leader.
- Booleans are Z3 Bools, broker ids and epochs Z3 Ints; Python `bool`s and `int`s are accepted
  wherever the concrete backend accepts them (the election functions pass literals such as
  `NO_LEADER`, and `keep_sole_member` stays a Python flag).
- Structures (`LeaderAndIsr`, `ElectionResult`) are the model's own frozen dataclasses with symbolic
  fields; `ite` chooses field by field.

The backend never asks the solver anything: it only builds terms. `concrete` reads a value back from
a Z3 model as the concrete backend would have returned it (a tuple, `None` or an int, a
`LeaderAndIsr` of ints), which is how the proofs print counterexamples and how the tests compare
this backend with `PY` on concrete inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import z3
from kcm.model.election import ElectionResult, LeaderAndIsr

Bool = z3.BoolRef | bool
Int = z3.ArithRef | int


@dataclass(frozen=True, slots=True, eq=False)
class MaskedList:
    """A collection of broker ids: the values of the present slots, in slot order.

    `eq=False`: comparing Z3 terms with `==` builds a term, it does not compare them.
    """

    slots: tuple[tuple[Bool, Int], ...]

    def __len__(self) -> int:
        return len(self.slots)

    @staticmethod
    def of(values: Iterable[Int]) -> MaskedList:
        """A list whose every slot is present (a literal such as `[leader]`)."""
        return MaskedList(tuple((True, v) for v in values))


@dataclass(frozen=True, slots=True, eq=False)
class Option:
    """An optional value: `value` means something only where `is_some` holds."""

    is_some: Bool
    value: Any


def _bool(x: Bool) -> z3.BoolRef:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def and_(*xs: Bool) -> Bool:
    """Conjunction that folds Python constants, so literal masks do not clutter the terms."""
    terms = []
    for x in xs:
        if x is False:
            return False
        if x is not True:
            terms.append(x)
    if not terms:
        return True
    return terms[0] if len(terms) == 1 else z3.And(*terms)


def or_(*xs: Bool) -> Bool:
    terms = []
    for x in xs:
        if x is True:
            return True
        if x is not False:
            terms.append(x)
    if not terms:
        return False
    return terms[0] if len(terms) == 1 else z3.Or(*terms)


def not_(x: Bool) -> Bool:
    return (not x) if isinstance(x, bool) else z3.Not(x)


def implies(a: Bool, b: Bool) -> Bool:
    return or_(not_(a), b)


def eq(a: Int, b: Int) -> Bool:
    # Python ints compare to a Python bool; a Z3 term on either side makes a Z3 term.
    return a == b


def if_(cond: Bool, then: Any, otherwise: Any) -> Any:
    """`z3.If` on scalars, folding a concrete condition and identical branches."""
    if isinstance(cond, bool):
        return then if cond else otherwise
    if then is otherwise:
        return then
    return z3.If(cond, then, otherwise)


def _fresh(hint: str = "none") -> z3.ArithRef:
    return z3.FreshInt(hint)


def _pad(xs: MaskedList, length: int) -> tuple[tuple[Bool, Int], ...]:
    # Absent padding slots: their value is never read, any constant will do.
    return xs.slots + ((False, 0),) * (length - len(xs))


def ite(cond: Bool, then: Any, otherwise: Any) -> Any:
    """If-then-else on any value the election functions build: scalars, lists, options, structures."""
    if isinstance(cond, bool):
        return then if cond else otherwise
    if then is otherwise:
        return then
    if isinstance(then, MaskedList) or isinstance(otherwise, MaskedList):
        length = max(len(then), len(otherwise))
        return MaskedList(tuple((if_(cond, _bool(pa), _bool(pb)), if_(cond, va, vb))
                                for (pa, va), (pb, vb) in zip(_pad(then, length), _pad(otherwise, length))))
    if isinstance(then, Option) or isinstance(otherwise, Option):
        return Option(if_(cond, _bool(then.is_some), _bool(otherwise.is_some)), ite(cond, then.value, otherwise.value))
    if dataclasses.is_dataclass(then) and type(then) is type(otherwise):
        return type(then)(**{f.name: ite(cond, getattr(then, f.name), getattr(otherwise, f.name))
                             for f in dataclasses.fields(then)})
    if isinstance(then, bool) and isinstance(otherwise, bool):
        return z3.If(cond, z3.BoolVal(then), z3.BoolVal(otherwise))
    return z3.If(cond, then, otherwise)


def contains(coll: MaskedList, x: Int) -> Bool:
    return or_(*(and_(p, eq(v, x)) for p, v in coll.slots))


def find(coll: MaskedList, pred: Callable[[Int], Bool]) -> Option:
    """The first present slot whose value satisfies `pred`: an `If` chain from the last slot back."""
    hits = [and_(p, pred(v)) for p, v in coll.slots]
    value: Any = _fresh("found")
    for hit, (_, v) in zip(reversed(hits), reversed(coll.slots)):
        value = if_(hit, v, value)
    return Option(or_(*hits), value)


def size_is_one(coll: MaskedList) -> Bool:
    present = [_bool(p) for p, _ in coll.slots if p is not False]
    if not present:
        return False
    return z3.PbEq([(p, 1) for p in present], 1)


class Z3Ops:
    """`kcm.model.election.Ops` over Z3 terms (see the module docstring for the representation)."""

    contains = staticmethod(contains)
    eq = staticmethod(eq)
    find = staticmethod(find)
    size_is_one = staticmethod(size_is_one)
    ite = staticmethod(ite)

    @staticmethod
    def and_(a: Bool, b: Bool) -> Bool:
        return and_(a, b)

    @staticmethod
    def not_(a: Bool) -> Bool:
        return not_(a)

    @staticmethod
    def head_option(coll: MaskedList) -> Option:
        return find(coll, lambda _: True)

    @staticmethod
    def filter_option(opt: Option, pred: Callable[[Any], Bool]) -> Option:
        return Option(and_(opt.is_some, pred(opt.value)), opt.value)

    @staticmethod
    def or_else(opt: Option, alternative: Callable[[], Option]) -> Option:
        other = alternative()
        return Option(or_(opt.is_some, other.is_some), ite(opt.is_some, opt.value, other.value))

    @staticmethod
    def when(cond: Bool, then: Callable[[], Any]) -> Option:
        result = then()
        if isinstance(result, Option):
            return Option(and_(cond, result.is_some), result.value)
        return Option(cond, result)

    @staticmethod
    def map_option(opt: Option, f: Callable[[Any], Any]) -> Option:
        # `f` runs on the value even when the option is empty: the result is masked by `is_some`.
        result = f(opt.value)
        if isinstance(result, Option):  # PY's map_option returns f's None as None: flatten
            return Option(and_(opt.is_some, result.is_some), result.value)
        return Option(opt.is_some, result)

    @staticmethod
    def filter(coll: MaskedList, pred: Callable[[Int], Bool]) -> MaskedList:
        return MaskedList(tuple((and_(p, pred(v)), v) for p, v in coll.slots))

    @staticmethod
    def singleton(x: Int) -> MaskedList:
        return MaskedList.of((x,))


Z3 = Z3Ops()


# --------------------------------------------------------------------------------------------------
# Set-level helpers for stating properties (not part of `Ops`: the election code never uses them).


def is_empty(coll: MaskedList) -> Bool:
    return not_(or_(*(p for p, _ in coll.slots)))


def subset(a: MaskedList, b: MaskedList) -> Bool:
    """Every member of `a` is a member of `b` (as sets)."""
    return and_(*(implies(p, contains(b, v)) for p, v in a.slots))


def exactly(coll: MaskedList, x: Int) -> Bool:
    """`coll` is the one-element list `[x]`."""
    return and_(size_is_one(coll), contains(coll, x))


def some_and(opt: Option, pred: Callable[[Any], Bool]) -> Bool:
    return and_(opt.is_some, pred(opt.value))


def none_or(opt: Option, pred: Callable[[Any], Bool]) -> Bool:
    return implies(opt.is_some, pred(opt.value))


# --------------------------------------------------------------------------------------------------
# Reading values back from a Z3 model.


def concrete(model: z3.ModelRef, value: Any) -> Any:
    """`value` evaluated in `model`, in the concrete backend's shapes (tuples, None, ints, dataclasses)."""
    if isinstance(value, bool | int) or value is None:
        return value
    if isinstance(value, MaskedList):
        return tuple(concrete(model, v) for p, v in value.slots if concrete(model, p))
    if isinstance(value, Option):
        return concrete(model, value.value) if concrete(model, value.is_some) else None
    if isinstance(value, LeaderAndIsr | ElectionResult):
        return type(value)(**{f.name: concrete(model, getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, z3.BoolRef):
        return z3.is_true(model.eval(value, model_completion=True))
    if isinstance(value, z3.ArithRef):
        return model.eval(value, model_completion=True).as_long()
    if isinstance(value, tuple | list):
        return type(value)(concrete(model, v) for v in value)
    raise TypeError(f"cannot read a {type(value).__name__} back from a Z3 model")
