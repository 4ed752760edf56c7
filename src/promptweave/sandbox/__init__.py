"""One restricted interpreter for everything safe mode evaluates: ``.py`` configs and checker lambdas.

One set of rules (:mod:`~promptweave.sandbox.interp`), one set of budgets
(:mod:`~promptweave.sandbox.budget`), one way to format strings
(:mod:`~promptweave.sandbox.formatting`), one allow-list of reachable functions
(:mod:`~promptweave.sandbox.modules`), one rule for where imports may lead
(:mod:`~promptweave.sandbox.imports`).
"""
from promptweave.errors import BudgetError, SandboxError
from promptweave.sandbox.budget import DEFAULT_BUDGET, Budget, Meter
from promptweave.sandbox.interp import (
           BoundMethod,
           Function,
           Host,
           Interpreter,
           OpenFile,
)
from promptweave.sandbox.modules import Environ, Namespace
from promptweave.sandbox.refs import ClassRef, ModuleRef

__all__ = ["DEFAULT_BUDGET", "BoundMethod", "Budget", "BudgetError", "ClassRef", "Environ", "Function", "Host",
           "Interpreter", "Meter", "ModuleRef", "Namespace", "OpenFile", "SandboxError"]
