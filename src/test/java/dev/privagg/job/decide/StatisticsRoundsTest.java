package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.FeatureStatistics;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.StatisticsBlock;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.Records;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import dev.privagg.statistics.ClientStatistics;
import org.junit.jupiter.api.Test;

/**
 * A statistics job through the round lifecycle and combiner, without Flink: each round releases
 * that round's noisy sums (not a running model), every block is clipped to its share whatever a
 * client sends, and the release states statistics and per-block epsilon.
 */
class StatisticsRoundsTest {
  private static final long TIMEOUT = 1000;
  private static final String SPEC =
      """
      jobId: stats
      statistics:
        maxRows: 2
        budgetWeights: {count: 1, sum: 1, histogram: 2}
        features:
          - {name: x, bounds: [0, 10], statistics: [mean, histogram], bins: 2}
      rounds: {timeout: 1s, startGrace: 0ms, expectedClients: 4}
      privacy:
        noiseMultiplier: %s
        delta: 1e-5
        budgetEpsilon: .inf
        noise: {source: seeded, seed: 3}
      """;

  private final LifecycleDriver job = LifecycleDriver.releasing();

  private static JobSpec spec(double z) {
    return JobSpecReader.parse("t", SPEC.formatted(z));
  }

  private static DecodedUpdate update(String client, long round, float[][] blocks) {
    byte[][] data = new byte[blocks.length][];
    for (int b = 0; b < blocks.length; b++) {
      data[b] = Float32.write(blocks[b], 0, blocks[b].length).array();
    }
    return new DecodedUpdate("stats", client, round, data, new RawUpdate("updates", 0, 42, null));
  }

  @Test
  void eachRound_releasesItsOwnSums_andAHostileClientMovesEachBlockByItsBoundAtMost() {
    JobSpec spec = spec(0);
    job.start(spec, NoiseSource.zero(), LedgerFloor.NONE, 0);
    job.read(
        update("a", 1, ClientStatistics.encode(spec.statistics(), new double[][] {{2}, {4}})), 10);
    job.read(update("b", 1, ClientStatistics.encode(spec.statistics(), new double[][] {{8}})), 20);
    // A client claiming a million rows and one sending a negative histogram: each is clipped to
    // its block's bound (flat clipping at 1 would let either block reach sqrt(3) times it).
    job.read(update("c", 1, new float[][] {{1e6f}, {0f}, {0f, 0f}}), 30);
    job.read(update("d", 1, new float[][] {{0f}, {0f}, {-1e6f, 5f}}), 40);
    job.advanceTo(TIMEOUT);
    job.read(
        update("a", 2, ClientStatistics.encode(spec.statistics(), new double[][] {{6}})),
        TIMEOUT + 10);
    job.advanceTo(2 * TIMEOUT);

    GlobalModel first = decoded(spec, 1, job.decided.models.get(0));
    // Honest rows 2, 4, 8 plus the hostile client's count, held to its bound R = 2.
    assertThat(first.getStatistics().getCount().getValue()).isCloseTo(5, within(1e-4));
    FeatureStatistics x = first.getStatistics().getFeatures().get(0);
    // Histogram [0, 5), [5, 10]: honest 2 and 1; the hostile block has norm at most R = 2.
    double lowBin = x.getHistogram().get(0).getValue();
    double highBin = x.getHistogram().get(1).getValue();
    assertThat(Math.hypot(lowBin - 2, highBin - 1)).isLessThanOrEqualTo(2.0 + 1e-4);
    assertThat(lowBin).isLessThan(2);
    // Round 2 alone: one row at 6, nothing carried over from round 1.
    GlobalModel second = decoded(spec, 2, job.decided.models.get(1));
    assertThat(second.getStatistics().getCount().getValue()).isCloseTo(1, within(1e-5));
    assertThat(second.getStatistics().getFeatures().get(0).getMean().getValue())
        .isCloseTo(6, within(1e-4));
  }

  /**
   * A statistics round needs no base model: after a fresh start whose topics hold a model of
   * another size (what an earlier query released; a start refuses that, this is the combiner's own
   * safety), round 3 is still released with this query's sums.
   */
  @Test
  void freshStart_overAModelOfAnotherSize_releasesThisQuerysSums() {
    JobSpec spec = spec(0);
    LedgerFloor floor =
        new LedgerFloor(
            dev.privagg.job.ledger.LedgerCodec.write(PrivacyLedger.of(PrivacyEvent.gaussian(0, 2))),
            2,
            false,
            2,
            new float[] {1, 2, 3});
    job.start(spec, NoiseSource.zero(), floor, 2 * TIMEOUT);
    job.read(
        update("a", 3, ClientStatistics.encode(spec.statistics(), new double[][] {{4}})),
        2 * TIMEOUT + 10);
    job.advanceTo(3 * TIMEOUT);
    assertThat(job.decided.models).hasSize(1);
    GlobalModel third = decoded(spec, 3, job.decided.models.get(0));
    assertThat(third.getStatistics().getCount().getValue()).isCloseTo(1, within(1e-5));
    assertThat(third.getStatistics().getFeatures().get(0).getMean().getValue())
        .isCloseTo(4, within(1e-4));
  }

  @Test
  void release_statesEachBlocksNoiseAndItsEpsilonAlone() {
    JobSpec spec = spec(2);
    PrivacyLedger charges = PrivacyLedger.of(PrivacyEvent.gaussian(2, 3));
    GlobalModel model =
        AvroCodec.decodeModel(
            Records.model(
                    spec,
                    3,
                    new float[spec.model().dimension()],
                    1.0,
                    1.0,
                    charges,
                    PrivacyEvent.gaussian(2, 1),
                    "seeded",
                    "d")
                .value);
    // count, x.sum, x.histogram weighted 1, 1, 2: x.sum has a quarter of the budget.
    StatisticsBlock sum = model.getStatistics().getBlocks().get(1);
    assertThat(sum.getName()).isEqualTo("x.sum");
    assertThat(sum.getShare()).isCloseTo(0.25, within(1e-15));
    assertThat(sum.getNoiseMultiplier()).isCloseTo(4, within(1e-12));
    // z R h / sqrt(share) = 2 * 2 * 5 / 0.5, over the client's headroom factor 1 - 2^-19
    assertThat(sum.getNoiseStd()).isCloseTo(40 / (1 - 0x1p-19), within(1e-9));
    double alone =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(4, 3)), 1e-5)
            .epsilon();
    assertThat(sum.getEpsilon()).isCloseTo(alone, within(1e-9));
    double whole = Accountant.named("rdp").epsilon(charges, 1e-5).epsilon();
    assertThat(sum.getEpsilon()).isLessThan(whole);
    // The ledger entry of the round records the same split of its charge.
    dev.privagg.avro.LedgerEntry entry =
        AvroCodec.decodeLedgerEntry(
            Records.ledger(
                    spec,
                    3,
                    dev.privagg.avro.LedgerOutcome.RELEASED,
                    PrivacyEvent.gaussian(2, 1),
                    whole,
                    4,
                    null,
                    null,
                    0,
                    "d")
                .value);
    assertThat(entry.getStatisticsSplit())
        .extracting(dev.privagg.avro.StatisticsShare::getName)
        .containsExactly("count", "x.sum", "x.histogram");
    assertThat(entry.getStatisticsSplit().get(1).getNoiseMultiplier()).isCloseTo(4, within(1e-12));
  }

  private static GlobalModel decoded(JobSpec spec, long round, float[] weights) {
    return AvroCodec.decodeModel(
        Records.model(
                spec,
                round,
                weights,
                0,
                1.0,
                PrivacyLedger.of(PrivacyEvent.gaussian(0, round)),
                PrivacyEvent.gaussian(0, 1),
                "zero",
                "d")
            .value);
  }
}
