"""Sealing secrets with ``INSTALLATION_KEYS``: only the keys open them, the first key seals, rotation keeps old
records readable, and a value written before sealing is read as it is."""

import pytest

from bot.store.workspaces.token_seal import SEALED_PREFIX, TokenSeal, UnopenableSecret, key_problem, new_key

_TOKEN = "xoxb-1111-2222-secret"


def test_a_sealed_token_holds_no_trace_of_it_and_opens_with_its_key() -> None:
    seal = TokenSeal([new_key()])
    sealed = seal.seal(_TOKEN)
    assert sealed.startswith(SEALED_PREFIX)
    assert "secret" not in sealed
    assert seal.seal(_TOKEN) != sealed  # a fresh IV each time: equal tokens do not look equal
    assert seal.open(sealed) == _TOKEN


def test_the_first_key_seals_every_key_opens_and_a_removed_key_opens_nothing() -> None:
    old, new = new_key(), new_key()
    sealed_old = TokenSeal([old]).seal(_TOKEN)
    both = TokenSeal([new, old])
    assert both.open(sealed_old) == _TOKEN
    assert not both.sealed_with_first(sealed_old)
    assert both.sealed_with_first(both.seal(_TOKEN))
    with pytest.raises(UnopenableSecret):
        TokenSeal([new]).open(sealed_old)


def test_a_value_written_before_sealing_is_its_own_secret_and_not_sealed_with_any_key() -> None:
    seal = TokenSeal([new_key()])
    assert seal.open(_TOKEN) == _TOKEN
    assert not seal.sealed_with_first(_TOKEN)


def test_a_damaged_sealed_value_opens_nothing() -> None:
    seal = TokenSeal([new_key()])
    with pytest.raises(UnopenableSecret):
        seal.open(seal.seal(_TOKEN)[:-4] + "AAAA")


@pytest.mark.parametrize(
    ("keys", "named"),
    [(" , ", "INSTALLATION_KEYS is blank"), ("not-a-key", "key 1 of 1"), (f"{new_key()},short", "key 2 of 2")],
    ids=["blank", "not-a-key", "second-short"],  # a fresh key in an id differs per collection (pytest-xdist's workers)
)
def test_a_key_that_is_not_one_is_named_by_its_place(keys: str, named: str) -> None:
    problem = key_problem(keys)
    assert problem is not None
    assert named in problem
    assert "short" not in problem
    assert "not-a-key" not in problem


def test_well_formed_keys_have_no_problem() -> None:
    assert key_problem(f"{new_key()}, {new_key()}") is None
