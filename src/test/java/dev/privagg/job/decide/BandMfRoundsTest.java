package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.formerRunCharged;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Amplified banded MF through the round lifecycle: a client is admitted only in its keyed group's
 * rounds, the ledger after round t states ceil(t / b) sampled Gaussians, no round runs past the
 * planned ones, and the released noise is sigma C^-1 Z for the banded C.
 */
class BandMfRoundsTest {
  // m = 2 of a population of 6 in 3 groups: q = 2 / floor(6 / 3) = 1, so every group member is
  // taken and admissions are exact.
  private static final String BANDMF =
      """
      mechanism: bandmf
      bandmf: {population: 6, bands: 3}
      plannedRounds: %d
      noiseMultiplier: 1.0
      budgetEpsilon: .inf
      accountant: rdp
      noise: {source: seeded, seed: 7}""";

  private final LifecycleDriver driver = LifecycleDriver.recording();
  private final LifecycleFakes.Recorder decided = driver.decided;

  private void start(JobSpec spec) {
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
  }

  @Test
  void eachClient_isAdmittedOnlyInItsGroupsRounds_bandsApart() {
    start(spec(BANDMF.formatted(9), ""));
    int clients = 30;
    Map<String, List<Long>> admittedRounds = new HashMap<>();
    for (long r = 1; r <= 9; r++) {
      int before = decided.admittedFrom.size();
      for (int c = 0; c < clients; c++) {
        driver.read(update("c" + c, r, 0.1f, 0f, 0f), (r - 1) * TIMEOUT + 10 + c);
      }
      // Held until the watermark passes them, admitted before the round closes.
      driver.advanceTo(r * TIMEOUT);
      for (String position : decided.admittedFrom.subList(before, decided.admittedFrom.size())) {
        String client = position.split("@")[0];
        admittedRounds.computeIfAbsent(client, k -> new ArrayList<>()).add(r);
      }
    }
    assertThat(admittedRounds).hasSize(clients);
    int[] groupSizes = new int[3];
    for (List<Long> rounds : admittedRounds.values()) {
      // Three rounds each: g + 1, g + 4, g + 7.
      assertThat(rounds).hasSize(3);
      assertThat(rounds.get(1) - rounds.get(0)).isEqualTo(3);
      assertThat(rounds.get(2) - rounds.get(1)).isEqualTo(3);
      groupSizes[(int) (rounds.get(0) - 1)]++;
    }
    // A keyed uniform draw: each group holds some of the 30 (all three empty-free with
    // probability 1 - 3 (2/3)^30 > 0.9999; the seed is fixed).
    assertThat(groupSizes).doesNotContain(0);
    assertThat(decided.rejects).hasSize(clients * 6).allMatch(r -> r.endsWith(" NOT_IN_GROUP"));
  }

  @Test
  void ledger_statesCeilTOverBSampledGaussians_andNoRoundRunsPastThePlannedOnes() {
    JobSpec spec = spec(BANDMF.formatted(7), "");
    start(spec);
    driver.advanceTo(10 * TIMEOUT);
    assertThat(decided.closed).extracting(ClosedRound::round).hasSize(7);
    assertThat(decided.exhausted).containsExactly(8L);
    AmplifiedBandMf run = new AmplifiedBandMf(1.0, 1.0, 7, 3);
    Accountant rdp = Accountant.named("rdp");
    for (ClosedRound closed : decided.closed) {
      long t = closed.round();
      assertThat(closed.charge().kind())
          .isEqualTo(run.charges(t) ? MechanismKind.GAUSSIAN : MechanismKind.NO_OP);
      assertThat(closed.ledger().totalCount()).isEqualTo(t);
      double expected =
          rdp.epsilon(
                  PrivacyLedger.of(PrivacyEvent.gaussian(1.0, run.participationsThrough(t))), 1e-5)
              .epsilon();
      assertThat(closed.epsilonSpent()).as("round %d", t).isCloseTo(expected, within(1e-12));
    }
  }

  // The buffers hold the earlier rounds' C^-1 Z: a start without them (fresh, or from before the
  // latest charges) would release noise the ledger's banded charges do not cover.
  @Test
  void aStartThatWouldLoseTheNoiseBuffers_isRefused_namingBandmf() {
    JobSpec spec = spec(BANDMF.formatted(9), "");
    LedgerFloor twoRounds = formerRunCharged(spec, 1.0, 2);
    assertThatThrownBy(
            () ->
                driver.start(
                    new RoundLifecycle(spec, NoiseSources.forSpec(spec), twoRounds), 5_000))
        .isInstanceOf(RoundLifecycle.ParticipationsLostException.class)
        .hasMessageContaining("privacy.mechanism: bandmf")
        .hasMessageContaining("noise buffers")
        .hasMessageContaining("2 charged rounds but the state is empty")
        .hasMessageNotContaining("past their limits");
  }

  // The review's restore: another noise key (here seed), models topic or job id draws other
  // groups, and a client that lost its draw in round 1 would get another in round 2 of the same
  // cycle. The groups' keyed fingerprint is part of the mechanism the state records.
  @Test
  void aRestoreThatWouldRedrawTheGroups_isRefused() {
    JobSpec spec = spec(BANDMF.formatted(9), "");
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
    driver.advanceTo(TIMEOUT);
    for (JobSpec changed :
        new JobSpec[] {
          spec(BANDMF.formatted(9).replace("seed: 7", "seed: 8"), ""),
          spec(BANDMF.formatted(9), "", "topics: {models: other.models}")
        }) {
      assertThatThrownBy(
              () ->
                  driver.start(
                      new RoundLifecycle(changed, NoiseSources.forSpec(changed), LedgerFloor.NONE),
                      TIMEOUT))
          .isInstanceOf(RoundLifecycle.MechanismChangedException.class)
          .hasMessageContaining("groups=")
          .hasMessageContaining("pin what the state records: privacy.bandmf.coefficients");
    }
    // The same spec restores.
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), TIMEOUT);
  }

  // q < 1 inside the group: a member is taken on its keyed draw, once; a second update of a taken
  // client is a duplicate, and one the draw left out draws the same again (a keyed draw is a
  // function of job, round and client), so it neither counts against the cap nor is remembered.
  @Test
  void withinTheGroup_eachMemberGetsOneDraw() {
    JobSpec spec = spec(BANDMF.formatted(9).replace("population: 6", "population: 12"), "");
    assertThat(spec.privacy().sampling().rate()).isEqualTo(0.5);
    start(spec);
    NoiseSource noise = NoiseSources.forSpec(spec);
    ClientKeys keys = new ClientKeys();
    int taken = 0;
    int drawn = 0;
    for (int c = 0; c < 60; c++) {
      String id = "c" + c;
      driver.read(update(id, 1, 0.1f, 0f, 0f), 10 + c);
      driver.read(update(id, 1, 0.1f, 0f, 0f), 100 + c); // a retry
      if (ClientGroups.groupOf(noise, spec, keys.of(id), 3) == 0) {
        drawn++;
        if (noise.forRound(NoiseStreams.sampling(spec, id), 1).nextUniform() < 0.5) {
          taken++;
        }
      }
    }
    driver.advanceTo(TIMEOUT);
    assertThat(decided.admittedFrom).hasSize(taken);
    assertThat(taken).isBetween(1, drawn - 1); // some taken, some left out: q < 1 acts
    assertThat(decided.rejects.stream().filter(r -> r.endsWith("DUPLICATE_CLIENT"))).hasSize(taken);
    assertThat(decided.closed.get(0).charge().kind())
        .isEqualTo(MechanismKind.POISSON_SAMPLED_GAUSSIAN);
    assertThat(decided.closed.get(0).charge().samplingRate()).isEqualTo(0.5);
  }

  // The review's displacement: with the cap counted before the draw, a population larger than
  // bandmf.population filled a round's maxClients with clients the draw then dropped, and from
  // there on who was turned away ROUND_FULL depended on who else sent. Drawn first, only sampled
  // clients take places: 5 times the declared population still leaves room.
  @Test
  void aPopulationBeyondTheDeclaredOne_fillsNoRound_withClientsTheDrawDrops() {
    JobSpec spec =
        spec(BANDMF.formatted(9).replace("population: 6", "population: 30"), "maxClients: 29");
    assertThat(spec.privacy().sampling().rate()).isEqualTo(0.2);
    start(spec);
    NoiseSource noise = NoiseSources.forSpec(spec);
    ClientKeys keys = new ClientKeys();
    int members = 0;
    int sampled = 0;
    for (int c = 0; c < 150; c++) { // 5 x 30
      String id = "c" + c;
      driver.read(update(id, 1, 0.1f, 0f, 0f), 10 + c);
      if (ClientGroups.groupOf(noise, spec, keys.of(id), 3) == 0) {
        members++;
        if (noise.forRound(NoiseStreams.sampling(spec, id), 1).nextUniform() < 0.2) {
          sampled++;
        }
      }
    }
    driver.advanceTo(TIMEOUT);
    assertThat(members).isGreaterThan(29); // the old order would have turned some away
    assertThat(decided.rejects).noneMatch(r -> r.endsWith("ROUND_FULL"));
    assertThat(decided.admittedFrom).hasSize(sampled);
  }

  /**
   * All-zero updates: the released models move by the noise alone, noise_t / m. Applying the banded
   * C to that sequence gives sigma Z: i.i.d. N(0, sigma^2) coordinates, uncorrelated across rounds.
   * 64 coordinates x 200 rounds; each bound is 5 standard errors (a correct job fails it with
   * probability below 1e-6; the seed is fixed).
   */
  @Test
  void zeroUpdates_cTimesTheReleasedNoise_isIndependentGaussianWithStdSigma() {
    int rounds = 200;
    int d = 64;
    JobSpec spec =
        JobSpecReader.parse(
            "bandmf-zero",
            """
            jobId: job-a
            model:
              tensors: [{name: w, shape: [%d]}]
            rounds: {timeout: %dms, startGrace: 0ms, expectedClients: 4}
            privacy:
              clipNorm: 0.5
              delta: 1.0e-5
            %s
            """
                .formatted(
                    d,
                    TIMEOUT,
                    BANDMF.formatted(rounds).replace("population: 6", "population: 12").indent(2)));
    LifecycleDriver releasing = LifecycleDriver.releasing();
    releasing.start(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE, 0);
    releasing.advanceTo(rounds * TIMEOUT);
    assertThat(releasing.decided.models).hasSize(rounds);

    BandedToeplitz strategy = spec.privacy().correlated().bandedStrategy();
    assertThat(strategy.bands()).isEqualTo(3);
    assertThat(spec.mechanism(0.5).sigma()).isEqualTo(0.5);
    double rawLag1 =
        ReleasedNoise.assertWhitenedByC(
            releasing.decided.models,
            spec.rounds().expectedClients(),
            strategy.coefficients(),
            spec.mechanism(0.5).sigma());
    // The released noise itself is correlated across rounds: the check above can tell.
    assertThat(Math.abs(rawLag1)).isGreaterThan(ReleasedNoise.clearlyCorrelated(rounds, d));
  }
}
