"""Find and read every card on the table in one camera frame.

1. *Find* (:mod:`firmware_interfaces.camera.finder`): card-shaped objects on
   the top-down view of the table, with several outlines each.
2. *Refine* the best outline onto the card's own edges.
3. *Read* it with the deck model learned at calibration
   (:mod:`calibration.deck_model`); a doubtful card is looked at again around
   its most card-like outline, and read only if that view is clear, near a
   card, of the rank the templates' own read gives, and contradicted by no outline
   (:meth:`Recognizer._read`); still doubtful, its outline is aligned to the
   likeliest face (:func:`~firmware_interfaces.camera.alignment.align_to_face`)
   and read again under the same tests. Otherwise the card is reported with
   ``code=None`` (where the felt's grain shows through, not at all): never a guess.
   Last, a card under a veil of glare is read where its corner indexes name the code the
   whole card reads (:meth:`Recognizer._agreeing_read`). A card left unread, or read only so,
   in a frame the camera's motion smeared (the cards read show the smear:
   :mod:`firmware_interfaces.camera.smear`) is read again with the smear undone.
4. *Place*: the card's centre in mm names its slot, or ``None`` (a card off
   every slot: dropped or exposed).

A frame in which nothing on the table moved since the last frame read in full
gets that read again (:mod:`firmware_interfaces.camera.change`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from calibration.deck_model import INDEX_CORNER, INDEX_VETO_MARGIN, suit_twin
from calibration.layout import Layout, Slot
from calibration.store import Calibration
from calibration.templates import CARD_SIZE, CornerPatches, canonical_corners, one_blas_thread, warp_card
from firmware_interfaces.camera.alignment import align_to_face, align_under_glare
from firmware_interfaces.camera.change import ChangeDetector
from firmware_interfaces.camera.face_cache import FaceCache
from firmware_interfaces.camera.face_ink import (
    InkParts,
    explained,
    ink_parts,
    most_hidden_part,
    unexplained_ink,
    whiteness,
)
from firmware_interfaces.camera.finder import (
    CALIBRATION_PX_PER_MM,
    SAME_CARD_MM,
    CardFinder,
    FoundCard,
    as_bgr,
)
from firmware_interfaces.camera.refine import refine_outline
from firmware_interfaces.camera.smear import (
    LENGTH_TRIES,
    Smear,
    angle_apart,
    card_smear,
    frame_smear,
    smear_guesses,
    unsmeared,
)
from firmware_interfaces.cards import CODES, RANKS

if TYPE_CHECKING:
    from calibration.deck_model import DeckModel, ModelReading

#: Default share of the deck model's own margin limit a read must reach (1 = the limit set
#: at calibration; raise it for more caution).
DEFAULT_THRESHOLD = 1.0
#: The pip cards' ranks, ace to ten: the cards glare can turn into others by hiding pips.
PIPS = RANKS[:10]
#: An unread outline through which the empty felt's grain still shows this clearly
#: (:meth:`CardFinder.felt_showing`, -1..1) is no card. Measured on the tuned-on decks' hard
#: scenes: cards 0.18 at most (99th percentile 0.13-0.18), a pool of glare in an empty slot 0.83.
FELT_SHOWING = 0.5
#: An unread outline whose inside is still the empty table's colour over this share of it
#: (:meth:`CardFinder.felt_unchanged`) is no card either: the felt between an empty slot's
#: printed lines, blurred past showing its grain. Measured on held-out harness frames (seeds 7
#: and 8, four designs, 920 cards): cards 0.28 at most, no-reads of cards 0.001; empty slots on
#: dark felt 1.0, one under a glare the empty table was taken with 0.74 (session 55).
FELT_UNCHANGED = 0.5
#: A read this many times past the margin limit needs no second look.
SURE_MARGIN = 3.0
#: A sure read (SURE_MARGIN) must also lie within this many times its card's near limit
#: (``DeckModel.near_limit``). A card half under a dealer's hand reads clearly as itself from
#: the half that shows. A held-out tigullio KD 49.5 % under a hand (the benchmark's ``--special``
#: scenes, seed 29) had its top index clear, read KD 3.7 times past the margin limit, and its top
#: index confirmed it. Its covered corner lay at 0.86 of the index model's distance limit, so no
#: index counted as hidden. The whole card lay 2.6 times its near limit from KD. Sure reads of
#: uncovered cards can lie as far: on tuned-on kde-standard, 3 of 856 sure judgements lay past 2,
#: the farthest at 2.63, farther than this card. So the limit does not tell the two kinds of card
#: apart. It hands such reads to the doubtful read's routes, which ask NEAR_SLACK and read those
#: cards there. With the limit at 2, our 10 check sets read card for card as before; at NEAR_SLACK
#: (1.25), one card fewer. Where a far read on one of the finder's outlines is so refused,
#: ``_sure_elsewhere`` may take a later outline's read, under a doubtful read's tests (session 68).
SURE_NEAR = 2.0
#: A card's sides.
SIDES = 4
#: A doubtful read (any read :meth:`Recognizer._passes` judges: the second look, the fits, the
#: alignments, and the first pass's read on another of the finder's outlines) must lie within
#: this many times its card's near limit (``DeckModel.near_limit``: as near as 97 % of its
#: held-out views lay). That limit is a percentile of 40 views a card, and the views just past it
#: are blurred ones: a harness 3H under motion blur, aligned, read 3 times past the margin limit
#: at 1.1 times its near limit. Misaligned views (augmented with outlines 2-5 % of the width off,
#: 1,900 a design, four designs) read wrong past the margin limit twice, at 1.43 and 1.47 times
#: their card's near limit; right ones lay between 1 and 1.25 times it 4-5 % of the time. The
#: nearest wrong read of a scene known: a tuned-on 8S, 74 % burnt, aligned and read 4S at 1.31
#: times (its suit twin's margin and its index, reading 8S, turn it away too). The views of a
#: second look must lie within the limit itself to count as near (session 41).
NEAR_SLACK = 1.25
#: A second look whose runner-up is its suit twin (7C and 7S, 7H and 7D) must be this many
#: times past the margin limit: those pairs are what a misaligned, smeared view confuses. So must
#: one whose runner-up is a pip rival (:func:`pip_rivals`): glare hides pips, and against a pip
#: fewer blur confuses too (a tuned-on svg-cards 5C, blurred, read 5S at 1.04 times the limit with
#: 4S the runner-up: ``benchmarks/pip_rivals.py``, session 58).
TWIN_MARGIN = 2.0
#: Every read must look more like its card than like that card's suit twin by this much, on
#: the pair's own discriminant (``ModelReading.twin_lead``; held-out views of the card score a
#: median of 1, of its twin -1). The 52-card discriminant read a harness 3C, blurred and
#: smeared, as 3S 2.01 times past the margin limit (a twin margin would need 2.1, and right twin
#: reads pass at 2.05 and 2.07), while the pair's own axis put it at -0.13, on the club's side.
#: On 15,600 heavily blurred views of a held-out design (300 a card: ``calibration.augment`` views
#: of 55-80 px wide cards, blur sigma 1.2-2, motion blur in 70 %; ``benchmarks/suit_twins.py``
#: makes such views), the lowest lead of a right read that passed the other tests was 0.12 (session
#: 42, before the redness under a veil changed the features). A read from one corner index alone
#: (glare burnt the face, :meth:`Recognizer._index_read`) is not asked.
TWIN_LEAD = 0.0
#: The same lead, of a doubtful read on a frame with its motion smear undone (undoing a smear
#: leaves ringing, and a smeared club and spade differ little): a held-out tigullio 4C, smeared
#: 10.7 px, read 4S so at 2.02 times the margin limit with a lead of 0.003; right reads there
#: against their suit twin led by 0.196 at least (harness seeds 1, 3, 7, 8 and our 13 sets,
#: session 55).
UNSMEARED_TWIN_LEAD = 0.1
#: A doubtful read whose runner-up is the same suit with a pip or two more (:func:`pips_hidden`)
#: must also be the better match of the clearer corner index by this much (NCC): on a held-out
#: design, a glare spot hid a pip and 5S read as 4S, 8H as 7H (benchmarks/recognition.py, seed
#: 11); a pool of glare hid a 6D's two middle pips and it read 4D, 1.03 times past the margin
#: limit, its runner-up 6D, index lead -0.001 (one of the benchmark's timing frames, session 43).
#: A runner-up with a pip fewer is not asked (session 58): glare cannot add the read's extra
#: pip, and a held-out tigullio 3H in a dark, blurred 720p frame, aligned and read 7 times past
#: the limit (runner-up 2H), was a no-read for its small index favouring 2H. 64,000 hard views
#: of the two held-out designs' pip cards (``calibration.augment``: 55-110 px wide, blur, smear,
#: glare, veils, shadows, outlines 2.5 % off; ``benchmarks/pip_rivals.py``) read 0 wrong either
#: way, and 220 more right reads against a pip fewer passed the tests without the index asked
#: (5,032 -> 5,248 on tigullio, 2,044 -> 2,048 on ornamental). Dropping the twice-the-limit
#: margin against a pip fewer as well read 3 more cards of our 13 sets, but a tuned-on svg-cards
#: 5C read 5S at 1.04 times the limit (runner-up 4S) passed: not done.
INDEX_LEAD = 0.0
#: A sure read whose runner-up is the same suit with a pip or two more (:func:`pips_hidden`)
#: must have its clearer corner index lead the runner-up by more than this (NCC, the
#: :data:`INDEX_LEAD` lead; -0.05: an index favouring the runner-up by 0.05 or more turns the
#: read away): glare that burns a pip white leaves no ink for
#: :meth:`Recognizer._ink_explained` to find on a card whose paper is clipped, and a held-out
#: 3S, its middle pip burnt away, read sure as 2S (4.4 times past the margin limit) from a frame
#: shifted 2 px since calibration, its index favouring 3S by 0.08-0.09. On our 13 sets, plain
#: and so shifted, the sure reads of right cards with such a runner-up led by -0.019 at least (6-7
#: and 9-10 pairs of small indexes, which NCC barely tells apart): this limit leaves them
#: alone (session 52).
SURE_INDEX_LEAD = -0.05
#: A doubtful read of a pip card (and a sure one whose runner-up has a pip or two more) must
#: leave no more ink than this on the card unexplained by its face (``face_ink.unexplained_ink``:
#: the most, averaged over a cell a seventh of the card wide, at the face's best slide, either
#: way up): glare lifts ink, it never adds it. A 6H, its right middle pip and both indexes burnt
#: out, its left middle pip faint, read 4H 8.6 times past the margin limit with a pip neighbour's
#: runner-up (5H), its index lead 0.000: it leaves 0.145 of ink unexplained, and a 5S read 4S
#: (its middle pip under glare) 0.108-0.115. Of 629 checks of right reads on six of our sets (three
#: with burnt glare) the most was 0.056 (session 43, docs/camera.md). A pip burnt away wholly
#: leaves nothing to see (a 3S read 2S: 0.006): that is for the other tests. Court cards are not
#: asked: a court picture's ink, blurred, left up to 0.12 on right reads, and no court card was
#: read wrong so. A pip card under a hand fails it (skin is ink): a no-read, as it would be anyway.
UNEXPLAINED_INK = 0.08
#: A read this many times past the margin limit, and near its card, stands against its corner
#: indexes' doubts (an index naming another code, a pip rival's index lead): on a held-out
#: design under blur both indexes of a 9D read as a 10 and of a 3S as clubs while the whole card
#: read 16-44 times past the limit (no-reads). Doubted reads seen wrong (glare burnt pips away:
#: 6H read 4H, 5S read 4S) were at most 9.1 times past it; right ones from 11.5 times
#: (benchmarks/recognition.py, tuned-on and held-out designs, with and without burnt glare).
INDEX_OVERRULED = 12.0
#: A read from the last, widest search (a view found on a wide grid around the outline and aligned
#: to its own likeliest face) is vetoed by a corner index naming another code at this margin
#: already (``INDEX_VETO_MARGIN`` otherwise): a tuned-on design's 6C, 87 % of it clipped by glare
#: and two pips burnt away, its outline 17 px off, was read 4C that way while its top-left index
#: read 6C at 0.22. (The same margin for every doubtful read of a clipped card cost 3 correct reads
#: in 336 of normal scenes.)
WIDE_SEARCH_VETO_MARGIN = 0.1


@dataclass(frozen=True)
class CardReading:
    """One card seen in one frame.

    ``code`` is ``None`` for a no-read; ``corners`` are image pixels in the
    order top-left, top-right, bottom-right, bottom-left of the card as read;
    ``position`` is the layout slot (``"banker2"``) or ``None`` off every slot.
    """

    code: str | None
    confidence: float
    corners: list[tuple[float, float]]
    position: str | None
    centre_mm: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "code": self.code,
            "confidence": round(self.confidence, 3),
            "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners],
            "position": self.position,
        }


class Recognizer:
    """Reads the cards of frames from one calibrated camera over one layout.

    With ``reuse_unchanged`` (the default) a frame in which nothing on the table moved
    since the last frame read in full gets that frame's readings again, at the cost of a
    comparison of two small grey copies (:class:`~firmware_interfaces.camera.change.ChangeDetector`);
    ``frames_read`` and ``frames_reused`` count both kinds."""

    def __init__(self, calibration: Calibration, layout: Layout, threshold: float = DEFAULT_THRESHOLD,
                 size_tolerance: float = 0.15, reuse_unchanged: bool = True, second_pass: bool = True):
        self.calibration = calibration
        self.layout = layout
        self.threshold = threshold
        self.finder = CardFinder(calibration.table, layout, size_tolerance, calibration.printed,
                                 calibration.empty_table)
        # the finder's coarse view is about 4 times cheaper; where it leaves a card unread, the
        # table around it is searched again at the calibration's own resolution (see _recognize)
        self.fine_finder = CardFinder(calibration.table, layout, size_tolerance, calibration.printed,
                                      calibration.empty_table, px_per_mm=CALIBRATION_PX_PER_MM) \
            if second_pass else None
        self.change = ChangeDetector(calibration.table, (layout.width_mm, layout.height_mm)) if reuse_unchanged \
            else None
        self._last: list[CardReading] = []
        self._gray_frame: tuple[np.ndarray, np.ndarray] | None = None
        # while a frame is read, what was measured and judged of each card picture (by its id;
        # see _CardMemo): a card is often judged again on another route
        self._card_memos: dict[int, _CardMemo] | None = None
        # while the frame as taken is read, the pip cards read but for a pip their index could
        # not rule out (code, outline as read; see _passes): faces that still show its smear
        self._pip_doubts: list[tuple[str, np.ndarray]] | None = None
        # what a doubtful read must lead its suit twin by: more on a frame with its smear undone
        self._twin_lead = TWIN_LEAD
        # while a card glare burnt in part, left unread, is looked at again on the frame with its
        # smear undone (see _burnt_pips_unsmeared)
        self._burnt_unsmeared = False
        self.frames_read = 0
        self.frames_reused = 0

    def recognize(self, frame: np.ndarray) -> list[CardReading]:
        """Every card on the table in ``frame`` (BGR), read or marked as a no-read."""
        frame = as_bgr(frame)
        if self.change is not None and self.change.unchanged(frame):
            self.frames_reused += 1
            return list(self._last)
        with one_blas_thread():
            self._card_memos = {}
            self._pip_doubts = []
            try:
                readings = self._recognize(frame)
            finally:
                self._gray_frame = None
                self._card_memos = None
                self._pip_doubts = None
        self.frames_read += 1
        if self.change is not None:
            self.change.remember(frame)
        self._last = readings
        return list(readings)

    def _gray(self, frame: np.ndarray) -> np.ndarray:
        """``frame`` in grey, converted once a frame: every alignment samples it (0.3 ms at
        720p, 0.6 ms at 1080p, each time)."""
        if self._gray_frame is None or self._gray_frame[0] is not frame:
            self._gray_frame = (frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        return self._gray_frame[1]

    def _read(self, frame: np.ndarray, outlines: list[np.ndarray], quick: bool = False,
              slot: Slot | None = None, fitted_only: bool = False) -> tuple[str | None, float, np.ndarray]:
        """Read a card; returns (code or None, confidence, corners as read). ``quick``: only a
        sure read (below: on the finder's own outline, on the refined one, or on another of
        the finder's outlines if it passes a doubtful read's tests, :meth:`_sure_elsewhere`,
        or on the likeliest outline aligned to its face, :meth:`_quick_aligned`), nothing
        more (None otherwise).

        A read far past the model's margin limit (:data:`SURE_MARGIN`, :meth:`_sure`) on the
        finder's own outline stands when a corner index reads the same code
        (:func:`_index_confirms`), or, in the first pass (``quick``), when it also passes a
        doubtful read's tests that need no more reads (:meth:`_plainly_sure`). Else the deck
        model reads the card from that outline refined and from the finder's other outlines
        (other masks cut the card a little differently). A sure read on the refined outline
        stands; on one with sides placed from the others or fitted on little beside the table's
        print (``RefinedOutline``), only when a corner index confirms it. Where the refinement
        found no edge at all on a side (not even the print's), or none to move the outline to,
        the finder's own sure read stands as a refined one (the refined outline is then read
        once). A sure read on another of the finder's outlines stands if it passes a doubtful
        read's tests (:meth:`_sure_elsewhere`). Otherwise the card is looked at again around its most
        card-like outline, shifted and scaled a little (:func:`_nudged`), and the view nearest
        to a card is read: it must be clear, lie about as near its card as 97 % of the held-out
        views did (:data:`NEAR_SLACK`; a misaligned view can be read wrong at a clear margin,
        but it lies far), be twice past the margin limit when the
        runner-up is its suit twin or its pip rival (:data:`TWIN_MARGIN`; against a pip or two
        more, its clearer corner index must favour it too, :data:`INDEX_LEAD`, and no corner index may
        name another card, unless the read is far past the limit: :data:`INDEX_OVERRULED`),
        look more like its card than like its suit twin (:data:`TWIN_LEAD`; a sure read too),
        leave no ink on the card its face does not explain if it is a pip card
        (:meth:`_ink_explained`; a sure read too, where its runner-up has a pip or two more),
        on a card burnt white nearly all over, show every pip of its face (:meth:`_face_shows`;
        a sure read too), no other view of the second look
        may lie that near another card, the templates' own read (a different method) must give the
        same rank (:func:`same_rank`), and no outline may have read another code clearly; a
        read whose runner-up is its suit twin does not stand on this look at all (its view may
        lie off the card), but may on an aligned outline below (the fits' own second look,
        :meth:`_fitted_read`, still takes one: asking the same of it lost a right read of our
        sets, a 7H no alignment placed; docs/camera.md, session 52).
        Still doubtful, the outline is aligned to the likeliest face (:func:`align_to_face`),
        and so is the layout's card in the middle of ``slot`` (the slot the card lies in), and
        an aligned outline of a card's shape (``CardFinder.card_shaped``; from the slot, in the
        same slot) is read under the same tests, except that the views that must not lie near
        another card are those around the aligned outline (the second look's lay around an
        outline that may have been off: a motion-blurred 9C's lay near 9S too, its aligned
        ones near 9C alone). Still doubtful, the same second look is taken around card-sized
        rectangles fitted around the outline and in ``slot`` (``CardFinder.fit_cards``,
        :meth:`_fitted_read`: a found outline can take in the printed line a turned card lies
        against, or lie a centimetre off), and those fits are aligned as above. Still
        doubtful, the print is looked for on a wider grid around
        the outline (:func:`_spread`) and the view nearest to a card aligned to that card's
        face; then the layout's card in ``slot`` is aligned to the faces the templates rank
        likeliest there (:meth:`_template_starts`); last of the alignments, outlines the finder
        cuts out around the card with the table's print kept in (``CardFinder.cards_over_print``:
        a card over its slot's white lines, its paper like theirs), each to the face it reads as
        (those are not used for the index reads below). Where a view of the card
        shows a burnt-out highlight, a start that does not align is aligned again under glare
        (:func:`align_under_glare`; an outline placed on the print glare left alone is not read
        whole). A card glare has burnt out in part is then read from one corner index alone
        (:meth:`_index_read`), from the aligned outlines first; last, a card under a veil of glare
        from its corner indexes where they name the code the whole card reads (:meth:`_agreeing_read`).
        A card the finder only fitted (``fitted_only``: ``FoundCard.fitted``, reported only if
        read) goes no further than the fits' alignment unless one of the finder's views of it
        shows a burnt-out highlight (``glare`` below).
        Anything else is a no-read: a read must not hang on where the card's edge was cut."""
        templates = self.calibration.templates
        model = templates.model
        limit = self.threshold * model.min_margin
        found_card = warp_card(frame, outlines[0])
        m = model.read(found_card)
        found = (m, outlines[0], found_card)
        # whether this read is sure is asked only where the answer is used (it can cost an
        # index search): here with an index confirming it, below where the refinement did not
        # move the outline or found no side, and among the finder's outlines when the refined
        # outline's read is not sure (for most cards the refined read stands and it is never asked)
        if _index_confirms(m) and self._sure(m, found_card, limit):
            # sure on the finder's own outline, and a corner index reads the same code: the
            # refinement could only confirm it
            return m.code, _confidence(m.margin, model.min_margin), _as_read(outlines[0], m.flipped)
        if quick and self._sure(m, found_card, limit) and self._plainly_sure(m, found_card, limit):
            # sure there with no corner index past the index model's own limit (a 720p card's
            # small indexes seldom are), but passing a doubtful read's tests that need no more
            # reads: the refinement and a second read would confirm it (docs/camera.md, session 62)
            return m.code, _confidence(m.margin, model.min_margin), _as_read(outlines[0], m.flipped)
        refined, placed, unseen, beside_print = refine_outline(frame, outlines[0], self.layout.card_mm,
                                                               empty=self.finder.empty_in_patch)
        unmoved = np.array_equal(refined, outlines[0])
        if (unseen or (unmoved and not beside_print)) and self._sure(m, found_card, limit):
            # the refinement found no edge on a side, not even the print's (motion blur, glare),
            # or none to move the outline to: a sure read on the finder's own outline stands as
            # on any refined outline (asking it a doubtful read's tests as well cost held-out
            # 720p frames up to 15 ms and one read, and kept no wrong read out: docs/camera.md,
            # session 38). A side whose only edge was the print's does not count: there the
            # outline would have moved onto the print, and a 5S under glare read 4S on the
            # finder's own outline, unconfirmed, was reported so (session 40)
            return m.code, _confidence(m.margin, model.min_margin), _as_read(outlines[0], m.flipped)
        if unmoved:
            reads = [found]
        else:
            card = warp_card(frame, refined)
            m = model.read(card)
            # an outline with sides placed from the others, or fitted on little beside the
            # print, is trusted as the finder's own is: when a corner index confirms the read
            if self._sure(m, card, limit) and (not (placed or beside_print) or _index_confirms(m)):
                return m.code, _confidence(m.margin, model.min_margin), _as_read(refined, m.flipped)
            reads = [(m, refined, card)]
        for corners in outlines:
            same = next((r for r in (found, *reads) if np.array_equal(corners, r[1])), None)
            if same is not None:
                reads.append(same)  # the same view, the same read (two masks often cut the same outline)
            else:
                card = warp_card(frame, corners)
                reads.append((model.read(card), corners, card))
        # sure on another of the finder's outlines: no need of a second look (on the second
        # pass's finer outlines too, where it read 10 of the 39 cards held-out tigullio's
        # timing frames look at in full, each as its second look did)
        # the codes some outline reads clearly: a doubtful read must be one of them, or none
        clear_elsewhere = {r.code for r, _, _ in reads if r.accepted and r.margin >= limit}
        sure = self._sure_elsewhere(reads, limit, clear_elsewhere)
        if sure is not None:
            m, corners, _ = sure
            return m.code, _confidence(m.margin, model.min_margin), _as_read(corners, m.flipped)
        nearest = min(reads, key=lambda r: r[0].distance)
        if quick:
            aligned_read = self._quick_aligned(frame, nearest, limit, clear_elsewhere)
            if aligned_read is not None:
                return aligned_read
            # not sure on any outline, nor aligned: the card gets its full read in the second pass
            return None, 0.0, _as_read(reads[0][1], reads[0][0].flipped)
        m0, c0, card0 = nearest
        m, card, corners, near_elsewhere = self._second_look(frame, (m0, card0, c0), _as_read(c0, m0.flipped))
        as_read = _as_read(corners, m.flipped) if m is not m0 else _as_read(c0, m0.flipped)
        # a read against its suit twin stands only on an outline aligned to the card's print
        # (below; a blurred 9C seen a few mm off read 9S past every test: docs/camera.md, session 52)
        if not suit_twins(m.code, m.runner_up) and self._passes(m, card, limit, clear_elsewhere, near_elsewhere,
                                                                as_read=as_read):
            return m.code, _confidence(m.margin, model.min_margin), as_read
        # a third look: the outline moved until the card's print lies where the likeliest
        # face has it (align_to_face), read again under the same tests
        starts = [(as_read, m.code)]
        if slot is not None:
            # a found outline can be too far off for the alignment to reach the card (half a
            # card: two outlines joined, glare taken for paper); the card then still lies in
            # its slot, within the dealer's placing of it
            for turned in SLOT_TURNS:
                in_slot = self.finder.slot_outline(slot, turned)
                ms = model.read(warp_card(frame, in_slot))
                starts.append((_as_read(in_slot, ms.flipped), ms.code))
        # an outline larger than a card (joined to a line beside it): the card in each corner
        for in_corner in self.finder.cards_within(as_read):
            mc = model.read(warp_card(frame, in_corner))
            starts.append((_as_read(in_corner, mc.flipped), mc.code))
        aligned: list[tuple[ModelReading, np.ndarray, np.ndarray]] = []
        # a start that does not align is aligned again under glare only where a view of the
        # card shows a burnt-out highlight, if a small one (an over-exposed card clips all its
        # paper: no glare)
        glare = any(burnt_out(card, GLARE_SHARE) is not None for _, _, card in reads)
        read = self._aligned_read(frame, starts, as_read, slot, limit, clear_elsewhere, tried=aligned,
                                  under_glare=glare)
        if read is None:
            # where a card's border around the outline or in its slot says a card lies: the
            # fits are coarse and cost a search each, so they come after the alignments from the
            # outline, slot and corners (on held-out tigullio's 720p timing frames the fits read
            # 3 of the 20 cards the second look left; with the alignments first the same cards
            # were read, none by the fits, session 43); their second look, then their alignment
            fits = self.finder.fit_cards(frame, reads[0][1], slot)
            read = self._fitted_read(frame, fits, limit, clear_elsewhere)
            if read is None:
                fit_starts = []
                for fit in fits:
                    mf = model.read(warp_card(frame, fit))
                    fit_starts.append((_as_read(fit, mf.flipped), mf.code))
                read = self._aligned_read(frame, fit_starts, as_read, slot, limit, clear_elsewhere, tried=aligned,
                                          under_glare=glare)
            if read is None and fitted_only and not glare:
                # a card the finder only fitted (reported only if read), with no burnt-out
                # highlight in any view of it, goes no further than its fits' alignment: a card a
                # dealer's hand covers is such a fit frame after frame, and the routes below cost
                # it most of the 35 ms session 48 measured, each time, to read nothing. The
                # fits' alignment is kept: a card under a veil of glare that lifts the felt around
                # it as much as its paper is cut out by no mask, and its slot's fit can lie inside
                # it, its index cut off (an independent scene's TH, session 67)
                return None, 0.0, as_read
        if read is None:
            # last, for a card whose every start read another face (an outline a card's size but
            # 5-7 mm off: the slot's own fit under glare): its print looked for on a wider grid
            # around the outline, and the view nearest to a card aligned to that card's face
            # (that view may still lie far from any card: the alignment and the tests judge it)
            views = [(model.read(warp_card(frame, c)), c) for c in _spread(as_read)]
            if views:
                r, c = min(views, key=lambda rc: rc[0].distance)
                read = self._aligned_read(frame, [(_as_read(c, r.flipped), r.code)], as_read, slot, limit,
                                          clear_elsewhere, WIDE_SEARCH_VETO_MARGIN, tried=aligned,
                                          under_glare=glare)
        if read is None and slot is not None:
            read = self._aligned_read(frame, self._template_starts(frame, slot, starts), as_read, slot, limit,
                                      clear_elsewhere, tried=aligned, under_glare=glare)
        if read is None:
            # a card over its slot's white lines, its paper like theirs: outlines cut out with the
            # print kept in (in the light the search of this frame found), aligned to the faces they
            # read; not kept for the index reads below, which no such outline was measured for
            over_print = []
            centre = self.finder.to_table(as_read.mean(axis=0))
            for corners in self.finder.cards_over_print(frame, centre, self.finder.surroundings):
                mp = model.read(warp_card(frame, corners))
                over_print.append((_as_read(corners, mp.flipped), mp.code))
            read = self._aligned_read(frame, over_print, as_read, slot, limit, clear_elsewhere, under_glare=glare)
        if read is None:
            # the aligned outlines first: they lie on the card's own print
            read = self._index_read(frame, aligned + reads, as_read, clear_elsewhere)
        if read is None:
            read = self._agreeing_read(aligned + reads, clear_elsewhere)
        return read if read is not None else (None, 0.0, as_read)

    def _template_starts(self, frame: np.ndarray, slot: Slot,
                         tried: list[tuple[np.ndarray, str]]) -> list[tuple[np.ndarray, str]]:
        """The alignment's starts before the last (the print-kept outlines): the layout's card
        in ``slot`` with the faces the templates rank likeliest there (:data:`TEMPLATE_FACES`,
        :meth:`calibration.templates.CardTemplates.likeliest`), each the way up they rank it,
        but for a face already ``tried`` from that outline the same way up. The deck model
        reads a view several millimetres off as almost anything (a KC over its slot's white
        lines, 8-24 px off, read TD, 6S, TC: nothing to align to), while the templates search
        the corner indexes over shifts and often rank the card among their first three (2nd
        to 6th over the views measured); an alignment to a face of its likeness (KS for KC)
        still lands on the card, whose aligned read then passes every test or not."""
        in_slot = self.finder.slot_outline(slot, 0.0)
        ways = {turned: _as_read(in_slot, turned) for turned in (False, True)}
        done = {(code, turned) for corners, code in tried for turned in (False, True)
                if np.array_equal(corners, ways[turned])}
        card = warp_card(frame, in_slot)
        return [(ways[turned], code) for code, turned in self.calibration.templates.likeliest(card, TEMPLATE_FACES)
                if (code, turned) not in done]

    def _sure(self, m: ModelReading, card: np.ndarray, limit: float) -> bool:
        """Whether the read ``m`` of ``card`` stands without a second look: far past the
        margin limit (:data:`SURE_MARGIN`) and not far from its card (:data:`SURE_NEAR`: a
        card half under a hand is), more like its card than like its suit twin
        (:data:`TWIN_LEAD`), no corner index naming another code (unless the read is beyond
        its doubt), no index hidden, the face showing on a card burnt nearly all over
        (:meth:`_face_shows`), and where the runner-up is the same suit with a pip or two
        more (:func:`pips_hidden`), no ink on the card its face does not explain
        (:meth:`_ink_explained`) and a corner index not favouring the runner-up
        (:data:`SURE_INDEX_LEAD`); short of its indexes' doubt, on a pip card glare burnt in part
        a corner index not favouring the card with a pip more (:meth:`_no_pips_hidden`), and no
        read of a burnt card left unread, on the frame with its smear undone, that no index
        confirms (:meth:`_burnt_pips_unsmeared`). Asked again of the same read, card and limit
        (and that look) while a frame is read, it answers from memory (:meth:`_judged_sure`
        judges)."""
        memo = self._card_memo(card)
        if memo is None:
            return self._judged_sure(m, card, limit)
        key = (id(m), limit, self._burnt_unsmeared)
        known = memo.sure.get(key)
        if known is not None and known[0] is m:
            return known[1]  # asked again of the same read (the finder's own, among its other outlines)
        sure = self._judged_sure(m, card, limit)
        memo.sure[key] = (m, sure)
        return sure

    def _judged_sure(self, m: ModelReading, card: np.ndarray, limit: float) -> bool:
        """The judgement :meth:`_sure` describes, made afresh (no memory): pure but for the
        per-code caches of face ink it fills, and the look it is made in (``_burnt_unsmeared``).
        Short of its indexes' doubt, a sure read of a pip card glare burnt in part is also asked
        :meth:`_no_pips_hidden` and :meth:`_burnt_pips_unsmeared`, whatever its runner-up (a
        held-out tigullio 6C, its two middle pips burnt, read 4C 7.3 times past the margin limit
        with 4S the runner-up, its clearer index favouring 5C by 0.007; session 65)."""
        templates = self.calibration.templates
        model = templates.model
        beyond_doubt = _beyond_index_doubt(model, m, limit)
        return bool(m.accepted and m.margin >= SURE_MARGIN * limit and m.twin_lead > TWIN_LEAD
                    and m.distance <= SURE_NEAR * model.near_limit(m.code)
                    and (beyond_doubt or not model.index_names_another(m))
                    and (beyond_doubt or (not self._burnt_pips_unsmeared(m)
                                          and self._no_pips_hidden(m, card, burnt_only=True)))
                    and not _index_covered(model, m, card)
                    and self._face_shows(m, card)
                    and (not pips_hidden(m.code, m.runner_up)
                         or (self._ink_explained(m, card)
                             and self._index_lead(card, m.code, m.runner_up) > SURE_INDEX_LEAD)))

    def _plainly_sure(self, m: ModelReading, card: np.ndarray, limit: float) -> bool:
        """Whether a sure read on the finder's own outline (:meth:`_sure`) that no corner index
        confirms (:func:`_index_confirms`) stands there in the first pass, unrefined. The
        finder's outline may lie a few px off the card, and the reads that was not safe for
        were faces that lost pips (a 5S read 4S, a burnt 3S read 2S): glare, a veil of light
        or anything paper-white over a pip leaves the face of the card with a pip or two fewer.
        So the read must lie near its card (:meth:`_plausible`; its margin and twin lead
        :meth:`_sure` asked already); its corner indexes, read however unclearly, must lie
        nearest to its code at one corner at least and to a card of its suit with a pip or two
        more at neither (:func:`pips_hidden`); a pip card's ink must all be its face's
        (:meth:`_ink_explained`); and the clearer corner index must favour a pip card over the
        cards of its suit with one and two pips more (:data:`INDEX_LEAD`, templates' NCC),
        burnt or not: a review found a held-out 5H, its middle pip under a paper-white patch
        and its outline 8.6 px off, read 4H 4 times past the limit with one index reading 4H
        at margin 0.16 (session 62).

        A read beyond its indexes' doubt (:data:`INDEX_OVERRULED` times past the margin limit,
        within its card's near limit: :func:`_beyond_index_doubt`) is not asked the last two
        (an index nearest to a card with a pip or two more, the clearer index's lead), as a
        doubtful read beyond it is not (:meth:`_passes`): the pip cards seen read wrong with a
        pip or two fewer lay at most 9.1 times past the limit. It must still pass the rest, an
        index lying nearest to its code among them, and :meth:`_sure` has asked the index's lead
        over a runner-up with a pip or two more. Refined, such a read is nearly always sure
        again and stands unasked as well; asking it the templates' own read of its rank
        (:func:`same_rank`, as a doubtful read is) cost the median timing frame the 1.9 ms the
        exit saves (docs/camera.md, session 65)."""
        if not self._plausible(m, limit, {m.code}):
            return False
        if m.indexes is None or not any(r.code == m.code for r in m.indexes):
            return False
        beyond_doubt = _beyond_index_doubt(self.calibration.templates.model, m, limit)
        if not beyond_doubt and any(pips_hidden(m.code, r.code) for r in m.indexes):
            return False
        if not self._ink_explained(m, card):
            return False
        if beyond_doubt:
            return True
        rivals = [code for code in CODES if pips_hidden(m.code, code)]
        return all(lead > INDEX_LEAD for lead in self._index_leads(card, m.code, rivals))

    def _quick_aligned(self, frame: np.ndarray, nearest: tuple[ModelReading, np.ndarray, np.ndarray],
                       limit: float, clear_elsewhere: set[str]) -> tuple[str, float, np.ndarray] | None:
        """In the first pass, a card not sure on any of the finder's outlines: the outline
        that read nearest to a card (``nearest``: read, outline, card), aligned to that card's face
        (:func:`align_to_face`, about 5 ms at 720p), read again; the read stands when it is
        sure (:meth:`_sure`), passes a doubtful read's cheap tests (:meth:`_plausible`: near
        its card, clear of its suit twin and pip rival, no outline reading another code
        clearly: ``clear_elsewhere``) and a corner index confirms it or both lie nearest to its
        code (:func:`_indexes_name`, each as near as 97 % of the index model's held-out views
        lay to theirs, however unclearly).
        None otherwise: the card gets its full read in the second pass.

        A card over its slot's white line shows no edge there, and its outline comes out
        clipped at the line, mm off; aligned to its print it reads sure, but held-out
        tigullio's small indexes at 720p read their code unclearly (below the index model's
        own margin limit), so confirming by one index alone left most such cards to the
        second pass. The second look's views around the outline and the templates' read,
        which a full read's alignment is also asked, cost 10-20 ms more a card here: more
        than the finer search they would spare (docs/camera.md, sessions 49 and 50)."""
        model = self.calibration.templates.model
        m0, c0, _ = nearest
        aligned = align_to_face(self._gray(frame), _as_read(c0, m0.flipped), self.calibration.templates.faces[m0.code])
        if aligned is None or not self.finder.card_shaped(aligned):
            return None
        card = warp_card(frame, aligned)
        m = model.read(card)
        named = _index_confirms(m) or (model.index is not None and _indexes_name(m, model.index.near_distance))
        if named and self._sure(m, card, limit) and self._plausible(m, limit, clear_elsewhere):
            return m.code, _confidence(m.margin, model.min_margin), _as_read(aligned, m.flipped)
        return None

    def _sure_elsewhere(self, reads: list[tuple[ModelReading, np.ndarray, np.ndarray]], limit: float,
                        clear_elsewhere: set[str]) -> tuple[ModelReading, np.ndarray, np.ndarray] | None:
        """Of the finder's own outlines (``reads[1:]``, in the finder's order; ``reads[0]``, the
        refined outline's, was not taken: not sure, or not confirmed), the first read that is
        sure (:meth:`_sure`), taken only if it also passes a doubtful read's tests
        (:meth:`_passes`: no outline read another code clearly, against a pip or two more the index favours
        it, the templates give its rank, its face explains the card's ink; the nudged views'
        test is not made, there are none; ``clear_elsewhere``: the codes some outline reads
        clearly); else None. Other masks cut a card differently: one took in a printed line beside the
        card, another stopped at it. Without the second tests a held-out design's 5S, its
        middle pip under glare, was read 4S from such an outline (3.8 times past the margin
        limit, its indexes not clear enough to veto it)."""
        for m, corners, card in reads[1:]:
            if self._sure(m, card, limit):
                passes = self._passes(m, card, limit, clear_elsewhere, set(), as_read=_as_read(corners, m.flipped))
                return (m, corners, card) if passes else None
        return None

    def _second_look(self, frame: np.ndarray, first: tuple[ModelReading, np.ndarray, np.ndarray],
                     nudge_from: np.ndarray) -> tuple[ModelReading, np.ndarray, np.ndarray, set[str]]:
        """Of ``first`` (a read, its card, its outline) and the views around ``nudge_from``
        (:func:`_nudged`), the one nearest to a card (read, card, outline), and the codes every
        view lying near a card lies near: each of those must be the read's own (a card smeared
        by motion blur read 7C as 7S from an outline 10 px off, while nudged views of it lay
        near 7C; measured cost: 6 correct reads in 1,344)."""
        model = self.calibration.templates.model
        tries = [first]
        for corners in _nudged(nudge_from):
            card = warp_card(frame, corners)
            tries.append((model.read(card), card, corners))
        m, card, corners = min(tries, key=lambda t: t[0].distance)
        near = {t[0].code for t in tries if t[0].distance <= model.near_limit(t[0].code)}
        return m, card, corners, near

    def _fitted_read(self, frame: np.ndarray, fitted: list[np.ndarray], limit: float,
                     clear_elsewhere: set[str]) -> tuple[str, float, np.ndarray] | None:
        """The second look (:meth:`_second_look`) around each of the card-sized outlines
        ``fitted`` (``CardFinder.fit_cards``; coarse, so refined first), its read passing
        :meth:`_passes`; None when no fit gives such a read."""
        model = self.calibration.templates.model
        for fit in fitted:
            refined = refine_outline(frame, fit, self.layout.card_mm, empty=self.finder.empty_in_patch).corners
            card = warp_card(frame, refined)
            m, card, corners, near = self._second_look(frame, (model.read(card), card, refined), refined)
            if self._passes(m, card, limit, clear_elsewhere, near, as_read=_as_read(corners, m.flipped)):
                return m.code, _confidence(m.margin, model.min_margin), _as_read(corners, m.flipped)
        return None

    def _index_read(self, frame: np.ndarray, reads: list[tuple[ModelReading, np.ndarray, np.ndarray]],
                    as_read: np.ndarray, clear_elsewhere: set[str]) -> tuple[str, float, np.ndarray] | None:
        """A card glare has burnt out in part, read from one corner index alone.

        First from the first of ``reads`` (outlines of the card, with the deck model's read of
        each: those aligned to its print, then the found ones, best first) that passes
        :meth:`_index_vote`. Failing that, when one of them
        shows a burnt-out highlight (the outline may have been pulled into the glare pool,
        where the card's edge is lost), from views around ``as_read`` (:func:`_nudged`,
        :func:`_spread`): read only if at least :data:`INDEX_VOTES` of them pass for the same
        code and none for another. In either case no outline may have read another code
        clearly, and no view reaching a corner marker is read (``CardFinder.on_marker``).
        None when nothing is read."""
        model = self.calibration.templates.model
        if model.index is None:
            return None
        burnt_seen = False
        for m, corners, card in reads:
            burnt = burnt_out(card)
            if burnt is None or self.finder.on_marker(corners):
                continue
            burnt_seen = True
            code = self._index_vote(m, card, burnt)
            if code is not None and clear_elsewhere <= {code}:
                return code, INDEX_CONFIDENCE, _as_read(corners, m.flipped)
        if not burnt_seen:
            return None
        votes: list[tuple[str, ModelReading, np.ndarray]] = []
        for corners in _nudged(as_read) + _spread(as_read):
            if self.finder.on_marker(corners):
                continue  # its white zone would pass for glare, its modules for an index
            card = warp_card(frame, corners)
            burnt = burnt_out(card)
            if burnt is None:
                continue
            m = model.read(card)
            code = self._index_vote(m, card, burnt)
            if code is not None:
                votes.append((code, m, corners))
        codes = {code for code, _, _ in votes}
        if len(codes) != 1 or len(votes) < INDEX_VOTES or not clear_elsewhere <= codes:
            return None
        code, m, corners = votes[0]
        return code, INDEX_CONFIDENCE, _as_read(corners, m.flipped)

    def _agreeing_read(self, reads: list[tuple[ModelReading, np.ndarray, np.ndarray]],
                       clear_elsewhere: set[str]) -> tuple[str, float, np.ndarray] | None:
        """A card under a veil of glare (its ink lifted toward its paper, not burnt out), read
        where both its corner indexes name the code the whole card reads, each near an index
        (:data:`AGREEING_INDEX_NEAR`) and at least :data:`AGREEING_INDEX_SHARE` of the index
        model's margin limit, the face's print shows all over the card, faint or not, and
        nothing darker than paper lies where the face is blank (:func:`print_lost`: a hand
        over the card's middle, both its indexes clear, is no veil), and the read passes the
        tests that need no margin: more like its card than its suit twin, no index hidden,
        the templates' own read of the same rank, the index leading a runner-up with a pip or two more, its face
        explaining the card's ink, no outline reading another code clearly. From the first of
        ``reads`` (aligned outlines first) that does; None otherwise. See
        :data:`AGREEING_INDEX_SHARE` for what was measured."""
        model = self.calibration.templates.model
        templates = self.calibration.templates
        if model.index is None:
            return None
        need = AGREEING_INDEX_SHARE * self.threshold * model.index.min_margin
        near = AGREEING_INDEX_NEAR * model.index.near_distance
        for m, corners, card in reads:
            if m.indexes is None or not clear_elsewhere <= {m.code}:
                continue
            if not _indexes_name(m, near, need):
                continue
            if m.twin_lead <= TWIN_LEAD or model.index_hidden(m) or self.finder.on_marker(corners):
                continue
            # the costlier tests last: the print all over the card, the templates, the ink
            face = templates.faces[m.code]
            if print_lost(card, face[::-1, ::-1] if m.flipped else face) > VEIL_PRINT_LOST:
                continue
            if not (same_rank(templates.best_code(card), m.code)
                    and (not pips_hidden(m.code, m.runner_up)
                         or self._index_lead(card, m.code, m.runner_up) > INDEX_LEAD)
                    and self._ink_explained(m, card)):
                continue
            return m.code, AGREEING_CONFIDENCE, _as_read(corners, m.flipped)
        return None

    def _index_vote(self, m: ModelReading, card: np.ndarray, burnt: np.ndarray) -> str | None:
        """The code one view of a card glare has burnt out (``burnt``: where, see
        :func:`burnt_out`) reads from one corner index alone, or None: that corner less than
        :data:`BURNT_CORNER_SHARE` burnt and read by the index model past its own limit, the
        other corner naming no other code (``DeckModel.index_names_another``), and, where the
        whole card's read ``m`` differs (glare hid its pips), that corner's index matching the
        code's template better than the whole card's read's, and the code's print showing
        around the burnt patch (:func:`print_shows_around_glare`: a bright hand is no glare)."""
        model = self.calibration.templates.model
        if model.index is None or m.indexes is None:
            return None
        need = self.threshold * model.index.min_margin
        corner_burnt = (_corner_share(burnt), _corner_share(burnt[::-1, ::-1]))
        for k, r in enumerate(m.indexes):
            other = m.indexes[1 - k]
            if not (r.accepted and r.margin >= need and corner_burnt[k] < BURNT_CORNER_SHARE):
                continue
            if other.code != r.code and (other.accepted or model.index_names_another(replace(m, code=r.code))):
                continue  # the other corner names another card
            if m.code != r.code and self._index_lead(card, r.code, m.code) <= INDEX_LEAD:
                continue
            if not print_shows_around_glare(card, self.calibration.templates.faces[r.code], burnt):
                continue  # the face's print is hidden beyond the burnt patch: a hand, not glare
            return r.code
        return None

    def _aligned_read(self, frame: np.ndarray, starts: list[tuple[np.ndarray, str]], as_read: np.ndarray,
                      slot: Slot | None, limit: float, clear_elsewhere: set[str],
                      veto_margin: float = INDEX_VETO_MARGIN,
                      tried: list[tuple[ModelReading, np.ndarray, np.ndarray]] | None = None,
                      under_glare: bool = False) -> tuple[str, float, np.ndarray] | None:
        """The first of ``starts`` (outline, the face to align it to) whose outline, aligned to
        that face, is a card's shape in ``slot`` (``as_read``, the card's own outline, may lie
        anywhere) and reads past :meth:`_passes` (with ``veto_margin``); None when none does.
        Every such aligned outline is added to ``tried`` (read, outline, card), for the
        index read of a card glare has burnt out (:meth:`_index_read`). ``under_glare``: a start
        that does not align is aligned again under glare (:func:`align_under_glare`), and an
        outline placed on the print glare left alone serves that index read alone."""
        model = self.calibration.templates.model
        for start, code in starts:
            face = self.calibration.templates.faces[code]
            aligned = align_to_face(self._gray(frame), start, face)
            on_what_shows = False
            if aligned is None and under_glare:
                placed = align_under_glare(self._gray(frame), start, face)
                if placed is not None:
                    aligned, on_what_shows = placed
            if aligned is None or not self.finder.card_shaped(aligned):
                continue
            if start is not as_read and self.layout.slot_at(*self.finder.to_table(aligned.mean(axis=0))) != slot:
                continue  # aligned onto a card in another slot
            card = warp_card(frame, aligned)
            ma = model.read(card)
            if tried is not None:
                tried.append((ma, aligned, card))
            if on_what_shows:
                # placed on the print glare left: a face that lost pips to it reads as another
                # card (a 5S as 4S, 8 times past the margin limit): only a corner index reads it
                continue
            if not self._plausible(ma, limit, clear_elsewhere):
                continue  # fails the cheap tests of _passes: no need to read the views around it
            # the second look's views lay around an outline that may have been off; around the
            # aligned one, its own views say whether the card lies near another code
            near_aligned = {ma.code} | {r.code for r in (model.read(warp_card(frame, c)) for c in _nudged(aligned))
                                        if r.accepted and r.margin >= limit}
            if self._passes(ma, card, limit, clear_elsewhere, near_aligned, veto_margin, _as_read(aligned, ma.flipped)):
                return ma.code, _confidence(ma.margin, model.min_margin), _as_read(aligned, ma.flipped)
        return None

    def _plausible(self, m: ModelReading, limit: float, clear_elsewhere: set[str]) -> bool:
        """The first and cheapest of :meth:`_passes`'s tests, which need no more reads: clear
        enough (twice the limit against a suit twin or a pip rival), near enough its card,
        more like its card than like its suit twin (:data:`TWIN_LEAD`), no outline clearly
        reading another code."""
        model = self.calibration.templates.model
        twin = suit_twins(m.code, m.runner_up) or pip_rivals(m.code, m.runner_up)
        need = limit * (TWIN_MARGIN if twin else 1.0)
        return bool(m.accepted and m.margin >= need and m.distance <= NEAR_SLACK * model.near_limit(m.code)
                    and m.twin_lead > self._twin_lead and clear_elsewhere <= {m.code})

    def _passes(self, m: ModelReading, card: np.ndarray, limit: float, clear_elsewhere: set[str],
                near_elsewhere: set[str], veto_margin: float = INDEX_VETO_MARGIN,
                as_read: np.ndarray | None = None) -> bool:
        """The tests a doubtful card's read must pass (see :meth:`_read`); ``veto_margin``: how
        clearly a corner index must name another code to veto it. While the frame as taken is
        read, a read of a pip card that passes every test but those of a pip hidden
        (:meth:`_no_pips_hidden`, :meth:`_burnt_pips_unsmeared`) is kept, with its outline
        ``as_read``, as the card's pip doubt: its face still shows the frame's smear
        (:meth:`_unsmeared_looks`)."""
        templates = self.calibration.templates
        model = templates.model
        more_pips = pips_hidden(m.code, m.runner_up)
        beyond_doubt = _beyond_index_doubt(model, m, limit)
        if not (self._plausible(m, limit, clear_elsewhere) and near_elsewhere <= {m.code}
                and (beyond_doubt or not model.index_names_another(m, veto_margin))
                and not _index_covered(model, m, card)
                and same_rank(templates.best_code(card), m.code)
                and (not more_pips or beyond_doubt
                     or self._index_lead(card, m.code, m.runner_up) > INDEX_LEAD)):
            return False
        if beyond_doubt or (not self._burnt_pips_unsmeared(m) and self._no_pips_hidden(m, card)):
            return self._ink_explained(m, card) and self._face_shows(m, card)
        if as_read is not None and self._pip_doubts is not None \
                and self._ink_explained(m, card) and self._face_shows(m, card):
            # one doubt a card (the last route's): the smear is a median over cards
            here = self.finder.to_table(as_read.mean(axis=0))
            self._pip_doubts = [(code, at) for code, at in self._pip_doubts
                                if not _same_card(self.finder.to_table(at.mean(axis=0)), here)]
            self._pip_doubts.append((m.code, as_read))
        return False

    def _no_pips_hidden(self, m: ModelReading, card: np.ndarray, burnt_only: bool = False) -> bool:
        """Whether, on a pip card, the clearer corner index favours the read over the card of its
        suit with one pip more (:data:`INDEX_LEAD`), whatever the runner-up: glare and a veil of
        light hide pips, they never add them. A held-out tigullio 5S, its middle pip under a
        glare spot, read 4S with 4C the runner-up (2.06 times past the margin limit), its index
        favouring 5S by 0.034 (a read beyond its indexes' doubt, :data:`INDEX_OVERRULED`, is not
        asked). Two pips more are not asked here (a runner-up with a pip or two more is,
        :data:`INDEX_LEAD`): a tuned-on tigullio 5H, 70 % burnt and read right, had an index
        favouring 7H by 0.015, noise at that size (session 55). True for court cards and tens.

        Every doubtful read of a pip card is asked; with ``burnt_only`` (a sure read) only one
        of a card glare has burnt in part (:func:`burnt_in_patches`). Until session 65 the doubtful
        ones were asked that alone, and a held-out tigullio 5S at 1080p, its middle pip washed
        out under a veil not burnt to white, was read 4S from a fitted outline with 4C the
        runner-up, its clearer index favouring 5S by 0.006."""
        if m.code[0] not in PIPS[:-1] or (burnt_only and not burnt_in_patches(card)):
            return True
        one_more = PIPS[PIPS.index(m.code[0]) + 1] + m.code[1]
        return self._index_lead(card, m.code, one_more) > INDEX_LEAD

    def _burnt_pips_unsmeared(self, m: ModelReading) -> bool:
        """Whether ``m`` is a read of a pip card glare burnt in part (:func:`burnt_in_patches`, in
        the frame as taken) and left unread there (or read only from its agreeing indexes),
        made on the frame with its motion smear undone (:meth:`_unsmeared_looks`), that no
        corner index confirms (:func:`_index_confirms`). Undoing a smear rings along a burnt
        patch's hard edge, and the pips the patch hid are not told from the ringing: a held-out
        tigullio 6C, its two middle pips burnt and the frame smeared 9 px at 1080p, was read 4C
        there past every other test, both its indexes nearest 4C at margins of 0.10 and 0.05,
        its clearer index favouring 4C over 5C by 0.008 (session 65). Such a card stays unread.
        (Whether the card is burnt is asked of the frame as taken: the ringing itself lifts
        paper to burnt white.)"""
        return self._burnt_unsmeared and m.code[0] in PIPS[:-1] and not _index_confirms(m)

    def _face_shows(self, m: ModelReading, card: np.ndarray) -> bool:
        """Whether a card burnt white over :data:`OVER_EXPOSED` of it or more (taken for
        over-exposed, whose ink still shows) shows every pip of the face ``m`` reads it as:
        none of them :data:`HIDDEN_PART` or more under the burnt white (pip cards only; a
        card less burnt is always taken to show it: glare may hide a pip of a right read)."""
        if m.code[0] not in PIPS:
            return True
        burnt = whiteness(card) >= BURNT_WHITE
        if np.count_nonzero(burnt) < OVER_EXPOSED * burnt.size:
            return True
        return most_hidden_part(burnt, _INK_PARTS(self.calibration.templates.faces[m.code]), m.flipped) < HIDDEN_PART

    def _ink_explained(self, m: ModelReading, card: np.ndarray) -> bool:
        """Whether the face ``m`` reads ``card`` as explains the ink on it (pip cards only,
        :data:`UNEXPLAINED_INK`; either way up: a pip card turned reads much as upright, and a
        glared 6H came back turned): a pip glare washed out but left faint is still ink."""
        if m.code[0] not in PIPS:
            return True
        memo = self._card_memo(card)
        known = None if memo is None else memo.ink_explained.get(m.code)
        if known is not None:
            return known
        # the read's own way up first: a right read is then explained at the first slides
        ways = (m.flipped, not m.flipped)
        face_ink = _FACE_INK(self.calibration.templates.faces[m.code])
        explained_here = unexplained_ink(card, face_ink, ways, enough=UNEXPLAINED_INK) <= UNEXPLAINED_INK
        if memo is not None:
            memo.ink_explained[m.code] = explained_here  # (either way up is tried: one answer a code)
        return explained_here

    def _card_memo(self, card: np.ndarray) -> _CardMemo | None:
        """What was measured of the card picture ``card`` while this frame is read (None
        outside :meth:`recognize`): the same picture is judged on several routes."""
        memos = self._card_memos
        if memos is None:
            return None
        memo = memos.get(id(card))
        if memo is None:  # (a memo keeps its card: no other picture can take that id meanwhile)
            memo = memos[id(card)] = _CardMemo(card)
        return memo

    def _index_leads(self, card: np.ndarray, code: str, rivals: list[str]) -> list[float]:
        """``CardTemplates.index_leads`` of ``card``, each lead measured once a frame (a card's
        leads are asked by :meth:`_sure`, :meth:`_plainly_sure` and :meth:`_passes`; its
        corners' shifted patches, most of a lead's cost, made once)."""
        templates = self.calibration.templates
        memo = self._card_memo(card)
        if memo is None:
            return templates.index_leads(card, code, rivals)
        missing = [rival for rival in rivals if (code, rival) not in memo.leads]
        if missing:
            if memo.patches is None:
                memo.patches = templates.corner_patches(card)
            for rival, lead in zip(missing, templates.index_leads(card, code, missing, memo.patches), strict=True):
                memo.leads[(code, rival)] = lead
        return [memo.leads[(code, rival)] for rival in rivals]

    def _index_lead(self, card: np.ndarray, code: str, rival: str) -> float:
        """:meth:`_index_leads` over one rival (``CardTemplates.index_lead`` outside a frame)."""
        if self._card_memos is None:
            return self.calibration.templates.index_lead(card, code, rival)
        return self._index_leads(card, code, [rival])[0]

    def _recognize(self, frame: np.ndarray) -> list[CardReading]:
        # with a second pass, the first reads only what it is sure of (a doubtful card's
        # second and third looks cost several reads and an alignment: they are made on the
        # finer outlines first)
        quick = self.fine_finder is not None
        first = [self._look(frame, self.finder, found, quick=quick) for found in self.finder.find(frame)]
        surroundings = None if self.fine_finder is None else self.finder.surroundings
        if self.fine_finder is None:
            return _one_per_card(self._unsmeared_looks(frame, first))  # every look was in full
        if surroundings is None or not any(look.doubtful for look in first):
            return _one_per_card(first)
        # a card left unread: the table around it is searched again on the finer view, and
        # every card there not read in the first pass is read from the outlines found there
        done = [look for look in first if look.read]
        doubtful = [look for look in first if look.doubtful]
        again: list[_Look] = []
        for found in self.fine_finder.find_near(frame, [look.centre for look in doubtful], surroundings):
            centre = self.fine_finder.to_table(found.outlines[0].mean(axis=0))
            if not any(_same_card(centre, look.centre) for look in done):
                again.append(self._look(frame, self.fine_finder, found, centre))
        done += [look for look in again if look.read]
        # a doubtful card the second pass did not find gets its full read from its first outlines;
        # one it found and could not read stays unread: the coarser outlines are no better (a
        # full read of a 7C's coarse outline, a few mm off, read it 7S)
        for look in doubtful:
            if not any(_same_card(look.centre, other.centre) for other in done + again):
                done.append(self._look(frame, self.finder, look.found, look.centre))
        done += [look for look in again if not look.read]
        return _one_per_card(self._unsmeared_looks(frame, done))

    def _unsmeared_looks(self, frame: np.ndarray, looks: list[_Look]) -> list[_Look]:
        """``looks`` with each card left unread, or read only from its agreeing indexes
        (:meth:`_agreeing_read`), looked at again on the frame with its motion smear undone,
        where the cards read from their faces (not from one corner index, nor from agreeing
        indexes) show one smear (:mod:`firmware_interfaces.camera.smear`), undone at the length
        measured and, for the cards still unread, longer (``smear.LENGTH_TRIES``). A
        look read so replaces the other; a card read from its agreeing indexes that is not is
        left unread:
        a smear makes clubs and spades alike in both corners at once (a harness 7S, smeared
        10 px, read 7C so, read 7S with the smear undone). Where no card was read from its
        face, the smear is measured on the faces read but for a pip their index could not rule
        out (the frame's pip doubts, :meth:`_passes`: a harness frame, smeared and blurred, lost
        all five of its cards when its one such 5S, its index blurred, was refused; session 66),
        else on a card read quickly with a blind guess at it undone (:meth:`_guessed_smear`). A
        card read doubtfully on the frame as taken is checked with the smear undone
        (:meth:`_checked_unsmeared`). Unchanged when every card was read from its face and sure,
        or the frame shows no smear."""
        # the frame's pip doubts, all from the frame as taken: none is kept from here on
        doubts, self._pip_doubts = self._pip_doubts or [], None
        # the unread worth another look (not felt showing through, not a fit on nothing printed)
        again_at = [k for k, look in enumerate(looks) if (not look.read and look.doubtful) or _by_indexes(look)]
        read = [look.reading for look in looks if _read_from_face(look) and look.reading is not None]
        # the doubtful reads made on the frame as taken: checked with the smear undone
        sure = _confidence(SURE_MARGIN * self.threshold, 1.0)
        checked_at = [k for k, look in enumerate(looks) if _read_from_face(look) and look.reading is not None
                      and look.reading.confidence < sure]
        if not again_at and not checked_at:
            return looks
        gray = self._gray(frame)
        boxes = {k: _box(looks[k].found.outlines[0]) for k in again_at + checked_at}
        if not again_at:
            smear = self._measured_smear(gray, read)
            return looks if smear is None else self._checked_unsmeared(frame, looks, checked_at, boxes, smear)
        if read:
            smear = self._measured_smear(gray, read)
            return looks if smear is None else self._checked_unsmeared(
                frame, self._undone_looks(frame, looks, again_at, boxes, smear), checked_at, boxes, smear)
        # no card read from its face: a face read but for a pip its index could not rule out
        # still shows the smear (undone, that index may then rule the pip out); where that reads
        # no card, the smear is guessed blind
        smear = self._smear_of_faces(gray, doubts)
        if smear is not None:
            out = self._undone_looks(frame, looks, again_at, boxes, smear)
            if any(out[k].read for k in again_at):
                return out
        chosen = [(looks[k], boxes[k]) for k in self._likeliest_faces(frame, looks, again_at)]
        smear = self._guessed_smear(frame, gray, [boxes[k] for k in again_at], chosen)
        return looks if smear is None else self._undone_looks(frame, looks, again_at, boxes, smear)

    def _undone_looks(self, frame: np.ndarray, looks: list[_Look], again_at: list[int],
                      boxes: dict[int, tuple[int, int, int, int]], smear: Smear) -> list[_Look]:
        """``looks`` with each of ``again_at`` looked at again on ``frame`` with ``smear`` undone
        around it (``boxes``: px), at the length measured and, for the cards still unread,
        longer; a look read so (from its face) replaces the other, a card read from its
        agreeing indexes that is not is left unread (see :meth:`_unsmeared_looks`)."""
        out = list(looks)
        pending = again_at
        # whether glare burnt each card in part, asked of the frame as taken (see _burnt_pips_unsmeared)
        burnt = {k: burnt_in_patches(warp_card(frame, looks[k].found.outlines[0])) for k in again_at}
        # the measured length is often short (LENGTH_TRIES): a card the smear undone at that
        # length leaves unread is looked at again undone longer
        for share in LENGTH_TRIES:
            if not pending:
                break
            sharp = unsmeared(frame, Smear(smear.length_px * share, smear.angle_deg), [boxes[k] for k in pending])
            still = []
            for k in pending:
                look = looks[k]
                again = self._unsmeared_look(sharp, look, burnt=burnt[k])
                if again.read and not _by_indexes(again):
                    out[k] = again
                else:
                    still.append(k)
            pending = still
        for k in pending:
            if _by_indexes(looks[k]):
                out[k] = _unread(looks[k])
        return out

    def _unsmeared_look(self, sharp: np.ndarray, look: _Look, burnt: bool = False) -> _Look:
        """``look``'s card looked at again on ``sharp``, the frame with a smear undone, where a
        doubtful read must lead its suit twin by :data:`UNSMEARED_TWIN_LEAD`; ``burnt``: the
        card, left unread on the frame as taken (or read from its agreeing indexes alone), was
        burnt in part by glare there (:meth:`_burnt_pips_unsmeared` is asked; a read being
        checked, :meth:`_checked_unsmeared`, is not: a read there only unmakes one)."""
        self._twin_lead = UNSMEARED_TWIN_LEAD
        self._burnt_unsmeared = burnt
        try:
            return self._look(sharp, look.finder, look.found, look.centre)
        finally:
            self._twin_lead = TWIN_LEAD
            self._burnt_unsmeared = False

    def _checked_unsmeared(self, frame: np.ndarray, looks: list[_Look], checked_at: list[int],
                           boxes: dict[int, tuple[int, int, int, int]], smear: Smear) -> list[_Look]:
        """``looks`` with each of ``checked_at`` (doubtful reads made on the frame as taken)
        left unread where, looked at again with the frame's measured ``smear`` undone, the same
        card is read from its face as another code: on a smeared card clubs and spades look
        alike, and a held-out tigullio 9C in a frame smeared 8 px read 9S (2.3 times past the
        margin limit, both its indexes saying 9S) where the smear undone read it 9C (session
        55). A look again that reads nothing, reads from the indexes alone (distrusted on a
        smeared card, see above) or lands on another card changes nothing."""
        if not checked_at:
            return looks
        out = list(looks)
        sharp = unsmeared(frame, smear, [boxes[k] for k in checked_at])
        for k in checked_at:
            look = looks[k]
            again = self._unsmeared_look(sharp, look)
            if not (_read_from_face(again) and again.reading is not None and look.reading is not None):
                continue
            if _same_card(again.reading.centre_mm, look.reading.centre_mm) and again.reading.code != look.reading.code:
                out[k] = _unread(look)
        return out

    def _measured_smear(self, gray: np.ndarray, read: list[CardReading]) -> Smear | None:
        """The frame's smear measured on the cards ``read`` from their faces (``smear.frame_smear``)."""
        return self._smear_of_faces(gray, [(r.code, np.array(r.corners)) for r in read if r.code])

    def _smear_of_faces(self, gray: np.ndarray, faces: list[tuple[str, np.ndarray]]) -> Smear | None:
        """The frame's smear measured on cards of known faces: (code, outline as read) each."""
        smears = [card_smear(gray, self._gray_face(code), corners) for code, corners in faces]
        return frame_smear([s for s in smears if s is not None])

    def _face_distances(self, frame: np.ndarray, looks: list[_Look]) -> list[float]:
        """How far from a face (the deck model's distance) each of ``looks`` lies in ``frame``,
        on its found outline."""
        model = self.calibration.templates.model
        return [model.read(warp_card(frame, look.found.outlines[0])).distance for look in looks]

    def _likeliest_faces(self, frame: np.ndarray, looks: list[_Look], unread: list[int]) -> list[int]:
        """Of the looks ``unread`` (indexes into ``looks``), the :data:`GUESSED_ON` whose found
        outline the deck model reads nearest to a face, nearest first, leaving out those farther
        than :data:`FACE_LIKE` (a card lying face down, its back nothing like a face)."""
        limit = FACE_LIKE * self.calibration.templates.model.max_distance
        distances = self._face_distances(frame, [looks[k] for k in unread])
        near = sorted((d, k) for d, k in zip(distances, unread, strict=True) if d <= limit)
        return [k for _, k in near[:GUESSED_ON]]

    def _guessed_smear(self, frame: np.ndarray, gray: np.ndarray, unread: list[tuple[int, int, int, int]],
                       candidates: list[tuple[_Look, tuple[int, int, int, int]]]) -> Smear | None:
        """The smear of a frame where no card was read from its face, guessed blind on the
        boxes (px) of the cards ``unread`` (``smear.smear_guesses``) and measured on the
        ``candidates`` (looks, and their boxes) read quickly (a sure read only) with a guess
        undone (at each length of ``LENGTH_TRIES``, unless its first try takes every candidate
        farther from a face): the first try under which a card is
        read and measures a smear near the smear tried (:data:`GUESS_AGREES`: a card read as
        the wrong face measures no line, or another) gives it. Only the candidates the try
        brings nearer to a face (:data:`GUESS_NEARER`) are looked at: a wrong guess, or any
        guess on a frame that is not smeared, takes them farther. None when no try does."""
        if not candidates:
            return None
        looks = [look for look, _ in candidates]
        boxes = [box for _, box in candidates]
        before = self._face_distances(frame, looks)
        for guess in smear_guesses(gray, unread):
            for share in LENGTH_TRIES:
                tried = Smear(guess.length_px * share, guess.angle_deg)
                sharp = unsmeared(frame, tried, boxes)
                after = self._face_distances(sharp, looks)
                if all(now >= GUESS_NEARER * was for now, was in zip(after, before, strict=True)):
                    break  # a guess that takes every card farther is not tried longer
                read = []
                for look, was, now in zip(looks, before, after, strict=True):
                    if now >= GUESS_NEARER * was:
                        continue
                    again = self._look(sharp, look.finder, look.found, look.centre, quick=True)
                    if _read_from_face(again):
                        assert again.reading is not None
                        read.append(again.reading)
                measured = self._measured_smear(gray, read) if read else None
                if measured is not None and _smears_agree(measured, tried):
                    return measured
        return None

    def _gray_face(self, code: str) -> np.ndarray:
        """The template face of ``code`` in grey (kept: a smeared frame asks for several)."""
        return _GRAY_FACES(self.calibration.templates.faces[code])

    @staticmethod
    def _empty_felt_inside(frame: np.ndarray, finder: CardFinder, corners: np.ndarray) -> bool:
        """Whether the empty felt still shows inside ``corners``: its grain
        (:data:`FELT_SHOWING`) or, the grain blurred away, its colour (:data:`FELT_UNCHANGED`)."""
        return (finder.felt_showing(frame, corners) >= FELT_SHOWING
                or finder.felt_unchanged(frame, corners) >= FELT_UNCHANGED)

    def _light_alone(self, frame: np.ndarray, corners: np.ndarray) -> bool:
        """Whether an unread outline holds light alone: nothing printed inside it
        (:func:`_nothing_printed`) and no edge on any of its sides (``refine_outline``): a pool
        of glare on the felt (a held-out harness frame's, beside the table's printed corner,
        was reported as a card), not a card glare burnt white, whose edges still step down to
        the felt."""
        if not _nothing_printed(warp_card(frame, corners)):
            return False
        refined = refine_outline(frame, corners, self.layout.card_mm, empty=self.finder.empty_in_patch)
        return refined.sides_unseen == SIDES

    def _look(self, frame: np.ndarray, finder: CardFinder, found: FoundCard,
              centre: tuple[float, float] | None = None, quick: bool = False) -> _Look:
        """Read one card found by ``finder`` (its centre in mm, if known, places it before it is
        read; ``quick``: see :meth:`_read`). A card only fitted into its slot (``found.fitted``)
        that shows the empty felt (:meth:`_empty_felt_inside`) or nothing printed is not read, nor
        looked at again; an unread outline that shows the empty felt or holds light alone
        (:meth:`_light_alone`) is not reported."""
        if found.fitted and (self._empty_felt_inside(frame, finder, found.outlines[0])
                             or _nothing_printed(warp_card(frame, found.outlines[0]))):
            # a rectangle fitted in an empty slot (its printed lines under a pool of glare) that
            # still shows the empty felt, or nothing printed at all, is not read (it is
            # reported only if read, and a full read of it, its alignments and the finer search
            # around it cost 40-120 ms)
            return _Look(None, centre or finder.to_table(found.outlines[0].mean(axis=0)), False, False, found, finder)
        slot = None
        if not quick:
            near = centre or finder.to_table(found.outlines[0].mean(axis=0))
            slot = self.layout.slot_at(*near)
        code, confidence, corners = self._read(frame, found.outlines, quick, slot, found.fitted)
        if code is None and found.fitted:
            # reported only if read
            return _Look(None, centre or finder.to_table(corners.mean(axis=0)), False, True, found, finder)
        if code is None and (self._empty_felt_inside(frame, finder, corners) or self._light_alone(frame, corners)):
            # a card-shaped pool of light (glare in an empty slot between its printed lines)
            # still shows the felt's grain, and an empty slot its colour, which any card, face
            # up or down, hides; a pool of glare on bare felt has no edge
            return _Look(None, centre or finder.to_table(corners.mean(axis=0)), False, False, found, finder)
        at = finder.to_table(corners.mean(axis=0))
        slot = self.layout.slot_at(*at)
        reading = CardReading(
            code=code,
            confidence=float(confidence),
            corners=[(float(x), float(y)) for x, y in corners],
            position=slot.name if slot else None,
            centre_mm=at,
        )
        return _Look(reading, at, code is not None, code is None, found, finder)


@dataclass(frozen=True)
class _Look:
    """One card as one pass of the recogniser saw it: its reading (None: not reported, see
    :meth:`Recognizer._look`), its centre in mm, whether it was read, and whether it is worth
    a second look (unread, and not felt showing through an outline), what was found, and by
    which finder."""

    reading: CardReading | None
    centre: tuple[float, float]
    read: bool
    doubtful: bool
    found: FoundCard
    finder: CardFinder


def _grey_picture(face: np.ndarray) -> np.ndarray:
    return np.asarray(cv2.cvtColor(face, cv2.COLOR_BGR2GRAY))


#: What the recognisers derive of a deck's faces, kept by the face (see ``face_cache``): the
#: ink a card read as the face may show, its ink's parts, its grey picture.
_FACE_INK: FaceCache[np.ndarray] = FaceCache(explained)
_INK_PARTS: FaceCache[InkParts] = FaceCache(ink_parts)
_GRAY_FACES: FaceCache[np.ndarray] = FaceCache(_grey_picture)


@dataclass(eq=False)
class _CardMemo:
    """What was measured of one card picture while a frame is read, kept with the picture
    (its id, the key, stays its own while it is kept): the corners' shifted patches, the
    index leads by (code, rival), whether a code's face explains its ink, and whether a read of
    it is sure (:meth:`Recognizer._sure`; by the read's id and the limit, the read kept so that
    its id stays its own)."""

    card: np.ndarray
    patches: CornerPatches | None = None
    leads: dict[tuple[str, str], float] = field(default_factory=dict)
    ink_explained: dict[str, bool] = field(default_factory=dict)
    sure: dict[tuple[int, float, bool], tuple[ModelReading, bool]] = field(default_factory=dict)


def _box(outline: np.ndarray) -> tuple[int, int, int, int]:
    """The bounding box (x0, y0, x1, y1 in whole px) of an image outline."""
    (x0, y0), (x1, y1) = np.floor(outline.min(axis=0)), np.ceil(outline.max(axis=0))
    return int(x0), int(y0), int(x1), int(y1)


def _smears_agree(measured: Smear, tried: Smear) -> bool:
    """Whether a smear measured on a card read with ``tried`` undone lies near it
    (:data:`GUESS_AGREES`)."""
    return (angle_apart(measured.angle_deg, tried.angle_deg) <= GUESS_AGREES[1]
            and abs(measured.length_px / tried.length_px - 1.0) <= GUESS_AGREES[0])


def _read_from_face(look: _Look) -> bool:
    """Whether ``look`` read its card from the face (not from one corner index, nor from
    agreeing indexes: those reads are reported below :data:`INDEX_CONFIDENCE` or at it)."""
    return (look.read and look.reading is not None and look.reading.code is not None
            and look.reading.confidence > INDEX_CONFIDENCE)


def _by_indexes(look: _Look) -> bool:
    """Whether ``look`` was read from its agreeing corner indexes (:meth:`Recognizer._agreeing_read`:
    the only reads below the confidence of a read at the margin limit)."""
    return look.reading is not None and look.reading.code is not None and look.reading.confidence < INDEX_CONFIDENCE


def _unread(look: _Look) -> _Look:
    """``look`` as a no-read of the same card where it was seen."""
    assert look.reading is not None
    return replace(look, reading=replace(look.reading, code=None, confidence=0.0), read=False, doubtful=True)


def _one_per_card(looks: list[_Look]) -> list[CardReading]:
    """The readings of ``looks``, one per card: a look read from its slot's outline may have
    been aligned onto the card in that slot that another look read already."""
    kept: list[CardReading] = []
    for look in looks:
        r = look.reading
        if r is not None and not any(_same_card(r.centre_mm, k.centre_mm) for k in kept):
            kept.append(r)
    return kept


#: A canonical card whose inside varies by no more than this (grey levels, the 99th percentile
#: of its fine detail: the picture less its blur at 2 px) and is this bright (median grey)
#: shows nothing printed: a pool of glare over an empty slot (measured on a held-out harness
#: frame with glare over five empty slots: detail 1-2, median 212-253), not a card (an ace
#: under the same glare: detail 6, a court card 10; a dim, blurred card is read as before).
NOTHING_PRINTED = 2.0
GLARE_BRIGHT = 200.0
#: Canonical px of the card's edge (and the felt a fit may take in) left out of that test.
PRINT_INSET = 12


def _nothing_printed(card: np.ndarray) -> bool:
    """Whether a canonical card picture shows nothing printed, only bright, smooth light
    (:data:`NOTHING_PRINTED`, :data:`GLARE_BRIGHT`)."""
    inner = cv2.cvtColor(card[PRINT_INSET:-PRINT_INSET, PRINT_INSET:-PRINT_INSET], cv2.COLOR_BGR2GRAY)
    detail = cv2.absdiff(inner, cv2.GaussianBlur(inner, (0, 0), 2.0))
    return bool(float(np.percentile(detail, 99)) <= NOTHING_PRINTED and float(np.median(inner)) >= GLARE_BRIGHT)


def _same_card(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return bool(np.hypot(a[0] - b[0], a[1] - b[1]) < SAME_CARD_MM)


#: A doubtful card is read from one corner index alone (:meth:`Recognizer._index_read`) only
#: when this share of it is burnt out by glare (every channel at least BURNT_WHITE), and only
#: from a corner less than BURNT_CORNER_SHARE burnt.
BURNT_WHITE = 250
BURNT_SHARE = 0.03
BURNT_CORNER_SHARE = 0.3
#: A card burnt out over this share of it or more is taken for over-exposed as a whole
#: (:func:`burnt_out`), not glared: exposure multiplies and clips the paper, not the ink.
#: So the face it reads as must still show: a read of a pip card at least this burnt
#: is refused where one of the read face's pips (:func:`face_ink.ink_parts`) lies
#: HIDDEN_PART or more under burnt white (:meth:`Recognizer._face_shows`). Glare had burnt
#: 82 % of a held-out tigullio 8C, all but its top-left "8" and top two pips, and it read
#: 4C, aligned to that face, 2.7 times past the margin limit: the 4C's bottom pips lay
#: wholly under the burnt white. Of our three burnt-glare sets' reads of pip cards that a
#: sure or a doubtful read's tests passed (937 plain, 927 turned 0.3°), 202 lay at 70 % burnt
#: or more; of their right reads, all but one had no pip more than 7 % under burnt white,
#: and that one (an ornamental 7D, 78 % burnt) had one diamond 50-52 % under it; the wrong
#: 4C had two wholly under it. Below 70 % burnt, right reads of glared cards with a pip
#: wholly burnt are common.
OVER_EXPOSED = 0.75
HIDDEN_PART = 0.8
#: A doubtful card is aligned again under glare (``align_under_glare``) where this share of a
#: view of it is burnt out: its found outline may hold the edge of a glare pool whose middle
#: burnt its print (held-out kde-tigullio, burnt glare: a JC and a TH at 2 %).
GLARE_SHARE = 0.01
#: Views around a burnt-out card that must read the same code from an index, none another.
INDEX_VOTES = 2
#: A frame none of whose cards was read from its face has its smear guessed blind, and read with
#: each guess undone, on at most this many of its unread cards; the smear then measured on a card
#: so read must lie within this share of the length tried and this many degrees of its
#: direction. On the independent harness frames where this read cards (9-10 px smears), the
#: measures lay at 0.82-0.96 of the length tried and 3-5 degrees from it.
GUESSED_ON = 2
GUESS_AGREES = (0.35, 20.0)
#: A card is looked at quickly under a try only where the try brings it this much nearer to a
#: face (the deck model's distance) than it lay: on those harness frames the tries near the
#: drawn smear took a card to 0.63-0.89 of its distance, every other try to 1.01-12 times it
#: (a wrong line smears the picture further), and the longer try lay no nearer than the first.
#: So a guess whose first try takes every card farther is not tried longer. A quick look costs
#: 5-20 ms a card; on a frame that is not smeared (two sharp cards taken, as no card was read)
#: the search cost 270-410 ms looking at every try, 85-170 ms with none looked at, and
#: 40-90 ms with no guess tried longer (undoing a try around two cards costs about 14 ms).
GUESS_NEARER = 0.95
#: Only cards the deck model reads within this share of its acceptance distance are read so:
#: smeared faces of those harness frames lay at 0.09-0.74 of it (the nearest of each frame at
#: 0.16 at most), kde-standard's back at 0.70-0.92; six cards face down cost 490 ms a frame
#: before, 610 with every guess tried on two of them.
FACE_LIKE = 0.6
#: A card read from one index alone is reported at the confidence of a read at the margin limit.
INDEX_CONFIDENCE = 0.5
#: A card read from its agreeing indexes (the whole card short of the margin limit) is reported
#: at this lower confidence.
AGREEING_CONFIDENCE = 0.4
#: A doubtful card is read from its corner indexes (:meth:`Recognizer._agreeing_read`) where
#: both name the code the whole card reads, short of the margin limit (a veil of glare lifts
#: ink toward the paper), each at least this share of the index model's margin limit.
#: ``benchmarks/veiled_indexes.py`` (83,200 views of four designs, two held out, under a veil
#: 40-97 % toward white with blur, noise, motion smear and outlines 2.5 px off): no wrong read
#: at any share from 0.3 to 0.6 under the route's tests; in earlier views with fewer of them
#: wrong reads lay at 0.40 and below (a 3H read 3D by the whole card and both indexes). On the
#: independent harness a 7S smeared 10 px read 7C at 0.31 (a smear makes clubs and spades alike
#: in both corners at once: see :meth:`Recognizer._unsmeared_looks`).
AGREEING_INDEX_SHARE = 0.5
#: An index counts as naming its code only within this many times the index model's near
#: distance (as near as 97 % of held-out index views lay).
AGREEING_INDEX_NEAR = 2.0
#: A card read so may have lost its print (:func:`print_lost`) on at most this share of its
#: printed cells, and of its blank ones. A second review found the first version (correlation
#: 0.3, shares of all cells) fooled by camera noise on a hand: cards 47 % under a light hand or
#: a grey sleeve, both indexes clear, were named (6 of 7 scenes); with these it names none of
#: them and reads as many veiled cards. (An occluder as white as paper, brighter than the
#: paper around it, is not told from a veil: it hides print as glare does.)
VEIL_PRINT_LOST = 0.12
#: print_lost: a printed cell's print shows where its correlation with the face's (the best
#: within PRINT_SHIFT px) reaches this (print under a veil 90 % toward white correlates at
#: 0.71 or more in 99 % of cells); a blank cell is paper where at least this white (paper 1).
PRINT_MATCH = 0.6
BLANK_PAPER = 0.8


#: Burnt white can hide a pip only where it lies in patches: the pip tests of a card glare burnt
#: in part (:func:`burnt_in_patches`) count a burnt pixel only inside a square of this side (px
#: of the canonical card; a pip is about 12) all burnt. Paper an over-exposed frame lifts to
#: just under the clip is burnt in specks by the sensor's noise: a harness 7C (+0.9 stop, noise
#: 3) was 1.8 % burnt so, 0.5 % in such squares, and stayed unread (session 66).
GLARE_PATCH_PX = 5


def burnt_in_patches(card: np.ndarray) -> bool:
    """Whether glare burnt a canonical card white in part, in patches that could hide a pip:
    :data:`GLARE_SHARE` of it or more lies in burnt squares of :data:`GLARE_PATCH_PX`, and less
    than :data:`OVER_EXPOSED` of it is burnt at all (a card over-exposed as a whole, see
    :func:`burnt_out`). What the pip tests of such a card ask (:meth:`Recognizer._no_pips_hidden`,
    :meth:`Recognizer._burnt_pips_unsmeared`)."""
    burnt = (whiteness(card) >= BURNT_WHITE).astype(np.uint8)
    share = np.count_nonzero(burnt) / burnt.size
    if not GLARE_SHARE <= share < OVER_EXPOSED:
        return False  # too little burnt even in specks (most cards), or over-exposed as a whole
    patches = cv2.morphologyEx(burnt, cv2.MORPH_OPEN, np.ones((GLARE_PATCH_PX, GLARE_PATCH_PX), np.uint8))
    return bool(np.count_nonzero(patches) >= GLARE_SHARE * burnt.size)


def burnt_out(card: np.ndarray, least: float = BURNT_SHARE) -> np.ndarray | None:
    """Where a canonical card is burnt out by glare (every channel at least :data:`BURNT_WHITE`),
    when that is at least ``least`` of it and less than three quarters of it (a card
    over-exposed as a whole clips all its paper, not its ink: exposure multiplies, glare adds;
    its pips are all still there); else None."""
    burnt = whiteness(card) >= BURNT_WHITE
    share = np.count_nonzero(burnt) / burnt.size
    return burnt if least <= share < OVER_EXPOSED else None


#: :func:`print_shows_around_glare`: cells (px of the canonical card) whose print is compared,
#: how far (px) from the burnt patch the card's print is looked at, how far (px) a cell's print
#: may lie from where the outline puts it, how much the face's own cell must vary (its
#: whiteness, paper = 1) to count, how much of that the card must keep, the share of cells
#: that may have lost it, and how many cells must be seen at all.
PRINT_CELL = 16
PRINT_CLEAR_OF_BURNT = 4
PRINT_SHIFT = 4
PRINT_VARIES = 0.08
PRINT_KEPT = 0.35
PRINT_LOST_SHARE = 0.25
PRINT_CELLS_SEEN = 3


def _whiteness_on_paper(card: np.ndarray, leave_out: np.ndarray | None = None) -> np.ndarray:
    """A BGR card's whiteness (darkest channel) over its paper's (the level 92 % of it lie at
    or under, ``leave_out`` pixels not counted), blurred a little: 1 is paper, ink is less."""
    white = whiteness(card)
    counted = white if leave_out is None else white[~leave_out]
    level = max(float(np.percentile(counted, 92)), 8.0) if counted.size else 255.0
    return np.asarray(cv2.GaussianBlur(white.astype(np.float32) / level, (0, 0), 2.0))


def _cells(a: np.ndarray) -> np.ndarray:
    """``a`` (a canonical card's size) cut into :data:`PRINT_CELL` squares, a 2 px rim left
    out: (rows, columns, cell, cell)."""
    c = PRINT_CELL
    rows, cols = (a.shape[0] - 4) // c, (a.shape[1] - 4) // c
    return a[2 : 2 + rows * c, 2 : 2 + cols * c].reshape(rows, c, cols, c).swapaxes(1, 2)


def _cell_centres(a: np.ndarray) -> np.ndarray:
    """The values of ``a`` at the centres of :func:`_cells`' squares (rows, columns)."""
    c = PRINT_CELL
    rows, cols = (a.shape[0] - 4) // c, (a.shape[1] - 4) // c
    return a[2 + c // 2 : 2 + rows * c : c, 2 + c // 2 : 2 + cols * c : c]


def print_shows_around_glare(card: np.ndarray, face: np.ndarray, burnt: np.ndarray) -> bool:
    """Whether the print of ``face`` (the code a corner index read) still shows on ``card``
    where it is not burnt out (``burnt``, see :func:`burnt_out`): of the cells where the
    face's print varies and the card is seen clear of the burnt patch (at least
    :data:`PRINT_CELLS_SEEN`), no more than :data:`PRINT_LOST_SHARE` show no print within
    :data:`PRINT_SHIFT` px of where the outline puts it (a view read from one index may lie
    a few px off).

    Glare adds light: short of clipping, the ink still stands out of the paper by as much
    as before. A hand hides: clipped skin passes for a burnt-out highlight, but around it
    the skin hides the print."""
    c = PRINT_CELL
    near = cv2.dilate(burnt.astype(np.uint8), np.ones((2 * PRINT_CLEAR_OF_BURNT + 1,) * 2, np.uint8))
    # how much the card varies in each cell-sized window wholly clear of the burnt patch ...
    white = _whiteness_on_paper(card, near > 0)
    mean = cv2.boxFilter(white, -1, (c, c))
    spread = np.sqrt(np.maximum(cv2.boxFilter(white * white, -1, (c, c)) - mean * mean, 0.0))
    clear = cv2.dilate(near, np.ones((c + 1, c + 1), np.uint8)) == 0
    spread = np.where(clear, spread, 0.0).astype(np.float32)
    # ... and the most of it within PRINT_SHIFT of each cell's centre
    reach = np.ones((2 * PRINT_SHIFT + 1,) * 2, np.uint8)
    card_varies = _cell_centres(cv2.dilate(spread, reach))
    seen = _cell_centres(cv2.dilate(clear.astype(np.uint8), reach)) > 0
    face_varies = _cells(_whiteness_on_paper(face)).std(axis=(2, 3))
    judged = seen & (face_varies >= PRINT_VARIES)
    n = int(np.count_nonzero(judged))
    lost = int(np.count_nonzero(judged & (card_varies < PRINT_KEPT * face_varies)))
    return n >= PRINT_CELLS_SEEN and lost <= PRINT_LOST_SHARE * n


def print_lost(card: np.ndarray, face: np.ndarray) -> float:
    """How much of a canonical ``card`` does not show ``face`` (the same way up), the larger of
    two shares: of the :func:`_cells` where the face's print varies (:data:`PRINT_VARIES`),
    those whose picture correlates with the face's by less than :data:`PRINT_MATCH` at every
    shift within :data:`PRINT_SHIFT` px (2 px apart); of the cells where the face is blank,
    those darker than :data:`BLANK_PAPER` of the card's paper. A veil of glare keeps the print,
    faint (a correlation does not care how faint), and its paper white; a hand hides the print
    (camera noise on skin correlates with a face's print at up to about 0.3) and is darker than
    paper."""
    white = _whiteness_on_paper(card)
    printed = _cells(_whiteness_on_paper(face))
    rows, cols = printed.shape[:2]
    f = printed.reshape(rows, cols, -1)
    varies = f.std(axis=2) >= PRINT_VARIES
    f = f - f.mean(axis=2, keepdims=True)
    best = np.full((rows, cols), -1.0)
    s, (h, w) = PRINT_SHIFT, white.shape
    padded = np.pad(white, s, mode="edge")
    for dy in range(-s, s + 1, 2):
        for dx in range(-s, s + 1, 2):
            g = _cells(padded[s + dy : s + dy + h, s + dx : s + dx + w]).reshape(rows, cols, -1)
            g = g - g.mean(axis=2, keepdims=True)
            match = (g * f).sum(axis=2) / np.sqrt((g * g).sum(axis=2) * (f * f).sum(axis=2) + 1e-9)
            best = np.maximum(best, match)
    level = _cells(white).reshape(rows, cols, -1).mean(axis=2)
    print_gone = int(np.count_nonzero(varies & (best < PRINT_MATCH))) / max(1, int(np.count_nonzero(varies)))
    blank_dark = int(np.count_nonzero(~varies & (level < BLANK_PAPER))) / max(1, int(np.count_nonzero(~varies)))
    return max(print_gone, blank_dark)


def _beyond_index_doubt(model: DeckModel, m: ModelReading, limit: float) -> bool:
    """Whether the read ``m`` is clear and near enough to stand against its corner indexes'
    doubts (see :data:`INDEX_OVERRULED`; a hidden index is no doubt but a hand: it still counts)."""
    return bool(m.accepted and m.margin >= INDEX_OVERRULED * limit and m.distance <= model.near_limit(m.code))


def _index_confirms(m: ModelReading) -> bool:
    """Whether a corner index of the card read as ``m`` reads the same code, past the index
    model's own limits. Without it, a read far past the margin limit on an outline a few px
    off was not safe: the indexes, a little off too, read too unclearly to veto a 5S whose
    middle pip glare hid (read 4S) or a burnt 3S (read 2S) on a held-out design."""
    return m.indexes is not None and any(r.code == m.code and r.accepted for r in m.indexes)


def _indexes_name(m: ModelReading, near: float, least_margin: float = 0.0) -> bool:
    """Whether both corner indexes of the card read as ``m`` lie nearest to its code, each
    within ``near`` of it and at least ``least_margin`` clear (the index model's own distances
    and margins; a margin under the index model's limit is an unclear read): the two corners
    and the whole face, read apart, name the same card."""
    return m.indexes is not None and all(r.code == m.code and r.margin >= least_margin and r.distance <= near
                                         for r in m.indexes)


def _index_covered(model: DeckModel, m: ModelReading, card: np.ndarray) -> bool:
    """Whether a corner index of ``card`` (read as ``m``) is hidden (``DeckModel.index_hidden``)
    by something other than glare: a hand over it."""
    return model.index_hidden(m) and burnt_out(card) is None


def _corner_share(burnt: np.ndarray) -> float:
    """The share of the top-left index corner of a canonical card's ``burnt`` mask that is set."""
    corner = burnt[INDEX_CORNER]
    return float(np.count_nonzero(corner)) / max(1, corner.size)


#: A doubtful card's alignment also starts from the layout's card in its slot, turned so.
SLOT_TURNS = (0.0, -8.0, 8.0)
#: Last, it starts there with this many of the faces the templates rank likeliest.
TEMPLATE_FACES = 3

#: Second look at a doubtful card: shifts (share of the card's width / height) and scales.
NUDGE_SHIFTS = (-0.035, 0.0, 0.035)
NUDGE_SCALES = (0.97, 1.03)


#: The last search for a doubtful card's print: shifts (share of the card's width, height).
SPREAD_SHIFTS = ((-0.1, -0.05, 0.0, 0.05, 0.1), (-0.07, -0.035, 0.0, 0.035, 0.07))


def _spread(corners: np.ndarray) -> list[np.ndarray]:
    """Outlines of ``corners``' size around it on a 5 x 5 grid (:data:`SPREAD_SHIFTS`), in the
    card's own frame, ``corners`` itself left out."""
    w, h = CARD_SIZE
    canon = canonical_corners().astype(np.float64)
    to_image = cv2.getPerspectiveTransform(canon.astype(np.float32), np.asarray(corners, np.float32))
    out = [canon + (dx * w, dy * h) for dx in SPREAD_SHIFTS[0] for dy in SPREAD_SHIFTS[1] if dx or dy]
    return [cv2.perspectiveTransform(c.reshape(-1, 1, 2), to_image).reshape(-1, 2) for c in out]


def _nudged(corners: np.ndarray) -> list[np.ndarray]:
    """Outlines around ``corners`` (TL, TR, BR, BL), shifted and scaled in the card's own frame."""
    w, h = CARD_SIZE
    canon = canonical_corners().astype(np.float64)
    to_image = cv2.getPerspectiveTransform(canon.astype(np.float32), np.asarray(corners, np.float32))
    centre = canon.mean(axis=0)
    out = []
    for dx in NUDGE_SHIFTS:
        for dy in NUDGE_SHIFTS:
            if dx or dy:
                out.append(canon + (dx * w, dy * h))
    out += [centre + (canon - centre) * k for k in NUDGE_SCALES]
    return [cv2.perspectiveTransform(c.reshape(-1, 1, 2), to_image).reshape(-1, 2) for c in out]


def _pips_more(a: str, b: str) -> int | None:
    """How many pips more pip card ``b`` has than ``a`` of the same suit (None: not two pip
    cards of one suit)."""
    if a[1] != b[1] or a[0] not in PIPS or b[0] not in PIPS:
        return None
    return PIPS.index(b[0]) - PIPS.index(a[0])


def pip_neighbours(a: str, b: str) -> bool:
    """Same suit, pip cards one pip apart (4S and 5S): a glare spot that hides a pip makes
    the one look like the other, face and all; their corner indexes still differ."""
    return _pips_more(a, b) in (-1, 1)


def two_pips_hidden(a: str, b: str) -> bool:
    """Whether ``b`` is ``a``'s suit with two pips more (4D and 6D): a pool of glare over the
    middle of a 6D hides its two middle pips, and what is left is a 4D's face."""
    return _pips_more(a, b) == 2


def pips_hidden(a: str, b: str) -> bool:
    """Whether a card read as ``a`` could be ``b`` with one or two of its pips hidden by glare
    (``b``: the same suit, one or two pips more)."""
    return _pips_more(a, b) in (1, 2)


def pip_rivals(a: str, b: str) -> bool:
    """Whether ``a`` and a runner-up ``b`` are pip rivals: one pip apart (:func:`pip_neighbours`)
    or ``b`` with two pips more (:func:`two_pips_hidden`). A read against its pip rival must be
    twice past the margin limit (:data:`TWIN_MARGIN`); where ``b`` has the more pips
    (:func:`pips_hidden`: ``a`` may be ``b``'s face that lost pips to glare), the clearer corner
    index must favour it too (:data:`INDEX_LEAD`)."""
    return pip_neighbours(a, b) or two_pips_hidden(a, b)


def suit_twins(a: str, b: str) -> bool:
    """Same rank, other suit of the same colour: the pair a blurred card is least sure of."""
    return suit_twin(a) == b


def same_rank(a: str, b: str) -> bool:
    """The templates' second opinion is asked for the rank only: measured on the tuned-on
    decks' hard scenes, they named the wrong suit of a clear, correct read (clubs for spades,
    diamonds for spades) in 9 of 10 vetoed cards, and never caught a wrong one."""
    return a[0] == b[0]


def _as_read(corners: np.ndarray, flipped: bool) -> np.ndarray:
    """Corners in the order of the card as read (TL of its face first)."""
    return np.roll(corners, 2, axis=0) if flipped else corners


def _confidence(margin: float, min_margin: float) -> float:
    """0.5 at the deck model's margin limit, toward 1 as the read gets clearer."""
    return float(1.0 - 0.5 * min_margin / max(margin, min_margin))
