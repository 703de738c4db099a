package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The comparison's variants and its paired summary. */
class DistributedComparisonTest {
  private static final SimulationConfig BASE =
      SecureReplicaTest.digits(Double.NaN)
          .clients(200)
          .expectedClients(200)
          .rounds(10)
          .targetEpsilon(4)
          .build();

  @Test
  void variants_areCentralSecureCentralAndOnePerWordSize_allPlannedAtTheTarget() {
    List<DistributedComparison.Variant> variants =
        DistributedComparison.variants(BASE, List.of(16, 20));
    assertThat(variants)
        .extracting(DistributedComparison.Variant::name)
        .containsExactly("central", "secure-central", "distributed-16", "distributed-20");
    assertThat(variants.get(0).config().secureAggregation()).isFalse();
    assertThat(variants.get(1).config().secureAggregation()).isTrue();
    assertThat(variants.get(1).config().distributedNoise()).isFalse();
    assertThat(variants.get(3).config().bitsPerCoordinate()).isEqualTo(20);
    var specs = DistributedComparison.plan(variants);
    assertThat(specs.get(2).distributedNoise().bits()).isEqualTo(16);
    assertThat(specs.get(0).privacy().targetEpsilon()).isEqualTo(4.0);
    // The gate's count is charged with the sum, so a secure job needs more noise for the target.
    assertThat(specs.get(1).privacy().noiseMultiplier())
        .isGreaterThan(specs.get(0).privacy().noiseMultiplier());
  }

  private static DistributedComparison.Run run(String variant, long seed, double accuracy) {
    List<SecureReplica.Round> rounds =
        List.of(new SecureReplica.Round(1, 0.1, false), new SecureReplica.Round(2, accuracy, true));
    return new DistributedComparison.Run(
        variant,
        variant.equals("central") ? 0 : 16,
        seed,
        new SecureReplica.Result(rounds, accuracy, 1000, 2.0, 3.0, new float[0]));
  }

  @Test
  void rows_compareEachSeedWithCentralsRunOfTheSameSeed() {
    List<DistributedComparison.Variant> variants =
        DistributedComparison.variants(BASE, List.of(16)).stream()
            .filter(v -> !v.name().equals("secure-central"))
            .toList();
    List<DistributedComparison.Run> runs =
        List.of(
            run("central", 3, 0.80),
            run("distributed-16", 3, 0.78),
            run("central", 4, 0.90),
            run("distributed-16", 4, 0.89));
    List<DistributedComparison.Row> rows = DistributedComparison.rows(variants, runs);
    DistributedComparison.Row distributed = rows.get(1);
    // Differences -0.02 and -0.01: mean -0.015, sd 0.00707, t(1) 12.706: half-width 0.0635.
    assertThat(distributed.gap()).isCloseTo(-0.015, within(1e-12));
    assertThat(distributed.gapHigh() - distributed.gap()).isCloseTo(0.0635, within(1e-4));
    assertThat(distributed.accuracy()).isCloseTo(0.835, within(1e-12));
    assertThat(distributed.roundsWithoutSum()).isEqualTo(2);
    assertThat(rows.get(0).gap()).isZero();
  }
}
