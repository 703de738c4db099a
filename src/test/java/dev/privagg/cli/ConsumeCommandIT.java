package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.FloatTensor;
import dev.privagg.io.ModelFile;
import dev.privagg.io.Tensors;
import dev.privagg.sim.EmbeddedKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code privagg consume} on a real broker: one JSON line per model with {@code --json}, and each
 * model saved as JSON, safetensors or npz holding the released values.
 */
class ConsumeCommandIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final float[] ROUND_0 = {0, 0, 0, 0, 0, 0};
  private static final float[] ROUND_1 = {0.5f, -1, 2, 0.25f, 3, -4};
  private static EmbeddedKafka kafka;

  @TempDir Path dir;

  @BeforeAll
  static void startBroker() throws Exception {
    kafka = EmbeddedKafka.start();
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (GlobalModel m : List.of(model(0, ROUND_0, 0), model(1, ROUND_1, 0.75))) {
        producer.send(
            new ProducerRecord<>("privagg.models", "consume-it".getBytes(), AvroCodec.encode(m)));
      }
      producer.flush();
    }
  }

  @AfterAll
  static void stopBroker() throws Exception {
    kafka.close();
  }

  private static GlobalModel model(long round, float[] values, double epsilon) {
    PrivacyStatement privacy =
        PrivacyStatement.newBuilder()
            .setEpsilon(epsilon)
            .setDelta(1e-5)
            .setAccountant("rdp")
            .setNoiseMultiplier(1.1)
            .setClipNorm(1.0)
            .setSamplingRate(1.0)
            .setSamplingMode("none")
            .setNoiseSource("secure")
            .setAdjacency("add-remove-one")
            .setBudgetEpsilon(Double.POSITIVE_INFINITY)
            .setChargedNoiseMultiplier(1.1)
            .build();
    return new GlobalModel(
        "consume-it",
        round,
        List.of(
            Tensors.of("w", new int[] {2, 2}, 4, values, 0),
            Tensors.of("b", new int[] {2}, 2, values, 4)),
        privacy,
        null);
  }

  private Path spec() throws Exception {
    Path spec = dir.resolve("consume-it.yaml");
    Files.writeString(
        spec,
        """
        jobId: consume-it
        model:
          tensors:
            - {name: w, shape: [2, 2]}
            - {name: b, shape: [2]}
        rounds: {timeout: 2s, expectedClients: 2}
        privacy: {clipNorm: 1.0, noiseMultiplier: 1.1, delta: 1e-5, budgetEpsilon: .inf}
        """);
    return spec;
  }

  private CliTest.Run consume(String... extra) throws Exception {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "consume",
                "--spec",
                spec().toString(),
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--until-round",
                "1"));
    args.addAll(List.of(extra));
    return CliTest.run(args.toArray(new String[0]));
  }

  @Test
  void json_printsOneObjectPerModel_andSafetensorsHoldTheValuesAndStatement() throws Exception {
    Path out = dir.resolve("models");

    CliTest.Run run = consume("--json", "--save", out.toString(), "--format", "safetensors");

    assertThat(run.exitCode()).as(run.err()).isZero();
    List<String> lines = run.out().lines().toList();
    assertThat(lines).hasSize(2);
    JsonNode second = JSON.readTree(lines.get(1));
    assertThat(second.get("round").asLong()).isEqualTo(1);
    assertThat(second.get("epsilon").asDouble()).isEqualTo(0.75);
    assertThat(second.get("delta").asDouble()).isEqualTo(1e-5);
    assertThat(second.get("noiseMultiplier").asDouble()).isEqualTo(1.1);
    assertThat(second.get("clipNorm").asDouble()).isEqualTo(1.0);
    assertThat(second.get("budgetEpsilon").asText()).isEqualTo("Infinity");
    assertThat(second.get("tensors").toString())
        .isEqualTo("[{\"name\":\"w\",\"shape\":[2,2]},{\"name\":\"b\",\"shape\":[2]}]");
    Path file = out.resolve("round-1.safetensors");
    assertThat(second.get("file").asText()).isEqualTo(file.toString());

    ModelFile saved = ModelFile.read(file, 6);
    assertThat(saved.tensors()).extracting(FloatTensor::name).containsExactly("w", "b");
    assertThat(saved.tensors().get(0).values()).containsExactly(0.5f, -1, 2, 0.25f);
    assertThat(saved.tensors().get(1).values()).containsExactly(3, -4);
    assertThat(saved.metadata())
        .containsEntry("round", "1")
        .containsEntry("epsilon", "0.75")
        .containsEntry("chargedNoiseMultiplier", "1.1");
  }

  @Test
  void npzAndDefaultJson_areWritten_andAnUnknownFormatIsRefused() throws Exception {
    Path out = dir.resolve("npz");
    assertThat(consume("--save", out.toString(), "--format", "npz").exitCode()).isZero();
    assertThat(ModelFile.read(out.resolve("round-1.npz"), 6).tensors().get(1).values())
        .containsExactly(3, -4);

    CliTest.Run text = consume("--save", out.toString());
    assertThat(text.out()).contains("round 1: 2 tensors");
    JsonNode json = JSON.readTree(out.resolve("round-1.json").toFile());
    assertThat(json.get("tensors").get("b").get("values").toString()).isEqualTo("[3.0,-4.0]");
    assertThat(json.get("privacy").get("epsilon").asDouble()).isEqualTo(0.75);

    CliTest.Run bad = consume("--save", out.toString(), "--format", "pickle");
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad.err()).contains("--format must be one of json, safetensors, npz, was 'pickle'");
  }

  @Test
  void jsonWithoutModels_printsNothingOnStdout() throws Exception {
    Path spec = spec();
    Files.writeString(spec, Files.readString(spec).replace("consume-it", "no-models-yet"));

    CliTest.Run run =
        CliTest.run(
            "consume",
            "--spec",
            spec.toString(),
            "--bootstrap-servers",
            kafka.bootstrapServers(),
            "--timeout-seconds",
            "1",
            "--json");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).contains("no model of job no-models-yet");
  }
}
