package dev.privagg.sim;

import dev.privagg.client.data.Datasets;
import dev.privagg.client.train.Model;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.Workload;
import dev.privagg.io.KafkaConnection;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.NoisePlanner;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Three ways to spend one (epsilon, delta) over the same rounds and cohort, through the real
 * pipeline:
 *
 * <ul>
 *   <li>{@code blt}: clients check in under the schema (b, k) and the job adds BLT-correlated noise
 *       planned for the whole run (one Gaussian mechanism over the planned rounds);
 *   <li>{@code independent-k}: the same check-ins, a fresh Gaussian each round, and nothing
 *       amplified. Each client contributes at most k times, so the run is k compositions of the
 *       Gaussian for any one client (add-remove adjacency: its updates enter at most k rounds, each
 *       of sensitivity C). Its noise multiplier is the smallest z with epsilon(k x Gaussian(z)) <=
 *       the target, planned here; the job, which knows nothing of the schema, charges every round
 *       and reports far more, so its spec has an infinite budget and the report states both.
 *   <li>{@code poisson}: DP-FedAvg with client-side Poisson sampling at q = m / clients
 *       (declared-client-poisson), the target epsilon over the rounds with amplification by
 *       sampling.
 *   <li>{@code bandmf}: amplified banded MF: the job puts the clients in b groups, samples the
 *       round's group at m b / N and adds noise correlated by a b-banded C; the spec plans b and z
 *       for the target.
 * </ul>
 */
public final class MechanismComparison {
  public static final List<String> NAMES = List.of("blt", "independent-k", "poisson", "bandmf");

  /** The accountant of every variant: the job spec's default, which the specs leave in place. */
  public static final String ACCOUNTANT = "rdp";

  private MechanismComparison() {}

  /**
   * One mechanism's simulation and its noise multiplier z (NaN until its spec planned it). {@code
   * epsilonBound} is the epsilon claimed for it: the job's own figure for blt and poisson (NaN
   * here: read from the run), the k-participation bound for independent-k. {@code roundFactor} and
   * {@code modelFactor} scale z C / m to the std of a round's fresh draw and of the noise on the
   * model after the last round: 1 and sqrt(n) for independent noise (n fresh draws add up), the
   * BLT's sensitivity and sensitivity x sqrt(max error) for BLT (Dvijotham et al. 2024; NaN when
   * unknown).
   */
  public record Mechanism(
      String name,
      SimulationConfig config,
      double noiseMultiplier,
      double epsilonBound,
      double roundFactor,
      double modelFactor) {
    /**
     * Per coordinate, the std of the fresh Gaussian a round draws for the average update: z
     * roundFactor C / m. For independent noise it is what a round adds; BLT mixes it with earlier
     * rounds' draws.
     */
    public double noiseStdPerRound() {
      return noiseMultiplier * roundFactor * config.clipNorm() / config.expectedClients();
    }

    /**
     * Per coordinate, the std of the noise on the model after the last round: server learning rate
     * x z modelFactor C / m, when the server's steps are linear in the noisy average (FedAvg, and
     * FedAvgM, whose modelFactor sums through the momentum); NaN with Adam or Yogi.
     */
    public double modelNoiseStd() {
      if (Double.isNaN(config.serverOptimizer().linearMomentum())) {
        return Double.NaN;
      }
      return config.serverOptimizer().learningRate()
          * noiseMultiplier
          * modelFactor
          * config.clipNorm()
          / config.expectedClients();
    }

    /** This mechanism with noise multiplier {@code z}. */
    Mechanism withNoiseMultiplier(double z) {
      return new Mechanism(name, config, z, epsilonBound, roundFactor, modelFactor);
    }
  }

  /**
   * The most rounds one client can contribute to: k, and no more than ceil(n / b), as any two of
   * its rounds are at least b apart.
   */
  public static int effectiveMaxParticipations(SimulationConfig c) {
    long byRounds = (c.rounds() + (long) c.minSeparation() - 1) / c.minSeparation();
    return (int) Math.min(c.maxParticipations(), byRounds);
  }

  /**
   * The mechanism {@code name} on {@code base}, which gives the data, model, clients, cohort m,
   * rounds, target epsilon, delta, participation schema (b, k) and training; {@code base}'s own
   * sampling and mechanism are replaced. {@code bands} fixes bandmf's band count (0: planned).
   */
  public static Mechanism of(String name, SimulationConfig base, int bands) {
    SimulationConfig.Builder b = base.toBuilder();
    // Independent noise reaches the last model through the last row of the workload A: sqrt(n)
    // for the prefix sums (server SGD), more through a momentum buffer.
    double independentModelFactor =
        Math.sqrt(BandedToeplitz.identity().loss(base.rounds(), ErrorKind.MAX, workload(base)));
    return switch (name) {
      case "blt" ->
          new Mechanism(
              name,
              b.sampling("checkin").mechanism("blt").build(),
              Double.NaN,
              Double.NaN,
              Double.NaN,
              Double.NaN);
      case "independent-k" -> {
        Accountant accountant = Accountant.named(ACCOUNTANT);
        int k = effectiveMaxParticipations(base);
        double z =
            new NoisePlanner(accountant)
                .plan(base.targetEpsilon(), base.delta(), k, 1.0)
                .noiseMultiplier();
        double bound =
            accountant
                .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(z, k)), base.delta())
                .epsilon();
        yield new Mechanism(
            name,
            b.sampling("checkin").mechanism("independent").noiseMultiplier(z).build(),
            z,
            bound,
            1,
            independentModelFactor);
      }
      case "poisson" ->
          new Mechanism(
              name,
              b.sampling("client")
                  .mechanism("independent")
                  .minSeparation(1)
                  .maxParticipations(0)
                  .build(),
              Double.NaN,
              Double.NaN,
              1,
              independentModelFactor);
      case "bandmf" ->
          new Mechanism(
              name,
              b.sampling("server")
                  .mechanism("bandmf")
                  .bands(bands)
                  .minSeparation(1)
                  .maxParticipations(0)
                  .build(),
              Double.NaN,
              Double.NaN,
              1,
              Double.NaN);
      default ->
          throw new IllegalArgumentException(
              "mechanism must be one of " + String.join(", ", NAMES) + ", was '" + name + "'");
    };
  }

  /**
   * Each mechanism's job spec, in order, so that an unreachable target or a spec the job refuses
   * fails before any run starts; each gets the noise multiplier its spec plans (independent-k's
   * own, given in its spec).
   */
  public static List<Mechanism> plan(List<Mechanism> mechanisms, List<JobSpec> specsOut) {
    SimulationConfig first = mechanisms.get(0).config();
    Datasets.Split data = Datasets.load(first.dataset(), first.seed());
    Model model =
        Model.named(
            first.model(), data.train().numFeatures(), data.train().numClasses(), first.hidden());
    List<Mechanism> planned = new ArrayList<>();
    for (Mechanism m : mechanisms) {
      JobSpec spec;
      try {
        spec = JobSpecReader.parse(m.name(), Simulation.specYaml(m.config(), model));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(m.name() + ": " + e.getMessage(), e);
      }
      specsOut.add(spec);
      Mechanism withZ = m.withNoiseMultiplier(spec.privacy().noiseMultiplier());
      JobSpec.Correlated blt = spec.privacy().correlated();
      if (blt != null && blt.banded()) {
        // Round t's noise is z C (C^-1 Z)_t; the model after round n carries the workload's last
        // row of it, z C sqrt(max error) (unit-norm coefficients: sensitivity 1 per participation).
        double maxError =
            blt.bandedStrategy()
                .loss((int) spec.privacy().plannedRounds(), ErrorKind.MAX, workload(m.config()));
        withZ =
            new Mechanism(
                withZ.name(),
                withZ.config(),
                withZ.noiseMultiplier(),
                withZ.epsilonBound(),
                1,
                Math.sqrt(maxError));
      } else if (blt != null) {
        // Round t's noise is z C sensitivity (C^-1 Z)_t: each draw has std z C sensitivity, and
        // the model after round n carries the prefix sum's, z C sensitivity sqrt(max error).
        BltPlan plan = BltPlan.of(blt.schema(spec.privacy().plannedRounds()), blt.strategy());
        withZ =
            new Mechanism(
                withZ.name(),
                withZ.config(),
                withZ.noiseMultiplier(),
                withZ.epsilonBound(),
                blt.plannedSensitivity(),
                // A BLT's error is known for the prefix sums only.
                workload(m.config()).momentum() == 0
                    ? blt.plannedSensitivity() * Math.sqrt(plan.maxError())
                    : Double.NaN);
      }
      planned.add(withZ);
    }
    return planned;
  }

  /** The models' workload under the config's server optimizer (its momentum, if linear). */
  private static Workload workload(SimulationConfig config) {
    return Workload.ofServerMomentum(config.serverOptimizer().linearMomentum());
  }

  /** Runs every mechanism for {@code seeds} seeds from each config's seed on. */
  public static List<Evaluation.Run> run(
      List<Mechanism> mechanisms,
      int seeds,
      KafkaConnection kafka,
      Consumer<Simulation.RoundResult> roundProgress,
      Consumer<Evaluation.Run> progress)
      throws Exception {
    List<Evaluation.Run> runs = new ArrayList<>();
    for (Mechanism m : mechanisms) {
      for (int s = 0; s < seeds; s++) {
        SimulationConfig config = m.config().toBuilder().seed(m.config().seed() + s).build();
        Evaluation.Run run =
            Evaluation.run(m.name(), config, Simulation.run(config, kafka, roundProgress));
        runs.add(run);
        progress.accept(run);
      }
    }
    return runs;
  }

  /**
   * One mechanism's outcome over its seeds. {@code epsilon} is the epsilon claimed for it (the
   * k-participation bound for independent-k, else the job's), {@code jobEpsilon} what the job
   * reported after the last round; updates and rejects are means over seeds.
   */
  public record Row(
      String mechanism,
      String sampling,
      double noiseMultiplier,
      double noiseStdPerRound,
      double modelNoiseStd,
      double epsilon,
      double jobEpsilon,
      int seeds,
      double accuracy,
      double accuracyCi95Low,
      double accuracyCi95High,
      String accuracyInterval,
      double updatesSent,
      double updatesUsed,
      double participationRejects) {}

  /** A row per mechanism, in the order of {@code mechanisms}. */
  public static List<Row> rows(
      List<Mechanism> mechanisms, List<Evaluation.Setting> settings, List<Evaluation.Run> runs) {
    List<Row> rows = new ArrayList<>();
    for (Mechanism m : mechanisms) {
      Evaluation.Setting s =
          settings.stream().filter(x -> x.variant().equals(m.name())).findFirst().orElseThrow();
      List<Evaluation.Run> own = runs.stream().filter(r -> r.variant().equals(m.name())).toList();
      double jobEpsilon = own.stream().mapToDouble(Evaluation.Run::epsilon).max().orElseThrow();
      rows.add(
          new Row(
              m.name(),
              m.config().sampling(),
              m.noiseMultiplier(),
              m.noiseStdPerRound(),
              m.modelNoiseStd(),
              Double.isNaN(m.epsilonBound()) ? jobEpsilon : m.epsilonBound(),
              jobEpsilon,
              s.seeds(),
              s.accuracy(),
              s.accuracyLow(),
              s.accuracyHigh(),
              s.accuracyInterval(),
              own.stream().mapToLong(Evaluation.Run::updatesSent).average().orElseThrow(),
              own.stream().mapToLong(Evaluation.Run::updatesUsed).average().orElseThrow(),
              own.stream()
                  .mapToLong(Evaluation.Run::participationRejects)
                  .average()
                  .orElseThrow()));
    }
    return rows;
  }
}
