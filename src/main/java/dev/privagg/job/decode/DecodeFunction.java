package dev.privagg.job.decode;

import dev.privagg.avro.RejectReason;
import dev.privagg.io.KafkaConnection;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.Records;
import dev.privagg.job.kafka.Heartbeat;
import dev.privagg.job.metrics.PrivaggMetrics;
import dev.privagg.job.metrics.StageTimer;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Decodes and validates raw updates; anything unusable goes to the rejects side output. */
public final class DecodeFunction extends ProcessFunction<RawUpdate, DecodedUpdate> {
  private static final Logger LOG = LoggerFactory.getLogger(DecodeFunction.class);
  public static final OutputTag<OutboundRecord> REJECTS = new OutputTag<>("rejects") {};

  private final List<JobSpec> specs;
  private final UpdateValidator validator;
  private final String rejectsTopic;
  private final KafkaConnection heartbeatKafka;
  private final long heartbeatMillis;
  private final ShardPlan shards;
  private transient ClientKeys clientKeys;
  private transient Map<String, RejectMetrics> metrics;
  private transient RejectMetrics noJobRejects;
  private transient Heartbeat heartbeat;
  private transient StageTimer decodeTime;
  private transient boolean warnedProducerTime;

  /**
   * @param heartbeatKafka Kafka to write heartbeat ticks to, or null for none (tests that drive
   *     watermarks themselves)
   * @param shards which shard sums each client's updates
   */
  public DecodeFunction(
      List<JobSpec> specs, KafkaConnection heartbeatKafka, long heartbeatMillis, ShardPlan shards) {
    this.shards = shards;
    this.specs = List.copyOf(specs);
    this.validator = new UpdateValidator(specs);
    this.rejectsTopic = specs.get(0).topics().rejects();
    this.heartbeatKafka = heartbeatKafka;
    this.heartbeatMillis = heartbeatMillis;
  }

  @Override
  public void open(OpenContext context) {
    metrics = new HashMap<>();
    noJobRejects =
        new RejectMetrics(PrivaggMetrics.noTrainingJob(getRuntimeContext().getMetricGroup()));
    clientKeys = new ClientKeys();
    decodeTime = new StageTimer(getRuntimeContext().getMetricGroup(), "decode");
    for (JobSpec spec : specs) {
      metrics.put(
          spec.jobId(),
          new RejectMetrics(
              PrivaggMetrics.trainingJob(getRuntimeContext().getMetricGroup(), spec.jobId())));
    }
    // One ticking subtask is enough: it writes to every partition.
    if (heartbeatKafka != null && getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0) {
      heartbeat =
          new Heartbeat(
              heartbeatKafka,
              specs.get(0).topics().updates(),
              heartbeatMillis,
              PrivaggMetrics.heartbeatFailures(getRuntimeContext().getMetricGroup()));
    }
  }

  @Override
  public void close() {
    if (heartbeat != null) {
      heartbeat.close();
    }
  }

  @Override
  public void processElement(RawUpdate raw, Context ctx, Collector<DecodedUpdate> out) {
    if (raw.producerTime) {
      if (!warnedProducerTime) {
        warnedProducerTime = true;
        LOG.warn(
            "{} holds records stamped by their producer (CreateTime): they cannot move event time"
                + " or join a round, so rounds stall until the topic uses"
                + " message.timestamp.type=LogAppendTime",
            raw.topic);
      }
      if (!raw.tick) {
        reject(
            raw,
            new UpdateValidator.Rejection(
                RejectReason.CLIENT_TIMESTAMP,
                "the record's time was set by its producer (CreateTime); the updates topic must"
                    + " use message.timestamp.type=LogAppendTime",
                null,
                null,
                null),
            ctx);
      }
      return;
    }
    if (raw.tick) {
      // The tick's timestamp has already advanced the watermark; each job hears it too.
      for (JobSpec spec : specs) {
        out.collect(DecodedUpdate.keepAlive(spec.jobId()));
      }
      return;
    }
    long started = StageTimer.start();
    UpdateValidator.Result result;
    try {
      result = validator.validate(raw);
    } catch (RuntimeException e) {
      // A bug, not the client's fault; failing the task would replay the record forever, so the
      // record goes to the rejects topic (bytes kept) and the error to the log.
      LOG.error("validating {}/{}@{} failed", raw.topic, raw.partition, raw.offset, e);
      result = UpdateValidator.internalError(e);
    }
    decodeTime.stop(started);
    if (result.update() != null) {
      DecodedUpdate update = result.update();
      update.clientKey = clientKeys.of(update.clientId);
      update.shardKey = shards.keyFor(update.jobId, update.clientKey);
      out.collect(update);
      return;
    }
    reject(raw, result.rejection(), ctx);
  }

  private void reject(RawUpdate raw, UpdateValidator.Rejection r, Context ctx) {
    // Records naming no job this Flink job serves (or none at all) count without a training job.
    metrics.getOrDefault(r.jobId(), noJobRejects).inc(r.reason());
    // Oversize records are not copied into the rejects topic; their position identifies them.
    boolean oversize =
        r.reason() == RejectReason.RECORD_TOO_LARGE || !validator.fitsAnyJob(raw.value);
    byte[] original = oversize ? null : raw.value;
    ctx.output(
        REJECTS,
        Records.reject(
            rejectsTopic,
            r.reason(),
            r.detail(),
            r.jobId(),
            r.clientId(),
            r.round(),
            raw.topic,
            raw.partition,
            raw.offset,
            original));
  }
}
