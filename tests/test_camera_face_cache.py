"""The face cache: what is derived of a deck's read-only faces is made once, whatever the
recogniser; a face that can change is derived afresh every time."""

from __future__ import annotations

import numpy as np

from firmware_interfaces.camera.face_cache import FaceCache


def _read_only(value: int) -> np.ndarray:
    face = np.full((4, 3), value, np.uint8)
    face.setflags(write=False)
    return face


def test_a_read_only_face_is_derived_once_and_a_writable_one_every_time() -> None:
    made: list[int] = []
    cache = FaceCache(lambda face: made.append(int(face[0, 0])) or int(face.sum()), kept=3)
    face = _read_only(2)
    assert cache(face) == 24 and cache(face) == 24 and made == [2]
    assert face in cache and len(cache) == 1
    # an equal array is another face: kept on its own
    twin = _read_only(2)
    assert cache(twin) == 24 and made == [2, 2] and twin in cache
    # a face that can be written to, or a view of one that cannot, is never kept
    writable = np.full((4, 3), 5, np.uint8)
    assert cache(writable) == 60 and cache(writable) == 60 and made == [2, 2, 5, 5]
    assert writable not in cache
    view = face[1:]
    assert not view.flags.writeable and cache(view) == 18 and cache(view) == 18
    assert view not in cache and len(cache) == 2


def test_the_cache_is_emptied_when_full_and_on_demand() -> None:
    made: list[int] = []
    cache = FaceCache(lambda face: made.append(int(face[0, 0])) or 0, kept=2)
    faces = [_read_only(k) for k in range(3)]
    cache(faces[0])
    cache(faces[1])
    assert len(cache) == 2
    cache(faces[2])  # a third face: the others let go
    assert len(cache) == 1 and faces[2] in cache and faces[0] not in cache
    cache(faces[0])
    assert made == [0, 1, 2, 0]
    cache.clear()
    assert len(cache) == 0 and faces[0] not in cache


def test_a_derivation_that_fails_keeps_nothing() -> None:
    def fails(face: np.ndarray) -> int:
        raise ValueError("nothing to derive")

    cache = FaceCache(fails)
    face = _read_only(1)
    for _ in range(2):
        try:
            cache(face)
        except ValueError:
            pass
        else:
            raise AssertionError("the failure must reach the caller")
    assert face not in cache and len(cache) == 0
