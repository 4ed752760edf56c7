"""Answer equivalence for competition maths (the MATH dataset's conventions, as OpenCompass's MATHEvaluator).

Strings are normalised (LaTeX spacing, ``\\frac`` shorthand, units, ``\\boxed{}``) and compared as text; no symbolic
algebra here (``MATHVerifyEvaluator`` uses the ``math-verify`` package for that).
"""
from __future__ import annotations

import re

# (find, replace) applied in order, then the unit words removed, as the reference's normaliser does
_SUBSTITUTIONS = [("an ", ""), ("a ", ""), (".$", "$"), ("\\$", ""), (r"\ ", ""), (" ", ""), ("mbox", "text"),
                  (",\\text{and}", ","), ("\\text{and}", ","), ("\\text{m}", "\\text{}"), ("\\le", "<")]
_REMOVED = ["square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units", "\\ldots", "sue",
            "points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds", "meters", "meals",
            "edges", "students", "childrentickets", "multiples", "\\text{s}", "\\text{.}", "\\text{\ns}",
            "\\text{}^2", "\\text{}^3", "\\text{\n}", "\\text{}", r"\mathrm{th}", r"^\circ", r"^{\circ}", r"\;",
            r",\!", "{,}", '"', "\\dots", "\n", "\r", "\f"]


def last_boxed_only_string(text: str) -> str | None:
    """The last ``\\boxed{...}`` (or ``\\fbox{...}``) with balanced braces, or None."""
    idx = text.rfind("\\boxed")
    if idx < 0:
        idx = text.rfind("\\fbox")
        if idx < 0:
            return None
    depth = 0
    for i in range(idx, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[idx:i + 1]
    return None


def remove_boxed(s: str) -> str | None:
    left = "\\boxed{"
    if s.startswith(left) and s.endswith("}"):
        return s[len(left):-1]
    return None


def extract_boxed_answer(text: str, strip_double_curly_brace: bool = False) -> str | None:
    boxed = last_boxed_only_string(text)
    if boxed is None:
        return None
    answer = remove_boxed(boxed)
    if answer is None:
        return None
    if strip_double_curly_brace:
        m = re.match(r"^\{(.*)\}$", answer)
        if m:
            answer = m.group(1)
    return answer


def normalize_final_answer(final_answer: str) -> str:
    """A final answer with units, LaTeX wrappers and 'the answer is' framing removed."""
    for before, after in _SUBSTITUTIONS:
        final_answer = final_answer.replace(before, after)
    for expr in _REMOVED:
        final_answer = final_answer.replace(expr, "")
    final_answer = re.sub(r"(\\text\{)\((.*?)\)(\})", "\\2", final_answer)
    for wrapper in (r"(\\text\{)(.*?)(\})", r"(\\textbf\{)(.*?)(\})", r"(\\overline\{)(.*?)(\})"):
        final_answer = re.sub(wrapper, "\\2", final_answer)
    final_answer = re.sub(r"(\\boxed\{)(.*)(\})", "\\2", final_answer)
    for framing in (r"finalansweris(.*)", r"answer?is:?(.*)", r"oxed\{(.*?)\}", r"\$(.*?)\$"):
        found = re.findall(framing, final_answer)
        if found:
            final_answer = found[-1]
    final_answer = final_answer.strip()
    if "rac" in final_answer and "\\frac" not in final_answer:
        final_answer = final_answer.replace("rac", "\\frac")
    final_answer = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", final_answer)
    final_answer = re.sub(r"(sqrt)([^{])", "sqrt{\\2}", final_answer)
    final_answer = final_answer.replace("$", "")
    if final_answer.replace(",", "").isdigit():
        final_answer = final_answer.replace(",", "")
    return final_answer


def fix_fracs(s: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{2}`` -> ``\\frac{1}{2}``."""
    parts = s.split("\\frac")
    out = parts[0]
    for sub in parts[1:]:
        out += "\\frac"
        if sub[:1] == "{":
            out += sub
            continue
        if len(sub) < 2:
            return s
        a, b, rest = sub[0], sub[1], sub[2:]
        out += ("{" + a + "}{" + b + "}" + rest) if b != "{" else ("{" + a + "}" + b + rest)
    return out


def fix_a_slash_b(s: str) -> str:
    parts = s.split("/")
    if len(parts) != 2:
        return s
    # a non-integer side raises ValueError on purpose: is_equiv then skips the stripped comparison, as upstream
    a, b = int(parts[0]), int(parts[1])
    if s != f"{a}/{b}":
        return s
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


def remove_right_units(s: str) -> str:
    if "\\text{ " in s:
        parts = s.split("\\text{ ")
        if len(parts) != 2:
            raise ValueError("more than one unit")
        return parts[0]
    return s


def fix_sqrt(s: str) -> str:
    if "\\sqrt" not in s:
        return s
    parts = s.split("\\sqrt")
    out = parts[0]
    for sub in parts[1:]:
        if sub[0] != "{":  # an IndexError on '\\sqrt' at the end falls back to the plain comparison, as upstream
            out += "\\sqrt{" + sub[0] + "}" + sub[1:]
        else:
            out += "\\sqrt" + sub
    return out


def strip_string_v1(s: str) -> str:
    s = s.replace("\n", "").replace("\\!", "").replace("\\\\", "\\").replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "").replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "")
    s = remove_right_units(s)
    s = s.replace("\\%", "").replace("\\%", "")
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    halves = s.split("=")
    if len(halves) == 2 and len(halves[0]) <= 2:
        s = halves[1]
    s = fix_sqrt(s).replace(" ", "")
    s = fix_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return fix_a_slash_b(s)


def strip_string_v2(s: str) -> str:
    s = str(s).strip().replace("\n", "").rstrip(".").replace("\\!", "").replace("\\ ", "")
    s = s.replace("\\\\", "\\").replace("\\\\", "\\").replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    no_unit = re.sub(r"\\text{.*?}$", "", s).strip()
    if no_unit != "" and no_unit != s:
        s = no_unit
    for old, new in (("^{\\circ}", ""), ("^\\circ", ""), ("\\$", ""), ("$", ""), ("\\text", ""), ("x\\in", ""),
                     ("\\%", ""), ("\\%", ""), ("%", ""), (" .", " 0."), ("{.", "{0."), ("\\cdot", ""),
                     ("infinity", "\\infty")):
        s = s.replace(old, new)
    if "\\infty" not in s:
        s = s.replace("inf", "\\infty")
    s = s.replace("+\\inity", "\\infty").replace("and", "").replace("\\mathbf", "")
    s = re.sub(r"\\mbox{.*?}", "", s)
    if "j" in s and "i" not in s:
        s = s.replace("j", "i")
    s = re.sub(r"(\d+)\.0+([^\d])", r"\1\2", s)
    s = re.sub(r"(\d+)\.0+$", r"\1", s)
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    halves = s.split("=")
    if len(halves) == 2 and len(halves[0]) <= 2:
        s = halves[1]
    s = re.sub(r"\\sqrt(\w+)", r"\\sqrt{\1}", s).replace(" ", "")
    s = fix_fracs(s)
    return fix_a_slash_b(s)


def is_equiv(a: str | None, b: str | None, version: str = "v1") -> bool:
    """MATH equivalence: equal after stripping, or after final-answer normalisation, or as written."""
    if a is None and b is None:
        return True
    if a is None or b is None:
        return False
    strip = strip_string_v2 if version == "v2" else strip_string_v1
    try:
        sa, sb = strip(a), strip(b)
        if sa == sb or normalize_final_answer(sa) == normalize_final_answer(sb):
            return True
    except Exception:  # noqa: BLE001, S110 - any normalisation failure falls through to the next comparison
        pass
    try:
        if normalize_final_answer(a) == normalize_final_answer(b):
            return True
    except Exception:  # noqa: BLE001, S110
        pass
    return a == b
