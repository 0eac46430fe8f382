"""Loading model configs: named presets shipped with kcm (`kcm/presets/*.toml`) or a TOML file.

A preset is a flat TOML table of `ModelConfig` fields. Every problem (an unknown preset, a missing
or unreadable file, bad TOML, a bad field) becomes one `UsageError` line naming what to fix.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from kcm.checker.engine.errors import UsageError
from kcm.model.config import ConfigError, ModelConfig

DEFAULT_PRESET = "default"


def preset_names() -> tuple[str, ...]:
    """The names of the shipped presets, sorted."""
    folder = resources.files("kcm") / "presets"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


def parse_toml(text: str, where: str) -> dict:
    """`text` as a TOML table; bad TOML is one `UsageError` line naming `where`."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not valid TOML ({exc})") from None


def load_preset(name: str) -> ModelConfig:
    """The shipped preset `name`, validated."""
    if name not in preset_names():
        raise UsageError(f"unknown preset '{name}'; choose one of {', '.join(preset_names())}")
    text = (resources.files("kcm") / "presets" / f"{name}.toml").read_text(encoding="utf-8")
    return _validated(parse_toml(text, f"preset '{name}'"), f"preset '{name}'")


def read_toml_file(path: str | Path, what: str = "config file") -> tuple[dict, str]:
    """A TOML file's table and the name errors use for it (`what 'path'`); a missing, unreadable
    or malformed file is one `UsageError` line."""
    p = Path(path)
    where = f"{what} '{p}'"
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{where} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where} cannot be read ({exc.__class__.__name__})") from None
    return parse_toml(text, where), where


def load_config_file(path: str | Path) -> ModelConfig:
    """A config from a TOML file, validated."""
    values, where = read_toml_file(path)
    return _validated(values, where)


def load(preset: str | None = None, config_file: str | Path | None = None) -> tuple[str, ModelConfig]:
    """The config named on the command line and its display name (`--preset` or `--config`)."""
    if preset and config_file:
        raise UsageError("give either --preset or --config, not both")
    if config_file:
        return str(config_file), load_config_file(config_file)
    name = preset or DEFAULT_PRESET
    return name, load_preset(name)


def _validated(values: dict, where: str) -> ModelConfig:
    try:
        return ModelConfig.from_mapping(values, where=where)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
