package dev.privagg.job;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.List;

/** Specs, updates and output readers that read like the domain. */
public final class JobFixtures {
  public static final String JOB = "job-a";
  public static final long T0 = 0;
  public static final long TIMEOUT = 1000;

  private JobFixtures() {}

  /**
   * The topics of an earlier run of {@code spec}'s job id, whose state is gone: rounds 1 and 2
   * announced and released, {@code charges} Gaussians of noise multiplier {@code z} charged.
   */
  public static LedgerFloor formerRunCharged(JobSpec spec, double z, int charges) {
    return new LedgerFloor(
        LedgerCodec.write(PrivacyLedger.of(PrivacyEvent.gaussian(z, charges))),
        2,
        false,
        2,
        spec.initialWeights(),
        2,
        null,
        PrivacyEvent.gaussian(z, 1),
        0,
        null);
  }

  /**
   * A 3-parameter model (w[2], b[1]), clip norm 1, m = 2, 1 s rounds; extra YAML lines appended.
   */
  public static JobSpec spec(String privacy, String rounds) {
    return spec(privacy, rounds, "");
  }

  /** {@link #spec(String, String)} with extra top-level YAML lines (a topics section, say). */
  public static JobSpec spec(String privacy, String rounds, String topLevel) {
    return spec(1.0, privacy, rounds, topLevel);
  }

  /** {@link #spec(String, String, String)} with another clip norm than 1. */
  public static JobSpec spec(double clipNorm, String privacy, String rounds, String topLevel) {
    return spec(clipNorm, TIMEOUT, 0, privacy, rounds, topLevel);
  }

  /** No noise, infinite budget, and rounds of {@code timeoutMillis} with that start grace. */
  public static JobSpec exactSpec(long timeoutMillis, long graceMillis, String rounds) {
    return spec(
        1.0, timeoutMillis, graceMillis, "noiseMultiplier: 0\nbudgetEpsilon: .inf", rounds, "");
  }

  private static JobSpec spec(
      double clipNorm,
      long timeoutMillis,
      long graceMillis,
      String privacy,
      String rounds,
      String topLevel) {
    return JobSpecReader.parse(
        "fixture",
        """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [2]}
            - {name: b, shape: [1]}
        rounds:
          timeout: %dms
          startGrace: %dms
          expectedClients: 2
        %s
        privacy:
          clipNorm: %s
          delta: 1.0e-5
        %s
        %s
        """
            .formatted(
                JOB,
                timeoutMillis,
                graceMillis,
                indent(rounds),
                clipNorm,
                indent(privacy),
                topLevel));
  }

  /** No noise, infinite budget: releases are exact. */
  public static JobSpec exactSpec(String rounds) {
    return spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", rounds);
  }

  private static String indent(String lines) {
    if (lines.isEmpty()) {
      return "";
    }
    return "  " + lines.replace("\n", "\n  ");
  }

  public static DecodedUpdate update(String client, long round, float w0, float w1, float b) {
    byte[][] data = {
      Float32.write(new float[] {w0, w1}, 0, 2).array(),
      Float32.write(new float[] {b}, 0, 1).array()
    };
    return new DecodedUpdate(JOB, client, round, data, new RawUpdate("updates", 0, 42, null));
  }

  /** {@code update} as read from {@code partition} at {@code offset} of the updates topic. */
  public static DecodedUpdate readFrom(int partition, long offset, DecodedUpdate update) {
    update.sourcePartition = partition;
    update.sourceOffset = offset;
    return update;
  }

  public static List<GlobalModel> models(List<OutboundRecord> out) {
    return models(out, "privagg.models");
  }

  public static List<GlobalModel> models(List<OutboundRecord> out, String topic) {
    return out.stream()
        .filter(r -> r.topic.equals(topic))
        .map(r -> AvroCodec.decodeModel(r.value))
        .toList();
  }

  public static List<RoundAnnouncement> announcements(List<OutboundRecord> out) {
    return out.stream()
        .filter(r -> r.topic.equals("privagg.rounds"))
        .map(r -> AvroCodec.decodeAnnouncement(r.value))
        .toList();
  }

  public static List<LedgerEntry> ledger(List<OutboundRecord> out) {
    return out.stream()
        .filter(r -> r.topic.equals("privagg.ledger"))
        .map(r -> AvroCodec.decodeLedgerEntry(r.value))
        .toList();
  }

  public static List<RejectedUpdate> rejects(List<OutboundRecord> out) {
    return out.stream()
        .filter(r -> r.topic.equals("privagg.rejects"))
        .map(r -> AvroCodec.decodeReject(r.value))
        .toList();
  }

  /** All values of a model, tensors concatenated in order. */
  public static float[] weights(GlobalModel model) {
    return dev.privagg.io.Tensors.flatten(model.getTensors());
  }
}
