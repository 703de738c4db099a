package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.job.PrivaggJob;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.job.kafka.SourcePlan;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.sim.PersistentKafka;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import dev.privagg.statistics.Block;
import dev.privagg.statistics.StatisticsQuery;
import dev.privagg.status.StatusFollower;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code privagg run}: the job on an embedded Flink MiniCluster against a given broker, or against
 * an embedded broker whose data lives under the state directory.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Run the aggregation job on a local Flink MiniCluster until stopped (Ctrl-C).",
      "Validates every spec first, creates missing topics, then prints each job's plan.",
      "",
      "Without --bootstrap-servers it starts an embedded single-node Kafka broker on"
          + " localhost:9092 (--embedded-kafka-port) in this process, with its data in"
          + " DIR/kafka of --state-dir: a later run with the same --state-dir keeps the topics,"
          + " the models and the privacy ledger, so the spent budget carries over.",
      "The embedded broker is for trying privagg on one machine: it stops with this command."
          + " For clients on other machines, or a job that must outlive this terminal, run Kafka"
          + " and Flink as services (deploy/local/privagg-local start runs both on this machine)"
          + " and use privagg submit --bootstrap-servers."
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
      paramLabel = "HOST:PORT",
      description =
          "Kafka bootstrap servers. Without it, an embedded broker runs in this process (see"
              + " --embedded-kafka-port).")
  String bootstrapServers;

  /** Where the embedded broker listens unless told otherwise: where clients look by default. */
  static final int DEFAULT_EMBEDDED_KAFKA_PORT = 9092;

  @Option(
      names = "--embedded-kafka-port",
      paramLabel = "PORT",
      description =
          "Port of the embedded Kafka broker on localhost, without --bootstrap-servers (default"
              + " 9092). Clients then connect to localhost:PORT.")
  Integer embeddedKafkaPort;

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
      paramLabel = "DIR",
      description =
          "Directory for the job's checkpoints and the embedded broker's data (kafka/), kept after"
              + " the job stops (default .privagg/state).")
  java.nio.file.Path stateDir;

  @Option(
      names = "--update-partitions",
      defaultValue = "2",
      description = "Partitions of the updates topic when it is created (default 2).")
  int updatePartitions;

  /** The Flink job, once started: the shutdown hook cancels it. */
  private volatile JobClient job;

  /** Set once the job is being stopped: its cancellation is then no failure. */
  private volatile boolean stopping;

  /** The per-round lines, once the job runs. */
  private volatile RunProgress progress;

  /** The embedded broker, when {@code --bootstrap-servers} is not given. */
  private volatile PersistentKafka broker;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--parallelism", parallelism);
    flags.atLeastOne("--checkpoint-interval-ms", checkpointIntervalMillis);
    flags.atLeastOne("--update-partitions", updatePartitions);
    int brokerPort = embeddedBrokerPort(flags);
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
      JobSpec.Correlated c = p.correlated();
      if (c != null && c.banded()) {
        out.printf(
            "  amplified banded MF: %d bands and keyed client groups; round t takes group"
                + " (t - 1) mod %d and samples it at q %s; a sampled Gaussian charged every %d"
                + " rounds, %d in all%n",
            c.minSeparation(),
            c.minSeparation(),
            Text.number(p.sampling().rate()),
            c.minSeparation(),
            c.maxParticipations());
      }
      if (job.statisticsJob()) {
        describeStatistics(out, job);
      } else {
        describeTraining(out, job);
      }
    }
    // One hook for Ctrl-C, in order: the job stops writing first, then the broker stops cleanly.
    Thread shutdownHook = new Thread(this::stop, "privagg-run-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
    try {
      if (bootstrapServers == null) {
        startEmbeddedBroker(out, brokerPort);
      }
      return runJob(out, jobs);
    } finally {
      stop();
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // The JVM is shutting down (Ctrl-C): the hook is running or has run.
      }
    }
  }

  private Integer runJob(java.io.PrintWriter out, List<JobSpec> jobs) throws Exception {
    List<String> created = KafkaPreflight.prepareKafka(kafka(), jobs, updatePartitions);
    out.println(
        created.isEmpty()
            ? "topics exist: " + jobs.get(0).topics().all()
            : "created topics: " + created);
    SourcePlan sourcePlan = SourcePlan.read(kafka(), jobs.get(0).topics().updates(), parallelism);
    if (sourcePlan.parallelism() < parallelism) {
      out.println(sourcePlan.describe());
    }
    progress = new RunProgress(out, jobs, followers(out, jobs));
    out.flush();
    StreamExecutionEnvironment env = PrivaggJob.localEnvironment(stateDir);
    out.println("checkpoints: " + stateDir.toAbsolutePath().resolve("checkpoints"));
    JobClient client =
        PrivaggJob.start(
            env,
            jobs,
            new PrivaggJob.Settings(
                kafka(), checkpointIntervalMillis, parallelism, System.currentTimeMillis()));
    job = client;
    out.println("running as Flink job " + client.getJobID() + "; Ctrl-C stops it");
    out.flush();
    progress.start();
    try {
      client.getJobExecutionResult().get();
    } catch (java.util.concurrent.ExecutionException e) {
      if (stopping) {
        return 0; // cancelled by Ctrl-C, as asked
      }
      throw e;
    }
    return 0;
  }

  /**
   * Reads each job's topics as they stand before the start and says how long its budget lasts, or
   * that it is spent; the followers then print each round as the job decides it.
   */
  private List<StatusFollower> followers(java.io.PrintWriter out, List<JobSpec> jobs) {
    List<StatusFollower> followers = new java.util.ArrayList<>();
    try {
      for (JobSpec spec : jobs) {
        StatusFollower follower = new StatusFollower(kafka(), spec, Duration.ofSeconds(30));
        followers.add(follower);
        out.println(
            follower.catchUp(Duration.ofSeconds(30), r -> {})
                ? RunProgress.startLine(spec, follower.tracker().snapshot())
                : "job "
                    + spec.jobId()
                    + ": its ledger could not be read to the end within 30 s, so how long its"
                    + " budget lasts is unknown here (the job reads it again before any round)");
      }
    } catch (RuntimeException e) {
      followers.forEach(StatusFollower::close);
      throw e;
    }
    return followers;
  }

  /** The embedded broker's port, after checking it goes with the other Kafka flags. */
  private int embeddedBrokerPort(Flags flags) {
    if (bootstrapServers != null) {
      if (embeddedKafkaPort != null) {
        throw flags.fail(
            "--embedded-kafka-port applies only without --bootstrap-servers (it is the port of the"
                + " embedded broker); drop one of them");
      }
      return -1;
    }
    if (kafkaProperties.file != null) {
      throw flags.fail(
          "--kafka-properties needs --bootstrap-servers: the embedded broker is plaintext on"
              + " localhost and takes no client settings");
    }
    int port = embeddedKafkaPort == null ? DEFAULT_EMBEDDED_KAFKA_PORT : embeddedKafkaPort;
    if (!(port >= 1 && port <= 65535)) {
      throw flags.fail("--embedded-kafka-port must be in [1, 65535], was " + port);
    }
    return port;
  }

  /**
   * An earlier run's checkpoints without its broker's data mean the topics, and the privacy ledger
   * in them, are gone (a deleted or mistyped kafka directory): a new broker would spend the budget
   * again from zero under the same job ids.
   */
  private void refuseANewBrokerAfterAnEarlierRun(Path dir) throws java.io.IOException {
    Path checkpoints = stateDir.toAbsolutePath().normalize().resolve("checkpoints");
    if (PersistentKafka.holdsBroker(dir) || !Files.isDirectory(checkpoints)) {
      return;
    }
    try (var entries = Files.list(checkpoints)) {
      if (entries.findAny().isPresent()) {
        throw new IllegalStateException(
            "--state-dir "
                + stateDir.toAbsolutePath().normalize()
                + " holds an earlier run's checkpoints but no embedded broker data in "
                + dir
                + ": that broker's topics held the privacy ledger, and a new one would spend the"
                + " budget again from zero; fix: put the kafka directory back, or, to start a new"
                + " deployment from zero budget on purpose, remove the whole --state-dir or give"
                + " another");
      }
    }
  }

  private void startEmbeddedBroker(java.io.PrintWriter out, int port) throws Exception {
    Path dir = stateDir.toAbsolutePath().normalize().resolve("kafka");
    refuseANewBrokerAfterAnEarlierRun(dir);
    try {
      broker = PersistentKafka.start(dir, port);
    } catch (PersistentKafka.PortInUseException e) {
      throw new IllegalStateException(
          "localhost:"
              + port
              + " is already in use, so the embedded Kafka broker cannot listen there; fix: if a"
              + " Kafka broker runs there, use it with --bootstrap-servers localhost:"
              + port
              + ", otherwise pick a free port with --embedded-kafka-port PORT (and give clients"
              + " localhost:PORT)",
          e);
    } catch (PersistentKafka.DirectoryInUseException e) {
      throw new IllegalStateException(
          e.getMessage()
              + "; fix: stop the other privagg run with --state-dir "
              + stateDir
              + ", or give this one another --state-dir (a new broker, with none of its topics)",
          e);
    }
    out.printf("embedded Kafka broker at %s (data in %s)%n", broker.bootstrapServers(), dir);
    out.println(
        broker.formatted()
            ? "  new broker (cluster id "
                + broker.clusterId()
                + "); a later run with this --state-dir keeps its topics and privacy ledger"
            : "  continuing its topics and privacy ledger (cluster id " + broker.clusterId() + ")");
    out.flush();
  }

  /** Cancels the job, then stops the embedded broker; safe to call twice and from the hook. */
  private void stop() {
    stopping = true;
    RunProgress lines = progress;
    if (lines != null) {
      lines.close();
    }
    JobClient running = job;
    if (running != null) {
      try {
        running.cancel().get(30, TimeUnit.SECONDS);
        // Until the job is gone: a task still cancelling would talk to a stopped broker.
        running.getJobExecutionResult().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        // Already finished, failed or cancelled: nothing more to stop.
      }
    }
    PersistentKafka embedded = broker;
    if (embedded != null) {
      embedded.close();
    }
  }

  /** A statistics job's released sums: each one's share of the budget and noise std per round. */
  private static void describeStatistics(java.io.PrintWriter out, JobSpec job) {
    StatisticsQuery q = job.statistics();
    out.printf(
        "  statistics: at most %d rows per client; each round releases %d noisy sums%n",
        q.maxRows(), q.blocks().size());
    for (Block b : q.blocks()) {
      out.printf(
          "    %-28s share %-8s sensitivity %-10s noise std %s per value%n",
          b.name(),
          Text.number(b.share()),
          Text.number(b.sensitivity()),
          Text.number(b.noiseStd(job.privacy().noiseMultiplier())));
    }
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
          case SGD, RELEASE -> "";
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
    PersistentKafka embedded = broker;
    if (embedded != null) {
      return embedded.connection();
    }
    return bootstrapServers == null ? null : kafkaProperties.connect(bootstrapServers);
  }

  @Override
  public String attempt() {
    return "start the job";
  }
}
