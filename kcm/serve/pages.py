"""The HTML of `kcm serve`: the starting points, and one page per state of a walk.

Pages are built with the renderers of report.html (`kcm.checker.html_report`: the page template
and its CSS, the sequence diagram, the legend) and the engine's trace renderers
(`kcm.checker.engine.traces`: values, changes), so a state reads the same on the server, in
report.html and in `kcm trace show`. No script: every interaction is a link (`kcm.serve.paths`),
and what the browser shows is what the server sent.

A state page holds, top to bottom: where the walk is and what holds there in one line; the path so
far (each step a link back to it, where another action can be taken: a branch); the enabled actions
(each a link, named by `Model.format_action` and, where the model says more, by its
`describe_action(state, action)`: the event processed, the request delivered); what the last step
changed; the whole state in the groups of `kcm.serve.fields`, the changed leaves highlighted with
their previous value; every property judged there (`kcm.serve.verdicts`); the goals the walk has
met; the sequence diagram so far.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from kcm.checker import html_report
from kcm.checker.engine.itf import ItfTrace
from kcm.checker.engine.traces import ABSENT, diff_values, format_change, format_value, title, to_itf_trace
from kcm.model.checking.kafka_model import KafkaModel
from kcm.serve.fields import all_leaves, groups
from kcm.serve.origins import Origins
from kcm.serve.paths import INIT, TRACE, Address, Start, Step
from kcm.serve.verdicts import NO_STEP, VIOLATED, Goal, Verdict, goals, judge, liveness_names

_esc = html.escape

#: What the state page adds to report.css.
CSS = """<style>
tr.changed td { background: #fff3c4; }
td.was { color: #7a5600; }
ol.path li.current, ol.actions li.trace-next { font-weight: 600; }
.summary { font-size: 15px; }
nav a { margin-right: 14px; }
details { margin: 6px 0; }
</style>"""


def _link(address: Address, text: str, cls: str = "") -> str:
    css = f' class="{cls}"' if cls else ""
    return f'<a{css} href="{_esc(address.url())}">{_esc(text)}</a>'


def _describe(model: KafkaModel, state: Any, action: Any) -> str:
    """What the model says about an action beyond its name: the event a `ControllerProcessEvent`
    processes, the request a delivery delivers (`KafkaModel.describe_action`)."""
    text, label = model.describe_action(state, action), model.format_action(action)
    if text.startswith(label):   # "ControllerProcessEvent(broker=1): Startup": what follows the name
        text = text[len(label):].lstrip(": ")
    return f' <span class="meta">· {_esc(text)}</span>' if text else ""


def message_page(status: int, message: str) -> str:
    """A page of one line: an address that names no state (404), or a malformed one (400)."""
    return html_report.page(f"kcm serve · {status}", '<a href="/">starting points</a>', f"<p>{_esc(message)}</p>")


def _subtitle(origins: Origins) -> str:
    cfg = origins.model.cfg
    shape = (f"{cfg.brokers} brokers, {cfg.topics} topic(s) of {cfg.partitions} partition(s), "
             f"replication factor {cfg.replication_factor}")
    return (f'<nav><a href="/">starting points</a></nav>model {_esc(origins.model.name)} · {_esc(shape)}'
            + (f" · {_esc(cfg.description)}" if getattr(cfg, "description", "") else ""))


def index_page(origins: Origins) -> str:
    """The starting points: each initial state of the config, and each step of the counterexample."""
    inits = "".join(f"<li>{_link(Address(Start(INIT, i)), label, 'start')}</li>"
                    for i, label in enumerate(origins.labels))
    body = [f"<h2>Initial states ({len(origins.inits)})</h2><ol start=0>{inits}</ol>"]
    if origins.trace is not None and origins.itf is not None:
        labels = ["initial state"] + [origins.itf.described(k) or f"step {k}" for k in range(1, len(origins.trace))]
        steps = "".join(f"<li>{_link(Address(Start(TRACE, k)), label, 'trace-step')}</li>"
                        for k, label in enumerate(labels))
        body.append(f"<h2>Counterexample: {_esc(title(origins.itf))}</h2><p class=meta>{_esc(origins.trace_file)}</p>"
                    f"<ol start=0>{steps}</ol>")
    body.append("<p>Each page shows one state: follow an enabled action to step, a step of the path to go back "
                "or branch there. Every page is a bookmarkable address (docs/explorer.md).</p>")
    return html_report.page("kcm serve · starting points", _subtitle(origins), CSS + "\n".join(body))


def _step_label(origins: Origins, step: Step) -> str:
    if step.action is None:
        start = step.address.start
        return origins.labels[start.index] if start.kind == INIT else "initial state of the counterexample"
    label = origins.model.format_action(step.action)
    return f"{label}   (counterexample step)" if step.choice is None else label


def _path_section(origins: Origins, steps: Sequence[Step]) -> str:
    items = []
    for i, step in enumerate(steps):
        label = _step_label(origins, step)
        said = _describe(origins.model, steps[i - 1].state, step.action) if i else ""
        if i == len(steps) - 1:
            items.append(f'<li class="current">{_esc(label)}{said} (this page)</li>')
        else:
            items.append(f"<li>{_link(step.address, label, 'step')}{said}</li>")
    return f"<h2>Path ({len(steps) - 1} steps)</h2><ol class=path start=0>{''.join(items)}</ol>"


def _actions_section(origins: Origins, steps: Sequence[Step]) -> str:
    model, last = origins.model, steps[-1]
    successors = model.successors(last.state)
    start = last.address.start
    trace_next: tuple[Any, Any] | None = None
    if start.kind == TRACE and not last.address.choices and origins.trace and start.index + 1 < len(origins.trace):
        trace_next = origins.trace[start.index + 1]
    items = []
    for n, (action, nxt) in enumerate(successors):
        is_next = trace_next is not None and action == trace_next[0] and nxt == trace_next[1]
        target = Address(Start(TRACE, start.index + 1)) if is_next else last.address.then(n)
        mark = " ← the counterexample's next step" if is_next else ""
        cls = ' class="trace-next"' if is_next else ""
        items.append(f"<li{cls}>{_link(target, model.format_action(action), 'action')}"
                     f"{_describe(model, last.state, action)}{_esc(mark)}</li>")
    if not items:
        end = ("a legal end state (quiescent)" if model.is_terminal(last.state)
               else "a deadlock: not a legal end state")
        return f"<h2>Enabled actions (0)</h2><p>No action is enabled: {end}.</p>"
    return f"<h2>Enabled actions ({len(items)})</h2><ol class=actions start=0>{''.join(items)}</ol>"


def _changes_section(itf: ItfTrace) -> str:
    if len(itf.states) < 2:
        return ""
    before, after = itf.states[-2], itf.states[-1]
    lines = [format_change(*c).strip() for name in itf.vars for c in diff_values(before[name], after[name], name)]
    body = "".join(f"<li class=mono>{_esc(line)}</li>" for line in lines) or "<li>(no change)</li>"
    return f"<h2>What the last step changed</h2><ul class=changes-list>{body}</ul>"


def _state_section(itf: ItfTrace) -> str:
    current = all_leaves(itf.states[-1])
    previous = all_leaves(itf.states[-2]) if len(itf.states) > 1 else current
    parts = ["<h2>The whole state</h2>"]
    for group in groups(itf.states[-1]):
        rows = []
        for path in group.paths:
            value = current[path]
            old = previous.get(path, ABSENT)
            changed = old != value
            was = (f'<td class="was mono">was {_esc("(absent)" if old is ABSENT else format_value(old))}</td>'
                   if changed else "<td></td>")
            cls = ' class="changed"' if changed else ""
            rows.append(f'<tr{cls} data-path="{_esc(path)}"><td class=mono>{_esc(path)}</td>'
                        f'<td class="mono value">{_esc(format_value(value))}</td>{was}</tr>')
        table = f"<table class=state>{''.join(rows)}</table>" if rows else "<p>(none)</p>"
        if group.open:
            parts.append(f"<h3>{_esc(group.heading)}</h3>{table}")
        else:   # an inactive controller module: folded, still in the page
            parts.append(f"<details><summary>{_esc(group.heading)}</summary>{table}</details>")
    return "\n".join(parts)


def _outcome_cell(v: Verdict) -> str:
    if v.outcome == VIOLATED and v.known:
        return f'<td class="known">violated: a known Kafka 2.6 behaviour ({_esc(v.known)})</td>'
    if v.outcome == VIOLATED:
        return '<td class="bad">violated</td>'
    if v.outcome == NO_STEP:
        return '<td class="open">no step yet</td>'
    return '<td class="ok">holds</td>'


def _properties_section(verdicts: Sequence[Verdict]) -> str:
    rows = "".join(f'<tr class="property" data-name="{_esc(v.name)}"><td class=mono>{_esc(v.name)}</td>'
                   f"<td>{_esc(v.kind)}</td>{_outcome_cell(v)}<td>{_esc(v.doc)}</td></tr>" for v in verdicts)
    live = ", ".join(liveness_names())
    return (f"<h2>Properties at this state ({len(verdicts)})</h2>"
            "<p>State invariants are judged on this state, transition invariants on the last step. The "
            "quiescence and settled kinds hold trivially unless the cluster is quiescent (settled). Liveness "
            f"properties ({_esc(live)}) are about whole runs and are not judged on one state "
            "(kcm explore --liveness checks them).</p>"
            f"<table><tr><th>property</th><th>kind</th><th>outcome</th><th>what it says</th></tr>{rows}</table>")


def _goals_section(met: Sequence[Goal]) -> str:
    rows = "".join(f'<tr class="goal" data-name="{_esc(g.name)}"><td class=mono>{_esc(g.name)}</td>'
                   + (f'<td class="ok">met at step {g.met_at}</td>' if g.met_at is not None
                      else '<td class="open">not met on this path</td>')
                   + f"<td>{_esc(g.doc)}</td></tr>" for g in met)
    return f"<h2>Goals</h2><table><tr><th>goal</th><th>on this path</th><th>what it asks</th></tr>{rows}</table>"


def _summary(verdicts: Sequence[Verdict], steps: Sequence[Step]) -> str:
    bad = [v for v in verdicts if v.outcome == VIOLATED and not v.known]
    known = [v for v in verdicts if v.outcome == VIOLATED and v.known]
    where = f"Step {len(steps) - 1}" if len(steps) > 1 else "Start"
    if bad:
        text = f'<span class="verdict violation">VIOLATED</span> {_esc(", ".join(v.name for v in bad))}'
    else:
        text = '<span class="verdict pass">HOLDS</span> every property judged here'
    if known:
        text += f" · known Kafka 2.6 behaviour: {_esc(', '.join(v.name for v in known))}"
    back = (f" · {_link(steps[-2].address, 'back one step', 'back')}" if len(steps) > 1 else "")
    return f'<p class="summary">{where}: {text}{back}</p>'


def state_page(origins: Origins, steps: Sequence[Step]) -> str:
    """The page of the walk's last state (see the module docstring)."""
    model = origins.model
    verdicts = judge(model, steps, origins.known)
    violated = next((v for v in verdicts if v.outcome == VIOLATED), None)
    itf = to_itf_trace(model, [(s.action, s.state) for s in steps],
                       invariant=violated.name if violated else None, kind=violated.kind if violated else None)
    last = steps[-1]
    heading = (f"Step {len(steps) - 1}: {model.format_action(last.action)}" if last.action is not None
               else _step_label(origins, last))
    diagram = (f'<h2>Sequence diagram so far</h2><div class="diagram">{html_report.sequence_svg(itf)}</div>'
               + html_report.legend_html() if len(steps) > 1 else "")
    body = [CSS, _summary(verdicts, steps), _path_section(origins, steps), _actions_section(origins, steps),
            _changes_section(itf), _state_section(itf), _properties_section(verdicts),
            _goals_section(goals(model, steps)), diagram]
    return html_report.page(f"kcm serve · {heading}", _subtitle(origins), "\n".join(b for b in body if b))

