package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The ring the clients check: the roster's entries decide it, not the order the job lists them. */
class RosterPermutationTest {
  @Test
  void reorderingTheRoster_seatsEveryClientBetweenTheSameNeighbours() {
    RoundGraphTest.Roster r = RoundGraphTest.roster(100, 3);
    List<AdvertisedKeys> reordered = new ArrayList<>(r.entries());
    Collections.shuffle(reordered, new Random(4));

    int[] ring = RosterPermutation.of(r.ctx(), r.entries());
    int[] ringOfReordered = RosterPermutation.of(r.ctx(), reordered);

    // The same entries, position by position: a server that reorders gets no other ring.
    for (int q = 0; q < 100; q++) {
      assertThat(reordered.get(ringOfReordered[q])).isSameAs(r.entries().get(ring[q]));
    }
    assertThat(RosterPermutation.seed(r.ctx(), reordered))
        .isEqualTo(RosterPermutation.seed(r.ctx(), r.entries()));
  }

  @Test
  void anotherEntryOrContext_givesAnotherRing_andEachIsABijection() {
    RoundGraphTest.Roster r = RoundGraphTest.roster(50, 5);
    List<AdvertisedKeys> other = new ArrayList<>(r.entries());
    AdvertisedKeys first = other.get(0);
    byte[] commitment = first.selfMaskCommitment();
    commitment[0] ^= 1;
    other.set(
        0,
        new AdvertisedKeys(
            first.encryptionPublicKey(),
            first.maskPublicKey(),
            commitment,
            first.signingPublicKey()));

    int[] ring = RosterPermutation.of(r.ctx(), r.entries());

    assertThat(RosterPermutation.of(r.ctx(), other)).isNotEqualTo(ring);
    assertThat(RosterPermutation.of(new RoundContext("graph-job", 99, new byte[16]), r.entries()))
        .isNotEqualTo(ring);
    assertThat(ring).containsExactlyInAnyOrder(java.util.stream.IntStream.range(0, 50).toArray());
  }
}
