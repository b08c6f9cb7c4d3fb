"""A "superset" Substrait schema: the bundled 0.108 protos plus the deprecated fields 0.108 removed.

Plans written against older specs (0.81 and before) still use fields 0.108 dropped (extension URIs,
FetchRel.count, VirtualTable.values, function ``args`` ...). Parsed against the 0.108 classes they would be
unknown fields, and a strict loader must refuse those. So the loader parses against this schema instead, in
its own DescriptorPool (the generated 0.108 classes are untouched), and ``legacy`` rewrites every removed
field into its modern form before the plan is re-read with the standard classes. The removed fields and
messages are data (the tables below), copied from the 0.81 descriptors with their numbers and oneofs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import Message
from substrait import extended_expression_pb2, plan_pb2

_F = descriptor_pb2.FieldDescriptorProto
OPTIONAL, REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
MESSAGE, STRING, INT64, INT32, UINT32 = _F.TYPE_MESSAGE, _F.TYPE_STRING, _F.TYPE_INT64, _F.TYPE_INT32, _F.TYPE_UINT32
NULLABILITY = ".substrait.Type.Nullability"


class RemovedField(NamedTuple):
    """One field 0.108 removed, as 0.81 declared it."""

    message: str  # full name of the message holding it
    name: str
    number: int
    type: int  # FieldDescriptorProto.Type
    type_name: str = ""  # ".substrait.Expression" for message and enum fields
    label: int = OPTIONAL
    oneof: str = ""  # the 0.81 oneof; created if 0.108 no longer has it (keeps presence: count 0 vs unset)


class RemovedMessage(NamedTuple):
    """A message type 0.108 removed; its fields are RemovedFields."""

    file: str  # the .proto file that declared it
    name: str  # full name


REMOVED_MESSAGES: tuple[RemovedMessage, ...] = (
    RemovedMessage("substrait/extensions/extensions.proto", "substrait.extensions.SimpleExtensionURI"),
    RemovedMessage("substrait/type.proto", "substrait.Type.Timestamp"),
    RemovedMessage("substrait/type.proto", "substrait.Type.TimestampTZ"),
    RemovedMessage("substrait/type.proto", "substrait.Type.Time"),
    RemovedMessage("substrait/algebra.proto", "substrait.Expression.Enum"),
    RemovedMessage("substrait/algebra.proto", "substrait.Expression.Enum.Empty"),
)

_EXT = "substrait.extensions.SimpleExtensionDeclaration"
REMOVED_FIELDS: tuple[RemovedField, ...] = (
    RemovedField("substrait.extensions.SimpleExtensionURI", "extension_uri_anchor", 1, UINT32),
    RemovedField("substrait.extensions.SimpleExtensionURI", "uri", 2, STRING),
    RemovedField("substrait.Plan", "extension_uris", 1, MESSAGE, ".substrait.extensions.SimpleExtensionURI", REPEATED),
    RemovedField(
        "substrait.ExtendedExpression",
        "extension_uris",
        1,
        MESSAGE,
        ".substrait.extensions.SimpleExtensionURI",
        REPEATED,
    ),
    RemovedField(f"{_EXT}.ExtensionFunction", "extension_uri_reference", 1, UINT32),
    RemovedField(f"{_EXT}.ExtensionType", "extension_uri_reference", 1, UINT32),
    RemovedField(f"{_EXT}.ExtensionTypeVariation", "extension_uri_reference", 1, UINT32),
    RemovedField("substrait.AggregateFunction", "args", 2, MESSAGE, ".substrait.Expression", REPEATED),
    RemovedField("substrait.Expression.ScalarFunction", "args", 2, MESSAGE, ".substrait.Expression", REPEATED),
    RemovedField("substrait.Expression.WindowFunction", "args", 8, MESSAGE, ".substrait.Expression", REPEATED),
    RemovedField(
        "substrait.AggregateRel.Grouping", "grouping_expressions", 1, MESSAGE, ".substrait.Expression", REPEATED
    ),
    RemovedField("substrait.Expression.Enum", "specified", 1, STRING, oneof="enum_kind"),
    RemovedField(
        "substrait.Expression.Enum", "unspecified", 2, MESSAGE, ".substrait.Expression.Enum.Empty", oneof="enum_kind"
    ),
    RemovedField("substrait.Expression", "enum", 10, MESSAGE, ".substrait.Expression.Enum", oneof="rex_type"),
    RemovedField("substrait.Expression.Literal", "timestamp", 14, INT64, oneof="literal_type"),
    RemovedField("substrait.Expression.Literal", "time", 17, INT64, oneof="literal_type"),
    RemovedField("substrait.Expression.Literal", "timestamp_tz", 27, INT64, oneof="literal_type"),
    RemovedField("substrait.Expression.Literal.IntervalDayToSecond", "microseconds", 3, INT32, oneof="precision_mode"),
    *(
        RemovedField(f"substrait.Type.{m}", name, number, kind, type_name)
        for m in ("Timestamp", "TimestampTZ", "Time")
        for name, number, kind, type_name in (
            ("type_variation_reference", 1, UINT32, ""),
            ("nullability", 2, _F.TYPE_ENUM, NULLABILITY),
        )
    ),
    RemovedField("substrait.Type", "timestamp", 14, MESSAGE, ".substrait.Type.Timestamp", oneof="kind"),
    RemovedField("substrait.Type", "time", 17, MESSAGE, ".substrait.Type.Time", oneof="kind"),
    RemovedField("substrait.Type", "timestamp_tz", 29, MESSAGE, ".substrait.Type.TimestampTZ", oneof="kind"),
    RemovedField("substrait.Type", "user_defined_type_reference", 31, UINT32, oneof="kind"),
    RemovedField("substrait.FetchRel", "offset", 3, INT64, oneof="offset_mode"),
    RemovedField("substrait.FetchRel", "count", 4, INT64, oneof="count_mode"),
    *(
        RemovedField(f"substrait.{rel}", name, number, MESSAGE, ".substrait.Expression.FieldReference", REPEATED)
        for rel in ("HashJoinRel", "MergeJoinRel")
        for name, number in (("left_keys", 4), ("right_keys", 5))
    ),
    RemovedField(
        "substrait.ReadRel.VirtualTable", "values", 1, MESSAGE, ".substrait.Expression.Literal.Struct", REPEATED
    ),
)


def _files_in_order(roots: list[FileDescriptor]) -> list[FileDescriptor]:
    """The files and everything they import, dependencies first."""
    out: dict[str, FileDescriptor] = {}

    def visit(f: FileDescriptor) -> None:
        for dep in f.dependencies:
            visit(dep)
        out.setdefault(f.name, f)

    for root in roots:
        visit(root)
    return list(out.values())


def _message_proto(fdp: descriptor_pb2.FileDescriptorProto, full_name: str) -> descriptor_pb2.DescriptorProto:
    """The DescriptorProto for a message of the file, by full name (created if missing)."""
    parts = full_name.removeprefix(fdp.package + ".").split(".")
    holder, found = fdp.message_type, None
    for part in parts:
        found = next((m for m in holder if m.name == part), None)
        if found is None:
            found = holder.add(name=part)
        holder = found.nested_type
    assert found is not None
    return found


def _file_of(
    protos: Iterable[descriptor_pb2.FileDescriptorProto], full_name: str
) -> descriptor_pb2.FileDescriptorProto:
    """The file declaring a message: its package is a prefix and the next part one of its top-level messages."""
    for fdp in protos:
        top = full_name.removeprefix(fdp.package + ".").split(".")[0]
        if full_name.startswith(fdp.package + ".") and any(m.name == top for m in fdp.message_type):
            return fdp
    raise KeyError(full_name)


def _add_field(msg: descriptor_pb2.DescriptorProto, f: RemovedField) -> None:
    fp = msg.field.add(name=f.name, number=f.number, label=f.label, type=f.type)
    if f.type_name:
        fp.type_name = f.type_name
    if f.oneof:
        names = [o.name for o in msg.oneof_decl]
        if f.oneof not in names:
            msg.oneof_decl.add(name=f.oneof)
            names.append(f.oneof)
        fp.oneof_index = names.index(f.oneof)


def _build_pool() -> descriptor_pool.DescriptorPool:
    files = _files_in_order([plan_pb2.DESCRIPTOR, extended_expression_pb2.DESCRIPTOR])
    protos: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for f in files:
        fdp = descriptor_pb2.FileDescriptorProto()
        f.CopyToProto(fdp)
        protos[f.name] = fdp
    for m in REMOVED_MESSAGES:
        _message_proto(protos[m.file], m.name)
    for field in REMOVED_FIELDS:
        _add_field(_message_proto(_file_of(protos.values(), field.message), field.message), field)
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(protos[f.name])
    return pool


POOL = _build_pool()


def descriptor(full_name: str) -> Descriptor:
    """A message type of the superset schema."""
    return POOL.FindMessageTypeByName(full_name)


def message_class(full_name: str) -> type[Message]:
    """The class of a superset message type, e.g. message_class("substrait.Plan")."""
    return message_factory.GetMessageClass(descriptor(full_name))


SupersetPlan = message_class("substrait.Plan")
