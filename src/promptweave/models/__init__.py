"""Model backends behind one small protocol (generate, log-likelihood, chat)."""
from promptweave.models.base import ChatModel, GenerationParams, Message, TextModel
from promptweave.models.factory import build_model, generation_params

__all__ = ["ChatModel", "TextModel", "GenerationParams", "Message", "build_model", "generation_params"]
