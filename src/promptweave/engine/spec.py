"""Typed dataset and model specs, built from config dicts at the boundary."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from promptweave.errors import ConfigError, PromptweaveWarning, TemplateError
from promptweave.prompt.template import PromptTemplate
from promptweave.render.meta import MetaTemplate
from promptweave.shots import Retriever, build_retriever

Row = Mapping[str, Any]

_TEMPLATE_TYPES = {"PromptTemplate", "MultiTurnPromptTemplate", "MMPromptTemplate", "RawPromptTemplate"}


@dataclass(frozen=True)
class ReaderConfig:
    """Which columns the prompt may use and which one holds the answer."""

    input_columns: tuple[str, ...]
    output_column: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, *, file: str | None = None,
                    field_path: str = "reader_cfg") -> "ReaderConfig":
        if cfg is not None and not isinstance(cfg, Mapping):
            raise ConfigError("reader_cfg must be a dict", file=file, field=field_path, value=cfg,
                              expected="dict(input_columns=[...], output_column=...)")
        cfg = dict(cfg or {})
        cols = cfg.pop("input_columns", [])
        if isinstance(cols, str):
            cols = [cols]
        if not isinstance(cols, (list, tuple)) or not all(isinstance(c, str) for c in cols):
            raise ConfigError("input_columns must be a list of column names", file=file,
                              field=f"{field_path}.input_columns", value=cols)
        out = cfg.pop("output_column", None)
        if out is not None and not isinstance(out, str):
            raise ConfigError("output_column must be a column name", file=file, field=f"{field_path}.output_column",
                              value=out)
        return cls(tuple(cols), out, cfg)


@dataclass(frozen=True)
class InferencerConfig:
    """How prompts are used: ``gen`` (generate) or ``ppl`` (score each label), plus settings."""

    type: str = "GenInferencer"
    labels: tuple[Any, ...] | None = None
    gen_field_replace_token: str = ""
    normalizing_str: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        """How prompts are built: ``ppl`` (one per label) for the scoring forms, else ``gen``."""
        from promptweave.compat.inferencers import INFERENCERS

        form = INFERENCERS.get(self.type)
        return "ppl" if form is not None and form.mode in ("ppl", "clp", "ll", "ppl_only") else "gen"

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, *, file: str | None = None,
                    field_path: str = "infer_cfg.inferencer") -> "InferencerConfig":
        if cfg is not None and not isinstance(cfg, Mapping):
            raise ConfigError("the inferencer must be a dict with a 'type'", file=file, field=field_path, value=cfg,
                              expected="dict(type=GenInferencer, ...)")
        cfg = dict(cfg or {})
        kind = cfg.pop("type", None) or "GenInferencer"
        kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
        kind = kind.rsplit(".", 1)[-1]
        labels = cfg.pop("labels", None)
        if labels is not None and not isinstance(labels, (list, tuple)):
            raise ConfigError("labels must be a list", file=file, field=f"{field_path}.labels", value=labels)
        return cls(kind, tuple(labels) if labels is not None else None, cfg.pop("gen_field_replace_token", ""),
                   cfg.pop("normalizing_str", None), cfg)


def build_template(cfg: Any, *, file: str | None, field_path: str) -> PromptTemplate | None:
    if cfg is None:
        return None
    if isinstance(cfg, PromptTemplate):
        return cfg
    if not isinstance(cfg, Mapping):
        raise TemplateError("a template config must be a dict with 'template'", file=file, field=field_path,
                            value=cfg)
    cfg = dict(cfg)
    kind = cfg.pop("type", "PromptTemplate")
    kind_name = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    kind_name = kind_name.rsplit(".", 1)[-1]
    if kind_name not in _TEMPLATE_TYPES:
        from promptweave.compat.suites import resolve
        from promptweave.compat.templates import ROW_TEMPLATES
        from promptweave.errors import UnsupportedError

        if kind_name in ROW_TEMPLATES:  # a reference class that writes the prompt from the row (OlympiadBench)
            return resolve(ROW_TEMPLATES[kind_name]).from_config(cfg, kind_name=kind_name, file=file, field=field_path)

        # reference dataset modules define template classes whose prompt is computed by their code
        raise UnsupportedError(f"unknown template type {kind_name!r} (a template class whose prompt is written by "
                               "code is not supported)", file=file, field=field_path + ".type", value=kind_name,
                               expected=" or ".join(sorted(_TEMPLATE_TYPES | set(ROW_TEMPLATES))))
    if kind_name == "RawPromptTemplate":
        from promptweave.prompt.raw import raw_template_config

        cfg = raw_template_config(cfg, as_ice=field_path.endswith("ice_template"), file=file, field=field_path)
    if "template" not in cfg:
        raise TemplateError("missing 'template'", file=file, field=field_path + ".template")
    template = cfg.pop("template")
    tpl = _template_class(kind_name)(template, cfg.pop("ice_token", None), cfg.pop("sep_token", None),
                         field=field_path + ".template", file=file, **cfg)
    tpl.kind_name = kind_name
    return tpl


def _template_class(kind_name: str) -> type:
    if kind_name == "MultiTurnPromptTemplate":
        from promptweave.prompt.multiturn import MultiTurnPromptTemplate

        return MultiTurnPromptTemplate
    if kind_name == "MMPromptTemplate":
        from promptweave.prompt.mm_template import MMPromptTemplate

        return MMPromptTemplate
    return PromptTemplate


def _chat_turns_form(infer: Mapping[str, Any]) -> bool:
    """An inferencer of the ``chat`` form (ChatInferencer every / every_with_gt) replays the row's own chat
    and reads no template, so OpenCompass accepts an ice_template without an ice_token there (SciCode)."""
    inf = infer.get("inferencer")
    if not isinstance(inf, Mapping):
        return False
    from promptweave.compat.inferencers import inferencer_mode, inferencer_name

    try:
        return inferencer_mode(inferencer_name(inf.get("type")), inf) == "chat"
    except Exception:  # noqa: BLE001 - an unknown inferencer is reported where the plan resolves it
        return False


@dataclass
class DatasetSpec:
    """A dataset ready for prompt building: rows, templates, retriever and inferencer settings."""

    abbr: str
    reader: ReaderConfig
    prompt_template: PromptTemplate | None
    ice_template: PromptTemplate | None
    retriever: Retriever
    inferencer: InferencerConfig
    train: Sequence[Row]
    test: Sequence[Row]
    file: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    same_split: bool | None = None

    @property
    def template(self) -> PromptTemplate:
        """The template the prompt is built from (``prompt_template``, else the ``ice_template`` shorthand)."""
        t = self.prompt_template or self.ice_template
        if t is None:
            raise TemplateError("no prompt_template or ice_template", file=self.file,
                                field=f"{self.field}.infer_cfg")
        return t

    field: str = "dataset"

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], *, train: Sequence[Row], test: Sequence[Row],
                    file: str | None = None, field_path: str = "dataset", check_columns: bool = True) -> "DatasetSpec":
        infer = cfg.get("infer_cfg")
        if not isinstance(infer, Mapping):
            raise ConfigError("missing infer_cfg", file=file, field=f"{field_path}.infer_cfg",
                              expected="dict(prompt_template=..., retriever=..., inferencer=...)")
        reader = ReaderConfig.from_config(cfg.get("reader_cfg"), file=file, field_path=f"{field_path}.reader_cfg")
        pt = build_template(infer.get("prompt_template"), file=file,
                            field_path=f"{field_path}.infer_cfg.prompt_template")
        it = build_template(infer.get("ice_template"), file=file, field_path=f"{field_path}.infer_cfg.ice_template")
        if pt is None and it is None:
            raise TemplateError("infer_cfg needs a prompt_template or an ice_template", file=file,
                                field=f"{field_path}.infer_cfg")
        if pt is not None and it is not None and pt.ice_token is None:
            raise TemplateError("with an ice_template, the prompt_template must say where examples go",
                                file=file, field=f"{field_path}.infer_cfg.prompt_template.ice_token",
                                expected="ice_token='</E>' (and the token in the template)")
        if pt is None and it is not None and it.ice_token is None and not _chat_turns_form(infer):
            raise TemplateError("an ice_template used alone is also the prompt template, so it needs an ice_token",
                                file=file, field=f"{field_path}.infer_cfg.ice_template.ice_token")
        retr_cfg = infer.get("retriever")
        if retr_cfg is not None and not isinstance(retr_cfg, Mapping):
            from promptweave.errors import RetrieverError

            raise RetrieverError("the retriever must be a dict with a 'type'", file=file,
                                 field=f"{field_path}.infer_cfg.retriever", value=retr_cfg,
                                 expected="dict(type=ZeroRetriever)")
        if isinstance(retr_cfg, Mapping):
            # Searching retrievers compare the input columns only (never the answer).
            retr_cfg = {"input_columns": list(reader.input_columns), "output_column": reader.output_column,
                        **retr_cfg}
        try:
            retriever = build_retriever(retr_cfg)
        except Exception as exc:
            from promptweave.errors import PromptweaveError

            if isinstance(exc, PromptweaveError):
                raise exc.at(file=file, prefix=f"{field_path}.infer_cfg.retriever") from None
            raise
        spec = cls(
            abbr=str(cfg.get("abbr") or cfg.get("path") or "dataset"),
            reader=reader, prompt_template=pt, ice_template=it, retriever=retriever,
            inferencer=InferencerConfig.from_config(infer.get("inferencer"), file=file,
                                                    field_path=f"{field_path}.infer_cfg.inferencer"),
            train=train, test=test, file=file, field=field_path,
            extra={k: v for k, v in cfg.items() if k not in ("infer_cfg", "reader_cfg", "abbr")},
        )
        for tpl in (pt, it):  # a template written from the row fills the answer column as the reference does
            bind = getattr(tpl, "bind_output", None)
            if bind is not None:
                bind(reader.output_column, spec.inferencer.gen_field_replace_token)
        if check_columns:
            spec.check_columns()
        return spec

    def check_columns(self) -> None:
        """Placeholders no row can fill stay in the prompt as written, as the references leave them (prompts hold
        braces such as LaTeX), with a warning; a near miss of a column (``{OPTION_A}`` for ``option_A``) gets a
        :class:`PlaceholderNearMissWarning` naming the column it resembles."""
        import difflib

        columns: set[str] = set()
        for rows in (self.test, self.train):
            for row in rows[:50]:
                columns.update(row.keys())
        if not columns:
            return
        cols = sorted(columns)
        adv_key = self.inferencer.settings.get("adv_key")  # AttackInferencer fills it with each prompt
        for name, tpl in (("prompt_template", self.prompt_template), ("ice_template", self.ice_template)):
            if tpl is None:
                continue
            for ph in sorted(tpl.placeholder_names()):
                if not ph.isidentifier() or ph in columns or (ph == adv_key and self.inferencer.type == "AttackInferencer"):
                    continue
                near = [c for c in cols if c.lower() == ph.lower()] or difflib.get_close_matches(ph, cols, n=1,
                                                                                                  cutoff=0.75)
                field_path = f"{self.field}.infer_cfg.{name}.template"
                if near:
                    warn_near_miss(self.file, field_path, ph, near[0], stacklevel=3)
                    continue
                warnings.warn(
                    f"{self.file + ': ' if self.file else ''}{self.field}.infer_cfg.{name}: placeholder "
                    f"{{{ph}}} names no column of the rows (columns: {', '.join(cols)}); "
                    "it will stay in the prompt as written", PromptweaveWarning, stacklevel=3)


def warn_near_miss(file: str | None, field_path: str, placeholder: str, column: str, *, stacklevel: int = 2) -> None:
    """``{OPTION_A}`` where the rows have ``option_A``: OpenCompass fills only exact names and sends the rest as
    written (InfiniteBench's code_debug configs do), so this is a warning and the prompt keeps the placeholder."""
    from promptweave.errors import PlaceholderNearMissWarning

    warnings.warn(PlaceholderNearMissWarning(
        f"{file + ': ' if file else ''}{field_path}: placeholder {{{placeholder}}} names no column but resembles "
        f"{{{column}}}; it is sent as written, as OpenCompass sends it (write {{{column}}} to fill it from the "
        "rows)"), stacklevel=stacklevel + 1)


@dataclass
class ModelSpec:
    """A model as far as prompts are concerned: its kind (``lm`` text or ``api`` chat) and meta template.

    ``dialect="aisbench"`` reproduces AISBench's parsers where they differ on
    multimodal prompts (text models drop media; an API model without a meta
    template gets the joined text, or the parts only when there is no text).
    By default media reaches text models as ``media_placeholders`` text.
    """

    abbr: str
    kind: str
    meta: MetaTemplate | None
    config: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    dialect: str = "promptweave"
    media: Any = None  # promptweave.prompt.multimodal.MediaText, made on first use

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], *, file: str | None = None,
                    field_path: str = "model") -> "ModelSpec":
        kind = cfg.get("kind")
        if kind is None:
            from promptweave.compat.models import MODEL_TYPES, type_name

            tname = type_name(cfg.get("type", ""))
            known = MODEL_TYPES.get(tname)
            kind = known.kind if known is not None else ("api" if _looks_api(tname) else "lm")
        if kind not in ("lm", "api"):
            raise ConfigError("model kind must be 'lm' (text) or 'api' (chat)", file=file, field=f"{field_path}.kind",
                              value=kind)
        meta_cfg = cfg.get("meta_template")
        if meta_cfg is None and kind == "api" and "kind" not in cfg:
            from promptweave.compat.models import default_meta_template

            meta_cfg = default_meta_template(cfg)
        meta = MetaTemplate.from_config(meta_cfg, kind=kind, file=file, field=f"{field_path}.meta_template")
        abbr = str(cfg.get("abbr") or cfg.get("name") or cfg.get("path") or "model")
        dialect = cfg.get("dialect")
        if dialect is None:
            from promptweave.compat.models import default_dialect

            dialect = default_dialect(cfg)
        if dialect not in DIALECTS:
            raise ConfigError("unknown dialect", file=file, field=f"{field_path}.dialect", value=dialect,
                              expected=" or ".join(DIALECTS))
        spec = cls(abbr, kind, meta, cfg, file, dialect)
        if "media_placeholders" in cfg:
            from promptweave.prompt.multimodal import MediaText

            ph = cfg["media_placeholders"]
            if ph is not None and not (isinstance(ph, Mapping) and all(isinstance(v, str) for v in ph.values())):
                raise ConfigError("media_placeholders must map a modality to its text, or be None to drop media",
                                  file=file, field=f"{field_path}.media_placeholders", value=ph,
                                  expected="e.g. {'image': '<image>'}")
            spec.media = MediaText(None if ph is None else dict(ph))
        return spec

    def media_text(self) -> Any:
        """How this (text) model sees content parts."""
        if self.media is None:
            from promptweave.prompt.multimodal import MediaText

            self.media = MediaText(None) if self.dialect == "aisbench" else MediaText()
        return self.media


DIALECTS = ("promptweave", "aisbench")


_API_NAMES = ("API", "OpenAI", "Chat", "GPT", "Claude", "Gemini")


def _looks_api(type_name: str) -> bool:
    short = type_name.rsplit(".", 1)[-1]
    if short in ("HuggingFace", "HuggingFaceCausalLM", "HuggingFaceBaseModel", "VLLM", "TurboMind",
                 "TransformersModel", "VLLMCustomAPI"):
        return False
    return any(s in short for s in _API_NAMES)
