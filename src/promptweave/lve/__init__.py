"""LVE test folders: load ``test.json`` and its prompt files, fill them per instance, run them
through a chat model and judge the replies with LVE's checkers (lambdas evaluated safely).

>>> test = load_test("path/to/lve")                       # load-time validation
>>> result = run_instance(test, {"a": 1, "b": 2}, model)  # fill, model calls, verdict
>>> result.to_instance()
"""
from promptweave.lve.checkers import BUILTIN_CHECKERS, Checker, NeedsExtraError
from promptweave.lve.loader import find_test_dirs, load_test, parse_prompt_text
from promptweave.lve.model import (
    LVECheckError,
    LVEFillError,
    LVELoadError,
    LVETest,
    Message,
    PromptSpec,
    Role,
    RunSpec,
)
from promptweave.lve.replay import ScriptedChatModel, iter_instances, replay_instance, replay_test
from promptweave.lve.runner import (
    PreparedRun,
    RunResult,
    execute,
    generation_params,
    prepare,
    response_of,
    run_instance,
    split_instance_args,
)
from promptweave.lve.safe_lambda import SafeLambda

__all__ = [
    "BUILTIN_CHECKERS", "Checker", "LVECheckError", "LVEFillError", "LVELoadError", "LVETest", "Message",
    "NeedsExtraError", "PreparedRun", "PromptSpec", "Role", "RunResult", "RunSpec", "SafeLambda",
    "ScriptedChatModel", "execute", "find_test_dirs", "generation_params", "iter_instances", "load_test",
    "parse_prompt_text", "prepare", "replay_instance", "replay_test", "response_of", "run_instance",
    "split_instance_args",
]
