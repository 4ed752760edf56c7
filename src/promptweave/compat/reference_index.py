"""What an installed reference package offers the bridge, read from its source and never imported.

A reference installed without its dependencies (``pip install --no-deps opencompass``, the project's own way of
installing the references for reading) cannot be imported, so ``compat.bridge`` cannot ask its registries. This
module answers the bridge's two rules (see ``compat.bridge``) from the package's syntax alone:

1. **registry names**: ``@LOAD_DATASET.register_module()`` on a class or ``def`` (its own name), with a name
   (``register_module('x')``, ``name='x'``, ``name=['a', 'b']``), or a call ``REG.register_module(name=..., module=X)``
   anywhere in a module, including in ``for`` loops over a literal list/tuple/dict (or a module-level one) when the
   name is built from the loop variable with ``+``, f-strings or ``.replace``/``.lower``/``.upper``/``.format``;
2. **exported names**: the names the allow-listed modules of ``reference_tables.EXPORTS`` hold (their top-level ``class``/
   ``def`` plus what they import by name or by ``*`` from inside the package, following the chain to the defining
   module) that are of the family's kind: a class whose ``class X(Base)`` chain reaches the family's base class, or
   for postprocessors a top-level ``def`` exported under its own name;
3. **classes defined below an allow-listed package** (``opencompass.datasets.ruler.ruler_cwe.RulerCweEvaluator``,
   which configs import from that very module): a top-level class of the family's kind (a ``def`` for
   postprocessors), defined by exactly one
   module inside the package of an allow-listed module; the index records that module, the only one the bridge
   then imports for that name.

What the real import would do differently is not seen (names set by plain assignment, ``__getattr__`` tricks):
the index errs on the side of serving fewer names. Nothing of the package runs: files are read and parsed.

Every name records the module whose import defines or registers it (``origins``), and every such module the
sha256 of its file. The bridge imports that module, and only that one, to make the name exist whatever ran
before in the process.

The index is kept in memory and on disk, keyed by the package's name, version, location and the bridge's tables,
under ``$XDG_CACHE_HOME/promptweave`` (else ``~/.cache/promptweave``); a corrupt or stale cache file is rebuilt.
The cache file is data: before an entry is used (:func:`verified_origin`) its module must be a module of the
package, its file must lie inside the installed package folder and hash as recorded; any mismatch rebuilds the
index from the installed source. The package is found in the interpreter's install directories only
(``reference_tables.package_root``), never the working directory.
``PROMPTWEAVE_NO_REFERENCE=1`` hides every installed reference (``compat.bridge.installed_references``), for
checking what promptweave does alone.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import string
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.compat.reference_tables import HIDE_ENV, package_root, references_hidden, tables_for, within
from promptweave.errors import WorkdirFileError
from promptweave.safe_files import read_regular

FORMAT = 5  # bump when the index's rules change: older cache files are then rebuilt
# ``for`` loops are expanded up to this many values, so a crafted source cannot make the index build forever
_MAX_LOOP_VALUES = 512

Origin = tuple[str, str]  # (defining module, name); a submodule is (module, "")


@dataclass
class ReferenceIndex:
    """The names one installed reference package offers each bridge family, from its source."""

    package: str
    version: str
    root: str
    # family -> name -> how it is served: "registered", "exported" or "submodule"; and "class" or "function"
    names: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    # family -> name -> the module defining it, for the "submodule" rule (the one module the bridge may import)
    modules: dict[str, dict[str, str]] = field(default_factory=dict)
    # family -> name -> the module whose import defines (or registers) it, for every name
    origins: dict[str, dict[str, str]] = field(default_factory=dict)
    # module -> sha256 of its file when the index was built (a cache entry is used only while it still matches)
    hashes: dict[str, str] = field(default_factory=dict)

    def lookup(self, family: str, name: str, rule: str | None = None) -> tuple[str, str] | None:
        got = self.names.get(family, {}).get(name)
        if got is None or (rule is not None and got[0] != rule):
            return None
        return got

    def origin(self, family: str, name: str) -> str | None:
        """The module that defines or registers ``name`` (checked against the installed files)."""
        return self.origins.get(family, {}).get(name)

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "version": self.version, "root": self.root,
                "names": {f: {n: list(v) for n, v in sorted(d.items())} for f, d in self.names.items()},
                "modules": self.modules, "origins": self.origins, "hashes": self.hashes}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReferenceIndex:
        names = {str(f): {str(n): (str(v[0]), str(v[1])) for n, v in d.items()} for f, d in data["names"].items()}
        modules = {str(f): {str(n): str(m) for n, m in d.items()} for f, d in data["modules"].items()}
        origins = {str(f): {str(n): str(m) for n, m in d.items()} for f, d in data["origins"].items()}
        hashes = {str(m): str(h) for m, h in data["hashes"].items()}
        return cls(str(data["package"]), str(data["version"]), str(data["root"]), names, modules, origins, hashes)


# -- locating the package (never importing it) -----------------------------------------------------------------

def package_version(package: str, root: Path) -> str:
    """The installed distribution's version (``ais_bench`` comes from ``ais_bench_benchmark``), else a fingerprint
    of the sources (a package on ``sys.path`` with no metadata), so an edited or replaced package is re-read."""
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        pass
    try:
        for dist in metadata.packages_distributions().get(package, []):
            return metadata.version(dist)
    except Exception:  # noqa: BLE001 - broken metadata elsewhere in site-packages: fall back to the fingerprint
        pass
    h = hashlib.sha1()
    for path in sorted(_sources(root)):
        try:
            st = path.stat()
        except OSError:
            continue
        h.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return "unversioned-" + h.hexdigest()[:16]


def _sources(root: Path) -> Iterator[Path]:
    for path in root.rglob("*.py"):
        if "configs" not in path.relative_to(root).parts:  # config trees are data for users, not the package
            yield path


def module_path(root: Path, module: str) -> Path | None:
    """The installed file of ``module`` (a dotted name inside the package whose folder is ``root``), or None when
    the name is not a module of that package or its file is not inside ``root``."""
    parts = module.split(".")
    if parts[0] != root.name or not all(p.isidentifier() for p in parts):
        return None
    base = root.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if cand is not None and cand.is_file() and within(cand, root):
            return cand
    return None


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# -- the cache ---------------------------------------------------------------------------------------------------

_MEMORY: dict[tuple[str, str, str], ReferenceIndex] = {}
# (root, module, hash) already checked against the installed file in this process
_VERIFIED: set[tuple[str, str, str]] = set()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "promptweave" / "reference_index"


def index_for(package: str) -> ReferenceIndex | None:
    """The index of an installed reference package (None when it is not installed or hidden)."""
    if references_hidden():
        return None
    root = package_root(package)
    if root is None:
        return None
    tables = tables_for(package)
    memo = (package, str(root), json.dumps(tables, sort_keys=True))
    got = _MEMORY.get(memo)
    if got is not None:
        return got  # one process sees one installed version: its metadata is read once
    version = package_version(package, root)
    key = _key(package, version, root, tables)
    got = _read_cache(_cache_path(package, key), key, package, root)
    if got is None:
        got = _rebuild(package, root, version, tables)
    _MEMORY[memo] = got
    return got


def _key(package: str, version: str, root: Path, tables: Mapping[str, Any]) -> str:
    return json.dumps({"format": FORMAT, "package": package, "version": version, "root": str(root),
                       "tables": tables}, sort_keys=True)


def _cache_path(package: str, key: str) -> Path:
    return cache_dir() / f"{package}-{hashlib.sha1(key.encode()).hexdigest()[:20]}.json"


def _rebuild(package: str, root: Path, version: str, tables: Mapping[str, Any]) -> ReferenceIndex:
    got = build_index(package, root, version, tables)
    key = _key(package, version, root, tables)
    _write_cache(_cache_path(package, key), key, got)
    return got


def verified_origin(package: str, family: str, name: str) -> tuple[ReferenceIndex, str] | None:
    """``(index, module)`` for a name the index knows, its entry checked against the installed reference first:
    the module must be a module of ``package`` whose file lies inside the installed package folder and still has
    the content hash recorded when the index was built. Any mismatch (an edited cache file, an upgraded or
    tampered package) rebuilds the index from the installed source and asks it again; a cache is data, never
    trusted as it is read."""
    index = index_for(package)
    if index is None:
        return None
    for attempt in (0, 1):
        module = index.origin(family, name)
        if module is None or index.lookup(family, name) is None:
            return None
        if _entry_ok(index, package, module):
            return index, module
        if attempt:
            return None
        root = package_root(package)
        if root is None:
            return None
        tables = tables_for(package)
        index = _rebuild(package, root, package_version(package, root), tables)
        _MEMORY[(package, str(root), json.dumps(tables, sort_keys=True))] = index
    return None


def _entry_ok(index: ReferenceIndex, package: str, module: str) -> bool:
    root = package_root(package)
    if root is None or index.package != package or Path(index.root) != root:
        return False
    if module != package and not module.startswith(package + "."):
        return False
    expected = index.hashes.get(module)
    if not expected:
        return False
    if (str(root), module, expected) in _VERIFIED:
        return True
    path = module_path(root, module)
    if path is None or file_hash(path) != expected:
        return False
    _VERIFIED.add((str(root), module, expected))
    return True


MAX_CACHE_BYTES = 64_000_000  # an index of the largest reference is a few MB


def _read_cache(path: Path, key: str, package: str, root: Path) -> ReferenceIndex | None:
    try:
        # a regular file of sane size only: a FIFO would block, a device would never end
        data = json.loads(read_regular(path, max_bytes=MAX_CACHE_BYTES).decode("utf-8"))
        if data.get("key") != key:
            return None
        got = ReferenceIndex.from_json(data["index"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            WorkdirFileError):
        return None  # missing, corrupt or not a file: rebuilt
    if got.package != package or Path(got.root) != root:
        return None  # an index of another package or location: rebuilt
    return got


def _write_cache(path: Path, key: str, index: ReferenceIndex) -> None:
    """Written to a temporary file then renamed, so a reader never sees half a file; an unwritable cache is skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "index": index.to_json()}, fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def clear_memory() -> None:
    _MEMORY.clear()
    _VERIFIED.clear()


# -- building ----------------------------------------------------------------------------------------------------

def build_index(package: str, root: Path, version: str, tables: Mapping[str, Any]) -> ReferenceIndex:
    sp = StaticPackage(package, root)
    names: dict[str, dict[str, tuple[str, str]]] = {}
    origins: dict[str, dict[str, str]] = {}
    registered = sp.registered_where()
    for family, attrs in tables["registries"].items():
        fam = names.setdefault(family, {})
        where = origins.setdefault(family, {})
        for attr in attrs:
            for name, (kind, module) in registered.get(attr, {}).items():
                if name not in fam:
                    fam[name] = ("registered", kind)
                    where[name] = module
    for family, entries in tables["exports"].items():
        fam = names.setdefault(family, {})
        where = origins.setdefault(family, {})
        for base, modules in entries:
            for name, module in sp.exported_where(tuple(base) if base else None, tuple(modules)).items():
                if name not in fam:
                    fam[name] = ("exported", "function" if base is None else "class")
                    where[name] = module
    found: dict[str, dict[str, str]] = {}
    for family, entries in tables["exports"].items():
        fam = names.setdefault(family, {})
        where = origins.setdefault(family, {})
        for base, modules in entries:
            for name, module in sp.defined_below(tuple(base) if base else None, tuple(modules)).items():
                if name not in fam:
                    fam[name] = ("submodule", "function" if base is None else "class")
                    found.setdefault(family, {})[name] = module
                    where[name] = module
    hashes: dict[str, str] = {}
    for where in origins.values():
        for module in set(where.values()):
            path = sp.files.get(module)
            digest = file_hash(path) if path is not None else None
            if digest:
                hashes[module] = digest
    return ReferenceIndex(package, version, str(root), names, found, origins, hashes)


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            # the reference's own invalid escapes ('\\d' in a plain string) are its business, not the user's
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class StaticPackage:
    """Module namespaces, registrations, class bases and functions of one package, from its syntax only."""

    def __init__(self, package: str, root: Path | None = None, sources: Mapping[str, str] | None = None) -> None:
        """``root``: the package folder on disk; ``sources`` (``{"pkg.mod": text}``) instead, for tests."""
        self.pkg = package
        self.files: dict[str, Path | None] = {}
        self._text: dict[str, str] = dict(sources or {})
        self._is_init: set[str] = set()
        if sources is not None:
            self.files = {m: None for m in sources}
            self._is_init = {m for m in sources if m == package or any(o.startswith(m + ".") for o in sources)}
        elif root is not None:
            for path in _sources(root):
                rel = path.relative_to(root.parent).with_suffix("")
                parts = list(rel.parts)
                if parts[-1] == "__init__":
                    parts.pop()
                    self._is_init.add(".".join(parts))
                self.files[".".join(parts)] = path
        self._trees: dict[str, ast.Module | None] = {}
        self._ns: dict[str, dict[str, Origin]] = {}
        self._kind: dict[tuple[Origin, Origin], bool] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            if module in self._text:
                text: str | None = self._text[module]
            else:
                path = self.files.get(module)
                try:
                    text = path.read_text(encoding="utf-8", errors="replace") if path else None
                except OSError:
                    text = None
            self._trees[module] = _parse(text) if text is not None else None
        return self._trees[module]

    # -- rule 1: registrations ---------------------------------------------------------------------------------
    def registered(self) -> dict[str, dict[str, str]]:
        """``{registry variable: {name: "class" | "function"}}`` over every module."""
        return {var: {n: kind for n, (kind, _m) in got.items()} for var, got in self.registered_where().items()}

    def registered_where(self) -> dict[str, dict[str, tuple[str, str]]]:
        """``{registry variable: {name: (kind, the module whose import registers it)}}`` over every module."""
        out: dict[str, dict[str, tuple[str, str]]] = {}
        for module in sorted(self.files):
            tree = self.tree(module)
            if tree is None:
                continue
            for var, name, kind in registrations(tree):
                out.setdefault(var, {}).setdefault(name, (kind, module))
        return out

    # -- rule 2: exports ---------------------------------------------------------------------------------------
    @staticmethod
    def _top(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node, _fallback in StaticPackage._top_flagged(body):
            yield node

    @staticmethod
    def _top_flagged(body: list[ast.stmt], fallback: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
        """Top-level statements, each with whether it sits in an ``except`` handler: a fallback that runs only
        when the ``try`` body's import failed (``try: from ..base import BaseDataset`` / ``except ImportError:
        class BaseDataset: ...``), which must not shadow what the body binds in the installed package."""
        for node in body:
            yield node, fallback
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for sub in ("body", "orelse", "finalbody"):
                    yield from StaticPackage._top_flagged(getattr(node, sub, []) or [], fallback)
                for h in getattr(node, "handlers", []):
                    yield from StaticPackage._top_flagged(h.body, True)

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if module not in self._is_init:
            base = base[:-1]
        base = base[:max(0, len(base) - (node.level - 1))]
        return ".".join(base + ([node.module] if node.module else []))

    def namespace(self, module: str) -> dict[str, Origin]:
        """``{name: (defining module, name)}`` visible as attributes of ``module``."""
        if module in self._ns:
            return self._ns[module]
        ns: dict[str, Origin] = {}
        self._ns[module] = ns  # an import cycle sees what was read so far, as Python does
        tree = self.tree(module)
        for node, fallback in self._top_flagged(tree.body if tree else []):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if not (fallback and node.name in ns):
                    ns[node.name] = (module, node.name)
            elif isinstance(node, ast.ImportFrom):
                src = self._absolute(module, node)
                if src.split(".")[0] != self.pkg:
                    continue  # from outside the package: not followed, so not served
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if fallback and bound in ns:
                        continue
                    if alias.name == "*":
                        got = self.public(src)
                        ns.update({k: v for k, v in got.items() if k not in ns} if fallback else got)
                    elif f"{src}.{alias.name}" in self.files:
                        ns[bound] = (f"{src}.{alias.name}", "")
                    else:
                        ns[bound] = self.namespace(src).get(alias.name, (src, alias.name))
        return ns

    def public(self, module: str) -> dict[str, Origin]:
        ns = self.namespace(module)
        tree = self.tree(module)
        for node in self._top(tree.body if tree else []):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets) \
                    and isinstance(node.value, (ast.List, ast.Tuple)):
                names = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
                return {k: v for k, v in ns.items() if k in names}
        return {k: v for k, v in ns.items() if not k.startswith("_")}

    def definition(self, origin: Origin) -> ast.AST | None:
        tree = self.tree(origin[0])
        for node in self._top(tree.body if tree else []):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == origin[1]:
                return node
        return None

    def is_kind(self, origin: Origin, base: Origin | None) -> bool:
        """A subclass of ``base`` (transitively), or for ``base`` None a top-level function of the package."""
        node = self.definition(origin)
        if base is None:
            return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        key = (origin, base)
        if key in self._kind:
            return self._kind[key]
        self._kind[key] = False  # a cycle in the bases is no subclass
        ok = False
        if isinstance(node, ast.ClassDef) and origin != base:
            ns = self.namespace(origin[0])
            for b in node.bases:
                got: Origin | None = None
                if isinstance(b, ast.Name):
                    got = ns.get(b.id)
                elif isinstance(b, ast.Attribute) and isinstance(b.value, ast.Name):
                    mod = ns.get(b.value.id)  # ``module.Class``: the class as the submodule names it
                    got = self.namespace(mod[0]).get(b.attr) if mod and not mod[1] else None
                if got is not None and (got == base or self.is_kind(got, base)):
                    ok = True
                    break
        self._kind[key] = ok
        return ok

    def defined_below(self, base: Origin | None, modules: Iterable[str]) -> dict[str, str]:
        """Classes of the family's kind (``def``s for ``base`` None) defined at the top of a module *inside* an
        allow-listed package (configs import them from there, e.g. ``opencompass.datasets.ruler.ruler_cwe``):
        ``{name: module}``, for names defined by exactly one module (an ambiguous name is not served)."""
        prefixes = tuple(m + "." for m in modules)
        seen: dict[str, set[str]] = {}
        for module in sorted(self.files):
            if not module.startswith(prefixes):
                continue
            tree = self.tree(module)
            for node in self._top(tree.body if tree else []):
                kind = (isinstance(node, ast.ClassDef) and base is not None and self.is_kind((module, node.name), base)) \
                    or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and base is None)
                if kind and not node.name.startswith("_"):
                    seen.setdefault(node.name, set()).add(module)
        return {name: next(iter(mods)) for name, mods in seen.items() if len(mods) == 1}

    def exported(self, base: Origin | None, modules: Iterable[str]) -> set[str]:
        """Names the bridge's export rule would serve from ``modules``."""
        return set(self.exported_where(base, modules))

    def exported_where(self, base: Origin | None, modules: Iterable[str]) -> dict[str, str]:
        """``{name: defining module}`` for the names the bridge's export rule would serve from ``modules``."""
        out: dict[str, str] = {}
        for module in modules:
            for name, origin in self.namespace(module).items():
                if not name.startswith("_") and self.is_kind(origin, base) and (base or origin[1] == name):
                    out.setdefault(name, origin[0])
        return out


# -- registrations, statically ---------------------------------------------------------------------------------

def registrations(tree: ast.Module) -> list[tuple[str, str, str]]:
    """``(registry variable, name, kind)`` for every ``register_module`` use in one module."""
    aliases = _registry_aliases(tree)
    consts = module_constants(tree)
    out: list[tuple[str, str, str]] = []
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def reg_call(node: ast.AST) -> tuple[str, ast.Call] | None:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "register_module"):
            return None
        owner = node.func.value
        if isinstance(owner, ast.Name):
            var = owner.id
        elif isinstance(owner, ast.Attribute):  # ``registry.LOAD_DATASET.register_module``
            var = owner.attr
        else:
            return None
        return aliases.get(var, var), node

    def loop_env(node: ast.AST) -> list[dict[str, str]]:
        """Every binding of the enclosing ``for`` loops' variables (one empty binding outside loops)."""
        envs: list[dict[str, str]] = [{}]
        cur = parents.get(node)
        while cur is not None:
            if isinstance(cur, ast.For) and isinstance(cur.target, ast.Name):
                values = _iter_values(cur.iter, consts)
                if values is not None:
                    envs = [{**e, cur.target.id: v} for e in envs for v in values
                            if cur.target.id not in e][:_MAX_LOOP_VALUES] or envs
            cur = parents.get(cur)
        return envs

    def names_of(call: ast.Call, default: str | None) -> list[str]:
        name_expr: ast.expr | None = None
        for kw in call.keywords:
            if kw.arg == "name":
                name_expr = kw.value
        if name_expr is None and call.args:
            name_expr = call.args[0]
        if name_expr is not None and not (isinstance(name_expr, ast.Constant) and name_expr.value is None):
            got: list[str] = []
            for env in loop_env(call):
                scope = {**consts, **env}
                if isinstance(name_expr, (ast.List, ast.Tuple)):
                    vals = [_str_value(e, scope) for e in name_expr.elts]
                else:
                    vals = [_str_value(name_expr, scope)]
                got += [v for v in vals if v]
            return list(dict.fromkeys(got))
        for kw in call.keywords:
            if kw.arg == "module" and isinstance(kw.value, ast.Name):
                return [kw.value.id]
        return [default] if default else []

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            for dec in node.decorator_list:
                got = reg_call(dec)
                if got:
                    out += [(got[0], n, kind) for n in names_of(got[1], node.name)]
        elif isinstance(node, ast.Expr):
            got = reg_call(node.value)
            if got:
                out += [(got[0], n, "class") for n in names_of(got[1], None)]
    return out


def _registry_aliases(tree: ast.Module) -> dict[str, str]:
    """``from x.registry import LOAD_DATASET as LD``: LD -> LOAD_DATASET."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
    return out


def module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments (strings, and lists/tuples/sets/dicts of strings)."""
    out: dict[str, Any] = {}
    for node in StaticPackage._top(tree.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Dict):  # a dict's keys are what a loop over it takes; its values may be code
                keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                if len(keys) == len(value.keys):
                    out[node.targets[0].id] = keys
                continue
            try:
                out[node.targets[0].id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def _iter_values(node: ast.expr, consts: Mapping[str, Any]) -> list[str] | None:
    """The string values a ``for`` loop takes over a literal or a module-level literal (a dict: its keys)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" \
            and not node.args:
        node = node.func.value
    if isinstance(node, ast.Name):
        value = consts.get(node.id)
    else:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        vals = [v for v in value if isinstance(v, str)]
        return vals[:_MAX_LOOP_VALUES]
    return None


_MAX_NAME = 1000  # longer "names" are no registry names: never built, so a crafted source cannot exhaust memory
_STR_METHODS = {"replace", "lower", "upper", "strip", "lstrip", "rstrip", "format", "capitalize", "title"}


def _str_value(node: ast.expr, scope: Mapping[str, Any], depth: int = 0) -> str | None:
    """A string expression evaluated over known names, or None when it is not statically evident."""
    got = _str_value_unbounded(node, scope, depth)
    return got if got is None or len(got) <= _MAX_NAME else None


def _str_value_unbounded(node: ast.expr, scope: Mapping[str, Any], depth: int) -> str | None:
    if depth > 20:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        v = scope.get(node.id)
        return v if isinstance(v, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _str_value(node.left, scope, depth + 1), _str_value(node.right, scope, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                if v.conversion not in (-1, 115) or v.format_spec is not None:
                    return None
                got = _str_value(v.value, scope, depth + 1)
            else:
                got = _str_value(v, scope, depth + 1)
            if got is None:
                return None
            parts.append(got)
        return "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS \
            and not node.keywords:
        obj = _str_value(node.func.value, scope, depth + 1)
        args = [_str_value(a, scope, depth + 1) for a in node.args]
        if obj is None or any(a is None for a in args) or len(args) > 3:
            return None
        try:
            if node.func.attr == "format":
                fields = list(string.Formatter().parse(obj))
                if any(spec or conv for _lit, _f, spec, conv in fields):
                    return None  # a format spec could ask for any width
                return obj.format(*args)
            if node.func.attr == "replace":
                return obj.replace(*args[:2]) if len(args) == 2 else None
            return getattr(obj, node.func.attr)(*args)
        except (ValueError, IndexError, KeyError, TypeError):
            return None
    return None



__all__ = ["HIDE_ENV", "ReferenceIndex", "StaticPackage", "index_for", "module_constants", "module_path",
           "package_root", "references_hidden", "verified_origin"]
