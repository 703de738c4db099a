"""The secure round's driver (send_secure_update and PrivaggClient.send_update in secure mode)
against an in-memory job on a fake clock: the job writes SecureRound records at the phase
deadlines, plays the round's other clients with ClientSessions, routes shares, runs the
consistency round (the survivors' signatures of the survivor statement) and unmasks the sum at
the end (tests/secagg_server.py). The driver's own code runs as is."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import privagg_client.client
from privagg_client import (
    Aggregation,
    JobConfig,
    JobConfigError,
    PrivaggClient,
    SecureRoundError,
    TensorShapeError,
    Topics,
    UnmaskRefused,
    wire,
)
from privagg_client.secure import (
    AdvertiseKeys,
    ClientSession,
    Commitments,
    EncryptedShare,
    RevealedShare,
    Roster,
    RoutedShare,
    ShareKeys,
    Shares,
    SignedSurvivors,
    UnmaskShares,
    quantize,
)
from privagg_client.secure.primitives import round_context
from privagg_client.secure_round import (
    SecureRoundResult,
    decode_secure_round,
    encode_secure_message,
    send_secure_update,
)
from secagg_server import SeededRandomness, SurvivorSignatures, make_roster, unmasked_sum

JOB = JobConfig("sj", {"w": [3, 2], "b": [2]}, aggregation=Aggregation("secure", 0.1, 0.1))
D = 8
ROUND = 4
CLIP_NORM = 2.0
OPEN = 1_000_000.0
PHASE_SECONDS = 10.0
CLIENT_ID = "me"
PHASE_OF_FIELD = {
    "encryptionPublicKey": 1,
    "shares": 2,
    "rejected": 3,
    "values": 4,
    "signature": 5,
    "selfMaskShares": 6,
}
ALL_SENT = ["encryptionPublicKey", "shares", "rejected", "values", "signature", "selfMaskShares"]


def _session_bytes(k: int) -> bytes:
    return bytes([k]) * 16


def _quantized(values: np.ndarray, seed: int) -> np.ndarray:
    return quantize(values, CLIP_NORM, np.random.default_rng(seed))


@dataclass
class FakeSecureJob:
    """A secure round's job side, and the transport the driver under test reads and writes.

    ``peers`` other clients advertise at the opening; the driver's client gets the roster
    index after them. ``drop_at_share`` / ``drop_at_receipt`` / ``drop_at_masked_input``: peers
    that send no ShareKeys / no receipt / no MaskedInput. ``stall_at``: the job message it never
    writes ("roster", "shares", "confirmed", "survivors", "consistency"). ``reopen_at``: a time
    at which it opens the round again. ``junk_to_client``: the lowest-indexed neighbour sends the
    client under test junk for its shares (``junk_sender``). ``equivocate_commitments``: the job
    publishes a second, different Commitments record for one dealer. ``forge_consistency``: the
    Consistency message carries the peers' signatures of another survivor list (one with the
    client under test and without peer 0) and garbage, not theirs on the published one: the
    client under test must reveal nothing."""

    peers: int = 11
    degree: int = 7
    threshold: int = 5  # a graph of 12 that the clients' checks at the default rates accept
    drop_at_share: Collection[int] = ()
    drop_at_receipt: Collection[int] = ()
    drop_at_masked_input: Collection[int] = ()
    junk_to_client: bool = False
    junk_sender: int = -1
    equivocate_commitments: bool = False
    stall_at: str | None = None
    drop_client_from_survivors: bool = False
    reopen_at: float | None = None
    lose_advertisement: bool = False
    no_graph: bool = False
    forge_consistency: bool = False
    now_: float = OPEN
    published: list[tuple[float, bytes]] = field(default_factory=list)
    read: int = 0
    session_number: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    result: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.peer_values = np.random.default_rng(1).normal(size=(self.peers, D)) * 0.2
        self._open(OPEN)
        self.publish_noise(OPEN)

    # -- the job -----------------------------------------------------------------------------

    def _open(self, at: float) -> None:
        self.session_number += 1
        self.session = _session_bytes(self.session_number)
        self.opened_at = at
        self.deadlines = [at + PHASE_SECONDS * k for k in (1, 2, 3, 4, 5, 6)]
        self.events = ["roster", "shares", "confirmed", "survivors", "consistency", "unmask"]
        self.sessions = [
            ClientSession(
                JOB.job_id,
                ROUND,
                self.session,
                SeededRandomness(100 * self.session_number + p),
                JOB.aggregation.threat,
            )
            for p in range(self.peers)
        ]
        self.client_keys: AdvertiseKeys | None = None
        self.sealed: dict[int, list[RoutedShare]] = {}
        self.commitments: dict[int, bytes] = {}
        self.receipts: dict[int, list[int]] = {}
        self.confirmed: list[int] = []
        self.cuts: list[tuple[int, int]] = []
        self.masked: dict[int, np.ndarray] = {}
        self.signed: SurvivorSignatures | None = None
        self.peers_signed: SurvivorSignatures | None = None
        self.unmask: dict[int, UnmaskShares] = {}
        self._publish(at, {
            "advertiseDeadlineMillis": int(self.deadlines[0] * 1000),
            "shareDeadlineMillis": int(self.deadlines[1] * 1000),
            "confirmDeadlineMillis": int(self.deadlines[2] * 1000),
            "maskedInputDeadlineMillis": int(self.deadlines[3] * 1000),
            "consistencyDeadlineMillis": int(self.deadlines[4] * 1000),
            "unmaskDeadlineMillis": int(self.deadlines[5] * 1000),
            "clipNorm": CLIP_NORM,
        })

    def _publish(
        self, at: float, body: dict[str, Any], job_id: str = JOB.job_id, round_number: int = ROUND
    ) -> None:
        header = {"jobId": job_id, "round": round_number, "session": self.session}
        value = wire.encode("SecureRound", {**header, "body": body})
        self.published.append((at, value))

    def publish_noise(self, at: float) -> None:
        """Records of another job and another round, which the driver must skip."""
        body = {"shared": [0], "maskedInput": [0]}
        self._publish(at, body, job_id="other-job")
        self._publish(at, body, round_number=ROUND + 1)

    @property
    def client_index(self) -> int:
        return self.peers

    def _roster(self) -> Roster:
        keys = [s.advertise() for s in self.sessions]
        if self.client_keys is not None:
            keys.append(self.client_keys)
        roster = make_roster(
            keys, self.degree, self.threshold, round_context(JOB.job_id, ROUND, self.session)
        )
        if self.no_graph:
            return replace(roster, degree=0, threshold=0, permutation=())
        return roster

    def _event(self, name: str, at: float) -> None:
        if name == "roster":
            self.roster = self._roster()
            self._publish(at, {
                "entries": [
                    {
                        "encryptionPublicKey": e.encryption_public_key,
                        "maskPublicKey": e.mask_public_key,
                        "selfMaskCommitment": e.self_mask_commitment,
                        "signingPublicKey": e.signing_public_key,
                    }
                    for e in self.roster.entries
                ],
                "degree": self.roster.degree, "threshold": self.roster.threshold,
                "permutation": list(self.roster.permutation),
            })
            for p, session in enumerate(self.sessions):
                shares = session.on_roster(self.roster)
                if p not in self.drop_at_share:
                    self._accept_shares(
                        p, [(s.index, s.ciphertext) for s in shares], session.commitments
                    )
        elif name == "shares":
            n = len(self.roster.entries)
            inbox: dict[int, list[RoutedShare]] = {v: [] for v in range(n)}
            for sender, routed in sorted(self.sealed.items()):
                # Each with the sender's Feldman commitments, as the job routes them.
                for share in routed:
                    inbox[share.sender].append(
                        RoutedShare(sender, share.ciphertext, self.commitments[sender])
                    )
            if self.junk_to_client:
                first = inbox[self.client_index][0]
                self.junk_sender = first.sender
                inbox[self.client_index][0] = replace(
                    first, ciphertext=bytes(len(first.ciphertext))
                )
            # Every dealer's commitments once, then each recipient's Shares (as the job does).
            for sender in sorted(self.sealed):
                self._publish(at, {"sender": sender, "commitments": self.commitments[sender]})
            if self.equivocate_commitments:
                first = min(
                    v
                    for v in self.roster.neighbourhood(self.client_index)
                    if v != self.client_index and v in self.sealed
                )
                other = bytes(b ^ 1 for b in self.commitments[first])
                self._publish(at, {"sender": first, "commitments": other})
            for v in range(n):
                self._publish(at, {"recipient": v, "shares": [
                    {"sender": s.sender, "ciphertext": s.ciphertext} for s in inbox[v]
                ]})
            for p, session in enumerate(self.sessions):
                if p in self.sealed:
                    session.on_shares(Shares(p, tuple(inbox[p])))
                    if p not in self.drop_at_receipt:
                        self.receipts[p] = list(session.receipt())
        elif name == "confirmed":
            # Every client that shared and sent a receipt; each rejection cuts its pair.
            self.confirmed = sorted(p for p in self.sealed if p in self.receipts)
            self.cuts = sorted(
                {(min(u, v), max(u, v)) for v in self.confirmed for u in self.receipts[v]}
            )
            self._publish(at, {
                "confirmed": self.confirmed,
                "cuts": [{"lo": lo, "hi": hi} for lo, hi in self.cuts],
            })
            for p, session in enumerate(self.sessions):
                if p in self.confirmed:
                    session.on_confirmed(self.confirmed, self.cuts)
                    if p not in self.drop_at_masked_input:
                        self.masked[p] = session.masked_input(_quantized(self.peer_values[p], p))
        elif name == "survivors":
            survivors = set(self.masked)
            if self.drop_client_from_survivors:
                survivors.discard(self.client_index)
            self.survivors = survivors
            # The job's statement of what it announces; the peers of U3 sign it at once. A lying
            # job (forge_consistency) shows the peers another list, without peer 0.
            self.signed = SurvivorSignatures(
                self._context(), self.roster, self.confirmed, self.cuts, survivors
            )
            self.peers_signed = self.signed
            if self.forge_consistency:
                self.peers_signed = SurvivorSignatures(
                    self._context(), self.roster, self.confirmed, self.cuts, survivors - {0}
                )
            self._publish(at, {"shared": self.confirmed, "maskedInput": sorted(survivors)})
            shown = sorted(self.peers_signed.survivors)
            for p in shown:
                if p < self.peers:
                    try:
                        signature = self.sessions[p].sign_survivors(self.confirmed, shown)
                    except UnmaskRefused:
                        continue  # as the client under test does, in the tests that expect it
                    assert self.peers_signed.accept(p, signature), self.peers_signed.refused
        elif name == "consistency":
            assert self.signed is not None and self.peers_signed is not None
            signatures = self.signed.consistency()
            if self.forge_consistency:
                # The peers' genuine signatures of their list, garbage in peer 0's name, and the
                # client's own genuine one: everything a lying job has to show it.
                mine = self.signed.consistency()
                signatures = tuple(
                    sorted(
                        (*self.peers_signed.consistency(), SignedSurvivors(0, bytes(64)), *mine),
                        key=lambda s: s.index,
                    )
                )
            self._publish(at, {"signatures": [
                {"index": s.index, "signature": s.signature} for s in signatures
            ]})
            for p in sorted(self.peers_signed.signatures):
                if p < self.peers:
                    self.unmask[p] = self.sessions[p].unmask(self.peers_signed.by_index())
        elif name == "unmask" and not self.forge_consistency:
            ctx = self._context()
            masked = {u: y for u, y in self.masked.items() if u in self.survivors}
            self.result = unmasked_sum(
                ctx, self.roster, set(self.confirmed), masked, self.unmask, set(self.cuts)
            )

    def _context(self) -> bytes:
        return round_context(JOB.job_id, ROUND, self.session)

    def _accept_shares(
        self, sender: int, shares: list[tuple[int, bytes]], commitments: bytes
    ) -> None:
        # The job keeps, per sender, the sealed shares keyed by their recipient (as "sender" here)
        # and the commitments of its ShareKeys: 64 (t - 1) bytes, or it refuses them.
        assert len(commitments) == 2 * 32 * (self.roster.threshold - 1), len(commitments)
        self.sealed[sender] = [RoutedShare(recipient, c) for recipient, c in shares]
        self.commitments[sender] = commitments

    def advance_to(self, t: float) -> None:
        while True:
            pending = [(d, e) for d, e in zip(self.deadlines, self.events) if e]
            due = [(d, e) for d, e in pending if d <= t]
            reopen = self.reopen_at
            if reopen is not None and reopen <= t and (not due or reopen < due[0][0]):
                at, self.reopen_at = self.reopen_at, None
                self._open(at)
                continue
            if not due:
                return
            d, e = due[0]
            self.events[self.events.index(e)] = ""
            if e != self.stall_at:
                self._event(e, d)

    def next_event(self) -> float:
        times = [d for d, e in zip(self.deadlines, self.events) if e]
        if self.reopen_at is not None:
            times.append(self.reopen_at)
        return min(times, default=float("inf"))

    # -- the transport -----------------------------------------------------------------------

    def now(self) -> float:
        return self.now_

    def receive(self, timeout: float) -> list[bytes]:
        self.advance_to(self.now_)
        if self.read == len(self.published):
            self.now_ = min(self.now_ + timeout, max(self.now_, self.next_event()))
            self.advance_to(self.now_)
        out = [v for at, v in self.published[self.read :] if at <= self.now_]
        self.read += len(out)
        return out

    def send(self, value: bytes) -> None:
        self.advance_to(self.now_)
        message = wire.decode("SecureMessage", value)
        header = (message["jobId"], message["round"], message["clientId"])
        assert header == (JOB.job_id, ROUND, CLIENT_ID)
        self.sent.append(message)
        if message["session"] != self.session:
            self.rejected.append("session")
            return
        body = message["body"]
        phase = next(p for key, p in PHASE_OF_FIELD.items() if key in body)
        window_opens = self.deadlines[phase - 2] if phase > 1 else self.opened_at
        if not window_opens <= self.now_ < self.deadlines[phase - 1]:
            self.rejected.append(f"phase {phase} late")
            return
        me = self.client_index
        if phase == 1 and self.lose_advertisement:
            self.rejected.append("phase 1 lost")
        elif phase == 1:
            self.client_keys = AdvertiseKeys(
                body["encryptionPublicKey"],
                body["maskPublicKey"],
                body["selfMaskCommitment"],
                body["signingPublicKey"],
            )
        elif phase == 2:
            self._accept_shares(
                me, [(s["index"], s["ciphertext"]) for s in body["shares"]], body["commitments"]
            )
        elif phase == 3:
            self.receipts[me] = list(body["rejected"])
        elif phase == 4:
            self.masked[me] = np.frombuffer(body["values"], dtype="<u8").copy()
        elif phase == 5:
            assert self.signed is not None
            if not self.signed.accept(me, body["signature"]):
                self.rejected.append("phase 5 signature")
        elif self.signed is None or me not in self.signed.signatures:
            self.rejected.append("phase 6 without a signature")
        else:
            self.unmask[me] = UnmaskShares(
                tuple(RevealedShare(s["index"], s["share"]) for s in body["selfMaskShares"]),
                tuple(RevealedShare(s["index"], s["share"]) for s in body["maskKeyShares"]),
            )

    # -- expectations ------------------------------------------------------------------------

    def expected_sum(self, client_x: np.ndarray) -> np.ndarray:
        total = np.zeros(D, dtype=np.int64)
        for u in self.survivors:
            total += client_x if u == self.client_index else _quantized(self.peer_values[u], u)
        return total


VALUES = np.linspace(-0.3, 0.4, D)


def _drive(job: FakeSecureJob, at: float = OPEN + 1.0, **kwargs: Any) -> SecureRoundResult:
    job.now_ = at
    return send_secure_update(
        job, JOB, CLIENT_ID, ROUND, VALUES, open_timeout=5.0, grace=5.0,
        randomness=SeededRandomness(77), rng=np.random.default_rng(7), **kwargs,
    )


def _phases_sent(job: FakeSecureJob) -> list[str]:
    return [next(iter(m["body"])) for m in job.sent]


def test_a_secure_update_takes_part_in_all_six_phases_and_the_job_gets_the_exact_sum() -> None:
    job = FakeSecureJob()
    result = _drive(job)

    assert _phases_sent(job) == ALL_SENT
    assert job.rejected == []
    assert job.signed is not None and job.client_index in job.signed.signatures
    assert sorted(job.signed.signatures) == sorted(job.survivors)
    job.advance_to(job.deadlines[5])
    assert job.result is not None
    np.testing.assert_array_equal(job.result, job.expected_sum(_quantized(VALUES, 7)))
    assert result.round_number == ROUND and result.session == job.session
    assert result.index == job.client_index and result.survivors == job.peers + 1
    assert len(result.masked_with) == job.degree - 1 and result.rejected_shares == {}
    # Its ShareKeys' commitments check: no neighbour rejected its shares, nor it theirs.
    assert job.receipts and all(rejected == [] for rejected in job.receipts.values())
    assert job.now_ < job.deadlines[5]  # it returned once its phase 6 message was acknowledged


def test_peers_dropping_out_in_phases_2_3_and_4_leave_the_sum_exact() -> None:
    # The default rates give 16 clients k = 9, t = 6, and room for one dropout and one more.
    job = FakeSecureJob(
        peers=15,
        degree=9,
        threshold=6,
        drop_at_share={3},
        drop_at_receipt={7},
        drop_at_masked_input={12},
    )
    result = _drive(job)

    job.advance_to(job.deadlines[5])
    assert job.result is not None
    np.testing.assert_array_equal(job.result, job.expected_sum(_quantized(VALUES, 7)))
    assert result.survivors == 16 - 3


def test_two_different_commitments_for_one_dealer_stop_the_client_before_its_receipt() -> None:
    # A job that shows holders different commitments could have each accept shares of one dealer
    # that agree on no polynomial: the client refuses the round instead.
    job = FakeSecureJob(equivocate_commitments=True)
    with pytest.raises(SecureRoundError, match="two different commitments for client") as e:
        _drive(job)
    assert e.value.phase == 3
    assert "rejected" not in _phases_sent(job)


def test_a_junk_share_goes_on_the_receipt_and_its_pair_is_cut_so_the_sum_stays_exact() -> None:
    job = FakeSecureJob(junk_to_client=True)
    result = _drive(job)

    job.advance_to(job.deadlines[5])
    junk = job.junk_sender
    assert job.receipts[job.client_index] == [junk]
    assert (min(junk, job.client_index), max(junk, job.client_index)) in job.cuts
    assert junk not in result.masked_with and junk in result.rejected_shares
    assert len(result.masked_with) == job.degree - 2
    assert job.result is not None
    np.testing.assert_array_equal(job.result, job.expected_sum(_quantized(VALUES, 7)))


@pytest.mark.parametrize(
    "phases, sent",
    [
        (1, ["encryptionPublicKey"]),
        (2, ["encryptionPublicKey", "shares"]),
        (3, ["encryptionPublicKey", "shares", "rejected"]),
        (4, ["encryptionPublicKey", "shares", "rejected", "values"]),
        (5, ["encryptionPublicKey", "shares", "rejected", "values", "signature"]),
    ],
)
def test_phases_below_6_stop_after_that_phase_as_a_dropout_and_the_sum_stays_exact(
    phases: int, sent: list[str]
) -> None:
    job = FakeSecureJob()
    result = _drive(job, phases=phases)

    assert _phases_sent(job) == sent and job.rejected == []
    assert job.now_ < job.deadlines[phases - 1]  # it returned once that phase's message was sent
    assert result.session == job.session and result.survivors == 0
    assert result.index == (job.client_index if phases >= 2 else -1)
    assert len(result.masked_with) == (job.degree - 1 if phases >= 4 else 0)
    job.advance_to(job.deadlines[5])
    assert job.result is not None
    # Dropped after phase 1 or 2: not confirmed, so no one masks with it; after 3: confirmed,
    # its pairwise masks removed from its s_sk's shares; after 4 or 5: in U3, its self-mask
    # removed from its b's shares held by others.
    in_sum = phases >= 4
    assert job.signed is not None
    assert (job.client_index in job.signed.signatures) == (phases == 5)
    assert (job.client_index in job.survivors) == in_sum
    np.testing.assert_array_equal(job.result, job.expected_sum(_quantized(VALUES, 7)))


def test_send_secure_update_passes_phases_and_refuses_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = FakeSecureJob()
    job.now_ = OPEN + 1.0
    client = _client_with(job, monkeypatch)
    update = {"w": VALUES[:6].reshape(3, 2), "b": VALUES[6:]}
    for bad in (0, 7, True, 2.0):
        message = rf"phases must be an integer in \[1, 6\], was {bad!r}"
        with pytest.raises(ValueError, match=message):
            client.send_secure_update(ROUND, update, timeout=5.0, phases=bad)  # type: ignore
    assert job.sent == []

    result = client.send_secure_update(ROUND, update, timeout=5.0, phases=2)

    assert _phases_sent(job) == ["encryptionPublicKey", "shares"]
    assert result.index == job.client_index


def test_a_client_that_reads_the_opening_after_the_advertise_deadline_fails_in_phase_1() -> None:
    job = FakeSecureJob()
    message = r"round 4 of job sj failed in phase 1 \(advertise\): the round's advertise deadline"
    with pytest.raises(SecureRoundError, match=message) as e:
        _drive(job, at=job.deadlines[0] + 0.5)
    assert e.value.phase == 1 and job.sent == []


def test_no_opening_fails_in_phase_1_after_the_open_timeout() -> None:
    job = FakeSecureJob()
    job.published = [p for p in job.published if b"other-job" in p[1]]
    message = "Opened record did not arrive on topic privagg.secure within 5 s"
    with pytest.raises(SecureRoundError, match=message):
        _drive(job)
    assert job.now_ == pytest.approx(OPEN + 1.0 + 5.0, abs=0.6)


def test_a_roster_without_this_client_ends_its_round_quietly_with_index_minus_one() -> None:
    job = FakeSecureJob(lose_advertisement=True)
    result = _drive(job)
    assert result.index == -1 and result.survivors == 0
    assert _phases_sent(job) == ["encryptionPublicKey"]


@pytest.mark.parametrize(
    "stall, phase, message",
    [
        ("roster", 2, "Roster did not arrive within 5 s after the advertise deadline"),
        ("shares", 3, "Shares for this client did not arrive within 5 s after the share deadline"),
        ("confirmed", 4, "Confirmed did not arrive within 5 s after the receipt deadline"),
        ("survivors", 5, "Survivors did not arrive within 5 s after the masked input deadline"),
        ("consistency", 6, "Consistency did not arrive within 5 s after the consistency deadline"),
    ],
)
def test_a_job_message_that_does_not_arrive_fails_its_phase_after_the_grace(
    stall: str, phase: int, message: str
) -> None:
    job = FakeSecureJob(stall_at=stall)
    with pytest.raises(SecureRoundError, match=message) as e:
        _drive(job)
    assert e.value.phase == phase
    assert job.now_ == pytest.approx(job.deadlines[phase - 2] + 5.0, abs=0.6)


def test_survivors_without_this_client_fail_in_phase_4_and_reveal_nothing() -> None:
    job = FakeSecureJob(drop_client_from_survivors=True)
    message = r"phase 4 \(masked input\): the job did not count this client's masked input"
    with pytest.raises(SecureRoundError, match=message):
        _drive(job)
    assert _phases_sent(job) == ["encryptionPublicKey", "shares", "rejected", "values"]


def test_too_few_surviving_neighbours_make_it_refuse_to_sign_in_phase_5() -> None:
    job = FakeSecureJob(peers=8, degree=9, threshold=9, drop_at_masked_input={0})  # all neighbours
    message = (
        r"phase 5 \(consistency\): this client refuses to sign the survivor list, and reveals "
        "no shares: only 8 of this client's neighbourhood of 9 sent a masked input, fewer than "
        "the threshold 9"
    )
    with pytest.raises(SecureRoundError, match=message) as e:
        _drive(job)
    assert e.value.phase == 5
    assert _phases_sent(job) == ["encryptionPublicKey", "shares", "rejected", "values"]


def test_a_consistency_message_without_enough_signatures_of_its_list_reveals_nothing() -> None:
    # The job showed the peers a list without peer 0 and forwards their signatures of it, junk
    # in peer 0's name and the client's own: 1 valid signature of 12 clients, fewer than
    # T = (12 + 1) // 2 + 1 = 7. Unmasking would hand over peer 0's self-mask share while the
    # peers hand over its mask key.
    job = FakeSecureJob(forge_consistency=True)
    message = (
        r"phase 6 \(unmask\): this client refuses to reveal shares: only 1 survivors signed the "
        r"survivor list it signed, fewer than 7 \(\(n \+ A\) / 2 \+ 1\)"
    )
    with pytest.raises(SecureRoundError, match=message) as e:
        _drive(job)
    assert e.value.phase == 6
    assert _phases_sent(job) == ALL_SENT[:5]
    assert job.client_index not in job.unmask
    # The peers, shown one list, did unmask on it: the attack needed this client's shares too.
    assert job.peers_signed is not None and len(job.unmask) == len(job.peers_signed.signatures)


def test_a_reopened_round_before_the_masked_input_is_joined_afresh() -> None:
    job = FakeSecureJob(reopen_at=OPEN + PHASE_SECONDS + 2.0)  # after the first roster
    result = _drive(job)

    assert result.session == _session_bytes(2)
    assert [m["session"] for m in job.sent] == [_session_bytes(1)] * 2 + [_session_bytes(2)] * 6
    job.advance_to(job.deadlines[5])
    assert job.result is not None
    np.testing.assert_array_equal(job.result, job.expected_sum(_quantized(VALUES, 7)))


def test_a_reopened_round_after_the_masked_input_is_not_joined_again() -> None:
    job = FakeSecureJob(reopen_at=OPEN + 4 * PHASE_SECONDS - 1.0)  # before the Survivors
    message = "opened the round again with a new session .* after this client sent its masked"
    with pytest.raises(SecureRoundError, match=message):
        _drive(job)
    assert [m["session"] for m in job.sent] == [_session_bytes(1)] * 4


# -- through PrivaggClient -------------------------------------------------------------------


def _client_with(job: FakeSecureJob, monkeypatch: pytest.MonkeyPatch) -> PrivaggClient:
    monkeypatch.setattr(privagg_client.client, "_KafkaSecureTransport", lambda client, timeout: job)
    return PrivaggClient(JOB, "fake:9092", CLIENT_ID)


def test_send_update_in_secure_mode_runs_the_round(monkeypatch: pytest.MonkeyPatch) -> None:
    job = FakeSecureJob()
    job.now_ = OPEN + 1.0
    client = _client_with(job, monkeypatch)
    update = {"w": VALUES[:6].reshape(3, 2), "b": VALUES[6:]}

    client.send_update(ROUND, update, timeout=5.0)

    assert _phases_sent(job) == ALL_SENT
    job.advance_to(job.deadlines[5])
    assert job.result is not None
    # The client's part of the sum is its update on the grid, in the spec's tensor order (w's
    # 6 values, then b's 2, as float32 as in plaintext mode), each within one unit (its
    # rounding is a CSPRNG's here).
    peers = sum(_quantized(job.peer_values[p], p) for p in range(job.peers))
    grid = VALUES.astype(np.float32).astype(np.float64) * 2.0**36 / CLIP_NORM
    assert np.abs(job.result - peers - grid).max() < 1


def test_secure_mode_sends_no_metadata_and_checks_the_update_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = FakeSecureJob()
    client = _client_with(job, monkeypatch)
    with pytest.raises(JobConfigError, match="aggregates securely, which sends no metadata"):
        client.send_update(ROUND, {"w": np.zeros((3, 2)), "b": np.zeros(2)}, metadata={"k": "v"})
    with pytest.raises(TensorShapeError, match="lacks tensor 'b'"):
        client.send_update(ROUND, {"w": np.zeros((3, 2))})
    assert job.sent == []


def test_the_spec_reads_the_aggregation_section_and_the_secure_topic(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "jobId: a\nmodel:\n  tensors:\n    - {name: w, shape: [2]}\n"
        "aggregation:\n  mode: secure\n  maxDropoutRate: 0.1\n  adversarialClientRate: 0.05\n"
        "topics:\n  secure: s.topic\n"
    )
    job = JobConfig.from_spec(spec)
    assert job.aggregation == Aggregation("secure", 0.1, 0.05) and job.aggregation.secure
    assert job.topics == Topics(secure="s.topic")
    plain = tmp_path / "p.yaml"
    plain.write_text("jobId: a\nmodel:\n  tensors:\n    - {name: w, shape: [2]}\n")
    job = JobConfig.from_spec(plain)
    assert job.aggregation == Aggregation() and not job.aggregation.secure
    assert job.topics.secure == "privagg.secure"


@pytest.mark.parametrize(
    "section, message",
    [
        ("{mode: sum}", "aggregation.mode must be one of plaintext, secure, was 'sum'"),
        ("{mode: secure, maxDropoutRate: 1.0}", r"maxDropoutRate must be in \[0, 1\), was 1.0"),
        ("{mode: secure, adversarialClientRate: -0.1}", r"Rate must be in \[0, 1\), was -0.1"),
        ("{mode: secure, maxDropoutRate: .nan}", "maxDropoutRate must be in"),
        ("secure", "aggregation must be a mapping, was 'secure'"),
    ],
)
def test_a_bad_aggregation_section_is_refused(section: str, message: str) -> None:
    import yaml

    spec = "jobId: a\nmodel: {tensors: [{name: w, shape: [2]}]}\naggregation: "
    root = yaml.safe_load(spec + section)
    with pytest.raises(JobConfigError, match=message):
        JobConfig.from_spec_dict(root)


def test_a_roster_of_degree_zero_ends_the_round_quietly_after_advertising() -> None:
    job = FakeSecureJob(peers=0, degree=1, threshold=1, no_graph=True)
    result = _drive(job)
    assert result.index == -1 and result.survivors == 0
    assert _phases_sent(job) == ["encryptionPublicKey"]


def test_a_restarted_client_with_a_masked_rounds_file_masks_a_round_in_one_session_only(
    tmp_path: Path,
) -> None:
    # The round is opened again after this client's masked input; the process restarts (a
    # fresh call, no memory) and reads the new session: the file refuses a second masked input.
    masked_rounds = tmp_path / "masked-rounds"
    job = FakeSecureJob(reopen_at=OPEN + 4 * PHASE_SECONDS - 1.0)
    with pytest.raises(SecureRoundError, match="opened the round again"):
        _drive(job, masked_rounds=masked_rounds)
    assert masked_rounds.read_text() == f"{JOB.job_id}\t{ROUND}\t{_session_bytes(1).hex()}\n"
    sent = len(job.sent)
    job.read = 0  # the restarted process reads the secure topic afresh

    message = r"phase 4 \(masked input\): this client already masked an update for round 4"
    with pytest.raises(SecureRoundError, match=message):
        _drive(job, at=job.now_, masked_rounds=masked_rounds)
    assert [next(iter(m["body"])) for m in job.sent[sent:]] == [
        "encryptionPublicKey", "shares", "rejected"
    ]
    # Without the file the restarted client would have masked the round again.
    assert "values" not in [next(iter(m["body"])) for m in job.sent[sent:]]


def test_share_keys_carry_the_commitments_and_the_job_writes_each_dealers_once() -> None:
    # Phase 2 on the wire: one sealed pair per neighbour and the dealer's Feldman commitments.
    commitments = bytes(range(64 * 2))  # t = 3: 64 (t - 1) bytes
    body = ShareKeys((EncryptedShare(3, b"c" * 92), EncryptedShare(5, b"d" * 92)), commitments)
    value = encode_secure_message(JOB.job_id, ROUND, _session_bytes(1), CLIENT_ID, body)
    assert wire.decode("SecureMessage", value)["body"] == {
        "shares": [{"index": 3, "ciphertext": b"c" * 92}, {"index": 5, "ciphertext": b"d" * 92}],
        "commitments": commitments,
    }
    # Phase 3 starts: each dealer's commitments once, then the shares routed to a recipient.
    def published(body: dict[str, object]) -> bytes:
        return wire.encode("SecureRound", {
            "jobId": JOB.job_id, "round": ROUND, "session": _session_bytes(1), "body": body,
        })

    dealer = published({"sender": 2, "commitments": commitments})
    assert decode_secure_round(dealer).body() == Commitments(2, commitments)
    shares = published({"recipient": 5, "shares": [
        {"sender": 2, "ciphertext": b"e" * 92}, {"sender": 7, "ciphertext": b"f" * 92},
    ]})
    assert decode_secure_round(shares).body() == Shares(5, (
        RoutedShare(2, b"e" * 92), RoutedShare(7, b"f" * 92),
    ))
