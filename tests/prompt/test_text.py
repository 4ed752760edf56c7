from promptweave.prompt.text import ICE, CompiledText, Slot


def test_placeholders_fill_from_row_and_unknown_stay():
    t = CompiledText.parse("Q: {question} ({unknown}) {}")
    assert t.fill({"question": "why?"}) == "Q: why? ({unknown}) {}"


def test_values_are_never_rescanned():
    t = CompiledText.parse("{a}|{b}")
    row = {"a": "{b}", "b": "{a} {0.__class__} </E>"}
    assert t.fill(row) == "{b}|{a} {0.__class__} </E>"


def test_double_braces_are_not_unescaped():
    # the references do not unescape {{x}}: the inner {x} is filled
    assert CompiledText.parse("{{x}}").fill({"x": "1"}) == "{1}"


def test_non_string_values_use_str():
    t = CompiledText.parse("{n} {l} {f} {z}")
    assert t.fill({"n": 3, "l": ["a", 1], "f": 0.5, "z": None}) == "3 ['a', 1] 0.5 None"


def test_ice_token_becomes_a_slot_and_strip_order():
    t = CompiledText.parse("</E>Q:<SEP> {q}", ice_token="</E>", strip_after_ice=("<SEP>",))
    assert t.segments[0] is ICE and Slot("q") in t.segments
    assert t.fill({"q": "x"}, ice="EX\n") == "EX\nQ: x"


def test_split_on_ice_keeps_pieces():
    t = CompiledText.parse("a{x}</E>b", ice_token="</E>")
    pieces = t.split_on_ice()
    assert [p.source for p in pieces] == ["a{x}", "b"]


def test_the_ice_slot_survives_pickling_and_copying():
    # segments are tested with ``is ICE``: a copy that is another object would drop the examples from prompts
    import copy
    import pickle

    t = CompiledText.parse("</E>Q: {q}", ice_token="</E>")
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert back.segments[0] is ICE and back.has_ice
        assert back.fill({"q": "x"}, ice="EX ") == "EX Q: x"
