"""The engine never imports the lab: neither the simulator nor its own evaluation harness.

Read from the source with `ast` (every `import` and `from … import`, relative ones resolved,
including imports inside functions), not from what happens to be loaded at run time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import infersight

PACKAGE_ROOT = Path(infersight.__file__).resolve().parent
ENGINE = PACKAGE_ROOT / "diagnose"
FORBIDDEN = "infersight.lab"


def module_name(path: Path) -> str:
    """infersight/diagnose/rules/x.py → infersight.diagnose.rules.x (a package: its name)."""
    rel = path.resolve().relative_to(PACKAGE_ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imported(source: str, module: str, is_package: bool = False) -> Iterator[str]:
    """Every module name `source` (the text of `module`) imports; `from a import b` yields both
    `a` and `a.b`, as b may be a submodule."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def forbidden(name: str) -> bool:
    return name == FORBIDDEN or name.startswith(FORBIDDEN + ".")


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def test_the_walk_sees_every_form_of_import() -> None:
    """The check itself: absolute, relative, `from package import module`, inside a function."""
    src = (
        "import infersight.lab.sim\n"
        "from ..lab.evaluate import accuracy\n"
        "from infersight import lab\n"
        "def f():\n    from infersight.lab.sim.run import simulate\n"
        "from . import kb\n"
    )
    names = set(imported(src, "infersight.diagnose.engine"))
    assert {"infersight.lab.sim", "infersight.lab.evaluate", "infersight.lab"} <= names
    assert "infersight.lab.sim.run" in names and "infersight.diagnose.kb" in names
    assert set(imported("from .rules import x\n", "infersight.diagnose", is_package=True)) == {
        "infersight.diagnose.rules",
        "infersight.diagnose.rules.x",
    }
    assert [n for n in names if forbidden(n)]
    assert not forbidden("infersight.labels")


def test_no_engine_module_imports_the_lab() -> None:
    mods = engine_modules()
    assert len(mods) > 10, "the engine's modules were not found"
    offenders = [
        f"{p.relative_to(PACKAGE_ROOT)} imports {name}"
        for p in mods
        for name in imported(p.read_text("utf-8"), module_name(p), p.name == "__init__.py")
        if forbidden(name)
    ]
    assert not offenders, "\n".join(offenders)


def _file_of(name: str) -> Path | None:
    rel = Path(*name.split("."))
    for cand in (
        PACKAGE_ROOT.parent / rel.with_suffix(".py"),
        PACKAGE_ROOT.parent / rel / "__init__.py",
    ):
        if cand.is_file():
            return cand
    return None


def test_nothing_the_engine_imports_imports_the_lab() -> None:
    """Transitively too: detect, frame, signals … must not pull the simulator in for it."""
    todo = [module_name(p) for p in engine_modules()]
    seen: dict[str, str] = {m: "" for m in todo}  # module → the module that imported it
    while todo:
        mod = todo.pop()
        path = _file_of(mod)
        if path is None:
            continue
        for name in imported(path.read_text("utf-8"), mod, path.name == "__init__.py"):
            if not name.startswith("infersight") or name in seen:
                continue
            seen[name] = mod
            if not forbidden(name):
                todo.append(name)
    reached = sorted(n for n in seen if forbidden(n))
    chains = []
    for n in reached:
        chain = [n]
        while seen.get(chain[-1]):
            chain.append(seen[chain[-1]])
        chains.append(" ← ".join(chain))
    assert not chains, "\n".join(chains)
