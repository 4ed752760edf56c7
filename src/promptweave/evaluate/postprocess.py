"""Answer postprocessors: turn a model's raw text (or a gold answer) into the answer that gets scored.

Each function reproduces the behaviour of the reference postprocessor of the same name (OpenCompass 0.5.4 /
AISBench), quirks included where they change scores, so configs score the same here. Patterns that embed a config
value (``options``, ``answer_pattern``, ``tag`` ...) run through :mod:`promptweave.evaluate.safe_regex` with a time
limit; the fixed ones use ``re``.
"""
from __future__ import annotations

import re
import string
from typing import Any

from promptweave.evaluate import safe_regex
from promptweave.evaluate.math_equiv import extract_boxed_answer, normalize_final_answer

# -- plain text -------------------------------------------------------------------------------------------------


def strip_postprocess(text: str) -> str:
    return str(text).strip()


def identity_postprocess(text: Any) -> Any:
    """What the reference's needlebench pre/post processors do: nothing (the evaluator does the matching)."""
    return text


def general_postprocess(text: str) -> str:
    """Text up to the first newline, full stop or comma, without punctuation, English articles or extra spaces."""
    head = re.split(r"[\n.,]", text, maxsplit=1)[0]
    head = re.sub(r"[^\w\s]", "", head)
    head = re.sub(r"\b(a|an|the)\b", "", head, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", head).strip()


def first_line_postprocess(text: str) -> str:
    return str(text).strip().split("\n", 1)[0].strip()


def first_line_lstrip_postprocess(text: str) -> str:
    """LongBench's lsht/samsum/trec/triviaqa: the first line once leading newlines are gone."""
    return text.lstrip("\n").split("\n")[0]


# -- capitals and options ---------------------------------------------------------------------------------------


def first_capital_postprocess(text: str) -> str:
    """The first upper-case character, or ''."""
    for ch in text:
        if ch.isupper():
            return ch
    return ""


def last_capital_postprocess(text: str) -> str:
    for ch in reversed(text):
        if ch.isupper():
            return ch
    return ""


def first_capital_postprocess_multi(text: str) -> str:
    m = re.search(r"([A-D]+)", text)
    return m.group(1) if m else ""


def multiple_select_postprocess(text: str) -> str:
    return "".join(sorted({t for t in text if t.isupper()}))


def _option_patterns(o: str) -> list[str]:
    """The reference's ordered pattern list for ``first_option_postprocess``; ``o`` is the option set."""
    c = f"[{o}]"
    zh = [
        rf"答案是?\s*({c})", rf"答案是?\s*：\s*({c})", rf"答案是?\s*:\s*({c})", rf"答案选项应?该?是\s*({c})",
        rf"答案选项应?该?为\s*({c})", rf"答案应该?是\s*({c})", rf"答案应该?选\s*({c})", rf"答案选项为?\s*：\s*({c})",
        rf"答案选项为?\s+\(?\*?\*?({c})\*?\*?\)?", rf"答案选项是?\s*:\s*({c})", rf"答案为\s*({c})", rf"答案选\s*({c})",
        rf"选择?\s*({c})",
        # the reference lacks a comma after this entry, so its 故选 pattern is glued to the next one; same here
        (rf"故选?\s*({c})" rf"只有选?项?\s?({c})\s?是?对"),
        rf"只有选?项?\s?({c})\s?是?错", rf"只有选?项?\s?({c})\s?不?正确", rf"只有选?项?\s?({c})\s?错误",
        rf"说法不?对选?项?的?是\s?({c})", rf"说法不?正确选?项?的?是\s?({c})", rf"说法错误选?项?的?是\s?({c})",
        rf"({c})\s?是正确的", rf"({c})\s?是正确答案", rf"选项\s?({c})\s?正确", rf"所以答\s?({c})",
        rf"所以\s?({c}[.。$]?$)", rf"所有\s?({c}[.。$]?$)", rf"[\s，：:,]({c})[。，,\.]?$",
        rf"[\s，,：:][故即]({c})[。\.]?$", rf"[\s，,：:]因此({c})[。\.]?$", rf"[是为。]\s?({c})[。\.]?$",
        rf"因此\s?({c})[。\.]?$", rf"显然\s?({c})[。\.]?$", r"答案是\s?(\S+)(?:。|$)", r"答案应该是\s?(\S+)(?:。|$)",
        r"答案为\s?(\S+)(?:。|$)",
    ]
    en = [
        rf"(?i)ANSWER\s*:\s*({c})", rf"[Tt]he answer is:?\s+\(?({c})\)?", rf"[Tt]he answer is:?\s+\(?\*?\*?({c})\*?\*?\)?",
        rf"[Tt]he answer is option:?\s+\(?({c})\)?", rf"[Tt]he correct answer is:?\s+\(?({c})\)?",
        rf"[Tt]he correct answer is option:?\s+\(?({c})\)?", rf"[Tt]he correct answer is:?.*?boxed{{({c})}}",
        rf"[Tt]he correct option is:?.*?boxed{{({c})}}", rf"[Tt]he correct answer option is:?.*?boxed{{({c})}}",
        rf"[Tt]he answer to the question is:?\s+\(?({c})\)?", rf"^选项\s?({c})", rf"^({c})\s?选?项",
        rf"(\s|^){c}[\s。，,：:\.$]", r"1.\s?(.*?)$", rf"1.\s?({c})[.。$]?$",
    ]
    return zh + en


def first_option_postprocess(text: str, options: str = "ABCD", cushion: bool = True) -> str:
    """The first option letter a pattern finds, trying explicit commitments ('答案是B', 'The answer is (B)') first.

    As in the reference, a match whose captured text holds none of the options (e.g. only a space) does not stop
    the search; with ``cushion`` any ``X:`` and then any option character is accepted last.
    """
    patterns = _option_patterns(options)
    if cushion:
        patterns += [rf"([{options}]):", rf"([{options}])"]
    text = text.strip()
    for p in patterns:
        m = safe_regex.search(p, text, safe_regex.regex.DOTALL, where="first_option_postprocess.options")
        if m:
            out = m.group(1) if m.group(1) else m.group(0)
            for opt in options:
                if opt in out:
                    return opt
    return ""


def last_option_postprocess(text: str, options: str = "ABCD") -> str:
    found = safe_regex.findall(rf"([{options}])", text, where="last_option_postprocess.options")
    return found[-1] if found else ""


# -- numbers ----------------------------------------------------------------------------------------------------


def first_number_postprocess(text: str) -> float | None:
    """The first number as a float, or None (the reference returns a float, not text)."""
    m = re.search(r"(-?\d*\.?\d+)", text)
    return float(m.group(1)) if m else None


def last_number_postprocess(text: str) -> str:
    """The last number in the text (thousands separators removed), or ''. promptweave's own helper."""
    found = re.findall(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+", str(text))
    if not found:
        return ""
    s = found[-1].replace(",", "")
    if re.fullmatch(r"-?\d*\.\d+", s):
        s = s.rstrip("0").rstrip(".")
    return s


MGSM_ANSWER_PREFIX = {"en": "Answer", "bn": "উত্তর", "de": "Antwort", "es": "Respuesta", "fr": "Réponse",
                      "ja": "答え", "ru": "Ответ", "sw": "Jibu", "te": "సమాధానం", "th": "คำตอบ", "zh": "答案"}


# -- maths ------------------------------------------------------------------------------------------------------


def math_postprocess(text: str) -> str:
    for piece in text.split("."):
        if "final answer" in piece.lower():
            return normalize_final_answer(piece)
    return normalize_final_answer(text.split(".")[0])


def math_postprocess_v2(text: str) -> str:
    """The last ``\\boxed{}`` answer, else the sentence with 'final answer'/'answer is', normalised."""
    boxed = extract_boxed_answer(text, strip_double_curly_brace=True)
    if boxed:
        return boxed
    for piece in text.split("."):
        if re.search("final answer|answer is", piece.lower()):
            return normalize_final_answer(piece)
    return normalize_final_answer(text.split(".")[0])


# -- config patterns --------------------------------------------------------------------------------------------


def match_answer_pattern(response_text: str, answer_pattern: str) -> str:
    """Group 1 of ``answer_pattern``'s first match, or ''."""
    m = safe_regex.search(answer_pattern, response_text, where="match_answer_pattern.answer_pattern")
    return m.group(1) if m else ""


def regex_postprocess(text: str, pattern: str, group: int | str = 1, flags: str = "") -> str:
    """promptweave's own: the given group of ``pattern``'s first match, or ''."""
    m = safe_regex.search(pattern, str(text), safe_regex.flags_from(flags), where="regex_postprocess.pattern")
    return (m.group(group) or "") if m else ""


def think_pred_postprocess(prediction: str, re_pattern: str) -> str:
    m = safe_regex.search(re_pattern, prediction, where="think_pred_postprocess.re_pattern")
    return m.group(1).strip() if m else prediction


def xml_tag_postprocessor(text: str, tag: str) -> str:
    """The content of the last ``<tag>...</tag>`` (``tag`` includes its angle brackets), or 'NO ANSWER FOUND'."""
    found = safe_regex.findall(rf"{tag}(.*?)</{tag[1:-1]}>", text, safe_regex.regex.DOTALL,
                               where="xml_tag_postprocessor.tag")
    return found[-1].strip() if found else "NO ANSWER FOUND"


def extract_non_reasoning_content(text: str, think_start_token: str = "<think>",
                                  think_end_token: str = "</think>") -> str:
    """The answer outside ``<think>...</think>``; with only a closing tag, what follows it."""
    if think_start_token not in text and think_end_token in text:
        return text.split(think_end_token)[-1].strip()
    pattern = rf"{think_start_token}(.*?){think_end_token}"
    compiled = safe_regex.compile_pattern(pattern, safe_regex.regex.DOTALL,
                                          where="extract_non_reasoning_content.think_start_token")
    try:
        return compiled.sub("", text, timeout=safe_regex.TIMEOUT_S).strip()
    except TimeoutError:
        return safe_regex.search(pattern, text, where="extract_non_reasoning_content")  # raises the typed error


def material_postprocessor(text: str | None) -> str:
    """SciReasoner: the content of the first ``<material>...</material>`` (any case), or ''."""
    if not text:
        return ""
    m = re.search(r"<material>(.*?)</material>", text, re.DOTALL | re.IGNORECASE)
    return m.group(1).strip() if m else ""


def general_cn_postprocess(text: str) -> str:
    """The reference segments the *original* text with jieba (its cleaning result is discarded); same here."""
    try:
        import jieba
    except ImportError:
        from promptweave.errors import EvaluationError

        raise EvaluationError("general_cn_postprocess needs the 'jieba' package", field="postprocessor.type",
                              value="general_cn_postprocess", expected="pip install 'promptweave[metrics-zh]'") from None
    return " ".join(jieba.cut(text))


# -- text metrics' normalisation (LongBench) --------------------------------------------------------------------

_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD-style: lower-case, no punctuation, no articles, single spaces."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


_ZH_PUNCT = set("！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
                "            ")  # the reference's list includes the spaces of its line continuation


def normalize_zh_answer(s: str) -> str:
    return "".join("".join(ch for ch in s.lower() if ch not in _PUNCT and ch not in _ZH_PUNCT).split())


general_cn_postprocess.requires = ("jieba",)  # type: ignore[attr-defined]  # checked at plan time
