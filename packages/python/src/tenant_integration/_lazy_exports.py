"""The public names of a module loaded on first use (PEP 562), so that importing the package costs
only what the program uses: one rule for the package and the modules that re-export others' names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    *,
    rehome: bool = False,
    computed: Mapping[str, Callable[[], object]] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``.

    ``exports`` maps each public name to the module (relative to this one's package) that defines
    it; ``computed`` names values made by a function instead. A name is loaded on first use and kept
    in ``namespace``, so later lookups are plain attribute reads. With ``rehome``, a loaded class is
    documented, printed and pickled under this module, where users import it from.
    """
    module = namespace["__name__"]
    package = namespace["__package__"]

    def load(name: str) -> object:
        if computed is not None and name in computed:
            value = computed[name]()
        elif name in exports:
            value = getattr(import_module(exports[name], package), name)
            if rehome:
                value.__module__ = module
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return load, names
