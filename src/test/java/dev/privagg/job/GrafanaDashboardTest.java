package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/grafana/privagg-dashboard.json} queries only series the job exports (as {@link
 * PrometheusSeries} derives them from the metrics' registration, which {@code MetricsIT} checks
 * against a real scrape), groups and filters them by labels they carry, and imports with the
 * Prometheus data source chosen at import.
 */
class GrafanaDashboardTest {
  private static final Path DASHBOARD = Path.of("deploy/grafana/privagg-dashboard.json");
  private static final Pattern METRIC = Pattern.compile("\\bflink_[a-zA-Z0-9_:]+");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without) \\(([^)]*)\\)");
  private static final Pattern MATCHER =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");

  private final JsonNode dashboard = read();
  private final Map<String, Set<String>> exported =
      PrometheusSeries.registered(JobFixtures.exactSpec(""));

  @Test
  void everyQuery_usesExportedMetrics_andTheirLabels() {
    List<String> queries = queries();
    assertThat(queries).isNotEmpty();
    for (String query : queries) {
      Set<String> labels = new HashSet<>();
      Matcher metric = METRIC.matcher(query);
      assertThat(metric.find()).as("a privagg metric in %s", query).isTrue();
      do {
        assertThat(exported).as(query).containsKey(metric.group());
        labels.addAll(exported.get(metric.group()));
      } while (metric.find());
      for (String label : labelsUsed(query)) {
        assertThat(labels).as("label %s in %s", label, query).contains(label);
      }
    }
  }

  @Test
  void panels_coverRoundsBudgetRejectsLatencyAndClipping() {
    String all = String.join("\n", queries());
    for (String metric :
        List.of(
            "training_job_roundsReleased",
            "training_job_epsilonSpent",
            "training_job_budgetEpsilon",
            "training_job_reason_updatesRejected",
            "training_job_roundLatencyMillis",
            "training_job_clippedFraction")) {
      assertThat(all).contains("flink_taskmanager_job_task_operator_privagg_" + metric);
    }
    assertThat(all).contains("rate(").contains("by (training_job, reason)");
  }

  @Test
  void importable_withTheDataSourceAndTrainingJobAsVariables() {
    assertThat(dashboard.path("__inputs").get(0).path("name").asText()).isEqualTo("DS_PROMETHEUS");
    assertThat(dashboard.path("__inputs").get(0).path("pluginId").asText()).isEqualTo("prometheus");
    JsonNode variable = dashboard.path("templating").path("list").get(0);
    assertThat(variable.path("name").asText()).isEqualTo("training_job");
    Set<Integer> ids = new HashSet<>();
    for (JsonNode panel : dashboard.path("panels")) {
      assertThat(ids.add(panel.path("id").asInt())).as("unique panel id").isTrue();
      assertThat(panel.path("gridPos").path("w").asInt()).isPositive();
      assertThat(panel.path("datasource").path("uid").asText()).isEqualTo("${DS_PROMETHEUS}");
      for (JsonNode target : panel.path("targets")) {
        assertThat(target.path("datasource").path("uid").asText()).isEqualTo("${DS_PROMETHEUS}");
        String expr = target.path("expr").asText();
        if (expr.contains("training_job_")) {
          assertThat(expr).contains("training_job=~\"$training_job\"");
        }
      }
    }
  }

  /** Every PromQL text: panel targets and the variable's label_values query. */
  private List<String> queries() {
    List<String> queries = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        queries.add(target.path("expr").asText());
      }
    }
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      queries.add(variable.path("definition").asText());
      queries.add(variable.path("query").path("query").asText());
    }
    return queries;
  }

  /** Labels a query groups by or matches on, and label_values' label. */
  private static Set<String> labelsUsed(String query) {
    Set<String> labels = new HashSet<>();
    Matcher grouping = GROUPING.matcher(query);
    while (grouping.find()) {
      for (String label : grouping.group(1).split(",")) {
        labels.add(label.strip());
      }
    }
    Matcher matcher = MATCHER.matcher(query.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\""));
    while (matcher.find()) {
      labels.add(matcher.group(1));
    }
    Matcher values = Pattern.compile("label_values\\([^,]+,\\s*([a-zA-Z_]+)\\)").matcher(query);
    while (values.find()) {
      labels.add(values.group(1));
    }
    return labels;
  }

  private static JsonNode read() {
    try {
      return new ObjectMapper().readTree(DASHBOARD.toFile());
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read " + DASHBOARD, e);
    }
  }
}
