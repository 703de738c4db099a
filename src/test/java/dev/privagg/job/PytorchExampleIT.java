package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.cli.CliTestAccess;
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
    // Chance is 0.1; 5 rounds of this configuration reach 0.7 to 0.9 in simulation.
    RoundLine last = rounds.get(rounds.size() - 1);
    assertThat(last.accuracy()).as(output).isGreaterThan(0.35);
    assertThat(output).contains("final: test accuracy");
  }
}
