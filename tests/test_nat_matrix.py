"""The NAT matrix computed from stored convergence cycles (answers/nat_matrix.py): pure arithmetic."""

from vpnbench.answers.nat_matrix import nat_matrix, nat_types

CYCLE = {"pairs": ["n0>n1", "n1>n0", "n0>n2", "n2>n0", "n1>n2", "n2>n1"],
         "nat": {"n0": "none", "n1": "address-dependent", "n2": "address-dependent"},
         "first_reply_s": {"n0>n1": 0.5, "n1>n0": 0.7, "n0>n2": 0.6, "n2>n0": 0.6, "n1>n2": 2.0},
         "never": ["n2>n1"],
         "paths": {"n0>n1": "direct", "n1>n0": "direct", "n0>n2": "direct", "n2>n0": "direct",
                   "n1>n2": "relay", "n2>n1": "relay"}}


def test_both_orders_of_a_pair_of_types_land_in_one_cell():
    matrix = nat_matrix([CYCLE])
    assert nat_types(matrix) == ["none", "address-dependent"]
    across = matrix[("none", "address-dependent")]
    assert across.pairs == 4 and across.counts == {"direct": 4} and across.outcome == "direct"
    assert across.first_reply_p50_s == 0.6


def test_a_never_answering_pair_outranks_a_relayed_one_on_a_tie():
    same = nat_matrix([CYCLE])[("address-dependent", "address-dependent")]
    assert same.counts == {"relay": 1, "never": 1} and same.outcome == "never"
    assert same.first_reply_s == [2.0]


def test_cycles_without_nat_types_give_no_matrix():
    assert nat_matrix([{k: v for k, v in CYCLE.items() if k != "nat"}]) == {}


def test_pairs_of_a_cycle_whose_up_returned_past_the_deadline_are_unprobed_not_never():
    late = {**CYCLE, "up_past_deadline": True}  # up() itself took the deadline: n2>n1 was never asked
    same = nat_matrix([late])[("address-dependent", "address-dependent")]
    assert same.counts == {"relay": 1, "unprobed": 1}
    assert same.outcome == "relay"  # a tie: the pair that answered says more than the one never asked
