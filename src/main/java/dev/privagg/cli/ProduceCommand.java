package dev.privagg.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import dev.privagg.statistics.Feature;
import dev.privagg.statistics.StatisticsQuery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg produce}: send one client update read from a JSON file, or a client's rows. */
@Command(
    name = "produce",
    mixinStandardHelpOptions = true,
    description = {
      "Send one client update for a round, read from a JSON file (--file), or for a statistics"
          + " job this client's rows from a CSV file (--rows).",
      "--file format:",
      "  {\"tensors\": {\"weights\": [...], \"bias\": [...]}}  (float values, row-major, per tensor)",
      "--rows format: a header naming every feature of the spec's statistics section (any order),"
          + " then one row per line; the first statistics.maxRows rows are used, values clipped"
          + " into their bounds."
    })
final class ProduceCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @picocli.CommandLine.Mixin JobOptions job;

  @Option(
      names = "--round",
      required = true,
      description = "The announced round this update is for.")
  long round;

  @Option(names = "--client-id", required = true, description = "This client's id.")
  String clientId;

  @Option(names = "--file", paramLabel = "UPDATE.json", description = "The update.")
  Path file;

  @Option(
      names = "--rows",
      paramLabel = "ROWS.csv",
      description = "A statistics job's rows, with a header of feature names.")
  Path rows;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    if (round < 1) {
      throw flags.fail("--round must be >= 1 (round 0 is the initial model), was " + round);
    }
    if ((file == null) == (rows == null)) {
      throw flags.fail(
          "give exactly one of --file (an update) and --rows (a statistics job's rows)");
    }
    JobSpec jobSpec = job.read();
    if (rows != null) {
      if (!jobSpec.statisticsJob()) {
        throw flags.fail(
            "--rows is for a statistics job; job "
                + jobSpec.jobId()
                + " trains a model: use --file");
      }
      double[][] values = readRows(flags, jobSpec.statistics());
      try (PrivaggClient client = job.client(jobSpec, true)) {
        client.sendStatistics(round, clientId, values);
      }
      spec.commandLine()
          .getOut()
          .printf(
              "sent %d rows of %s (statistics.maxRows is %d) for round %d of job %s to %s%n",
              values.length,
              clientId,
              jobSpec.statistics().maxRows(),
              round,
              jobSpec.jobId(),
              jobSpec.topics().updates());
      return 0;
    }
    JsonNode tensors = new ObjectMapper().readTree(file.toFile()).get("tensors");
    if (tensors == null || !tensors.isObject()) {
      throw flags.fail(
          "--file must hold {\"tensors\": {name: [values...]}}, " + file + " does not");
    }
    float[][] values = new float[jobSpec.model().tensors().size()][];
    for (int t = 0; t < values.length; t++) {
      JobSpec.TensorSpec want = jobSpec.model().tensors().get(t);
      JsonNode array = tensors.get(want.name());
      if (array == null || !array.isArray() || array.size() != want.size()) {
        throw flags.fail(
            "--file: tensor '" + want.name() + "' must be an array of " + want.size() + " numbers");
      }
      values[t] = new float[want.size()];
      for (int i = 0; i < values[t].length; i++) {
        values[t][i] = (float) array.get(i).asDouble();
      }
    }
    try (PrivaggClient client = job.client(jobSpec, true)) {
      client.send(round, clientId, values);
    }
    spec.commandLine()
        .getOut()
        .printf(
            "sent the update of %s for round %d of job %s to %s%n",
            clientId, round, jobSpec.jobId(), jobSpec.topics().updates());
    return 0;
  }

  /**
   * The CSV's rows in the query's feature order, columns by header name (a UTF-8 byte-order mark,
   * blank lines and spaces around names and values ignored); every row is checked, only the first
   * maxRows are kept. Every value must be a finite decimal number.
   */
  private double[][] readRows(Flags flags, StatisticsQuery query) throws java.io.IOException {
    List<String> names = query.features().stream().map(Feature::name).toList();
    CSVFormat format =
        CSVFormat.RFC4180
            .builder()
            .setHeader()
            .setSkipHeaderRecord(true)
            .setIgnoreEmptyLines(true)
            .setTrim(true)
            .get();
    List<double[]> out = new ArrayList<>();
    long lines = 0;
    try (java.io.BufferedReader reader =
            java.nio.file.Files.newBufferedReader(rows, StandardCharsets.UTF_8);
        CSVParser parser = CSVParser.parse(skipByteOrderMark(reader), format)) {
      List<String> header = parser.getHeaderNames();
      if (!new java.util.HashSet<>(header).equals(new java.util.HashSet<>(names))
          || header.size() != names.size()) {
        throw flags.fail(
            "--rows: the header must name exactly the features " + names + ", was " + header);
      }
      for (CSVRecord record : parser) {
        lines = parser.getCurrentLineNumber();
        if (record.size() != header.size()) {
          throw flags.fail(
              "--rows: line "
                  + lines
                  + " has "
                  + record.size()
                  + " values, the header names "
                  + header.size());
        }
        double[] row = new double[names.size()];
        for (int i = 0; i < row.length; i++) {
          String text = record.get(names.get(i));
          row[i] = DECIMAL.matcher(text).matches() ? Double.parseDouble(text) : Double.NaN;
          if (!Double.isFinite(row[i])) {
            throw flags.fail(
                "--rows: line "
                    + lines
                    + ", feature "
                    + names.get(i)
                    + ": '"
                    + text
                    + "' is not a finite decimal number");
          }
        }
        if (out.size() < query.maxRows()) {
          out.add(row); // the client uses the first maxRows rows: the rest are only checked
        }
      }
      return out.toArray(double[][]::new);
    } catch (IllegalArgumentException | IllegalStateException | java.io.UncheckedIOException e) {
      throw flags.fail(
          "--rows: "
              + rows
              + " is not a CSV file with a header (line "
              + lines
              + " or after): "
              + e.getMessage());
    }
  }

  /** {@code reader} past a UTF-8 byte-order mark, as spreadsheets write one. */
  private static java.io.Reader skipByteOrderMark(java.io.BufferedReader reader)
      throws java.io.IOException {
    reader.mark(1);
    if (reader.read() != '\uFEFF') {
      reader.reset();
    }
    return reader;
  }

  private static final java.util.regex.Pattern DECIMAL =
      java.util.regex.Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");

  @Override
  public KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "send an update";
  }
}
