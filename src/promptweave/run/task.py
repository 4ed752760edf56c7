"""A planned unit of work: one dataset's prompts on one model (defined in ``work/task.py``, below the forms)."""
from promptweave.work.task import ConversationRecord, LazyRecords, Task, TaskOutcome

__all__ = ["ConversationRecord", "LazyRecords", "Task", "TaskOutcome"]
