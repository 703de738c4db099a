package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CliTest {
  private final ObjectMapper json = new ObjectMapper();

  record Run(int exitCode, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out), new PrintWriter(err));
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void epsilon_json_printsEpsilonAndOrder() throws Exception {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "1.3",
            "--sampling-rate",
            "0.0025",
            "--rounds",
            "6000",
            "--delta",
            "1e-5",
            "--json");
    assertThat(run.exitCode()).isZero();
    JsonNode node = json.readTree(run.out());
    assertThat(node.get("epsilon").asDouble()).isCloseTo(0.72422340261, withinPercentage(1e-6));
    assertThat(node.get("order").asDouble()).isEqualTo(19.0);
  }

  @Test
  void epsilon_ofDistributedNoise_isTheRenyiBoundOfItsDominatingGaussian() throws Exception {
    String[] common = {
      "epsilon",
      "--noise-multiplier",
      "6.682",
      "--sampling-rate",
      "1",
      "--rounds",
      "30",
      "--delta",
      "1e-5",
      "--json"
    };
    Run gaussian = run(common);
    String[] distributed = java.util.Arrays.copyOf(common, common.length + 2);
    distributed[common.length] = "--mechanism";
    distributed[common.length + 1] = "distributed-discrete-gaussian";
    Run ddg = run(distributed);
    assertThat(ddg.exitCode()).isZero();
    assertThat(json.readTree(ddg.out()).get("epsilon").asDouble())
        .isEqualTo(json.readTree(gaussian.out()).get("epsilon").asDouble());
    Run status =
        run(
            "budget-calc",
            "--noise-multiplier",
            "6.682",
            "--sampling-rate",
            "1",
            "--mechanism",
            "distributed-discrete-gaussian",
            "--rounds-done",
            "10",
            "--budget-epsilon",
            "4",
            "--delta",
            "1e-5");
    assertThat(status.exitCode()).as(status.err()).isZero();
    assertThat(status.out()).contains("rdp").doesNotContain("pld").doesNotContain("basic");
  }

  @Test
  void epsilon_text_namesTheBestOrder() {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "1.3",
            "--sampling-rate",
            "0.0025",
            "--rounds",
            "6000",
            "--delta",
            "1e-5");
    assertThat(run.out()).contains("epsilon 0.724223").contains("best order 19");
  }

  @Test
  void epsilon_customOrders_replaceTheDefaults() throws Exception {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "1.3",
            "--sampling-rate",
            "0.0025",
            "--rounds",
            "6000",
            "--delta",
            "1e-5",
            "--orders",
            "2,4.5,8",
            "--json");
    assertThat(json.readTree(run.out()).get("order").asDouble()).isIn(2.0, 4.5, 8.0);
  }

  @Test
  void epsilon_advanced_hasNoOrder_andIsLooser() throws Exception {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "1.3",
            "--sampling-rate",
            "0.0025",
            "--rounds",
            "6000",
            "--delta",
            "1e-5",
            "--accountant",
            "advanced",
            "--json");
    JsonNode node = json.readTree(run.out());
    assertThat(node.get("order").isNull()).isTrue();
    assertThat(node.get("epsilon").asDouble()).isGreaterThan(0.7243);
  }

  @Test
  void epsilon_pld_hasNoOrder_andIsTighterThanRdp() throws Exception {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.0042666666666666667",
            "--rounds",
            "14062",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json");
    JsonNode node = json.readTree(run.out());
    assertThat(node.get("order").isNull()).isTrue();
    // RDP gives 2.597 here; dp_accounting's PLD 2.3817 (see PldAccountantTest)
    assertThat(node.get("epsilon").asDouble()).isBetween(2.3816, 2.3830);
  }

  @Test
  void plan_json_printsANoiseMultiplierWithinTarget() throws Exception {
    Run run =
        run(
            "plan",
            "--target-epsilon",
            "1",
            "--delta",
            "1e-5",
            "--rounds",
            "6000",
            "--sampling-rate",
            "0.0025",
            "--json");
    double z = json.readTree(run.out()).get("noiseMultiplier").asDouble();
    Run check =
        run(
            "epsilon",
            "--noise-multiplier",
            Double.toString(z),
            "--sampling-rate",
            "0.0025",
            "--rounds",
            "6000",
            "--delta",
            "1e-5",
            "--json");
    assertThat(json.readTree(check.out()).get("epsilon").asDouble()).isLessThanOrEqualTo(1.0);
  }

  /** Refused before any broker starts: the embedded broker's flags go without a broker's. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--bootstrap-servers localhost:9092 --embedded-kafka-port 19092"
            + " | --embedded-kafka-port applies only without --bootstrap-servers",
        "--kafka-properties client.properties"
            + " | --kafka-properties needs --bootstrap-servers: the embedded broker is plaintext",
        "--embedded-kafka-port 0 | --embedded-kafka-port must be in [1, 65535], was 0",
        "--embedded-kafka-port 65536 | --embedded-kafka-port must be in [1, 65535], was 65536"
      })
  void run_embeddedBrokerFlags_refusedWithTheirRule(String flags, String message) {
    java.util.List<String> args =
        new java.util.ArrayList<>(java.util.List.of("run", "--spec", "missing.yaml"));
    args.addAll(java.util.List.of(flags.split(" ")));
    Run run = run(args.toArray(String[]::new));
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith(message);
  }

  /** A deleted kafka directory beside an earlier run's checkpoints: the ledger is gone. */
  @Test
  void run_stateDirWithCheckpointsButNoBroker_refusesANewBroker() throws Exception {
    java.nio.file.Path state = java.nio.file.Files.createTempDirectory("privagg-state");
    java.nio.file.Files.createDirectories(state.resolve("checkpoints/3f1e"));
    Run run =
        run(
            "run",
            "--spec",
            "jobs/digits-softmax.yaml",
            "--state-dir",
            state.toString(),
            "--embedded-kafka-port",
            "19994");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err())
        .contains("holds an earlier run's checkpoints but no embedded broker data")
        .contains("budget again from zero");
    assertThat(state.resolve("kafka")).doesNotExist();
  }

  @Test
  void sigma_json_analyticByDefault() throws Exception {
    Run run = run("sigma", "--epsilon", "1", "--delta", "1e-5", "--json");
    assertThat(json.readTree(run.out()).get("sigma").asDouble())
        .isCloseTo(3.7306, withinPercentage(0.01));
  }

  @Test
  void sigma_classic_refusesEpsilonOne_namingAnalytic() {
    Run run = run("sigma", "--epsilon", "1", "--delta", "1e-5", "--calibration", "classic");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .contains("--epsilon must be < 1 with --calibration classic")
        .contains("--calibration analytic");
  }

  @ParameterizedTest
  @CsvSource({
    "--noise-multiplier, -1, '--noise-multiplier must be >= 0 and finite, was -1.0'",
    "--noise-multiplier, NaN, '--noise-multiplier must be >= 0 and finite, was NaN'",
    "--sampling-rate, 0, '--sampling-rate must be in (0, 1], was 0.0'",
    "--sampling-rate, 1.5, '--sampling-rate must be in (0, 1], was 1.5'",
    "--rounds, 0, '--rounds must be >= 1, was 0'",
    "--delta, 1, '--delta must be in (0, 1), was 1.0'",
    "--delta, NaN, '--delta must be in (0, 1), was NaN'"
  })
  void epsilon_badArgument_exitsNonZero_namingFlagAndRange(
      String flag, String value, String message) {
    String[] args = {
      "epsilon",
      "--noise-multiplier",
      "1",
      "--sampling-rate",
      "0.1",
      "--rounds",
      "10",
      "--delta",
      "1e-5"
    };
    for (int i = 1; i < args.length; i += 2) {
      if (args[i].equals(flag)) {
        args[i + 1] = value;
      }
    }
    Run run = run(args);
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith(message);
  }

  /** Each refused before a broker starts or a client trains: the message names flag and fix. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "simulate --clip-lr 0.3 | --clip-lr tunes adaptive clipping: add --adaptive-clipping"
            + " QUANTILE (e.g. 0.5), or drop it",
        "simulate --clip-count-noise 2 | --clip-count-noise tunes adaptive clipping",
        "simulate --adaptive-clipping 1 | --adaptive-clipping must be in (0, 1)",
        "simulate --adaptive-clipping 0.5 --local-noise-epsilon 8 | --local-noise-epsilon clips"
            + " each update to the fixed --clip-norm",
        "simulate --server-optimizer lamb | --server-optimizer must be one of sgd, avgm, adam or"
            + " yogi, was 'lamb'",
        "simulate --server-beta1 0.8 | --server-beta1 is FedAdam's and FedYogi's: add"
            + " --server-optimizer adam or yogi, or drop it (was sgd)",
        "simulate --server-optimizer adam --server-momentum 0.9 | --server-momentum is FedAvgM's:"
            + " add --server-optimizer avgm",
        "simulate --server-optimizer yogi --server-beta2 1 | --server-beta2 must be in [0, 1),"
            + " was 1.0",
        "simulate --server-lr 0 | --server-lr must be > 0 and finite, was 0.0",
        "simulate --aggregation sealed | --aggregation must be plaintext or secure, was 'sealed'",
        "simulate --aggregation secure | --aggregation secure: the six phases each wait for a"
            + " checkpoint; give --round-timeout-ms 8000 or more (was 1500)",
        "simulate --aggregation secure --round-timeout-ms 9000 --adaptive-clipping 0.5 |"
            + " --aggregation secure: clients clip themselves to a fixed C; drop"
            + " --adaptive-clipping",
        "evaluate --target-epsilon 4 | --target-epsilon sets the epsilon of a comparison: add"
            + " --variants",
        "evaluate --variants fixed-sgd,adam | --variants: variant 'adam' must read"
            + " CLIPPING-OPTIMIZER[:SERVER_LR]",
        "evaluate --variants fixed-sgd,FIXED-sgd | --variants names fixed-sgd twice",
        "evaluate --variants fixed-sgd --noise-multipliers 1 | --noise-multipliers belongs to the"
            + " noise sweep",
        "evaluate --variants fixed-adam --server-lr 0.1 | --server-lr: with --variants each variant"
            + " names its optimizer and server learning rate, e.g. fixed-adam:0.03",
        "evaluate --variants fixed-sgd,adaptive-sgd --adaptive-clipping 0 | --adaptive-clipping"
            + " must be in (0, 1)",
        "simulate --min-separation 5 | --min-separation is the participation schema of check-in"
            + " clients: add --sampling checkin, or drop it",
        "simulate --sampling checkin --clients 100 --cohort 20 --min-separation 6 | --min-separation"
            + " 6 and --max-participations 25 leave fewer than --cohort 20 eligible clients in round"
            + " 6 (seed 1): lower --min-separation (at most clients / cohort = 5",
        "simulate --sampling checkin --max-participations 0 | --max-participations must be >= 1,"
            + " was 0",
        "evaluate --mechanisms blt,ftrl | --mechanisms must name some of blt, independent-k,"
            + " poisson, bandmf, had 'ftrl'",
        "evaluate --mechanisms poisson,poisson | --mechanisms names poisson twice",
        "evaluate --distributed-bits 16 --cohort 5 | --cohort does not go with --distributed-bits",
        "epsilon --noise-multiplier 2 --sampling-rate 0.5 --rounds 3 --delta 1e-5 --mechanism"
            + " distributed-discrete-gaussian | --mechanism distributed-discrete-gaussian is"
            + " charged without amplification: give --sampling-rate 1, was 0.5",
        "epsilon --noise-multiplier 2 --sampling-rate 1 --rounds 3 --delta 1e-5 --mechanism"
            + " distributed-discrete-gaussian --accountant pld | --accountant pld: the ledger holds"
            + " DISTRIBUTED_DISCRETE_GAUSSIAN rounds",
        "epsilon --noise-multiplier 2 --sampling-rate 1 --rounds 3 --delta 1e-5 --mechanism"
            + " skellam | --mechanism must be gaussian or distributed-discrete-gaussian, was"
            + " 'skellam'",
        "evaluate --distributed-bits 16,16 | --distributed-bits lists 16 twice",
        "evaluate --dropout-rate 0.1 | --dropout-rate belongs to --distributed-bits",
        "evaluate --distributed-bits 16 --dropout-rate 1 | --dropout-rate must be in [0, 1), was"
            + " 1.0",
        "evaluate --distributed-bits 7 | --distributed-bits must list word sizes from 8 to 32, had"
            + " 7",
        "evaluate --distributed-bits 12 --clients 1000 | --distributed-bits distributed-12:"
            + " simulation: aggregation.bitsPerCoordinate 12-bit words cannot hold the sum of"
            + " rounds.maxClients = 1000 inputs",
        "evaluate --mechanisms blt --min-separation 2 | --mechanisms blt: the job takes keyed or"
            + " seeded noise for it, and a simulation seeded: add --noise-source seeded",
        "simulate --mechanism bandmf --target-epsilon 4 | --mechanism bandmf: mechanism bandmf"
            + " needs sampling server",
        "evaluate --mechanisms poisson | --mechanisms compares under a participation schema: give"
            + " --min-separation B and --max-participations K",
        "evaluate --mechanisms poisson --sampling client | --sampling does not go with"
            + " --mechanisms",
        "evaluate --mechanisms poisson --variants fixed-sgd | --variants does not go with"
            + " --mechanisms",
        "evaluate --bands 3 | --bands fixes bandmf's band count: add --mechanisms with bandmf",
        "evaluate --mechanisms poisson --bands 3 --min-separation 5 --max-participations 2 |"
            + " --bands fixes bandmf's band count: add bandmf to --mechanisms",
        "evaluate --mechanisms bandmf --bands 0 --noise-source seeded --min-separation 5"
            + " --max-participations 2 | --bands must be >= 1, was 0",
        "evaluate --mechanisms bandmf --bands 6 --noise-source seeded --min-separation 2"
            + " --max-participations 25 | --mechanisms bandmf: bandmf: privacy.bandmf.bands must be"
            + " in [1, 5]",
        "simulate --bands 2 | --bands fixes bandmf's band count: add --mechanism bandmf",
        "simulate --mechanism bandmf --sampling server --noise-source seeded --bands 0 | --bands"
            + " must be >= 1, was 0",
        "simulate --mechanism blt | --mechanism blt: the job takes no sampled rounds; add"
            + " --sampling checkin",
        "simulate --mechanism blt --sampling checkin --min-separation 5 | --mechanism blt: the"
            + " BLT job takes keyed or seeded noise",
        "simulate --mechanism ftrl | --mechanism must be independent, blt, bandmf or"
            + " distributed-discrete-gaussian, was 'ftrl'",
        "simulate --mechanism distributed-discrete-gaussian | --mechanism"
            + " distributed-discrete-gaussian: the clients add their noise before masking; add"
            + " --aggregation secure",
      })
  void simulationFlags_badCombination_failsBeforeWork_namingFlagAndFix(
      String args, String message) {
    Run run = run(args.split(" "));
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith(message);
    assertThat(run.out()).doesNotContain("starting an in-process Kafka broker");
  }

  @Test
  void evaluate_help_describesTheComparison() {
    Run run = run("evaluate", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("--variants=CLIPPING-OPTIMIZER[:SERVER_LR]")
        .contains("--target-epsilon")
        .contains("--adaptive-clipping=QUANTILE")
        .contains("--server-optimizer")
        .contains("--mechanisms=MECHANISM")
        .contains("--min-separation=B")
        .contains("--max-participations=K");
  }

  @Test
  void planBlt_isTheWholeRunsGaussian_whichEpsilonReproducesAtTheTarget() throws Exception {
    Run run =
        run(
            "plan",
            "--mechanism",
            "blt",
            "--rounds",
            "1000",
            "--min-sep",
            "5",
            "--max-participations",
            "2",
            "--buffers",
            "2",
            "--target-epsilon",
            "4",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json");
    var node = json.readTree(run.out());
    double z = node.get("noiseMultiplier").asDouble();
    assertThat(node.get("sensitivity").asDouble()).isGreaterThan(1).isLessThan(Math.sqrt(2) * 3);
    // One Gaussian mechanism with multiplier z: epsilon with one round and no sampling.
    Run check =
        run(
            "epsilon",
            "--noise-multiplier",
            Double.toString(z),
            "--sampling-rate",
            "1",
            "--rounds",
            "1",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json");
    assertThat(json.readTree(check.out()).get("epsilon").asDouble()).isBetween(3.999, 4.0);
  }

  @Test
  void planBlt_refusesSamplingAndNeedsItsSchema() {
    Run sampled =
        run(
            "plan",
            "--mechanism",
            "blt",
            "--rounds",
            "100",
            "--max-participations",
            "2",
            "--target-epsilon",
            "4",
            "--delta",
            "1e-5",
            "--sampling-rate",
            "0.1");
    assertThat(sampled.exitCode()).isEqualTo(2);
    assertThat(sampled.err()).startsWith("--sampling-rate does not apply to blt");
    Run schemaless =
        run(
            "plan",
            "--mechanism",
            "blt",
            "--rounds",
            "100",
            "--target-epsilon",
            "4",
            "--delta",
            "1e-5");
    assertThat(schemaless.err()).startsWith("--max-participations is required");
    Run independent =
        run(
            "plan",
            "--rounds",
            "100",
            "--target-epsilon",
            "4",
            "--delta",
            "1e-5",
            "--min-sep",
            "3",
            "--sampling-rate",
            "0.1");
    assertThat(independent.err()).startsWith("--min-sep, --max-participations and --buffers");
  }

  @Test
  void plan_zeroTarget_exitsNonZero() {
    Run run =
        run(
            "plan",
            "--target-epsilon",
            "0",
            "--delta",
            "1e-5",
            "--rounds",
            "10",
            "--sampling-rate",
            "0.1");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith("--target-epsilon must be > 0 and finite, was 0.0");
  }

  @Test
  void budgetCalc_showsEachAccountant_andHowMuchLooserThanRdp() throws Exception {
    Run run =
        run(
            "budget-calc",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.2",
            "--rounds-done",
            "10",
            "--budget-epsilon",
            "20",
            "--delta",
            "1e-5",
            "--json");
    JsonNode rows = json.readTree(run.out()).get("accountants");
    assertThat(rows).hasSize(4);
    assertThat(rows.get(0).get("accountant").asText()).isEqualTo("rdp");
    assertThat(rows.get(0).get("looserThanRdp").asDouble()).isEqualTo(1.0);
    assertThat(rows.get(1).get("accountant").asText()).isEqualTo("pld");
    assertThat(rows.get(1).get("looserThanRdp").asDouble()).isLessThan(1.0);
    assertThat(rows.get(1).get("roundsRemaining").asLong())
        .isGreaterThan(rows.get(0).get("roundsRemaining").asLong());
    assertThat(rows.get(2).get("looserThanRdp").asDouble()).isGreaterThan(1.0);
    assertThat(rows.get(0).get("roundsRemaining").asLong())
        .isGreaterThan(rows.get(3).get("roundsRemaining").asLong());
  }

  @Test
  void scriptableCommands_offerJson() {
    for (String command :
        new String[] {
          "epsilon",
          "plan",
          "sigma",
          "budget-calc",
          "jobs",
          "submit",
          "savepoint",
          "cancel",
          "simulate",
          "evaluate"
        }) {
      assertThat(run(command, "--help").out()).as(command).contains("--json");
    }
  }

  @Test
  void everyCommand_hasHelp() {
    for (String command : new String[] {"epsilon", "plan", "sigma", "budget-calc"}) {
      Run run = run(command, "--help");
      assertThat(run.exitCode()).isZero();
      assertThat(run.out()).contains("Usage: privagg " + command);
    }
    assertThat(run("--help").out()).contains("epsilon", "plan", "sigma", "budget-calc", "status");
  }

  @Test
  void aWrongOption_printsTheErrorAndWhereToLook_notTheUsage() {
    Run run = run("epsilon", "--noise-multiplier", "x");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("Invalid value for option '--noise-multiplier': 'x' is not a double")
        .contains("Try 'privagg epsilon --help' for the options.")
        .doesNotContain("Usage:");
    assertThat(run.err().lines().count()).isLessThanOrEqualTo(3);
  }

  @Test
  void version_isTheProjects() {
    Run run = run("--version");
    assertThat(run.out()).startsWith("privagg 0.").doesNotContain("dev");
  }

  @Test
  void epsilonWithoutNoise_namesNoBestOrder() {
    Run run =
        run(
            "epsilon",
            "--noise-multiplier",
            "0",
            "--sampling-rate",
            "0.1",
            "--rounds",
            "10",
            "--delta",
            "1e-5");
    assertThat(run.out()).contains("epsilon Infinity").doesNotContain("order");
  }

  @Test
  void helpTexts_endTheirSentences_andCancelPointsToSavepointStop() {
    String top = run("--help").out();
    // The summary in the command list is the description's first line: a whole sentence.
    assertThat(top).contains("side by side in one process.\n");
    assertThat(run("secagg-cost", "--help").out()).contains("one process.\nNo Kafka, no Flink");
    assertThat(run("cancel", "--help").out()).contains("savepoint --stop");
  }

  @Test
  void durations_takeTheSpecSyntax_andIso() {
    DurationConverter c = new DurationConverter();
    assertThat(c.convert("5s")).isEqualTo(java.time.Duration.ofSeconds(5));
    assertThat(c.convert("250ms")).isEqualTo(java.time.Duration.ofMillis(250));
    assertThat(c.convert("2m")).isEqualTo(java.time.Duration.ofMinutes(2));
    assertThat(c.convert("PT5S")).isEqualTo(java.time.Duration.ofSeconds(5));
    Run run = run("audit", "--idle", "5x", "--spec", "nowhere.yaml");
    assertThat(run.err()).contains("'5x' is not a duration: use 500ms, 30s, 2m or 1h");
  }
}
