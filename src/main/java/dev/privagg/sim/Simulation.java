package dev.privagg.sim;

import dev.privagg.audit.AuditReport;
import dev.privagg.audit.CanaryScorer;
import dev.privagg.audit.CanarySet;
import dev.privagg.audit.CanaryUpdates;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.client.PrivaggClient;
import dev.privagg.client.data.Dataset;
import dev.privagg.client.data.Datasets;
import dev.privagg.client.data.Partitioner;
import dev.privagg.client.train.LocalTrainer;
import dev.privagg.client.train.Metrics;
import dev.privagg.client.train.Model;
import dev.privagg.io.KafkaConnection;
import dev.privagg.job.PrivaggJob;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.secagg.UnmaskingGate;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Trains a real model on a real dataset through the real pipeline: the privagg Flink job on a Kafka
 * broker, with simulated clients that follow the public rounds topic. For each announced round the
 * participating clients take the announced base model, train on their own partition and send their
 * update before the deadline. With server sampling every client participates and the job's Poisson
 * sampling decides which updates count; with client sampling each client draws its own
 * participation ({@link ClientSampling}) and only the sampled ones train and send, so a round costs
 * the cohort's training, not the population's.
 */
public final class Simulation {
  /** The reject reasons of an update that breaks the job's participation schema. */
  public static final List<String> PARTICIPATION_REJECTS =
      List.of("PARTICIPATION_LIMIT", "TOO_SOON");

  /** Checkpoints publish outputs; a short interval keeps rounds snappy in simulations. */
  static final long CHECKPOINT_INTERVAL_MILLIS = 300;

  private Simulation() {}

  /**
   * One released round as a client sees it; {@code clipNorm} is the C its updates were clipped to
   * (with adaptive clipping, the round's own).
   */
  public record RoundResult(
      long round,
      int clientsSent,
      boolean sentAfterDeadline,
      double epsilon,
      double accuracy,
      long millis,
      double clipNorm) {}

  /**
   * The outcome: per-round progress, the final model's accuracy on {@code testSize} examples,
   * privacy and attack AUC.
   */
  public record Result(
      SimulationConfig config,
      JobSpec spec,
      List<RoundResult> rounds,
      double finalAccuracy,
      int testSize,
      double epsilon,
      double membershipAuc,
      long updatesSent,
      long updatesUsed,
      Map<String, Long> rejects,
      AuditReport audit) {
    /**
     * Rejects for breaking the participation schema (PARTICIPATION_LIMIT, TOO_SOON): with check-in
     * sampling the clients keep to it, so these should be 0.
     */
    public long participationRejects() {
      return rejects.entrySet().stream()
          .filter(e -> PARTICIPATION_REJECTS.contains(e.getKey()))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    /** Test accuracy after each round, in round order. */
    public double[] accuracyPerRound() {
      return rounds.stream().mapToDouble(RoundResult::accuracy).toArray();
    }

    /** The C of the last released round: with adaptive clipping, where C got to. */
    public double finalClipNorm() {
      return rounds.isEmpty()
          ? spec.privacy().clipNorm()
          : rounds.get(rounds.size() - 1).clipNorm();
    }

    /** Rounds whose updates were not all sent before the deadline (late updates are rejected). */
    public long roundsSentAfterDeadline() {
      return rounds.stream().filter(RoundResult::sentAfterDeadline).count();
    }
  }

  /** Each data client's part of {@code train}, as {@code config}'s partition splits it. */
  static List<Dataset> localData(SimulationConfig config, Dataset train) {
    int dataClients = config.clients() - config.canaries();
    int[][] parts =
        config.partition().equals("iid")
            ? Partitioner.iid(train.size(), dataClients, config.seed())
            : Partitioner.dirichlet(
                train.labels(), train.numClasses(), dataClients, config.alpha(), config.seed());
    List<Dataset> local = new ArrayList<>();
    for (int[] part : parts) {
      local.add(train.subset(part));
    }
    return local;
  }

  /**
   * What the audit whitens the released deltas by: a banded C's first column when the server's SGD
   * steps pass the noise through unchanged; {1} (the deltas as they are) otherwise, a BLT's C not
   * being banded and a stateful optimizer's steps not being the noisy averages.
   */
  static double[] whitening(JobSpec spec) {
    JobSpec.Correlated c = spec.privacy().correlated();
    boolean sgd = spec.serverOptimizer().kind() == ServerOptimizer.Kind.SGD;
    return c != null && c.banded() && sgd ? c.bandCoefficients() : new double[] {1};
  }

  /** The one-run lower bounds' significance in simulations. */
  public static final double AUDIT_SIGNIFICANCE = 0.05;

  /** Runs one simulation against {@code kafka}; {@code progress} sees every round. */
  public static Result run(
      SimulationConfig config, KafkaConnection kafka, Consumer<RoundResult> progress)
      throws Exception {
    Datasets.Split data = Datasets.load(config.dataset(), config.seed());
    Model model =
        Model.named(
            config.model(), data.train().numFeatures(), data.train().numClasses(), config.hidden());
    // Canaries are the last clients: the data is split among the others.
    int dataClients = config.clients() - config.canaries();
    List<Dataset> local = localData(config, data.train());
    JobSpec spec = JobSpecReader.parse("simulation", specYaml(config, model));
    KafkaPreflight.prepareKafka(kafka, List.of(spec), 2);
    int[] tensorSizes =
        spec.model().tensors().stream().mapToInt(JobSpec.TensorSpec::size).toArray();
    CanarySet canaries =
        config.canaries() == 0 ? null : new CanarySet(canarySecret(config), config.canaries());
    CanaryScorer scorer =
        canaries == null
            ? null
            : new CanaryScorer(canaries, Arrays.stream(tensorSizes).sum(), whitening(spec));
    CanaryUpdates canaryUpdates =
        canaries == null
            ? null
            : new CanaryUpdates(canaries, tensorSizes, Runtime.getRuntime().maxMemory() / 4);
    // Checkpoints on disk, not in JobManager memory (5 MiB): larger models would never commit.
    Path stateDir = Files.createTempDirectory("privagg-simulation-");
    StreamExecutionEnvironment env = PrivaggJob.localEnvironment(stateDir);
    JobClient job =
        PrivaggJob.start(
            env,
            List.of(spec),
            new PrivaggJob.Settings(
                kafka, CHECKPOINT_INTERVAL_MILLIS, 1, System.currentTimeMillis()));
    List<RoundResult> results = new ArrayList<>();
    NoiseSource clientNoise =
        config.noiseSource().equals("seeded")
            ? NoiseSource.seeded(config.seed())
            : NoiseSource.secure();
    ClientSampling sampling = new ClientSampling(config.samplingRate(), config.seed());
    BandMfCohort bandCohort =
        config.mechanism().equals("bandmf") ? new BandMfCohort(spec, config.clients()) : null;
    CheckInSampling.Schedule checkIns =
        config.checkInSampling() ? config.checkIns().schedule(config.rounds()) : null;
    Duration wait = Duration.ofMillis(config.roundTimeoutMillis() * 3 + 60_000);
    long start = System.currentTimeMillis();
    // Test accuracy is measured off the round's critical path, one model at a time, in order.
    ExecutorService evaluator =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "simulation-evaluator");
              t.setDaemon(true);
              return t;
            });
    List<Future<RoundResult>> pending = new ArrayList<>();
    GlobalModel last;
    JobRecords.Tally tally;
    try (PrivaggClient client = new PrivaggClient(spec, kafka)) {
      last = client.awaitModel(0, wait);
      if (scorer != null) {
        scorer.accept(0, PrivaggClient.flatWeights(last));
      }
      for (long r = 1; r <= config.rounds(); r++) {
        RoundAnnouncement round = client.awaitRound(r, wait);
        GlobalModel baseModel = client.awaitModel(round.getBaseModelRound(), wait);
        double[][] base = PrivaggClient.weights(baseModel);
        double canaryClip = baseModel.getPrivacy().getClipNorm();
        final long roundNo = r;
        int[] cohort =
            bandCohort != null ? bandCohort.cohort(r) : participants(config, sampling, checkIns, r);
        List<float[][]> updates =
            Arrays.stream(cohort)
                .parallel()
                .mapToObj(
                    c ->
                        c >= dataClients
                            ? canaryUpdates.update(c - dataClients, canaryClip)
                            : local.get(c).size() == 0
                                ? null
                                : LocalTrainer.train(
                                        model,
                                        base,
                                        local.get(c),
                                        config.training(),
                                        new SplittableRandom(
                                            config.seed() * 1_000_003L + roundNo * 7919L + c),
                                        clientNoise.forRound("client-" + c, roundNo))
                                    .update())
                .collect(Collectors.toList());
        List<String> senders = new ArrayList<>();
        List<float[][]> sending = new ArrayList<>();
        for (int k = 0; k < cohort.length; k++) {
          if (updates.get(k) != null) {
            senders.add("client-" + cohort[k]);
            sending.add(updates.get(k));
          }
        }
        List<String> failures = client.sendAll(r, senders, sending);
        for (String failure : failures) {
          System.err.println("warning: round " + r + ", " + failure);
        }
        int sent = senders.size() - failures.size();
        boolean late = System.currentTimeMillis() > round.getDeadlineMillis();
        if (late) {
          System.err.println(
              "warning: round "
                  + r
                  + "'s updates were sent after its deadline; raise the round timeout");
        }
        last = client.awaitModel(r, wait);
        long millis = System.currentTimeMillis() - start;
        GlobalModel released = last;
        int clientsSent = sent;
        pending.add(
            evaluator.submit(
                () -> {
                  if (scorer != null) {
                    scorer.accept(roundNo, PrivaggClient.flatWeights(released));
                  }
                  double accuracy =
                      Metrics.accuracy(model, PrivaggClient.weights(released), data.test());
                  RoundResult result =
                      new RoundResult(
                          roundNo,
                          clientsSent,
                          late,
                          released.getPrivacy().getEpsilon(),
                          accuracy,
                          millis,
                          released.getPrivacy().getClipNorm());
                  progress.accept(result);
                  return result;
                }));
      }
      for (Future<RoundResult> f : pending) {
        results.add(f.get());
      }
      tally = JobRecords.read(kafka, spec);
    } finally {
      evaluator.shutdownNow();
      job.cancel().get();
      deleteTree(stateDir);
    }
    double[][] finalWeights = PrivaggClient.weights(last);
    double auc =
        Metrics.lossThresholdAuc(
            Metrics.losses(model, finalWeights, data.train()),
            Metrics.losses(model, finalWeights, data.test()));
    return new Result(
        config,
        spec,
        results,
        Metrics.accuracy(model, finalWeights, data.test()),
        data.test().size(),
        last.getPrivacy().getEpsilon(),
        auc,
        results.stream().mapToLong(RoundResult::clientsSent).sum(),
        tally.updatesUsed(),
        tally.rejects(),
        scorer == null
            ? null
            : AuditReport.of(
                scorer,
                CanaryScorer.Statistic.forParticipation(everyClientEveryRound(config)),
                last.getPrivacy().getEpsilon(),
                config.delta(),
                AUDIT_SIGNIFICANCE));
  }

  /** True when every client sends in every round and the job keeps them all: sampling none. */
  static boolean everyClientEveryRound(SimulationConfig config) {
    return config.sampling().equals("server") && config.expectedClients() == config.clients();
  }

  /**
   * The canaries' secret of a simulation: from its seed, as its seeded noise is; the job never sees
   * it either way.
   */
  static byte[] canarySecret(SimulationConfig config) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update("privagg/simulation-canaries".getBytes(StandardCharsets.UTF_8));
      return sha.digest(Long.toString(config.seed()).getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The clients that train and send in {@code round}: every client with server sampling (the job
   * samples), only those whose own draw says so with client sampling, the round's check-ins with
   * check-in sampling.
   */
  static int[] participants(
      SimulationConfig config,
      ClientSampling sampling,
      CheckInSampling.Schedule checkIns,
      long round) {
    return switch (config.sampling()) {
      case "client" -> sampling.cohort(config.clients(), round);
      case "checkin" -> checkIns.cohort(round);
      default -> IntStream.range(0, config.clients()).toArray();
    };
  }

  /**
   * The job spec {@code config} would run with, read as the job reads it: a spec the job refuses
   * fails here with an {@link IllegalArgumentException}, before any broker or client starts.
   */
  public static JobSpec plannedSpec(SimulationConfig config) {
    Datasets.Split data = Datasets.load(config.dataset(), config.seed());
    Model model =
        Model.named(
            config.model(), data.train().numFeatures(), data.train().numClasses(), config.hidden());
    return JobSpecReader.parse("simulation", specYaml(config, model));
  }

  /** The maxDropoutRate (and adversarialClientRate) simulated secure jobs declare. */
  static final double SIMULATED_DROPOUT_RATE = 0.1;

  /** BLT buffers of the simulations' specs: three, as Dvijotham et al. 2024 find enough. */
  static final int BLT_BUFFERS = 3;

  /**
   * The job spec of a simulation: unique job id and topics, so runs never mix. With distributed
   * noise its gate is the one {@link #distributedNoiseGates} offers that leaves the least noise on
   * a round of the expected cohort.
   */
  static String specYaml(SimulationConfig c, Model model) {
    if (!c.distributedNoise()) {
      return specYaml(c, model, null);
    }
    String best = null;
    double bestNoise = Double.POSITIVE_INFINITY;
    IllegalArgumentException refused = null;
    for (String gate : distributedNoiseGates(c.expectedClients())) {
      String yaml = specYaml(c, model, gate);
      try {
        JobSpec spec = JobSpecReader.parse("simulation", yaml);
        // The shares carry z B over n_min; a round of m honest inputs has m / n_min times the
        // variance: its noise std, in units of z B, is what the gate is chosen by.
        double noise =
            spec.privacy().noiseMultiplier()
                * Math.sqrt((double) c.expectedClients() / spec.distributedNoise().noiseShares());
        if (noise < bestNoise) {
          bestNoise = noise;
          best = yaml;
        }
      } catch (IllegalArgumentException e) {
        // The widest gate's reason: narrower ones fail on the target their count's noise costs.
        refused = refused == null ? e : refused;
      }
    }
    if (best == null) {
      throw refused;
    }
    return best;
  }

  private static String specYaml(SimulationConfig c, Model model, String distributedGate) {
    String id = "sim-" + c.dataset() + "-" + UUID.randomUUID().toString().substring(0, 8);
    StringBuilder tensors = new StringBuilder();
    for (JobSpec.TensorSpec t : model.tensors()) {
      tensors
          .append("    - {name: ")
          .append(t.name())
          .append(", shape: ")
          .append(java.util.Arrays.toString(t.shape()))
          .append("}\n");
    }
    String init =
        model.name().equals("mlp")
            ? "random\n  initSeed: " + c.seed() + "\n  initStd: 0.1"
            : "zeros";
    String noise;
    if (c.noiseMultiplier() == 0) {
      noise = "noiseMultiplier: 0\n  budgetEpsilon: .inf";
    } else if (Double.isNaN(c.noiseMultiplier())) {
      noise =
          "targetEpsilon: "
              + c.targetEpsilon()
              + "\n  plannedRounds: "
              + c.rounds()
              + "\n  budgetEpsilon: "
              + c.targetEpsilon();
    } else {
      noise = "noiseMultiplier: " + c.noiseMultiplier() + "\n  budgetEpsilon: .inf";
    }
    String sampling;
    if (c.mechanism().equals("bandmf")) {
      // The job samples each round's group at m / (N / b) itself.
      sampling = "{mode: none}";
      String bands = c.bands() == 0 ? "" : ", bands: " + c.bands();
      noise += "\n  mechanism: bandmf\n  bandmf: {population: " + c.clients() + bands + "}";
    } else if (c.checkInSampling() || c.expectedClients() == c.clients()) {
      // Check-ins are not secret and not random to an adversary: charged without amplification.
      sampling = "{mode: none}";
    } else if (c.clientSampling()) {
      // The job does not sample; the accountant charges at the declared m / clients. No early
      // close: with a Poisson cohort it would change the adjacency (replace-one, no amplification).
      sampling =
          "{mode: declared-client-poisson, populationSize: "
              + c.clients()
              + ", expectedCohort: "
              + c.expectedClients()
              + "}";
    } else {
      sampling = "{mode: server-poisson, rate: " + c.samplingRate() + "}";
    }
    String adaptive = "";
    if (c.adaptiveClipping() != null) {
      SimulationConfig.AdaptiveClipping a = c.adaptiveClipping();
      adaptive =
          "\n  adaptiveClipping: {targetQuantile: "
              + a.targetQuantile()
              + ", learningRate: "
              + a.learningRate()
              + (Double.isNaN(a.countNoiseStd()) ? "" : ", countNoiseStd: " + a.countNoiseStd())
              + "}";
    }
    if (c.mechanism().equals("blt")) {
      // One Gaussian mechanism over the planned rounds under the (b, k) participation schema.
      noise +=
          "\n  mechanism: blt\n  blt: {minSeparation: "
              + c.minSeparation()
              + ", maxParticipations: "
              + c.maxParticipations()
              + ", buffers: "
              + BLT_BUFFERS
              + "}";
      if (!Double.isNaN(c.noiseMultiplier())) {
        noise += "\n  plannedRounds: " + c.rounds();
      }
    }
    String maxClients = "";
    String gate = c.secureAggregation() ? "\n  " + unmaskingGate(c.expectedClients()) : "";
    String bits = "";
    if (c.distributedNoise()) {
      noise += "\n  mechanism: distributed-discrete-gaussian";
      // The words hold every client's input: a round takes at most the population.
      maxClients = "\n  maxClients: " + c.clients();
      gate = "\n  " + distributedGate;
      bits = ", bitsPerCoordinate: " + c.bitsPerCoordinate();
    }
    String noiseSource =
        c.noiseSource().equals("seeded")
            ? "{source: seeded, seed: " + c.seed() + "}"
            : "{source: secure}";
    return """
        jobId: %s
        model:
          tensors:
        %s  init: %s
        rounds:
          timeout: %dms
          expectedClients: %d%s
        privacy:
          clipNorm: %s
          %s
          delta: %s
          sampling: %s
          noise: %s%s
        server: %s%s
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects, secure: %s.secure}
        """
        .formatted(
            id,
            tensors,
            init,
            c.roundTimeoutMillis(),
            c.expectedClients(),
            maxClients + gate,
            c.clipNorm(),
            noise,
            c.delta(),
            sampling,
            noiseSource,
            adaptive,
            serverYaml(c.serverOptimizer()),
            c.secureAggregation()
                ? "\naggregation: {mode: secure, maxDropoutRate: 0.1, adversarialClientRate: 0.1"
                    + bits
                    + "}"
                : "",
            id,
            id,
            id,
            id,
            id,
            id);
  }

  /**
   * Gates to try for distributed noise: the shares are sized for the fewest honest inputs a gate
   * lets through, about count - 7 noiseStd, while its count's noise is charged with the sum. From
   * the secure gate's noiseStd down to a twentieth of it, each with its count three stds below the
   * cohort less the declared dropouts, so that rounds losing them are still unmasked.
   */
  static List<String> distributedNoiseGates(int expectedClients) {
    ThreatModel threat =
        RoundGraph.threatModel(
            SIMULATED_DROPOUT_RATE, SIMULATED_DROPOUT_RATE, "semi-malicious-server");
    double widest = UnmaskingGate.suggestedNoiseStd(threat, expectedClients);
    List<String> gates = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      double std = Math.max(0.01, Math.floor(100 * widest * Math.pow(20, -i / 15.0)) / 100);
      // A round that lost the declared dropouts still passes: 3 stds below what it keeps.
      double count =
          Math.max(
              UnmaskingGate.minimumCount(threat, std),
              Math.floor(100 * ((1 - SIMULATED_DROPOUT_RATE) * expectedClients - 3 * std)) / 100);
      gates.add("minimumCohort: " + UnmaskingGate.spec(count, std));
    }
    return gates;
  }

  /**
   * A secure job's {@code rounds.minimumCohort} for the simulator's rates (0.1 each): the gate a
   * round of about the expected cohort passes with probability about 99.9% (UnmaskingGate).
   */
  static String unmaskingGate(int expectedClients) {
    return "minimumCohort: "
        + UnmaskingGate.suggestedSpec(
            RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"), expectedClients);
  }

  /** The spec's {@code server} section: the optimizer and only the parameters it uses. */
  static String serverYaml(ServerOptimizer o) {
    String head = "{optimizer: " + o.kind().specName() + ", learningRate: " + o.learningRate();
    return switch (o.kind()) {
      case SGD -> head + "}";
      case AVGM -> head + ", momentum: " + o.beta1() + "}";
      case ADAM, YOGI ->
          head + ", beta1: " + o.beta1() + ", beta2: " + o.beta2() + ", tau: " + o.tau() + "}";
      case RELEASE ->
          throw new IllegalArgumentException("a statistics job has no server section to write");
    };
  }

  /** Removes the simulation's checkpoint directory; what cannot be removed is left in /tmp. */
  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temporary directory
    }
  }
}
