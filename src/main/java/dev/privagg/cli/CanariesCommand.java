package dev.privagg.cli;

import dev.privagg.audit.CanarySchedule;
import dev.privagg.audit.CanarySet;
import dev.privagg.audit.CanaryUpdates;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg canaries}: secret canary clients for an audit, sent as ordinary updates. */
@Command(
    name = "canaries",
    mixinStandardHelpOptions = true,
    description = {
      "Run K canary clients alongside a job for a privacy audit (privagg audit).",
      "Each canary sends a secret random direction, twice the latest C long, as an ordinary"
          + " client update in the rounds an honest client would: every round without client"
          + " sampling, at the declared rate with declared-client-poisson, every minSeparation"
          + " rounds at most maxParticipations times with a BLT schema. K more canaries are never"
          + " sent. The secret stays in --seed-file, with the count beside it (recorded on"
          + " first use), so that privagg audit refuses another: the job and the topics never"
          + " see it.",
      "Runs until the job stops announcing rounds for --idle, or after --until-round."
    })
final class CanariesCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin JobOptions job;

  @Mixin CanaryOptions canaryOptions;

  @Option(
      names = "--new-seed",
      description = "Create --seed-file with a fresh random secret first (never overwrites).")
  boolean newSeed;

  @Option(
      names = "--client-prefix",
      defaultValue = "client-",
      paramLabel = "PREFIX",
      description =
          "Prefix of the canaries' client ids, followed by 16 secret hex digits; match your"
              + " clients' ids (default client-).")
  String clientPrefix;

  @Option(
      names = "--until-round",
      paramLabel = "ROUND",
      description = "Stop after sending for this round (default: run until --idle).")
  Long untilRound;

  @Option(
      names = "--idle",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Stop when no new round is announced for this long, e.g. 2m (default: three round"
              + " timeouts plus a minute).")
  Duration idle;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    canaryOptions.check(flags);
    int count = canaryOptions.count;
    Path seedFile = canaryOptions.seedFile;
    if (untilRound != null) {
      flags.atLeastOne("--until-round", untilRound);
    }
    if (idle != null && !(idle.compareTo(Duration.ZERO) > 0)) {
      throw flags.fail("--idle must be a positive duration, e.g. PT2M, was " + idle);
    }
    JobSpec jobSpec = job.read();
    if (jobSpec.correlated() && jobSpec.privacy().correlated().banded()) {
      throw flags.fail(
          "--spec: privagg canaries does not take privacy.mechanism: bandmf yet: the job admits a"
              + " canary only in its secret group's rounds, which no canary schedule here follows,"
              + " so inserted and unseen canaries could not be told apart; audit a blt or"
              + " independent-noise job");
    }
    CanarySchedule schedule = schedule(jobSpec);
    if (newSeed) {
      CanarySecretFile.create(seedFile, count);
    }
    CanaryOptions.Seed seed = canaryOptions.open();
    CanarySet canaries = seed.canaries();
    int[] sizes = jobSpec.model().tensors().stream().mapToInt(JobSpec.TensorSpec::size).toArray();
    // Each direction is the same every round: drawn once while they fit in a quarter of the heap.
    CanaryUpdates updates =
        new CanaryUpdates(canaries, sizes, Runtime.getRuntime().maxMemory() / 4);
    Duration quiet =
        idle != null
            ? idle
            : Duration.ofMillis(3 * jobSpec.rounds().timeoutMillis()).plusMinutes(1);
    PrintWriter out = spec.commandLine().getOut();
    if (!seed.countRecorded()) {
      // A file from before counts were kept: record this one, so the audit can check its own.
      CanarySecretFile.recordCount(seedFile, count);
      out.printf("recorded --count %d in --seed-file %s%n", count, seedFile);
    }
    out.printf(
        "%d canaries for job %s (%s), %d more unseen; stopping after %s without a new round%n",
        count, jobSpec.jobId(), describe(schedule), count, quiet);
    for (String warning : warnings(jobSpec, schedule, count)) {
      out.println("warning: " + warning);
    }
    out.flush();
    long sentUpdates = 0;
    try (PrivaggClient client = job.client(jobSpec, true)) {
      long lastRound = 0;
      long quietSince = System.nanoTime();
      while (untilRound == null || lastRound < untilRound) {
        client.poll(Duration.ofMillis(200));
        RoundAnnouncement open = client.latestRound();
        if (open == null || open.getRound() <= lastRound) {
          if (System.nanoTime() - quietSince > quiet.toNanos()) {
            break;
          }
          continue;
        }
        if (untilRound != null && open.getRound() > untilRound) {
          break; // rounds passed while polling: nothing is sent beyond --until-round
        }
        quietSince = System.nanoTime();
        lastRound = open.getRound();
        if (System.currentTimeMillis() >= open.getDeadlineMillis()) {
          continue; // joined late: this round's deadline has passed
        }
        double clipNorm = latestClipNorm(client, jobSpec);
        List<String> ids = new ArrayList<>();
        List<float[][]> canaryUpdates = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          if (schedule.sends(canaries, i, lastRound)) {
            ids.add(canaries.clientId(clientPrefix, i));
            canaryUpdates.add(updates.update(i, clipNorm));
          }
        }
        List<String> failures = client.sendAll(lastRound, ids, canaryUpdates);
        for (String failure : failures) {
          out.printf("round %d: canary %s%n", lastRound, failure);
        }
        int sent = ids.size() - failures.size();
        sentUpdates += sent;
        out.printf("round %d: %d canaries sent%n", lastRound, sent);
        out.flush();
      }
    }
    out.printf(
        "sent %d canary updates; audit with: privagg audit --spec ... --seed-file %s --count %d%n",
        sentUpdates, seedFile, count);
    return 0;
  }

  /** The rule an honest client of {@code jobSpec} follows (see {@link CanarySchedule}). */
  static CanarySchedule schedule(JobSpec jobSpec) {
    if (jobSpec.correlated()) {
      JobSpec.Correlated c = jobSpec.privacy().correlated();
      return CanarySchedule.schema(c.minSeparation(), c.maxParticipations());
    }
    JobSpec.Sampling sampling = jobSpec.privacy().sampling();
    return sampling.declared()
        ? CanarySchedule.poisson(sampling.accountingRate())
        : CanarySchedule.everyRound();
  }

  /**
   * What K canaries do to {@code jobSpec}'s rounds that an operator should know before they start:
   * canaries are clients, so they take places under early close and count against the cap, where
   * one client displaces another (ROUND_FULL).
   */
  static List<String> warnings(JobSpec jobSpec, CanarySchedule schedule, int count) {
    List<String> warnings = new ArrayList<>();
    JobSpec.Rounds rounds = jobSpec.rounds();
    double canaries =
        switch (schedule.kind()) {
          case EVERY_ROUND -> count;
          case POISSON -> count * schedule.rate();
          case SCHEMA -> Math.ceil((double) count / schedule.minSeparation());
        };
    JobSpec.Sampling sampling = jobSpec.privacy().sampling();
    double clients =
        switch (sampling.mode()) {
          case "server-poisson" -> Math.ceil(rounds.expectedClients() / sampling.rate());
          case "declared-client-poisson" -> sampling.expectedCohort();
          default -> rounds.expectedClients();
        };
    if (clients + canaries > rounds.maxClients()) {
      warnings.add(
          String.format(
              Locale.ROOT,
              "about %.0f canaries and %.0f clients arrive per round, above rounds.maxClients"
                  + " (%d): the last arrivals are turned away (ROUND_FULL), canaries or clients;"
                  + " run fewer canaries or raise the cap",
              canaries,
              clients,
              rounds.maxClients()));
    }
    if (rounds.closeEarly()) {
      warnings.add(
          String.format(
              Locale.ROOT,
              "rounds close at their %d-th update and canaries send as soon as a round opens:"
                  + " about %.0f canaries take places clients would have had",
              rounds.expectedClients(),
              Math.min(canaries, rounds.expectedClients())));
    }
    AdaptiveClipping adaptive = jobSpec.privacy().adaptiveClipping();
    if (adaptive != null) {
      // Each canary is a clipped update in the noisy unclipped count: it lowers the fraction by
      // 1 / (2 m). Past 2 m (1 - gamma) per round no real clients' count can bring the fraction
      // back to gamma, and C grows every round to its cap.
      double m = rounds.expectedClients();
      double most = 2 * m * (1 - adaptive.targetQuantile());
      // Server-side sampling keeps each canary at its rate; the count sees only those kept.
      double counted =
          sampling.mode().equals("server-poisson") ? canaries * sampling.rate() : canaries;
      warnings.add(
          String.format(
              Locale.ROOT,
              "adaptive clipping counts each canary it admits as a clipped update: about %.0f per round"
                  + " lower"
                  + " its unclipped fraction by %.2f%s",
              counted,
              counted / (2 * m),
              counted > most
                  ? String.format(
                      Locale.ROOT,
                      ", more than the %.0f a round can absorb, so C grows every round up to"
                          + " maxClipNorm (%s) and the noise with it; run fewer canaries",
                      most,
                      Text.number(adaptive.maxClipNorm()))
                  : ", and C settles higher than the clients alone would set it"));
    }
    return warnings;
  }

  private static String describe(CanarySchedule s) {
    return switch (s.kind()) {
      case EVERY_ROUND -> "every round";
      case POISSON -> "each round with probability " + Text.number(s.rate());
      case SCHEMA ->
          "every " + s.minSeparation() + " rounds, at most " + s.maxParticipations() + " times";
    };
  }

  /** The C of the latest released model (adaptive clipping moves it), else the spec's. */
  private static double latestClipNorm(PrivaggClient client, JobSpec jobSpec) {
    GlobalModel latest = client.latestModel();
    return latest == null ? jobSpec.privacy().clipNorm() : latest.getPrivacy().getClipNorm();
  }

  @Override
  public KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "send canary updates";
  }
}
