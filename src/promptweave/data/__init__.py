"""Dataset rows: reader config, local files and Hugging Face datasets, train/test splits."""
from promptweave.data.loader import DatasetSplits, load_dataset
from promptweave.data.reader import ReaderConfig, select_range
from promptweave.errors import DataError

__all__ = ["DataError", "DatasetSplits", "ReaderConfig", "load_dataset", "select_range"]
