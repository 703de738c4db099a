package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.io.FloatTensor;
import dev.privagg.io.ModelFile;
import dev.privagg.io.Safetensors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code model.init: file}: read beside the spec, checked against model.tensors at read time. */
class InitFileSpecTest {
  @TempDir Path dir;

  private static final FloatTensor W =
      new FloatTensor("w", new int[] {3, 2}, new float[] {1, 2, 3, 4, 5, 6});
  private static final FloatTensor B = new FloatTensor("b", new int[] {2}, new float[] {-1, -2});

  private Path spec(String initFile) throws Exception {
    Path file = dir.resolve("job.yaml");
    Files.writeString(
        file,
        JobSpecReaderTest.MINIMAL.replace(
            "    - {name: b, shape: [2]}\n",
            "    - {name: b, shape: [2]}\n  init: file\n  initFile: " + initFile + "\n"));
    return file;
  }

  @Test
  void safetensorsAndNpz_besideTheSpec_becomeTheRoundZeroModelInSpecOrder() throws Exception {
    for (ModelFile.Format format : ModelFile.Format.values()) {
      Path weights = dir.resolve("init" + format.extension());
      // File order differs from the spec's: values are taken by name.
      ModelFile.write(weights, format, List.of(B, W), Map.of());

      JobSpec spec = JobSpecReader.read(spec(weights.getFileName().toString()));

      assertThat(spec.model().init()).isEqualTo("file");
      assertThat(spec.initialWeights()).containsExactly(1, 2, 3, 4, 5, 6, -1, -2);
      assertThat(spec.initialTensors()).extracting(FloatTensor::name).containsExactly("w", "b");
    }
  }

  @Test
  void wrongShapeMissingAndExtraTensors_areNamedInOneMessageWithTheFix() throws Exception {
    ModelFile.write(
        dir.resolve("bad.safetensors"),
        ModelFile.Format.SAFETENSORS,
        List.of(
            new FloatTensor("w", new int[] {2, 3}, new float[6]),
            new FloatTensor("c", new int[] {1}, new float[1])),
        Map.of());
    Path spec = spec("bad.safetensors");

    assertThatThrownBy(() -> JobSpecReader.read(spec))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("model.initFile 'bad.safetensors' does not match model.tensors")
        .hasMessageContaining("tensor 'w' has shape [2, 3] in the file, model.tensors says [3, 2]")
        .hasMessageContaining("missing from the file: [b [2]]")
        .hasMessageContaining("in the file but not in model.tensors: [c [1]]")
        .hasMessageContaining("or change model.tensors");
  }

  @Test
  void nonFiniteValues_areRefusedNamingTensorAndIndex() throws Exception {
    FloatTensor nan = new FloatTensor("b", new int[] {2}, new float[] {0, Float.NaN});
    ModelFile.write(dir.resolve("nan.npz"), ModelFile.Format.NPZ, List.of(W, nan), Map.of());

    assertThatThrownBy(() -> JobSpecReader.read(spec("nan.npz")))
        .hasMessageContaining(
            "tensor 'b' holds NaN at flat index 1; initial weights must be finite");
  }

  @Test
  void missingFile_unreadableFile_andInitFileWithoutInitFile_areRefused() throws Exception {
    assertThatThrownBy(() -> JobSpecReader.read(spec("nowhere.safetensors")))
        .hasMessageContaining("model.initFile 'nowhere.safetensors' does not exist (" + dir)
        .hasMessageContaining("relative path is read from the spec file's directory");

    Files.writeString(dir.resolve("text.safetensors"), "not a model");
    assertThatThrownBy(() -> JobSpecReader.read(spec("text.safetensors")))
        .hasMessageContaining("model.initFile 'text.safetensors' cannot be the initial model")
        .hasMessageContaining("-byte header");

    assertThatThrownBy(() -> JobSpecReader.read(spec("weights.pt")))
        .hasMessageContaining("is neither .safetensors nor .npz");

    String zerosWithFile =
        JobSpecReaderTest.MINIMAL.replace(
            "    - {name: b, shape: [2]}\n", "    - {name: b, shape: [2]}\n  initFile: x.npz\n");
    assertThatThrownBy(() -> JobSpecReader.parse("t", zerosWithFile))
        .hasMessageContaining("model.initFile is read only with model.init: file");
  }

  @Test
  void valuesSentWithTheSpec_replaceTheFile() throws Exception {
    String text = Files.readString(spec("absent-on-this-machine.npz"));
    byte[] sent = Safetensors.encode(List.of(W, B), Map.of());

    JobSpec spec =
        JobSpecReader.parse(
            "--spec-base64 #1",
            text,
            InitFiles.sent(Map.of("test-job", sent), InitFiles.relativeTo(dir)));

    assertThat(spec.initialWeights()).containsExactly(1, 2, 3, 4, 5, 6, -1, -2);
  }
}
