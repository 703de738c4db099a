package dev.privagg.job;

import dev.privagg.avro.CorrelatedNoiseCharge;
import dev.privagg.avro.CorrelatedNoiseStatement;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.PrivacyCharge;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.avro.SecureAggregationCharge;
import dev.privagg.avro.SecureAggregationStatement;
import dev.privagg.avro.Tensor;
import dev.privagg.correlated.BltPlan;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Tensors;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.privacy.SecureFailureDelta;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Builds the encoded output records of a job; keys are the job id, so a job keeps its order. */
public final class Records {
  private Records() {}

  /**
   * A released model. Its privacy statement is enough to recompute its epsilon: {@code charges} is
   * the job's ledger after the round, whatever charged it (this spec, another run's take-over, a
   * changed spec).
   *
   * @param clipNorm the C its round's updates were clipped to
   * @param charges the ledger behind {@code epsilon}, or null when unknown (a round sealed by a
   *     version that did not pass it on)
   * @param charge the round's own charge, or null for round 0 (the spec's is stated then)
   */
  public static OutboundRecord model(
      JobSpec spec,
      long round,
      float[] weights,
      double epsilon,
      double clipNorm,
      PrivacyLedger charges,
      PrivacyEvent charge,
      String noiseSource,
      String deployment) {
    List<Tensor> tensors = new ArrayList<>();
    int offset = 0;
    for (JobSpec.TensorSpec t : spec.model().tensors()) {
      tensors.add(Tensors.of(t.name(), t.shape(), t.size(), weights, offset));
      offset += t.size();
    }
    JobSpec.Privacy p = spec.privacy();
    PrivacyEvent stated =
        charge != null ? charge : spec.roundCharge().event(p.noiseMultiplier(), 1);
    // A no-op round (amplified banded MF between its group-0 rounds) charges nothing: it states
    // no charged multiplier rather than a 0 that would read as "no noise", and the job's rate.
    boolean noOp = stated.kind() == MechanismKind.NO_OP;
    List<PrivacyCharge> composed =
        charges == null
            ? null
            : charges.events().stream()
                .map(
                    e ->
                        new PrivacyCharge(
                            e.kind().name(), e.noiseMultiplier(), e.samplingRate(), e.count()))
                .toList();
    PrivacyStatement privacy =
        PrivacyStatement.newBuilder()
            .setEpsilon(epsilon)
            .setDelta(p.delta())
            .setAccountant(p.accountant())
            .setNoiseMultiplier(p.noiseMultiplier())
            .setClipNorm(clipNorm)
            .setSamplingRate(noOp ? p.sampling().accountingRate() : stated.samplingRate())
            .setSamplingMode(p.sampling().mode())
            .setNoiseSource(noiseSource)
            .setAdjacency(spec.roundCharge().adjacency())
            .setBudgetEpsilon(p.budgetEpsilon())
            .setChargedNoiseMultiplier(noOp ? null : stated.noiseMultiplier())
            .setCharges(composed)
            .setCorrelatedNoise(correlatedStatement(spec, round))
            .setSecureAggregation(secureStatement(spec, round, epsilon))
            .build();
    GlobalModel model =
        new GlobalModel(
            spec.jobId(),
            round,
            tensors,
            privacy,
            spec.statisticsJob() && round > 0
                ? StatisticsStatement.of(spec, round, weights, charges)
                : null);
    OutboundRecord record =
        OutboundRecord.release(spec.topics().models(), key(spec), AvroCodec.encode(model), round);
    record.deployment = deployment;
    return record;
  }

  /**
   * A round's announcement. Its opening time is not public; it travels with the internal copy, so
   * that a fresh start can take the round over with the same window.
   */
  public static OutboundRecord announcement(
      JobSpec spec,
      long round,
      long baseModelRound,
      long openedMillis,
      long deadlineMillis,
      String deployment) {
    RoundAnnouncement a =
        new RoundAnnouncement(spec.jobId(), round, baseModelRound, deadlineMillis, false);
    OutboundRecord record =
        OutboundRecord.release(spec.topics().rounds(), key(spec), AvroCodec.encode(a), round);
    record.openedMillis = openedMillis;
    record.deployment = deployment;
    record.fixedSchedule = !spec.rounds().nextRoundAtEarlyClose();
    return record;
  }

  /**
   * The public word that the budget is spent: round {@code firstUnopened} and every later one never
   * open, and {@code finalModelRound} is the last model. Its bytes hold nothing time-dependent
   * (deadline 0), so a replay that decides the same exhaustion writes the same bytes.
   */
  public static OutboundRecord budgetSpent(
      JobSpec spec, long firstUnopened, long finalModelRound, String deployment) {
    RoundAnnouncement a =
        new RoundAnnouncement(spec.jobId(), firstUnopened, finalModelRound, 0L, true);
    OutboundRecord record =
        OutboundRecord.release(
            spec.topics().rounds(), key(spec), AvroCodec.encode(a), firstUnopened);
    record.deployment = deployment;
    return record;
  }

  public static OutboundRecord ledger(
      JobSpec spec,
      long round,
      LedgerOutcome outcome,
      PrivacyEvent charged,
      double epsilonSpent,
      long contributions,
      Double noisyCount,
      ClosedRound.Clipping clipping,
      long nowMillis,
      String deployment) {
    JobSpec.Privacy p = spec.privacy();
    LedgerEntry entry =
        LedgerEntry.newBuilder()
            .setJobId(spec.jobId())
            .setRound(round)
            .setOutcome(outcome)
            .setMechanismKind(charged == null ? null : charged.kind().name())
            .setChargedNoiseMultiplier(charged == null ? null : charged.noiseMultiplier())
            .setChargedSamplingRate(charged == null ? null : charged.samplingRate())
            .setAdjacency(spec.roundCharge().adjacency())
            .setSamplingMode(p.sampling().mode())
            .setSamplingDeclared(p.sampling().declared())
            .setEpsilonSpent(epsilonSpent)
            .setDelta(p.delta())
            .setAccountant(p.accountant())
            .setBudgetEpsilon(p.budgetEpsilon())
            .setContributions(contributions)
            .setNoisyCount(noisyCount)
            .setClipNorm(clipping == null ? null : clipping.clipNorm())
            .setNoisyUnclippedFraction(clipping == null ? null : clipping.noisyUnclippedFraction())
            .setNextClipNorm(clipping == null ? null : clipping.nextClipNorm())
            .setTimestampMillis(nowMillis)
            .setDeployment(deployment)
            .setCorrelatedNoise(charged == null ? null : correlatedCharge(spec, round))
            .setSecureAggregation(secureCharge(spec, round, epsilonSpent))
            .setStatisticsSplit(
                charged == null || !spec.statisticsJob() || spec.privacy().distributed()
                    ? null
                    : StatisticsStatement.split(spec, charged.noiseMultiplier()))
            .build();
    return new OutboundRecord(spec.topics().ledger(), key(spec), AvroCodec.encode(entry));
  }

  /**
   * What secure rounds' failures to unmask add to delta through {@code round} (every round up to it
   * counted, whatever its mode): null in plaintext mode and for round 0.
   */
  private static SecureAggregationStatement secureStatement(
      JobSpec spec, long round, double epsilon) {
    double beta = spec.secureFailureProbabilityPerRound();
    if (beta == 0 || round < 1) {
      return null;
    }
    return new SecureAggregationStatement(
        beta, round, SecureFailureDelta.total(spec.privacy().delta(), epsilon, round, beta));
  }

  private static SecureAggregationCharge secureCharge(JobSpec spec, long round, double epsilon) {
    SecureAggregationStatement s = secureStatement(spec, round, epsilon);
    return s == null
        ? null
        : new SecureAggregationCharge(
            s.getFailureProbabilityPerRound(), s.getRounds(), s.getDelta());
  }

  /** Each correlated spec's plan, built once: every model and ledger entry states from it. */
  private static final Map<JobSpec.Correlated, BltPlan> PLANS =
      java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

  private static BltPlan planOf(JobSpec.Correlated c, long rounds) {
    BltPlan plan = PLANS.computeIfAbsent(c, k -> BltPlan.of(k.schema(rounds), k.strategy()));
    return plan.schema().rounds() == rounds ? plan : BltPlan.of(c.schema(rounds), c.strategy());
  }

  /** A correlated spec's figures through {@code round}: what reproduces the stated epsilon. */
  private record Correlated(
      JobSpec.Correlated blt,
      long rounds,
      double z,
      double sensitivity,
      double prefixNoiseMultiplier) {
    static Correlated of(JobSpec spec, long round) {
      JobSpec.Correlated c = spec.privacy().correlated();
      if (c == null || round < 1 || c.banded()) {
        // Round 0 (the initial model) released nothing; amplified banded MF's charges are
        // Poisson-sampled Gaussians, stated with the charges themselves.
        return null;
      }
      long n = spec.privacy().plannedRounds();
      long through = Math.min(round, n);
      double sensitivity = planOf(c, n).sensitivityOfFirstRounds(through);
      double z = spec.privacy().noiseMultiplier();
      double prefix =
          CorrelatedNoiseAccounting.prefixNoiseMultiplier(z, c.plannedSensitivity(), sensitivity);
      return new Correlated(c, n, z, sensitivity, prefix);
    }

    List<Double> theta() {
      return java.util.Arrays.stream(blt.theta()).boxed().toList();
    }

    List<Double> omega() {
      return java.util.Arrays.stream(blt.omega()).boxed().toList();
    }
  }

  private static CorrelatedNoiseStatement correlatedStatement(JobSpec spec, long round) {
    Correlated c = Correlated.of(spec, round);
    return c == null
        ? null
        : new CorrelatedNoiseStatement(
            "blt",
            c.rounds(),
            c.blt().minSeparation(),
            c.blt().maxParticipations(),
            c.theta(),
            c.omega(),
            c.z(),
            c.blt().plannedSensitivity(),
            c.sensitivity(),
            c.prefixNoiseMultiplier());
  }

  /** The ledger entry's copy of the model's statement: the same fields, one record per schema. */
  private static CorrelatedNoiseCharge correlatedCharge(JobSpec spec, long round) {
    CorrelatedNoiseStatement statement = correlatedStatement(spec, round);
    if (statement == null) {
      return null;
    }
    CorrelatedNoiseCharge charge = new CorrelatedNoiseCharge();
    for (int i = 0; i < statement.getSchema().getFields().size(); i++) {
      charge.put(i, statement.get(i));
    }
    return charge;
  }

  /** Longest reject detail kept: details quote client input, which must not grow the record. */
  static final int MAX_DETAIL_CHARS = 1000;

  /**
   * A reject record. It is at most the original bytes plus {@link
   * PrivaggJob#OUTPUT_HEADROOM_BYTES}: the detail is cut to {@link #MAX_DETAIL_CHARS} and ids are
   * capped by the validator, so a record at the size limit can never make a reject the sink cannot
   * send.
   */
  public static OutboundRecord reject(
      String rejectsTopic,
      RejectReason reason,
      String detail,
      String jobId,
      String clientId,
      Long round,
      String sourceTopic,
      int sourcePartition,
      long sourceOffset,
      byte[] originalBytes) {
    RejectedUpdate rejected =
        RejectedUpdate.newBuilder()
            .setReason(reason)
            .setDetail(
                detail.length() <= MAX_DETAIL_CHARS
                    ? detail
                    : detail.substring(0, MAX_DETAIL_CHARS) + "... (" + detail.length() + " chars)")
            .setJobId(jobId)
            .setClientId(clientId)
            .setRound(round)
            .setSourceTopic(sourceTopic)
            .setSourcePartition(sourcePartition)
            .setSourceOffset(sourceOffset)
            .setOriginalBytes(originalBytes == null ? null : ByteBuffer.wrap(originalBytes))
            .build();
    byte[] key = jobId == null ? null : jobId.getBytes(StandardCharsets.UTF_8);
    return new OutboundRecord(rejectsTopic, key, AvroCodec.encode(rejected));
  }

  private static byte[] key(JobSpec spec) {
    return spec.jobId().getBytes(StandardCharsets.UTF_8);
  }
}
