"""Which Spark form several grouping sets take (consumer/translation/relations/grouping_sets.py): ROLLUP and
CUBE on every Spark, GROUPING SETS where the client has `DataFrame.groupingSets` (Spark 4), else a union of
aggregates; and the grouping-set column read from Spark's grouping id."""

from __future__ import annotations

import pytest
from substrait_spark.consumer.translation.relations.grouping_sets import GroupingForm, shape_of

pytestmark = pytest.mark.unit


def test_rollup_in_the_order_its_sets_drop_keys():
    # ROLLUP(b, a) over keys [a, b]: sets (a, b), (b), () in any order.
    shape = shape_of([[1], [], [0, 1]], 2, sets_available=False)
    assert shape is not None and shape.form is GroupingForm.ROLLUP and shape.order == (1, 0)
    assert [shape.spark_id(s) for s in ([0, 1], [1], [])] == [0, 1, 3]


def test_cube_is_every_subset_once():
    sets = [[0, 1, 2], [0, 1], [0, 2], [1, 2], [0], [1], [2], []]
    shape = shape_of(sets, 3, sets_available=False)
    assert shape is not None and shape.form is GroupingForm.CUBE and shape.order == (0, 1, 2)


@pytest.mark.parametrize(
    "sets, keys, available, form",
    [
        ([[0], [1]], 2, True, GroupingForm.SETS),  # GROUPING SETS ((a), (b)): no rollup, no cube
        ([[0], [1]], 2, False, None),  # ... a union of aggregates before Spark 4's groupingSets
        ([[0], [0], []], 1, True, None),  # a repeated set: its rows twice, which no Spark form gives
        ([[0], []], 2, True, None),  # key 1 in no set
        ([[0, 1], [1], []], 2, False, GroupingForm.ROLLUP),  # ROLLUP(b, a)
        ([[0, 1], [0]], 2, False, None),  # a chain without the empty set is not a ROLLUP
    ],
)
def test_the_form_read_from_the_sets(sets, keys, available, form):
    shape = shape_of(sets, keys, sets_available=available)
    assert (shape.form if shape else None) is form
