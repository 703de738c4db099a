package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code privagg produce --rows}: what it refuses before it connects to anything. */
class ProduceRowsTest {
  @TempDir Path dir;

  private CliTest.Run produce(String csv, String... extra) throws Exception {
    Path rows = dir.resolve("rows.csv");
    Files.writeString(rows, csv);
    Path spec = dir.resolve("stats.yaml");
    Files.writeString(
        spec,
        """
        jobId: stats
        statistics:
          features:
            - {name: age, bounds: [0, 100], statistics: [mean]}
            - {name: bmi, bounds: [10, 60], statistics: [mean]}
        rounds: {timeout: 10s, expectedClients: 5}
        privacy: {noiseMultiplier: 1, delta: 1e-5, budgetEpsilon: 10}
        """);
    String[] args = {
      "produce",
      "--spec",
      spec.toString(),
      "--bootstrap-servers",
      "localhost:1",
      "--round",
      "1",
      "--client-id",
      "c",
      "--rows",
      rows.toString()
    };
    String[] all =
        java.util.stream.Stream.concat(
                java.util.Arrays.stream(args), java.util.Arrays.stream(extra))
            .toArray(String[]::new);
    return CliTest.run(all);
  }

  @Test
  void rows_withAHeaderThatIsNotTheFeatures_areRefusedNamingBoth() throws Exception {
    CliTest.Run run = produce("age,weight\n30,70\n");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err())
        .contains(
            "--rows: the header must name exactly the features [age, bmi], was [age, weight]");
  }

  @Test
  void rows_withANonNumber_areRefusedNamingLineAndFeature() throws Exception {
    CliTest.Run run = produce("bmi,age\n22.5,30\n24,old\n");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err())
        .contains("--rows: line 3, feature age: 'old' is not a finite decimal number");
  }

  @Test
  void rows_withNaNInfinityShortRowsOrAnOpenQuote_areRefusedNamingTheLine() throws Exception {
    assertThat(produce("age,bmi\n30,NaN\n").err())
        .contains("line 2, feature bmi: 'NaN' is not a finite decimal number");
    assertThat(produce("age,bmi\n30,1e999\n").err())
        .contains("line 2, feature bmi: '1e999' is not a finite decimal number");
    assertThat(produce("age,bmi\n30\n").err()).contains("line 2 has 1 values, the header names 2");
    assertThat(produce("age,bmi\n\"30,20\n").err()).contains("is not a CSV file with a header");
  }

  @Test
  void rows_withAByteOrderMarkSpacesAndBlankLines_readAsWritten() throws Exception {
    // Past the checks it tries to connect to localhost:1: the error is the broker's, not the
    // file's.
    CliTest.Run run = produce("\uFEFFage , bmi\n\n 30 , 20.5 \n\n");
    assertThat(run.err()).doesNotContain("--rows");
  }

  @Test
  void rowsAndFile_together_areRefused() throws Exception {
    CliTest.Run run = produce("age,bmi\n1,20\n", "--file", dir.resolve("u.json").toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("give exactly one of --file (an update) and --rows");
  }
}
