package dev.privagg.spec;

import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.correlated.NoiseCorrelation;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.io.FloatTensor;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.ClippingPolicy;
import dev.privagg.privacy.GaussianMechanism;
import dev.privagg.privacy.RoundCharge;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.UnmaskingGate;
import dev.privagg.statistics.Block;
import dev.privagg.statistics.StatisticsQuery;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A validated job: model shape, round policy, privacy parameters and topics. Built only by {@link
 * JobSpecReader}, so an instance always satisfies every rule the reader checks; the noise
 * multiplier is already resolved (planned from a target epsilon when the spec asked for it).
 *
 * @param statistics null for model training; for a statistics job the query whose bounded sums are
 *     the model's tensors (one per block), released each round as they are
 */
public record JobSpec(
    String jobId,
    Model model,
    Rounds rounds,
    Privacy privacy,
    ServerOptimizer serverOptimizer,
    long maxRecordBytes,
    int maxClientIdBytes,
    int maxMetadataBytes,
    Topics topics,
    Aggregation aggregation,
    StatisticsQuery statistics)
    implements Serializable {

  /**
   * Largest model this job accepts, in parameters: an update of 2^27 float32 values is 512 MiB, and
   * the default record limit (twice that plus 1 MiB) must still fit a Kafka record size (an int).
   */
  public static final long MAX_DIMENSION = 1L << 27;

  /** Largest accepted {@code maxRecordBytes}: topic sizes add 1 MiB to it and must fit an int. */
  public static final long MAX_RECORD_BYTES = Integer.MAX_VALUE - (1L << 21);

  /** Default cap on a client id's UTF-8 length: ids are stored per round, so they are bounded. */
  public static final int DEFAULT_MAX_CLIENT_ID_BYTES = 256;

  /**
   * Default cap on the clients one round takes. Each costs about 110 bytes of heap in the round's
   * seen set (heap state backend), so a round at the cap holds about 110 MB: within a default
   * TaskManager even when unauthenticated clients flood it with fresh ids.
   */
  public static final long DEFAULT_MAX_CLIENTS_PER_ROUND = 1_000_000;

  /** Default cap on an update's metadata (its encoded bytes). */
  public static final int DEFAULT_MAX_METADATA_BYTES = 4096;

  /** One tensor of the model. */
  public record TensorSpec(String name, int[] shape) implements Serializable {
    /** Number of float32 values; the reader has checked that it is at most MAX_DIMENSION. */
    public int size() {
      return Math.toIntExact(sizeOf(shape));
    }

    /**
     * The product of {@code shape} in long arithmetic, or -1 once it exceeds {@link
     * #MAX_DIMENSION}: checked per factor, so no shape can wrap around to a small number.
     */
    public static long sizeOf(int[] shape) {
      long size = 1;
      for (int dim : shape) {
        if (dim < 1) {
          return -1;
        }
        size *= dim; // both factors are <= 2^31, so the product fits a long before the check
        if (size > MAX_DIMENSION) {
          return -1;
        }
      }
      return size;
    }
  }

  /**
   * Tensors and how the initial model (round 0) is set: zeros, N(0, initStd^2) from a seed, or the
   * values of a model file ({@code init} "file"). A file's values are read and checked against the
   * tensors when the spec is read, and travel with the spec ({@code initValues}, in tensor order):
   * the job never reads the file itself.
   *
   * @param initFile the model file as the spec names it, or null
   * @param initValues its values in tensor order when {@code init} is "file", else null
   */
  public record Model(
      List<TensorSpec> tensors,
      String init,
      long initSeed,
      double initStd,
      String initFile,
      float[] initValues)
      implements Serializable {
    /** Sizes of the tensors, in order. */
    public int[] tensorSizes() {
      return tensors.stream().mapToInt(TensorSpec::size).toArray();
    }

    /**
     * An upper bound on the Avro encoding of the tensors array (as in ClientUpdate and
     * GlobalModel): per tensor its name, shape blocks and float32 data, every varint at its widest.
     */
    public long maxEncodedTensorBytes() {
      long size = 10; // block count and end
      for (TensorSpec t : tensors) {
        size += 5L + t.name().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        size += 10L + 5L * t.shape().length + 1;
        size += 5L + 4L * t.size();
      }
      return size;
    }

    /** {@code values} (all tensors' values in order) cut into this model's named tensors. */
    public List<FloatTensor> split(float[] values) {
      if (values.length != dimension()) {
        throw new IllegalArgumentException(
            "the model has " + dimension() + " values, was given " + values.length);
      }
      List<FloatTensor> out = new ArrayList<>();
      int offset = 0;
      for (TensorSpec t : tensors) {
        out.add(
            new FloatTensor(
                t.name(),
                t.shape().clone(),
                Arrays.copyOfRange(values, offset, offset + t.size())));
        offset += t.size();
      }
      return out;
    }

    /** Total number of parameters. */
    public int dimension() {
      return tensors.stream().mapToInt(TensorSpec::size).sum();
    }
  }

  /**
   * Round policy. {@code expectedClients} is the data-independent denominator m; rounds close at
   * the timeout, or at m updates when {@code closeEarly}; {@code minimumCohort} (0 = off) needs a
   * noisy count of at least that many to release. Round 1 stays open {@code startGraceMillis}
   * longer: its announcement is only visible once the new job's first checkpoint completes. A round
   * takes at most {@code maxClients} clients. {@code nextRoundAtEarlyClose} opens the next round
   * when one closes early instead of at its deadline, which makes the schedule depend on the data:
   * the reader only allows it with an infinite budget, and every round is charged as unbounded.
   * {@code startAtMillis} (0: none) is when a new job's round 1 opens if that is after its first
   * start: nothing is announced or charged before, so a job can be deployed before its clients.
   */
  public record Rounds(
      long timeoutMillis,
      long startGraceMillis,
      int expectedClients,
      boolean closeEarly,
      boolean nextRoundAtEarlyClose,
      double minimumCohort,
      double minimumCohortNoiseStd,
      long maxClients,
      long startAtMillis)
      implements Serializable {}

  /** How updates are sampled and what rate the accountant may use. */
  public record Sampling(String mode, double rate, long populationSize, long expectedCohort)
      implements Serializable {
    /** The rate the accountant uses: 1 without sampling. */
    public double accountingRate() {
      return switch (mode) {
        case "server-poisson" -> rate;
        case "declared-client-poisson" -> (double) expectedCohort / populationSize;
        default -> 1.0;
      };
    }

    /** True when the rate is the operator's claim rather than enforced by the job. */
    public boolean declared() {
      return mode.equals("declared-client-poisson");
    }
  }

  /** Where noise comes from: secure, keyed (key from a file or an environment variable), seeded. */
  public record Noise(String source, long seed, String keyFile, String keyEnv)
      implements Serializable {}

  /**
   * Privacy parameters; {@code noiseMultiplier} is resolved. With {@code adaptiveClipping} (null: C
   * is fixed) {@code clipNorm} is the first round's C. {@code correlated} is null for independent
   * noise per round, else the BLT mechanism over {@code plannedRounds} rounds.
   */
  public record Privacy(
      double clipNorm,
      String clipping,
      String layerSplit,
      double noiseMultiplier,
      double targetEpsilon,
      long plannedRounds,
      double delta,
      double budgetEpsilon,
      String accountant,
      Sampling sampling,
      Noise noise,
      AdaptiveClipping adaptiveClipping,
      Correlated correlated,
      boolean distributed)
      implements Serializable {
    /** These parameters with noise multiplier {@code z}. */
    public Privacy withNoiseMultiplier(double z) {
      return new Privacy(
          clipNorm,
          clipping,
          layerSplit,
          z,
          targetEpsilon,
          plannedRounds,
          delta,
          budgetEpsilon,
          accountant,
          sampling,
          noise,
          adaptiveClipping,
          correlated,
          distributed);
    }
  }

  /**
   * Correlated noise ({@code privacy.mechanism: blt}): the noise of round t is sigma (C^-1 Z)_t for
   * the BLT strategy C(theta, omega) with Z i.i.d. standard normal, sigma = noiseMultiplier *
   * clipNorm * plannedSensitivity. Every client contributes at most {@code maxParticipations}
   * times, in rounds at least {@code minSeparation} apart (round numbers r' - r >= minSeparation; 1
   * allows consecutive rounds), which the job enforces.
   *
   * @param plannedSensitivity the strategy's min-separation sensitivity over all planned rounds
   * @param noiseBlocks how many coordinate blocks generate the noise in parallel, each with its own
   *     buffers and stream; fixed for the run, since a block's stream is named by it
   */
  public record Correlated(
      int minSeparation,
      int maxParticipations,
      String error,
      double[] theta,
      double[] omega,
      double plannedSensitivity,
      int noiseBlocks,
      double[] bandCoefficients)
      implements Serializable {
    /** A BLT's settings: no bands. */
    public Correlated(
        int minSeparation,
        int maxParticipations,
        String error,
        double[] theta,
        double[] omega,
        double plannedSensitivity,
        int noiseBlocks) {
      this(
          minSeparation,
          maxParticipations,
          error,
          theta,
          omega,
          plannedSensitivity,
          noiseBlocks,
          null);
    }

    /**
     * Amplified banded MF ({@code privacy.mechanism: bandmf}): the b-banded C of these
     * coefficients, clients in b groups, each group's rounds b apart.
     */
    public static Correlated banded(
        BandedToeplitz strategy, long rounds, String error, int noiseBlocks) {
      int b = strategy.bands();
      return new Correlated(
          b,
          (int) ((rounds + b - 1) / b),
          error,
          new double[0],
          new double[0],
          1.0,
          noiseBlocks,
          strategy.coefficients());
    }

    /** Whether this is amplified banded MF rather than a BLT. */
    public boolean banded() {
      return bandCoefficients != null;
    }

    /** The strategy matrix's BLT parameters (a BLT run only). */
    public BufferedToeplitz strategy() {
      if (banded()) {
        throw new IllegalStateException("a banded run has no BLT");
      }
      return BufferedToeplitz.of(theta, omega);
    }

    /** The banded strategy (a bandmf run only). */
    public BandedToeplitz bandedStrategy() {
      if (!banded()) {
        throw new IllegalStateException("a BLT run has no banded strategy");
      }
      return BandedToeplitz.of(bandCoefficients);
    }

    /** How the noise blocks turn each round's Z into its correlated noise. */
    public NoiseCorrelation noiseCorrelation() {
      return banded() ? bandedStrategy() : strategy();
    }

    /** The participation schema over {@code rounds} rounds. */
    public ParticipationSchema schema(long rounds) {
      return new ParticipationSchema(rounds, minSeparation, maxParticipations);
    }
  }

  /**
   * Kafka topics; every job of one Flink job shares them. Public: models and rounds. The rest are
   * operator-internal; {@code releases} holds each release as the job commits it, before a
   * publishing step copies it to the public topic it names.
   */
  public record Topics(
      String updates,
      String models,
      String rounds,
      String ledger,
      String rejects,
      String releases,
      String secure)
      implements Serializable {
    /**
     * The six topics every job uses; {@code secure} (the phase messages of secure aggregation, read
     * by the round's clients) only where a job aggregates securely.
     */
    public List<String> all() {
      return List.of(updates, models, rounds, ledger, rejects, releases);
    }

    /** The topics any client may read (and so read uncommitted). */
    public List<String> publicTopics() {
      return List.of(models, rounds);
    }
  }

  /**
   * How a round's updates reach the sum (docs/secure-aggregation.md). {@code plaintext}: clients
   * send updates and the job clips them. {@code secure}: SecAgg+, the job learns only the sum of
   * the updates clients clipped and quantized themselves; each phase ends at a fixed offset from
   * the round's opening, the unmask phase at the round's deadline.
   *
   * @param maxDropoutRate fraction of the roster that may drop out before unmasking
   * @param adversarialClientRate fraction of the roster that may collude with the server
   * @param adversary {@code semi-malicious-server} (the default: thresholds above half of each
   *     neighbourhood, so no two survivor lists unmask a client) or {@code curious-server} (FCP's
   *     lower thresholds for an honest-but-curious server)
   * @param distributedNoise with {@code privacy.mechanism: distributed-discrete-gaussian}, how
   *     clients put their updates and noise shares on {@code aggregation.bitsPerCoordinate}-bit
   *     words; null otherwise
   */
  public record Aggregation(
      String mode,
      double maxDropoutRate,
      double adversarialClientRate,
      String adversary,
      long advertiseMillis,
      long shareMillis,
      long confirmMillis,
      long maskedInputMillis,
      long consistencyMillis,
      DistributedNoisePlan distributedNoise)
      implements Serializable {
    /** Plaintext aggregation: the job clips and sums updates itself. */
    public static final Aggregation PLAINTEXT =
        new Aggregation("plaintext", 0, 0, "semi-malicious-server", 0, 0, 0, 0, 0, null);

    /** The adversaries {@code aggregation.adversary} names. */
    public static final java.util.List<String> ADVERSARIES =
        java.util.List.of("semi-malicious-server", "curious-server");

    /** True for {@code aggregation.mode: secure}. */
    public boolean secure() {
      return mode.equals("secure");
    }

    /** This aggregation with clients adding {@code plan}'s noise shares. */
    public Aggregation withDistributedNoise(DistributedNoisePlan plan) {
      return new Aggregation(
          mode,
          maxDropoutRate,
          adversarialClientRate,
          adversary,
          advertiseMillis,
          shareMillis,
          confirmMillis,
          maskedInputMillis,
          consistencyMillis,
          plan);
    }
  }

  /**
   * The clients' noise shares and grid with {@code privacy.mechanism:
   * distributed-discrete-gaussian}, or null: then the job adds the noise itself.
   */
  public DistributedNoisePlan distributedNoise() {
    return aggregation.distributedNoise();
  }

  /** Words of a masked input: the padded dimension with distributed noise, else d. */
  public int maskedDimension() {
    DistributedNoisePlan plan = distributedNoise();
    return plan == null ? model.dimension() : plan.paddedDimension();
  }

  /** Bits of a masked input's word: the plan's with distributed noise, else 64. */
  public int maskedWordBits() {
    DistributedNoisePlan plan = distributedNoise();
    return plan == null ? 64 : plan.bits();
  }

  /** Whether the job aggregates securely (SecAgg+): it never sees one client's update. */
  public boolean secureAggregation() {
    return aggregation.secure();
  }

  /** The clipping policy this spec asks for, at its (first round's) clip norm. */
  public ClippingPolicy clippingPolicy() {
    return clippingPolicy(privacy.clipNorm());
  }

  /**
   * The clipping policy at {@code clipNorm}, the C a round was announced with (adaptive clipping's,
   * or the spec's when the round opened): every mode clips, sums and decodes at that C, whatever
   * the spec says after a restore.
   */
  public ClippingPolicy clippingPolicy(double clipNorm) {
    if (privacy.clipping().equals("flat")) {
      return ClippingPolicy.flat(clipNorm);
    }
    if (statistics != null) {
      return ClippingPolicy.perLayer(
          clipNorm, statistics.blocks().stream().mapToDouble(Block::share).toArray());
    }
    ClippingPolicy.LayerSplit split =
        privacy.layerSplit().equals("equal")
            ? ClippingPolicy.LayerSplit.EQUAL
            : ClippingPolicy.LayerSplit.SQRT_SIZE;
    return ClippingPolicy.perLayer(clipNorm, model.tensorSizes(), split);
  }

  /**
   * beta: per round, the probability that a secure round is released otherwise than the ledger's
   * mechanism (UnmaskingGate); 0 in plaintext mode.
   */
  public double secureFailureProbabilityPerRound() {
    if (!secureAggregation()) {
      return 0;
    }
    double beta =
        UnmaskingGate.failureProbability(
            RoundGraph.threatModel(
                aggregation.maxDropoutRate(),
                aggregation.adversarialClientRate(),
                aggregation.adversary()),
            rounds.minimumCohort(),
            rounds.minimumCohortNoiseStd());
    if (distributedNoise() != null) {
      // The shares are sized for the fewest honest inputs an unmasked round holds; the gate may
      // pass fewer, with this probability.
      beta +=
          UnmaskingGate.belowFewestProbability(
              rounds.minimumCohort(), rounds.minimumCohortNoiseStd());
    }
    return beta;
  }

  /** How a round of this job is charged to the budget. */
  public RoundCharge roundCharge() {
    return new RoundCharge(
        privacy.sampling().accountingRate(),
        rounds.closeEarly(),
        rounds.nextRoundAtEarlyClose(),
        rounds.minimumCohort() > 0 ? rounds.minimumCohortNoiseStd() : 0,
        privacy.adaptiveClipping() == null ? 0 : privacy.adaptiveClipping().countNoiseMultiplier(),
        privacy.distributed());
  }

  /**
   * The round-0 model: zeros, N(0, initStd^2) weights from initSeed (same on every run), or the
   * init file's values (a copy: callers may change it).
   */
  public float[] initialWeights() {
    if (model.init().equals("file")) {
      return model.initValues().clone();
    }
    float[] weights = new float[model.dimension()];
    if (model.init().equals("random")) {
      java.util.SplittableRandom random = new java.util.SplittableRandom(model.initSeed());
      for (int i = 0; i < weights.length; i++) {
        weights[i] = (float) (random.nextGaussian() * model.initStd());
      }
    }
    return weights;
  }

  /** The round-0 model as named tensors, in spec order. */
  public List<FloatTensor> initialTensors() {
    return model.split(initialWeights());
  }

  /**
   * An upper bound on this job's encoded GlobalModel record: the float32 data, each tensor's name
   * and shape, and 1 MiB for the rest (ids and privacy statement). Topic and producer limits for
   * models use it: a model record over the limit would fail the sink at every release.
   */
  public long maxModelRecordBytes() {
    return (1 << 20) + model.maxEncodedTensorBytes();
  }

  /**
   * Largest record the job writes to the secure topic: a Roster of {@code rounds.maxClients}
   * entries (four 32-byte fields and a permutation entry, at most 137 bytes each; the Consistency
   * record's signatures are smaller) and 1 MiB for the rest; 0 for a plaintext job.
   */
  public long maxSecureRecordBytes() {
    return secureAggregation() ? (1 << 20) + SECURE_ROSTER_ENTRY_BYTES * rounds.maxClients() : 0;
  }

  /** Bytes of one Roster entry at most: four length-prefixed 32-byte fields and an int. */
  public static final long SECURE_ROSTER_ENTRY_BYTES = 137;

  /**
   * The Gaussian mechanism on the sum of updates clipped to {@code clipNorm} (a round's C). With
   * correlated noise its noise is the fresh Z_t, sigma = z * C * plannedSensitivity, before the
   * combiner correlates it.
   */
  public GaussianMechanism mechanism(double clipNorm) {
    double z = privacy.noiseMultiplier();
    return new GaussianMechanism(
        correlated() ? z * privacy.correlated().plannedSensitivity() : z, clipNorm);
  }

  /** Whether the noise is correlated across rounds (BLT). */
  public boolean correlated() {
    return privacy.correlated() != null;
  }

  /** Whether this job releases statistics rather than training a model. */
  public boolean statisticsJob() {
    return statistics != null;
  }

  /** Whether C moves from round to round (adaptive clipping). */
  public boolean adaptiveClipping() {
    return privacy.adaptiveClipping() != null;
  }
}
