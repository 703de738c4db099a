package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportsTest {
  /** A value a hostile client could choose as its id: comma, quotes and a line break. */
  private static final String HOSTILE = "client,\"7\"\nrun,round";

  @Test
  void csv_quotesCommaQuoteAndNewline_perRfc4180(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("out/rounds.csv");
    Reports.csv(file, List.of("run", "round", "note"), List.of(Arrays.asList(HOSTILE, 3, null)));

    assertThat(Files.readString(file))
        .isEqualTo("run,round,note\r\n\"client,\"\"7\"\"\nrun,round\",3,\r\n");
  }

  @Test
  void csv_roundTripsThroughAParser(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("evaluation.csv");
    Reports.csv(
        file,
        List.of("cohort", "label"),
        List.of(List.of(20, HOSTILE), List.of(40, "plain"), List.of(60, " padded, \"\" ")));

    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8);
        CSVParser parser = CSVFormat.RFC4180.parse(in)) {
      List<List<String>> records = parser.stream().map(CSVRecord::toList).toList();
      assertThat(records)
          .containsExactly(
              List.of("cohort", "label"),
              List.of("20", HOSTILE),
              List.of("40", "plain"),
              List.of("60", " padded, \"\" "));
    }
  }
}
