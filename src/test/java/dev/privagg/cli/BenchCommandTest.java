package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.bench.BenchSetting;
import dev.privagg.bench.NoiseMechanismKind;
import dev.privagg.bench.StateBackendKind;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code privagg bench}'s flags, parsed into its grid without running it. */
class BenchCommandTest {
  private static BenchCommand parse(String... args) {
    BenchCommand command = new BenchCommand();
    new CommandLine(command).parseArgs(args);
    return command;
  }

  @Test
  void mechanisms_areOneMoreAxis_runBackToBackPerSetting() {
    List<BenchSetting> grid =
        parse(
                "--dimensions",
                "10000,8000000",
                "--clients",
                "10",
                "--parallelism",
                "2",
                "--mechanisms",
                "independent,blt")
            .settings();
    assertThat(grid)
        .containsExactly(
            new BenchSetting(
                10_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.INDEPENDENT),
            new BenchSetting(10_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT),
            new BenchSetting(
                8_000_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.INDEPENDENT),
            new BenchSetting(
                8_000_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT));
  }

  @Test
  void mechanisms_defaultToIndependent_soTheGridIsAsBefore() {
    List<BenchSetting> grid = parse("--dimensions", "10000", "--clients", "10,100").settings();
    assertThat(grid)
        .containsExactly(new BenchSetting(10_000, 10), new BenchSetting(10_000, 100))
        .allMatch(s -> s.mechanism() == NoiseMechanismKind.INDEPENDENT);
  }

  @Test
  void unknownMechanism_isRefusedBeforeAnythingStarts_namingTheFlag() {
    CliTest.Run run = CliTest.run("bench", "--dimensions", "10000", "--mechanisms", "blt,laplace");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--mechanisms must be independent or blt, was 'laplace'");
    assertThat(run.out()).doesNotContain("starting a Kafka broker");
  }

  @Test
  void help_namesTheMechanismsFlag() {
    CliTest.Run run = CliTest.run("bench", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("--mechanisms=independent|blt");
  }
}
