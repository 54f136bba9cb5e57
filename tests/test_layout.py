"""The package layout (docs/architecture.md): families, and the import directions between layers.

Backends import the semantics layer (``dmlops.descs``), the catalogue and the shared
helpers, never each other; the semantics layer imports no backend. Every operator with
hand-written code lives in its family's module, of the same basename in every layer.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import dmlops
from dmlops.descs import GENERIC_FAMILIES, REGISTRY, desc_class

PACKAGE = Path(dmlops.__file__).parent
BACKEND_PACKAGES = ("reference", "cpu", "cuda", "directml")
LAYERS = ("descs", "reference", "cpu", "cuda", "ops")
"""The layers that hold one module per family."""
BACKEND_LAYERS = ("reference", "cpu", "cuda")
"""The layers whose family modules map operator names to functions (``OPERATORS``)."""


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """The absolute names of every module a file imports (top level and inside functions)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            # `from . import cpu` imports a package too
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _packages_hit(imports: set[str], packages: tuple[str, ...]) -> set[str]:
    hit = set()
    for module in imports:
        parts = module.split(".")
        if len(parts) >= 2 and parts[0] == "dmlops" and parts[1] in packages:
            hit.add(parts[1])
    return hit


@pytest.mark.parametrize("package", BACKEND_PACKAGES)  # not "backend": conftest deselects backend="directml"
def test_backends_never_import_each_other(package: str) -> None:
    others = tuple(b for b in BACKEND_PACKAGES if b != package)
    offences = {
        str(path.relative_to(PACKAGE)): sorted(_packages_hit(imported_modules(path), others))
        for path in _modules(package)
    }
    offences = {path: hit for path, hit in offences.items() if hit}
    assert not offences, f"backend {package!r} imports other backends: {offences}"


@pytest.mark.parametrize("package", ["descs", "catalogue"])
def test_semantics_and_catalogue_import_no_backend(package: str) -> None:
    offences = {
        str(path.relative_to(PACKAGE)): sorted(_packages_hit(imported_modules(path), (*BACKEND_PACKAGES, "ops")))
        for path in _modules(package)
    }
    offences = {path: hit for path, hit in offences.items() if hit}
    assert not offences, f"{package} imports a backend: {offences}"


def test_the_import_check_sees_relative_and_nested_imports() -> None:
    # the checker itself: a relative import inside a function, resolved from dmlops/cpu/
    source = "def f():\n    from ..reference.roi import sample_taps\n    from . import _common\n"
    path = PACKAGE / "cpu" / "_probe_not_a_module.py"
    try:
        path.write_text(source)
        imports = imported_modules(path)
    finally:
        path.unlink()
    assert "dmlops.reference.roi" in imports and "dmlops.cpu._common" in imports
    assert _packages_hit(imports, ("reference",)) == {"reference"}


@pytest.mark.parametrize("operator", sorted(REGISTRY))
def test_an_operator_lives_in_its_family_module_in_every_layer(operator: str) -> None:
    family, class_name = REGISTRY[operator]
    cls = desc_class(operator)
    assert cls.__name__ == class_name
    assert cls.family == family
    assert cls.__module__ == f"dmlops.descs.{family}"
    for layer in BACKEND_LAYERS:
        module = importlib.import_module(f"dmlops.{layer}.{family}")
        assert operator in module.OPERATORS, f"dmlops.{layer}.{family}.OPERATORS lacks {operator}"
    ops = importlib.import_module(f"dmlops.ops.{family}")
    function = getattr(dmlops, operator.lower())
    assert function.__module__ == ops.__name__


@pytest.mark.parametrize("layer", LAYERS)
def test_layers_hold_families_not_one_module_per_operator(layer: str) -> None:
    families = {family for family, _ in REGISTRY.values()} | set(GENERIC_FAMILIES)
    public = {p.stem for p in (PACKAGE / layer).glob("*.py") if not p.stem.startswith("_")}
    public |= {p.name for p in (PACKAGE / layer).iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    allowed = families | ({"generic"} if layer == "descs" else set())
    assert public <= allowed, f"dmlops/{layer}/ has modules that are no family: {sorted(public - allowed)}"
    assert not {name.lower() for name in REGISTRY} & public
