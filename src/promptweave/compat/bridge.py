"""The long tail: a reference class by name, only when the user installed that reference.

A name is served in one of two ways, and no other:

1. **Registry name**: the name is registered in the reference's own registry for that family
   (``LOAD_DATASET``, ``ICL_EVALUATORS``, ``TEXT_POSTPROCESSORS``).
2. **Exported name**: many configs import a class straight from the reference
   (``from opencompass.datasets import NeedleBenchOriginDataset``) and OpenCompass builds it from the class object,
   never through a registry. Such a name is served when it is an attribute of one of the modules in ``reference_tables.EXPORTS``
   for that family (a fixed list written here, never taken from a config) **and** it is of the family's kind: for
   loaders and evaluators a subclass of the reference's base class (``BaseDataset``, ``BaseEvaluator``), for
   postprocessors (text ones, and a judge's ``dict_postprocessor``) a plain function defined inside the reference
   package under that very name (a ``def``, not a lambda or an alias).

3. **Defined below an allow-listed package**: configs also import from a reference's sub-modules
   (``from opencompass.datasets.ruler.ruler_cwe import RulerCweEvaluator``). A name is served when the reference's
   static index (``compat.reference_index``) finds exactly one module inside the package of an allow-listed module
   that defines a class of that name of the family's kind (a ``def`` for postprocessors); that module, chosen by
   the index and never by the config, is imported and the object checked as in rule 2.

A config's dotted path is never imported: only the bare name is looked up, and only in the allow-listed modules or
the one module the index names, so a config cannot use the bridge to reach code the reference does not offer for
that family.

**Installed but not importable.** A reference installed without its dependencies (``pip install --no-deps``) is
read instead (``compat.reference_index``: its source parsed, never run). A name that reading finds under the same
two rules is answered with a :class:`StaticHandle`: planning and ``lint`` accept it, with a warning that says so;
anything that would construct or call it (``run`` loading rows, scoring) raises one
:class:`~promptweave.errors.ReferenceUnavailableError` naming the class, the reference and its import failure.
``PROMPTWEAVE_NO_REFERENCE=1`` hides the installed references altogether.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from promptweave.compat.reference_index import index_for, verified_origin
from promptweave.compat.reference_tables import (
    EXPORTS,
    REGISTRIES,
    export_modules,
    package_root,
    references_hidden,
    within,
)

# module -> why importing it failed ("No module named 'mmengine'"), for the modules ``_module`` could not import
_IMPORT_ERRORS: dict[str, str] = {}
# (family, name) -> why the last lookup of an indexed name found nothing (see :func:`why_unresolved`)
_WHY: dict[tuple[str, str], str] = {}


@contextmanager
def _installed_only() -> Iterator[None]:
    """``sys.path`` without the working directory (``''``, ``.``, the cwd itself, as ``python -m`` puts it first)
    while a reference module is imported, so nothing in the user's folder stands in for the reference or for what
    it imports."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        cwd = None
    saved = list(sys.path)

    def in_cwd(entry: str) -> bool:
        if entry in ("", "."):
            return True
        try:
            return cwd is not None and Path(entry).resolve() == cwd
        except (OSError, ValueError):
            return True

    sys.path[:] = [p for p in saved if not in_cwd(p)]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        added = [p for p in sys.path if p not in saved]
        sys.path[:] = saved + added


def _from_installed(package: str) -> str | None:
    """Why ``package`` (as imported, or as it would be) is not the installed one; None when it is."""
    root = package_root(package)
    if root is None:
        return f"{package} is not installed in this interpreter's site-packages"
    loaded = sys.modules.get(package)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        if not origin or not within(Path(origin), root):
            return f"{package} was imported from {origin or 'a namespace'}, not from its installed folder {root}"
    return None


@cache
def _module(module: str) -> Any:
    """The reference module, imported from the installed package only (None, with the reason kept, when it cannot
    be imported)."""
    package = module.split(".")[0]
    refused = _from_installed(package)
    if refused:
        _IMPORT_ERRORS[module] = refused
        return None
    try:
        with _installed_only(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the reference's own deprecation chatter is not the user's concern
            mod = importlib.import_module(module)
    except BaseException as exc:  # noqa: BLE001 - an installed but unusable reference (missing deps): read, not run
        if isinstance(exc, KeyboardInterrupt):
            raise
        _IMPORT_ERRORS[module] = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
        return None
    refused = _from_installed(package)
    if refused:
        _IMPORT_ERRORS[module] = refused
        return None
    return mod


@cache
def _registry(module: str, attr: str) -> Any:
    mod = _module(module)
    return None if mod is None else getattr(mod, attr, None)


def _exported(package: str, base: tuple[str, str] | None, modules: tuple[str, ...], name: str) -> Any:
    """``name`` as exported by one of ``modules``, if it is of the family's kind; else None."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    base_cls = None
    if base is not None:
        base_cls = _registry(*base)
        if not isinstance(base_cls, type):
            return None
    for module in modules:
        mod = _module(module)
        if mod is None:
            continue
        obj = getattr(mod, name, None)
        if obj is None:
            continue
        if base_cls is not None:
            if isinstance(obj, type) and issubclass(obj, base_cls) and obj is not base_cls:
                return obj
        elif inspect.isfunction(obj) and obj.__name__ == name \
                and (getattr(obj, "__module__", "") or "").split(".")[0] == package:
            return obj
    return None


class StaticHandle:
    """A reference's class or function known from its source only: its package is installed but cannot be
    imported here (a dependency is missing, or its module fails). Planning accepts it; constructing or calling it raises
    :class:`~promptweave.errors.ReferenceUnavailableError`."""

    def __init__(self, package: str, family: str, name: str, rule: str, kind: str, import_error: str,
                 field: str | None = None) -> None:
        self.package, self.family, self.__name__ = package, family, name
        self.rule, self.kind, self.import_error, self.field = rule, kind, import_error, field
        self.__module__ = f"{package} (read from its source)"
        self.__qualname__ = name

    @property
    def note(self) -> str:
        what = {"registered": "registered", "exported": "exported"}.get(self.rule, "")
        what = what + " " if what else ""
        return (f"{self.family} {self.__name__}: {self.package}'s {what}{self.kind} ({self.cause}, so `run` "
                f"cannot use it: {self.import_error})")

    @property
    def cause(self) -> str:
        """What the import failure means, in words: a missing dependency only when it is one."""
        err = self.import_error
        if err.startswith("No module named") or "cannot import name" in err:
            return "a package it imports is not installed here"
        if "not installed in this interpreter" in err or "not from its installed folder" in err:
            return "it is not the installed package"
        return "its module fails to import here"

    def at(self, field: str | None) -> StaticHandle:
        """The same handle, whose error names ``field`` (the config path that named it)."""
        return StaticHandle(self.package, self.family, self.__name__, self.rule, self.kind, self.import_error,
                            field)

    def unavailable(self, *, file: str | None = None, field: str | None = None) -> Any:
        from promptweave.errors import ReferenceUnavailableError

        return ReferenceUnavailableError(
            f"the {self.family} {self.__name__!r} is {self.package}'s {self.kind}, but {self.cause} "
            f"({self.import_error}), so promptweave cannot use it here",
            file=file, field=field or self.field, value=self.__name__,
            expected=f"{self.package} installed with its dependencies (pip install {_pip_name(self.package)}, "
                     "without --no-deps), or a name promptweave implements natively (see README)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.unavailable()

    def load(self, *args: Any, **kwargs: Any) -> Any:
        raise self.unavailable()

    def __repr__(self) -> str:
        return f"<{self.package} {self.family} {self.__name__} (read from its source, not importable)>"


def _pip_name(package: str) -> str:
    return {"ais_bench": "ais_bench_benchmark"}.get(package, package)


def is_static(obj: Any) -> bool:
    """A :class:`StaticHandle`, possibly inside ``functools.partial``."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return isinstance(obj, StaticHandle)


def find_static(obj: Any, depth: int = 6, seen: set[int] | None = None) -> StaticHandle | None:
    """The first :class:`StaticHandle` held by an evaluation object (its evaluator, postprocessors, judges)."""
    seen = set() if seen is None else seen
    if obj is None or id(obj) in seen or depth < 0 or isinstance(obj, (str, bytes, int, float, bool)):
        return None
    seen.add(id(obj))
    if isinstance(obj, StaticHandle):
        return obj
    if isinstance(obj, functools.partial):
        return find_static(obj.func, depth, seen)
    if isinstance(obj, (list, tuple)):
        children: Any = obj
    elif isinstance(obj, dict):
        children = obj.values()
    elif hasattr(obj, "__dict__") and not isinstance(obj, type) and not callable(getattr(obj, "__self__", None)):
        children = [v for k, v in vars(obj).items() if k not in ("test_rows", "rows")]
    else:
        return None
    for child in children:
        found = find_static(child, depth - 1, seen)
        if found is not None:
            return found
    return None


def check_runnable(tasks: Any, *, file: str | None = None) -> None:
    """Before a run sends anything: a task whose scoring needs a class known only from an unimportable reference's
    source fails now, with the typed error, rather than after every prediction is made."""
    for t in tasks:
        handle = find_static(getattr(t, "evaluation", None))
        if handle is not None:
            raise handle.unavailable(file=file)


def mark_unrunnable(tasks: Any, *, file: str | None = None) -> None:
    """For ``run --dry-run``: a task :func:`check_runnable` would refuse is listed as refused, with that error, so
    the dry run fails as the run would."""
    for t in tasks:
        if getattr(t, "refused", None) is not None:
            continue
        handle = find_static(getattr(t, "evaluation", None))
        if handle is not None:
            t.refused = handle.unavailable(file=file)


def _static(package: str, family: str, name: str, rule: str, import_error: str) -> StaticHandle | None:
    index = index_for(package)
    got = index.lookup(family, name, rule) if index is not None else None
    if got is None:
        return None
    handle = StaticHandle(package, family, name, rule, got[1], import_error)
    from promptweave.errors import PromptweaveWarning

    warnings.warn(handle.note, PromptweaveWarning, stacklevel=3)
    return handle


def _import_error(*modules: str) -> str | None:
    """Why one of ``modules`` could not be imported (None when all import)."""
    for module in modules:
        if _module(module) is None:
            return _IMPORT_ERRORS.get(module, f"cannot import {module}")
    return None


def _package_error(package: str) -> str | None:
    """Why ``package``'s registry module cannot be imported. Its exporting modules register their classes in it,
    so they cannot import either: they are not tried (importing a reference's half-importable modules is slow)."""
    for family_entries in REGISTRIES.values():
        for pkg, module, _attr in family_entries:
            if pkg == package:
                err = _import_error(module)
                if err:
                    return err
    return None


def _installed(package: str) -> bool:
    return not references_hidden() and package_root(package) is not None


def reference_class(family: str, name: str, imported_from: str = "") -> tuple[str, Any] | None:
    """``(package, class)`` an installed reference offers under ``name`` for ``family`` (see the module doc).

    ``imported_from``: the module the config imported the name from, which only chooses between two classes the
    reference itself registers under one name (see :func:`_as_imported`); it is never imported.
    When the reference is installed but cannot be imported, the class is a :class:`StaticHandle` (and a
    ``PromptweaveWarning`` says so)."""
    if not isinstance(name, str) or not name or "." in name:
        return None  # only a bare name: a dotted path is never looked up, whatever the family
    _WHY.pop((family, name), None)
    for package, module, attr in REGISTRIES.get(family, ()):
        if not _installed(package):
            continue
        found = _registered(package, family, name, module, attr)
        if found is not None:
            return package, _as_imported(package, family, found, name, imported_from)
    for package, base, modules in EXPORTS.get(family, ()):
        if not _installed(package):
            continue
        err = _package_error(package) or _import_error(*((base[0],) if base else ()), *modules)
        if err:
            handle = _static(package, family, name, "exported", err)
            if handle is not None:
                return package, handle
            continue
        found = _exported(package, base, modules, name)
        if found is not None:
            return package, found
    for package, base, _modules in EXPORTS.get(family, ()):
        if not _installed(package):
            continue
        found = _defined_below(package, family, base, name)
        if found is not None:
            return package, found
    return None


def _registered(package: str, family: str, name: str, module: str, attr: str) -> Any:
    """Rule 1. A registry holds a name only once the module that registers it has been imported, and
    ``opencompass.datasets`` does not import every such module (NeedleBench, RULER, korbench ...): the module the
    index names for ``name`` (checked against the installed files) is imported first, so the answer does not
    depend on what else ran in the process. A name the index does not know is looked up after the family's
    allow-listed modules are imported (they register most names)."""
    reg = _registry(module, attr)
    if reg is None:
        err = _import_error(module)
        return _static(package, family, name, "registered", err) if err else None
    entry = index_for(package)
    rule = entry.lookup(family, name) if entry is not None else None
    if rule is not None and rule[0] == "registered":
        origin = verified_origin(package, family, name)
        if origin is None:
            _WHY[(family, name)] = f"{package}'s index entry for {name!r} does not match the installed files"
            return None
        if _module(origin[1]) is None:
            err = _IMPORT_ERRORS.get(origin[1], f"cannot import {origin[1]}")
            return _static(package, family, name, "registered", err)
        found = _registry_get(reg, name)
        if found is None:
            _WHY[(family, name)] = (f"{package} registers {name!r} in {origin[1]}, but its registry does not hold "
                                    "it after that module is imported")
        return found
    found = _registry_get(reg, name)
    if found is None and rule is None:
        for mod in export_modules(package, family):
            _module(mod)
        found = _registry_get(reg, name)
    return found


def _as_imported(package: str, family: str, found: Any, name: str, imported_from: str) -> Any:
    """OpenCompass registers a few names twice (``FTSEvaluator`` in ``datasets.mol_instructions_chem`` and in
    ``datasets.smolinstruct``: its registry keeps the last one), and builds a config's class from the module the
    config imported it from (the dumped config holds the full path). So where the config's module is one the
    reference has itself imported already (``sys.modules``: nothing is imported for the config), inside its
    installed package, and defines a class of that name of the family's kind, that class is the answer; otherwise
    the registry's. Registering happens when ``opencompass.datasets`` is imported, which imports every such module,
    so the answer does not depend on what ran before."""
    if (not imported_from or not isinstance(found, type) or found.__module__ == imported_from
            or not imported_from.startswith(package + ".")):
        return found
    mod = sys.modules.get(imported_from)
    alt = getattr(mod, name, None) if mod is not None else None
    root = package_root(package)
    where = getattr(mod, "__file__", None)
    if not (isinstance(alt, type) and alt.__module__ == imported_from and alt.__name__ == name and root is not None
            and where and within(Path(where), root)):
        return found
    bases = [_registry(*b) for p, b, _m in EXPORTS.get(family, ()) if p == package and b]
    return alt if any(isinstance(b, type) and issubclass(alt, b) and issubclass(found, b) for b in bases) else found


def _registry_get(reg: Any, name: str) -> Any:
    try:
        return reg.get(name)
    except Exception:  # noqa: BLE001 - a registry that fails to resolve a name has no such name
        return None


def _defined_below(package: str, family: str, base: tuple[str, str] | None, name: str) -> Any:
    """Rule 3: the class (function) the index found defined in one module inside an allow-listed package."""
    index = index_for(package)
    if index is None or index.lookup(family, name, "submodule") is None or not name.isidentifier():
        return None
    origin = verified_origin(package, family, name)
    if origin is None:
        return None
    module = origin[1]
    err = _package_error(package) or _import_error(*((base[0],) if base else ()), module)
    if err:
        return _static(package, family, name, "submodule", err)
    obj = getattr(_module(module), name, None)
    if base is None:
        return obj if inspect.isfunction(obj) and obj.__name__ == name and obj.__module__ == module else None
    base_cls = _registry(*base)
    if isinstance(base_cls, type) and isinstance(obj, type) and issubclass(obj, base_cls) and obj is not base_cls:
        return obj
    return None


def why_unresolved(family: str, name: str) -> str | None:
    """Why the last :func:`reference_class` call for a name an installed reference's source defines found
    nothing (None when there is nothing more to say than "unknown")."""
    return _WHY.get((family, name))


def installed_references() -> list[str]:
    """Reference packages installed here (found, not imported: they may lack their dependencies); none when
    ``PROMPTWEAVE_NO_REFERENCE=1``."""
    return [pkg for pkg in ("opencompass", "ais_bench") if _installed(pkg)]
