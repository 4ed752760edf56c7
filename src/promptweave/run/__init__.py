"""Runs: plan dataset × model tasks, execute them through the response cache, write predictions and results."""
from promptweave.run.execute import CACHE_FILE, execute_task, predictions_path, results_path, run_tasks, summary_table
from promptweave.work.task import Task, TaskOutcome

__all__ = ["Task", "TaskOutcome", "execute_task", "run_tasks", "summary_table", "predictions_path", "results_path",
           "CACHE_FILE"]
