package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.FeatureStatistics;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.StatisticsBlock;
import dev.privagg.avro.StatisticsRelease;
import dev.privagg.cli.Main;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Tensors;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A statistics job end to end on a real broker and Flink: 30 Java clients send their rows with
 * {@link PrivaggClient#sendStatistics} and one with `privagg produce --rows`, a hostile client
 * sends a wrong shape, and the released round states the count, mean, stddev, histogram and
 * quantiles within their stated noise of the truth, each block's noise and epsilon as an
 * independent computation gives them, and `privagg consume --json` prints it. Each value check
 * allows 5 stated stds (false-failure rate about 6e-7 per check).
 */
class StatisticsJobIT extends KafkaFlinkTestBase {
  private static final double Z = 0.7;
  @TempDir Path dir;

  @Test
  void statisticsRound_releasesEveryStatisticWithinItsNoise_andConsumePrintsIt() throws Exception {
    String body =
        """
        statistics:
          maxRows: 4
          budgetWeights: {count: 1, sum: 1, sumOfSquares: 1, histogram: 2}
          features:
            - {name: age, bounds: [20, 80], statistics: [mean, stddev, variance]}
            - {name: score, bounds: [0, 10], statistics: [histogram, quantiles], bins: 5,
               quantiles: [0.5]}
        rounds:
          timeout: 20s
          expectedClients: 30
        privacy:
          noiseMultiplier: %s
          delta: 1.0e-5
          budgetEpsilon: 20
          noise: {source: seeded, seed: 11}
        """
            .formatted(Z);
    JobSpec spec = spec(body);
    startJob(spec, 2);
    awaitRound(spec, 1);

    SplittableRandom random = new SplittableRandom(5);
    List<double[]> kept = new ArrayList<>();
    try (PrivaggClient client = new PrivaggClient(spec, bootstrap)) {
      for (int c = 0; c < 30; c++) {
        // 1 to 6 rows; the client keeps the first 4, and clips ages of 90 and scores below 0.
        double[][] rows = new double[1 + random.nextInt(6)][];
        for (int r = 0; r < rows.length; r++) {
          rows[r] = new double[] {15 + 75 * random.nextDouble(), -1 + 12 * random.nextDouble()};
          if (r < 4) {
            kept.add(
                new double[] {
                  Math.min(80, Math.max(20, rows[r][0])), Math.min(10, Math.max(0, rows[r][1]))
                });
          }
        }
        client.sendStatistics(1, "client-" + c, rows);
      }
    }
    // One more client from the command line: its CSV names the features in another order.
    Path specFile = dir.resolve("stats.yaml");
    Files.writeString(specFile, "jobId: " + spec.jobId() + "\n" + body + topics(spec));
    Path csv = dir.resolve("rows.csv");
    Files.writeString(csv, "score,age\n2.5,33\n9.5,71\n");
    kept.add(new double[] {33, 2.5});
    kept.add(new double[] {71, 9.5});
    StringWriter produced = new StringWriter();
    StringWriter produceErr = new StringWriter();
    int sent =
        Main.execute(
            new String[] {
              "produce",
              "--spec",
              specFile.toString(),
              "--bootstrap-servers",
              bootstrap,
              "--round",
              "1",
              "--client-id",
              "cli-client",
              "--rows",
              csv.toString()
            },
            new PrintWriter(produced),
            new PrintWriter(produceErr));
    assertThat(sent).as(produceErr.toString()).isZero();
    assertThat(produced.toString()).contains("sent 2 rows of cli-client");
    // A hostile client sending only a count of a billion rows: rejected with a reason.
    produce(
        spec.topics().updates(),
        "hostile",
        AvroCodec.encode(
            new ClientUpdate(
                spec.jobId(),
                1L,
                "hostile",
                List.of(Tensors.of("count", new int[] {1}, 1, new float[] {1e9f}, 0)),
                null)));

    GlobalModel released = awaitModel(spec, 1);
    StatisticsRelease s = released.getStatistics();
    assertThat(s).isNotNull();
    double n = kept.size();
    double[] ages = kept.stream().mapToDouble(r -> r[0]).toArray();
    double mean = Arrays.stream(ages).average().orElseThrow();
    double variance = Arrays.stream(ages).map(a -> (a - mean) * (a - mean)).sum() / n;

    // Independent computation of each block's noise: z * Delta / sqrt(share), R = 4, weights
    // count 1, age.sum 1, age.sumOfSquares 1, score.histogram 2 (shares 1/5, 1/5, 1/5, 2/5).
    double headroom = 1 - 0x1p-19;
    double countStd = Z * 4 / Math.sqrt(0.2) / headroom;
    double sumStd = Z * 4 * 30 / Math.sqrt(0.2) / headroom;
    double histogramStd = Z * 4 / Math.sqrt(0.4) / headroom;
    List<StatisticsBlock> blocks = s.getBlocks();
    assertThat(blocks.get(0).getNoiseStd()).isCloseTo(countStd, within(1e-9));
    assertThat(blocks.get(1).getNoiseStd()).isCloseTo(sumStd, within(1e-9));
    assertThat(blocks.get(3).getNoiseStd()).isCloseTo(histogramStd, within(1e-9));
    double aloneEpsilon =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(Z / Math.sqrt(0.4), 1)), 1e-5)
            .epsilon();
    assertThat(blocks.get(3).getEpsilon()).isCloseTo(aloneEpsilon, within(1e-9));
    double whole =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(Z, 1)), 1e-5)
            .epsilon();
    assertThat(released.getPrivacy().getEpsilon()).isCloseTo(whole, within(1e-9));

    assertThat(s.getCount().getStd()).isCloseTo(countStd, within(1e-9));
    assertThat(s.getCount().getValue()).isCloseTo(n, within(5 * countStd));
    FeatureStatistics age = s.getFeatures().get(0);
    assertThat(age.getMean().getValue()).isCloseTo(mean, within(5 * age.getMean().getStd()));
    assertThat(age.getVariance().getValue())
        .isCloseTo(variance, within(5 * age.getVariance().getStd()));
    assertThat(age.getStddev().getValue()).isBetween(0.0, 30.0);
    FeatureStatistics score = s.getFeatures().get(1);
    assertThat(score.getHistogram()).hasSize(5);
    for (int j = 0; j < 5; j++) {
      double lo = 2.0 * j;
      double hi = 2.0 * (j + 1);
      boolean last = j == 4;
      long truth = kept.stream().filter(r -> r[1] >= lo && (last ? r[1] <= hi : r[1] < hi)).count();
      assertThat(score.getHistogram().get(j).getValue())
          .as("bin %d", j)
          .isCloseTo(truth, within(5 * histogramStd));
    }
    assertThat(score.getQuantiles()).hasSize(1);
    assertThat(score.getMean()).isNull();

    // The ledger records how round 1's charge splits over the sums.
    dev.privagg.avro.LedgerEntry charged =
        ledgerUntil(
                spec,
                l -> l.stream().anyMatch(e -> e.getRound() == 1 && e.getStatisticsSplit() != null),
                Duration.ofSeconds(60))
            .stream()
            .filter(e -> e.getRound() == 1 && e.getStatisticsSplit() != null)
            .findFirst()
            .orElseThrow();
    assertThat(charged.getStatisticsSplit()).hasSize(4);
    assertThat(charged.getStatisticsSplit().get(3).getShare()).isCloseTo(0.4, within(1e-12));
    assertThat(charged.getStatisticsSplit().get(3).getNoiseMultiplier())
        .isCloseTo(Z / Math.sqrt(0.4), within(1e-9));
    List<RejectedUpdate> rejects = rejectsUntil(spec, l -> !l.isEmpty(), Duration.ofSeconds(60));
    assertThat(rejects.get(0).getReason()).isEqualTo(RejectReason.WRONG_TENSORS);

    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        Main.execute(
            new String[] {
              "consume",
              "--spec",
              specFile.toString(),
              "--bootstrap-servers",
              bootstrap,
              "--until-round",
              "1",
              "--json"
            },
            new PrintWriter(out),
            new PrintWriter(err));
    assertThat(code).as(err.toString()).isZero();
    JsonNode last =
        new ObjectMapper().readTree(out.toString().lines().reduce((a, b) -> b).orElseThrow());
    assertThat(last.get("round").asLong()).isEqualTo(1);
    assertThat(last.at("/statistics/count/value").asDouble()).isEqualTo(s.getCount().getValue());
    assertThat(last.at("/statistics/features/1/quantiles/0/level").asDouble()).isEqualTo(0.5);
  }

  private static String topics(JobSpec spec) {
    JobSpec.Topics t = spec.topics();
    return "topics:\n  updates: %s\n  models: %s\n  rounds: %s\n  ledger: %s\n  rejects: %s\n  secure: %s\n"
        .formatted(t.updates(), t.models(), t.rounds(), t.ledger(), t.rejects(), t.secure());
  }
}
