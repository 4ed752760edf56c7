"""LawBench (Chinese legal tasks): the scoring rule of each of its 20 tasks, keyed by task index ('1-1' ... '3-8').

Every task returns fractions and the evaluator reports them ×100 under the reference's names (``score``, and
``abstention_rate`` where the task counts replies naming no option; the information-extraction task spells it
``anstention_rate``, kept so results files match). Rules, in short:

- option tasks (1-2, 2-4, 2-8, 3-6, and 2-2 over 16 dispute types): right when the gold option is the only
  option the reply mentions; golds carry a fixed prefix (``正确答案：B`` ...);
- set tasks (2-3, 2-9, 3-3, 3-1): F1 between the options (or law article numbers) the reply mentions and the gold's;
- reading comprehension (2-5), trigger words (2-10), entities (2-6): CAIL's character-level F1 (lower-cased, only
  letters and digits kept);
- free text (1-1, 2-7, 3-2, 3-8): ROUGE-L F of jieba-segmented text (``rouge-chinese``; an empty reply reads as
  ``无内容``);
- prison terms (3-4, 3-5): 1 − mean |log(gold+1) − log(pred+1)| / log 216 over months (death / life sentences
  skipped; no term found costs log 216); amounts (3-7): the gold amount among the reply's numbers.

Chinese numerals are read with ``cn2an``. Grammar correction (2-1) is scored by ChERRANT with its own data files;
that one is served by the installed reference only (see :class:`LawBenchEvaluator`).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths
from promptweave.evaluate.extras import note_missing

# -- vocabularies (the tasks' fixed label sets) ------------------------------------------------------------------

DISPUTE_FOCUS = ("诉讼主体", "租金情况", "利息", "本金争议", "责任认定", "责任划分", "损失认定及处理", "原审判决是否适当",
                 "合同效力", "财产分割", "责任承担", "鉴定结论采信问题", "诉讼时效", "违约", "合同解除", "肇事逃逸")
MARITAL_LABELS = ("婚后有子女", "限制行为能力子女抚养", "有夫妻共同财产", "支付抚养费", "不动产分割", "婚后分局",
                  "二次起诉离婚", "按月给付抚养费", "准予离婚", "有夫妻共同债务", "婚前个人财产", "法定离婚",
                  "不履行家庭义务", "存在非婚生子", "适当帮助", "不履行离婚协议", "损害赔偿", "感情不和分居满二年",
                  "子女随非抚养权人生活", "婚后个人财产")
TOPICS = ("婚姻家庭", "劳动纠纷", "交通事故", "债权债务", "刑事辩护", "合同纠纷", "房产纠纷", "侵权", "公司法", "医疗纠纷",
          "拆迁安置", "行政诉讼", "建设工程", "知识产权", "综合咨询", "人身损害", "涉外法律", "海事海商", "消费权益", "抵押担保")
EVENTS = ("支付/给付", "欺骗", "搜查/扣押", "要求/请求", "卖出", "买入", "获利", "拘捕", "鉴定", "同意/接受", "供述", "联络",
          "帮助/救助", "租用/借用", "受伤", "伪造", "卖淫", "伤害人身", "赔偿", "归还/偿还")
ENTITY_TYPES = ("犯罪嫌疑人", "受害人", "被盗货币", "物品价值", "盗窃获利", "被盗物品", "作案工具", "时间", "地点", "组织机构")
CHARGES = tuple("".join("""
侮辱|违法发放贷款|失火|票据诈骗|帮助犯罪分子逃避处罚|重大责任事故|对非国家工作人员行贿|
非法制造、销售非法制造的注册商标标识|非法制造、买卖、运输、邮寄、储存枪支、弹药、爆炸物|
非法获取公民个人信息|扰乱无线电通讯管理秩序|非法持有、私藏枪支、弹药|拒不执行判决、裁定|
虚开发票|巨额财产来源不明|组织、领导、参加黑社会性质组织|非法获取国家秘密|
以危险方法危害公共安全|非法持有毒品|聚众扰乱公共场所秩序、交通秩序|包庇毒品犯罪分子|滥伐林木|
伪造公司、企业、事业单位、人民团体印章|非法占用农用地|走私废物|串通投标|
非法采伐、毁坏国家重点保护植物|冒充军人招摇撞骗|玩忽职守|重婚|招收公务员、学生徇私舞弊|
组织、领导传销活动|非法猎捕、杀害珍贵、濒危野生动物|侵犯著作权|非法种植毒品原植物|
伪造、变造、买卖武装部队公文、证件、印章|倒卖文物|伪造、变造居民身份证|滥用职权|诽谤|猥亵儿童|
非法转让、倒卖土地使用权|挪用公款|污染环境|出售、购买、运输假币|敲诈勒索|高利转贷|故意伤害|
持有、使用假币|单位受贿|强奸|引诱、容留、介绍卖淫|虐待|生产、销售伪劣农药、兽药、化肥、种子|
妨害公务|容留他人吸毒|拐骗儿童|强制猥亵、侮辱妇女|非法处置查封、扣押、冻结的财产|
骗取贷款、票据承兑、金融票证|强迫他人吸毒|非法拘禁|
非法携带枪支、弹药、管制刀具、危险物品危及公共安全|绑架|聚众斗殴|破坏计算机信息系统|
制造、贩卖、传播淫秽物品|虐待被监管人|贷款诈骗|赌博|徇私舞弊不征、少征税款|
盗窃、抢夺枪支、弹药、爆炸物、危险物质|故意杀人|介绍贿赂|
提供侵入、非法控制计算机信息系统程序、工具|编造、故意传播虚假恐怖信息|妨害作证|强迫卖淫|
走私、贩卖、运输、制造毒品|伪证|拐卖妇女、儿童|过失损坏武器装备、军事设施、军事通信|
破坏广播电视设施、公用电信设施|洗钱|职务侵占|倒卖车票、船票|抢劫|侵占|
掩饰、隐瞒犯罪所得、犯罪所得收益|徇私舞弊不移交刑事案件|引诱、教唆、欺骗他人吸毒|遗弃|
生产、销售伪劣产品|放火|非法采矿|对单位行贿|盗窃、抢夺枪支、弹药、爆炸物|破坏易燃易爆设备|
妨害信用卡管理|制作、复制、出版、贩卖、传播淫秽物品牟利|金融凭证诈骗|私分国有资产|
走私国家禁止进出口的货物、物品|假冒注册商标|危险物品肇事|走私普通货物、物品|经济犯|
虚报注册资本|盗掘古文化遗址、古墓葬|传播淫秽物品|窝藏、包庇|拒不支付劳动报酬|行贿|开设赌场|
传授犯罪方法|协助组织卖淫|保险诈骗|破坏生产经营|破坏交通设施|打击报复证人|非法侵入住宅|
非国家工作人员受贿|过失致人重伤|伪造、变造金融票证|窝藏、转移、隐瞒毒品、毒赃|
帮助毁灭、伪造证据|走私珍贵动物、珍贵动物制品|生产、销售假药|逃税|挪用特定款物|
聚众扰乱社会秩序|组织、强迫、引诱、容留、介绍卖淫|合同诈骗|非法生产、销售间谍专用器材|
破坏交通工具|传播性病|强迫交易|隐匿、故意销毁会计凭证、会计帐簿、财务会计报告|非法组织卖血|
强迫劳动|破坏电力设备|销售假冒注册商标的商品|收买被拐卖的妇女、儿童|诬告陷害|脱逃|非法经营|
徇私枉法|信用卡诈骗|生产、销售不符合安全标准的食品|非法行医|伪造货币|动植物检疫徇私舞弊|
单位行贿|破坏监管秩序|盗窃|盗伐林木|重大劳动安全事故|非法吸收公众存款|
非法制造、出售非法制造的发票|非法狩猎|组织卖淫|非法买卖、运输、携带、持有毒品原植物种子、幼苗|
挪用资金|诈骗|伪造、变造、买卖国家机关公文、证件、印章|持有伪造的发票|贪污|
非法生产、买卖警用装备|投放危险物质|伪造、倒卖伪造的有价票证|集资诈骗|抢夺|
生产、销售有毒、有害食品|非法捕捞水产品|过失致人死亡|非法买卖制毒物品|
虚开增值税专用发票、用于骗取出口退税、抵扣税款发票|寻衅滋事|危险驾驶|故意毁坏财物|招摇撞骗|
盗窃、侮辱尸体|走私武器、弹药|非法收购、运输、加工、出售国家重点保护植物、国家重点保护植物制品|
非法出售发票|劫持船只、汽车|受贿|聚众哄抢|交通肇事
""".split()).split("|"))

_ROUGE = (("jieba", "lawbench"), ("rouge_chinese", "lawbench"))
_CN2AN = (("cn2an", "lawbench"),)

Row = tuple[str, str, Any]  # (prediction, gold, prompt)


def _bad_gold(task: str, gold: Any, expected: str) -> EvaluationError:
    return EvaluationError(f"LawBench {task}: unexpected gold answer", field="evaluator", value=gold,
                           expected=expected)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


# -- shared rules ------------------------------------------------------------------------------------------------


def only_option(reply: str, options: Sequence[str], answer: str) -> tuple[int, int]:
    """(right, abstained): right when ``answer`` is the one option mentioned; abstained when none is. A gold
    outside the options is never right (the reference fails on it as soon as the reply names an option)."""
    named = {o for o in options if o in reply}
    return int(named == {answer}), int(not named)


def set_f1(pred: set, gold: set) -> float:
    both = len(pred & gold)
    p = both / len(pred) if pred else 0
    r = both / len(gold) if gold else 0
    return 2 * p * r / (p + r) if p + r else 0


def _chars(s: str) -> list[str]:
    return [ch for ch in s.lower() if ch.isdigit() or ch.isalpha()] if s else []


def char_f1(gold: str, pred: str) -> float:
    """CAIL reading-comprehension F1 over characters (letters and digits, lower-cased)."""
    g, p = _chars(gold), _chars(pred)
    if not g or not p:
        return float(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if not same:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def rouge_l(hyps: Sequence[str], refs: Sequence[str]) -> list[float]:
    import jieba
    from rouge_chinese import Rouge

    cut_h = [" ".join(jieba.cut(h)) for h in hyps]
    cut_h = [h if h.strip() else "无内容" for h in cut_h]
    cut_r = [" ".join(jieba.cut(r)) for r in refs]
    try:
        return [s["rouge-l"]["f"] for s in Rouge().get_scores(cut_h, cut_r)] if cut_h else []
    except ValueError as exc:  # rouge-chinese refuses an empty reference
        raise EvaluationError(f"LawBench ROUGE-L failed ({exc})", field="evaluator") from None


def cn_to_digits(text: str) -> str:
    """Chinese numerals in ``text`` written as digits (``cn2an``); text it cannot read is kept as it is."""
    import cn2an

    try:
        return cn2an.transform(text, "cn2an")
    except Exception:  # noqa: BLE001 - a reply cn2an cannot parse is scored as written
        return text


# -- the tasks ---------------------------------------------------------------------------------------------------


def _options(prefix: str, pos: int, options: Sequence[str], task: str) -> Callable[[list[Row]], dict]:
    def score(rows: list[Row]) -> dict:
        right, abstained = [], 0
        for pred, gold, _ in rows:
            if not gold.startswith(prefix) or len(gold) <= pos or gold[pos] not in options:
                raise _bad_gold(task, gold, f"'{prefix}' and an option letter")
            ok, ab = only_option(pred, options, gold[pos])
            right.append(ok)
            abstained += ab
        return {"score": _mean(right), "abstention_rate": abstained / len(rows) if rows else 0.0}

    return score


def _rouge_task(strip: str = "") -> Callable[[list[Row]], dict]:
    def score(rows: list[Row]) -> dict:
        return {"score": _mean(rouge_l([p for p, _, _ in rows], [g.replace(strip, "") if strip else g
                                                                 for _, g, _ in rows]))}

    return score


def dispute_focus(rows: list[Row]) -> dict:
    right, abstained = [], 0
    for pred, gold, _ in rows:
        label = gold[7:-1]
        if label == "赔偿":  # a label outside the option list; the reference leaves these rows out of the score
            continue
        if not gold.startswith("争议焦点类别：") or label not in DISPUTE_FOCUS:
            raise _bad_gold("2-2", gold, "'争议焦点类别：<label>。'")
        ok, ab = only_option(pred, DISPUTE_FOCUS, label)
        right.append(ok)
        abstained += ab
    return {"score": _mean(right), "abstention_rate": abstained / len(rows) if rows else 0.0}


def _label_set_f1(rows: list[Row], labels: Sequence[str], golds: Callable[[str], set]) -> dict:
    f1s, abstained = [], 0
    for pred, gold, _ in rows:
        named = {o for o in labels if o in pred}
        abstained += not named
        f1s.append(set_f1(named, golds(gold)))
    return {"score": _mean(f1s), "abstention_rate": abstained / len(rows) if rows else 0.0}


def marital(rows: list[Row]) -> dict:
    def golds(gold: str) -> set:
        if not (gold.startswith("类别:") and gold.endswith("。")):
            raise _bad_gold("2-3", gold, "'类别:<label>、<label>。'")
        found = gold[3:-1].split("、")
        if any(g not in MARITAL_LABELS for g in found):
            raise _bad_gold("2-3", gold, "labels of the task")
        return set(found)

    return _label_set_f1(rows, MARITAL_LABELS, golds)


def events(rows: list[Row]) -> dict:
    return _label_set_f1(rows, EVENTS, lambda g: set(g.split(";")))


def charges(rows: list[Row]) -> dict:
    def golds(gold: str) -> set:
        if not gold.startswith("罪名:"):
            raise _bad_gold("3-3", gold, "'罪名:<charge>;<charge>'")
        return set(gold.replace("罪名:", "").split(";"))

    return _label_set_f1(rows, CHARGES, golds)


def topics(rows: list[Row]) -> dict:
    right, abstained = [], 0
    for pred, gold, _ in rows:
        ok, ab = only_option(pred, TOPICS, gold)
        right.append(ok)
        abstained += ab
    return {"score": _mean(right), "abstention_rate": abstained / len(rows) if rows else 0.0}


def reading(rows: list[Row]) -> dict:
    return {"score": _mean([char_f1(g.replace("回答:", ""), p) for p, g, _ in rows])}


def trigger_words(rows: list[Row]) -> dict:
    total = 0.0
    for pred, gold, _ in rows:
        golds, preds = gold.split(";"), pred.split(";")
        hit = sum(char_f1(g, p) for g, p in zip(golds, preds))  # paired by position, as the reference
        prec, rec = hit / len(preds), hit / len(golds)
        total += 2 * prec * rec / (prec + rec + 1e-10)
    return {"score": total / len(rows) if rows else 0.0}


def _entities_in_reply(reply: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for etype in ENTITY_TYPES:
        for m in re.finditer(re.escape(etype), reply):
            end = m.end()
            if end >= len(reply) - 2 or reply[end] not in ":：":
                continue
            value = re.split("\n| ", reply[end + 1:].strip())[0].strip()
            if value not in ("无", "未提及"):
                out[etype] = value
    return out


def _entities_in_gold(gold: str) -> dict[str, str]:
    if not gold.strip():
        return {}
    out = {}
    for seg in gold.split(";"):
        parts = seg.split(":")
        if len(parts) < 2:
            raise _bad_gold("2-6", gold, "'<type>:<value>;<type>:<value>'")
        out[parts[0]] = parts[1]
    return out


def entities(rows: list[Row]) -> dict:
    total, abstained = 0.0, 0
    for pred, gold, _ in rows:
        found, want = _entities_in_reply(pred), _entities_in_gold(gold)
        if not want:
            total += 1 if not found else 0
            continue
        abstained += not found
        hit = sum(char_f1(want[t], v) for t, v in found.items() if t in want)
        prec = hit / len(found) if found else 0
        rec = hit / len(want)
        total += 2 * prec * rec / (prec + rec + 1e-10)
    n = len(rows)
    return {"score": total / n if n else 0.0, "anstention_rate": abstained / n if n else 0.0}


def articles(rows: list[Row]) -> dict:
    f1s, abstained = [], 0
    for pred, gold, _ in rows:
        if not (gold.startswith("法条:刑法第") and gold.endswith("条")):
            raise _bad_gold("3-1", gold, "'法条:刑法第<n>、<n>条'")
        nums = gold.replace("法条:刑法第", "").replace("条", "").split("、")
        if not all(n.isdigit() and int(n) <= 490 for n in nums):  # the Criminal Law has 490 articles
            raise _bad_gold("3-1", gold, "article numbers up to 490")
        named = set()
        for chunk in pred.split("、"):
            chunk = chunk.replace("万元", "元")
            chunk = re.sub(r"第(.*?)款", "", chunk)
            chunk = re.sub(r"第(.*?)条", lambda m: m.group(1), chunk)
            digits = re.findall(r"\d+", cn_to_digits(chunk))
            if digits:
                named.add(int(digits[0]))
        abstained += not named
        f1s.append(set_f1(named, {int(n) for n in nums}))
    return {"score": _mean(f1s), "abstention_rate": abstained / len(rows) if rows else 0.0}


_LOG216 = math.log(216)


def prison_term(rows: list[Row]) -> dict:
    distances, abstained = [], 0
    for pred, gold, _ in rows:
        if "死刑" in gold or "无期" in gold:
            continue
        if not (gold.startswith("刑期:") and gold.endswith("个月")):
            raise _bad_gold("3-4", gold, "'刑期:<n>个月'")
        try:
            months = int(gold.replace("刑期:", "").replace("个月", ""))
        except ValueError:
            raise _bad_gold("3-4", gold, "'刑期:<n>个月'") from None
        text = cn_to_digits(pred)
        found = [int(x[:-2]) for x in re.findall(r"\d+个月", text)] + [int(x[:-1]) for x in re.findall(r"\d+月", text)]
        years = [int(x[:-1]) for x in re.findall(r"\d+年", text)]
        guess = found[0] if found else years[0] * 12 if years else None
        if guess is None:
            abstained += 1
            distances.append(_LOG216)
        else:
            distances.append(abs(math.log(months + 1) - math.log(guess + 1)))
    # as the reference: 0 when every scored row abstained (or none was scored)
    score = 0.0 if abstained == len(distances) else (_LOG216 - _mean(distances)) / _LOG216
    return {"score": score, "abstention_rate": abstained / len(rows) if rows else 0.0}


def damages(rows: list[Row]) -> dict:
    right, abstained = [], 0
    for pred, gold, _ in rows:
        head = "上文涉及到的犯罪金额:"
        amount = gold.replace(head, "").replace("元。", "")
        if not (gold.startswith(head) and gold.endswith("元。")) or "千元" in gold or "万" in gold:
            raise _bad_gold("3-7", gold, f"'{head}<amount>元。'")
        try:
            value = float(amount)
        except ValueError:
            raise _bad_gold("3-7", gold, f"'{head}<amount>元。'") from None
        numbers = [float(x) for x in re.findall(r"\d+\.?\d*", pred)]
        abstained += not numbers
        right.append(int(value in numbers))
    return {"score": _mean(right), "abstention_rate": abstained / len(rows) if rows else 0.0}


# index -> (rule, optional packages); '2-1' is ChERRANT's and not here
TASKS: dict[str, tuple[Callable[[list[Row]], dict], tuple]] = {
    "1-1": (_rouge_task("答案:"), _ROUGE),
    "1-2": (_options("正确答案：", 5, "ABCD", "1-2"), ()),
    "2-2": (dispute_focus, ()),
    "2-3": (marital, ()),
    "2-4": (topics, ()),
    "2-5": (reading, ()),
    "2-6": (entities, ()),
    "2-7": (_rouge_task(), _ROUGE),
    "2-8": (_options("[正确答案]", 6, "ABCDE", "2-8"), ()),
    "2-9": (events, ()),
    "2-10": (trigger_words, ()),
    "3-1": (articles, _CN2AN),
    "3-2": (_rouge_task(), _ROUGE),
    "3-3": (charges, ()),
    "3-4": (prison_term, _CN2AN),
    "3-5": (prison_term, _CN2AN),
    "3-6": (_options("正确答案:", 5, "ABCD", "3-6"), ()),
    "3-7": (damages, ()),
    "3-8": (_rouge_task(), _ROUGE),
}
INDICES = ("1-1", "1-2", "2-1", *list(TASKS)[2:])


class LawBenchEvaluator(Evaluator):
    """One LawBench task (``index``); metrics ×100. Task 2-1 (grammar correction) delegates to the installed
    reference's evaluator; without one, ``lint`` notes it and ``run`` refuses it before any model call."""

    name = "LawBenchEvaluator"

    def __init__(self, index: str, **kw: Any) -> None:
        super().__init__(**kw)
        if index != "2-1" and index not in TASKS:
            raise EvaluationError("unknown LawBench task", field="evaluator.index", value=index,
                                  expected=", ".join(INDICES))
        self.index = index
        self.inner: Any = None
        if index == "2-1":
            from promptweave.compat.bridge import is_static, reference_class

            found = reference_class("evaluator", "LawBenchEvaluator_2_1")
            if found is not None and not is_static(found[1]):  # read-only install = unavailable
                from promptweave.evaluate.bridged import BridgedEvaluator

                self.inner = BridgedEvaluator(found[0], found[1], {}, "eval_cfg.evaluator")
        else:
            self.requires = TASKS[index][1]
        note_missing(self)

    def unavailable(self) -> tuple[str, str] | None:
        if self.index == "2-1" and self.inner is None:
            return (f"{self.name} (task 2-1, grammar correction) is scored by ChERRANT, which promptweave does not "
                    "implement", "opencompass installed with its dependencies (pip install opencompass ltp pypinyin)")
        if self.index == "2-1":
            from promptweave.extras import installed

            # the reference's ChERRANT runs a script that imports these (its optional dependencies, not its
            # requirements): without them it fails after every request was sent
            gaps = [m for m in ("ltp", "pypinyin") if not installed(m)]
            if gaps:
                return (f"{self.name} (task 2-1, grammar correction) is scored by the reference's ChERRANT, which "
                        f"needs the {', '.join(repr(m) for m in gaps)} package{'s' if len(gaps) > 1 else ''}",
                        "pip install " + " ".join(gaps))
        return None

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        if self.inner is not None:
            return self.inner.score(predictions, references, ctx)
        if self.index not in TASKS:
            what, fix = self.unavailable() or ("", "")
            raise EvaluationError(what, field="evaluator.type", expected=fix)
        prompts = list(ctx.prompts) if ctx is not None and ctx.prompts is not None else [None] * len(predictions)
        rows = [("" if p is None else str(p), str(g), q) for p, g, q in zip(predictions, references, prompts)]
        raw = TASKS[self.index][0](rows)
        return Scores({k: v * 100 for k, v in raw.items()}, [None] * len(rows))


def _for_index(index: str) -> type:
    """The reference registers ``LawBenchEvaluator_<index with '_'>`` for each task; each fixes ``index``."""

    class Fixed(LawBenchEvaluator):
        name = "LawBenchEvaluator_" + index.replace("-", "_")

        def __init__(self, **kw: Any) -> None:
            super().__init__(index=index, **kw)

    Fixed.__name__ = Fixed.__qualname__ = Fixed.name
    return Fixed


BY_INDEX: dict[str, type] = {"LawBenchEvaluator_" + i.replace("-", "_"): _for_index(i) for i in INDICES}

# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = dict(BY_INDEX)
