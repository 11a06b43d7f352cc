"""Terminal tables in the shape of the research's tables (formatting only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from refinelab._words import counted, dollars
from refinelab.experiment import ExperimentSpec
from refinelab.metrics import Rate
from refinelab.models import ModelsConfig
from refinelab.problems import window_text
from refinelab.report._baseline import Baseline, difference_text, paired_cells, unpaired_text
from refinelab.report._build import Report, Row
from refinelab.report._effort import effort_tables
from refinelab.report._selection import selection_tables
from refinelab.report._table import Table
from refinelab.store import EndpointUse

"""(title, header, rows)."""
HEADLINE = "Pass@1 (%) on the hidden tests by iteration (change from the first attempt)"
"""The headline table's title: the text report, the HTML report and the viewer say the same."""


def iteration_columns(depth: int) -> list[str]:
    """The headline's iteration columns: ``first attempt``, ``after 1 it.``, ... (``depth`` in all)."""
    return ["first attempt", *(f"after {i} it." for i in range(1, depth))]


HEADLINE_TAIL = ["final", "Regr.", "Avg It.", "Cost × single"]
"""The headline's columns after the iterations."""


def percent(value: float | None) -> str:
    """``38.3`` for 0.383; ``–`` when unknown."""
    return "–" if value is None else f"{100 * value:.1f}"


def times(value: float | None) -> str:
    """``2.15x``; ``–`` when unknown."""
    return "–" if value is None else f"{value:.2f}x"


def rate(value: Rate) -> str:
    """``12.5% (2/16)``."""
    return "–" if value.value is None else f"{100 * value.value:.1f}% ({value.count}/{value.of})"


def tables(report: Report) -> list[Table]:
    """Every table of the report, in order."""
    rows = report.rows
    found = [_iterations(rows), _per_task(rows), _rates(rows)]
    if any(r.judged.confusion is not None for r in rows):
        found.append(_critics(rows))
    if report.comparisons:
        found.append(_comparisons(report))
    if report.equal_tokens:
        found.append(_equal_tokens(report))
    if any(r.refinement.caps for r in rows):
        found.append(_caps(rows))
    iterating = [r for r in rows if r.refinement.refinements is not None]  # samples' indices are not rounds
    if any(len(r.refinement.prompt_by_round) > 1 for r in iterating):
        found.append(_prompts(iterating))
    found.extend(selection_tables(report.selection))
    found.extend(effort_tables(report.efforts))
    if report.baseline is not None:
        found.append(_baseline(report, report.baseline))
    return found


def _iterations(rows: Sequence[Row]) -> Table:
    depth = max((len(r.passes.by_iteration) for r in rows), default=1)
    header = ["configuration", "n", *iteration_columns(depth), *HEADLINE_TAIL]
    body = []
    for row in rows:
        start = row.passes.by_iteration[0] if row.passes.by_iteration else None
        cells = [percent(start), *(_with_change(value, start) for value in row.passes.by_iteration[1:])]
        cost = row.vs_single.cost_usd if row.vs_single else None
        tokens = row.vs_single.tokens if row.vs_single else None
        cost_cell = times(cost) if cost is not None else (f"{times(tokens)} tok" if tokens is not None else "–")
        refinements = "–" if row.refinement.refinements is None else f"{row.refinement.refinements:.2f}"
        body.append(
            [
                row.label,
                str(row.trajectories),
                *cells,
                percent(row.passes.final),
                str(row.refinement.regression_errors),
                refinements,
                cost_cell,
            ]
        )
    return Table(HEADLINE, header, body)


def _with_change(value: float | None, start: float | None) -> str:
    if value is None or start is None:
        return "–"
    return f"{100 * value:.1f} ({100 * (value - start):+.1f})"


def _per_task(rows: Sequence[Row]) -> Table:
    header = ["configuration", "pass", "time/task", "tokens/task", "attempts", "confidence", "cost/task"]
    header.append("tests generated")
    body = [
        [
            row.label,
            percent(row.passes.final),
            f"{row.use.seconds:.1f} s",
            f"{row.use.tokens:,.0f}",
            f"{row.refinement.attempts:.2f}",
            "–" if row.confidence.stated is None else f"{row.confidence.stated:.2f}",
            dollars(row.use.cost_usd),
            f"{row.tests_generated.count}/{row.tests_generated.of}",
        ]
        for row in rows
    ]
    title = "Per task: pass rate, model time, tokens, attempts, stated confidence, cost"
    title += "; problems with tests the model wrote"
    return Table(title, header, body)


def _rates(rows: Sequence[Row]) -> Table:
    header = ["configuration", "improvement", "regression", "pass@k", "first pass at attempt", "Brier"]
    body = []
    for row in rows:
        passk = ", ".join(f"@{k} {percent(v)}" for k, v in row.passes.pass_at.items()) or "–"
        first = ", ".join(f"{k}: {v}" for k, v in row.passes.first_pass.items())
        briers = [f"actor {row.confidence.brier_actor:.3f}" if row.confidence.brier_actor is not None else ""]
        briers.append(f"critic {row.confidence.brier_critic:.3f}" if row.confidence.brier_critic is not None else "")
        body.append(
            [
                row.label,
                rate(row.refinement.improvement),
                rate(row.refinement.regression),
                passk,
                first,
                " ".join(b for b in briers if b) or "–",
            ]
        )
    return Table("Improvement (wrong -> right) and regression (right -> wrong), first to final attempt", header, body)


def _critics(rows: Sequence[Row]) -> Table:
    header = ["configuration", "attempts judged", "true acc.", "false acc.", "true rej.", "false rej.", "accepts"]
    header += ["false rej. rate", "decisions (led to a pass)"]
    body = []
    for row in rows:
        if row.judged.confusion is None:
            continue
        m = row.judged.confusion
        said = ", ".join(f"{k} {d.count} ({d.led_to_pass})" for k, d in row.judged.decisions.items() if d.count)
        body.append(
            [
                row.label,
                f"{row.judged.covered.count}/{row.judged.covered.of}",
                str(m.true_accept),
                str(m.false_accept),
                str(m.true_reject),
                str(m.false_reject),
                rate(m.accept_rate),
                rate(m.false_rejection_rate),
                said or "–",
            ]
        )
    title = (
        "Critic verdicts against the hidden tests (attempts judged: all but the one at the cap, unless critique_last)"
    )
    return Table(title, header, body)


def _comparisons(report: Report) -> Table:
    header = ["configuration", "vs", "pairs", "only single", "only this", "McNemar p", "difference [95% CI]"]
    body = []
    for c in report.comparisons:
        diff = difference_text(c.difference)
        pairs = str(c.pairs) + (f" ({c.unpaired} unpaired)" if c.unpaired else "")
        body.append([c.label, c.baseline, pairs, str(c.only_baseline), str(c.only_this), f"{c.p_value:.3g}", diff])
    return Table("Paired against single pass with the same actor (exact McNemar; bootstrap interval)", header, body)


def _equal_tokens(report: Report) -> Table:
    header = ["refinement", "sampling", "problems", "refinement pass", "sampling pass", "any sample", "samples"]
    body = [
        [
            a,
            b,
            str(e.problems),
            percent(e.refinement),
            percent(e.sampling),
            percent(e.any_sample),
            f"{e.mean_samples:.2f}",
        ]
        for a, b, e in report.equal_tokens
    ]
    return Table(
        "Refinement against sampling at the same tokens per problem (samples chosen by visible tests)", header, body
    )


def _caps(rows: Sequence[Row]) -> Table:
    header = ["configuration", "cap", "pass", "tokens/task"]
    body = [
        [row.label, str(cap), percent(value), f"{tokens:,.0f}"]
        for row in rows
        for cap, value, tokens in row.refinement.caps
    ]
    return Table("As if the iteration cap were lower (re-scored from stored attempts, no new calls)", header, body)


def _prompts(rows: Sequence[Row]) -> Table:
    depth = max(len(r.refinement.prompt_by_round) for r in rows)
    header = ["configuration", *(f"attempt {i}" for i in range(depth))]
    body = [
        [
            row.label,
            *(f"{v:,.0f}" for v in row.refinement.prompt_by_round),
            *(["–"] * (depth - len(row.refinement.prompt_by_round))),
        ]
        for row in rows
    ]
    return Table("Actor prompt tokens per attempt (how the memory policy grows the prompt)", header, body)


def _baseline(report: Report, baseline: Baseline) -> Table:
    """This run (B) against the baseline run (A), configuration by configuration, on the problems both ran."""
    header = ["configuration", "pairs", f"pass in {baseline.run}", "pass here", f"only {baseline.run}"]
    header += ["only here", "McNemar p", "difference [95% CI]", "tokens/task difference", "ran only there / here"]
    body = []
    for row in baseline.rows:
        if row.paired is None:
            body.append([row.label, "–", "not run", *(["–"] * 7)])
            continue
        cells, paired = paired_cells(row.paired), row.paired
        tokens = (
            "–" if paired.tokens_a is None or paired.tokens_b is None else f"{paired.tokens_b - paired.tokens_a:+,.0f}"
        )
        unpaired = f"{cells['unpaired_a']} / {cells['unpaired_b']}"
        body.append([row.label, cells["pairs"], cells["pass_a"], cells["pass_b"], cells["only_a"], cells["only_b"],
                     cells["p_value"], cells["difference"], tokens, unpaired])  # fmt: skip
    for label in baseline.only_in_baseline:
        body.append([label, "–", "ran", "not run", *(["–"] * 6)])
    title = (
        f"Against baseline run {baseline.run}, paired by problem (exact McNemar; bootstrap interval of here - baseline)"
    )
    return Table(title, header, body)


def _time_rule(limits: Mapping[str, object]) -> str:
    """The stored time rule in words: a fixed limit, or each test's following its reference's time."""
    factor = limits.get("reference_factor")
    if factor is None:
        return f"{limits.get('cpu_seconds')} CPU s per test"
    return (
        f"max({limits.get('reference_floor')}, {factor} x the reference's time) CPU s per test "
        f"({limits.get('cpu_seconds')} s without one)"
    )


def header_lines(report: Report) -> list[str]:
    """What ran, where, and on which tests."""
    run, header = report.run, report.run.header
    limits, versions, spec = header.limits, header.versions, ExperimentSpec.from_json(run.spec)
    status = f"{run.status}: {run.note}" if run.note else run.status
    lines = [
        f"run {run.id} ({status}) · refinelab {versions.get('refinelab', '?')} · Python {versions.get('python', '?')}",
        f"sandbox: isolation {header.isolation} · {_time_rule(limits)} "
        f"(wall x{limits.get('wall_factor')}) · memory {_mib(limits.get('memory_bytes'))}",
        *endpoint_lines(header.endpoints, spec.models),
        f"{counted(report.problems, 'problem')}: {report.hidden_tests}",
        *source_lines(spec),
    ]
    if report.pending:
        lines.append(
            f"{counted(report.pending, 'trajectory', 'trajectories')} not stored yet: run the same command again to "
            "finish them"
        )
    return lines


def endpoint_lines(endpoints: Sequence[EndpointUse] | None, models: ModelsConfig | None = None) -> list[str]:
    """Where each model role was served and which setting chose it, and what an alias stood for and the
    deployment tag (``models``: the run's); a role a resume moved names every server in order, with when it
    moved (runs stored before refinelab recorded it show nothing)."""
    if not endpoints:
        return []
    roles: dict[tuple[str, str], list[EndpointUse]] = {}
    for use in endpoints:
        roles.setdefault((use.endpoint.role, use.endpoint.model), []).append(use)
    lines = ["model endpoints:"]
    for (role, model), uses in roles.items():
        places = [_place(u) for u in uses]
        moves = [f", from {_when(u.since)} {place}" for u, place in zip(uses[1:], places[1:])]
        fresh = " (cached replies only from these)" if any(u.fresh for u in uses) else ""
        lines.append(f"  {role} {_model_text(model, models)}: {places[0]}{''.join(moves)}{fresh}")
    return lines


def _model_text(model: str, models: ModelsConfig | None) -> str:
    """``model``, then ``= MODEL`` when it is an alias, and ``(deployment TAG)`` when it has one."""
    if models is None:
        return model
    target, deployment = models.model(model), models.settings(model).deployment
    named = model if target == model else f"{model} = {target}"
    return named if deployment is None else f"{named} (deployment {deployment})"


def _place(use: EndpointUse) -> str:
    """Where a role was served and the setting that chose it (a model run in this process: said once)."""
    address, chosen_by = use.endpoint.address, use.endpoint.chosen_by
    return address if chosen_by == address else f"{address} ({chosen_by})"


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def source_lines(spec: ExperimentSpec) -> list[str]:
    """What each benchmark was read from (runs stored before refinelab recorded it show nothing)."""
    lines = []
    for choice in spec.benchmarks:
        if choice.source is None:
            continue
        window = window_text(choice.after, choice.before)
        lines.append(f"benchmark: {choice.source.describe()}" + (f" · problems dated {window}" if window else ""))
        lines += [f"  {line}" for line in choice.source.file_lines()]
    return lines


def _mib(value: object) -> str:
    return f"{int(value) // 2**20} MiB" if isinstance(value, int) else "?"


def failure_lines(report: Report) -> list[str]:
    """Infrastructure failures, apart from the model's numbers."""
    if not report.failures:
        return []
    open_ = [f for f in report.failures if not f.resolved]
    lines = [
        f"Infrastructure failures (not counted as model failures): {len(report.failures)} recorded, "
        f"{len(report.failures) - len(open_)} since completed on a resume, {len(open_)} open"
    ]
    lines += [f"  {f.unit.problem} [{f.unit.config}] repeat {f.unit.repeat}: {f.kind}: {f.message}" for f in open_[:20]]
    return lines


def render_table(table: Table) -> str:
    """A plain aligned table with its title."""
    title, header, rows = table.title, table.header, table.body
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    line = "  ".join("-" * w for w in widths)
    lines = [title, line, _cells(header, widths), line, *(_cells(row, widths) for row in rows), line]
    return "\n".join(lines)


def _cells(cells: Sequence[str], widths: Sequence[int]) -> str:
    first = cells[0].ljust(widths[0])
    rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:]))
    return "  ".join([first, *rest]).rstrip()


def render_text(report: Report) -> str:
    """The whole report as terminal text."""
    parts = ["\n".join(header_lines(report))]
    parts += [render_table(table) for table in tables(report)]
    failures = failure_lines(report)
    if failures:
        parts.append("\n".join(failures))
    unpaired = baseline_lines(report)
    if unpaired:
        parts.append("\n".join(unpaired))
    return "\n\n".join(parts) + "\n"


def baseline_lines(report: Report) -> list[str]:
    """The problems only one run ran, per configuration compared with the baseline (left out of its numbers)."""
    if report.baseline is None:
        return []
    found = [
        (row.label, unpaired_text(row.paired, report.baseline.run, report.run.id))
        for row in report.baseline.rows
        if row.paired
    ]
    return [f"Not paired ({label}): {text}" for label, text in found if text]
