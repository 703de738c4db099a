package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BandMfCommandTest {
  @Test
  void json_listsTheBandsTried_andTheBestIsNeverWorseThanDpFedAvg() throws Exception {
    CliTest.Run run = run(List.of("mechanism", "bandmf"), "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode out = new ObjectMapper().readTree(run.out());
    assertThat(out.get("candidates").get(0).get("bands").asInt()).isEqualTo(1);
    assertThat(out.get("candidates")).hasSizeGreaterThan(5);
    assertThat(out.get("best").get("error").asDouble())
        .isLessThanOrEqualTo(out.get("dpFedAvgError").asDouble());
    assertThat(out.get("best").get("coefficients")).hasSize(out.get("best").get("bands").asInt());
  }

  // Under the server's momentum the error is the momentum workload's (larger than the prefix
  // sums', about 1 / (1 - beta) times), the bands optimized for it, and no BLT is compared.
  @Test
  void momentum_plansForTheMomentumWorkload_andRefusesOneOrMore() throws Exception {
    JsonNode sgd = new ObjectMapper().readTree(run(List.of("mechanism", "bandmf"), "--json").out());
    CliTest.Run run = run(List.of("mechanism", "bandmf"), "--momentum", "0.9", "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode out = new ObjectMapper().readTree(run.out());
    assertThat(out.get("momentum").asDouble()).isEqualTo(0.9);
    assertThat(out.get("bltError").isNull()).isTrue();
    assertThat(out.get("dpFedAvgError").asDouble())
        .isGreaterThan(5 * sgd.get("dpFedAvgError").asDouble());
    assertThat(out.get("best").get("error").asDouble())
        .isLessThanOrEqualTo(out.get("dpFedAvgError").asDouble());
    CliTest.Run text = run(List.of("plan", "--mechanism", "bandmf"), "--momentum", "0.9");
    assertThat(text.exitCode()).as(text.err()).isZero();
    assertThat(text.out()).contains("models under momentum 0.9");
    for (List<String> command :
        List.of(List.of("mechanism", "bandmf"), List.of("plan", "--mechanism", "bandmf"))) {
      CliTest.Run refused = run(command, "--momentum", "1");
      assertThat(refused.exitCode()).isNotZero();
      assertThat(refused.err()).contains("--momentum must be in [0, 1), was 1.0");
    }
  }

  @Test
  void bandsBeyondTheGroups_refusedWithTheLimit() {
    CliTest.Run run = run(List.of("mechanism", "bandmf"), "--bands", "21");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("bands must be in [1, 20]");
  }

  @Test
  void plan_printsTheBandsAndZ_thatMeetTheTarget() throws Exception {
    CliTest.Run run = run(List.of("plan", "--mechanism", "bandmf"), "--bands", "4", "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode out = new ObjectMapper().readTree(run.out());
    assertThat(out.get("bands").asInt()).isEqualTo(4);
    assertThat(out.get("samplingRate").asDouble()).isEqualTo(0.2);
    assertThat(out.get("participations").asInt()).isEqualTo(10);
    double z = out.get("noiseMultiplier").asDouble();
    double epsilon =
        dev.privagg.privacy.Accountant.named("rdp")
            .epsilon(
                dev.privagg.privacy.PrivacyLedger.of(
                    dev.privagg.privacy.PrivacyEvent.sampledGaussian(z, 0.2, 10)),
                1e-5)
            .epsilon();
    assertThat(epsilon).isLessThanOrEqualTo(4).isGreaterThan(3.99);
    CliTest.Run mixed = run(List.of("plan", "--mechanism", "bandmf"), "--sampling-rate", "0.1");
    assertThat(mixed.exitCode()).isNotZero();
    assertThat(mixed.err()).contains("do not apply to bandmf");
  }

  /**
   * {@code command} for 200 clients, cohort 10, 40 rounds, epsilon 4 at delta 1e-5, then {@code
   * extra}.
   */
  private static CliTest.Run run(List<String> command, String... extra) {
    List<String> args = new ArrayList<>(command);
    args.addAll(
        List.of(
            "--population",
            "200",
            "--cohort",
            "10",
            "--rounds",
            "40",
            "--target-epsilon",
            "4",
            "--delta",
            "1e-5"));
    args.addAll(List.of(extra));
    return CliTest.run(args.toArray(String[]::new));
  }
}
