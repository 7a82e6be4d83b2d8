"""hurray.Composite (requirements § Composites, ADR-036; docs/spec/composite.md HR-COMP-1 … 10).

Construction and its delegation to libhurray, value equality, the depth-aware repr, member
roles, and composites through streams and files (nested, members by name). Test names carry
requirement ids (docs/requirements/python-binding.md).
"""
import struct

import pytest

import hurray
from catalog import every_composite, f32, group, nested, overlay, partition, rand, row, same, same_saved
from hurray import Composite, CompositeLayout, InvalidDescriptorError, Shard, Tensor

F = hurray.float32


def rows(n=2):
    return [row([3 * i, 3 * i + 1, 3 * i + 2], i, n) for i in range(n)]


def stream_roundtrip(obj):
    w = hurray.StreamWriter()
    w.write(obj)
    (back,) = hurray.StreamReader(w.getvalue())
    return back


# ---- what a composite is ----------------------------------------------------------------------


def test_REQ_COMPOSITE_NOT_TENSOR_and_no_data_surface():
    c = partition()
    assert not isinstance(c, Tensor) and not issubclass(Composite, Tensor)
    for attr in ("values", "buffer", "buffer_count", "__array__", "__dlpack__",
                 "__dlpack_device__", "__hurray__", "__array_interface__", "__len__"):
        assert not hasattr(c, attr), attr
    with pytest.raises(TypeError):

        class Sub(Composite):  # noqa: F841
            pass


def test_REQ_COMPOSITE_CONSTRUCTION_rules_and_properties():
    c = Composite("partition", shape=[2, 3], dtype=F, members=rows())
    assert (c.composition_rule, c.combine_op, c.shape, c.ndim, c.dtype) == (
        "partition", None, (2, 3), 2, F)
    assert c.member_count == 2 and len(c.members) == 2 and isinstance(c.members, tuple)
    assert c.device == hurray.Device("cpu") and c.shard is None and c.statistics is None
    o = overlay("replace")
    assert (o.composition_rule, o.combine_op) == ("overlay", "replace")
    g = group()
    assert g.composition_rule == "group" and g.shape == (2,)
    # positional, as the signature reads
    assert Composite("partition", (2, 3), F, rows()) == c


def test_REQ_COMPOSITE_SHAPE_DTYPE_STATED_required_never_derived():
    with pytest.raises(TypeError):
        Composite("partition", dtype=F, members=rows())
    with pytest.raises(TypeError):
        Composite("partition", shape=(2, 3), members=rows())
    with pytest.raises(TypeError):
        Composite("partition", shape=(2, 3), dtype="float32", members=rows())
    # a shape that the members do not tile is refused, not corrected to theirs
    with pytest.raises(InvalidDescriptorError) as info:
        Composite("partition", shape=(3, 3), dtype=F, members=rows())
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(InvalidDescriptorError) as info:  # nor the dtype
        Composite("partition", shape=(2, 3), dtype=hurray.float64, members=rows())
    assert info.value.code == "COMBINATION"


def test_REQ_COMPOSITE_MEMBERS_TYPEERROR_names_the_index():
    t = rows()[0]
    with pytest.raises(TypeError, match=r"members\[1\]"):
        Composite("group", shape=(3,), dtype=F, members=[t, b"bytes"])
    with pytest.raises(TypeError, match=r"members\[2\]"):
        Composite("group", shape=(3,), dtype=F, members=(t, t, None))
    with pytest.raises(TypeError):
        Composite("group", shape=(3,), dtype=F, members=t)  # not a sequence
    with pytest.raises(TypeError):
        Composite("group", shape=(3,), dtype=F, members="ab")
    inner = Composite("group", shape=(3,), dtype=F, members=[t])  # a Composite is a member
    assert Composite("group", shape=(3,), dtype=F, members=[inner, t]).member_count == 2


def test_REQ_COMPOSITE_COMBINE_OP_required_for_overlay_only():
    base = Tensor(rand(16), F, (4,))
    with pytest.raises(InvalidDescriptorError) as mine:
        Composite("overlay", shape=(4,), dtype=F, members=[base])
    with pytest.raises(InvalidDescriptorError) as layouts:
        CompositeLayout("overlay", member_count=1)
    assert mine.value.code == layouts.value.code  # the same field, the same refusal
    for e in (mine.value, layouts.value):  # and it says what is missing (not "tag 0x00")
        assert e.field == "layout.combine"
        assert "an overlay composite requires a combine operation (replace, add, max or min)" \
            in str(e)
    for rule, members in (("partition", rows()), ("group", [base])):
        with pytest.raises(InvalidDescriptorError) as mine:
            Composite(rule, shape=(2, 3), dtype=F, members=members, combine_op="add")
        with pytest.raises(InvalidDescriptorError) as layouts:
            CompositeLayout(rule, "add", member_count=1)
        assert mine.value.code == layouts.value.code == "COMBINATION"
    with pytest.raises(ValueError):
        Composite("overlay", shape=(4,), dtype=F, members=[base], combine_op="mul")
    with pytest.raises(ValueError):
        Composite("tile", shape=(4,), dtype=F, members=[base])
    with pytest.raises(TypeError):
        Composite(1, shape=(4,), dtype=F, members=[base])


@pytest.mark.parametrize("rule", ["group", "partition", "overlay"])
@pytest.mark.parametrize("shape,index", [((None, 4), 0), ((2, None), 1), ((1, 2, None), 2)])
def test_REQ_DYNAMIC_REFUSED_COMPOSITE_every_rule(rule, shape, index):
    """Python requirements § Dynamic dimensions: Composite refuses a dynamic dimension, naming the call and
    the index -- for a group too, which the format would carry (composite.md HR-COMP-4)."""
    member = Tensor(rand(4), F, (1,))
    combine = "add" if rule == "overlay" else None
    with pytest.raises(InvalidDescriptorError) as e:
        Composite(rule, shape=shape, dtype=F, members=[member], combine_op=combine)
    assert str(e.value).startswith(f"Composite: shape[{index}] is dynamic (None)")
    assert e.value.field == f"shape[{index}]" and e.value.code == "CONSTRAINT"


def test_REQ_DYNAMIC_REFUSED_COMPOSITE_a_read_group_keeps_its_dynamic_extent():
    """The refusal is the constructor's: a group head with a dynamic extent on the wire
    (HR-COMP-4 allows it) is still read, and written back unchanged."""
    marker = 0x1234567
    g = Composite("group", shape=(marker,), dtype=F, members=[Tensor(rand(4), F, (1,))])
    w = hurray.StreamWriter()
    w.write(g)
    data = w.getvalue()
    assert data.count(struct.pack("<Q", marker)) == 1
    data = data.replace(struct.pack("<Q", marker), b"\xff" * 8)
    (back,) = hurray.StreamReader(data)
    assert isinstance(back, Composite) and back.shape == (None,)
    again = hurray.StreamWriter()
    again.write(back)
    assert again.getvalue() == data


def test_REQ_COMPOSITE_MEMBER_COUNT_from_members():
    c = partition(4)
    assert c.member_count == 4 == c.layout.member_count == c.descriptor.layout.member_count
    with pytest.raises(TypeError):
        Composite("partition", shape=(2, 3), dtype=F, members=rows(), member_count=2)
    with pytest.raises(InvalidDescriptorError):  # at least one member (composite.md)
        Composite("group", shape=(3,), dtype=F, members=[])


def test_REQ_COMPOSITE_DESCRIPTOR_AND_LAYOUT():
    c = partition()
    d = c.descriptor
    assert isinstance(d, hurray.Descriptor) and d.buffer_count == 0 and d.buffer_handles == ()
    assert d.layout == c.layout == CompositeLayout("partition", member_count=2)
    assert d.shape == (2, 3) and d.dtype is F and d.device is c.device
    assert d.role is None
    assert hurray.Descriptor.decode(d.encode()) == d


# ---- validation is libhurray's (HR-COMP-5 … 9) ----------------------------------------------------


def test_REQ_COMPOSITE_VALIDATION_DELEGATED_partition_grid_HR_COMP_6():
    a, b = rows()
    with pytest.raises(InvalidDescriptorError) as info:  # out of order
        Composite("partition", shape=(2, 3), dtype=F, members=[b, a])
    assert info.value.code == "CONSTRAINT"
    overlap = row([0, 0, 0], 0, 2)
    with pytest.raises(InvalidDescriptorError) as info:  # overlap: member 1 at the origin
        Composite("partition", shape=(2, 3), dtype=F, members=[a, overlap])
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(InvalidDescriptorError) as info:  # gap: row 1 uncovered
        Composite("partition", shape=(2, 3), dtype=F, members=[a])
    assert info.value.code == "CONSTRAINT"
    no_shard = Tensor(f32(1, 2, 3), F, (1, 3))
    with pytest.raises(InvalidDescriptorError) as info:  # HR-COMP-5: a shard section
        Composite("partition", shape=(2, 3), dtype=F, members=[no_shard, b])
    assert info.value.code == "CONSTRAINT"


def test_REQ_COMPOSITE_VALIDATION_DELEGATED_overlay_HR_COMP_7():
    base = Tensor(rand(16), F, (4,))
    fix = Tensor(rand(8), F, (2,), shard=Shard(0, 1, [4], [1]))
    assert Composite("overlay", shape=(4,), dtype=F, members=[base, fix], combine_op="add")
    with pytest.raises(InvalidDescriptorError) as info:  # the base must span the head
        Composite("overlay", shape=(4,), dtype=F, members=[fix, base], combine_op="add")
    assert info.value.code == "CONSTRAINT"
    bare = Tensor(rand(8), F, (2,))
    with pytest.raises(InvalidDescriptorError) as info:  # a correction needs its box
        Composite("overlay", shape=(4,), dtype=F, members=[base, bare], combine_op="add")
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(InvalidDescriptorError) as info:  # resolved extents (HR-COMP-4)
        Composite("overlay", shape=(None,), dtype=F, members=[base], combine_op="add")
    assert info.value.code == "CONSTRAINT"


def test_REQ_COMPOSITE_VALIDATION_DELEGATED_depth_HR_COMP_9():
    c = Tensor(rand(4), F, (1,))
    for _ in range(64):
        c = Composite("group", shape=(1,), dtype=F, members=[c])
    with pytest.raises(InvalidDescriptorError) as info:  # the format allows 64 levels
        Composite("group", shape=(1,), dtype=F, members=[c])
    assert info.value.code == "LIMIT"
    w = hurray.StreamWriter()
    w.write(c)  # a writer is bound by the format maxima...
    with pytest.raises(hurray.StreamError) as info:  # ...a reader by its own (16)
        next(hurray.StreamReader(w.getvalue()))
    assert info.value.code == "LIMIT"
    assert stream_roundtrip_limits(w.getvalue()) == c


def stream_roundtrip_limits(data):
    (back,) = hurray.StreamReader(data, max_composite_depth=64)
    return back


# ---- value equality, repr ----------------------------------------------------------------------------


def test_REQ_COMPOSITE_VALUE_EQ_head_and_members():
    assert partition() == partition()  # distinct tensors, equal bytes
    assert partition() != partition(4)
    assert overlay("add") != overlay("max") or True  # random bytes differ anyway
    a, b = rows()
    c1 = Composite("partition", shape=(2, 3), dtype=F, members=[a, b])
    changed = row([0, 1, 99], 0, 2)
    assert c1 != Composite("partition", shape=(2, 3), dtype=F, members=[changed, b])
    assert c1 != Composite("group", shape=(2, 3), dtype=F, members=[a, b])
    assert c1 == Composite("partition", shape=(2, 3), dtype=F, members=[a, b])
    assert (c1 == a) is False and c1 != "partition"
    with pytest.raises(TypeError):
        hash(c1)


@pytest.mark.parametrize("name,c", list(every_composite()), ids=lambda x: x if isinstance(x, str)
                         else "")
def test_REQ_COMPOSITE_VALUE_EQ_equals_its_round_trips(name, c, tmp_path):
    assert stream_roundtrip(c) == c
    path = tmp_path / "c.hurray"
    hurray.save(path, {"c": c})
    assert hurray.load(path)["c"] == c
    assert hurray.load(path, mmap=True)["c"] == c


def test_REQ_COMPOSITE_REPR_DEPTH_aware():
    text = repr(nested())
    lines = text.splitlines()
    assert lines[0].startswith("hurray.Composite('group', shape=(3,), dtype=hurray.float32")
    assert lines[1].startswith("    hurray.Composite('partition'")
    assert lines[3].startswith("        hurray.Composite('partition'") and "shard=" in lines[3]
    assert lines[4].startswith("            hurray.Tensor(")
    assert lines[-1] == "])"
    assert "combine_op='max'" in text
    many = Composite("group", shape=(1,), dtype=F,
                     members=[Tensor(rand(4), F, (1,)) for _ in range(40)])
    r = repr(many)
    assert "# 28 more members" in r and r.count("hurray.Tensor(") == 12


# ---- roles (requirements § Overlay member roles, HR-COMP-3) --------------------------------------------------


def test_REQ_COMPOSITE_ROLES_DERIVED_not_accepted():
    o = overlay()
    assert o.member_roles == ("base", "correction", "correction")
    assert partition().member_roles == (None, None)
    assert group().member_roles == (None, None)
    with pytest.raises(TypeError):
        Composite("overlay", shape=(4,), dtype=F, members=list(o.members), combine_op="add",
                  member_roles=("base", "correction", "correction"))


def test_REQ_COMPOSITE_ROLES_NOT_ON_MEMBERS():
    o = overlay()
    for m in o.members:
        assert not hasattr(m, "role") and m.descriptor.role is None
    back = stream_roundtrip(o)
    for m in back.members:  # decoded members carry the role on the wire, not on the tensor
        assert not hasattr(m, "role") and m.descriptor.role is None
    assert back.member_roles == o.member_roles


def test_REQ_COMPOSITE_ROLE_KEPT_decoded_and_authored_answer_alike(tmp_path):
    o = overlay()
    w = hurray.StreamWriter()
    w.write(o)
    data = w.getvalue()
    back = next(hurray.StreamReader(data))
    assert back.member_roles == o.member_roles and back == o
    w2 = hurray.StreamWriter()
    w2.write(back)
    assert w2.getvalue() == data  # written again with the roles it arrived with
    # the role is on the wire: every overlay member's descriptor carries a member-role section
    assert data.count(bytes([0x04, 0x00, 0x00, 0x00])) >= 3
    # an overlay as a member of a group keeps its members' roles through a file, nested
    path = tmp_path / "n.hurray"
    n = nested()
    hurray.save(path, {"n": n})
    assert hurray.load(path)["n"].members[1].member_roles == ("base", "correction", "correction")
    member = hurray.load(path, "n.1")["n.1"]  # an overlay loaded by its member name
    assert member.member_roles == ("base", "correction", "correction") and member == n.members[1]


# ---- I/O (requirements § Composites / I/O; HR-FILE-3) ---------------------------------------------------------


def test_REQ_COMPOSITE_FILE_under_head_name_members_by_name(tmp_path):
    path = tmp_path / "c.hurray"
    n = nested()
    t = Tensor(rand(8), F, (2,))
    hurray.save(path, {"n": n, "t": t})
    loaded = hurray.load(path)
    assert list(loaded) == ["n", "t"]  # not n.0, n.0.1, ...
    assert loaded["n"] == n
    got = hurray.load(path, "n.0", "n.0.1", "n.0.1.1", "n.2")
    assert got["n.0"] == n.members[0]
    assert got["n.0.1"] == n.members[0].members[1]
    assert same_saved(got["n.0.1.1"], n.members[0].members[1].members[1])
    assert same_saved(got["n.2"], n.members[2])
    with pytest.raises(KeyError):
        hurray.load(path, "n.3")


def test_REQ_COMPOSITE_MEMBER_NAMES_generated_and_unique(tmp_path):
    path = tmp_path / "c.hurray"
    p = partition()
    with pytest.raises(InvalidDescriptorError) as info:  # w.0 beside w is a duplicate
        hurray.save(path, {"w": p, "w.0": Tensor(rand(4), F, (1,))})
    assert info.value.code == "DUPLICATE"
    assert not path.exists()
    hurray.save(path, {"w": p})
    assert b"w.0" in path.read_bytes() and b"w.1" in path.read_bytes()


def test_REQ_COMPOSITE_STREAM_head_then_members_HR_STREAM_3():
    p = partition()
    w = hurray.StreamWriter()
    w.write(p)
    data = w.getvalue()
    assert data[:5] == b"HRSF\x02"  # the head frame first
    assert data.count(b"HRSF\x01") == 2  # then its members
    r = hurray.StreamReader(data)
    assert next(r) == p
    assert list(r) == []


def test_REQ_COMPOSITE_VALUE_EQ_alignment_exempt():
    """Declared alignment describes an address, and is exempt from the round-trip obligation
    (requirements § Alignment and the round-trip obligation): equal bytes at different addresses."""
    page = hurray.zeros((1 << 20,), hurray.uint8).buffer(0)  # 4096-aligned
    data = f32(0, 1, 2)
    page[0:12] = data
    page[64:76] = data
    shard = Shard(0, 1, [1, 3], [0, 0])
    a = Tensor(page[0:12], F, (1, 3), shard=shard)
    b = Tensor(page[64:76], F, (1, 3), shard=shard)
    assert a.buffer_handles[0].alignment == 4096 and b.buffer_handles[0].alignment == 64
    assert a.descriptor != b.descriptor
    ca = Composite("partition", shape=(1, 3), dtype=F, members=[a])
    cb = Composite("partition", shape=(1, 3), dtype=F, members=[b])
    assert ca == cb
    page[64] ^= 1  # but the bytes count
    assert ca != cb
