"""Effective configuration: defaults < user config dir TOML < ./agent.toml < AGENT_* env vars.

Nested fields are set from the environment with a double underscore:
AGENT_BUDGETS__MAX_ITERS=3, AGENT_COMPILER__CXX=g++-12.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from tools.build import DEFAULT_CXXFLAGS, DEFAULT_NVCCFLAGS

LLM_KINDS = ("compiler", "openai", "anthropic", "openai-compatible")


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agent" / "agent.toml"


class Budgets(BaseModel):
    max_iters: int = Field(6, ge=1, description="translate attempts per kernel")
    max_wall_s: float = Field(900.0, gt=0, description="wall time per kernel")
    max_tokens: int = Field(400_000, ge=0, description="LLM tokens per kernel")
    budget_usd: float = Field(2.0, ge=0, description="LLM money per kernel")
    run_wall_s: float = Field(6 * 3600.0, gt=0, description="wall time per run")
    run_tokens: int = Field(5_000_000, ge=0, description="LLM tokens per run")
    run_budget_usd: float = Field(20.0, ge=0, description="LLM money per run")


class CompilerFlags(BaseModel):
    cxx: str = "g++"
    cxxflags: list[str] = list(DEFAULT_CXXFLAGS)
    nvcc: str = "nvcc"
    nvccflags: list[str] = list(DEFAULT_NVCCFLAGS)
    fast_math_ok: bool = Field(False, description="allow -ffast-math where a task's tolerance permits")


class SandboxLimits(BaseModel):
    timeout_s: float = Field(120.0, gt=0)
    memory_mb: int = Field(4096, ge=64)
    cpu_s: int = Field(600, ge=1)
    file_mb: int = Field(1024, ge=1)
    max_procs: int = Field(512, ge=8)


class Price(BaseModel):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


DEFAULT_PRICES = {
    "gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.6),
    "gpt-4.1": Price(input_per_mtok=2.0, output_per_mtok=8.0),
    "o4-mini": Price(input_per_mtok=1.1, output_per_mtok=4.4),
    "claude-sonnet-4-5": Price(input_per_mtok=3.0, output_per_mtok=15.0),
    "claude-opus-4-1": Price(input_per_mtok=15.0, output_per_mtok=75.0),
    "claude-haiku-4-5": Price(input_per_mtok=1.0, output_per_mtok=5.0),
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="AGENT_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    llm: str = Field("compiler", description="compiler | openai:MODEL | anthropic:MODEL | openai-compatible:MODEL")
    llm_base_url: str | None = Field(None, description="base URL for openai-compatible servers")
    llm_timeout_s: float = Field(120.0, gt=0)
    llm_max_retries: int = Field(4, ge=0)
    llm_retry_backoff_s: float = Field(1.0, gt=0, description="first retry wait; doubles per retry, with jitter; Retry-After wins when longer")
    llm_max_output_tokens: int | None = Field(None, ge=1, description="cap on answer tokens per LLM call (Anthropic: 16000 when unset)")
    llm_api: Literal["auto", "chat", "responses"] = Field("auto", description="OpenAI wire API: auto = Responses for openai:, Chat Completions for openai-compatible:")
    openai_api_key: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None
    llm_api_key: SecretStr | None = Field(None, description="key for an openai-compatible server (the OpenAI key is never sent there)")
    sandbox: Literal["auto", "local", "docker"] = "auto"
    docker_image: str = "agent-sandbox:latest"
    threads: int | None = Field(None, ge=1, description="OMP_NUM_THREADS for tests and timing; default all cores")
    jobs: int = Field(1, ge=1)
    check_timeout_s: float = Field(300.0, gt=0, description="repository ports: seconds each check command may run")
    check_first_try_s: float = Field(60.0, ge=0, description="repository ports: seconds a check command runs before "
                                     "a smaller run of it is checked instead, where one can be made (a repetition "
                                     "count or a size to cut); 0: the whole check timeout")
    check_memory_mb: int | None = Field(None, ge=64, description="repository ports: MiB of address space each check "
                                        "command may use; default three quarters of this machine's memory")
    tune: bool = Field(True, description="repository ports: tune each kernel on launches captured from the project's own run")
    tune_budget_s: float = Field(90.0, gt=0, description="repository ports: seconds the tuning of all kernels may "
                                 "take, spent on those that took the most time in the check run first; kernels not "
                                 "tuned by then keep their faithful lowering (a rerun goes on tuning them)")
    make_variables: list[str] = Field(default_factory=list, description="repository ports: NAME=VALUE given to make "
                                      "where it reads the project's Makefile, as `make NAME=VALUE` (e.g. VERIFY=yes "
                                      "where the project checks its results only when asked)")
    ray_address: str | None = Field(None, description="agent eval: run each task on this Ray cluster (HOST:PORT, "
                                    "ray://HOST:PORT or auto); RAY_ADDRESS when unset; needs the ray extra")
    state_dir: Path = Field(Path(".agent"), description="checkpoints and default traces")
    budgets: Budgets = Budgets()
    compiler: CompilerFlags = CompilerFlags()
    limits: SandboxLimits = SandboxLimits()
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    @field_validator("llm")
    @classmethod
    def _check_llm(cls, value: str) -> str:
        kind = value.split(":", 1)[0]
        if kind not in LLM_KINDS:
            raise ValueError(f"unknown LLM kind {kind!r}; expected one of {', '.join(LLM_KINDS)}")
        if kind != "compiler" and not value.partition(":")[2]:
            raise ValueError(f"{kind} needs a model name, e.g. {kind}:MODEL")
        return value

    @field_validator("make_variables")
    @classmethod
    def _check_make_variables(cls, values: list[str]) -> list[str]:
        for value in values:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", value):
                raise ValueError(f"{value!r} is not NAME=VALUE")
        return values

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files = [p for p in (Path("agent.toml"), user_config_path()) if p.is_file()]
        tomls = [TomlConfigSettingsSource(settings_cls, toml_file=p) for p in files]
        return (init_settings, env_settings, *tomls)

    @property
    def check_memory(self) -> int:
        """MiB of address space a repository's check command may use (`check_memory_mb`, else three
        quarters of this machine's memory: programs sized for a GPU's memory get what there is)."""
        if self.check_memory_mb is not None:
            return self.check_memory_mb
        return max(4096, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 * 3 // 4)

    def config_files(self) -> list[Path]:
        return [p for p in (Path("agent.toml"), user_config_path()) if p.is_file()]

    def api_key_for(self, provider: str) -> str | None:
        """Configured key, else the provider's own environment variable."""
        secret = {"openai": self.openai_api_key, "anthropic": self.anthropic_api_key}.get(provider)
        if secret is not None:
            return secret.get_secret_value()
        env = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(provider)
        return os.environ.get(env) if env else None

    def secrets(self) -> list[str]:
        """Every secret value known to this configuration (to scrub from traces)."""
        values = [self.api_key_for(p) for p in ("openai", "anthropic")]
        if self.llm_api_key is not None:
            values.append(self.llm_api_key.get_secret_value())
        return [v for v in values if v]

    def masked(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        for key in SECRET_KEYS:
            if data.get(key):
                raw = getattr(self, key).get_secret_value()
                data[key] = (raw[:3] + "…" + "*" * 6) if len(raw) > 8 else "******"
        return data

    def to_toml(self) -> str:
        """The settings as agent.toml text: tomllib reads it back into the same settings. A key
        is shown masked on a comment line (a masked value read back would be a wrong key);
        unset fields are comments too (TOML has no null)."""
        data = self.masked()
        lines: list[str] = []
        for key in SECRET_KEYS:
            value = data.pop(key)
            lines.append(f'# {key} = "{value}"  (masked)' if value else f"# {key}: not set")
        _toml_table(lines, [], data)
        return "\n".join(lines).strip() + "\n"


SECRET_KEYS = ("openai_api_key", "anthropic_api_key", "llm_api_key")


def _toml_table(lines: list[str], path: list[str], table: dict[str, Any]) -> None:
    """Append `table` (plain JSON data) as TOML: its own values, then each nested table under its header."""
    nested = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path and (len(nested) < len(table) or not nested):
        lines += ["", f"[{'.'.join(map(_toml_key, path))}]"]
    for key, value in table.items():
        if key in nested:
            continue
        lines.append(f"# {_toml_key(key)}: not set" if value is None else f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in nested.items():
        _toml_table(lines, [*path, key], value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes (\\, \", \n, \uXXXX) are TOML's basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


class ConfigError(Exception):
    """A configuration that does not validate; the message names the field and file."""


def load_settings(**overrides: Any) -> Settings:
    import tomllib

    from pydantic import ValidationError

    for path in Settings.model_construct().config_files():
        try:
            tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        given = {k for k, v in overrides.items() if v is not None}
        where = ("the command line" if err["loc"] and err["loc"][0] in given
                 else ", ".join(str(p) for p in Settings.model_construct().config_files()) or "environment")
        raise ConfigError(f"bad configuration value for '{field}' ({where}): {err['msg']}") from None
    except Exception as exc:  # a TOML syntax error
        raise ConfigError(f"cannot read configuration: {exc}") from None
