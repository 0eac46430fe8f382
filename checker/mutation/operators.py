"""The mutation operators: where in a model source file a fault can be seeded, and how.

The operators mirror how Kafka's controller bugs looked:

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
(`self.flags.*`, already graded by the variants) are left alone. A site (`Site`) replaces one span
of lines (a statement) or of characters (an expression), so a mutant's diff is as small as the
change and the comments around it stay. `sites(file, source)` lists the sites of one file by
operator; `apply` makes the mutated source of one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

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



class Site:
    """A place to mutate: a replacement of lines [start, end] (1-based, inclusive) or of a
    character span, with the operator and a one-line description."""

    __slots__ = ("operator", "line", "kind", "span", "text", "description")

    def __init__(self, operator: str, line: int, kind: str, span: tuple[int, ...], text: str,
                 description: str) -> None:
        self.operator, self.line, self.kind, self.span, self.text, self.description = (
            operator, line, kind, span, text, description)


def _span(node: Any) -> tuple[int, int, int, int]:
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
        self.sites: dict[str, list[Site]] = {op: [] for op in OPERATORS}
        self.statements: list[tuple[int, int]] = []

    def functions(self) -> Iterator[ast.FunctionDef]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef) and node.name in ("RequestBatch", "Strategy"):
                continue
            if isinstance(node, ast.FunctionDef) and node.name not in SKIP_FUNCTIONS:
                if self.file == "world.py" and node.name not in _WORLD_FUNCTIONS:
                    continue
                yield node

    def collect(self) -> dict[str, list[Site]]:
        for fn in self.functions():
            self.statements.extend((n.lineno, n.end_lineno or n.lineno)
                                   for n in ast.walk(fn) if isinstance(n, ast.stmt))
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

    def _statements(self, fn: ast.FunctionDef, block: list[Any]) -> None:
        alone = len(block) == 1
        for i, stmt in enumerate(block):
            # One statement per line range: skip `a; b` lines.
            if (i and block[i - 1].end_lineno >= stmt.lineno
                    or i + 1 < len(block) and block[i + 1].lineno <= stmt.end_lineno):
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
                    self.sites["swap-effects"].append(Site(
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
        self.sites[operator].append(Site(operator, stmt.lineno, "lines", (stmt.lineno, stmt.end_lineno), text,
                                          description))

    def _guard(self, node) -> None:
        test = node.test
        cond = _src(self.lines, test)
        short = _short(cond)
        self.sites["negate-guard"].append(Site("negate-guard", test.lineno, "span", _span(test), f"not ({cond})",
                                                f"negate `{short}`"))
        if isinstance(node, ast.If):
            if _is_exit(node.body) and not node.orelse:
                self.sites["drop-guard"].append(Site("drop-guard", test.lineno, "span", _span(test), "False",
                                                      f"drop the early exit on `{short}`"))
            elif not node.orelse:
                self.sites["drop-guard"].append(Site("drop-guard", test.lineno, "span", _span(test), "True",
                                                      f"run the block guarded by `{short}` always"))
        self._conjuncts(test)

    def _filter(self, cond) -> None:
        text = _src(self.lines, cond)
        short = _short(text)
        self.sites["negate-guard"].append(Site("negate-guard", cond.lineno, "span", _span(cond), f"not ({text})",
                                                f"negate the filter `{short}`"))
        self.sites["drop-guard"].append(Site("drop-guard", cond.lineno, "span", _span(cond), "True",
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
            self.sites["drop-guard"].append(Site("drop-guard", value.lineno, "span", _span(test), f"({text})",
                                                  f"drop the conjunct `{short}`"))

    def _neighbours(self, fn: ast.FunctionDef) -> None:
        node: Any
        for node in ast.walk(fn):
            if _untouchable(node) if isinstance(node, ast.stmt) else False:
                continue
            for text, description in _neighbour_of(node, self.lines):
                self.sites["neighbour-set"].append(Site("neighbour-set", node.lineno, "span", _span(node), text,
                                                         description))


def _is_self_attr(node, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name)
            and node.value.id == "self" and isinstance(node.ctx, ast.Load))


def _is_self_call(node, name: str) -> bool:
    return isinstance(node, ast.Call) and _is_self_attr(node.func, name)


#: A record of the controller's context by its neighbour: `self.<field>[index]` -> (text, what).
_CONTEXT_NEIGHBOURS = {
    "assignment": ("self.leadership[{index}].isr", "assignment -> ISR"),
    "adding": ("self.removing[{index}]", "adding -> removing replicas"),
    "removing": ("self.adding[{index}]", "removing -> adding replicas"),
}


def _context_record_neighbours(node: ast.Subscript, lines: list[str], src: str) -> list[tuple[str, str]]:
    holder = node.value
    if not (isinstance(node.ctx, ast.Load) and isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)
            and holder.value.id == "self" and holder.attr in _CONTEXT_NEIGHBOURS):
        return []
    text, what = _CONTEXT_NEIGHBOURS[holder.attr]
    return [(text.format(index=_src(lines, node.slice)), f"{what} (`{src}`)")]


def _neighbour_of(node: Any, lines: list[str]) -> list[tuple[str, str]]:
    """The neighbouring sets of `node`, as (replacement text, description); none for most nodes."""
    out: list[tuple[str, str]] = []
    if type(node) not in (ast.Attribute, ast.Call, ast.Subscript):  # (not narrowed: `node` stays Any)
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
    elif isinstance(node, ast.Subscript):
        out.extend(_context_record_neighbours(node, lines, src))
    elif (isinstance(node, ast.Attribute) and node.attr == "isr" and isinstance(node.ctx, ast.Load)
          and isinstance(node.value, ast.Name) and node.value.id in ("replica", "part", "mine", "theirs")):
        out.append((f"{node.value.id}.replicas", f"ISR -> replicas (`{src}`)"))
    elif (isinstance(node, ast.Attribute) and node.attr == "replicas" and isinstance(node.ctx, ast.Load)
          and isinstance(node.value, ast.Name) and node.value.id in ("replica", "part")):
        out.append((f"{node.value.id}.isr", f"replicas -> ISR (`{src}`)"))
    return out


def apply(lines: list[str], site: Site) -> str:
    if site.kind == "lines":
        start, end = site.span
        return "".join(lines[: start - 1]) + site.text + "".join(lines[end:])
    l1, c1, l2, c2 = site.span
    # Character offsets of ast are in UTF-8 bytes.
    head = "".join(lines[: l1 - 1]) + lines[l1 - 1].encode()[:c1].decode()
    tail = lines[l2 - 1].encode()[c2:].decode() + "".join(lines[l2:])
    return head + f"({site.text})" + tail




def sites(file: str, source: str) -> tuple[dict[str, list[Site]], list[tuple[int, int]]]:
    """The mutation sites of one source file by operator, and the line ranges of its statements
    in the mutable functions (a mutant's reach starts at the innermost statement around it)."""
    collector = _Collector(file, source)
    return collector.collect(), collector.statements
