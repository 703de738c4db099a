package dev.privagg.client;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.ProducerSizing;
import dev.privagg.spec.JobSpec;
import dev.privagg.statistics.ClientStatistics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A client of one privagg training job: follows the public rounds and models topics ({@code
 * read_committed}) and sends updates. Usable by a client application on its own, and by the
 * simulator for many simulated clients at once.
 */
public final class PrivaggClient implements AutoCloseable {
  private final JobSpec spec;
  private final KafkaConnection kafka;
  private final java.security.SecureRandom random = new java.security.SecureRandom();
  private final KafkaProducer<byte[], byte[]> producer;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Map<Long, RoundAnnouncement> rounds = new ConcurrentHashMap<>();

  /** The job's public budget-spent record, once read; null before. */
  private volatile RoundAnnouncement budgetSpent;

  private final Map<Long, GlobalModel> models = new ConcurrentHashMap<>();
  private volatile long latestModelRound = -1;
  private final java.util.Set<String> followed = new java.util.HashSet<>();
  private volatile MaskedRounds maskedRounds;

  /**
   * Connects to {@code bootstrapServers} in plaintext; see {@link #PrivaggClient(JobSpec,
   * KafkaConnection)}.
   */
  public PrivaggClient(JobSpec spec, String bootstrapServers) {
    this(spec, KafkaConnection.to(bootstrapServers));
  }

  /**
   * Connects through {@code kafka} (brokers plus security settings); reads both public topics from
   * their beginning once they exist. It reads by assignment, not in a consumer group, so a client
   * principal needs READ on the rounds and models topics only.
   */
  public PrivaggClient(JobSpec spec, KafkaConnection kafka) {
    this.spec = spec;
    this.kafka = kafka;
    long modelBytes = spec.maxModelRecordBytes();
    Properties p = kafka.clientProperties();
    p.putAll(ProducerSizing.forRecordsUpTo(Math.min(Integer.MAX_VALUE, spec.maxRecordBytes())));
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    consumer = committedReader(kafka, modelBytes);
  }

  /**
   * Secure aggregation: remembers in {@code file}, across restarts of this client's process, the
   * session each round's update was masked in, and refuses to mask an update of a round again under
   * another session (a job restored to an earlier checkpoint opens the round anew; two masked sums
   * that differ by this client's update would reveal it). Without it the guard lives in memory
   * only. Share one file among the clients of one process or give each its own.
   *
   * @return this client
   */
  public PrivaggClient rememberMaskedRounds(java.nio.file.Path file) {
    maskedRounds = new MaskedRounds(file);
    return this;
  }

  /**
   * A consumer of the job's committed records, by assignment, fetching records of up to {@code
   * maxRecordBytes}.
   */
  static KafkaConsumer<byte[], byte[]> committedReader(KafkaConnection kafka, long maxRecordBytes) {
    Properties c = kafka.clientProperties();
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    // Looking up a topic the job has not created yet must not create it: with broker defaults
    // the job would refuse it, and a secured broker refuses the lookup (no CREATE ACL).
    c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
        (int) Math.min(Integer.MAX_VALUE, maxRecordBytes));
    return new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /**
   * Assigns every partition of the rounds and models topics, from their beginning, as each comes to
   * exist (the job creates them at its start, possibly after this client). The partitions of a
   * topic are read once it is found: the job creates both topics with one partition.
   */
  private void followPublicTopics() {
    if (followed.size() == 2) {
      return;
    }
    List<TopicPartition> added = new ArrayList<>();
    for (String topic : List.of(spec.topics().rounds(), spec.topics().models())) {
      if (!followed.contains(topic)) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
        if (infos != null && !infos.isEmpty()) {
          infos.forEach(i -> added.add(new TopicPartition(topic, i.partition())));
          followed.add(topic);
        }
      }
    }
    if (!added.isEmpty()) {
      List<TopicPartition> all = new ArrayList<>(consumer.assignment());
      all.addAll(added);
      consumer.assign(all);
      consumer.seekToBeginning(added);
    }
  }

  /**
   * Sends an update for {@code round} (tensors in the spec's order); returns the broker's
   * acknowledgement once it arrived, checked against the deadline of the round's announcement this
   * client read ({@link #poll}, {@link #awaitRound}). For a job with {@code aggregation.mode:
   * secure} it takes part in the round's six phases instead (docs/secure-aggregation.md), clipping
   * and masking the update here, and returns null once its last message is acknowledged (or at once
   * if the job left it off the round's roster, as sampling may): the protocol itself says whether
   * the job counted its masked input, and throws otherwise.
   *
   * @return where and when the broker appended the update, or null in secure mode
   * @throws LateUpdateException if the broker appended it at or after the round's deadline (the job
   *     rejects it as stale)
   * @throws IllegalStateException if the update cannot be sent, naming the phase in secure mode
   */
  public UpdateReceipt send(long round, String clientId, float[][] tensors) {
    if (spec.secureAggregation()) {
      sendSecure(round, clientId, tensors);
      return null;
    }
    byte[] value = ClientUpdates.encode(spec, round, clientId, tensors);
    RecordMetadata metadata;
    try {
      metadata =
          producer
              .send(
                  new ProducerRecord<>(
                      spec.topics().updates(), clientId.getBytes(StandardCharsets.UTF_8), value))
              .get();
    } catch (Exception e) {
      throw new IllegalStateException(
          "could not send the update of "
              + clientId
              + " for round "
              + round
              + ": "
              + e.getMessage(),
          e);
    }
    return UpdateReceipt.of(round, metadata, rounds.get(round)).requireInTime(clientId);
  }

  /**
   * A statistics job only: sends this client's rows for {@code round}, one value per feature in the
   * spec's order. At most {@code statistics.maxRows} rows are used (the first ones); values are
   * clipped into their bounds ({@link ClientStatistics}), and the job clips each block again.
   *
   * @return what {@link #send} returns
   * @throws IllegalStateException if the job trains a model
   * @throws IllegalArgumentException for a NaN value or a row of the wrong length, naming it
   * @throws LateUpdateException as {@link #send}
   */
  public UpdateReceipt sendStatistics(long round, String clientId, double[][] rows) {
    if (!spec.statisticsJob()) {
      throw new IllegalStateException(
          "job "
              + spec.jobId()
              + " trains a model (its spec has no statistics section): call send()");
    }
    return send(round, clientId, ClientStatistics.encode(spec.statistics(), rows));
  }

  private void sendSecure(long round, String clientId, float[][] tensors) {
    sendSecure(round, clientId, tensors, 6);
  }

  /**
   * Secure aggregation only: takes part in the first {@code phases} (1 to 6) phases of round {@code
   * round} and then goes silent, as a client that drops out would: for simulations and tests of
   * dropout tolerance. {@code phases = 6} is {@link #send}.
   */
  public void sendSecure(long round, String clientId, float[][] tensors, int phases) {
    if (!spec.secureAggregation()) {
      throw new IllegalStateException(
          "job " + spec.jobId() + " aggregates in plaintext: call send()");
    }
    // The job answers each phase at its deadline and commits it at a checkpoint after that.
    Duration timeout = Duration.ofMillis(Math.max(30_000, spec.rounds().timeoutMillis()));
    try (SecureRoundClient secure =
        new SecureRoundClient(spec, kafka, producer, random, maskedRounds)) {
      secure.run(round, clientId, tensors, timeout, phases);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "client " + clientId + " could not finish round " + round + ": " + e.getMessage(), e);
    }
  }

  /**
   * Sends without waiting; call {@link #flush()} to wait for all. Plaintext jobs only: a secure
   * round needs the job's answers between phases ({@link #send}). Nothing checks the broker's
   * append time against the deadline here: {@link #send} does.
   */
  public void sendAsync(long round, String clientId, float[][] tensors) {
    if (spec.secureAggregation()) {
      throw new IllegalStateException(
          "job "
              + spec.jobId()
              + " aggregates securely: call send(), which runs the round's phases, from a thread"
              + " per client");
    }
    producer.send(
        new ProducerRecord<>(
            spec.topics().updates(),
            clientId.getBytes(StandardCharsets.UTF_8),
            ClientUpdates.encode(spec, round, clientId, tensors)));
  }

  /**
   * Sends the updates of several clients for {@code round} ({@code updates} in the order of {@code
   * clientIds}) and returns once all are acknowledged. In secure mode each client runs the round's
   * phases on a thread of its own, all at once, as separate devices would, and a client that cannot
   * finish (a missed phase deadline, say) does not stop the others.
   *
   * @return why clients could not finish, one line each (always empty in plaintext mode, where a
   *     failed send throws)
   */
  public List<String> sendAll(long round, List<String> clientIds, List<float[][]> updates) {
    if (clientIds.size() != updates.size()) {
      throw new IllegalArgumentException(
          clientIds.size() + " client ids for " + updates.size() + " updates");
    }
    if (!spec.secureAggregation()) {
      for (int i = 0; i < updates.size(); i++) {
        sendAsync(round, clientIds.get(i), updates.get(i));
      }
      flush();
      return List.of();
    }
    if (clientIds.isEmpty()) {
      return List.of();
    }
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(clientIds.size());
    try {
      List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
      for (int i = 0; i < updates.size(); i++) {
        String clientId = clientIds.get(i);
        float[][] update = updates.get(i);
        sends.add(pool.submit(() -> send(round, clientId, update)));
      }
      List<String> failures = new ArrayList<>();
      for (int i = 0; i < sends.size(); i++) {
        try {
          sends.get(i).get();
        } catch (java.util.concurrent.ExecutionException e) {
          failures.add(clientIds.get(i) + ": " + e.getCause().getMessage());
        }
      }
      return failures;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending round " + round, e);
    } finally {
      pool.shutdownNow();
    }
  }

  public void flush() {
    producer.flush();
  }

  /** Reads what has arrived on the public topics, waiting at most {@code wait}. */
  public void poll(Duration wait) {
    followPublicTopics();
    if (followed.isEmpty()) {
      sleep(wait);
      return;
    }
    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(wait)) {
      if (record.key() == null
          || !new String(record.key(), StandardCharsets.UTF_8).equals(spec.jobId())) {
        continue; // other jobs share the topics
      }
      if (record.topic().equals(spec.topics().rounds())) {
        RoundAnnouncement a = AvroCodec.decodeAnnouncement(record.value());
        if (a.getBudgetSpent()) {
          budgetSpent = a;
        } else {
          rounds.put(a.getRound(), a);
        }
      } else {
        GlobalModel m = AvroCodec.decodeModel(record.value());
        models.put(m.getRound(), m);
        latestModelRound = Math.max(latestModelRound, m.getRound());
      }
    }
  }

  /**
   * The job's public record that its privacy budget is spent ({@code getBudgetSpent()}): rounds
   * from its round on never open, and its base model round is the final model; null until read.
   */
  public RoundAnnouncement budgetSpent() {
    return budgetSpent;
  }

  /**
   * Waits until round {@code round} is announced.
   *
   * @throws BudgetSpentException once the job said the round never opens
   */
  public RoundAnnouncement awaitRound(long round, Duration timeout) throws TimeoutException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!rounds.containsKey(round)) {
      RoundAnnouncement spent = budgetSpent;
      if (spent != null && round >= spent.getRound()) {
        throw new BudgetSpentException(spec.jobId(), "round " + round + " never opens", spent);
      }
      if (System.nanoTime() > end) {
        throw new TimeoutException(
            "round " + round + " of job " + spec.jobId() + " was not announced within " + timeout);
      }
      poll(Duration.ofMillis(100));
    }
    return rounds.get(round);
  }

  /**
   * Waits until the model of round {@code round} is released.
   *
   * @throws BudgetSpentException once the job said that model never comes (after its final one)
   */
  public GlobalModel awaitModel(long round, Duration timeout) throws TimeoutException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!models.containsKey(round)) {
      RoundAnnouncement spent = budgetSpent;
      if (spent != null && round > spent.getBaseModelRound()) {
        throw new BudgetSpentException(
            spec.jobId(), "the model of round " + round + " never comes", spent);
      }
      if (System.nanoTime() > end) {
        throw new TimeoutException(
            "the model of round "
                + round
                + " of job "
                + spec.jobId()
                + " did not arrive within "
                + timeout);
      }
      poll(Duration.ofMillis(100));
    }
    return models.get(round);
  }

  /** The latest announced round seen so far, or null. */
  public RoundAnnouncement latestRound() {
    return rounds.keySet().stream().max(Long::compare).map(rounds::get).orElse(null);
  }

  /** The model of {@code round} if it was seen. */
  public GlobalModel model(long round) {
    return models.get(round);
  }

  /**
   * Drops the models of rounds before {@code round} seen so far, for a reader that has used them:
   * {@link #model} then returns null for them. The latest model is always kept.
   */
  public void forgetModelsBefore(long round) {
    models.keySet().removeIf(r -> r < round && r != latestModelRound);
  }

  /** The latest released model seen so far, or null. */
  public GlobalModel latestModel() {
    return latestModelRound < 0 ? null : models.get(latestModelRound);
  }

  /** A model's tensors as doubles, in the spec's order. */
  public static double[][] weights(GlobalModel model) {
    double[][] out = new double[model.getTensors().size()][];
    for (int t = 0; t < out.length; t++) {
      var data = model.getTensors().get(t).getData();
      float[] values = new float[data.remaining() / 4];
      Float32.read(data, values, 0, values.length);
      out[t] = new double[values.length];
      for (int i = 0; i < values.length; i++) {
        out[t][i] = values[i];
      }
    }
    return out;
  }

  /** A model's weights as one vector, the spec's tensors one after the other. */
  public static double[] flatWeights(GlobalModel model) {
    return Arrays.stream(weights(model)).flatMapToDouble(Arrays::stream).toArray();
  }

  private static void sleep(Duration wait) {
    try {
      Thread.sleep(wait.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
    consumer.close(Duration.ofSeconds(5));
  }
}
