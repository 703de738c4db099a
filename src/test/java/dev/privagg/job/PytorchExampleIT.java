package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.cli.CliTestAccess;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The PyTorch example ({@code examples/pytorch}) in a small configuration: 4 client processes x 5
 * rounds of the example's own spec, through the real broker and job.
 */
class PytorchExampleIT extends KafkaFlinkTestBase {
  private static final Path SPEC = Path.of("examples", "pytorch", "digits-mlp.yaml");
  private static final Pattern ROUND =
      Pattern.compile(
          "round (\\d+): test accuracy ([0-9.]+), epsilon ([0-9.]+) \\(delta 1e-05\\), (\\d) of 4"
              + " clients sent");

  /** The clients' DP-SGD statement on a round's line and the final one. */
  private static final Pattern SAMPLE_LEVEL =
      Pattern.compile("sample-level epsilon \\(DP-SGD, one example of a client\\) ([0-9.]+)");

  private record RoundLine(long round, double accuracy, double epsilon, int senders) {}

  @Test
  void fourClientProcesses_trainBeyondChance_andEpsilonIsTheAccountants() throws Exception {
    Path python = PythonEnvironment.python();
    JobSpec spec = JobSpecReader.parse(SPEC.toString(), Files.readString(SPEC));
    startJob(spec, 1);

    String output =
        PythonEnvironment.run(
            List.of(
                python.toString(),
                "examples/pytorch/federated_digits.py",
                "--bootstrap-servers",
                bootstrap,
                "--clients",
                "4",
                "--rounds",
                "5",
                "--timeout",
                "200"),
            Map.of(),
            Path.of("target", "pytorch-example.log"),
            240);

    List<RoundLine> rounds = new ArrayList<>();
    Matcher m = ROUND.matcher(output);
    while (m.find()) {
      rounds.add(
          new RoundLine(
              Long.parseLong(m.group(1)),
              Double.parseDouble(m.group(2)),
              Double.parseDouble(m.group(3)),
              Integer.parseInt(m.group(4))));
    }
    assertThat(rounds).as(output).hasSizeGreaterThanOrEqualTo(5);
    assertThat(rounds.stream().mapToInt(RoundLine::senders).sum()).as(output).isEqualTo(4 * 5);
    double z = spec.privacy().noiseMultiplier();
    for (int i = 0; i < rounds.size(); i++) {
      RoundLine r = rounds.get(i);
      // Every released round is charged, also those before the clients joined: no sampling.
      assertThat(r.epsilon())
          .as("epsilon of round %d", r.round())
          .isCloseTo(CliTestAccess.epsilon(z, 1.0, r.round(), 1e-5), within(1e-4));
      if (i > 0) {
        assertThat(r.epsilon()).isGreaterThan(rounds.get(i - 1).epsilon());
      }
    }
    // Chance is 0.1; 5 rounds of this configuration, DP-SGD on the clients and the job's noise,
    // reached 0.49 and 0.63 in two seeds of an offline simulation.
    RoundLine last = rounds.get(rounds.size() - 1);
    assertThat(last.accuracy()).as(output).isGreaterThan(0.3);
    assertThat(output).contains("final: test accuracy");

    // Each client ran DP-SGD (z 1, expected batch 64, 2 epochs a round): after 5 rounds its
    // examples spent 5 ceil(2 n / 64) sampled Gaussians at q = 64 / n; the smallest shard (359 of
    // the 1,438 training images) spends the most, and the launcher reports the largest.
    List<Double> sampleLevel = new ArrayList<>();
    Matcher s = SAMPLE_LEVEL.matcher(output);
    while (s.find()) {
      sampleLevel.add(Double.parseDouble(s.group(1)));
    }
    assertThat(sampleLevel).as(output).hasSizeGreaterThanOrEqualTo(6).isSorted();
    int shard = 1438 / 4;
    long steps = 5 * (long) Math.ceil(2.0 * shard / 64);
    double expected =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.0, 64.0 / shard, steps)), 1e-5)
            .epsilon();
    assertThat(sampleLevel.get(sampleLevel.size() - 1))
        .as("the final sample-level epsilon (printed to 4 decimals) vs the Java accountant's")
        .isCloseTo(expected, within(5e-5));
  }
}
