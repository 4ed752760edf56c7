"""Dataset rows: reader config, local files and Hugging Face datasets, train/test splits."""
from promptweave.data.loader import DatasetSplits, load_dataset
from promptweave.data.loaders import check as check_loader
from promptweave.data.locate import locate
from promptweave.data.reader import ReaderConfig, select_range
from promptweave.errors import DataError

__all__ = ["DataError", "DatasetSplits", "ReaderConfig", "check_loader", "load_dataset", "locate", "select_range"]
