package dev.privagg.client;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.Commitments;
import dev.privagg.avro.Confirmed;
import dev.privagg.avro.Consistency;
import dev.privagg.avro.CutPair;
import dev.privagg.avro.DistributedNoise;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.Opened;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.Roster;
import dev.privagg.avro.RosterEntry;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.SecureRound;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.ShareReceipt;
import dev.privagg.avro.Shares;
import dev.privagg.avro.SignedSurvivors;
import dev.privagg.avro.SurvivorSignature;
import dev.privagg.avro.Survivors;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.distributed.GridEncoder;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.KafkaConnection;
import dev.privagg.privacy.DistributedDiscreteGaussian;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.Quantizer;
import dev.privagg.secagg.RoundContext;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.SigningKeys;
import dev.privagg.secagg.UnmaskShares;
import dev.privagg.secagg.UnmaskingGate;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * One client's part in one secure-aggregation round (docs/secure-aggregation.md) over Kafka: it
 * follows the job's secure topic (read_committed) for the round's Opened, Roster, Shares and
 * Survivors, and answers each with its phase's message on the updates topic, through {@link
 * ClientSession}. It clips and quantizes the update itself; the job never sees it unmasked.
 */
final class SecureRoundClient implements AutoCloseable {
  private final JobSpec spec;
  private final KafkaProducer<byte[], byte[]> producer;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final SecureRandom random;

  /** Where masked rounds are remembered across restarts; null: in this run only. */
  private final MaskedRounds maskedRounds;

  SecureRoundClient(
      JobSpec spec,
      KafkaConnection kafka,
      KafkaProducer<byte[], byte[]> producer,
      SecureRandom random,
      MaskedRounds maskedRounds) {
    this.spec = spec;
    this.producer = producer;
    this.random = random;
    this.maskedRounds = maskedRounds;
    consumer = PrivaggClient.committedReader(kafka, spec.maxSecureRecordBytes());
  }

  /**
   * What the round came to for this client: {@code index} is its roster index, or -1 when the job
   * did not admit it to the roster (sampling, the round's cap, participation limits); {@code
   * survivors} how many masked inputs the job announced.
   */
  record Result(long round, String session, int index, int survivors) {}

  /**
   * Takes part in round {@code round} with {@code tensors} (the spec's order): returns once its
   * unmask shares are acknowledged, or once the roster shows it was not admitted; with {@code
   * phases} below 6, once it sent that phase's message (a client dropping out).
   *
   * @throws TimeoutException if a message of the job does not come within {@code timeout} of the
   *     deadline it follows
   * @throws IllegalStateException naming the phase when the round cannot go on for this client
   */
  Result run(long round, String clientId, float[][] tensors, Duration timeout, int phases)
      throws TimeoutException {
    if (!(phases >= 1 && phases <= 6)) {
      throw new IllegalArgumentException("phases must be in [1, 6], was " + phases);
    }
    follow(timeout);
    Opened opened = null;
    byte[] session = null;
    while (opened == null) {
      SecureRound m = next(round, null, Long.MAX_VALUE, timeout, "the round's Opened message");
      if (m.getBody() instanceof Opened o) {
        opened = o;
        session = bytes(m.getSession());
      }
    }
    if (System.currentTimeMillis() >= opened.getAdvertiseDeadlineMillis()) {
      throw new IllegalStateException(
          "phase 1: round " + round + "'s advertise deadline has passed; join the next round");
    }
    RoundContext ctx = new RoundContext(spec.jobId(), round, session);
    JobSpec.Aggregation a = spec.aggregation();
    ClientSession client =
        ClientSession.start(
            ctx,
            clientId,
            RoundGraph.threatModel(a.maxDropoutRate(), a.adversarialClientRate(), a.adversary()),
            random);
    AdvertisedKeys keys = client.advertise();
    send(
        clientId,
        message(
            ctx,
            clientId,
            new AdvertiseKeys(
                ByteBuffer.wrap(keys.encryptionPublicKey()),
                ByteBuffer.wrap(keys.maskPublicKey()),
                ByteBuffer.wrap(keys.selfMaskCommitment()),
                ByteBuffer.wrap(keys.signingPublicKey()))));
    if (phases == 1) {
      return new Result(round, HexFormat.of().formatHex(session), -1, 0);
    }

    Roster roster =
        (Roster) await(round, session, Roster.class, opened.getAdvertiseDeadlineMillis(), timeout);
    List<AdvertisedKeys> entries = new ArrayList<>();
    for (RosterEntry e : roster.getEntries()) {
      entries.add(
          new AdvertisedKeys(
              bytes(e.getEncryptionPublicKey()),
              bytes(e.getMaskPublicKey()),
              bytes(e.getSelfMaskCommitment()),
              signingKey(e)));
    }
    // Left off the roster (sampling, the cap, a limit), or a roster too small to secure a sum.
    if (roster.getDegree() == 0
        || entries.stream()
            .noneMatch(e -> Arrays.equals(e.encryptionPublicKey(), keys.encryptionPublicKey()))) {
      return new Result(round, HexFormat.of().formatHex(session), -1, 0);
    }
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    List<ClientSession.EncryptedShare> shares =
        client.onRoster(entries, roster.getDegree(), roster.getThreshold(), permutation);
    List<dev.privagg.avro.EncryptedShare> out = new ArrayList<>();
    for (ClientSession.EncryptedShare s : shares) {
      out.add(new dev.privagg.avro.EncryptedShare(s.recipient(), ByteBuffer.wrap(s.ciphertext())));
    }
    send(
        clientId,
        message(ctx, clientId, new ShareKeys(out, ByteBuffer.wrap(client.commitments()))));
    int index = client.index();
    if (phases == 2) {
      return new Result(round, HexFormat.of().formatHex(session), index, 0);
    }

    // The job writes every dealer's Commitments, then the Shares; one partition keeps that order.
    Map<Integer, byte[]> commitments = new HashMap<>();
    Shares routed = null;
    while (routed == null) {
      Object body =
          await(
              round,
              session,
              List.of(Commitments.class, Shares.class),
              opened.getShareDeadlineMillis(),
              timeout);
      if (body instanceof Commitments c) {
        if (!client.isNeighbour(c.getSender())) {
          continue; // kept for its neighbours only: every dealer's would be O(n t) of memory
        }
        byte[] before = commitments.putIfAbsent(c.getSender(), bytes(c.getCommitments()));
        if (before != null && !Arrays.equals(before, bytes(c.getCommitments()))) {
          // One dealer's shares checked against two polynomials could each pass and agree on
          // nothing: the job shows holders different commitments, so this client stops.
          throw new IllegalStateException(
              "phase 3: the job published two different commitments for client "
                  + c.getSender()
                  + " of round "
                  + round);
        }
      } else if (((Shares) body).getRecipient() == index) {
        routed = (Shares) body;
      }
    }
    List<ClientSession.RoutedShare> received = new ArrayList<>();
    routed
        .getShares()
        .forEach(
            r ->
                received.add(
                    new ClientSession.RoutedShare(
                        r.getSender(),
                        bytes(r.getCiphertext()),
                        commitments.getOrDefault(r.getSender(), new byte[0]))));
    client.onShares(received);
    List<Integer> rejected = new ArrayList<>();
    for (int v : client.rejectedSenders()) {
      rejected.add(v);
    }
    send(clientId, message(ctx, clientId, new ShareReceipt(rejected)));
    if (phases == 3) {
      return new Result(round, HexFormat.of().formatHex(session), index, 0);
    }

    Confirmed confirmed =
        (Confirmed)
            await(round, session, Confirmed.class, opened.getConfirmDeadlineMillis(), timeout);
    int[][] cuts = new int[confirmed.getCuts().size()][];
    for (int i = 0; i < cuts.length; i++) {
      CutPair c = confirmed.getCuts().get(i);
      cuts[i] = new int[] {c.getLo(), c.getHi()};
    }
    client.onConfirmed(
        confirmed.getConfirmed().stream().mapToInt(Integer::intValue).toArray(), cuts);
    byte[] masked = maskedInput(client, round, opened, tensors);
    if (maskedRounds != null) {
      maskedRounds.claim(spec.jobId(), round, HexFormat.of().formatHex(session));
    }
    send(clientId, message(ctx, clientId, new MaskedInput(ByteBuffer.wrap(masked))));
    if (phases == 4) {
      return new Result(round, HexFormat.of().formatHex(session), index, 0);
    }

    Survivors survivors =
        (Survivors)
            await(round, session, Survivors.class, opened.getMaskedInputDeadlineMillis(), timeout);
    int[] shared = survivors.getShared().stream().mapToInt(Integer::intValue).toArray();
    int[] maskedInput = survivors.getMaskedInput().stream().mapToInt(Integer::intValue).toArray();
    String tooFew = tooFewSharesProblem(spec, entries.size(), maskedInput.length);
    if (tooFew != null) {
      throw new IllegalStateException(
          "phase 5: round " + round + " " + tooFew + "; no signature and no shares are sent");
    }
    byte[] signature = client.signSurvivors(shared, maskedInput);
    send(clientId, message(ctx, clientId, new SurvivorSignature(ByteBuffer.wrap(signature))));
    if (phases == 5) {
      return new Result(round, HexFormat.of().formatHex(session), index, 0);
    }

    Consistency consistency =
        (Consistency)
            await(
                round, session, Consistency.class, opened.getConsistencyDeadlineMillis(), timeout);
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (SignedSurvivors signed : consistency.getSignatures()) {
      signatures.putIfAbsent(signed.getIndex(), bytes(signed.getSignature()));
    }
    UnmaskShares reveal = client.unmask(signatures);
    send(
        clientId,
        message(
            ctx,
            clientId,
            new dev.privagg.avro.UnmaskShares(
                revealed(reveal.selfMaskShares()), revealed(reveal.maskKeyShares()))));
    return new Result(round, HexFormat.of().formatHex(session), index, maskedInput.length);
  }

  /**
   * The masked input: the update quantized at 2^36 / C units and masked as 64-bit words, or with
   * distributed noise put on the job's announced grid with a noise share and masked as its small
   * words. A job announcing less noise than this client's spec plans, or none where the spec plans
   * some, is refused before anything is sent (a lying job must not get a weakly noised input).
   */
  private byte[] maskedInput(ClientSession client, long round, Opened opened, float[][] tensors) {
    DistributedNoisePlan planned = spec.distributedNoise();
    DistributedNoise announced = opened.getDistributedNoise();
    if (planned == null && announced == null) {
      return client.maskedInput(new Quantizer(opened.getClipNorm()).quantize(tensors, random));
    }
    String problem = announcementProblem(planned, announced);
    if (problem != null) {
      throw new IllegalStateException(
          "phase 4: round " + round + " " + problem + "; no masked input is sent");
    }
    DistributedNoisePlan plan = planOf(announced, planned);
    if (opened.getClipNorm() != spec.privacy().clipNorm()) {
      throw new IllegalStateException(
          "phase 4: round "
              + round
              + " announces C "
              + opened.getClipNorm()
              + " but the spec's is "
              + spec.privacy().clipNorm()
              + "; no masked input is sent");
    }
    double[] flat = new double[plan.dimension()];
    int at = 0;
    for (float[] tensor : tensors) {
      for (float v : tensor) {
        flat[at++] = v;
      }
    }
    long[] words =
        new GridEncoder(plan, spec.jobId(), round).encode(flat, opened.getClipNorm(), random);
    return client.maskedInput(words, plan.bits());
  }

  /**
   * Why this client must not mask with the job's announced plan, or null: the announced share must
   * give the fewest honest inputs the spec allows at least the spec's noise multiplier over the
   * announced sensitivity (KLS21's bound, as the ledger charges it).
   */
  static String announcementProblem(DistributedNoisePlan planned, DistributedNoise announced) {
    if (planned == null) {
      return "announces distributed noise, which this client's spec does not plan";
    }
    if (announced == null) {
      return "announces no distributed noise, which this client's spec plans";
    }
    if (announced.getDimension() != planned.dimension()) {
      return "announces a grid of "
          + announced.getDimension()
          + " values, the model has "
          + planned.dimension();
    }
    double units = announced.getUnitsPerClipNorm();
    if (!(units >= 1 && units <= DistributedNoisePlan.MAX_UNITS_PER_CLIP_NORM)) {
      return "announces " + units + " grid units per C, outside [1, 2^30]";
    }
    // A bound below what rounding a clipped update needs would make rounding fail for large
    // updates only: whether a client sends would tell the job whether its update is large.
    double needed = DistributedNoisePlan.roundedSquaredBound(units, planned.paddedDimension());
    if (announced.getMaxSquaredNorm() + 1 < Math.floor(needed)) {
      return "announces squared-norm bound "
          + announced.getMaxSquaredNorm()
          + ", below the "
          + (long) Math.floor(needed)
          + " that rounding an update clipped to C on its grid needs";
    }
    double sigmaSquared =
        (double) announced.getVarianceNumerator() / announced.getVarianceDenominator();
    double given;
    try {
      given =
          DistributedDiscreteGaussian.dominatingNoiseMultiplier(
              Math.sqrt(announced.getMaxSquaredNorm()),
              sigmaSquared,
              planned.noiseShares(),
              planned.paddedDimension());
    } catch (IllegalArgumentException e) {
      return "announces a noise share the accounting does not cover: " + e.getMessage();
    }
    if (!(given >= planned.noiseMultiplier() * (1 - 1e-12))) {
      return "announces noise shares giving noise multiplier "
          + given
          + " over its grid, below the spec's "
          + planned.noiseMultiplier();
    }
    return null;
  }

  /**
   * Why a survivor list must not be signed under distributed noise, or null: its masked inputs,
   * less the colluders a roster of {@code roster} may hold, are fewer than the honest shares the
   * noise was sized for (a lying job's round of too few clients).
   */
  static String tooFewSharesProblem(JobSpec spec, int roster, int maskedInputs) {
    DistributedNoisePlan plan = spec.distributedNoise();
    if (plan == null) {
      return null;
    }
    JobSpec.Aggregation a = spec.aggregation();
    int honest =
        UnmaskingGate.honestInputsAtLeast(
            RoundGraph.threatModel(a.maxDropoutRate(), a.adversarialClientRate(), a.adversary()),
            roster,
            maskedInputs);
    if (honest >= plan.noiseShares()) {
      return null;
    }
    return "lists "
        + maskedInputs
        + " masked inputs of a roster of "
        + roster
        + ", at least "
        + honest
        + " of them honest, fewer than the "
        + plan.noiseShares()
        + " noise shares the spec sized each share for";
  }

  /** The announced plan as this client encodes with it (checked, so it validates). */
  private static DistributedNoisePlan planOf(DistributedNoise a, DistributedNoisePlan planned) {
    return new DistributedNoisePlan(
        a.getBits(),
        a.getDimension(),
        a.getPaddedDimension(),
        a.getUnitsPerClipNorm(),
        a.getMaxSquaredNorm(),
        a.getVarianceNumerator(),
        a.getVarianceDenominator(),
        Math.min(a.getNoiseShares(), planned.noiseShares()),
        planned.maxInputs(),
        planned.noiseMultiplier(),
        planned.wrapProbability());
  }

  /**
   * A roster entry's signing key; one of another length (a job of before) reads as zeros, a key of
   * small order that no signature verifies under ({@link SigningKeys#verify}).
   */
  private static byte[] signingKey(RosterEntry e) {
    byte[] key = bytes(e.getSigningPublicKey());
    return key.length == SigningKeys.KEY_BYTES ? key : new byte[SigningKeys.KEY_BYTES];
  }

  private static List<RevealedShare> revealed(List<UnmaskShares.RevealedShare> shares) {
    List<RevealedShare> out = new ArrayList<>();
    for (UnmaskShares.RevealedShare s : shares) {
      out.add(new RevealedShare(s.index(), ByteBuffer.wrap(s.share())));
    }
    return out;
  }

  private SecureMessage message(RoundContext ctx, String clientId, Object body) {
    return new SecureMessage(
        spec.jobId(), ctx.round(), ByteBuffer.wrap(ctx.session()), clientId, body);
  }

  private void send(String clientId, SecureMessage message) {
    try {
      producer
          .send(
              new ProducerRecord<>(
                  spec.topics().updates(),
                  clientId.getBytes(StandardCharsets.UTF_8),
                  AvroCodec.encode(message)))
          .get();
    } catch (Exception e) {
      throw new IllegalStateException(
          "could not send " + clientId + "'s secure-aggregation message: " + e.getMessage(), e);
    }
  }

  /** The round's next message of {@code type} in {@code session}, due after {@code deadline}. */
  private Object await(long round, byte[] session, Class<?> type, long deadline, Duration timeout)
      throws TimeoutException {
    return await(round, session, List.of(type), deadline, timeout);
  }

  /** The next message of this round whose body is of one of {@code types}. */
  private Object await(
      long round, byte[] session, List<Class<?>> types, long deadline, Duration timeout)
      throws TimeoutException {
    Class<?> type = types.get(types.size() - 1);
    while (true) {
      SecureRound m = next(round, session, deadline, timeout, type.getSimpleName());
      if (types.stream().anyMatch(t -> t.isInstance(m.getBody()))) {
        return m.getBody();
      }
      if (m.getBody() instanceof Opened && !Arrays.equals(session, bytes(m.getSession()))) {
        throw new IllegalStateException(
            "round "
                + round
                + " was opened again with a new session (the job restored an earlier state); "
                + (type == Survivors.class || type == Consistency.class
                    ? "this client's update was already masked and sent under the old one, and is"
                        + " not sent again in this round (two sums over different clients could be"
                        + " subtracted)"
                    : "this client's keys were for the old one and its update was not sent: send"
                        + " again"));
      }
    }
  }

  private final List<SecureRound> pending = new ArrayList<>();

  /**
   * The next message of this job's round {@code round} (and {@code session}, unless null; Opened
   * messages of any session come through), waiting until {@code timeout} after {@code deadline}.
   */
  private SecureRound next(long round, byte[] session, long deadline, Duration timeout, String what)
      throws TimeoutException {
    long end =
        deadline == Long.MAX_VALUE
            ? System.currentTimeMillis() + timeout.toMillis()
            : Math.max(deadline, System.currentTimeMillis()) + timeout.toMillis();
    while (true) {
      while (!pending.isEmpty()) {
        SecureRound m = pending.remove(0);
        boolean ours =
            m.getJobId().equals(spec.jobId())
                && m.getRound() == round
                && (session == null
                    || m.getBody() instanceof Opened
                    || Arrays.equals(session, bytes(m.getSession())));
        if (ours) {
          return m;
        }
      }
      if (System.currentTimeMillis() > end) {
        throw new TimeoutException(
            what + " of round " + round + " of job " + spec.jobId() + " did not come in time");
      }
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
        pending.add(AvroCodec.decodeSecureRound(r.value()));
      }
    }
  }

  /**
   * Assigns the secure topic from one round timeout and the timeout before now (by broker time),
   * where the round's Opened message lies if the round is open.
   */
  private void follow(Duration timeout) throws TimeoutException {
    String topic = spec.topics().secure();
    List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
    if (infos == null || infos.isEmpty()) {
      throw new TimeoutException("the secure topic " + topic + " does not exist yet");
    }
    List<TopicPartition> partitions = new ArrayList<>();
    infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    consumer.assign(partitions);
    long from =
        System.currentTimeMillis()
            - spec.rounds().timeoutMillis()
            - spec.rounds().startGraceMillis()
            - timeout.toMillis();
    Map<TopicPartition, Long> times = new HashMap<>();
    partitions.forEach(p -> times.put(p, from));
    Map<TopicPartition, OffsetAndTimestamp> offsets = consumer.offsetsForTimes(times);
    for (TopicPartition p : partitions) {
      OffsetAndTimestamp at = offsets.get(p);
      if (at != null) {
        consumer.seek(p, at.offset());
      } else {
        consumer.seekToEnd(List.of(p));
      }
    }
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(5));
  }
}
