package dev.privagg.bench;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The benchmark over a grid of settings: plans every setting first, then runs them in order. */
public final class Bench {
  private Bench() {}

  /** Runs {@code settings} against the broker at {@code bootstrapServers}; writes the report. */
  public static List<BenchResult> run(
      List<BenchSetting> settings,
      BenchPlan.Limits limits,
      String bootstrapServers,
      Path outDir,
      String jobHeap,
      List<String> jobJvmOptions,
      boolean profile,
      PrintWriter out)
      throws Exception {
    List<BenchPlan> plans = new ArrayList<>();
    for (BenchSetting setting : settings) {
      BenchPlan plan = BenchPlan.of(setting, BenchRunner.recordBytes(setting), limits);
      plans.add(plan);
      out.printf(
          "plan %s: %s%n",
          setting.name(),
          plan.skipped()
              ? "skipped, " + plan.skipReason()
              : String.format(
                  "%d warm-up + %d measured rounds, then %d live rounds",
                  plan.warmupRounds(), plan.measuredRounds(), plan.latencyRounds()));
    }
    out.flush();
    BenchRunner runner =
        new BenchRunner(
            new BenchRunner.Options(
                bootstrapServers, outDir.resolve("work"), jobHeap, jobJvmOptions, profile, out));
    List<BenchResult> results = new ArrayList<>();
    for (BenchPlan plan : plans) {
      results.add(plan.skipped() ? BenchResult.skipped(plan) : runOrReport(runner, plan, out));
      BenchReport.write(outDir, results); // partial results survive an interrupted grid
    }
    out.println();
    out.print(BenchReport.markdown(results));
    out.printf("wrote %s (bench.md, bench.csv, bench.png)%n", outDir);
    out.flush();
    return results;
  }

  /** A setting that fails is reported in the table with its error; the grid goes on. */
  private static BenchResult runOrReport(BenchRunner runner, BenchPlan plan, PrintWriter out) {
    try {
      return runner.run(plan);
    } catch (Exception e) {
      out.printf("%s failed: %s%n", plan.setting().name(), e);
      out.flush();
      return BenchResult.skipped(
          new BenchPlan(
              plan.setting(),
              plan.recordBytes(),
              plan.warmupRounds(),
              plan.measuredRounds(),
              plan.latencyRounds(),
              "failed: " + e.getMessage()));
    }
  }
}
