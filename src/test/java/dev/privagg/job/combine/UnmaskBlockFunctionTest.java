package dev.privagg.job.combine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.RoundPartial;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.secagg.MaskCorrection;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * One block of a secure round's mask correction: each block expands the masks over its own
 * coordinates only, and the blocks together give what the correction gives over the whole model, at
 * any split (masks are seekable: coordinate j lies in AES block j / 2).
 */
class UnmaskBlockFunctionTest {
  private static final int D = 37;

  private static MaskCorrection correction(int terms, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<MaskCorrection.Term> list = new ArrayList<>();
    for (int t = 0; t < terms; t++) {
      byte[] key = new byte[32];
      random.nextBytes(key);
      list.add(new MaskCorrection.Term(key, random.nextBoolean() ? 1 : -1));
    }
    return new MaskCorrection(list);
  }

  /** As the decider writes the terms into a request: a sign byte and a 32-byte key each. */
  private static byte[] encode(MaskCorrection correction) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (MaskCorrection.Term term : correction.terms()) {
      out.write(term.sign());
      out.writeBytes(term.key());
    }
    return out.toByteArray();
  }

  private static long[] whole(MaskCorrection correction) {
    long[] units = new long[D];
    correction.applyTo(units, 0, D);
    return units;
  }

  @Test
  void termsDecode_toTheSameKeysAndSigns() {
    MaskCorrection correction = correction(5, 1);

    MaskCorrection decoded = UnmaskBlockFunction.decode(encode(correction));

    assertThat(decoded.terms()).hasSize(5);
    for (int t = 0; t < 5; t++) {
      assertThat(decoded.terms().get(t).key()).isEqualTo(correction.terms().get(t).key());
      assertThat(decoded.terms().get(t).sign()).isEqualTo(correction.terms().get(t).sign());
    }
  }

  @Test
  void blocksAtAnyOffsets_reproduceTheCorrectionOverTheWholeModel() {
    MaskCorrection correction = correction(4, 2);
    byte[] terms = encode(correction);
    long[] expected = whole(correction);
    // Odd and even starts, single coordinates, an empty block, a block to the end.
    int[] cuts = {0, 1, 2, 5, 5, 6, 20, 21, D};
    long[] assembled = new long[D];
    for (int b = 0; b + 1 < cuts.length; b++) {
      int from = cuts[b];
      int length = cuts[b + 1] - from;
      UnmaskRequest request =
          new UnmaskRequest("job-a", 7, "job-a#unmask#" + b, from, length, terms);

      RoundPartial partial = new UnmaskBlockFunction().map(request);

      assertThat(partial.jobId).isEqualTo("job-a");
      assertThat(partial.round).isEqualTo(7);
      assertThat(partial.shardKey).isEqualTo("job-a#unmask#" + b);
      assertThat(partial.unitsOffset).isEqualTo(from);
      assertThat(partial.units).hasSize(length);
      assertThat(partial.contributions).isZero();
      assertThat(partial.noise).isNull();
      System.arraycopy(partial.units, 0, assembled, from, length);
    }
    assertThat(assembled).isEqualTo(expected);
  }

  @Test
  void randomSplits_allAgreeWithTheWholeRange() {
    SplittableRandom random = new SplittableRandom(3);
    MaskCorrection correction = correction(3, 4);
    byte[] terms = encode(correction);
    long[] expected = whole(correction);
    for (int trial = 0; trial < 50; trial++) {
      int from = random.nextInt(D + 1);
      int to = from + random.nextInt(D - from + 1);

      RoundPartial partial =
          new UnmaskBlockFunction().map(new UnmaskRequest("job-a", 1, "b", from, to - from, terms));

      for (int j = from; j < to; j++) {
        assertThat(partial.units[j - from])
            .as("[%d, %d) at %d", from, to, j)
            .isEqualTo(expected[j]);
      }
    }
  }

  @Test
  void aReplayedRequest_givesTheSamePartial() {
    UnmaskRequest request = new UnmaskRequest("job-a", 1, "b", 3, 9, encode(correction(2, 5)));

    assertThat(new UnmaskBlockFunction().map(request).units)
        .isEqualTo(new UnmaskBlockFunction().map(request).units);
  }

  @Test
  void noTerms_correctNothing() {
    RoundPartial partial =
        new UnmaskBlockFunction().map(new UnmaskRequest("job-a", 1, "b", 4, 6, new byte[0]));

    assertThat(partial.units).containsOnly(0L).hasSize(6);
    assertThat(partial.unitsOffset).isEqualTo(4);
  }

  @Test
  void oppositeTermsOfOneKey_cancel() {
    MaskCorrection one = correction(1, 6);
    byte[] key = one.terms().get(0).key();
    MaskCorrection both =
        new MaskCorrection(
            List.of(new MaskCorrection.Term(key, 1), new MaskCorrection.Term(key, -1)));

    RoundPartial partial =
        new UnmaskBlockFunction().map(new UnmaskRequest("job-a", 1, "b", 0, D, encode(both)));

    assertThat(partial.units).containsOnly(0L);
    assertThat(whole(one)).isNotEqualTo(new long[D]);
  }
}
