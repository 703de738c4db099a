package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.avro.CorrelatedNoiseStatement;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.cli.CliTestAccess;
import dev.privagg.client.ClientUpdates;
import dev.privagg.correlated.BltPlan;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.decide.ClientGroups;
import dev.privagg.job.decide.DeploymentNoise;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Correlated noise (privacy.mechanism: blt, and bandmf below) end to end on a real broker and a
 * Flink MiniCluster: a BLT job with seeded noise over n = 6 planned rounds, minimum separation b =
 * 2 and at most k = 2 contributions per client, next to the same job without noise (independent, z
 * = 0) on the same topics, in the same Flink job. The clients follow one script; some send too soon
 * or too often.
 */
class CorrelatedNoiseIT extends KafkaFlinkTestBase {
  private static final int PLANNED_ROUNDS = 6;
  private static final int M = 3;
  private static final double Z = 1.0;
  private static final double DELTA = 1e-5;
  private static final int D = 8;

  /** Who sends in each round 1 to 6 (index 0 is round 1). */
  private static final List<List<String>> SENDERS =
      List.of(
          List.of("a", "b", "c"),
          List.of("c", "d", "e"), // c: 2 - 1 < b
          List.of("a", "b", "c", "e"), // e: 3 - 2 < b
          List.of("c", "d"), // c: a third time
          List.of("a", "b", "e"), // a, b: a third time
          List.of("d", "e", "f")); // d, e: a third time

  /** The script's outcome: who each round admits, and each reject as "round client reason". */
  private static final List<List<String>> ADMITTED =
      List.of(
          List.of("a", "b", "c"),
          List.of("d", "e"),
          List.of("a", "b", "c"),
          List.of("d"),
          List.of("e"),
          List.of("f"));

  private static final List<String> REJECTED =
      List.of(
          "2 c TOO_SOON",
          "3 e TOO_SOON",
          "4 c PARTICIPATION_LIMIT",
          "5 a PARTICIPATION_LIMIT",
          "5 b PARTICIPATION_LIMIT",
          "6 d PARTICIPATION_LIMIT",
          "6 e PARTICIPATION_LIMIT");

  @Test
  void bltJob_enforcesTheSchema_statesItsSensitivity_andReleasesSigmaTimesCInverseZ()
      throws Exception {
    JobSpec blt =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [%d]}
            rounds:
              timeout: 5s
              expectedClients: %d
            privacy:
              clipNorm: 1.0
              delta: %s
              budgetEpsilon: 1000
              accountant: pld
              mechanism: blt
              blt: {minSeparation: 2, maxParticipations: 2, buffers: 2}
              plannedRounds: %d
              noiseMultiplier: %s
              noise: {source: seeded, seed: 20261125}
            """
                .formatted(D, M, DELTA, PLANNED_ROUNDS, Z));
    JobSpec plain = plainSibling(blt);
    startJob(List.of(blt, plain), 2);

    for (int round = 1; round <= PLANNED_ROUNDS; round++) {
      awaitRound(blt, round, plain);
      List<byte[]> updates = new ArrayList<>();
      for (String client : SENDERS.get(round - 1)) {
        updates.add(
            ClientUpdates.encode(blt, round, client, new float[][] {values(round, client)}));
      }
      // The job without noise gets only what the BLT job admits: the same members.
      for (String client : ADMITTED.get(round - 1)) {
        updates.add(
            ClientUpdates.encode(plain, round, client, new float[][] {values(round, client)}));
      }
      produce(blt.topics().updates(), null, updates.toArray(new byte[0][]));
    }

    // Round n + 1 is never run: the ledger says BUDGET_EXHAUSTED.
    List<LedgerEntry> ledger =
        ledgerUntil(
                blt,
                l ->
                    l.stream()
                        .anyMatch(
                            e ->
                                e.getJobId().equals(blt.jobId())
                                    && e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED),
                Duration.ofSeconds(60))
            .stream()
            .filter(e -> e.getJobId().equals(blt.jobId()))
            .toList();
    assertThat(ledger)
        .extracting(LedgerEntry::getRound, LedgerEntry::getOutcome)
        .as("the BLT job's ledger")
        .startsWith(
            ledgerRow(1, LedgerOutcome.RELEASED),
            ledgerRow(2, LedgerOutcome.RELEASED),
            ledgerRow(3, LedgerOutcome.RELEASED),
            ledgerRow(4, LedgerOutcome.RELEASED),
            ledgerRow(5, LedgerOutcome.RELEASED),
            ledgerRow(6, LedgerOutcome.RELEASED),
            ledgerRow(PLANNED_ROUNDS + 1, LedgerOutcome.BUDGET_EXHAUSTED));
    assertThat(ledger.subList(0, PLANNED_ROUNDS))
        .extracting(LedgerEntry::getContributions)
        .as("contributions per round: the admitted clients")
        .containsExactlyElementsOf(ADMITTED.stream().map(a -> (long) a.size()).toList());

    List<RejectedUpdate> rejects =
        rejectsUntil(
                blt,
                l -> l.stream().filter(r -> blt.jobId().equals(r.getJobId())).count() >= 7,
                Duration.ofSeconds(30))
            .stream()
            .filter(r -> blt.jobId().equals(r.getJobId()))
            .toList();
    assertThat(rejects)
        .extracting(r -> r.getRound() + " " + r.getClientId() + " " + r.getReason())
        .containsExactlyInAnyOrderElementsOf(REJECTED);
    assertThat(rejects)
        .extracting(RejectedUpdate::getReason)
        .containsOnly(RejectReason.TOO_SOON, RejectReason.PARTICIPATION_LIMIT);

    Map<Long, GlobalModel> models = models(blt);
    Map<Long, GlobalModel> baseline = models(plain);
    assertThat(models.keySet())
        .as("the BLT job's models: rounds 0 to n, none past it")
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);

    JobSpec.Correlated correlated = blt.privacy().correlated();
    BltPlan plan = BltPlan.of(correlated.schema(PLANNED_ROUNDS), correlated.strategy());
    Accountant pld = Accountant.named("pld");
    double previousSensitivity = 0;
    double previousEpsilon = 0;
    NoiseDrift drift = new NoiseDrift();
    String deployment = ledger.get(0).getDeployment();
    List<String> figures = new ArrayList<>();
    for (long round = 1; round <= PLANNED_ROUNDS; round++) {
      GlobalModel model = models.get(round);
      CorrelatedNoiseStatement statement = model.getPrivacy().getCorrelatedNoise();
      assertThat(statement).as("round %d's correlated-noise statement", round).isNotNull();
      assertThat(statement.getMechanism()).isEqualTo("blt");
      assertThat(statement.getPlannedRounds()).isEqualTo(PLANNED_ROUNDS);
      assertThat(statement.getMinSeparation()).isEqualTo(2);
      assertThat(statement.getMaxParticipations()).isEqualTo(2);
      assertThat(statement.getTheta()).containsExactlyElementsOf(boxed(correlated.theta()));
      assertThat(statement.getOmega()).containsExactlyElementsOf(boxed(correlated.omega()));
      assertThat(statement.getNoiseMultiplier()).isEqualTo(Z);
      assertThat(statement.getPlannedSensitivity()).isEqualTo(plan.sensitivity());
      double sensitivity = statement.getSensitivity();
      assertThat(sensitivity)
          .as("round %d: sensitivity through the round", round)
          .isEqualTo(plan.sensitivityOfFirstRounds(round))
          .isGreaterThan(previousSensitivity);
      double prefix = statement.getPrefixNoiseMultiplier();
      assertThat(prefix).isEqualTo(Z * plan.sensitivity() / sensitivity);

      double epsilon = model.getPrivacy().getEpsilon();
      double ofOneGaussian = CorrelatedNoiseAccounting.epsilon(pld, prefix, DELTA);
      double byCommand = epsilonCommand(prefix);
      // The ledger composes the rounds' increments into one Gaussian by summing 1/z^2: that sum
      // rounds, so epsilon agrees with the prefix's to 1e-12 relative (2e-15 seen), not bit for
      // bit.
      assertThat(byCommand).as("round %d: privagg epsilon", round).isEqualTo(ofOneGaussian);
      assertThat(epsilon)
          .as("round %d: epsilon vs one Gaussian with its prefix noise multiplier", round)
          .isCloseTo(ofOneGaussian, withinPercentage(1e-10))
          .isGreaterThan(previousEpsilon);
      LedgerEntry entry = ledger.get((int) round - 1);
      assertThat(entry.getEpsilonSpent()).isEqualTo(epsilon);
      assertThat(entry.getCorrelatedNoise().getSensitivity()).isEqualTo(sensitivity);
      figures.add(
          "round %d: sensitivity %.6f, prefix z %.6f, epsilon %s (one Gaussian: %s)"
              .formatted(round, sensitivity, prefix, epsilon, ofOneGaussian));
      previousSensitivity = sensitivity;
      previousEpsilon = epsilon;

      drift.check(
          round,
          DeploymentNoise.sumNoise(blt, deployment, round),
          weights(model),
          weights(baseline.get(round)));
    }
    assertThat(previousEpsilon)
        .as("the last planned round's epsilon is the planned one (one Gaussian with z)")
        .isCloseTo(CorrelatedNoiseAccounting.epsilon(pld, Z, DELTA), withinPercentage(1e-10));
    System.out.printf(
        "correlated noise IT: %s; sigma %.6f; largest deviation from the recomputed noise %.3g%n",
        figures, blt.mechanism(1.0).sigma(), drift.worst);
  }

  /**
   * Amplified banded MF end to end: 12 clients send in every round, the job admits only the round's
   * keyed group and samples it at q = 3 / 4, the ledger charges a sampled Gaussian every third
   * round and a no-op between, epsilon is reproducible by privagg epsilon, and the release is the
   * admitted sum plus sigma (C^-1 Z)_t for the banded C, recomputed from the seeded streams.
   */
  @Test
  void bandmfJob_admitsOnlyTheRoundsGroup_chargesCeilTOverB_andReleasesBandedNoise()
      throws Exception {
    JobSpec band =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [%d]}
            rounds:
              timeout: 5s
              expectedClients: %d
            privacy:
              clipNorm: 1.0
              delta: %s
              budgetEpsilon: 1000
              accountant: pld
              mechanism: bandmf
              bandmf: {population: 12, bands: 3}
              plannedRounds: %d
              noiseMultiplier: %s
              noise: {source: seeded, seed: 20261128}
            """
                .formatted(D, M, DELTA, PLANNED_ROUNDS, Z));
    JobSpec plain = plainSibling(band);
    double q = band.privacy().sampling().rate();
    assertThat(q).isEqualTo(0.75);
    NoiseSource jobNoise = NoiseSources.forSpec(band);
    ClientKeys keys = new ClientKeys();
    List<String> clients = new ArrayList<>();
    for (int c = 0; c < 12; c++) {
      clients.add("c" + c);
    }
    startJob(List.of(band, plain), 2);

    List<List<String>> admitted = new ArrayList<>();
    long notInGroup = 0;
    for (int round = 1; round <= PLANNED_ROUNDS; round++) {
      awaitRound(band, round, plain);
      List<byte[]> updates = new ArrayList<>();
      List<String> taken = new ArrayList<>();
      for (String client : clients) {
        updates.add(
            ClientUpdates.encode(band, round, client, new float[][] {values(round, client)}));
        boolean inGroup =
            ClientGroups.groupOf(jobNoise, band, keys.of(client), 3) == (round - 1) % 3;
        if (!inGroup) {
          notInGroup++;
        } else if (DeploymentNoise.sampled(band, null, client, round)) {
          taken.add(client);
          updates.add(
              ClientUpdates.encode(plain, round, client, new float[][] {values(round, client)}));
        }
      }
      admitted.add(taken);
      produce(band.topics().updates(), null, updates.toArray(new byte[0][]));
    }
    assertThat(admitted.stream().mapToInt(List::size).sum()).isPositive();

    List<LedgerEntry> ledger =
        ledgerUntil(
                band,
                l ->
                    l.stream()
                        .anyMatch(
                            e ->
                                e.getJobId().equals(band.jobId())
                                    && e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED),
                Duration.ofSeconds(60))
            .stream()
            .filter(e -> e.getJobId().equals(band.jobId()))
            .toList();
    assertThat(ledger.subList(0, PLANNED_ROUNDS))
        .extracting(LedgerEntry::getContributions)
        .as("contributions per round: the group's sampled clients")
        .containsExactlyElementsOf(admitted.stream().map(a -> (long) a.size()).toList());
    assertThat(ledger.get(PLANNED_ROUNDS).getRound()).isEqualTo(PLANNED_ROUNDS + 1L);

    final long expectedRejects = notInGroup;
    List<RejectedUpdate> rejects =
        rejectsUntil(
                band,
                l ->
                    l.stream().filter(r -> band.jobId().equals(r.getJobId())).count()
                        >= expectedRejects,
                Duration.ofSeconds(30))
            .stream()
            .filter(r -> band.jobId().equals(r.getJobId()))
            .toList();
    assertThat(rejects).hasSize((int) notInGroup);
    assertThat(rejects)
        .extracting(RejectedUpdate::getReason)
        .containsOnly(RejectReason.NOT_IN_GROUP);

    Map<Long, GlobalModel> models = models(band);
    Map<Long, GlobalModel> baseline = models(plain);
    assertThat(models.keySet()).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
    AmplifiedBandMf run = new AmplifiedBandMf(Z, q, PLANNED_ROUNDS, 3);
    Accountant pld = Accountant.named("pld");
    String deployment = ledger.get(0).getDeployment();
    NoiseDrift drift = new NoiseDrift();
    for (long round = 1; round <= PLANNED_ROUNDS; round++) {
      GlobalModel model = models.get(round);
      assertThat(model.getPrivacy().getCorrelatedNoise()).isNull();
      // A no-op round states no charged multiplier (a 0 would read as "no noise"), and q.
      assertThat(model.getPrivacy().getChargedNoiseMultiplier())
          .isEqualTo(run.charges(round) ? Double.valueOf(Z) : null);
      assertThat(model.getPrivacy().getSamplingRate()).isEqualTo(q);
      long sampledRounds = run.participationsThrough(round);
      double expected =
          pld.epsilon(PrivacyLedger.of(PrivacyEvent.sampledGaussian(Z, q, sampledRounds)), DELTA)
              .epsilon();
      assertThat(model.getPrivacy().getEpsilon()).as("round %d", round).isEqualTo(expected);
      assertThat(epsilonCommand(Z, q, sampledRounds)).isEqualTo(expected);
      assertThat(model.getPrivacy().getCharges())
          .extracting(c -> c.getMechanismKind() + " " + c.getCount())
          .containsExactlyInAnyOrderElementsOf(
              round - sampledRounds == 0
                  ? List.of("POISSON_SAMPLED_GAUSSIAN " + sampledRounds)
                  : List.of(
                      "POISSON_SAMPLED_GAUSSIAN " + sampledRounds,
                      "NO_OP " + (round - sampledRounds)));

      drift.check(
          round,
          DeploymentNoise.sumNoise(band, deployment, round),
          weights(model),
          weights(baseline.get(round)));
    }
    System.out.printf(
        "bandmf IT: admitted %s, %d turned away; largest deviation from the recomputed noise %.3g%n",
        admitted, notInGroup, drift.worst);
  }

  /** A job with the same model, cohort and C and no noise: it gets the same members' updates. */
  private static JobSpec plainSibling(JobSpec spec) {
    return siblingSpec(
        spec,
        spec.jobId() + "-plain",
        """
        model:
          tensors:
            - {name: w, shape: [%d]}
        rounds:
          timeout: 5s
          expectedClients: %d
        privacy:
          clipNorm: 1.0
          delta: %s
          budgetEpsilon: .inf
          noiseMultiplier: 0
        """
            .formatted(D, M, DELTA));
  }

  /**
   * The model minus the same job's without noise: lr / m times the sum of the released noise over
   * the rounds so far (SGD, lr 1), up to each release's float rounding (half an ulp of each model's
   * value per round) and 1e-12 per round for the sums in double.
   */
  private static final class NoiseDrift {
    private final double[] drift = new double[D];
    private final double[] tolerance = new double[D];
    double worst;

    void check(long round, double[] noise, float[] ours, float[] theirs) {
      for (int i = 0; i < D; i++) {
        drift[i] += noise[i] / M;
        tolerance[i] += (Math.ulp(ours[i]) + Math.ulp(theirs[i])) / 2 + 1e-12;
        double error = ((double) ours[i] - theirs[i]) - drift[i];
        assertThat(Math.abs(error))
            .as(
                "round %d w[%d]: %s - %s (no noise) vs the recomputed noise %s",
                round, i, ours[i], theirs[i], drift[i])
            .isLessThanOrEqualTo(tolerance[i]);
        worst = Math.max(worst, Math.abs(error));
      }
    }
  }

  /** Client {@code client}'s update in round {@code round}: b's and e's are clipped at C = 1. */
  private static float[] values(long round, String client) {
    float scale = client.equals("b") || client.equals("e") ? 3f : 0.2f;
    float[] w = new float[D];
    for (int i = 0; i < D; i++) {
      w[i] = (float) Math.sin(round * 13 + client.charAt(0) * 5 + i) * scale;
    }
    return w;
  }

  /** Waits until both jobs announced {@code round}. */
  private void awaitRound(JobSpec blt, long round, JobSpec plain) {
    for (JobSpec spec : List.of(blt, plain)) {
      announcementsUntil(
          spec,
          l -> l.stream().anyMatch(a -> a.getJobId().equals(spec.jobId()) && a.getRound() == round),
          Duration.ofSeconds(60));
    }
  }

  /** Every model of {@code spec}'s job read so far (they share a topic), by round. */
  private Map<Long, GlobalModel> models(JobSpec spec) {
    return modelsUntil(
            spec,
            l ->
                l.stream()
                    .anyMatch(
                        m -> m.getJobId().equals(spec.jobId()) && m.getRound() == PLANNED_ROUNDS),
            Duration.ofSeconds(60))
        .stream()
        .filter(m -> m.getJobId().equals(spec.jobId()))
        .collect(
            Collectors.toMap(
                GlobalModel::getRound, m -> m, (a, b) -> a, LinkedHashMap<Long, GlobalModel>::new));
  }

  /** {@code privagg epsilon} of one Gaussian with noise multiplier {@code z}, in-process. */
  private static double epsilonCommand(double z) throws Exception {
    return epsilonCommand(z, 1, 1);
  }

  /** {@code privagg epsilon} of {@code rounds} Gaussians at z sampled at q, in-process. */
  private static double epsilonCommand(double z, double q, long rounds) throws Exception {
    String json =
        CliTestAccess.run(
            "epsilon",
            "--noise-multiplier",
            Double.toString(z),
            "--sampling-rate",
            Double.toString(q),
            "--rounds",
            Long.toString(rounds),
            "--delta",
            Double.toString(DELTA),
            "--accountant",
            "pld",
            "--json");
    return new ObjectMapper().readTree(json).get("epsilon").asDouble();
  }

  private static org.assertj.core.groups.Tuple ledgerRow(long round, LedgerOutcome outcome) {
    return org.assertj.core.groups.Tuple.tuple(round, outcome);
  }

  private static List<Double> boxed(double[] values) {
    return Arrays.stream(values).boxed().toList();
  }
}
