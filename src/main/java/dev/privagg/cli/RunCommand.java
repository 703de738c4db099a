package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.job.PrivaggJob;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg run}: the job on an embedded Flink MiniCluster against a given broker. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Run the aggregation job on a local Flink MiniCluster until stopped (Ctrl-C).",
      "Validates every spec first, creates missing topics, then prints each job's plan."
    })
final class RunCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Option(
      names = "--spec",
      required = true,
      paramLabel = "FILE",
      description = "Job spec (YAML); repeat for several training jobs on the same topics.")
  List<Path> specs;

  @Option(
      names = "--bootstrap-servers",
      required = true,
      paramLabel = "HOST:PORT",
      description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @picocli.CommandLine.Mixin KafkaPropertiesOption kafkaProperties;

  @Option(
      names = "--parallelism",
      defaultValue = "1",
      description =
          "Flink parallelism (default 1). The updates source runs at most one reader per"
              + " partition of the updates topic; the rest of the job runs at this parallelism.")
  int parallelism;

  @Option(
      names = "--checkpoint-interval-ms",
      defaultValue = "1000",
      description =
          "Checkpoint interval; outputs become visible at each checkpoint (default 1000).")
  long checkpointIntervalMillis;

  @Option(
      names = "--state-dir",
      defaultValue = ".privagg/state",
      description =
          "Directory for the job's checkpoints, kept after the job stops (default .privagg/state).")
  java.nio.file.Path stateDir;

  @Option(
      names = "--update-partitions",
      defaultValue = "2",
      description = "Partitions of the updates topic when it is created (default 2).")
  int updatePartitions;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--parallelism", parallelism);
    flags.atLeastOne("--checkpoint-interval-ms", checkpointIntervalMillis);
    flags.atLeastOne("--update-partitions", updatePartitions);
    List<JobSpec> jobs = JobSpecReader.readAll(specs);
    var out = spec.commandLine().getOut();
    for (JobSpec job : jobs) {
      JobSpec.Privacy p = job.privacy();
      out.printf(
          "job %s: %d parameters, m=%d, round timeout %d ms, clipNorm %s, noise multiplier %s%s,"
              + " budget epsilon %s at delta %s (%s, sampling %s, %s)%n",
          job.jobId(),
          job.model().dimension(),
          job.rounds().expectedClients(),
          job.rounds().timeoutMillis(),
          Text.number(p.clipNorm()),
          Text.number(p.noiseMultiplier()),
          Double.isNaN(p.targetEpsilon())
              ? ""
              : " (planned for epsilon "
                  + Text.number(p.targetEpsilon())
                  + " over "
                  + p.plannedRounds()
                  + " rounds)",
          Text.number(p.budgetEpsilon()),
          Text.number(p.delta()),
          p.accountant(),
          p.sampling().mode(),
          job.roundCharge().adjacency());
      describeTraining(out, job);
    }
    List<String> created = PrivaggJob.prepareKafka(kafka(), jobs, updatePartitions);
    out.println(
        created.isEmpty()
            ? "topics exist: " + jobs.get(0).topics().all()
            : "created topics: " + created);
    PrivaggJob.SourcePlan sourcePlan =
        PrivaggJob.sourcePlan(kafka(), jobs.get(0).topics().updates(), parallelism);
    if (sourcePlan.parallelism() < parallelism) {
      out.println(sourcePlan.describe());
    }
    out.flush();
    StreamExecutionEnvironment env = PrivaggJob.localEnvironment(stateDir);
    out.println("checkpoints: " + stateDir.toAbsolutePath().resolve("checkpoints"));
    JobClient client =
        PrivaggJob.start(
            env,
            jobs,
            new PrivaggJob.Settings(
                kafka(), checkpointIntervalMillis, parallelism, System.currentTimeMillis()));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> client.cancel().join()));
    out.println("running as Flink job " + client.getJobID() + "; Ctrl-C stops it");
    out.flush();
    client.getJobExecutionResult().get();
    return 0;
  }

  /** Adaptive clipping and the server optimizer, when the spec sets them. */
  private static void describeTraining(java.io.PrintWriter out, JobSpec job) {
    AdaptiveClipping a = job.privacy().adaptiveClipping();
    if (a != null) {
      out.printf(
          "  adaptive clipping: C from %s toward the %s quantile of update norms (step %s, count"
              + " noise std %s, C in [%s, %s]); charged noise multiplier %s%n",
          Text.number(a.initialClipNorm()),
          Text.number(a.targetQuantile()),
          Text.number(a.learningRate()),
          Text.number(a.countNoiseStd()),
          Text.number(a.minClipNorm()),
          Text.number(a.maxClipNorm()),
          Text.number(job.roundCharge().chargedNoiseMultiplier(job.privacy().noiseMultiplier())));
    }
    ServerOptimizer o = job.serverOptimizer();
    out.printf(
        "  server optimizer: %s, learning rate %s%s%n",
        o.kind().specName(),
        Text.number(o.learningRate()),
        switch (o.kind()) {
          case SGD -> "";
          case AVGM -> ", momentum " + Text.number(o.beta1());
          case ADAM, YOGI ->
              ", beta1 "
                  + Text.number(o.beta1())
                  + ", beta2 "
                  + Text.number(o.beta2())
                  + ", tau "
                  + Text.number(o.tau());
        });
  }

  @Override
  public KafkaConnection kafka() {
    return kafkaProperties.connect(bootstrapServers);
  }

  @Override
  public String attempt() {
    return "start the job";
  }
}
