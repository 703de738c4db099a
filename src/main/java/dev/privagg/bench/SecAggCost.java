package dev.privagg.bench;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.Commitments;
import dev.privagg.avro.Consistency;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.Opened;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.Roster;
import dev.privagg.avro.RosterEntry;
import dev.privagg.avro.RoutedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.SecureRound;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.Shares;
import dev.privagg.avro.SignedSurvivors;
import dev.privagg.avro.SurvivorSignature;
import dev.privagg.avro.Survivors;
import dev.privagg.client.ClientUpdates;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.distributed.GridEncoder;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.MaskCorrection;
import dev.privagg.secagg.MaskedSum;
import dev.privagg.secagg.Quantizer;
import dev.privagg.secagg.RoundContext;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.SigningKeys;
import dev.privagg.secagg.SurvivorStatement;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.secagg.UnmaskShares;
import dev.privagg.secagg.Unmasking;
import dev.privagg.secagg.UnmaskingGate;
import dev.privagg.secagg.WordPacking;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * What secure aggregation (docs/secure-aggregation.md) costs against plaintext mode, measured side
 * by side in one process, with no broker and no Flink: a roster of real {@link ClientSession}s on
 * the graph the job would choose ({@link RoundGraph}) runs the six phases, a fraction of the
 * clients dropping out after phase 2 so that the unmasking reconstructs their mask keys; the same
 * updates go through plaintext mode's client encoding and the job's clip and fixed-point sum.
 *
 * <p>Measured: the Avro bytes each client sends and reads (message payloads, without Kafka's record
 * and batch overhead; the model both modes read is left out), each phase's CPU time on the client
 * against plaintext's encode, and the job's work on the round's values: clip and sum of the updates
 * against the 64-bit sum of the masked inputs, the reconstruction of the secrets and the mask
 * correction over all d coordinates. Times are the measuring thread's CPU time, so other load on
 * the machine disturbs them less than wall time; the job spreads the correction over its unmask
 * blocks, here it runs on one thread.
 *
 * <p>The updates lie on the fixed-point grid within the clip norm, so the client's randomized
 * rounding and the job's truncation give the same integers: the unmasked sum must equal the
 * plaintext sum of the survivors unit for unit, or the run fails.
 */
public final class SecAggCost {
  static final String JOB_ID = "secagg-cost";

  private static final double CLIP_NORM = 1.0;

  /** The largest |k| of an update value {@code k 2^-e}. */
  private static final int MAX_GRID_STEPS = 1024;

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private SecAggCost() {}

  /**
   * @param dimension d, the model's float32 parameters
   * @param clients m, the roster's size
   * @param dropoutRate the fraction of the roster that drops out after phase 2 (rounded down), and
   *     the job's {@code aggregation.maxDropoutRate}
   * @param adversarialClientRate the job's {@code aggregation.adversarialClientRate}
   * @param warmupRounds untimed rounds before the measured ones
   * @param repetitions rounds measured; each figure is a median over them (and over clients)
   * @param bits 64 for secure rounds of central noise; 8 to 32 for distributed noise, where each
   *     client puts its update and a discrete Gaussian share (noise multiplier 1, sized for the
   *     round's survivors) on words of this many bits
   */
  public record Settings(
      int dimension,
      int clients,
      double dropoutRate,
      double adversarialClientRate,
      int warmupRounds,
      int repetitions,
      int bits) {
    /** Secure rounds of 64-bit words (the job adds the noise). */
    public Settings(
        int dimension,
        int clients,
        double dropoutRate,
        double adversarialClientRate,
        int warmupRounds,
        int repetitions) {
      this(dimension, clients, dropoutRate, adversarialClientRate, warmupRounds, repetitions, 64);
    }

    public Settings {
      if (bits != 64
          && (bits < DistributedNoisePlan.MIN_BITS || bits > DistributedNoisePlan.MAX_BITS)) {
        throw new IllegalArgumentException(
            "bits must be 64 or in ["
                + DistributedNoisePlan.MIN_BITS
                + ", "
                + DistributedNoisePlan.MAX_BITS
                + "], was "
                + bits);
      }
      if (!(dimension >= 1 && dimension <= JobSpec.MAX_DIMENSION)) {
        throw new IllegalArgumentException(
            "dimension must be in [1, " + JobSpec.MAX_DIMENSION + "], was " + dimension);
      }
      if (clients < 2) {
        throw new IllegalArgumentException("clients must be >= 2, was " + clients);
      }
      if (!(dropoutRate >= 0 && dropoutRate < 1)) {
        throw new IllegalArgumentException("dropoutRate must be in [0, 1), was " + dropoutRate);
      }
      if (!(adversarialClientRate >= 0 && adversarialClientRate < 1)) {
        throw new IllegalArgumentException(
            "adversarialClientRate must be in [0, 1), was " + adversarialClientRate);
      }
      if (!(adversarialClientRate + 2 * dropoutRate <= 0.9)) {
        throw new IllegalArgumentException(
            "adversarialClientRate + 2 * dropoutRate must be <= 0.9 (the job's default adversary,"
                + " a semi-malicious server), was "
                + adversarialClientRate
                + " + 2 * "
                + dropoutRate);
      }
      if (warmupRounds < 0) {
        throw new IllegalArgumentException("warmupRounds must be >= 0, was " + warmupRounds);
      }
      if (repetitions < 1) {
        throw new IllegalArgumentException("repetitions must be >= 1, was " + repetitions);
      }
    }

    /** The clients that drop out after phase 2. */
    public int dropped() {
      return (int) Math.floor(dropoutRate * clients + 1e-9);
    }
  }

  /**
   * Bytes one surviving client sends (up) and reads (down) in one round, medians over the
   * survivors: a plaintext update, and the payload of each secure phase's message.
   */
  public record Bytes(
      long plaintextUp,
      long advertiseUp,
      long shareKeysUp,
      long maskedInputUp,
      long signatureUp,
      long unmaskUp,
      long openedDown,
      long rosterDown,
      long sharesDown,
      long survivorsDown,
      long consistencyDown,
      long secureUp,
      long secureDown) {
    /** Secure bytes sent over plaintext bytes sent. */
    public double expansionUp() {
      return (double) secureUp / plaintextUp;
    }

    /** Secure bytes sent and read over plaintext bytes sent. */
    public double expansionTotal() {
      return (double) (secureUp + secureDown) / plaintextUp;
    }
  }

  /**
   * One client's CPU milliseconds per update, medians over the survivors and the repetitions:
   * plaintext mode's encode against each secure phase ({@code advertise} includes drawing the key
   * pairs and seed; {@code encode} is the Avro encoding of the four messages). {@code secureTotal}
   * is the median of each client's sum, so the phases need not add up to it exactly.
   */
  public record ClientCpu(
      double plaintextEncode,
      double advertise,
      double onRoster,
      double onShares,
      double quantize,
      double maskedInput,
      double sign,
      double unmask,
      double encode,
      double secureTotal) {
    public double ratio() {
      return secureTotal / plaintextEncode;
    }
  }

  /**
   * The job's CPU milliseconds on one round's values, medians over the repetitions: plaintext's
   * clip and fixed-point sum of the survivors' updates (their float32 bytes read as the shard does)
   * against the sum of their masked inputs, the check of each survivor's signature of the survivor
   * statement, the reconstruction of the secrets from the unmask shares, and the mask correction
   * ({@code correctionTerms} masks, a median too: it depends on which clients dropped) over all d
   * coordinates.
   */
  public record ServerCpu(
      double plaintextSum,
      double maskedSum,
      double signatures,
      double reconstruct,
      double correction,
      int correctionTerms) {
    public double secureTotal() {
      return maskedSum + signatures + reconstruct + correction;
    }

    public double ratio() {
      return secureTotal() / plaintextSum;
    }
  }

  /**
   * @param neighbourhoodSize k, the Roster's degree: each client with its k - 1 neighbours
   * @param threshold t
   * @param survivors clients that sent a masked input and unmask shares
   */
  public record Result(
      Settings settings,
      int neighbourhoodSize,
      int threshold,
      int survivors,
      Bytes bytes,
      ClientCpu clientCpu,
      ServerCpu serverCpu) {}

  /**
   * Runs {@code settings.warmupRounds()} untimed rounds, so that the JIT has compiled the hot loops
   * at this d, then {@code settings.repetitions()} measured rounds.
   *
   * @param progress receives a line per phase and per tenth of the masked inputs
   * @throws IllegalStateException if the roster admits no graph, the round cannot be unmasked, or
   *     the unmasked sum differs from the plaintext sum of the survivors
   */
  public static Result run(Settings settings, Consumer<String> progress) {
    int total = settings.warmupRounds() + settings.repetitions();
    List<Round> measured = new ArrayList<>();
    for (int r = 1; r <= total; r++) {
      boolean warmup = r <= settings.warmupRounds();
      String label =
          warmup
              ? "warm-up round " + r + " of " + settings.warmupRounds()
              : "round " + (r - settings.warmupRounds()) + " of " + settings.repetitions();
      Round round =
          new Round(
              settings,
              r,
              line -> progress.accept("d " + settings.dimension() + ", " + label + ": " + line));
      round.run();
      if (!warmup) {
        measured.add(round);
      }
    }
    return summarize(settings, measured);
  }

  /** The job spec the costs are measured for: one tensor of d parameters, secure aggregation. */
  static JobSpec spec(Settings s) {
    return JobSpecReader.parse(
        "secagg-cost",
        """
        jobId: %s
        model:
          tensors:
            - {name: update, shape: [%d]}
        rounds:
          timeout: 60s
          expectedClients: %d
          %s
        privacy:
          clipNorm: %s
          noiseMultiplier: 1.0
          delta: 1.0e-5
          budgetEpsilon: .inf
        aggregation:
          mode: secure
          maxDropoutRate: %s
          adversarialClientRate: %s
        """
            .formatted(
                JOB_ID,
                s.dimension(),
                s.clients(),
                gate(s),
                CLIP_NORM,
                s.dropoutRate(),
                s.adversarialClientRate()));
  }

  /** The spec's noisy-count gate for a round of all its clients (UnmaskingGate). */
  private static String gate(Settings s) {
    return "minimumCohort: "
        + UnmaskingGate.suggestedSpec(
            RoundGraph.threatModel(
                s.dropoutRate(), s.adversarialClientRate(), "semi-malicious-server"),
            s.clients());
  }

  /** One measured round: the job's side and every client's, in phase order. */
  private static final class Round {
    private final Settings settings;
    private final JobSpec spec;
    private final int round;
    private final Consumer<String> progress;
    private final int d;
    private final int m;

    // Per survivor, in the order they masked.
    final List<long[]> bytesUp = new ArrayList<>();
    final List<long[]> bytesDown = new ArrayList<>();
    final List<double[]> clientMillis = new ArrayList<>();
    double plaintextSumMillis;
    double maskedSumMillis;
    double signatureMillis;
    double reconstructMillis;
    double correctionMillis;
    int correctionTerms;
    int neighbourhoodSize;
    int threshold;

    Round(Settings settings, int round, Consumer<String> progress) {
      this.settings = settings;
      this.spec = spec(settings);
      this.round = round;
      this.progress = progress;
      this.d = settings.dimension();
      this.m = settings.clients();
    }

    void run() {
      SecureRandom jobRandom = new SecureRandom();
      byte[] session = new byte[RoundContext.SESSION_BYTES];
      jobRandom.nextBytes(session);
      RoundContext ctx = new RoundContext(JOB_ID, round, session);
      long now = System.currentTimeMillis();
      long openedBytes =
          AvroCodec.encode(
                  jobMessage(
                      ctx,
                      new Opened(
                          now + 5_000,
                          now + 10_000,
                          now + 15_000,
                          now + 20_000,
                          now + 25_000,
                          now + 60_000,
                          CLIP_NORM,
                          null)))
              .length;

      // Phase 1: every client draws its keys and advertises them.
      long started = System.nanoTime();
      ThreatModel threat =
          RoundGraph.threatModel(
              settings.dropoutRate(),
              settings.adversarialClientRate(),
              spec.aggregation().adversary());
      ClientSession[] clients = new ClientSession[m];
      SecureRandom[] randoms = new SecureRandom[m];
      double[][] millis = new double[m][Phase.values().length];
      long[][] up = new long[m][6]; // advertise, shares, masked, signature, unmask, plaintext
      long[][] down = new long[m][];
      List<AdvertisedKeys> roster = new ArrayList<>(m);
      for (int c = 0; c < m; c++) {
        randoms[c] = new SecureRandom();
        long t0 = cpuNanos();
        clients[c] = ClientSession.start(ctx, clientId(c), threat, randoms[c]);
        AdvertisedKeys keys = clients[c].advertise();
        long t1 = cpuNanos();
        byte[] message =
            AvroCodec.encode(
                clientMessage(
                    ctx,
                    clientId(c),
                    new AdvertiseKeys(
                        ByteBuffer.wrap(keys.encryptionPublicKey()),
                        ByteBuffer.wrap(keys.maskPublicKey()),
                        ByteBuffer.wrap(keys.selfMaskCommitment()),
                        ByteBuffer.wrap(keys.signingPublicKey()))));
        long t2 = cpuNanos();
        millis[c][Phase.ADVERTISE.ordinal()] = millis(t1 - t0);
        millis[c][Phase.ENCODE.ordinal()] += millis(t2 - t1);
        up[c][0] = message.length;
        roster.add(keys);
      }

      // The job's graph for the roster, and its Roster message.
      RoundGraph graph =
          RoundGraph.choose(
                  ctx,
                  roster,
                  RoundGraph.threatModel(
                      settings.dropoutRate(),
                      settings.adversarialClientRate(),
                      spec.aggregation().adversary()))
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "a roster of "
                              + m
                              + " admits no neighbour graph at dropout rate "
                              + settings.dropoutRate()
                              + " and adversarial client rate "
                              + settings.adversarialClientRate()));
      neighbourhoodSize = graph.graph().neighbourhoodSize();
      threshold = graph.threshold();
      int[] permutation = graph.graph().permutation();
      List<RosterEntry> entries = new ArrayList<>(m);
      for (AdvertisedKeys k : roster) {
        entries.add(
            new RosterEntry(
                ByteBuffer.wrap(k.encryptionPublicKey()),
                ByteBuffer.wrap(k.maskPublicKey()),
                ByteBuffer.wrap(k.selfMaskCommitment()),
                ByteBuffer.wrap(k.signingPublicKey())));
      }
      long rosterBytes =
          AvroCodec.encode(
                  jobMessage(
                      ctx,
                      new Roster(
                          entries,
                          neighbourhoodSize,
                          threshold,
                          IntStream.of(permutation).boxed().toList())))
              .length;

      // Phase 2: every client shares its secrets with its neighbours; the job routes the shares.
      List<List<RoutedShare>> inbox = new ArrayList<>(m);
      for (int c = 0; c < m; c++) {
        inbox.add(new ArrayList<>());
      }
      // Every dealer's Commitments record, which every client reads with its Shares.
      byte[][] dealerCommitments = new byte[m][];
      long commitmentsDown = 0;
      for (int c = 0; c < m; c++) {
        long t0 = cpuNanos();
        List<ClientSession.EncryptedShare> shares =
            clients[c].onRoster(roster, neighbourhoodSize, threshold, permutation);
        long t1 = cpuNanos();
        List<dev.privagg.avro.EncryptedShare> out = new ArrayList<>(shares.size());
        for (ClientSession.EncryptedShare s : shares) {
          out.add(
              new dev.privagg.avro.EncryptedShare(s.recipient(), ByteBuffer.wrap(s.ciphertext())));
        }
        ByteBuffer commitments = ByteBuffer.wrap(clients[c].commitments());
        byte[] message =
            AvroCodec.encode(clientMessage(ctx, clientId(c), new ShareKeys(out, commitments)));
        long t2 = cpuNanos();
        millis[c][Phase.ON_ROSTER.ordinal()] = millis(t1 - t0);
        millis[c][Phase.ENCODE.ordinal()] += millis(t2 - t1);
        up[c][1] = message.length;
        dealerCommitments[c] = clients[c].commitments();
        commitmentsDown +=
            AvroCodec.encode(jobMessage(ctx, new Commitments(c, commitments.duplicate()))).length;
        for (ClientSession.EncryptedShare s : shares) {
          inbox.get(s.recipient()).add(new RoutedShare(c, ByteBuffer.wrap(s.ciphertext())));
        }
      }
      progress.accept(
          String.format(
              "keys and shares of %d clients (%.1f s)", m, (System.nanoTime() - started) / 1e9));

      // Who drops out after phase 2 (U2 \ U3): its shares were routed, its input never comes.
      boolean[] dropped = new boolean[m];
      List<Integer> order = new ArrayList<>(IntStream.range(0, m).boxed().toList());
      java.util.Collections.shuffle(order, new Random(round));
      order.subList(0, settings.dropped()).forEach(c -> dropped[c] = true);
      int[] shared = IntStream.range(0, m).toArray();
      int[] survivors = IntStream.range(0, m).filter(c -> !dropped[c]).toArray();
      long survivorsBytes =
          AvroCodec.encode(
                  jobMessage(
                      ctx,
                      new Survivors(
                          IntStream.of(shared).boxed().toList(),
                          IntStream.of(survivors).boxed().toList())))
              .length;

      // Phases 3 to 5 for each survivor, and the job's sums as the values arrive. A survivor signs
      // the survivor list right after masking (U3 is fixed in advance here); it unmasks once every
      // survivor has signed.
      ClippedSum plaintext = new ClippedSum(spec.clippingPolicy(), spec.model().tensorSizes());
      float[][] scratch = {new float[d]};
      Map<Integer, UnmaskShares> responses = new HashMap<>();
      Map<Integer, byte[]> signatures = new HashMap<>();
      List<SignedSurvivors> signed = new ArrayList<>();
      byte[] statement =
          SurvivorStatement.digest(
              ctx,
              roster,
              neighbourhoodSize,
              threshold,
              permutation,
              shared,
              new int[0][],
              survivors);
      Quantizer quantizer = new Quantizer(CLIP_NORM);
      int bits = settings.bits();
      DistributedNoisePlan plan =
          bits == 64 ? null : DistributedNoisePlan.plan(1.0, d, bits, survivors.length, m);
      GridEncoder encoder = plan == null ? null : new GridEncoder(plan, JOB_ID, round);
      long[] maskedSum = new long[plan == null ? d : plan.paddedDimension()];
      int done = 0;
      started = System.nanoTime();
      for (int c : survivors) {
        ClientSession client = clients[c];
        clients[c] = null;
        List<RoutedShare> routed = inbox.get(c);
        long sharesBytes =
            AvroCodec.encode(jobMessage(ctx, new Shares(c, routed))).length + commitmentsDown;
        List<ClientSession.RoutedShare> received = new ArrayList<>(routed.size());
        for (RoutedShare r : routed) {
          received.add(
              new ClientSession.RoutedShare(
                  r.getSender(), bytes(r.getCiphertext()), dealerCommitments[r.getSender()]));
        }
        float[][] update = {update(c)};

        long t0 = cpuNanos();
        client.onShares(received);
        // Every share decrypts here: every client that shared is confirmed, no pair is cut.
        client.onConfirmed(shared, new int[0][]);
        long t1 = cpuNanos();
        long[] units =
            encoder == null
                ? quantizer.quantize(update, randoms[c])
                : encoder.encode(doubles(update[0]), CLIP_NORM, randoms[c]);
        long t2 = cpuNanos();
        byte[] masked = client.maskedInput(units, bits);
        long t3 = cpuNanos();
        byte[] maskedMessage =
            AvroCodec.encode(
                clientMessage(ctx, clientId(c), new MaskedInput(ByteBuffer.wrap(masked))));
        long t4 = cpuNanos();
        byte[] signature = client.signSurvivors(shared, survivors);
        long t5 = cpuNanos();
        byte[] signatureMessage =
            AvroCodec.encode(
                clientMessage(ctx, clientId(c), new SurvivorSignature(ByteBuffer.wrap(signature))));
        long t6 = cpuNanos();
        byte[] plaintextUpdate = ClientUpdates.encode(spec, round, clientId(c), update);
        long t7 = cpuNanos();
        double[] ms = millis[c];
        ms[Phase.ON_SHARES.ordinal()] = millis(t1 - t0);
        ms[Phase.QUANTIZE.ordinal()] = millis(t2 - t1);
        ms[Phase.MASKED_INPUT.ordinal()] = millis(t3 - t2);
        ms[Phase.SIGN.ordinal()] = millis(t5 - t4);
        ms[Phase.ENCODE.ordinal()] += millis(t4 - t3) + millis(t6 - t5);
        ms[Phase.PLAINTEXT_ENCODE.ordinal()] = millis(t7 - t6);
        up[c][2] = maskedMessage.length;
        up[c][3] = signatureMessage.length;
        up[c][5] = plaintextUpdate.length;
        signatures.put(c, signature);
        signed.add(new SignedSurvivors(c, ByteBuffer.wrap(signature)));
        clients[c] = client;

        // The job checks each survivor's signature as it arrives.
        long v0 = cpuNanos();
        boolean valid = SigningKeys.verify(roster.get(c).signingPublicKey(), statement, signature);
        signatureMillis += millis(cpuNanos() - v0);
        if (!valid) {
          throw new IllegalStateException("client " + c + "'s survivor signature does not verify");
        }

        // The job: the shard's work on each arriving value bytes, in either mode.
        byte[][] values = {Float32.write(update[0], 0, d).array()};
        long s0 = cpuNanos();
        DecodedUpdate.readValues(values, scratch);
        plaintext.add(scratch);
        long s1 = cpuNanos();
        if (bits == 64) {
          MaskedSum.add(maskedSum, masked);
        } else {
          WordPacking.addTo(maskedSum, masked, bits);
        }
        long s2 = cpuNanos();
        plaintextSumMillis += millis(s1 - s0);
        maskedSumMillis += millis(s2 - s1);

        down[c] = new long[] {openedBytes, rosterBytes, sharesBytes, survivorsBytes, 0};
        done++;
        if (done % Math.max(1, survivors.length / 10) == 0 || done == survivors.length) {
          progress.accept(
              String.format(
                  "%d of %d masked inputs (%.1f s)",
                  done, survivors.length, (System.nanoTime() - started) / 1e9));
        }
      }

      // Phase 6: each survivor checks the signatures and reveals its shares.
      long consistencyBytes = AvroCodec.encode(jobMessage(ctx, new Consistency(signed))).length;
      for (int c : survivors) {
        ClientSession client = clients[c];
        clients[c] = null;
        long t0 = cpuNanos();
        UnmaskShares reveal = client.unmask(signatures);
        long t1 = cpuNanos();
        byte[] unmaskMessage =
            AvroCodec.encode(
                clientMessage(
                    ctx,
                    clientId(c),
                    new dev.privagg.avro.UnmaskShares(
                        revealed(reveal.selfMaskShares()), revealed(reveal.maskKeyShares()))));
        long t2 = cpuNanos();
        double[] ms = millis[c];
        ms[Phase.UNMASK.ordinal()] = millis(t1 - t0);
        ms[Phase.ENCODE.ordinal()] += millis(t2 - t1);
        up[c][4] = unmaskMessage.length;
        down[c][4] = consistencyBytes;
        responses.put(c, reveal);
        bytesUp.add(new long[] {up[c][5], up[c][0], up[c][1], up[c][2], up[c][3], up[c][4]});
        bytesDown.add(down[c]);
        clientMillis.add(ms);
      }

      // The round closes: the job reconstructs the secrets and removes the masks.
      int[][] neighbourhoods = new int[m][];
      for (int i = 0; i < m; i++) {
        neighbourhoods[i] = graph.graph().neighbourhood(i);
      }
      long u0 = cpuNanos();
      Unmasking.Result result =
          Unmasking.reconstruct(
              ctx,
              roster,
              neighbourhoods,
              threshold,
              shared,
              new int[0][],
              survivors,
              dealer -> dealerCommitments[dealer],
              responses);
      long u1 = cpuNanos();
      MaskCorrection correction =
          result
              .correction()
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "the round could not be unmasked: self-mask seeds of "
                              + result.unrecoveredSelfMaskSeeds()
                              + " and mask keys of "
                              + result.unrecoveredMaskKeys()
                              + " not recovered"));
      correction.applyTo(maskedSum, 0, maskedSum.length);
      double[] decoded = encoder == null ? null : encoder.decode(maskedSum, CLIP_NORM);
      long u2 = cpuNanos();
      reconstructMillis = millis(u1 - u0);
      // With distributed noise the job's decoding (residues, rotation back) counts here too.
      correctionMillis = millis(u2 - u1);
      correctionTerms = correction.terms().size();
      progress.accept(
          String.format(
              "unmasked: reconstruct %.0f ms, correction of %d masks %.0f ms",
              reconstructMillis, correctionTerms, correctionMillis));
      if (decoded != null) {
        requireClose(decoded, plaintext, plan, survivors.length);
        return;
      }
      requireEqual(maskedSum, plaintext.units());
    }

    /** Client c's update: values k 2^-e on the grid, with a norm of at most C / 2. */
    private float[] update(int c) {
      SplittableRandom random = new SplittableRandom(31L * round + c);
      double scale = gridStep(d);
      float[] values = new float[d];
      for (int j = 0; j < d; j++) {
        values[j] = (float) ((random.nextInt(2 * MAX_GRID_STEPS + 1) - MAX_GRID_STEPS) * scale);
      }
      return values;
    }
  }

  /**
   * The grid step 2^-e, e >= 20, small enough that d values of at most {@link #MAX_GRID_STEPS}
   * steps have norm at most C / 2: well inside C' = C (1 - sqrt(d) 2^-36), so neither mode clips,
   * and exact in float32 and in units of C 2^-36.
   */
  static double gridStep(int d) {
    int e = 20;
    while (Math.sqrt(d) * MAX_GRID_STEPS * Math.scalb(1.0, -e) > CLIP_NORM / 2) {
      e++;
    }
    return Math.scalb(1.0, -e);
  }

  private static double[] doubles(float[] values) {
    double[] out = new double[values.length];
    for (int j = 0; j < values.length; j++) {
      out[j] = values[j];
    }
    return out;
  }

  /**
   * The decoded distributed-noise sum against the plaintext sum of the same survivors: within 8
   * standard deviations of their shares plus their roundings, or the encoding is broken.
   */
  private static void requireClose(
      double[] decoded, ClippedSum plaintext, DistributedNoisePlan plan, int survivors) {
    double[] exact = plaintext.toDoubles();
    double sigma =
        Math.sqrt((double) survivors * plan.varianceNumerator() / plan.varianceDenominator());
    double tolerance =
        (8 * sigma + survivors * Math.sqrt(plan.paddedDimension()))
            * CLIP_NORM
            / plan.unitsPerClipNorm();
    for (int j = 0; j < exact.length; j++) {
      if (!(Math.abs(decoded[j] - exact[j]) <= tolerance)) {
        throw new IllegalStateException(
            "the decoded distributed-noise sum differs from the survivors' plaintext sum at"
                + " coordinate "
                + j
                + " by "
                + Math.abs(decoded[j] - exact[j])
                + ", more than "
                + tolerance);
      }
    }
  }

  private static void requireEqual(long[] secure, long[] plaintext) {
    for (int j = 0; j < secure.length; j++) {
      if (secure[j] != plaintext[j]) {
        throw new IllegalStateException(
            "the unmasked secure sum differs from the plaintext sum of the survivors at coordinate "
                + j
                + ": "
                + secure[j]
                + " against "
                + plaintext[j]
                + " units");
      }
    }
  }

  /** Client CPU columns, in {@code millis} rows. */
  private enum Phase {
    ADVERTISE,
    ON_ROSTER,
    ON_SHARES,
    QUANTIZE,
    MASKED_INPUT,
    SIGN,
    UNMASK,
    ENCODE,
    PLAINTEXT_ENCODE
  }

  private static Result summarize(Settings settings, List<Round> rounds) {
    List<long[]> up = new ArrayList<>();
    List<long[]> down = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    for (Round r : rounds) {
      up.addAll(r.bytesUp);
      down.addAll(r.bytesDown);
      cpu.addAll(r.clientMillis);
    }
    Bytes bytes =
        new Bytes(
            medianLong(up, row -> row[0]),
            medianLong(up, row -> row[1]),
            medianLong(up, row -> row[2]),
            medianLong(up, row -> row[3]),
            medianLong(up, row -> row[4]),
            medianLong(up, row -> row[5]),
            medianLong(down, row -> row[0]),
            medianLong(down, row -> row[1]),
            medianLong(down, row -> row[2]),
            medianLong(down, row -> row[3]),
            medianLong(down, row -> row[4]),
            medianLong(up, row -> row[1] + row[2] + row[3] + row[4] + row[5]),
            medianLong(down, row -> row[0] + row[1] + row[2] + row[3] + row[4]));
    ClientCpu client =
        new ClientCpu(
            median(cpu, row -> row[Phase.PLAINTEXT_ENCODE.ordinal()]),
            median(cpu, row -> row[Phase.ADVERTISE.ordinal()]),
            median(cpu, row -> row[Phase.ON_ROSTER.ordinal()]),
            median(cpu, row -> row[Phase.ON_SHARES.ordinal()]),
            median(cpu, row -> row[Phase.QUANTIZE.ordinal()]),
            median(cpu, row -> row[Phase.MASKED_INPUT.ordinal()]),
            median(cpu, row -> row[Phase.SIGN.ordinal()]),
            median(cpu, row -> row[Phase.UNMASK.ordinal()]),
            median(cpu, row -> row[Phase.ENCODE.ordinal()]),
            median(cpu, row -> Arrays.stream(row, 0, Phase.PLAINTEXT_ENCODE.ordinal()).sum()));
    ServerCpu server =
        new ServerCpu(
            medianOf(rounds, r -> r.plaintextSumMillis),
            medianOf(rounds, r -> r.maskedSumMillis),
            medianOf(rounds, r -> r.signatureMillis),
            medianOf(rounds, r -> r.reconstructMillis),
            medianOf(rounds, r -> r.correctionMillis),
            (int) medianOf(rounds, r -> r.correctionTerms));
    Round last = rounds.get(rounds.size() - 1);
    return new Result(
        settings,
        last.neighbourhoodSize,
        last.threshold,
        settings.clients() - settings.dropped(),
        bytes,
        client,
        server);
  }

  private static long medianLong(
      List<long[]> rows, java.util.function.ToLongFunction<long[]> field) {
    return (long) Percentiles.of(rows.stream().mapToDouble(field::applyAsLong).toArray(), 50);
  }

  private static double median(
      List<double[]> rows, java.util.function.ToDoubleFunction<double[]> field) {
    return Percentiles.of(rows.stream().mapToDouble(field).toArray(), 50);
  }

  private static double medianOf(
      List<Round> rounds, java.util.function.ToDoubleFunction<Round> field) {
    return Percentiles.of(rounds.stream().mapToDouble(field).toArray(), 50);
  }

  private static String clientId(int c) {
    return String.format("client-%05d", c);
  }

  private static SecureMessage clientMessage(RoundContext ctx, String clientId, Object body) {
    return new SecureMessage(JOB_ID, ctx.round(), ByteBuffer.wrap(ctx.session()), clientId, body);
  }

  private static SecureRound jobMessage(RoundContext ctx, Object body) {
    return new SecureRound(JOB_ID, ctx.round(), ByteBuffer.wrap(ctx.session()), body);
  }

  private static List<RevealedShare> revealed(List<UnmaskShares.RevealedShare> shares) {
    List<RevealedShare> out = new ArrayList<>(shares.size());
    for (UnmaskShares.RevealedShare s : shares) {
      out.add(new RevealedShare(s.index(), ByteBuffer.wrap(s.share())));
    }
    return out;
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  private static long cpuNanos() {
    return THREADS.getCurrentThreadCpuTime();
  }

  private static double millis(long nanos) {
    return nanos / 1e6;
  }
}
