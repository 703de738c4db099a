package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.client.ClientUpdates;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.spec.JobSpec;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.prometheus.PrometheusReporterFactory;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The job on a MiniCluster with Flink's Prometheus reporter, configured as {@code
 * deploy/local/privagg-local} configures a cluster: a scrape of its endpoint shows the training job
 * and the reject reason as labels ({@code training_job}, {@code reason}) on stable metric names, no
 * privagg series with a {@code job} label (which Prometheus would rename {@code exported_job}), and
 * exactly the series {@link PrometheusSeries} predicts, which the Grafana dashboard is checked
 * against.
 */
class MetricsIT extends KafkaFlinkTestBase {
  private static final String PREFIX = "flink_taskmanager_job_task_operator_privagg_";
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  private static MiniCluster reporting;
  private static int port;

  @BeforeAll
  static void startReportingCluster() throws Exception {
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Configuration config =
        Configuration.fromMap(
            Map.of(
                "metrics.reporter.prom.factory.class",
                PrometheusReporterFactory.class.getName(),
                "metrics.reporter.prom.port",
                Integer.toString(port),
                // As deploy/local and deploy/k8s set it: label values are the job ids as written.
                "metrics.reporter.prom.filterLabelValueCharacters",
                "false"));
    reporting =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(config)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build());
    reporting.start();
  }

  @AfterAll
  static void stopReportingCluster() throws Exception {
    if (reporting != null) {
      reporting.close();
    }
  }

  @Test
  void scrape_labelsTrainingJobAndReason_onStableNames_withoutAJobLabel() throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds:
              timeout: 60s
              expectedClients: 2
              closeEarly: true
            privacy: {clipNorm: 1.0, noiseMultiplier: 1.0, delta: 1.0e-5, budgetEpsilon: 100}
            """);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
    JobClient job =
        PrivaggJob.start(
            new TestStreamEnvironment(reporting, 1),
            List.of(spec),
            new PrivaggJob.Settings(kafka.connection(), 300, 1, System.currentTimeMillis()));
    try {
      // Round 1 lasts long enough for a loaded machine, and closes at its second update.
      awaitRound(spec, 1);
      String topic = spec.topics().updates();
      produce(
          topic,
          "c1",
          ClientUpdates.encode(spec, 1, "c1", new float[][] {{0.3f, 0.4f, 0f}}),
          ClientUpdates.encode(spec, 1, "c1", new float[][] {{0f, 0f, 0f}})); // duplicate
      produce(topic, "c2", ClientUpdates.encode(spec, 1, "c2", new float[][] {{0f, 0f, 3f}}));
      produce(topic, "c3", ClientUpdates.encode(spec, 0, "c3", new float[][] {{0f, 0f, 0f}}));
      produce(topic, "c4", ClientUpdates.encode(spec, 1, "c4", new float[][] {{Float.NaN, 0, 0}}));
      produce(topic, "x", "not an update".getBytes(StandardCharsets.UTF_8));
      rejectsUntil(spec, l -> l.size() == 4, Duration.ofSeconds(60));
      awaitModel(spec, 1);

      List<Sample> scrape =
          scrapeUntil(
              samples ->
                  sum(samples, "training_job_roundsReleased", spec.jobId(), null) >= 1
                      && sum(samples, "training_job_releasesPublished", spec.jobId(), null) >= 1
                      && sum(samples, "training_job_updatesClipped", spec.jobId(), null) >= 1);

      String id = spec.jobId();
      assertThat(sum(scrape, "training_job_reason_updatesRejected", id, "DUPLICATE_CLIENT"))
          .isEqualTo(1);
      assertThat(sum(scrape, "training_job_reason_updatesRejected", id, "STALE_ROUND"))
          .isEqualTo(1);
      assertThat(sum(scrape, "training_job_reason_updatesRejected", id, "NON_FINITE_VALUES"))
          .isEqualTo(1);
      assertThat(sum(scrape, "training_job_reason_updatesRejected", id, "UNDECODABLE")).isZero();
      assertThat(sum(scrape, "reason_updatesRejected", null, "UNDECODABLE")).isEqualTo(1);
      assertThat(sum(scrape, "training_job_updatesAccepted", id, null)).isEqualTo(2);
      assertThat(sum(scrape, "training_job_updatesClipped", id, null)).isEqualTo(1);
      assertThat(max(scrape, "training_job_epsilonSpent", id)).isPositive();
      assertThat(max(scrape, "training_job_budgetEpsilon", id)).isEqualTo(100);
      assertThat(max(scrape, "training_job_clipNorm", id)).isEqualTo(spec.privacy().clipNorm());
      assertThat(max(scrape, "training_job_clippedFraction", id)).isEqualTo(0.5);
      // One name for every reason: the reason is a label, never part of the name.
      assertThat(scrape)
          .filteredOn(s -> s.name.startsWith(PREFIX))
          .noneSatisfy(s -> assertThat(s.name).containsAnyOf("STALE_ROUND", "UNDECODABLE", id));

      Map<String, Set<String>> scraped = new TreeMap<>();
      for (Sample s : scrape) {
        if (s.name.startsWith(PREFIX)) {
          scraped.computeIfAbsent(s.name, n -> new TreeSet<>()).addAll(s.labels.keySet());
        }
        // Prometheus sets job itself and would rename a scraped one to exported_job.
        assertThat(s.labels).as(s.name).doesNotContainKeys("job", "exported_job");
      }
      assertThat(scraped).isEqualTo(PrometheusSeries.registered(spec));
    } finally {
      job.cancel().get();
    }
  }

  /** One sample of the exposition: metric name, labels, value. */
  private record Sample(String name, Map<String, String> labels, double value) {}

  private static double sum(
      List<Sample> samples, String metric, String trainingJob, String reason) {
    return select(samples, metric, trainingJob, reason).stream().mapToDouble(Sample::value).sum();
  }

  private static double max(List<Sample> samples, String metric, String trainingJob) {
    return select(samples, metric, trainingJob, null).stream()
        .mapToDouble(Sample::value)
        .max()
        .orElseThrow(() -> new AssertionError("no series " + PREFIX + metric));
  }

  private static List<Sample> select(
      List<Sample> samples, String metric, String trainingJob, String reason) {
    return samples.stream()
        .filter(s -> s.name.equals(PREFIX + metric))
        .filter(s -> trainingJob == null || trainingJob.equals(s.labels.get("training_job")))
        .filter(s -> reason == null || reason.equals(s.labels.get("reason")))
        .toList();
  }

  private static List<Sample> scrapeUntil(Predicate<List<Sample>> done) throws Exception {
    long end = System.currentTimeMillis() + 30_000;
    while (true) {
      List<Sample> samples = scrape();
      if (done.test(samples) || System.currentTimeMillis() > end) {
        return samples;
      }
      Thread.sleep(500);
    }
  }

  private static double value(String text) {
    return switch (text) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(text);
    };
  }

  /** GET /metrics, parsed as Prometheus's text exposition format. */
  private static List<Sample> scrape() throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    List<Sample> samples = new ArrayList<>();
    for (String line : response.body().lines().toList()) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("exposition line %s", line).isTrue();
      Map<String, String> labels = new TreeMap<>();
      if (m.group(2) != null) {
        Matcher label = LABEL.matcher(m.group(2));
        while (label.find()) {
          labels.put(label.group(1), label.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, value(m.group(3))));
    }
    return samples;
  }
}
