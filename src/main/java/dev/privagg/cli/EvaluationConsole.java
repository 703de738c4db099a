package dev.privagg.cli;

import dev.privagg.sim.Central;
import dev.privagg.sim.Evaluation;
import dev.privagg.sim.Simulation;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * What {@code evaluate} prints in both modes: central epochs and runs as they finish (a line for
 * people, or a JSON line each), rounds now and then for people, and the closing lines.
 */
final class EvaluationConsole {
  private final PrintWriter out;
  private final boolean json;
  private final int runs;
  private int runsDone;

  /**
   * @param runs how many runs the evaluation makes, for "[done/runs]"
   */
  EvaluationConsole(PrintWriter out, boolean json, int runs) {
    this.out = out;
    this.json = json;
    this.runs = runs;
  }

  void centralEpoch(long seed, Central.Epoch e) {
    if (json) {
      Output.line(
          out,
          Output.fields(
              "type", "centralEpoch",
              "seed", seed,
              "epoch", e.epoch(),
              "accuracy", Output.number(e.accuracy()),
              "millis", e.millis()));
    } else {
      out.printf(
              "central, seed %d: epoch %d accuracy %.4f (%.1f s)%n",
              seed, e.epoch(), e.accuracy(), e.millis() / 1000.0)
          .flush();
    }
  }

  /** Every 25th round and every late one, for people; a run's JSON line carries what it came to. */
  void round(Simulation.RoundResult r) {
    if (!json && (r.round() % 25 == 0 || r.sentAfterDeadline())) {
      RoundProgress.print(out, r);
    }
  }

  void run(Evaluation.Run r) {
    runsDone++;
    if (json) {
      Output.line(
          out,
          Output.fields(
              "type", "run",
              "run", runsDone,
              "runs", runs,
              "variant", r.variant(),
              "cohort", r.cohort(),
              "noiseMultiplier", r.noiseMultiplier(),
              "seed", r.seed(),
              "epsilon", Output.number(r.epsilon()),
              "accuracy", Output.number(r.accuracy()),
              "membershipAuc", Output.number(r.auc()),
              "testSize", r.testSize(),
              "roundsSentAfterDeadline", r.roundsSentAfterDeadline(),
              "finalClipNorm", Output.number(r.finalClipNorm()),
              "updatesSent", r.updatesSent(),
              "updatesUsed", r.updatesUsed(),
              "participationRejects", r.participationRejects(),
              "epsilonHat", Output.number(r.epsilonHat()),
              "oneRunFdpEpsilon", Output.number(r.oneRunFdpEpsilon())));
      return;
    }
    out.printf(
        "[%d/%d] %s, cohort %d, z %s, seed %d: epsilon %s%s, accuracy %.4f, AUC %.3f%s%n",
        runsDone,
        runs,
        r.variant(),
        r.cohort(),
        Text.number(r.noiseMultiplier()),
        r.seed(),
        Text.number(r.epsilon()),
        Double.isNaN(r.epsilonHat())
            ? ""
            : " (epsilon-hat "
                + Text.number(r.epsilonHat())
                + ", f-DP one-run bound "
                + Text.number(r.oneRunFdpEpsilon())
                + ")",
        r.accuracy(),
        r.auc(),
        r.roundsSentAfterDeadline() == 0
            ? ""
            : ", " + r.roundsSentAfterDeadline() + " rounds sent after the deadline");
    out.flush();
  }

  /** A setting's mean epsilon-hat for a table cell; "-" without canaries. */
  static String epsilonHat(Evaluation.Setting s) {
    return Double.isNaN(s.epsilonHat()) ? "-" : String.format(Locale.ROOT, "%.3g", s.epsilonHat());
  }

  /**
   * The lines after a table: with canaries each setting's audit, then how the accuracy intervals
   * were made, and where the files are.
   */
  void closing(List<Evaluation.Setting> settings, Path outputs) {
    for (Evaluation.Setting s : settings) {
      if (!Double.isNaN(s.epsilonHat())) {
        out.printf(
            "audit of %s, z %s: epsilon %s, epsilon-hat %s, f-DP one-run lower bound %s (mean over"
                + " %d seed%s)%n",
            s.variant(),
            Text.number(s.noiseMultiplier()),
            Text.number(s.epsilon()),
            Text.number(s.epsilonHat()),
            Text.number(s.oneRunFdpEpsilon()),
            s.seeds(),
            s.seeds() == 1 ? "" : "s");
      }
    }
    out.printf("accuracy intervals: %s%n", settings.get(0).accuracyInterval());
    out.printf("outputs: %s%n", outputs.toAbsolutePath());
    out.flush();
  }
}
