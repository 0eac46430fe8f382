"""Mutation testing of the model: seed one small fault into the controller or the brokers, explore
the faulty model, and see whether a property notices.

Why: a green verdict only means something if it would have been red had the controller been
wrong. Hardware verification grades its checks by seeding faults into the design (mutation
coverage); this module does that for the model's invariants. Surviving mutants are the
properties' blind spots.

Mutants. They are generated from the model's own source files, as they are now (`MUTABLE_FILES`:
the controller, its state machines, reassignment, topic deletion, the broker side, and the
ZooKeeper and request handling of `world.py`), by operators that mirror how Kafka's controller
bugs looked (`OPERATORS`):

    delete-effect   delete one side-effecting statement: a request added to a batch, a send, a
                    ZooKeeper write, a watch armed or fired, a context update, a reset
    swap-effects    swap two consecutive side-effecting statements of one block
    negate-guard    negate one guard (an `if`, a conditional expression, a comprehension filter)
    drop-guard      drop one guard: a guarded block runs always, an early exit never happens, a
                    filter keeps everything, or one conjunct of an `and` goes
    neighbour-set   replace a recipient or candidate set by its neighbour: live vs online
                    (live and not shutting down), replica online vs online-or-shutting-down,
                    assignment vs ISR, adding vs removing, origin vs target replicas
    skip-refresh    skip a cache refresh: the controller context is not updated from what it read
                    in ZooKeeper, or a local copy of a record is not re-read after a write

Only protocol code is mutated: plumbing (`__init__`, thawing and freezing the context), the
instrumentation the properties read (`obs`, `ghost`, `mark_zk_write`) and the bug-variant switches
(`self.flags.*`, already graded by V1-V9) are left alone. Each mutant is the original source
with one span of lines (a statement) or of characters (an expression) replaced, so its unified
diff (`difflib`) is as small as the change and the comments around it stay.

A mutant's id is `<file>:<line>:<operator>:<ordinal>` (ordinal among the mutants of the same
operator on the same line, from 0): stable as long as that line does not move, and readable in a
report. Generation is deterministic: the same sources give the same mutants in the same order;
`sample(mutants, n, seed)` picks a subset with `random.Random(seed)`.

Running. The clean model is explored once per config, traced (`baselines`): the lines of the
mutated files each expansion ran, and the answer of each expansion. A mutant is then explored on
each config in turn until one kills it, except where an exact shortcut decides the config without a
search: its lines never ran there (skipped), or its successors and observations equal the clean
ones on every clean state where they ran (`same_as_clean`; docs/checking.md gives the argument).
A property kills a mutant; so does a complete search that no longer reaches a known Kafka 2.6
violation the clean model reaches on that config (`KNOWN_LOST`): the model pins 2.6, and its
Findings are behaviour to reproduce, which the tests of the Findings' traces would also catch.
With `Budget.liveness`, a mutant the safety search leaves alive is judged by liveness too
(`_liveness`: `kcm explore --liveness` on the configs where its states differ), so that a
controller re-putting an event forever, which never reaches a state the other properties judge,
is killed by EventuallyQuiescent.

Loading. A mutant is a fresh copy of `kcm.model` under its own package name
(`kcm_mutant_<n>`), built in memory by a meta-path finder: the mutated file, and every model
module that imports it directly or not (so the controller, the spec and the invariants see the
mutated code), are compiled from source under the new name; the other modules (records, tables,
the `Model` contract the checkers test with `isinstance`) are the installed ones, aliased. The
installed `kcm.model` is never touched, and any number of mutants live side by side in one
process (`unload` drops one).
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib.abc
import importlib.util
import itertools
import random
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The files mutated, in the model package (`model/` in the source tree, `kcm.model` installed).
MUTABLE_FILES = ("controller.py", "state_machines.py", "reassignment.py", "topic_deletion.py", "broker.py", "world.py")

OPERATORS = ("skip-refresh", "delete-effect", "swap-effects", "negate-guard", "drop-guard", "neighbour-set")

#: Functions not mutated: plumbing between the immutable state and the step's working copy, the
#: request batch's own bookkeeping, and the observations the properties read.
SKIP_FUNCTIONS = frozenset({
    "__init__", "_thaw", "freeze", "fresh_broker_fields", "mark_zk_write", "_invalid", "is_empty", "clear",
    "topic_of", "partitions_of_topic", "replica_state_machine_startup_order",
})

#: In world.py only the ZooKeeper and request handling is mutated (not the identities).
_WORLD_FUNCTIONS = frozenset({
    "enqueue", "zk_of", "arm", "disarm", "fire", "fire_controller_change", "fire_partition_state", "check_epoch",
    "set_partition_state", "delete_ephemerals", "register_broker", "send", "drop_channel",
})

#: Names whose mention marks a statement or a guard as instrumentation or a variant switch.
_UNTOUCHED_NAMES = frozenset({"obs", "ghost", "flags", "mark_zk_write"})


def model_dir() -> Path:
    """The folder of the installed (or editable) `kcm.model` package."""
    import kcm.model

    return Path(kcm.model.__file__).parent


def read_sources(folder: Path | None = None) -> dict[str, str]:
    """Every `*.py` of the model package and its sub-packages: {path relative to the package
    (`controller.py`, `checking/kafka_model.py`): source}."""
    folder = folder or model_dir()
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.py"))}


@dataclass(frozen=True)
class Mutant:
    """One seeded fault: where, which operator, what it does, and the source with it."""

    id: str
    file: str
    line: int
    operator: str
    ordinal: int
    description: str
    diff: str
    source: str
    #: The lines (first, last) of the original file whose execution the change needs: from the
    #: innermost statement around it to its end. A mutant whose lines never run on a config
    #: explores exactly as the clean model there.
    reach: tuple[int, int] = (0, 0)

    def summary(self) -> dict:
        return {"id": self.id, "file": self.file, "line": self.line, "operator": self.operator,
                "description": self.description}


# ---- generation ------------------------------------------------------------------------------


def _names(node: ast.AST) -> set[str]:
    """Every identifier and attribute name mentioned in `node`."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _untouchable(node: ast.AST) -> bool:
    return bool(_names(node) & _UNTOUCHED_NAMES)


def _target_root(t: ast.AST) -> ast.AST:
    while isinstance(t, (ast.Subscript, ast.Attribute)):
        t = t.value
    return t


def _is_effect(stmt: ast.stmt) -> bool:
    """A statement that changes something outside the function's locals: a call made for its
    effect, or an assignment to an attribute or an element (`self.x = `, `w.zk = `, `rs[p][b] = `)."""
    if _untouchable(stmt):
        return False
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Call)
    if isinstance(stmt, (ast.Assign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        flat = []
        for t in targets:
            flat.extend(t.elts if isinstance(t, ast.Tuple) else [t])
        return any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in flat)
    return False


def _reads_zookeeper(node: ast.AST) -> bool:
    names = _names(node)
    return "zk" in names or "zk_epochs" in names


def _is_context_refresh(stmt: ast.stmt) -> bool:
    """`self.<field> = <something read from ZooKeeper>` (or an element of it): a cache refresh."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign)) or _untouchable(stmt):
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    # A field of the controller's own context (not `self.zk`, `self.brokers`... of the World:
    # those are writes, not a cache).
    fields = []
    for t in targets:
        while isinstance(t, ast.Subscript):
            t = t.value
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
            fields.append(t.attr)
    return bool(fields) and not set(fields) & _WORLD_FIELDS and _reads_zookeeper(stmt.value)


#: The World's own fields: an assignment to one is a write to ZooKeeper, the network or a broker.
_WORLD_FIELDS = frozenset({"zk", "brokers", "net", "spent", "ghost", "obs"})


def _is_exit(body: list[ast.stmt]) -> bool:
    return all(isinstance(s, (ast.Return, ast.Continue, ast.Break, ast.Raise)) for s in body)


class _Site:
    """A place to mutate: a replacement of lines [start, end] (1-based, inclusive) or of a
    character span, with the operator and a one-line description."""

    __slots__ = ("operator", "line", "kind", "span", "text", "description")

    def __init__(self, operator, line, kind, span, text, description):
        self.operator, self.line, self.kind, self.span, self.text, self.description = (
            operator, line, kind, span, text, description)


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _src(lines: list[str], node: ast.AST) -> str:
    """The source text of `node` (columns are UTF-8 byte offsets, as `ast` gives them)."""
    l1, c1, l2, c2 = _span(node)
    if l1 == l2:
        return lines[l1 - 1].encode()[c1:c2].decode()
    first = lines[l1 - 1].encode()[c1:].decode()
    return first + "".join(lines[l1:l2 - 1]) + lines[l2 - 1].encode()[:c2].decode()


class _Collector:
    """Walks the mutable functions of one file and lists the mutation sites of every operator."""

    def __init__(self, file: str, source: str) -> None:
        self.file = file
        self.lines = source.splitlines(keepends=True)
        self.tree = ast.parse(source)
        self.sites: dict[str, list[_Site]] = {op: [] for op in OPERATORS}
        self.statements: list[tuple[int, int]] = []

    def functions(self) -> Iterator[ast.FunctionDef]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef) and node.name in ("RequestBatch", "Strategy"):
                continue
            if isinstance(node, ast.FunctionDef) and node.name not in SKIP_FUNCTIONS:
                if self.file == "world.py" and node.name not in _WORLD_FUNCTIONS:
                    continue
                yield node

    def collect(self) -> dict[str, list[_Site]]:
        for fn in self.functions():
            self.statements.extend((n.lineno, n.end_lineno) for n in ast.walk(fn) if isinstance(n, ast.stmt))
            for block in self._blocks(fn):
                self._statements(fn, block)
            for node in ast.walk(fn):
                if isinstance(node, (ast.If, ast.IfExp)) and not _untouchable(node.test):
                    self._guard(node)
                elif isinstance(node, ast.comprehension):
                    for cond in node.ifs:
                        if not _untouchable(cond):
                            self._filter(cond)
            self._neighbours(fn)
        return self.sites

    @staticmethod
    def _blocks(fn: ast.AST) -> Iterator[list[ast.stmt]]:
        for node in ast.walk(fn):
            for field_name in ("body", "orelse", "finalbody"):
                block = getattr(node, field_name, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    yield block  # (an `except` clause's body is walked as an ExceptHandler node)

    def _line(self, n: int) -> str:
        return self.lines[n - 1]

    def _indent(self, n: int) -> str:
        line = self._line(n)
        return line[: len(line) - len(line.lstrip())]

    def _statements(self, fn, block: list[ast.stmt]) -> None:
        alone = len(block) == 1
        for i, stmt in enumerate(block):
            # One statement per line range: skip `a; b` lines.
            if i and block[i - 1].end_lineno >= stmt.lineno or i + 1 < len(block) and block[i + 1].lineno <= stmt.end_lineno:
                continue
            first = self._line(stmt.lineno).strip().split("#")[0].strip()
            if _is_context_refresh(stmt):
                self._delete(stmt, alone, "skip-refresh", f"skip the cache refresh `{first}` in {fn.name}")
            elif _is_effect(stmt):
                self._delete(stmt, alone, "delete-effect", f"delete `{first}` in {fn.name}")
            elif self._is_reread(block, i):
                self._delete(stmt, alone, "skip-refresh", f"skip the re-read `{first}` in {fn.name}")
            if i + 1 < len(block):
                nxt = block[i + 1]
                if (_is_effect(stmt) and _is_effect(nxt) and stmt.end_lineno < nxt.lineno
                        and ast.dump(stmt) != ast.dump(nxt)):
                    a = "".join(self.lines[stmt.lineno - 1: stmt.end_lineno])
                    b = "".join(self.lines[nxt.lineno - 1: nxt.end_lineno])
                    between = "".join(self.lines[stmt.end_lineno: nxt.lineno - 1])
                    second = self._line(nxt.lineno).strip().split("#")[0].strip()
                    self.sites["swap-effects"].append(_Site(
                        "swap-effects", stmt.lineno, "lines", (stmt.lineno, nxt.end_lineno), b + between + a,
                        f"swap `{first}` and `{second}` in {fn.name}"))

    @staticmethod
    def _is_reread(block: list[ast.stmt], i: int) -> bool:
        """`x = <expr>` where an earlier statement of the same block assigned `x` the same
        expression: a record re-read after a write that may have replaced it."""
        stmt = block[i]
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return False
        name, value = stmt.targets[0].id, ast.dump(stmt.value)
        return any(isinstance(o, ast.Assign) and len(o.targets) == 1 and isinstance(o.targets[0], ast.Name)
                   and o.targets[0].id == name and ast.dump(o.value) == value for o in block[:i])

    def _delete(self, stmt, alone: bool, operator: str, description: str) -> None:
        text = f"{self._indent(stmt.lineno)}pass\n" if alone else ""
        self.sites[operator].append(_Site(operator, stmt.lineno, "lines", (stmt.lineno, stmt.end_lineno), text,
                                          description))

    def _guard(self, node) -> None:
        test = node.test
        cond = _src(self.lines, test)
        short = _short(cond)
        self.sites["negate-guard"].append(_Site("negate-guard", test.lineno, "span", _span(test), f"not ({cond})",
                                                f"negate `{short}`"))
        if isinstance(node, ast.If):
            if _is_exit(node.body) and not node.orelse:
                self.sites["drop-guard"].append(_Site("drop-guard", test.lineno, "span", _span(test), "False",
                                                      f"drop the early exit on `{short}`"))
            elif not node.orelse:
                self.sites["drop-guard"].append(_Site("drop-guard", test.lineno, "span", _span(test), "True",
                                                      f"run the block guarded by `{short}` always"))
        self._conjuncts(test)

    def _filter(self, cond) -> None:
        text = _src(self.lines, cond)
        short = _short(text)
        self.sites["negate-guard"].append(_Site("negate-guard", cond.lineno, "span", _span(cond), f"not ({text})",
                                                f"negate the filter `{short}`"))
        self.sites["drop-guard"].append(_Site("drop-guard", cond.lineno, "span", _span(cond), "True",
                                              f"drop the filter `{short}`"))
        self._conjuncts(cond)

    def _conjuncts(self, test) -> None:
        if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
            return
        for i, value in enumerate(test.values):
            rest = [v for j, v in enumerate(test.values) if j != i]
            text = " and ".join(f"({_src(self.lines, v)})" if isinstance(v, (ast.BoolOp, ast.IfExp, ast.NamedExpr))
                                else _src(self.lines, v) for v in rest)
            short = _short(_src(self.lines, value))
            self.sites["drop-guard"].append(_Site("drop-guard", value.lineno, "span", _span(test), f"({text})",
                                                  f"drop the conjunct `{short}`"))

    def _neighbours(self, fn) -> None:
        for node in ast.walk(fn):
            if _untouchable(node) if isinstance(node, ast.stmt) else False:
                continue
            for text, description in _neighbour_of(node, self.lines):
                self.sites["neighbour-set"].append(_Site("neighbour-set", node.lineno, "span", _span(node), text,
                                                         description))


def _is_self_attr(node, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name)
            and node.value.id == "self" and isinstance(node.ctx, ast.Load))


def _is_self_call(node, name: str) -> bool:
    return isinstance(node, ast.Call) and _is_self_attr(node.func, name)


def _neighbour_of(node, lines) -> list[tuple[str, str]]:
    """The neighbouring sets of `node`, as (replacement text, description); none for most nodes."""
    out = []
    if not isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        return out
    src = _src(lines, node)
    if _is_self_attr(node, "live"):
        out.append(("self.online_mask()", "live-or-shutting-down brokers -> online brokers (`self.live`)"))
    elif _is_self_call(node, "online_mask") and not node.args:
        out.append(("self.live", "online brokers -> live-or-shutting-down brokers (`self.online_mask()`)"))
    elif _is_self_call(node, "live_brokers") and not node.args:
        out.append(("bits(self.online_mask())", "live-or-shutting-down -> online brokers (`self.live_brokers()`)"))
    elif _is_self_call(node, "is_replica_online") and len(node.args) == 1:
        if not node.keywords:
            out.append((f"self.is_replica_online({_src(lines, node.args[0])}, include_shutting_down=True)",
                        f"online -> live-or-shutting-down (`{src}`)"))
        else:
            out.append((f"self.is_replica_online({_src(lines, node.args[0])})",
                        f"live-or-shutting-down -> online (`{src}`)"))
    elif _is_self_call(node, "origin_replicas") and len(node.args) == 1:
        out.append((f"self.target_replicas({_src(lines, node.args[0])})", f"origin -> target replicas (`{src}`)"))
    elif _is_self_call(node, "target_replicas") and len(node.args) == 1:
        out.append((f"self.origin_replicas({_src(lines, node.args[0])})", f"target -> origin replicas (`{src}`)"))
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute):
        holder = node.value
        if isinstance(holder.value, ast.Name) and holder.value.id == "self":
            index = _src(lines, node.slice)
            if holder.attr == "assignment":
                out.append((f"self.leadership[{index}].isr", f"assignment -> ISR (`{src}`)"))
            elif holder.attr == "adding":
                out.append((f"self.removing[{index}]", f"adding -> removing replicas (`{src}`)"))
            elif holder.attr == "removing":
                out.append((f"self.adding[{index}]", f"removing -> adding replicas (`{src}`)"))
    elif (isinstance(node, ast.Attribute) and node.attr == "isr" and isinstance(node.ctx, ast.Load)
          and isinstance(node.value, ast.Name) and node.value.id in ("replica", "part", "mine", "theirs")):
        out.append((f"{node.value.id}.replicas", f"ISR -> replicas (`{src}`)"))
    elif (isinstance(node, ast.Attribute) and node.attr == "replicas" and isinstance(node.ctx, ast.Load)
          and isinstance(node.value, ast.Name) and node.value.id in ("replica", "part")):
        out.append((f"{node.value.id}.isr", f"replicas -> ISR (`{src}`)"))
    return out


def _apply(lines: list[str], site: _Site) -> str:
    if site.kind == "lines":
        start, end = site.span
        return "".join(lines[: start - 1]) + site.text + "".join(lines[end:])
    l1, c1, l2, c2 = site.span
    # Character offsets of ast are in UTF-8 bytes.
    head = "".join(lines[: l1 - 1]) + lines[l1 - 1].encode()[:c1].decode()
    tail = lines[l2 - 1].encode()[c2:].decode() + "".join(lines[l2:])
    return head + f"({site.text})" + tail


def mutants_of(file: str, source: str, operators: Iterable[str] = OPERATORS) -> list[Mutant]:
    """The mutants of one source file, in a fixed order (operator, then position)."""
    wanted = set(operators)
    lines = source.splitlines(keepends=True)
    collector = _Collector(file, source)
    sites = collector.collect()
    statements = collector.statements
    seen = {source}
    out: list[Mutant] = []
    ordinals: dict[tuple[int, str], int] = {}
    stem = file[:-3] if file.endswith(".py") else file
    for op in OPERATORS:
        if op not in wanted:
            continue
        for site in sorted(sites[op], key=lambda s: (s.line, s.span)):
            mutated = _apply(lines, site)
            if mutated in seen:
                continue  # a no-op, or a change another operator already makes
            # (Always valid Python: a span becomes a parenthesized expression, a deleted sole
            # statement becomes `pass`; a swap exchanges whole statements of one block.)
            seen.add(mutated)
            k = (site.line, op)
            ordinal = ordinals.get(k, 0)
            ordinals[k] = ordinal + 1
            diff = "".join(difflib.unified_diff(lines, mutated.splitlines(keepends=True),
                                                f"a/model/{file}", f"b/model/{file}", n=2))
            last = site.span[1] if site.kind == "lines" else site.span[2]
            first = max((a for a, b in statements if a <= site.line <= b), default=site.line)
            out.append(Mutant(f"{stem}:{site.line}:{op}:{ordinal}", file, site.line, op, ordinal,
                              site.description, diff, mutated, (min(first, site.line), max(last, site.line))))
    return out


def generate(sources: Mapping[str, str] | None = None, files: Iterable[str] | None = None,
             operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of the mutable files (or `files`) by every operator (or `operators`)."""
    sources = sources if sources is not None else read_sources()
    files = tuple(files) if files else MUTABLE_FILES
    ops = tuple(operators) if operators else OPERATORS
    out = []
    for f in MUTABLE_FILES:
        if f in files and f in sources:
            out.extend(mutants_of(f, sources[f], ops))
    return out


def sample(mutants: list[Mutant], n: int | None, seed: int = 0) -> list[Mutant]:
    """`n` mutants picked with `random.Random(seed)`, in generation order; all of them if `n` is None."""
    if n is None or n >= len(mutants):
        return list(mutants)
    chosen = set(random.Random(seed).sample(range(len(mutants)), n))
    return [m for i, m in enumerate(mutants) if i in chosen]


# ---- loading ---------------------------------------------------------------------------------

_IMPORT = re.compile(r"\b(from|import)(\s+)kcm\.model\b")
#: The module that defines `KafkaModel`, which a loaded mutant exposes.
MODEL_MODULE = "checking/kafka_model.py"
_counter = itertools.count()
_lock = threading.Lock()


def _module_of(file: str) -> str:
    """The module name, relative to the model package, of a source file (`checking/codec.py` ->
    `checking.codec`; a package's `__init__.py` -> the package)."""
    parts = file[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_of(module: str, files: Iterable[str]) -> str | None:
    """The source file of a module name relative to the model package, among `files`."""
    path = module.replace(".", "/")
    for candidate in (f"{path}.py", f"{path}/__init__.py"):
        if candidate in files:
            return candidate
    return None


def _imports_of(source: str, files: Iterable[str]) -> set[str]:
    """The model modules (source files among `files`) `source` imports."""
    files = set(files)
    out = set()

    def add(module: str) -> None:
        f = _file_of(module, files)
        if f is not None:
            out.add(f)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith("kcm.model."):
            base = node.module[len("kcm.model."):]
            if base:
                add(base)
            for a in node.names:  # `from kcm.model.checking import codec` imports a module
                add(f"{base}.{a.name}" if base else a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kcm.model."):
                    add(a.name[len("kcm.model."):])
    return out


def dependents(sources: Mapping[str, str], file: str) -> set[str]:
    """`file` and every model module that imports it, directly or not."""
    deps = {f: _imports_of(s, sources) for f, s in sources.items()}
    out = {file}
    changed = True
    while changed:
        changed = False
        for f, imported in deps.items():
            if f not in out and imported & out:
                out.add(f)
                changed = True
    return out


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one mutant package and its own modules, compiled from source under the new name."""

    def __init__(self, package: str, compiled: dict[str, str], packages: set[str]) -> None:
        self.package = package
        self.compiled = compiled  # module name (relative to the package) -> source
        self.packages = packages  # the names in `compiled` that are packages (their `__init__.py`)

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.package:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        name = fullname[len(self.package) + 1:] if fullname.startswith(self.package + ".") else None
        if name in self.compiled:
            return importlib.util.spec_from_loader(fullname, self, origin=f"<mutant {self.package}>/{name}.py",
                                                   is_package=name in self.packages)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == self.package:
            module.__path__ = []
            return
        name = module.__name__[len(self.package) + 1:]
        if name in self.packages:
            module.__path__ = []
        code = compile(self.compiled[name], f"<mutant {self.package}>/{name}.py", "exec")
        exec(code, module.__dict__)


@dataclass
class LoadedMutant:
    """A mutant package in `sys.modules`; `spec` is its module of `KafkaModel`."""

    package: str
    spec: object
    finder: _Finder


def load(mutant_source: str | None, file: str | None, sources: Mapping[str, str] | None = None) -> LoadedMutant:
    """Import a copy of the model with `file` replaced by `mutant_source` (None: an unmodified
    copy) under a new package name; returns it with its `KafkaModel` module."""
    sources = dict(sources if sources is not None else read_sources())
    if file is not None:
        sources[file] = mutant_source
    own = dependents(sources, file) if file is not None else set(sources)
    own.add(MODEL_MODULE)
    # A sub-package of an own module is own too: aliasing it to the installed one would make the
    # import of the mutant's submodule set an attribute on the installed package.
    for f in list(own):
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            own.add("/".join(parts[:i]) + "/__init__.py")
    with _lock:
        package = f"kcm_mutant_{next(_counter)}_{hashlib.blake2b((mutant_source or '').encode(), digest_size=4).hexdigest()}"
    compiled = {_module_of(f): _IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}{package}", sources[f])
                for f in own if f != "__init__.py"}
    packages = {_module_of(f) for f in own if f.endswith("/__init__.py")}
    finder = _Finder(package, compiled, packages)
    # The modules the mutant does not change are the installed ones, under the mutant's name too.
    for f in sources:
        if f not in own and f != "__init__.py":
            module = _module_of(f)
            sys.modules[f"{package}.{module}"] = importlib.import_module(f"kcm.model.{module}")
    sys.meta_path.insert(0, finder)
    try:
        spec = importlib.import_module(f"{package}.{_module_of(MODEL_MODULE)}")
    except BaseException:
        unload(LoadedMutant(package, None, finder))
        raise
    return LoadedMutant(package, spec, finder)


def unload(loaded: LoadedMutant) -> None:
    """Forget a mutant package: its modules leave `sys.modules` (the aliased installed ones stay)."""
    try:
        sys.meta_path.remove(loaded.finder)
    except ValueError:
        pass
    prefix = loaded.package + "."
    for name in [n for n in sys.modules if n == loaded.package or n.startswith(prefix)]:
        del sys.modules[name]


# ---- running ---------------------------------------------------------------------------------

KILLED, SURVIVED, EQUIVALENT, CRASHED, TIMED_OUT = "killed", "survived", "equivalent", "crashed", "timed_out"
STATUSES = (KILLED, CRASHED, SURVIVED, EQUIVALENT, TIMED_OUT)


@dataclass(frozen=True)
class Budget:
    """What one mutant may cost: distinct states per config and seconds in all (None: no bound)."""

    max_states: int | None = None
    timeout_s: float | None = None
    #: Random walks per config instead of exhaustive search (for configs too big to explore):
    #: `walks` walks of at most `depth` steps, seeded by `seed`. A walk finds violations but
    #: proves nothing, so a mutant no walk kills is `survived`, never `equivalent`.
    walks: int | None = None
    depth: int = 50
    seed: int = 0
    #: Judge a mutant that survives the safety search by liveness too (`_liveness`): on every
    #: config where its states differ from the clean model's, explore it modulo controller epochs
    #: and check EventuallyQuiescent, EventuallySettled and QuiescenceAlwaysReachable.
    liveness: bool = False


@dataclass(frozen=True)
class Baseline:
    """The clean model on one config: its distinct-state count and the digest of its sorted
    fingerprint set (None when the budget cut the clean run short: equivalence cannot be judged)."""

    config: str
    distinct: int
    digest: str | None
    #: {file: lines of the mutable files the clean run executed}.
    covered: Mapping[str, frozenset[int]] | None = None
    #: What deciding a mutant without a search needs (`CleanGraph`); None for walks or a cut run.
    graph: CleanGraph | None = None
    #: The known Kafka 2.6 violations the complete clean run reached (None for walks or a cut run).
    known: frozenset[str] | None = None
    #: With `Budget.liveness`: the liveness properties the clean model breaks here (a livelock 2.6
    #: itself has is no kill); None when liveness is not judged on this config (off, or undecided).
    live: frozenset[str] | None = None

    def reaches(self, mutant: Mutant) -> bool:
        """Whether the clean run executed a line of `mutant.reach` (True when unknown)."""
        if self.covered is None:
            return True
        lines = self.covered.get(mutant.file, frozenset())
        first, last = mutant.reach
        return any(n in lines for n in range(first, last + 1))


@dataclass(frozen=True)
class CleanGraph:
    """The clean exploration of one config, kept to decide a mutant without searching.

    `states` are the states the explorer expanded, in its order (encoded with the model's codec),
    `successors[i]` the digest of what the clean model's `successors` and `observe` answered on
    `states[i]` (each action, its next state's fingerprint and the step's observations), and
    `by_line[(file, line)]` a bitmap of the states whose expansion executed that line of a
    mutable file. `inits` are the initial states (encoded), `init_lines` the lines the
    initial states' computation executed, `other_lines` those executed anywhere else (the
    properties, quiescence, building the model): the explorer's run of a mutant whose changed
    lines fall there is not decided by the successors alone, so it is searched."""

    states: tuple[bytes, ...]
    successors: tuple[bytes, ...]
    by_line: Mapping[tuple[str, int], int]
    inits: tuple[bytes, ...]
    init_lines: frozenset[tuple[str, int]]
    other_lines: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class Outcome:
    """What exploring one mutant gave. `property`, `trace_length` and `config` name the kill (or,
    for a crash, the config it crashed on); `error` is a crash's exception."""

    id: str
    file: str
    line: int
    operator: str
    status: str
    property: str | None = None
    trace_length: int | None = None
    config: str | None = None
    distinct: int = 0
    seconds: float = 0.0
    error: str | None = None
    #: For an equivalent mutant: "unreached" when its lines never ran on any config.
    note: str | None = None
    #: Configs explored by a search, and configs decided without one (the mutant's successors
    #: equal the clean model's on every clean state where its lines run): not part of `row`, an
    #: account of the work, not of the verdict.
    searched: int = 0
    compared: int = 0
    #: CPU seconds of the process that ran the mutant (`time.process_time()`), for the benchmarks.
    cpu: float = 0.0

    def row(self) -> tuple:
        """Everything but the time: what two engines (or two runs) must agree on."""
        return (self.id, self.status, self.property, self.trace_length, self.config, self.distinct, self.error,
                self.note)

    def to_json(self) -> dict:
        return {"id": self.id, "file": self.file, "line": self.line, "operator": self.operator,
                "status": self.status, "property": self.property, "trace_length": self.trace_length,
                "config": self.config, "distinct_states": self.distinct, "seconds": round(self.seconds, 3),
                "error": self.error, "note": self.note,
                "searched": self.searched, "compared": self.compared, "cpu_seconds": round(self.cpu, 3)}


class _Cut(Exception):
    pass


def _fingerprints_digest(fps: set[bytes]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for fp in sorted(fps):
        h.update(fp)
    return h.hexdigest()


def _explore_within(model, budget: Budget, deadline: float | None, **options):
    """`explore(model, **options)` stopped when the budget is spent (more distinct states than
    `max_states`, or past `deadline`). Returns (CheckResult, cut short?); a real interruption
    (Ctrl-C) is raised again."""
    import time

    from kcm.checker.engine.bfs import explore

    cut = [False]

    def progress(p) -> None:
        if p.phase == "final":
            return  # the run is over: nothing left to cut
        if ((budget.max_states is not None and p.distinct > budget.max_states)
                or (deadline is not None and time.monotonic() > deadline)):
            cut[0] = True
            raise KeyboardInterrupt  # the explorer's own way to stop early: the verdict is incomplete

    watch = budget.max_states is not None or deadline is not None
    result = explore(model, progress=progress if watch else None, progress_interval=0.0, **options)
    if result.verdict == "incomplete" and not cut[0]:
        raise KeyboardInterrupt  # a real interruption
    return result, cut[0]


def explore_with_budget(model, budget: Budget, deadline: float | None = None):
    """Explore `model` with every property (as `kcm explore` does), stopping at the first
    violation or when the budget is spent. Returns (CheckResult, digest of the fingerprint set or
    None if cut short, cut short?)."""
    seen: set[bytes] = set()
    fingerprint = model.fingerprint

    def recording(state):
        fp = fingerprint(state)
        seen.add(fp)
        return fp

    model.fingerprint = recording  # the explorer fingerprints every state it generates
    result, _ = _explore_within(model, budget, deadline)
    complete = result.verdict != "incomplete"
    return result, (_fingerprints_digest(seen) if complete else None), not complete


@dataclass(frozen=True)
class _WalkResult:
    """What `random_walks` found, shaped like the part of a CheckResult the runner reads."""

    verdict: str
    violations: tuple
    distinct: int

    @property
    def stats(self):
        return self


@dataclass(frozen=True)
class _WalkViolation:
    name: str
    trace_length: int


def random_walks(model, budget: Budget, deadline: float | None = None) -> _WalkResult:
    """`budget.walks` random walks of at most `budget.depth` steps (walk i seeded by
    `random.Random(f"kcm-mutate:{seed}:{i}")`), checking every `Always` on each state, every
    `AlwaysStep` on each step and deadlocks, as `kcm explore --simulate` does (goals need a
    complete search and are not checked). Stops at the first violation."""
    import time

    from kcm.checker.engine.bfs import select_properties
    from kcm.checker.engine.contract import Always, AlwaysStep

    props, deadlock = select_properties(model, None)
    always = [p for p in props if isinstance(p, Always)]
    steps = [p for p in props if isinstance(p, AlwaysStep)]
    seen: set[bytes] = set()
    inits = model.init_states()
    for i in range(budget.walks or 0):
        if deadline is not None and time.monotonic() > deadline:
            return _WalkResult("incomplete", (), len(seen))
        rng = random.Random(f"kcm-mutate:{budget.seed}:{i}")
        state = inits[rng.randrange(len(inits))]
        seen.add(model.fingerprint(state))
        bad = next((p for p in always if not p.holds(state)), None)
        if bad is not None:
            return _WalkResult("violation", (_WalkViolation(bad.name, 0),), len(seen))
        for step in range(1, budget.depth + 1):
            successors = list(model.successors(state))
            if not successors:
                if deadlock and not model.is_terminal(state):
                    return _WalkResult("violation", (_WalkViolation("deadlock", step - 1),), len(seen))
                break
            a, t = successors[rng.randrange(len(successors))]
            bad = next((p for p in steps if not p.holds(state, a, t)), None) or next(
                (p for p in always if not p.holds(t)), None)
            if bad is not None:
                return _WalkResult("violation", (_WalkViolation(bad.name, step),), len(seen))
            state = t
            seen.add(model.fingerprint(state))
    return _WalkResult("pass", (), len(seen))


def baselines(configs: list[tuple[str, object]], budget: Budget) -> list[Baseline]:
    """The clean model on every config; a config on which it does not pass is a usage error.

    Each exhaustive clean run is traced (`_LineCoverage`): the lines of the mutable files it
    executed, and what deciding a mutant without a search needs (`CleanGraph`)."""
    from kcm.checker.engine.errors import UsageError
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm import compiled

    if compiled.compiled_among([f"kcm.model.{f[:-3]}" for f in MUTABLE_FILES]):
        # _LineCoverage sees no line of compiled code: every mutant would look unreached.
        raise UsageError("mutation testing traces the model's source lines: run it with "
                         f"{compiled.PURE_ENV}=1 (kcm mutate restarts itself so)")
    out = []
    for name, cfg in configs:
        if budget.walks:
            result = random_walks(KafkaModel(cfg), budget)
            if result.verdict == "violation":
                v = result.violations[0]
                raise UsageError(f"the clean model violates {v.name} on '{name}': mutants need a config it passes")
            out.append(Baseline(name, result.distinct, None, None))
            continue
        with _LineCoverage() as cov:
            model = KafkaModel(cfg)
            recorder = _CleanRecorder(model, cov)
            result, digest, cut = explore_with_budget(model, budget)
        if result.verdict == "violation":
            v = result.violations[0]
            raise UsageError(f"the clean model violates {v.name} on '{name}': mutants need a config it passes")
        if cut:
            out.append(Baseline(name, result.stats.distinct, None, None))
        else:
            graph = recorder.graph()
            live = None
            if budget.liveness:
                from kcm.model.checking.epoch_quotient import EpochQuotientModel
                clean = _liveness(EpochQuotientModel(cfg), budget)
                live = None if clean is None else frozenset(v.name for v in clean.violations)
            out.append(Baseline(name, result.stats.distinct, digest, _lines_of(graph), graph,
                                frozenset(v.name for v in result.known_violations), live))
    return out


def _liveness(model, budget: Budget, deadline: float | None = None):
    """The liveness pass of `kcm explore --liveness` on `model` (an `EpochQuotientModel`): the
    graph explored modulo controller epochs, no safety property, then `check_liveness`. None when
    the budget cut the graph (a partial graph proves nothing). Components the checker leaves
    undecided (a bound pruned a healing step on them) are not violations, as in `kcm explore`."""
    from kcm.checker.engine.liveness import check_liveness

    result, cut = _explore_within(model, budget, deadline, symmetry=False, keep_graph=True, stop_on_violation=False,
                                  properties=(), check_deadlock=False, goals_required=False, table_coverage=False)
    if cut:
        return None
    live = check_liveness(model, result.extra.get("graph"))
    return live if live.verdict != "not checked" else None


def _successors_digest(model, state, successors) -> bytes:
    """What `model` answered on `state`: each action, its next state's fingerprint, and the
    step's observations (`observe`, which the properties read), in order."""
    h = hashlib.blake2b(digest_size=16)
    fingerprint = type(model).fingerprint  # the model's own, not a checker's wrapper
    for a, t in successors:
        h.update(repr(a).encode())
        h.update(b"\0")
        h.update(fingerprint(model, t))
        h.update(repr(model.observe(state, a)).encode())
        h.update(b"\1")
    return h.digest()


class _CleanRecorder:
    """Wraps a clean model's `successors` and `init_states` while the explorer runs it: keeps
    each expanded state with the digest of its successors, and switches the line coverage so that
    the lines each expansion executes are attributed to that state (`CleanGraph`)."""

    def __init__(self, model, cov: _LineCoverage) -> None:
        self.model, self.cov = model, cov
        self.states: list[bytes] = []
        self.digests: list[bytes] = []
        self.by_line: dict[tuple[str, int], list[int]] = {}
        self.inits: tuple[bytes, ...] = ()
        self.init_lines: set = set()
        self.index: dict[bytes, int] = {}
        successors, init_states, observe = model.successors, model.init_states, model.observe
        fingerprint = type(model).fingerprint

        def recorded_successors(state):
            lines: set = set()
            cov.sink = lines
            try:
                out = successors(state)
            finally:
                cov.sink = cov.other
            i = len(self.states)
            self.states.append(model.encode_state(state))
            self.digests.append(_successors_digest(model, state, out))
            self.index.setdefault(fingerprint(model, state), i)
            for key in lines:
                self.by_line.setdefault(key, []).append(i)
            return out

        def recorded_observe(state, action):
            # A property asks what a step observed; the model answers from the expansion it
            # cached, or (when a property expanded another state in between) steps again. That
            # step is the one the expansion of `state` took: its lines are that state's.
            lines: set = set()
            previous, cov.sink = cov.sink, lines
            try:
                obs = observe(state, action)
            finally:
                cov.sink = previous
            if lines:
                i = self.index.get(fingerprint(model, state))
                if i is None:
                    previous.update(lines)
                else:
                    for key in lines:
                        indices = self.by_line.setdefault(key, [])
                        if not indices or indices[-1] != i:
                            indices.append(i)
            return obs

        def recorded_inits():
            cov.sink = self.init_lines
            try:
                inits = init_states()
            finally:
                cov.sink = cov.other
            self.inits = tuple(model.encode_state(s) for s in inits)
            return inits

        model.successors = recorded_successors
        model.init_states = recorded_inits
        model.observe = recorded_observe
        # The properties were given the model's `observe` when it was built: give them this one.
        from kcm.model.invariants import properties_for

        model._properties = properties_for(model.cfg, recorded_observe)

    def graph(self) -> CleanGraph:
        by_line = {}
        for key, indices in self.by_line.items():
            bitmap = 0  # (indices are not always ascending: `recorded_observe` adds late ones)
            for i in indices:
                bitmap |= 1 << i
            by_line[key] = bitmap
        return CleanGraph(tuple(self.states), tuple(self.digests), by_line, self.inits,
                          frozenset(self.init_lines), frozenset(self.cov.other))


class _LineCoverage:
    """The lines of the mutable files executed while it is active (`sys.settrace`, line events
    only in frames of those files, so the rest of the explorer runs at nearly full speed), as
    (file, line) pairs added to `sink` (by default `other`; `_CleanRecorder` points it at the set
    of the state being expanded).

    Why not coverage.py: the baseline needs the lines of each expanded state apart (tens of
    thousands of "contexts" per config, kept in memory as bitmaps), not one report per run; a
    tracer limited to six files is thirty lines and costs the clean runs about two seconds."""

    def __init__(self) -> None:
        folder = str(model_dir())
        self.files = {str(Path(folder) / f): f for f in MUTABLE_FILES}
        self.other: set[tuple[str, int]] = set()
        self.sink = self.other
        self._all: list[set] = []
        self._previous = None

    def __enter__(self):
        files = self.files

        def local(frame, event, arg):
            if event == "line":
                self.sink.add((files[frame.f_code.co_filename], frame.f_lineno))
            return local

        def global_(frame, event, arg):
            name = frame.f_code.co_filename
            if name in files:
                self.sink.add((files[name], frame.f_lineno))
                return local
            return None

        self._previous = sys.gettrace()
        sys.settrace(global_)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._previous)


def _lines_of(g: CleanGraph) -> dict[str, frozenset[int]]:
    """{file: every line the clean run executed}: of the expansions, the initial states and the rest."""
    out: dict[str, set[int]] = {f: set() for f in MUTABLE_FILES}
    for f, n in itertools.chain(g.by_line, g.init_lines, g.other_lines):
        out[f].add(n)
    return {f: frozenset(v) for f, v in out.items()}


def same_as_clean(loaded: LoadedMutant, cfg, base: Baseline, mutant: Mutant, deadline: float | None = None) -> bool:
    """Whether the mutant explores `cfg` exactly as the clean model did, decided without a search.

    The mutant's code differs from the clean code only in the lines of `mutant.reach`. On a clean
    state whose clean expansion never executed those lines, the mutant's expansion takes the same
    path and gives the same successors and observations (the model is deterministic, over
    immutable values); so it is enough to run the mutant's `successors` on the clean states where
    those lines ran (and its `init_states`, if they ran there) and compare. If all agree, induction
    over the explorer's breadth-first order shows the mutant's run expands the very states of the
    clean run, with the same edges, observations and property verdicts (the properties and the
    quiescence test never executed those lines: `other_lines`), so its verdict, state count and
    fingerprint set are the clean ones. Any difference, an exception, or the deadline: False, and
    the caller searches as before (so a False never changes an outcome)."""
    import time

    g = base.graph
    if g is None or deadline is not None and time.monotonic() > deadline:
        return False
    first, last = mutant.reach
    keys = [(mutant.file, n) for n in range(first, last + 1)]
    if any(k in g.other_lines for k in keys):
        return False
    try:
        model = loaded.spec.KafkaModel(cfg)
        if any(k in g.init_lines for k in keys):
            if tuple(model.encode_state(s) for s in model.init_states()) != g.inits:
                return False
        bitmap = 0
        for k in keys:
            bitmap |= g.by_line.get(k, 0)
        # The states to compare, in the explorer's order (the set bits of the bitmap).
        indices = [i for i, bit in enumerate(reversed(bin(bitmap)[2:])) if bit == "1"] if bitmap else []
        for checked, i in enumerate(indices, 1):
            state = model.decode_state(g.states[i])
            if _successors_digest(model, state, model.successors(state)) != g.successors[i]:
                return False
            if deadline is not None and (checked & 63) == 0 and time.monotonic() > deadline:
                return False
    except Exception:  # noqa: BLE001 - the search will report what the mutant raises
        return False
    return True


def run_mutant(mutant: Mutant, configs: list[tuple[str, object]], bases: list[Baseline], budget: Budget,
               sources: Mapping[str, str] | None = None) -> Outcome:
    """Explore one mutant on each config in turn until one kills it (`_run_mutant`), with its CPU time."""
    import dataclasses
    import time

    cpu, started = time.process_time(), time.monotonic()
    with _Alarm(None if budget.timeout_s is None else budget.timeout_s + _ALARM_GRACE_S):
        try:
            outcome = _run_mutant(mutant, configs, bases, budget, sources)
        except _Overrun:
            # A step that never returns (a negated retry condition loops forever inside one
            # event): the cooperative deadline, checked between states, cannot stop it.
            outcome = Outcome(mutant.id, mutant.file, mutant.line, mutant.operator, TIMED_OUT,
                              error="a step did not return within the timeout", seconds=time.monotonic() - started)
    return dataclasses.replace(outcome, cpu=time.process_time() - cpu)


#: Seconds past `--timeout` before the alarm interrupts a mutant stuck inside one step.
_ALARM_GRACE_S = 5.0

#: The "property" of a mutant killed because it no longer reaches a known 2.6 violation.
KNOWN_LOST = "KnownViolationReproduced"


class _Overrun(BaseException):
    """Raised by `_Alarm` in the middle of the mutant's code: a BaseException, so that the model's
    own `except Exception` clauses cannot swallow it."""


class _Alarm:
    """`signal.setitimer` for the main thread (the sequential engine, a Spark Python worker);
    elsewhere (a thread) nothing, and only the cooperative deadline applies."""

    def __init__(self, seconds: float | None) -> None:
        import signal

        self.seconds = seconds
        self.armed = (seconds is not None and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread())
        self.previous = None

    def __enter__(self):
        if self.armed:
            import signal

            def ring(signum, frame):
                raise _Overrun()

            self.previous = signal.signal(signal.SIGALRM, ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def _run_mutant(mutant: Mutant, configs: list[tuple[str, object]], bases: list[Baseline], budget: Budget,
                sources: Mapping[str, str] | None = None) -> Outcome:
    """Explore one mutant on each config in turn until one kills it.

    A config where the clean run never executed the mutated lines is skipped (the mutant explores
    it exactly as the clean model did); one where the mutant's successors equal the clean ones on
    every clean state is decided without a search (`same_as_clean`): it passes, with the clean
    state count and fingerprint set. A mutant skipped on every config is an equivalent suspect,
    "unreached"; one decided without a search on every config it reaches, an equivalent suspect."""
    import time

    started = time.monotonic()
    deadline = started + budget.timeout_s if budget.timeout_s is not None else None
    common = dict(id=mutant.id, file=mutant.file, line=mutant.line, operator=mutant.operator)
    loaded = None
    distinct = 0
    same = True
    cut_any = False
    searched = compared = 0
    differs: list[int] = []  # the configs where the mutant's states are not the clean model's
    try:
        if not any(base.reaches(mutant) for base in bases):
            return Outcome(**common, status=EQUIVALENT, note="unreached", seconds=time.monotonic() - started)
        try:
            loaded = load(mutant.source, mutant.file, sources)
        except Exception as exc:  # noqa: BLE001 - any failure of the mutant is its outcome
            return Outcome(**common, status=CRASHED, config=configs[0][0], error=_error(exc),
                           seconds=time.monotonic() - started)
        reached = [base.reaches(mutant) for base in bases]
        for i, ((name, cfg), base, reach) in enumerate(zip(configs, bases, reached)):
            if not reach:
                continue  # the mutated lines never run here: the exploration is the clean one
            if not budget.walks and same_as_clean(loaded, cfg, base, mutant, deadline):
                distinct += base.distinct  # what the search would have found: the clean graph
                compared += 1
                continue
            searched += 1
            try:
                model = loaded.spec.KafkaModel(cfg)
                if budget.walks:
                    result = random_walks(model, budget, deadline)
                    digest, cut = None, result.verdict == "incomplete"
                else:
                    result, digest, cut = explore_with_budget(model, budget, deadline)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # noqa: BLE001
                return Outcome(**common, status=CRASHED, config=name, error=_error(exc), distinct=distinct,
                               seconds=time.monotonic() - started, searched=searched, compared=compared)
            distinct += result.stats.distinct
            if result.verdict == "violation":
                v = result.violations[0]
                return Outcome(**common, status=KILLED, property=v.name, trace_length=v.trace_length, config=name,
                               distinct=distinct, seconds=time.monotonic() - started, searched=searched,
                               compared=compared)
            if cut:
                cut_any = True
                if deadline is not None and time.monotonic() > deadline:
                    break
                continue
            # The model pins Kafka 2.6, whose known violations (model/findings.py) are behaviour to
            # reproduce, not only to excuse: a mutant whose complete search no longer reaches one
            # the clean model reaches on this config has lost a documented 2.6 behaviour (e.g. a
            # StopReplica fenced at the equal leader epoch, Findings 8). Random walks are no complete
            # search: a walk that missed a Finding says nothing about the mutant.
            lost = [] if budget.walks else sorted(
                (base.known or frozenset()) - {v.name for v in result.known_violations})
            if lost:
                return Outcome(**common, status=KILLED, property=f"{KNOWN_LOST}({lost[0]})", config=name,
                               distinct=distinct, seconds=time.monotonic() - started, searched=searched,
                               compared=compared)
            if base.digest is None or (result.stats.distinct, digest) != (base.distinct, base.digest):
                same = False
                differs.append(i)
        if budget.liveness and not cut_any and not same:
            # Safety found nothing: a mutant that makes the controller re-put an event forever (a
            # znode never deleted, its own write firing its own watch) never reaches a state a
            # settled or quiescence property judges, and only liveness sees it. Judged where the
            # mutant's states differ and the clean model's liveness is known; a livelock the
            # clean model has too is no kill.
            for i in differs:
                (name, cfg), base = configs[i], bases[i]
                if base.live is None:
                    continue
                try:
                    quotient = importlib.import_module(f"{loaded.package}.checking.epoch_quotient")
                    live = _liveness(quotient.EpochQuotientModel(cfg), budget, deadline)
                except KeyboardInterrupt:
                    raise
                except Exception as exc:  # noqa: BLE001
                    return Outcome(**common, status=CRASHED, config=name, error=_error(exc), distinct=distinct,
                                   seconds=time.monotonic() - started, searched=searched, compared=compared)
                if live is None:
                    if deadline is not None and time.monotonic() > deadline:
                        cut_any = True
                        break
                    continue  # undecided here (the bound cut its graph): the safety verdict stands
                new = [v for v in live.violations if v.name not in base.live]
                if new:
                    return Outcome(**common, status=KILLED, property=new[0].name, trace_length=new[0].trace_length,
                                   config=name, distinct=distinct, seconds=time.monotonic() - started,
                                   searched=searched, compared=compared)
        status = TIMED_OUT if cut_any else (EQUIVALENT if same else SURVIVED)
        return Outcome(**common, status=status, distinct=distinct, seconds=time.monotonic() - started,
                       searched=searched, compared=compared)
    finally:
        if loaded is not None:
            unload(loaded)


def _error(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:200] if first else type(exc).__name__


def run_local(mutants: list[Mutant], configs, bases, budget: Budget, sources=None, on_done=None,
              collect: list | None = None) -> list[Outcome]:
    """The sequential engine: one mutant after the other, in order (appended to `collect`, so
    that an interrupted run keeps what it did)."""
    out = collect if collect is not None else []
    for m in mutants:
        o = run_mutant(m, configs, bases, budget, sources)
        out.append(o)
        if on_done is not None:
            on_done(o)
    return out


# ---- rebuilding a mutant from its id (on a Spark executor) --------------------------------------

_generated: dict[tuple, dict[str, Mutant]] = {}


def mutant_by_id(sources: Mapping[str, str], mutant_id: str, files=None, operators=None) -> Mutant:
    """The mutant `mutant_id` among those `generate` makes from `sources` (cached per sources)."""
    key = (hashlib.blake2b(repr(sorted(sources.items())).encode(), digest_size=16).digest(),
           tuple(files or ()), tuple(operators or ()))
    table = _generated.get(key)
    if table is None:
        table = {m.id: m for m in generate(sources, files, operators)}
        _generated.clear()
        _generated[key] = table
    return table[mutant_id]


# ---- the score and what a reviewer reads ----------------------------------------------------------


def score(outcomes: Iterable[Outcome]) -> float | None:
    """killed / (total - equivalent); crashed mutants count as killed. None if nothing to score."""
    outcomes = list(outcomes)
    killed = sum(o.status in (KILLED, CRASHED) for o in outcomes)
    judged = len(outcomes) - sum(o.status == EQUIVALENT for o in outcomes)
    return killed / judged if judged else None


def tally(outcomes: Iterable[Outcome], key: str) -> dict[str, dict[str, int]]:
    """{file or operator: {status: count, "total": n}}, sorted by key."""
    out: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = out.setdefault(getattr(o, key), {s: 0 for s in STATUSES} | {"total": 0})
        row[o.status] += 1
        row["total"] += 1
    return dict(sorted(out.items()))


#: Which family of properties could catch a survivor, by what the mutated code touches (first match).
_HINTS = (
    (("check_epoch", "ControllerMoved"), "fencing: controller writes and requests at the current epoch (ZkWritesFenced)"),
    (("add_leader_and_isr", "add_stop_replica", "add_update_metadata", "send_requests_to_brokers", "send_update_metadata",
      "w.send", "recipients", "drop_channel"),
     "requests: what each broker is told (every live replica learns the new leader; metadata converges at quiescence)"),
    (("fire", "arm", "disarm", "enqueue", "Watch."),
     "liveness: a watch or event lost or duplicated shows at quiescence (eventually one controller, partitions online, work done)"),
    (("handle_replica_state_changes", "handle_partition_state_changes", "rs[p]", "ps[p]"),
     "state machines: replica and partition states agree with what the brokers were told (no illegal transition)"),
    (("live", "online", "shutting_down", "is_replica_online"),
     "election safety: leaders and recipients among the right brokers (LeaderIsLive, ElectionRuleConformance)"),
    (("leadership", "isr", "partitions"),
     "context consistency: the controller's cache agrees with ZooKeeper at quiescence"),
    (("reassign", "adding", "removing", "assignment"),
     "reassignment: completes with RS = TRS in ZooKeeper and in the context, at quiescence"),
    (("topics_to_delete", "deletion", "topics_ineligible"), "topic deletion: completes and leaves no znode, replica or state behind, at quiescence"),
)


def hint(mutant: Mutant) -> str:
    """One line: the property family that could catch `mutant`."""
    changed = "".join(line[1:] for line in mutant.diff.splitlines()
                      if line[:1] in "+-" and not line.startswith(("+++", "---")))
    for words, text in _HINTS:
        if any(w in changed for w in words):
            return text
    return "quiescence: what the cluster converges to once every fault and admin operation is done"
