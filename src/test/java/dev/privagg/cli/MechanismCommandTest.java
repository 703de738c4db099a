package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import org.junit.jupiter.api.Test;

class MechanismCommandTest {
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void blt_json_reportsThePlanAndTheNoiseMultipliers() throws Exception {
    CliTest.Run run =
        CliTest.run(
            "mechanism",
            "blt",
            "--rounds",
            "1000",
            "--min-sep",
            "5",
            "--max-participations",
            "2",
            "--buffers",
            "2",
            "--target-epsilon",
            "2",
            "--delta",
            "1e-6",
            "--accountant",
            "rdp",
            "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode node = json.readTree(run.out());
    BltPlan plan = BltPlan.optimized(new ParticipationSchema(1000, 5, 2), 2, ErrorKind.MAX);
    assertThat(node.get("rounds").asLong()).isEqualTo(1000);
    assertThat(node.get("effectiveMaxParticipations").asInt()).isEqualTo(2);
    assertThat(node.get("buffers").asInt()).isEqualTo(2);
    for (int j = 0; j < 2; j++) {
      assertThat(node.get("theta").get(j).asDouble()).isEqualTo(plan.strategy().theta()[j]);
      assertThat(node.get("omega").get(j).asDouble()).isEqualTo(plan.strategy().omega()[j]);
      assertThat(node.get("inverseTheta").get(j).asDouble()).isEqualTo(plan.inverse().theta()[j]);
      assertThat(node.get("inverseOmega").get(j).asDouble()).isEqualTo(plan.inverse().omega()[j]);
    }
    assertThat(node.get("coefficients").get(1).asDouble())
        .isCloseTo(plan.strategy().omega()[0] + plan.strategy().omega()[1], within(1e-15));
    assertThat(node.get("sensitivity").asDouble()).isEqualTo(plan.sensitivity());
    assertThat(node.get("maxError").asDouble()).isEqualTo(plan.maxError());
    assertThat(node.get("meanError").asDouble()).isEqualTo(plan.meanError());
    assertThat(node.get("rootMaxLoss").asDouble()).isEqualTo(plan.rootMaxLoss());

    Accountant rdp = Accountant.named("rdp");
    double z = CorrelatedNoiseAccounting.noiseMultiplierFor(rdp, 2, 1e-6);
    double zIndependent = node.get("independentNoiseMultiplier").asDouble();
    assertThat(node.get("noiseMultiplier").asDouble()).isEqualTo(z);
    // Two compositions at zIndependent spend the target exactly as one at z does.
    assertThat(
            rdp.epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(zIndependent, 2)), 1e-6).epsilon())
        .isCloseTo(
            rdp.epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(z, 1)), 1e-6).epsilon(),
            within(1e-9))
        .isLessThanOrEqualTo(2);
    double ratio =
        z * plan.sensitivity() * Math.sqrt(plan.maxError()) / (zIndependent * Math.sqrt(1000));
    assertThat(node.get("noiseStdRatio").asDouble()).isCloseTo(ratio, within(1e-12));
    assertThat(ratio).isLessThan(0.2);
  }

  @Test
  void blt_explicitThetaOutsideTheMechanism_isRefusedNamingTheFlag() {
    CliTest.Run run =
        CliTest.run(
            "mechanism",
            "blt",
            "--rounds",
            "100",
            "--min-sep",
            "5",
            "--max-participations",
            "2",
            "--theta",
            "1.2,0.5",
            "--omega",
            "0.1,0.2");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--theta/--omega: theta[0] must be in (0, 1), was 1.2");
  }

  @Test
  void blt_unparsableTheta_isRefused() {
    CliTest.Run run =
        CliTest.run(
            "mechanism",
            "blt",
            "--rounds",
            "100",
            "--min-sep",
            "5",
            "--max-participations",
            "2",
            "--theta",
            "0.9,x",
            "--omega",
            "0.1,0.2");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--theta must be a comma-separated list of numbers, had 'x'");
  }

  @Test
  void blt_withoutBuffersOrTheta_isRefused() {
    CliTest.Run run =
        CliTest.run(
            "mechanism", "blt", "--rounds", "100", "--min-sep", "5", "--max-participations", "2");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("--buffers is required unless --theta and --omega are given");
  }

  @Test
  void blt_text_showsTheConventionAndTheBound() {
    CliTest.Run run =
        CliTest.run(
            "mechanism",
            "blt",
            "--rounds",
            "100",
            "--min-sep",
            "5",
            "--max-participations",
            "2",
            "--theta",
            "0.9,0.5",
            "--omega",
            "0.1,0.2");
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out())
        .contains("differ by >= 5 (1 allows every round)")
        .contains("theta 0.9, 0.5")
        .contains("1 + ln(N)/pi");
  }
}
