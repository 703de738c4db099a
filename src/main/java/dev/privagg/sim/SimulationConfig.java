package dev.privagg.sim;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Checks;
import java.util.List;

/**
 * One federated simulation: dataset and model, clients and their partition, rounds and the server's
 * privacy setting. {@code noiseMultiplier} NaN means: plan it from {@code targetEpsilon} over
 * {@code rounds}; a noise multiplier of 0 is the non-private baseline (infinite budget). See {@link
 * #SAMPLINGS} for {@code sampling}, {@link #MECHANISMS} for {@code mechanism}; {@code
 * minSeparation} and {@code maxParticipations} are the participation schema (b, k) of check-in
 * sampling and of BLT noise (1 and {@code rounds} when neither is used). With {@code
 * adaptiveClipping} (null: C is fixed) {@code clipNorm} is the initial C; {@code serverOptimizer}
 * steps the noisy average (FedAvg, FedAvgM, FedAdam, FedYogi). {@code canaries} of the {@code
 * clients} are canary clients for an empirical privacy audit ({@link dev.privagg.audit}): they take
 * part like any client but send a secret direction instead of training (0: no audit).
 *
 * <p>Made by {@link #builder()} (or {@link #toBuilder()} for a copy that differs in some values),
 * whose {@link Builder#build()} checks every value. A record cannot hide its canonical constructor,
 * and the constructor checks nothing: call the builder, not the constructor.
 */
public record SimulationConfig(
    String dataset,
    String model,
    int hidden,
    int clients,
    int expectedClients,
    String sampling,
    int minSeparation,
    int maxParticipations,
    String mechanism,
    int rounds,
    String partition,
    double alpha,
    double noiseMultiplier,
    double targetEpsilon,
    double delta,
    double clipNorm,
    AdaptiveClipping adaptiveClipping,
    ServerOptimizer serverOptimizer,
    TrainingOptions training,
    long roundTimeoutMillis,
    String noiseSource,
    long seed,
    int canaries,
    boolean secureAggregation,
    int bitsPerCoordinate,
    int bands) {

  /**
   * The job spec's {@code privacy.adaptiveClipping} (Andrew et al. 2021): the target fraction of
   * unclipped updates, the step of C's geometric update and the std of the noise on the unclipped
   * count ({@code NaN}: the spec's default, expected clients / 20).
   */
  public record AdaptiveClipping(double targetQuantile, double learningRate, double countNoiseStd) {
    public AdaptiveClipping {
      Checks.openUnitInterval("targetQuantile", targetQuantile);
      Checks.positiveFinite("learningRate", learningRate);
      if (!Double.isNaN(countNoiseStd)) {
        Checks.positiveFinite("countNoiseStd", countNoiseStd);
      }
    }
  }

  /**
   * Who samples: {@code server} (every client trains and sends each round, the job keeps each
   * update with the sampling rate: server-poisson) or {@code client} (each client draws its own
   * participation with the sampling rate, only the sampled ones train and send; the spec declares
   * it: declared-client-poisson) or {@code checkin} (exactly the cohort checks in each round, drawn
   * uniformly from the clients the (minSeparation, maxParticipations) schema allows, {@link
   * CheckInSampling}; the job does not sample and nothing is amplified: sampling none).
   */
  public static final List<String> SAMPLINGS = List.of("server", "client", "checkin");

  /**
   * The server's noise: {@code independent} (a fresh Gaussian each round, as the accountant charges
   * it) or {@code blt} (BLT matrix-factorization DP-FTRL: noise correlated over the planned rounds,
   * one Gaussian mechanism for the whole run under the participation schema; needs check-in
   * sampling and seeded noise here) or {@code bandmf} (amplified banded MF: the job groups the
   * clients and samples each round's group; needs server sampling, seeded noise and a target).
   */
  public static final List<String> MECHANISMS =
      List.of("independent", "blt", "bandmf", "distributed-discrete-gaussian");

  /** Whether clients add the noise as discrete Gaussian shares under secure aggregation. */
  public boolean distributedNoise() {
    return mechanism.equals("distributed-discrete-gaussian");
  }

  /** The Poisson sampling rate: expected cohort / clients. */
  public double samplingRate() {
    return (double) expectedClients / clients;
  }

  /** True when clients sample themselves (declared-client-poisson). */
  public boolean clientSampling() {
    return sampling.equals("client");
  }

  /** True when a fixed cohort checks in under the participation schema. */
  public boolean checkInSampling() {
    return sampling.equals("checkin");
  }

  /**
   * Who checks in when, for {@code checkin} sampling: drawn from the seed (mixed, so that it does
   * not repeat the data split's stream).
   */
  public CheckInSampling checkIns() {
    return new CheckInSampling(
        clients, expectedClients, minSeparation, maxParticipations, seed ^ 0x636865636B696EL);
  }

  /** The same simulation without privacy: noise 0, infinite budget, through the same pipeline. */
  public SimulationConfig nonPrivate() {
    return toBuilder().noiseMultiplier(0.0).build();
  }

  /**
   * A builder with nothing set but the noise multiplier and target epsilon (NaN) and adaptive
   * clipping (null: fixed C).
   */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this simulation's values, to build a copy that differs in some. */
  public Builder toBuilder() {
    return builder()
        .dataset(dataset)
        .model(model)
        .hidden(hidden)
        .clients(clients)
        .expectedClients(expectedClients)
        .sampling(sampling)
        .minSeparation(minSeparation)
        .maxParticipations(maxParticipations)
        .mechanism(mechanism)
        .rounds(rounds)
        .partition(partition)
        .alpha(alpha)
        .noiseMultiplier(noiseMultiplier)
        .targetEpsilon(targetEpsilon)
        .delta(delta)
        .clipNorm(clipNorm)
        .adaptiveClipping(adaptiveClipping)
        .serverOptimizer(serverOptimizer)
        .training(training)
        .roundTimeoutMillis(roundTimeoutMillis)
        .noiseSource(noiseSource)
        .seed(seed)
        .canaries(canaries)
        .secureAggregation(secureAggregation)
        .bitsPerCoordinate(bitsPerCoordinate)
        .bands(bands);
  }

  /** Collects a simulation's values; {@link #build} checks them all at once. */
  public static final class Builder {
    private String dataset;
    private String model;
    private int hidden;
    private int clients;
    private int expectedClients;
    private String sampling;
    private int minSeparation = 1;
    private int maxParticipations;
    private String mechanism = "independent";
    private int rounds;
    private String partition;
    private double alpha;
    private double noiseMultiplier = Double.NaN;
    private double targetEpsilon = Double.NaN;
    private double delta;
    private double clipNorm;
    private AdaptiveClipping adaptiveClipping;
    private ServerOptimizer serverOptimizer;
    private TrainingOptions training;
    private long roundTimeoutMillis;
    private String noiseSource;
    private long seed;
    private int canaries;
    private boolean secureAggregation;
    private int bitsPerCoordinate = 18;
    private int bands;

    private Builder() {}

    public Builder dataset(String dataset) {
      this.dataset = dataset;
      return this;
    }

    public Builder model(String model) {
      this.model = model;
      return this;
    }

    /** Hidden units of an MLP; a softmax model has none. */
    public Builder hidden(int hidden) {
      this.hidden = hidden;
      return this;
    }

    public Builder clients(int clients) {
      this.clients = clients;
      return this;
    }

    /** The expected cohort m per round: the average's denominator, m / clients the rate. */
    public Builder expectedClients(int expectedClients) {
      this.expectedClients = expectedClients;
      return this;
    }

    /** One of {@link #SAMPLINGS}. */
    public Builder sampling(String sampling) {
      this.sampling = sampling;
      return this;
    }

    /** Rounds after a contribution before the client may contribute again (b; 1: any round). */
    public Builder minSeparation(int minSeparation) {
      this.minSeparation = minSeparation;
      return this;
    }

    /** Most contributions of one client over the run (k); 0 (the default): {@code rounds}. */
    public Builder maxParticipations(int maxParticipations) {
      this.maxParticipations = maxParticipations;
      return this;
    }

    /** One of {@link #MECHANISMS}; {@code independent} by default. */
    public Builder mechanism(String mechanism) {
      this.mechanism = mechanism;
      return this;
    }

    public Builder rounds(int rounds) {
      this.rounds = rounds;
      return this;
    }

    /** {@code iid} or {@code dirichlet} (with concentration {@link #alpha}). */
    public Builder partition(String partition) {
      this.partition = partition;
      return this;
    }

    public Builder alpha(double alpha) {
      this.alpha = alpha;
      return this;
    }

    /** The server's z; NaN (the default) plans it from {@link #targetEpsilon}, 0 is no privacy. */
    public Builder noiseMultiplier(double noiseMultiplier) {
      this.noiseMultiplier = noiseMultiplier;
      return this;
    }

    /** The epsilon to spend over the rounds; used when the noise multiplier is NaN. */
    public Builder targetEpsilon(double targetEpsilon) {
      this.targetEpsilon = targetEpsilon;
      return this;
    }

    public Builder delta(double delta) {
      this.delta = delta;
      return this;
    }

    /** The server's C; with adaptive clipping the initial C. */
    public Builder clipNorm(double clipNorm) {
      this.clipNorm = clipNorm;
      return this;
    }

    /** Adaptive clipping from {@link #clipNorm}; null (the default) keeps C fixed. */
    public Builder adaptiveClipping(AdaptiveClipping adaptiveClipping) {
      this.adaptiveClipping = adaptiveClipping;
      return this;
    }

    public Builder serverOptimizer(ServerOptimizer serverOptimizer) {
      this.serverOptimizer = serverOptimizer;
      return this;
    }

    public Builder training(TrainingOptions training) {
      this.training = training;
      return this;
    }

    public Builder roundTimeoutMillis(long roundTimeoutMillis) {
      this.roundTimeoutMillis = roundTimeoutMillis;
      return this;
    }

    /** {@code secure} or {@code seeded} (experiments, from {@link #seed}). */
    public Builder noiseSource(String noiseSource) {
      this.noiseSource = noiseSource;
      return this;
    }

    /** Seed of the data split, partition, training and seeded noise. */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /**
     * Clients that are canaries (the last {@code canaries} of them), with as many unseen ones for
     * the audit's null; 0 (the default) runs no audit.
     */
    public Builder canaries(int canaries) {
      this.canaries = canaries;
      return this;
    }

    /**
     * Secure aggregation (SecAgg+, docs/secure-aggregation.md): the clients mask their updates and
     * the job learns only each round's sum; default false.
     */
    public Builder secureAggregation(boolean secureAggregation) {
      this.secureAggregation = secureAggregation;
      return this;
    }

    /** With distributed noise: the masked words' width, 8 to 32; default 18. */
    public Builder bitsPerCoordinate(int bitsPerCoordinate) {
      this.bitsPerCoordinate = bitsPerCoordinate;
      return this;
    }

    /** With mechanism {@code bandmf}: the band count b; 0 (the default): the spec plans it. */
    public Builder bands(int bands) {
      this.bands = bands;
      return this;
    }

    /**
     * The simulation, once every value is allowed; the first that is not fails with an {@link
     * IllegalArgumentException} naming the field, the rule and the value.
     */
    public SimulationConfig build() {
      given("dataset", dataset);
      given("model", model);
      Checks.atLeastOne("clients", clients);
      Checks.atLeastOne("expectedClients", expectedClients);
      if (expectedClients > clients) {
        throw new IllegalArgumentException(
            "expectedClients must be <= clients (" + clients + "), was " + expectedClients);
      }
      if (!SAMPLINGS.contains(sampling)) {
        throw new IllegalArgumentException(
            "sampling must be one of " + SAMPLINGS + ", was '" + sampling + "'");
      }
      Checks.atLeastOne("rounds", rounds);
      int k = maxParticipations == 0 ? rounds : maxParticipations;
      Checks.atLeastOne("minSeparation", minSeparation);
      Checks.atLeastOne("maxParticipations", k);
      if (!MECHANISMS.contains(mechanism)) {
        throw new IllegalArgumentException(
            "mechanism must be one of " + MECHANISMS + ", was '" + mechanism + "'");
      }
      if (mechanism.equals("blt") && !sampling.equals("checkin")) {
        throw new IllegalArgumentException(
            "mechanism blt needs sampling checkin (the job refuses sampled rounds), was '"
                + sampling
                + "'");
      }
      if (mechanism.equals("blt") && !"seeded".equals(noiseSource)) {
        throw new IllegalArgumentException(
            "mechanism blt needs noiseSource seeded here (the job takes keyed or seeded), was '"
                + noiseSource
                + "'");
      }
      if (mechanism.equals("bandmf")) {
        if (!sampling.equals("server") || !"seeded".equals(noiseSource)) {
          throw new IllegalArgumentException(
              "mechanism bandmf needs sampling server (the job puts clients in groups and samples"
                  + " each round's group) and noiseSource seeded here, was '"
                  + sampling
                  + "' and '"
                  + noiseSource
                  + "'");
        }
        if (!Double.isNaN(noiseMultiplier)) {
          throw new IllegalArgumentException(
              "mechanism bandmf plans its bands and z for targetEpsilon; give no noiseMultiplier");
        }
      }
      if (bands != 0 && (!mechanism.equals("bandmf") || bands < 0)) {
        throw new IllegalArgumentException(
            "bands is a positive band count for mechanism bandmf (0: planned), was "
                + bands
                + " with mechanism "
                + mechanism);
      }
      if (mechanism.equals("distributed-discrete-gaussian")) {
        if (!secureAggregation) {
          throw new IllegalArgumentException(
              "mechanism distributed-discrete-gaussian needs secure aggregation (clients add"
                  + " their noise shares before masking)");
        }
        if (!sampling.equals("checkin") && expectedClients != clients) {
          throw new IllegalArgumentException(
              "mechanism distributed-discrete-gaussian takes no Poisson-sampled rounds: use"
                  + " sampling checkin, or a cohort of every client");
        }
        if (bitsPerCoordinate < 8 || bitsPerCoordinate > 32) {
          throw new IllegalArgumentException(
              "bitsPerCoordinate must be in [8, 32], was " + bitsPerCoordinate);
        }
      }
      if (!"iid".equals(partition) && !"dirichlet".equals(partition)) {
        throw new IllegalArgumentException(
            "partition must be iid or dirichlet, was '" + partition + "'");
      }
      if (Double.isNaN(noiseMultiplier)) {
        Checks.positiveFinite("targetEpsilon", targetEpsilon);
      } else {
        Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
      }
      Checks.openUnitInterval("delta", delta);
      Checks.positiveFinite("clipNorm", clipNorm);
      given("serverOptimizer", serverOptimizer);
      given("training", training);
      if (roundTimeoutMillis < 500) {
        throw new IllegalArgumentException(
            "roundTimeoutMillis must be >= 500, was " + roundTimeoutMillis);
      }
      given("noiseSource", noiseSource);
      if (secureAggregation && adaptiveClipping != null) {
        throw new IllegalArgumentException(
            "secure aggregation needs a fixed clip norm: clients clip themselves to the C the job"
                + " announces; drop adaptive clipping or secure aggregation");
      }
      if (secureAggregation && roundTimeoutMillis < 8000) {
        throw new IllegalArgumentException(
            "secure aggregation's six phases need roundTimeoutMillis >= 8000 (each phase waits"
                + " for a checkpoint), was "
                + roundTimeoutMillis);
      }
      if (canaries == 1 || !(canaries >= 0 && canaries < clients)) {
        throw new IllegalArgumentException(
            "canaries must be 0 (no audit) or at least 2 and fewer than clients ("
                + clients
                + "), was "
                + canaries);
      }
      return new SimulationConfig(
          dataset,
          model,
          hidden,
          clients,
          expectedClients,
          sampling,
          minSeparation,
          k,
          mechanism,
          rounds,
          partition,
          alpha,
          noiseMultiplier,
          targetEpsilon,
          delta,
          clipNorm,
          adaptiveClipping,
          serverOptimizer,
          training,
          roundTimeoutMillis,
          noiseSource,
          seed,
          canaries,
          secureAggregation,
          bitsPerCoordinate,
          bands);
    }

    private static void given(String field, Object value) {
      if (value == null) {
        throw new IllegalArgumentException(field + " must be given, was null");
      }
    }
  }
}
