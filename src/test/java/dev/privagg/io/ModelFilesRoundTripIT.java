package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * privagg's safetensors and npz against NumPy and PyTorch (Debian's {@code /usr/bin/python3}):
 * files privagg writes are read by {@code src/test/resources/modelfiles/roundtrip.py} with {@code
 * numpy.load}, {@code numpy.frombuffer} and {@code torch.frombuffer} and must hold the same float32
 * values; files the script writes ({@code numpy.savez}, {@code numpy.savez_compressed} with a
 * Fortran-ordered and a float64 array, a PyTorch state_dict as safetensors, F16, BF16 and F64
 * tensors) must read back here as the float32 values NumPy and PyTorch give.
 */
class ModelFilesRoundTripIT {
  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static final Path SCRIPT = Path.of("src/test/resources/modelfiles/roundtrip.py");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @BeforeAll
  static void pythonWithNumpyAndTorch() throws Exception {
    String missing =
        "this test needs Debian's /usr/bin/python3 with NumPy and PyTorch:"
            + " apt-get install python3-numpy python3-torch";
    assertThat(Files.isExecutable(PYTHON)).as(missing).isTrue();
    Result r = python(List.of("-c", "import numpy, torch"));
    assertThat(r.code()).as(missing + "\n" + r.output()).isZero();
  }

  private record Result(int code, String output) {}

  private static Result python(List<String> args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(PYTHON.toString()));
    command.addAll(args);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("python did not finish in 120 s: " + command);
    }
    return new Result(
        p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  @Test
  void filesWrittenHere_readInNumpyAndTorch_withTheSameValues() throws Exception {
    List<FloatTensor> tensors = new ArrayList<>();
    float[] w = new float[12];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) Math.sin(i) * (i % 2 == 0 ? 1e-3f : 1e3f);
    }
    tensors.add(new FloatTensor("layer1.weight", new int[] {3, 4}, w));
    tensors.add(
        new FloatTensor(
            "layer1.bias",
            new int[] {4},
            new float[] {-0.0f, Float.MIN_VALUE, Float.MAX_VALUE, -Float.MIN_NORMAL}));
    tensors.add(new FloatTensor("cube", new int[] {2, 2, 2}, new float[] {1, 2, 3, 4, 5, 6, 7, 8}));
    tensors.add(new FloatTensor("step", new int[] {}, new float[] {42}));
    ModelFile.write(
        dir.resolve("java.safetensors"),
        ModelFile.Format.SAFETENSORS,
        tensors,
        Map.of("round", "1"));
    ModelFile.write(dir.resolve("java.npz"), ModelFile.Format.NPZ, tensors, Map.of());
    Map<String, Object> expected = new LinkedHashMap<>();
    for (FloatTensor t : tensors) {
      expected.put(t.name(), Map.of("shape", t.shape(), "values", t.values()));
    }
    JSON.writeValue(dir.resolve("java-expected.json").toFile(), expected);

    Result r = python(List.of(SCRIPT.toString(), "check", dir.toString()));

    assertThat(r.code()).as(r.output()).isZero();
    assertThat(r.output()).contains("python read java's safetensors and npz: equal");
  }

  @Test
  void filesWrittenByNumpyAndTorch_readHereAsTheirFloat32Values() throws Exception {
    Result r = python(List.of(SCRIPT.toString(), "write", dir.toString()));
    assertThat(r.code()).as(r.output()).isZero();
    JsonNode expected = JSON.readTree(dir.resolve("python-expected.json").toFile());

    for (Iterator<String> files = expected.fieldNames(); files.hasNext(); ) {
      String file = files.next();
      ModelFile read = ModelFile.read(dir.resolve(file), 1_000);
      JsonNode want = expected.get(file);
      assertThat(read.tensors()).extracting(FloatTensor::name).as(file).hasSize(want.size());
      for (FloatTensor t : read.tensors()) {
        JsonNode w = want.get(t.name());
        assertThat(w).as(file + " " + t.name()).isNotNull();
        int[] shape = new int[w.get("shape").size()];
        for (int i = 0; i < shape.length; i++) {
          shape[i] = w.get("shape").get(i).asInt();
        }
        float[] values = new float[w.get("values").size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = (float) w.get("values").get(i).asDouble();
        }
        assertThat(t.shape()).as(file + " " + t.name() + " shape").containsExactly(shape);
        assertThat(t.values()).as(file + " " + t.name() + " values").containsExactly(values);
      }
    }
    assertThat(ModelFile.read(dir.resolve("torch.safetensors"), 1_000).metadata())
        .containsEntry("format", "pt");
  }
}
