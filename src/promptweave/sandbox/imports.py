"""Where a config's imports may lead: its own root, and the reference packages' config trees.

Paths are resolved (symlinks first) before they are checked, so neither ``..`` nor a symlink takes
an import outside its root. Reference packages are looked up in the interpreter's install
directories only, never in the working directory, so an ``opencompass/`` folder next to the user
cannot stand in for the installed package.
"""
from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

from promptweave.errors import SandboxError

# read_base() imports of these dotted prefixes name config files inside installed packages. The
# config trees come first (they are the root of relative imports inside them); the whole packages
# follow, for the few configs that read_base() a data module (ais_bench.datasets.synthetic...).
REFERENCE_TREES = ("opencompass.configs", "ais_bench.benchmark.configs", "opencompass", "ais_bench")


def install_dirs() -> list[Path]:
    """The interpreter's package directories (site-packages and friends), never '' or the cwd."""
    found: list[Path] = []
    candidates = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
    try:
        candidates += list(site.getsitepackages()) + [site.getusersitepackages()]
    except AttributeError:  # virtualenvs with an old site module
        pass
    candidates += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    for c in candidates:
        if not c:
            continue
        p = Path(c).resolve()
        if p.is_dir() and p not in found:
            found.append(p)
    return found


def reference_roots() -> dict[str, Path]:
    """``{'opencompass.configs': <site>/opencompass/configs, ...}`` for the installed reference packages."""
    roots: dict[str, Path] = {}
    for prefix in REFERENCE_TREES:
        rel = Path(*prefix.split("."))
        for d in install_dirs():
            if (d / rel).is_dir():
                roots[prefix] = (d / rel).resolve()
                break
    return roots


def within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def module_file(base: Path, parts: list[str]) -> Path | None:
    target = base.joinpath(*parts) if parts else base
    for cand in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
        if cand is not None and cand.is_file():
            return cand
    return None


def checked(path: Path, root: Path, where: str, what: str) -> Path:
    """``path`` with symlinks resolved, or a SandboxError if that leaves ``root``."""
    real = path.resolve()
    if not within(real, root):
        kind = "a symlink that leads" if path.is_symlink() or real != path.absolute() else "a path"
        raise SandboxError(f"{what} is {kind} outside the config's root {root} (to {real}); safe mode reads "
                           "only files under the config's own folder and the installed reference config trees "
                           "(--trust-config runs the import as Python)", file=where)
    return real
