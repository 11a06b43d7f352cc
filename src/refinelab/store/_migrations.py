"""The store's schema as named, append-only migrations (STYLE.md practice 16): a store is brought up to
date by applying, in order, every migration it has not recorded. Never edit a released migration
(a test pins their scripts); change the schema by appending a new one.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "m001_initial",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL, spec TEXT NOT NULL,
            versions TEXT NOT NULL, isolation TEXT NOT NULL, limits TEXT NOT NULL,
            status TEXT NOT NULL, finished REAL
        );
        CREATE TABLE problems (
            run_id TEXT NOT NULL, problem TEXT NOT NULL, kind TEXT NOT NULL,
            visible_tests INTEGER NOT NULL, hidden_tests INTEGER NOT NULL,
            PRIMARY KEY (run_id, problem)
        );
        CREATE TABLE configs (
            run_id TEXT NOT NULL, config TEXT NOT NULL, strategy TEXT NOT NULL, params TEXT NOT NULL,
            actor TEXT NOT NULL, critic TEXT, position INTEGER NOT NULL,
            PRIMARY KEY (run_id, config)
        );
        CREATE TABLE trajectories (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            stop_reason TEXT NOT NULL, final INTEGER, budget_note TEXT, recorded_params TEXT NOT NULL,
            finished REAL NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat)
        );
        CREATE TABLE attempts (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            idx INTEGER NOT NULL, origin TEXT NOT NULL, code TEXT, response TEXT NOT NULL, feedback TEXT,
            parse_error TEXT, confidence REAL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            cached_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL, cost_usd REAL, latency_s REAL NOT NULL,
            cached INTEGER NOT NULL, visible_passed INTEGER, visible_pass_count INTEGER, visible_outcomes TEXT,
            hidden_passed INTEGER NOT NULL, hidden_pass_count INTEGER NOT NULL, hidden_total INTEGER NOT NULL,
            hidden_outcomes TEXT, isolation TEXT,
            PRIMARY KEY (run_id, config, problem, repeat, idx)
        );
        CREATE TABLE critic_outputs (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            idx INTEGER NOT NULL, raw TEXT NOT NULL, verdict TEXT, critique TEXT NOT NULL, parse_error TEXT,
            confidence REAL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            cost_usd REAL, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat, idx)
        );
        CREATE TABLE infra_failures (
            id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL,
            repeat INTEGER NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL
        );
        """,
    ),
    (
        "m002_model_calls_view",
        """
        CREATE VIEW model_calls AS
            SELECT run_id, config, problem, repeat, idx, 'actor' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM attempts
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'critic' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM critic_outputs;
        CREATE INDEX infra_failures_unit ON infra_failures (run_id, config, problem, repeat);
        """,
    ),
    (
        "m003_run_process",
        """
        ALTER TABLE runs ADD COLUMN host TEXT;
        ALTER TABLE runs ADD COLUMN pid INTEGER;
        ALTER TABLE runs ADD COLUMN pid_started TEXT;
        ALTER TABLE runs ADD COLUMN note TEXT;
        """,
    ),
    (
        "m004_problem_details",
        """
        ALTER TABLE problems ADD COLUMN metadata TEXT;
        ALTER TABLE problems ADD COLUMN prompt TEXT
        """,
    ),
    (
        "m005_generated_tests_and_decisions",
        """
        CREATE TABLE test_generations (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            idx INTEGER NOT NULL, raw TEXT NOT NULL, tests TEXT NOT NULL, rejected TEXT NOT NULL,
            reference_passed TEXT, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            cost_usd REAL, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat, idx)
        );
        CREATE TABLE decisions (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            seq INTEGER NOT NULL, kind TEXT NOT NULL, reason TEXT NOT NULL, attempt INTEGER, parent INTEGER,
            known_passed INTEGER, known_total INTEGER, members TEXT NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat, seq)
        );
        DROP VIEW model_calls;
        CREATE VIEW model_calls AS
            SELECT run_id, config, problem, repeat, idx, 'actor' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM attempts
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'critic' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM critic_outputs
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'tests' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM test_generations
        """,
    ),
    (
        "m006_attempt_node",
        """
        ALTER TABLE attempts ADD COLUMN node TEXT
        """,
    ),
    (
        "m007_run_endpoints",
        """
        ALTER TABLE runs ADD COLUMN endpoints TEXT
        """,
    ),
    (
        "m008_reasoning",
        """
        ALTER TABLE configs ADD COLUMN effort TEXT;
        ALTER TABLE configs ADD COLUMN critic_effort TEXT;
        ALTER TABLE attempts ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE attempts ADD COLUMN reasoning TEXT;
        ALTER TABLE attempts ADD COLUMN not_sent TEXT;
        ALTER TABLE critic_outputs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE critic_outputs ADD COLUMN reasoning TEXT;
        ALTER TABLE critic_outputs ADD COLUMN not_sent TEXT;
        ALTER TABLE test_generations ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
        DROP VIEW model_calls;
        CREATE VIEW model_calls AS
            SELECT run_id, config, problem, repeat, idx, 'actor' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached, reasoning_tokens FROM attempts
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'critic' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached, reasoning_tokens FROM critic_outputs
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'tests' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached, reasoning_tokens FROM test_generations
        """,
    ),
)
"""Named migrations, applied in order; append new ones, never edit a released one."""
