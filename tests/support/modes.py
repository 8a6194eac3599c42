"""Run a test module's jobs in both execution modes: ``ModeEngine(engine, mode)`` is the engine with every
``new_job``/``plan`` given ``JobConfig.execution_mode = mode`` (other JobConfig fields kept)."""

from __future__ import annotations

from typing import Any

from dag import ExecutionMode, JobConfig

MODES = [ExecutionMode.STAGED, ExecutionMode.PIPELINED]


class ModeEngine:
    """Delegates to ``engine``; jobs run in ``mode``."""

    def __init__(self, engine: Any, mode: ExecutionMode):
        self._engine, self.mode = engine, mode

    def _config(self, config: JobConfig | None) -> JobConfig:
        return (config or JobConfig()).model_copy(update={"execution_mode": self.mode})

    def new_job(self, dag: Any, config: JobConfig | None = None) -> Any:
        return self._engine.new_job(dag, self._config(config))

    def plan(self, dag: Any, config: JobConfig | None = None) -> Any:
        return self._engine.plan(dag, self._config(config))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)
