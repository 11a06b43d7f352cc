"""Benchmark problems and their tests, as data, and the loaders for each benchmark."""

from refinelab._downloads import FetchOptions, default_cache_dir
from refinelab.problems._asserts import as_value_test, tests_from_check, tests_from_statements
from refinelab.problems._benchmarks import BENCHMARKS, COMPUTED, Benchmark, Packaged, benchmark
from refinelab.problems._examples import prompt_examples
from refinelab.problems._humaneval import load_humaneval
from refinelab.problems._humanevalplus import HumanEvalPlusTask, WrittenInputs, read_humanevalplus
from refinelab.problems._io import read_jsonl, read_records
from refinelab.problems._jsonl import load_jsonl
from refinelab.problems._livecodebench import load_livecodebench
from refinelab.problems._mbpp import load_mbpp
from refinelab.problems._mbppplus import read_mbppplus
from refinelab.problems._model import AssertTest, CallTest, Problem, ProblemKind, StdioTest, Test
from refinelab.problems._provenance import FileRecord, Provenance
from refinelab.problems._registry import (
    dated,
    find_problem,
    load_benchmark,
    read_benchmark,
    valid_date,
    window_text,
)
from refinelab.problems._source import BenchmarkFiles, open_benchmark
from refinelab.problems._stdio_sources import load_apps, load_codecontests

__all__ = [
    "BENCHMARKS",
    "COMPUTED",
    "AssertTest",
    "Benchmark",
    "BenchmarkFiles",
    "CallTest",
    "FetchOptions",
    "FileRecord",
    "HumanEvalPlusTask",
    "Packaged",
    "Problem",
    "ProblemKind",
    "Provenance",
    "StdioTest",
    "Test",
    "WrittenInputs",
    "as_value_test",
    "benchmark",
    "dated",
    "default_cache_dir",
    "find_problem",
    "load_apps",
    "load_benchmark",
    "load_codecontests",
    "load_humaneval",
    "load_jsonl",
    "load_livecodebench",
    "load_mbpp",
    "open_benchmark",
    "prompt_examples",
    "read_benchmark",
    "read_humanevalplus",
    "read_jsonl",
    "read_mbppplus",
    "read_records",
    "tests_from_check",
    "tests_from_statements",
    "valid_date",
    "window_text",
]
