package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.secagg.GraphParameters;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class JobSpecReaderTest {
  static final String MINIMAL =
      """
      jobId: test-job
      model:
        tensors:
          - {name: w, shape: [3, 2]}
          - {name: b, shape: [2]}
      rounds:
        timeout: 2s
        expectedClients: 4
      privacy:
        clipNorm: 1.0
        noiseMultiplier: 1.0
        delta: 1e-5
        budgetEpsilon: 10
      """;

  @Test
  void exampleSpec_inJobsFolder_isValid_andPlansItsNoise() {
    JobSpec spec = JobSpecReader.read(Path.of("jobs/digits-softmax.yaml"));
    assertThat(spec.jobId()).isEqualTo("digits-softmax");
    assertThat(spec.model().dimension()).isEqualTo(650);
    double z = spec.privacy().noiseMultiplier();
    double eps =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(spec.roundCharge().event(z, 50)), 1e-5)
            .epsilon();
    assertThat(eps).isLessThanOrEqualTo(4.0).isGreaterThan(3.99);
  }

  @Test
  void everySpecInJobsFolder_isValid_andItsAccountantCanCharge() throws Exception {
    try (var specs = java.nio.file.Files.list(Path.of("jobs"))) {
      for (Path file : specs.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        JobSpec spec = JobSpecReader.read(file);
        // The round decider charges every round with Accountant.named(spec's accountant).
        assertThat(Accountant.named(spec.privacy().accountant()).name())
            .as(file.toString())
            .isEqualTo(spec.privacy().accountant());
      }
    }
  }

  @Test
  void accountant_isOneTheDeciderCanBuild_elseRefusedAtRead() {
    for (String name : Accountant.NAMES) {
      JobSpec spec =
          JobSpecReader.parse(
              "t",
              MINIMAL.replace("budgetEpsilon: 10", "budgetEpsilon: 10\n  accountant: " + name));
      assertThat(Accountant.named(spec.privacy().accountant()).name()).isEqualTo(name);
    }
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL.replace("budgetEpsilon: 10", "budgetEpsilon: 10\n  accountant: prv")))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("privacy.accountant");
  }

  @Test
  void adaptiveAdamExample_isValid_andPlansItsNoiseUnderPld_withTheCountCharged() {
    JobSpec spec = JobSpecReader.read(Path.of("jobs/digits-adaptive-adam.yaml"));
    assertThat(spec.privacy().accountant()).isEqualTo("pld");
    assertThat(spec.serverOptimizer().kind()).isEqualTo(ServerOptimizer.Kind.ADAM);
    double z = spec.privacy().noiseMultiplier();
    PrivacyLedger planned = PrivacyLedger.of(spec.roundCharge().event(z, 50));
    assertThat(Accountant.named("pld").epsilon(planned, 1e-5).epsilon())
        .isLessThanOrEqualTo(4.0)
        .isGreaterThan(3.99);
    // The count is charged with the sum: the charged noise multiplier is below the sum's.
    assertThat(spec.roundCharge().chargedNoiseMultiplier(z)).isLessThan(z);
  }

  @Test
  void minimalSpec_takesDocumentedDefaults() {
    JobSpec spec = JobSpecReader.parse("t", MINIMAL);
    assertThat(spec.rounds().timeoutMillis()).isEqualTo(2000);
    assertThat(spec.rounds().startGraceMillis()).isEqualTo(5000);
    assertThat(spec.privacy().sampling().mode()).isEqualTo("none");
    assertThat(spec.privacy().sampling().accountingRate()).isEqualTo(1.0);
    assertThat(spec.privacy().noise().source()).isEqualTo("secure");
    assertThat(spec.topics().updates()).isEqualTo("privagg.updates");
    assertThat(spec.topics().releases()).isEqualTo("privagg.releases");
    assertThat(spec.serverOptimizer()).isEqualTo(ServerOptimizer.sgd(1.0));
  }

  @Test
  void startAt_takesAnIsoInstant_quotedOrAsAYamlTimestamp_andRefusesAnythingElse() {
    long expected = java.time.Instant.parse("2030-06-01T09:30:00Z").toEpochMilli();
    for (String value : new String[] {"'2030-06-01T09:30:00Z'", "2030-06-01T09:30:00Z"}) {
      JobSpec spec =
          JobSpecReader.parse(
              "t",
              MINIMAL.replace("expectedClients: 4", "expectedClients: 4\n  startAt: " + value));
      assertThat(spec.rounds().startAtMillis()).as(value).isEqualTo(expected);
    }
    assertThat(JobSpecReader.parse("t", MINIMAL).rounds().startAtMillis()).isZero();
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL.replace(
                        "expectedClients: 4", "expectedClients: 4\n  startAt: tomorrow 9am")))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("rounds.startAt")
        .hasMessageContaining("2026-12-01T09:00:00Z")
        .hasMessageContaining("tomorrow 9am");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL.replace(
                        "expectedClients: 4",
                        "expectedClients: 4\n  startAt: '2230-06-01T09:30:00Z'")))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("rounds.startAt")
        .hasMessageContaining("2100-01-01");
  }

  @Test
  void releasesTopic_followsTheModelsTopic_andMustDifferFromTheOthers() {
    JobSpec spec = JobSpecReader.parse("t", MINIMAL + "topics: {models: team.models}\n");
    assertThat(spec.topics().releases()).isEqualTo("team.models.releases");
    assertThat(spec.topics().publicTopics()).containsExactly("team.models", "privagg.rounds");
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL + "topics: {releases: privagg.models}\n"))
        .hasMessageContaining("seven different topics");
  }

  @Test
  void shapesThatOverflowOrExceedTheModelCap_areRefused_notWrapped() {
    for (String shape :
        new String[] {"[65536, 65536, 65536, 65536]", "[2147483647, 2]", "[134217729]"}) {
      String big = MINIMAL.replace("shape: [3, 2]", "shape: " + shape);
      assertThatThrownBy(() -> JobSpecReader.parse("t", big))
          .as(shape)
          .isInstanceOf(SpecException.class)
          .hasMessageContaining("model.tensors[0].shape makes the model larger than 134217728");
    }
    String atCap = MINIMAL.replace("shape: [3, 2]", "shape: [134217726]");
    assertThat(JobSpecReader.parse("t", atCap).model().dimension()).isEqualTo(1 << 27);
  }

  @Test
  void capsOnTimeoutsClientsAndRecordSize_areChecked_withTheAllowedRange() {
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL.replace("timeout: 2s", "timeout: 9223372036854775807ms")))
        .hasMessageContaining("rounds.timeout must be in [100ms, 30 days]");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL.replace("timeout: 2s", "timeout: 99999999999999999999h")))
        .hasMessageContaining("rounds.timeout is too long to count in milliseconds");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL.replace("timeout: 2s", "timeout: 2s\n  maxClients: 0")))
        .hasMessageContaining("rounds.maxClients must be in [1, 134217728]");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL + "maxRecordBytes: 1024\nmaxMetadataBytes: 2000\n"))
        .hasMessageContaining("maxRecordBytes must be in [")
        .hasMessageContaining("the longest client id and the largest metadata");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL.replace("timeout: 2s", "timeout: 2s\n  maxClients: 3")))
        .hasMessageContaining("rounds.maxClients must be at least rounds.expectedClients (4)");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL
                        .replace("timeout: 2s", "timeout: 2s\n  maxClients: 10")
                        .replace(
                            "budgetEpsilon: 10",
                            "budgetEpsilon: 10\n  sampling: {mode: server-poisson, rate: 0.2}")))
        .hasMessageContaining(
            "rounds.maxClients must be at least rounds.expectedClients / privacy.sampling.rate (20");
    JobSpec spec = JobSpecReader.parse("t", MINIMAL);
    assertThat(spec.rounds().maxClients()).isEqualTo(1_000_000);
    assertThat(spec.maxClientIdBytes()).isEqualTo(256);
    assertThat(spec.maxMetadataBytes()).isEqualTo(4096);
    assertThat(spec.maxRecordBytes()).isEqualTo(8 * 8 + (1 << 20));
  }

  @Test
  void declaredClientSampling_needsRoomInEachRoundForTheDeclaredCohort() {
    // The ledger charges q = expectedCohort / populationSize; a round capped where the cohort can
    // reach keeps only its first arrivals, which is not the Poisson sample the charge assumes:
    // the cap must clear the mean 500 by 6 sd, sqrt(500) each, 635 clients.
    String declared =
        MINIMAL.replace(
            "budgetEpsilon: 10",
            "budgetEpsilon: 10\n  sampling: {mode: declared-client-poisson, populationSize: 10000,"
                + " expectedCohort: 500}");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", declared.replace("timeout: 2s", "timeout: 2s\n  maxClients: 634")))
        .isInstanceOf(SpecException.class)
        .hasMessage(
            "t: rounds.maxClients must be at least 635 (privacy.sampling.expectedCohort 500 plus 6"
                + " standard deviations: a Poisson cohort that large comes once in 1e9 rounds),"
                + " was 634");
    JobSpec spec =
        JobSpecReader.parse("t", declared.replace("timeout: 2s", "timeout: 2s\n  maxClients: 635"));
    assertThat(spec.roundCharge().samplingRate()).isEqualTo(0.05);
    assertThat(JobSpecReader.parse("t", declared).rounds().maxClients()).isEqualTo(1_000_000);
  }

  @Test
  void unknownKey_isRefused_namingItAndTheKnownKeys() {
    String typo = MINIMAL.replace("  clipNorm: 1.0", "  clipNorm: 1.0\n  clipnorm: 2.0");
    assertThatThrownBy(() -> JobSpecReader.parse("t", typo))
        .isInstanceOf(SpecException.class)
        .hasMessageStartingWith("t: privacy.clipnorm is not a known key")
        .hasMessageContaining("clipNorm");
  }

  @Test
  void misspeltRequiredKey_isRefused_namingItAndTheKeyItResembles() {
    String typo = MINIMAL.replace("  clipNorm: 1.0", "  clipnorm: 1.0");
    assertThatThrownBy(() -> JobSpecReader.parse("t", typo))
        .isInstanceOf(SpecException.class)
        .hasMessage("t: privacy.clipnorm is not a known key; did you mean privacy.clipNorm?");
    String nested = MINIMAL.replace("expectedClients: 4", "expectedClient: 4");
    assertThatThrownBy(() -> JobSpecReader.parse("t", nested))
        .hasMessage(
            "t: rounds.expectedClient is not a known key; did you mean rounds.expectedClients?");
    String section = MINIMAL.replace("privacy:", "Privacy:");
    assertThatThrownBy(() -> JobSpecReader.parse("t", section))
        .hasMessage("t: Privacy is not a known key; did you mean privacy?");
  }

  @Test
  void misspeltOptionalKey_isRefused_namingItAndTheKeyItResembles() {
    String typo = MINIMAL.replace("  delta: 1e-5", "  delta: 1e-5\n  acountant: basic");
    assertThatThrownBy(() -> JobSpecReader.parse("t", typo))
        .isInstanceOf(SpecException.class)
        .hasMessage("t: privacy.acountant is not a known key; did you mean privacy.accountant?");
    String top = MINIMAL + "serverLearningrate: 0.5\n";
    assertThatThrownBy(() -> JobSpecReader.parse("t", top))
        .hasMessage("t: serverLearningrate is not a known key; did you mean serverLearningRate?");
  }

  @Test
  void unknownKeyResemblingNothing_isRefused_listingTheKnownKeys() {
    String stray = MINIMAL.replace("  timeout: 2s", "  timeout: 2s\n  colour: red");
    assertThatThrownBy(() -> JobSpecReader.parse("t", stray))
        .hasMessageStartingWith("t: rounds.colour is not a known key; known keys here are [")
        .hasMessageContaining("expectedClients")
        .hasMessageEndingWith("(remove it or fix its spelling)");
  }

  @Test
  void missingRequiredKey_isRefused_withAHint() {
    String missing = MINIMAL.replace("  delta: 1e-5\n", "");
    assertThatThrownBy(() -> JobSpecReader.parse("t", missing))
        .isInstanceOf(SpecException.class)
        .hasMessageStartingWith("t: privacy.delta is required");
  }

  @Test
  void invalidValues_areRefused_namingKeyAndRule() {
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL.replace("clipNorm: 1.0", "clipNorm: -1")))
        .hasMessage("t: privacy.clipNorm must be > 0 and finite, was -1.0");
    assertThatThrownBy(() -> JobSpecReader.parse("t", MINIMAL.replace("delta: 1e-5", "delta: 1")))
        .hasMessage("t: privacy.delta must be in (0, 1), was 1.0");
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL.replace("timeout: 2s", "timeout: soon")))
        .hasMessageStartingWith("t: rounds.timeout must be a duration");
    assertThatThrownBy(() -> JobSpecReader.parse("t", MINIMAL.replace("shape: [2]", "shape: [0]")))
        .hasMessageStartingWith("t: model.tensors[1].shape entries must be whole numbers >= 1");
  }

  @Test
  void clipNormsTheFixedPointSumCannotHold_areRefused_withAdaptiveDefaultsKeptInRange() {
    // At C = 1e-300 the sum's scale 2^36 / C overflows: one clipped update would weigh ~10^8 C.
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL.replace("clipNorm: 1.0", "clipNorm: 1e-300")))
        .hasMessage(
            "t: privacy.clipNorm must be in [1.0E-100, 1.0E100] (the range the exact fixed-point"
                + " sum holds; rescale the model's updates instead), was 1.0E-300");
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL.replace("clipNorm: 1.0", "clipNorm: 1e101")))
        .hasMessageStartingWith("t: privacy.clipNorm must be in [1.0E-100, 1.0E100]");
    // Adaptive clipping may walk C down to minClipNorm: that bound must be summable too.
    assertThatThrownBy(
            () -> withPrivacy("adaptiveClipping: {targetQuantile: 0.5, minClipNorm: 1e-300}"))
        .hasMessageStartingWith(
            "t: privacy.adaptiveClipping.minClipNorm must be in [1.0E-100, 1.0E100]");
    // Defaults (C / 1000, C * 1000) are kept inside the range rather than refused.
    JobSpec small =
        JobSpecReader.parse(
            "t",
            MINIMAL
                .replace("clipNorm: 1.0", "clipNorm: 1e-99")
                .replace(
                    "budgetEpsilon: 10",
                    "budgetEpsilon: 10\n  adaptiveClipping: {targetQuantile: 0.5}"));
    assertThat(small.privacy().adaptiveClipping().minClipNorm()).isEqualTo(1e-100);
  }

  @Test
  void noiseStdThatOverflowsADouble_isRefusedAtRead_notWhenTheFirstRoundDrawsIt() {
    // z and C are each finite, but z * C is not: the combiner's first draw would throw, and the
    // job would restart into the same throw.
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL
                        .replace("clipNorm: 1.0", "clipNorm: 1e100")
                        .replace("noiseMultiplier: 1.0", "noiseMultiplier: 1e250")))
        .hasMessage(
            "t: privacy.noiseMultiplier gives a noise std of Infinity (noise multiplier 1.0E250"
                + " x clip norm 1.0E100), above 1.0E300, where the noisy sum would overflow a"
                + " double; lower the noise multiplier or the clip norm");
    // Under adaptive clipping the largest C the rounds may reach counts.
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    MINIMAL
                        .replace("noiseMultiplier: 1.0", "noiseMultiplier: 1e298")
                        .replace(
                            "budgetEpsilon: 10",
                            "budgetEpsilon: 10\n  adaptiveClipping: {targetQuantile: 0.5,"
                                + " countNoiseStd: 1e299}")))
        .hasMessageStartingWith(
            "t: privacy.noiseMultiplier gives a noise std of 9.999999999999999E300 (noise"
                + " multiplier 1.0E298 x clip norm 1000.0)");
    assertThat(
            JobSpecReader.parse(
                    "t", MINIMAL.replace("noiseMultiplier: 1.0", "noiseMultiplier: 1e300"))
                .privacy()
                .noiseMultiplier())
        .isEqualTo(1e300);
  }

  @Test
  void zeroNoise_needsAnInfiniteBudget() {
    String zero = MINIMAL.replace("noiseMultiplier: 1.0", "noiseMultiplier: 0");
    assertThatThrownBy(() -> JobSpecReader.parse("t", zero))
        .hasMessageContaining("privacy.noiseMultiplier is 0")
        .hasMessageContaining("budgetEpsilon: .inf");
    JobSpec baseline =
        JobSpecReader.parse("t", zero.replace("budgetEpsilon: 10", "budgetEpsilon: .inf"));
    assertThat(baseline.privacy().budgetEpsilon()).isInfinite();
  }

  @Test
  void noiseMultiplierAndTargetEpsilon_areMutuallyExclusive() {
    String both =
        MINIMAL.replace(
            "noiseMultiplier: 1.0",
            "noiseMultiplier: 1.0\n  targetEpsilon: 2\n  plannedRounds: 10");
    assertThatThrownBy(() -> JobSpecReader.parse("t", both))
        .hasMessageContaining("set exactly one of them");
  }

  @Test
  void earlyClose_plansForReplaceOne_soItNeedsTwiceTheNoise() {
    String planned =
        MINIMAL.replace("noiseMultiplier: 1.0", "targetEpsilon: 2\n  plannedRounds: 10");
    double addRemove = JobSpecReader.parse("t", planned).privacy().noiseMultiplier();
    double replaceOne =
        JobSpecReader.parse(
                "t",
                planned.replace("expectedClients: 4", "expectedClients: 4\n  closeEarly: true"))
            .privacy()
            .noiseMultiplier();
    assertThat(replaceOne)
        .isCloseTo(2 * addRemove, org.assertj.core.api.Assertions.within(1e-4 * replaceOne));
  }

  @Test
  void nextRoundAtEarlyClose_isRefusedForAPrivateRun_andChargedAsUnbounded() {
    String chained =
        MINIMAL.replace(
            "expectedClients: 4",
            "expectedClients: 4\n  closeEarly: true\n  nextRoundAtEarlyClose: true");
    assertThatThrownBy(() -> JobSpecReader.parse("t", chained))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("privacy.budgetEpsilon")
        .hasMessageContaining("must be .inf")
        .hasMessageContaining("remove rounds.nextRoundAtEarlyClose");
    String unbounded = chained.replace("budgetEpsilon: 10", "budgetEpsilon: .inf");
    String planned =
        unbounded.replace("noiseMultiplier: 1.0", "targetEpsilon: 2\n  plannedRounds: 10");
    assertThatThrownBy(() -> JobSpecReader.parse("t", planned))
        .hasMessageContaining("depends on the data");
    String alone =
        MINIMAL.replace("expectedClients: 4", "expectedClients: 4\n  nextRoundAtEarlyClose: true");
    assertThatThrownBy(() -> JobSpecReader.parse("t", alone))
        .hasMessageContaining("rounds.nextRoundAtEarlyClose")
        .hasMessageContaining("needs rounds.closeEarly: true");
    // Noise is still drawn at z = 1, but no bound holds: every round states epsilon Infinity.
    JobSpec spec = JobSpecReader.parse("t", unbounded);
    assertThat(spec.rounds().nextRoundAtEarlyClose()).isTrue();
    assertThat(spec.privacy().noiseMultiplier()).isEqualTo(1.0);
    assertThat(
            Accountant.named("rdp")
                .epsilon(PrivacyLedger.of(spec.roundCharge().event(1.0, 1)), 1e-5)
                .epsilon())
        .isInfinite();
  }

  @Test
  void adaptiveClipping_readsItsKeys_withThePapersDefaults_andChargesTheCountWithTheSum() {
    JobSpec spec =
        JobSpecReader.parse(
            "t",
            MINIMAL.replace(
                "budgetEpsilon: 10",
                "budgetEpsilon: 10\n  adaptiveClipping: {targetQuantile: 0.7}"));
    AdaptiveClipping adaptive = spec.privacy().adaptiveClipping();
    assertThat(adaptive.targetQuantile()).isEqualTo(0.7);
    assertThat(adaptive.learningRate()).isEqualTo(0.2);
    assertThat(adaptive.initialClipNorm()).isEqualTo(1.0);
    // Andrew et al. 2021 suggest sigma_b = m / 20; m = 4 here.
    assertThat(adaptive.countNoiseStd()).isEqualTo(0.2);
    assertThat(adaptive.minClipNorm()).isEqualTo(0.001);
    assertThat(adaptive.maxClipNorm()).isEqualTo(1000.0);
    assertThat(spec.roundCharge().event(1.0, 1).noiseMultiplier())
        .isEqualTo(1 / Math.sqrt(1 + 1 / (0.4 * 0.4)));
  }

  @Test
  void adaptiveClipping_badValues_areRefusedNamingTheKey() {
    assertThatThrownBy(() -> withPrivacy("adaptiveClipping: {targetQuantile: 1.0}"))
        .hasMessage("t: privacy.adaptiveClipping.targetQuantile must be in (0, 1), was 1.0");
    assertThatThrownBy(
            () -> withPrivacy("adaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 0}"))
        .hasMessageStartingWith("t: privacy.adaptiveClipping.countNoiseStd must be > 0 and finite");
    assertThatThrownBy(() -> withPrivacy("adaptiveClipping: {targetQuantile: 0.5, minClipNorm: 2}"))
        .hasMessage(
            "t: privacy.adaptiveClipping.minClipNorm must be in (0, privacy.clipNorm = 1.0], was"
                + " 2.0");
    assertThatThrownBy(
            () -> withPrivacy("clipping: per-layer\n  adaptiveClipping: {targetQuantile: 0.5}"))
        .hasMessageContaining("adaptiveClipping needs privacy.clipping: flat (was per-layer)");
  }

  @Test
  void serverOptimizer_readsTheServerSection_withReddiEtAlDefaults() {
    JobSpec adam = JobSpecReader.parse("t", MINIMAL + "server: {optimizer: adam}\n");
    assertThat(adam.serverOptimizer()).isEqualTo(ServerOptimizer.adam(0.01, 0.9, 0.99, 1e-3));
    JobSpec avgm =
        JobSpecReader.parse(
            "t", MINIMAL + "server: {optimizer: avgm, learningRate: 0.5, momentum: 0.8}\n");
    assertThat(avgm.serverOptimizer()).isEqualTo(ServerOptimizer.avgm(0.5, 0.8));
    JobSpec yogi =
        JobSpecReader.parse(
            "t", MINIMAL + "server: {optimizer: yogi, learningRate: 0.02, tau: 0.01}\n");
    assertThat(yogi.serverOptimizer()).isEqualTo(ServerOptimizer.yogi(0.02, 0.9, 0.99, 0.01));
  }

  @Test
  void serverOptimizer_mistakes_areRefusedNamingTheKeyAndTheFix() {
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL + "serverLearningRate: 2\nserver: {optimizer: adam}\n"))
        .hasMessage(
            "t: serverLearningRate and server are both set: move the rate to server.learningRate");
    assertThatThrownBy(() -> JobSpecReader.parse("t", MINIMAL + "server: {optimizer: adagrad}\n"))
        .hasMessageStartingWith("t: server.optimizer must be one of");
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL + "server: {optimizer: adam, beta1: 1}\n"))
        .hasMessage("t: server.beta1 must be in [0, 1), was 1.0");
    // A key of another optimizer is a mistake, not silently ignored.
    assertThatThrownBy(
            () -> JobSpecReader.parse("t", MINIMAL + "server: {optimizer: adam, momentum: 0.9}\n"))
        .hasMessageStartingWith("t: server.momentum is not a known key");
  }

  // Secure aggregation (docs/secure-aggregation.md, The job spec).

  /** The noisy count a secure round is unmasked behind, as small as the default rates allow. */
  private static final String GATE = "minimumCohort: {count: 4.36, noiseStd: 0.05}";

  /** MINIMAL with a cohort above the smallest roster the default rates give a graph (5). */
  private static final String SECURE_MINIMAL =
      MINIMAL.replace("expectedClients: 4", "expectedClients: 6");

  private static final String GATED =
      SECURE_MINIMAL.replace("expectedClients: 6", "expectedClients: 6\n  " + GATE);

  private static JobSpec secure(String aggregation) {
    return JobSpecReader.parse("t", GATED + "aggregation: {mode: secure" + aggregation + "}\n");
  }

  /** A secure spec whose gate's count fits rates where the smallest roster is larger. */
  private static JobSpec secureGated(String aggregation, double count) {
    return JobSpecReader.parse(
        "t",
        SECURE_MINIMAL.replace(
                "expectedClients: 6",
                "expectedClients: 6\n  minimumCohort: {count: " + count + ", noiseStd: 0.05}")
            + "aggregation: {mode: secure"
            + aggregation
            + "}\n");
  }

  private static JobSpec secureWith(String privacyLines, String roundsLines, String topLevel) {
    return JobSpecReader.parse(
        "t",
        SECURE_MINIMAL
                .replace("budgetEpsilon: 10", "budgetEpsilon: 10" + privacyLines)
                .replace(
                    "expectedClients: 6",
                    "expectedClients: 6"
                        + (roundsLines.contains("minimumCohort") ? "" : "\n  " + GATE)
                        + roundsLines)
            + topLevel
            + "aggregation: {mode: secure}\n");
  }

  @Test
  void aggregation_isPlaintextByDefault_andWhenSaidSo() {
    for (String spec : new String[] {MINIMAL, MINIMAL + "aggregation: {mode: plaintext}\n"}) {
      JobSpec parsed = JobSpecReader.parse("t", spec);

      assertThat(parsed.aggregation()).isEqualTo(JobSpec.Aggregation.PLAINTEXT);
      assertThat(parsed.secureAggregation()).isFalse();
      assertThat(parsed.maxSecureRecordBytes()).isZero();
      assertThat(parsed.topics().secure()).isEqualTo("privagg.secure");
    }
    assertThatThrownBy(() -> JobSpecReader.parse("t", MINIMAL + "aggregation: {mode: masked}\n"))
        .hasMessageContaining("aggregation.mode must be one of [plaintext, secure], was 'masked'");
  }

  @Test
  void secureAggregation_takesTheDocumentedDefaults_sixthPhasesAndRatesOfOneTenth() {
    JobSpec spec = secure("");

    assertThat(spec.secureAggregation()).isTrue();
    JobSpec.Aggregation a = spec.aggregation();
    assertThat(a.mode()).isEqualTo("secure");
    assertThat(a.maxDropoutRate()).isEqualTo(0.1);
    assertThat(a.adversarialClientRate()).isEqualTo(0.1);
    // rounds.timeout 2s: each of the first five phases a sixth, unmasking the rest.
    assertThat(a.advertiseMillis()).isEqualTo(333);
    assertThat(a.shareMillis()).isEqualTo(333);
    assertThat(a.confirmMillis()).isEqualTo(333);
    assertThat(a.maskedInputMillis()).isEqualTo(333);
    assertThat(a.consistencyMillis()).isEqualTo(333);
    assertThat(spec.maxSecureRecordBytes())
        .isEqualTo((1 << 20) + JobSpec.SECURE_ROSTER_ENTRY_BYTES * spec.rounds().maxClients());
  }

  @Test
  void secureAggregation_readsDeclaredRatesAndPhases_defaultingTheOnesLeftOut() {
    JobSpec spec =
        secureGated(
            ", maxDropoutRate: 0.3, adversarialClientRate: 0.05,"
                + " phases: {advertise: 300ms, confirm: 100ms, maskedInput: 1s, consistency: 50ms}",
            10.5);

    JobSpec.Aggregation a = spec.aggregation();
    assertThat(a.maxDropoutRate()).isEqualTo(0.3);
    assertThat(a.adversarialClientRate()).isEqualTo(0.05);
    assertThat(a.advertiseMillis()).isEqualTo(300);
    assertThat(a.shareMillis()).isEqualTo(333);
    assertThat(a.confirmMillis()).isEqualTo(100);
    assertThat(a.maskedInputMillis()).isEqualTo(1000);
    assertThat(a.consistencyMillis()).isEqualTo(50);
  }

  @Test
  void ratesOutOfRangeOrNaN_areRefused_namingTheRate() {
    for (String rate : new String[] {"1.0", "-0.1", "NaN", ".inf"}) {
      assertThatThrownBy(() -> secure(", maxDropoutRate: " + rate))
          .as(rate)
          .isInstanceOf(SpecException.class)
          .hasMessageStartingWith("t: aggregation.maxDropoutRate must be in [0, 1), was ");
      assertThatThrownBy(() -> secure(", adversarialClientRate: " + rate))
          .as(rate)
          .isInstanceOf(SpecException.class)
          .hasMessageStartingWith("t: aggregation.adversarialClientRate must be in [0, 1), was ");
    }
    assertThatThrownBy(() -> secure(", maxDropoutRate: NaN"))
        .hasMessage("t: aggregation.maxDropoutRate must be in [0, 1), was NaN");
  }

  @Test
  void ratesThatLeaveNoThreshold_areRefused_forTheSpecsAdversary() {
    // The default, a semi-malicious server: t above (1 + a) k / 2 and below (1 - a - d) k.
    assertThatThrownBy(() -> secureGated(", maxDropoutRate: 0.3, adversarialClientRate: 0.11", 5))
        .isInstanceOf(SpecException.class)
        .hasMessage(
            "t: aggregation.adversarialClientRate 3 * adversarialClientRate + 2 * maxDropoutRate"
                + " must be <= 0.9 against a semi-malicious server (t above (1 + a) k / 2 and"
                + " below (1 - a - d) k), was 3 * 0.11 + 2 * 0.3");
    // At these rates the smallest roster with a graph is 41: the gate's count must be 40.36 or
    // more.
    assertThat(
            secureGated(", maxDropoutRate: 0.3, adversarialClientRate: 0.1", 40.5)
                .aggregation()
                .adversary())
        .isEqualTo("semi-malicious-server");
    // An honest-but-curious server: t above a k only.
    String curious = ", adversary: curious-server";
    // At these rates the smallest roster with a graph is 21: the gate's count must be 20.71 or
    // more.
    assertThatThrownBy(() -> secure(curious + ", maxDropoutRate: 0.5, adversarialClientRate: 0.21"))
        .isInstanceOf(SpecException.class)
        .hasMessage(
            "t: aggregation.adversarialClientRate 2 * adversarialClientRate + maxDropoutRate must"
                + " be <= 0.9 against a curious server (t above a k and below (1 - a - d) k), was"
                + " 2 * 0.21 + 0.5");
    assertThat(
            JobSpecReader.parse(
                    "t",
                    MINIMAL.replace(
                            "expectedClients: 4",
                            "expectedClients: 4\n  minimumCohort: {count: 21, noiseStd: 0.1}")
                        + "aggregation: {mode: secure"
                        + curious
                        + ", maxDropoutRate: 0.5, adversarialClientRate: 0.2}\n")
                .secureAggregation())
        .isTrue();
    assertThatThrownBy(() -> secure(", adversary: malicious"))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("aggregation.adversary");
  }

  @Test
  void phasesThatLeaveNoTimeToUnmask_orTakeNoTime_areRefused_namingTheTimeout() {
    assertThatThrownBy(
            () ->
                secure(
                    ", phases: {advertise: 1s, share: 300ms, confirm: 100ms, maskedInput: 500ms,"
                        + " consistency: 100ms}"))
        .isInstanceOf(SpecException.class)
        .hasMessage(
            "t: aggregation.phases advertise, share, confirm, maskedInput and consistency must each"
                + " be > 0 and leave time for the unmask phase within rounds.timeout (2000 ms),"
                + " were [1000, 300, 100, 500, 100] ms (a phase not given takes a sixth of the"
                + " timeout)");
    assertThatThrownBy(() -> secure(", phases: {share: 0ms}"))
        .hasMessageContaining(
            "aggregation.phases advertise, share, confirm, maskedInput and consistency must each"
                + " be > 0")
        .hasMessageContaining("were [333, 0, 333, 333, 333] ms");
    assertThatThrownBy(() -> secure(", phases: {confirm: 0ms}"))
        .hasMessageContaining("were [333, 333, 0, 333, 333] ms");
    assertThatThrownBy(() -> secure(", phases: {consistency: 0ms}"))
        .hasMessageContaining("were [333, 333, 333, 333, 0] ms");
    assertThatThrownBy(() -> secure(", phases: {advertise: 5s}"))
        .hasMessageContaining("were [5000, 333, 333, 333, 333] ms");
    assertThatThrownBy(() -> secure(", phases: {advertise: soon}"))
        .hasMessageContaining("aggregation.phases.advertise must be a duration");
    assertThat(
            secure(
                ", phases: {advertise: 1s, share: 299ms, confirm: 100ms, maskedInput: 500ms,"
                    + " consistency: 100ms}"))
        .as("1 ms left to unmask is enough for the spec")
        .isNotNull();
  }

  @Test
  void secureAggregation_needsANoisyCountGate_largeEnoughThatRostersTooSmallForAGraphStayBelowIt() {
    String secureOnly = SECURE_MINIMAL + "aggregation: {mode: secure}\n";
    // Absent: refused, with a gate that fits rounds.expectedClients (6) to paste.
    assertThatThrownBy(() -> JobSpecReader.parse("t", secureOnly))
        .isInstanceOf(SpecException.class)
        .hasMessageStartingWith("t: aggregation.mode secure needs rounds.minimumCohort")
        .hasMessageContaining(
            "the size from which on every roster gets a graph at these rates, 5, less one) + 7.05")
        .hasMessageContaining("e.g. rounds.minimumCohort: {count: 5.34, noiseStd: 0.19}")
        .hasMessageEndingWith("was absent");
    // 4 + 7.045 * 1.0 needs a count of 11.05.
    assertThatThrownBy(() -> secureWith("", "\n  minimumCohort: {count: 11, noiseStd: 1.0}", ""))
        .hasMessageContaining("e.g. rounds.minimumCohort: {count: 11.05, noiseStd: 1}")
        .hasMessageEndingWith("was {count: 11, noiseStd: 1}");
    JobSpec gated = secureWith("", "\n  minimumCohort: {count: 12, noiseStd: 1.0}", "");
    assertThat(gated.rounds().minimumCohort()).isEqualTo(12.0);
    // Charged with the sum, as in plaintext mode.
    assertThat(gated.roundCharge().countNoiseStd()).isEqualTo(1.0);
    // beta: the gate's tail at (12 - 4) / 1 noise stds plus the graph's 2^-40.
    assertThat(gated.secureFailureProbabilityPerRound())
        .isCloseTo(6.22e-16 + Math.pow(2, -40), org.assertj.core.data.Percentage.withPercentage(1));
  }

  @Test
  void secureAggregation_refusesWhatTheJobCannotDoWithoutSeeingUpdates() {
    assertThatThrownBy(() -> secureWith("", "\n  closeEarly: true", ""))
        .isInstanceOf(SpecException.class)
        .hasMessageStartingWith(
            "t: aggregation.mode secure cannot be combined with rounds.closeEarly");
    assertThatThrownBy(() -> secureWith("\n  adaptiveClipping: {targetQuantile: 0.5}", "", ""))
        .hasMessage(
            "t: aggregation.mode secure needs privacy.clipping: flat with a fixed"
                + " privacy.clipNorm (clients clip themselves, to the C the job announces), was"
                + " flat with adaptive clipping");
    assertThatThrownBy(() -> secureWith("\n  clipping: per-layer", "", ""))
        .hasMessage(
            "t: aggregation.mode secure needs privacy.clipping: flat with a fixed"
                + " privacy.clipNorm (clients clip themselves, to the C the job announces), was"
                + " per-layer");
  }

  @Test
  void maxRecordBytesTooSmallForAMaskedInput_isRefusedForASecureJobOnly() {
    // Model of 8 coordinates: a masked input takes 64 bytes, plus 1024 and the longest id (16).
    String small = "maxClientIdBytes: 16\nmaxMetadataBytes: 0\nmaxRecordBytes: 1000\n";
    assertThat(JobSpecReader.parse("t", MINIMAL + small).maxRecordBytes()).isEqualTo(1000);

    assertThatThrownBy(() -> secureWith("", "", small))
        .isInstanceOf(SpecException.class)
        .hasMessage(
            "t: maxRecordBytes must be at least 1104 under aggregation.mode: secure (a masked"
                + " input is 8 bytes per model coordinate), was 1000");
    assertThat(
            secureWith("", "", small.replace("maxRecordBytes: 1000", "maxRecordBytes: 1104"))
                .maxRecordBytes())
        .isEqualTo(1104);
  }

  @Test
  void aRosterLargerThanTheGraphFinderTakes_isRefused_throughMaxClients() {
    // FCP's parameter finder covers up to 1,000,000 clients; a larger roster would fall back to the
    // complete graph, where every client must share with every other (and no ShareKeys fits a
    // record). The roster's record would fit up to about 20 million.
    long recordBound = (JobSpec.MAX_RECORD_BYTES - (1 << 20)) / JobSpec.SECURE_ROSTER_ENTRY_BYTES;
    assertThat(recordBound).isGreaterThan(GraphParameters.MAX_NUMBER_OF_CLIENTS);

    for (long tooMany : new long[] {GraphParameters.MAX_NUMBER_OF_CLIENTS + 1L, recordBound + 1}) {
      assertThatThrownBy(() -> secureWith("", "\n  maxClients: " + tooMany, ""))
          .isInstanceOf(SpecException.class)
          .hasMessage(
              "t: aggregation.mode secure needs rounds.maxClients <= 1000000 (SecAgg+'s"
                  + " neighbour graph is chosen for at most that many clients, and a round's"
                  + " roster is one record on the secure topic), was "
                  + tooMany);
    }
    JobSpec largest =
        secureWith("", "\n  maxClients: " + GraphParameters.MAX_NUMBER_OF_CLIENTS, "");
    assertThat(largest.maxSecureRecordBytes()).isLessThanOrEqualTo(JobSpec.MAX_RECORD_BYTES);
    assertThat(
            JobSpecReader.parse(
                "t", MINIMAL.replace("timeout: 2s", "timeout: 2s\n  maxClients: 2000000")))
        .as("a plaintext job is not bound by it")
        .isNotNull();
  }

  @Test
  void theSecureTopic_mustDifferFromEveryOtherTopic() {
    for (String other :
        new String[] {
          "privagg.updates",
          "privagg.models",
          "privagg.rounds",
          "privagg.ledger",
          "privagg.rejects",
          "privagg.releases"
        }) {
      assertThatThrownBy(() -> secureWith("", "", "topics: {secure: " + other + "}\n"))
          .as(other)
          .isInstanceOf(SpecException.class)
          .hasMessageContaining("must name seven different topics");
    }
    assertThat(secureWith("", "", "topics: {secure: team.secure}\n").topics().secure())
        .isEqualTo("team.secure");
  }

  @Test
  void unknownAggregationKeys_areRefused_inEitherMode() {
    assertThatThrownBy(() -> secure(", dropoutRate: 0.2"))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("aggregation.dropoutRate");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t", MINIMAL + "aggregation: {mode: plaintext, maxDropoutRate: 0.2}\n"))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("aggregation.maxDropoutRate");
    assertThatThrownBy(() -> secure(", phases: {unmask: 1s}"))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("aggregation.phases.unmask");
  }

  private static JobSpec withPrivacy(String lines) {
    return JobSpecReader.parse(
        "t", MINIMAL.replace("budgetEpsilon: 10", "budgetEpsilon: 10\n  " + lines));
  }
}
