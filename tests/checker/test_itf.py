"""ITF files: the schema (ADR-015), kcm's #meta, value encoding, round trips and corrupt files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum, IntEnum
from pathlib import Path
from typing import NamedTuple

import jsonschema
import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.itf import (
    ItfList,
    ItfMap,
    Record,
    Unserializable,
    decode_value,
    encode_value,
    itf_document,
    parse_itf,
    read_itf,
    write_itf,
)
from kcm.checker.engine.model_spec import ModelSpec

from tests.checker.toys import Climbers, EpochModel, TwoPhaseCommit

SCHEMA = json.loads((Path(__file__).parent / "itf.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def epoch_document():
    model = EpochModel()
    violation = explore(model).violations[0]
    return model, violation, itf_document(model, violation.trace, invariant=violation.name,
                                          kind=violation.kind, config={"brokers": 2},
                                          model_spec=ModelSpec.of("tests.checker.toys:epochs"))


def test_the_schema_itself_is_valid_and_strict():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    good = {"vars": ["x"], "states": [{"x": {"#bigint": "1"}}]}
    assert VALIDATOR.is_valid(good)
    for bad in [
        {"vars": ["x"], "states": [{"x": 1}]},                      # plain number
        {"vars": ["x"], "states": [{"x": {"#bigint": "1.5"}}]},     # not an integer
        {"vars": ["x"], "states": [{"x": {"#foo": []}}]},           # unknown tag
        {"vars": ["x"], "states": [{"x": {"#map": [[1]]}}]},        # not a pair
        {"vars": ["x"], "states": []},                              # no state
        {"states": [{}]},                                           # no vars
    ]:
        assert not VALIDATOR.is_valid(bad), bad


@pytest.mark.parametrize("which", ["violation", "witness", "symmetric"])
def test_written_traces_validate_against_the_itf_schema(tmp_path, which):
    if which == "violation":
        _, _, document = epoch_document()
    elif which == "witness":
        model = TwoPhaseCommit(3)
        goal = explore(model).goals["commit agreement"]
        document = itf_document(model, goal.trace, invariant=goal.name, kind="sometimes")
    else:
        model = Climbers(6)
        violation = explore(model).violations[0]
        document = itf_document(model, violation.trace, invariant=violation.name, kind=violation.kind)
    path = write_itf(tmp_path / "t.itf.json", document)
    VALIDATOR.validate(json.loads(path.read_text()))


def test_kcm_meta(tmp_path):
    model, violation, document = epoch_document()
    meta = document["#meta"]
    assert meta["format"] == "ITF" and meta["checker"] == "kcm"
    assert (meta["invariant"], meta["kind"], meta["model"]) == ("epoch_monotonic", "transition", "epochs")
    assert meta["actions"] == [None, "ControllerBump(controller=0)", "ControllerBump(controller=0)",
                               "BrokerStaleWrite(broker=1)"]
    assert meta["trace_length"] == 3 and meta["initial_index"] == 0
    assert meta["config"] == {"brokers": 2}
    assert meta["model_factory"] == "tests.checker.toys:epochs" and meta["model_args"] == {}
    assert document["vars"] == ["epoch", "leader"]
    assert [s["#meta"]["index"] for s in document["states"]] == [0, 1, 2, 3]
    assert [s["#meta"]["action"] for s in document["states"]] == meta["actions"]
    assert document["states"][3]["#meta"]["action_kind"] == "BrokerStaleWrite"
    assert document["states"][3]["#meta"]["action_fields"] == {"broker": {"#bigint": "1"}}
    assert document["states"][0] == {"#meta": {"index": 0, "action": None},
                                      "epoch": {"#bigint": "0"}, "leader": {"#unserializable": "None"}}


class Colour(Enum):
    red = "r"


class Level(IntEnum):
    low = 1


class Pair(NamedTuple):
    a: int
    b: str


@dataclass(frozen=True)
class Rec:
    n: int
    tags: frozenset


@dataclass(frozen=True)
class Msg:
    __itf_variant__ = True
    to: int


@pytest.mark.parametrize("value, expected", [
    (True, True),
    (0, {"#bigint": "0"}),
    (-(2**80), {"#bigint": str(-(2**80))}),
    ("s", "s"),
    (Colour.red, "red"),
    (Level.low, "low"),
    (None, {"#unserializable": "None"}),
    ((1, "a"), {"#tup": [{"#bigint": "1"}, "a"]}),
    ([1], [{"#bigint": "1"}]),
    (frozenset({3, 1, 2}), {"#set": [{"#bigint": "1"}, {"#bigint": "2"}, {"#bigint": "3"}]}),
    ({1: "x"}, {"#map": [[{"#bigint": "1"}, "x"]]}),
    (Pair(1, "b"), {"a": {"#bigint": "1"}, "b": "b"}),
    (Rec(2, frozenset()), {"n": {"#bigint": "2"}, "tags": {"#set": []}}),
    (Msg(4), {"tag": "Msg", "value": {"to": {"#bigint": "4"}}}),
    (1.5, {"#unserializable": "1.5"}),
])
def test_encoding_table(value, expected):
    assert encode_value(value) == expected
    assert VALIDATOR.is_valid({"vars": ["v"], "states": [{"v": encode_value(value)}]})


def test_decoding_gives_plain_hashable_values():
    expr = {"#set": [{"#tup": [{"#bigint": "1"}, {"a": [True]}]}, {"#map": [[{"#set": []}, "v"]]}]}
    value = decode_value(expr)
    assert value == frozenset({(1, Record([("a", ItfList([True]))])), ItfMap([(frozenset(), "v")])})
    assert decode_value({"#unserializable": "None"}) is None
    assert decode_value({"#unserializable": "<obj>"}) == Unserializable("<obj>")
    assert decode_value(7) == 7  # plain integers: ITF before 2023-09-14


def test_round_trip(tmp_path):
    model = TwoPhaseCommit(3)
    goal = explore(model).goals["commit agreement"]
    document = itf_document(model, goal.trace, invariant=goal.name, kind="sometimes")
    path = write_itf(tmp_path / "t.itf.json", document)
    trace = read_itf(path)
    # Decoded values equal the decoded encodings of the model's fields, state by state ...
    for (_, state), decoded in zip(goal.trace, trace.states, strict=True):
        assert decoded == {k: decode_value(encode_value(v)) for k, v in model.fields(state).items()}
    # ... and encoding the decoded values gives back the file's values exactly.
    for raw, decoded in zip(document["states"], trace.states, strict=True):
        assert {k: encode_value(v) for k, v in decoded.items()} == {k: v for k, v in raw.items() if k != "#meta"}
    assert trace.actions == tuple(document["#meta"]["actions"])
    assert trace.invariant == "commit agreement" and trace.kind == "sometimes"
    assert trace.vars == ("rmState", "tmState", "tmPrepared", "msgs")
    assert trace.states[-1]["rmState"] == ("committed",) * 3


def test_labels_fall_back_to_the_top_level_meta():
    doc = {"#meta": {"actions": [None, "Go"]}, "vars": ["x"],
           "states": [{"x": {"#bigint": "0"}}, {"x": {"#bigint": "1"}}]}
    assert parse_itf(doc).actions == (None, "Go")


def _write(tmp_path, text):
    path = tmp_path / "bad.itf.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ("[]", "not an ITF trace (the top level is not a JSON object)"),
    ('{"states": []}', "not an ITF trace ('vars' is missing)"),
    ('{"vars": ["x"], "states": []}', "'states' must be a non-empty array"),
    ('{"vars": [1], "states": [{}]}', "'vars' must be an array of strings"),
    ('{"vars": ["x"], "states": [{}]}', "state 0: variable 'x' is missing"),
    ('{"vars": ["x"], "states": [{"x": true, "y": 1}]}', "state 0: 'y' is not in 'vars'"),
    ('{"vars": ["x"], "states": [{"x": {"#bigint": "12a"}}]}', "state 0, x: bad #bigint '12a'"),
    ('{"vars": ["x"], "states": [{"x": {"#tup": [1.5]}}]}', "state 0, x[0]: the number 1.5 is not an ITF value"),
    ('{"vars": ["x"], "states": [{"x": {"#what": 1}}]}', "state 0, x: unknown ITF form with keys ['#what']"),
    ('{"vars": ["x"], "states": [{"x": {"#map": [[1, 2, 3]]}}]}',
     "state 0, x: #map entry 0 is not a [key, value] pair"),
    ('{"vars": ["x"], "states": [{"x": null}]}', "state 0, x: NoneType is not an ITF value"),
    ('{"vars": ["x"], "states": [5]}', "state 0 is not an object"),
    ('{"#meta": [], "vars": [], "states": [{}]}', "'#meta' must be an object"),
    ('{"vars": [], "states": [{}], "loop": "0"}', "'loop' must be an integer"),
])
def test_corrupt_files_raise_one_line_usage_errors(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(UsageError) as info:
        read_itf(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_itf(tmp_path / "nope.itf.json")
    with pytest.raises(UsageError, match="is a directory"):
        read_itf(tmp_path)
    (tmp_path / "latin1.itf.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(UsageError, match="cannot read"):
        read_itf(tmp_path / "latin1.itf.json")


def test_document_refuses_inconsistent_states():
    class Shifty(EpochModel):
        def fields(self, s):
            return {"epoch": s.epoch} if s.epoch == 0 else {"epoch": s.epoch, "leader": s.leader}

    violation = explore(EpochModel()).violations[0]
    with pytest.raises(ValueError, match="state 1 sets"):
        itf_document(Shifty(), violation.trace)
