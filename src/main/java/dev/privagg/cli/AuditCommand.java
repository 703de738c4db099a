package dev.privagg.cli;

import dev.privagg.audit.AuditReport;
import dev.privagg.audit.CanaryScorer;
import dev.privagg.audit.CanarySet;
import dev.privagg.avro.GlobalModel;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.AuditPlot;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg audit}: the canaries' empirical epsilon next to the ledger's analytic one. */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description = {
      "Audit a job's released models with the canaries privagg canaries inserted.",
      "Reads every model on the models topic (read_committed), scores each canary and each"
          + " unseen canary against every round's model delta, and reports Andrew et al.'s"
          + " one-shot epsilon-hat, the equal-spread estimate (one pooled spread, as a correct"
          + " Gaussian mechanism gives the scores) and the one-run lower bounds of Steinke et al."
          + " and Mahloujifar et al. next to the analytic epsilon of the latest model.",
      "The verdict, on the headline score, makes two tests, each at half of --significance, so"
          + " that a correct claim fails the audit (exit 3 or 4) with probability at most"
          + " --significance.",
      "Exit codes: 0 consistent (no test flags the claim, and these canaries could have"
          + " refuted it); 3 estimate above the claim (the equal-spread estimate's low end"
          + " exceeds it: the claim is false if the scores are two normals of one spread, as a"
          + " correct Gaussian mechanism makes them); 4 claim falsified (the f-DP one-run lower"
          + " bound exceeds it, whatever the scores' law); 5 inconclusive (no test flags the"
          + " claim, but it is at or above the largest epsilon an f-DP bound from --count"
          + " canaries could refute, so the audit had no power against it); 1 error."
    })
final class AuditCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin JobOptions job;

  @Mixin CanaryOptions canaryOptions;

  @Option(
      names = "--statistic",
      defaultValue = "auto",
      paramLabel = "STATISTIC",
      description =
          "The score the verdict reads: max (over rounds of the cosine with each model delta,"
              + " the paper's all-iterates score), sum (over rounds) or final (cosine with the"
              + " final model's change); auto: sum when the job samples no one, so canaries are"
              + " in every round, else max (default auto). All three are reported.")
  String statistic;

  @Option(
      names = "--significance",
      defaultValue = "0.05",
      paramLabel = "ALPHA",
      description =
          "Chance that the verdict flags a correct claim (exit 3 or 4): the f-DP lower bound"
              + " and the equal-spread estimate's low end of the headline score are each tested at"
              + " half of it (default 0.05).")
  double significance;

  @Option(
      names = "--claimed-epsilon",
      paramLabel = "EPSILON",
      description =
          "Audit this epsilon (at the models' delta) instead of the latest model's: a claim made"
              + " elsewhere, in a paper or a contract, for the same releases.")
  Double claimedEpsilon;

  @Option(
      names = "--idle",
      defaultValue = "5s",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Stop reading when no new model arrived for this long, e.g. 5s or 2m (default 5s); the"
              + " audit covers the rounds read by then.")
  Duration idle;

  @Option(
      names = "--plot",
      paramLabel = "FILE.png",
      description = "Draw the inserted and unseen canaries' scores with their fitted Gaussians.")
  Path plot;

  @Mixin JsonOption json;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    if (!(significance > 0 && significance < 1)) {
      throw flags.fail("--significance must be in (0, 1), was " + significance);
    }
    canaryOptions.check(flags);
    int count = canaryOptions.count;
    if (claimedEpsilon != null) {
      flags.nonNegative("--claimed-epsilon", claimedEpsilon);
    }
    if (!(idle.compareTo(Duration.ZERO) > 0)) {
      throw flags.fail("--idle must be a positive duration, e.g. 30s, was " + idle);
    }
    CanaryScorer.Statistic chosen = null;
    if (!statistic.equals("auto")) {
      try {
        chosen = CanaryScorer.Statistic.parse(statistic);
      } catch (IllegalArgumentException e) {
        throw flags.fail("--statistic must be one of auto, max, sum, final, was " + statistic);
      }
    }
    JobSpec jobSpec = job.read();
    if (jobSpec.correlated() && jobSpec.privacy().correlated().banded()) {
      throw flags.fail(
          "--spec: privagg audit does not take privacy.mechanism: bandmf yet: the job admits a"
              + " canary only in its secret group's rounds, which no canary schedule here follows,"
              + " so inserted and unseen canaries could not be told apart; audit a blt or"
              + " independent-noise job");
    }
    CanaryScorer.Statistic headline =
        chosen != null
            ? chosen
            : CanaryScorer.Statistic.forParticipation(
                jobSpec.privacy().sampling().mode().equals("none") && !jobSpec.correlated());
    int dims = jobSpec.model().tensors().stream().mapToInt(JobSpec.TensorSpec::size).sum();
    String tooLarge = tooLargeForHeap(count, dims, Runtime.getRuntime().maxMemory());
    if (tooLarge != null) {
      throw flags.fail(tooLarge);
    }
    CanaryOptions.Seed seed = canaryOptions.open();
    if (!seed.countRecorded()) {
      spec.commandLine().getErr().println("warning: " + canaryOptions.unrecordedCount());
      spec.commandLine().getErr().flush();
    }
    CanarySet canaries = seed.canaries();
    CanaryScorer scorer = new CanaryScorer(canaries, dims);
    GlobalModel latest;
    try (PrivaggClient client = job.client(jobSpec, false)) {
      latest = readAll(client, scorer);
      if (latest == null || latest.getRound() < 1 || scorer.deltas() == 0) {
        throw new IllegalStateException(
            "job "
                + jobSpec.jobId()
                + " has released no round after its initial model on "
                + jobSpec.topics().models()
                + " within --idle "
                + idle
                + ": nothing to audit yet (raise --idle if the topic is large or slow to read)");
      }
    }
    AuditReport report =
        AuditReport.of(
            scorer,
            headline,
            claimedEpsilon != null ? claimedEpsilon : latest.getPrivacy().getEpsilon(),
            latest.getPrivacy().getDelta(),
            significance);
    PrintWriter out = spec.commandLine().getOut();
    if (plot != null) {
      AuditPlot.save(plot, report);
    }
    if (json.enabled) {
      Output.line(out, AuditOutput.fields(report, true));
    } else {
      out.printf("job %s: the models of rounds 0 to %d%n", jobSpec.jobId(), latest.getRound());
      AuditOutput.print(out, report);
      if (plot != null) {
        out.println("plot: " + plot);
      }
    }
    out.flush();
    return switch (report.verdict()) {
      case CONSISTENT -> 0;
      case ESTIMATE_ABOVE_CLAIM -> 3;
      case CLAIM_FALSIFIED -> 4;
      case INCONCLUSIVE -> EXIT_INCONCLUSIVE;
    };
  }

  /**
   * Reads the models topic until nothing new arrives for {@code --idle}, scoring each model as it
   * comes and forgetting the older ones, so a long run is never held in memory; the latest model.
   */
  private GlobalModel readAll(PrivaggClient client, CanaryScorer scorer) {
    long quietSince = System.nanoTime();
    long seen = -1;
    while (System.nanoTime() - quietSince < idle.toNanos()) {
      client.poll(Duration.ofMillis(200));
      GlobalModel latest = client.latestModel();
      long round = latest == null ? -1 : latest.getRound();
      if (round > seen) {
        // The public topic holds a job's rounds in increasing order (PublicRounds): a round not
        // seen by now is a gap, and one delta spans it.
        for (long r = seen + 1; r <= round; r++) {
          GlobalModel model = client.model(r);
          if (model != null) {
            scorer.accept(r, PrivaggClient.flatWeights(model));
          }
        }
        client.forgetModelsBefore(round);
        seen = round;
        quietSince = System.nanoTime();
      }
    }
    return client.latestModel();
  }

  /** The exit code of an audit that could not have refuted the claim (see the command's help). */
  static final int EXIT_INCONCLUSIVE = 5;

  /** Heap the canaries' directions may take: the models and the scoring need the rest. */
  static final double DIRECTIONS_HEAP_SHARE = 0.5;

  /**
   * Why {@code count} canaries (and as many unseen) of {@code dims} parameters do not fit in a heap
   * of {@code maxHeapBytes}, or null when they do: checked before any work, not found as an
   * OutOfMemoryError after minutes of drawing directions.
   */
  static String tooLargeForHeap(int count, int dims, long maxHeapBytes) {
    long bytes = CanaryScorer.directionBytes(count, dims);
    if (bytes <= DIRECTIONS_HEAP_SHARE * maxHeapBytes) {
      return null;
    }
    long mib = 1 << 20;
    return "--count "
        + count
        + ": "
        + 2L * count
        + " canary directions of "
        + dims
        + " parameters take "
        + bytes / mib
        + " MiB, more than half of this JVM's heap ("
        + maxHeapBytes / mib
        + " MiB); audit fewer canaries, or give the JVM more heap (-Xmx)";
  }

  @Override
  public KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "audit the job";
  }
}
