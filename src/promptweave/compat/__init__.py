"""The references' vocabulary as plain registries, one module per family.

Each module maps the names OpenCompass / AISBench configs use (``MMLUDataset``, ``AccEvaluator``,
``first_option_postprocess``, ``opencompass/mmlu``, ``HuggingFacewithChatTemplate`` ...) to promptweave's own
classes. A name in no registry is a typed error, or, when the reference package is installed, its own registered
class looked up by registry name only (``compat.bridge``). Keep this file free of imports: families load lazily.
"""
