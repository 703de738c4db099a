package dev.privagg.cli;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.PrivateTopK;
import dev.privagg.sim.SimulationConfig;
import picocli.CommandLine.Option;

/** Options shared by {@code simulate} and {@code evaluate}: data, model, clients, training. */
final class SimulationOptions {
  @Option(
      names = "--dataset",
      defaultValue = "digits",
      description = "digits, breast-cancer or fashion-mnist (default digits).")
  String dataset;

  @Option(
      names = "--model",
      defaultValue = "softmax",
      description = "softmax or mlp (default softmax).")
  String model;

  @Option(
      names = "--hidden",
      defaultValue = "32",
      description = "Hidden units of the MLP (default 32).")
  int hidden;

  @Option(
      names = "--clients",
      defaultValue = "100",
      description = "Simulated clients (default 100).")
  int clients;

  @Option(
      names = "--cohort",
      defaultValue = "20",
      description =
          "Expected clients per round m, the average's denominator; each update is sampled with rate"
              + " m/clients (default 20).")
  int cohort;

  @Option(
      names = "--sampling",
      defaultValue = "server",
      description =
          "server: every client trains and sends each round and the job keeps each update with"
              + " rate m/clients (server-poisson). client: each client draws its own participation"
              + " with rate m/clients, only sampled clients train and send, and the spec declares it"
              + " (declared-client-poisson, charged at that rate): rounds cost the cohort, not the"
              + " population. checkin: exactly m clients check in each round, drawn uniformly"
              + " (seeded) from those --min-separation and --max-participations allow, as a fleet"
              + " with device-side rate limits would; nothing secret, nothing amplified (sampling"
              + " none, every round charged in full) (default server).")
  String sampling;

  @Option(
      names = "--min-separation",
      paramLabel = "B",
      description =
          "With --sampling checkin (and evaluate --mechanisms): a client that contributed in round"
              + " r checks in again no sooner than round r + B; 1 allows consecutive rounds. At"
              + " most clients / cohort, so that every round finds m eligible clients (default 1).")
  Integer minSeparation;

  @Option(
      names = "--max-participations",
      paramLabel = "K",
      description =
          "With --sampling checkin (and evaluate --mechanisms): most rounds one client contributes"
              + " to over the run; at least rounds x cohort / clients, with room (default"
              + " --rounds).")
  Integer maxParticipations;

  @Option(names = "--rounds", defaultValue = "25", description = "Rounds to train (default 25).")
  int rounds;

  @Option(
      names = "--partition",
      defaultValue = "iid",
      description = "iid or dirichlet (default iid).")
  String partition;

  @Option(
      names = "--alpha",
      defaultValue = "0.5",
      description = "Dirichlet concentration for --partition dirichlet (default 0.5).")
  double alpha;

  @Option(names = "--delta", defaultValue = "1e-5", description = "Delta (default 1e-5).")
  double delta;

  @Option(
      names = "--clip-norm",
      defaultValue = "1.0",
      description =
          "Server-side L2 clip norm C of each update; with --adaptive-clipping the initial C"
              + " (default 1).")
  double clipNorm;

  @Option(
      names = "--adaptive-clipping",
      paramLabel = "QUANTILE",
      description =
          "Adaptive clipping (Andrew et al. 2021): each round C moves geometrically toward the"
              + " QUANTILE of update norms, from the noisy fraction of unclipped updates, charged"
              + " with the sum; at the same target epsilon the planner then picks a slightly larger"
              + " noise multiplier (off by default; e.g. 0.5 with --clip-norm 0.1).")
  Double adaptiveClipping;

  @Option(
      names = "--clip-lr",
      description =
          "Step of adaptive clipping's geometric update of C; needs --adaptive-clipping (default"
              + " 0.2).")
  Double clipLr;

  @Option(
      names = "--clip-count-noise",
      description =
          "Std of the noise on adaptive clipping's count of unclipped updates; needs"
              + " --adaptive-clipping (default: expected clients / 20).")
  Double clipCountNoise;

  @Option(
      names = "--server-optimizer",
      defaultValue = "sgd",
      description =
          "Server step on the noisy average update: sgd (FedAvg), avgm (FedAvgM), adam (FedAdam) or"
              + " yogi (FedYogi), Reddi et al. 2021 (default sgd).")
  String serverOptimizer;

  @Option(
      names = "--server-lr",
      description = "Server learning rate (default 1 for sgd and avgm, 0.01 for adam and yogi).")
  Double serverLr;

  @Option(
      names = "--server-momentum",
      description = "FedAvgM momentum, in [0, 1); only with --server-optimizer avgm (default 0.9).")
  Double serverMomentum;

  @Option(
      names = "--server-beta1",
      description = "First-moment decay, in [0, 1); only with adam or yogi (default 0.9).")
  Double serverBeta1;

  @Option(
      names = "--server-beta2",
      description = "Second-moment decay, in [0, 1); only with adam or yogi (default 0.99).")
  Double serverBeta2;

  @Option(
      names = "--server-tau",
      description = "Adaptivity tau, > 0; only with adam or yogi (default 1e-3).")
  Double serverTau;

  @Option(
      names = "--local-epochs",
      defaultValue = "2",
      description = "Local epochs per round (default 2).")
  int localEpochs;

  @Option(
      names = "--batch-size",
      defaultValue = "8",
      description = "Local minibatch size (default 8).")
  int batchSize;

  @Option(
      names = "--local-lr",
      defaultValue = "0.5",
      description = "Local learning rate (default 0.5).")
  double localLr;

  @Option(
      names = "--dp-sgd-noise",
      description = "Client-side DP-SGD noise multiplier (off by default).")
  Double dpSgdNoise;

  @Option(
      names = "--dp-sgd-clip",
      defaultValue = "1.0",
      description = "DP-SGD per-example clip norm (default 1).")
  double dpSgdClip;

  @Option(
      names = "--local-noise-epsilon",
      description =
          "Local DP: Gaussian noise on each update for this epsilon per round (off by default).")
  Double localNoiseEpsilon;

  @Option(
      names = "--private-top-k",
      description =
          "Local DP: each client sends only K coordinates, chosen by the exponential mechanism"
              + " and Laplace-noised, each within clipNorm / sqrt(K), for --private-top-k-epsilon"
              + " per round (pure DP; off by default).")
  Integer privateTopK;

  @Option(
      names = "--private-top-k-epsilon",
      defaultValue = "10",
      description = "Epsilon per round of --private-top-k, indices and values together.")
  double privateTopKEpsilon;

  @Option(
      names = "--sparsify",
      defaultValue = "1.0",
      description =
          "Share of largest coordinates each client sends; no DP guarantee (default 1 = all).")
  double sparsify;

  @Option(
      names = "--round-timeout-ms",
      defaultValue = "1500",
      description = "Round timeout (default 1500).")
  long roundTimeoutMillis;

  @Option(
      names = "--noise-source",
      defaultValue = "secure",
      description = "secure or seeded (experiments) (default secure).")
  String noiseSource;

  @Option(
      names = "--aggregation",
      defaultValue = "plaintext",
      description =
          "plaintext or secure: SecAgg+, the clients mask their updates and the job learns only"
              + " each round's sum; needs --round-timeout-ms of at least 8000 and a fixed clip norm"
              + " (default plaintext).")
  String aggregation;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of data split, partition and training (default 1).")
  long seed;

  @Option(
      names = "--canaries",
      paramLabel = "K",
      defaultValue = "0",
      description =
          "Make K of the clients canaries and audit the run (Andrew et al., ICLR 2024): each sends"
              + " a secret random direction past C instead of training, sampled like any client;"
              + " K unseen canaries give the null. Reports epsilon-hat and the one-run lower bound"
              + " next to epsilon. Hundreds of canaries make a tight estimate; with fewer the"
              + " fitted spreads are rough and epsilon-hat's interval wide (default 0: no audit).")
  int canaries;

  /**
   * The simulation these options describe; bad values or combinations fail here, before any work,
   * naming the flag and the fix.
   */
  SimulationConfig config(Flags flags, double noiseMultiplier, double targetEpsilon) {
    return config(flags, noiseMultiplier, targetEpsilon, null);
  }

  /**
   * As {@link #config(Flags, double, double)}, with adaptive clipping at {@code defaultQuantile}
   * when --adaptive-clipping is not given (null: fixed C).
   */
  SimulationConfig config(
      Flags flags, double noiseMultiplier, double targetEpsilon, Double defaultQuantile) {
    if (!aggregation.equals("plaintext") && !aggregation.equals("secure")) {
      throw flags.fail("--aggregation must be plaintext or secure, was '" + aggregation + "'");
    }
    if (secureAggregation() && roundTimeoutMillis < 8000) {
      throw flags.fail(
          "--aggregation secure: the six phases each wait for a checkpoint; give"
              + " --round-timeout-ms 8000 or more (was "
              + roundTimeoutMillis
              + ")");
    }
    if (secureAggregation() && flags.given("--adaptive-clipping")) {
      throw flags.fail(
          "--aggregation secure: clients clip themselves to a fixed C; drop --adaptive-clipping");
    }
    if (!"checkin".equals(sampling) && schemaGiven(flags)) {
      throw flags.fail(
          (flags.given("--min-separation") ? "--min-separation" : "--max-participations")
              + " is the participation schema of check-in clients: add --sampling checkin, or"
              + " drop it");
    }
    return config(flags, noiseMultiplier, targetEpsilon, defaultQuantile, sampling);
  }

  /**
   * The simulation of evaluate --mechanisms at {@code targetEpsilon}: clients check in under the
   * schema (each mechanism then sets its own sampling), fixed C, the server optimizer of the flags.
   */
  SimulationConfig checkInConfig(Flags flags, double targetEpsilon) {
    return config(flags, Double.NaN, targetEpsilon, null, "checkin");
  }

  private SimulationConfig config(
      Flags flags,
      double noiseMultiplier,
      double targetEpsilon,
      Double defaultQuantile,
      String sampling) {
    flags.positive("--clip-norm", clipNorm);
    SimulationConfig.AdaptiveClipping adaptive = adaptiveClipping(flags, defaultQuantile);
    if (adaptive != null && localNoiseEpsilon != null) {
      throw flags.fail(
          "--local-noise-epsilon clips each update to the fixed --clip-norm, which --adaptive-clipping"
              + " moves every round: drop one of them");
    }
    if (privateTopK != null && (localNoiseEpsilon != null || adaptive != null)) {
      throw flags.fail(
          "--private-top-k bounds each coordinate by the fixed --clip-norm and states its own"
              + " epsilon; with --local-noise-epsilon or --adaptive-clipping the two would not"
              + " compose into one statement: drop one of them");
    }
    if (privateTopK != null) {
      flags.atLeastOne("--private-top-k", privateTopK);
      flags.positive("--private-top-k-epsilon", privateTopKEpsilon);
    }
    ServerOptimizer.Kind kind = serverOptimizerKind(flags);
    ServerOptimizer optimizer = serverOptimizer(flags, kind, serverLr);
    if (minSeparation != null) {
      flags.atLeastOne("--min-separation", minSeparation);
    }
    if (maxParticipations != null) {
      flags.atLeastOne("--max-participations", maxParticipations);
    }
    SimulationConfig config = config(noiseMultiplier, targetEpsilon, adaptive, optimizer, sampling);
    if (config.checkInSampling()) {
      refuseShortSchedule(flags, config, 1);
    }
    return config;
  }

  /** Whether --min-separation or --max-participations was given. */
  boolean schemaGiven(Flags flags) {
    return flags.given("--min-separation") || flags.given("--max-participations");
  }

  /**
   * Refuses a participation schema under which some round of seeds {@code checkIn.seed()} on would
   * find fewer than --cohort eligible clients, naming the round and the fix.
   */
  static void refuseShortSchedule(Flags flags, SimulationConfig checkIn, int seeds) {
    for (int s = 0; s < seeds; s++) {
      SimulationConfig seeded = checkIn.toBuilder().seed(checkIn.seed() + s).build();
      int shortRound = seeded.checkIns().schedule(checkIn.rounds()).firstShortRound();
      if (shortRound > 0) {
        long needed =
            ((long) checkIn.rounds() * checkIn.expectedClients() + checkIn.clients() - 1)
                / checkIn.clients();
        throw flags.fail(
            "--min-separation "
                + checkIn.minSeparation()
                + " and --max-participations "
                + checkIn.maxParticipations()
                + " leave fewer than --cohort "
                + checkIn.expectedClients()
                + " eligible clients in round "
                + shortRound
                + " (seed "
                + seeded.seed()
                + "): lower --min-separation (at most clients / cohort = "
                + checkIn.clients() / checkIn.expectedClients()
                + ", less leaves room) or raise --max-participations (at least rounds x cohort /"
                + " clients = "
                + needed
                + ", more leaves room)");
      }
    }
  }

  /**
   * The adaptive clipping of --adaptive-clipping, --clip-lr and --clip-count-noise; null when off,
   * unless {@code defaultQuantile} is given (evaluate's adaptive variants).
   */
  SimulationConfig.AdaptiveClipping adaptiveClipping(Flags flags, Double defaultQuantile) {
    Double quantile = adaptiveClipping != null ? adaptiveClipping : defaultQuantile;
    if (quantile == null) {
      if (clipLr != null || clipCountNoise != null) {
        throw flags.fail(
            (clipLr != null ? "--clip-lr" : "--clip-count-noise")
                + " tunes adaptive clipping: add --adaptive-clipping QUANTILE (e.g. 0.5), or drop"
                + " it");
      }
      return null;
    }
    if (!(quantile > 0 && quantile < 1)) {
      throw flags.fail(
          "--adaptive-clipping must be in (0, 1) (the fraction of updates C leaves unclipped),"
              + " was "
              + quantile);
    }
    double rate =
        clipLr == null
            ? AdaptiveClipping.DEFAULT_LEARNING_RATE
            : flags.positive("--clip-lr", clipLr);
    double countStd =
        clipCountNoise == null ? Double.NaN : flags.positive("--clip-count-noise", clipCountNoise);
    return new SimulationConfig.AdaptiveClipping(quantile, rate, countStd);
  }

  /** The kind of --server-optimizer. */
  ServerOptimizer.Kind serverOptimizerKind(Flags flags) {
    try {
      return ServerOptimizer.Kind.parse(serverOptimizer);
    } catch (IllegalArgumentException e) {
      throw flags.fail(
          "--server-optimizer must be one of sgd, avgm, adam or yogi, was '"
              + serverOptimizer
              + "'");
    }
  }

  /**
   * A server optimizer of {@code kind} with learning rate {@code lr} (null: the kind's default) and
   * the --server-momentum, --server-beta1, --server-beta2 and --server-tau that it uses; a
   * parameter {@code kind} does not use fails.
   */
  ServerOptimizer serverOptimizer(Flags flags, ServerOptimizer.Kind kind, Double lr) {
    boolean adaptive = kind == ServerOptimizer.Kind.ADAM || kind == ServerOptimizer.Kind.YOGI;
    if (serverMomentum != null && kind != ServerOptimizer.Kind.AVGM) {
      throw flags.fail(
          "--server-momentum is FedAvgM's: add --server-optimizer avgm, or drop it (was "
              + kind.specName()
              + ")");
    }
    String adamOnly =
        serverBeta1 != null
            ? "--server-beta1"
            : serverBeta2 != null ? "--server-beta2" : serverTau != null ? "--server-tau" : null;
    if (adamOnly != null && !adaptive) {
      throw flags.fail(
          adamOnly
              + " is FedAdam's and FedYogi's: add --server-optimizer adam or yogi, or drop it (was "
              + kind.specName()
              + ")");
    }
    double rate = lr == null ? defaultServerLr(kind) : flags.positive("--server-lr", lr);
    return switch (kind) {
      case SGD -> ServerOptimizer.sgd(rate);
      case AVGM ->
          ServerOptimizer.avgm(
              rate,
              unitInterval(
                  flags, "--server-momentum", serverMomentum, ServerOptimizer.DEFAULT_MOMENTUM));
      case ADAM, YOGI -> {
        double beta1 =
            unitInterval(flags, "--server-beta1", serverBeta1, ServerOptimizer.DEFAULT_BETA1);
        double beta2 =
            unitInterval(flags, "--server-beta2", serverBeta2, ServerOptimizer.DEFAULT_BETA2);
        double tau =
            serverTau == null
                ? ServerOptimizer.DEFAULT_TAU
                : flags.positive("--server-tau", serverTau);
        yield kind == ServerOptimizer.Kind.ADAM
            ? ServerOptimizer.adam(rate, beta1, beta2, tau)
            : ServerOptimizer.yogi(rate, beta1, beta2, tau);
      }
      case RELEASE -> throw flags.fail("--server-optimizer release is a statistics job's");
    };
  }

  /** The job spec's default server learning rate: 1 for sgd and avgm, 0.01 for adam and yogi. */
  static double defaultServerLr(ServerOptimizer.Kind kind) {
    return kind == ServerOptimizer.Kind.SGD || kind == ServerOptimizer.Kind.AVGM ? 1.0 : 0.01;
  }

  private static double unitInterval(Flags flags, String flag, Double value, double fallback) {
    if (value == null) {
      return fallback;
    }
    if (!(value >= 0 && value < 1)) {
      throw flags.fail(flag + " must be in [0, 1), was " + value);
    }
    return value;
  }

  /** Data, model, clients and training as the flags say, with the checked server settings. */
  private SimulationConfig config(
      double noiseMultiplier,
      double targetEpsilon,
      SimulationConfig.AdaptiveClipping adaptive,
      ServerOptimizer optimizer,
      String sampling) {
    TrainingOptions training =
        new TrainingOptions(
            localEpochs,
            batchSize,
            localLr,
            dpSgdNoise == null ? null : new TrainingOptions.DpSgd(dpSgdClip, dpSgdNoise, delta),
            localNoiseEpsilon == null
                ? null
                : new TrainingOptions.LocalNoise(localNoiseEpsilon, delta, clipNorm),
            privateTopK == null
                ? null
                : new PrivateTopK(
                    privateTopK, clipNorm / Math.sqrt(privateTopK), privateTopKEpsilon, 0.5),
            sparsify);
    return SimulationConfig.builder()
        .dataset(dataset)
        .model(model)
        .hidden(hidden)
        .clients(clients)
        .expectedClients(cohort)
        .sampling(sampling)
        .minSeparation(minSeparation == null ? 1 : minSeparation)
        .maxParticipations(maxParticipations == null ? 0 : maxParticipations)
        .rounds(rounds)
        .partition(partition)
        .alpha(alpha)
        .noiseMultiplier(noiseMultiplier)
        .targetEpsilon(targetEpsilon)
        .delta(delta)
        .clipNorm(clipNorm)
        .adaptiveClipping(adaptive)
        .serverOptimizer(optimizer)
        .training(training)
        .roundTimeoutMillis(roundTimeoutMillis)
        .noiseSource(noiseSource)
        .seed(seed)
        .canaries(canaries)
        .secureAggregation(secureAggregation())
        .build();
  }

  private boolean secureAggregation() {
    return aggregation.equals("secure");
  }
}
